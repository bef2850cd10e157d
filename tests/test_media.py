"""The task pages' animations (``docs/media``): one per shipped ID with a reference policy, within the limits on what
the repository carries, and the script that records them writes a short real-time clip of a reference policy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

import steel_envs
from steel_envs.policies import REFERENCE_DIR

MEDIA = Path(__file__).resolve().parents[1] / "docs" / "media"


def _playback_ms(im: Image.Image) -> tuple[int, int]:
    """(frames, total playback [ms]) of an animated WebP: the last frame's start plus its duration (the encoder
    merges identical neighbouring frames, so the frame count alone understates the clip)."""
    im.seek(im.n_frames - 1)
    im.load()
    return im.n_frames, im.info["timestamp"] + im.info["duration"]


def test_every_shipped_id_has_an_animation_within_the_limits() -> None:
    """docs/media holds one animated WebP per shipped ID whose reference policy ships (and none for anything else):
    at most 96 frames of 240x180, at most 250 KB each and 4 MB in all."""
    files = sorted(MEDIA.iterdir())
    names = {e.split("/")[-1] for e in steel_envs.ENV_IDS}
    assert {f.stem for f in files} <= names
    assert {f.stem for f in files} >= {n for n in names if (Path(REFERENCE_DIR) / n / "seed0").exists()}
    total = 0
    for path in files:
        with Image.open(path) as im:
            assert (im.format, im.is_animated, im.size) == ("WEBP", True, (240, 180)), path.name
            frames, _ = _playback_ms(im)
            assert frames <= 96, (path.name, frames)
        assert path.stat().st_size <= 250_000, (path.name, path.stat().st_size)
        total += path.stat().st_size
    assert total <= 4_000_000, total


def test_the_media_script_records_a_real_time_clip(tmp_path: Path) -> None:
    """Four frames of CartpoleBalance's reference policy: a 240x180 WebP named after the ID, not blank, playing
    in real time (control step 0.02 s, every 3rd step kept, so 4 x 60 ms)."""
    from steel_envs.training.benchmarks.media import record_media

    path = record_media("steel_envs/CartpoleBalance-v0", tmp_path, frames=4)
    assert path == tmp_path / "CartpoleBalance-v0.webp"
    with Image.open(path) as im:
        assert im.size == (240, 180)
        first = np.asarray(im.convert("RGB"))
        assert first.reshape(-1, 3).std(axis=0).max() > 10.0  # sky, rail and cart: not one flat colour
        frames, playback = _playback_ms(im)
    assert 2 <= frames <= 4 and playback == 240, (frames, playback)
