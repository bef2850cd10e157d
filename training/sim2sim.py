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

import math

import numpy as np
import torch

from steel_envs.assets import RobotModel
from steel_envs.deployment import PolicyContract

__all__ = ["SUPPORTED_BLOCKS", "MujocoTwin", "main", "run"]

SUPPORTED_BLOCKS = (
    "base_lin_vel",
    "base_ang_vel",
    "imu_ang_vel",
    "imu_lin_acc",
    "projected_gravity",
    "joint_pos",
    "joint_vel",
    "actions",
    "command",
)
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
        ValueError: One line when ``num_worlds`` is not a positive int, the contract has no joint position actuation,
            drives other joints than the model's, or has an observation block this class does not assemble (naming
            the first).
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

        if isinstance(num_worlds, bool) or not isinstance(num_worlds, int) or num_worlds < 1:
            raise ValueError(f"num_worlds: expected a positive int, got {num_worlds!r}")
        if cone not in ("elliptic", "pyramidal"):
            raise ValueError(f"cone: expected 'elliptic' or 'pyramidal', got {cone!r}")
        if not (impratio >= 1.0 and math.isfinite(impratio)):
            raise ValueError(f"impratio: expected a finite number >= 1, got {impratio!r}")

        a = contract.actuation
        if a is None or tuple(a.joint_names) != tuple(robot.joints):
            raise ValueError(f"contract: {contract.env_id} does not drive {robot.name}'s joints with position targets")
        unsupported = [o.name for o in contract.observations if o.name not in SUPPORTED_BLOCKS]
        if unsupported:
            raise ValueError(f"contract: {contract.env_id}'s observation block {unsupported[0]!r} has no MuJoCo form")
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
        # The IMU as the env's: specific force from the site's velocity differenced over a control step.
        self._imu = self.model.site(robot.imu_site).id
        self._imu_velocity = np.zeros((num_worlds, 3))
        self._imu_acc = np.zeros((num_worlds, 3))

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
        self._update_imu(reset=True)

    def _site_frame(self, d) -> tuple[np.ndarray, np.ndarray]:
        """The IMU site's world velocity [m/s] and its rotation matrix (site to world)."""
        res = np.zeros(6)
        self._mujoco.mj_objectVelocity(self.model, d, self._mujoco.mjtObj.mjOBJ_SITE, self._imu, res, 0)
        return res[3:], d.site_xmat[self._imu].reshape(3, 3)

    def _update_imu(self, reset: bool = False) -> None:
        """The accelerometer's reading after a control step (at a reset: at rest, ``-g`` in the site's frame)."""
        g = self.model.opt.gravity
        for w, d in enumerate(self.data):
            v, rot = self._site_frame(d)
            a = np.zeros(3) if reset else (v - self._imu_velocity[w]) / self.contract.control_dt
            self._imu_acc[w] = rot.T @ (a - g)
            self._imu_velocity[w] = v

    def observe(self) -> np.ndarray:
        """(num_worlds, obs_dim) float32: the policy's observation, block by block as the contract lists them (no
        noise: the deployment check runs without randomization)."""
        out = np.zeros((self.num_worlds, self.contract.obs_dim), np.float32)
        v_base, _ = self.base_velocity_and_up()
        for w, d in enumerate(self.data):
            quat = d.qpos[3:7]
            omega_local = d.qvel[3:6]
            values = {
                "base_lin_vel": v_base[w],
                "base_ang_vel": omega_local,
                "imu_ang_vel": self._site_frame(d)[1].T @ _quat_rotate(quat, omega_local),
                "imu_lin_acc": self._imu_acc[w],
                "projected_gravity": _quat_rotate_inv(quat, np.array([0.0, 0.0, -1.0])),
                "joint_pos": d.qpos[self._qpos] - self._offset,
                "joint_vel": d.qvel[self._qvel],
                "actions": self.last_actions[w],
                "command": self.commands[w],
            }
            out[w] = np.concatenate([np.tile(values[o.name], o.history_length) for o in self.contract.observations])
        return np.clip(out, *self.contract.observations[0].clip) if self.contract.observations else out

    def step(self, actions: np.ndarray) -> None:
        """Clip ``actions`` ((num_worlds, action_dim)) to the action box and replace non-finite entries by 0, as the
        env does, set the position targets ``offset + scale * action`` and advance one control step (``decimation``
        MuJoCo steps)."""
        actions = np.asarray(actions, np.float64)
        actions = np.clip(np.where(np.isfinite(actions), actions, 0.0), self._low, self._high)
        for d, a in zip(self.data, actions, strict=True):
            d.ctrl[:] = self._offset + self._scale * a
            for _ in range(self.decimation):
                self._mujoco.mj_step(self.model, d)
        self.last_actions = actions
        self._update_imu()

    def base_velocity_and_up(self) -> tuple[np.ndarray, np.ndarray]:
        """(num_worlds, 3) the base's centre-of-mass velocity in the base frame [m/s] (the ``base_lin_vel`` block)
        and (num_worlds,) the up axis's z component (1: upright)."""
        v, up = [], []
        for d in self.data:
            quat, omega_local = d.qpos[3:7], d.qvel[3:6]
            lever = d.xipos[self._base] - d.xpos[self._base]
            v.append(_quat_rotate_inv(quat, d.qvel[:3] + np.cross(_quat_rotate(quat, omega_local), lever)))
            up.append(_quat_rotate(quat, np.array([0.0, 0.0, 1.0]))[2])
        return np.array(v), np.array(up)

    def joint_q(self, world: int) -> np.ndarray:
        """(7 + joints,) world ``world``'s state in Newton's coordinates: base position [m], quaternion (x, y, z, w),
        joint angles [rad] in action order (the inverse of :meth:`set_state`'s mapping)."""
        q = self.data[world].qpos
        return np.concatenate([q[:3], q[4:7], q[3:4], q[self._qpos]])

    def base_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """(num_worlds, 3) base positions [m] and (num_worlds,) up-axis z components (1: upright)."""
        pos = np.array([d.qpos[:3] for d in self.data])
        up = np.array([_quat_rotate(d.qpos[3:7], np.array([0.0, 0.0, 1.0]))[2] for d in self.data])
        return pos, up


def run(
    policy: str,
    env_id: str,
    *,
    episodes: int = 16,
    num_worlds: int = 8,
    steps: int | None = None,
    seed: int = 0,
    cone: str = "elliptic",
    impratio: float = 10.0,
    video: str | None = None,
) -> dict:
    """Run ``policy`` on ``env_id``'s robot in SolverSteel and in MuJoCo side by side and return both simulators'
    figures: per episode, the tracking error (RMS over its steps of ``|cmd_xy - v_xy|``, base frame [m/s]), whether
    the robot fell (its up axis more than 70 degrees from vertical: the task's ``fell_over``) and the steps it ran.

    Both start each batch of ``num_worlds`` episodes from the same state (the env's reset with seed ``seed + k``),
    follow the same commands (the env's draws, constant over an episode: no resampling, no heading mode) without
    randomization, and run ``steps`` control steps (default: the task's time limit) or until the robot falls.

    ``video`` (a .mp4 or .gif path): the first episode, SolverSteel on the left and MuJoCo on the right, both drawn
    by the env's renderer (the MuJoCo state is copied into a render-only env of the same ID each frame), so the two
    halves differ only by the simulation.

    Raises:
        ValueError: One line for an ID MuJoCo cannot serve (no vendored robot, or an observation block without a
            MuJoCo form), a policy file made for another task, a bad count, or ``steps`` beyond the time limit (the
            env's episodes end there).
    """
    import steel_envs
    from steel_envs.deployment import contract_of
    from steel_envs.policies import load_policy_callable

    if episodes < 1 or num_worlds < 1:
        raise ValueError(f"episodes, num_worlds: expected positive counts, got {episodes}, {num_worlds}")
    task = steel_envs.registration.task_class(env_id)
    robot = getattr(task, "robot", None)
    if robot is None:
        raise ValueError(f"env_id: {env_id} has no vendored robot MuJoCo can load")
    env, viz = _make_envs(env_id, num_worlds, _obs_variant(policy), video is not None)
    try:
        contract = contract_of(env)
        act = load_policy_callable(policy, env, seed)  # an exported file's contract is checked against the env
        twin = MujocoTwin(robot, contract, num_worlds, type(env).physics_dt, cone=cone, impratio=impratio)
        limit = env.max_episode_steps
        if steps is not None and not (isinstance(steps, int) and 1 <= steps <= limit):
            raise ValueError(f"steps: expected an integer in [1, {limit}] (the task's time limit), got {steps!r}")
        horizon = limit if steps is None else steps
        out = {"steel": _Figures(), "mujoco": _Figures()}
        frames: list[np.ndarray] | None = [] if viz is not None else None
        for batch in range(-(-episodes // num_worlds)):
            obs, _ = env.reset(seed=seed + batch)
            for name, s in _batch(env, obs, twin, act, horizon, viz if batch == 0 else None, frames).items():
                out[name].add(s, episodes - batch * num_worlds)
        if video is not None:
            from steel_envs.rendering import write_video

            write_video(frames, video, fps=1.0 / float(env.control_dt))
        return {
            "env_id": env_id,
            "policy": policy,
            "episodes": episodes,
            "steps": horizon,
            "mujoco": {"cone": cone, "impratio": impratio, "version": _mujoco_version()},
            **{name: f.summary(seed) for name, f in out.items()},
        }
    finally:
        env.close()
        if viz is not None:
            viz.close()


def _make_envs(env_id: str, num_worlds: int, variant: str | None, video: bool):
    """The Steel env of a sim2sim run (the policy's ``obs_variant``, no randomization, constant commands, no
    autoreset) and, for a video, a render-only 1-world env of the ID (else None)."""
    import steel_envs

    kwargs = {} if variant is None else {"obs_variant": variant}
    render = {"render_mode": "rgb_array", "render_num_worlds": 1} if video else {}
    env = steel_envs.make_vec(
        env_id,
        num_worlds,
        **kwargs,
        **render,
        randomize=False,
        command_resample_time=(1.0e6, 1.0e6),
        rel_heading_envs=0.0,
        autoreset_mode="Disabled",
    )
    return env, (steel_envs.make_vec(env_id, 1, **kwargs, **render, randomize=False) if video else None)


def _batch(
    env, obs: torch.Tensor, twin: MujocoTwin, act, horizon: int, viz=None, frames: list | None = None
) -> dict[str, _Episodes]:
    """One batch of episodes from the env's reset state (``obs`` its first observation), in both simulators: the
    twin starts from the env's state and commands; both run ``act`` up to ``horizon`` steps or until every robot
    fell in both. With ``viz`` (a 1-world env with rendering), world 0's frames of both, side by side, are appended
    to ``frames``."""
    n = env.num_envs
    com = env.model.body_com.numpy()[0]
    twin.set_state(env.state_0.joint_q.numpy().reshape(n, -1), env.state_0.joint_qd.numpy().reshape(n, -1), com)
    twin.last_actions[:] = 0.0
    twin.commands = env.term_state.commands.numpy().copy()
    sims = {"steel": _Episodes(n, twin.commands), "mujoco": _Episodes(n, twin.commands)}
    tilt = float(env.config.max_tilt_cos)
    mj_obs = torch.from_numpy(twin.observe())
    if viz is not None:
        frames.append(_side_by_side(env, twin, viz))
    for _ in range(horizon):
        with torch.inference_mode():
            a_steel, a_mj = act(obs), act(mj_obs)
        obs, *_ = env.step(a_steel)
        twin.step(a_mj.numpy())
        mj_obs = torch.from_numpy(twin.observe())
        if viz is not None:
            frames.append(_side_by_side(env, twin, viz))
        sims["steel"].record(*_steel_base(env, n))
        sims["mujoco"].record(*twin.base_velocity_and_up())
        for s in sims.values():
            s.fell |= s.up < tilt
        if all(s.fell.all() for s in sims.values()):
            break
    return sims


def _side_by_side(env, twin: MujocoTwin, viz) -> np.ndarray:
    """(H, 2W, 3) uint8: the env's world 0 (left) and the twin's world 0 drawn by ``viz`` (right), each labelled."""
    import newton

    viz.state_0.joint_q.assign(twin.joint_q(0).astype(np.float32))
    newton.eval_fk(viz.model, viz.state_0.joint_q, viz.state_0.joint_qd, viz.state_0)
    halves = [np.ascontiguousarray(env.render()), np.ascontiguousarray(viz.render())]
    try:
        from PIL import Image, ImageDraw

        for i, label in enumerate(("SolverSteel", f"MuJoCo {_mujoco_version()}")):
            image = Image.fromarray(halves[i])
            ImageDraw.Draw(image).text((8, 8), label, fill=(255, 255, 255))
            halves[i] = np.asarray(image)
    except ImportError:  # labels need Pillow (extra video); the halves' order is documented
        pass
    return np.concatenate(halves, axis=1)


def _obs_variant(policy: str) -> str | None:
    """The ``obs_variant`` a policy file was trained with: a checkpoint's run (``train_args.json``), an exported
    file's contract (by its blocks); None for named policies and files that say nothing (the task's default)."""
    import json
    import os

    from steel_envs.deployment import read_contract

    if not os.path.isfile(policy):
        return None
    args = os.path.join(os.path.dirname(os.path.abspath(policy)), "train_args.json")
    if os.path.isfile(args) and not os.path.basename(policy).startswith("policy"):
        with open(args) as f:
            return json.load(f).get("env", {}).get("obs_variant")
    try:
        names = {o.name for o in read_contract(policy).observations}
    except ValueError:
        return None  # load_policy_callable says what is wrong with the file
    return "imu" if "imu_lin_acc" in names else "mjlab" if "base_lin_vel" in names else "no_base_lin_vel"


def _mujoco_version() -> str:
    import mujoco

    return mujoco.__version__


def _steel_base(env, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The env's base centre-of-mass velocity in the base frame ((n, 3) [m/s]) and up-axis z component ((n,))."""
    b = env.term_state.base
    body_q = env.state_0.body_q.numpy().reshape(n, -1, 7)[:, b]
    v = env.state_0.body_qd.numpy().reshape(n, -1, 6)[:, b, :3]
    quats = np.concatenate([body_q[:, 6:7], body_q[:, 3:6]], axis=1)  # (w, x, y, z)
    v_base = np.array([_quat_rotate_inv(q, x) for q, x in zip(quats, v, strict=True)])
    up = np.array([_quat_rotate(q, np.array([0.0, 0.0, 1.0]))[2] for q in quats])
    return v_base, up


class _Episodes:
    """One batch's running figures in one simulator: squared tracking errors, steps, falls."""

    def __init__(self, n: int, commands: np.ndarray):
        self.commands = commands
        self.sq, self.steps = np.zeros(n), np.zeros(n, np.int64)
        self.fell, self.up = np.zeros(n, bool), np.ones(n)

    def record(self, v_base: np.ndarray, up: np.ndarray) -> None:
        running = ~self.fell
        err = np.sum((self.commands[:, :2] - v_base[:, :2]) ** 2, axis=1)
        self.sq += np.where(running, err, 0.0)
        self.steps += running
        self.up = up


class _Figures:
    """Every episode's figures of one simulator, and their means with bootstrap intervals."""

    def __init__(self):
        self.error, self.fell, self.steps = [], [], []

    def add(self, batch: _Episodes, keep: int) -> None:
        k = min(keep, len(batch.steps))
        self.error += list(np.sqrt(batch.sq[:k] / np.maximum(batch.steps[:k], 1)))
        self.fell += list(batch.fell[:k])
        self.steps += list(batch.steps[:k])

    def summary(self, seed: int) -> dict:
        from steel_envs.training.evaluate import bootstrap_interval

        def mean_ci(values: list) -> list[float]:
            x = np.asarray(values, np.float64)
            return [float(x.mean()), *bootstrap_interval(x, np.mean, 0.95, 2000, seed)]

        return {
            "tracking_error": mean_ci(self.error),
            "fell_rate": mean_ci(self.fell),
            "mean_length": float(np.mean(self.steps)),
            "episodes": [
                {"tracking_error": float(e), "fell": bool(f), "steps": int(s)}
                for e, f, s in zip(self.error, self.fell, self.steps, strict=True)
            ],
        }


def main(argv: list[str] | None = None) -> int:
    """``steel-envs sim2sim POLICY --env ID [--episodes N] [--worlds N] [--steps T] [--seed S] [--json FILE]
    [--video FILE]``:
    a policy's figures in SolverSteel and in MuJoCo side by side (see :func:`run`)."""
    import argparse
    import json

    from steel_envs.cli_common import check_output_file, check_policy_spec, stopped_by_ctrl_c

    p = argparse.ArgumentParser(
        prog="steel-envs sim2sim",
        description="Run a Go1/G1 policy in SolverSteel and in MuJoCo side by side, on the same MJCF, gains, starts "
        "and commands, without randomization: each simulator's tracking error, fall rate (tilt beyond 70 degrees) "
        "and episode length, with 95 % bootstrap intervals. The deployment guide says how MuJoCo is set up.",
    )
    p.add_argument(
        "policy",
        help="reference[:<seed>], zero, random (its draws differ between the simulators), a train checkpoint, or an "
        "exported .onnx / TorchScript file; the env takes the obs_variant the policy was trained with",
    )
    p.add_argument("--env", required=True, help="a Go1/G1 velocity ID, e.g. steel_envs/Go1Velocity-v0")
    p.add_argument("--episodes", type=int, default=16, help="episodes in each simulator")
    p.add_argument("--worlds", type=int, default=8, help="episodes run at once in each simulator")
    p.add_argument("--steps", type=int, default=None, help="control steps per episode (default: the time limit)")
    p.add_argument("--seed", type=int, default=0, help="seed of the starts and commands (batch k: seed + k)")
    p.add_argument("--cone", choices=("elliptic", "pyramidal"), default="elliptic", help="MuJoCo's friction cone")
    p.add_argument("--impratio", type=float, default=10.0, help="MuJoCo's impratio (mjlab's: 1, pyramidal)")
    p.add_argument("--json", default=None, metavar="FILE", help="also write every episode's figures to FILE")
    p.add_argument(
        "--video",
        default=None,
        metavar="FILE",
        help="write the first episode to FILE (.mp4 or .gif): SolverSteel left, MuJoCo right, the same renderer",
    )
    a = p.parse_args(argv)
    check_policy_spec(a.policy, "policy")
    if a.json is not None:
        check_output_file(a.json, "--json")
    if a.video is not None:
        check_output_file(a.video, "--video", (".mp4", ".gif"))
    try:
        report = run(
            a.policy,
            a.env,
            episodes=a.episodes,
            num_worlds=a.worlds,
            steps=a.steps,
            seed=a.seed,
            cone=a.cone,
            impratio=a.impratio,
            video=a.video,
        )
    except KeyboardInterrupt:
        return stopped_by_ctrl_c("sim2sim")
    print(f"{a.env}, {a.policy}: {a.episodes} episodes of up to {report['steps']} steps, no randomization")
    print(f"{'':10} {'tracking error [m/s]':>28} {'fell':>22} {'mean length':>12}")
    for name in ("steel", "mujoco"):
        r = report[name]
        te, fr = r["tracking_error"], r["fell_rate"]
        label = "SolverSteel" if name == "steel" else "MuJoCo"
        print(
            f"{label:10} {te[0]:>10.3f} [{te[1]:.3f}, {te[2]:.3f}] {fr[0]:>10.0%} [{fr[1]:.0%}, {fr[2]:.0%}]"
            f" {r['mean_length']:>12.1f}"
        )
    if a.json is not None:
        with open(a.json, "w") as f:
            json.dump(report, f, indent=1)
    return 0
