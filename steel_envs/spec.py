"""What a task declares: its config, its terms (reward terms, termination terms, observation blocks, episode
metrics, each with the Warp function that computes it) and its initial state, and the checks that turn a declaration
and the user's keywords into a validated config.

These are plain data; :class:`steel_envs.core.NewtonVectorEnv` reads them and
:class:`steel_envs.components.TermGroups` assembles each group's functions into one kernel. Nothing here launches
Warp work or touches a solver.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import warp as wp

from .ranges import COST_WEIGHT, Range, at_least, between, declare, positive

__all__ = [
    "METRIC_AGGREGATES",
    "RESERVED_INFO_KEYS",
    "EpisodeMetric",
    "InitialStateSpec",
    "ObservationBlock",
    "RewardTerm",
    "TaskConfig",
    "TermFunction",
    "TerminationTerm",
    "check_observation_blocks",
    "check_task_declarations",
    "config_ranges",
    "make_task_config",
    "observation_layout",
    "observation_table",
    "signed_reward_weights",
    "term",
]

_FLOAT32_MAX = float(np.finfo(np.float32).max)


@dataclass(kw_only=True)
class TaskConfig:
    """Fields every task config has; tasks subclass it with their weights and thresholds, and declare each numeric
    field's valid range with the reason in ``field_ranges``, checked at construction (:meth:`ranges`).

    Raises:
        ValueError: On a value outside its declared range, naming the field, the range and why.
    """

    overflow_is_terminal: bool = False
    """End a constraint-overflow episode as a termination (no value bootstrap) instead of a truncation."""
    penetration_limit: float | None = 0.005
    """End the episode of a world where, after a step, a body is deeper than this into the ground or another body
    (the rigid contacts' signed distance less both shapes' margins) [m], or a particle's centre is below the ground
    plane (z = 0); end cause ``info["penetration"]``, a truncation unless ``penetration_is_terminal``. None: off.
    The default, 5 mm, is the depth every shipped scene keeps its contacts within under random, bang-bang and zero
    actions (``steel-envs doctor``) and saturated ones (``training/benchmarks/adversaries.py``), so a world that goes
    deeper is a physics fault an agent could exploit, not a normal state. The check's cost is within the noise of
    ``bench``."""
    penetration_is_terminal: bool = False
    """End a penetration episode as a termination instead of a truncation."""
    obs_clip: float = 1.0e4
    """Observations are clipped to [-obs_clip, obs_clip], the finite bounds of the observation space."""
    randomize_mass_scale: tuple[float, float] | None = None
    """At every reset, scale the world's body masses and inertias by U(low, high); None: off."""
    randomize_friction_scale: tuple[float, float] | None = None
    """At every reset, scale the world's shape friction coefficients by U(low, high); None: off."""
    randomize_drive_gain_scale: tuple[float, float] | None = None
    """At every reset, scale the world's drive stiffness and damping (``joint_target_ke/kd``) by U(low, high)."""
    push_interval: float = 0.0
    """Push the floating base every this many seconds of an episode [s]; 0: off."""
    push_velocity: float = 0.0
    """Largest horizontal velocity change of a push [m/s], U(-v, v) per axis."""
    obs_noise_std: float | tuple[float, ...] = 0.0
    """Standard deviation of Gaussian noise added to the observations: one value for every entry, or one per
    entry of the observation vector (per term: give 0 where a term gets none); 0: off."""
    action_delay_steps: int = 0
    """Apply the action of this many control steps ago (zeros at an episode's start); 0: none."""

    field_ranges: ClassVar[Mapping[str, Range]] = declare(
        penetration_limit=positive("a depth [m]; None turns the check off"),
        obs_clip=at_least(1.0, "the observation bound; below 1 it clips ordinary observations"),
        randomize_mass_scale=positive("(low, high) scale factors; 0 would remove the mass"),
        randomize_friction_scale=positive("(low, high) scale factors"),
        randomize_drive_gain_scale=positive("(low, high) scale factors"),
        push_interval=at_least(0.0, "a period [s]; 0 turns pushes off"),
        push_velocity=at_least(0.0, "the bound of a uniform draw [m/s]"),
        obs_noise_std=at_least(0.0, "a standard deviation, per entry or for all"),
        action_delay_steps=between(0, 64, "control steps; the delay buffer holds 64", integer=True),
    )
    """Valid range of each numeric field, with the reason (:class:`steel_envs.ranges.Range`); a subclass adds its
    own fields' in its ``field_ranges``, and :meth:`ranges` merges them along the class hierarchy."""

    @classmethod
    def ranges(cls) -> dict[str, Range]:
        """The declared ranges of every field of ``cls``, the subclasses' overriding their bases'."""
        merged: dict[str, Range] = {}
        for klass in reversed(cls.__mro__):
            merged.update(vars(klass).get("field_ranges", {}))
        return merged

    def __post_init__(self) -> None:
        for name, valid in self.ranges().items():
            valid.check(name, getattr(self, name))
        noise = self.obs_noise_std
        values = list(noise) if isinstance(noise, (tuple, list)) else [noise]
        if (
            not all(
                isinstance(v, (int, float, np.integer, np.floating))
                and not isinstance(v, (bool, np.bool_))
                and math.isfinite(float(v))
                and 0.0 <= float(v) <= _FLOAT32_MAX
                for v in values
            )
            or not values
        ):
            raise ValueError(f"obs_noise_std: expected a number >= 0 or a sequence of them, got {noise!r}")
        for name in ("randomize_mass_scale", "randomize_friction_scale", "randomize_drive_gain_scale"):
            value = getattr(self, name)
            if value is None:
                continue
            ok = isinstance(value, (tuple, list)) and len(value) == 2
            low, high = (float(v) for v in value) if ok else (0.0, 0.0)
            if not (ok and math.isfinite(low) and math.isfinite(high) and 0.0 < low <= high):
                raise ValueError(f"{name}: expected None or (low, high) with 0 < low <= high, got {value!r}")

    def require_positive(self, *names: str) -> None:
        """Raise ValueError unless each named field is > 0 in float32 (what the kernels receive)."""
        for name in names:
            value = getattr(self, name)
            if not np.float32(value) > 0.0:
                raise ValueError(f"{name}: expected a number > 0 (in float32), got {value!r}")

    def require_range(self, name: str, low: float, high: float) -> None:
        """Raise ValueError unless the named field is in [low, high] (the range where the scene's physics holds)."""
        value = getattr(self, name)
        if not low <= np.float32(value) <= high:
            raise ValueError(f"{name}: expected a number in [{low}, {high}], got {value!r}")

    def require_intervals(self, *names: str) -> None:
        """Raise ValueError unless each named field is a (low, high) pair of finite numbers with low <= high."""
        for name in names:
            value = getattr(self, name)
            ok = isinstance(value, (tuple, list)) and len(value) == 2
            low, high = (float(v) for v in value) if ok else (math.nan, math.nan)
            if not (ok and math.isfinite(low) and math.isfinite(high) and low <= high):
                raise ValueError(f"{name}: expected (low, high) with low <= high, got {value!r}")

    def require_nonnegative(self, *names: str) -> None:
        """Raise ValueError unless each named field is >= 0."""
        for name in names:
            value = getattr(self, name)
            if not np.float32(value) >= 0.0:
                raise ValueError(f"{name}: expected a number >= 0, got {value!r}")


@dataclass(frozen=True)
class TermFunction:
    """A term's Warp function with what the documentation says of it: the function a reward term, termination term,
    observation block or episode metric declares (see :func:`term`).

    The function reads a task's *term state*, a ``@wp.struct`` instance the task builds once (``env.term_state``,
    the arrays and parameters its terms read), and the world index; it only reads. Its first parameter is annotated
    ``typing.Any``, so one function serves every task whose state has the fields it reads (the term library's
    functions say which).
    """

    func: wp.Function
    """The ``@wp.func``."""
    formula: str = ""
    """One line, plain text or LaTeX, e.g. ``exp(-|cmd_xy - v_xy|^2 / sigma)``."""
    source: str = ""
    """Where the formula comes from, e.g. ``legged_gym _reward_tracking_lin_vel``."""

    @property
    def name(self) -> str:
        """The Python name of the function (``track_lin_vel_xy_exp``)."""
        return self.func.func.__name__


def term(formula: str = "", *, source: str = "") -> Callable[[Callable[..., Any]], TermFunction]:
    """Decorate a Python function as a term: ``@wp.func`` plus its documented ``formula`` and ``source``.

    Example::

        @term("exp(-|cmd_xy - v_xy|^2 / sigma)", source="legged_gym _reward_tracking_lin_vel")
        def track_lin_vel_xy_exp(s: Any, w: int) -> float:
            ...
    """

    def decorate(py_func: Callable[..., Any]) -> TermFunction:
        return TermFunction(wp.func(py_func), formula, source)

    return decorate


def _term_function(value: Any, declaration: str) -> TermFunction:
    """``value`` as a :class:`TermFunction` (a bare ``@wp.func`` gets an empty formula).

    Raises:
        TypeError: If ``value`` is neither.
    """
    if isinstance(value, TermFunction):
        return value
    if isinstance(value, wp.Function) and not value.is_builtin():
        return TermFunction(value)
    raise TypeError(f"{declaration}: expected a term function (@term or @wp.func), got {value!r}")


@dataclass(frozen=True)
class RewardTerm:
    """A named reward term, as mjlab and Isaac Lab declare them: the term's function returns its *unweighted* value
    per world, the core multiplies it by the weight, sums the terms into the reward and keeps per-name episode sums.

    ``info["reward_<name>"]`` is the weighted value, and the reward is the float32 sum of those in declaration order.
    """

    name: str
    """The term's name: ``info["reward_<name>"]`` and its episode sum in the statistics."""
    func: TermFunction
    """``f(state, world: int) -> float``: the term's value in world ``world`` (a ``@wp.func`` is wrapped)."""
    weight: str | None = None
    """The task-config field holding the weight (e.g. ``"ctrl_cost_weight"``), also settable by term name through the
    env keyword ``reward_weights={name: value}``. None: weight 1, the function returns the final value (for a formula
    that needs its weight inside, e.g. a clamp after weighting, read from the term state; the task's docstring
    says so)."""
    cost: bool = False
    """The function returns a cost (e.g. ``|a|^2``) and the core subtracts ``weight * cost``: a cost's weight is
    positive, as Gymnasium names them (``ctrl_cost_weight``)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "func", _term_function(self.func, f"RewardTerm({self.name!r})"))


@dataclass(frozen=True)
class TerminationTerm:
    """A named reason for a task to end an episode, as mjlab and Isaac Lab declare them: the term's function returns
    one bool per world, and the core ORs the terms into ``terminated`` (or ``truncated`` for a time-out term),
    reports each as ``info["<name>"]`` (num_envs,) bool and, for each ended episode, in ``info["episode"]["<name>"]``.

    The core's own causes (``constraint_overflow``, ``nonfinite_state``, ``nonfinite_action`` and the time limit) are
    added after the task's terms.
    """

    name: str
    """The term's name, also its ``info`` key."""
    func: TermFunction
    """``f(state, world: int) -> bool``: whether the term ends world ``world``'s episode."""
    time_out: bool = False
    """True: the episode is cut, not ended by the MDP (``truncated``: a learner bootstraps its value); False: a
    terminal state (``terminated``)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "func", _term_function(self.func, f"TerminationTerm({self.name!r})"))


METRIC_AGGREGATES = {"sum": 0, "mean": 1, "rms": 2, "last": 3}
"""How an :class:`EpisodeMetric` reduces its per-step values over an episode, and the kernel's code of each."""


def metric_rows(metrics: tuple[Any, ...]) -> tuple[tuple[Any, ...], list[int]]:
    """The row layout of a step's metric values: the metrics' functions, then the lost-step charges of those that
    declare one; and each metric's charge row (-1 for none). The term kernel writes the rows, the statistics read
    them."""
    charged = [i for i, m in enumerate(metrics) if m.lost_steps is not None]
    rows = [-1] * len(metrics)
    for k, i in enumerate(charged):
        rows[i] = len(metrics) + k
    return tuple(m.func for m in metrics) + tuple(metrics[i].lost_steps for i in charged), rows


@dataclass(frozen=True)
class EpisodeMetric:
    """A named task metric reported once per ended episode, as Isaac Lab's ``extras["log"]`` and mjlab's metrics
    report them: not a reward, a figure an RL user checks (distance travelled, a tracking error).

    The metric's function returns one float32 per world and control step (computed after the rewards, on the same
    state); the core reduces them over the episode by ``aggregate`` and reports the result in
    ``info["episode"]["<name>"]`` (num_envs,) float32 for each ended episode; ``steel-envs evaluate`` tabulates it
    with a confidence interval.
    """

    name: str
    """The metric's key in ``info["episode"]``."""
    func: TermFunction
    """``f(state, world: int) -> float``: the step's value in world ``world``."""
    aggregate: str
    """``"sum"`` (sum of the step values, e.g. displacements into a distance), ``"mean"`` (their mean over the
    episode's steps), ``"rms"`` (square root of the mean of the step values, which are squares: an RMS error) or
    ``"last"`` (the episode's last step's value, e.g. a final distance)."""
    unit: str
    """Unit of the reported value."""
    description: str
    """What the reported value is, as the task's docstring says it."""
    lost_steps: TermFunction | None = None
    """``f(state, world: int) -> float`` or None: the step value charged for each step an episode lost to an early
    end (terminated, or truncated before the time limit), evaluated on its last step; ``"sum"``, ``"mean"`` and
    ``"rms"`` then run over the time limit's ``max_episode_steps`` steps, so an early end does not drop the steps it
    cut off from the figure (e.g. a velocity error charged as if the robot had stood still). None: over the steps
    the episode lived."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "func", _term_function(self.func, f"EpisodeMetric({self.name!r})"))
        if self.aggregate not in METRIC_AGGREGATES:
            raise ValueError(
                f"EpisodeMetric.aggregate: expected one of {list(METRIC_AGGREGATES)}, got {self.aggregate!r}"
            )
        if self.lost_steps is not None:
            object.__setattr__(
                self, "lost_steps", _term_function(self.lost_steps, f"EpisodeMetric({self.name!r}).lost_steps")
            )
            if self.aggregate == "last":
                raise ValueError(
                    f"EpisodeMetric.lost_steps: charged steps need aggregate 'sum', 'mean' or 'rms', not 'last' "
                    f"({self.name!r})"
                )


RESERVED_INFO_KEYS = frozenset(
    {
        "constraint_overflow",
        "nonfinite_state",
        "nonfinite_action",
        "penetration",
        "episode",
        "_episode",
        "final_obs",
        "_final_obs",
    }
)
"""``info`` keys the core writes; a termination term must not take one of these names."""


@dataclass(kw_only=True)
class InitialStateSpec:
    """Initial joint state of one world and its noise, as a scene declares it.

    Arrays are per world: ``default_q`` / ``q_noise`` have one entry per joint coordinate, ``default_qd`` /
    ``qd_noise`` one per DOF. Each reset draws ``q = default_q + q_noise * n`` and likewise for ``qd``,
    with ``n ~ U(-1, 1)`` ("uniform") or ``N(0, 1)`` ("gaussian").
    """

    default_q: np.ndarray
    default_qd: np.ndarray
    q_noise: np.ndarray
    qd_noise: np.ndarray
    q_noise_kind: str = "uniform"
    qd_noise_kind: str = "uniform"
    quat_coord: int = -1
    """World-local coordinate index of a free joint's quaternion (x, y, z, w), renormalized; -1: none."""


NOISE_KINDS = {"uniform": 0, "gaussian": 1}


@dataclass(frozen=True)
class ObservationBlock:
    """A named, contiguous block of a task's observation vector, as mjlab and Isaac Lab declare observation terms.

    A task lists its blocks in order (:meth:`steel_envs.hooks.TaskHooks.observation_blocks`); the list gives the
    observation size, each block's offsets (``env.observation_layout``), the one kernel that writes them and the
    docstring's observation table (:func:`observation_table`, checked by ``tests/test_api.py``).
    """

    name: str
    """Short key of the block in ``env.observation_layout`` (e.g. ``"joint_pos"``)."""
    size: int
    """Number of float32 entries."""
    func: TermFunction
    """Either ``f(state, world: int, i: int) -> float``, entry ``i`` of the block (for blocks over joints or bodies),
    or ``f(state, world: int)`` returning the whole block: a float for a block of size 1, else a Warp vector or
    quaternion of length ``size`` (``wp.vec3``)."""
    description: str
    """What the entries are, as the docstring's table says it."""
    unit: str
    """Unit of the entries (``1`` for dimensionless)."""
    history: int = 1
    """Frames of the block in the observation: the last ``history`` values, oldest first, newest last (``size *
    history`` entries; 1: the current value only). After a reset every frame holds the first value (as Isaac Lab's
    observation history fills its buffer); a frame keeps the noise it was observed with. Policy observations only."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "func", _term_function(self.func, f"ObservationBlock({self.name!r})"))

    @property
    def width(self) -> int:
        """Entries of the block in the observation vector: ``size * history``."""
        return self.size * self.history


def observation_table(blocks: tuple[ObservationBlock, ...]) -> str:
    """The docstring's observation table of ``blocks``: ``| index | observation | unit |`` rows, an index range
    (``5-12``) for a block of more than one entry."""
    rows, start = ["| index | observation | unit |", "|---|---|---|"], 0
    for block in blocks:
        end = start + block.width - 1
        index = str(start) if end == start else f"{start}-{end}"
        frames = f" (last {block.history} frames, oldest first)" if block.history > 1 else ""
        rows.append(f"| {index} | {block.description}{frames} | {block.unit} |")
        start = end + 1
    return "\n".join(rows)


def observation_layout(blocks: tuple[ObservationBlock, ...]) -> dict[str, slice]:
    """Each block's entries in the observation vector, by name.

    Raises:
        ValueError: On a duplicate name or a block of size < 1.
    """
    layout, start = {}, 0
    for block in blocks:
        if block.name in layout or block.size < 1:
            raise ValueError(f"observation blocks: duplicate name or empty block {block.name!r}")
        layout[block.name] = slice(start, start + block.width)
        start += block.width
    return layout


_FLOAT_TYPES = (float, wp.float32)
_BOOL_TYPES = (bool, wp.bool)
_INT_TYPES = (int, wp.int32)


def _signature(func: TermFunction) -> tuple[list[Any], Any]:
    """The annotated parameter types and return type of a term function (string annotations evaluated)."""
    signature = inspect.signature(func.func.func, eval_str=True)
    return [p.annotation for p in signature.parameters.values()], signature.return_annotation


def _check_value_function(owner: str, group: str, name: str, func: TermFunction, returns: tuple, what: str) -> None:
    """A reward, termination or metric function must be ``f(state, world: int) -> <returns>``.

    Raises:
        TypeError: Naming the task, the group, the term and what was expected.
    """
    params, result = _signature(func)
    if len(params) != 2 or params[1] not in _INT_TYPES or result not in returns:
        raise TypeError(
            f"{owner}.{group}: the function of {name!r}, {func.name}, must be f(state, world: int) -> {what}, got "
            f"{inspect.signature(func.func.func)}"
        )


def check_observation_blocks(owner: str, group: str, blocks: tuple[ObservationBlock, ...]) -> None:
    """Check a task's observation blocks: unique names, sizes >= 1, and each function's signature against its
    size (``f(state, world: int, i: int) -> float``, or ``f(state, world: int)`` returning a float for size 1 or a
    Warp vector / quaternion of length ``size``).

    Raises:
        TypeError: Naming the task, the group (``observations`` / ``privileged_observations``), the block and what
            was expected.
    """
    names = [b.name for b in blocks]
    if len(set(names)) != len(names):
        raise TypeError(f"{owner}.{group}: duplicate block names in {names}")
    for block in blocks:
        if not (isinstance(block.size, int) and block.size >= 1):
            raise TypeError(f"{owner}.{group}: block {block.name!r} must have an int size >= 1, got {block.size!r}")
        history = block.history
        if isinstance(history, bool) or not isinstance(history, int) or history < 1:
            raise TypeError(f"{owner}.{group}: block {block.name!r} must have an int history >= 1, got {history!r}")
        if history > 1 and group.startswith("privileged"):
            raise TypeError(f"{owner}.{group}: block {block.name!r}: history applies to the policy's observations")
        params, result = _signature(block.func)
        if len(params) == 3 and all(p in _INT_TYPES for p in params[1:]) and result in _FLOAT_TYPES:
            continue
        if len(params) == 2 and params[1] in _INT_TYPES:
            length = 1 if result in _FLOAT_TYPES else getattr(result, "_length_", None)
            if length == block.size and (length == 1 or getattr(result, "_wp_scalar_type_", None) is wp.float32):
                continue
        raise TypeError(
            f"{owner}.{group}: the function of block {block.name!r} (size {block.size}), {block.func.name}, must be "
            f"f(state, world: int, i: int) -> float or f(state, world: int) returning {block.size} float32 "
            f"value(s), got {inspect.signature(block.func.func.func)}"
        )


def check_task_declarations(cls: type) -> None:
    """Derive ``cls.reward_terms`` from ``cls.rewards`` and check the declarations; run for every env class at its
    definition (``__init_subclass__``).

    Raises:
        TypeError: On a duplicate reward, termination or metric name, a termination named like a core ``info`` key, a
            metric named like another ``info["episode"]`` key, a reward weight that is not a field of
            ``cls.config_cls``, a cost weight declared to take negative values, or a term function whose signature
            does not fit its group (the message names the task, the term and what was expected).
    """
    owner = cls.__name__
    cls.reward_terms = tuple(t.name for t in cls.rewards)
    names = [t.name for t in cls.rewards]
    if len(set(names)) != len(names):
        raise TypeError(f"{owner}.rewards: duplicate term names in {names}")
    names = [t.name for t in cls.terminations]
    if len(set(names)) != len(names) or RESERVED_INFO_KEYS & set(names):
        raise TypeError(
            f"{owner}.terminations: names must be unique and not one of the core's info keys "
            f"{sorted(RESERVED_INFO_KEYS)}, got {names}"
        )
    names = [m.name for m in cls.metrics]
    taken = {
        "r",
        "l",
        *RESERVED_INFO_KEYS,
        *(f"reward_{t.name}" for t in cls.rewards),
        *(t.name for t in cls.terminations),
    }
    if len(set(names)) != len(names) or taken & set(names):
        raise TypeError(f"{owner}.metrics: names must be unique and not another key of info['episode'], got {names}")
    fields = {f.name for f in dataclasses.fields(cls.config_cls)}
    declared = cls.config_cls.ranges()
    for t in cls.rewards:
        if t.weight is not None and t.weight not in fields:
            raise TypeError(
                f"{owner}.rewards: the weight of {t.name!r}, {t.weight!r}, is not a field of {cls.config_cls.__name__}"
            )
        if t.cost and t.weight in declared and declared[t.weight].low < 0.0:
            raise TypeError(
                f"{owner}.rewards: the cost weight {t.weight!r} must be declared >= 0, not {declared[t.weight]}"
            )
        _check_value_function(owner, "rewards", t.name, t.func, _FLOAT_TYPES, "float")
    for t in cls.terminations:
        _check_value_function(owner, "terminations", t.name, t.func, _BOOL_TYPES, "bool")
    for m in cls.metrics:
        _check_value_function(owner, "metrics", m.name, m.func, _FLOAT_TYPES, "float")
        if m.lost_steps is not None:
            _check_value_function(owner, "metrics", f"{m.name}.lost_steps", m.lost_steps, _FLOAT_TYPES, "float")
    check_observation_blocks(owner, "observations", cls.observations)
    check_observation_blocks(owner, "privileged_observations", cls.privileged_observations)


def make_task_config(cls: type, overrides: Mapping[str, Any], env_keywords: str) -> TaskConfig:
    """The config of env class ``cls`` (its ``config_cls``) from the user's keywords: the config fields and
    ``reward_weights={term name: weight}``.

    Raises:
        TypeError: On a keyword that is neither a config field nor ``reward_weights`` (the message lists
            ``env_keywords``, the env's own arguments, and the fields), or a non-mapping ``reward_weights``.
        ValueError: On a value of the wrong type or out of its range (:func:`config_ranges`), an unknown reward
            term or a weight given twice.
    """
    overrides = dict(overrides)
    weights = overrides.pop("reward_weights", None)
    if weights is not None:
        _weights_by_term_name(cls, weights, overrides)
    names = {f.name for f in dataclasses.fields(cls.config_cls)}
    unknown = sorted(set(overrides) - names)
    if unknown:
        raise TypeError(
            f"{cls.__name__}: unexpected keyword argument(s) {unknown}; the env takes {env_keywords}, reward_weights "
            f"and the task config fields {sorted(names)}"
        )
    for f in dataclasses.fields(cls.config_cls):
        if f.name in overrides:
            _check_config_value(f, overrides[f.name])
    config = cls.config_cls(**overrides)
    for name, valid in config_ranges(cls).items():  # the config checked its own; these add the cost weights
        valid.check(name, getattr(config, name))
    return config


def config_ranges(cls: type) -> dict[str, Range]:
    """The valid range of each config field of env class ``cls``: those its config declares
    (:meth:`TaskConfig.ranges`), and ``>= 0`` for the weight of each cost term (:attr:`RewardTerm.cost`) that
    declares none."""
    ranges = dict(cls.config_cls.ranges())
    for t in cls.rewards:
        if t.cost and t.weight is not None:
            ranges.setdefault(t.weight, COST_WEIGHT)
    return ranges


def _weights_by_term_name(cls: type, weights: Any, overrides: dict[str, Any]) -> None:
    """Move ``reward_weights={term name: weight}`` into ``overrides`` under each term's config field.

    Raises:
        TypeError: If ``weights`` is not a mapping.
        ValueError: On an unknown term, a term without a weight field, or a weight also given by its field name.
    """
    if not isinstance(weights, Mapping):
        raise TypeError(f"reward_weights: expected a mapping of reward term name -> weight, got {weights!r}")
    terms = {t.name: t for t in cls.rewards}
    for name, value in weights.items():
        term = terms.get(name)
        if term is None:
            raise ValueError(f"reward_weights: {cls.__name__} has no reward term {name!r}; terms: {list(terms)}")
        if term.weight is None:
            raise ValueError(f"reward_weights: the term {name!r} has no weight field (its kernel writes it whole)")
        if term.weight in overrides:
            raise ValueError(f"reward_weights[{name!r}] and {term.weight}: the same weight given twice")
        overrides[term.weight] = value


def signed_reward_weights(rewards: tuple[RewardTerm, ...], weights: Mapping[str, float]) -> np.ndarray:
    """(len(rewards),) float32 multipliers of the unweighted terms: the weight, negated for a cost."""
    return np.array(
        [(-1.0 if t.cost else 1.0) * np.float32(weights[t.name]) for t in rewards],
        np.float32,
    )


def _check_config_value(field: dataclasses.Field, value: Any) -> None:
    """Reject a config value whose type does not match the field's default (bool vs number, NaN, inf)."""
    default = field.default
    if value is None and "None" in str(field.type):
        return
    if isinstance(default, bool):
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{field.name}: expected a bool, got {value!r}")
    elif isinstance(default, (int, float)):
        if "tuple" in str(field.type) and isinstance(value, (tuple, list)):
            return  # a per-entry sequence; the config's __post_init__ checks its values
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ValueError(f"{field.name}: expected a number, got {value!r}")
        if not math.isfinite(float(value)) or abs(float(value)) > _FLOAT32_MAX:
            raise ValueError(f"{field.name}: expected a finite number within float32 range, got {value!r}")
    elif isinstance(default, tuple) and not (isinstance(value, (tuple, list)) and len(value) == len(default)):
        raise ValueError(f"{field.name}: expected a sequence of {len(default)} numbers, got {value!r}")
