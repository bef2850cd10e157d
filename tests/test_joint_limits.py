"""Declared joint limits hold under adversarial actions, in every registered env.

For every ID and two action families (bang-bang: full magnitude, a fixed sign pattern per world flipped every 5
steps; saturated constants: +1, -1 and per-axis patterns), a probe records after every physics step
the largest excursion of each limited joint coordinate past its position limit, the largest joint speed against a
declared velocity limit, and the largest effort against a declared effort limit (``control.joint_f`` and, with
``drive_mode="rows"``, the drive rows' impulse / dt). Tolerances: 0.02 rad (revolute), 5 mm (prismatic), 1.01x a
velocity or effort limit. A declared limit is a bound below the builder's "unlimited" defaults (+-1e10 for
positions, 1e6 for speeds and efforts). Environments run with their default config (terminations and autoreset
on). Uniform random actions, which press no joint harder than full-magnitude ones, are the doctor's (its limit lines
after every control step, ``tests/test_doctor.py``). The last tests check that the probe does detect a crossing, and
that a limit no solver path enforces makes construction raise.
"""

from __future__ import annotations

import functools

import newton
import numpy as np
import pytest
import torch
import warp as wp
from conftest import MATRIX_IDS

import steel_envs
from steel_envs.vbd_env import VBDVectorEnv

STEPS = 80
WORLDS = 4
FAMILIES = ("bangbang", "constant")
REVOLUTE_TOL = 0.02  # rad
PRISMATIC_TOL = 0.005  # m
RATE_TOL = 1.01  # of a velocity or effort limit
UNLIMITED_POSITION = 1.0e9  # the builder's default bounds are +-1e10
UNLIMITED_RATE = 1.0e6  # the builder's default velocity and effort limits


@wp.kernel(enable_backward=False)
def _track(
    q_index: wp.array[wp.int32],
    dof_world: wp.array[wp.int32],
    lower: wp.array[wp.float32],
    upper: wp.array[wp.float32],
    joint_q: wp.array[wp.float32],
    joint_qd: wp.array[wp.float32],
    joint_f: wp.array[wp.float32],
    drive_slot: wp.array[wp.int32],
    impulses: wp.array2d[wp.float32],
    inv_dt: wp.float32,
    has_drive_rows: wp.bool,
    overshoot: wp.array[wp.float32],
    speed: wp.array[wp.float32],
    effort: wp.array[wp.float32],
):
    """Per DOF, the running maxima of the excursion past the position limits, |qd| and the applied effort."""
    d = wp.tid()
    c = q_index[d]
    if c >= 0:
        q = joint_q[c]
        o = wp.max(wp.max(q - upper[d], lower[d] - q), 0.0)
        if not wp.isfinite(q):
            o = 1.0e30
        overshoot[d] = wp.max(overshoot[d], o)
    speed[d] = wp.max(speed[d], wp.abs(joint_qd[d]))
    f = wp.abs(joint_f[d])
    if has_drive_rows:
        s = drive_slot[d]
        if s >= 0:
            f = wp.max(f, wp.abs(impulses[dof_world[d], s]) * inv_dt)
    effort[d] = wp.max(effort[d], f)


def _limited_coordinates(model: newton.Model) -> np.ndarray:
    """Per DOF, the ``joint_q`` index of a DOF with a declared position limit, else -1."""
    joint_type = model.joint_type.numpy()
    q_start, qd_start = model.joint_q_start.numpy(), model.joint_qd_start.numpy()
    lower, upper = model.joint_limit_lower.numpy(), model.joint_limit_upper.numpy()
    index = np.full(model.joint_dof_count, -1, np.int32)
    for j in range(model.joint_count):
        if newton.JointType(int(joint_type[j])) in (newton.JointType.FREE, newton.JointType.DISTANCE):
            continue
        for k, d in enumerate(range(qd_start[j], qd_start[j + 1])):
            if abs(lower[d]) < UNLIMITED_POSITION or abs(upper[d]) < UNLIMITED_POSITION:
                index[d] = q_start[j] + k
    return index


def _probe_class(env_id: str) -> type:
    """The ID's vector env class with a probe recording the limits after every physics step (graph-capturable)."""
    base = steel_envs.task_class(env_id)

    class Probe(base):
        def _setup_scene(self) -> None:
            super()._setup_scene()
            m = self.model
            n = max(m.joint_dof_count, 1)
            self.probe_q_index = _limited_coordinates(m)
            dof_world = np.zeros(n, np.int32)
            starts = m.joint_dof_world_start.numpy()
            for w in range(self.num_envs):
                dof_world[starts[w] : starts[w + 1]] = w
            self._probe_q_index = wp.array(self.probe_q_index, dtype=wp.int32)
            self._probe_dof_world = wp.array(dof_world, dtype=wp.int32)
            self.probe_overshoot = wp.zeros(n, dtype=wp.float32)
            self.probe_speed = wp.zeros(n, dtype=wp.float32)
            self.probe_effort = wp.zeros(n, dtype=wp.float32)
            # SolverVBD keeps no joint coordinates: they are recovered from the bodies (inverse kinematics).
            self._probe_vbd = isinstance(self, VBDVectorEnv)
            self._probe_q = wp.zeros(max(m.joint_coord_count, 1), dtype=wp.float32)
            self._probe_qd = wp.zeros(n, dtype=wp.float32)
            rows = bool(getattr(self.solver, "_has_drive_rows", False))
            self._probe_rows = rows
            self._probe_slot = self.solver._drive_slot if rows else wp.full(1, -1, dtype=wp.int32)
            self._probe_impulses = self.solver._impulses if rows else wp.zeros((1, 1), dtype=wp.float32)

        def _after_substep(self, state: newton.State) -> None:
            super()._after_substep(state)
            m = self.model
            if not m.joint_dof_count:
                return
            q, qd = state.joint_q, state.joint_qd
            if self._probe_vbd:
                newton.eval_ik(m, state, self._probe_q, self._probe_qd)
                q, qd = self._probe_q, self._probe_qd
            wp.launch(
                _track,
                m.joint_dof_count,
                inputs=[
                    self._probe_q_index,
                    self._probe_dof_world,
                    m.joint_limit_lower,
                    m.joint_limit_upper,
                    q,
                    qd,
                    self.control.joint_f,
                    self._probe_slot,
                    self._probe_impulses,
                    1.0 / self.physics_dt,
                    self._probe_rows,
                ],
                outputs=[self.probe_overshoot, self.probe_speed, self.probe_effort],
                device=self.wp_device,
            )

        def probe_clear(self) -> None:
            for a in (self.probe_overshoot, self.probe_speed, self.probe_effort):
                a.zero_()

    return Probe


def _actions(family: str, num_envs: int, act_dim: int, steps: int, seed: int = 0) -> list[torch.Tensor]:
    rng = np.random.default_rng(seed)
    if family == "bangbang":
        signs = rng.choice([-1.0, 1.0], (num_envs, act_dim)).astype(np.float32)
        signs[0] = 1.0
        return [torch.from_numpy(signs * (1.0 if (t // 5) % 2 == 0 else -1.0)) for t in range(steps)]
    # Saturated constants: all +1, all -1, then per axis (or alternating signs for wide action spaces).
    patterns = [np.ones(act_dim), -np.ones(act_dim)]
    if act_dim <= 3:
        for i in range(act_dim):
            for s in (1.0, -1.0):
                e = np.zeros(act_dim)
                e[i] = s
                patterns.append(e)
    else:
        alternating = np.array([(-1.0) ** i for i in range(act_dim)])
        patterns += [alternating, -alternating]
    while len(patterns) < num_envs:
        patterns.append(rng.choice([-1.0, 1.0], act_dim))
    const = torch.from_numpy(np.stack(patterns[:num_envs]).astype(np.float32))
    return [const] * steps


def _run(env_id: str, family: str, *, num_envs: int = WORLDS, steps: int = STEPS, **kwargs) -> dict[str, object]:
    """Step ``env_id`` under ``family`` and return the worst position excursion (revolute, prismatic) and the worst
    speed and effort ratios of the declared limits, each with the DOF's name."""
    env = _probe_class(env_id)(num_envs, device="cpu", seed=0, **kwargs)
    try:
        return _probe(env, family, steps)
    finally:
        env.close()


def _probe(env, family: str, steps: int = STEPS) -> dict[str, object]:
    env.probe_clear()
    for a in _actions(family, env.num_envs, env.action_dim, steps):
        env.step(a)
    return _report(env)


@functools.cache
def _default_probe_env(env_id: str):
    """One probe env per ID (``WORLDS`` worlds, default config) for the action families in turn, each from a reset
    with seed 0, which gives the constructor's start (test_reliability: a reset world equals a fresh one)."""
    return _probe_class(env_id)(WORLDS, device="cpu", seed=0)


def _report(env) -> dict[str, object]:
    m = env.model
    per = max(env.dofs_per_world, 1)
    labels = list(m.joint_label)
    joint_type = m.joint_type.numpy()
    qd_start = m.joint_qd_start.numpy()
    dof_joint = np.searchsorted(qd_start, np.arange(m.joint_dof_count), side="right") - 1
    over, speed, effort = env.probe_overshoot.numpy(), env.probe_speed.numpy(), env.probe_effort.numpy()
    velocity_limit, effort_limit = m.joint_velocity_limit.numpy(), m.joint_effort_limit.numpy()
    out = {"revolute": (0.0, None), "prismatic": (0.0, None), "speed": (0.0, None), "effort": (0.0, None)}

    def keep(key, value, d):
        if value > out[key][0] or out[key][1] is None:
            name = f"{labels[dof_joint[d]].rsplit('/', 1)[-1]} (DOF {d % per}, world {d // per})"
            out[key] = (float(value), name)

    for d in range(m.joint_dof_count):
        if env.probe_q_index[d] >= 0:
            prismatic = int(joint_type[dof_joint[d]]) == int(newton.JointType.PRISMATIC)
            keep("prismatic" if prismatic else "revolute", over[d], d)
        if velocity_limit[d] < UNLIMITED_RATE:
            keep("speed", speed[d] / velocity_limit[d], d)
        if effort_limit[d] < UNLIMITED_RATE:
            keep("effort", effort[d] / effort_limit[d], d)
    out["declared"] = {k for k, (_, name) in out.items() if name is not None}
    return out


@functools.cache
def _declares_limits(env_id: str) -> bool:
    env = steel_envs.make_vec(env_id, 1, device="cpu", seed=0, graph_capture=False)
    try:
        m = env.model
        return bool(
            (_limited_coordinates(m) >= 0).any()
            or (m.joint_velocity_limit.numpy() < UNLIMITED_RATE).any()
            or (m.joint_effort_limit.numpy() < UNLIMITED_RATE).any()
        )
    finally:
        env.close()


# PandaClothLift's steps are costly (SolverVBD, 8 physics steps): its arm is probed by the saturated constants,
# which press it hardest into its limits and the table (the family that found its limit springs giving 0.021 rad).
_PROBES = [
    (env_id, family)
    for env_id in MATRIX_IDS
    for family in FAMILIES
    if family == "constant" or env_id != "steel_envs/PandaClothLift-v0"
]


@pytest.mark.parametrize(("env_id", "family"), _PROBES, ids=[f"{env_id}-{family}" for env_id, family in _PROBES])
def test_declared_limits_hold(env_id: str, family: str) -> None:
    if not _declares_limits(env_id):
        # ClothFold has no joints; the cart-poles' and the pendulum's joints keep the builder's unlimited bounds.
        pytest.skip(f"{env_id} declares no joint limit")
    env = _default_probe_env(env_id)
    env.reset(seed=0)
    r = _probe(env, family)
    assert r["declared"], f"{env_id}: no limited DOF was probed"
    assert r["revolute"][0] <= REVOLUTE_TOL, f"{env_id} {family}: {r['revolute'][0]:.4f} rad past {r['revolute'][1]}"
    assert r["prismatic"][0] <= PRISMATIC_TOL, (
        f"{env_id} {family}: {r['prismatic'][0] * 1000:.2f} mm past {r['prismatic'][1]}"
    )
    assert r["speed"][0] <= RATE_TOL, f"{env_id} {family}: {r['speed'][0]:.3f}x the velocity limit of {r['speed'][1]}"
    assert r["effort"][0] <= RATE_TOL, f"{env_id} {family}: {r['effort'][0]:.3f}x the effort limit of {r['effort'][1]}"


def test_the_probe_detects_a_crossing():
    """The former AntRun setup (limit rows only within 0.1 rad of a limit, no projection) and PushCube without limit
    rows cross their limits under the same actions: the checks above can fail."""
    r = _run(
        "steel_envs/AntRun-v0",
        "bangbang",
        project_joint_limits=False,
        solver_options={"joint_limit_activation_gap": 0.1},
    )
    assert r["revolute"][0] > 5 * REVOLUTE_TOL, r
    r = _run("steel_envs/PushCube-v0", "constant", solver_options={"enable_joint_limits": False})
    assert r["prismatic"][0] > 10 * PRISMATIC_TOL, r


def test_soft_push_rejects_a_limit_solver_vbd_ignores():
    from steel_envs.tasks.soft_push import SoftPushEnv

    class EffortLimited(SoftPushEnv):
        def build_world(self, builder: newton.ModelBuilder) -> None:
            super().build_world(builder)
            builder.joint_effort_limit[0] = 50.0

    with pytest.raises(ValueError, match=r"gantry_x.*joint_effort_limit.*SolverVBD"):
        EffortLimited(1, device="cpu", seed=0)


def test_limits_on_joints_steel_cannot_limit_are_rejected():
    from steel_envs.envs.joint_limits import limited_dofs

    builder = newton.ModelBuilder()
    body = builder.add_link(mass=1.0, inertia=wp.mat33(np.eye(3, dtype=np.float32) * 0.01))
    joint = builder.add_joint_ball(-1, body, label="shoulder")
    builder.add_articulation([joint])
    builder.joint_limit_lower[0] = -0.5
    model = builder.finalize(device="cpu")
    with pytest.raises(ValueError, match="shoulder"):
        limited_dofs(model)
