"""``steel_envs/AntRun-v0``: run forward (+x), the observations and reward terms of Gymnasium's Ant-v5."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import warp as wp
from steel_envs.envs.ant import HINGE_NAMES, AntScene, AntSceneConfig
from steel_envs.tasks import register_task
from steel_envs.tasks.locomotion import (
    action_sq_norm,
    distance_metric,
    floating_base_blocks,
    healthy_z_terminations,
    world_wrench_sq_norm,
    x_displacement,
)

from steel_envs.vector_env import ObservationBlock, RewardTerm, TerminationTerm

__all__ = ["AntRunConfig", "AntRunEnv", "AntRunSingleEnv"]


@dataclass(kw_only=True)
class AntRunConfig(AntSceneConfig):
    """Weights and thresholds of AntRun; defaults are Gymnasium Ant-v5's."""

    forward_reward_weight: float = 1.0
    """Weight of the torso's x velocity [1/(m/s)]."""
    ctrl_cost_weight: float = 0.5
    """Weight of the squared norm of the (clipped) action."""
    contact_cost_weight: float = 5.0e-4
    """Weight of the squared norm of the clipped external contact wrenches."""
    healthy_reward: float = 1.0
    """Reward of every step that ends healthy."""
    terminate_when_unhealthy: bool = True
    """End the episode when the torso leaves the healthy z range."""
    healthy_z_min: float = 0.2
    """Lower bound of the healthy torso height [m]."""
    healthy_z_max: float = 1.5
    """Upper bound of the healthy torso height [m] (Ant-v5: 1.0; see "Differences from Ant-v5")."""
    contact_force_clip: float = 1.0
    """Contact wrench components are clipped to [-clip, clip] (Ant-v5's ``contact_force_range``)."""
    include_cfrc_ext_in_observation: bool = True
    """Append the clipped contact wrench of every body to the observation."""
    exclude_current_positions_from_observation: bool = True
    """Leave the torso's x, y out of the observation."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.healthy_z_min < self.healthy_z_max:
            raise ValueError(
                f"healthy_z_min, healthy_z_max: expected min < max, got {self.healthy_z_min}, {self.healthy_z_max}"
            )
        self.require_positive("contact_force_clip")


@wp.kernel(enable_backward=False)
def _record_torso_x(body_world_start: wp.array[wp.int32], body_q: wp.array[wp.transform], x: wp.array[wp.float32]):
    w = wp.tid()
    x[w] = wp.transform_get_translation(body_q[body_world_start[w]])[0]


@wp.kernel(enable_backward=False)
def _observe(
    coord_world_start: wp.array[wp.int32],
    dof_world_start: wp.array[wp.int32],
    body_world_start: wp.array[wp.int32],
    joint_q: wp.array[wp.float32],
    joint_qd: wp.array[wp.float32],
    body_wrench: wp.array[wp.spatial_vector],
    first_coord: wp.int32,
    include_wrench: wp.bool,
    wrench_clip: wp.float32,
    obs: wp.array2d[wp.float32],
):
    w = wp.tid()
    k = int(0)
    q0 = coord_world_start[w]
    for i in range(first_coord, coord_world_start[w + 1] - q0):
        obs[w, k] = joint_q[q0 + i]
        k += 1
    for i in range(dof_world_start[w], dof_world_start[w + 1]):
        obs[w, k] = joint_qd[i]
        k += 1
    if include_wrench:
        for b in range(body_world_start[w], body_world_start[w + 1]):
            f = body_wrench[b]
            for j in range(6):
                obs[w, k] = wp.clamp(f[j], -wrench_clip, wrench_clip)
                k += 1


@wp.kernel(enable_backward=False)
def _rewards(
    body_world_start: wp.array[wp.int32],
    body_q: wp.array[wp.transform],
    x_before: wp.array[wp.float32],
    control_dt: wp.float32,
    actions: wp.array2d[wp.float32],
    body_wrench: wp.array[wp.spatial_vector],
    healthy: wp.array[wp.bool],
    wrench_clip: wp.float32,
    reward_terms: wp.array2d[wp.float32],
):
    w = wp.tid()
    x_after = wp.transform_get_translation(body_q[body_world_start[w]])[0]
    x_velocity = (x_after - x_before[w]) / control_dt
    ctrl = action_sq_norm(actions, w)
    contact = world_wrench_sq_norm(body_world_start, body_wrench, w, wrench_clip)
    reward_terms[0, w] = x_velocity
    reward_terms[1, w] = ctrl
    reward_terms[2, w] = contact
    survive = float(0.0)
    if healthy[w]:
        survive = 1.0
    reward_terms[3, w] = survive


class AntRunEnv(AntScene):
    """Make a four-legged ant run forward (+x): Gymnasium Ant-v5's task on ``nv_ant.xml`` and SolverSteel.

    ## Action space
    8 hinge torques in [-1, 1], times ``action_scale`` (15 N m, nv_ant.xml's gear), in the order
    ``hip_1, ankle_1, hip_2, ankle_2, hip_3, ankle_3, hip_4, ankle_4`` (Newton's DOF order; Ant-v5 orders
    its actuators from hip_4).

    ## Observation space
    | index | observation | unit |
    |---|---|---|
    | 0 | torso z | m |
    | 1-4 | torso orientation quaternion (x, y, z, w) | 1 |
    | 5-12 | hinge angles (action order) | rad |
    | 13-15 | torso centre-of-mass velocity, world frame | m/s |
    | 16-18 | torso angular velocity, world frame | rad/s |
    | 19-26 | hinge angular velocities | rad/s |
    | 27-80 | contact wrench of each of the 9 bodies (force; torque about the COM), clipped to [-1, 1] | N, N m |

    With ``exclude_current_positions_from_observation=False`` the torso x, y [m] come first (83 values);
    with ``include_cfrc_ext_in_observation=False`` the wrenches are left out (27 values).

    ## Rewards (Gymnasium Ant-v5, ``gymnasium/envs/mujoco/ant_v5.py``)
    Each weight is a config field, also settable by term name (``reward_weights={"ctrl": 0.1}``).

    - ``reward_forward = forward_reward_weight * (x_after - x_before) / dt``, torso x over the 0.05 s step
    - ``reward_ctrl = -ctrl_cost_weight * sum(action**2)`` with the clipped action
    - ``reward_contact = -contact_cost_weight * sum(clip(wrench, -1, 1)**2)`` over all bodies
    - ``reward_survive = healthy_reward`` if the torso z is in [healthy_z_min, healthy_z_max] after the step

    ## Starting state
    nv_ant.xml's ``init_qpos`` (ankles at +-1 rad) plus U(-0.1, 0.1) on every coordinate but the torso height
    (quaternion renormalized) and 0.1 N(0, 1) on every velocity. The torso height is U(0.841, 0.941) m, the lowest
    range at which no body starts inside the ground for any draw of the tilt and hinge noise (for a
    ``reset_noise_scale`` s: U(h, h + s), h = 0.561 + 2.8 s m); the lowest foot starts 0.03-0.39 m above the ground
    and the ant drops onto its feet.

    ## Episode end
    Terminated when the torso z leaves [0.2, 1.5] m (term ``unhealthy``, if ``terminate_when_unhealthy``) or the
    state is non-finite; truncated after 1000 steps (50 s) or on a SolverSteel constraint overflow.

    ## Metrics (``info["episode"]``, per ended episode)
    - ``distance_x`` [m]: how far the torso travelled in +x over the episode (an early end counts the
      distance reached).

    ## Differences from Ant-v5
    The model is nv_ant.xml (gear 15, not 150); velocities are Newton's (COM velocity and angular velocity
    in world frame, where MuJoCo's free-joint angular velocity is in the body frame); quaternions are
    (x, y, z, w); the contact wrench comes from SolverSteel's ``contact_f`` (force first, about the body
    COM) where MuJoCo's ``cfrc_ext`` puts the torque first; the world body is not in the observation. The torso
    height is U(0.841, 0.941) m instead of init_qpos's 0.55 m plus Ant-v5's U(-0.1, 0.1), which put feet up to
    0.25 m into the ground (6 mm with no noise); the other coordinates keep Ant-v5's noise.

    The healthy torso height ends at 1.5 m instead of 1.0 m. nv_ant.xml's light legs (hinge armature 0.01 and
    damping 0.1, where Ant-v5's model has 1 and 1) leap: trained policies run in bounds, launching the torso from
    a 0.26-0.33 m crouch at 3.3 m/s to a ballistic 1.0-1.07 m. At 1.0 m, 20 of 37 episodes of a policy trained
    for 30 min ended mid-stride that way (mean distance 44.5 m); at 1.5 m none of 32 of a policy trained for
    10 min did (42.0 m, against 30.2 m at 1.0). The torso sphere (radius 0.25 m) cannot reach the lower bound
    without passing into the ground, as in Ant-v5.

    ## Arguments
    Those of :class:`steel_envs.SteelVectorEnv` and the fields of :class:`AntRunConfig`.
    """

    config_cls = AntRunConfig
    config: AntRunConfig
    rewards = (
        RewardTerm("forward", weight="forward_reward_weight"),
        RewardTerm("ctrl", weight="ctrl_cost_weight", cost=True),
        RewardTerm("contact", weight="contact_cost_weight", cost=True),
        RewardTerm("survive", weight="healthy_reward"),
    )
    terminations = (TerminationTerm("unhealthy"),)
    metrics = (distance_metric("torso"),)
    default_max_episode_steps = 1000
    train_defaults: ClassVar[dict] = {
        "num_envs": 128,
        "num_steps_per_env": 24,
        "max_iterations": 1500,
        "actor_hidden_dims": (128, 128),
        "critic_hidden_dims": (128, 128),
        "entropy_coef": 0.0,
        "init_noise_std": 0.5,
        # Returns run to ~1,500; the clipped value loss stops pulling a prediction 0.2 from the last one. Unclipped,
        # 10 min of seed 0 reached 44.8 m per evaluated episode against 42.0 m (train return 1,412 against 1,381).
        "clip_value_loss": False,
    }
    """PPO hyper-parameters of ``steel-envs train`` for this task (the learner is not imported here)."""
    requested_observables = ("contact_f",)

    def observation_blocks(self) -> tuple[ObservationBlock, ...]:
        c, hinges, bodies = self.config, len(HINGE_NAMES), self.bodies_per_world
        xy = (
            ()
            if c.exclude_current_positions_from_observation
            else (ObservationBlock("torso_xy", 2, "torso x, y", "m"),)
        )
        wrench = (
            ObservationBlock(
                "contact_wrench",
                6 * bodies,
                f"contact wrench of each of the {bodies} bodies (force; torque about the COM), clipped to [-1, 1]",
                "N, N m",
            ),
        )
        return (
            *xy,
            *floating_base_blocks(hinges),
            *(wrench if c.include_cfrc_ext_in_observation else ()),
        )

    def _setup_task(self) -> None:
        self._x_before = wp.zeros(self.num_envs, dtype=wp.float32)
        self._x_after = wp.zeros(self.num_envs, dtype=wp.float32)
        self._healthy = wp.zeros(self.num_envs, dtype=wp.bool)

    def _pre_physics(self) -> None:
        self.launch_per_world(
            _record_torso_x,
            inputs=[self.model.body_world_start, self.state_0.body_q],
            outputs=[self._x_before],
        )

    def _compute_observations(self, obs: wp.array) -> None:
        m, c = self.model, self.config
        self.launch_per_world(
            _observe,
            inputs=[
                m.joint_coord_world_start,
                m.joint_dof_world_start,
                m.body_world_start,
                self.state_0.joint_q,
                self.state_0.joint_qd,
                self.body_contact_wrench,
                2 if c.exclude_current_positions_from_observation else 0,
                bool(c.include_cfrc_ext_in_observation),
                float(c.contact_force_clip),
            ],
            outputs=[obs],
        )

    def _compute_termination_terms(self, flags: wp.array) -> None:
        c = self.config
        self.launch_per_world(
            healthy_z_terminations,
            inputs=[
                self.model.joint_coord_world_start,
                self.state_0.joint_q,
                float(c.healthy_z_min),
                float(c.healthy_z_max),
                True,
                bool(c.terminate_when_unhealthy),
            ],
            outputs=[self._healthy, flags],
        )

    def _compute_metrics(self, values: wp.array) -> None:
        self.launch_per_world(
            _record_torso_x, inputs=[self.model.body_world_start, self.state_0.body_q], outputs=[self._x_after]
        )
        self.launch_per_world(x_displacement, inputs=[self._x_before, self._x_after], outputs=[values])

    def _compute_rewards(self, reward_terms: wp.array) -> None:
        c = self.config
        self.launch_per_world(
            _rewards,
            inputs=[
                self.model.body_world_start,
                self.state_0.body_q,
                self._x_before,
                float(self.control_dt),
                self.actions,
                self.body_contact_wrench,
                self._healthy,
                float(c.contact_force_clip),
            ],
            outputs=[reward_terms],
        )


AntRunSingleEnv = register_task("steel_envs/AntRun-v0", AntRunEnv)
