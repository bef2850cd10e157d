"""The console script, run as a user runs it (subprocess, tiny budget)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import steel_envs


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "steel_envs.cli", *args], capture_output=True, text=True, timeout=600, check=False
    )


def test_list_prints_every_id():
    r = _cli("list")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == list(steel_envs.ENV_IDS)


def test_rollout_prints_throughput_and_episode_statistics():
    r = _cli(
        "rollout",
        "steel_envs/CartpoleBalance-v0",
        "--num-envs",
        "4",
        "--steps",
        "60",
        "--device",
        "cpu",
        "--policy",
        "zero",
        "--no-progress",
    )
    assert r.returncode == 0, r.stderr
    for key in ("env-steps/s", "physics-steps/s", "episodes ended", "mean return", "ended by constraint overflow"):
        assert key in r.stdout
    assert "shards: 1 process(es): " in r.stdout  # --shards auto: 4 worlds are below every scene's break-even
    # A zero force lets every pole fall within 60 steps (see test_physics); CartPole returns equal lengths.
    lines = dict(line.rsplit(None, 1) for line in r.stdout.splitlines()[2:] if line.strip())
    assert float(lines["  episodes ended"]) >= 4
    assert float(lines["  mean return"]) == float(lines["  mean length"])


def _refused_before_any_env(argv: list[str], monkeypatch, capsys, one_line: bool = True) -> str:
    """Run ``steel-envs <argv>`` in this process, any env build failing the test; return its one stderr line, the
    exit status having been 2."""
    from steel_envs import factory
    from steel_envs.cli import main

    def no_build(*args, **kwargs):
        raise AssertionError("an env was built before the argument was checked")

    monkeypatch.setattr(factory, "make_vec", no_build)
    monkeypatch.setattr(steel_envs, "make_vec", no_build)
    try:
        status = main(argv)
    except SystemExit as e:  # argparse's refusals exit
        status = e.code
    out, err = capsys.readouterr()
    assert status == 2 and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1 or not one_line, err
    assert "building" not in out
    return err.strip()


# The refusals below run in this process (``steel_envs.cli.main``, any env build failing the test): a subprocess per
# call cost 3-4 s of imports each; the exit status, the one stderr line and the absence of a traceback are main's.


def test_bad_arguments_give_a_one_line_error(monkeypatch, capsys):
    from steel_envs.cli import main

    # An unknown device and a bare name are refused by the env's constructor and gym's lookup, before any work.
    for argv, message in [
        (["rollout", "steel_envs/CartpoleBalance-v0", "--device", "tpu", "--steps", "3"], "device: expected"),
        (["rollout", "CartpoleBalance-v0"], "did you mean 'steel_envs/CartpoleBalance-v0'?"),
        (["train", "CartpoleBalance-v0"], "did you mean 'steel_envs/CartpoleBalance-v0'?"),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    err = _refused_before_any_env(["rollout", "steel_envs/Nope-v0"], monkeypatch, capsys)
    assert "'steel_envs/Nope-v0' is not a registered" in err
    err = _refused_before_any_env(
        ["rollout", "steel_envs/CartpoleBalance-v0", "--num-envs", "0", "--device", "cpu"], monkeypatch, capsys
    )
    assert err == "steel-envs rollout: --num-envs: expected an int >= 1, got 0"


@pytest.mark.parametrize("command", ["evaluate", "bench"])
def test_an_out_prefix_that_cannot_be_written_fails_before_the_work(command, tmp_path, monkeypatch, capsys):
    """evaluate and bench create --out's folder first; where they cannot (here a file stands in its path), they stop in
    one line before building any env, not after the whole run."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    extra = ["--policy", "zero"] if command == "evaluate" else []
    argv = [command, "steel_envs/CartpoleBalance-v0", *extra, "--out", str(blocker / "sub" / "x")]
    err = _refused_before_any_env(argv, monkeypatch, capsys, one_line=False)  # argparse's usage, then the line
    assert "--out: cannot create the folder of" in err and "(Not a directory)" in err


def test_rollout_runs_a_solver_vbd_scene():
    # One process: sharded SolverVBD scenes are test_sharded's (--shards auto would start 2 workers for 2 worlds). The
    # command reads what every SolverVBD env serves alike; ClothFold's cloth kernels cost 8 s more in the subprocess.
    r = _cli(
        "rollout",
        "steel_envs/SoftPush-v0",
        "--num-envs",
        "2",
        "--steps",
        "3",
        "--device",
        "cpu",
        "--no-progress",
        "--shards",
        "1",
    )
    assert r.returncode == 0, r.stderr
    assert "env-steps/s" in r.stdout and "ended by constraint overflow" in r.stdout


def test_commands_print_no_cuda_driver_notice():
    """On a machine without a GPU, Warp's native "Could not find or load the NVIDIA CUDA driver" notice (printed by
    its library, so only a subprocess sees it) stays out of normal output."""
    r = _cli("list")
    assert "CUDA driver" not in r.stdout + r.stderr


@pytest.mark.parametrize(
    ("argv", "argument"),
    [
        (["record", "steel_envs/CartpoleBalance-v0", "--out", "{blocked}/clip.mp4"], "--out"),
        (
            ["play", "--policy", "zero", "--env", "steel_envs/CartpoleBalance-v0", "--video", "{blocked}/v.gif"],
            "--video",
        ),
        (["doctor", "steel_envs/CartpoleBalance-v0", "--json", "{blocked}/report.json"], "--json"),
        (["export", "--checkpoint", "{checkpoint}", "--out", "{blocked}/policy.onnx"], "--out"),
    ],
    ids=["record", "play", "doctor", "export"],
)
def test_every_output_path_is_checked_before_the_work(argv, argument, tmp_path, monkeypatch, capsys):
    """An output file whose folder cannot be made (a file stands in its path) is refused in one line naming the
    argument, before any env is built; so is a video name record cannot write."""
    from steel_envs.policies import reference_checkpoint

    blocker = tmp_path / "file"
    blocker.write_text("")
    fill = {"blocked": str(blocker / "sub"), "checkpoint": reference_checkpoint("steel_envs/CartpoleBalance-v0")}
    err = _refused_before_any_env([a.format(**fill) for a in argv], monkeypatch, capsys)
    assert err.startswith(f"steel-envs {argv[0]}: {argument}: cannot create the folder of "), err
    if argv[0] == "record":
        err = _refused_before_any_env([*argv[:2], "--out", str(tmp_path / "clip.avi")], monkeypatch, capsys)
        assert err == f"steel-envs record: --out: expected a .mp4 or .gif file name, got '{tmp_path / 'clip.avi'}'"


@pytest.mark.parametrize(
    ("argv", "argument"),
    [
        (["evaluate", "steel_envs/CartpoleBalance-v0", "--policy", "random", "--policy", "{missing}"], "--policy"),
        (["play", "--checkpoint", "{missing}"], "--checkpoint"),
        (["play", "--policy", "{missing}", "--env", "steel_envs/CartpoleBalance-v0"], "--policy"),
        (["export", "--checkpoint", "{missing}"], "--checkpoint"),
        (["record", "steel_envs/CartpoleBalance-v0", "--policy", "{missing}", "--out", "{tmp}/clip.gif"], "--policy"),
        (["view", "steel_envs/CartpoleBalance-v0", "--policy", "{missing}"], "--policy"),
    ],
    ids=["evaluate", "play-checkpoint", "play-policy", "export", "record", "view"],
)
def test_a_missing_file_says_no_such_file_before_the_work(argv, argument, tmp_path, monkeypatch, capsys):
    """A policy or checkpoint path that does not exist is refused as ``<argument>: no such file '<path>'``, one line
    before any env is built (and so before any progress bar)."""
    monkeypatch.chdir(tmp_path)
    missing = str(tmp_path / "runs" / "model_100.pt")
    err = _refused_before_any_env([a.format(missing=missing, tmp=tmp_path) for a in argv], monkeypatch, capsys)
    assert err == f"steel-envs {argv[0]}: {argument}: no such file '{missing}'"
    assert not (tmp_path / "runs").exists()  # evaluate made no output folder either
