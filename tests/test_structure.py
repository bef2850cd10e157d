"""Structure the code keeps: ruff's lint (including SLF001: no module touches another's private attributes) and
format pass on the whole checkout, as configured in pyproject.toml."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ruff(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    exe = shutil.which("ruff")
    command = [exe] if exe else [sys.executable, "-m", "ruff"]
    return subprocess.run([*command, *args], cwd=ROOT, input=stdin, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("args", [("check", "."), ("format", "--check", ".")], ids=["lint", "format"])
def test_ruff_passes(args: tuple[str, ...]) -> None:
    result = _ruff(*args)
    assert result.returncode == 0, result.stdout + result.stderr


def test_private_attribute_access_across_modules_is_caught() -> None:
    """The SLF001 rule is on for the package: a probe that reads another object's private attribute fails it."""
    probe = "def f(env):\n    return env._episode_length\n"
    result = _ruff("check", "--stdin-filename", "steel_envs/probe.py", "-", stdin=probe)
    assert result.returncode == 1 and "SLF001" in result.stdout, result.stdout
    result = _ruff("check", "--stdin-filename", "tests/probe.py", "-", stdin=probe)
    assert result.returncode == 0, result.stdout  # tests may inspect internals


_IMPORT_PROBE = """
import sys
import steel_envs
import warp._src.context as warp_context
optional = ("matplotlib", "scipy", "mujoco", "rsl_rl", "stable_baselines3", "skrl", "torchrl", "tensordict",
            "onnxruntime", "tyro", "viser", "imageio")
print([m for m in sys.modules if m.split(".")[0] in optional or m.startswith(("steel_envs.training",
       "steel_envs.adapters"))])
print(warp_context.runtime is None)
"""


def test_import_stays_light() -> None:
    """``import steel_envs`` registers every task (their modules load) but imports no optional library or training
    code and leaves Warp uninitialised: no device query and no kernel compiled or loaded until an env is built."""
    result = subprocess.run([sys.executable, "-c", _IMPORT_PROBE], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    heavy, warp_idle = result.stdout.split("\n")[-3:-1]
    assert heavy == "[]" and warp_idle == "True", result.stdout


_CORE_MODULES = ("core.py", "backends.py", "hooks.py", "spec.py", "arguments.py", "vector_env.py", "vbd_env.py")


def test_the_core_env_stays_readable() -> None:
    """Issue 12's shape: the env core, its backends and its components have no class over 500 lines and no function
    over 60 (docstrings included), counted from the source."""
    root = ROOT / "steel_envs"
    files = [root / name for name in _CORE_MODULES] + sorted((root / "components").glob("*.py"))
    too_long = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            limit = 500 if isinstance(node, ast.ClassDef) else 60
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.end_lineno - node.lineno + 1 > limit:
                too_long.append(f"{path.name}:{node.name} {node.end_lineno - node.lineno + 1} lines")
    assert len(files) >= 12 and not too_long, too_long


_GROUP_BUFFERS = {"reward_terms", "flags", "termination_flags", "obs", "metric_values", "values", "privileged"}
"""Parameter names of the buffers the core writes from a task's terms (rewards, terminations, observations,
metrics)."""


def _is_warp_code(decorator: ast.expr) -> bool:
    """``@wp.kernel``, ``@wp.func`` (with or without arguments) or ``@term(...)``."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return name in {"kernel", "func", "term"}


def test_tasks_return_term_values_and_never_write_a_group_buffer() -> None:
    """A task's terms are functions returning values; the core's term groups write the buffers. No Warp kernel or
    function under tasks/ (or the test-only task) takes a group buffer as a parameter, and no task module reaches the
    statistics or the observation pipeline."""
    files = [*sorted((ROOT / "tasks").rglob("*.py")), ROOT / "tests" / "pendulum_swingup.py"]
    found = []
    for path in files:
        source = path.read_text()
        found += [f"{path.name}: {word}" for word in (".stats.", "obs_pipeline", "reward_terms[") if word in source]
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef) and any(_is_warp_code(d) for d in node.decorator_list):
                params = {a.arg for a in node.args.args} & _GROUP_BUFFERS
                found += [f"{path.name}:{node.name}({p})" for p in sorted(params)]
    assert len(files) >= 10 and not found, found
