"""The action pipeline: validated actions in, clipped (and delayed) actions out, non-finite entries flagged."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import warp as wp

from .. import kernels

if TYPE_CHECKING:
    from ..core import NewtonVectorEnv

__all__ = ["ActionPipeline"]


class ActionPipeline:
    """Clips each step's actions to [-1, 1], replaces non-finite entries by 0 (flagging their world) and applies
    ``action_delay_steps`` of delay (zeros at an episode's start).

    Attributes:
        actions: (num_envs, action_dim) float32, the actions the scene applies this step (clipped, delayed).
        actions_in: (num_envs, action_dim) float32, the captured step's input (written before each replay).
        nonfinite: (num_envs,) bool, worlds whose action held a NaN or an infinity this step.
    """

    def __init__(self, env: NewtonVectorEnv, delay_steps: int) -> None:
        self.env = weakref.proxy(env)  # no env <-> component cycle: the env goes with its last reference
        n, a = env.num_envs, env.action_dim
        self.actions = wp.zeros((n, a), dtype=wp.float32)
        self.actions_in = wp.zeros((n, a), dtype=wp.float32)
        self.nonfinite = wp.zeros(n, dtype=wp.bool)
        self.history = wp.zeros((delay_steps + 1, n, a), dtype=wp.float32) if delay_steps else None

    def prepare(self, actions: wp.array) -> None:
        """Write ``self.actions`` from ``actions`` (num_envs, action_dim) float32."""
        self.env.launch_per_world(
            kernels.prepare_actions, inputs=[actions, -1.0, 1.0], outputs=[self.actions, self.nonfinite]
        )
        if self.history is not None:
            self.env.launch_per_world(kernels.delay_actions, inputs=[self.history], outputs=[self.actions])

    def reset(self, world_mask: wp.array) -> None:
        """A reset world has applied no action yet: clear its delay history and its actions."""
        if self.history is not None:
            self.env.launch_per_world(kernels.zero_world_history, inputs=[world_mask], outputs=[self.history])
        self.env.launch_per_world(kernels.zero_world_rows, inputs=[world_mask], outputs=[self.actions])
