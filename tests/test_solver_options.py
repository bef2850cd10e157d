"""SteelSolverOptions and VBDSolverOptions mirror their solvers' __init__; overrides reach the solver; unknown keys
raise."""

from __future__ import annotations

import dataclasses
import inspect
import math

import pytest
from conftest import CARTPOLE, make
from newton.solvers import SolverSteel, SolverVBD

from steel_envs.solver_options import SteelSolverOptions, VBDSolverOptions


@pytest.mark.parametrize(
    ("solver", "options", "not_options"),
    [
        (SolverSteel, SteelSolverOptions, ()),
        (SolverVBD, VBDSolverOptions, ("collision_pipeline", "integrate_with_external_rigid_solver")),
    ],
)
def test_fields_and_defaults_match_the_installed_solver(solver, options, not_options):
    params = {
        name: p.default
        for name, p in inspect.signature(solver.__init__).parameters.items()
        if name not in ("self", "model", *not_options)
    }
    fields = {f.name: f.default for f in dataclasses.fields(options)}
    assert list(fields) == list(params)
    for name, default in params.items():
        if isinstance(default, float) and math.isinf(default):
            assert math.isinf(fields[name]), name
        else:
            assert fields[name] == default, name


def test_unknown_key_names_it_and_lists_valid_keys():
    with pytest.raises(ValueError, match=r"iteration_count.*valid keys are \[.*'iterations'"):
        SteelSolverOptions().replace({"iteration_count": 3})
    with pytest.raises(ValueError, match="iteration_count"):
        make(CARTPOLE, 1, solver_options={"iteration_count": 3})
    with pytest.raises(TypeError, match="solver_options"):
        SteelSolverOptions().replace([("iterations", 3)])


def test_overrides_reach_the_solver_and_scene_values_stay():
    env = make(CARTPOLE, 2, solver_options={"iterations": 7, "baumgarte": 0.1})
    assert env.solver.iterations == 7
    assert env.solver.baumgarte == pytest.approx(0.1)
    assert env.solver_options.iterations == 7
    env.close()


def test_ant_scene_values():
    from steel_envs.tasks.ant_run import AntRunEnv

    o = AntRunEnv.solver_defaults
    assert o.enable_joint_limits is True
    assert math.isfinite(o.joint_limit_activation_gap)
    assert o.articulation_constraint_max > 32
