"""Quadruped scene: ``quadruped.urdf`` (an ANYmal-like 30.7 kg robot) from the newton wheel on a ground plane,
joint position targets tracked by SolverSteel's PD drives.

World layout (newton 1.8.0): 13 bodies (base first, then per leg HAA, THIGH, SHANK in the order LF, RF, LH,
RH), a free root joint and 12 revolute DOFs (:data:`JOINTS`); 19 coordinates, 18 DOFs. z is up.
"""

from __future__ import annotations

from dataclasses import dataclass

import newton
import newton.examples
import numpy as np
import warp as wp

from steel_envs import kernels
from steel_envs.ranges import at_least, declare, positive
from steel_envs.solver_options import SteelSolverOptions
from steel_envs.spec import InitialStateSpec, TaskConfig
from steel_envs.vector_env import SteelVectorEnv

__all__ = ["DEFAULT_POSE", "FEET", "JOINTS", "QuadrupedScene", "QuadrupedSceneConfig"]

JOINTS = tuple(f"{leg}_{j}" for leg in ("LF", "RF", "LH", "RH") for j in ("HAA", "HFE", "KFE"))
"""The 12 leg joints in DOF (and action) order."""
DEFAULT_POSE = np.array([0.2, 0.4, -0.6, -0.2, -0.4, 0.6, -0.2, 0.4, -0.6, 0.2, -0.4, 0.6], np.float32)
"""Standing joint angles [rad] (newton's basic_urdf example); the action is an offset from them."""
FEET = (3, 6, 9, 12)
"""World-local body indices of the shanks, which carry the feet."""
BASE = 0
ROOT_DOFS = 6
ROOT_COORDS = 7
LIMIT_RANGE = 1.0
"""The URDF declares no limits; the scene limits every joint to DEFAULT_POSE +- this [rad]."""


@dataclass(kw_only=True)
class QuadrupedSceneConfig(TaskConfig):
    """Scene fields of the quadruped: drives, actuation and initial state."""

    action_scale: float = 0.5
    """Joint target offset at action 1 [rad]."""
    stiffness: float = 80.0
    """PD drive stiffness ``joint_target_ke`` [N m/rad]."""
    damping: float = 2.0
    """PD drive damping ``joint_target_kd`` [N m s/rad]."""
    effort_limit: float = 80.0
    """Drive torque limit [N m] (the URDF's), enforced exactly by ``drive_mode="rows"``."""
    initial_height: float = 0.62
    """Initial base height [m]."""
    joint_noise: float = 0.1
    """U(-s, s) noise on the initial joint angles [rad]."""

    field_ranges = declare(
        action_scale=positive("the joint target offset at action 1 [rad]; a negative one reverses the actions"),
        stiffness=positive("a PD gain [N m/rad]; 0 leaves the legs limp"),
        damping=at_least(0.0, "a PD gain [N m s/rad]; a negative one feeds energy in"),
        effort_limit=positive("a torque bound [N m]"),
        initial_height=positive("a height above the ground [m]"),
        joint_noise=at_least(0.0, "a noise half-width [rad]"),
    )


class QuadrupedScene(SteelVectorEnv):
    """Quadruped scene on SolverSteel: 12 PD-driven joints; tasks add observations, rewards and terminations.

    Physics: dt 0.005 s, decimation 4 (control dt 0.02 s, 50 Hz). Action: 12 values in [-1, 1], joint position
    targets ``DEFAULT_POSE + action_scale * action`` [rad] tracked by Steel's PD drives.

    Joint limits, all enforced by the solver: position limits ``DEFAULT_POSE +- LIMIT_RANGE`` (limit rows, created
    within 0.25 rad of a limit); the URDF's effort limit (``effort_limit``, 80 N m) by the drive rows, whose impulse
    is clamped at ``effort_limit * dt``; the URDF's velocity limit of 20 rad/s by the velocity clamp fused into the
    drive rows (``enable_joint_velocity_limits``). Measured under random, bang-bang and saturated targets (newton
    1.8.0, CPU, 32 worlds x 200 steps): at most 0.011 rad past a position limit, drive effort at most the limit,
    speeds at most 20.02 rad/s.
    """

    min_worlds_per_shard = 4
    # Contact watermark (newton 1.8.0, CPU): 16 per world under doctor's random, bang-bang and zero actions (32
    # worlds x 200 steps), but 33.4 per world with every world folded on the ground under saturated targets (the
    # adversaries' saturate+ / saturate-, 8 worlds; 267 in all). The buffer is shared: one step past it flags
    # every world's constraint_overflow, so 32 ended all 8 worlds at step 23. 48 keeps 1.4x over the folded mark;
    # Newton's estimate from the shape pairs, 65 per world, would cost more (the deterministic order sorts every
    # slot each step): 64 worlds, random actions, runs alternated, 48 ran at 0.96x the env-steps/s of 32.
    rigid_contacts_per_world = 48
    # min_worlds_per_shard: on a 2-core CPU (random actions) two processes (``ShardedVectorEnv``) step 1.3x as many
    # env-steps/s as one with 4 worlds each, 1.8x with 16 each, 1.9x with 64 each.

    config_cls = QuadrupedSceneConfig
    config: QuadrupedSceneConfig
    physics_dt = 0.005
    decimation = 4
    enable_collisions = True
    add_ground_plane = True
    action_dim = len(JOINTS)
    camera_tracked_body = BASE
    camera_eye = (1.5, -2.5, 1.2)
    camera_target = (0.0, 0.0, 0.4)
    solver_defaults = SteelSolverOptions(
        # The options page: drive_mode="rows" "when drive torques must respect the effort limit exactly
        # (torque-limited robots, sim-to-real)"; a legged robot is one. Its 12 drive rows count against the
        # articulation capacity.
        drive_mode="rows",
        enable_joint_limits=True,
        # The URDF's 20 rad/s velocity limit of every joint, enforced by a clamp fused into the drive rows
        # (fuse_joint_velocity_limits, on by default); without it bang-bang targets drive knees to 35 rad/s.
        enable_joint_velocity_limits=True,
        # The options page: keep the gap above 2 * max|qd| * dt = 2 * 20 rad/s * 0.005 s = 0.2 rad, which the
        # velocity limit bounds.
        joint_limit_activation_gap=0.25,
        # Measured by steel-envs doctor (row watermarks; newton 1.8.0, CPU, 32 worlds x 200 steps of random,
        # bang-bang and zero actions): up to 14 dense rows (12 drives, limits) and 85 propagation rows (the
        # contacts of feet and fallen bodies) per world; these keep 2.3x headroom. Sized from the marks, the step
        # runs 1.25x as fast as with the defaults (256 and 768 rows), whose capacity the propagation kernels sweep.
        articulation_constraint_max=32,
        propagation_constraint_max=192,
        # Contacts as propagation rows (the articulated-body response of the touched bodies) and a Baumgarte
        # factor of 0.5 (the options page: "up to 0.5 for light bodies pressed into the ground by heavy ones"). With
        # the default dense rows and 0.2, a shank's tip sliding on the ground with friction 1 sank ~2 mm per
        # substep (the friction rows' response drives the tip down faster than the normal row lifts it; with
        # friction off it never went past 4 mm): doctor's bang-bang actions (32 worlds x 200 steps) reached 8.2 mm,
        # and 8-36 % of the reference gaits' episodes ended by the 5 mm penetration bound. Measured (newton 1.8.0,
        # CPU; the deepest contact of 32 worlds x 1000 steps of reference:2's gait, then doctor's 32 x 200):
        # default 8.7 mm (28 % of worlds past 5 mm), 8.2 mm; 24 iterations 8.3 mm; baumgarte 0.5 5.2 mm, 6.1 mm;
        # propagation 6.2 mm (bang-bang); friction scaled by 0.8 4.3 mm, 2.4 mm; these 1.3 mm, 3.1 mm. With the
        # capacities above the step costs 1.08x the default's (64 worlds, random actions, one process, runs
        # alternated: 1,860-1,960 against 1,990-2,120 env-steps/s).
        articulated_contact_response="propagation",
        baumgarte=0.5,
    )

    def build_world(self, builder: newton.ModelBuilder) -> None:
        """Load quadruped.urdf (floating base, no self-collisions), add PD drives and limits around the pose."""
        builder.add_urdf(newton.examples.get_asset("quadruped.urdf"), floating=True, enable_self_collisions=False)
        c = self.config
        for i in range(ROOT_DOFS, ROOT_DOFS + len(JOINTS)):
            pose = float(DEFAULT_POSE[i - ROOT_DOFS])
            builder.joint_target_mode[i] = int(newton.JointTargetMode.POSITION)
            builder.joint_target_ke[i] = c.stiffness
            builder.joint_target_kd[i] = c.damping
            builder.joint_effort_limit[i] = c.effort_limit
            builder.joint_armature[i] = 0.01
            builder.joint_limit_lower[i] = pose - LIMIT_RANGE
            builder.joint_limit_upper[i] = pose + LIMIT_RANGE

    def initial_state(self) -> InitialStateSpec:
        """Base at ``initial_height`` upright, joints at the standing pose +- ``joint_noise``, at rest."""
        q = np.zeros(ROOT_COORDS + len(JOINTS))
        q[2], q[6] = self.config.initial_height, 1.0
        q[ROOT_COORDS:] = DEFAULT_POSE
        q_noise = np.zeros_like(q)
        q_noise[ROOT_COORDS:] = self.config.joint_noise
        dofs = ROOT_DOFS + len(JOINTS)
        return InitialStateSpec(default_q=q, default_qd=np.zeros(dofs), q_noise=q_noise, qd_noise=np.zeros(dofs))

    def _setup_scene(self) -> None:
        self._default_pose = wp.array(DEFAULT_POSE, dtype=wp.float32, device=self.wp_device)
        scale = np.full(len(JOINTS), self.config.action_scale, np.float32)
        self._action_scale = wp.array(scale, dtype=wp.float32, device=self.wp_device)

    def _apply_actions(self) -> None:
        kernels.apply_joint_position_targets(self, self._default_pose, self._action_scale, ROOT_COORDS)
