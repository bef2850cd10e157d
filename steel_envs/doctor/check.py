"""What a check of the doctor sees: the :class:`Sample` of one measured state and the :class:`Check` interface that
the runner (:mod:`steel_envs.doctor.runner`) drives.

A check is built on the env before the first run, receives every measured state (:meth:`Check.observe`: after each
reset and after every control step of each action family), is told when an action family ends
(:meth:`Check.end_run`), and finally writes its lines of the report (:meth:`Check.lines`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from steel_envs.doctor.report import DoctorLine, DoctorReport

__all__ = ["POLICIES", "Check", "Sample", "Worst", "quat_to_matrix", "short_label", "worst"]

POLICIES = ("random", "bang-bang", "zero")
"""The action families, in the order they run, each from the same seeded reset."""

Worst = tuple[float, str]
"""A running worst value and where it occurred (a :meth:`Sample.at` string)."""


@dataclass(frozen=True)
class Sample:
    """One measured state of the env: after a reset (``info`` and ``ended`` None) or after a control step."""

    policy: str
    """The action family of the run, one of :data:`POLICIES`."""
    fresh: np.ndarray
    """Worlds showing a reset state, bool, shape (num_envs,): every world after ``reset``; after a step, the worlds
    that ended in the previous step (``autoreset_mode="NextStep"`` resets them in this one)."""
    info: dict[str, Any] | None = None
    """The step's ``info`` (torch tensors of shape (num_envs,)); None after ``reset``."""
    ended: np.ndarray | None = None
    """Worlds whose episode ended in this step (terminated or truncated), bool, shape (num_envs,); None after
    ``reset``."""

    def at(self, world: int) -> str:
        """Where a value was measured: the world, the action family, and whether it was a reset state."""
        fresh = 0 <= world < len(self.fresh) and self.fresh[world]
        return f"world {world}, {self.policy}" + (", reset state" if fresh else "")


class Check:
    """One check of the doctor: the interface the runner drives; every hook but :meth:`lines` defaults to nothing."""

    def observe(self, sample: Sample) -> None:
        """Measure the env's current state (``env.state_0``, ``env.control``), described by ``sample``."""

    def end_run(self, policy: str) -> None:
        """The run of action family ``policy`` ended (after its last step's :meth:`observe`)."""

    def lines(self, report: DoctorReport) -> list[DoctorLine]:
        """The check's lines of ``report``, in table order; a capacity check also adds its advice to
        ``report.suggested_solver_options`` / ``suggested_collision_options``."""
        raise NotImplementedError


def worst(current: Worst | None, value: float, where: str) -> Worst:
    """The larger of ``current`` and ``(value, where)``; the earlier one on a tie."""
    return (value, where) if current is None or value > current[0] else current


def short_label(label: Any) -> str:
    """The last path component of a Newton label (``"ant/right_back_foot"`` -> ``"right_back_foot"``)."""
    return str(label).rsplit("/", 1)[-1]


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrices, float64 shape (n, 3, 3), of unit quaternions, shape (n, 4) in Newton's (x, y, z, w)
    order (the standard formula, e.g. Shoemake 1985)."""
    x, y, z, w = (q[:, i].astype(np.float64) for i in range(4))
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], axis=-1),
            np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], axis=-1),
            np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], axis=-1),
        ],
        axis=1,
    )
