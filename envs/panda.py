"""The Franka Emika Panda scene: the vendored arm (:data:`steel_envs.assets.PANDA`) welded to the world at the origin
above a ground plane, joint position targets around its home pose tracked by SolverSteel's PD drive rows with the
MJCF's gains.

World layout (newton 1.8.0): 11 bodies (link0 .. link7, hand, left_finger, right_finger), a fixed root joint, 7
hinges and 2 finger slides in ``steel_envs.assets.PANDA.joints`` order (9 coordinates, 9 DOFs; the right finger
mimics the left). z is up.
"""

from __future__ import annotations

from dataclasses import dataclass

import newton
import numpy as np
import warp as wp

from steel_envs.assets import PANDA
from steel_envs.ranges import between, declare
from steel_envs.solver_options import SteelSolverOptions
from steel_envs.spec import InitialStateSpec, TaskConfig
from steel_envs.vector_env import SteelVectorEnv

__all__ = [
    "ARM_JOINTS",
    "ARM_LOWER",
    "ARM_UPPER",
    "HAND_BODY",
    "PandaScene",
    "PandaSceneConfig",
    "action_to_target",
    "target_to_action",
]

ARM_JOINTS = 7
"""The actuated hinges (joint1 .. joint7); the fingers hold their home opening."""
ARM_LOWER = np.array([-2.8973, -1.7628, -2.8973, -3.0718, -2.8973, -0.0175, -2.8973], np.float32)
"""The arm joints' lower limits [rad] (panda.xml:9, 133, 148, 167: the class default and the joints' ranges)."""
ARM_UPPER = np.array([2.8973, 1.7628, 2.8973, -0.0698, 2.8973, 3.7525, 2.8973], np.float32)
"""The arm joints' upper limits [rad]."""
HAND_BODY = 8
"""World-local index of the hand body (the end effector's frame)."""


@dataclass(kw_only=True)
class PandaSceneConfig(TaskConfig):
    """Scene fields of the Panda: the initial-state distribution."""

    joint_noise: float = 0.0
    """U(-s, s) noise on the arm's initial joint angles around the home pose [rad]."""

    field_ranges = declare(
        joint_noise=between(0.0, 0.5, "a noise half-width [rad]; beyond it a start can leave the joint ranges"),
    )


@wp.kernel(enable_backward=False)
def _joint_targets(
    actions: wp.array2d[wp.float32],
    home: wp.array[wp.float32],
    lower: wp.array[wp.float32],
    upper: wp.array[wp.float32],
    coord_world_start: wp.array[wp.int32],
    joint_target_q: wp.array[wp.float32],
):
    """Arm joint j's target: home + a (upper - home) for a >= 0, home + a (home - lower) below [rad]."""
    w, j = wp.tid()
    a = actions[w, j]
    span = wp.where(a >= 0.0, upper[j] - home[j], home[j] - lower[j])
    joint_target_q[coord_world_start[w] + j] = home[j] + a * span


def action_to_target(actions: np.ndarray) -> np.ndarray:
    """The joint targets [rad] of actions (..., 7) in [-1, 1], as the scene sets them (numpy, for scripts)."""
    home, lower, upper = PANDA.home[:ARM_JOINTS], ARM_LOWER, ARM_UPPER
    return home + np.where(actions >= 0.0, actions * (upper - home), actions * (home - lower))


def target_to_action(targets: np.ndarray) -> np.ndarray:
    """The actions (..., 7) in [-1, 1] whose joint targets are ``targets`` [rad] (clipped to the joint ranges)."""
    home, lower, upper = PANDA.home[:ARM_JOINTS], ARM_LOWER, ARM_UPPER
    t = np.clip(targets, lower, upper)
    return np.where(t >= home, (t - home) / (upper - home), (t - home) / (home - lower))


class PandaScene(SteelVectorEnv):
    """A vendored Franka Emika Panda (:data:`steel_envs.assets.PANDA`) on SolverSteel; tasks add the observations,
    rewards and terminations.

    Physics: dt 1/120 s, decimation 4 (control dt 1/30 s, Isaac Lab's Reach-Franka: sim dt 1/60 at decimation 2).
    Action: one value in [-1, 1] per arm joint (joint1 .. joint7), its joint position target mapped piecewise
    linearly onto the joint's range: ``home + a (upper - home)`` for a >= 0, ``home + a (home - lower)`` below (a = 0
    holds the home pose, +-1 the limits; :func:`action_to_target`). Isaac Lab's Reach-Franka scales unclipped actions
    by 0.5 rad around home; with actions clipped to [-1, 1] that reaches 0.5 rad of each joint's range, and a
    scripted solver reached 3 % of its targets (hand yaws need joint 7's full range). The targets are tracked by the
    PD drive rows with the MJCF's gains (panda.xml:254-263), clamped at its effort limits; the fingers hold their home
    opening (0.04 m). Joint ranges, speeds (Franka's datasheet) and efforts are
    enforced by the solver. The arm's base link rests on the ground plane without colliding with it; the other links
    collide with it through the boxes and capsules fitted to their meshes (``franka_panda/PROVENANCE.md``), not with
    each other.

    Start: the MJCF's home pose (hand above the table, pointing down) +- ``joint_noise`` on the arm joints, at rest.
    """

    config_cls = PandaSceneConfig
    config: PandaSceneConfig
    physics_dt = 1.0 / 120.0
    decimation = 4
    enable_collisions = True
    add_ground_plane = True
    action_dim = ARM_JOINTS
    rigid_contacts_per_world = 64
    contact_gap = 0.02
    """Contact gap of the arm's shapes and the ground [m] (Newton's default 0.1): a hand reaching a target 0.15 m up
    keeps its fingers out of the rows. The gap must exceed the distance a shape closes in one physics step (the hand
    at 2 m/s: 1.7 cm); 0.05 measured the same penetration in ``doctor``."""
    camera_eye = (1.4, -1.1, 0.9)
    camera_target = (0.3, 0.0, 0.35)
    solver_defaults = SteelSolverOptions(
        # A hand the drives (87 N m) press into the ground is at the end of a 7-link chain: with 12 and 24 PGS
        # iterations the fingers sank 8.8 and 5.3 mm and joint1 ran 3.9 % and 0.5 % over its speed limit under
        # bang-bang actions; 32 keep both inside doctor's bounds (3.6 mm, 0.3 %, 16 worlds x 300 steps) at 35 %
        # more time per step than 12.
        iterations=32,
        drive_mode="rows",
        enable_joint_limits=True,
        enable_joint_velocity_limits=True,
        # The options page: keep the gap above 2 * max|qd| * dt = 2 * 2.61 rad/s * (1/120) s = 0.044 rad.
        joint_limit_activation_gap=0.1,
        # Rows: up to 137 per world in doctor (bang-bang: 9 drive rows, the finger mimic, limit and speed-limit rows,
        # the links' contacts with the ground); 256 keeps 1.9x headroom.
        articulation_constraint_max=256,
    )

    def build_world(self, builder: newton.ModelBuilder) -> None:
        """Add the arm (:meth:`steel_envs.assets.ArmModel.add_to`) and take link0's box out of collisions: it is
        welded to the world where it stands on the ground (4 contacts per world, always, that move nothing)."""
        shapes, link0 = builder.shape_count, builder.body_count  # link0 is the first body the arm adds
        builder.rigid_gap = self.contact_gap
        PANDA.add_to(builder)
        for s in range(shapes, builder.shape_count):
            if builder.shape_body[s] == link0:
                builder.shape_flags[s] &= ~int(newton.ShapeFlags.COLLIDE_SHAPES)

    def build_shared(self, builder: newton.ModelBuilder) -> None:
        """Narrow the ground plane's contact gap to ``contact_gap``, as the arm's."""
        for shape in range(builder.shape_count):
            if builder.shape_body[shape] == -1:
                builder.shape_gap[shape] = self.contact_gap

    def initial_state(self) -> InitialStateSpec:
        """The home pose, ``joint_noise`` on the arm joints, at rest."""
        noise = np.zeros(len(PANDA.joints))
        noise[:ARM_JOINTS] = self.config.joint_noise
        return InitialStateSpec(
            default_q=PANDA.home.astype(np.float64),
            default_qd=np.zeros(len(PANDA.joints)),
            q_noise=noise,
            qd_noise=np.zeros(len(PANDA.joints)),
        )

    def _setup_scene(self) -> None:
        self._home = wp.array(PANDA.home[:ARM_JOINTS], dtype=wp.float32, device=self.wp_device)
        self._lower = wp.array(ARM_LOWER, dtype=wp.float32, device=self.wp_device)
        self._upper = wp.array(ARM_UPPER, dtype=wp.float32, device=self.wp_device)

    def _apply_actions(self) -> None:
        wp.launch(
            _joint_targets,
            (self.num_envs, ARM_JOINTS),
            inputs=[self.actions, self._home, self._lower, self._upper, self.model.joint_coord_world_start],
            outputs=[self.control.joint_target_q],
            device=self.wp_device,
        )
