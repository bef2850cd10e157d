"""The env's tensors stay views on the env's device whatever torch's defaults say.

GPU RL programs often call ``torch.set_default_device("cuda")``; a CPU env must still return views of its own
buffers on the CPU (a copy on the default device would silently stop changing). The ``meta`` device stands in
for ``cuda`` on the CPU (``tests/test_gpu.py`` checks ``cuda`` itself), and ``torch.set_default_dtype(float64)``
must not change a documented dtype either.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import CARTPOLE, make

from steel_envs.adapters.rsl_rl import RslRlVecEnv
from steel_envs.policies import load_policy_callable
from steel_envs.sharded import ShardedVectorEnv, _Shard

_CPU = torch.device("cpu")


@pytest.fixture(params=["default-device-meta", "default-dtype-float64"])
def torch_defaults(request):
    """Set one of torch's defaults for the test (the env is built under it), restoring the previous ones after."""
    device, dtype = torch.get_default_device(), torch.get_default_dtype()
    try:
        if request.param == "default-device-meta":
            torch.set_default_device("meta")
        else:
            torch.set_default_dtype(torch.float64)
        yield request.param
    finally:
        torch.set_default_device(None if device.type == "cpu" else device)
        torch.set_default_dtype(dtype)


def _documented_dtype(key: str) -> torch.dtype:
    """The dtype ``step``'s docstring gives each output: rewards, observations and sums float32, lengths int32,
    every flag and mask bool."""
    if key in ("obs", "reward", "final_obs", "episode.r") or key.split(".")[-1].startswith("reward_"):
        return torch.float32
    return torch.int32 if key in ("episode.l", "episode_length") else torch.bool


def _outputs(obs, reward, terminated, truncated, info) -> dict[str, torch.Tensor]:
    """Every per-world tensor of a step, by a flat name (``episode.<key>`` for the episode entries)."""
    flat = {"obs": obs, "reward": reward, "terminated": terminated, "truncated": truncated}
    for key, value in info.items():
        if isinstance(value, dict):
            flat.update({f"episode.{k}": v for k, v in value.items()})
        else:
            flat[key] = value
    return flat


def test_step_and_reset_return_cpu_views_of_the_env(torch_defaults):
    env = make(CARTPOLE, 2, seed=0, max_episode_steps=2)  # every world is truncated by the second step
    try:
        obs, reset_info = env.reset(seed=0)
        first_obs = obs.clone()
        for key, view in {**reset_info, "obs": obs, "episode_length": env.episode_length}.items():
            assert (view.device, view.dtype) == (_CPU, _documented_dtype(key)), key
        # The library's own action sources (the CLI's random and zero policies) make what the env accepts.
        first = _outputs(*env.step(load_policy_callable("random", env, 0)(obs)))
        assert set(first) >= {"final_obs", "episode.r", "episode.l", "_episode", "reward_alive"}
        before = {key: view.clone() for key, view in first.items()}
        second = _outputs(*env.step(load_policy_callable("zero", env, 0)(obs)))
        for key, view in first.items():
            assert (view.device, view.dtype) == (_CPU, _documented_dtype(key)), key
            # A view: what the first step returned now holds the second step's values.
            assert view.data_ptr() == second[key].data_ptr() and torch.equal(view, second[key]), key
        assert obs.data_ptr() == first["obs"].data_ptr() and not torch.equal(obs, first_obs)
        assert not torch.equal(before["obs"], first["obs"])
        assert not before["truncated"].any() and first["truncated"].all() and first["_episode"].all()
        assert first["episode.l"].tolist() == [2, 2]
        assert torch.equal(first["episode.r"], before["reward"] + first["reward"])
        env.set_episode_length([1, 0])  # a plain list: checked on the CPU, not on the default device
        assert env.episode_length.tolist() == [1, 0]
        obs, _ = env.reset(options={"reset_mask": np.array([True, False])})
        assert obs.device == _CPU and env.episode_length.tolist() == [0, 0]
    finally:
        env.close()


def test_rsl_rl_adapter_and_a_trained_policy_step_on_the_env_device(torch_defaults):
    adapter = RslRlVecEnv(make(CARTPOLE, 2, seed=0))
    try:
        adapter.episode_length_buf = torch.tensor([3, 1], device="cpu")
        assert adapter.episode_length_buf.tolist() == [3, 1]
        policy = load_policy_callable("reference", adapter.env, 0)  # rsl_rl's runner, loaded from a checkpoint
        actions = policy(adapter.get_observations()["policy"])
        assert (actions.device, actions.dtype, actions.shape) == (_CPU, torch.float32, (2, adapter.num_actions))
        obs, reward, dones, _ = adapter.step(actions)
        assert (obs["policy"].device, obs["policy"].dtype) == (_CPU, torch.float32)
        assert (reward.device, reward.dtype, dones.device) == (_CPU, torch.float32, _CPU)
        assert torch.equal(obs["policy"], adapter.env.observation_groups["policy"])
        assert adapter.episode_length_buf.tolist() == [4, 2]
    finally:
        adapter.close()


def test_sharded_env_shares_cpu_tensors_under_a_meta_default_device():
    """The parent's shared tensors and the views it returns, fed by one in-process shard (the worker's loop without
    its process: spawning two workers would take most of this file's time)."""
    previous = torch.get_default_device()
    torch.set_default_device("meta")
    try:
        worker_env = make(CARTPOLE, 2, seed=0, max_episode_steps=2)
        sharded = ShardedVectorEnv.__new__(ShardedVectorEnv)
        sharded.num_envs = 2
        sharded._copy_probe(worker_env)
        task_info = {key: view.dtype for key, view in worker_env.task_info.items()}
        shared = sharded._shared = sharded._allocate(worker_env, task_info)
        for key, tensor in shared.items():
            assert tensor.device == _CPU and tensor.is_shared(), key
        shard, views = _Shard(worker_env, shared, 0, 2), sharded._views(task_info)
        shard.answer("reset", (0, None, {}))
        obs = shared["obs"]
        first_obs = obs.clone()
        shared["actions"].fill_(0.5)
        for _ in range(2):  # the second step truncates every world
            shard.answer("step", None)
        returned = _outputs(obs, shared["reward"], shared["terminated"], shared["truncated"], views)
        for key, view in returned.items():
            assert (view.device, view.dtype) == (_CPU, _documented_dtype(key)), key
        assert not torch.equal(obs, first_obs) and torch.equal(obs, worker_env.observation_groups["policy"])
        assert returned["truncated"].all() and returned["episode.l"].tolist() == [2, 2]
        worker_env.close()
    finally:
        torch.set_default_device(None if previous.type == "cpu" else previous)


def test_torchrl_adapter_resets_and_steps_on_the_env_device(torch_defaults):
    from steel_envs.adapters.torchrl import TorchRLEnv

    env = TorchRLEnv(make(CARTPOLE, 2, seed=0, autoreset_mode="Disabled"))
    try:
        td = env.reset()
        td["action"] = torch.zeros(2, env.env.action_dim, dtype=torch.float32, device="cpu")
        out = env.step(td)
        for key in ("observation", "reward_alive"):
            assert (td[key].device, td[key].dtype) == (_CPU, torch.float32), key
        for key in ("observation", "reward", "reward_alive"):
            assert (out["next", key].device, out["next", key].dtype) == (_CPU, torch.float32), key
        assert env.action_spec.space.low.device == _CPU and env.observation_spec["observation"].is_in(td["observation"])
    finally:
        env.close()
