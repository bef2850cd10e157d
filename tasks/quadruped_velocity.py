"""``steel_envs/QuadrupedVelocity-v0``: track a commanded base velocity (vx, vy, yaw rate) with a quadruped,
the reward family of legged-robot RL (legged_gym, Isaac Lab, mjlab velocity tasks)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import warp as wp
from steel_envs.envs.quadruped import (
    BASE,
    FEET,
    JOINTS,
    LIMIT_RANGE,
    ROOT_COORDS,
    ROOT_DOFS,
    QuadrupedScene,
    QuadrupedSceneConfig,
)
from steel_envs.tasks import register_task

from steel_envs.spec import EpisodeMetric
from steel_envs.vector_env import ObservationBlock, RewardTerm, TerminationTerm

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

    def __post_init__(self) -> None:
        super().__post_init__()
        self.require_positive("command_resample_time", "tracking_sigma")
        self.require_nonnegative("joint_limit_margin", "feet_air_time_target", "contact_force_threshold")
        for name in ("command_vx", "command_vy", "command_yaw_rate"):
            low, high = getattr(self, name)
            if not low <= high:
                raise ValueError(f"{name}: expected (low, high) with low <= high, got {(low, high)}")


@wp.func
def _base_frame(body_q: wp.array[wp.transform], body_qd: wp.array[wp.spatial_vector], b: int):
    """(linear velocity, angular velocity, gravity direction) in the base frame."""
    rot = wp.transform_get_rotation(body_q[b])
    v = body_qd[b]
    lin = wp.quat_rotate_inv(rot, wp.spatial_top(v))
    ang = wp.quat_rotate_inv(rot, wp.spatial_bottom(v))
    gravity = wp.quat_rotate_inv(rot, wp.vec3(0.0, 0.0, -1.0))
    return lin, ang, gravity


@wp.kernel(enable_backward=False)
def _resample_commands(
    episode_length: wp.array[wp.int32],
    force: wp.array[wp.bool],
    interval: wp.int32,
    vx: wp.vec2,
    vy: wp.vec2,
    yaw: wp.vec2,
    rng_state: wp.array[wp.uint32],
    commands: wp.array2d[wp.float32],
):
    w = wp.tid()
    if not (force[w] or (episode_length[w] > 0 and episode_length[w] % interval == 0)):
        return
    rng = rng_state[w]
    commands[w, 0] = vx[0] + (vx[1] - vx[0]) * wp.randf(rng)
    commands[w, 1] = vy[0] + (vy[1] - vy[0]) * wp.randf(rng)
    commands[w, 2] = yaw[0] + (yaw[1] - yaw[0]) * wp.randf(rng)
    rng_state[w] = rng


@wp.kernel(enable_backward=False)
def _update_feet(
    body_world_start: wp.array[wp.int32],
    body_wrench: wp.array[wp.spatial_vector],
    feet: wp.vec4i,
    threshold: wp.float32,
    dt: wp.float32,
    air_time: wp.array2d[wp.float32],
    first_contact_air: wp.array2d[wp.float32],
    contact: wp.array2d[wp.bool],
):
    """Per foot: in contact now, and the air time that just ended at a touch-down (0 otherwise)."""
    w = wp.tid()
    for i in range(4):
        f = wp.spatial_top(body_wrench[body_world_start[w] + feet[i]])
        touching = wp.length(f) > threshold
        first_contact_air[w, i] = 0.0
        if touching:
            if air_time[w, i] > 0.0:
                first_contact_air[w, i] = air_time[w, i] + dt
            air_time[w, i] = 0.0
        else:
            air_time[w, i] = air_time[w, i] + dt
        contact[w, i] = touching


@wp.kernel(enable_backward=False)
def _observe_privileged(
    body_world_start: wp.array[wp.int32],
    body_q: wp.array[wp.transform],
    friction_scale: wp.array[wp.float32],
    mass_scale: wp.array[wp.float32],
    out: wp.array2d[wp.float32],
):
    """The critic's privileged blocks: base height, the world's friction and mass factors."""
    w = wp.tid()
    out[w, 0] = wp.transform_get_translation(body_q[body_world_start[w] + BASE])[2]
    out[w, 1] = friction_scale[w]
    out[w, 2] = mass_scale[w]


@wp.kernel(enable_backward=False)
def _observe(
    body_world_start: wp.array[wp.int32],
    coord_world_start: wp.array[wp.int32],
    dof_world_start: wp.array[wp.int32],
    body_q: wp.array[wp.transform],
    body_qd: wp.array[wp.spatial_vector],
    joint_q: wp.array[wp.float32],
    joint_qd: wp.array[wp.float32],
    default_pose: wp.array[wp.float32],
    commands: wp.array2d[wp.float32],
    actions: wp.array2d[wp.float32],
    body_wrench: wp.array[wp.spatial_vector],
    feet: wp.vec4i,
    obs: wp.array2d[wp.float32],
):
    w = wp.tid()
    lin, ang, gravity = _base_frame(body_q, body_qd, body_world_start[w] + BASE)
    for i in range(3):
        obs[w, i] = lin[i]
        obs[w, 3 + i] = ang[i]
        obs[w, 6 + i] = gravity[i]
        obs[w, 9 + i] = commands[w, i]
    q0 = coord_world_start[w] + ROOT_COORDS
    d0 = dof_world_start[w] + ROOT_DOFS
    for j in range(12):
        obs[w, 12 + j] = joint_q[q0 + j] - default_pose[j]
        obs[w, 24 + j] = joint_qd[d0 + j]
        obs[w, 36 + j] = actions[w, j]
    for i in range(4):
        obs[w, 48 + i] = wp.length(wp.spatial_top(body_wrench[body_world_start[w] + feet[i]]))


@wp.kernel(enable_backward=False)
def _terminations(
    body_world_start: wp.array[wp.int32],
    body_q: wp.array[wp.transform],
    body_qd: wp.array[wp.spatial_vector],
    body_wrench: wp.array[wp.spatial_vector],
    threshold: wp.float32,
    max_tilt_cos: wp.float32,
    flags: wp.array2d[wp.bool],
):
    w = wp.tid()
    b = body_world_start[w] + BASE
    _lin, _ang, gravity = _base_frame(body_q, body_qd, b)
    flags[0, w] = wp.length(wp.spatial_top(body_wrench[b])) > threshold
    flags[1, w] = -gravity[2] < max_tilt_cos


@wp.kernel(enable_backward=False)
def _rewards(
    body_world_start: wp.array[wp.int32],
    coord_world_start: wp.array[wp.int32],
    dof_world_start: wp.array[wp.int32],
    body_q: wp.array[wp.transform],
    body_qd: wp.array[wp.spatial_vector],
    joint_q: wp.array[wp.float32],
    joint_qd: wp.array[wp.float32],
    joint_target_q: wp.array[wp.float32],  # coordinate layout, like joint_q
    default_pose: wp.array[wp.float32],
    commands: wp.array2d[wp.float32],
    actions: wp.array2d[wp.float32],
    last_actions: wp.array2d[wp.float32],
    first_contact_air: wp.array2d[wp.float32],
    stiffness: wp.float32,
    damping: wp.float32,
    effort_limit: wp.float32,
    sigma: wp.float32,
    margin: wp.float32,
    air_target: wp.float32,
    reward_terms: wp.array2d[wp.float32],
):
    w = wp.tid()
    lin, ang, _gravity = _base_frame(body_q, body_qd, body_world_start[w] + BASE)
    ex = commands[w, 0] - lin[0]
    ey = commands[w, 1] - lin[1]
    ez = commands[w, 2] - ang[2]
    q0 = coord_world_start[w] + ROOT_COORDS
    d0 = dof_world_start[w] + ROOT_DOFS
    torque2 = float(0.0)
    rate2 = float(0.0)
    limit = float(0.0)
    for j in range(12):
        q = joint_q[q0 + j]
        tau = wp.clamp(
            stiffness * (joint_target_q[q0 + j] - q) - damping * joint_qd[d0 + j], -effort_limit, effort_limit
        )
        torque2 += tau * tau
        da = actions[w, j] - last_actions[w, j]
        rate2 += da * da
        upper = default_pose[j] + LIMIT_RANGE - margin
        lower = default_pose[j] - LIMIT_RANGE + margin
        limit += wp.max(q - upper, 0.0) + wp.max(lower - q, 0.0)
    air = float(0.0)
    for i in range(4):
        if first_contact_air[w, i] > 0.0:
            air += first_contact_air[w, i] - air_target
    moving = wp.sqrt(commands[w, 0] * commands[w, 0] + commands[w, 1] * commands[w, 1]) > 0.1
    if not moving:
        air = 0.0
    reward_terms[0, w] = wp.exp(-(ex * ex + ey * ey) / sigma)
    reward_terms[1, w] = wp.exp(-(ez * ez) / sigma)
    reward_terms[2, w] = lin[2] * lin[2]
    reward_terms[3, w] = ang[0] * ang[0] + ang[1] * ang[1]
    reward_terms[4, w] = torque2
    reward_terms[5, w] = rate2
    reward_terms[6, w] = limit
    reward_terms[7, w] = air


@wp.kernel(enable_backward=False)
def _tracking_sq_error(
    body_world_start: wp.array[wp.int32],
    body_q: wp.array[wp.transform],
    body_qd: wp.array[wp.spatial_vector],
    commands: wp.array2d[wp.float32],
    values: wp.array2d[wp.float32],
):
    """Metric 0 (``tracking_error``, RMS over the episode): ``|cmd_xy - v_xy|^2``, base frame [(m/s)^2]."""
    w = wp.tid()
    lin, _ang, _gravity = _base_frame(body_q, body_qd, body_world_start[w] + BASE)
    ex = commands[w, 0] - lin[0]
    ey = commands[w, 1] - lin[1]
    values[0, w] = ex * ex + ey * ey


@wp.kernel(enable_backward=False)
def _store_actions(actions: wp.array2d[wp.float32], last_actions: wp.array2d[wp.float32]):
    w, j = wp.tid()
    last_actions[w, j] = actions[w, j]


@wp.kernel(enable_backward=False)
def _reset_feet_and_actions(
    world_mask: wp.array[wp.bool],
    air_time: wp.array2d[wp.float32],
    last_actions: wp.array2d[wp.float32],
):
    w = wp.tid()
    if not world_mask[w]:
        return
    for i in range(4):
        air_time[w, i] = 0.0
    for j in range(12):
        last_actions[w, j] = 0.0


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
    """

    config_cls = QuadrupedVelocityConfig
    config: QuadrupedVelocityConfig
    # Signed weights (a penalty's is negative), as legged_gym and mjlab write them.
    rewards = tuple(
        RewardTerm(name, weight=f"{name}_weight")
        for name in (
            "track_lin_vel", "track_ang_vel", "lin_vel_z", "ang_vel_xy", "torques", "action_rate", "joint_limits",
            "feet_air_time",
        )
    )  # fmt: skip
    terminations = (TerminationTerm("base_contact"), TerminationTerm("tilted"))
    metrics = (
        EpisodeMetric(
            "tracking_error",
            "rms",
            "m/s",
            "RMS over the episode of the planar base velocity's error against the command",
        ),
    )
    default_max_episode_steps = 1000
    requested_observables = ("contact_f",)
    train_defaults: ClassVar[dict] = {
        "num_envs": 256,
        "num_steps_per_env": 24,
        "max_iterations": 1500,
        "actor_hidden_dims": (128, 128),
        "critic_hidden_dims": (128, 128),
        "entropy_coef": 0.005,
        "init_noise_std": 0.5,
        # rsl_rl's adaptive schedule held the learning rate at its floor (1e-5) from iteration ~190 on, with the
        # policy standing (tracking error 0.63 m/s, the zero policy's, after 10 min of seed 0); a fixed 5e-4 walks:
        # 0.205 m/s over 32 evaluated episodes after the same 10 min.
        "schedule": "fixed",
        "learning_rate": 5.0e-4,
    }
    """PPO hyper-parameters of ``steel-envs train`` for this task (the learner is not imported here)."""

    privileged_observations = (
        ObservationBlock("base_height", 1, "base height above the ground", "m"),
        ObservationBlock(
            "friction_scale",
            1,
            "the world's friction factor (``set_world_parameters``, ``randomize_friction_scale``)",
            "1",
        ),
        ObservationBlock(
            "mass_scale", 1, "the world's mass factor (``set_world_parameters``, ``randomize_mass_scale``)", "1"
        ),
    )

    def observation_blocks(self) -> tuple[ObservationBlock, ...]:
        joints = len(JOINTS)
        return (
            ObservationBlock("base_lin_vel", 3, "base linear velocity, base frame", "m/s"),
            ObservationBlock("base_ang_vel", 3, "base angular velocity, base frame", "rad/s"),
            ObservationBlock("projected_gravity", 3, "gravity direction in the base frame", "1"),
            ObservationBlock("command", 3, "command (vx, vy, yaw rate)", "m/s, rad/s"),
            ObservationBlock("joint_pos", joints, "joint angles minus the standing pose", "rad"),
            ObservationBlock("joint_vel", joints, "joint velocities", "rad/s"),
            ObservationBlock("last_action", joints, "the last applied actions (0 after a reset)", "1"),
            ObservationBlock(
                "foot_contact_force", len(FEET), "foot contact force magnitudes (Steel's ``contact_f``)", "N"
            ),
        )

    def _setup_task(self) -> None:
        n = self.num_envs
        self._commands = wp.zeros((n, 3), dtype=wp.float32)
        self._last_actions = wp.zeros((n, self.action_dim), dtype=wp.float32)
        self._air_time = wp.zeros((n, 4), dtype=wp.float32)
        self._first_contact_air = wp.zeros((n, 4), dtype=wp.float32)
        self._foot_contact = wp.zeros((n, 4), dtype=wp.bool)
        self._no_force = wp.zeros(n, dtype=wp.bool)
        self._feet = wp.vec4i(*FEET)

    def _resample(self, force: wp.array) -> None:
        c = self.config
        self.launch_per_world(
            _resample_commands,
            inputs=[
                self.episode_steps,
                force,
                max(1, round(c.command_resample_time / self.control_dt)),
                wp.vec2(*c.command_vx),
                wp.vec2(*c.command_vy),
                wp.vec2(*c.command_yaw_rate),
            ],
            outputs=[self.rng_state, self._commands],
        )

    def _pre_physics(self) -> None:
        self._resample(self._no_force)

    def _post_physics(self) -> None:
        self.launch_per_world(
            _update_feet,
            inputs=[
                self.model.body_world_start,
                self.body_contact_wrench,
                self._feet,
                float(self.config.contact_force_threshold),
                float(self.control_dt),
            ],
            outputs=[self._air_time, self._first_contact_air, self._foot_contact],
        )

    def _reset_task(self, world_mask: wp.array) -> None:
        self.launch_per_world(
            _reset_feet_and_actions, inputs=[world_mask], outputs=[self._air_time, self._last_actions]
        )
        self._resample(world_mask)

    def _compute_privileged_observations(self, out: wp.array) -> None:
        r = self.randomizer
        self.launch_per_world(
            _observe_privileged,
            inputs=[self.model.body_world_start, self.state_0.body_q, r.friction_scale, r.mass_scale],
            outputs=[out],
        )

    def _compute_observations(self, obs: wp.array) -> None:
        m, s = self.model, self.state_0
        self.launch_per_world(
            _observe,
            inputs=[
                m.body_world_start,
                m.joint_coord_world_start,
                m.joint_dof_world_start,
                s.body_q,
                s.body_qd,
                s.joint_q,
                s.joint_qd,
                self._default_pose,
                self._commands,
                self.actions,  # the action just applied: zero after a reset
                self.body_contact_wrench,
                self._feet,
            ],
            outputs=[obs],
        )

    def _compute_termination_terms(self, flags: wp.array) -> None:
        s = self.state_0
        self.launch_per_world(
            _terminations,
            inputs=[
                self.model.body_world_start,
                s.body_q,
                s.body_qd,
                self.body_contact_wrench,
                float(self.config.contact_force_threshold),
                float(self.config.max_tilt_cos),
            ],
            outputs=[flags],
        )

    def _compute_metrics(self, values: wp.array) -> None:
        m, s = self.model, self.state_0
        self.launch_per_world(
            _tracking_sq_error, inputs=[m.body_world_start, s.body_q, s.body_qd, self._commands], outputs=[values]
        )

    def _compute_rewards(self, reward_terms: wp.array) -> None:
        m, s, c = self.model, self.state_0, self.config
        self.launch_per_world(
            _rewards,
            inputs=[
                m.body_world_start,
                m.joint_coord_world_start,
                m.joint_dof_world_start,
                s.body_q,
                s.body_qd,
                s.joint_q,
                s.joint_qd,
                self.control.joint_target_q,
                self._default_pose,
                self._commands,
                self.actions,
                self._last_actions,
                self._first_contact_air,
                float(c.stiffness),
                float(c.damping),
                float(c.effort_limit),
                float(c.tracking_sigma),
                float(c.joint_limit_margin),
                float(c.feet_air_time_target),
            ],
            outputs=[reward_terms],
        )
        # The action rate of the next step compares against this step's action.
        wp.launch(
            _store_actions,
            (self.num_envs, self.action_dim),
            inputs=[self.actions],
            outputs=[self._last_actions],
            device=self.wp_device,
        )


QuadrupedVelocitySingleEnv = register_task("steel_envs/QuadrupedVelocity-v0", QuadrupedVelocityEnv)
