"""The base vector env: N worlds of one Newton model stepped by one SolverSteel, zero-copy to torch.

A concrete environment is a scene (``steel_envs.envs``: model, solver options, actuation, initial
state) plus a task (``steel_envs.tasks``: observations, rewards, terminations, typed config). This module
knows neither; it owns the contract (README, "The contract"): spaces, the order of a step, autoreset,
episode statistics, the constraint-overflow term and the torch views. The solver-specific parts are the
"solver hooks" below; ``steel_envs.vbd_env.VBDVectorEnv`` overrides them for SolverVBD scenes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import math
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import gymnasium as gym
import newton
import numpy as np
import torch
import warp as wp
from gymnasium.vector import AutoresetMode
from newton.solvers import SolverSteel

from . import kernels
from .solver_options import SteelSolverOptions

__all__ = [
    "InitialStateSpec",
    "SteelVectorEnv",
    "TaskConfig",
    "check_actions",
    "check_reset_mask",
    "throughput_kwargs",
]


@dataclass(kw_only=True)
class TaskConfig:
    """Fields every task config has; tasks subclass it with their weights and thresholds."""

    overflow_is_terminal: bool = False
    """End a constraint-overflow episode as a termination (no value bootstrap) instead of a truncation."""
    penetration_limit: float | None = None
    """End the episode of a world where, after a step, a body is deeper than this into the ground or another body
    (the rigid contacts' signed distance less both shapes' margins) [m], or a particle's centre is below the ground
    plane (z = 0); end cause ``info["penetration"]``, a truncation unless ``penetration_is_terminal``. None (the
    default until every scene keeps its contacts within 5 mm, issue 13 item 2): off."""
    penetration_is_terminal: bool = False
    """End a penetration episode as a termination instead of a truncation."""
    obs_clip: float = 1.0e4
    """Observations are clipped to [-obs_clip, obs_clip], the finite bounds of the observation space."""
    randomize_mass_scale: tuple[float, float] | None = None
    """At every reset, scale the world's body masses and inertias by U(low, high); None: off."""
    randomize_friction_scale: tuple[float, float] | None = None
    """At every reset, scale the world's shape friction coefficients by U(low, high); None: off."""
    randomize_drive_gain_scale: tuple[float, float] | None = None
    """At every reset, scale the world's drive stiffness and damping (``joint_target_ke/kd``) by U(low, high)."""
    push_interval: float = 0.0
    """Push the floating base every this many seconds of an episode [s]; 0: off."""
    push_velocity: float = 0.0
    """Largest horizontal velocity change of a push [m/s], U(-v, v) per axis."""
    obs_noise_std: float | tuple[float, ...] = 0.0
    """Standard deviation of Gaussian noise added to the observations: one value for every entry, or one per
    entry of the observation vector (per term: give 0 where a term gets none); 0: off."""
    action_delay_steps: int = 0
    """Apply the action of this many control steps ago (zeros at an episode's start); 0: none."""

    def __post_init__(self) -> None:
        self.require_positive("obs_clip")
        if not np.float32(self.obs_clip) >= 1.0:
            raise ValueError(f"obs_clip: expected a number >= 1 (the observation bound), got {self.obs_clip!r}")
        self.require_nonnegative("push_interval", "push_velocity", "action_delay_steps")
        if self.penetration_limit is not None:
            self.require_positive("penetration_limit")
        noise = self.obs_noise_std
        values = list(noise) if isinstance(noise, (tuple, list)) else [noise]
        if (
            not all(
                isinstance(v, (int, float, np.integer, np.floating))
                and not isinstance(v, (bool, np.bool_))
                and math.isfinite(float(v))
                and 0.0 <= float(v) <= _FLOAT32_MAX
                for v in values
            )
            or not values
        ):
            raise ValueError(f"obs_noise_std: expected a number >= 0 or a sequence of them, got {noise!r}")
        if not float(self.action_delay_steps).is_integer() or self.action_delay_steps > 64:
            raise ValueError(f"action_delay_steps: expected an int in [0, 64], got {self.action_delay_steps!r}")
        for name in ("randomize_mass_scale", "randomize_friction_scale", "randomize_drive_gain_scale"):
            value = getattr(self, name)
            if value is None:
                continue
            ok = isinstance(value, (tuple, list)) and len(value) == 2
            low, high = (float(v) for v in value) if ok else (0.0, 0.0)
            if not (ok and math.isfinite(low) and math.isfinite(high) and 0.0 < low <= high):
                raise ValueError(f"{name}: expected None or (low, high) with 0 < low <= high, got {value!r}")

    def require_positive(self, *names: str) -> None:
        """Raise ValueError unless each named field is > 0 in float32 (what the kernels receive)."""
        for name in names:
            value = getattr(self, name)
            if not np.float32(value) > 0.0:
                raise ValueError(f"{name}: expected a number > 0 (in float32), got {value!r}")

    def require_range(self, name: str, low: float, high: float) -> None:
        """Raise ValueError unless the named field is in [low, high] (the range where the scene's physics holds)."""
        value = getattr(self, name)
        if not low <= np.float32(value) <= high:
            raise ValueError(f"{name}: expected a number in [{low}, {high}], got {value!r}")

    def require_nonnegative(self, *names: str) -> None:
        """Raise ValueError unless each named field is >= 0."""
        for name in names:
            value = getattr(self, name)
            if not np.float32(value) >= 0.0:
                raise ValueError(f"{name}: expected a number >= 0, got {value!r}")


@dataclass(frozen=True)
class RewardTerm:
    """A named reward term, as mjlab and Isaac Lab declare them: the task's kernel writes the term's *unweighted*
    value, the core multiplies it by the weight, sums the terms into the reward and keeps per-name episode sums.

    ``info["reward_<name>"]`` is the weighted value, and the reward is the float32 sum of those in declaration order.
    """

    name: str
    """The term's name: ``info["reward_<name>"]`` and its episode sum in the statistics."""
    weight: str | None = None
    """The task-config field holding the weight (e.g. ``"ctrl_cost_weight"``), also settable by term name through the
    env keyword ``reward_weights={name: value}``. None: weight 1, the kernel writes the final value (for a formula
    that needs its weight inside, e.g. a clamp after weighting; the task's docstring says so)."""
    cost: bool = False
    """The kernel writes a cost (e.g. ``|a|^2``) and the core subtracts ``weight * cost``: a cost's weight is positive,
    as Gymnasium names them (``ctrl_cost_weight``)."""


@dataclass(frozen=True)
class TerminationTerm:
    """A named reason for a task to end an episode, as mjlab and Isaac Lab declare them: the task's kernel writes one
    bool per world for it, and the core ORs the terms into ``terminated`` (or ``truncated`` for a time-out term),
    reports each as ``info["<name>"]`` (num_envs,) bool and, for each ended episode, in ``info["episode"]["<name>"]``.

    The core's own causes (``constraint_overflow``, ``nonfinite_state``, ``nonfinite_action`` and the time limit) are
    added after the task's terms.
    """

    name: str
    """The term's name, also its ``info`` key."""
    time_out: bool = False
    """True: the episode is cut, not ended by the MDP (``truncated``: a learner bootstraps its value); False: a
    terminal state (``terminated``)."""


_RESERVED_INFO_KEYS = frozenset(
    {
        "constraint_overflow",
        "nonfinite_state",
        "nonfinite_action",
        "penetration",
        "episode",
        "_episode",
        "final_obs",
        "_final_obs",
    }
)


@dataclass(kw_only=True)
class InitialStateSpec:
    """Initial joint state of one world and its noise, as a scene declares it.

    Arrays are per world: ``default_q`` / ``q_noise`` have one entry per joint coordinate, ``default_qd`` /
    ``qd_noise`` one per DOF. Each reset draws ``q = default_q + q_noise * n`` and likewise for ``qd``,
    with ``n ~ U(-1, 1)`` ("uniform") or ``N(0, 1)`` ("gaussian").
    """

    default_q: np.ndarray
    default_qd: np.ndarray
    q_noise: np.ndarray
    qd_noise: np.ndarray
    q_noise_kind: str = "uniform"
    qd_noise_kind: str = "uniform"
    quat_coord: int = -1
    """World-local coordinate index of a free joint's quaternion (x, y, z, w), renormalized; -1: none."""


_NOISE_KINDS = {"uniform": 0, "gaussian": 1}


def _to_torch_device(device: wp.Device) -> torch.device:
    return torch.device(wp.device_to_torch(device))


@contextlib.contextmanager
def _camera_profiling_off() -> Iterator[None]:
    """With ``NEWTON_PROFILE`` set, Newton's ``SensorCamera.update`` times itself with ``wp.synchronize()``, which a
    graph capture cannot hold: switch that timer off while the step is captured (pixel observations)."""
    try:
        from newton._src.sensors import sensor_camera
    except ImportError:  # another Newton layout: nothing to switch
        yield
        return
    enabled = getattr(sensor_camera, "PROFILE_ENABLED", False)
    sensor_camera.PROFILE_ENABLED = False
    try:
        yield
    finally:
        sensor_camera.PROFILE_ENABLED = enabled


class SteelVectorEnv(gym.vector.VectorEnv):
    """N worlds of one Newton model on SolverSteel, as a Gymnasium vector env with torch tensors.

    Subclasses set the scene (``build_world``, ``physics_dt``, ``decimation``, ``enable_collisions``,
    ``action_dim``, ``solver_defaults``, ``initial_state``, ``_apply_actions``) and the task
    (``config_cls``, ``reward_terms``, ``_setup_task``, ``_compute_observations``,
    ``_compute_terminations``, ``_compute_rewards``). The step hooks only launch kernels and never read
    device data on the host: they are recorded into the step graph once and replayed.

    One call of :meth:`step`, in order (dones before rewards, as Isaac Lab's ``DirectRLEnv``); everything
    after the validation runs on the device without host synchronization and is captured once as one Warp
    graph (a CUDA graph on GPUs, Warp's CPU graph on the CPU), replayed every step:

    1. validate the actions, clip them to the action space, write them to the control (scene);
    2. ``decimation`` × (``CollisionPipeline.collide`` → ``SolverSteel.step`` → swap states);
    3. NEXT_STEP only: reset the worlds that ended on the previous step;
    4. derived buffers (task), then terminations: the task's terms, then the core's
       ``constraint_overflow`` (read from ``solver.constraint_overflow`` on the device), non-finite state
       and time limit;
    5. rewards per term on the pre-reset state, their sum, episode statistics;
    6. SAME_STEP only: observations into ``info["final_obs"]``, then reset of the ended worlds;
    7. observations.

    Returned tensors and the tensors in ``info`` are views of the env's Warp buffers on the env device:
    the same storage every step, overwritten by the next call. ``.clone()`` what you keep.

    Args:
        num_envs: Number of worlds N, >= 1.
        device: Warp device (``"cpu"``, ``"cuda:0"``); None: Warp's preferred device.
        seed: Seed of the first reset; None: drawn from entropy.
        autoreset_mode: ``AutoresetMode`` or its value string ("SameStep", "NextStep", "Disabled").
        max_episode_steps: Time limit [control steps]; None: the task's default.
        solver_options: SolverSteel keywords overriding the scene's values, see :class:`SteelSolverOptions`.
        collision_options: Keywords of ``newton.CollisionPipeline`` (e.g. ``rigid_contact_max``, the contact
            capacity of all worlds together; ``broad_phase``) over the scene's ``collision_defaults``; only for
            scenes that collide.
        render_mode: None or ``"rgb_array"`` (:meth:`render` returns frames).
        render_size: (width, height) of one world's frame [px].
        render_num_worlds: Worlds tiled into one rendered frame (the first ones).
        obs_mode: ``"state"`` (the task's observation vector), ``"rgb"`` ((H, W, 3) uint8 per world) or
            ``"depth"`` ((H, W) float32 ray distance [m], -1 where no surface) from Newton's ray-traced
            ``SensorCamera`` at ``render_size``, one camera per world (the scene's render camera); the returned
            tensors are views of the sensor's images.
        nonfinite_actions: ``"raise"``: a NaN or infinite action raises ValueError (a host sync per step on
            CUDA). ``"end_episode"``: its entries are replaced by 0 and the world's episode ends as a
            truncation, reported in ``info["nonfinite_action"]``; no host sync.
        graph_capture: True: capture the whole device part of a step (actions, physics substeps, terms,
            resets, observations) once as a Warp graph (a CUDA graph on GPUs, Warp's CPU graph on the CPU)
            and replay it every step. ``"physics"``: capture only the substeps. False: launch everything
            eagerly (for debugging).
        world_offset: Index of this env's first world in a larger population split over processes
            (:class:`steel_envs.ShardedVectorEnv`): world ``w`` draws the random stream of world
            ``world_offset + w``, so a shard's worlds start exactly as the same worlds of one big env.
        **config: Fields of the task's config (``config_cls``).

    Raises:
        TypeError: On a config field the task does not have, or a wrong argument type.
        ValueError: On an out-of-range argument or an unknown solver option; the message names it.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "autoreset_mode": AutoresetMode.SAME_STEP}

    # Scene: set by envs/.
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
    action_dim: ClassVar[int]
    """Action size per world."""
    solver_defaults: ClassVar[SteelSolverOptions] = SteelSolverOptions()
    """The scene's SolverSteel options before ``solver_options`` overrides."""
    solver_defaults_cuda: ClassVar[SteelSolverOptions | None] = None
    """The scene's options on CUDA devices, where they differ (e.g. CUDA-only sweeps); None: ``solver_defaults``."""
    camera_tracked_body: ClassVar[int] = -1
    """Body (index within a world) the render camera follows on the ground plane; -1: a fixed camera."""
    camera_eye: ClassVar[tuple[float, float, float]] = (0.0, -4.0, 1.5)
    """Render camera position relative to the tracked body's ground point (or the origin) [m]."""
    camera_target: ClassVar[tuple[float, float, float]] = (0.0, 0.0, 0.5)
    """Point the render camera looks at, relative to the same base [m]."""

    # Task: set by tasks/.
    config_cls: ClassVar[type[TaskConfig]] = TaskConfig
    rewards: ClassVar[tuple[RewardTerm, ...]] = ()
    """The task's reward terms, in summation order (see :class:`RewardTerm`)."""
    reward_terms: ClassVar[tuple[str, ...]] = ()
    """Names of the reward terms (derived from ``rewards``); ``info["reward_<name>"]`` and reward == their sum. A
    task that sets only these names (no ``rewards``) gets unweighted terms: its kernel writes the final values."""
    terminations: ClassVar[tuple[TerminationTerm, ...]] = ()
    """The task's termination terms (see :class:`TerminationTerm`), written by :meth:`_compute_termination_terms`.
    A task without any ends episodes only by the core's causes."""
    default_max_episode_steps: ClassVar[int] = 1000
    requested_observables: ClassVar[tuple[str, ...]] = ()
    """Steel observables (``"contact_f"``, ``"body_parent_f"``) the task reads after each step."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Derive ``reward_terms`` from ``rewards`` (or ``rewards`` from bare names) and check the declaration.

        Raises:
            TypeError: On a duplicate reward or termination name, a termination named like a core ``info`` key, or a
                reward weight that is not a field of ``config_cls``.
        """
        super().__init_subclass__(**kwargs)
        if "rewards" in cls.__dict__:
            cls.reward_terms = tuple(t.name for t in cls.rewards)
        elif "reward_terms" in cls.__dict__:
            cls.rewards = tuple(RewardTerm(name) for name in cls.reward_terms)
        names = [t.name for t in cls.rewards]
        if len(set(names)) != len(names):
            raise TypeError(f"{cls.__name__}.rewards: duplicate term names in {names}")
        names = [t.name for t in cls.terminations]
        if len(set(names)) != len(names) or _RESERVED_INFO_KEYS & set(names):
            raise TypeError(
                f"{cls.__name__}.terminations: names must be unique and not one of the core's info keys "
                f"{sorted(_RESERVED_INFO_KEYS)}, got {names}"
            )
        fields = {f.name for f in dataclasses.fields(cls.config_cls)}
        for term in cls.rewards:
            if term.weight is not None and term.weight not in fields:
                raise TypeError(
                    f"{cls.__name__}.rewards: the weight of {term.name!r}, {term.weight!r}, is not a field of "
                    f"{cls.config_cls.__name__}"
                )

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
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or not 1 <= num_envs < 2**31:
            raise ValueError(f"num_envs: expected an int in [1, 2**31), got {num_envs!r}")
        if max_episode_steps is None:
            max_episode_steps = self.default_max_episode_steps
        if isinstance(max_episode_steps, bool) or not isinstance(max_episode_steps, (int, np.integer)):
            raise ValueError(f"max_episode_steps: expected an int >= 1, got {max_episode_steps!r}")
        if not 1 <= max_episode_steps < 2**31:
            raise ValueError(f"max_episode_steps: expected an int in [1, 2**31), got {max_episode_steps!r}")
        if obs_mode not in ("state", "rgb", "depth"):
            raise ValueError(f"obs_mode: expected 'state', 'rgb' or 'depth', got {obs_mode!r}")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode: expected None or 'rgb_array', got {render_mode!r}")
        if (
            not isinstance(render_size, (tuple, list))
            or len(render_size) != 2
            or not all(
                isinstance(v, (int, np.integer)) and not isinstance(v, bool) and 1 <= v <= 4096 for v in render_size
            )
        ):
            raise ValueError(f"render_size: expected (width, height) ints in [1, 4096], got {render_size!r}")
        if (
            isinstance(render_num_worlds, bool)
            or not isinstance(render_num_worlds, (int, np.integer))
            or not (1 <= render_num_worlds <= num_envs)
        ):
            raise ValueError(
                f"render_num_worlds: expected an int in [1, num_envs={num_envs}], got {render_num_worlds!r}"
            )
        try:
            autoreset_mode = AutoresetMode(autoreset_mode)
        except ValueError:
            raise ValueError(
                f"autoreset_mode: expected one of {[m.value for m in AutoresetMode]}, got {autoreset_mode!r}"
            ) from None
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
            raise ValueError(f"seed: expected None or an int >= 0, got {seed!r}")
        if nonfinite_actions not in ("raise", "end_episode"):
            raise ValueError(f"nonfinite_actions: expected 'raise' or 'end_episode', got {nonfinite_actions!r}")

        if graph_capture not in (True, False, "physics"):
            raise ValueError(f"graph_capture: expected True, False or 'physics', got {graph_capture!r}")
        if isinstance(world_offset, bool) or not isinstance(world_offset, (int, np.integer)) or world_offset < 0:
            raise ValueError(f"world_offset: expected an int >= 0, got {world_offset!r}")
        self.nonfinite_actions = nonfinite_actions
        self.world_offset = int(world_offset)
        self.config = self._make_config(config)
        self.num_envs = int(num_envs)
        self.world_count = self.num_envs
        self.max_episode_steps = int(max_episode_steps)
        self.render_mode = render_mode
        self.render_size = (int(render_size[0]), int(render_size[1]))
        self.render_num_worlds = int(render_num_worlds)
        self._renderer = None
        self.obs_mode = obs_mode
        self.metadata = {
            **type(self).metadata,
            "autoreset_mode": autoreset_mode,
            "render_fps": round(1.0 / (self.physics_dt * self.decimation)),  # one frame per control step
        }
        self.autoreset_mode = autoreset_mode
        try:
            self._wp_device = wp.get_device(device)
        except Exception as e:
            raise ValueError(f"device: expected None, 'cpu' or an available 'cuda:N', got {device!r} ({e})") from None
        self.device = str(self._wp_device)
        self.torch_device = _to_torch_device(self._wp_device)
        # Warp and torch queue work on different CUDA streams; the env orders them with events at its
        # boundaries, against the stream torch uses at each call (``_torch_stream``).
        self._torch_streams: dict[int, wp.Stream] = {}
        defaults = self.solver_defaults
        if self._wp_device.is_cuda and self.solver_defaults_cuda is not None:
            defaults = self.solver_defaults_cuda
        self.solver_options = defaults.replace(solver_options)
        self.collision_options = self._check_collision_options(collision_options)
        self.closed = False

        self.task_info: dict[str, torch.Tensor] = {}
        """Task entries of ``info`` (e.g. ``success``), views set by ``_setup_task``."""
        with wp.ScopedDevice(self._wp_device):
            self._build_simulation()
            self._allocate_buffers()
            self._setup_scene()
            self._setup_task()
        obs_dim = int(self.observation_dim)
        bound = float(self.config.obs_clip)
        noise = np.atleast_1d(np.asarray(self.config.obs_noise_std, np.float32))
        if noise.shape[0] == 1:
            noise = np.full(obs_dim, noise[0], np.float32)
        elif noise.shape[0] != obs_dim:
            raise ValueError(
                f"obs_noise_std: expected one value or {obs_dim} (the observation size), got {noise.shape[0]}"
            )
        self._obs_noise_std = (
            wp.array(np.ascontiguousarray(noise), dtype=wp.float32, device=self._wp_device) if noise.any() else None
        )
        # The last noise drawn per world, added again when observations are recomputed without a redraw.
        self._obs_noise = (
            wp.zeros((self.num_envs, obs_dim), dtype=wp.float32, device=self._wp_device)
            if self._obs_noise_std is not None
            else None
        )
        self.single_observation_space = gym.spaces.Box(-bound, bound, (obs_dim,), np.float32)
        self._camera = None
        if obs_mode != "state":
            if self._obs_noise is not None:
                raise ValueError(
                    f"obs_noise_std: applies to state observations; with obs_mode={obs_mode!r} pass 0 (add noise to "
                    "the images in the learner's pipeline)"
                )
            from .rendering import Renderer

            width, height = self.render_size
            with wp.ScopedDevice(self._wp_device):
                self._camera = Renderer(self, width, height, num_worlds=self.num_envs)
                alloc = (
                    self._camera.sensor.allocate_image_color
                    if obs_mode == "rgb"
                    else (self._camera.sensor.allocate_image_depth)
                )
                self._pixels = alloc(self.num_envs, width, height)
                self._final_pixels = alloc(self.num_envs, width, height)
            if obs_mode == "rgb":
                self.single_observation_space = gym.spaces.Box(0, 255, (height, width, 3), np.uint8)
            else:
                self.single_observation_space = gym.spaces.Box(-1.0, bound, (height, width), np.float32)
        self.single_action_space = gym.spaces.Box(-1.0, 1.0, (self.action_dim,), np.float32)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        with wp.ScopedDevice(self._wp_device):
            self._obs = wp.zeros((self.num_envs, obs_dim), dtype=wp.float32)
            self._final_obs = wp.zeros((self.num_envs, obs_dim), dtype=wp.float32)
        self._make_views()

        self._seeded = False
        self._overflow_warned = False
        self._steps_since_check = 0
        self._graph = None
        self._step_graph = None
        self._capturing = False
        # Resets of ended worlds as conditional graph nodes where the device supports them (CUDA 12.4+, CPU).
        self._conditional_resets = not self._wp_device.is_cuda or wp.is_conditional_graph_supported()
        self.reset(seed=seed)
        # One capture, never two: memory Newton allocates lazily during a capture belongs to that graph, so a
        # second graph must not read memory first touched by a graph that is never launched. The captured
        # arrays are read and written in place, so actions and resets written between replays are seen;
        # Newton arrays are never reallocated after this point. Warp captures on the CPU as well: measured
        # bitwise equal to eager stepping and 1.4x (AntRun, 64 worlds) to 5x (1 world) faster.
        if graph_capture == "physics":
            with wp.ScopedDevice(self._wp_device), wp.ScopedCapture() as capture:
                self._simulate()
            self._graph = capture.graph
        elif graph_capture:
            # The whole device step (actions to observations, resets included) as one graph: one launch per step.
            try:
                self._step_graph = self._capture_step()
            except Exception as e:
                if not (self._conditional_resets and self._wp_device.is_cuda):
                    raise
                # CUDA forbids some work inside a conditional node (allocations, cross-stream events); rather than
                # fail, capture the resets unconditionally (masked launches that select nothing when no world ended).
                warnings.warn(
                    f"{type(self).__name__}: capturing the resets as conditional graph nodes failed "
                    f"({type(e).__name__}: {e}); they run every step instead (masked)",
                    RuntimeWarning,
                    stacklevel=2,
                )
                self._conditional_resets = False
                self._step_graph = self._capture_step()

    def _capture_step(self) -> Any:
        """Capture :meth:`_device_step` on the env device as one graph and return it."""
        self._capturing = True
        try:
            with wp.ScopedDevice(self._wp_device), _camera_profiling_off(), wp.ScopedCapture() as capture:
                self._device_step(self._actions_in)
        finally:
            self._capturing = False
        return capture.graph

    @property
    def graph_captured(self) -> bool:
        """Whether :meth:`step` replays one captured graph of its whole device part (``graph_capture=True``)."""
        return self._step_graph is not None

    # ------------------------------------------------------------------ construction

    @classmethod
    def _make_config(cls, overrides: Mapping[str, Any]) -> TaskConfig:
        overrides = dict(overrides)
        weights = overrides.pop("reward_weights", None)
        if weights is not None:
            cls._weights_by_term_name(weights, overrides)
        names = {f.name for f in dataclasses.fields(cls.config_cls)}
        unknown = sorted(set(overrides) - names)
        if unknown:
            raise TypeError(
                f"{cls.__name__}: unexpected keyword argument(s) {unknown}; the env takes num_envs, device, seed, "
                f"autoreset_mode, max_episode_steps, solver_options, collision_options, render_mode, render_size, "
                f"render_num_worlds, obs_mode, nonfinite_actions, graph_capture, world_offset, reward_weights and the "
                f"task config "
                f"fields {sorted(names)}"
            )
        for f in dataclasses.fields(cls.config_cls):
            if f.name in overrides:
                _check_config_value(f, overrides[f.name])
        return cls.config_cls(**overrides)

    @classmethod
    def _weights_by_term_name(cls, weights: Any, overrides: dict[str, Any]) -> None:
        """Move ``reward_weights={term name: weight}`` into ``overrides`` under each term's config field.

        Raises:
            TypeError: If ``weights`` is not a mapping.
            ValueError: On an unknown term, a term without a weight field, or a weight also given by its field name.
        """
        if not isinstance(weights, Mapping):
            raise TypeError(f"reward_weights: expected a mapping of reward term name -> weight, got {weights!r}")
        terms = {t.name: t for t in cls.rewards}
        for name, value in weights.items():
            term = terms.get(name)
            if term is None:
                raise ValueError(f"reward_weights: {cls.__name__} has no reward term {name!r}; terms: {list(terms)}")
            if term.weight is None:
                raise ValueError(f"reward_weights: the term {name!r} has no weight field (its kernel writes it whole)")
            if term.weight in overrides:
                raise ValueError(f"reward_weights[{name!r}] and {term.weight}: the same weight given twice")
            overrides[term.weight] = value

    @property
    def reward_weights(self) -> dict[str, float]:
        """The weight of each reward term by name, as its config field holds it (1.0 for a term without one); a cost
        term's weighted value is ``-weight * cost``."""
        return {t.name: float(getattr(self.config, t.weight)) if t.weight else 1.0 for t in self.rewards}

    def _signed_weights(self) -> np.ndarray:
        """(len(rewards),) float32 multipliers of the unweighted terms: the weight, negated for a cost."""
        return np.array(
            [
                (-1.0 if t.cost else 1.0) * np.float32(w)
                for t, w in zip(self.rewards, self.reward_weights.values(), strict=True)
            ],
            np.float32,
        )

    @classmethod
    def _check_collision_options(cls, options: Mapping[str, Any] | None) -> dict[str, Any]:
        """``collision_options`` as a dict of ``newton.CollisionPipeline`` keywords.

        Raises:
            ValueError: On a non-mapping, options for a scene without collisions, an unknown keyword, a non-bool for
                a bool option or a capacity (``rigid_contact_max``, ``soft_contact_max``, ...) that is not None or
                an int >= 1. Other values are checked by Newton.
        """
        if options is None:
            options = {}
        if not isinstance(options, Mapping):
            raise ValueError(f"collision_options: expected a dict or None, got {type(options).__name__}")
        if options and not cls.enable_collisions:
            raise ValueError(f"collision_options: {cls.__name__} runs no collision pipeline; pass None")
        parameters = inspect.signature(newton.CollisionPipeline.__init__).parameters
        accepted = set(parameters) - {"self", "model"}
        unknown = sorted(set(options) - accepted, key=str)
        if unknown:
            raise ValueError(
                f"collision_options: unknown keyword(s) {unknown}; newton.CollisionPipeline takes {sorted(accepted)}"
            )
        for name, value in options.items():
            default = parameters[name].default
            if isinstance(default, bool) and not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"collision_options['{name}']: expected a bool, got {value!r}")
            bad_int = isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1
            if name in _COLLISION_CAPACITIES and value is not None and bad_int:
                raise ValueError(f"collision_options['{name}']: expected None or an int >= 1, got {value!r}")
        return {**cls.collision_defaults, **options}

    def build_world(self, builder: newton.ModelBuilder) -> None:
        """Add one world's bodies, joints and shapes to ``builder`` (scene)."""
        raise NotImplementedError

    def initial_state(self) -> InitialStateSpec:
        """Initial joint state of one world and its reset noise (scene)."""
        raise NotImplementedError

    def _build_simulation(self) -> None:
        world = newton.ModelBuilder()
        self._register_attributes(world)
        self.build_world(world)
        if self.add_ground_plane and self.ground_per_world:
            world.add_ground_plane()
        builder = newton.ModelBuilder()
        self._register_attributes(builder)
        builder.replicate(world, self.num_envs)
        if self.add_ground_plane and not self.ground_per_world:
            builder.add_ground_plane()
        self._finalize_builder(builder)
        self.model = builder.finalize(device=self._wp_device)
        model = self.model
        self._configure_model(model)
        if model.joint_coord_count % self.num_envs or model.joint_dof_count % self.num_envs:
            raise RuntimeError(f"{type(self).__name__}: scenes must not add global joints")
        if self.config.push_interval > 0.0 and self.config.push_velocity > 0.0:
            first_joint = int(model.joint_world_start.numpy()[0]) if model.joint_count else -1
            if first_joint < 0 or int(model.joint_type.numpy()[first_joint]) != int(newton.JointType.FREE):
                raise ValueError(f"push_interval: {type(self).__name__} has no floating base to push")
        self.coords_per_world = model.joint_coord_count // self.num_envs
        self.dofs_per_world = model.joint_dof_count // self.num_envs
        self.bodies_per_world = model.body_count // self.num_envs

        # Pipeline and contacts before the solver: the construction order SolverVBD's page recommends.
        if self.enable_collisions:
            self.collision_pipeline = self._make_collision_pipeline()
            self.contacts = self.collision_pipeline.contacts()
        else:
            self.collision_pipeline = None
            self.contacts = None
        self.solver = self._make_solver()
        self._overflow_flags = self._make_overflow_flags()
        self.observables = (
            self.solver.observables(self.requested_observables, contacts=self.contacts)
            if self.requested_observables
            else None
        )
        self.state_0 = model.state()
        self.state_1 = model.state()
        self.control = model.control()

        spec = self.initial_state()
        self._init_q = wp.array(np.asarray(spec.default_q, np.float32), dtype=wp.float32)
        self._init_qd = wp.array(np.asarray(spec.default_qd, np.float32), dtype=wp.float32)
        self._init_q_noise = wp.array(np.asarray(spec.q_noise, np.float32), dtype=wp.float32)
        self._init_qd_noise = wp.array(np.asarray(spec.qd_noise, np.float32), dtype=wp.float32)
        if self._init_q.shape[0] != self.coords_per_world or self._init_q_noise.shape[0] != self.coords_per_world:
            raise RuntimeError(f"{type(self).__name__}.initial_state: q arrays need {self.coords_per_world} entries")
        if self._init_qd.shape[0] != self.dofs_per_world or self._init_qd_noise.shape[0] != self.dofs_per_world:
            raise RuntimeError(f"{type(self).__name__}.initial_state: qd arrays need {self.dofs_per_world} entries")
        self._init_kinds = (_NOISE_KINDS[spec.q_noise_kind], _NOISE_KINDS[spec.qd_noise_kind])
        self._init_quat_coord = int(spec.quat_coord)

    # ------------------------------------------------------------------ solver hooks
    # SolverSteel's; a scene on another Newton solver (``steel_envs.vbd_env.VBDVectorEnv``) overrides them.

    def _register_attributes(self, builder: newton.ModelBuilder) -> None:
        """Register the solver's custom attributes on a builder before the scene is added."""
        SolverSteel.register_custom_attributes(builder)

    def _finalize_builder(self, builder: newton.ModelBuilder) -> None:
        """Last edits of the replicated builder before ``finalize`` (e.g. the coloring VBD needs)."""

    def _configure_model(self, model: newton.Model) -> None:
        """Model-level settings after ``finalize``, before the solver is built."""

    def _make_collision_pipeline(self) -> newton.CollisionPipeline:
        """The collision pipeline run before each physics step (``enable_collisions``), with ``collision_options``."""
        return newton.CollisionPipeline(self.model, **self.collision_options)

    def _make_solver(self) -> newton.solvers.SolverBase:
        """The solver, from ``self.solver_options``.

        Restitution is switched off (``enable_restitution=False``) when no shape of the scene has a positive
        restitution coefficient, where it has no effect: SolverSteel's sparse mass factors (chosen on CUDA) then
        need no host-side restitution check in ``notify_model_changed``, which a captured step (friction
        randomization at reset) cannot hold. A scene or user that gives a shape restitution keeps it on.
        """
        options = self.solver_options
        if options.enable_restitution and not (self.model.shape_material_restitution.numpy() > 0.0).any():
            options = self.solver_options = options.replace({"enable_restitution": False})
        return SolverSteel(self.model, **options.as_kwargs())

    def _make_overflow_flags(self) -> wp.array:
        """The per-world capacity-loss flags, bool (world_count + 1,), the final entry global (it ends every
        world): SolverSteel's ``constraint_overflow``, which the solver sets during each step."""
        return self.solver.constraint_overflow

    def _before_substep(self, state: newton.State) -> None:
        """Launches before each physics step, on its input state (graph-capturable; e.g. kinematic particles)."""

    def _after_substep(self, state: newton.State) -> None:
        """Launches after each physics step, on its output state (graph-capturable; e.g. capacity checks)."""

    def _find_nonfinite(self) -> None:
        """Write ``self._nonfinite`` (num_envs,) bool: the worlds whose state holds a NaN or an infinity."""
        self.launch_per_world(
            kernels.find_nonfinite_worlds,
            inputs=[
                self.model.joint_coord_world_start,
                self.model.joint_dof_world_start,
                self.state_0.joint_q,
                self.state_0.joint_qd,
            ],
            outputs=[self._nonfinite],
        )

    def _measure_penetration(self) -> None:
        """Write ``self._penetration`` (1, num_envs) bool: the worlds with a body deeper than ``penetration_limit``
        into another shape (the last substep's rigid contacts, evaluated on the state after the step by
        ``newton.eval_rigid_contact_kinematics``) or a particle centre below the ground plane."""
        limit = self.config.penetration_limit
        if limit is None:
            return
        m = self.model
        self._penetration_depth.zero_()
        if self.contacts is not None and self.contacts.rigid_contact_max > 0 and self.state_0.body_q is not None:
            c = self.contacts
            newton.eval_rigid_contact_kinematics(m, self.state_0, c, out_distance=self._contact_distance)
            wp.launch(
                kernels.deepest_rigid_contact,
                c.rigid_contact_max,
                inputs=[c.rigid_contact_count, c.rigid_contact_shape0, c.rigid_contact_shape1, self._contact_distance],
                outputs=[m.shape_margin, m.shape_world, self._penetration_depth],
                device=self._wp_device,
            )
        particles = self.add_ground_plane and m.particle_count > 0
        self.launch_per_world(
            kernels.flag_penetration,
            inputs=[
                self._penetration_depth,
                float(limit),
                particles,
                m.particle_world_start if particles else self._no_world_starts,
                self.state_0.particle_q if particles else self._no_points,
            ],
            outputs=[self._penetration],
        )

    def _reset_physics_state(self, world_mask: wp.array) -> None:
        """Write the initial joint state of the selected worlds (with reset noise), their body poses by forward
        kinematics, and clear their solver history (``solver.reset``)."""
        self._reset_joints(world_mask)
        self.solver.reset(self.state_0, world_mask=world_mask)

    def _reset_joints(self, world_mask: wp.array) -> None:
        """Draw the initial joint state of the selected worlds (``initial_state`` with its noise) into
        ``state_0.joint_q`` / ``joint_qd`` and write their articulations' body poses by forward kinematics."""
        model = self.model
        self.launch_per_world(
            kernels.reset_joint_state,
            inputs=[
                world_mask,
                model.joint_coord_world_start,
                model.joint_dof_world_start,
                self._init_q,
                self._init_qd,
                self._init_q_noise,
                self._init_qd_noise,
                self._init_kinds[0],
                self._init_kinds[1],
                self._init_quat_coord,
            ],
            outputs=[self._rng_state, self.state_0.joint_q, self.state_0.joint_qd],
        )
        if model.articulation_count:
            wp.launch(
                kernels.world_mask_to_articulation_mask,
                model.articulation_count,
                inputs=[world_mask, model.articulation_world, self.num_envs],
                outputs=[self._articulation_mask],
                device=self._wp_device,
            )
            newton.eval_fk(
                model, self.state_0.joint_q, self.state_0.joint_qd, self.state_0, mask=self._articulation_mask
            )

    def _notify_model_changed(self, flags: int, world_mask: wp.array | None) -> None:
        """Tell the solver which model properties changed, in the selected worlds (None: all)."""
        self.solver.notify_model_changed(flags, world_mask=world_mask)

    def _overflow_advice(self) -> str:
        """What the one-time overflow warning says was lost and which capacity to raise."""
        o = self.solver_options
        if o.articulated_contact_response == "propagation":
            capacity = f"propagation_constraint_max (now {o.propagation_constraint_max}, None = sum of the others)"
        else:
            capacity = (
                f"articulation_constraint_max (now {o.articulation_constraint_max}) or free_body_constraint_max "
                f"(now {o.free_body_constraint_max})"
            )
        return (
            f"SolverSteel dropped constraint rows or contacts in some worlds. Raise {capacity} with "
            f"solver_options={{...}}; row_watermark=True and solver.constraint_row_watermarks() measure the need."
        )

    # ------------------------------------------------------------------ buffers

    def _allocate_buffers(self) -> None:
        n, t = self.num_envs, len(self.reward_terms)
        self._actions = wp.zeros((n, self.action_dim), dtype=wp.float32)
        self._actions_in = wp.zeros((n, self.action_dim), dtype=wp.float32)  # the captured step's input
        self._reward = wp.zeros(n, dtype=wp.float32)
        self._reward_terms = wp.zeros((t, n), dtype=wp.float32)
        self._reward_weights = wp.array(self._signed_weights(), dtype=wp.float32)
        k = len(self.terminations)
        self._termination_flags = wp.zeros((k, n), dtype=wp.bool)
        self._final_termination_flags = wp.zeros((k, n), dtype=wp.bool)
        self._termination_time_out = wp.array([t.time_out for t in self.terminations], dtype=wp.bool)
        self._penetration = wp.zeros((1, n), dtype=wp.bool)  # 2-D to share copy_final_flags with the terms
        self._final_penetration = wp.zeros((1, n), dtype=wp.bool)
        self._penetration_depth = wp.zeros(n, dtype=wp.float32)
        self._contact_distance = wp.zeros(self.contacts.rigid_contact_max, dtype=wp.float32) if self.contacts else None
        self._no_world_starts = wp.zeros(n + 1, dtype=wp.int32)  # stand-ins for a scene without particles
        self._no_points = wp.zeros(1, dtype=wp.vec3)
        self._terminated = wp.zeros(n, dtype=wp.bool)
        self._truncated = wp.zeros(n, dtype=wp.bool)
        self._overflow = wp.zeros(n, dtype=wp.bool)
        self._overflow_seen = wp.zeros(1, dtype=wp.int32)
        self._nonfinite = wp.zeros(n, dtype=wp.bool)
        self._nonfinite_action = wp.zeros(n, dtype=wp.bool)
        # World masks in the solver's layout, (world_count + 1,); the final (global) entry stays False.
        self._done_mask = wp.zeros(n + 1, dtype=wp.bool)
        self._reset_mask = wp.zeros(n + 1, dtype=wp.bool)
        self._next_step_mask = wp.zeros(n + 1, dtype=wp.bool)
        self._no_world = wp.zeros(n, dtype=wp.bool)
        # int32 [1] flags read by the device (conditional graph nodes): any world ended / has a pending reset.
        self._any_done = wp.zeros(1, dtype=wp.int32)
        self._any_pending = wp.zeros(1, dtype=wp.int32)
        self._articulation_mask = wp.zeros(self.model.articulation_count, dtype=wp.bool)
        self._rng_state = wp.zeros(n, dtype=wp.uint32)
        self._noise_rng_state = wp.zeros(n, dtype=wp.uint32)
        self._world_mass_scale = wp.ones(n, dtype=wp.float32)
        self._world_friction_scale = wp.ones(n, dtype=wp.float32)
        self._world_drive_gain_scale = wp.ones(n, dtype=wp.float32)
        self._nominal = {
            "mu": wp.clone(self.model.shape_material_mu),
            "mass": wp.clone(self.model.body_mass),
            "inertia": wp.clone(self.model.body_inertia),
            "ke": wp.clone(self.model.joint_target_ke),
            "kd": wp.clone(self.model.joint_target_kd),
        }
        delay = int(self.config.action_delay_steps)
        self._action_history = wp.zeros((delay + 1, n, self.action_dim), dtype=wp.float32) if delay else None
        self._episode_length = wp.zeros(n, dtype=wp.int32)
        self._episode_return = wp.zeros(n, dtype=wp.float32)
        self._episode_term_sums = wp.zeros((t, n), dtype=wp.float32)
        self._final_return = wp.zeros(n, dtype=wp.float32)
        self._final_length = wp.zeros(n, dtype=wp.int32)
        self._final_term_sums = wp.zeros((t, n), dtype=wp.float32)
        self._final_overflow = wp.zeros(n, dtype=wp.bool)
        # External contact wrench per body (force [N], torque [N m] about the COM, world frame), kept when
        # the task requests Steel's contact_f observable.
        self.body_contact_wrench = (
            wp.zeros(self.model.body_count, dtype=wp.spatial_vector)
            if "contact_f" in self.requested_observables
            else None
        )

    def _make_views(self) -> None:
        to = wp.to_torch
        self._obs_t = to(self._obs)
        self._final_obs_t = to(self._final_obs)
        if self._camera is not None:
            self._obs_t, self._final_obs_t = self._pixel_view(self._pixels), self._pixel_view(self._final_pixels)
        self._reward_t = to(self._reward)
        self._terminated_t = to(self._terminated)
        self._truncated_t = to(self._truncated)
        self._done_t = to(self._done_mask)[: self.num_envs]
        self._reset_mask_t = to(self._reset_mask)
        self._next_step_mask_t = to(self._next_step_mask)
        self._overflow_t = to(self._overflow)
        self._overflow_seen_t = to(self._overflow_seen)
        self._nonfinite_t = to(self._nonfinite)
        self._nonfinite_action_t = to(self._nonfinite_action)
        self._penetration_t = to(self._penetration)[0]
        self._episode_length_t = to(self._episode_length)
        terms = to(self._reward_terms)
        final_terms = to(self._final_term_sums)
        self._term_views = {f"reward_{name}": terms[i] for i, name in enumerate(self.reward_terms)}
        flags, final_flags = to(self._termination_flags), to(self._final_termination_flags)
        self._termination_views = {t.name: flags[i] for i, t in enumerate(self.terminations)}
        self._episode_views = {
            "r": to(self._final_return),
            "l": to(self._final_length),
            "constraint_overflow": to(self._final_overflow),
            "penetration": to(self._final_penetration)[0],
            **{f"reward_{name}": final_terms[i] for i, name in enumerate(self.reward_terms)},
            **{t.name: final_flags[i] for i, t in enumerate(self.terminations)},
        }
        self._actions_in_t = to(self._actions_in)

    def _pixel_view(self, image: wp.array) -> torch.Tensor:
        """A torch view of a sensor image: (N, H, W, 3) uint8 for RGB, (N, H, W) float32 for depth."""
        t = wp.to_torch(image)
        if self.obs_mode == "depth":
            return t
        n, h, w = image.shape
        return t.view(torch.uint8).reshape(n, h, w, 4)[..., :3]

    @property
    def _step_info(self) -> dict[str, Any]:
        """The ``info`` of :meth:`step`: a new dict of the same views every call."""
        info: dict[str, Any] = {
            **self._term_views,
            "constraint_overflow": self._overflow_t,
            "nonfinite_state": self._nonfinite_t,
            "nonfinite_action": self._nonfinite_action_t,
            "penetration": self._penetration_t,
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
    def episode_length(self) -> torch.Tensor:
        """Control steps taken in each world's current episode, (num_envs,) int32 on the env device: a view of
        the env's counter (writable: rsl_rl's ``init_at_random_ep_len`` spreads the first time limits with it)."""
        return self._episode_length_t

    @property
    def control_dt(self) -> float:
        """Time of one control step, ``physics_dt * decimation`` [s]."""
        return self.physics_dt * self.decimation

    def launch_per_world(self, kernel: wp.Kernel, inputs: list[Any], outputs: list[Any] | None = None) -> None:
        """Launch ``kernel`` with one thread per world (``wp.tid()`` is the world index) on the env device.

        The helper scenes and tasks use for their term kernels; arguments as ``wp.launch``.
        """
        wp.launch(kernel, self.num_envs, inputs=inputs, outputs=outputs or [], device=self._wp_device)

    # ------------------------------------------------------------------ scene and task hooks

    @property
    def observation_dim(self) -> int:
        """Observation size per world (task)."""
        raise NotImplementedError

    def _setup_scene(self) -> None:
        """Allocate the scene's device arrays (before any step is captured); the model exists (scene)."""

    def _setup_task(self) -> None:
        """Allocate the task's buffers; the model, solver and core buffers exist (task)."""

    def _apply_actions(self) -> None:
        """Write ``self._actions`` (clipped, shape (num_envs, action_dim)) to ``self.control`` (scene)."""
        raise NotImplementedError

    def _pre_physics(self) -> None:
        """Record what the task needs from the state before the physics of a step (task)."""

    def _post_physics(self) -> None:
        """Update derived buffers from the state after the physics of a step (task)."""

    def _compute_terminations(self, terminated: wp.array, truncated: wp.array) -> None:
        """Write whether the task ends each world's episode, (num_envs,) bool each (a task may override this
        directly). By default: the declared ``terminations`` (:meth:`_compute_termination_terms`), ORed into
        ``terminated`` or, for a time-out term, ``truncated``; both False for a task without terms."""
        if not self.terminations:
            self.launch_per_world(kernels.no_task_terminations, inputs=[], outputs=[terminated, truncated])
            return
        self._compute_termination_terms(self._termination_flags)
        skip = self._next_step_mask if self.autoreset_mode == AutoresetMode.NEXT_STEP else self._no_world
        self.launch_per_world(
            kernels.combine_termination_terms,
            inputs=[len(self.terminations), self._termination_time_out, skip],
            outputs=[self._termination_flags, terminated, truncated],
        )

    def _compute_termination_terms(self, flags: wp.array) -> None:
        """Write each declared termination term, shape (len(terminations), num_envs) bool, in ``terminations``
        order (task)."""
        raise NotImplementedError

    def _compute_rewards(self, reward_terms: wp.array) -> None:
        """Write the unweighted reward terms, shape (len(rewards), num_envs) float32, in ``rewards`` order; the
        core applies the weights (task)."""
        raise NotImplementedError

    def _compute_observations(self, obs: wp.array) -> None:
        """Write the observations, shape (num_envs, observation_dim) float32 (task)."""
        raise NotImplementedError

    def _reset_task(self, world_mask: wp.array) -> None:
        """Reset the task's per-world buffers of the selected worlds (task)."""

    # ------------------------------------------------------------------ the Gymnasium API

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[torch.Tensor, dict[str, Any]]:
        """Reset all worlds, or the worlds of ``options["reset_mask"]``.

        Args:
            seed: Reseed the per-world random streams (world ``w`` starts at ``rand_init(h(seed),
                world_offset + w)`` with ``h`` a SeedSequence hash to int32); None continues the streams.
            options: ``{"reset_mask": mask}`` with a bool mask of shape (num_envs,), numpy or torch,
                resets only the selected worlds; other worlds keep their state bit for bit.

        Returns:
            The observations (num_envs, obs_dim) float32 and an info dict of per-world tensors.

        Raises:
            ValueError: On a bad seed, an unknown option or a mask of the wrong dtype or shape.
        """
        self._check_open()
        options = {} if options is None else options
        if not isinstance(options, Mapping):
            raise ValueError(f"options: expected a dict or None, got {type(options).__name__}")
        unknown = sorted(set(options) - {"reset_mask"})
        if unknown:
            raise ValueError(f"options: unknown key(s) {unknown}; the only option is 'reset_mask'")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
            raise ValueError(f"seed: expected None or an int >= 0, got {seed!r}")
        mask = options.get("reset_mask")
        mask_t = None if mask is None else self._check_reset_mask(mask)

        if seed is None and not self._seeded:
            seed = int(np.random.SeedSequence().entropy % 2**31)
        if seed is not None:
            super().reset(seed=int(seed))
            self.launch_per_world(
                kernels.seed_rng,
                inputs=[_device_seed(int(seed)), self.world_offset],
                outputs=[self._rng_state],
            )
            # Observation noise and pushes draw from a second stream, so they leave the initial states as they are.
            self.launch_per_world(
                kernels.seed_rng,
                inputs=[_device_seed(int(seed) + 0x9E3779B9), self.world_offset],
                outputs=[self._noise_rng_state],
            )
            self._seeded = True

        selected = self._reset_mask_t[: self.num_envs]
        if mask_t is None:
            selected.fill_(True)
        else:
            selected.copy_(mask_t)
        # The final (global) entry, which clears a global capacity-loss flag, is selected when every world is
        # reset (computed on the device: no host read).
        self._reset_mask_t[self.num_envs :].copy_(selected.all().reshape(1))
        with wp.ScopedDevice(self._wp_device):
            self._warp_waits_for_torch()
            self._reset_worlds(self._reset_mask)
            self._observe(redraw=self._reset_mask)
            self._torch_waits_for_warp()
        # Statistics of episodes ended before the reset are not reported again; NEXT_STEP resets pending
        # for the reset worlds are done.
        self._done_t.zero_()
        self._next_step_mask_t[: self.num_envs].masked_fill_(selected, False)
        for flags in (self._terminated_t, self._truncated_t, *self._flag_views()):
            flags.masked_fill_(selected, False)
        names = ("constraint_overflow", "nonfinite_state", "nonfinite_action", "penetration", *self._termination_views)
        return self._obs_t, dict(zip(names, self._flag_views(), strict=True))

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
            ``reward_<term>`` sums, ``constraint_overflow``) with mask ``_episode``; in SAME_STEP mode
            ``final_obs`` with mask ``_final_obs``; and the task's entries (``task_info``, e.g. ``success``
            (num_envs,) bool).

        Raises:
            TypeError: If ``actions`` is neither a torch tensor nor a numpy array.
            ValueError: On a wrong shape, dtype or device, or a non-finite entry (unless
                ``nonfinite_actions="end_episode"``); the message names the argument, the expected and the
                received value. Nothing is stepped then.
        """
        self._check_open()
        actions_t = self._check_actions(actions)
        with wp.ScopedDevice(self._wp_device):
            if self._step_graph is not None:
                self._actions_in_t.copy_(actions_t)
                self._warp_waits_for_torch()
                wp.capture_launch(self._step_graph)
            else:
                self._warp_waits_for_torch()
                self._device_step(wp.from_torch(actions_t, dtype=wp.float32))
            self._torch_waits_for_warp()
        self._warn_overflow_once()
        return self._obs_t, self._reward_t, self._terminated_t, self._truncated_t, self._step_info

    def _device_step(self, actions: wp.array) -> None:
        """Steps 1-7 of :meth:`step` on the device from validated actions (num_envs, action_dim) float32;
        launches only, no host synchronization, so the whole step can be captured as one graph."""
        self.launch_per_world(
            kernels.prepare_actions,
            inputs=[actions, -1.0, 1.0],
            outputs=[self._actions, self._nonfinite_action],
        )
        if self._action_history is not None:
            self.launch_per_world(kernels.delay_actions, inputs=[self._action_history], outputs=[self._actions])
        self._apply_actions()
        if self.config.push_interval > 0.0 and self.config.push_velocity > 0.0:
            interval = max(1, round(self.config.push_interval / self.control_dt))
            self.launch_per_world(
                kernels.push_roots,
                inputs=[
                    self._episode_length,
                    interval,
                    float(self.config.push_velocity),
                    self.model.joint_dof_world_start,
                ],
                outputs=[self._noise_rng_state, self.state_0.joint_qd],
            )
        self._pre_physics()
        if self._capturing:
            self._simulate()  # inline: a graph launched inside a capture would not be recorded
        else:
            self.physics()

        next_step = self.autoreset_mode == AutoresetMode.NEXT_STEP
        skip = self._next_step_mask if next_step else self._no_world
        self._update_contact_wrenches()
        if next_step:
            self._if_any(self._any_pending, self._reset_worlds, self._next_step_mask)
        self._post_physics()
        self._compute_terminations(self._terminated, self._truncated)
        self._find_nonfinite()
        self._measure_penetration()
        self.launch_per_world(
            kernels.finalize_dones,
            inputs=[
                self._overflow_flags,
                self._nonfinite,
                skip,
                self.num_envs,
                self.max_episode_steps,
                bool(self.config.overflow_is_terminal),
                bool(self.config.penetration_is_terminal),
            ],
            outputs=[
                self._episode_length,
                self._terminated,
                self._truncated,
                self._overflow,
                self._nonfinite_action,
                self._penetration,
                self._overflow_seen,
            ],
        )
        self._compute_rewards(self._reward_terms)
        self.launch_per_world(
            kernels.accumulate_rewards,
            inputs=[
                len(self.reward_terms),
                self._reward_weights,
                skip,
                self._terminated,
                self._truncated,
                self._overflow,
                self._episode_length,
            ],
            outputs=[
                self._reward_terms,
                self._reward,
                self._episode_return,
                self._episode_term_sums,
                self._done_mask,
                self._final_return,
                self._final_length,
                self._final_term_sums,
                self._final_overflow,
                self._nonfinite,
            ],
        )

        if self.terminations:
            self.launch_per_world(
                kernels.copy_final_flags,
                inputs=[len(self.terminations), self._done_mask, self._termination_flags],
                outputs=[self._final_termination_flags],
            )
        self.launch_per_world(
            kernels.copy_final_flags,
            inputs=[1, self._done_mask, self._penetration],
            outputs=[self._final_penetration],
        )
        wp.launch(kernels.clear_global_entry, 1, inputs=[self._overflow_flags, self.num_envs], device=self._wp_device)
        self._any_done.zero_()
        self.launch_per_world(kernels.flag_any_world, inputs=[self._done_mask], outputs=[self._any_done])

        self._observe()
        if self.autoreset_mode == AutoresetMode.SAME_STEP:
            # final_obs is copied every step (cheap, and the same bits whichever worlds ended); the reset and the
            # second observation pass run on the device only when a world ended.
            wp.copy(self._final_obs, self._obs)
            if self._camera is not None:
                wp.copy(self._final_pixels, self._pixels)
            self._if_any(self._any_done, self._reset_ended_worlds)
        elif next_step:
            wp.copy(self._next_step_mask, self._done_mask)
            wp.copy(self._any_pending, self._any_done)

    def _reset_ended_worlds(self) -> None:
        """SAME_STEP autoreset: reset the ended worlds, observe the new episodes' start."""
        self._reset_worlds(self._done_mask)
        self._observe(redraw=self._done_mask)

    def _if_any(self, flag: wp.array, branch: Any, *args: Any) -> None:
        """Run ``branch(*args)`` when the device flag ``flag[0]`` (int32) is set, without a host read.

        In a capture this records a conditional graph node (Warp's ``capture_if``: CUDA 12.4+, and Warp's CPU
        graphs); eagerly on the CPU it reads the flag (free there). Where conditional nodes are unavailable the
        branch always runs: its launches are masked and then select nothing.
        """
        # Eager CUDA stepping (debugging) also runs the branch masked: reading the flag would sync the host.
        if not self._conditional_resets or (self._wp_device.is_cuda and not self._capturing):
            branch(*args)
        else:
            wp.capture_if(flag, on_true=lambda: branch(*args))

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
        """Scale physical parameters per world, relative to the model as built.

        ``friction_scale`` multiplies the friction coefficient ``mu`` of every shape of a world,
        ``mass_scale`` the mass and inertia of every body of a world (centres of mass unchanged); the
        solver is notified (``notify_model_changed``) so the next step uses them. Worlds given a scale of 1
        keep their nominal values exactly. Reset randomization (``randomize_*_scale``) replaces these at
        each reset of a world.

        Args:
            friction_scale: (num_envs,) factors > 0, or None to leave friction unchanged.
            mass_scale: (num_envs,) factors > 0, or None to leave masses unchanged.

        Raises:
            ValueError: On a wrong shape or dtype, or a factor that is not finite and > 0 in float32 (what the model
                holds); nothing changes then.
            RuntimeError: If the env is closed.
        """
        self._check_open()
        checked = {}
        for name, value in (("friction_scale", friction_scale), ("mass_scale", mass_scale)):
            if value is None:
                continue
            raw = np.asarray(value.cpu() if isinstance(value, torch.Tensor) else value)
            if raw.dtype.kind not in "iuf":
                raise ValueError(f"{name}: expected {self.num_envs} real factors > 0, got dtype {raw.dtype}")
            with np.errstate(over="ignore", under="ignore"):
                arr = raw.astype(np.float32)
            if arr.shape != (self.num_envs,) or not (np.isfinite(arr).all() and (arr > 0).all()):
                raise ValueError(f"{name}: expected {self.num_envs} finite factors > 0 (in float32), got {value!r}")
            checked[name] = arr
        if "friction_scale" in checked:
            self._world_friction_scale.assign(checked["friction_scale"])
        if "mass_scale" in checked:
            self._world_mass_scale.assign(checked["mass_scale"])
        self._apply_world_scales("friction_scale" in checked, "mass_scale" in checked)

    def _randomize(self, world_mask: wp.array) -> None:
        """Draw the reset randomization of the selected worlds (``randomize_*_scale``) and apply it."""
        draws = (
            (self.config.randomize_friction_scale, self._world_friction_scale),
            (self.config.randomize_mass_scale, self._world_mass_scale),
            (self.config.randomize_drive_gain_scale, self._world_drive_gain_scale),
        )
        for bounds, scale in draws:
            if bounds is not None:
                self.launch_per_world(
                    kernels.draw_world_scales,
                    inputs=[world_mask, float(bounds[0]), float(bounds[1])],
                    outputs=[self._rng_state, scale],
                )
        self._apply_world_scales(*(bounds is not None for bounds, _ in draws), world_mask)

    def _apply_world_scales(
        self, friction: bool, mass: bool, drive_gains: bool = False, world_mask: wp.array | None = None
    ) -> None:
        """Write nominal x world scale into the model and notify the solver (device-only, graph-capturable).
        Worlds whose scale did not change are rewritten with the same value, bit for bit."""
        model, flags = self.model, 0
        if friction:
            wp.launch(
                kernels.scale_shape_friction,
                model.shape_count,
                inputs=[model.shape_world, self._nominal["mu"], self._world_friction_scale],
                outputs=[model.shape_material_mu],
                device=self._wp_device,
            )
            flags |= newton.ModelFlags.SHAPE_PROPERTIES
        if mass:
            wp.launch(
                kernels.scale_body_mass,
                model.body_count,
                inputs=[model.body_world, self._nominal["mass"], self._nominal["inertia"], self._world_mass_scale],
                outputs=[model.body_mass, model.body_inv_mass, model.body_inertia, model.body_inv_inertia],
                device=self._wp_device,
            )
            flags |= newton.ModelFlags.BODY_INERTIAL_PROPERTIES
        if drive_gains:
            self.launch_per_world(
                kernels.scale_world_drive_gains,
                inputs=[
                    model.joint_dof_world_start,
                    self._nominal["ke"],
                    self._nominal["kd"],
                    self._world_drive_gain_scale,
                ],
                outputs=[model.joint_target_ke, model.joint_target_kd],
            )
            flags |= newton.ModelFlags.JOINT_DOF_FORCE_PROPERTIES
        if flags:
            self._notify_model_changed(flags, world_mask)

    def close_extras(self, **kwargs: Any) -> None:
        """Release the captured graphs and the cameras, and drop the references to Newton objects, so their device
        memory is freed now rather than at a later garbage collection (a camera refers back to the env)."""
        self._renderer = None
        self._camera = None
        self._graph = None
        self._step_graph = None
        self._torch_streams.clear()
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
        if self._graph is not None:
            wp.capture_launch(self._graph)
        else:
            self._simulate()

    def _simulate(self) -> None:
        """``decimation`` physics steps; the result is always in ``state_0`` (graph-capturable)."""
        state_in, state_out = self.state_0, self.state_1
        for _ in range(self.decimation):
            self._before_substep(state_in)
            if self.collision_pipeline is not None:
                self.collision_pipeline.collide(state_in, self.contacts)
            self.solver.step(
                state_in, state_out, self.control, self.contacts, self.physics_dt, observables=self.observables
            )
            self._after_substep(state_out)
            state_in, state_out = state_out, state_in
        if state_in is not self.state_0:
            self.state_0.assign(state_in)

    def _reset_worlds(self, world_mask: wp.array) -> None:
        """Write initial states of the worlds in ``world_mask`` (num_envs + 1,) and clear their history."""
        model = self.model
        self._reset_physics_state(world_mask)
        self.launch_per_world(
            kernels.reset_episode_statistics,
            inputs=[world_mask, len(self.reward_terms)],
            outputs=[self._episode_length, self._episode_return, self._episode_term_sums],
        )
        self._randomize(world_mask)
        if self._action_history is not None:
            self.launch_per_world(kernels.zero_world_history, inputs=[world_mask], outputs=[self._action_history])
        # A reset world has applied no action and no effort yet (observations of both start at 0).
        self.launch_per_world(kernels.zero_world_rows, inputs=[world_mask], outputs=[self._actions])
        self.launch_per_world(
            kernels.zero_world_dofs, inputs=[world_mask, model.joint_dof_world_start], outputs=[self.control.joint_f]
        )
        if self.body_contact_wrench is not None:
            self.launch_per_world(
                kernels.zero_world_body_wrenches,
                inputs=[world_mask, model.body_world_start],
                outputs=[self.body_contact_wrench],
            )
        self._reset_task(world_mask)

    def _update_contact_wrenches(self) -> None:
        if self.body_contact_wrench is None:
            return
        c, m = self.contacts, self.model
        self.body_contact_wrench.zero_()
        wp.launch(
            kernels.body_contact_wrenches,
            c.rigid_contact_max,
            inputs=[
                c.rigid_contact_count,
                c.rigid_contact_shape0,
                c.rigid_contact_shape1,
                c.rigid_contact_point0,
                c.rigid_contact_point1,
                self.observables.contact_f,
                m.shape_body,
                self.state_0.body_q,
                m.body_com,
            ],
            outputs=[self.body_contact_wrench],
            device=self._wp_device,
        )

    def _observe(self, redraw: wp.array | None = None) -> None:
        """Observations of every world into ``self._obs`` (and the camera images); observation noise is drawn
        anew for the worlds in ``redraw`` ((num_envs + 1,) bool; None: every world), the others get their last
        draw again."""
        out = self._obs
        self._compute_observations(out)
        if self._obs_noise is not None:
            self.launch_per_world(
                kernels.add_observation_noise,
                inputs=[self._obs_noise_std, self._no_world if redraw is None else redraw, redraw is None],
                outputs=[self._noise_rng_state, self._obs_noise, out],
            )
        wp.launch(
            kernels.sanitize_observations,
            out.shape,
            inputs=[float(self.config.obs_clip)],
            outputs=[out],
            device=self._wp_device,
        )
        if self._camera is not None:
            if self.obs_mode == "rgb":
                self._camera.draw(color=self._pixels)
            else:
                self._camera.draw(depth=self._pixels)

    def _flag_views(self) -> tuple[torch.Tensor, ...]:
        """The per-world cause flags reported in ``info``: overflow, non-finite state, non-finite action,
        penetration, then the task's termination terms."""
        return (
            self._overflow_t,
            self._nonfinite_t,
            self._nonfinite_action_t,
            self._penetration_t,
            *self._termination_views.values(),
        )

    @property
    def _torch_stream(self) -> wp.Stream | None:
        """Torch's current stream on the env device, as a Warp stream (read at every call: a caller may switch
        streams between calls); None on the CPU."""
        if not self._wp_device.is_cuda:
            return None
        stream = torch.cuda.current_stream(self.torch_device)
        cached = self._torch_streams.get(stream.cuda_stream)
        if cached is None:
            cached = self._torch_streams[stream.cuda_stream] = wp.stream_from_torch(stream)
        return cached

    def _warp_waits_for_torch(self) -> None:
        """Order the Warp stream after the work torch queued so far (tensors written by torch); no host sync."""
        torch_stream = self._torch_stream
        if torch_stream is not None:
            self._wp_device.stream.wait_stream(torch_stream)

    def _torch_waits_for_warp(self) -> None:
        """Order torch's current stream after the Warp work queued so far (the returned views); no host sync."""
        torch_stream = self._torch_stream
        if torch_stream is not None:
            torch_stream.wait_stream(self._wp_device.stream)

    def _check_open(self) -> None:
        if self.closed:
            raise RuntimeError(f"{type(self).__name__} is closed")

    def _check_actions(self, actions: Any) -> torch.Tensor:
        return check_actions(actions, (self.num_envs, self.action_dim), self.torch_device, self.nonfinite_actions)

    def _check_reset_mask(self, mask: Any) -> torch.Tensor:
        return check_reset_mask(mask, self.num_envs, self.torch_device)

    def _warn_overflow_once(self) -> None:
        # On the CPU the flag is host memory; on CUDA this reads one int (a sync) every 64 steps only.
        if self._overflow_warned:
            return
        self._steps_since_check += 1
        if self._wp_device.is_cuda and self._steps_since_check < 64:
            return
        self._steps_since_check = 0
        if int(self._overflow_seen_t[0]) == 0:
            return
        self._overflow_warned = True
        warnings.warn(
            f"{type(self).__name__}: {self._overflow_advice()} Their episodes were ended and reported in "
            f"info['constraint_overflow']. This warning is shown once.",
            RuntimeWarning,
            stacklevel=3,
        )


def throughput_kwargs(device: str | None) -> dict[str, Any]:
    """Env keywords for loops that must not wait for the device every step (training, benchmarks, rollouts).

    On CUDA (``device``, or Warp's preferred device for None), ``nonfinite_actions="end_episode"``: a NaN or
    infinite action ends its world's episode as a truncation, reported in ``info["nonfinite_action"]`` and the
    episode statistics, instead of raising ValueError, which needs a host read of every action batch.
    """
    try:
        cuda = wp.get_device(device).is_cuda
    except Exception:  # not a device: the env's own check names the argument
        return {}
    return {"nonfinite_actions": "end_episode"} if cuda else {}


def check_actions(
    actions: Any, expected: tuple[int, int], device: torch.device, nonfinite_actions: str
) -> torch.Tensor:
    """Validate a batch of actions and return it as a contiguous float32 tensor on ``device``.

    Numpy arrays of any real dtype are clipped to [-1, 1] in their own precision and converted; torch tensors
    must be float32, dense and on ``device``. Non-finite entries raise unless ``nonfinite_actions`` is
    ``"end_episode"`` (then they pass through for the device to flag).

    Raises:
        TypeError: If ``actions`` is neither a torch tensor nor a numpy array.
        ValueError: On a wrong shape, dtype, layout or device, or a non-finite entry.
    """
    if isinstance(actions, np.ndarray):
        if actions.dtype.kind not in "fiu":
            raise ValueError(f"actions: expected a real dtype, got numpy {actions.dtype}")
        if actions.shape != expected:
            raise ValueError(f"actions: expected shape {expected}, got {actions.shape}")
        finite = np.isfinite(actions)
        if nonfinite_actions == "raise" and not finite.all():
            bad = np.flatnonzero(~finite.all(axis=1))[:8].tolist()
            raise ValueError(f"actions: expected finite values, got NaN or inf in world(s) {bad}")
        # Clipped in the input's own precision first, so finite values beyond float32 clip as documented;
        # non-finite entries stay NaN for the device to flag.
        clipped = np.where(finite, np.clip(actions, -1.0, 1.0), np.nan).astype(np.float32)
        return torch.from_numpy(clipped).to(device)
    if isinstance(actions, torch.Tensor):
        if actions.dtype != torch.float32:
            raise ValueError(f"actions: expected dtype torch.float32, got {actions.dtype}")
        if actions.layout != torch.strided:
            raise ValueError(f"actions: expected a dense (strided) tensor, got layout {actions.layout}")
        if actions.device != device:
            raise ValueError(f"actions: expected device {device}, got {actions.device}")
        if tuple(actions.shape) != expected:
            raise ValueError(f"actions: expected shape {expected}, got {tuple(actions.shape)}")
        # Lazy negation / conjugation bits are not in the memory Warp reads: materialize them.
        actions = actions.detach().resolve_neg().resolve_conj()
        if not actions.is_contiguous():
            actions = actions.contiguous()
    else:
        raise TypeError(f"actions: expected a torch.Tensor or numpy.ndarray, got {type(actions).__name__}")
    if nonfinite_actions != "raise":
        return actions
    finite = torch.isfinite(actions).all(dim=1)
    if not bool(finite.all()):
        bad = torch.nonzero(~finite).flatten()[:8].tolist()
        raise ValueError(f"actions: expected finite values, got NaN or inf in world(s) {bad}")
    return actions


def check_reset_mask(mask: Any, num_envs: int, device: torch.device) -> torch.Tensor:
    """Validate ``options["reset_mask"]``: a bool numpy array or dense torch tensor of shape (num_envs,).

    Raises:
        ValueError: On a wrong type, dtype, layout or shape; the message names ``options['reset_mask']``.
    """
    if isinstance(mask, np.ndarray):
        if mask.dtype != np.bool_:
            raise ValueError(f"options['reset_mask']: expected dtype bool, got numpy {mask.dtype}")
        mask = torch.tensor(mask, device=device)
    elif isinstance(mask, torch.Tensor):
        if mask.dtype != torch.bool:
            raise ValueError(f"options['reset_mask']: expected dtype torch.bool, got {mask.dtype}")
        if mask.layout != torch.strided or mask.device.type == "meta":
            raise ValueError(
                f"options['reset_mask']: expected a dense tensor with data, got layout {mask.layout} on {mask.device}"
            )
        mask = mask.to(device)
    else:
        raise ValueError(
            f"options['reset_mask']: expected a bool numpy array or torch tensor, got {type(mask).__name__}"
        )
    if tuple(mask.shape) != (num_envs,):
        raise ValueError(f"options['reset_mask']: expected shape ({num_envs},), got {tuple(mask.shape)}")
    return mask


_FLOAT32_MAX = float(np.finfo(np.float32).max)
_COLLISION_CAPACITIES = ("rigid_contact_max", "soft_contact_max", "shape_pairs_max", "max_triangle_pairs")


def _device_seed(seed: int) -> int:
    """Map any seed >= 0 to the int32 seed of Warp's ``rand_init``, distinct seeds to distinct streams
    (up to hash collisions), through NumPy's SeedSequence."""
    return int(np.random.SeedSequence(seed).generate_state(1, np.uint32)[0] & 0x7FFFFFFF)


def _check_config_value(field: dataclasses.Field, value: Any) -> None:
    """Reject a config value whose type does not match the field's default (bool vs number, NaN, inf)."""
    default = field.default
    if value is None and "None" in str(field.type):
        return
    if isinstance(default, bool):
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{field.name}: expected a bool, got {value!r}")
    elif isinstance(default, (int, float)):
        if "tuple" in str(field.type) and isinstance(value, (tuple, list)):
            return  # a per-entry sequence; the config's __post_init__ checks its values
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ValueError(f"{field.name}: expected a number, got {value!r}")
        if not math.isfinite(float(value)) or abs(float(value)) > _FLOAT32_MAX:
            raise ValueError(f"{field.name}: expected a finite number within float32 range, got {value!r}")
    elif isinstance(default, tuple) and not (isinstance(value, (tuple, list)) and len(value) == len(default)):
        raise ValueError(f"{field.name}: expected a sequence of {len(default)} numbers, got {value!r}")
