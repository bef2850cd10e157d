"""Adapters from :class:`steel_envs.SteelVectorEnv` to the env contracts of RL libraries.

Each submodule imports its library lazily, so the core installs without any of them:
``steel_envs.adapters.rsl_rl`` (extra ``train``), ``steel_envs.adapters.sb3`` (extra ``sb3``) and
``steel_envs.adapters.skrl`` (extra ``skrl``).
"""
