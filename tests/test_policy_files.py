"""A checkpoint or exported policy of another task is refused in one line by every command that plays one; an
export records its task; exporting and a kernel's first compile print nothing unless ``--verbose``."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys

import onnxruntime
import pytest
import torch
from conftest import CARTPOLE, make
from steel_envs.training.policy import export

from steel_envs.cli import main
from steel_envs.policies import load_policy, load_policy_callable, reference_checkpoint

SWINGUP = "steel_envs/CartpoleSwingup-v0"  # 5 observations, 1 action; CartpoleBalance has 4 and 1


def test_an_export_records_its_task_and_another_task_refuses_it(tmp_path):
    from steel_envs.deployment import EXPORT_METADATA

    checkpoint = reference_checkpoint(CARTPOLE)
    onnx_file = export(checkpoint, out=str(tmp_path / "policy.onnx"))
    script_file = export(checkpoint, format="torchscript", out=str(tmp_path / "policy.pt"))
    meta = onnxruntime.InferenceSession(onnx_file, providers=["CPUExecutionProvider"]).get_modelmeta()
    recorded = {"env_id": CARTPOLE, "obs_dim": "4", "action_dim": "1"}
    found = {k: v for k, v in meta.custom_metadata_map.items() if k.startswith("steel_envs.")}
    assert found.pop("steel_envs.contract") and found == {f"steel_envs.{k}": v for k, v in recorded.items()}
    extra = {EXPORT_METADATA: ""}
    torch.jit.load(script_file, _extra_files=extra)
    found = json.loads(extra[EXPORT_METADATA])
    assert found.pop("contract") and found == recorded

    balance, swingup = make(CARTPOLE, 2), make(SWINGUP, 2)
    for path in (onnx_file, script_file):
        assert load_policy_callable(path, balance, 0)(torch.zeros(2, 4)).shape == (2, 1)
        with pytest.raises(ValueError) as e:
            load_policy_callable(path, swingup, 0)
        assert str(e.value) == f"policy: {path} was trained on {CARTPOLE}, not {SWINGUP}"

    # Files exported without the record (rsl_rl's own TorchScript export; an ONNX model without metadata): their
    # sizes are checked.
    loaded, env = load_policy(checkpoint)
    env.close()
    loaded.runner.export_policy_to_jit(str(tmp_path), "bare.pt")
    import onnx

    model = onnx.load(onnx_file)
    del model.metadata_props[:]
    onnx.save(model, str(tmp_path / "bare.onnx"))
    with pytest.raises(ValueError, match=rf"^policy: .*bare.pt does not map the 5 observations of {SWINGUP} to 1"):
        load_policy_callable(str(tmp_path / "bare.pt"), swingup, 0)
    with pytest.raises(ValueError, match=rf"^policy: .*bare.onnx maps 4 observations to 1 actions; {SWINGUP} has 5"):
        load_policy_callable(str(tmp_path / "bare.onnx"), swingup, 0)
    assert load_policy_callable(str(tmp_path / "bare.pt"), balance, 0)(torch.zeros(2, 4)).shape == (2, 1)


@pytest.mark.parametrize(
    "argv",
    [
        ["evaluate", CARTPOLE, "--episodes", "1", "--num-envs", "1", "--shards", "1", "--policy"],
        ["play", "--env", CARTPOLE, "--episodes", "1", "--num-envs", "1", "--policy"],
        ["record", CARTPOLE, "--steps", "1", "--size", "32x24", "--policy"],
        ["view", CARTPOLE, "--num-envs", "1", "--steps", "1", "--policy"],
    ],
    ids=lambda argv: argv[0],
)
def test_another_tasks_checkpoint_is_refused_in_one_line(argv, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # whatever a command writes by default lands here
    if argv[0] == "view":
        pytest.importorskip("viser", reason="the view extra is not installed")
    ant = reference_checkpoint("steel_envs/AntRun-v0")
    assert main([*argv, ant]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"steel-envs {argv[0]}: policy: {ant} was trained on steel_envs/AntRun-v0, not {CARTPOLE}", err


def test_export_prints_its_path_only_and_verbose_shows_the_exporters(tmp_path, capsys):
    # torch.onnx logs "torchvision is not installed ..." on every export, through a handler that pytest's capture
    # may not see: the records are counted at the source.
    records: list[logging.LogRecord] = []
    counter = logging.Handler(logging.WARNING)
    counter.emit = records.append
    onnx_log = logging.getLogger("torch.onnx")
    onnx_log.addHandler(counter)
    out = str(tmp_path / "policy.onnx")
    try:
        assert main(["export", "--checkpoint", reference_checkpoint(CARTPOLE), "--out", out]) == 0
        printed = capsys.readouterr()
        assert (printed.out, printed.err, [r.getMessage() for r in records]) == (f"{out}\n", "", [])
        export(reference_checkpoint(CARTPOLE), out=out, verbose=True)
        assert "[torch.onnx]" in capsys.readouterr().out
    finally:
        onnx_log.removeHandler(counter)


_COMPILE = """
import sys
from steel_envs.runtime import init_warp
init_warp(verbose="--verbose" in sys.argv)
import warp as wp

@wp.kernel
def overflowing(a: wp.array(dtype=wp.int32)):
    a[0] = wp.int32(4289765520)  # the C++ compiler warns that the constant does not fit

a = wp.zeros(1, dtype=wp.int32, device="cpu")
wp.launch(overflowing, dim=1, inputs=[a], device="cpu")
print(a.numpy()[0])
"""


def test_a_kernels_first_compile_shows_compiler_warnings_only_with_verbose(tmp_path):
    script = tmp_path / "compile.py"  # Warp reads a kernel's source from its file
    script.write_text(_COMPILE)
    for verbose in (False, True):
        cache = tmp_path / f"cache_{verbose}"  # an empty kernel cache: the kernel compiles
        argv = [sys.executable, str(script), *(["--verbose"] if verbose else [])]
        env = {**os.environ, "WARP_CACHE_PATH": str(cache)}
        result = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
        assert result.returncode == 0 and result.stdout.splitlines()[-1] == str(4289765520 - 2**32), result.stderr
        if verbose:
            assert "warning: implicit conversion" in result.stderr, result.stderr
        else:
            assert (result.stdout, result.stderr) == (f"{4289765520 - 2**32}\n", ""), result.stdout + result.stderr
