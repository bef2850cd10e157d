"""The hooks a scene and a task implement, and the class attributes they declare: the interface between
:class:`steel_envs.core.NewtonVectorEnv` and the code under ``envs/`` and ``tasks/``.

A scene (``envs/``) subclasses :class:`steel_envs.SteelVectorEnv` or :class:`steel_envs.VBDVectorEnv` and sets the
:class:`SceneHooks`; a task (``tasks/``) subclasses a scene and sets the :class:`TaskHooks`. The step hooks only
launch kernels and never read device data on the host: they are recorded into the step graph once and replayed.

What scenes and tasks use (the task surface): ``model``, ``solver``, ``state_0``, ``control``, ``contacts``,
``config``, ``num_envs``, ``wp_device``, :meth:`launch_per_world`, ``actions`` (num_envs, action_dim) float32
(this step's clipped actions), ``rng_state`` (num_envs,) uint32 (the per-world stream of resets: goals and
spawns drawn from it start exactly as in a fresh env), ``episode_steps`` (num_envs,) int32 (control steps of
each world's episode) and ``task_info``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import newton
import numpy as np
import torch
import warp as wp

from .spec import (
    EpisodeMetric,
    InitialStateSpec,
    ObservationBlock,
    RewardTerm,
    TaskConfig,
    TerminationTerm,
    observation_layout,
)
from .train_config import PpoConfig, SacConfig

if TYPE_CHECKING:
    from .backends import SolverBackend
    from .benchmark import BenchmarkSpec
    from .deployment import Actuation, CommandComponent

__all__ = ["SceneHooks", "TaskHooks"]


class SceneHooks:
    """What a scene declares (model, physics step, actuation, solver options, camera) and its hooks."""

    backend: SolverBackend
    num_envs: int
    wp_device: wp.context.Device

    physics_dt: ClassVar[float]
    """Physics time step [s]."""
    decimation: ClassVar[int]
    """Physics steps per control step."""
    enable_collisions: ClassVar[bool] = True
    """Run a CollisionPipeline before each physics step; False passes no contacts to the solver."""
    add_ground_plane: ClassVar[bool] = False
    """Add a ground plane."""
    ground_per_world: ClassVar[bool] = True
    """One ground plane in each world (a world's friction scale then scales its ground too: SolverSteel combines a
    contact pair's friction coefficients by their mean, so with one shared, unscaled ground a world's factor s gave
    an effective factor (1 + s) / 2 at equal coefficients). False: one plane shared by all worlds."""
    collision_defaults: ClassVar[Mapping[str, Any]] = {"deterministic": True}
    """The scene's ``newton.CollisionPipeline`` keywords before ``collision_options`` overrides. Deterministic contact
    order (contacts sorted by a key of their shapes, not by the order threads found them) keeps a world's trajectory
    independent of the number of worlds and of its index (``tests/test_world_count.py``)."""
    rigid_contacts_per_world: ClassVar[int | None] = None
    """Contact capacity per world: the pipeline's ``rigid_contact_max`` is this times the worlds unless
    ``collision_options`` gives one; None: Newton's estimate from the shape pairs. Size it from the contact watermark
    (``steel-envs doctor``'s ``contacts`` line) with about 2x headroom: the buffer is shared, an overflow ends every
    world (``constraint_overflow``), and the deterministic contact order sorts every slot each step, so an oversized
    capacity costs time in every step (on AntRun Newton's estimate is 285 per world against a watermark of 22)."""
    action_dim: ClassVar[int]
    """Action size per world."""
    solver_defaults: ClassVar[Any]
    """The scene's solver options before ``solver_options`` overrides."""
    solver_defaults_cuda: ClassVar[Any] = None
    """The scene's options on CUDA devices, where they differ (e.g. CUDA-only sweeps); None: ``solver_defaults``."""
    min_worlds_per_shard: ClassVar[int] = 64
    """Fewest worlds per CPU process at which splitting the worlds over processes pays (``--shards auto``,
    :mod:`steel_envs.sharding`): below it a step's round trip through the pipes and shared memory costs more than
    the extra process saves."""
    camera_tracked_body: ClassVar[int] = -1
    """Body (index within a world) the render camera follows on the ground plane; -1: a fixed camera."""
    camera_eye: ClassVar[tuple[float, float, float]] = (0.0, -4.0, 1.5)
    """Render camera position relative to the tracked body's ground point (or the origin) [m]."""
    camera_target: ClassVar[tuple[float, float, float]] = (0.0, 0.0, 0.5)
    """Point the render camera looks at, relative to the same base [m]."""

    @property
    def control_dt(self) -> float:
        """Time of one control step, ``physics_dt * decimation`` [s]."""
        return self.physics_dt * self.decimation

    def launch_per_world(self, kernel: wp.Kernel, inputs: list[Any], outputs: list[Any] | None = None) -> None:
        """Launch ``kernel`` with one thread per world (``wp.tid()`` is the world index) on the env device.

        The helper scenes and tasks use for their term kernels; arguments as ``wp.launch``.
        """
        wp.launch(kernel, self.num_envs, inputs=inputs, outputs=outputs or [], device=self.wp_device)

    # ------------------------------------------------------------------ the Gymnasium API

    def build_world(self, builder: newton.ModelBuilder) -> None:
        """Add one world's bodies, joints and shapes to ``builder`` (at construction)."""
        raise NotImplementedError

    def build_shared(self, builder: newton.ModelBuilder) -> None:
        """Add the static shapes every world shares (body -1, e.g. a terrain) to the replicated ``builder`` (at
        construction); by default none."""

    def initial_state(self) -> InitialStateSpec:
        """Initial joint state of one world and its reset noise (at construction)."""
        raise NotImplementedError

    def _make_solver(self) -> newton.solvers.SolverBase:
        """The solver (at construction; by default the backend's, from ``solver_options``)."""
        return self.backend.make_solver()

    def _setup_scene(self) -> None:
        """Allocate the scene's device arrays (at construction, before any step is captured); the model exists."""

    def _apply_actions(self) -> None:
        """Write ``self.actions`` (clipped, shape (num_envs, action_dim)) to ``self.control``."""
        raise NotImplementedError

    def _before_substep(self, state: newton.State) -> None:
        """Launches before each physics step, on its input state (e.g. kinematic particles)."""

    def _after_substep(self, state: newton.State) -> None:
        """Launches after each physics step, on its output state (e.g. a joint-limit projection)."""

    def _reset_physics_state(self, world_mask: wp.array) -> None:
        """Write the initial state of the selected worlds and clear their solver history (by default the backend's:
        the initial joint states and the solver's reset)."""
        self.backend.reset_physics_state(world_mask)

    def deployment_actuation(self) -> Actuation | None:
        """How the actions drive the robot's joints, for an exported policy's contract
        (:class:`steel_envs.deployment.Actuation`); None (the default): the actions are not joint position
        targets of PD drives."""
        return None


class TaskHooks:
    """What a task declares (config, term functions, time limit, observables) and its state-update hooks.

    A term is one declaration with its function (:class:`steel_envs.RewardTerm`, :class:`steel_envs.TerminationTerm`,
    :class:`steel_envs.ObservationBlock`, :class:`steel_envs.EpisodeMetric`); the functions read ``term_state`` and
    return their values, the core assembles one kernel per group (:class:`steel_envs.components.TermGroups`). State
    the terms read but the physics does not give (commands, air time, last actions) is updated by the hooks at
    their points of the step: :meth:`_pre_physics`, :meth:`_post_physics`, :meth:`_post_rewards`, :meth:`_reset_task`.
    """

    config: TaskConfig
    stats: Any
    term_state: Any = None
    """The ``@wp.struct`` instance the term functions read, set by :meth:`_setup_task`."""

    config_cls: ClassVar[type[TaskConfig]] = TaskConfig
    """The task's config dataclass; its fields are keywords of the env."""
    rewards: ClassVar[tuple[RewardTerm, ...]] = ()
    """The task's reward terms, in summation order (see :class:`steel_envs.RewardTerm`)."""
    reward_terms: ClassVar[tuple[str, ...]] = ()
    """Names of the reward terms (derived from ``rewards``); ``info["reward_<name>"]`` and reward == their sum."""
    terminations: ClassVar[tuple[TerminationTerm, ...]] = ()
    """The task's termination terms (see :class:`steel_envs.TerminationTerm`). A task without any ends episodes only
    by the core's causes."""
    observations: ClassVar[tuple[ObservationBlock, ...]] = ()
    """The observation vector's blocks, in order (see :class:`steel_envs.ObservationBlock`), for a task whose layout
    does not depend on its config."""
    privileged_observations: ClassVar[tuple[ObservationBlock, ...]] = ()
    """Blocks only the critic sees: the ``critic`` observation group is the policy's state observations without
    noise, then these (``env.observation_groups``)."""
    reset_options: ClassVar[tuple[str, ...]] = ()
    """Per-world options of ``reset`` besides ``reset_mask``: ``reset(options={name: values})`` with ``values`` of
    shape (num_envs,) (:meth:`check_reset_option`, :meth:`_set_reset_options`)."""
    metrics: ClassVar[tuple[EpisodeMetric, ...]] = ()
    """The task's episode metrics (see :class:`steel_envs.EpisodeMetric`), computed each step after the rewards and
    reported per ended episode in ``info["episode"]``."""
    default_max_episode_steps: ClassVar[int] = 1000
    """Time limit [control steps] when the user gives none (``max_episode_steps``); also Gymnasium's ``TimeLimit``."""
    requested_observables: ClassVar[tuple[str, ...]] = ()
    """Steel observables (``"contact_f"``, ``"body_parent_f"``) the task reads after each step."""
    train_config: ClassVar[PpoConfig] = PpoConfig()
    """PPO settings of ``steel-envs train`` for this task (the learner is not imported here)."""
    sac_config: ClassVar[SacConfig] = SacConfig()
    """SAC settings of ``steel-envs compare --algo sac`` for this task (stable-baselines3, not imported here)."""
    benchmark: ClassVar[BenchmarkSpec | None] = None
    """The task's suite, score and normalization anchors for ``steel-envs compare``
    (:class:`steel_envs.benchmark.BenchmarkSpec`); None: not part of a comparison."""

    @property
    def reward_weights(self) -> dict[str, float]:
        """The weight of each reward term by name, as its config field holds it (1.0 for a term without one); a cost
        term's weighted value is ``-weight * cost``."""
        return {t.name: float(getattr(self.config, t.weight)) if t.weight else 1.0 for t in self.rewards}

    def observation_blocks(self) -> tuple[ObservationBlock, ...]:
        """The observation vector's named blocks, in order, at the offsets :attr:`observation_layout` gives. By
        default ``observations``; a task whose blocks depend on its config overrides this.

        Raises:
            NotImplementedError: If the task declares neither.
        """
        if not self.observations:
            raise NotImplementedError(f"{type(self).__name__}: declare observations or override observation_blocks")
        return self.observations

    def privileged_observation_blocks(self) -> tuple[ObservationBlock, ...]:
        """The critic's extra blocks, in order (by default ``privileged_observations``)."""
        return self.privileged_observations

    @property
    def observation_dim(self) -> int:
        """Observation size per world: the sum of the blocks' widths (size times history)."""
        return sum(block.width for block in self.observation_blocks())

    @property
    def observation_layout(self) -> dict[str, slice]:
        """Each observation block's entries by name, e.g. ``obs[:, env.observation_layout["joint_pos"]]``."""
        return observation_layout(self.observation_blocks())

    def deployment_command_names(self) -> tuple[str, ...]:
        """mjlab's names of the command terms the policy follows (an exported policy's contract); () by default."""
        return ()

    def deployment_commands(self) -> tuple[CommandComponent, ...]:
        """The command's components in their observation order, with their training ranges (an exported policy's
        contract, :class:`steel_envs.deployment.CommandComponent`); () by default."""
        return ()

    def goal_positions(self) -> np.ndarray | None:
        """World positions [m] of the task's goals, (num_envs, K, 3) float, drawn as markers by ``render``,
        ``record`` and ``view`` (never into pixel observations); None: a task without point goals. Reads the device
        (host work: for rendering only)."""
        return None

    def _setup_task(self) -> None:
        """Allocate the task's buffers and set ``self.term_state``, the ``@wp.struct`` instance its term functions
        read (at construction, before any step is captured; the model, solver and core buffers exist). The struct
        holds device arrays the env keeps (its state, control, actions, the task's buffers) and parameters from the
        config, so it is built once."""

    def _pre_physics(self) -> None:
        """State updates before the physics of a step (e.g. command resampling, positions the step's displacement
        starts from)."""

    def _post_physics(self) -> None:
        """State updates after the physics of a step, before the terms read the state (e.g. feet contact and air
        time, a success flag)."""

    def _post_rewards(self) -> None:
        """State updates after the rewards and metrics of a step (e.g. the last actions the next action rate
        compares against)."""

    @classmethod
    def check_reset_option(cls, name: str, values: torch.Tensor) -> None:
        """Refuse a bad value of the per-world reset option ``name`` (one of ``reset_options``; ``values`` a
        (num_envs,) tensor), before anything is reset.

        Raises:
            ValueError: Naming ``options[name]`` and what was expected.
        """

    def _set_reset_options(self, values: dict[str, torch.Tensor], mask: torch.Tensor | None) -> None:
        """Take the checked per-world reset options of an explicit ``reset`` (name -> (num_envs,) tensor; empty:
        none) for the worlds it resets: those of ``mask`` ((num_envs,) bool; None: all); the others keep none."""

    def _reset_task(self, world_mask: wp.array) -> None:
        """Reset the task's per-world buffers of the selected worlds."""
