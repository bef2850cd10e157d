"""The GPU check's pixels stage: env-steps/s and frames/s with ``obs_mode="rgb"`` (Newton's ray-traced
``SensorCamera``, one camera per world, inside the step), beside the same worlds with state observations.

Random actions are made on the device before the timed loop, which is synchronized at both ends; each measurement
builds its own env and frees it before the next.
"""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Sequence
from typing import Any

import torch

__all__ = ["PIXEL_IDS", "measure", "pixels_stage"]

PIXEL_IDS = ("steel_envs/CartpoleBalance-v0", "steel_envs/AntRun-v0")
"""The IDs measured by default: the cheapest scene and the headline one."""
RESERVE_S = 10.0
"""Seconds of the stage's limit kept to write the file [s]."""
MEASURE_S = 20.0
"""A measurement is started only while this much of the stage's limit is left [s]."""


def _sync(env) -> None:
    if env.torch_device.type == "cuda":
        torch.cuda.synchronize(env.torch_device)


def measure(env_id: str, device: str, n: int, steps: int, size: int | None = None) -> dict[str, Any]:
    """Time ``steps`` random-action steps of ``n`` worlds, after 4 untimed ones.

    Args:
        env_id: A registered ID.
        device: Warp and torch device.
        n: Worlds.
        steps: Timed control steps.
        size: Image side [px] for ``obs_mode="rgb"`` (square images); None: state observations.

    Returns:
        env_id, worlds, steps, build_s and first_step_s [s], env_steps_per_s, step_ms [ms]; with pixels also
        frames_per_s, megapixels_per_s, obs_shape, obs_dtype, obs_device, worlds_with_varied_pixels (the fraction of
        worlds whose image is not one colour) and mean_pixel (0-255).
    """
    import steel_envs

    kwargs = {} if size is None else {"obs_mode": "rgb", "render_size": (size, size)}
    t = time.perf_counter()
    env = steel_envs.make_vec(env_id, num_envs=n, device=device, seed=0, **kwargs)
    build = time.perf_counter() - t
    g = torch.Generator(device=env.torch_device).manual_seed(0)
    actions = [torch.rand((n, env.action_dim), generator=g, device=env.torch_device) * 2 - 1 for _ in range(8)]
    t = time.perf_counter()
    obs, *_ = env.step(actions[0])
    _sync(env)
    first = time.perf_counter() - t
    for a in actions[1:4]:
        env.step(a)
    _sync(env)
    t = time.perf_counter()
    for k in range(steps):
        obs, *_ = env.step(actions[k % len(actions)])
    _sync(env)
    dt = time.perf_counter() - t
    r = {
        "env_id": env_id,
        "worlds": n,
        "steps": steps,
        "build_s": round(build, 2),
        "first_step_s": round(first, 3),
        "env_steps_per_s": n * steps / dt,
        "step_ms": 1e3 * dt / steps,
    }
    if size is not None:
        flat = obs.reshape(n, -1)
        r.update(
            frames_per_s=n * steps / dt,
            megapixels_per_s=n * steps * size * size / dt / 1e6,
            obs_shape=list(obs.shape),
            obs_dtype=str(obs.dtype),
            obs_device=str(obs.device),
            worlds_with_varied_pixels=float((flat.amax(dim=1) > flat.amin(dim=1)).float().mean()),
            mean_pixel=float(obs.float().mean()),
        )
    env.close()
    del env, obs, actions
    gc.collect()
    return r


def _print(r: dict[str, Any], size: int) -> None:
    rgb = r["obs_mode"] == "rgb"
    rate = f"{r['env_steps_per_s']:12,.0f} env-steps/s ({r['step_ms']:.3f} ms/step"
    extra = f", {r['frames_per_s']:,.0f} frames/s, {r['megapixels_per_s']:,.1f} Mpx/s" if rgb else ""
    print(
        f"[pixels] {r['env_id']} x {r['worlds']} {r['obs_mode']:5s}{f' {size}x{size}' if rgb else ''}: {rate}{extra}; "
        f"build {r['build_s']} s, first step {r['first_step_s']} s)",
        flush=True,
    )
    if rgb:
        print(
            f"         obs {r['obs_shape']} {r['obs_dtype']} on {r['obs_device']}, "
            f"{100 * r['worlds_with_varied_pixels']:.0f}% of worlds not one colour, mean pixel {r['mean_pixel']:.1f}"
        )


def pixels_stage(
    device: str, out: str, n: int, size: int, steps: int, limit_s: float, env_ids: Sequence[str] = PIXEL_IDS
) -> int:
    """Measure each ID with pixels then with state observations within ``limit_s``, rewriting ``out`` after each.

    Args:
        device: Warp and torch device.
        out: Path of the JSON file: {device, worlds, size, results: [:func:`measure`'s dict with obs_mode and
            status]}.
        n: Worlds.
        size: Image side [px].
        steps: Timed control steps per measurement.
        limit_s: The stage's time limit [s].
        env_ids: The IDs measured.

    Returns:
        0 when every measurement ran, 3 when one was skipped for lack of time.
    """
    deadline = time.monotonic() + limit_s - RESERVE_S
    results = []
    for env_id in env_ids:
        for mode in ("rgb", "state"):
            if time.monotonic() > deadline - MEASURE_S:
                results.append({"env_id": env_id, "obs_mode": mode, "status": "skipped: stage budget"})
                print(f"[pixels] {env_id} {mode}: skipped (stage budget)")
            else:
                r = measure(env_id, device, n, steps, size if mode == "rgb" else None)
                results.append({"obs_mode": mode, **r, "status": "ok"})
                _print(results[-1], size)
            with open(out, "w") as f:
                json.dump({"device": device, "worlds": n, "size": size, "results": results}, f, indent=2)
    return 0 if all(r["status"] == "ok" for r in results) else 3
