"""Physics checks against values computed independently of the env (by hand or by a second integrator)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import ANT, CARTPOLE, make

GRAVITY = 9.81
CART_MASS, POLE_MASS, HALF_LENGTH = 1.0, 0.1, 0.5


def _cartpole_derivative(s: np.ndarray, force: float) -> np.ndarray:
    """Cart-pole with a uniform-rod pole on a frictionless rail (Barto, Sutton & Anderson 1983, without
    friction): the equations Gymnasium's CartPole-v1 integrates."""
    _x, x_dot, th, th_dot = s
    total = CART_MASS + POLE_MASS
    temp = (force + POLE_MASS * HALF_LENGTH * th_dot**2 * np.sin(th)) / total
    th_acc = (GRAVITY * np.sin(th) - np.cos(th) * temp) / (
        HALF_LENGTH * (4.0 / 3.0 - POLE_MASS * np.cos(th) ** 2 / total)
    )
    x_acc = temp - POLE_MASS * HALF_LENGTH * th_acc * np.cos(th) / total
    return np.array([x_dot, x_acc, th_dot, th_acc])


def _rk4(s: np.ndarray, duration: float, h: float = 1.0e-4) -> np.ndarray:
    for _ in range(round(duration / h)):
        k1 = _cartpole_derivative(s, 0.0)
        k2 = _cartpole_derivative(s + 0.5 * h * k1, 0.0)
        k3 = _cartpole_derivative(s + 0.5 * h * k2, 0.0)
        k4 = _cartpole_derivative(s + h * k3, 0.0)
        s = s + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    return s


def test_unforced_pole_falls_as_the_equations_of_motion_predict():
    """With zero force the pole falls; the angle follows an RK4 solution of the cart-pole ODE and the
    episode terminates at the control step where that solution first leaves +-0.2 rad."""
    env = make(CARTPOLE, 3, seed=21, autoreset_mode="Disabled")
    obs, _ = env.reset(seed=21)
    states = obs.numpy().astype(np.float64).copy()
    dt = env.control_dt
    predicted_end = np.full(3, -1)
    actual_end = np.full(3, -1)
    for step in range(1, 151):
        obs, _, terminated, _, _ = env.step(torch.zeros(3, 1))
        for w in range(3):
            if predicted_end[w] < 0:
                states[w] = _rk4(states[w], dt)
                if abs(states[w, 2]) > 0.2:
                    predicted_end[w] = step
            if actual_end[w] < 0:
                if predicted_end[w] < 0 or predicted_end[w] == step:
                    # Symplectic Euler at 0.01 s against RK4: within 5 % of the angle (plus 2 mrad).
                    assert abs(obs[w, 2].item() - states[w, 2]) <= 0.05 * abs(states[w, 2]) + 2.0e-3, (w, step)
                if terminated[w]:
                    actual_end[w] = step
    assert (predicted_end > 0).all(), "every pole falls within 3 s"
    assert np.all(np.abs(actual_end - predicted_end) <= 1), (actual_end, predicted_end)


def test_ant_settles_on_the_ground_and_the_ground_carries_its_weight():
    env = make(ANT, 2, seed=0, reset_noise_scale=0.0)
    for _ in range(60):  # 3 s
        _, _, terminated, truncated, info = env.step(torch.zeros(2, 8))
        assert not (terminated | truncated).any()
    q = env.state_0.joint_q.numpy().reshape(2, -1)
    qd = env.state_0.joint_qd.numpy().reshape(2, -1)
    assert np.abs(qd).max() < 1.0e-2, "at rest"
    # The torso rests above its own radius (0.25 m), held up by the legs, and inside the healthy range.
    assert np.all((q[:, 2] > 0.3) & (q[:, 2] < 1.0))
    # The vertical contact forces on all bodies of a world sum to its weight m g (masses from the model).
    mass = env.model.body_mass.numpy().reshape(2, -1).sum(axis=1)
    wrench = env.body_contact_wrench.numpy().reshape(2, -1, 6)
    np.testing.assert_allclose(wrench[:, :, 2].sum(axis=1), mass * GRAVITY, rtol=1.0e-2)
    assert info["reward_survive"].numpy().tolist() == [1.0, 1.0]


def test_ant_reward_terms_from_state_and_actions():
    """Forward reward = torso x displacement over the control step; ctrl cost = 0.5 * sum(clip(a)^2)."""
    env = make(ANT, 3, seed=4, autoreset_mode="Disabled")
    g = torch.Generator().manual_seed(1)
    for _ in range(10):
        x_before = env.state_0.body_q.numpy().reshape(3, -1, 7)[:, 0, 0].copy()
        actions = torch.rand(3, 8, generator=g) * 3 - 1.5
        _, _, _, _, info = env.step(actions)
        x_after = env.state_0.body_q.numpy().reshape(3, -1, 7)[:, 0, 0]
        np.testing.assert_allclose(info["reward_forward"].numpy(), (x_after - x_before) / 0.05, rtol=1e-4, atol=1e-4)
        ctrl = -0.5 * (actions.clamp(-1, 1).numpy().astype(np.float64) ** 2).sum(axis=1)
        np.testing.assert_allclose(info["reward_ctrl"].numpy(), ctrl, rtol=1e-6)
        assert (info["reward_contact"].numpy() <= 0).all()
        assert (info["reward_contact"].numpy() >= -5e-4 * 6 * 9).all()


def test_swingup_reward_matches_dm_control_tolerances_by_hand():
    """theta = pi/2, x = 2 m (the centring margin), action 1 (the control margin), at rest:
    upright 0.5 * centered (1 + 0.1) / 2 * small_control (4 + 0) / 5 * small_velocity 1 = 0.22."""
    env = make("steel_envs/CartpoleSwingup-v0", 1, seed=0)
    env.state_0.joint_q.assign(np.array([2.0, np.pi / 2], np.float32))
    env.state_0.joint_qd.zero_()
    env.actions.fill_(1.0)
    env.terms.rewards(env.stats.reward_terms)
    assert env.stats.reward_terms.numpy()[0, 0] == pytest.approx(0.5 * 0.55 * 0.8, rel=1e-5)
    # Hanging at rest the reward is 0; upright and centred at rest it is 1.
    for angle, expected in ((np.pi, 0.0), (0.0, 1.0)):
        env.state_0.joint_q.assign(np.array([0.0, angle], np.float32))
        env.actions.zero_()
        env.terms.rewards(env.stats.reward_terms)
        assert env.stats.reward_terms.numpy()[0, 0] == pytest.approx(expected, abs=1e-6)


def test_humanoid_starts_in_free_fall_and_its_forward_reward_is_the_com_velocity():
    """Dropped at rest from 1.4 m, no body touches the ground during the first step: after k substeps of h the
    symplectic-Euler free fall has v_z = -g k h and dz = -g h^2 k (k + 1) / 2. The forward reward is 1.25 times
    the COM x displacement over the step, from body poses."""
    env = make("steel_envs/HumanoidRun-v0", 2, seed=0, reset_noise_scale=0.0, autoreset_mode="Disabled")
    m = env.model
    mass = m.body_mass.numpy().reshape(2, -1)
    com_local = m.body_com.numpy().reshape(2, -1, 3)

    def com(component: int) -> np.ndarray:
        q = env.state_0.body_q.numpy().reshape(2, -1, 7)
        # world COM of each body: p + R(q) com_local, with quaternion (x, y, z, w)
        x, y, z, w = (q[..., 3 + i] for i in range(4))
        c = com_local
        rot = np.stack(
            [
                (1 - 2 * (y * y + z * z)) * c[..., 0]
                + 2 * (x * y - z * w) * c[..., 1]
                + 2 * (x * z + y * w) * c[..., 2],
                2 * (x * y + z * w) * c[..., 0]
                + (1 - 2 * (x * x + z * z)) * c[..., 1]
                + 2 * (y * z - x * w) * c[..., 2],
                2 * (x * z - y * w) * c[..., 0]
                + 2 * (y * z + x * w) * c[..., 1]
                + (1 - 2 * (x * x + y * y)) * c[..., 2],
            ],
            axis=-1,
        )
        return ((q[..., :3] + rot)[..., component] * mass).sum(axis=1) / mass.sum(axis=1)

    z0, x0 = com(2), com(0)
    _, _, _, _, info = env.step(torch.zeros(2, 21))
    dt, h, k = env.control_dt, env.physics_dt, env.decimation
    np.testing.assert_allclose(com(2) - z0, -GRAVITY * h * h * k * (k + 1) / 2, rtol=2e-3)
    np.testing.assert_allclose(env.state_0.joint_qd.numpy().reshape(2, -1)[:, 2], -GRAVITY * dt, rtol=1e-4)
    assert not env.body_contact_wrench.numpy().any(), "no contact yet"
    np.testing.assert_allclose(info["reward_forward"].numpy(), 1.25 * (com(0) - x0) / dt, atol=1e-4)
    assert info["reward_survive"].numpy().tolist() == [5.0, 5.0]


def test_quadruped_stands_on_its_drives_and_the_feet_carry_its_weight():
    env = make("steel_envs/QuadrupedVelocity-v0", 2, seed=0, joint_noise=0.0)
    for _ in range(100):  # 2 s of zero actions: targets at the standing pose
        _, _, terminated, truncated, _info = env.step(torch.zeros(2, 12))
        assert not (terminated | truncated).any()
    qd = env.state_0.joint_qd.numpy()
    assert np.abs(qd).max() < 1e-2
    wrench = env.body_contact_wrench.numpy().reshape(2, -1, 6)
    feet = [3, 6, 9, 12]
    weight = env.model.body_mass.numpy().reshape(2, -1).sum(axis=1) * GRAVITY
    np.testing.assert_allclose(wrench[:, feet, 2].sum(axis=1), weight, rtol=1e-2)
    assert (wrench[:, 0, :3] == 0).all(), "the base does not touch the ground"
    base_z = env.state_0.joint_q.numpy().reshape(2, -1)[:, 2]
    assert ((base_z > 0.3) & (base_z < 0.5)).all(), base_z


def test_quadruped_commands_resample_on_schedule_within_their_ranges():
    env = make(
        "steel_envs/QuadrupedVelocity-v0",
        4,
        seed=1,
        command_resample_time=0.1,
        autoreset_mode="Disabled",
        max_tilt_cos=-2.0,
        contact_force_threshold=1e9,
    )
    seen = [env._obs_t[:, 9:12].clone()]
    for _ in range(11):
        seen.append(env.step(torch.zeros(4, 12))[0][:, 9:12].clone())
    # 0.1 s is 5 control steps: the reset's command acts for steps 1-5, a new one for steps 6-10, then another.
    assert all(torch.equal(seen[0], seen[k]) for k in range(6))
    assert not torch.equal(seen[5], seen[6]) and torch.equal(seen[6], seen[10]) and not torch.equal(seen[10], seen[11])
    cmds = torch.stack(seen).reshape(-1, 3)
    assert (cmds[:, 0].abs() <= 1).all() and (cmds[:, 1].abs() <= 0.5).all() and (cmds[:, 2].abs() <= 1).all()


def test_push_finger_moves_the_cube_it_runs_into():
    """The velocity-driven finger reaches its commanded 0.5 m/s; a cube resting on its line (the goal far away)
    stays put until the finger arrives, then moves along +x."""
    env = make("steel_envs/PushCube-v0", 1, seed=0, cube_spawn=1e-6, goal_range=1e-6, success_radius=1e-9)
    cube_x0 = env._obs_t[0, 4].item()
    obs = None
    for _ in range(10):  # 0.4 s: the finger covers ~0.2 m of the 0.5 m gap
        obs = env.step(torch.tensor([[1.0, 0.0]]))[0]
    assert obs[0, 2].item() == pytest.approx(0.5, rel=1e-3)
    assert obs[0, 4].item() == pytest.approx(cube_x0, abs=1e-4), "untouched cube rests"
    assert obs[0, 6].item() == pytest.approx(0.05, abs=2e-3), "on the ground at its half-size"
    env.term_state.goals.assign(np.array([[0.6, 0.0]], np.float32))  # the goal ahead of the cube
    distance = abs(0.6 - obs[0, 4].item())
    for _ in range(30):  # 1.2 s more: contact at ~0.42 m of finger travel
        obs = env.step(torch.tensor([[1.0, 0.0]]))[0]
    assert obs[0, 4].item() > cube_x0 + 0.1 and abs(obs[0, 5].item()) < 0.05
    assert abs(0.6 - obs[0, 4].item()) < distance - 0.1, "the cube moved towards the goal"


def _path_round_circle(p: np.ndarray, q: np.ndarray, radius: float) -> float:
    """Shortest planar path [m] from p to q (on the circle of ``radius`` about the origin) outside that circle, by
    brute force: straight to q where q is in sight, else straight to the best point t of the circle in sight of p
    (3,600 candidates), then along the arc to q. A point p inside the circle is moved out to it radially."""
    if np.linalg.norm(p) < radius:
        p = p * radius / np.linalg.norm(p)
    if np.dot(p - q, q) >= 0.0:  # the segment leaves q outward: q is in sight
        return float(np.linalg.norm(p - q))
    phi = np.linspace(-np.pi, np.pi, 3600, endpoint=False)
    t = radius * np.stack([np.cos(phi), np.sin(phi)], axis=1)
    in_sight = ((p - t) * t).sum(axis=1) >= -1e-12
    arc = np.abs(np.angle(np.exp(1j * (phi - np.arctan2(q[1], q[0])))))
    return float((np.linalg.norm(p - t, axis=1) + radius * arc)[in_sight].min())


def test_push_cube_reward_terms_equal_an_independent_computation():
    """Each term from the returned observation: the reach along the shortest path round the cube to the push pose
    0.08 m behind it on the goal-cube line, the cube's distance to the goal, the bonus on success; the reward is
    their weighted sum. The scripted solver's episodes include fingers on the goal side (path round the cube)."""
    from steel_envs.tasks.push_cube import scripted_policy

    env = make("steel_envs/PushCube-v0", 4, seed=3, autoreset_mode="Disabled")
    c = env.config
    obs, _ = env.reset(seed=3)
    done = np.zeros(4, dtype=bool)
    detours = 0
    for _ in range(60):  # the scripted solver walks round the cube and pushes it home (success at ~55 steps)
        obs, reward, terminated, _, info = env.step(scripted_policy(obs))
        o = obs.numpy().astype(np.float64)
        for w in np.flatnonzero(~done):
            finger, cube, goal = o[w, 0:2], o[w, 4:6], o[w, 14:16]
            u = (goal - cube) / np.linalg.norm(goal - cube)
            reach = _path_round_circle(finger - cube, -0.08 * u, 0.08)
            detours += reach > np.linalg.norm(finger - cube + 0.08 * u) + 1e-3
            push = np.linalg.norm(cube - goal)
            expected = {
                "reach": -c.reach_weight * reach,
                "push": -c.push_weight * push,
                "success": c.success_bonus * float(push < c.success_radius),
            }
            for term, value in expected.items():
                assert info[f"reward_{term}"][w].item() == pytest.approx(value, rel=1e-4, abs=2e-4), term
            assert reward[w].item() == pytest.approx(sum(expected.values()), rel=1e-4, abs=5e-4)
        torch.testing.assert_close(obs[:, 18:20], obs[:, 4:6] - obs[:, 0:2], rtol=0, atol=1e-6)
        done |= terminated.numpy()
    assert done.any(), "a world succeeded, so the bonus was checked"
    assert detours > 0, "some reach went round the cube"


def test_humanoid_with_zero_action_falls_and_terminates_within_a_derived_bound():
    """Its torso must drop from 1.4 m to 1.0 m to terminate. No support can make it fall faster than free fall,
    so the episode cannot end before sqrt(2 * 0.4 m / g) = 0.286 s = 19 control steps of 0.015 s; without
    torques nothing holds it up, so it ends within 2 s (133 steps), far below the 1000-step limit."""
    env = make("steel_envs/HumanoidRun-v0", 2, seed=0, autoreset_mode="Disabled")
    lower = int(np.floor(np.sqrt(2 * 0.4 / GRAVITY) / env.control_dt))
    ended = np.full(2, -1)
    for step in range(1, 134):
        _, _, terminated, _, _ = env.step(torch.zeros(2, 21))
        ended[(ended < 0) & terminated.numpy()] = step
    assert (ended >= lower).all() and (ended > 0).all(), (ended, lower)


def test_swingup_pole_starts_down():
    obs, _ = make("steel_envs/CartpoleSwingup-v0", 4, seed=0).reset(seed=0)
    assert (obs[:, 2] < -0.99).all(), "cos(theta) ~ -1: hanging"


@pytest.mark.parametrize(
    "env_id",
    [
        "steel_envs/HumanoidRun-v0",
        "steel_envs/QuadrupedVelocity-v0",
        "steel_envs/PushCube-v0",
        "steel_envs/CartpoleSwingup-v0",
    ],
)
def test_constraint_overflow_term_is_present(env_id):
    env = make(env_id, 2, seed=0, autoreset_mode="Disabled")
    env.solver.constraint_overflow.assign(np.array([False, True, False]))
    with pytest.warns(RuntimeWarning, match="dropped constraint rows"):
        _, _, _, truncated, info = env.step(torch.zeros(2, env.action_dim))
    assert info["constraint_overflow"].tolist() == [False, True] and truncated[1]
