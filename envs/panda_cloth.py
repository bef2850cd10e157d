"""The Panda-and-cloth scene on SolverVBD: the vendored Franka Emika Panda (:data:`steel_envs.assets.PANDA`) as an
AVBD articulation beside a square cloth lying on the table, in one SolverVBD world.

World layout (newton 1.8.0): 11 bodies (link0 .. link7, hand, left_finger, right_finger; link0 welded to the world
at the origin), 7 hinges and 2 finger slides in ``PANDA.joints`` order (9 coordinates, 9 DOFs, each finger driven
on its own: SolverVBD has no mimic constraint), then ``(CLOTH_CELLS + 1)^2`` cloth particles row-major from the
cloth's (-x, -y) corner as built (particle ``j * (CLOTH_CELLS + 1) + i`` at column ``i``, row ``j``). The table is
the ground plane the arm stands on. z is up. SolverVBD owns the collision pipeline (its rigid-soft truncation needs
it), so the env runs none of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

import newton
import numpy as np
import warp as wp
from newton.solvers import SolverVBD
from steel_envs.envs.cloth import PARTICLE_RADIUS, add_towel, solver_with_own_pipeline
from steel_envs.envs.panda import _NO_COLLISIONS, ARM_JOINTS, ARM_LOWER, ARM_UPPER, home_start

from steel_envs.assets import PANDA, exclude_link_pairs, link_shapes
from steel_envs.ranges import between, declare
from steel_envs.solver_options import VBDSolverOptions
from steel_envs.spec import InitialStateSpec, TaskConfig
from steel_envs.vbd_env import VBDVectorEnv

__all__ = [
    "CLOTH_CELLS",
    "FINGER_OPEN",
    "LIMIT_DAMPING",
    "LIMIT_MARGIN",
    "LIMIT_STIFFNESS",
    "PandaClothScene",
    "PandaClothSceneConfig",
    "target_to_action",
]

CLOTH_CELLS = 8
"""Cells per side of the cloth grid; (CLOTH_CELLS + 1)^2 = 81 particles."""
FINGER_OPEN = 0.04
"""Each finger's slide target of an open gripper [m]; closed: 0."""
FINGER_STIFFNESS, FINGER_DAMPING = 2.0e4, 1.0e3
"""The fingers' drive gains [N/m, N s/m]. Isaac Lab's ``panda_hand`` gains (2000 N/m, 100 N s/m, as
PandaLiftCube-v0 runs them) pinch a cloth corner 9 mm apart under SolverVBD's compliant drives, and the corner crept
out of the pads while it was lifted (5 mm in 2 s, then fell); ten times stiffer, the pads close to 3.6 mm on it and
carry the whole cloth 0.33 m up."""
LIMIT_STIFFNESS, LIMIT_DAMPING = 1.0e5, 100.0
"""SolverVBD's joint-limit springs [N m/rad or N/m, N m s/rad or N s/m]: it enforces position limits as a spring. At
the importer's 1e4 and 10 an arm swung into joint4's upper limit by saturated actions went 0.030 rad past it; at
1e5 (and at 1e6: the compliant drives' conditioning caps it) joint6 0.021 rad, the arm pressed into the table."""
LIMIT_MARGIN = 0.03
"""The arm's targets stop this far inside each joint limit [rad]: with targets at the limits, saturated actions
press the arm into the table and the limit springs give up to 0.021 rad; 3 cm-rad inside they hold within the
limit tests' 0.02 rad."""
_CHECKED = "outside this range the scene's physics is unchecked"


@dataclass(kw_only=True)
class PandaClothSceneConfig(TaskConfig):
    """Scene fields: the arm's start and the cloth's size and mass."""

    joint_noise: float = 0.1
    """U(-s, s) noise on the arm's initial joint angles around the home pose [rad]."""
    cloth_size: float = 0.2
    """Side length of the square cloth [m]. Hung from a corner the cloth reaches its diagonal (0.28 m) down, so the
    arm (whose hand reaches about 0.45 m above the table in front of it) can lift it clear."""
    cloth_mass: float = 0.02
    """Total mass of the cloth [kg] (a 500 g/m^2 towel), spread evenly over the particles."""

    field_ranges = declare(
        joint_noise=between(0.0, 0.3, "a joint-angle bound [rad]; larger ones start the hand near the table"),
        cloth_size=between(0.1, 0.3, f"a side length [m]; {_CHECKED}"),
        cloth_mass=between(1e-3, 0.1, f"a mass [kg]; {_CHECKED}"),
    )


@wp.kernel(enable_backward=False)
def _lead_targets(
    actions: wp.array2d[wp.float32],
    home: wp.array[wp.float32],
    lower: wp.array[wp.float32],
    upper: wp.array[wp.float32],
    max_lead: wp.array[wp.float32],
    coord_world_start: wp.array[wp.int32],
    joint_q: wp.array[wp.float32],
    joint_target_q: wp.array[wp.float32],
):
    """Coordinate ``j``'s target: the commanded one, at most ``max_lead[j]`` from the measured coordinate. Arm joint
    ``j < 7`` is commanded ``home + a (upper - home)`` for a >= 0, ``home + a (home - lower)`` below [rad]; the
    fingers (``j`` 7, 8) :data:`FINGER_OPEN` for a gripper action >= 0, else 0 [m]."""
    w, j = wp.tid()
    if j < 7:
        a = actions[w, j]
        span = wp.where(a >= 0.0, upper[j] - home[j], home[j] - lower[j])
        command = home[j] + a * span
    else:
        command = wp.where(actions[w, 7] >= 0.0, float(FINGER_OPEN), 0.0)
    i = coord_world_start[w] + j
    q = joint_q[i]
    joint_target_q[i] = wp.clamp(command, q - max_lead[j], q + max_lead[j])


def target_to_action(targets: np.ndarray) -> np.ndarray:
    """The arm actions (..., 7) in [-1, 1] whose joint targets are ``targets`` [rad] (clipped to the narrowed ranges),
    as :class:`PandaClothScene` maps them (numpy, for scripts)."""
    home, lower, upper = PANDA.home[:ARM_JOINTS], ARM_LOWER + LIMIT_MARGIN, ARM_UPPER - LIMIT_MARGIN
    t = np.clip(targets, lower, upper)
    return np.where(t >= home, (t - home) / (upper - home), (t - home) / (home - lower))


class PandaClothScene(VBDVectorEnv):
    """The Franka Emika Panda as an AVBD articulation on SolverVBD beside a square cloth on the table; tasks add the
    observations, rewards and terminations.

    Physics: dt 1/240 s, decimation 8 (control dt 1/30 s, as the Panda's SolverSteel tasks). Action: 8 values in
    [-1, 1]: one per arm joint (joint1 .. joint7), its position target mapped onto the joint's range as
    PandaReach-v0 and PandaLiftCube-v0 map it (``home + a (upper - home)`` for a >= 0, ``home + a (home - lower)``
    below), the range narrowed by :data:`LIMIT_MARGIN` at each end, and the gripper (>= 0 open, 4 cm per finger; < 0
    closed), Isaac Lab's binary gripper action. SolverVBD enforces no joint speed or effort limits (its page: not
    supported), so each target is held within ``velocity_limit * kd / ke`` of the measured coordinate (0.22 rad for
    joints 1-4, 0.26 for 5-7, 1 cm for the fingers), the lead at which the drive's speed settles at the joint's
    limit (Franka's datasheet, as :data:`steel_envs.assets.PANDA`): an arm commanded from one end of its range to
    the other swings about as fast as a real one may, not at what the drives' stiffness would give (a hand commanded
    0.34 m up at once reached 5 m/s and flung the cloth off the pads). The targets are a function of the state and
    the action (no hidden state).

    Arm: the MJCF's drive gains (panda.xml:254-263) as SolverVBD drives; the fingers at :data:`FINGER_STIFFNESS`.
    Its links collide with the table, the cloth and each other (but for PandaReach-v0's excluded pairs) through
    their fitted boxes and capsules; link0 stands on the table out of collisions.

    Solver options that differ from Newton's defaults, each measured (one world, the scripted grasp: hand to a
    corner, close, lift 0.33 m over 2 s):

    - ``rigid_joint_linear_ke = rigid_joint_angular_ke = 1e6`` (default 1e5): the structural joints' material
      stiffness. At 1e5 the chain opened up to 9.3 mm (the largest distance of a body from where the joint angles
      put it, ``newton.eval_ik`` then ``eval_fk``) holding the arm up, 4.0 mm at 1e6 with dt 1/120 and 1.4 mm at
      1e6 with dt 1/240; stiffer (1e7, 1e8) the drives tracked worse (joint2 sagged 0.35 and 0.58 rad: ten
      iterations do not converge both).
    - dt 1/240 with ``iterations=10``: the same drift as dt 1/120 with 20 iterations (2.1 mm), at half the cost.
    - Cloth: SolverVBD cloth as in ClothFold-v0 (self-contact, ``rigid_soft_enable_dat``, membrane 1e3, bending
      1e-3), particle-shape contact ``soft_contact_ke = 1e4`` N/m (the fingers pinch the cloth through it).

    Start: the MJCF's home pose (the hand 0.62 m above the table, pointing down, the gripper open) with
    U(-``joint_noise``, ``joint_noise``) on the arm joints, at rest; tasks place the cloth.
    """

    config_cls = PandaClothSceneConfig
    config: PandaClothSceneConfig
    min_worlds_per_shard = 1
    physics_dt = 1.0 / 240.0
    decimation = 8
    enable_collisions = False  # the solver owns the collision pipeline (see _make_solver)
    add_ground_plane = True
    action_dim = ARM_JOINTS + 1
    camera_eye = (1.25, -0.95, 0.75)
    camera_target = (0.3, 0.0, 0.3)
    soft_contact_ke = 1.0e4
    soft_contact_kd = 1.0e-2
    soft_contact_mu = 0.5
    soft_contact_gap = 0.005
    solver_defaults = VBDSolverOptions(
        rigid_compliant_alm=True,
        iterations=10,
        rigid_joint_linear_ke=1.0e6,
        rigid_joint_angular_ke=1.0e6,
        particle_enable_self_contact=True,
        particle_self_contact_margin=PARTICLE_RADIUS,
        particle_self_contact_gap=PARTICLE_RADIUS,
        particle_edge_contact_buffer_size=128,
        rigid_soft_enable_dat=True,
    )

    @property
    def particles_per_world(self) -> int:
        """(CLOTH_CELLS + 1)^2 particles per world."""
        return (CLOTH_CELLS + 1) ** 2

    @staticmethod
    def grid_index(i: int, j: int) -> int:
        """Index within a world's particles of the one at column ``i`` (along the cloth's x) and row ``j``."""
        return j * (CLOTH_CELLS + 1) + i

    def build_world(self, builder: newton.ModelBuilder) -> None:
        """The arm (its links colliding with each other but for PandaReach-v0's excluded pairs, link0 out of
        collisions), finger drives at :data:`FINGER_STIFFNESS`, no effort or speed limits declared, then the cloth
        flat on the table, centred at (0.5, 0) (tasks move it at every reset)."""
        shapes, bodies = builder.shape_count, builder.body_count
        dofs = PANDA.add_to(builder, enable_self_collisions=True)
        links = link_shapes(builder, bodies, shapes)
        for s in links["link0"]:
            builder.shape_flags[s] &= ~int(newton.ShapeFlags.COLLIDE_SHAPES)
        exclude_link_pairs(builder, links, _NO_COLLISIONS)
        for d in dofs[ARM_JOINTS:]:
            builder.joint_target_ke[d] = FINGER_STIFFNESS
            builder.joint_target_kd[d] = FINGER_DAMPING
        # SolverVBD enforces neither (its page): the model declares none (the builder's defaults stand for none),
        # and the speeds are bounded through the targets' lead (_lead_targets).
        unlimited = newton.ModelBuilder.JointDofConfig()
        for d in dofs:
            builder.joint_limit_ke[d], builder.joint_limit_kd[d] = LIMIT_STIFFNESS, LIMIT_DAMPING
            builder.joint_effort_limit[d] = unlimited.effort_limit
            builder.joint_velocity_limit[d] = unlimited.velocity_limit
        c = self.config
        corner = (0.5 - 0.5 * c.cloth_size, -0.5 * c.cloth_size, PARTICLE_RADIUS)
        add_towel(builder, corner, CLOTH_CELLS, float(c.cloth_size), float(c.cloth_mass))

    def initial_state(self) -> InitialStateSpec:
        """The home pose, ``joint_noise`` on the arm joints, at rest."""
        return home_start(self.config.joint_noise)

    def _make_solver(self) -> SolverVBD:
        """SolverVBD with its own collision pipeline, which ``rigid_soft_enable_dat`` requires (as ClothFold-v0)."""
        return solver_with_own_pipeline(self)

    def _setup_scene(self) -> None:
        device = self.wp_device
        self._home = wp.array(PANDA.home[:ARM_JOINTS], dtype=wp.float32, device=device)
        self._lower = wp.array(ARM_LOWER + LIMIT_MARGIN, dtype=wp.float32, device=device)
        self._upper = wp.array(ARM_UPPER - LIMIT_MARGIN, dtype=wp.float32, device=device)
        # A PD drive's speed settles where damping balances the stiffness times the lead: v = ke lead / kd.
        stiffness, damping = PANDA.stiffness.copy(), PANDA.damping.copy()
        stiffness[ARM_JOINTS:], damping[ARM_JOINTS:] = FINGER_STIFFNESS, FINGER_DAMPING
        lead = PANDA.velocity_limit * damping / stiffness
        self._max_lead = wp.array(lead.astype(np.float32), dtype=wp.float32, device=device)

    def _apply_actions(self) -> None:
        wp.launch(
            _lead_targets,
            (self.num_envs, len(PANDA.joints)),
            inputs=[
                self.actions,
                self._home,
                self._lower,
                self._upper,
                self._max_lead,
                self.model.joint_coord_world_start,
                self.state_0.joint_q,
            ],
            outputs=[self.control.joint_target_q],
            device=self.wp_device,
        )

    def _post_physics(self) -> None:
        """SolverVBD integrates bodies (maximal coordinates): the joint angles and speeds the tasks' rewards and
        observations read are measured from the bodies (``newton.eval_ik``); tasks that override this call it
        first."""
        newton.eval_ik(self.model, self.state_0, self.state_0.joint_q, self.state_0.joint_qd)

    def _observe(self, redraw: wp.array | None = None) -> None:
        # Measured again: a reset wrote joint coordinates and their forward kinematics, and the observation must be
        # the bodies' whichever way they were set.
        newton.eval_ik(self.model, self.state_0, self.state_0.joint_q, self.state_0.joint_qd)
        super()._observe(redraw)
