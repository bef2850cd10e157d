"""The report of :func:`steel_envs.doctor.runner.doctor`: one :class:`DoctorLine` per check, printed as a table
(:meth:`DoctorReport.table`) or written as JSON (:meth:`DoctorReport.to_json`)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from steel_envs.doctor.check import POLICIES

__all__ = ["DoctorLine", "DoctorReport", "Status"]

Status = Literal["pass", "warn", "fail", "n/a"]

_STATUS_ORDER = {"n/a": 0, "pass": 1, "warn": 2, "fail": 3}


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
