"""rgb_array rendering through Newton's SensorCamera, tiled worlds, and video files."""

from __future__ import annotations

import gc
import weakref

import gymnasium as gym
import numpy as np
import pytest
import torch
from conftest import ANT, CARTPOLE, make, random_actions

SIZE = (64, 48)


def test_frame_shape_dtype_and_content_follow_the_state():
    env = make(CARTPOLE, 2, seed=0, render_mode="rgb_array", render_size=SIZE, autoreset_mode="Disabled")
    first = env.render()
    assert first.shape == (48, 64, 3) and first.dtype == np.uint8
    assert first.std() > 5.0, "not a constant frame"
    for _ in range(25):  # the pole falls: the picture changes
        env.step(torch.ones(2, 1))
    assert np.abs(env.render().astype(int) - first.astype(int)).sum() > 0


def test_tiled_frame_of_several_worlds_and_no_render_mode():
    env = make(ANT, 4, seed=0, render_mode="rgb_array", render_size=SIZE, render_num_worlds=4)
    grid = env.render()
    assert grid.shape == (2 * 48, 2 * 64, 3)
    tiles = [grid[r * 48 : (r + 1) * 48, c * 64 : (c + 1) * 64] for r in range(2) for c in range(2)]
    assert all(t.std() > 5.0 for t in tiles)
    assert make(ANT, 1).render() is None


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"render_size": (0, 10)}, "render_size"),
        ({"render_num_worlds": 3}, "render_num_worlds"),
        ({"render_mode": "human"}, "render_mode"),
    ],
)
def test_bad_render_arguments_raise(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        make(CARTPOLE, 2, **kwargs)


def test_single_world_env_renders():
    env = gym.make(CARTPOLE, device="cpu", render_mode="rgb_array", render_size=SIZE)
    env.reset(seed=0)
    assert env.render().shape == (48, 64, 3)


@pytest.mark.parametrize("suffix", [".gif", ".mp4"])
def test_record_writes_a_readable_video(tmp_path, suffix):
    iio = pytest.importorskip("imageio.v3")
    from steel_envs.cli import main

    out = str(tmp_path / f"clip{suffix}")
    assert main(["record", CARTPOLE, "--steps", "6", "--out", out, "--size", "64x48", "--device", "cpu"]) == 0
    frames = iio.imread(out, index=None)
    assert frames.shape[0] == 7 and frames.shape[1:3] == (48, 64)


@pytest.mark.parametrize("mode", ["rgb", "depth"])
def test_pixel_observations_are_views_of_the_sensor_and_follow_each_world(mode):
    env = make(ANT, 3, seed=0, obs_mode=mode, render_size=SIZE)
    obs, _ = env.reset(seed=0)
    shape = (3, 48, 64, 3) if mode == "rgb" else (3, 48, 64)
    assert tuple(obs.shape) == shape and env.single_observation_space.shape == shape[1:]
    assert obs.dtype == (torch.uint8 if mode == "rgb" else torch.float32)
    ptr = obs.data_ptr()
    first = obs.clone()
    for a in random_actions(env, 5):
        obs, _, _, _, info = env.step(a)
    assert obs.data_ptr() == ptr and info["final_obs"].shape == obs.shape
    assert not torch.equal(obs, first), "the picture follows the state"
    assert all(env.single_observation_space.contains(o.numpy()) for o in obs)
    # Each world's view equals the same world rendered by render() of a twin with the same seed.
    twin = make(ANT, 3, seed=0, render_mode="rgb_array", render_size=SIZE, render_num_worlds=3)
    for a in random_actions(twin, 5):
        twin.step(a)
    if mode == "rgb":
        twin.render()
        assert np.array_equal(twin._renderer.frames(), obs.numpy())
    assert make(ANT, 1, obs_mode=mode, render_size=SIZE).single_observation_space.contains(
        make(ANT, 1, obs_mode=mode, render_size=SIZE, seed=1).reset(seed=1)[0][0].numpy()
    )


@pytest.mark.parametrize(("env_id", "mode"), [(ANT, "rgb"), (CARTPOLE, "depth")])
def test_pixel_single_world_env_passes_env_checker(env_id, mode):
    import warnings

    from gymnasium.utils.env_checker import check_env

    env = gym.make(env_id, device="cpu", obs_mode=mode, render_size=(16, 12))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    with pytest.raises(ValueError, match="obs_mode"):
        make(env_id, 1, obs_mode="lidar")


@pytest.mark.parametrize("kwargs", [{}, {"obs_mode": "rgb", "render_size": (8, 6)}, {"render_mode": "rgb_array"}])
def test_close_frees_the_env_without_a_garbage_collection(kwargs):
    """``close()`` breaks the env <-> camera cycle and drops the step graph: the env (and its device memory) goes
    with its last reference, not at a later collection (``bench`` builds many envs)."""
    gc.collect()
    gc.disable()
    try:
        env = make(CARTPOLE, 2, **kwargs)
        if env.render_mode is not None:
            env.render()
        alive = weakref.ref(env)
        env.close()
        del env
        assert alive() is None
    finally:
        gc.enable()


def test_pixel_observations_allocate_no_unused_image():
    env = make(CARTPOLE, 2, obs_mode="rgb", render_size=(8, 6))
    assert env.obs_pipeline.camera.color is None  # the sensor writes into the observation images only


def test_goal_markers_are_drawn_behind_nearer_surfaces_and_kept_out_of_pixel_observations():
    """PushCube's goals appear as green discs on rendered frames (``render``, ``record``), hidden where a nearer
    surface covers them, and never in pixel observations."""
    from steel_envs.rendering import GOAL_COLOR

    def marker_pixels(image) -> int:
        return int((np.asarray(image) == np.array(GOAL_COLOR, np.uint8)).all(-1).sum())

    env = make("steel_envs/PushCube-v0", 1, seed=0, render_mode="rgb_array", render_size=(160, 120))
    env.term_state.goals.assign(np.array([[0.25, -0.25]], np.float32))  # an open spot of the floor, in view
    seen = marker_pixels(env.render())
    assert seen >= 12
    cube = env.obs_pipeline.obs.numpy()[0, env.observation_layout["cube_pos"]][:2]
    env.term_state.goals.assign(cube[None].astype(np.float32))  # under the cube: covered by it
    assert marker_pixels(env.render()) < seen / 2
    env.term_state.goals.assign(np.array([[40.0, 40.0]], np.float32))  # far out of the view
    assert marker_pixels(env.render()) == 0
    renderer = env._renderer  # no surface anywhere (depth -1): a NaN goal or one behind the camera is still not drawn
    renderer.depth.assign(np.full(renderer.depth.shape, -1.0, np.float32))
    views = np.zeros((1, 120, 160, 3), np.uint8)
    behind = renderer.transforms.numpy()[0, :3] + np.array([0.0, -5.0, 0.0])  # the camera looks towards +y
    renderer._draw_goals(views, np.array([[[np.nan, 0.0, 0.0], behind]]))
    assert marker_pixels(views) == 0
    pixels = make("steel_envs/PushCube-v0", 1, seed=0, obs_mode="rgb", render_size=(160, 120))
    obs, _ = pixels.reset(seed=0)
    assert marker_pixels(obs[0].numpy()) == 0
