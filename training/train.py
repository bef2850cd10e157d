"""``steel-envs train``: PPO from rsl-rl-lib on a steel-envs task, with TensorBoard (or W&B) logs and checkpoints.

The algorithm, the models and the logger are rsl_rl's (``OnPolicyRunner``, through
:func:`steel_envs.adapters.rsl_rl.make_runner`); this file builds the env and the adapter and stops the run. PPO's
settings are the task's typed :class:`~steel_envs.train_config.PpoConfig` (``train_config``), handed to tyro as the
command line's defaults with the task's config fields and solver options (``--env.<field>``,
``--env.solver-options.<option>``), so ``steel-envs train <ID> --help`` shows the task's own values.

**Shards.** ``--shards K`` steps the CPU worlds in K worker processes behind one env
(:class:`steel_envs.ShardedVectorEnv`) while this process runs the learner. Rollout (workers busy) and update
(learner busy) alternate, so the learner needs no core of its own; its torch threads must not spin on the workers'
cores meanwhile (``--learner-threads``).

**Multi-process training**: launch with ``torchrun --nproc-per-node K``; each rank owns an env on its own device
(``cuda:<local rank>`` on GPUs, the CPU otherwise) and seed ``seed + rank``, and rsl_rl all-reduces the
gradients (NCCL on GPUs, gloo on the CPU).
"""

from __future__ import annotations

import contextlib
import dataclasses
import glob
import io
import json
import os
import re
import signal
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from . import new_folder
from .run_control import Progress, stopped_by_signals
from .train_args import TrainArgs, TrainPlan, parse_args, plan

if TYPE_CHECKING:
    import torch

__all__ = ["StopTraining", "TrainResult", "main", "train"]


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
    stop_signal: int | None = None
    """The signal (SIGINT: Ctrl-C, SIGTERM) that stopped the run early, its checkpoint saved; None otherwise."""


class StopTraining(Exception):
    """Raised before an env step to end the run there: rsl_rl's loop has finished every earlier iteration (its
    update, log and periodic checkpoint), so the run's end is the same whichever limit ends it."""

    def __init__(self, reason: Literal["iterations", "time", "target", "signal"]) -> None:
        super().__init__(reason)
        self.reason = reason


def _check_resume(path: str, env_id: str) -> None:
    """Refuse, before any work, a ``--resume`` path that is missing, not a training checkpoint, or another task's."""
    import torch

    if not os.path.isfile(path):
        raise FileNotFoundError(f"resume: no such file {path!r}")
    try:
        keys = torch.load(path, weights_only=False, map_location="cpu").keys()
    except Exception as e:  # a file torch cannot read, or one that holds something else than a dict
        raise ValueError(f"resume: {path!r} is not a steel-envs train checkpoint ({type(e).__name__})") from None
    if "optimizer_state_dict" not in keys:
        raise ValueError(
            f"resume: {path!r} holds a policy only (no critic or optimizer state, as the shipped reference "
            "checkpoints); resume from a run's own checkpoint"
        )
    saved_args = os.path.join(os.path.dirname(os.path.abspath(path)), "train_args.json")
    if os.path.isfile(saved_args):
        with open(saved_args) as f:
            saved = json.load(f).get("env_id")
        if saved is not None and saved != env_id:
            raise ValueError(f"resume: {path!r} was trained on {saved}, not {env_id}")


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


def _threads(args: TrainArgs, p: TrainPlan, device: str, world_size: int, rank: int) -> tuple[int, int]:
    """(shards, learner threads) of the run, ``auto`` resolved (printing why on rank 0)."""
    import torch

    from steel_envs.sharding import available_cores, resolve_shards

    shards = args.shards
    if shards == "auto":
        wanted = 1 if world_size > 1 else "auto"  # torchrun: every rank is a process of its own already
        shards, reason = resolve_shards(args.env_id, p.ppo.num_envs, wanted, device=device, env_kwargs=args.env)
        if rank == 0:
            print(f"shards: {reason}")
    threads = args.learner_threads
    if threads == "auto":
        threads = max(1, available_cores() - shards) if shards > 1 else torch.get_num_threads()
    return shards, threads


def train(args: TrainArgs) -> TrainResult:
    """Train PPO on ``args.env_id``; return where the run went and what it reached.

    Raises:
        gymnasium.error.Error: On an unknown ID.
        FileNotFoundError: If the ``resume`` checkpoint is missing.
        ValueError: On invalid env arguments or config overrides (see :class:`steel_envs.SteelVectorEnv`), bad
            counts, a checkpoint that does not fit the models, or a W&B logger that cannot start.
    """
    import torch

    import steel_envs
    from steel_envs.adapters.rsl_rl import distributed_ranks
    from steel_envs.arguments import throughput_kwargs

    p = plan(args)
    if args.resume is not None:
        _check_resume(args.resume, args.env_id)
    world_size, rank, local_rank = distributed_ranks()
    device = args.device
    if world_size > 1 and device.startswith("cuda"):
        device = f"cuda:{local_rank}"
    if device.startswith("cuda"):
        # Before the env exists: Warp and torch then record their streams and events under this rank's device.
        torch.cuda.set_device(torch.device(device))
    seed = args.seed + rank
    torch.manual_seed(seed)
    p.settings["shards"], p.settings["learner_threads"] = _threads(args, p, device, world_size, rank)
    threads_before = torch.get_num_threads()
    torch.set_num_threads(p.settings["learner_threads"])  # restored at the end: train() may run in a larger program
    # Rank 0 writes the run (the other ranks' loggers are off): a new folder, never another run's.
    run_dir = new_folder(os.path.join(args.log_dir, args.env_id.replace("/", "_")), f"seed{args.seed}")
    try:
        with _wandb_environment(args.logger == "wandb" and rank == 0, run_dir):
            env = steel_envs.make_vec(
                args.env_id,
                num_envs=p.ppo.num_envs,
                device=device,
                seed=seed,
                num_shards=p.settings["shards"],
                worker_timeout=args.worker_timeout,
                **throughput_kwargs(device),
                **args.env,
            )
            try:
                return _Run(args, p, env, device, rank, run_dir).learn()
            finally:
                env.close()
    finally:
        torch.set_num_threads(threads_before)
        with contextlib.suppress(OSError):  # a run that failed before writing anything leaves no folder
            os.rmdir(run_dir)


class _Run:
    """One training run on a built env: rsl_rl's runner, the counts, the stop conditions and the final checkpoint."""

    def __init__(self, args: TrainArgs, p: TrainPlan, env, device: str, rank: int, run_dir: str) -> None:
        from steel_envs.adapters.rsl_rl import RslRlVecEnv

        self.args, self.plan, self.env, self.device, self.rank, self.run_dir = args, p, env, device, rank, run_dir
        self.start = time.perf_counter()
        self.steps_per_iteration = env.num_envs * p.ppo.num_steps_per_env
        disable = not args.progress or rank != 0
        self.bar = Progress(p, self.steps_per_iteration, self.start, args.env_id, disable=disable)
        self.curve: list[tuple[int, float, float]] = []
        self.env_steps = 0
        self.stop_signal: int | None = None
        # Episode statistics are read from the device once per rollout, not every step.
        self.adapter = RslRlVecEnv(
            env, on_episodes=self._on_episodes, stats_interval=p.ppo.num_steps_per_env, on_step=self._before_step
        )

    def _on_episodes(self, returns: torch.Tensor, lengths: torch.Tensor) -> None:
        recent = self.adapter.recent_returns
        mean = sum(recent) / len(recent)
        self.curve.append((self.env_steps, time.perf_counter() - self.start, mean))
        self.bar.set_postfix(mean_return=f"{mean:.1f}")
        target = self.plan.ppo.target_return
        if target is not None and len(recent) == recent.maxlen and mean >= target:
            self.target_reached = True

    def _stop(self, signum: int) -> None:
        self.stop_signal = signum

    def _before_step(self) -> None:
        """Count the step to come and stop the run before it when a limit is reached or a signal came."""
        if self.stop_signal is not None:
            raise StopTraining("signal")
        if getattr(self, "target_reached", False):
            raise StopTraining("target")
        cap = self.plan.max_iterations
        if cap is not None and self.env_steps >= cap * self.steps_per_iteration:
            raise StopTraining("iterations")
        seconds = self.args.max_seconds
        if seconds is not None and time.perf_counter() - self.start > seconds:
            raise StopTraining("time")
        self.env_steps += self.env.num_envs
        self.bar.update(self.env_steps, self.env.num_envs)

    def _write_args(self) -> None:
        os.makedirs(self.run_dir, exist_ok=True)
        # Written first, so that the run's periodic checkpoints can be played while it still runs.
        saved = {
            "env_id": self.args.env_id,
            "env": self.args.env,
            "hyper_parameters": {**dataclasses.asdict(self.plan.ppo), **self.plan.settings},
        }
        with open(os.path.join(self.run_dir, "train_args.json"), "w") as f:
            json.dump(saved, f, indent=2, default=lambda v: list(v) if isinstance(v, (tuple, set)) else str(v))

    def learn(self) -> TrainResult:
        from steel_envs.adapters.rsl_rl import make_runner, runner_config

        args, p, rank = self.args, self.plan, self.rank
        logger = "tensorboard"
        if args.logger == "wandb":
            logger = {"class_name": "rsl_rl.utils.wandb_log_writer:WandbLogWriter", "project_name": args.wandb_project}
        # rsl_rl prints its models and a table per iteration on stdout; the logger gets the same figures.
        with contextlib.redirect_stdout(io.StringIO()) if args.quiet else contextlib.nullcontext():
            cfg = runner_config(p.ppo, self.device, logger)
            runner = make_runner(self.adapter, cfg, self.run_dir if rank == 0 else None, self.device)
            done_before = self._resume(runner) if args.resume is not None else 0
            if rank == 0:  # after the resume: the arguments record what runs
                self._write_args()
            # Every limit stops the run by StopTraining before a step, so the writer is still open below.
            with contextlib.suppress(StopTraining), stopped_by_signals(self._stop), self._on_lost_worker(runner):
                runner.learn(num_learning_iterations=10**9, init_at_random_ep_len=p.ppo.init_at_random_ep_len)
        seconds = time.perf_counter() - self.start
        self.bar.close()
        iterations = done_before + self.env_steps // self.steps_per_iteration
        checkpoint = os.path.join(self.run_dir, "model_final.pt")
        if rank == 0:
            runner.current_learning_iteration = max(iterations - 1, 0)  # rsl_rl's "iter": the last iteration's index
            # The window of the last 100 returns goes with the checkpoint: a resumed run's curve then continues from
            # the same mean instead of restarting from its first few (short) episodes.
            runner.save(
                checkpoint, infos={"iterations": iterations, "recent_returns": list(self.adapter.recent_returns)}
            )
            writer = runner.logger.writer
            if writer is not None:
                writer.add_scalar("Perf/env_steps_per_s", self.env_steps / seconds, 0)
                with contextlib.redirect_stdout(io.StringIO()) if args.quiet else contextlib.nullcontext():
                    runner.logger.stop_logging_writer()
                writer.flush()
        recent = self.adapter.recent_returns
        return TrainResult(
            run_dir=self.run_dir,
            checkpoint=checkpoint,
            iterations=iterations,
            env_steps=self.env_steps,
            seconds=seconds,
            mean_return=sum(recent) / len(recent) if recent else float("nan"),
            target_reached=getattr(self, "target_reached", False),
            curve=self.curve,
            actor_checksum=float(sum(w.detach().double().sum() for w in runner.alg.get_policy().parameters())),
            env_config=dataclasses.asdict(self.env.config),
            solver_options=dict(self.env.solver_options.as_kwargs()),
            stop_signal=self.stop_signal,
        )

    @contextlib.contextmanager
    def _on_lost_worker(self, runner) -> Iterator[None]:
        """On a :class:`~steel_envs.ShardError` (a shard worker died or hung), keep the logged figures (the writer is
        flushed) and raise it again naming the last checkpoint to ``--resume`` from: the steps since it are lost."""
        from steel_envs.sharding import ShardError

        try:
            yield
        except ShardError as e:
            self.bar.close()
            writer = runner.logger.writer
            if writer is not None:
                writer.flush()
            numbered = {}  # iteration -> rsl_rl's periodic checkpoint (not model_final.pt)
            for path in glob.glob(os.path.join(self.run_dir, "model_*.pt")):
                if match := re.fullmatch(r"model_(\d+)\.pt", os.path.basename(path)):
                    numbered[int(match.group(1))] = path
            if not numbered:
                raise ShardError(f"{e}; no checkpoint was saved yet") from None
            last = numbered[max(numbered)]
            raise ShardError(f"{e}; the run continues from its last checkpoint with --resume {last}") from None

    def _resume(self, runner) -> int:
        """Load the checkpoint into ``runner``; return the iterations it had done."""
        try:
            infos = runner.load(self.args.resume, map_location=self.device)
        except (RuntimeError, KeyError) as e:
            reason = " ".join(line.strip() for line in str(e).splitlines()[:2]) or type(e).__name__
            raise ValueError(f"resume: {self.args.resume!r} does not fit this run's models ({reason})") from None
        # rsl_rl takes the learning rate from the checkpoint's optimizer: a rate asked for replaces it, else the
        # run records the rate it continues with.
        if "learning_rate" in self.plan.asked:
            for group in runner.alg.optimizer.param_groups:
                group["lr"] = self.plan.ppo.learning_rate
            runner.alg.learning_rate = self.plan.ppo.learning_rate
        else:
            self.plan.ppo = dataclasses.replace(self.plan.ppo, learning_rate=runner.alg.learning_rate)
        # rsl_rl's own checkpoints hold the index of their last iteration; ours also the count and the returns of
        # the last 100 episodes.
        done = (infos or {}).get("iterations", runner.current_learning_iteration + 1)
        self.adapter.recent_returns.extend((infos or {}).get("recent_returns", ()))
        runner.current_learning_iteration = done  # the next iteration's index
        return done


def main(argv: list[str] | None = None) -> int:
    """``steel-envs train``: parse the arguments (:func:`parse_args`) and train."""
    import warp as wp

    wp.config.log_level = wp.LOG_WARNING
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)  # before the heavy imports: --help and a refusal answer at once

    import torch

    from steel_envs.adapters.rsl_rl import distributed_ranks

    r = train(args)
    world_size, rank, _ = distributed_ranks()
    if r.stop_signal is not None:
        name = signal.Signals(r.stop_signal).name
        print(f"{args.env_id}: stopped by {name} after {r.iterations} iterations; checkpoint: {r.checkpoint}")
    else:
        print(
            f"{args.env_id}: {r.iterations} iterations, {r.env_steps} env-steps in {r.seconds:.1f} s "
            f"({r.env_steps / r.seconds:.0f} env-steps/s), mean return (last 100 episodes) {r.mean_return:.1f}"
            + (" - target reached" if r.target_reached else "")
        )
        if rank == 0:
            print(f"checkpoint: {r.checkpoint}\nlogs: tensorboard --logdir {r.run_dir}")
    if world_size > 1:
        print(f"rank {rank}/{world_size}: actor checksum {r.actor_checksum:.9e}")
        torch.distributed.destroy_process_group()
    return 0 if r.stop_signal is None else 128 + r.stop_signal


if __name__ == "__main__":  # torchrun -m steel_envs.training.train: the same one-line errors as steel-envs train
    import gymnasium as gym

    from steel_envs.cli_common import stopped_by_ctrl_c
    from steel_envs.sharding import ShardError

    try:
        raise SystemExit(main())
    except (gym.error.Error, FileNotFoundError, ValueError) as e:
        print(f"steel-envs train: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    except ShardError as e:  # a shard worker died or hung
        print(f"steel-envs train: {e}", file=sys.stderr)
        raise SystemExit(1) from None
    except KeyboardInterrupt:  # before or after the training loop, which handles Ctrl-C itself
        raise SystemExit(stopped_by_ctrl_c("train")) from None
