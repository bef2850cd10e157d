"""skrl's torch env wrapper over a :class:`~steel_envs.NewtonVectorEnv` (skrl >= 1.4)."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import torch
from skrl.envs.wrappers.torch.base import Wrapper

from steel_envs.adapters import require_same_step
from steel_envs.core import NewtonVectorEnv

__all__ = ["SkrlWrapper"]


class SkrlWrapper(Wrapper):
    """skrl's ``Wrapper`` contract: torch in and out on the env device, rewards and dones shaped (N, 1).

    The env autoresets in the same step (SAME_STEP), as skrl's Isaac Lab wrapper expects, so ``reset`` resets
    only once. Outputs are copies: skrl's trainers keep the previous observation while stepping, and the
    env's own tensors are overwritten every step. ``state()`` is None (no separate critic state, ``state_space``
    None); ``render()`` returns the env's frame; ``info`` is the env's own. skrl's ``set_seed`` does not reseed the
    env: pass ``seed=`` to ``make_vec``. The trainers log only scalar entries of ``info[environment_info]``;
    ``info["episode"]`` holds per-world tensors, so they log nothing from it with more than one world, and with one
    world the last ended episode's values on every step (skrl's agents log returns and lengths themselves).

    Args:
        env: The vector env, in SAME_STEP autoreset mode.

    Raises:
        ValueError: If the env's autoreset mode is not SAME_STEP.
    """

    def __init__(self, env: NewtonVectorEnv) -> None:
        require_same_step(env, "skrl")
        super().__init__(env)
        self._device = env.torch_device
        self._observations: torch.Tensor | None = None

    @property
    def observation_space(self) -> gymnasium.Space:
        """Observation space of one world."""
        return self._unwrapped.single_observation_space

    @property
    def action_space(self) -> gymnasium.Space:
        """Action space of one world."""
        return self._unwrapped.single_action_space

    def reset(self) -> tuple[torch.Tensor, dict[str, Any]]:
        """Reset all worlds the first time; later calls return the current observations (autoreset)."""
        if self._observations is None:
            obs, info = self._env.reset()
            self._observations = obs.clone()
            return self._observations, info
        return self._observations, {}

    def step(self, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, Any]:
        """Step all worlds; returns obs (N, obs_dim), reward, terminated, truncated (N, 1) and the env's info."""
        obs, reward, terminated, truncated, info = self._env.step(actions.detach().float())
        self._observations = obs.clone()
        return (
            self._observations,
            reward.clone().view(-1, 1),
            terminated.clone().view(-1, 1),
            truncated.clone().view(-1, 1),
            info,
        )

    def state(self) -> torch.Tensor | None:
        """No separate critic state."""
        return None

    def render(self, *args: Any, **kwargs: Any) -> np.ndarray | None:
        """The vector env's frame (skrl's trainers call this every ``render_interval`` steps unless ``headless``).

        Returns:
            World 0, or the first ``render_num_worlds`` worlds tiled, as an (H, W, 3) uint8 numpy array with
            ``render_mode="rgb_array"``; None without a render mode.

        Raises:
            TypeError: On any argument (the env's render takes none).
            RuntimeError: If the env is closed.
        """
        if args or kwargs:
            raise TypeError(f"render: takes no arguments, got {args!r}, {kwargs!r}")
        return self._env.render()

    def close(self) -> None:
        """Close the env (idempotent); later steps raise RuntimeError."""
        self._env.close()
