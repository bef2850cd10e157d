"""Goal terms shared by the tasks that bring an object to a goal on the ground (PushCube-v0, SoftPush-v0): the goal
config (region, reach and push weights, success radius and bonus), the goal's observation, the success bonus and
the goal-reached termination, and the goal draw at reset.

The functions read a term state with the fields ``goals`` ((num_envs, 2) float32: each world's goal x, y [m]) and
``success`` ((num_envs,) bool, set after the physics by the task: the object is within the success radius).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import warp as wp

from steel_envs.ranges import COST_WEIGHT, at_least, declare, positive
from steel_envs.spec import TaskConfig, term

__all__ = [
    "PushGoalConfig",
    "draw_goal",
    "goal_reached",
    "goal_xy",
    "goals_on_ground",
    "planar_distance",
    "success_bonus",
]


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

    field_ranges = declare(
        goal_range=positive("the half-width of the goal square [m]"),
        reach_weight=COST_WEIGHT,
        push_weight=COST_WEIGHT,
        success_bonus=at_least(0.0, "a bonus; a negative one punishes reaching the goal"),
        success_radius=positive("a distance [m]; 0 makes success unreachable"),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 3.0 * self.success_radius < self.goal_range:
            raise ValueError(
                f"success_radius: expected below goal_range / 3 = {self.goal_range / 3.0!r} (goals start 3 success "
                f"radii away), got {self.success_radius!r}"
            )


@wp.func
def planar_distance(a: wp.vec3, x: float, y: float) -> float:
    """Distance [m] in the ground plane between ``a`` and (x, y)."""
    return wp.sqrt((a[0] - x) * (a[0] - x) + (a[1] - y) * (a[1] - y))


@term("(x, y)_goal")
def goal_xy(s: Any, w: int) -> wp.vec2:
    """The world's goal [m]."""
    return wp.vec2(s.goals[w, 0], s.goals[w, 1])


@term("1 on the step the object reaches the goal", source="ManiSkill / Isaac Lab success bonus")
def success_bonus(s: Any, w: int) -> float:
    """1 when ``success`` (the step that ends the episode), else 0."""
    bonus = float(0.0)
    if s.success[w]:
        bonus = 1.0
    return bonus


@term("|object_xy - goal| < r_success")
def goal_reached(s: Any, w: int) -> bool:
    """The object is within the success radius of the goal (``success``)."""
    return s.success[w]
