"""steel-envs: vectorized Gymnasium environments on NVIDIA Newton's SolverSteel and SolverVBD, zero-copy to torch.

``import steel_envs`` registers the shipped IDs (``steel_envs.ENV_IDS``) with Gymnasium, light: a task's module,
Newton and Warp's kernels load when an env is made::

    import gymnasium as gym
    import steel_envs

    envs = gym.make_vec("steel_envs/AntRun-v0", num_envs=64, vectorization_mode="vector_entry_point")

The names below are this package's public API; each is imported from its module on first access.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .factory import make, make_vec
from .registration import ENV_IDS, register_task, registry, task_class

if TYPE_CHECKING:
    from .core import NewtonVectorEnv
    from .protocol import VectorEnvProtocol
    from .sharded import ShardedVectorEnv
    from .sharding import ShardError
    from .single_env import SteelSingleEnv
    from .solver_options import SteelSolverOptions, VBDSolverOptions
    from .spec import EpisodeMetric, InitialStateSpec, ObservationBlock, RewardTerm, TaskConfig, TerminationTerm
    from .train_config import PpoConfig, SacConfig
    from .vbd_env import VBDVectorEnv
    from .vector_env import SteelVectorEnv

__all__ = [
    "ENV_IDS",
    "EpisodeMetric",
    "InitialStateSpec",
    "NewtonVectorEnv",
    "ObservationBlock",
    "PpoConfig",
    "RewardTerm",
    "SacConfig",
    "ShardError",
    "ShardedVectorEnv",
    "SteelSingleEnv",
    "SteelSolverOptions",
    "SteelVectorEnv",
    "TaskConfig",
    "TerminationTerm",
    "VBDSolverOptions",
    "VBDVectorEnv",
    "VectorEnvProtocol",
    "make",
    "make_vec",
    "register_task",
    "registry",
    "task_class",
]

# Name -> module of this package that defines it, imported on first access (PEP 562): the core (Newton, Warp, torch)
# loads when it is used, not with the registry.
_LAZY = {
    "EpisodeMetric": "spec",
    "InitialStateSpec": "spec",
    "ObservationBlock": "spec",
    "RewardTerm": "spec",
    "TaskConfig": "spec",
    "TerminationTerm": "spec",
    "NewtonVectorEnv": "core",
    "PpoConfig": "train_config",
    "SacConfig": "train_config",
    "ShardedVectorEnv": "sharded",
    "ShardError": "sharding",
    "SteelSingleEnv": "single_env",
    "SteelSolverOptions": "solver_options",
    "VBDSolverOptions": "solver_options",
    "SteelVectorEnv": "vector_env",
    "VBDVectorEnv": "vbd_env",
    "VectorEnvProtocol": "protocol",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
