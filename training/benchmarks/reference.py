"""Reference results of one ID: train it with several seeds, evaluate every seed's policy, ship the checkpoints.

``python -m steel_envs.training.benchmarks.reference steel_envs/CartpoleSwingup-v0 --seeds 0,1,2 --max-seconds
600`` runs, for each seed ``k``, what ``steel-envs train <ID> --seed k [--max-seconds S]`` runs (the task's
defaults, ``--shards auto``), then ``steel-envs evaluate`` of the final checkpoint over ``--episodes`` episodes with
the policy's mean action, beside the random policy, the zero policy and the task's scripted solver where it ships
one. It writes, under ``--out`` (default ``docs/reference``):

- ``<Name>.json``: the commands, the machine and its speed (``machine_speed``, see :func:`machine_speed`), every
  seed's env-steps, wall time, curve and evaluation (mean return with its 95 % bootstrap interval, success rate,
  task metrics) and the baselines';
- ``<Name>_curves.png``: the mean return of the last 100 training episodes against env-steps, the seeds' mean and
  their range;

and copies each seed's checkpoint with its ``train_args.json`` to ``--checkpoints`` (default the package's
``steel_envs/reference/<Name>/seed<k>/``), where ``--policy reference`` finds seed 0's. It prints a one-line
summary of the ID; the documentation's results page and the task's page are generated from ``<Name>.json``.

Seeds that do not fit one sitting run one at a time: ``--seeds 1 --merge`` adds seed 1's run to the existing report
(same command and budget; its baselines are evaluated again). A seed that does not fit one sitting either runs in
several: ``--seeds 1 --sitting-seconds 7200 --log-root DIR`` stops it after two hours with its full training state
(so does a signal) and writes ``sitting.json`` into its run folder; ``--seeds 1 --resume RUN_FOLDER`` continues it
to the budget's iteration count and, once there, evaluates and reports it as one run: its env-steps, wall time and
curve are the sittings' together, ``sittings`` counts them. A resumed run is not bit-identical to an unbroken one
(the worlds restart from reset states); the rest of its state (weights, optimizer, observation normalization,
learning rate, iteration count, the returns of the last 100 episodes behind the curve) carries over. Once a seed is
trained its ``sitting.json`` says so, and once evaluated it holds the evaluation: a sitting stopped during the
evaluations (the seed's or the baselines') resumes with ``--resume`` and redoes only what was not done.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import tempfile
import textwrap
import time
import warnings

import numpy as np

from steel_envs.policies import REFERENCE_DIR, save_policy_only

__all__ = ["main", "physics_end_warnings"]


def _summary(result, policy: str) -> dict:
    s = next(s for s in result.summaries if s.policy == policy)
    return {
        "episodes": s.episodes,
        "mean_return": s.mean_return,
        "mean_return_ci": list(s.mean_return_ci),
        "success_rate": s.success_rate,
        "success_once_rate": s.success_once_rate,
        "mean_length": s.mean_length,
        "metrics": {k: list(v) for k, v in s.metrics.items()},
        "causes": {k: v for k, v in s.causes.items() if v > 0},
    }


_NUMBER = r"-?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|NaN|Infinity)"
_NUMBER_LIST = re.compile(rf"\[\s*({_NUMBER}(?:,\s*{_NUMBER})*)\s*\]")


def _dumps(report: dict) -> str:
    """The report as indented JSON with every list of numbers on one line (a curve point, an interval), so that
    a curve of thousands of points is as many lines, not three times as many."""
    return _NUMBER_LIST.sub(
        lambda m: "[" + ", ".join(m.group(1).replace(",", " ").split()) + "]", json.dumps(report, indent=1)
    )


def _plot(runs: list[dict], path: str, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grid = np.linspace(0, min(r["env_steps"] for r in runs), 100)
    curves = []
    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=110)
    for r in runs:
        steps = np.array([c[0] for c in r["curve"]], np.float64)
        means = np.array([c[2] for c in r["curve"]], np.float64)
        if len(steps) == 0:
            continue
        ax.plot(steps / 1e6, means, lw=0.6, alpha=0.45, label=f"seed {r['seed']}")
        curves.append(np.interp(grid, steps, means, left=np.nan))
    if curves:
        stack = np.array(curves)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # the grid's start, before any seed's first episode
            ax.plot(grid / 1e6, np.nanmean(stack, 0), color="k", lw=1.6, label="mean of the seeds")
            ax.fill_between(grid / 1e6, np.nanmin(stack, 0), np.nanmax(stack, 0), color="k", alpha=0.12)
    ax.set_xlabel("env-steps [millions]")
    ax.set_ylabel("mean return, last 100 episodes")
    ax.set_title(textwrap.fill(title, 80), fontsize=8)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def machine_speed(steps: int = 300, repeats: int = 3) -> dict | None:
    """The speed of the machine that trains, measured by a program that is not ours: Gymnasium's MuJoCo ``Ant-v5``
    in a ``SyncVectorEnv`` of 8 envs under random actions, as ``steel-envs bench`` times its peer.

    A wall-time budget (``--max-seconds``) buys as many env-steps as the machine runs, and one machine's speed
    varies between sessions by a factor of 3 and more; reports that carry this figure can be compared across
    machines and sessions.

    Returns:
        ``{"peer": str, "env_steps_per_s": float, "runs": list[float]}`` [env-steps/s], the median of ``repeats``
        runs of ``steps`` vector steps each; None when ``mujoco`` is not installed (``pip install -e '.[bench]'``).
    """
    try:
        import mujoco  # noqa: F401
    except ImportError:
        return None
    from steel_envs.training.benchmarks.bench import gymnasium_peer

    runs = [gymnasium_peer("Ant-v5", "sync", 8, steps).env_steps_per_s for _ in range(repeats)]
    return {
        "peer": f"Gymnasium Ant-v5, SyncVectorEnv x 8, random actions, {steps} steps",
        "env_steps_per_s": float(np.median(runs)),
        "runs": runs,
    }


def _row(env_id: str, report: dict) -> str:
    """The summary row: command, budget, then the trained policy's and the baselines' figures (Markdown)."""
    from steel_envs.training.evaluate import physics_end_fraction

    runs = report["runs"]

    def fmt(s: dict) -> str:
        text = f"{s['mean_return']:.1f} [{s['mean_return_ci'][0]:.1f}, {s['mean_return_ci'][1]:.1f}]"
        if s["success_rate"] is not None:
            text += f", {s['success_rate']:.0%} success ({s['success_once_rate']:.0%} on some step)"
        for name, (value, _low, _high) in s["metrics"].items():
            text += f", {name} {value:.3g}"
        return text + f", physics ends {physics_end_fraction(s['causes']):.0%}"

    seeds = "; ".join(f"seed {r['seed']}: {fmt(r['evaluation'])}" for r in runs)
    steps = f"{np.mean([r['env_steps'] for r in runs]) / 1e6:.2f} M"
    wall = f"{np.mean([r['seconds'] for r in runs]) / 60:.1f} min"
    base = "; ".join(f"{k}: {fmt(v)}" for k, v in report["baselines"].items())
    return f"| {env_id.split('/')[-1]} | `{report['command']}` | {steps} | {wall} | {seeds} | {base} |"


def physics_end_warnings(env_id: str, report: dict) -> list[str]:
    """One line per seed of ``report`` whose evaluated episodes end by a physics cause (overflow, non-finite state
    or action, penetration) more often than the protocol's bound (:data:`~steel_envs.training.evaluate.
    PHYSICS_END_BOUND`), naming the causes; empty when every seed is within it."""
    from steel_envs.training.evaluate import PHYSICS_END_BOUND, physics_end_causes, physics_end_fraction

    lines = []
    for run in report["runs"]:
        causes = run["evaluation"]["causes"]
        fraction = physics_end_fraction(causes)
        if fraction > PHYSICS_END_BOUND:
            named = ", ".join(f"{c} {v:.0%}" for c, v in physics_end_causes(causes).items())
            lines.append(
                f"{env_id} seed {run['seed']}: {fraction:.0%} of the evaluated episodes end by a physics cause "
                f"({named}), above the protocol's {PHYSICS_END_BOUND:.0%}"
            )
    return lines


def _kept_runs(report_path: str, command: str, seeds: list[int], budget: int | None, stops_early: bool) -> list[dict]:
    """``--merge``: the runs of the existing report at ``report_path`` other than ``seeds``' (none without one).

    ``budget`` is the task's iteration budget (None for a wall-time budget, which the command carries); a report
    that does not record one is checked run by run: no run past it, and, for a task without a return that stops
    training (``stops_early`` False), every run at it.

    Raises:
        SystemExit: If the existing report was made by another command or another iteration budget.
    """
    if not os.path.exists(report_path):
        return []
    with open(report_path) as f:
        previous = json.load(f)
    if previous.get("command") != command:
        raise SystemExit(
            f"--merge: {report_path} was made by {previous.get('command')!r}, not {command!r}; runs of different "
            "budgets do not merge"
        )
    kept = [run for run in previous["runs"] if run["seed"] not in seeds]
    if budget is not None:
        recorded = previous.get("budget_iterations")
        if recorded is not None:
            other = recorded != budget
        else:  # a report from before the budget was recorded: its runs' iterations tell
            other = any(r["iterations"] > budget or (not stops_early and r["iterations"] != budget) for r in kept)
        if other:
            done = sorted({r["iterations"] for r in kept})
            raise SystemExit(
                f"--merge: {report_path}'s runs were trained to another budget (iterations {done}, recorded budget "
                f"{recorded}) than the task's {budget} iterations; runs of different budgets do not merge"
            )
    return kept


SITTING_FILE = "sitting.json"
"""What an unfinished seed's run folder records for ``--resume``: the ID, seed and command, the budget's and the
done iterations, the env-steps, wall time and curve of its sittings, and its full checkpoint; once the seed is
trained, ``trained`` (its last-100 mean return and run folder), once evaluated, ``run`` (its report entry)."""


def _write_sitting(run_dir: str, record: dict) -> None:
    """Write ``record`` as ``run_dir``'s sitting file, whole or not at all (a stop while writing keeps the old one)."""
    path = os.path.join(run_dir, SITTING_FILE)
    with open(path + ".tmp", "w") as f:
        json.dump(record, f)
    os.replace(path + ".tmp", path)


def _previous_sittings(a: argparse.Namespace, seed: int, command: str) -> dict | None:
    """``--resume``: the run folder's checked ``sitting.json``; None without ``--resume``.

    Raises:
        SystemExit: One line, when the folder has no sitting file or one of another ID, seed or command.
    """
    if a.resume is None:
        return None
    path = os.path.join(a.resume, SITTING_FILE)
    try:
        with open(path) as f:
            previous = json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit(f"--resume: no readable {SITTING_FILE} in {a.resume!r} ({e})") from None
    asked = {"env_id": a.env_id, "seed": seed, "command": command}
    differ = {k: previous.get(k) for k, v in asked.items() if previous.get(k) != v}
    if differ:
        raise SystemExit(f"--resume: {path} records {differ}, this call asks {asked}")
    return previous


def _stop_sitting(r, seed: int, previous: dict | None, command: str, budget: int, env_id: str) -> int:
    """Record an unfinished seed's run in its folder's ``sitting.json`` (its sittings so far) and say how it goes on;
    return the exit status (128 + the signal for a signal, else 0)."""
    done = _merged(r, previous)
    record = {"env_id": env_id, "seed": seed, "command": command, "budget_iterations": budget, **done}
    record["checkpoint"] = os.path.abspath(r.checkpoint)
    _write_sitting(r.run_dir, record)
    how = "stopped by signal " + str(r.stop_signal) if r.stop_signal is not None else "sitting over"
    print(
        f"seed {seed}: {how} after {r.iterations} of {budget} iterations ({done['env_steps']:,} env-steps, "
        f"{done['seconds']:.0f} s in {done['sittings']} sitting(s)); no report written; continue with --seeds {seed} "
        f"--resume {r.run_dir}",
        flush=True,
    )
    return 0 if r.stop_signal is None else 128 + r.stop_signal


def _merged(r, previous: dict | None) -> dict:
    """The run's iterations, env-steps, wall time, curve and sitting count, those of ``previous`` sittings first."""
    steps, seconds = (previous["env_steps"], previous["seconds"]) if previous else (0, 0.0)
    curve = [[steps + n, round(seconds + t, 2), round(mean, 3)] for n, t, mean in r.curve]
    return {
        "iterations": r.iterations,
        "env_steps": steps + r.env_steps,
        "seconds": seconds + r.seconds,
        # (env-steps, seconds, mean return of the last 100 episodes), to 10 ms and 1e-3
        "curve": (previous["curve"] if previous else []) + curve,
        "sittings": (previous["sittings"] if previous else 0) + 1,
    }


def _train(a: argparse.Namespace, seed: int, log_root: str, command: str):
    """Train seed ``seed`` (a sitting of it with ``--sitting-seconds``, the rest of it with ``--resume``); return the
    train result with what earlier sittings did, or the exit status when the run stopped unfinished."""
    import dataclasses

    import torch
    from steel_envs.training.train import train
    from steel_envs.training.train_args import TrainArgs

    import steel_envs

    previous = _previous_sittings(a, seed, command)
    if previous is not None and "trained" in previous:  # trained to its budget in an earlier sitting
        print(f"seed {seed}: trained in an earlier sitting ({a.resume}); not trained again", flush=True)
        return previous
    ppo = steel_envs.task_class(a.env_id).train_config
    budget = ppo.max_iterations
    done = 0
    if previous is not None:
        done = int(torch.load(previous["checkpoint"], weights_only=False, map_location="cpu")["infos"]["iterations"])
        ppo = dataclasses.replace(ppo, max_iterations=max(budget - done, 1))
    seconds = a.max_seconds if a.max_seconds is not None else a.sitting_seconds
    args = TrainArgs(env_id=a.env_id, seed=seed, max_seconds=seconds, log_dir=log_root, progress=False)
    if a.max_seconds is None:
        args = dataclasses.replace(args, ppo=ppo, resume=previous and previous["checkpoint"])
    r = train(args)
    if r.stop_signal is not None and a.max_seconds is not None:  # a wall-time budget does not resume
        print(f"seed {seed}: stopped by signal {r.stop_signal} (checkpoint {r.checkpoint}); no report written")
        return 128 + r.stop_signal
    if r.stop_signal is not None or (a.max_seconds is None and r.iterations < budget and not r.target_reached):
        return _stop_sitting(r, seed, previous, command, budget, a.env_id)
    record = {"env_id": a.env_id, "seed": seed, "command": command, "budget_iterations": budget, **_merged(r, previous)}
    record["checkpoint"] = os.path.abspath(r.checkpoint)
    record["trained"] = {"train_mean_return": r.mean_return, "run_dir": os.path.abspath(r.run_dir)}
    # Before the evaluations, which take as long as a sitting for the VBD IDs: a stop there loses no training.
    _write_sitting(r.run_dir, record)
    return record


def _train_and_evaluate(a: argparse.Namespace, seed: int, log_root: str, command: str) -> tuple[dict, str, str] | int:
    """Train seed ``seed`` and evaluate it: the report's run entry with the run's checkpoint and folder (shipped by
    :func:`_ship` once every seed ran), or the exit status when the training stopped unfinished (a signal, the end of
    a sitting)."""
    from steel_envs.training.evaluate import evaluate, table

    record = _train(a, seed, log_root, command)
    if isinstance(record, int):
        return record
    run_dir, checkpoint = record["trained"]["run_dir"], record["checkpoint"]
    if "run" in record:  # evaluated in an earlier sitting
        return record["run"], checkpoint, run_dir
    mean_return = record["trained"]["train_mean_return"]
    print(
        f"seed {seed}: {record['env_steps']} env-steps, {record['iterations']} iterations, {record['seconds']:.0f} s"
        f"{' in ' + str(record['sittings']) + ' sittings' if record['sittings'] > 1 else ''}, "
        f"last-100 mean return {mean_return:.1f}",
        flush=True,
    )
    with open(os.path.join(run_dir, "train_args.json")) as f:
        hyper_parameters = json.load(f)["hyper_parameters"]
    result = evaluate(a.env_id, [checkpoint], episodes=a.episodes, num_envs=16, progress=False)
    print(table(result), flush=True)
    run = {
        "seed": seed,
        "env_steps": record["env_steps"],
        "iterations": record["iterations"],
        "seconds": record["seconds"],
        "num_envs": hyper_parameters["num_envs"],
        "shards": hyper_parameters["shards"],
        "train_mean_return": mean_return,
        "curve": record["curve"],
        "evaluation": _summary(result, checkpoint),
    }
    if record["sittings"] > 1:
        run["sittings"] = record["sittings"]
    _write_sitting(run_dir, {**record, "run": run})
    return run, checkpoint, run_dir


def _ship(checkpoints: str, name: str, seed: int, checkpoint: str, run_dir: str, iterations: int) -> None:
    """Copy seed ``seed``'s policy (no critic or optimizer state) and its ``train_args.json`` to
    ``checkpoints/<name>/seed<k>/``, the latter with the seed's ``iterations`` in all: a run resumed over sittings
    wrote the last sitting's share there."""
    target = os.path.join(checkpoints, name, f"seed{seed}")
    os.makedirs(target, exist_ok=True)
    save_policy_only(checkpoint, os.path.join(target, "model_final.pt"))
    with open(os.path.join(run_dir, "train_args.json")) as f:
        args = json.load(f)
    args["hyper_parameters"]["max_iterations"] = iterations
    with open(os.path.join(target, "train_args.json"), "w") as f:
        json.dump(args, f, indent=2)


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    """The command line, checked (a bad combination exits with argparse's one line)."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("env_id")
    p.add_argument("--seeds", default="0,1,2", help="comma-separated training seeds")
    p.add_argument("--max-seconds", type=float, default=None, help="wall-time budget of each seed [s]")
    p.add_argument("--episodes", type=int, default=100, help="evaluated episodes per policy")
    p.add_argument("--out", default="docs/reference", help="folder of the report and the curves")
    p.add_argument("--checkpoints", default=REFERENCE_DIR, help="folder the checkpoints are copied to")
    p.add_argument(
        "--merge",
        action="store_true",
        help="keep the other seeds' runs of an existing <Name>.json (one seed per sitting); a seed run again replaces "
        "its run",
    )
    p.add_argument(
        "--sitting-seconds",
        type=float,
        default=None,
        help="stop the (one) seed after this wall time [s] of this sitting, resumable with --resume (not a budget)",
    )
    p.add_argument("--resume", default=None, help="run folder of a seed's unfinished sitting (its sitting.json)")
    p.add_argument("--log-root", default=None, help="folder of the runs' logs (default: a new temporary folder)")
    a = p.parse_args(argv)
    if (a.sitting_seconds is not None or a.resume is not None) and "," in a.seeds:
        p.error("--sitting-seconds and --resume: expected one seed (--seeds K)")
    if (a.sitting_seconds is not None or a.resume is not None) and a.max_seconds is not None:
        p.error("--sitting-seconds and --resume: for budgets in iterations; --max-seconds is a wall-time budget")
    if a.sitting_seconds is not None and not a.sitting_seconds > 0:
        p.error(f"--sitting-seconds: expected a number of seconds > 0, got {a.sitting_seconds}")
    return a


def main(argv: list[str] | None = None) -> int:
    """Train every seed, evaluate, then ship the checkpoints with the report and the curves, print the summary row."""
    a = _arguments(argv)
    import torch
    import warp as wp
    from steel_envs.training.benchmarks.learning import scripted_policy_spec
    from steel_envs.training.evaluate import evaluate, table

    import steel_envs

    wp.config.log_level = wp.LOG_WARNING
    ppo = steel_envs.task_class(a.env_id).train_config
    name = a.env_id.split("/")[-1]
    seeds = [int(s) for s in a.seeds.split(",")]
    wall = "" if a.max_seconds is None else f" --max-seconds {a.max_seconds:g}"
    command = f"steel-envs train {a.env_id} --seed <k>{wall}"
    iterations = ppo.max_iterations if a.max_seconds is None else None  # a wall-time budget is in the command
    report_path = os.path.join(a.out, f"{name}.json")
    # Before anything runs: a report of another budget is refused, not merged.
    kept = _kept_runs(report_path, command, seeds, iterations, ppo.target_return is not None) if a.merge else []
    report: dict = {
        "env_id": a.env_id,
        "command": command,
        **({"budget_iterations": iterations} if iterations is not None else {}),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch "
        f"{torch.__version__}, warp {wp.__version__}, device cpu",
        "date": time.strftime("%Y-%m-%d"),
        "machine_speed": machine_speed(),
        "runs": [],
    }
    if report["machine_speed"] is not None:
        print(f"machine speed: {report['machine_speed']['env_steps_per_s']:,.0f} env-steps/s of the peer", flush=True)
    log_root = a.log_root or tempfile.mkdtemp(prefix="steel-envs-reference-")
    trained = []
    for seed in seeds:
        done = _train_and_evaluate(a, seed, log_root, report["command"])
        if isinstance(done, int):  # a signal: a cut-short sitting ships nothing, not even its finished seeds
            return done
        run, checkpoint, run_dir = done
        trained.append((seed, checkpoint, run_dir, run["iterations"]))
        # Per run, so that runs merged from several sittings keep their own.
        report["runs"].append({**run, "date": report["date"], "machine_speed": report["machine_speed"]})
    report["runs"] = sorted(kept + report["runs"], key=lambda run: run["seed"])
    baselines = ["random", "zero", *filter(None, [scripted_policy_spec(a.env_id)])]
    result = evaluate(a.env_id, baselines, episodes=a.episodes, num_envs=16, progress=False)
    print(table(result), flush=True)
    report["baselines"] = {b.split(":")[-1]: _summary(result, b) for b in baselines}
    for seed, checkpoint, run_dir, iterations in trained:  # with the report: checkpoints and report stay one set
        _ship(a.checkpoints, name, seed, checkpoint, run_dir, iterations)
    os.makedirs(a.out, exist_ok=True)
    with open(report_path, "w") as f:
        f.write(_dumps(report))
    _plot(report["runs"], os.path.join(a.out, f"{name}_curves.png"), f"{name}: {report['command']}")
    print(_row(a.env_id, report))
    for line in physics_end_warnings(a.env_id, report):
        print(f"warning: {line}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
