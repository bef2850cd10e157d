"""``steel_envs/AllegroReorient-v0``: turn a cube in the upward palm of the Allegro hand to a sampled orientation,
the IsaacGymEnvs / Isaac Lab in-hand recipe (Isaac Lab ``isaaclab_tasks/direct/allegro_hand/allegro_hand_env_cfg.py``
and ``direct/inhand_manipulation/inhand_manipulation_env.py``; IsaacGymEnvs ``cfg/task/AllegroHand.yaml``)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import newton
import numpy as np
import warp as wp
from steel_envs.envs.allegro import (
    FINGERTIP_BODIES,
    HAND_JOINTS,
    HAND_LOWER,
    HAND_UPPER,
    PALM_CENTRE,
    PALM_POSITION,
    PALM_SURFACE,
    AllegroScene,
)
from steel_envs.envs.panda import rotation_angle
from steel_envs.tasks.panda_reach import last_action
from steel_envs.tasks.terms import locomotion
from steel_envs.tasks.terms.objects import (
    CubeModel,
    cube_model,
    cubes_written,
    face_down_rotation,
    random_rotation,
    write_cube,
)

from steel_envs import kernels
from steel_envs.assets import ALLEGRO
from steel_envs.benchmark import BenchmarkSpec
from steel_envs.ranges import any_value, between, declare, positive
from steel_envs.registration import register_task
from steel_envs.spec import (
    EpisodeMetric,
    InitialStateSpec,
    ObservationBlock,
    RewardTerm,
    TaskConfig,
    TerminationTerm,
    term,
)
from steel_envs.torch_views import to_torch
from steel_envs.train_config import PpoConfig

__all__ = ["TARGETS", "AllegroReorientConfig", "AllegroReorientEnv", "AllegroReorientSingleEnv"]

CUBE_BODY = 21
"""World-local index of the cube's body (after the hand's 21)."""
_CUBE = wp.constant(CUBE_BODY)
_CUBE_COORD = wp.constant(HAND_JOINTS)
"""World-local index of the cube's first coordinate (its free joint after the hand's 16)."""
_MAX_HALF = 0.035
"""The largest cube half-edge ``cube_size`` may ask [m]: the collision box is built at this size and scaled down per
world."""
_PALM_X = PALM_POSITION[0] + PALM_CENTRE
"""World x of the palm's centre [m] (the palm frame's z points along the world's +x)."""
_CUBE_FLOOR = PALM_POSITION[2] + PALM_SURFACE + 0.0063 + 0.003
"""World height of the cube's lowest point at reset [m]: the palm's surface (0.511 m), raised by the 6.3 mm the
thumb's base box (link_12.0) stands above it under the palm's middle at the home pose, and 3 mm of clearance (the
joints' start noise lifts that box by less). The cube drops onto the hand in its first steps."""
_TIPS = wp.constant(wp.vec4i(*FINGERTIP_BODIES))
TARGETS = ("random", "z_rotation")
"""``random``: each goal orientation drawn uniformly from SO(3); ``z_rotation``: each goal the last one turned by
``z_rotation_step`` about the world's vertical (MuJoCo Playground's LeapCubeRotateZAxis, in steps)."""


@dataclass(kw_only=True)
class AllegroReorientConfig(TaskConfig):
    """Isaac Lab's Allegro in-hand ranges and reward weights (per control step, as its direct environment sums them),
    the cube's randomization and the goal variant."""

    target: str = "random"
    """One of :data:`TARGETS`."""
    z_rotation_step: float = math.pi / 4.0
    """``z_rotation``: the turn about the vertical from one goal to the next [rad], counterclockwise seen from
    above."""
    joint_noise: float = 0.2
    """U(-s, s) noise on the initial joint angles around the home pose [rad] (Isaac Lab ``reset_dof_pos_noise``),
    narrowed per joint to stay inside its range (the thumb's rotation starts 0.017 rad above its lower limit)."""
    cube_position_noise: float = 0.01
    """U(-s, s) noise on the cube's initial x and y about the palm's centre [m] (``reset_position_noise``)."""
    cube_size: tuple[float, float] = (0.055, 0.065)
    """Range of the cube's edge [m], drawn per world at reset."""
    cube_mass: tuple[float, float] = (0.07, 0.11)
    """Range of the cube's mass [kg], drawn per world at reset (Isaac Lab's density 400 kg/m^3 gives 0.067-0.110 kg
    over these edges)."""
    cube_friction: tuple[float, float] = (0.8, 1.2)
    """Range of the cube's friction coefficient, drawn per world at reset (Isaac Lab's material: 1.0)."""
    randomize: bool = True
    """Draw the cube's edge, mass and friction per world at reset; False: every cube at the middles of the ranges
    (its pose and the goal are drawn either way)."""
    distance_weight: float = -10.0
    """Weight of ``cube_distance`` (``dist_reward_scale``)."""
    rotation_weight: float = 1.0
    """Weight of ``rotation_tracking`` (``rot_reward_scale``)."""
    rotation_eps: float = 0.1
    """The rotation reward's 1 / (d + eps) offset [rad] (``rot_eps``)."""
    action_weight: float = -0.0002
    """Weight of ``action_l2`` (``action_penalty_scale``)."""
    success_weight: float = 250.0
    """Weight of ``success_bonus`` (``reach_goal_bonus``)."""
    fall_weight: float = 0.0
    """Weight of ``fall`` (``fall_penalty``: 0 in both recipes; the episode's end is the penalty)."""
    success_tolerance: float = 0.1
    """Largest rotation distance to the goal [rad] that counts as a success (IsaacGymEnvs ``successTolerance``;
    Isaac Lab's direct task uses 0.2); pi makes every step a success."""
    hold_distance: float = 0.05
    """Largest distance of the cube's centre from where it was placed [m] at which a goal counts: a cube tossed into
    the air and turning there meets no goal (the recipes do not check; a cube given 2 m/s up and 6 rad/s met 3 goals
    in 90 steps without the hand)."""
    fall_distance: float = 0.24
    """Distance of the cube's centre from where it was placed on the palm [m] beyond which it fell (``fall_dist``)."""

    field_ranges = declare(
        z_rotation_step=between(0.0, math.pi + 1e-6, "an angle [rad]", low_open=True),
        joint_noise=between(0.0, 0.5, "a noise half-width [rad]"),
        cube_position_noise=between(0.0, 0.02, "a noise half-width [m]; beyond it the cube leaves the palm's middle"),
        cube_size=positive("a (low, high) edge range [m]"),
        cube_mass=positive("a (low, high) mass range [kg]"),
        cube_friction=positive("a (low, high) friction coefficient range"),
        distance_weight=any_value("a signed reward weight per step"),
        rotation_weight=any_value("a signed reward weight per step"),
        rotation_eps=positive("an angle [rad]"),
        action_weight=any_value("a signed reward weight per step"),
        success_weight=any_value("a signed reward weight per step"),
        fall_weight=any_value("a signed reward weight per step"),
        success_tolerance=between(0.0, math.pi + 1e-6, "an angle [rad]", low_open=True),
        hold_distance=positive("a distance [m]"),
        fall_distance=positive("a distance [m]"),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.target not in TARGETS:
            raise ValueError(f"target: expected one of {TARGETS}, got {self.target!r}")
        self.require_intervals("cube_size", "cube_mass", "cube_friction")
        if self.cube_size[1] > 2.0 * _MAX_HALF:
            raise ValueError(
                f"cube_size: expected edges <= {2.0 * _MAX_HALF} m (the palm's width), got {self.cube_size!r}"
            )
        if self.success_tolerance >= self.z_rotation_step and self.target == "z_rotation":
            raise ValueError(
                f"success_tolerance: expected below z_rotation_step ({self.z_rotation_step}), or every goal is met "
                f"where it is drawn, got {self.success_tolerance!r}"
            )


@wp.struct
class AllegroReorientState:
    """What AllegroReorient's terms read: the hand's and the cube's state, each world's goal and where its cube was
    placed, the task's parameters."""

    body_world_start: wp.array[wp.int32]
    coord_world_start: wp.array[wp.int32]
    dof_world_start: wp.array[wp.int32]
    body_q: wp.array[wp.transform]
    body_qd: wp.array[wp.spatial_vector]
    joint_q: wp.array[wp.float32]
    joint_qd: wp.array[wp.float32]
    lower: wp.array[wp.float32]
    upper: wp.array[wp.float32]
    rest: wp.array[wp.vec3]
    """(num_envs,) where each world's cube was placed at reset, its centre [m] (the distance reward's, the hold's
    and the fall's reference: Isaac Lab's ``in_hand_pos``); it drops 5-10 mm onto the hand from there."""
    goals: wp.array[wp.quat]
    """(num_envs,) each world's goal orientation of the cube (x, y, z, w)."""
    actions: wp.array2d[wp.float32]
    last_actions: wp.array2d[wp.float32]
    success: wp.array[wp.bool]
    """(num_envs,) the cube within ``success_tolerance`` of the goal this step (the goal is redrawn after it)."""
    rotation_eps: wp.float32
    success_tolerance: wp.float32
    hold_distance: wp.float32
    fall_distance: wp.float32


@wp.func
def _cube(s: Any, w: int) -> wp.transform:
    return s.body_q[s.body_world_start[w] + _CUBE]


@wp.func
def _offset(s: Any, w: int) -> wp.vec3:
    return wp.transform_get_translation(_cube(s, w)) - s.rest[w]


@wp.func
def _dropped(s: Any, w: int) -> bool:
    return wp.length(_offset(s, w)) >= s.fall_distance


@wp.func
def _rotation_distance(s: Any, w: int) -> float:
    return rotation_angle(wp.transform_get_rotation(_cube(s, w)), s.goals[w])


@term("2 (q - lower) / (upper - lower) - 1", source="Isaac Lab unscale")
def joint_pos_unscaled(s: Any, w: int, j: int) -> float:
    """Joint position mapped from its range onto [-1, 1] [1]."""
    q = s.joint_q[s.coord_world_start[w] + j]
    return 2.0 * (q - s.lower[j]) / (s.upper[j] - s.lower[j]) - 1.0


@term("0.2 qd", source="Isaac Lab vel_obs_scale")
def joint_vel_scaled(s: Any, w: int, j: int) -> float:
    """Joint velocity times 0.2 [rad/s]."""
    return 0.2 * s.joint_qd[s.dof_world_start[w] + j]


@term("p_cube - p_rest")
def cube_position(s: Any, w: int) -> wp.vec3:
    """The cube's centre relative to where it was placed at reset [m]."""
    return _offset(s, w)


@term("q_cube")
def cube_rotation(s: Any, w: int) -> wp.quat:
    """The cube's orientation, a unit quaternion (x, y, z, w) [1]."""
    return wp.transform_get_rotation(_cube(s, w))


@term("v_cube")
def cube_lin_vel(s: Any, w: int) -> wp.vec3:
    """The cube's centre's velocity, world frame [m/s]."""
    return wp.spatial_top(s.body_qd[s.body_world_start[w] + _CUBE])


@term("0.2 w_cube", source="Isaac Lab vel_obs_scale")
def cube_ang_vel(s: Any, w: int) -> wp.vec3:
    """The cube's angular velocity times 0.2, world frame [rad/s]."""
    return 0.2 * wp.spatial_bottom(s.body_qd[s.body_world_start[w] + _CUBE])


@term("q_goal")
def goal_rotation(s: Any, w: int) -> wp.quat:
    """The goal orientation of the cube (x, y, z, w) [1]."""
    return s.goals[w]


@term("q_cube q_goal^-1", source="Isaac Lab quat_mul(object_rot, quat_conjugate(goal_rot))")
def rotation_error(s: Any, w: int) -> wp.quat:
    """The rotation from the goal to the cube (x, y, z, w) [1]."""
    return wp.transform_get_rotation(_cube(s, w)) * wp.quat_inverse(s.goals[w])


@term("p_tip - p_rest")
def fingertip_positions(s: Any, w: int, i: int) -> float:
    """Coordinate i % 3 of fingertip i // 3 (index, middle, ring, thumb) relative to where the cube was placed [m]."""
    tip = s.body_q[s.body_world_start[w] + _TIPS[i // 3]]
    return (wp.transform_get_translation(tip) - s.rest[w])[i % 3]


@term("|p_cube - p_rest|", source="Isaac Lab in-hand dist_rew")
def cube_distance(s: Any, w: int) -> float:
    """Distance of the cube's centre from where it was placed at reset [m]."""
    return wp.length(_offset(s, w))


@term("1 / (d_rot + eps)", source="Isaac Lab in-hand rot_rew")
def rotation_tracking(s: Any, w: int) -> float:
    """Closeness of the cube's orientation to the goal: 1 / (rotation distance + ``rotation_eps``) [1/rad]."""
    return 1.0 / (_rotation_distance(s, w) + s.rotation_eps)


@term("1 on the step the cube reaches the goal", source="Isaac Lab in-hand reach_goal_bonus")
def success_bonus(s: Any, w: int) -> float:
    """1 on a step whose rotation distance is within ``success_tolerance`` (a new goal follows) [1]."""
    return wp.where(s.success[w], 1.0, 0.0)


@term("|p_cube - p_rest| >= fall_distance", source="Isaac Lab in-hand out_of_reach")
def dropped(s: Any, w: int) -> bool:
    """The cube's centre at least ``fall_distance`` from where it was placed: it fell off the hand."""
    return _dropped(s, w)


@term("1[|p_cube - p_rest| >= fall_distance]", source="Isaac Lab in-hand fall_penalty")
def fall(s: Any, w: int) -> float:
    """1 on the step the cube falls (a reward term and the ``drops`` metric's step value) [1]."""
    return wp.where(_dropped(s, w), 1.0, 0.0)


@term("2 acos |(q_cube q_goal^-1)_w|")
def rotation_distance(s: Any, w: int) -> float:
    """Rotation angle between the cube and its goal [rad] (a metric's step value)."""
    return _rotation_distance(s, w)


@wp.kernel(enable_backward=False)
def _draw_cubes(
    world_mask: wp.array[wp.bool],
    noise: wp.float32,
    low_props: wp.vec3,
    high_props: wp.vec3,
    body_world_start: wp.array[wp.int32],
    coord_world_start: wp.array[wp.int32],
    cubes: CubeModel,
    rng_state: wp.array[wp.uint32],
    rest: wp.array[wp.vec3],
    joint_q: wp.array[wp.float32],
    body_q: wp.array[wp.transform],
):
    """For the selected worlds draw the cube's edge, mass and friction (``low_props``/``high_props``: edge [m], mass
    [kg], mu) and its pose: on one of its six faces (uniform) just above the palm's centre +- ``noise`` [m] in x and
    y, turned by U(-pi, pi) about the vertical; write it into the model
    (:func:`steel_envs.tasks.terms.objects.write_cube`) and where it was placed into ``rest``."""
    w = wp.tid()
    if not world_mask[w]:
        return
    rng = rng_state[w]
    edge = low_props[0] + (high_props[0] - low_props[0]) * wp.randf(rng)
    mass = low_props[1] + (high_props[1] - low_props[1]) * wp.randf(rng)
    mu = low_props[2] + (high_props[2] - low_props[2]) * wp.randf(rng)
    x = _PALM_X + noise * (2.0 * wp.randf(rng) - 1.0)
    y = noise * (2.0 * wp.randf(rng) - 1.0)
    face = wp.min(int(wp.randf(rng) * 6.0), 5)
    rotation = face_down_rotation(face, wp.pi * (2.0 * wp.randf(rng) - 1.0))
    rng_state[w] = rng
    p = wp.vec3(x, y, _CUBE_FLOOR + 0.5 * edge)
    rest[w] = p
    q = coord_world_start[w] + _CUBE_COORD
    for k in range(3):
        joint_q[q + k] = p[k]
    for k in range(4):
        joint_q[q + 3 + k] = rotation[k]
    body = body_world_start[w] + _CUBE
    body_q[body] = wp.transform(p, rotation)
    write_cube(cubes, w, edge, mass, mu)


@wp.kernel(enable_backward=False)
def _draw_goals(
    world_mask: wp.array[wp.bool],
    z_rotation: wp.bool,
    from_goal: wp.bool,
    step: wp.float32,
    body_world_start: wp.array[wp.int32],
    body_q: wp.array[wp.transform],
    rng_state: wp.array[wp.uint32],
    goals: wp.array[wp.quat],
):
    """A new goal for the selected worlds: uniform over SO(3), or (``z_rotation``) turned by ``step`` [rad] about the
    vertical from the cube's orientation (at a reset) or from the goal it met (``from_goal``, at a success)."""
    w = wp.tid()
    if not world_mask[w]:
        return
    if z_rotation:
        start = goals[w]
        if not from_goal:
            start = wp.transform_get_rotation(body_q[body_world_start[w] + _CUBE])
        goals[w] = wp.normalize(wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), step) * start)
    else:
        rng = rng_state[w]
        u1 = wp.randf(rng)
        u2 = wp.randf(rng)
        u3 = wp.randf(rng)
        goals[w] = random_rotation(u1, u2, u3)
        rng_state[w] = rng


@wp.kernel(enable_backward=False)
def _update_success(s: AllegroReorientState, skip: wp.array[wp.bool]):
    """A goal met: the cube within ``success_tolerance`` of it and ``hold_distance`` of where it was placed, in a
    world whose step counts (``skip``: a NEXT_STEP reset pending)."""
    w = wp.tid()
    held = wp.length(_offset(s, w)) <= s.hold_distance
    s.success[w] = (not skip[w]) and held and _rotation_distance(s, w) <= s.success_tolerance


@wp.kernel(enable_backward=False)
def _next_goals(s: AllegroReorientState, mask: wp.array[wp.bool]):
    """The worlds whose cube met its goal this step get a new one (``mask``: their flags, for :func:`_draw_goals`)."""
    w = wp.tid()
    mask[w] = s.success[w]


class AllegroReorientEnv(AllegroScene):
    """Turn a cube lying in the upward palm of the Allegro hand until its orientation matches a goal; each goal met
    draws the next, IsaacGymEnvs' ``AllegroHand`` and Isaac Lab's ``Isaac-Repose-Cube-Allegro-Direct-v0`` recipe on
    SolverSteel.

    ## Action space
    | index | action | min | max | unit |
    |---|---|---|---|---|
    | 0-15 | joint_0.0 .. joint_15.0 position targets, -1 the joint's lower limit, 1 its upper | -1 | 1 | 1 |

    Joints 0-3 move the index finger (its spread, then three flexions), 4-7 the middle finger, 8-11 the ring finger,
    12-15 the thumb (its rotation towards the palm, then three).

    ## Observation space
    | index | observation | unit |
    |---|---|---|
    | 0-15 | joint positions mapped from their ranges onto [-1, 1] | 1 |
    | 16-31 | joint velocities times 0.2 | rad/s |
    | 32-34 | the cube's centre relative to where it was placed at reset | m |
    | 35-38 | the cube's orientation (x, y, z, w) | 1 |
    | 39-41 | the cube's linear velocity | m/s |
    | 42-44 | the cube's angular velocity times 0.2 | rad/s |
    | 45-48 | the goal orientation (x, y, z, w) | 1 |
    | 49-52 | the rotation from the goal to the cube (x, y, z, w) | 1 |
    | 53-64 | the fingertips' positions (index, middle, ring, thumb) relative to where the cube was placed | m |
    | 65-80 | the previous step's actions | 1 |

    World frame: the palm faces up (+z), the fingers point along +x; the palm's centre is at (-0.0475, 0, 0.511) m.
    Isaac Lab's "full" observation without the fingertips' orientations and velocities.

    ## Rewards
    Isaac Lab's direct in-hand reward (``compute_rewards``): weights per control step, config fields, also settable by
    term name. ``d_rot`` is the rotation distance to the goal, ``2 acos |(q_cube q_goal^-1)_w|``.

    ## The cube
    A box of edge U(0.055, 0.065) m, mass U(0.07, 0.11) kg and friction coefficient U(0.8, 1.2), drawn per world at
    every reset (``randomize=False``: 6 cm, 0.09 kg, 1.0).

    ## Goal
    ``target="random"``: a goal orientation drawn uniformly from SO(3) at reset and after each success.
    ``target="z_rotation"``: the cube's starting orientation turned by ``z_rotation_step`` (pi/4) about the vertical,
    then each met goal turned by it again: the cube is to keep turning counterclockwise.

    ## Starting state
    The hand at Isaac Lab's home (fingers straight, the thumb's rotation at 0.28 rad) + U(-0.2, 0.2) rad per joint
    (narrowed to its range), at rest; the cube on one of its six faces (uniform) 3 mm above the hand over the palm's
    centre, +- 1 cm in x and y, turned U(-pi, pi) about the vertical; it drops 5-10 mm onto the hand in the first
    steps. A success reaches a new goal, not a new episode.

    ## Episode end
    Terminated when the cube's centre is 0.24 m or more from where it was placed (``dropped``; it fell off the hand) or
    on a non-finite state; truncated after 300 steps (10 s, Isaac Lab's ``episode_length_s``), on a constraint
    overflow or a contact deeper than ``penetration_limit``. ``info["success"]`` flags a step on which a goal was met
    (the cube within ``success_tolerance`` of it, its centre within ``hold_distance``, 5 cm, of where it was placed);
    the episode metric ``consecutive_successes`` counts them, ``rotation_distance`` is the last step's distance to the
    goal, ``mean_rotation_distance`` the episode's mean (the benchmark score: a goal met just before the end and the
    fresh one drawn weigh one step each) and ``drops`` is 1 for an episode ended by a fall.

    ## Differences from Isaac Lab's Allegro in-hand task
    The hand is welded palm up, the palm level (Isaac Lab's is tilted); its gravity is on (the drives hold the fingers:
    stiffness 1 N m/rad sags a finger by about 0.03 rad). The cube starts on one of its faces at a random yaw (Isaac
    Lab: its default orientation with position noise), with a drawn size, mass and friction. The success tolerance is
    IsaacGymEnvs' 0.1 rad (Isaac Lab's direct task: 0.2), and a goal counts only with the cube held (within 5 cm of
    where it was placed; the recipes count a cube turning in the air). Goals are uniform over SO(3) (IsaacGymEnvs:
    random turns about x and y). No fingertip orientations or velocities in the observation, no moving average of the
    actions (Isaac Lab's ``act_moving_average`` is 1.0: none either).
    """

    config_cls = AllegroReorientConfig
    config: AllegroReorientConfig
    default_max_episode_steps = 300  # 10 s, allegro_hand_env_cfg.py episode_length_s
    rigid_contacts_per_world = 192
    """A fist closed on the cube makes up to 110 contacts per world (8 worlds x 150 steps; the fingers with the cube,
    the palm and each other): 1.7x headroom. With 96 the shared pool overflowed."""
    observations = (
        ObservationBlock(
            "joint_pos", HAND_JOINTS, joint_pos_unscaled, "joint positions mapped from their ranges onto [-1, 1]", "1"
        ),
        ObservationBlock("joint_vel", HAND_JOINTS, joint_vel_scaled, "joint velocities times 0.2", "rad/s"),
        ObservationBlock(
            "cube_position", 3, cube_position, "the cube's centre relative to where it was placed at reset", "m"
        ),
        ObservationBlock("cube_rotation", 4, cube_rotation, "the cube's orientation (x, y, z, w)", "1"),
        ObservationBlock("cube_lin_vel", 3, cube_lin_vel, "the cube's linear velocity", "m/s"),
        ObservationBlock("cube_ang_vel", 3, cube_ang_vel, "the cube's angular velocity times 0.2", "rad/s"),
        ObservationBlock("goal_rotation", 4, goal_rotation, "the goal orientation (x, y, z, w)", "1"),
        ObservationBlock(
            "rotation_error", 4, rotation_error, "the rotation from the goal to the cube (x, y, z, w)", "1"
        ),
        ObservationBlock(
            "fingertip_positions",
            12,
            fingertip_positions,
            "the fingertips' positions (index, middle, ring, thumb) relative to where the cube was placed",
            "m",
        ),
        ObservationBlock("actions", HAND_JOINTS, last_action, "the previous step's actions", "1"),
    )
    rewards = (
        RewardTerm("cube_distance", cube_distance, weight="distance_weight"),
        RewardTerm("rotation_tracking", rotation_tracking, weight="rotation_weight"),
        RewardTerm("action_l2", locomotion.action_sq_norm, weight="action_weight"),
        RewardTerm("success_bonus", success_bonus, weight="success_weight"),
        RewardTerm("fall", fall, weight="fall_weight"),
    )
    terminations = (TerminationTerm("dropped", dropped),)
    metrics = (
        EpisodeMetric("consecutive_successes", success_bonus, "sum", "1", "goals met in the episode"),
        EpisodeMetric("rotation_distance", rotation_distance, "last", "rad", "the last step's distance to the goal"),
        EpisodeMetric(
            "mean_rotation_distance", rotation_distance, "mean", "rad", "the mean distance to the goal over the steps"
        ),
        EpisodeMetric("drops", fall, "sum", "1", "1 for an episode the cube's fall ended"),
    )
    train_config = PpoConfig(
        num_envs=256,
        num_steps_per_env=16,
        # 3 M env-steps, the budget: 732 iterations of 256 worlds x 16 steps.
        max_iterations=732,
        actor_hidden_dims=(512, 256, 128),
        critic_hidden_dims=(512, 256, 128),
    )
    """PPO settings of ``steel-envs train`` (Isaac Lab's Allegro rsl_rl config: (512, 256, 128) networks, 16 steps
    per env)."""
    benchmark = BenchmarkSpec(
        suite="manipulation",
        score="mean_rotation_distance",
        direction="lower",
        random_score=2.24,
        expert_score=0.1,
        expert_from="target",
        anchors=(
            "random: mean_rotation_distance of the random policy over 100 episodes (`steel-envs evaluate "
            "steel_envs/AllegroReorient-v0 --policy random --episodes 100 --num-envs 50`: 2.24 [2.12, 2.35]; "
            "uniform goals give pi/2 + 2/pi = 2.21 rad); expert: the success tolerance, the cube at its goal at every "
            "step"
        ),
    )

    def build_world(self, builder: newton.ModelBuilder) -> None:
        """The hand (:meth:`AllegroScene.build_world`), then the cube, a free box."""
        super().build_world(builder)
        cube = builder.add_body(xform=wp.transform(wp.vec3(_PALM_X, 0.0, 0.6), wp.quat_identity()), label="cube")
        cfg = newton.ModelBuilder.ShapeConfig(density=400.0, mu=1.0, gap=self.contact_gap)
        builder.add_shape_box(cube, hx=_MAX_HALF, hy=_MAX_HALF, hz=_MAX_HALF, cfg=cfg, label="cube")

    def initial_state(self) -> InitialStateSpec:
        """The hand's home with ``joint_noise`` (narrowed per joint to its range), the cube's free joint at rest (its
        pose is drawn by :meth:`_reset_physics_state`)."""
        hand = super().initial_state()
        home = ALLEGRO.home.astype(np.float64)
        noise = np.minimum(self.config.joint_noise, np.minimum(home - HAND_LOWER, HAND_UPPER - home))
        cube_q = np.array([_PALM_X, 0.0, 0.6, 0.0, 0.0, 0.0, 1.0])
        return InitialStateSpec(
            default_q=np.concatenate([hand.default_q, cube_q]),
            default_qd=np.concatenate([hand.default_qd, np.zeros(6)]),
            q_noise=np.concatenate([noise, np.zeros(7)]),
            qd_noise=np.concatenate([hand.qd_noise, np.zeros(6)]),
        )

    def _setup_scene(self) -> None:
        super()._setup_scene()
        self._cubes = None  # the CubeModel, made at the first reset (the randomizer comes after the scene)
        c = self.config
        props = np.array([c.cube_size, c.cube_mass, c.cube_friction], np.float64)  # (3, 2): low, high
        if not c.randomize:
            props[:] = props.mean(axis=1, keepdims=True)
        self._cube_bounds = (wp.vec3(*props[:, 0]), wp.vec3(*props[:, 1]))
        self._rest = wp.zeros(self.num_envs, dtype=wp.vec3, device=self.wp_device)

    def _reset_physics_state(self, world_mask: wp.array) -> None:
        """The initial joint state, then each selected world's cube: size, mass, friction and pose (``_draw_cubes``),
        the solver told, then its reset."""
        self.initial_states.reset(world_mask)
        if self._cubes is None:
            self._cubes = cube_model(self, CUBE_BODY)
        m = self.model
        self.launch_per_world(
            _draw_cubes,
            inputs=[
                world_mask,
                float(self.config.cube_position_noise),
                *self._cube_bounds,
                m.body_world_start,
                m.joint_coord_world_start,
                self._cubes,
            ],
            outputs=[self.rng_state, self._rest, self.state_0.joint_q, self.state_0.body_q],
        )
        cubes_written(self, world_mask)

    def _setup_task(self) -> None:
        s, n, m, c = AllegroReorientState(), self.num_envs, self.model, self.config
        s.body_world_start, s.coord_world_start = m.body_world_start, m.joint_coord_world_start
        s.dof_world_start = m.joint_dof_world_start
        s.body_q, s.body_qd = self.state_0.body_q, self.state_0.body_qd
        s.joint_q, s.joint_qd = self.state_0.joint_q, self.state_0.joint_qd
        s.lower, s.upper = self._lower, self._upper
        s.rest = self._rest
        s.goals = wp.zeros(n, dtype=wp.quat)
        s.actions, s.last_actions = self.actions, wp.zeros((n, self.action_dim), dtype=wp.float32)
        s.success = wp.zeros(n, dtype=wp.bool)
        s.rotation_eps = float(c.rotation_eps)
        s.success_tolerance = float(c.success_tolerance)
        s.hold_distance = float(c.hold_distance)
        s.fall_distance = float(c.fall_distance)
        self.term_state = s
        self._met = wp.zeros(n, dtype=wp.bool)
        self.task_info = {"success": to_torch(s.success)}

    def _draw_goals(self, world_mask: wp.array, from_goal: bool) -> None:
        c = self.config
        self.launch_per_world(
            _draw_goals,
            inputs=[
                world_mask,
                c.target == "z_rotation",
                from_goal,
                float(c.z_rotation_step),
                self.model.body_world_start,
                self.state_0.body_q,
            ],
            outputs=[self.rng_state, self.term_state.goals],
        )

    def _post_physics(self) -> None:
        self.launch_per_world(_update_success, inputs=[self.term_state, self._skip_mask])

    def _post_rewards(self) -> None:
        wp.copy(self.term_state.last_actions, self.actions)
        # A met goal is followed by the next one (IsaacGymEnvs' goal reset), seen in this step's observation.
        self.launch_per_world(_next_goals, inputs=[self.term_state], outputs=[self._met])
        self._draw_goals(self._met, from_goal=True)

    def _reset_task(self, world_mask: wp.array) -> None:
        self.launch_per_world(kernels.zero_world_rows, inputs=[world_mask], outputs=[self.term_state.last_actions])
        # success is left as the ended episode's last step set it (read after this reset with same-step autoreset).
        self._draw_goals(world_mask, from_goal=False)


AllegroReorientSingleEnv = register_task("steel_envs/AllegroReorient-v0", AllegroReorientEnv)
