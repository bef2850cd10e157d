"""ClothFold's scripted solver folds the cloth: 16 worlds, one episode each (the "Scripted solvers" of
docs/guides/evaluation.md has the 100-episode figures of ``steel-envs evaluate``)."""

from __future__ import annotations

import torch
from conftest import first_episodes, make
from steel_envs.tasks.cloth_fold import scripted_policy

CLOTH = "steel_envs/ClothFold-v0"
WORLDS = 16


def test_cloth_fold_scripted_policy_succeeds_in_at_least_90_percent_and_stays_above_the_ground():
    # The fold succeeds by step ~39 (100-step episodes in the documentation's figures); 60 steps keep the CI test short.
    episodes = first_episodes(CLOTH, scripted_policy, WORLDS, max_episode_steps=60)
    assert episodes["success"].float().mean() >= 0.9, episodes["success"]
    lowest = float(episodes["lowest"])
    assert lowest >= 0.0, f"a particle centre went {-1e3 * lowest:.3f} mm under the ground"


def test_the_scripted_policy_lifts_first_and_returns_actions_in_range():
    obs = torch.randn(7, 84) * 0.2
    actions = scripted_policy(obs)
    assert actions.shape == (7, 6) and actions.dtype == torch.float32 and actions.abs().max() <= 1.0
    # A corner lying on the ground, far from its target, only rises.
    env = make(CLOTH, 1, seed=0)
    try:
        obs, _ = env.reset(seed=0)
        a = scripted_policy(obs)[0]
        assert (a[[0, 1, 3, 4]] == 0.0).all() and (a[[2, 5]] == 1.0).all(), a
    finally:
        env.close()
