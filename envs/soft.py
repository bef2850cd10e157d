"""Soft-body scene: a volumetric soft block (tetrahedral FEM) on the ground and a rigid pusher on a 2-DOF gantry,
on SolverVBD (the block by vertex block descent, the gantry by AVBD, coupled through contact).

World layout: the gantry (fixed base, prismatic x carriage, prismatic y carriage carrying a box pusher 5 mm above
the ground) and one ``add_soft_grid`` block of ``(cells + 1)^3`` particles and ``5 cells^3`` tetrahedra. Joint
coordinates: gantry x, y [m] (the pusher's position); the block's state is its particles'.
"""

from __future__ import annotations

from dataclasses import dataclass

import newton
import numpy as np
import warp as wp

from steel_envs.ranges import between, declare
from steel_envs.solver_options import VBDSolverOptions
from steel_envs.spec import InitialStateSpec, TaskConfig
from steel_envs.vbd_env import VBDVectorEnv

__all__ = ["PUSHER_HALF", "SoftScene", "SoftSceneConfig"]

PARTICLE_RADIUS = 0.005
"""Particle radius of the soft block [m]."""
PUSHER_HALF = (0.02, 0.05, 0.04)
"""Half extents of the box pusher [m]."""
PUSHER_START = (-0.3, 0.0)
"""Pusher x, y at the start of an episode [m]."""


_CHECKED = "outside this range the scene's physics is unchecked"


@dataclass(kw_only=True)
class SoftSceneConfig(TaskConfig):
    """Scene fields of the soft-body scene."""

    block_cells: int = 3
    """Cells per side of the cubic soft grid; (cells + 1)^3 particles, 5 cells^3 tetrahedra. The default 3 (4 cm
    cells, 64 particles, 135 tetrahedra) is the coarsest grid whose gaps between particles (4 cm spacing less two
    5 mm radii) are narrower than the pusher's narrow face (4 cm): contact is particle against shape."""
    block_size: float = 0.12
    """Side length of the block [m]."""
    block_density: float = 500.0
    """Density of the block [kg/m^3]."""
    block_youngs_modulus: float = 5.0e4
    """Young's modulus of the block's neo-Hookean material [Pa] (a soft gel)."""
    block_poisson_ratio: float = 0.3
    """Poisson ratio of the block's material, in (0, 0.5)."""
    block_spawn: float = 0.05
    """The block's centre starts at U(-s, s)^2 [m] around the origin."""
    block_drop_height: float = 0.0
    """The block starts this high above resting on the ground [m]."""
    max_pusher_speed: float = 0.4
    """Pusher velocity at action 1 along an axis [m/s], tracked by the gantry's velocity drives."""
    drive_damping: float = 500.0
    """Velocity drive gain ``joint_target_kd`` of the gantry [N s/m]."""

    field_ranges = declare(
        block_cells=between(1, 16, "cells per side; the particle count grows with their cube", integer=True),
        block_size=between(0.02, 0.5, f"a side length [m]; {_CHECKED}"),
        block_density=between(10.0, 1e4, f"a density [kg/m^3]; {_CHECKED}"),
        block_youngs_modulus=between(1e2, 1e8, f"a stiffness [Pa]; {_CHECKED}"),
        block_poisson_ratio=between(
            0.0, 0.5, "a Poisson ratio; at 0.5 the material is incompressible", low_open=True, high_open=True
        ),
        block_spawn=between(0.0, 0.3, f"a half-width [m]; {_CHECKED}"),
        block_drop_height=between(0.0, 1.0, f"a height above resting [m]; {_CHECKED}"),
        max_pusher_speed=between(1e-3, 5.0, f"a speed [m/s]; {_CHECKED}"),
        drive_damping=between(1.0, 1e6, f"a velocity drive gain [N s/m]; {_CHECKED}"),
    )


@wp.kernel(enable_backward=False)
def _pusher_targets(
    actions: wp.array2d[wp.float32],
    max_speed: wp.float32,
    dt: wp.float32,
    body_world_start: wp.array[wp.int32],
    dof_world_start: wp.array[wp.int32],
    body_q: wp.array[wp.transform],
    lower: wp.array[wp.float32],
    upper: wp.array[wp.float32],
    joint_target_qd: wp.array[wp.float32],
):
    """Velocity target of gantry DOF ``k`` of world ``w``: ``action * max_speed``, clamped so that one physics step at
    the target ends inside the DOF's limits (``(lower - q) / dt <= target <= (upper - q) / dt``). ``q`` is read from
    the bodies (SolverVBD keeps no joint coordinates): the carriage's x for ``gantry_x``, the pusher's y relative to
    the carriage for ``gantry_y``."""
    w, k = wp.tid()
    b = body_world_start[w]
    carriage = wp.transform_get_translation(body_q[b])
    pusher = wp.transform_get_translation(body_q[b + 1])
    q = carriage[0]
    if k == 1:
        q = pusher[1] - carriage[1]
    d = dof_world_start[w] + k
    target = actions[w, k] * max_speed
    if wp.isfinite(q):
        target = wp.clamp(target, (lower[d] - q) / dt, (upper[d] - q) / dt)
    joint_target_qd[d] = target


@wp.kernel(enable_backward=False)
def _spawn_blocks(
    world_mask: wp.array[wp.bool],
    spawn: wp.float32,
    particle_world_start: wp.array[wp.int32],
    rng_state: wp.array[wp.uint32],
    particle_q: wp.array[wp.vec3],
):
    """Translate the block of each selected world by U(-spawn, spawn)^2 (its particles start at the model's)."""
    w = wp.tid()
    if not world_mask[w]:
        return
    rng = rng_state[w]
    offset = wp.vec3(spawn * (2.0 * wp.randf(rng) - 1.0), spawn * (2.0 * wp.randf(rng) - 1.0), 0.0)
    rng_state[w] = rng
    for i in range(particle_world_start[w], particle_world_start[w + 1]):
        particle_q[i] = particle_q[i] + offset


def _reject_unenforced_limits(model: newton.Model) -> None:
    """Raise ValueError if a DOF declares an effort or velocity limit: SolverVBD ignores both.

    A declared limit is one below the builder's default (1e6), which stands for none.
    """
    default = newton.ModelBuilder.JointDofConfig()
    qd_start = model.joint_qd_start.numpy()
    for name, values, unlimited in (
        ("joint_effort_limit", model.joint_effort_limit.numpy(), default.effort_limit),
        ("joint_velocity_limit", model.joint_velocity_limit.numpy(), default.velocity_limit),
    ):
        for j in range(model.joint_count):
            for d in range(int(qd_start[j]), int(qd_start[j + 1])):
                if values[d] < unlimited:
                    raise ValueError(
                        f"joint {model.joint_label[j]!r} declares {name} = {values[d]:g} on DOF {d - qd_start[j]}, "
                        f"which SolverVBD does not enforce; remove it or enforce it in the scene"
                    )


class SoftScene(VBDVectorEnv):
    """A soft block and a velocity-driven box pusher on a 2-DOF gantry, on SolverVBD.

    Physics: dt 0.01 s, decimation 5 (control dt 0.05 s). Action: 2 values in [-1, 1], the pusher's x, y velocity
    targets ``action * max_pusher_speed`` [m/s], clamped by the env before every physics step to the gantry's
    limits (below).

    Joint limits: the gantry's travel is +-0.6 m on x and y. SolverVBD enforces position limits only as a spring
    (``joint_limit_ke = 1e4`` N/m, ``joint_limit_kd = 10``), which the drive compresses: a saturated action held the
    pusher 2 cm past the limit. So the env clamps each velocity target before every physics step to
    ``[(lower - q) / dt, (upper - q) / dt]``, the velocities that end the step inside the range, with ``q`` the
    DOF's coordinate read from the bodies; the pusher then stops at the limit (measured at most 1 mm past it) and
    the spring remains as a backstop. SolverVBD does not enforce ``joint_effort_limit`` or
    ``joint_velocity_limit`` at all (its reference page lists both as not supported): the gantry declares neither
    (the builder's defaults, 1e6, mean none), the drive force is ``drive_damping * (target - v)`` unbounded, and
    the pusher's speed is bounded by ``max_pusher_speed`` through the target. A scene that declares either on a
    DOF makes construction raise ValueError naming the joint.

    Materials: the block's Lame parameters from ``block_youngs_modulus`` and ``block_poisson_ratio``
    (``k_mu = E / (2 (1 + nu))``, ``k_lambda = E nu / ((1 + nu)(1 - 2 nu))``), ``k_damp = 1e-3``; the particles'
    contact material ``soft_contact_ke = 2e4`` N/m, ``soft_contact_kd = 1e-2``, ``soft_contact_mu = 0.5``, which
    SolverVBD mixes with each shape's (ke and kd averaged, mu their geometric mean): against the ground (the
    builder's default material, ke 2.5e3, kd 100, mu 1) ke 1.125e4 N/m, mu 0.71; against the pusher (mu 0.5) ke
    1.125e4 N/m, mu 0.5. ``soft_contact_ke`` is 2e4 because the 3-cell block's particles are heavy (twice a
    4-cell block's): at 1e4 its resting bottom layer sinks 0.5 mm (of the 5 mm radius) into the ground, at 2e4
    0.3 mm. Solver options that differ from Newton's defaults, from the reference page's guidance:

    - ``rigid_compliant_alm=True``: the page's recommended rigid path (the legacy one is deprecated).
    - ``particle_enable_self_contact`` stays off: a convex block pushed on the ground does not fold onto itself
      ("self-contact only where needed"), and it would cost a BVH query per vertex and edge every iteration.
      Its interaction distance ``particle_self_contact_margin`` and ``particle_self_contact_gap`` are set to the
      particle radius (5 mm) all the same: with Newton's default (0.2 m, wider than a 4 cm cell) turning
      self-contact on would crush the block.
    - ``iterations=5`` (Newton's default is 10), with 5 substeps of 0.01 s and the 3-cell block: the cost is one
      neo-Hookean tetrahedron evaluation per tetrahedron corner per iteration per substep (the rest is small), so
      5 iterations cost half of Newton's 10. On a face-on push at full speed (target 0.4 m/s) the pusher and
      block move at 0.32 m/s (the coupled block-pusher solve converges towards 0.38 m/s with 30 iterations at
      0.005 s), the block keeps 99 % of its volume and its particle centres stay 4.3 mm or more above the ground
      (radius 5 mm). Longer substeps cost fidelity faster than fewer iterations do: with 2 substeps of 0.025 s the
      pushed block loses 13 % of its volume and particle centres go 3 mm below the ground at 5 iterations (at 10:
      1 % and 2.4 mm above).
    - Buffers keep their defaults: the pusher meets one face of the block ((cells + 1)^2 = 16 particles at the
      default size, under ``rigid_body_particle_contact_buffer_size`` 256); overflows are reported per world.
    """

    min_worlds_per_shard = 2
    # On a 2-core CPU (random actions) two processes (``ShardedVectorEnv``) step 1.6x as many env-steps/s as one
    # with 2 worlds each, 1.9x with 8 each.

    config_cls = SoftSceneConfig
    config: SoftSceneConfig
    physics_dt = 0.01
    decimation = 5
    enable_collisions = True
    add_ground_plane = True
    action_dim = 2
    camera_eye = (0.0, -0.9, 0.8)
    camera_target = (0.0, 0.0, 0.0)
    soft_contact_ke = 2.0e4
    soft_contact_kd = 1.0e-2
    soft_contact_mu = 0.5
    soft_contact_gap = 0.005
    solver_defaults = VBDSolverOptions(
        rigid_compliant_alm=True,
        iterations=5,
        # Used only if a user turns self-contact on: Newton's default interaction distance (0.2 m) is wider than
        # the block's 4 cm cells and would crush it; the particle radius is the block's contact thickness.
        particle_self_contact_margin=PARTICLE_RADIUS,
        particle_self_contact_gap=PARTICLE_RADIUS,
    )

    @property
    def particles_per_world(self) -> int:
        """(cells + 1)^3 particles per world."""
        return (int(self.config.block_cells) + 1) ** 3

    def build_world(self, builder: newton.ModelBuilder) -> None:
        """The gantry with its pusher at ``PUSHER_START``, then the block resting on the ground at the origin."""
        c = self.config
        dof = newton.ModelBuilder.JointDofConfig
        z = PUSHER_HALF[2] + 0.005
        start = wp.transform(wp.vec3(PUSHER_START[0], PUSHER_START[1], z), wp.quat_identity())
        inertia = wp.mat33(np.eye(3, dtype=np.float32) * 0.01)
        carriage_x = builder.add_link(xform=start, mass=1.0, inertia=inertia, label="carriage_x")
        pusher = builder.add_link(xform=start, mass=0.5, inertia=inertia, label="pusher")
        builder.add_shape_box(
            pusher,
            hx=PUSHER_HALF[0],
            hy=PUSHER_HALF[1],
            hz=PUSHER_HALF[2],
            cfg=newton.ModelBuilder.ShapeConfig(density=0.0, mu=0.5),
        )
        jx = builder.add_joint_prismatic(
            -1,
            carriage_x,
            parent_xform=wp.transform(wp.vec3(0.0, 0.0, z), wp.quat_identity()),
            axis=dof(axis=newton.Axis.X, target_kd=c.drive_damping, limit_lower=-0.6, limit_upper=0.6),
            label="gantry_x",
        )
        jy = builder.add_joint_prismatic(
            carriage_x,
            pusher,
            axis=dof(axis=newton.Axis.Y, target_kd=c.drive_damping, limit_lower=-0.6, limit_upper=0.6),
            label="gantry_y",
        )
        builder.add_articulation([jx, jy], label="gantry")
        builder.joint_q[-2:] = list(PUSHER_START)
        n = int(c.block_cells)
        cell = float(c.block_size) / n
        e, nu = float(c.block_youngs_modulus), float(c.block_poisson_ratio)
        builder.add_soft_grid(
            pos=wp.vec3(-0.5 * c.block_size, -0.5 * c.block_size, PARTICLE_RADIUS + c.block_drop_height),
            rot=wp.quat_identity(),
            vel=wp.vec3(0.0, 0.0, 0.0),
            dim_x=n,
            dim_y=n,
            dim_z=n,
            cell_x=cell,
            cell_y=cell,
            cell_z=cell,
            density=float(c.block_density),
            k_mu=e / (2.0 * (1.0 + nu)),
            k_lambda=e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu)),
            k_damp=1.0e-3,
            particle_radius=PARTICLE_RADIUS,
        )

    def initial_state(self) -> InitialStateSpec:
        """Pusher at ``PUSHER_START``, at rest; the block at the model's rest positions, moved by the task."""
        z = np.zeros(2)
        return InitialStateSpec(default_q=np.asarray(PUSHER_START), default_qd=z, q_noise=z, qd_noise=z)

    def _setup_scene(self) -> None:
        _reject_unenforced_limits(self.model)

    def _apply_actions(self) -> None:
        """The velocity targets are written in :meth:`_before_substep`, from ``self.actions`` and the state."""

    def _before_substep(self, state: newton.State) -> None:
        m = self.model
        wp.launch(
            _pusher_targets,
            (self.num_envs, self.action_dim),
            inputs=[
                self.actions,
                float(self.config.max_pusher_speed),
                float(self.physics_dt),
                m.body_world_start,
                m.joint_dof_world_start,
                state.body_q,
                m.joint_limit_lower,
                m.joint_limit_upper,
            ],
            outputs=[self.control.joint_target_qd],
            device=self.wp_device,
        )

    def _reset_physics_state(self, world_mask: wp.array) -> None:
        super()._reset_physics_state(world_mask)
        if self.config.block_spawn > 0.0:
            self.launch_per_world(
                _spawn_blocks,
                inputs=[world_mask, float(self.config.block_spawn), self.model.particle_world_start],
                outputs=[self.rng_state, self.state_0.particle_q],
            )
