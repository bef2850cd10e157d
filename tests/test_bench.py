"""steel-envs bench: figures are measured, consistent with each other, and written as JSON and PNG."""

from __future__ import annotations

import json
import sys

import pytest
from conftest import ANT

pytest.importorskip("matplotlib")

from steel_envs.training.benchmarks.bench import main


def test_bench_writes_json_and_plot_with_peers(tmp_path):
    pytest.importorskip("mujoco")
    out = str(tmp_path / "new" / "b")  # --out's folder is created
    assert main([ANT, "--num-envs", "4", "--steps", "3", "--shards", "2", "--out", out]) == 0
    with open(out + ".json") as f:
        rows = json.load(f)["rows"]
    kinds = {(r["kind"], r["num_envs"]) for r in rows}
    assert {("steel-envs", 4), ("bare", 4), ("featherstone", 4), ("sharded-2", 4)} <= kinds
    assert {"gymnasium-sync", "gymnasium-async"} <= {r["kind"] for r in rows}
    for r in rows:
        assert r["env_steps_per_s"] > 0
        if r["kind"] == "steel-envs":
            # The split adds up: physics + overhead is one step, and physics-steps are env-steps x decimation (5).
            step_ms = 1e3 * r["num_envs"] / r["env_steps_per_s"]
            assert r["physics_ms"] + r["overhead_ms"] == pytest.approx(step_ms, rel=1e-6)
            assert r["physics_steps_per_s"] == pytest.approx(5 * r["env_steps_per_s"])
            assert r["memory_per_world_kib"] > 0 and r["first_call_s"] > 0
    assert (tmp_path / "new" / "b.png").stat().st_size > 1000


def test_profile_accounts_for_the_step_by_phase():
    """Every kernel of an eager step is timed and grouped: the phases (host included) add up to the step, the
    solver's kernels are in solver phases, and the counts match the scene (5 substeps per AntRun step)."""
    from steel_envs.training.benchmarks.profile import phase_of, profile

    prof = profile(ANT, 2, steps=3, warmup=1)
    assert sum(prof.phases.values()) == pytest.approx(prof.step_ms, rel=1e-9)
    assert {"collision", "solver: PGS iterations", "task", "core", "host"} <= set(prof.phases)
    pgs = [k for k in prof.kernels if k.phase == "solver: PGS iterations"]
    assert pgs and all(k.launches_per_step == 5 for k in pgs)  # one solve per substep
    assert phase_of("steel_envs.tasks.ant_run", "_rewards") == "task"
    assert phase_of("newton._src.geometry.broad_phase_nxn", "x") == "collision"
    assert phase_of("somewhere.else", "x") == "other"


def test_repeats_report_the_median_run(tmp_path):
    """``--repeats 3``: each row is the median of its three runs, all of which the JSON keeps; ``--num-envs`` takes a
    list."""
    from conftest import CARTPOLE

    out = str(tmp_path / "r")
    assert main([CARTPOLE, "--num-envs", "1,2", "--steps", "2", "--repeats", "3", "--no-peers", "--out", out]) == 0
    with open(out + ".json") as f:
        data = json.load(f)
    assert data["meta"]["repeats"] == 3
    assert {r["num_envs"] for r in data["rows"]} == {1, 2}
    for r in data["rows"]:
        runs = r["notes"]["runs"]
        assert len(runs) == 3 and r["env_steps_per_s"] == sorted(runs)[1]


def test_ratio_table_divides_by_the_faster_peer():
    from steel_envs.training.benchmarks.bench import BenchRow, ratio_table

    rows = [
        BenchRow(ANT, "steel-envs", 256, 3000.0),
        BenchRow(ANT, "sharded-2", 256, 6000.0),
        BenchRow("Ant-v5", "gymnasium-sync", 8, 4000.0),
        BenchRow("Ant-v5", "gymnasium-async", 2, 2500.0),
    ]
    lines = ratio_table(rows).splitlines()
    assert lines[1].endswith("0.75x") and lines[2].endswith("1.50x") and "sync x 8" in lines[1]
    assert ratio_table(rows[:2]) == ""


def test_the_same_robot_in_mujoco_is_a_peer_of_the_unitree_ids():
    """Go1Velocity-v0's MuJoCo peer steps as many worlds of the same MJCF (env-steps x 4 substeps = its MuJoCo
    steps), so does the rough ID's, and the ratio table sets one process against one thread and K shards against K
    threads at the same world count."""
    pytest.importorskip("mujoco")
    from steel_envs.training.benchmarks.bench import BenchRow, mujoco_robot_peer, ratio_table

    go1 = "steel_envs/Go1Velocity-v0"
    row = mujoco_robot_peer(go1, 3, 4, 1)
    assert row.kind == "mujoco-1" and row.num_envs == 3 and row.env_steps_per_s > 0
    assert row.physics_steps_per_s == pytest.approx(4 * row.env_steps_per_s)
    # The rough ID's peer is the same robot on flat ground (its height scan has no MuJoCo form).
    assert mujoco_robot_peer("steel_envs/Go1VelocityRough-v0", 2, 2, 1).env_steps_per_s > 0
    rows = [
        BenchRow(go1, "steel-envs", 64, 1000.0),
        BenchRow(go1, "sharded-2", 64, 1500.0),
        BenchRow(go1, "mujoco-1", 64, 4000.0),
        BenchRow(go1, "mujoco-2", 64, 6000.0),
        BenchRow(go1, "mujoco-1", 128, 1.0),
    ]
    lines = ratio_table(rows).splitlines()
    assert lines[1].endswith("0.25x") and "1 thread" in lines[1]
    assert lines[2].endswith("0.25x") and "2 thread" in lines[2]


def test_reference_reports_the_machine_speed_by_the_mujoco_peer(monkeypatch):
    """The reference report's ``machine_speed`` is the median of its runs of Gymnasium's Ant-v5 (a program that is
    not ours, so that a wall-time budget's env-steps can be compared across machines), and None without mujoco."""
    pytest.importorskip("mujoco")
    from steel_envs.training.benchmarks.reference import machine_speed

    speed = machine_speed(steps=5, repeats=3)
    assert "Ant-v5" in speed["peer"] and len(speed["runs"]) == 3 and min(speed["runs"]) > 0
    assert speed["env_steps_per_s"] == sorted(speed["runs"])[1]
    monkeypatch.setitem(sys.modules, "mujoco", None)  # import mujoco raises ImportError
    assert machine_speed() is None
