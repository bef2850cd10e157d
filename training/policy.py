"""``steel-envs play`` and ``steel-envs export``: run a policy (a ``steel-envs train`` checkpoint or any spec of
:mod:`steel_envs.policies`), export a checkpoint.

A checkpoint is rsl_rl's ``model_*.pt`` inside a run folder that also holds ``train_args.json`` (written by
``steel-envs train``), from which the env ID and the model sizes are read back
(:func:`steel_envs.policies.load_policy`).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import warnings

import torch

from steel_envs.cli_common import check_input_file, check_output_file, check_policy_spec, stopped_by_ctrl_c
from steel_envs.deployment import EXPORT_METADATA, contract_of
from steel_envs.policies import export_metadata, load_policy, load_policy_callable
from steel_envs.runtime import verbose as runtime_verbose

__all__ = ["export", "main_export", "main_play", "play"]


def play(
    checkpoint: str | None = None,
    *,
    policy: str | None = None,
    env_id: str | None = None,
    episodes: int = 10,
    num_envs: int = 8,
    device: str = "cpu",
    seed: int = 0,
    video: str | None = None,
    viewer: int | None = None,
) -> dict:
    """Run the deterministic policy of ``checkpoint``, or the policy ``policy`` on ``env_id``, until ``episodes``
    episodes ended; return their statistics (``env_id``; ``returns``, ``lengths`` lists; ``mean_return``,
    ``mean_length``). With ``video`` (.mp4 or .gif), world 0 is rendered every step and written there. With
    ``viewer`` (a port), the worlds are shown live in a web browser instead (:func:`steel_envs.viewer.view`).

    ``policy`` is any spec of ``steel-envs evaluate`` (:func:`steel_envs.policies.load_policy_callable`),
    e.g. ``module:function`` (observations (N, obs_dim) float32 -> actions (N, act_dim)).

    Raises:
        ValueError: Unless exactly one of ``checkpoint`` and ``policy`` is given, if ``policy`` comes without
            ``env_id``, or with both ``video`` and ``viewer``.
    """
    if (checkpoint is None) == (policy is None):
        raise ValueError("play: give either a checkpoint or a policy")
    if viewer is not None:
        from steel_envs.viewer import view

        if video:
            raise ValueError("play: video and viewer exclude each other")
        env_id = None if checkpoint else env_id  # a checkpoint's run names its env
        return view(
            env_id, checkpoint or policy, num_envs=num_envs, port=viewer, device=device, seed=seed, episodes=episodes
        )
    render = {"render_mode": "rgb_array"} if video else {}
    if checkpoint is not None:
        loaded, env = load_policy(checkpoint, device=device, num_envs=num_envs, seed=seed, **render)
        env_id, act = loaded.env_id, loaded.policy
    else:
        if env_id is None:
            raise ValueError("play: a policy needs an env_id")
        import steel_envs

        env = steel_envs.make_vec(env_id, num_envs=num_envs, device=device, seed=seed, **render)
        act = load_policy_callable(policy, env, seed)
    obs, _ = env.reset(seed=seed)
    frames = [env.render()] if video else []
    returns: list[float] = []
    lengths: list[int] = []
    while len(returns) < episodes:
        with torch.no_grad():
            actions = act(obs)
        obs, _, _, _, info = env.step(actions.float())
        if video:
            frames.append(env.render())
        ended = info["_episode"]
        if bool(ended.any()):
            returns += info["episode"]["r"][ended].tolist()
            lengths += info["episode"]["l"][ended].tolist()
    if video:
        from steel_envs.rendering import write_video

        write_video(frames, video, fps=1.0 / env.control_dt)
    env.close()
    returns, lengths = returns[:episodes], lengths[:episodes]
    return {
        "env_id": env_id,
        "returns": returns,
        "lengths": lengths,
        "mean_return": sum(returns) / len(returns),
        "mean_length": sum(lengths) / len(lengths),
    }


def export(
    checkpoint: str,
    *,
    format: str = "onnx",
    out: str | None = None,
    clip_actions: bool = False,
    verbose: bool | None = None,
) -> str:
    """Export the deterministic policy of ``checkpoint`` as ONNX (input ``obs`` (batch, obs_dim), output
    ``actions`` (batch, act_dim), any batch size) or TorchScript; return the written path (default: next to
    the checkpoint, ``policy.onnx`` / ``policy.pt``). Observation normalization is part of the exported model.
    The ONNX file is self-contained (weights inside, no ``.onnx.data`` beside it): copy that one file.

    The file carries its deployment contract (:class:`steel_envs.deployment.PolicyContract`: task, control dt,
    joints, gains, action scale and offset, observation blocks, commands; the ONNX model's ``metadata_props``, or
    TorchScript's extra file :data:`~steel_envs.deployment.EXPORT_METADATA`), read by
    :func:`steel_envs.deployment.read_contract` and checked by every command that plays the file. The network's
    output is unclipped unless ``clip_actions`` (the env clips actions to its action space before applying them;
    the contract says which). The exporters' own messages show only with ``verbose`` (None: ``steel-envs
    --verbose``).

    Raises:
        ValueError: On a format other than ``onnx`` or ``torchscript``.
    """
    if format not in ("onnx", "torchscript"):
        raise ValueError(f"format: expected 'onnx' or 'torchscript', got {format!r}")
    loaded, env = load_policy(checkpoint)
    policy = loaded.runner.alg.get_policy()
    contract = contract_of(
        env, action_clipped=clip_actions, normalizer=bool(getattr(policy, "obs_normalization", False))
    )
    low = torch.as_tensor(env.single_action_space.low, dtype=torch.float32)
    high = torch.as_tensor(env.single_action_space.high, dtype=torch.float32)
    env.close()
    if out is None:
        out = os.path.join(
            os.path.dirname(os.path.abspath(checkpoint)), "policy.onnx" if format == "onnx" else "policy.pt"
        )
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with _quiet_exporters(verbose):
        if format == "torchscript":
            # rsl_rl's export_policy_to_jit, with the contract as an extra file.
            module = policy.as_jit().to("cpu")
            module = torch.jit.script(_ClippedActions(module, low, high) if clip_actions else module)
            recorded = export_metadata(contract.env_id, contract.obs_dim, contract.action_dim)
            module.save(out, _extra_files={EXPORT_METADATA: json.dumps({**recorded, "contract": contract.to_json()})})
            return out
        # rsl_rl's own ONNX export fixes the batch size to 1; the same module, exported with a dynamic batch.
        inner = policy.as_onnx(verbose=False).to("cpu").eval()
        module = _ClippedActions(inner, low, high).eval() if clip_actions else inner
        torch.onnx.export(
            module,
            inner.get_dummy_inputs(),
            out,
            input_names=inner.input_names,
            output_names=inner.output_names,
            dynamic_shapes={"x": {0: torch.export.Dim("batch")}},
            opset_version=18,
            external_data=False,  # one file: a small MLP's weights fit in the protobuf
        )
    import onnx  # the exporter's own dependency

    model = onnx.load(out)
    for key, value in contract.metadata().items():
        model.metadata_props.add(key=key, value=value)
    onnx.save(model, out)
    return out


class _ClippedActions(torch.nn.Module):
    """A policy module whose actions are clipped to the action box inside the exported graph."""

    def __init__(self, inner: torch.nn.Module, low: torch.Tensor, high: torch.Tensor):
        super().__init__()
        self.inner = inner
        self.register_buffer("low", low)
        self.register_buffer("high", high)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.minimum(torch.maximum(self.inner(x), self.low), self.high)


@contextlib.contextmanager
def _quiet_exporters(verbose: bool | None):
    """Unless ``verbose`` (None: the command line's ``--verbose``, :func:`steel_envs.runtime.verbose`), keep the
    exporters' progress lines, the deprecation notices of the libraries they import and torch.onnx's log lines
    (e.g. "torchvision is not installed") out of the output: they are not the user's to act on."""
    if verbose is None:
        verbose = runtime_verbose()
    if verbose:
        yield
        return
    onnx_log = logging.getLogger("torch.onnx")
    level = onnx_log.level
    onnx_log.setLevel(logging.ERROR)
    try:
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            warnings.simplefilter("ignore", FutureWarning)
            yield
    finally:
        onnx_log.setLevel(level)


def main_play(argv: list[str] | None = None) -> int:
    """``steel-envs play (--checkpoint PATH | --policy SPEC --env ID) [--episodes K] [--num-envs N] [--device D]
    [--video FILE | --viewer [PORT]]``."""
    p = argparse.ArgumentParser(prog="steel-envs play", description=main_play.__doc__)
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--checkpoint", help="model_*.pt of a steel-envs train run")
    source.add_argument(
        "--policy",
        help="reference[:<seed>] (the shipped reference policy), module:function (obs -> actions), .onnx / "
        "TorchScript file, random or zero; needs --env",
    )
    p.add_argument("--env", default=None, help="environment ID of --policy, e.g. steel_envs/CartpoleSwingup-v0")
    p.add_argument("--episodes", type=int, default=10)
    p.add_argument("--num-envs", type=int, default=8)
    p.add_argument("--device", default="cpu")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--video", default=None, help="write world 0 as a video, .mp4 or .gif")
    p.add_argument(
        "--viewer",
        nargs="?",
        type=int,
        const=8080,
        default=None,
        metavar="PORT",
        help="show the worlds live in a web browser (port 8080 unless given; extra view)",
    )
    a = p.parse_args(argv)
    if a.policy is not None and a.env is None:
        p.error("--policy needs --env")
    # Before any env is built: a typo in a path costs no build.
    if a.checkpoint is not None:
        check_input_file(a.checkpoint, "--checkpoint")
    else:
        check_policy_spec(a.policy, "--policy")
    if a.video is not None:
        check_output_file(a.video, "--video", (".mp4", ".gif"))
    try:
        r = play(
            a.checkpoint,
            policy=a.policy,
            env_id=a.env,
            episodes=a.episodes,
            num_envs=a.num_envs,
            device=a.device,
            seed=a.seed,
            video=a.video,
            viewer=a.viewer,
        )
    except (ValueError, ImportError) as e:  # --viewer: viser missing, a bad port: one line
        if a.viewer is None:
            raise
        p.exit(2, f"steel-envs play: {e}\n")
    print(
        f"{r['env_id']}: {len(r['returns'])} episodes, mean return {r['mean_return']:.2f}, "
        f"mean length {r['mean_length']:.1f}"
    )
    print("returns: " + ", ".join(f"{x:.1f}" for x in r["returns"]))
    if a.video:
        print(f"video: {a.video}")
    return stopped_by_ctrl_c("play") if r.get("interrupted") else 0  # Ctrl-C in --viewer


def main_export(argv: list[str] | None = None) -> int:
    """``steel-envs export --checkpoint PATH --format onnx|torchscript [--out FILE] [--clip-actions]``: the
    deterministic policy with its deployment contract (task, joints, gains, action scale and offset, observation
    blocks, commands; see the deployment guide)."""
    p = argparse.ArgumentParser(prog="steel-envs export", description=main_export.__doc__)
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--format", choices=("onnx", "torchscript"), default="onnx")
    p.add_argument("--out", default=None)
    p.add_argument(
        "--clip-actions",
        action="store_true",
        help="clip the actions to the action space inside the network (default: unclipped, as trained; the env "
        "clips them before applying them)",
    )
    a = p.parse_args(argv)
    check_input_file(a.checkpoint, "--checkpoint")
    if a.out is not None:
        check_output_file(a.out, "--out")
    print(export(a.checkpoint, format=a.format, out=a.out, clip_actions=a.clip_actions))
    return 0
