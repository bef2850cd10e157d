"""``steel_envs/CartpoleSwingup-v0``: swing the pole up from hanging down and keep it there (dm_control style)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from steel_envs.envs.cartpole import POLE_HALF_LENGTH, POLE_MASS, CartpoleScene, CartpoleSceneConfig
from steel_envs.tasks.terms import classic

from steel_envs.benchmark import BenchmarkSpec
from steel_envs.ranges import declare, positive
from steel_envs.registration import register_task
from steel_envs.solver_options import SteelSolverOptions
from steel_envs.spec import ObservationBlock, RewardTerm
from steel_envs.train_config import PpoConfig

__all__ = ["CartpoleSwingupConfig", "CartpoleSwingupEnv", "CartpoleSwingupSingleEnv", "scripted_policy"]


@dataclass(kw_only=True)
class CartpoleSwingupConfig(CartpoleSceneConfig):
    """Swing-up: the pole starts hanging down; margins of the smooth reward (dm_control's cartpole swingup)."""

    initial_pole_angle: float = math.pi
    """Mean initial pole angle [rad]: hanging down."""
    centered_margin: float = 2.0
    """Cart distance [m] at which the centring factor has fallen to 0.1 (then mapped to 0.55)."""
    control_margin: float = 1.0
    """Action magnitude at which the small-control factor reaches 0 (then mapped to 0.8)."""
    velocity_margin: float = 5.0
    """Pole angular speed [rad/s] at which the small-velocity factor has fallen to 0.1 (then mapped to 0.55)."""
    cart_position_limit: float = 1.8
    """Half-length of the rail [m]: the cart's joint is limited to [-limit, limit] (dm_control ``cartpole.xml``:
    ``<joint name="slider" ... range="-1.8 1.8">``)."""

    field_ranges = declare(
        centered_margin=positive("a tolerance margin [m]; the reward divides by it"),
        control_margin=positive("a tolerance margin; the reward divides by it"),
        velocity_margin=positive("a tolerance margin [rad/s]; the reward divides by it"),
        cart_position_limit=positive("the rail's half-length [m]"),
    )


class CartpoleSwingupEnv(CartpoleScene):
    """Swing a hanging pole up by pushing the cart, then balance it (dm_control ``cartpole.swingup``).

    ## Action space
    | index | action | min | max | unit |
    |---|---|---|---|---|
    | 0 | force on the cart, times ``force_scale`` (10 N) | -1 | 1 | 1 |

    ## Observation space
    | index | observation | unit |
    |---|---|---|
    | 0 | cart position x | m |
    | 1 | cart velocity | m/s |
    | 2 | cosine of the pole angle | 1 |
    | 3 | sine of the pole angle | 1 |
    | 4 | pole angular velocity | rad/s |

    ## Rewards (dm_control ``suite/cartpole.py``, smooth reward)
    ``reward_smooth_upright = upright * centered * small_control * small_velocity`` in [0, 1] with
    ``upright = (cos(theta) + 1) / 2``, ``centered = (1 + g(x, centered_margin)) / 2``,
    ``small_control = (4 + q(a, control_margin)) / 5``, ``small_velocity = (1 + g(theta_dot, velocity_margin)) / 2``,
    where ``g`` is dm_control's gaussian tolerance (0.1 at the margin) and ``q`` its quadratic one (0 at the margin).

    ## Starting state
    Pole hanging down (theta = pi), all four states with uniform noise of ``reset_noise_scale`` (0.05).

    ## Episode end
    Truncation only: at ``max_episode_steps`` (500, control dt 0.02 s), on a constraint overflow; termination
    only on a non-finite state. The rail has ends instead of a termination, as in dm_control: the cart's prismatic
    joint is limited to ``[-cart_position_limit, cart_position_limit]`` (1.8 m), enforced by SolverSteel's joint
    limit rows (``enable_joint_limits=True``), so the cart stops at an end and the episode goes on. (Without them
    a trained policy spins the pole while the cart drifts 57-193 m away, where the centring factor costs at most
    half the reward.) Measured under 500 steps of constant and bang-bang full force and of random actions: no
    excursion past the limit at any physics step (``tests/test_scripted.py``, ``tests/test_joint_limits.py``).
    """

    config_cls = CartpoleSwingupConfig
    config: CartpoleSwingupConfig
    rewards = (RewardTerm("smooth_upright", classic.smooth_upright),)  # a product of factors in [0, 1], no weight
    default_max_episode_steps = 500
    observations = (
        ObservationBlock("cart_pos", 1, classic.cart_pos, "cart position x", "m"),
        ObservationBlock("cart_vel", 1, classic.cart_vel, "cart velocity", "m/s"),
        ObservationBlock("pole_cos", 1, classic.pole_cos, "cosine of the pole angle", "1"),
        ObservationBlock("pole_sin", 1, classic.pole_sin, "sine of the pole angle", "1"),
        ObservationBlock("pole_ang_vel", 1, classic.pole_ang_vel, "pole angular velocity", "rad/s"),
    )
    train_config = PpoConfig(
        num_steps_per_env=32,
        max_iterations=500,
        actor_hidden_dims=(64, 64),
        critic_hidden_dims=(64, 64),
        # No early end: without it every world is at the same step of its episode and each rollout holds one phase
        # (swing-up or balance); the training return then oscillates instead of improving.
        init_at_random_ep_len=True,
        # Without a floor the std collapses (to ~0.01) and the return with it.
        min_noise_std=0.1,
    )
    """PPO settings of ``steel-envs train`` for this task (the learner is not imported here)."""
    benchmark = BenchmarkSpec(
        suite="classic",
        score="return",
        direction="higher",
        random_score=21.36,
        expert_score=430.84,
        expert_from="scripted_policy",
        anchors=(
            "mean returns over 100 episodes of the random policy and of scripted_policy "
            "(docs/reference/CartpoleSwingup-v0.json)"
        ),
    )
    solver_defaults = SteelSolverOptions(
        # The rail's ends are limit rows. A row is created within joint_limit_activation_gap of an end; the options
        # page asks for more than 2 * max|qd| * dt, and 0.5 m covers cart speeds up to 25 m/s (measured: at most
        # 5.5 m/s under a constant full force). With no row near the centre, trajectories there are those of an
        # unlimited rail.
        enable_joint_limits=True,
        joint_limit_activation_gap=0.5,
    )

    def rail_limit(self) -> float:
        """``cart_position_limit`` [m]: the rail joint's limits (see Episode end)."""
        return float(self.config.cart_position_limit)

    def _setup_task(self) -> None:
        self.term_state = classic.make_cartpole_state(self)


CartpoleSwingupSingleEnv = register_task("steel_envs/CartpoleSwingup-v0", CartpoleSwingupEnv)


_GRAVITY = 9.81
"""[m/s^2], Newton's default gravity."""
_POLE_PIVOT_INERTIA = POLE_MASS * (2.0 * POLE_HALF_LENGTH) ** 2 / 3.0
"""Moment of inertia of the uniform rod about its pivot [kg m^2]."""
_BALANCE_GAINS = (4.47213595, 6.09448746, 49.335294, 12.20173711)
"""State feedback ``F = k . (x, x_dot, theta, theta_dot)`` [N/m, N s/m, N/rad, N s/rad]: the continuous-time LQR
gains (``scipy.linalg.solve_continuous_are``) of Gymnasium's cart-pole equations (the scene's, see
``envs/cartpole.py``) linearised about upright, with Q = diag(1, 0.1, 10, 0.1) and R = 0.05 [1/N^2];
``tests/test_scripted.py`` re-derives them."""
_SWING_ENERGY_GAIN = 20.0
"""Desired cart acceleration per unit of (pole energy deficit [J] * theta_dot cos(theta) [rad/s]), in g."""
_SWING_CENTRE_GAINS = (0.7, 0.5)
"""Cart-centring feedback during the swing-up: action per m of x and per m/s of x_dot."""
_BALANCE_ANGLE = 0.5
"""|theta| [rad] below which the balance controller acts."""
_REST_KICK = 1.0
"""Action when the pole hangs at rest (energy within 1e-4 J of the bottom), where energy pumping has no phase."""


def scripted_policy(obs: torch.Tensor) -> torch.Tensor:
    """A scripted, stateless solver of CartpoleSwingup-v0: energy-based swing-up, then LQR balance.

    Far from upright, the cart accelerates by Astrom & Furuta's energy law (Automatica 36(2), 2000, "Swinging up
    a pendulum by energy control"): with the pole's energy ``E = I theta_dot^2 / 2 + m g l (cos(theta) - 1)``
    (0 upright at rest; ``I`` about the pivot), the pole's equation ``I theta_ddot = m g l sin(theta) - m l
    cos(theta) x_ddot`` gives ``dE/dt = -m l x_ddot theta_dot cos(theta)``, so ``x_ddot = k E theta_dot
    cos(theta)`` drives E towards 0 (the upright energy) from either side. A proportional-derivative term keeps the
    cart near the rail's centre. Within ``|theta| < 0.5 rad`` an LQR state feedback (``_BALANCE_GAINS``) balances
    the pole and brings the cart to x = 0. Measured on 100 episodes: see "Scripted solvers" in
    ``docs/guides/evaluation.md``.

    Usable as ``steel-envs evaluate steel_envs/CartpoleSwingup-v0 --policy
    steel_envs.tasks.cartpole_swingup:scripted_policy``. It assumes the default ``force_scale`` (10 N).

    Args:
        obs: Observations (N, 5) float32 in the env's layout: x [m], x_dot [m/s], cos(theta), sin(theta),
            theta_dot [rad/s], on any device.

    Returns:
        Actions (N, 1) float32 in [-1, 1], the cart force over ``force_scale``, on ``obs``'s device.
    """
    x, x_dot, cos_t, sin_t, theta_dot = obs.unbind(-1)
    theta = torch.atan2(sin_t, cos_t)
    m_g_l = POLE_MASS * _GRAVITY * POLE_HALF_LENGTH
    energy = 0.5 * _POLE_PIVOT_INERTIA * theta_dot**2 + m_g_l * (cos_t - 1.0)
    kx, kv = _SWING_CENTRE_GAINS
    swing = _SWING_ENERGY_GAIN * energy * theta_dot * cos_t / _GRAVITY - kx * x - kv * x_dot
    swing = torch.where(energy < -2.0 * m_g_l + 1.0e-4, swing + _REST_KICK, swing)
    k = _BALANCE_GAINS
    balance = (k[0] * x + k[1] * x_dot + k[2] * theta + k[3] * theta_dot) / CartpoleSwingupConfig.force_scale
    actions = torch.where(cos_t > math.cos(_BALANCE_ANGLE), balance, swing)
    return actions.clamp(-1.0, 1.0).unsqueeze(-1).to(torch.float32)
