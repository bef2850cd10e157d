"""Soak test: a million env-steps of random actions, with injected faults, watching memory and every world.

With ``--inject-faults``, one fault every ``--fault-every`` control steps, cycling through:

1. a NaN written into one world's joint velocities (must end that world: ``nonfinite_state``);
2. a NaN and an infinity in one world's actions (must end it: ``nonfinite_action``, with
   ``nonfinite_actions="end_episode"``);
3. one world's ``constraint_overflow`` entry set on the solver (must end it: ``constraint_overflow``);
4. an explicit masked reset of a random quarter of the worlds.

After every step: no NaN or infinity in observations, rewards or ``final_obs`` of ended worlds; an injected world
reports its cause in the same step. No world is lost: each world's steps since its episode began
(counted here, from the step's ``_episode`` flags and the masked resets) never pass ``max_episode_steps``, so every
episode ends or is reset, and ends by its time limit at the latest. Memory is reported every ``--report-every``
steps: the process RSS and Warp's live allocations (``wp.ScopedMemoryTracker``); the growth between 10 % of the
run (allocator pools and caches filled) and its end is printed, in MiB and as a fraction of the RSS at 10 %.

Run: ``python -m steel_envs.training.benchmarks.soak steel_envs/QuadrupedVelocity-v0 --env-steps 1e6 --inject-faults``
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time

import numpy as np
import torch
import warp as wp


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    import resource

    return pages * resource.getpagesize() / 2**20


def _warp_live_mib(tracker: wp.ScopedMemoryTracker) -> float:
    text: list[str] = []
    tracker.report_func = text.append
    tracker.report()
    live = re.search(r"Live allocations:\s*\n\s*\S+\s+\d+\s+\(([\d.]+)\s*(B|KB|MB|GB)\)", "".join(text))
    if live is None:
        return 0.0
    scale = {"B": 2**-20, "KB": 2**-10, "MB": 1.0, "GB": 2**10}[live.group(2)]
    return float(live.group(1)) * scale


def _inject(env, kind: str, w: int, actions: torch.Tensor, rng: np.random.Generator) -> np.ndarray | None:
    """Inject fault ``kind`` into world ``w`` (``actions`` are the step's to come; see the module doc); the mask of
    the worlds reset by a ``reset_mask`` fault, else None."""
    if kind == "nonfinite_state" and env.model.particle_count:
        qd = env.state_0.particle_qd.numpy()
        qd[env.model.particle_world_start.numpy()[w]] = np.nan
        env.state_0.particle_qd.assign(qd)
    elif kind == "nonfinite_state":
        qd = env.state_0.joint_qd.numpy()
        qd[w * env.dofs_per_world] = np.nan
        env.state_0.joint_qd.assign(qd)
    elif kind == "nonfinite_action":
        actions[w, 0] = float("nan")
        actions[w, -1] = float("inf")
    elif kind == "constraint_overflow":
        flags = env.solver.constraint_overflow.numpy()
        flags[w] = True
        env.solver.constraint_overflow.assign(flags)
    else:
        mask = rng.random(env.num_envs) < 0.25
        env.reset(options={"reset_mask": mask})
        return mask
    return None


def soak(
    env_id: str,
    num_envs: int,
    env_steps: int,
    fault_every: int,
    report_every: int,
    seed: int,
    inject_faults: bool = True,
) -> dict:
    """Run the soak; return the summary (steps, faults, worlds lost, memory growth). See the module doc."""
    import steel_envs
    from steel_envs.vbd_env import VBDVectorEnv

    tracker = wp.ScopedMemoryTracker("soak", print=False)
    tracker.__enter__()
    env = steel_envs.make_vec(env_id, num_envs=num_envs, seed=seed, device="cpu", nonfinite_actions="end_episode")
    rng = np.random.default_rng(seed)
    g = torch.Generator().manual_seed(seed)
    steps = env_steps // num_envs
    episodes = np.zeros(num_envs, np.int64)
    running = np.zeros(num_envs, np.int64)  # steps of each world's current episode
    lost = np.zeros(num_envs, bool)
    faults = {"nonfinite_state": 0, "nonfinite_action": 0, "constraint_overflow": 0, "reset_mask": 0}
    if isinstance(env, VBDVectorEnv):
        # VBD's overflow flags are recomputed from its contact counts every physics step: nothing to inject.
        del faults["constraint_overflow"]
    missed: list[str] = []
    memory: list[tuple[int, float, float]] = []
    start = time.perf_counter()
    for step in range(steps):
        actions = torch.rand(num_envs, env.action_dim, generator=g) * 2 - 1
        expect: tuple[str, int] | None = None
        if inject_faults and step % fault_every == fault_every - 1:
            kind = list(faults)[(step // fault_every) % len(faults)]
            w = int(rng.integers(num_envs))
            if (reset := _inject(env, kind, w, actions, rng)) is not None:
                running[reset] = 0
            faults[kind] += 1
            expect = (kind, w) if kind != "reset_mask" else None
        obs, reward, _, _, info = env.step(actions)
        if not (torch.isfinite(obs).all() and torch.isfinite(reward).all()):
            missed.append(f"step {step}: a non-finite observation or reward escaped")
        ended = info["_episode"].numpy()
        if ended.any() and not torch.isfinite(info["final_obs"][info["_episode"]]).all():
            missed.append(f"step {step}: a non-finite final_obs escaped")
        if expect is not None:
            kind, w = expect
            if not (info[kind][w] and ended[w]):
                missed.append(f"step {step}: injected {kind} in world {w} did not end its episode")
        episodes += ended
        running += 1
        lost |= running > env.max_episode_steps  # an episode that its time limit did not end
        running[ended] = 0
        if step % report_every == 0 or step == steps - 1:
            memory.append((step * num_envs, _rss_mib(), _warp_live_mib(tracker)))
            print(
                f"  {step * num_envs:>9d} env-steps  RSS {memory[-1][1]:8.1f} MiB  Warp live {memory[-1][2]:8.2f} MiB  "
                f"episodes {int(episodes.sum())}",
                flush=True,
            )
    seconds = time.perf_counter() - start
    env.close()
    tracker.__exit__(None, None, None)
    # Warm-up: the first tenth of the run (allocator pools and caches fill); growth is measured after it.
    warm = next(m for m in memory if m[0] >= steps * num_envs // 10)
    return {
        "env_id": env_id,
        "num_envs": num_envs,
        "env_steps": steps * num_envs,
        "seconds": seconds,
        "faults": faults,
        "missed": missed,
        "worlds_lost": int(lost.sum()),
        "episodes": int(episodes.sum()),
        "rss_growth_mib": memory[-1][1] - warm[1],
        "rss_growth_fraction": (memory[-1][1] - warm[1]) / warm[1],
        "warp_growth_mib": memory[-1][2] - warm[2],
    }


def main(argv: list[str] | None = None) -> int:
    """Command line of the soak; exits 1 when a fault escaped, a world was lost or the RSS grew by more than 5 %
    from 10 % to 100 % of the run."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("env_id", nargs="?", default="steel_envs/QuadrupedVelocity-v0", help="a registered ID")
    p.add_argument("--num-envs", type=int, default=256)
    p.add_argument("--env-steps", type=float, default=1e6, help="total world-steps (default 1e6)")
    p.add_argument("--inject-faults", action="store_true", help="inject the faults above (default: none)")
    p.add_argument("--fault-every", type=int, default=50, help="control steps between injected faults")
    p.add_argument("--report-every", type=int, default=500, help="control steps between memory reports")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="also write the summary to this JSON file (e.g. docs/soak.json)")
    argv = sys.argv[1:] if argv is None else list(argv)
    args = p.parse_args(argv)
    from steel_envs.runtime import init_warp

    init_warp()
    faults = f"a fault every {args.fault_every} steps" if args.inject_faults else "no faults"
    print(f"soak {args.env_id}: {args.num_envs} worlds, {args.env_steps:.0f} env-steps, {faults}")
    r = soak(
        args.env_id,
        args.num_envs,
        int(args.env_steps),
        args.fault_every,
        args.report_every,
        args.seed,
        inject_faults=args.inject_faults,
    )
    print(
        f"summary: {r['env_steps']} env-steps in {r['seconds']:.0f} s, faults injected {sum(r['faults'].values())} "
        f"{r['faults']}, escaped {len(r['missed'])}, worlds lost {r['worlds_lost']}, episodes {r['episodes']}, "
        f"growth from 10 % to 100 % of the run: RSS {r['rss_growth_mib']:+.1f} MiB "
        f"({100 * r['rss_growth_fraction']:+.1f} %), Warp {r['warp_growth_mib']:+.2f} MiB"
    )
    for line in r["missed"][:20]:
        print("  " + line)
    if args.out is not None:
        with open(args.out, "w") as f:
            json.dump(
                {
                    **r,
                    "missed": r["missed"][:20],
                    "command": " ".join(["python -m steel_envs.training.benchmarks.soak", *argv]),
                },
                f,
                indent=1,
            )
    return 1 if r["missed"] or r["worlds_lost"] or r["rss_growth_fraction"] > 0.05 else 0


if __name__ == "__main__":
    sys.exit(main())
