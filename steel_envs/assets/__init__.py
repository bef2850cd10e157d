"""Vendored robot models and their actuation, as the field runs them: Unitree Go1 (:data:`GO1`) and G1 (:data:`G1`),
the Franka Emika Panda arm (:data:`PANDA`, :class:`ArmModel`, MuJoCo Menagerie's model from the ``genesis-world``
1.4.5 wheel, Apache-2.0, with the gains of its own position actuators) and the Allegro hand (:data:`ALLEGRO`, the
URDF of the ``example-robot-data`` 6.0.0 wheel, BSD, with Isaac Lab's gains).

The MJCF files under ``steel_envs/assets/<robot>/`` are mjlab 1.6.0's (Apache-2.0; Menagerie-derived, BSD-3-Clause
upstream), each folder with its ``LICENSE`` and ``PROVENANCE.md``. The models declare joints, inertias, joint ranges
and primitive colliders but no actuators and no keyframe: those are in mjlab's ``go1_constants.py`` /
``g1_constants.py`` (``mjlab/asset_zoo/robots/unitree_*/`` in the wheel), and every number below cites its line.
mjlab drives each joint with a position actuator (``BuiltinPositionActuatorCfg``): a PD law
``tau = ke (q_target - q) - kd qd`` clamped to the effort limit, with the rotor's reflected inertia as the joint's
armature and the gains set for a 10 Hz natural frequency at damping ratio 2 (``ke = armature * omega^2``,
``kd = 2 * 2 * armature * omega``); the targets default to the standing pose. :meth:`RobotModel.add_to` applies
the same to a ``newton.ModelBuilder``.

Importing this module loads neither Newton nor Warp.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import newton

__all__ = [
    "ALLEGRO",
    "ASSET_ROOT",
    "G1",
    "GO1",
    "PANDA",
    "ROBOTS",
    "ArmModel",
    "RobotModel",
    "exclude_link_pairs",
    "link_shapes",
    "per_joint",
]

ASSET_ROOT = Path(__file__).parent
"""Folder of the vendored models, one sub-folder per robot."""

# go1_constants.py:51-52 and g1_constants.py:112-113: NATURAL_FREQ = 10 * 2.0 * 3.1415926535 (10 Hz),
# DAMPING_RATIO = 2.0 (mjlab's literal pi, kept so the gains are mjlab's to the last digit).
_OMEGA = 10 * 2.0 * 3.1415926535
_ZETA = 2.0


@dataclass(frozen=True)
class _Actuator:
    """One motor class: reflected inertia [kg m^2], effort [N m] and velocity [rad/s] limits."""

    armature: float
    effort_limit: float
    velocity_limit: float

    def times(self, k: float) -> _Actuator:
        """k motors of this class driving one joint through a nominal 1:1 linkage."""
        return _Actuator(self.armature * k, self.effort_limit * k, self.velocity_limit)


def _two_stage_planetary(rotor: tuple[float, float, float], gear: tuple[float, float, float]) -> float:
    """Reflected inertia of a two-stage planetary gearbox [kg m^2]: mjlab/utils/actuator.py:25-34."""
    return rotor[0] * (gear[1] * gear[2]) ** 2 + rotor[1] * gear[2] ** 2 + rotor[2]


# Go1: go1_constants.py:34 ROTOR_INERTIA = 0.000111842; :37-38 gear ratios 6 (hip, thigh) and 6 * 1.5 (knee);
# reflected inertia rotor * ratio^2 (mjlab/utils/actuator.py:17-22); limits :40-49.
_GO1_HIP = _Actuator(armature=0.000111842 * 6**2, effort_limit=23.7, velocity_limit=30.1)
_GO1_KNEE = _Actuator(armature=0.000111842 * (6 * 1.5) ** 2, effort_limit=35.55, velocity_limit=20.06)

# G1: motor classes of g1_constants.py:35-110 (rotor inertias, gears, limits).
_G1_5020 = _Actuator(_two_stage_planetary((0.139e-4, 0.017e-4, 0.169e-4), (1, 1 + 46 / 18, 1 + 56 / 16)), 25.0, 37.0)
_G1_7520_14 = _Actuator(_two_stage_planetary((0.489e-4, 0.098e-4, 0.533e-4), (1, 4.5, 1 + 48 / 22)), 88.0, 32.0)
_G1_7520_22 = _Actuator(_two_stage_planetary((0.489e-4, 0.109e-4, 0.738e-4), (1, 4.5, 5)), 139.0, 20.0)
_G1_4010 = _Actuator(_two_stage_planetary((0.068e-4, 0.0, 0.0), (1, 5, 5)), 5.0, 22.0)


def _set_position_drives(
    builder: newton.ModelBuilder,
    dofs: list[int],
    coords: list[int],
    stiffness: np.ndarray,
    damping: np.ndarray,
    effort_limit: np.ndarray,
    velocity_limit: np.ndarray,
    pose: np.ndarray,
) -> None:
    """Position drives on the given DOFs of ``builder`` (one entry of each array per DOF, in order): gains, effort
    and velocity limits, and the target and the coordinate set to ``pose`` (coordinates have the joint_q layout)."""
    import newton

    for i, (dof, coord) in enumerate(zip(dofs, coords, strict=True)):
        builder.joint_target_mode[dof] = int(newton.JointTargetMode.POSITION)
        builder.joint_target_ke[dof] = float(stiffness[i])
        builder.joint_target_kd[dof] = float(damping[i])
        builder.joint_effort_limit[dof] = float(effort_limit[i])
        builder.joint_velocity_limit[dof] = float(velocity_limit[i])
        builder.joint_target_q[coord] = builder.joint_q[coord] = float(pose[i])


def link_shapes(builder: newton.ModelBuilder, body_start: int, shape_start: int) -> dict[str, list[int]]:
    """Link name (the body label's last part) -> its shape indices, for the bodies of ``builder`` from
    ``body_start`` on and their shapes from ``shape_start`` on (a model just added)."""
    names = {b: builder.body_label[b].rsplit("/", 1)[-1] for b in range(body_start, builder.body_count)}
    links: dict[str, list[int]] = {name: [] for name in names.values()}
    for s in range(shape_start, builder.shape_count):
        if builder.shape_body[s] in names:
            links[names[builder.shape_body[s]]].append(s)
    return links


def exclude_link_pairs(builder: newton.ModelBuilder, links: dict[str, list[int]], pairs) -> None:
    """Keep every shape of link a out of collisions with every shape of link b, for each (a, b) of ``pairs``
    (``links`` from :func:`link_shapes`)."""
    for a, b in pairs:
        builder.shape_collision_filter_pairs.extend((sa, sb) for sa in links[a] for sb in links[b])


def per_joint(joints: tuple[str, ...], rules: dict[str, object], default: object = None) -> list:
    """The value of the one rule whose regex fully matches each joint name (mjlab's name patterns).

    Raises:
        ValueError: If a joint matches no rule (without a default) or more than one.
    """
    values = []
    for joint in joints:
        hits = [value for pattern, value in rules.items() if re.fullmatch(pattern, joint)]
        if len(hits) > 1 or (not hits and default is None):
            raise ValueError(f"joint {joint!r}: expected one matching rule of {list(rules)}, got {len(hits)}")
        values.append(hits[0] if hits else default)
    return values


@dataclass(frozen=True)
class RobotModel:
    """A vendored robot: its MJCF and the actuation of its joints, per actuated joint in DOF order.

    Arrays are float32 of shape (len(joints),). ``standing_pose`` [rad] is the keyframe's (the default joint
    targets), ``standing_height`` [m] its base height; ``stiffness`` [N m/rad] and ``damping`` [N m s/rad] are
    the PD gains, ``armature`` [kg m^2] the reflected rotor inertia, ``effort_limit`` [N m] and
    ``velocity_limit`` [rad/s] the motor's. ``action_scale`` [rad] is mjlab's joint-target offset at action 1,
    ``0.25 * effort_limit / stiffness`` (go1_constants.py:155-163, g1_constants.py:280-288).
    """

    name: str
    mjcf: Path
    base_body: str
    joints: tuple[str, ...]
    standing_height: float
    standing_pose: np.ndarray
    actuators: tuple[_Actuator, ...] = field(repr=False)
    feet: tuple[str, ...]
    """Names of the foot collision geoms."""
    foot_friction: float
    """Friction coefficient of the foot geoms (mjlab's collision config)."""
    imu_site: str
    """Name of the MJCF site of the IMU (its gyro and accelerometer sensors' site)."""
    soft_joint_pos_limit_factor: float = 0.9
    """Fraction of each joint range mjlab's limit terms treat as soft limits (go1_constants.py:137,
    g1_constants.py:262)."""

    @property
    def armature(self) -> np.ndarray:
        return np.array([a.armature for a in self.actuators], np.float32)

    @property
    def stiffness(self) -> np.ndarray:
        # go1_constants.py:54-58, g1_constants.py:115-123: ke = armature * omega^2, kd = 2 zeta armature omega.
        return np.array([a.armature * _OMEGA**2 for a in self.actuators], np.float32)

    @property
    def damping(self) -> np.ndarray:
        return np.array([2.0 * _ZETA * a.armature * _OMEGA for a in self.actuators], np.float32)

    @property
    def effort_limit(self) -> np.ndarray:
        return np.array([a.effort_limit for a in self.actuators], np.float32)

    @property
    def velocity_limit(self) -> np.ndarray:
        return np.array([a.velocity_limit for a in self.actuators], np.float32)

    @property
    def action_scale(self) -> np.ndarray:
        return np.array([0.25 * a.effort_limit / (a.armature * _OMEGA**2) for a in self.actuators], np.float32)

    @property
    def standing_q(self) -> np.ndarray:
        """Joint coordinates of the keyframe (free base at ``standing_height``, upright, then the joints), float64
        (7 + len(joints),): x, y, z [m], quaternion (x, y, z, w), joint angles [rad]."""
        return np.concatenate([[0.0, 0.0, self.standing_height, 0.0, 0.0, 0.0, 1.0], self.standing_pose])

    def add_to(
        self, builder: newton.ModelBuilder, *, xform: object = None, enable_self_collisions: bool = True
    ) -> list[int]:
        """Add the robot to ``builder`` with a free base: the MJCF through Newton's importer (collision from the
        model's primitives; meshes as visual shapes), then position drives at the standing pose with this model's
        gains, armature and limits on the actuated joints, and the foot friction.

        Args:
            builder: The builder of one world.
            xform: Root transform (``wp.transform``); None: the model's own base pose.
            enable_self_collisions: Collisions between the robot's own bodies (mjlab's ``FULL_COLLISION`` has them,
                go1_constants.py:116-126, g1_constants.py:220-227), minus the model's excluded pairs.

        Returns:
            The DOF index in ``builder`` of each actuated joint, in :attr:`joints` order.

        Raises:
            ValueError: If the imported model's actuated joints differ from :attr:`joints`.
        """
        joint_start, shape_start = builder.joint_count, builder.shape_count
        builder.add_mjcf(str(self.mjcf), xform=xform, floating=True, enable_self_collisions=enable_self_collisions)
        added = range(joint_start, builder.joint_count)
        names = tuple(builder.joint_label[j].rsplit("/", 1)[-1] for j in added)[1:]  # the free base first
        if names != self.joints:
            raise ValueError(f"{self.mjcf.name}: expected joints {self.joints}, the importer made {names}")
        dofs = [builder.joint_qd_start[j] for j in added][1:]
        coords = [builder.joint_q_start[j] for j in added][1:]
        _set_position_drives(
            builder,
            dofs,
            coords,
            self.stiffness,
            self.damping,
            self.effort_limit,
            self.velocity_limit,
            self.standing_pose,
        )
        for i, dof in enumerate(dofs):
            builder.joint_armature[dof] = float(self.armature[i])
        for s in range(shape_start, builder.shape_count):
            if builder.shape_label[s].rsplit("/", 1)[-1] in self.feet:
                builder.shape_material_mu[s] = self.foot_friction
        return dofs


_GO1_JOINTS = tuple(f"{leg}_{j}_joint" for leg in ("FR", "FL", "RR", "RL") for j in ("hip", "thigh", "calf"))
_G1_LEG = ("hip_pitch", "hip_roll", "hip_yaw", "knee", "ankle_pitch", "ankle_roll")
_G1_ARM = ("shoulder_pitch", "shoulder_roll", "shoulder_yaw", "elbow", "wrist_roll", "wrist_pitch", "wrist_yaw")
_G1_JOINTS = (
    *(f"{side}_{j}_joint" for side in ("left", "right") for j in _G1_LEG),
    "waist_yaw_joint",
    "waist_roll_joint",
    "waist_pitch_joint",
    *(f"{side}_{j}_joint" for side in ("left", "right") for j in _G1_ARM),
)

GO1 = RobotModel(
    name="unitree_go1",
    mjcf=ASSET_ROOT / "unitree_go1" / "go1.xml",
    base_body="trunk",
    joints=_GO1_JOINTS,
    # INIT_STATE, go1_constants.py:80-89: base at 0.278 m; thighs 0.9, calves -1.8, right hips 0.1, left hips -0.1.
    standing_height=0.278,
    standing_pose=np.array(
        per_joint(
            _GO1_JOINTS, {".*thigh_joint": 0.9, ".*calf_joint": -1.8, ".*R_hip_joint": 0.1, ".*L_hip_joint": -0.1}
        ),
        np.float32,
    ),
    # GO1_HIP_ACTUATOR_CFG (hips and thighs) and GO1_KNEE_ACTUATOR_CFG (calves), go1_constants.py:60-73.
    actuators=tuple(per_joint(_GO1_JOINTS, {".*_hip_joint|.*_thigh_joint": _GO1_HIP, ".*_calf_joint": _GO1_KNEE})),
    feet=tuple(f"{leg}_foot_collision" for leg in ("FR", "FL", "RR", "RL")),
    # FULL_COLLISION, go1_constants.py:116-126: feet friction (1, 5e-3, 5e-4); Newton takes the sliding one.
    foot_friction=1.0,
    imu_site="imu",  # go1.xml:57, on the trunk
)
"""Unitree Go1: 13 bodies, a free base and 12 hinges (18 DOFs), 12.7 kg."""

G1 = RobotModel(
    name="unitree_g1",
    mjcf=ASSET_ROOT / "unitree_g1" / "g1.xml",
    base_body="pelvis",
    joints=_G1_JOINTS,
    # KNEES_BENT_KEYFRAME, g1_constants.py:198-211, the init state of get_g1_robot_cfg (:273) that mjlab's velocity
    # task uses: base at 0.76 m, knees bent; joints not named are at 0.
    standing_height=0.76,
    standing_pose=np.array(
        per_joint(
            _G1_JOINTS,
            {
                ".*_hip_pitch_joint": -0.312,
                ".*_knee_joint": 0.669,
                ".*_ankle_pitch_joint": -0.363,
                ".*_elbow_joint": 0.6,
                "left_shoulder_roll_joint": 0.2,
                "left_shoulder_pitch_joint": 0.2,
                "right_shoulder_roll_joint": -0.2,
                "right_shoulder_pitch_joint": 0.2,
            },
            default=0.0,
        ),
        np.float32,
    ),
    actuators=tuple(
        per_joint(
            _G1_JOINTS,
            {
                # g1_constants.py:125-158: one motor class per joint group.
                ".*_elbow_joint|.*_shoulder_(pitch|roll|yaw)_joint|.*_wrist_roll_joint": _G1_5020,
                ".*_hip_pitch_joint|.*_hip_yaw_joint|waist_yaw_joint": _G1_7520_14,
                ".*_hip_roll_joint|.*_knee_joint": _G1_7520_22,
                ".*_wrist_pitch_joint|.*_wrist_yaw_joint": _G1_4010,
                # g1_constants.py:160-178: waist pitch/roll and ankles are 4-bar linkages driven by two 5020 motors,
                # taken at a nominal 1:1 ratio: twice the gains, effort and armature (the velocity limit is the
                # motor's, 37 rad/s, an assumption: mjlab's actuator config carries no velocity limit).
                "waist_(pitch|roll)_joint|.*_ankle_(pitch|roll)_joint": _G1_5020.times(2),
            },
        )
    ),
    feet=tuple(f"{side}_foot{i}_collision" for side in ("left", "right") for i in range(1, 8)),
    # FULL_COLLISION, g1_constants.py:220-227: foot friction 0.6.
    foot_friction=0.6,
    imu_site="imu_in_pelvis",  # g1.xml:69, on the pelvis (g1.xml:302-304: the IMU sensors' site)
)
"""Unitree G1 (29 DOF): 30 bodies, a free base and 29 hinges (35 DOFs), 33.3 kg."""


@dataclass(frozen=True)
class ArmModel:
    """A vendored fixed-base arm or hand: its model file (MJCF or URDF) and the position drives of its joints, per
    driven joint in DOF order.

    Arrays are float32 of shape (len(joints),): ``home`` [rad or m] the default targets (the MJCF's keyframe),
    ``stiffness`` [N m/rad or N/m], ``damping`` [N m s/rad or N s/m], ``effort_limit`` [N m or N],
    ``velocity_limit`` [rad/s or m/s]; ``armature`` [kg m^2] is added to each joint's inertia and ``friction``
    [N m] is the joint's Coulomb friction (None: the model's).
    """

    name: str
    path: Path
    """The model file: ``.xml`` (MJCF) or ``.urdf``."""
    joints: tuple[str, ...]
    """The driven joints in DOF order (the arm's hinges, then the fingers' slides)."""
    home: np.ndarray
    stiffness: np.ndarray
    damping: np.ndarray
    effort_limit: np.ndarray
    velocity_limit: np.ndarray
    hand_body: str
    """The body whose frame is the end effector's (a hand's: its palm)."""
    armature: np.ndarray | None = None
    friction: np.ndarray | None = None

    def add_to(
        self, builder: newton.ModelBuilder, *, xform: object = None, enable_self_collisions: bool = False
    ) -> list[int]:
        """Add the model to ``builder`` welded to the world at ``xform`` (``wp.transform``; None: the origin): the
        file through Newton's importer (collision from the model's primitives; meshes as visual shapes; a URDF's fixed
        joints kept, their child links as bodies, its joint damping read as drive damping), then position drives at
        :attr:`home` with this model's gains and limits.

        ``enable_self_collisions``: collisions between the model's links (Newton's importers leave out parent-child
        pairs).

        Returns:
            The DOF index in ``builder`` of each driven joint, in :attr:`joints` order.

        Raises:
            ValueError: If the imported model's joints differ from :attr:`joints`.
        """
        import newton

        joint_start = builder.joint_count
        if self.path.suffix == ".urdf":
            builder.add_urdf(
                str(self.path),
                xform=xform,
                floating=False,
                enable_self_collisions=enable_self_collisions,
                # Drive damping, which the gains below replace: read as passive damping, the Allegro URDF's
                # 3-10 N m s/rad on links of 1e-5 kg m^2 made SolverSteel's step non-finite within 2 s.
                joint_damping_mode="drive",
            )
        else:
            builder.add_mjcf(str(self.path), xform=xform, floating=False, enable_self_collisions=enable_self_collisions)
        added = range(joint_start, builder.joint_count)
        moving = [j for j in added if builder.joint_type[j] != newton.JointType.FIXED]
        names = tuple(builder.joint_label[j].rsplit("/", 1)[-1] for j in moving)
        if names != self.joints:
            raise ValueError(f"{self.path.name}: expected joints {self.joints}, the importer made {names}")
        dofs = [builder.joint_qd_start[j] for j in moving]
        coords = [builder.joint_q_start[j] for j in moving]
        _set_position_drives(
            builder, dofs, coords, self.stiffness, self.damping, self.effort_limit, self.velocity_limit, self.home
        )
        for i, dof in enumerate(dofs):
            if self.armature is not None:
                builder.joint_armature[dof] = float(self.armature[i])
            if self.friction is not None:
                builder.joint_friction[dof] = float(self.friction[i])
        return dofs


_PANDA_JOINTS = (*(f"joint{i}" for i in range(1, 8)), "finger_joint1", "finger_joint2")


def _panda(values: dict[str, float]) -> np.ndarray:
    return np.array(per_joint(_PANDA_JOINTS, values), np.float32)


PANDA = ArmModel(
    name="franka_panda",
    path=ASSET_ROOT / "franka_panda" / "panda.xml",
    joints=_PANDA_JOINTS,
    # panda.xml:270, keyframe "home": the hand above the table, pointing down, fingers open.
    home=np.array([0.0, 0.0, 0.0, -1.57079, 0.0, 1.57079, -0.7853, 0.04, 0.04], np.float32),
    # panda.xml:254-263: position actuators kp 4500 / 3500 / 2000, kd a tenth (biasprm), forces 87 / 12 N m
    # (panda.xml:10 the class default 87). panda.xml:242-247, 265: the fingers' tendon (half of each finger) is
    # driven with kp 100, kd 10, +-100 N: per finger half of each.
    stiffness=_panda({"joint[12]": 4500.0, "joint[34]": 3500.0, "joint[567]": 2000.0, "finger_joint.": 50.0}),
    damping=_panda({"joint[12]": 450.0, "joint[34]": 350.0, "joint[567]": 200.0, "finger_joint.": 5.0}),
    effort_limit=_panda({"joint[1-4]": 87.0, "joint[5-7]": 12.0, "finger_joint.": 50.0}),
    # Not in the MJCF: the maximum joint speeds of Franka's datasheet, as Isaac Lab's FRANKA_PANDA_CFG sets them
    # (isaaclab_assets/robots/franka.py: 2.175 rad/s for joints 1-4, 2.61 for 5-7, 0.2 m/s for the fingers).
    velocity_limit=_panda({"joint[1-4]": 2.175, "joint[5-7]": 2.61, "finger_joint.": 0.2}),
    hand_body="hand",
)
"""Franka Emika Panda with its hand: 11 bodies (link0 welded to the world), 7 hinges and 2 finger slides (9 DOFs,
the second finger mimicking the first), 17.5 kg."""

_ALLEGRO_JOINTS = tuple(f"joint_{i}.0" for i in range(16))


def _allegro(value: float) -> np.ndarray:
    return np.full(len(_ALLEGRO_JOINTS), value, np.float32)


ALLEGRO = ArmModel(
    name="allegro_hand",
    path=ASSET_ROOT / "allegro_hand" / "allegro_right_hand.urdf",
    # Joints 0-3 the index finger, 4-7 the middle, 8-11 the ring finger, 12-15 the thumb (each from its base).
    joints=_ALLEGRO_JOINTS,
    # Isaac Lab's ALLEGRO_HAND_CFG (isaaclab_assets/robots/allegro.py, init_state): every joint at 0 but the thumb's
    # rotation (thumb_joint_0, here joint_12.0) at 0.28 rad, inside the URDF's range [0.263, 1.396].
    home=np.array([0.28 if j == "joint_12.0" else 0.0 for j in _ALLEGRO_JOINTS], np.float32),
    # ALLEGRO_HAND_CFG's actuator "fingers": stiffness 1.0, damping 0.1, effort_limit_sim 0.5, friction 1e-4,
    # armature 1e-4 for every joint; no velocity limit there (the URDF's 7 rad/s is kept). The URDF's own joint
    # dynamics (damping 3-10 N m s/rad, friction 5-12 N m: ten to twenty times the motors' torque) are not the hand's
    # and are replaced.
    stiffness=_allegro(1.0),
    damping=_allegro(0.1),
    effort_limit=_allegro(0.5),
    velocity_limit=_allegro(7.0),
    hand_body="palm_link",
    armature=_allegro(1e-4),
    friction=_allegro(1e-4),
)
"""Wonik Robotics' Allegro hand (right, v4): 21 bodies (the palm welded to the world; per finger four phalanges and a
tip welded to the last), 16 hinges in four fingers of four, 0.95 kg."""

ROBOTS = {robot.name: robot for robot in (GO1, G1, PANDA, ALLEGRO)}
"""Every vendored model by folder name."""
