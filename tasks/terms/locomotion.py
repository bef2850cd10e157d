"""Terms of Gymnasium's MuJoCo locomotion tasks (Ant-v5, Humanoid-v5) on a floating-base model: the term state
:class:`RunState`, the observation blocks these tasks start with, the forward, control, contact and survival
rewards, the healthy-height and tilt terminations, the distance and uprightness metrics, and the state update that
records where a step starts.

Units: positions [m], velocities [m/s, rad/s] in the world frame (Newton's), torques [N m], wrenches [N, N m].
"""

from __future__ import annotations

from typing import Any

import warp as wp

from steel_envs.spec import EpisodeMetric, ObservationBlock, TermFunction, term

__all__ = [
    "RunState",
    "action_sq_norm",
    "body_contact_wrench",
    "body_contact_wrench_clipped",
    "body_vel",
    "com_x_displacement",
    "contact_cost_clamped",
    "contact_cost_clipped",
    "distance_metric",
    "fell_over",
    "floating_base_blocks",
    "forward_velocity_com",
    "forward_velocity_torso",
    "healthy",
    "hinge_pos",
    "hinge_torque",
    "hinge_vel",
    "make_run_state",
    "record_com_x",
    "record_torso_x",
    "root_ang_vel",
    "root_lin_vel",
    "root_pos_xy",
    "root_pos_z",
    "root_quat",
    "torso_x_displacement",
    "unhealthy",
    "upright_fraction_metric",
    "upright_step",
]


@wp.struct
class RunState:
    """What the locomotion terms read. The floating base is the world's first joint (7 coordinates, 6 DOFs) and
    its first body (the torso)."""

    body_world_start: wp.array[wp.int32]
    coord_world_start: wp.array[wp.int32]
    dof_world_start: wp.array[wp.int32]
    body_q: wp.array[wp.transform]
    body_qd: wp.array[wp.spatial_vector]
    body_com: wp.array[wp.vec3]
    body_mass: wp.array[wp.float32]
    joint_q: wp.array[wp.float32]
    joint_qd: wp.array[wp.float32]
    joint_f: wp.array[wp.float32]
    """Applied joint efforts [N m], DOF layout."""
    body_contact_wrench: wp.array[wp.spatial_vector]
    """External contact wrench per body (force [N], torque about the COM [N m]), from Steel's ``contact_f``."""
    actions: wp.array2d[wp.float32]
    x_before: wp.array[wp.float32]
    """(num_envs,): the x [m] the step started from (torso or centre of mass), recorded before the physics."""
    control_dt: wp.float32
    """[s]"""
    healthy_z_min: wp.float32
    healthy_z_max: wp.float32
    healthy_z_inclusive: wp.bool
    """Healthy in [min, max] (Ant-v5) or (min, max) (Humanoid-v5)."""
    terminate_when_unhealthy: wp.bool
    contact_force_clip: wp.float32
    """Wrench components are clipped to [-clip, clip] in the clipped contact terms."""
    contact_cost_weight: wp.float32
    """For :func:`contact_cost_clamped`, whose clamp follows the weight."""
    contact_cost_max: wp.float32
    max_tilt_cos: wp.float32
    """:func:`fell_over` ends an episode when the torso's up-component falls below it (-2: never)."""


def make_run_state(env: Any, *, inclusive: bool, contact_force_clip: float = float("inf")) -> RunState:
    """A :class:`RunState` over ``env``'s model, state, control, actions and contact wrenches, with the config's
    healthy range, ``terminate_when_unhealthy`` and (where it has them) contact cost weight and clamp and
    ``max_tilt_cos``."""
    m, s, c = env.model, env.state_0, env.config
    state = RunState()
    state.body_world_start, state.coord_world_start = m.body_world_start, m.joint_coord_world_start
    state.dof_world_start, state.body_com, state.body_mass = m.joint_dof_world_start, m.body_com, m.body_mass
    state.body_q, state.body_qd, state.joint_q, state.joint_qd = s.body_q, s.body_qd, s.joint_q, s.joint_qd
    state.joint_f, state.body_contact_wrench, state.actions = env.control.joint_f, env.body_contact_wrench, env.actions
    state.x_before = wp.zeros(env.num_envs, dtype=wp.float32)
    state.control_dt = float(env.control_dt)
    state.healthy_z_min, state.healthy_z_max = float(c.healthy_z_min), float(c.healthy_z_max)
    state.healthy_z_inclusive, state.terminate_when_unhealthy = inclusive, bool(c.terminate_when_unhealthy)
    state.contact_force_clip = contact_force_clip
    state.contact_cost_weight = float(getattr(c, "contact_cost_weight", 0.0))
    state.contact_cost_max = float(getattr(c, "contact_cost_max", 0.0))
    state.max_tilt_cos = float(getattr(c, "max_tilt_cos", -2.0))
    return state


# ---------------------------------------------------------------------------------------------------- helpers


@wp.func
def _torso_x(s: Any, w: int) -> float:
    return wp.transform_get_translation(s.body_q[s.body_world_start[w]])[0]


@wp.func
def _com_x(s: Any, w: int) -> float:
    """x of the mass-weighted centre of mass of the world's bodies [m]."""
    total = float(0.0)
    moment = float(0.0)
    for b in range(s.body_world_start[w], s.body_world_start[w + 1]):
        p = wp.transform_point(s.body_q[b], s.body_com[b])
        moment += s.body_mass[b] * p[0]
        total += s.body_mass[b]
    return moment / total


@wp.func
def _is_healthy(s: Any, w: int) -> bool:
    z = s.joint_q[s.coord_world_start[w] + 2]
    ok = z > s.healthy_z_min and z < s.healthy_z_max
    if s.healthy_z_inclusive:
        ok = z >= s.healthy_z_min and z <= s.healthy_z_max
    return ok


@wp.func
def _up_z(s: Any, w: int) -> float:
    """World z component of the torso's z axis [1]: 1 upright, 0 on its side, -1 upside down."""
    q = wp.transform_get_rotation(s.body_q[s.body_world_start[w]])
    return wp.quat_rotate(q, wp.vec3(0.0, 0.0, 1.0))[2]


@wp.func
def _wrench_sq_norm(s: Any, w: int, clip: float) -> float:
    """``sum(clip(wrench, -clip, clip)**2)`` over the world's bodies (``cfrc_ext``)."""
    total = float(0.0)
    for b in range(s.body_world_start[w], s.body_world_start[w + 1]):
        f = s.body_contact_wrench[b]
        for j in range(6):
            c = wp.clamp(f[j], -clip, clip)
            total += c * c
    return total


# ---------------------------------------------------------------------------------------------------- observations


@term("(x, y)_torso")
def root_pos_xy(s: Any, w: int) -> wp.vec2:
    """Torso x, y [m] (Gymnasium excludes them by default)."""
    q0 = s.coord_world_start[w]
    return wp.vec2(s.joint_q[q0], s.joint_q[q0 + 1])


@term("z_torso")
def root_pos_z(s: Any, w: int) -> float:
    """Torso height [m]."""
    return s.joint_q[s.coord_world_start[w] + 2]


@term("(qx, qy, qz, qw)_torso")
def root_quat(s: Any, w: int, i: int) -> float:
    """Torso orientation quaternion, entry ``i`` (x, y, z, w) [1]."""
    return s.joint_q[s.coord_world_start[w] + 3 + i]


@term("q_j")
def hinge_pos(s: Any, w: int, j: int) -> float:
    """Angle of the ``j``-th joint coordinate after the free root [rad]."""
    return s.joint_q[s.coord_world_start[w] + 7 + j]


@term("v_torso")
def root_lin_vel(s: Any, w: int, i: int) -> float:
    """Torso centre-of-mass velocity, world frame, entry ``i`` [m/s]."""
    return s.joint_qd[s.dof_world_start[w] + i]


@term("omega_torso")
def root_ang_vel(s: Any, w: int, i: int) -> float:
    """Torso angular velocity, world frame, entry ``i`` [rad/s]."""
    return s.joint_qd[s.dof_world_start[w] + 3 + i]


@term("qd_j")
def hinge_vel(s: Any, w: int, j: int) -> float:
    """Velocity of the ``j``-th DOF after the free root [rad/s]."""
    return s.joint_qd[s.dof_world_start[w] + 6 + j]


@term("(v, omega)_b", source="Gymnasium Humanoid-v5 cvel")
def body_vel(s: Any, w: int, i: int) -> float:
    """Entry ``i % 6`` of body ``i // 6``'s velocity (COM linear, angular; world frame) [m/s, rad/s]."""
    return s.body_qd[s.body_world_start[w] + i // 6][i % 6]


@term("tau_j", source="Gymnasium Humanoid-v5 qfrc_actuator")
def hinge_torque(s: Any, w: int, j: int) -> float:
    """Applied effort of the ``j``-th DOF after the free root [N m]."""
    return s.joint_f[s.dof_world_start[w] + 6 + j]


@term("f_b", source="Gymnasium Humanoid-v5 cfrc_ext")
def body_contact_wrench(s: Any, w: int, i: int) -> float:
    """Entry ``i % 6`` of body ``i // 6``'s contact wrench (force, torque about the COM) [N, N m]."""
    return s.body_contact_wrench[s.body_world_start[w] + i // 6][i % 6]


@term("clip(f_b, -c, c)", source="Gymnasium Ant-v5 cfrc_ext with contact_force_range")
def body_contact_wrench_clipped(s: Any, w: int, i: int) -> float:
    """:func:`body_contact_wrench` clipped to ``contact_force_clip`` [N, N m]."""
    f = s.body_contact_wrench[s.body_world_start[w] + i // 6][i % 6]
    return wp.clamp(f, -s.contact_force_clip, s.contact_force_clip)


# ---------------------------------------------------------------------------------------------------- rewards


@term("(x_torso' - x_torso) / dt", source="Gymnasium Ant-v5 forward_reward")
def forward_velocity_torso(s: Any, w: int) -> float:
    """The torso's mean x velocity over the step [m/s]; reads ``x_before``."""
    return (_torso_x(s, w) - s.x_before[w]) / s.control_dt


@term("(x_com' - x_com) / dt", source="Gymnasium Humanoid-v5 forward_reward")
def forward_velocity_com(s: Any, w: int) -> float:
    """The mass-weighted centre of mass's mean x velocity over the step [m/s]; reads ``x_before``."""
    return (_com_x(s, w) - s.x_before[w]) / s.control_dt


@term("sum_j a_j^2", source="Gymnasium Ant-v5 / Humanoid-v5 control_cost")
def action_sq_norm(s: Any, w: int) -> float:
    """Squared norm of the clipped action [1]."""
    total = float(0.0)
    for j in range(s.actions.shape[1]):
        total += s.actions[w, j] * s.actions[w, j]
    return total


@term("sum_b |clip(f_b, -c, c)|^2", source="Gymnasium Ant-v5 contact_cost")
def contact_cost_clipped(s: Any, w: int) -> float:
    """Squared norm of the clipped contact wrenches of every body [1]."""
    return _wrench_sq_norm(s, w, s.contact_force_clip)


@term("-min(w_contact * sum_b |f_b|^2, c_max)", source="Gymnasium Humanoid-v5 contact_cost")
def contact_cost_clamped(s: Any, w: int) -> float:
    """The contact penalty clamped after weighting, so the function applies ``contact_cost_weight`` itself [1]."""
    return -wp.min(s.contact_cost_weight * _wrench_sq_norm(s, w, wp.inf), s.contact_cost_max)


@term("1 if z_min <= z_torso <= z_max", source="Gymnasium Ant-v5 / Humanoid-v5 healthy_reward")
def healthy(s: Any, w: int) -> float:
    """1 while the torso height is in the healthy range after the step, else 0."""
    survive = float(0.0)
    if _is_healthy(s, w):
        survive = 1.0
    return survive


# ---------------------------------------------------------------------------------------------------- terminations


@term("z_torso outside [z_min, z_max]", source="Gymnasium Ant-v5 / Humanoid-v5 terminated")
def unhealthy(s: Any, w: int) -> bool:
    """The torso left the healthy height range (and ``terminate_when_unhealthy``)."""
    return s.terminate_when_unhealthy and not _is_healthy(s, w)


@term("up_z(torso) < max_tilt_cos", source="Isaac Lab mdp.bad_orientation, mjlab fell_over")
def fell_over(s: Any, w: int) -> bool:
    """The torso's z axis tilts beyond ``acos(max_tilt_cos)`` from the world's up (on its side or its back)."""
    return _up_z(s, w) < s.max_tilt_cos


# ---------------------------------------------------------------------------------------------------- metrics


@term("x_torso' - x_torso")
def torso_x_displacement(s: Any, w: int) -> float:
    """The torso's displacement in x over the step [m] (summed into a distance)."""
    return _torso_x(s, w) - s.x_before[w]


@term("x_com' - x_com")
def com_x_displacement(s: Any, w: int) -> float:
    """The centre of mass's displacement in x over the step [m] (summed into a distance)."""
    return _com_x(s, w) - s.x_before[w]


def distance_metric(point: str, displacement: TermFunction) -> EpisodeMetric:
    """``distance_x`` [m]: how far ``point`` moved in +x over the episode (an early end counts the distance
    reached); the sum of the steps' ``displacement``."""
    return EpisodeMetric(
        "distance_x", displacement, "sum", "m", f"distance the {point} travelled in +x over the episode"
    )


@term("1 if up_z(torso) > 0.5")
def upright_step(s: Any, w: int) -> float:
    """1 when the torso's z axis is within 60 degrees of the world's up after the step, else 0."""
    up = float(0.0)
    if _up_z(s, w) > 0.5:
        up = 1.0
    return up


def upright_fraction_metric() -> EpisodeMetric:
    """``upright_fraction`` [1]: the fraction of the episode's steps that end with the torso's z axis within 60
    degrees of the world's up (up-component > 0.5), the mean of :func:`upright_step`."""
    return EpisodeMetric(
        "upright_fraction",
        upright_step,
        "mean",
        "1",
        "fraction of the episode's steps with the torso's up-component above 0.5 (within 60 degrees of upright)",
    )


def floating_base_blocks(hinges: int) -> tuple[ObservationBlock, ...]:
    """The observation blocks Gymnasium's Ant-v5 and Humanoid-v5 start with (after the excluded torso x, y): torso
    height and orientation, hinge angles, torso velocities, hinge velocities."""
    return (
        ObservationBlock("torso_z", 1, root_pos_z, "torso z", "m"),
        ObservationBlock("torso_quat", 4, root_quat, "torso orientation quaternion (x, y, z, w)", "1"),
        ObservationBlock("joint_pos", hinges, hinge_pos, "hinge angles (action order)", "rad"),
        ObservationBlock("torso_lin_vel", 3, root_lin_vel, "torso centre-of-mass velocity, world frame", "m/s"),
        ObservationBlock("torso_ang_vel", 3, root_ang_vel, "torso angular velocity, world frame", "rad/s"),
        ObservationBlock("joint_vel", hinges, hinge_vel, "hinge angular velocities", "rad/s"),
    )


# ---------------------------------------------------------------------------------------------------- state updates


@wp.kernel(enable_backward=False)
def record_torso_x(s: RunState):
    """Before the physics: the torso x the step's forward velocity starts from."""
    w = wp.tid()
    s.x_before[w] = _torso_x(s, w)


@wp.kernel(enable_backward=False)
def record_com_x(s: RunState):
    """Before the physics: the centre-of-mass x the step's forward velocity starts from."""
    w = wp.tid()
    s.x_before[w] = _com_x(s, w)
