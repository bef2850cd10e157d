"""The run folders of ``steel-envs compare``: their layout, their lock, and the checked reading of their
``result.json`` (:mod:`steel_envs.training.compare` trains into them, :mod:`.compare_report` reports over them).

A finished run's ``result.json`` records the settings it was made with (:func:`run_settings`); a run is reused only
under the same settings, and a report compares only runs whose settings agree, so that numbers of different budgets,
training worlds or evaluations never mix silently.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import os
import socket
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

__all__ = [
    "REQUIRED",
    "SETTINGS",
    "Run",
    "RunBusy",
    "algo_config",
    "load_results",
    "read_result",
    "run_folder",
    "run_lock",
    "run_settings",
    "settings_mismatch",
]

_NUMBER = (int, float)
REQUIRED = {
    "algo": str,
    "env_id": str,
    "seed": int,
    "budget_env_steps": int,
    "task_fingerprint": str,
    "settings": dict,
    "env_steps": int,
    "train_seconds": _NUMBER,
    "score": _NUMBER,
    "normalized": _NUMBER,
}
"""The keys every ``result.json`` holds, with their types (:func:`read_result` refuses a file without one)."""

SETTINGS = {"budget_env_steps": int, "train_worlds": int, "algo_config": str, "eval_episodes": int, "eval_worlds": int}
"""The keys of a record's ``settings`` (:func:`run_settings`), with their types."""

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


def algo_config(algo: str, env_id: str, num_envs: int | None) -> tuple[int, str]:
    """The training worlds (``num_envs``, or the task's ``train_config`` / ``sac_config`` worlds for None) and 12 hex
    digits of SHA-256 over the algorithm's other hyper-parameters as the task declares them (PPO's iteration count
    and target return left out: the budget sets the one, a comparison turns the other off)."""
    import steel_envs

    cls = steel_envs.task_class(env_id)
    config = dataclasses.asdict(cls.train_config if algo == "ppo" else cls.sac_config)
    worlds = config.pop("num_envs") if num_envs is None else num_envs
    for name in ("max_iterations", "target_return"):
        config.pop(name, None)
    return worlds, hashlib.sha256(repr(sorted(config.items())).encode()).hexdigest()[:12]


def run_settings(algo: str, env_id: str, budget: int, num_envs: int | None, episodes: int, eval_envs: int) -> dict:
    """What a run's score depends on besides the algorithm, the task and the seed: ``budget_env_steps``,
    ``train_worlds`` and ``algo_config`` (:func:`algo_config`), ``eval_episodes`` and ``eval_worlds``."""
    worlds, digest = algo_config(algo, env_id, num_envs)
    return {
        "budget_env_steps": budget,
        "train_worlds": worlds,
        "algo_config": digest,
        "eval_episodes": episodes,
        "eval_worlds": eval_envs,
    }


def settings_mismatch(record: dict, settings: dict, fingerprint: str) -> str | None:
    """``"<name> <recorded> (asked <value>)"`` for each setting a finished run differs in, and its task declaration
    when it is not the installed one (``fingerprint``), joined; None if none."""
    differ = [
        f"{k} {record['settings'].get(k)} (asked {v})" for k, v in settings.items() if record["settings"].get(k) != v
    ]
    if record["task_fingerprint"] != fingerprint:
        differ.append(f"task declaration {record['task_fingerprint']} (installed {fingerprint})")
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
        age = time.time() - os.path.getmtime(path)
        with open(path, errors="replace") as f:
            pid, _, host = f.read().strip().partition(" ")
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
                raise RunBusy(
                    f"{folder}: held by {holder} (its lock file; delete it if no steel-envs compare runs there, a "
                    "reused process id can look alive); not touched"
                ) from None
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


def _finite(value: float) -> bool:
    try:
        return math.isfinite(float(value))
    except OverflowError:  # an int beyond float's range
        return False


def _kind(kind) -> str:
    names = {int: "an int", str: "a string", dict: "an object", _NUMBER: "a number"}
    return names[kind]


def read_result(folder: str) -> dict | None:
    """The checked ``folder/result.json`` (with ``"path"``: the file), or None when the run is not finished.

    Raises:
        ValueError: Naming the file, when it is not JSON, lacks a key of :data:`REQUIRED` or :data:`SETTINGS` or holds
            one of another type, holds a non-finite number, names an unknown ID, or lies in a folder other than its
            record's ``<algo>/<Name>/seed<k>`` (a copied or renamed run).
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
    for table, values, where in ((REQUIRED, record, ""), (SETTINGS, record["settings"], "settings.")):
        for key, kind in table.items():
            value = values.get(key) if isinstance(values, dict) else None
            if not isinstance(value, kind) or isinstance(value, bool):
                raise ValueError(f"{path}: {where}{key} is {value!r}, expected {_kind(kind)}")
    for key in ("score", "normalized", "train_seconds"):
        if not _finite(record[key]):
            raise ValueError(f"{path}: {key} is {record[key]!r}, expected a finite number")
    if record["budget_env_steps"] != record["settings"]["budget_env_steps"] or record["env_steps"] < 1:
        raise ValueError(f"{path}: its budget and env-steps disagree with its settings (an edited file)")
    try:
        import steel_envs

        steel_envs.task_class(record["env_id"])
    except Exception as e:
        raise ValueError(f"{path}: {e}") from None
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
