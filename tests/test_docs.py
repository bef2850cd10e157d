"""The documentation builds offline with warnings as errors, with a generated page per registered ID, and the README
stays a short, undated front page whose task table matches the tasks.

The build runs as the README says (``python -m sphinx -W --keep-going -b html docs ...``) on a copy of ``docs/``, so
the checkout's generated pages are left alone. Skipped where Sphinx, furo or MyST is not installed (the ``docs``
extra); the README checks always run.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import steel_envs
from steel_envs.policies import REFERENCE_DIR

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = (ROOT / "README.md").read_text()

needs_sphinx = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("sphinx", "furo", "myst_parser")),
    reason="the docs extra (sphinx, furo, myst-parser) is not installed",
)


def _sphinx(source: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", *extra, str(source), str(out)]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the repository's docs (and the files they include) built into ``<copy>/_build``; returns the copy."""
    repo = tmp_path_factory.mktemp("repo")
    ignore = shutil.ignore_patterns("_build", "tasks", "_generated", "__pycache__")
    shutil.copytree(DOCS, repo / "docs", ignore=ignore)
    for name in ("CHANGELOG.md", "LICENSE"):
        shutil.copy(ROOT / name, repo / name)
    result = _sphinx(repo / "docs", repo / "docs" / "_build")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-6000:]
    return repo / "docs"


def _docstring_observation_rows(cls: type) -> list[str]:
    """The rows of the observation table the task's class docstring writes by hand."""
    section = re.search(r"## Observation space[^\n]*\n(.*?)(?:\n\s*\n|\n\s*## )", cls.__doc__, re.S).group(1)
    return [line.strip() for line in section.splitlines() if line.strip().startswith("|")]


@needs_sphinx
def test_every_registered_id_has_a_page_with_its_terms_and_observations(built: Path) -> None:
    """Each shipped ID has a built HTML page showing its animation (where its reference policy ships; else the page
    names the command that records it), and its generated page lists every reward term the class declares and the
    observation table its docstring states; the Tasks index links each page."""
    index = (built / "_build" / "tasks" / "index.html").read_text()
    assert len(steel_envs.ENV_IDS) >= 8
    for env_id in steel_envs.ENV_IDS:
        name, cls = env_id.split("/")[-1], steel_envs.task_class(env_id)
        html = (built / "_build" / "tasks" / f"{name}.html").read_text()
        if (Path(REFERENCE_DIR) / name / "seed0").exists() or (DOCS / "media" / f"{name}.webp").exists():
            assert f'src="../_images/{name}.webp"' in html, env_id  # the committed animation (docs/media)
        else:
            assert "No animation yet" in html, env_id
        assert f'href="{name}.html"' in index, env_id
        page = (built / "tasks" / f"{name}.md").read_text()
        for term in cls.rewards:
            assert f"| `{term.name}` |" in page, (env_id, term.name)
        assert "\n".join(_docstring_observation_rows(cls)) in page, env_id
        reference = DOCS / "reference" / f"{name}.json"
        if reference.exists():
            seed0 = json.loads(reference.read_text())["runs"][0]["evaluation"]["mean_return"]
            assert f"{seed0:.1f} [" in page, env_id
        else:
            assert "Not measured yet." in page, env_id


@needs_sphinx
def test_the_api_and_cli_pages_are_generated(built: Path) -> None:
    """The API page documents the public classes from their docstrings and the CLI page holds each command's help."""
    api = (built / "_build" / "api.html").read_text()
    for name in ("steel_envs.core.NewtonVectorEnv", "steel_envs.factory.make_vec", "steel_envs.spec.RewardTerm"):
        assert f'id="{name}"' in api, name
    cli = (built / "_build" / "cli.html").read_text()
    for command in ("rollout", "evaluate", "train", "doctor"):
        assert f"usage: steel-envs {command}" in cli, command


@needs_sphinx
def test_a_broken_internal_link_fails_the_build(tmp_path: Path) -> None:
    """With the project's configuration and ``-W``, a link to a page that does not exist fails the build."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "index.md").write_text("# Home\n\nSee {doc}`no-such-page` and [the guide](guides/no_such_guide.md).\n")
    result = _sphinx(source, tmp_path / "out", "-c", str(DOCS), "-D", "steel_docs_generate=0")
    assert result.returncode != 0
    assert "no-such-page" in result.stderr and "no_such_guide" in result.stderr, result.stderr


@needs_sphinx
def test_the_readme_task_table_matches_the_tasks(built: Path) -> None:
    """Every registered ID has a row in the README's task table whose observation / action sizes, control dt,
    episode length and solver are those of the built env."""
    facts = {f["id"]: f for f in json.loads((built / "_generated" / "tasks.json").read_text())}
    assert set(facts) == set(steel_envs.ENV_IDS)
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `([\w/.-]+)` \|.*$", README, re.M)}
    for env_id, f in facts.items():
        assert env_id in rows, env_id
        cells = [c.strip() for c in rows[env_id].strip("|").split("|")]
        assert cells[3:7] == [f"{f['obs']} / {f['act']}", f"{f['dt']:g} s", f"{f['steps']} steps", f["solver"]], cells


def test_the_readme_is_short_undated_and_links_only_files_in_the_repository() -> None:
    """The README is a front page: at most 12 KB, no date, no issue number, its relative links resolve, and it keeps
    the exact test command the CI script runs."""
    assert len(README.encode()) <= 12 * 1024, len(README.encode())
    assert not re.search(r"20\d\d-\d\d-\d\d", README)
    assert not re.search(r"\bissues? \d+", README, re.I)
    for target in re.findall(r"\]\((?!https?://)([^)#]+)", README):
        assert (ROOT / target).exists(), target
    assert "\npython -m pytest -q\n" in README
    assert "python -m sphinx -W --keep-going -b html docs docs/_build/html" in README


@needs_sphinx
def test_the_solver_options_page_lists_every_option_with_its_range_and_when_to_change(built: Path) -> None:
    """The solver options page has one row per option of each solver (the fields that tests/test_solver_options.py
    matches to Newton's signatures), each with its valid values and a "when to change" note."""
    import dataclasses

    from steel_envs.solver_options import SteelSolverOptions, VBDSolverOptions

    page = (built / "_generated" / "solver_options.md").read_text()
    assert (built / "_build" / "solver_options.html").exists()
    sections = dict(re.findall(r"^## (\w+): .*?\n(.*?)(?=^## |\Z)", page, re.M | re.S))
    for solver, cls in (("SolverSteel", SteelSolverOptions), ("SolverVBD", VBDSolverOptions)):
        items = dict(re.findall(r"^\* - `(\w+)`\n(.*?)(?=^\* - |^```)", sections[solver], re.M | re.S))
        assert list(items) == [f.name for f in dataclasses.fields(cls)], solver
        for name, item in items.items():
            cells = re.split(r"^  - ", item, flags=re.M)
            assert len(cells) == 3 and len(cells[1].strip()) > 3, (solver, name, item)
            assert len(cells[2].partition("**When to change:** ")[2].strip()) > 10, (solver, name, item)
    assert "an int >= 1: PGS sweeps per step" in sections["SolverSteel"]
    assert "True or False" in sections["SolverVBD"]
