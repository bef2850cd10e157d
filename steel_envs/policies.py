"""Policies from a spec: what ``steel-envs evaluate``, ``play``, ``record`` and ``view`` run, and what the library's
viewer plays. A spec is ``random`` (uniform, seeded), ``zero``, ``reference[:<seed>]`` (the shipped reference
checkpoint of the env's task), a ``steel-envs train`` checkpoint (``model_*.pt`` beside its run's
``train_args.json``), an exported ``.onnx`` or TorchScript file, or ``module:function`` (observations (N, obs_dim)
float32 -> actions (N, act_dim)).

Loading a checkpoint needs the ``train`` extra (rsl-rl-lib builds its models); ONNX files need ``onnxruntime``.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
from collections.abc import Callable
from dataclasses import dataclass

import torch

from .deployment import EXPORT_METADATA, PolicyContract, _onnx_session, _record

__all__ = [
    "REFERENCE_DIR",
    "LoadedPolicy",
    "check_trained_on",
    "export_metadata",
    "load_policy",
    "load_policy_callable",
    "reference_checkpoint",
    "save_policy_only",
]

REFERENCE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference")
"""Where the shipped reference checkpoints live: ``<REFERENCE_DIR>/<Name>/seed<k>/model_final.pt``."""


def reference_seeds(env_id: str) -> list[int]:
    """The seeds whose reference checkpoints of ``env_id`` ship with the package, ascending (empty for none)."""
    folder = os.path.join(REFERENCE_DIR, env_id.split("/")[-1])
    if not os.path.isdir(folder):
        return []
    return sorted(int(d[4:]) for d in os.listdir(folder) if d.startswith("seed") and d[4:].isdigit())


def reference_checkpoint(env_id: str, seed: int = 0) -> str:
    """The shipped reference checkpoint of ``env_id`` trained with ``seed`` (``--policy reference``).

    Raises:
        FileNotFoundError: If no reference checkpoint of that ID and seed ships with the package.
    """
    path = os.path.join(REFERENCE_DIR, env_id.split("/")[-1], f"seed{seed}", "model_final.pt")
    if not os.path.isfile(path):
        seeds = reference_seeds(env_id)
        if seeds:  # a report re-measured seed by seed ships the seeds done so far
            raise FileNotFoundError(
                f"policy: no reference checkpoint of {env_id} seed {seed} ships (its seeds: {seeds}; "
                f"'reference:<seed>' picks one)"
            )
        shipped = sorted(os.listdir(REFERENCE_DIR)) if os.path.isdir(REFERENCE_DIR) else []
        raise FileNotFoundError(
            f"policy: no reference checkpoint of {env_id} seed {seed} ships (IDs that have one: {shipped})"
        )
    return path


@dataclass
class LoadedPolicy:
    """A trained policy and what it was trained on."""

    env_id: str
    policy: Callable[[torch.Tensor], torch.Tensor]
    """Deterministic policy: observations (N, obs_dim) float32 -> actions (N, act_dim)."""
    runner: object
    """rsl_rl's OnPolicyRunner holding the models (for export)."""


POLICY_KEYS = ("actor_state_dict", "iter", "infos")
"""What a policy-only checkpoint keeps of rsl_rl's: the actor (its layers, observation normalizer and action std)
and the iteration counts; not the critic or the optimizer's state, which only training needs."""


def save_policy_only(checkpoint: str, out: str) -> None:
    """Write ``checkpoint``'s policy (:data:`POLICY_KEYS`) to ``out``, a fifth of the file's size: what the shipped
    reference checkpoints hold. ``load_policy`` plays it; ``steel-envs train --resume`` refuses it.

    Raises:
        FileNotFoundError: If ``checkpoint`` is missing.
    """
    saved = torch.load(checkpoint, weights_only=False, map_location="cpu")
    partial = f"{out}.partial-{os.getpid()}"
    torch.save({key: saved[key] for key in POLICY_KEYS}, partial)
    os.replace(partial, out)


def load_policy(
    checkpoint: str, *, device: str = "cpu", num_envs: int = 1, expected_env_id: str | None = None, **env_kwargs
) -> tuple:
    """Load ``checkpoint`` with the hyper-parameters of its run; return (LoadedPolicy, vector env).

    The env is made with the task config and solver options the run trained with (``steel-envs train --env.*``,
    saved in ``train_args.json``); ``env_kwargs`` override them.

    Raises:
        FileNotFoundError: If the checkpoint or the run's ``train_args.json`` is missing.
        ValueError: If the run trained on another ID than ``expected_env_id`` (checked before anything is built).
    """
    from .adapters.rsl_rl import RslRlVecEnv, make_runner, runner_config
    from .train_config import PpoConfig

    if not os.path.isfile(checkpoint):
        raise FileNotFoundError(f"checkpoint: no file {checkpoint!r}")
    args_file = os.path.join(os.path.dirname(os.path.abspath(checkpoint)), "train_args.json")
    if not os.path.isfile(args_file):
        raise FileNotFoundError(f"checkpoint: {args_file!r} (written by steel-envs train) is missing")
    with open(args_file) as f:
        saved = json.load(f)
    if expected_env_id is not None and saved["env_id"] != expected_env_id:
        raise ValueError(f"policy: {checkpoint} was trained on {saved['env_id']}, not {expected_env_id}")
    # A run saved before train_args.json held its env overrides trained on the task's defaults.
    env_kwargs = {**saved.get("env", {}), **env_kwargs}
    from .factory import make_vec

    env = make_vec(saved["env_id"], num_envs=num_envs, device=device, **env_kwargs)
    with contextlib.redirect_stdout(io.StringIO()):
        # A run saved before a hyper-parameter existed trained with its default.
        ppo = PpoConfig.from_saved(saved["hyper_parameters"])
        runner = make_runner(RslRlVecEnv(env), runner_config(ppo), None, device)
        runner.load(checkpoint, load_cfg={"actor": True}, map_location=device)  # the policy and its normalizer
    model = runner.get_inference_policy(device)

    def policy(obs: torch.Tensor) -> torch.Tensor:
        from tensordict import TensorDict

        with torch.inference_mode():
            return model(TensorDict({"policy": obs}, batch_size=[obs.shape[0]]))

    return LoadedPolicy(saved["env_id"], policy, runner), env


def export_metadata(env_id: str, obs_dim: int, action_dim: int) -> dict[str, str]:
    """What an exported policy records of its task (``steel-envs export``), as strings."""
    return {"env_id": env_id, "obs_dim": str(obs_dim), "action_dim": str(action_dim)}


def _check_fits(path: str, env, trained_on: str | None, obs_dim: int | None, action_dim: int | None) -> None:
    """Refuse a policy trained on another ID than ``env``'s, or whose sizes are not ``env``'s (None: unknown).

    Raises:
        ValueError: One line naming the file, what it was made for and what the env is.
    """
    env_id = env.spec.id if env.spec is not None else None
    if trained_on is not None and env_id is not None and trained_on != env_id:
        raise ValueError(f"policy: {path} was trained on {trained_on}, not {env_id}")
    sizes = (int(env.single_observation_space.shape[-1]), int(env.action_dim))
    if (obs_dim is not None and obs_dim != sizes[0]) or (action_dim is not None and action_dim != sizes[1]):
        raise ValueError(
            f"policy: {path} maps {obs_dim} observations to {action_dim} actions; {env_id or 'the env'} has "
            f"{sizes[0]} and {sizes[1]}"
        )


def _contract(text: str, path: str) -> PolicyContract:
    """The contract an exported file carries; a malformed one is refused in one line naming the file."""
    try:
        return PolicyContract.from_json(text)
    except ValueError as e:
        raise ValueError(f"policy: {path}: {e}") from None


def _onnx_policy(path: str, env) -> Callable[[torch.Tensor], torch.Tensor]:
    """An exported ONNX policy, checked against ``env``: the task it records (``steel-envs export``) and its
    input and output sizes."""

    session = _onnx_session(path)
    recorded = {
        key.removeprefix("steel_envs."): value
        for key, value in session.get_modelmeta().custom_metadata_map.items()
        if key.startswith("steel_envs.")
    }
    inputs, outputs = session.get_inputs()[0], session.get_outputs()[0]

    def last(shape) -> int | None:  # a dynamic axis is a name
        return shape[-1] if shape and isinstance(shape[-1], int) else None

    _check_fits(path, env, recorded.get("env_id"), last(inputs.shape), last(outputs.shape))
    if "contract" in recorded:
        _contract(recorded["contract"], path).check_fits(env, path)
    name = inputs.name
    return lambda obs: torch.from_numpy(session.run(None, {name: obs.cpu().numpy()})[0]).to(obs.device)


def _torchscript_policy(path: str, env) -> Callable[[torch.Tensor], torch.Tensor]:
    """An exported TorchScript policy, checked against ``env``: the task it records (``steel-envs export``), or,
    in a file exported without the record, what one call on zero observations takes and gives."""
    extra = {EXPORT_METADATA: ""}
    module = torch.jit.load(path, map_location=env.torch_device, _extra_files=extra)
    if extra[EXPORT_METADATA]:
        recorded = _record(extra[EXPORT_METADATA], path)
        _check_fits(path, env, recorded["env_id"], int(recorded["obs_dim"]), int(recorded["action_dim"]))
        if "contract" in recorded:
            _contract(recorded["contract"], path).check_fits(env, path)
        return lambda obs: module(obs)
    obs_dim = int(env.single_observation_space.shape[-1])
    try:
        with torch.inference_mode():
            action_dim = int(module(torch.zeros(1, obs_dim, device=env.torch_device)).shape[-1])
    except RuntimeError:  # it takes another number of observations
        action_dim = None
    if action_dim != env.action_dim:
        env_id = env.spec.id if env.spec is not None else "the env"
        raise ValueError(
            f"policy: {path} does not map the {obs_dim} observations of {env_id} to {env.action_dim} actions"
        )
    return lambda obs: module(obs)


def _is_checkpoint(spec: str) -> bool:
    """A ``steel-envs train`` checkpoint: a file beside its run's ``train_args.json`` (an export there is
    ``policy.*``)."""
    folder = os.path.dirname(os.path.abspath(spec))
    return os.path.isfile(os.path.join(folder, "train_args.json")) and not os.path.basename(spec).startswith("policy")


def check_trained_on(spec: str, env_id: str) -> None:
    """Refuse, before anything is built, a policy file that records another task than ``env_id``: a checkpoint's
    run (``train_args.json``) or an exported file's record (``steel-envs export``). Other specs, and files without
    a record, pass (:func:`load_policy_callable` checks their sizes).

    Raises:
        ValueError: ``"policy: <path> was trained on <A>, not <B>"``.
    """
    if not os.path.isfile(spec):
        return
    if spec.endswith(".onnx"):
        metadata = _onnx_session(spec).get_modelmeta()
        trained_on = metadata.custom_metadata_map.get("steel_envs.env_id")
    elif _is_checkpoint(spec):
        with open(os.path.join(os.path.dirname(os.path.abspath(spec)), "train_args.json")) as f:
            trained_on = json.load(f).get("env_id")
    else:
        extra = {EXPORT_METADATA: ""}
        try:
            torch.jit.load(spec, map_location="cpu", _extra_files=extra)
        except RuntimeError:  # not TorchScript: load_policy_callable says what it expected
            return
        trained_on = _record(extra[EXPORT_METADATA], spec).get("env_id") if extra[EXPORT_METADATA] else None
    if trained_on is not None and trained_on != env_id:
        raise ValueError(f"policy: {spec} was trained on {trained_on}, not {env_id}")


def load_policy_callable(spec: str, env, seed: int) -> Callable[[torch.Tensor], torch.Tensor]:
    """A policy ``obs (N, obs_dim) float32 -> actions (N, act_dim)`` from a spec (see the module doc).

    Raises:
        ValueError: If the spec names no policy this function knows, or a checkpoint or exported file made for
            another task than ``env``'s, or for other observation or action sizes (one line, before any step).
    """
    shape = (env.num_envs, env.action_dim)
    if spec == "zero":
        return lambda obs: torch.zeros(shape, dtype=torch.float32, device=obs.device)
    if spec == "random":
        generator = torch.Generator(device=env.torch_device).manual_seed(seed)
        return lambda obs: torch.rand(shape, generator=generator, dtype=torch.float32, device=obs.device) * 2.0 - 1.0
    if spec == "reference" or spec.startswith("reference:"):
        env_id = env.spec.id if env.spec is not None else "?"
        suffix = spec.partition(":")[2]
        if suffix and not suffix.isdigit():
            raise ValueError(f"policy: expected 'reference' or 'reference:<seed>', got {spec!r}")
        spec = reference_checkpoint(env_id, int(suffix or 0))
    if spec.endswith(".onnx") and os.path.isfile(spec):
        return _onnx_policy(spec, env)
    if os.path.isfile(spec):
        if _is_checkpoint(spec):
            env_id = env.spec.id if env.spec is not None else None
            loaded, helper_env = load_policy(spec, device=str(env.torch_device), expected_env_id=env_id)
            sizes = (int(helper_env.single_observation_space.shape[-1]), int(helper_env.action_dim))
            seen, given = list(helper_env.observation_layout), list(env.observation_layout)
            helper_env.close()
            _check_fits(spec, env, None, *sizes)  # the same ID with other config fields (e.g. observations)
            if seen != given:
                raise ValueError(f"policy: {spec} observes {seen}, {env_id} gives {given} (another obs_variant?)")
            return loaded.policy
        return _torchscript_policy(spec, env)
    if ":" in spec:
        module_name, function = spec.split(":", 1)
        try:
            module = importlib.import_module(module_name)
        except ImportError as e:
            raise ValueError(f"policy: cannot import the module of {spec!r}: {e}") from None
        policy = getattr(module, function, None)
        if not callable(policy):
            raise ValueError(f"policy: module {module_name!r} has no function {function!r} (from {spec!r})")
        return policy
    raise ValueError(
        f"policy: expected a checkpoint, .onnx / TorchScript file, module:function, 'reference[:<seed>]', 'random' or "
        f"'zero', got {spec!r}"
    )
