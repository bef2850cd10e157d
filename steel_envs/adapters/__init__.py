"""Adapters from a steel-envs vector env (:class:`steel_envs.VectorEnvProtocol`) to the env contracts of RL
libraries.

``import steel_envs`` imports none of them, so the core installs without any RL library; each submodule
needs its own:
``steel_envs.adapters.rsl_rl`` (extra ``train``), ``steel_envs.adapters.sb3`` (extra ``sb3``),
``steel_envs.adapters.skrl`` (extra ``skrl``) and ``steel_envs.adapters.torchrl`` (extra ``torchrl``). Their
classes are also attributes of this package, imported on first access (``from steel_envs.adapters import
TorchRLEnv``).
"""

from __future__ import annotations

from typing import Any


def require_same_step(env: Any, library: str) -> None:
    """Raise ValueError unless ``env`` autoresets in the same step, the contract these libraries assume
    (they never call ``reset`` after the first one)."""
    mode = env.autoreset_mode.value
    if mode != "SameStep":
        raise ValueError(f"env: {library} needs autoreset_mode='SameStep', got {mode!r}")


# Class name -> submodule; the submodule (and its RL library) is imported on first access (PEP 562).
_LAZY = {"RslRlVecEnv": "rsl_rl", "Sb3VecEnv": "sb3", "SkrlWrapper": "skrl", "TorchRLEnv": "torchrl"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
