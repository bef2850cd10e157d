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
