"""Per-world objects drawn at reset, shared by the manipulation tasks (PandaLiftCube-v0, AllegroReorient-v0): a
solid box's size, mass and friction written into the model for one world, and uniform draws of orientations.

The box's collision shape is built at the largest size its task allows and scaled down per world (``shape_scale``),
so the broad phase's bound stays an enclosing one.
"""

from __future__ import annotations

from typing import Any

import warp as wp

__all__ = ["CubeModel", "cube_model", "cubes_written", "face_down_rotation", "random_rotation", "write_cube"]


@wp.struct
class CubeModel:
    """What :func:`write_cube` writes a world's cube into: the model's arrays and the randomizer's nominal values and
    scales (:class:`steel_envs.components.randomization.Randomizer`), and where each world's cube is."""

    cube_shape: wp.array[wp.int32]
    """(num_envs,) the global shape index of each world's cube."""
    cube_body: wp.int32
    """The world-local body index of the cube."""
    body_world_start: wp.array[wp.int32]
    mass_scale: wp.array[wp.float32]
    friction_scale: wp.array[wp.float32]
    shape_scale: wp.array[wp.vec3]
    nominal_mu: wp.array[wp.float32]
    nominal_mass: wp.array[wp.float32]
    nominal_inertia: wp.array[wp.mat33]
    shape_material_mu: wp.array[wp.float32]
    body_mass: wp.array[wp.float32]
    body_inv_mass: wp.array[wp.float32]
    body_inertia: wp.array[wp.mat33]
    body_inv_inertia: wp.array[wp.mat33]


@wp.func
def write_cube(c: CubeModel, w: int, edge: float, mass: float, mu: float):
    """World ``w``'s cube of ``edge`` [m], ``mass`` [kg] and friction ``mu``: the box's half extents, the solid
    cube's mass and inertia (m a^2 / 6 about each axis) and friction, times the world's scales (the randomizer's
    nominal values they become)."""
    shape = c.cube_shape[w]
    body = c.body_world_start[w] + c.cube_body
    half = 0.5 * edge
    c.shape_scale[shape] = wp.vec3(half, half, half)
    c.nominal_mu[shape] = mu
    c.shape_material_mu[shape] = mu * c.friction_scale[w]
    inertia = wp.identity(3, dtype=wp.float32) * (mass * edge * edge / 6.0)
    c.nominal_mass[body] = mass
    c.nominal_inertia[body] = inertia
    m = mass * c.mass_scale[w]
    c.body_mass[body] = m
    c.body_inv_mass[body] = 1.0 / m
    c.body_inertia[body] = inertia * c.mass_scale[w]
    c.body_inv_inertia[body] = wp.inverse(inertia * c.mass_scale[w])


@wp.func
def random_rotation(u1: float, u2: float, u3: float) -> wp.quat:
    """The rotation of three U(0, 1) numbers that makes it uniform over SO(3) (Shoemake 1992, "Uniform random
    rotations", Graphics Gems III); (x, y, z, w). The caller draws them: a stream passed into a ``wp.func`` advances
    a copy, not the caller's state."""
    a = wp.sqrt(1.0 - u1)
    b = wp.sqrt(u1)
    t2 = 2.0 * wp.pi * u2
    t3 = 2.0 * wp.pi * u3
    return wp.quat(a * wp.sin(t2), a * wp.cos(t2), b * wp.sin(t3), b * wp.cos(t3))


@wp.func
def face_down_rotation(face: int, yaw: float) -> wp.quat:
    """A cube's orientation resting on a face: the face ``face`` (0-5: -z, +x, -x, +y, -y, +z of the cube's frame)
    turned down, then ``yaw`` [rad] about the world's z."""
    h = 0.5 * wp.pi
    tilt = wp.quat_identity()
    if face == 1:
        tilt = wp.quat_from_axis_angle(wp.vec3(0.0, 1.0, 0.0), h)
    elif face == 2:
        tilt = wp.quat_from_axis_angle(wp.vec3(0.0, 1.0, 0.0), -h)
    elif face == 3:
        tilt = wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), -h)
    elif face == 4:
        tilt = wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), h)
    elif face == 5:
        tilt = wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), wp.pi)
    return wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), yaw) * tilt


def cube_model(env: Any, cube_body: int) -> CubeModel:
    """The :class:`CubeModel` of ``env`` (a :class:`steel_envs.NewtonVectorEnv` whose worlds each hold one shape
    labelled ``cube``, on world-local body ``cube_body``)."""
    m, r = env.model, env.randomizer
    shapes = [k for k, label in enumerate(m.shape_label) if label.rsplit("/", 1)[-1] == "cube"]
    c = CubeModel()
    c.cube_shape = wp.array(shapes, dtype=wp.int32, device=env.wp_device)
    c.cube_body = cube_body
    c.body_world_start = m.body_world_start
    c.mass_scale, c.friction_scale = r.mass_scale, r.friction_scale
    c.shape_scale, c.shape_material_mu = m.shape_scale, m.shape_material_mu
    c.nominal_mu, c.nominal_mass, c.nominal_inertia = r.nominal["mu"], r.nominal["mass"], r.nominal["inertia"]
    c.body_mass, c.body_inv_mass = m.body_mass, m.body_inv_mass
    c.body_inertia, c.body_inv_inertia = m.body_inertia, m.body_inv_inertia
    return c


def cubes_written(env: Any, world_mask: wp.array) -> None:
    """Tell ``env``'s backend that the selected worlds' shapes and inertial properties changed (after
    :func:`write_cube`), then reset the solver's state of those worlds."""
    import newton

    flags = newton.ModelFlags.SHAPE_PROPERTIES | newton.ModelFlags.BODY_INERTIAL_PROPERTIES
    env.backend.notify_model_changed(flags, world_mask)
    env.solver.reset(env.state_0, world_mask=world_mask)
