"""The ``steel-envs`` command line: ``steel-envs rollout <Id> --num-envs N --steps K --device cpu``."""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Sequence

from steel_envs.cli_common import check_output_file, check_policy_spec, stopped_by_ctrl_c
from steel_envs.runtime import init_warp
from steel_envs.sharding import WORKER_TIMEOUT_ARG, ShardError, shards_arg

__all__ = ["RolloutInterrupted", "main", "record", "rollout"]


def rollout(
    env_id: str,
    *,
    num_envs: int = 64,
    steps: int = 500,
    device: str | None = None,
    policy: str = "random",
    seed: int = 0,
    progress: bool = True,
    num_shards: int | str = 1,
    worker_timeout: float = 600.0,
) -> dict[str, float]:
    """Run a random or zero policy on every world and measure throughput and episode statistics.

    Args:
        env_id: A registered ID, e.g. ``"steel_envs/AntRun-v0"``.
        num_envs: Number of worlds.
        steps: Control steps per world.
        device: Warp device; None: Warp's preferred device.
        policy: ``"random"`` (uniform in the action space, seeded) or ``"zero"``.
        seed: Seed of the env and of the random policy.
        progress: Show a tqdm progress bar with the live mean return.
        num_shards: CPU processes the worlds are split over (:class:`steel_envs.ShardedVectorEnv`), or ``"auto"``
            (:func:`steel_envs.sharding.resolve_shards`).
        worker_timeout: With shards, the longest wait for a worker's answer [s] (:class:`steel_envs.ShardedVectorEnv`).

    Returns:
        ``env_steps_per_s`` (world-steps per second, the first step excluded as warm-up),
        ``physics_steps_per_s`` (times ``decimation``), ``episodes``, ``mean_return``, ``mean_length``,
        ``overflow_episodes``, ``nonfinite_episodes``, ``seconds``, ``steps`` (control steps done).

    Raises:
        ValueError: On an unknown policy or a non-positive step count.
        RolloutInterrupted: On Ctrl-C while stepping (a KeyboardInterrupt), with the figures of the steps done.
    """
    from steel_envs.arguments import throughput_kwargs
    from steel_envs.factory import make_vec

    if policy not in ("random", "zero"):
        raise ValueError(f"policy: expected 'random' or 'zero', got {policy!r}")
    if steps < 2:
        raise ValueError(f"steps: expected an int >= 2, got {steps}")

    env = make_vec(
        env_id,
        num_envs=num_envs,
        device=device,
        seed=seed,
        num_shards=num_shards,
        worker_timeout=worker_timeout,
        **throughput_kwargs(device),
    )
    try:  # closed on Ctrl-C too, so that shard workers end with the command
        env.reset(seed=seed)
        totals, seconds, done = _step_and_sum(env, env_id, steps, policy, seed, progress)
    finally:
        env.close()
    count, total_return, total_length, overflow, nonfinite = totals.tolist()
    env_steps = env.num_envs * (done - 1) / seconds if done > 1 and seconds > 0 else float("nan")
    figures = {
        "env_steps_per_s": env_steps,
        "physics_steps_per_s": env_steps * env.decimation,
        "episodes": count,
        "mean_return": total_return / count if count else float("nan"),
        "mean_length": total_length / count if count else float("nan"),
        "overflow_episodes": overflow,
        "nonfinite_episodes": nonfinite,
        "seconds": seconds,
        "steps": done,
    }
    if done < steps:
        raise RolloutInterrupted(figures)
    return figures


class RolloutInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`rollout`'s steps; ``figures`` holds what :func:`rollout` returns, over the steps done
    (``figures["steps"]``), the env closed."""

    def __init__(self, figures: dict[str, float]) -> None:
        super().__init__(f"stopped after {figures['steps']} steps")
        self.figures = figures


def _step_and_sum(env, env_id: str, steps: int, policy: str, seed: int, progress: bool):
    """Step ``env`` up to ``steps`` times with ``policy``; return the sums over ended episodes (count, return, length,
    overflow, non-finite state; a (5,) float64 tensor), the seconds of every step after the first and the steps
    done: ``steps``, or fewer when Ctrl-C came (the sums then cover the steps done)."""
    import torch
    from tqdm import tqdm

    generator = torch.Generator(device=env.torch_device).manual_seed(seed)
    shape = (env.num_envs, env.action_dim)
    zeros = torch.zeros(shape, dtype=torch.float32, device=env.torch_device)
    # Kept on the device (no host read per step); the progress bar reads them every 50 steps.
    totals = torch.zeros(5, dtype=torch.float64, device=env.torch_device)
    bar = tqdm(
        range(steps),
        desc=env_id,
        unit="step",
        disable=not progress,
        dynamic_ncols=True,
        mininterval=0.5,
    )
    start = time.perf_counter()
    done = 0
    try:
        for step in bar:
            if step == 1:
                if env.torch_device.type == "cuda":
                    torch.cuda.synchronize(env.torch_device)
                start = time.perf_counter()
            if policy == "random":
                actions = (
                    torch.rand(shape, generator=generator, dtype=torch.float32, device=env.torch_device) * 2.0 - 1.0
                )
            else:
                actions = zeros
            _, _, _, _, info = env.step(actions)
            ended, episode = info["_episode"], info["episode"]
            columns = (ended, episode["r"], episode["l"], episode["constraint_overflow"], info["nonfinite_state"])
            totals += torch.stack([torch.where(ended, c.double(), 0.0).sum() for c in columns])
            done = step + 1  # counted once its sums are in
            if progress and step % 50 == 49:
                count, total = totals[:2].tolist()
                bar.set_postfix(episodes=int(count), mean_return=f"{total / max(count, 1):.2f}", refresh=False)
    except KeyboardInterrupt:
        pass  # the figures so far are the caller's
    finally:
        bar.close()
    if env.torch_device.type == "cuda":
        torch.cuda.synchronize(env.torch_device)
    return totals, time.perf_counter() - start, done


def record(
    env_id: str,
    *,
    steps: int = 200,
    policy: str = "random",
    num_worlds: int = 1,
    size: tuple[int, int] = (320, 240),
    device: str | None = None,
    seed: int = 0,
) -> tuple[list, float]:
    """Step a policy and render every control step; return the (H, W, 3) uint8 frames and the frame rate [1/s] (one
    frame per control step).

    ``policy`` is any spec of ``steel-envs evaluate`` (:func:`steel_envs.policies.load_policy_callable`):
    ``"random"`` (uniform, seeded), ``"zero"``, ``module:function`` (observations (N, obs_dim) float32 -> actions
    (N, act_dim)), a ``steel-envs train`` checkpoint or an exported ``.onnx`` / TorchScript file.

    Raises:
        ValueError: On an unknown policy, a non-positive step count or bad render arguments.
    """
    import torch

    from steel_envs.factory import make_vec

    if steps < 1:
        raise ValueError(f"steps: expected an int >= 1, got {steps}")
    env = make_vec(
        env_id,
        num_envs=num_worlds,
        device=device,
        seed=seed,
        render_mode="rgb_array",
        render_size=size,
        render_num_worlds=num_worlds,
    )
    try:
        from steel_envs.policies import load_policy_callable

        try:
            act = load_policy_callable(policy, env, seed)
        except AttributeError as e:  # module:function naming a missing function
            raise ValueError(f"policy: {e}") from e
        obs, _ = env.reset(seed=seed)
        frames = [env.render()]
        for _ in range(steps):
            with torch.no_grad():
                actions = act(obs)
            obs, *_ = env.step(torch.as_tensor(actions, device=env.torch_device).float())
            frames.append(env.render())
    finally:
        env.close()
    return frames, 1.0 / env.control_dt


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="steel-envs", description=__doc__)
    parser.add_argument("--verbose", action="store_true", help="show Warp's start-up and kernel-compile messages")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("rollout", help="run a random or zero policy and print throughput and episode statistics")
    p.add_argument("env_id", help="environment ID, e.g. steel_envs/AntRun-v0")
    p.add_argument("--num-envs", type=int, default=64, help="number of worlds (default 64)")
    p.add_argument("--steps", type=int, default=500, help="control steps per world (default 500)")
    p.add_argument("--device", default=None, help="Warp device: cpu, cuda:0 (default: Warp's preferred)")
    p.add_argument("--policy", choices=("random", "zero"), default="random", help="action policy (default random)")
    p.add_argument("--seed", type=int, default=0, help="seed of the env and the policy (default 0)")
    p.add_argument(
        "--shards",
        type=shards_arg,
        default="auto",
        help="CPU processes to split the worlds over, or 'auto': one per core with enough worlds each (default auto)",
    )
    p.add_argument("--worker-timeout", **WORKER_TIMEOUT_ARG)
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    r = sub.add_parser("record", help="record a video of a policy (rgb_array rendering)")
    r.add_argument("env_id", help="environment ID, e.g. steel_envs/AntRun-v0")
    r.add_argument("--steps", type=int, default=200, help="control steps to record (default 200)")
    r.add_argument("--out", default="clip.mp4", help="output file, .mp4 or .gif (default clip.mp4)")
    r.add_argument(
        "--policy",
        default="random",
        help="random, zero, reference[:<seed>] (the shipped reference policy), module:function (obs -> actions), a "
        "train checkpoint or an .onnx / TorchScript file (as steel-envs evaluate; default random)",
    )
    r.add_argument("--worlds", type=int, default=1, help="worlds tiled into the video (default 1)")
    r.add_argument("--size", default="320x240", help="frame size per world, WxH (default 320x240)")
    r.add_argument("--device", default=None, help="Warp device (default: Warp's preferred)")
    r.add_argument("--seed", type=int, default=0)
    w = sub.add_parser("view", help="watch a policy run in a web browser (Newton's ViewerViser; extra view)")
    w.add_argument("env_id", help="environment ID, e.g. steel_envs/AntRun-v0")
    w.add_argument(
        "--policy",
        default="random",
        help="random, zero, reference[:<seed>] (the shipped reference policy), module:function (obs -> actions), a "
        "train checkpoint or an .onnx / TorchScript file (as steel-envs evaluate; default random)",
    )
    w.add_argument("--num-envs", type=int, default=4, help="number of worlds, laid out on a grid (default 4)")
    w.add_argument("--port", type=int, default=8080, help="web server port; the next free one if taken (default 8080)")
    w.add_argument(
        "--host", default="127.0.0.1", help="address to serve on (default 127.0.0.1; 0.0.0.0: every interface)"
    )
    w.add_argument("--device", default=None, help="Warp device (default: Warp's preferred)")
    w.add_argument("--seed", type=int, default=0, help="seed of the env and the policy (default 0)")
    w.add_argument(
        "--speed", type=float, default=1.0, help="simulated time per wall-clock time; inf: unthrottled (default 1)"
    )
    w.add_argument("--paused", action="store_true", help="start paused (Pause / Step in the browser)")
    w.add_argument("--steps", type=int, default=None, help="stop after this many control steps (default: Ctrl-C)")
    sub.add_parser("list", help="list the registered environment IDs")
    d = sub.add_parser("doctor", help="physics health report: capacities, overflow, limits, penetration, energy")
    d.add_argument("env_id", help="environment ID, e.g. steel_envs/AntRun-v0")
    d.add_argument("--num-envs", type=int, default=4, help="number of worlds (default 4)")
    d.add_argument("--steps", type=int, default=50, help="control steps per action family (default 50)")
    d.add_argument("--device", default=None, help="Warp device (default: Warp's preferred)")
    d.add_argument("--seed", type=int, default=0, help="seed of the resets and actions (default 0)")
    d.add_argument("--solver-options", default=None, help="solver keywords as JSON, e.g. '{\"iterations\": 16}'")
    d.add_argument("--collision-options", default=None, help="collision pipeline keywords as JSON")
    d.add_argument(
        "--env-kwargs",
        default=None,
        metavar="JSON",
        help="env keywords and task config fields as a JSON object, e.g. '{\"clutter\": 4}'",
    )
    d.add_argument("--json", default=None, metavar="FILE", help="also write the report as JSON to FILE")
    sub.add_parser(
        "train", help="train PPO (rsl-rl-lib) on an environment; see steel-envs train --help", add_help=False
    )
    sub.add_parser("play", help="run a trained checkpoint and print episode statistics", add_help=False)
    sub.add_parser("export", help="export a trained checkpoint as ONNX or TorchScript", add_help=False)
    sub.add_parser("sim2sim", help="a Go1/G1 policy in SolverSteel and in MuJoCo side by side", add_help=False)
    sub.add_parser("bench", help="throughput side by side with peers (learning: steel-envs compare)", add_help=False)
    sub.add_parser("compare", help="compare learning algorithms over a suite (speed: steel-envs bench)", add_help=False)
    sub.add_parser("evaluate", help="compare policies on one ID with confidence intervals", add_help=False)
    return parser


# Subcommands of the training extra (pip install -e ".[train]"); they parse their own arguments.
_TRAINING_COMMANDS = {
    "train": ("steel_envs.training.train", "main"),
    "play": ("steel_envs.training.policy", "main_play"),
    "export": ("steel_envs.training.policy", "main_export"),
    "sim2sim": ("steel_envs.training.sim2sim", "main"),
    "bench": ("steel_envs.training.benchmarks.bench", "main"),
    "evaluate": ("steel_envs.training.evaluate", "main"),
    "compare": ("steel_envs.training.compare", "main"),
}


def _run_training_command(argv: list[str], verbose: bool) -> int:
    """A command of the training extra, which parses its own arguments; its errors are one line."""
    import importlib

    module, function = _TRAINING_COMMANDS[argv[0]]
    try:
        entry = getattr(importlib.import_module(module), function)
    except ImportError as e:
        print(f"steel-envs {argv[0]}: needs the training extra (pip install -e '.[train]'): {e}", file=sys.stderr)
        return 2
    import gymnasium as gym

    if not any(a in ("-h", "--help") for a in argv):
        init_warp(verbose)
    try:
        return entry(argv[1:])
    except (gym.error.Error, FileNotFoundError, ValueError) as e:  # an unknown ID, a missing checkpoint, a bad value
        print(f"steel-envs {argv[0]}: {e}", file=sys.stderr)
        return 2


def _run_view(args: argparse.Namespace) -> int:
    import gymnasium as gym

    from .viewer import view

    try:
        check_policy_spec(args.policy, "--policy")
        r = view(
            args.env_id,
            args.policy,
            num_envs=args.num_envs,
            host=args.host,
            port=args.port,
            device=args.device,
            seed=args.seed,
            speed=args.speed,
            paused=args.paused,
            steps=args.steps,
        )
    except (ValueError, ImportError, FileNotFoundError, gym.error.Error) as e:
        print(f"steel-envs view: {e}", file=sys.stderr)
        return 2
    print(f"{r['env_id']}: {r['steps']} steps, {len(r['returns'])} episodes ended, mean return {r['mean_return']:.2f}")
    return stopped_by_ctrl_c("view") if r["interrupted"] else 0


def _run_record(args: argparse.Namespace) -> int:
    try:
        width, height = (int(v) for v in args.size.lower().split("x"))
        check_policy_spec(args.policy, "--policy")
        check_output_file(args.out, "--out", (".mp4", ".gif"))
        frames, fps = record(
            args.env_id,
            steps=args.steps,
            policy=args.policy,
            num_worlds=args.worlds,
            size=(width, height),
            device=args.device,
            seed=args.seed,
        )
        from .rendering import write_video

        write_video(frames, args.out, fps=fps)
    except (ValueError, ImportError, FileNotFoundError) as e:
        print(f"steel-envs record: {e}", file=sys.stderr)
        return 2
    print(f"{args.out}: {len(frames)} frames of {frames[0].shape[1]}x{frames[0].shape[0]}")
    return 0


def _run_rollout(args: argparse.Namespace) -> int:
    import gymnasium as gym

    from steel_envs.registration import task_class

    try:
        task_class(args.env_id)
    except gym.error.UnregisteredEnv as e:  # names the closest IDs
        print(f"steel-envs rollout: {e} (steel-envs list shows them all)", file=sys.stderr)
        return 2
    if args.num_envs < 1:
        print(f"steel-envs rollout: --num-envs: expected an int >= 1, got {args.num_envs}", file=sys.stderr)
        return 2
    print(f"building {args.num_envs} worlds of {args.env_id} (the first run compiles Warp kernels, about a minute)")
    interrupted = False
    try:
        from steel_envs.sharding import resolve_shards

        args.shards, reason = resolve_shards(args.env_id, args.num_envs, args.shards, device=args.device)
        print(f"shards: {reason}")
        r = rollout(
            args.env_id,
            num_envs=args.num_envs,
            steps=args.steps,
            device=args.device,
            policy=args.policy,
            seed=args.seed,
            progress=not args.no_progress,
            num_shards=args.shards,
            worker_timeout=args.worker_timeout,
        )
    except ValueError as e:
        print(f"steel-envs: {e}", file=sys.stderr)
        return 2
    except RolloutInterrupted as stop:  # the figures of the steps done, then the Ctrl-C line
        r, interrupted = stop.figures, True
    _print_rollout(args, r)
    return stopped_by_ctrl_c("rollout", when=f"after {r['steps']} of {args.steps} steps") if interrupted else 0


def _print_rollout(args: argparse.Namespace, r: dict[str, float]) -> None:
    shards = f" in {args.shards} processes" if args.shards > 1 else ""
    head = f"{args.env_id}: {args.num_envs} worlds{shards} x {r['steps']} steps, {args.policy} policy"
    print(f"{head}, {r['seconds']:.2f} s")
    print(f"  env-steps/s      {r['env_steps_per_s']:.0f}")
    print(f"  physics-steps/s  {r['physics_steps_per_s']:.0f}")
    print(f"  episodes ended   {r['episodes']:.0f}")
    if r["episodes"]:
        print(f"  mean return      {r['mean_return']:.3f}")
        print(f"  mean length      {r['mean_length']:.1f}")
    print(f"  ended by constraint overflow  {r['overflow_episodes']:.0f}")
    print(f"  ended by non-finite state     {r['nonfinite_episodes']:.0f}")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``steel-envs`` console script. ``--help``, a command's ``--help`` and ``list`` answer
    without loading Newton, Warp or torch. Ctrl-C in any command ends it with one line on stderr (what was saved,
    where) and exit status 130, without a traceback (shard workers ignore SIGINT; their env is closed on the way
    out)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in argv if not a.startswith("-")), "command")
    try:
        return _dispatch(argv)
    except KeyboardInterrupt:
        return stopped_by_ctrl_c(command)
    except ShardError as e:  # a worker process died or hung: what the error names is the whole story
        print(f"steel-envs {command}: {e}", file=sys.stderr)
        return 1


def _dispatch(argv: list[str]) -> int:
    verbose = "--verbose" in argv
    argv = [a for a in argv if a != "--verbose"]  # taken before or after the command, by every command
    if argv and argv[0] in _TRAINING_COMMANDS:
        return _run_training_command(argv, verbose)
    args = _parser().parse_args(argv)
    if args.command == "list":  # the registry only: no task module loads
        from .registration import ENV_IDS

        print("\n".join(ENV_IDS))
        return 0
    init_warp(verbose)
    if args.command == "doctor":
        from .doctor.command import run_cli

        return run_cli(args)
    return {"view": _run_view, "record": _run_record, "rollout": _run_rollout}[args.command](args)


def console_main() -> int:
    """The ``steel-envs`` console script (and ``python -m steel_envs.cli``): :func:`main`, then an exit without the
    interpreter's final garbage collections, which walk every object the imports made (Warp's parsed kernels, torch)
    and took 1.5-3 s after the last line of every command. What must outlive the process is closed or flushed before
    :func:`main` returns; ``atexit`` handlers still run."""
    try:
        return main()
    finally:
        gc.freeze()


if __name__ == "__main__":
    raise SystemExit(console_main())
