"""How many CPU processes to split the worlds over: ``--shards auto`` of the CLI commands and
``make_vec(..., num_shards="auto")``.

Warp's CPU kernels run on one thread, so one env uses one core; :class:`steel_envs.ShardedVectorEnv` steps blocks of
worlds in one process per core. A process only pays when it has enough worlds to outweigh the cost of the step's
round trip through the pipes and shared memory: each scene declares that break-even as
``min_worlds_per_shard`` (measured on the project's 2-core CPU, see the scene's value), and ``auto`` takes one
process per available core (``os.sched_getaffinity``) but never fewer worlds per process than that.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Any

__all__ = [
    "REPORT_ENV",
    "WORKER_TIMEOUT_ARG",
    "ShardError",
    "available_cores",
    "check_worker_timeout",
    "refuse_in_a_spawning_worker",
    "resolve_shards",
    "shards_arg",
    "worker_timeout_arg",
]

# Where a shard worker that fails while it imports the main script (before it can use its pipe) writes why.
REPORT_ENV = "STEEL_ENVS_SHARD_REPORT"
_NO_MAIN_GUARD = (
    "a ShardedVectorEnv was created while a worker process imported the main script: worker processes are spawned "
    'and import it again, so the code that builds the env must run under `if __name__ == "__main__":`'
)


class ShardError(RuntimeError):
    """A worker process of a :class:`~steel_envs.ShardedVectorEnv` died, stopped answering or failed: the message
    names the shard, its pid, its exit code or signal and the worker's last exception. The other workers are shut
    down and the env is closed. Defined here, light, so that the command line can catch it without torch."""


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def resolve_shards(
    env_id: str,
    num_envs: int,
    num_shards: int | str | None,
    *,
    device: str | None = None,
    reserve_cores: int = 0,
    env_kwargs: dict[str, Any] | None = None,
) -> tuple[int, str]:
    """The number of processes for ``num_envs`` worlds of ``env_id``, and a one-line reason to print.

    Args:
        env_id: A registered ID.
        num_envs: Number of worlds.
        num_shards: An int >= 1 (taken as is), or ``"auto"`` / None: one process per available core less
            ``reserve_cores``, with at least the scene's ``min_worlds_per_shard`` worlds each; 1 on a GPU, and 1 with
            the reason when the env needs what the sharded env does not serve (pixel observations).
        device: The Warp device the env would run on (None: Warp's preferred).
        reserve_cores: Cores left to other work (a learner in the same process).
        env_kwargs: The env's other keywords (``obs_mode`` decides whether sharding is possible).

    Raises:
        ValueError: On ``num_shards`` that is neither ``"auto"``, None nor an int >= 1.
        gymnasium.error.UnregisteredEnv: On an unknown ID.
    """
    import numpy as np
    import warp as wp

    from steel_envs.registration import task_class

    cls = task_class(env_id)
    if num_shards not in ("auto", None):
        if isinstance(num_shards, (bool, np.bool_)) or not isinstance(num_shards, (int, np.integer)) or num_shards < 1:
            raise ValueError(f"num_shards: expected 'auto' or an int >= 1, got {num_shards!r}")
        return int(num_shards), f"{int(num_shards)} process(es), as asked"
    try:
        cuda = wp.get_device(device).is_cuda
    except Exception:  # not a device: the env's own check names the argument
        cuda = False
    if cuda:
        return 1, "1 process: the worlds run on the GPU"
    if (env_kwargs or {}).get("obs_mode", "state") != "state":
        return 1, "1 process: pixel observations are not served by the sharded env"
    cores = max(1, available_cores() - reserve_cores)
    per_shard = int(cls.min_worlds_per_shard)
    shards = max(1, min(cores, num_envs // per_shard))
    return shards, (
        f"{shards} process(es): {cores} core(s) free, {num_envs} worlds, a process pays from {per_shard} worlds on "
        f"({cls.__name__}.min_worlds_per_shard)"
    )


def shards_arg(value: str) -> int | str:
    """The argparse type of ``--shards``: ``"auto"`` or an int >= 1.

    Raises:
        argparse.ArgumentTypeError: Otherwise (argparse prints it in one line and exits 2).
    """
    if value == "auto":
        return value
    try:
        shards = int(value)
    except ValueError:
        shards = 0
    if shards < 1:
        raise argparse.ArgumentTypeError(f"expected 'auto' or an int >= 1, got {value!r}")
    return shards


def check_worker_timeout(value: Any) -> float:
    """``value`` as seconds [s] if it is a finite number > 0 (``worker_timeout`` of the sharded env and of train).

    Raises:
        ValueError: Otherwise, naming ``worker_timeout``.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        raise ValueError(f"worker_timeout: expected a finite number of seconds > 0, got {value!r}")
    return float(value)


def worker_timeout_arg(value: str) -> float:
    """The argparse type of ``--worker-timeout``: a finite number of seconds > 0.

    Raises:
        argparse.ArgumentTypeError: Otherwise (argparse prints it in one line and exits 2).
    """
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds < math.inf:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {value!r}")
    return seconds


WORKER_TIMEOUT_ARG: dict[str, Any] = {
    "type": worker_timeout_arg,
    "default": 600.0,
    "metavar": "SECONDS",
    "help": "with shards: the longest wait for a worker process's answer, its start included, before the command "
    "stops with an error naming it (default 600)",
}
"""The keywords of ``add_argument("--worker-timeout", ...)`` of every command with ``--shards``."""


def refuse_in_a_spawning_worker() -> None:
    """Refuse to build a sharded env while this process is a spawned worker importing the main script (a script
    without a ``__main__`` guard, which would start workers forever): a shard worker writes why to its parent's
    report file and exits with code 1, without a traceback (the parent raises :class:`ShardError` with the fix);
    any other spawned process gets RuntimeError."""
    import multiprocessing as mp

    if not getattr(mp.current_process(), "_inheriting", False):
        return
    report = os.environ.get(REPORT_ENV)
    if report:  # a shard worker: the parent raises ShardError with this message, so no traceback from here
        with open(report, "w") as f:
            f.write(_NO_MAIN_GUARD)
        sys.stderr.flush()
        os._exit(1)
    raise RuntimeError(_NO_MAIN_GUARD)
