"""Domain randomization at reset, pushes, observation noise and action delay (all off by default)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import ANT, CARTPOLE, assert_world_bit_identical, make, random_actions

RANGES = {"randomize_mass_scale": (0.5, 1.5), "randomize_friction_scale": (0.2, 2.0)}


def _scales(env) -> tuple[np.ndarray, np.ndarray]:
    m = env.model
    mass = m.body_mass.numpy().reshape(env.num_envs, -1) / env.randomizer.nominal["mass"].numpy().reshape(
        env.num_envs, -1
    )
    sw = m.shape_world.numpy()
    mu = m.shape_material_mu.numpy()[sw >= 0].reshape(env.num_envs, -1)
    mu0 = env.randomizer.nominal["mu"].numpy()[sw >= 0].reshape(env.num_envs, -1)
    return mass, mu / mu0


def test_reset_randomization_is_per_world_seeded_and_masked():
    env = make(ANT, 4, seed=3, autoreset_mode="Disabled", **RANGES)
    mass, mu = _scales(env)
    # One factor per world, shared by all its bodies / shapes, inside the range, different between worlds.
    assert np.allclose(mass, mass[:, :1], rtol=1e-5) and np.allclose(mu, mu[:, :1], rtol=1e-5)
    assert ((mass >= 0.5) & (mass <= 1.5)).all() and ((mu >= 0.2) & (mu <= 2.0)).all()
    assert len(set(np.round(mass[:, 0], 6))) == 4
    twin = make(ANT, 4, seed=3, autoreset_mode="Disabled", **RANGES)
    assert np.array_equal(_scales(twin)[0], mass), "same seed, same draws"
    for a in random_actions(env, 5):
        env.step(a)
        twin.step(a)
    before = _scales(env)
    env.reset(options={"reset_mask": np.array([False, True, False, False])})
    after = _scales(env)
    for i in (0, 1):
        assert np.array_equal(np.delete(after[i], 1, axis=0), np.delete(before[i], 1, axis=0))
        assert not np.array_equal(after[i][1], before[i][1])
    for a in random_actions(env, 5, seed=1):
        env.step(a)
        twin.step(a)
    for w in (0, 2, 3):
        assert_world_bit_identical(env, twin, w)


def test_randomized_mass_is_what_the_ground_carries():
    env = make(ANT, 3, seed=0, reset_noise_scale=0.0, randomize_mass_scale=(0.5, 2.0))
    for _ in range(50):
        env.step(torch.zeros(3, 8))
    fz = env.body_contact_wrench.numpy().reshape(3, -1, 6)[:, :, 2].sum(axis=1)
    np.testing.assert_allclose(fz, env.model.body_mass.numpy().reshape(3, -1).sum(axis=1) * 9.81, rtol=0.05)


def test_pushes_change_the_base_velocity_and_nothing_else():
    pushed = make(ANT, 2, seed=1, push_interval=0.05, push_velocity=0.5, autoreset_mode="Disabled")
    calm = make(ANT, 2, seed=1, autoreset_mode="Disabled")
    assert torch.equal(pushed.reset(seed=1)[0], calm.reset(seed=1)[0]), "pushes draw from their own stream"
    zeros = torch.zeros(2, 8)
    pushed.step(zeros)
    calm.step(zeros)
    assert torch.equal(pushed._obs_t, calm._obs_t), "no push at the first step of an episode"
    v0 = pushed.state_0.joint_qd.numpy().reshape(2, -1)[:, :2].copy()
    c0 = calm.state_0.joint_qd.numpy().reshape(2, -1)[:, :2].copy()
    assert np.array_equal(v0, c0)
    pushed.step(zeros)
    calm.step(zeros)
    assert not torch.equal(pushed._obs_t, calm._obs_t)
    with pytest.raises(ValueError, match="push_interval: CartpoleBalanceEnv has no floating base"):
        make(CARTPOLE, 1, push_interval=0.1, push_velocity=1.0)


def test_observation_noise_has_its_std_and_leaves_the_physics_alone():
    noisy = make(CARTPOLE, 8, seed=2, obs_noise_std=0.1, autoreset_mode="Disabled", pole_angle_limit=3.5)
    clean = make(CARTPOLE, 8, seed=2, autoreset_mode="Disabled", pole_angle_limit=3.5)
    diffs = []
    for a in random_actions(noisy, 20):
        diffs.append((noisy.step(a)[0] - clean.step(a)[0]).numpy())
        assert noisy.state_0.joint_q.numpy().tobytes() == clean.state_0.joint_q.numpy().tobytes()
    assert np.std(diffs) == pytest.approx(0.1, rel=0.1)


def test_action_delay_applies_the_action_of_k_steps_ago():
    delayed = make(CARTPOLE, 3, seed=4, action_delay_steps=2, pole_angle_limit=3.5)
    direct = make(CARTPOLE, 3, seed=4, pole_angle_limit=3.5)
    actions = random_actions(delayed, 12)
    shifted = [torch.zeros(3, 1)] * 2 + actions[:-2]
    for a, b in zip(actions, shifted, strict=True):
        assert torch.equal(delayed.step(a)[0], direct.step(b)[0])


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"randomize_mass_scale": (0.0, 1.0)}, "randomize_mass_scale: expected"),
        ({"randomize_friction_scale": (2.0, 1.0)}, "randomize_friction_scale"),
        ({"randomize_mass_scale": 1.5}, "randomize_mass_scale"),
        ({"action_delay_steps": 1.5}, "action_delay_steps"),
        ({"obs_noise_std": -0.1}, "obs_noise_std"),
    ],
)
def test_bad_randomization_settings_raise(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        make(ANT, 1, **kwargs)


def test_drive_gain_randomization_scales_ke_and_kd_of_the_selected_world_only():
    env = make("steel_envs/QuadrupedVelocity-v0", 3, seed=0, randomize_drive_gain_scale=(0.5, 2.0))
    ke = (
        env.model.joint_target_ke.numpy().reshape(3, -1)[:, 6:]
        / env.randomizer.nominal["ke"].numpy().reshape(3, -1)[:, 6:]
    )
    kd = (
        env.model.joint_target_kd.numpy().reshape(3, -1)[:, 6:]
        / env.randomizer.nominal["kd"].numpy().reshape(3, -1)[:, 6:]
    )
    np.testing.assert_allclose(ke, kd, rtol=1e-6)
    assert np.allclose(ke, ke[:, :1]) and ((ke >= 0.5) & (ke <= 2.0)).all() and len(set(ke[:, 0].round(6))) == 3
    before = env.model.joint_target_ke.numpy().reshape(3, -1).copy()
    env.reset(options={"reset_mask": np.array([True, False, False])})
    after = env.model.joint_target_ke.numpy().reshape(3, -1)
    assert after[1:].tobytes() == before[1:].tobytes() and not np.array_equal(after[0], before[0])


def test_observation_noise_per_entry():
    std = (0.0, 0.2, 0.0, 0.0)  # noise on the cart velocity only
    noisy = make(CARTPOLE, 8, seed=2, obs_noise_std=std, autoreset_mode="Disabled", pole_angle_limit=3.5)
    clean = make(CARTPOLE, 8, seed=2, autoreset_mode="Disabled", pole_angle_limit=3.5)
    diffs = np.stack([(noisy.step(a)[0] - clean.step(a)[0]).numpy() for a in random_actions(noisy, 30)])
    assert (diffs[..., [0, 2, 3]] == 0).all()
    assert diffs[..., 1].std() == pytest.approx(0.2, rel=0.15)
    with pytest.raises(ValueError, match="obs_noise_std: expected one value or 4"):
        make(CARTPOLE, 1, obs_noise_std=(0.1, 0.1))
    with pytest.raises(ValueError, match="obs_noise_std"):
        make(CARTPOLE, 1, obs_noise_std=(0.1, -0.1, 0.0, 0.0))
