"""Physics health report of a registered env: ``steel-envs doctor <ID>``, or :func:`doctor` from Python.

The doctor builds the env with ``num_envs`` worlds and steps it ``steps`` control steps under each of three action
families, each from the same seeded reset: ``random`` (uniform in [-1, 1]), ``bang-bang`` (+-1 per action entry, a
sign pattern drawn per world, flipped every :data:`BANG_BANG_PERIOD` steps) and ``zero``. SolverSteel scenes run
with ``row_watermark=True``. Episodes end as the task declares and reset on the next step
(``autoreset_mode="NextStep"``), so the terminal state of an episode is measured, and the reset state after it. The
state after each reset and after every control step (what the observations see) is measured; each check becomes one
line of a table with a value, a threshold, a status (``pass``, ``warn``, ``fail``, or ``n/a`` where the env has
nothing to check), where the value occurred and, where something is off, the options page's advice with the exact
``solver_options`` / ``collision_options`` to set. Env keywords and task config fields configure the env under test
(``steel-envs doctor steel_envs/PushCube-v0 --env-kwargs '{"clutter": 4}'``, or keywords of :func:`doctor`).

The checks, one module each, in the order of the table (each module's docstring gives the measurement and its
thresholds, the module constants with their sources):

- :mod:`~steel_envs.doctor.capacities`: ``rows: <family>`` (SolverSteel), ``contacts: rigid`` / ``soft`` and
  ``contacts: <list> list`` (SolverVBD): high-water marks against their capacities; a warning or failure adds the
  options page's size to the suggested ``solver_options`` / ``collision_options``.
- :mod:`~steel_envs.doctor.overflow`: ``overflow rate``, the fraction of world-steps that dropped rows or contacts.
- :mod:`~steel_envs.doctor.limits`: ``joint-limit overshoot: revolute`` / ``prismatic``, ``joint effort / limit``,
  ``joint speed / limit``: the largest excursion past a declared position limit, and effort and speed over theirs.
- :mod:`~steel_envs.doctor.penetration`: ``penetration: bodies`` / ``particles``, the deepest body or particle below
  a ground plane, reset states reported apart.
- :mod:`~steel_envs.doctor.energy`: ``energy drift at rest``, the largest gain of mechanical energy under zero
  actions, as the height it would lift the world's mass.
- :mod:`~steel_envs.doctor.nonfinite`: ``non-finite events``, world-steps with a non-finite state or action.
- :mod:`~steel_envs.doctor.world_count`: ``world-count independence``, the last world against a 1-world env started
  as it: bitwise (SolverVBD: within :data:`VBD_WORLD_COUNT_BOUND`).

:mod:`~steel_envs.doctor.runner` builds the env, steps it and drives the checks through the interface of
:mod:`~steel_envs.doctor.check`; :mod:`~steel_envs.doctor.command` is the subcommand. A failing check is a line, not
an exception: :attr:`DoctorReport.failed`, and the CLI's exit status 1.
"""

from __future__ import annotations

from steel_envs.doctor.capacities import HEADROOM, OVERFLOW_FACTOR
from steel_envs.doctor.check import POLICIES
from steel_envs.doctor.command import run_cli
from steel_envs.doctor.energy import ENERGY_GAIN_TOL, ENERGY_GAIN_WARN
from steel_envs.doctor.limits import PRISMATIC_OVERSHOOT_TOL, RATE_TOL, REVOLUTE_OVERSHOOT_TOL
from steel_envs.doctor.penetration import PENETRATION_TOL
from steel_envs.doctor.report import DoctorLine, DoctorReport
from steel_envs.doctor.runner import BANG_BANG_PERIOD, doctor
from steel_envs.doctor.world_count import VBD_WORLD_COUNT_BOUND

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
