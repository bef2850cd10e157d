"""Primitive colliders fitted to a link's convex collision mesh, for the vendoring scripts.

A maintainer's tool (numpy and SciPy; the package never imports it). :func:`enclosing_primitives` returns the
smallest, by volume, of three enclosures of a convex hull's points, each containing every vertex:

- the box of the points' bounds in the mesh's own frame (robot links are modelled along their frame's axes);
- one capsule along the points' principal axis;
- two capsules, one per half of the hull: the hull's interior is sampled and split by a 2-means on the distance
  to each capsule's segment (from a split at the centroid along the principal axis), each half enclosed by a
  capsule along its own principal axis (an L-shaped link is two cylinders around its two joint axes).

A capsule with a given axis and radius encloses a point set exactly when its segment spans, along the axis, each
point's projection widened by ``sqrt(r^2 - d^2)`` (``d`` the point's distance from the axis); the radius is the
largest ``d``. Primitive-primitive contacts are analytic in Newton's collision pipeline with a fixed number of points
per pair, where a mesh's contact set depends on its triangles.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Box", "Capsule", "enclosing_primitives"]


@dataclass(frozen=True)
class Capsule:
    """A capsule from ``p0`` to ``p1`` (3,) [m] of radius ``radius`` [m], in the mesh's frame."""

    p0: np.ndarray
    p1: np.ndarray
    radius: float

    @property
    def volume(self) -> float:
        """[m^3]"""
        return float(np.pi * self.radius**2 * np.linalg.norm(self.p1 - self.p0) + 4.0 / 3.0 * np.pi * self.radius**3)

    def distance(self, points: np.ndarray) -> np.ndarray:
        """Distance of ``points`` (N, 3) to the segment [m], (N,)."""
        d = self.p1 - self.p0
        length2 = float(d @ d)
        s = np.clip((points - self.p0) @ d / length2, 0.0, 1.0) if length2 > 0.0 else np.zeros(len(points))
        return np.linalg.norm(points - (self.p0 + s[:, None] * d), axis=1)

    def mjcf(self) -> str:
        """The MJCF geom (``fromto`` and ``size``, 0.1 mm resolution, rounded outwards)."""
        ends = " ".join(f"{x:.4f}" for x in (*self.p0, *self.p1))
        return f'<geom type="capsule" fromto="{ends}" size="{np.ceil(self.radius * 1e4) / 1e4:.4f}" class="collision"/>'


@dataclass(frozen=True)
class Box:
    """A box of half-extents ``half`` (3,) [m] centred at ``center`` (3,) [m], axes of the mesh's frame."""

    center: np.ndarray
    half: np.ndarray

    @property
    def volume(self) -> float:
        """[m^3]"""
        return float(8.0 * np.prod(self.half))

    def mjcf(self) -> str:
        """The MJCF geom (``pos`` and ``size``, 0.1 mm resolution, half-extents rounded outwards)."""
        pos = " ".join(f"{x:.4f}" for x in self.center)
        size = " ".join(f"{np.ceil(x * 1e4) / 1e4:.4f}" for x in self.half)
        return f'<geom type="box" pos="{pos}" size="{size}" class="collision"/>'


def _principal_axis(points: np.ndarray) -> np.ndarray:
    centered = points - points.mean(0)
    return np.linalg.eigh(centered.T @ centered)[1][:, -1]


def enclosing_capsule(points: np.ndarray) -> Capsule:
    """The capsule along the principal axis of ``points`` (N, 3) [m], through their centroid, that encloses them."""
    center, axis = points.mean(0), _principal_axis(points)
    t = (points - center) @ axis
    d = np.linalg.norm(points - center - np.outer(t, axis), axis=1)
    r = float(d.max())
    widen = np.sqrt(np.maximum(r * r - d * d, 0.0))
    a, b = float((t + widen).min()), float((t - widen).max())
    if a > b:  # a sphere encloses them
        a = b = 0.5 * (a + b)
    return Capsule(center + a * axis, center + b * axis, r)


def _two_capsules(points: np.ndarray, rounds: int = 20) -> list[Capsule]:
    axis = _principal_axis(points)
    side = (points - points.mean(0)) @ axis > 0.0
    for _ in range(rounds):
        if side.all() or not side.any():
            break
        caps = [enclosing_capsule(points[~side]), enclosing_capsule(points[side])]
        new = caps[1].distance(points) < caps[0].distance(points)
        if (new == side).all():
            return caps
        side = new
    if side.all() or not side.any():
        return [enclosing_capsule(points)]
    return [enclosing_capsule(points[~side]), enclosing_capsule(points[side])]


def enclosing_primitives(vertices: np.ndarray, samples: int = 60000, seed: int = 0) -> tuple[list, float]:
    """The smallest of the module's three enclosures of the convex hull of ``vertices`` (N, 3) [m].

    Returns:
        The primitives (a list of :class:`Box` or :class:`Capsule`) and the ratio of their total volume to the
        hull's [1] (their overlap counted twice).
    """
    from scipy.spatial import ConvexHull

    hull = ConvexHull(vertices)
    points = vertices[hull.vertices]
    rng = np.random.default_rng(seed)
    low, high = points.min(0), points.max(0)
    candidates = rng.uniform(low, high, (samples, 3))
    eq = hull.equations
    interior = candidates[(candidates @ eq[:, :3].T + eq[:, 3] <= 0.0).all(1)]
    options = [
        [Box(0.5 * (low + high), 0.5 * (high - low))],
        [enclosing_capsule(points)],
        _two_capsules(np.vstack([points, interior])),
    ]
    best = min(options, key=lambda prims: sum(p.volume for p in prims))
    return best, sum(p.volume for p in best) / hull.volume
