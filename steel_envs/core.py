"""The solver-neutral core env: N worlds of one Newton model as a Gymnasium vector env, zero-copy to torch.

A concrete environment is a scene (``steel_envs.envs``: model, solver options, actuation, initial state) plus a task
(``steel_envs.tasks``: observations, rewards, terminations, typed config). The core knows neither and names no
solver: it owns the contract (``docs/guides/contract.md``): spaces, the order of a step, autoreset, the torch views and
the one captured graph of a step. The solver's part is a backend (:mod:`steel_envs.backends`); the device work of
the contract is done by small components (:mod:`steel_envs.components`); what a task declares and the argument
checks are in :mod:`steel_envs.spec` and :mod:`steel_envs.arguments`.

One call of :meth:`step`, in order (dones before rewards, as Isaac Lab's ``DirectRLEnv``); everything after the
validation runs on the device without host synchronization and is captured once as one Warp graph (a CUDA graph
on GPUs, Warp's CPU graph on the CPU), replayed every step:

1. validate the actions, clip them to the action space, write them to the control (scene);
2. ``decimation`` × (``CollisionPipeline.collide`` → ``solver.step`` → swap states);
3. NEXT_STEP only: reset the worlds that ended on the previous step;
4. derived buffers (task), then terminations: the task's terms, then the core's ``constraint_overflow`` (the
   backend's capacity-loss flags, on the device), non-finite state, penetration and the time limit;
5. rewards per term on the pre-reset state, their weighted sum, episode statistics;
6. SAME_STEP only: observations into ``info["final_obs"]``, then reset of the ended worlds;
7. observations.

Returned tensors and the tensors in ``info`` are views of the env's Warp buffers on the env device: the same
storage every step, overwritten by the next call. ``.clone()`` what you keep.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import gymnasium as gym
import newton
import numpy as np
import torch
import warp as wp
from gymnasium.vector import AutoresetMode

from . import kernels
from .arguments import (
    check_actions,
    check_collision_options,
    check_env_arguments,
    check_reset_options,
    check_seed,
    device_seed,
)
from .backends import SolverBackend
from .components.actions import ActionPipeline
from .components.contact_wrenches import ContactWrenches
from .components.episodes import EpisodeStatistics
from .components.initial_states import InitialStates
from .components.observations import ObservationPipeline
from .components.penetration import PenetrationProbe
from .components.randomization import Randomizer
from .components.step_graph import StepGraph
from .components.terms import TermGroups
from .hooks import SceneHooks, TaskHooks
from .spec import (
    check_task_declarations,
    make_task_config,
)
from .torch_views import to_torch

__all__ = ["NewtonVectorEnv"]

_ENV_KEYWORDS = (
    "num_envs, device, seed, autoreset_mode, max_episode_steps, solver_options, collision_options, render_mode, "
    "render_size, render_num_worlds, obs_mode, nonfinite_actions, graph_capture, world_offset"
)
_CORE_FLAGS = ("constraint_overflow", "nonfinite_state", "nonfinite_action", "penetration")


class NewtonVectorEnv(SceneHooks, TaskHooks, gym.vector.VectorEnv):
    """N worlds of one Newton model, as a Gymnasium vector env with torch tensors; the solver comes from
    ``backend_cls`` (:class:`steel_envs.SteelVectorEnv`: SolverSteel, :class:`steel_envs.VBDVectorEnv`: SolverVBD).

    A scene implements :class:`~steel_envs.hooks.SceneHooks`, a task :class:`~steel_envs.hooks.TaskHooks`;
    :meth:`step` runs the step order of this module's docstring as one captured graph.

    Args:
        num_envs: Number of worlds N, >= 1.
        device: Warp device (``"cpu"``, ``"cuda:0"``); None: Warp's preferred device.
        seed: Seed of the first reset; None: drawn from entropy.
        autoreset_mode: ``AutoresetMode`` or its value string ("SameStep", "NextStep", "Disabled").
        max_episode_steps: Time limit [control steps]; None: the task's default.
        solver_options: Solver keywords overriding the scene's values (:class:`steel_envs.SteelSolverOptions`,
            :class:`steel_envs.VBDSolverOptions`).
        collision_options: Keywords of ``newton.CollisionPipeline`` (e.g. ``rigid_contact_max``, the contact capacity
            of all worlds together; ``broad_phase``) over the scene's ``collision_defaults``; only for scenes that
            collide.
        render_mode: None or ``"rgb_array"`` (:meth:`render` returns frames).
        render_size: (width, height) of one world's frame [px].
        render_num_worlds: Worlds tiled into one rendered frame (the first ones).
        obs_mode: ``"state"`` (the task's vector), ``"rgb"`` ((H, W, 3) uint8) or ``"depth"`` ((H, W) float32 ray
            distance [m], -1: no surface) per world, views of Newton's ``SensorCamera`` images at ``render_size``.
        nonfinite_actions: ``"raise"``: a NaN or infinite action raises ValueError (a host sync per step on CUDA).
            ``"end_episode"``: its entries are replaced by 0 and the world's episode ends as a truncation, reported
            in ``info["nonfinite_action"]``; no host sync.
        graph_capture: True: capture the device part of a step once as a Warp graph, replayed every step;
            ``"physics"``: only the substeps; False: launch eagerly (for debugging).
        world_offset: Index of this env's first world in a population split over processes (``ShardedVectorEnv``):
            world ``w`` draws the random streams of world ``world_offset + w``.
        **config: Fields of the task's config (``config_cls``), and ``reward_weights={term name: weight}``.

    Raises:
        TypeError: On a config field the task does not have, or a wrong argument type.
        ValueError: On an out-of-range argument, an unknown solver option, or a feature the solver does not support
            (the backend's declaration); the message names it.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "autoreset_mode": AutoresetMode.SAME_STEP}

    backend_cls: ClassVar[type[SolverBackend]]
    """The solver backend (:mod:`steel_envs.backends`)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Check the task's declarations; TypeError as :func:`steel_envs.spec.check_task_declarations`."""
        super().__init_subclass__(**kwargs)
        check_task_declarations(cls)

    def __init__(
        self,
        num_envs: int = 1,
        *,
        device: str | None = None,
        seed: int | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP,
        max_episode_steps: int | None = None,
        solver_options: Mapping[str, Any] | None = None,
        collision_options: Mapping[str, Any] | None = None,
        render_mode: str | None = None,
        render_size: tuple[int, int] = (320, 240),
        render_num_worlds: int = 1,
        obs_mode: str = "state",
        nonfinite_actions: str = "raise",
        world_offset: int = 0,
        graph_capture: bool | str = True,
        **config: Any,
    ) -> None:
        if max_episode_steps is None:
            max_episode_steps = self.default_max_episode_steps
        self.autoreset_mode = check_env_arguments(
            num_envs=num_envs,
            max_episode_steps=max_episode_steps,
            obs_mode=obs_mode,
            render_mode=render_mode,
            render_size=render_size,
            render_num_worlds=render_num_worlds,
            autoreset_mode=autoreset_mode,
            seed=seed,
            nonfinite_actions=nonfinite_actions,
            graph_capture=graph_capture,
            world_offset=world_offset,
        )
        self.nonfinite_actions = nonfinite_actions
        self.world_offset = int(world_offset)
        self.config = make_task_config(type(self), config, _ENV_KEYWORDS)
        self.num_envs = self.world_count = int(num_envs)
        self.max_episode_steps = int(max_episode_steps)
        self.obs_mode = obs_mode
        self._set_rendering(render_mode, render_size, render_num_worlds)
        self._set_device(device, solver_options, collision_options)
        self.closed = False
        self.task_info: dict[str, torch.Tensor] = {}
        """Task entries of ``info`` (e.g. ``success``): views set by ``_setup_task`` with ``torch_views.to_torch``."""
        with wp.ScopedDevice(self.wp_device):
            self._build_simulation()
            self._make_components()
            self._setup_scene()
            self._setup_task()
            self.terms = TermGroups(self)
            self.obs_pipeline = ObservationPipeline(self, obs_mode)
        self._make_views()
        self._seeded = False
        # Warp and torch queue work on different CUDA streams; the graph component orders them at the boundaries.
        self.graph = StepGraph(self)
        self.reset(seed=seed)
        self.graph.capture(graph_capture, lambda: self._device_step(self.action_pipeline.actions_in), self._simulate)

    def _set_rendering(self, render_mode: str | None, render_size: tuple[int, int], render_num_worlds: int) -> None:
        self.render_mode = render_mode
        self.render_size = (int(render_size[0]), int(render_size[1]))
        self.render_num_worlds = int(render_num_worlds)
        self._renderer = None
        self.metadata = {
            **type(self).metadata,
            "autoreset_mode": self.autoreset_mode,
            "render_fps": round(1.0 / self.control_dt),  # one frame per control step
        }

    def _set_device(
        self, device: str | None, solver_options: Mapping[str, Any] | None, collision_options: Mapping[str, Any] | None
    ) -> None:
        """The device, the solver and collision options, and the backend (which refuses unsupported features)."""
        try:
            self.wp_device = wp.get_device(device)
        except Exception as e:
            raise ValueError(f"device: expected None, 'cpu' or an available 'cuda:N', got {device!r} ({e})") from None
        self.device = str(self.wp_device)
        self.torch_device = torch.device(wp.device_to_torch(self.wp_device))
        defaults = self.solver_defaults
        if self.wp_device.is_cuda and self.solver_defaults_cuda is not None:
            defaults = self.solver_defaults_cuda
        self.solver_options = defaults.replace(solver_options)
        self.collision_options = check_collision_options(
            collision_options, self.enable_collisions, self.collision_defaults, type(self).__name__
        )
        self.backend = self.backend_cls(self)
        self.backend.check_supported(self.config)

    @property
    def graph_captured(self) -> bool:
        """Whether :meth:`step` replays one captured graph of its whole device part (``graph_capture=True``)."""
        return self.graph.step_graph is not None

    # ------------------------------------------------------------------ construction

    def _build_simulation(self) -> None:
        """Build the model (``num_envs`` replicas of ``build_world``), then the collision pipeline, the solver and
        the states, through the backend."""
        backend = self.backend
        self.model = model = backend.build_model()
        if model.joint_coord_count % self.num_envs or model.joint_dof_count % self.num_envs:
            raise RuntimeError(f"{type(self).__name__}: scenes must not add global joints")
        self.coords_per_world = model.joint_coord_count // self.num_envs
        self.dofs_per_world = model.joint_dof_count // self.num_envs
        self.bodies_per_world = model.body_count // self.num_envs
        # Pipeline and contacts before the solver: the construction order SolverVBD's page recommends.
        self.collision_pipeline = self.contacts = None
        if self.enable_collisions:
            self.collision_pipeline = newton.CollisionPipeline(model, **backend.collision_options())
            self.contacts = self.collision_pipeline.contacts()
        self.solver = self._make_solver()
        self._overflow_flags = backend.make_overflow_flags()
        self.observables = None
        if self.requested_observables:
            self.observables = self.solver.observables(self.requested_observables, contacts=self.contacts)
        self.state_0, self.state_1, self.control = model.state(), model.state(), model.control()
        self.initial_states = InitialStates(self, self.initial_state())

    def _make_components(self) -> None:
        """The device components and the core's own buffers (masks, random streams, contact wrenches)."""
        n = self.num_envs
        self.action_pipeline = ActionPipeline(self, int(self.config.action_delay_steps))
        self.actions = self.action_pipeline.actions
        self.stats = EpisodeStatistics(self)
        self.episode_steps = self.stats.episode_length
        self.penetration = PenetrationProbe(self)
        self.rng_state = wp.zeros(n, dtype=wp.uint32)
        self.noise_rng_state = wp.zeros(n, dtype=wp.uint32)
        self.randomizer = Randomizer(self)
        # World masks in the solver's layout, (world_count + 1,); the final (global) entry stays False.
        self._reset_mask = wp.zeros(n + 1, dtype=wp.bool)
        self._next_step_mask = wp.zeros(n + 1, dtype=wp.bool)
        self._no_world = wp.zeros(n, dtype=wp.bool)
        self._any_pending = wp.zeros(1, dtype=wp.int32)  # read by the device: a NEXT_STEP reset is pending
        # External contact wrench per body (force [N], torque [N m] about the COM, world frame), kept when the task
        # requests Steel's contact_f observable.
        self.contact_wrenches = ContactWrenches(self) if "contact_f" in self.requested_observables else None
        self.body_contact_wrench = self.contact_wrenches.wrench if self.contact_wrenches else None

    def _make_views(self) -> None:
        """The spaces and the torch views the env returns (the same storage every step)."""
        self.single_observation_space = self.obs_pipeline.single_observation_space
        self.single_action_space = gym.spaces.Box(-1.0, 1.0, (self.action_dim,), np.float32)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        to, stats = to_torch, self.stats
        self._obs_t, self._final_obs_t = self.obs_pipeline.obs_t, self.obs_pipeline.final_obs_t
        self._reward_t = to(stats.reward)
        self._terminated_t, self._truncated_t = to(stats.terminated), to(stats.truncated)
        self._done_t = to(stats.done_mask)[: self.num_envs]
        self._reset_mask_t, self._next_step_mask_t = to(self._reset_mask), to(self._next_step_mask)
        self._episode_length_t = to(stats.episode_length)
        views = stats.views(self.penetration)
        self._term_views, self._termination_views = views["reward_terms"], views["terminations"]
        self._episode_views = views["episode"]
        core = (to(stats.overflow), to(stats.nonfinite), to(self.action_pipeline.nonfinite))
        self._core_flag_views = dict(zip(_CORE_FLAGS, (*core, to(self.penetration.flags)[0]), strict=True))
        self._actions_in_t = to(self.action_pipeline.actions_in)

    @property
    def _step_info(self) -> dict[str, Any]:
        """The ``info`` of :meth:`step`: a new dict of the same views every call."""
        info: dict[str, Any] = {
            **self._term_views,
            **self._core_flag_views,
            **self._termination_views,
            "episode": self._episode_views,
            "_episode": self._done_t,
            **self.task_info,
        }
        if self.autoreset_mode == AutoresetMode.SAME_STEP:
            info["final_obs"] = self._final_obs_t
            info["_final_obs"] = self._done_t
        return info

    @property
    def observation_groups(self) -> dict[str, torch.Tensor]:
        """The observation groups rsl_rl, skrl and Isaac Lab feed to actor and critic, views (num_envs, size) on the
        env device: ``policy`` (what :meth:`step` returns) and ``critic`` (the state observations before noise,
        then the task's ``privileged_observations``; the state vector in pixel modes)."""
        return {"policy": self._obs_t, "critic": self.obs_pipeline.critic_t}

    @property
    def episode_length(self) -> torch.Tensor:
        """Control steps taken in each world's current episode, (num_envs,) int32 on the env device: a view of
        the env's counter (:meth:`set_episode_length` sets it with checks)."""
        return self._episode_length_t

    def set_episode_length(self, lengths: torch.Tensor | np.ndarray | Sequence[int]) -> None:
        """Set each world's step counter: :meth:`steel_envs.components.EpisodeStatistics.set_episode_length` (its
        shapes and ValueErrors); RuntimeError if the env is closed."""
        self._check_open()
        self.stats.set_episode_length(lengths)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[torch.Tensor, dict[str, Any]]:
        """Reset all worlds, or the worlds of ``options["reset_mask"]``.

        Args:
            seed: Reseed the per-world random streams (world ``w`` starts at ``rand_init(h(seed),
                world_offset + w)`` with ``h`` a SeedSequence hash to int32); None continues the streams.
            options: ``{"reset_mask": mask}`` with a bool mask of shape (num_envs,), numpy or torch, resets only
                the selected worlds (others keep their state bit for bit); plus the task's ``reset_options``.

        Returns:
            The observations (num_envs, obs_dim) float32 and an info dict of per-world tensors.

        Raises:
            ValueError: On a bad seed, an unknown option or a bad value (nothing is reset).
        """
        self._check_open()
        check_seed(seed)
        mask_t, world_options = check_reset_options(options, self.num_envs, self.torch_device, self)
        self._set_reset_options(world_options, mask_t)
        if seed is None and not self._seeded:
            seed = int(np.random.SeedSequence().entropy % 2**31)
        if seed is not None:
            self._seed(int(seed))
        selected = self._reset_mask_t[: self.num_envs]
        selected.copy_(torch.ones_like(selected) if mask_t is None else mask_t)
        # The final (global) entry, which clears a global capacity-loss flag, is selected when every world is
        # reset (computed on the device: no host read).
        self._reset_mask_t[self.num_envs :].copy_(selected.all().reshape(1))
        with wp.ScopedDevice(self.wp_device):
            self.graph.warp_waits_for_torch()
            self._reset_worlds(self._reset_mask)
            self._observe(redraw=self._reset_mask)
            self.graph.torch_waits_for_warp()
        # Statistics of episodes ended before the reset are not reported again; NEXT_STEP resets pending
        # for the reset worlds are done.
        self._done_t.zero_()
        self._next_step_mask_t[: self.num_envs].masked_fill_(selected, False)
        flags = {**self._core_flag_views, **self._termination_views}
        for view in (self._terminated_t, self._truncated_t, *flags.values()):
            view.masked_fill_(selected, False)
        return self._obs_t, dict(flags)

    def _seed(self, seed: int) -> None:
        """Seed the per-world streams of resets (``rng_state``) and, apart, of noise and pushes."""
        super().reset(seed=seed)
        for state, stream_seed in ((self.rng_state, seed), (self.noise_rng_state, seed + 0x9E3779B9)):
            self.launch_per_world(
                kernels.seed_rng, inputs=[device_seed(stream_seed), self.world_offset], outputs=[state]
            )
        self._seeded = True

    def step(
        self, actions: torch.Tensor | np.ndarray
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, dict[str, Any]]:
        """Advance every world by one control step (``decimation`` physics steps).

        Args:
            actions: Shape (num_envs, action_dim), float32, in [-1, 1] (clipped); a torch tensor on the
                env device, or a numpy array of a real dtype (copied to the device once).

        Returns:
            ``(obs, reward, terminated, truncated, info)``: obs (num_envs, obs_dim) float32, reward
            (num_envs,) float32, terminated / truncated (num_envs,) bool, all views of the env's buffers.
            ``info`` holds ``reward_<term>`` (num_envs,) float32; ``constraint_overflow``,
            ``nonfinite_state``, ``nonfinite_action``, ``penetration`` and each declared termination term
            (``terminations``) by name, (num_envs,) bool; ``episode`` (``r``, ``l``,
            ``reward_<term>`` sums, ``constraint_overflow``, ``penetration``, the termination terms) with mask
            ``_episode``; in SAME_STEP mode ``final_obs`` with mask ``_final_obs``; and the task's entries
            (``task_info``, e.g. ``success`` (num_envs,) bool).

        Raises:
            TypeError: If ``actions`` is neither a torch tensor nor a numpy array.
            ValueError: On a wrong shape, dtype or device, or a non-finite entry (unless
                ``nonfinite_actions="end_episode"``); the message names the argument, the expected and the
                received value. Nothing is stepped then.
        """
        self._check_open()
        expected = (self.num_envs, self.action_dim)
        actions_t = check_actions(actions, expected, self.torch_device, self.nonfinite_actions)
        with wp.ScopedDevice(self.wp_device):
            if self.graph.step_graph is not None:
                self._actions_in_t.copy_(actions_t)
                self.graph.warp_waits_for_torch()
                wp.capture_launch(self.graph.step_graph)
            else:
                self.graph.warp_waits_for_torch()
                self._device_step(wp.from_torch(actions_t, dtype=wp.float32))
            self.graph.torch_waits_for_warp()
        self.stats.warn_overflow_once()
        return self._obs_t, self._reward_t, self._terminated_t, self._truncated_t, self._step_info

    @property
    def _skip_mask(self) -> wp.array:
        """Worlds that end nothing this step: those with a NEXT_STEP reset pending (none in the other modes)."""
        return self._next_step_mask if self.autoreset_mode == AutoresetMode.NEXT_STEP else self._no_world

    def _device_step(self, actions: wp.array) -> None:
        """Steps 1-7 of :meth:`step` on the device from validated actions (num_envs, action_dim) float32;
        launches only, no host synchronization, so the whole step can be captured as one graph."""
        self.action_pipeline.prepare(actions)
        self._apply_actions()
        self.randomizer.push()
        self._pre_physics()
        if self.graph.capturing:
            self._simulate()  # inline: a graph launched inside a capture would not be recorded
        else:
            self.physics()
        self._end_episodes()
        self._observe()
        if self.autoreset_mode == AutoresetMode.SAME_STEP:
            # final_obs is copied every step (cheap, and the same bits whichever worlds ended); the reset and the
            # second observation pass run on the device only when a world ended.
            self.obs_pipeline.save_final()
            self.graph.if_any(self.stats.any_done, self._reset_ended_worlds)
        elif self.autoreset_mode == AutoresetMode.NEXT_STEP:
            wp.copy(self._next_step_mask, self.stats.done_mask)
            wp.copy(self._any_pending, self.stats.any_done)

    def _end_episodes(self) -> None:
        """Steps 3-5: pending NEXT_STEP resets, the task's derived buffers, the dones and their causes, rewards."""
        stats, skip = self.stats, self._skip_mask
        if self.contact_wrenches is not None:
            self.contact_wrenches.update()
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            self.graph.if_any(self._any_pending, self._reset_worlds, self._next_step_mask)
        self._post_physics()
        self.terms.terminations(skip)
        self.backend.find_nonfinite(stats.nonfinite)
        self.penetration.measure()
        stats.finalize_dones(self._overflow_flags, skip, self.action_pipeline.nonfinite, self.penetration.flags)
        self.terms.rewards(stats.reward_terms)
        if self.metrics:
            self.terms.metrics(stats.metric_values)
        self._post_rewards()
        stats.accumulate(skip, self._overflow_flags, self.penetration)

    def _reset_ended_worlds(self) -> None:
        """SAME_STEP autoreset: reset the ended worlds, observe the new episodes' start."""
        self._reset_worlds(self.stats.done_mask)
        self._observe(redraw=self.stats.done_mask)

    def render(self) -> np.ndarray | None:
        """Render world 0 (or the first ``render_num_worlds`` worlds, tiled) with Newton's ray-traced
        ``SensorCamera``.

        Returns:
            An (H, W, 3) uint8 numpy frame with ``render_mode="rgb_array"``; None without a render mode.
        """
        self._check_open()
        if self.render_mode is None:
            return None
        if self._renderer is None:
            from .rendering import Renderer

            self._renderer = Renderer(self, *self.render_size, num_worlds=self.render_num_worlds)
        return self._renderer.frame()

    def set_world_parameters(
        self,
        *,
        friction_scale: torch.Tensor | np.ndarray | Sequence[float] | None = None,
        mass_scale: torch.Tensor | np.ndarray | Sequence[float] | None = None,
    ) -> None:
        """Scale per world, relative to the model as built, the friction coefficient ``mu`` of every shape and the
        mass and inertia of every body (centres of mass unchanged); the next step uses them. A scale of 1 keeps the
        nominal values exactly; reset randomization (``randomize_*_scale``) replaces these at a world's reset.

        Args:
            friction_scale: (num_envs,) factors > 0, or None to leave friction unchanged.
            mass_scale: (num_envs,) factors > 0, or None to leave masses unchanged.

        Raises:
            ValueError: On a wrong shape or dtype, or a factor that is not finite and > 0 in float32 (what the model
                holds), or on a solver without per-world model updates (the backend's
                ``supports_world_parameters``); nothing changes then.
            RuntimeError: If the env is closed.
        """
        self._check_open()
        self.randomizer.set_world_parameters(friction_scale, mass_scale)

    def close_extras(self, **kwargs: Any) -> None:
        """Release the captured graphs and the cameras, and drop the references to Newton objects, so their device
        memory is freed now rather than at a later garbage collection (a camera refers back to the env)."""
        self._renderer = None
        self.obs_pipeline.camera = None
        self.graph.release()
        self.solver = None
        self.collision_pipeline = None
        self.observables = None

    # ------------------------------------------------------------------ internals

    def physics(self) -> None:
        """Advance every world by the physics of one control step (``decimation`` × collide + solver step) on the
        current control: the captured physics graph (``graph_capture="physics"``) or eager launches.

        :meth:`step` calls it between applying the actions and computing the terms when the whole step is not one
        graph; replacing it on an instance (e.g. with a timed wrapper) instruments that part alone, as
        ``steel-envs bench`` does to time the bare solver loop.

        Raises:
            RuntimeError: If the env is closed.
        """
        self._check_open()
        if self.graph.physics_graph is not None:
            wp.capture_launch(self.graph.physics_graph)
        else:
            self._simulate()

    def _simulate(self) -> None:
        """``decimation`` physics steps; the result is always in ``state_0`` (graph-capturable)."""
        self.backend.begin_physics()
        state_in, state_out = self.state_0, self.state_1
        for _ in range(self.decimation):
            self._before_substep(state_in)
            if self.collision_pipeline is not None:
                self.collision_pipeline.collide(state_in, self.contacts)
            self.solver.step(
                state_in, state_out, self.control, self.contacts, self.physics_dt, observables=self.observables
            )
            self.backend.after_substep(state_out)
            self._after_substep(state_out)
            state_in, state_out = state_out, state_in
        if state_in is not self.state_0:
            self.state_0.assign(state_in)

    def _reset_worlds(self, world_mask: wp.array) -> None:
        """Write initial states of the worlds in ``world_mask`` (num_envs + 1,) and clear their history."""
        model = self.model
        self._reset_physics_state(world_mask)
        self.stats.reset(world_mask)
        self.randomizer.randomize(world_mask)
        self.action_pipeline.reset(world_mask)
        # A reset world has applied no effort yet (its observations start at 0).
        self.launch_per_world(
            kernels.zero_world_dofs, inputs=[world_mask, model.joint_dof_world_start], outputs=[self.control.joint_f]
        )
        if self.contact_wrenches is not None:
            self.contact_wrenches.reset(world_mask)
        self._reset_task(world_mask)

    def _observe(self, redraw: wp.array | None = None) -> None:
        """Observations of every world; noise drawn anew for the worlds in ``redraw`` ((num_envs + 1,) bool; None:
        every world, a step). The worlds whose episode starts (``redraw``; in a NEXT_STEP step, those it reset)
        begin their observation history anew."""
        started = redraw
        if redraw is None and self.autoreset_mode == AutoresetMode.NEXT_STEP:
            started = self._next_step_mask
        self.obs_pipeline.observe(self.terms, redraw, self._no_world, started)

    def _check_open(self) -> None:
        if self.closed:
            raise RuntimeError(f"{type(self).__name__} is closed")
