"""The deployment contract of an exported policy: what a robot (or a second simulator) needs to run it, written into
the file by ``steel-envs export`` and read back by :func:`read_contract`.

An exported network maps the observation vector to the action vector; running it anywhere else needs what the env
did around it: which joint each action drives and how (PD gains, default position, scale and offset, effort
limits), which entries of the observation are which quantities in which units, frames and order, with which noise,
clip and history, which commands it follows and in which ranges, whether the network normalizes its input and
whether its output is clipped. :class:`PolicyContract` holds all of it; ONNX files carry it in their
``metadata_props`` and TorchScript files in an extra file (:data:`EXPORT_METADATA`).

ONNX keys: ``steel_envs.contract`` (this contract as JSON, full precision: what :func:`read_contract` reads),
``steel_envs.env_id``, ``steel_envs.obs_dim``, ``steel_envs.action_dim`` (the task record older exports carry), and
mjlab's keys where they mean the same (``mjlab/rl/exporter_utils.py``: comma-separated values, 3 decimals, a
sequence inside an entry joined by ``;``), so tools written for mjlab's exports read these: ``joint_names``,
``joint_stiffness``, ``joint_damping``, ``default_joint_pos``, ``action_scale`` (for joint position actions),
``command_names``, ``observation_names``, ``observation_terms_scale``, ``observation_terms_history_length``,
``observation_terms_clip``. The keys are described in the deployment guide (``docs/guides/deployment.md``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

__all__ = [
    "CONTRACT_FORMAT",
    "EXPORT_METADATA",
    "Actuation",
    "CommandComponent",
    "ObservationTerm",
    "PolicyContract",
    "contract_of",
    "read_contract",
]

CONTRACT_FORMAT = 1
"""Version of the contract's JSON layout (``format`` in the JSON); a reader refuses a newer one."""

EXPORT_METADATA = "steel_envs.json"
"""Name of the extra file of an exported TorchScript policy (and, with a ``steel_envs.`` prefix per key, of the
ONNX model's ``metadata_props``) that records its task: ``{"env_id", "obs_dim", "action_dim", "contract"}``."""


@dataclass(frozen=True)
class ObservationTerm:
    """One block of the policy's observation vector, in order."""

    name: str
    """The block's key (``env.observation_layout``), e.g. ``"joint_pos"``."""
    size: int
    """Entries of one frame."""
    history_length: int
    """Frames, oldest first (the block has ``size * history_length`` entries)."""
    unit: str
    """Unit of the entries (``1``: dimensionless)."""
    description: str
    """What the entries are, frames included (the task page's observation table)."""
    scale: float
    """Factor applied to the quantity before it enters the vector (1: unscaled)."""
    clip: tuple[float, float]
    """Bounds the env clips every entry to after the noise."""
    noise_std: tuple[float, ...]
    """Standard deviation of the Gaussian noise the env adds to each entry of one frame in training (0: none)."""


@dataclass(frozen=True)
class CommandComponent:
    """One component of the command the policy follows (it reads it in its observation)."""

    name: str
    """mjlab's name of the range (``lin_vel_x``, ``lin_vel_y``, ``ang_vel_z``)."""
    unit: str
    low: float
    high: float
    """Range the env samples it from in training."""


@dataclass(frozen=True)
class Actuation:
    """How the actions drive the robot's joints: joint position targets tracked by PD drives,
    ``target_j = action_offset_j + action_scale_j * action_j`` [rad], torque ``stiffness_j * (target_j - q_j) -
    damping_j * qd_j`` clamped at ``effort_limit_j`` (``actuator`` says how the simulation applied it)."""

    joint_names: tuple[str, ...]
    """The joints the actions drive, in action order (the MJCF's names)."""
    observation_joint_names: tuple[str, ...]
    """The joints of the joint blocks of the observation (``joint_pos``, ``joint_vel``), in their order."""
    default_joint_pos: tuple[float, ...]
    """Standing pose [rad], action order: the target of action 0 and the zero of the ``joint_pos`` observation."""
    stiffness: tuple[float, ...]
    """PD stiffness [N m / rad], action order."""
    damping: tuple[float, ...]
    """PD damping [N m s / rad], action order."""
    effort_limit: tuple[float, ...]
    """Torque bound [N m], action order."""
    velocity_limit: tuple[float, ...]
    """Joint speed bound [rad/s] the simulation enforces, action order."""
    action_scale: tuple[float, ...]
    """Target offset per unit action [rad], action order."""
    action_offset: tuple[float, ...]
    """Target at action 0 [rad], action order (the standing pose)."""
    actuator: str = "pd"
    """The actuator model the policy was trained with (:data:`steel_envs.components.actuators.ACTUATOR_MODELS`):
    ``"pd"`` (the simulator's implicit drive), ``"delayed_pd"`` (targets delayed by ``actuator_delay``), ``"dc_motor"``
    (effort clamped by the torque-speed line from ``effort_limit`` at rest to 0 at ``velocity_limit``)."""
    actuator_delay: tuple[float, float] = (0.0, 0.0)
    """(low, high) delay of the targets [s], drawn per episode (``"delayed_pd"``)."""


@dataclass(frozen=True)
class PolicyContract:
    """What an exported policy expects and gives (see the module doc). Build one with :func:`contract_of`, read one
    with :func:`read_contract`."""

    env_id: str
    """The task it was trained on, e.g. ``steel_envs/Go1Velocity-v0``."""
    version: int | None
    """The ID's version (``-v0``: 0)."""
    control_dt: float
    """Seconds between two actions [s]."""
    obs_dim: int
    action_dim: int
    action_low: tuple[float, ...]
    action_high: tuple[float, ...]
    """The env's action box: it clips actions to it before applying them."""
    action_clipped: bool
    """Whether the network's output is already clipped to the action box (``steel-envs export --clip-actions``);
    otherwise clip it as the env does."""
    normalizer: bool
    """Whether the network normalizes its input itself (rsl_rl's empirical normalization, exported inside): feed it
    raw observations either way."""
    observations: tuple[ObservationTerm, ...]
    """The policy observation's blocks, in order."""
    command_names: tuple[str, ...]
    """mjlab's command terms (``("twist",)`` for velocity tracking; empty: no command)."""
    commands: tuple[CommandComponent, ...]
    """The command's components, in their observation order."""
    actuation: Actuation | None
    """Joint position actuation; None where the actions are not joint position targets (forces, torques, a
    gripper's motion): the task page says what they are."""
    format: int = CONTRACT_FORMAT

    def to_json(self) -> str:
        """The contract as JSON (floats in full precision; ``inf`` bounds as ``"inf"`` strings)."""
        return json.dumps(_encode(dataclasses.asdict(self)), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> PolicyContract:
        """The contract :meth:`to_json` wrote.

        Raises:
            ValueError: On text that is not such a contract, or a newer ``format`` than this reader's.
        """
        try:
            raw = _decode(json.loads(text))
            if not isinstance(raw, dict):
                raise TypeError(f"a JSON object expected, got {type(raw).__name__}")
            if int(raw.get("format", 0)) > CONTRACT_FORMAT:
                raise ValueError(f"contract format {raw['format']} is newer than this reader's {CONTRACT_FORMAT}")
            obs = tuple(ObservationTerm(**{**o, **_tuples(o, "clip", "noise_std")}) for o in raw.pop("observations"))
            commands = tuple(CommandComponent(**c) for c in raw.pop("commands"))
            act = raw.pop("actuation")
            actuation = None if act is None else Actuation(**{k: _tuple_or_str(v) for k, v in act.items()})
            contract = cls(
                **{**raw, **_tuples(raw, "action_low", "action_high", "command_names")},
                observations=obs,
                commands=commands,
                actuation=actuation,
            )
        except (TypeError, KeyError, AttributeError, ValueError, json.JSONDecodeError) as e:
            raise ValueError(f"not a steel-envs policy contract ({type(e).__name__}: {e})") from None
        c = contract
        sizes_ok = all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (c.obs_dim, c.action_dim))
        if not (isinstance(c.env_id, str) and sizes_ok and isinstance(c.control_dt, (int, float))):
            raise ValueError("not a steel-envs policy contract (env_id, obs_dim, action_dim or control_dt ill-typed)")
        if not (math.isfinite(c.control_dt) and c.control_dt > 0):
            raise ValueError(f"not a steel-envs policy contract (control_dt {c.control_dt!r} is not a positive time)")
        if sum(o.size * o.history_length for o in c.observations) != c.obs_dim:
            raise ValueError(f"not a steel-envs policy contract (its blocks do not add up to obs_dim {c.obs_dim})")
        return contract

    def metadata(self) -> dict[str, str]:
        """The ONNX ``metadata_props`` of the contract: ``steel_envs.*`` keys and mjlab's (see the module doc)."""
        out = {
            "steel_envs.env_id": self.env_id,
            "steel_envs.obs_dim": str(self.obs_dim),
            "steel_envs.action_dim": str(self.action_dim),
            "steel_envs.contract": self.to_json(),
            "command_names": _csv(self.command_names),
            "observation_names": _csv([o.name for o in self.observations]),
            "observation_terms_scale": _csv([o.scale for o in self.observations]),
            "observation_terms_history_length": _csv([o.history_length for o in self.observations]),
            "observation_terms_clip": _csv([list(o.clip) for o in self.observations]),
        }
        a = self.actuation
        if a is not None:
            out |= {
                "joint_names": _csv(a.joint_names),
                "joint_stiffness": _csv(a.stiffness),
                "joint_damping": _csv(a.damping),
                "default_joint_pos": _csv(a.default_joint_pos),
                "action_scale": _csv(a.action_scale),
            }
        return out

    def check_fits(self, env: Any, path: str) -> None:
        """Refuse to run this policy on ``env`` when it was made for another task, version or joint order.

        Raises:
            ValueError: One line naming the file, the field, what the file says and what the env is.
        """
        other = contract_of(env)
        name = other.env_id.rsplit("-v", 1)[0]
        if self.env_id.rsplit("-v", 1)[0] != name:
            raise ValueError(f"policy: {path} was trained on {self.env_id}, not {other.env_id}")
        if self.version != other.version:
            raise ValueError(f"policy: {path} is for version {self.version} of {name}, the env is {other.version}")
        mine = None if self.actuation is None else self.actuation.joint_names
        theirs = None if other.actuation is None else other.actuation.joint_names
        if mine != theirs:
            raise ValueError(f"policy: {path} drives the joints {mine}, {other.env_id} drives {theirs}")
        seen, given = [o.name for o in self.observations], [o.name for o in other.observations]
        if seen != given:
            raise ValueError(f"policy: {path} observes {seen}, {other.env_id} gives {given} (another obs_variant?)")
        if (self.obs_dim, self.action_dim) != (other.obs_dim, other.action_dim):
            raise ValueError(
                f"policy: {path} maps {self.obs_dim} observations to {self.action_dim} actions; {other.env_id} has "
                f"{other.obs_dim} and {other.action_dim}"
            )


def contract_of(env: Any, *, action_clipped: bool = False, normalizer: bool = False) -> PolicyContract:
    """The contract of a policy for ``env`` (a steel-envs vector env, a :class:`steel_envs.ShardedVectorEnv`, or a
    Gymnasium wrapper of one).

    Args:
        env: The env the policy runs in.
        action_clipped: Whether the exported network clips its output to the action box.
        normalizer: Whether the exported network normalizes its input.
    """
    env = getattr(env, "unwrapped", env)
    shards_contract = getattr(env, "deployment_contract", None)
    if shards_contract is not None:  # a ShardedVectorEnv: its worlds' env lives in the workers; its probe's
        return dataclasses.replace(shards_contract, action_clipped=bool(action_clipped), normalizer=bool(normalizer))
    spec = env.spec if env.spec is not None else gym.spec(env.env_id)
    c = env.config
    blocks = env.observation_blocks()
    dim = int(env.single_observation_space.shape[-1])
    noise = np.broadcast_to(np.asarray(c.obs_noise_std, np.float64), (dim,))
    terms, start = [], 0
    for b in blocks:
        frame = noise[start : start + b.size]  # a block's frames share the noise of its first frame's entries
        terms.append(
            ObservationTerm(
                b.name,
                b.size,
                b.history,
                b.unit,
                b.description,
                1.0,
                (-float(c.obs_clip), float(c.obs_clip)),
                tuple(float(x) for x in frame),
            )
        )
        start += b.width
    low, high = env.single_action_space.low, env.single_action_space.high
    return PolicyContract(
        env_id=spec.id,
        version=spec.version,
        control_dt=float(env.control_dt),
        obs_dim=dim,
        action_dim=int(env.action_dim),
        action_low=tuple(float(x) for x in low),
        action_high=tuple(float(x) for x in high),
        action_clipped=bool(action_clipped),
        normalizer=bool(normalizer),
        observations=tuple(terms),
        command_names=tuple(env.deployment_command_names()),
        commands=tuple(env.deployment_commands()),
        actuation=env.deployment_actuation(),
    )


def read_contract(path: str | os.PathLike) -> PolicyContract:
    """The contract written into an exported policy (``.onnx``, read with ``onnxruntime`` from the ``train`` extra;
    or TorchScript with :data:`EXPORT_METADATA`).

    Raises:
        ValueError: One line when the file does not exist, is neither, or carries no contract (exported before
            the contract existed, or by another tool).
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ValueError(f"policy: {path} is not a file")
    text = None
    if path.lower().endswith(".onnx"):
        text = _onnx_session(path).get_modelmeta().custom_metadata_map.get("steel_envs.contract")
    else:
        import torch

        extra = {EXPORT_METADATA: ""}
        try:
            torch.jit.load(path, map_location="cpu", _extra_files=extra)
        except RuntimeError:
            raise ValueError(f"policy: {path} is neither an .onnx nor a TorchScript file") from None
        if extra[EXPORT_METADATA]:
            text = _record(extra[EXPORT_METADATA], path).get("contract")
    if text is None:
        raise ValueError(f"policy: {path} carries no deployment contract; export it again with steel-envs export")
    try:
        return PolicyContract.from_json(text)
    except ValueError as e:
        raise ValueError(f"policy: {path}: {e}") from None


def _csv(values: Any) -> str:
    """mjlab's ``list_to_csv_str``: comma-separated, 3 decimals, a sequence inside an entry joined by ``;``."""

    def scalar(x: Any) -> str:
        return f"{x:.3f}" if isinstance(x, float) else str(x)

    return ",".join(";".join(scalar(v) for v in x) if isinstance(x, (list, tuple)) else scalar(x) for x in values)


def _encode(x: Any) -> Any:
    """JSON-safe: infinite floats as strings (JSON has no inf)."""
    if isinstance(x, float) and not np.isfinite(x):
        return str(x)
    if isinstance(x, Mapping):
        return {k: _encode(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_encode(v) for v in x]
    return x


def _decode(x: Any) -> Any:
    if x in ("inf", "-inf", "nan"):
        return float(x)
    if isinstance(x, Mapping):
        return {k: _decode(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_decode(v) for v in x]
    return x


def _tuples(raw: Mapping[str, Any], *names: str) -> dict[str, tuple]:
    return {n: tuple(raw[n]) for n in names}


def _tuple_or_str(value: Any) -> tuple | str:
    return value if isinstance(value, str) else tuple(value)


def _onnx_session(path: str):
    """An onnxruntime session of ``path``; a file onnxruntime cannot read is refused in one line."""
    import onnxruntime  # the train extra's, as for playing the file

    try:
        return onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime raises its own classes (InvalidProtobuf, Fail, ...)
        raise ValueError(f"policy: {path} is not a readable ONNX model ({type(e).__name__})") from None


def _record(text: str, path: str) -> dict:
    """The task record of an exported TorchScript file (its :data:`EXPORT_METADATA` extra file)."""
    try:
        record = json.loads(text)
    except json.JSONDecodeError:
        record = None
    if not isinstance(record, dict):
        raise ValueError(f"policy: {path}'s {EXPORT_METADATA} is not a JSON object")
    return record
