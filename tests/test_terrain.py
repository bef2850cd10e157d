"""Rough ground: the terrain generator against its geometry computed here, the height scan against a lookup done
here, Newton's contacts with the heightfield and the mesh against the surface, and the terrain curriculum's rule."""

from __future__ import annotations

import math

import newton
import numpy as np
import pytest
import torch
from conftest import make
from scipy.spatial.transform import Rotation
from steel_envs.envs.terrain import TERRAIN_TYPES, TerrainConfig, generate_terrain

import steel_envs
from steel_envs.doctor.check import Sample
from steel_envs.doctor.penetration import BodyPenetration, Ground

ROUGH_ID = "steel_envs/Go1VelocityRough-v0"
TERRAIN = generate_terrain()
COLUMN = {kind: i for i, kind in enumerate(TERRAIN_TYPES)}


def _only(kind: str) -> tuple[float, ...]:
    """Terrain proportions putting every world on ``kind``."""
    return tuple(float(k == kind) for k in TERRAIN_TYPES)


def test_patches_have_the_geometry_their_parameters_give() -> None:
    """At level L (difficulty L / 9): a pyramid face rises at slope 1.0 d (rise over run, along a patch axis), stairs
    step 0.1 d m per 0.3 m tread up to a platform 6 risers high (5 steps), the inverted ones mirror them, every patch
    meets its neighbours at z = 0, and every platform is flat around its spawn point."""
    t, c = TERRAIN, TERRAIN.config
    for level in (3, 9):
        d = level / 9
        for kind in ("pyramid_slope", "pyramid_slope_inv"):
            x, y, _ = t.spawn[level, COLUMN[kind]]
            # Along the patch's x axis through its centre, between the edge frame and the platform.
            xs = x - 4.0 + np.array([0.6, 1.0, 1.5, 2.2])
            slope = np.diff(t.height_at(xs, np.full(4, y))) / np.diff(xs)
            np.testing.assert_allclose(slope, (1.0 if kind == "pyramid_slope" else -1.0) * d, atol=1e-5)
        for kind, sign in (("pyramid_stairs", 1.0), ("pyramid_stairs_inv", -1.0)):
            x, y, z = t.spawn[level, COLUMN[kind]]
            # Tread k (k = 1..5) spans 1 + 0.3 (k - 1) to 1 + 0.3 k m inside the patch edge; its middle:
            treads = x - 4.0 + 1.0 + 0.3 * (np.arange(1, 6) - 0.5)
            np.testing.assert_allclose(t.height_at(treads, np.full(5, y)), sign * 0.1 * d * np.arange(1, 6), atol=1e-6)
            assert z == pytest.approx(sign * 0.1 * d * 6, abs=1e-6)
    edges = t.heights[:, :: round(c.patch_size / c.resolution)]
    np.testing.assert_array_equal(edges[round(c.border / c.resolution) : -round(c.border / c.resolution)], 0.0)
    offsets = np.linspace(-0.45, 0.45, 7)
    gx, gy = np.meshgrid(offsets, offsets)
    for level in range(c.levels):
        for column in range(len(c.types)):
            x, y, z = t.spawn[level, column]
            np.testing.assert_allclose(t.height_at(x + gx, y + gy), z, atol=1e-6)


def test_the_generator_is_seeded_and_refuses_bad_input_in_one_line() -> None:
    a, b = generate_terrain(seed=4, levels=3), generate_terrain(seed=4, levels=3)
    np.testing.assert_array_equal(a.heights, b.heights)
    assert not np.array_equal(a.heights, generate_terrain(seed=5, levels=3).heights)
    for fields, name in (
        ({"types": ("flat", "lava")}, "types"),
        ({"levels": 0}, "levels"),
        ({"patch_size": -8.0}, "patch_size"),
        ({"resolution": 0.3}, "resolution"),
        ({"obstacle_count": -1}, "obstacle_count"),
    ):
        with pytest.raises(ValueError, match=f"^{name}: ") as err:
            TerrainConfig(**fields)
        assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match=r"^terrain_level: "):
        make(ROUGH_ID, 1, terrain_level=10)
    with pytest.raises(ValueError, match=r"^terrain_geometry: "):
        make(ROUGH_ID, 1, terrain_geometry="voxels")


def test_the_height_scan_reads_the_terrain_under_a_turned_base_and_not_the_robot() -> None:
    """The scan is the base height minus the surface height (this module's lookup, on Newton's triangles) at the 187
    grid points turned by the base's yaw, on the hardest random rough patch after steps that turned the robot; on flat
    ground under the robot's own trunk and legs it is the base height, at every point."""
    env = make(ROUGH_ID, 4, terrain_level=9, terrain_proportions=_only("random_rough"), randomize=False)
    obs, _ = env.reset(seed=1)
    scan = slice(48, 48 + 187)
    grid = np.stack(np.meshgrid(np.arange(17) * 0.1 - 0.8, np.arange(11) * 0.1 - 0.5), -1).reshape(-1, 2)
    for _ in range(10):
        obs, *_ = env.step(torch.rand(4, 12) * 0.4 - 0.2)
    body_q = env.state_0.body_q.numpy().reshape(4, -1, 7)[:, 0]
    for w in range(4):
        yaw = Rotation.from_quat(body_q[w, 3:]).as_euler("ZYX")[0]
        c, s = math.cos(yaw), math.sin(yaw)
        x = body_q[w, 0] + c * grid[:, 0] - s * grid[:, 1]
        y = body_q[w, 1] + s * grid[:, 0] + c * grid[:, 1]
        np.testing.assert_allclose(obs[w, scan].numpy(), body_q[w, 2] - TERRAIN.height_at(x, y), atol=2e-5)
    assert np.ptp(obs[:, scan].numpy()) > 0.05  # the scan sees the rough ground beyond the 1 m platform
    flat = make(ROUGH_ID, 2, terrain_level=0, terrain_proportions=_only("flat"), randomize=False)
    obs, _ = flat.reset(seed=0)
    base_z = flat.state_0.body_q.numpy().reshape(2, -1, 7)[:, 0, 2]
    np.testing.assert_allclose(obs[:, scan].numpy(), np.repeat(base_z[:, None], 187, 1), atol=1e-6)


@pytest.mark.parametrize("geometry", ["heightfield", "mesh"])
def test_feet_pushed_into_a_tread_are_measured_at_their_depth(geometry: str) -> None:
    """A standing Go1 lowered onto level 9's stairs platform (z = 0.6 m) until its lowest foot sphere is 4 mm into
    it: the doctor's probe measures 4 mm on the heightfield and the mesh (Newton's contact with the surface the
    generator made), and the env's penetration end cause (limit 5 mm) stays quiet; 7 mm in, it fires."""
    env = make(
        ROUGH_ID,
        1,
        terrain_level=9,
        terrain_proportions=_only("pyramid_stairs"),
        terrain_geometry=geometry,
        randomize=False,
    )
    env.reset(seed=0)
    m, state = env.model, env.state_0
    surface = TERRAIN.spawn[9, COLUMN["pyramid_stairs"], 2]
    shapes = [i for i, label in enumerate(m.shape_label) if label.endswith("_foot_collision")]
    radius = m.shape_scale.numpy()[shapes, 0]
    feet, offsets = m.shape_body.numpy()[shapes], m.shape_transform.numpy()[shapes, :3]
    for depth in (0.004, 0.007):
        newton.eval_fk(m, state.joint_q, state.joint_qd, state)
        body_q = state.body_q.numpy()[feet]
        centres = body_q[:, :3] + Rotation.from_quat(body_q[:, 3:]).apply(offsets)
        lowest = float(np.min(centres[:, 2] - radius))
        q = state.joint_q.numpy()
        q[2] += surface - lowest - depth
        state.joint_q.assign(q)
        newton.eval_fk(m, state.joint_q, state.joint_qd, state)
        probe = BodyPenetration(env, Ground(m))
        probe.observe(Sample("zero", fresh=np.zeros(1, bool)))
        assert probe.worst["stepped"][0] == pytest.approx(depth, abs=2e-4)
        env.collision_pipeline.collide(state, env.contacts)  # the env's contacts of this state, as after a step
        env.penetration.measure()
        assert bool(env.penetration.flags.numpy()[0, 0]) == (depth > 0.005)


def test_the_curriculum_moves_worlds_by_the_distance_they_walked() -> None:
    """legged_gym's rule at a reset: more than half a patch (4 m) from the spawn point moves a world up a level; less
    than half its commanded distance (|cmd| x the time limit, here 2 steps = 0.04 s, x 0.5) moves it down; a world
    past the top level gets a uniform level; the first reset draws levels 0-4; the ended episodes report their
    level."""
    n = 8
    env = make(ROUGH_ID, n, randomize=False, max_episode_steps=2)
    env.reset(seed=2)
    first = env.term_state.terrain_level.numpy().copy()
    assert set(first) <= {0.0, 1.0, 2.0, 3.0, 4.0}
    _, _, _, truncated, info = env.step(torch.zeros(n, 12))
    _, _, _, truncated, info = env.step(torch.zeros(n, 12))
    assert truncated.all()
    np.testing.assert_array_equal(info["episode"]["terrain_level"].numpy(), first)
    env.step(torch.zeros(n, 12))  # one step into the next episodes, on levels the rule set from ~0 m walked
    levels = env.term_state.terrain_level.numpy().copy()
    levels[4:] = 9.0
    env.term_state.terrain_level.assign(levels)
    origin = env.state_0.body_q.numpy().reshape(n, -1, 7)[:, 0, :3].copy()
    # (walked [m], command vx [m/s]) per world.
    walked = np.array([5.0, 0.0, 0.0, 0.005, 5.0, 5.0, 5.0, 5.0])  # world 3: under 0.5 m/s x 0.04 s x 0.5
    command = np.array([1.0, 1.0, 0.0, 0.5, 1.0, 1.0, 1.0, 1.0])
    body_q = env.state_0.body_q.numpy().reshape(n, -1, 7)
    body_q[:, 0, 0] = origin[:, 0] + walked
    env.state_0.body_q.assign(body_q.reshape(-1, 7))
    commands = np.zeros((n, 3), np.float32)
    commands[:, 0] = command
    env.term_state.commands.assign(commands)
    env.reset(options={"reset_mask": np.ones(n, bool)})
    after = env.term_state.terrain_level.numpy()
    expected = np.clip(levels[:4] + np.array([1, -1, 0, -1]), 0, None)
    np.testing.assert_array_equal(after[:4], expected, err_msg=f"{levels[:4]} -> {after[:4]}")
    assert set(after[4:]) <= set(np.arange(10.0)) and not (after[4:] == 9.0).all()


def test_reset_puts_the_worlds_on_the_levels_asked_for_in_one_process_and_sharded() -> None:
    """``reset(options={"terrain_level": levels})`` starts each reset world on its level's patch (its x is that
    level's column of patches), with the observations of a one-process env over two shards too; a bad level is
    refused in one line and resets nothing."""
    levels = np.array([9, 0, 5, 7])
    x_of_level = TERRAIN.spawn[:, 0, 0]
    one = make(ROUGH_ID, 4, randomize=False)
    two = steel_envs.make_vec(ROUGH_ID, 4, num_shards=2, randomize=False)
    try:
        observed = []
        for env in (one, two):
            env.reset(seed=0)
            obs, _ = env.reset(options={"terrain_level": torch.tensor(levels)})
            observed.append(obs.clone())
            for bad in (torch.tensor([0, 1, 2, 10]), torch.tensor([0.0, 1.0, 2.0, 3.0]), np.zeros(3, np.int64)):
                with pytest.raises(ValueError, match=r"^options\['terrain_level'\]: ") as err:
                    env.reset(options={"terrain_level": bad})
                assert "\n" not in str(err.value)
            mask = np.array([True, False, False, False])
            again, _ = env.reset(options={"terrain_level": torch.tensor(levels), "reset_mask": mask})
            assert torch.equal(again[1:], observed[-1][1:])
        assert torch.equal(observed[0], observed[1])
        x = one.state_0.body_q.numpy().reshape(4, -1, 7)[:, 0, 0]
        np.testing.assert_allclose(x, x_of_level[levels], atol=1e-4)
        np.testing.assert_array_equal(one.term_state.terrain_level.numpy(), levels)
        # A world a masked reset leaves alone takes no level from it: its next reset is its own.
        only_first = np.array([True, False, False, False])
        one.reset(options={"terrain_level": torch.tensor([0, 9, 9, 9]), "reset_mask": only_first})
        one.reset(options={"reset_mask": ~only_first})
        after = one.term_state.terrain_level.numpy()
        assert after[0] == 0 and not (after[1:] == 9).all(), after
    finally:
        one.close()
        two.close()


def test_g1_starts_on_the_platform_of_its_patch_and_scans_from_its_pelvis() -> None:
    """G1VelocityRough-v0 at level 9: every world's pelvis starts at a spawn point of that level, 0.76 m above the
    platform (the flat scene's height), no foot inside the surface, upright with some heading; the scan (in the
    policy group, and once in the critic's) is the pelvis height above the terrain (this module's lookup) at the
    yaw-turned grid."""
    n = 6
    env = make("steel_envs/G1VelocityRough-v0", n, terrain_level=9, randomize=False)
    obs, _ = env.reset(seed=3)
    body_q = env.state_0.body_q.numpy().reshape(n, -1, 7)
    pelvis = body_q[:, 0]
    spawn = TERRAIN.spawn[9]
    nearest = np.argmin(np.linalg.norm(pelvis[:, None, :2] - spawn[None, :, :2], axis=-1), axis=1)
    np.testing.assert_allclose(pelvis[:, :2], spawn[nearest, :2], atol=1e-5)
    np.testing.assert_allclose(pelvis[:, 2] - spawn[nearest, 2], 0.76, atol=1e-5)
    up = Rotation.from_quat(pelvis[:, 3:]).apply([0.0, 0.0, 1.0])
    np.testing.assert_allclose(up[:, 2], 1.0, atol=1e-6)
    labels = [label.rsplit("/", 1)[-1] for label in env.model.body_label[: body_q.shape[1]]]
    feet = body_q[:, [labels.index(name) for name in ("left_ankle_roll_link", "right_ankle_roll_link")]]
    assert (feet[..., 2] - TERRAIN.height_at(feet[..., 0], feet[..., 1]) > 0.0).all()
    grid = np.stack(np.meshgrid(np.arange(17) * 0.1 - 0.8, np.arange(11) * 0.1 - 0.5), -1).reshape(-1, 2)
    critic = env.observation_groups["critic"]
    for w in range(n):
        yaw = Rotation.from_quat(pelvis[w, 3:]).as_euler("ZYX")[0]
        c, s = math.cos(yaw), math.sin(yaw)
        x = pelvis[w, 0] + c * grid[:, 0] - s * grid[:, 1]
        y = pelvis[w, 1] + s * grid[:, 0] + c * grid[:, 1]
        np.testing.assert_allclose(obs[w, 99:].numpy(), pelvis[w, 2] - TERRAIN.height_at(x, y), atol=2e-5)
    assert critic.shape == (n, 286 + 12) and torch.equal(critic[:, 99:286], obs[:, 99:])  # the scan once


def test_go1_rough_upright_is_measured_against_the_ground_under_the_scan() -> None:
    """mjlab's rough Go1 ``upright``: the trunk's tilt from the normal of the plane fitted to the ground under the
    height scan. Above the descending side of a level-5 pyramid (legged_gym's bilinear pyramid: a plane fitted here
    with numpy to the terrain's heights at the turned grid), a level trunk scores exp(-(n_x^2 + n_y^2) / 0.2) with n
    that plane's normal in its frame, and a trunk turned onto the normal scores 1."""
    env = make(ROUGH_ID, 2, terrain_level=5, terrain_proportions=_only("pyramid_slope"), randomize=False)
    env.reset(seed=0)
    spawn = TERRAIN.spawn[5, COLUMN["pyramid_slope"]]
    grid = np.stack(np.meshgrid(np.arange(17) * 0.1 - 0.8, np.arange(11) * 0.1 - 0.5), -1).reshape(-1, 2)
    design = np.c_[grid, np.ones(len(grid))]
    x0 = spawn[0] + 2.6  # the scan's 1.6 m x 1.0 m lie beyond the platform, on the side descending along +x
    heights = TERRAIN.height_at(x0 + grid[:, 0], spawn[1] + grid[:, 1])
    slope = math.atan(-np.linalg.lstsq(design, heights, rcond=None)[0][0])
    assert slope > 0.4  # a real slope (27 degrees), which a world-up reference would score the same as level
    q = env.state_0.joint_q.numpy().reshape(2, -1)
    q[:, :3] = (x0, spawn[1], heights.max() + 0.5)
    q[0, 3:7] = (0.0, 0.0, 0.0, 1.0)  # level
    q[1, 3:7] = Rotation.from_euler("y", slope).as_quat()  # its z axis on the fitted plane's normal
    env.state_0.joint_q.assign(q.reshape(-1))
    env.state_0.joint_qd.zero_()
    newton.eval_fk(env.model, env.state_0.joint_q, env.state_0.joint_qd, env.state_0)
    env.solver.reset(env.state_0)
    _, _, _, _, info = env.step(torch.zeros(2, 12))  # 20 ms of free fall: no contact turns the trunk
    weight = env.config.upright_weight
    body_q = env.state_0.body_q.numpy().reshape(2, -1, 7)[:, 0]
    for w in range(2):
        rot = Rotation.from_quat(body_q[w, 3:])
        yaw = rot.as_euler("ZYX")[0]
        c, s = math.cos(yaw), math.sin(yaw)
        x = body_q[w, 0] + c * grid[:, 0] - s * grid[:, 1]
        y = body_q[w, 1] + s * grid[:, 0] + c * grid[:, 1]
        a, b, _ = np.linalg.lstsq(design, TERRAIN.height_at(x, y), rcond=None)[0]
        normal = np.array([c * -a + s * b, s * -a - c * b, 1.0])  # the yaw frame's (-a, -b, 1) turned to the world
        n = rot.inv().apply(normal / np.linalg.norm(normal))
        expected = weight * math.exp(-(n[0] ** 2 + n[1] ** 2) / 0.2)
        assert float(info["reward_upright"][w]) == pytest.approx(expected, rel=1e-4)
    assert float(info["reward_upright"][0]) == pytest.approx(weight * math.exp(-(math.sin(slope) ** 2) / 0.2), rel=1e-2)
    assert float(info["reward_upright"][1]) == pytest.approx(weight, rel=1e-3)


def test_go1_rough_costs_shank_and_trunk_contacts_and_ends_on_thigh_contact() -> None:
    """mjlab's rough Go1 contact terms against the bodies' contact forces read here: a calf (trunk) touching with
    more than 10 N costs 0.002 x 4 physics steps; a thigh touching ends the episode; no episode ends by tilt."""
    env = make(ROUGH_ID, 8, terrain_level=9, randomize=False, autoreset_mode="Disabled")  # the wrench the terms read
    env.reset(seed=0)
    labels = [label.rsplit("/", 1)[-1] for label in env.model.body_label[: env.bodies_per_world]]
    calves = [i for i, name in enumerate(labels) if name.endswith("_calf")]
    thighs = [i for i, name in enumerate(labels) if name.endswith("_thigh")]
    seen = {"shank": 0, "thigh": 0}
    generator = torch.Generator().manual_seed(0)
    for _ in range(60):
        _, _, _, _, info = env.step(torch.rand(8, 12, generator=generator) * 2 - 1)
        force = np.linalg.norm(env.body_contact_wrench.numpy().reshape(8, -1, 6)[:, :, :3], axis=2)
        shank, thigh, trunk = (force[:, calves] > 10).any(1), (force[:, thighs] > 10).any(1), force[:, 0] > 10
        np.testing.assert_allclose(info["reward_shank_collision"].numpy(), -0.002 * 4 * shank, atol=1e-7)
        np.testing.assert_allclose(info["reward_base_collision"].numpy(), -0.002 * 4 * trunk, atol=1e-7)
        np.testing.assert_array_equal(info["thigh_contact"].numpy(), thigh)
        seen["shank"] += int(shank.sum())
        seen["thigh"] += int(thigh.sum())
    assert seen["shank"] > 0 and seen["thigh"] > 0, seen
    assert "fell_over" not in info and "base_contact" not in info
