"""Cart-pole scene: a cart on a rail (prismatic) carrying one pole (revolute), driven by a force on the cart.

Built with ``newton.ModelBuilder`` rather than loaded: the ``cartpole.urdf`` of the newton wheel carries a
*double* pendulum, and ``cartpole_single_pendulum.usda`` needs ``usd-core``. The dimensions are those of
Gymnasium's ``CartPole-v1`` (Barto, Sutton & Anderson, 1983): cart 1.0 kg, pole a uniform rod of 0.1 kg
and length 1.0 m (half-length 0.5 m), so the equations of motion are exactly Gymnasium's.

World layout: coordinates ``joint_q = (x [m], theta [rad])``, ``joint_qd = (x_dot [m/s], theta_dot [rad/s])``;
``theta = 0`` is upright and positive theta tilts the pole's top towards +x. z is up.
"""

from __future__ import annotations

from dataclasses import dataclass

import newton
import numpy as np
import warp as wp

from steel_envs.ranges import any_value, at_least, declare, positive
from steel_envs.solver_options import SteelSolverOptions
from steel_envs.spec import InitialStateSpec, TaskConfig
from steel_envs.vector_env import SteelVectorEnv

__all__ = ["CartpoleScene", "CartpoleSceneConfig"]

CART_MASS = 1.0
"""[kg]"""
POLE_MASS = 0.1
"""[kg]"""
POLE_HALF_LENGTH = 0.5
"""[m], the pivot-to-centre distance of the uniform rod."""


@dataclass(kw_only=True)
class CartpoleSceneConfig(TaskConfig):
    """Scene fields of the cart-pole: actuation and initial-state distribution."""

    force_scale: float = 10.0
    """Cart force at action 1 [N] (Gymnasium CartPole-v1's ``force_mag``)."""
    initial_pole_angle: float = 0.0
    """Mean initial pole angle [rad]; 0 is upright, pi hangs down."""
    reset_noise_scale: float = 0.05
    """Half-width of the uniform noise on x [m], x_dot [m/s], theta [rad] and theta_dot [rad/s] (CartPole-v1)."""

    field_ranges = declare(
        force_scale=positive("the cart force at action 1 [N]; a negative one reverses the actions"),
        initial_pole_angle=any_value("an angle [rad]: every value is a pose of the pole"),
        reset_noise_scale=at_least(0.0, "a noise half-width"),
    )


@wp.kernel(enable_backward=False)
def _apply_cart_force(
    actions: wp.array2d[wp.float32],
    force_scale: wp.float32,
    dof_world_start: wp.array[wp.int32],
    joint_f: wp.array[wp.float32],
):
    w = wp.tid()
    joint_f[dof_world_start[w]] = actions[w, 0] * force_scale


class CartpoleScene(SteelVectorEnv):
    """Cart-pole scene on SolverSteel; tasks subclass it with observations, rewards and terminations.

    Physics: dt 0.01 s, decimation 2 (control dt 0.02 s, Gymnasium's ``tau``). No contacts: collisions are
    off, but the solver's ``constraint_overflow`` term is still evaluated. Action: one value in [-1, 1],
    the cart force ``action * force_scale`` [N].

    The rail: unlimited by default (CartpoleBalance ends the episode at its end instead); a task whose
    :meth:`rail_limit` returns a half-length gives the rail joint the position limits ``[-limit, limit]`` [m],
    which the task's solver options must enforce (``enable_joint_limits=True``), as dm_control's ``slider``
    (``range="-1.8 1.8"``) does.
    """

    min_worlds_per_shard = 256
    # A step is so cheap that a process needs hundreds of worlds to outweigh its round trip: on a 2-core CPU (random
    # actions) two processes (``ShardedVectorEnv``) step CartpoleBalance 0.7x as fast as one with 64 worlds each,
    # 1.06x with 256 each (CartpoleSwingup 1.2x) and 1.6x with 1,024 each.

    config_cls = CartpoleSceneConfig
    config: CartpoleSceneConfig
    physics_dt = 0.01
    decimation = 2
    enable_collisions = False
    add_ground_plane = False
    action_dim = 1
    camera_eye = (0.0, -3.2, 0.9)  # a fixed camera facing the rail
    camera_target = (0.0, 0.0, 0.35)
    # Two joints without contacts or enabled limits create no rows: the default capacities and 12
    # iterations are unused. Joint limits stay off here (CartpoleBalance's rail end is a termination); a task
    # with a limited rail (rail_limit) turns them on in its own solver_defaults.
    solver_defaults = SteelSolverOptions()

    def rail_limit(self) -> float | None:
        """Half-length of the cart's travel [m], the rail joint's position limits ``[-limit, limit]``; None (the
        scene's default): the rail joint has no limits. Tasks override it; it is read once, when the model is built.
        """
        return None

    def build_world(self, builder: newton.ModelBuilder) -> None:
        """Add the cart, its rail joint (limited to :meth:`rail_limit` where that is set), the pole and its hinge
        (no collision shapes)."""
        visual = newton.ModelBuilder.ShapeConfig(density=0.0, has_shape_collision=False, has_particle_collision=False)
        cart = builder.add_link(mass=CART_MASS, inertia=wp.mat33(np.eye(3, dtype=np.float32) * 0.01), label="cart")
        builder.add_shape_box(cart, hx=0.2, hy=0.15, hz=0.1, cfg=visual)
        rod_inertia = POLE_MASS * (2.0 * POLE_HALF_LENGTH) ** 2 / 12.0
        pole = builder.add_link(
            com=wp.vec3(0.0, 0.0, POLE_HALF_LENGTH),
            mass=POLE_MASS,
            inertia=wp.mat33(np.diag([rod_inertia, rod_inertia, 1.0e-6]).astype(np.float32)),
            label="pole",
        )
        builder.add_shape_capsule(
            pole,
            xform=wp.transform(wp.vec3(0.0, 0.0, POLE_HALF_LENGTH), wp.quat_identity()),
            radius=0.02,
            half_height=POLE_HALF_LENGTH,
            cfg=visual,
        )
        limit = self.rail_limit()
        # The rail, drawn only (a static shape without collision): its ends at CartpoleBalance's termination limit,
        # or where the cart's edge (half-width 0.2 m) is when a limited rail stops it.
        rail_half = 2.4 if limit is None else limit + 0.2
        builder.add_shape_box(
            -1,
            xform=wp.transform(wp.vec3(0.0, 0.0, -0.12), wp.quat_identity()),
            hx=rail_half,
            hy=0.03,
            hz=0.02,
            cfg=visual,
        )
        rail = builder.add_joint_prismatic(
            -1,
            cart,
            axis=newton.Axis.X,
            armature=0.0,
            limit_lower=None if limit is None else -limit,
            limit_upper=limit,
            label="rail",
        )
        hinge = builder.add_joint_revolute(cart, pole, axis=newton.Axis.Y, armature=0.0, label="hinge")
        builder.add_articulation([rail, hinge], label="cartpole")

    def initial_state(self) -> InitialStateSpec:
        """Uniform noise of ``reset_noise_scale`` on all four states around ``initial_pole_angle``."""
        noise = float(self.config.reset_noise_scale)
        return InitialStateSpec(
            default_q=np.array([0.0, self.config.initial_pole_angle]),
            default_qd=np.zeros(2),
            q_noise=np.full(2, noise),
            qd_noise=np.full(2, noise),
        )

    def _apply_actions(self) -> None:
        self.launch_per_world(
            _apply_cart_force,
            inputs=[self.actions, float(self.config.force_scale), self.model.joint_dof_world_start],
            outputs=[self.control.joint_f],
        )
