"""Nothing inside the captured step reads device data on the host, synchronizes or allocates.

On CUDA such a call inside a graph capture either invalidates the capture or records memory that belongs to the
graph; on the CPU Warp's capture records launches only, so the same mistakes pass silently. These tests
instrument Warp while every env captures its step on the CPU (the capture happens in the constructor) and fail
on any host read (``array.numpy()``, ``array.list()``, ``wp.synchronize*``) or allocation made while the device
is capturing, for every ID and every optional feature.
"""

from __future__ import annotations

import sys
import traceback
import types

import pytest
import warp as wp
from conftest import COVERED_BY, TASK_IDS, make
from warp._src import context as wp_context

FLOATING_BASE = {"steel_envs/AntRun-v0", "steel_envs/HumanoidRun-v0", "steel_envs/QuadrupedVelocity-v0"}
VBD = {"steel_envs/ClothFold-v0", "steel_envs/SoftPush-v0", "steel_envs/PandaClothLift-v0"}


def features(env_id: str, variant: int) -> dict:
    """Every optional feature that ``env_id`` supports, with autoreset mode and observation mode by variant."""
    kwargs: dict = {
        "obs_noise_std": 0.01 if variant == 0 else 0.0,  # state observations only
        "action_delay_steps": 2,
        "autoreset_mode": ("SameStep", "NextStep", "Disabled")[variant],
        "obs_mode": ("state", "rgb", "depth")[variant],
        "render_size": (8, 6),
        "nonfinite_actions": "end_episode",
        "penetration_limit": 0.005,  # the contact evaluation and its end cause run in the captured step
    }
    if env_id not in VBD:
        kwargs.update(
            randomize_mass_scale=(0.8, 1.2),
            randomize_friction_scale=(0.5, 1.5),
            randomize_drive_gain_scale=(0.8, 1.2),
        )
    if env_id in FLOATING_BASE:
        kwargs.update(push_interval=0.1, push_velocity=0.5)
    if env_id == "steel_envs/PandaReach-v0" and variant == 0:
        kwargs.update(action_mode="ee_delta_pose")  # newton.ik's solver inside the step
    return kwargs


@pytest.fixture
def host_calls_in_capture(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A list that receives a short stack for each host read, sync or allocation made while a capture runs."""
    calls: list[str] = []

    def capturing() -> bool:
        return any(d.is_capturing for d in (wp.get_device("cpu"),))

    def guard(name: str, original):
        def wrapper(*args, **kwargs):
            if capturing():
                stack = "".join(traceback.format_stack(limit=8)[:-1])
                calls.append(f"{name} during capture:\n{stack}")
            return original(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(wp.array, "numpy", guard("array.numpy", wp.array.numpy))
    monkeypatch.setattr(wp.array, "list", guard("array.list", wp.array.list))
    monkeypatch.setattr(wp, "synchronize", guard("wp.synchronize", wp.synchronize))
    monkeypatch.setattr(wp, "synchronize_device", guard("wp.synchronize_device", wp.synchronize_device))
    allocator = wp_context.CpuDefaultAllocator
    monkeypatch.setattr(allocator, "allocate", guard("allocation", allocator.allocate))
    return calls


# Every ID in the first two variants (the IDs other IDs cover, conftest.COVERED_BY, in the first only): each ID's task
# code in SameStep's and NextStep's resets, its scene in the rgb camera. The third (the depth image of the same camera,
# no reset in the step) runs code no ID changes: on a SolverSteel scene with contacts and a SolverVBD cloth.
_DEPTH_ON = ("steel_envs/AntRun-v0", "steel_envs/ClothFold-v0")
_VARIANTS = [
    (env_id, v)
    for v in (0, 1, 2)
    for env_id in TASK_IDS
    if v == 0 or (v == 1 and env_id not in COVERED_BY) or env_id in _DEPTH_ON
]


@pytest.mark.parametrize(
    ("env_id", "variant"),
    _VARIANTS,
    ids=[f"{env_id}-{('SameStep-state', 'NextStep-rgb', 'Disabled-depth')[v]}" for env_id, v in _VARIANTS],
)
def test_no_host_work_inside_the_captured_step(env_id: str, variant: int, host_calls_in_capture: list[str]) -> None:
    env = make(env_id, 2, **features(env_id, variant))
    try:
        assert env.graph_captured, "the step was not captured"
        assert not host_calls_in_capture, host_calls_in_capture[0]
    finally:
        env.close()


def test_the_guard_sees_a_host_read_inside_a_capture(host_calls_in_capture: list[str]) -> None:
    """The instrumentation itself works: a read and an allocation inside a CPU capture are reported."""
    a = wp.zeros(4, dtype=wp.float32, device="cpu")
    with wp.ScopedDevice("cpu"), wp.ScopedCapture():
        a.numpy()
        wp.zeros(4, dtype=wp.float32, device="cpu")
    assert [c.split(" ")[0] for c in host_calls_in_capture] == ["array.numpy", "allocation"]


def test_newton_profiling_does_not_put_a_sync_into_the_captured_camera(
    monkeypatch: pytest.MonkeyPatch, host_calls_in_capture: list[str]
) -> None:
    """``NEWTON_PROFILE=1`` makes ``SensorCamera.update`` time itself with ``wp.synchronize()``."""
    from newton._src.sensors import sensor_camera

    # Warp's timer opens NVTX ranges when profiling; the nvtx package is optional, so a stand-in records nothing.
    nvtx = types.ModuleType("nvtx")
    nvtx.start_range = lambda *args, **kwargs: 0
    nvtx.end_range = lambda *args, **kwargs: None
    monkeypatch.setitem(sys.modules, "nvtx", nvtx)
    monkeypatch.setattr(sensor_camera, "PROFILE_ENABLED", True)
    env = make("steel_envs/CartpoleBalance-v0", 2, obs_mode="rgb", render_size=(8, 6))
    try:
        assert not host_calls_in_capture, host_calls_in_capture[0]
        assert sensor_camera.PROFILE_ENABLED  # switched off during the capture only
    finally:
        env.close()
