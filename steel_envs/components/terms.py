"""The term groups: a task's declared term functions assembled into one Warp kernel per group (observations,
privileged observations, terminations, rewards, metrics) and launched on the task's term state.

A task never writes a group buffer itself: each of its terms is a function of ``(state, world)`` (an observation
block may take the entry index too) that returns its value, and the kernel of a group calls the functions in
declaration order and writes row ``t`` (rewards, terminations, metrics) or the block's offsets (observations). The
functions are selected at code generation (``wp.static``), so a group costs one launch and its values are those the
functions compute, bit for bit.
"""

# No ``from __future__ import annotations``: the kernels built here are closures, and Warp reads their annotations
# (``wp.array2d[dtype]``) as objects.
import functools
import hashlib
import weakref
from typing import TYPE_CHECKING, Any

import warp as wp

from .. import kernels
from ..spec import ObservationBlock, check_observation_blocks, metric_rows

if TYPE_CHECKING:
    from ..core import NewtonVectorEnv

__all__ = ["TermGroups"]


def _name(kind: str, *parts: object) -> str:
    """A C++ identifier for a generated function or kernel, the same in every process for the same content: Warp
    keys functions by name, so two writers must never share one."""
    digest = hashlib.sha256(repr((kind, *parts)).encode()).hexdigest()[:16]
    return f"steel_{kind}_{digest}"


def _identity(func: wp.Function) -> str:
    return f"{func.func.__module__}.{func.func.__qualname__}"


def _chain(writers: list[wp.Function], dtype: type, kind: str) -> wp.Function:
    """One function calling ``writers`` in order. The functions are referenced as closure variables, never through
    ``wp.static``: Warp hashes closure-referenced functions with the kernel at declaration, so a kernel whose term
    functions changed compiles anew instead of reusing a cached module."""
    if len(writers) == 1:
        return writers[0]
    first, rest = writers[0], _chain(writers[1:], dtype, kind)

    @wp.func(name=_name(f"{kind}_chain", first.key, rest.key))
    def write(state: Any, w: int, out: wp.array2d[dtype]):
        first(state, w, out)
        rest(state, w, out)

    return write


def _value_writer(func: wp.Function, row: int, dtype: type) -> wp.Function:
    @wp.func(name=_name("value", _identity(func), row, dtype.__name__))
    def write(state: Any, w: int, out: wp.array2d[dtype]):
        out[row, w] = func(state, w)

    return write


@functools.cache
def _values_kernel(funcs: tuple[wp.Function, ...], dtype: type) -> wp.Kernel:
    """``out[t, w] = funcs[t](state, w)`` for every term ``t``, in order: one thread per world."""
    write_all = _chain([_value_writer(f, t, dtype) for t, f in enumerate(funcs)], dtype, "values")

    @wp.kernel(enable_backward=False, module="unique", name=_name("values_kernel", write_all.key))
    def values(state: Any, out: wp.array2d[dtype]):
        w = wp.tid()
        write_all(state, w, out)

    return values


def _block_writer(func: wp.Function, size: int, offset: int, entrywise: bool) -> wp.Function:
    """A function writing one observation block at ``offset`` of row ``w``: entry by entry, or the whole block's
    value (a float or a vector) at once. One function per block keeps each block's locals in a scope of their own."""
    name = _name("block", _identity(func), size, offset, entrywise)
    if entrywise:

        @wp.func(name=name)
        def write(state: Any, w: int, out: wp.array2d[wp.float32]):
            for i in range(size):
                out[w, offset + i] = func(state, w, i)

    elif size == 1:

        @wp.func(name=name)
        def write(state: Any, w: int, out: wp.array2d[wp.float32]):
            out[w, offset] = func(state, w)

    else:

        @wp.func(name=name)
        def write(state: Any, w: int, out: wp.array2d[wp.float32]):
            value = func(state, w)
            for i in range(size):
                out[w, offset + i] = value[i]

    return write


@functools.cache
def _blocks_kernel(blocks: tuple[tuple[wp.Function, int, bool, int], ...]) -> wp.Kernel:
    """Every observation block of ``blocks`` ((function, size, entrywise, history) in order) into one row per world;
    a block with history gets its newest frame, the last ``size`` of its entries."""
    starts = [sum(size * history for _, size, _, history in blocks[:b]) for b in range(len(blocks))]
    offsets = [start + size * (history - 1) for start, (_, size, _, history) in zip(starts, blocks, strict=True)]
    writers = [
        _block_writer(f, size, offset, entry) for (f, size, entry, _), offset in zip(blocks, offsets, strict=True)
    ]
    write_all = _chain(writers, wp.float32, "blocks")

    @wp.kernel(enable_backward=False, module="unique", name=_name("blocks_kernel", write_all.key))
    def observe(state: Any, out: wp.array2d[wp.float32]):
        w = wp.tid()
        write_all(state, w, out)

    return observe


def _functions(terms: tuple[Any, ...]) -> tuple[wp.Function, ...]:
    return tuple(t.func.func for t in terms)


def _blocks(blocks: tuple[ObservationBlock, ...]) -> tuple[tuple[wp.Function, int, bool, int], ...]:
    return tuple((b.func.func, b.size, len(b.func.func.input_types) == 3, b.history) for b in blocks)


class TermGroups:
    """Launches a task's term groups on its term state (``env.term_state``, the ``@wp.struct`` instance its
    ``_setup_task`` built): one kernel per group, assembled from the declarations (and cached per distinct list of
    functions, so envs of one task share compiled kernels).

    Args:
        env: The env; its ``observation_blocks()`` and ``privileged_observation_blocks()`` are checked here (they
            may depend on the config), the class-level declarations at class definition.

    Raises:
        TypeError: (construction) On an observation block whose function does not fit its size, or a task that
            declares terms but set no ``term_state``.
    """

    def __init__(self, env: "NewtonVectorEnv") -> None:
        self.env = weakref.proxy(env)  # no env <-> component cycle: the env goes with its last reference
        owner = type(env).__name__
        blocks, privileged = env.observation_blocks(), env.privileged_observation_blocks()
        check_observation_blocks(owner, "observation_blocks()", blocks)
        check_observation_blocks(owner, "privileged_observation_blocks()", privileged)
        self.state = getattr(env, "term_state", None)
        if self.state is None:
            raise TypeError(f"{owner}: _setup_task must set self.term_state, the @wp.struct its term functions read")
        self._observe = _blocks_kernel(_blocks(blocks))
        self._observe_privileged = _blocks_kernel(_blocks(privileged)) if privileged else None
        if not env.rewards:  # the reward is the weighted sum of the terms: an empty sum has no kernel to assemble
            raise TypeError(f"{owner}.rewards: expected at least one RewardTerm, got none")
        self._rewards = _values_kernel(_functions(env.rewards), wp.float32)
        self._terminations = _values_kernel(_functions(env.terminations), wp.bool) if env.terminations else None
        rows = tuple(f.func for f in metric_rows(env.metrics)[0])  # the metrics, then their lost-step charges
        self._metrics = _values_kernel(rows, wp.float32) if env.metrics else None

    def _launch(self, kernel: wp.Kernel, out: wp.array) -> None:
        self.env.launch_per_world(kernel, inputs=[self.state], outputs=[out])

    def observe(self, obs: wp.array) -> None:
        """The observation blocks, into ``obs`` (num_envs, observation_dim) float32."""
        self._launch(self._observe, obs)

    def observe_privileged(self, out: wp.array) -> None:
        """The privileged blocks, into ``out`` (num_envs, their total size) float32 (a task that declares some)."""
        self._launch(self._observe_privileged, out)

    def terminations(self, skip: wp.array) -> None:
        """The termination terms, into the statistics' ``termination_flags`` (len(terminations), num_envs) bool,
        ORed into ``terminated`` / ``truncated`` (worlds in ``skip`` end nothing); both False in every world for a
        task without terms."""
        stats = self.env.stats
        if self._terminations is None:
            self.env.launch_per_world(
                kernels.no_task_terminations, inputs=[], outputs=[stats.terminated, stats.truncated]
            )
            return
        self._launch(self._terminations, stats.termination_flags)
        stats.combine_terminations(skip)

    def rewards(self, reward_terms: wp.array) -> None:
        """The unweighted reward terms, into ``reward_terms`` (len(rewards), num_envs) float32."""
        self._launch(self._rewards, reward_terms)

    def metrics(self, values: wp.array) -> None:
        """The metrics' step values, into ``values`` (len(metrics) + their lost-step charges, num_envs) float32 (a
        task that declares some)."""
        self._launch(self._metrics, values)
