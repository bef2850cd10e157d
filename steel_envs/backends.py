"""Solver backends: what one Newton solver does for the env, and what it supports, declared in one place.

The core env (:class:`steel_envs.core.NewtonVectorEnv`) owns the step order and never names a solver; it asks its
backend to build the solver and its custom attributes, to report capacity losses (``constraint_overflow``) and
non-finite states, to reset worlds and to take per-world model changes. A feature the solver cannot serve is
refused from the backend's declaration (:attr:`SolverBackend.supports_world_parameters`,
:attr:`SolverBackend.supports_pushes`), with an error naming the option, instead of by overriding and raising.

- :class:`SteelBackend`: ``newton.solvers.SolverSteel`` (reduced coordinates, PGS contacts, per-world model
  updates, ``constraint_overflow`` on the device).
- :class:`VBDBackend`: ``newton.solvers.SolverVBD`` (cloth, soft bodies, AVBD rigid bodies), following SolverVBD's
  reference page (see :mod:`steel_envs.vbd_env`).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, ClassVar

import newton
import warp as wp

from . import kernels

if TYPE_CHECKING:
    from newton.solvers import SolverSteel, SolverVBD

    from .core import NewtonVectorEnv

__all__ = ["SolverBackend", "SteelBackend", "VBDBackend"]


class SolverBackend:
    """The solver-specific part of an env: one instance per env, created before the model is built.

    Subclasses declare what the solver supports and implement the hooks; every hook only launches device work
    (graph-capturable) unless its docstring says it runs at construction.

    Args:
        env: The env the backend serves (it reads ``env.model``, ``env.solver_options``, ``env.num_envs``, ...).
    """

    name: ClassVar[str] = "solver"
    """The solver's name in messages."""
    supports_world_parameters: ClassVar[bool] = False
    """Per-world model changes (``set_world_parameters``, ``randomize_*_scale``): the solver takes a world mask in
    ``notify_model_changed``."""
    supports_pushes: ClassVar[bool] = False
    """Velocity pushes of a floating base (``push_interval``, ``push_velocity``) through ``joint_qd``."""

    def __init__(self, env: NewtonVectorEnv) -> None:
        self.env = weakref.proxy(env)  # no env <-> component cycle: the env goes with its last reference

    def check_supported(self, config: Any) -> None:
        """Refuse the config fields of features this solver does not support (at construction).

        Raises:
            ValueError: Naming the first such field set and the solver.
        """
        if not self.supports_world_parameters:
            for name in ("randomize_mass_scale", "randomize_friction_scale", "randomize_drive_gain_scale"):
                if getattr(config, name) is not None:
                    raise ValueError(f"{name}: reset randomization is not supported on {self.name} scenes; pass None")
        if not self.supports_pushes:
            for name in ("push_interval", "push_velocity"):
                if getattr(config, name):
                    raise ValueError(f"{name}: pushes are not supported on {self.name} scenes; pass 0")

    def build_model(self) -> newton.Model:
        """The env's model (construction): ``env.num_envs`` replicas of one world (``env.build_world``, plus a
        ground plane per world, or one shared, per ``env.add_ground_plane`` / ``env.ground_per_world``), the shapes
        the worlds share (``env.build_shared``), with the solver's custom attributes, its last builder edits and its
        model-level settings."""
        env = self.env
        world = newton.ModelBuilder()
        self.register_attributes(world)
        env.build_world(world)
        if env.add_ground_plane and env.ground_per_world:
            world.add_ground_plane()
        builder = newton.ModelBuilder()
        self.register_attributes(builder)
        builder.replicate(world, env.num_envs)
        if env.add_ground_plane and not env.ground_per_world:
            builder.add_ground_plane()
        env.build_shared(builder)
        self.finalize_builder(builder)
        model = builder.finalize(device=env.wp_device)
        self.configure_model(model)
        return model

    def register_attributes(self, builder: newton.ModelBuilder) -> None:
        """Register the solver's custom attributes on a builder before the scene is added (construction)."""

    def finalize_builder(self, builder: newton.ModelBuilder) -> None:
        """Last edits of the replicated builder before ``finalize`` (construction)."""

    def configure_model(self, model: newton.Model) -> None:
        """Model-level settings after ``finalize``, before the solver is built (construction)."""

    def collision_options(self) -> dict[str, Any]:
        """Keywords of the env's ``newton.CollisionPipeline`` (construction): the env's ``collision_options``, with
        ``rigid_contact_max`` from the scene's ``rigid_contacts_per_world`` where they give none."""
        options = dict(self.env.collision_options)
        per_world = self.env.rigid_contacts_per_world
        if per_world is not None:
            options.setdefault("rigid_contact_max", int(per_world) * self.env.num_envs)
        return options

    def make_solver(self) -> newton.solvers.SolverBase:
        """The solver, from ``env.solver_options`` (construction)."""
        raise NotImplementedError

    def make_overflow_flags(self) -> wp.array:
        """The per-world capacity-loss flags, bool (world_count + 1,), the final entry global (it ends every world)
        (construction)."""
        raise NotImplementedError

    def begin_physics(self) -> None:
        """Launches before the physics steps of a control step."""

    def after_substep(self, state: newton.State) -> None:
        """Launches after each physics step, on its output state (before the scene's own ``_after_substep``)."""

    def find_nonfinite(self, nonfinite: wp.array) -> None:
        """Write ``nonfinite`` (num_envs,) bool: the worlds whose state holds a NaN or an infinity."""
        raise NotImplementedError

    def reset_physics_state(self, world_mask: wp.array) -> None:
        """Write the initial state of the selected worlds ((num_envs + 1,) bool) and clear their solver history."""
        raise NotImplementedError

    def notify_model_changed(self, flags: int, world_mask: wp.array | None) -> None:
        """Tell the solver which model properties changed, in the selected worlds (None: all)."""
        self.env.solver.notify_model_changed(flags)

    def overflow_advice(self) -> str:
        """What the one-time overflow warning says was lost and which capacity to raise."""
        raise NotImplementedError


class SteelBackend(SolverBackend):
    """``newton.solvers.SolverSteel``: per-world model updates and pushes; its ``constraint_overflow`` flags."""

    name = "SolverSteel"
    supports_world_parameters = True
    supports_pushes = True

    def register_attributes(self, builder: newton.ModelBuilder) -> None:
        from newton.solvers import SolverSteel  # imported by the backend in use only (each takes ~0.5 s)

        SolverSteel.register_custom_attributes(builder)

    def make_solver(self) -> SolverSteel:
        """SolverSteel from ``env.solver_options``.

        Restitution is switched off (``enable_restitution=False``) when no shape of the scene has a positive
        restitution coefficient, where it has no effect: SolverSteel's sparse mass factors (chosen on CUDA) then
        need no host-side restitution check in ``notify_model_changed``, which a captured step (friction
        randomization at reset) cannot hold. A scene or user that gives a shape restitution keeps it on.
        """
        env = self.env
        options = env.solver_options
        if options.enable_restitution and not (env.model.shape_material_restitution.numpy() > 0.0).any():
            options = env.solver_options = options.replace({"enable_restitution": False})
        from newton.solvers import SolverSteel

        return SolverSteel(env.model, **options.as_kwargs())

    def make_overflow_flags(self) -> wp.array:
        """SolverSteel's ``constraint_overflow``, which the solver sets during each step."""
        return self.env.solver.constraint_overflow

    def find_nonfinite(self, nonfinite: wp.array) -> None:
        env = self.env
        env.launch_per_world(
            kernels.find_nonfinite_worlds,
            inputs=[
                env.model.joint_coord_world_start,
                env.model.joint_dof_world_start,
                env.state_0.joint_q,
                env.state_0.joint_qd,
            ],
            outputs=[nonfinite],
        )

    def reset_physics_state(self, world_mask: wp.array) -> None:
        """The initial joint state with its noise, body poses by forward kinematics, then ``solver.reset``."""
        self.env.initial_states.reset(world_mask)
        self.env.solver.reset(self.env.state_0, world_mask=world_mask)

    def notify_model_changed(self, flags: int, world_mask: wp.array | None) -> None:
        self.env.solver.notify_model_changed(flags, world_mask=world_mask)

    def overflow_advice(self) -> str:
        o = self.env.solver_options
        if o.articulated_contact_response == "propagation":
            capacity = f"propagation_constraint_max (now {o.propagation_constraint_max}, None = sum of the others)"
        else:
            capacity = (
                f"articulation_constraint_max (now {o.articulation_constraint_max}) or free_body_constraint_max "
                f"(now {o.free_body_constraint_max})"
            )
        return (
            f"SolverSteel dropped constraint rows or contacts in some worlds. Raise {capacity} with "
            f"solver_options={{...}}; row_watermark=True and solver.constraint_row_watermarks() measure the need."
        )


@wp.kernel(enable_backward=False)
def _clear_flags(flags: wp.array[wp.bool]):
    flags[wp.tid()] = False


@wp.kernel(enable_backward=False)
def _flag_overflowed(
    counts: wp.array[wp.int32],
    capacities: wp.array[wp.int32],
    element_world: wp.array[wp.int32],
    world_count: wp.int32,
    flags: wp.array[wp.bool],
):
    """Flag the world of each element (body, vertex, edge) whose contact count exceeded its buffer: the excess
    contacts were dropped. Global elements (world -1) flag the final entry."""
    e = wp.tid()
    if counts[e] > capacities[e]:
        w = element_world[e]
        if w < 0:
            w = world_count
        flags[w] = True


@wp.kernel(enable_backward=False)
def _flag_global(count: wp.array[wp.int32], capacity: wp.int32, world_count: wp.int32, flags: wp.array[wp.bool]):
    """Flag the global entry when a pipeline-wide contact buffer overflowed (launched with one thread)."""
    if count[0] > capacity:
        flags[world_count] = True


@wp.kernel(enable_backward=False)
def _find_nonfinite_particle_worlds(
    particle_world_start: wp.array[wp.int32],
    body_world_start: wp.array[wp.int32],
    particle_q: wp.array[wp.vec3],
    particle_qd: wp.array[wp.vec3],
    body_q: wp.array[wp.transform],
    body_qd: wp.array[wp.spatial_vector],
    nonfinite: wp.array[wp.bool],
):
    """Flag each world whose particle positions or velocities, or body poses or twists, hold a NaN or an inf."""
    w = wp.tid()
    bad = bool(False)
    for i in range(particle_world_start[w], particle_world_start[w + 1]):
        q = particle_q[i]
        qd = particle_qd[i]
        for k in range(3):
            if not (wp.isfinite(q[k]) and wp.isfinite(qd[k])):
                bad = True
    for b in range(body_world_start[w], body_world_start[w + 1]):
        p = wp.transform_get_translation(body_q[b])
        r = wp.transform_get_rotation(body_q[b])
        v = body_qd[b]
        for k in range(3):
            if not wp.isfinite(p[k]):
                bad = True
        for k in range(4):
            if not wp.isfinite(r[k]):
                bad = True
        for k in range(6):
            if not wp.isfinite(v[k]):
                bad = True
    nonfinite[w] = bad


class VBDBackend(SolverBackend):
    """``newton.solvers.SolverVBD``: no per-world model updates (its ``notify_model_changed`` has no world mask) and
    no pushes; the capacity losses it can attribute are checked after every physics step (see
    :mod:`steel_envs.vbd_env`)."""

    name = "SolverVBD"

    def finalize_builder(self, builder: newton.ModelBuilder) -> None:
        # SolverVBD needs particle and rigid-body color groups (its page: call ModelBuilder.color()).
        builder.color(include_bending=True)

    def configure_model(self, model: newton.Model) -> None:
        env = self.env
        if model.joint_count:
            # "The body transforms must match the joint angles at solver creation time" (SolverVBD's page).
            newton.eval_fk(model, model.joint_q, model.joint_qd, model)
        model.soft_contact_ke = float(env.soft_contact_ke)
        model.soft_contact_kd = float(env.soft_contact_kd)
        model.soft_contact_mu = float(env.soft_contact_mu)

    def collision_options(self) -> dict[str, Any]:
        return {"soft_contact_gap": float(self.env.soft_contact_gap), **self.env.collision_options}

    def make_solver(self) -> SolverVBD:
        from newton.solvers import SolverVBD

        return SolverVBD(self.env.model, **self.env.solver_options.as_kwargs())

    def make_overflow_flags(self) -> wp.array:
        env = self.env
        model, solver, device = env.model, env.solver, env.wp_device
        # (counts, capacities, world of each element) of every per-element contact buffer the solver keeps.
        self._capacity_checks: list[tuple[wp.array, wp.array, wp.array]] = []
        for counts, capacity in (
            ("body_body_contact_counts", "body_body_contact_buffer_pre_alloc"),
            ("body_particle_contact_counts", "body_particle_contact_buffer_pre_alloc"),
        ):
            if model.body_count and getattr(solver, capacity, 0):
                capacities = wp.full(model.body_count, int(getattr(solver, capacity)), dtype=wp.int32, device=device)
                self._capacity_checks.append((getattr(solver, counts), capacities, model.body_world))
        if env.solver_options.particle_enable_self_contact:
            info = solver.trimesh_collision_info
            self._capacity_checks.append(
                (
                    info.vertex_colliding_triangles_count,
                    info.vertex_colliding_triangles_buffer_sizes,
                    model.particle_world,
                )
            )
            if model.edge_count:  # an edge belongs to the world of its first vertex
                edge_world = model.particle_world.numpy()[model.edge_indices.numpy()[:, 2]]
                self._capacity_checks.append(
                    (
                        info.edge_colliding_edges_count,
                        info.edge_colliding_edges_buffer_sizes,
                        wp.array(edge_world, dtype=wp.int32, device=device),
                    )
                )
        self._flags = wp.zeros(env.num_envs + 1, dtype=wp.bool, device=device)
        return self._flags

    def begin_physics(self) -> None:
        """Clear the capacity flags; with self-contact, rebuild its BVH from the current positions."""
        env = self.env
        wp.launch(_clear_flags, env.num_envs + 1, outputs=[self._flags], device=env.wp_device)
        if env.solver_options.particle_enable_self_contact:
            env.solver.rebuild_bvh(env.state_0)

    def after_substep(self, state: newton.State) -> None:
        env = self.env
        flags, n, device = self._flags, env.num_envs, env.wp_device
        for counts, capacities, element_world in self._capacity_checks:
            wp.launch(
                _flag_overflowed,
                counts.shape[0],
                inputs=[counts, capacities, element_world, n],
                outputs=[flags],
                device=device,
            )
        c = env.pipeline_contacts
        if c is not None:
            for count, capacity in (
                (c.rigid_contact_count, c.rigid_contact_max),
                (c.soft_contact_count, c.soft_contact_max),
            ):
                if count is not None and capacity:
                    wp.launch(_flag_global, 1, inputs=[count, int(capacity), n], outputs=[flags], device=device)

    def find_nonfinite(self, nonfinite: wp.array) -> None:
        env = self.env
        m, s = env.model, env.state_0
        env.launch_per_world(
            _find_nonfinite_particle_worlds,
            inputs=[m.particle_world_start, m.body_world_start, s.particle_q, s.particle_qd, s.body_q, s.body_qd],
            outputs=[nonfinite],
        )

    def reset_physics_state(self, world_mask: wp.array) -> None:
        """Model defaults of particles and bodies and cleared rigid history first; then the joints' forward
        kinematics supersedes the model copy of articulated bodies (SolverVBD.reset's documented order); then the
        pipeline's contact matching of those worlds."""
        env = self.env
        env.solver.reset(env.state_0, world_mask=world_mask)
        env.initial_states.reset(world_mask)
        if env.collision_pipeline is not None:
            env.collision_pipeline.reset_contact_matching(world_mask)

    def overflow_advice(self) -> str:
        o = self.env.solver_options
        return (
            "SolverVBD or the collision pipeline dropped contacts. Raise the per-body lists "
            f"rigid_body_contact_buffer_size (now {o.rigid_body_contact_buffer_size}) or "
            f"rigid_body_particle_contact_buffer_size (now {o.rigid_body_particle_contact_buffer_size}), the "
            f"self-contact buffers particle_vertex_contact_buffer_size (now {o.particle_vertex_contact_buffer_size})"
            f" or particle_edge_contact_buffer_size (now {o.particle_edge_contact_buffer_size}) with "
            "solver_options={...}; an overflow of the pipeline's rigid_contact_max or soft_contact_max (for a "
            "solver-owned pipeline: the scene's soft_contacts_per_particle) is global (every world ended)."
        )
