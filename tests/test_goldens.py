"""Golden trajectories: every ID at 4 worlds on the CPU, a fixed seed and fixed actions, hashed step by step.

A refactor must keep these bitwise. A deliberate physics change regenerates them in its own commit, which says
why:

    python tests/test_goldens.py --update [ID ...]

Each run compares against hashes a previous process stored, so the goldens also prove that a trajectory is the
same in every process (no dependence on hash seeds, addresses or thread timing).

The goldens hold, per ID, the SHA-256 (first 16 hex digits) of the bytes of each checked tensor after each of
``STEPS`` steps (``SHORT_STEPS`` for ``SLOW_IDS``). The checked tensors are the step's returns and a fixed list of
``info`` entries (stored beside the hashes, so adding an entry is an explicit regeneration). Hashes depend on the
pinned newton and warp-lang versions (pyproject.toml) and on the CPU backend; the file records both versions.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import SLOW_IDS, TASK_IDS

import steel_envs

GOLDEN_FILE = Path(__file__).parent / "goldens" / "trajectories.json"
NUM_ENVS = 4
STEPS = 50
SHORT_STEPS = 24
"""Steps of the goldens of ``conftest.SLOW_IDS``."""
SEED = 7
# Entries of ``info`` checked every step (those present for the ID), besides every ``reward_<term>``.
INFO_KEYS = (
    "constraint_overflow",
    "nonfinite_state",
    "nonfinite_action",
    "_episode",
    "episode.r",
    "episode.l",
    "final_obs",
    "success",
)


def steps_of(env_id: str) -> int:
    """How many steps the golden of ``env_id`` records."""
    return SHORT_STEPS if env_id in SLOW_IDS else STEPS


def fixed_actions(env_id: str, action_dim: int) -> np.ndarray:
    """(steps, NUM_ENVS, action_dim) float32 in [-1, 1], ``steps_of(env_id)`` steps: NumPy's PCG64 stream,
    independent of torch's."""
    seed = int.from_bytes(hashlib.sha256(env_id.encode()).digest()[:4], "little")
    rng = np.random.Generator(np.random.PCG64(seed))
    steps = steps_of(env_id)
    actions = rng.uniform(-1.0, 1.0, (steps, NUM_ENVS, action_dim)).astype(np.float32)
    # Saturated stretches exercise limits and contacts harder than uniform noise.
    actions[steps // 2 : steps // 2 + 10] = np.sign(actions[steps // 2 : steps // 2 + 10])
    return actions


def _digest(value: torch.Tensor) -> str:
    array = value.detach().cpu().contiguous().numpy()
    return hashlib.sha256(array.tobytes() + str(array.dtype).encode()).hexdigest()[:16]


def record(env_id: str) -> dict:
    """Run the fixed trajectory of ``env_id`` and return its keys and per-step hashes."""
    env = steel_envs.make_vec(env_id, num_envs=NUM_ENVS, device="cpu", seed=SEED)
    try:
        actions = fixed_actions(env_id, env.action_dim)
        obs, _ = env.reset(seed=SEED)
        keys, steps = None, []
        reset_obs = _digest(obs)
        for t in range(len(actions)):
            obs, reward, terminated, truncated, info = env.step(torch.from_numpy(actions[t]))
            checked = {"obs": obs, "reward": reward, "terminated": terminated, "truncated": truncated}
            checked.update({k: v for k, v in sorted(info.items()) if k.startswith("reward_")})
            for key in INFO_KEYS:
                head, _, tail = key.partition(".")
                value = info.get(head)
                if isinstance(value, dict):
                    value = value.get(tail)
                if isinstance(value, torch.Tensor):
                    checked[key] = value
            if keys is None:
                keys = list(checked)
            steps.append([_digest(v) for v in checked.values()])
    finally:
        env.close()
    return {
        "num_envs": NUM_ENVS,
        "steps": len(actions),
        "seed": SEED,
        "keys": keys,
        "reset_obs": reset_obs,
        "hashes": steps,
    }


def _versions() -> dict[str, str]:
    import newton
    import warp

    return {"newton": newton.__version__, "warp-lang": warp.__version__}


def _load() -> dict:
    return json.loads(GOLDEN_FILE.read_text()) if GOLDEN_FILE.exists() else {"versions": _versions(), "ids": {}}


@pytest.mark.parametrize("env_id", TASK_IDS)
def test_golden_trajectory(env_id: str) -> None:
    goldens = _load()
    assert goldens["versions"] == _versions(), (
        f"goldens were recorded with {goldens['versions']}, this is {_versions()}: pin the versions in "
        "pyproject.toml or regenerate in a commit that says why"
    )
    assert env_id in goldens["ids"], f"no golden for {env_id}: python tests/test_goldens.py --update {env_id}"
    expected, got = goldens["ids"][env_id], record(env_id)
    assert got["keys"] == expected["keys"], f"checked keys changed: {expected['keys']} -> {got['keys']}"
    assert got["reset_obs"] == expected["reset_obs"], f"{env_id}: the observation after reset(seed={SEED}) differs"
    for t, (want, have) in enumerate(zip(expected["hashes"], got["hashes"], strict=True)):
        for key, w, h in zip(expected["keys"], want, have, strict=True):
            if w != h:
                pytest.fail(f"{env_id}: first difference at step {t}, key {key!r} (golden {w}, now {h})")


def _update(ids: list[str]) -> None:
    goldens = _load()
    if goldens["versions"] != _versions():
        goldens = {"versions": _versions(), "ids": {}}
        ids = list(TASK_IDS)
    for env_id in ids or TASK_IDS:
        print(f"recording {env_id}", flush=True)
        goldens["ids"][env_id] = record(env_id)
    goldens["ids"] = {k: goldens["ids"][k] for k in TASK_IDS if k in goldens["ids"]}
    GOLDEN_FILE.parent.mkdir(exist_ok=True)
    # One line per step, so a diff of the file shows where trajectories changed.
    lines = ["{", f'"versions": {json.dumps(goldens["versions"])},', '"ids": {']
    for i, (env_id, g) in enumerate(goldens["ids"].items()):
        head = {k: v for k, v in g.items() if k != "hashes"}
        lines.append(f'{json.dumps(env_id)}: {json.dumps(head)[:-1]}, "hashes": [')
        lines += [json.dumps(h) + ("," if t < len(g["hashes"]) - 1 else "") for t, h in enumerate(g["hashes"])]
        lines.append("]}" + ("," if i < len(goldens["ids"]) - 1 else ""))
    lines += ["}", "}"]
    GOLDEN_FILE.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    if sys.argv[1:2] != ["--update"]:
        sys.exit("usage: python tests/test_goldens.py --update [ID ...]")
    import warp as wp

    wp.config.log_level = wp.LOG_WARNING
    _update(sys.argv[2:])
