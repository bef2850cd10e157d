"""Single-world ``gymnasium.Env`` adapter of a vector env, with numpy in and out (what ``gym.make`` returns)."""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import torch

from .core import NewtonVectorEnv

__all__ = ["SteelSingleEnv", "single_world"]

_NO_TIME_LIMIT = 2**31 - 1


class SteelSingleEnv(gym.Env):
    """One world of a :class:`NewtonVectorEnv` as a ``gymnasium.Env`` with numpy observations and actions.

    The vector env runs with ``num_envs=1`` and autoreset disabled, so ``reset`` and ``step`` have the
    single-env semantics of Gymnasium. Observations are float32 arrays of shape (obs_dim,) copied off
    the device; ``info`` holds ``reward_<term>`` floats, ``constraint_overflow`` and ``nonfinite_state``
    bools.

    As with Gymnasium's own environments, the time limit is the ``TimeLimit`` wrapper that ``gym.make``
    adds (the registered ``max_episode_steps``, or the one given to ``gym.make``); the env itself has
    none unless ``max_episode_steps`` is passed to its constructor directly.

    Args:
        **kwargs: Keyword arguments of the vector env (``device``, ``seed``, ``max_episode_steps``,
            ``solver_options``, task config fields), ``num_envs`` and ``autoreset_mode`` excepted.

    Raises:
        TypeError: If ``num_envs`` or ``autoreset_mode`` is given.
    """

    vector_cls: ClassVar[type[NewtonVectorEnv]]

    def __init__(self, **kwargs: Any) -> None:
        for key in ("num_envs", "autoreset_mode"):
            if key in kwargs:
                raise TypeError(f"{type(self).__name__}: {key} is fixed for a single-world env; use gym.make_vec")
        kwargs.setdefault("max_episode_steps", _NO_TIME_LIMIT)
        self.vector_env = self.vector_cls(num_envs=1, autoreset_mode="Disabled", **kwargs)
        self.observation_space = self.vector_env.single_observation_space
        self.action_space = self.vector_env.single_action_space
        self.render_mode = self.vector_env.render_mode

    @property
    def config(self) -> Any:
        """The task's config (the underlying vector env's ``config``)."""
        return self.vector_env.config

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """Reset the world; ``seed`` reseeds it (same seed, same initial state).

        Raises:
            ValueError: On a seed that is not None or an int >= 0, or non-empty ``options``.
        """
        if seed is not None:
            if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
                raise ValueError(f"seed: expected None or an int >= 0, got {seed!r}")
            seed = int(seed)
        if options is not None and (not isinstance(options, dict) or options):
            raise ValueError(f"options: a single-world env takes no options (None or {{}}), got {options!r}")
        super().reset(seed=seed)
        obs, info = self.vector_env.reset(seed=seed)
        return obs[0].cpu().numpy().copy(), self._info(info)

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Step the world with ``action`` of shape (action_dim,), any real dtype; clipped to [-1, 1].

        Raises:
            ValueError: On a wrong shape or dtype or non-finite entries; nothing is stepped then.
        """
        if isinstance(action, torch.Tensor):
            action = action.detach().cpu().numpy()
        action = np.asarray(action)
        if action.shape != self.action_space.shape:
            raise ValueError(f"action: expected shape {self.action_space.shape}, got {action.shape}")
        if action.dtype.kind not in "fiu":
            raise ValueError(f"action: expected a real dtype, got {action.dtype}")
        if not np.isfinite(action).all():
            raise ValueError(f"action: expected finite values, got {action.tolist()}")
        obs, reward, terminated, truncated, info = self.vector_env.step(action[None])
        return (
            obs[0].cpu().numpy().copy(),
            float(reward[0]),
            bool(terminated[0]),
            bool(truncated[0]),
            self._info(info),
        )

    def render(self) -> np.ndarray | None:
        """The world as an (H, W, 3) uint8 frame with ``render_mode="rgb_array"``, else None."""
        return self.vector_env.render()

    def close(self) -> None:
        """Close the underlying vector env."""
        self.vector_env.close()

    @staticmethod
    def _info(info: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in info.items():
            if isinstance(value, torch.Tensor) and not key.startswith("_") and key != "final_obs":
                out[key] = value[0].item()
        return out


def single_world(vector_cls: type[NewtonVectorEnv]) -> type[SteelSingleEnv]:
    """Make the single-world adapter class of ``vector_cls`` (the ``entry_point`` of its Gymnasium ID)."""
    return type(
        vector_cls.__name__.removesuffix("Env") + "SingleEnv",
        (SteelSingleEnv,),
        {
            "vector_cls": vector_cls,
            # Class-level, as gym.make reads the render modes before constructing the env.
            "metadata": {
                "render_modes": ["rgb_array"],
                "render_fps": round(1.0 / (vector_cls.physics_dt * vector_cls.decimation)),
            },
            "__doc__": f"Single-world adapter of :class:`{vector_cls.__name__}`.\n\n" + (SteelSingleEnv.__doc__ or ""),
            "__module__": vector_cls.__module__,
        },
    )
