"""Training, evaluation and benchmark entry points (built on the core; RL libraries are optional extras)."""

from __future__ import annotations

import os
import time

__all__ = ["out_prefix", "run_prefix"]


def run_prefix(kind: str, name: str, root: str = "runs") -> str:
    """The default output prefix of a command: ``<root>/<name>/<kind>_<local time>/<kind>``, its folder created (as
    ``train`` writes ``runs/<env>/<time>/``; ``runs/`` is git-ignored). ``/`` in ``name`` (an ID) becomes ``_``."""
    folder = os.path.join(root, name.replace("/", "_"), f"{kind}_{time.strftime('%Y-%m-%d_%H-%M-%S')}")
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, kind)


def out_prefix(out: str | None, kind: str, name: str) -> str:
    """The output prefix of a command's ``--out``: ``out`` with its folder created, or :func:`run_prefix`'s default
    when ``out`` is None. Called before the command's work, so a prefix that cannot be written fails at once.

    Raises:
        ValueError: If ``out``'s folder cannot be created (naming ``--out`` and the reason).
    """
    if out is None:
        return run_prefix(kind, name)
    try:
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    except OSError as e:
        raise ValueError(f"--out: cannot create the folder of {out!r} ({e.strerror or e})") from None
    return out
