"""Rough ground: a grid of terrain patches with a difficulty axis, as one static heightfield or mesh shared by all
worlds (body -1).

The grid has ``levels`` rows of patches along x (difficulty ``level / (levels - 1)``, row 0 the easiest) and one
column per terrain type along y, mjlab's curriculum layout (``mjlab/terrains/terrain_generator.py``: one column per
type, difficulty rising along the rows), surrounded by a flat border. Every patch has a flat square platform at its
centre, the spawn point of the worlds on it. The types and their parameters are mjlab 1.6.0's
``ROUGH_TERRAINS_CFG`` (``mjlab/terrains/config.py``) and presets, with ``discrete_obstacles`` (its preset's
parameters) in place of ``wave_terrain``:

| type | surface | parameter at difficulty d |
|---|---|---|
| ``flat`` | z = 0 | - |
| ``pyramid_slope`` / ``pyramid_slope_inv`` | a pyramid of slope s, up to (down to) a 2 m platform | s = 1.0 d |
| ``random_rough`` | uniform heights in d [0.02, 0.10] m in steps of 0.02 d m per 0.1 m cell | noise bound |
| ``pyramid_stairs`` / ``_inv`` | 5 square rings of 0.3 m treads up to (down to) a 3 m platform | rise 0.1 d m |
| ``discrete_obstacles`` | 40 boxes 0.3-1.0 m wide, heights from {-h, -h/2, h/2, h} | h = 0.05 + 0.25 d m |

Differences from mjlab: the random rough heights scale with the difficulty (mjlab's ``scale_with_difficulty=True``;
its default keeps every level alike), the random rough patch has a 1 m platform (mjlab spawns above its mean), and
stairs are heightfield steps whose risers slope across one cell (``resolution``; mjlab's are boxes).

The surface between samples is Newton's triangulation of a heightfield (``newton/_src/utils/heightfield.py``:
cell (row, col) split along its diagonal from (x0, y0) to (x1, y1)); :meth:`Terrain.height_at` evaluates the same
surface, and ``geometry="mesh"`` builds a triangle mesh with the same triangles.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

import newton
import numpy as np
import warp as wp

from steel_envs.ranges import at_least, declare

__all__ = [
    "TERRAIN_TYPES",
    "Terrain",
    "TerrainConfig",
    "TerrainScene",
    "TerrainSceneConfig",
    "generate_terrain",
    "place_on_terrain",
    "terrain_height",
]

TERRAIN_TYPES = (
    "flat",
    "pyramid_slope",
    "pyramid_slope_inv",
    "random_rough",
    "pyramid_stairs",
    "pyramid_stairs_inv",
    "discrete_obstacles",
)
"""The generator's patch types, in their default column order."""


@dataclass(frozen=True, kw_only=True)
class TerrainConfig:
    """What :func:`generate_terrain` builds. Lengths [m]; ranges are (value at difficulty 0, value at 1)."""

    levels: int = 10
    """Difficulty levels: rows of patches along x (mjlab's ``num_rows``)."""
    types: tuple[str, ...] = TERRAIN_TYPES
    """Patch types, one column each along y (a subset of :data:`TERRAIN_TYPES`, in any order)."""
    patch_size: float = 8.0
    """Side of a square patch (mjlab's and legged_gym's ``size``)."""
    resolution: float = 0.1
    """Horizontal spacing of the height samples (mjlab's ``horizontal_scale``)."""
    border: float = 8.0
    """Width of the flat ground around the grid (mjlab: 20 m, with an out-of-bounds termination)."""
    seed: int = 0
    """Seed of the random types (rough, obstacles); each patch draws from its own stream."""
    slope_range: tuple[float, float] = (0.0, 1.0)
    """Pyramid slope, rise over run (config.py ``hf_pyramid_slope(slope_range=(0.0, 1.0))``)."""
    slope_platform: float = 2.0
    """Side of a slope patch's flat top (bottom) (the preset's ``platform_width``)."""
    rough_noise_range: tuple[float, float] = (0.02, 0.10)
    """Random rough heights at difficulty 1 (the preset's ``noise_range``); scaled by the difficulty."""
    rough_noise_step: float = 0.02
    """Quantum of the random rough heights at difficulty 1 (the preset's ``noise_step``)."""
    rough_platform: float = 1.0
    """Side of a random rough patch's flat centre (ours: mjlab has none)."""
    step_height_range: tuple[float, float] = (0.0, 0.1)
    """Stair riser height (config.py ``pyramid_stairs(step_height_range=(0.0, 0.1))``)."""
    step_width: float = 0.3
    """Stair tread depth (the preset's ``step_width``)."""
    stairs_platform: float = 3.0
    """Side of a stairs patch's flat top (bottom) (the preset's ``platform_width``)."""
    stairs_border: float = 1.0
    """Flat frame around a stairs patch (the preset's ``border_width``)."""
    obstacle_height_range: tuple[float, float] = (0.05, 0.3)
    """Obstacle height h (the ``discrete_obstacles`` preset's ``obstacle_height_range``)."""
    obstacle_width_range: tuple[float, float] = (0.3, 1.0)
    """Obstacle side lengths (the preset's ``obstacle_width_range``)."""
    obstacle_count: int = 40
    """Obstacles per patch (the preset's ``num_obstacles``)."""
    obstacle_platform: float = 1.0
    """Side of an obstacle patch's cleared centre (the preset's ``platform_width``)."""
    edge: float = 0.25
    """Flat frame inside the slope, rough and obstacle patches (the presets' ``border_width``)."""

    def __post_init__(self) -> None:
        unknown = [t for t in self.types if t not in TERRAIN_TYPES]
        if unknown:
            raise ValueError(f"types: unknown terrain type {unknown[0]!r}; expected some of {TERRAIN_TYPES}")
        if not self.types or len(set(self.types)) != len(self.types):
            raise ValueError(f"types: expected distinct terrain types, got {self.types!r}")
        if int(self.levels) != self.levels or self.levels < 1:
            raise ValueError(f"levels: expected an integer >= 1, got {self.levels!r}")
        if int(self.obstacle_count) != self.obstacle_count or self.obstacle_count < 0:
            raise ValueError(f"obstacle_count: expected an integer >= 0, got {self.obstacle_count!r}")
        for name in ("patch_size", "resolution", "step_width"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name}: expected a length > 0 [m], got {getattr(self, name)!r}")
        for name in (
            "border",
            "slope_platform",
            "rough_platform",
            "stairs_platform",
            "stairs_border",
            "obstacle_platform",
            "edge",
            "rough_noise_step",
        ):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name}: expected a length >= 0 [m], got {getattr(self, name)!r}")
        cells = self.patch_size / self.resolution
        if abs(cells - round(cells)) > 1e-6:
            raise ValueError(
                f"resolution: expected a divisor of patch_size {self.patch_size} m, got {self.resolution} m"
            )
        for name in ("slope_platform", "rough_platform", "stairs_platform", "obstacle_platform"):
            if getattr(self, name) >= self.patch_size:
                raise ValueError(
                    f"{name}: expected less than patch_size {self.patch_size} m, got {getattr(self, name)}"
                )


@dataclass(frozen=True)
class Terrain:
    """A generated terrain: heights on a regular grid, with the patches' spawn points.

    Attributes:
        config: What was generated.
        heights: (ny, nx) float32 [m]: the height of the sample at x = ``x0 + ix * resolution``,
            y = ``y0 + iy * resolution`` (Newton's heightfield layout: rows along y, columns along x).
        x0: x of the first column [m].
        y0: y of the first row [m].
        spawn: (levels, types, 3) float32 [m]: the centre of each patch's platform (x, y, its height).
    """

    config: TerrainConfig
    heights: np.ndarray
    x0: float
    y0: float
    spawn: np.ndarray

    @property
    def resolution(self) -> float:
        """Spacing of the samples [m]."""
        return self.config.resolution

    @property
    def extent(self) -> tuple[float, float, float, float]:
        """(x_min, x_max, y_min, y_max) of the sampled surface [m]."""
        ny, nx = self.heights.shape
        r = self.resolution
        return self.x0, self.x0 + (nx - 1) * r, self.y0, self.y0 + (ny - 1) * r

    def height_at(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Surface height [m] at world points (x, y) [m] (arrays of one shape), on Newton's triangles; points
        outside the grid get the nearest edge's height."""
        h = self.heights
        ny, nx = h.shape
        u = np.clip((np.asarray(x, np.float64) - self.x0) / self.resolution, 0.0, nx - 1)
        v = np.clip((np.asarray(y, np.float64) - self.y0) / self.resolution, 0.0, ny - 1)
        col = np.minimum(np.floor(u).astype(np.int64), nx - 2)
        row = np.minimum(np.floor(v).astype(np.int64), ny - 2)
        fx, fy = u - col, v - row
        h00, h10 = h[row, col], h[row, col + 1]
        h01, h11 = h[row + 1, col], h[row + 1, col + 1]
        # Triangle (p00, p10, p11) where fx >= fy, (p00, p11, p01) elsewhere.
        lower = h00 + fx * (h10 - h00) + fy * (h11 - h10)
        upper = h00 + fy * (h01 - h00) + fx * (h11 - h01)
        return np.where(fx >= fy, lower, upper)

    def add_to(self, builder: newton.ModelBuilder, geometry: str, cfg: newton.ModelBuilder.ShapeConfig) -> int:
        """Add the terrain to ``builder`` as one static shape (body -1) of every world; returns its index.

        Args:
            geometry: ``"heightfield"`` (``newton.Heightfield``) or ``"mesh"`` (``newton.Mesh``, the same
                triangles).
            cfg: The shape's contact properties.

        Raises:
            ValueError: ``geometry`` is neither.
        """
        h = self.heights
        ny, nx = h.shape
        x_min, x_max, y_min, y_max = self.extent
        if geometry == "heightfield":
            field = newton.Heightfield(
                data=h,
                nrow=ny,
                ncol=nx,
                hx=(x_max - x_min) / 2,
                hy=(y_max - y_min) / 2,
                min_z=float(h.min()),
                max_z=float(h.max()),
            )
            centre = wp.transform(wp.vec3((x_min + x_max) / 2, (y_min + y_max) / 2, 0.0), wp.quat_identity())
            return builder.add_shape_heightfield(xform=centre, heightfield=field, cfg=cfg, label="terrain")
        if geometry == "mesh":
            xs = self.x0 + np.arange(nx) * self.resolution
            ys = self.y0 + np.arange(ny) * self.resolution
            gx, gy = np.meshgrid(xs, ys)
            vertices = np.stack([gx.ravel(), gy.ravel(), h.ravel()], axis=1).astype(np.float32)
            p00 = (np.arange(ny - 1)[:, None] * nx + np.arange(nx - 1)[None, :]).ravel()
            p10, p01, p11 = p00 + 1, p00 + nx, p00 + nx + 1
            triangles = np.concatenate([np.stack([p00, p10, p11], 1), np.stack([p00, p11, p01], 1)], axis=0)
            mesh = newton.Mesh(vertices, triangles.astype(np.int32).ravel(), compute_inertia=False, is_solid=False)
            return builder.add_shape_mesh(body=-1, mesh=mesh, cfg=cfg, label="terrain")
        raise ValueError(f"geometry: expected 'heightfield' or 'mesh', got {geometry!r}")


def _patch(kind: str, difficulty: float, c: TerrainConfig, rng: np.random.Generator) -> np.ndarray:
    """One patch's heights [m] on its (n + 1) x (n + 1) samples, n = patch_size / resolution; rows along y."""
    n = round(c.patch_size / c.resolution)
    half = c.patch_size / 2
    s = np.arange(n + 1) * c.resolution - half  # sample coordinates from the patch centre [m]
    ax, ay = np.abs(s)[None, :], np.abs(s)[:, None]
    if kind == "flat":
        return np.zeros((n + 1, n + 1))
    if kind.startswith("pyramid_slope"):
        slope = c.slope_range[0] + difficulty * (c.slope_range[1] - c.slope_range[0])
        inner = half - c.edge
        # mjlab's surface: the product of the two tent functions, capped at the platform's corner height.
        fx, fy = np.clip(1 - ax / inner, 0, 1), np.clip(1 - ay / inner, 0, 1)
        top = slope * inner * (1 - c.slope_platform / 2 / inner) ** 2
        z = np.minimum(slope * inner * fx * fy, top)
        return -z if kind.endswith("_inv") else z
    if kind.startswith("pyramid_stairs"):
        rise = c.step_height_range[0] + difficulty * (c.step_height_range[1] - c.step_height_range[0])
        steps = max(0, int((c.patch_size - 2 * c.stairs_border - c.stairs_platform) / (2 * c.step_width) + 1e-9))
        inset = half - np.maximum(ax, ay) - c.stairs_border  # distance inside the stairs' outer edge [m]
        ring = np.where(inset < 0, 0, np.minimum(np.floor(inset / c.step_width + 1e-9) + 1, steps + 1))
        z = rise * ring
        return -z if kind.endswith("_inv") else z
    if kind == "random_rough":
        lo, hi, step = (difficulty * v for v in (*c.rough_noise_range, c.rough_noise_step))
        values = np.arange(lo, hi + step / 2, step) if step > 0 else np.array([lo])
        z = rng.choice(values, size=(n + 1, n + 1))
        z[np.maximum(ax, ay) > half - c.edge] = 0.0
        z[np.maximum(ax, ay) <= c.rough_platform / 2] = (lo + hi) / 2
        return z
    if kind == "discrete_obstacles":
        h = c.obstacle_height_range[0] + difficulty * (c.obstacle_height_range[1] - c.obstacle_height_range[0])
        z = np.zeros((n + 1, n + 1))
        widths = np.arange(c.obstacle_width_range[0], c.obstacle_width_range[1] + 1e-9, 4 * c.resolution)
        inner = c.patch_size - 2 * c.edge
        for _ in range(c.obstacle_count):
            height = rng.choice([-h, -h / 2, h / 2, h])
            wx, wy = rng.choice(widths), rng.choice(widths)
            # Corners on a 4-cell lattice inside the edge frame, as mjlab's.
            x = rng.choice(np.arange(0.0, inner, 4 * c.resolution)) + c.edge - half
            y = rng.choice(np.arange(0.0, inner, 4 * c.resolution)) + c.edge - half
            inside_x = (s >= x - 1e-9) & (s <= min(x + wx, half - c.edge) + 1e-9)
            inside_y = (s >= y - 1e-9) & (s <= min(y + wy, half - c.edge) + 1e-9)
            z[np.ix_(inside_y, inside_x)] = height
        z[np.maximum(ax, ay) <= c.obstacle_platform / 2] = 0.0
        return z
    raise AssertionError(kind)


def generate_terrain(config: TerrainConfig | None = None, **fields) -> Terrain:
    """Generate the terrain grid of ``config`` (or of :class:`TerrainConfig` ``(**fields)``).

    Deterministic in the config: each random patch draws from ``numpy.random.default_rng((seed, level, column))``.

    Raises:
        ValueError: A config field out of its range (one line naming it).
    """
    c = dataclasses.replace(config, **fields) if config is not None else TerrainConfig(**fields)
    n = round(c.patch_size / c.resolution)
    b = round(c.border / c.resolution)
    nx, ny = c.levels * n + 2 * b + 1, len(c.types) * n + 2 * b + 1
    heights = np.zeros((ny, nx))
    x0 = -(c.levels * c.patch_size) / 2 - b * c.resolution
    y0 = -(len(c.types) * c.patch_size) / 2 - b * c.resolution
    spawn = np.zeros((c.levels, len(c.types), 3), np.float32)
    for level in range(c.levels):
        difficulty = level / max(c.levels - 1, 1)
        for column, kind in enumerate(c.types):
            rng = np.random.default_rng((c.seed, level, column))
            patch = _patch(kind, difficulty, c, rng)
            ix, iy = b + level * n, b + column * n
            heights[iy : iy + n + 1, ix : ix + n + 1] = patch
            spawn[level, column] = (
                x0 + (ix + n / 2) * c.resolution,
                y0 + (iy + n / 2) * c.resolution,
                patch[n // 2, n // 2],
            )
    return Terrain(c, heights.astype(np.float32), float(x0), float(y0), spawn)


@wp.func
def terrain_height(
    heights: wp.array2d[wp.float32], origin: wp.vec2, inv_resolution: wp.float32, x: wp.float32, y: wp.float32
) -> wp.float32:
    """Surface height [m] at world (x, y) [m] of the heights ``heights`` ((ny, nx), rows along y) whose first sample
    is at ``origin`` [m], ``1 / inv_resolution`` apart: Newton's heightfield triangles, as :meth:`Terrain.height_at`
    (points outside the grid get the nearest edge's height; an all-zero grid gives exactly 0)."""
    nx = heights.shape[1]
    ny = heights.shape[0]
    u = wp.clamp((x - origin[0]) * inv_resolution, 0.0, wp.float32(nx - 1))
    v = wp.clamp((y - origin[1]) * inv_resolution, 0.0, wp.float32(ny - 1))
    col = wp.min(int(wp.floor(u)), nx - 2)
    row = wp.min(int(wp.floor(v)), ny - 2)
    fx = u - wp.float32(col)
    fy = v - wp.float32(row)
    h00 = heights[row, col]
    h10 = heights[row, col + 1]
    h01 = heights[row + 1, col]
    h11 = heights[row + 1, col + 1]
    if fx >= fy:
        return h00 + fx * (h10 - h00) + fy * (h11 - h10)
    return h00 + fy * (h01 - h00) + fx * (h11 - h01)


@wp.kernel(enable_backward=False)
def place_on_terrain(
    world_mask: wp.array[wp.bool],
    origin: wp.array[wp.vec3],
    coord_world_start: wp.array[wp.int32],
    dof_world_start: wp.array[wp.int32],
    rng_state: wp.array[wp.uint32],
    joint_q: wp.array[wp.float32],
    joint_qd: wp.array[wp.float32],
):
    """Move a reset world's robot, drawn at the origin, onto its spawn point with a heading U(-pi, pi): its free root
    joint's coordinates and velocities, rotated about z and shifted (the bodies follow by forward kinematics)."""
    w = wp.tid()
    if not world_mask[w]:
        return
    rng = rng_state[w]
    yaw = (2.0 * wp.randf(rng) - 1.0) * wp.pi
    rng_state[w] = rng
    turn = wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), yaw)
    c = coord_world_start[w]
    d = dof_world_start[w]
    root = wp.transform_multiply(
        wp.transform(origin[w], turn),
        wp.transform(
            wp.vec3(joint_q[c], joint_q[c + 1], joint_q[c + 2]),
            wp.quat(joint_q[c + 3], joint_q[c + 4], joint_q[c + 5], joint_q[c + 6]),
        ),
    )
    for k in range(3):
        joint_q[c + k] = wp.transform_get_translation(root)[k]
    for k in range(4):
        joint_q[c + 3 + k] = wp.transform_get_rotation(root)[k]
    v = wp.quat_rotate(turn, wp.vec3(joint_qd[d], joint_qd[d + 1], joint_qd[d + 2]))
    omega = wp.quat_rotate(turn, wp.vec3(joint_qd[d + 3], joint_qd[d + 4], joint_qd[d + 5]))
    for k in range(3):
        joint_qd[d + k] = v[k]
        joint_qd[d + 3 + k] = omega[k]


@dataclass(kw_only=True)
class TerrainSceneConfig:
    """Config fields of a scene on the terrain grid (mixed into a task's config before its flat scene's)."""

    terrain_seed: int = 0
    """Seed of the terrain's random patches (the same terrain for every world and every env with this seed)."""
    terrain_geometry: str = "heightfield"
    """``"heightfield"`` or ``"mesh"``: the same triangles as one ``newton.Heightfield`` or ``newton.Mesh``."""

    field_ranges = declare(terrain_seed=at_least(0, "a seed", integer=True))

    def __post_init__(self) -> None:
        if self.terrain_geometry not in ("heightfield", "mesh"):
            raise ValueError(f"terrain_geometry: expected 'heightfield' or 'mesh', got {self.terrain_geometry!r}")
        super().__post_init__()


class TerrainScene:
    """A mixin that puts a flat-ground robot scene on the terrain grid: mixed in before the scene class
    (``class Go1RoughScene(TerrainScene, Go1Scene)``), it replaces the ground plane by one static terrain (a
    heightfield or a mesh, ``config.terrain_geometry``; :func:`generate_terrain` with ``terrain_config`` and
    ``config.terrain_seed``) that all worlds share, and narrows the contact gap of the robot's shapes and the
    terrain to ``contact_gap``. A world's robot is built at the origin and moved onto a spawn point at each reset
    (:meth:`_spawn_on_terrain`, a platform of the grid, heading U(-pi, pi)); which patch is the task's choice (its
    curriculum)."""

    add_ground_plane = False
    terrain_config: ClassVar[TerrainConfig] = TerrainConfig()
    """The terrain grid's generator settings (its seed is the config's ``terrain_seed``)."""
    contact_gap: ClassVar[float] = 0.03
    """Contact gap of the robot's shapes and the terrain [m] (Newton's default 0.1). Within its gap each shape makes
    speculative contacts with every nearby terrain triangle: with 0.1 a Go1 world made up to 185 contacts under
    random actions on the hardest stairs and stepped 6.7x slower than with 0.02 (27 contacts). The gap must exceed
    the distance a shape closes in one physics step (a foot at 4 m/s: 2 cm)."""

    def build_world(self, builder: newton.ModelBuilder) -> None:
        builder.rigid_gap = self.contact_gap
        super().build_world(builder)

    def build_shared(self, builder: newton.ModelBuilder) -> None:
        """Add the terrain (body -1); it is kept as ``self.terrain`` (:class:`Terrain`)."""
        self.terrain = generate_terrain(self.terrain_config, seed=self.config.terrain_seed)
        shape = builder.default_shape_cfg.copy()  # the flat scenes' ground's material
        shape.gap = self.contact_gap
        self.terrain.add_to(builder, self.config.terrain_geometry, shape)

    def _spawn_on_terrain(self, world_mask: wp.array, origin: wp.array) -> None:
        """Write the initial state of the selected worlds with their robots moved onto ``origin`` ((num_envs,)
        wp.vec3 [m], a spawn point of :attr:`Terrain.spawn`) and turned to a heading U(-pi, pi), then their bodies by
        forward kinematics (once, after the root is placed)."""
        self.initial_states.reset(world_mask, kinematics=False)
        m = self.model
        self.launch_per_world(
            place_on_terrain,
            inputs=[world_mask, origin, m.joint_coord_world_start, m.joint_dof_world_start],
            outputs=[self.rng_state, self.state_0.joint_q, self.state_0.joint_qd],
        )
        self.initial_states.eval_fk(world_mask)
