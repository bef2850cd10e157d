"""``steel-envs train``: PPO from rsl-rl-lib on a steel-envs task, with TensorBoard (or W&B) logs and checkpoints.

The algorithm, the models and the logger are rsl_rl's (``OnPolicyRunner``); this file only builds the env,
the adapter (:class:`steel_envs.adapters.rsl_rl.RslRlVecEnv`) and rsl_rl's configuration dict from
:class:`TrainArgs`, whose unset fields come from the task's ``train_defaults`` and then from
:data:`DEFAULTS`. ``steel-envs train <ID> --help`` shows those merged defaults, and the task's config fields and
solver options as ``--env.<field>`` and ``--env.solver-options.<option>``.

**Shards.** ``--shards K`` steps the CPU worlds in K worker processes behind one env
(:class:`steel_envs.ShardedVectorEnv`; Warp's CPU kernels use one core per process) while this process runs the
learner. Rollout (workers busy, learner waiting) and update (learner busy, workers waiting) alternate, so the
learner needs no core of its own; its torch threads must not spin on the workers' cores meanwhile
(``--learner-threads``). Measured on the project's 2-core CPU (45-60 s runs, shared with other work; the
typical figure of 2-3 runs): AntRun-v0 on 128 worlds trained at 1,450 env-steps/s in one process (2.0 s of rollout
and 0.1 s of update per iteration), 1,380 with its env in one worker process and a core left to the learner, and
2,400 with ``--shards 2`` (1.2 s of rollout). CartpoleBalance-v0 on 256 worlds, whose physics takes microseconds
per world-step, trained at 60,000 in one process and 56,000 with ``--shards 2``: there the pipe round trip of every
step costs what the second core saves.

**Multi-process training**: launch with ``torchrun --nproc-per-node K``; each rank owns an env on its own device
(``cuda:<local rank>`` on GPUs, the CPU otherwise) and seed ``seed + rank``, and rsl_rl all-reduces the
gradients (NCCL on GPUs, gloo on the CPU).
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import inspect
import io
import itertools
import json
import math
import os
import re
import sys
import textwrap
import time
import types
import typing
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import torch
import tyro

__all__ = [
    "DEFAULTS",
    "TargetReached",
    "TimeBudgetSpent",
    "TrainArgs",
    "TrainPlan",
    "TrainResult",
    "main",
    "parse_args",
    "plan",
    "train",
]

DEFAULTS: dict[str, Any] = {
    "num_envs": 256,
    "max_iterations": 500,
    "num_steps_per_env": 24,
    "learning_rate": 1.0e-3,
    "entropy_coef": 0.005,
    "gamma": 0.99,
    "lam": 0.95,
    "clip_param": 0.2,
    "clip_value_loss": True,
    "num_learning_epochs": 5,
    "num_mini_batches": 4,
    "desired_kl": 0.01,
    "schedule": "adaptive",
    "actor_hidden_dims": (128, 128),
    "critic_hidden_dims": (128, 128),
    "init_noise_std": 1.0,
    "min_noise_std": 0.0,
    "init_at_random_ep_len": False,
    "obs_normalization": True,
    "save_interval": 50,
}
"""Hyper-parameters used where neither the command line nor the task's ``train_defaults`` set one."""

_UNBOUNDED_ITERATIONS = 10**9
"""Iterations handed to rsl_rl when only ``max_seconds`` stops a run (its ETA arithmetic needs a finite count)."""


@dataclass(kw_only=True)
class TrainArgs:
    """Arguments of steel-envs train; None means the task's default, then the general defaults (DEFAULTS)."""

    env_id: Annotated[str, tyro.conf.Positional, tyro.conf.arg(metavar="ENV_ID")]
    """Environment ID, e.g. steel_envs/CartpoleBalance-v0."""
    num_envs: int | None = None
    """Worlds per process (with --shards, in all shards together)."""
    shards: int | Literal["auto"] = "auto"
    """CPU processes the worlds are stepped in (ShardedVectorEnv), beside this one, which runs the learner; 1: the
    env runs in this process; auto: one per core with the scene's break-even of worlds each (min_worlds_per_shard),
    no core kept for the learner (measured: it does not pay), 1 under torchrun."""
    learner_threads: int | Literal["auto"] = "auto"
    """torch threads of this process, the learner's. auto: with --shards K >= 2, the cores the K workers leave
    (at least 1); else torch's default. torch's idle OpenMP threads spin, taking the workers' cores during the rollout:
    PushCube-v0 (128 worlds, --shards 2, 2 cores; 3 pairs of 60-iteration runs) trained at 4,123-4,679 env-steps/s
    with torch's 2 threads and 5,092-5,900 with 1 (rollout 0.64-0.74 s per iteration against 0.48-0.53, update
    0.21-0.24 s against 0.21-0.28). The weights do not depend on it (8 iterations: identical with 1 and 2)."""
    device: str = "cpu"
    """Warp and torch device of the env and the learner (cpu, cuda:0); with torchrun, cuda:<local rank>."""
    seed: int = 0
    """Seed of the env and of torch; rank r of torchrun uses seed + r."""
    max_iterations: int | None = None
    """PPO iterations of this run (each collects num_envs * num_steps_per_env env-steps); the task's default
    applies unless --max-seconds is given, which alone then stops the run."""
    num_steps_per_env: int | None = None
    """Rollout length per iteration [control steps]."""
    learning_rate: float | None = None
    """Adam learning rate of the actor and the critic (the start of the adaptive schedule)."""
    entropy_coef: float | None = None
    """Entropy bonus weight."""
    gamma: float | None = None
    """Discount factor."""
    lam: float | None = None
    """GAE lambda."""
    clip_param: float | None = None
    """PPO clip range."""
    clip_value_loss: bool | None = None
    """Clip the critic's step as the policy's (rsl_rl's use_clipped_value_loss): each value prediction moves at most
    clip_param [return units] per iteration, slow where returns are in the hundreds."""
    num_learning_epochs: int | None = None
    """Epochs over each rollout."""
    num_mini_batches: int | None = None
    """Mini-batches per epoch."""
    desired_kl: float | None = None
    """Target KL of the adaptive learning-rate schedule."""
    schedule: Literal["adaptive", "fixed"] | None = None
    """Learning-rate schedule of rsl_rl's PPO: adaptive (divided or multiplied by 1.5 after each mini-batch whose KL
    is above twice or below half desired_kl, within [1e-5, 1e-2]) or fixed (learning_rate throughout)."""
    actor_hidden_dims: tuple[int, ...] | None = None
    """Hidden layer sizes of the actor MLP."""
    critic_hidden_dims: tuple[int, ...] | None = None
    """Hidden layer sizes of the critic MLP."""
    init_noise_std: float | None = None
    """Initial standard deviation of the Gaussian policy [action units]."""
    min_noise_std: float | None = None
    """Floor of the Gaussian policy's standard deviation [action units] (rsl_rl's std_range, which clamps it; 0:
    rsl_rl's own floor, 1e-6). Evaluation uses the policy mean, so the floor only keeps training exploring."""
    init_at_random_ep_len: bool | None = None
    """Start the first episodes at random steps of their time limit (rsl_rl's init_at_random_ep_len, as Isaac Lab's
    train script does), so that episodes do not end together: otherwise, without early ends, every world is at the
    same step of its episode and each iteration's rollout holds one phase of the task."""
    obs_normalization: bool | None = None
    """Running normalization of the observations inside the models (exported with them)."""
    save_interval: int | None = None
    """Checkpoint every this many iterations."""
    target_return: float | None = None
    """Stop once the mean return of the last 100 episodes reaches this; inf: never (run to the other limits)."""
    max_seconds: float | None = None
    """Stop after this wall time [s] (checked every env step); None: no time limit."""
    resume: str | None = None
    """Continue from this checkpoint (model_*.pt of a run of the same task and model sizes): weights, optimizer,
    observation normalization and the iteration count; the run logs to a new folder."""
    logger: Literal["tensorboard", "wandb"] = "tensorboard"
    """Where the run logs: TensorBoard event files, or Weights & Biases as well (extra wandb; offline with
    WANDB_MODE=offline, its files in the run folder)."""
    wandb_project: str = "steel-envs"
    """W&B project of the run (--logger wandb)."""
    log_dir: str = "runs"
    """Folder of the runs; each run writes its logs and checkpoints to log_dir/<env>/<time>."""
    progress: bool = True
    """Show a progress bar (env-steps, or seconds when --max-seconds stops the run) with the live mean return."""
    quiet: bool = True
    """Hide rsl_rl's per-iteration console report (the logger still gets everything)."""
    env: dict[str, Any] = field(default_factory=dict)
    """Task config fields and solver_options (a dict) passed to the env, which validates them; on the command line
    --env.<field> and --env.solver-options.<option>."""


@dataclass
class TrainPlan:
    """How a run will go, resolved from :class:`TrainArgs` and the task's defaults before anything is built."""

    hyper_parameters: dict[str, Any]
    """Every field of :class:`TrainArgs` but ``env``, with the defaults filled in (``max_iterations`` None: until
    ``max_seconds``; ``target_return`` None: no target)."""
    max_iterations: int | None
    """PPO iterations of this run; None: unbounded, ``max_seconds`` stops it."""
    stop: Literal["iterations", "time", "first"]
    """What ends the run (besides a reached target): the iteration count, the time, or the first of both."""


@dataclass
class TrainResult:
    """What a training run measured."""

    run_dir: str
    checkpoint: str
    iterations: int
    """PPO iterations completed, those of the resumed checkpoint included."""
    env_steps: int
    seconds: float
    mean_return: float
    """Mean return of the last (up to) 100 episodes."""
    target_reached: bool
    curve: list[tuple[int, float, float]]
    """(env-steps, seconds, mean return of the last 100 episodes) after each ended batch of episodes."""
    actor_checksum: float
    """Sum of the actor's parameters; equal on every rank of a distributed run (gradients all-reduced)."""
    env_config: dict[str, Any] = field(default_factory=dict)
    """The env's task config as it ran (overrides applied)."""
    solver_options: dict[str, Any] = field(default_factory=dict)
    """The env's solver options as it ran (the scene's, then the overrides)."""


class TargetReached(Exception):
    """Raised inside a rollout to stop training once the target return is reached."""


class TimeBudgetSpent(Exception):
    """Raised inside a rollout to stop training once ``max_seconds`` have passed."""


def _resolve(args: TrainArgs, defaults: dict[str, Any]) -> dict[str, Any]:
    merged = {**DEFAULTS, **defaults}
    return {
        f.name: merged.get(f.name) if getattr(args, f.name) is None else getattr(args, f.name)
        for f in dataclasses.fields(args)
        if f.name != "env"
    }


def _positive_int(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name}: expected an int >= 1, got {value!r}")


def plan(args: TrainArgs) -> TrainPlan:
    """Resolve the hyper-parameters of ``args`` and how the run will stop, without building anything.

    Raises:
        gymnasium.error.Error: On an unknown ID.
        ValueError: On a bad count, time or logger.
    """
    import steel_envs

    hp = _resolve(args, getattr(steel_envs.task_class(args.env_id), "train_defaults", {}))
    if args.max_seconds is not None and args.max_iterations is None:
        hp["max_iterations"] = None  # the time budget alone stops the run, not the default iteration count
    for name in ("num_envs", "num_steps_per_env", "save_interval"):
        _positive_int(name, hp[name])
    for name in ("shards", "learner_threads"):
        if hp[name] != "auto":
            _positive_int(name, hp[name])
    if hp["max_iterations"] is not None:
        _positive_int("max_iterations", hp["max_iterations"])
    seconds = hp["max_seconds"]
    if seconds is not None and not (isinstance(seconds, (int, float)) and seconds > 0 and math.isfinite(seconds)):
        raise ValueError(f"max_seconds: expected a finite number > 0 or None, got {seconds!r}")
    if hp["target_return"] is not None and math.isinf(hp["target_return"]) and hp["target_return"] > 0:
        hp["target_return"] = None
    std = hp["min_noise_std"]
    if not (isinstance(std, (int, float)) and 0.0 <= std < hp["init_noise_std"]):
        raise ValueError(
            f"min_noise_std: expected a number >= 0 below init_noise_std ({hp['init_noise_std']}), got {std!r}"
        )
    if hp["schedule"] not in ("adaptive", "fixed"):
        raise ValueError(f"schedule: expected 'adaptive' or 'fixed', got {hp['schedule']!r}")
    if hp["logger"] not in ("tensorboard", "wandb"):
        raise ValueError(f"logger: expected 'tensorboard' or 'wandb', got {hp['logger']!r}")
    if not isinstance(args.env, dict):
        raise ValueError(f"env: expected a dict of task config fields and solver_options, got {args.env!r}")
    taken = sorted(set(args.env) & {"num_envs", "device", "seed", "num_shards"})
    if taken:
        raise ValueError(f"env: {taken} are set by the train arguments (num_envs, device, seed, shards)")
    stop = "time" if hp["max_iterations"] is None else "iterations" if seconds is None else "first"
    return TrainPlan(hyper_parameters=hp, max_iterations=hp["max_iterations"], stop=stop)


def rsl_rl_config(hp: dict[str, Any], device: str = "cpu") -> dict[str, Any]:
    """rsl_rl's ``OnPolicyRunner`` configuration dict from resolved hyper-parameters.

    On CUDA, rsl_rl's per-step NaN check (a host read every step) is off: the env's observations are already
    finite (non-finite entries of an ended world are replaced by 0 and the rest clipped to ``obs_clip``).
    """
    return {
        "num_steps_per_env": hp["num_steps_per_env"],
        "save_interval": hp["save_interval"],
        # The critic's set is added by make_runner: the env's "critic" group where the adapter hands one over
        # (privileged blocks, noise-free observations), "policy" otherwise.
        "obs_groups": {"actor": ["policy"]},
        "logger": _logger_config(hp),
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
            "use_clipped_value_loss": hp["clip_value_loss"],
            "schedule": hp["schedule"],
            "desired_kl": hp["desired_kl"],
        },
        "actor": {
            "class_name": "MLPModel",
            "hidden_dims": list(hp["actor_hidden_dims"]),
            "activation": "elu",
            "obs_normalization": hp["obs_normalization"],
            "distribution_cfg": {
                "class_name": "GaussianDistribution",
                "init_std": hp["init_noise_std"],
                "std_range": (hp["min_noise_std"], 1.0e6),  # rsl_rl's upper bound; it raises a lower one to 1e-6
            },
        },
        "critic": {
            "class_name": "MLPModel",
            "hidden_dims": list(hp["critic_hidden_dims"]),
            "activation": "elu",
            "obs_normalization": hp["obs_normalization"],
        },
    }


def _logger_config(hp: dict[str, Any]) -> str | dict[str, Any]:
    """rsl_rl's ``logger`` entry: TensorBoard, or its W&B writer (which writes the TensorBoard events as well)."""
    if hp.get("logger", "tensorboard") == "wandb":
        return {
            "class_name": "rsl_rl.utils.wandb_log_writer:WandbLogWriter",
            "project_name": hp.get("wandb_project") or "steel-envs",
        }
    return "tensorboard"


def _distributed() -> tuple[int, int, int]:
    """(world size, global rank, local rank) from torchrun's environment; (1, 0, 0) otherwise."""
    return int(os.getenv("WORLD_SIZE", "1")), int(os.getenv("RANK", "0")), int(os.getenv("LOCAL_RANK", "0"))


def make_runner(env, cfg: dict[str, Any], log_dir: str | None, device: str):
    """rsl_rl's OnPolicyRunner; the critic reads the env's ``critic`` observation group where the adapter provides
    one (:class:`steel_envs.adapters.rsl_rl.RslRlVecEnv`). Under torchrun on CPU devices the process group uses gloo
    (rsl_rl itself initializes NCCL on CUDA devices)."""
    from rsl_rl.runners import OnPolicyRunner

    groups = cfg["obs_groups"] = dict(cfg["obs_groups"])
    groups.setdefault("critic", ["critic"] if "critic" in env.get_observations() else ["policy"])

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


class _Progress:
    """The run's tqdm bar, counting what will stop the run: env-steps toward the iteration count, or seconds toward
    ``max_seconds``. With both limits it counts env-steps until the first iteration has ended, then switches to
    seconds if the remaining iterations, at the speed so far, would outlast the time left."""

    def __init__(self, p: TrainPlan, steps_per_iteration: int, start: float, desc: str, disable: bool) -> None:
        from tqdm import tqdm

        self.plan, self.start = p, start
        self.steps_per_iteration = steps_per_iteration
        self.max_seconds = p.hyper_parameters["max_seconds"]
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


def _check_resume(path: str, env_id: str) -> None:
    if not os.path.isfile(path):
        raise FileNotFoundError(f"resume: no file {path!r}")
    saved_args = os.path.join(os.path.dirname(os.path.abspath(path)), "train_args.json")
    if os.path.isfile(saved_args):
        with open(saved_args) as f:
            saved = json.load(f).get("env_id")
        if saved is not None and saved != env_id:
            raise ValueError(f"resume: {path!r} was trained on {saved}, not {env_id}")


def _json_default(value: Any) -> Any:
    if isinstance(value, (tuple, set)):
        return list(value)
    return str(value)


@contextlib.contextmanager
def _wandb_environment(enabled: bool, run_dir: str):
    """W&B's files go to the run folder (not the current directory); without ``WANDB_MODE=offline`` the user must be
    logged in, checked here so that a missing key is one clear line, not a prompt hidden by ``quiet``."""
    if not enabled:
        yield
        return
    try:
        import wandb
    except ImportError:
        raise ValueError("logger: wandb is not installed; pip install 'steel-envs[wandb]'") from None
    if os.environ.get("WANDB_MODE", "online") not in ("offline", "dryrun", "disabled"):
        try:
            wandb.login()
        except wandb.errors.Error as e:
            raise ValueError(f"logger wandb: {e} (or log offline: WANDB_MODE=offline)") from None
    saved = os.environ.get("WANDB_DIR")
    os.environ["WANDB_DIR"] = os.path.abspath(run_dir)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("WANDB_DIR", None)
        else:
            os.environ["WANDB_DIR"] = saved


def train(args: TrainArgs) -> TrainResult:
    """Train PPO on ``args.env_id``; return where the run went and what it reached.

    Raises:
        gymnasium.error.Error: On an unknown ID.
        FileNotFoundError: If the ``resume`` checkpoint is missing.
        ValueError: On invalid env arguments or config overrides (see :class:`steel_envs.SteelVectorEnv`), bad
            counts, a checkpoint that does not fit the models, or a W&B logger that cannot start.
    """
    import steel_envs
    from steel_envs.vector_env import throughput_kwargs

    p = plan(args)
    hp = p.hyper_parameters
    if args.resume is not None:
        _check_resume(args.resume, args.env_id)
    world_size, rank, local_rank = _distributed()
    device = args.device
    if world_size > 1 and device.startswith("cuda"):
        device = f"cuda:{local_rank}"
    if device.startswith("cuda"):
        # Before the env exists: Warp and torch then record their streams and events under this rank's device.
        torch.cuda.set_device(torch.device(device))
    seed = args.seed + rank
    torch.manual_seed(seed)
    if hp["shards"] == "auto":
        from steel_envs.sharding import resolve_shards

        shards = 1 if world_size > 1 else "auto"  # torchrun: every rank is a process of its own already
        hp["shards"], reason = resolve_shards(args.env_id, hp["num_envs"], shards, device=device, env_kwargs=args.env)
        if rank == 0:
            print(f"shards: {reason}")
    if hp["learner_threads"] == "auto":
        from steel_envs.sharding import available_cores

        sharded = hp["shards"] > 1
        hp["learner_threads"] = max(1, available_cores() - hp["shards"]) if sharded else torch.get_num_threads()
    threads_before = torch.get_num_threads()
    torch.set_num_threads(hp["learner_threads"])  # restored at the end: train() may run inside a larger program
    try:
        run_dir = os.path.join(args.log_dir, args.env_id.replace("/", "_"), time.strftime("%Y-%m-%d_%H-%M-%S"))
        with _wandb_environment(hp["logger"] == "wandb" and rank == 0, run_dir):
            env = steel_envs.make_vec(
                args.env_id,
                num_envs=hp["num_envs"],
                device=device,
                seed=seed,
                num_shards=hp["shards"],
                **throughput_kwargs(device),
                **args.env,
            )
            try:
                return _train(args, p, env, device, rank, run_dir)
            finally:
                env.close()
    finally:
        torch.set_num_threads(threads_before)


def _train(args: TrainArgs, p: TrainPlan, env, device: str, rank: int, run_dir: str) -> TrainResult:
    from steel_envs.adapters.rsl_rl import RslRlVecEnv

    hp = p.hyper_parameters
    if rank == 0:
        os.makedirs(run_dir, exist_ok=True)
        # Written first, so that the run's periodic checkpoints can be played while it still runs.
        with open(os.path.join(run_dir, "train_args.json"), "w") as f:
            json.dump(
                {"env_id": args.env_id, "env": args.env, "hyper_parameters": hp}, f, indent=2, default=_json_default
            )
    start = time.perf_counter()
    steps_per_iteration = env.num_envs * hp["num_steps_per_env"]
    bar = _Progress(p, steps_per_iteration, start, args.env_id, disable=not args.progress or rank != 0)
    curve: list[tuple[int, float, float]] = []
    counted = {"env_steps": 0, "iterations": 0}
    target = hp["target_return"]

    def on_episodes(returns: torch.Tensor, lengths: torch.Tensor) -> None:
        mean = sum(adapter.recent_returns) / len(adapter.recent_returns)
        curve.append((counted["env_steps"], time.perf_counter() - start, mean))
        bar.set_postfix(mean_return=f"{mean:.1f}")
        if target is not None and len(adapter.recent_returns) == adapter.recent_returns.maxlen and mean >= target:
            raise TargetReached

    # Episode statistics are read from the device once per rollout, not every step.
    adapter = RslRlVecEnv(env, on_episodes=on_episodes, stats_interval=hp["num_steps_per_env"])
    inner_step = adapter.step

    def counting_step(actions):
        out = inner_step(actions)
        counted["env_steps"] += env.num_envs
        bar.update(counted["env_steps"], env.num_envs)
        if args.max_seconds is not None and time.perf_counter() - start > args.max_seconds:
            raise TimeBudgetSpent
        return out

    adapter.step = counting_step
    # rsl_rl prints its models and a table per iteration on stdout; the logger gets the same figures.
    console = contextlib.redirect_stdout(io.StringIO()) if args.quiet else contextlib.nullcontext()
    reached = False
    with console:
        runner = make_runner(adapter, rsl_rl_config(hp, device), run_dir if rank == 0 else None, device)
        done_before = 0
        if args.resume is not None:
            try:
                infos = runner.load(args.resume, map_location=device)
            except (RuntimeError, KeyError) as e:
                reason = " ".join(line.strip() for line in str(e).splitlines()[:2]) or type(e).__name__
                raise ValueError(f"resume: {args.resume!r} does not fit this run's models ({reason})") from None
            # rsl_rl's own checkpoints hold the index of their last iteration; ours also the count.
            done_before = (infos or {}).get("iterations", runner.current_learning_iteration + 1)
            runner.current_learning_iteration = done_before  # the next iteration's index
        update = runner.alg.update

        def counting_update(*a, **k):
            out = update(*a, **k)
            counted["iterations"] += 1
            return out

        runner.alg.update = counting_update
        # The writer is stopped below, after the final checkpoint (W&B uploads it) and the last scalars.
        stop_writer = runner.logger.stop_logging_writer
        runner.logger.stop_logging_writer = lambda: None
        try:
            runner.learn(
                num_learning_iterations=p.max_iterations or _UNBOUNDED_ITERATIONS,
                init_at_random_ep_len=hp["init_at_random_ep_len"],
            )
        except TargetReached:
            reached = True
        except TimeBudgetSpent:
            pass
    seconds = time.perf_counter() - start
    bar.close()
    iterations = done_before + counted["iterations"]
    checkpoint = os.path.join(run_dir, "model_final.pt")
    if rank == 0:
        runner.current_learning_iteration = max(iterations - 1, 0)  # rsl_rl's "iter": the last iteration's index
        runner.save(checkpoint, infos={"iterations": iterations})
        writer = runner.logger.writer
        if writer is not None:
            writer.add_scalar("Perf/env_steps_per_s", counted["env_steps"] / seconds, 0)
            with contextlib.redirect_stdout(io.StringIO()) if args.quiet else contextlib.nullcontext():
                stop_writer()
            writer.flush()
    recent = adapter.recent_returns
    solver_options = env.solver_options
    return TrainResult(
        run_dir=run_dir,
        checkpoint=checkpoint,
        iterations=iterations,
        env_steps=counted["env_steps"],
        seconds=seconds,
        mean_return=sum(recent) / len(recent) if recent else float("nan"),
        target_reached=reached,
        curve=curve,
        actor_checksum=float(sum(w.detach().double().sum() for w in runner.alg.get_policy().parameters())),
        env_config=dataclasses.asdict(env.config),
        solver_options=dict(solver_options.as_kwargs()),
    )


# ---------------------------------------------------------------------------------------------------------- CLI

_ROLE = re.compile(r":[a-z]+:`~?([^`<]*?)(?: <[^>]*>)?`")


def _plain(text: str) -> str:
    """Docstring text as help text: reST roles and literals without their markup, one paragraph."""
    text = _ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1], text)
    text = re.sub(r"``([^`]*)``", r"\1", text)
    text = re.sub(r"`([^`]*)`", r"\1", text)
    return " ".join(text.split())


def _field_docs(cls: type) -> dict[str, str]:
    """The docstrings under the fields of ``cls`` and its bases (the subclass's first), from their source."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError, SyntaxError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for node, after in itertools.pairwise(body):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                docs[node.target.id] = _plain(after.value.value)
    return docs


def _args_docs(docstring: str | None) -> dict[str, str]:
    """The first sentence of each entry of a Google-style ``Args:`` section."""
    docs, name, lines = {}, None, []
    section = False
    for raw in (docstring or "").splitlines():
        line = raw.strip()
        if line == "Args:":
            section = True
            continue
        if not section:
            continue
        m = re.match(r"^(\w+)(?: \([^)]*\))?: (.*)$", line)
        if m and raw.startswith(" " * 12) and not raw.startswith(" " * 16):
            if name:
                docs[name] = " ".join(lines)
            name, lines = m.group(1), [m.group(2)]
        elif line.endswith(":") and " " not in line:  # the next section
            break
        elif name and line:
            lines.append(line)
    if name:
        docs[name] = " ".join(lines)
    return {k: re.split(r"(?<=\.)\s", _plain(v), maxsplit=1)[0] for k, v in docs.items()}


_SCALARS = {"bool": bool, "int": int, "float": float, "str": str}


def _option_fields(defaults: Any) -> list[tuple[str, Any, Any, str]]:
    """(name, type, default, help) of every solver option the command line can set: the fields of a dataclass
    (SolverSteel's), or else the scalar keywords of the solver behind ``defaults`` (SolverVBD's, whose options
    object holds only what a scene set and reads the rest from the solver's signature)."""
    out = []
    if dataclasses.is_dataclass(defaults):
        hints = typing.get_type_hints(type(defaults))
        docs = _field_docs(type(defaults))
        for f in dataclasses.fields(defaults):
            if _cli_type(hints[f.name]) is not None:
                out.append((f.name, hints[f.name], getattr(defaults, f.name), docs.get(f.name, "")))
        return out
    from newton.solvers import SolverVBD

    docs = _args_docs(SolverVBD.__init__.__doc__)
    for name, param in inspect.signature(SolverVBD.__init__).parameters.items():
        # The env owns the collision pipeline and integrates the rigid bodies (see VBDSolverOptions).
        if param.kind != param.KEYWORD_ONLY or name in ("collision_pipeline", "integrate_with_external_rigid_solver"):
            continue
        parts = [a.strip() for a in str(param.annotation).split("|")]
        scalar = [_SCALARS[a] for a in parts if a in _SCALARS]
        if len(scalar) != 1 or not set(parts) <= {*_SCALARS, "None"}:
            continue  # mappings and enums: from Python only (solver_options={...})
        hint = scalar[0] | None if "None" in parts else scalar[0]
        out.append((name, hint, getattr(defaults, name), docs.get(name, "")))
    return out


def _cli_type(hint: Any) -> Any:
    """``hint`` if the command line can express it (scalars, literals, tuples of scalars, None), else None."""
    origin = typing.get_origin(hint)
    if hint in (bool, int, float, str, type(None)):
        return hint
    if origin is Literal:
        return hint
    if origin is tuple:
        return hint if all(a is Ellipsis or _cli_type(a) is not None for a in typing.get_args(hint)) else None
    if origin in (typing.Union, types.UnionType):
        return hint if all(_cli_type(a) is not None for a in typing.get_args(hint)) else None
    return None


def _without_none(hint: Any) -> Any:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        return typing.Union[tuple(args)] if len(args) > 1 else args[0]  # noqa: UP007
    return hint


def _annotated(hint: Any, text: str) -> Any:
    return Annotated[hint, tyro.conf.arg(help=text or None)]


def _make(name: str, entries: list[tuple[str, Any, Any, str]]) -> tuple[type, Any]:
    """A kw-only dataclass of ``entries`` (name, type, default, help) and its instance holding the defaults."""
    cls = dataclasses.make_dataclass(
        name, [(n, _annotated(t, h), field(default=None)) for n, t, _, h in entries], kw_only=True
    )
    return cls, cls(**{n: d for n, _, d, _ in entries})


def _env_class(env_id: str) -> tuple[type, Any]:
    """The ``--env`` group of ``env_id``: its task config fields and a ``solver_options`` group, with the task's
    defaults (the config class's and the scene's solver options on the CPU)."""
    import steel_envs

    cls = steel_envs.task_class(env_id)
    config = cls.config_cls
    hints, docs = typing.get_type_hints(config), _field_docs(config)
    entries = []
    for f in dataclasses.fields(config):
        hint = _cli_type(hints[f.name])
        if hint is None:
            continue
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        entries.append((f.name, hint, default, docs.get(f.name, "")))
    solver_cls, solver = _make("SolverOptions", _option_fields(cls.solver_defaults))
    env_cls = dataclasses.make_dataclass(
        "EnvOverrides",
        [(n, _annotated(t, h), field(default=None)) for n, t, _, h in entries]
        + [
            (
                "solver_options",
                _annotated(solver_cls, f"Options of the task's solver (defaults: the scene's on the CPU; {env_id})."),
                field(default=None),
            )
        ],
        kw_only=True,
    )
    return env_cls, env_cls(**{n: d for n, _, d, _ in entries}, solver_options=solver)


def _cli_class(env_id: str | None) -> tuple[type, Any]:
    """The command line's dataclass and its defaults: :class:`TrainArgs` with the task's resolved defaults (the
    general ones without an ID) and, with an ID, the ``--env`` group of its config fields and solver options."""
    import steel_envs

    merged = dict(DEFAULTS)
    if env_id is not None:
        merged.update(getattr(steel_envs.task_class(env_id), "train_defaults", {}))
    hints, docs = typing.get_type_hints(TrainArgs, include_extras=True), _field_docs(TrainArgs)
    entries = []
    for f in dataclasses.fields(TrainArgs):
        if f.name == "env":
            continue
        default = merged.get(f.name, f.default)
        hint = hints[f.name]
        if f.name == "env_id":
            entries.append((f.name, hint, env_id, ""))
            continue
        if default is not None:
            hint = _without_none(hint)
        entries.append((f.name, hint, default, docs.get(f.name, "")))
    fields_ = [(n, t, field()) if n == "env_id" else (n, _annotated(t, h), field(default=d)) for n, t, d, h in entries]
    values = {n: d for n, _, d, _ in entries if n != "env_id" or d is not None}
    if env_id is not None:
        env_cls, env_default = _env_class(env_id)
        help_text = "Task config fields (validated by the env); saved with the run in train_args.json."
        fields_.append(("env", _annotated(env_cls, help_text), field(default=None)))
        values["env"] = env_default
    cls = dataclasses.make_dataclass("TrainArgs", fields_, kw_only=True)
    # tyro reads defaults from this instance; env_id stays required on the command line.
    return cls, cls(**values) if env_id is not None else None


def _given(argv: list[str], dotted: str) -> bool:
    """Whether ``argv`` names the option ``--<dotted>`` (hyphens and underscores alike)."""
    wanted = dotted.replace("-", "_")
    return any(a.startswith("--") and a[2:].split("=", 1)[0].replace("-", "_") == wanted for a in argv)


def _changed(parsed: Any, default: Any, argv: list[str], prefix: str) -> dict[str, Any]:
    """The fields of ``parsed`` that the command line set (named, or different from the default)."""
    return {
        f.name: getattr(parsed, f.name)
        for f in dataclasses.fields(parsed)
        if f.name != "solver_options"
        and (_given(argv, prefix + f.name) or getattr(parsed, f.name) != getattr(default, f.name))
    }


def _find_env_id(argv: list[str]) -> str | None:
    """The ID among ``argv`` (before tyro parses it, to build the task's arguments); a first word that is not a
    registered ID raises, naming the closest."""
    import steel_envs

    registered = set(steel_envs.registry())
    for a in argv:
        if a in registered:
            return a
    if argv and not argv[0].startswith("-"):
        steel_envs.task_class(argv[0])  # raises gymnasium.error.UnregisteredEnv with "did you mean"
    return None


def _one_line(message: str) -> str:
    """tyro's error box (rich's box drawing, or ASCII where the output cannot take it) as one line: the first
    paragraph under the title, and tyro's "Perhaps you meant" options as a "did you mean"."""
    lines = []
    for raw in message.splitlines():
        line = raw.strip(" │╭╮╰╯─")
        lines.append("" if set(line) == {"-"} else line)  # an ASCII separator
    content = [i for i, line in enumerate(lines) if line][1:]  # after the title
    paragraph: list[str] = []
    for line in lines[content[0] :] if content else []:
        if not line:
            break
        paragraph.append(line)
    text = " ".join(paragraph) or " ".join(line for line in lines if line) or "invalid arguments"
    if "Perhaps you meant:" in lines:
        options = []
        for line in lines[lines.index("Perhaps you meant:") + 1 :]:
            if not line:
                break
            if line.startswith("--"):
                options.append(line.split()[0].rstrip(","))
        options = list(dict.fromkeys(options))
        if options:
            return f"{text}; did you mean {' or '.join(options[:3])}?"
    return f"{text} (see steel-envs train ENV_ID --help)"


def parse_args(argv: list[str]) -> TrainArgs:
    """:class:`TrainArgs` from the command line of ``steel-envs train``.

    Raises:
        gymnasium.error.Error: On an unknown ID.
        ValueError: On an unknown option or a value of the wrong type (one line, from tyro's message).
        SystemExit: After ``--help`` (code 0).
    """
    env_id = _find_env_id(argv)
    cls, default = _cli_class(env_id)
    if env_id is None:
        description = (
            "Train PPO (rsl-rl-lib) on a steel-envs task. The defaults shown are the general ones; "
            "steel-envs train ENV_ID --help shows a task's own and its --env.* options (config fields, solver options)."
        )
    else:
        description = (
            f"Train PPO (rsl-rl-lib) on {env_id}. The defaults shown are this task's (its train_defaults over the "
            "general ones). --env.<field> sets a task config field and --env.solver-options.<option> a solver "
            "option; the env validates them and the run saves them in train_args.json."
        )
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            kwargs = {} if default is None else {"default": default}
            parsed = tyro.cli(cls, args=argv, prog="steel-envs train", description=description, **kwargs)
    except SystemExit as e:
        if e.code in (0, None):
            raise
        raise ValueError(_one_line(err.getvalue())) from None
    values = {f.name: getattr(parsed, f.name) for f in dataclasses.fields(TrainArgs) if f.name != "env"}
    if not _given(argv, "max_iterations"):
        values["max_iterations"] = None  # the task's count, or none when --max-seconds is given
    if values["target_return"] is None:
        values["target_return"] = math.inf  # --target-return None: no target (TrainArgs' None is the task's)
    env: dict[str, Any] = {}
    if default is not None:
        env = _changed(parsed.env, default.env, argv, "env.")
        solver = _changed(parsed.env.solver_options, default.env.solver_options, argv, "env.solver_options.")
        if solver:
            env["solver_options"] = solver
    return TrainArgs(**values, env=env)


def main(argv: list[str] | None = None) -> int:
    """``steel-envs train``: parse the arguments (:func:`parse_args`) and train."""
    import warp as wp

    wp.config.log_level = wp.LOG_WARNING
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    r = train(args)
    print(
        f"{args.env_id}: {r.iterations} iterations, {r.env_steps} env-steps in {r.seconds:.1f} s "
        f"({r.env_steps / r.seconds:.0f} env-steps/s), mean return (last 100 episodes) {r.mean_return:.1f}"
        + (" - target reached" if r.target_reached else "")
    )
    world_size, rank, _ = _distributed()
    if rank == 0:
        print(f"checkpoint: {r.checkpoint}\nlogs: tensorboard --logdir {r.run_dir}")
    if world_size > 1:
        print(f"rank {rank}/{world_size}: actor checksum {r.actor_checksum:.9e}")
        torch.distributed.destroy_process_group()
    return 0


if __name__ == "__main__":  # torchrun -m steel_envs.training.train: the same one-line errors as steel-envs train
    import gymnasium as gym

    try:
        raise SystemExit(main())
    except (gym.error.Error, FileNotFoundError, ValueError) as e:
        print(f"steel-envs train: {e}", file=sys.stderr)
        raise SystemExit(2) from None
