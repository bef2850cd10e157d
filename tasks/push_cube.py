"""``steel_envs/PushCube-v0``: push a free cube to a goal on the ground with a gantry finger."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import warp as wp
from steel_envs.envs.push import CUBE_HALF, FINGER_RADIUS, PushScene, PushSceneConfig
from steel_envs.tasks.terms import goals
from steel_envs.tasks.terms.goals import PushGoalConfig, draw_goal, goals_on_ground

from steel_envs.benchmark import scripted_success
from steel_envs.registration import register_task
from steel_envs.spec import ObservationBlock, RewardTerm, TerminationTerm, term
from steel_envs.torch_views import to_torch
from steel_envs.train_config import PpoConfig

__all__ = ["PushCubeConfig", "PushCubeEnv", "PushCubeSingleEnv", "scripted_policy"]

FINGER_BODY = 1
CUBE_BODY = 2
_PUSH_CONTACT = wp.constant(CUBE_HALF + FINGER_RADIUS)
"""Finger-to-cube centre distance [m] at contact with a face (0.08)."""


@dataclass(kw_only=True)
class PushCubeConfig(PushSceneConfig, PushGoalConfig):
    """The scene's fields, then the goal region, reward weights and success radius (``PushGoalConfig``)."""


@wp.struct
class PushCubeState:
    """What PushCube's terms read: the bodies' state, each world's goal and success flag, the success radius."""

    body_world_start: wp.array[wp.int32]
    body_q: wp.array[wp.transform]
    body_qd: wp.array[wp.spatial_vector]
    goals: wp.array2d[wp.float32]
    success: wp.array[wp.bool]
    success_radius: wp.float32


@wp.func
def _position(s: Any, w: int, body: int) -> wp.vec3:
    return wp.transform_get_translation(s.body_q[s.body_world_start[w] + body])


@wp.func
def _velocity(s: Any, w: int, body: int) -> wp.vec3:
    return wp.spatial_top(s.body_qd[s.body_world_start[w] + body])


@wp.func
def _cube_goal_distance(s: Any, w: int) -> float:
    p = _position(s, w, CUBE_BODY)
    dx = p[0] - s.goals[w, 0]
    dy = p[1] - s.goals[w, 1]
    return wp.sqrt(dx * dx + dy * dy)


@wp.kernel(enable_backward=False)
def _draw_goals(
    world_mask: wp.array[wp.bool],
    r: wp.float32,
    min_distance: wp.float32,
    body_world_start: wp.array[wp.int32],
    body_q: wp.array[wp.transform],
    rng_state: wp.array[wp.uint32],
    goals: wp.array2d[wp.float32],
):
    """Draw the goals of the selected worlds away from their cube (``draw_goal``)."""
    w = wp.tid()
    if not world_mask[w]:
        return
    cube = wp.transform_get_translation(body_q[body_world_start[w] + CUBE_BODY])
    rng_state[w] = draw_goal(rng_state[w], r, min_distance, cube[0], cube[1], goals, w)


@wp.kernel(enable_backward=False)
def _update_success(s: PushCubeState):
    """After the physics: the cube is within the success radius of its goal."""
    w = wp.tid()
    s.success[w] = _cube_goal_distance(s, w) < s.success_radius


@term("(x, y)_finger")
def finger_pos(s: Any, w: int) -> wp.vec2:
    """Finger position x, y [m]."""
    p = _position(s, w, FINGER_BODY)
    return wp.vec2(p[0], p[1])


@term("(vx, vy)_finger")
def finger_vel(s: Any, w: int) -> wp.vec2:
    """Finger velocity x, y [m/s]."""
    v = _velocity(s, w, FINGER_BODY)
    return wp.vec2(v[0], v[1])


@term("p_cube")
def cube_pos(s: Any, w: int) -> wp.vec3:
    """Cube position [m]."""
    return _position(s, w, CUBE_BODY)


@term("q_cube")
def cube_quat(s: Any, w: int) -> wp.quat:
    """Cube orientation quaternion (x, y, z, w) [1]."""
    return wp.transform_get_rotation(s.body_q[s.body_world_start[w] + CUBE_BODY])


@term("v_cube")
def cube_vel(s: Any, w: int) -> wp.vec3:
    """Cube velocity [m/s]."""
    return _velocity(s, w, CUBE_BODY)


@term("(x, y)_cube - (x, y)_goal")
def cube_to_goal(s: Any, w: int) -> wp.vec2:
    """Cube minus goal, x and y [m]."""
    p = _position(s, w, CUBE_BODY)
    return wp.vec2(p[0] - s.goals[w, 0], p[1] - s.goals[w, 1])


@term("(x, y)_cube - (x, y)_finger")
def finger_to_cube(s: Any, w: int) -> wp.vec2:
    """Cube minus finger, x and y [m]."""
    p = _position(s, w, CUBE_BODY)
    finger = _position(s, w, FINGER_BODY)
    return wp.vec2(p[0] - finger[0], p[1] - finger[1])


@wp.func
def _push_pose_distance(finger: wp.vec3, cube: wp.vec3, goals: wp.array2d[wp.float32], w: int):
    """Length [m] of the shortest planar path of the finger to the push pose that goes round the cube.

    The push pose lies ``_PUSH_CONTACT`` (R) behind the cube's centre on the goal-cube line; the path may not enter
    the circle of radius R about the centre (the finger cannot pass through the cube). Seen from the centre, with
    ``d = |finger - cube| >= R`` (a finger pressed closer counts from the circle) and ``theta`` the angle between
    the finger and the push pose: the straight line where the push pose is visible (``theta <= acos(R / d)``),
    else the tangent ``sqrt(d^2 - R^2)`` plus the arc ``R (theta - acos(R / d))``.
    """
    u = wp.vec2(goals[w, 0] - cube[0], goals[w, 1] - cube[1])
    u = u / wp.max(wp.length(u), 1.0e-6)
    r = wp.vec2(finger[0] - cube[0], finger[1] - cube[1])
    r_length = wp.length(r)
    d = wp.max(r_length, _PUSH_CONTACT)
    theta = wp.acos(wp.clamp(-wp.dot(r, u) / wp.max(r_length, 1.0e-6), -1.0, 1.0))
    visible = wp.acos(_PUSH_CONTACT / d)
    if theta <= visible:
        return wp.length(r + _PUSH_CONTACT * u)
    return wp.sqrt(d * d - _PUSH_CONTACT * _PUSH_CONTACT) + _PUSH_CONTACT * (theta - visible)


@term("path(finger_xy, push_pose) around the cube", source="ManiSkill PushCube-v1 reach reward (push pose)")
def push_pose_path(s: Any, w: int) -> float:
    """Length of the finger's shortest way to the push pose that stays out of the cube [m]."""
    return _push_pose_distance(_position(s, w, FINGER_BODY), _position(s, w, CUBE_BODY), s.goals, w)


@term("|cube_xy - goal|")
def cube_goal_distance(s: Any, w: int) -> float:
    """Planar distance of the cube's centre to the goal [m]."""
    return _cube_goal_distance(s, w)


class PushCubeEnv(PushScene):
    """Push a cube to a goal on the ground with the finger of a 2-DOF gantry (free rigid bodies on SolverSteel).

    ## Action space
    | index | action | min | max | unit |
    |---|---|---|---|---|
    | 0 | finger x velocity, times ``max_finger_speed`` (0.5 m/s) | -1 | 1 | 1 |
    | 1 | finger y velocity, times ``max_finger_speed`` | -1 | 1 | 1 |

    ## Observation space
    | index | observation | unit |
    |---|---|---|
    | 0-1 | finger position x, y | m |
    | 2-3 | finger velocity x, y | m/s |
    | 4-6 | cube position | m |
    | 7-10 | cube orientation quaternion (x, y, z, w) | 1 |
    | 11-13 | cube velocity | m/s |
    | 14-15 | goal x, y | m |
    | 16-17 | cube minus goal, x and y | m |
    | 18-19 | cube minus finger, x and y | m |

    ## Rewards
    Weights are config fields, also settable by term name (``reward_weights={"reach": 0.5}``).

    - ``reward_reach = -reach_weight * path(finger_xy, push_pose)``, with ``push_pose = cube_xy - 0.08 u`` the point
      behind the cube where the finger touches it to push it toward the goal (``u`` the unit vector from the cube to
      the goal, 0.08 m the cube's half-size plus the finger's radius), as ManiSkill's PushCube-v1 reaches for its
      push pose; ``path`` is the length of the shortest way there that stays out of the 0.08 m circle about the
      cube's centre (straight where the push pose is in sight, else tangent and arc), so that pressing the cube from
      the goal side is not a local optimum
    - ``reward_push = -push_weight * |cube_xy - goal|``
    - ``reward_success = success_bonus`` on the step the cube comes within ``success_radius`` (5 cm) of the goal

    ## Starting state
    Finger at (-0.5, 0) m; cubes at rest at U(-0.3, 0.3)^2 m (with ``clutter``, each in its own cell of a 3 x 3
    grid, see :class:`~steel_envs.envs.push.PushSceneConfig`); goal at U(-0.3, 0.3)^2 m, redrawn (up to 16 times)
    while within 3 success radii of the cube.

    ## Episode end
    Terminated on success (term ``goal_reached``, also ``info["success"]``) or a non-finite state; truncated after
    250 steps (10 s) or on a constraint overflow.
    """

    config_cls = PushCubeConfig
    config: PushCubeConfig
    terminations = (TerminationTerm("goal_reached", goals.goal_reached),)
    rewards = (
        RewardTerm("reach", push_pose_path, weight="reach_weight", cost=True),
        RewardTerm("push", cube_goal_distance, weight="push_weight", cost=True),
        RewardTerm("success", goals.success_bonus, weight="success_bonus"),
    )
    default_max_episode_steps = 250
    observations = (
        ObservationBlock("finger_pos", 2, finger_pos, "finger position x, y", "m"),
        ObservationBlock("finger_vel", 2, finger_vel, "finger velocity x, y", "m/s"),
        ObservationBlock("cube_pos", 3, cube_pos, "cube position", "m"),
        ObservationBlock("cube_quat", 4, cube_quat, "cube orientation quaternion (x, y, z, w)", "1"),
        ObservationBlock("cube_vel", 3, cube_vel, "cube velocity", "m/s"),
        ObservationBlock("goal", 2, goals.goal_xy, "goal x, y", "m"),
        ObservationBlock("cube_to_goal", 2, cube_to_goal, "cube minus goal, x and y", "m"),
        ObservationBlock("finger_to_cube", 2, finger_to_cube, "cube minus finger, x and y", "m"),
    )
    train_config = PpoConfig(
        num_envs=128,
        num_steps_per_env=32,
        max_iterations=2500,
        # A floor on the std (per action dimension): a collapsing std holds rsl_rl's adaptive learning rate at its
        # floor (the KL between successive policies grows as the std shrinks); runs whose std sat at 0.1 fell short.
        min_noise_std=0.3,
    )
    """PPO settings of ``steel-envs train`` for this task (the learner is not imported here)."""
    benchmark = scripted_success("manipulation", "PushCube-v0")

    def goal_positions(self) -> np.ndarray:
        """Each world's goal on the ground, (num_envs, 1, 3) [m]."""
        return goals_on_ground(self.term_state.goals)

    def _setup_task(self) -> None:
        state, bodies = PushCubeState(), self.state_0
        state.body_world_start, state.body_q, state.body_qd = self.model.body_world_start, bodies.body_q, bodies.body_qd
        state.goals = wp.zeros((self.num_envs, 2), dtype=wp.float32)
        state.success = wp.zeros(self.num_envs, dtype=wp.bool)
        state.success_radius = float(self.config.success_radius)
        self.term_state = state
        self.task_info = {"success": to_torch(state.success)}

    def _post_physics(self) -> None:
        self.launch_per_world(_update_success, inputs=[self.term_state])

    def _reset_task(self, world_mask: wp.array) -> None:
        self.launch_per_world(
            _draw_goals,
            inputs=[
                world_mask,
                float(self.config.goal_range),
                3.0 * float(self.config.success_radius),
                self.model.body_world_start,
                self.state_0.body_q,
            ],
            outputs=[self.rng_state, self.term_state.goals],
        )


PushCubeSingleEnv = register_task("steel_envs/PushCube-v0", PushCubeEnv)


_STANDOFF = _PUSH_CONTACT + 0.03
"""Distance [m] behind the cube's centre, on the goal-cube line, where the finger lines up before a push."""
_BEHIND = _PUSH_CONTACT - 0.015
"""The finger counts as behind the cube when its offset along the cube-to-goal direction is below minus this [m]."""
_SIDE_CLEARANCE = _STANDOFF + 0.02
"""Lateral offset [m] at which the finger passes the cube on its way round: clear of a corner (0.05 sqrt(2) +
0.03 = 0.10) at any yaw."""
_LINE_TOLERANCE = 0.03
"""Largest lateral offset [m] from the cube-goal line at which the finger pushes."""
_POSITION_GAIN = 10.0
"""Action per m of distance to a waypoint (saturating at 10 cm)."""
_LINE_GAIN = 20.0
"""Action per m of lateral offset while pushing."""


def scripted_policy(obs: torch.Tensor) -> torch.Tensor:
    """A scripted, stateless solver of PushCube-v0: get behind the cube as seen from the goal, then push through it.

    With ``u`` the unit vector from the cube to the goal and ``n`` its left normal, the finger's offset from the
    cube is split into ``along = (finger - cube) . u`` and ``lateral = (finger - cube) . n`` [m]. Behind the cube
    (``along < -0.065``, not more than 0.14 behind) and on the line (``|lateral| < 0.03``) it pushes: velocity
    ``u`` at full speed plus ``-20 * lateral * n`` to stay on the line, re-aimed every step, so a cube that turns
    is steered back. Otherwise it goes to the stand-off point ``cube - 0.11 u`` by proportional control, around the
    cube when it is on the goal side: sideways to ``|lateral| = 0.13`` first, then back. The velocity command is
    scaled down to unit norm where it exceeds it. Measured on 100 episodes: see "Scripted solvers" in
    ``docs/guides/evaluation.md``.

    Usable as ``steel-envs evaluate steel_envs/PushCube-v0 --policy steel_envs.tasks.push_cube:scripted_policy``.
    Clutter cubes (``clutter > 0``) are not observed and not avoided.

    Args:
        obs: Observations (N, 20) float32 in the layout of :class:`PushCubeEnv` (finger x, y at 0-1, cube
            position at 4-6, cube minus goal at 16-17, all [m]), on any device.

    Returns:
        Actions (N, 2) float32 in [-1, 1], the finger's x, y velocity over ``max_finger_speed``, on ``obs``'s
        device.
    """
    finger, cube, to_goal = obs[:, 0:2], obs[:, 4:6], -obs[:, 16:18]
    u = to_goal / to_goal.norm(dim=-1, keepdim=True).clamp_min(1.0e-6)
    n = torch.stack([-u[:, 1], u[:, 0]], dim=-1)
    offset = finger - cube
    along = (offset * u).sum(-1, keepdim=True)
    lateral = (offset * n).sum(-1, keepdim=True)
    side = torch.where(lateral >= 0.0, 1.0, -1.0)
    in_front = along > -_BEHIND
    target = torch.where(
        in_front & (lateral.abs() < _SIDE_CLEARANCE - 0.01),
        cube + n * side * _SIDE_CLEARANCE + u * along,  # step sideways, keeping the offset along the line
        torch.where(in_front, cube + n * lateral - u * _STANDOFF, cube - u * _STANDOFF),  # back, then to the line
    )
    pushing = (along <= -_BEHIND) & (along > -_STANDOFF - 0.03) & (lateral.abs() < _LINE_TOLERANCE)
    velocity = torch.where(pushing, u - n * (_LINE_GAIN * lateral), _POSITION_GAIN * (target - finger))
    velocity = velocity / velocity.norm(dim=-1, keepdim=True).clamp_min(1.0)
    return velocity.to(torch.float32)
