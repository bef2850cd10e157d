"""Learning benchmarks: CartpoleBalance time-to-475 and the AntRun return curve over a wall-time budget.

``python -m steel_envs.training.benchmarks.learning cartpole`` trains PPO (rsl-rl-lib, the task's default
hyper-parameters) until the mean return of the last 100 episodes reaches 475 of 500, and prints the env-steps
and wall time it took. ``python -m steel_envs.training.benchmarks.learning ant --minutes 10`` trains AntRun
for that long and prints the return curve (mean of the last 100 episodes) every ``--every`` seconds.
Both print the device and the number of worlds they ran; ``--device cuda:0 --num-envs 4096`` is the GPU run
(``training/benchmarks/gpu_check.sh`` runs AntRun for 3 minutes on a GPU).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import torch
from steel_envs.training.train import TrainArgs, train


def main(argv: list[str] | None = None) -> int:
    """Run one benchmark and print its figures; exit 1 when the Cartpole target was not reached."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("task", choices=("cartpole", "ant"))
    p.add_argument("--device", default="cpu")
    p.add_argument("--num-envs", type=int, default=None, help="worlds (default: the task's training default)")
    p.add_argument("--minutes", type=float, default=10.0, help="ant: wall-time budget [min]")
    p.add_argument("--every", type=float, default=60.0, help="ant: seconds between printed curve points")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--log-dir", default=None, help="run folder (default: a temporary one)")
    a = p.parse_args(argv)
    import warp as wp

    wp.config.log_level = wp.LOG_WARNING
    log_dir = a.log_dir or tempfile.mkdtemp(prefix="steel-envs-bench-")
    print(f"torch threads {torch.get_num_threads()}, CPU cores {os.cpu_count()}, device {a.device}")
    if a.task == "cartpole":
        r = train(
            TrainArgs(
                env_id="steel_envs/CartpoleBalance-v0",
                device=a.device,
                num_envs=a.num_envs,
                seed=a.seed,
                target_return=475.0,
                max_iterations=2000,
                log_dir=log_dir,
                progress=False,
            )
        )
        status = "reached" if r.target_reached else "NOT reached"
        print(
            f"CartpoleBalance-v0: mean return {r.mean_return:.1f} (target 475 {status}) after {r.env_steps} "
            f"env-steps, {r.iterations} iterations, {r.seconds:.1f} s wall time"
        )
        return 0 if r.target_reached else 1
    r = train(
        TrainArgs(
            env_id="steel_envs/AntRun-v0",
            device=a.device,
            num_envs=a.num_envs,
            seed=a.seed,
            max_seconds=60.0 * a.minutes,
            max_iterations=10**6,
            log_dir=log_dir,
            progress=False,
        )
    )
    print(
        f"AntRun-v0: {r.env_steps} env-steps, {r.iterations} iterations in {r.seconds:.0f} s "
        f"({r.env_steps / r.seconds:.0f} env-steps/s)"
    )
    print("  seconds   env-steps   mean return (last 100 episodes)")
    next_print = 0.0
    for steps, seconds, mean in r.curve:
        if seconds >= next_print:
            print(f"  {seconds:7.0f}  {steps:10d}   {mean:9.1f}")
            next_print += a.every
    print(f"  {r.seconds:7.0f}  {r.env_steps:10d}   {r.mean_return:9.1f}  (final)")
    print(f"checkpoint: {r.checkpoint}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
