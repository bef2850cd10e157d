"""One bad world never poisons the others: injected non-finite states end and reset only their world."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import ANT, CARTPOLE, assert_world_bit_identical, make, random_actions


@pytest.mark.parametrize(("env_id", "value"), [(ANT, np.nan), (ANT, np.inf), (CARTPOLE, np.nan)])
def test_nonfinite_state_ends_only_its_world(env_id, value):
    n, bad = 3, 1
    env, twin = make(env_id, n, seed=8), make(env_id, n, seed=8)
    actions = random_actions(env, 12, seed=2)
    for a in actions[:4]:
        env.step(a)
        twin.step(a)
    qd = env.state_0.joint_qd.numpy()
    qd[bad * env.dofs_per_world] = value
    env.state_0.joint_qd.assign(qd)
    obs, reward, terminated, truncated, info = env.step(actions[4])
    t_obs, t_reward, t_terminated, t_truncated, _ = twin.step(actions[4])
    assert info["nonfinite_state"].numpy().tolist() == [w == bad for w in range(n)]
    assert terminated[bad] and info["_episode"][bad]
    assert torch.isfinite(obs).all() and torch.isfinite(reward).all()
    assert torch.isfinite(info["final_obs"][bad]).all()
    for w in range(n):
        if w == bad:
            continue
        assert_world_bit_identical(env, twin, w)
        assert obs[w].numpy().tobytes() == t_obs[w].numpy().tobytes()
        assert reward[w].item() == t_reward[w].item()
        assert terminated[w].item() == t_terminated[w].item() and truncated[w].item() == t_truncated[w].item()
    # The bad world was reset in the same step and continues cleanly.
    for a in actions[5:]:
        obs, _, _, _, info = env.step(a)
        twin.step(a)
        assert not info["nonfinite_state"].any() and torch.isfinite(obs).all()
    for w in range(n):
        if w != bad:
            assert_world_bit_identical(env, twin, w)


@pytest.mark.parametrize("graph_capture", [True, "physics"])
@pytest.mark.parametrize("autoreset_mode", ["SameStep", "NextStep"])
def test_observation_noise_of_a_world_does_not_depend_on_other_worlds_ending(graph_capture, autoreset_mode):
    """World 0 ends (a NaN action) in one env and not in its twin: the other worlds' noisy observations and
    final observations stay bitwise equal, whether or not the step ran its reset branch."""
    kwargs = dict(
        seed=3,
        obs_noise_std=0.05,
        nonfinite_actions="end_episode",
        graph_capture=graph_capture,
        autoreset_mode=autoreset_mode,
    )
    a, b = make(CARTPOLE, 4, **kwargs), make(CARTPOLE, 4, **kwargs)
    for t in range(8):
        actions = torch.full((4, 1), 0.1)
        out_a = a.step(actions.clone())
        if t == 3:
            actions[0] = float("nan")
        out_b = b.step(actions)
        assert bool(out_b[3][0]) == (t == 3) and not out_a[3].any()
        assert torch.equal(out_a[0][1:], out_b[0][1:]), f"step {t}: observations of worlds 1-3 differ"
    for w in (1, 2, 3):
        assert_world_bit_identical(a, b, w)
