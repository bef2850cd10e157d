"""A ShardedVectorEnv over 2 processes is bitwise the single-process env with the same seed."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from conftest import ANT, CARTPOLE, child_pids, make, random_actions

import steel_envs


def test_two_shards_equal_one_env():
    """Observations, rewards, dones, terms and episode statistics are the single env's bit for bit, through
    episode ends and a masked reset (16 ants: contacts in every world, whose order must not depend on the world
    count); a closed sharded env refuses to step."""
    env_id, n = ANT, 16
    kwargs = {"healthy_z_max": 0.6}  # episodes end within the run
    sharded = steel_envs.make_vec(env_id, n, num_shards=2, seed=5, **kwargs)
    single = make(env_id, n, seed=5, **kwargs)
    try:
        obs_a, _ = sharded.reset(seed=5)
        obs_b, _ = single.reset(seed=5)
        assert obs_a.numpy().tobytes() == obs_b.numpy().tobytes()
        ended = 0
        for k, a in enumerate(random_actions(single, 40, seed=3)):
            if k == 20:
                mask = np.zeros(n, bool)
                mask[[0, n - 1]] = True
                obs_a, _ = sharded.reset(options={"reset_mask": mask})
                obs_b, _ = single.reset(options={"reset_mask": mask})
                assert torch.equal(obs_a, obs_b)
            out_a, out_b = sharded.step(a), single.step(a)
            for x, y in zip(out_a[:4], out_b[:4], strict=True):
                assert x.numpy().tobytes() == y.numpy().tobytes()
            info_a, info_b = out_a[4], out_b[4]
            assert torch.equal(info_a["_episode"], info_b["_episode"])
            done = info_b["_episode"]
            ended += int(done.sum())
            for key in ("r", "l", "constraint_overflow"):
                assert torch.equal(info_a["episode"][key][done], info_b["episode"][key][done])
            assert torch.equal(info_a["final_obs"][done], info_b["final_obs"][done])
            for term in single.reward_terms:
                assert torch.equal(info_a[f"reward_{term}"], info_b[f"reward_{term}"])
            for term in single.terminations:  # declared termination terms, per step and per ended episode
                assert torch.equal(info_a[term.name], info_b[term.name])
                assert torch.equal(info_a["episode"][term.name][done], info_b["episode"][term.name][done])
            for metric in single.metrics:  # the task's episode metrics (AntRun: distance_x)
                assert torch.equal(info_a["episode"][metric.name][done], info_b["episode"][metric.name][done])
        assert ended > 0
        assert sharded.terminations == single.terminations and single.terminations
        assert sharded.metrics == single.metrics
    finally:
        sharded.close()
    with pytest.raises(RuntimeError, match="closed"):
        sharded.step(torch.zeros(n, sharded.action_dim))


@pytest.fixture(scope="module")
def cartpole_pair():
    """CartpoleBalance, 4 worlds, rendering 2: one process, and 2 shards (each test resets both with seed 1)."""
    kwargs = {"seed": 1, "render_mode": "rgb_array", "render_size": (32, 24), "render_num_worlds": 2}
    one = steel_envs.make_vec(CARTPOLE, 4, device="cpu", **kwargs)
    two = steel_envs.make_vec(CARTPOLE, 4, num_shards=2, **kwargs)
    yield one, two
    one.close()
    two.close()


def test_sharded_env_rejects_bad_input_in_the_parent(cartpole_pair):
    _, env = cartpole_pair
    env.reset(seed=1)
    with pytest.raises(ValueError, match="actions: expected shape"):
        env.step(torch.zeros(3, 1))
    with pytest.raises(ValueError, match="reset_mask"):
        env.reset(options={"reset_mask": np.ones(3, bool)})
    env.step(torch.zeros(4, 1))
    before = set(child_pids(os.getpid()))
    with pytest.raises(TypeError, match="unexpected keyword"):  # the probe's, while the workers start
        steel_envs.make_vec(CARTPOLE, 2, num_shards=2, bogus=1)
    assert set(child_pids(os.getpid())) <= before  # the workers started for it are gone
    with pytest.raises(ValueError, match="num_envs"):
        steel_envs.make_vec(CARTPOLE, 1, num_shards=2)


def test_shards_forward_the_task_info_of_a_solver_vbd_scene():
    sharded = steel_envs.make_vec("steel_envs/SoftPush-v0", 2, num_shards=2, seed=4, max_episode_steps=3)
    single = make("steel_envs/SoftPush-v0", 2, seed=4, max_episode_steps=3)
    try:
        for _ in range(3):
            out_a, out_b = sharded.step(torch.ones(2, 2)), single.step(torch.ones(2, 2))
            assert out_a[0].numpy().tobytes() == out_b[0].numpy().tobytes()
            assert torch.equal(out_a[4]["success"], out_b[4]["success"])
    finally:
        sharded.close()


def test_shards_reject_pixel_observations():
    with pytest.raises(ValueError, match="obs_mode: a ShardedVectorEnv returns state observations only"):
        steel_envs.make_vec(CARTPOLE, 2, num_shards=2, obs_mode="rgb")


def test_both_envs_implement_the_public_surface(cartpole_pair):
    """One surface: the single-process and the sharded env are both ``VectorEnvProtocol``s, with every attribute
    the protocol names."""
    names = [n for n in steel_envs.VectorEnvProtocol.__annotations__]
    single, sharded = cartpole_pair
    for env in (single, sharded):
        assert isinstance(env, steel_envs.VectorEnvProtocol)
        assert all(hasattr(env, name) for name in names), [n for n in names if not hasattr(env, n)]
    assert sharded.config == single.config and sharded.solver_options == single.solver_options
    from steel_envs.deployment import contract_of  # an export from a sharded run writes the same contract

    assert contract_of(sharded, normalizer=True) == contract_of(single, normalizer=True)


@pytest.fixture(scope="module")
def quadruped_pair():
    """QuadrupedVelocity (feet on the ground, a privileged critic group), 4 worlds with observation noise: one
    process, and 2 shards (each test resets both with its seed)."""
    kwargs = {"seed": 2, "obs_noise_std": 0.1}
    one = steel_envs.make_vec("steel_envs/QuadrupedVelocity-v0", 4, device="cpu", **kwargs)
    two = steel_envs.make_vec("steel_envs/QuadrupedVelocity-v0", 4, num_shards=2, **kwargs)
    yield one, two
    one.close()
    two.close()


def test_sharded_world_parameters_match_one_env_bitwise(quadruped_pair):
    """``set_world_parameters`` on shards (what ``evaluate --sweep`` calls) acts as on one env: the same worlds
    follow the same trajectories (feet on the ground: friction and masses matter); bad factors are refused before any
    shard changes."""
    friction, mass = [1.0, 0.5, 2.0, 0.25], [1.0, 1.5, 0.75, 2.0]
    one, two = quadruped_pair
    for env in (one, two):
        env.reset(seed=3)
        env.set_world_parameters(friction_scale=friction, mass_scale=mass)
    actions = torch.full((4, 12), 0.5)
    for _ in range(10):
        obs_one = one.step(actions)[0].clone()
        obs_two = two.step(actions)[0].clone()
    assert torch.equal(obs_one, obs_two)
    with pytest.raises(ValueError, match="friction_scale: expected 4 finite factors"):
        two.set_world_parameters(friction_scale=[1.0, 1.0, 1.0, -1.0])
    assert torch.equal(two.step(actions)[0], one.step(actions)[0])  # nothing changed in any shard


def test_sharded_env_renders_the_first_shards_worlds(cartpole_pair):
    """Shard 0 renders the first worlds: the frame is the single-process env's, bit for bit (same states)."""
    one, two = cartpole_pair
    for env in (one, two):
        env.reset(seed=1)
    frame = two.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.std() > 0
    assert np.array_equal(frame, one.render())
    with pytest.raises(ValueError, match=r"render_num_worlds: expected an int in \[1, 2\]"):
        steel_envs.make_vec(CARTPOLE, 4, num_shards=2, render_mode="rgb_array", render_num_worlds=3)


def test_auto_shards_take_every_core_with_enough_worlds_each(monkeypatch):
    """``--shards auto``: one process per available core, never fewer worlds per process than the scene's
    break-even; one process on a GPU, with pixel observations, or with too few worlds; a library call starts no
    process unless asked."""
    from steel_envs import sharding

    per = steel_envs.task_class(ANT).min_worlds_per_shard
    monkeypatch.setattr(sharding, "available_cores", lambda: 8)
    assert sharding.resolve_shards(ANT, 8 * per, "auto")[0] == 8
    assert sharding.resolve_shards(ANT, 3 * per, "auto")[0] == 3
    assert sharding.resolve_shards(ANT, per - 1, "auto")[0] == 1
    assert sharding.resolve_shards(ANT, 8 * per, "auto", reserve_cores=1)[0] == 7
    assert sharding.resolve_shards(ANT, 8 * per, "auto", env_kwargs={"obs_mode": "rgb"})[0] == 1
    assert sharding.resolve_shards(ANT, 8 * per, 3) == (3, "3 process(es), as asked")
    with pytest.raises(ValueError, match="num_shards: expected 'auto' or an int >= 1"):
        sharding.resolve_shards(ANT, 8, 0)
    monkeypatch.setattr(sharding, "available_cores", lambda: 1)
    env = steel_envs.make_vec(ANT, 2 * per, num_shards="auto", device="cpu")
    try:
        assert not isinstance(env, steel_envs.ShardedVectorEnv)  # one core: one process
    finally:
        env.close()
    assert all(isinstance(cls.min_worlds_per_shard, int) for cls in steel_envs.registry().values())


def test_sharded_env_serves_the_critic_group_layout_and_episode_lengths(quadruped_pair):
    """Sharded training keeps the privileged critic: the shards' critic group, observation layout and episode
    lengths are the one-process env's, bit for bit."""
    from steel_envs.adapters.rsl_rl import RslRlVecEnv

    one, two = quadruped_pair
    assert two.observation_layout == one.observation_layout
    assert two.observation_blocks() == one.observation_blocks()
    actions = torch.full((4, 12), 0.3)
    for env in (one, two):
        env.reset(seed=2)
    for _ in range(3):
        one.step(actions)
        two.step(actions)
    for name in ("policy", "critic"):
        assert torch.equal(two.observation_groups[name], one.observation_groups[name])
    assert torch.equal(two.episode_length, one.episode_length)
    assert RslRlVecEnv(two).get_observations()["critic"].shape == (4, one.observation_dim + 3)


def test_a_sharded_env_dropped_without_close_stops_its_workers_quietly(tmp_path):
    script = tmp_path / "drop.py"
    script.write_text(
        "import time\nimport steel_envs\n\n"
        "if __name__ == '__main__':\n"
        "    env = steel_envs.make_vec('steel_envs/CartpoleBalance-v0', 2, num_shards=2, seed=0)\n"
        "    del env\n    time.sleep(3)\n"
    )
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr


def test_set_episode_length_reaches_the_workers_as_the_view_does_in_one_process():
    """rsl_rl's init_at_random_ep_len writes each world's step counter through the rsl_rl adapter: over 2 shards it
    reaches the workers, and world i's time limit (10 steps) then ends it after 10 - L_i steps, as writing the
    single-process env's view does. Bad counts raise in the parent, before any worker changes."""
    from steel_envs.adapters.rsl_rl import RslRlVecEnv

    swingup, lengths = "steel_envs/CartpoleSwingup-v0", torch.tensor([0, 3, 6, 9])
    sharded = steel_envs.make_vec(swingup, 4, num_shards=2, seed=0, max_episode_steps=10)
    single = steel_envs.make_vec(swingup, 4, seed=0, max_episode_steps=10)
    try:
        ends = {}
        for name, env in (("sharded", sharded), ("single", single)):
            RslRlVecEnv(env).episode_length_buf = lengths  # the adapter resets the env first
            assert env.episode_length.tolist() == lengths.tolist()
            steps = torch.stack([env.step(torch.zeros(4, 1))[3].clone() for _ in range(10)])  # truncated
            ends[name] = [int(steps[:, i].nonzero()[0]) + 1 for i in range(4)]
        assert ends["sharded"] == ends["single"] == [10, 7, 4, 1]
        for bad, message in [
            (torch.tensor([0, 1, 2]), r"expected \(4,\) integers"),
            (torch.tensor([0.0, 1.0, 2.0, 3.0]), "integers"),
            (np.array([True, False, True, False]), "integers"),
            (torch.tensor([0, 1, 2, 10]), r"in \[0, 10\)"),
            (np.array([-1, 1, 2, 3]), r"in \[0, 10\)"),
        ]:
            for env in (sharded, single):
                with pytest.raises(ValueError, match=message):
                    env.set_episode_length(bad)
        # A full time limit after the write, every counter is back where it was set; the bad calls changed none.
        assert sharded.episode_length.tolist() == single.episode_length.tolist() == lengths.tolist()
    finally:
        sharded.close()
        single.close()
