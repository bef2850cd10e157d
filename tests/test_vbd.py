"""SolverVBD scenes (ClothFold-v0, SoftPush-v0): physics checks, reward terms recomputed independently, isolation of
non-finite worlds, per-world contact-buffer overflow, options, rendering. World counts and steps stay tiny: VBD on
Warp's CPU backend is slow."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from conftest import assert_world_bit_identical, make, random_actions
from steel_envs.tasks.soft_push import PUSHER_BODY, SoftPushEnv

import steel_envs
from steel_envs.vbd_env import VBDVectorEnv

CLOTH = "steel_envs/ClothFold-v0"
SOFT = "steel_envs/SoftPush-v0"
RADIUS = 0.005  # particle radius of both scenes [m]


def _world_particles(env, array, w: int) -> np.ndarray:
    start = env.model.particle_world_start.numpy()
    return array.numpy()[start[w] : start[w + 1]]


def _world_tets(env, q: np.ndarray, w: int) -> tuple[np.ndarray, slice]:
    """Corner positions (T, 4, 3) of world ``w``'s tetrahedra from its world-local particle positions ``q``, and
    the slice of those tetrahedra in the model's arrays."""
    t = env.model.tet_indices.numpy()
    per = len(t) // env.num_envs
    tets = slice(w * per, (w + 1) * per)
    return q[t[tets] - env.model.particle_world_start.numpy()[w]], tets


def _tet_volumes(env, q: np.ndarray, w: int) -> np.ndarray:
    """Signed volumes of world ``w``'s tetrahedra from world-local positions ``q`` (numpy, independent)."""
    x, _ = _world_tets(env, q, w)
    return np.einsum("ij,ij->i", np.cross(x[:, 1] - x[:, 0], x[:, 2] - x[:, 0]), x[:, 3] - x[:, 0]) / 6.0


def _fold_actions(env, w: int) -> torch.Tensor:
    """A scripted half fold for world ``w``: each grasped corner flies in an arc to the corner it folds onto."""
    q = _world_particles(env, env.state_0.particle_q, w)
    n = env.config.cloth_cells
    grasped = q[[env.grid_index(0, 0), env.grid_index(n, 0)]]
    targets = q[[env.grid_index(0, n), env.grid_index(n, n)]]
    a = torch.zeros(env.num_envs, 6)
    for k in range(2):
        d = targets[k] - grasped[k]
        height = 0.3 * min(float(np.linalg.norm(d[:2])), 0.4) + RADIUS
        a[w, 3 * k : 3 * k + 2] = torch.from_numpy(np.clip(4.0 * d[:2], -1.0, 1.0))
        a[w, 3 * k + 2] = float(np.clip(10.0 * (height - grasped[k][2]), -1.0, 1.0))
    return a


def test_a_dropped_cloth_comes_to_rest_on_the_ground_at_its_particle_radius():
    env = make(CLOTH, 1, seed=0, cloth_drop_height=0.1, autoreset_mode="Disabled", start_yaw=0.0, corner_noise=0.0)
    down = torch.tensor([[0.0, 0.0, -1.0, 0.0, 0.0, -1.0]])  # the held corners come down too
    for _ in range(15):
        env.step(down)
    q = env.state_0.particle_q.numpy()
    speed = np.linalg.norm(env.state_0.particle_qd.numpy(), axis=1)
    np.testing.assert_allclose(q[:, 2], RADIUS, atol=0.1 * RADIUS)
    assert speed.max() < 5e-3
    # It fell straight down: the grid keeps its size in x and y.
    assert q[:, 0].max() - q[:, 0].min() == pytest.approx(env.config.cloth_size, rel=0.02)


def test_a_soft_block_settles_under_gravity_and_keeps_its_volume():
    env = make(SOFT, 1, seed=0, block_drop_height=0.05, block_spawn=0.0, autoreset_mode="Disabled")
    rest = env.config.block_size**3
    assert _tet_volumes(env, env.state_0.particle_q.numpy(), 0).sum() == pytest.approx(rest, rel=1e-5)
    for _ in range(30):
        env.step(torch.zeros(1, 2))
    q = env.state_0.particle_q.numpy()
    speed = np.linalg.norm(env.state_0.particle_qd.numpy(), axis=1)
    assert speed.max() < 1e-3
    volumes = _tet_volumes(env, q, 0)
    assert (volumes > 0).all()  # no tetrahedron inverted
    assert volumes.sum() == pytest.approx(rest, rel=0.02)
    bottom = q[: (env.config.block_cells + 1) ** 2]  # the first layer of add_soft_grid is z = 0
    np.testing.assert_allclose(bottom[:, 2], RADIUS, atol=0.1 * RADIUS)


def test_a_scripted_half_fold_succeeds_with_the_moving_half_on_top():
    env = make(CLOTH, 1, seed=0, autoreset_mode="Disabled")
    info = {}
    for _ in range(90):
        _, _, _, _, info = env.step(_fold_actions(env, 0))
        if info["success"][0]:
            break
    assert info["success"][0]
    n = env.config.cloth_cells
    q = env.state_0.particle_q.numpy()
    moving = [env.grid_index(i, j) for j in range(n // 2) for i in range(n + 1)]
    mirrored = [env.grid_index(i, n - j) for j in range(n // 2) for i in range(n + 1)]
    # Self-contact keeps the layers apart by its interaction distance (particle_self_contact_margin, 5 mm): the
    # moving half lies on the resting half, not through it, and nothing sinks into the ground.
    gap = q[moving, 2] - q[mirrored, 2]
    assert (gap > 0).all() and np.median(gap) == pytest.approx(RADIUS, rel=0.2)
    pressed = [env.grid_index(0, n), env.grid_index(n, n)]  # under the held (kinematic, unyielding) corners
    assert np.delete(q[:, 2], pressed).min() > 0.5 * RADIUS and q[pressed, 2].min() > 0.0
    fold = np.linalg.norm(q[moving] - q[mirrored], axis=1).mean()
    assert info["reward_fold"][0].item() == pytest.approx(-env.config.fold_weight * fold, rel=1e-5)


def test_cloth_reward_terms_equal_an_independent_computation():
    env = make(CLOTH, 2, seed=1, autoreset_mode="Disabled")
    c, n = env.config, env.config.cloth_cells
    # The resting half's flat start is where the reset put it (the grasped corners' noise is in the other half).
    rest = [_world_particles(env, env.state_0.particle_q, w).copy() for w in range(2)]
    assert not np.allclose(rest[0], _world_particles(env, env.model.particle_q, 0))  # a drawn start, not the model's
    for actions in random_actions(env, 4, seed=3):
        _, reward, _, _, info = env.step(actions)
        for w in range(2):
            q = _world_particles(env, env.state_0.particle_q, w)
            corner = np.mean(
                [
                    np.linalg.norm(q[env.grid_index(0, 0)] - q[env.grid_index(0, n)]),
                    np.linalg.norm(q[env.grid_index(n, 0)] - q[env.grid_index(n, n)]),
                ]
            )
            pairs = [(env.grid_index(i, j), env.grid_index(i, n - j)) for j in range(n // 2) for i in range(n + 1)]
            fold = np.mean([np.linalg.norm(q[a] - q[b]) for a, b in pairs])
            resting = [env.grid_index(i, j) for j in range(n // 2 + 1, n + 1) for i in range(n + 1)]
            drift = np.linalg.norm(q[resting] - rest[w][resting], axis=1).mean()
            expected = {
                "corner": -c.corner_weight * corner,
                "fold": -c.fold_weight * fold,
                "flatness": -c.flatness_weight * drift,
            }
            for term, value in expected.items():
                assert info[f"reward_{term}"][w].item() == pytest.approx(value, rel=1e-4, abs=1e-6)
            assert reward[w].item() == pytest.approx(sum(expected.values()), rel=1e-4, abs=1e-6)
            assert bool(info["success"][w]) == (fold < c.success_distance)


def _green_strain_norms(env, q: np.ndarray, w: int) -> np.ndarray:
    x, tets = _world_tets(env, q, w)
    ds = np.stack([x[:, 1] - x[:, 0], x[:, 2] - x[:, 0], x[:, 3] - x[:, 0]], axis=2)  # columns
    f = ds @ env.model.tet_poses.numpy()[tets]
    e = 0.5 * (np.transpose(f, (0, 2, 1)) @ f - np.eye(3))
    return np.sqrt((e * e).sum(axis=(1, 2)))


def test_soft_push_reward_terms_equal_an_independent_computation():
    env = make(SOFT, 2, seed=2, autoreset_mode="Disabled", block_spawn=0.0, strain_threshold=0.0)
    c = env.config
    push = torch.tensor([[1.0, 0.0], [1.0, 0.3]])  # straight into the block: it deforms
    strained = False
    for _ in range(14):
        _, reward, _, _, info = env.step(push)
        goals = env.term_state.goals.numpy()
        for w in range(2):
            q = _world_particles(env, env.state_0.particle_q, w)
            com = q.mean(axis=0)
            pusher = env.state_0.body_q.numpy()[env.model.body_world_start.numpy()[w] + PUSHER_BODY][:3]
            strain = _green_strain_norms(env, q, w)
            expected = {
                "reach": -c.reach_weight * np.linalg.norm(pusher[:2] - com[:2]),
                "push": -c.push_weight * np.linalg.norm(com[:2] - goals[w]),
                "strain": -c.strain_weight * np.maximum(strain - c.strain_threshold, 0.0).mean(),
                "success": c.success_bonus * float(np.linalg.norm(com[:2] - goals[w]) < c.success_radius),
            }
            for term, value in expected.items():
                assert info[f"reward_{term}"][w].item() == pytest.approx(value, rel=1e-3, abs=1e-5)
            assert reward[w].item() == pytest.approx(sum(expected.values()), rel=1e-3, abs=1e-5)
            strained |= expected["strain"] < -1e-3
    assert strained, "the pusher deformed the block"


@pytest.mark.parametrize("env_id", [CLOTH, SOFT])
def test_a_nonfinite_particle_state_ends_only_its_world(env_id):
    n, bad = 3, 1
    env, twin = make(env_id, n, seed=8), make(env_id, n, seed=8)
    actions = random_actions(env, 8, seed=2)
    for a in actions[:3]:
        env.step(a)
        twin.step(a)
    start = env.model.particle_world_start.numpy()[bad]
    qd = env.state_0.particle_qd.numpy()
    qd[start + 3] = np.nan
    env.state_0.particle_qd.assign(qd)
    obs, reward, terminated, _, info = env.step(actions[3])
    t_obs, t_reward, _, _, _ = twin.step(actions[3])
    assert info["nonfinite_state"].numpy().tolist() == [w == bad for w in range(n)]
    assert terminated[bad] and torch.isfinite(obs).all() and torch.isfinite(info["final_obs"]).all()
    for w in range(n):
        if w != bad:
            assert_world_bit_identical(env, twin, w)
            assert obs[w].numpy().tobytes() == t_obs[w].numpy().tobytes()
            assert reward[w].item() == t_reward[w].item()
    for a in actions[4:]:  # the bad world was reset in the same step and continues cleanly
        obs, _, _, _, info = env.step(a)
        twin.step(a)
        assert not info["nonfinite_state"].any() and torch.isfinite(obs).all()
    for w in range(n):
        if w != bad:
            assert_world_bit_identical(env, twin, w)


@pytest.mark.parametrize("env_id", [CLOTH, SOFT])
def test_a_finite_but_far_out_particle_ends_its_world_instead_of_scoring_zero(env_id):
    """A particle 1e30 m away is finite, but the distances of the reward terms overflow: the world must end as a
    non-finite state (a term replaced by 0 would otherwise be the best possible reward)."""
    env, twin = make(env_id, 2, seed=3), make(env_id, 2, seed=3)
    start = env.model.particle_world_start.numpy()[1]
    q = env.state_0.particle_q.numpy()
    q[start + 5] = (1e30, 0.0, 0.0)
    env.state_0.particle_q.assign(q)
    actions = torch.zeros(2, env.action_dim)
    _, reward, terminated, _, info = env.step(actions)
    twin.step(actions)
    assert info["nonfinite_state"].numpy().tolist() == [False, True] and terminated[1]
    assert torch.isfinite(reward).all()
    assert_world_bit_identical(env, twin, 0)


def test_a_nonfinite_held_cloth_corner_ends_its_world():
    env = make(CLOTH, 2, seed=0)
    q = env.state_0.particle_q.numpy()
    q[env.model.particle_world_start.numpy()[1] + env.grasped_corners[0]] = np.nan
    env.state_0.particle_q.assign(q)
    _, _, terminated, _, info = env.step(torch.zeros(2, 6))
    assert info["nonfinite_state"].numpy().tolist() == [False, True] and terminated[1]


def test_a_body_particle_contact_overflow_ends_only_the_world_in_contact():
    options = {"rigid_body_particle_contact_buffer_size": 4}
    env = make(SOFT, 2, seed=0, block_spawn=0.0, solver_options=options)
    twin = make(SOFT, 2, seed=0, block_spawn=0.0, solver_options=options, autoreset_mode="Disabled")
    actions = torch.tensor([[1.0, 0.0], [-1.0, 0.0]])  # world 0 drives into the block, world 1 away from it
    with pytest.warns(RuntimeWarning, match=r"rigid_body_particle_contact_buffer_size \(now 4\)"):
        for _ in range(20):
            _, _, terminated, truncated, info = env.step(actions)
            twin.step(actions)
            if info["constraint_overflow"].any():
                break
    assert info["constraint_overflow"].numpy().tolist() == [True, False]
    assert truncated.numpy().tolist() == [True, False] and not terminated.any()
    assert info["episode"]["constraint_overflow"][0]
    assert_world_bit_identical(env, twin, 1)


def test_a_self_contact_overflow_is_reported_for_the_folding_world_only():
    env = make(CLOTH, 2, seed=0, solver_options={"particle_vertex_contact_buffer_size": 1})
    flagged = np.zeros(2, bool)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for _ in range(40):
            _, _, _, truncated, info = env.step(_fold_actions(env, 0))  # world 1 lies still
            flagged |= info["constraint_overflow"].numpy()
            if flagged[0]:
                assert truncated[0]
                break
    assert flagged.tolist() == [True, False]


def test_vbd_solver_options_reach_the_solver_and_bad_ones_are_rejected():
    env = make(SOFT, 1, solver_options={"iterations": 3, "rigid_body_contact_buffer_size": 16})
    assert isinstance(env, VBDVectorEnv)
    assert env.solver.iterations == 3 and env.solver.body_body_contact_buffer_pre_alloc == 16
    with pytest.raises(ValueError, match=r"unknown SolverVBD option\(s\) \['iterationz'\]"):
        make(SOFT, 1, solver_options={"iterationz": 3})
    with pytest.raises(ValueError, match=r"solver_options\['particle_enable_self_contact'\]: expected a bool"):
        make(CLOTH, 1, solver_options={"particle_enable_self_contact": 1})
    with pytest.raises(ValueError, match=r"solver_options\['friction_epsilon'\]: expected a finite"):
        make(CLOTH, 1, solver_options={"friction_epsilon": float("nan")})
    bad = {
        "iterations": (0, r"expected an int >= 1"),
        "particle_self_contact_margin": (-0.01, r"expected a number >= 0"),
        "rigid_body_particle_contact_buffer_size": (-1, r"expected an int >= 0"),
        "particle_external_vertex_contact_filtering_map": ([1, 2], r"expected a dict or None"),
        "integrate_with_external_rigid_solver": (True, r"unknown SolverVBD option"),
    }
    for name, (value, pattern) in bad.items():
        with pytest.raises(ValueError, match=pattern):
            make(SOFT, 1, solver_options={name: value})


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"randomize_mass_scale": (0.5, 2.0)}, "randomize_mass_scale: reset randomization is not supported"),
        ({"push_interval": 1.0, "push_velocity": 1.0}, "push_interval: pushes are not supported"),
        ({"cloth_cells": 7}, "cloth_cells: expected an even int"),
        ({"observation_stride": 3}, "observation_stride: expected an int >= 1 dividing cloth_cells"),
        ({"cloth_drop_height": 1.0}, "cloth_drop_height: expected below workspace_height"),
        ({"cloth_size": 3e38}, r"cloth_size: expected a number in \[0.05, 2\]"),
        ({"cloth_size": 1.5}, "cloth_size: expected at most 2 \\* workspace_half_extent"),
        ({"push_velocity": 1.0}, "push_velocity: pushes are not supported"),
        ({"obs_clip": 1e-40}, "obs_clip: expected a number >= 1"),
    ],
)
def test_bad_cloth_arguments_raise_naming_them(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        make(CLOTH, 1, **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"success_radius": 0.2}, "success_radius: expected below goal_range / 3"),
        ({"block_poisson_ratio": 0.5}, r"block_poisson_ratio: expected a number in \(0, 0.5\)"),
        ({"block_cells": 0}, r"block_cells: expected an int in \[1, 16\]"),
        ({"goal_range": 1e20}, r"goal_range: expected a number in \(0, 0.55\]"),
        ({"block_density": 1e-40}, r"block_density: expected a number in \[10, 10000\]"),
        ({"max_pusher_speed": 3e38}, r"max_pusher_speed: expected a number in"),
        ({"randomize_friction_scale": (0.5, 2.0)}, "randomize_friction_scale: reset randomization is not supported"),
    ],
)
def test_bad_soft_push_arguments_raise_naming_them(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        make(SOFT, 1, **kwargs)


def test_set_world_parameters_is_rejected_on_vbd_scenes():
    env = make(SOFT, 2)
    with pytest.raises(ValueError, match="set_world_parameters: not supported on SolverVBD scenes"):
        env.set_world_parameters(friction_scale=[1.0, 2.0])


@pytest.mark.parametrize(("env_id", "action"), [(CLOTH, [0.0, 0.0, 1.0, 0.0, 0.0, 1.0]), (SOFT, [1.0, 0.0])])
def test_frames_are_not_constant_and_follow_the_state(env_id, action):
    env = make(env_id, 1, seed=0, render_mode="rgb_array", autoreset_mode="Disabled")
    first = env.render()
    assert first.shape == (240, 320, 3) and first.dtype == np.uint8 and first.std() > 1.0
    for _ in range(6):
        env.step(torch.tensor([action]))
    assert np.abs(env.render().astype(np.int16) - first).mean() > 0.2


def test_an_overflow_of_the_pipelines_soft_contact_total_ends_every_world():
    """The collision pipeline's soft-contact total is global: contacts beyond ``soft_contact_max`` cannot be
    attributed to a world, so every world ends (the final entry of the overflow flags)."""

    # Each block rests 25 particles on the ground.
    env = SoftPushEnv(2, device="cpu", seed=0, collision_options={"soft_contact_max": 16})
    with pytest.warns(RuntimeWarning, match="global"):
        _, _, terminated, truncated, info = env.step(torch.zeros(2, 2))
    assert info["constraint_overflow"].all() and truncated.all() and not terminated.any()


def test_an_overflow_of_a_solver_owned_pipelines_soft_contacts_ends_every_world(monkeypatch):
    """ClothFold-v0's pipeline belongs to SolverVBD (``rigid_soft_enable_dat``); its capacity is
    ``soft_contacts_per_particle`` times the particles. The cloth lies within the contact gap of the ground, one
    contact per particle, so half a contact per particle overflows at the first step."""
    cls = steel_envs.task_class(CLOTH)
    monkeypatch.setattr(cls, "soft_contacts_per_particle", 0.5)
    env = make(CLOTH, 2, seed=0)
    assert env.solver.contacts.soft_contact_max == math.ceil(0.5 * env.model.particle_count)
    with pytest.warns(RuntimeWarning, match="soft_contacts_per_particle"):
        _, _, terminated, truncated, info = env.step(torch.zeros(2, env.action_dim))
    assert info["constraint_overflow"].all() and truncated.all() and not terminated.any()
    env.close()
