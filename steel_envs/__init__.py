"""steel-envs: vectorized Gymnasium environments on NVIDIA Newton's SolverSteel and SolverVBD, zero-copy to torch.

``import steel_envs`` registers the IDs (``steel_envs.ENV_IDS``) with Gymnasium::

    import gymnasium as gym
    import steel_envs

    envs = gym.make_vec("steel_envs/AntRun-v0", num_envs=64, vectorization_mode="vector_entry_point")
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from .core import NewtonVectorEnv
from .protocol import VectorEnvProtocol
from .sharded import ShardedVectorEnv
from .single_env import SteelSingleEnv
from .solver_options import SteelSolverOptions, VBDSolverOptions
from .spec import EpisodeMetric, ObservationBlock
from .tasks import ENV_IDS, register_task, registry, task_class
from .vbd_env import VBDVectorEnv
from .vector_env import InitialStateSpec, RewardTerm, SteelVectorEnv, TaskConfig, TerminationTerm

__all__ = [
    "ENV_IDS",
    "EpisodeMetric",
    "InitialStateSpec",
    "NewtonVectorEnv",
    "ObservationBlock",
    "RewardTerm",
    "ShardedVectorEnv",
    "SteelSingleEnv",
    "SteelSolverOptions",
    "SteelVectorEnv",
    "TaskConfig",
    "TerminationTerm",
    "VBDSolverOptions",
    "VBDVectorEnv",
    "VectorEnvProtocol",
    "evaluate",
    "make",
    "make_vec",
    "register_task",
    "registry",
    "task_class",
]


def make_vec(
    env_id: str, num_envs: int = 1, *, num_shards: int | str | None = None, **kwargs: Any
) -> NewtonVectorEnv | ShardedVectorEnv:
    """Create the vector env of ``env_id``: the same object as ``gym.make_vec(..., "vector_entry_point")``.

    Args:
        env_id: A registered ID, e.g. ``"steel_envs/AntRun-v0"``.
        num_envs: Number of worlds.
        num_shards: With more than 1, the worlds are split over that many CPU processes behind one
            :class:`ShardedVectorEnv` (Warp's CPU kernels use one core per process); ``"auto"``: one per available
            core with at least the scene's ``min_worlds_per_shard`` worlds each (:mod:`steel_envs.sharding`);
            None (default): one process, a library never starts processes unasked.
        **kwargs: Keyword arguments of :class:`NewtonVectorEnv` and the task's config fields.

    Raises:
        gymnasium.error.UnregisteredEnv: If ``env_id`` is not registered (the message names the closest IDs).
    """
    task_class(env_id)  # an unknown ID raises here, naming the closest registered ones
    if num_shards is not None:
        from .sharding import resolve_shards

        num_shards, _ = resolve_shards(env_id, num_envs, num_shards, device=kwargs.get("device"), env_kwargs=kwargs)
    if num_shards is not None and num_shards > 1:
        return ShardedVectorEnv(env_id, num_envs, num_shards, **kwargs)
    return gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", **kwargs).unwrapped


def make(env_id: str, **kwargs: Any) -> gym.Env:
    """Create the single-world ``gymnasium.Env`` of ``env_id`` (numpy in and out), as ``gym.make`` does."""
    return gym.make(env_id, **kwargs)


def evaluate(env_id: str, policies: list[str], **kwargs: Any):
    """Evaluate policies on ``env_id`` with confidence intervals; see :func:`steel_envs.training.evaluate.evaluate`
    (needs the ``train`` extra for checkpoints and ONNX files)."""
    from .training.evaluate import evaluate as _evaluate

    return _evaluate(env_id, policies, **kwargs)
