"""The goal fields shared by the pushing tasks (PushCube-v0, SoftPush-v0): a goal region on the ground, reach and
push weights, a success radius and bonus."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import warp as wp

from steel_envs.vector_env import TaskConfig

__all__ = ["PushGoalConfig", "draw_goal", "goals_on_ground"]


def goals_on_ground(goals: wp.array) -> np.ndarray:
    """The pushing tasks' ``goal_positions``: each world's goal (num_envs, 2) [m] on the ground, as (num_envs, 1, 3)."""
    xy = goals.numpy()
    return np.concatenate([xy[:, None, :2], np.zeros((len(xy), 1, 1))], axis=2)


@wp.func
def draw_goal(
    rng: wp.uint32, r: float, min_distance: float, x: float, y: float, goals: wp.array2d[wp.float32], w: int
) -> wp.uint32:
    """Draw world ``w``'s goal in U(-r, r)^2 into ``goals[w]``, redrawing (up to 16 times) while it is within
    ``min_distance`` [m] of the object at (x, y), so an episode does not start solved; returns the advanced random
    state."""
    for _ in range(16):
        goals[w, 0] = r * (2.0 * wp.randf(rng) - 1.0)
        goals[w, 1] = r * (2.0 * wp.randf(rng) - 1.0)
        dx = x - goals[w, 0]
        dy = y - goals[w, 1]
        if wp.sqrt(dx * dx + dy * dy) > min_distance:
            break
    return rng


@dataclass(kw_only=True)
class PushGoalConfig(TaskConfig):
    """Goal region, reward weights and success radius of a task that pushes an object to a goal on the ground."""

    goal_range: float = 0.3
    """Goals are drawn at U(-r, r)^2 [m] at every reset."""
    reach_weight: float = 1.0
    """Weight of the reach penalty, the pusher's distance to the object (PushCube: to its push pose) [1/m]."""
    push_weight: float = 5.0
    """Weight of the object-to-goal distance penalty [1/m]."""
    success_bonus: float = 10.0
    """Reward of the step that brings the object within ``success_radius`` of the goal (which ends the episode)."""
    success_radius: float = 0.05
    """Distance [m] of the object's centre to the goal that counts as success."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.require_positive("goal_range", "success_radius")
        if not 3.0 * self.success_radius < self.goal_range:
            raise ValueError(
                f"success_radius: expected below goal_range / 3 = {self.goal_range / 3.0!r} (goals start 3 success "
                f"radii away), got {self.success_radius!r}"
            )
