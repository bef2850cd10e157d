"""Reliability: stale state after resets, non-finite actions, statistics in every mode, determinism across
processes, and property-based bad input (hypothesis)."""

from __future__ import annotations

import newton
import numpy as np
import pytest
import torch
from conftest import ANT, CARTPOLE, MATRIX_IDS, assert_world_bit_identical, make, random_actions, world_state
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import steel_envs
from steel_envs.vbd_env import VBDVectorEnv


def _fresh_world_like(env_id: str, state: dict[str, np.ndarray], **kwargs) -> steel_envs.SteelVectorEnv:
    """A newly built single-world env whose world is set to ``state``: joint state, then forward kinematics; on
    SolverVBD (maximal coordinates) body and particle state as they are."""
    fresh = make(env_id, 1, seed=12345, autoreset_mode="Disabled", **kwargs)
    if isinstance(fresh, VBDVectorEnv):
        for name in ("body_q", "body_qd", "particle_q", "particle_qd"):
            if name in state:
                getattr(fresh.state_0, name).assign(state[name])
    else:
        fresh.state_0.joint_q.assign(state["joint_q"])
        fresh.state_0.joint_qd.assign(state["joint_qd"])
        newton.eval_fk(fresh.model, fresh.state_0.joint_q, fresh.state_0.joint_qd, fresh.state_0)
    fresh._observe()
    return fresh


# Kwargs that make episodes end within a few dozen random steps (through the task's own terminations where it has
# some), and keep a fresh twin from ending. A task without an entry ends by its time limit.
_SHORT_DEFAULT = ({"max_episode_steps": 10}, {})
_SHORT = {
    ANT: ({"healthy_z_max": 0.6}, {"healthy_z_max": 10.0}),
    CARTPOLE: ({}, {"pole_angle_limit": 3.0}),
    "steel_envs/CartpoleSwingup-v0": ({"max_episode_steps": 20}, {}),
    "steel_envs/HumanoidRun-v0": ({}, {"healthy_z_min": -10.0}),
    "steel_envs/PushCube-v0": ({"max_episode_steps": 20}, {"success_radius": 1e-9}),
    "steel_envs/QuadrupedVelocity-v0": (
        {"max_episode_steps": 20},
        {"max_tilt_cos": -2.0, "contact_force_threshold": 1e9},
    ),
    "steel_envs/ClothFold-v0": ({"max_episode_steps": 8}, {}),
    # Without randomization (its draws are task state the fresh world does not share), heading mode (which turns
    # the command with the heading) and a resample within the test.
    **dict.fromkeys(
        (
            "steel_envs/Go1Velocity-v0",
            "steel_envs/G1Velocity-v0",
            "steel_envs/Go1VelocityRough-v0",
        ),
        (
            {"max_episode_steps": 20, "randomize": False, "rel_heading_envs": 0.0, "command_resample_time": (9, 9)},
            {
                "randomize": False,
                "rel_heading_envs": 0.0,
                "command_resample_time": (9, 9),
                "max_tilt_cos": -2.0,
                "contact_force_threshold": 1e9,
            },
        ),
    ),
    "steel_envs/SoftPush-v0": ({"max_episode_steps": 10}, {"success_radius": 1e-9}),
    # One cube for all (its drawn size, mass and friction are model values the fresh world does not share).
    "steel_envs/PandaLiftCube-v0": ({"max_episode_steps": 10, "randomize": False}, {"randomize": False}),
    "steel_envs/AllegroReorient-v0": ({"max_episode_steps": 10, "randomize": False}, {"randomize": False}),
}


# Every ID's own reset code runs for all its worlds in an explicit reset and for one world inside the step in SameStep
# (the other worlds step on). A masked reset and a NextStep reset call that same code with a one-world mask from
# another entry point (reset's options, the next step's start), which is the core's, not the ID's: those two kinds
# run on one SolverSteel and one SolverVBD scene. A step of PandaClothLift (the arm and the cloth on SolverVBD, 8
# physics steps) costs some 30 of the other IDs', and Go1VelocityRough builds its terrain's collision mesh (1.3 s) per
# env: their resets are checked by an explicit one, SameStep's by every other ID (ClothFold's and SoftPush's on
# SolverVBD, Go1Velocity's with the same robot and task reset on flat ground).
_EXPLICIT_ONLY = ("steel_envs/PandaClothLift-v0", "steel_envs/Go1VelocityRough-v0")
_CORE_KINDS_ON = (ANT, "steel_envs/SoftPush-v0")
# The IDs in the opposite order to test_api.py's: the two files hold the most tests, so pytest-xdist (--dist loadfile,
# largest files first) starts them at once on the two workers, and on a new machine each ID's first build compiles
# its Warp modules; in the same order both workers would compile the same modules at the same time.
_ORDER = tuple(reversed(MATRIX_IDS))
_RESETS = [
    (env_id, how)
    for how in ("explicit", "masked", "SameStep", "NextStep")
    for env_id in _ORDER
    if how == "explicit"
    or (how == "SameStep" and env_id not in _EXPLICIT_ONLY)
    or (how in ("masked", "NextStep") and env_id in _CORE_KINDS_ON)
]


@pytest.mark.parametrize(("env_id", "how"), _RESETS, ids=[f"{how}-{env_id}" for env_id, how in _RESETS])
def test_first_observation_after_a_reset_equals_a_fresh_world(env_id, how):
    """After any kind of reset, a world's observation (contact wrenches included) and its whole future
    under the same actions equal those of a freshly built env set to the same state: no kinematics,
    contact force, warm start or friction anchor survives the reset."""
    n, w = 3, 1
    mode = how if how in ("SameStep", "NextStep") else "Disabled"
    # A tight healthy range makes the ant's episodes end by themselves within a few steps.
    env = make(env_id, n, seed=1, autoreset_mode=mode, **_SHORT.get(env_id, _SHORT_DEFAULT)[0])
    actions = random_actions(env, 80, seed=0)
    reset_obs = None
    for k, a in enumerate(actions):
        if how in ("explicit", "masked") and k == 15:
            mask = None if how == "explicit" else np.arange(n) == w
            obs, _ = env.reset(options=None if mask is None else {"reset_mask": mask})
            reset_obs, start = obs[w].clone(), k
            break
        obs, _, terminated, truncated, _ = env.step(a)
        if how == "SameStep" and (terminated | truncated)[w]:
            reset_obs, start = obs[w].clone(), k + 1
            break
        if how == "NextStep" and env._next_step_mask_t[w]:
            obs = env.step(actions[k + 1])[0]
            reset_obs, start = obs[w].clone(), k + 2
            break
    assert reset_obs is not None, "the world was reset"
    fresh = _fresh_world_like(env_id, world_state(env, w), **_SHORT.get(env_id, _SHORT_DEFAULT)[1])
    for name in ("commands", "goals", "rest"):  # task state drawn at the reset: the fresh world gets the same
        if hasattr(env.term_state, name):
            getattr(fresh.term_state, name).assign(getattr(env.term_state, name).numpy()[w : w + 1])
            fresh._observe()
    assert fresh._obs_t[0].numpy().tobytes() == reset_obs.numpy().tobytes()
    env_after = {k: v.clone() for k, v in env._episode_views.items()}
    for a in actions[start : start + 12]:
        o = env.step(a)[0][w].clone()
        f = fresh.step(a[w : w + 1])[0][0]
        if env._done_t[w]:
            break
        assert o.numpy().tobytes() == f.numpy().tobytes()
    assert env_after  # statistics views exist in every mode


def test_nonfinite_action_ends_only_its_world_when_asked():
    n, bad = 3, 2
    env = make(ANT, n, seed=4, nonfinite_actions="end_episode")
    twin = make(ANT, n, seed=4, nonfinite_actions="end_episode")
    actions = random_actions(env, 8, seed=1)
    for k, a in enumerate(actions):
        poisoned = a.clone()
        clean = a.clone()
        if k == 3:
            poisoned[bad, 2] = float("nan")
            poisoned[bad, 5] = float("inf")
            clean[bad, 2] = 0.0
            clean[bad, 5] = 0.0
        obs, _, _, truncated, info = env.step(poisoned)
        t_obs, _, _, _, t_info = twin.step(clean)
        if k == 3:
            assert info["nonfinite_action"].numpy().tolist() == [False, False, True]
            assert truncated[bad] and info["_episode"][bad]
            # The poisoned entries acted as 0: the ended episode's last observation is the clean twin's.
            expected = t_info["final_obs"][bad] if t_info["_episode"][bad] else t_obs[bad]
            assert torch.equal(info["final_obs"][bad], expected)
        else:
            assert not info["nonfinite_action"].any()
        for w in range(n):
            if w != bad:
                assert_world_bit_identical(env, twin, w)
                assert obs[w].numpy().tobytes() == t_obs[w].numpy().tobytes()
    assert torch.isfinite(obs).all()


@pytest.mark.parametrize("mode", ["SameStep", "NextStep", "Disabled"])
def test_episode_statistics_exact_in_every_autoreset_mode(mode):
    n, limit = 3, 25
    env = make(CARTPOLE, n, seed=2, autoreset_mode=mode, max_episode_steps=limit)
    returns, lengths = np.zeros(n), np.zeros(n, np.int64)
    pending = np.zeros(n, bool)  # NextStep: the world resets on this call
    episodes = 0
    for a in random_actions(env, 150, seed=3):
        _, reward, terminated, truncated, info = env.step(a)
        r = reward.numpy()
        if mode == "NextStep":
            assert np.all(r[pending] == 0.0) and not (terminated | truncated).numpy()[pending].any()
        counted = ~pending
        returns[counted] += r[counted]
        lengths[counted] += 1
        done = (terminated | truncated).numpy()
        np.testing.assert_array_equal(info["_episode"].numpy(), done)
        for w in np.flatnonzero(done):
            assert info["episode"]["l"][w].item() == lengths[w]
            assert info["episode"]["r"][w].item() == np.float32(returns[w])
            returns[w], lengths[w] = 0.0, 0
            episodes += 1
        if mode == "Disabled" and done.any():
            env.reset(options={"reset_mask": done})
        pending = done if mode == "NextStep" else np.zeros(n, bool)
    assert episodes >= 3 * n
    env.reset()
    assert not env._done_t.any()
    assert np.all(env.episode_steps.numpy() == 0) and np.all(env.stats.episode_return.numpy() == 0)


def test_deterministic_option_reaches_the_solver():
    import warp as wp

    env = make(CARTPOLE, 1, solver_options={"deterministic": wp.DeterministicMode.RUN_TO_RUN})
    assert env.solver.deterministic == wp.DeterministicMode.RUN_TO_RUN


# ---------------------------------------------------------------- property-based bad input


def _pair(env_id: str) -> tuple[steel_envs.SteelVectorEnv, steel_envs.SteelVectorEnv]:
    """A fresh env and its twin with the same seed (kernels stay compiled between examples)."""
    return make(env_id, 2, seed=9), make(env_id, 2, seed=9)


_finite_or_not = st.floats(allow_nan=True, allow_infinity=True, width=64)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=hnp.arrays(np.float64, (2, 1), elements=_finite_or_not))
def test_numpy_actions_either_raise_or_act_as_their_clipped_float32(values):
    env, twin = _pair(CARTPOLE)
    if not np.isfinite(values).all():
        with pytest.raises(ValueError, match="actions: expected finite values"):
            env.step(values)
        values = np.zeros((2, 1))  # nothing happened: the env continues as its twin
    clean = torch.from_numpy(np.clip(values, -1.0, 1.0).astype(np.float32))
    assert torch.equal(env.step(values)[0], twin.step(clean)[0])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    shape=st.lists(st.integers(0, 3), min_size=0, max_size=3).map(tuple),
    dtype=st.sampled_from([torch.float32, torch.float64, torch.float16, torch.int32, torch.bool]),
)
def test_torch_actions_of_any_other_shape_or_dtype_raise_naming_actions(shape, dtype):
    env, twin = _pair(CARTPOLE)
    actions = torch.zeros(shape, dtype=dtype)
    if shape == (2, 1) and dtype == torch.float32:
        assert torch.equal(env.step(actions)[0], twin.step(torch.zeros(2, 1))[0])
        return
    with pytest.raises(ValueError, match=r"^actions: expected"):
        env.step(actions)
    assert torch.equal(env.step(torch.zeros(2, 1))[0], twin.step(torch.zeros(2, 1))[0])


_any_value = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(2**70), 2**70),
    st.booleans(),
    st.none(),
    st.text(max_size=3),
    st.lists(st.floats(), max_size=2),
)


# Extreme but valid values can overflow the ant's rows at the first step; the env then warns once and ends the
# episode, which is its contract (test_overflow), not this test's subject.
@pytest.mark.filterwarnings("ignore:AntRunEnv. SolverSteel dropped:RuntimeWarning")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    field=st.sampled_from(
        [
            "ctrl_cost_weight",
            "healthy_z_min",
            "contact_force_clip",
            "action_scale",
            "reset_noise_scale",
            "terminate_when_unhealthy",
            "obs_clip",
        ]
    ),
    value=_any_value,
)
def test_config_values_are_stored_or_rejected_naming_the_field(field, value):
    try:
        env = make(ANT, 1, **{field: value})
    except (ValueError, TypeError) as e:
        assert field in str(e)
        return
    stored = getattr(env.config, field)
    assert stored == value and np.isfinite(np.float32(stored))
    obs = env.step(torch.zeros(1, 8))[0]
    assert torch.isfinite(obs).all()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    option=st.sampled_from(
        [
            "iterations",
            "baumgarte",
            "cfm",
            "enable_joint_limits",
            "articulation_constraint_max",
            "joint_limit_activation_gap",
            "solve_mode",
            "friction_anchor_beta",
        ]
    ),
    value=_any_value,
)
def test_solver_option_values_reach_the_solver_or_are_rejected_naming_the_option(option, value):
    try:
        env = make(CARTPOLE, 1, solver_options={option: value})
    except (ValueError, TypeError, NotImplementedError) as e:
        assert option in str(e)
        return
    if value is not None:  # None selects the solver's own default, which it resolves
        assert getattr(env.solver, option) == getattr(env.solver_options, option) == value


def test_soak_script_small_run_loses_nothing():
    from steel_envs.training.benchmarks.soak import soak

    with pytest.warns(RuntimeWarning, match="dropped constraint rows"):  # the injected overflows
        r = soak(CARTPOLE, num_envs=8, env_steps=8 * 240, fault_every=10, report_every=60, seed=1)
    assert r["missed"] == [] and r["worlds_lost"] == 0
    assert sum(r["faults"].values()) == 24 and min(r["faults"].values()) == 6
