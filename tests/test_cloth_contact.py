"""ClothFold's cloth stays above the ground under adversarial corner motion (issue 13 item 2).

One world per scripted action family, stepped together: pressing the held corners down, pressing while dragging
them over the cloth, dragging them towards each other along the ground until they cross (the issue's reproducer:
the lowest particle was 43 mm under the ground after 40 steps and 1.40 m after 300), crossing them while pressing,
fast bang-bang motion and uniform random actions. After every step no particle centre may be below the ground
plane, and no particle may be more than 5 mm (the doctor's ``PENETRATION_TOL``) into it (its radius minus its
centre height). Before SolverVBD's rigid-soft truncation (``rigid_soft_enable_dat``) the dragging, crossing,
fast and random families all put particle centres tens of mm under the ground within these 80 steps.
"""

from __future__ import annotations

import numpy as np
import torch
from conftest import make

from steel_envs.doctor.penetration import PENETRATION_TOL

CLOTH = "steel_envs/ClothFold-v0"
STEPS = 80


def _families(steps: int) -> dict[str, np.ndarray]:
    """(steps, 6) float32 actions per family: the two held corners' x, y, z velocities over their top speed."""
    rng = np.random.Generator(np.random.PCG64(13))
    const = {
        "press": [0.0, 0.0, -1.0, 0.0, 0.0, -1.0],
        "press and drag over": [0.0, 1.0, -1.0, 0.0, 1.0, -1.0],
        "drag together": [1.0, 0.0, 0.0, -1.0, 0.0, 0.0],
        "cross while pressing": [1.0, 0.5, -0.2, -1.0, 0.5, -0.2],
    }
    families = {name: np.tile(np.float32(a), (steps, 1)) for name, a in const.items()}
    flips = np.sign(rng.uniform(-1.0, 1.0, (steps // 3 + 1, 6))).astype(np.float32)
    families["fast bang-bang"] = np.repeat(flips, 3, axis=0)[:steps]  # full speed, re-drawn every 3 steps
    families["random"] = rng.uniform(-1.0, 1.0, (steps, 6)).astype(np.float32)
    return families


def test_no_particle_passes_through_the_ground_under_adversarial_corner_motion():
    families = _families(STEPS)
    names = list(families)
    actions = torch.from_numpy(np.stack([families[n] for n in names], axis=1))  # (steps, worlds, 6)
    env = make(CLOTH, len(names), seed=0, autoreset_mode="Disabled")
    try:
        env.reset(seed=0)
        m = env.model
        starts = m.particle_world_start.numpy()
        world = np.repeat(np.arange(len(names)), np.diff(starts[: len(names) + 1]))
        cloth = slice(int(starts[0]), int(starts[len(names)]))
        radius = m.particle_radius.numpy()[cloth]
        lowest = np.full(len(names), np.inf)
        deepest = np.full(len(names), -np.inf)
        for t in range(STEPS):
            env.step(actions[t])
            z = env.state_0.particle_q.numpy()[cloth, 2].astype(np.float64)
            np.minimum.at(lowest, world, z)
            np.maximum.at(deepest, world, radius - z)
        report = ", ".join(
            f"{n}: lowest centre {1e3 * lo:.3f} mm, deepest {1e3 * d:.3f} mm"
            for n, lo, d in zip(names, lowest, deepest, strict=True)
        )
        assert (lowest >= 0.0).all(), report
        assert (deepest <= PENETRATION_TOL).all(), report
        # The families did what they are for: the held corners moved (the drag crosses them over).
        corners = env.state_0.particle_q.numpy()[[starts[2] + c for c in env.grasped_corners]]
        assert corners[0, 0] > corners[1, 0], corners
    finally:
        env.close()
