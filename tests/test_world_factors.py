"""Per-world factors change the effective physical quantity by the stated factor, measured from the motion.

Friction: a cube sliding on the ground decelerates at mu_eff * g; SolverSteel combines a pair's coefficients by
their mean, so the factor holds only if the world's ground is scaled with the cube (one ground plane per world).
Mass and drive gains: the gantry's implicit velocity drive from rest reaches v_n = v_t (1 - r^n) after n substeps
with r = m / (m + kd dt), which gives the effective mass and damping gain of the world.
"""

from __future__ import annotations

import newton
import numpy as np
import pytest
import torch
from conftest import make

PUSH = "steel_envs/PushCube-v0"
N = 4
TOLERANCE = 0.05


def _env(**kwargs):
    return make(PUSH, N, seed=0, autoreset_mode="Disabled", max_episode_steps=10**6, **kwargs)


def _gantry_x_speed(env) -> np.ndarray:
    return env.state_0.joint_qd.numpy().reshape(N, -1)[:, 0]


def _drive_ratio(env) -> np.ndarray:
    """r = m / (m + kd dt) per world, from the x carriage's speed after one control step at full x action."""
    env.step(torch.tensor([[1.0, 0.0]] * N))
    target = env.config.max_finger_speed
    return (1.0 - _gantry_x_speed(env) / target) ** (1.0 / env.decimation)


def _effective_mass(env, r: np.ndarray) -> np.ndarray:
    """The gantry's effective mass m [kg] at the nominal damping gain, from r = m / (m + kd dt)."""
    return env.config.drive_damping * env.physics_dt * r / (1.0 - r)


def test_friction_scale_scales_the_sliding_deceleration():
    # Nominal mu_eff = mean(cube 0.6, ground 1.0) = 0.8; factors keep mu_eff < 1, where a sliding cube of equal
    # width and height does not tip.
    scales = np.array([1.0, 0.5, 0.25, 1.15])
    env = _env()
    env.set_world_parameters(friction_scale=scales)
    qd = env.state_0.joint_qd.numpy().reshape(N, -1)
    qd[:, 2] = 4.0  # the cube slides along +x at 4 m/s, away from the finger
    env.state_0.joint_qd.assign(qd.ravel())
    speeds = []
    for _ in range(4):
        env.step(torch.zeros(N, 2))
        speeds.append(env.state_0.joint_qd.numpy().reshape(N, -1)[:, 2].copy())
    deceleration = (speeds[1] - speeds[3]) / (2 * env.control_dt)
    assert (speeds[3] > 0.5).all(), "a cube stopped: the measurement needs sliding cubes"
    np.testing.assert_allclose(deceleration / deceleration[0], scales, rtol=TOLERANCE)
    np.testing.assert_allclose(deceleration[0], 0.8 * 9.81, rtol=TOLERANCE)


def test_mass_scale_scales_the_effective_mass():
    scales = np.array([1.0, 0.5, 2.0, 1.3])
    env = _env()
    env.set_world_parameters(mass_scale=scales)
    mass = _effective_mass(env, _drive_ratio(env))
    np.testing.assert_allclose(mass / mass[0], scales, rtol=TOLERANCE)


def test_drive_gain_scale_scales_the_effective_damping_gain():
    nominal_env = _env()
    mass = _effective_mass(nominal_env, _drive_ratio(nominal_env))[0]
    env = _env(randomize_drive_gain_scale=(0.5, 2.0))
    drawn = env.randomizer.drive_gain_scale.numpy()
    assert np.ptp(drawn) > 0.05, "the draw should spread the factors"
    r = _drive_ratio(env)
    gain = mass * (1.0 / r - 1.0) / env.physics_dt
    np.testing.assert_allclose(gain / env.config.drive_damping, drawn, rtol=TOLERANCE)


@pytest.mark.parametrize("env_id", ["steel_envs/AntRun-v0", PUSH])
def test_every_world_has_its_own_ground(env_id):
    """A friction factor reaches the ground a world touches: each world holds one ground plane."""
    env = make(env_id, 3)
    planes = env.model.shape_type.numpy() == int(newton.GeoType.PLANE)
    assert np.array_equal(np.sort(env.model.shape_world.numpy()[planes]), np.arange(3))
