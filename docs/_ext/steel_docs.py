"""Sphinx extension of the steel-envs docs: writes the generated pages on ``builder-inited``, before Sphinx reads
the sources.

- ``tasks/index.md`` and ``tasks/<Name>.md``: one page per registered shipped ID (``steel_envs.ENV_IDS``), from the
  task class and a built 1-world CPU env (:mod:`task_pages`);
- ``_generated/cli.md``: every command's ``--help``, included by ``cli.md``;
- ``_generated/solver_options.md``: every option of both solvers with its range and "when to change" note, from
  :mod:`steel_envs.solver_options`, included by ``solver_options.md``;
- ``_generated/results.md``: the tables of ``docs/reference/*.json`` and ``docs/bench_*.json``, included by
  ``results.md``;
- ``_generated/benchmarks.md``: every ID's benchmark declaration (``steel-envs compare``), included by
  ``guides/comparing.md``;
- ``_generated/tasks.json``: each ID's solver, sizes, control dt and episode length (the README's task table is
  checked against it by ``tests/test_docs.py``).

The task pages show the committed animations ``docs/media/<Name>.webp`` (recorded by
``python -m steel_envs.training.benchmarks.media``); the build never records. Both generated folders are
git-ignored. A file is rewritten only when its text changed, so an unchanged page is not read
again by an incremental build. ``steel_docs_generate = False`` (``-D steel_docs_generate=0``) skips the generation,
for a build of other sources with this configuration.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

__all__ = ["generate", "setup"]

GENERATED = ("tasks", "_generated")
"""Folders under the source directory that this extension owns (and empties of stale files)."""


def generate(srcdir: Path) -> dict[str, str]:
    """Write every generated page under ``srcdir`` (the docs folder); return relative path -> text."""
    from reference_pages import benchmark_table, cli_reference, results_tables, solver_options_reference
    from task_pages import task_pages

    import steel_envs
    from steel_envs.runtime import init_warp

    init_warp()
    pages = task_pages(steel_envs.ENV_IDS, srcdir)
    pages["_generated/cli.md"] = cli_reference()
    pages["_generated/results.md"] = results_tables(srcdir, steel_envs.ENV_IDS)
    pages["_generated/solver_options.md"] = solver_options_reference()
    pages["_generated/benchmarks.md"] = benchmark_table(steel_envs.ENV_IDS)
    for folder in GENERATED:
        for path in sorted((srcdir / folder).glob("*")) if (srcdir / folder).exists() else []:
            if path.relative_to(srcdir).as_posix() not in pages:
                shutil.rmtree(path) if path.is_dir() else path.unlink()
    for relative, text in pages.items():
        path = srcdir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
    return pages


def _on_builder_inited(app: Any) -> None:
    # The task animations (docs/media/*.webp): every current browser shows WebP, Sphinx's HTML builder does not
    # list it, and without it an image would warn "no matching candidate".
    if "image/webp" not in app.builder.supported_image_types:
        app.builder.supported_image_types = [*app.builder.supported_image_types, "image/webp"]
    if app.config.steel_docs_generate:
        generate(Path(app.srcdir))


_ATTRIBUTE_KINDS = ("attribute", "data", "property")
_ATTRIBUTE_DOCS: dict[str, list[str]] = {}


def _keep_attribute_doc(app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    if what in _ATTRIBUTE_KINDS:
        _ATTRIBUTE_DOCS[name] = list(lines)


def _restore_attribute_doc(app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    """Undo napoleon on an attribute's or property's docstring: napoleon reads a first line ``text: more`` as
    ``type: description``, while this project's attribute docstrings are sentences (the type is the annotation)."""
    if what in _ATTRIBUTE_KINDS and name in _ATTRIBUTE_DOCS:
        lines[:] = _ATTRIBUTE_DOCS.pop(name)


def setup(app: Any) -> dict[str, Any]:
    app.add_config_value("steel_docs_generate", True, "env", types=[bool, int])
    app.connect("builder-inited", _on_builder_inited)
    # Around napoleon's handler (priority 500).
    app.connect("autodoc-process-docstring", _keep_attribute_doc, priority=100)
    app.connect("autodoc-process-docstring", _restore_attribute_doc, priority=900)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
