"""PandaReach-v0: the action map against the MJCF's joint ranges, Isaac Lab's reach terms and the success rule against
formulas computed here (numpy, SciPy) on the hand's simulated pose, and the target's draws."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import torch
from conftest import make, random_actions
from scipy.spatial.transform import Rotation

from steel_envs.assets import PANDA

REACH = "steel_envs/PandaReach-v0"
HAND = 8  # panda.xml's bodies in order: link0 .. link7, hand, fingers
HOME_HAND = (0.5545, 0.0, 0.6245)
"""The hand's position at the home pose [m] (the keyframe's forward kinematics, measured)."""
HOME_YAW = -math.pi / 2
"""The target yaw whose orientation is the hand's at home (the hand's x-y-z Euler angles there: pi, 0, pi/2)."""


def _ranges() -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper limits of joint1 .. joint7 from panda.xml (the ``panda`` class default, then each joint's)."""
    root = ET.parse(PANDA.path).getroot()
    default = next(d for d in root.iter("default") if d.get("class") == "panda").find("joint").get("range")
    joints = {j.get("name"): j.get("range", default) for j in root.iter("joint") if j.get("name")}
    ranges = np.array([[float(x) for x in joints[f"joint{i}"].split()] for i in range(1, 8)])
    return ranges[:, 0], ranges[:, 1]


@pytest.mark.parametrize("a", [0.3, -0.3])
def test_an_action_held_brings_each_joint_to_its_share_of_the_range(a: float) -> None:
    """Action ``a`` on every joint targets ``home + a (upper - home)`` for a > 0, ``home + a (home - lower)`` below,
    with the ranges read from the MJCF; after 2 s the PD drives hold every joint within 0.02 rad of it (gravity
    against kp >= 2000 N m/rad)."""
    lower, upper = _ranges()
    home = PANDA.home[:7].astype(np.float64)
    target = home + a * (upper - home) if a > 0 else home + a * (home - lower)
    env = make(REACH, 2, seed=1)
    env.reset(seed=1)
    for _ in range(60):
        obs = env.step(torch.full((2, 7), a))[0]
    measured = obs[:, :7].numpy() + home
    np.testing.assert_allclose(measured, np.broadcast_to(target, measured.shape), atol=0.02)
    env.close()


def _hand_error(env, obs: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """The hand's distance [m] and rotation angle [rad] to the observed target, from the simulated body poses."""
    hand = env.state_0.body_q.numpy().reshape(env.num_envs, -1, 7)[:, HAND]
    target = obs[:, 18:25].numpy().astype(np.float64)
    distance = np.linalg.norm(hand[:, :3] - target[:, :3], axis=1)
    angle = (Rotation.from_quat(target[:, 3:]) * Rotation.from_quat(hand[:, 3:]).inv()).magnitude()
    return distance, angle


@pytest.mark.parametrize("offset", [0.0, 0.05])
def test_terms_and_success_follow_the_hand_and_the_target(offset: float) -> None:
    """With every target drawn at the hand's home pose (+ ``offset`` in x), each step's position, fine-position and
    orientation terms are Isaac Lab's formulas of the hand's distance and rotation to the target times their
    weights, and ``info["success"]`` is "within 2 cm and 0.2 rad"; at the home pose itself it holds, 5 cm away it
    does not."""
    x = HOME_HAND[0] + offset
    env = make(
        REACH,
        3,
        seed=2,
        target_x=(x, x),
        target_y=(HOME_HAND[1],) * 2,
        target_z=(HOME_HAND[2],) * 2,
        target_yaw=(HOME_YAW, HOME_YAW),
        joint_noise=0.0,
    )
    c = env.config
    obs = env.reset(seed=2)[0]
    actions = [torch.zeros(3, 7)] * 5 + [a * 0.05 for a in random_actions(env, 10)]
    for k, a in enumerate(actions):
        obs, _, _, _, info = env.step(a)
        distance, angle = _hand_error(env, obs)
        np.testing.assert_allclose(info["reward_position_tracking"].numpy(), c.position_weight * distance, atol=1e-6)
        fine = c.position_fine_weight * (1.0 - np.tanh(distance / c.position_fine_std))
        np.testing.assert_allclose(info["reward_position_tracking_fine"].numpy(), fine, atol=1e-6)
        np.testing.assert_allclose(info["reward_orientation_tracking"].numpy(), c.orientation_weight * angle, atol=2e-5)
        success = (distance <= c.success_position) & (angle <= c.success_orientation)
        np.testing.assert_array_equal(info["success"].numpy(), success)
        if k < 5:  # held at home
            assert success.all() if offset == 0.0 else not success.any()
    env.close()


def test_targets_are_drawn_in_their_ranges_pointing_down_and_redrawn_every_4_s() -> None:
    """The target's position lies in Isaac Lab's ranges, its orientation is the hand pointing down (its z axis along
    -z) at some yaw, and it changes at step 120 (4 s of 1/30 s) of an episode and at no other step before."""
    env = make(REACH, 4, seed=3)
    obs = env.reset(seed=3)[0]
    c, seen = env.config, [obs[:, 18:25].clone()]
    for _ in range(121):
        seen.append(env.step(torch.zeros(4, 7))[0][:, 18:25].clone())
    targets = torch.stack(seen).numpy().astype(np.float64)  # (122, 4, 7): the target after reset, then per step
    changed = np.abs(np.diff(targets, axis=0)).max(axis=(1, 2)) > 0
    assert np.flatnonzero(changed).tolist() == [119]  # the step that ends 120 steps of the episode
    for low, high, column in ((*c.target_x, 0), (*c.target_y, 1), (*c.target_z, 2)):
        assert (targets[..., column] >= low).all() and (targets[..., column] <= high).all()
    z_axis = Rotation.from_quat(targets[..., 3:].reshape(-1, 4)).apply([0.0, 0.0, 1.0])
    np.testing.assert_allclose(z_axis, np.broadcast_to([0.0, 0.0, -1.0], z_axis.shape), atol=1e-5)
    env.close()


def _hand_pose(env) -> np.ndarray:
    return env.state_0.body_q.numpy().reshape(env.num_envs, -1, 7)[:, HAND].copy()


def test_ee_delta_pose_actions_move_and_turn_the_hand_as_commanded_through_newton_ik() -> None:
    """``action_mode="ee_delta_pose"``: 6 actions; held for 1 s (30 steps of 1 cm and 0.02 rad), +y moves the hand
    along +y by at least half the goal's 0.3 m, off-axis by at most a tenth of that; a turn about z turns the hand
    about z likewise; zero actions hold the hand within 1 cm and 0.02 rad of its start. (Along +x the arm stretches
    out and its shoulder and elbow drives reach their 87 N m against gravity: the hand lags and sinks.)"""
    env = make(
        REACH, 3, seed=5, action_mode="ee_delta_pose", ee_delta_position=0.01, ee_delta_rotation=0.02, joint_noise=0.0
    )
    assert env.action_dim == 6 and env.single_observation_space.shape == (31,)
    env.reset(seed=5)
    start = _hand_pose(env)
    actions = torch.zeros(3, 6)
    actions[0, 1], actions[1, 5] = 1.0, 1.0
    for _ in range(30):
        env.step(actions)
    end = _hand_pose(env)
    move = end[:, :3] - start[:, :3]
    turn = (Rotation.from_quat(end[:, 3:]) * Rotation.from_quat(start[:, 3:]).inv()).as_rotvec()
    assert move[0, 1] >= 0.15 and np.abs(move[0, [0, 2]]).max() <= 0.1 * move[0, 1], move[0]
    assert turn[1, 2] >= 0.3 and np.abs(turn[1, :2]).max() <= 0.1 * turn[1, 2], turn[1]
    assert np.abs(move[2]).max() <= 0.01 and np.abs(turn[2]).max() <= 0.02, (move[2], turn[2])
    env.close()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"action_mode": "ee_pose"}, "action_mode: expected one of"),
        ({"ik_damping": 0.0}, "ik_damping"),
        ({"ee_delta_position": -0.01}, "ee_delta_position"),
    ],
)
def test_a_bad_action_mode_or_ik_setting_is_one_line(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message) as raised:
        make(REACH, 1, **kwargs)
    assert "\n" not in str(raised.value)
