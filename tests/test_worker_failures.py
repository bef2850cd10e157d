"""Shard workers that fail loudly: a worker that dies, fails or hangs makes the parent raise one error naming the
shard, its pid, its exit code or signal and its last exception, within ``worker_timeout``; the other workers end
with it, and every worker ends with its parent, even one killed with SIGKILL. A script without a ``__main__`` guard
is told how to fix it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
import torch
from conftest import CARTPOLE, alive, child_pids

import steel_envs
from steel_envs.sharding import ShardError

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process tree from /proc")


def _wait_gone(pids: list[int], seconds: float) -> list[int]:
    """The pids of ``pids`` still alive after up to ``seconds``."""
    deadline = time.monotonic() + seconds
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [pid for pid in pids if alive(pid)]


def _sharded(**kwargs) -> tuple[steel_envs.ShardedVectorEnv, list[int]]:
    env = steel_envs.make_vec(CARTPOLE, 4, num_shards=2, seed=0, **kwargs)
    env.step(torch.zeros(4, 1))
    return env, [proc.pid for proc in env._procs]


@pytest.mark.parametrize("fault", ["exception", "hang"])
def test_a_failing_worker_raises_one_error_naming_it_and_the_other_worker_ends(fault):
    """A command shard 0's env raises on (counters out of range in its worlds, which the parent's own check would
    refuse, sent to the workers directly); shard 0 stopped (SIGSTOP) with a 1 s timeout. Each time the next call
    raises ShardError naming shard, pid, worlds and what happened, both workers are gone and the env is closed. (A
    worker killed by a signal: test_run_safety's training run.)"""
    env, pids = _sharded()
    expected = {
        "exception": r"exited with code 1 during 'set_episode_length'; its last exception: ValueError: lengths: "
        r"expected counts in \[0, 500\)",
        "hang": r"did not answer 'step' within worker_timeout=1 s \(killed\)",
    }[fault]
    start = time.monotonic()
    with pytest.raises(ShardError, match=rf"^shard 0 of 2 \(pid {pids[0]}, worlds 0-1\) {expected}"):
        if fault == "exception":
            env._send("set_episode_length", np.array([10**6, 10**6, 0, 0]))  # out of range in shard 0's worlds
        else:
            os.kill(pids[0], signal.SIGSTOP)
            env.worker_timeout = 1.0
            env.step(torch.zeros(4, 1))
    assert time.monotonic() - start < 20  # seconds, even on a loaded machine (the hang: worker_timeout=1 s)
    assert _wait_gone(pids, 5) == [] and env.closed
    with pytest.raises(RuntimeError, match="closed"):
        env.step(torch.zeros(4, 1))
    env.close()  # a second close is harmless


_PARENT = """
import os, sys, time, torch, steel_envs
if __name__ == "__main__":
    env = steel_envs.make_vec("steel_envs/CartpoleBalance-v0", 4, num_shards=2, seed=0)
    forked = os.fork()
    if forked == 0:  # as a data loader's forked worker: it holds the pipes' parent ends open, so they never close
        time.sleep(60)
        os._exit(0)
    print("workers", forked, *[proc.pid for proc in env._procs], flush=True)
    while True:
        env.step(torch.zeros(4, 1))
"""


def test_workers_end_within_seconds_of_a_parent_killed_with_sigkill(tmp_path):
    """The parent steps its shards in a loop, after forking a process that keeps the pipes open (so the workers
    cannot count on their pipe's end-of-file), and is killed with SIGKILL (no close, no atexit): both workers are
    gone within 10 s."""
    script = tmp_path / "parent.py"
    script.write_text(_PARENT)
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    line = ""
    while not line.startswith("workers"):
        line = proc.stdout.readline()
    forked, *workers = (int(pid) for pid in line.split()[1:])
    try:
        assert len(workers) == 2 and set(workers) <= set(child_pids(proc.pid))
        proc.kill()
        proc.wait(timeout=10)
        assert _wait_gone(workers, 10) == []
    finally:
        os.kill(forked, signal.SIGKILL)


def test_a_script_without_a_main_guard_is_told_how_to_fix_it(tmp_path):
    """Spawned workers import the main script again; one that builds a sharded env at import time would start workers
    forever. The parent raises ShardError naming the shard and the fix, instead of hanging or an EOFError; the
    workers exit without a traceback of their own."""
    script = tmp_path / "no_guard.py"
    script.write_text(
        textwrap.dedent(f"""
        import steel_envs
        env = steel_envs.make_vec({CARTPOLE!r}, 2, num_shards=2, seed=0)
        """)
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 1
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("steel_envs.sharding.ShardError: shard "), out.stderr
    assert "exited with code 1 during 'start'" in last and 'under `if __name__ == "__main__":`' in last
    assert out.stderr.count("Traceback") == 1, out.stderr  # the script's own error; none from the workers
