"""``steel_envs/PandaLiftCube-v0``: grasp a cube with the Franka Panda and lift it to a sampled goal, Isaac Lab's
``Lift-Cube-Franka`` recipe (``isaaclab_tasks/manager_based/manipulation/lift``: ``lift_env_cfg.py``,
``config/franka/joint_pos_env_cfg.py``, ``mdp/rewards.py``)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import newton
import numpy as np
import warp as wp
from steel_envs.envs.panda import ARM_JOINTS, HAND_BODY, PandaScene, PandaSceneConfig, target_to_action
from steel_envs.tasks.panda_reach import inverse_kinematics, joint_pos_rel, joint_vel, joint_vel_l2, last_action
from steel_envs.tasks.terms import legged
from steel_envs.tasks.terms.objects import CubeModel, cube_model, cubes_written, write_cube

from steel_envs import kernels
from steel_envs.assets import PANDA
from steel_envs.benchmark import scripted_success
from steel_envs.ranges import any_value, at_least, declare, positive
from steel_envs.registration import register_task
from steel_envs.spec import EpisodeMetric, InitialStateSpec, ObservationBlock, RewardTerm, term
from steel_envs.torch_views import to_torch
from steel_envs.train_config import PpoConfig

__all__ = ["PandaLiftCubeConfig", "PandaLiftCubeEnv", "PandaLiftCubeSingleEnv", "scripted_policy"]

_DT = 4.0 / 120.0
"""Control step [s]; Isaac Lab's reward manager multiplies each weight by its step, so the weights here carry ours."""
_JOINTS = len(PANDA.joints)
CUBE_BODY = 11
"""World-local index of the cube's body (after the arm's 11)."""
_CUBE = wp.constant(CUBE_BODY)
_CUBE_COORD = wp.constant(_JOINTS)
"""World-local index of the cube's first coordinate (its free joint after the arm's 9)."""
TCP_OFFSET = 0.1034
"""The tool centre point between the fingertips, along the hand's z [m] (Isaac Lab's ``ee_frame`` offset,
config/franka/joint_pos_env_cfg.py)."""
_TCP = wp.constant(TCP_OFFSET)
FINGER_OPEN = 0.04
"""Each finger's slide target of an open gripper [m] (Isaac Lab's ``open_command_expr``); closed: 0."""
FINGER_STIFFNESS, FINGER_DAMPING, FINGER_EFFORT = 2000.0, 100.0, 20.0
"""The fingers' PD gains [N/m, N s/m] and force limit [N]. The gains are Isaac Lab's ``FRANKA_PANDA_CFG``
``panda_hand`` actuator (isaaclab_assets/robots/franka.py), as its lift task runs them; the MJCF's tendon (50 N/m per
finger) closes on a 5 cm cube with 1.25 N. Its 200 N limit is not kept: closed on a cube the drive then squeezes
with 50 N per finger, which held the fingers 4.4 mm into the cube (the penetration end cause is at 5 mm); 20 N
(Franka's hand: 70 N continuous) holds them within 3 mm and grips a 0.6 kg cube with friction 0.8 at 5x its
weight."""
_MAX_HALF = 0.03
"""The largest cube half-edge ``cube_size`` may ask [m]: the cube's collision box is built at this size and scaled
down per world (its broad-phase bound stays an enclosing one); 6 cm fits the open gripper's 8 cm."""


@dataclass(kw_only=True)
class PandaLiftCubeConfig(PandaSceneConfig):
    """Isaac Lab's Lift-Cube-Franka ranges and reward weights (per control step: Isaac Lab's times 1/30 s), and the
    cube's randomization."""

    cube_x: tuple[float, float] = (0.4, 0.6)
    """Range of the cube's initial x [m] (lift_env_cfg.py ``reset_object_position``: 0.5 + U(-0.1, 0.1))."""
    cube_y: tuple[float, float] = (-0.25, 0.25)
    """Range of the cube's initial y [m] (``pose_range`` y)."""
    cube_size: tuple[float, float] = (0.045, 0.055)
    """Range of the cube's edge [m], drawn per world at reset (Isaac Lab's DexCube at scale 0.8 is one size)."""
    cube_mass: tuple[float, float] = (0.3, 0.6)
    """Range of the cube's mass [kg], drawn per world at reset. Lighter cubes get pushed into: with U(0.05, 0.15) kg
    the arm's bang-bang pushes sank the hand 10 mm into the cube in ``doctor`` (16 worlds x 300 steps; Gauss-Seidel
    converges slowly on a light body between stiff drives and the table, and 64 PGS iterations did not help), with
    U(0.3, 0.6) kg 1.9 mm (1.0 mm with the task's 100 iterations)."""
    cube_friction: tuple[float, float] = (0.8, 1.2)
    """Range of the cube's friction coefficient, drawn per world at reset (the cube's shape's; the fingers' and the
    table's stay as built, 1.0, and a contact combines the two shapes' coefficients)."""
    randomize: bool = True
    """Draw the cube's edge, mass and friction per world at reset; False: every cube at the middle of the three
    ranges (its pose is drawn either way)."""
    goal_x: tuple[float, float] = (0.4, 0.6)
    """Range of the goal's x [m] (lift_env_cfg.py ``object_pose`` ``pos_x``)."""
    goal_y: tuple[float, float] = (-0.25, 0.25)
    """Range of the goal's y [m] (``pos_y``)."""
    goal_z: tuple[float, float] = (0.25, 0.5)
    """Range of the goal's z [m] (``pos_z``)."""
    lift_height: float = 0.04
    """Height of the cube's centre above which it counts as lifted [m] (``object_is_lifted`` ``minimal_height``;
    resting, the centre is at half the edge, 2.25-2.75 cm)."""
    reach_weight: float = 1.0 * _DT
    """Weight of ``reaching_object`` (1 - tanh(d / 0.1) of the tool centre point's distance to the cube)."""
    lift_weight: float = 15.0 * _DT
    """Weight of ``lifting_object`` (1 while the cube is lifted)."""
    goal_weight: float = 16.0 * _DT
    """Weight of ``object_goal_tracking`` (lifted x (1 - tanh(d / 0.3)) of the cube's distance to the goal)."""
    goal_fine_weight: float = 5.0 * _DT
    """Weight of ``object_goal_tracking_fine_grained`` (the same with 0.05 m)."""
    action_rate_weight: float = -1.0e-4 * _DT
    """Weight of ``action_rate_l2`` (Isaac Lab raises it to -0.1 after 10,000 steps by a curriculum; not done here)."""
    joint_vel_weight: float = -1.0e-4 * _DT
    """Weight of ``joint_vel_l2`` (the same curriculum in Isaac Lab)."""
    success_distance: float = 0.02
    """Largest distance of the cube's centre to the goal [m] that counts as success."""

    field_ranges = declare(
        cube_x=any_value("a (low, high) coordinate range [m]"),
        cube_y=any_value("a (low, high) coordinate range [m]"),
        cube_size=positive("a (low, high) edge range [m]"),
        cube_mass=positive("a (low, high) mass range [kg]"),
        cube_friction=positive("a (low, high) friction coefficient range"),
        goal_x=any_value("a (low, high) coordinate range [m]"),
        goal_y=any_value("a (low, high) coordinate range [m]"),
        goal_z=at_least(0.05, "a (low, high) height range [m] above the table"),
        lift_height=positive("a height [m]"),
        reach_weight=any_value("a signed reward weight per step"),
        lift_weight=any_value("a signed reward weight per step"),
        goal_weight=any_value("a signed reward weight per step"),
        goal_fine_weight=any_value("a signed reward weight per step"),
        action_rate_weight=any_value("a signed reward weight per step"),
        joint_vel_weight=any_value("a signed reward weight per step"),
        success_distance=positive("a distance [m]"),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        self.require_intervals(
            "cube_x", "cube_y", "cube_size", "cube_mass", "cube_friction", "goal_x", "goal_y", "goal_z"
        )
        if self.cube_size[1] > 2.0 * _MAX_HALF:
            raise ValueError(
                f"cube_size: expected edges <= {2.0 * _MAX_HALF} m (the open gripper's reach), got {self.cube_size!r}"
            )
        # Below an edge-standing cube's centre the lift term pays for a tipped cube; above the goals, for nothing.
        if not self.cube_size[1] / math.sqrt(2.0) < self.lift_height < self.goal_z[0]:
            raise ValueError(
                f"lift_height: expected above the centre of the largest cube standing on an edge "
                f"({self.cube_size[1] / math.sqrt(2.0):.4f} m) and below the lowest goal ({self.goal_z[0]} m), "
                f"got {self.lift_height!r}"
            )


@wp.struct
class PandaLiftCubeState:
    """What PandaLiftCube's terms read: the arm's and the cube's state, each world's goal, the task's parameters."""

    body_world_start: wp.array[wp.int32]
    coord_world_start: wp.array[wp.int32]
    dof_world_start: wp.array[wp.int32]
    body_q: wp.array[wp.transform]
    joint_q: wp.array[wp.float32]
    joint_qd: wp.array[wp.float32]
    home: wp.array[wp.float32]
    """(9,) the home pose [rad, m]: the zero of the joint observations."""
    goals: wp.array[wp.vec3]
    """(num_envs,) each world's goal for the cube's centre, world frame (the arm's base frame) [m]."""
    actions: wp.array2d[wp.float32]
    last_actions: wp.array2d[wp.float32]
    success: wp.array[wp.bool]
    lift_height: wp.float32
    success_distance: wp.float32


@wp.func
def _cube(s: Any, w: int) -> wp.vec3:
    return wp.transform_get_translation(s.body_q[s.body_world_start[w] + _CUBE])


@wp.func
def _tcp(s: Any, w: int) -> wp.vec3:
    return wp.transform_point(s.body_q[s.body_world_start[w] + HAND_BODY], wp.vec3(0.0, 0.0, _TCP))


@wp.func
def _lifted(s: Any, w: int) -> float:
    return wp.where(_cube(s, w)[2] > s.lift_height, 1.0, 0.0)


@wp.func
def _goal_distance(s: Any, w: int) -> float:
    return wp.length(_cube(s, w) - s.goals[w])


@term("p_cube")
def cube_position(s: Any, w: int) -> wp.vec3:
    """The cube's centre [m] in the arm's base frame (Isaac Lab ``object_position_in_robot_root_frame``)."""
    return _cube(s, w)


@term("p_goal")
def goal_position(s: Any, w: int) -> wp.vec3:
    """The goal of the cube's centre [m] in the arm's base frame."""
    return s.goals[w]


@term("1 - tanh(|p_cube - p_tcp| / 0.1)", source="Isaac Lab lift object_ee_distance")
def reaching_object(s: Any, w: int) -> float:
    """1 with the tool centre point at the cube's centre, falling to 0 over some tenths of a metre [1]."""
    return 1.0 - wp.tanh(wp.length(_cube(s, w) - _tcp(s, w)) / 0.1)


@term("1[z_cube > lift_height]", source="Isaac Lab lift object_is_lifted")
def lifting_object(s: Any, w: int) -> float:
    """1 while the cube's centre is above ``lift_height`` [1]."""
    return _lifted(s, w)


@term("1[z_cube > lift_height] (1 - tanh(|p_cube - p_goal| / 0.3))", source="Isaac Lab lift object_goal_distance")
def object_goal_tracking(s: Any, w: int) -> float:
    """Closeness of the lifted cube to the goal, coarse [1]."""
    return _lifted(s, w) * (1.0 - wp.tanh(_goal_distance(s, w) / 0.3))


@term("1[z_cube > lift_height] (1 - tanh(|p_cube - p_goal| / 0.05))", source="Isaac Lab lift object_goal_distance")
def object_goal_tracking_fine_grained(s: Any, w: int) -> float:
    """Closeness of the lifted cube to the goal, fine [1]."""
    return _lifted(s, w) * (1.0 - wp.tanh(_goal_distance(s, w) / 0.05))


@term("|p_cube - p_goal|")
def goal_distance(s: Any, w: int) -> float:
    """Distance of the cube's centre to the goal [m] (a metric's step value)."""
    return _goal_distance(s, w)


@term("1[z_cube > lift_height]")
def lifted(s: Any, w: int) -> float:
    """1 while the cube is lifted (a metric's step value) [1]."""
    return _lifted(s, w)


@wp.kernel(enable_backward=False)
def _gripper_targets(
    actions: wp.array2d[wp.float32],
    column: wp.int32,
    coord_world_start: wp.array[wp.int32],
    joint_target_q: wp.array[wp.float32],
):
    """Both fingers' targets from the gripper action: open (0.04 m) for a >= 0, closed (0) below (Isaac Lab's
    ``BinaryJointPositionAction``)."""
    w = wp.tid()
    target = wp.where(actions[w, column] >= 0.0, FINGER_OPEN, 0.0)
    joint_target_q[coord_world_start[w] + ARM_JOINTS] = target
    joint_target_q[coord_world_start[w] + ARM_JOINTS + 1] = target


@wp.kernel(enable_backward=False)
def _draw_cubes(
    world_mask: wp.array[wp.bool],
    low_pose: wp.vec3,
    high_pose: wp.vec3,
    low_props: wp.vec3,
    high_props: wp.vec3,
    body_world_start: wp.array[wp.int32],
    coord_world_start: wp.array[wp.int32],
    cubes: CubeModel,
    rng_state: wp.array[wp.uint32],
    joint_q: wp.array[wp.float32],
    body_q: wp.array[wp.transform],
):
    """For the selected worlds draw the cube's edge, mass and friction (``low_props``/``high_props``: edge [m], mass
    [kg], mu) and its resting pose on the table (x, y [m] from ``low_pose``/``high_pose``, unrotated), and write the
    cube into the model (:func:`steel_envs.tasks.terms.objects.write_cube`)."""
    w = wp.tid()
    if not world_mask[w]:
        return
    rng = rng_state[w]
    edge = low_props[0] + (high_props[0] - low_props[0]) * wp.randf(rng)
    mass = low_props[1] + (high_props[1] - low_props[1]) * wp.randf(rng)
    mu = low_props[2] + (high_props[2] - low_props[2]) * wp.randf(rng)
    x = low_pose[0] + (high_pose[0] - low_pose[0]) * wp.randf(rng)
    y = low_pose[1] + (high_pose[1] - low_pose[1]) * wp.randf(rng)
    rng_state[w] = rng
    half = 0.5 * edge
    q = coord_world_start[w] + _CUBE_COORD
    joint_q[q + 0] = x
    joint_q[q + 1] = y
    joint_q[q + 2] = half
    for k in range(3):
        joint_q[q + 3 + k] = 0.0
    joint_q[q + 6] = 1.0
    body = body_world_start[w] + _CUBE
    body_q[body] = wp.transform(wp.vec3(x, y, half), wp.quat_identity())
    write_cube(cubes, w, edge, mass, mu)


@wp.kernel(enable_backward=False)
def _draw_goals(
    world_mask: wp.array[wp.bool], low: wp.vec3, high: wp.vec3, rng_state: wp.array[wp.uint32], goals: wp.array[wp.vec3]
):
    """The goal of the cube's centre for the selected worlds: U(low, high) per axis [m]."""
    w = wp.tid()
    if not world_mask[w]:
        return
    rng = rng_state[w]
    goals[w] = wp.vec3(
        low[0] + (high[0] - low[0]) * wp.randf(rng),
        low[1] + (high[1] - low[1]) * wp.randf(rng),
        low[2] + (high[2] - low[2]) * wp.randf(rng),
    )
    rng_state[w] = rng


@wp.kernel(enable_backward=False)
def _update_success(s: PandaLiftCubeState):
    w = wp.tid()
    s.success[w] = _goal_distance(s, w) <= s.success_distance


class PandaLiftCubeEnv(PandaScene):
    """Grasp a cube on the table with the Franka Panda's two fingers and lift it to a goal in the air, Isaac Lab's
    ``Isaac-Lift-Cube-Franka-v0`` recipe on SolverSteel.

    ## Action space
    | index | action | min | max | unit |
    |---|---|---|---|---|
    | 0-6 | joint1 .. joint7 position targets, 0 the home pose, +-1 the joint's limits (piecewise linear) | -1 | 1 | 1 |
    | 7 | gripper: open (both fingers to 0.04 m) for a >= 0, closed (to 0) below | -1 | 1 | 1 |

    With ``action_mode="ee_delta_pose"`` the first block is the hand goal's move and turn (6 values, the scene's
    documentation) and the gripper is action 6.

    ## Observation space
    | index | observation | unit |
    |---|---|---|
    | 0-8 | joint positions relative to the home pose | rad, m |
    | 9-17 | joint velocities | rad/s, m/s |
    | 18-20 | the cube's centre | m |
    | 21-23 | the goal of the cube's centre | m |
    | 24-31 | the previous step's actions | 1 |

    Joints in ``steel_envs.assets.PANDA.joints`` order (joint1 .. joint7, both fingers); positions in the arm's base
    frame (the world's: the arm stands at the origin on the table).

    ## Rewards
    Isaac Lab's weights times the control step (1/30 s; its reward manager scales by its step), config fields, also
    settable by term name. ``p_tcp`` is the tool centre point 0.1034 m along the hand's z, between the fingertips.

    ## The cube
    A box of edge U(0.045, 0.055) m, mass U(0.3, 0.6) kg and friction coefficient U(0.8, 1.2), drawn per world at
    every reset (``randomize=False``: 5 cm, 0.45 kg, 1.0), resting unrotated on the table at x U(0.4, 0.6) m,
    y U(-0.25, 0.25) m. The table is the ground plane the arm stands on (Isaac Lab's robot stands on its table's
    top).

    ## Goal
    The cube centre's goal, drawn at reset: U(0.4, 0.6) x U(-0.25, 0.25) x U(0.25, 0.5) m (Isaac Lab resamples it
    every 5 s, its episode's length: once per episode).

    ## Starting state
    The MJCF's home pose (the hand 0.62 m above the table, pointing down, the gripper open) with U(-0.2, 0.2) rad on
    each arm joint (``joint_noise``), at rest; the cube as above.

    ## Episode end
    Truncated after 150 steps (5 s, Isaac Lab's ``episode_length_s``), on a constraint overflow or a contact deeper
    than ``penetration_limit`` (5 mm; a hand driven hard into the cube can reach it); terminated on a non-finite
    state. ``info["success"]`` says whether the cube's centre is within ``success_distance`` (2 cm) of
    the goal; evaluation counts it on the episode's last step.

    ## Differences from Isaac Lab's Lift-Cube-Franka
    Isaac Lab raises the action-rate and joint-velocity weights to -0.1 after 10,000 steps by a curriculum; here they
    stay at -1e-4 (per second). Its arm actions scale by 0.5 rad around home; here they span the joints' ranges, as
    in PandaReach-v0. Its cube is one size and mass; here they are drawn per world, with its friction.
    """

    config_cls = PandaLiftCubeConfig
    config: PandaLiftCubeConfig
    default_max_episode_steps = 150  # 5 s, lift_env_cfg.py episode_length_s
    rigid_contacts_per_world = 192
    """A closed grasp makes up to 117 contacts per world (the fingers' six boxes each with the cube, the cube with
    the table, the links with the table; 1 world x 150 steps of ``scripted_policy``, 4 seeds): 1.6x headroom. With
    96, four worlds grasping at once overflowed the shared pool."""
    solver_defaults = dataclasses.replace(
        PandaScene.solver_defaults,
        # A hand pressed onto the cube with the arm's full drive (a scripted adversary, 8 worlds x 50 steps) sank
        # 9.2 mm into it with the scene's 40 PGS iterations (7.5 with 64; 3.1 with 100), and 2 % of random-action
        # episodes ended by the penetration end cause (1 % with 100): Gauss-Seidel converges slowly on a light body
        # between stiff drives and the table. 100 iterations cost 1.34x the time per step of 40 (64 worlds, CPU).
        # A harder press (closed fingers driven at full speed 10 cm into the cube) still reaches 6.8 mm: those
        # episodes end by the penetration end cause (3 of 32 worlds).
        iterations=100,
        # A closed grasp: up to 195 rows per world (16 worlds x 150 steps of scripted_policy, 2 seeds; the fingers'
        # contacts with the cube on top of the arm's); 320 keeps 1.6x headroom.
        articulation_constraint_max=320,
    )
    observations = (
        ObservationBlock("joint_pos", _JOINTS, joint_pos_rel, "joint positions relative to the home pose", "rad, m"),
        ObservationBlock("joint_vel", _JOINTS, joint_vel, "joint velocities", "rad/s, m/s"),
        ObservationBlock("cube_position", 3, cube_position, "the cube's centre", "m"),
        ObservationBlock("goal_position", 3, goal_position, "the goal of the cube's centre", "m"),
        ObservationBlock("actions", ARM_JOINTS + 1, last_action, "the previous step's actions", "1"),
    )
    rewards = (
        RewardTerm("reaching_object", reaching_object, weight="reach_weight"),
        RewardTerm("lifting_object", lifting_object, weight="lift_weight"),
        RewardTerm("object_goal_tracking", object_goal_tracking, weight="goal_weight"),
        RewardTerm("object_goal_tracking_fine_grained", object_goal_tracking_fine_grained, weight="goal_fine_weight"),
        RewardTerm("action_rate_l2", legged.action_rate_l2, weight="action_rate_weight"),
        RewardTerm("joint_vel_l2", joint_vel_l2, weight="joint_vel_weight"),
    )
    metrics = (
        EpisodeMetric("goal_distance", goal_distance, "mean", "m", "the cube centre's distance to the goal"),
        EpisodeMetric("lifted", lifted, "mean", "1", "the share of the episode's steps with the cube lifted"),
    )
    train_config = PpoConfig(
        num_envs=256,
        num_steps_per_env=24,
        # 10 M env-steps, the budget: 1,628 iterations of 256 worlds x 24 steps.
        max_iterations=1628,
        actor_hidden_dims=(256, 128, 64),
        critic_hidden_dims=(256, 128, 64),
    )
    """PPO settings of ``steel-envs train`` (Isaac Lab's Lift-Cube-Franka PPO: (256, 128, 64) networks, 24 steps per
    env)."""
    # Measured before a reference report exists: `steel-envs evaluate steel_envs/PandaLiftCube-v0 --policy random
    # --policy steel_envs.tasks.panda_lift_cube:scripted_policy --episodes 100 --num-envs 100`: 0 % and 99 %.
    benchmark = scripted_success("manipulation", "PandaLiftCube-v0", random_score=0.0, expert_score=0.99)

    @property
    def action_dim(self) -> int:
        """The arm's actions (:class:`PandaScene`) and the gripper's."""
        return super().action_dim + 1

    def build_world(self, builder: newton.ModelBuilder) -> None:
        """The arm (:meth:`PandaScene.build_world`) with Isaac Lab's finger gains, then the cube, a free box."""
        super().build_world(builder)
        fingers = [
            builder.joint_qd_start[j] for j in range(builder.joint_count) if "finger_joint" in builder.joint_label[j]
        ]
        for d in fingers[-2:]:
            builder.joint_target_ke[d] = FINGER_STIFFNESS
            builder.joint_target_kd[d] = FINGER_DAMPING
            builder.joint_effort_limit[d] = FINGER_EFFORT
        cube = builder.add_body(xform=wp.transform(wp.vec3(0.5, 0.0, _MAX_HALF), wp.quat_identity()), label="cube")
        cfg = newton.ModelBuilder.ShapeConfig(density=100.0, mu=1.0, gap=self.contact_gap)
        builder.add_shape_box(cube, hx=_MAX_HALF, hy=_MAX_HALF, hz=_MAX_HALF, cfg=cfg, label="cube")

    def initial_state(self) -> InitialStateSpec:
        """The scene's (the home pose with ``joint_noise``), the cube's free joint at rest (its pose is drawn by
        :meth:`_reset_physics_state`)."""
        arm = super().initial_state()
        cube_q = np.array([0.5, 0.0, _MAX_HALF, 0.0, 0.0, 0.0, 1.0])
        return InitialStateSpec(
            default_q=np.concatenate([arm.default_q, cube_q]),
            default_qd=np.concatenate([arm.default_qd, np.zeros(6)]),
            q_noise=np.concatenate([arm.q_noise, np.zeros(7)]),
            qd_noise=np.concatenate([arm.qd_noise, np.zeros(6)]),
        )

    def _setup_scene(self) -> None:
        super()._setup_scene()
        self._cubes = None  # the CubeModel, made at the first reset (the randomizer comes after the scene)
        c = self.config
        props = np.array([c.cube_size, c.cube_mass, c.cube_friction], np.float64)  # (3, 2): low, high
        if not c.randomize:
            props[:] = props.mean(axis=1, keepdims=True)
        # _draw_cubes' bounds: pose (x, y, unused), then properties (edge, mass, mu)
        self._cube_bounds = (
            wp.vec3(c.cube_x[0], c.cube_y[0], 0.0),
            wp.vec3(c.cube_x[1], c.cube_y[1], 0.0),
            wp.vec3(*props[:, 0]),
            wp.vec3(*props[:, 1]),
        )

    def _reset_physics_state(self, world_mask: wp.array) -> None:
        """The initial joint state, then each selected world's cube: size, mass, friction and pose (``_draw_cubes``),
        the solver told, then its reset."""
        self.initial_states.reset(world_mask)
        if self._cubes is None:
            self._cubes = cube_model(self, CUBE_BODY)
        m = self.model
        self.launch_per_world(
            _draw_cubes,
            inputs=[world_mask, *self._cube_bounds, m.body_world_start, m.joint_coord_world_start, self._cubes],
            outputs=[self.rng_state, self.state_0.joint_q, self.state_0.body_q],
        )
        cubes_written(self, world_mask)

    def _apply_actions(self) -> None:
        super()._apply_actions()
        wp.launch(
            _gripper_targets,
            self.num_envs,
            inputs=[self.actions, self.action_dim - 1, self.model.joint_coord_world_start],
            outputs=[self.control.joint_target_q],
            device=self.wp_device,
        )

    def goal_positions(self) -> np.ndarray:
        """Each world's goal, (num_envs, 1, 3) [m]."""
        return self.term_state.goals.numpy()[:, None, :]

    def _setup_task(self) -> None:
        s, n, m = PandaLiftCubeState(), self.num_envs, self.model
        s.body_world_start, s.coord_world_start = m.body_world_start, m.joint_coord_world_start
        s.dof_world_start = m.joint_dof_world_start
        s.body_q, s.joint_q, s.joint_qd = self.state_0.body_q, self.state_0.joint_q, self.state_0.joint_qd
        s.home = wp.array(PANDA.home, dtype=wp.float32)
        s.goals = wp.zeros(n, dtype=wp.vec3)
        s.actions, s.last_actions = self.actions, wp.zeros((n, self.action_dim), dtype=wp.float32)
        s.success = wp.zeros(n, dtype=wp.bool)
        s.lift_height = float(self.config.lift_height)
        s.success_distance = float(self.config.success_distance)
        self.term_state = s
        self.task_info = {"success": to_torch(s.success)}

    def _post_physics(self) -> None:
        self.launch_per_world(_update_success, inputs=[self.term_state])

    def _post_rewards(self) -> None:
        wp.copy(self.term_state.last_actions, self.actions)

    def _reset_task(self, world_mask: wp.array) -> None:
        c = self.config
        self.launch_per_world(kernels.zero_world_rows, inputs=[world_mask], outputs=[self.term_state.last_actions])
        # success is left as the ended episode's last step set it (read after this reset with same-step autoreset).
        self.launch_per_world(
            _draw_goals,
            inputs=[
                world_mask,
                wp.vec3(c.goal_x[0], c.goal_y[0], c.goal_z[0]),
                wp.vec3(c.goal_x[1], c.goal_y[1], c.goal_z[1]),
            ],
            outputs=[self.rng_state, self.term_state.goals],
        )


PandaLiftCubeSingleEnv = register_task("steel_envs/PandaLiftCube-v0", PandaLiftCubeEnv)


_GRIP_QUAT = np.array([math.sqrt(0.5), math.sqrt(0.5), 0.0, 0.0])
"""The scripted grasp's hand orientation (x, y, z, w): pointing down (roll 0, pitch pi) at yaw -pi/2, the home
pose's, its fingers closing along the world's x."""
_MAX_STEP = 0.15
"""The scripted solver's largest joint target lead over the measured angle [rad]."""
_FK: dict[int, tuple] = {}
"""The scripted solver's forward kinematics models on the CPU, by their count (one arm per world)."""


def _tool_frames(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The tool centre point (N, 3) [m] and the hand's quaternion (N, 4) (x, y, z, w) for arm joint angles ``q``
    (N, 7) [rad] (``newton.eval_fk``; the fingers at home)."""
    n = q.shape[0]
    if n not in _FK:
        builder = newton.ModelBuilder()
        for _ in range(n):
            PANDA.add_to(builder)
        model = builder.finalize(device="cpu")
        _FK[n] = (model, model.state())
    model, state = _FK[n]
    full = np.tile(PANDA.home.astype(np.float32), (n, 1))
    full[:, :ARM_JOINTS] = q
    model.joint_q.assign(full.reshape(-1))
    newton.eval_fk(model, model.joint_q, model.joint_qd, state)
    hand = state.body_q.numpy().reshape(n, -1, 7)[:, HAND_BODY].astype(np.float64)
    x, y, z, w = hand[:, 3:].T
    # the hand's z axis: the third column of its rotation matrix
    axis = np.stack([2.0 * (x * z + w * y), 2.0 * (y * z - w * x), 1.0 - 2.0 * (x * x + y * y)], axis=1)
    return hand[:, :3] + TCP_OFFSET * axis, hand[:, 3:]


def scripted_policy(obs):
    """A scripted solver of PandaLiftCube-v0 (joint position actions), from each observation alone: the tool centre
    point above the cube with the gripper open; once over it (within 8 mm) and the hand within 0.1 rad of pointing
    down, down around it (away from it: up first, so as not to sweep it away); close at its centre's height; while
    the fingers stop part-closed on it, carry it so that its centre goes to the goal. ``newton.ik`` gives the joint
    targets (:func:`steel_envs.tasks.panda_reach.inverse_kinematics`), at most 0.15 rad a step ahead of each measured
    angle.

    Usable as ``steel-envs evaluate steel_envs/PandaLiftCube-v0 --policy
    steel_envs.tasks.panda_lift_cube:scripted_policy``.

    Args:
        obs: Observations (N, 32) float32 in :class:`PandaLiftCubeEnv`'s layout, on any device.

    Returns:
        Actions (N, 8) float32 in [-1, 1], on ``obs``'s device.
    """
    import torch

    o = obs.detach().cpu().numpy().astype(np.float64)
    q = o[:, :ARM_JOINTS] + np.asarray(PANDA.home[:ARM_JOINTS], np.float64)
    opening = o[:, ARM_JOINTS] + PANDA.home[ARM_JOINTS]  # the first finger's slide [m]
    cube, goal = o[:, 18:21], o[:, 21:24]
    tcp, quat = _tool_frames(q)
    off = np.linalg.norm(tcp[:, :2] - cube[:, :2], axis=1)
    tilt = 2.0 * np.arccos(np.clip(np.abs(quat @ _GRIP_QUAT), 0.0, 1.0))
    low = tcp[:, 2] < cube[:, 2] + 0.06
    # Down only when over the cube and square to it; lower down a looser bound keeps a descent going.
    over = (off < np.where(low, 0.015, 0.008)) & (tilt < 0.1)
    above = cube + np.array([0.0, 0.0, 0.12])
    target = np.where(over[:, None], cube, np.where(low[:, None], np.c_[tcp[:, :2], above[:, 2]], above))
    # A finger stopped between nearly closed and open holds the cube (a closing one passes through that window);
    # the cube rides where it was gripped.
    holding = (opening > 0.012) & (opening < 0.034) & (np.abs(o[:, 2 * ARM_JOINTS + 2]) < 0.02)
    target = np.where(holding[:, None], goal + (tcp - cube), target)
    close = holding | (over & (np.abs(tcp[:, 2] - cube[:, 2]) < 0.01))
    q_ik = inverse_kinematics(target + np.array([0.0, 0.0, TCP_OFFSET]), np.tile(_GRIP_QUAT, (len(o), 1)))
    q_cmd = q + np.clip(q_ik - q, -_MAX_STEP, _MAX_STEP)
    actions = np.concatenate([target_to_action(q_cmd), np.where(close, -1.0, 1.0)[:, None]], axis=1)
    return torch.from_numpy(actions).to(torch.float32).to(obs.device)
