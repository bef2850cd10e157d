"""Structure the code keeps: ruff's lint (including SLF001: no module touches another's private attributes) and
format pass on the whole checkout, as configured in pyproject.toml."""

from __future__ import annotations

import ast
import re
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
light = [m for m in sys.modules if m.split(".")[0] in ("warp", "newton", "torch") or m.startswith("steel_envs.tasks.")]
steel_envs.registry()
import warp._src.context as warp_context
optional = ("matplotlib", "scipy", "mujoco", "rsl_rl", "stable_baselines3", "skrl", "torchrl", "tensordict",
            "onnxruntime", "tyro", "viser", "imageio")
print(light)
print([m for m in sys.modules if m.split(".")[0] in optional or m.startswith(("steel_envs.training",
       "steel_envs.adapters"))])
print(warp_context.runtime is None)
"""


def test_import_stays_light() -> None:
    """``import steel_envs`` registers every shipped ID without loading a task module, Warp, Newton or torch; loading
    every task (``registry()``) imports no optional library or training code and leaves Warp uninitialised: no
    device query and no kernel compiled or loaded until an env is built."""
    result = subprocess.run([sys.executable, "-c", _IMPORT_PROBE], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    light, heavy, warp_idle = result.stdout.split("\n")[-4:-1]
    assert light == heavy == "[]" and warp_idle == "True", result.stdout


_PACKAGES = {"steel_envs": "steel_envs", "envs": "steel_envs.envs", "tasks": "steel_envs.tasks"}
_PACKAGES["training"] = "steel_envs.training"


def _project_modules() -> dict[str, Path]:
    """Dotted name -> file of every module of the package (``envs/``, ``tasks/``, ``training/`` are its
    subpackages, as pyproject's package-dir maps them)."""
    found = {}
    for folder, package in _PACKAGES.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            found[".".join([package, *(parts[:-1] if parts[-1] == "__init__" else parts)])] = path
    return found


def _runtime_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement that runs: module level or inside a function, not under ``if TYPE_CHECKING:``."""
    typing_only = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            typing_only |= {id(n) for statement in node.body for n in ast.walk(statement)}
    return [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) and id(n) not in typing_only]


def _imported(name: str, path: Path, node: ast.Import | ast.ImportFrom, modules: dict) -> list[tuple[str, str]]:
    """(module, name or "") pairs that ``node`` in module ``name`` imports, relative imports resolved."""
    if isinstance(node, ast.Import):
        return [(a.name, "") for a in node.names]
    base = node.module or ""
    if node.level:
        parent = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        base = ".".join(parent[: len(parent) - node.level + 1] + ([base] if base else []))
    return [((f"{base}.{a.name}", "") if f"{base}.{a.name}" in modules else (base, a.name)) for a in node.names]


def _import_graph() -> dict[str, set[str]]:
    modules = _project_modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in _runtime_imports(ast.parse(path.read_text())):
            graph[name] |= {m for m, _ in _imported(name, path, node, modules) if m in modules and m != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while not component or component[-1] != v:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_import_graph_has_no_cycle_and_the_library_never_imports_training() -> None:
    """Every import that runs (function-level ones included) forms no cycle, and nothing outside training/ imports
    training/ except the console script's dispatch table (a module name, not an import)."""
    graph = _import_graph()
    assert len(graph) > 60 and "steel_envs.registration" in graph["steel_envs.factory"]
    assert _cycles(graph) == []
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]  # the check can fail
    reaching = {m: sorted(t for t in ts if t.startswith("steel_envs.training")) for m, ts in graph.items()}
    assert {m: t for m, t in reaching.items() if t and not m.startswith("steel_envs.training")} == {}


def test_every_import_names_the_module_that_defines_the_name() -> None:
    """One canonical path per symbol: no module of the project or its tests imports a name from a module that only
    re-exports it (the top-level ``steel_envs`` facade is the users' API; tests/test_api.py checks it resolves to
    the defining modules)."""
    modules = _project_modules()
    defined: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        defined[name] = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        for n in tree.body:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AnnAssign) else []
            defined[name] |= {t.id for t in targets if isinstance(t, ast.Name)}
    offenders = []
    tests = {f"tests.{p.stem}": p for p in (ROOT / "tests").glob("*.py")}
    for name, path in {**modules, **tests}.items():
        for node in _runtime_imports(ast.parse(path.read_text())):
            for module, symbol in _imported(name, path, node, modules):
                if symbol and module in defined and symbol not in defined[module]:
                    offenders.append(f"{path.relative_to(ROOT)}: from {module} import {symbol}")
    assert not offenders, offenders


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


def _is_kernel(node: ast.FunctionDef) -> bool:
    return any("kernel" in ast.unparse(d) for d in node.decorator_list)


def test_no_function_over_80_lines_and_no_class_over_500() -> None:
    """Across the package (library, envs, tasks, training tools): no function over 80 lines, Warp kernels
    excepted (a kernel's body is one device loop), and no class over 500, docstrings included; the doctor is a
    class per check (``steel_envs/doctor/``), none over 250."""
    too_long = []
    modules = _project_modules()
    assert sum(name.startswith("steel_envs.doctor.") for name in modules) >= 8
    for name, path in modules.items():
        class_limit = 250 if name.startswith("steel_envs.doctor") else 500
        for node in ast.walk(ast.parse(path.read_text())):
            lines = getattr(node, "end_lineno", 0) - getattr(node, "lineno", 0) + 1
            long_class = isinstance(node, ast.ClassDef) and lines > class_limit
            long_function = isinstance(node, ast.FunctionDef) and lines > 80 and not _is_kernel(node)
            if long_class or long_function:
                too_long.append(f"{path.relative_to(ROOT)}:{node.name} {lines} lines")
    assert not too_long, too_long


_STARTUP_PROBE = """
import contextlib, io, sys
from steel_envs.cli import main
for argv in {commands}:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        main(argv)
print(sorted({{m.split(".")[0] for m in sys.modules}} & {{"torch", "newton", "warp"}}))
"""


@pytest.mark.parametrize(
    ("commands", "loaded"),
    [
        ([["--help"], ["list"], ["rollout", "--help"], ["doctor", "--help"], ["view", "--help"]], "[]"),
        ([["train", "--help"]], "['warp']"),
    ],
    ids=["light", "train"],
)
def test_help_and_list_start_without_torch_or_newton(commands: list, loaded: str) -> None:
    """``steel-envs --help``, ``list`` and the commands' ``--help`` load neither torch nor Newton (their import is
    most of a command's start-up); ``train --help`` needs Warp's types for the task config, not its runtime."""
    probe = _STARTUP_PROBE.format(commands=commands)
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == loaded, result.stdout


def test_the_training_script_and_the_gpu_check_stay_short() -> None:
    """train.py holds the training loop only (settings are typed configs); the GPU check's shell script orders
    stages whose Python lives in modules."""
    assert len((ROOT / "training" / "train.py").read_text().splitlines()) <= 400
    script = (ROOT / "training" / "benchmarks" / "gpu_check.sh").read_text()
    assert len(script.splitlines()) <= 150 and not re.search(r"<<-?\s*'?PY", script), "Python in a heredoc"


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


def _comment_and_docstring_lines(source: str) -> list[tuple[int, str]]:
    """(line, text) of every ``#`` comment (``tokenize``) and every line of every docstring, attribute docstrings
    included (a bare string statement anywhere, found with ``ast``)."""
    import io
    import tokenize

    found = [(t.start[0], t.string) for t in tokenize.generate_tokens(io.StringIO(source).readline)]
    found = [(line, text) for line, text in found if text.startswith("#")]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            found += [(node.lineno + i, line) for i, line in enumerate(node.value.value.splitlines())]
    return sorted(found)


def _history_citations(source: str) -> list[str]:
    """Comment and docstring lines of ``source`` that cite an issue number (``issue 16``, ``(issue 13 item 2``,
    ``issues 12 and 14``) or a date (``2026-12-03``), as ``line: text``."""
    import re

    pattern = re.compile(r"\bissues? \d+|\b\d{4}-\d{2}-\d{2}\b", re.IGNORECASE)
    return [f"{line}: {text.strip()}" for line, text in _comment_and_docstring_lines(source) if pattern.search(text)]


def test_comments_and_docstrings_cite_no_issue_or_date() -> None:
    """Comments and docstrings of the package say why, in the present tense: measurement histories, issue numbers
    and dates belong in the CHANGELOG and the commit messages. Code and string literals are not checked."""
    sample = '"""Fast (Issue 16)."""\nX = 1  # 12 iterations (issue 13 item 2)\n"""Measured 2026-12-03."""\n'
    sample += 'def f():\n    """Issues 12 and 14."""\n    return "issue 16"  # tissue 3 is fine\n'
    assert [hit.split(":")[0] for hit in _history_citations(sample)] == ["1", "2", "3", "5"]  # the check can fail
    files = [p for folder in ("steel_envs", "envs", "tasks", "training") for p in sorted((ROOT / folder).rglob("*.py"))]
    offenders = [f"{p.relative_to(ROOT)}:{hit}" for p in files for hit in _history_citations(p.read_text())]
    assert len(files) > 60 and not offenders, "\n".join(offenders)
