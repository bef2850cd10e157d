"""Typed constructor options of :class:`newton.solvers.SolverSteel` and :class:`newton.solvers.SolverVBD`.

Every keyword of ``SolverSteel.__init__`` in newton 1.8.0 is a field here with Newton's default, so a
scene states only what it changes and a user overrides any of them with ``solver_options={...}``.
The meaning of each option is the reference page of SolverSteel; each class's ``ranges()`` and
``when_to_change()`` declare, per option, its valid values and when a scene or a user changes it (the
documentation's solver options page is generated from them). ``tests/test_solver_options.py`` checks that the
fields and defaults still match the installed solver's signature.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

import numpy as np
import warp as wp

from .ranges import Range, at_least, between, declare, positive

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

    def __post_init__(self) -> None:
        _check_ranges(self)

    @classmethod
    def ranges(cls) -> Mapping[str, Range]:
        """The valid range of each numeric option, with the reason (the solver's reference page)."""
        return _STEEL_RANGES

    @classmethod
    def when_to_change(cls) -> Mapping[str, str]:
        """Option name -> when to change it from its default, for every option (the documentation's solver
        options page)."""
        return _STEEL_WHEN

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """Names of all options, in the order of the solver's signature."""
        return tuple(f.name for f in dataclasses.fields(cls))

    def replace(self, overrides: Mapping[str, Any] | None) -> SteelSolverOptions:
        """Return a copy with ``overrides`` applied.

        Values are checked against the field's type here (a bool for a bool, an int in int32 range for an
        int, a finite float32 for a float, one of the literals, None only where the solver takes None) and their
        declared range (:meth:`ranges`), and numpy scalars become Python scalars; the solver checks them again.

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
        checked = {name: _check_option(name, hints[name], value, self.ranges()) for name, value in overrides.items()}
        return dataclasses.replace(self, **checked)

    def as_kwargs(self) -> dict[str, Any]:
        """The options as keyword arguments of ``SolverSteel.__init__``."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


_INT32 = (-(2**31), 2**31 - 1)
_FLOAT32_MAX = float(np.finfo(np.float32).max)
_CAPACITY = "a row capacity per world"
_STEEL_RANGES = declare(
    iterations=at_least(1, "PGS sweeps per step; with 0 no contact or limit row is solved", integer=True),
    baumgarte=between(0.0, 1.0, "the fraction of the position error removed per step"),
    cfm=at_least(0.0, "added to each row's effective-mass diagonal; a negative one can make it singular"),
    relaxation=between(0.0, 2.0, "successive over-relaxation converges only in (0, 2)", low_open=True, high_open=True),
    update_mass_matrix_interval=at_least(1, "steps between mass matrix rebuilds", integer=True),
    joint_limit_activation_gap=at_least(
        0.0, "a distance from the limit [m or rad]; inf: every finite limit", inf_ok=True
    ),
    velocity_limit_activation_fraction=Range(
        low=0.0, high=1.0, inf_ok=True, reason="a fraction of the limit; above 1 speeds past the limit stay unclamped"
    ),
    articulation_constraint_max=at_least(1, _CAPACITY, integer=True),
    free_body_constraint_max=at_least(1, _CAPACITY, integer=True),
    propagation_constraint_max=at_least(1, _CAPACITY, integer=True),
    friction_anchor_beta=at_least(0.0, "a correction gain; 0 selects point friction"),
    contact_regularization=between(0.0, 1e6, "a regularization; larger values change nothing in float32"),
    velocity_iterations=at_least(0, "velocity-only sweeps after the position sweeps", integer=True),
    contact_warmstart_decay=at_least(0.0, "a scale of the carried impulses"),
    restitution_velocity_threshold=at_least(0.0, "a closing speed [m/s]"),
    contact_speculative_scale=between(
        0.0, 1.0, "the fraction of a positive gap a contact may close in a step; above 1 it closes into penetration"
    ),
    contact_gap_gate=at_least(0.0, "a gap [m]; None: off"),
    contact_friction_scale=at_least(0.0, "a factor on the friction coefficients"),
    contact_friction_position_iterations=at_least(-1, "position sweeps that solve friction; -1: all", integer=True),
    contact_friction_gap_max=Range(
        inf_ok=True, reason="a gap [m]: a negative one keeps friction for deeper contacts, -inf for none"
    ),
    sleep_linear_threshold=positive("a speed [m/s]"),
    sleep_angular_threshold=positive("an angular speed [rad/s]"),
    sleep_quiet_time=positive("a duration [s]"),
    propagation_cached_response_body_max=at_least(1, "a cache capacity in bodies", integer=True),
)
_VBD_RANGES = declare(
    iterations=at_least(1, "VBD iterations per step; with 0 no constraint is solved", integer=True),
    friction_epsilon=at_least(0.0, "a velocity scale [m/s]"),
    dat_conservative_bound_relaxation=between(
        0.0, 1.0, "a relaxation factor of the penetration-free projection", low_open=True, high_open=True
    ),
    particle_self_contact_radius=at_least(0.0, "a distance [m]"),
    particle_self_contact_margin=at_least(0.0, "a distance [m]"),
    particle_self_contact_gap=at_least(0.0, "a distance [m]"),
    particle_conservative_bound_relaxation=between(
        0.0, 1.0, "a relaxation factor of the penetration-free projection", low_open=True, high_open=True
    ),
    particle_vertex_contact_buffer_size=at_least(0, "a buffer size", integer=True),
    particle_edge_contact_buffer_size=at_least(0, "a buffer size", integer=True),
    particle_collision_detection_interval=Range(integer=True, reason="< 0: once before the step; 0: twice; n: every n"),
    particle_edge_parallel_epsilon=at_least(0.0, "a threshold"),
    particle_topological_contact_filter_threshold=at_least(0, "a distance in mesh rings", integer=True),
    particle_rest_shape_contact_exclusion_radius=at_least(0.0, "a distance [m]"),
    rigid_avbd_alpha=between(0.0, 1.0, "a stabilization fraction"),
    rigid_avbd_joint_alpha=between(0.0, 1.0, "a stabilization fraction"),
    rigid_avbd_contact_alpha=between(0.0, 1.0, "a stabilization fraction"),
    rigid_avbd_beta=at_least(0.0, "a penalty ramp rate"),
    rigid_avbd_linear_beta=at_least(0.0, "a penalty ramp rate"),
    rigid_avbd_angular_beta=at_least(0.0, "a penalty ramp rate"),
    rigid_avbd_gamma=between(0.0, 1.0, "a per-step decay factor"),
    rigid_contact_k_start=at_least(0.0, "a stiffness [N/m]"),
    rigid_body_contact_buffer_size=at_least(0, "a buffer size", integer=True),
    rigid_body_particle_contact_buffer_size=at_least(0, "a buffer size", integer=True),
    rigid_joint_linear_ke=at_least(0.0, "a stiffness [N/m]"),
    rigid_joint_angular_ke=at_least(0.0, "a stiffness [N m/rad]"),
    rigid_joint_linear_k_start=at_least(0.0, "a stiffness [N/m]"),
    rigid_joint_angular_k_start=at_least(0.0, "a stiffness [N m/rad]"),
    rigid_joint_linear_kd=at_least(0.0, "a damping [N s/m]; the solver clamps a negative one to 0"),
    rigid_joint_angular_kd=at_least(0.0, "a damping [N m s/rad]; the solver clamps a negative one to 0"),
    tendon_max_sweeps=at_least(1, "sweeps per iteration", integer=True),
    tendon_settle_tol=at_least(0.0, "a relative tolerance"),
    tendon_activation_tol=at_least(0.0, "a relative tolerance"),
)


_DOCTOR = "the doctor's line for it warns or fails (it prints the size to set)"
_CUDA_SPEED = "CUDA speed only (the CPU ignores it): try it on a GPU and keep it if the measured step is faster"
_DEPRECATED = "Deprecated in Newton: keep the default."
_PYTHON_ONLY = "Only from Python (a mapping): to exclude or tune pairs of a custom mesh."
_STEEL_WHEN = MappingProxyType(
    {
        "solve_mode": "`colored` on CUDA, to solve contact rows of many bodies in parallel; it needs "
        '`articulated_contact_response="propagation"`. Keep `serial` on the CPU (both run serially there).',
        "iterations": "Raise when `steel-envs doctor` reports joint-limit overshoot or penetration past its bound; "
        "lower for speed only while the doctor's report still passes (the cost grows with rows x iterations).",
        "baumgarte": "Raise (up to 1) when penetration or limit violation persists over steps; lower when the "
        "correction adds energy (the doctor's energy-drift line).",
        "cfm": "Raise when redundant rows (many contacts on one body, closed loops) make the solve jitter; it softens "
        "every row.",
        "relaxation": "Below 1 when the sweep overshoots (jitter with many contacts, as AntRun and HumanoidRun set); "
        "above 1 may converge faster or diverge.",
        "update_mass_matrix_interval": "Raise only for slow articulations, to skip rebuilds; under graph capture it "
        "should divide the steps captured per graph.",
        "enable_joint_limits": "True when the model's joint position limits must hold (every shipped scene with "
        "limited joints sets it).",
        "joint_limit_activation_gap": "A smaller gap creates fewer limit rows (less time and row capacity); too small "
        "and a fast joint crosses its limit within a step: check the doctor's overshoot line.",
        "enable_joint_velocity_limits": "True when `joint_velocity_limit` must hold (QuadrupedVelocity).",
        "velocity_limit_activation_fraction": "Raise to create velocity-limit rows only near the limit (fewer rows).",
        "enable_joint_friction": "True for dry joint friction (CUDA only).",
        "articulation_constraint_max": f"Raise when {_DOCTOR}; lower to save memory and time when the mark stays far "
        "below it.",
        "free_body_constraint_max": f"Raise when {_DOCTOR}.",
        "propagation_constraint_max": f'With `articulated_contact_response="propagation"`: raise when {_DOCTOR}.',
        "warn_constraint_overflow": "False to silence the device warning where overflows are counted otherwise "
        "(the doctor's overflow line, `info`).",
        "row_watermark": "True to read the row high-water marks (`constraint_row_watermarks()`); the doctor sets it.",
        "drive_mode": "`rows` to solve drives with contacts and limits (PhysX's force drive), which differs under "
        "effort saturation (QuadrupedVelocity); `augmented` is cheaper.",
        "fuse_joint_velocity_limits": "False only to compare with separate velocity-limit rows (rows drive mode).",
        "enable_bilateral_preelimination": "For models with mimic or connect rows that converge slowly in the sweep.",
        "bilateral_preelimination_include_mimics": "False to keep mimic rows in the sweep while pre-eliminating "
        "connect rows.",
        "parallel_tree": f"{_CUDA_SPEED}; broad trees may gain, narrow ones lose.",
        "reuse_kinematics": f"{_CUDA_SPEED}; it stays off with joint velocity limits, sleeping or the parallel tree.",
        "use_parallel_streams": f"{_CUDA_SPEED}.",
        "double_buffer": f"{_CUDA_SPEED}; results are unchanged.",
        "friction_anchor_beta": "0 selects point friction, cheaper per contact (HumanoidRun); keep friction patches "
        "where resting bodies creep or lift under point friction (check the doctor's energy-drift line).",
        "contact_regularization": "Raise when contact rows are ill-conditioned (jitter with many stacked contacts).",
        "velocity_iterations": "A few when position correction adds velocity (bodies that pop out of contact).",
        "velocity_drive_mode": 'Only with `drive_mode="rows"` and velocity iterations: `active` keeps solving the '
        "drive rows there.",
        "row_schedule": "To match another engine's row order (e.g. PhysX's for grasping); keep the default otherwise.",
        "friction_mode": "Experimental in Newton: keep `fixed_normal` unless comparing friction models.",
        "contact_warmstart": "True to start from the last step's impulses (faster convergence of resting contacts); it "
        "needs a collision pipeline with contact matching.",
        "contact_warmstart_decay": "Below 1 when warm-started impulses make contacts stick or jitter.",
        "enable_restitution": "False to switch every bounce off whatever the shapes' coefficients (every shipped "
        "SolverSteel scene does).",
        "restitution_velocity_threshold": "Raise so that slow impacts do not bounce.",
        "contact_speculative_scale": "Below 1 when bodies stop short of contact or catch on edges; 0 removes the "
        "speculative allowance (AntRun uses 0.5).",
        "contact_gap_gate": "A gap [m] to solve only near contacts (fewer rows); None solves every reported contact.",
        "contact_friction_scale": "To scale every friction coefficient in the solver without editing the model.",
        "contact_friction_position_iterations": "k >= 0 solves friction only in the last k position iterations; "
        "keep -1 unless friction slows convergence of the normal rows.",
        "contact_friction_gap_max": "A gap [m] above which contacts get no friction rows (fewer rows); -inf for "
        "frictionless scenes.",
        "contact_shared_anchor": "True to apply contacts at one midpoint, as PhysX does (to match PhysX).",
        "contact_friction_shared_anchor": "True to share friction anchors within a patch (to match PhysX).",
        "contact_torsion_device": "Experimental in Newton (CUDA): torsional friction rows; keep off.",
        "contact_compliance": "Experimental in Newton (CUDA): compliance of hydroelastic contacts; keep off.",
        "enable_sleeping": "Experimental in Newton: lets resting islands sleep; not for RL, where every world moves.",
        "sleep_linear_threshold": "With sleeping on: raise to let slowly moving bodies sleep sooner.",
        "sleep_angular_threshold": "With sleeping on: raise to let slowly turning bodies sleep sooner.",
        "sleep_quiet_time": "With sleeping on: lower to sleep sooner, raise to wake less often.",
        "sleep_skip_constraints": "With sleeping on: False keeps solving sleeping islands' rows (to debug).",
        "articulated_contact_response": "`propagation` for articulations that touch many free bodies or for "
        '`solve_mode="colored"` (PushCube uses it); `immediate` is cheaper for small articulations.',
        "propagation_same_articulation_rows": "With propagation: True to solve self-contacts of an articulation as "
        "propagation rows.",
        "propagation_cached_response": "With propagation: False only to compare with the per-iteration tree walk.",
        "propagation_cached_response_body_max": "With propagation: raise when articulations with more contact-active "
        "bodies should use the cache.",
        "propagation_color_order": 'With `solve_mode="colored"`: `longest_first` when a few contacts have many more '
        "rows than the rest.",
        "deterministic": "On CUDA, `RUN_TO_RUN` for bitwise-repeatable runs at some cost; the CPU is deterministic.",
    }
)
"""When to change each SolverSteel option from its default (the solver options page of the documentation)."""
_VBD_WHEN = MappingProxyType(
    {
        "iterations": "Raise when cloth or soft bodies stretch, sag or pass through each other; lower for speed only "
        "while the doctor's penetration line passes (the shipped VBD scenes use 5).",
        "friction_epsilon": "Lower for stiffer static friction (less creep); raise when friction makes contacts "
        "jitter.",
        "dat_conservative_bound_relaxation": "Lower when rigid-soft contacts still tunnel; raise when they move too "
        "cautiously.",
        "particle_enable_self_contact": "True when cloth folds onto itself (ClothFold); it roughly doubles the cost.",
        "particle_self_contact_radius": "Raise when folded layers pass through each other; keep it below the "
        "cloth's edge length.",
        "particle_self_contact_margin": "Raise (above the radius) when fast layers pass through between detections.",
        "particle_self_contact_gap": "The rest gap between touching layers [m]: raise for thicker cloth.",
        "particle_conservative_bound_relaxation": "Lower when particles still tunnel; raise when they move too "
        "cautiously.",
        "particle_vertex_contact_buffer_size": "Raise when dense folds drop vertex-triangle contacts (layers pass "
        "through each other).",
        "particle_edge_contact_buffer_size": "Raise when dense folds drop edge-edge contacts (ClothFold uses 128).",
        "particle_collision_detection_interval": "Detect more often (smaller positive n) for fast-moving cloth; less "
        "often for speed.",
        "particle_edge_parallel_epsilon": "Raise when near-parallel edges give unstable edge-edge contacts.",
        "particle_enable_tile_solve": "False only to compare with the non-tiled solve.",
        "particle_topological_contact_filter_threshold": "Raise when neighbouring elements of a fine mesh push each "
        "other apart.",
        "particle_rest_shape_contact_exclusion_radius": "Raise when a mesh modelled with touching parts repels itself "
        "at rest.",
        "particle_external_vertex_contact_filtering_map": _PYTHON_ONLY,
        "particle_external_edge_contact_filtering_map": _PYTHON_ONLY,
        "rigid_compliant_alm": "Keep True (Newton's recommended path); False selects the legacy penalty mode.",
        "rigid_avbd_alpha": "Lower when joints or body contacts gain energy from stabilization; raise when they drift.",
        "rigid_avbd_joint_alpha": "As `rigid_avbd_alpha`, for joints only.",
        "rigid_avbd_contact_alpha": "As `rigid_avbd_alpha`, for body contacts only.",
        "rigid_avbd_beta": _DEPRECATED,
        "rigid_avbd_linear_beta": _DEPRECATED,
        "rigid_avbd_angular_beta": _DEPRECATED,
        "rigid_avbd_gamma": "Lower so that penalties and multipliers forget faster after contacts change.",
        "rigid_contact_hard": _DEPRECATED,
        "rigid_contact_history": "True to carry body-contact state across steps (steadier resting contacts); it "
        "needs contact matching.",
        "rigid_contact_k_start": _DEPRECATED,
        "rigid_body_contact_buffer_size": "Raise when a body touches more bodies than it holds (contacts dropped).",
        "rigid_body_particle_contact_buffer_size": "Raise when a body touches more particles than it holds (particles "
        "pass through it).",
        "rigid_soft_contact_use_log_barrier": "True for a log-barrier body-particle contact that never lets "
        "particles in, at more cost.",
        "rigid_joint_linear_ke": "Raise when joints stretch; lower when they make the solve stiff or jitter.",
        "rigid_joint_angular_ke": "Raise when joints twist out of place; lower when they jitter.",
        "rigid_joint_linear_k_start": _DEPRECATED,
        "rigid_joint_angular_k_start": _DEPRECATED,
        "rigid_joint_linear_kd": "Raise to damp oscillating joints.",
        "rigid_joint_angular_kd": "Raise to damp oscillating joints.",
        "tendon_max_sweeps": "Raise when tendons do not settle within a step.",
        "tendon_settle_tol": "Lower for tighter tendon constraints, at more sweeps.",
        "tendon_activation_tol": "Lower for tendons that engage earlier.",
        "rigid_soft_enable_dat": "True for a distance-aware thickness of particle-body contacts (ClothFold sets it "
        "for its cloth on the ground).",
        "rigid_soft_dat_use_interval_arithmetic": "True for a more conservative thickness bound, at more cost.",
        "deterministic": "On CUDA, `RUN_TO_RUN` for bitwise-repeatable runs at some cost; the CPU is deterministic.",
        "enable_fast_math": "False only when comparing results to a reference bit for bit.",
        "collision_frequency": _PYTHON_ONLY,
        "collision_frequency_type": _PYTHON_ONLY,
    }
)
"""When to change each SolverVBD option from its default (the solver options page of the documentation)."""


def _check_ranges(options: Any) -> None:
    """Check every option of ``options`` against its declared range (a scene's defaults, at construction)."""
    for name, valid in options.ranges().items():
        valid.check(f"solver_options[{name!r}]", getattr(options, name))


def _check_option(name: str, hint: Any, value: Any, ranges: Mapping[str, Range]) -> Any:
    """Check one option value against its field type and declared range; return it as a Python scalar."""
    args = typing.get_args(hint)
    if value is None:
        if type(None) in args:
            return None
        raise ValueError(f"solver_options[{name!r}]: None is not allowed")
    optional = ""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        optional = " or None" if type(None) in args else ""
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
        if name in ranges:
            ranges[name].check(f"solver_options[{name!r}]", value)
        return int(value)
    if hint is float:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ValueError(f"solver_options[{name!r}]: expected a number, got {value!r}")
        if isinstance(value, (int, np.integer)) and float(value) != value:
            raise ValueError(f"solver_options[{name!r}]: expected a number a float holds exactly, got {value!r}")
        value = float(value)
        valid = ranges.get(name)
        infinite_ok = valid is not None and valid.inf_ok  # a documented setting (inf: every limit; -inf: none)
        if (
            math.isnan(value)
            or (math.isinf(value) and not infinite_ok)
            or (math.isfinite(value) and abs(value) > _FLOAT32_MAX)
        ):
            raise ValueError(f"solver_options[{name!r}]: expected a finite float32 number, got {value!r}")
        if valid is not None:
            valid.check(f"solver_options[{name!r}]", value)
        return value
    if isinstance(hint, type) and not isinstance(value, hint):
        raise ValueError(f"solver_options[{name!r}]: expected a {hint.__name__}{optional}, got {value!r}")
    return value


# The env owns the collision pipeline and passes its contacts to ``step``; a solver-owned pipeline changes that
# contract, so it is not an option. Nor is an external rigid solver: there is none, the pusher would not move.
_VBD_NOT_OPTIONS = frozenset({"self", "model", "collision_pipeline", "integrate_with_external_rigid_solver"})


@dataclass(kw_only=True)
class VBDSolverOptions:
    """Keyword arguments of ``SolverVBD.__init__`` (newton 1.8.0), with Newton's defaults (``None``: the solver
    chooses, as its signature says), except ``collision_pipeline`` and ``integrate_with_external_rigid_solver``: the
    env owns the pipeline and SolverVBD integrates the bodies.

    Values are checked against their annotated type and their declared range (:meth:`ranges`; e.g.
    ``iterations >= 1``, buffer sizes and contact distances >= 0); enums and mappings go to the solver, which
    validates them. Field docstrings are one-line summaries; SolverVBD's reference page is authoritative.
    ``tests/test_solver_options.py`` checks the fields and defaults against the installed solver's signature.
    """

    iterations: int | None = None
    """VBD iterations per step."""
    friction_epsilon: float = 0.01
    """Relative velocity below which friction is smoothed [m/s]."""
    dat_conservative_bound_relaxation: float = 0.85
    """Relaxation of the rigid-soft conservative bound."""
    particle_enable_self_contact: bool = False
    """Detect particle self-contact (cloth folding onto itself)."""
    particle_self_contact_radius: float | None = None
    """Distance at which vertex-triangle and edge-edge pairs start to interact [m]."""
    particle_self_contact_margin: float | None = None
    """Distance at which self-contact pairs are generated [m] (above the radius)."""
    particle_self_contact_gap: float | None = None
    """Rest gap kept between self-contacting layers [m]."""
    particle_conservative_bound_relaxation: float | None = None
    """Relaxation of the penetration-free projection of particles."""
    particle_vertex_contact_buffer_size: int = 32
    """Vertex-triangle contacts kept per vertex."""
    particle_edge_contact_buffer_size: int = 64
    """Edge-edge contacts kept per edge."""
    particle_collision_detection_interval: int | None = None
    """Self-contact detection every this many iterations (< 0: once before the step; 0: before and after init)."""
    particle_edge_parallel_epsilon: float = 1.0e-5
    """Threshold of near-parallel edges in edge-edge contact."""
    particle_enable_tile_solve: bool = True
    """Use Warp's tile API in the particle solve."""
    particle_topological_contact_filter_threshold: int = 2
    """Self-contacts between elements closer than this many rings are discarded."""
    particle_rest_shape_contact_exclusion_radius: float = 0.0
    """Self-contacts closer than this at rest are ignored [m]."""
    particle_external_vertex_contact_filtering_map: dict | None = None
    """Extra vertex-triangle pairs to exclude (vertex id -> triangle ids); from Python only."""
    particle_external_edge_contact_filtering_map: dict | None = None
    """Extra edge-edge pairs to exclude (edge id -> edge ids); from Python only."""
    rigid_compliant_alm: bool = True
    """Unified compliant-ALM mode for body contacts, joints, drives and limits (the recommended path)."""
    rigid_avbd_alpha: float | None = None
    """C0 stabilization strength of joints and body contacts, in [0, 1]."""
    rigid_avbd_joint_alpha: float | None = None
    """Joint-specific alpha."""
    rigid_avbd_contact_alpha: float | None = None
    """Body-contact-specific alpha."""
    rigid_avbd_beta: float | None = None
    """Legacy penalty ramp rate per iteration (deprecated; keep 0)."""
    rigid_avbd_linear_beta: float | None = None
    """Legacy linear ramp rate (deprecated)."""
    rigid_avbd_angular_beta: float | None = None
    """Legacy angular ramp rate (deprecated)."""
    rigid_avbd_gamma: float = 0.999
    """Per-step decay of penalty k and persisted multipliers."""
    rigid_contact_hard: bool | None = None
    """Legacy hard / soft body-contact mode (deprecated)."""
    rigid_contact_history: bool | None = None
    """Persist body-contact state across steps through contact matching."""
    rigid_contact_k_start: float | None = None
    """Legacy contact penalty seed [N/m] (deprecated)."""
    rigid_body_contact_buffer_size: int = 64
    """Body-body contacts kept per rigid body."""
    rigid_body_particle_contact_buffer_size: int = 256
    """Body-particle contacts kept per rigid body."""
    rigid_soft_contact_use_log_barrier: bool = False
    """Log-barrier body-particle contact."""
    rigid_joint_linear_ke: float | None = None
    """Stiffness of structural linear joint slots [N/m]."""
    rigid_joint_angular_ke: float | None = None
    """Stiffness of structural angular joint slots [N m/rad]."""
    rigid_joint_linear_k_start: float | None = None
    """Legacy linear joint penalty seed [N/m] (deprecated)."""
    rigid_joint_angular_k_start: float | None = None
    """Legacy angular joint penalty seed [N m/rad] (deprecated)."""
    rigid_joint_linear_kd: float | None = None
    """Damping of structural linear joint slots."""
    rigid_joint_angular_kd: float | None = None
    """Damping of structural angular joint slots."""
    tendon_max_sweeps: int = 256
    """Largest number of tendon sweeps per step."""
    tendon_settle_tol: float = 0.001
    """Tendon settling tolerance."""
    tendon_activation_tol: float = 0.002
    """Tendon activation tolerance."""
    rigid_soft_enable_dat: bool = False
    """Distance-aware thickness in rigid-soft contact."""
    rigid_soft_dat_use_interval_arithmetic: bool = False
    """Interval arithmetic in the distance-aware thickness."""
    deterministic: wp.DeterministicMode | None = None
    """Warp determinism mode for GPU runs; None: Warp's global setting."""
    enable_fast_math: bool = True
    """Fast math in the solver's kernels."""
    collision_frequency: Mapping[Any, int] | None = None
    """Collision-detection frequency per collision slot; from Python only."""
    collision_frequency_type: Mapping[Any, Any] | None = None
    """Collision-frequency type per collision slot; from Python only."""

    def __post_init__(self) -> None:
        _check_ranges(self)

    @classmethod
    def ranges(cls) -> Mapping[str, Range]:
        """The valid range of each numeric option, with the reason (the solver's reference page)."""
        return _VBD_RANGES

    @classmethod
    def when_to_change(cls) -> Mapping[str, str]:
        """Option name -> when to change it from its default, for every option (the documentation's solver
        options page)."""
        return _VBD_WHEN

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """Names of all options, in the order of the solver's signature."""
        return tuple(f.name for f in dataclasses.fields(cls))

    def replace(self, overrides: Mapping[str, Any] | None) -> VBDSolverOptions:
        """A copy with ``overrides`` applied, checked as :meth:`SteelSolverOptions.replace` checks them.

        Raises:
            TypeError: If ``overrides`` is not a mapping.
            ValueError: On an unknown option (the message lists the valid ones and what is not an option) or a
                value of the wrong type or outside its range.
        """
        if overrides is None:
            return dataclasses.replace(self)
        if not isinstance(overrides, Mapping):
            raise TypeError(f"solver_options: expected a dict of SolverVBD keywords, got {type(overrides).__name__}")
        unknown = sorted(str(k) for k in overrides if k not in self.field_names())
        if unknown:
            raise ValueError(
                f"solver_options: unknown SolverVBD option(s) {unknown}; the options are the keywords of "
                f"SolverVBD.__init__ except {sorted(_VBD_NOT_OPTIONS - {'self'})}: {list(self.field_names())}"
            )
        hints = typing.get_type_hints(type(self), globalns={"wp": wp, **globals()})
        checked = {name: _check_option(name, hints[name], value, self.ranges()) for name, value in overrides.items()}
        return dataclasses.replace(self, **checked)

    def as_kwargs(self) -> dict[str, Any]:
        """The options as keyword arguments of ``SolverVBD.__init__``."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
