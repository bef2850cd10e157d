"""Controls of a training run: its progress bar, and the signals that end it early."""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .train_args import TrainPlan

__all__ = ["Progress", "stopped_by_signals"]


class Progress:
    """The run's tqdm bar, counting what will stop the run: env-steps toward the iteration count, or seconds toward
    ``max_seconds``. With both limits it counts env-steps until the first iteration has ended, then switches to
    seconds if the remaining iterations, at the speed so far, would outlast the time left."""

    def __init__(self, p: TrainPlan, steps_per_iteration: int, start: float, desc: str, disable: bool) -> None:
        from tqdm import tqdm

        self.plan, self.start = p, start
        self.steps_per_iteration = steps_per_iteration
        self.max_seconds = p.settings["max_seconds"]
        self.decided = p.stop != "first"
        self.by_time = p.stop == "time"
        self.bar = tqdm(desc=desc, mininterval=0.5, disable=disable, **self._counting())

    def _counting(self) -> dict[str, Any]:
        if self.by_time:
            return {
                "total": self.max_seconds,
                "unit": "s",
                "bar_format": "{l_bar}{bar}| {n:.1f}/{total:g} s [{elapsed}<{remaining}{postfix}]",
            }
        return {"total": self.plan.max_iterations * self.steps_per_iteration, "unit": "step", "unit_scale": True}

    def update(self, env_steps: int, steps: int) -> None:
        """After a step of ``steps`` env-steps, ``env_steps`` in all (this run)."""
        elapsed = time.perf_counter() - self.start
        if not self.decided and env_steps >= self.steps_per_iteration:
            self.decided = True
            left = self.plan.max_iterations * self.steps_per_iteration - env_steps
            if elapsed / env_steps * left > self.max_seconds - elapsed:
                self.by_time = True
                if not self.bar.disable:  # a disabled bar (--no-progress) has no start time to keep
                    started = self.bar.start_t
                    self.bar.reset(total=self.max_seconds)
                    self.bar.start_t = started
                    self.bar.unit, self.bar.unit_scale = "s", False
                    self.bar.bar_format = self._counting()["bar_format"]
        if self.by_time:
            self.bar.update(max(0.0, min(elapsed, self.max_seconds) - self.bar.n))
        else:
            self.bar.update(steps)

    def set_postfix(self, **kwargs: Any) -> None:
        self.bar.set_postfix(**kwargs, refresh=False)

    def close(self) -> None:
        self.bar.close()


@contextlib.contextmanager
def stopped_by_signals(stop: Callable[[int], None]) -> Iterator[None]:
    """While open, SIGINT (Ctrl-C) and SIGTERM call ``stop(signum)`` instead of ending the process, so the run can
    end before its next env step and save its checkpoint; a second signal acts as it would without this. In the main
    thread only, where Python runs signal handlers (elsewhere, nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}

    def handler(signum: int, frame: Any) -> None:
        for sig, before in previous.items():
            signal.signal(sig, before)
        stop(signum)

    for sig in previous:
        signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, before in previous.items():
            signal.signal(sig, before)
