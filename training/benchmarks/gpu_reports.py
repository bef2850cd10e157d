"""The GPU check's reports: the figures of the tests stage (from pytest's JUnit XML), of a training stage (from the
final line of ``steel-envs train`` and its TensorBoard scalars), and the combined ``summary.txt`` / ``summary.json``
of a results folder.

Each reads what an earlier stage of ``training/benchmarks/gpu_check.sh`` wrote, so that a stage that was killed or
skipped still leaves a readable summary: a missing file is reported, never an error.
"""

from __future__ import annotations

import glob
import json
import os
import re
import xml.etree.ElementTree as ET
from typing import Any

__all__ = ["summary", "tests_summary", "train_summary"]

_OUTCOMES = ("passed", "failed", "error", "skipped")
_FINAL_LINE = re.compile(
    r"(\d+) iterations, (\d+) env-steps in ([\d.]+) s \((\d+) env-steps/s\), mean return \(last 100 episodes\) (\S+)"
)
"""The line ``steel-envs train`` prints at the end of a run (training/train.py ``main``)."""
CURVE_POINTS = 12
"""Points of a training stage's return curve kept in its summary (evenly spaced over the logged iterations)."""


def _read(path: str) -> str:
    if not os.path.exists(path):
        return ""
    with open(path) as f:
        return f.read()


def _load(path: str) -> Any:
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def tests_summary(xml: str, log: str, out: str) -> dict[str, Any]:
    """The tests stage's figures: per test its outcome and seconds, the counts per outcome, and the messages of
    failed, errored and skipped tests (400 characters each). Without the JUnit XML (pytest killed before writing
    it) the counts come from the log's summary line.

    Args:
        xml: pytest's ``--junitxml`` file.
        log: The stage's log (pytest's output).
        out: Path of the JSON file written.

    Returns:
        The summary written (``tests``: a list of {name, outcome, seconds [s]}; ``passed`` ... ``skipped``: counts).
    """
    summary: dict[str, Any] = {"tests": []}
    if os.path.exists(xml):
        tags = {"failure": "failed", "error": "error", "skipped": "skipped"}
        for case in ET.parse(xml).getroot().iter("testcase"):
            outcome = "passed"
            for child in case:
                if child.tag in tags:
                    outcome = tags[child.tag]
                    summary.setdefault("messages", {})[case.get("name")] = (child.get("message") or "")[:400]
            seconds = float(case.get("time", 0))
            summary["tests"].append({"name": case.get("name"), "outcome": outcome, "seconds": seconds})
        for key in _OUTCOMES:
            summary[key] = sum(t["outcome"] == key for t in summary["tests"])
    else:
        summary["note"] = "no JUnit XML (pytest killed?); counts from the log's last summary line"
        for n, key in re.findall(r"(\d+) (passed|failed|error|errors|skipped)", _read(log)):
            summary[key.rstrip("s") if key == "errors" else key] = int(n)
    with open(out, "w") as f:
        json.dump(summary, f, indent=2)
    print("tests: " + ", ".join(f"{summary.get(k, 0)} {k}" for k in _OUTCOMES))
    for t in sorted((t for t in summary["tests"] if t["seconds"] >= 0.05), key=lambda t: -t["seconds"])[:8]:
        print(f"  {t['seconds']:7.1f} s  {t['outcome']:7s} {t['name']}")
    return summary


def _tensorboard_figures(run_dir: str) -> dict[str, Any]:
    """The last value of every scalar of the run and its return curve (the first ``*mean_reward`` tag, else the
    first tag naming a reward) at :data:`CURVE_POINTS` iterations: {iteration, seconds [s] since the first point,
    value}."""
    try:
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

        acc = EventAccumulator(run_dir, size_guidance={"scalars": 0})
        acc.Reload()
        tags = acc.Tags()["scalars"]
        figures: dict[str, Any] = {"last": {tag: acc.Scalars(tag)[-1].value for tag in tags}}
        reward = next((t for t in tags if t.endswith("mean_reward")), None)
        reward = reward or next((t for t in tags if "reward" in t.lower()), None)
        if reward:
            points = acc.Scalars(reward)
            t0 = points[0].wall_time
            pick = sorted({round(i * (len(points) - 1) / (CURVE_POINTS - 1)) for i in range(CURVE_POINTS)})
            figures["curve_tag"] = reward
            figures["curve"] = [
                {"iteration": points[i].step, "seconds": round(points[i].wall_time - t0, 1), "value": points[i].value}
                for i in pick
            ]
        return figures
    except Exception as e:  # a missing tensorboard or a torn event file leaves the final line's figures
        return {"tensorboard": f"not read: {type(e).__name__}: {e}"}


def train_summary(log: str, log_dir: str, out: str, stage_rc: int) -> dict[str, Any]:
    """A training stage's figures: from its log, the final line of ``steel-envs train`` (iterations, env-steps,
    seconds [s], env-steps/s with learning, mean return of the last 100 episodes, None for NaN); from the newest
    TensorBoard run under ``log_dir``, every scalar's last value and the return curve.

    Args:
        log: The stage's log.
        log_dir: The ``--log-dir`` the run was given.
        out: Path of the JSON file written.
        stage_rc: The stage's exit status, recorded as ``stage_rc``.

    Returns:
        The summary written; without a final line (the run did not finish) it lacks ``env_steps``.
    """
    summary: dict[str, Any] = {"stage_rc": stage_rc}
    m = _FINAL_LINE.search(_read(log))
    if m:
        summary.update(
            iterations=int(m[1]),
            env_steps=int(m[2]),
            seconds=float(m[3]),
            env_steps_per_s=int(m[4]),
            mean_return_last_100=float(m[5]) if m[5] != "nan" else None,
        )
    pattern = os.path.join(log_dir, "**", "events.out.tfevents.*")
    events = sorted(glob.glob(pattern, recursive=True), key=os.path.getmtime)
    if events:
        summary["run_dir"] = os.path.dirname(events[-1])
        summary.update(_tensorboard_figures(summary["run_dir"]))
    with open(out, "w") as f:
        json.dump(summary, f, indent=2)
    for k in ("iterations", "env_steps", "seconds", "env_steps_per_s", "mean_return_last_100", "run_dir"):
        if k in summary:
            print(f"  {k:22s} {summary[k]}")
    for p in summary.get("curve", []):
        print(f"  {summary['curve_tag']} at iteration {p['iteration']:5d} ({p['seconds']:6.1f} s): {p['value']:10.2f}")
    for tag, value in sorted(summary.get("last", {}).items()):
        print(f"  last {tag:40s} {value:12.4g}")
    return summary


def _stages(results: str) -> list[dict[str, Any]]:
    """The rows of ``stages.tsv``: name, status, rc, wall time [s], limit [s], Warp kernel cache growth [MB]."""
    keys = ("stage", "status", "rc", "wall_s", "limit_s", "kernel_cache_mb")
    lines = _read(os.path.join(results, "stages.tsv")).splitlines()
    rows = [dict(zip(keys, line.split("\t"), strict=True)) for line in lines]
    for row in rows:
        row["wall_s"] = float(row["wall_s"])
    return rows


def _tests_lines(tests: dict[str, Any]) -> list[str]:
    lines = ["", "a. tests: " + ", ".join(f"{tests.get(k, 0)} {k}" for k in _OUTCOMES)]
    for t in tests.get("tests", []):
        if t["outcome"] in ("failed", "error"):
            lines.append(f"  {t['outcome']}: {t['name']}: {tests.get('messages', {}).get(t['name'], '')[:200]}")
    slow = sorted((t for t in tests.get("tests", []) if t["seconds"] >= 0.05), key=lambda t: -t["seconds"])[:5]
    return lines + [f"  slowest: {t['name']} {t['seconds']:.1f} s" for t in slow]


def _train_lines(train: dict[str, Any]) -> list[str]:
    lines = ["", "c. train steel_envs/AntRun-v0:"]
    if "env_steps" in train:
        lines.append(
            f"  {train['iterations']} iterations, {train['env_steps']:,} env-steps in {train['seconds']} s "
            f"({train['env_steps_per_s']:,} env-steps/s incl. learning), mean return (last 100) "
            f"{train['mean_return_last_100']}"
        )
    else:
        lines.append("  no final line (the run did not finish)")
    return lines + [
        f"  {train['curve_tag']} @ it {p['iteration']} ({p['seconds']} s): {p['value']:.2f}"
        for p in train.get("curve", [])
    ]


def _learn_lines(learn: dict[str, dict[str, Any]]) -> list[str]:
    head = "e. learn (steel-envs train of every ID; env-steps/s with learning, mean return of the last 100 episodes):"
    lines = ["", head]
    for name, t in learn.items():
        if "env_steps" not in t:
            lines.append(f"  {name:24s} no final line (the run did not finish or was skipped)")
            continue
        curve = t.get("curve", [])
        start = f"{curve[0]['value']:.1f} -> " if curve else ""
        lines.append(
            f"  {name:24s} {t['env_steps']:>13,} env-steps in {t['seconds']:6.1f} s ({t['env_steps_per_s']:>10,}/s), "
            f"mean return {start}{t['mean_return_last_100']}"
        )
    return lines


def _curve_lines(curves: dict[str, dict[str, Any] | None]) -> list[str]:
    lines = ["", "f. --learn (one seed of the task's PPO config; docs/gpu/<ID>.json):"]
    for name, c in curves.items():
        if not c:
            lines.append(f"  {name:24s} no file (the run did not finish or was skipped)")
            continue
        start = f"{c['curve'][0][2]:.1f} -> " if c["curve"] else ""
        lines.append(
            f"  {name:24s} {c['num_envs']} worlds on {c['device_name']}: {c['env_steps']:,} env-steps in "
            f"{c['seconds']:.1f} s ({c['env_steps_per_s']:,.0f}/s), mean return {start}{c['mean_return']}"
        )
    return lines


def _pixel_lines(pixels: dict[str, Any]) -> list[str]:
    lines = ["", f"d. pixels ({pixels['worlds']} worlds, {pixels['size']}x{pixels['size']} rgb vs state):"]
    for r in pixels["results"]:
        if r.get("status") != "ok":
            lines.append(f"  {r['env_id']} {r['obs_mode']}: {r['status']}")
            continue
        frames = ""
        if "frames_per_s" in r:
            frames = f", {r['frames_per_s']:,.0f} frames/s, {r['megapixels_per_s']:,.1f} Mpx/s"
        lines.append(f"  {r['env_id']:32s} {r['obs_mode']:5s} {r['env_steps_per_s']:12,.0f} env-steps/s{frames}")
    return lines


def summary(results: str, device: str, budget: float, total: float) -> str:
    """Combine a results folder's stage files into ``summary.txt`` (printed) and ``summary.json``.

    Args:
        results: The results folder (``stages.tsv``, ``preflight.json`` and each stage's ``*_summary.json``).
        device: The device the check ran on.
        budget: The check's time budget [s].
        total: Seconds the check has taken so far [s].

    Returns:
        The text of ``summary.txt``.
    """
    stages = _stages(results)
    files = {k: _load(os.path.join(results, f"{k}_summary.json")) for k in ("tests", "bench", "train", "pixels")}
    pre = _load(os.path.join(results, "preflight.json")) or {}
    learn = {
        s["stage"][6:]: _load(os.path.join(results, f"{s['stage']}_summary.json")) or {}
        for s in stages
        if s["stage"].startswith("learn_")
    }
    curves = {
        s["stage"][6:]: _load(os.path.join(results, f"{s['stage']}.json"))
        for s in stages
        if s["stage"].startswith("curve_")
    }
    lines = [f"steel-envs GPU check on {device}: {total:g} s of a {budget:g} s budget"]
    lines.append(
        f"  {pre.get('gpu', 'no GPU')} | driver {pre.get('cuda_driver')} toolkit {pre.get('cuda_toolkit')} | "
        f"conditional graphs {pre.get('conditional_graphs')} | torch {pre.get('torch')} "
        f"(CUDA {pre.get('torch_cuda_build')}) | warp {pre.get('warp')} | newton {pre.get('newton')}"
    )
    lines.append("")
    for s in stages:
        lines.append(
            f"  {s['stage']:10s} {s['status']:10s} rc {s['rc']:>3s}  {s['wall_s']:7.1f} s  (limit {s['limit_s']} s; "
            f"Warp kernel cache +{s['kernel_cache_mb']} MB)"
        )
    if pre.get("problems"):
        lines += ["", "preflight problems:", *[f"  {p}" for p in pre["problems"]]]
    if files["tests"]:
        lines += _tests_lines(files["tests"])
    if files["bench"] is not None:
        lines += ["", f"b. bench ({files['bench']['steps']} steps, random actions, env-steps/s):"]
        lines += ["  " + line for line in _read(os.path.join(results, "bench_summary.txt")).splitlines()]
    if files["train"] is not None:
        lines += _train_lines(files["train"])
    lines += _learn_lines(learn) if learn else []
    lines += _pixel_lines(files["pixels"]) if files["pixels"] is not None else []
    lines += _curve_lines(curves) if curves else []
    text = "\n".join(lines) + "\n"
    with open(os.path.join(results, "summary.txt"), "w") as f:
        f.write(text)
    record = {"device": device, "budget_s": float(budget), "total_s": float(total), "stages": stages, "preflight": pre}
    record.update(files, learn=learn, curves=curves)
    with open(os.path.join(results, "summary.json"), "w") as f:
        json.dump(record, f, indent=2, default=str)
    print(text)
    return text
