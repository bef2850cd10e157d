"""``steel-envs train``'s command line: shards, resume, env overrides, the task's defaults in ``--help``, time budgets
and the W&B logger (CartpoleBalance, 4 worlds, 1-3 iterations per run)."""

from __future__ import annotations

import glob
import json
import os
import re
import sys
import time

import pytest
import torch
from conftest import CARTPOLE

pytest.importorskip("rsl_rl")
pytest.importorskip("tyro")

from steel_envs.training.train import main, train
from steel_envs.training.train_args import TrainArgs, TrainPlan, parse_args, plan

import steel_envs
from steel_envs.train_config import PpoConfig

TINY = ("--num-envs", "4", "--num-steps-per-env", "8", "--no-progress")


def _args(log_dir, *extra: str) -> TrainArgs:
    return parse_args([CARTPOLE, *TINY, "--log-dir", str(log_dir), *extra])


def _saved(run_dir: str) -> dict:
    with open(os.path.join(run_dir, "train_args.json")) as f:
        return json.load(f)


def test_two_shards_train_and_write_a_checkpoint(tmp_path):
    threads = torch.get_num_threads()
    r = train(_args(tmp_path, "--shards", "2", "--max-iterations", "1"))
    assert r.iterations == 1 and r.env_steps == 4 * 8
    assert os.path.isfile(r.checkpoint) and torch.load(r.checkpoint, weights_only=False)["infos"]["iterations"] == 1
    saved = _saved(r.run_dir)["hyper_parameters"]
    assert saved["shards"] == 2 and saved["num_envs"] == 4 and saved["num_steps_per_env"] == 8
    # The learner keeps the cores the two workers leave, at least one; this process gets its threads back.
    assert saved["learner_threads"] == max(1, len(os.sched_getaffinity(0)) - 2)
    assert torch.get_num_threads() == threads
    assert r.env_config["pole_angle_limit"] == 0.2  # read back from the shards' env


def test_resume_continues_the_iteration_count_from_the_checkpoint(tmp_path):
    first = train(_args(tmp_path / "a", "--max-iterations", "2"))
    saved = torch.load(first.checkpoint, weights_only=False)
    window = saved["infos"]["recent_returns"]  # the returns of the last (up to) 100 episodes
    assert first.iterations == 2 and saved["iter"] == 1 and saved["infos"]["iterations"] == 2
    assert window and sum(window) / len(window) == pytest.approx(first.mean_return)
    second = train(_args(tmp_path / "b", "--max-iterations", "1", "--save-interval", "1", "--resume", first.checkpoint))
    assert second.iterations == 3 and second.env_steps == 4 * 8  # this run's env-steps only
    resumed = torch.load(second.checkpoint, weights_only=False)
    assert resumed["iter"] == 2 and resumed["infos"]["iterations"] == 3
    # The window carried over: the resumed run's episodes are added to the first run's, not to an empty one.
    assert resumed["infos"]["recent_returns"][: len(window)] == window
    assert os.path.isfile(os.path.join(second.run_dir, "model_2.pt"))  # rsl_rl's periodic save, at the next index
    assert _saved(second.run_dir)["hyper_parameters"]["resume"] == first.checkpoint
    # rsl_rl's own checkpoints (no "iterations" info) resume after their iteration index as well.
    third = train(_args(tmp_path / "c", "--max-iterations", "1", "--resume", os.path.join(first.run_dir, "model_0.pt")))
    assert third.iterations == 2


@pytest.mark.parametrize("schedule", ["adaptive", "fixed"])
def test_schedule_reaches_the_optimizer(tmp_path, schedule):
    """fixed keeps the learning rate; rsl_rl's adaptive schedule moves it by factors of 1.5 within mini-batches."""
    r = train(_args(tmp_path, "--max-iterations", "2", "--learning-rate", "3e-4", "--schedule", schedule))
    lr = torch.load(r.checkpoint, weights_only=False)["optimizer_state_dict"]["param_groups"][0]["lr"]
    assert _saved(r.run_dir)["hyper_parameters"]["schedule"] == schedule
    assert (lr == 3e-4) == (schedule == "fixed"), lr


def test_min_noise_std_floors_the_policy_std(tmp_path):
    """The saved floor rebuilds with the policy: a std parameter driven below it samples with the floor's std."""
    from steel_envs.policies import load_policy

    r = train(_args(tmp_path, "--max-iterations", "1", "--min-noise-std", "0.25"))
    assert _saved(r.run_dir)["hyper_parameters"]["min_noise_std"] == 0.25
    loaded, env = load_policy(r.checkpoint, num_envs=4)
    distribution = loaded.runner.alg.actor.distribution
    with torch.no_grad():
        distribution.std_param.fill_(1e-3)
    distribution.update(torch.zeros(4, distribution.std_param.numel()))
    assert torch.allclose(distribution.std, torch.full_like(distribution.std, 0.25))
    env.close()
    for bad in ("-0.1", "1.0", "nan"):
        with pytest.raises(ValueError, match="min_noise_std: expected a number >= 0 below init_noise_std"):
            plan(parse_args([CARTPOLE, "--min-noise-std", bad]))


def test_clip_value_loss_bounds_the_critics_step(tmp_path):
    """CartpoleBalance pays +1 per step, so the returns of the first rollout are several units while the fresh critic
    predicts about 0: with the clipped value loss one iteration leaves its predictions near 0 (a sample's loss stops
    pulling once its prediction moved clip_param = 0.2 from the rollout's), without it they move several times as far
    (learning rate 1e-2, fixed)."""
    from tensordict import TensorDict

    from steel_envs.policies import load_policy

    means = {}
    for flag in ("--clip-value-loss", "--no-clip-value-loss"):
        extra = ("--num-envs", "16", "--max-iterations", "1", "--learning-rate", "1e-2", "--schedule", "fixed", flag)
        r = train(_args(tmp_path / flag, *extra))
        assert _saved(r.run_dir)["hyper_parameters"]["clip_value_loss"] == (flag == "--clip-value-loss")
        loaded, env = load_policy(r.checkpoint, num_envs=16)
        obs, _ = env.reset(seed=0)
        with torch.no_grad():
            means[flag] = float(loaded.runner.alg.critic(TensorDict({"policy": obs}, batch_size=[16])).mean())
        env.close()
    assert means["--clip-value-loss"] < 1.0 and 3.0 * means["--clip-value-loss"] < means["--no-clip-value-loss"], means


def test_env_overrides_reach_the_env_and_are_saved_with_the_run(tmp_path):
    r = train(
        _args(
            tmp_path,
            "--max-iterations",
            "1",
            "--env.pole-angle-limit",
            "0.3",
            "--env.solver_options.iterations",
            "8",
            "--env.alive-reward=1.0",  # named on the command line: saved although it equals the default
        )
    )
    assert r.env_config["pole_angle_limit"] == 0.3 and r.env_config["cart_position_limit"] == 2.4
    assert r.solver_options["iterations"] == 8
    expected = {"pole_angle_limit": 0.3, "alive_reward": 1.0, "solver_options": {"iterations": 8}}
    assert _saved(r.run_dir)["env"] == expected


def test_help_shows_the_tasks_own_defaults_without_markup(capsys):
    with pytest.raises(SystemExit) as e:
        main([CARTPOLE, "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    text = " ".join(re.sub(r"[│╭╮╰╯─]", " ", out).split())

    def default(option: str) -> str:
        m = re.search(re.escape(option) + r" .*?\(default: ([^)]*)\)", text)
        assert m, option
        return m.group(1)

    task = steel_envs.task_class(CARTPOLE)
    assert default("--num-envs") == str(task.train_config.num_envs)
    assert task.train_config.max_iterations != PpoConfig().max_iterations
    assert default("--max-iterations") == str(task.train_config.max_iterations)
    assert default("--actor-hidden-dims") == " ".join(map(str, task.train_config.actor_hidden_dims))
    assert default("--target-return") == str(task.train_config.target_return)
    assert default("--learning-rate") == str(PpoConfig().learning_rate)
    assert default("--env.pole-angle-limit") == str(task.config_cls().pole_angle_limit)
    assert default("--env.solver-options.iterations") == str(task.solver_defaults.iterations)


def test_max_seconds_alone_lifts_the_iteration_cap_and_the_bar_counts_seconds(tmp_path, capsys):
    def resolved(*extra: str) -> TrainPlan:
        return plan(parse_args([CARTPOLE, *extra]))

    task_cap = steel_envs.task_class(CARTPOLE).train_config.max_iterations
    assert (resolved().max_iterations, resolved().stop) == (task_cap, "iterations")
    timed = resolved("--max-seconds", "5")
    assert (timed.max_iterations, timed.stop) == (None, "time")
    assert timed.ppo.max_iterations is None  # neither the task's 300 nor the general 500
    both = resolved("--max-seconds", "5", "--max-iterations", "3")
    assert (both.max_iterations, both.stop) == (3, "first")
    assert plan(TrainArgs(env_id=CARTPOLE, max_seconds=5.0)).max_iterations is None

    from steel_envs.training.run_control import Progress

    now = time.perf_counter()
    bar = Progress(timed, 32, now, "t", disable=False)
    assert bar.bar.total == 5 and bar.bar.unit == "s"
    bar.close()
    bar = Progress(resolved(), 32, now, "t", disable=False)
    assert bar.bar.total == task_cap * 32 and bar.bar.unit == "step"
    bar.close()
    # Both limits: after the first iteration the bar counts whichever will stop the run.
    slow = Progress(
        plan(parse_args([CARTPOLE, "--max-seconds", "1", "--max-iterations", "10"])), 100, now - 0.5, "t", False
    )
    slow.update(100, 100)  # 0.5 s per iteration: 9 more need 4.5 s, 0.5 s are left
    assert slow.bar.total == 1 and slow.bar.unit == "s"
    slow.close()
    # The same switch with the bar off (--no-progress, as training/benchmarks/gpu_check.sh runs it) raised
    # AttributeError: a disabled tqdm has no start time.
    quiet = Progress(
        plan(parse_args([CARTPOLE, "--max-seconds", "1", "--max-iterations", "10"])), 100, now - 0.5, "t", True
    )
    quiet.update(100, 100)
    assert quiet.by_time
    quiet.close()
    fast = Progress(
        plan(parse_args([CARTPOLE, "--max-seconds", "100", "--max-iterations", "10"])), 100, now, "t", False
    )
    fast.update(100, 100)
    assert fast.bar.total == 1000 and fast.bar.unit == "step"
    fast.close()

    r = train(_args(tmp_path, "--max-seconds", "2", "--target-return", "None"))
    assert r.seconds >= 2 and r.iterations >= 1 and not r.target_reached
    assert _saved(r.run_dir)["hyper_parameters"]["max_iterations"] is None


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--env.nope", "1"], "unrecognized option --env.nope"),
        (["--iterations", "3"], "did you mean --max-iterations or --env.solver-options.iterations"),  # level first
        (["--baumgarte", "0.1"], "did you mean --env.solver-options.baumgarte"),
        (["--env.solver-options.iterations", "3", "--num-envs", "abc"], "--num-envs: expected an int, got abc"),
        (["--env.pole-angle-limt", "0.3"], "did you mean --env.pole-angle-limit or"),  # the closest first
        (["--env.pole-angle-limit", "-1"], "pole_angle_limit"),  # validated by the env
        (["--env.solver-options.relaxation", "3"], "relaxation"),
        (["--num-envs", "abc"], "--num-envs"),
        (["--shards", "0"], "shards: expected an int >= 1 or 'auto', got 0"),
        (["--logger", "mlflow"], "--logger"),
        (["--schedule", "linear"], "--schedule"),
        (["--resume", "missing/model_3.pt"], "resume: no such file"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(argv, message, capsys):
    from steel_envs.cli import main as cli_main

    assert cli_main(["train", CARTPOLE, *TINY, *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err, err


def test_resume_into_other_model_sizes_is_one_line(tmp_path, capsys):
    from steel_envs.cli import main as cli_main

    first = train(_args(tmp_path, "--max-iterations", "1"))
    argv = ["train", CARTPOLE, *TINY, "--log-dir", str(tmp_path), "--resume", first.checkpoint]
    assert cli_main([*argv, "--actor-hidden-dims", "16"]) == 2
    err = capsys.readouterr().err.strip()
    assert "does not fit this run's models" in err and len(err.splitlines()) == 1, err


def test_wandb_logger_runs_offline_into_the_run_folder(tmp_path, monkeypatch):
    pytest.importorskip("wandb", reason="wandb is not installed (pip install -e '.[wandb]')")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.delenv("WANDB_DIR", raising=False)
    r = train(_args(tmp_path, "--max-iterations", "1", "--logger", "wandb"))
    assert glob.glob(os.path.join(r.run_dir, "wandb", "offline-run-*", "run-*.wandb"))
    assert glob.glob(os.path.join(r.run_dir, "events.out.tfevents.*"))  # W&B's writer keeps TensorBoard's files
    assert "WANDB_DIR" not in os.environ


def test_wandb_logger_without_wandb_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "wandb", None)  # import wandb raises ImportError
    with pytest.raises(ValueError, match=r"pip install 'steel-envs\[wandb\]'"):
        train(_args(tmp_path, "--max-iterations", "1", "--logger", "wandb"))


def test_init_at_random_ep_len_spreads_the_first_time_limits(tmp_path):
    """CartpoleSwingup has no early end: with a 12-step time limit, no episode ends in a first iteration of 8 steps
    unless --init-at-random-ep-len starts the worlds at random steps of it (rsl_rl draws them with the run's torch
    seed); over 2 shards too. It is the task's default (train_config) and saved with the run."""
    swingup = "steel_envs/CartpoleSwingup-v0"

    def run(*extra: str):
        argv = [swingup, *TINY, "--log-dir", str(tmp_path), "--max-iterations", "1", *extra]
        args = parse_args(argv)
        args.env = {"max_episode_steps": 12}
        return train(args)

    assert run("--no-init-at-random-ep-len").curve == []
    spread = run("--shards", "2")
    assert spread.curve and _saved(spread.run_dir)["hyper_parameters"]["init_at_random_ep_len"] is True


def test_learner_threads_are_checked_and_saved(tmp_path):
    for bad in ("0", "-1"):
        with pytest.raises(ValueError, match="learner_threads: expected an int >= 1"):
            plan(parse_args([CARTPOLE, "--learner-threads", bad]))
    threads = torch.get_num_threads()
    r = train(_args(tmp_path, "--shards", "1", "--learner-threads", "1", "--max-iterations", "1"))
    assert _saved(r.run_dir)["hyper_parameters"]["learner_threads"] == 1
    assert torch.get_num_threads() == threads
