"""``steel_envs/CartpoleSwingup-v0``: swing the pole up from hanging down and keep it there (dm_control style)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import warp as wp
from steel_envs.envs.cartpole import CartpoleScene, CartpoleSceneConfig
from steel_envs.tasks import register_task

from steel_envs import kernels

__all__ = ["CartpoleSwingupConfig", "CartpoleSwingupEnv", "CartpoleSwingupSingleEnv"]


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

    def __post_init__(self) -> None:
        super().__post_init__()
        self.require_positive("centered_margin", "control_margin", "velocity_margin")


@wp.func
def _gaussian_tolerance(x: float, margin: float):
    # dm_control rewards.tolerance(x, bounds=(0, 0), margin, sigmoid="gaussian", value_at_margin=0.1)
    scale = wp.sqrt(-2.0 * wp.log(0.1))
    d = x / margin * scale
    return wp.exp(-0.5 * d * d)


@wp.func
def _quadratic_tolerance(x: float, margin: float):
    # dm_control rewards.tolerance(x, bounds=(0, 0), margin, sigmoid="quadratic", value_at_margin=0)
    d = x / margin
    return wp.max(1.0 - d * d, 0.0)


@wp.kernel(enable_backward=False)
def _observe(
    coord_world_start: wp.array[wp.int32],
    dof_world_start: wp.array[wp.int32],
    joint_q: wp.array[wp.float32],
    joint_qd: wp.array[wp.float32],
    obs: wp.array2d[wp.float32],
):
    w = wp.tid()
    q0 = coord_world_start[w]
    d0 = dof_world_start[w]
    obs[w, 0] = joint_q[q0]
    obs[w, 1] = joint_qd[d0]
    obs[w, 2] = wp.cos(joint_q[q0 + 1])
    obs[w, 3] = wp.sin(joint_q[q0 + 1])
    obs[w, 4] = joint_qd[d0 + 1]


@wp.kernel(enable_backward=False)
def _rewards(
    coord_world_start: wp.array[wp.int32],
    dof_world_start: wp.array[wp.int32],
    joint_q: wp.array[wp.float32],
    joint_qd: wp.array[wp.float32],
    actions: wp.array2d[wp.float32],
    centered_margin: wp.float32,
    control_margin: wp.float32,
    velocity_margin: wp.float32,
    reward_terms: wp.array2d[wp.float32],
):
    w = wp.tid()
    q0 = coord_world_start[w]
    d0 = dof_world_start[w]
    upright = (wp.cos(joint_q[q0 + 1]) + 1.0) / 2.0
    centered = (1.0 + _gaussian_tolerance(joint_q[q0], centered_margin)) / 2.0
    small_control = (4.0 + _quadratic_tolerance(actions[w, 0], control_margin)) / 5.0
    small_velocity = (1.0 + _gaussian_tolerance(joint_qd[d0 + 1], velocity_margin)) / 2.0
    reward_terms[0, w] = upright * centered * small_control * small_velocity


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
    only on a non-finite state.
    """

    config_cls = CartpoleSwingupConfig
    config: CartpoleSwingupConfig
    reward_terms = ("smooth_upright",)
    default_max_episode_steps = 500
    observation_terms = (
        ("cart position", "m"),
        ("cart velocity", "m/s"),
        ("cosine of the pole angle", "1"),
        ("sine of the pole angle", "1"),
        ("pole angular velocity", "rad/s"),
    )
    train_defaults: ClassVar[dict] = {
        "num_envs": 256,
        "num_steps_per_env": 32,
        "max_iterations": 500,
        "actor_hidden_dims": (64, 64),
        "critic_hidden_dims": (64, 64),
    }
    """PPO hyper-parameters of ``steel-envs train`` for this task (the learner is not imported here)."""

    @property
    def observation_dim(self) -> int:
        return len(self.observation_terms)

    def _compute_observations(self, obs: wp.array) -> None:
        m = self.model
        self.launch_per_world(
            _observe,
            inputs=[m.joint_coord_world_start, m.joint_dof_world_start, self.state_0.joint_q, self.state_0.joint_qd],
            outputs=[obs],
        )

    def _compute_terminations(self, terminated: wp.array, truncated: wp.array) -> None:
        self.launch_per_world(kernels.no_task_terminations, inputs=[], outputs=[terminated, truncated])

    def _compute_rewards(self, reward_terms: wp.array) -> None:
        m, c = self.model, self.config
        self.launch_per_world(
            _rewards,
            inputs=[
                m.joint_coord_world_start,
                m.joint_dof_world_start,
                self.state_0.joint_q,
                self.state_0.joint_qd,
                self._actions,
                float(c.centered_margin),
                float(c.control_margin),
                float(c.velocity_margin),
            ],
            outputs=[reward_terms],
        )


CartpoleSwingupSingleEnv = register_task("steel_envs/CartpoleSwingup-v0", CartpoleSwingupEnv)
