"""Nothing lost, nothing overwritten: every run writes a folder of its own, a checkpoint is replaced whole or not at
all, and Ctrl-C during training saves the run and exits 130 without a traceback from any process."""

from __future__ import annotations

import glob
import json
import os
import re
import select
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest
import torch
from conftest import CARTPOLE, alive, child_pids

pytest.importorskip("rsl_rl")

from steel_envs.training import run_prefix
from steel_envs.training.train import train
from steel_envs.training.train_args import parse_args

from steel_envs.adapters.rsl_rl import SteelOnPolicyRunner

TINY = ("--num-envs", "4", "--num-steps-per-env", "8", "--no-progress", "--max-iterations", "1")


@pytest.fixture(autouse=True, scope="module")
def commands_start_as_from_a_terminal():
    """The Ctrl-C tests send SIGINT to the commands they start. A shell starts a background job (``.ci/run &``) with
    SIGINT ignored, and an ignored signal stays ignored across ``exec``: those commands would then rightly never
    see it. With a handler in this process, they start with SIGINT at its default, as from a terminal."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_runs_started_in_the_same_second_never_share_a_folder(tmp_path, monkeypatch):
    """Two runs of one seed within one second (a sweep launched in the background) keep their own arguments and
    checkpoints; so do two evaluations' default outputs."""
    monkeypatch.setattr(time, "strftime", lambda *args: "2026-01-01_00-00-00")
    runs = [train(parse_args([CARTPOLE, *TINY, "--log-dir", str(tmp_path)])) for _ in range(2)]
    assert runs[0].run_dir != runs[1].run_dir
    for r in runs:
        assert os.path.isfile(r.checkpoint) and os.path.isfile(os.path.join(r.run_dir, "train_args.json"))
    monkeypatch.chdir(tmp_path)
    assert run_prefix("evaluation", CARTPOLE) != run_prefix("evaluation", CARTPOLE)


def test_a_checkpoint_is_replaced_whole_or_not_at_all(tmp_path, monkeypatch):
    """A save that dies mid-write leaves the previous checkpoint as it was and no partial file; a finished save
    replaces it."""
    path = tmp_path / "model_final.pt"
    runner = types.SimpleNamespace(
        alg=types.SimpleNamespace(save=lambda: {"actor_state_dict": {"w": torch.ones(3)}}),
        current_learning_iteration=4,
        logger=types.SimpleNamespace(save_model=lambda path, iteration: None),
    )
    SteelOnPolicyRunner.save(runner, str(path), {"iterations": 5})
    before = path.read_bytes()
    real_save = torch.save

    def dies_mid_write(obj, f, *args, **kwargs):
        with open(f, "wb") as out:
            out.write(before[: len(before) // 2])
        raise KeyboardInterrupt

    monkeypatch.setattr(torch, "save", dies_mid_write)
    with pytest.raises(KeyboardInterrupt):
        SteelOnPolicyRunner.save(runner, str(path), {"iterations": 6})
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["model_final.pt"]
    monkeypatch.setattr(torch, "save", real_save)
    SteelOnPolicyRunner.save(runner, str(path), {"iterations": 6})
    assert torch.load(path, weights_only=False)["infos"] == {"iterations": 6}


def test_shipped_checkpoints_hold_the_policy_only_and_resume_refuses_them_and_non_checkpoints(tmp_path, capsys):
    """The reference checkpoints keep the actor (layers, normalizer, std) and the counts, not the critic or the
    optimizer; ``--resume`` refuses one of them, and a file that is no checkpoint, in one line before any work."""
    from steel_envs.training.train import main

    from steel_envs.policies import POLICY_KEYS, reference_checkpoint

    shipped = glob.glob(os.path.join(os.path.dirname(reference_checkpoint(CARTPOLE)), "..", "..", "*", "*", "*.pt"))
    assert len(shipped) >= 24
    for path in shipped:
        assert tuple(torch.load(path, weights_only=False)) == POLICY_KEYS, path
    junk = tmp_path / "notes.pt"
    junk.write_text("not a checkpoint")
    for resume, message in ((reference_checkpoint(CARTPOLE), "holds a policy only"), (junk, "is not a steel-envs")):
        with pytest.raises(ValueError, match=message):
            main([CARTPOLE, *TINY, "--log-dir", str(tmp_path), "--resume", str(resume)])
    assert not os.path.exists(tmp_path / "steel_envs_CartpoleBalance-v0") or not os.listdir(
        tmp_path / "steel_envs_CartpoleBalance-v0"
    )


def test_a_resumed_run_records_the_learning_rate_it_runs_with(tmp_path):
    """rsl_rl resumes the checkpoint's optimizer, learning rate included: without --learning-rate the run continues
    with that rate and its train_args.json says so; with one, the optimizer takes it. A new std is refused."""
    from steel_envs.registration import task_class

    def run(folder: str, *extra: str):
        r = train(parse_args([CARTPOLE, *TINY, "--schedule", "fixed", "--log-dir", str(tmp_path / folder), *extra]))
        with open(os.path.join(r.run_dir, "train_args.json")) as f:
            recorded = json.load(f)["hyper_parameters"]["learning_rate"]
        ran = torch.load(r.checkpoint, weights_only=False)["optimizer_state_dict"]["param_groups"][0]["lr"]
        return recorded, ran, r.checkpoint

    assert task_class(CARTPOLE).train_config.learning_rate not in (3e-4, 2e-3)
    *_, first = run("a", "--learning-rate", "3e-4")
    assert run("b", "--resume", first)[:2] == (3e-4, 3e-4)
    assert run("c", "--resume", first, "--learning-rate", "2e-3")[:2] == (2e-3, 2e-3)
    with pytest.raises(ValueError, match="init_noise_std: sets a new policy's std"):
        run("d", "--resume", first, "--init-noise-std", "0.3")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process tree from /proc")
def test_ctrl_c_during_a_sharded_rollout_prints_the_figures_so_far_and_exits_130():
    """SIGINT to the process group of ``rollout --shards 2`` while it steps: the figures of the steps done (episodes,
    a mean return equal to the mean length, as every CartpoleBalance step earns 1), then one line, exit 130; no
    traceback or shutdown noise from any process, and no worker left."""
    argv = [sys.executable, "-m", "steel_envs.cli", "rollout", CARTPOLE, "--shards", "2", "--steps", "100000"]
    proc = subprocess.Popen(
        [*argv, "--num-envs", "4"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    err, deadline = b"", time.monotonic() + 120
    while not re.search(rb"\| *[1-9]\d{2,}/100000", err) and time.monotonic() < deadline:  # >= 100 steps done
        if select.select([proc.stderr], [], [], 1.0)[0]:
            chunk = os.read(proc.stderr.fileno(), 65536)
            if not chunk:
                break
            err += chunk
    workers = child_pids(proc.pid)
    os.killpg(proc.pid, signal.SIGINT)
    out, rest = proc.communicate(timeout=120)
    err = (err + rest).decode()
    assert proc.returncode == 130, out.decode() + err
    figures = dict(line.rsplit(None, 1) for line in out.decode().splitlines() if line.startswith("  "))
    (head,) = [line for line in out.decode().splitlines() if " worlds in 2 processes x " in line]
    done = int(re.search(r" x (\d+) steps", head).group(1))
    assert 100 <= done < 100000 and float(figures["  env-steps/s"]) > 0
    assert float(figures["  episodes ended"]) >= 4
    assert float(figures["  mean return"]) == pytest.approx(float(figures["  mean length"]), abs=0.05)
    assert err.splitlines()[-1] == f"steel-envs rollout: stopped by Ctrl-C after {done} of 100000 steps; nothing saved"
    for noise in ("Traceback", "Exception ignored", "leaked", "KeyboardInterrupt"):
        assert noise not in err, err
    assert len(workers) >= 2  # the two shards (and multiprocessing's resource tracker)
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in workers if alive(pid)]


_CTRL_C_ARGV = {
    "evaluate": ["evaluate", CARTPOLE, "--policy", "random", "--num-envs", "2", "--shards", "1", "--no-progress"],
    "play": ["play", "--policy", "zero", "--env", CARTPOLE, "--num-envs", "2"],
    "record": ["record", CARTPOLE, "--steps", "20", "--size", "32x24", "--out", "clip.gif"],
    "doctor": ["doctor", CARTPOLE, "--num-envs", "1", "--steps", "5", "--json", "report.json"],
    "bench": ["bench", CARTPOLE, "--num-envs", "1", "--steps", "5", "--no-peers"],
    "view": ["view", CARTPOLE, "--num-envs", "1", "--port", "0", "--speed", "inf"],
}


@pytest.mark.parametrize("command", list(_CTRL_C_ARGV))
def test_ctrl_c_in_every_command_prints_one_line_and_exits_130(command, tmp_path, monkeypatch, capsys):
    """Ctrl-C while a command steps its env (a KeyboardInterrupt from the third env step, where Python raises it on
    SIGINT) ends the command with one line saying that nothing was saved and exit status 130; no traceback, and no
    file left behind (the default output folder of evaluate and bench goes)."""
    from steel_envs.cli import main
    from steel_envs.core import NewtonVectorEnv

    if command == "view":
        pytest.importorskip("viser")
    real_step, calls = NewtonVectorEnv.step, []

    def step(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real_step(self, *args, **kwargs)

    monkeypatch.setattr(NewtonVectorEnv, "step", step)
    monkeypatch.chdir(tmp_path)
    try:
        status = main(_CTRL_C_ARGV[command])
    except KeyboardInterrupt:
        status = "KeyboardInterrupt escaped main()"
    err = capsys.readouterr().err
    assert status == 130 and len(calls) == 3, err
    assert err.splitlines()[-1] == f"steel-envs {command}: stopped by Ctrl-C; nothing saved"
    assert "Traceback" not in err
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def _logged_iterations(run_dir: str) -> list[int]:
    """The iterations of the run's TensorBoard scalar ``Loss/value`` (one per PPO iteration)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(run_dir)
    events.Reload()
    return [event.step for event in events.Scalars("Loss/value")]


def _train_until(argv: list[str], checkpoint_glob: str) -> subprocess.Popen:
    """Start ``steel-envs train`` with ``argv`` in a new session; return once a file matches ``checkpoint_glob``."""
    command = [sys.executable, "-m", "steel_envs.cli", "train", CARTPOLE, *TINY[:-2], "--shards", "2", *argv]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while not glob.glob(checkpoint_glob) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    return proc


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process tree from /proc")
def test_a_killed_shard_stops_training_in_one_line_resume_continues_and_ctrl_c_saves(tmp_path):
    """``train --shards 2`` with a checkpoint every iteration. SIGKILL to one worker: the run stops, exit 1, with one
    line naming the shard, the signal and the checkpoint to resume from, the other worker ended, the logged figures
    kept. ``--resume`` from that checkpoint continues the iteration count and the figures where it left them (only
    the iterations after it are lost); Ctrl-C (SIGINT to the process group) then stops the resumed run before its
    next env step: it saves ``model_final.pt``, prints one line and exits 130, with no traceback from any process."""
    killed = tmp_path / "killed"
    proc = _train_until(["--save-interval", "1", "--max-seconds", "300", "--log-dir", str(killed)],
                        str(killed / "*" / "*" / "model_2.pt"))  # fmt: skip
    workers = [pid for pid in child_pids(proc.pid) if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()]
    assert len(workers) == 2  # not multiprocessing's resource tracker
    os.kill(workers[0], signal.SIGKILL)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, out + err
    assert not alive(workers[1])  # the other worker was shut down
    (line,) = err.strip().splitlines()
    match = re.fullmatch(
        r"steel-envs train: shard [01] of 2 \(pid \d+, worlds \d-\d\) was killed by signal SIGKILL during 'step'; it "
        r"reported no exception; the other shards were shut down and the env is closed; the run continues from its "
        r"last checkpoint with --resume (\S+model_(\d+)\.pt)",
        line,
    )
    assert match, line
    checkpoint, last = match.group(1), int(match.group(2))
    assert _logged_iterations(os.path.dirname(checkpoint))[: last + 1] == list(range(last + 1))

    resumed = tmp_path / "resumed"
    argv = ["--resume", checkpoint, "--max-seconds", "300", "--log-dir", str(resumed), "--save-interval", "1"]
    proc = _train_until(argv, str(resumed / "*" / "*" / f"model_{last + 2}.pt"))
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, out + err
    assert "stopped by SIGINT" in out and "Traceback" not in err, out + err
    (final,) = glob.glob(str(resumed / "*" / "*" / "model_final.pt"))
    iterations = torch.load(final, weights_only=False)["infos"]["iterations"]
    assert iterations >= last + 3  # the checkpoint's iterations 0..last, and those of the resumed run
    logged = _logged_iterations(os.path.dirname(final))
    assert logged[0] == last + 1 and logged == list(range(last + 1, last + 1 + len(logged)))


def test_a_reference_sitting_stopped_in_a_later_seed_ships_nothing(tmp_path, monkeypatch):
    """``reference --seeds 0,1`` stopped by a signal during seed 1 exits with its status and leaves neither seed 0's
    checkpoint nor a report: shipped checkpoints and their report are one set."""
    from steel_envs.training.benchmarks import reference

    finished = tmp_path / "run0"
    finished.mkdir()
    monkeypatch.setattr(reference, "machine_speed", lambda: None)
    outcomes = {0: ({"seed": 0, "iterations": 1}, str(finished / "model_final.pt"), str(finished)), 1: 130}
    monkeypatch.setattr(reference, "_train_and_evaluate", lambda a, seed, *_: outcomes[seed])
    argv = [CARTPOLE, "--seeds", "0,1", "--out", str(tmp_path / "out"), "--checkpoints", str(tmp_path / "ship")]
    assert reference.main(argv) == 130
    assert not (tmp_path / "ship").exists() and not (tmp_path / "out").exists()


def test_a_reference_seed_runs_over_two_sittings(tmp_path, monkeypatch, capsys):
    """``--sitting-seconds`` stops a seed unfinished with its state in ``sitting.json`` and no report; ``--resume``
    runs it to the budget's iterations and reports one run: the sittings' env-steps, time and curve together."""
    import dataclasses

    from steel_envs.training.benchmarks import reference

    import steel_envs

    cls = steel_envs.task_class(CARTPOLE)
    budget = dataclasses.replace(cls.train_config, num_envs=16, max_iterations=6, target_return=None)
    monkeypatch.setattr(cls, "train_config", budget)
    monkeypatch.setattr(reference, "machine_speed", lambda: None)
    out, ship, logs = tmp_path / "out", tmp_path / "ship", tmp_path / "logs"
    argv = [CARTPOLE, "--seeds", "1", "--episodes", "2", "--out", str(out), "--checkpoints", str(ship)]
    assert reference.main([*argv, "--log-root", str(logs), "--sitting-seconds", "1e-6"]) == 0
    (sitting,) = logs.glob("*/*/sitting.json")
    first = json.loads(sitting.read_text())
    assert first["seed"] == 1 and first["iterations"] < 6 and first["sittings"] == 1
    assert "--resume" in capsys.readouterr().out and not out.exists() and not ship.exists()
    assert reference.main([*argv, "--log-root", str(logs), "--resume", str(sitting.parent)]) == 0
    (run,) = json.loads((out / "CartpoleBalance-v0.json").read_text())["runs"]
    assert run["iterations"] == 6 and run["sittings"] == 2
    assert run["env_steps"] >= 6 * 16 * budget.num_steps_per_env and run["seconds"] >= first["seconds"]
    steps = [point[0] for point in run["curve"]]
    assert steps == sorted(steps) and steps[: len(first["curve"])] == [p[0] for p in first["curve"]]
    assert (ship / "CartpoleBalance-v0" / "seed1" / "model_final.pt").is_file()
    shipped_args = json.loads((ship / "CartpoleBalance-v0" / "seed1" / "train_args.json").read_text())
    assert shipped_args["hyper_parameters"]["max_iterations"] == 6  # the seed's, not the last sitting's share
    # The last sitting's folder records the trained and evaluated seed: a sitting stopped later (in the baselines'
    # evaluation, say) resumes from it without training or evaluating the seed again.
    (done,) = (path.parent for path in logs.glob("*/*/sitting.json") if path != sitting)
    assert json.loads((done / "sitting.json").read_text())["run"] == {
        k: v for k, v in run.items() if k not in ("date", "machine_speed")
    }
    from steel_envs.training import evaluate as evaluate_module
    from steel_envs.training import train as train_module

    evaluated = []

    def evaluate(env_id, policies, **kwargs):
        evaluated.extend(policies)
        return real_evaluate(env_id, policies, **kwargs)

    real_evaluate = evaluate_module.evaluate
    monkeypatch.setattr(evaluate_module, "evaluate", evaluate)
    monkeypatch.setattr(train_module, "train", lambda args: pytest.fail("a trained seed was trained again"))
    (out / "CartpoleBalance-v0.json").unlink()
    assert reference.main([*argv, "--log-root", str(logs), "--resume", str(done)]) == 0
    assert evaluated == ["random", "zero"]
    assert json.loads((out / "CartpoleBalance-v0.json").read_text())["runs"] == [run]
    with pytest.raises(SystemExit):
        reference.main([*argv[:1], "--seeds", "0,1", "--resume", str(sitting.parent)])
    assert "expected one seed" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="records"):  # another seed than the sitting's
        reference.main([CARTPOLE, "--seeds", "2", "--resume", str(sitting.parent), "--out", str(out)])
