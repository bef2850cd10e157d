"""The typed training settings a task declares (``train_config``): PPO's hyper-parameters as ``steel-envs train`` hands
them to rsl-rl-lib. Plain data: the library declares them, the learner lives in :mod:`steel_envs.training`.

A task states only what it changes from the general defaults (``PpoConfig(num_envs=128, max_iterations=1500)``);
``steel-envs train <ID> --help`` shows the task's values as the defaults of the command line.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["PpoConfig", "SacConfig"]


@dataclass(kw_only=True, frozen=True)
class PpoConfig:
    """Hyper-parameters of PPO (rsl-rl-lib's ``OnPolicyRunner`` and ``PPO``), the defaults where a task sets none.

    Raises:
        ValueError: (construction) On a value out of its range, naming the field.
    """

    num_envs: int = 256
    """Worlds per process (with --shards, in all shards together)."""
    max_iterations: int | None = 500
    """PPO iterations of a run (each collects num_envs * num_steps_per_env env-steps); None: no cap (a time budget
    stops the run)."""
    num_steps_per_env: int = 24
    """Rollout length per iteration [control steps]."""
    learning_rate: float = 1.0e-3
    """Adam learning rate of the actor and the critic (the start of the adaptive schedule)."""
    entropy_coef: float = 0.005
    """Entropy bonus weight."""
    gamma: float = 0.99
    """Discount factor, in (0, 1]."""
    lam: float = 0.95
    """GAE lambda, in [0, 1]."""
    clip_param: float = 0.2
    """PPO clip range."""
    clip_value_loss: bool = True
    """Clip the critic's step as the policy's (rsl_rl's use_clipped_value_loss): each value prediction moves at most
    clip_param [return units] per iteration, slow where returns are in the hundreds."""
    num_learning_epochs: int = 5
    """Epochs over each rollout."""
    num_mini_batches: int = 4
    """Mini-batches per epoch."""
    desired_kl: float = 0.01
    """Target KL of the adaptive learning-rate schedule."""
    schedule: Literal["adaptive", "fixed"] = "adaptive"
    """Learning-rate schedule: adaptive (divided or multiplied by 1.5 after each mini-batch whose KL is above twice or
    below half desired_kl, within [1e-5, 1e-2]) or fixed (learning_rate throughout)."""
    actor_hidden_dims: tuple[int, ...] = (128, 128)
    """Hidden layer sizes of the actor MLP."""
    critic_hidden_dims: tuple[int, ...] = (128, 128)
    """Hidden layer sizes of the critic MLP."""
    init_noise_std: float = 1.0
    """Initial standard deviation of the Gaussian policy [action units]."""
    min_noise_std: float = 0.0
    """Floor of the Gaussian policy's standard deviation [action units] (rsl_rl's std_range; 0: rsl_rl's own floor,
    1e-6). Evaluation uses the policy mean, so the floor only keeps training exploring."""
    init_at_random_ep_len: bool = False
    """Start the first episodes at random steps of their time limit (rsl_rl's init_at_random_ep_len, as Isaac Lab's
    train script does), so that episodes do not end together: without early ends every world is at the same step of
    its episode and each iteration's rollout holds one phase of the task."""
    obs_normalization: bool = True
    """Running normalization of the observations inside the models (exported with them)."""
    save_interval: int = 50
    """Checkpoint every this many iterations."""
    target_return: float | None = None
    """Stop once the mean return of the last 100 episodes reaches this; None: no target."""

    @classmethod
    def from_saved(cls, values: Mapping[str, Any]) -> PpoConfig:
        """The config a run saved (``train_args.json``'s ``hyper_parameters``): its PPO fields (lists back to
        tuples; other keys, the run's settings, ignored); a field it lacks keeps the general default."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in values.items() if k in names})

    def __post_init__(self) -> None:
        for name in ("num_envs", "num_steps_per_env", "num_learning_epochs", "num_mini_batches"):
            _require(name, getattr(self, name), lambda v: _is_int(v) and v >= 1, "an int >= 1")
        cap = self.max_iterations
        _require("max_iterations", cap, lambda v: v is None or (_is_int(v) and v >= 1), "an int >= 1 or None")
        _require("save_interval", self.save_interval, lambda v: _is_int(v) and v >= 1, "an int >= 1")
        for name in ("learning_rate", "clip_param", "desired_kl", "init_noise_std"):
            _require(name, getattr(self, name), lambda v: _is_number(v) and v > 0, "a finite number > 0")
        _require("entropy_coef", self.entropy_coef, lambda v: _is_number(v) and v >= 0, "a finite number >= 0")
        _require("gamma", self.gamma, lambda v: _is_number(v) and 0 < v <= 1, "a number in (0, 1]")
        _require("lam", self.lam, lambda v: _is_number(v) and 0 <= v <= 1, "a number in [0, 1]")
        _require(
            "min_noise_std",
            self.min_noise_std,
            lambda v: _is_number(v) and 0 <= v < self.init_noise_std,
            f"a number >= 0 below init_noise_std ({self.init_noise_std})",
        )
        _require("schedule", self.schedule, lambda v: v in ("adaptive", "fixed"), "'adaptive' or 'fixed'")
        for name in ("actor_hidden_dims", "critic_hidden_dims"):
            dims = getattr(self, name)
            ok = isinstance(dims, tuple) and len(dims) >= 1 and all(_is_int(d) and d >= 1 for d in dims)
            _require(name, dims, lambda _v, ok=ok: ok, "a tuple of ints >= 1")
        target = self.target_return
        _require("target_return", target, lambda v: v is None or _is_number(v), "a finite number or None")


@dataclass(kw_only=True, frozen=True)
class SacConfig:
    """Hyper-parameters of SAC (stable-baselines3's ``SAC``: Haarnoja et al. 2018, tanh-squashed Gaussian policy,
    twin critics, learned entropy coefficient), as ``steel-envs compare --algo sac`` runs it; the defaults where a
    task sets none (``sac_config``). SB3's defaults but for the world count and the updates per vector step, which
    a many-world env needs: one gradient step per vector step of 64 worlds would update 64 times less often per
    env-step than SB3's single-env default.

    Raises:
        ValueError: (construction) On a value out of its range, naming the field.
    """

    num_envs: int = 64
    """Worlds (SB3 counts each world's step as one timestep)."""
    learning_rate: float = 3.0e-4
    """Adam learning rate of the actor, the critics and the entropy coefficient."""
    buffer_size: int = 1_000_000
    """Replay buffer capacity [transitions]."""
    batch_size: int = 256
    """Transitions per gradient step."""
    gamma: float = 0.99
    """Discount factor, in (0, 1]."""
    tau: float = 0.005
    """Polyak coefficient of the target critics, in (0, 1]."""
    learning_starts: int = 10_000
    """Env-steps of uniform random actions before the first update."""
    gradient_steps: int = 8
    """Gradient steps after each vector step (``num_envs`` env-steps): 8 of 64 worlds is one per 8 env-steps."""
    hidden_dims: tuple[int, ...] = (256, 256)
    """Hidden layer sizes of the actor and of each critic."""
    obs_normalization: bool = True
    """Running normalization of the observations (SB3's ``VecNormalize``, rewards untouched), exported with the
    policy."""

    def __post_init__(self) -> None:
        for name in ("num_envs", "buffer_size", "batch_size", "gradient_steps"):
            _require(name, getattr(self, name), lambda v: _is_int(v) and v >= 1, "an int >= 1")
        _require("learning_starts", self.learning_starts, lambda v: _is_int(v) and v >= 0, "an int >= 0")
        _require("learning_rate", self.learning_rate, lambda v: _is_number(v) and v > 0, "a finite number > 0")
        for name in ("gamma", "tau"):
            _require(name, getattr(self, name), lambda v: _is_number(v) and 0 < v <= 1, "a number in (0, 1]")
        dims = self.hidden_dims
        ok = isinstance(dims, tuple) and len(dims) >= 1 and all(_is_int(d) and d >= 1 for d in dims)
        _require("hidden_dims", dims, lambda _v: ok, "a tuple of ints >= 1")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _require(name: str, value: object, ok, expected: str) -> None:
    if not ok(value):
        raise ValueError(f"{name}: expected {expected}, got {value!r}")
