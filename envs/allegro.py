"""The Allegro hand scene: the vendored right hand (:data:`steel_envs.assets.ALLEGRO`) welded palm up 0.5 m above a
ground plane, its 16 joint position targets from the actions (Isaac Lab's ``Isaac-Repose-Cube-Allegro-Direct``:
``isaaclab_tasks/direct/allegro_hand`` and ``direct/inhand_manipulation/inhand_manipulation_env.py``) tracked by
SolverSteel's PD drive rows with Isaac Lab's gains.

World layout (newton 1.8.0): 21 bodies (palm_link, then per finger its four phalanges and its tip, index, middle,
ring, thumb), a fixed root joint, 16 hinges in ``steel_envs.assets.ALLEGRO.joints`` order (16 coordinates, 16 DOFs)
and a fixed joint per fingertip. z is up.
"""

from __future__ import annotations

import math

import newton
import numpy as np
import warp as wp

from steel_envs.assets import ALLEGRO, exclude_link_pairs, link_shapes
from steel_envs.solver_options import SteelSolverOptions
from steel_envs.spec import InitialStateSpec
from steel_envs.vector_env import SteelVectorEnv

__all__ = [
    "FINGERTIP_BODIES",
    "HAND_JOINTS",
    "HAND_LOWER",
    "HAND_UPPER",
    "PALM_POSITION",
    "PALM_ROTATION",
    "PALM_SURFACE",
    "AllegroScene",
]

HAND_JOINTS = len(ALLEGRO.joints)
HAND_LOWER = np.array([-0.47, -0.196, -0.174, -0.227] * 3 + [0.263, -0.105, -0.189, -0.162], np.float32)
"""The joints' lower limits [rad] (allegro_right_hand.urdf, each joint's ``<limit lower>``)."""
HAND_UPPER = np.array([0.47, 1.61, 1.709, 1.618] * 3 + [1.396, 1.163, 1.644, 1.719], np.float32)
"""The joints' upper limits [rad]."""
FINGERTIP_BODIES = (5, 10, 15, 20)
"""World-local indices of the fingertip bodies (link_3.0_tip, link_7.0_tip, link_11.0_tip, link_15.0_tip): index,
middle, ring, thumb; each a sphere of radius 0.012 m."""
PALM_POSITION = (0.0, 0.0, 0.5)
"""Where the palm link's frame is welded [m] (Isaac Lab's hand stands 0.5 m up)."""
PALM_ROTATION = (math.sqrt(0.5), 0.0, math.sqrt(0.5), 0.0)
"""The palm's orientation (x, y, z, w): half a turn about (1, 0, 1)/sqrt(2), which takes the palm's normal (the
link's +x, the side the fingers close towards) to the world's +z and the fingers (its +z) along the world's +x."""
PALM_SURFACE = 0.0111
"""Height of the palm's surface above the palm frame's origin along its normal [m]: the collision box spans
x = -0.0093 +- 0.0204 in the link's frame (allegro_right_hand.urdf, palm_link)."""
PALM_CENTRE = -0.0475
"""Where along the fingers' axis the palm's collision box is centred, in the palm's frame [m] (its z)."""


_NO_COLLISIONS = (("palm_link", "link_13.0"),)
"""Link pairs that do not collide: the thumb's second link overlaps the palm's box by 7.3 mm at the home pose (the
URDF's boxes are coarser than the links' meshes); every other pair that is not parent and child collides."""


@wp.kernel(enable_backward=False)
def _joint_targets(
    actions: wp.array2d[wp.float32],
    lower: wp.array[wp.float32],
    upper: wp.array[wp.float32],
    coord_world_start: wp.array[wp.int32],
    joint_target_q: wp.array[wp.float32],
):
    """Joint j's target: lower + (a + 1) / 2 (upper - lower) [rad] (Isaac Lab's ``scale``: -1 the lower limit, 1 the
    upper)."""
    w, j = wp.tid()
    a = actions[w, j]
    joint_target_q[coord_world_start[w] + j] = lower[j] + 0.5 * (a + 1.0) * (upper[j] - lower[j])


class AllegroScene(SteelVectorEnv):
    """A vendored Allegro right hand (:data:`steel_envs.assets.ALLEGRO`) on SolverSteel, palm up; tasks add the
    object, observations, rewards and terminations.

    Physics: dt 1/120 s, decimation 4 (control dt 1/30 s; Isaac Lab's Allegro task: sim dt 1/120, decimation 4).
    Action: one value in [-1, 1] per joint, its position target ``lower + (a + 1) / 2 (upper - lower)`` (Isaac Lab's
    absolute targets over the joint's range; a = 0 is mid-range, every finger half closed). The targets are tracked
    by PD drive rows with Isaac Lab's ``ALLEGRO_HAND_CFG`` gains (stiffness 1 N m/rad, damping 0.1 N m s/rad, armature
    1e-4 kg m^2), clamped at 0.5 N m; joint ranges and the URDF's 7 rad/s are enforced by the solver. The hand's links
    collide with each other (but for parent and child) through the URDF's boxes and fingertip spheres; the palm is
    welded to the world.

    Start: every joint at :data:`steel_envs.assets.ALLEGRO`'s home (0, the thumb's rotation at 0.28 rad) +-
    ``joint_noise``-free (the task adds noise), at rest.
    """

    physics_dt = 1.0 / 120.0
    decimation = 4
    enable_collisions = True
    add_ground_plane = True
    action_dim = HAND_JOINTS
    contact_gap = 0.01
    """Contact gap of the hand's and the object's shapes [m]: a fingertip at its 7 rad/s speed limit, 0.1 m from its
    joint, closes 0.6 cm in one physics step."""
    camera_eye = (0.18, -0.2, 0.66)
    camera_target = (-0.03, 0.0, 0.52)
    solver_defaults = SteelSolverOptions(
        # The fingers' joints hold their limits to 3e-5 rad and their speed limits to 0.1 % under bang-bang actions
        # in doctor (16 worlds x 300 steps) with 40 PGS iterations.
        iterations=40,
        drive_mode="rows",
        enable_joint_limits=True,
        enable_joint_velocity_limits=True,
        # The options page: keep the gap above 2 * max|qd| * dt = 2 * 7 rad/s * (1/120) s = 0.117 rad.
        joint_limit_activation_gap=0.15,
        # Rows: up to 207 per world in doctor (16 worlds x 300 steps of random, bang-bang and zero actions with the
        # cube: 16 drive rows, limit rows, the fingers' contacts with the cube, the palm and each other), 402 with
        # every finger closed on the cube (a fist, 8 worlds x 150 steps; 320 overflowed there and the dropped rows
        # let a finger 11 mm into the cube); 576 keeps 1.4x headroom over the fist.
        articulation_constraint_max=576,
    )

    def build_world(self, builder: newton.ModelBuilder) -> None:
        """Add the hand (:meth:`steel_envs.assets.ArmModel.add_to`) palm up at :data:`PALM_POSITION`, its links
        colliding with each other but for the pairs of :data:`_NO_COLLISIONS`."""
        shapes, bodies = builder.shape_count, builder.body_count
        builder.rigid_gap = self.contact_gap
        ALLEGRO.add_to(
            builder,
            xform=wp.transform(wp.vec3(*PALM_POSITION), wp.quat(*PALM_ROTATION)),
            enable_self_collisions=True,
        )
        exclude_link_pairs(builder, link_shapes(builder, bodies, shapes), _NO_COLLISIONS)

    def initial_state(self) -> InitialStateSpec:
        """The home pose, at rest."""
        return InitialStateSpec(
            default_q=ALLEGRO.home.astype(np.float64),
            default_qd=np.zeros(HAND_JOINTS),
            q_noise=np.zeros(HAND_JOINTS),
            qd_noise=np.zeros(HAND_JOINTS),
        )

    def _setup_scene(self) -> None:
        self._lower = wp.array(HAND_LOWER, dtype=wp.float32, device=self.wp_device)
        self._upper = wp.array(HAND_UPPER, dtype=wp.float32, device=self.wp_device)

    def _apply_actions(self) -> None:
        wp.launch(
            _joint_targets,
            (self.num_envs, HAND_JOINTS),
            inputs=[self.actions, self._lower, self._upper, self.model.joint_coord_world_start],
            outputs=[self.control.joint_target_q],
            device=self.wp_device,
        )
