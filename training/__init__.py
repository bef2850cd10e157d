"""Training, evaluation and benchmark entry points (built on the core; RL libraries are optional extras)."""

from __future__ import annotations

import os
import time

__all__ = ["run_prefix"]


def run_prefix(kind: str, name: str, root: str = "runs") -> str:
    """The default output prefix of a command: ``<root>/<name>/<kind>_<local time>/<kind>``, its folder created (as
    ``train`` writes ``runs/<env>/<time>/``; ``runs/`` is git-ignored). ``/`` in ``name`` (an ID) becomes ``_``."""
    folder = os.path.join(root, name.replace("/", "_"), f"{kind}_{time.strftime('%Y-%m-%d_%H-%M-%S')}")
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, kind)
