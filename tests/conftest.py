"""Shared fixtures: CPU devices, quiet Warp, helpers that compare worlds."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
import warp as wp

wp.config.log_level = wp.LOG_WARNING

import pendulum_swingup  # noqa: E402, F401  (registers the test-only task; see pendulum_scene.py)

import steel_envs  # noqa: E402

TASK_IDS: tuple[str, ...] = tuple(steel_envs.registry())
"""Every registered ID, the test-only pendulum included: tests over all tasks iterate this, not a list of names."""

COVERED_BY: dict[str, str] = {
    "steel_envs/G1VelocityRough-v0": "G1Velocity-v0 (its robot, scene and task terms) and Go1VelocityRough-v0 (its "
    "terrain, curriculum and reset code, the same mixins)",
}
"""IDs whose every code path other IDs' tests run, with those IDs: the per-ID matrices over reset and action modes
(``MATRIX_IDS``) leave them out; the per-ID contract tests (spaces, doctor, goldens, docs) keep them."""
MATRIX_IDS: tuple[str, ...] = tuple(i for i in TASK_IDS if i not in COVERED_BY)
SLOW_IDS: tuple[str, ...] = ("steel_envs/ClothFold-v0", "steel_envs/PandaClothLift-v0")
"""SolverVBD's cloth scenes: 0.1-0.3 s per step of 4 worlds on a 2-core CPU, most of the per-ID tests' time, so the
goldens, doctor and world-count tests run them over fewer steps or worlds."""

CARTPOLE = "steel_envs/CartpoleBalance-v0"
ANT = "steel_envs/AntRun-v0"


def make(env_id: str, num_envs: int, **kwargs) -> steel_envs.SteelVectorEnv:
    kwargs.setdefault("device", "cpu")
    return steel_envs.make_vec(env_id, num_envs=num_envs, **kwargs)


def world_state(env: steel_envs.SteelVectorEnv, w: int) -> dict[str, np.ndarray]:
    """Every simulation array of world ``w`` (joint, body and particle state), copied to numpy."""
    m = env.model
    starts = {
        "joint_q": m.joint_coord_world_start,
        "joint_qd": m.joint_dof_world_start,
        "body_q": m.body_world_start,
        "body_qd": m.body_world_start,
        "particle_q": m.particle_world_start,
        "particle_qd": m.particle_world_start,
    }
    state = {}
    for name, start in starts.items():
        array = getattr(env.state_0, name)
        if array is not None:
            state[name] = array.numpy()[slice(*start.numpy()[w : w + 2])].copy()
    return state


def assert_world_bit_identical(a: steel_envs.SteelVectorEnv, b: steel_envs.SteelVectorEnv, w: int) -> None:
    sa, sb = world_state(a, w), world_state(b, w)
    for key in sa:
        assert sa[key].tobytes() == sb[key].tobytes(), f"world {w}: {key} differs"


def random_actions(env, steps: int, seed: int = 0) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return [torch.rand(env.num_envs, env.action_dim, generator=g) * 2 - 1 for _ in range(steps)]


def first_episodes(env_id: str, policy, num_envs: int = 16, seed: int = 0, **kwargs) -> dict[str, torch.Tensor]:
    """Run ``policy`` on ``num_envs`` worlds until each has ended one episode (asserting that every world does
    within the time limit); the return ``r``, length ``l`` and (where the task reports it) ``success`` of each
    world's first episode, shape (num_envs,), and ``lowest``, the lowest particle centre z [m] after any step (inf
    without particles). ``kwargs`` go to the env."""
    env = make(env_id, num_envs, seed=seed, **kwargs)
    try:
        obs, _ = env.reset(seed=seed)
        ended = torch.zeros(num_envs, dtype=torch.bool)
        out = {
            "r": torch.zeros(num_envs),
            "l": torch.zeros(num_envs),
            "success": torch.zeros(num_envs, dtype=torch.bool),
            "lowest": torch.tensor(float("inf")),
        }
        for _ in range(env.max_episode_steps):
            obs, _, _, _, info = env.step(policy(obs))
            new = info["_episode"] & ~ended
            out["r"] = torch.where(new, info["episode"]["r"], out["r"])
            out["l"] = torch.where(new, info["episode"]["l"].float(), out["l"])
            if "success" in info:  # the last step of each world's first episode counts
                out["success"] |= new & info["success"]
            if env.model.particle_count:  # every world's particles after the step (an ended world is reset)
                lowest = float(env.state_0.particle_q.numpy()[:, 2].min())
                out["lowest"] = torch.minimum(out["lowest"], torch.tensor(lowest))
            ended |= info["_episode"]
            if bool(ended.all()):
                break
        assert bool(ended.all()), "every world ends an episode within the time limit"
        return out
    finally:
        env.close()


@pytest.fixture
def cartpole():
    env = make(CARTPOLE, 4, seed=3)
    yield env
    env.close()


@pytest.fixture
def ant():
    env = make(ANT, 4, seed=3)
    yield env
    env.close()


def child_pids(pid: int) -> list[int]:
    """The live (not zombie) processes whose parent is ``pid``, read from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as f:
                state, ppid = f.read().rsplit(")", 1)[1].split()[:2]
        except (OSError, ValueError):  # not a process, or one that ended meanwhile
            continue
        if int(ppid) == pid and state != "Z":
            found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
