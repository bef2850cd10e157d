"""TorchRL's ``EnvBase`` over a :class:`~steel_envs.NewtonVectorEnv` (torchrl 0.14, tensordict 0.14)."""

from __future__ import annotations

from typing import Any

import gymnasium
import torch
from tensordict import TensorDict, TensorDictBase
from torchrl.data import Bounded, Categorical, Composite, TensorSpec, Unbounded
from torchrl.envs import EnvBase

from steel_envs.core import NewtonVectorEnv

__all__ = ["TorchRLEnv"]

# The env's per-world end causes, (num_envs,) bool in the info of every step and reset.
_END_CAUSES = ("constraint_overflow", "nonfinite_state", "nonfinite_action")


class TorchRLEnv(EnvBase):
    """TorchRL's ``EnvBase`` contract over a vector env in DISABLED autoreset mode; batch size ``(num_envs,)``.

    Keys of the tensordicts (N = ``num_envs``; the leading N is TorchRL's batch dimension):

    ============================== ============================ =============================================
    key                            shape, dtype                 spec, meaning
    ============================== ============================ =============================================
    ``"action"``                   (N, act_dim) float32         ``Bounded(-1, 1)``: the env's action space
    ``"observation"``              (N, obs_dim) float32         ``Bounded(-obs_clip, obs_clip)``; ``"pixels"``
                                                                (N, H, W, 3) uint8 or (N, H, W) float32 with
                                                                ``obs_mode="rgb"`` / ``"depth"``
    ``"reward"``                   (N, 1) float32               ``Unbounded``: the env's reward
    ``"done"``                     (N, 1) bool                  ``terminated | truncated``
    ``"terminated"``               (N, 1) bool                  the env's ``terminated`` (no bootstrap)
    ``"truncated"``                (N, 1) bool                  the env's ``truncated`` (time limit,
                                                                constraint overflow, non-finite action)
    ``"reward_<term>"``            (N, 1) float32               one per ``env.reward_terms``: the env's
                                                                ``info["reward_<term>"]`` (sum == reward)
    ``"constraint_overflow"``,     (N, 1) bool                  the env's end causes, ``info[<key>]``
    ``"nonfinite_state"``,
    ``"nonfinite_action"``
    task entries (``"success"``)   (N, 1), the entry's dtype    ``env.task_info``, e.g. ``info["success"]``
    ============================== ============================ =============================================

    The extra entries (reward terms, end causes, task entries) are in the observation spec, as TorchRL does
    with Gymnasium info entries: a step writes them under ``"next"``, and a reset writes 0 / False for the
    reset worlds (no step of the new episode has been taken). Every output is a copy: the env's tensors are
    views of buffers that its next call overwrites, and TorchRL keeps the root and ``"next"`` tensordicts of
    consecutive steps at once.

    Resets. TorchRL steps all worlds, returns the observation each action led to under ``("next",
    "observation")`` (for an ended episode its last observation, which GAE needs to bootstrap a truncated
    episode), and then resets the ended worlds itself: its collectors and ``rollout`` call ``reset`` with a
    ``"_reset"`` mask (N, 1) bool of the done worlds (``EnvBase.maybe_reset``). ``_reset`` hands that mask to
    the env as ``options={"reset_mask": mask}``, which resets only those worlds (the others keep their state
    bit for bit); without a mask every world is reset. This is why the env must run with
    ``autoreset_mode="Disabled"``: SAME_STEP would have replaced the terminal observation by the next
    episode's first one (TorchRL's native-autoreset path then marks it invalid with NaN, losing it), and
    NEXT_STEP spends one step, action ignored and reward 0, on the reset, which breaks TorchRL's one transition
    per step. The price is that the reset of ended worlds runs as its own masked call (a few kernel launches)
    after the captured step, not inside it; TorchRL reads ``done.any()`` on the host every step anyway.

    ``set_seed(seed)`` reseeds the env's per-world random streams and resets every world
    (``env.reset(seed=seed)``), as TorchRL's Gymnasium wrapper does; ``reset(td, seed=...)`` reseeds them, then
    resets the worlds of the mask. ``close()`` closes the env.

    Args:
        env: The vector env, created with ``autoreset_mode="Disabled"``, e.g.
            ``steel_envs.make_vec(env_id, num_envs, autoreset_mode="Disabled")``. The adapter owns it from
            then on (TorchRL drives its resets).

    Raises:
        TypeError: If ``env`` is not a :class:`~steel_envs.NewtonVectorEnv`.
        ValueError: If ``env`` is closed or its autoreset mode is not DISABLED.
    """

    def __init__(self, env: NewtonVectorEnv) -> None:
        if not isinstance(env, NewtonVectorEnv):
            raise TypeError(f"env: expected a steel_envs.NewtonVectorEnv, got {type(env).__name__}")
        if env.closed:
            raise ValueError("env: the vector env is closed")
        mode = env.autoreset_mode.value
        if mode != "Disabled":
            raise ValueError(
                f"env: TorchRL resets ended worlds itself through '_reset' masks and needs the vector env created "
                f"with autoreset_mode='Disabled', got {mode!r}"
            )
        super().__init__(device=env.torch_device, batch_size=torch.Size([env.num_envs]))
        self.env = env
        self.obs_key = "observation" if env.obs_mode == "state" else "pixels"
        self._term_keys = tuple(f"reward_{name}" for name in env.reward_terms)
        self._task_keys = tuple(env.task_info)
        n, device = env.num_envs, self.device
        flag = Categorical(2, shape=(n, 1), dtype=torch.bool, device=device)
        self.observation_spec = Composite(
            {
                self.obs_key: _box_spec(env.single_observation_space, n, device),
                **{key: Unbounded(shape=(n, 1), dtype=torch.float32, device=device) for key in self._term_keys},
                **{key: flag.clone() for key in _END_CAUSES},
                **{key: _value_spec(view.dtype, n, device) for key, view in env.task_info.items()},
            },
            shape=self.batch_size,
            device=device,
        )
        self.action_spec = _box_spec(env.single_action_space, n, device)
        self.reward_spec = Unbounded(shape=(n, 1), dtype=torch.float32, device=device)
        self.done_spec = Composite(
            done=flag.clone(), terminated=flag.clone(), truncated=flag.clone(), shape=self.batch_size, device=device
        )
        # EnvBase starts "closed" (nothing to release); this adapter owns the env, so close() and __del__ close it.
        self.is_closed = False

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        """Step every world with ``tensordict["action"]`` (N, act_dim) float32; returns the ``"next"`` entries.

        Raises:
            NotImplementedError: On a partial step (a ``"_step"`` mask with a False entry): the worlds of one
                env step together.
            ValueError: From the env, on actions of the wrong shape, dtype or device, or non-finite ones.
        """
        partial = tensordict.get("_step", None)
        if partial is not None and not bool(partial.all()):
            raise NotImplementedError(
                "tensordict['_step']: partial steps are not supported, every world of the env steps together"
            )
        action = tensordict.get(self.action_key).detach()
        obs, reward, terminated, truncated, info = self.env.step(action)
        terminated, truncated = terminated.unsqueeze(-1), truncated.unsqueeze(-1)
        return TensorDict(
            {
                self.obs_key: obs.clone(),
                "reward": reward.unsqueeze(-1).clone(),
                "done": terminated | truncated,
                "terminated": terminated.clone(),
                "truncated": truncated.clone(),
                **{key: info[key].unsqueeze(-1).clone() for key in (*self._term_keys, *_END_CAUSES, *self._task_keys)},
            },
            batch_size=self.batch_size,
            device=self.device,
        )

    def _reset(self, tensordict: TensorDictBase | None, *, seed: int | None = None, **kwargs: Any) -> TensorDictBase:
        """Reset the worlds of ``tensordict["_reset"]`` (N, 1) bool, or every world when there is none.

        Args:
            tensordict: TorchRL's reset input; only its ``"_reset"`` entry is read.
            seed: Reseed the env's random streams first (int >= 0); None continues them.

        Raises:
            TypeError: On a keyword argument other than ``seed``.
            ValueError: On a ``"_reset"`` mask that is not bool with N entries; from the env, on a bad seed or a
                mask on another device.
        """
        if kwargs:
            raise TypeError(f"reset: unexpected keyword argument(s) {sorted(kwargs)}; only 'seed' is accepted")
        mask = None if tensordict is None else tensordict.get("_reset", None)
        options = None
        if mask is not None:
            if mask.dtype != torch.bool or mask.numel() != self.env.num_envs:
                raise ValueError(
                    f"tensordict['_reset']: expected a bool mask of shape ({self.env.num_envs}, 1), got "
                    f"{mask.dtype} of shape {tuple(mask.shape)}"
                )
            # No host read of the mask: the env selects the worlds on the device (an all-True mask also clears a
            # global capacity-loss flag, as a full reset does).
            mask = mask.reshape(self.env.num_envs)
            options = {"reset_mask": mask}
        obs, info = self.env.reset(seed=seed, options=options)
        fresh = torch.ones(self.env.num_envs, 1, dtype=torch.bool, device=self.device)
        if mask is not None:
            fresh = mask.unsqueeze(-1)
        flags = torch.zeros(self.env.num_envs, 1, dtype=torch.bool, device=self.device)
        return TensorDict(
            {
                self.obs_key: obs.clone(),
                "done": flags,
                "terminated": flags.clone(),
                "truncated": flags.clone(),
                **{
                    key: torch.zeros(self.env.num_envs, 1, dtype=torch.float32, device=self.device)
                    for key in self._term_keys
                },
                **{key: info[key].unsqueeze(-1).clone() for key in _END_CAUSES},
                **{key: self.env.task_info[key].unsqueeze(-1).masked_fill(fresh, 0) for key in self._task_keys},
            },
            batch_size=self.batch_size,
            device=self.device,
        )

    def _set_seed(self, seed: int | None) -> None:
        """Reseed the env's per-world streams and reset every world (TorchRL's ``set_seed``); None: no-op."""
        if seed is not None:
            self.env.reset(seed=int(seed))

    def close(self, *, raise_if_closed: bool = True) -> None:
        """Close the vector env."""
        self.env.close()
        super().close(raise_if_closed=raise_if_closed)


def _box_spec(space: gymnasium.Space, n: int, device: torch.device) -> TensorSpec:
    """A ``Bounded`` spec of ``n`` stacked samples of a Box space, on ``device``."""
    if not isinstance(space, gymnasium.spaces.Box):
        raise TypeError(f"env: expected Box spaces, got {type(space).__name__}")
    shape = (n, *space.shape)
    low, high = (torch.as_tensor(bound, device=device).expand(shape) for bound in (space.low, space.high))
    return Bounded(low=low, high=high, shape=shape, dtype=low.dtype, device=device)


def _value_spec(dtype: torch.dtype, n: int, device: torch.device) -> TensorSpec:
    """The spec of a per-world task entry of ``dtype``, shaped (n, 1): bool entries are flags."""
    if dtype == torch.bool:
        return Categorical(2, shape=(n, 1), dtype=torch.bool, device=device)
    return Unbounded(shape=(n, 1), dtype=dtype, device=device)
