"""The animations of the task pages: each shipped ID's reference policy, recorded as an animated WebP.

``python -m steel_envs.training.benchmarks.media steel_envs/AntRun-v0`` (or ``--all`` for every ID of
``steel_envs.ENV_IDS``) runs what ``steel-envs record <ID> --policy reference:<k>`` runs
(:func:`steel_envs.cli.record`: one world, seed 0, the lowest seed ``k`` whose checkpoint ships, 0 but while a
report is re-measured seed by seed) and writes ``docs/media/<Name>.webp``: at most :data:`FRAMES` frames of
:data:`SIZE` pixels, at most :data:`MAX_BYTES` bytes, playing in real time. When the control step is
short, every k-th step is kept so that the clip covers about :data:`CLIP_SECONDS` of the episode. The documentation
build only links these committed files; it never records.

WebP rather than GIF: the ray-traced frames (shading, a checkerboard ground) need a 256-colour GIF of about
three times the bytes at the same size.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

import numpy as np

__all__ = [
    "CLIP_SECONDS",
    "FRAMES",
    "MAX_BYTES",
    "MEDIA_DIR",
    "SIZE",
    "TOTAL_BYTES",
    "frame_stride",
    "main",
    "media_path",
    "record_media",
    "write_webp",
]

FRAMES = 96
"""Most frames of one animation."""
SIZE = (240, 180)
"""Frame (width, height) [px]."""
MAX_BYTES = 250_000
"""Most bytes of one animation file."""
TOTAL_BYTES = 4_000_000
"""Most bytes of ``docs/media`` in all."""
CLIP_SECONDS = 6.0
"""Simulated time [s] a clip aims to cover (less when the episode is shorter)."""
MEDIA_DIR = Path(__file__).resolve().parents[2] / "docs" / "media"
"""Where the task pages find the animations: ``docs/media`` of the checkout."""
_QUALITIES = (70, 60, 50, 40, 30, 20)
"""WebP qualities tried in turn until the file fits :data:`MAX_BYTES`."""


def media_path(env_id: str, out_dir: Path = MEDIA_DIR) -> Path:
    """The animation file of ``env_id``: ``<out_dir>/<Name>.webp`` (the ID without its ``steel_envs/`` prefix)."""
    return Path(out_dir) / f"{env_id.split('/')[-1]}.webp"


def frame_stride(control_dt: float, episode_steps: int, frames: int = FRAMES) -> int:
    """Control steps per kept frame, so that ``frames`` frames cover about :data:`CLIP_SECONDS` (at most the
    episode): 1 for a 0.05 s control step, 3 for 0.02 s."""
    seconds = min(CLIP_SECONDS, control_dt * episode_steps)
    return max(1, round(seconds / (max(frames - 1, 1) * control_dt)))


def write_webp(frames: list[np.ndarray], path: Path, frame_ms: float, max_bytes: int = MAX_BYTES) -> int:
    """Write (H, W, 3) uint8 ``frames`` as a looping animated WebP of ``frame_ms`` [ms] per frame at the highest
    quality of :data:`_QUALITIES` whose file fits ``max_bytes``; return its size [bytes].

    Raises:
        ValueError: If no frame is given, or the lowest quality does not fit ``max_bytes``.
    """
    from PIL import Image

    if not frames:
        raise ValueError("frames: expected at least one frame")
    images = [Image.fromarray(np.ascontiguousarray(f)) for f in frames]
    for quality in _QUALITIES:
        buffer = io.BytesIO()
        images[0].save(
            buffer,
            "WEBP",
            save_all=True,
            append_images=images[1:],
            duration=round(frame_ms),
            loop=0,
            quality=quality,
            method=6,
        )
        if buffer.tell() <= max_bytes:
            Path(path).write_bytes(buffer.getvalue())
            return buffer.tell()
    raise ValueError(f"max_bytes: {len(frames)} frames need {buffer.tell()} bytes at quality {quality}, > {max_bytes}")


def record_media(
    env_id: str,
    out_dir: Path = MEDIA_DIR,
    *,
    frames: int = FRAMES,
    policy: str | None = None,
    device: str = "cpu",
    seed: int = 0,
) -> Path:
    """Record ``env_id`` running ``policy`` (a ``steel-envs record --policy`` spec; None: the shipped reference
    checkpoint of the lowest seed) and write its animation to :func:`media_path`; return the path. ``frames`` below
    :data:`FRAMES` keeps the first frames of the full clip (same stride, same playback speed).

    Raises:
        ValueError: On ``frames`` outside [2, :data:`FRAMES`], or an animation that does not fit :data:`MAX_BYTES`.
        FileNotFoundError: If ``policy`` is None or ``reference[:<k>]`` and no such reference checkpoint ships.
    """
    from steel_envs.cli import record
    from steel_envs.registration import task_class

    if not 2 <= frames <= FRAMES:
        raise ValueError(f"frames: expected an int in [2, {FRAMES}], got {frames}")
    if policy is None:
        from steel_envs.policies import reference_seeds

        policy = f"reference:{min(reference_seeds(env_id), default=0)}"
    cls = task_class(env_id)
    dt = cls.physics_dt * cls.decimation
    stride = frame_stride(dt, cls.default_max_episode_steps)  # fewer frames: the start of the same clip
    rendered, fps = record(env_id, steps=(frames - 1) * stride, policy=policy, size=SIZE, device=device, seed=seed)
    path = media_path(env_id, out_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_webp(rendered[::stride][:frames], path, 1000.0 * stride / fps)
    return path


def main(argv: list[str] | None = None) -> int:
    import steel_envs
    from steel_envs.runtime import init_warp

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("env_ids", nargs="*", help="registered IDs, e.g. steel_envs/AntRun-v0")
    p.add_argument("--all", action="store_true", help="every shipped ID (steel_envs.ENV_IDS)")
    p.add_argument("--out", default=str(MEDIA_DIR), help=f"output folder (default {MEDIA_DIR})")
    p.add_argument("--frames", type=int, default=FRAMES, help=f"frames per animation (default {FRAMES})")
    p.add_argument("--device", default="cpu", help="Warp device (default cpu)")
    args = p.parse_args(argv)
    env_ids = list(steel_envs.ENV_IDS) if args.all else args.env_ids
    if not env_ids:
        p.error("env_ids: expected at least one ID, or --all")
    unknown = [e for e in env_ids if e not in steel_envs.ENV_IDS]
    if unknown:
        p.error(f"env_ids: expected shipped IDs ({', '.join(steel_envs.ENV_IDS)}), got {', '.join(unknown)}")
    init_warp()
    for env_id in env_ids:
        try:
            path = record_media(env_id, Path(args.out), frames=args.frames, device=args.device)
        except (ValueError, FileNotFoundError) as e:
            print(f"media {env_id}: {e}", file=sys.stderr)
            return 2
        print(f"{path}: {path.stat().st_size / 1000:.0f} kB")
    total = sum(f.stat().st_size for f in Path(args.out).glob("*") if f.is_file())
    print(f"{args.out}: {total / 1e6:.2f} MB in all (limit {TOTAL_BYTES / 1e6:.0f} MB)")
    return 0 if total <= TOTAL_BYTES else 1


if __name__ == "__main__":
    sys.exit(main())
