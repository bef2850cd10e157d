"""Cloth scene: a square cloth lying on the ground, two corners of one edge held by the agent, on SolverVBD.

World layout: one ``add_cloth_grid`` of ``(cells + 1)^2`` particles, row-major from the (-x, -y) corner (particle
``j * (cells + 1) + i`` sits at grid column ``i`` along x and row ``j`` along y), no joints and no bodies; the
ground plane is shared. The two grasped corners are the ends of row 0, (0, 0) and (cells, 0); they are kinematic
(``ParticleFlags.ACTIVE`` cleared, as Newton's pinned particles): before every physics step their positions are
advanced by the commanded velocity and kept inside the workspace, and the cloth reacts to them. SolverVBD owns
the collision pipeline (its rigid-soft truncation needs it), so the env runs none of its own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import newton
import numpy as np
import warp as wp
from newton.solvers import SolverVBD

from steel_envs.ranges import at_least, between, declare
from steel_envs.solver_options import VBDSolverOptions
from steel_envs.spec import InitialStateSpec, TaskConfig
from steel_envs.vbd_env import VBDVectorEnv, no_joints

__all__ = ["ClothScene", "ClothSceneConfig", "add_towel", "solver_with_own_pipeline"]


_CHECKED = "outside this range the scene's physics is unchecked"


@dataclass(kw_only=True)
class ClothSceneConfig(TaskConfig):
    """Scene fields of the cloth scene."""

    cloth_cells: int = 8
    """Cells per side of the square grid (even, so the fold line is a particle row); (cells + 1)^2 particles. 8
    steps 3.8x as fast as 16, and the scripted fold and the ground contact hold as well."""
    cloth_size: float = 0.4
    """Side length of the cloth [m]."""
    cloth_mass: float = 0.1
    """Total mass of the cloth [kg], spread evenly over the particles."""
    max_corner_speed: float = 0.5
    """Speed of a grasped corner at action 1 along an axis [m/s]."""
    workspace_half_extent: float = 0.5
    """Grasped corners are kept within |x|, |y| <= this [m]."""
    workspace_height: float = 0.4
    """Grasped corners are kept below this height [m] (and above the particle radius)."""
    cloth_drop_height: float = 0.0
    """The flat cloth starts this high above its resting height (the particle radius) [m]. The grasped corners
    start there too and stay until moved (they are kinematic), and ``reward_flatness`` of ClothFold measures
    drift from this raised start: a setting for physics checks, not for the task."""

    field_ranges = declare(
        cloth_cells=between(4, 64, "cells per side, even; the particle count grows with their square", integer=True),
        cloth_size=between(0.05, 2.0, f"a side length [m]; {_CHECKED}"),
        cloth_mass=between(1e-3, 10.0, f"a mass [kg]; {_CHECKED}"),
        max_corner_speed=between(1e-3, 5.0, f"a speed [m/s]; {_CHECKED}"),
        workspace_half_extent=between(0.025, 2.0, f"a half-width [m]; {_CHECKED}"),
        workspace_height=between(0.01, 2.0, f"a height [m]; {_CHECKED}"),
        cloth_drop_height=at_least(0.0, "a height above resting [m]; below 0 the cloth starts in the ground"),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0.5 * self.cloth_size <= self.workspace_half_extent:
            raise ValueError(
                f"cloth_size: expected at most 2 * workspace_half_extent = {2 * self.workspace_half_extent!r} (the "
                f"held corners start inside the workspace), got {self.cloth_size!r}"
            )
        if not self.cloth_drop_height + PARTICLE_RADIUS < self.workspace_height:
            raise ValueError(
                f"cloth_drop_height: expected below workspace_height - {PARTICLE_RADIUS} m, "
                f"got {self.cloth_drop_height!r}"
            )
        c = self.cloth_cells
        if not float(c).is_integer() or not 4 <= c <= 64 or int(c) % 2:
            raise ValueError(f"cloth_cells: expected an even int in [4, 64], got {c!r}")


PARTICLE_RADIUS = 0.005
"""Particle radius of the cloth [m]: its contact thickness against the ground."""


def add_towel(builder: newton.ModelBuilder, corner: tuple[float, float, float], cells: int, size: float, mass: float):
    """Add a flat square towel to ``builder``: ``cells`` x ``cells`` cells of side ``size`` [m] from its (-x, -y)
    ``corner`` [m], total ``mass`` [kg] spread evenly over the particles; membrane ``tri_ke = tri_ka = 1e3``,
    ``tri_kd = 1e-5``, bending ``edge_ke = 1e-3`` (a soft towel that folds over under its weight), particle radius
    :data:`PARTICLE_RADIUS`."""
    cell = size / cells
    builder.add_cloth_grid(
        pos=wp.vec3(*corner),
        rot=wp.quat_identity(),
        vel=wp.vec3(0.0, 0.0, 0.0),
        dim_x=cells,
        dim_y=cells,
        cell_x=cell,
        cell_y=cell,
        mass=mass / (cells + 1) ** 2,
        tri_ke=1.0e3,
        tri_ka=1.0e3,
        tri_kd=1.0e-5,
        edge_ke=1.0e-3,
        edge_kd=0.0,
        particle_radius=PARTICLE_RADIUS,
    )


def solver_with_own_pipeline(env: VBDVectorEnv) -> SolverVBD:
    """SolverVBD for ``env`` with a collision pipeline of its own (``soft_contact_gap`` and the capacity
    ``soft_contacts_per_particle`` from the env), which ``rigid_soft_enable_dat`` requires: the solver detects its
    contacts itself every physics step, so the env runs none (``enable_collisions = False``)."""
    gap = float(env.soft_contact_gap)
    capacity = max(math.ceil(env.soft_contacts_per_particle * env.model.particle_count), 1)
    pipeline = newton.CollisionPipeline(env.model, soft_contact_gap=gap, soft_contact_max=capacity)
    if pipeline.soft_contact_pair_count < capacity:
        # Fewer pairs than that (a cloth alone on the ground): Newton's default, every pair. SolverVBD sizes its
        # contact state by the pairs and would grow it during the first, captured step otherwise.
        pipeline = newton.CollisionPipeline(env.model, soft_contact_gap=gap)
    return SolverVBD(env.model, collision_pipeline=pipeline, **env.solver_options.as_kwargs())


@wp.kernel(enable_backward=False)
def _move_corners(
    actions: wp.array2d[wp.float32],
    max_speed: wp.float32,
    corners: wp.array[wp.int32],
    particle_world_start: wp.array[wp.int32],
    dt: wp.float32,
    half_extent: wp.float32,
    z_min: wp.float32,
    z_max: wp.float32,
    particle_q: wp.array[wp.vec3],
    particle_qd: wp.array[wp.vec3],
):
    """Advance grasped corner ``k`` of world ``w`` by its commanded velocity for one physics step, clamped to the
    workspace; its velocity becomes the displacement over ``dt``."""
    w, k = wp.tid()
    i = particle_world_start[w] + corners[k]
    v = wp.vec3(actions[w, 3 * k], actions[w, 3 * k + 1], actions[w, 3 * k + 2]) * max_speed
    p = particle_q[i]
    if not (wp.isfinite(p[0]) and wp.isfinite(p[1]) and wp.isfinite(p[2])):
        return  # left as it is, so the non-finite check ends the world (clamping would hide the NaN)
    target = p + v * dt
    target = wp.vec3(
        wp.clamp(target[0], -half_extent, half_extent),
        wp.clamp(target[1], -half_extent, half_extent),
        wp.clamp(target[2], z_min, z_max),
    )
    particle_q[i] = target
    particle_qd[i] = (target - p) / dt


class ClothScene(VBDVectorEnv):
    """A square cloth on the ground on SolverVBD, two corners of its -y edge held by the agent.

    Physics: dt 0.01 s, decimation 5 (control dt 0.05 s). Action: 6 values in [-1, 1], the x, y, z velocities of
    the two grasped corners, times ``max_corner_speed`` [m/s].

    Cloth material: membrane ``tri_ke = tri_ka = 1e3``, ``tri_kd = 1e-5``, bending ``edge_ke = 1e-3`` (a soft
    towel that folds over under its weight); 8 x 8 cells (81 particles) by default; particle radius 5 mm; ground
    contact ``soft_contact_ke = 1e3`` N/m (SolverVBD averages it with the ground shape's 2.5e3; the self-contact
    stiffness is ``soft_contact_ke`` alone), ``mu = 0.5``. Solver options that differ from Newton's defaults, each
    from the reference page's guidance:

    - ``particle_enable_self_contact=True``: a fold lays the cloth on itself; without self-contact the moving
      half passes through the resting half. Interaction distance ``particle_self_contact_margin`` 5 mm (the
      particle radius), detection slack ``particle_self_contact_gap`` 5 mm (the docstring: 0.5-1x the margin).
    - ``rigid_soft_enable_dat=True`` with a solver-owned ``CollisionPipeline`` (``soft_contact_gap`` 5 mm):
      particle displacements are truncated against the particle-ground division planes, as self-contact
      truncates them against each other. Without it, self-contact's truncation can hold a particle under a
      crumpled layer while the ground's penalty force pushes in vain: corners dragged towards each other along
      the ground put particle centres 43 mm under it in 40 steps (1.40 m in 300, 16 x 16 cells), and neither a
      stiffer ground (shape ``ke`` up to 1e7 N/m), the log-barrier ground law, 20 iterations, 10 substeps, a 10 mm
      self-contact distance, self-contact detection before every iteration nor held corners kept 2 cm up
      stops it. With it no particle centre goes below the ground (``tests/test_cloth_contact.py``); it costs
      4-7 % of the env-steps/s.
    - ``iterations=5`` (Newton's default 10): the scripted fold and the contact checks hold at 5; 1.6x faster.
    - ``particle_edge_contact_buffer_size=128`` (default 64): a policy crumpling the cloth (corners driven to the
      centre, bobbing up and down, then random) peaks at 75 edge-edge candidates per edge and 16
      vertex-triangle candidates per vertex on a 16 x 16 grid; on the 8 x 8 grid the action families of
      ``tests/test_cloth_contact.py`` and ``scripted_policy`` (100 steps each) peak at 38 and 14 (counted
      after every physics step); the vertex buffer keeps its default of 32. Overflows are
      reported per world in ``info["constraint_overflow"]``.
    """

    min_worlds_per_shard = 1
    # A step is costly enough that one world per process pays: on a 2-core CPU (random actions) two processes
    # (``ShardedVectorEnv``) step 1.5x as many env-steps/s as one with 1 world each, 1.9x with 16 each.

    config_cls = ClothSceneConfig
    config: ClothSceneConfig
    physics_dt = 0.01
    decimation = 5
    enable_collisions = False  # the solver owns the collision pipeline (see _make_solver)
    add_ground_plane = True
    action_dim = 6
    camera_eye = (0.0, -0.7, 0.7)
    camera_target = (0.0, 0.0, 0.0)
    soft_contact_ke = 1.0e3
    soft_contact_kd = 1.0e-2
    soft_contact_mu = 0.5
    soft_contact_gap = 0.005
    solver_defaults = VBDSolverOptions(
        rigid_compliant_alm=True,
        iterations=5,
        particle_enable_self_contact=True,
        particle_self_contact_margin=PARTICLE_RADIUS,
        particle_self_contact_gap=PARTICLE_RADIUS,
        particle_edge_contact_buffer_size=128,
        rigid_soft_enable_dat=True,
    )

    @property
    def particles_per_world(self) -> int:
        """(cells + 1)^2 particles per world."""
        return (int(self.config.cloth_cells) + 1) ** 2

    def grid_index(self, i: int, j: int) -> int:
        """Index within a world of the particle at column ``i`` (along x) and row ``j`` (along y)."""
        return j * (int(self.config.cloth_cells) + 1) + i

    @property
    def grasped_corners(self) -> tuple[int, int]:
        """Particle indices within a world of the grasped corners, (0, 0) and (cells, 0)."""
        n = int(self.config.cloth_cells)
        return self.grid_index(0, 0), self.grid_index(n, 0)

    def build_world(self, builder: newton.ModelBuilder) -> None:
        """The cloth, flat, centred on the origin, ``cloth_drop_height`` above resting on the ground (particle
        centres at the particle radius)."""
        c = self.config
        n = int(c.cloth_cells)
        first = len(builder.particle_q)
        add_towel(
            builder,
            (-0.5 * c.cloth_size, -0.5 * c.cloth_size, PARTICLE_RADIUS + c.cloth_drop_height),
            n,
            float(c.cloth_size),
            float(c.cloth_mass),
        )
        for k in self.grasped_corners:
            builder.particle_flags[first + k] &= ~int(newton.ParticleFlags.ACTIVE)

    def initial_state(self) -> InitialStateSpec:
        """No joints: the cloth starts flat at the model's particle positions, at rest."""
        return no_joints()

    def _make_solver(self) -> SolverVBD:
        """SolverVBD with its own collision pipeline, which ``rigid_soft_enable_dat`` requires: the solver detects
        particle-ground contacts itself (before and right after its initialization, every physics step) into
        its own buffer, so the env runs no pipeline (``enable_collisions = False``) and steps with no contacts."""
        return solver_with_own_pipeline(self)

    def _setup_scene(self) -> None:
        self._corners = wp.array(np.asarray(self.grasped_corners, np.int32), dtype=wp.int32)

    def _apply_actions(self) -> None:
        """The corners move in :meth:`_before_substep`, from ``self.actions``."""

    def _before_substep(self, state: newton.State) -> None:
        c = self.config
        wp.launch(
            _move_corners,
            (self.num_envs, 2),
            inputs=[
                self.actions,
                float(c.max_corner_speed),
                self._corners,
                self.model.particle_world_start,
                float(self.physics_dt),
                float(c.workspace_half_extent),
                PARTICLE_RADIUS,
                float(c.workspace_height),
            ],
            outputs=[state.particle_q, state.particle_qd],
            device=self.wp_device,
        )
