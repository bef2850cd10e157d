"""Typed constructor options of :class:`newton.solvers.SolverSteel`.

Every keyword of ``SolverSteel.__init__`` in newton 1.8.0 is a field here with Newton's default, so a
scene states only what it changes and a user overrides any of them with ``solver_options={...}``.
The meaning of each option is the reference page of SolverSteel; the "when to change" guidance is its
options page. ``tests/test_solver_options.py`` checks that the fields and defaults still match the
installed solver's signature.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import warp as wp

__all__ = ["SteelSolverOptions"]


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

        Args:
            overrides: Option names and values, or None for no change.

        Raises:
            TypeError: If ``overrides`` is not a mapping.
            ValueError: If a key is not a keyword of ``SolverSteel.__init__``; the message names it and
                lists the valid keys. Values are validated by the solver at construction.
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
        return dataclasses.replace(self, **overrides)

    def as_kwargs(self) -> dict[str, Any]:
        """The options as keyword arguments of ``SolverSteel.__init__``."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
