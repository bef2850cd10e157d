"""Term functions: a task's reward, termination, observation and metric terms are declared once with their Warp
function; the core assembles them. Adding a reward term is one function and one line; a declaration that does not fit
its group is refused when the class is defined, naming the task, the term and what was expected."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import warp as wp
from conftest import random_actions
from pendulum_swingup import PendulumSwingupEnv

from steel_envs.spec import EpisodeMetric, ObservationBlock, RewardTerm, TerminationTerm, term


@term("|theta_dot|")
def _speed(s: Any, w: int) -> float:
    return wp.abs(s.joint_qd[s.dof_world_start[w]])


@wp.func
def _upright(s: Any, w: int) -> bool:
    return wp.cos(s.joint_q[s.coord_world_start[w]]) > 0.99


@wp.func
def _pair(s: Any, w: int) -> wp.vec2:
    return wp.vec2(1.0, 2.0)


def test_a_reward_term_is_one_function_and_one_line() -> None:
    """The function above and the one declaration below add a term: info['reward_speed'] is |theta_dot| read from
    the observation the step ended in, the reward is the float32 sum of the four terms in order, and the ended
    episodes' sum of the term is the sum of its per-step values."""
    declared = (*PendulumSwingupEnv.rewards, RewardTerm("speed", _speed))
    env = type("PendulumSpeed", (PendulumSwingupEnv,), {"rewards": declared})(
        num_envs=3, device="cpu", seed=0, max_episode_steps=20
    )
    assert env.reward_terms == ("angle", "velocity", "torque", "speed")
    sums = np.zeros(3, np.float64)
    for t, actions in enumerate(random_actions(env, 20, seed=1)):
        obs, reward, _, _, info = env.step(actions)
        ended_in = torch.where(info["_final_obs"][:, None], info["final_obs"], obs)
        np.testing.assert_allclose(info["reward_speed"].numpy(), ended_in[:, 2].abs().numpy(), rtol=1e-6)
        total = np.zeros(3, np.float32)
        for name in env.reward_terms:
            total = total + info[f"reward_{name}"].numpy()
        np.testing.assert_array_equal(reward.numpy(), total)
        sums += info["reward_speed"].numpy()
        if t == 19:  # the time limit ends every episode here
            assert info["_episode"].all()
            np.testing.assert_allclose(info["episode"]["reward_speed"].numpy(), sums, rtol=1e-5)
    env.close()


def _define(**declarations: Any) -> type:
    return type("PendulumProbe", (PendulumSwingupEnv,), declarations)


@pytest.mark.parametrize(
    ("declarations", "message"),
    [
        ({"rewards": (RewardTerm("up", _upright),)}, r"PendulumProbe.rewards: the function of 'up', _upright, must be"),
        ({"terminations": (TerminationTerm("fast", _speed),)}, r"PendulumProbe.terminations: .*'fast'.* -> bool"),
        ({"metrics": (EpisodeMetric("m", _upright, "sum", "1", "x"),)}, r"PendulumProbe.metrics: .*'m'.* -> float"),
        (
            {"observations": (ObservationBlock("pair", 3, _pair, "a pair", "1"),)},
            r"PendulumProbe.observations: the function of block 'pair' \(size 3\), _pair, must be",
        ),
        (
            {"rewards": (RewardTerm("speed", _speed), RewardTerm("speed", _speed))},
            "PendulumProbe.rewards: duplicate term names",
        ),
        (
            {"rewards": (RewardTerm("speed", _speed, weight="speed_weight"),)},
            "the weight of 'speed', 'speed_weight', is not a field of PendulumSwingupConfig",
        ),
        (
            {"terminations": (TerminationTerm("penetration", _upright),)},
            "names must be unique and not one of the core's info keys",
        ),
    ],
    ids=["reward-bool", "termination-float", "metric-bool", "block-size", "duplicate", "weight", "reserved"],
)
def test_a_bad_declaration_is_refused_at_class_definition(declarations: dict, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        _define(**declarations)


def test_a_term_needs_a_warp_function_and_a_task_its_term_state() -> None:
    with pytest.raises(TypeError, match=r"RewardTerm\('x'\): expected a term function"):
        RewardTerm("x", lambda s, w: 0.0)
    env_cls = _define(_setup_task=lambda self: None)
    with pytest.raises(TypeError, match=r"_setup_task must set self\.term_state"):
        env_cls(num_envs=1, device="cpu")
    with pytest.raises(TypeError, match=r"PendulumProbe\.rewards: expected at least one RewardTerm, got none"):
        _define(rewards=())(num_envs=1, device="cpu")  # an IndexError deep in the kernel assembly before


def test_group_kernels_are_shared_by_tasks_with_the_same_terms() -> None:
    """Two envs of one task launch the same compiled kernels; another list of terms gets its own."""
    a = PendulumSwingupEnv(num_envs=1, device="cpu")
    b = PendulumSwingupEnv(num_envs=2, device="cpu")
    declared = (*PendulumSwingupEnv.rewards, RewardTerm("speed", _speed))
    c = _define(rewards=declared)(num_envs=1, device="cpu")
    assert a.terms._rewards is b.terms._rewards
    assert a.terms._rewards is not c.terms._rewards
    assert a.terms._observe is c.terms._observe
    for env in (a, b, c):
        env.close()


def _history_twin(autoreset_mode: str, noise: float) -> tuple[Any, Any]:
    """The pendulum, and the same task whose angular-velocity block holds its last 3 frames and whose cosine block
    its last 2; same seed, same noise."""
    blocks = PendulumSwingupEnv.observations
    with_history = (
        ObservationBlock("cos", 1, blocks[0].func, "cosine", "1", history=2),
        blocks[1],
        ObservationBlock("ang_vel", 1, blocks[2].func, "angular velocity", "rad/s", history=3),
    )
    kwargs = {"num_envs": 3, "device": "cpu", "seed": 0, "max_episode_steps": 6, "autoreset_mode": autoreset_mode}
    plain = PendulumSwingupEnv(obs_noise_std=0.0, **kwargs)
    history = _define(observations=with_history)(obs_noise_std=noise, **kwargs)
    return plain, history


@pytest.mark.parametrize("autoreset_mode", ["SameStep", "NextStep"])
def test_an_observation_history_holds_the_last_frames_and_starts_each_episode_full(autoreset_mode: str) -> None:
    """``history=K`` puts the block's last K values in the observation, oldest first: each frame equals the plain
    task's observation of that step, and at an episode's start every frame holds its first observation."""
    plain, env = _history_twin(autoreset_mode, noise=0.0)
    assert env.observation_dim == 6 and env.observation_layout["ang_vel"] == slice(3, 6)
    expected = None

    def advance(frames: np.ndarray | None, obs: np.ndarray, started: np.ndarray) -> np.ndarray:
        cos, sin, vel = obs[:, 0:1], obs[:, 1:2], obs[:, 2:3]
        fresh = np.hstack([cos, cos, sin, vel, vel, vel])
        if frames is None:
            return fresh
        moved = np.hstack([frames[:, 1:2], cos, sin, frames[:, 4:6], vel])
        return np.where(started[:, None], fresh, moved)

    obs, _ = plain.reset(seed=0)
    got, _ = env.reset(seed=0)
    expected = advance(None, obs.numpy(), np.ones(3, bool))
    np.testing.assert_array_equal(got.numpy(), expected)
    pending = np.zeros(3, bool)
    for actions in random_actions(plain, 14, seed=2):
        obs, _, _, _, info = plain.step(actions)
        got, _, _, _, got_info = env.step(actions)
        ended = info["_episode"].numpy().copy()  # a view, which the next step overwrites
        if autoreset_mode == "SameStep":
            final = advance(expected, info["final_obs"].numpy(), np.zeros(3, bool))
            np.testing.assert_array_equal(got_info["final_obs"].numpy()[ended], final[ended])
            expected = advance(expected, obs.numpy(), ended)
        else:
            expected = advance(expected, obs.numpy(), pending)
            pending = ended
        np.testing.assert_array_equal(got.numpy(), expected)
    plain.close()
    env.close()


def test_a_history_frame_keeps_its_noise_and_a_partial_reset_leaves_other_worlds_bitwise() -> None:
    _, env = _history_twin("SameStep", noise=0.05)
    env.reset(seed=0)
    before = None
    for actions in random_actions(env, 3, seed=3):
        obs = env.step(actions)[0].clone()
        if before is not None:  # the two older angular-velocity frames moved on, noise and all
            assert torch.equal(obs[:, 3:5], before[:, 4:6]) and torch.equal(obs[:, 0], before[:, 1])
        before = obs
    after, _ = env.reset(options={"reset_mask": np.array([True, False, False])})
    assert torch.equal(after[1:], before[1:])
    assert torch.equal(after[0, 3:5], after[0, 5].expand(2)) and after[0, 0] == after[0, 1]
    with pytest.raises(TypeError, match="must have an int history >= 1"):
        _define(
            observations=(ObservationBlock("cos", 1, PendulumSwingupEnv.observations[0].func, "c", "1", history=0),)
        )
    env.close()


def test_the_extra_legged_terms_score_what_their_formulas_say() -> None:
    """flat_orientation_l2, joint_deviation_l1, joint_acc_l2, feet_slide and undesired_contacts, added to
    QuadrupedVelocity as rewards (weight 1), equal their formulas computed here from the state each step ended in
    (numpy; the gravity direction from the base quaternion with SciPy)."""
    from scipy.spatial.transform import Rotation
    from steel_envs.envs.quadruped import BASE, DEFAULT_POSE, FEET
    from steel_envs.tasks.quadruped_velocity import QuadrupedVelocityEnv
    from steel_envs.tasks.terms import legged

    extra = ("flat_orientation_l2", "joint_deviation_l1", "joint_acc_l2", "feet_slide", "undesired_contacts")
    rewards = (*QuadrupedVelocityEnv.rewards, *(RewardTerm(name, getattr(legged, name)) for name in extra))

    def setup(self: Any) -> None:
        QuadrupedVelocityEnv._setup_task(self)
        undesired = np.array([BASE, FEET[0], FEET[2]], np.int32)  # a set that touches the ground now and then
        self.term_state.undesired_bodies = wp.array(undesired, dtype=wp.int32)

    cls = type("QuadrupedExtra", (QuadrupedVelocityEnv,), {"rewards": rewards, "_setup_task": setup})
    env = cls(num_envs=4, device="cpu", seed=0)
    env.reset(seed=0)
    threshold, dt, n = env.config.contact_force_threshold, env.control_dt, env.num_envs
    last_qd = np.zeros((n, 12))
    seen = dict.fromkeys(extra, 0.0)
    for actions in random_actions(env, 12, seed=4):
        _, _, _, _, info = env.step(actions)
        body_q = env.state_0.body_q.numpy().reshape(n, -1, 7)
        body_qd = env.state_0.body_qd.numpy().reshape(n, -1, 6)
        q = env.state_0.joint_q.numpy().reshape(n, -1)[:, 7:]
        qd = env.state_0.joint_qd.numpy().reshape(n, -1)[:, 6:]
        touching = np.linalg.norm(env.body_contact_wrench.numpy().reshape(n, -1, 6)[:, :, :3], axis=2) > threshold
        gravity = Rotation.from_quat(body_q[:, BASE, 3:]).inv().apply([0.0, 0.0, -1.0])
        feet = list(FEET)
        expected = {
            "flat_orientation_l2": (gravity[:, :2] ** 2).sum(1),
            "joint_deviation_l1": np.abs(q - DEFAULT_POSE).sum(1),
            "joint_acc_l2": (((qd - last_qd) / dt) ** 2).sum(1),
            "feet_slide": (np.linalg.norm(body_qd[:, feet, :2], axis=2) * touching[:, feet]).sum(1),
            "undesired_contacts": touching[:, [BASE, FEET[0], FEET[2]]].sum(1),
        }
        assert not info["_episode"].any()
        for name, value in expected.items():
            np.testing.assert_allclose(info[f"reward_{name}"].numpy(), value, rtol=2e-5, atol=1e-5, err_msg=name)
            seen[name] = max(seen[name], float(np.abs(value).max()))
        last_qd = qd.copy()  # numpy() of a CPU array is a view of the state
    assert all(v > 0 for v in seen.values()), seen  # every term was exercised
    env.close()
