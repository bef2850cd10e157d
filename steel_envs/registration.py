"""The registry of environment IDs: the shipped tasks, registered with Gymnasium when ``steel_envs`` is imported
without importing their modules, and the tasks users register with :func:`register_task`.

A task module under ``tasks/`` ends with one line, e.g. ``AntRunSingleEnv = register_task("steel_envs/AntRun-v0",
AntRunEnv)``. At import, :func:`shipped_tasks` reads those lines (and each class's ``default_max_episode_steps``)
from the modules' source with :mod:`ast`, so a new task file is picked up without editing any list, and Gymnasium
gets string entry points: a task's module (and Newton, Warp's kernels, torch) loads when an env of it is made or its
class is asked for, not when ``steel_envs`` is imported. ``tests/test_api.py`` checks the manifest against the
classes.
"""

from __future__ import annotations

import ast
import difflib
import functools
import importlib
import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

import gymnasium as gym

if TYPE_CHECKING:
    from .core import NewtonVectorEnv
    from .single_env import SteelSingleEnv

__all__ = [
    "ENV_IDS",
    "ShippedTask",
    "register_task",
    "registered_ids",
    "registry",
    "shipped_tasks",
    "task_class",
]


@dataclass(frozen=True)
class ShippedTask:
    """Where a shipped task is: its module and the names its registration line binds."""

    module: str
    """``steel_envs.tasks.<name>``."""
    vector_class: str
    """The task's vector env class (``AntRunEnv``)."""
    single_class: str
    """The name the registration line binds the single-world adapter to (``AntRunSingleEnv``)."""
    max_episode_steps: int
    """The class's ``default_max_episode_steps`` (Gymnasium's ``TimeLimit``)."""


def _registration(node: ast.stmt) -> tuple[str, str, str] | None:
    """(ID, vector class, single class) of a module-level ``X = register_task("ID", Cls)`` line, else None."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
        return None
    call = node.value
    if not (isinstance(call, ast.Call) and getattr(call.func, "id", getattr(call.func, "attr", "")) == "register_task"):
        return None
    if len(call.args) != 2 or not isinstance(call.args[0], ast.Constant) or not isinstance(call.args[1], ast.Name):
        return None
    return call.args[0].value, call.args[1].id, node.targets[0].id


def _time_limit(tree: ast.Module, class_name: str) -> int | None:
    """The ``default_max_episode_steps = <int>`` of ``class_name``'s body in ``tree``, if it states one."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            for item in node.body:
                target = item.targets[0] if isinstance(item, ast.Assign) else getattr(item, "target", None)
                value = getattr(item, "value", None)
                if getattr(target, "id", None) == "default_max_episode_steps" and isinstance(value, ast.Constant):
                    return int(value.value)
    return None


@functools.cache
def shipped_tasks() -> Mapping[str, ShippedTask]:
    """ID -> :class:`ShippedTask` of every ``tasks/`` module's registration line, in module name order (read from
    the source; no task module is imported)."""
    spec = importlib.util.find_spec("steel_envs.tasks")
    folder = next(iter(spec.submodule_search_locations))
    tasks: dict[str, ShippedTask] = {}
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".py") or name.startswith("_"):
            continue
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for node in tree.body:
            found = _registration(node)
            if found is not None:
                env_id, vector_class, single_class = found
                limit = _time_limit(tree, vector_class)
                if limit is None:
                    raise RuntimeError(f"tasks/{name}: {vector_class} must state default_max_episode_steps = <int>")
                tasks[env_id] = ShippedTask(f"steel_envs.tasks.{name[:-3]}", vector_class, single_class, limit)
    return MappingProxyType(tasks)


_REGISTRY: dict[str, type[NewtonVectorEnv]] = {}


def _register_shipped() -> None:
    for env_id, task in shipped_tasks().items():
        if env_id not in gym.registry:
            gym.register(
                id=env_id,
                entry_point=f"{task.module}:{task.single_class}",
                vector_entry_point=f"{task.module}:{task.vector_class}",
                max_episode_steps=task.max_episode_steps,
            )


def register_task(env_id: str, vector_cls: type[NewtonVectorEnv]) -> type[SteelSingleEnv]:
    """Register ``env_id`` with Gymnasium: ``gym.make_vec`` builds ``vector_cls``, ``gym.make`` a 1-world adapter.

    The time limit of ``gym.make``'s ``TimeLimit`` is ``vector_cls.default_max_episode_steps``. Registering the same
    class again under the same ID does nothing (modules may be reloaded); a shipped task's line, run when its module
    loads, completes the registration made at import.

    Args:
        env_id: ``"namespace/Name-vN"``, e.g. ``"steel_envs/AntRun-v0"``.
        vector_cls: The task's :class:`~steel_envs.core.NewtonVectorEnv` subclass (a SteelVectorEnv or VBDVectorEnv
            scene).

    Returns:
        The single-world adapter class (a :class:`~steel_envs.single_env.SteelSingleEnv`), Gymnasium's
        ``entry_point``; the task module keeps it as ``<Name>SingleEnv``.

    Raises:
        TypeError: If ``vector_cls`` is not a NewtonVectorEnv subclass.
        ValueError: If ``env_id`` is already registered for another class.
    """
    from .core import NewtonVectorEnv
    from .single_env import single_world

    if not (isinstance(vector_cls, type) and issubclass(vector_cls, NewtonVectorEnv)):
        raise TypeError(
            f"vector_cls: expected a NewtonVectorEnv subclass (SteelVectorEnv, VBDVectorEnv), got {vector_cls!r}"
        )
    known, shipped = _REGISTRY.get(env_id), shipped_tasks().get(env_id)
    if known is not None and known.__qualname__ != vector_cls.__qualname__:
        raise ValueError(f"env_id: {env_id!r} is already registered for {known.__module__}.{known.__qualname__}")
    this = (vector_cls.__module__, vector_cls.__qualname__)
    if shipped is not None and this != (shipped.module, shipped.vector_class):
        raise ValueError(f"env_id: {env_id!r} is already registered for {shipped.module}.{shipped.vector_class}")
    single_cls = single_world(vector_cls)
    _REGISTRY[env_id] = vector_cls
    if shipped is None:
        # Callables, not "module:attr" strings: a task defined outside an importable package (a test's) works too.
        gym.register(
            id=env_id,
            entry_point=single_cls,
            vector_entry_point=vector_cls,
            max_episode_steps=vector_cls.default_max_episode_steps,
        )
    return single_cls


def registry() -> Mapping[str, type[NewtonVectorEnv]]:
    """Read-only ID -> vector env class of every registered task: the shipped ones (their modules load now), then
    any added later (a user's or a test's task), in registration order."""
    for env_id in shipped_tasks():
        task_class(env_id)
    shipped = {env_id: _REGISTRY[env_id] for env_id in shipped_tasks()}
    return MappingProxyType({**shipped, **_REGISTRY})


def registered_ids() -> tuple[str, ...]:
    """Every registered ID, the shipped ones first, without loading any task module."""
    return tuple({**dict.fromkeys(shipped_tasks()), **dict.fromkeys(_REGISTRY)})


def task_class(env_id: str) -> type[NewtonVectorEnv]:
    """The vector env class registered for ``env_id`` (a shipped task's module loads on the first call).

    Raises:
        gymnasium.error.UnregisteredEnv: If ``env_id`` is not registered; the message names the closest registered
            IDs (a bare ``"AntRun-v0"`` suggests ``"steel_envs/AntRun-v0"``).
    """
    cls = _REGISTRY.get(env_id)
    if cls is not None:
        return cls
    shipped = shipped_tasks().get(env_id) if isinstance(env_id, str) else None
    if shipped is not None:
        importlib.import_module(shipped.module)  # its registration line fills the registry
        return _REGISTRY[env_id]
    known = set(registered_ids())
    bare = {i.split("/")[-1].lower(): i for i in known}
    name = str(env_id).split("/")[-1].lower()
    close = [name] if name in bare else difflib.get_close_matches(name, bare, n=2, cutoff=0.75)
    hint = f"; did you mean {' or '.join(repr(bare[c]) for c in close)}?" if close else ""
    raise gym.error.UnregisteredEnv(f"env_id: {env_id!r} is not a registered steel-envs ID{hint}")


ENV_IDS: tuple[str, ...] = tuple(shipped_tasks())
"""Every environment ID this package ships."""

_register_shipped()
