"""Autoreset semantics (SAME_STEP, NEXT_STEP, DISABLED), masked resets, and episode statistics.

Each test runs the env beside a twin with autoreset disabled, same seed and same actions: the twin's state
is what the world would have been without the reset.
"""

from __future__ import annotations

import numpy as np
import torch
from conftest import CARTPOLE, assert_world_bit_identical, make

N = 4
ZEROS = torch.zeros(N, 1)


def _run_until_first_end(env, twin, max_steps=200):
    """Step both with zero force until some world of ``env`` ends; return that step's outputs."""
    for _ in range(max_steps):
        out = env.step(ZEROS)
        twin_out = twin.step(ZEROS)
        if bool((out[2] | out[3]).any()):
            return out, twin_out
    raise AssertionError("no episode ended")


def test_same_step_final_obs_reset_obs_and_untouched_worlds():
    env = make(CARTPOLE, N, seed=7)
    twin = make(CARTPOLE, N, seed=7, autoreset_mode="Disabled")
    (obs, reward, terminated, truncated, info), (t_obs, t_reward, *_rest) = _run_until_first_end(env, twin)
    ended = (terminated | truncated).numpy()
    assert info["_final_obs"].numpy().tolist() == ended.tolist()
    assert info["_episode"].numpy().tolist() == ended.tolist()
    # The last observation of the ended episode is the twin's observation at the same step.
    np.testing.assert_array_equal(info["final_obs"].numpy()[ended], t_obs.numpy()[ended])
    # The reward of the ending step is computed before the reset (CartPole: 1 on the terminating step).
    np.testing.assert_array_equal(reward.numpy(), t_reward.numpy())
    # The returned observation of an ended world is its new episode's first: inside the reset noise.
    assert np.all(np.abs(obs.numpy()[ended]) <= 0.05)
    assert not np.array_equal(obs.numpy()[ended], t_obs.numpy()[ended])
    for w in np.flatnonzero(~ended):
        assert_world_bit_identical(env, twin, w)
        assert obs[w].numpy().tobytes() == t_obs[w].numpy().tobytes()
    # The world restarted: its episode length counts again from 0.
    assert np.all(env.episode_steps.numpy()[ended] == 0)


def test_next_step_resets_on_the_following_call():
    env = make(CARTPOLE, N, seed=7, autoreset_mode="NextStep")
    twin = make(CARTPOLE, N, seed=7, autoreset_mode="Disabled")
    (obs, reward, terminated, truncated, info), (t_obs, *_rest) = _run_until_first_end(env, twin)
    ended = (terminated | truncated).numpy()
    assert "final_obs" not in info
    # The ending step returns the episode's last observation itself.
    np.testing.assert_array_equal(obs.numpy(), t_obs.numpy())
    obs, reward, terminated, truncated, info = env.step(ZEROS)
    t_obs = twin.step(ZEROS)[0]
    # The next call resets: reward 0, no done, the new episode's first observation.
    assert np.all(reward.numpy()[ended] == 0.0)
    assert not terminated.numpy()[ended].any() and not truncated.numpy()[ended].any()
    assert np.all(np.abs(obs.numpy()[ended]) <= 0.05)
    assert not info["_episode"].numpy()[ended].any()
    for w in np.flatnonzero(~ended):
        assert_world_bit_identical(env, twin, w)
    # The new episode then runs normally from length 0.
    env.step(ZEROS)
    assert np.all(env.episode_steps.numpy()[ended] == 1)


def test_disabled_keeps_ended_worlds_until_a_masked_reset():
    env = make(CARTPOLE, N, seed=7, autoreset_mode="Disabled")
    twin = make(CARTPOLE, N, seed=7, autoreset_mode="Disabled")
    for _ in range(10):
        env.step(ZEROS)
        twin.step(ZEROS)
    mask = np.array([False, True, False, True])
    obs, _ = env.reset(options={"reset_mask": mask})
    assert np.all(np.abs(obs.numpy()[mask]) <= 0.05)
    for w in np.flatnonzero(~mask):
        assert_world_bit_identical(env, twin, w)
    for _ in range(5):
        env.step(ZEROS)
        twin.step(ZEROS)
    for w in np.flatnonzero(~mask):
        assert_world_bit_identical(env, twin, w)


def test_masked_reset_of_a_contact_scene_leaves_other_worlds_bit_identical():
    env = make("steel_envs/AntRun-v0", 3, seed=2, autoreset_mode="Disabled")
    twin = make("steel_envs/AntRun-v0", 3, seed=2, autoreset_mode="Disabled")
    g = torch.Generator().manual_seed(0)
    for step in range(12):
        a = torch.rand(3, 8, generator=g) * 2 - 1
        if step == 6:
            env.reset(options={"reset_mask": torch.tensor([False, True, False])})
        env.step(a)
        twin.step(a)
    for w in (0, 2):
        assert_world_bit_identical(env, twin, w)


def test_a_reset_world_continues_as_a_freshly_built_world():
    """Reset in place equals a new env whose world starts from the same state (solver history cleared)."""
    env = make(CARTPOLE, 2, seed=5, autoreset_mode="Disabled")
    for _ in range(20):
        env.step(torch.ones(2, 1))
    env.reset(seed=42)
    fresh = make(CARTPOLE, 2, seed=42, autoreset_mode="Disabled")
    g = torch.Generator().manual_seed(3)
    for _ in range(20):
        a = torch.rand(2, 1, generator=g) * 2 - 1
        assert torch.equal(env.step(a)[0], fresh.step(a)[0])


def test_episode_statistics_match_an_independent_tally():
    env = make(CARTPOLE, N, seed=1, max_episode_steps=40)
    g = torch.Generator().manual_seed(0)
    running_return = np.zeros(N, np.float64)
    running_length = np.zeros(N, np.int64)
    ended_episodes = 0
    for _ in range(120):
        a = torch.rand(N, 1, generator=g) * 2 - 1
        _, reward, terminated, truncated, info = env.step(a)
        running_return += reward.numpy()
        running_length += 1
        done = (terminated | truncated).numpy()
        np.testing.assert_array_equal(info["_episode"].numpy(), done)
        for w in np.flatnonzero(done):
            ep = info["episode"]
            assert ep["l"][w].item() == running_length[w]
            assert ep["r"][w].item() == np.float32(running_return[w])
            assert ep["reward_alive"][w].item() == np.float32(running_return[w])
            assert ep["l"][w].item() <= 40
            assert truncated[w].item() == (running_length[w] == 40)
            running_return[w] = 0.0
            running_length[w] = 0
            ended_episodes += 1
    assert ended_episodes > N
    # An explicit reset clears the running statistics and the ended-episode mask.
    env.reset()
    assert not env._done_t.any() and np.all(env.episode_steps.numpy() == 0)
