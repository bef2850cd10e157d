"""The command outputs the documentation shows, written by running the commands.

``python -m steel_envs.training.benchmarks.doc_samples`` runs each command of :data:`SAMPLES` as
``steel-envs <args>`` (in this process, in a temporary working folder, so that ``runs/`` is not touched) and writes
what it printed on stdout (not the progress bars on stderr) to ``docs/samples/<name>.txt``, with the time and id
of an output folder as ``<time>_<id>``. The pages include these files (``{literalinclude}``);
``tests/test_doc_samples.py`` checks that a committed sample still has the columns, check names, thresholds,
capacities and end causes of the current output. ``--only <name>`` regenerates one.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import sys
import tempfile
from pathlib import Path

__all__ = ["SAMPLES", "SAMPLES_DIR", "main", "sample_text"]

SAMPLES: dict[str, tuple[str, ...]] = {
    "evaluate_cartpole.txt": (
        "evaluate",
        "steel_envs/CartpoleBalance-v0",
        "--policy",
        "random",
        "--policy",
        "reference",
        "--episodes",
        "50",
        "--num-envs",
        "16",
        "--seeds",
        "0,1,2",
        "--device",
        "cpu",
    ),
    "doctor_quadruped.txt": ("doctor", "steel_envs/QuadrupedVelocity-v0", "--device", "cpu"),
}
"""Sample file -> the ``steel-envs`` arguments that print it (the page shows the command)."""
SAMPLES_DIR = Path(__file__).resolve().parents[2] / "docs" / "samples"
"""Where the pages find the samples: ``docs/samples`` of the checkout."""
_RUN_STAMP = re.compile(r"_\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d_[0-9a-f]+")


def sample_text(args: tuple[str, ...]) -> str:
    """What ``steel-envs <args>`` prints on stdout, run in a temporary working folder; output folders' time and
    id read ``<time>_<id>``.

    Raises:
        RuntimeError: If the command exits with a non-zero status.
    """
    from steel_envs.cli import main

    out, here = io.StringIO(), os.getcwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        try:
            with contextlib.redirect_stdout(out):
                status = main(list(args))
        finally:
            os.chdir(here)
    if status != 0:
        raise RuntimeError(f"steel-envs {' '.join(args)}: exit status {status}")
    return _RUN_STAMP.sub("_<time>_<id>", out.getvalue())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", choices=sorted(SAMPLES), help="regenerate this sample only")
    p.add_argument("--out", default=str(SAMPLES_DIR), help=f"output folder (default {SAMPLES_DIR})")
    args = p.parse_args(argv)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    for name, command in SAMPLES.items():
        if args.only not in (None, name):
            continue
        text = sample_text(command)
        (Path(args.out) / name).write_text(text)
        print(f"{Path(args.out) / name}: steel-envs {' '.join(command)} ({len(text.splitlines())} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
