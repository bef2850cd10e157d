"""``steel-envs bench``: throughput of steel-envs side by side with peers measured in the same run (learning, not
speed, is ``steel-envs compare``).

For every ID and world count: env-steps/s, physics-steps/s, the time of a step split into physics
(``decimation`` x (collide + SolverSteel.step)) and env overhead (actions, terms, resets, observations),
Warp memory per world, and the first call (build + first step; Warp's kernel compile when its cache is cold).
Peers, each on the same cores in the same run:

- ``bare``: the substeps alone (collide + the solver's step, the env's own model, solver and pipeline), timed
  in a twin env with the same seed and actions, so over bitwise the same states: the wrapper overhead is
  env time / bare time - 1, and a step's env overhead is env time - bare time;
- ``featherstone``: the same Newton model stepped by ``SolverFeatherstone`` with the same dt and substeps (SolverSteel
  scenes; a SolverVBD scene's particles have no Featherstone counterpart);
- ``sharded-K``: the same ID split over K CPU processes (``--shards K``, :class:`steel_envs.ShardedVectorEnv`);
- ``gymnasium-sync`` / ``gymnasium-async``: Gymnasium's MuJoCo ``Ant-v5`` / ``Humanoid-v5`` (MuJoCo's C engine),
  ``SyncVectorEnv`` with 8 envs and ``AsyncVectorEnv`` with one env per core, random actions (extra ``bench``;
  skipped with a message when ``mujoco`` is not installed);
- ``mujoco-1`` / ``mujoco-K``: the same robot in MuJoCo for the Unitree IDs (the MJCF and the contract's gains,
  as ``steel-envs sim2sim`` builds it: :class:`steel_envs.training.sim2sim.MujocoTwin`), as many worlds, the same
  physics dt and substeps, random joint targets held for a control step, stepped by ``mujoco.rollout`` on 1 and on
  K threads (one per core): physics only, no observation or reward (extra ``bench``).

With ``--repeats R`` every measurement runs R times (one after the other) and each row is the median run, its
runs' env-steps/s in ``notes["runs"]``. Where an ID has a MuJoCo peer, a closing table gives its ratios: one process
(``steel-envs``) and all cores (``sharded-K``) against the faster of the two Gymnasium peers, or against the same
robot in MuJoCo on one thread and on all cores.

Writes a JSON file with every figure and a PNG plot (env-steps/s vs worlds, peers as lines), and prints a table.
With ``--profile``, also each ID's per-kernel and per-phase profile (``steel_envs.training.benchmarks.profile``).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
import warp as wp

__all__ = ["BenchRow", "bench", "gymnasium_peer", "main", "plot", "ratio_table", "row_record", "table"]

_MUJOCO_PEERS = {"steel_envs/AntRun-v0": "Ant-v5", "steel_envs/HumanoidRun-v0": "Humanoid-v5"}
_SAME_ROBOT_PEERS = {
    "steel_envs/Go1Velocity-v0": ("GO1", "steel_envs/Go1Velocity-v0"),
    "steel_envs/G1Velocity-v0": ("G1", "steel_envs/G1Velocity-v0"),
    "steel_envs/Go1VelocityRough-v0": ("GO1", "steel_envs/Go1Velocity-v0"),
    "steel_envs/G1VelocityRough-v0": ("G1", "steel_envs/G1Velocity-v0"),
}
"""IDs whose robot :func:`mujoco_robot_peer` builds in MuJoCo: the model and the flat ID whose contract (gains,
control dt) it takes. MuJoCo's robot stands on flat ground for all four (no height scan, no terrain)."""


@dataclass
class BenchRow:
    """One measurement: an ID (or a peer) at a world count."""

    env_id: str
    kind: str
    """``steel-envs``, ``bare``, ``featherstone``, ``sharded-K``, ``gymnasium-sync``, ``gymnasium-async``,
    ``mujoco-T`` (T threads)."""
    num_envs: int
    env_steps_per_s: float
    physics_steps_per_s: float = float("nan")
    physics_ms: float = float("nan")
    """Physics time per control step [ms]."""
    overhead_ms: float = float("nan")
    """Env time per control step outside the physics [ms]."""
    memory_per_world_kib: float = float("nan")
    first_call_s: float = float("nan")
    notes: dict = field(default_factory=dict)


def _sync(env) -> None:
    if env.torch_device.type == "cuda":
        torch.cuda.synchronize(env.torch_device)


def _live_bytes(text: str) -> int:
    """Live bytes in a ``wp.ScopedMemoryTracker`` report."""
    m = re.search(r"Live allocations:\s*\n\s*\S+\s+\d+\s+\(([\d.]+)\s*(B|KB|MB|GB)\)", text)
    if m is None:
        return 0
    return int(float(m.group(1)) * {"B": 1, "KB": 2**10, "MB": 2**20, "GB": 2**30}[m.group(2)])


def _measure_env(
    env_id: str, num_envs: int, steps: int, device: str | None, featherstone: bool = True
) -> list[BenchRow]:
    import steel_envs
    from steel_envs.arguments import throughput_kwargs
    from steel_envs.vbd_env import VBDVectorEnv

    report: list[str] = []
    tracker = wp.ScopedMemoryTracker("env", print=False, report_func=report.append)
    with tracker:
        start = time.perf_counter()
        env = steel_envs.make_vec(env_id, num_envs=num_envs, device=device, seed=0, **throughput_kwargs(device))
        g = torch.Generator(device=env.torch_device).manual_seed(0)
        shape = (num_envs, env.action_dim)
        env.step(torch.rand(shape, generator=g, device=env.torch_device) * 2 - 1)
        _sync(env)
        first_call = time.perf_counter() - start
    tracker.report()
    memory = _live_bytes("".join(report)) / num_envs / 1024
    actions = [torch.rand(shape, generator=g, device=env.torch_device) * 2 - 1 for _ in range(min(steps, 64))]
    for _ in range(3):
        env.step(actions[0])
    _sync(env)
    t = time.perf_counter()
    for k in range(steps):
        env.step(actions[k % len(actions)])
    _sync(env)
    per_step = (time.perf_counter() - t) / steps

    # The bare loop: a twin env (same seed, same actions, so bitwise the same states and the same contact
    # workload) whose step graph holds only the substeps; the substeps are timed alone, bracketed by syncs.
    twin = steel_envs.make_vec(env_id, num_envs=num_envs, device=device, seed=0, graph_capture="physics")
    physics = [0.0]
    run_physics = twin.physics

    def timed_physics() -> None:
        _sync(twin)
        t = time.perf_counter()
        run_physics()
        _sync(twin)
        physics[0] += time.perf_counter() - t

    twin.step(
        torch.rand(shape, generator=torch.Generator(device=env.torch_device).manual_seed(0), device=env.torch_device)
        * 2
        - 1
    )
    for _ in range(3):
        twin.step(actions[0])
    twin.physics = timed_physics
    for k in range(steps):
        twin.step(actions[k % len(actions)])
    twin.close()
    bare_step = physics[0] / steps
    row = BenchRow(
        env_id=env_id,
        kind="steel-envs",
        num_envs=num_envs,
        env_steps_per_s=num_envs / per_step,
        physics_steps_per_s=num_envs * env.decimation / per_step,
        physics_ms=1e3 * bare_step,
        overhead_ms=1e3 * (per_step - bare_step),
        memory_per_world_kib=memory,
        first_call_s=first_call,
    )
    bare = BenchRow(
        env_id=env_id,
        kind="bare",
        num_envs=num_envs,
        env_steps_per_s=num_envs / bare_step,
        physics_steps_per_s=num_envs * env.decimation / bare_step,
        physics_ms=1e3 * bare_step,
    )
    row.notes["wrapper_overhead"] = per_step / bare_step - 1.0
    rows = [row, bare]
    if featherstone and not isinstance(env, VBDVectorEnv):
        rows.append(_featherstone(env, steps))
    env.close()
    return rows


def _featherstone(env, steps: int) -> BenchRow:
    """SolverFeatherstone on the env's model, same dt and substeps, same contacts pipeline."""
    import newton

    model = env.model
    solver = newton.solvers.SolverFeatherstone(model)
    s0, s1 = model.state(), model.state()
    newton.eval_fk(model, model.joint_q, model.joint_qd, s0)
    control = model.control()
    pipeline = newton.CollisionPipeline(model) if env.enable_collisions else None
    contacts = pipeline.contacts() if pipeline is not None else None

    def substeps() -> None:
        nonlocal s0, s1
        for _ in range(env.decimation):
            s0.clear_forces()
            if pipeline is not None:
                pipeline.collide(s0, contacts)
            solver.step(s0, s1, control, contacts, env.physics_dt)
            s0, s1 = s1, s0

    substeps()
    _sync(env)
    t = time.perf_counter()
    for _ in range(steps):
        substeps()
    _sync(env)
    per_step = (time.perf_counter() - t) / steps
    return BenchRow(
        env_id=env.spec.id if env.spec else type(env).__name__,
        kind="featherstone",
        num_envs=env.num_envs,
        env_steps_per_s=env.num_envs / per_step,
        physics_steps_per_s=env.num_envs * env.decimation / per_step,
        physics_ms=1e3 * per_step,
    )


def _measure_sharded(env_id: str, num_envs: int, num_shards: int, steps: int) -> BenchRow:
    """The same ID split over ``num_shards`` CPU processes (ShardedVectorEnv)."""
    import steel_envs

    start = time.perf_counter()
    env = steel_envs.make_vec(env_id, num_envs, num_shards=num_shards, seed=0)
    g = torch.Generator().manual_seed(0)
    actions = [torch.rand(num_envs, env.action_dim, generator=g) * 2 - 1 for _ in range(min(steps, 64))]
    env.step(actions[0])
    first_call = time.perf_counter() - start
    for k in range(3):
        env.step(actions[k % len(actions)])
    t = time.perf_counter()
    for k in range(steps):
        env.step(actions[k % len(actions)])
    per_step = (time.perf_counter() - t) / steps
    env.close()
    return BenchRow(
        env_id=env_id,
        kind=f"sharded-{num_shards}",
        num_envs=num_envs,
        env_steps_per_s=num_envs / per_step,
        physics_steps_per_s=num_envs * env.decimation / per_step,
        first_call_s=first_call,
    )


def gymnasium_peer(gym_id: str, mode: str, num_envs: int, steps: int) -> BenchRow:
    """Time a Gymnasium peer (e.g. MuJoCo's ``Ant-v5``) under ``gym.make_vec``: ``steps`` steps of ``num_envs``
    envs with seeded random actions, after 5 untimed steps.

    Args:
        gym_id: A registered Gymnasium ID.
        mode: ``"sync"`` or ``"async"`` (Gymnasium's ``vectorization_mode``).
        num_envs: Number of envs.
        steps: Timed vector steps.

    Returns:
        The row, kind ``gymnasium-<mode>``, with ``env_steps_per_s`` [env-steps/s].

    Raises:
        gymnasium.error.Error: If the ID is not registered or its dependency (``mujoco``) is missing.
    """
    import gymnasium as gym

    env = gym.make_vec(gym_id, num_envs=num_envs, vectorization_mode=mode)
    env.reset(seed=0)
    env.action_space.seed(0)
    actions = [env.action_space.sample() for _ in range(32)]
    for k in range(5):
        env.step(actions[k])
    t = time.perf_counter()
    for k in range(steps):
        env.step(actions[k % len(actions)])
    per_step = (time.perf_counter() - t) / steps
    env.close()
    return BenchRow(env_id=gym_id, kind=f"gymnasium-{mode}", num_envs=num_envs, env_steps_per_s=num_envs / per_step)


def mujoco_robot_peer(env_id: str, num_envs: int, steps: int, threads: int) -> BenchRow:
    """Time the robot of a Unitree ID in MuJoCo: ``num_envs`` worlds built by
    :class:`steel_envs.training.sim2sim.MujocoTwin` from the MJCF and the env's contract (PD actuators with its gains
    and limits, its physics dt), started from the env's reset state, ``steps`` control steps of seeded random joint
    targets (``offset + scale * U(-1, 1)``, held for ``decimation`` MuJoCo steps) by ``mujoco.rollout`` on
    ``threads`` threads, after one untimed rollout of 5 steps (its thread pool's start).

    Returns:
        The row, kind ``mujoco-<threads>``, with ``env_steps_per_s`` [env-steps/s] and ``physics_steps_per_s``.

    Raises:
        ImportError: Without ``mujoco`` (extra ``bench``).
        KeyError: If the ID has no MuJoCo robot (:data:`_SAME_ROBOT_PEERS`).
    """
    import mujoco
    from mujoco import rollout
    from steel_envs.training.sim2sim import MujocoTwin

    import steel_envs
    from steel_envs import assets
    from steel_envs.deployment import contract_of

    robot_name, flat_id = _SAME_ROBOT_PEERS[env_id]
    robot = getattr(assets, robot_name)
    env = steel_envs.make_vec(flat_id, num_envs=1, device="cpu", randomize=False)
    env.reset(seed=0)
    contract = contract_of(env)
    twin = MujocoTwin(robot, contract, num_worlds=threads, physics_dt=float(env.physics_dt))
    # One MjData per thread (rollout's); every world starts from the env's reset state.
    twin.set_state(
        np.repeat(env.state_0.joint_q.numpy()[None], threads, 0),
        np.repeat(env.state_0.joint_qd.numpy()[None], threads, 0),
        env.model.body_com.numpy()[0],
    )
    env.close()
    model, data = twin.model, twin.data
    state = np.zeros(mujoco.mj_stateSize(model, mujoco.mjtState.mjSTATE_FULLPHYSICS))
    mujoco.mj_getState(model, data[0], state, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    initial = np.repeat(state[None], num_envs, 0)
    a = contract.actuation
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1.0, 1.0, (num_envs, steps, contract.action_dim))
    targets = np.asarray(a.action_offset) + np.asarray(a.action_scale) * actions
    control = np.repeat(targets, twin.decimation, axis=1)  # held for a control step
    with rollout.Rollout(nthread=threads) as pool:
        pool.rollout(model, data, initial, control[:, : 5 * twin.decimation])
        t = time.perf_counter()
        pool.rollout(model, data, initial, control)
        seconds = time.perf_counter() - t
    return BenchRow(
        env_id=env_id,
        kind=f"mujoco-{threads}",
        num_envs=num_envs,
        env_steps_per_s=num_envs * steps / seconds,
        physics_steps_per_s=num_envs * steps * twin.decimation / seconds,
        notes={"mujoco": mujoco.__version__, "cone": "elliptic", "impratio": 10.0},
    )


def _median_runs(repeats: int, measure: Callable[..., BenchRow | list[BenchRow]], *args) -> list[BenchRow]:
    """Run ``measure(*args)`` ``repeats`` times; per row position, the run with the median env-steps/s, every run's
    figure in its ``notes["runs"]``."""
    runs = [out if isinstance(out, list) else [out] for out in (measure(*args) for _ in range(repeats))]
    rows = []
    for position in zip(*runs, strict=True):
        ordered = sorted(position, key=lambda r: r.env_steps_per_s)
        median = ordered[(len(ordered) - 1) // 2]
        if repeats > 1:
            median.notes["runs"] = [r.env_steps_per_s for r in position]
        rows.append(median)
    return rows


def bench(
    env_ids: Sequence[str],
    world_counts: Sequence[int],
    steps: int,
    device: str | None,
    peers: bool = True,
    progress: Callable[[str], None] = print,
    shards: int = 1,
    featherstone: bool = True,
    repeats: int = 1,
) -> list[BenchRow]:
    """Measure every ID at every world count (also split over ``shards`` CPU processes when > 1), then its MuJoCo
    peers (the same robot, or a Gymnasium task); see the module docstring. ``featherstone=False`` skips the
    SolverFeatherstone row (its kernels cost a first-use compile, which a time-boxed GPU check cannot spare);
    ``repeats`` > 1 reports the median of that many runs of each measurement (the lower median for an even count)."""
    rows: list[BenchRow] = []
    for env_id in env_ids:
        for n in world_counts:
            progress(f"{env_id} x {n}")
            rows += _median_runs(repeats, _measure_env, env_id, n, steps, device, featherstone)
            if shards > 1 and n >= shards:
                rows += _median_runs(repeats, _measure_sharded, env_id, n, shards, steps)
        gym_id = _MUJOCO_PEERS.get(env_id)
        if not peers or (gym_id is None and env_id not in _SAME_ROBOT_PEERS):
            continue
        if importlib.util.find_spec("mujoco") is None:
            progress(f"skipping the MuJoCo peers of {env_id}: mujoco is not installed (pip install -e '.[bench]')")
            continue
        if env_id in _SAME_ROBOT_PEERS:
            for n in world_counts:
                for threads in sorted({1, os.cpu_count() or 1}):
                    progress(f"MuJoCo {env_id} x {n} on {threads} thread(s)")
                    rows += _median_runs(repeats, mujoco_robot_peer, env_id, n, steps, threads)
        if gym_id is not None:
            for mode, n in (("sync", 8), ("async", os.cpu_count() or 1)):
                progress(f"Gymnasium {gym_id} {mode} x {n}")
                rows += _median_runs(repeats, gymnasium_peer, gym_id, mode, n, steps)
    return rows


def _ratio_line(r: BenchRow, label: str, peer: BenchRow) -> str:
    """One line of :func:`ratio_table`: ``r``'s env-steps/s, the peer's (``label`` names it) and their ratio."""
    return (
        f"{r.env_id.split('/')[-1]:18s} {r.kind:12s} {r.num_envs:6d} {r.env_steps_per_s:12,.0f}   "
        f"{label}: {peer.env_steps_per_s:10,.0f}   {r.env_steps_per_s / peer.env_steps_per_s:5.2f}x"
    )


def ratio_table(rows: list[BenchRow]) -> str:
    """Per ID with a MuJoCo peer and world count: env-steps/s of one process and of the sharded run, each over the
    faster Gymnasium peer's (the faster of SyncVectorEnv and AsyncVectorEnv), or over the same robot's in MuJoCo on
    as many threads at the same world count; empty without peers."""
    lines = []
    ours = [r for r in rows if r.kind == "steel-envs" or r.kind.startswith("sharded")]
    for env_id, gym_id in _MUJOCO_PEERS.items():
        peers = [r for r in rows if r.env_id == gym_id and r.kind.startswith("gymnasium")]
        if not peers:
            continue
        peer = max(peers, key=lambda r: r.env_steps_per_s)
        label = f"{gym_id} {peer.kind[10:]} x {peer.num_envs}"
        lines += [_ratio_line(r, label, peer) for r in ours if r.env_id == env_id]
    for r in ours:
        if r.env_id not in _SAME_ROBOT_PEERS:
            continue
        threads = 1 if r.kind == "steel-envs" else int(r.kind.split("-")[1])
        same = (p for p in rows if p.env_id == r.env_id and p.kind == f"mujoco-{threads}" and p.num_envs == r.num_envs)
        peer = next(same, None)
        if peer is not None:
            lines.append(_ratio_line(r, f"same robot, MuJoCo on {threads} thread(s)", peer))
    head = "ratios against MuJoCo (Gymnasium's: its faster run; the same robot: as many threads as our processes):"
    return "\n".join([head, *lines]) if lines else ""


def table(rows: list[BenchRow]) -> str:
    """The rows as a fixed-width text table, one line per row: env-steps/s, physics-steps/s, the step's split
    [ms], memory [KiB/world] and the first call [s]."""
    head = (
        f"{'env':34s} {'kind':16s} {'worlds':>6s} {'env-steps/s':>12s} {'phys-steps/s':>13s} "
        f"{'physics ms':>10s} {'overhead ms':>11s} {'KiB/world':>9s} {'first s':>7s}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r.env_id:34s} {r.kind:16s} {r.num_envs:6d} {r.env_steps_per_s:12.0f} {r.physics_steps_per_s:13.0f} "
            f"{r.physics_ms:10.3f} {r.overhead_ms:11.3f} {r.memory_per_world_kib:9.1f} {r.first_call_s:7.2f}"
        )
    return "\n".join(lines)


def plot(rows: list[BenchRow], path: str) -> None:
    """Write a PNG of env-steps/s against worlds (log-log) to ``path``: one line per (ID, kind), the Gymnasium peers
    as horizontal lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    kinds = dict.fromkeys(r.kind for r in rows if not r.kind.startswith("gymnasium"))
    styles = {"steel-envs": "o-", "bare": "s--", "featherstone": "^:"}
    for kind, style in ((k, styles.get(k, "D-")) for k in kinds):
        for env_id in dict.fromkeys(r.env_id for r in rows if r.kind == kind):
            pts = sorted((r.num_envs, r.env_steps_per_s) for r in rows if r.kind == kind and r.env_id == env_id)
            ax.plot(*zip(*pts, strict=True), style, label=f"{env_id.split('/')[-1]} {kind}")
    for r in rows:
        if r.kind.startswith("gymnasium"):
            ax.axhline(r.env_steps_per_s, linestyle="-.", color="gray", linewidth=1)
            ax.annotate(
                f"{r.env_id} {r.kind.split('-')[1]} ({r.num_envs} envs)",
                (1, r.env_steps_per_s),
                fontsize=7,
                color="gray",
                va="bottom",
            )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("worlds per env")
    ax.set_ylabel("env-steps/s")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="steel-envs bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("env_ids", nargs="+")
    p.add_argument("--num-envs", default="1,16,64,256,1024", help="comma-separated world counts")
    p.add_argument("--steps", type=int, default=100, help="timed control steps per measurement")
    p.add_argument("--device", default="cpu")
    p.add_argument("--no-peers", action="store_true", help="skip the Gymnasium MuJoCo peers")
    p.add_argument("--shards", type=int, default=1, help="also measure the worlds split over this many processes")
    p.add_argument("--repeats", type=int, default=1, help="runs per measurement; each row is their median")
    p.add_argument(
        "--out", default=None, help="output prefix: <out>.json and <out>.png (default runs/bench/bench_<time>/bench)"
    )
    p.add_argument(
        "--profile",
        action="store_true",
        help="also time every kernel of an eager step per ID at the largest world count, grouped by phase",
    )
    return p


def row_record(row: BenchRow) -> dict:
    """``row`` as a JSON-ready dict: its fields, NaN (not measured) as None."""
    return {k: None if isinstance(v, float) and np.isnan(v) else v for k, v in asdict(row).items()}


def _print_report(rows: list[BenchRow]) -> None:
    """The table, the ratios against the MuJoCo peers and each ID's wrapper overhead, on stdout."""
    print(table(rows))
    ratios = ratio_table(rows)
    if ratios:
        print(ratios)
    for r in rows:
        if "wrapper_overhead" in r.notes:
            print(
                f"wrapper overhead vs bare loop, {r.env_id} x {r.num_envs}: {100 * r.notes['wrapper_overhead']:+.1f} %"
            )


def _profiles(env_ids: Sequence[str], num_envs: int, steps: int, device: str) -> list[dict]:
    """Each ID's per-kernel profile at ``num_envs`` worlds (printed), as dicts for the JSON file."""
    from .profile import profile

    profiles = []
    for env_id in env_ids:
        prof = profile(env_id, num_envs, steps=min(steps, 20), device=device)
        print(prof.table())
        profiles.append(asdict(prof))
    return profiles


def main(argv: list[str] | None = None) -> int:
    """``steel-envs bench <Id>... --num-envs 1,16,64 --steps K --device cpu``."""
    p = _parser()
    a = p.parse_args(argv)
    wp.config.log_level = wp.LOG_WARNING
    try:
        counts = [int(v) for v in a.num_envs.split(",")]
    except ValueError:
        p.error(f"--num-envs: expected comma-separated ints, got {a.num_envs!r}")
    from tqdm import tqdm

    total = len(a.env_ids) * len(counts) + (0 if a.no_peers else 2 * len(a.env_ids))
    bar = tqdm(total=total, unit="run", desc="bench")

    def progress(message: str) -> None:
        bar.set_postfix_str(message, refresh=False)
        bar.update(1)

    if a.repeats < 1:
        p.error(f"--repeats: expected an int >= 1, got {a.repeats}")
    from steel_envs.training import out_prefix

    default_out = a.out is None
    try:
        a.out = out_prefix(a.out, "bench", "bench")
    except ValueError as e:
        p.error(str(e))
    try:
        rows = bench(
            a.env_ids,
            counts,
            a.steps,
            a.device,
            peers=not a.no_peers,
            progress=progress,
            shards=a.shards,
            repeats=a.repeats,
        )
    except KeyboardInterrupt:  # nothing written: the folder made for the outputs goes (steel-envs prints the line)
        if default_out:
            with contextlib.suppress(OSError):
                os.rmdir(os.path.dirname(a.out))
        raise
    bar.close()
    _print_report(rows)
    meta = {
        "device": a.device,
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "steps": a.steps,
        "repeats": a.repeats,
        "command": "steel-envs bench " + " ".join(sys.argv[2:] if argv is None else argv),
    }
    profiles = _profiles(a.env_ids, max(counts), a.steps, a.device) if a.profile else []
    with open(f"{a.out}.json", "w") as f:
        json.dump({"meta": meta, "rows": [row_record(r) for r in rows], "profiles": profiles}, f, indent=2)
    plot(rows, f"{a.out}.png")
    print(f"wrote {a.out}.json and {a.out}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
