"""The GPU check's ``--learn <ID>`` stage: one seed of the task's own PPO config (its ``train_config``) trained for a
wall-time budget, its env-steps/s with learning and its return curve written to ``docs/gpu/<ID>.json``.

The file holds: ``env_id``, ``device`` and ``device_name`` (the GPU's, or the CPU's model), ``num_envs``, ``seed``,
``max_seconds`` [s], ``seconds`` [s] (the run's wall time from the built env to the saved checkpoint),
``iterations``, ``env_steps``, ``env_steps_per_s`` (= env_steps / seconds), ``mean_return`` (of the last 100
episodes; None before any ended), ``target_reached``, ``curve`` ([env_steps, seconds [s], mean return of the last 100
episodes] after each rollout in which episodes ended), the versions of torch, Warp and Newton, and ``commit`` (``git
describe --always --dirty`` of the source, None without git).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import platform
import subprocess
from typing import TYPE_CHECKING, Any

from ..train_args import TrainArgs

if TYPE_CHECKING:
    from ..train import TrainResult

__all__ = ["MAX_SECONDS", "device_name", "learn", "source_commit"]

MAX_SECONDS = 240.0
"""Default training budget of the stage [s]: with the imports, the env build (its first-use CUDA compile on a cold
kernel cache) and the preflight, it fits one 8-minute device call."""


def device_name(device: str) -> str:
    """The GPU's name for a CUDA ``device``; else the CPU's model (``/proc/cpuinfo``, else ``platform``)."""
    import torch

    if device.startswith("cuda"):
        return torch.cuda.get_device_name(torch.device(device))
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def source_commit() -> str | None:
    """``git describe --always --dirty --abbrev=40`` of the source tree this module was loaded from; None where git
    or the repository is missing (a copy without ``.git``)."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        done = subprocess.run(
            ["git", "-C", here, "describe", "--always", "--dirty", "--abbrev=40"],
            capture_output=True,
            text=True,
            timeout=20,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def _record(args: TrainArgs, r: TrainResult) -> dict[str, Any]:
    """The file's record (see the module docstring) of run ``r`` of ``args``."""
    import newton
    import torch
    import warp as wp

    return {
        "env_id": args.env_id,
        "device": args.device,
        "device_name": device_name(args.device),
        "num_envs": args.ppo.num_envs,
        "seed": args.seed,
        "max_seconds": args.max_seconds,
        "seconds": round(r.seconds, 3),
        "iterations": r.iterations,
        "env_steps": r.env_steps,
        "env_steps_per_s": round(r.env_steps / r.seconds, 1),
        "mean_return": None if math.isnan(r.mean_return) else round(r.mean_return, 4),
        "target_reached": r.target_reached,
        "curve": [[steps, round(t, 3), round(value, 4)] for steps, t, value in r.curve],
        "versions": {"torch": torch.__version__, "warp": wp.__version__, "newton": newton.__version__},
        "commit": source_commit(),
    }


def learn(
    env_id: str,
    *,
    device: str = "cuda:0",
    seconds: float = MAX_SECONDS,
    out: str | None = None,
    num_envs: int | None = None,
    max_iterations: int | None = None,
    seed: int = 0,
    log_dir: str = "runs",
) -> dict[str, Any]:
    """Train one seed of ``env_id``'s PPO config for at most ``seconds`` (less when the task's target return is
    reached) and write the record (see the module docstring) to ``out``.

    Args:
        env_id: A registered ID; without a namespace, ``steel_envs/`` is prefixed.
        device: Warp and torch device of the env and the learner.
        seconds: Training wall-time budget [s] (``TrainArgs.max_seconds``).
        out: Path of the JSON file (its folder is created); None: ``docs/gpu/<ID without namespace>.json``.
        num_envs: Worlds, overriding the config's (a small run on the CPU); None: the task's.
        max_iterations: PPO iterations that also stop the run; None: the budget alone.
        seed: Seed of the env and of torch.
        log_dir: Folder of the run's TensorBoard logs and checkpoints.

    Returns:
        The record written.

    Raises:
        gymnasium.error.Error: On an unknown ID.
        ValueError: On a budget, count or iteration cap out of range (``TrainArgs``' and ``PpoConfig``'s checks).
    """
    import steel_envs

    from ..train import train

    env_id = env_id if "/" in env_id else f"steel_envs/{env_id}"
    ppo = steel_envs.task_class(env_id).train_config
    ppo = dataclasses.replace(
        ppo, num_envs=ppo.num_envs if num_envs is None else num_envs, max_iterations=max_iterations
    )
    args = TrainArgs(
        env_id=env_id, ppo=ppo, device=device, seed=seed, max_seconds=seconds, log_dir=log_dir, progress=False
    )
    record = _record(args, train(args))
    out = out or os.path.join("docs", "gpu", f"{env_id.split('/')[-1]}.json")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(record, f, indent=2)
    print(
        f"learn {env_id} on {record['device_name']} ({device}), {ppo.num_envs} worlds: {record['iterations']} "
        f"iterations, {record['env_steps']:,} env-steps in {record['seconds']:.1f} s ({record['env_steps_per_s']:,.0f} "
        f"env-steps/s with learning), mean return {record['mean_return']}, {len(record['curve'])} curve points; "
        f"wrote {out}"
    )
    return record
