"""rsl_rl's ``VecEnv`` contract over a :class:`~steel_envs.NewtonVectorEnv` (rsl-rl-lib >= 5), and rsl_rl's PPO
runner configured from a task's :class:`~steel_envs.train_config.PpoConfig`."""

from __future__ import annotations

import dataclasses
import numbers
import os
from collections import deque
from collections.abc import Callable
from typing import Any

import torch
from rsl_rl.env import VecEnv
from rsl_rl.runners import OnPolicyRunner
from tensordict import TensorDict

from steel_envs.adapters import require_same_step
from steel_envs.core import NewtonVectorEnv
from steel_envs.torch_views import library_defaults
from steel_envs.train_config import PpoConfig

__all__ = ["RslRlVecEnv", "SteelOnPolicyRunner", "distributed_ranks", "make_runner", "runner_config"]


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
        on_step: Optional callback called before every step (``steel-envs train`` counts env-steps and stops a run
            there by raising).

    Raises:
        ValueError: If the env's autoreset mode is not SAME_STEP (rsl_rl never calls reset).
    """

    def __init__(
        self,
        env: NewtonVectorEnv,
        on_episodes: Callable[[torch.Tensor, torch.Tensor], None] | None = None,
        stats_interval: int = 1,
        on_step: Callable[[], None] | None = None,
    ) -> None:
        require_same_step(env, "rsl_rl")
        self.on_step = on_step
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
        if self.on_step is not None:
            self.on_step()
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


def runner_config(ppo: PpoConfig, device: str = "cpu", logger: str | dict[str, Any] = "tensorboard") -> dict[str, Any]:
    """rsl_rl's ``OnPolicyRunner`` configuration dict from a :class:`PpoConfig`.

    On CUDA, rsl_rl's per-step NaN check (a host read every step) is off: the env's observations are already
    finite (non-finite entries of an ended world are replaced by 0 and the rest clipped to ``obs_clip``).
    ``logger``: ``"tensorboard"`` or rsl_rl's writer entry (e.g. its W&B writer).
    """
    return {
        "num_steps_per_env": ppo.num_steps_per_env,
        "save_interval": ppo.save_interval,
        # The critic's set is added by make_runner: the env's "critic" group where the adapter hands one over
        # (privileged blocks, noise-free observations), "policy" otherwise.
        "obs_groups": {"actor": ["policy"]},
        "logger": logger,
        "check_for_nan": not device.startswith("cuda"),
        "algorithm": {
            "class_name": "PPO",
            "num_learning_epochs": ppo.num_learning_epochs,
            "num_mini_batches": ppo.num_mini_batches,
            "clip_param": ppo.clip_param,
            "gamma": ppo.gamma,
            "lam": ppo.lam,
            "value_loss_coef": 1.0,
            "entropy_coef": ppo.entropy_coef,
            "learning_rate": ppo.learning_rate,
            "max_grad_norm": 1.0,
            "use_clipped_value_loss": ppo.clip_value_loss,
            "schedule": ppo.schedule,
            "desired_kl": ppo.desired_kl,
        },
        "actor": {
            "class_name": "MLPModel",
            "hidden_dims": list(ppo.actor_hidden_dims),
            "activation": "elu",
            "obs_normalization": ppo.obs_normalization,
            "distribution_cfg": {
                "class_name": "GaussianDistribution",
                "init_std": ppo.init_noise_std,
                "std_range": (ppo.min_noise_std, 1.0e6),  # rsl_rl's upper bound; it raises a lower one to 1e-6
            },
        },
        "critic": {
            "class_name": "MLPModel",
            "hidden_dims": list(ppo.critic_hidden_dims),
            "activation": "elu",
            "obs_normalization": ppo.obs_normalization,
        },
    }


def distributed_ranks() -> tuple[int, int, int]:
    """(world size, global rank, local rank) from torchrun's environment; (1, 0, 0) otherwise."""
    return int(os.getenv("WORLD_SIZE", "1")), int(os.getenv("RANK", "0")), int(os.getenv("LOCAL_RANK", "0"))


class SteelOnPolicyRunner(OnPolicyRunner):
    """rsl_rl's ``OnPolicyRunner``, whose multi-process setup also runs on CPU ranks (under torchrun with CPU devices
    the process group uses gloo; rsl_rl itself initializes NCCL, for CUDA devices only) and whose checkpoints are
    written atomically."""

    def save(self, path: str, infos: dict | None = None) -> None:
        """rsl_rl's checkpoint (the same dict as ``OnPolicyRunner.save``), written to a temporary file in the same
        folder and renamed over ``path``: a run stopped mid-write leaves the previous file whole. The logger (W&B)
        then gets the finished file."""
        saved = self.alg.save()
        saved["iter"] = self.current_learning_iteration
        saved["infos"] = infos
        partial = f"{path}.partial-{os.getpid()}"
        try:
            torch.save(saved, partial)
            os.replace(partial, path)
        finally:
            if os.path.exists(partial):
                os.remove(partial)
        self.logger.save_model(path, self.current_learning_iteration)

    def _configure_multi_gpu(self) -> None:
        world_size, rank, local_rank = distributed_ranks()
        if world_size == 1 or str(self.device).startswith("cuda"):
            super()._configure_multi_gpu()
            return
        # rsl_rl's bookkeeping, with the gloo backend.
        self.gpu_world_size, self.gpu_global_rank, self.gpu_local_rank = world_size, rank, local_rank
        self.is_distributed = True
        self.cfg["multi_gpu"] = {"global_rank": rank, "local_rank": local_rank, "world_size": world_size}
        if not torch.distributed.is_initialized():
            torch.distributed.init_process_group(backend="gloo", rank=rank, world_size=world_size)


def make_runner(env: RslRlVecEnv, cfg: dict[str, Any], log_dir: str | None, device: str) -> SteelOnPolicyRunner:
    """The runner of ``cfg`` (:func:`runner_config`) on ``env``; the critic reads the env's ``critic`` observation
    group where the adapter provides one. Its models and rollout storage are float32 on ``device`` whatever torch's
    default device and dtype (rsl_rl allocates some without either)."""
    cfg = {**cfg, "obs_groups": dict(cfg["obs_groups"])}
    cfg["obs_groups"].setdefault("critic", ["critic"] if "critic" in env.get_observations() else ["policy"])
    with library_defaults(device):
        return SteelOnPolicyRunner(env, cfg, log_dir=log_dir, device=device)
