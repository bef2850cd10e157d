"""Learning benchmark of any ID: PPO with the task's defaults, the return curve, then ``evaluate``'s table.

``python -m steel_envs.training.benchmarks.learning steel_envs/AntRun-v0 --minutes 30`` trains PPO (rsl-rl-lib,
the task's ``train_config``, ``--shards auto``) until the task's target return, its iteration count or the
wall-time budget stops it, prints the curve (mean return of the last 100 episodes every ``--every`` seconds), then
evaluates the trained policy (its mean action) beside the random policy and, where the task ships one, its scripted
solver (``<task module>:scripted_policy``) over ``--episodes`` episodes with 95 % confidence intervals. ``cartpole``
and ``ant`` are short names of CartpoleBalance-v0 and AntRun-v0. It prints the device and worlds it ran; ``--device
cuda:0 --num-envs 4096`` is the GPU run (``training/benchmarks/gpu_check.sh``). Exit status 1 when the task has a
target return that was not reached.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import os
import sys
import tempfile

import torch
from steel_envs.training.train import train
from steel_envs.training.train_args import TrainArgs

__all__ = ["main", "scripted_policy_spec"]

_SHORT_NAMES = {"cartpole": "steel_envs/CartpoleBalance-v0", "ant": "steel_envs/AntRun-v0"}


def scripted_policy_spec(env_id: str) -> str | None:
    """``"<module>:scripted_policy"`` of the task's scripted solver, or None where its module has none."""
    import steel_envs

    module = steel_envs.task_class(env_id).__module__
    return f"{module}:scripted_policy" if hasattr(importlib.import_module(module), "scripted_policy") else None


def main(argv: list[str] | None = None) -> int:
    """Train, print the curve, evaluate; exit 1 when the task's target return was not reached."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("env_id", help="a registered ID, or cartpole / ant")
    p.add_argument("--device", default="cpu")
    p.add_argument("--num-envs", type=int, default=None, help="worlds (default: the task's training default)")
    p.add_argument("--minutes", type=float, default=None, help="wall-time budget [min] (default: none)")
    p.add_argument("--max-iterations", type=int, default=None, help="PPO iterations (default: the task's)")
    p.add_argument("--every", type=float, default=60.0, help="seconds between printed curve points")
    p.add_argument("--episodes", type=int, default=100, help="evaluated episodes per policy")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--log-dir", default=None, help="run folder (default: a temporary one)")
    a = p.parse_args(argv)
    import warp as wp

    wp.config.log_level = wp.LOG_WARNING
    env_id = _SHORT_NAMES.get(a.env_id, a.env_id)
    log_dir = a.log_dir or tempfile.mkdtemp(prefix="steel-envs-learning-")
    print(f"{env_id}: torch threads {torch.get_num_threads()}, CPU cores {os.cpu_count()}, device {a.device}")
    import steel_envs

    ppo = steel_envs.task_class(env_id).train_config
    if a.num_envs is not None:
        ppo = dataclasses.replace(ppo, num_envs=a.num_envs)
    if a.max_iterations is not None or a.minutes is not None:  # a time budget alone lifts the task's cap
        ppo = dataclasses.replace(ppo, max_iterations=a.max_iterations)
    seconds = None if a.minutes is None else 60.0 * a.minutes
    args = TrainArgs(env_id=env_id, ppo=ppo, device=a.device, seed=a.seed, max_seconds=seconds, log_dir=log_dir)
    r = train(dataclasses.replace(args, progress=False))
    print(
        f"{env_id}: {r.env_steps} env-steps, {r.iterations} iterations in {r.seconds:.0f} s "
        f"({r.env_steps / r.seconds:.0f} env-steps/s)" + (" - target reached" if r.target_reached else "")
    )
    print("  seconds   env-steps   mean return (last 100 episodes)")
    next_print = 0.0
    for steps, seconds, mean in r.curve:
        if seconds >= next_print:
            print(f"  {seconds:7.0f}  {steps:10d}   {mean:9.1f}")
            next_print += a.every
    print(f"  {r.seconds:7.0f}  {r.env_steps:10d}   {r.mean_return:9.1f}  (final)")
    print(f"checkpoint: {r.checkpoint}")
    from steel_envs.training.evaluate import evaluate, table

    policies = [r.checkpoint, "random", *filter(None, [scripted_policy_spec(env_id)])]
    print(table(evaluate(env_id, policies, episodes=a.episodes, num_envs=16, device=a.device, progress=False)))
    target = ppo.target_return
    return 1 if target is not None and not r.target_reached else 0


if __name__ == "__main__":
    sys.exit(main())
