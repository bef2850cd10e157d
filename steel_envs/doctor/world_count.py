"""``world-count independence``: the env's last world (index ``num_envs - 1``) under the random actions against a
1-world env of the same ID started as that world (``world_offset=num_envs - 1``, same seed and actions): every state
must be bitwise equal (the contract guide, ``docs/guides/contract.md``). On SolverVBD scenes a difference up to
:data:`VBD_WORLD_COUNT_BOUND` of position (joint, body or particle) warns and reports its size; a larger one fails.
(With particle self-contact, SolverVBD's contact lists of a world depend on the other worlds' particles, which
changes the order of its float sums; SoftPush, without self-contact, stays bitwise.)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from steel_envs.doctor.check import Check, Sample
from steel_envs.doctor.report import DoctorLine, DoctorReport

__all__ = ["VBD_WORLD_COUNT_BOUND", "WorldCountIndependence", "WorldTrace"]

VBD_WORLD_COUNT_BOUND = 1.0e-3
"""Largest position difference [m or rad] between a SolverVBD world and its 1-world twin that the world-count line
accepts (as a warning); measured on ClothFold, 4 worlds, 50 random steps: 1.9e-5 m."""

_POLICY = "random"
"""The action family whose states are compared."""
_STATE_ARRAYS = ("joint_q", "joint_qd", "body_q", "body_qd", "particle_q", "particle_qd")
_WORLD_STARTS = {
    "joint_q": "joint_coord_world_start",
    "joint_qd": "joint_dof_world_start",
    "body_q": "body_world_start",
    "body_qd": "body_world_start",
    "particle_q": "particle_world_start",
    "particle_qd": "particle_world_start",
}
"""The model's per-world start index of each state array."""

WorldState = list[tuple[str, np.ndarray]]
"""One world's slice of every non-empty state array, by name, in the order of ``_STATE_ARRAYS``."""


class WorldTrace(Check):
    """Copies of one world's state after the reset and every step of the random actions."""

    def __init__(self, env: Any, world: int) -> None:
        self.env, self.world = env, world
        self.states: list[WorldState] = []

    def observe(self, sample: Sample) -> None:
        if sample.policy != _POLICY:
            return
        m, s, w = self.env.model, self.env.state_0, self.world
        state = []
        for name in _STATE_ARRAYS:
            array = getattr(s, name)
            if array is not None and array.shape[0]:
                lo, hi = getattr(m, _WORLD_STARTS[name]).numpy()[w : w + 2]
                state.append((name, array.numpy()[lo:hi].copy()))
        self.states.append(state)

    def lines(self, report: DoctorReport) -> list[DoctorLine]:
        return []


class WorldCountIndependence(Check):
    """Traces the env's last world; :attr:`twin` is the trace of its 1-world twin, which the runner records."""

    def __init__(self, env: Any, vbd: bool) -> None:
        self.vbd = vbd
        self.trace = WorldTrace(env, env.num_envs - 1)
        self.twin: list[WorldState] | None = None
        """The twin's states (:attr:`WorldTrace.states` of world 0 of the 1-world env); None: not compared."""

    def observe(self, sample: Sample) -> None:
        self.trace.observe(sample)

    def lines(self, report: DoctorReport) -> list[DoctorLine]:
        return [self.line(report.num_envs)]

    def line(self, num_envs: int) -> DoctorLine:
        """The line, comparing :attr:`trace` with :attr:`twin` array by array, bitwise."""
        name = "world-count independence"
        threshold = "bitwise" + (f" (VBD: warn up to {VBD_WORLD_COUNT_BOUND * 1e3:g} mm)" if self.vbd else "")
        if self.twin is None:
            why = "1 world: nothing to compare" if num_envs == 1 else "not checked (check_world_count=False)"
            return DoctorLine(name, "n/a", "-", threshold, why)
        tracked = self.trace.states
        w, steps = num_envs - 1, len(tracked) - 1
        first, deviation = None, {}
        for t, (a, b) in enumerate(zip(tracked, self.twin, strict=True)):
            for (key, x), (_, y) in zip(a, b, strict=True):
                if x.tobytes() != y.tobytes():
                    first = t if first is None else first
                    diff = float(np.nanmax(np.abs(x.astype(np.float64) - y.astype(np.float64))))
                    deviation[key] = max(deviation.get(key, 0.0), diff)
        detail = f"world {w} of {num_envs} vs a 1-world env started as it, {steps} random steps"
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
