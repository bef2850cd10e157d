"""Penetration lines of the doctor: bodies against the env's ground (planes and terrain) and particles against its
ground planes, over every measured state.
Reset states and stepped states are kept apart: an initial state inside the ground is the scene's to fix, not the
solver's.

- ``penetration: bodies`` (:class:`BodyPenetration`): the deepest point of a body's shape inside the ground (a plane,
  or a terrain's heightfield or mesh).
  Contacts of the measured state are found by a private ``newton.CollisionPipeline`` with the env's options, their
  signed distances evaluated by ``newton.eval_rigid_contact_kinematics`` and both shapes' ``shape_margin`` added
  back (contacts act on the margin-inflated surfaces; the value is the depth of the shape itself). Fails above
  :data:`PENETRATION_TOL`.
- ``penetration: particles`` (:class:`ParticlePenetration`): the largest ``radius - height`` of a particle over the
  ground plane of its world; above :data:`PENETRATION_TOL` warns, a particle centre below the plane fails.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from steel_envs.doctor.check import Check, Sample, Worst, quat_to_matrix, short_label, worst
from steel_envs.doctor.report import DoctorLine, DoctorReport

__all__ = ["PENETRATION_TOL", "BodyPenetration", "Ground", "ParticlePenetration"]

PENETRATION_TOL = 0.005
"""Deepest body point below a ground plane [m] (the 5 mm of the prismatic limit tolerance); for particles the depth
of the contact sphere above which the line warns (a centre below the plane fails)."""

_SINK = "bodies sink into the ground: more iterations, a smaller physics dt, or see the rows / contacts lines"
_START = "the initial states put bodies into the ground: raise the start height or bound the reset noise"
_KINDS = ("stepped", "reset")
"""States after a physics step, and reset states (a world's first state of an episode)."""


class Ground:
    """The model's ground: static plane, heightfield and mesh shapes (``shape_body`` -1, ``is_ground``); of the
    planes, their world (-1: every world), a point [m], shape (planes, 3), and the unit normal (the shape's local
    +z), shape (planes, 3)."""

    def __init__(self, model: Any) -> None:
        import newton

        m = model
        shape_type = m.shape_type.numpy() if m.shape_count else np.zeros(0, np.int32)
        self.shape_body = m.shape_body.numpy() if m.shape_count else np.zeros(0, np.int32)
        self.shape_world = m.shape_world.numpy() if m.shape_count else np.zeros(0, np.int32)
        self.shape_margin = m.shape_margin.numpy().astype(np.float64) if m.shape_count else np.zeros(0)
        is_plane = (shape_type == int(newton.GeoType.PLANE)) & (self.shape_body < 0)
        terrain = np.isin(shape_type, (int(newton.GeoType.HFIELD), int(newton.GeoType.MESH))) & (self.shape_body < 0)
        self.is_ground = is_plane | terrain
        """Per shape, bool, shape (shape_count,): whether it is ground: a static plane, heightfield or mesh (a
        terrain)."""
        xf = m.shape_transform.numpy()[is_plane] if m.shape_count else np.zeros((0, 7), np.float32)
        self.world = self.shape_world[is_plane]
        self.point = xf[:, :3].astype(np.float64)
        self.normal = quat_to_matrix(xf[:, 3:7])[:, :, 2] if len(xf) else np.zeros((0, 3))


def _split_by_kind(world: np.ndarray, sample: Sample) -> tuple[tuple[str, np.ndarray], ...]:
    """Masks of the entries of ``world`` (their world index, -1: global) in a reset state and in a stepped one."""
    n = len(sample.fresh)
    fresh = (world >= 0) & sample.fresh[np.clip(world, 0, n - 1)]
    return (("reset", fresh), ("stepped", ~fresh))


def two_worsts(worsts: dict[str, Worst | None]) -> str:
    """Where the deepest value was (the value column's); a deeper reset state also names the worst step."""
    stepped, reset = worsts["stepped"], worsts["reset"]
    if reset is None or (stepped is not None and stepped[0] >= reset[0]):
        return stepped[1]
    if stepped is None:
        return reset[1]
    return f"{reset[1]}; after a step {stepped[0] * 1000:.2f} mm at {stepped[1]}"


class BodyPenetration(Check):
    """The deepest body shape below a ground plane [m], after a step and in a reset state."""

    def __init__(self, env: Any, ground: Ground) -> None:
        import newton
        import warp as wp

        self.env, self.ground, m = env, ground, env.model
        self.worst: dict[str, Worst | None] = dict.fromkeys(_KINDS)
        """Deepest penetration [m] so far and where, of stepped states and of reset states."""
        # Contacts of the measured state itself, from a private pipeline with the env's options (the env's own
        # contacts are those of the last physics step's start); it publishes no capacity to the model.
        self.pipeline = self.contacts = self.distance = None
        if env.collision_pipeline is not None and ground.is_ground.any() and m.body_count:
            self.pipeline = newton.CollisionPipeline(m, **env.collision_options, publish_capacity=False)
            self.contacts = self.pipeline.contacts()
            self.distance = wp.zeros(self.contacts.rigid_contact_max, dtype=wp.float32, device=m.device)

    def observe(self, sample: Sample) -> None:
        import newton

        if self.pipeline is None:
            return
        env, m, c, g = self.env, self.env.model, self.contacts, self.ground
        self.pipeline.collide(env.state_0, c)
        count = min(int(c.rigid_contact_count.numpy()[0]), c.rigid_contact_max)
        if not count:
            return
        newton.eval_rigid_contact_kinematics(m, env.state_0, c, out_distance=self.distance)
        s0, s1 = c.rigid_contact_shape0.numpy()[:count], c.rigid_contact_shape1.numpy()[:count]
        valid = (s0 >= 0) & (s1 >= 0)
        s0, s1 = np.where(valid, s0, 0), np.where(valid, s1, 0)
        g0, g1 = g.is_ground[s0], g.is_ground[s1]
        other = np.where(g0, s1, s0)
        ground = valid & (g0 ^ g1) & (g.shape_body[other] >= 0)
        if not ground.any():
            return
        # The distance is between the margin-inflated surfaces; a shape's own surface is its margin inside.
        depth = -self.distance.numpy()[:count].astype(np.float64) - g.shape_margin[s0] - g.shape_margin[s1]
        depth = np.where(ground & np.isfinite(depth), depth, -np.inf)
        world = g.shape_world[other]
        for kind, mask in _split_by_kind(world, sample):
            if (mask & ground).any():
                k = int(np.argmax(np.where(mask, depth, -np.inf)))
                body = int(g.shape_body[other[k]])
                where = f"{short_label(m.body_label[body])} ({sample.at(int(world[k]))})"
                self.worst[kind] = worst(self.worst[kind], max(float(depth[k]), 0.0), where)

    def lines(self, report: DoctorReport) -> list[DoctorLine]:
        check, threshold = "penetration: bodies", f"<= {PENETRATION_TOL * 1000:g} mm"
        if all(v is None for v in self.worst.values()):
            why = "no body touched the ground" if self.pipeline is not None else "no body can touch the ground"
            return [DoctorLine(check, "n/a", "-", threshold, why)]
        bad = {kind: v is not None and v[0] > PENETRATION_TOL for kind, v in self.worst.items()}
        value = max(v[0] for v in self.worst.values() if v is not None)
        advice = "; ".join(a for kind, a in (("stepped", _SINK), ("reset", _START)) if bad[kind])
        status = "fail" if any(bad.values()) else "pass"
        return [DoctorLine(check, status, f"{value * 1000:.2f} mm", threshold, two_worsts(self.worst), advice, value)]


class ParticlePenetration(Check):
    """The deepest particle contact sphere below a ground plane [m], and the particle centres below it, after a step
    and in a reset state."""

    def __init__(self, env: Any, ground: Ground) -> None:
        self.env, self.ground, m = env, ground, env.model
        self.particle_world = m.particle_world.numpy() if m.particle_count else np.zeros(0, np.int32)
        self.particle_radius = m.particle_radius.numpy().astype(np.float64) if m.particle_count else np.zeros(0)
        self.worst: dict[str, Worst | None] = dict.fromkeys(_KINDS)
        """Deepest ``radius - height`` [m] so far and where, of stepped states and of reset states."""
        self.below = dict.fromkeys(_KINDS, 0)
        """Most particle centres below the ground in one measured state, of stepped states and of reset states."""

    def observe(self, sample: Sample) -> None:
        env, g = self.env, self.ground
        if not (env.model.particle_count and len(g.normal)):
            return
        q = env.state_0.particle_q.numpy().astype(np.float64)
        height = np.full(len(q), np.inf)
        for point, normal, world in zip(g.point, g.normal, g.world, strict=True):
            mine = (self.particle_world == world) | (world < 0)
            height = np.where(mine, np.minimum(height, (q - point) @ normal), height)
        depth = self.particle_radius - height
        depth = np.where(np.isfinite(depth), depth, -np.inf)
        starts = env.model.particle_world_start.numpy()
        for kind, mask in _split_by_kind(self.particle_world, sample):
            self.below[kind] = max(self.below[kind], int((mask & (height < 0.0)).sum()))
            k = int(np.argmax(np.where(mask, depth, -np.inf)))
            if mask[k] and np.isfinite(depth[k]):
                w = int(self.particle_world[k])
                where = f"particle {k - int(starts[max(w, 0)])} ({sample.at(w)})"
                self.worst[kind] = worst(self.worst[kind], max(float(depth[k]), 0.0), where)

    def lines(self, report: DoctorReport) -> list[DoctorLine]:
        check, threshold = "penetration: particles", f"<= {PENETRATION_TOL * 1000:g} mm (warn), centre above ground"
        if all(v is None for v in self.worst.values()):
            return [DoctorLine(check, "n/a", "-", threshold, "no particle over a ground")]
        value = max(v[0] for v in self.worst.values() if v is not None)
        detail = two_worsts(self.worst)
        for kind, when in (("stepped", "after a step"), ("reset", "in a reset state")):
            if self.below[kind]:
                detail += f"; up to {self.below[kind]} particle centres below the ground {when}"
        radius = float(self.particle_radius.max()) if len(self.particle_radius) else 0.0
        detail += f"; radius {radius * 1000:g} mm"
        below = any(self.below.values())
        status = "fail" if below else "warn" if value > PENETRATION_TOL else "pass"
        advice = "particles sink into the ground: a stiffer soft_contact_ke, more iterations or a smaller dt"
        return [
            DoctorLine(
                check, status, f"{value * 1000:.2f} mm", threshold, detail, advice if status != "pass" else "", value
            )
        ]
