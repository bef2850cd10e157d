"""Go1Velocity-v0 and G1Velocity-v0: mjlab's reward terms against their formulas computed here (numpy, SciPy), its
command distribution, and the domain randomization within mjlab's ranges (off with ``randomize=False``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from conftest import make, random_actions
from scipy.spatial.transform import Rotation

from steel_envs.assets import G1

GO1_ID, G1_ID = "steel_envs/Go1Velocity-v0", "steel_envs/G1Velocity-v0"


def _bodies(env) -> dict[str, int]:
    per_world = env.model.body_count // env.num_envs
    return {label.rsplit("/", 1)[-1]: i for i, label in enumerate(env.model.body_label[:per_world])}


def test_g1_terms_score_what_mjlabs_formulas_say() -> None:
    """Every G1 reward term with a per-step value (all but the touch-down terms, checked when they fire) equals
    mjlab's formula (``mjlab/tasks/velocity/mdp/rewards.py``) evaluated here on the state each step ended in, times
    its weight; the angular momentum from the bodies' masses, inertias and velocities."""
    env = make(G1_ID, 4, seed=3, randomize=False)
    env.reset(seed=3)
    c, n, names = env.config, env.num_envs, _bodies(env)
    pelvis, torso = names["pelvis"], names["torso_link"]
    feet = [names["left_ankle_roll_link"], names["right_ankle_roll_link"]]
    site = np.array([0.04, 0.0, -0.037])  # g1.xml:100,149
    per_world = len(names)
    mass = env.model.body_mass.numpy()[:per_world]
    com = env.model.body_com.numpy()[:per_world]
    inertia = env.model.body_inertia.numpy()[:per_world]
    # mjlab's pose tolerances (config/g1/env_cfgs.py:107-126), standing and walking, by joint-name fragment.
    walking = {"hip_pitch": 0.3, "hip_roll": 0.15, "hip_yaw": 0.15, "knee": 0.35, "ankle_pitch": 0.25}
    walking |= {"ankle_roll": 0.1, "waist_yaw": 0.2, "waist_roll": 0.08, "waist_pitch": 0.1, "shoulder_pitch": 0.15}
    walking |= {"shoulder_roll": 0.15, "shoulder_yaw": 0.1, "elbow": 0.15, "wrist": 0.3}
    std = np.array([[0.05] * 29, [next(v for k, v in walking.items() if k in j) for j in G1.joints]])
    prev, last = env.term_state.commands.numpy().copy(), torch.zeros(n, 29)
    exercised = set()
    for actions in random_actions(env, 15, seed=5):
        actions = actions * 0.3
        _, _, _, _, info = env.step(actions)
        cmd = env.term_state.commands.numpy()
        # The commands were updated after the rewards; the rewards scored those of the step before.
        body_q = env.state_0.body_q.numpy().reshape(n, -1, 7)
        body_qd = env.state_0.body_qd.numpy().reshape(n, -1, 6)
        q = env.state_0.joint_q.numpy().reshape(n, -1)[:, 7:]
        touching = np.linalg.norm(env.body_contact_wrench.numpy().reshape(n, -1, 6)[:, :, :3], axis=2) > 1.0
        for w in range(n):
            if info["_episode"][w]:
                continue
            r_base = Rotation.from_quat(body_q[w, pelvis, 3:])
            v, omega = r_base.inv().apply(body_qd[w, pelvis, :3]), r_base.inv().apply(body_qd[w, pelvis, 3:])
            g = Rotation.from_quat(body_q[w, torso, 3:]).inv().apply([0.0, 0.0, -1.0])
            speed = np.hypot(*prev[w, :2]) + abs(prev[w, 2])
            regime = 0 if speed < 0.05 else 1 if speed < 1.5 else 2
            if regime == 2:
                continue  # mjlab's running tolerances are not in this test's table
            active = speed > 0.05
            slip = clearance = 0.0
            for foot in feet:
                r = Rotation.from_quat(body_q[w, foot, 3:])
                point = body_q[w, foot, :3] + r.apply(site)
                lever = point - (body_q[w, foot, :3] + r.apply(com[foot]))
                vel = body_qd[w, foot, :3] + np.cross(body_qd[w, foot, 3:], lever)
                clearance += abs(point[2] - 0.1) * np.hypot(vel[0], vel[1])
                slip += (vel[0] ** 2 + vel[1] ** 2) * touching[w, foot]
            rot = Rotation.from_quat(body_q[w, :, 3:])
            centres = body_q[w, :, :3] + rot.apply(com)
            c_all = (mass[:, None] * centres).sum(0) / mass.sum()
            v_all = (mass[:, None] * body_qd[w, :, :3]).sum(0) / mass.sum()
            spin = sum(
                rot[i].as_matrix() @ inertia[i] @ rot[i].as_matrix().T @ body_qd[w, i, 3:] for i in range(per_world)
            )
            orbit = (mass[:, None] * np.cross(centres - c_all, body_qd[w, :, :3] - v_all)).sum(0)
            expected = {
                "track_linear_velocity": c.track_linear_velocity_weight
                * math.exp(-((prev[w, 0] - v[0]) ** 2 + (prev[w, 1] - v[1]) ** 2 + v[2] ** 2) / 0.25),
                "track_angular_velocity": c.track_angular_velocity_weight
                * math.exp(-((prev[w, 2] - omega[2]) ** 2 + omega[0] ** 2 + omega[1] ** 2) / 0.5),
                "upright": c.upright_weight * math.exp(-(g[0] ** 2 + g[1] ** 2) / 0.2),
                "pose": c.pose_weight * math.exp(-np.mean(((q[w] - G1.standing_pose) / std[regime]) ** 2)),
                "action_rate_l2": c.action_rate_weight * float(((actions[w] - last[w]) ** 2).sum()),
                "foot_clearance": c.foot_clearance_weight * clearance * active,
                "foot_slip": c.foot_slip_weight * slip * active,
                "body_ang_vel": c.body_ang_vel_weight * float(body_qd[w, torso, 3] ** 2 + body_qd[w, torso, 4] ** 2),
                "angular_momentum": c.angular_momentum_weight * float(np.sum((spin + orbit) ** 2)),
            }
            for name, value in expected.items():
                got = float(info[f"reward_{name}"][w])
                assert got == pytest.approx(value, rel=2e-4, abs=1e-8), (name, w)
                exercised |= {name} if value != 0.0 else set()
        prev, last = cmd.copy(), actions
    assert exercised >= {"track_linear_velocity", "pose", "foot_slip", "foot_clearance", "angular_momentum"}
    env.close()


def test_commands_follow_mjlabs_distribution_and_heading_mode_steers() -> None:
    """Over 2048 draws (256 worlds, 8 resets) the command modes occur at mjlab's rates (standing 0.1, heading 0.3,
    forward 0.2; within 4 standard errors), the ranges hold, the resample timer is in (3, 8) s, and a heading-mode
    world's yaw rate is clamp(0.5 wrap(target - yaw of the trunk's x axis), -0.5, 0.5)."""
    env = make(GO1_ID, 256, seed=0, randomize=False)
    c = env.commands
    trunk = _bodies(env)["trunk"]
    modes, cmds = [], []
    for k in range(8):
        env.reset(seed=k)
        cmd, mode = env.term_state.commands.numpy().copy(), c.mode.numpy().copy()
        target = c.heading_target.numpy()
        quat = env.state_0.body_q.numpy().reshape(256, -1, 7)[:, trunk, 3:]
        forward = Rotation.from_quat(quat).apply([1.0, 0.0, 0.0])
        error = np.angle(np.exp(1j * (target - np.arctan2(forward[:, 1], forward[:, 0]))))
        steer = (mode & 1).astype(bool) & ~(mode & 2).astype(bool)
        np.testing.assert_allclose(cmd[steer, 2], np.clip(0.5 * error[steer], -0.5, 0.5), atol=1e-5)
        assert ((c.time_left.numpy() > 3.0) & (c.time_left.numpy() < 8.0)).all()
        modes.append(mode)
        cmds.append(cmd)
    mode, cmd = np.concatenate(modes), np.concatenate(cmds)
    se = math.sqrt(0.25 / len(mode))
    standing = (mode & 2).astype(bool)
    assert abs(standing.mean() - 0.1) < 4 * se and (cmd[standing] == 0).all()
    assert abs((mode & 1).astype(bool).mean() - 0.3) < 4 * se
    free = ~standing & ~(mode & 1).astype(bool)
    forward_only = free & (cmd[:, 1] == 0) & (cmd[:, 2] == 0)
    assert abs(forward_only.sum() / free.sum() - 0.2) < 4 * math.sqrt(0.25 / free.sum())
    assert (cmd[forward_only, 0] >= 0.3).all()
    assert (np.abs(cmd[:, :2]) <= 1.0).all() and (np.abs(cmd[:, 2]) <= 0.5).all()
    env.close()


def test_randomization_is_mjlabs_and_randomize_false_turns_it_off() -> None:
    """randomize=True (default): per world, friction factors in (0.3, 1.5), encoder biases in +-0.015 rad, the
    trunk's centre of mass within (0.025, 0.025, 0.03) m of the model's, noise on the observations; a push adds
    at most mjlab's bounds to each of the base's six velocities; a masked reset leaves other worlds' draws as they
    were. randomize=False: none of it, and the policy observation equals the critic's head."""
    env = make(GO1_ID, 8, seed=2)
    trunk = _bodies(env)["trunk"]
    off = make(GO1_ID, 8, seed=2, randomize=False)
    obs, _ = env.reset(seed=2)
    obs_off, _ = off.reset(seed=2)
    per_world = env.model.body_count // 8
    com = env.model.body_com.numpy().reshape(8, per_world, 3)[:, trunk].copy()  # numpy() of a CPU array is a view
    com0 = off.model.body_com.numpy().reshape(8, per_world, 3)[:, trunk]
    assert (np.abs(com - com0) <= np.array([0.025, 0.025, 0.03]) + 1e-7).all() and len(np.unique(com[:, 0])) == 8
    bias = env.term_state.encoder_bias.numpy().copy()
    assert (np.abs(bias) <= 0.015).all() and np.unique(bias).size == bias.size
    friction = env.randomizer.friction_scale.numpy()
    assert ((friction >= 0.3) & (friction <= 1.5)).all() and np.unique(friction).size == 8
    critic = env.observation_groups["critic"]
    assert not torch.equal(obs, critic[:, : obs.shape[1]])
    assert off.term_state.encoder_bias.numpy().tolist() == np.zeros((8, 12)).tolist()
    assert (off.randomizer.friction_scale.numpy() == 1.0).all()
    assert torch.equal(obs_off, off.observation_groups["critic"][:, : obs_off.shape[1]])

    # A push: its timer forced due in every world; the base velocity change is within the bounds, every axis moves.
    qd0 = env.state_0.joint_qd.numpy().reshape(8, -1)[:, :6].copy()
    env._push_time_left.fill_(0.0)
    env._push(env._no_world, 0.02)
    dv = env.state_0.joint_qd.numpy().reshape(8, -1)[:, :6] - qd0
    assert (np.abs(dv) <= np.array([0.5, 0.5, 0.4, 0.52, 0.52, 0.78]) + 1e-6).all() and (dv != 0).all()
    times = env._push_time_left.numpy()
    assert ((times >= 1.0) & (times <= 3.0)).all()

    # A masked reset of world 3 redraws its bias and centre of mass only.
    mask = np.arange(8) == 3
    env.reset(options={"reset_mask": mask})
    com_after = env.model.body_com.numpy().reshape(8, per_world, 3)[:, trunk]
    bias_after = env.term_state.encoder_bias.numpy()
    assert com_after[~mask].tobytes() == com[~mask].tobytes() and (com_after[3] != com[3]).any()
    assert bias_after[~mask].tobytes() == bias[~mask].tobytes() and (bias_after[3] != bias[3]).all()
    env.close()
    off.close()


def test_the_no_base_lin_vel_variant_drops_the_block_from_the_policy_only() -> None:
    """``obs_variant="no_base_lin_vel"``: under the same actions the policy sees the default observation without
    its first 3 entries (the base velocity in the base frame, computed here from the trunk's state), the critic still
    sees that velocity (after the policy's blocks), the noise has one entry per observation and the deployment
    contract lists the blocks the policy sees; an unknown variant is one line."""
    from steel_envs.deployment import contract_of

    full = make(GO1_ID, 2, randomize=False)
    variant = make(GO1_ID, 2, obs_variant="no_base_lin_vel", randomize=False)
    full.reset(seed=0)
    variant.reset(seed=0)
    for a in random_actions(full, 5, seed=0):
        obs, *_ = full.step(a)
        seen, *_ = variant.step(a)
    trunk = variant.state_0.body_q.numpy().reshape(2, -1, 7)[:, 0]
    v_world = variant.state_0.body_qd.numpy().reshape(2, -1, 6)[:, 0, :3]
    v_base = Rotation.from_quat(trunk[:, 3:]).inv().apply(v_world)
    assert seen.shape == (2, 45) and torch.equal(seen, obs[:, 3:])
    critic = variant.observation_groups["critic"]
    np.testing.assert_allclose(critic[:, 45:48].numpy(), v_base, atol=1e-5)
    noisy = make(GO1_ID, 1, obs_variant="no_base_lin_vel")
    assert len(noisy.config.obs_noise_std) == 45 and noisy.config.obs_noise_std[0] == pytest.approx(0.2 / math.sqrt(3))
    assert [o.name for o in contract_of(noisy).observations][:2] == ["base_ang_vel", "projected_gravity"]
    with pytest.raises(
        ValueError, match=r"^obs_variant: expected one of \('mjlab', 'no_base_lin_vel', 'imu'\), got 'gps'$"
    ):
        make(GO1_ID, 1, obs_variant="gps")


def test_the_imu_reads_gravity_at_rest_nothing_in_free_fall_and_the_spin_on_the_gyro() -> None:
    """``obs_variant="imu"``: standing still, the accelerometer reads the specific force -g in the IMU's frame
    (+9.81 m/s^2 within 1 % along the site's up axis, which is -9.81 x the projected gravity the env also gives);
    raised 3 m from its reset pose (joints at rest at their targets: no internal motion) and let go, it reads 0
    while the robot falls; spun at 2 rad/s about z in the air, the gyro reads 2 rad/s. The critic keeps both base
    velocities."""
    import newton

    env = make(GO1_ID, 2, obs_variant="imu", randomize=False)
    env.reset(seed=0)
    layout = env.observation_layout
    assert list(layout)[:3] == ["imu_ang_vel", "imu_lin_acc", "projected_gravity"]
    assert env.observation_groups["critic"].shape == (2, 48 + 6 + 24)
    for _ in range(100):
        obs, *_ = env.step(torch.zeros(2, 12))
    acc = obs[:, layout["imu_lin_acc"]].numpy()
    assert np.all(np.abs(np.linalg.norm(acc, axis=1) - 9.81) < 0.0981) and np.all(np.abs(acc[:, 2] - 9.81) < 0.0981)
    np.testing.assert_allclose(acc, -9.81 * obs[:, layout["projected_gravity"]].numpy(), atol=0.1)

    for spin in (0.0, 2.0):
        env.reset(seed=0)
        q = env.state_0.joint_q.numpy().reshape(2, -1)
        qd = env.state_0.joint_qd.numpy().reshape(2, -1)
        q[:, 2] += 3.0
        qd[:, :6] = 0.0
        qd[:, 5] = spin
        env.state_0.joint_q.assign(q.reshape(-1))
        env.state_0.joint_qd.assign(qd.reshape(-1))
        newton.eval_fk(env.model, env.state_0.joint_q, env.state_0.joint_qd, env.state_0)
        env.solver.reset(env.state_0)
        for k in range(4):
            obs, *_ = env.step(torch.zeros(2, 12))
            if k == 0 and spin:  # the first step differences the spin set by hand
                continue
            acc, gyro = obs[:, layout["imu_lin_acc"]].numpy(), obs[:, layout["imu_ang_vel"]].numpy()
            # Spinning, the site (7 cm off the robot's centre of mass) reads its centripetal acceleration, w^2 r.
            assert np.linalg.norm(acc, axis=1).max() < (0.1 if spin == 0.0 else 0.5), (spin, k, acc)
            np.testing.assert_allclose(gyro[:, 2], spin, rtol=0.01, atol=0.01)
