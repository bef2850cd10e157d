"""Adapters from :class:`steel_envs.SteelVectorEnv` to the env contracts of RL libraries.

``import steel_envs`` imports none of them, so the core installs without any RL library; each submodule
needs its own:
``steel_envs.adapters.rsl_rl`` (extra ``train``), ``steel_envs.adapters.sb3`` (extra ``sb3``) and
``steel_envs.adapters.skrl`` (extra ``skrl``).
"""

from __future__ import annotations

from typing import Any


def require_same_step(env: Any, library: str) -> None:
    """Raise ValueError unless ``env`` autoresets in the same step, the contract these libraries assume
    (they never call ``reset`` after the first one)."""
    mode = env.autoreset_mode.value
    if mode != "SameStep":
        raise ValueError(f"env: {library} needs autoreset_mode='SameStep', got {mode!r}")
