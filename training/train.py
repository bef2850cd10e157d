"""``steel-envs train``: PPO from rsl-rl-lib on a steel-envs task, with TensorBoard logs and checkpoints.

The algorithm, the models and the logger are rsl_rl's (``OnPolicyRunner``); this file only builds the env,
the adapter (:class:`steel_envs.adapters.rsl_rl.RslRlVecEnv`) and rsl_rl's configuration dict from
:class:`TrainArgs`, whose unset fields come from the task's ``train_defaults`` and then from
:data:`DEFAULTS`. Multi-process training: launch with ``torchrun --nproc-per-node K``; each rank owns an
env on its own device (``cuda:<local rank>`` on GPUs, the CPU otherwise) and seed ``seed + rank``, and
rsl_rl all-reduces the gradients (NCCL on GPUs, gloo on the CPU).
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import time
from dataclasses import dataclass
from typing import Annotated, Any

import torch
import tyro

__all__ = ["DEFAULTS", "TargetReached", "TimeBudgetSpent", "TrainArgs", "TrainResult", "main", "train"]

DEFAULTS: dict[str, Any] = {
    "num_envs": 256,
    "max_iterations": 500,
    "num_steps_per_env": 24,
    "learning_rate": 1.0e-3,
    "entropy_coef": 0.005,
    "gamma": 0.99,
    "lam": 0.95,
    "clip_param": 0.2,
    "num_learning_epochs": 5,
    "num_mini_batches": 4,
    "desired_kl": 0.01,
    "actor_hidden_dims": (128, 128),
    "critic_hidden_dims": (128, 128),
    "init_noise_std": 1.0,
    "obs_normalization": True,
    "save_interval": 50,
}
"""Hyper-parameters used where neither the command line nor the task's ``train_defaults`` set one."""


@dataclass(kw_only=True)
class TrainArgs:
    """Arguments of ``steel-envs train``; None means the task's default, then :data:`DEFAULTS`."""

    env_id: Annotated[str, tyro.conf.Positional, tyro.conf.arg(metavar="ENV_ID")]
    """Environment ID, e.g. steel_envs/CartpoleBalance-v0."""
    num_envs: int | None = None
    """Worlds per process."""
    device: str = "cpu"
    """Warp and torch device of the env and the learner (cpu, cuda:0); with torchrun, cuda:<local rank>."""
    seed: int = 0
    """Seed of the env and of torch; rank r of torchrun uses seed + r."""
    max_iterations: int | None = None
    """PPO iterations (each collects num_envs * num_steps_per_env env-steps)."""
    num_steps_per_env: int | None = None
    """Rollout length per iteration [control steps]."""
    learning_rate: float | None = None
    """Adam learning rate (adapted by rsl_rl's KL schedule)."""
    entropy_coef: float | None = None
    """Entropy bonus weight."""
    gamma: float | None = None
    """Discount factor."""
    lam: float | None = None
    """GAE lambda."""
    clip_param: float | None = None
    """PPO clip range."""
    num_learning_epochs: int | None = None
    """Epochs over each rollout."""
    num_mini_batches: int | None = None
    """Mini-batches per epoch."""
    desired_kl: float | None = None
    """Target KL of the adaptive learning-rate schedule."""
    actor_hidden_dims: tuple[int, ...] | None = None
    """Hidden layer sizes of the actor MLP."""
    critic_hidden_dims: tuple[int, ...] | None = None
    """Hidden layer sizes of the critic MLP."""
    init_noise_std: float | None = None
    """Initial standard deviation of the Gaussian policy [action units]."""
    obs_normalization: bool | None = None
    """Running normalization of the observations inside the models (exported with them)."""
    save_interval: int | None = None
    """Checkpoint every this many iterations."""
    target_return: float | None = None
    """Stop once the mean return of the last 100 episodes reaches this; None: the task's, or run all iterations."""
    max_seconds: float | None = None
    """Stop after this wall time [s] (checked every env step); None: no time limit."""
    log_dir: str = "runs"
    """Folder of the runs; each run writes TensorBoard events and checkpoints to log_dir/<env>/<time>."""
    progress: bool = True
    """Show a progress bar with the live mean return."""
    quiet: bool = True
    """Hide rsl_rl's per-iteration console report (TensorBoard still gets everything)."""


@dataclass
class TrainResult:
    """What a training run measured."""

    run_dir: str
    checkpoint: str
    iterations: int
    env_steps: int
    seconds: float
    mean_return: float
    """Mean return of the last (up to) 100 episodes."""
    target_reached: bool
    curve: list[tuple[int, float, float]]
    """(env-steps, seconds, mean return of the last 100 episodes) after each ended batch of episodes."""
    actor_checksum: float
    """Sum of the actor's parameters; equal on every rank of a distributed run (gradients all-reduced)."""


class TargetReached(Exception):
    """Raised inside a rollout to stop training once the target return is reached."""


class TimeBudgetSpent(Exception):
    """Raised inside a rollout to stop training once ``max_seconds`` have passed."""


def _resolve(args: TrainArgs, defaults: dict[str, Any]) -> dict[str, Any]:
    merged = {**DEFAULTS, **defaults}
    return {
        f.name: merged.get(f.name) if getattr(args, f.name) is None else getattr(args, f.name)
        for f in dataclasses.fields(args)
    }


def rsl_rl_config(hp: dict[str, Any], device: str = "cpu") -> dict[str, Any]:
    """rsl_rl's ``OnPolicyRunner`` configuration dict from resolved hyper-parameters.

    On CUDA, rsl_rl's per-step NaN check (a host read every step) is off: the env's observations are already
    finite (non-finite entries of an ended world are replaced by 0 and the rest clipped to ``obs_clip``).
    """
    return {
        "num_steps_per_env": hp["num_steps_per_env"],
        "save_interval": hp["save_interval"],
        "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
        "logger": "tensorboard",
        "check_for_nan": not device.startswith("cuda"),
        "algorithm": {
            "class_name": "PPO",
            "num_learning_epochs": hp["num_learning_epochs"],
            "num_mini_batches": hp["num_mini_batches"],
            "clip_param": hp["clip_param"],
            "gamma": hp["gamma"],
            "lam": hp["lam"],
            "value_loss_coef": 1.0,
            "entropy_coef": hp["entropy_coef"],
            "learning_rate": hp["learning_rate"],
            "max_grad_norm": 1.0,
            "use_clipped_value_loss": True,
            "schedule": "adaptive",
            "desired_kl": hp["desired_kl"],
        },
        "actor": {
            "class_name": "MLPModel",
            "hidden_dims": list(hp["actor_hidden_dims"]),
            "activation": "elu",
            "obs_normalization": hp["obs_normalization"],
            "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": hp["init_noise_std"]},
        },
        "critic": {
            "class_name": "MLPModel",
            "hidden_dims": list(hp["critic_hidden_dims"]),
            "activation": "elu",
            "obs_normalization": hp["obs_normalization"],
        },
    }


def _distributed() -> tuple[int, int, int]:
    """(world size, global rank, local rank) from torchrun's environment; (1, 0, 0) otherwise."""
    return int(os.getenv("WORLD_SIZE", "1")), int(os.getenv("RANK", "0")), int(os.getenv("LOCAL_RANK", "0"))


def make_runner(env, cfg: dict[str, Any], log_dir: str | None, device: str):
    """rsl_rl's OnPolicyRunner; under torchrun on CPU devices the process group uses gloo (rsl_rl itself
    initializes NCCL on CUDA devices)."""
    from rsl_rl.runners import OnPolicyRunner

    class _Runner(OnPolicyRunner):
        def _configure_multi_gpu(self) -> None:
            world_size, rank, local_rank = _distributed()
            if world_size == 1 or str(self.device).startswith("cuda"):
                super()._configure_multi_gpu()
                return
            # CPU ranks: the same bookkeeping as rsl_rl, with the gloo backend.
            self.gpu_world_size, self.gpu_global_rank, self.gpu_local_rank = world_size, rank, local_rank
            self.is_distributed = True
            self.cfg["multi_gpu"] = {"global_rank": rank, "local_rank": local_rank, "world_size": world_size}
            if not torch.distributed.is_initialized():
                torch.distributed.init_process_group(backend="gloo", rank=rank, world_size=world_size)

    return _Runner(env, cfg, log_dir=log_dir, device=device)


def train(args: TrainArgs) -> TrainResult:
    """Train PPO on ``args.env_id``; return where the run went and what it reached.

    Raises:
        gymnasium.error.Error: On an unknown ID.
        ValueError: On invalid env arguments (see :class:`steel_envs.SteelVectorEnv`).
    """
    from tqdm import tqdm

    import steel_envs
    from steel_envs.adapters.rsl_rl import RslRlVecEnv
    from steel_envs.vector_env import throughput_kwargs

    world_size, rank, local_rank = _distributed()
    device = args.device
    if world_size > 1 and device.startswith("cuda"):
        device = f"cuda:{local_rank}"
    if device.startswith("cuda"):
        # Before the env exists: Warp and torch then record their streams and events under this rank's device.
        torch.cuda.set_device(torch.device(device))
    vector_cls = steel_envs.task_class(args.env_id)
    hp = _resolve(args, getattr(vector_cls, "train_defaults", {}))
    seed = args.seed + rank
    torch.manual_seed(seed)
    env = steel_envs.make_vec(
        args.env_id, num_envs=hp["num_envs"], device=device, seed=seed, **throughput_kwargs(device)
    )

    start = time.perf_counter()
    steps_per_iteration = hp["num_envs"] * hp["num_steps_per_env"]
    total = hp["max_iterations"] * steps_per_iteration
    bar = tqdm(
        total=total,
        unit="step",
        unit_scale=True,
        desc=args.env_id,
        mininterval=0.5,
        disable=not args.progress or rank != 0,
    )
    curve: list[tuple[int, float, float]] = []
    counted = {"env_steps": 0}
    target = hp["target_return"]

    def on_episodes(returns: torch.Tensor, lengths: torch.Tensor) -> None:
        mean = sum(adapter.recent_returns) / len(adapter.recent_returns)
        curve.append((counted["env_steps"], time.perf_counter() - start, mean))
        bar.set_postfix(mean_return=f"{mean:.1f}", refresh=False)
        if target is not None and len(adapter.recent_returns) == adapter.recent_returns.maxlen and mean >= target:
            raise TargetReached

    # Episode statistics are read from the device once per rollout, not every step.
    adapter = RslRlVecEnv(env, on_episodes=on_episodes, stats_interval=hp["num_steps_per_env"])
    inner_step = adapter.step

    def counting_step(actions):
        out = inner_step(actions)
        counted["env_steps"] += env.num_envs
        bar.update(env.num_envs)
        if args.max_seconds is not None and time.perf_counter() - start > args.max_seconds:
            raise TimeBudgetSpent
        return out

    adapter.step = counting_step
    run_dir = os.path.join(args.log_dir, args.env_id.replace("/", "_"), time.strftime("%Y-%m-%d_%H-%M-%S"))
    # rsl_rl prints its models and a table per iteration on stdout; TensorBoard gets the same figures.
    console = contextlib.redirect_stdout(io.StringIO()) if args.quiet else contextlib.nullcontext()
    reached = False
    with console:
        runner = make_runner(adapter, rsl_rl_config(hp, device), run_dir if rank == 0 else None, device)
        try:
            runner.learn(num_learning_iterations=hp["max_iterations"])
        except TargetReached:
            reached = True
        except TimeBudgetSpent:
            pass
    seconds = time.perf_counter() - start
    bar.close()
    checkpoint = os.path.join(run_dir, "model_final.pt")
    if rank == 0:
        runner.save(checkpoint)
        with open(os.path.join(run_dir, "train_args.json"), "w") as f:
            json.dump({"env_id": args.env_id, "hyper_parameters": hp}, f, indent=2, default=list)
        if runner.logger.writer is not None:
            runner.logger.writer.add_scalar("Perf/env_steps_per_s", counted["env_steps"] / seconds, 0)
            runner.logger.writer.flush()
    recent = adapter.recent_returns
    result = TrainResult(
        run_dir=run_dir,
        checkpoint=checkpoint,
        iterations=runner.current_learning_iteration + 1,
        env_steps=counted["env_steps"],
        seconds=seconds,
        mean_return=sum(recent) / len(recent) if recent else float("nan"),
        target_reached=reached,
        curve=curve,
        actor_checksum=float(sum(p.detach().double().sum() for p in runner.alg.get_policy().parameters())),
    )
    env.close()
    return result


def main(argv: list[str] | None = None) -> int:
    """``steel-envs train``: parse :class:`TrainArgs` with tyro and train."""
    import warp as wp

    wp.config.log_level = wp.LOG_WARNING
    args = tyro.cli(TrainArgs, args=argv, prog="steel-envs train")
    r = train(args)
    print(
        f"{args.env_id}: {r.iterations} iterations, {r.env_steps} env-steps in {r.seconds:.1f} s "
        f"({r.env_steps / r.seconds:.0f} env-steps/s), mean return (last 100 episodes) {r.mean_return:.1f}"
        + (" - target reached" if r.target_reached else "")
    )
    world_size, rank, _ = _distributed()
    if rank == 0:
        print(f"checkpoint: {r.checkpoint}\nTensorBoard: tensorboard --logdir {r.run_dir}")
    if world_size > 1:
        print(f"rank {rank}/{world_size}: actor checksum {r.actor_checksum:.9e}")
        torch.distributed.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
