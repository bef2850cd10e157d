"""Stable-Baselines3's ``VecEnv`` over a :class:`~steel_envs.NewtonVectorEnv` (numpy at the boundary)."""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvStepReturn

from steel_envs.adapters import require_same_step
from steel_envs.core import NewtonVectorEnv

__all__ = ["Sb3VecEnv"]


class Sb3VecEnv(VecEnv):
    """SB3's vectorized-env contract: numpy arrays in and out, same-step reset, ``terminal_observation``.

    - ``step_wait`` returns obs (N, obs_dim) float32, rewards (N,) float32, dones (N,) bool and one info dict
      per world; a world that ended has ``terminal_observation`` (its last observation),
      ``TimeLimit.truncated`` (truncated and not terminated: SB3 then bootstraps) and ``episode``
      (``r``, ``l``, ``t``) as SB3's ``Monitor`` writes it, so ``ep_info_buffer`` fills without a Monitor
      (``env_is_wrapped(Monitor)`` is therefore True, and ``evaluate_policy`` reads these true returns even under
      ``VecNormalize``).
    - Every step copies the observations to the host (the SB3 boundary is numpy).
    - The N worlds are one vector env, not N env objects. ``get_attr``, ``set_attr`` and ``env_method`` map the
      vector env's members onto the worlds: a torch tensor or numpy array whose first dimension is N is
      per-world (world ``i`` gets row ``i``, as numpy); any other value is shared by every world. Per-world
      methods: ``render`` (world ``i``'s frame) and ``reset`` (resets only the selected worlds).
    - ``get_images`` renders one ``(H, W, 3)`` uint8 frame per world at the env's ``render_size`` (Newton's
      ``SensorCamera``, every world, N x H x W x 3 bytes per call); ``render()`` tiles them (SB3's base class),
      which is what ``VecVideoRecorder`` records. ``metadata["render_fps"]`` is ``1 / control_dt``.

    Args:
        env: The vector env, in SAME_STEP autoreset mode.

    Raises:
        ValueError: If the env's autoreset mode is not SAME_STEP.
    """

    def __init__(self, env: NewtonVectorEnv) -> None:
        require_same_step(env, "SB3")
        self.env = env
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)
        self.metadata["render_fps"] = env.metadata.get("render_fps") or 1.0 / env.control_dt
        self._actions: torch.Tensor | None = None
        self._elapsed = 0.0
        self._renderer = None

    # ------------------------------------------------------------------ stepping

    def reset(self) -> np.ndarray:
        """Reset all worlds and return their observations (N, obs_dim) float32.

        The seed given to :meth:`seed` (if any) seeds this reset; otherwise the worlds' random streams continue.
        """
        seed = self._seeds[0]
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

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seed the next :meth:`reset`. The worlds share one seed: world ``w``'s random stream derives from
        ``(seed, w)`` (see ``NewtonVectorEnv.reset``).

        Args:
            seed: An int >= 0, or None to draw one (as SB3 does).

        Returns:
            ``[seed] * num_envs``, the seed each world's stream derives from.

        Raises:
            ValueError: If ``seed`` is not None or an int >= 0.
        """
        if seed is None:
            seed = int(np.random.randint(0, np.iinfo(np.uint32).max, dtype=np.uint32))
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
            raise ValueError(f"seed: expected None or an int >= 0, got {seed!r}")
        self._seeds = [int(seed)] * self.num_envs
        return list(self._seeds)

    def set_options(self, options: list[dict] | dict | None = None) -> None:
        """Accept SB3's reset options: the worlds take none, so only None or empty dicts.

        Raises:
            ValueError: On a non-empty options dict (``NewtonVectorEnv.reset``'s only option, ``reset_mask``, is a
                vector-level one: use ``env_method("reset", indices=...)`` to reset some worlds).
        """
        given = [options] if isinstance(options, dict) or options is None else list(options)
        if any(o for o in given):
            raise ValueError(f"options: the worlds of a steel-envs env take no reset options, got {options!r}")
        super().set_options(options)

    def close(self) -> None:
        """Close the env (idempotent); later steps raise RuntimeError."""
        self._renderer = None
        self.env.close()

    # ------------------------------------------------------------------ rendering

    def get_images(self) -> Sequence[np.ndarray | None]:
        """One frame per world, ``(H, W, 3)`` uint8 with ``(W, H)`` the env's ``render_size``.

        Returns:
            The N frames with ``render_mode="rgb_array"``; N Nones (and a warning, as SB3's ``DummyVecEnv``) without.

        Raises:
            RuntimeError: If the env is closed.
        """
        self._check_open()
        if self.render_mode != "rgb_array":
            warnings.warn(
                f"The render mode is {self.render_mode}, but this method assumes it is `rgb_array` to obtain images.",
                stacklevel=2,
            )
            return [None] * self.num_envs
        return list(self._frames())

    def _frames(self) -> np.ndarray:
        """Every world's frame now, (N, H, W, 3) uint8."""
        self._check_open()
        if self._renderer is None:
            from steel_envs.rendering import Renderer

            self._renderer = Renderer(self.env, *self.env.render_size, num_worlds=self.num_envs)
        return self._renderer.frames()

    # ------------------------------------------------------------------ members of the worlds

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The vector env's attribute for each selected world: row ``i`` (numpy) of a per-world tensor or array,
        else the shared value.

        Raises:
            AttributeError: If the env has no such attribute.
            IndexError: On an index outside [0, num_envs).
        """
        idx = self._indices(indices)
        return self._per_world(getattr(self.env, attr_name), idx)

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute for the selected worlds: the selected rows of a per-world tensor or array (``value``
        broadcast to them, e.g. ``set_attr("episode_length", 0, indices=[1])``), else the vector env's attribute.

        Raises:
            NotImplementedError: For a shared (not per-world) attribute and a subset of the worlds: one value serves
                every world, so it cannot differ for some.
            IndexError: On an index outside [0, num_envs).
        """
        idx = self._indices(indices)
        current = getattr(self.env, attr_name, None)
        if self._is_per_world(current):
            if isinstance(current, torch.Tensor):
                current[torch.as_tensor(idx, device=current.device)] = torch.as_tensor(
                    value, dtype=current.dtype, device=current.device
                )
            else:
                current[idx] = value
            return
        if len(set(idx)) != self.num_envs:
            raise NotImplementedError(
                f"set_attr({attr_name!r}, indices={indices!r}): {attr_name!r} is one value shared by every world of "
                "the vector env; set it for all worlds (indices=None)"
            )
        setattr(self.env, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **kwargs: Any) -> list:
        """Call a method for the selected worlds; one result per selected world.

        - ``render``: each selected world's frame, ``(H, W, 3)`` uint8 (None without a render mode).
        - ``reset``: resets only the selected worlds (``reset_mask``), returns ``(obs (obs_dim,) float32, {})`` per
          world; ``seed`` is not accepted here (it would reseed every world's stream), use :meth:`seed`.
        - Any other method acts on the whole vector env, so it runs once and only for all worlds (indices None or
          every index); a per-world result (first dimension N) is split into rows, any other is repeated.

        Raises:
            NotImplementedError: For another method and a subset of the worlds (nothing is called then).
            ValueError: On ``seed`` or another keyword given to ``reset``.
            IndexError: On an index outside [0, num_envs).
            AttributeError: If the env has no such method.
        """
        idx = self._indices(indices)
        if method_name == "render":
            if method_args or kwargs:
                raise ValueError("env_method('render'): a world's render takes no arguments")
            if self.render_mode != "rgb_array":
                return [None] * len(idx)
            frames = self._frames()
            return [frames[i] for i in idx]
        if method_name == "reset":
            if method_args or kwargs:
                raise ValueError(
                    f"env_method('reset'): takes no arguments (got {method_args!r}, {kwargs!r}); seed the next "
                    "full reset with seed()"
                )
            mask = np.zeros(self.num_envs, bool)
            mask[idx] = True
            obs, _ = self.env.reset(options={"reset_mask": mask})
            obs = obs.cpu().numpy()
            return [(obs[i].copy(), {}) for i in idx]
        method = getattr(self.env, method_name)
        if len(set(idx)) != self.num_envs:
            raise NotImplementedError(
                f"env_method({method_name!r}, indices={indices!r}): the worlds share one vector env, whose "
                f"{method_name!r} acts on every world; call it for all worlds (indices=None)"
            )
        return self._per_world(method(*method_args, **kwargs), idx)

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        """Whether each selected world is wrapped in ``wrapper_class``: the worlds report episodes as SB3's
        ``Monitor`` does (``info["episode"]``), so True for ``Monitor`` and its base classes, else False."""
        from stable_baselines3.common.monitor import Monitor

        return [isinstance(wrapper_class, type) and issubclass(Monitor, wrapper_class)] * len(self._indices(indices))

    # ------------------------------------------------------------------ helpers

    def _indices(self, indices: VecEnvIndices) -> list[int]:
        """SB3's indices (None, an int or an iterable of ints) as a checked list."""
        idx = [int(i) for i in self._get_indices(indices)]
        bad = [i for i in idx if not 0 <= i < self.num_envs]
        if bad:
            raise IndexError(f"indices: expected world indices in [0, {self.num_envs}), got {bad}")
        return idx

    def _check_open(self) -> None:
        if self.env.closed:
            raise RuntimeError(f"{type(self.env).__name__} is closed")

    def _is_per_world(self, value: Any) -> bool:
        return isinstance(value, (torch.Tensor, np.ndarray)) and value.ndim >= 1 and value.shape[0] == self.num_envs

    def _per_world(self, value: Any, idx: list[int]) -> list[Any]:
        if self._is_per_world(value):
            rows = value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else value
            return [np.array(rows[i]) for i in idx]
        return [value] * len(idx)
