"""Physics health report of a registered env: ``steel-envs doctor <ID>``, or :func:`doctor` from Python.

The doctor builds the env with ``num_envs`` worlds and steps it ``steps`` control steps under each of three action
families, each from the same seeded reset: ``random`` (uniform in [-1, 1]), ``bang-bang`` (+-1 per action entry, a
sign pattern drawn per world, flipped every :data:`BANG_BANG_PERIOD` steps) and ``zero``. SolverSteel scenes run
with ``row_watermark=True``. Episodes end as the task declares and reset on the next step
(``autoreset_mode="NextStep"``), so the terminal state of an episode is measured, and the reset state after it. The
state after each reset and after every control step (what the observations see) is measured; each check becomes one
line of a table with a value, a threshold, a status (``pass``, ``warn``, ``fail``, or ``n/a`` where the env has
nothing to check), where the value occurred and, where something is off, the options page's advice with the exact
``solver_options`` / ``collision_options`` to set.

The checks (thresholds are the module constants, each with its source):

- ``rows: <family>`` (SolverSteel): ``solver.constraint_row_watermarks()`` after all runs, the largest requested row
  count of any world and physics step, against the family's capacity (``articulation_constraint_max``,
  ``free_body_constraint_max``, ``propagation_constraint_max``). ``fail``: rows were dropped; ``warn``: less than
  :data:`HEADROOM` x the mark. Advice: the options page's sizing rule, about :data:`OVERFLOW_FACTOR` x the requested
  mark while overflowing, :data:`HEADROOM` x a non-overflowing mark.
- ``contacts: rigid`` / ``soft``: the largest contact count of the collision pipeline (SolverSteel's
  ``contact_high_water``, every physics step; on SolverVBD sampled after each control step) against
  ``rigid_contact_max`` / ``soft_contact_max``, the capacity of all worlds together; same rule. ``contacts: <list>``
  (SolverVBD): the longest per-body, per-vertex or per-edge contact list against its buffer option
  (``rigid_body_contact_buffer_size`` ...), sampled after each control step.
- ``overflow rate``: the fraction of world-steps with ``info["constraint_overflow"]`` (rows or contacts dropped).
- ``joint-limit overshoot: revolute / prismatic``: the largest excursion of a limited joint coordinate past its
  declared ``joint_limit_lower`` / ``upper`` (a bound below :data:`steel_envs.envs.joint_limits.UNLIMITED`); on
  SolverVBD the coordinates are recovered from the bodies (``newton.eval_ik``).
- ``joint effort / limit``, ``joint speed / limit``: the largest ``|control.joint_f|`` over a declared
  ``joint_effort_limit`` and ``|joint_qd|`` over a declared ``joint_velocity_limit`` (declared: below 1e6, the
  builder's default). SolverSteel's drive rows (``drive_mode="rows"``) clamp a drive's force at
  ``effort_limit * dt``; that force is not readable through a public API, so it is not part of the measured effort
  (the line says so).
- ``penetration: bodies``: the deepest point of a body's shape below a ground plane. Contacts of the measured state
  are found by a private ``newton.CollisionPipeline`` with the env's options, their signed distances evaluated by
  ``newton.eval_rigid_contact_kinematics`` and both shapes' ``shape_margin`` added back (contacts act on the
  margin-inflated surfaces; the value is the depth of the shape itself). Reset states and stepped states are
  reported apart: an initial state inside the ground is the scene's to fix, not the solver's.
- ``penetration: particles``: the largest ``radius - height`` of a particle over the ground plane of its world;
  above :data:`PENETRATION_TOL` warns, a particle centre below the plane fails.
- ``energy drift at rest``: under zero actions, over the second half of the run (the first half settles), the
  largest gain of mechanical energy (kinetic and gravitational energy of the dynamic bodies and active particles;
  elastic and drive-spring energy are not counted) over its value at the end of settling, per world whose episode
  runs through the whole zero-action run, as the height it would lift the world's mass: ``max_t (E(t) - E(t0)) /
  (M g)``.
- ``non-finite events``: world-steps with ``info["nonfinite_state"]`` or ``info["nonfinite_action"]``.
- ``world-count independence``: the env's last world (index ``num_envs - 1``) under the random actions against a
  1-world env of the same ID started as that world (``world_offset=num_envs - 1``, same seed and actions): every
  state must be bitwise equal (README, "The contract"). On SolverVBD scenes a difference up to
  :data:`VBD_WORLD_COUNT_BOUND` of position (joint, body or particle) warns and reports its size; a larger one fails.
  (With particle self-contact, SolverVBD's contact lists of a world depend on the other worlds' particles, which
  changes the order of its float sums: ClothFold's world 3 of 4 left its 1-world twin after 41 of 50 random steps,
  by 1.9e-5 m; SoftPush, without self-contact, stays bitwise.)

A failing check is a line, not an exception: :attr:`DoctorReport.failed`, and the CLI's exit status 1.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import warnings
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np

__all__ = [
    "BANG_BANG_PERIOD",
    "ENERGY_GAIN_TOL",
    "ENERGY_GAIN_WARN",
    "HEADROOM",
    "OVERFLOW_FACTOR",
    "PENETRATION_TOL",
    "POLICIES",
    "PRISMATIC_OVERSHOOT_TOL",
    "RATE_TOL",
    "REVOLUTE_OVERSHOOT_TOL",
    "VBD_WORLD_COUNT_BOUND",
    "DoctorLine",
    "DoctorReport",
    "doctor",
    "run_cli",
]

POLICIES = ("random", "bang-bang", "zero")
"""The action families, in the order they run, each from the same seeded reset."""
BANG_BANG_PERIOD = 5
"""Control steps between the sign flips of the bang-bang actions (as ``tests/test_joint_limits.py``)."""
HEADROOM = 1.3
"""Capacity over a non-overflowing high-water mark (SolverSteel's options page: "1.3x a non-overflowing mark")."""
OVERFLOW_FACTOR = 2.0
"""Capacity over the requested mark while overflowing (options page: "about 2x the requested mark")."""
REVOLUTE_OVERSHOOT_TOL = 0.02
"""Largest excursion past a revolute limit [rad] (README "The contract"; ``tests/test_joint_limits.py``)."""
PRISMATIC_OVERSHOOT_TOL = 0.005
"""Largest excursion past a prismatic limit [m] (same sources)."""
RATE_TOL = 1.01
"""Largest effort or speed over its declared limit [x the limit] (same sources)."""
PENETRATION_TOL = 0.005
"""Deepest body point below a ground plane [m] (issue 13: the 5 mm of the prismatic limit tolerance); for particles
the depth of the contact sphere above which the line warns (a centre below the plane fails)."""
ENERGY_GAIN_WARN = 0.001
"""Energy gain at rest above which the line warns, as the height it lifts the world's mass [m]."""
ENERGY_GAIN_TOL = 0.005
"""Energy gain at rest above which the line fails [m of lift]. A passive system at rest only loses energy, except
where contacts push a penetrating body out (Baumgarte correction lifts it by at most its penetration): a gain up to
M g :data:`PENETRATION_TOL` is explained by the tolerated penetration, more is energy the solver made."""

_UNLIMITED_RATE = 1.0e6  # the builder's default velocity and effort limits: no limit
_STATE_ARRAYS = ("joint_q", "joint_qd", "body_q", "body_qd", "particle_q", "particle_qd")
_STATUS_ORDER = {"n/a": 0, "pass": 1, "warn": 2, "fail": 3}
_SINK = "bodies sink into the ground: more iterations, a smaller physics dt, or see the rows / contacts lines"
_START = "the initial states put bodies into the ground: raise the start height or bound the reset noise"

Status = Literal["pass", "warn", "fail", "n/a"]


VBD_WORLD_COUNT_BOUND = 1.0e-3
"""Largest position difference [m or rad] between a SolverVBD world and its 1-world twin that the world-count line
accepts (as a warning); measured on ClothFold, 4 worlds, 50 random steps: 1.9e-5 m."""


@dataclass
class DoctorLine:
    """One check of a :class:`DoctorReport`."""

    check: str
    """Name of the check, e.g. ``"rows: articulation"``."""
    status: Status
    """``"pass"``, ``"warn"``, ``"fail"``, or ``"n/a"`` where the env has nothing to check."""
    value: str
    """The measured value with its unit, e.g. ``"52 / 192"``, ``"0.0123 rad"``."""
    threshold: str
    """The criterion the status is judged by."""
    detail: str = ""
    """Where the value occurred (joint, body, world, action family), or why the line is n/a."""
    advice: str = ""
    """What to change (SolverSteel's options page), for a warning or a failure; may be empty."""
    measured: float | None = None
    """The number behind ``value`` in SI units (m, rad, a ratio, a count), None where there is none."""


@dataclass
class DoctorReport:
    """The result of :func:`doctor`: one :class:`DoctorLine` per check, and the options the advice adds up to."""

    env_id: str
    num_envs: int
    steps: int
    """Control steps per action family."""
    device: str
    seed: int
    lines: list[DoctorLine] = field(default_factory=list)
    suggested_solver_options: dict[str, Any] = field(default_factory=dict)
    """Solver keywords the warnings and failures advise, ready for ``solver_options=``."""
    suggested_collision_options: dict[str, Any] = field(default_factory=dict)
    """Collision pipeline keywords the warnings and failures advise, ready for ``collision_options=``."""
    seconds: float = 0.0
    """Wall time of the report [s], the env builds included."""

    @property
    def failed(self) -> bool:
        """Whether any line failed."""
        return any(line.status == "fail" for line in self.lines)

    @property
    def status(self) -> Status:
        """The worst status of any line."""
        return max((line.status for line in self.lines), key=_STATUS_ORDER.__getitem__, default="n/a")

    def line(self, check: str) -> DoctorLine:
        """The line named ``check``.

        Raises:
            KeyError: If the report has no such line (the message lists the lines).
        """
        for line in self.lines:
            if line.check == check:
                return line
        raise KeyError(f"no line {check!r}; the report has {[line.check for line in self.lines]}")

    def table(self) -> str:
        """The report as a plain-text table: a header, one row per check (its advice indented below it), the
        suggested options and the overall result."""
        head = (
            f"steel-envs doctor {self.env_id}: {self.num_envs} worlds x {self.steps} steps of each of "
            f"{', '.join(POLICIES)} actions ({self.device}, seed {self.seed}, {self.seconds:.0f} s)"
        )
        rows = [("check", "value", "threshold", "status", "detail")]
        rows += [(x.check, x.value, x.threshold, x.status, x.detail) for x in self.lines]
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        out = [head]
        for i, r in enumerate(rows):
            out.append("  ".join(r[k].ljust(widths[k]) for k in range(4)) + "  " + r[4])
            if i and self.lines[i - 1].advice:
                out.append(f"    -> {self.lines[i - 1].advice}")
        if self.suggested_solver_options:
            out.append(f"suggested: solver_options={json.dumps(self.suggested_solver_options)}")
        if self.suggested_collision_options:
            out.append(f"suggested: collision_options={json.dumps(self.suggested_collision_options)}")
        counts = {s: sum(x.status == s for x in self.lines) for s in ("fail", "warn")}
        out.append(f"result: {'fail' if self.failed else 'pass'} ({counts['fail']} fail, {counts['warn']} warn)")
        return "\n".join(out)

    def to_dict(self) -> dict[str, Any]:
        """The report as plain Python data (what :meth:`to_json` writes), with ``failed``."""
        return {**asdict(self), "failed": self.failed}

    def to_json(self, indent: int | None = 2) -> str:
        """The report as a JSON document (:meth:`to_dict`)."""
        return json.dumps(self.to_dict(), indent=indent)


def doctor(
    env_id: str,
    num_envs: int = 4,
    steps: int = 50,
    device: str | None = None,
    *,
    seed: int = 0,
    solver_options: Mapping[str, Any] | None = None,
    collision_options: Mapping[str, Any] | None = None,
    check_world_count: bool = True,
    **env_kwargs: Any,
) -> DoctorReport:
    """Run the physics health checks of ``env_id`` (see the module docstring) and return the report.

    Args:
        env_id: A registered ID, e.g. ``"steel_envs/AntRun-v0"``.
        num_envs: Worlds of the env, >= 1.
        steps: Control steps per action family, >= 1 (the energy line needs >= 4).
        device: Warp device; None: Warp's preferred device.
        seed: Seed of every reset and of the random and bang-bang actions.
        solver_options: Solver keywords over the scene's, as the env's ``solver_options``. On SolverSteel scenes
            ``row_watermark`` is set True and ``warn_constraint_overflow`` defaults to False (the report counts the
            overflows).
        collision_options: ``newton.CollisionPipeline`` keywords over the scene's.
        check_world_count: Build the 1-world twin of the world-count line; False reports that line n/a.
        **env_kwargs: Other keywords of the env, e.g. task config fields (``project_joint_limits=False``).

    Returns:
        The :class:`DoctorReport`; a failing check is a line with status ``"fail"``, not an exception.

    Raises:
        gymnasium.error.UnregisteredEnv: If ``env_id`` is not registered.
        ValueError: If ``num_envs`` or ``steps`` is not an int >= 1, ``env_kwargs`` holds a keyword the doctor sets
            itself (``autoreset_mode``, ``world_offset``), or the env rejects an argument.
    """
    from steel_envs.registration import task_class
    from steel_envs.vbd_env import VBDVectorEnv

    for name, value in (("num_envs", num_envs), ("steps", steps)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name}: expected an int >= 1, got {value!r}")
    forbidden = sorted({"autoreset_mode", "world_offset", "num_shards"} & set(env_kwargs))
    if forbidden:
        raise ValueError(f"{forbidden}: the doctor sets these itself")
    vbd = issubclass(task_class(env_id), VBDVectorEnv)
    options = dict(solver_options or {})
    if not vbd:
        options["row_watermark"] = True
        # The options page: turn the device-side warning off "only when you check constraint_overflow yourself".
        options.setdefault("warn_constraint_overflow", False)
    kwargs = {
        "device": device,
        "seed": seed,
        "autoreset_mode": "NextStep",
        "solver_options": options,
        "collision_options": collision_options,
        **env_kwargs,
    }
    start = time.perf_counter()
    with warnings.catch_warnings():
        # The env's one-time overflow warning says what the capacity lines say, with numbers.
        warnings.filterwarnings("ignore", message=r".*dropped (constraint rows or )?contacts", category=RuntimeWarning)
        report = _diagnose(env_id, int(num_envs), int(steps), seed, vbd, check_world_count, kwargs)
    report.seconds = time.perf_counter() - start
    return report


def _diagnose(
    env_id: str, num_envs: int, steps: int, seed: int, vbd: bool, check_world_count: bool, kwargs: dict[str, Any]
) -> DoctorReport:
    from steel_envs.factory import make_vec

    env = make_vec(env_id, num_envs, **kwargs)
    try:
        report = DoctorReport(env_id=env_id, num_envs=num_envs, steps=steps, device=env.device, seed=seed)
        probe = _Probe(env, vbd, seed)
        actions = {p: _actions(p, num_envs, env.action_dim, steps, seed) for p in POLICIES}
        for policy in POLICIES:
            probe.run(policy, actions[policy], track_world=num_envs - 1 if policy == "random" else None)
        twin = None
        if check_world_count and num_envs > 1:
            twin_env = make_vec(env_id, 1, world_offset=num_envs - 1, **kwargs)
            try:
                twin_probe = _Probe(twin_env, vbd, seed, measure=False)
                twin_probe.run("random", [a[-1:] for a in actions["random"]], track_world=0)
                twin = twin_probe.tracked
            finally:
                twin_env.close()
        probe.report(report, twin, check_world_count)
    finally:
        env.close()
    return report


def _actions(policy: str, num_envs: int, act_dim: int, steps: int, seed: int) -> list[np.ndarray]:
    """The action sequence of one family: ``steps`` float32 arrays of shape (num_envs, act_dim)."""
    rng = np.random.default_rng([seed, POLICIES.index(policy)])
    if policy == "random":
        return [rng.uniform(-1.0, 1.0, (num_envs, act_dim)).astype(np.float32) for _ in range(steps)]
    if policy == "bang-bang":
        signs = rng.choice(np.array([-1.0, 1.0], np.float32), (num_envs, act_dim))
        return [signs * np.float32(1.0 if (t // BANG_BANG_PERIOD) % 2 == 0 else -1.0) for t in range(steps)]
    return [np.zeros((num_envs, act_dim), np.float32)] * steps


def _quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrices (n, 3, 3) of unit quaternions (n, 4) in Newton's (x, y, z, w) order."""
    x, y, z, w = (q[:, i].astype(np.float64) for i in range(4))
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], axis=-1),
            np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], axis=-1),
            np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], axis=-1),
        ],
        axis=1,
    )


def _worst(current: tuple[float, str] | None, value: float, where: str) -> tuple[float, str]:
    return (value, where) if current is None or value > current[0] else current


def _short(label: Any) -> str:
    return str(label).rsplit("/", 1)[-1]


class _Probe:
    """Steps one env under the action families and keeps the running worst value of every check."""

    def __init__(self, env: Any, vbd: bool, seed: int, measure: bool = True) -> None:
        import newton
        import warp as wp

        self.env, self.vbd, self.seed, self.measure = env, vbd, seed, measure
        self.n = env.num_envs
        self.tracked: list[list[tuple[str, np.ndarray]]] = []
        self.marks_by_policy: dict[str, dict[str, int]] = {}
        self._policy, self._fresh = "", np.zeros(self.n, bool)
        if not measure:
            return
        m = env.model
        # Joints: the coordinate of each limited DOF, declared rate limits, linear or angular, world and label.
        from steel_envs.envs.joint_limits import limited_dofs

        dofs = m.joint_dof_count
        self.dof_coord = limited_dofs(m)[0] if dofs else np.zeros(0, np.int32)
        self.lower, self.upper = m.joint_limit_lower.numpy(), m.joint_limit_upper.numpy()
        self.effort_limit = m.joint_effort_limit.numpy() if dofs else np.zeros(0)
        self.velocity_limit = m.joint_velocity_limit.numpy() if dofs else np.zeros(0)
        qd_start = m.joint_qd_start.numpy()
        self.dof_joint = np.searchsorted(qd_start, np.arange(dofs), side="right") - 1
        dof_dim = m.joint_dof_dim.numpy() if m.joint_count else np.zeros((0, 2), np.int32)
        self.dof_linear = np.array([d - qd_start[j] < dof_dim[j][0] for d, j in enumerate(self.dof_joint)], bool)
        world_start = m.joint_dof_world_start.numpy()
        self.dof_world = np.searchsorted(world_start[: self.n + 1], np.arange(dofs), side="right") - 1
        self.dof_local = np.arange(dofs) - world_start[np.clip(self.dof_world, 0, self.n - 1)]
        self.joint_names = [_short(label) for label in m.joint_label]
        # Drive rows clamp a driven DOF's force at its effort limit; that force is not public.
        self.driven = np.zeros(dofs, bool)
        if not vbd and env.solver_options.drive_mode == "rows" and dofs:
            self.driven = (m.joint_target_ke.numpy() > 0.0) | (m.joint_target_kd.numpy() > 0.0)
        self.ik_q = self.ik_qd = None
        if vbd and m.joint_count:  # SolverVBD keeps no joint coordinates: recovered from the bodies
            self.ik_q = wp.zeros(m.joint_coord_count, dtype=wp.float32, device=m.device)
            self.ik_qd = wp.zeros(dofs, dtype=wp.float32, device=m.device)
        # Ground planes: static plane shapes, their world (-1: every world), a point and the normal (local +z).
        shape_type = m.shape_type.numpy() if m.shape_count else np.zeros(0, np.int32)
        self.shape_body = m.shape_body.numpy() if m.shape_count else np.zeros(0, np.int32)
        self.shape_world = m.shape_world.numpy() if m.shape_count else np.zeros(0, np.int32)
        self.shape_margin = m.shape_margin.numpy().astype(np.float64) if m.shape_count else np.zeros(0)
        self.is_ground = (shape_type == int(newton.GeoType.PLANE)) & (self.shape_body < 0)
        xf = m.shape_transform.numpy()[self.is_ground] if m.shape_count else np.zeros((0, 7), np.float32)
        self.plane_world = self.shape_world[self.is_ground]
        self.plane_point = xf[:, :3].astype(np.float64)
        self.plane_normal = _quat_to_matrix(xf[:, 3:7])[:, :, 2] if len(xf) else np.zeros((0, 3))
        # Contacts of the measured state itself, from a private pipeline with the env's options (the env's own
        # contacts are those of the last physics step's start); it publishes no capacity to the model.
        self.pipeline = self.contacts = self.distance = None
        if env.collision_pipeline is not None and self.is_ground.any() and m.body_count:
            self.pipeline = newton.CollisionPipeline(m, **env.collision_options, publish_capacity=False)
            self.contacts = self.pipeline.contacts()
            self.distance = wp.zeros(self.contacts.rigid_contact_max, dtype=wp.float32, device=m.device)
        # Energy: dynamic bodies and active particles, their worlds, masses and each world's gravity.
        self.body_world = m.body_world.numpy() if m.body_count else np.zeros(0, np.int32)
        self.body_mass = m.body_mass.numpy().astype(np.float64) if m.body_count else np.zeros(0)
        self.body_dynamic = np.zeros(m.body_count, bool)
        if m.body_count:
            self.body_dynamic = (m.body_inv_mass.numpy() > 0.0) & (self.body_world >= 0)
        self.particle_world = m.particle_world.numpy() if m.particle_count else np.zeros(0, np.int32)
        self.particle_radius = m.particle_radius.numpy().astype(np.float64) if m.particle_count else np.zeros(0)
        self.particle_mass = m.particle_mass.numpy().astype(np.float64) if m.particle_count else np.zeros(0)
        self.particle_dynamic = np.zeros(m.particle_count, bool)
        if m.particle_count:
            active = (m.particle_flags.numpy() & int(newton.ParticleFlags.ACTIVE)) != 0
            self.particle_dynamic = active & (self.particle_mass > 0.0) & (self.particle_world >= 0)
        gravity = m.gravity.numpy().astype(np.float64)
        self.gravity = np.array([gravity[w] if len(gravity) > w else gravity[0] for w in range(self.n)])
        self.world_mass = np.zeros(self.n)
        np.add.at(self.world_mass, self.body_world[self.body_dynamic], self.body_mass[self.body_dynamic])
        np.add.at(
            self.world_mass, self.particle_world[self.particle_dynamic], self.particle_mass[self.particle_dynamic]
        )
        self.world_steps = self.overflow = self.nonfinite_state = self.nonfinite_action = 0
        self.overflow_by_policy = dict.fromkeys(POLICIES, 0)
        self.worst: dict[str, tuple[float, str] | None] = dict.fromkeys(("revolute", "prismatic", "effort", "speed"))
        self.penetration: dict[str, dict[str, tuple[float, str] | None]] = {
            "bodies": {"stepped": None, "reset": None},
            "particles": {"stepped": None, "reset": None},
        }
        self.particles_below = {"stepped": 0, "reset": 0}
        self.counts: dict[str, int] = {}
        self.energy: tuple[float, str] | None = None
        self.energy_worlds = 0
        self.energy_window = (0, 0)

    # ------------------------------------------------------------------ running

    def run(self, policy: str, actions: list[np.ndarray], track_world: int | None) -> None:
        """Reset with the report's seed and step through ``actions``, measuring after the reset and every step;
        ``track_world``: keep that world's state after each of them (world-count line)."""
        import torch

        env = self.env
        env.reset(seed=self.seed)
        fresh = np.ones(self.n, bool)
        energies = [self._energy()] if self.measure and policy == "zero" else None
        ended_any = np.zeros(self.n, bool)
        if track_world is not None:
            self.tracked.append(self._world_state(track_world))
        if self.measure:
            self._sample(policy, None, fresh)
        for a in actions:
            _, _, terminated, truncated, info = env.step(torch.from_numpy(a).to(env.torch_device))
            ended = (terminated | truncated).cpu().numpy().copy()
            if track_world is not None:
                self.tracked.append(self._world_state(track_world))
            if self.measure:
                self._sample(policy, info, fresh)
                if energies is not None:
                    energies.append(self._energy())
            ended_any |= ended
            fresh = ended  # NEXT_STEP: these worlds show their reset state after the next step
        if energies is not None:
            self._energy_drift(np.array(energies), ended_any)
        if self.measure and not self.vbd:
            self.marks_by_policy[policy] = env.solver.constraint_row_watermarks()

    def _world_state(self, w: int) -> list[tuple[str, np.ndarray]]:
        """Copies of world ``w``'s slice of every state array, by name."""
        m, s = self.env.model, self.env.state_0
        starts = {
            "joint_q": m.joint_coord_world_start,
            "joint_qd": m.joint_dof_world_start,
            "body_q": m.body_world_start,
            "body_qd": m.body_world_start,
            "particle_q": m.particle_world_start,
            "particle_qd": m.particle_world_start,
        }
        out = []
        for name in _STATE_ARRAYS:
            array = getattr(s, name)
            if array is not None and array.shape[0]:
                lo, hi = starts[name].numpy()[w : w + 2]
                out.append((name, array.numpy()[lo:hi].copy()))
        return out

    def _sample(self, policy: str, info: dict[str, Any] | None, fresh: np.ndarray) -> None:
        """Measure the current state. ``fresh`` (num_envs,) bool: worlds showing a reset state; ``info``: the step's
        (None after ``reset``)."""
        env, m = self.env, self.env.model
        self._policy, self._fresh = policy, fresh
        if info is not None:
            live = ~fresh  # a world reset in this step shows its new start; its flags were not computed
            overflow = int((info["constraint_overflow"].cpu().numpy() & live).sum())
            self.world_steps += int(live.sum())
            self.overflow += overflow
            self.overflow_by_policy[policy] += overflow
            self.nonfinite_state += int(info["nonfinite_state"].cpu().numpy().sum())
            self.nonfinite_action += int(info["nonfinite_action"].cpu().numpy().sum())
            if self.vbd:
                self._sample_vbd_lists()
        state = env.state_0
        if m.joint_dof_count:
            q, qd = state.joint_q, state.joint_qd
            if self.ik_q is not None:
                import newton

                newton.eval_ik(m, state, self.ik_q, self.ik_qd)
                q, qd = self.ik_q, self.ik_qd
            self._sample_joints(q.numpy(), qd.numpy(), env.control.joint_f.numpy())
        if self.pipeline is not None:
            self._sample_bodies()
        if m.particle_count and len(self.plane_normal):
            self._sample_particles(state.particle_q.numpy())

    def _at(self, world: int) -> str:
        """Where a value was measured: the world, the action family, and whether it was a reset state."""
        fresh = 0 <= world < self.n and self._fresh[world]
        return f"world {world}, {self._policy}" + (", reset state" if fresh else "")

    def _dof(self, d: int) -> str:
        return f"{self.joint_names[self.dof_joint[d]]} (DOF {self.dof_local[d]}, {self._at(int(self.dof_world[d]))})"

    def _sample_joints(self, q: np.ndarray, qd: np.ndarray, joint_f: np.ndarray) -> None:
        d = np.flatnonzero(self.dof_coord >= 0)
        if len(d):
            value = q[self.dof_coord[d]].astype(np.float64)
            over = np.maximum(np.maximum(value - self.upper[d], self.lower[d] - value), 0.0)
            over = np.where(np.isfinite(over), over, 0.0)  # a non-finite state is the non-finite line's
            for key, mask in (("prismatic", self.dof_linear[d]), ("revolute", ~self.dof_linear[d])):
                if mask.any():
                    k = int(np.argmax(np.where(mask, over, -1.0)))
                    self.worst[key] = _worst(self.worst[key], float(over[k]), self._dof(int(d[k])))
        for key, limit, values in (("effort", self.effort_limit, joint_f), ("speed", self.velocity_limit, qd)):
            d = np.flatnonzero(limit < _UNLIMITED_RATE)
            if len(d):
                ratio = np.abs(values[d].astype(np.float64)) / limit[d]
                ratio = np.where(np.isfinite(ratio), ratio, 0.0)
                k = int(np.argmax(ratio))
                self.worst[key] = _worst(self.worst[key], float(ratio[k]), self._dof(int(d[k])))

    def _sample_bodies(self) -> None:
        import newton

        env, m, c = self.env, self.env.model, self.contacts
        self.pipeline.collide(env.state_0, c)
        count = min(int(c.rigid_contact_count.numpy()[0]), c.rigid_contact_max)
        if not count:
            return
        newton.eval_rigid_contact_kinematics(m, env.state_0, c, out_distance=self.distance)
        s0, s1 = c.rigid_contact_shape0.numpy()[:count], c.rigid_contact_shape1.numpy()[:count]
        valid = (s0 >= 0) & (s1 >= 0)
        s0, s1 = np.where(valid, s0, 0), np.where(valid, s1, 0)
        g0, g1 = self.is_ground[s0], self.is_ground[s1]
        other = np.where(g0, s1, s0)
        ground = valid & (g0 ^ g1) & (self.shape_body[other] >= 0)
        if not ground.any():
            return
        # The distance is between the margin-inflated surfaces; a shape's own surface is its margin inside.
        depth = -self.distance.numpy()[:count].astype(np.float64) - self.shape_margin[s0] - self.shape_margin[s1]
        depth = np.where(ground & np.isfinite(depth), depth, -np.inf)
        world = self.shape_world[other]
        fresh = (world >= 0) & self._fresh[np.clip(world, 0, self.n - 1)]
        for kind, mask in (("reset", fresh), ("stepped", ~fresh)):
            if (mask & ground).any():
                k = int(np.argmax(np.where(mask, depth, -np.inf)))
                body = int(self.shape_body[other[k]])
                where = f"{_short(m.body_label[body])} ({self._at(int(world[k]))})"
                worst = self.penetration["bodies"][kind]
                self.penetration["bodies"][kind] = _worst(worst, max(float(depth[k]), 0.0), where)

    def _sample_particles(self, particle_q: np.ndarray) -> None:
        q = particle_q.astype(np.float64)
        height = np.full(len(q), np.inf)
        for point, normal, world in zip(self.plane_point, self.plane_normal, self.plane_world, strict=True):
            mine = (self.particle_world == world) | (world < 0)
            height = np.where(mine, np.minimum(height, (q - point) @ normal), height)
        depth = self.particle_radius - height
        depth = np.where(np.isfinite(depth), depth, -np.inf)
        world = self.particle_world
        fresh = (world >= 0) & self._fresh[np.clip(world, 0, self.n - 1)]
        starts = self.env.model.particle_world_start.numpy()
        for kind, mask in (("reset", fresh), ("stepped", ~fresh)):
            self.particles_below[kind] = max(self.particles_below[kind], int((mask & (height < 0.0)).sum()))
            k = int(np.argmax(np.where(mask, depth, -np.inf)))
            if mask[k] and np.isfinite(depth[k]):
                w = int(world[k])
                where = f"particle {k - int(starts[max(w, 0)])} ({self._at(w)})"
                worst = self.penetration["particles"][kind]
                self.penetration["particles"][kind] = _worst(worst, max(float(depth[k]), 0.0), where)

    def _count(self, name: str, count: int) -> None:
        self.counts[name] = max(self.counts.get(name, 0), int(count))

    def _sample_vbd_lists(self) -> None:
        """Contact counts of the last physics step of SolverVBD and its pipeline (their largest lists)."""
        env, solver = self.env, self.env.solver
        c = env.contacts
        if c is not None:
            self._count("rigid", int(c.rigid_contact_count.numpy()[0]))
            if c.soft_contact_count is not None and c.soft_contact_max:
                self._count("soft", int(c.soft_contact_count.numpy()[0]))
        lists = [
            ("body-body", solver, "body_body_contact_counts"),
            ("body-particle", solver, "body_particle_contact_counts"),
        ]
        info = getattr(solver, "trimesh_collision_info", None)
        if info is not None and env.solver_options.particle_enable_self_contact:
            lists += [
                ("vertex-triangle", info, "vertex_colliding_triangles_count"),
                ("edge-edge", info, "edge_colliding_edges_count"),
            ]
        for name, owner, attribute in lists:
            counts = getattr(owner, attribute, None)
            if counts is not None and counts.shape[0]:
                self._count(name, int(counts.numpy().max()))

    def _energy(self) -> np.ndarray:
        """Mechanical energy per world [J]: kinetic and gravitational energy of the dynamic bodies and the active
        particles, shape (num_envs,)."""
        m, s = self.env.model, self.env.state_0
        energy = np.zeros(self.n)
        b = self.body_dynamic
        if b.any():
            body_q, body_qd = s.body_q.numpy()[b].astype(np.float64), s.body_qd.numpy()[b].astype(np.float64)
            rot = _quat_to_matrix(body_q[:, 3:7])
            com = body_q[:, :3] + np.einsum("bij,bj->bi", rot, m.body_com.numpy()[b].astype(np.float64))
            omega = np.einsum("bji,bj->bi", rot, body_qd[:, 3:6])  # body frame: the inertia's
            inertia = m.body_inertia.numpy()[b].astype(np.float64)
            mass, world = self.body_mass[b], self.body_world[b]
            e = 0.5 * mass * (body_qd[:, :3] ** 2).sum(axis=1) + 0.5 * np.einsum("bi,bij,bj->b", omega, inertia, omega)
            np.add.at(energy, world, e - mass * (self.gravity[world] * com).sum(axis=1))
        p = self.particle_dynamic
        if p.any():
            q, qd = s.particle_q.numpy()[p].astype(np.float64), s.particle_qd.numpy()[p].astype(np.float64)
            mass, world = self.particle_mass[p], self.particle_world[p]
            np.add.at(energy, world, 0.5 * mass * (qd**2).sum(axis=1) - mass * (self.gravity[world] * q).sum(axis=1))
        return energy

    def _energy_drift(self, energies: np.ndarray, ended: np.ndarray) -> None:
        """Largest energy gain over the second half of the zero-action run, per world that never ended, as lift."""
        steps = len(energies) - 1
        self.energy_window = (steps // 2, steps)
        if steps < 4:
            return
        window = energies[steps // 2 :]
        g = np.linalg.norm(self.gravity, axis=1)
        usable = ~ended & (self.world_mass > 0.0) & (g > 0.0) & np.isfinite(window).all(axis=0)
        self.energy_worlds = int(usable.sum())
        if usable.any():
            lift = (window - window[0]).max(axis=0) / (self.world_mass * np.where(g > 0.0, g, 1.0))
            w = int(np.argmax(np.where(usable, lift, -np.inf)))
            self.energy = (float(lift[w]), f"world {w}")

    # ------------------------------------------------------------------ the report

    def report(self, report: DoctorReport, twin: list[list[tuple[str, np.ndarray]]] | None, check: bool) -> None:
        """Append every line to ``report``."""
        if self.vbd:
            self._vbd_capacity_lines(report)
        else:
            self._steel_capacity_lines(report)
        rate = self.overflow / max(self.world_steps, 1)
        by_policy = ", ".join(f"{p} {n}" for p, n in self.overflow_by_policy.items() if n)
        report.lines.append(
            DoctorLine(
                "overflow rate",
                "fail" if self.overflow else "pass",
                f"{100 * rate:.1f} %",
                "0 (nothing dropped)",
                f"{self.overflow} of {self.world_steps} world-steps" + (f" ({by_policy})" if by_policy else ""),
                "raise the capacity the rows / contacts lines name; an overflowing run can gain energy and diverge"
                if self.overflow
                else "",
                rate,
            )
        )
        self._limit_lines(report)
        self._penetration_lines(report)
        self._energy_line(report)
        nonfinite = self.nonfinite_state + self.nonfinite_action
        report.lines.append(
            DoctorLine(
                "non-finite events",
                "fail" if nonfinite else "pass",
                str(nonfinite),
                "0",
                f"world-steps: state {self.nonfinite_state}, action {self.nonfinite_action}",
                "a NaN or inf state: the solver diverged (overflow, a too large dt, or the model)" if nonfinite else "",
                float(nonfinite),
            )
        )
        report.lines.append(self._world_count_line(report, twin, check))

    @staticmethod
    def _capacity_line(
        report: DoctorReport,
        check: str,
        mark: int,
        capacity: int,
        option: str,
        *,
        overflowed: bool = False,
        collision: bool = False,
        detail: str = "",
    ) -> None:
        """One high-water mark against its capacity, judged and sized by the options page's rule."""
        kind = "collision_options" if collision else "solver_options"
        headroom = f"{capacity / mark:.1f}x headroom" if mark else "nothing requested"
        if overflowed or mark > capacity:
            status, size = "fail", math.ceil(OVERFLOW_FACTOR * mark)
            advice = f"overflowing: about {OVERFLOW_FACTOR:g}x the requested mark, {kind}={{{option!r}: {size}}}"
        elif capacity < HEADROOM * mark:
            status, size = "warn", math.ceil(HEADROOM * mark)
            advice = f"{HEADROOM:g}x the mark: {kind}={{{option!r}: {size}}}"
        else:
            status, size, advice = "pass", None, ""
        if size is not None:
            target = report.suggested_collision_options if collision else report.suggested_solver_options
            target[option] = max(size, int(target.get(option, 0)))
        threshold = f"no overflow, >= {HEADROOM:g}x mark"
        report.lines.append(
            DoctorLine(
                check,
                status,
                f"{mark} / {capacity}",
                threshold,
                "; ".join(filter(None, (headroom, detail))),
                advice,
                float(mark),
            )
        )

    def _steel_capacity_lines(self, report: DoctorReport) -> None:
        env, o = self.env, self.env.solver_options
        marks = env.solver.constraint_row_watermarks()
        propagation = o.propagation_constraint_max
        if propagation is None:
            propagation = o.articulation_constraint_max + o.free_body_constraint_max
        capacities = {
            "articulation": ("articulation_constraint_max", o.articulation_constraint_max),
            "free_body": ("free_body_constraint_max", o.free_body_constraint_max),
            "propagation": ("propagation_constraint_max", propagation),
        }
        shown = False
        for family, (option, capacity) in capacities.items():
            raw, overflowing = marks[f"{family}_raw_high_water"], marks[f"{family}_overflow_world_steps"]
            in_use = family == "propagation" and o.articulated_contact_response == "propagation"
            if not (raw or overflowing or in_use):
                continue
            shown = True
            first = next((p for p, mk in self.marks_by_policy.items() if mk[f"{family}_raw_high_water"] == raw), "")
            parts = [
                f"{overflowing} overflowing world-steps" if overflowing else "",
                f"mark under {first}" if first else "",
            ]
            detail = ", ".join(filter(None, parts))
            self._capacity_line(
                report, f"rows: {family}", int(raw), int(capacity), option, overflowed=overflowing > 0, detail=detail
            )
        if not shown:
            report.lines.append(DoctorLine("rows", "n/a", "0", "-", "no constraint rows requested"))
        if env.contacts is not None:
            mark, capacity = int(marks["contact_high_water"]), int(env.contacts.rigid_contact_max)
            self._capacity_line(
                report,
                "contacts: rigid",
                mark,
                capacity,
                "rigid_contact_max",
                collision=True,
                detail=f"all {self.n} worlds",
            )

    def _vbd_capacity_lines(self, report: DoctorReport) -> None:
        env, o, c = self.env, self.env.solver_options, self.env.contacts
        sampled = "sampled per control step"
        if c is not None:
            self._capacity_line(
                report,
                "contacts: rigid",
                self.counts.get("rigid", 0),
                int(c.rigid_contact_max),
                "rigid_contact_max",
                collision=True,
                detail=f"all {self.n} worlds, {sampled}",
            )
            pairs = getattr(env.collision_pipeline, "soft_contact_pair_count", None)
            mark = self.counts.get("soft", 0)
            if c.soft_contact_max and pairs is not None and c.soft_contact_max >= pairs:
                # At most one contact per (particle, shape) pair: room for every pair cannot overflow.
                report.lines.append(
                    DoctorLine(
                        "contacts: soft",
                        "pass",
                        f"{mark} / {c.soft_contact_max}",
                        f"no overflow, >= {HEADROOM:g}x mark",
                        f"room for every particle-shape pair ({pairs}): cannot overflow",
                        measured=float(mark),
                    )
                )
            elif c.soft_contact_max:
                self._capacity_line(
                    report,
                    "contacts: soft",
                    mark,
                    int(c.soft_contact_max),
                    "soft_contact_max",
                    collision=True,
                    detail=f"all {self.n} worlds, {sampled}",
                )
        for name, option in (
            ("body-body", "rigid_body_contact_buffer_size"),
            ("body-particle", "rigid_body_particle_contact_buffer_size"),
            ("vertex-triangle", "particle_vertex_contact_buffer_size"),
            ("edge-edge", "particle_edge_contact_buffer_size"),
        ):
            if name in self.counts:
                self._capacity_line(
                    report,
                    f"contacts: {name} list",
                    self.counts[name],
                    int(getattr(o, option)),
                    option,
                    detail=f"per element, {sampled}",
                )

    def _limit_lines(self, report: DoctorReport) -> None:
        lines = report.lines
        for key, tol, unit, scale in (
            ("revolute", REVOLUTE_OVERSHOOT_TOL, "rad", 1.0),
            ("prismatic", PRISMATIC_OVERSHOOT_TOL, "mm", 1000.0),
        ):
            check, threshold = f"joint-limit overshoot: {key}", f"<= {tol * scale:g} {unit}"
            if self.worst[key] is None:
                lines.append(DoctorLine(check, "n/a", "-", threshold, f"no {key} DOF declares a position limit"))
                continue
            value, where = self.worst[key]
            fail = value > tol
            if value == 0.0:
                count = int(((self.dof_coord >= 0) & (self.dof_linear == (key == "prismatic"))).sum()) // self.n
                where = f"every limited coordinate stayed in its range ({count} {key} DOFs per world)"
            advice = (
                "the limit rows leave joints past their limits: enable_joint_limits=True with "
                "joint_limit_activation_gap above 2 * max|qd| * dt (options page); where contacts couple to the "
                "limit rows, more iterations or a projection into the limits (project_joint_limits)"
            )
            lines.append(
                DoctorLine(
                    check,
                    "fail" if fail else "pass",
                    f"{value * scale:.4g} {unit}",
                    threshold,
                    where,
                    advice if fail else "",
                    value,
                )
            )
        limited = self.effort_limit < _UNLIMITED_RATE
        for key, what in (("effort", "joint_effort_limit"), ("speed", "joint_velocity_limit")):
            check, threshold = f"joint {key} / limit", f"<= {RATE_TOL:g}x"
            if self.worst[key] is None:
                lines.append(DoctorLine(check, "n/a", "-", threshold, f"no DOF declares a {what}"))
                continue
            value, where = self.worst[key]
            detail = where
            if key == "effort":
                rows = int((self.driven & limited).sum())
                if rows and value == 0.0 and not (limited & ~self.driven).any():
                    why = (
                        f"all {rows // self.n} effort-limited DOFs per world are drive rows, which SolverSteel "
                        "clamps at effort_limit * dt; their force is not public (explicit joint_f: 0)"
                    )
                    lines.append(DoctorLine(check, "n/a", "-", threshold, why, measured=value))
                    continue
                detail = f"|joint_f| at {where}" + (
                    f"; {rows} drive-row DOFs not measured (not public)" if rows else ""
                )
            fail = value > RATE_TOL
            advice = (
                "the scene applies more than the declared effort: clamp its joint_f, or drive_mode='rows'"
                if key == "effort"
                else "enable_joint_velocity_limits=True (options page), or bound the actuation"
            )
            lines.append(
                DoctorLine(
                    check, "fail" if fail else "pass", f"{value:.3f}x", threshold, detail, advice if fail else "", value
                )
            )

    def _penetration_lines(self, report: DoctorReport) -> None:
        """Bodies and particles against the ground: the worst after a physics step and, where deeper, the worst
        reset state (an initial state inside the ground is the scene's to fix)."""
        threshold = f"<= {PENETRATION_TOL * 1000:g} mm"
        worsts = self.penetration["bodies"]
        if all(v is None for v in worsts.values()):
            why = "no body touched a ground plane" if self.pipeline is not None else "no body can touch a ground plane"
            report.lines.append(DoctorLine("penetration: bodies", "n/a", "-", threshold, why))
        else:
            bad = {kind: v is not None and v[0] > PENETRATION_TOL for kind, v in worsts.items()}
            value = max(v[0] for v in worsts.values() if v is not None)
            report.lines.append(
                DoctorLine(
                    "penetration: bodies",
                    "fail" if any(bad.values()) else "pass",
                    f"{value * 1000:.2f} mm",
                    threshold,
                    self._two_worsts(worsts),
                    "; ".join(a for kind, a in (("stepped", _SINK), ("reset", _START)) if bad[kind]),
                    value,
                )
            )
        worsts, below = self.penetration["particles"], self.particles_below
        threshold += " (warn), centre above ground"
        if all(v is None for v in worsts.values()):
            report.lines.append(
                DoctorLine("penetration: particles", "n/a", "-", threshold, "no particle over a ground")
            )
            return
        value = max(v[0] for v in worsts.values() if v is not None)
        detail = self._two_worsts(worsts)
        for kind, when in (("stepped", "after a step"), ("reset", "in a reset state")):
            if below[kind]:
                detail += f"; up to {below[kind]} particle centres below the ground {when}"
        radius = float(self.particle_radius.max()) if len(self.particle_radius) else 0.0
        detail += f"; radius {radius * 1000:g} mm"
        status = "fail" if any(below.values()) else "warn" if value > PENETRATION_TOL else "pass"
        advice = "particles sink into the ground: a stiffer soft_contact_ke, more iterations or a smaller dt"
        report.lines.append(
            DoctorLine(
                "penetration: particles",
                status,
                f"{value * 1000:.2f} mm",
                threshold,
                detail,
                advice if status != "pass" else "",
                value,
            )
        )

    @staticmethod
    def _two_worsts(worsts: dict[str, tuple[float, str] | None]) -> str:
        """Where the deepest value was (the value column's); a deeper reset state also names the worst step."""
        stepped, reset = worsts["stepped"], worsts["reset"]
        if reset is None or (stepped is not None and stepped[0] >= reset[0]):
            return stepped[1]
        if stepped is None:
            return reset[1]
        return f"{reset[1]}; after a step {stepped[0] * 1000:.2f} mm at {stepped[1]}"

    def _energy_line(self, report: DoctorReport) -> None:
        check = "energy drift at rest"
        threshold = f"<= {ENERGY_GAIN_WARN * 1000:g} mm lift (warn), {ENERGY_GAIN_TOL * 1000:g} mm"
        settle, steps = self.energy_window
        if self.energy is None:
            why = (
                f"needs >= 4 steps, got {steps}" if steps < 4 else "no world's zero-action episode lasted the whole run"
            )
            report.lines.append(DoctorLine(check, "n/a", "-", threshold, why))
            return
        value, where = self.energy
        status = "fail" if value > ENERGY_GAIN_TOL else "warn" if value > ENERGY_GAIN_WARN else "pass"
        advice = (
            "a resting system gains energy: see the penetration and overflow lines; more iterations or a smaller dt"
        )
        report.lines.append(
            DoctorLine(
                check,
                status,
                f"{value * 1000:+.3f} mm",
                threshold,
                f"{where}, steps {settle}-{steps} of zero actions, {self.energy_worlds} of {self.n} worlds at rest",
                advice if status != "pass" else "",
                value,
            )
        )

    def _world_count_line(
        self, report: DoctorReport, twin: list[list[tuple[str, np.ndarray]]] | None, check: bool
    ) -> DoctorLine:
        name = "world-count independence"
        threshold = "bitwise" + (f" (VBD: warn up to {VBD_WORLD_COUNT_BOUND * 1e3:g} mm)" if self.vbd else "")
        if twin is None:
            why = "1 world: nothing to compare" if report.num_envs == 1 else "not checked (check_world_count=False)"
            return DoctorLine(name, "n/a", "-", threshold, why)
        w, steps = report.num_envs - 1, len(self.tracked) - 1
        first, deviation = None, {}
        for t, (a, b) in enumerate(zip(self.tracked, twin, strict=True)):
            for (key, x), (_, y) in zip(a, b, strict=True):
                if x.tobytes() != y.tobytes():
                    first = t if first is None else first
                    diff = float(np.nanmax(np.abs(x.astype(np.float64) - y.astype(np.float64))))
                    deviation[key] = max(deviation.get(key, 0.0), diff)
        detail = f"world {w} of {report.num_envs} vs a 1-world env started as it, {steps} random steps"
        if first is None:
            return DoctorLine(name, "pass", "bitwise", threshold, detail, measured=0.0)
        sizes = ", ".join(f"{key} {value:.2g}" for key, value in deviation.items())
        detail += f"; differs from step {first}, largest |difference|: {sizes} (SI units)"
        if self.vbd:
            advice = (
                "SolverVBD: a world's contact lists can depend on the other worlds' particles (self-contact over all "
                "worlds' particles), which changes the order of its float sums; the bound above is what held here"
            )
        else:
            advice = (
                "keep collision_options deterministic=True (collision_defaults); a global overflow ends every world"
            )
        position = max(deviation.get(k, 0.0) for k in ("joint_q", "body_q", "particle_q"))
        status = "warn" if self.vbd and position <= VBD_WORLD_COUNT_BOUND else "fail"
        return DoctorLine(name, status, "differs", threshold, detail, advice, position)


def run_cli(args: argparse.Namespace) -> int:
    """The ``steel-envs doctor`` subcommand (``args`` from ``steel_envs.cli``'s parser): print the table and write
    ``--json``. Returns the exit status: 0 no line failed, 1 a line failed, 2 bad arguments (a one-line message
    on stderr)."""
    import gymnasium as gym

    from steel_envs.registration import task_class

    def error(message: str) -> int:
        print(f"steel-envs doctor: {message}", file=sys.stderr)
        return 2

    try:
        task_class(args.env_id)
    except gym.error.UnregisteredEnv as e:
        return error(f"{e} (steel-envs list shows them all)")
    for flag, value in (("--num-envs", args.num_envs), ("--steps", args.steps)):
        if value < 1:
            return error(f"{flag}: expected an int >= 1, got {value}")
    options: dict[str, Any] = {}
    for flag, text in (("--solver-options", args.solver_options), ("--collision-options", args.collision_options)):
        try:
            options[flag] = None if text is None else json.loads(text)
        except json.JSONDecodeError:
            options[flag] = text
        if options[flag] is not None and not isinstance(options[flag], dict):
            return error(f"{flag}: expected a JSON object such as '{{\"iterations\": 16}}', got {text!r}")
    print(f"building {args.num_envs} worlds of {args.env_id} (the first run compiles Warp kernels, about a minute)")
    try:
        report = doctor(
            args.env_id,
            args.num_envs,
            args.steps,
            args.device,
            seed=args.seed,
            solver_options=options["--solver-options"],
            collision_options=options["--collision-options"],
        )
    except (ValueError, TypeError) as e:
        return error(str(e).splitlines()[0] if str(e) else type(e).__name__)
    print(report.table())
    if args.json:
        try:
            with open(args.json, "w", encoding="utf-8") as f:
                f.write(report.to_json() + "\n")
        except OSError as e:
            return error(f"--json: {e}")
    return 1 if report.failed else 0
