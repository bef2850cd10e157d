"""Ant scene: ``nv_ant.xml`` from the newton wheel on a ground plane, joint torques as actions.

World layout (newton 1.8.0): 9 bodies (torso first), a free root joint and 8 limited hinges.
``joint_q`` = (x, y, z [m], qx, qy, qz, qw, hip_1, ankle_1, hip_2, ankle_2, hip_3, ankle_3, hip_4,
ankle_4 [rad]), 15 coordinates; ``joint_qd`` = (v_com world [m/s], omega world [rad/s], 8 hinge rates
[rad/s]), 14 DOFs. z is up.
"""

from __future__ import annotations

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

__all__ = ["GROUND_GAP", "HINGE_NAMES", "AntScene", "AntSceneConfig"]

HINGE_NAMES = ("hip_1", "ankle_1", "hip_2", "ankle_2", "hip_3", "ankle_3", "hip_4", "ankle_4")
"""The actuated hinges in DOF (and action) order."""
ROOT_DOFS = 6
ROOT_COORDS = 7
GROUND_GAP = 0.2
"""Contact detection gap of the ground plane [m] (the builder's default is 0.1 m, as on the ant's shapes): a pair
gets contacts within the sum of its shapes' gaps, 0.3 m for a foot and the ground. Under full torque a foot tip
swings at up to 28 m/s, 0.28 m per 0.01 s physics step; a tip that starts a step beyond the pair's gap has no
contact row and can end the step inside the ground (measured up to 26 mm with the default 0.2 m)."""

# nv_ant.xml's custom ``init_qpos``: torso at 0.55 m with every ankle inside its limits. (The model's
# zero pose puts the ankles outside their ranges.) Quaternion in Newton's (x, y, z, w) order.
_INIT_Q = np.array([0.0, 0.0, 0.55, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, -1.0, 0.0, -1.0, 0.0, 1.0])
# Lowest torso height [m] of a start with no body inside the ground: _START_Z + _START_Z_PER_NOISE * s for reset noise
# scale s, clearance included. In init_qpos at 0.55 m the feet are 6.0 mm inside the ground. The noise on the
# quaternion (up to 18 deg of tilt at s = 0.1) and the hinges lowers the lowest foot further below the torso: by at
# most 0.061 m at s = 0.02, 0.141 m at 0.05 and 0.262 m at 0.1 (the deepest of the 4096 corners of the noise box
# and a local search from the deepest corners and random draws, shapes' own surfaces, newton 1.8.0's FK), under
# 2.8 m per unit of s; 5 mm of clearance on top.
_START_Z = 0.55 + 0.0061 + 0.005
_START_Z_PER_NOISE = 2.8


@dataclass(kw_only=True)
class AntSceneConfig(TaskConfig):
    """Scene fields of the ant: actuation and initial-state distribution."""

    action_scale: float = 15.0
    """Hinge torque at action 1 [N m]: the ``gear`` of nv_ant.xml's motors."""
    reset_noise_scale: float = 0.1
    """Initial q noise U(-s, s) on every coordinate but the torso height, qd noise s * N(0, 1) (Gymnasium Ant-v5);
    the torso height is drawn from U(h, h + s) with h the lowest height that keeps every body out of the ground
    for any draw of the other coordinates (0.841 m at s = 0.1; see :meth:`AntScene.initial_state`)."""
    project_joint_limits: bool = True
    """Clamp the hinges back into their limits after every physics step (see the scene's docstring); False leaves
    the limits to the solver's rows alone (for physics checks)."""

    field_ranges = declare(
        action_scale=positive("the hinge torque at action 1 [N m]; a negative one reverses the actions"),
        reset_noise_scale=at_least(0.0, "a noise half-width"),
    )


@wp.kernel(enable_backward=False)
def _apply_hinge_torques(
    actions: wp.array2d[wp.float32],
    action_scale: wp.float32,
    dof_world_start: wp.array[wp.int32],
    joint_f: wp.array[wp.float32],
):
    w, j = wp.tid()
    joint_f[dof_world_start[w] + ROOT_DOFS + j] = actions[w, j] * action_scale


class AntScene(SteelVectorEnv):
    """Ant scene on SolverSteel; tasks subclass it with observations, rewards and terminations.

    Physics: dt 0.01 s, decimation 5 (control dt 0.05 s, Gymnasium Ant-v5's ``frame_skip=5`` at
    ``timestep=0.01``). Action: 8 values in [-1, 1], hinge torques ``action * action_scale`` [N m] in
    :data:`HINGE_NAMES` order.

    Joint limits: the 8 hinges keep nv_ant.xml's ranges (hips +-40 deg, ankles 30-100 deg); no effort limit is
    declared (the torques are at most ``action_scale``). They are enforced in two layers:

    - SolverSteel's limit rows, ``joint_limit_activation_gap=2.0`` rad (wider than every hinge's range: a row for
      every limit side in every step). With a gap of 0.1 rad a hinge crosses its limit within one physics step (the
      light legs reach 60-85 rad/s under full torque, 0.6-0.85 rad per 0.01 s step) and overshoots it by up to
      0.6 rad.
    - The rows leave a residual where a loaded foot's contact and friction rows are coupled to the limit rows: the
      Gauss-Seidel sweep converges slowly there, or alternates between two states with friction (measured up to
      0.1 rad past a limit at 12 iterations; more iterations alone do not remove the alternation, and
      ``relaxation=0.8`` with 32 iterations, which brings it to 0.015 rad, costs a quarter of the throughput).
      With ``project_joint_limits`` (default) the env clamps each hinge into its range after every physics step,
      drops the joint velocity pointing out of it and re-runs forward kinematics
      (:class:`~steel_envs.envs.joint_limits.JointLimitProjection`, which describes the clamp's side effects), so
      no hinge is ever observed past its limit.
    """

    min_worlds_per_shard = 4
    # Contact watermark (newton 1.8.0, CPU, steel-envs doctor, 32 worlds x 200 steps of random, bang-bang and zero
    # torques): 694 contacts in all, 21.7 per world, with terminate_when_unhealthy=False (ants left on their backs);
    # 17.5 with the task's terminations. 48 keeps 2.2x headroom. Newton's estimate from the shape pairs, 285 per world,
    # would cost time: the deterministic order sorts every slot each step.
    rigid_contacts_per_world = 48
    # min_worlds_per_shard: on a 2-core CPU (random actions) two processes (``ShardedVectorEnv``) step 1.45x as many
    # env-steps/s as one with 4 worlds each, 1.9x with 64 each.

    config_cls = AntSceneConfig
    config: AntSceneConfig
    physics_dt = 0.01
    decimation = 5
    enable_collisions = True
    add_ground_plane = True
    action_dim = len(HINGE_NAMES)
    camera_tracked_body = 0  # the torso
    camera_eye = (1.5, -3.0, 1.6)
    camera_target = (0.0, 0.0, 0.4)
    solver_defaults = SteelSolverOptions(
        # The hinges have limits the motors can push past; the options page: enable limits for robots
        # that have them, and keep the activation gap [rad] above 2 * max|qd| * dt. Full torque drives the
        # light legs at up to 85 rad/s: 2 * 85 * 0.01 = 1.7 rad, more than a hinge's whole range (1.2-1.4 rad),
        # so every limit side has its row in every step (16 rows), as with inf.
        enable_joint_limits=True,
        joint_limit_activation_gap=2.0,
        # Measured with row_watermark=True (newton 1.8.0, CPU, 8-32 worlds, 150-300 steps of random, bang-bang
        # and saturated torques, terminations on and off): up to 97 rows per world (16 limit rows, the rest
        # contact rows of the legs on the ground); the default 32 overflows in every world resting on the
        # ground. 192 keeps 2x headroom; the overflow term ends the episode of a world that still exceeds it.
        articulation_constraint_max=192,
        # Contacts: with the defaults feet go up to 73 mm into the ground after a control step under random and
        # bang-bang torques. Each setting below removes one cause (32 worlds x 200 control steps of each of random,
        # bang-bang, zero and saturated torques, the deepest body after every step; zero and saturated torques put
        # no body deeper than 5 mm with any of them):
        # - relaxation 0.8: at the default 1.0 the Gauss-Seidel sweep of a loaded foot's contact and friction
        #   rows falls into an exact two-state cycle (the same state after 12 or 400 iterations, the other one
        #   after 13 or 401), neither of which holds the contact: a foot ends 18 mm deep where the under-relaxed
        #   sweep converges to 10 mm above the ground. More iterations do not help.
        # - baumgarte 0.5 (the options page: "up to 0.5 for light bodies pressed into the ground by heavy ones"):
        #   the legs turn at up to 40 rad/s, 0.4 rad per 0.01 s step, and a foot rolling on its contact point
        #   ends a converged step a few mm deep (up to 13 mm, the same at 12 or 400 iterations); 0.5 pushes it
        #   out within the control step.
        # - contact_speculative_scale 0.5: a foot may close half of its gap per step instead of all of it, which
        #   absorbs most of the error of a fast-swinging foot's linearized motion (an approaching foot slows over
        #   its last centimetres).
        # - the ground's contact gap, GROUND_GAP: a fast foot has its contact row before it arrives.
        # With all four the deepest body is 4.9 mm; on 64 worlds x 200 steps with two seeds 11 of the 51200 random
        # and bang-bang states remain deeper than 5 mm (up to 11 mm): feet that roll fast on their contact, and the
        # hinge clamp of ``project_joint_limits`` turning a loaded foot into the ground. Together they cost 6 % of
        # env-steps/s.
        relaxation=0.8,
        baumgarte=0.5,
        contact_speculative_scale=0.5,
    )

    def build_world(self, builder: newton.ModelBuilder) -> None:
        """Load nv_ant.xml with a floating base, without its floor (the scene adds one ground plane per world, after
        this, with a contact gap of :data:`GROUND_GAP`)."""
        builder.add_mjcf(newton.examples.get_asset("nv_ant.xml"), floating=True, ignore_names=["floor"])
        # Shapes added from here on (the world's ground plane) get the wider gap; the ant's own keep 0.1 m.
        builder.rigid_gap = GROUND_GAP

    def initial_state(self) -> InitialStateSpec:
        """nv_ant.xml's ``init_qpos`` plus Ant-v5's reset noise (the quaternion renormalized), with the torso raised
        so that no body starts inside the ground.

        Ant-v5's U(-s, s) on the torso height, with the tilt and hinge noise, started feet up to 0.25 m inside the
        ground at s = 0.1 (6 mm at s = 0). The torso height is instead U(h, h + s), h = 0.561 + 2.8 s m (0.841 m at
        s = 0.1, 0.561 m at s = 0), the lowest height at which no draw of the quaternion and hinge noise puts a body
        below the ground (the constants' comment above gives the measurement): at s = 0.1 the lowest foot starts
        0.03-0.39 m above the ground and the ant drops onto its feet. Every other coordinate keeps Ant-v5's noise.
        Above s = 0.13 the torso can start over ``healthy_z_max`` (1.0 m) of AntRun.
        """
        s = float(self.config.reset_noise_scale)
        q = _INIT_Q.copy()
        q_noise = np.full(q.shape, s)
        q[2] = _START_Z + _START_Z_PER_NOISE * s + 0.5 * s
        q_noise[2] = 0.5 * s
        return InitialStateSpec(
            default_q=q,
            default_qd=np.zeros(ROOT_DOFS + len(HINGE_NAMES)),
            q_noise=q_noise,
            qd_noise=np.full(ROOT_DOFS + len(HINGE_NAMES), s),
            q_noise_kind="uniform",
            qd_noise_kind="gaussian",
            quat_coord=3,
        )

    def _setup_scene(self) -> None:
        self._limit_projection = (
            JointLimitProjection(self.model, self.solver) if self.config.project_joint_limits else None
        )

    def _after_substep(self, state: newton.State) -> None:
        super()._after_substep(state)
        if self._limit_projection is not None:
            self._limit_projection.apply(state)

    def _apply_actions(self) -> None:
        wp.launch(
            _apply_hinge_torques,
            (self.num_envs, self.action_dim),
            inputs=[self.actions, float(self.config.action_scale), self.model.joint_dof_world_start],
            outputs=[self.control.joint_f],
            device=self.wp_device,
        )
