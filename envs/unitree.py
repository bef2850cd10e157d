"""Unitree scenes: the vendored Go1 and G1 on a ground plane (:class:`Go1Scene`, :class:`G1Scene`) or on the terrain
grid (:class:`Go1RoughScene`, :class:`G1RoughScene`), joint position targets around the standing pose tracked by
SolverSteel's PD drives with mjlab's gains and limits (:mod:`steel_envs.assets`).

World layout (newton 1.8.0): Go1 13 bodies (trunk first), a free root joint and 12 hinges in
``steel_envs.assets.GO1.joints`` order (19 coordinates, 18 DOFs); G1 30 bodies (pelvis first), a free root joint
and 29 hinges in ``steel_envs.assets.G1.joints`` order (36 coordinates, 35 DOFs). z is up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import newton
import numpy as np
import warp as wp
from steel_envs.envs.terrain import TerrainScene

from steel_envs import kernels
from steel_envs.assets import G1, GO1, RobotModel
from steel_envs.components.actuators import ACTUATOR_MODELS, ExplicitActuators
from steel_envs.deployment import Actuation
from steel_envs.ranges import at_least, between, declare, positive
from steel_envs.solver_options import SteelSolverOptions
from steel_envs.spec import InitialStateSpec, TaskConfig
from steel_envs.vector_env import SteelVectorEnv

__all__ = ["G1RoughScene", "G1Scene", "Go1RoughScene", "Go1Scene", "UnitreeScene", "UnitreeSceneConfig"]

ROOT_DOFS = 6
ROOT_COORDS = 7


@dataclass(kw_only=True)
class UnitreeSceneConfig(TaskConfig):
    """Scene fields of the Unitree robots: the initial-state distribution."""

    joint_noise: float = 0.0
    """U(-s, s) noise on the initial joint angles around the standing pose [rad]."""
    action_scale: float = 1.0
    """A factor on mjlab's per-joint action scale: action 1 is mjlab's action ``action_scale``. mjlab does not clip
    its actions; this action box is [-1, 1]."""

    actuator: str = "pd"
    """The actuator model (:data:`steel_envs.components.actuators.ACTUATOR_MODELS`): ``"pd"``, SolverSteel's implicit
    PD drive rows; ``"delayed_pd"``, an explicit PD law on targets delayed by ``actuator_delay``; ``"dc_motor"``, an
    explicit PD law clamped by the motor's torque-speed line (stall torque = the effort limit, no-load speed = the
    velocity limit). The explicit models compute ``control.joint_f`` with :mod:`newton.actuators` every physics step."""
    actuator_delay: tuple[int, int] = (0, 4)
    """(low, high) delay of ``actuator="delayed_pd"`` [physics steps of 5 ms], drawn per world at each reset, as Isaac
    Lab's ``DelayedPDActuator`` draws its ``min_delay``-``max_delay`` physics steps per environment (the 0-20 ms
    range is ours: mjlab's Go1/G1 configurations have no delay)."""

    field_ranges = declare(
        joint_noise=at_least(0.0, "a noise half-width [rad]"),
        action_scale=positive("a factor on the per-joint action scale; a negative one reverses the actions"),
        actuator_delay=between(0, 64, "physics steps of delay", integer=True),
    )

    def __post_init__(self) -> None:
        if self.actuator not in ACTUATOR_MODELS:
            raise ValueError(f"actuator: expected one of {ACTUATOR_MODELS}, got {self.actuator!r}")
        super().__post_init__()  # each delay's range
        delay = self.actuator_delay
        if not (isinstance(delay, (tuple, list)) and len(delay) == 2 and delay[0] <= delay[1]):
            raise ValueError(f"actuator_delay: expected (low, high) physics steps with low <= high, got {delay!r}")
        self.actuator_delay = (int(delay[0]), int(delay[1]))


class UnitreeScene(SteelVectorEnv):
    """A vendored Unitree robot (``robot``) on SolverSteel; tasks add observations, rewards and terminations.

    Physics: dt 0.005 s, decimation 4 (control dt 0.02 s, 50 Hz), mjlab's velocity task's
    (``mjlab/tasks/velocity/velocity_env_cfg.py:449,454``). Action: one value in [-1, 1] per actuated joint, the joint
    position target ``standing_pose + config.action_scale * scale_j * action`` [rad] with mjlab's per-joint ``scale_j =
    0.25 * effort_limit / stiffness`` and a factor ``config.action_scale``, tracked by the PD drives with the
    model's gains, armature and effort limits (:class:`steel_envs.assets.RobotModel`); action 0 holds the standing pose.

    Joint limits, enforced by the solver: the MJCF's position ranges (limit rows within ``joint_limit_activation_gap``
    of a limit); the motors' effort limits by the drive rows (``drive_mode="rows"``, impulse clamped at
    ``effort_limit * dt``); the motors' velocity limits by the clamp fused into the drive rows. mjlab's actuators
    carry no velocity limit (MuJoCo enforces none); these scenes enforce the motor's.

    Start: base upright at ``robot.spawn_height``, joints at the standing pose (+- ``joint_noise``), at rest.
    """

    robot: ClassVar[RobotModel]
    """The vendored model (:data:`steel_envs.assets.GO1`, :data:`steel_envs.assets.G1`)."""
    spawn_height: ClassVar[float]
    """Base height at reset [m]: the keyframe's, raised where the keyframe has the feet inside the ground."""

    config_cls = UnitreeSceneConfig
    config: UnitreeSceneConfig
    physics_dt = 0.005
    decimation = 4
    enable_collisions = True
    add_ground_plane = True
    camera_tracked_body = 0

    def build_world(self, builder: newton.ModelBuilder) -> None:
        """Add the robot (:meth:`steel_envs.assets.RobotModel.add_to`) without self-collisions.

        mjlab's ``FULL_COLLISION`` collides the robot's own capsules too; here the overlapping capsules of
        neighbouring links keep contacts within their gaps in every step (a standing Go1: 114 contacts and 322
        constraint rows per world with them, 42 and 122 without), so the scenes leave them out, as QuadrupedScene does.

        With an explicit actuator model (``config.actuator``) the joints' drive gains are zero: no drive rows, the
        efforts come from :class:`steel_envs.components.actuators.ExplicitActuators`.
        """
        dofs = self.robot.add_to(builder, enable_self_collisions=False)
        if self.config.actuator != "pd":
            for dof in dofs:
                builder.joint_target_ke[dof] = builder.joint_target_kd[dof] = 0.0

    def initial_state(self) -> InitialStateSpec:
        """Base at ``spawn_height`` upright, joints at the standing pose +- ``joint_noise``, at rest."""
        q = self.robot.standing_q
        q[2] = self.spawn_height
        q_noise = np.zeros_like(q)
        q_noise[ROOT_COORDS:] = self.config.joint_noise
        dofs = ROOT_DOFS + len(self.robot.joints)
        return InitialStateSpec(default_q=q, default_qd=np.zeros(dofs), q_noise=q_noise, qd_noise=np.zeros(dofs))

    def _setup_scene(self) -> None:
        self._standing_pose = wp.array(self.robot.standing_pose, dtype=wp.float32, device=self.wp_device)
        self._action_scale = wp.array(
            self.config.action_scale * self.robot.action_scale, dtype=wp.float32, device=self.wp_device
        )
        self.actuators = None
        if self.config.actuator != "pd":
            r, joints = self.robot, np.arange(len(self.robot.joints))
            self.actuators = ExplicitActuators(
                self,
                self.config.actuator,
                dofs=ROOT_DOFS + joints,
                coords=ROOT_COORDS + joints,
                stiffness=r.stiffness,
                damping=r.damping,
                effort_limit=r.effort_limit,
                velocity_limit=r.velocity_limit,
                delay=self.config.actuator_delay,
            )

    def _apply_actions(self) -> None:
        kernels.apply_joint_position_targets(self, self._standing_pose, self._action_scale, ROOT_COORDS)
        if self.actuators is not None:
            self.actuators.refresh_gains()

    def _before_substep(self, state: newton.State) -> None:
        super()._before_substep(state)
        if self.actuators is not None:
            self.actuators.step(state, self.physics_dt)

    def _reset_physics_state(self, world_mask: wp.array) -> None:
        self._place_robots(world_mask)
        if self.actuators is not None:
            self.actuators.reset(world_mask)

    def _place_robots(self, world_mask: wp.array) -> None:
        """Write the initial state of the selected worlds and clear their solver history (the backend's; rough
        scenes place the robots on the terrain)."""
        super()._reset_physics_state(world_mask)

    def deployment_actuation(self) -> Actuation:
        """The robot's joints in action order with mjlab's gains and limits, the standing pose and the per-joint
        action scale times ``config.action_scale`` (the observation's joint blocks use the same order)."""
        r, c = self.robot, self.config
        delay = tuple(d * self.physics_dt for d in c.actuator_delay) if c.actuator == "delayed_pd" else (0.0, 0.0)

        def values(a: np.ndarray) -> tuple[float, ...]:
            return tuple(float(x) for x in a)

        return Actuation(
            joint_names=tuple(r.joints),
            observation_joint_names=tuple(r.joints),
            default_joint_pos=values(r.standing_pose),
            stiffness=values(r.stiffness),
            damping=values(r.damping),
            effort_limit=values(r.effort_limit),
            velocity_limit=values(r.velocity_limit),
            action_scale=values(self.config.action_scale * r.action_scale),
            action_offset=values(r.standing_pose),
            actuator=self.config.actuator,
            actuator_delay=delay,
        )


class Go1Scene(UnitreeScene):
    """Unitree Go1 (12.7 kg, 12 actuated hinges) on a ground plane; see :class:`UnitreeScene`."""

    robot = GO1
    # The keyframe's 0.278 m puts the foot spheres 16.5 mm into the ground (newton 1.8.0's FK), past the
    # penetration limit; 0.295 m starts them 0.5 mm above it.
    spawn_height = 0.295
    # Contacts standing under zero actions: 42 per world (newton 1.8.0, CPU); 2x headroom.
    rigid_contacts_per_world = 96
    action_dim = len(GO1.joints)
    camera_eye = (0.9, -1.4, 0.6)
    camera_target = (0.0, 0.0, 0.25)
    solver_defaults = SteelSolverOptions(
        # The options page: raise iterations where contacts couple to the limit rows. Under constant saturated
        # actions (the hips' targets 0.63 rad past their limits, the robot collapsing; newton 1.8.0, CPU, 8 worlds)
        # a thigh went 0.027 rad past its limit with the default 12 iterations, 0.019 with 16, 0.015 with 20.
        iterations=20,
        drive_mode="rows",
        enable_joint_limits=True,
        enable_joint_velocity_limits=True,
        # The options page: keep the gap above 2 * max|qd| * dt = 2 * 30.1 rad/s * 0.005 s = 0.3 rad.
        joint_limit_activation_gap=0.35,
        # Rows measured with row_watermark=True standing under zero actions (newton 1.8.0, CPU): 122 per world (12
        # drives, the feet's and nearby capsules' contact and friction rows); 256 keeps 2x headroom.
        articulation_constraint_max=256,
    )


class G1Scene(UnitreeScene):
    """Unitree G1 (33.3 kg, 29 actuated hinges) on a ground plane; see :class:`UnitreeScene`."""

    robot = G1
    # At the keyframe's 0.76 m the foot capsules' lowest points are 3.5 mm above the ground (newton 1.8.0's FK).
    spawn_height = 0.76
    # Contacts under zero actions, standing and falling over: up to 57 per world (newton 1.8.0, CPU); 2x headroom.
    rigid_contacts_per_world = 128
    action_dim = len(G1.joints)
    camera_eye = (2.0, -2.5, 0.8)
    camera_target = (0.0, 0.0, 0.6)
    solver_defaults = SteelSolverOptions(
        # The options page: raise iterations for large mass ratios. The ankles' light rotors (armature 0.0072 kg m^2)
        # carry the whole robot: under random actions (newton 1.8.0, CPU, 32 worlds x 200 steps) an ankle went
        # 0.022 rad past its limit with the default 12 iterations, 0.011 rad with 20. Under bang-bang actions
        # (steel-envs doctor, 8 worlds x 200 steps) it went 0.041 rad past with 20, 0.025 with 30, 0.016 with 40
        # (1.43x the step time of 20), 0.029 with 20 and a Baumgarte factor of 0.5 (the share of a limit's or a
        # contact's position error removed per step; default 0.2), 0.014 with 30 and 0.5 (1.25x the step time):
        # these. Penetration stays at 1.3 mm, on flat ground and on the hardest terrain level.
        iterations=30,
        baumgarte=0.5,
        drive_mode="rows",
        enable_joint_limits=True,
        enable_joint_velocity_limits=True,
        # 2 * max|qd| * dt = 2 * 37 rad/s * 0.005 s = 0.37 rad.
        joint_limit_activation_gap=0.4,
        # Rows measured with row_watermark=True under zero actions, standing and falling over (newton 1.8.0, CPU):
        # up to 197 per world; 384 keeps 2x headroom.
        articulation_constraint_max=384,
    )


class Go1RoughScene(TerrainScene, Go1Scene):
    """Unitree Go1 on the terrain grid; see :class:`UnitreeScene`.

    The terrain (:class:`steel_envs.envs.terrain.TerrainScene`): one static heightfield (``terrain_geometry="mesh"``:
    the same triangles as a mesh) that all worlds share in place of the ground plane, with the plane's material. The
    robot's shapes and the terrain keep a contact gap of 0.03 m: Newton's default 0.1 m made up to 185 contacts per
    world on the hardest stairs and stepped 6.7x slower than 0.02 m; a foot at 4 m/s closes 2 cm per physics step.
    At each reset the robot starts on the flat platform of its patch, 0.295 m above it, heading U(-pi, pi).
    """

    # Watermarks of steel-envs doctor at the hardest level (8 worlds x 200 steps of random, bang-bang and zero
    # actions; newton 1.8.0, CPU), heightfield / mesh: 51 / 58 contacts and 310 / 347 rows per world; 2x headroom.
    rigid_contacts_per_world = 128
    solver_defaults = Go1Scene.solver_defaults.replace({"articulation_constraint_max": 768})


class G1RoughScene(TerrainScene, G1Scene):
    """Unitree G1 on the terrain grid; see :class:`UnitreeScene`.

    The terrain as :class:`Go1RoughScene`'s (contact gap 0.03 m). At each reset the robot starts on the flat platform
    of its patch, 0.76 m above it, heading U(-pi, pi).
    """

    # Watermarks of steel-envs doctor at the hardest level (8 worlds x 200 steps of random, bang-bang and zero
    # actions; newton 1.8.0, CPU), heightfield / mesh: 124 / 122 contacts and 394 / 389 rows per world; 2x headroom.
    rigid_contacts_per_world = 256
    solver_defaults = G1Scene.solver_defaults.replace({"articulation_constraint_max": 800})
