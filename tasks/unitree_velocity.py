"""``steel_envs/Go1Velocity-v0`` and ``steel_envs/G1Velocity-v0``: track a commanded base velocity (vx, vy, yaw
rate) with the vendored Unitree Go1 and G1 on flat ground, mjlab 1.6.0's velocity recipe
(``mjlab/tasks/velocity/velocity_env_cfg.py``, ``config/go1/env_cfgs.py``, ``config/g1/env_cfgs.py``; line numbers
below are those files').

Reward weights are mjlab's times the control step, 0.02 s: mjlab's reward manager multiplies every term by the step
duration (``scale_by_dt=True``), steel-envs' weights are per step. Where Steel or this suite differs from mjlab the
class docstrings say so.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import ClassVar

import newton
import numpy as np
import warp as wp
from steel_envs.envs.unitree import G1Scene, Go1Scene, UnitreeScene, UnitreeSceneConfig
from steel_envs.tasks.terms import legged

from steel_envs.assets import per_joint
from steel_envs.benchmark import BenchmarkSpec
from steel_envs.deployment import CommandComponent
from steel_envs.ranges import any_value, at_least, between, declare, positive
from steel_envs.registration import register_task
from steel_envs.spec import ObservationBlock, RewardTerm, TerminationTerm
from steel_envs.train_config import PpoConfig

__all__ = [
    "IMU_BLOCKS",
    "OBS_VARIANTS",
    "G1VelocityConfig",
    "G1VelocityEnv",
    "G1VelocitySingleEnv",
    "Go1VelocityConfig",
    "Go1VelocityEnv",
    "Go1VelocitySingleEnv",
    "UnitreeVelocityConfig",
    "UnitreeVelocityEnv",
]

_DT = 0.02
"""Control step [s] (physics 0.005 s x decimation 4, velocity_env_cfg.py:449,454), which mjlab's weights are per."""

_WEIGHTS = (
    "track_linear_velocity_weight",
    "track_angular_velocity_weight",
    "upright_weight",
    "pose_weight",
    "joint_pos_limits_weight",
    "action_rate_weight",
    "foot_clearance_weight",
    "foot_swing_height_weight",
    "foot_slip_weight",
    "soft_landing_weight",
    "air_time_weight",
    "body_ang_vel_weight",
    "angular_momentum_weight",
)


OBS_VARIANTS = ("mjlab", "no_base_lin_vel", "imu")
"""The policy observations of the velocity tasks (config ``obs_variant``)."""


@dataclass(kw_only=True)
class UnitreeVelocityConfig(UnitreeSceneConfig):
    """mjlab's velocity recipe: commands, reward weights (per control step), thresholds and randomization."""

    command_vx: tuple[float, float] = (-1.0, 1.0)
    """Range of the commanded forward velocity [m/s], base frame (velocity_env_cfg.py:191)."""
    command_vy: tuple[float, float] = (-1.0, 1.0)
    """Range of the commanded lateral velocity [m/s] (:192)."""
    command_yaw_rate: tuple[float, float] = (-0.5, 0.5)
    """Range of the commanded yaw rate [rad/s], also the clamp of heading mode's (:193)."""
    command_heading: tuple[float, float] = (-math.pi, math.pi)
    """Range of a heading-mode world's heading target [rad] (:194)."""
    command_resample_time: tuple[float, float] = (3.0, 8.0)
    """Each world draws a new command after U(low, high) seconds (:183) and at reset."""
    rel_standing_envs: float = 0.1
    """Probability of a standing command (all zero) at a draw (:184)."""
    rel_heading_envs: float = 0.3
    """Probability of heading mode at a draw: the yaw rate steers to a heading target (:185, :187)."""
    rel_forward_envs: float = 0.2
    """Probability of a forward-only command, vx = max(|vx|, 0.3) m/s, vy = yaw rate = 0 (:186)."""
    heading_stiffness: float = 0.5
    """Heading mode's yaw rate per radian of heading error [1/s] (:188)."""
    tracking_sigma: float = 0.25
    """Width of ``track_linear_velocity``'s kernel, mjlab's std^2 = 0.25 [(m/s)^2] (:282)."""
    ang_tracking_sigma: float = 0.5
    """Width of ``track_angular_velocity``'s kernel, std^2 = 0.5 [(rad/s)^2] (:287)."""
    upright_sigma: float = 0.2
    """Width of ``upright``'s kernel, std^2 = 0.2 (:293)."""
    walking_threshold: float = 0.05
    """Command speed |cmd_xy| + |cmd_yaw| from which ``pose`` uses the walking tolerances (:306)."""
    running_threshold: float = 1.5
    """Command speed from which ``pose`` uses the running tolerances (:307)."""
    gait_command_threshold: float = 0.05
    """Command speed above which the foot terms act (:340, :352, :360, :371)."""
    feet_target_height: float = 0.1
    """Swing height of the foot points [m] (:337, :350)."""
    contact_force_threshold: float = 1.0
    """Contact force [N] above which a body is in contact (mjlab's sensors count any contact)."""
    max_tilt_cos: float = math.cos(math.radians(70.0))
    """Terminate when the base's up axis has a z component below this: tilt above 70 degrees (:382-385)."""
    track_linear_velocity_weight: float = 2.0 * _DT
    track_angular_velocity_weight: float = 2.0 * _DT
    upright_weight: float = 1.0 * _DT
    pose_weight: float = 1.0 * _DT
    joint_pos_limits_weight: float = -1.0 * _DT
    action_rate_weight: float = -0.1 * _DT
    foot_clearance_weight: float = -2.0 * _DT
    foot_swing_height_weight: float = -0.25 * _DT
    foot_slip_weight: float = -0.1 * _DT
    soft_landing_weight: float = -1.0e-5 * _DT
    air_time_weight: float = 0.0
    """mjlab's ``air_time`` weight: 0 for both robots (config/go1/env_cfgs.py:208, config/g1/env_cfgs.py:155)."""
    body_ang_vel_weight: float = 0.0
    angular_momentum_weight: float = 0.0
    obs_variant: str = "mjlab"
    """The policy's observation: ``"mjlab"``, mjlab's actor terms; ``"no_base_lin_vel"``, without the base linear
    velocity, which a real robot does not measure; ``"imu"``, with an IMU's gyroscope and accelerometer at the
    robot's IMU site in place of the base velocities. The critic keeps the base velocities (after its privileged
    blocks)."""
    imu_acc_noise: float = 0.5
    """Bound of the accelerometer's uniform noise [m/s^2] (``obs_variant="imu"``; ours: mjlab has no accelerometer
    term); with ``randomize`` Gaussian noise of its standard deviation, bound / sqrt(3)."""
    randomize: bool = True
    """Domain randomization as mjlab trains: foot friction (``randomize_friction_scale``), pushes, encoder bias, base
    centre-of-mass offset, observation noise (``obs_noise_std``). False: none of them (mjlab's play mode), unless
    set explicitly."""
    foot_friction_range: tuple[float, float] = (0.3, 1.5)
    """Factor range of the robot's friction coefficients drawn at reset when ``randomize`` (mjlab draws the feet's
    absolute coefficient from it; Go1's nominal is 1)."""
    push_interval_range: tuple[float, float] = (1.0, 3.0)
    """Time between pushes, U(low, high) [s] (:228)."""
    push_lin_vel: tuple[float, float, float] = (0.5, 0.5, 0.4)
    """Bounds of a push's base linear velocity change, U(-v, v) per world axis [m/s] (:231-234)."""
    push_ang_vel: tuple[float, float, float] = (0.52, 0.52, 0.78)
    """Bounds of a push's base angular velocity change, U(-w, w) per world axis [rad/s] (:235-237)."""
    encoder_bias: float = 0.015
    """Bound of the joint-encoder offset drawn per world and joint at reset [rad] (:256)."""
    base_com_offset: tuple[float, float, float] = (0.025, 0.025, 0.03)
    """Bounds of the torso's centre-of-mass offset drawn at reset, U(-d, d) per body axis [m] (:265-269)."""
    obs_noise_bounds: tuple[float, float, float, float, float] = (0.5, 0.2, 0.05, 0.01, 1.5)
    """mjlab's uniform noise bounds of the base linear and angular velocity, gravity, joint angles and joint
    velocities (:80-98); ``obs_noise_std`` gets their standard deviations, bound / sqrt(3), per entry."""
    obs_noise_std: float | tuple[float, ...] | None = None
    """None: ``obs_noise_bounds``' standard deviations with ``randomize``, else 0; or as for every task."""

    field_ranges = declare(
        command_vx=any_value("a (low, high) velocity range [m/s]"),
        command_vy=any_value("a (low, high) velocity range [m/s]"),
        command_yaw_rate=any_value("a (low, high) yaw rate range [rad/s]"),
        command_heading=any_value("a (low, high) heading range [rad]"),
        command_resample_time=positive("a (low, high) period range [s]"),
        rel_standing_envs=between(0.0, 1.0, "a probability"),
        rel_heading_envs=between(0.0, 1.0, "a probability"),
        rel_forward_envs=between(0.0, 1.0, "a probability"),
        heading_stiffness=at_least(0.0, "a gain [1/s]"),
        tracking_sigma=positive("a kernel width; the tracking reward divides by it"),
        ang_tracking_sigma=positive("a kernel width; the tracking reward divides by it"),
        upright_sigma=positive("a kernel width; the upright reward divides by it"),
        walking_threshold=at_least(0.0, "a command speed"),
        running_threshold=at_least(0.0, "a command speed"),
        gait_command_threshold=at_least(0.0, "a command speed"),
        feet_target_height=positive("a height [m]; the swing-height term divides by it"),
        contact_force_threshold=at_least(0.0, "a force magnitude [N]"),
        max_tilt_cos=any_value("the cosine of the largest tilt; below -1 turns the termination off"),
        **dict.fromkeys(_WEIGHTS, any_value("a signed reward weight per step (mjlab's times 0.02 s)")),
        foot_friction_range=positive("(low, high) friction factors"),
        push_interval_range=positive("a (low, high) period range [s]"),
        push_lin_vel=at_least(0.0, "velocity bounds [m/s]"),
        push_ang_vel=at_least(0.0, "angular velocity bounds [rad/s]"),
        encoder_bias=at_least(0.0, "an offset bound [rad]"),
        base_com_offset=at_least(0.0, "offset bounds [m]"),
        obs_noise_bounds=at_least(0.0, "uniform noise bounds"),
        imu_acc_noise=at_least(0.0, "a noise bound [m/s^2]"),
    )

    # Legged terms read these; the soft limits are mjlab's (``soft_joint_pos_limit_factor``), with no extra margin.
    joint_limit_margin: ClassVar[float] = 0.0
    feet_air_time_target: ClassVar[float] = 0.0
    joints: ClassVar[int] = 0
    """Actuated joints of the robot (the observation noise's layout)."""

    def __post_init__(self) -> None:
        if self.obs_variant not in OBS_VARIANTS:
            raise ValueError(f"obs_variant: expected one of {OBS_VARIANTS}, got {self.obs_variant!r}")
        self.require_intervals(
            "command_vx",
            "command_vy",
            "command_yaw_rate",
            "command_heading",
            "command_resample_time",
            "push_interval_range",
            "foot_friction_range",
        )
        if self.randomize and self.randomize_friction_scale is None:
            self.randomize_friction_scale = tuple(self.foot_friction_range)
        if self.obs_noise_std is None and self.randomize:
            lin, ang, grav, q, qd = (b / math.sqrt(3.0) for b in self.obs_noise_bounds)
            # The actor's blocks in order: base velocities, gravity, joint angles and velocities, last actions and
            # the command (no noise on those two, as mjlab).
            n = self.joints
            base = {
                "mjlab": (lin,) * 3 + (ang,) * 3,
                "no_base_lin_vel": (ang,) * 3,
                "imu": (ang,) * 3 + (self.imu_acc_noise / math.sqrt(3.0),) * 3,  # the gyro gets the base's
            }[self.obs_variant]
            self.obs_noise_std = base + (grav,) * 3 + (q,) * n + (qd,) * n + (0.0,) * (n + 3)
        elif self.obs_noise_std is None:
            self.obs_noise_std = 0.0
        super().__post_init__()


# mjlab's rl_cfg.py (config/go1 and config/g1): actor and critic (512, 256, 128), 24 steps per env, 5 epochs of 4
# mini-batches, and its initial std of 1 (0.25 here, where action 1 is mjlab's 4); but a fixed learning rate of 5e-4 and
# an entropy coefficient of 0.005 (mjlab: 1e-3 adaptive, 0.01). On Go1 with 256 worlds instead of mjlab's 4096: the
# adaptive schedule held the rate at a median of 7.6e-5 over the first 300 iterations (1.9 M env-steps) with the
# tracking error at the zero policy's, as on QuadrupedVelocity; with entropy 0.01 the std (of mjlab's actions clipped at
# 1) grew from 0.5 to 0.83 within 490 iterations, with 0.005 it fell (to 0.34 in 300 iterations).
_PPO = PpoConfig(
    # 6 M env-steps, the Go1 budget: 977 iterations of 256 worlds x 24 steps (the tracking error levels off by 3 M;
    # the CHANGELOG has the measurement).
    max_iterations=977,
    actor_hidden_dims=(512, 256, 128),
    critic_hidden_dims=(512, 256, 128),
    entropy_coef=0.005,
    schedule="fixed",
    learning_rate=5.0e-4,
    init_noise_std=0.25,
)


def _actor_blocks(joints: int) -> tuple[ObservationBlock, ...]:
    """mjlab's actor terms in order (velocity_env_cfg.py:76-104), without the height scan of rough ground."""
    return (
        ObservationBlock("base_lin_vel", 3, legged.base_lin_vel, "base linear velocity, base frame", "m/s"),
        ObservationBlock("base_ang_vel", 3, legged.base_ang_vel, "base angular velocity, base frame", "rad/s"),
        ObservationBlock("projected_gravity", 3, legged.projected_gravity, "gravity direction in the base frame", "1"),
        ObservationBlock(
            "joint_pos",
            joints,
            legged.joint_pos_rel_biased,
            "joint angles minus the standing pose, plus the encoder bias",
            "rad",
        ),
        ObservationBlock("joint_vel", joints, legged.joint_vel, "joint velocities", "rad/s"),
        ObservationBlock("actions", joints, legged.last_action, "the last applied actions (0 after a reset)", "1"),
        ObservationBlock("command", 3, legged.velocity_command, "command (vx, vy, yaw rate)", "m/s, rad/s"),
    )


IMU_BLOCKS = (
    ObservationBlock("imu_ang_vel", 3, legged.imu_ang_vel, "gyroscope: angular velocity, IMU frame", "rad/s"),
    ObservationBlock("imu_lin_acc", 3, legged.imu_lin_acc, "accelerometer: specific force (a - g), IMU frame", "m/s^2"),
)
"""The IMU's blocks of ``obs_variant="imu"``, at the robot's IMU site (``imu_site``)."""


def _critic_blocks(feet: int) -> tuple[ObservationBlock, ...]:
    """mjlab's privileged critic terms (velocity_env_cfg.py:122-137)."""
    return (
        ObservationBlock("foot_height", feet, legged.foot_height, "foot-point heights above the ground", "m"),
        ObservationBlock("foot_air_time", feet, legged.foot_air_time, "time since each foot left the ground", "s"),
        ObservationBlock("foot_contact", feet, legged.foot_contact, "1 per foot in contact", "1"),
        ObservationBlock(
            "foot_contact_forces",
            3 * feet,
            legged.foot_contact_force_log,
            "foot contact forces (x, y, z per foot, world frame), sign(f) log(1 + abs(f))",
            "log N",
        ),
    )


class UnitreeVelocityEnv(UnitreeScene):
    """mjlab's flat-ground velocity task on a vendored Unitree robot; :class:`Go1VelocityEnv`, :class:`G1VelocityEnv`
    set the robot, its feet and its posture tolerances."""

    config_cls: ClassVar[type] = UnitreeVelocityConfig
    config: UnitreeVelocityConfig
    feet_bodies: ClassVar[tuple[str, ...]]
    """Bodies carrying the feet (their contact forces are the feet's)."""
    foot_sites: ClassVar[tuple[tuple[float, float, float], ...]]
    """Per foot, mjlab's foot site in its body's frame [m]."""
    torso_body: ClassVar[str]
    """Body of the ``upright`` and ``body_ang_vel`` terms and of the centre-of-mass offset."""
    imu_site: ClassVar[tuple[float, float, float]]
    """The IMU site in the base body's frame [m] (the MJCF's; its axes are the base's)."""
    posture_std: ClassVar[tuple[dict[str, float], dict[str, float], dict[str, float]]]
    """``pose``'s per-joint tolerances [rad] standing, walking, running, by joint-name pattern."""

    rewards = (
        RewardTerm("track_linear_velocity", legged.track_linear_velocity, weight="track_linear_velocity_weight"),
        RewardTerm("track_angular_velocity", legged.track_angular_velocity, weight="track_angular_velocity_weight"),
        RewardTerm("upright", legged.upright, weight="upright_weight"),
        RewardTerm("pose", legged.variable_posture, weight="pose_weight"),
        RewardTerm("dof_pos_limits", legged.joint_pos_limits, weight="joint_pos_limits_weight"),
        RewardTerm("action_rate_l2", legged.action_rate_l2, weight="action_rate_weight"),
        RewardTerm("foot_clearance", legged.feet_clearance, weight="foot_clearance_weight"),
        RewardTerm("foot_swing_height", legged.feet_swing_height, weight="foot_swing_height_weight"),
        RewardTerm("foot_slip", legged.feet_slip, weight="foot_slip_weight"),
        RewardTerm("soft_landing", legged.soft_landing, weight="soft_landing_weight"),
        RewardTerm("air_time", legged.feet_air_time_in_range, weight="air_time_weight"),
    )
    terminations = (
        TerminationTerm("fell_over", legged.bad_orientation),
        TerminationTerm("base_contact", legged.illegal_contact),
    )
    metrics = (legged.TRACKING_ERROR, legged.TRACKING_ERROR_HORIZON)
    requested_observables = ("contact_f",)

    def __init__(self, num_envs: int = 1, *, obs_mode: str = "state", **kwargs: object) -> None:
        # mjlab corrupts state observations; pixel modes get none by default (image noise belongs to the learner).
        if obs_mode != "state":
            kwargs.setdefault("obs_noise_std", 0.0)
        super().__init__(num_envs, obs_mode=obs_mode, **kwargs)

    def observation_blocks(self) -> tuple[ObservationBlock, ...]:
        """The class's blocks, with the base velocities replaced as ``config.obs_variant`` says."""
        blocks = super().observation_blocks()
        variant = self.config.obs_variant
        if variant == "no_base_lin_vel":
            return tuple(b for b in blocks if b.name != "base_lin_vel")
        if variant == "imu":
            rest = tuple(b for b in blocks if b.name not in ("base_lin_vel", "base_ang_vel"))
            return (*IMU_BLOCKS, *rest)
        return blocks

    def privileged_observation_blocks(self) -> tuple[ObservationBlock, ...]:
        """The class's privileged blocks, after the base velocities the policy's variant leaves out."""
        blocks = super().privileged_observation_blocks()
        left_out = {"mjlab": (), "no_base_lin_vel": ("base_lin_vel",), "imu": ("base_lin_vel", "base_ang_vel")}
        names = left_out[self.config.obs_variant]
        return (*(b for b in self.observations if b.name in names), *blocks)

    def _setup_task(self) -> None:
        c, robot = self.config, self.robot
        labels = [label.rsplit("/", 1)[-1] for label in self.model.body_label]
        per_world = self.model.body_count // self.num_envs

        def body(name: str) -> int:
            return labels.index(name) % per_world

        self._torso = body(self.torso_body)
        feet = tuple(body(name) for name in self.feet_bodies)
        dofs = self.model.joint_dof_world_start.numpy()[0] + 6 + np.arange(len(robot.joints))
        lower, upper = self.model.joint_limit_lower.numpy()[dofs], self.model.joint_limit_upper.numpy()[dofs]
        mid, half = (lower + upper) / 2, (upper - lower) / 2 * robot.soft_joint_pos_limit_factor
        self.term_state = legged.make_legged_state(
            self,
            base=body(robot.base_body),
            feet=feet,
            default_joint_pos=robot.standing_pose,
            joint_pos_lower=(mid - half).astype(np.float32),
            joint_pos_upper=(mid + half).astype(np.float32),
            stiffness=robot.stiffness,
            damping=robot.damping,
            effort_limit=robot.effort_limit,
            undesired_bodies=(),
            torso=self._torso,
            foot_offsets=np.array(self.foot_sites, np.float32),
            posture_std=np.array([per_joint(robot.joints, rules) for rules in self.posture_std], np.float32),
        )
        self.term_state.imu_offset = wp.vec3(*self.imu_site)
        commands = legged.TwistCommands()
        n = self.num_envs
        commands.time_left = wp.zeros(n, dtype=wp.float32)
        commands.heading_target = wp.zeros(n, dtype=wp.float32)
        commands.mode = wp.zeros(n, dtype=wp.int32)
        commands.resample_time = wp.vec2(*c.command_resample_time)
        commands.vx, commands.vy = wp.vec2(*c.command_vx), wp.vec2(*c.command_vy)
        commands.yaw_rate, commands.heading = wp.vec2(*c.command_yaw_rate), wp.vec2(*c.command_heading)
        commands.rel_standing, commands.rel_heading = float(c.rel_standing_envs), float(c.rel_heading_envs)
        commands.rel_forward, commands.heading_stiffness = float(c.rel_forward_envs), float(c.heading_stiffness)
        self.commands = commands
        self._push_time_left = wp.zeros(n, dtype=wp.float32)
        self._nominal_torso_com = wp.vec3(*self.model.body_com.numpy()[self._torso])

    def _pre_physics(self) -> None:
        if self.config.randomize:
            self._push(self._no_world, float(self.control_dt))

    def _push(self, force: wp.array, dt: float) -> None:
        c = self.config
        self.launch_per_world(
            legged.push_base_velocity,
            inputs=[
                force,
                float(dt),
                wp.vec2(*c.push_interval_range),
                wp.vec3(*c.push_lin_vel),
                wp.vec3(*c.push_ang_vel),
                self.model.joint_dof_world_start,
                self._push_time_left,
            ],
            outputs=[self.noise_rng_state, self.state_0.joint_qd],
        )

    def _post_physics(self) -> None:
        self.launch_per_world(legged.update_feet_air_time, inputs=[self.term_state, float(self.control_dt)])
        if self.config.obs_variant == "imu":
            self.launch_per_world(legged.update_imu, inputs=[self.term_state, float(self.control_dt)])

    def _post_rewards(self) -> None:
        self.launch_per_world(legged.store_last_actions_and_joint_vel, inputs=[self.term_state])
        # mjlab updates the commands after the rewards, so the observation shows the command the next reward scores.
        self._update_commands(self._no_world, float(self.control_dt))

    def _update_commands(self, force: wp.array, dt: float) -> None:
        self.launch_per_world(
            legged.update_twist_commands,
            inputs=[force, dt, self.commands, self.term_state],
            outputs=[self.rng_state],
        )

    def deployment_command_names(self) -> tuple[str, ...]:
        return ("twist",)  # mjlab's command term (velocity_env_cfg.py:180)

    def deployment_commands(self) -> tuple[CommandComponent, ...]:
        """vx, vy [m/s] and the yaw rate [rad/s] in the base's heading frame, with their sampling ranges (the yaw
        rate of heading mode is clamped to its range too)."""
        c = self.config
        return (
            CommandComponent("lin_vel_x", "m/s", *map(float, c.command_vx)),
            CommandComponent("lin_vel_y", "m/s", *map(float, c.command_vy)),
            CommandComponent("ang_vel_z", "rad/s", *map(float, c.command_yaw_rate)),
        )

    def _reset_task(self, world_mask: wp.array) -> None:
        c = self.config
        self.launch_per_world(legged.reset_legged_state, inputs=[world_mask, self.term_state])
        self._update_commands(world_mask, 0.0)
        if c.randomize:
            self._randomize_at_reset(world_mask)
        if c.obs_variant == "imu":  # after the reset's push: the difference starts from the velocity it gave
            self.launch_per_world(legged.reset_imu, inputs=[world_mask, self.term_state])

    def _randomize_at_reset(self, world_mask: wp.array) -> None:
        c = self.config
        self._push(world_mask, 0.0)
        self.launch_per_world(
            legged.draw_encoder_bias,
            inputs=[world_mask, float(c.encoder_bias)],
            outputs=[self.rng_state, self.term_state],
        )
        self.launch_per_world(
            legged.base_com_offsets,
            inputs=[
                world_mask,
                self._torso,
                self._nominal_torso_com,
                wp.vec3(*c.base_com_offset),
                self.model.body_world_start,
            ],
            outputs=[self.rng_state, self.model.body_com],
        )
        self.backend.notify_model_changed(newton.ModelFlags.BODY_INERTIAL_PROPERTIES, world_mask)


@dataclass(kw_only=True)
class Go1VelocityConfig(UnitreeVelocityConfig):
    """Go1's values of the recipe (config/go1/env_cfgs.py)."""

    action_scale: float = 4.0
    """Action 1 is mjlab's (unclipped) action 4: the box [-1, 1] then spans the calves' range (-1.8 +- 0.99 rad
    against [-2.82, -0.89]). With 1 (calves +-0.25 rad) Go1 learned to stand but not to follow commands: over 160
    iterations (983 k env-steps) the training tracking error stayed at 0.74-0.80 m/s, the zero policy's; with 4 and
    mjlab's initial std it fell to 0.60."""
    joints: ClassVar[int] = 12


class Go1VelocityEnv(UnitreeVelocityEnv, Go1Scene):
    """Track a commanded base velocity with the Unitree Go1 on flat ground, mjlab's
    ``Mjlab-Velocity-Flat-Unitree-Go1`` recipe (``unitree_go1_flat_env_cfg``) on SolverSteel.

    ## Action space
    12 joint position offsets in [-1, 1] around the standing pose (hips +-0.1, thighs 0.9, calves -1.8 rad), times
    ``action_scale`` (4) and mjlab's per-joint scale ``0.25 * effort_limit / stiffness`` (hips and thighs 1.49,
    calves 0.99 rad at action 1; action 1 is mjlab's unclipped action 4), in the order FR, FL, RR, RL x (hip, thigh,
    calf); tracked by PD drives with mjlab's gains (:mod:`steel_envs.assets`).

    ## Observation space
    | index | observation | unit |
    |---|---|---|
    | 0-2 | base linear velocity, base frame | m/s |
    | 3-5 | base angular velocity, base frame | rad/s |
    | 6-8 | gravity direction in the base frame | 1 |
    | 9-20 | joint angles minus the standing pose, plus the encoder bias | rad |
    | 21-32 | joint velocities | rad/s |
    | 33-44 | the last applied actions (0 after a reset) | 1 |
    | 45-47 | command (vx, vy, yaw rate) | m/s, rad/s |

    With ``randomize`` (the default), Gaussian noise with mjlab's uniform noise's standard deviation (its bound /
    sqrt(3)): 0.29 m/s, 0.12 rad/s, 0.029, 0.0058 rad and 0.87 rad/s on the first five blocks.
    ``obs_variant="no_base_lin_vel"`` leaves out the first block (a real robot does not measure it; 45 values);
    ``obs_variant="imu"`` puts an IMU's gyroscope (rad/s) and accelerometer (specific force a - g, m/s^2, +9.81 up
    at rest; a finite difference of the site's velocity over the control step) at go1.xml's ``imu`` site, in the
    trunk's axes, in place of the first two blocks (48 values). The critic keeps the blocks left out, after its
    privileged ones.

    ## Privileged observations (the critic group after the 48 above, without noise; ``env.observation_groups``)
    | index | observation | unit |
    |---|---|---|
    | 0-3 | foot-point heights above the ground | m |
    | 4-7 | time since each foot left the ground | s |
    | 8-11 | 1 per foot in contact | 1 |
    | 12-23 | foot contact forces (x, y, z per foot, world frame), sign(f) log(1 + abs(f)) | log N |

    ## Rewards (mjlab's terms and weights times the 0.02 s step, velocity_env_cfg.py:278-374; weights are config
    fields, also settable by term name, e.g. ``reward_weights={"pose": 0.0}``)
    - ``reward_track_linear_velocity = 0.04 * exp(-(|cmd_xy - v_xy|^2 + v_z^2) / 0.25)``, base frame
    - ``reward_track_angular_velocity = 0.04 * exp(-((cmd_yaw - w_z)^2 + w_x^2 + w_y^2) / 0.5)``
    - ``reward_upright = 0.02 * exp(-(g_x^2 + g_y^2) / 0.2)``, g gravity in the trunk's frame
    - ``reward_pose = 0.02 * exp(-mean_j (q_j - q_default_j)^2 / std_j^2)``, std per joint standing (command speed
      |cmd_xy| + |cmd_yaw| < 0.05), walking (< 1.5) or running: hips and thighs 0.05 / 0.3 / 0.3 rad, calves
      0.1 / 0.6 / 0.6 rad
    - ``reward_dof_pos_limits = -0.02 * sum_j distance past the soft limits`` (the middle 90 % of each range)
    - ``reward_action_rate_l2 = -0.002 * sum_j (a_j - a_prev_j)^2``
    - ``reward_foot_clearance = -0.04 * sum_feet |z_foot - 0.1 m| |v_foot_xy|``
    - ``reward_foot_swing_height = -0.005 * sum over touch-downs of (swing peak / 0.1 m - 1)^2``
    - ``reward_foot_slip = -0.002 * sum over feet in contact of |v_foot_xy|^2``
    - ``reward_soft_landing = -2e-7 * sum over touch-downs of |f_foot|`` [N]
    - ``reward_air_time = 0 * number of feet in the air for 0.05-0.5 s``, while |cmd_xy| + |cmd_yaw| > 0.5 (mjlab's
      ``air_time``, whose weight both robots set to 0; ``air_time_weight`` turns it on)
    The other foot terms are 0 while the command speed is at most 0.05 (standing). Foot points are mjlab's foot sites
    (the foot spheres' centres on the calves); a foot is in contact above 1 N on its body (Steel's ``contact_f``).

    ## Commands (mjlab's ``UniformVelocityCommand``, velocity_env_cfg.py:180-197)
    Each world draws vx ~ U(-1, 1) m/s, vy ~ U(-1, 1) m/s, yaw rate ~ U(-0.5, 0.5) rad/s every U(3, 8) s and at reset;
    with probability 0.3 heading mode (yaw rate 0.5 * heading error toward a heading ~ U(-pi, pi), clamped to the
    yaw-rate range), 0.2 forward only (vx = max(|vx|, 0.3), vy = yaw rate = 0), 0.1 standing (all 0).

    ## Randomization (``randomize=True``, the default; mjlab's, velocity_env_cfg.py:203-272, env_cfgs.py:147-184)
    At every reset: the robot's friction coefficients x U(0.3, 1.5) (Steel's pair coefficient is the mean of the two
    shapes', the ground's 1.0: feet on the ground 0.65-1.25; MuJoCo takes the larger), joint-encoder offsets U(-0.015,
    0.015) rad, the trunk's centre of mass shifted by U(+-0.025, +-0.025, +-0.03) m. Every U(1, 3) s a push adds
    U(+-0.5, +-0.5, +-0.4) m/s and U(+-0.52, +-0.52, +-0.78) rad/s to the base velocity (world frame). mjlab's
    spin and roll friction draws have no counterpart (Steel has no rolling friction). ``randomize=False`` turns all
    of it off, and the observation noise (mjlab's play mode).

    ## Starting state
    Base at 0.295 m upright (the keyframe's 0.278 m would start the feet 16.5 mm into the ground), joints at the
    standing pose, at rest (mjlab: the same, plus a random yaw and +-0.5 m offset, which flat ground and the uniform
    heading target make immaterial).

    ## Episode end
    Terminated when the trunk tilts beyond 70 degrees (``fell_over``, mjlab's) or touches the ground
    (``base_contact``), or on a non-finite state; truncated after 1000 steps (20 s) or on a constraint overflow.

    ## Metrics (``info["episode"]``, per ended episode)
    - ``tracking_error`` [m/s]: RMS over the episode's steps of ``|cmd_xy - v_xy|``, base frame.
    - ``tracking_error_horizon`` [m/s]: the same RMS over the time limit's steps, each step lost to an early end
      charged ``|cmd_xy|`` (standing still): the benchmark score, in which a fall does not hide the steps it
      cut off.
    """

    config_cls = Go1VelocityConfig
    config: Go1VelocityConfig
    feet_bodies = ("FR_calf", "FL_calf", "RR_calf", "RL_calf")
    # go1.xml:80,106,132,158: the foot sites FR, FL, RR, RL at the foot spheres' centres.
    foot_sites = ((0.0, 0.0, -0.213),) * 4
    torso_body = "trunk"
    imu_site = (-0.01592, -0.06659, -0.00617)  # go1.xml:57, site "imu" on the trunk
    default_max_episode_steps = 1000  # 20 s, velocity_env_cfg.py:455
    # env_cfgs.py:186-197.
    posture_std = (
        {r".*(FR|FL|RR|RL)_(hip|thigh)_joint.*": 0.05, r".*(FR|FL|RR|RL)_calf_joint.*": 0.1},
        {r".*(FR|FL|RR|RL)_(hip|thigh)_joint.*": 0.3, r".*(FR|FL|RR|RL)_calf_joint.*": 0.6},
        {r".*(FR|FL|RR|RL)_(hip|thigh)_joint.*": 0.3, r".*(FR|FL|RR|RL)_calf_joint.*": 0.6},
    )
    observations = _actor_blocks(12)
    privileged_observations = _critic_blocks(4)
    train_config = _PPO
    benchmark = BenchmarkSpec(
        suite="locomotion",
        score="tracking_error_horizon",
        direction="lower",
        random_score=0.716,
        expert_score=0.287,
        expert_from="target",
        anchors=(
            "random: tracking_error_horizon of the random policy over 100 episodes "
            "(docs/reference/Go1Velocity-v0.json); expert: the reference target, 40 % of the zero policy's 0.716"
        ),
    )


_G1_WALKING = {
    r".*hip_pitch.*": 0.3,
    r".*hip_roll.*": 0.15,
    r".*hip_yaw.*": 0.15,
    r".*knee.*": 0.35,
    r".*ankle_pitch.*": 0.25,
    r".*ankle_roll.*": 0.1,
    r".*waist_yaw.*": 0.2,
    r".*waist_roll.*": 0.08,
    r".*waist_pitch.*": 0.1,
    r".*shoulder_pitch.*": 0.15,
    r".*shoulder_roll.*": 0.15,
    r".*shoulder_yaw.*": 0.1,
    r".*elbow.*": 0.15,
    r".*wrist.*": 0.3,
}
_G1_RUNNING = {
    r".*hip_pitch.*": 0.5,
    r".*hip_roll.*": 0.2,
    r".*hip_yaw.*": 0.2,
    r".*knee.*": 0.6,
    r".*ankle_pitch.*": 0.35,
    r".*ankle_roll.*": 0.15,
    r".*waist_yaw.*": 0.3,
    r".*waist_roll.*": 0.08,
    r".*waist_pitch.*": 0.2,
    r".*shoulder_pitch.*": 0.5,
    r".*shoulder_roll.*": 0.2,
    r".*shoulder_yaw.*": 0.15,
    r".*elbow.*": 0.35,
    r".*wrist.*": 0.3,
}


@dataclass(kw_only=True)
class G1VelocityConfig(UnitreeVelocityConfig):
    """G1's values of the recipe (config/g1/env_cfgs.py)."""

    body_ang_vel_weight: float = -0.05 * _DT
    """env_cfgs.py:153."""
    angular_momentum_weight: float = -0.02 * _DT
    """env_cfgs.py:154."""
    foot_friction_range: tuple[float, float] = (0.5, 2.0)
    """velocity_env_cfg.py:247 draws the feet's coefficient in (0.3, 1.2); G1's nominal is 0.6, hence these
    factors."""
    joints: ClassVar[int] = 29


class G1VelocityEnv(UnitreeVelocityEnv, G1Scene):
    """Track a commanded base velocity with the Unitree G1 (29 DOF) on flat ground, mjlab's
    ``Mjlab-Velocity-Flat-Unitree-G1`` recipe (``unitree_g1_flat_env_cfg``) on SolverSteel.

    ## Action space
    29 joint position offsets in [-1, 1] around the knees-bent standing pose, times ``action_scale`` (1: mjlab's
    actions clipped at 1; with 4, bang-bang actions drove the ankles 0.05 rad past their limits and the feet 9 mm into
    the ground, ``steel-envs doctor``) and mjlab's per-joint scale ``0.25 * effort_limit / stiffness``, in
    ``steel_envs.assets.G1.joints`` order (legs left then right, waist, arms left then right); tracked by PD drives
    with mjlab's gains (:mod:`steel_envs.assets`).

    ## Observation space
    | index | observation | unit |
    |---|---|---|
    | 0-2 | base linear velocity, base frame | m/s |
    | 3-5 | base angular velocity, base frame | rad/s |
    | 6-8 | gravity direction in the base frame | 1 |
    | 9-37 | joint angles minus the standing pose, plus the encoder bias | rad |
    | 38-66 | joint velocities | rad/s |
    | 67-95 | the last applied actions (0 after a reset) | 1 |
    | 96-98 | command (vx, vy, yaw rate) | m/s, rad/s |

    The base is the pelvis. With ``randomize`` (the default), Gaussian noise with mjlab's uniform noise's standard
    deviation, as :class:`Go1VelocityEnv`.

    ## Privileged observations (the critic group after the 99 above, without noise; ``env.observation_groups``)
    | index | observation | unit |
    |---|---|---|
    | 0-1 | foot-point heights above the ground | m |
    | 2-3 | time since each foot left the ground | s |
    | 4-5 | 1 per foot in contact | 1 |
    | 6-11 | foot contact forces (x, y, z per foot, world frame), sign(f) log(1 + abs(f)) | log N |

    ## Rewards (mjlab's terms and weights times the 0.02 s step, velocity_env_cfg.py:278-374; weights are config
    fields, also settable by term name, e.g. ``reward_weights={"pose": 0.0}``)
    - ``reward_track_linear_velocity = 0.04 * exp(-(|cmd_xy - v_xy|^2 + v_z^2) / 0.25)``, base frame
    - ``reward_track_angular_velocity = 0.04 * exp(-((cmd_yaw - w_z)^2 + w_x^2 + w_y^2) / 0.5)``
    - ``reward_upright = 0.02 * exp(-(g_x^2 + g_y^2) / 0.2)``, g gravity in the torso_link's frame
    - ``reward_pose = 0.02 * exp(-mean_j (q_j - q_default_j)^2 / std_j^2)``, std per joint standing (command speed
      |cmd_xy| + |cmd_yaw| < 0.05), walking (< 1.5) or running: standing 0.05 rad, walking and running
      mjlab's per-group values (env_cfgs.py:107-145)
    - ``reward_dof_pos_limits = -0.02 * sum_j distance past the soft limits`` (the middle 90 % of each range)
    - ``reward_action_rate_l2 = -0.002 * sum_j (a_j - a_prev_j)^2``
    - ``reward_foot_clearance = -0.04 * sum_feet |z_foot - 0.1 m| |v_foot_xy|``
    - ``reward_foot_swing_height = -0.005 * sum over touch-downs of (swing peak / 0.1 m - 1)^2``
    - ``reward_foot_slip = -0.002 * sum over feet in contact of |v_foot_xy|^2``
    - ``reward_soft_landing = -2e-7 * sum over touch-downs of |f_foot|`` [N]
    - ``reward_air_time = 0 * number of feet in the air for 0.05-0.5 s``, while |cmd_xy| + |cmd_yaw| > 0.5 (mjlab's
      ``air_time``, whose weight both robots set to 0; ``air_time_weight`` turns it on)
    - ``reward_body_ang_vel = -0.001 * (w_x^2 + w_y^2)`` of the torso, world frame
    - ``reward_angular_momentum = -0.0004 * |L|^2``, L the whole robot's angular momentum about its centre of mass
    The other foot terms are 0 while the command speed is at most 0.05 (standing). Foot points are mjlab's foot sites
    (on the ankle-roll links); a foot is in contact above 1 N on its body (Steel's ``contact_f``).
    mjlab's ``self_collisions`` (-1.0) has no counterpart: the scene does not collide the robot with itself.

    ## Commands
    As :class:`Go1VelocityEnv` (mjlab's are the same for both robots).

    ## Randomization (``randomize=True``, the default)
    As :class:`Go1VelocityEnv`, with friction factors U(0.5, 2.0) on the nominal 0.6 (mjlab's feet U(0.3, 1.2); the
    pair with the ground 0.45-1.1) and the torso's centre of mass shifted.

    ## Starting state
    Pelvis at 0.76 m upright, joints at the knees-bent standing pose, at rest. Under zero actions the robot falls
    within about 1.5 s (mjlab's gains hold it in neither Steel nor MuJoCo): standing is learned.

    ## Episode end
    Terminated when the pelvis tilts beyond 70 degrees (``fell_over``) or touches the ground (``base_contact``), or
    on a non-finite state; truncated after 1000 steps (20 s) or on a constraint overflow.

    ## Metrics (``info["episode"]``, per ended episode)
    - ``tracking_error`` [m/s]: RMS over the episode's steps of ``|cmd_xy - v_xy|``, base frame.
    - ``tracking_error_horizon`` [m/s]: the same RMS over the time limit's steps, each step lost to an early end
      charged ``|cmd_xy|`` (standing still): the benchmark score, in which a fall does not hide the steps it
      cut off.
    """

    config_cls = G1VelocityConfig
    config: G1VelocityConfig
    feet_bodies = ("left_ankle_roll_link", "right_ankle_roll_link")
    # g1.xml:100,149: the foot sites left_foot, right_foot.
    foot_sites = ((0.04, 0.0, -0.037),) * 2
    torso_body = "torso_link"
    imu_site = (0.04525, 0.0, -0.08339)  # g1.xml:69, site "imu_in_pelvis" (mjlab's IMU sensors read it)
    default_max_episode_steps = 1000  # 20 s, velocity_env_cfg.py:455
    posture_std = ({".*": 0.05}, _G1_WALKING, _G1_RUNNING)  # env_cfgs.py:107-145
    rewards = (
        *UnitreeVelocityEnv.rewards,
        RewardTerm("body_ang_vel", legged.torso_ang_vel_xy_l2, weight="body_ang_vel_weight"),
        RewardTerm("angular_momentum", legged.angular_momentum_l2, weight="angular_momentum_weight"),
    )
    observations = _actor_blocks(29)
    privileged_observations = _critic_blocks(2)
    # 4 M env-steps, the budget: 652 iterations of 256 worlds x 24 steps.
    # Go1's initial std is mjlab's 1 in actions 4 times as large; G1's actions are mjlab's.
    train_config = dataclasses.replace(_PPO, max_iterations=652, init_noise_std=0.5)
    benchmark = BenchmarkSpec(
        suite="locomotion",
        score="tracking_error_horizon",
        direction="lower",
        random_score=0.746,
        expert_score=0.297,
        expert_from="target",
        anchors=(
            "random and zero: tracking_error_horizon 0.746 and 0.742 over 100 episodes each (steel-envs evaluate "
            "steel_envs/G1Velocity-v0 --policy random --policy zero --episodes 100 --num-envs 16); expert: 40 % "
            "of the zero policy's, Go1Velocity-v0's target (G1's own CPU target, below the zero policy's, lies "
            "too near the random policy's to normalize by)"
        ),
    )


Go1VelocitySingleEnv = register_task("steel_envs/Go1Velocity-v0", Go1VelocityEnv)
G1VelocitySingleEnv = register_task("steel_envs/G1Velocity-v0", G1VelocityEnv)
