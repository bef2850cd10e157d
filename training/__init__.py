"""Training, evaluation and benchmark entry points (built on the core; RL libraries are optional extras)."""

from __future__ import annotations

import os
import secrets
import time

__all__ = ["new_folder", "out_prefix", "run_prefix"]


def new_folder(parent: str, stem: str) -> str:
    """Create and return a folder ``<parent>/<stem>_<local time>_<6 random hex digits>`` that did not exist: two
    commands started in the same second (a seed sweep in the background) never share one. ``parent`` is created.

    Raises:
        OSError: If ``parent`` cannot be created or written.
    """
    os.makedirs(parent, exist_ok=True)
    while True:
        folder = os.path.join(parent, f"{stem}_{time.strftime('%Y-%m-%d_%H-%M-%S')}_{secrets.token_hex(3)}")
        try:
            os.mkdir(folder)  # atomic: fails if another process took the name
            return folder
        except FileExistsError:
            continue


def run_prefix(kind: str, name: str, root: str = "runs") -> str:
    """The default output prefix of a command: ``<root>/<name>/<kind>_<local time>_<random>/<kind>``, its folder
    new (:func:`new_folder`; ``runs/`` is git-ignored). ``/`` in ``name`` (an ID) becomes ``_``."""
    return os.path.join(new_folder(os.path.join(root, name.replace("/", "_")), kind), kind)


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
