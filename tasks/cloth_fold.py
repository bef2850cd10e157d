"""``steel_envs/ClothFold-v0``: fold a square cloth in half by its two grasped corners, on SolverVBD."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch
import warp as wp
from steel_envs.envs.cloth import PARTICLE_RADIUS, ClothScene, ClothSceneConfig
from steel_envs.tasks import register_task

from steel_envs.vector_env import ObservationBlock, RewardTerm

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

    def __post_init__(self) -> None:
        super().__post_init__()
        self.require_nonnegative("corner_weight", "fold_weight", "flatness_weight")
        self.require_positive("success_distance")
        s = self.observation_stride
        if not float(s).is_integer() or not 1 <= s <= self.cloth_cells or int(self.cloth_cells) % int(s):
            raise ValueError(f"observation_stride: expected an int >= 1 dividing cloth_cells, got {s!r}")


@wp.kernel(enable_backward=False)
def _observe(
    particle_world_start: wp.array[wp.int32],
    particle_q: wp.array[wp.vec3],
    samples: wp.array[wp.int32],
    actions: wp.array2d[wp.float32],
    max_speed: wp.float32,
    obs: wp.array2d[wp.float32],
):
    w = wp.tid()
    start = particle_world_start[w]
    count = particle_world_start[w + 1] - start
    centre = wp.vec3(0.0, 0.0, 0.0)
    for i in range(count):
        centre += particle_q[start + i]
    centre = centre / float(count)
    for k in range(3):
        obs[w, k] = centre[k]
    for s in range(samples.shape[0]):
        p = particle_q[start + samples[s]] - centre
        for k in range(3):
            obs[w, 3 + 3 * s + k] = p[k]
    o = 3 + 3 * samples.shape[0]
    for k in range(6):
        obs[w, o + k] = actions[w, k] * max_speed


@wp.kernel(enable_backward=False)
def _rewards(
    particle_world_start: wp.array[wp.int32],
    particle_q: wp.array[wp.vec3],
    rest_q: wp.array[wp.vec3],
    moving: wp.array[wp.int32],
    mirrored: wp.array[wp.int32],
    resting: wp.array[wp.int32],
    corners: wp.array[wp.int32],
    corner_targets: wp.array[wp.int32],
    success_distance: wp.float32,
    success: wp.array[wp.bool],
    reward_terms: wp.array2d[wp.float32],
):
    w = wp.tid()
    start = particle_world_start[w]
    corner = float(0.0)
    for k in range(corners.shape[0]):
        corner += wp.length(particle_q[start + corners[k]] - particle_q[start + corner_targets[k]])
    corner = corner / float(corners.shape[0])
    fold = float(0.0)
    for k in range(moving.shape[0]):
        fold += wp.length(particle_q[start + moving[k]] - particle_q[start + mirrored[k]])
    fold = fold / float(moving.shape[0])
    drift = float(0.0)
    for k in range(resting.shape[0]):
        i = start + resting[k]
        drift += wp.length(particle_q[i] - rest_q[i])
    drift = drift / float(resting.shape[0])
    reward_terms[0, w] = corner
    reward_terms[1, w] = fold
    reward_terms[2, w] = drift
    success[w] = fold < success_distance


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
    The cloth lies flat on the ground, centred on the origin, at rest; the same every episode.

    ## Episode end
    Never terminated by the task (a non-finite state terminates); truncated after 100 steps (5 s) or on a
    contact-buffer overflow (``info["constraint_overflow"]``).
    """

    config_cls = ClothFoldConfig
    config: ClothFoldConfig
    rewards = (
        RewardTerm("corner", weight="corner_weight", cost=True),
        RewardTerm("fold", weight="fold_weight", cost=True),
        RewardTerm("flatness", weight="flatness_weight", cost=True),
    )
    default_max_episode_steps = 100
    train_defaults: ClassVar[dict] = {
        "num_envs": 64,
        "num_steps_per_env": 25,
        "max_iterations": 300,
        # No early end: without it all 64 worlds are at the same step of their 100-step episode, and each
        # iteration's 25-step rollout holds one quarter of it (grasp, lift, carry or release). Seed 0 without it:
        # training return -49 at iteration 100, evaluated -17.9 with 0 % success after 168 iterations; with it:
        # -11.9 at iteration 103, its iteration-100 checkpoint evaluated -8.8 with 100 % success.
        "init_at_random_ep_len": True,
    }
    """PPO hyper-parameters of ``steel-envs train`` for this task (the learner is not imported here)."""

    def observation_blocks(self) -> tuple[ObservationBlock, ...]:
        stride = int(self.config.observation_stride)
        k = int(self.config.cloth_cells) // stride + 1
        nth = {1: "", 2: "2nd ", 3: "3rd "}.get(stride, f"{stride}th ")
        every = f"every {nth}row and column"
        return (
            ObservationBlock("cloth_centre", 3, "cloth centre (mean position of all particles)", "m"),
            ObservationBlock(
                "particles",
                3 * k * k,
                f"positions relative to the cloth centre of the {k * k} particles on {every}, row by row",
                "m",
            ),
            ObservationBlock("corner_commands", 6, "commanded velocities of the two grasped corners", "m/s"),
        )

    def _setup_task(self) -> None:
        n = int(self.config.cloth_cells)
        stride = int(self.config.observation_stride)
        half = n // 2
        idx = self.grid_index
        rows = range(0, n + 1, stride)
        self._samples = wp.array(np.array([idx(i, j) for j in rows for i in rows], np.int32), dtype=wp.int32)
        moving = [(i, j) for j in range(half) for i in range(n + 1)]
        self._moving = wp.array(np.array([idx(i, j) for i, j in moving], np.int32), dtype=wp.int32)
        self._mirrored = wp.array(np.array([idx(i, n - j) for i, j in moving], np.int32), dtype=wp.int32)
        resting = [idx(i, j) for j in range(half + 1, n + 1) for i in range(n + 1)]
        self._resting = wp.array(np.array(resting, np.int32), dtype=wp.int32)
        self._corner_targets = wp.array(np.array([idx(0, n), idx(n, n)], np.int32), dtype=wp.int32)
        self._success = wp.zeros(self.num_envs, dtype=wp.bool)
        self.task_info = {"success": wp.to_torch(self._success)}

    def _compute_observations(self, obs: wp.array) -> None:
        self.launch_per_world(
            _observe,
            inputs=[
                self.model.particle_world_start,
                self.state_0.particle_q,
                self._samples,
                self.actions,
                float(self.config.max_corner_speed),
            ],
            outputs=[obs],
        )

    def _compute_rewards(self, reward_terms: wp.array) -> None:
        c = self.config
        self.launch_per_world(
            _rewards,
            inputs=[
                self.model.particle_world_start,
                self.state_0.particle_q,
                self.model.particle_q,
                self._moving,
                self._mirrored,
                self._resting,
                self._corners,
                self._corner_targets,
                float(c.success_distance),
            ],
            outputs=[self._success, reward_terms],
        )


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
    Measured on 100 episodes: see the README's "Scripted solvers".

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
