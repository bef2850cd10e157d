"""Tasks: observations, rewards and terminations on a scene; this module registers their Gymnasium IDs.

Only this table is imported when ``steel_envs`` is imported; the task modules load on first use.
"""

from __future__ import annotations

import gymnasium as gym

__all__ = ["ENV_IDS", "register_envs"]

# ID -> (module, vector env class, single-world adapter class, max_episode_steps)
_TASKS: dict[str, tuple[str, str, str, int]] = {
    "steel_envs/CartpoleBalance-v0": (
        "steel_envs.tasks.cartpole_balance",
        "CartpoleBalanceEnv",
        "CartpoleBalanceSingleEnv",
        500,
    ),
    "steel_envs/CartpoleSwingup-v0": (
        "steel_envs.tasks.cartpole_swingup",
        "CartpoleSwingupEnv",
        "CartpoleSwingupSingleEnv",
        500,
    ),
    "steel_envs/AntRun-v0": ("steel_envs.tasks.ant_run", "AntRunEnv", "AntRunSingleEnv", 1000),
    "steel_envs/HumanoidRun-v0": ("steel_envs.tasks.humanoid_run", "HumanoidRunEnv", "HumanoidRunSingleEnv", 1000),
    "steel_envs/PushCube-v0": ("steel_envs.tasks.push_cube", "PushCubeEnv", "PushCubeSingleEnv", 250),
    "steel_envs/QuadrupedVelocity-v0": (
        "steel_envs.tasks.quadruped_velocity",
        "QuadrupedVelocityEnv",
        "QuadrupedVelocitySingleEnv",
        1000,
    ),
    "steel_envs/ClothFold-v0": ("steel_envs.tasks.cloth_fold", "ClothFoldEnv", "ClothFoldSingleEnv", 100),
    "steel_envs/SoftPush-v0": ("steel_envs.tasks.soft_push", "SoftPushEnv", "SoftPushSingleEnv", 200),
}

ENV_IDS: tuple[str, ...] = tuple(_TASKS)
"""Every registered environment ID."""


def register_envs() -> None:
    """Register every ID with Gymnasium (idempotent): ``gym.make`` and ``gym.make_vec`` both work."""
    for env_id, (module, vector_cls, single_cls, max_steps) in _TASKS.items():
        if env_id in gym.registry:
            continue
        gym.register(
            id=env_id,
            entry_point=f"{module}:{single_cls}",
            vector_entry_point=f"{module}:{vector_cls}",
            max_episode_steps=max_steps,
        )
