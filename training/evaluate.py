"""``steel-envs evaluate`` and :func:`evaluate`: compare policies over many worlds, seeds and a
robustness grid, with bootstrap confidence intervals.

**Episode accounting.** For each (policy, seed) one vector env runs ``num_envs`` worlds in parallel. The
worlds are split evenly over the sweep grid's cells, and each cell's ``episodes`` are split over its worlds
as quotas (``episodes // n`` each, one more for the first ``episodes % n``). A world counts its first
``quota`` completed episodes and ignores later ones. Which episodes count is fixed in advance by (world,
episode index), never by how long an episode lasted, so short episodes are not favoured, as they would be
by "take the first K episodes to finish". Every counted episode is counted exactly once.

**Statistics** (SciPy, extra ``eval``; across IDs and algorithms: ``steel-envs compare``): the mean and the
interquartile mean (``scipy.stats.trim_mean(x, 0.25)``, rliable's IQM) of the episode returns, each with a
bootstrap confidence interval (``scipy.stats.bootstrap``, BCa, episodes resampled), mean length, mean of
every reward term, the fraction of episodes per end cause (``constraint_overflow``, ``nonfinite_state``,
``nonfinite_action``, ``penetration``, then the task's termination terms by name, e.g. ``pole_fell``, then
``terminated`` or ``time_limit``), and a performance profile (the fraction of episodes whose return exceeds a
threshold, ``scipy.stats.ecdf``).

**Policies**: a ``steel-envs train`` checkpoint (``model_*.pt`` beside ``train_args.json``), an exported
``.onnx`` or TorchScript ``.pt`` file, ``module:function`` (obs tensor -> action tensor), ``reference`` (the
package's reference checkpoint of the env's ID, seed 0; ``reference:<seed>`` another seed's, see
``docs/results.md``), ``random`` or ``zero``.

**Sweeps**: ``friction`` and ``mass_scale`` factors (relative to the model as built), applied per world
with :meth:`steel_envs.NewtonVectorEnv.set_world_parameters`; every cell of the grid runs in the same env.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
import torch

from steel_envs.policies import check_trained_on, load_policy_callable

__all__ = [
    "PHYSICS_CAUSES",
    "PHYSICS_END_BOUND",
    "EpisodeRecord",
    "EvaluationResult",
    "PolicySummary",
    "evaluate",
    "main",
    "physics_end_causes",
    "physics_end_fraction",
]

SWEEPABLE = ("friction", "mass_scale")
"""Parameters ``--sweep`` accepts."""
CAUSES = ("terminated", "time_limit", "constraint_overflow", "nonfinite_state", "nonfinite_action", "penetration")
PHYSICS_CAUSES = ("constraint_overflow", "nonfinite_state", "nonfinite_action", "penetration")
"""The end causes that are the simulation's, not the task's: a capacity overflowed, a non-finite state or action, a
body past the penetration bound."""
PHYSICS_END_BOUND = 0.02
"""The reference protocol's bound on the fraction of a trained policy's evaluated episodes that end by a physics
cause: above it the benchmark measures an artefact of the simulation the policy provokes."""


def physics_end_causes(causes: Mapping[str, float]) -> dict[str, float]:
    """The :data:`PHYSICS_CAUSES` that ended some episode, in that order, from a summary's ``causes`` (cause ->
    fraction of the episodes; absent causes count 0)."""
    return {cause: causes[cause] for cause in PHYSICS_CAUSES if causes.get(cause, 0.0) > 0}


def physics_end_fraction(causes: Mapping[str, float]) -> float:
    """The fraction of episodes ending by one of :data:`PHYSICS_CAUSES` (see :func:`physics_end_causes`)."""
    return float(sum(physics_end_causes(causes).values()))


@dataclass
class EpisodeRecord:
    """One counted episode."""

    policy: str
    seed: int
    cell: dict[str, float]
    world: int
    index: int
    """Episode number within its world (0-based)."""
    episode_return: float
    length: int
    terms: dict[str, float]
    cause: str
    success: bool | None = None
    """``info["success"]`` on the episode's last step; None: the task defines no success."""
    success_once: bool | None = None
    """``info["success"]`` on any step of the episode (ManiSkill's ``success_once``; ``success`` is its
    ``success_at_end``); None: the task defines no success."""
    metrics: dict[str, float] = field(default_factory=dict)
    """The task's episode metrics (``info["episode"]``, e.g. ``distance_x``), by name."""


@dataclass
class PolicySummary:
    """Statistics of one policy in one sweep cell, over all seeds."""

    policy: str
    cell: dict[str, float]
    episodes: int
    mean_return: float
    mean_return_ci: tuple[float, float]
    iqm_return: float
    iqm_return_ci: tuple[float, float]
    mean_length: float
    term_means: dict[str, float]
    causes: dict[str, float]
    """Fraction of episodes per end cause."""
    success_rate: float | None = None
    """Fraction of episodes whose last step reported ``info["success"]``; None: the task defines no success."""
    success_once_rate: float | None = None
    """Fraction of episodes with ``info["success"]`` on any step: above ``success_rate`` where a policy reaches the
    goal and leaves it again; None: the task defines no success."""
    metrics: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    """Per task metric: (mean over the episodes, lower and upper bound of its bootstrap confidence interval)."""


@dataclass
class EvaluationResult:
    """What :func:`evaluate` measured: every episode and the summaries."""

    env_id: str
    seeds: list[int]
    episodes_per_seed: int
    num_envs: int
    sweep: dict[str, list[float]]
    summaries: list[PolicySummary]
    episodes: list[EpisodeRecord] = field(repr=False)
    profile_thresholds: list[float] = field(default_factory=list)
    profiles: dict[str, list[float]] = field(default_factory=dict)
    """Per policy (all cells): fraction of episodes with return > each threshold."""
    metric_units: dict[str, str] = field(default_factory=dict)
    """Unit of each task metric (the task's ``EpisodeMetric`` declarations)."""

    def to_json(self, path: str) -> None:
        """Write the whole result (every episode included) as JSON."""
        with open(path, "w") as f:
            json.dump(asdict(self), f, indent=1)


def _cells(sweep: dict[str, list[float]]) -> list[dict[str, float]]:
    names = list(sweep)
    return [dict(zip(names, values, strict=True)) for values in itertools.product(*(sweep[n] for n in names))] or [{}]


def _run(
    env_id, policy_name, seed, episodes, num_envs, sweep, device, env_kwargs, bar, factories
) -> list[EpisodeRecord]:
    import steel_envs

    cells = _cells(sweep)
    if num_envs < len(cells):
        raise ValueError(f"num_envs: the sweep has {len(cells)} cells, so at least that many worlds are needed")
    env = steel_envs.make_vec(env_id, num_envs=num_envs, device=device, seed=seed, **env_kwargs)
    cell_of_world = np.arange(num_envs) * len(cells) // num_envs
    quota = np.zeros(num_envs, np.int64)
    for c in range(len(cells)):
        worlds = np.flatnonzero(cell_of_world == c)
        quota[worlds] = episodes // len(worlds)
        quota[worlds[: episodes % len(worlds)]] += 1
    if sweep:
        env.set_world_parameters(
            friction_scale=[cells[c].get("friction", 1.0) for c in cell_of_world],
            mass_scale=[cells[c].get("mass_scale", 1.0) for c in cell_of_world],
        )
    if policy_name in factories:
        policy = factories[policy_name](env, seed)
    else:
        policy = load_policy_callable(policy_name, env, seed)
    counted = np.zeros(num_envs, np.int64)
    succeeded = np.zeros(num_envs, bool)  # info["success"] on a step of the running episode
    records: list[EpisodeRecord] = []
    obs, _ = env.reset(seed=seed)
    limit = env.max_episode_steps * (int(quota.max()) + 1) + 1
    for _ in range(limit):
        if (counted >= quota).all():
            break
        with torch.inference_mode():
            actions = torch.as_tensor(policy(obs.clone()), dtype=torch.float32, device=env.torch_device)
        obs, _, terminated, truncated, info = env.step(actions)
        done = info["_episode"].cpu().numpy()
        success = info["success"].cpu().numpy() if "success" in info else None
        if success is not None:
            succeeded |= success
        if not done.any():
            continue
        ep = {k: v.cpu().numpy() for k, v in info["episode"].items()}
        core = ("nonfinite_state", "nonfinite_action", "constraint_overflow", "penetration")
        flags = {k: info[k].cpu().numpy() for k in core}
        term, trunc = terminated.cpu().numpy(), truncated.cpu().numpy()
        for w in np.flatnonzero(done & (counted < quota)):
            # The core's causes first, then the task's declared termination terms, then the plain dones.
            cause = next(
                (k for k in core if flags[k][w]),
                next(
                    (t.name for t in env.terminations if ep[t.name][w]),
                    "terminated" if term[w] else "time_limit" if trunc[w] else "terminated",
                ),
            )
            records.append(
                EpisodeRecord(
                    policy=policy_name,
                    seed=seed,
                    cell=cells[cell_of_world[w]],
                    world=int(w),
                    index=int(counted[w]),
                    episode_return=float(ep["r"][w]),
                    length=int(ep["l"][w]),
                    terms={t: float(ep[f"reward_{t}"][w]) for t in env.reward_terms},
                    cause=cause,
                    success=bool(success[w]) if success is not None else None,
                    success_once=bool(succeeded[w]) if success is not None else None,
                    metrics={m.name: float(ep[m.name][w]) for m in env.metrics},
                )
            )
            counted[w] += 1
            bar.update(1)
        succeeded[done] = False
    env.close()
    if (counted < quota).any():
        raise RuntimeError(f"{policy_name}, seed {seed}: episodes did not end within {limit} steps")
    return records


def _causes(records: list[EpisodeRecord]) -> list[str]:
    """The core's end causes (``CAUSES``), then any other cause the episodes name (a task's termination terms)."""
    return [*CAUSES, *sorted({r.cause for r in records} - set(CAUSES))]


def bootstrap_interval(
    sample: np.ndarray, statistic: Callable, confidence: float, resamples: int, seed: int
) -> tuple[float, float]:
    """Bootstrap confidence interval of ``statistic`` over a 1-D ``sample`` (``scipy.stats.bootstrap``).

    BCa (bias-corrected and accelerated) where it is defined; where it is not (its acceleration is 0/0 when the
    jackknife values are all equal, e.g. an interquartile mean of a sample whose middle half is constant) or
    where it does not contain the estimate, the percentile interval; a constant sample or one of fewer than 2
    values gives the point interval. Every returned interval is finite (for a finite sample) and contains
    ``statistic(sample)``: ``(min(low, estimate), max(high, estimate))``.

    Returns:
        (low, high) as floats.
    """
    import warnings

    from scipy import stats

    estimate = float(statistic(sample))
    if len(sample) < 2 or np.ptp(sample) == 0.0:
        return (estimate, estimate)
    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scipy's DegenerateDataWarning / RuntimeWarning where BCa is undefined
            ci = stats.bootstrap(
                (sample,),
                statistic,
                confidence_level=confidence,
                n_resamples=resamples,
                method=method,
                rng=np.random.default_rng(seed),
            ).confidence_interval
        low, high = float(ci.low), float(ci.high)
        if np.isfinite(low) and np.isfinite(high) and low <= estimate <= high:
            return (low, high)
    if not (np.isfinite(low) and np.isfinite(high)):
        low = high = estimate
    return (min(low, estimate), max(high, estimate))


def _summarize(records: list[EpisodeRecord], confidence: float, resamples: int, seed: int) -> PolicySummary:
    from scipy import stats

    returns = np.array([r.episode_return for r in records], np.float64)

    def interval(statistic, values=returns) -> tuple[float, float]:
        return bootstrap_interval(values, statistic, confidence, resamples, seed)

    def iqm(x, axis=-1):
        return stats.trim_mean(x, 0.25, axis=axis)

    def mean(x, axis=-1):
        return np.mean(x, axis=axis)

    terms = records[0].terms.keys()
    return PolicySummary(
        policy=records[0].policy,
        cell=records[0].cell,
        episodes=len(records),
        mean_return=float(returns.mean()),
        mean_return_ci=interval(mean),
        iqm_return=float(iqm(returns)),
        iqm_return_ci=interval(iqm),
        mean_length=float(np.mean([r.length for r in records])),
        term_means={t: float(np.mean([r.terms[t] for r in records])) for t in terms},
        causes={c: float(np.mean([r.cause == c for r in records])) for c in _causes(records)},
        success_rate=None if records[0].success is None else float(np.mean([r.success for r in records])),
        success_once_rate=None
        if records[0].success_once is None
        else float(np.mean([r.success_once for r in records])),
        metrics={
            name: (float(values.mean()), *interval(mean, values))
            for name in records[0].metrics
            for values in [np.array([r.metrics[name] for r in records], np.float64)]
        },
    )


def _profiles(records: list[EpisodeRecord], policies: Sequence[str]) -> tuple[list[float], dict[str, list[float]]]:
    """21 return thresholds over all episodes and, per policy, the fraction of its episodes above each."""
    from scipy import stats

    all_returns = np.array([r.episode_return for r in records])
    thresholds = np.linspace(all_returns.min(), all_returns.max(), 21).tolist()
    profiles = {}
    for name in policies:
        x = np.array([r.episode_return for r in records if r.policy == name])
        profiles[name] = [float(v) for v in stats.ecdf(x).sf.evaluate(np.array(thresholds))] if len(x) > 1 else []
    return thresholds, profiles


def evaluate(
    env_id: str,
    policies: Sequence[str],
    *,
    episodes: int = 20,
    num_envs: int = 8,
    seeds: Sequence[int] = (0,),
    sweep: dict[str, Sequence[float]] | None = None,
    device: str | None = "cpu",
    confidence: float = 0.95,
    resamples: int = 2000,
    progress: bool = True,
    factories: Mapping[str, Callable] | None = None,
    **env_kwargs,
) -> EvaluationResult:
    """Evaluate ``policies`` on ``env_id``: ``episodes`` counted episodes per seed and sweep cell.

    Args:
        env_id: A registered ID.
        policies: Policy specs (see the module docstring).
        episodes: Episodes counted per (policy, seed, sweep cell).
        num_envs: Worlds of the vector env; at least the number of sweep cells.
        seeds: Env seeds (and seeds of the random policy); each is one run.
        sweep: ``{"friction": [...], "mass_scale": [...]}`` factors; the grid is their product.
        device: Warp device.
        confidence: Confidence level of the bootstrap intervals.
        resamples: Bootstrap resamples.
        progress: Show a progress bar over counted episodes.
        factories: Policies built from the env: a name of ``policies`` found here runs ``factories[name](env, seed)``,
            a policy ``obs (N, obs_dim) float32 -> actions (N, act_dim) float32``, for policies that need the action
            size or a step counter (the scripted adversaries of ``training/benchmarks/adversaries.py``).
        **env_kwargs: More env keyword arguments (task config fields, ``max_episode_steps``...).

    Raises:
        ValueError: On an unknown sweep parameter, non-positive counts, an unknown policy spec or a policy file
            trained on another task (before anything runs).
        gymnasium.error.UnregisteredEnv: On an unknown ``env_id`` (naming the closest IDs).
    """
    from tqdm import tqdm

    import steel_envs

    steel_envs.task_class(env_id)
    sweep = {k: [float(v) for v in vals] for k, vals in (sweep or {}).items()}
    unknown = sorted(set(sweep) - set(SWEEPABLE))
    if unknown:
        raise ValueError(f"sweep: unknown parameter(s) {unknown}; sweepable: {list(SWEEPABLE)}")
    if episodes < 1 or num_envs < 1 or not seeds or not policies:
        raise ValueError("episodes, num_envs, seeds and policies: expected at least one each")
    cells = _cells(sweep)
    total = len(policies) * len(seeds) * len(cells) * episodes
    factories = dict(factories or {})
    for name in policies:  # another task's policy file: refused before anything runs
        if name not in factories:
            check_trained_on(name, env_id)
    bar = tqdm(total=total, unit="episode", desc=env_id, disable=not progress, mininterval=0.5)
    records: list[EpisodeRecord] = []
    for name in policies:
        for seed in seeds:
            records += _run(env_id, name, int(seed), episodes, num_envs, sweep, device, env_kwargs, bar, factories)
    bar.close()
    summaries = []
    for name in policies:
        for cell in cells:
            group = [r for r in records if r.policy == name and r.cell == cell]
            summaries.append(_summarize(group, confidence, resamples, seed=0))
    thresholds, profiles = _profiles(records, policies)
    return EvaluationResult(
        env_id=env_id,
        seeds=[int(s) for s in seeds],
        episodes_per_seed=episodes,
        num_envs=num_envs,
        sweep=sweep,
        summaries=summaries,
        episodes=records,
        profile_thresholds=thresholds,
        profiles=profiles,
        metric_units={m.name: m.unit for m in steel_envs.task_class(env_id).metrics},
    )


def table(result: EvaluationResult) -> str:
    """The summaries as a terminal table."""
    lines = [
        f"{'policy':28s} {'cell':26s} {'eps':>4s} {'mean return [95% CI]':>28s} {'IQM [95% CI]':>28s} "
        f"{'length':>7s} {'success':>7s} {'once':>5s}  end causes"
    ]
    metric_rows = []
    for s in result.summaries:
        cell = ", ".join(f"{k}={v:g}" for k, v in s.cell.items()) or "-"
        causes = ", ".join(f"{k} {v:.0%}" for k, v in s.causes.items() if v > 0)
        mean = f"{s.mean_return:.1f} [{s.mean_return_ci[0]:.1f}, {s.mean_return_ci[1]:.1f}]"
        iqm = f"{s.iqm_return:.1f} [{s.iqm_return_ci[0]:.1f}, {s.iqm_return_ci[1]:.1f}]"
        success = "-" if s.success_rate is None else f"{s.success_rate:.0%}"
        once = "-" if s.success_once_rate is None else f"{s.success_once_rate:.0%}"
        lines.append(
            f"{os.path.basename(s.policy)[:28]:28s} {cell[:26]:26s} {s.episodes:4d} {mean:>28s} "
            f"{iqm:>28s} {s.mean_length:7.1f} {success:>7s} {once:>5s}  {causes}"
        )
        for name, (value, low, high) in s.metrics.items():
            unit = result.metric_units.get(name, "")
            metric_rows.append(
                f"{os.path.basename(s.policy)[:28]:28s} {cell[:26]:26s} {name:>20s} "
                f"{value:.3g} [{low:.3g}, {high:.3g}]{'' if unit in ('', '1') else ' ' + unit}"
            )
    if metric_rows:
        lines += ["", f"{'policy':28s} {'cell':26s} {'metric':>20s} mean [95% CI]", *metric_rows]
    return "\n".join(lines)


def plot(result: EvaluationResult, prefix: str) -> list[str]:
    """Write ``<prefix>_returns.png`` (return distribution per policy) and, with a sweep,
    ``<prefix>_sweep.png`` (mean return with its CI vs each swept parameter); return the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    policies = list(dict.fromkeys(s.policy for s in result.summaries))
    paths = []
    fig, ax = plt.subplots(figsize=(6, 3.5))
    data = [[r.episode_return for r in result.episodes if r.policy == p] for p in policies]
    ax.boxplot(data, tick_labels=[os.path.basename(p)[:20] for p in policies], showmeans=True)
    ax.set_ylabel("episode return")
    ax.set_title(f"{result.env_id}: {sum(map(len, data))} episodes")
    fig.tight_layout()
    paths.append(f"{prefix}_returns.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)
    if result.sweep:
        fig, axes = plt.subplots(1, len(result.sweep), figsize=(5 * len(result.sweep), 3.5), squeeze=False)
        for ax, param in zip(axes[0], result.sweep, strict=True):
            for p in policies:
                values = result.sweep[param]
                means = [
                    np.mean([r.episode_return for r in result.episodes if r.policy == p and r.cell[param] == v])
                    for v in values
                ]
                ax.plot(values, means, "o-", label=os.path.basename(p)[:20])
            ax.set_xlabel(param)
            ax.set_ylabel("mean return")
            ax.legend(fontsize=7)
        fig.tight_layout()
        paths.append(f"{prefix}_sweep.png")
        fig.savefig(paths[-1], dpi=110)
        plt.close(fig)
    return paths


def main(argv: list[str] | None = None) -> int:
    """``steel-envs evaluate <Id> --policy P [--policy Q] --episodes K --num-envs N --seeds 0,1 --sweep p=a,b``."""
    from steel_envs.sharding import WORKER_TIMEOUT_ARG, resolve_shards, shards_arg

    p = argparse.ArgumentParser(
        prog="steel-envs evaluate", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("env_id")
    p.add_argument(
        "--policy",
        action="append",
        required=True,
        help="a train checkpoint, .onnx / TorchScript file, module:function, reference[:<seed>], random or zero; "
        "repeat for several policies",
    )
    p.add_argument("--episodes", type=int, default=20, help="counted episodes per seed and sweep cell")
    p.add_argument("--num-envs", type=int, default=8)
    p.add_argument("--seeds", default="0", help="comma-separated env seeds")
    p.add_argument("--sweep", action="append", default=[], help="name=v1,v2,... (friction, mass_scale)")
    p.add_argument("--device", default="cpu")
    p.add_argument(
        "--shards",
        type=shards_arg,
        default="auto",
        help="CPU processes to split the worlds over, or 'auto': one per core with enough worlds each (default auto)",
    )
    p.add_argument("--worker-timeout", **WORKER_TIMEOUT_ARG)
    p.add_argument(
        "--out",
        default=None,
        help="output prefix: <out>.json, <out>_returns.png ... (default runs/<ID>/evaluation_<time>_<id>/evaluation)",
    )
    p.add_argument("--no-progress", action="store_true")
    a = p.parse_args(argv)
    from steel_envs.training import out_prefix

    from steel_envs.cli_common import check_policy_spec

    for spec in a.policy:  # before the output folder and any env: a typo in a path costs nothing
        check_policy_spec(spec, "--policy")
    default_out = a.out is None
    try:
        a.out = out_prefix(a.out, "evaluation", a.env_id)
    except ValueError as e:
        p.error(str(e))
    import warp as wp

    wp.config.log_level = wp.LOG_WARNING
    try:
        seeds = [int(s) for s in a.seeds.split(",")]
        sweep = {}
        for item in a.sweep:
            name, _, values = item.partition("=")
            sweep[name.strip()] = [float(v) for v in values.split(",")]
        shards, reason = resolve_shards(a.env_id, a.num_envs, a.shards, device=a.device)
        print(f"shards: {reason}")
        result = evaluate(
            a.env_id,
            a.policy,
            episodes=a.episodes,
            num_envs=a.num_envs,
            seeds=seeds,
            sweep=sweep,
            device=a.device,
            progress=not a.no_progress,
            num_shards=shards,
            worker_timeout=a.worker_timeout,
        )
    except ValueError as e:
        print(f"steel-envs evaluate: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # nothing written: the folder made for the outputs goes (steel-envs prints the line)
        if default_out:
            with contextlib.suppress(OSError):
                os.rmdir(os.path.dirname(a.out))
        raise
    print(table(result))
    result.to_json(f"{a.out}.json")
    print("wrote " + ", ".join([f"{a.out}.json", *plot(result, a.out)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
