"""``rgb_array`` rendering of a vector env through Newton's ray-traced ``SensorCamera`` (CPU and CUDA).

Each view renders one world (the sensor filters shapes by world) from a camera that looks at the scene's
tracked body, or at the world origin for a fixed camera; the ground is drawn with a checkerboard so motion
reads on screen. Frames come back as ``(H, W, 3)`` uint8 numpy arrays, several worlds tiled into one grid. A task
with goals (``goal_positions``) gets them drawn as green discs on the rendered frames, hidden behind nearer
surfaces; pixel observations (``obs_mode``) never show them.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import newton
import numpy as np
import warp as wp
from newton.sensors import SensorCamera

if TYPE_CHECKING:
    from .core import NewtonVectorEnv

__all__ = ["GOAL_COLOR", "Renderer", "write_video"]

GOAL_COLOR = (60, 220, 90)
"""RGB of the goal markers drawn into rendered frames (``render``, ``record``)."""


@wp.kernel(enable_backward=False)
def _look_at_transforms(
    body_q: wp.array[wp.transform],
    body_world_start: wp.array[wp.int32],
    tracked_body: wp.int32,
    eye_offset: wp.vec3,
    target_offset: wp.vec3,
    out: wp.array[wp.transformf],
):
    """Camera pose of view ``v`` (world ``v``): at ``base + eye_offset`` looking at ``base + target_offset``,
    z up, where ``base`` is the tracked body's ground-projected position (or the origin if it is -1)."""
    v = wp.tid()
    base = wp.vec3(0.0, 0.0, 0.0)
    if tracked_body >= 0:
        p = wp.transform_get_translation(body_q[body_world_start[v] + tracked_body])
        base = wp.vec3(p[0], p[1], 0.0)
    eye = base + eye_offset
    back = wp.normalize(eye - (base + target_offset))
    right = wp.normalize(wp.cross(wp.vec3(0.0, 0.0, 1.0), back))
    up = wp.cross(back, right)
    # Columns: the camera's +X (right), +Y (up) and +Z (backwards: the camera looks along -Z).
    rot = wp.mat33(right[0], up[0], back[0], right[1], up[1], back[1], right[2], up[2], back[2])
    out[v] = wp.transformf(eye, wp.quat_from_matrix(rot))


def _quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrix of a unit quaternion (x, y, z, w)."""
    x, y, z, w = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


class Renderer:
    """Renders the first ``num_worlds`` worlds of an env; built on the env's first ``render()``.

    Args:
        env: The vector env (its scene sets ``camera_tracked_body``, ``camera_eye`` and ``camera_target``).
        width: Frame width per world [px].
        height: Frame height per world [px].
        num_worlds: Worlds rendered and tiled into one frame (the first ones).
        fov: Vertical field of view [rad].

    Raises:
        ValueError: On a non-positive size or ``num_worlds`` outside [1, num_envs].
    """

    def __init__(self, env: NewtonVectorEnv, width: int, height: int, num_worlds: int = 1, fov: float = 0.9):
        if width < 1 or height < 1:
            raise ValueError(f"render_size: expected positive (width, height), got ({width}, {height})")
        if not 1 <= num_worlds <= env.num_envs:
            raise ValueError(f"render_num_worlds: expected an int in [1, {env.num_envs}], got {num_worlds}")
        self.env, self.width, self.height, self.num_worlds = env, width, height, num_worlds
        model = env.model
        device = model.device
        self.sensor = SensorCamera(model)
        self.sensor.create_default_light(enable_shadows=False)
        # The ground: planes, and the static terrains (heightfields, meshes on no body) the rough scenes share.
        kinds = model.shape_type.numpy()
        static = model.shape_body.numpy() < 0
        ground = np.flatnonzero(
            (kinds == int(newton.GeoType.PLANE))
            | (static & np.isin(kinds, (int(newton.GeoType.HFIELD), int(newton.GeoType.MESH))))
        )
        if len(ground):
            self.sensor.assign_checkerboard_material(shape_indices=ground)
        self.sensor.default_render_config.enable_textures = True
        if model.particle_count:
            # A cloth is a sheet seen from both sides (a hanging one turns its back to the camera); a closed soft
            # body's back faces are hidden by its front ones either way.
            self.sensor.default_render_config.enable_backface_culling = False
        self.sensor.default_clear_data = SensorCamera.ClearData(clear_color=0xFFB0A090)
        self.rays = SensorCamera.compute_camera_rays_pinhole(width, height, camera_fov=fov, device=device)
        self.transforms = wp.empty(num_worlds, dtype=wp.transformf, device=device)
        self.color = None  # the image of frames(), allocated on first use (pixel observations bring their own)
        self.depth = None
        self.fov = fov
        self._ray_directions = None  # (H, W, 3) float64 host copy of the rays, for goal markers (fixed per camera)

    def draw(self, color: wp.array | None = None, depth: wp.array | None = None) -> None:
        """Render into device images (num_worlds, H, W): packed RGBA uint32 and/or ray depth [m] (-1: no hit).
        Launches only, so it can be captured in the step graph."""
        env, model = self.env, self.env.model
        wp.launch(
            _look_at_transforms,
            self.num_worlds,
            inputs=[
                env.state_0.body_q,
                model.body_world_start,
                int(env.camera_tracked_body),
                wp.vec3(*env.camera_eye),
                wp.vec3(*env.camera_target),
            ],
            outputs=[self.transforms],
            device=model.device,
        )
        model.bvh_refit_shapes(env.state_0)
        if model.particle_count:  # cloth and soft-body surfaces (SolverVBD scenes)
            model.bvh_refit_particles(env.state_0)
        self.sensor.update(env.state_0, self.transforms, self.rays, color_image=color, depth_image=depth)

    def frames(self) -> np.ndarray:
        """Render now, with the task's goal markers; shape (num_worlds, H, W, 3) uint8."""
        goals = self.env.goal_positions()
        if self.color is None:
            self.color = self.sensor.allocate_image_color(self.num_worlds, self.width, self.height)
        if goals is not None and self.depth is None:
            self.depth = self.sensor.allocate_image_depth(self.num_worlds, self.width, self.height)
        self.draw(color=self.color, depth=self.depth if goals is not None else None)
        rgba = self.color.numpy().view(np.uint8).reshape(self.num_worlds, self.height, self.width, 4)
        views = np.ascontiguousarray(rgba[..., :3])
        if goals is not None:
            self._draw_goals(views, np.asarray(goals, np.float64)[: self.num_worlds])
        return views

    def _draw_goals(self, views: np.ndarray, goals: np.ndarray) -> None:
        """Paint each goal (num_worlds, K, 3) [m] as a disc at the pixel whose camera ray points at it, where no
        surface in front of it covers that pixel (the depth image)."""
        if self._ray_directions is None:  # camera frame, -Z forward; the rays never change
            self._ray_directions = self.rays.numpy()[:, :, 0, 1].astype(np.float64)
        directions = self._ray_directions
        depth = self.depth.numpy().reshape(self.num_worlds, self.height, self.width)
        poses = self.transforms.numpy().astype(np.float64)
        rows, cols = np.ogrid[: self.height, : self.width]
        radius = max(2, self.height // 48)
        pixel_angle = self.fov / self.height
        for v, pose in enumerate(poses):
            rotation = _quat_to_matrix(pose[3:])
            for goal in goals[v]:
                if not np.isfinite(goal).all():
                    continue
                local = rotation.T @ (goal - pose[:3])
                distance = float(np.linalg.norm(local))
                if distance < 1e-6 or local[2] >= 0.0:  # at or behind the camera (it looks along -Z)
                    continue
                score = directions @ (local / distance)
                r, c = np.unravel_index(int(np.argmax(score)), score.shape)
                if score[r, c] < np.cos(2.0 * pixel_angle):  # outside the view
                    continue
                disc = (rows - r) ** 2 + (cols - c) ** 2 <= radius**2
                seen = (depth[v] < 0.0) | (depth[v] >= 0.98 * distance - 0.01)
                views[v][disc & seen] = GOAL_COLOR

    def frame(self) -> np.ndarray:
        """Render now; world 0 as (H, W, 3) uint8, or the worlds tiled in a near-square grid."""
        views = self.frames()
        if self.num_worlds == 1:
            return views[0]
        cols = math.ceil(math.sqrt(self.num_worlds))
        rows = math.ceil(self.num_worlds / cols)
        grid = np.zeros((rows * self.height, cols * self.width, 3), np.uint8)
        for i, view in enumerate(views):
            r, c = divmod(i, cols)
            grid[r * self.height : (r + 1) * self.height, c * self.width : (c + 1) * self.width] = view
        return grid


def write_video(frames: list[np.ndarray], path: str, fps: float) -> None:
    """Write (H, W, 3) uint8 frames to ``path`` (.mp4 through imageio-ffmpeg, .gif through Pillow).

    Raises:
        ValueError: On an extension other than .mp4 or .gif, or no frames.
        ImportError: If imageio (extra ``video``) is not installed.
    """
    import imageio.v3 as iio

    if not frames:
        raise ValueError("frames: expected at least one frame")
    if path.endswith(".gif"):
        iio.imwrite(path, np.stack(frames), duration=1000.0 / fps, loop=0)
    elif path.endswith(".mp4"):
        iio.imwrite(path, np.stack(frames), fps=fps, codec="libx264", macro_block_size=1)
    else:
        raise ValueError(f"out: expected a .mp4 or .gif file name, got {path!r}")
