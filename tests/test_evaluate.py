"""steel-envs evaluate: episode accounting, determinism, sweeps, a physics-derived return, outputs."""

from __future__ import annotations

import json
import os
from collections import Counter

import numpy as np
import pytest
import torch
from conftest import ANT, CARTPOLE, make
from hypothesis import given, settings
from hypothesis import strategies as st
from steel_envs.training.evaluate import bootstrap_interval, evaluate, main
from test_physics import _rk4

# A cart-pole that never terminates: |wrapped angle| <= pi < 3.5 and a rail far longer than reachable.
NEVER_ENDS = {"pole_angle_limit": 3.5, "cart_position_limit": 1e3, "max_episode_steps": 7}


def test_every_episode_is_counted_once_and_short_ones_are_not_favoured():
    r = evaluate(CARTPOLE, ["zero"], episodes=5, num_envs=3, seeds=[0, 1], progress=False, **NEVER_ENDS)
    assert len(r.episodes) == 10
    assert all(e.length == 7 and e.episode_return == 7.0 and e.cause == "time_limit" for e in r.episodes)
    # The counted episodes of each world are its first ones (quotas 2, 2, 1 of 5 over 3 worlds), whatever
    # their lengths: which episodes count is fixed before any ends.
    for seed in (0, 1):
        per_world = Counter(e.world for e in r.episodes if e.seed == seed)
        assert sorted(per_world.values()) == [1, 2, 2]
        for w, n in per_world.items():
            assert sorted(e.index for e in r.episodes if e.seed == seed and e.world == w) == list(range(n))
    s = r.summaries[0]
    assert s.episodes == 10 and s.mean_return == 7.0 and s.iqm_return_ci == (7.0, 7.0)
    assert s.causes["time_limit"] == 1.0


def test_same_seeds_same_numbers():
    a = evaluate(CARTPOLE, ["random"], episodes=6, num_envs=4, seeds=[3], progress=False)
    b = evaluate(CARTPOLE, ["random"], episodes=6, num_envs=4, seeds=[3], progress=False)
    assert [e.episode_return for e in a.episodes] == [e.episode_return for e in b.episodes]
    assert a.summaries[0].mean_return_ci == b.summaries[0].mean_return_ci


def test_zero_policy_return_is_the_fall_time_of_the_equations_of_motion():
    """From a fixed tilt of 0.1 rad at rest with no force, the pole leaves +-0.2 rad at the control step that an
    RK4 solution of the cart-pole ODE predicts; the return (+1 per step) is that step."""
    state, step = np.array([0.0, 0.0, 0.1, 0.0]), 0
    while abs(state[2]) <= 0.2:
        state, step = _rk4(state, 0.02), step + 1
    r = evaluate(
        CARTPOLE,
        ["zero"],
        episodes=4,
        num_envs=2,
        seeds=[0],
        progress=False,
        initial_pole_angle=0.1,
        reset_noise_scale=0.0,
    )
    returns = {e.episode_return for e in r.episodes}
    assert len(returns) == 1 and abs(returns.pop() - step) <= 1, step


def test_set_world_parameters_changes_only_what_it_names():
    env = make(ANT, 3, seed=0)
    m = env.model
    mu0, mass0, inertia0 = m.shape_material_mu.numpy().copy(), m.body_mass.numpy().copy(), m.body_inertia.numpy().copy()
    sw, bw = m.shape_world.numpy(), m.body_world.numpy()
    env.set_world_parameters(friction_scale=np.array([0.5, 1.0, 2.0]))
    mu = m.shape_material_mu.numpy()
    np.testing.assert_allclose(mu[sw == 0], mu0[sw == 0] * 0.5, rtol=1e-6)
    assert mu[sw == 1].tobytes() == mu0[sw == 1].tobytes() and mu[sw == -1].tobytes() == mu0[sw == -1].tobytes()
    assert m.body_mass.numpy().tobytes() == mass0.tobytes()
    env.set_world_parameters(mass_scale=torch.tensor([1.0, 1.5, 1.0]))
    np.testing.assert_allclose(m.body_mass.numpy()[bw == 1], mass0[bw == 1] * 1.5, rtol=1e-6)
    np.testing.assert_allclose(m.body_inertia.numpy()[bw == 1], inertia0[bw == 1] * 1.5, rtol=1e-6)
    assert m.body_mass.numpy()[bw == 0].tobytes() == mass0[bw == 0].tobytes()
    np.testing.assert_allclose(m.shape_material_mu.numpy(), mu, rtol=0)  # friction kept its last setting
    with pytest.raises(ValueError, match="mass_scale: expected 3 finite factors > 0"):
        env.set_world_parameters(mass_scale=[1.0, 0.0, 1.0])
    # A heavier ant still stands: the ground carries m g of its own world.
    for _ in range(40):
        env.step(torch.zeros(3, 8))
    fz = env.body_contact_wrench.numpy().reshape(3, -1, 6)[:, :, 2].sum(axis=1)
    weights = m.body_mass.numpy().reshape(3, -1).sum(axis=1) * 9.81
    np.testing.assert_allclose(fz, weights, rtol=0.05)


def test_cli_writes_json_and_plots(tmp_path):
    out = str(tmp_path / "ev")
    code = main(
        [
            CARTPOLE,
            "--policy",
            "random",
            "--policy",
            "zero",
            "--episodes",
            "4",
            "--num-envs",
            "4",
            "--sweep",
            "mass_scale=0.8,1.2",
            "--out",
            out,
            "--no-progress",
        ]
    )
    assert code == 0
    with open(out + ".json") as f:
        data = json.load(f)
    assert len(data["episodes"]) == 2 * 2 * 4 and len(data["summaries"]) == 4
    assert (tmp_path / "ev_returns.png").stat().st_size > 1000 and (tmp_path / "ev_sweep.png").stat().st_size > 1000
    assert main([CARTPOLE, "--policy", "zero", "--sweep", "gravity=1,2", "--out", out]) == 2


def push_right(obs: torch.Tensor) -> torch.Tensor:
    """A module:function policy for the test below: full force to +x."""
    return torch.ones(obs.shape[0], 1)


def test_module_function_and_exported_policies(tmp_path):
    r = evaluate(CARTPOLE, ["test_evaluate:push_right", "zero"], episodes=4, num_envs=2, seeds=[0], progress=False)
    by_policy = {s.policy: s for s in r.summaries}
    # Pushing the cart right tips the pole left (negative angle) faster than doing nothing.
    assert by_policy["test_evaluate:push_right"].mean_length < by_policy["zero"].mean_length
    # Every episode ends because the pole fell: the task's declared termination term names the end cause.
    assert by_policy["zero"].causes["pole_fell"] == 1.0 and by_policy["zero"].causes["terminated"] == 0.0
    # The same policy as a TorchScript file gives the same episodes.
    scripted = torch.jit.script(torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(4, 1, bias=True)))
    with torch.no_grad():
        scripted[1].weight.zero_()
        scripted[1].bias.fill_(1.0)
    path = str(tmp_path / "policy_push.pt")
    scripted.save(path)
    r2 = evaluate(CARTPOLE, [path], episodes=4, num_envs=2, seeds=[0], progress=False)
    assert [e.episode_return for e in r2.episodes] == [
        e.episode_return for e in r.episodes if e.policy == "test_evaluate:push_right"
    ]


@pytest.mark.parametrize(("success_distance", "rate"), [(1.0, 1.0), (1e-6, 0.0)])
def test_success_rate_counts_info_success_on_the_last_step(success_distance, rate):
    """ClothFold reports success when the mean mirrored-particle distance is below ``success_distance``: a flat
    cloth's (about 0.2 m) is below 1 m and above 1 um."""
    result = evaluate(
        "steel_envs/ClothFold-v0",
        ["zero"],
        episodes=2,
        num_envs=2,
        max_episode_steps=2,
        success_distance=success_distance,
        progress=False,
    )
    assert result.summaries[0].success_rate == rate
    assert [r.success for r in result.episodes] == [bool(rate)] * 2
    cartpole = evaluate(CARTPOLE, ["zero"], episodes=2, num_envs=2, progress=False)
    assert cartpole.summaries[0].success_rate is None


_FOLD_STEPS = [0]


def fold_then_unfold(obs: torch.Tensor) -> torch.Tensor:
    """A module:function policy for the test below: ClothFold's scripted fold for the first 60 calls (it holds the
    fold, mirrored distance < 3 cm, from about step 40 on), then both grasped corners pulled up and back to -y."""
    from steel_envs.tasks.cloth_fold import scripted_policy

    _FOLD_STEPS[0] += 1
    if _FOLD_STEPS[0] <= 60:
        return scripted_policy(obs)
    return torch.tensor([0.0, -1.0, 1.0] * 2).expand(obs.shape[0], 6)


def test_success_once_counts_a_goal_reached_and_left_again():
    """ManiSkill's two success rates: ``success_once`` (any step) and ``success`` (the last step, its
    ``success_at_end``). A fold that is undone before the time limit counts only once; the scripted fold held to the
    end counts in both."""
    _FOLD_STEPS[0] = 0
    policies = ["test_evaluate:fold_then_unfold", "steel_envs.tasks.cloth_fold:scripted_policy"]
    result = evaluate("steel_envs/ClothFold-v0", policies, episodes=1, num_envs=1, progress=False)
    rates = {s.policy.split(":")[-1]: (s.success_rate, s.success_once_rate) for s in result.summaries}
    assert rates == {"fold_then_unfold": (0.0, 1.0), "scripted_policy": (1.0, 1.0)}, rates
    assert _FOLD_STEPS[0] == 100  # one 100-step episode, the policy called once per step


def _iqm(x, axis=-1):
    from scipy import stats

    return stats.trim_mean(x, 0.25, axis=axis)


def _mean(x, axis=-1):
    return np.mean(x, axis=axis)


def test_a_constant_trimmed_sample_gets_a_finite_interval():
    """BCa is undefined when the middle half of the sample is constant: it printed [nan, nan] before."""
    sample = np.array([8, 20, 20, 20, 20, 20, 20, 20], float)
    low, high = bootstrap_interval(sample, _iqm, 0.95, 500, 0)
    assert np.isfinite([low, high]).all() and low <= 20.0 <= high


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-1e4, 1e4, allow_nan=False), min_size=1, max_size=24),
    st.sampled_from(["mean", "iqm"]),
)
def test_every_interval_is_finite_and_contains_its_estimate(values, name):
    sample = np.array(values, float)
    statistic = _mean if name == "mean" else _iqm
    estimate = float(statistic(sample))
    low, high = bootstrap_interval(sample, statistic, 0.95, 200, 0)
    assert np.isfinite([low, high]).all()
    assert low <= estimate <= high


def test_evaluate_writes_into_a_run_folder_by_default(tmp_path, monkeypatch):
    """Without --out nothing lands in the working directory: runs/<ID>/evaluation_<time>/ (as train's runs/)."""
    from steel_envs.training.evaluate import main

    monkeypatch.chdir(tmp_path)
    assert main([CARTPOLE, "--policy", "zero", "--episodes", "2", "--num-envs", "2", "--no-progress"]) == 0
    assert os.listdir(tmp_path) == ["runs"]
    (run,) = (tmp_path / "runs" / "steel_envs_CartpoleBalance-v0").iterdir()
    assert run.name.startswith("evaluation_") and (run / "evaluation.json").is_file()


def test_task_metrics_are_reported_per_episode_and_summarized():
    """AntRun's ``distance_x`` reaches every episode record, its summary is their mean inside its interval, and the
    table prints it with its unit."""
    from steel_envs.training.evaluate import table

    result = evaluate(ANT, ["random"], episodes=4, num_envs=2, progress=False, max_episode_steps=6)
    distances = [r.metrics["distance_x"] for r in result.episodes]
    assert len(distances) == 4 and len(set(distances)) == 4  # four different episodes, each with its own figure
    mean, low, high = result.summaries[0].metrics["distance_x"]
    assert mean == pytest.approx(np.mean(distances)) and low <= mean <= high
    assert result.metric_units == {"distance_x": "m", "upright_fraction": "1"}
    (row,) = [line for line in table(result).splitlines() if " distance_x " in line]
    assert row.endswith("] m") and table(result).splitlines()[-1].endswith("]")  # upright_fraction: unit 1


def test_the_shipped_reference_policy_solves_its_task():
    """``--policy reference`` loads the package's reference checkpoint of the env's ID (seed 0, or ``reference:<k>``);
    CartpoleBalance's holds the pole for a whole (shortened) episode in every world. Every shipped checkpoint's run
    names the ID of the folder it ships in."""
    from steel_envs.policies import REFERENCE_DIR, reference_checkpoint

    result = evaluate(
        CARTPOLE, ["reference", "reference:1"], episodes=4, num_envs=4, progress=False, max_episode_steps=200
    )
    for summary in result.summaries:
        assert summary.mean_return == pytest.approx(200.0) and summary.causes["time_limit"] == 1.0
    shipped = sorted(os.listdir(REFERENCE_DIR))
    assert "CartpoleBalance-v0" in shipped
    for name in shipped:
        for run in sorted(os.listdir(os.path.join(REFERENCE_DIR, name))):
            with open(os.path.join(REFERENCE_DIR, name, run, "train_args.json")) as f:
                assert json.load(f)["env_id"] == f"steel_envs/{name}"
    with pytest.raises(ValueError, match="reference:<seed>"):
        evaluate(CARTPOLE, ["reference:best"], episodes=1, num_envs=1, progress=False)
    for spec, message in [
        ("steel_envs.tasks.cartpole_swingup:scripted_polcy", "no function 'scripted_polcy'"),
        ("steel_envs.tasks.nope:scripted_policy", "cannot import the module"),
    ]:
        with pytest.raises(ValueError, match=message):
            evaluate(CARTPOLE, [spec], episodes=1, num_envs=1, progress=False)
    with pytest.raises(FileNotFoundError, match=r"CartpoleBalance-v0 seed 99 ships \(its seeds: \[0, 1, 2\]"):
        reference_checkpoint("steel_envs/CartpoleBalance-v0", seed=99)


def test_reference_reports_keep_every_figure_with_a_line_per_curve_point():
    """The reference tool's JSON loads back to the same report, one line per curve point and per interval: a
    3,000-point curve is ~3,000 lines (it was three numbers per line before, 755 KB for PushCube). Every shipped
    report parses and has a curve point per line."""
    from steel_envs.training.benchmarks.reference import _dumps

    curve = [[i * 4096, 0.5 * i, -600.0 + 0.125 * i] for i in range(3000)]
    report = {"runs": [{"seed": 0, "curve": curve, "evaluation": {"mean_return_ci": [-1e-05, float("nan")]}}]}
    text = _dumps(report)
    loaded = json.loads(text)
    assert loaded["runs"][0]["curve"] == curve and np.isnan(loaded["runs"][0]["evaluation"]["mean_return_ci"][1])
    assert 3000 <= text.count("\n") < 3030
    docs = os.path.join(os.path.dirname(__file__), "..", "docs", "reference")
    for name in sorted(os.listdir(docs)):
        if name.endswith(".json"):
            with open(os.path.join(docs, name)) as f:
                text = f.read()
            runs = json.loads(text)["runs"]
            assert text.count("\n") < sum(len(r["curve"]) for r in runs) + 400, name


def test_reference_merge_refuses_runs_of_another_budget(tmp_path):
    """``--merge`` keeps the other seeds' runs only when they were trained to the same budget: the same command, and
    the same iteration budget, recorded or, in an older report, read from the runs (a task whose training stops at
    a target return may stop before it). A task's changed budget (SoftPush-v0's 300 -> 1,953 iterations) keeps the
    same command string, so the command alone merged 0.61 M runs with 4 M ones."""
    from steel_envs.training.benchmarks.reference import _kept_runs

    command = "steel-envs train steel_envs/SoftPush-v0 --seed <k>"
    path = tmp_path / "SoftPush-v0.json"

    def report(iterations, **extra):
        runs = [{"seed": k, "iterations": n} for k, n in enumerate(iterations)]
        path.write_text(json.dumps({"command": command, "runs": runs, **extra}))

    report([300, 300, 300])
    with pytest.raises(SystemExit, match=r"another budget \(iterations \[300\].* task's 1953 iterations"):
        _kept_runs(str(path), command, [0], 1953, stops_early=False)
    assert [r["seed"] for r in _kept_runs(str(path), command, [0], 300, stops_early=False)] == [1, 2]
    report([120, 300, 95])  # stopped at the target return: fewer iterations than the budget
    assert [r["seed"] for r in _kept_runs(str(path), command, [1], 300, stops_early=True)] == [0, 2]
    with pytest.raises(SystemExit, match="another budget"):
        _kept_runs(str(path), command, [1], 300, stops_early=False)
    report([1953, 1953], budget_iterations=1953)
    assert [r["seed"] for r in _kept_runs(str(path), command, [2], 1953, stops_early=False)] == [0, 1]
    with pytest.raises(SystemExit, match="another budget"):
        _kept_runs(str(path), command, [2], 977, stops_early=False)
    with pytest.raises(SystemExit, match="was made by"):
        _kept_runs(str(path), command + " --max-seconds 600", [2], None, stops_early=False)
    assert _kept_runs(str(tmp_path / "none.json"), command, [0], 1953, stops_early=False) == []


def test_the_reference_protocol_flags_seeds_that_end_by_physics_above_the_bound(monkeypatch):
    """A report whose seed 2 ends 3 % of its episodes by penetration and 1 % by overflow (task causes aside) is
    flagged, by the reference script and on the results page; a seed at 2 % is within the bound."""
    import importlib
    from pathlib import Path

    from steel_envs.training.benchmarks.reference import physics_end_warnings

    def run(seed, causes):
        return {"seed": seed, "evaluation": {"causes": causes}}

    report = {
        "runs": [
            run(0, {"time_limit": 0.98, "penetration": 0.02}),
            run(2, {"time_limit": 0.5, "fell_over": 0.46, "penetration": 0.03, "constraint_overflow": 0.01}),
        ]
    }
    (line,) = physics_end_warnings("X-v0", report)
    assert line.startswith("X-v0 seed 2: 4% ") and "(constraint_overflow 1%, penetration 3%)" in line
    assert physics_end_warnings("X-v0", {"runs": report["runs"][:1]}) == []

    monkeypatch.syspath_prepend(str(Path(__file__).parent.parent / "docs" / "_ext"))  # as Sphinx's conf.py does
    pages = importlib.import_module("reference_pages")
    assert pages._physics_ends(report["runs"]) == "**4 %** (seed 2: constraint_overflow 1 %, penetration 3 %)"
    assert pages._physics_ends(report["runs"][:1]) == "2 %"
