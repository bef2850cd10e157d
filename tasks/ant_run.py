"""``steel_envs/AntRun-v0``: run forward (+x), the observations and reward terms of Gymnasium's Ant-v5."""

from __future__ import annotations

import math
from dataclasses import dataclass

from steel_envs.envs.ant import HINGE_NAMES, AntScene, AntSceneConfig
from steel_envs.tasks.terms import locomotion

from steel_envs.benchmark import BenchmarkSpec
from steel_envs.ranges import COST_WEIGHT, any_value, declare, positive
from steel_envs.registration import register_task
from steel_envs.spec import ObservationBlock, RewardTerm, TerminationTerm
from steel_envs.train_config import PpoConfig

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
    max_tilt_cos: float = math.cos(math.radians(70.0))
    """The episode ends when the torso's up-component (the world z of its z axis) falls below this: a tilt beyond
    70 degrees, mjlab's ``fell_over`` angle (``mdp.bad_orientation``). Below -1 the termination is off."""
    contact_force_clip: float = 1.0
    """Contact wrench components are clipped to [-clip, clip] (Ant-v5's ``contact_force_range``)."""
    include_cfrc_ext_in_observation: bool = True
    """Append the clipped contact wrench of every body to the observation."""
    exclude_current_positions_from_observation: bool = True
    """Leave the torso's x, y out of the observation."""

    field_ranges = declare(
        forward_reward_weight=any_value("a reward weight; a negative one rewards running backwards"),
        ctrl_cost_weight=COST_WEIGHT,
        contact_cost_weight=COST_WEIGHT,
        healthy_reward=any_value("a reward per step; a negative one rewards ending the episode early"),
        healthy_z_min=any_value("a height [m]; only min < max is required"),
        healthy_z_max=any_value("a height [m]; only min < max is required"),
        max_tilt_cos=any_value("the cosine of the largest tilt; below -1 turns the termination off"),
        contact_force_clip=positive("a clip bound [N, N m]"),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.healthy_z_min < self.healthy_z_max:
            raise ValueError(
                f"healthy_z_min, healthy_z_max: expected min < max, got {self.healthy_z_min}, {self.healthy_z_max}"
            )


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
    Terminated when the torso z leaves [0.2, 1.5] m (term ``unhealthy``, if ``terminate_when_unhealthy``), when the
    torso tilts more than 70 degrees from upright (term ``fell_over``: its up-component below ``max_tilt_cos``) or
    when the state is non-finite; truncated after 1000 steps (50 s) or on a SolverSteel constraint overflow.

    ## Metrics (``info["episode"]``, per ended episode)
    - ``distance_x`` [m]: how far the torso travelled in +x over the episode (an early end counts the
      distance reached).
    - ``upright_fraction`` [1]: the fraction of the episode's steps that end with the torso's up-component above
      0.5 (within 60 degrees of upright).

    ## Differences from Ant-v5
    The model is nv_ant.xml (gear 15, not 150); velocities are Newton's (COM velocity and angular velocity
    in world frame, where MuJoCo's free-joint angular velocity is in the body frame); quaternions are
    (x, y, z, w); the contact wrench comes from SolverSteel's ``contact_f`` (force first, about the body
    COM) where MuJoCo's ``cfrc_ext`` puts the torque first; the world body is not in the observation. The torso
    height is U(0.841, 0.941) m instead of init_qpos's 0.55 m plus Ant-v5's U(-0.1, 0.1), which put feet up to
    0.25 m into the ground (6 mm with no noise); the other coordinates keep Ant-v5's noise.

    The healthy torso height ends at 1.5 m instead of 1.0 m. nv_ant.xml's light legs (hinge armature 0.01 and
    damping 0.1, where Ant-v5's model has 1 and 1) leap: trained policies run in bounds, launching the torso from
    a 0.26-0.33 m crouch at 3.3 m/s to a ballistic 1.0-1.07 m. A bound of 1.0 m ends more than half of a trained
    policy's episodes mid-stride that way; 1.5 m ends none. The torso sphere (radius 0.25 m) cannot reach the lower
    bound without passing into the ground, as in Ant-v5.

    Ant-v5 has no orientation bound, and the torso sphere keeps the height in range on its back: a policy trained
    without ``fell_over`` flipped within 25 steps and ran on its back (the torso's up-component below 0 in 75 % of
    its world-steps). The tilt termination follows the legged tasks of Isaac Lab and mjlab; an upright reward term
    (Isaac Lab's Ant) would leave Ant-v5's reward as it is but pay for a flip only as much as its weight.

    ## Arguments
    Those of :class:`steel_envs.SteelVectorEnv` and the fields of :class:`AntRunConfig`.
    """

    config_cls = AntRunConfig
    config: AntRunConfig
    rewards = (
        RewardTerm("forward", locomotion.forward_velocity_torso, weight="forward_reward_weight"),
        RewardTerm("ctrl", locomotion.action_sq_norm, weight="ctrl_cost_weight", cost=True),
        RewardTerm("contact", locomotion.contact_cost_clipped, weight="contact_cost_weight", cost=True),
        RewardTerm("survive", locomotion.healthy, weight="healthy_reward"),
    )
    terminations = (
        TerminationTerm("unhealthy", locomotion.unhealthy),
        TerminationTerm("fell_over", locomotion.fell_over),
    )
    metrics = (
        locomotion.distance_metric("torso", locomotion.torso_x_displacement),
        locomotion.upright_fraction_metric(),
    )
    default_max_episode_steps = 1000
    train_config = PpoConfig(
        num_envs=128,
        max_iterations=1500,
        entropy_coef=0.0,
        init_noise_std=0.5,
        # Returns run to ~7,000, and a clipped value loss moves each prediction at most clip_param per iteration.
        clip_value_loss=False,
    )
    """PPO settings of ``steel-envs train`` for this task (the learner is not imported here)."""
    benchmark = BenchmarkSpec(
        suite="locomotion",
        score="distance_x",
        direction="higher",
        random_score=0.126,
        expert_score=50.0,
        expert_from="target",
        anchors=(
            "random: distance_x of the random policy over 100 episodes (docs/reference/AntRun-v0.json); expert: "
            "the reference target, 50 m per 1,000-step episode"
        ),
    )
    requested_observables = ("contact_f",)

    def observation_blocks(self) -> tuple[ObservationBlock, ...]:
        c, hinges, bodies = self.config, len(HINGE_NAMES), self.bodies_per_world
        xy = (
            ()
            if c.exclude_current_positions_from_observation
            else (ObservationBlock("torso_xy", 2, locomotion.root_pos_xy, "torso x, y", "m"),)
        )
        wrench = (
            ObservationBlock(
                "contact_wrench",
                6 * bodies,
                locomotion.body_contact_wrench_clipped,
                f"contact wrench of each of the {bodies} bodies (force; torque about the COM), clipped to [-1, 1]",
                "N, N m",
            ),
        )
        return (
            *xy,
            *locomotion.floating_base_blocks(hinges),
            *(wrench if c.include_cfrc_ext_in_observation else ()),
        )

    def _setup_task(self) -> None:
        self.term_state = locomotion.make_run_state(
            self, inclusive=True, contact_force_clip=float(self.config.contact_force_clip)
        )

    def _pre_physics(self) -> None:
        self.launch_per_world(locomotion.record_torso_x, inputs=[self.term_state])


AntRunSingleEnv = register_task("steel_envs/AntRun-v0", AntRunEnv)
