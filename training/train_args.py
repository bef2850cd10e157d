"""The arguments of ``steel-envs train``: :class:`TrainArgs` (the Python API), how a run will go (:func:`plan`), and
the command line (:func:`parse_args`), which tyro parses from :class:`TrainCommand` with the task's typed settings
(its :class:`~steel_envs.train_config.PpoConfig`, config class and solver options) as defaults."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import math
from dataclasses import dataclass, field
from typing import Annotated, Any, Generic, Literal, TypeVar

import tyro

from steel_envs.sharding import check_worker_timeout
from steel_envs.train_config import PpoConfig

from .cli_args import diagnose, find_env_id, given

__all__ = ["EnvGroup", "TrainArgs", "TrainCommand", "TrainPlan", "parse_args", "plan"]


@dataclass(kw_only=True)
class TrainArgs:
    """Arguments of steel-envs train: the run's settings, PPO's (``ppo``) and the env's overrides (``env``)."""

    env_id: Annotated[str, tyro.conf.Positional, tyro.conf.arg(metavar="ENV_ID")]
    """Environment ID, e.g. steel_envs/CartpoleBalance-v0."""
    ppo: Annotated[PpoConfig | None, tyro.conf.OmitArgPrefixes] = None
    """PPO's settings; None: the task's train_config, without an iteration cap when max_seconds is given."""
    shards: int | Literal["auto"] = "auto"
    """CPU processes the worlds are stepped in (ShardedVectorEnv), beside this one, which runs the learner; 1: the
    env runs in this process; auto: one per core with the scene's break-even of worlds each (min_worlds_per_shard),
    1 under torchrun."""
    learner_threads: int | Literal["auto"] = "auto"
    """torch threads of this process, the learner's. auto: with --shards K >= 2, the cores the K workers leave (at
    least 1), so that torch's idle threads do not spin on the workers' cores; else torch's default. The weights do
    not depend on it."""
    worker_timeout: float = 600.0
    """With --shards K >= 2: the longest wait for a worker's answer [s] (its start included) before the run stops
    with an error naming the shard; a worker that dies stops it at once."""
    device: str = "cpu"
    """Warp and torch device of the env and the learner (cpu, cuda:0); with torchrun, cuda:<local rank>."""
    seed: int = 0
    """Seed of the env and of torch; rank r of torchrun uses seed + r."""
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
    env: Annotated[dict[str, Any], tyro.conf.Suppress] = field(default_factory=dict)
    """Task config fields and ``solver_options`` (a dict) passed to the env, which validates them."""


@dataclass
class TrainPlan:
    """How a run will go, resolved from :class:`TrainArgs` and the task's settings before anything is built."""

    ppo: PpoConfig
    """PPO's settings of the run (``max_iterations`` None: until ``max_seconds``)."""
    settings: dict[str, Any]
    """The run's other settings (every field of :class:`TrainArgs` but ``ppo`` and ``env``)."""
    stop: Literal["iterations", "time", "first"]
    """What ends the run (besides a reached target): the iteration count, the time, or the first of both."""
    asked: frozenset[str] = frozenset()
    """PPO settings set to other values than the task's (a resumed run applies them over the checkpoint's state)."""

    @property
    def max_iterations(self) -> int | None:
        return self.ppo.max_iterations


def plan(args: TrainArgs) -> TrainPlan:
    """Resolve PPO's settings of ``args`` and how the run will stop, without building anything.

    Raises:
        gymnasium.error.Error: On an unknown ID.
        ValueError: On a bad count, time or logger.
    """
    import steel_envs

    task_ppo = steel_envs.task_class(args.env_id).train_config
    ppo = args.ppo
    if ppo is None:
        ppo = task_ppo
        if args.max_seconds is not None:  # the time budget alone stops the run, not the task's iteration count
            ppo = dataclasses.replace(ppo, max_iterations=None)
    asked = frozenset(f.name for f in dataclasses.fields(ppo) if getattr(ppo, f.name) != getattr(task_ppo, f.name))
    if args.resume is not None and "init_noise_std" in asked:
        raise ValueError(
            f"init_noise_std: sets a new policy's std; a resumed run continues the checkpoint's (leave it at the "
            f"task's {task_ppo.init_noise_std})"
        )
    for name in ("shards", "learner_threads"):
        value = getattr(args, name)
        if value != "auto" and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ValueError(f"{name}: expected an int >= 1 or 'auto', got {value!r}")
    check_worker_timeout(args.worker_timeout)
    seconds = args.max_seconds
    if seconds is not None and not (isinstance(seconds, (int, float)) and seconds > 0 and math.isfinite(seconds)):
        raise ValueError(f"max_seconds: expected a finite number > 0 or None, got {seconds!r}")
    if args.logger not in ("tensorboard", "wandb"):
        raise ValueError(f"logger: expected 'tensorboard' or 'wandb', got {args.logger!r}")
    if not isinstance(args.env, dict):
        raise ValueError(f"env: expected a dict of task config fields and solver_options, got {args.env!r}")
    taken = sorted(set(args.env) & {"num_envs", "device", "seed", "num_shards"})
    if taken:
        raise ValueError(f"env: {taken} are set by the train arguments (num_envs, device, seed, shards)")
    if ppo.max_iterations is None and seconds is None:
        raise ValueError("max_iterations: None needs max_seconds (something must stop the run)")
    stop = "time" if ppo.max_iterations is None else "iterations" if seconds is None else "first"
    settings = {f.name: getattr(args, f.name) for f in dataclasses.fields(args) if f.name not in ("ppo", "env")}
    return TrainPlan(ppo=ppo, settings=settings, stop=stop, asked=asked)


_GENERAL = PpoConfig()
"""The general PPO settings, the command's defaults where a task's are not known yet."""
ConfigT = TypeVar("ConfigT")
SolverT = TypeVar("SolverT")


@dataclass(kw_only=True)
class EnvGroup(Generic[ConfigT, SolverT]):
    """The ``--env`` group: the task's config fields (``--env.<field>``) and its solver's options
    (``--env.solver-options.<option>``), with the task's defaults (the scene's options on the CPU)."""

    config: Annotated[ConfigT, tyro.conf.arg(name="")]
    solver_options: SolverT


@dataclass(kw_only=True)
class TrainCommand(TrainArgs, Generic[ConfigT, SolverT]):
    """:class:`TrainArgs` as the command line has it: PPO's settings always present, and the ``--env`` group
    typed by the task's config and solver options classes."""

    ppo: Annotated[PpoConfig, tyro.conf.OmitArgPrefixes] = _GENERAL
    """PPO's settings (the task's train_config)."""
    env_group: Annotated[EnvGroup[ConfigT, SolverT], tyro.conf.arg(name="env")]
    """Task config fields (validated by the env) and solver options; saved with the run in train_args.json."""

    def env_overrides(self, default: TrainCommand, argv: list[str]) -> dict[str, Any]:
        """The env keywords the command line set: config fields and solver options named in ``argv`` or different
        from ``default``'s."""

        def changed(parsed: Any, base: Any, prefix: str) -> dict[str, Any]:
            return {
                f.name: getattr(parsed, f.name)
                for f in dataclasses.fields(parsed)
                if given(argv, prefix + f.name) or getattr(parsed, f.name) != getattr(base, f.name)
            }

        env = changed(self.env_group.config, default.env_group.config, "env.")
        solver = changed(self.env_group.solver_options, default.env_group.solver_options, "env.solver_options.")
        return {**env, "solver_options": solver} if solver else env


def _command(env_id: str | None) -> tuple[type, TrainCommand | None]:
    """The typed command of ``env_id`` and its defaults (the task's); without an ID the general command."""
    import steel_envs
    from steel_envs.solver_options import SteelSolverOptions
    from steel_envs.spec import TaskConfig

    if env_id is None:
        return TrainCommand[TaskConfig, SteelSolverOptions], None
    task = steel_envs.task_class(env_id)
    config_cls, solver_cls = task.config_cls, type(task.solver_defaults)
    group = EnvGroup[config_cls, solver_cls](config=config_cls(), solver_options=task.solver_defaults)
    cls = TrainCommand[config_cls, solver_cls]
    return cls, cls(env_id=env_id, ppo=task.train_config, env_group=group)


def _refusal(exit_: SystemExit, argv: list[str], default: TrainCommand | None) -> str:
    """Why tyro refused ``argv``, in one line: an unknown option or a value its type cannot take
    (:func:`~steel_envs.training.cli_args.diagnose`), else a config's own check, whose ValueError tyro raised the
    exit from (the exception's context chain)."""
    message = diagnose(argv, default, "steel-envs train ENV_ID --help")
    if not message.startswith("invalid arguments"):
        return message
    cause = exit_.__context__
    while cause is not None and not isinstance(cause, ValueError):
        cause = cause.__context__
    return str(cause) if cause is not None else message


def parse_args(argv: list[str]) -> TrainArgs:
    """:class:`TrainArgs` from the command line of ``steel-envs train``: tyro parses :class:`TrainCommand` with the
    task's settings as its defaults.

    Raises:
        gymnasium.error.Error: On an unknown ID.
        ValueError: On an unknown option or a value of the wrong type (one line, naming the option).
        SystemExit: After ``--help`` (code 0).
    """
    cls, default = _command(find_env_id(argv))
    if default is None:
        description = (
            "Train PPO (rsl-rl-lib) on a steel-envs task. The defaults shown are the general ones; "
            "steel-envs train ENV_ID --help shows a task's own and its --env.* options (config fields, solver options)."
        )
    else:
        description = (
            f"Train PPO (rsl-rl-lib) on {default.env_id}. The defaults shown are this task's (its train_config). "
            "--env.<field> sets a task config field and --env.solver-options.<option> a solver option; the env "
            "validates them and the run saves them in train_args.json."
        )
    helping = any(a in ("-h", "--help") for a in argv)
    try:
        kwargs = {} if default is None else {"default": default}
        # tyro's own error boxes stay unprinted (some print whatever console_outputs says): one line is ours.
        with contextlib.nullcontext() if helping else contextlib.redirect_stderr(io.StringIO()):
            parsed = tyro.cli(
                cls, args=argv, prog="steel-envs train", description=description, console_outputs=helping, **kwargs
            )
    except SystemExit as e:
        if e.code in (0, None):
            raise
        raise ValueError(_refusal(e, argv, default)) from None
    values = {f.name: getattr(parsed, f.name) for f in dataclasses.fields(TrainArgs) if f.name != "env"}
    if given(argv, "max_seconds") and not given(argv, "max_iterations"):
        values["ppo"] = dataclasses.replace(values["ppo"], max_iterations=None)  # the time budget alone stops it
    return TrainArgs(**values, env=parsed.env_overrides(default, argv))
