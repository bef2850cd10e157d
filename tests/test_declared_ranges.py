"""Every numeric task config field and solver option declares its valid range with the reason; a value just outside
is refused in one line naming it, before the model is built."""

from __future__ import annotations

import dataclasses
import math
import types
import typing

import pytest
import warp as wp
from conftest import ANT, TASK_IDS, make

import steel_envs
from steel_envs import solver_options
from steel_envs.core import NewtonVectorEnv


def _numeric(hint) -> bool:
    """Whether a field's annotation admits an int or a float, or a tuple of them (not a bool, not a mapping)."""
    if hint in (int, float):
        return True
    if typing.get_origin(hint) in (typing.Union, types.UnionType, tuple):
        return any(_numeric(a) for a in typing.get_args(hint))
    return False


@pytest.mark.parametrize("env_id", steel_envs.ENV_IDS)
def test_every_numeric_field_and_solver_option_declares_a_range_with_a_reason(env_id):
    from steel_envs.spec import config_ranges

    task = steel_envs.task_class(env_id)
    ranges = config_ranges(task)
    hints = typing.get_type_hints(task.config_cls)
    numeric = [f.name for f in dataclasses.fields(task.config_cls) if _numeric(hints[f.name])]
    assert [n for n in numeric if n not in ranges] == [], "config fields without a declared range"
    options = type(task.solver_defaults)
    hints = typing.get_type_hints(options, globalns={"wp": wp, **vars(solver_options)})
    numeric = [f.name for f in dataclasses.fields(options) if _numeric(hints[f.name])]
    assert [n for n in numeric if n not in options.ranges()] == [], "solver options without a declared range"
    assert all(r.reason for r in (*ranges.values(), *options.ranges().values()))
    for t in task.rewards:  # a cost's weight is subtracted: a negative one would pay for the cost
        if t.cost and t.weight is not None:
            assert ranges[t.weight].low == 0.0 and not ranges[t.weight].low_open, t.weight


def _refusals(env_id: str) -> list[tuple[str, dict]]:
    """(name, keywords of make) for a value just outside each end of each declared range of ``env_id``."""
    from steel_envs.spec import config_ranges

    task = steel_envs.task_class(env_id)
    cases = []
    for name, valid in config_ranges(task).items():
        cases += [(name, {name: value}) for value in valid.outside()]
    for name, valid in type(task.solver_defaults).ranges().items():
        cases += [(name, {"solver_options": {name: value}}) for value in valid.outside()]
    return cases


@pytest.mark.parametrize("env_id", TASK_IDS)
def test_a_value_just_outside_its_range_is_refused_before_the_model_is_built(env_id, monkeypatch):
    def built(self):
        raise AssertionError("the model was built before the value was checked")

    monkeypatch.setattr(NewtonVectorEnv, "_build_simulation", built)
    cases = _refusals(env_id)
    assert len(cases) >= 40  # the shipped configs and either solver declare at least that many bounds
    accepted = []
    for name, kwargs in cases:
        try:
            make(env_id, 1, **kwargs)
        except ValueError as e:
            message = str(e)
            assert message.startswith((f"{name}:", f"solver_options[{name!r}]:")), message
            assert "\n" not in message and "expected" in message, message
            continue
        accepted.append(kwargs)
    assert accepted == []


def test_a_negative_cost_weight_and_zero_solver_iterations_are_refused_in_one_line(tmp_path, capsys):
    with pytest.raises(ValueError) as e:
        make(ANT, 1, ctrl_cost_weight=-1)
    assert (
        str(e.value)
        == "ctrl_cost_weight: expected a number >= 0 (a cost weight; a negative one pays for the cost), got -1"
    )
    with pytest.raises(ValueError, match=r"^solver_options\['iterations'\]: expected an int >= 1 \(PGS sweeps"):
        make("steel_envs/PushCube-v0", 1, solver_options={"iterations": 0})
    with pytest.raises(ValueError, match=r"^solver_options\['contact_speculative_scale'\]: expected a number in"):
        make("steel_envs/PushCube-v0", 1, solver_options={"contact_speculative_scale": 1.5})
    assert math.isinf(
        steel_envs.SteelSolverOptions().replace({"joint_limit_activation_gap": math.inf}).joint_limit_activation_gap
    )

    from steel_envs.cli import main

    argv = ["train", ANT, "--env.ctrl-cost-weight", "-1", "--max-iterations", "1", "--num-envs", "2"]
    assert main([*argv, "--no-progress", "--log-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        err.startswith("steel-envs train: ctrl_cost_weight: expected a number >= 0 (a cost weight")
        and len(err.splitlines()) == 1
    ), err
