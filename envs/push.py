"""Push scene: free rigid cubes on the ground and a procedurally built 2-DOF gantry whose finger pushes them.

World layout: the gantry (a fixed-base chain: prismatic x carriage, prismatic y carriage with a spherical
finger of 3 cm radius, 5 mm above the ground) then the cube and ``clutter`` more cubes, each a free body.
Coordinates: gantry x, y [m]; then per cube (x, y, z [m], qx, qy, qz, qw). DOFs: gantry x, y [m/s]; per cube
(v, omega).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import newton
import numpy as np
import warp as wp

from steel_envs import kernels
from steel_envs.ranges import between, declare, positive
from steel_envs.solver_options import SteelSolverOptions
from steel_envs.spec import InitialStateSpec, TaskConfig
from steel_envs.vector_env import SteelVectorEnv

__all__ = ["CUBE_HALF", "FINGER_RADIUS", "PushScene", "PushSceneConfig"]

CUBE_HALF = 0.05
"""Cube half-extent [m]."""
FINGER_RADIUS = 0.03
"""Radius of the spherical finger [m]."""
GANTRY_DOFS = 2
CUBE_COORDS = 7
CUBE_DOFS = 6
MAX_CLUTTER = 8
"""Most clutter cubes: with the target cube, one per cell of the 3 x 3 spawn grid."""
_SPAWN_CELLS = wp.constant(3)
"""Cells per side of the spawn grid used with clutter."""
_SPAWN_GAP = wp.constant(0.005)
"""Least clearance [m] between a cube's spawn region and its cell's border (two neighbours: 1 cm apart)."""
_MIN_CLUTTER_SPAWN = 0.5 * _SPAWN_CELLS * (2.0 * CUBE_HALF + 2.0 * _SPAWN_GAP)
"""Least ``cube_spawn`` [m] with clutter: grid cells as wide as a cube plus twice the clearance (0.165)."""
_CONTACTS_PER_CUBE = 16
"""Contact capacity per clutter cube, added to ``PushScene.rigid_contacts_per_world``. Measured (newton 1.8.0, CPU,
steel-envs doctor, 16 worlds x 100 steps of random, bang-bang and zero actions): 601 contacts in all with 4 clutter
cubes, 1,621 with 8, against capacities of 1,216 and 2,240 (2.0x, 1.4x)."""
_ROWS_PER_CUBE = 32
"""Propagation-row capacity per clutter cube, added to ``propagation_constraint_max``. Measured as above: up to 107
rows per world with 4 clutter cubes, 231 with 8, against 384 and 512 (3.6x, 2.2x)."""


@wp.kernel(enable_backward=False)
def _spawn_on_grid(
    world_mask: wp.array[wp.bool],
    cubes: wp.int32,
    spawn: wp.float32,
    joint_coord_world_start: wp.array[wp.int32],
    body_world_start: wp.array[wp.int32],
    rng_state: wp.array[wp.uint32],
    joint_q: wp.array[wp.float32],
    body_q: wp.array[wp.transform],
):
    """Move the cubes of the selected worlds to distinct random cells of the 3 x 3 grid over [-spawn, spawn]^2,
    each at a uniform offset about its cell's centre that keeps it ``_SPAWN_GAP`` inside the cell; the cells are
    drawn without replacement (the r-th free cell, r uniform over the free ones)."""
    w = wp.tid()
    if not world_mask[w]:
        return
    rng = rng_state[w]
    cell = 2.0 * spawn / float(_SPAWN_CELLS)
    jitter = 0.5 * cell - CUBE_HALF - _SPAWN_GAP
    used = int(0)
    for k in range(cubes):
        r = wp.randi(rng, 0, _SPAWN_CELLS * _SPAWN_CELLS - k)
        c = int(0)
        free = int(0)
        for i in range(_SPAWN_CELLS * _SPAWN_CELLS):
            if (used >> i) & 1 == 0:
                if free == r:
                    c = i
                free += 1
        used = used | (1 << c)
        x = -spawn + cell * (float(c % _SPAWN_CELLS) + 0.5) + jitter * (2.0 * wp.randf(rng) - 1.0)
        y = -spawn + cell * (float(c // _SPAWN_CELLS) + 0.5) + jitter * (2.0 * wp.randf(rng) - 1.0)
        q = joint_coord_world_start[w] + GANTRY_DOFS + CUBE_COORDS * k
        joint_q[q] = x
        joint_q[q + 1] = y
        b = body_world_start[w] + 2 + k
        pose = body_q[b]
        p = wp.transform_get_translation(pose)
        body_q[b] = wp.transform(wp.vec3(x, y, p[2]), wp.transform_get_rotation(pose))
    rng_state[w] = rng


@dataclass(kw_only=True)
class PushSceneConfig(TaskConfig):
    """Scene fields of the push scene."""

    clutter: int = 0
    """Additional free cubes, at most 8. With clutter, every cube (the target cube too) starts in its own cell of a
    3 x 3 grid over the spawn square, drawn at random, at U(-j, j)^2 about the cell's centre (j = cell / 2 - 5.5 cm),
    so no two cubes overlap."""
    max_finger_speed: float = 0.5
    """Finger velocity at action 1 [m/s], tracked by the gantry's velocity drives."""
    drive_damping: float = 200.0
    """Velocity drive gain ``joint_target_kd`` of the gantry [N s/m]."""
    cube_spawn: float = 0.3
    """Cubes start at U(-s, s) in x and y [m]."""

    field_ranges = declare(
        clutter=between(0, 8, "extra cubes; the spawn grid has 9 cells, one for the target cube", integer=True),
        max_finger_speed=positive("the finger's speed at action 1 [m/s]; a negative one reverses the actions"),
        drive_damping=positive("a velocity drive gain [N s/m]; 0 leaves the finger undriven"),
        cube_spawn=positive("the half-width of the spawn square [m]"),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.clutter and self.cube_spawn < _MIN_CLUTTER_SPAWN:
            raise ValueError(
                f"cube_spawn: expected >= {_MIN_CLUTTER_SPAWN} m with clutter (grid cells wider than a cube), got "
                f"{self.cube_spawn!r}"
            )


class PushScene(SteelVectorEnv):
    """Free cubes and a velocity-driven gantry finger on SolverSteel.

    Physics: dt 0.02 s, decimation 2 (control dt 0.04 s), 8 PGS iterations. Action: 2 values in [-1, 1], the
    finger's x, y velocity targets ``action * max_finger_speed`` [m/s].

    Solver options, from the options page's guidance for free bodies: ``solve_mode="colored"`` (on CUDA; the CPU
    runs the serial sweep) with ``articulated_contact_response="propagation"`` (required by the colored sweep;
    contacts of free bodies and of the gantry's finger are then per-body rows whose capacity is
    ``propagation_constraint_max``).
    ``enable_sleeping`` stays off: on the CPU Steel raises NotImplementedError for sleeping with the colored
    sweep, and a pushed pile rarely rests long enough to gain from it; pass it with ``solve_mode="serial"``.

    Joint limits: the gantry's position limits (``gantry_x`` in [-1, 2] m, ``gantry_y`` in [-1, 1] m, the finger at
    world x in [-1.5, 1.5] m) are limit rows (``enable_joint_limits=True``, created within 0.1 m of a limit), which
    stop the velocity drives at the ends of the travel (measured: no excursion past a limit under saturated, bang-
    bang and random actions). No effort or velocity limit is declared (the builder's defaults, which mean none).
    """

    min_worlds_per_shard = 16
    # Contact watermark (newton 1.8.0, CPU, steel-envs doctor, 32 worlds x 200 steps of random, bang-bang and zero
    # actions): 164 contacts in all, 5.1 per world; 12 keeps 2.3x headroom (Newton's estimate, 31 per world, would
    # cost time: the deterministic order sorts every slot each step). With clutter, ``__init__`` adds
    # _CONTACTS_PER_CUBE per clutter cube.
    rigid_contacts_per_world = 12
    # min_worlds_per_shard: with fewer worlds per process a step's round trip through the pipes costs more than the
    # second process saves (2-core CPU, random actions); with 64 each two processes (``ShardedVectorEnv``) step 1.9x
    # as many env-steps/s as one.

    config_cls = PushSceneConfig
    config: PushSceneConfig
    # dt 0.02 s x 2 and 8 iterations: learning PushCube-v0 is bound by the physics, and a control step costs half
    # as much as with 0.01 s x 4 and 12 iterations. Against dt 0.005 s x 8 over 150 steps of 32 worlds the cube's
    # mean position error under the scripted solver is 8.9 mm (5.2 at dt 0.01), its height stays within 0.2 mm of
    # resting, and the scripted solver succeeds in every episode; ``steel-envs doctor`` passes.
    physics_dt = 0.02
    decimation = 2
    enable_collisions = True
    add_ground_plane = True
    action_dim = 2
    camera_eye = (0.0, -0.85, 0.85)  # the +-0.6 m workspace fills the frame; cube and finger read at a glance
    camera_target = (0.0, 0.05, 0.0)
    solver_defaults = SteelSolverOptions(
        # The gantry declares position limits (x in [-1, 2] m, y in [-1, 1] m from its start); the options page: set
        # True whenever the model authors joint limits. Without it a constant action drives the finger 2 m past
        # them. The activation gap [m] stays above 2 * max|qd| * dt (options page) up to finger speeds of 2.5 m/s,
        # 5x the default max_finger_speed. Rows then exist only near the ends of the travel: with inf (4 rows
        # every step) the env runs 10 % slower than without limits, with this gap 1 %.
        enable_joint_limits=True,
        joint_limit_activation_gap=0.1,
        articulated_contact_response="propagation",
        # Measured with row_watermark=True (newton 1.8.0, CPU, 16 worlds, 4 clutter cubes, 150 steps of random
        # finger velocities): up to 109 propagation rows per world; 256 keeps 2x headroom. With clutter,
        # ``__init__`` adds _ROWS_PER_CUBE per clutter cube.
        propagation_constraint_max=256,
        iterations=8,
    )
    # The colored sweep is CUDA-only: on the CPU Steel runs the serial propagation sweep either way (and warns
    # when asked for "colored"), so the CPU default is "serial" with the same propagation response.
    solver_defaults_cuda = dataclasses.replace(solver_defaults, solve_mode="colored")

    def __init__(self, num_envs: int = 1, *, solver_options: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        """The env of :class:`~steel_envs.vector_env.SteelVectorEnv`; with ``clutter`` cubes, the contact capacity
        (``rigid_contacts_per_world``) and ``propagation_constraint_max`` grow by _CONTACTS_PER_CUBE and
        _ROWS_PER_CUBE per clutter cube (``solver_options`` and ``collision_options`` given still win): with the
        capacities of the bare scene, 4 clutter cubes overflowed on every step, and the global overflow then ended
        every world every step."""
        clutter = kwargs.get("clutter", 0)
        is_count = isinstance(clutter, (int, float, np.integer, np.floating)) and float(clutter).is_integer()
        clutter = int(clutter) if is_count else 0
        if 0 < clutter <= MAX_CLUTTER:  # others: the config's error
            self.rigid_contacts_per_world = type(self).rigid_contacts_per_world + _CONTACTS_PER_CUBE * clutter
            rows = self.solver_defaults.propagation_constraint_max + _ROWS_PER_CUBE * clutter
            solver_options = {"propagation_constraint_max": rows, **(solver_options or {})}
        super().__init__(num_envs, solver_options=solver_options, **kwargs)

    def build_world(self, builder: newton.ModelBuilder) -> None:
        """The gantry (fixed base, prismatic x then y, spherical finger), the cube and the clutter."""
        c = self.config
        dof = newton.ModelBuilder.JointDofConfig
        carriage_x = builder.add_link(
            mass=1.0, inertia=wp.mat33(np.eye(3, dtype=np.float32) * 0.01), label="carriage_x"
        )
        carriage_y = builder.add_link(mass=0.5, inertia=wp.mat33(np.eye(3, dtype=np.float32) * 0.01), label="finger")
        builder.add_shape_sphere(
            carriage_y, radius=FINGER_RADIUS, cfg=newton.ModelBuilder.ShapeConfig(density=0.0, mu=0.5)
        )
        mode = int(newton.JointTargetMode.VELOCITY)
        jx = builder.add_joint_prismatic(
            -1,
            carriage_x,
            parent_xform=wp.transform(wp.vec3(-0.5, 0.0, FINGER_RADIUS + 0.005), wp.quat_identity()),
            axis=dof(
                axis=newton.Axis.X,
                target_kd=c.drive_damping,
                actuator_mode=mode,
                limit_lower=-1.0,
                limit_upper=2.0,
                armature=0.01,
            ),
            label="gantry_x",
        )
        jy = builder.add_joint_prismatic(
            carriage_x,
            carriage_y,
            axis=dof(
                axis=newton.Axis.Y,
                target_kd=c.drive_damping,
                actuator_mode=mode,
                limit_lower=-1.0,
                limit_upper=1.0,
                armature=0.01,
            ),
            label="gantry_y",
        )
        builder.add_articulation([jx, jy], label="gantry")
        cube_cfg = newton.ModelBuilder.ShapeConfig(density=400.0, mu=0.6)
        for k in range(1 + int(c.clutter)):
            body = builder.add_body(
                xform=wp.transform(wp.vec3(0.0, 0.0, CUBE_HALF), wp.quat_identity()), label=f"cube_{k}"
            )
            builder.add_shape_box(body, hx=CUBE_HALF, hy=CUBE_HALF, hz=CUBE_HALF, cfg=cube_cfg)

    def initial_state(self) -> InitialStateSpec:
        """Finger at (-0.5, 0); each cube resting at U(-cube_spawn, cube_spawn)^2, unrotated, at rest."""
        cubes = 1 + int(self.config.clutter)
        q = np.zeros(GANTRY_DOFS + CUBE_COORDS * cubes)
        noise = np.zeros_like(q)
        for k in range(cubes):
            o = GANTRY_DOFS + CUBE_COORDS * k
            q[o + 2], q[o + 6] = CUBE_HALF, 1.0
            noise[o : o + 2] = self.config.cube_spawn
        dofs = GANTRY_DOFS + CUBE_DOFS * cubes
        return InitialStateSpec(default_q=q, default_qd=np.zeros(dofs), q_noise=noise, qd_noise=np.zeros(dofs))

    def _reset_physics_state(self, world_mask: wp.array) -> None:
        """The initial joint state (``initial_state``); with clutter, the cubes then move to distinct cells of the
        spawn grid (``_spawn_on_grid``); then the solver's reset."""
        self.initial_states.reset(world_mask)
        if self.config.clutter:
            self.launch_per_world(
                _spawn_on_grid,
                inputs=[
                    world_mask,
                    1 + int(self.config.clutter),
                    float(self.config.cube_spawn),
                    self.model.joint_coord_world_start,
                    self.model.body_world_start,
                ],
                outputs=[self.rng_state, self.state_0.joint_q, self.state_0.body_q],
            )
        self.solver.reset(self.state_0, world_mask=world_mask)

    def _apply_actions(self) -> None:
        wp.launch(
            kernels.scaled_dof_targets,
            (self.num_envs, self.action_dim),
            inputs=[self.actions, float(self.config.max_finger_speed), self.model.joint_dof_world_start],
            outputs=[self.control.joint_target_qd],
            device=self.wp_device,
        )
