"""The stages of the GPU check, one command each: ``python -m steel_envs.training.benchmarks.gpu_stages <stage> ...``.

``training/benchmarks/gpu_check.sh`` orders them under a time budget; each also runs alone, on the CPU too
(``--device cpu`` with small sizes). The stages that belong to a results folder (``--results DIR``) read and write
the files the script's folder holds:

==================  ==============================================================================================
``preflight``       versions, the GPU, CUDA seen by torch and Warp (:mod:`.gpu_preflight`): ``preflight.json``;
                    exit 2 on a problem
``tests-summary``   counts and times of the GPU tests from ``tests_junit.xml`` / ``tests.log``:
                    ``tests_summary.json``
``bench``           steel-envs bench item by item within the stage's limit (:mod:`.gpu_bench`): ``bench.json``,
                    ``bench.png``, ``bench_summary.txt`` / ``.json``; exit 3 when items were skipped
``train-summary``   a training stage's final line and TensorBoard curve: ``<name>_summary.json`` from
                    ``<name>.log`` and the run under ``<name>/``
``pixels``          env-steps/s and frames/s with ``obs_mode="rgb"`` beside state observations (:mod:`.gpu_pixels`):
                    ``pixels_summary.json``
``summary``         every stage's figures in ``summary.txt`` and ``summary.json``
``learn ID``        one seed of the task's PPO config for at most 240 s (:mod:`.gpu_learn`): env-steps/s and the
                    return curve in ``docs/gpu/<ID>.json`` (or ``--out``)
==================  ==============================================================================================

The stage's time limit [s] is ``--limit-s``, by default the ``STAGE_LIMIT_S`` the script exports to each stage.
"""

from __future__ import annotations

import argparse
import os
import sys

__all__ = ["main"]


def _ints(text: str) -> list[int]:
    try:
        return [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated ints, got {text!r}") from None


def _limit(default: float) -> float:
    return float(os.environ.get("STAGE_LIMIT_S", default))


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m steel_envs.training.benchmarks.gpu_stages",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    stages = p.add_subparsers(dest="stage", required=True, metavar="STAGE")
    results = argparse.ArgumentParser(add_help=False)
    results.add_argument("--results", required=True, help="the results folder")
    device = argparse.ArgumentParser(add_help=False)
    device.add_argument("--device", default="cuda:0", help="Warp and torch device: cuda:0, cpu")
    stages.add_parser("preflight", parents=[results, device], help="versions and the device; exit 2 on a problem")
    stages.add_parser("tests-summary", parents=[results], help="the GPU tests' counts and times")
    s = stages.add_parser("bench", parents=[results, device], help="steel-envs bench item by item")
    s.add_argument(
        "--ids",
        type=lambda t: t.split(","),
        default=None,
        help="comma-separated IDs, headline first (default: every SolverSteel ID)",
    )
    s.add_argument("--num-envs", type=_ints, required=True, help="comma-separated world counts, smallest first")
    s.add_argument("--steps", type=int, default=100, help="timed control steps per measurement")
    s.add_argument("--limit-s", type=float, default=_limit(600), help="the stage's time limit [s]")
    s = stages.add_parser("train-summary", parents=[results], help="a training stage's final line and curve")
    s.add_argument("--name", default="train", help="the stage: reads <name>.log and <name>/, writes <name>_summary")
    s.add_argument("--stage-rc", type=int, default=0, help="the training stage's exit status")
    s = stages.add_parser("pixels", parents=[results, device], help="throughput with rgb vs state observations")
    s.add_argument("--num-envs", type=int, default=1024, help="worlds")
    s.add_argument("--size", type=int, default=64, help="image side [px]")
    s.add_argument("--steps", type=int, default=50, help="timed control steps per measurement")
    s.add_argument("--ids", type=lambda t: t.split(","), default=None, help="comma-separated IDs (default: two)")
    s.add_argument("--limit-s", type=float, default=_limit(300), help="the stage's time limit [s]")
    s = stages.add_parser("summary", parents=[results], help="summary.txt and summary.json of every stage")
    s.add_argument("--device", default="cuda:0", help="the device the check ran on")
    s.add_argument("--budget", type=float, required=True, help="the check's budget [s]")
    s.add_argument("--total", type=float, required=True, help="seconds the check took [s]")
    s = stages.add_parser("learn", parents=[device], help="one seed for at most 240 s: docs/gpu/<ID>.json")
    s.add_argument("env_id", metavar="ID", help="a registered ID (steel_envs/ may be left out)")
    s.add_argument("--seconds", type=float, default=None, help="training budget [s] (default 240)")
    s.add_argument("--out", default=None, help="JSON file (default docs/gpu/<ID without namespace>.json)")
    s.add_argument("--num-envs", type=int, default=None, help="worlds (default: the task's PPO config)")
    s.add_argument("--max-iterations", type=int, default=None, help="also stop after this many PPO iterations")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--log-dir", default="runs", help="folder of the run's logs and checkpoints")
    return p


def _run(a: argparse.Namespace) -> int:
    """Run stage ``a.stage``; return its exit status."""

    def at(name: str) -> str:
        return os.path.join(a.results, name)

    if a.stage == "preflight":
        from .gpu_preflight import preflight

        return preflight(a.device, at("preflight.json"))
    if a.stage == "tests-summary":
        from .gpu_reports import tests_summary

        tests_summary(at("tests_junit.xml"), at("tests.log"), at("tests_summary.json"))
        return 0
    if a.stage == "train-summary":
        from .gpu_reports import train_summary

        train_summary(at(f"{a.name}.log"), at(a.name), at(f"{a.name}_summary.json"), a.stage_rc)
        return 0
    if a.stage == "summary":
        from .gpu_reports import summary

        summary(a.results, a.device, a.budget, a.total)
        return 0
    import warp as wp

    wp.config.log_level = wp.LOG_WARNING
    if a.stage == "bench":
        from .gpu_bench import BENCH_IDS, bench_stage

        return bench_stage(a.device, at("bench"), a.ids or BENCH_IDS, a.num_envs, a.steps, a.limit_s)
    if a.stage == "pixels":
        from .gpu_pixels import PIXEL_IDS, pixels_stage

        out = at("pixels_summary.json")
        return pixels_stage(a.device, out, a.num_envs, a.size, a.steps, a.limit_s, a.ids or PIXEL_IDS)
    from .gpu_learn import MAX_SECONDS, learn

    learn(
        a.env_id,
        device=a.device,
        seconds=MAX_SECONDS if a.seconds is None else a.seconds,
        out=a.out,
        num_envs=a.num_envs,
        max_iterations=a.max_iterations,
        seed=a.seed,
        log_dir=a.log_dir,
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse the stage's arguments and run it; return its exit status (see each stage), 2 on an unknown ID or a
    value out of range (one line on stderr)."""
    import gymnasium as gym

    try:
        return _run(_parser().parse_args(argv))
    except (gym.error.Error, ValueError) as e:
        print(f"gpu_stages: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
