"""How many CPU processes to split the worlds over: ``--shards auto`` of the CLI commands and
``make_vec(..., num_shards="auto")``.

Warp's CPU kernels run on one thread, so one env uses one core; :class:`steel_envs.ShardedVectorEnv` steps blocks of
worlds in one process per core. A process only pays when it has enough worlds to outweigh the cost of the step's
round trip through the pipes and shared memory: each scene declares that break-even as
``min_worlds_per_shard`` (measured on the project's 2-core CPU, see the scene's value), and ``auto`` takes one
process per available core (``os.sched_getaffinity``) but never fewer worlds per process than that.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

__all__ = ["available_cores", "resolve_shards", "shards_arg"]


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def resolve_shards(
    env_id: str,
    num_envs: int,
    num_shards: int | str | None,
    *,
    device: str | None = None,
    reserve_cores: int = 0,
    env_kwargs: dict[str, Any] | None = None,
) -> tuple[int, str]:
    """The number of processes for ``num_envs`` worlds of ``env_id``, and a one-line reason to print.

    Args:
        env_id: A registered ID.
        num_envs: Number of worlds.
        num_shards: An int >= 1 (taken as is), or ``"auto"`` / None: one process per available core less
            ``reserve_cores``, with at least the scene's ``min_worlds_per_shard`` worlds each; 1 on a GPU, and 1 with
            the reason when the env needs what the sharded env does not serve (pixel observations).
        device: The Warp device the env would run on (None: Warp's preferred).
        reserve_cores: Cores left to other work (a learner in the same process).
        env_kwargs: The env's other keywords (``obs_mode`` decides whether sharding is possible).

    Raises:
        ValueError: On ``num_shards`` that is neither ``"auto"``, None nor an int >= 1.
        gymnasium.error.UnregisteredEnv: On an unknown ID.
    """
    import numpy as np
    import warp as wp

    from steel_envs.registration import task_class

    cls = task_class(env_id)
    if num_shards not in ("auto", None):
        if isinstance(num_shards, (bool, np.bool_)) or not isinstance(num_shards, (int, np.integer)) or num_shards < 1:
            raise ValueError(f"num_shards: expected 'auto' or an int >= 1, got {num_shards!r}")
        return int(num_shards), f"{int(num_shards)} process(es), as asked"
    try:
        cuda = wp.get_device(device).is_cuda
    except Exception:  # not a device: the env's own check names the argument
        cuda = False
    if cuda:
        return 1, "1 process: the worlds run on the GPU"
    if (env_kwargs or {}).get("obs_mode", "state") != "state":
        return 1, "1 process: pixel observations are not served by the sharded env"
    cores = max(1, available_cores() - reserve_cores)
    per_shard = int(cls.min_worlds_per_shard)
    shards = max(1, min(cores, num_envs // per_shard))
    return shards, (
        f"{shards} process(es): {cores} core(s) free, {num_envs} worlds, a process pays from {per_shard} worlds on "
        f"({cls.__name__}.min_worlds_per_shard)"
    )


def shards_arg(value: str) -> int | str:
    """The argparse type of ``--shards``: ``"auto"`` or an int >= 1.

    Raises:
        argparse.ArgumentTypeError: Otherwise (argparse prints it in one line and exits 2).
    """
    if value == "auto":
        return value
    try:
        shards = int(value)
    except ValueError:
        shards = 0
    if shards < 1:
        raise argparse.ArgumentTypeError(f"expected 'auto' or an int >= 1, got {value!r}")
    return shards
