"""Making environments: :func:`make_vec` (one process, or worlds split over CPU processes) and :func:`make`."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from .registration import task_class

__all__ = ["make", "make_vec"]


def make_vec(
    env_id: str, num_envs: int = 1, *, num_shards: int | str | None = None, worker_timeout: float = 600.0, **kwargs: Any
):
    """Create the vector env of ``env_id``: the same object as ``gym.make_vec(..., "vector_entry_point")``.

    Args:
        env_id: A registered ID, e.g. ``"steel_envs/AntRun-v0"``.
        num_envs: Number of worlds.
        num_shards: With more than 1, the worlds are split over that many CPU processes behind one
            :class:`~steel_envs.sharded.ShardedVectorEnv` (Warp's CPU kernels use one core per process); ``"auto"``:
            one per available core with at least the scene's ``min_worlds_per_shard`` worlds each
            (:mod:`steel_envs.sharding`); None (default): one process, a library never starts processes unasked.
        worker_timeout: With shards, the longest wait for a worker's answer [s] before
            :class:`~steel_envs.sharded.ShardError` (default 600); unused in one process.
        **kwargs: Keyword arguments of :class:`~steel_envs.core.NewtonVectorEnv` and the task's config fields.

    Returns:
        A :class:`~steel_envs.core.NewtonVectorEnv`, or a :class:`~steel_envs.sharded.ShardedVectorEnv`.

    Raises:
        gymnasium.error.UnregisteredEnv: If ``env_id`` is not registered (the message names the closest IDs).
    """
    if num_shards is not None and num_shards != 1:
        from .sharding import refuse_in_a_spawning_worker

        refuse_in_a_spawning_worker()  # first: a worker importing a script without a __main__ guard stops at once
    task_class(env_id)  # an unknown ID raises here, naming the closest registered ones
    if num_shards is not None:
        from .sharding import resolve_shards

        num_shards, _ = resolve_shards(env_id, num_envs, num_shards, device=kwargs.get("device"), env_kwargs=kwargs)
    if num_shards is not None and num_shards > 1:
        from .sharded import ShardedVectorEnv

        return ShardedVectorEnv(env_id, num_envs, num_shards, worker_timeout=worker_timeout, **kwargs)
    return gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", **kwargs).unwrapped


def make(env_id: str, **kwargs: Any) -> gym.Env:
    """Create the single-world ``gymnasium.Env`` of ``env_id`` (numpy in and out), as ``gym.make`` does."""
    return gym.make(env_id, **kwargs)
