"""rsl_rl's ``VecEnv`` contract over a :class:`~steel_envs.SteelVectorEnv` (rsl-rl-lib >= 5)."""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable
from typing import Any

import torch
from rsl_rl.env import VecEnv
from tensordict import TensorDict

from steel_envs.adapters import require_same_step
from steel_envs.vector_env import SteelVectorEnv

__all__ = ["RslRlVecEnv"]


class RslRlVecEnv(VecEnv):
    """Present a SAME_STEP-autoreset :class:`SteelVectorEnv` as an rsl_rl ``VecEnv``.

    - Observations are the TensorDict ``{"policy": obs}`` (num_envs, obs_dim) float32; rsl_rl's default
      ``obs_groups`` maps both actor and critic to it.
    - ``dones = terminated | truncated`` (int64); ``extras["time_outs"] = truncated & ~terminated``, so PPO
      bootstraps the value of episodes cut by the time limit or by a constraint overflow.
    - ``extras["log"]`` holds, per ended episode, ``Episode_Reward/<term>`` (the term's episode sum) and
      ``Episode_Termination/<cause>`` (0 or 1), which rsl_rl averages per iteration into TensorBoard.
    - The env's outputs are views of its buffers, overwritten every step; rsl_rl keeps references to
      observations across a step, so this adapter hands it copies.

    Args:
        env: The vector env, in SAME_STEP autoreset mode.
        on_episodes: Optional callback ``(returns, lengths)`` with the returns and lengths (1-D tensors)
            of the episodes that ended in each step, for progress bars and early stopping.

    Raises:
        ValueError: If the env's autoreset mode is not SAME_STEP (rsl_rl never calls reset).
    """

    def __init__(
        self, env: SteelVectorEnv, on_episodes: Callable[[torch.Tensor, torch.Tensor], None] | None = None
    ) -> None:
        require_same_step(env, "rsl_rl")
        self.env = env
        self.num_envs = env.num_envs
        self.num_actions = env.action_dim
        self.max_episode_length = env.max_episode_steps
        self.device = env.torch_device
        self.cfg = {
            "env_id": env.spec.id if env.spec is not None else type(env).__name__,
            "num_envs": env.num_envs,
            "task": dataclasses.asdict(env.config),
            "solver_options": {k: str(v) for k, v in env.solver_options.as_kwargs().items()},
        }
        self.on_episodes = on_episodes
        self.recent_returns: deque[float] = deque(maxlen=100)
        obs, _ = env.reset()
        self._obs = obs.clone()

    @property
    def episode_length_buf(self) -> torch.Tensor:
        """Steps taken in each world's current episode, (num_envs,) int32, a view of the env's counter."""
        return self.env._episode_length_t

    @episode_length_buf.setter
    def episode_length_buf(self, value: torch.Tensor) -> None:
        # rsl_rl's init_at_random_ep_len spreads the time limits of the first episodes this way.
        self.env._episode_length_t.copy_(value.clamp(0, self.env.max_episode_steps - 1))

    def get_observations(self) -> TensorDict:
        """The current observations as ``TensorDict({"policy": obs})``."""
        return TensorDict({"policy": self._obs.clone()}, batch_size=[self.num_envs])

    def step(self, actions: torch.Tensor) -> tuple[TensorDict, torch.Tensor, torch.Tensor, dict[str, Any]]:
        """Step the env; see the class docstring for the outputs."""
        obs, reward, terminated, truncated, info = self.env.step(actions.float())
        self._obs = obs.clone()
        done = terminated | truncated
        extras: dict[str, Any] = {"time_outs": truncated & ~terminated}
        ended = info["_episode"]
        if bool(ended.any()):
            episode = info["episode"]
            log = {
                f"Episode_Reward/{k[len('reward_') :]}": v[ended] for k, v in episode.items() if k.startswith("reward_")
            }
            log["Episode_Termination/terminated"] = terminated[ended].float()
            log["Episode_Termination/time_out"] = (truncated & ~terminated)[ended].float()
            log["Episode_Termination/constraint_overflow"] = episode["constraint_overflow"][ended].float()
            log["Episode_Termination/nonfinite_state"] = info["nonfinite_state"][ended].float()
            extras["log"] = log
            returns = episode["r"][ended].clone()
            self.recent_returns.extend(returns.tolist())
            if self.on_episodes is not None:
                self.on_episodes(returns, episode["l"][ended].clone())
        return (
            TensorDict({"policy": self._obs.clone()}, batch_size=[self.num_envs]),
            reward.clone(),
            done.long(),
            extras,
        )

    def close(self) -> None:
        """Close the wrapped env."""
        self.env.close()
