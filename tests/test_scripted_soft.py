"""SoftPush-v0's scripted solver solves it without pushing the block through the ground.

16 worlds run one episode each (the "Scripted solvers" of docs/guides/evaluation.md has the 100-episode figures of
``steel-envs evaluate``).
"""

from __future__ import annotations

import torch
from conftest import first_episodes
from steel_envs.tasks.soft_push import scripted_policy

SOFT = "steel_envs/SoftPush-v0"
WORLDS = 16


def test_soft_push_scripted_policy_succeeds_in_at_least_90_percent_above_the_ground():
    episodes = first_episodes(SOFT, scripted_policy, WORLDS)
    assert episodes["success"].float().mean() >= 0.9, episodes["success"]
    lowest = float(episodes["lowest"])
    assert lowest > 0.0, f"a particle centre went {-lowest * 1e3:.2f} mm below the ground"


def test_soft_push_scripted_policy_returns_unit_bounded_actions():
    obs = torch.randn(7, 38) * 0.2
    actions = scripted_policy(obs)
    assert actions.shape == (7, 2) and actions.dtype == torch.float32
    assert torch.isfinite(actions).all() and actions.norm(dim=-1).max() <= 1.0 + 1e-6


def test_soft_push_scripted_policy_pushes_a_lined_up_block_towards_the_goal_and_goes_round_one_in_the_way():
    """Hand-built observations: a resting, unturned block at the origin, the goal 0.3 m along +x."""
    half = 0.06
    corners = torch.tensor([[x, y, z] for z in (-half, half) for y in (-half, half) for x in (-half, half)])
    obs = torch.zeros(2, 38)
    obs[:, 4:7] = torch.tensor([0.0, 0.0, half])
    obs[:, 10:12] = torch.tensor([0.3, 0.0])
    obs[:, 12:14] = -obs[:, 10:12]
    obs[:, 14:38] = corners.flatten()
    obs[0, 0:2] = torch.tensor([-0.1, 0.0])  # lined up behind the block: push along +x
    obs[1, 0:2] = torch.tensor([0.12, 0.0])  # between the block and the goal: step aside first, not through it
    actions = scripted_policy(obs)
    torch.testing.assert_close(actions[0], torch.tensor([1.0, 0.0]))
    assert actions[1, 1].abs() > 0.9 and actions[1, 0].abs() < 0.1, actions[1]
