"""``steel-envs compare``: the statistics against hand-computed values, and one end-to-end comparison on a tiny budget
(two IDs x two seeds), its layout, resume, report and refusals."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

pytest.importorskip("rliable")

from steel_envs.training import compare_stats
from steel_envs.training.compare import main

from steel_envs.benchmark import BenchmarkSpec, suite_ids, task_benchmark

# 8 runs (2 seeds x 4 tasks); sorted: 0, .1, .2, .3, .7, .9, 1.2, 1.5; task means .35, .5, .75, .85
SCORES = np.array([[0.0, 0.9, 0.3, 1.5], [0.7, 0.1, 1.2, 0.2]])


def test_aggregates_match_hand_computed_values_and_rliable():
    from rliable import library, metrics

    got = compare_stats.aggregate({"a": SCORES}, reps=500, seed=3)["a"]
    assert got["iqm"][0] == pytest.approx((0.2 + 0.3 + 0.7 + 0.9) / 4)  # the middle 4 of 8
    assert got["median"][0] == pytest.approx((0.5 + 0.75) / 2)  # the median of the task means
    assert got["mean"][0] == pytest.approx(4.9 / 8)
    assert got["optimality_gap"][0] == pytest.approx(1 - (0 + 0.1 + 0.2 + 0.3 + 0.7 + 0.9 + 1 + 1) / 8)
    np.random.seed(3)  # rliable's stratified bootstrap draws from numpy's global generator
    _, ci = library.get_interval_estimates(
        {"a": SCORES},
        lambda x: np.array(
            [f(x) for f in (metrics.aggregate_iqm, metrics.aggregate_median, metrics.aggregate_mean)]
            + [metrics.aggregate_optimality_gap(x)]
        ),
        reps=500,
    )
    assert (got["iqm"][1], got["iqm"][2]) == pytest.approx(tuple(ci["a"][:, 0]))
    assert (got["optimality_gap"][1], got["optimality_gap"][2]) == pytest.approx(tuple(ci["a"][:, 3]))
    assert got["iqm"][1] <= got["iqm"][0] <= got["iqm"][2]


def test_probability_of_improvement_counts_pairs_per_task():
    x = np.array([[1.0, 5.0], [2.0, 5.0]])
    y = np.array([[1.5, 1.0], [0.0, 2.0]])
    # task 0: 1>1.5 no, 1>0 yes, 2>1.5 yes, 2>0 yes: 3/4; task 1: x always above: 1; mean 0.875
    got = compare_stats.probability_of_improvement({"x": x, "y": y}, reps=200)
    assert got["x > y"][0] == pytest.approx(0.875)
    assert got["y > x"][0] == pytest.approx(0.125)


def test_every_shipped_task_declares_its_benchmark_from_its_reference_report():
    root = os.path.join(os.path.dirname(__file__), "..", "docs", "reference")
    assert set(suite_ids("all")) == set(__import__("steel_envs").ENV_IDS)
    for env_id in suite_ids("all"):
        spec = task_benchmark(env_id)
        # declared by the class itself: a rough task inheriting its flat parent's anchors would be scored wrongly
        assert "benchmark" in vars(__import__("steel_envs").task_class(env_id)), env_id
        assert spec.env_steps >= 1
        path = os.path.join(root, env_id.split("/")[-1] + ".json")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            baselines = json.load(f)["baselines"]

        def score(policy, spec=spec, baselines=baselines):
            b = baselines[policy]
            return {"return": b["mean_return"], "success_rate": b["success_rate"]}.get(spec.score) or (
                b["metrics"][spec.score][0] if spec.score in b["metrics"] else b["success_rate"]
            )

        assert spec.random_score == pytest.approx(score("random"), abs=1e-3 + 5e-3 * abs(score("random"))), env_id
        if spec.expert_from == "scripted_policy":
            assert spec.expert_score == pytest.approx(score("scripted_policy"), abs=1e-2), env_id


def test_benchmark_spec_refuses_bad_declarations():
    good = dict(suite="classic", score="return", direction="higher", random_score=0.0, expert_score=1.0)
    good.update(expert_from="target", anchors="")
    with pytest.raises(ValueError, match="suite"):
        BenchmarkSpec(**{**good, "suite": "toys"})
    with pytest.raises(ValueError, match="expert_score"):
        BenchmarkSpec(**{**good, "direction": "lower"})
    assert BenchmarkSpec(**good).normalize(0.25) == 0.25
    assert BenchmarkSpec(**{**good, "direction": "lower", "random_score": 2.0}).normalize(1.5) == 0.5


IDS = "steel_envs/CartpoleBalance-v0,steel_envs_test/PendulumSwingup-v0"
ANCHORS = {"CartpoleBalance-v0": (23.38, 475.0), "PendulumSwingup-v0": (-1200.0, -150.0)}


def _compare(out, *extra):
    args = ["--algo", "ppo", "--algo", "sac", "--suite", IDS, "--seeds", "2", "--env-steps", "1000", "--num-envs", "16"]
    return main([*args, "--episodes", "8", "--eval-envs", "8", "--reps", "200", "--out", str(out), *extra])


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    out = tmp_path_factory.mktemp("compare")
    assert _compare(out) == 0
    return out


def test_compare_writes_every_run_and_the_report(compared):
    for algo, name, k in ((a, n, k) for a in ("ppo", "sac") for n in ANCHORS for k in (0, 1)):
        random, expert = ANCHORS[name]
        folder = compared / algo / name / f"seed{k}"
        assert sorted(p.name for p in folder.iterdir()) == ["config.json", "result.json", "train"]
        r = json.loads((folder / "result.json").read_text())
        assert r["seed"] == k and r["budget_env_steps"] == 1000 and r["env_steps"] >= 1000
        assert r["episodes"] == 8 and r["score"] == pytest.approx(r["mean_return"])
        assert r["normalized"] == pytest.approx((r["score"] - random) / (expert - random))
        assert (folder / r["checkpoint"]).is_file()
        config = json.loads((folder / "config.json").read_text())
        command = {"ppo": "steel-envs train", "sac": "python -m steel_envs.training.sac"}[algo]
        assert config["versions"]["newton"] == "1.8.0" and config["command"].startswith(command)
    report = json.loads((compared / "compare.json").read_text())
    assert report["runs"] == 8 and report["seeds"] == {"ppo": [0, 1], "sac": [0, 1]}
    for algo in ("ppo", "sac"):
        normalized = [
            json.loads((compared / algo / n / f"seed{k}" / "result.json").read_text())["normalized"]
            for n in ANCHORS
            for k in (0, 1)
        ]
        assert report["aggregates"][algo]["mean"][0] == pytest.approx(np.mean(normalized))
    poi = report["probability_of_improvement"]
    assert poi["ppo > sac"][0] + poi["sac > ppo"][0] == pytest.approx(1.0)
    for name in ("compare.md", "aggregates.png", "profiles.png", "improvement.png"):
        assert (compared / name).stat().st_size > 0


def test_compare_resumes_and_rebuilds_the_report(compared, capsys):
    times = {p: p.stat().st_mtime_ns for p in compared.glob("*/*/seed*/result.json")}
    assert len(times) == 8
    before = json.loads((compared / "compare.json").read_text())
    (compared / "compare.md").unlink()
    assert _compare(compared) == 0
    assert "8 finished before (skipped), 0 to do" in capsys.readouterr().out
    assert {p: p.stat().st_mtime_ns for p in times} == times
    assert main(["--report", "--out", str(compared), "--reps", "200"]) == 0
    assert json.loads((compared / "compare.json").read_text())["aggregates"] == before["aggregates"]
    assert (compared / "compare.md").is_file()


def test_compare_refuses_a_held_run_and_bad_arguments_before_training(compared, tmp_path, capsys):
    seed1 = compared / "ppo" / "PendulumSwingup-v0" / "seed1"
    (seed1 / "result.json").rename(tmp_path / "result.json")
    (seed1 / "lock").write_text(f"{os.getpid()} {os.uname().nodename}")
    try:
        assert _compare(compared) == 2
        assert "held by process" in capsys.readouterr().err
    finally:
        (seed1 / "lock").unlink()
        (tmp_path / "result.json").rename(seed1 / "result.json")
    times = {p: p.stat().st_mtime_ns for p in compared.glob("*/*/seed*/result.json")}
    # A finished run is reused only under the settings it was made with: another evaluation is refused, not mixed.
    assert _compare(compared, "--episodes", "4") == 2
    err = capsys.readouterr().err
    assert "8 finished run(s) under --out were made with other settings" in err and "eval_episodes 8 (asked 4)" in err
    assert {p: p.stat().st_mtime_ns for p in times} == times and not list(compared.glob("*/*/seed2"))
    args = ["--algo", "ppo", "--algo", "sac", "--suite", IDS, "--env-steps", "1000", "--num-envs", "16"]
    assert main([*args, "--episodes", "4", "--out", str(compared)]) == 2  # --seeds left at its default, 5
    assert "8 finished run(s) under --out were made with other settings" in capsys.readouterr().err
    for bad, expected in (
        (["--algo", "dqn"], "unknown algorithm"),
        (["--suite", "toys"], "--suite"),
        (["--suite", "CartpoleBalance-v0"], "IDs take their namespace: steel_envs/CartpoleBalance-v0"),
        (["--device", "cuda:7"], "--device"),
    ):
        with pytest.raises(SystemExit):
            main(["--algo", "ppo", "--suite", "classic", *bad, "--out", str(tmp_path)])
        assert expected in capsys.readouterr().err
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    with pytest.raises(SystemExit):  # before any training
        main(["--algo", "ppo", "--suite", "classic", "--out", str(blocker / "runs")])
    assert "--out: cannot create" in capsys.readouterr().err


def _results_copy(compared, dst):
    for path in compared.glob("*/*/seed*/result.json"):
        target = dst / path.relative_to(compared)
        target.parent.mkdir(parents=True)
        target.write_text(path.read_text())
    return dst


def _edit(path, **changes):
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, **changes}))


def test_report_refuses_runs_that_do_not_compare(compared, tmp_path, capsys):
    def refused(expected, *extra):
        assert main(["--report", "--out", str(out), "--reps", "50", *extra]) == 2
        assert expected in capsys.readouterr().err

    out = _results_copy(compared, tmp_path / "a")
    seed1 = out / "ppo" / "PendulumSwingup-v0" / "seed1" / "result.json"
    record = json.loads(seed1.read_text())
    settings = record["settings"]
    cases = (
        ({"budget_env_steps": 4000, "settings": {**settings, "budget_env_steps": 4000}}, "different budget_env_steps"),
        ({"settings": {**settings, "eval_worlds": 4}}, "different eval_worlds"),
        ({"settings": {**settings, "train_worlds": 4}}, "ppo steel_envs_test/PendulumSwingup-v0 has runs of different"),
        ({"settings": {**settings, "algo_config": "0" * 12}}, "has runs of different algo_config"),
        ({"normalized": record["normalized"] + 0.5}, "the installed anchors give"),
        ({"score": float("nan")}, "score is nan"),
        ({"seed": "1"}, "seed is '1', expected an int"),
        ({"settings": [1]}, "settings is [1], expected an object"),
        ({"env_id": "steel_envs/Nope-v0"}, f"{seed1}: "),
    )
    for changes, expected in cases:
        _edit(seed1, **changes)
        refused(expected)
        seed1.write_text(json.dumps(record))
    _edit(seed1, task_fingerprint="0" * 12)  # an upgraded task: refused before training, naming the run
    assert _compare(out) == 2
    assert f"{seed1.parent}: task declaration 000000000000" in capsys.readouterr().err
    seed1.write_text("{")
    refused(f"{seed1}: not a readable result")
    seed1.write_text(json.dumps({k: v for k, v in record.items() if k != "score"}))
    refused("lacks ['score']")
    seed1.write_text(json.dumps(record))
    copy = seed1.parent.with_name("seed1.bak")
    copy.mkdir()
    (copy / "result.json").write_text(json.dumps(record))
    refused("its record is ppo/PendulumSwingup-v0/seed1, not this folder")
    (copy / "result.json").unlink()
    refused("ppo lacks finished runs of seeds [0, 1, 2]", "--seeds", "3")
    with pytest.raises(SystemExit):
        main(["--report", "--out", str(out), "--env-steps", "5", "--shards", "2"])
    assert "--env-steps, --shards: settings of the runs" in capsys.readouterr().err
    for name in ANCHORS:  # an algorithm that lacks a seed on every ID
        (out / "sac" / name / "seed1" / "result.json").unlink()
    refused("sac lacks finished runs of seeds [0, 1]")
    for name in ANCHORS:
        (out / "sac" / name / "seed0" / "result.json").unlink()
    refused("no finished run of sac", "--algo", "ppo", "--algo", "sac")
    assert main(["--report", "--out", str(out), "--reps", "50", "--seeds", "1"]) == 0
    assert "One seed per ID" in (out / "compare.md").read_text()


def test_report_shows_the_env_steps_each_algorithm_trained(compared):
    report = json.loads((compared / "compare.json").read_text())
    markdown = (compared / "compare.md").read_text()
    for name in ANCHORS:
        task = report["tasks"][next(i for i in report["ids"] if i.endswith(name))]
        assert task["eval_episodes"] == 8 and task["eval_worlds"] == 8
        for algo in ("ppo", "sac"):
            trained = [
                json.loads((compared / algo / name / f"seed{k}" / "result.json").read_text())["env_steps"]
                for k in (0, 1)
            ]
            assert task["by_algorithm"][algo]["env_steps"] == trained and min(trained) >= 1000
            assert f"{trained[0]:,} steps" in markdown


def test_a_lock_without_a_holder_is_taken_over_once_old(tmp_path):
    from steel_envs.training.compare_runs import RunBusy, run_lock

    lock = tmp_path / "lock"
    lock.write_text("")
    with pytest.raises(RunBusy, match="still writing"), run_lock(str(tmp_path)):
        pass
    os.utime(lock, (0, 0))
    with run_lock(str(tmp_path)):
        assert lock.read_text() == f"{os.getpid()} {os.uname().nodename}"
    assert not lock.exists()


def test_sac_exports_the_deterministic_policy_sb3_acts_with(tmp_path):
    pytest.importorskip("stable_baselines3")
    import pickle

    import torch
    from stable_baselines3 import SAC
    from steel_envs.training.sac import train_sac

    from steel_envs.train_config import SacConfig

    config = SacConfig(num_envs=8, learning_starts=64, batch_size=32, buffer_size=4096, hidden_dims=(16, 16))
    r = train_sac("steel_envs/CartpoleSwingup-v0", env_steps=256, seed=0, out_dir=str(tmp_path), config=config)
    model = SAC.load(tmp_path / "sac_final.zip", device="cpu")
    # 32 vector steps of 8 worlds; updates after each of the 24 past learning_starts, 8 per vector step
    assert r.env_steps == model.num_timesteps == 256 and model._n_updates == 24 * 8
    with open(tmp_path / "vecnormalize.pkl", "rb") as f:
        normalizer = pickle.load(f)
    obs = np.random.default_rng(0).normal(0.0, 2.0, (5, *model.observation_space.shape)).astype(np.float32)
    expected, _ = model.predict(normalizer.normalize_obs(obs), deterministic=True)
    policy = torch.jit.load(r.policy)
    np.testing.assert_allclose(policy(torch.from_numpy(obs)).detach().numpy(), expected, atol=1e-5)
