"""The statistics of a comparison of algorithms over a suite: Agarwal et al. 2021, "Deep RL at the Edge of the
Statistical Precipice" (NeurIPS), computed by its authors' library ``rliable`` (extra ``compare``).

Every function takes normalized scores ``{algorithm: array (runs, tasks)}``: one row per seed, one column per ID, the
columns in the same ID order for every algorithm (:mod:`steel_envs.benchmark` normalizes: 0 random, 1 expert).
Intervals are rliable's stratified bootstrap (runs resampled with replacement within each task, ``task_bootstrap``
off), percentile method, seeded, so a report is reproducible: rliable 1.2's stratified bootstrap draws its indices from
numpy's global generator whatever ``random_state`` it is given, so each function seeds that generator and restores
its state afterwards.

rliable 1.2.0 imports only with ``pandas<3`` (its ``arch<8`` dependency breaks on pandas 3), hence the extra's pin.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping

import numpy as np

__all__ = ["AGGREGATES", "aggregate", "performance_profiles", "probability_of_improvement"]

AGGREGATES = ("iqm", "median", "mean", "optimality_gap")
"""The aggregate metrics, in report order (rliable's definitions): the interquartile mean (the mean of the middle 50 %
of all runs' scores, every task's), the median and the mean of the per-task mean scores, and the optimality gap
(``1 - mean(min(score, 1))`` over all runs: how far below the expert, lower is better)."""


def _rliable():
    try:
        from rliable import library, metrics
    except ImportError as e:  # pandas 3 beside rliable 1.2 fails inside arch's import, not as a missing module
        raise ImportError(
            f"steel-envs compare needs rliable with pandas<3: pip install -e '.[compare]' ({e})"
        ) from None
    return library, metrics


@contextlib.contextmanager
def _seeded(seed: int) -> Iterator[None]:
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(state)


def _check(scores: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    arrays = {k: np.asarray(v, np.float64) for k, v in scores.items()}
    if not arrays:
        raise ValueError("scores: expected at least one algorithm")
    tasks = {v.shape[1] if v.ndim == 2 else -1 for v in arrays.values()}
    if len(tasks) != 1 or -1 in tasks or any(v.shape[0] < 1 or not np.isfinite(v).all() for v in arrays.values()):
        shapes = {k: v.shape for k, v in arrays.items()}
        raise ValueError(f"scores: expected finite arrays (runs >= 1, tasks) with one task count, got shapes {shapes}")
    return arrays


def aggregate(
    scores: Mapping[str, np.ndarray], *, reps: int = 2000, confidence: float = 0.95, seed: int = 0
) -> dict[str, dict[str, tuple[float, float, float]]]:
    """IQM, median, mean and optimality gap of each algorithm's normalized scores, with bootstrap intervals.

    Args:
        scores: ``{algorithm: (runs, tasks) float}`` normalized scores.
        reps: Bootstrap resamples.
        confidence: Level of the intervals.
        seed: Seed of the resampling.

    Returns:
        ``{algorithm: {metric: (point estimate, low, high)}}`` for each metric of :data:`AGGREGATES` (unitless).

    Raises:
        ValueError: On no algorithm, non-finite scores or algorithms with different task counts.
        ImportError: Without rliable (extra ``compare``).
    """
    library, metrics = _rliable()
    arrays = _check(scores)

    def funcs(x: np.ndarray) -> np.ndarray:
        return np.array(
            [
                metrics.aggregate_iqm(x),
                metrics.aggregate_median(x),
                metrics.aggregate_mean(x),
                metrics.aggregate_optimality_gap(x),
            ]
        )

    with _seeded(seed):
        points, intervals = library.get_interval_estimates(
            arrays, funcs, reps=reps, confidence_interval_size=confidence
        )
    return {
        algo: {
            name: (float(points[algo][i]), float(intervals[algo][0, i]), float(intervals[algo][1, i]))
            for i, name in enumerate(AGGREGATES)
        }
        for algo in arrays
    }


def performance_profiles(
    scores: Mapping[str, np.ndarray], taus: np.ndarray, *, reps: int = 2000, confidence: float = 0.95, seed: int = 0
) -> dict[str, dict[str, list[float]]]:
    """Score distributions (rliable's performance profiles): per threshold tau, the fraction of all runs (every
    task's) whose normalized score exceeds it, with bootstrap intervals.

    Returns:
        ``{algorithm: {"fraction": [...], "low": [...], "high": [...]}}``, one entry per tau.
    """
    library, _ = _rliable()
    arrays = _check(scores)
    with _seeded(seed):
        points, intervals = library.create_performance_profile(
            arrays, np.asarray(taus, np.float64), reps=reps, confidence_interval_size=confidence
        )
    return {
        algo: {
            "fraction": [float(v) for v in points[algo]],
            "low": [float(v) for v in intervals[algo][0]],
            "high": [float(v) for v in intervals[algo][1]],
        }
        for algo in arrays
    }


def probability_of_improvement(
    scores: Mapping[str, np.ndarray], *, reps: int = 2000, confidence: float = 0.95, seed: int = 0
) -> dict[str, tuple[float, float, float]]:
    """P(X > Y) for every ordered pair of algorithms: the probability that a run of X scores above a run of Y on a
    task drawn uniformly (Mann-Whitney U statistic per task, averaged over tasks), with bootstrap intervals.

    Returns:
        ``{"X > Y": (point estimate, low, high)}`` for every pair X != Y; empty with one algorithm.
    """
    library, metrics = _rliable()
    arrays = _check(scores)
    pairs = {f"{x} > {y}": (arrays[x], arrays[y]) for x in arrays for y in arrays if x != y}
    if not pairs:
        return {}
    with _seeded(seed):
        points, intervals = library.get_interval_estimates(
            pairs, metrics.probability_of_improvement, reps=reps, confidence_interval_size=confidence
        )
    return {k: (float(np.ravel(points[k])[0]), *(float(v) for v in np.ravel(intervals[k]))) for k in pairs}
