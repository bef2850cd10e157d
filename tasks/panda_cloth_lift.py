"""``steel_envs/PandaClothLift-v0``: the Franka Panda, an AVBD articulation on SolverVBD, grasps a corner of a cloth
lying on the table and lifts the cloth clear of it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import warp as wp
from steel_envs.envs.cloth import PARTICLE_RADIUS
from steel_envs.envs.panda import HAND_BODY
from steel_envs.envs.panda_cloth import (
    CLOTH_CELLS,
    FINGER_OPEN,
    PandaClothScene,
    PandaClothSceneConfig,
)
from steel_envs.tasks.panda_lift_cube import TCP_OFFSET
from steel_envs.tasks.panda_reach import joint_pos_rel, joint_vel, joint_vel_l2, last_action
from steel_envs.tasks.terms import legged

from steel_envs import kernels
from steel_envs.assets import PANDA
from steel_envs.benchmark import scripted_success
from steel_envs.ranges import any_value, at_least, between, declare, positive
from steel_envs.registration import register_task
from steel_envs.spec import EpisodeMetric, ObservationBlock, RewardTerm, term
from steel_envs.torch_views import to_torch
from steel_envs.train_config import PpoConfig

__all__ = ["PandaClothLiftConfig", "PandaClothLiftEnv", "PandaClothLiftSingleEnv", "scripted_policy"]

_DT = 8.0 / 240.0
"""Control step [s]: the weights are per second times the step, as PandaLiftCube-v0's."""
_JOINTS = len(PANDA.joints)
_TCP = wp.constant(TCP_OFFSET)
_HAND = wp.constant(HAND_BODY)
_N = CLOTH_CELLS
GRASPED_CORNER = 0
"""Within-world index of the particle to grasp: the cloth's corner at grid column 0, row 0."""
KEYPOINTS = (GRASPED_CORNER, _N, _N * (_N + 1), (_N + 1) ** 2 - 1, (_N // 2) * (_N + 2))
"""Observed particles: the four corners (the grasped one first) and the centre."""


@dataclass(kw_only=True)
class PandaClothLiftConfig(PandaClothSceneConfig):
    """The cloth's start distribution, the success heights and the reward weights (per control step)."""

    cloth_x: tuple[float, float] = (0.45, 0.6)
    """Range of the cloth centre's x at reset [m]."""
    cloth_y: tuple[float, float] = (-0.15, 0.15)
    """Range of the cloth centre's y at reset [m]."""
    cloth_yaw: tuple[float, float] = (-0.75 * math.pi, 0.25 * math.pi)
    """Range of the cloth's turn about its centre at reset [rad]. Built, the grasped corner points along -135 deg from
    the centre; over this range it points anywhere in the half facing the arm (90 to 270 deg). Facing away, it lay
    up to 0.68 m from the base, where the hand pointing down did not reach the table (3 of 16 scripted grasps)."""
    lift_height: float = 0.15
    """Height of the grasped corner's centre above the table that counts as lifted [m]."""
    clearance: float = 0.02
    """Height of the cloth's lowest particle centre above the table that counts as clear of it [m]."""
    hold_steps: int = 10
    """Consecutive steps lifted and clear that make a success."""
    reach_weight: float = 1.0 * _DT
    """Weight of ``reaching_corner`` (1 - tanh(d / 0.1) of the tool centre point's distance to the corner)."""
    distance_weight: float = -1.0 * _DT
    """Weight of ``corner_distance`` (the tool centre point's distance to the corner [m]): the coarse reach that
    pays from the home pose, 0.6 m up, where ``reaching_corner`` is ~1e-5 and flat."""
    lift_weight: float = 15.0 * _DT
    """Weight of ``corner_height`` (the corner's height over ``lift_height``, at most 1)."""
    clear_weight: float = 15.0 * _DT
    """Weight of ``cloth_clearance`` (the lowest particle's height over ``clearance``, at most 1)."""
    action_rate_weight: float = -1.0e-4 * _DT
    """Weight of ``action_rate_l2``."""
    joint_vel_weight: float = -1.0e-4 * _DT
    """Weight of ``joint_vel_l2``."""

    field_ranges = declare(
        cloth_x=any_value("a (low, high) coordinate range [m]"),
        cloth_y=any_value("a (low, high) coordinate range [m]"),
        cloth_yaw=between(-2.0 * math.pi, 2.0 * math.pi, "a (low, high) rotation range [rad]"),
        lift_height=positive("a height [m]"),
        clearance=positive("a height [m]"),
        hold_steps=at_least(1, "a step count", integer=True),
        reach_weight=any_value("a signed reward weight per step"),
        distance_weight=any_value("a signed reward weight per step"),
        lift_weight=any_value("a signed reward weight per step"),
        clear_weight=any_value("a signed reward weight per step"),
        action_rate_weight=any_value("a signed reward weight per step"),
        joint_vel_weight=any_value("a signed reward weight per step"),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        self.require_intervals("cloth_x", "cloth_y", "cloth_yaw")
        # The cloth must start clear of the arm's base (link0's 0.11 m footprint) and within its reach.
        far = math.hypot(max(abs(v) for v in self.cloth_x), max(abs(v) for v in self.cloth_y))
        near = min(self.cloth_x[0], 1.0)
        half_diagonal = self.cloth_size / math.sqrt(2.0)
        if not (near - half_diagonal >= 0.15 and far + half_diagonal <= 0.8):
            raise ValueError(
                f"cloth_x: expected the cloth (half diagonal {half_diagonal:.3g} m) between 0.15 and 0.8 m from the "
                f"arm's base, got cloth_x={self.cloth_x!r}, cloth_y={self.cloth_y!r}"
            )


@wp.struct
class PandaClothLiftState:
    """What PandaClothLift's terms read: the arm's joints and hand, the cloth's particles, the task's parameters."""

    body_world_start: wp.array[wp.int32]
    coord_world_start: wp.array[wp.int32]
    dof_world_start: wp.array[wp.int32]
    particle_world_start: wp.array[wp.int32]
    body_q: wp.array[wp.transform]
    joint_q: wp.array[wp.float32]
    joint_qd: wp.array[wp.float32]
    particle_q: wp.array[wp.vec3]
    home: wp.array[wp.float32]
    """(9,) the home pose [rad, m]: the zero of the joint observations."""
    keypoints: wp.array[wp.int32]
    actions: wp.array2d[wp.float32]
    last_actions: wp.array2d[wp.float32]
    held: wp.array[wp.int32]
    """(num_envs,) consecutive steps lifted and clear so far."""
    success: wp.array[wp.bool]
    lift_height: wp.float32
    clearance: wp.float32
    hold_steps: wp.int32


@wp.func
def _particle(s: Any, w: int, i: int) -> wp.vec3:
    return s.particle_q[s.particle_world_start[w] + i]


@wp.func
def _tcp(s: Any, w: int) -> wp.vec3:
    return wp.transform_point(s.body_q[s.body_world_start[w] + _HAND], wp.vec3(0.0, 0.0, _TCP))


@wp.func
def _corner_gap(s: Any, w: int) -> float:
    """Distance of the tool centre point to the grasped corner [m]."""
    return wp.length(_particle(s, w, s.keypoints[0]) - _tcp(s, w))


@wp.func
def _lowest(s: Any, w: int) -> float:
    z = float(1.0e9)
    for i in range(s.particle_world_start[w], s.particle_world_start[w + 1]):
        z = wp.min(z, s.particle_q[i][2])
    return z


@term("p_tcp")
def tcp_position(s: Any, w: int) -> wp.vec3:
    """The tool centre point, 0.1034 m along the hand's z between the fingertips [m]."""
    return _tcp(s, w)


@term("p_k")
def cloth_keypoints(s: Any, w: int, i: int) -> float:
    """Entry ``i % 3`` of keypoint ``i // 3``'s position [m]."""
    return _particle(s, w, s.keypoints[i // 3])[i % 3]


@term("min_i z_i")
def lowest_height(s: Any, w: int) -> float:
    """Height of the cloth's lowest particle centre above the table [m]."""
    return _lowest(s, w)


@term("1 - tanh(|p_corner - p_tcp| / 0.1)", source="Isaac Lab lift object_ee_distance")
def reaching_corner(s: Any, w: int) -> float:
    """1 with the tool centre point at the grasped corner, falling to 0 over some tenths of a metre [1]."""
    return 1.0 - wp.tanh(_corner_gap(s, w) / 0.1)


@term("|p_corner - p_tcp|", source="Isaac Lab reach position_command_error")
def corner_distance(s: Any, w: int) -> float:
    """The tool centre point's distance to the grasped corner [m]."""
    return _corner_gap(s, w)


@term("min(z_corner, lift_height) / lift_height")
def corner_height(s: Any, w: int) -> float:
    """The grasped corner's height as a share of ``lift_height``, at most 1 [1]."""
    return wp.clamp(_particle(s, w, s.keypoints[0])[2] / s.lift_height, 0.0, 1.0)


@term("min(min_i z_i, clearance) / clearance")
def cloth_clearance(s: Any, w: int) -> float:
    """The lowest particle's height as a share of ``clearance``, at most 1 (its radius, 0.25, lying flat) [1]."""
    return wp.clamp(_lowest(s, w) / s.clearance, 0.0, 1.0)


@term("z_corner")
def grasped_corner_height(s: Any, w: int) -> float:
    """The grasped corner's height above the table [m] (a metric's step value)."""
    return _particle(s, w, s.keypoints[0])[2]


@wp.kernel(enable_backward=False)
def _update_success(s: PandaClothLiftState):
    """After the physics: count the consecutive steps with the corner lifted and the cloth clear; success at
    ``hold_steps``."""
    w = wp.tid()
    up = _particle(s, w, s.keypoints[0])[2] >= s.lift_height and _lowest(s, w) >= s.clearance
    held = wp.where(up, s.held[w] + 1, 0)
    s.held[w] = held
    s.success[w] = held >= s.hold_steps


@wp.kernel(enable_backward=False)
def _draw_cloth(
    world_mask: wp.array[wp.bool],
    low: wp.vec3,
    high: wp.vec3,
    particle_world_start: wp.array[wp.int32],
    model_q: wp.array[wp.vec3],
    rng_state: wp.array[wp.uint32],
    particle_q: wp.array[wp.vec3],
    held: wp.array[wp.int32],
):
    """A reset world's cloth: the model's flat cloth turned about its centre by U(low[2], high[2]) about z and its
    centre moved to U(low, high) in x and y; its hold count cleared."""
    w = wp.tid()
    if not world_mask[w]:
        return
    rng = rng_state[w]
    x = low[0] + (high[0] - low[0]) * wp.randf(rng)
    y = low[1] + (high[1] - low[1]) * wp.randf(rng)
    yaw = low[2] + (high[2] - low[2]) * wp.randf(rng)
    start, end = particle_world_start[w], particle_world_start[w + 1]
    centre = wp.vec3(0.0, 0.0, 0.0)
    for i in range(start, end):
        centre += model_q[i]
    centre = centre / float(end - start)
    c, s = wp.cos(yaw), wp.sin(yaw)
    for i in range(start, end):
        r = model_q[i] - centre
        particle_q[i] = wp.vec3(x + c * r[0] - s * r[1], y + s * r[0] + c * r[1], model_q[i][2])
    held[w] = 0
    rng_state[w] = rng


class PandaClothLiftEnv(PandaClothScene):
    """Grasp a corner of a square cloth lying on the table with the Franka Panda's two fingers and lift the cloth
    clear of the table, the arm an AVBD articulation in the cloth's SolverVBD world (Isaac Lab's deformable lifting
    on Newton's VBD, with the reward family of its Lift-Cube-Franka).

    ## Action space
    | index | action | min | max | unit |
    |---|---|---|---|---|
    | 0-6 | joint1 .. joint7 position targets, 0 home, +-1 0.03 rad inside the limits (piecewise linear) | -1 | 1 | 1 |
    | 7 | gripper: open (both fingers to 0.04 m) for a >= 0, closed (to 0) below | -1 | 1 | 1 |

    ## Observation space
    | index | observation | unit |
    |---|---|---|
    | 0-8 | joint positions relative to the home pose | rad, m |
    | 9-17 | joint velocities | rad/s, m/s |
    | 18-20 | the tool centre point | m |
    | 21-35 | the cloth's four corners (the grasped one first) and its centre particle | m |
    | 36 | height of the cloth's lowest particle centre | m |
    | 37-44 | the previous step's actions | 1 |

    Joints in ``steel_envs.assets.PANDA.joints`` order (joint1 .. joint7, both fingers), measured from the bodies
    (``newton.eval_ik``); positions in the arm's base frame (the world's: the arm stands at the origin on the
    table). Keypoints are the particles at grid (column, row) (0, 0) (the grasped corner), (8, 0), (0, 8), (8, 8)
    and (4, 4).

    ## Rewards
    Weights per second times the control step (1/30 s), config fields, also settable by term name. ``p_tcp`` is the
    tool centre point 0.1034 m along the hand's z, between the fingertips.

    ## The cloth
    0.2 m square, 8 x 8 cells (81 particles, radius 5 mm), 0.02 kg, lying flat on the table, its centre at x
    U(0.45, 0.6) m, y U(-0.15, 0.15) m, turned about it by U(-3 pi/4, pi/4) so that the grasped corner faces the
    arm's half (``cloth_x``, ``cloth_y``, ``cloth_yaw``),
    drawn at every reset from the env's seed.

    ## Starting state
    The MJCF's home pose (the hand 0.62 m above the table, pointing down, the gripper open) with U(-0.1, 0.1) rad on
    each arm joint (``joint_noise``), at rest; the cloth as above.

    ## Episode end
    Truncated after 150 steps (5 s) or on a contact-buffer overflow (``info["constraint_overflow"]``); terminated on
    a non-finite state. ``info["success"]``: the grasped corner at least ``lift_height`` (0.15 m) up and the lowest
    particle at least ``clearance`` (2 cm) up for the last ``hold_steps`` (10) steps; evaluation counts it on the
    episode's last step.
    """

    config_cls = PandaClothLiftConfig
    config: PandaClothLiftConfig
    default_max_episode_steps = 150
    observations = (
        ObservationBlock("joint_pos", _JOINTS, joint_pos_rel, "joint positions relative to the home pose", "rad, m"),
        ObservationBlock("joint_vel", _JOINTS, joint_vel, "joint velocities", "rad/s, m/s"),
        ObservationBlock("tcp_position", 3, tcp_position, "the tool centre point", "m"),
        ObservationBlock(
            "cloth_keypoints",
            3 * len(KEYPOINTS),
            cloth_keypoints,
            "the cloth's four corners (the grasped one first) and its centre particle",
            "m",
        ),
        ObservationBlock("lowest_height", 1, lowest_height, "height of the cloth's lowest particle centre", "m"),
        ObservationBlock("actions", _JOINTS - 1, last_action, "the previous step's actions", "1"),
    )
    rewards = (
        RewardTerm("reaching_corner", reaching_corner, weight="reach_weight"),
        RewardTerm("corner_distance", corner_distance, weight="distance_weight"),
        RewardTerm("corner_height", corner_height, weight="lift_weight"),
        RewardTerm("cloth_clearance", cloth_clearance, weight="clear_weight"),
        RewardTerm("action_rate_l2", legged.action_rate_l2, weight="action_rate_weight"),
        RewardTerm("joint_vel_l2", joint_vel_l2, weight="joint_vel_weight"),
    )
    metrics = (
        EpisodeMetric("corner_height", grasped_corner_height, "last", "m", "the grasped corner's height at the end"),
        EpisodeMetric("lowest_height", lowest_height, "last", "m", "the lowest particle's height at the end"),
    )
    train_config = PpoConfig(
        num_envs=64,
        num_steps_per_env=24,
        # 0.25 M env-steps, the budget: 163 iterations of 64 worlds x 24 steps.
        max_iterations=163,
        actor_hidden_dims=(256, 128, 64),
        critic_hidden_dims=(256, 128, 64),
    )
    """PPO settings of ``steel-envs train`` (PandaLiftCube-v0's networks)."""
    benchmark = scripted_success("deformable", "PandaClothLift-v0", random_score=0.0, expert_score=0.89)

    def _setup_task(self) -> None:
        s, n, m = PandaClothLiftState(), self.num_envs, self.model
        s.body_world_start, s.coord_world_start = m.body_world_start, m.joint_coord_world_start
        s.dof_world_start, s.particle_world_start = m.joint_dof_world_start, m.particle_world_start
        s.body_q, s.joint_q, s.joint_qd = self.state_0.body_q, self.state_0.joint_q, self.state_0.joint_qd
        s.particle_q = self.state_0.particle_q
        s.home = wp.array(PANDA.home, dtype=wp.float32)
        s.keypoints = wp.array(np.asarray(KEYPOINTS, np.int32), dtype=wp.int32)
        s.actions, s.last_actions = self.actions, wp.zeros((n, self.action_dim), dtype=wp.float32)
        s.held = wp.zeros(n, dtype=wp.int32)
        s.success = wp.zeros(n, dtype=wp.bool)
        c = self.config
        s.lift_height, s.clearance, s.hold_steps = float(c.lift_height), float(c.clearance), int(c.hold_steps)
        self.term_state = s
        self.task_info = {"success": to_torch(s.success)}

    def _post_physics(self) -> None:
        super()._post_physics()
        self.launch_per_world(_update_success, inputs=[self.term_state])

    def _post_rewards(self) -> None:
        wp.copy(self.term_state.last_actions, self.actions)

    def _reset_task(self, world_mask: wp.array) -> None:
        # After SolverVBD.reset copied the model's particles: the solver takes a pose authored before its next step.
        c, s = self.config, self.term_state
        self.launch_per_world(kernels.zero_world_rows, inputs=[world_mask], outputs=[s.last_actions])
        # success is left as the ended episode's last step set it (read after this reset with same-step autoreset).
        self.launch_per_world(
            _draw_cloth,
            inputs=[
                world_mask,
                wp.vec3(c.cloth_x[0], c.cloth_y[0], c.cloth_yaw[0]),
                wp.vec3(c.cloth_x[1], c.cloth_y[1], c.cloth_yaw[1]),
                s.particle_world_start,
                self.model.particle_q,
            ],
            outputs=[self.rng_state, s.particle_q, s.held],
        )


PandaClothLiftSingleEnv = register_task("steel_envs/PandaClothLift-v0", PandaClothLiftEnv)


_GRIP_HEIGHT = 0.010
"""Height of the tool centre point pinching the corner [m]: the pads' lower edges 1.5 mm above the table, the
corner particle (centre 5 mm up) between them."""
_SHOW = np.array([0.5, 0.0, 0.36])
"""Where the scripted solver carries the grasped corner [m]: 0.36 m up, above the cloth's diagonal (0.28 m) and
the clearance."""
_LEAD = 0.04
"""The scripted lift's target leads the measured tool centre point by this much [m]."""
_MAX_STEP = 0.15
"""The scripted solver's largest joint target lead over the measured angle [rad]."""


def _grip_quaternion(corner: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """Hand quaternions (N, 4) (x, y, z, w) pointing down with the fingers closing across the cloth's diagonal at the
    corner (both pads start outside the cloth, on either side of its corner)."""
    d = corner[:, :2] - centre[:, :2]
    # The fingers close along the hand's y; pointing down at yaw psi they close along (-sin psi, cos psi): that must
    # be perpendicular to the diagonal d, i.e. along d turned by 90 degrees.
    # psi and psi + pi close along the same line: take the one in [0, pi), within pi/2 of the home pose's yaw (pi/2).
    psi = np.mod(np.arctan2(d[:, 1], d[:, 0]), np.pi)
    return _pointing_down(0.5 * psi)


def _pointing_down(half_yaw: np.ndarray) -> np.ndarray:
    """Quaternions (N, 4) (x, y, z, w) of a hand pointing down at yaw ``2 half_yaw`` [rad]: down (pi about x), then
    the yaw about the world's z, q = q_z(psi) * q_x(pi) = (cos psi/2, sin psi/2, 0, 0)."""
    zero = np.zeros_like(half_yaw)
    return np.stack([np.cos(half_yaw), np.sin(half_yaw), zero, zero], axis=1)


def scripted_policy(obs):
    """A scripted solver of PandaClothLift-v0, from each observation alone: the tool centre point above the grasped
    corner with the gripper open and the fingers across the cloth's diagonal; once over it (within 8 mm), down to
    1 cm; close; once closed on it, up at 0.2 m/s to 0.33 m. ``newton.ik`` gives the joint targets
    (:func:`steel_envs.tasks.panda_reach.inverse_kinematics`), at most 0.15 rad a step ahead of each measured angle.

    Usable as ``steel-envs evaluate steel_envs/PandaClothLift-v0 --policy
    steel_envs.tasks.panda_cloth_lift:scripted_policy``.

    Args:
        obs: Observations (N, 45) float32 in :class:`PandaClothLiftEnv`'s layout, on any device.

    Returns:
        Actions (N, 8) float32 in [-1, 1], on ``obs``'s device.
    """
    import torch
    from steel_envs.envs.panda import ARM_JOINTS
    from steel_envs.envs.panda_cloth import target_to_action
    from steel_envs.tasks.panda_lift_cube import _tool_frames
    from steel_envs.tasks.panda_reach import inverse_kinematics

    o = obs.detach().cpu().numpy().astype(np.float64)
    q = o[:, :ARM_JOINTS] + np.asarray(PANDA.home[:ARM_JOINTS], np.float64)
    opening = o[:, ARM_JOINTS] + o[:, ARM_JOINTS + 1] + 2.0 * FINGER_OPEN  # both fingers' slides [m]
    tcp, corner, centre = o[:, 18:21], o[:, 21:24], o[:, 33:36]
    off = np.linalg.norm(tcp[:, :2] - corner[:, :2], axis=1)
    low = tcp[:, 2] < PARTICLE_RADIUS + 0.05
    closed = opening < 0.02
    over = off < np.where(low, 0.015, 0.008)
    grip = corner[:, :2]
    above = np.c_[grip, np.full(len(o), 0.1)]
    down = np.c_[grip, np.full(len(o), _GRIP_HEIGHT)]
    target = np.where(over[:, None], down, np.where(low[:, None], np.c_[tcp[:, :2], above[:, 2]], above))
    gripping = closed & (np.linalg.norm(corner - tcp, axis=1) < 0.03)
    # Lifting: towards a point above the table's front, a few cm ahead of the measured tool centre point (its
    # targets lead it against the arm's sag under SolverVBD's compliant drives), the hand keeping its measured turn.
    to_show = _SHOW - tcp
    lead = np.minimum(np.linalg.norm(to_show, axis=1, keepdims=True), _LEAD)
    lift = tcp + lead * to_show / np.maximum(np.linalg.norm(to_show, axis=1, keepdims=True), 1e-9)
    target = np.where(gripping[:, None], lift, target)
    close = gripping | (over & (np.abs(tcp[:, 2] - _GRIP_HEIGHT) < 0.004))
    # The measured hand's yaw is kept, read as a hand pointing down's (_pointing_down).
    hand = _tool_frames(q)[1]
    kept = _pointing_down(np.arctan2(hand[:, 1], hand[:, 0]))
    quat = np.where(gripping[:, None], kept, _grip_quaternion(corner, centre))
    q_ik = inverse_kinematics(target + np.array([0.0, 0.0, TCP_OFFSET]), quat)
    q_cmd = q + np.clip(q_ik - q, -_MAX_STEP, _MAX_STEP)
    actions = np.concatenate([target_to_action(q_cmd), np.where(close, -1.0, 1.0)[:, None]], axis=1)
    return torch.from_numpy(actions).to(torch.float32).to(obs.device)
