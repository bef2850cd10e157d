"""Tasks: observations, rewards and terminations on a scene. Each task module registers its ID next to its code.

A task module ends with one line, e.g. ``AntRunSingleEnv = register_task("steel_envs/AntRun-v0", AntRunEnv)``.
Importing this package imports every module in it (in name order), so a new task file is picked up without
editing any list; the time limit is read from the class (``default_max_episode_steps``). Importing the task
modules defines their Warp functions and kernels without compiling them (about 0.1 s in all).
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
from collections.abc import Mapping
from types import MappingProxyType

import gymnasium as gym

from steel_envs.core import NewtonVectorEnv
from steel_envs.single_env import SteelSingleEnv, single_world

__all__ = ["ENV_IDS", "register_task", "registry", "task_class"]

_REGISTRY: dict[str, type[NewtonVectorEnv]] = {}


def register_task(env_id: str, vector_cls: type[NewtonVectorEnv]) -> type[SteelSingleEnv]:
    """Register ``env_id`` with Gymnasium: ``gym.make_vec`` builds ``vector_cls``, ``gym.make`` a 1-world adapter.

    The time limit of ``gym.make``'s ``TimeLimit`` is ``vector_cls.default_max_episode_steps``. Registering the same
    class again under the same ID does nothing (modules may be reloaded).

    Args:
        env_id: ``"namespace/Name-vN"``, e.g. ``"steel_envs/AntRun-v0"``.
        vector_cls: The task's :class:`~steel_envs.NewtonVectorEnv` subclass (a SteelVectorEnv or VBDVectorEnv scene).

    Returns:
        The single-world adapter class (a :class:`~steel_envs.SteelSingleEnv`), Gymnasium's ``entry_point``; the
        task module keeps it as ``<Name>SingleEnv``.

    Raises:
        TypeError: If ``vector_cls`` is not a :class:`~steel_envs.NewtonVectorEnv` subclass.
        ValueError: If ``env_id`` is already registered for another class.
    """
    if not (isinstance(vector_cls, type) and issubclass(vector_cls, NewtonVectorEnv)):
        raise TypeError(
            f"vector_cls: expected a NewtonVectorEnv subclass (SteelVectorEnv, VBDVectorEnv), got {vector_cls!r}"
        )
    known = _REGISTRY.get(env_id)
    if known is not None and known.__qualname__ != vector_cls.__qualname__:
        raise ValueError(f"env_id: {env_id!r} is already registered for {known.__module__}.{known.__qualname__}")
    single_cls = single_world(vector_cls)
    _REGISTRY[env_id] = vector_cls
    # Callables, not "module:attr" strings: a task defined outside an importable package (a test's) works too.
    gym.register(
        id=env_id,
        entry_point=single_cls,
        vector_entry_point=vector_cls,
        max_episode_steps=vector_cls.default_max_episode_steps,
    )
    return single_cls


def registry() -> Mapping[str, type[NewtonVectorEnv]]:
    """Read-only ID -> vector env class of every task registered through :func:`register_task` so far: the shipped
    ones, then any added later (a user's or a test's task), in registration order."""
    return MappingProxyType(_REGISTRY)


def task_class(env_id: str) -> type[NewtonVectorEnv]:
    """The vector env class registered for ``env_id``.

    Raises:
        gymnasium.error.UnregisteredEnv: If ``env_id`` is not registered; the message names the closest registered
            IDs (a bare ``"AntRun-v0"`` suggests ``"steel_envs/AntRun-v0"``).
    """
    cls = _REGISTRY.get(env_id)
    if cls is not None:
        return cls
    bare = {i.split("/")[-1].lower(): i for i in _REGISTRY}
    name = str(env_id).split("/")[-1].lower()
    close = [name] if name in bare else difflib.get_close_matches(name, bare, n=2, cutoff=0.75)
    hint = f"; did you mean {' or '.join(repr(bare[c]) for c in close)}?" if close else ""
    raise gym.error.UnregisteredEnv(f"env_id: {env_id!r} is not a registered steel-envs ID{hint}")


for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

ENV_IDS: tuple[str, ...] = tuple(_REGISTRY)
"""Every environment ID this package ships."""
