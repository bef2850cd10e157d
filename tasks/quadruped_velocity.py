"""``steel_envs/QuadrupedVelocity-v0``: track a commanded base velocity (vx, vy, yaw rate) with a quadruped,
the reward family of legged-robot RL (legged_gym, Isaac Lab, mjlab velocity tasks)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import warp as wp
from steel_envs.envs.quadruped import (
    BASE,
    DEFAULT_POSE,
    FEET,
    JOINTS,
    LIMIT_RANGE,
    QuadrupedScene,
    QuadrupedSceneConfig,
)
from steel_envs.tasks.terms import legged

from steel_envs.benchmark import BenchmarkSpec
from steel_envs.ranges import any_value, at_least, declare, positive
from steel_envs.registration import register_task
from steel_envs.spec import ObservationBlock, RewardTerm, TerminationTerm
from steel_envs.train_config import PpoConfig

__all__ = ["QuadrupedVelocityConfig", "QuadrupedVelocityEnv", "QuadrupedVelocitySingleEnv"]


@dataclass(kw_only=True)
class QuadrupedVelocityConfig(QuadrupedSceneConfig):
    """Commands, reward weights and thresholds (weights per control step, not multiplied by dt)."""

    command_vx: tuple[float, float] = (-1.0, 1.0)
    """Range of the commanded forward velocity [m/s] (base frame)."""
    command_vy: tuple[float, float] = (-0.5, 0.5)
    """Range of the commanded lateral velocity [m/s] (base frame)."""
    command_yaw_rate: tuple[float, float] = (-1.0, 1.0)
    """Range of the commanded yaw rate [rad/s]."""
    command_resample_time: float = 5.0
    """Each world draws a new command every this many seconds of its episode [s] (and at reset)."""
    tracking_sigma: float = 0.25
    """Width of the exponential tracking kernels [(m/s)^2 or (rad/s)^2]."""
    track_lin_vel_weight: float = 1.0
    track_ang_vel_weight: float = 0.5
    lin_vel_z_weight: float = -2.0
    ang_vel_xy_weight: float = -0.05
    torques_weight: float = -2.0e-5
    action_rate_weight: float = -0.01
    joint_limits_weight: float = -1.0
    joint_limit_margin: float = 0.1
    """Distance to a limit [rad] inside which the joint-limit penalty grows linearly."""
    feet_air_time_weight: float = 1.0
    feet_air_time_target: float = 0.5
    """Air time [s] a foot must exceed at touch-down to be rewarded."""
    contact_force_threshold: float = 1.0
    """Contact force [N] above which a body is in contact."""
    max_tilt_cos: float = 0.5
    """Terminate when the base's up axis has a z component below this (tilt above 60 degrees)."""

    field_ranges = declare(
        command_vx=any_value("a (low, high) velocity range [m/s]; only low <= high is required"),
        command_vy=any_value("a (low, high) velocity range [m/s]; only low <= high is required"),
        command_yaw_rate=any_value("a (low, high) yaw rate range [rad/s]; only low <= high is required"),
        command_resample_time=positive("a period [s]"),
        tracking_sigma=positive("a kernel width; the tracking rewards divide by it"),
        # legged_gym and Isaac Lab declare every reward with a signed weight on an unsigned term: negative for a
        # penalty, positive for a reward. Any sign is meaningful, so none is refused.
        **dict.fromkeys(
            (
                "track_lin_vel_weight",
                "track_ang_vel_weight",
                "lin_vel_z_weight",
                "ang_vel_xy_weight",
                "torques_weight",
                "action_rate_weight",
                "joint_limits_weight",
                "feet_air_time_weight",
            ),
            any_value("a signed reward weight (legged_gym): negative for a penalty"),
        ),
        joint_limit_margin=at_least(0.0, "a distance to a limit [rad]"),
        feet_air_time_target=at_least(0.0, "a duration [s]"),
        contact_force_threshold=at_least(0.0, "a force magnitude [N]"),
        max_tilt_cos=any_value("the cosine of the largest tilt; below -1 turns the tilt termination off"),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        self.require_intervals("command_vx", "command_vy", "command_yaw_rate")


class QuadrupedVelocityEnv(QuadrupedScene):
    """Track a commanded base velocity with a quadruped on flat ground (legged_gym / Isaac Lab flat task).

    ## Action space
    12 joint position offsets in [-1, 1], times ``action_scale`` (0.5 rad), around the standing pose, in the
    order LF, RF, LH, RH x (HAA, HFE, KFE); tracked by PD drives (80 N m/rad, 2 N m s/rad, 80 N m limit).

    ## Observation space
    | index | observation | unit |
    |---|---|---|
    | 0-2 | base linear velocity, base frame | m/s |
    | 3-5 | base angular velocity, base frame | rad/s |
    | 6-8 | gravity direction in the base frame | 1 |
    | 9-11 | command (vx, vy, yaw rate) | m/s, rad/s |
    | 12-23 | joint angles minus the standing pose | rad |
    | 24-35 | joint velocities | rad/s |
    | 36-47 | the last applied actions (0 after a reset) | 1 |
    | 48-51 | foot contact force magnitudes (Steel's ``contact_f``) | N |

    ## Privileged observations (the critic group after the 52 above, without noise; ``env.observation_groups``)
    | index | observation | unit |
    |---|---|---|
    | 0 | base height above the ground | m |
    | 1 | the world's friction factor (``set_world_parameters``, ``randomize_friction_scale``) | 1 |
    | 2 | the world's mass factor (``set_world_parameters``, ``randomize_mass_scale``) | 1 |

    ## Rewards (weights are config fields, also settable by term name, e.g. ``reward_weights={"torques": -1e-4}``;
    per control step, not multiplied by dt)
    - ``reward_track_lin_vel = 1.0 * exp(-|cmd_xy - v_xy|^2 / 0.25)``
    - ``reward_track_ang_vel = 0.5 * exp(-(cmd_yaw - w_z)^2 / 0.25)``
    - ``reward_lin_vel_z = -2.0 * v_z^2``; ``reward_ang_vel_xy = -0.05 * |w_xy|^2``
    - ``reward_torques = -2e-5 * sum(tau^2)`` with the drive law's torque, clamped to the effort limit
    - ``reward_action_rate = -0.01 * sum((a - a_prev)^2)``
    - ``reward_joint_limits = -1.0 * sum(distance past (limit - 0.1 rad))``
    - ``reward_feet_air_time = 1.0 * sum over touch-downs of (air time - 0.5 s)``, 0 when the command is below 0.1 m/s

    ## Starting state
    Base at 0.62 m upright, joints at the standing pose +- 0.1 rad, a command drawn per world; new commands every
    5 s of an episode.

    ## Episode end
    Terminated when the base touches the ground (term ``base_contact``) or tilts beyond 60 degrees (``tilted``), or
    on a non-finite state; truncated after 1000 steps (20 s) or on a constraint overflow.

    ## Metrics (``info["episode"]``, per ended episode)
    - ``tracking_error`` [m/s]: RMS over the episode's steps of ``|cmd_xy - v_xy|``, the planar base velocity's
      error against the command, base frame (what ``reward_track_lin_vel`` scores).
    - ``tracking_error_horizon`` [m/s]: the same RMS over the time limit's steps, each step lost to an early end
      charged ``|cmd_xy|`` (standing still): the benchmark score, in which a fall does not hide the steps it
      cut off.
    """

    config_cls = QuadrupedVelocityConfig
    config: QuadrupedVelocityConfig
    # Signed weights (a penalty's is negative), as legged_gym and mjlab write them.
    rewards = (
        RewardTerm("track_lin_vel", legged.track_lin_vel_xy_exp, weight="track_lin_vel_weight"),
        RewardTerm("track_ang_vel", legged.track_ang_vel_z_exp, weight="track_ang_vel_weight"),
        RewardTerm("lin_vel_z", legged.lin_vel_z_l2, weight="lin_vel_z_weight"),
        RewardTerm("ang_vel_xy", legged.ang_vel_xy_l2, weight="ang_vel_xy_weight"),
        RewardTerm("torques", legged.joint_torques_l2, weight="torques_weight"),
        RewardTerm("action_rate", legged.action_rate_l2, weight="action_rate_weight"),
        RewardTerm("joint_limits", legged.joint_pos_limits, weight="joint_limits_weight"),
        RewardTerm("feet_air_time", legged.feet_air_time, weight="feet_air_time_weight"),
    )
    terminations = (
        TerminationTerm("base_contact", legged.illegal_contact),
        TerminationTerm("tilted", legged.bad_orientation),
    )
    metrics = (legged.TRACKING_ERROR, legged.TRACKING_ERROR_HORIZON)
    default_max_episode_steps = 1000
    requested_observables = ("contact_f",)
    train_config = PpoConfig(
        max_iterations=1500,
        init_noise_std=0.5,
        # rsl_rl's adaptive schedule held the learning rate at its 1e-5 floor early on, with the policy standing.
        schedule="fixed",
        learning_rate=5.0e-4,
    )
    """PPO settings of ``steel-envs train`` for this task (the learner is not imported here)."""
    benchmark = BenchmarkSpec(
        suite="locomotion",
        score="tracking_error_horizon",
        direction="lower",
        random_score=0.706,
        expert_score=0.384,
        expert_from="target",
        anchors=(
            "random: tracking_error_horizon of the random policy over 100 episodes "
            "(docs/reference/QuadrupedVelocity-v0.json); expert: the reference target, 60 % of the zero policy's "
            "0.639"
        ),
    )

    privileged_observations = (
        ObservationBlock("base_height", 1, legged.base_height, "base height above the ground", "m"),
        ObservationBlock(
            "friction_scale",
            1,
            legged.friction_scale,
            "the world's friction factor (``set_world_parameters``, ``randomize_friction_scale``)",
            "1",
        ),
        ObservationBlock(
            "mass_scale",
            1,
            legged.mass_scale,
            "the world's mass factor (``set_world_parameters``, ``randomize_mass_scale``)",
            "1",
        ),
    )
    observations = (
        ObservationBlock("base_lin_vel", 3, legged.base_lin_vel, "base linear velocity, base frame", "m/s"),
        ObservationBlock("base_ang_vel", 3, legged.base_ang_vel, "base angular velocity, base frame", "rad/s"),
        ObservationBlock("projected_gravity", 3, legged.projected_gravity, "gravity direction in the base frame", "1"),
        ObservationBlock("command", 3, legged.velocity_command, "command (vx, vy, yaw rate)", "m/s, rad/s"),
        ObservationBlock("joint_pos", len(JOINTS), legged.joint_pos_rel, "joint angles minus the standing pose", "rad"),
        ObservationBlock("joint_vel", len(JOINTS), legged.joint_vel, "joint velocities", "rad/s"),
        ObservationBlock(
            "last_action", len(JOINTS), legged.last_action, "the last applied actions (0 after a reset)", "1"
        ),
        ObservationBlock(
            "foot_contact_force",
            len(FEET),
            legged.foot_contact_force,
            "foot contact force magnitudes (Steel's ``contact_f``)",
            "N",
        ),
    )

    def _setup_task(self) -> None:
        joints = np.ones(len(JOINTS), np.float32)
        c = self.config
        self._no_force = wp.zeros(self.num_envs, dtype=wp.bool)
        self.term_state = legged.make_legged_state(
            self,
            base=BASE,
            feet=FEET,
            default_joint_pos=DEFAULT_POSE,
            # The scene's limits, DEFAULT_POSE +- LIMIT_RANGE [rad], in float32 as the model holds them.
            joint_pos_lower=DEFAULT_POSE - np.float32(LIMIT_RANGE),
            joint_pos_upper=DEFAULT_POSE + np.float32(LIMIT_RANGE),
            stiffness=c.stiffness * joints,
            damping=c.damping * joints,
            effort_limit=c.effort_limit * joints,
        )

    def _resample(self, force: wp.array) -> None:
        c = self.config
        self.launch_per_world(
            legged.resample_velocity_commands,
            inputs=[
                self.episode_steps,
                force,
                max(1, round(c.command_resample_time / self.control_dt)),
                wp.vec2(*c.command_vx),
                wp.vec2(*c.command_vy),
                wp.vec2(*c.command_yaw_rate),
            ],
            outputs=[self.rng_state, self.term_state.commands],
        )

    def _pre_physics(self) -> None:
        self._resample(self._no_force)

    def _post_physics(self) -> None:
        self.launch_per_world(legged.update_feet_air_time, inputs=[self.term_state, float(self.control_dt)])

    def _post_rewards(self) -> None:
        self.launch_per_world(legged.store_last_actions_and_joint_vel, inputs=[self.term_state])

    def _reset_task(self, world_mask: wp.array) -> None:
        self.launch_per_world(legged.reset_legged_state, inputs=[world_mask, self.term_state])
        self._resample(world_mask)


QuadrupedVelocitySingleEnv = register_task("steel_envs/QuadrupedVelocity-v0", QuadrupedVelocityEnv)
