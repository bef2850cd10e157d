"""Episode statistics: the dones of each step and their causes, the weighted reward and its terms, per-name episode
sums, and the statistics of the episodes that ended, as the ``info`` of the env contract reports them."""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import warp as wp

from .. import kernels
from ..arguments import check_episode_lengths
from ..spec import METRIC_AGGREGATES, metric_rows, signed_reward_weights
from ..torch_views import to_torch

if TYPE_CHECKING:
    from ..core import NewtonVectorEnv
    from .penetration import PenetrationProbe

__all__ = ["EpisodeStatistics"]


class EpisodeStatistics:
    """Dones, rewards and episode statistics of every world, on the device.

    Attributes (all on the env device; ``n`` = num_envs, ``t`` = reward terms, ``k`` = termination terms, ``m`` =
    metrics):
        reward: (n,) float32, the sum of the weighted terms in ``reward_terms`` (t, n) float32.
        terminated, truncated: (n,) bool.
        termination_flags: (k, n) bool, the task's termination terms this step.
        overflow, nonfinite: (n,) bool, the core's causes ``constraint_overflow`` and ``nonfinite_state``.
        overflow_seen: (1,) int32, set once any world overflowed (the host's one-time warning reads it).
        episode_length: (n,) int32, control steps of each world's current episode.
        done_mask: (n + 1,) bool, the worlds whose episode ended this step (the solver's mask layout; the final,
            global entry stays False); ``any_done`` (1,) int32 is set when one did.
        metric_values: (m + c, n) float32, the task's metrics this step, then the lost-step charges of the ``c``
            metrics that declare one (row ``lost_rows[i]`` for metric ``i``, -1 for none).
        metric_sums, final_metrics: (m, n) float32, the metrics summed over the current episode, and reduced over
            the last ended one (``info["episode"]``).
    """

    def __init__(self, env: NewtonVectorEnv) -> None:
        self.env = weakref.proxy(env)  # no env <-> component cycle: the env goes with its last reference
        n, t, k = env.num_envs, len(env.rewards), len(env.terminations)
        self.reward = wp.zeros(n, dtype=wp.float32)
        self.reward_terms = wp.zeros((t, n), dtype=wp.float32)
        self.weights = wp.array(signed_reward_weights(env.rewards, env.reward_weights), dtype=wp.float32)
        self.termination_flags = wp.zeros((k, n), dtype=wp.bool)
        self.final_termination_flags = wp.zeros((k, n), dtype=wp.bool)
        self.time_out = wp.array([term.time_out for term in env.terminations], dtype=wp.bool)
        self.terminated = wp.zeros(n, dtype=wp.bool)
        self.truncated = wp.zeros(n, dtype=wp.bool)
        self.overflow = wp.zeros(n, dtype=wp.bool)
        self.overflow_seen = wp.zeros(1, dtype=wp.int32)
        self.nonfinite = wp.zeros(n, dtype=wp.bool)
        self.done_mask = wp.zeros(n + 1, dtype=wp.bool)
        self.any_done = wp.zeros(1, dtype=wp.int32)
        self.episode_length = wp.zeros(n, dtype=wp.int32)
        self.episode_return = wp.zeros(n, dtype=wp.float32)
        self.term_sums = wp.zeros((t, n), dtype=wp.float32)
        self.final_return = wp.zeros(n, dtype=wp.float32)
        self.final_length = wp.zeros(n, dtype=wp.int32)
        self.final_term_sums = wp.zeros((t, n), dtype=wp.float32)
        self.final_overflow = wp.zeros(n, dtype=wp.bool)
        m = len(env.metrics)
        functions, lost_rows = metric_rows(env.metrics)  # the term kernel's layout of metric_values
        self.lost_rows = wp.array(lost_rows, dtype=wp.int32)
        self.metric_values = wp.zeros((len(functions), n), dtype=wp.float32)
        self.metric_sums = wp.zeros((m, n), dtype=wp.float32)
        self.final_metrics = wp.zeros((m, n), dtype=wp.float32)
        self.metric_aggregates = wp.array([METRIC_AGGREGATES[x.aggregate] for x in env.metrics], dtype=wp.int32)
        self._overflow_seen_t = to_torch(self.overflow_seen)
        self._overflow_warned = False
        self._cuda = env.wp_device.is_cuda
        self._steps_since_check = 0

    def set_episode_length(self, lengths: torch.Tensor | np.ndarray | Sequence[int]) -> None:
        """Set every world's step counter of its current episode: world i's time limit then ends it after
        ``max_episode_steps - lengths[i]`` more steps (rsl_rl's ``init_at_random_ep_len`` spreads the first time
        limits so, through the rsl_rl adapter). The episodes' states and returns are unchanged.

        Args:
            lengths: (num_envs,) integers in [0, max_episode_steps) [control steps].

        Raises:
            ValueError: On another shape, a non-integer dtype or a count outside [0, max_episode_steps); nothing
                changes then.
        """
        lengths = check_episode_lengths(lengths, self.env.num_envs, self.env.max_episode_steps)
        to_torch(self.episode_length).copy_(lengths)

    def combine_terminations(self, skip: wp.array) -> None:
        """OR the termination terms into ``terminated`` or, for a time-out term, ``truncated`` (worlds in ``skip``,
        a NEXT_STEP reset pending, end nothing)."""
        self.env.launch_per_world(
            kernels.combine_termination_terms,
            inputs=[len(self.env.terminations), self.time_out, skip],
            outputs=[self.termination_flags, self.terminated, self.truncated],
        )

    def finalize_dones(self, overflow_flags: wp.array, skip: wp.array, nonfinite_action: wp.array, penetration: Any):
        """Add the core's causes (overflow, non-finite state and action, penetration, the time limit) to the task's
        dones and count the step."""
        env, config = self.env, self.env.config
        env.launch_per_world(
            kernels.finalize_dones,
            inputs=[
                overflow_flags,
                self.nonfinite,
                skip,
                env.num_envs,
                env.max_episode_steps,
                bool(config.overflow_is_terminal),
                bool(config.penetration_is_terminal),
            ],
            outputs=[
                self.episode_length,
                self.terminated,
                self.truncated,
                self.overflow,
                nonfinite_action,
                penetration,
                self.overflow_seen,
            ],
        )

    def accumulate(self, skip: wp.array, overflow_flags: wp.array, penetration: PenetrationProbe) -> None:
        """Weight and sum the task's unweighted ``reward_terms``, add them to the episode sums, add the task's
        metrics to theirs, record the ended episodes' statistics, metrics and causes, and set ``done_mask`` /
        ``any_done``; clear the global overflow entry."""
        env = self.env
        env.launch_per_world(
            kernels.accumulate_rewards,
            inputs=[
                len(env.rewards),
                self.weights,
                skip,
                self.terminated,
                self.truncated,
                self.overflow,
                self.episode_length,
            ],
            outputs=[
                self.reward_terms,
                self.reward,
                self.episode_return,
                self.term_sums,
                self.done_mask,
                self.final_return,
                self.final_length,
                self.final_term_sums,
                self.final_overflow,
                self.nonfinite,
            ],
        )
        if env.metrics:  # the task's metrics wrote metric_values after its rewards
            env.launch_per_world(
                kernels.accumulate_metrics,
                inputs=[
                    len(env.metrics),
                    self.metric_aggregates,
                    self.lost_rows,
                    env.max_episode_steps,
                    skip,
                    self.done_mask,
                    self.episode_length,
                    self.metric_values,
                ],
                outputs=[self.metric_sums, self.final_metrics],
            )
        if env.terminations:
            env.launch_per_world(
                kernels.copy_final_flags,
                inputs=[len(env.terminations), self.done_mask, self.termination_flags],
                outputs=[self.final_termination_flags],
            )
        env.launch_per_world(
            kernels.copy_final_flags, inputs=[1, self.done_mask, penetration.flags], outputs=[penetration.final_flags]
        )
        wp.launch(kernels.clear_global_entry, 1, inputs=[overflow_flags, env.num_envs], device=env.wp_device)
        self.any_done.zero_()
        env.launch_per_world(kernels.flag_any_world, inputs=[self.done_mask], outputs=[self.any_done])

    def reset(self, world_mask: wp.array) -> None:
        """Start new episodes in the selected worlds: length, return, term and metric sums to 0."""
        self.env.launch_per_world(
            kernels.reset_episode_statistics,
            inputs=[world_mask, len(self.env.rewards), len(self.env.metrics)],
            outputs=[self.episode_length, self.episode_return, self.term_sums, self.metric_sums],
        )

    def views(self, penetration: PenetrationProbe) -> dict[str, Any]:
        """Torch views of the buffers, by the names the env reports them under."""
        to = to_torch
        terms, final_terms = to(self.reward_terms), to(self.final_term_sums)
        flags, final_flags = to(self.termination_flags), to(self.final_termination_flags)
        final_metrics = to(self.final_metrics)
        names = [term.name for term in self.env.rewards]
        terminations = [term.name for term in self.env.terminations]
        return {
            "reward_terms": {f"reward_{name}": terms[i] for i, name in enumerate(names)},
            "terminations": {name: flags[i] for i, name in enumerate(terminations)},
            "episode": {
                "r": to(self.final_return),
                "l": to(self.final_length),
                "constraint_overflow": to(self.final_overflow),
                "penetration": to(penetration.final_flags)[0],
                **{f"reward_{name}": final_terms[i] for i, name in enumerate(names)},
                **{name: final_flags[i] for i, name in enumerate(terminations)},
                **{metric.name: final_metrics[i] for i, metric in enumerate(self.env.metrics)},
            },
        }

    def warn_overflow_once(self) -> None:
        """Warn once, on the host, after a world lost constraint rows or contacts, with the backend's advice. On the
        CPU the flag is host memory; on CUDA this reads one int (a sync) every 64 steps only."""
        if self._overflow_warned:
            return
        self._steps_since_check += 1
        if self._cuda and self._steps_since_check < 64:
            return
        self._steps_since_check = 0
        if int(self._overflow_seen_t[0]) == 0:
            return
        self._overflow_warned = True
        warnings.warn(
            f"{self.env.__class__.__name__}: {self.env.backend.overflow_advice()} Their episodes were ended and "
            "reported in info['constraint_overflow']. This warning is shown once.",
            RuntimeWarning,
            stacklevel=3,
        )
