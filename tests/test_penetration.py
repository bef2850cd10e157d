"""The ``penetration`` end cause: a world whose body sinks deeper than ``penetration_limit`` into another shape, or
whose particle centre is below the ground plane, ends its episode (a truncation, or a termination with
``penetration_is_terminal``); the other worlds do not notice."""

from __future__ import annotations

import newton
import numpy as np
import pytest
import torch
from conftest import make

PUSH = "steel_envs/PushCube-v0"
CLOTH = "steel_envs/ClothFold-v0"
CUBE_Z = 2 + 2  # the cube's z among a world's coordinates: 2 gantry joints, then the free cube (x, y, z, ...)
CUBE_HALF = 0.05


def _sink_cube(env, world: int, depth: float) -> None:
    """Put world ``world``'s cube ``depth`` [m] into the ground (joint state, then forward kinematics)."""
    q = env.state_0.joint_q.numpy()
    q[int(env.model.joint_coord_world_start.numpy()[world]) + CUBE_Z] = CUBE_HALF - depth
    env.state_0.joint_q.assign(q)
    newton.eval_fk(env.model, env.state_0.joint_q, env.state_0.joint_qd, env.state_0)


@pytest.mark.parametrize("terminal", [False, True])
def test_a_sunk_cube_ends_only_its_world(terminal):
    env = make(PUSH, 3, seed=1, autoreset_mode="Disabled", penetration_limit=0.005, penetration_is_terminal=terminal)
    env.reset(seed=1)
    _sink_cube(env, 1, 0.04)  # 40 mm deep: one step of contact cannot push it out past the 5 mm limit
    _, _, terminated, truncated, info = env.step(torch.zeros(3, 2))
    assert info["penetration"].tolist() == [False, True, False]
    assert (terminated if terminal else truncated).tolist() == [False, True, False]
    assert not (truncated if terminal else terminated)[1]
    assert info["_episode"].tolist() == [False, True, False] and bool(info["episode"]["penetration"][1])
    env.reset(options={"reset_mask": np.array([False, True, False])})
    assert not info["penetration"].any()  # a reset clears its worlds' flag


def test_a_shallow_contact_and_a_disabled_limit_end_nothing():
    env = make(PUSH, 2, seed=1, autoreset_mode="Disabled", penetration_limit=0.005)
    env.reset(seed=1)
    _sink_cube(env, 0, 0.002)  # 2 mm: within the 5 mm limit
    info = env.step(torch.zeros(2, 2))[4]
    assert not info["penetration"].any() and not info["_episode"].any()
    off = make(PUSH, 2, seed=1, autoreset_mode="Disabled", penetration_limit=None)
    off.reset(seed=1)
    _sink_cube(off, 0, 0.04)
    assert not off.step(torch.zeros(2, 2))[4]["penetration"].any()
    with pytest.raises(ValueError, match="penetration_limit"):
        make(PUSH, 1, penetration_limit=0.0)


def test_a_particle_below_the_ground_ends_its_world():
    env = make(CLOTH, 2, seed=1, autoreset_mode="Disabled", penetration_limit=0.005)
    env.reset(seed=1)
    q = env.state_0.particle_q.numpy()
    start = int(env.model.particle_world_start.numpy()[1])
    q[start + 40, 2] = -0.5  # half a metre under the ground: one step cannot lift it back
    env.state_0.particle_q.assign(q)
    _, _, _, truncated, info = env.step(torch.zeros(2, 6))
    assert info["penetration"].tolist() == [False, True] and truncated.tolist() == [False, True]
