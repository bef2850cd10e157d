"""The Franka Emika Panda scene: the vendored arm (:data:`steel_envs.assets.PANDA`) welded to the world at the origin
above a ground plane, joint position targets (from the actions directly, or from a hand pose goal through
``newton.ik``) tracked by SolverSteel's PD drive rows with the MJCF's gains.

World layout (newton 1.8.0): 11 bodies (link0 .. link7, hand, left_finger, right_finger), a fixed root joint, 7
hinges and 2 finger slides in ``steel_envs.assets.PANDA.joints`` order (9 coordinates, 9 DOFs; the right finger
mimics the left). z is up.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import newton
import numpy as np
import warp as wp

from steel_envs.assets import PANDA, exclude_link_pairs, link_shapes
from steel_envs.ranges import at_least, between, declare, positive
from steel_envs.solver_options import SteelSolverOptions
from steel_envs.spec import InitialStateSpec, ObservationBlock, TaskConfig
from steel_envs.vector_env import SteelVectorEnv

__all__ = [
    "ACTION_MODES",
    "ARM_JOINTS",
    "ARM_LOWER",
    "ARM_UPPER",
    "GOAL_LEAD",
    "HAND_BODY",
    "HandIK",
    "PandaScene",
    "PandaSceneConfig",
    "action_to_target",
    "home_start",
    "rotation_angle",
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
_HAND = wp.constant(HAND_BODY)


ACTION_MODES = ("joint_pos", "ee_delta_pose")
"""``joint_pos``: one joint position target per arm joint; ``ee_delta_pose``: a change of the hand's pose, turned
into joint targets by inverse kinematics."""


GOAL_LEAD = (0.1, 0.5)
"""``ee_delta_pose``: the farthest [m] and the largest angle [rad] the hand's goal leads the measured hand. The goal
accumulates the actions' moves, so zero actions hold it against the drives' sag under gravity; beyond the bound a move
is not added (a goal pulled back towards the hand followed its sag: the hand sank 5 cm while moving 0.12 m along x)."""


@dataclass(kw_only=True)
class PandaSceneConfig(TaskConfig):
    """Scene fields of the Panda: the initial-state distribution and the action mode."""

    joint_noise: float = 0.2
    """U(-s, s) noise on the arm's initial joint angles around the home pose [rad] (Isaac Lab's Reach-Franka scales
    the home angles by U(0.5, 1.5)); 0.2 rad keeps every joint in its range and, over 512 starts, the hand 0.44 m or
    more above the ground."""
    action_mode: str = "joint_pos"
    """One of :data:`ACTION_MODES`."""
    ee_delta_position: float = 0.05
    """``ee_delta_pose``: the hand's largest commanded move per control step [m] (actions 0-2 scale it)."""
    ee_delta_rotation: float = 0.2
    """``ee_delta_pose``: the hand's largest commanded turn per control step [rad] (actions 3-5 scale it)."""
    ik_damping: float = 0.1
    """``ee_delta_pose``: the initial damping of the Levenberg-Marquardt IK steps [1] (``newton.ik.IKSolver``'s
    ``lambda_initial``)."""
    ik_iterations: int = 3
    """``ee_delta_pose``: Levenberg-Marquardt iterations per control step."""

    field_ranges = declare(
        joint_noise=between(0.0, 0.5, "a noise half-width [rad]; beyond it a start can leave the joint ranges"),
        ee_delta_position=positive("a distance per control step [m]"),
        ee_delta_rotation=positive("an angle per control step [rad]"),
        ik_damping=positive("a damping factor"),
        ik_iterations=at_least(1, "an iteration count", integer=True),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.action_mode not in ACTION_MODES:
            raise ValueError(f"action_mode: expected one of {ACTION_MODES}, got {self.action_mode!r}")


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


@wp.func
def rotation_angle(a: wp.quat, b: wp.quat) -> float:
    """Rotation angle from ``b`` to ``a`` [rad], in [0, pi]: 2 acos |(a b^-1)_w| (Isaac Lab's
    ``quat_error_magnitude``)."""
    d = a * wp.quat_inverse(b)
    return 2.0 * wp.acos(wp.min(wp.abs(d[3]), 1.0))


@wp.kernel(enable_backward=False)
def _hand_goals(
    actions: wp.array2d[wp.float32],
    episode_steps: wp.array[wp.int32],
    body_q: wp.array[wp.transform],
    body_world_start: wp.array[wp.int32],
    joint_q: wp.array[wp.float32],
    coord_world_start: wp.array[wp.int32],
    step_position: wp.float32,
    step_rotation: wp.float32,
    lead_position: wp.float32,
    lead_rotation: wp.float32,
    goal_positions: wp.array[wp.vec3],
    goal_rotations: wp.array[wp.vec4],
    ik_q: wp.array2d[wp.float32],
):
    """The hand's goal from ``ee_delta_pose`` actions: the last goal (the measured hand pose at an episode's first
    step) moved by a[0:3] step_position [m] and turned about the world axis a[3:6] by |a[3:6]| step_rotation [rad],
    unless that takes it farther than ``lead_position`` / ``lead_rotation`` from the measured hand (a goal the arm
    cannot follow does not run away). The IK starts from the measured joint angles."""
    w = wp.tid()
    hand = body_q[body_world_start[w] + _HAND]
    p_hand, q_hand = wp.transform_get_translation(hand), wp.transform_get_rotation(hand)
    p, g = p_hand, q_hand
    if episode_steps[w] > 0:
        p = goal_positions[w]
        v = goal_rotations[w]
        g = wp.quat(v[0], v[1], v[2], v[3])
    # A move that takes the goal farther than the lead bound from the hand is not added: the goal waits for the
    # hand (pulling it back towards the hand would drag it along the hand's sag).
    moved = p + wp.vec3(actions[w, 0], actions[w, 1], actions[w, 2]) * step_position
    if wp.length(moved - p_hand) <= wp.max(lead_position, wp.length(p - p_hand)):
        p = moved
    turn = wp.vec3(actions[w, 3], actions[w, 4], actions[w, 5]) * step_rotation
    angle = wp.length(turn)
    if angle > 0.0:
        turned = wp.quat_from_axis_angle(turn / angle, angle) * g
        if rotation_angle(turned, q_hand) <= wp.max(lead_rotation, rotation_angle(g, q_hand)):
            g = turned
    goal_positions[w] = p
    goal_rotations[w] = wp.vec4(g[0], g[1], g[2], g[3])
    for j in range(ik_q.shape[1]):
        ik_q[w, j] = joint_q[coord_world_start[w] + j]


@wp.kernel(enable_backward=False)
def _ik_joint_targets(
    ik_q: wp.array2d[wp.float32],
    lower: wp.array[wp.float32],
    upper: wp.array[wp.float32],
    coord_world_start: wp.array[wp.int32],
    joint_target_q: wp.array[wp.float32],
):
    """Arm joint j's target: the IK's solution, within the joint's range [rad]."""
    w, j = wp.tid()
    joint_target_q[coord_world_start[w] + j] = wp.clamp(ik_q[w, j], lower[j], upper[j])


class HandIK:
    """``newton.ik`` for the ``ee_delta_pose`` mode and the PandaReach scripted solver: one Levenberg-Marquardt
    problem per world on a one-arm model (``newton.ik.IKSolver`` solves problems of one articulation; it only launches
    kernels, so it runs inside the captured step): the hand's position and orientation goals, the joint ranges, the
    fingers fixed."""

    def __init__(self, n: int, device, damping: float, iterations: int) -> None:
        """Args: ``n`` problems (worlds), the Warp ``device``, LM's initial ``damping``, ``iterations`` per solve."""
        import newton.ik as ik

        builder = newton.ModelBuilder()
        PANDA.add_to(builder)
        arm = builder.finalize(device=device)
        self.positions = wp.zeros(n, dtype=wp.vec3, device=device)
        self.rotations = wp.zeros(n, dtype=wp.vec4, device=device)
        self.q = wp.zeros((n, arm.joint_coord_count), dtype=wp.float32, device=device)
        mask = np.zeros(arm.joint_dof_count, bool)
        mask[:ARM_JOINTS] = True
        objectives = [
            ik.IKObjectivePosition(HAND_BODY, wp.vec3(0.0, 0.0, 0.0), self.positions),
            ik.IKObjectiveRotation(HAND_BODY, wp.quat_identity(), self.rotations),
            ik.IKObjectiveJointLimit(arm.joint_limit_lower, arm.joint_limit_upper),
        ]
        self.arm = arm  # the solver keeps references into it
        self.solver = ik.IKSolver(
            arm,
            n,
            objectives,
            optimizer="lm",
            jacobian_mode="analytic",
            lambda_initial=float(damping),
            joint_dof_mask=wp.array(mask, dtype=wp.bool, device=device),
        )
        self.iterations = int(iterations)

    def solve(self) -> None:
        """Overwrite :attr:`q` (num_envs, 9) with the joint angles [rad] that put the hand at the goals."""
        self.solver.step(self.q, self.q, iterations=self.iterations)


def home_start(joint_noise: float) -> InitialStateSpec:
    """The Panda's initial state: its home pose (:data:`steel_envs.assets.PANDA`), U(-joint_noise, joint_noise) [rad]
    on each arm joint, the fingers at home, at rest."""
    noise = np.zeros(len(PANDA.joints))
    noise[:ARM_JOINTS] = joint_noise
    return InitialStateSpec(
        default_q=PANDA.home.astype(np.float64),
        default_qd=np.zeros(len(PANDA.joints)),
        q_noise=noise,
        qd_noise=np.zeros(len(PANDA.joints)),
    )


def action_to_target(actions: np.ndarray) -> np.ndarray:
    """The joint targets [rad] of actions (..., 7) in [-1, 1], as the scene sets them (numpy, for scripts)."""
    home, lower, upper = PANDA.home[:ARM_JOINTS], ARM_LOWER, ARM_UPPER
    return home + np.where(actions >= 0.0, actions * (upper - home), actions * (home - lower))


def target_to_action(targets: np.ndarray) -> np.ndarray:
    """The actions (..., 7) in [-1, 1] whose joint targets are ``targets`` [rad] (clipped to the joint ranges)."""
    home, lower, upper = PANDA.home[:ARM_JOINTS], ARM_LOWER, ARM_UPPER
    t = np.clip(targets, lower, upper)
    return np.where(t >= home, (t - home) / (upper - home), (t - home) / (home - lower))


_NO_COLLISIONS = (
    ("link5", "hand"),
    ("link5", "link7"),
    ("link6", "hand"),
    *((finger, f"link{i}") for finger in ("left_finger", "right_finger") for i in range(1, 8)),
    ("left_finger", "right_finger"),
)
"""Link pairs that do not collide with each other: the wrist's, whose fitted boxes come within the contact gap (2 cm)
of each other at the home pose (11 speculative contacts per world, always) where the links' meshes are apart, and
the fingers with the arm's links and with each other (their slides, held by the tendon's 50 N/m per finger, went 6.7
mm past their range under an arm folded onto them; the hand's box still meets the arm). Every other pair of links that
are not parent and child collides, so the arm cannot fold through itself."""


class PandaScene(SteelVectorEnv):
    """A vendored Franka Emika Panda (:data:`steel_envs.assets.PANDA`) on SolverSteel; tasks add the observations,
    rewards and terminations.

    Physics: dt 1/120 s, decimation 4 (control dt 1/30 s, Isaac Lab's Reach-Franka: sim dt 1/60 at decimation 2).
    Action: one value in [-1, 1] per arm joint (joint1 .. joint7), its joint position target mapped piecewise
    linearly onto the joint's range: ``home + a (upper - home)`` for a >= 0, ``home + a (home - lower)`` below (a = 0
    holds the home pose, +-1 the limits; :func:`action_to_target`). Isaac Lab's Reach-Franka scales unclipped actions
    by 0.5 rad around home; with actions clipped to [-1, 1] that reaches 0.5 rad of each joint's range, and a
    scripted solver reached 3 % of its targets (hand yaws need joint 7's full range).

    ``action_mode="ee_delta_pose"`` (Isaac Lab's ``Reach-Franka-IK-Rel``): six values in [-1, 1], a move of the
    hand's goal by a[0:3] ``ee_delta_position`` [m] and a turn about the world axis a[3:6] by |a[3:6]|
    ``ee_delta_rotation`` [rad]. The goal starts at the measured hand pose and accumulates the moves (zero actions
    hold it), at most :data:`GOAL_LEAD` ahead of the hand; each step ``newton.ik``'s Levenberg-Marquardt solver
    (``ik_iterations`` from the measured angles, damping ``ik_damping``, the joint ranges as an objective) gives the
    joint targets. It runs inside the captured step: ``newton.ik.IKSolver.step`` only launches kernels (1.8 ms for
    64 worlds x 3 iterations on this CPU, beside about 18 ms for the physics).

    The targets are tracked by the PD drive rows with the MJCF's gains (panda.xml:254-263), clamped at its effort
    limits; the fingers hold their home opening (0.04 m). Joint ranges, speeds (Franka's datasheet) and efforts are
    enforced by the solver. The arm's base link rests on the ground plane without colliding with it; the other links
    collide with it and with each other (but for the pairs of :data:`_NO_COLLISIONS`) through the boxes and
    capsules fitted to their meshes (``franka_panda/PROVENANCE.md``).

    Start: the MJCF's home pose (hand above the table, pointing down) +- ``joint_noise`` on the arm joints, at rest.
    """

    config_cls = PandaSceneConfig
    config: PandaSceneConfig
    physics_dt = 1.0 / 120.0
    decimation = 4
    enable_collisions = True
    add_ground_plane = True
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
        # bang-bang actions, with 32 (and the links colliding with each other) 5.4 mm; 40 keep both inside doctor's
        # bounds (3.8 mm, 0.1 %, 16 worlds x 300 steps) at 1.43x the time per step of 12 (64 worlds, CPU).
        iterations=40,
        drive_mode="rows",
        enable_joint_limits=True,
        enable_joint_velocity_limits=True,
        # The options page: keep the gap above 2 * max|qd| * dt = 2 * 2.61 rad/s * (1/120) s = 0.044 rad.
        joint_limit_activation_gap=0.1,
        # Rows: up to 142 per world in doctor (16 worlds x 300 steps, bang-bang: 9 drive rows, the finger mimic,
        # limit and speed-limit rows, the links' contacts with the ground and with each other; 272 while the two
        # fingers collided with each other); 256 keeps 1.8x headroom.
        articulation_constraint_max=256,
    )

    def build_world(self, builder: newton.ModelBuilder) -> None:
        """Add the arm (:meth:`steel_envs.assets.ArmModel.add_to`) with collisions between its links, but for the
        pairs of :data:`_NO_COLLISIONS`, and take link0's box out of collisions: it is welded to the world where it
        stands on the ground (4 contacts per world, always, that move nothing)."""
        shapes, bodies = builder.shape_count, builder.body_count
        builder.rigid_gap = self.contact_gap
        PANDA.add_to(builder, enable_self_collisions=True)
        links = link_shapes(builder, bodies, shapes)
        for s in links["link0"]:
            builder.shape_flags[s] &= ~int(newton.ShapeFlags.COLLIDE_SHAPES)
        exclude_link_pairs(builder, links, _NO_COLLISIONS)

    def build_shared(self, builder: newton.ModelBuilder) -> None:
        """Narrow the ground plane's contact gap to ``contact_gap``, as the arm's."""
        for shape in range(builder.shape_count):
            if builder.shape_body[shape] == -1:
                builder.shape_gap[shape] = self.contact_gap

    def initial_state(self) -> InitialStateSpec:
        """The home pose, ``joint_noise`` on the arm joints, at rest."""
        return home_start(self.config.joint_noise)

    def observation_blocks(self) -> tuple[ObservationBlock, ...]:
        """The task's :attr:`observations`, its previous actions' block (``actions``) as wide as the action mode's
        actions (7 joint targets or 6 hand moves, and whatever the task adds)."""
        blocks = super().observation_blocks()
        return tuple(dataclasses.replace(b, size=self.action_dim) if b.name == "actions" else b for b in blocks)

    @property
    def action_dim(self) -> int:
        """7 joint targets (``joint_pos``) or 6 hand pose changes (``ee_delta_pose``)."""
        return 6 if self.config.action_mode == "ee_delta_pose" else ARM_JOINTS

    def _setup_scene(self) -> None:
        self._home = wp.array(PANDA.home[:ARM_JOINTS], dtype=wp.float32, device=self.wp_device)
        self._lower = wp.array(ARM_LOWER, dtype=wp.float32, device=self.wp_device)
        self._upper = wp.array(ARM_UPPER, dtype=wp.float32, device=self.wp_device)
        c = self.config
        ik = c.action_mode == "ee_delta_pose"
        self._ik = HandIK(self.num_envs, self.wp_device, c.ik_damping, c.ik_iterations) if ik else None

    def _apply_actions(self) -> None:
        if self._ik is not None:
            self._apply_hand_actions()
            return
        wp.launch(
            _joint_targets,
            (self.num_envs, ARM_JOINTS),
            inputs=[self.actions, self._home, self._lower, self._upper, self.model.joint_coord_world_start],
            outputs=[self.control.joint_target_q],
            device=self.wp_device,
        )

    def _apply_hand_actions(self) -> None:
        ik, c, m = self._ik, self.config, self.model
        self.launch_per_world(
            _hand_goals,
            inputs=[
                self.actions,
                self.episode_steps,
                self.state_0.body_q,
                m.body_world_start,
                self.state_0.joint_q,
                m.joint_coord_world_start,
                float(c.ee_delta_position),
                float(c.ee_delta_rotation),
                GOAL_LEAD[0],
                GOAL_LEAD[1],
            ],
            outputs=[ik.positions, ik.rotations, ik.q],  # the goals are read and written
        )
        ik.solve()
        wp.launch(
            _ik_joint_targets,
            (self.num_envs, ARM_JOINTS),
            inputs=[ik.q, self._lower, self._upper, m.joint_coord_world_start],
            outputs=[self.control.joint_target_q],
            device=self.wp_device,
        )
