"""Stable-Baselines3's ``VecEnv`` over a :class:`~steel_envs.SteelVectorEnv` (numpy at the boundary)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvStepReturn

from steel_envs.adapters import require_same_step
from steel_envs.vector_env import SteelVectorEnv

__all__ = ["Sb3VecEnv"]


class Sb3VecEnv(VecEnv):
    """SB3's vectorized-env contract: numpy arrays in and out, same-step reset, ``terminal_observation``.

    - ``step_wait`` returns obs (N, obs_dim) float32, rewards (N,) float32, dones (N,) bool and one info dict
      per world; a world that ended has ``terminal_observation`` (its last observation),
      ``TimeLimit.truncated`` (truncated and not terminated: SB3 then bootstraps) and ``episode``
      (``r``, ``l``, ``t``) as SB3's Monitor writes it, so ``ep_info_buffer`` fills without a Monitor.
    - Every step copies the observations to the host (the SB3 boundary is numpy).

    Args:
        env: The vector env, in SAME_STEP autoreset mode.

    Raises:
        ValueError: If the env's autoreset mode is not SAME_STEP.
    """

    def __init__(self, env: SteelVectorEnv) -> None:
        require_same_step(env, "SB3")
        self.env = env
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)
        self._actions: torch.Tensor | None = None
        self._elapsed = 0.0

    def reset(self) -> np.ndarray:
        """Reset all worlds (with the seed given to ``seed()``, if any)."""
        seed = self._seeds[0] if self._seeds and self._seeds[0] is not None else None
        obs, _ = self.env.reset(seed=seed)
        self._reset_seeds()
        self._reset_options()
        return obs.cpu().numpy().copy()

    def step_async(self, actions: np.ndarray) -> None:
        """Store the actions (N, act_dim) for ``step_wait``."""
        self._actions = torch.as_tensor(np.asarray(actions, np.float32), device=self.env.torch_device)

    def step_wait(self) -> VecEnvStepReturn:
        """Step all worlds with the stored actions; see the class docstring."""
        obs, reward, terminated, truncated, info = self.env.step(self._actions)
        self._elapsed += self.env.control_dt
        dones = (terminated | truncated).cpu().numpy().copy()
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            final = info["final_obs"].cpu().numpy()
            time_out = (truncated & ~terminated).cpu().numpy()
            ep_r = info["episode"]["r"].cpu().numpy()
            ep_l = info["episode"]["l"].cpu().numpy()
            for w in np.flatnonzero(dones):
                infos[w] = {
                    "terminal_observation": final[w].copy(),
                    "TimeLimit.truncated": bool(time_out[w]),
                    "episode": {"r": float(ep_r[w]), "l": int(ep_l[w]), "t": round(self._elapsed, 6)},
                }
        return obs.cpu().numpy().copy(), reward.cpu().numpy().copy(), dones, infos

    def close(self) -> None:
        """Close the env."""
        self.env.close()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The vector env's attribute, once per selected world."""
        return [getattr(self.env, attr_name)] * len(self._get_indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute of the vector env (shared by all worlds)."""
        setattr(self.env, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **kwargs: Any) -> list:
        """Call a method of the vector env once; its result is repeated per selected world."""
        result = getattr(self.env, method_name)(*method_args, **kwargs)
        return [result] * len(self._get_indices(indices))

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        """No world is wrapped in a Gymnasium wrapper."""
        return [False] * len(self._get_indices(indices))

    def get_images(self) -> Sequence[np.ndarray | None]:
        """No rendering yet."""
        return [None] * self.num_envs
