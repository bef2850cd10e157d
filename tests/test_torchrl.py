"""TorchRL adapter: specs, TorchRL's partial-reset contract, and a collector + PPO loop checked against the env."""

from __future__ import annotations

import warnings

import pytest
import torch
from conftest import CARTPOLE, make, random_actions, world_state

with warnings.catch_warnings():
    # torchrl 0.14.1 warns about its own deprecated weight-updater classes when it is imported.
    warnings.simplefilter("ignore", DeprecationWarning)
    pytest.importorskip("torchrl")
    import torchrl.collectors  # noqa: F401

from tensordict import TensorDict
from tensordict.nn import NormalParamExtractor, TensorDictModule
from torch import nn
from torchrl.collectors import Collector
from torchrl.data import Categorical
from torchrl.envs.utils import check_env_specs
from torchrl.modules import ProbabilisticActor, TanhNormal, ValueOperator
from torchrl.objectives import ClipPPOLoss
from torchrl.objectives.value import GAE

from steel_envs.adapters.torchrl import TorchRLEnv

PUSH_CUBE = "steel_envs/PushCube-v0"


def test_specs_pass_torchrl_check_and_carry_reward_terms_and_end_causes():
    env = TorchRLEnv(make(CARTPOLE, 3, seed=0, autoreset_mode="Disabled"))
    try:
        check_env_specs(env, seed=0)
        assert env.batch_size == torch.Size([3])
        assert env.action_spec.shape == (3, 1)
        assert env.observation_spec["observation"].shape == (3, 4)
        assert set(env.observation_spec.keys()) == {
            "observation",
            "reward_alive",
            "constraint_overflow",
            "nonfinite_state",
            "nonfinite_action",
        }
        assert set(env.done_keys) == {"done", "terminated", "truncated"}
        td = env.rollout(40, break_when_any_done=False)
        assert torch.equal(td["next", "reward"], td["next", "reward_alive"])  # CartpoleBalance's only term
    finally:
        env.close()
    assert env.env.closed


def test_task_entries_such_as_success_get_a_spec():
    env = TorchRLEnv(make(PUSH_CUBE, 2, seed=0, autoreset_mode="Disabled"))
    try:
        assert isinstance(env.observation_spec["success"], Categorical)
        assert env.observation_spec["success"].dtype == torch.bool
        check_env_specs(env, seed=1)
    finally:
        env.close()


@pytest.mark.parametrize(
    ("obs_mode", "shape", "dtype"), [("rgb", (2, 12, 16, 3), torch.uint8), ("depth", (2, 12, 16), torch.float32)]
)
def test_pixel_observations_come_under_pixels(obs_mode, shape, dtype):
    steel = make(CARTPOLE, 2, seed=0, autoreset_mode="Disabled", obs_mode=obs_mode, render_size=(16, 12))
    env = TorchRLEnv(steel)
    try:
        spec = env.observation_spec["pixels"]
        assert "observation" not in set(env.observation_spec.keys())
        assert spec.shape == shape and spec.dtype == dtype
        check_env_specs(env, seed=0)
        td = env.rand_step(env.reset())
        assert torch.equal(td["next", "pixels"], steel._obs_t)  # the env's own image of this step
    finally:
        env.close()


def test_a_nonfinite_action_ends_that_world_with_its_cause_passed_through():
    env = TorchRLEnv(make(CARTPOLE, 3, seed=0, autoreset_mode="Disabled", nonfinite_actions="end_episode"))
    try:
        td = env.reset()
        td["action"] = torch.tensor([[0.0], [float("nan")], [0.5]])
        nxt = env.step(td)["next"]
        assert nxt["nonfinite_action"][:, 0].tolist() == [False, True, False]
        assert nxt["truncated"][:, 0].tolist() == [False, True, False]
        assert nxt["done"][:, 0].tolist() == [False, True, False]
        assert not nxt["terminated"].any()
        reset = env.reset(nxt.clone().set("_reset", nxt["done"].clone()))
        assert not reset["nonfinite_action"].any() and not reset["done"].any()
    finally:
        env.close()


@pytest.mark.parametrize("mode", ["SameStep", "NextStep"])
def test_an_autoresetting_env_is_rejected_naming_the_argument(mode):
    steel = make(CARTPOLE, 2, seed=0, autoreset_mode=mode)
    try:
        with pytest.raises(ValueError, match=rf"env: .*autoreset_mode='Disabled', got '{mode}'"):
            TorchRLEnv(steel)
    finally:
        steel.close()
    with pytest.raises(TypeError, match=r"env: expected a steel_envs\.NewtonVectorEnv"):
        TorchRLEnv(object())


def test_reset_mask_resets_only_the_masked_worlds_as_the_envs_own_masked_reset():
    steel = make(CARTPOLE, 3, seed=5, autoreset_mode="Disabled")
    twin = make(CARTPOLE, 3, seed=5, autoreset_mode="Disabled")
    env = TorchRLEnv(steel)
    try:
        td = env.reset()
        twin.reset()
        for action in random_actions(steel, 5, seed=1):
            td = env.step(td.set("action", action))["next"].clone()
            twin.step(action)
        before = [world_state(steel, w) for w in range(3)]
        mask = torch.tensor([[False], [True], [False]])
        out = env.reset(td.clone().set("_reset", mask))
        twin_obs, _ = twin.reset(options={"reset_mask": mask[:, 0]})
        after = [world_state(steel, w) for w in range(3)]
        for w in (0, 2):  # untouched worlds: bit for bit
            assert all(before[w][k].tobytes() == after[w][k].tobytes() for k in before[w])
            assert torch.equal(out["observation"][w], td["observation"][w])
        assert any(before[1][k].tobytes() != after[1][k].tobytes() for k in before[1])
        assert torch.equal(out["observation"], twin_obs)
        assert steel.episode_length.tolist() == [5, 0, 5]
        assert not out["done"].any()
        with pytest.raises(ValueError, match=r"tensordict\['_reset'\]: expected a bool mask of shape \(3, 1\)"):
            env.reset(td.clone().set("_reset", torch.ones(3, 1, dtype=torch.int64)))
    finally:
        env.close()
        twin.close()


def _record_calls(steel) -> list[tuple]:
    """Log every step and reset the adapter makes on the vector env, with copies of the env's own outputs."""
    log: list[tuple] = []
    step, reset = steel.step, steel.reset

    def logged_step(actions):
        out = step(actions)
        obs, reward, terminated, truncated, info = out
        log.append(("step", actions.clone(), obs.clone(), reward.clone(), terminated.clone(), truncated.clone(),
                    info["_episode"].clone(), info["reward_alive"].clone()))  # fmt: skip
        return out

    def logged_reset(*, seed=None, options=None):
        obs, info = reset(seed=seed, options=options)
        mask = None if options is None else options["reset_mask"].clone()
        log.append(("reset", mask, obs.clone()))
        return obs, info

    steel.step, steel.reset = logged_step, logged_reset
    return log


def test_collector_and_clip_ppo_with_gae_see_exactly_the_envs_transitions():
    """TorchRL's Collector drives 4 worlds for 3 batches of 32 steps and ClipPPOLoss (GAE) trains on them; every
    collected transition is the env's own (action, obs, reward, flags), and TorchRL reset exactly the ended worlds."""
    torch.manual_seed(0)
    n, steps, iterations = 4, 32, 3
    steel = make(CARTPOLE, n, seed=11, autoreset_mode="Disabled", max_episode_steps=20)
    env = TorchRLEnv(steel)
    log = _record_calls(steel)
    actor_net = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2), NormalParamExtractor())
    actor = ProbabilisticActor(
        TensorDictModule(actor_net, in_keys=["observation"], out_keys=["loc", "scale"]),
        spec=env.action_spec,
        in_keys=["loc", "scale"],
        distribution_class=TanhNormal,
        distribution_kwargs={"low": -1.0, "high": 1.0},
        return_log_prob=True,
    )
    critic = ValueOperator(nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 1)), in_keys=["observation"])
    advantage = GAE(gamma=0.99, lmbda=0.95, value_network=critic)
    loss_module = ClipPPOLoss(actor, critic)
    optimizer = torch.optim.Adam(loss_module.parameters(), lr=3e-4)
    first = [p.detach().clone() for p in loss_module.parameters()]
    collector = Collector(
        env,
        actor,
        frames_per_batch=n * steps,
        total_frames=n * steps * iterations,
        auto_register_policy_transforms=False,  # a stateless MLP policy needs no InitTracker
    )
    batches = []
    try:
        for data in collector:
            assert data.batch_size == torch.Size([n, steps])
            assert data.numel() == n * steps
            with torch.no_grad():
                advantage(data)
            losses = loss_module(data)
            loss = losses["loss_objective"] + losses["loss_critic"] + losses["loss_entropy"]
            assert torch.isfinite(loss), losses
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            batches.append(data.clone())
    finally:
        collector.shutdown()
        env.close()
    assert len(batches) == iterations
    assert any(not torch.equal(a, b) for a, b in zip(first, loss_module.parameters(), strict=True))

    data = torch.cat(batches, dim=1)  # (n, steps * iterations), in time order
    step_calls = [i for i, call in enumerate(log) if call[0] == "step"]
    assert len(step_calls) == steps * iterations
    next_obs = data["next", "observation"]
    for t, i in enumerate(step_calls):
        _, action, obs, reward, terminated, truncated, ended, term = log[i]
        assert torch.equal(data["action"][:, t], action)
        assert torch.equal(next_obs[:, t], obs)
        assert torch.equal(data["next", "reward"][:, t, 0], reward)
        assert torch.equal(data["next", "reward_alive"][:, t, 0], term)
        assert torch.equal(data["next", "terminated"][:, t, 0], terminated)
        assert torch.equal(data["next", "truncated"][:, t, 0], truncated)
        assert torch.equal(data["next", "done"][:, t, 0], ended)  # the env's own episode ends
        assert torch.equal(ended, terminated | truncated)
        # The next root observation: the step's for worlds that go on; for ended worlds the one of the reset
        # TorchRL made right after this step, with exactly the ended worlds selected.
        if t + 1 < len(step_calls):
            expected = obs.clone()
            if ended.any():
                kind, mask, reset_obs = log[i + 1]
                assert kind == "reset" and torch.equal(mask, ended)
                expected[ended] = reset_obs[ended]
            else:
                assert log[i + 1][0] == "step"
            assert torch.equal(data["observation"][:, t + 1], expected)
    # Both kinds of episode end occurred, so the checks above saw each.
    assert data["next", "terminated"].any() and data["next", "truncated"].any()
    assert (data["next", "truncated"] & ~data["next", "terminated"]).any()


def test_seed_makes_rollouts_reproducible():
    def rollout(seed: int) -> TensorDict:
        env = TorchRLEnv(make(CARTPOLE, 2, autoreset_mode="Disabled"))
        try:
            env.set_seed(seed)
            torch.manual_seed(0)
            return env.rollout(30, break_when_any_done=False)
        finally:
            env.close()

    a, b, c = rollout(3), rollout(3), rollout(4)
    assert torch.equal(a["next", "observation"], b["next", "observation"])
    assert not torch.equal(a["observation"][:, 0], c["observation"][:, 0])
