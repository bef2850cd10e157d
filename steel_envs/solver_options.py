"""Typed constructor options of :class:`newton.solvers.SolverSteel` and :class:`newton.solvers.SolverVBD`.

Every keyword of ``SolverSteel.__init__`` in newton 1.8.0 is a field here with Newton's default, so a
scene states only what it changes and a user overrides any of them with ``solver_options={...}``.
The meaning of each option is the reference page of SolverSteel; the "when to change" guidance is its
options page. ``tests/test_solver_options.py`` checks that the fields and defaults still match the
installed solver's signature.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import warp as wp

__all__ = ["SteelSolverOptions", "VBDSolverOptions"]


@dataclass(kw_only=True)
class SteelSolverOptions:
    """Keyword arguments of ``SolverSteel.__init__`` (newton 1.8.0), with Newton's defaults.

    Field docstrings are one-line summaries; the solver's reference page is authoritative.
    """

    solve_mode: Literal["serial", "colored"] = "serial"
    """Gauss-Seidel sweep order: one fused serial sweep per world, or colored parallel contact rows."""
    iterations: int = 12
    """Projected Gauss-Seidel iterations per step."""
    baumgarte: float = 0.2
    """Position-correction fraction of contact and joint-limit rows per step, in [0, 1]."""
    cfm: float = 1.0e-6
    """Constraint force mixing added to each row's effective-mass diagonal."""
    relaxation: float = 1.0
    """Successive over-relaxation factor of the sweep."""
    update_mass_matrix_interval: int = 1
    """Rebuild the mass matrix every this many steps (1: every step)."""
    enable_joint_limits: bool = False
    """Enforce finite joint position limits as unilateral rows."""
    joint_limit_activation_gap: float = math.inf
    """Distance from a limit [m or rad] at which its row is created; inf creates rows for every finite limit."""
    enable_joint_velocity_limits: bool = False
    """Enforce ``joint_velocity_limit`` as rows."""
    velocity_limit_activation_fraction: float = 0.0
    """Create velocity-limit rows only when ``|qd| >= fraction * limit``; in [0, 1] or inf."""
    enable_joint_friction: bool = False
    """Dry joint friction rows (CUDA only)."""
    articulation_constraint_max: int = 32
    """Rows of articulated bodies per world (contacts, limits, mimic, drive rows); excess rows are dropped."""
    free_body_constraint_max: int = 512
    """Free-body rows per world (contacts and velocity limits); excess rows are dropped."""
    propagation_constraint_max: int | None = None
    """Propagation rows per world with ``articulated_contact_response="propagation"``; None: sum of the two above."""
    warn_constraint_overflow: bool = True
    """Device-side warning the first time a world exceeds a row capacity."""
    row_watermark: bool = False
    """Record row high-water marks, read with ``constraint_row_watermarks()``."""
    drive_mode: Literal["augmented", "rows"] = "augmented"
    """Implicit drives folded into the mass matrix, or one clamped PGS row per driven DOF."""
    fuse_joint_velocity_limits: bool = True
    """Fuse velocity-limit clamps into drive rows (rows drive mode only)."""
    enable_bilateral_preelimination: bool = False
    """Pre-eliminate mimic and connect rows through a regularized Schur complement."""
    bilateral_preelimination_include_mimics: bool = True
    """Include mimic rows in the pre-elimination."""
    parallel_tree: bool = False
    """Traverse independent branches of each tree in parallel (CUDA)."""
    reuse_kinematics: bool = False
    """Carry kinematics of a published step into the next step."""
    use_parallel_streams: bool = False
    """Run independent solver phases on parallel CUDA streams."""
    double_buffer: bool = False
    """Double-buffer solver-internal arrays."""
    friction_anchor_beta: float | None = None
    """Friction-patch anchor correction; 0 selects point friction; None: Newton's default."""
    contact_regularization: float = 0.0
    """Contact row regularization."""
    velocity_iterations: int = 0
    """Velocity-only iterations after the position iterations."""
    velocity_drive_mode: Literal["freeze", "active"] = "freeze"
    """Drive handling during velocity iterations."""
    row_schedule: Literal["interleaved", "contact_then_internal", "phased"] = "interleaved"
    """Order of contact and internal rows within a sweep."""
    friction_mode: Literal["fixed_normal", "bisection", "bisection_desaxce", "coulomb_newton"] = "fixed_normal"
    """Friction cone solve; anything but "fixed_normal" is CUDA only."""
    contact_warmstart: bool = False
    """Warm-start contact impulses from the previous step."""
    contact_warmstart_decay: float = 1.0
    """Scale of the warm-start impulses."""
    enable_restitution: bool = True
    """Apply the shapes' restitution."""
    restitution_velocity_threshold: float = 0.5
    """Approach speed [m/s] below which restitution is off."""
    contact_speculative_scale: float = 1.0
    """Scale of speculative contact distance."""
    contact_gap_gate: float | None = None
    """Gap [m] above which speculative contacts are gated out; None: off."""
    contact_friction_scale: float = 1.0
    """Scale of the friction coefficients."""
    contact_friction_position_iterations: int = -1
    """Position iterations that carry friction rows; -1: all."""
    contact_friction_gap_max: float | None = None
    """Gap [m] above which friction rows are skipped; None: off."""
    contact_shared_anchor: bool = False
    """Share contact anchors within a patch."""
    contact_friction_shared_anchor: bool = False
    """Share friction anchors within a patch."""
    contact_torsion_device: bool = False
    """Experimental contact torsion rows (CUDA)."""
    contact_compliance: bool = False
    """Experimental implicit compliance of hydroelastic contacts (CUDA)."""
    enable_sleeping: bool = False
    """Experimental passive-island sleeping."""
    sleep_linear_threshold: float = 0.05
    """Linear speed [m/s] below which a body may sleep."""
    sleep_angular_threshold: float = 0.15
    """Angular speed [rad/s] below which a body may sleep."""
    sleep_quiet_time: float = 0.5
    """Time [s] below the thresholds before an island sleeps."""
    sleep_skip_constraints: bool = True
    """Skip the rows of sleeping islands."""
    articulated_contact_response: Literal["immediate", "propagation"] = "immediate"
    """Contacts of articulated bodies as generalized rows, or as propagated per-body rows."""
    propagation_same_articulation_rows: bool = False
    """Also solve contacts between links of one articulation as propagation rows."""
    propagation_cached_response: bool = True
    """Cache per-body responses of propagation rows."""
    propagation_cached_response_body_max: int = 8
    """Largest articulation [bodies] whose responses are cached."""
    propagation_color_order: Literal["contact", "longest_first"] = "contact"
    """Order of uncolored propagation contacts."""
    deterministic: wp.DeterministicMode | None = None
    """Warp determinism mode for GPU runs (run-to-run bitwise equal atomics); None: Warp's global setting."""

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """Names of all options, in the order of the solver's signature."""
        return tuple(f.name for f in dataclasses.fields(cls))

    def replace(self, overrides: Mapping[str, Any] | None) -> SteelSolverOptions:
        """Return a copy with ``overrides`` applied.

        Values are checked against the field's type here (a bool for a bool, an int in int32 range for an
        int, a finite float32 for a float, one of the literals, None only where the solver takes None) and
        numpy scalars become Python scalars; ranges beyond those below are checked by the solver.

        Args:
            overrides: Option names and values, or None for no change.

        Raises:
            TypeError: If ``overrides`` is not a mapping.
            ValueError: If a key is not a keyword of ``SolverSteel.__init__`` (the message lists the valid
                keys), or a value has the wrong type or is out of range (the message names the option).
        """
        if overrides is None:
            return dataclasses.replace(self)
        if not isinstance(overrides, Mapping):
            raise TypeError(f"solver_options: expected a dict of SolverSteel keywords, got {type(overrides).__name__}")
        unknown = sorted(str(k) for k in overrides if k not in self.field_names())
        if unknown:
            raise ValueError(
                f"solver_options: unknown SolverSteel option(s) {unknown}; valid keys are {list(self.field_names())}"
            )
        hints = typing.get_type_hints(type(self), globalns={"wp": wp, **globals()})
        checked = {name: _check_option(name, hints[name], value) for name, value in overrides.items()}
        return dataclasses.replace(self, **checked)

    def as_kwargs(self) -> dict[str, Any]:
        """The options as keyword arguments of ``SolverSteel.__init__``."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


_INT32 = (-(2**31), 2**31 - 1)
_FLOAT32_MAX = float(np.finfo(np.float32).max)
# Options whose documented value set includes infinity.
_INF_ALLOWED = frozenset(
    {"joint_limit_activation_gap", "velocity_limit_activation_fraction", "contact_friction_gap_max"}
)
# Ranges the solver itself does not check: (low, high, both ends inclusive). baumgarte is a fraction of the
# error removed per step (reference page); successive over-relaxation converges only for 0 < relaxation < 2.
_RANGES = {"baumgarte": (0.0, 1.0, True), "cfm": (0.0, math.inf, True), "relaxation": (0.0, 2.0, False)}


def _check_option(name: str, hint: Any, value: Any) -> Any:
    """Check one option value against its field type; return it as a Python scalar."""
    args = typing.get_args(hint)
    if value is None:
        if type(None) in args:
            return None
        raise ValueError(f"solver_options[{name!r}]: None is not allowed")
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        hint = next(a for a in args if a is not type(None))
        args = typing.get_args(hint)
    if typing.get_origin(hint) is Literal:
        if not isinstance(value, str) or value not in args:
            raise ValueError(f"solver_options[{name!r}]: expected one of {list(args)}, got {value!r}")
        return value
    if hint is bool:
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"solver_options[{name!r}]: expected a bool, got {value!r}")
        return bool(value)
    if hint is int:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"solver_options[{name!r}]: expected an int, got {value!r}")
        if not _INT32[0] <= value <= _INT32[1]:
            raise ValueError(f"solver_options[{name!r}]: expected an int in int32 range, got {value!r}")
        return int(value)
    if hint is float:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ValueError(f"solver_options[{name!r}]: expected a number, got {value!r}")
        if isinstance(value, (int, np.integer)) and float(value) != value:
            raise ValueError(f"solver_options[{name!r}]: expected a number a float holds exactly, got {value!r}")
        value = float(value)
        if (
            math.isnan(value)
            or (math.isinf(value) and name not in _INF_ALLOWED)
            or (math.isfinite(value) and abs(value) > _FLOAT32_MAX)
        ):
            raise ValueError(f"solver_options[{name!r}]: expected a finite float32 number, got {value!r}")
        if name in _RANGES:
            low, high, closed = _RANGES[name]
            inside = low <= value <= high if closed else low < value < high
            if not inside:
                bounds = f"[{low}, {high}]" if closed else f"({low}, {high})"
                raise ValueError(f"solver_options[{name!r}]: expected a value in {bounds}, got {value!r}")
        return value
    if isinstance(hint, type) and not isinstance(value, hint):
        raise ValueError(f"solver_options[{name!r}]: expected a {hint.__name__}, got {value!r}")
    return value


# The env owns the collision pipeline and passes its contacts to ``step``; a solver-owned pipeline changes that
# contract, so it is not an option. Nor is an external rigid solver: there is none, the pusher would not move.
_VBD_NOT_OPTIONS = frozenset({"self", "model", "collision_pipeline", "integrate_with_external_rigid_solver"})
# Lower bounds the solver does not check itself (a value below runs, and silently breaks the physics or raises
# deep in an allocation): at least one iteration, non-negative buffers and distances.
_VBD_MINIMUM = {
    "iterations": 1,
    "friction_epsilon": 0.0,
    "particle_self_contact_radius": 0.0,
    "particle_self_contact_margin": 0.0,
    "particle_self_contact_gap": 0.0,
    "particle_rest_shape_contact_exclusion_radius": 0.0,
    "particle_vertex_contact_buffer_size": 0,
    "particle_edge_contact_buffer_size": 0,
    "rigid_body_contact_buffer_size": 0,
    "rigid_body_particle_contact_buffer_size": 0,
}
_SCALARS = {"bool": bool, "int": int, "float": float}


@functools.cache
def _vbd_parameters() -> dict[str, inspect.Parameter]:
    from newton.solvers import SolverVBD

    params = inspect.signature(SolverVBD.__init__).parameters
    return {name: p for name, p in params.items() if name not in _VBD_NOT_OPTIONS and p.kind == p.KEYWORD_ONLY}


class VBDSolverOptions(Mapping[str, Any]):
    """Keyword arguments of ``SolverVBD.__init__`` that a scene or a user sets; every other keyword keeps the
    installed Newton's default (read from its signature, so the set follows Newton).

    Option names are checked against the installed signature; values against their annotated type (bool, int
    in int32, finite float32 number, dict; ``None`` where the annotation allows it) and the lower bounds the
    solver leaves unchecked (``iterations >= 1``, buffer sizes and contact distances >= 0); other types (enums,
    mappings of collision slots) go to the solver, which validates them. ``collision_pipeline`` and
    ``integrate_with_external_rigid_solver`` are not options: the env owns the pipeline and integrates the
    bodies. Read a value, explicit or default, as an attribute:
    ``options.particle_enable_self_contact``. The meaning of each option is SolverVBD's reference page.

    Raises:
        ValueError: On an unknown option name or a value of the wrong type; the message names the option.
    """

    def __init__(self, **options: Any) -> None:
        self._options = _check_vbd_options(options)

    def replace(self, overrides: Mapping[str, Any] | None) -> VBDSolverOptions:
        """A copy with ``overrides`` (validated) on top; None or {} returns an equal copy.

        Raises:
            ValueError: As the constructor; also when ``overrides`` is not a mapping.
        """
        if overrides is None:
            overrides = {}
        if not isinstance(overrides, Mapping):
            raise ValueError(f"solver_options: expected a dict of SolverVBD keywords, got {type(overrides).__name__}")
        return VBDSolverOptions(**{**self._options, **overrides})

    def as_kwargs(self) -> dict[str, Any]:
        """The explicit options as keyword arguments of ``SolverVBD.__init__``."""
        return dict(self._options)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self._options:
            return self._options[name]
        params = _vbd_parameters()
        if name not in params:
            raise AttributeError(f"SolverVBD has no option {name!r}")
        return params[name].default

    def __getitem__(self, name: str) -> Any:
        return self._options[name]

    def __iter__(self):
        return iter(self._options)

    def __len__(self) -> int:
        return len(self._options)

    def __repr__(self) -> str:
        return f"VBDSolverOptions({', '.join(f'{k}={v!r}' for k, v in self._options.items())})"


def _check_vbd_options(options: Mapping[str, Any]) -> dict[str, Any]:
    params = _vbd_parameters()
    unknown = sorted(set(options) - set(params))
    if unknown:
        raise ValueError(
            f"solver_options: unknown SolverVBD option(s) {unknown}; the options are the keywords of "
            f"SolverVBD.__init__ except {sorted(_VBD_NOT_OPTIONS - {'self'})}: {sorted(params)}"
        )
    checked = {}
    for name, value in options.items():
        annotation = params[name].annotation
        parts = [a.strip() for a in str(annotation).split("|")] if isinstance(annotation, str) else []
        scalar = next((_SCALARS[a] for a in parts if a in _SCALARS), None)
        if value is None and "None" in parts:
            checked[name] = None
        elif scalar is not None:
            checked[name] = _check_option(name, scalar, value)
            if name in _VBD_MINIMUM and not checked[name] >= _VBD_MINIMUM[name]:
                raise ValueError(f"solver_options[{name!r}]: expected a value >= {_VBD_MINIMUM[name]}, got {value!r}")
        elif "dict" in parts and not isinstance(value, Mapping):
            raise ValueError(f"solver_options[{name!r}]: expected a dict or None, got {type(value).__name__}")
        else:
            checked[name] = value
    return checked
