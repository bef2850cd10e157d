"""Declared valid ranges: every numeric task config field and solver option states its bounds and why, the config or
the options refuse a value outside them in one line before anything is built, and the tests generate their
out-of-range cases from the same declarations.

A task config declares its fields' ranges in ``field_ranges`` (merged along the class hierarchy by
:meth:`steel_envs.spec.TaskConfig.ranges`); the solver options in
:meth:`steel_envs.solver_options.SteelSolverOptions.ranges` and
:meth:`steel_envs.solver_options.VBDSolverOptions.ranges`.
A field that takes any value declares so too (:func:`any_value`), with the reason: a signed reward weight, an angle.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

__all__ = ["COST_WEIGHT", "Range", "any_value", "at_least", "between", "declare", "positive"]


@dataclass(frozen=True)
class Range:
    """The valid values of one field or option: ``low <= value <= high`` (``<`` at an open end), an integral value
    with ``integer``, and ``+inf`` beyond ``high`` with ``inf_ok``. A float is compared both as given and in float32
    (what the kernels receive), so ``1e-50`` is not ``> 0``."""

    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False
    integer: bool = False
    inf_ok: bool = False
    """``+inf`` is a valid value too (a documented "off" or "every" setting)."""
    reason: str = ""
    """Why the range is what it is, shown with a refusal: what the value is and what a value outside would do."""

    @property
    def bounded(self) -> bool:
        """Whether the range excludes any finite number."""
        return math.isfinite(self.low) or math.isfinite(self.high)

    def describe(self) -> str:
        """``"a number >= 0"``, ``"an int in [1, 16]"``, ``"a number in (0, 2)"``..."""
        kind = "an int" if self.integer else "a number"
        low, high = _show(self.low), _show(self.high)
        if math.isfinite(self.low) and math.isfinite(self.high):
            text = f"{kind} in {'(' if self.low_open else '['}{low}, {high}{')' if self.high_open else ']'}"
        elif math.isfinite(self.low):
            text = f"{kind} {'>' if self.low_open else '>='} {low}"
        elif math.isfinite(self.high):
            text = f"{kind} {'<' if self.high_open else '<='} {high}"
        else:
            text = kind
        return text + (" or inf" if self.inf_ok else "")

    def contains(self, value: Any) -> bool:
        """Whether ``value`` (a real number; not a bool) is inside."""
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            return False
        if self.inf_ok and float(value) == math.inf:
            return True
        if self.integer and not float(value).is_integer():
            return False
        as_float32 = float(np.float32(value)) if abs(float(value)) <= np.finfo(np.float32).max else float(value)
        return all(self._inside(v) for v in (float(value), as_float32))

    def _inside(self, v: float) -> bool:
        above = v > self.low if self.low_open else v >= self.low
        below = v < self.high if self.high_open else v <= self.high
        return above and below

    def check(self, label: str, value: Any) -> None:
        """Refuse ``value`` unless it is inside; None passes (an optional setting left off), a sequence is checked
        entry by entry.

        Raises:
            ValueError: ``"<label>: expected <range> (<reason>), got <value>"``.
        """
        if value is None or not self.bounded:
            return
        entries = value if isinstance(value, (tuple, list)) else (value,)
        if not all(self.contains(v) for v in entries):
            reason = f" ({self.reason})" if self.reason else ""
            raise ValueError(f"{label}: expected {self.describe()}{reason}, got {value!r}")

    def outside(self) -> list[float]:
        """Values just outside each finite end (what the range tests feed)."""
        values = []
        if math.isfinite(self.low):
            values.append(self.low if self.low_open else self.low - _step(self.low, self.integer))
        if math.isfinite(self.high):
            values.append(self.high if self.high_open else self.high + _step(self.high, self.integer))
        return [int(v) if self.integer else float(v) for v in values]


def _show(bound: float) -> str:
    return str(int(bound)) if math.isfinite(bound) and float(bound).is_integer() else f"{bound:g}"


def _step(bound: float, integer: bool) -> float:
    """A step past a bound: 1 for an int, else a thousandth of the bound (or 1e-3 at 0)."""
    return 1 if integer else (abs(bound) * 1e-3 if bound else 1e-3)


def declare(**ranges: Range) -> Mapping[str, Range]:
    """A read-only table of field name -> :class:`Range`: a config's ``field_ranges`` or an options class's."""
    return MappingProxyType(ranges)


def at_least(low: float, reason: str, *, integer: bool = False, inf_ok: bool = False) -> Range:
    """``value >= low``."""
    return Range(low=low, integer=integer, inf_ok=inf_ok, reason=reason)


def positive(reason: str) -> Range:
    """``value > 0``."""
    return Range(low=0.0, low_open=True, reason=reason)


def between(
    low: float, high: float, reason: str, *, integer: bool = False, low_open: bool = False, high_open: bool = False
) -> Range:
    """``low <= value <= high`` (``<`` at an open end)."""
    return Range(low=low, high=high, integer=integer, low_open=low_open, high_open=high_open, reason=reason)


def any_value(reason: str) -> Range:
    """Every finite value is valid; ``reason`` says why (a signed weight, an angle, a coordinate)."""
    return Range(reason=reason)


COST_WEIGHT = at_least(0.0, "a cost weight; a negative one pays for the cost")
"""The range of a weight the core subtracts (:attr:`steel_envs.spec.RewardTerm.cost`)."""
