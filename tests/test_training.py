"""Training entry points and RL-library adapters: rsl_rl (train, play, export, torchrun), SB3, skrl."""

from __future__ import annotations

import glob
import logging
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import torch
from conftest import CARTPOLE, make

pytest.importorskip("rsl_rl")

from steel_envs.training.train import train
from steel_envs.training.train_args import TrainArgs

from steel_envs.adapters.rsl_rl import RslRlVecEnv
from steel_envs.train_config import PpoConfig

TINY_PPO = PpoConfig(num_envs=16, num_steps_per_env=8, max_iterations=3)
TINY = {"ppo": TINY_PPO, "progress": False}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    log_dir = str(tmp_path_factory.mktemp("runs"))
    return train(TrainArgs(env_id=CARTPOLE, log_dir=log_dir, **TINY))


def test_rsl_rl_adapter_contract():
    env = make(CARTPOLE, 4, seed=0, max_episode_steps=30)
    adapter = RslRlVecEnv(env)
    obs0 = adapter.get_observations()["policy"]
    saw_timeout = False
    for _ in range(60):
        obs, _reward, dones, extras = adapter.step(torch.zeros(4, 1))
        # Copies, not the env's reused buffers: rsl_rl keeps the previous observations across a step.
        assert obs["policy"].data_ptr() != env._obs_t.data_ptr() and obs0.data_ptr() != obs["policy"].data_ptr()
        assert torch.equal(obs["policy"], env._obs_t) and dones.dtype == torch.int64
        terminated, truncated = env._terminated_t, env._truncated_t
        assert torch.equal(extras["time_outs"], truncated & ~terminated)
        assert torch.equal(dones.bool(), terminated | truncated)
        if dones.any():
            n = int(dones.sum())
            assert extras["log"]["Episode_Reward/alive"].shape == (n,)
            assert set(extras["log"]) >= {"Episode_Termination/time_out", "Episode_Termination/constraint_overflow"}
        saw_timeout |= bool(extras["time_outs"].any())
    assert saw_timeout
    adapter.episode_length_buf = torch.full((4,), 10**6)
    assert (env._episode_length_t == 29).all()
    with pytest.raises(ValueError, match="SameStep"):
        RslRlVecEnv(make(CARTPOLE, 1, autoreset_mode="NextStep"))


def test_rsl_rl_adapter_feeds_the_critic_group_to_the_critic():
    """A task with privileged blocks (QuadrupedVelocity) hands rsl_rl a "critic" group, which rsl_rl's default
    obs_groups route to the critic: the critic MLP's input is the larger group, the actor's the policy's."""
    from steel_envs.adapters.rsl_rl import make_runner, runner_config

    env = make("steel_envs/QuadrupedVelocity-v0", 2, seed=0)
    adapter = RslRlVecEnv(env)
    obs = adapter.get_observations()
    assert obs["critic"].shape == (2, env.observation_dim + 3)
    assert torch.equal(obs["critic"], env.observation_groups["critic"])
    stepped, *_ = adapter.step(torch.zeros(2, env.action_dim))
    assert torch.equal(stepped["critic"], env.observation_groups["critic"])
    runner = make_runner(adapter, runner_config(TINY_PPO, "cpu"), None, "cpu")
    models = [m for m in vars(runner.alg).values() if isinstance(m, torch.nn.Module)]
    inputs = {m.in_features for model in models for m in model.modules() if isinstance(m, torch.nn.Linear)}
    assert {env.observation_dim, env.observation_dim + 3} <= inputs
    assert "critic" not in RslRlVecEnv(make(CARTPOLE, 2)).get_observations()


def test_rsl_rl_adapter_reads_statistics_once_per_interval_with_the_same_episodes():
    """Gathered on the device and read every ``stats_interval`` steps: the same episodes, values and order as a
    read every step, with ``on_episodes`` seeing every ended episode."""
    logs, seen = {1: [], 8: []}, {1: [], 8: []}
    for interval in logs:
        env = make(CARTPOLE, 4, seed=0, max_episode_steps=10)
        adapter = RslRlVecEnv(env, on_episodes=lambda r, _l, k=interval: seen[k].append(r), stats_interval=interval)
        for t in range(24):
            extras = adapter.step(torch.full((4, 1), 0.5))[3]
            if interval == 8 and t % 8 != 7:
                assert "log" not in extras
            if "log" in extras:
                logs[interval].append(extras["log"])
    for key in logs[1][0]:
        one = torch.cat([log[key] for log in logs[1]])
        eight = torch.cat([log[key] for log in logs[8]])
        assert torch.equal(one, eight), key
    assert torch.equal(torch.cat(seen[1]), torch.cat(seen[8])) and len(torch.cat(seen[1])) == 8
    with pytest.raises(ValueError, match="stats_interval"):
        RslRlVecEnv(make(CARTPOLE, 1), stats_interval=0)


def test_rsl_rl_adapter_hands_pending_statistics_over_at_close():
    seen = []
    adapter = RslRlVecEnv(
        make(CARTPOLE, 4, seed=0, max_episode_steps=5),
        on_episodes=lambda r, _l: seen.append(r),
        stats_interval=np.int64(7),
    )
    for _ in range(10):
        adapter.step(torch.full((4, 1), 0.5))
    assert sum(len(r) for r in seen) == 4  # the 4 episodes ended at step 5, read at step 7
    adapter.close()
    assert sum(len(r) for r in seen) == 8  # the 4 ended at step 10, still pending, handed over at close


def test_train_writes_checkpoints_tensorboard_and_curve(trained):
    run = trained.run_dir
    assert os.path.isfile(trained.checkpoint) and glob.glob(os.path.join(run, "events.out.tfevents.*"))
    assert os.path.isfile(os.path.join(run, "train_args.json"))
    assert trained.iterations == 3 and trained.env_steps == 3 * 16 * 8
    assert trained.curve and all(np.isfinite(m) for _, _, m in trained.curve)


def test_tensorboard_has_every_reward_term_and_overflow_counts(trained):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(trained.run_dir)
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    assert {"Episode_Reward/alive", "Episode_Termination/constraint_overflow", "Train/mean_reward"} <= tags
    assert "Perf/env_steps_per_s" in tags


def test_play_runs_the_checkpoint(trained):
    from steel_envs.training.policy import play

    r = play(trained.checkpoint, episodes=4, num_envs=4)
    assert len(r["returns"]) == 4 and r["env_id"] == CARTPOLE
    assert all(ret == length for ret, length in zip(r["returns"], r["lengths"], strict=True))  # +1 per step


def test_a_checkpoint_plays_on_the_task_config_it_trained_with(tmp_path):
    """``--env.*`` overrides of a run (train_args.json) are the config its checkpoint is loaded, played and
    evaluated with, not the task's defaults; keywords of the caller still win."""
    from steel_envs.training.policy import play

    from steel_envs.policies import load_policy

    r = train(TrainArgs(env_id=CARTPOLE, log_dir=str(tmp_path), env={"force_scale": 4.0}, **TINY))
    _, env = load_policy(r.checkpoint)
    assert env.config.force_scale == 4.0
    _, env = load_policy(r.checkpoint, force_scale=6.0)
    assert env.config.force_scale == 6.0
    # play's episodes end where those of the trained config do: a twin env with the override, same seed and policy.
    twin_policy, twin = load_policy(r.checkpoint, num_envs=2, seed=1)
    obs, _ = twin.reset(seed=1)
    lengths: list[int] = []
    while len(lengths) < 2:
        obs, _, _, _, info = twin.step(twin_policy.policy(obs))
        lengths += info["episode"]["l"][info["_episode"]].tolist()
    assert play(r.checkpoint, episodes=2, num_envs=2, seed=1)["lengths"] == lengths[:2]


def test_a_seed_reproduces_its_run_bit_for_bit(trained, tmp_path):
    """On one machine a run is a function of its arguments: the same seed gives bit-identical actor and critic weights
    (a user who re-runs a reference seed gets its run), another seed other weights."""

    def weights(checkpoint: str) -> dict[str, torch.Tensor]:
        saved = torch.load(checkpoint, weights_only=False)
        return {f"{net}.{k}": v for net in ("actor", "critic") for k, v in saved[f"{net}_state_dict"].items()}

    first = weights(trained.checkpoint)
    twin = weights(train(TrainArgs(env_id=CARTPOLE, log_dir=str(tmp_path / "twin"), **TINY)).checkpoint)
    other = weights(train(TrainArgs(env_id=CARTPOLE, log_dir=str(tmp_path / "other"), seed=1, **TINY)).checkpoint)
    assert first.keys() == twin.keys() == other.keys()
    assert all(torch.equal(first[k], twin[k]) for k in first)
    assert not all(torch.equal(first[k], other[k]) for k in first)


@pytest.mark.parametrize("fmt", ["onnx", "torchscript"])
def test_exported_policy_matches_the_torch_policy(trained, tmp_path, fmt):
    from steel_envs.training.policy import export

    from steel_envs.policies import load_policy

    path = export(trained.checkpoint, format=fmt, out=str(tmp_path / ("p.onnx" if fmt == "onnx" else "p.pt")))
    assert sorted(os.listdir(tmp_path)) == [os.path.basename(path)]  # one self-contained file (no .onnx.data)
    loaded, _env = load_policy(trained.checkpoint)
    obs = torch.randn(32, 4) * 0.3
    expected = loaded.policy(obs).numpy()
    if fmt == "onnx":
        import onnxruntime

        session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
        got = session.run(None, {"obs": obs.numpy()})[0]
    else:
        got = torch.jit.load(path)(obs).detach().numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_two_ranks_on_gloo_keep_identical_weights(tmp_path):
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        "2",
        "--master-port",
        "29561",
        "-m",
        "steel_envs.training.train",
        CARTPOLE,
        "--num-envs",
        "8",
        "--num-steps-per-env",
        "8",
        "--max-iterations",
        "2",
        "--log-dir",
        str(tmp_path),
        "--no-progress",
    ]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    assert r.returncode == 0, r.stderr[-2000:]
    sums = re.findall(r"rank (\d)/2: actor checksum (\S+)", r.stdout)
    assert sorted(rank for rank, _ in sums) == ["0", "1"]
    assert sums[0][1] == sums[1][1]


def test_stable_baselines3_ppo_runs_and_sees_terminal_observations(tmp_path):
    sb3 = pytest.importorskip("stable_baselines3")
    from steel_envs.adapters.sb3 import Sb3VecEnv

    venv = Sb3VecEnv(make(CARTPOLE, 4, seed=1))
    twin = make(CARTPOLE, 4, seed=1, autoreset_mode="Disabled")
    venv.reset()
    twin.reset()
    zeros = np.zeros((4, 1), np.float32)
    for _ in range(100):
        _obs, _rewards, dones, infos = venv.step(zeros)
        t_obs = twin.step(torch.from_numpy(zeros))[0].numpy()
        if dones.any():
            w = int(np.flatnonzero(dones)[0])
            np.testing.assert_array_equal(infos[w]["terminal_observation"], t_obs[w])
            assert infos[w]["TimeLimit.truncated"] is False and infos[w]["episode"]["l"] > 0
            break
    else:
        raise AssertionError("no episode ended")
    model = sb3.PPO(
        "MlpPolicy", Sb3VecEnv(make(CARTPOLE, 4, seed=2)), n_steps=64, batch_size=64, n_epochs=2, seed=0, device="cpu"
    )
    from stable_baselines3.common.logger import configure

    model.set_logger(configure(str(tmp_path), []))  # SB3's default makes an SB3-<time> folder in the system's temp
    model.learn(total_timesteps=4 * 64 * 2)
    assert len(model.ep_info_buffer) > 0 and model.num_timesteps >= 512


def test_skrl_ppo_runs():
    pytest.importorskip("skrl")
    from skrl.agents.torch.ppo import PPO, PPO_CFG
    from skrl.memories.torch import RandomMemory
    from skrl.trainers.torch import SequentialTrainer
    from skrl.utils.model_instantiators.torch import deterministic_model, gaussian_model

    from steel_envs.adapters.skrl import SkrlWrapper

    logging.getLogger("skrl").setLevel(logging.WARNING)  # its INFO lines outlive pytest's captured stream
    env = SkrlWrapper(make(CARTPOLE, 8, seed=0))
    net = [{"name": "net", "input": "OBSERVATIONS", "layers": [32, 32], "activations": "elu"}]
    spaces = {"observation_space": env.observation_space, "action_space": env.action_space, "device": env.device}
    models = {
        "policy": gaussian_model(**spaces, network=net, output="ACTIONS"),
        "value": deterministic_model(**spaces, network=net, output="ONE"),
    }
    cfg = PPO_CFG(rollouts=16, learning_epochs=2, mini_batches=2)
    cfg.experiment.write_interval = 0
    cfg.experiment.checkpoint_interval = 0
    agent = PPO(models=models, memory=RandomMemory(memory_size=16, num_envs=8, device=env.device), cfg=cfg, **spaces)
    SequentialTrainer(
        env=env, agents=agent, cfg={"timesteps": 300 // 8, "headless": True, "disable_progressbar": True}
    ).train()
    obs, _ = env.reset()
    assert obs.shape == (8, 4) and torch.isfinite(obs).all()


def test_the_learning_benchmark_runs_any_id_and_prints_the_evaluate_table(tmp_path, capsys):
    """``python -m steel_envs.training.benchmarks.learning <ID>`` (issue 14 item 5): trains, prints the curve, then
    evaluates the policy beside random and the task's scripted solver."""
    from steel_envs.training.benchmarks import learning

    argv = ["steel_envs/CartpoleSwingup-v0", "--max-iterations", "1", "--num-envs", "8", "--episodes", "4"]
    status = learning.main([*argv, "--log-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert "mean return (last 100 episodes)" in out and "(final)" in out
    rows = [line.split()[0] for line in out.splitlines() if line.startswith(("model_final", "random", "steel_envs."))]
    assert rows == ["model_final.pt", "random", "steel_envs.tasks.cartpole_swingup:s"[:28]], out
    assert status == 0  # CartpoleSwingup has no target return to miss
    assert learning.scripted_policy_spec("steel_envs/AntRun-v0") is None
