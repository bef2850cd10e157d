"""Humanoid scene: ``nv_humanoid.xml`` from the newton wheel on a ground plane, joint torques as actions.

World layout (newton 1.8.0): 13 bodies (torso first), a free root joint, 21 hinge DOFs (the XML's hinges, merged
by the importer into D6 joints per body: abdomen z/y, hip x/z/y, ankle y/x, shoulder 1/2) in the order of
:data:`ACTUATED`; 28 coordinates, 27 DOFs. Passive joint springs and damping come from the XML. z is up.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

import newton
import newton.examples
import numpy as np
import warp as wp
from steel_envs.envs.joint_limits import JointLimitProjection

from steel_envs.ranges import at_least, declare, positive
from steel_envs.solver_options import SteelSolverOptions
from steel_envs.spec import InitialStateSpec, TaskConfig
from steel_envs.vector_env import SteelVectorEnv

__all__ = ["ACTUATED", "GROUND_GAP", "SELF_GAP", "HumanoidScene", "HumanoidSceneConfig"]

SELF_GAP = 0.04
"""Contact detection gap of the humanoid's own shapes [m]; a pair gets contacts within the sum of its shapes' gaps,
0.08 m for two capsules. With the builder's default 0.1 m every pair closer than 0.2 m has contact rows: 26 contacts
per world and step under random torques, the thighs, shins, waist and butt in every step, 75-150 mm apart, each a
speculative row costing its Jacobian, its H^-1 J^T and its share of the Gauss-Seidel sweeps. At 0.02 m bang-bang
torques drive a shin 10 mm into the other (a limb closes up to 0.13 m per 5 ms physics step); 0.04 m leaves the
deepest body under random, bang-bang, zero and saturated torques exactly as at 0.1 m (32 worlds x 200 control steps
each)."""
GROUND_GAP = 0.2 - SELF_GAP
"""Contact detection gap of the ground plane [m]: a body and the ground keep the 0.2 m pair gap they had with the
builder's default on both, which the feet need (an ankle turns at up to 87 rad/s)."""

ACTUATED = (
    "abdomen_z", "abdomen_y", "abdomen_x",
    "right_hip_x", "right_hip_z", "right_hip_y", "right_knee", "right_ankle_y", "right_ankle_x",
    "left_hip_x", "left_hip_z", "left_hip_y", "left_knee", "left_ankle_y", "left_ankle_x",
    "right_shoulder1", "right_shoulder2", "right_elbow",
    "left_shoulder1", "left_shoulder2", "left_elbow",
)  # fmt: skip
"""The actuated hinge DOFs in Newton's DOF (and action) order."""
ROOT_DOFS = 6
ROOT_COORDS = 7


def _gears() -> np.ndarray:
    """Motor gears [N m per unit action] of :data:`ACTUATED`, read from nv_humanoid.xml's actuators."""
    root = ET.parse(newton.examples.get_asset("nv_humanoid.xml")).getroot()
    gear = {m.get("joint"): float(m.get("gear")) for m in root.iter("motor") if m.get("joint")}
    return np.array([gear[name] for name in ACTUATED], np.float32)


@dataclass(kw_only=True)
class HumanoidSceneConfig(TaskConfig):
    """Scene fields of the humanoid: actuation and initial-state distribution."""

    action_scale: float = 1.0
    """Factor on nv_humanoid.xml's motor gears (22.5-135 N m at action 1)."""
    initial_height: float = 1.4
    """Initial torso height [m] (Gymnasium Humanoid-v5's init_qpos)."""
    reset_noise_scale: float = 0.01
    """U(-s, s) noise on every coordinate and velocity (Humanoid-v5)."""
    project_joint_limits: bool = True
    """Clamp the hinges back into their limits after every physics step (see the scene's docstring); False leaves
    the limits to the solver's rows alone (for physics checks)."""

    field_ranges = declare(
        action_scale=positive("a factor on the motor gears; a negative one reverses the actions"),
        initial_height=positive("a height above the ground [m]"),
        reset_noise_scale=at_least(0.0, "a noise half-width"),
    )


@wp.kernel(enable_backward=False)
def _apply_torques(
    actions: wp.array2d[wp.float32],
    gears: wp.array[wp.float32],
    action_scale: wp.float32,
    dof_world_start: wp.array[wp.int32],
    joint_f: wp.array[wp.float32],
):
    w, j = wp.tid()
    joint_f[dof_world_start[w] + ROOT_DOFS + j] = actions[w, j] * gears[j] * action_scale


class HumanoidScene(SteelVectorEnv):
    """Humanoid scene on SolverSteel; tasks subclass it with observations, rewards and terminations.

    Physics: dt 0.005 s, decimation 3 (control dt 0.015 s, Gymnasium Humanoid-v5's). Action: 21 values in
    [-1, 1], hinge torques ``action * gear * action_scale`` [N m] in :data:`ACTUATED` order.

    Joint limits: every hinge keeps the range of nv_humanoid.xml; no effort limit is declared (the torques are at
    most ``gear * action_scale``). They are enforced in two layers:

    - SolverSteel's limit rows, ``joint_limit_activation_gap=1.0`` rad (a limit side has its row whenever the hinge
      is within 1 rad of it). With a gap of 0.1 rad an ankle crosses its limit within one physics step (up to
      87 rad/s under bang-bang torques, 0.44 rad per 0.005 s step) and overshoots it by up to 0.24 rad.
    - The rows leave a residual where the contact rows of a loaded foot are coupled to the ankle's or hip's limit
      rows: the Gauss-Seidel sweep needs 100 or more iterations there (measured up to 0.12 rad past a limit at 12
      iterations, 0.05 rad at 32). With ``project_joint_limits`` (default) the env clamps each hinge into its range
      after every physics step, drops the joint velocity pointing out of it and re-runs forward kinematics
      (:class:`~steel_envs.envs.joint_limits.JointLimitProjection`, which describes the clamp's side effects), so
      no hinge is ever observed past its limit.
    """

    min_worlds_per_shard = 2
    # Contact watermark (newton 1.8.0, CPU, steel-envs doctor, 32 worlds x 300 steps of random, bang-bang and zero
    # torques, SELF_GAP 0.04 m): 1,602 contacts in all, 50 per world, with terminate_when_unhealthy=False (humanoids
    # lying on the ground); 14 with the task's terminations. 100 keeps 2x headroom. Newton's estimate from the
    # shape pairs, 805 per world, would cost time: the deterministic order sorts every slot each step.
    rigid_contacts_per_world = 100
    # min_worlds_per_shard: on a 2-core CPU (random actions) two processes (``ShardedVectorEnv``) step 1.6x as many
    # env-steps/s as one with 2 worlds each, 1.9x with 32 each.

    config_cls = HumanoidSceneConfig
    config: HumanoidSceneConfig
    physics_dt = 0.005
    decimation = 3
    enable_collisions = True
    add_ground_plane = True
    action_dim = len(ACTUATED)
    camera_tracked_body = 0
    camera_eye = (1.0, -4.0, 1.6)
    camera_target = (0.0, 0.0, 0.9)
    solver_defaults = SteelSolverOptions(
        # Limits as the XML declares them. The options page: keep the activation gap [rad] above
        # 2 * max|qd| * dt; bang-bang torques drive an ankle at up to 87 rad/s, 2 * 87 * 0.005 = 0.87 rad. At
        # 0.1 rad a hinge crosses its limit within one step; 1.0 rad gives the same motion as inf (bit for bit)
        # with fewer rows on the wide joints (knees, elbows, abdomen).
        enable_joint_limits=True,
        joint_limit_activation_gap=1.0,
        # Measured with row_watermark=True (newton 1.8.0, CPU, steel-envs doctor, 32 worlds x 300 steps of random,
        # bang-bang and zero torques): up to 110 rows per world with the task's terminations, 223 for humanoids
        # left lying on the ground (terminate_when_unhealthy=False; contacts of every capsule and the
        # self-contacts within SELF_GAP); 320 keeps the options page's 1.3x headroom over the largest.
        articulation_constraint_max=320,
        # Contacts: under a saturated torque a loaded foot presses its hip or ankle against the limit; at 12
        # iterations the sweep leaves the joint past it, the clamp of ``project_joint_limits`` turns the limb
        # back, driving the foot about 12 mm into the ground per physics step, and the contact's Baumgarte
        # correction removes 20 % per step: the foot settles near 60 mm deep. More iterations shrink the residual
        # the clamp removes, a larger baumgarte pushes the foot out faster (the options page: "up to 0.5 for light
        # bodies pressed into the ground by heavy ones"), and relaxation 0.9 breaks the two-state cycle of a
        # foot's contact and friction rows that the ant shows as well (a foot 5.6 mm deep after any even number
        # of iterations, 7.3 mm above after any odd one). 48 iterations: with the settings here the deepest
        # bodies under random, bang-bang, zero and saturated torques and of lying humanoids (32 worlds x 200
        # control steps each) are those of 64 iterations; 32 let saturated torques drive a foot 8.2 mm deep.
        iterations=48,
        baumgarte=0.5,
        relaxation=0.9,
        # Point friction (the options page: "Set 0 (point friction) for scenes where nothing is held; it is
        # cheaper"): nothing here is held, and the friction patches' build, history and preparation would take 21 %
        # of a step. The deepest body under random, bang-bang, zero and saturated torques is alike or less deep
        # than with patches.
        friction_anchor_beta=0.0,
    )

    def build_world(self, builder: newton.ModelBuilder) -> None:
        """Load nv_humanoid.xml with a floating base, without its floor, its shapes with a contact gap of
        :data:`SELF_GAP` (the scene adds one ground plane per world after this, with :data:`GROUND_GAP`)."""
        builder.rigid_gap = SELF_GAP
        builder.add_mjcf(newton.examples.get_asset("nv_humanoid.xml"), floating=True, ignore_names=["floor"])
        # Shapes added from here on (the world's ground plane) get the wider gap.
        builder.rigid_gap = GROUND_GAP

    def initial_state(self) -> InitialStateSpec:
        """Torso at ``initial_height``, upright, joints at 0, with Humanoid-v5's uniform reset noise."""
        s = float(self.config.reset_noise_scale)
        q = np.zeros(ROOT_COORDS + len(ACTUATED))
        q[2], q[6] = self.config.initial_height, 1.0
        dofs = ROOT_DOFS + len(ACTUATED)
        return InitialStateSpec(
            default_q=q,
            default_qd=np.zeros(dofs),
            q_noise=np.full(q.shape, s),
            qd_noise=np.full(dofs, s),
            quat_coord=3,
        )

    def _setup_scene(self) -> None:
        self._gears = wp.array(_gears(), dtype=wp.float32, device=self.wp_device)
        self._limit_projection = (
            JointLimitProjection(self.model, self.solver) if self.config.project_joint_limits else None
        )

    def _after_substep(self, state: newton.State) -> None:
        super()._after_substep(state)
        if self._limit_projection is not None:
            self._limit_projection.apply(state)

    def _apply_actions(self) -> None:
        wp.launch(
            _apply_torques,
            (self.num_envs, self.action_dim),
            inputs=[self.actions, self._gears, float(self.config.action_scale), self.model.joint_dof_world_start],
            outputs=[self.control.joint_f],
            device=self.wp_device,
        )
