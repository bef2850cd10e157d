"""The constraint_overflow term: ends exactly the flagged worlds, is reported, counted, cleared by reset."""

from __future__ import annotations

import warnings

import newton
import numpy as np
import pytest
import torch
from conftest import ANT, assert_world_bit_identical, make

import steel_envs

N = 4
AIRBORNE = np.array([False, True, False, True])
ZEROS = torch.zeros(N, 8)
# Measured (newton 1.8.0) with limit rows only near a limit (activation gap 0.1 rad; the scene now creates all 16
# every step): an ant at rest on the ground needs 17-24 rows, an ant in the air 12 (speculative contacts between
# the torso's capsules and the legs). 14 rows overflow the first and not the second.
SMALL = {"articulation_constraint_max": 14, "joint_limit_activation_gap": 0.1, "warn_constraint_overflow": False}
# The lifted ants are above the healthy z range; only the overflow term may end episodes here.
KEEP = {"terminate_when_unhealthy": False}


def _lift(env, worlds, height=3.0):
    """Raise the ants of ``worlds`` by ``height`` [m]: no contact for the next steps."""
    q = env.state_0.joint_q.numpy().reshape(N, env.coords_per_world)
    q[worlds, 2] += height
    env.state_0.joint_q.assign(q.ravel())
    newton.eval_fk(env.model, env.state_0.joint_q, env.state_0.joint_qd, env.state_0)


@pytest.mark.parametrize("graph_capture", [True, "physics"])
@pytest.mark.parametrize("terminal", [False, True])
def test_overflow_ends_exactly_the_flagged_worlds(terminal, graph_capture):
    env = make(ANT, N, seed=0, solver_options=SMALL, overflow_is_terminal=terminal, graph_capture=graph_capture, **KEEP)
    twin = make(ANT, N, seed=0, solver_options=SMALL, autoreset_mode="Disabled", **KEEP)
    for e in (env, twin):
        _lift(e, AIRBORNE)
    flags_before_reset = []
    if graph_capture == "physics":  # the eager device step calls _reset_worlds from Python: spy on it
        reset_worlds = env._reset_worlds

        def spy(mask):
            flags_before_reset.append(env.solver.constraint_overflow.numpy().copy())
            reset_worlds(mask)

        env._reset_worlds = spy
    with pytest.warns(RuntimeWarning, match="articulation_constraint_max \\(now 14\\)") as record:
        _, _, terminated, truncated, info = env.step(ZEROS)
    with pytest.warns(RuntimeWarning):
        twin.step(ZEROS)
    grounded = ~AIRBORNE
    if flags_before_reset:
        np.testing.assert_array_equal(flags_before_reset[0][:N], grounded)
    np.testing.assert_array_equal(info["constraint_overflow"].numpy(), grounded)
    ended_as = terminated if terminal else truncated
    other = truncated if terminal else terminated
    np.testing.assert_array_equal(ended_as.numpy(), grounded)
    assert not other.numpy().any()
    np.testing.assert_array_equal(info["_episode"].numpy(), grounded)
    assert info["episode"]["constraint_overflow"].numpy()[grounded].all()
    assert (info["episode"]["l"].numpy()[grounded] == 1).all()
    # The reset cleared the flags of the reset worlds; the airborne worlds ran on untouched.
    assert not env.solver.constraint_overflow.numpy().any()
    for w in np.flatnonzero(AIRBORNE):
        assert_world_bit_identical(env, twin, w)
    # One warning, not one per step.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            env.step(ZEROS)
    assert len([w for w in record if issubclass(w.category, RuntimeWarning)]) == 1


def test_without_autoreset_a_flagged_world_stays_flagged_until_reset():
    env = make(ANT, N, seed=0, solver_options=SMALL, autoreset_mode="Disabled", **KEEP)
    _lift(env, AIRBORNE)
    with pytest.warns(RuntimeWarning):
        for _ in range(2):
            _, _, _, truncated, info = env.step(ZEROS)
    np.testing.assert_array_equal(truncated.numpy(), ~AIRBORNE)
    env.reset(options={"reset_mask": ~AIRBORNE})
    assert not env.solver.constraint_overflow.numpy()[:N][~AIRBORNE].any()
    assert not info["constraint_overflow"].numpy()[~AIRBORNE].any()


def test_global_entry_flags_every_world():
    env = make(ANT, N, seed=0, autoreset_mode="Disabled")
    env.solver.constraint_overflow.assign(np.array([False] * N + [True]))
    with pytest.warns(RuntimeWarning):
        _, _, _, truncated, info = env.step(ZEROS)
    assert truncated.numpy().all() and info["constraint_overflow"].numpy().all()


def test_sized_capacity_does_not_overflow_under_random_torques():
    env = make(ANT, N, seed=1)
    g = torch.Generator().manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(40):
            info = env.step(torch.rand(N, 8, generator=g) * 2 - 1)[4]
            assert not info["constraint_overflow"].any()


def test_quadrupeds_folded_on_the_ground_by_saturated_targets_fit_the_shared_contact_buffer():
    # Every world folds the same way at once (the adversaries' saturate+), the worst case of a buffer the worlds
    # share: one world's excess would end them all.
    env = make("steel_envs/QuadrupedVelocity-v0", N, seed=0)
    peak = 0
    for _ in range(40):
        info = env.step(torch.ones(N, 12))[4]
        assert not info["constraint_overflow"].any()
        peak = max(peak, int(env.contacts.rigid_contact_count.numpy()[0]))
    assert peak > 32 * N  # what the buffer held before: the folded robots would have overflowed it
    env.close()


def test_contact_capacity_is_the_scenes_per_world_figure_times_the_worlds():
    """A scene's ``rigid_contacts_per_world`` sizes the pipeline (times the worlds); ``collision_options`` still win.
    (The core's code for every scene; whether each ID's figure suffices is its doctor's capacity line.)"""
    env_id = ANT
    per_world = steel_envs.task_class(env_id).rigid_contacts_per_world
    assert per_world is not None
    env = make(env_id, 3, seed=0)
    assert env.contacts.rigid_contact_max == 3 * per_world
    env.close()
    env = make(env_id, 3, seed=0, collision_options={"rigid_contact_max": 1000})
    assert env.contacts.rigid_contact_max == 1000
    env.close()


# A contact capacity of all worlds together too small for ants on the ground (measured: 29-34 contacts for 4 ants
# at rest, 16 for ants 3 m up: self-contacts of the torso and legs): grounded ants overflow it, lifted ants do not;
# the pipeline drops contacts and SolverSteel sets the global entry.
TOO_FEW_CONTACTS = {"rigid_contact_max": 20}


@pytest.mark.parametrize("autoreset_mode", ["SameStep", "NextStep"])
def test_a_global_overflow_ends_every_world_once_and_does_not_latch(autoreset_mode):
    env = make(ANT, N, seed=0, collision_options=TOO_FEW_CONTACTS, autoreset_mode=autoreset_mode, **KEEP)
    with pytest.warns(RuntimeWarning, match="dropped"):
        _, _, _, truncated, info = env.step(ZEROS)
    # The natural trigger: the grounded ants' contacts overflow the pipeline's buffer, a global loss.
    assert truncated.numpy().all() and info["constraint_overflow"].numpy().all()
    assert (info["episode"]["l"].numpy() == 1).all()
    if autoreset_mode == "NextStep":
        env.step(ZEROS)  # the reset step
    # Lifted ants touch nothing for the next steps: the cause is gone, and so must be its effect.
    _lift(env, np.ones(N, bool))
    for t in range(1, 6):
        _, _, terminated, truncated, info = env.step(ZEROS)
        assert not (terminated | truncated).numpy().any(), f"worlds ended at step {t} after the overflow"
        assert not info["constraint_overflow"].numpy().any()
    assert (env.episode_length.numpy() == 5).all()


def test_a_set_global_entry_ends_every_world_at_one_step_only():
    env = make(ANT, N, seed=0)
    env.solver.constraint_overflow.assign(np.array([False] * N + [True]))
    with pytest.warns(RuntimeWarning):
        _, _, _, truncated, info = env.step(ZEROS)
    assert truncated.numpy().all() and info["_episode"].numpy().all()
    assert not env.solver.constraint_overflow.numpy().any(), "the autoreset left the global entry set"
    for _ in range(3):
        _, _, terminated, truncated, info = env.step(ZEROS)
        assert not (terminated | truncated).numpy().any()
    assert (env.episode_length.numpy() == 3).all()


@pytest.mark.parametrize("how", ["seed", "no_seed", "mask_of_all_worlds"])
def test_a_full_reset_clears_the_global_entry(how):
    env = make(ANT, N, seed=0, autoreset_mode="Disabled")
    env.solver.constraint_overflow.assign(np.array([False] * N + [True]))
    if how == "seed":
        env.reset(seed=1)
    elif how == "no_seed":
        env.reset()
    else:
        env.reset(options={"reset_mask": np.ones(N, bool)})
    assert not env.solver.constraint_overflow.numpy().any()
    _, _, terminated, truncated, info = env.step(ZEROS)
    assert not (terminated | truncated).numpy().any() and not info["constraint_overflow"].numpy().any()


@pytest.mark.parametrize("reset_masks", [[], [AIRBORNE], [AIRBORNE, ~AIRBORNE]], ids=["none", "half", "halves"])
def test_without_autoreset_the_global_entry_ends_every_world_once(reset_masks):
    """Disabled autoreset: the step that reports the global loss clears it, so worlds reset afterwards, by any
    masks, start clean (before: two partial resets covering every world left it set for good)."""
    env = make(ANT, N, seed=0, autoreset_mode="Disabled")
    env.solver.constraint_overflow.assign(np.array([False] * N + [True]))
    with pytest.warns(RuntimeWarning):
        _, _, _, truncated, info = env.step(ZEROS)
    assert truncated.numpy().all() and info["constraint_overflow"].numpy().all()
    assert not env.solver.constraint_overflow.numpy().any()
    for mask in reset_masks:
        env.reset(options={"reset_mask": mask})
    _, _, _, _, info = env.step(ZEROS)
    assert not info["constraint_overflow"].numpy().any()


def test_collision_options_are_checked():
    with pytest.raises(ValueError, match="collision_options: unknown keyword\\(s\\) \\['rigid_contact_maximum'\\]"):
        make(ANT, 1, collision_options={"rigid_contact_maximum": 8})
    for value in (-5, 0, 10.5, "100", True):
        with pytest.raises(ValueError, match=r"collision_options\['rigid_contact_max'\]: expected None or an int >= 1"):
            make(ANT, 1, collision_options={"rigid_contact_max": value})
    with pytest.raises(ValueError, match=r"collision_options\['deterministic'\]: expected a bool"):
        make(ANT, 1, collision_options={"deterministic": "no"})
    with pytest.raises(ValueError, match="collision_options: CartpoleBalanceEnv runs no collision pipeline"):
        make("steel_envs/CartpoleBalance-v0", 1, collision_options={"rigid_contact_max": 8})
    env = make(ANT, 2, collision_options={"rigid_contact_max": 64})
    assert env.contacts.rigid_contact_max == 64 and env.collision_options == {
        "deterministic": True,
        "rigid_contact_max": 64,
    }


def test_push_clutter_spawns_apart_and_sizes_its_capacities():
    """8 clutter cubes: 9 cubes in 9 distinct cells of the 3 x 3 grid over the +-0.3 m spawn square, no two
    overlapping (axis-aligned at spawn: apart by more than a cube's width in x or y); capacities grown per clutter
    cube; 40 steps of bang-bang finger velocities drop nothing."""
    push, worlds = "steel_envs/PushCube-v0", 8
    env = make(push, worlds, seed=0, clutter=8)
    assert env.contacts.rigid_contact_max == worlds * (12 + 16 * 8)
    assert env.solver_options.propagation_constraint_max == 256 + 32 * 8
    for seed in range(3):
        env.reset(seed=seed)
        cubes = env.state_0.body_q.numpy().reshape(worlds, 11, 7)[:, 2:, :2]  # carriage, finger, 9 cubes
        cells = np.floor((cubes + 0.3) / 0.2).astype(int)
        assert ((cells >= 0) & (cells <= 2)).all()
        for w in range(worlds):
            assert len({tuple(c) for c in cells[w]}) == 9
            gaps = np.abs(cubes[w, :, None] - cubes[w, None]).max(-1) + 10.0 * np.eye(9)
            assert gaps.min() > 0.1
    g = torch.Generator().manual_seed(0)
    for _ in range(40):
        info = env.step(torch.randint(0, 2, (worlds, 2), generator=g).float() * 2 - 1)[4]
        assert not info["constraint_overflow"].any()
    env.close()
    env = make(push, 2, clutter=2, solver_options={"propagation_constraint_max": 300})
    assert env.solver_options.propagation_constraint_max == 300
    env.close()
    with pytest.raises(ValueError, match=r"clutter: expected an int in \[0, 8\] \(.*\), got 9"):
        make(push, 1, clutter=9)
    with pytest.raises(ValueError, match=r"cube_spawn: expected >= 0\.165 m with clutter"):
        make(push, 1, clutter=1, cube_spawn=0.1)
