"""The generated parts of the CLI reference (every parser's ``--help``), of the solver options page (the option
declarations of :mod:`steel_envs.solver_options`) and of the results page (the JSON files under ``docs/``)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import typing
from pathlib import Path
from typing import Any

from markdown_tables import attribute_docs, code, fmt_value, table
from steel_envs.training.evaluate import PHYSICS_END_BOUND, physics_end_causes, physics_end_fraction

__all__ = ["benchmark_table", "cli_reference", "results_tables", "solver_options_reference"]

_COMMANDS = (
    "rollout",
    "record",
    "view",
    "list",
    "doctor",
    "train",
    "play",
    "export",
    "sim2sim",
    "evaluate",
    "compare",
    "bench",
)


def _help(argv: list[str]) -> str:
    """What ``steel-envs <argv>`` prints, run in this process (80 columns: the width of the page)."""
    from steel_envs.cli import main

    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "80"
    out = io.StringIO()
    try:
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(io.StringIO()),
            contextlib.suppress(SystemExit),
        ):
            main(argv)
    finally:
        if saved is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = saved
    return out.getvalue().rstrip()


def cli_reference() -> str:
    """Markdown: ``steel-envs --help`` and each command's ``--help``, as the installed parsers print them."""
    parts = [f"## `steel-envs`\n\n```text\n{_help(['--help'])}\n```"]
    for command in _COMMANDS:
        text = _help([command, "--help"])
        if "`" * 3 in text:
            raise ValueError(f"steel-envs {command} --help: holds a code fence, which the page cannot quote")
        parts.append(f"## `steel-envs {command}`\n\n```text\n{text}\n```")
    return "\n\n".join(parts) + "\n"


def solver_options_reference() -> str:
    """Markdown: one table per solver (a MyST list-table, so that the notes wrap in three columns) of every option
    with its type, Newton's default, its valid range and the reason (``ranges()``), what it is (the field's
    docstring) and when to change it (``when_to_change()``)."""
    import dataclasses

    from steel_envs.solver_options import SteelSolverOptions, VBDSolverOptions

    parts = []
    for cls, solver in ((SteelSolverOptions, "SolverSteel"), (VBDSolverOptions, "SolverVBD")):
        defaults, docs, ranges, when = cls(), attribute_docs(cls), cls.ranges(), cls.when_to_change()
        hints = typing.get_type_hints(cls, globalns=vars(sys.modules[cls.__module__]))
        items = []
        for f in dataclasses.fields(cls):
            valid = ranges.get(f.name)
            values = f"{valid.describe()}: {valid.reason}" if valid else _values(hints[f.name])
            default = fmt_value(getattr(defaults, f.name))
            items.append(
                f"* - {code(f.name)}\n\n    {code(_type_name(hints[f.name]))} = {code(default)}\n"
                f"  - {_line(values)}\n"
                f"  - {_line(docs.get(f.name, ''))}\n\n    **When to change:** {_line(when[f.name])}"
            )
        parts.append(
            f"## {solver}: `{cls.__name__}`\n\n{len(items)} options, in the order of `{solver}.__init__`.\n\n"
            "```{list-table}\n:header-rows: 1\n:widths: 3 3 6\n:class: solver-options\n\n"
            "* - option, type = default\n  - valid values\n  - what it is, and when to change it\n"
            + "\n".join(items)
            + "\n```"
        )
    return "\n\n".join(parts) + "\n"


def _line(text: str) -> str:
    """``text`` on one line (a list-table cell's paragraph)."""
    return " ".join(text.split())


def _values(hint: Any) -> str:
    """The valid values of an option without a declared numeric range: its type's."""
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    none = " or None" if type(None) in typing.get_args(hint) else ""
    if hint is bool or args == [bool]:
        return "True or False" + none
    if typing.get_origin(hint) is typing.Literal:
        return "one of " + ", ".join(code(repr(a)) for a in args)
    return "any value of its type"


def _type_name(hint: Any) -> str:
    """A type hint as a user reads it: ``int``, ``float | None``, ``Literal['serial', 'colored']``."""
    text = getattr(hint, "__name__", None) if isinstance(hint, type) else None
    text = text or str(hint)
    return text.replace("typing.", "").replace("warp._src.context.", "wp.").replace("NoneType", "None")


def results_tables(docs_dir: Path, env_ids: tuple[str, ...]) -> str:
    """Markdown: the reference results of every ID (``docs/reference/<Name>.json``), the throughput tables
    (``docs/bench_*.json``) and the soak runs (``docs/soak_*.json``)."""
    parts = [_reference_table(docs_dir, env_ids), *_bench_tables(docs_dir), _soak_table(docs_dir)]
    return "\n\n".join(part for part in parts if part) + "\n"


def _soak_table(docs_dir: Path) -> str:
    rows = []
    for path in sorted(docs_dir.glob("soak_*.json")):
        r = json.loads(path.read_text())
        rows.append(
            [
                code(r["command"]),
                f"{r['env_steps']:,}",
                f"{sum(r['faults'].values())}",
                f"{len(r['missed'])}",
                f"{r['worlds_lost']}",
                f"{r['rss_growth_mib']:+.1f} MiB ({100 * r['rss_growth_fraction']:+.1f} %)",
                f"{r['warp_growth_mib']:+.2f} MiB",
            ]
        )
    if not rows:
        return ""
    return (
        "## Robustness: soak runs\n\n"
        "Random actions with a fault injected every 50 control steps (a NaN in a world's joint velocities, a NaN and "
        "an infinity in its actions, a forced constraint overflow, a masked reset of a quarter of the worlds): each "
        "must end its world's episode in the same step with its cause, and nothing non-finite may reach the "
        "observations, rewards or `final_obs`. A world is lost if an episode outlives its time limit. Memory growth "
        "is measured from 10 % to 100 % of the run (`steel_envs.training.benchmarks.soak`).\n\n"
        + table(["command", "env-steps", "faults", "escaped", "lost", "RSS growth", "Warp growth"], rows, "lrrrrrr")
    )


def _estimate(e: dict[str, Any]) -> str:
    low, high = e["mean_return_ci"]
    success = "" if e.get("success_rate") is None else f", {100 * e['success_rate']:.0f} %"
    return f"{e['mean_return']:.1f} [{low:.1f}, {high:.1f}]{success}"


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def _physics_ends(runs: list[dict[str, Any]]) -> str:
    """The largest share of a report's seeds' evaluated episodes ending by a physics cause; in bold with the seed
    and its causes above the protocol's bound."""
    shares = [(physics_end_fraction(r["evaluation"]["causes"]), r) for r in runs]
    share, worst = max(shares, key=lambda s: s[0])
    if share <= PHYSICS_END_BOUND:
        return f"{100 * share:.0f} %"
    named = ", ".join(f"{c} {100 * v:.0f} %" for c, v in physics_end_causes(worst["evaluation"]["causes"]).items())
    return f"**{100 * share:.0f} %** (seed {worst['seed']}: {named})"


def _reference_table(docs_dir: Path, env_ids: tuple[str, ...]) -> str:
    returns, runs, missing, curves = [], [], [], []
    for env_id in env_ids:
        name = env_id.split("/")[-1]
        path = docs_dir / "reference" / f"{name}.json"
        if not path.exists():
            missing.append(f"[{name}](tasks/{name}.md)")
            continue
        report = json.loads(path.read_text())
        seeds, baselines = report["runs"], report["baselines"]
        link = f"[{name}](tasks/{name}.md)"
        by_seed = {int(r["seed"]): r for r in seeds}
        returns.append(
            [
                link,
                # A report of fewer seeds (one per sitting, merged later) leaves the others' columns empty.
                *(_estimate(by_seed[k]["evaluation"]) if k in by_seed else "-" for k in range(3)),
                *(_estimate(baselines[p]) if p in baselines else "-" for p in ("random", "scripted_policy")),
                _physics_ends(seeds),
            ]
        )
        steps = [r["env_steps"] / 1e6 for r in seeds]
        seconds = [r["seconds"] for r in seeds]
        runs.append(
            [
                link,
                code(report["command"]),
                f"{min(steps):.2f}-{max(steps):.2f} M",
                f"{_duration(min(seconds))}-{_duration(max(seconds))}"
                if max(seconds) >= 90 > min(seconds)
                else _duration(max(seconds)),
                f"{seeds[0]['num_envs']} x {seeds[0]['shards']}",
                report["date"],
            ]
        )
        if (docs_dir / "reference" / f"{name}_curves.png").exists():
            curves.append(f"### {name}\n\n![training curves of {name}](reference/{name}_curves.png)")
    text = (
        "## Reference results\n\n"
        "Each ID trained with seeds 0, 1 and 2, then each seed's final policy evaluated over 100 episodes with its "
        "mean action, beside the random and scripted policies over the same protocol: mean return [95 % bootstrap "
        "CI], and the success rate where the task reports one. *Physics ends*: the largest share, over the seeds, of "
        "evaluated episodes that ended by a cause of the simulation rather than the task (a capacity overflow, a "
        f"non-finite state or action, a body past the penetration bound); the protocol bounds it at "
        f"{100 * PHYSICS_END_BOUND:.0f} %, and a share above is printed in bold with the seed and its causes.\n\n"
        + table(["ID", "seed 0", "seed 1", "seed 2", "random", "scripted", "physics ends"], returns)
        + "\n\nThe training runs (`<k>`: the seed; worlds x processes):\n\n"
        + table(["ID", "command", "env-steps per seed", "wall time", "worlds", "measured"], runs)
    )
    if missing:
        text += "\n\nNot measured yet: " + ", ".join(missing) + "."
    if curves:
        text += "\n\nMean return of the last 100 training episodes against env-steps (each seed, their mean and range):"
        text += "\n\n" + "\n\n".join(curves)
    return text


def _bench_tables(docs_dir: Path) -> list[str]:
    out = []
    for path in sorted(docs_dir.glob("bench_*.json")):
        report = json.loads(path.read_text())
        meta, rows = report.get("meta", {}), report.get("rows", [])
        body = table(
            ["env", "kind", "worlds", "env-steps/s", "physics-steps/s", "first call [s]"],
            (
                [
                    r["env_id"],
                    r["kind"],
                    r["num_envs"],
                    f"{r['env_steps_per_s']:,.0f}",
                    "-" if r.get("physics_steps_per_s") is None else f"{r['physics_steps_per_s']:,.0f}",
                    "-" if r.get("first_call_s") is None else f"{r['first_call_s']:.1f}",
                ]
                for r in rows
            ),
            "llrrrr",
        )
        device = f"{meta.get('device', '?')}, {meta.get('cpu_count', '?')} CPU cores"
        out.append(
            f"## Throughput: {code(path.name)}\n\n{code(meta.get('command', ''))} ({device}); kinds: `steel-envs` one "
            "process, `sharded-K` K processes, `bare` Newton's collision and step alone, `featherstone` the same model "
            "on SolverFeatherstone, `gymnasium-*` Gymnasium's MuJoCo peers.\n\n" + body + _profiles(report)
        )
    return out


def _profiles(report: dict[str, Any]) -> str:
    profiles = report.get("profiles") or []
    if not profiles:
        return ""
    phases = sorted({p for prof in profiles for p in prof["phases"]})
    header = ["phase", *(f"{prof['env_id'].split('/')[-1]} ({prof['step_ms']:.1f} ms per step)" for prof in profiles)]
    rows = [
        [phase, *(_share(prof, phase) for prof in profiles)]
        for phase in sorted(phases, key=lambda p: -max(prof["phases"].get(p, 0.0) for prof in profiles))
    ]
    body = table(header, rows, "l" + "r" * len(profiles))
    return "\n\nWhere an eager control step's time goes (`--profile`):\n\n" + body


def _share(profile: dict[str, Any], phase: str) -> str:
    ms = profile["phases"].get(phase)
    return "-" if ms is None else f"{ms:.1f} ms ({100 * ms / profile['step_ms']:.1f} %)"


def benchmark_table(env_ids: tuple[str, ...]) -> str:
    """Markdown: each ID's benchmark declaration (``steel-envs compare``): suite, score and its direction, the random
    and expert anchors of the normalized score and the default budget, then where each ID's anchors come from."""
    from steel_envs.benchmark import task_benchmark

    rows, notes = [], []
    for env_id in env_ids:
        spec, name = task_benchmark(env_id), env_id.split("/")[-1]
        rows.append(
            [
                f"[{name}](../tasks/{name}.md)",
                spec.suite,
                f"{code(spec.score)} ({spec.direction} is better)",
                f"{spec.random_score:.4g}",
                f"{spec.expert_score:.4g} ({spec.expert_from.replace('_', ' ')})",
                f"{spec.env_steps / 1e6:.2f} M",
            ]
        )
        notes.append(f"- **{name}**: {spec.anchors}.")
    header = ["ID", "suite", "score", "random", "expert", "budget [env-steps]"]
    return table(header, rows, "lllrrr") + "\n\nWhere the anchors come from:\n\n" + "\n".join(notes) + "\n"
