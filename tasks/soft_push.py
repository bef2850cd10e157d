"""``steel_envs/SoftPush-v0``: push a volumetric soft block to a goal with an AVBD rigid pusher, on SolverVBD."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import warp as wp
from steel_envs.envs.soft import PARTICLE_RADIUS, PUSHER_HALF, SoftScene, SoftSceneConfig
from steel_envs.tasks.terms import goals
from steel_envs.tasks.terms.goals import PushGoalConfig, draw_goal, goals_on_ground, planar_distance

from steel_envs.benchmark import scripted_success
from steel_envs.ranges import COST_WEIGHT, at_least, between, declare
from steel_envs.registration import register_task
from steel_envs.spec import ObservationBlock, RewardTerm, TerminationTerm, term
from steel_envs.torch_views import to_torch
from steel_envs.train_config import PpoConfig

__all__ = ["SoftPushConfig", "SoftPushEnv", "SoftPushSingleEnv", "green_strain_norm", "scripted_policy"]

PUSHER_BODY = 1


@dataclass(kw_only=True)
class SoftPushConfig(SoftSceneConfig, PushGoalConfig):
    """The scene's fields, the goal region, reward weights and success radius (``PushGoalConfig``), and the
    strain penalty."""

    strain_weight: float = 10.0
    """Weight of the excess-strain penalty."""
    strain_threshold: float = 0.1
    """Green-Lagrange strain norm of a tetrahedron above which it is penalized (1)."""

    field_ranges = declare(
        goal_range=between(
            0.0, 0.55, "the half-width of the goal square [m]; the gantry reaches +-0.6 m", low_open=True
        ),
        strain_weight=COST_WEIGHT,
        strain_threshold=at_least(0.0, "a strain norm"),
    )


@wp.func
def green_strain_norm(x0: wp.vec3, x1: wp.vec3, x2: wp.vec3, x3: wp.vec3, rest_inverse: wp.mat33) -> float:
    """Frobenius norm of the Green-Lagrange strain ``E = (F^T F - I) / 2`` of a tetrahedron, with
    ``F = [x1 - x0, x2 - x0, x3 - x0] Dm^-1`` and ``Dm^-1`` its rest inverse (``Model.tet_poses``)."""
    ds = wp.matrix_from_cols(x1 - x0, x2 - x0, x3 - x0)
    f = ds * rest_inverse
    e = 0.5 * (wp.transpose(f) * f - wp.identity(n=3, dtype=float))
    return wp.sqrt(wp.ddot(e, e))


@wp.struct
class SoftPushState:
    """What SoftPush's terms read: the block's particles and tetrahedra, the pusher's body, each world's goal and
    success flag, the strain threshold and the success radius."""

    particle_world_start: wp.array[wp.int32]
    particle_q: wp.array[wp.vec3]
    particle_qd: wp.array[wp.vec3]
    body_world_start: wp.array[wp.int32]
    body_q: wp.array[wp.transform]
    body_qd: wp.array[wp.spatial_vector]
    tet_indices: wp.array2d[wp.int32]
    tet_poses: wp.array[wp.mat33]
    tets_per_world: wp.int32
    corners: wp.array[wp.int32]
    """Particle indices within a world of the block's 8 corners."""
    goals: wp.array2d[wp.float32]
    success: wp.array[wp.bool]
    strain_threshold: wp.float32
    success_radius: wp.float32


@wp.func
def _block_com(particle_world_start: wp.array[wp.int32], particle_q: wp.array[wp.vec3], w: int) -> wp.vec3:
    """Centre of mass of the block of world ``w`` (particles of equal mass in a regular grid: their mean)."""
    start = particle_world_start[w]
    count = particle_world_start[w + 1] - start
    s = wp.vec3(0.0, 0.0, 0.0)
    for i in range(count):
        s += particle_q[start + i]
    return s / float(count)


@wp.func
def _com(s: Any, w: int) -> wp.vec3:
    return _block_com(s.particle_world_start, s.particle_q, w)


@wp.func
def _pusher(s: Any, w: int) -> wp.vec3:
    return wp.transform_get_translation(s.body_q[s.body_world_start[w] + PUSHER_BODY])


@wp.kernel(enable_backward=False)
def _draw_goals(
    world_mask: wp.array[wp.bool],
    r: wp.float32,
    min_distance: wp.float32,
    particle_world_start: wp.array[wp.int32],
    particle_q: wp.array[wp.vec3],
    rng_state: wp.array[wp.uint32],
    goals: wp.array2d[wp.float32],
):
    """Draw the goals of the selected worlds away from their block's centre of mass (``draw_goal``)."""
    w = wp.tid()
    if not world_mask[w]:
        return
    com = _block_com(particle_world_start, particle_q, w)
    rng_state[w] = draw_goal(rng_state[w], r, min_distance, com[0], com[1], goals, w)


@wp.kernel(enable_backward=False)
def _update_success(s: SoftPushState):
    """After the physics: the block's centre of mass is within the success radius of its goal."""
    w = wp.tid()
    s.success[w] = planar_distance(_com(s, w), s.goals[w, 0], s.goals[w, 1]) < s.success_radius


@term("(x, y)_pusher")
def pusher_pos(s: Any, w: int) -> wp.vec2:
    """Pusher position x, y [m]."""
    p = _pusher(s, w)
    return wp.vec2(p[0], p[1])


@term("(vx, vy)_pusher")
def pusher_vel(s: Any, w: int) -> wp.vec2:
    """Pusher velocity x, y [m/s]."""
    v = wp.spatial_top(s.body_qd[s.body_world_start[w] + PUSHER_BODY])
    return wp.vec2(v[0], v[1])


@term("mean_i p_i")
def block_com(s: Any, w: int) -> wp.vec3:
    """The block's centre of mass [m]."""
    return _com(s, w)


@term("mean_i v_i")
def block_vel(s: Any, w: int) -> wp.vec3:
    """The block's mean particle velocity [m/s]."""
    start = s.particle_world_start[w]
    count = s.particle_world_start[w + 1] - start
    v = wp.vec3(0.0, 0.0, 0.0)
    for i in range(count):
        v += s.particle_qd[start + i]
    return v / float(count)


@term("(x, y)_com - (x, y)_goal")
def block_to_goal(s: Any, w: int) -> wp.vec2:
    """Block centre minus goal, x and y [m]."""
    com = _com(s, w)
    return wp.vec2(com[0] - s.goals[w, 0], com[1] - s.goals[w, 1])


@term("p_corner - p_com")
def block_corners(s: Any, w: int, i: int) -> float:
    """Entry ``i % 3`` of corner ``i // 3``'s position relative to the centre of mass [m]."""
    p = s.particle_q[s.particle_world_start[w] + s.corners[i // 3]] - _com(s, w)
    return p[i % 3]


@term("|pusher_xy - com_xy|")
def pusher_block_distance(s: Any, w: int) -> float:
    """Planar distance of the pusher to the block's centre of mass [m]."""
    com = _com(s, w)
    return planar_distance(_pusher(s, w), com[0], com[1])


@term("|com_xy - goal|")
def block_goal_distance(s: Any, w: int) -> float:
    """Planar distance of the block's centre of mass to the goal [m]."""
    return planar_distance(_com(s, w), s.goals[w, 0], s.goals[w, 1])


@term("mean_t max(0, |E_t|_F - e_max), E = (F^T F - I) / 2")
def excess_strain(s: Any, w: int) -> float:
    """Mean over the block's tetrahedra of the Green-Lagrange strain norm above ``strain_threshold`` [1]."""
    excess = float(0.0)
    for t in range(w * s.tets_per_world, (w + 1) * s.tets_per_world):
        e = green_strain_norm(
            s.particle_q[s.tet_indices[t, 0]],
            s.particle_q[s.tet_indices[t, 1]],
            s.particle_q[s.tet_indices[t, 2]],
            s.particle_q[s.tet_indices[t, 3]],
            s.tet_poses[t],
        )
        excess += wp.max(e - s.strain_threshold, 0.0)
    return excess / float(s.tets_per_world)


class SoftPushEnv(SoftScene):
    """Push a volumetric soft block to a goal on the ground with a rigid box pusher on a 2-DOF gantry (SolverVBD:
    tetrahedral neo-Hookean block by VBD, pusher and gantry by AVBD, coupled through contact).

    Chosen over a two-finger soft grasp: pushing needs one actuated body and no grasp heuristics, so the task
    tests the coupled VBD / AVBD contact and the block's deformation, and stays cheap enough for Warp's CPU.

    ## Action space
    | index | action | min | max | unit |
    |---|---|---|---|---|
    | 0 | pusher x velocity, times ``max_pusher_speed`` (0.4 m/s) | -1 | 1 | 1 |
    | 1 | pusher y velocity, times ``max_pusher_speed`` | -1 | 1 | 1 |

    ## Observation space (38 values)
    | index | observation | unit |
    |---|---|---|
    | 0-1 | pusher position x, y | m |
    | 2-3 | pusher velocity x, y | m/s |
    | 4-6 | block centre of mass | m |
    | 7-9 | block mean velocity | m/s |
    | 10-11 | goal x, y | m |
    | 12-13 | block centre minus goal, x and y | m |
    | 14-37 | the block's 8 corner particles relative to its centre of mass | m |

    ## Rewards
    Weights are config fields, also settable by term name (``reward_weights={"strain": 0.5}``).

    - ``reward_reach = -reach_weight * |pusher_xy - com_xy|``;
    - ``reward_push = -push_weight * |com_xy - goal|``;
    - ``reward_strain = -strain_weight * mean_t max(0, |E_t|_F - strain_threshold)`` over the block's
      tetrahedra, ``E = (F^T F - I) / 2`` the Green-Lagrange strain (penalizes crushing or tearing the block);
    - ``reward_success = success_bonus`` on the step the centre of mass comes within ``success_radius`` (5 cm)
      of the goal (``info["success"]``).

    ## Starting state
    Pusher at (-0.3, 0) m at rest; block resting on the ground, its centre at U(-0.05, 0.05)^2 m; goal at
    U(-0.3, 0.3)^2 m, redrawn (up to 16 times) while within 3 success radii of the block.

    ## Episode end
    Terminated on success (term ``goal_reached``, also ``info["success"]``) or a non-finite state; truncated after
    200 steps (10 s) or on a contact-buffer overflow (``info["constraint_overflow"]``).
    """

    config_cls = SoftPushConfig
    config: SoftPushConfig
    terminations = (TerminationTerm("goal_reached", goals.goal_reached),)
    rewards = (
        RewardTerm("reach", pusher_block_distance, weight="reach_weight", cost=True),
        RewardTerm("push", block_goal_distance, weight="push_weight", cost=True),
        RewardTerm("strain", excess_strain, weight="strain_weight", cost=True),
        RewardTerm("success", goals.success_bonus, weight="success_bonus"),
    )
    default_max_episode_steps = 200
    observations = (
        ObservationBlock("pusher_pos", 2, pusher_pos, "pusher position x, y", "m"),
        ObservationBlock("pusher_vel", 2, pusher_vel, "pusher velocity x, y", "m/s"),
        ObservationBlock("block_com", 3, block_com, "block centre of mass", "m"),
        ObservationBlock("block_vel", 3, block_vel, "block mean velocity", "m/s"),
        ObservationBlock("goal", 2, goals.goal_xy, "goal x, y", "m"),
        ObservationBlock("block_to_goal", 2, block_to_goal, "block centre minus goal, x and y", "m"),
        ObservationBlock(
            "block_corners", 24, block_corners, "the block's 8 corner particles relative to its centre of mass", "m"
        ),
    )
    # 4 M env-steps (1,953 iterations of 64 worlds x 32 steps): the budget of the reference target (80 % success).
    train_config = PpoConfig(num_envs=64, num_steps_per_env=32, max_iterations=1953)
    """PPO settings of ``steel-envs train`` for this task (the learner is not imported here)."""
    benchmark = scripted_success("deformable", "SoftPush-v0")

    @property
    def block_corners(self) -> tuple[int, ...]:
        """Particle indices within a world of the block's 8 corners (``add_soft_grid`` orders x fastest, then y,
        then z)."""
        n = int(self.config.block_cells) + 1
        return tuple(k * n * n + j * n + i for k in (0, n - 1) for j in (0, n - 1) for i in (0, n - 1))

    def goal_positions(self) -> np.ndarray:
        """Each world's goal on the ground, (num_envs, 1, 3) [m]."""
        return goals_on_ground(self.term_state.goals)

    def _setup_task(self) -> None:
        m, s, c = self.model, self.state_0, self.config
        if m.tet_count % self.num_envs:
            raise RuntimeError(f"{type(self).__name__}: scenes must not add global tetrahedra")
        state = SoftPushState()
        state.particle_world_start, state.particle_q, state.particle_qd = (
            m.particle_world_start,
            s.particle_q,
            s.particle_qd,
        )
        state.body_world_start, state.body_q, state.body_qd = m.body_world_start, s.body_q, s.body_qd
        state.tet_indices, state.tet_poses = m.tet_indices, m.tet_poses
        state.tets_per_world = m.tet_count // self.num_envs
        state.corners = wp.array(np.asarray(self.block_corners, np.int32), dtype=wp.int32)
        state.goals = wp.zeros((self.num_envs, 2), dtype=wp.float32)
        state.success = wp.zeros(self.num_envs, dtype=wp.bool)
        state.strain_threshold, state.success_radius = float(c.strain_threshold), float(c.success_radius)
        self.term_state = state
        self.task_info = {"success": to_torch(state.success)}

    def _post_physics(self) -> None:
        self.launch_per_world(_update_success, inputs=[self.term_state])

    def _reset_task(self, world_mask: wp.array) -> None:
        self.launch_per_world(
            _draw_goals,
            inputs=[
                world_mask,
                float(self.config.goal_range),
                3.0 * float(self.config.success_radius),
                self.model.particle_world_start,
                self.state_0.particle_q,
            ],
            outputs=[self.rng_state, self.term_state.goals],
        )


SoftPushSingleEnv = register_task("steel_envs/SoftPush-v0", SoftPushEnv)


_LINE_UP = 0.03
"""Gap [m] between the pusher and the block's bounding box at the stand-off point where it lines up for a push."""
_BEHIND_SLACK = 0.015
"""The pusher still counts as behind the block when its face is up to this [m] into the block's back (a push
compresses the block)."""
_SIDE_MARGIN = 0.03
"""Gap [m] between the pusher's and the block's extents across the push while the pusher passes the block."""
_LINE_TOLERANCE = 0.03
"""Largest offset [m] across the push of the pusher's centre from the block's at which it pushes."""
_DEEP = 0.03
"""A lined-up pusher pushes until its centre is within its own half width, the particle radius and this [m] of
the block's centre along the push (never, in practice: the block gives way)."""
_AXIS_DONE = 0.01
"""A push along an axis goes on while the block is more than this [m] from the goal along it."""
_POSITION_GAIN = 10.0
"""Action per m of distance to a waypoint (saturating at 10 cm)."""
_LINE_GAIN = 10.0
"""Action per m of offset across the push while pushing."""
_PAIRS = torch.tensor([(i, j) for i in range(8) for j in range(i, 8)], device="cpu")
"""Every pair of the 8 corners, each corner with itself included: the segments whose union covers the boundary of
the corners' convex hull."""


def _back_in_band(s: torch.Tensor, r: torch.Tensor, low: torch.Tensor, high: torch.Tensor) -> torch.Tensor:
    """The smallest coordinate ``s`` of the corners' convex hull within the band ``low <= r <= high`` of the other
    coordinate (the hull's back as seen along ``s`` by a face spanning the band), or +inf where the band misses the
    hull. ``s``, ``r``: (N, 8) corner coordinates; ``low``, ``high``: (N, 1). The minimum of a linear function over a
    convex polygon cut by a band lies on a boundary edge, where the segment between two corners enters or leaves the
    band or at a corner inside it."""
    i, j = _PAIRS[:, 0].to(s.device), _PAIRS[:, 1].to(s.device)
    sa, sb, la, lb = s[:, i], s[:, j], r[:, i], r[:, j]
    dl = lb - la
    flat = dl.abs() < 1.0e-9
    safe = torch.where(flat, torch.ones_like(dl), dl)
    t0, t1 = (low - la) / safe, (high - la) / safe
    t_lo = torch.where(flat, torch.zeros_like(dl), torch.minimum(t0, t1)).clamp_min(0.0)
    t_hi = torch.where(flat, torch.ones_like(dl), torch.maximum(t0, t1)).clamp_max(1.0)
    inside = (t_lo <= t_hi) & (~flat | ((la >= low) & (la <= high)))
    back = torch.minimum(sa + t_lo * (sb - sa), sa + t_hi * (sb - sa))
    return torch.where(inside, back, torch.full_like(back, float("inf"))).amin(-1, keepdim=True)


def _push_geometry(pusher, block, corners, d):
    """A push along the unit axis ``d`` (N, 2) for each world: ``n`` (the left normal of ``d``); the pusher's
    offset from the block's centre along ``d`` and across it; the offset along ``d`` at which the pusher meets the
    block's bounding box (``contact``, positive: the pusher is at ``-contact``); the offset past which a lined-up
    pusher stops pushing (``deep``); the offset across at which the pusher clears the block's side
    (``clearance``); and whether the pusher overlaps the block across ``d`` with its face more than
    ``_BEHIND_SLACK`` past the block's back there (``blocked``: it must go round)."""
    n = torch.stack([-d[:, 1], d[:, 0]], dim=-1)
    half = torch.tensor(PUSHER_HALF[:2], dtype=pusher.dtype, device=pusher.device)
    s = (corners * d[:, None]).sum(-1)
    r = (corners * n[:, None]).sum(-1)
    reach = (d.abs() * half).sum(-1, keepdim=True) + PARTICLE_RADIUS
    width = (n.abs() * half).sum(-1, keepdim=True) + PARTICLE_RADIUS
    contact = reach - s.amin(-1, keepdim=True)
    clearance = r.abs().amax(-1, keepdim=True) + width + _SIDE_MARGIN
    offset = pusher - block
    along = (offset * d).sum(-1, keepdim=True)
    lateral = (offset * n).sum(-1, keepdim=True)
    back = _back_in_band(s, r, lateral - width, lateral + width)
    blocked = along + reach > back + _BEHIND_SLACK  # never where the band misses the block (back = inf)
    return n, along, lateral, contact, reach + _DEEP, clearance, blocked


def _lined_up(along, lateral, contact, deep):
    """Whether the pusher is in line behind the block, from beyond the stand-off point up to pushing into it."""
    return (lateral.abs() < _LINE_TOLERANCE) & (along > -contact - 2.0 * _LINE_UP) & (along < -deep)


def scripted_policy(obs: torch.Tensor) -> torch.Tensor:
    """A scripted, stateless solver of SoftPush-v0: push the block to the goal along x and y in turn, each push
    with the pusher's flat face centred behind the block.

    The pusher is a box that does not turn (its gantry has two prismatic joints), so it pushes along the world
    axes, face on: pushed at an angle, a face slides along the block or turns it. Each step it picks an axis: the
    one it is lined up behind already while the block is still more than 1 cm from the goal along it, else the
    axis of the larger block-goal error. With ``d`` the unit push direction on that axis (towards the goal) and
    ``n`` its left normal, the pusher's offset from the block's centre is split into ``along`` (on ``d``) and
    ``lateral`` (on ``n``) [m]. Extents come from the observation: the block's from its 8 corner particles
    (their convex hull, so a block that turned or deformed is measured as it is), the pusher's from
    ``PUSHER_HALF`` plus the particle radius. ``c`` is the ``along`` at which the pusher's face meets the block's
    bounding box.

    Lined up (``-c - 0.06 < along < -(h + 0.035)``, ``h`` the pusher's half width along ``d``, and
    ``|lateral| < 0.03``) it pushes: velocity ``d`` at full speed plus ``-10 * lateral * n`` to keep the face
    centred. Otherwise it goes to the stand-off point ``block - (c + 0.03) d`` by proportional control (10 per m),
    round the block where its face overlaps the block across ``d`` and is more than 1.5 cm past the block's back
    there (the back of the hull within the face's span): across to a gap of 3 cm between the extents first, then
    back, then in line. The velocity command is scaled down to unit norm where it exceeds it. Measured on 100
    episodes: see ``docs/guides/evaluation.md``, "Scripted solvers".

    Usable as ``steel-envs evaluate steel_envs/SoftPush-v0 --policy steel_envs.tasks.soft_push:scripted_policy``.

    Args:
        obs: Observations (N, 38) float32 in the layout of :class:`SoftPushEnv` (pusher x, y at 0-1, block centre
            at 4-6, block centre minus goal at 12-13, the corners relative to the centre at 14-37, all [m]), on
            any device.

    Returns:
        Actions (N, 2) float32 in [-1, 1], the pusher's x, y velocity over ``max_pusher_speed``, on ``obs``'s
        device.
    """
    pusher, block, to_goal = obs[:, 0:2], obs[:, 4:6], -obs[:, 12:14]
    corners = obs[:, 14:38].reshape(-1, 8, 3)[..., :2]
    zero = torch.zeros_like(to_goal[:, :1])
    sign = torch.where(to_goal >= 0.0, 1.0, -1.0)
    d_x = torch.cat([sign[:, :1], zero], dim=-1)
    d_y = torch.cat([zero, sign[:, 1:]], dim=-1)
    error = to_goal.abs()
    x = _push_geometry(pusher, block, corners, d_x)
    y = _push_geometry(pusher, block, corners, d_y)
    use_x = torch.where(
        _lined_up(*x[1:5]) & (error[:, :1] > _AXIS_DONE),
        True,
        torch.where(_lined_up(*y[1:5]) & (error[:, 1:] > _AXIS_DONE), False, error[:, :1] >= error[:, 1:]),
    )
    d = torch.where(use_x, d_x, d_y)
    n, along, lateral, contact, deep, clearance, blocked = (torch.where(use_x, a, b) for a, b in zip(x, y, strict=True))
    pushing = _lined_up(along, lateral, contact, deep)
    side = torch.where(lateral >= 0.0, 1.0, -1.0)
    standoff = contact + _LINE_UP
    beside = along > -contact + _BEHIND_SLACK  # and not blocked: clear of the block across the push
    target = torch.where(
        blocked,
        block + n * side * clearance + d * along,  # step across, keeping the offset along the push
        torch.where(beside, block + n * lateral - d * standoff, block - d * standoff),  # back, then in line
    )
    velocity = torch.where(pushing, d - n * (_LINE_GAIN * lateral), _POSITION_GAIN * (target - pusher))
    velocity = velocity / velocity.norm(dim=-1, keepdim=True).clamp_min(1.0)
    return velocity.to(torch.float32)
