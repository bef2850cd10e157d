"""Terms of the classic-control tasks on a cart-pole (Gymnasium CartPole-v1, dm_control ``cartpole``): the term
state :class:`CartpoleState`, the cart and pole observations, CartPole-v1's alive reward and end conditions, and
dm_control's smooth swing-up reward with its tolerance functions.

The cart is the world's first coordinate (position [m]) and the pole its second (angle from upright [rad]).
"""

from __future__ import annotations

from typing import Any

import warp as wp

from steel_envs.spec import term

__all__ = [
    "CartpoleState",
    "alive",
    "cart_off_rail",
    "cart_pos",
    "cart_vel",
    "gaussian_tolerance",
    "make_cartpole_state",
    "pole_ang_vel",
    "pole_angle",
    "pole_cos",
    "pole_fell",
    "pole_sin",
    "quadratic_tolerance",
    "smooth_upright",
    "wrap_angle",
]


@wp.struct
class CartpoleState:
    """What the cart-pole terms read: the joint state, the actions and the task's thresholds and margins."""

    coord_world_start: wp.array[wp.int32]
    dof_world_start: wp.array[wp.int32]
    joint_q: wp.array[wp.float32]
    joint_qd: wp.array[wp.float32]
    actions: wp.array2d[wp.float32]
    pole_angle_limit: wp.float32
    """|theta| [rad] beyond which the pole fell (CartPole-v1)."""
    cart_position_limit: wp.float32
    """|x| [m] beyond which the cart left the rail (CartPole-v1)."""
    centered_margin: wp.float32
    """Cart distance [m] at which dm_control's centring factor has fallen to 0.1."""
    control_margin: wp.float32
    """Action magnitude at which the small-control factor reaches 0."""
    velocity_margin: wp.float32
    """Pole angular speed [rad/s] at which the small-velocity factor has fallen to 0.1."""


def make_cartpole_state(env: Any) -> CartpoleState:
    """A :class:`CartpoleState` over ``env``'s model, state and actions; the config fields it does not have are 0."""
    m, s, c = env.model, env.state_0, env.config
    state = CartpoleState()
    state.coord_world_start, state.dof_world_start = m.joint_coord_world_start, m.joint_dof_world_start
    state.joint_q, state.joint_qd, state.actions = s.joint_q, s.joint_qd, env.actions
    for name in ("pole_angle_limit", "cart_position_limit", "centered_margin", "control_margin", "velocity_margin"):
        setattr(state, name, float(getattr(c, name, 0.0)))
    return state


@wp.func
def wrap_angle(a: float) -> float:
    """``a`` wrapped to [-pi, pi] [rad]."""
    return wp.atan2(wp.sin(a), wp.cos(a))


@wp.func
def gaussian_tolerance(x: float, margin: float) -> float:
    """dm_control ``rewards.tolerance(x, bounds=(0, 0), margin, sigmoid="gaussian", value_at_margin=0.1)``."""
    scale = wp.sqrt(-2.0 * wp.log(0.1))
    d = x / margin * scale
    return wp.exp(-0.5 * d * d)


@wp.func
def quadratic_tolerance(x: float, margin: float) -> float:
    """dm_control ``rewards.tolerance(x, bounds=(0, 0), margin, sigmoid="quadratic", value_at_margin=0)``."""
    d = x / margin
    return wp.max(1.0 - d * d, 0.0)


@wp.func
def _pole(s: Any, w: int) -> float:
    return s.joint_q[s.coord_world_start[w] + 1]


@term("x")
def cart_pos(s: Any, w: int) -> float:
    """Cart position [m]."""
    return s.joint_q[s.coord_world_start[w]]


@term("x_dot")
def cart_vel(s: Any, w: int) -> float:
    """Cart velocity [m/s]."""
    return s.joint_qd[s.dof_world_start[w]]


@term("wrap(theta)")
def pole_angle(s: Any, w: int) -> float:
    """Pole angle from upright, wrapped to [-pi, pi] [rad]."""
    return wrap_angle(_pole(s, w))


@term("cos(theta)")
def pole_cos(s: Any, w: int) -> float:
    """Cosine of the pole angle [1]."""
    return wp.cos(_pole(s, w))


@term("sin(theta)")
def pole_sin(s: Any, w: int) -> float:
    """Sine of the pole angle [1]."""
    return wp.sin(_pole(s, w))


@term("theta_dot")
def pole_ang_vel(s: Any, w: int) -> float:
    """Pole angular velocity [rad/s]."""
    return s.joint_qd[s.dof_world_start[w] + 1]


@term("1", source="Gymnasium CartPole-v1")
def alive(s: Any, w: int) -> float:
    """1 on every step, the terminating one included."""
    return 1.0


@term(
    "upright * centered * small_control * small_velocity",
    source="dm_control suite/cartpole.py _get_reward (smooth)",
)
def smooth_upright(s: Any, w: int) -> float:
    """dm_control's smooth swing-up reward in [0, 1]: ``upright = (cos(theta) + 1) / 2``, ``centered = (1 + g(x))
    / 2``, ``small_control = (4 + q(a)) / 5``, ``small_velocity = (1 + g(theta_dot)) / 2`` with ``g``
    :func:`gaussian_tolerance` and ``q`` :func:`quadratic_tolerance` at the state's margins."""
    q0 = s.coord_world_start[w]
    d0 = s.dof_world_start[w]
    upright = (wp.cos(s.joint_q[q0 + 1]) + 1.0) / 2.0
    centered = (1.0 + gaussian_tolerance(s.joint_q[q0], s.centered_margin)) / 2.0
    small_control = (4.0 + quadratic_tolerance(s.actions[w, 0], s.control_margin)) / 5.0
    small_velocity = (1.0 + gaussian_tolerance(s.joint_qd[d0 + 1], s.velocity_margin)) / 2.0
    return upright * centered * small_control * small_velocity


@term("|wrap(theta)| > theta_max", source="Gymnasium CartPole-v1")
def pole_fell(s: Any, w: int) -> bool:
    """The pole tilted beyond ``pole_angle_limit``."""
    return wp.abs(wrap_angle(_pole(s, w))) > s.pole_angle_limit


@term("|x| > x_max", source="Gymnasium CartPole-v1")
def cart_off_rail(s: Any, w: int) -> bool:
    """The cart is beyond ``cart_position_limit``."""
    return wp.abs(s.joint_q[s.coord_world_start[w]]) > s.cart_position_limit
