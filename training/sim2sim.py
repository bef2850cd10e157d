"""Sim-to-sim: the robot of a Go1/G1 task in MuJoCo, built and observed as an exported policy's deployment contract
says (:mod:`steel_envs.deployment`), so a policy trained on SolverSteel can be checked in a second simulator before a
robot.

:class:`MujocoTwin` loads the same vendored MJCF into MuJoCo (``mujoco`` from the ``bench`` extra) with the task's
physics step and decimation, mjlab's MuJoCo settings for its velocity tasks (``implicitfast``, 10 iterations and 20
line-search iterations, ``mjlab/tasks/velocity/velocity_env_cfg.py:446-452``) but an elliptic friction cone with
``impratio`` 10 by default (see :class:`MujocoTwin`), a position actuator
per joint with the contract's gains and effort limits (``tau = kp (target - q) - kd qd``, mjlab's
``BuiltinPositionActuatorCfg``), the joints' armature, the feet's friction, a ground plane, and no collisions of the
robot with itself (as the Steel scenes). It assembles the policy's observation from MuJoCo's state block by block,
in the contract's order, units and frames; :meth:`MujocoTwin.set_state` takes a Steel env's state, so the two can be
compared on the same state.

Conventions bridged here: Newton's free joint stores the quaternion as (x, y, z, w) and its velocity as the centre
of mass's linear velocity and the angular velocity, both in the world frame; MuJoCo's stores (w, x, y, z), the body
frame origin's linear velocity in the world frame and the angular velocity in the body frame.
"""

from __future__ import annotations

import numpy as np

from steel_envs.assets import RobotModel
from steel_envs.deployment import PolicyContract

__all__ = ["SUPPORTED_BLOCKS", "MujocoTwin"]

SUPPORTED_BLOCKS = ("base_lin_vel", "base_ang_vel", "projected_gravity", "joint_pos", "joint_vel", "actions", "command")
"""The observation blocks :class:`MujocoTwin` assembles from MuJoCo's state."""


def _quat_rotate_inv(q_wxyz: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``R(q)^T v`` for a unit quaternion (w, x, y, z)."""
    w, u = q_wxyz[0], q_wxyz[1:]
    return v * (2.0 * w * w - 1.0) - np.cross(u, v) * 2.0 * w + u * (2.0 * np.dot(u, v))


def _quat_rotate(q_wxyz: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``R(q) v`` for a unit quaternion (w, x, y, z)."""
    w, u = q_wxyz[0], q_wxyz[1:]
    return v * (2.0 * w * w - 1.0) + np.cross(u, v) * 2.0 * w + u * (2.0 * np.dot(u, v))


class MujocoTwin:
    """``num_worlds`` copies of a task's robot in MuJoCo, stepped and observed as ``contract`` says.

    Args:
        robot: The vendored model (:data:`steel_envs.assets.GO1`, :data:`steel_envs.assets.G1`).
        contract: The policy's contract (:func:`steel_envs.deployment.read_contract` or ``contract_of(env)``).
        num_worlds: Independent copies (one ``MjData`` each).
        physics_dt: MuJoCo's timestep [s]; ``contract.control_dt`` must be a whole number of them.
        cone: ``"elliptic"`` (default) or ``"pyramidal"`` (mjlab's).
        impratio: MuJoCo's ratio of frictional to normal constraint impedance (mjlab's 1). With mjlab's pyramidal
            cone and 1, a Go1 standing under zero actions creeps on its feet (front feet 3 cm back in 4 s) and its
            base ends 2.8 cm below SolverSteel's after 2 s; with an elliptic cone and 10 (MuJoCo's documentation:
            raise impratio against slip) its joints match Steel's within 0.01 rad and its base within 3 mm.

    Raises:
        ValueError: One line when the contract has no joint position actuation, drives other joints than the
            model's, or has an observation block this class does not assemble (naming the first).
    """

    def __init__(
        self,
        robot: RobotModel,
        contract: PolicyContract,
        num_worlds: int = 1,
        physics_dt: float = 0.005,
        *,
        cone: str = "elliptic",
        impratio: float = 10.0,
    ):
        import mujoco

        if cone not in ("elliptic", "pyramidal"):
            raise ValueError(f"cone: expected 'elliptic' or 'pyramidal', got {cone!r}")
        if not impratio >= 1.0:
            raise ValueError(f"impratio: expected a number >= 1, got {impratio!r}")

        a = contract.actuation
        if a is None or tuple(a.joint_names) != tuple(robot.joints):
            raise ValueError(f"sim2sim: {contract.env_id} does not drive {robot.name}'s joints with position targets")
        unsupported = [o.name for o in contract.observations if o.name not in SUPPORTED_BLOCKS]
        if unsupported:
            raise ValueError(f"sim2sim: {contract.env_id}'s observation block {unsupported[0]!r} has no MuJoCo form")
        decimation = round(contract.control_dt / physics_dt)
        if decimation < 1 or abs(decimation * physics_dt - contract.control_dt) > 1e-9:
            raise ValueError(
                f"physics_dt: expected a divisor of the control dt {contract.control_dt}, got {physics_dt}"
            )
        self.robot, self.contract, self.decimation = robot, contract, decimation
        spec = mujoco.MjSpec.from_file(str(robot.mjcf))
        spec.option.timestep = physics_dt
        spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
        spec.option.cone = mujoco.mjtCone.mjCONE_ELLIPTIC if cone == "elliptic" else mujoco.mjtCone.mjCONE_PYRAMIDAL
        spec.option.impratio = float(impratio)
        spec.option.iterations, spec.option.ls_iterations = 10, 20
        for geom in spec.geoms:
            if geom.contype or geom.conaffinity:  # a collider: touches the ground only
                geom.contype, geom.conaffinity = 1, 0
            if geom.name in robot.feet:
                geom.friction[0] = robot.foot_friction
        spec.worldbody.add_geom(
            name="ground", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0.0, 0.0, 1.0], contype=0, conaffinity=1
        )
        for i, name in enumerate(robot.joints):
            spec.joint(name).armature = float(robot.armature[i])
            act = spec.add_actuator()
            act.name, act.target = name, name
            act.trntype = mujoco.mjtTrn.mjTRN_JOINT
            act.gaintype, act.biastype = mujoco.mjtGain.mjGAIN_FIXED, mujoco.mjtBias.mjBIAS_AFFINE
            act.gainprm[0] = a.stiffness[i]
            act.biasprm[0], act.biasprm[1], act.biasprm[2] = 0.0, -a.stiffness[i], -a.damping[i]
            act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
            act.forcerange = [-a.effort_limit[i], a.effort_limit[i]]
        self.model = spec.compile()
        self.data = [mujoco.MjData(self.model) for _ in range(num_worlds)]
        self._mujoco = mujoco
        self._base = self.model.body(robot.base_body).id
        self._qpos = np.array([self.model.jnt_qposadr[self.model.joint(j).id] for j in robot.joints])
        self._qvel = np.array([self.model.jnt_dofadr[self.model.joint(j).id] for j in robot.joints])
        self._offset = np.asarray(a.action_offset)
        self._scale = np.asarray(a.action_scale)
        self._low, self._high = np.asarray(contract.action_low), np.asarray(contract.action_high)
        self.last_actions = np.zeros((num_worlds, contract.action_dim))
        self.commands = np.zeros((num_worlds, len(contract.commands)))

    @property
    def num_worlds(self) -> int:
        return len(self.data)

    def set_state(self, joint_q: np.ndarray, joint_qd: np.ndarray, com: np.ndarray) -> None:
        """Set every world's robot to a Steel env's state and run MuJoCo's forward pass.

        Args:
            joint_q: (num_worlds, 7 + joints) Newton coordinates: base position [m], quaternion (x, y, z, w), joint
                angles [rad] in action order.
            joint_qd: (num_worlds, 6 + joints) Newton velocities: the base's centre-of-mass velocity [m/s] and angular
                velocity [rad/s], world frame, then joint velocities [rad/s].
            com: (3,) the base's centre of mass in its frame [m] (Newton's ``body_com``).
        """
        for d, q, qd in zip(self.data, np.asarray(joint_q, np.float64), np.asarray(joint_qd, np.float64), strict=True):
            quat = np.array([q[6], q[3], q[4], q[5]])
            omega = qd[3:6]
            d.qpos[:3], d.qpos[3:7] = q[:3], quat
            d.qpos[self._qpos] = q[7:]
            d.qvel[:3] = qd[:3] - np.cross(omega, _quat_rotate(quat, com))
            d.qvel[3:6] = _quat_rotate_inv(quat, omega)
            d.qvel[self._qvel] = qd[6:]
            self._mujoco.mj_forward(self.model, d)

    def observe(self) -> np.ndarray:
        """(num_worlds, obs_dim) float32: the policy's observation, block by block as the contract lists them (no
        noise: the deployment check runs without randomization)."""
        out = np.zeros((self.num_worlds, self.contract.obs_dim), np.float32)
        for w, d in enumerate(self.data):
            quat = d.qpos[3:7]
            omega_local = d.qvel[3:6]
            lever = d.xipos[self._base] - d.xpos[self._base]
            v_com = d.qvel[:3] + np.cross(_quat_rotate(quat, omega_local), lever)
            values = {
                "base_lin_vel": _quat_rotate_inv(quat, v_com),
                "base_ang_vel": omega_local,
                "projected_gravity": _quat_rotate_inv(quat, np.array([0.0, 0.0, -1.0])),
                "joint_pos": d.qpos[self._qpos] - self._offset,
                "joint_vel": d.qvel[self._qvel],
                "actions": self.last_actions[w],
                "command": self.commands[w],
            }
            out[w] = np.concatenate([np.tile(values[o.name], o.history_length) for o in self.contract.observations])
        return np.clip(out, *self.contract.observations[0].clip) if self.contract.observations else out

    def step(self, actions: np.ndarray) -> None:
        """Clip ``actions`` ((num_worlds, action_dim)) to the action box as the env does, set the position targets
        ``offset + scale * action`` and advance one control step (``decimation`` MuJoCo steps)."""
        actions = np.clip(np.asarray(actions, np.float64), self._low, self._high)
        for d, a in zip(self.data, actions, strict=True):
            d.ctrl[:] = self._offset + self._scale * a
            for _ in range(self.decimation):
                self._mujoco.mj_step(self.model, d)
        self.last_actions = actions

    def base_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """(num_worlds, 3) base positions [m] and (num_worlds,) up-axis z components (1: upright)."""
        pos = np.array([d.qpos[:3] for d in self.data])
        up = np.array([_quat_rotate(d.qpos[3:7], np.array([0.0, 0.0, 1.0]))[2] for d in self.data])
        return pos, up
