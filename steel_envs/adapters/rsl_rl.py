"""rsl_rl's ``VecEnv`` contract over a :class:`~steel_envs.NewtonVectorEnv` (rsl-rl-lib >= 5)."""

from __future__ import annotations

import dataclasses
import numbers
from collections import deque
from collections.abc import Callable
from typing import Any

import torch
from rsl_rl.env import VecEnv
from tensordict import TensorDict

from steel_envs.adapters import require_same_step
from steel_envs.core import NewtonVectorEnv

__all__ = ["RslRlVecEnv"]


class _EnvCfg(dict):
    """The env description rsl_rl's loggers store with a run: a dict with the ``to_dict()`` that rsl_rl's W&B writer
    calls (it falls back to ``dataclasses.asdict``, which a plain dict fails)."""

    def to_dict(self) -> dict[str, Any]:
        return dict(self)


class RslRlVecEnv(VecEnv):
    """Present a SAME_STEP-autoreset :class:`NewtonVectorEnv` as an rsl_rl ``VecEnv``.

    - Observations are the TensorDict ``{"policy": obs}`` (num_envs, obs_dim) float32, plus ``"critic"`` where the
      env's critic group differs (privileged blocks, or observation noise): rsl_rl's default ``obs_groups`` then feeds
      that group to the critic (``policy`` to both otherwise).
    - ``dones = terminated | truncated`` (int64); ``extras["time_outs"] = truncated & ~terminated``, so PPO
      bootstraps the value of episodes cut by the time limit or by a constraint overflow.
    - ``extras["log"]`` holds, per ended episode, ``Episode_Reward/<term>`` (the term's episode sum),
      ``Episode_Metric/<metric>`` (the task's episode metrics, e.g. AntRun's ``distance_x`` [m]) and
      ``Episode_Termination/<cause>`` (0 or 1), which rsl_rl averages per iteration into TensorBoard. The
      statistics are gathered on the device and read on the host once every ``stats_interval`` steps (one host
      sync), in the ``extras`` of that step; with the rollout length as interval, every iteration logs the same
      episodes as with an interval of 1, without a sync per step.
    - The env's outputs are views of its buffers, overwritten every step; rsl_rl keeps references to
      observations across a step, so this adapter hands it copies.
    - ``cfg`` (the env ID, world count, task config and solver options) is what rsl_rl's loggers store with the
      run (W&B's run config). A :class:`~steel_envs.ShardedVectorEnv` serves as the env too.

    Args:
        env: The vector env, in SAME_STEP autoreset mode.
        on_episodes: Optional callback ``(returns, lengths)`` with the returns and lengths (1-D tensors)
            of the episodes that ended since its last call, for progress bars and early stopping; called every
            ``stats_interval`` steps when episodes ended.
        stats_interval: Steps between host reads of the episode statistics, >= 1 (rsl_rl's
            ``num_steps_per_env`` makes it once per rollout).

    Raises:
        ValueError: If the env's autoreset mode is not SAME_STEP (rsl_rl never calls reset).
    """

    def __init__(
        self,
        env: NewtonVectorEnv,
        on_episodes: Callable[[torch.Tensor, torch.Tensor], None] | None = None,
        stats_interval: int = 1,
    ) -> None:
        require_same_step(env, "rsl_rl")
        if isinstance(stats_interval, bool) or not isinstance(stats_interval, numbers.Integral) or stats_interval < 1:
            raise ValueError(f"stats_interval: expected an int >= 1, got {stats_interval!r}")
        self.stats_interval = int(stats_interval)
        self._pending: list[dict[str, torch.Tensor]] = []
        self.env = env
        self.num_envs = env.num_envs
        self.num_actions = env.action_dim
        self.max_episode_length = env.max_episode_steps
        self.device = env.torch_device
        self.cfg = _EnvCfg(
            env_id=env.spec.id if env.spec is not None else type(env).__name__,
            num_envs=env.num_envs,
            task=dataclasses.asdict(env.config),
            solver_options={k: str(v) for k, v in env.solver_options.as_kwargs().items()},
        )
        self.on_episodes = on_episodes
        self.recent_returns: deque[float] = deque(maxlen=100)
        groups = getattr(env, "observation_groups", None)
        # A distinct critic group (privileged blocks, or observation noise the critic should not see): rsl_rl feeds
        # an observation group named "critic" to the critic when its obs_groups do not say otherwise.
        self._critic_view = groups["critic"] if groups and groups["critic"] is not groups["policy"] else None
        obs, _ = env.reset()
        self._obs = self._groups(obs)

    @property
    def episode_length_buf(self) -> torch.Tensor:
        """Steps taken in each world's current episode, (num_envs,) int32, a view of the env's counter."""
        return self.env.episode_length

    @episode_length_buf.setter
    def episode_length_buf(self, value: torch.Tensor) -> None:
        # rsl_rl's init_at_random_ep_len spreads the time limits of the first episodes this way.
        self.env.set_episode_length(value.clamp(0, self.env.max_episode_steps - 1))

    def _groups(self, obs: torch.Tensor) -> TensorDict:
        """Copies of this step's observation groups: ``policy``, and ``critic`` where the env's differs."""
        groups = {"policy": obs.clone()}
        if self._critic_view is not None:
            groups["critic"] = self._critic_view.clone()
        return TensorDict(groups, batch_size=[self.num_envs])

    def get_observations(self) -> TensorDict:
        """The current observations: ``TensorDict({"policy": obs})``, with ``"critic"`` where the env has a
        distinct critic group (``env.observation_groups``)."""
        return self._obs.clone()

    def step(self, actions: torch.Tensor) -> tuple[TensorDict, torch.Tensor, torch.Tensor, dict[str, Any]]:
        """Step the env; see the class docstring for the outputs."""
        obs, reward, terminated, truncated, info = self.env.step(actions.float())
        self._obs = self._groups(obs)
        done = terminated | truncated
        extras: dict[str, Any] = {"time_outs": truncated & ~terminated}
        # Copies of this step's buffers (views the env overwrites), kept on the device until the next read; the log
        # columns are derived from them there (no host sync and no other work here).
        step = {f"episode.{k}": v for k, v in info["episode"].items()}
        step.update(
            ended=info["_episode"], terminated=terminated, truncated=truncated, nonfinite=info["nonfinite_state"]
        )
        self._pending.append({k: v.clone() for k, v in step.items()})
        if len(self._pending) >= self.stats_interval:
            log = self._read_pending()
            if log:
                extras["log"] = log
        return (
            self._obs.clone(),
            reward.clone(),
            done.long(),
            extras,
        )

    def _read_pending(self) -> dict[str, torch.Tensor]:
        """The episodes ended since the last read, as rsl_rl's ``extras["log"]`` (one host sync); also feeds
        ``recent_returns`` and ``on_episodes``."""
        s = {k: torch.stack([p[k] for p in self._pending]) for k in self._pending[0]}
        self._pending.clear()
        ended = s["ended"]
        if not bool(ended.any()):
            return {}
        returns, lengths = s["episode.r"][ended], s["episode.l"][ended]
        self.recent_returns.extend(returns.tolist())
        if self.on_episodes is not None:
            self.on_episodes(returns, lengths)
        prefix = "episode.reward_"
        log = {f"Episode_Reward/{k[len(prefix) :]}": v[ended] for k, v in s.items() if k.startswith(prefix)}
        for metric in self.env.metrics:  # the task's declared episode metrics, by name
            log[f"Episode_Metric/{metric.name}"] = s[f"episode.{metric.name}"][ended]
        log["Episode_Termination/terminated"] = s["terminated"][ended].float()
        log["Episode_Termination/time_out"] = (s["truncated"] & ~s["terminated"])[ended].float()
        log["Episode_Termination/constraint_overflow"] = s["episode.constraint_overflow"][ended].float()
        log["Episode_Termination/nonfinite_state"] = s["nonfinite"][ended].float()
        log["Episode_Termination/penetration"] = s["episode.penetration"][ended].float()
        for term in self.env.terminations:  # the task's declared termination terms, by name
            log[f"Episode_Termination/{term.name}"] = s[f"episode.{term.name}"][ended].float()
        return log

    def close(self) -> None:
        """Hand the statistics still pending to ``recent_returns`` and ``on_episodes``, then close the wrapped env."""
        if self._pending:
            self._read_pending()
        self.env.close()
