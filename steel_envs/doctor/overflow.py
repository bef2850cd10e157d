"""``overflow rate``: the fraction of world-steps with ``info["constraint_overflow"]`` (rows or contacts dropped),
which fails the line if it is not 0."""

from __future__ import annotations

from steel_envs.doctor.check import POLICIES, Check, Sample
from steel_envs.doctor.report import DoctorLine, DoctorReport

__all__ = ["OverflowRate"]


class OverflowRate(Check):
    """Counts the world-steps whose flags were computed (a world reset in a step shows its new start, not a step's
    result) and those of them that dropped rows or contacts, per action family."""

    def __init__(self) -> None:
        self.world_steps = 0
        self.overflow = 0
        self.by_policy = dict.fromkeys(POLICIES, 0)
        """Overflowing world-steps per action family."""

    def observe(self, sample: Sample) -> None:
        if sample.info is None:
            return
        live = ~sample.fresh
        overflow = int((sample.info["constraint_overflow"].cpu().numpy() & live).sum())
        self.world_steps += int(live.sum())
        self.overflow += overflow
        self.by_policy[sample.policy] += overflow

    def lines(self, report: DoctorReport) -> list[DoctorLine]:
        rate = self.overflow / max(self.world_steps, 1)
        by_policy = ", ".join(f"{p} {n}" for p, n in self.by_policy.items() if n)
        advice = "raise the capacity the rows / contacts lines name; an overflowing run can gain energy and diverge"
        line = DoctorLine(
            "overflow rate",
            "fail" if self.overflow else "pass",
            f"{100 * rate:.1f} %",
            "0 (nothing dropped)",
            f"{self.overflow} of {self.world_steps} world-steps" + (f" ({by_policy})" if by_policy else ""),
            advice if self.overflow else "",
            rate,
        )
        return [line]
