"""The GPU check's bench stage: ``steel-envs bench``'s measurement (:func:`~steel_envs.training.benchmarks.bench.bench`,
same rows, table, JSON and plot) of each (ID, worlds) item in one process, so that kernels load once and every
finished item is on disk before the next starts.

Items run in :func:`plan`'s order; an item whose estimated time exceeds what is left of the stage's limit is skipped,
and one that outlasts it is interrupted (``SIGALRM``), so the files always hold every item that finished.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import time
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from .bench import BenchRow, bench, plot, row_record, table

__all__ = ["BENCH_IDS", "BenchStage", "bench_stage", "plan"]

BENCH_IDS = (
    "steel_envs/AntRun-v0",
    "steel_envs/CartpoleBalance-v0",
    "steel_envs/HumanoidRun-v0",
    "steel_envs/QuadrupedVelocity-v0",
    "steel_envs/PushCube-v0",
    "steel_envs/CartpoleSwingup-v0",
)
"""The IDs measured by default, in :func:`plan`'s order at the first count: every SolverSteel ID, the headline first."""

RESERVE_S = 15.0
"""Seconds of the stage's limit kept to write the files after an interrupted item [s]."""
FIRST_ITEM_S = 5.0
"""Estimated wall time of an ID's first item [s] (its kernels are loaded from the cache or compiled meanwhile)."""
GROWTH = 3.0
"""Estimated wall time of an ID's next item over its previous one: a 4x larger count takes about 3x the time (model
build and graph capture grow with it; the first item of an ID also paid its kernel loads)."""


class _ItemTimeout(Exception):
    pass


def _on_alarm(*_: Any) -> None:
    raise _ItemTimeout


def plan(env_ids: Sequence[str], counts: Sequence[int], walls: dict[str, float]) -> Iterator[tuple[int, str]]:
    """(worlds, ID) items: the first ID (the headline) at every count; then the other IDs at the first count in the
    given order; then each larger count with the IDs that were cheapest at the smaller one first, so that one slow
    item cannot cost the cheap ones their measurement when the time runs out.

    Args:
        env_ids: The IDs, the headline first.
        counts: World counts, smallest first.
        walls: Wall time [s] of each ID's last finished item, filled while the items run (read lazily).
    """
    for n in counts:
        yield n, env_ids[0]
    rest = list(env_ids[1:])
    for i, n in enumerate(counts):
        order = rest if i == 0 else sorted(rest, key=lambda env_id: walls.get(env_id, float("inf")))
        for env_id in order:
            yield n, env_id


@dataclass
class BenchStage:
    """One bench stage: its rows, its items' statuses and the files it rewrites after each item."""

    device: str
    out: str
    """Output prefix: ``<out>.json`` (steel-envs bench's format plus ``items``) and ``<out>.png``; its folder gets
    ``bench_summary.txt`` and ``bench_summary.json``."""
    steps: int
    meta: dict[str, Any]
    rows: list[BenchRow] = field(default_factory=list)
    items: list[dict[str, Any]] = field(default_factory=list)
    """Per item: env_id, worlds, status (``ok``, ``skipped: ...``, ``timeout ...``, ``error: ...``), seconds [s]."""
    walls: dict[str, float] = field(default_factory=dict)

    def measure(self, env_id: str, n: int, remaining: float) -> None:
        """Measure ``env_id`` at ``n`` worlds unless the estimate exceeds ``remaining`` [s]; interrupted after it."""
        need = GROWTH * self.walls[env_id] if env_id in self.walls else FIRST_ITEM_S
        item: dict[str, Any] = {"env_id": env_id, "worlds": n}
        if remaining < need:
            item.update(status=f"skipped: {remaining:.0f} s left, about {need:.0f} s needed", seconds=0.0)
            self.items.append(item)
            print(f"[bench] {env_id} x {n}: {item['status']}", flush=True)
            return
        print(f"[bench] {env_id} x {n} ({remaining:.0f} s left)", flush=True)
        t = time.perf_counter()
        signal.alarm(max(1, int(remaining)))
        try:
            new = bench(
                [env_id], [n], self.steps, self.device, peers=False, progress=lambda _: None, featherstone=False
            )
            status = "ok"
        except _ItemTimeout:
            new, status = [], f"timeout after {time.perf_counter() - t:.0f} s (stage budget)"
        except Exception as e:  # one failing ID must not cost the others their measurement
            traceback.print_exc()
            new, status = [], f"error: {type(e).__name__}: {e}"[:300]
        finally:
            signal.alarm(0)
        self.walls[env_id] = time.perf_counter() - t
        item.update(status=status, seconds=round(self.walls[env_id], 1))
        self.items.append(item)
        self.rows += new
        print(f"[bench] {env_id} x {n}: {status} in {self.walls[env_id]:.1f} s", flush=True)
        if new:
            print(table(new), flush=True)

    def summary_table(self) -> tuple[str, list[dict[str, Any]]]:
        """The text table of the steel-envs rows (one line per ID and count, then the items not measured) and its
        entries: env-steps/s, physics-steps/s, physics and overhead [ms], wrapper overhead (a fraction), peers'
        env-steps/s, memory [KiB/world], first call [s]."""
        lines, entries = [], []
        for r in (r for r in self.rows if r.kind == "steel-envs"):
            peer = {p.kind: p for p in self.rows if p.env_id == r.env_id and p.num_envs == r.num_envs}
            bare, fs = peer.get("bare"), peer.get("featherstone")
            entries.append(
                {
                    "env_id": r.env_id,
                    "worlds": r.num_envs,
                    "env_steps_per_s": r.env_steps_per_s,
                    "physics_steps_per_s": r.physics_steps_per_s,
                    "physics_ms": r.physics_ms,
                    "overhead_ms": r.overhead_ms,
                    "wrapper_overhead": r.notes.get("wrapper_overhead"),
                    "bare_env_steps_per_s": bare.env_steps_per_s if bare else None,
                    "featherstone_env_steps_per_s": fs.env_steps_per_s if fs else None,
                    "memory_per_world_kib": r.memory_per_world_kib,
                    "first_call_s": r.first_call_s,
                }
            )
            ratio = f"{r.env_steps_per_s / fs.env_steps_per_s:8.2f}x" if fs else "       -"
            overhead = 100 * r.notes.get("wrapper_overhead", np.nan)
            featherstone = fs.env_steps_per_s if fs else np.nan
            lines.append(
                f"{r.env_id.split('/')[-1]:24s} {r.num_envs:7d} {r.env_steps_per_s:13,.0f} "
                f"{r.physics_steps_per_s:14,.0f} {r.physics_ms:10.3f} {r.overhead_ms:11.3f} {overhead:+9.1f}% "
                f"{featherstone:15,.0f} {ratio} {r.memory_per_world_kib:9.1f} {r.first_call_s:7.1f}"
            )
        head = (
            f"{'env':24s} {'worlds':>7s} {'env-steps/s':>13s} {'phys-steps/s':>14s} {'physics ms':>10s} "
            f"{'overhead ms':>11s} {'overhead':>10s} {'featherstone/s':>15s} {'vs feath':>9s} {'KiB/world':>9s} "
            f"{'first s':>7s}"
        )
        skipped = [f"{i['env_id']} x {i['worlds']}: {i['status']}" for i in self.items if i["status"] != "ok"]
        text = "\n".join([head, "-" * len(head), *lines, *(["not measured:", *skipped] if skipped else [])])
        return text, entries

    def write(self) -> str:
        """Rewrite ``<out>.json``, ``bench_summary.txt`` and ``bench_summary.json``; return the summary table."""
        with open(f"{self.out}.json", "w") as f:
            json.dump({"meta": self.meta, "rows": [row_record(r) for r in self.rows], "items": self.items}, f, indent=2)
        text, entries = self.summary_table()
        folder = os.path.dirname(self.out)
        with open(os.path.join(folder, "bench_summary.txt"), "w") as f:
            f.write(text + "\n")
        with open(os.path.join(folder, "bench_summary.json"), "w") as f:
            json.dump({"device": self.device, "steps": self.steps, "table": entries, "items": self.items}, f, indent=2)
        return text

    def exit_status(self) -> int:
        """0 when every item was measured, 1 when one raised, else 3 (skipped or interrupted: incomplete)."""
        statuses = [i["status"] for i in self.items]
        return 0 if all(s == "ok" for s in statuses) else 1 if any(s.startswith("error") for s in statuses) else 3


def bench_stage(
    device: str, out: str, env_ids: Sequence[str], counts: Sequence[int], steps: int, limit_s: float
) -> int:
    """Measure every (ID, worlds) item within ``limit_s``, rewriting the files after each.

    Args:
        device: Warp and torch device (``cuda:0``, ``cpu``).
        out: Output prefix (see :class:`BenchStage`); its folder must exist.
        env_ids: IDs, the headline first.
        counts: World counts, smallest first.
        steps: Timed control steps per measurement.
        limit_s: The stage's time limit [s]; :data:`RESERVE_S` of it is kept to write the files.

    Returns:
        The exit status (:meth:`BenchStage.exit_status`).
    """
    budget, start = limit_s - RESERVE_S, time.monotonic()
    command = (
        f"steel-envs bench {' '.join(env_ids)} --device {device} --num-envs {','.join(map(str, counts))} "
        f"--steps {steps} --no-peers (one process, item by item: training/benchmarks/gpu_check.sh)"
    )
    meta = {
        "device": device,
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "steps": steps,
        "command": command,
    }
    stage = BenchStage(device=device, out=out, steps=steps, meta=meta)
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        for n, env_id in plan(env_ids, counts, stage.walls):
            stage.measure(env_id, n, budget - (time.monotonic() - start))
            gc.collect()
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
            stage.write()
    finally:
        signal.signal(signal.SIGALRM, previous)
    print("\n" + stage.write())
    try:
        if not stage.rows:
            raise ValueError("no item was measured")
        plot(stage.rows, f"{out}.png")
        print(f"wrote {out}.json, {out}.png, bench_summary.txt/.json")
    except Exception as e:  # the plot is the last output: the JSON and tables are already written
        print(f"wrote {out}.json (no plot: {type(e).__name__}: {e})")
    return stage.exit_status()
