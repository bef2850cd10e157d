"""``steel-envs compare``: compare learning algorithms over a suite of IDs, with the statistics of Agarwal et al.
2021 ("Deep RL at the Edge of the Statistical Precipice"). It measures learning; ``steel-envs bench`` measures speed.

``steel-envs compare --algo ppo --suite classic --seeds 5 --out DIR`` does, for every (algorithm, ID, seed ``k``):

1. trains the algorithm with the task's settings for the task's env-step budget (``benchmark.env_steps``, or
   ``--env-steps``; PPO runs whole iterations, so it rounds the budget up to the next one) into
   ``DIR/<algo>/<Name>/seed<k>/``, which holds ``config.json`` (the run's settings, the command it equals, package
   versions, the machine's speed) and ``train/`` (the run's logs and checkpoints). A run folder holds a ``lock`` file
   while a process works in it; another process passes it by with one line (so several processes can share a
   comparison) and ends without a report. A run whose ``result.json`` exists is finished and skipped, so a stopped
   comparison resumes where it stopped (an unfinished run starts again from nothing). ``result.json`` records the
   run's settings (budget, training worlds, a digest of the algorithm's hyper-parameters, evaluation episodes and
   worlds): a finished run asked for again with other settings, or made with another declaration of the task, is
   refused before anything trains, naming its folder;
2. evaluates the final policy as ``steel-envs evaluate`` does: the policy's mean action, ``--episodes`` (100)
   counted episodes over ``--eval-envs`` (16) worlds, env seed ``k``, the task's randomization as it trains; reads
   the task's score from it (``benchmark.score``) and normalizes it (0 random, 1 expert:
   :class:`steel_envs.benchmark.BenchmarkSpec`) into ``result.json``;
3. aggregates every algorithm's normalized scores (runs x IDs) with ``rliable``
   (:mod:`steel_envs.training.compare_stats`): IQM, median, mean and optimality gap with stratified bootstrap 95 %
   intervals, performance profiles, and the probability of improvement of every pair of algorithms; writes
   ``DIR/compare.json``, ``DIR/compare.md`` (the aggregate table and one table per ID, with the env-steps each
   algorithm trained) and ``DIR/aggregates.png``, ``DIR/profiles.png``, ``DIR/improvement.png``. The report covers
   exactly the runs asked for (seeds ``0 .. --seeds - 1``), whatever else ``DIR`` holds.

``--report`` rebuilds step 3 from the runs saved under ``DIR`` without training: those of ``--algo``, ``--suite`` and
seeds ``0 .. --seeds - 1`` when given, else every run found. Refused in one line: an unknown suite, algorithm, device
or ID (or an ID without its namespace), an ID that declares no benchmark, and a report over runs that do not compare:
runs of one ID with different budgets, evaluations or task declarations (a changed task or anchors:
``result.json``'s ``task_fingerprint``), of one algorithm and ID with different training worlds or hyper-parameters,
a normalized score
that the installed anchors do not give from the run's score, a ``result.json`` unreadable, incomplete, non-finite or
in a folder that is not its record's, or a missing seed (every algorithm must have the same seeds of every ID).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import shutil
import signal
import sys
import time

from .compare_runs import Run, RunBusy, load_results, read_result, run_folder, run_lock, run_settings, settings_mismatch

__all__ = ["ALGORITHMS", "main", "resolve_ids"]

ALGORITHMS = ("ppo", "sac")
"""The algorithms ``--algo`` accepts: ``ppo`` (rsl-rl-lib, as ``steel-envs train``, the task's ``train_config``) and
``sac`` (stable-baselines3, :mod:`steel_envs.training.sac`, the task's ``sac_config``)."""

_VERSIONED = ("steel-envs", "newton", "warp-lang", "torch", "gymnasium", "rsl-rl-lib", "rliable")


_RUN_SETTINGS = {"env_steps": None, "num_envs": None, "episodes": 100, "eval_envs": 16, "device": "cpu"}
"""Options that set how runs are made, with their defaults (None: each task's own); ``--report`` refuses them."""


class Stopped(Exception):
    """The comparison was stopped by a signal (its name: ``Ctrl-C``, ``SIGTERM``)."""


def _stopped_by(e: BaseException) -> str:
    """What stopped the comparison, as :func:`steel_envs.cli_common.stopped_by_ctrl_c` names it."""
    return str(e) if isinstance(e, Stopped) else "Ctrl-C"


def _versions() -> dict[str, str | None]:
    from importlib import metadata

    found: dict[str, str | None] = {}
    for name in _VERSIONED:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def _train_ppo(run: Run, a: argparse.Namespace) -> tuple[str, dict]:
    """Train PPO for ``run``; return the final checkpoint and what the run measured."""
    from steel_envs.training.train import train
    from steel_envs.training.train_args import TrainArgs

    import steel_envs

    ppo = dataclasses.replace(steel_envs.task_class(run.env_id).train_config, num_envs=run.settings["train_worlds"])
    # The whole budget, whatever the return: a target that stops one algorithm early would give it fewer env-steps.
    iterations = max(1, math.ceil(run.env_steps / (ppo.num_envs * ppo.num_steps_per_env)))
    ppo = dataclasses.replace(ppo, max_iterations=iterations, target_return=None)
    log_dir = os.path.join(run.folder, "train")
    r = train(
        TrainArgs(
            env_id=run.env_id, ppo=ppo, seed=run.seed, device=a.device, shards=a.shards, log_dir=log_dir, progress=False
        )
    )
    if r.stop_signal is not None:
        raise Stopped("Ctrl-C" if r.stop_signal == signal.SIGINT else signal.Signals(r.stop_signal).name)
    command = (
        f"steel-envs train {run.env_id} --seed {run.seed} --max-iterations {iterations} --num-envs {ppo.num_envs} "
        f"--target-return None --shards {a.shards} --device {a.device} --log-dir {log_dir}"
    )
    info = {"env_steps": r.env_steps, "iterations": r.iterations, "seconds": r.seconds, "command": command}
    info["hyper_parameters"] = dataclasses.asdict(ppo)
    return r.checkpoint, info


def _train_sac(run: Run, a: argparse.Namespace) -> tuple[str, dict]:
    """Train SAC for ``run``; return the exported policy and what the run measured."""
    from steel_envs.training.sac import train_sac

    import steel_envs

    config = dataclasses.replace(steel_envs.task_class(run.env_id).sac_config, num_envs=run.settings["train_worlds"])
    out = os.path.join(run.folder, "train")
    r = train_sac(run.env_id, env_steps=run.env_steps, seed=run.seed, out_dir=out, device=a.device, config=config)
    command = (
        f"python -m steel_envs.training.sac {run.env_id} --env-steps {run.env_steps} --seed {run.seed} "
        f"--num-envs {config.num_envs} --device {a.device} --out {out}"
    )
    info = {"env_steps": r.env_steps, "seconds": r.seconds, "command": command, "hyper_parameters": r.config}
    return r.policy, info


_TRAINERS = {"ppo": _train_ppo, "sac": _train_sac}


def read_score(summary, spec) -> float:
    """The task's benchmark score (``spec.score``) of an evaluation's :class:`PolicySummary`.

    Raises:
        ValueError: If the evaluation lacks it (a success rate of a task without success, an unknown metric).
    """
    if spec.score == "return":
        return float(summary.mean_return)
    value = summary.success_rate if spec.score == "success_rate" else summary.metrics.get(spec.score, (None,))[0]
    if value is None:
        raise ValueError(f"benchmark.score: the evaluation has no {spec.score!r}")
    return float(value)


def _do_run(run: Run, a: argparse.Namespace, speed: dict | None) -> dict:
    """Train and evaluate one run in its folder (locked); write and return its ``result.json``."""
    from steel_envs.training.evaluate import evaluate

    from steel_envs.benchmark import task_benchmark

    from .compare_report import task_fingerprint

    spec = task_benchmark(run.env_id)
    # An unfinished run (stopped, or its process died) starts again from nothing.
    shutil.rmtree(os.path.join(run.folder, "train"), ignore_errors=True)
    config = {
        "algo": run.algo,
        "env_id": run.env_id,
        "seed": run.seed,
        "budget_env_steps": run.env_steps,
        "task_fingerprint": task_fingerprint(run.env_id),
        "settings": run.settings,
        "versions": _versions(),
        "machine_speed": speed,
        "device": a.device,
    }
    with open(os.path.join(run.folder, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    checkpoint, trained = _TRAINERS[run.algo](run, a)
    config.update(trained)
    with open(os.path.join(run.folder, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    start = time.perf_counter()
    result = evaluate(
        run.env_id,
        [checkpoint],
        episodes=run.settings["eval_episodes"],
        num_envs=run.settings["eval_worlds"],
        seeds=(run.seed,),
        device=a.device,
        progress=False,
    )
    summary = result.summaries[0]
    score = read_score(summary, spec)
    record = {
        **{k: config[k] for k in ("algo", "env_id", "seed", "budget_env_steps", "task_fingerprint", "settings")},
        "env_steps": trained["env_steps"],
        "train_seconds": trained["seconds"],
        "eval_seconds": time.perf_counter() - start,
        "checkpoint": os.path.relpath(checkpoint, run.folder),
        "score_name": spec.score,
        "score": score,
        "normalized": spec.normalize(score),
        "episodes": summary.episodes,
        "mean_return": summary.mean_return,
        "success_rate": summary.success_rate,
        "metrics": {k: v[0] for k, v in summary.metrics.items()},
    }
    with open(os.path.join(run.folder, "result.json.tmp"), "w") as f:
        json.dump(record, f, indent=1)
    os.replace(os.path.join(run.folder, "result.json.tmp"), os.path.join(run.folder, "result.json"))
    return record


def resolve_ids(suite: str) -> list[str]:
    """The IDs of ``--suite``: a suite name, ``all``, or comma-separated IDs (each must declare a benchmark).

    Raises:
        ValueError: On an unknown suite, or an ID without a benchmark declaration.
        gymnasium.error.UnregisteredEnv: On an unknown ID (naming the closest).
    """
    from steel_envs.benchmark import SUITES, suite_ids, task_benchmark

    if suite in (*SUITES, "all"):
        return suite_ids(suite)
    if "/" not in suite:
        if suite.split(",")[0].rpartition("-v")[2].isdigit():  # an ID without its namespace
            named = ",".join(f"steel_envs/{name.strip()}" for name in suite.split(","))
            raise ValueError(f"--suite: {suite!r} is not a suite; IDs take their namespace: {named}")
        return suite_ids(suite)  # not an ID: suite_ids names the suites
    ids = [s.strip() for s in suite.split(",") if s.strip()]
    for env_id in ids:
        task_benchmark(env_id)
    return list(dict.fromkeys(ids))


def _parser() -> argparse.ArgumentParser:
    from steel_envs.sharding import shards_arg

    p = argparse.ArgumentParser(
        prog="steel-envs compare", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--algo", action="append", default=None, help=f"an algorithm ({', '.join(ALGORITHMS)}); repeat")
    p.add_argument(
        "--suite",
        default=None,
        help="classic, locomotion, manipulation, deformable, all, or comma-separated IDs (steel_envs/...)",
    )
    p.add_argument(
        "--seeds",
        type=int,
        default=None,
        help="seeds 0..N-1 per (algorithm, ID) (default 5; with --report, default: the seeds found, alike for all)",
    )
    p.add_argument("--env-steps", type=int, default=None, help="budget of every run; default each task's own")
    p.add_argument("--out", required=True, help="folder of the runs and the report")
    p.add_argument("--report", action="store_true", help="rebuild the report from the runs under --out; no training")
    p.add_argument("--episodes", type=int, default=None, help="counted evaluation episodes per run (default 100)")
    p.add_argument("--eval-envs", type=int, default=None, help="worlds of each evaluation (default 16)")
    p.add_argument("--num-envs", type=int, default=None, help="training worlds of every run; default each task's own")
    p.add_argument("--device", default=None, help="Warp and torch device of the runs (default cpu)")
    p.add_argument("--shards", type=shards_arg, default="auto", help="training processes, or 'auto' (default)")
    p.add_argument("--reps", type=int, default=2000, help="bootstrap resamples of the report (default 2000)")
    return p


def _check_args(p: argparse.ArgumentParser, a: argparse.Namespace) -> None:
    """Refuse bad arguments in one line (argparse's error, exit status 2) before anything runs."""
    for algo in a.algo or []:
        if algo not in ALGORITHMS:
            p.error(f"--algo: unknown algorithm {algo!r}; expected one of {list(ALGORITHMS)}")
    if not a.report and (not a.algo or a.suite is None):
        p.error("--algo and --suite: expected both (or --report, which reads the runs under --out)")
    for name in ("seeds", "episodes", "eval_envs", "reps", "env_steps", "num_envs"):
        value = getattr(a, name)
        if value is not None and value < 1:
            p.error(f"--{name.replace('_', '-')}: expected an int >= 1, got {value}")
    if not a.report:
        import warp as wp

        try:  # here, not when the first run starts training
            wp.get_device(a.device or "cpu")
        except Exception as e:
            p.error(f"--device: expected 'cpu' or an available 'cuda:N', got {a.device!r} ({e})")


def _plan(a: argparse.Namespace, ids: list[str]) -> tuple[list[Run], list[Run]]:
    """Every run of the call, in order, and those of them not finished yet.

    Raises:
        ValueError: Naming the folders, when finished runs among them were made with other settings (they would be
            reused, or their report refused after new training).
    """
    from steel_envs.benchmark import task_benchmark

    from .compare_report import task_fingerprint

    runs = []
    for algo in a.algo:
        for env_id in ids:
            budget = a.env_steps or task_benchmark(env_id).env_steps
            settings = run_settings(algo, env_id, budget, a.num_envs, a.episodes, a.eval_envs)
            runs += [Run(algo, env_id, k, budget, run_folder(a.out, algo, env_id, k), settings) for k in range(a.seeds)]
    differ, todo = [], []
    prints = {env_id: task_fingerprint(env_id) for env_id in ids}
    for run in runs:
        record = read_result(run.folder)
        if record is None:
            todo.append(run)
        mismatch = record and settings_mismatch(record, run.settings, prints[run.env_id])
        if mismatch:
            differ.append(f"{run.folder}: {mismatch}")
    if differ:
        more = f" and {len(differ) - 3} more" if len(differ) > 3 else ""
        raise ValueError(
            f"{len(differ)} finished run(s) under --out were made with other settings or another task declaration "
            f"({'; '.join(differ[:3])}{more}); ask with their settings, delete those folders to run them again, or "
            "use another --out"
        )
    return runs, todo


def _train_all(runs: list[Run], todo: list[Run], a: argparse.Namespace) -> int | None:
    """Train and evaluate ``todo``, the unfinished ``runs``; None when all are finished, else the exit status."""
    from steel_envs.training.benchmarks.reference import machine_speed

    print(
        f"compare: {len(runs)} runs, {len(runs) - len(todo)} finished before (skipped), {len(todo)} to do", flush=True
    )
    busy: list[str] = []
    i = -1
    try:
        speed = machine_speed() if todo else None
        for i, run in enumerate(todo):
            print(
                f"[{i + 1}/{len(todo)}] {run.algo} {run.env_id} seed {run.seed}: {run.env_steps:,} env-steps",
                flush=True,
            )
            try:
                with run_lock(run.folder):
                    record = read_result(run.folder)
                    if record is not None:  # finished meanwhile by another process
                        print("    finished meanwhile by another process", flush=True)
                        if record["settings"] != run.settings:
                            raise ValueError(f"{run.folder}: finished meanwhile by another process with other settings")
                        continue
                    record = _do_run(run, a, speed)
            except RunBusy as e:  # another process works on it: go on with the others
                print(f"steel-envs compare: {e}", file=sys.stderr)
                busy.append(run.folder)
                continue
            print(
                f"    {record['score_name']} {record['score']:.4g} (normalized {record['normalized']:.3f})", flush=True
            )
    except (KeyboardInterrupt, Stopped) as e:
        from steel_envs.cli_common import stopped_by_ctrl_c

        by = _stopped_by(e)
        if i < 0:
            return stopped_by_ctrl_c("compare", saved="no run started", when="while measuring the machine", by=by)
        kept = f"the finished runs are kept under {a.out}; {todo[i].folder} starts again on the next call"
        return stopped_by_ctrl_c("compare", saved=kept, when=f"in run {i + 1} of {len(todo)}", by=by)
    if busy:
        print(
            f"steel-envs compare: {len(busy)} run(s) held by other processes; no report (--report when they end)",
            file=sys.stderr,
        )
        return 2
    return None


def _raise_stopped(signum: int, frame: object) -> None:
    raise Stopped(signal.Signals(signum).name)


def _check_report_args(p: argparse.ArgumentParser, a: argparse.Namespace) -> None:
    """``--report`` trains nothing: refuse the training and evaluation settings, which it would ignore."""
    given = [f"--{name.replace('_', '-')}" for name in _RUN_SETTINGS if getattr(a, name) is not None]
    given += ["--shards"] if a.shards != "auto" else []
    if given:
        p.error(f"{', '.join(given)}: settings of the runs; --report reads the runs under --out as they were made")


def _missing_asked(a: argparse.Namespace, ids: list[str] | None, results: list[dict]) -> str | None:
    """The asked algorithms (``--algo``) and IDs (``--suite``) of which ``results`` hold no run, said in one line."""
    missing = [algo for algo in a.algo or [] if all(r["algo"] != algo for r in results)]
    missing += [env_id for env_id in ids or [] if all(r["env_id"] != env_id for r in results)]
    return f"report: no finished run of {', '.join(missing)} under {a.out}" if missing else None


def main(argv: list[str] | None = None) -> int:
    """``steel-envs compare --algo A [--algo B] --suite S --seeds K --out DIR [--report]``; see the module doc."""
    p = _parser()
    a = p.parse_args(argv)
    _check_args(p, a)
    try:
        ids = resolve_ids(a.suite) if a.suite is not None else None
    except ValueError as e:
        p.error(str(e))
    a.algo = list(dict.fromkeys(a.algo)) if a.algo else a.algo
    if a.report:
        _check_report_args(p, a)
    previous = signal.signal(signal.SIGTERM, _raise_stopped)
    try:
        return _run(p, a, ids)
    except (KeyboardInterrupt, Stopped) as e:  # in the report: the runs are all saved
        from steel_envs.cli_common import stopped_by_ctrl_c

        by = _stopped_by(e)
        kept = f"the runs are kept under {a.out}; --report --out {a.out} writes the report"
        return stopped_by_ctrl_c("compare", saved=kept, when="while writing the report", by=by)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run(p: argparse.ArgumentParser, a: argparse.Namespace, ids: list[str] | None) -> int:
    """Train what is missing (unless ``--report``), then write and print the report; return the exit status."""
    from .compare_report import build_report

    try:
        if a.report:
            seeds = range(a.seeds) if a.seeds is not None else None
            results = load_results(a.out, a.algo, ids, seeds)
            missing = _missing_asked(a, ids, results)
            if missing:
                raise ValueError(missing)
        else:
            try:  # before any training: a folder that cannot be written costs nothing
                os.makedirs(a.out, exist_ok=True)
            except OSError as e:
                p.error(f"--out: cannot create the folder {a.out!r} ({e.strerror or e})")
            for name, default in _RUN_SETTINGS.items():
                setattr(a, name, default if getattr(a, name) is None else getattr(a, name))
            a.seeds = 5 if a.seeds is None else a.seeds
            runs, todo = _plan(a, ids)
            status = _train_all(runs, todo, a)
            if status is not None:
                return status
            results = [read_result(r.folder) for r in runs]
        report = build_report(a.out, results, reps=a.reps, seeds=a.seeds)
    except ValueError as e:
        print(f"steel-envs compare: {e}", file=sys.stderr)
        return 2
    with open(os.path.join(a.out, "compare.md")) as f:
        print(f.read())
    print(
        f"wrote {a.out}/compare.json, compare.md, aggregates.png, profiles.png"
        + (", improvement.png" if report["probability_of_improvement"] else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
