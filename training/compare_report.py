"""The report of ``steel-envs compare``: its statistics (:mod:`steel_envs.training.compare_stats`) over the saved
runs, written as ``compare.json``, ``compare.md`` and rliable's plots (``aggregates.png``, ``profiles.png``,
``improvement.png``)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import time

import numpy as np

from .compare_stats import AGGREGATES, aggregate, performance_profiles, probability_of_improvement

__all__ = ["build_report", "score_matrix", "task_fingerprint"]

_LABELS = {"iqm": "IQM", "median": "Median", "mean": "Mean", "optimality_gap": "Optimality gap"}


def build_report(out: str, results: list[dict], *, reps: int = 2000, seed: int = 0, seeds: int | None = None) -> dict:
    """Compute the comparison's statistics over ``results`` (``result.json`` records) and write the report files into
    ``out``; return the report (what ``compare.json`` holds).

    Raises:
        ValueError: On results that may not be compared (:func:`score_matrix`).
    """
    from steel_envs.benchmark import task_benchmark

    ids, algos, seeds_of, matrix = score_matrix(results, seeds)
    results = [r for r in results if r["seed"] in seeds_of[r["algo"]]]
    highest = max(float(m.max()) for m in matrix.values())
    lowest = min(float(m.min()) for m in matrix.values())
    taus = np.linspace(min(0.0, lowest), max(1.0, highest), 41)
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "ids": ids,
        "algorithms": algos,
        "seeds": seeds_of,
        "runs": len(results),
        "bootstrap": {"reps": reps, "seed": seed, "confidence": 0.95, "method": "stratified, percentile (rliable)"},
        "tasks": {},
        "aggregates": aggregate(matrix, reps=reps, seed=seed),
        "profiles": {"taus": [float(t) for t in taus], **performance_profiles(matrix, taus, reps=reps, seed=seed)},
        "probability_of_improvement": probability_of_improvement(matrix, reps=reps, seed=seed),
    }
    for column, env_id in enumerate(ids):
        spec = task_benchmark(env_id)
        mine = [r for r in results if r["env_id"] == env_id]
        report["tasks"][env_id] = {
            "score": spec.score,
            "direction": spec.direction,
            "random_score": spec.random_score,
            "expert_score": spec.expert_score,
            "expert_from": spec.expert_from,
            "budget_env_steps": mine[0]["budget_env_steps"],
            "eval_episodes": mine[0]["settings"]["eval_episodes"],
            "eval_worlds": mine[0]["settings"]["eval_worlds"],
            "by_algorithm": {
                algo: _by_algorithm([r for r in mine if r["algo"] == algo], matrix[algo][:, column]) for algo in algos
            },
        }
    with open(os.path.join(out, "compare.json"), "w") as f:
        json.dump(report, f, indent=1)
    with open(os.path.join(out, "compare.md"), "w") as f:
        f.write(markdown(report))
    _plots(out, report, matrix)
    return report


def _by_algorithm(runs: list[dict], normalized: np.ndarray) -> dict:
    """One algorithm's runs of one ID, in seed order: scores, normalized scores, what each trained and for how long."""
    runs = sorted(runs, key=lambda r: r["seed"])
    return {
        "scores": [r["score"] for r in runs],
        "normalized": [float(v) for v in normalized],
        "env_steps": [r["env_steps"] for r in runs],
        "train_worlds": runs[0]["settings"]["train_worlds"],
        "train_seconds": [r["train_seconds"] for r in runs],
    }


def task_fingerprint(env_id: str) -> str:
    """12 hex digits of SHA-256 over what defines a task's score: its benchmark declaration, its config's defaults
    and its time limit. Runs of one ID with different fingerprints do not aggregate."""
    import steel_envs

    cls = steel_envs.task_class(env_id)
    text = repr((env_id, cls.benchmark, dataclasses.asdict(cls.config_cls()), cls.default_max_episode_steps))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _check_alike(env_id: str, mine: list[dict]) -> None:
    """Refuse runs of one ID that do not compare: another budget or evaluation, other training worlds or
    hyper-parameters within one algorithm, another task declaration than the installed one, or a normalized score
    that the installed anchors do not give from the run's score."""
    from steel_envs.benchmark import task_benchmark

    for key in ("budget_env_steps", "eval_episodes", "eval_worlds"):
        values = sorted({r["settings"].get(key) for r in mine}, key=repr)
        if len(values) > 1:
            raise ValueError(f"report: {env_id} has runs of different {key} {values}; compare like with like")
    for algo in sorted({r["algo"] for r in mine}):
        for key in ("train_worlds", "algo_config"):
            values = sorted({r["settings"].get(key) for r in mine if r["algo"] == algo}, key=repr)
            if len(values) > 1:
                raise ValueError(
                    f"report: {algo} {env_id} has runs of different {key} {values}; compare like with like"
                )
    installed = task_fingerprint(env_id)
    stale = [r for r in mine if r["task_fingerprint"] != installed]
    if stale:
        raise ValueError(
            f"report: {stale[0].get('path', env_id)} (and {len(stale) - 1} more) was made with another declaration of "
            f"{env_id} (fingerprint {stale[0]['task_fingerprint']}, installed {installed}): its scores or anchors "
            "changed; delete those runs to run them again"
        )
    spec = task_benchmark(env_id)
    for r in mine:
        expected = spec.normalize(r["score"])
        if not math.isclose(r["normalized"], expected, rel_tol=1e-9, abs_tol=1e-12):
            raise ValueError(
                f"report: {r.get('path', env_id)}: normalized {r['normalized']!r}, but its score {r['score']!r} and "
                f"the installed anchors give {expected!r}"
            )


def score_matrix(
    results: list[dict], seeds: int | None = None
) -> tuple[list[str], list[str], dict[str, list[int]], dict[str, np.ndarray]]:
    """Arrange results into rliable's layout, after checking they may be compared (:func:`_check_alike`).

    Args:
        results: Checked ``result.json`` records (:func:`steel_envs.training.compare_runs.read_result`).
        seeds: Every algorithm must have seeds ``0 .. seeds - 1`` of every ID; None: every algorithm the same seeds
            of every ID, those found.

    Returns:
        (IDs, algorithms, seeds per algorithm, ``{algorithm: (seeds, IDs) normalized scores}``); the normalized
        scores are recomputed from the scores and the installed anchors.

    Raises:
        ValueError: On no results, runs that do not compare, or a missing run (naming it).
    """
    from steel_envs.benchmark import task_benchmark

    if not results:
        raise ValueError("report: no finished run (result.json) to report")
    ids = list(dict.fromkeys(r["env_id"] for r in results))
    algos = sorted({r["algo"] for r in results})
    for env_id in ids:
        _check_alike(env_id, [r for r in results if r["env_id"] == env_id])
    wanted = list(range(seeds)) if seeds is not None else sorted({r["seed"] for r in results})
    matrix: dict[str, np.ndarray] = {}
    for algo in algos:
        table = {(r["env_id"], r["seed"]): r["score"] for r in results if r["algo"] == algo}
        missing = [f"{i} seed {k}" for i in ids for k in wanted if (i, k) not in table]
        if missing:
            shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
            raise ValueError(
                f"report: {algo} lacks finished runs of seeds {wanted}: {shown} (--seeds N reports seeds 0..N-1)"
            )
        matrix[algo] = np.array([[task_benchmark(i).normalize(table[(i, k)]) for i in ids] for k in wanted], np.float64)
    return ids, algos, {algo: wanted for algo in algos}, matrix


def _interval(value: tuple[float, float, float]) -> str:
    return f"{value[0]:.3f} [{value[1]:.3f}, {value[2]:.3f}]"


def markdown(report: dict) -> str:
    """The report's tables: the aggregates, the probabilities of improvement, and one row per ID."""
    runs = ", ".join(f"{len(s)} seeds of {a}" for a, s in report["seeds"].items())
    lines = [
        f"# Comparison over {len(report['ids'])} IDs",
        "",
        f"Normalized scores (0: random policy, 1: expert), {report['runs']} runs ({runs}); "
        "point estimates with stratified bootstrap 95 % intervals (rliable, "
        f"{report['bootstrap']['reps']} resamples). Optimality gap: lower is better.",
        "",
        "| algorithm | " + " | ".join(_LABELS[m] for m in AGGREGATES) + " |",
        "|---" * (len(AGGREGATES) + 1) + "|",
    ]
    for algo, values in report["aggregates"].items():
        lines.append(f"| {algo} | " + " | ".join(_interval(values[m]) for m in AGGREGATES) + " |")
    if report["probability_of_improvement"]:
        lines += ["", "| P(X > Y) | estimate [95 % interval] |", "|---|---|"]
        lines += [f"| {pair} | {_interval(v)} |" for pair, v in report["probability_of_improvement"].items()]
    if min(len(s) for s in report["seeds"].values()) < 2:
        lines += ["", "One seed per ID: the intervals say nothing of the spread between seeds."]
    algos = report["algorithms"]
    lines += [
        "",
        "Per ID: the score's mean over the seeds [lowest, highest], the normalized mean, and the env-steps each run "
        "trained (PPO trains whole iterations: the budget rounded up).",
        "",
        "| ID | score | random | expert | budget [env-steps] | evaluation | " + " | ".join(algos) + " |",
        "|---" * (6 + len(algos)) + "|",
    ]
    for env_id, task in report["tasks"].items():
        cells = []
        for algo in algos:
            entry = task["by_algorithm"][algo]
            s = np.array(entry["scores"])
            steps = sorted(set(entry["env_steps"]))
            trained = f"{steps[0]:,}" if len(steps) == 1 else f"{steps[0]:,}-{steps[-1]:,}"
            cells.append(
                f"{s.mean():.3g} [{s.min():.3g}, {s.max():.3g}], {np.mean(entry['normalized']):.2f}; {trained} steps"
            )
        better = "higher" if task["direction"] == "higher" else "lower"
        lines.append(
            f"| {env_id.split('/')[-1]} | {task['score']} ({better} is better) | {task['random_score']:.3g} | "
            f"{task['expert_score']:.3g} ({task['expert_from']}) | {task['budget_env_steps']:,} | "
            f"{task['eval_episodes']} episodes, {task['eval_worlds']} worlds | " + " | ".join(cells) + " |"
        )
    return "\n".join(lines) + "\n"


def _plots(out: str, report: dict, matrix: dict[str, np.ndarray]) -> None:
    """rliable's figures: the aggregate intervals, the performance profiles and the probabilities of improvement."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from rliable import plot_utils

    algos = report["algorithms"]
    points = {a: np.array([report["aggregates"][a][m][0] for m in AGGREGATES]) for a in algos}
    intervals = {a: np.array([[report["aggregates"][a][m][i] for m in AGGREGATES] for i in (1, 2)]) for a in algos}
    fig, _ = plot_utils.plot_interval_estimates(
        points,
        intervals,
        metric_names=[_LABELS[m] for m in AGGREGATES],
        algorithms=algos,
        xlabel="Normalized score",
        xlabel_y_coordinate=-0.9 / len(algos) - 0.1,  # rliable's default (-0.1) overlaps the ticks below 3 algorithms
    )
    fig.savefig(os.path.join(out, "aggregates.png"), dpi=110, bbox_inches="tight")
    plt.close(fig)
    profiles = report["profiles"]
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    plot_utils.plot_performance_profiles(
        {a: np.array(profiles[a]["fraction"]) for a in algos},
        np.array(profiles["taus"]),
        performance_profile_cis={a: np.array([profiles[a]["low"], profiles[a]["high"]]) for a in algos},
        ax=ax,
    )
    ax.legend(algos, fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "profiles.png"))
    plt.close(fig)
    pairs = report["probability_of_improvement"]
    if pairs:
        fig, ax = plt.subplots(figsize=(5, 0.6 + 0.45 * len(pairs)), dpi=110)
        plot_utils.plot_probability_of_improvement(
            {k.replace(" > ", ","): v[0] for k, v in pairs.items()},
            {k.replace(" > ", ","): np.array([v[1], v[2]]) for k, v in pairs.items()},
            ax=ax,
        )
        fig.tight_layout()
        fig.savefig(os.path.join(out, "improvement.png"))
        plt.close(fig)
