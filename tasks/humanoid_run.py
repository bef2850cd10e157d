"""``steel_envs/HumanoidRun-v0``: run forward (+x), the reward terms of Gymnasium's Humanoid-v5."""

from __future__ import annotations

from dataclasses import dataclass

from steel_envs.envs.humanoid import ACTUATED, HumanoidScene, HumanoidSceneConfig
from steel_envs.tasks.terms import locomotion

from steel_envs.benchmark import BenchmarkSpec
from steel_envs.ranges import COST_WEIGHT, any_value, at_least, declare
from steel_envs.registration import register_task
from steel_envs.spec import ObservationBlock, RewardTerm, TerminationTerm
from steel_envs.train_config import PpoConfig

__all__ = ["HumanoidRunConfig", "HumanoidRunEnv", "HumanoidRunSingleEnv"]


@dataclass(kw_only=True)
class HumanoidRunConfig(HumanoidSceneConfig):
    """Weights and thresholds of HumanoidRun; defaults are Gymnasium Humanoid-v5's."""

    forward_reward_weight: float = 1.25
    """Weight of the centre-of-mass x velocity [1/(m/s)]."""
    ctrl_cost_weight: float = 0.1
    """Weight of the squared norm of the (clipped) action."""
    contact_cost_weight: float = 5.0e-7
    """Weight of the squared norm of the external contact wrenches."""
    contact_cost_max: float = 10.0
    """Upper clamp of the contact cost (Humanoid-v5's ``contact_cost_range``)."""
    healthy_reward: float = 5.0
    """Reward of every step that ends healthy."""
    terminate_when_unhealthy: bool = True
    """End the episode when the torso leaves the healthy z range."""
    healthy_z_min: float = 1.0
    """Lower bound of the healthy torso height [m]."""
    healthy_z_max: float = 2.0
    """Upper bound of the healthy torso height [m]."""

    field_ranges = declare(
        forward_reward_weight=any_value("a reward weight; a negative one rewards running backwards"),
        ctrl_cost_weight=COST_WEIGHT,
        contact_cost_weight=COST_WEIGHT,  # weighted inside the contact term, not by the core
        contact_cost_max=at_least(0.0, "the upper clamp of a cost"),
        healthy_reward=any_value("a reward per step; a negative one rewards ending the episode early"),
        healthy_z_min=any_value("a height [m]; only min < max is required"),
        healthy_z_max=any_value("a height [m]; only min < max is required"),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.healthy_z_min < self.healthy_z_max:
            raise ValueError(
                f"healthy_z_min, healthy_z_max: expected min < max, got {self.healthy_z_min}, {self.healthy_z_max}"
            )


class HumanoidRunEnv(HumanoidScene):
    """Make a humanoid run forward (+x): Gymnasium Humanoid-v5's task on ``nv_humanoid.xml`` and SolverSteel.

    ## Action space
    21 hinge torques in [-1, 1], times nv_humanoid.xml's gears (22.5-135 N m) and ``action_scale``, in the order
    ``abdomen_z, abdomen_y, abdomen_x, right_hip_x, right_hip_z, right_hip_y, right_knee, right_ankle_y,
    right_ankle_x, left_hip_x, left_hip_z, left_hip_y, left_knee, left_ankle_y, left_ankle_x, right_shoulder1,
    right_shoulder2, right_elbow, left_shoulder1, left_shoulder2, left_elbow``.

    ## Observation space
    | index | observation | unit |
    |---|---|---|
    | 0 | torso z | m |
    | 1-4 | torso orientation quaternion (x, y, z, w) | 1 |
    | 5-25 | hinge angles (action order) | rad |
    | 26-28 | torso centre-of-mass velocity, world frame | m/s |
    | 29-31 | torso angular velocity, world frame | rad/s |
    | 32-52 | hinge angular velocities | rad/s |
    | 53-130 | velocity of each of the 13 bodies (COM linear, angular; world frame) | m/s, rad/s |
    | 131-151 | applied hinge torques | N m |
    | 152-229 | contact wrench of each of the 13 bodies (force; torque about the COM) | N, N m |

    ## Rewards (Gymnasium Humanoid-v5, ``gymnasium/envs/mujoco/humanoid_v5.py``)
    Weights are config fields, also settable by term name (``reward_weights={"ctrl": 0.05}``), except the contact
    term's: it is clamped after weighting, so its function applies ``contact_cost_weight`` itself.

    - ``reward_forward = forward_reward_weight * (x_com_after - x_com_before) / dt``, mass-weighted COM, dt 0.015 s
    - ``reward_ctrl = -ctrl_cost_weight * sum(action**2)``
    - ``reward_contact = -min(contact_cost_weight * sum(wrench**2), contact_cost_max)``
    - ``reward_survive = healthy_reward`` if the torso z is in (healthy_z_min, healthy_z_max) after the step

    ## Starting state
    Torso at 1.4 m, upright, joints at 0, U(-0.01, 0.01) on every coordinate and velocity.

    ## Episode end
    Terminated when the torso z leaves (1.0, 2.0) m (term ``unhealthy``) or the state is non-finite; truncated after
    1000 steps (15 s) or on a constraint overflow.

    ## Metrics (``info["episode"]``, per ended episode)
    - ``distance_x`` [m]: how far the mass-weighted centre of mass travelled in +x over the episode (an early end
      counts the distance reached).
    - ``upright_fraction`` [1]: the fraction of the episode's steps that end with the torso's up-component above
      0.5 (within 60 degrees of upright).

    ## Differences from Humanoid-v5
    The model is nv_humanoid.xml (its gears, springs and damping); velocities are Newton's (world frame);
    the observation drops MuJoCo's ``cinert`` (constant body inertias) and uses Steel's contact forces for
    ``cfrc_ext``; the D6 joints make the joint order differ from Humanoid-v5's actuator order.
    """

    config_cls = HumanoidRunConfig
    config: HumanoidRunConfig
    rewards = (
        RewardTerm("forward", locomotion.forward_velocity_com, weight="forward_reward_weight"),
        RewardTerm("ctrl", locomotion.action_sq_norm, weight="ctrl_cost_weight", cost=True),
        RewardTerm("contact", locomotion.contact_cost_clamped),  # clamped after weighting: weighted inside
        RewardTerm("survive", locomotion.healthy, weight="healthy_reward"),
    )
    terminations = (TerminationTerm("unhealthy", locomotion.unhealthy),)
    metrics = (
        locomotion.distance_metric("mass-weighted centre of mass", locomotion.com_x_displacement),
        locomotion.upright_fraction_metric(),
    )
    default_max_episode_steps = 1000
    requested_observables = ("contact_f",)
    # 6 M env-steps (1,953 iterations of 128 worlds x 24 steps), the budget of the reference target.
    train_config = PpoConfig(
        num_envs=128,
        max_iterations=1953,
        actor_hidden_dims=(256, 128),
        critic_hidden_dims=(256, 128),
        entropy_coef=0.0,
        init_noise_std=0.5,
    )
    """PPO settings of ``steel-envs train`` for this task (the learner is not imported here)."""
    benchmark = BenchmarkSpec(
        suite="locomotion",
        score="distance_x",
        direction="higher",
        random_score=0.006,
        expert_score=15.0,
        expert_from="target",
        anchors=(
            "random: distance_x of the random policy over 100 episodes (docs/reference/HumanoidRun-v0.json); "
            "expert: running at 1 m/s for the 15 s episode (the task ships no solver and its reference policies "
            "stand; the return would pay standing, the alive bonus)"
        ),
    )

    def observation_blocks(self) -> tuple[ObservationBlock, ...]:
        hinges, bodies = len(ACTUATED), self.bodies_per_world
        return (
            *locomotion.floating_base_blocks(hinges),
            ObservationBlock(
                "body_vel",
                6 * bodies,
                locomotion.body_vel,
                f"velocity of each of the {bodies} bodies (COM linear, angular; world frame)",
                "m/s, rad/s",
            ),
            ObservationBlock("joint_torque", hinges, locomotion.hinge_torque, "applied hinge torques", "N m"),
            ObservationBlock(
                "contact_wrench",
                6 * bodies,
                locomotion.body_contact_wrench,
                f"contact wrench of each of the {bodies} bodies (force; torque about the COM)",
                "N, N m",
            ),
        )

    def _setup_task(self) -> None:
        self.term_state = locomotion.make_run_state(self, inclusive=False)

    def _pre_physics(self) -> None:
        self.launch_per_world(locomotion.record_com_x, inputs=[self.term_state])


HumanoidRunSingleEnv = register_task("steel_envs/HumanoidRun-v0", HumanoidRunEnv)
