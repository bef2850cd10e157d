"""The RL-library adapters serve their whole interface, and the wrappers users stack on them work: SB3
(VecVideoRecorder, VecNormalize, VecMonitor, indices, seeding, closing), skrl's trainer loop, rsl_rl's runner logging,
and Gymnasium's numpy vector wrappers through ArrayConversion."""

from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest
import torch
from conftest import CARTPOLE, assert_world_bit_identical, make, random_actions

SWINGUP = "steel_envs/CartpoleSwingup-v0"  # a smooth, non-constant reward: returns are not just lengths
SIZE = (64, 48)  # render_size (W, H)


def _episodes(info: dict, keys: tuple[str, ...] = ("r", "l")) -> list[tuple]:
    """The env's own statistics of the episodes that ended this step, world by world."""
    ended = np.flatnonzero(info["_episode"].numpy())
    return [tuple(float(info["episode"][k][w]) for k in keys) for w in ended]


# ---------------------------------------------------------------------------------------------------------------- SB3


@pytest.fixture
def sb3():
    return pytest.importorskip("stable_baselines3")


def test_sb3_frames_are_one_image_per_world_that_follows_its_state(sb3):
    from steel_envs.adapters.sb3 import Sb3VecEnv

    env = make(CARTPOLE, 2, seed=0, render_mode="rgb_array", render_size=SIZE, render_num_worlds=2)
    venv = Sb3VecEnv(env)
    venv.reset()
    first = venv.get_images()
    for _ in range(8):  # push the carts apart
        venv.step(np.array([[1.0], [-1.0]], np.float32))
    frames = venv.get_images()
    assert len(frames) == 2 and all(f.shape == (48, 64, 3) and f.dtype == np.uint8 for f in frames)
    # The env's own render() tiles the same two worlds side by side (another camera instance).
    tiled = env.render()
    np.testing.assert_array_equal(frames[0], tiled[:, :64])
    np.testing.assert_array_equal(frames[1], tiled[:, 64:])
    assert np.abs(frames[0].astype(int) - frames[1].astype(int)).sum() > 0, "the worlds differ"
    assert np.abs(frames[0].astype(int) - first[0].astype(int)).sum() > 0, "the picture follows the state"
    np.testing.assert_array_equal(venv.env_method("render", indices=[1])[0], frames[1])
    grid = venv.render()  # SB3 tiles get_images(): 2 rows of 1
    assert grid.shape == (96, 64, 3)
    np.testing.assert_array_equal(grid[48:], frames[1])
    assert venv.metadata["render_fps"] == pytest.approx(1 / env.control_dt)

    plain = Sb3VecEnv(make(CARTPOLE, 2))
    with pytest.warns(UserWarning, match="render mode"):
        assert plain.get_images() == [None, None]
    assert plain.env_method("render") == [None, None]


def test_sb3_vec_video_recorder_writes_the_tiled_frames(sb3, tmp_path):
    pytest.importorskip("moviepy")
    iio = pytest.importorskip("imageio.v3")
    from stable_baselines3.common.vec_env import VecVideoRecorder

    from steel_envs.adapters.sb3 import Sb3VecEnv

    venv = VecVideoRecorder(
        Sb3VecEnv(make(CARTPOLE, 2, seed=0, render_mode="rgb_array", render_size=SIZE)),
        str(tmp_path),
        record_video_trigger=lambda step: step == 0,
        video_length=5,
    )
    venv.reset()
    for _ in range(6):
        venv.step(np.array([[1.0], [-1.0]], np.float32))
    venv.close()
    video = iio.imread(venv.video_path, index=None)
    assert video.shape == (6, 96, 64, 3)  # the reset frame and 5 steps, two worlds stacked
    assert np.abs(video[-1].astype(int) - video[0].astype(int)).mean() > 0.1


def test_sb3_attributes_and_methods_honour_indices(sb3):
    from stable_baselines3.common.monitor import Monitor

    from steel_envs.adapters.sb3 import Sb3VecEnv

    env, untouched, masked = (make(CARTPOLE, 3, seed=4) for _ in range(3))
    venv = Sb3VecEnv(env)
    for a in random_actions(env, 5):
        a = a * 0.2  # gentle: no episode ends
        venv.step(a.numpy())
        untouched.step(a)
        masked.step(a)

    assert [int(v) for v in venv.get_attr("episode_length", indices=[2, 0])] == [5, 5]
    assert venv.get_attr("max_episode_steps", indices=[1]) == [500]
    venv.set_attr("episode_length", 7, indices=[1])
    assert env.episode_length.tolist() == [5, 7, 5]
    with pytest.raises(NotImplementedError, match="max_episode_steps"):
        venv.set_attr("max_episode_steps", 9, indices=[1])
    assert env.max_episode_steps == 500
    venv.set_attr("max_episode_steps", 9)
    assert env.max_episode_steps == 9

    # reset of world 1 only: its start state as the env's own masked reset draws it; worlds 0 and 2 untouched
    ((obs1, info1),) = venv.env_method("reset", indices=[1])
    expected = masked.reset(options={"reset_mask": np.array([False, True, False])})[0]
    np.testing.assert_array_equal(obs1, expected[1].numpy())
    for w in (0, 2):
        assert_world_bit_identical(env, untouched, w)
    assert env.episode_length.tolist() == [5, 0, 5] and info1 == {}
    with pytest.raises(ValueError, match="seed"):
        venv.env_method("reset", indices=[1], seed=3)

    with pytest.raises(NotImplementedError, match="set_world_parameters"):
        venv.env_method("set_world_parameters", friction_scale=[2.0] * 3, indices=[0])
    assert venv.env_method("set_world_parameters", friction_scale=[1.0] * 3) == [None] * 3
    with pytest.raises(IndexError, match="indices"):
        venv.get_attr("episode_length", indices=[3])
    with pytest.raises(AttributeError):
        venv.get_attr("no_such_attribute")
    assert not venv.has_attr("no_such_attribute")
    assert venv.env_is_wrapped(Monitor, indices=[0, 2]) == [True, True]
    assert venv.env_is_wrapped(sb3.common.vec_env.VecNormalize) == [False] * 3


def test_sb3_seed_reproduces_the_reset_and_close_is_final(sb3):
    from steel_envs.adapters.sb3 import Sb3VecEnv

    venv = Sb3VecEnv(make(CARTPOLE, 3, seed=1))
    twin = make(CARTPOLE, 3, seed=2)
    assert venv.seed(7) == [7, 7, 7]
    first = venv.reset()
    np.testing.assert_array_equal(first, twin.reset(seed=7)[0].numpy())
    assert not np.array_equal(venv.reset(), first), "an unseeded reset continues the random streams"
    venv.seed(7)
    np.testing.assert_array_equal(venv.reset(), first)
    with pytest.raises(ValueError, match="seed"):
        venv.seed(-1)
    with pytest.raises(ValueError, match="options"):
        venv.set_options({"reset_mask": np.ones(3, bool)})
    venv.set_options(None)
    venv.reset()
    venv.close()
    venv.close()  # idempotent
    assert venv.env.closed
    with pytest.raises(RuntimeError, match="closed"):
        venv.step(np.zeros((3, 1), np.float32))
    with pytest.raises(RuntimeError, match="closed"):
        venv.get_images()


def test_sb3_vec_normalize_running_mean_is_the_mean_of_the_raw_observations(sb3):
    from stable_baselines3.common.vec_env import VecNormalize

    from steel_envs.adapters.sb3 import Sb3VecEnv

    venv = VecNormalize(Sb3VecEnv(make(SWINGUP, 4, seed=1, max_episode_steps=12)), gamma=0.9)
    twin = make(SWINGUP, 4, seed=1, max_episode_steps=12)
    venv.reset()
    raw = [venv.get_original_obs()]
    seen = [twin.reset()[0].numpy().copy()]
    for a in random_actions(twin, 20):
        venv.step(a.numpy())
        raw.append(venv.get_original_obs())
        seen.append(twin.step(a)[0].numpy().copy())
    np.testing.assert_array_equal(np.stack(raw), np.stack(seen))
    stacked = np.concatenate(seen)
    assert not np.allclose(venv.obs_rms.mean, 0.0), "the running mean moved"
    np.testing.assert_allclose(venv.obs_rms.mean, stacked.mean(0), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(venv.obs_rms.var, stacked.var(0), rtol=1e-3, atol=1e-5)  # prior: var 1, count 1e-4
    assert venv.ret_rms.count > 20  # rewards are normalized from the discounted returns


def test_sb3_vec_monitor_returns_equal_the_env_episode_returns(sb3):
    from stable_baselines3.common.vec_env import VecMonitor

    from steel_envs.adapters.sb3 import Sb3VecEnv

    with pytest.warns(UserWarning, match="Monitor"):  # the worlds already report Monitor's episode info
        venv = VecMonitor(Sb3VecEnv(make(SWINGUP, 3, seed=2, max_episode_steps=9)))
    twin = make(SWINGUP, 3, seed=2, max_episode_steps=9)
    venv.reset()
    twin.reset()
    got, expected = [], []
    for a in random_actions(twin, 30, seed=1):
        _, _, dones, infos = venv.step(a.numpy())
        got += [(infos[w]["episode"]["r"], infos[w]["episode"]["l"]) for w in np.flatnonzero(dones)]
        expected += _episodes(twin.step(a)[4])
    assert len(got) == len(expected) >= 6
    np.testing.assert_allclose(np.array(got), np.array(expected), rtol=0, atol=2e-6)
    assert len({r for r, _ in got}) > 1, "distinct returns, not lengths"


# --------------------------------------------------------------------------------------------------------------- skrl


def test_skrl_trainer_loop_renders_and_counts_the_env_episodes(tmp_path):
    pytest.importorskip("skrl")
    from skrl.agents.torch.ppo import PPO, PPO_CFG
    from skrl.memories.torch import RandomMemory
    from skrl.trainers.torch import SequentialTrainer
    from skrl.utils.model_instantiators.torch import deterministic_model, gaussian_model

    from steel_envs.adapters.skrl import SkrlWrapper

    logging.getLogger("skrl").setLevel(logging.WARNING)
    env = SkrlWrapper(make(SWINGUP, 4, seed=0, max_episode_steps=6, render_mode="rgb_array", render_size=(32, 24)))
    frames, episodes = [], []
    render, step = env.render, env.step

    def spy_render():
        frames.append(render())
        return frames[-1]

    def spy_step(actions):
        out = step(actions)
        episodes.extend(r for (r,) in _episodes(out[4], ("r",)))
        return out

    env.render, env.step = spy_render, spy_step
    net = [{"name": "net", "input": "OBSERVATIONS", "layers": [16], "activations": "elu"}]
    spaces = {"observation_space": env.observation_space, "action_space": env.action_space, "device": env.device}
    models = {
        "policy": gaussian_model(**spaces, network=net, output="ACTIONS"),
        "value": deterministic_model(**spaces, network=net, output="ONE"),
    }
    cfg = PPO_CFG(rollouts=8, learning_epochs=1, mini_batches=1)
    cfg.experiment.directory = str(tmp_path)
    cfg.experiment.write_interval = 1000  # track episodes, never write
    cfg.experiment.checkpoint_interval = 0
    agent = PPO(models=models, memory=RandomMemory(memory_size=8, num_envs=4, device=env.device), cfg=cfg, **spaces)
    trainer_cfg = {"timesteps": 16, "headless": False, "render_interval": 4, "disable_progressbar": True}
    SequentialTrainer(env=env, agents=agent, cfg=trainer_cfg).train()

    assert len(frames) == 4 and all(f.shape == (24, 32, 3) and f.dtype == np.uint8 for f in frames)
    # skrl sums the wrapper's (N, 1) rewards between its dones; the env keeps its own episode returns.
    assert len(episodes) == 8
    np.testing.assert_allclose(np.ravel(list(agent._track_rewards)), episodes, rtol=1e-6)
    assert env.state() is None and env.num_agents == 1
    with pytest.raises(TypeError, match="render"):
        render("human")
    env.close()
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        step(torch.zeros(4, 1))


# ------------------------------------------------------------------------------------------------------------- rsl_rl


def test_rsl_rl_runner_logger_reports_the_env_episode_returns_and_terms(tmp_path):
    """test_training.py checks the TensorBoard tags of a training run; here the values rsl_rl's runner logger writes
    from the adapter's rewards, dones and ``extras["log"]`` equal the env's own episode statistics."""
    pytest.importorskip("rsl_rl")
    from rsl_rl.utils.logger import Logger
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from steel_envs.adapters.rsl_rl import RslRlVecEnv

    adapter = RslRlVecEnv(make(SWINGUP, 4, seed=3, max_episode_steps=7), stats_interval=5)
    twin = make(SWINGUP, 4, seed=3, max_episode_steps=7)
    twin.reset()
    logger = Logger(str(tmp_path), {"algorithm": {}, "num_steps_per_env": 20}, adapter.cfg, 4, False, 1, 0, "cpu")
    logger.init_logging_writer()
    expected = []
    for a in random_actions(twin, 20, seed=2):
        logger.process_env_step(*adapter.step(a)[1:])
        expected += _episodes(twin.step(a)[4], ("r", "l", "reward_smooth_upright"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logger.log(0, 0, 1, 1.0, 1.0, {}, 0.0, torch.ones(1), None)
    logger.writer.close()
    acc = EventAccumulator(str(tmp_path))
    acc.Reload()
    scalar = {tag: acc.Scalars(tag)[0].value for tag in acc.Tags()["scalars"]}
    r, length, upright = np.array(expected).T
    assert len(r) == 8
    assert scalar["Train/mean_reward"] == pytest.approx(r.mean(), rel=1e-5)
    assert scalar["Train/mean_episode_length"] == pytest.approx(length.mean())
    assert scalar["Episode_Reward/smooth_upright"] == pytest.approx(upright.mean(), rel=1e-5)
    assert scalar["Episode_Termination/time_out"] == pytest.approx(1.0)


# ---------------------------------------------------------------------------------------------------------- Gymnasium


def test_gymnasium_numpy_vector_wrappers_through_array_conversion():
    pytest.importorskip("array_api_compat")
    from gymnasium.wrappers.vector import ArrayConversion, ClipAction, NormalizeObservation, RecordEpisodeStatistics

    def numpy_env(**kwargs):
        env = make(SWINGUP, 3, seed=6, max_episode_steps=8, **kwargs)
        return ArrayConversion(env, env_xp=torch, target_xp=np, env_device=env.torch_device)

    envs = ClipAction(
        NormalizeObservation(RecordEpisodeStatistics(numpy_env(autoreset_mode="NextStep"), stats_key="stats"))
    )
    twin = make(SWINGUP, 3, seed=6, max_episode_steps=8, autoreset_mode="NextStep")
    obs, _ = envs.reset(seed=1)
    raw = [twin.reset(seed=1)[0].numpy().copy()]
    assert isinstance(obs, np.ndarray) and obs.dtype == np.float32 and obs.shape == (3, 5)
    rng = np.random.default_rng(0)
    stats = 0
    for _ in range(20):
        a = rng.uniform(-3.0, 3.0, (3, 1))  # outside the action space: ClipAction clips to [-1, 1]
        obs, reward, *_, info = envs.step(a)
        t_obs, t_reward, *_, t_info = twin.step(torch.from_numpy(np.clip(a, -1, 1).astype(np.float32)))
        raw.append(t_obs.numpy().copy())
        assert isinstance(reward, np.ndarray) and isinstance(info["episode"]["r"], np.ndarray)
        np.testing.assert_array_equal(reward, t_reward.numpy())
        if "stats" in info:  # Gymnasium's statistics equal the env's own
            stats += 1
            np.testing.assert_array_equal(info["_stats"], t_info["_episode"].numpy())
            ended = info["_stats"]
            np.testing.assert_allclose(info["stats"]["r"][ended], t_info["episode"]["r"].numpy()[ended], rtol=1e-5)
            np.testing.assert_array_equal(info["stats"]["l"][ended], t_info["episode"]["l"].numpy()[ended])
    assert stats == 2
    rms = envs.env.obs_rms
    np.testing.assert_allclose(rms.mean, np.concatenate(raw).mean(0), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(obs, (raw[-1] - rms.mean) / np.sqrt(rms.var + 1e-8), rtol=1e-4, atol=1e-5)

    # Where they cannot serve: observation wrappers refuse SAME_STEP autoreset (final_obs would stay raw), and the
    # env's own info["episode"] takes the default stats key.
    with pytest.raises(ValueError, match="autoreset_mode"):
        NormalizeObservation(numpy_env())
    envs = RecordEpisodeStatistics(numpy_env())
    envs.reset(seed=0)
    with pytest.raises(ValueError, match="episode"):
        for _ in range(8):
            envs.step(np.zeros((3, 1), np.float32))
