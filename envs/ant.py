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

from steel_envs.solver_options import SteelSolverOptions
from steel_envs.vector_env import InitialStateSpec, SteelVectorEnv, TaskConfig

__all__ = ["HINGE_NAMES", "AntScene", "AntSceneConfig"]

HINGE_NAMES = ("hip_1", "ankle_1", "hip_2", "ankle_2", "hip_3", "ankle_3", "hip_4", "ankle_4")
"""The actuated hinges in DOF (and action) order."""
ROOT_DOFS = 6
ROOT_COORDS = 7

# nv_ant.xml's custom ``init_qpos``: torso at 0.55 m with every ankle inside its limits. (The model's
# zero pose puts the ankles outside their ranges.) Quaternion in Newton's (x, y, z, w) order.
_INIT_Q = np.array([0.0, 0.0, 0.55, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, -1.0, 0.0, -1.0, 0.0, 1.0])


@dataclass(kw_only=True)
class AntSceneConfig(TaskConfig):
    """Scene fields of the ant: actuation and initial-state distribution."""

    action_scale: float = 15.0
    """Hinge torque at action 1 [N m]: the ``gear`` of nv_ant.xml's motors."""
    reset_noise_scale: float = 0.1
    """Initial q noise U(-s, s) on every coordinate, qd noise s * N(0, 1) (Gymnasium Ant-v5)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.require_positive("action_scale")
        self.require_nonnegative("reset_noise_scale")


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
    """

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
        # that have them. A finite activation gap [rad] creates a limit's rows only near the limit.
        enable_joint_limits=True,
        joint_limit_activation_gap=0.1,
        # Measured with row_watermark=True (newton 1.8.0, CPU, 64 worlds, 200 steps of random torques,
        # the gap above): up to 91 rows per world, mostly contact rows of the legs on the ground; the
        # default 32 overflows in every world resting on the ground. 192 keeps 2x headroom; the overflow
        # term ends the episode of a world that still exceeds it.
        articulation_constraint_max=192,
    )

    def build_world(self, builder: newton.ModelBuilder) -> None:
        """Load nv_ant.xml with a floating base, without its floor (the scene adds one ground plane)."""
        builder.add_mjcf(newton.examples.get_asset("nv_ant.xml"), floating=True, ignore_names=["floor"])

    def initial_state(self) -> InitialStateSpec:
        """nv_ant.xml's ``init_qpos`` plus Ant-v5's reset noise; the quaternion is renormalized."""
        s = float(self.config.reset_noise_scale)
        return InitialStateSpec(
            default_q=_INIT_Q,
            default_qd=np.zeros(ROOT_DOFS + len(HINGE_NAMES)),
            q_noise=np.full(_INIT_Q.shape, s),
            qd_noise=np.full(ROOT_DOFS + len(HINGE_NAMES), s),
            q_noise_kind="uniform",
            qd_noise_kind="gaussian",
            quat_coord=3,
        )

    def _apply_actions(self) -> None:
        wp.launch(
            _apply_hinge_torques,
            (self.num_envs, self.action_dim),
            inputs=[self._actions, float(self.config.action_scale), self.model.joint_dof_world_start],
            outputs=[self.control.joint_f],
            device=self._wp_device,
        )
