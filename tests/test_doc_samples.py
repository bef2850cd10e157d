"""The command outputs the documentation shows (``docs/samples/``, written by
``python -m steel_envs.training.benchmarks.doc_samples``) still look like what the commands print now: the pages
show the command that printed each sample, and a short run of the same command has the sample's columns, check
names, thresholds, capacities and end causes."""

from __future__ import annotations

import re
from pathlib import Path

from steel_envs.training.benchmarks.doc_samples import SAMPLES

ROOT = Path(__file__).resolve().parents[1]
SAMPLES_DIR = ROOT / "docs" / "samples"
PAGES = {p: p.read_text() for p in [ROOT / "docs" / "getting_started.md", *(ROOT / "docs" / "guides").glob("*.md")]}


def _columns(line: str) -> list[str]:
    """A table row of the CLI's plain-text output, split at its runs of two or more spaces."""
    return re.split(r" {2,}", line.strip())


def test_every_sample_is_shown_under_the_command_that_printed_it() -> None:
    """Each sample file is included by a page that also shows its command; no page holds a hand-pasted
    ``text`` output block."""
    assert sorted(p.name for p in SAMPLES_DIR.iterdir()) == sorted(SAMPLES)
    for name, args in SAMPLES.items():
        showing = [p for p, text in PAGES.items() if f"samples/{name}\n" in text]
        assert showing, name
        for page in showing:
            assert f"steel-envs {' '.join(args)}" in PAGES[page], (page.name, name)
    for page, text in PAGES.items():
        assert "```text\n" not in text, page.name


def test_the_evaluate_sample_has_the_current_columns_and_end_causes() -> None:
    """Two episodes of the random policy on CartpoleBalance print the sample's header, and end by the cause the
    sample's random row names (the task's ``pole_fell``, not a former name)."""
    from steel_envs.training.evaluate import evaluate, table

    sample = (SAMPLES_DIR / "evaluate_cartpole.txt").read_text().splitlines()
    header = next(line for line in sample if line.startswith("policy "))
    random_row = _columns(next(line for line in sample if line.startswith("random ")))
    result = evaluate("steel_envs/CartpoleBalance-v0", ["random"], episodes=2, num_envs=2, progress=False)
    now = table(result).splitlines()
    assert now[0] == header
    causes = {cause.rsplit(" ", 1)[0] for cause in _columns(now[1])[-1].split(", ")}
    assert causes == {cause.rsplit(" ", 1)[0] for cause in random_row[-1].split(", ")} == {"pole_fell"}


def test_the_doctor_sample_has_the_current_checks_thresholds_and_capacities() -> None:
    """A short doctor run of the sample's ID and world count has the sample's check lines in order, with the same
    thresholds and the same row and contact capacities (the denominators of the capacity lines)."""
    from steel_envs.doctor.runner import doctor

    sample = (SAMPLES_DIR / "doctor_quadruped.txt").read_text().splitlines()
    start = next(i for i, line in enumerate(sample) if line.startswith("check "))
    rows = [_columns(line) for line in sample[start + 1 :] if not line.startswith("result:")]
    report = doctor("steel_envs/QuadrupedVelocity-v0", num_envs=4, steps=4, device="cpu", check_world_count=False)
    assert [r[0] for r in rows] == [line.check for line in report.lines]
    assert [r[2] for r in rows] == [line.threshold for line in report.lines]
    capacities = {r[0]: r[1].split("/")[1].strip() for r in rows if "/" in r[1] and r[0].startswith(("rows", "cont"))}
    assert capacities, rows
    for line in report.lines:
        if line.check in capacities:
            assert line.value.split("/")[1].strip() == capacities[line.check], (line.check, line.value)
