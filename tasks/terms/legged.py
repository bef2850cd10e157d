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

from steel_envs.spec import term

__all__ = [
    "LeggedState",
    "action_rate_l2",
    "ang_vel_xy_l2",
    "bad_orientation",
    "base_ang_vel",
    "base_height",
    "base_lin_vel",
    "feet_air_time",
    "feet_slide",
    "flat_orientation_l2",
    "foot_contact_force",
    "friction_scale",
    "illegal_contact",
    "joint_acc_l2",
    "joint_deviation_l1",
    "joint_pos_limits",
    "joint_pos_rel",
    "joint_torques_l2",
    "joint_vel",
    "last_action",
    "lin_vel_xy_sq_error",
    "lin_vel_z_l2",
    "make_legged_state",
    "mass_scale",
    "projected_gravity",
    "resample_velocity_commands",
    "reset_legged_state",
    "store_last_actions_and_joint_vel",
    "track_ang_vel_z_exp",
    "track_lin_vel_xy_exp",
    "undesired_contacts",
    "update_feet_air_time",
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
) -> LeggedState:
    """A :class:`LeggedState` over ``env``'s model, state, control, actions and contact wrenches, with the per-joint
    arrays given (float32, action order), zeroed per-world buffers (commands, last actions and joint velocities,
    feet air times) and the config's ``tracking_sigma``, ``joint_limit_margin``, ``feet_air_time_target``,
    ``contact_force_threshold`` and ``max_tilt_cos`` (the command threshold is 0.1 m/s)."""
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
    state.commands, state.actions = wp.zeros((n, 3), dtype=wp.float32), env.actions
    state.last_actions = wp.zeros((n, env.action_dim), dtype=wp.float32)
    state.last_joint_vel = wp.zeros((n, len(default_joint_pos)), dtype=wp.float32)
    state.feet_air_time = wp.zeros((n, len(feet)), dtype=wp.float32)
    state.feet_first_contact_air = wp.zeros((n, len(feet)), dtype=wp.float32)
    state.friction_scale, state.mass_scale = env.randomizer.friction_scale, env.randomizer.mass_scale
    state.control_dt = float(env.control_dt)
    state.tracking_sigma = float(c.tracking_sigma)
    state.joint_limit_margin = float(c.joint_limit_margin)
    state.feet_air_time_target = float(c.feet_air_time_target)
    state.command_threshold = 0.1
    state.contact_force_threshold = float(c.contact_force_threshold)
    state.max_tilt_cos = float(c.max_tilt_cos)
    return state


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


# ---------------------------------------------------------------------------------------------------- terminations


@term("|f_base| > threshold", source="Isaac Lab mdp.illegal_contact")
def illegal_contact(s: Any, w: int) -> bool:
    """The base touches something with more than ``contact_force_threshold``."""
    return _in_contact(s, w, s.base)


@term("up_z < max_tilt_cos", source="Isaac Lab mdp.bad_orientation")
def bad_orientation(s: Any, w: int) -> bool:
    """The base's up axis tilts beyond ``acos(max_tilt_cos)``."""
    return -_projected_gravity(s, w)[2] < s.max_tilt_cos


# ---------------------------------------------------------------------------------------------------- metrics


@term("|cmd_xy - v_xy|^2")
def lin_vel_xy_sq_error(s: Any, w: int) -> float:
    """Squared planar velocity error in the base frame [(m/s)^2] (an RMS metric's step value)."""
    lin = _base_lin_vel(s, w)
    ex = s.commands[w, 0] - lin[0]
    ey = s.commands[w, 1] - lin[1]
    return ex * ex + ey * ey


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
    """After the physics: each foot's air time, and the air time that ended at a touch-down this step."""
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


@wp.kernel(enable_backward=False)
def store_last_actions_and_joint_vel(s: LeggedState):
    """After the rewards: the next step's action rate and joint accelerations compare against this step."""
    w = wp.tid()
    for j in range(s.last_actions.shape[1]):
        s.last_actions[w, j] = s.actions[w, j]
    d0 = s.dof_world_start[w] + s.root_dofs
    for j in range(s.last_joint_vel.shape[1]):
        s.last_joint_vel[w, j] = s.joint_qd[d0 + j]


@wp.kernel(enable_backward=False)
def reset_legged_state(world_mask: wp.array[wp.bool], s: LeggedState):
    """A reset world's feet have no air time and its last actions and joint velocities are 0."""
    w = wp.tid()
    if not world_mask[w]:
        return
    for i in range(s.feet_air_time.shape[1]):
        s.feet_air_time[w, i] = 0.0
    for j in range(s.last_actions.shape[1]):
        s.last_actions[w, j] = 0.0
    for j in range(s.last_joint_vel.shape[1]):
        s.last_joint_vel[w, j] = 0.0
