"""AllegroReorient-v0: the in-hand terms, observations and success rule against formulas computed here (SciPy's
rotations, the URDF's limits read with ElementTree) on the simulated poses; the cube's per-world draws; goals drawn
anew on success, turning about the vertical in the ``z_rotation`` variant; a fallen cube ending the episode; bad
settings."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import torch
from conftest import make
from scipy.spatial.transform import Rotation
from steel_envs.tasks import allegro_reorient

from steel_envs.assets import ALLEGRO

ALLEGRO_ID = "steel_envs/AllegroReorient-v0"
CUBE, TIPS = 21, (5, 10, 15, 20)  # the world's bodies: palm, four fingers of four links and a tip, then the cube


def _bodies(env) -> np.ndarray:
    return env.state_0.body_q.numpy().reshape(env.num_envs, -1, 7).astype(np.float64)


def _urdf_limits() -> np.ndarray:
    joints = {j.get("name"): j for j in ET.parse(ALLEGRO.path).getroot().iter("joint")}
    return np.array([[float(joints[n].find("limit").get(k)) for k in ("lower", "upper")] for n in ALLEGRO.joints])


def _move_cube(env, w: int, axis: int, distance: float) -> None:
    """Move world ``w``'s cube by ``distance`` [m] along world ``axis`` (its free joint's coordinate and its body)."""
    n = env.num_envs
    q = env.state_0.joint_q.numpy().reshape(n, -1)
    q[w, 16 + axis] += distance  # the cube's free joint follows the hand's 16 coordinates
    env.state_0.joint_q.assign(q.reshape(-1))
    body_q = env.state_0.body_q.numpy().reshape(n, -1, 7)
    body_q[w, CUBE, axis] += distance
    env.state_0.body_q.assign(body_q.reshape(-1, 7))


def _angle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rotation angle [rad] between quaternions (x, y, z, w) a and b, per row."""
    return (Rotation.from_quat(a) * Rotation.from_quat(b).inv()).magnitude()


def test_terms_observations_and_success_follow_the_cube_and_the_goal() -> None:
    """Every step under random actions: each reward term is the recipe's formula of the cube's pose, its resting
    point and the goal, times its weight, the reward their sum; the observation blocks are the joint angles mapped
    from the URDF's ranges, the cube's pose and the fingertips relative to the resting point, the goal; and
    ``info["success"]`` is "rotation distance <= 0.1 rad"."""
    env = make(ALLEGRO_ID, 4, seed=3)
    c, layout = env.config, env.observation_layout
    limits = _urdf_limits()
    obs = env.reset(seed=3)[0]
    rest = _bodies(env)[:, CUBE, :3]
    gen = torch.Generator().manual_seed(0)
    for _ in range(20):
        goal = obs[:, layout["goal_rotation"]].numpy().astype(np.float64)
        actions = torch.rand(4, 16, generator=gen) * 2.0 - 1.0
        obs, reward, _, _, info = env.step(actions)
        bodies = _bodies(env)
        cube = bodies[:, CUBE]
        distance = _angle(cube[:, 3:], goal)
        expected = {
            "cube_distance": c.distance_weight * np.linalg.norm(cube[:, :3] - rest, axis=1),
            "rotation_tracking": c.rotation_weight / (distance + c.rotation_eps),
            "action_l2": c.action_weight * (actions.numpy().astype(np.float64) ** 2).sum(axis=1),
            "success_bonus": c.success_weight * (distance <= c.success_tolerance),
        }
        for name, value in expected.items():
            np.testing.assert_allclose(info[f"reward_{name}"].numpy(), value, rtol=2e-4, atol=2e-5, err_msg=name)
        torch.testing.assert_close(reward, sum(info[k] for k in info if k.startswith("reward_")), atol=1e-4, rtol=1e-5)
        np.testing.assert_array_equal(info["success"].numpy(), distance <= c.success_tolerance)
        q = env.state_0.joint_q.numpy().reshape(4, -1)[:, :16].astype(np.float64)
        unscaled = 2.0 * (q - limits[:, 0]) / (limits[:, 1] - limits[:, 0]) - 1.0
        np.testing.assert_allclose(obs[:, layout["joint_pos"]].numpy(), unscaled, atol=1e-5)
        np.testing.assert_allclose(obs[:, layout["cube_position"]].numpy(), cube[:, :3] - rest, atol=1e-6)
        np.testing.assert_allclose(obs[:, layout["cube_rotation"]].numpy(), cube[:, 3:], atol=1e-6)
        tips = bodies[:, TIPS, :3] - rest[:, None, :]
        np.testing.assert_allclose(obs[:, layout["fingertip_positions"]].numpy(), tips.reshape(4, 12), atol=1e-6)
        np.testing.assert_allclose(obs[:, layout["actions"]].numpy(), actions.numpy())
    env.close()


def test_each_world_draws_its_cube_on_a_face_above_the_palm_and_it_settles_there() -> None:
    """At reset each world's cube gets an edge, a mass and a friction coefficient in their ranges, written into the
    model (half extents, m a^2 / 6 inertia, mu), different per world and the same for the same seed; it starts on
    one of its faces (an axis of its frame vertical) above the palm's middle, free of any contact deeper than the
    limit, and settles on the hand under zero actions without falling."""
    c = allegro_reorient.AllegroReorientConfig()
    runs = []
    for _ in range(2):
        env = make(ALLEGRO_ID, 8, seed=5)
        env.reset(seed=5)
        m = env.model
        shapes = np.array([k for k, label in enumerate(m.shape_label) if label.rsplit("/", 1)[-1] == "cube"])
        bodies = np.arange(8) * (m.body_count // 8) + CUBE
        half = m.shape_scale.numpy()[shapes][:, 0]
        mass, mu = m.body_mass.numpy()[bodies], m.shape_material_mu.numpy()[shapes]
        edge = 2.0 * half
        assert (c.cube_size[0] <= edge).all() and (edge <= c.cube_size[1]).all()
        assert (c.cube_mass[0] <= mass).all() and (mass <= c.cube_mass[1]).all()
        assert (c.cube_friction[0] <= mu).all() and (mu <= c.cube_friction[1]).all()
        np.testing.assert_allclose(
            m.body_inertia.numpy()[bodies], (mass * edge**2 / 6.0)[:, None, None] * np.eye(3), rtol=1e-5
        )
        start = _bodies(env)[:, CUBE]
        vertical = np.abs(Rotation.from_quat(start[:, 3:]).as_matrix()[:, 2, :]).max(axis=1)
        np.testing.assert_allclose(vertical, 1.0, atol=1e-6)
        palm_x = -0.0475
        assert (np.abs(start[:, 0] - palm_x) <= c.cube_position_noise + 1e-6).all()
        assert (np.abs(start[:, 1]) <= c.cube_position_noise + 1e-6).all()
        for _ in range(15):
            _, _, terminated, truncated, info = env.step(torch.zeros(8, 16))
            assert not (terminated | truncated).any() and not info["penetration"].any()
        settled = _bodies(env)[:, CUBE, :3]
        assert np.abs(settled - start[:, :3]).max() < 0.02  # it dropped onto the hand and stayed
        runs.append((edge, mass, mu, start))
        env.close()
    for a, b in zip(*runs, strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_met_goal_is_counted_and_replaced_every_step() -> None:
    """With a tolerance of pi every orientation of a held cube meets its goal: each step pays the bonus, draws a new
    uniform goal (a unit quaternion, different from the last) and the episode's ``consecutive_successes`` is its
    length."""
    env = make(ALLEGRO_ID, 2, seed=2, success_tolerance=math.pi, max_episode_steps=6)
    layout = env.observation_layout
    obs = env.reset(seed=2)[0]
    goals = [obs[:, layout["goal_rotation"]].numpy().copy()]  # obs is a view of the env's buffer
    for _ in range(6):
        obs, _, _, truncated, info = env.step(torch.zeros(2, 16))
        assert info["success"].all()
        np.testing.assert_allclose(info["reward_success_bonus"].numpy(), env.config.success_weight)
        goals.append(obs[:, layout["goal_rotation"]].numpy().copy())
    assert truncated.all()
    np.testing.assert_array_equal(info["episode"]["consecutive_successes"].numpy(), [6.0, 6.0])
    goals = np.stack(goals)
    np.testing.assert_allclose(np.linalg.norm(goals, axis=2), 1.0, atol=1e-6)
    assert (_angle(goals[1:].reshape(-1, 4), goals[:-1].reshape(-1, 4)) > 1e-3).all()
    env.close()


def test_z_rotation_goals_turn_about_the_vertical() -> None:
    """``target="z_rotation"``: the first goal is the cube's start turned by ``z_rotation_step`` about the world's z;
    a world that meets its goal gets that goal turned by the step again, the others keep theirs."""
    step = math.pi / 4.0
    env = make(ALLEGRO_ID, 2, seed=1, target="z_rotation")
    layout = env.observation_layout
    obs = env.reset(seed=1)[0]
    start = _bodies(env)[:, CUBE, 3:]
    goal = obs[:, layout["goal_rotation"]].numpy().astype(np.float64)
    turn = Rotation.from_rotvec([0.0, 0.0, step])
    expected = (turn * Rotation.from_quat(start)).as_quat()
    np.testing.assert_allclose(_angle(goal, expected), 0.0, atol=1e-4)
    # A success in world 0 only, as the step's terms would flag it, then the task's goal update.
    env.term_state.success.assign(np.array([True, False]))
    env._post_rewards()
    after = env.term_state.goals.numpy().astype(np.float64)
    np.testing.assert_allclose(_angle(after[:1], (turn * Rotation.from_quat(goal[:1])).as_quat()), 0.0, atol=1e-4)
    np.testing.assert_allclose(after[1], goal[1], atol=1e-7)
    env.close()


def test_a_cube_away_from_the_hand_meets_no_goal() -> None:
    """A cube 6 cm above where it was placed (beyond ``hold_distance``, 5 cm; a toss) meets no goal even at a
    tolerance of pi, and pays no bonus."""
    env = make(ALLEGRO_ID, 2, seed=6, success_tolerance=math.pi, graph_capture=False)
    env.reset(seed=6)
    _move_cube(env, 0, axis=2, distance=0.06)
    _, _, _, _, info = env.step(torch.zeros(2, 16))
    np.testing.assert_array_equal(info["success"].numpy(), [False, True])
    np.testing.assert_array_equal(info["reward_success_bonus"].numpy(), [0.0, env.config.success_weight])
    env.close()


def test_a_cube_off_the_hand_ends_the_episode_as_dropped() -> None:
    """A cube moved 0.3 m from its resting point (beyond ``fall_distance``, 0.24 m) terminates its world's episode
    with ``dropped`` and counts one drop; the other world goes on."""
    env = make(ALLEGRO_ID, 2, seed=4, autoreset_mode="Disabled")
    env.reset(seed=4)
    _move_cube(env, 0, axis=0, distance=0.3)
    _, _, terminated, truncated, info = env.step(torch.zeros(2, 16))
    np.testing.assert_array_equal(terminated.numpy(), [True, False])
    np.testing.assert_array_equal(info["dropped"].numpy(), [True, False])
    assert info["_episode"][0] and info["episode"]["drops"][0] == 1.0
    assert not truncated.any()
    env.close()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"target": "spin"}, "target: expected one of"),
        ({"cube_size": (0.06, 0.08)}, "cube_size: expected edges <= 0.07"),
        ({"cube_mass": (0.2, 0.1)}, "cube_mass: expected \\(low, high\\)"),
        ({"target": "z_rotation", "success_tolerance": 1.0}, "success_tolerance: expected below z_rotation_step"),
        ({"fall_distance": 0.0}, "fall_distance"),
        ({"target": "z_rotation", "z_rotation_step": 0.0}, "z_rotation_step"),
        ({"success_tolerance": 4.0}, "success_tolerance"),
    ],
)
def test_a_bad_setting_is_one_line(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message) as raised:
        make(ALLEGRO_ID, 1, **kwargs)
    assert "\n" not in str(raised.value)
