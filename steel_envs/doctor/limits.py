"""Joint-limit lines of the doctor, over every measured state (reset states included):

- ``joint-limit overshoot: revolute`` / ``prismatic``: the largest excursion of a limited joint coordinate past its
  declared ``joint_limit_lower`` / ``upper`` (a bound below :data:`steel_envs.envs.joint_limits.UNLIMITED`); on
  SolverVBD the coordinates are recovered from the bodies (``newton.eval_ik``). Fails above
  :data:`REVOLUTE_OVERSHOOT_TOL` / :data:`PRISMATIC_OVERSHOOT_TOL`.
- ``joint effort / limit``, ``joint speed / limit``: the largest ``|control.joint_f|`` over a declared
  ``joint_effort_limit`` and ``|joint_qd|`` over a declared ``joint_velocity_limit`` (declared: below 1e6, the
  builder's default). Fails above :data:`RATE_TOL`. SolverSteel's drive rows (``drive_mode="rows"``) clamp a
  drive's force at ``effort_limit * dt``; that force is not readable through a public API, so it is not part of the
  measured effort (the line says so).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from steel_envs.doctor.check import Check, Sample, Worst, short_label, worst
from steel_envs.doctor.report import DoctorLine, DoctorReport

__all__ = ["PRISMATIC_OVERSHOOT_TOL", "RATE_TOL", "REVOLUTE_OVERSHOOT_TOL", "JointLimits"]

REVOLUTE_OVERSHOOT_TOL = 0.02
"""Largest excursion past a revolute limit [rad] (``docs/guides/contract.md``; ``tests/test_joint_limits.py``)."""
PRISMATIC_OVERSHOOT_TOL = 0.005
"""Largest excursion past a prismatic limit [m] (same sources)."""
RATE_TOL = 1.01
"""Largest effort or speed over its declared limit [x the limit] (same sources)."""

_UNLIMITED_RATE = 1.0e6  # the builder's default velocity and effort limits: no limit
_OVERSHOOT_ADVICE = (
    "the limit rows leave joints past their limits: enable_joint_limits=True with joint_limit_activation_gap above "
    "2 * max|qd| * dt (options page); where contacts couple to the limit rows, more iterations or a projection into "
    "the limits (project_joint_limits)"
)


class JointLimits(Check):
    """The running worst overshoot, effort ratio and speed ratio of the env's DOFs, and where each occurred."""

    def __init__(self, env: Any, vbd: bool) -> None:
        import warp as wp

        from steel_envs.envs.joint_limits import limited_dofs

        self.env, m = env, env.model
        n, dofs = env.num_envs, m.joint_dof_count
        # Per DOF: its limited coordinate (-1: none), limits, linear or angular, world, index in the world, joint.
        self.dof_coord = limited_dofs(m)[0] if dofs else np.zeros(0, np.int32)
        self.lower, self.upper = m.joint_limit_lower.numpy(), m.joint_limit_upper.numpy()
        self.effort_limit = m.joint_effort_limit.numpy() if dofs else np.zeros(0)
        self.velocity_limit = m.joint_velocity_limit.numpy() if dofs else np.zeros(0)
        qd_start = m.joint_qd_start.numpy()
        self.dof_joint = np.searchsorted(qd_start, np.arange(dofs), side="right") - 1
        dof_dim = m.joint_dof_dim.numpy() if m.joint_count else np.zeros((0, 2), np.int32)
        self.dof_linear = np.array([d - qd_start[j] < dof_dim[j][0] for d, j in enumerate(self.dof_joint)], bool)
        world_start = m.joint_dof_world_start.numpy()
        self.dof_world = np.searchsorted(world_start[: n + 1], np.arange(dofs), side="right") - 1
        self.dof_local = np.arange(dofs) - world_start[np.clip(self.dof_world, 0, n - 1)]
        self.joint_names = [short_label(label) for label in m.joint_label]
        # Drive rows clamp a driven DOF's force at its effort limit; that force is not public.
        self.driven = np.zeros(dofs, bool)
        if not vbd and env.solver_options.drive_mode == "rows" and dofs:
            self.driven = (m.joint_target_ke.numpy() > 0.0) | (m.joint_target_kd.numpy() > 0.0)
        self.ik_q = self.ik_qd = None
        if vbd and m.joint_count:  # SolverVBD keeps no joint coordinates: recovered from the bodies
            self.ik_q = wp.zeros(m.joint_coord_count, dtype=wp.float32, device=m.device)
            self.ik_qd = wp.zeros(dofs, dtype=wp.float32, device=m.device)
        self.worst: dict[str, Worst | None] = dict.fromkeys(("revolute", "prismatic", "effort", "speed"))
        """Largest overshoot [rad or m] and ratios [x the limit] so far, with where they occurred."""

    def observe(self, sample: Sample) -> None:
        env, m = self.env, self.env.model
        if not m.joint_dof_count:
            return
        q, qd = env.state_0.joint_q, env.state_0.joint_qd
        if self.ik_q is not None:
            import newton

            newton.eval_ik(m, env.state_0, self.ik_q, self.ik_qd)
            q, qd = self.ik_q, self.ik_qd
        self._sample(sample, q.numpy(), qd.numpy(), env.control.joint_f.numpy())

    def _dof(self, sample: Sample, d: int) -> str:
        joint = self.joint_names[self.dof_joint[d]]
        return f"{joint} (DOF {self.dof_local[d]}, {sample.at(int(self.dof_world[d]))})"

    def _sample(self, sample: Sample, q: np.ndarray, qd: np.ndarray, joint_f: np.ndarray) -> None:
        """Update the worst values from joint coordinates ``q`` [m or rad], shape (joint_coord_count,), velocities
        ``qd`` [m/s or rad/s] and efforts ``joint_f`` [N or N m], shape (joint_dof_count,)."""
        d = np.flatnonzero(self.dof_coord >= 0)
        if len(d):
            value = q[self.dof_coord[d]].astype(np.float64)
            over = np.maximum(np.maximum(value - self.upper[d], self.lower[d] - value), 0.0)
            over = np.where(np.isfinite(over), over, 0.0)  # a non-finite state is the non-finite line's
            for key, mask in (("prismatic", self.dof_linear[d]), ("revolute", ~self.dof_linear[d])):
                if mask.any():
                    k = int(np.argmax(np.where(mask, over, -1.0)))
                    self.worst[key] = worst(self.worst[key], float(over[k]), self._dof(sample, int(d[k])))
        for key, limit, values in (("effort", self.effort_limit, joint_f), ("speed", self.velocity_limit, qd)):
            d = np.flatnonzero(limit < _UNLIMITED_RATE)
            if len(d):
                ratio = np.abs(values[d].astype(np.float64)) / limit[d]
                ratio = np.where(np.isfinite(ratio), ratio, 0.0)
                k = int(np.argmax(ratio))
                self.worst[key] = worst(self.worst[key], float(ratio[k]), self._dof(sample, int(d[k])))

    def lines(self, report: DoctorReport) -> list[DoctorLine]:
        return self._overshoot_lines() + self._rate_lines()

    def _overshoot_lines(self) -> list[DoctorLine]:
        lines = []
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
                limited = (self.dof_coord >= 0) & (self.dof_linear == (key == "prismatic"))
                count = int(limited.sum()) // self.env.num_envs
                where = f"every limited coordinate stayed in its range ({count} {key} DOFs per world)"
            advice = _OVERSHOOT_ADVICE if fail else ""
            lines.append(
                DoctorLine(
                    check, "fail" if fail else "pass", f"{value * scale:.4g} {unit}", threshold, where, advice, value
                )
            )
        return lines

    def _rate_lines(self) -> list[DoctorLine]:
        lines = []
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
                        f"all {rows // self.env.num_envs} effort-limited DOFs per world are drive rows, which "
                        "SolverSteel clamps at effort_limit * dt; their force is not public (explicit joint_f: 0)"
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
            status = "fail" if fail else "pass"
            lines.append(DoctorLine(check, status, f"{value:.3f}x", threshold, detail, advice if fail else "", value))
        return lines
