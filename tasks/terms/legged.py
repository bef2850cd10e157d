"""Terms of velocity tracking with a floating-base legged robot (legged_gym, Isaac Lab and mjlab velocity tasks):
the term state :class:`LeggedState`, its observation blocks, rewards, terminations and metrics, and the state
updates they need (commands, feet air time, last actions).

Units: velocities in the base frame [m/s, rad/s]; joint angles [rad]; torques [N m]; forces [N]. Reward terms return
unweighted values per control step (the task's weights are per step too, not multiplied by dt).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import warp as wp
from steel_envs.envs.terrain import terrain_height

from steel_envs.spec import EpisodeMetric, term

__all__ = [
    "TERRAIN_LEVEL",
    "TRACKING_ERROR",
    "LeggedState",
    "TwistCommands",
    "action_rate_l2",
    "ang_vel_xy_l2",
    "angular_momentum_l2",
    "bad_orientation",
    "base_ang_vel",
    "base_collision",
    "base_com_offsets",
    "base_height",
    "base_lin_vel",
    "feet_air_time",
    "feet_air_time_in_range",
    "feet_clearance",
    "feet_slide",
    "feet_slip",
    "feet_swing_height",
    "flat_orientation_l2",
    "foot_air_time",
    "foot_contact",
    "foot_contact_force",
    "foot_contact_force_log",
    "foot_height",
    "friction_scale",
    "height_scan",
    "illegal_contact",
    "imu_ang_vel",
    "imu_lin_acc",
    "joint_acc_l2",
    "joint_deviation_l1",
    "joint_pos_limits",
    "joint_pos_rel",
    "joint_pos_rel_biased",
    "joint_torques_l2",
    "joint_vel",
    "last_action",
    "lin_vel_xy_sq_error",
    "lin_vel_z_l2",
    "make_legged_state",
    "mass_scale",
    "out_of_terrain",
    "projected_gravity",
    "push_base_velocity",
    "resample_velocity_commands",
    "reset_imu",
    "reset_legged_state",
    "set_terrain",
    "shank_collision",
    "soft_landing",
    "store_last_actions_and_joint_vel",
    "terrain_level",
    "thigh_contact",
    "torso_ang_vel_xy_l2",
    "track_ang_vel_z_exp",
    "track_angular_velocity",
    "track_lin_vel_xy_exp",
    "track_linear_velocity",
    "undesired_contacts",
    "update_feet_air_time",
    "update_imu",
    "update_twist_commands",
    "upright",
    "upright_on_terrain",
    "variable_posture",
    "velocity_command",
]


@wp.struct
class LeggedState:
    """What the legged terms read: arrays of the env (shared, never copied) and the task's parameters.

    Per-world arrays have ``num_envs`` rows; per-joint arrays follow the action order (the joints after the free
    root joint); body indices are within a world.
    """

    body_world_start: wp.array[wp.int32]
    coord_world_start: wp.array[wp.int32]
    dof_world_start: wp.array[wp.int32]
    body_q: wp.array[wp.transform]
    body_qd: wp.array[wp.spatial_vector]
    joint_q: wp.array[wp.float32]
    joint_qd: wp.array[wp.float32]
    joint_target_q: wp.array[wp.float32]
    """Position targets, coordinate layout like ``joint_q`` [rad]."""
    body_contact_wrench: wp.array[wp.spatial_vector]
    """External contact wrench per body (force [N] first), from Steel's ``contact_f``."""
    base: wp.int32
    """The floating base's body index."""
    root_coords: wp.int32
    """Coordinates of the free root joint (7), before the leg joints."""
    root_dofs: wp.int32
    """DOFs of the free root joint (6)."""
    default_joint_pos: wp.array[wp.float32]
    """Standing pose per joint [rad]."""
    joint_stiffness: wp.array[wp.float32]
    """PD stiffness per joint [N m/rad]."""
    joint_damping: wp.array[wp.float32]
    """PD damping per joint [N m s/rad]."""
    joint_effort_limit: wp.array[wp.float32]
    """Torque limit per joint [N m]."""
    joint_pos_lower: wp.array[wp.float32]
    """Lower position limit per joint [rad]."""
    joint_pos_upper: wp.array[wp.float32]
    """Upper position limit per joint [rad]."""
    feet: wp.array[wp.int32]
    """Body indices of the feet."""
    undesired_bodies: wp.array[wp.int32]
    """Body indices whose contact ``undesired_contacts`` counts (e.g. thighs and shanks; may be empty)."""
    shank_bodies: wp.array[wp.int32]
    """Body indices whose contact ``shank_collision`` costs (mjlab's Go1 rough: the calves; may be empty)."""
    thigh_bodies: wp.array[wp.int32]
    """Body indices whose contact ``thigh_contact`` ends the episode (mjlab's Go1 rough: the thighs; may be empty)."""
    substeps: wp.float32
    """Physics steps per control step: the collision costs count them, as mjlab counts its contact history."""
    collision_force_threshold: wp.float32
    """Contact force [N] above which the collision costs and ``thigh_contact`` count a touch (mjlab's
    ``self_collision_cost`` and ``illegal_contact`` default, 10 N)."""
    commands: wp.array2d[wp.float32]
    """(num_envs, 3): commanded vx, vy [m/s] (base frame) and yaw rate [rad/s]."""
    actions: wp.array2d[wp.float32]
    """(num_envs, joints): this step's clipped actions."""
    last_actions: wp.array2d[wp.float32]
    """(num_envs, joints): the previous step's actions (0 after a reset)."""
    last_joint_vel: wp.array2d[wp.float32]
    """(num_envs, joints): the previous step's joint velocities [rad/s] (0 after a reset)."""
    feet_air_time: wp.array2d[wp.float32]
    """(num_envs, feet): time since each foot left the ground [s] (0 in contact)."""
    feet_first_contact_air: wp.array2d[wp.float32]
    """(num_envs, feet): the air time that ended at a touch-down this step [s], 0 otherwise."""
    friction_scale: wp.array[wp.float32]
    """(num_envs,): the world's friction factor."""
    mass_scale: wp.array[wp.float32]
    """(num_envs,): the world's mass factor."""
    control_dt: wp.float32
    """Seconds per control step [s]."""
    tracking_sigma: wp.float32
    """Width of the exponential tracking kernels [(m/s)^2 or (rad/s)^2]."""
    joint_limit_margin: wp.float32
    """Distance to a limit [rad] inside which the limit penalty grows."""
    feet_air_time_target: wp.float32
    """Air time [s] a touch-down must exceed to be rewarded."""
    command_threshold: wp.float32
    """Planar command speed [m/s] below which the air-time reward is 0 (standing)."""
    contact_force_threshold: wp.float32
    """Contact force [N] above which a body is in contact."""
    max_tilt_cos: wp.float32
    """Smallest z component of the base's up axis before ``bad_orientation`` ends the episode."""
    torso: wp.int32
    """Body whose tilt and roll/pitch rates ``upright`` and ``torso_ang_vel_xy_l2`` read (the base by default)."""
    foot_offsets: wp.array[wp.vec3]
    """Per foot, the foot point in its body's frame [m] (mjlab's foot sites): heights and slip speeds are its."""
    ang_tracking_sigma: wp.float32
    """Width of ``track_angular_velocity``'s kernel [(rad/s)^2]."""
    upright_sigma: wp.float32
    """Width of ``upright``'s kernel [1]."""
    posture_std: wp.array2d[wp.float32]
    """(3, joints): per-joint tolerances of ``variable_posture`` standing, walking, running [rad]."""
    walking_threshold: wp.float32
    """Command speed |cmd_xy| + |cmd_yaw| from which ``variable_posture`` uses the walking tolerances."""
    running_threshold: wp.float32
    """Command speed from which ``variable_posture`` uses the running tolerances."""
    gait_command_threshold: wp.float32
    """Command speed |cmd_xy| + |cmd_yaw| above which the gait terms (clearance, swing height, slip, landing) act."""
    feet_target_height: wp.float32
    """Swing height of the foot points ``feet_clearance`` and ``feet_swing_height`` aim at [m]."""
    feet_peak_height: wp.array2d[wp.float32]
    """(num_envs, feet): highest foot-point height of the current swing [m] (0 in stance)."""
    encoder_bias: wp.array2d[wp.float32]
    """(num_envs, joints): the world's joint-encoder offsets added to ``joint_pos_rel_biased`` [rad]."""
    body_com: wp.array[wp.vec3]
    """Model ``body_com``: centre of mass in each body's frame [m]."""
    body_mass: wp.array[wp.float32]
    """Model ``body_mass`` [kg]."""
    body_inertia: wp.array[wp.mat33]
    """Model ``body_inertia`` about the centre of mass, body frame [kg m^2]."""
    bodies_per_world: wp.int32
    """Bodies of one world (``angular_momentum_l2`` sums them)."""
    terrain_heights: wp.array2d[wp.float32]
    """(ny, nx): the ground's heights [m] (:class:`steel_envs.envs.terrain.Terrain`; flat ground: 2 x 2 zeros)."""
    terrain_origin: wp.vec2
    """World (x, y) of ``terrain_heights[0, 0]`` [m]."""
    terrain_inv_resolution: wp.float32
    """1 / the spacing of ``terrain_heights`` [1/m]."""
    scan_points: wp.array[wp.vec2]
    """The height scan's points in the base's yaw frame (x forward, y left) [m] (may be empty)."""
    terrain_level: wp.array[wp.float32]
    """(num_envs,): the level of the terrain patch the world started on (0 on flat ground)."""
    terrain_margin: wp.float32
    """Distance from the terrain's edge [m] within which ``out_of_terrain`` ends an episode."""
    imu_offset: wp.vec3
    """The IMU site in the base's frame [m] (its axes are the base's)."""
    gravity: wp.vec3
    """The model's gravity [m/s^2], world frame."""
    imu_velocity: wp.array[wp.vec3]
    """(num_envs,): the IMU site's velocity at the last update [m/s], world frame."""
    imu_acc: wp.array[wp.vec3]
    """(num_envs,): the accelerometer's reading [m/s^2], IMU frame (:func:`update_imu`)."""


def make_legged_state(
    env: Any,
    *,
    base: int,
    feet: tuple[int, ...],
    default_joint_pos: np.ndarray,
    joint_pos_lower: np.ndarray,
    joint_pos_upper: np.ndarray,
    stiffness: np.ndarray,
    damping: np.ndarray,
    effort_limit: np.ndarray,
    undesired_bodies: tuple[int, ...] = (),
    torso: int | None = None,
    foot_offsets: np.ndarray | None = None,
    posture_std: np.ndarray | None = None,
) -> LeggedState:
    """A :class:`LeggedState` over ``env``'s model, state, control, actions and contact wrenches, with the per-joint
    arrays given (float32, action order), zeroed per-world buffers (commands, last actions and joint velocities,
    feet air times and peak heights, encoder biases) and the config's ``tracking_sigma``, ``joint_limit_margin``,
    ``feet_air_time_target``, ``contact_force_threshold`` and ``max_tilt_cos`` (the command threshold is 0.1 m/s).

    The mjlab velocity terms' parameters come from the config when it has them (``ang_tracking_sigma``,
    ``upright_sigma``, ``walking_threshold``, ``running_threshold``, ``gait_command_threshold``,
    ``feet_target_height``; else ``tracking_sigma``, 0.2, 0.05, 1.5, 0.05, 0.1 m), ``torso`` (default: the base),
    ``foot_offsets`` ((feet, 3) [m], default: the bodies' origins) and ``posture_std`` ((3, joints) [rad], default
    ones)."""
    m, s, c, n = env.model, env.state_0, env.config, env.num_envs

    def per_joint(values: np.ndarray) -> wp.array:
        return wp.array(np.asarray(values, np.float32), dtype=wp.float32)

    def indices(values: tuple[int, ...]) -> wp.array:
        return wp.array(np.asarray(values, np.int32).reshape(-1), dtype=wp.int32)

    state = LeggedState()
    state.body_world_start, state.coord_world_start = m.body_world_start, m.joint_coord_world_start
    state.dof_world_start = m.joint_dof_world_start
    state.body_q, state.body_qd, state.joint_q, state.joint_qd = s.body_q, s.body_qd, s.joint_q, s.joint_qd
    state.joint_target_q = env.control.joint_target_q
    state.body_contact_wrench = env.body_contact_wrench
    state.base, state.root_coords, state.root_dofs = base, 7, 6
    state.default_joint_pos = per_joint(default_joint_pos)
    state.joint_stiffness, state.joint_damping = per_joint(stiffness), per_joint(damping)
    state.joint_effort_limit = per_joint(effort_limit)
    state.joint_pos_lower, state.joint_pos_upper = per_joint(joint_pos_lower), per_joint(joint_pos_upper)
    state.feet, state.undesired_bodies = indices(feet), indices(undesired_bodies)
    state.shank_bodies, state.thigh_bodies = indices(()), indices(())  # the rough Go1 task sets them
    state.substeps, state.collision_force_threshold = float(env.decimation), 10.0
    state.commands, state.actions = wp.zeros((n, 3), dtype=wp.float32), env.actions
    state.last_actions = wp.zeros((n, env.action_dim), dtype=wp.float32)
    state.last_joint_vel = wp.zeros((n, len(default_joint_pos)), dtype=wp.float32)
    state.feet_air_time, state.feet_first_contact_air = wp.zeros((n, len(feet))), wp.zeros((n, len(feet)))
    state.friction_scale, state.mass_scale = env.randomizer.friction_scale, env.randomizer.mass_scale
    state.control_dt = float(env.control_dt)
    state.tracking_sigma = float(c.tracking_sigma)
    state.joint_limit_margin = float(c.joint_limit_margin)
    state.feet_air_time_target = float(c.feet_air_time_target)
    state.command_threshold = 0.1
    state.contact_force_threshold = float(c.contact_force_threshold)
    state.max_tilt_cos = float(c.max_tilt_cos)
    state.torso = base if torso is None else torso
    offsets = np.zeros((len(feet), 3), np.float32) if foot_offsets is None else foot_offsets
    state.foot_offsets = wp.array(np.asarray(offsets, np.float32).reshape(-1, 3), dtype=wp.vec3)
    state.ang_tracking_sigma = float(getattr(c, "ang_tracking_sigma", c.tracking_sigma))
    state.upright_sigma = float(getattr(c, "upright_sigma", 0.2))
    stds = np.ones((3, len(default_joint_pos)), np.float32) if posture_std is None else posture_std
    state.posture_std = wp.array(np.asarray(stds, np.float32), dtype=wp.float32)
    state.walking_threshold = float(getattr(c, "walking_threshold", 0.05))
    state.running_threshold = float(getattr(c, "running_threshold", 1.5))
    state.gait_command_threshold = float(getattr(c, "gait_command_threshold", 0.05))
    state.feet_target_height = float(getattr(c, "feet_target_height", 0.1))
    state.feet_peak_height, state.encoder_bias = wp.zeros((n, len(feet))), wp.zeros((n, len(default_joint_pos)))
    state.body_com, state.body_mass, state.body_inertia = m.body_com, m.body_mass, m.body_inertia
    state.bodies_per_world = m.body_count // max(1, m.world_count)
    state.terrain_level, state.terrain_margin = wp.zeros(n, dtype=wp.float32), 0.0
    state.imu_offset = wp.vec3(0.0, 0.0, 0.0)
    state.gravity = wp.vec3(*(float(g) for g in np.asarray(m.gravity.numpy(), np.float32).reshape(-1, 3)[0]))
    state.imu_velocity, state.imu_acc = wp.zeros(n, dtype=wp.vec3), wp.zeros(n, dtype=wp.vec3)
    set_terrain(state, None)
    return state


def set_terrain(state: LeggedState, terrain: Any, scan_points: np.ndarray | None = None) -> None:
    """Point ``state``'s ground at ``terrain`` (:class:`steel_envs.envs.terrain.Terrain`; None: flat ground at z = 0)
    and set the height scan's points ((points, 2) [m], base yaw frame; None: none)."""
    if terrain is None:
        state.terrain_heights = wp.zeros((2, 2), dtype=wp.float32)
        state.terrain_origin, state.terrain_inv_resolution = wp.vec2(0.0, 0.0), 1.0
    else:
        state.terrain_heights = wp.array(terrain.heights, dtype=wp.float32)
        state.terrain_origin = wp.vec2(terrain.x0, terrain.y0)
        state.terrain_inv_resolution = 1.0 / terrain.resolution
    points = np.zeros((0, 2), np.float32) if scan_points is None else np.asarray(scan_points, np.float32)
    state.scan_points = wp.array(points.reshape(-1, 2), dtype=wp.vec2)


# ---------------------------------------------------------------------------------------------------- helpers


@wp.func
def _base_rotation(s: Any, w: int) -> wp.quat:
    return wp.transform_get_rotation(s.body_q[s.body_world_start[w] + s.base])


@wp.func
def _base_lin_vel(s: Any, w: int) -> wp.vec3:
    return wp.quat_rotate_inv(_base_rotation(s, w), wp.spatial_top(s.body_qd[s.body_world_start[w] + s.base]))


@wp.func
def _base_ang_vel(s: Any, w: int) -> wp.vec3:
    return wp.quat_rotate_inv(_base_rotation(s, w), wp.spatial_bottom(s.body_qd[s.body_world_start[w] + s.base]))


@wp.func
def _projected_gravity(s: Any, w: int) -> wp.vec3:
    return wp.quat_rotate_inv(_base_rotation(s, w), wp.vec3(0.0, 0.0, -1.0))


@wp.func
def _contact_force(s: Any, w: int, body: int) -> float:
    return wp.length(wp.spatial_top(s.body_contact_wrench[s.body_world_start[w] + body]))


@wp.func
def _in_contact(s: Any, w: int, body: int) -> bool:
    return _contact_force(s, w, body) > s.contact_force_threshold


@wp.func
def _foot_point(s: Any, w: int, i: int) -> wp.vec3:
    """World position of foot ``i``'s point (its body frame offset ``foot_offsets[i]``) [m]."""
    return wp.transform_point(s.body_q[s.body_world_start[w] + s.feet[i]], s.foot_offsets[i])


@wp.func
def _ground_height(s: Any, x: float, y: float) -> float:
    """The ground's height at world (x, y) [m] (0 on flat ground)."""
    return terrain_height(s.terrain_heights, s.terrain_origin, s.terrain_inv_resolution, x, y)


@wp.func
def _foot_height(s: Any, w: int, i: int) -> float:
    """Height of foot ``i``'s point above the ground below it [m]."""
    p = _foot_point(s, w, i)
    return p[2] - _ground_height(s, p[0], p[1])


@wp.func
def _foot_velocity(s: Any, w: int, i: int) -> wp.vec3:
    """World velocity of foot ``i``'s point [m/s]: ``v_com + omega x (p - x_com)``."""
    b = s.body_world_start[w] + s.feet[i]
    x = s.body_q[b]
    qd = s.body_qd[b]
    lever = wp.transform_point(x, s.foot_offsets[i]) - wp.transform_point(x, s.body_com[b])
    return wp.spatial_top(qd) + wp.cross(wp.spatial_bottom(qd), lever)


@wp.func
def _command_speed(s: Any, w: int) -> float:
    """mjlab's total command: |cmd_xy| + |cmd_yaw| [m/s + rad/s, as mjlab adds them]."""
    return wp.sqrt(s.commands[w, 0] * s.commands[w, 0] + s.commands[w, 1] * s.commands[w, 1]) + wp.abs(s.commands[w, 2])


@wp.func
def _gait_active(s: Any, w: int) -> float:
    """1 while the command asks for motion (above ``gait_command_threshold``), else 0."""
    return wp.where(_command_speed(s, w) > s.gait_command_threshold, 1.0, 0.0)


@wp.func
def _heading(q: wp.quat) -> float:
    """Yaw of the body's x axis in the world's xy plane [rad]."""
    forward = wp.quat_rotate(q, wp.vec3(1.0, 0.0, 0.0))
    return wp.atan2(forward[1], forward[0])


# ---------------------------------------------------------------------------------------------------- observations


@term("R^T v_base", source="Isaac Lab mdp.base_lin_vel")
def base_lin_vel(s: Any, w: int) -> wp.vec3:
    """Base linear velocity in the base frame [m/s]; reads ``body_q``, ``body_qd``, ``base``."""
    return _base_lin_vel(s, w)


@term("R^T omega_base", source="Isaac Lab mdp.base_ang_vel")
def base_ang_vel(s: Any, w: int) -> wp.vec3:
    """Base angular velocity in the base frame [rad/s]."""
    return _base_ang_vel(s, w)


@term("R^T (0, 0, -1)", source="Isaac Lab mdp.projected_gravity")
def projected_gravity(s: Any, w: int) -> wp.vec3:
    """Unit gravity direction in the base frame [1]."""
    return _projected_gravity(s, w)


@term("(cmd_vx, cmd_vy, cmd_yaw_rate)", source="Isaac Lab mdp.generated_commands")
def velocity_command(s: Any, w: int) -> wp.vec3:
    """The world's velocity command [m/s, m/s, rad/s]; reads ``commands``."""
    return wp.vec3(s.commands[w, 0], s.commands[w, 1], s.commands[w, 2])


@term("q_j - q_default_j", source="Isaac Lab mdp.joint_pos_rel")
def joint_pos_rel(s: Any, w: int, j: int) -> float:
    """Joint ``j``'s angle minus the standing pose [rad]; reads ``joint_q``, ``default_joint_pos``."""
    return s.joint_q[s.coord_world_start[w] + s.root_coords + j] - s.default_joint_pos[j]


@term("qd_j", source="Isaac Lab mdp.joint_vel_rel (default velocity 0)")
def joint_vel(s: Any, w: int, j: int) -> float:
    """Joint ``j``'s velocity [rad/s]; reads ``joint_qd``."""
    return s.joint_qd[s.dof_world_start[w] + s.root_dofs + j]


@term("a_j", source="Isaac Lab mdp.last_action")
def last_action(s: Any, w: int, j: int) -> float:
    """The action applied this step, entry ``j`` (0 after a reset); reads ``actions``."""
    return s.actions[w, j]


@term("|f_foot|", source="Steel contact_f")
def foot_contact_force(s: Any, w: int, i: int) -> float:
    """Contact force magnitude on foot ``i`` [N]; reads ``body_contact_wrench``, ``feet``."""
    return _contact_force(s, w, s.feet[i])


@term("q_j - q_default_j + b_j", source="mjlab joint_pos_rel(biased=True) with dr.encoder_bias")
def joint_pos_rel_biased(s: Any, w: int, j: int) -> float:
    """Joint ``j``'s angle minus the standing pose as a biased encoder reads it [rad]: plus the world's
    ``encoder_bias`` (drawn at reset)."""
    return s.joint_q[s.coord_world_start[w] + s.root_coords + j] - s.default_joint_pos[j] + s.encoder_bias[w, j]


@term("z_foot - h_ground(x_foot, y_foot)", source="mjlab foot_height (TerrainHeightSensor)")
def foot_height(s: Any, w: int, i: int) -> float:
    """Height of foot ``i``'s point above the ground below it [m]."""
    return _foot_height(s, w, i)


@term("z_base - h_ground(p_i)", source="mjlab height_scan (RayCastSensor terrain_scan, yaw-aligned grid)")
def height_scan(s: Any, w: int, i: int) -> float:
    """Height of the base above the ground at scan point ``i`` (``scan_points[i]`` in the base's yaw frame) [m]:
    a lookup in the terrain's heights, which the robot's own shapes are not part of."""
    base = wp.transform_get_translation(s.body_q[s.body_world_start[w] + s.base])
    yaw = _heading(_base_rotation(s, w))
    return base[2] - _scan_ground(s, base, wp.cos(yaw), wp.sin(yaw), i)


@wp.func
def _scan_ground(s: Any, base: wp.vec3, c: float, sn: float, i: int) -> float:
    """The ground's height [m] under scan point ``i`` (``scan_points[i]`` in the frame of a base at ``base`` turned
    by the yaw whose cosine and sine are ``c``, ``sn``)."""
    p = s.scan_points[i]
    return _ground_height(s, base[0] + c * p[0] - sn * p[1], base[1] + sn * p[0] + c * p[1])


@term("t_air", source="mjlab foot_air_time")
def foot_air_time(s: Any, w: int, i: int) -> float:
    """Time since foot ``i`` left the ground [s] (0 in contact); reads ``feet_air_time``."""
    return s.feet_air_time[w, i]


@term("1 if |f_foot| > threshold", source="mjlab foot_contact")
def foot_contact(s: Any, w: int, i: int) -> float:
    """1 while foot ``i`` touches something with more than ``contact_force_threshold``, else 0."""
    return wp.where(_in_contact(s, w, s.feet[i]), 1.0, 0.0)


@term("sign(f) log(1 + |f|) per component", source="mjlab foot_contact_forces")
def foot_contact_force_log(s: Any, w: int, k: int) -> float:
    """Component ``k % 3`` (world x, y, z) of foot ``k // 3``'s contact force, log-compressed [log N]."""
    f = wp.spatial_top(s.body_contact_wrench[s.body_world_start[w] + s.feet[k // 3]])[k % 3]
    return wp.sign(f) * wp.log(1.0 + wp.abs(f))


@term("z_base", source="Isaac Lab mdp.base_pos_z")
def base_height(s: Any, w: int) -> float:
    """Base height above z = 0 [m]."""
    return wp.transform_get_translation(s.body_q[s.body_world_start[w] + s.base])[2]


@term("friction factor")
def friction_scale(s: Any, w: int) -> float:
    """The world's friction factor (``set_world_parameters``, ``randomize_friction_scale``) [1]."""
    return s.friction_scale[w]


@term("mass factor")
def mass_scale(s: Any, w: int) -> float:
    """The world's mass factor (``set_world_parameters``, ``randomize_mass_scale``) [1]."""
    return s.mass_scale[w]


# ---------------------------------------------------------------------------------------------------- rewards


@term("exp(-|cmd_xy - v_xy|^2 / sigma)", source="legged_gym _reward_tracking_lin_vel")
def track_lin_vel_xy_exp(s: Any, w: int) -> float:
    """Planar velocity tracking in the base frame [1]; reads ``commands``, ``tracking_sigma``."""
    lin = _base_lin_vel(s, w)
    ex = s.commands[w, 0] - lin[0]
    ey = s.commands[w, 1] - lin[1]
    return wp.exp(-(ex * ex + ey * ey) / s.tracking_sigma)


@term("exp(-(cmd_yaw - omega_z)^2 / sigma)", source="legged_gym _reward_tracking_ang_vel")
def track_ang_vel_z_exp(s: Any, w: int) -> float:
    """Yaw-rate tracking [1]."""
    ez = s.commands[w, 2] - _base_ang_vel(s, w)[2]
    return wp.exp(-(ez * ez) / s.tracking_sigma)


@term("v_z^2", source="legged_gym _reward_lin_vel_z")
def lin_vel_z_l2(s: Any, w: int) -> float:
    """Squared vertical base velocity [(m/s)^2]."""
    v = _base_lin_vel(s, w)[2]
    return v * v


@term("omega_x^2 + omega_y^2", source="legged_gym _reward_ang_vel_xy")
def ang_vel_xy_l2(s: Any, w: int) -> float:
    """Squared roll and pitch rates [(rad/s)^2]."""
    ang = _base_ang_vel(s, w)
    return ang[0] * ang[0] + ang[1] * ang[1]


@term("sum_j tau_j^2, tau = clamp(k_p (q* - q) - k_d qd, -tau_max, tau_max)", source="legged_gym _reward_torques")
def joint_torques_l2(s: Any, w: int) -> float:
    """Squared drive torques of the PD law with its effort clamp [(N m)^2]; reads ``joint_target_q``, the gains."""
    q0 = s.coord_world_start[w] + s.root_coords
    d0 = s.dof_world_start[w] + s.root_dofs
    total = float(0.0)
    for j in range(s.default_joint_pos.shape[0]):
        limit = s.joint_effort_limit[j]
        tau = wp.clamp(
            s.joint_stiffness[j] * (s.joint_target_q[q0 + j] - s.joint_q[q0 + j])
            - s.joint_damping[j] * s.joint_qd[d0 + j],
            -limit,
            limit,
        )
        total += tau * tau
    return total


@term("sum_j (a_j - a_prev_j)^2", source="legged_gym _reward_action_rate")
def action_rate_l2(s: Any, w: int) -> float:
    """Squared change of the actions since the last step [1]; reads ``actions``, ``last_actions``."""
    total = float(0.0)
    for j in range(s.actions.shape[1]):
        da = s.actions[w, j] - s.last_actions[w, j]
        total += da * da
    return total


@term("sum_j max(q_j - (upper_j - m), 0) + max((lower_j + m) - q_j, 0)", source="legged_gym _reward_dof_pos_limits")
def joint_pos_limits(s: Any, w: int) -> float:
    """Distance past the soft limits (``joint_limit_margin`` inside the limits) summed over joints [rad]."""
    q0 = s.coord_world_start[w] + s.root_coords
    total = float(0.0)
    for j in range(s.default_joint_pos.shape[0]):
        q = s.joint_q[q0 + j]
        upper = s.joint_pos_upper[j] - s.joint_limit_margin
        lower = s.joint_pos_lower[j] + s.joint_limit_margin
        total += wp.max(q - upper, 0.0) + wp.max(lower - q, 0.0)
    return total


@term(
    "sum over touch-downs of (t_air - t_target), 0 when |cmd_xy| <= 0.1 m/s", source="legged_gym _reward_feet_air_time"
)
def feet_air_time(s: Any, w: int) -> float:
    """Air time beyond the target of the feet that touched down this step [s]; reads ``feet_first_contact_air``."""
    air = float(0.0)
    for i in range(s.feet.shape[0]):
        if s.feet_first_contact_air[w, i] > 0.0:
            air += s.feet_first_contact_air[w, i] - s.feet_air_time_target
    moving = wp.sqrt(s.commands[w, 0] * s.commands[w, 0] + s.commands[w, 1] * s.commands[w, 1]) > s.command_threshold
    if not moving:
        air = 0.0
    return air


@term("g_x^2 + g_y^2, g the gravity direction in the base frame", source="Isaac Lab mdp.flat_orientation_l2")
def flat_orientation_l2(s: Any, w: int) -> float:
    """Squared tilt of the base: the planar part of the projected gravity [1] (0 when level)."""
    g = _projected_gravity(s, w)
    return g[0] * g[0] + g[1] * g[1]


@term("sum_j |q_j - q_default_j|", source="Isaac Lab mdp.joint_deviation_l1")
def joint_deviation_l1(s: Any, w: int) -> float:
    """Distance of the joints from the standing pose, summed [rad]; reads ``joint_q``, ``default_joint_pos``."""
    q0 = s.coord_world_start[w] + s.root_coords
    total = float(0.0)
    for j in range(s.default_joint_pos.shape[0]):
        total += wp.abs(s.joint_q[q0 + j] - s.default_joint_pos[j])
    return total


@term("sum_j ((qd_j - qd_prev_j) / dt)^2", source="legged_gym _reward_dof_acc")
def joint_acc_l2(s: Any, w: int) -> float:
    """Squared joint accelerations, by finite difference over the control step [(rad/s^2)^2]; reads ``joint_qd``,
    ``last_joint_vel`` (0 after a reset, so an episode's first step counts its whole joint velocity)."""
    d0 = s.dof_world_start[w] + s.root_dofs
    total = float(0.0)
    for j in range(s.default_joint_pos.shape[0]):
        acc = (s.joint_qd[d0 + j] - s.last_joint_vel[w, j]) / s.control_dt
        total += acc * acc
    return total


@term("sum over feet in contact of |v_foot_xy|", source="Isaac Lab mdp.feet_slide")
def feet_slide(s: Any, w: int) -> float:
    """Planar speed of the feet that touch the ground (more than ``contact_force_threshold``), summed [m/s];
    ``body_qd``'s linear velocity, world frame."""
    total = float(0.0)
    for i in range(s.feet.shape[0]):
        if _in_contact(s, w, s.feet[i]):
            v = wp.spatial_top(s.body_qd[s.body_world_start[w] + s.feet[i]])
            total += wp.sqrt(v[0] * v[0] + v[1] * v[1])
    return total


@term("number of undesired bodies with |f| > threshold", source="Isaac Lab mdp.undesired_contacts")
def undesired_contacts(s: Any, w: int) -> float:
    """How many of ``undesired_bodies`` touch something with more than ``contact_force_threshold`` [1]."""
    count = float(0.0)
    for i in range(s.undesired_bodies.shape[0]):
        if _in_contact(s, w, s.undesired_bodies[i]):
            count += 1.0
    return count


@term("exp(-(|cmd_xy - v_xy|^2 + v_z^2) / sigma)", source="mjlab track_linear_velocity")
def track_linear_velocity(s: Any, w: int) -> float:
    """Planar velocity tracking with the vertical velocity as error too, base frame [1]."""
    lin = _base_lin_vel(s, w)
    ex = s.commands[w, 0] - lin[0]
    ey = s.commands[w, 1] - lin[1]
    return wp.exp(-(ex * ex + ey * ey + lin[2] * lin[2]) / s.tracking_sigma)


@term("exp(-((cmd_yaw - omega_z)^2 + omega_x^2 + omega_y^2) / sigma_ang)", source="mjlab track_angular_velocity")
def track_angular_velocity(s: Any, w: int) -> float:
    """Yaw-rate tracking with the roll and pitch rates as error too, base frame [1]; reads ``ang_tracking_sigma``."""
    ang = _base_ang_vel(s, w)
    ez = s.commands[w, 2] - ang[2]
    return wp.exp(-(ez * ez + ang[0] * ang[0] + ang[1] * ang[1]) / s.ang_tracking_sigma)


@term("exp(-(g_x^2 + g_y^2) / sigma_up), g gravity in the torso frame", source="mjlab upright")
def upright(s: Any, w: int) -> float:
    """Uprightness of the ``torso`` body on flat ground [1]: 1 level, smaller as it tilts; reads ``upright_sigma``."""
    q = wp.transform_get_rotation(s.body_q[s.body_world_start[w] + s.torso])
    g = wp.quat_rotate_inv(q, wp.vec3(0.0, 0.0, -1.0))
    return wp.exp(-(g[0] * g[0] + g[1] * g[1]) / s.upright_sigma)


@term("exp(-mean_j (q_j - q_default_j)^2 / std_j^2), std by command speed", source="mjlab variable_posture")
def variable_posture(s: Any, w: int) -> float:
    """Closeness to the standing pose with per-joint tolerances ``posture_std`` that loosen with the command speed
    |cmd_xy| + |cmd_yaw|: standing below ``walking_threshold``, walking below ``running_threshold``, else running
    [1]."""
    speed = _command_speed(s, w)
    regime = int(0)
    if speed >= s.running_threshold:
        regime = 2
    elif speed >= s.walking_threshold:
        regime = 1
    q0 = s.coord_world_start[w] + s.root_coords
    joints = s.default_joint_pos.shape[0]
    total = float(0.0)
    for j in range(joints):
        e = (s.joint_q[q0 + j] - s.default_joint_pos[j]) / s.posture_std[regime, j]
        total += e * e
    return wp.exp(-total / float(joints))


@term("number of feet with t_air in (0.05 s, 0.5 s), 0 when |cmd_xy| + |cmd_yaw| <= 0.5", source="mjlab feet_air_time")
def feet_air_time_in_range(s: Any, w: int) -> float:
    """How many feet are in the air for between 0.05 and 0.5 s, while the command speed is above 0.5 [1]."""
    count = float(0.0)
    for i in range(s.feet.shape[0]):
        t = s.feet_air_time[w, i]
        if t > 0.05 and t < 0.5:
            count += 1.0
    return wp.where(_command_speed(s, w) > 0.5, count, 0.0)


@term("sum_feet |z_foot - h_target| |v_foot_xy|, 0 when standing", source="mjlab feet_clearance")
def feet_clearance(s: Any, w: int) -> float:
    """Distance of each foot point from the swing height, weighted by its planar speed, summed [m^2/s]."""
    total = float(0.0)
    for i in range(s.feet.shape[0]):
        v = _foot_velocity(s, w, i)
        total += wp.abs(_foot_height(s, w, i) - s.feet_target_height) * wp.sqrt(v[0] * v[0] + v[1] * v[1])
    return total * _gait_active(s, w)


@term("sum over touch-downs of (h_peak / h_target - 1)^2, 0 when standing", source="mjlab feet_swing_height")
def feet_swing_height(s: Any, w: int) -> float:
    """Relative error of each landing foot's swing peak against the swing height [1]; reads ``feet_peak_height``."""
    total = float(0.0)
    for i in range(s.feet.shape[0]):
        if s.feet_first_contact_air[w, i] > 0.0:
            e = s.feet_peak_height[w, i] / s.feet_target_height - 1.0
            total += e * e
    return total * _gait_active(s, w)


@term("sum over feet in contact of |v_foot_xy|^2, 0 when standing", source="mjlab feet_slip")
def feet_slip(s: Any, w: int) -> float:
    """Squared planar speed of the foot points that touch the ground, summed [(m/s)^2]."""
    total = float(0.0)
    for i in range(s.feet.shape[0]):
        if _in_contact(s, w, s.feet[i]):
            v = _foot_velocity(s, w, i)
            total += v[0] * v[0] + v[1] * v[1]
    return total * _gait_active(s, w)


@term("sum over touch-downs of |f_foot|, 0 when standing", source="mjlab soft_landing")
def soft_landing(s: Any, w: int) -> float:
    """Contact force of the feet that touched down this step, summed [N]."""
    total = float(0.0)
    for i in range(s.feet.shape[0]):
        if s.feet_first_contact_air[w, i] > 0.0:
            total += _contact_force(s, w, s.feet[i])
    return total * _gait_active(s, w)


@term("omega_x^2 + omega_y^2 of the torso, world frame", source="mjlab body_angular_velocity_penalty")
def torso_ang_vel_xy_l2(s: Any, w: int) -> float:
    """Squared world-frame roll and pitch rates of the ``torso`` body [(rad/s)^2]."""
    ang = wp.spatial_bottom(s.body_qd[s.body_world_start[w] + s.torso])
    return ang[0] * ang[0] + ang[1] * ang[1]


@term("|L|^2, L = sum_i (R_i I_i R_i^T omega_i + m_i (c_i - c) x (v_i - v_c))", source="mjlab angular_momentum_penalty")
def angular_momentum_l2(s: Any, w: int) -> float:
    """Squared angular momentum of the whole robot about its centre of mass, world frame [(kg m^2/s)^2] (MuJoCo's
    ``subtreeangmom`` of the root body, what mjlab's ``root_angmom`` sensor reads)."""
    b0 = s.body_world_start[w]
    mass = float(0.0)
    mc = wp.vec3(0.0)
    mv = wp.vec3(0.0)
    spin = wp.vec3(0.0)
    orbit = wp.vec3(0.0)
    for k in range(s.bodies_per_world):
        b = b0 + k
        x = s.body_q[b]
        m = s.body_mass[b]
        c = wp.transform_point(x, s.body_com[b])
        v = wp.spatial_top(s.body_qd[b])
        omega = wp.spatial_bottom(s.body_qd[b])
        r = wp.quat_to_matrix(wp.transform_get_rotation(x))
        spin += r * (s.body_inertia[b] * (wp.transpose(r) * omega))
        orbit += m * wp.cross(c, v)
        mass += m
        mc += m * c
        mv += m * v
    # sum m_i (c_i - c) x (v_i - v_c) = sum m_i c_i x v_i - M c x v_c, with M c = mc and M v_c = mv.
    total = spin + orbit - wp.cross(mc, mv) / mass
    return wp.dot(total, total)


# ---------------------------------------------------------------------------------------------------- terminations


@term("|f_base| > threshold", source="Isaac Lab mdp.illegal_contact")
def illegal_contact(s: Any, w: int) -> bool:
    """The base touches something with more than ``contact_force_threshold``."""
    return _in_contact(s, w, s.base)


@wp.func
def _any_in_contact(s: Any, w: int, bodies: wp.array[wp.int32]) -> bool:
    """One of ``bodies`` touches something with more than ``collision_force_threshold``."""
    hit = bool(False)
    for i in range(bodies.shape[0]):
        if _contact_force(s, w, bodies[i]) > s.collision_force_threshold:
            hit = True
    return hit


@term("substeps * [any shank |f| > 10 N]", source="mjlab self_collision_cost (shank_ground_touch)")
def shank_collision(s: Any, w: int) -> float:
    """Physics steps of the control step in which a shank touched something with more than
    ``collision_force_threshold`` [1]: mjlab counts its contact history's substeps; the contact wrench here is the
    last physics step's, so a touch counts ``substeps`` (0 or 4)."""
    return wp.where(_any_in_contact(s, w, s.shank_bodies), s.substeps, 0.0)


@term("substeps * [|f_base| > 10 N]", source="mjlab self_collision_cost (trunk_ground_touch)")
def base_collision(s: Any, w: int) -> float:
    """As :func:`shank_collision` for the base (Go1's trunk and head are its geoms) [1]."""
    hit = _contact_force(s, w, s.base) > s.collision_force_threshold
    return wp.where(hit, s.substeps, 0.0)


@term("any thigh |f| > 10 N", source="mjlab illegal_contact (thigh_ground_touch)")
def thigh_contact(s: Any, w: int) -> bool:
    """A thigh touches something with more than ``collision_force_threshold``."""
    return _any_in_contact(s, w, s.thigh_bodies)


@wp.func
def _terrain_normal(s: Any, w: int) -> wp.vec3:
    """World-frame unit normal of the least-squares plane ``z = a x + b y + c`` through the ground under the scan
    points (``scan_points``; mjlab fits a plane to its terrain scan's hits, ``terrain_utils.fit_terrain_normal``);
    straight up with fewer than 3 points."""
    n = s.scan_points.shape[0]
    if n < 3:
        return wp.vec3(0.0, 0.0, 1.0)
    base = wp.transform_get_translation(s.body_q[s.body_world_start[w] + s.base])
    yaw = _heading(_base_rotation(s, w))
    c, sn = wp.cos(yaw), wp.sin(yaw)
    # One ground lookup per point: with dx, dy centred on the points' mean, sum(dx) = sum(dy) = 0, so the plane's
    # moments sum(dx dz), sum(dy dz) equal sum(dx z), sum(dy z) and the heights' mean is not needed.
    mx, my = float(0.0), float(0.0)
    for i in range(n):
        p = s.scan_points[i]
        mx += p[0]
        my += p[1]
    inv = 1.0 / float(n)
    mx, my = mx * inv, my * inv
    sxx, syy, sxy, sxz, syz = float(0.0), float(0.0), float(0.0), float(0.0), float(0.0)
    for i in range(n):
        p = s.scan_points[i]
        dx = p[0] - mx
        dy = p[1] - my
        z = _scan_ground(s, base, c, sn, i)
        sxx += dx * dx
        syy += dy * dy
        sxy += dx * dy
        sxz += dx * z
        syz += dy * z
    det = sxx * syy - sxy * sxy
    a = (sxz * syy - syz * sxy) / det
    b = (syz * sxx - sxz * sxy) / det
    normal = wp.normalize(wp.vec3(-a, -b, 1.0))  # in the yaw frame
    return wp.vec3(c * normal[0] - sn * normal[1], sn * normal[0] + c * normal[1], normal[2])


@term("exp(-(n_x^2 + n_y^2) / upright_sigma), n the terrain normal in the torso's frame", source="mjlab upright")
def upright_on_terrain(s: Any, w: int) -> float:
    """Alignment of the ``torso`` body with the ground under the height scan [1]: 1 when its z axis is the normal of
    the plane fitted to the scan's ground heights, smaller as it tilts from it (mjlab's ``upright`` with
    ``terrain_sensor_names``); reads ``upright_sigma``."""
    q = wp.transform_get_rotation(s.body_q[s.body_world_start[w] + s.torso])
    n = wp.quat_rotate_inv(q, _terrain_normal(s, w))
    return wp.exp(-(n[0] * n[0] + n[1] * n[1]) / s.upright_sigma)


@term("up_z < max_tilt_cos", source="Isaac Lab mdp.bad_orientation")
def bad_orientation(s: Any, w: int) -> bool:
    """The base's up axis tilts beyond ``acos(max_tilt_cos)``."""
    return -_projected_gravity(s, w)[2] < s.max_tilt_cos


@term("base within terrain_margin of the terrain's edge", source="mjlab out_of_terrain_bounds")
def out_of_terrain(s: Any, w: int) -> bool:
    """The base is within ``terrain_margin`` of the edge of the terrain's heights."""
    p = wp.transform_get_translation(s.body_q[s.body_world_start[w] + s.base])
    span_x = wp.float32(s.terrain_heights.shape[1] - 1) / s.terrain_inv_resolution
    span_y = wp.float32(s.terrain_heights.shape[0] - 1) / s.terrain_inv_resolution
    u = p[0] - s.terrain_origin[0]
    v = p[1] - s.terrain_origin[1]
    m = s.terrain_margin
    return u < m or v < m or u > span_x - m or v > span_y - m


# ---------------------------------------------------------------------------------------------------- metrics


@term("|cmd_xy - v_xy|^2")
def lin_vel_xy_sq_error(s: Any, w: int) -> float:
    """Squared planar velocity error in the base frame [(m/s)^2] (an RMS metric's step value)."""
    lin = _base_lin_vel(s, w)
    ex = s.commands[w, 0] - lin[0]
    ey = s.commands[w, 1] - lin[1]
    return ex * ex + ey * ey


TRACKING_ERROR = EpisodeMetric(
    "tracking_error",
    lin_vel_xy_sq_error,
    "rms",
    "m/s",
    "RMS over the episode of the planar base velocity's error against the command",
)
"""The velocity tasks' episode metric: RMS of ``|cmd_xy - v_xy|`` over the episode's steps, base frame."""


@term("|cmd_xy|^2")
def command_xy_sq(s: Any, w: int) -> float:
    """Squared planar velocity command [(m/s)^2]: the squared error of a robot standing still."""
    return s.commands[w, 0] * s.commands[w, 0] + s.commands[w, 1] * s.commands[w, 1]


TRACKING_ERROR_HORIZON = EpisodeMetric(
    "tracking_error_horizon",
    lin_vel_xy_sq_error,
    "rms",
    "m/s",
    "RMS over the time limit's steps of the planar base velocity's error against the command, each step lost to "
    "an early end charged |cmd_xy| of the last step (standing still)",
    lost_steps=command_xy_sq,
)
"""The velocity tasks' benchmark score: ``tracking_error`` over the whole time limit, the steps a fall cut off
counted as standing still (the RMS over the steps lived does not charge them: a policy that falls at once scored
better than one standing)."""


@term("level of the world's patch", source="mjlab terrain_levels_vel (curriculum metric)")
def terrain_level(s: Any, w: int) -> float:
    """The world's terrain level (0 on flat ground)."""
    return s.terrain_level[w]


TERRAIN_LEVEL = EpisodeMetric(
    "terrain_level", terrain_level, "mean", "1", "terrain level of the episode's patch (0 easiest, 9 hardest)"
)
"""The rough ground tasks' curriculum metric: the level of the episode's terrain patch."""


# ---------------------------------------------------------------------------------------------------- state updates


@wp.kernel(enable_backward=False)
def resample_velocity_commands(
    episode_length: wp.array[wp.int32],
    force: wp.array[wp.bool],
    interval: wp.int32,
    vx: wp.vec2,
    vy: wp.vec2,
    yaw: wp.vec2,
    rng_state: wp.array[wp.uint32],
    commands: wp.array2d[wp.float32],
):
    """Draw a world's command (vx, vy, yaw rate) uniformly in the ranges when ``force`` or every ``interval``
    control steps of its episode; from the reset stream ``rng_state``."""
    w = wp.tid()
    if not (force[w] or (episode_length[w] > 0 and episode_length[w] % interval == 0)):
        return
    rng = rng_state[w]
    commands[w, 0] = vx[0] + (vx[1] - vx[0]) * wp.randf(rng)
    commands[w, 1] = vy[0] + (vy[1] - vy[0]) * wp.randf(rng)
    commands[w, 2] = yaw[0] + (yaw[1] - yaw[0]) * wp.randf(rng)
    rng_state[w] = rng


@wp.kernel(enable_backward=False)
def update_feet_air_time(s: LeggedState, dt: wp.float32):
    """After the physics: each foot's air time, the air time that ended at a touch-down this step, and the swing's
    peak foot-point height."""
    w = wp.tid()
    for i in range(s.feet.shape[0]):
        touching = _in_contact(s, w, s.feet[i])
        s.feet_first_contact_air[w, i] = 0.0
        if touching:
            if s.feet_air_time[w, i] > 0.0:
                s.feet_first_contact_air[w, i] = s.feet_air_time[w, i] + dt
            s.feet_air_time[w, i] = 0.0
        else:
            s.feet_air_time[w, i] = s.feet_air_time[w, i] + dt
            s.feet_peak_height[w, i] = wp.max(s.feet_peak_height[w, i], _foot_height(s, w, i))


@wp.kernel(enable_backward=False)
def store_last_actions_and_joint_vel(s: LeggedState):
    """After the rewards: the next step's action rate and joint accelerations compare against this step; a foot that
    touched down starts its next swing's peak height from 0."""
    w = wp.tid()
    for i in range(s.feet_peak_height.shape[1]):
        if s.feet_first_contact_air[w, i] > 0.0:
            s.feet_peak_height[w, i] = 0.0
    for j in range(s.last_actions.shape[1]):
        s.last_actions[w, j] = s.actions[w, j]
    d0 = s.dof_world_start[w] + s.root_dofs
    for j in range(s.last_joint_vel.shape[1]):
        s.last_joint_vel[w, j] = s.joint_qd[d0 + j]


@wp.func
def _imu_velocity(s: Any, w: int) -> wp.vec3:
    """World velocity of the IMU site [m/s]: the base's centre-of-mass velocity plus omega x (site - com)."""
    b = s.body_world_start[w] + s.base
    x = s.body_q[b]
    qd = s.body_qd[b]
    lever = wp.transform_point(x, s.imu_offset) - wp.transform_point(x, s.body_com[b])
    return wp.spatial_top(qd) + wp.cross(wp.spatial_bottom(qd), lever)


@wp.kernel(enable_backward=False)
def update_imu(s: LeggedState, dt: wp.float32):
    """After the physics of a control step: the accelerometer reads the specific force at the IMU site, ``R^T (a -
    g)``, with ``a`` the finite difference of the site's velocity over the step ``dt`` [s] (SolverSteel reports no
    body accelerations): +9.81 m/s^2 along the site's up axis at rest, 0 in free fall."""
    w = wp.tid()
    v = _imu_velocity(s, w)
    a = (v - s.imu_velocity[w]) / dt
    s.imu_acc[w] = wp.quat_rotate_inv(_base_rotation(s, w), a - s.gravity)
    s.imu_velocity[w] = v


@wp.kernel(enable_backward=False)
def reset_imu(world_mask: wp.array[wp.bool], s: LeggedState):
    """At a world's reset, after its new state: the site's velocity is the difference's start; the reading is the
    world's at rest (no acceleration)."""
    w = wp.tid()
    if not world_mask[w]:
        return
    s.imu_velocity[w] = _imu_velocity(s, w)
    s.imu_acc[w] = wp.quat_rotate_inv(_base_rotation(s, w), -s.gravity)


@term("R_imu^T omega_base", source="MuJoCo gyro sensor at the IMU site (go1.xml imu_ang_vel)")
def imu_ang_vel(s: Any, w: int) -> wp.vec3:
    """Gyroscope: the base's angular velocity in the IMU frame [rad/s] (the sites' axes are the base's)."""
    return _base_ang_vel(s, w)


@term("R_imu^T (a_imu - g)", source="MuJoCo accelerometer sensor at the IMU site (go1.xml imu_lin_acc)")
def imu_lin_acc(s: Any, w: int) -> wp.vec3:
    """Accelerometer: specific force at the IMU site in its frame [m/s^2] (:func:`update_imu`)."""
    return s.imu_acc[w]


@wp.kernel(enable_backward=False)
def reset_legged_state(world_mask: wp.array[wp.bool], s: LeggedState):
    """A reset world's feet have no air time nor swing peak and its last actions and joint velocities are 0."""
    w = wp.tid()
    if not world_mask[w]:
        return
    for i in range(s.feet_air_time.shape[1]):
        s.feet_air_time[w, i] = 0.0
        s.feet_peak_height[w, i] = 0.0
    for j in range(s.last_actions.shape[1]):
        s.last_actions[w, j] = 0.0
    for j in range(s.last_joint_vel.shape[1]):
        s.last_joint_vel[w, j] = 0.0


@wp.struct
class TwistCommands:
    """mjlab's ``UniformVelocityCommand`` (``mjlab/tasks/velocity/mdp/velocity_command.py``): per-world command
    state and the distribution it draws from. Commands are written to ``LeggedState.commands``."""

    time_left: wp.array[wp.float32]
    """(num_envs,): time until the world's next resample [s]."""
    heading_target: wp.array[wp.float32]
    """(num_envs,): the world heading a heading-mode world turns to [rad]."""
    mode: wp.array[wp.int32]
    """(num_envs,): bit 1 heading mode (the yaw rate follows ``heading_target``), bit 2 standing (all zero)."""
    resample_time: wp.vec2
    """Range of the time between resamples [s]."""
    vx: wp.vec2
    """Range of the forward velocity [m/s]."""
    vy: wp.vec2
    """Range of the lateral velocity [m/s]."""
    yaw_rate: wp.vec2
    """Range of the yaw rate [rad/s], also the clamp of heading mode's."""
    heading: wp.vec2
    """Range of the heading target [rad]."""
    rel_standing: wp.float32
    """Probability of a standing command at a resample."""
    rel_heading: wp.float32
    """Probability of heading mode at a resample."""
    rel_forward: wp.float32
    """Probability of a forward-only command (vx = max(|vx|, 0.3), vy = yaw rate = 0) at a resample."""
    heading_stiffness: wp.float32
    """Heading mode's yaw rate per radian of heading error [1/s]."""


@wp.kernel(enable_backward=False)
def update_twist_commands(
    force: wp.array[wp.bool],
    dt: wp.float32,
    c: TwistCommands,
    s: LeggedState,
    rng_state: wp.array[wp.uint32],
):
    """mjlab's command step: count ``dt`` off the world's resample timer and draw a new command (time, vx, vy, yaw
    rate, heading target, heading, standing and forward modes) when it runs out or ``force``; then a heading-mode
    world's yaw rate is ``clamp(stiffness * wrap(heading_target - heading))`` and a standing world's command is 0.
    With ``dt`` 0 only the ``force`` worlds are touched (a reset)."""
    w = wp.tid()
    if dt == 0.0 and not force[w]:
        return
    c.time_left[w] = c.time_left[w] - dt
    if force[w] or c.time_left[w] <= 0.0:
        rng = rng_state[w]
        c.time_left[w] = c.resample_time[0] + (c.resample_time[1] - c.resample_time[0]) * wp.randf(rng)
        s.commands[w, 0] = c.vx[0] + (c.vx[1] - c.vx[0]) * wp.randf(rng)
        s.commands[w, 1] = c.vy[0] + (c.vy[1] - c.vy[0]) * wp.randf(rng)
        s.commands[w, 2] = c.yaw_rate[0] + (c.yaw_rate[1] - c.yaw_rate[0]) * wp.randf(rng)
        c.heading_target[w] = c.heading[0] + (c.heading[1] - c.heading[0]) * wp.randf(rng)
        mode = int(0)
        if wp.randf(rng) <= c.rel_heading:
            mode = mode | 1
        if wp.randf(rng) <= c.rel_standing:
            mode = mode | 2
        c.mode[w] = mode
        if wp.randf(rng) <= c.rel_forward:
            s.commands[w, 0] = wp.max(wp.abs(s.commands[w, 0]), 0.3)
            s.commands[w, 1] = 0.0
            s.commands[w, 2] = 0.0
        rng_state[w] = rng
    if c.mode[w] & 1:
        error = c.heading_target[w] - _heading(_base_rotation(s, w))
        error = wp.atan2(wp.sin(error), wp.cos(error))
        s.commands[w, 2] = wp.clamp(c.heading_stiffness * error, c.yaw_rate[0], c.yaw_rate[1])
    if c.mode[w] & 2:
        s.commands[w, 0] = 0.0
        s.commands[w, 1] = 0.0
        s.commands[w, 2] = 0.0


@wp.kernel(enable_backward=False)
def push_base_velocity(
    force: wp.array[wp.bool],
    dt: wp.float32,
    interval: wp.vec2,
    lin: wp.vec3,
    ang: wp.vec3,
    dof_world_start: wp.array[wp.int32],
    time_left: wp.array[wp.float32],
    rng_state: wp.array[wp.uint32],
    joint_qd: wp.array[wp.float32],
):
    """mjlab's ``push_by_setting_velocity`` as an interval event: when the world's timer runs out, add U(-lin, lin)
    [m/s] to the floating base's linear and U(-ang, ang) [rad/s] to its angular velocity (world frame; a free
    joint's first six DOFs) and draw the next interval U(interval) [s]. ``force`` worlds (a reset) only draw
    their first interval, with ``dt`` 0."""
    w = wp.tid()
    rng = rng_state[w]
    if force[w]:
        time_left[w] = interval[0] + (interval[1] - interval[0]) * wp.randf(rng)
        rng_state[w] = rng
        return
    if dt == 0.0:
        return
    time_left[w] = time_left[w] - dt
    if time_left[w] > 0.0:
        return
    d = dof_world_start[w]
    for k in range(3):
        joint_qd[d + k] = joint_qd[d + k] + lin[k] * (2.0 * wp.randf(rng) - 1.0)
        joint_qd[d + 3 + k] = joint_qd[d + 3 + k] + ang[k] * (2.0 * wp.randf(rng) - 1.0)
    time_left[w] = interval[0] + (interval[1] - interval[0]) * wp.randf(rng)
    rng_state[w] = rng


@wp.kernel(enable_backward=False)
def draw_encoder_bias(world_mask: wp.array[wp.bool], bound: wp.float32, rng_state: wp.array[wp.uint32], s: LeggedState):
    """A reset world's joint-encoder offsets, U(-bound, bound) [rad] per joint (mjlab ``dr.encoder_bias``)."""
    w = wp.tid()
    if not world_mask[w]:
        return
    rng = rng_state[w]
    for j in range(s.encoder_bias.shape[1]):
        s.encoder_bias[w, j] = bound * (2.0 * wp.randf(rng) - 1.0)
    rng_state[w] = rng


@wp.kernel(enable_backward=False)
def base_com_offsets(
    world_mask: wp.array[wp.bool],
    body: wp.int32,
    nominal: wp.vec3,
    bounds: wp.vec3,
    body_world_start: wp.array[wp.int32],
    rng_state: wp.array[wp.uint32],
    body_com: wp.array[wp.vec3],
):
    """A reset world's ``body`` gets its centre of mass at ``nominal + U(-bounds, bounds)`` per axis [m], body frame
    (mjlab ``dr.body_com_offset`` with ``operation="add"``)."""
    w = wp.tid()
    if not world_mask[w]:
        return
    rng = rng_state[w]
    offset = wp.vec3(
        bounds[0] * (2.0 * wp.randf(rng) - 1.0),
        bounds[1] * (2.0 * wp.randf(rng) - 1.0),
        bounds[2] * (2.0 * wp.randf(rng) - 1.0),
    )
    body_com[body_world_start[w] + body] = nominal + offset
    rng_state[w] = rng
