"""The explicit actuator models of the Unitree scenes (``actuator="delayed_pd" | "dc_motor"``, from
:mod:`newton.actuators`) against the motor laws computed here: a DC motor's torque-speed line (stall torque at rest,
zero effort at the no-load speed) and a delay of exactly its physics steps, per world."""

from __future__ import annotations

import newton
import numpy as np
import pytest
import torch
from conftest import make

from steel_envs.assets import GO1

GO1_ID = "steel_envs/Go1Velocity-v0"
CALF = GO1.joints.index("FR_calf_joint")
CALF_DOF, CALF_COORD = 6 + CALF, 7 + CALF  # after the free base's 6 DOFs and 7 coordinates
STALL, NO_LOAD = float(GO1.effort_limit[CALF]), float(GO1.velocity_limit[CALF])  # 35.55 N m, 20.06 rad/s


def _lift(env, height: float) -> None:
    """Raise every world's robot by ``height`` [m] from its reset pose, at rest (it then falls freely: gravity does
    not act on the joints' relative motion)."""
    q, qd = env.state_0.joint_q.numpy(), env.state_0.joint_qd.numpy()
    q.reshape(env.num_envs, -1)[:, 2] += height
    env.state_0.joint_q.assign(q)
    env.state_0.joint_qd.assign(np.zeros_like(qd))
    newton.eval_fk(env.model, env.state_0.joint_q, env.state_0.joint_qd, env.state_0)
    env.solver.reset(env.state_0)


def _drive_calf(env, offset: float) -> None:
    """Set the front right calf's position target ``offset`` [rad] from its angle (the env's actions are bypassed:
    :meth:`physics` steps the current control)."""
    target = env.control.joint_target_q.numpy()
    target[CALF_COORD] = env.state_0.joint_q.numpy()[CALF_COORD] + offset
    env.control.joint_target_q.assign(target)


def test_a_dc_motor_reaches_its_no_load_speed_unloaded_and_gives_its_stall_torque_stalled() -> None:
    """Go1's calf motor (go1_constants.py: stall torque 35.55 N m, no-load speed 20.06 rad/s) driven by a target
    1000 rad away, the robot falling freely: without SolverSteel's velocity limit and joint limits it spins up to the
    no-load speed within 2 % (and not past it); pressed against its joint limit it gives the stall torque within 2 %;
    at half the no-load speed the motor line leaves half the stall torque. SolverSteel's implicit drive rows
    (``actuator="pd"``) have no speed law: the same drive spins the calf past the no-load speed."""
    free = {"enable_joint_limits": False, "enable_joint_velocity_limits": False}
    speeds = {}
    for actuator in ("dc_motor", "pd"):
        env = make(GO1_ID, 1, actuator=actuator, randomize=False, solver_options=free)
        env.reset(seed=0)
        _lift(env, 5.0)
        _drive_calf(env, 1000.0)
        for _ in range(15):  # 0.3 s; the calf's time constant is ~10 ms
            env.physics()
        speeds[actuator] = float(env.state_0.joint_qd.numpy()[CALF_DOF])
        env.close()
    assert abs(speeds["dc_motor"] - NO_LOAD) < 0.02 * NO_LOAD, speeds
    assert speeds["pd"] > 1.1 * NO_LOAD, speeds

    env = make(GO1_ID, 1, actuator="dc_motor", randomize=False)
    env.reset(seed=0)
    _lift(env, 5.0)
    _drive_calf(env, 1000.0)  # past the calf's upper limit (-0.89 rad)
    for _ in range(15):
        env.physics()
    qd = float(env.state_0.joint_qd.numpy()[CALF_DOF])
    assert abs(qd) < 0.1, qd  # at rest against the limit
    effort = float(env.control.joint_f.numpy()[CALF_DOF])
    assert abs(effort - STALL) < 0.02 * STALL, effort

    qd_all = env.state_0.joint_qd.numpy()
    qd_all[CALF_DOF] = 0.5 * NO_LOAD
    env.state_0.joint_qd.assign(qd_all)
    env.actuators.step(env.state_0, env.physics_dt)
    assert abs(float(env.control.joint_f.numpy()[CALF_DOF]) - 0.5 * STALL) < 0.02 * STALL
    env.close()


def test_the_delay_delays_by_exactly_its_steps_per_world() -> None:
    """``actuator="delayed_pd"``: with a delay of d physics steps, the effort follows a changed target on the d-th
    step after the change and the PD law k_p (q* - q) - k_d qd of the old target before (state held fixed); the
    delays drawn per world at reset lie in ``actuator_delay`` and differ between worlds; resetting one world leaves
    another's delay and buffer bit for bit."""
    kp, kd = float(GO1.stiffness[CALF]), float(GO1.damping[CALF])
    for d in (0, 3):
        env = make(GO1_ID, 1, actuator="delayed_pd", actuator_delay=(d, d), randomize=False)
        env.reset(seed=0)
        q = float(env.state_0.joint_q.numpy()[CALF_COORD])
        qd = float(env.state_0.joint_qd.numpy()[CALF_DOF])
        efforts = []
        for k in range(8):
            _drive_calf(env, 0.1 if k < 4 else -0.1)  # the target changes before step 4
            env.actuators.step(env.state_0, env.physics_dt)
            efforts.append(float(env.control.joint_f.numpy()[CALF_DOF]))
        old, new = kp * 0.1 - kd * qd, kp * -0.1 - kd * qd
        expected = [old] * (4 + d) + [new] * (4 - d)
        np.testing.assert_allclose(efforts, expected, rtol=1e-5, atol=1e-5, err_msg=f"delay {d}, q {q}")
        env.close()

    env = make(GO1_ID, 16, actuator="delayed_pd", actuator_delay=(0, 4), randomize=False)
    env.reset(seed=0)
    delays = env.actuators.delay_steps.numpy().reshape(16, -1)
    assert np.all(delays == delays[:, :1]) and set(delays[:, 0]) <= set(range(5)) and len(set(delays[:, 0])) >= 3
    for _ in range(3):
        env.step(torch.zeros(16, 12))
    buffer = env.actuators.state.delay_state.buffer_pos.numpy().reshape(-1, 16, 12)
    mask = np.zeros(16, bool)
    mask[0] = True
    env.reset(options={"reset_mask": mask})
    after = env.actuators.state.delay_state.buffer_pos.numpy().reshape(-1, 16, 12)
    np.testing.assert_array_equal(after[:, 1:], buffer[:, 1:])
    assert not after[:, 0].any()
    np.testing.assert_array_equal(env.actuators.delay_steps.numpy().reshape(16, -1)[1:], delays[1:])
    env.close()


def test_the_explicit_models_stand_within_the_effort_limit() -> None:
    """Under zero actions for 2 s the Go1 stands as with the drive rows (base height within 1 cm of theirs), the
    efforts stay within the motors' limits, and bad model names or delays are one ValueError line each."""
    heights, efforts = {}, {}
    for model in ("pd", "delayed_pd", "dc_motor"):
        env = make(GO1_ID, 2, actuator=model, randomize=False)
        env.reset(seed=0)
        for _ in range(100):
            env.step(torch.zeros(2, 12))
        heights[model] = env.state_0.joint_q.numpy().reshape(2, -1)[:, 2]
        efforts[model] = np.abs(env.control.joint_f.numpy().reshape(2, -1)[:, 6:])
        env.close()
    for model in ("delayed_pd", "dc_motor"):
        np.testing.assert_allclose(heights[model], heights["pd"], atol=0.01, err_msg=model)
        assert np.all(efforts[model] <= GO1.effort_limit * (1 + 1e-6)) and efforts[model].max() > 1.0, model
    with pytest.raises(ValueError, match="actuator: expected one of"):
        make(GO1_ID, 1, actuator="servo")
    with pytest.raises(ValueError, match="actuator_delay: expected"):
        make(GO1_ID, 1, actuator="delayed_pd", actuator_delay=(3, 1))
