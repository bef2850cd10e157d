"""``steel_envs/PandaReach-v0``: bring the Franka Panda's hand to a sampled pose, Isaac Lab's ``Reach-Franka``
recipe (``isaaclab_tasks/manager_based/manipulation/reach``: ``reach_env_cfg.py`` and ``config/franka``)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import warp as wp
from steel_envs.envs.panda import (
    ARM_JOINTS,
    ARM_LOWER,
    ARM_UPPER,
    HAND_BODY,
    HandIK,
    PandaScene,
    PandaSceneConfig,
    rotation_angle,
    target_to_action,
)
from steel_envs.tasks.terms import legged

from steel_envs import kernels
from steel_envs.assets import PANDA
from steel_envs.benchmark import scripted_success
from steel_envs.ranges import any_value, at_least, declare, positive
from steel_envs.registration import register_task
from steel_envs.spec import EpisodeMetric, ObservationBlock, RewardTerm, term
from steel_envs.torch_views import to_torch
from steel_envs.train_config import PpoConfig

__all__ = ["PandaReachConfig", "PandaReachEnv", "PandaReachSingleEnv"]

_DT = 4.0 / 120.0
"""Control step [s]; Isaac Lab's reward manager multiplies each weight by it, so the weights here carry it."""
_JOINTS = len(PANDA.joints)


@dataclass(kw_only=True)
class PandaReachConfig(PandaSceneConfig):
    """Isaac Lab's Reach-Franka command ranges and reward weights (per control step: Isaac Lab's times 1/30 s)."""

    target_x: tuple[float, float] = (0.35, 0.65)
    """Range of the target's x [m] (reach_env_cfg.py ``ranges.pos_x``)."""
    target_y: tuple[float, float] = (-0.2, 0.2)
    """Range of the target's y [m] (``pos_y``)."""
    target_z: tuple[float, float] = (0.15, 0.5)
    """Range of the target's z [m] (``pos_z``)."""
    target_yaw: tuple[float, float] = (-math.pi, math.pi)
    """Range of the target's yaw about the world z [rad]; its roll is 0 and its pitch pi, the hand pointing down
    (config/franka ``ranges.pitch = (pi, pi)``)."""
    resample_time: float = 4.0
    """Seconds between target draws within an episode (``resampling_time_range = (4.0, 4.0)``)."""
    position_weight: float = -0.2 * _DT
    """Weight of ``position_tracking`` (the hand's distance to the target)."""
    position_fine_weight: float = 0.1 * _DT
    """Weight of ``position_tracking_fine`` (1 - tanh(distance / ``position_fine_std``))."""
    position_fine_std: float = 0.1
    """Distance scale of ``position_tracking_fine`` [m] (Isaac Lab's ``std`` of ``position_command_error_tanh``)."""
    orientation_weight: float = -0.1 * _DT
    """Weight of ``orientation_tracking`` (the rotation angle between the hand and the target)."""
    action_rate_weight: float = -0.0001 * _DT
    """Weight of ``action_rate_l2``."""
    joint_vel_weight: float = -0.0001 * _DT
    """Weight of ``joint_vel_l2``."""
    success_position: float = 0.02
    """Largest distance of the hand to the target [m] that counts as success."""
    success_orientation: float = 0.2
    """Largest rotation angle of the hand from the target [rad] that counts as success."""

    field_ranges = declare(
        target_x=any_value("a (low, high) coordinate range [m]"),
        target_y=any_value("a (low, high) coordinate range [m]"),
        target_z=at_least(0.05, "a (low, high) height range [m] above the ground"),
        target_yaw=any_value("a (low, high) angle range [rad]"),
        resample_time=positive("a period [s]"),
        position_weight=any_value("a signed reward weight per step"),
        position_fine_weight=any_value("a signed reward weight per step"),
        position_fine_std=positive("a distance [m]"),
        orientation_weight=any_value("a signed reward weight per step"),
        action_rate_weight=any_value("a signed reward weight per step"),
        joint_vel_weight=any_value("a signed reward weight per step"),
        success_position=positive("a distance [m]"),
        success_orientation=positive("an angle [rad]"),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        self.require_intervals("target_x", "target_y", "target_z", "target_yaw")


@wp.struct
class PandaReachState:
    """What PandaReach's terms read: the arm's state, each world's target pose and buffers, the task's parameters."""

    body_world_start: wp.array[wp.int32]
    coord_world_start: wp.array[wp.int32]
    dof_world_start: wp.array[wp.int32]
    body_q: wp.array[wp.transform]
    joint_q: wp.array[wp.float32]
    joint_qd: wp.array[wp.float32]
    home: wp.array[wp.float32]
    """(9,) the home pose [rad, m]: the zero of the joint observations."""
    goals: wp.array[wp.transform]
    """(num_envs,) each world's target pose of the hand, world frame (the arm's base frame)."""
    actions: wp.array2d[wp.float32]
    last_actions: wp.array2d[wp.float32]
    success: wp.array[wp.bool]
    success_position: wp.float32
    success_orientation: wp.float32
    position_fine_std: wp.float32


@wp.func
def _hand(s: Any, w: int) -> wp.transform:
    return s.body_q[s.body_world_start[w] + HAND_BODY]


@wp.func
def _position_error(s: Any, w: int) -> float:
    return wp.length(wp.transform_get_translation(_hand(s, w)) - wp.transform_get_translation(s.goals[w]))


@wp.func
def _orientation_error(s: Any, w: int) -> float:
    """Rotation angle [rad] between the hand and the target."""
    return rotation_angle(wp.transform_get_rotation(s.goals[w]), wp.transform_get_rotation(_hand(s, w)))


@term("q - q_home")
def joint_pos_rel(s: Any, w: int, j: int) -> float:
    """Joint position relative to the home pose [rad, m]."""
    return s.joint_q[s.coord_world_start[w] + j] - s.home[j]


@term("qd")
def joint_vel(s: Any, w: int, j: int) -> float:
    """Joint velocity [rad/s, m/s]."""
    return s.joint_qd[s.dof_world_start[w] + j]


@term("(p_target, q_target)")
def target_pose(s: Any, w: int) -> wp.transform:
    """Target position [m] and orientation quaternion (x, y, z, w) [1] in the arm's base frame."""
    return s.goals[w]


@term("a_prev")
def last_action(s: Any, w: int, j: int) -> float:
    """The previous step's action [1]."""
    return s.last_actions[w, j]


@term("|p_hand - p_target|", source="Isaac Lab position_command_error")
def position_tracking(s: Any, w: int) -> float:
    """Distance of the hand to the target [m]."""
    return _position_error(s, w)


@term("1 - tanh(|p_hand - p_target| / std)", source="Isaac Lab position_command_error_tanh")
def position_tracking_fine(s: Any, w: int) -> float:
    """1 at the target, falling to 0 over a few ``position_fine_std`` [1]."""
    return 1.0 - wp.tanh(_position_error(s, w) / s.position_fine_std)


@term("2 acos |(q_target q_hand^-1)_w|", source="Isaac Lab orientation_command_error")
def orientation_tracking(s: Any, w: int) -> float:
    """Rotation angle of the hand from the target [rad]."""
    return _orientation_error(s, w)


@term("sum_j qd_j^2", source="Isaac Lab joint_vel_l2")
def joint_vel_l2(s: Any, w: int) -> float:
    """Squared arm joint velocities [(rad/s)^2]."""
    total = float(0.0)
    for j in range(ARM_JOINTS):
        v = s.joint_qd[s.dof_world_start[w] + j]
        total += v * v
    return total


@term("|p_hand - p_target|")
def position_error(s: Any, w: int) -> float:
    """Distance of the hand to the target [m] (a metric's step value)."""
    return _position_error(s, w)


@wp.kernel(enable_backward=False)
def _draw_targets(
    world_mask: wp.array[wp.bool],
    episode_steps: wp.array[wp.int32],
    period: wp.int32,
    low: wp.vec4,
    high: wp.vec4,
    rng_state: wp.array[wp.uint32],
    targets: wp.array[wp.transform],
):
    """Draw a target pose for the selected worlds (``world_mask``, at reset) and for the worlds whose episode reached
    a multiple of ``period`` steps: position U(low, high) (x, y, z), the hand pointing down (roll 0, pitch pi) turned
    by a yaw U(low.w, high.w)."""
    w = wp.tid()
    due = world_mask[w] or (period > 0 and episode_steps[w] > 0 and episode_steps[w] % period == 0)
    if not due:
        return
    rng = rng_state[w]
    p = wp.vec3(
        low[0] + (high[0] - low[0]) * wp.randf(rng),
        low[1] + (high[1] - low[1]) * wp.randf(rng),
        low[2] + (high[2] - low[2]) * wp.randf(rng),
    )
    yaw = low[3] + (high[3] - low[3]) * wp.randf(rng)
    rng_state[w] = rng
    down = wp.quat_from_axis_angle(wp.vec3(0.0, 1.0, 0.0), wp.pi)  # roll 0, pitch pi (x-y-z Euler, world axes)
    targets[w] = wp.transform(p, wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), yaw) * down)


@wp.kernel(enable_backward=False)
def _update_success(s: PandaReachState):
    w = wp.tid()
    s.success[w] = _position_error(s, w) <= s.success_position and _orientation_error(s, w) <= s.success_orientation


class PandaReachEnv(PandaScene):
    """Bring the Franka Panda's hand to a target pose, Isaac Lab's ``Isaac-Reach-Franka-v0`` recipe on SolverSteel.

    ## Action space
    | index | action | min | max | unit |
    |---|---|---|---|---|
    | 0-6 | joint1 .. joint7 position targets, 0 the home pose, +-1 the joint's limits (piecewise linear) | -1 | 1 | 1 |

    With ``action_mode="ee_delta_pose"``: 6 actions, the hand goal's move (x, y, z) times ``ee_delta_position``
    (0.05 m) and its turn (a rotation vector, world axes) times ``ee_delta_rotation`` (0.2 rad), turned into joint
    targets by ``newton.ik`` (the scene's documentation); the previous actions' block then has 6 entries.

    ## Observation space
    | index | observation | unit |
    |---|---|---|
    | 0-8 | joint positions relative to the home pose | rad, m |
    | 9-17 | joint velocities | rad/s, m/s |
    | 18-24 | target position and orientation quaternion | m, 1 |
    | 25-31 | the previous step's actions | 1 |

    Joints in ``steel_envs.assets.PANDA.joints`` order (joint1 .. joint7, both fingers); the target in the arm's base
    frame, its quaternion (x, y, z, w).

    ## Rewards
    Isaac Lab's weights times the control step (1/30 s; its reward manager scales by the step), config fields, also
    settable by term name (``reward_weights={"position_tracking": -0.01}``).

    - ``reward_position_tracking = -0.2/30 * |p_hand - p_target|``
    - ``reward_position_tracking_fine = 0.1/30 * (1 - tanh(|p_hand - p_target| / 0.1))`` (0.1 m: ``position_fine_std``)
    - ``reward_orientation_tracking = -0.1/30 * angle(q_hand, q_target)``
    - ``reward_action_rate_l2 = -0.0001/30 * sum_j (a_j - a_prev_j)^2``
    - ``reward_joint_vel_l2 = -0.0001/30 * sum_j qd_j^2`` (the arm's joints)

    The hand is the ``hand`` body of panda.xml (Isaac Lab's ``panda_hand``).

    ## Target
    Drawn at reset and every ``resample_time`` (4 s): position U(0.35, 0.65) x U(-0.2, 0.2) x U(0.15, 0.5) m,
    orientation the hand pointing down (roll 0, pitch pi) at a yaw U(-pi, pi).

    ## Starting state
    The MJCF's home pose (the hand 0.62 m above the ground, pointing down) with U(-0.2, 0.2) rad on each arm joint
    (``joint_noise``), at rest.

    ## Episode end
    Truncated after 360 steps (12 s) or on a constraint overflow; terminated on a non-finite state. No success
    termination: ``info["success"]`` says whether the hand is within ``success_position`` (2 cm) and
    ``success_orientation`` (0.2 rad) of the target; evaluation counts it on the episode's last step.

    ## Metrics (``info["episode"]``, per ended episode)
    - ``position_error`` [m]: the hand's distance to the target, mean over the episode's steps.
    """

    config_cls = PandaReachConfig
    config: PandaReachConfig
    default_max_episode_steps = 360  # 12 s, reach_env_cfg.py episode_length_s
    observations = (
        ObservationBlock("joint_pos", _JOINTS, joint_pos_rel, "joint positions relative to the home pose", "rad, m"),
        ObservationBlock("joint_vel", _JOINTS, joint_vel, "joint velocities", "rad/s, m/s"),
        ObservationBlock("target_pose", 7, target_pose, "target position and orientation quaternion", "m, 1"),
        ObservationBlock("actions", ARM_JOINTS, last_action, "the previous step's actions", "1"),
    )
    rewards = (
        RewardTerm("position_tracking", position_tracking, weight="position_weight"),
        RewardTerm("position_tracking_fine", position_tracking_fine, weight="position_fine_weight"),
        RewardTerm("orientation_tracking", orientation_tracking, weight="orientation_weight"),
        RewardTerm("action_rate_l2", legged.action_rate_l2, weight="action_rate_weight"),
        RewardTerm("joint_vel_l2", joint_vel_l2, weight="joint_vel_weight"),
    )
    metrics = (EpisodeMetric("position_error", position_error, "mean", "m", "the hand's distance to the target"),)
    train_config = PpoConfig(
        num_envs=256,
        num_steps_per_env=24,
        # 4 M env-steps, the budget: 651 iterations of 256 worlds x 24 steps.
        max_iterations=651,
        actor_hidden_dims=(64, 64),
        critic_hidden_dims=(64, 64),
    )
    """PPO settings of ``steel-envs train`` (Isaac Lab's Reach-Franka PPO: (64, 64) networks, 24 steps per env)."""
    benchmark = scripted_success("manipulation", "PandaReach-v0")

    def goal_positions(self) -> np.ndarray:
        """Each world's target position, (num_envs, 1, 3) [m]."""
        return self.term_state.goals.numpy()[:, None, :3]

    def _setup_task(self) -> None:
        s, n, m = PandaReachState(), self.num_envs, self.model
        s.body_world_start, s.coord_world_start = m.body_world_start, m.joint_coord_world_start
        s.dof_world_start = m.joint_dof_world_start
        s.body_q, s.joint_q, s.joint_qd = self.state_0.body_q, self.state_0.joint_q, self.state_0.joint_qd
        s.home = wp.array(PANDA.home, dtype=wp.float32)
        s.goals = wp.zeros(n, dtype=wp.transform)
        s.actions, s.last_actions = self.actions, wp.zeros((n, self.action_dim), dtype=wp.float32)
        s.success = wp.zeros(n, dtype=wp.bool)
        s.success_position = float(self.config.success_position)
        s.success_orientation = float(self.config.success_orientation)
        s.position_fine_std = float(self.config.position_fine_std)
        self.term_state = s
        self.task_info = {"success": to_torch(s.success)}
        self._resample_period = max(1, round(self.config.resample_time / self.control_dt))

    def _draw_targets(self, world_mask: wp.array) -> None:
        c = self.config
        low = wp.vec4(c.target_x[0], c.target_y[0], c.target_z[0], c.target_yaw[0])
        high = wp.vec4(c.target_x[1], c.target_y[1], c.target_z[1], c.target_yaw[1])
        self.launch_per_world(
            _draw_targets,
            inputs=[world_mask, self.episode_steps, self._resample_period, low, high],
            outputs=[self.rng_state, self.term_state.goals],
        )

    def _post_physics(self) -> None:
        self.launch_per_world(_update_success, inputs=[self.term_state])

    def _post_rewards(self) -> None:
        wp.copy(self.term_state.last_actions, self.actions)
        self._draw_targets(self._no_world)  # the worlds whose period is up (after this step's rewards)

    def _reset_task(self, world_mask: wp.array) -> None:
        self.launch_per_world(kernels.zero_world_rows, inputs=[world_mask], outputs=[self.term_state.last_actions])
        # success is left as the ended episode's last step set it: with same-step autoreset, info["success"] of that
        # step is read after this reset; the next step's physics sets it anew.
        self._draw_targets(world_mask)


PandaReachSingleEnv = register_task("steel_envs/PandaReach-v0", PandaReachEnv)


_MAX_STEP = 0.15
"""The scripted solver's largest joint target lead over the measured angle [rad]."""
_SCRIPTED_IK: dict[int, HandIK] = {}
"""The scripted solver's ``newton.ik`` problems on the CPU, by their count (one per world)."""


def _posture(target_pos, target_quat):
    """The posture (N, 7) [rad] the scripted solver's IK starts from: the home pose turned by joint 1 towards the
    target, joint 7 at the angle that gives a downward hand the target's yaw. For the hand pointing down its yaw about
    z (x-y-z Euler angles (pi, 0, psi)) is ``psi = pi/4 + q1 - q7`` (the MJCF's kinematics at q2 = q3 = q5 = 0), so
    joint 7 takes ``pi/4 + q1 - psi`` wrapped into (-pi, pi] and clipped to its range. ``target_quat``: (N, 4),
    (x, y, z, w)."""
    rest = np.tile(np.asarray(PANDA.home[:ARM_JOINTS], np.float64), (target_pos.shape[0], 1))
    q1 = np.arctan2(target_pos[:, 1], target_pos[:, 0])
    x, y, z, w = target_quat.T
    # the hand's x axis (the rotation matrix's first column) in the world's x-y plane
    psi = np.arctan2(2.0 * (x * y + w * z), 1.0 - 2.0 * (y * y + z * z))
    rest[:, 0] = q1
    rest[:, 6] = np.clip(
        np.remainder(math.pi / 4 + q1 - psi + math.pi, 2 * math.pi) - math.pi, ARM_LOWER[6], ARM_UPPER[6]
    )
    return rest


def inverse_kinematics(target_pos, target_quat, iterations: int = 24, damping: float = 0.05) -> np.ndarray:
    """Joint angles (N, 7) [rad] that put the hand at target poses: ``newton.ik``'s Levenberg-Marquardt
    (:class:`steel_envs.envs.panda.HandIK`, analytic Jacobian, the joint ranges as an objective) from the posture
    that faces each target (:func:`_posture`), so that the arm's redundant DOF stays near that posture.

    Args:
        target_pos: (N, 3) hand positions [m], robot base frame.
        target_quat: (N, 4) hand orientations, (x, y, z, w).
        iterations: LM iterations.
        damping: LM's initial damping.
    """
    target_pos, target_quat = np.asarray(target_pos, np.float64), np.asarray(target_quat, np.float64)
    n = target_pos.shape[0]
    ik = _SCRIPTED_IK.get(n)
    if ik is None:
        ik = _SCRIPTED_IK[n] = HandIK(n, "cpu", damping, iterations)
    rest = _posture(target_pos, target_quat)
    q = ik.q.numpy()  # CPU arrays: views of the solver's memory
    q[:, :ARM_JOINTS], q[:, ARM_JOINTS:] = rest, 0.0
    ik.positions.assign(wp.array(target_pos.astype(np.float32), dtype=wp.vec3, device="cpu"))
    ik.rotations.assign(wp.array(target_quat.astype(np.float32), dtype=wp.vec4, device="cpu"))
    ik.solve()
    return np.clip(ik.q.numpy()[:, :ARM_JOINTS].astype(np.float64), ARM_LOWER, ARM_UPPER)


def scripted_policy(obs):
    """A scripted solver of PandaReach-v0: each step, the joint targets of the hand at the target pose by
    ``newton.ik`` (:func:`inverse_kinematics`, from the posture facing the target), at most 0.15 rad ahead of each
    measured angle, as the actions of those targets (:func:`steel_envs.envs.panda.target_to_action`).

    Usable as ``steel-envs evaluate steel_envs/PandaReach-v0 --policy steel_envs.tasks.panda_reach:scripted_policy``.

    Args:
        obs: Observations (N, 32) float32 in :class:`PandaReachEnv`'s layout, on any device.

    Returns:
        Actions (N, 7) float32 in [-1, 1], on ``obs``'s device.
    """
    import torch

    o = obs.detach().cpu().numpy().astype(np.float64)
    q = o[:, :ARM_JOINTS] + np.asarray(PANDA.home[:ARM_JOINTS], np.float64)
    q_ik = inverse_kinematics(o[:, 18:21], o[:, 21:25])
    # At most 0.15 rad a step (4.5 rad/s) ahead of the arm: the hand moves on a short path instead of the stiff
    # drives swinging it through the ground between distant poses.
    q_cmd = q + np.clip(q_ik - q, -_MAX_STEP, _MAX_STEP)
    return torch.from_numpy(target_to_action(q_cmd)).to(torch.float32).to(obs.device)
