"""``steel_envs/ClothFold-v0``: fold a square cloth in half by its two grasped corners, on SolverVBD."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import warp as wp
from steel_envs.envs.cloth import PARTICLE_RADIUS, ClothScene, ClothSceneConfig

from steel_envs.benchmark import scripted_success
from steel_envs.ranges import COST_WEIGHT, at_least, between, declare, positive
from steel_envs.registration import register_task
from steel_envs.spec import ObservationBlock, RewardTerm, term
from steel_envs.torch_views import to_torch
from steel_envs.train_config import PpoConfig

__all__ = ["ClothFoldConfig", "ClothFoldEnv", "ClothFoldSingleEnv", "scripted_policy"]


@dataclass(kw_only=True)
class ClothFoldConfig(ClothSceneConfig):
    """Reward weights and the success distance of the half fold."""

    corner_weight: float = 1.0
    """Weight of the mean distance of the grasped corners to the corners they fold onto [1/m]."""
    fold_weight: float = 1.0
    """Weight of the mean distance between mirrored particles of the two halves [1/m] (SoftGym ClothFold)."""
    flatness_weight: float = 1.2
    """Weight of the mean displacement of the resting half from its flat start [1/m] (SoftGym's 1.2)."""
    observation_stride: int = 2
    """Every this many grid rows and columns (corners included) a particle is observed; divides cloth_cells."""
    success_distance: float = 0.03
    """Mean mirrored-particle distance [m] below which the fold counts as a success (folded layers rest ~5 mm
    apart, the self-contact distance; ``scripted_policy``'s fold ends at 5.3 mm)."""
    start_offset: float = 0.05
    """Bound of the flat cloth's start offset along x and y, U(-d, d) per axis at every reset [m]."""
    start_yaw: float = 0.25
    """Bound of the flat cloth's start rotation about z (its centre), U(-a, a) at every reset [rad]."""
    corner_noise: float = 0.005
    """Bound of the grasped corners' displacement from the flat start, U(-e, e) along x and y and U(0, e) up, at
    every reset [m] (the neighbouring cells start stretched by up to ~14 %)."""

    field_ranges = declare(
        corner_weight=COST_WEIGHT,
        fold_weight=COST_WEIGHT,
        flatness_weight=COST_WEIGHT,
        observation_stride=at_least(1, "a stride in grid rows; it also divides cloth_cells", integer=True),
        success_distance=positive("a distance [m]; 0 makes success unreachable"),
        start_offset=at_least(0.0, "an offset bound [m]"),
        start_yaw=between(0.0, math.pi / 4, "a rotation bound [rad]"),
        corner_noise=between(0.0, 0.01, "a displacement bound [m]; larger ones tear the start's cells apart"),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        s = self.observation_stride
        if not float(s).is_integer() or not 1 <= s <= self.cloth_cells or int(self.cloth_cells) % int(s):
            raise ValueError(f"observation_stride: expected an int >= 1 dividing cloth_cells, got {s!r}")
        # The farthest a grasped corner can start from the origin along x or y: it must start in the workspace.
        reach = 0.5 * self.cloth_size * (math.cos(self.start_yaw) + math.sin(self.start_yaw))
        if not reach + self.start_offset + self.corner_noise <= self.workspace_half_extent:
            raise ValueError(
                f"start_offset: expected at most workspace_half_extent - {reach + self.corner_noise:.4g} m (the "
                f"cloth's rotated corners start inside the workspace), got {self.start_offset!r}"
            )


@wp.struct
class ClothFoldState:
    """What ClothFold's terms read: the particles and their start positions, the index lists of the grid (within a
    world), the commanded corner velocities, the success flag and distance."""

    particle_world_start: wp.array[wp.int32]
    particle_q: wp.array[wp.vec3]
    rest_q: wp.array[wp.vec3]
    """The flat start of every particle this episode [m] (before the grasped corners' noise)."""
    samples: wp.array[wp.int32]
    """Observed particles, row by row."""
    moving: wp.array[wp.int32]
    """Particles of the half that folds, ``j < cells / 2``."""
    mirrored: wp.array[wp.int32]
    """The particle each of ``moving`` folds onto."""
    resting: wp.array[wp.int32]
    """Particles of the half that stays, ``j > cells / 2``."""
    corners: wp.array[wp.int32]
    """The two grasped corners."""
    corner_targets: wp.array[wp.int32]
    """The corners they fold onto."""
    actions: wp.array2d[wp.float32]
    max_corner_speed: wp.float32
    success: wp.array[wp.bool]
    success_distance: wp.float32


@wp.func
def _particle(s: Any, w: int, i: int) -> wp.vec3:
    return s.particle_q[s.particle_world_start[w] + i]


@wp.func
def _centre(s: Any, w: int) -> wp.vec3:
    start = s.particle_world_start[w]
    count = s.particle_world_start[w + 1] - start
    centre = wp.vec3(0.0, 0.0, 0.0)
    for i in range(count):
        centre += s.particle_q[start + i]
    return centre / float(count)


@wp.func
def _fold_distance(s: Any, w: int) -> float:
    fold = float(0.0)
    for k in range(s.moving.shape[0]):
        fold += wp.length(_particle(s, w, s.moving[k]) - _particle(s, w, s.mirrored[k]))
    return fold / float(s.moving.shape[0])


@wp.kernel(enable_backward=False)
def _update_success(s: ClothFoldState):
    """After the physics: the mean mirrored-particle distance is below the success distance."""
    w = wp.tid()
    s.success[w] = _fold_distance(s, w) < s.success_distance


@wp.kernel(enable_backward=False)
def _draw_start(
    world_mask: wp.array[wp.bool],
    offset_bound: wp.float32,
    yaw_bound: wp.float32,
    corner_noise: wp.float32,
    corners: wp.array[wp.int32],
    particle_world_start: wp.array[wp.int32],
    model_q: wp.array[wp.vec3],
    rng_state: wp.array[wp.uint32],
    particle_q: wp.array[wp.vec3],
    rest_q: wp.array[wp.vec3],
):
    """A reset world's start: its flat cloth (the model's) turned about its centre by U(-yaw_bound, yaw_bound) about
    z and moved by U(-offset_bound, offset_bound) along x and y, then its grasped corners displaced by U(-e, e) along
    x and y and U(0, e) up; ``rest_q`` keeps the flat start, before the corners' displacement."""
    w = wp.tid()
    if not world_mask[w]:
        return
    rng = rng_state[w]
    dx = offset_bound * (2.0 * wp.randf(rng) - 1.0)
    dy = offset_bound * (2.0 * wp.randf(rng) - 1.0)
    yaw = yaw_bound * (2.0 * wp.randf(rng) - 1.0)
    start, end = particle_world_start[w], particle_world_start[w + 1]
    centre = wp.vec3(0.0, 0.0, 0.0)
    for i in range(start, end):
        centre += model_q[i]
    centre = centre / float(end - start)
    c, s = wp.cos(yaw), wp.sin(yaw)
    for i in range(start, end):
        r = model_q[i] - centre
        p = wp.vec3(centre[0] + c * r[0] - s * r[1] + dx, centre[1] + s * r[0] + c * r[1] + dy, model_q[i][2])
        particle_q[i] = p
        rest_q[i] = p
    for k in range(corners.shape[0]):
        i = start + corners[k]
        ex = corner_noise * (2.0 * wp.randf(rng) - 1.0)
        ey = corner_noise * (2.0 * wp.randf(rng) - 1.0)
        particle_q[i] = particle_q[i] + wp.vec3(ex, ey, corner_noise * wp.randf(rng))
    rng_state[w] = rng


@term("mean_i p_i")
def cloth_centre(s: Any, w: int) -> wp.vec3:
    """The cloth's centre, the mean position of all its particles [m]."""
    return _centre(s, w)


@term("p_sample - centre")
def sampled_particles(s: Any, w: int, i: int) -> float:
    """Entry ``i % 3`` of observed particle ``i // 3``'s position relative to the centre [m]."""
    p = _particle(s, w, s.samples[i // 3]) - _centre(s, w)
    return p[i % 3]


@term("a * v_max")
def corner_commands(s: Any, w: int, i: int) -> float:
    """Commanded velocity entry ``i`` of the grasped corners [m/s]."""
    return s.actions[w, i] * s.max_corner_speed


@term("mean_k |p(grasped_k) - p(target_k)|")
def corner_distance(s: Any, w: int) -> float:
    """Mean distance of the grasped corners to the corners they fold onto [m]."""
    corner = float(0.0)
    for k in range(s.corners.shape[0]):
        corner += wp.length(_particle(s, w, s.corners[k]) - _particle(s, w, s.corner_targets[k]))
    return corner / float(s.corners.shape[0])


@term("mean |p(i, j) - p(i, cells - j)| over j < cells / 2", source="SoftGym ClothFold particle-pair distance")
def fold_distance(s: Any, w: int) -> float:
    """Mean distance between the particles of the folding half and those they fold onto [m]."""
    return _fold_distance(s, w)


@term("mean |p - p_start| over j > cells / 2", source="SoftGym ClothFold fixed-half penalty")
def resting_drift(s: Any, w: int) -> float:
    """Mean displacement of the resting half from its flat start [m]."""
    start = s.particle_world_start[w]
    drift = float(0.0)
    for k in range(s.resting.shape[0]):
        i = start + s.resting[k]
        drift += wp.length(s.particle_q[i] - s.rest_q[i])
    return drift / float(s.resting.shape[0])


class ClothFoldEnv(ClothScene):
    """Fold a square cloth in half: bring the two grasped corners of its -y edge onto the two corners of its +y
    edge, the resting half staying flat (SoftGym's ClothFold task on SolverVBD cloth with self-contact).

    ## Action space
    | index | action | min | max | unit |
    |---|---|---|---|---|
    | 0-2 | velocity of grasped corner (0, 0) along x, y, z, times ``max_corner_speed`` (0.5 m/s) | -1 | 1 | 1 |
    | 3-5 | velocity of grasped corner (cells, 0), likewise | -1 | 1 | 1 |

    ## Observation space (default 9 x 9 cloth, stride 2: 84 values)
    | index | observation | unit |
    |---|---|---|
    | 0-2 | cloth centre (mean position of all particles) | m |
    | 3-77 | positions relative to the cloth centre of the 25 particles on every 2nd row and column, row by row | m |
    | 78-83 | commanded velocities of the two grasped corners | m/s |

    Other sizes: ``3 + 3 K^2 + 6`` values with ``K = cloth_cells / observation_stride + 1``.

    ## Rewards (all costs; weights in the config, also settable by term name: ``reward_weights={"fold": 2.0}``)
    - ``reward_corner = -corner_weight * mean_k |p(grasped_k) - p(target_k)|``, targets the +y edge's corners;
    - ``reward_fold = -fold_weight * mean |p(i, j) - p(i, cells - j)|`` over the moving half ``j < cells / 2``
      (SoftGym ClothFold's particle-pair distance);
    - ``reward_flatness = -flatness_weight * mean |p - p_start|`` over the resting half ``j > cells / 2``
      (SoftGym ClothFold's penalty on moving the fixed half, weight 1.2): the resting half must stay flat and in
      place.

    ``info["success"]``: the mean mirrored-particle distance is below ``success_distance`` (3 cm).

    ## Starting state
    The cloth lies flat on the ground, at rest, turned about its centre by U(-0.25, 0.25) rad about z and moved by
    U(-5, 5) cm along x and y from the origin (``start_yaw``, ``start_offset``); the grasped corners start displaced
    by U(-5, 5) mm along x and y and U(0, 5) mm up (``corner_noise``). Drawn at every reset from the env's seed.

    ## Episode end
    Never terminated by the task (a non-finite state terminates); truncated after 100 steps (5 s) or on a
    contact-buffer overflow (``info["constraint_overflow"]``).
    """

    config_cls = ClothFoldConfig
    config: ClothFoldConfig
    rewards = (
        RewardTerm("corner", corner_distance, weight="corner_weight", cost=True),
        RewardTerm("fold", fold_distance, weight="fold_weight", cost=True),
        RewardTerm("flatness", resting_drift, weight="flatness_weight", cost=True),
    )
    default_max_episode_steps = 100
    train_config = PpoConfig(
        num_envs=64,
        num_steps_per_env=25,
        max_iterations=300,
        # No early end: without it every world is at the same step of its episode and each rollout holds one phase
        # of the fold (grasp, lift, carry or release).
        init_at_random_ep_len=True,
    )
    """PPO settings of ``steel-envs train`` for this task (the learner is not imported here)."""
    benchmark = scripted_success("deformable", "ClothFold-v0")

    def observation_blocks(self) -> tuple[ObservationBlock, ...]:
        stride = int(self.config.observation_stride)
        k = int(self.config.cloth_cells) // stride + 1
        nth = {1: "", 2: "2nd ", 3: "3rd "}.get(stride, f"{stride}th ")
        every = f"every {nth}row and column"
        return (
            ObservationBlock("cloth_centre", 3, cloth_centre, "cloth centre (mean position of all particles)", "m"),
            ObservationBlock(
                "particles",
                3 * k * k,
                sampled_particles,
                f"positions relative to the cloth centre of the {k * k} particles on {every}, row by row",
                "m",
            ),
            ObservationBlock(
                "corner_commands", 6, corner_commands, "commanded velocities of the two grasped corners", "m/s"
            ),
        )

    def _setup_task(self) -> None:
        n = int(self.config.cloth_cells)
        stride = int(self.config.observation_stride)
        half = n // 2
        idx = self.grid_index

        def indices(values: list[int]) -> wp.array:
            return wp.array(np.array(values, np.int32), dtype=wp.int32)

        rows = range(0, n + 1, stride)
        moving = [(i, j) for j in range(half) for i in range(n + 1)]
        state = ClothFoldState()
        state.particle_world_start, state.particle_q = self.model.particle_world_start, self.state_0.particle_q
        state.rest_q = wp.clone(self.model.particle_q)
        state.samples = indices([idx(i, j) for j in rows for i in rows])
        state.moving = indices([idx(i, j) for i, j in moving])
        state.mirrored = indices([idx(i, n - j) for i, j in moving])
        state.resting = indices([idx(i, j) for j in range(half + 1, n + 1) for i in range(n + 1)])
        state.corners, state.corner_targets = self._corners, indices([idx(0, n), idx(n, n)])
        state.actions, state.max_corner_speed = self.actions, float(self.config.max_corner_speed)
        state.success = wp.zeros(self.num_envs, dtype=wp.bool)
        state.success_distance = float(self.config.success_distance)
        self.term_state = state
        self.task_info = {"success": to_torch(state.success)}

    def _reset_task(self, world_mask: wp.array) -> None:
        # After SolverVBD.reset copied the model's particles: the solver takes a pose authored before its next step.
        c, s = self.config, self.term_state
        self.launch_per_world(
            _draw_start,
            inputs=[
                world_mask,
                float(c.start_offset),
                float(c.start_yaw),
                float(c.corner_noise),
                s.corners,
                s.particle_world_start,
                self.model.particle_q,
            ],
            outputs=[self.rng_state, s.particle_q, s.rest_q],
        )

    def _post_physics(self) -> None:
        self.launch_per_world(_update_success, inputs=[self.term_state])


ClothFoldSingleEnv = register_task("steel_envs/ClothFold-v0", ClothFoldEnv)


_ARC = 0.3
"""Height of a carried corner per m of horizontal distance still to go (at most ``_ARC * _ARC_REACH``)."""
_ARC_REACH = 0.4
"""Horizontal distance [m] beyond which the carrying height stops growing."""
_HOLD_HEIGHT = 3.0 * PARTICLE_RADIUS
"""Height of a corner laid on its target: one particle radius above the target corner's top."""
_XY_GAIN = 4.0
"""Action per m of horizontal distance to the target (saturating at 25 cm)."""
_Z_GAIN = 10.0
"""Action per m of height below or above the arc (saturating at 10 cm)."""
_LIFT_FIRST = 0.5
"""A corner below this fraction of its arc height moves up only (no horizontal motion yet)."""


def scripted_policy(obs: torch.Tensor) -> torch.Tensor:
    """A scripted, stateless solver of ClothFold-v0: carry each grasped corner in an arc onto the corner it folds
    onto, re-aimed every step from the observed positions.

    For each grasped corner (observed sample ``(0, 0)``, ``(K-1, 0)``) and its target (``(0, K-1)``,
    ``(K-1, K-1)``), both absolute (cloth centre plus relative position), with ``d`` the horizontal distance to
    go: the corner's height is steered to the arc ``0.3 * min(d, 0.4) + 3 * radius`` (13.5 cm at the start, one
    particle radius above the target corner's top at the end) with action ``10 * (arc - z)``; it moves
    horizontally towards the target with action ``4 * (target - corner)`` per axis, but only once it is above
    half its arc height, so it lifts before it carries and lowers as it arrives. Actions are clipped to [-1, 1].
    Measured on 100 episodes: see ``docs/guides/evaluation.md``, "Scripted solvers".

    Usable as ``steel-envs evaluate steel_envs/ClothFold-v0 --policy steel_envs.tasks.cloth_fold:scripted_policy``.

    Args:
        obs: Observations (N, 3 + 3 K^2 + 6) float32 in the layout of :class:`ClothFoldEnv` (any grid size and
            stride), on any device.

    Returns:
        Actions (N, 6) float32 in [-1, 1], the two grasped corners' x, y, z velocities over ``max_corner_speed``,
        on ``obs``'s device.
    """
    k = round(((obs.shape[-1] - 9) / 3) ** 0.5)
    positions = obs[:, :3].unsqueeze(1) + obs[:, 3 : 3 + 3 * k * k].reshape(-1, k * k, 3)
    grasped = positions[:, [0, k - 1]]
    target = positions[:, [k * (k - 1), k * k - 1]]
    to_go = target[..., :2] - grasped[..., :2]
    distance = to_go.norm(dim=-1, keepdim=True)
    arc = _ARC * distance.clamp_max(_ARC_REACH) + _HOLD_HEIGHT
    lifted = grasped[..., 2:3] >= _LIFT_FIRST * arc
    xy = torch.where(lifted, _XY_GAIN * to_go, torch.zeros_like(to_go))
    z = _Z_GAIN * (arc - grasped[..., 2:3])
    return torch.cat([xy, z], dim=-1).reshape(-1, 6).clamp(-1.0, 1.0).to(torch.float32)
