"""The run folders of ``steel-envs compare``: their layout, their lock, and the checked reading of their
``result.json`` (:mod:`steel_envs.training.compare` trains into them, :mod:`.compare_report` reports over them).

A finished run's ``result.json`` records the settings it was made with (:func:`run_settings`); a run is reused only
under the same settings, and a report compares only runs whose settings agree, so that numbers of different budgets,
training worlds or evaluations never mix silently.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import socket
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

__all__ = [
    "REQUIRED",
    "Run",
    "RunBusy",
    "load_results",
    "read_result",
    "run_folder",
    "run_lock",
    "run_settings",
    "settings_mismatch",
]

REQUIRED = (
    "algo",
    "env_id",
    "seed",
    "budget_env_steps",
    "task_fingerprint",
    "settings",
    "env_steps",
    "train_seconds",
    "score",
    "normalized",
)
"""The keys every ``result.json`` holds (:func:`read_result` refuses a file without one)."""

_STALE_UNREADABLE_LOCK_S = 60.0
"""Age [s] after which a lock file without a readable ``"<pid> <host>"`` is taken over: a process writes its line at
once after creating the file, so only a crashed writer (or a full disk) leaves it empty for long."""


class RunBusy(ValueError):
    """A run folder another live process holds (its ``lock`` file)."""


@dataclass(frozen=True)
class Run:
    """One (algorithm, ID, seed) of a comparison."""

    algo: str
    env_id: str
    seed: int
    env_steps: int
    """The budget asked for [env-steps]."""
    folder: str
    settings: dict
    """:func:`run_settings` of the call that asks for the run."""


def run_folder(out: str, algo: str, env_id: str, seed: int) -> str:
    """``<out>/<algo>/<Name>/seed<k>``, ``Name`` the ID without its namespace (``CartpoleBalance-v0``)."""
    return os.path.join(out, algo, env_id.split("/")[-1], f"seed{seed}")


def run_settings(algo: str, env_id: str, budget: int, num_envs: int | None, episodes: int, eval_envs: int) -> dict:
    """What a run's score depends on besides the algorithm, the task and the seed: ``budget_env_steps``,
    ``train_worlds`` (``num_envs``, or the task's ``train_config`` / ``sac_config`` worlds for None),
    ``eval_episodes`` and ``eval_worlds``."""
    import steel_envs

    if num_envs is None:
        cls = steel_envs.task_class(env_id)
        num_envs = (cls.train_config if algo == "ppo" else cls.sac_config).num_envs
    return {"budget_env_steps": budget, "train_worlds": num_envs, "eval_episodes": episodes, "eval_worlds": eval_envs}


def settings_mismatch(record: dict, settings: dict) -> str | None:
    """``"<name> <recorded> (asked <value>)"`` for each setting a finished run differs in, joined; None if none."""
    differ = [
        f"{k} {record['settings'].get(k)} (asked {v})" for k, v in settings.items() if record["settings"].get(k) != v
    ]
    return ", ".join(differ) or None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def _holder(path: str) -> str | None:
    """Who holds the lock file ``path`` (``"process <pid> on <host>"``); None when it is stale: its process of this
    host no longer runs, or it has no readable holder and is older than a writer needs."""
    try:
        with open(path) as f:
            pid, _, host = f.read().strip().partition(" ")
        age = time.time() - os.path.getmtime(path)
    except OSError:  # removed meanwhile by its holder
        return None
    if not pid.isdigit() or not host:
        return None if age > _STALE_UNREADABLE_LOCK_S else "a process still writing its lock file"
    if host != socket.gethostname() or _alive(int(pid)):
        return f"process {pid} on {host}"
    return None


@contextlib.contextmanager
def run_lock(folder: str) -> Iterator[None]:
    """Hold ``folder/lock`` (``"<pid> <host>"``, created atomically) while working in ``folder``; a stale lock (its
    process of this host no longer runs, or no holder written for a minute) is taken over.

    Raises:
        RunBusy: If a live process (or one on another host, which cannot be checked) holds the folder.
    """
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "lock")
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            holder = _holder(path)
            if holder is not None:
                raise RunBusy(f"{folder}: held by {holder} (its lock file); not touched") from None
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)  # the holder died: its run is unfinished and starts again
            continue
        with os.fdopen(fd, "w") as f:
            f.write(f"{os.getpid()} {socket.gethostname()}")
        break
    else:
        raise RunBusy(f"{folder}: another process took its lock while this one replaced a stale one")
    try:
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)


def read_result(folder: str) -> dict | None:
    """The checked ``folder/result.json`` (with ``"path"``: the file), or None when the run is not finished.

    Raises:
        ValueError: Naming the file, when it is not JSON, lacks a key of :data:`REQUIRED`, holds a non-finite score,
            or lies in a folder other than its record's ``<algo>/<Name>/seed<k>`` (a copied or renamed run).
    """
    path = os.path.join(folder, "result.json")
    if not os.path.isfile(path):
        return None
    try:
        with open(path) as f:
            record = json.load(f)
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: not a readable result ({e}); delete its folder to run it again") from None
    if not isinstance(record, dict) or any(k not in record for k in REQUIRED):
        missing = [k for k in REQUIRED if not isinstance(record, dict) or k not in record]
        raise ValueError(f"{path}: lacks {missing} (an older or edited file); delete its folder to run it again")
    for key in ("score", "normalized"):
        if not isinstance(record[key], (int, float)) or not math.isfinite(record[key]):
            raise ValueError(f"{path}: {key} is {record[key]!r}, expected a finite number")
    expected = run_folder("", record["algo"], record["env_id"], record["seed"]).strip(os.sep)
    if not os.path.normpath(folder).endswith(os.sep + expected) and os.path.normpath(folder) != expected:
        raise ValueError(f"{path}: its record is {expected}, not this folder; move it out of the comparison")
    return {**record, "path": path}


def load_results(
    out: str, algos: Sequence[str] | None, ids: Sequence[str] | None, seeds: Sequence[int] | None
) -> list[dict]:
    """Every checked ``result.json`` under ``out`` (:func:`read_result`), only of ``algos``, ``ids`` and ``seeds``
    when given.

    Raises:
        ValueError: From :func:`read_result`.
    """
    found = []
    for algo in sorted(os.listdir(out)) if os.path.isdir(out) else []:
        if (algos is not None and algo not in algos) or not os.path.isdir(os.path.join(out, algo)):
            continue
        for name in sorted(os.listdir(os.path.join(out, algo))):
            if not os.path.isdir(os.path.join(out, algo, name)):
                continue
            for seed_dir in sorted(os.listdir(os.path.join(out, algo, name))):
                record = read_result(os.path.join(out, algo, name, seed_dir))
                if record is None or (ids is not None and record["env_id"] not in ids):
                    continue
                if seeds is None or record["seed"] in seeds:
                    found.append(record)
    return found
