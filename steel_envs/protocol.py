"""The public surface every steel-envs vector env offers: :class:`steel_envs.NewtonVectorEnv` (one process) and
:class:`steel_envs.ShardedVectorEnv` (worlds over CPU processes) both implement :class:`VectorEnvProtocol`, so
adapters, training and evaluation take either."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import AutoresetMode

__all__ = ["VectorEnvProtocol"]


@runtime_checkable
class VectorEnvProtocol(Protocol):
    """A Gymnasium vector env of N worlds with torch tensors on ``torch_device``.

    Attributes:
        num_envs: Number of worlds N.
        single_observation_space, single_action_space, observation_space, action_space: Gymnasium spaces.
        autoreset_mode: Gymnasium's ``AutoresetMode``.
        render_mode: None or ``"rgb_array"``.
        config: The task's config (a :class:`steel_envs.TaskConfig` subclass).
        solver_options: The solver options in effect (:class:`steel_envs.SteelSolverOptions` or
            :class:`steel_envs.VBDSolverOptions`).
        reward_terms: Names of the reward terms (``info["reward_<name>"]``).
        terminations: The task's :class:`steel_envs.TerminationTerm` declarations (``info["<name>"]``).
        metrics: The task's :class:`steel_envs.EpisodeMetric` declarations (``info["episode"]["<name>"]``).
        max_episode_steps: Time limit [control steps].
        episode_length: Control steps of each world's current episode, (num_envs,) int32 (read it; set it with
            ``set_episode_length``).
        control_dt: Time of one control step [s].
        torch_device: Where the returned tensors live.
    """

    num_envs: int
    single_observation_space: gym.Space
    single_action_space: gym.Space
    observation_space: gym.Space
    action_space: gym.Space
    autoreset_mode: AutoresetMode
    render_mode: str | None
    config: Any
    solver_options: Any
    reward_terms: tuple[str, ...]
    terminations: tuple[Any, ...]
    metrics: tuple[Any, ...]
    max_episode_steps: int
    episode_length: torch.Tensor
    control_dt: float
    torch_device: torch.device

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[torch.Tensor, dict[str, Any]]:
        """Reset all worlds or ``options["reset_mask"]``; see :meth:`steel_envs.NewtonVectorEnv.reset`."""
        ...

    def step(
        self, actions: torch.Tensor | np.ndarray
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, dict[str, Any]]:
        """One control step of every world; see :meth:`steel_envs.NewtonVectorEnv.step`."""
        ...

    def render(self) -> np.ndarray | None:
        """A frame of the first ``render_num_worlds`` worlds, or None without ``render_mode``."""
        ...

    def set_episode_length(self, lengths: torch.Tensor | np.ndarray | Sequence[int]) -> None:
        """Each world's step counter of its current episode; see
        :meth:`steel_envs.NewtonVectorEnv.set_episode_length`."""
        ...

    def set_world_parameters(
        self,
        *,
        friction_scale: torch.Tensor | np.ndarray | Sequence[float] | None = None,
        mass_scale: torch.Tensor | np.ndarray | Sequence[float] | None = None,
    ) -> None:
        """Per-world friction and mass factors; raises ValueError where the solver has no per-world updates."""
        ...

    def close(self) -> None:
        """Release the env (device memory, worker processes)."""
        ...
