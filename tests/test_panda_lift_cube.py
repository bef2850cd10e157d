"""PandaLiftCube-v0: Isaac Lab's lift terms and the success rule against formulas computed here (numpy, SciPy) on the
simulated poses, the cube's per-world draws against the model's arrays and a solid cube's inertia, the gripper's
binary action, and bad settings."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import make
from scipy.spatial.transform import Rotation
from steel_envs.tasks import panda_lift_cube

LIFT = "steel_envs/PandaLiftCube-v0"
HAND, CUBE = 8, 11  # the world's bodies: link0 .. link7, hand, fingers, then the cube


def _bodies(env) -> np.ndarray:
    return env.state_0.body_q.numpy().reshape(env.num_envs, -1, 7).astype(np.float64)


def _cube_shapes(env) -> np.ndarray:
    labels = env.model.shape_label
    return np.array([k for k, label in enumerate(labels) if label.rsplit("/", 1)[-1] == "cube"], dtype=np.int64)


def test_terms_and_success_follow_the_cube_the_fingertips_and_the_goal() -> None:
    """Every step of the scripted grasp (cube lifted in some worlds, not in others): each term is Isaac Lab's formula
    of the cube's, the tool centre point's (0.1034 m along the hand's z) and the goal's positions times its weight,
    the reward their sum, and ``info["success"]`` "the cube within 2 cm of the goal"."""
    env = make(LIFT, 4, seed=4)
    c = env.config
    obs = env.reset(seed=4)[0]
    lifted_seen = 0
    for _ in range(45):
        goal = obs[:, 21:24].numpy().astype(np.float64)
        obs, reward, _, _, info = env.step(panda_lift_cube.scripted_policy(obs))
        bodies = _bodies(env)
        cube, hand = bodies[:, CUBE, :3], bodies[:, HAND]
        tcp = hand[:, :3] + Rotation.from_quat(hand[:, 3:]).apply([0.0, 0.0, 0.1034])
        lifted = (cube[:, 2] > c.lift_height).astype(np.float64)
        to_goal = np.linalg.norm(cube - goal, axis=1)
        expected = {
            "reaching_object": c.reach_weight * (1.0 - np.tanh(np.linalg.norm(cube - tcp, axis=1) / 0.1)),
            "lifting_object": c.lift_weight * lifted,
            "object_goal_tracking": c.goal_weight * lifted * (1.0 - np.tanh(to_goal / 0.3)),
            "object_goal_tracking_fine_grained": c.goal_fine_weight * lifted * (1.0 - np.tanh(to_goal / 0.05)),
        }
        for name, value in expected.items():
            np.testing.assert_allclose(info[f"reward_{name}"].numpy(), value, atol=2e-6, err_msg=name)
        terms = sum(info[k] for k in info if k.startswith("reward_"))
        torch.testing.assert_close(reward, terms, atol=1e-5, rtol=1e-5)
        np.testing.assert_array_equal(info["success"].numpy(), to_goal <= c.success_distance)
        np.testing.assert_allclose(obs[:, 18:21].numpy(), cube, atol=1e-6)
        lifted_seen += int(lifted.sum())
    assert lifted_seen > 0  # the lift terms were exercised
    env.close()


def test_each_world_draws_its_cube_in_its_ranges_resting_on_the_table() -> None:
    """At reset each world's cube gets an edge, a mass and a friction coefficient in their ranges, written into the
    model (half extents, m a^2 / 6 inertia, mu), different per world and the same for the same seed; it rests
    unrotated on the table at a drawn x, y with its centre at half its edge, and stays there under zero actions."""
    c = panda_lift_cube.PandaLiftCubeConfig()
    runs = []
    for _ in range(2):
        env = make(LIFT, 8, seed=7)
        obs = env.reset(seed=7)[0]
        shapes, m = _cube_shapes(env), env.model
        bodies = np.arange(8) * (m.body_count // 8) + CUBE
        half = m.shape_scale.numpy()[shapes]
        mass, mu = m.body_mass.numpy()[bodies], m.shape_material_mu.numpy()[shapes]
        inertia = m.body_inertia.numpy()[bodies]
        np.testing.assert_allclose(half, half[:, :1].repeat(3, axis=1))
        edge = 2.0 * half[:, 0]
        assert (c.cube_size[0] <= edge).all() and (edge <= c.cube_size[1]).all()
        assert (c.cube_mass[0] <= mass).all() and (mass <= c.cube_mass[1]).all()
        assert (c.cube_friction[0] <= mu).all() and (mu <= c.cube_friction[1]).all()
        np.testing.assert_allclose(inertia, (mass * edge**2 / 6.0)[:, None, None] * np.eye(3), rtol=1e-5)
        assert len(np.unique(edge)) == 8 and len(np.unique(mass)) == 8
        start = _bodies(env)[:, CUBE]
        np.testing.assert_allclose(start[:, 2], half[:, 0], atol=1e-6)
        np.testing.assert_allclose(obs[:, 18:21].numpy(), start[:, :3], atol=1e-6)
        assert (c.cube_x[0] <= start[:, 0]).all() and (start[:, 0] <= c.cube_x[1]).all()
        assert (c.cube_y[0] <= start[:, 1]).all() and (start[:, 1] <= c.cube_y[1]).all()
        for _ in range(10):
            env.step(torch.zeros(8, 8))
        np.testing.assert_allclose(_bodies(env)[:, CUBE, :3], start[:, :3], atol=1e-3)
        runs.append((edge, mass, mu, start))
        env.close()
    for a, b in zip(*runs, strict=True):
        np.testing.assert_array_equal(a, b)


def test_the_gripper_action_opens_and_closes_both_fingers() -> None:
    """Action 7 >= 0 holds both fingers open at 0.04 m; below 0 closes both to 0 (no cube between them, up in the
    air) within 0.5 s, the fingers' 0.2 m/s limiting."""
    env = make(LIFT, 2, seed=1, joint_noise=0.0)
    env.reset(seed=1)
    actions = torch.zeros(2, 8)
    actions[0, 7], actions[1, 7] = 1.0, -1.0
    for _ in range(15):
        obs = env.step(actions)[0]
    fingers = obs[:, 7:9].numpy() + 0.04  # relative to the home opening
    np.testing.assert_allclose(fingers[0], [0.04, 0.04], atol=1e-3)
    np.testing.assert_allclose(fingers[1], [0.0, 0.0], atol=1e-3)
    env.close()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"cube_size": (0.05, 0.07)}, "cube_size: expected edges <= 0.06"),
        ({"cube_mass": (0.2, 0.1)}, "cube_mass: expected \\(low, high\\)"),
        ({"cube_friction": (0.0, 1.0)}, "cube_friction"),
        ({"goal_z": (0.25, float("inf"))}, "goal_z"),
        ({"lift_height": 0.02}, "lift_height: expected above the centre of the largest cube standing on an edge"),
        ({"lift_height": 0.3}, "lift_height: expected .* below the lowest goal"),
    ],
)
def test_a_bad_cube_range_is_one_line(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message) as raised:
        make(LIFT, 1, **kwargs)
    assert "\n" not in str(raised.value)


def test_ee_delta_pose_puts_the_gripper_after_the_six_hand_actions() -> None:
    """``action_mode="ee_delta_pose"``: 7 actions, the hand's 6 then the gripper; a closing gripper with the hand
    held closes both fingers while zero hand moves keep the hand within 1 cm of its start."""
    env = make(LIFT, 2, seed=2, action_mode="ee_delta_pose", joint_noise=0.0)
    assert env.action_dim == 7 and env.single_observation_space.shape == (31,)
    env.reset(seed=2)
    start = _bodies(env)[:, HAND, :3]
    actions = torch.zeros(2, 7)
    actions[:, 6] = torch.tensor([1.0, -1.0])
    for _ in range(15):
        obs = env.step(actions)[0]
    np.testing.assert_allclose(obs[:, 7:9].numpy() + 0.04, [[0.04, 0.04], [0.0, 0.0]], atol=1e-3)
    assert np.abs(_bodies(env)[:, HAND, :3] - start).max() <= 0.01
    env.close()
