"""Episode metrics (``EpisodeMetric``): what ``info["episode"]`` reports beside the return, checked against the same
figure computed from the observations, independently of the metric's kernel."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from steel_envs.tasks.terms import locomotion

import steel_envs
from steel_envs.spec import EpisodeMetric


def _random_actions(env, generator: torch.Generator) -> torch.Tensor:
    return torch.rand(env.num_envs, env.action_dim, generator=generator) * 2.0 - 1.0


@pytest.mark.parametrize("autoreset_mode", ["SameStep", "NextStep"])
def test_ant_distance_is_the_torso_displacement(autoreset_mode: str) -> None:
    """AntRun's ``distance_x`` is the torso's x at the episode's end minus at its start (read from the observation's
    torso x), for episodes ended by the time limit and by falling, in both autoreset modes."""
    env = steel_envs.make_vec(
        "steel_envs/AntRun-v0",
        num_envs=4,
        device="cpu",
        seed=3,
        max_episode_steps=12,
        exclude_current_positions_from_observation=False,
        autoreset_mode=autoreset_mode,
    )
    x = env.observation_layout["torso_xy"].start
    obs, _ = env.reset(seed=3)
    start = obs[:, x].clone()
    generator = torch.Generator().manual_seed(0)
    checked, pending = 0, torch.zeros(4, dtype=torch.bool)
    for _ in range(40):
        obs, _, _, _, info = env.step(_random_actions(env, generator))
        if pending.any():  # NEXT_STEP: this step reset the worlds that ended the last one
            start = torch.where(pending, obs[:, x], start)
        ended = info["_episode"].clone()
        if ended.any():
            end_x = info["final_obs"][:, x] if "final_obs" in info else obs[:, x]
            distance = info["episode"]["distance_x"]
            np.testing.assert_allclose(distance[ended], (end_x - start)[ended], atol=2e-6)
            checked += int(ended.sum())
        if "final_obs" in info:
            start = torch.where(ended, obs[:, x], start)
        pending = ended if "final_obs" not in info else torch.zeros_like(ended)
    env.close()
    assert checked >= 8


def test_quadruped_tracking_error_is_the_rms_velocity_error() -> None:
    """QuadrupedVelocity's ``tracking_error`` is the RMS over the episode's steps of ``|cmd_xy - v_xy|``, both read
    from the noise-free observation after each step (the final observation at the episode's last);
    ``tracking_error_horizon`` the RMS over the time limit's steps, each step an early end cut off counted as
    ``|cmd_xy|`` of the last step. World 0 starts upside down and ends on its first step (``tilted``)."""
    import newton

    limit = 10
    env = steel_envs.make_vec(
        "steel_envs/QuadrupedVelocity-v0", num_envs=3, device="cpu", seed=5, max_episode_steps=limit, obs_noise_std=0.0
    )
    lay = env.observation_layout
    env.reset(seed=5)
    q = env.state_0.joint_q.numpy().reshape(3, -1)
    q[0, 3:7] = (1.0, 0.0, 0.0, 0.0)  # 180 degrees about x
    env.state_0.joint_q.assign(q.ravel())
    newton.eval_fk(env.model, env.state_0.joint_q, env.state_0.joint_qd, env.state_0)
    generator = torch.Generator().manual_seed(1)
    squares: list[list[float]] = [[] for _ in range(3)]
    checked, early = 0, 0
    for _ in range(25):
        obs, _, _, _, info = env.step(_random_actions(env, generator))
        seen = torch.where(info["_episode"][:, None], info["final_obs"], obs)
        command = seen[:, lay["command"]][:, :2].double()
        error = command - seen[:, lay["base_lin_vel"]][:, :2]
        for w in range(3):
            squares[w].append(float((error[w].double() ** 2).sum()))
            if info["_episode"][w]:
                lived = len(squares[w])
                assert lived == int(info["episode"]["l"][w])
                expected = np.sqrt(np.mean(squares[w]))
                assert info["episode"]["tracking_error"][w].item() == pytest.approx(expected, rel=1e-5, abs=1e-6)
                charged = (sum(squares[w]) + (limit - lived) * float((command[w] ** 2).sum())) / limit
                horizon = info["episode"]["tracking_error_horizon"][w].item()
                assert horizon == pytest.approx(np.sqrt(charged), rel=1e-5, abs=1e-6)
                early += lived < limit
                squares[w], checked = [], checked + 1
    env.close()
    assert checked >= 6 and early >= 1


def test_a_metric_must_not_shadow_another_episode_key() -> None:
    """A metric named like the return, a reward term's episode sum, a termination term or a core key is refused at
    the class definition; an unknown aggregate, or a lost-step charge on the last step's value, at the metric's."""
    ant = steel_envs.task_class("steel_envs/AntRun-v0")
    for name in ("r", "reward_forward", "unhealthy", "penetration"):
        with pytest.raises(TypeError, match="metrics"):  # checked at the subclass's definition
            type("Clash", (ant,), {"metrics": (EpisodeMetric(name, locomotion.torso_x_displacement, "sum", "m", "x"),)})
    with pytest.raises(ValueError, match="aggregate"):
        EpisodeMetric("distance", locomotion.torso_x_displacement, "median", "m", "x")
    with pytest.raises(ValueError, match=r"lost_steps.*'last'"):  # a last step's value has no steps to charge
        EpisodeMetric(
            "d", locomotion.torso_x_displacement, "last", "m", "x", lost_steps=locomotion.torso_x_displacement
        )
    assert [m.name for m in ant.metrics] == ["distance_x", "upright_fraction"]
    assert ant.metrics[0].aggregate == "sum"


def test_rsl_rl_log_reports_each_ended_episode_metric() -> None:
    """``steel-envs train`` logs the task's metrics to TensorBoard as ``Episode_Metric/<name>``: the adapter's
    ``extras["log"]`` holds, per episode ended since its last read, the value a twin env reports in
    ``info["episode"]``."""
    pytest.importorskip("rsl_rl")
    from steel_envs.adapters.rsl_rl import RslRlVecEnv

    def ant():
        return steel_envs.make_vec("steel_envs/AntRun-v0", num_envs=4, device="cpu", seed=7, max_episode_steps=6)

    adapter, twin = RslRlVecEnv(ant(), stats_interval=6), ant()
    twin.reset()  # as the adapter resets its env
    generator = torch.Generator().manual_seed(4)
    expected, logged = [], []
    for _ in range(12):
        actions = _random_actions(twin, generator)
        extras = adapter.step(actions.clone())[3]
        info = twin.step(actions)[4]
        expected += info["episode"]["distance_x"][info["_episode"]].tolist()
        if "log" in extras:
            logged += extras["log"]["Episode_Metric/distance_x"].tolist()
    adapter.close()
    twin.close()
    assert len(expected) == 8
    np.testing.assert_array_equal(logged, expected)


def _up_component(quat_xyzw: torch.Tensor) -> np.ndarray:
    """World z of the body z axis for (n, 4) quaternions (x, y, z, w), by SciPy."""
    from scipy.spatial.transform import Rotation

    return Rotation.from_quat(quat_xyzw.double().numpy()).apply([0.0, 0.0, 1.0])[:, 2]


def test_ant_ends_on_a_tilt_beyond_70_degrees_and_reports_its_upright_fraction() -> None:
    """AntRun's ``fell_over`` is ``up < cos(70 deg)`` and its ``upright_fraction`` the fraction of the episode's steps
    with ``up > 0.5``, ``up`` the world z of the torso's z axis, computed here by SciPy from the observation's
    quaternion. World 0 starts upside down (an ant on its back, as a policy that flips would run): it ends on its
    first step by ``fell_over`` alone, with an upright fraction of 0; the other worlds take bang-bang actions."""
    import newton

    env = steel_envs.make_vec("steel_envs/AntRun-v0", num_envs=4, device="cpu", seed=2, max_episode_steps=30)
    quat = env.observation_layout["torso_quat"]
    obs, _ = env.reset(seed=2)
    q = env.state_0.joint_q.numpy().reshape(4, -1)
    q[0, 2], q[0, 3:7] = 0.6, (1.0, 0.0, 0.0, 0.0)  # 180 degrees about x, torso 0.6 m up
    env.state_0.joint_q.assign(q.ravel())
    newton.eval_fk(env.model, env.state_0.joint_q, env.state_0.joint_qd, env.state_0)
    generator = torch.Generator().manual_seed(4)
    ups: list[list[float]] = [[] for _ in range(4)]
    checked = 0
    for step in range(60):
        actions = torch.sign(_random_actions(env, generator))
        obs, _, terminated, _, info = env.step(actions)
        seen = torch.where(info["_episode"][:, None], info["final_obs"], obs)
        up = _up_component(seen[:, quat])
        np.testing.assert_array_equal(info["fell_over"].numpy(), up < np.cos(np.radians(70.0)))
        if step == 0:
            assert info["fell_over"].tolist() == [True, False, False, False] and terminated[0]
        for w in range(4):
            ups[w].append(float(up[w]))
            if info["_episode"][w]:
                expected = np.mean(np.array(ups[w]) > 0.5)
                assert info["episode"]["upright_fraction"][w].item() == pytest.approx(expected, abs=1e-6)
                ups[w], checked = [], checked + 1
    env.close()
    assert checked >= 8
