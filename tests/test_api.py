"""The vector-env contract: spaces, dtypes, zero-copy views, registration, single-world adapter, bad input."""

from __future__ import annotations

import importlib
import itertools
import re
import warnings

import gymnasium as gym
import numpy as np
import pytest
import torch
import warp as wp
from conftest import ANT, CARTPOLE, TASK_IDS, make, random_actions
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode

import steel_envs

# Sizes as the task docstrings state them, written out here; a task without an entry is checked against its class.
OBS_DIMS = {
    CARTPOLE: 4,
    ANT: 81,
    "steel_envs/CartpoleSwingup-v0": 5,
    "steel_envs/HumanoidRun-v0": 230,
    "steel_envs/QuadrupedVelocity-v0": 52,
    "steel_envs/PushCube-v0": 20,
    "steel_envs/ClothFold-v0": 84,
    "steel_envs/SoftPush-v0": 38,
}
ACT_DIMS = {
    CARTPOLE: 1,
    ANT: 8,
    "steel_envs/CartpoleSwingup-v0": 1,
    "steel_envs/HumanoidRun-v0": 21,
    "steel_envs/QuadrupedVelocity-v0": 12,
    "steel_envs/PushCube-v0": 2,
    "steel_envs/ClothFold-v0": 6,
    "steel_envs/SoftPush-v0": 2,
}


@pytest.fixture(scope="module", params=TASK_IDS)
def vector_env(request):
    """One 3-world env per ID, built by ``gym.make_vec``, for the per-ID tests that take it (each resets it with its
    own seed first). Module-scoped and parametrized, so pytest runs those tests one ID at a time with one build: an
    env build is most of their cost (Go1VelocityRough's terrain alone ~2 s)."""
    env = gym.make_vec(request.param, num_envs=3, vectorization_mode="vector_entry_point", device="cpu")
    yield env
    env.close()


def test_spaces_dtypes_shapes_devices_and_seeded_starts(vector_env):
    """Spaces, dtypes and devices as declared; and every world's first observation depends on the seed (no start
    a policy could memorize) and only on it (the same seed twice gives the same start)."""
    env, env_id = vector_env, vector_env.spec.id
    assert isinstance(env, gym.vector.VectorEnv)
    assert isinstance(env, steel_envs.NewtonVectorEnv)
    assert env.num_envs == 3 and env.device == "cpu"
    assert isinstance(env.metadata["autoreset_mode"], AutoresetMode)
    o, a = env.single_observation_space, env.single_action_space
    assert o.shape == (OBS_DIMS.get(env_id, env.observation_dim),)
    assert a.shape == (ACT_DIMS.get(env_id, env.action_dim),)
    assert o.dtype == np.float32 and a.dtype == np.float32
    assert np.all(np.isfinite(o.low)) and np.all(np.isfinite(o.high))
    assert env.observation_space.shape == (3, *o.shape) and env.action_space.shape == (3, *a.shape)
    obs, info = env.reset(seed=0)
    assert obs.shape == (3, o.shape[0]) and obs.dtype == torch.float32 and obs.device.type == "cpu"
    first = obs.clone()
    other = env.reset(seed=1)[0].clone()
    assert (first != other).any(dim=1).all(), "a world starts alike under seeds 0 and 1"
    assert torch.equal(env.reset(seed=0)[0], first)
    obs, reward, terminated, truncated, info = env.step(torch.zeros(3, a.shape[0]))
    assert reward.shape == (3,) and reward.dtype == torch.float32
    assert terminated.dtype == torch.bool and truncated.dtype == torch.bool
    assert terminated.shape == truncated.shape == (3,)
    assert info["constraint_overflow"].dtype == torch.bool and info["constraint_overflow"].shape == (3,)
    assert o.contains(obs[0].numpy())


def test_make_vec_and_gym_make_vec_agree():
    a = steel_envs.make_vec(CARTPOLE, num_envs=2, device="cpu", max_episode_steps=7)
    b = gym.make_vec(CARTPOLE, num_envs=2, vectorization_mode="vector_entry_point", device="cpu")
    assert type(a) is type(b)
    assert a.max_episode_steps == 7 and b.max_episode_steps == 500


def test_returned_tensors_are_the_same_storage_every_step(cartpole):
    obs, _ = cartpole.reset(seed=1)
    ptrs = None
    for actions in random_actions(cartpole, 30):
        obs2, reward, terminated, truncated, info = cartpole.step(actions)
        now = [t.data_ptr() for t in (obs2, reward, terminated, truncated, info["reward_alive"], info["final_obs"])]
        assert ptrs is None or now == ptrs
        ptrs = now
    assert obs2.data_ptr() == obs.data_ptr()
    obs3, _ = cartpole.reset()
    assert obs3.data_ptr() == obs.data_ptr()


def test_views_share_memory_with_the_warp_buffers(cartpole):
    obs, _ = cartpole.reset(seed=0)
    # The cart position observation is joint_q of each world's rail: same values, no copy.
    q = cartpole.state_0.joint_q.numpy().reshape(cartpole.num_envs, 2)
    np.testing.assert_array_equal(obs[:, 0].numpy(), q[:, 0])
    assert obs.data_ptr() == cartpole.obs_pipeline.obs.ptr


def test_reward_is_the_sum_of_its_terms(vector_env):
    env = vector_env
    env.reset(seed=5)
    names = [f"reward_{t}" for t in env.reward_terms]
    for actions in random_actions(env, 25):
        _, reward, _, _, info = env.step(actions)
        total = np.zeros(env.num_envs, np.float32)
        for name in names:
            total = total + info[name].numpy()
        np.testing.assert_array_equal(reward.numpy(), total)


def test_numpy_actions_equal_torch_actions():
    a, b = make(CARTPOLE, 3, seed=2), make(CARTPOLE, 3, seed=2)
    for actions in random_actions(a, 20):
        oa = a.step(actions)[0]
        ob = b.step(actions.double().numpy())[0]
        assert torch.equal(oa, ob)


def test_strided_and_grad_actions_equal_contiguous_actions():
    a, b = make(CARTPOLE, 4, seed=2), make(CARTPOLE, 4, seed=2)
    for actions in random_actions(a, 10):
        wide = torch.zeros(4, 3)
        wide[:, 1] = actions[:, 0]
        strided = wide[:, 1:2]
        assert not strided.is_contiguous()
        oa = a.step(actions.clone().requires_grad_(True))[0].clone()
        ob = b.step(strided)[0]
        assert torch.equal(oa, ob)


def test_actions_are_clipped_to_the_action_space():
    a, b = make(CARTPOLE, 2, seed=4), make(CARTPOLE, 2, seed=4)
    for _ in range(5):
        oa = a.step(torch.full((2, 1), 5.0))[0]
        ob = b.step(torch.ones(2, 1))[0]
        assert torch.equal(oa, ob)


@pytest.mark.parametrize(
    ("actions", "error", "pattern"),
    [
        (torch.zeros(3, 1), ValueError, r"actions: expected shape \(2, 1\), got \(3, 1\)"),
        (torch.zeros(2), ValueError, r"actions: expected shape \(2, 1\), got \(2,\)"),
        (
            torch.zeros(2, 1, dtype=torch.float64),
            ValueError,
            r"actions: expected dtype torch.float32, got torch.float64",
        ),
        (torch.zeros(2, 1, dtype=torch.int32), ValueError, "expected dtype torch.float32"),
        (torch.zeros(2, 1, device="meta"), ValueError, r"actions: expected device cpu, got meta"),
        (torch.tensor([[0.0], [float("nan")]]), ValueError, r"actions: expected finite values.*world\(s\) \[1\]"),
        (torch.tensor([[float("inf")], [0.0]]), ValueError, r"world\(s\) \[0\]"),
        (np.zeros((2, 2)), ValueError, r"expected shape \(2, 1\), got \(2, 2\)"),
        (np.array([["a"], ["b"]]), ValueError, "expected a real dtype"),
        (np.array([[np.nan], [0.0]]), ValueError, "expected finite values"),
        ([[0.0], [0.0]], TypeError, "expected a torch.Tensor or numpy.ndarray, got list"),
    ],
)
def test_bad_actions_raise_and_change_nothing(actions, error, pattern):
    env, twin = make(CARTPOLE, 2, seed=9), make(CARTPOLE, 2, seed=9)
    with pytest.raises(error, match=pattern):
        env.step(actions)
    # Nothing was stepped: the env continues exactly as its twin that never saw the bad input.
    zeros = torch.zeros(2, 1)
    assert torch.equal(env.step(zeros)[0], twin.step(zeros)[0])


@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        ({"num_envs": 0}, ValueError, r"num_envs: expected an int in \[1, 2\*\*31\), got 0"),
        ({"num_envs": 10**30}, ValueError, "num_envs"),
        ({"num_envs": 2.5}, ValueError, "num_envs"),
        ({"autoreset_mode": "sometimes"}, ValueError, "autoreset_mode: expected one of"),
        ({"max_episode_steps": 0}, ValueError, "max_episode_steps"),
        ({"seed": -1}, ValueError, "seed: expected None or an int >= 0"),
        ({"render_mode": "human"}, ValueError, "render_mode"),
        ({"device": "gpu"}, ValueError, "device: expected None, 'cpu' or an available 'cuda:N', got 'gpu'"),
        ({"pole_length": 2.0}, TypeError, r"unexpected keyword argument\(s\) \['pole_length'\]"),
        ({"alive_reward": float("nan")}, ValueError, "alive_reward: expected a finite number"),
        ({"alive_reward": 1e39}, ValueError, "alive_reward: expected a finite number within float32 range"),
        ({"reset_noise_scale": 1e39}, ValueError, "reset_noise_scale"),
        ({"reset_noise_scale": -0.1}, ValueError, "reset_noise_scale: expected a number >= 0"),
        ({"obs_clip": 1e-50}, ValueError, r"obs_clip: expected a number >= 1 \("),
        ({"pole_angle_limit": 0.0}, ValueError, "pole_angle_limit: expected a number > 0"),
        ({"force_scale": -10.0}, ValueError, "force_scale"),
        ({"alive_reward": "1"}, ValueError, "alive_reward: expected a number"),
        ({"overflow_is_terminal": 1}, ValueError, "overflow_is_terminal: expected a bool"),
        ({"obs_clip": -1.0}, ValueError, "obs_clip"),
        ({"solver_options": {"iterations": 2, "nope": 1}}, ValueError, r"unknown SolverSteel option\(s\) \['nope'\]"),
        (
            {"solver_options": {"enable_joint_limits": "False"}},
            ValueError,
            r"\['enable_joint_limits'\]: expected a bool",
        ),
        ({"solver_options": {"iterations": 2**32 + 1}}, ValueError, r"\['iterations'\]: expected an int in int32"),
        ({"solver_options": {"iterations": 1.9}}, ValueError, r"\['iterations'\]: expected an int"),
        ({"solver_options": {"iterations": "12"}}, ValueError, r"\['iterations'\]: expected an int"),
        ({"solver_options": {"baumgarte": float("nan")}}, ValueError, r"\['baumgarte'\]: expected a finite"),
        ({"solver_options": {"baumgarte": -5.0}}, ValueError, r"\['baumgarte'\]: expected a number in \[0, 1\]"),
        ({"solver_options": {"relaxation": float("inf")}}, ValueError, r"\['relaxation'\]"),
        ({"solver_options": {"cfm": -1.0}}, ValueError, r"\['cfm'\]"),
        ({"solver_options": {"solve_mode": "fast"}}, ValueError, r"\['solve_mode'\]: expected one of"),
        ({"solver_options": {"iterations": None}}, ValueError, r"\['iterations'\]: None is not allowed"),
    ],
)
def test_bad_constructor_arguments_raise(kwargs, error, pattern):
    kwargs = {"num_envs": 1, "device": "cpu", **kwargs}
    with pytest.raises(error, match=pattern):
        steel_envs.make_vec(CARTPOLE, **kwargs)


def test_bad_reset_options_raise(cartpole):
    with pytest.raises(ValueError, match=re.escape("options['reset_mask']: expected shape (4,), got (3,)")):
        cartpole.reset(options={"reset_mask": np.ones(3, bool)})
    with pytest.raises(ValueError, match="expected dtype bool"):
        cartpole.reset(options={"reset_mask": np.ones(4, np.int64)})
    with pytest.raises(ValueError, match=r"expected dtype torch\.bool"):
        cartpole.reset(options={"reset_mask": torch.ones(4)})
    with pytest.raises(ValueError, match=r"options: unknown key\(s\) \['mask'\]"):
        cartpole.reset(options={"mask": np.ones(4, bool)})
    with pytest.raises(ValueError, match="seed"):
        cartpole.reset(seed=-3)


def test_closed_env_raises(cartpole):
    cartpole.close()
    with pytest.raises(RuntimeError, match="closed"):
        cartpole.step(torch.zeros(4, 1))


@pytest.mark.parametrize("env_id", TASK_IDS)
def test_single_world_adapter_passes_env_checker_without_warnings(env_id):
    env = gym.make(env_id, device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # check_env's render and double-close checks build two more envs from the spec and run code no ID changes
        # (the renderer, close): on the cart-pole only. Every ID's scene renders in test_capture_safety's camera
        # observations.
        others = env_id != CARTPOLE
        check_env(env.unwrapped, skip_render_check=others, skip_close_check=others)
        # gym.make's own wrappers (order enforcing, passive checker, time limit) stay silent too.
        obs, _ = env.reset(seed=0)
        for _ in range(5):
            obs, reward, terminated, _truncated, info = env.step(env.action_space.sample())
    assert isinstance(obs, np.ndarray) and obs.dtype == np.float32
    assert isinstance(reward, float) and isinstance(terminated, bool)
    assert set(info) >= {f"reward_{t}" for t in env.unwrapped.vector_env.reward_terms}
    env.close()


def test_seeded_rollouts_are_bitwise_reproducible_and_worlds_differ():
    runs = []
    for _ in range(2):
        env = make(ANT, 3, seed=11)
        obs, _ = env.reset(seed=123)
        traj = [obs.clone()]
        for actions in random_actions(env, 15, seed=1):
            traj.append(env.step(actions)[0].clone())
        runs.append(torch.stack(traj))
        env.close()
    assert runs[0].numpy().tobytes() == runs[1].numpy().tobytes()
    first = runs[0][0]
    assert not torch.equal(first[0], first[1]) and not torch.equal(first[1], first[2])


def test_reset_with_a_new_seed_changes_initial_states(cartpole):
    a = cartpole.reset(seed=1)[0].clone()
    b = cartpole.reset(seed=2)[0].clone()
    c = cartpole.reset(seed=1)[0].clone()
    assert not torch.equal(a, b)
    assert torch.equal(a, c)


def test_the_observation_table_is_the_declared_layout_and_the_task_writes_every_entry(vector_env):
    """The docstring's observation table (default config) is the one the declared blocks give, row for row, and the
    blocks tile the observation vector: sizes sum to the space's size, offsets are contiguous. The task's blocks write
    every entry of that layout: a buffer of NaN comes back finite."""
    env = vector_env
    env.reset(seed=0)
    section = type(env).__doc__.split("## Observation space")[1].split("\n\n    ##")[0]
    documented = [line.strip() for line in section.splitlines() if line.strip().startswith("|")]
    assert documented == steel_envs.spec.observation_table(env.observation_blocks()).splitlines()
    privileged = env.privileged_observation_blocks()
    if privileged:
        section = type(env).__doc__.split("## Privileged observations")[1].split("\n\n    ##")[0]
        documented = [line.strip() for line in section.splitlines() if line.strip().startswith("|")]
        assert documented == steel_envs.spec.observation_table(privileged).splitlines()
    layout = list(env.observation_layout.values())
    assert layout[0].start == 0 and layout[-1].stop == env.observation_dim == env.single_observation_space.shape[0]
    assert all(a.stop == b.start for a, b in itertools.pairwise(layout))
    obs = wp.full((env.num_envs, env.observation_dim), float("nan"), dtype=wp.float32, device="cpu")
    env.terms.observe(obs)
    assert np.isfinite(obs.numpy()).all()


def test_the_critic_group_is_the_noise_free_state_then_the_privileged_blocks():
    """Asymmetric actor-critic: the critic sees the policy's observations without their noise, then the task's
    privileged blocks (QuadrupedVelocity: base height, friction and mass factors); without either the critic group
    is the policy's own tensor."""
    quad = "steel_envs/QuadrupedVelocity-v0"
    clean = make(quad, 3, seed=4)
    noisy = make(quad, 3, seed=4, obs_noise_std=0.05)
    noisy.set_world_parameters(friction_scale=[1.0, 0.5, 2.0], mass_scale=[1.0, 1.5, 0.75])
    for env in (clean, noisy):
        env.reset(seed=4)
    groups, dim = noisy.observation_groups, noisy.observation_dim
    assert groups["critic"].shape == (3, dim + 3)
    assert torch.equal(groups["critic"][:, :dim], clean.observation_groups["policy"])  # the same state, no noise
    assert not torch.equal(groups["policy"], clean.observation_groups["policy"])
    base_z = noisy.state_0.body_q.numpy().reshape(3, -1, 7)[:, 0, 2]
    np.testing.assert_allclose(groups["critic"][:, dim].numpy(), base_z, rtol=1e-6)
    np.testing.assert_allclose(groups["critic"][:, dim + 1 :].numpy(), [[1.0, 1.0], [0.5, 1.5], [2.0, 0.75]])
    cartpole = make(CARTPOLE, 2)
    assert cartpole.observation_groups["critic"] is cartpole.observation_groups["policy"]
    pixels = make(CARTPOLE, 2, obs_mode="rgb", render_size=(8, 6))  # the critic sees the state vector
    assert pixels.observation_groups["critic"].shape == (2, 4) and pixels.observation_groups["policy"].ndim == 4


def test_observation_layout_names_ant_blocks_and_follows_the_config():
    env = make(ANT, 1, seed=0)
    obs, _ = env.reset(seed=0)
    z = env.state_0.body_q.numpy()[0, 2]
    assert obs[0, env.observation_layout["torso_z"]].item() == pytest.approx(z, abs=1e-6)
    bare = make(ANT, 1, include_cfrc_ext_in_observation=False, exclude_current_positions_from_observation=False)
    assert (
        list(bare.observation_layout)[:2] == ["torso_xy", "torso_z"] and "contact_wrench" not in bare.observation_layout
    )
    assert bare.observation_dim == 29


@pytest.mark.parametrize("env_id", TASK_IDS)
def test_registered_time_limit_is_the_tasks_default(env_id):
    spec = gym.spec(env_id)
    vector_cls = steel_envs.task_class(env_id)
    assert spec.max_episode_steps == vector_cls.default_max_episode_steps


def test_bad_reset_masks_are_rejected_before_anything_changes(cartpole):
    twin = make(CARTPOLE, 4, seed=3)
    sparse = torch.tensor([True, False, True, False]).to_sparse()
    for mask in (sparse, torch.ones(4, dtype=torch.bool, device="meta")):
        with pytest.raises(ValueError, match=r"options\['reset_mask'\]: expected a dense tensor"):
            cartpole.reset(seed=5, options={"reset_mask": mask})
    assert torch.equal(cartpole.reset()[0], twin.reset()[0])


def test_lazily_negated_actions_are_read_with_their_sign():
    a, b = make(CARTPOLE, 2, seed=6), make(CARTPOLE, 2, seed=6)
    x = torch.full((2, 1), 0.7)
    neg = torch._neg_view(x)
    assert neg.is_neg()
    for _ in range(5):
        assert torch.equal(a.step(neg)[0], b.step(torch.full((2, 1), -0.7))[0])


def test_finite_numpy_actions_beyond_float32_are_clipped():
    a, b = make(CARTPOLE, 2, seed=6), make(CARTPOLE, 2, seed=6)
    for _ in range(3):
        oa = a.step(np.array([[1e300], [-1e39]]))[0]
        ob = b.step(torch.tensor([[1.0], [-1.0]]))[0]
        assert torch.equal(oa, ob)


def test_large_seeds_give_distinct_streams():
    env = make(CARTPOLE, 2)
    first = {seed: env.reset(seed=seed)[0].clone() for seed in (7, 2**31 + 7, 2**64, 0)}
    assert not torch.equal(first[7], first[2**31 + 7])
    assert not torch.equal(first[0], first[2**64])


def _balance(obs: np.ndarray) -> np.ndarray:
    """A PD controller on angle and cart position that keeps the pole up indefinitely."""
    x, x_dot, theta, theta_dot = obs
    return np.array([np.clip(10.0 * theta + 2.0 * theta_dot + 0.1 * x + 0.2 * x_dot, -1.0, 1.0)], np.float32)


@pytest.mark.parametrize(("limit", "expected"), [(None, 500), (30, 30), (600, 600)])
def test_gym_make_time_limit_is_honoured(limit, expected):
    kwargs = {} if limit is None else {"max_episode_steps": limit}
    env = gym.make(CARTPOLE, device="cpu", **kwargs)
    obs, _ = env.reset(seed=0)
    for step in range(1, 700):
        obs, _, terminated, truncated, _ = env.step(_balance(obs))
        assert not terminated, f"the controller keeps the pole up (step {step})"
        if truncated:
            break
    assert step == expected
    env.close()


def test_single_world_step_and_reset_validate_before_acting():
    env = gym.make(CARTPOLE, device="cpu").unwrapped
    env.reset(seed=1)
    for bad, pattern in [
        (np.array([np.nan]), "action: expected finite"),
        (np.array(["a"]), "action: expected a real"),
        (np.zeros((1, 1)), r"action: expected shape \(1,\)"),
    ]:
        with pytest.raises(ValueError, match=pattern):
            env.step(bad)
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=True)
    with pytest.raises(ValueError, match="options"):
        env.reset(options=[])
    obs_a, _ = env.reset(seed=np.int64(3))
    obs_b, _ = env.reset(seed=3)
    np.testing.assert_array_equal(obs_a, obs_b)
    out = env.step(torch.tensor([0.5], requires_grad=True))
    assert isinstance(out[0], np.ndarray)


def test_bad_inputs_found_by_a_breaking_trial():
    """Each raised a confusing error, or none, before: now a ValueError or RuntimeError naming the argument."""
    with pytest.raises(ValueError, match="obs_noise_std: applies to state observations"):
        make(CARTPOLE, 2, obs_mode="rgb", render_size=(8, 6), obs_noise_std=0.1)
    env = make(CARTPOLE, 4)
    before = env.model.body_mass.numpy().copy()
    for bad in ([1.0, 1e-50, 1.0, 1.0], [1.0, 1e39, 1.0, 1.0], ["1"] * 4, np.ones(4, complex), np.ones(4, bool)):
        with pytest.raises(ValueError, match="mass_scale"):
            env.set_world_parameters(mass_scale=bad)
    assert np.array_equal(env.model.body_mass.numpy(), before)
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.set_world_parameters(mass_scale=[1.0] * 4)
    with pytest.raises(RuntimeError, match="closed"):
        env.physics()
    from steel_envs.arguments import throughput_kwargs

    assert throughput_kwargs(None) == throughput_kwargs("cpu") == {}  # Warp's preferred device here is the CPU


def test_registry_holds_every_task_and_lookups_suggest_ids():
    assert set(steel_envs.ENV_IDS) <= set(steel_envs.registry())
    assert "steel_envs_test/PendulumSwingup-v0" in steel_envs.registry()  # registered by its own module only
    assert "steel_envs_test/PendulumSwingup-v0" not in steel_envs.ENV_IDS
    assert steel_envs.task_class(ANT).__name__ == "AntRunEnv"
    with pytest.raises(gym.error.UnregisteredEnv, match=r"did you mean 'steel_envs/AntRun-v0'\?"):
        steel_envs.task_class("AntRun-v0")
    with pytest.raises(gym.error.UnregisteredEnv, match=r"did you mean 'steel_envs/CartpoleBalance-v0'\?"):
        steel_envs.task_class("steel_envs/CartpoleBalanse-v0")
    with pytest.raises(TypeError, match="vector_cls: expected a NewtonVectorEnv subclass"):
        steel_envs.register_task("steel_envs_test/Bad-v0", dict)
    with pytest.raises(ValueError, match="already registered"):
        steel_envs.register_task(ANT, steel_envs.task_class(CARTPOLE))


def test_the_manifest_read_from_source_matches_the_task_classes_and_the_facade_its_modules():
    """``import steel_envs`` registers the shipped IDs from the tasks' source (no task module loads): each entry's
    module, class, single-world adapter and time limit are those of the imported class, and Gymnasium's spec agrees;
    each name of the top-level facade is the object its defining module holds."""
    from steel_envs.registration import shipped_tasks

    assert tuple(shipped_tasks()) == steel_envs.ENV_IDS and len(steel_envs.ENV_IDS) >= 8
    for env_id, shipped in shipped_tasks().items():
        cls = steel_envs.task_class(env_id)
        module = importlib.import_module(shipped.module)
        assert (cls.__module__, cls.__name__) == (shipped.module, shipped.vector_class)
        assert cls.default_max_episode_steps == shipped.max_episode_steps == gym.spec(env_id).max_episode_steps
        assert getattr(module, shipped.single_class).vector_cls is cls
    for name in steel_envs.__all__:
        value = getattr(steel_envs, name)
        defining = importlib.import_module(getattr(value, "__module__", None) or "steel_envs.registration")
        assert getattr(defining, name) is value, name


def test_reward_weights_by_term_name_equal_the_config_fields():
    """``reward_weights={"ctrl": w}`` sets the same config field as ``ctrl_cost_weight=w``: bitwise the same rewards;
    a weight of 0 removes the term (its info entry is 0) and the reward is the sum of the others."""
    by_name = make(ANT, 3, seed=4, reward_weights={"ctrl": 0.25, "survive": 0.0})
    by_field = make(ANT, 3, seed=4, ctrl_cost_weight=0.25, healthy_reward=0.0)
    assert by_name.reward_weights == by_field.reward_weights
    assert by_name.reward_weights["ctrl"] == 0.25 and by_name.reward_weights["forward"] == 1.0
    for actions in random_actions(by_name, 10):
        _, ra, _, _, ia = by_name.step(actions)
        rb = by_field.step(actions)[1]
        assert ra.numpy().tobytes() == rb.numpy().tobytes()
        assert not ia["reward_survive"].any()
        # Gymnasium Ant-v5: ctrl_cost = ctrl_cost_weight * sum(action**2), subtracted.
        expected = -np.float32(0.25) * (actions.clamp(-1, 1).numpy() ** 2).sum(axis=1, dtype=np.float32)
        np.testing.assert_allclose(ia["reward_ctrl"].numpy(), expected, rtol=1e-6)


def test_reward_weights_are_checked():
    with pytest.raises(ValueError, match="no reward term 'speed'"):
        make(ANT, 1, reward_weights={"speed": 1.0})
    with pytest.raises(ValueError, match="the same weight given twice"):
        make(ANT, 1, reward_weights={"ctrl": 1.0}, ctrl_cost_weight=2.0)
    with pytest.raises(TypeError, match="reward_weights: expected a mapping"):
        make(ANT, 1, reward_weights=[("ctrl", 1.0)])
    with pytest.raises(ValueError, match="ctrl_cost_weight"):
        make(ANT, 1, reward_weights={"ctrl": float("nan")})


def test_termination_terms_are_reported_by_name():
    """CartpoleBalance's two terms: info['pole_fell'] / info['cart_off_rail'] equal the conditions computed from the
    state the step ended in, they are the episode's end causes, and a term ends the episode as a termination."""
    env = make(CARTPOLE, 4, seed=2, autoreset_mode="Disabled")
    assert [t.name for t in env.terminations] == ["pole_fell", "cart_off_rail"]
    saw_end = False
    for actions in random_actions(env, 60, seed=3):
        obs, _, terminated, truncated, info = env.step(actions)
        x, theta = obs[:, 0].numpy(), obs[:, 2].numpy()
        np.testing.assert_array_equal(info["pole_fell"].numpy(), np.abs(theta) > np.float32(0.2))
        np.testing.assert_array_equal(info["cart_off_rail"].numpy(), np.abs(x) > np.float32(2.4))
        assert torch.equal(terminated, info["pole_fell"] | info["cart_off_rail"]) and not truncated.any()
        ended = info["_episode"].numpy()
        if ended.any():
            saw_end = True
            assert torch.equal(info["episode"]["pole_fell"][ended], info["pole_fell"][ended])
            env.reset(options={"reset_mask": ended})
            assert not info["pole_fell"][ended].any()  # a reset clears the flags of its worlds
    assert saw_end
