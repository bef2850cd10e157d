"""One documentation page per registered shipped ID, written from the task class and a built 1-world env.

Nothing here is written by hand per ID: the tables come from the declarations (observation blocks, reward and
termination terms, metrics, config fields, solver options, training settings), the prose from the class
docstring's sections, the reference result from ``docs/reference/<Name>.json`` and the history from the ID's
CHANGELOG sections.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
import sys
from pathlib import Path
from typing import Any

from markdown_tables import attribute_docs, code, docstring_sections, fmt_value, table

__all__ = ["changelog_sections", "task_pages"]

# Docstring sections the generated tables replace (their prose, if any, is kept under the table).
_TABLED = ("Observation space", "Privileged observations", "Metrics")
# Docstring sections placed at fixed points of the page; any other section follows "Episode end" as written.
_PLACED = ("Action space", "Rewards", "Starting state", "Episode end", *_TABLED)


def task_pages(env_ids: tuple[str, ...], docs_dir: Path) -> dict[str, str]:
    """Relative path -> Markdown of ``tasks/index.md`` and one ``tasks/<Name>.md`` per ID in ``env_ids``, and
    ``_generated/tasks.json``: each ID's solver, observation and action sizes, control dt [s] and episode steps."""
    import steel_envs

    changelog = (docs_dir.parent / "CHANGELOG.md").read_text() if (docs_dir.parent / "CHANGELOG.md").exists() else ""
    pages, rows = {}, []
    for env_id in env_ids:
        env = steel_envs.make_vec(env_id, 1, device="cpu")
        try:
            facts = _facts(env_id, env)
            pages[f"tasks/{facts['name']}.md"] = _page(facts, env, docs_dir, changelog)
        finally:
            env.close()
        rows.append(facts)
    pages["tasks/index.md"] = _index(rows)
    keys = ("id", "solver", "obs", "act", "dt", "steps")
    pages["_generated/tasks.json"] = json.dumps([{k: r[k] for k in keys} for r in rows], indent=1) + "\n"
    return pages


def _facts(env_id: str, env: Any) -> dict[str, Any]:
    """What the summary table and the index say of one task."""
    cls = type(env)
    scene = next(k for k in cls.__mro__[1:] if k.__module__.startswith("steel_envs.envs"))
    scene_doc = (sys.modules[scene.__module__].__doc__ or "").strip().split("\n\n")[0]
    scene_doc = re.sub(r"^[\w -]+ scene: ", "", scene_doc)  # "Ant scene: ``nv_ant.xml`` ..." -> "``nv_ant.xml`` ..."
    description, sections = docstring_sections(cls.__doc__ or "")
    steps = env.max_episode_steps
    return {
        "id": env_id,
        "name": env_id.split("/")[-1],
        "class": f"{cls.__module__}.{cls.__name__}",
        "scene": f"{code(scene.__name__)}: {' '.join(scene_doc.split())}",
        "solver": env.backend.name,
        "obs": env.observation_dim,
        "privileged": sum(b.width for b in env.privileged_observation_blocks()),
        "act": env.action_dim,
        "dt": env.control_dt,
        "steps": steps,
        "seconds": steps * env.control_dt,
        "physics": f"{cls.physics_dt:g} s, {cls.decimation} per control step",
        "contacts": getattr(cls, "rigid_contacts_per_world", None),
        "scene_doc": (scene.__doc__ or "").strip(),
        "description": description,
        "sections": sections,
    }


def _index(rows: list[dict[str, Any]]) -> str:
    """The Tasks page: one row per ID, and the toctree of the task pages."""
    body = table(
        ["ID", "what it learns", "solver", "obs / action", "control dt", "episode"],
        (
            [
                f"[{r['name']}]({r['name']}.md)",
                r["description"],
                r["solver"],
                f"{r['obs']} / {r['act']}",
                f"{r['dt']:.3g} s",
                f"{r['steps']} steps ({r['seconds']:.3g} s)",
            ]
            for r in rows
        ),
        "lllrrr",
    )
    toc = "\n".join(r["name"] for r in rows)
    return (
        "# Tasks\n\n"
        "Every registered ID has a page generated from its task class: the declarations (observation blocks, reward "
        "and termination terms, metrics, config fields, solver options) and the class docstring's sections, with the "
        "reference result and the ID's changelog entries.\n\n"
        f"{body}\n\n```{{toctree}}\n:hidden:\n\n{toc}\n```\n"
    )


def _page(facts: dict[str, Any], env: Any, docs_dir: Path, changelog: str) -> str:
    """The Markdown page of one ID."""
    sections = dict(facts["sections"])
    parts = [
        f"# {facts['name']}\n\n{facts['description']}",
        _summary(facts),
        _animation(facts["id"], docs_dir),
        _section("Action space", _docstring(sections, "Action space")),
        _observations(env, sections),
        _rewards(env, sections),
        _section("Starting state", _docstring(sections, "Starting state")),
        _episode_end(env, sections),
        _metrics(env, sections),
        *(_section(h, body) for h, body in facts["sections"] if not h.startswith(_PLACED)),
        _scene(facts["scene_doc"], type(env)),
        _config(env),
        _solver_options(env),
        _training(type(env)),
        _benchmark(facts["id"]),
        _reference(facts["name"], docs_dir),
        _section("Changelog", changelog_sections(changelog, facts["name"]) or "No entry under Unreleased."),
    ]
    return _plain_roles("\n\n".join(p for p in parts if p).rstrip()) + "\n"


def _animation(env_id: str, docs_dir: Path) -> str:
    """The committed animation of the ID's reference policy (``docs/media/<Name>.webp``), linked, never recorded
    here; a note naming the command that records it where none is committed."""
    name, command = env_id.split("/")[-1], f"python -m steel_envs.training.benchmarks.media {env_id}"
    if not (docs_dir / "media" / f"{name}.webp").exists():
        return f"No animation yet: `{command}` records it."
    from steel_envs.policies import reference_seeds

    seed = min(reference_seeds(env_id), default=0)  # the media tool records the lowest shipped seed
    return (
        f"![{name} running its reference policy](../media/{name}.webp)\n\n"
        f"The shipped reference policy (seed {seed}) on one world, as `steel-envs record {env_id} --policy "
        f"reference:{seed}` runs it; recorded by `{command}`."
    )


def _section(heading: str, body: str) -> str:
    return f"## {heading}\n\n{body}" if body else ""


def _plain_roles(text: str) -> str:
    """Docstring prose with its reST roles (``:class:`~a.b.C```, ``:data:`X```) as code spans (``C``, ``X``)."""
    return re.sub(r":\w+:`~?([^`]+)`", lambda m: f"`{m.group(1).split('.')[-1]}`", text)


def _scene(scene_doc: str, cls: type) -> str:
    """The scene class's docstring after its first paragraph: physics, actuation, joint limits, solver choices."""
    body = inspect.cleandoc(scene_doc).partition("\n\n")[2].strip()
    scene = next(k for k in cls.__mro__[1:] if k.__module__.startswith("steel_envs.envs"))
    intro = f"From the scene class {code(scene.__module__ + '.' + scene.__name__)}, which the task subclasses:"
    return _section("Scene and physics", f"{intro}\n\n{body}") if body else ""


def _docstring(sections: dict[str, str], prefix: str) -> str:
    """The body of the docstring section whose heading starts with ``prefix`` ("" if none)."""
    return next((body for heading, body in sections.items() if heading.startswith(prefix)), "")


def _prose(body: str) -> str:
    """A docstring section without its table rows (the generated table replaces them)."""
    return "\n".join(line for line in body.splitlines() if not line.lstrip().startswith("|")).strip()


def _summary(f: dict[str, Any]) -> str:
    privileged = f" (the critic group adds {f['privileged']} privileged values)" if f["privileged"] else ""
    rows = [
        ("ID", code(f["id"])),
        ("class", code(f["class"])),
        ("scene", f["scene"]),
        ("solver", f["solver"]),
        ("observation", f"{f['obs']} float32 values{privileged}"),
        ("action", f"{f['act']} float32 values in [-1, 1]"),
        ("control dt", f"{f['dt']:.4g} s"),
        ("physics step", f["physics"]),
        ("episode length", f"{f['steps']} steps ({f['seconds']:.4g} s)"),
    ]
    if f["contacts"]:
        rows.append(("rigid contacts", f"{f['contacts']} per world (`rigid_contacts_per_world`)"))
    items = "\n".join(f"* - {key}\n  - {' '.join(value.split())}" for key, value in rows)
    return f"```{{list-table}}\n:widths: 1 4\n\n{items}\n```"


def _blocks_table(blocks: tuple[Any, ...]) -> str:
    rows, start = [], 0
    for b in blocks:
        rows.append(
            [code(b.name), f"{start}-{start + b.width - 1}" if b.width > 1 else start, b.func.formula, b.func.source]
        )
        start += b.width
    return table(["block (`env.observation_layout`)", "index", "formula", "source"], rows)


def _observations(env: Any, sections: dict[str, str]) -> str:
    from steel_envs.spec import observation_table

    blocks = env.observation_blocks()
    text = f"{env.observation_dim} values.\n\n{observation_table(blocks)}"
    prose = _prose(_docstring(sections, "Observation space"))
    text += f"\n\n{prose}" if prose else ""
    text += f"\n\n### Observation blocks\n\n{_blocks_table(blocks)}"
    privileged = env.privileged_observation_blocks()
    if privileged:
        text += (
            '\n\n### Privileged observations\n\nThe critic group (`env.observation_groups["critic"]`) is the '
            "observation above without noise, then these values:\n\n"
            f"{observation_table(privileged)}\n\n{_blocks_table(privileged)}"
        )
    return _section("Observation space", text)


def _rewards(env: Any, sections: dict[str, str]) -> str:
    config, rows = env.config, []
    for t in env.rewards:
        weight = f"{code(t.weight)} = {fmt_value(getattr(config, t.weight))}" if t.weight else "1 (in the function)"
        rows.append([code(t.name), weight, "cost" if t.cost else "signed", code(t.func.formula), t.func.source])
    text = (
        "The reward is the float32 sum of the weighted terms: weight x value for a signed term, -weight x value for "
        'a cost; `info["reward_<name>"]` holds each weighted term. A weight is set by its config field or by term '
        "name (`reward_weights={name: value}`).\n\n"
        + table(["term", "weight field = default", "kind", "formula (unweighted)", "source"], rows)
    )
    prose = _docstring(sections, "Rewards")
    if prose:
        heading = next(h for h in sections if h.startswith("Rewards"))
        note = heading.removeprefix("Rewards").strip()
        text += f"\n\nAs the class docstring writes them{' ' + note if note else ''}:\n\n{prose}"
    return _section("Rewards", text)


def _episode_end(env: Any, sections: dict[str, str]) -> str:
    rows = [
        [code(t.name), code(t.func.formula), "truncated (time-out)" if t.time_out else "terminated", t.func.source]
        for t in env.terminations
    ]
    terms = (
        table(["term (`info[name]`)", "formula", "ends the episode as", "source"], rows)
        if rows
        else ("The task declares no termination term.")
    )
    core = (
        "After the task's terms the core adds its own causes: `constraint_overflow` and `penetration` (truncations "
        "unless `overflow_is_terminal` / `penetration_is_terminal`), `nonfinite_state` (terminated), "
        '`nonfinite_action` (truncated, with `nonfinite_actions="end_episode"`) and the time limit '
        f"({env.max_episode_steps} steps); see [the contract](../guides/contract.md)."
    )
    return _section("Episode end", "\n\n".join(p for p in (_docstring(sections, "Episode end"), terms, core) if p))


def _aggregate(metric: Any) -> str:
    if metric.lost_steps is None:
        return metric.aggregate
    charge = metric.lost_steps.formula or metric.lost_steps.func.key
    return f"{metric.aggregate} over the time limit, a lost step counting {code(charge)}"


def _metrics(env: Any, sections: dict[str, str]) -> str:
    if not env.metrics:
        return ""
    rows = [[code(m.name), _aggregate(m), m.unit, m.description, code(m.func.formula)] for m in env.metrics]
    text = 'Reported per ended episode in `info["episode"][name]`; `steel-envs evaluate` prints their means.\n\n'
    return _section("Episode metrics", text + table(["metric", "over the episode", "unit", "what", "formula"], rows))


def _config(env: Any) -> str:
    from steel_envs.spec import TaskConfig

    cls = env.config_cls
    docs, common = attribute_docs(cls), {f.name for f in dataclasses.fields(TaskConfig)}
    weights = {t.weight: t.name for t in env.rewards if t.weight}
    rows = [
        [
            code(f.name),
            code(f.type),
            code(fmt_value(getattr(env.config, f.name))),
            docs.get(f.name) or (f"Weight of the reward term {code(weights[f.name])}." if f.name in weights else ""),
        ]
        for f in dataclasses.fields(cls)
        if f.name not in common
    ]
    text = (
        f"Keyword arguments of `make_vec` / `gym.make_vec` and `steel-envs train --env.<field>` "
        f"({code(cls.__module__ + '.' + cls.__name__)}):\n\n"
        + table(["field", "type", "default", "description"], rows)
        + "\n\nEvery task also takes the fields of `TaskConfig` (randomization, pushes, noise, delays, penetration "
        "limit; see [randomization and world parameters](../guides/randomization.md)): "
        + ", ".join(code(name) for name in sorted(common))
        + "."
    )
    return _section("Configuration", text)


def _solver_options(env: Any) -> str:
    options = env.solver_options
    cls = type(options)
    defaults, docs = cls(), attribute_docs(cls)
    changed, kept = [], []
    for f in dataclasses.fields(options):
        value, default = getattr(options, f.name), getattr(defaults, f.name)
        if _differs(value, default):
            changed.append([code(f.name), code(fmt_value(value)), code(fmt_value(default)), docs.get(f.name, "")])
        else:
            kept.append(code(f"{f.name}={fmt_value(value)}"))
    cuda = getattr(type(env), "solver_defaults_cuda", None)
    note = ""
    if cuda is not None:
        diffs = [
            f"{code(f.name)} = {code(fmt_value(getattr(cuda, f.name)))}"
            for f in dataclasses.fields(cuda)
            if _differs(getattr(cuda, f.name), getattr(options, f.name))
        ]
        note = f"\n\nOn CUDA the scene uses {', '.join(diffs)} instead." if diffs else ""
    text = (
        f"`env.solver_options`, a {{py:class}}`~{cls.__module__}.{cls.__name__}` ({env.backend.name}); any option is "
        "overridden with `solver_options={...}` or `--env.solver-options.<option>`. Set by the scene:\n\n"
        + table(["option", "value", "Newton's default", "description"], changed)
        + note
        + "\n\nThe other options keep Newton's defaults (described on the API page): "
        + ", ".join(kept)
        + "."
    )
    return _section("Solver options", text)


def _differs(a: Any, b: Any) -> bool:
    try:
        return bool(a != b)
    except (TypeError, ValueError):  # arrays compare element-wise
        return repr(a) != repr(b)


def _training(cls: type) -> str:
    from steel_envs.train_config import PpoConfig

    config, general = cls.train_config, PpoConfig()
    docs = attribute_docs(PpoConfig)
    rows = [
        [
            code(f.name),
            code(fmt_value(getattr(config, f.name))),
            code(fmt_value(getattr(general, f.name))),
            docs.get(f.name, ""),
        ]
        for f in dataclasses.fields(config)
        if _differs(getattr(config, f.name), getattr(general, f.name))
    ]
    text = "`steel-envs train` runs PPO (rsl-rl-lib) with the general `PpoConfig` defaults"
    if not rows:
        return _section("Training settings", text + ".")
    header = ["setting", "this task", "general", "description"]
    return _section("Training settings", text + ", except:\n\n" + table(header, rows))


def _benchmark(env_id: str) -> str:
    from steel_envs.benchmark import task_benchmark

    spec = task_benchmark(env_id)
    text = (
        f"`steel-envs compare` puts this ID in the `{spec.suite}` suite and scores a policy by `{spec.score}` "
        f"({spec.direction} is better), normalized as (score - random) / (expert - random) with random = "
        f"{spec.random_score:.4g} and expert = {spec.expert_score:.4g} ({spec.expert_from.replace('_', ' ')}), "
        f"over runs of {spec.env_steps:,} env-steps by default. Anchors: {spec.anchors}. "
        "See [comparing algorithms](../guides/comparing.md)."
    )
    return _section("Benchmark", text)


def _reference(name: str, docs_dir: Path) -> str:
    path = docs_dir / "reference" / f"{name}.json"
    if not path.exists():
        return _section("Reference result", "Not measured yet.")
    report = json.loads(path.read_text())
    runs = [
        [
            r["seed"],
            f"{r['env_steps'] / 1e6:.2f} M",
            f"{r['seconds'] / 60:.1f} min",
            r["num_envs"],
            r["shards"],
            _estimate(r["evaluation"]),
            _percent(r["evaluation"].get("success_rate")),
        ]
        for r in report["runs"]
    ]
    baselines = [
        [code(p), _estimate(e), _percent(e.get("success_rate")), f"{e['mean_length']:.1f}"]
        for p, e in report["baselines"].items()
    ]
    curve = docs_dir / "reference" / f"{name}_curves.png"
    image = f"\n\n![training curves of {name}](../reference/{curve.name})" if curve.exists() else ""
    text = (
        f"Trained by `{report['command']}` for seeds 0, 1, 2 ({report['machine']}; {report['date']}), each seed's "
        "final policy evaluated over 100 episodes with its mean action; mean return with its 95 % bootstrap "
        "interval. The policies ship in the package: `--policy reference` (seed 0) or `reference:<k>`.\n\n"
        + table(
            ["seed", "env-steps", "wall time", "worlds", "processes", "mean return [95 % CI]", "success"],
            runs,
            "rrrrrrr",
        )
        + "\n\n"
        + table(["baseline", "mean return [95 % CI]", "success", "mean length"], baselines, "lrrr")
        + image
        + "\n\nAll IDs: [results](../results.md)."
    )
    return _section("Reference result", text)


def _estimate(evaluation: dict[str, Any]) -> str:
    low, high = evaluation["mean_return_ci"]
    return f"{evaluation['mean_return']:.1f} [{low:.1f}, {high:.1f}]"


def _percent(rate: float | None) -> str:
    return "-" if rate is None else f"{100 * rate:.0f} %"


def changelog_sections(changelog: str, name: str) -> str:
    """The ``### ...`` sections under ``## Unreleased`` of ``changelog`` whose heading names ``name`` (with or
    without its ``-vN`` suffix), each as a ``### `` section."""
    unreleased = re.search(r"^## Unreleased\n(.*?)(?=^## |\Z)", changelog, re.S | re.M)
    if not unreleased:
        return ""
    short = re.escape(name.rsplit("-v", 1)[0])
    found = []
    for block in re.split(r"^(?=### )", unreleased.group(1), flags=re.M):
        heading, _, body = block.partition("\n")
        if heading.startswith("### ") and re.search(rf"\b{short}\b", heading):
            found.append(f"{heading}\n\n{body.strip()}".rstrip())
    return "\n\n".join(found)
