"""``non-finite events``: world-steps with ``info["nonfinite_state"]`` or ``info["nonfinite_action"]``, which fail
the line if there is any."""

from __future__ import annotations

from steel_envs.doctor.check import Check, Sample
from steel_envs.doctor.report import DoctorLine, DoctorReport

__all__ = ["NonFiniteEvents"]


class NonFiniteEvents(Check):
    """Counts the world-steps the env flagged for a non-finite state or action."""

    def __init__(self) -> None:
        self.state = 0
        self.action = 0

    def observe(self, sample: Sample) -> None:
        if sample.info is not None:
            self.state += int(sample.info["nonfinite_state"].cpu().numpy().sum())
            self.action += int(sample.info["nonfinite_action"].cpu().numpy().sum())

    def lines(self, report: DoctorReport) -> list[DoctorLine]:
        events = self.state + self.action
        advice = "a NaN or inf state: the solver diverged (overflow, a too large dt, or the model)"
        line = DoctorLine(
            "non-finite events",
            "fail" if events else "pass",
            str(events),
            "0",
            f"world-steps: state {self.state}, action {self.action}",
            advice if events else "",
            float(events),
        )
        return [line]
