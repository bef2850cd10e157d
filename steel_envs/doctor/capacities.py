"""Capacity lines of the doctor: high-water marks of the solver's and the collision pipeline's buffers against
their capacities, judged and sized by SolverSteel's options page.

- ``rows: <family>`` (SolverSteel, :class:`SteelCapacities`): ``solver.constraint_row_watermarks()`` after all
  runs, the largest requested row count of any world and physics step, against the family's capacity
  (``articulation_constraint_max``, ``free_body_constraint_max``, ``propagation_constraint_max``).
- ``contacts: rigid`` / ``soft``: the largest contact count of the collision pipeline (SolverSteel's
  ``contact_high_water``, every physics step; on SolverVBD sampled after each control step) against
  ``rigid_contact_max`` / ``soft_contact_max``, the capacity of all worlds together; for a pipeline SolverVBD
  owns (``rigid_soft_enable_dat``), ``contacts: soft`` against the scene's ``soft_contacts_per_particle`` times
  the particles.
- ``contacts: <list> list`` (SolverVBD, :class:`VBDCapacities`): the longest per-body, per-vertex or per-edge
  contact list against its buffer option (``rigid_body_contact_buffer_size`` ...), sampled after each control step.

Every line: ``fail`` where rows or contacts were dropped, ``warn`` where the capacity is below :data:`HEADROOM` x
the mark. The advice is the options page's sizing rule: about :data:`OVERFLOW_FACTOR` x the requested mark while
overflowing, :data:`HEADROOM` x a non-overflowing mark.
"""

from __future__ import annotations

import math
from typing import Any

from steel_envs.doctor.check import Check, Sample
from steel_envs.doctor.report import DoctorLine, DoctorReport

__all__ = ["HEADROOM", "OVERFLOW_FACTOR", "SteelCapacities", "VBDCapacities", "capacity_line"]

HEADROOM = 1.3
"""Capacity over a non-overflowing high-water mark (SolverSteel's options page: "1.3x a non-overflowing mark")."""
OVERFLOW_FACTOR = 2.0
"""Capacity over the requested mark while overflowing (options page: "about 2x the requested mark")."""

_SAMPLED = "sampled per control step"


_THRESHOLD = f"no overflow, >= {HEADROOM:g}x mark"


def capacity_line(
    report: DoctorReport,
    check: str,
    mark: int,
    capacity: int,
    option: str,
    *,
    overflowed: bool = False,
    collision: bool = False,
    detail: str = "",
) -> DoctorLine:
    """One high-water mark against its capacity, judged and sized by the options page's rule; a warning or a
    failure also raises ``option`` in ``report``'s suggested solver (``collision``: collision) options to its size.

    Args:
        report: The report whose suggestions the advice adds to.
        check: Name of the line.
        mark: The largest count requested.
        capacity: The buffer's size, in the mark's unit.
        option: The keyword that sizes the buffer.
        overflowed: Whether the solver reported dropped entries (fails even with ``mark <= capacity``).
        collision: ``option`` is a ``collision_options`` keyword, not a ``solver_options`` one.
        detail: Appended to the line's headroom statement.
    """
    kind = "collision_options" if collision else "solver_options"
    status, factor = _judge(mark, capacity, overflowed)
    size = None if factor is None else math.ceil(factor * mark)
    if status == "fail":
        advice = f"overflowing: about {OVERFLOW_FACTOR:g}x the requested mark, {kind}={{{option!r}: {size}}}"
    elif status == "warn":
        advice = f"{HEADROOM:g}x the mark: {kind}={{{option!r}: {size}}}"
    else:
        advice = ""
    if size is not None:
        target = report.suggested_collision_options if collision else report.suggested_solver_options
        target[option] = max(size, int(target.get(option, 0)))
    detail = "; ".join(filter(None, (_headroom(mark, capacity), detail)))
    return DoctorLine(check, status, f"{mark} / {capacity}", _THRESHOLD, detail, advice, float(mark))


def _judge(mark: int, capacity: int, overflowed: bool = False) -> tuple[str, float | None]:
    """The options page's rule for a high-water mark against its capacity: ``("fail", OVERFLOW_FACTOR)`` where
    entries were dropped, ``("warn", HEADROOM)`` where the capacity is below HEADROOM x the mark, else
    ``("pass", None)``; the factor times the mark is the advised size."""
    if overflowed or mark > capacity:
        return "fail", OVERFLOW_FACTOR
    if capacity < HEADROOM * mark:
        return "warn", HEADROOM
    return "pass", None


def _headroom(mark: int, capacity: int) -> str:
    return f"{capacity / mark:.1f}x headroom" if mark else "nothing requested"


def _every_pair_line(mark: int, capacity: int, pairs: int) -> DoctorLine:
    """``contacts: soft`` where the capacity holds every (particle, shape) pair: at most one contact per pair, so it
    cannot overflow."""
    why = f"room for every particle-shape pair ({pairs}): cannot overflow"
    return DoctorLine("contacts: soft", "pass", f"{mark} / {capacity}", _THRESHOLD, why, measured=float(mark))


class SteelCapacities(Check):
    """``rows: <family>`` and ``contacts: rigid`` of a SolverSteel env (built with ``row_watermark=True``)."""

    def __init__(self, env: Any) -> None:
        self.env = env
        self.marks_by_policy: dict[str, dict[str, int]] = {}
        """``solver.constraint_row_watermarks()`` at the end of each action family's run (the marks so far)."""

    def end_run(self, policy: str) -> None:
        self.marks_by_policy[policy] = self.env.solver.constraint_row_watermarks()

    def lines(self, report: DoctorReport) -> list[DoctorLine]:
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
        lines = []
        for family, (option, capacity) in capacities.items():
            raw, overflowing = marks[f"{family}_raw_high_water"], marks[f"{family}_overflow_world_steps"]
            in_use = family == "propagation" and o.articulated_contact_response == "propagation"
            if not (raw or overflowing or in_use):
                continue
            # The first action family whose run reached the final mark (the marks only grow).
            first = next((p for p, mk in self.marks_by_policy.items() if mk[f"{family}_raw_high_water"] == raw), "")
            parts = [
                f"{overflowing} overflowing world-steps" if overflowing else "",
                f"mark under {first}" if first else "",
            ]
            detail = ", ".join(filter(None, parts))
            lines.append(
                capacity_line(
                    report,
                    f"rows: {family}",
                    int(raw),
                    int(capacity),
                    option,
                    overflowed=overflowing > 0,
                    detail=detail,
                )
            )
        if not lines:
            lines.append(DoctorLine("rows", "n/a", "0", "-", "no constraint rows requested"))
        if env.contacts is not None:
            mark, capacity = int(marks["contact_high_water"]), int(env.contacts.rigid_contact_max)
            detail = f"all {env.num_envs} worlds"
            lines.append(
                capacity_line(
                    report, "contacts: rigid", mark, capacity, "rigid_contact_max", collision=True, detail=detail
                )
            )
        return lines


class VBDCapacities(Check):
    """``contacts: rigid`` / ``soft`` and the contact-list lines of a SolverVBD env: the largest counts of the last
    physics step of each control step."""

    _LISTS = (
        ("body-body", "rigid_body_contact_buffer_size"),
        ("body-particle", "rigid_body_particle_contact_buffer_size"),
        ("vertex-triangle", "particle_vertex_contact_buffer_size"),
        ("edge-edge", "particle_edge_contact_buffer_size"),
    )
    """Contact lists in table order, with the solver option that sizes each."""

    def __init__(self, env: Any) -> None:
        self.env = env
        self.counts: dict[str, int] = {}
        """Largest count seen, by list name (``"rigid"``, ``"soft"``, ``"body-body"`` ...)."""

    def _count(self, name: str, count: int) -> None:
        self.counts[name] = max(self.counts.get(name, 0), int(count))

    def observe(self, sample: Sample) -> None:
        if sample.info is None:  # a reset state: no physics step since
            return
        env, solver = self.env, self.env.solver
        c = env.pipeline_contacts
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

    def lines(self, report: DoctorReport) -> list[DoctorLine]:
        env, o = self.env, self.env.solver_options
        lines = self._pipeline_lines(report) if env.contacts is not None else self._owned_pipeline_lines()
        for name, option in self._LISTS:
            if name in self.counts:
                count, size = self.counts[name], int(getattr(o, option))
                lines.append(
                    capacity_line(
                        report, f"contacts: {name} list", count, size, option, detail=f"per element, {_SAMPLED}"
                    )
                )
        return lines

    def _owned_pipeline_lines(self) -> list[DoctorLine]:
        """``contacts: soft`` of a solver-owned pipeline (``rigid_soft_enable_dat``), sized by the scene's
        ``soft_contacts_per_particle`` (a class attribute, so the advice is a subclass, not an option)."""
        env, c = self.env, self.env.pipeline_contacts
        if c is None or not c.soft_contact_max:
            return []
        mark, capacity = self.counts.get("soft", 0), int(c.soft_contact_max)
        pairs = self.env.solver.collision_pipeline.soft_contact_pair_count
        if capacity >= pairs:
            return [_every_pair_line(mark, capacity, pairs)]
        status, factor = _judge(mark, capacity)
        advice = ""
        if factor is not None:  # the rule's size, per particle, to a tenth
            per_particle = math.ceil(factor * mark / max(env.model.particle_count, 1) * 10) / 10
            advice = f"a subclass with soft_contacts_per_particle = {per_particle:g}"
        detail = f"{_headroom(mark, capacity)}; solver-owned pipeline, all {env.num_envs} worlds, {_SAMPLED}"
        return [DoctorLine("contacts: soft", status, f"{mark} / {capacity}", _THRESHOLD, detail, advice, float(mark))]

    def _pipeline_lines(self, report: DoctorReport) -> list[DoctorLine]:
        """``contacts: rigid`` and, where the pipeline has soft contacts, ``contacts: soft``."""
        env, c = self.env, self.env.contacts
        detail = f"all {env.num_envs} worlds, {_SAMPLED}"
        rigid = self.counts.get("rigid", 0)
        lines = [
            capacity_line(
                report,
                "contacts: rigid",
                rigid,
                int(c.rigid_contact_max),
                "rigid_contact_max",
                collision=True,
                detail=detail,
            )
        ]
        pairs = getattr(env.collision_pipeline, "soft_contact_pair_count", None)
        mark = self.counts.get("soft", 0)
        if c.soft_contact_max and pairs is not None and c.soft_contact_max >= pairs:
            lines.append(_every_pair_line(mark, int(c.soft_contact_max), pairs))
        elif c.soft_contact_max:
            soft = int(c.soft_contact_max)
            lines.append(
                capacity_line(report, "contacts: soft", mark, soft, "soft_contact_max", collision=True, detail=detail)
            )
        return lines
