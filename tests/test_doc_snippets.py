"""The Python code blocks of the README, the getting-started page and the guides run as written, so the
documentation cannot drift from the code.

The convention, for whoever writes these pages: every ```` ```python ```` block of a page runs, in page order, in
one namespace per page, with a fresh temporary folder as the working directory and at the front of ``sys.path``;
``bash`` and ``text`` blocks never run. An HTML comment on the line just before a block changes that (GitHub and
MyST both hide it):

- ``<!-- snippet: skip (why) -->``: the block is not run (say why: it starts worker processes, needs a GPU);
- ``<!-- snippet: file <path> -->``: the block is written to ``<tmp>/<path>`` instead of run, a module that the
  page's later blocks import (the adding-a-task guide's package).

Blocks are written at sizes that run in seconds on a CPU (a few worlds, at most a few hundred steps), so the test
runs them unchanged.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import gymnasium as gym
import pytest
import torch

import steel_envs
from steel_envs import registration

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "docs" / "getting_started.md", *sorted((ROOT / "docs" / "guides").glob("*.md"))]
BLOCK = re.compile(
    r"(?:^<!-- snippet: (?P<directive>[^\n]*?) -->\n)?^```(?P<lang>\w*)\n(?P<code>.*?)^```$", re.M | re.S
)
NEW_ID = "my_envs/CartpoleCentered-v0"


def python_blocks(text: str) -> list[tuple[str, str]]:
    """(directive, code) of every ``python`` block of a Markdown page, in order; directive "" when none."""
    return [(m["directive"] or "", m["code"]) for m in BLOCK.finditer(text) if m["lang"] == "python"]


def run_page(page: Path, folder: Path) -> dict:
    """Run ``page``'s Python blocks per the convention above in ``folder``; return the namespace they filled."""
    namespace: dict = {"__name__": "__snippet__"}
    for directive, code in python_blocks(page.read_text()):
        kind, _, argument = directive.partition(" ")
        if kind == "skip":
            continue
        if kind == "file":
            (folder / argument).parent.mkdir(parents=True, exist_ok=True)
            (folder / argument).write_text(code)
            continue
        assert not directive, f"{page.name}: unknown snippet directive {directive!r}"
        exec(compile(code, str(page), "exec"), namespace)
    return namespace


@pytest.fixture
def snippet_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """``tmp_path`` as the working directory and first on ``sys.path``; afterwards the guide's package and its ID
    are forgotten, so later tests see the registry as it was."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [m for m in sys.modules if m == "my_envs" or m.startswith("my_envs.")]:
        del sys.modules[name]
    registration._REGISTRY.pop(NEW_ID, None)
    gym.registry.pop(NEW_ID, None)


@pytest.mark.parametrize("page", [p for p in PAGES if python_blocks(p.read_text())], ids=lambda p: p.name)
def test_the_python_blocks_of_the_page_run(page: Path, snippet_folder: Path) -> None:
    """Every Python block of the page runs without an error (the README's quickstart, the first rollout, the
    guides' examples)."""
    run_page(page, snippet_folder)


def test_the_quickstart_and_the_guides_have_blocks_that_run() -> None:
    """The pages the issue names keep runnable blocks: a page whose blocks were all skipped would test nothing."""
    for name in ("README.md", "getting_started.md", "adding_a_task.md"):
        page = next(p for p in PAGES if p.name == name)
        assert any(not d.startswith("skip") for d, _ in python_blocks(page.read_text())), name


def test_the_task_of_the_adding_a_task_guide_is_registered_and_steps(snippet_folder: Path) -> None:
    """The guide's files, written into a temporary package and imported, register its ID; a 2-world env of it steps,
    and its centring term is -0.5 x^2 of the cart position it observes (the guide's weight and formula)."""
    run_page(ROOT / "docs" / "guides" / "adding_a_task.md", snippet_folder)
    assert (snippet_folder / "my_envs" / "cartpole_centered.py").exists()
    assert NEW_ID in steel_envs.registry()
    env = steel_envs.make_vec(NEW_ID, 2, device="cpu")
    try:
        env.reset(seed=1)
        for _ in range(5):
            obs, reward, terminated, _, info = env.step(torch.full((2, 1), 0.5))
        x = obs[:, env.observation_layout["cart_pos"]].squeeze(1)
        assert torch.allclose(info["reward_centering"], -0.5 * x**2, atol=1e-6)
        assert torch.allclose(reward, 1.0 - 0.5 * x**2, atol=1e-6)
        assert env.max_episode_steps == 200 and not terminated.any()
    finally:
        env.close()
