"""Test-only scene: one pendulum hinged to the world, driven by a torque (Gymnasium Pendulum-v1's rod).

With ``pendulum_swingup.py`` it shows what adding a task takes: these two files and nothing in the package
(the registry-driven tests pick the ID up). A uniform rod of 1 kg and 1 m hinged at one end, so
``theta_ddot = 3 g / (2 l) sin(theta) + 3 u / (m l^2)`` as in Pendulum-v1 (with g = 9.81 m/s^2).
World layout: ``joint_q = (theta [rad],)``, ``theta = 0`` upright; ``joint_qd = (theta_dot [rad/s],)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import newton
import numpy as np
import warp as wp

from steel_envs.solver_options import SteelSolverOptions
from steel_envs.spec import InitialStateSpec, TaskConfig
from steel_envs.vector_env import SteelVectorEnv

ROD_MASS = 1.0
"""[kg]"""
ROD_LENGTH = 1.0
"""[m]"""


@dataclass(kw_only=True)
class PendulumSceneConfig(TaskConfig):
    """Actuation and initial-state distribution of the pendulum (Pendulum-v1)."""

    max_torque: float = 2.0
    """Hinge torque at action 1 [N m] (Pendulum-v1's ``max_torque``)."""
    initial_speed: float = 1.0
    """Half-width of the uniform initial angular speed [rad/s]; the angle is uniform in [-pi, pi]."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.require_positive("max_torque")
        self.require_nonnegative("initial_speed")


@wp.kernel(enable_backward=False)
def _apply_torque(
    actions: wp.array2d[wp.float32],
    max_torque: wp.float32,
    dof_world_start: wp.array[wp.int32],
    joint_f: wp.array[wp.float32],
):
    w = wp.tid()
    joint_f[dof_world_start[w]] = actions[w, 0] * max_torque


class PendulumScene(SteelVectorEnv):
    """A torque-driven pendulum on SolverSteel: dt 0.025 s, decimation 2 (control dt 0.05 s, Pendulum-v1's)."""

    config_cls = PendulumSceneConfig
    config: PendulumSceneConfig
    physics_dt = 0.025
    decimation = 2
    enable_collisions = False
    add_ground_plane = False
    action_dim = 1
    camera_eye = (0.0, -3.0, 1.0)
    camera_target = (0.0, 0.0, 1.0)
    solver_defaults = SteelSolverOptions()

    def build_world(self, builder: newton.ModelBuilder) -> None:
        """Add the rod and its hinge at 1 m above the origin (no collision shapes)."""
        visual = newton.ModelBuilder.ShapeConfig(density=0.0, has_shape_collision=False, has_particle_collision=False)
        half = 0.5 * ROD_LENGTH
        inertia = ROD_MASS * ROD_LENGTH**2 / 12.0
        rod = builder.add_link(
            com=wp.vec3(0.0, 0.0, half),
            mass=ROD_MASS,
            inertia=wp.mat33(np.diag([inertia, inertia, 1.0e-6]).astype(np.float32)),
            label="rod",
        )
        builder.add_shape_capsule(
            rod,
            xform=wp.transform(wp.vec3(0.0, 0.0, half), wp.quat_identity()),
            radius=0.04,
            half_height=half,
            cfg=visual,
        )
        hinge = builder.add_joint_revolute(
            -1,
            rod,
            parent_xform=wp.transform(wp.vec3(0.0, 0.0, 1.0), wp.quat_identity()),
            axis=newton.Axis.Y,
            armature=0.0,
            label="hinge",
        )
        builder.add_articulation([hinge], label="pendulum")

    def initial_state(self) -> InitialStateSpec:
        """Angle uniform in [-pi, pi], speed uniform in [-initial_speed, initial_speed] (Pendulum-v1)."""
        return InitialStateSpec(
            default_q=np.zeros(1),
            default_qd=np.zeros(1),
            q_noise=np.full(1, np.pi),
            qd_noise=np.full(1, float(self.config.initial_speed)),
        )

    def _apply_actions(self) -> None:
        self.launch_per_world(
            _apply_torque,
            inputs=[self.actions, float(self.config.max_torque), self.model.joint_dof_world_start],
            outputs=[self.control.joint_f],
        )
