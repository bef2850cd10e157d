"""Test-only task ``steel_envs_test/PendulumSwingup-v0``: swing the pendulum up and hold it (Pendulum-v1's reward).

Registered by importing this module (``tests/conftest.py`` does); nothing in the package names it.
"""

from __future__ import annotations

from dataclasses import dataclass

import warp as wp
from pendulum_scene import PendulumScene, PendulumSceneConfig

from steel_envs import ObservationBlock, RewardTerm, kernels, register_task


@dataclass(kw_only=True)
class PendulumSwingupConfig(PendulumSceneConfig):
    """Weights of Pendulum-v1's cost ``theta^2 + 0.1 theta_dot^2 + 0.001 u^2`` (u the torque [N m])."""

    angle_cost_weight: float = 1.0
    velocity_cost_weight: float = 0.1
    torque_cost_weight: float = 0.001

    def __post_init__(self) -> None:
        super().__post_init__()
        self.require_nonnegative("angle_cost_weight", "velocity_cost_weight", "torque_cost_weight")


@wp.kernel(enable_backward=False)
def _observe(
    coord_world_start: wp.array[wp.int32],
    dof_world_start: wp.array[wp.int32],
    joint_q: wp.array[wp.float32],
    joint_qd: wp.array[wp.float32],
    obs: wp.array2d[wp.float32],
):
    w = wp.tid()
    theta = joint_q[coord_world_start[w]]
    obs[w, 0] = wp.cos(theta)
    obs[w, 1] = wp.sin(theta)
    obs[w, 2] = joint_qd[dof_world_start[w]]


@wp.kernel(enable_backward=False)
def _rewards(
    coord_world_start: wp.array[wp.int32],
    dof_world_start: wp.array[wp.int32],
    joint_q: wp.array[wp.float32],
    joint_qd: wp.array[wp.float32],
    actions: wp.array2d[wp.float32],
    max_torque: wp.float32,
    reward_terms: wp.array2d[wp.float32],
):
    w = wp.tid()
    q = joint_q[coord_world_start[w]]
    theta = wp.atan2(wp.sin(q), wp.cos(q))
    qd = joint_qd[dof_world_start[w]]
    u = actions[w, 0] * max_torque
    reward_terms[0, w] = theta * theta
    reward_terms[1, w] = qd * qd
    reward_terms[2, w] = u * u


class PendulumSwingupEnv(PendulumScene):
    """Swing a torque-limited pendulum up and hold it upright (Gymnasium Pendulum-v1 on SolverSteel).

    ## Action space
    | index | action | min | max | unit |
    |---|---|---|---|---|
    | 0 | hinge torque, times ``max_torque`` (2 N m) | -1 | 1 | 1 |

    ## Observation space
    | index | observation | unit |
    |---|---|---|
    | 0 | cosine of the angle from upright | 1 |
    | 1 | sine of the angle from upright | 1 |
    | 2 | angular velocity | rad/s |

    ## Rewards (Pendulum-v1)
    ``reward_angle = -angle_cost_weight * theta^2`` (theta wrapped to [-pi, pi]),
    ``reward_velocity = -velocity_cost_weight * theta_dot^2``, ``reward_torque = -torque_cost_weight * u^2``.

    ## Episode end
    Truncated at ``max_episode_steps`` (200, control dt 0.05 s) or on a constraint overflow; terminated only
    on a non-finite state.
    """

    config_cls = PendulumSwingupConfig
    config: PendulumSwingupConfig
    rewards = (
        RewardTerm("angle", weight="angle_cost_weight", cost=True),
        RewardTerm("velocity", weight="velocity_cost_weight", cost=True),
        RewardTerm("torque", weight="torque_cost_weight", cost=True),
    )
    default_max_episode_steps = 200
    observations = (
        ObservationBlock("cos", 1, "cosine of the angle from upright", "1"),
        ObservationBlock("sin", 1, "sine of the angle from upright", "1"),
        ObservationBlock("ang_vel", 1, "angular velocity", "rad/s"),
    )

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
                self.actions,
                float(c.max_torque),
            ],
            outputs=[reward_terms],
        )


PendulumSwingupSingleEnv = register_task("steel_envs_test/PendulumSwingup-v0", PendulumSwingupEnv)
