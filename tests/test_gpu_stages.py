"""The GPU check's stages (``python -m steel_envs.training.benchmarks.gpu_stages``), each run on the CPU with a few
worlds and steps, and the shell script that orders them (``training/benchmarks/gpu_check.sh``): its arguments only,
since a dry run of every stage takes minutes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CARTPOLE
from steel_envs.training.benchmarks.gpu_bench import plan
from steel_envs.training.benchmarks.gpu_stages import main

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "training" / "benchmarks" / "gpu_check.sh"


def _json(path: Path):
    with open(path) as f:
        return json.load(f)


# ---------------------------------------------------------------------------------------------- the script


def test_script_orders_the_stages_in_at_most_150_lines():
    """The shell script holds no Python (no heredoc), parses, and its usage names every stage and --learn."""
    text = SCRIPT.read_text()
    assert len(text.splitlines()) <= 150 and "<<" not in text
    assert subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True).returncode == 0
    done = subprocess.run(["bash", str(SCRIPT), "--help"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0
    assert all(word in done.stdout for word in ("tests", "bench", "train", "pixels", "learn", "--learn ID"))


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--stages", "bench,nope"], "unknown stage nope"), (["--learn", "../x y"], "bad ID"), (["--frob"], "unknown")],
)
def test_script_refuses_bad_arguments_before_running_anything(tmp_path, args, message):
    done = subprocess.run(["bash", str(SCRIPT), str(tmp_path / "r"), *args], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and message in done.stderr and "usage:" in done.stderr
    assert not (tmp_path / "r").exists()


def test_stages_cli_lists_every_stage():
    done = subprocess.run(
        [sys.executable, "-m", "steel_envs.training.benchmarks.gpu_stages", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0
    for stage in ("preflight", "tests-summary", "bench", "train-summary", "pixels", "summary", "learn"):
        assert stage in done.stdout


# ---------------------------------------------------------------------------------------------- preflight


def test_preflight_on_the_cpu(tmp_path, monkeypatch):
    """On the CPU no CUDA is required; the versions are recorded; without the steel-envs command on PATH the
    preflight fails (exit 2) and says why."""
    bin_dir = os.path.dirname(shutil.which("steel-envs") or sys.executable)
    monkeypatch.setenv("PATH", bin_dir + os.pathsep + os.environ.get("PATH", ""))
    if shutil.which("steel-envs") is None:
        pytest.skip("the steel-envs command is not installed beside this Python")
    assert main(["preflight", "--results", str(tmp_path), "--device", "cpu"]) == 0
    info = _json(tmp_path / "preflight.json")
    assert info["device"] == "cpu" and info["problems"] == [] and info["torch"] and info["warp"]
    assert info["steel_envs_from"].endswith("__init__.py")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["preflight", "--results", str(tmp_path), "--device", "cpu"]) == 2
    assert "steel-envs command is not on PATH" in _json(tmp_path / "preflight.json")["problems"][0]


# ---------------------------------------------------------------------------------------------- tests summary

_JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="tests.test_gpu" name="test_a" time="1.50"/>
<testcase classname="tests.test_gpu" name="test_b" time="0.20"><failure message="boom">trace</failure></testcase>
<testcase classname="tests.test_gpu" name="test_c" time="0.00"><skipped message="no CUDA"/></testcase>
</testsuite></testsuites>"""


def test_tests_summary_reads_junit_or_else_the_log(tmp_path):
    (tmp_path / "tests_junit.xml").write_text(_JUNIT)
    assert main(["tests-summary", "--results", str(tmp_path)]) == 0
    s = _json(tmp_path / "tests_summary.json")
    assert (s["passed"], s["failed"], s["error"], s["skipped"]) == (1, 1, 0, 1)
    assert s["messages"] == {"test_b": "boom", "test_c": "no CUDA"} and s["tests"][0]["seconds"] == 1.5
    (tmp_path / "tests_junit.xml").unlink()  # pytest killed before writing it
    (tmp_path / "tests.log").write_text("...\n3 passed, 2 errors, 12 skipped in 80.1s\n")
    main(["tests-summary", "--results", str(tmp_path)])
    s = _json(tmp_path / "tests_summary.json")
    assert (s["passed"], s["error"], s["skipped"], s["tests"]) == (3, 2, 12, []) and "note" in s


# ---------------------------------------------------------------------------------------------- bench


def test_bench_plan_puts_the_headline_first_and_the_cheapest_next():
    walls: dict[str, float] = {}
    items = plan(["a", "b", "c"], [16, 64], walls)
    first = [next(items) for _ in range(4)]
    assert first == [(16, "a"), (64, "a"), (16, "b"), (16, "c")]
    walls.update(b=9.0, c=1.0)  # measured meanwhile: c was cheaper at 16 worlds
    assert list(items) == [(64, "c"), (64, "b")]


def test_bench_stage_on_the_cpu(tmp_path):
    """Every item measured, the files of steel-envs bench plus the stage's summary table; the figures agree."""
    args = ["bench", "--results", str(tmp_path), "--device", "cpu", "--ids", CARTPOLE, "--num-envs", "2,4"]
    assert main([*args, "--steps", "3", "--limit-s", "300"]) == 0
    data = _json(tmp_path / "bench.json")
    assert [i["status"] for i in data["items"]] == ["ok", "ok"] and data["meta"]["steps"] == 3
    assert {(r["kind"], r["num_envs"]) for r in data["rows"]} == {
        (k, n) for k in ("steel-envs", "bare") for n in (2, 4)
    }
    table = _json(tmp_path / "bench_summary.json")["table"]
    assert [e["worlds"] for e in table] == [2, 4]
    for e in table:
        step_ms = 1e3 * e["worlds"] / e["env_steps_per_s"]
        assert e["physics_ms"] + e["overhead_ms"] == pytest.approx(step_ms, rel=1e-6)
        assert e["wrapper_overhead"] == pytest.approx(e["bare_env_steps_per_s"] / e["env_steps_per_s"] - 1, rel=1e-6)
    assert (tmp_path / "bench.png").stat().st_size > 1000
    assert "CartpoleBalance-v0" in (tmp_path / "bench_summary.txt").read_text()


def test_bench_stage_skips_what_does_not_fit(tmp_path):
    """With less time than an item needs, nothing is built: every item is listed as skipped and the exit status says
    the stage is incomplete (3)."""
    args = ["bench", "--results", str(tmp_path), "--device", "cpu", "--ids", CARTPOLE, "--num-envs", "2"]
    assert main([*args, "--steps", "3", "--limit-s", "16"]) == 3
    assert _json(tmp_path / "bench.json")["items"][0]["status"].startswith("skipped")
    assert "not measured:" in (tmp_path / "bench_summary.txt").read_text()


# ---------------------------------------------------------------------------------------------- pixels


def test_pixels_stage_on_the_cpu(tmp_path):
    args = ["pixels", "--results", str(tmp_path), "--device", "cpu", "--ids", CARTPOLE, "--num-envs", "2"]
    assert main([*args, "--size", "8", "--steps", "2", "--limit-s", "300"]) == 0
    data = _json(tmp_path / "pixels_summary.json")
    assert (data["worlds"], data["size"]) == (2, 8)
    rgb, state = data["results"]
    assert (rgb["obs_mode"], state["obs_mode"]) == ("rgb", "state") and rgb["status"] == state["status"] == "ok"
    assert rgb["obs_shape"] == [2, 8, 8, 3] and rgb["obs_dtype"] == "torch.uint8"
    assert rgb["frames_per_s"] == rgb["env_steps_per_s"] > 0 and rgb["worlds_with_varied_pixels"] == 1.0
    assert rgb["megapixels_per_s"] == pytest.approx(rgb["frames_per_s"] * 64 / 1e6)
    assert "frames_per_s" not in state


# ---------------------------------------------------------------------------------------------- learn, train summary


@pytest.fixture(scope="module")
def learned(tmp_path_factory):
    """``learn CartpoleBalance-v0`` on the CPU: 16 worlds, 2 PPO iterations (the budget is not reached)."""
    pytest.importorskip("rsl_rl")
    folder = tmp_path_factory.mktemp("learn")
    out = folder / "docs" / "gpu" / "CartpoleBalance-v0.json"
    args = ["learn", "CartpoleBalance-v0", "--device", "cpu", "--seconds", "60", "--num-envs", "16"]
    assert main([*args, "--max-iterations", "2", "--out", str(out), "--log-dir", str(folder / "runs")]) == 0
    return folder, _json(out)


def test_learn_writes_a_consistent_curve(learned):
    _, r = learned
    assert r["env_id"] == CARTPOLE and r["device"] == "cpu" and r["device_name"]
    assert r["num_envs"] == 16 and r["iterations"] == 2 and r["max_seconds"] == 60
    assert r["env_steps"] == 2 * 16 * 32  # iterations x worlds x the task's num_steps_per_env
    assert 0 < r["seconds"] < 60
    # env_steps / seconds, within the rounding of both to the places the file keeps (seconds 0.001, rate 0.1)
    slowest, fastest = r["env_steps"] / (r["seconds"] + 5e-4), r["env_steps"] / (r["seconds"] - 5e-4)
    assert slowest - 0.05 <= r["env_steps_per_s"] <= fastest + 0.05
    steps, seconds, returns = zip(*r["curve"], strict=True)
    assert list(steps) == sorted(steps) and list(seconds) == sorted(seconds) and 0 < steps[-1] <= r["env_steps"]
    assert seconds[-1] <= r["seconds"] and all(ret > 0 for ret in returns)  # +1 per step alive
    assert r["mean_return"] == pytest.approx(returns[-1], abs=1e-3)
    assert set(r["versions"]) == {"torch", "warp", "newton"} and "commit" in r


def test_learn_refuses_an_unknown_id(capsys):
    assert main(["learn", "NoSuchTask-v0", "--device", "cpu", "--out", os.devnull]) == 2
    assert "NoSuchTask-v0" in capsys.readouterr().err


def test_train_summary_reads_the_final_line_and_the_curve(learned, tmp_path):
    """The final line of ``steel-envs train`` gives the counts; the run's TensorBoard events the return curve."""
    pytest.importorskip("tensorboard")
    folder, _ = learned
    shutil.copytree(folder / "runs", tmp_path / "train")
    final = "steel_envs/AntRun-v0: 410 iterations, 40386560 env-steps in 170.1 s (237398 env-steps/s), mean return "
    (tmp_path / "train.log").write_text("shards: 1\n" + final + "(last 100 episodes) 2420.5\ncheckpoint: x\n")
    assert main(["train-summary", "--results", str(tmp_path), "--stage-rc", "0"]) == 0
    s = _json(tmp_path / "train_summary.json")
    assert (s["iterations"], s["env_steps"], s["seconds"], s["env_steps_per_s"]) == (410, 40386560, 170.1, 237398)
    assert s["mean_return_last_100"] == 2420.5 and s["stage_rc"] == 0
    assert s["curve_tag"].endswith("mean_reward") and [p["iteration"] for p in s["curve"]] == [0, 1]
    (tmp_path / "train.log").write_text("Traceback ...\n")  # killed before its final line
    main(["train-summary", "--results", str(tmp_path), "--stage-rc", "124"])
    s = _json(tmp_path / "train_summary.json")
    assert "env_steps" not in s and s["stage_rc"] == 124 and s["curve"]


# ---------------------------------------------------------------------------------------------- summary


def test_summary_combines_the_stage_files(learned, tmp_path):
    """Each stage's file becomes its section of summary.txt; stages that left no file are said to have none."""
    _, curve = learned
    rows = [
        ("preflight", "ok", "0", "3.2", "60", "0"),
        ("tests", "failed", "1", "50.0", "130", "12"),
        ("bench", "incomplete", "3", "120.5", "300", "40"),
        ("curve_CartpoleBalance-v0", "ok", "0", "9.9", "330", "1"),
        ("learn_AntRun-v0", "timeout", "124", "70.0", "120", "0"),
    ]
    (tmp_path / "stages.tsv").write_text("".join("\t".join(r) + "\n" for r in rows))
    files = {
        "preflight.json": {"gpu": "NVIDIA H200", "torch": "2.11", "problems": []},
        "tests_summary.json": {"passed": 1, "failed": 1, "tests": [{"name": "t", "outcome": "failed", "seconds": 2.0}]},
        "bench_summary.json": {"steps": 100, "table": [], "items": []},
        "curve_CartpoleBalance-v0.json": curve,
    }
    for name, data in files.items():
        (tmp_path / name).write_text(json.dumps(data))
    (tmp_path / "bench_summary.txt").write_text("env worlds\nAntRun-v0 4096\n")
    assert (
        main(["summary", "--results", str(tmp_path), "--device", "cuda:0", "--budget", "470", "--total", "412.5"]) == 0
    )
    text = (tmp_path / "summary.txt").read_text()
    assert text.startswith("steel-envs GPU check on cuda:0: 412.5 s of a 470 s budget\n  NVIDIA H200")
    assert "a. tests: 1 passed, 1 failed, 0 error, 0 skipped" in text and "  AntRun-v0 4096" in text
    assert "AntRun-v0                no final line" in text
    assert f"{curve['env_steps']:,} env-steps" in text and "learn_AntRun-v0 timeout" in text
    s = _json(tmp_path / "summary.json")
    assert [st["stage"] for st in s["stages"]] == [r[0] for r in rows] and s["train"] is None
    assert s["curves"]["CartpoleBalance-v0"]["env_id"] == CARTPOLE and s["learn"] == {"AntRun-v0": {}}
