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

__all__ = [
    "REFERENCE_DIR",
    "LoadedPolicy",
    "load_policy",
    "load_policy_callable",
    "reference_checkpoint",
    "save_policy_only",
]

REFERENCE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference")
"""Where the shipped reference checkpoints live: ``<REFERENCE_DIR>/<Name>/seed<k>/model_final.pt``."""


def reference_checkpoint(env_id: str, seed: int = 0) -> str:
    """The shipped reference checkpoint of ``env_id`` trained with ``seed`` (``--policy reference``).

    Raises:
        FileNotFoundError: If no reference checkpoint of that ID and seed ships with the package.
    """
    path = os.path.join(REFERENCE_DIR, env_id.split("/")[-1], f"seed{seed}", "model_final.pt")
    if not os.path.isfile(path):
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


def load_policy(checkpoint: str, *, device: str = "cpu", num_envs: int = 1, **env_kwargs) -> tuple:
    """Load ``checkpoint`` with the hyper-parameters of its run; return (LoadedPolicy, vector env).

    The env is made with the task config and solver options the run trained with (``steel-envs train --env.*``,
    saved in ``train_args.json``); ``env_kwargs`` override them.

    Raises:
        FileNotFoundError: If the checkpoint or the run's ``train_args.json`` is missing.
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


def load_policy_callable(spec: str, env, seed: int) -> Callable[[torch.Tensor], torch.Tensor]:
    """A policy ``obs (N, obs_dim) float32 -> actions (N, act_dim)`` from a spec (see the module doc).

    Raises:
        ValueError: If the spec names no policy this function knows.
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
        import onnxruntime

        session = onnxruntime.InferenceSession(spec, providers=["CPUExecutionProvider"])
        name = session.get_inputs()[0].name
        return lambda obs: torch.from_numpy(session.run(None, {name: obs.cpu().numpy()})[0]).to(obs.device)
    if os.path.isfile(spec):
        if os.path.isfile(os.path.join(os.path.dirname(os.path.abspath(spec)), "train_args.json")) and not (
            os.path.basename(spec).startswith("policy")
        ):
            loaded, helper_env = load_policy(spec, device=str(env.torch_device))
            helper_env.close()
            return loaded.policy
        module = torch.jit.load(spec, map_location=env.torch_device)
        return lambda obs: module(obs)
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
