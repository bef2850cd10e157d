"""PandaClothLift-v0: the Panda on SolverVBD holds together and pinches a cloth corner up; the terms and the success
rule against formulas computed here from the simulated particles and bodies; the cloth's draws at reset; bad
settings."""

from __future__ import annotations

import math

import newton
import numpy as np
import pytest
import torch
from conftest import first_episodes, make
from scipy.spatial.transform import Rotation
from steel_envs.tasks import panda_cloth_lift

CLOTH = "steel_envs/PandaClothLift-v0"
HAND = 8
ARM_BODIES = 11


def _joint_drift(env) -> float:
    """The largest distance [m] of a body from where the measured joint angles put it (forward kinematics of the
    coordinates ``newton.eval_ik`` reads off the bodies): how far SolverVBD's joints came apart."""
    m = env.model
    state = m.state()
    newton.eval_fk(m, env.state_0.joint_q, env.state_0.joint_qd, state)
    placed = state.body_q.numpy()[:, :3]
    actual = env.state_0.body_q.numpy()[:, :3]
    return float(np.abs(placed - actual).max())


def test_scripted_grasp_lifts_the_cloth_and_every_term_follows_the_particles() -> None:
    """Two worlds of the scripted grasp (one lifting the cloth clear, the reward terms each the formula of the
    corner's, the lowest particle's and the tool centre point's positions, computed here), the reward their sum, the
    success rule "lifted and clear for 10 steps in a row" counted here, and the arm's joints within 5 mm of where
    its angles put it at every step (the issue's bar for driving the arm as an AVBD articulation)."""
    env = make(CLOTH, 2, seed=3)
    c = env.config
    obs = env.reset(seed=3)[0]
    held = np.zeros(2, np.int64)
    drift = 0.0
    for _ in range(130):
        obs, reward, _, _, info = env.step(panda_cloth_lift.scripted_policy(obs))
        particles = env.state_0.particle_q.numpy().reshape(2, -1, 3).astype(np.float64)
        hand = env.state_0.body_q.numpy().reshape(2, -1, 7)[:, HAND].astype(np.float64)
        tcp = hand[:, :3] + Rotation.from_quat(hand[:, 3:]).apply([0.0, 0.0, 0.1034])
        corner, lowest = particles[:, 0], particles[:, :, 2].min(axis=1)
        expected = {
            "reaching_corner": c.reach_weight * (1.0 - np.tanh(np.linalg.norm(corner - tcp, axis=1) / 0.1)),
            "corner_distance": c.distance_weight * np.linalg.norm(corner - tcp, axis=1),
            "corner_height": c.lift_weight * np.clip(corner[:, 2] / c.lift_height, 0.0, 1.0),
            "cloth_clearance": c.clear_weight * np.clip(lowest / c.clearance, 0.0, 1.0),
        }
        for name, value in expected.items():
            np.testing.assert_allclose(info[f"reward_{name}"].numpy(), value, atol=2e-6, err_msg=name)
        torch.testing.assert_close(reward, sum(info[k] for k in info if k.startswith("reward_")), atol=1e-5, rtol=0)
        up = (corner[:, 2] >= c.lift_height) & (lowest >= c.clearance)
        held = np.where(up, held + 1, 0)
        np.testing.assert_array_equal(info["success"].numpy(), held >= c.hold_steps)
        np.testing.assert_allclose(obs[:, 21:24].numpy(), corner, atol=1e-6)
        np.testing.assert_allclose(obs[:, 36].numpy(), lowest, atol=1e-6)
        drift = max(drift, _joint_drift(env))
    assert held.max() >= c.hold_steps, "the scripted grasp lifted the cloth clear in one world at least"
    assert drift <= 0.005, drift
    env.close()


def test_each_reset_lays_the_cloth_flat_in_its_ranges_turned_about_its_centre() -> None:
    """Each world's cloth at reset is the built grid moved rigidly: pairwise distances kept, flat on the table at the
    particle radius, its centre within ``cloth_x`` x ``cloth_y``, turned about z; the worlds differ."""
    env = make(CLOTH, 8, seed=5)
    c = env.config
    env.reset(seed=5)
    p = env.state_0.particle_q.numpy().reshape(8, -1, 3).astype(np.float64)
    built = env.model.particle_q.numpy().reshape(8, -1, 3)[0].astype(np.float64)
    centre = p.mean(axis=1)
    assert (centre[:, 0] >= c.cloth_x[0] - 1e-6).all() and (centre[:, 0] <= c.cloth_x[1] + 1e-6).all()
    assert (centre[:, 1] >= c.cloth_y[0] - 1e-6).all() and (centre[:, 1] <= c.cloth_y[1] + 1e-6).all()
    np.testing.assert_allclose(p[:, :, 2], 0.005, atol=1e-6)
    d_built = np.linalg.norm(built[:, None] - built[None], axis=-1)
    for w in range(8):
        np.testing.assert_allclose(np.linalg.norm(p[w][:, None] - p[w][None], axis=-1), d_built, atol=1e-5)
    side = p[:, 8, :2] - p[:, 0, :2]  # the grid's first row, along the cloth's x
    yaw = np.arctan2(side[:, 1], side[:, 0])
    assert np.ptp(yaw) > 1.0 and np.abs(yaw).max() <= math.pi
    env.close()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"cloth_x": (0.7, 0.9)}, "cloth_x: expected the cloth"),
        ({"cloth_x": (0.6, 0.45)}, "cloth_x"),
        ({"hold_steps": 0}, "hold_steps"),
    ],
)
def test_bad_settings_are_one_line_naming_the_field(kwargs, match) -> None:
    with pytest.raises(ValueError, match=match) as err:
        make(CLOTH, 1, **kwargs)
    assert "\n" not in str(err.value)


@pytest.mark.slow
def test_panda_cloth_lift_scripted_policy_succeeds_in_at_least_13_of_16_episodes() -> None:
    """The scripted grasp: lifted and clear at the last step of 16 episodes (the issue's bar; about 4 minutes on a
    2-core CPU, so outside the default run: ``pytest -m slow``)."""
    episodes = first_episodes(CLOTH, panda_cloth_lift.scripted_policy)
    assert (episodes["l"] == 150).all()
    assert episodes["success"].sum() >= 13, episodes["success"]
