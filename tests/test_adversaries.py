"""Scripted adversaries (training/benchmarks/adversaries.py): evaluate's policies built from the env, the blind
action patterns, and when an adversary is flagged."""

from __future__ import annotations

import math

import numpy as np
import torch
from conftest import CARTPOLE
from steel_envs.training.benchmarks import adversaries
from steel_envs.training.evaluate import evaluate


def test_a_policy_built_from_the_env_runs_as_the_same_policy_named_by_its_spec():
    def zeros(env, seed):
        return lambda obs: torch.zeros(obs.shape[0], env.action_dim)

    r = evaluate(CARTPOLE, ["zero", "zeros"], episodes=4, num_envs=2, progress=False, factories={"zeros": zeros})
    by_policy = [
        [(e.world, e.index, e.episode_return, e.length) for e in r.episodes if e.policy == p] for p in ("zero", "zeros")
    ]
    assert len(by_policy[0]) == 4 and by_policy[0] == by_policy[1]


class _Env:
    action_dim = 4


def _sequence(name: str, steps: int) -> np.ndarray:
    policy = adversaries.ADVERSARIES[name](_Env(), 0)
    return np.stack([policy(torch.zeros(3, 1))[0].numpy() for _ in range(steps)])


def test_the_blind_patterns_are_the_documented_ones():
    alternating = np.array([1.0, -1.0, 1.0, -1.0])
    flips = _sequence("vibrate:1", 4)
    assert np.array_equal(flips, [alternating, -alternating, alternating, -alternating])
    bang = _sequence("bang_bang:8", 17)
    assert np.array_equal(bang[:8], np.tile(alternating, (8, 1))) and np.array_equal(bang[8:16], -bang[:8])
    assert np.array_equal(bang[16], alternating)
    # Dimension i lags by 2 pi i / act_dim: a wave over the dimensions with a period of 20 steps.
    sine = _sequence("sine:20", 40)
    t, i = np.meshgrid(np.arange(40), np.arange(4), indexing="ij")
    np.testing.assert_allclose(sine, np.sin(2.0 * math.pi * (t / 20.0 - i / 4.0)), atol=1e-6)
    assert np.array_equal(_sequence("saturate-", 2), -np.ones((2, 4)))


def test_an_adversary_is_flagged_when_it_earns_the_reference_return(monkeypatch):
    # CartpoleBalance pays 1 per step: any adversary earns >= 0, and a saturated push ends within a few steps.
    monkeypatch.setattr(adversaries, "_reference_return", lambda env_id: 0.0)
    rows = adversaries.run_adversaries(CARTPOLE, worlds=2, names=["saturate+"])
    assert [(r.policy, r.exploit) for r in rows] == [("random", False), ("saturate+", True)]
    monkeypatch.setattr(adversaries, "_reference_return", lambda env_id: 500.0)
    rows = adversaries.run_adversaries(CARTPOLE, worlds=2, names=["saturate+"])
    assert rows[1].exploit is False and rows[1].mean_return < 50.0 and rows[1].normalized < 0.5
