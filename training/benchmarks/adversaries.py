"""Scripted adversaries: does a task's reward pay a motion that is not the task?

``python -m steel_envs.training.benchmarks.adversaries [ID ...] [--worlds 8] [--out FILE.json]`` runs, on each ID
(default: every registered ID), policies that try what an agent could exploit without solving the task, and sets
their episode returns and benchmark scores beside the ID's reference policy and random policy
(``docs/reference/<Name>.json``, where the ID has a reference report):

- blind motions, the same for every ID: saturated actions (``saturate+``, ``saturate-``, ``alternate``: +1 on even
  action dimensions, -1 on odd ones), vibration (``vibrate:1``: the alternating pattern flipped every step;
  ``bang_bang:8``: every 8 steps), and travelling sine waves over the action dimensions (``sine:20``, ``sine:50``: a
  period of 20 or 50 steps, dimension ``i`` lagging by ``2 pi i / act_dim``), the open-loop gaits a legged robot can
  drag, flip or spin with;
- task-specific ones where a blind motion would not find the exploit (``spin`` on CartpoleSwingup: pump energy into
  the pole without stopping, so it spins through the top instead of balancing).

Each adversary runs one episode per world (``--worlds`` worlds, seed 0). An adversary is flagged (``EXPLOIT``) when
its mean return reaches the lowest reference seed's mean return (the reward pays it as much as a trained policy), or
its benchmark score is at least half of the expert's above random (normalized score >= 0.5): a task whose reward a
blind motion satisfies measures the wrong thing. Episodes that end by a physics cause (penetration, overflow,
non-finite) are counted too: an adversary that provokes them names a contact the task's settings do not hold.

The report is a Markdown table on stdout and, with ``--out``, a JSON file of every row; the exit status is 1 when a
row is flagged, 2 on bad input (an unknown ID or adversary name, before anything runs).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass

import torch

__all__ = ["ADVERSARIES", "TASK_ADVERSARIES", "AdversaryRow", "main", "run_adversaries"]

_REPORTS = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "docs", "reference"
)


def _open_loop(pattern: Callable[[int, torch.Tensor], torch.Tensor]) -> Callable:
    """A factory ``(env, seed) -> policy`` of an open-loop policy: ``pattern(step, dims)`` gives the (act_dim,) action
    of every world at ``step`` (counted from the policy's first call; ``dims`` = ``arange(act_dim)``)."""

    def factory(env, seed: int) -> Callable[[torch.Tensor], torch.Tensor]:
        del seed  # deterministic
        dims = torch.arange(env.action_dim, dtype=torch.float32)
        step = [0]

        def policy(obs: torch.Tensor) -> torch.Tensor:
            a = pattern(step[0], dims).clamp(-1.0, 1.0)
            step[0] += 1
            return a.to(obs.device).expand(obs.shape[0], -1)

        return policy

    return factory


def _alternating(dims: torch.Tensor) -> torch.Tensor:
    return 1.0 - 2.0 * (dims % 2)


def _flipped_every(period: int) -> Callable:
    return _open_loop(lambda t, d: _alternating(d) * (1.0 if (t // period) % 2 == 0 else -1.0))


def _travelling_sine(period: int) -> Callable:
    return _open_loop(lambda t, d: torch.sin(2.0 * math.pi * (t / period - d / len(d))))


ADVERSARIES: dict[str, Callable] = {
    "saturate+": _open_loop(lambda t, d: torch.ones_like(d)),
    "saturate-": _open_loop(lambda t, d: -torch.ones_like(d)),
    "alternate": _open_loop(lambda t, d: _alternating(d)),
    "vibrate:1": _flipped_every(1),
    "bang_bang:8": _flipped_every(8),
    "sine:20": _travelling_sine(20),
    "sine:50": _travelling_sine(50),
}
"""The blind adversaries every ID meets: name -> factory ``(env, seed) -> policy``."""


def _cartpole_spin(env, seed: int) -> Callable[[torch.Tensor], torch.Tensor]:
    """Push the cart so that the pole's energy only grows: ``dE/dt = -m l x_ddot theta_dot cos(theta)`` (the
    derivation in :func:`steel_envs.tasks.cartpole_swingup.scripted_policy`), so ``a = -sign(theta_dot cos(theta))``
    spins the pole through the top; a proportional-derivative term keeps the cart near the rail's centre.
    Observations (N, 5): x, x_dot, cos(theta), sin(theta), theta_dot."""
    del env, seed

    def policy(obs: torch.Tensor) -> torch.Tensor:
        x, x_dot, cos_t, theta_dot = obs[:, 0], obs[:, 1], obs[:, 2], obs[:, 4]
        pump = torch.where(theta_dot.abs() < 1e-3, torch.ones_like(x), -torch.sign(theta_dot * cos_t))
        return (pump - 0.5 * x - 0.2 * x_dot).clamp(-1.0, 1.0).unsqueeze(-1)

    return policy


TASK_ADVERSARIES: dict[str, dict[str, Callable]] = {
    "steel_envs/CartpoleSwingup-v0": {"spin": _cartpole_spin},
}
"""Adversaries of one ID, beside :data:`ADVERSARIES`."""


@dataclass
class AdversaryRow:
    """One policy on one ID."""

    env_id: str
    policy: str
    episodes: int
    mean_return: float
    mean_length: float
    score_name: str
    score: float
    normalized: float
    physics_ends: float
    """Fraction of the episodes that ended by a physics cause (penetration, overflow, non-finite)."""
    causes: dict[str, float]
    metrics: dict[str, float]
    reference_return: float | None
    """The lowest reference seed's mean return (``docs/reference/<Name>.json``); None: the ID has no report."""
    exploit: bool


def _factories(env_id: str, names: list[str] | None, arg: str = "names") -> dict[str, Callable]:
    """The factories of ``names`` (None: every adversary of ``env_id``), by name; ``arg`` names them in the error.

    Raises:
        ValueError: On a name that is not an adversary of ``env_id`` (naming the known ones).
    """
    known = {**ADVERSARIES, **TASK_ADVERSARIES.get(env_id, {})}
    unknown = [n for n in names or () if n not in known]
    if unknown:
        raise ValueError(f"{arg}: unknown adversaries {unknown} for {env_id}; known: {list(known)}")
    return known if names is None else {n: known[n] for n in names}


def _reference_return(env_id: str) -> float | None:
    path = os.path.join(_REPORTS, env_id.split("/")[-1] + ".json")
    if not os.path.isfile(path):
        return None
    with open(path) as f:
        runs = json.load(f)["runs"]
    return min(r["evaluation"]["mean_return"] for r in runs) if runs else None


def run_adversaries(env_id: str, worlds: int = 8, seed: int = 0, names: list[str] | None = None) -> list[AdversaryRow]:
    """Evaluate the adversaries (``names``, default all of :data:`ADVERSARIES` and the ID's :data:`TASK_ADVERSARIES`)
    and the random policy on ``env_id``: one episode per world.

    Raises:
        ValueError: On an unknown adversary name (naming the known ones).
    """
    from steel_envs.training.compare import read_score
    from steel_envs.training.evaluate import evaluate, physics_end_fraction

    from steel_envs.benchmark import task_benchmark

    factories = _factories(env_id, names)
    spec = task_benchmark(env_id)
    reference = _reference_return(env_id)
    result = evaluate(
        env_id,
        ["random", *factories],
        episodes=worlds,
        num_envs=worlds,
        seeds=(seed,),
        progress=False,
        factories=factories,
        resamples=200,
    )
    rows = []
    for s in result.summaries:
        score = read_score(s, spec)
        normalized = spec.normalize(score)
        pays = reference is not None and s.mean_return >= reference
        rows.append(
            AdversaryRow(
                env_id=env_id,
                policy=s.policy,
                episodes=s.episodes,
                mean_return=s.mean_return,
                mean_length=s.mean_length,
                score_name=spec.score,
                score=score,
                normalized=normalized,
                physics_ends=physics_end_fraction(s.causes),
                causes={k: v for k, v in s.causes.items() if v > 0},
                metrics={k: v[0] for k, v in s.metrics.items()},
                reference_return=reference,
                exploit=s.policy != "random" and (pays or normalized >= 0.5),
            )
        )
    return rows


def table(rows: list[AdversaryRow]) -> str:
    """The rows as a Markdown table."""
    lines = [
        "| ID | policy | return | reference return | score | normalized | length | physics ends | ends | flag |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ends = ", ".join(f"{k} {v:.0%}" for k, v in sorted(r.causes.items(), key=lambda kv: -kv[1]))
        ref = "-" if r.reference_return is None else f"{r.reference_return:.4g}"
        lines.append(
            f"| {r.env_id.split('/')[-1]} | {r.policy} | {r.mean_return:.4g} | {ref} | {r.score_name} {r.score:.3g} "
            f"| {r.normalized:.2f} | {r.mean_length:.0f} | {r.physics_ends:.0%} | {ends} | "
            f"{'EXPLOIT' if r.exploit else ''} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m steel_envs.training.benchmarks.adversaries",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("env_ids", nargs="*", help="registered IDs (default: all)")
    p.add_argument("--worlds", type=int, default=8, help="worlds, one episode each (default 8)")
    p.add_argument("--only", default=None, help="comma-separated adversary names (default: all of the ID's)")
    p.add_argument("--out", default=None, help="JSON file of every row")
    a = p.parse_args(argv)
    import warp as wp

    import steel_envs

    wp.config.log_level = wp.LOG_WARNING
    if a.worlds < 1:
        p.error(f"--worlds: expected an int >= 1, got {a.worlds}")
    import gymnasium as gym

    ids = a.env_ids or list(steel_envs.registry())
    names = a.only.split(",") if a.only else None
    rows: list[AdversaryRow] = []
    try:
        for env_id in ids:  # every ID and name checked before anything runs
            steel_envs.task_class(env_id)
            _factories(env_id, names, "--only")
        for env_id in ids:
            rows += run_adversaries(env_id, a.worlds, names=names)
            print(table([r for r in rows if r.env_id == env_id]).split("\n", 2)[2], flush=True)
    except (ValueError, gym.error.Error) as e:
        print(f"adversaries: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("adversaries: interrupted; the rows so far:", file=sys.stderr)
        print(table(rows))
        return 130
    print(table(rows))
    if a.out:
        with open(a.out, "w") as f:
            json.dump([asdict(r) for r in rows], f, indent=1)
        print(f"wrote {a.out}")
    return 1 if any(r.exploit for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
