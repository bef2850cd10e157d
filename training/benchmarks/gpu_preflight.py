"""The GPU check's preflight: versions of the stack, the GPU, its driver and toolkit, Warp's conditional graphs, and
whether torch and Warp both see the CUDA device and share memory with it zero-copy.

Run by ``training/benchmarks/gpu_check.sh`` before any stage (``python -m steel_envs.training.benchmarks.gpu_stages
preflight``); a failed preflight stops the check, since every later stage would fail the same way.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import platform
import shutil
import subprocess
import sys
from typing import Any

__all__ = ["preflight"]

_DISTRIBUTIONS = ("rsl-rl-lib", "tensordict", "tyro", "tensorboard", "matplotlib", "pytest")
"""Versions reported: the training stages' libraries and the test runner."""


def _version(distribution: str) -> str | None:
    try:
        return md.version(distribution)
    except md.PackageNotFoundError:
        return None


def _torch_info(info: dict[str, Any]) -> None:
    import torch

    info["torch"] = torch.__version__
    info["torch_cuda_build"] = torch.version.cuda
    info["torch_cuda_available"] = torch.cuda.is_available()
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        info["gpu"] = p.name
        info["gpu_memory_gib"] = round(p.total_memory / 2**30, 1)
        info["compute_capability"] = f"{p.major}.{p.minor}"
        info["torch_gpu_count"] = torch.cuda.device_count()


def _warp_info(info: dict[str, Any]) -> None:
    import warp as wp

    wp.config.log_level = wp.LOG_WARNING
    wp.init()
    info["warp"] = wp.__version__
    info["warp_cuda_available"] = wp.is_cuda_available()
    info["warp_cuda_devices"] = wp.get_cuda_device_count()
    driver, toolkit = wp.get_cuda_driver_version(), wp.get_cuda_toolkit_version()
    info["cuda_driver"] = ".".join(map(str, driver)) if driver else None
    info["cuda_toolkit"] = ".".join(map(str, toolkit)) if toolkit else None
    info["conditional_graphs"] = wp.is_conditional_graph_supported()
    info["kernel_cache"] = wp.config.kernel_cache_dir
    if shutil.which("nvidia-smi"):
        query = ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.max.sm", "--format=csv,noheader"]
        try:
            smi = subprocess.run(query, capture_output=True, text=True, timeout=20)
            info["nvidia_smi"] = smi.stdout.strip() or smi.stderr.strip()
        except (OSError, subprocess.SubprocessError) as e:
            info["nvidia_smi"] = f"failed: {e}"


def _cuda_problems(device: str, info: dict[str, Any]) -> list[str]:
    """Why ``device`` cannot run the stages: torch or Warp sees no CUDA, or a torch write through ``wp.to_torch``
    does not reach the Warp array (the envs hand their buffers to torch that way)."""
    import torch
    import warp as wp

    problems = []
    if not torch.cuda.is_available():
        problems.append(f"torch {torch.__version__} sees no CUDA device (torch.version.cuda={torch.version.cuda})")
    if not wp.is_cuda_available():
        problems.append(f"Warp {wp.__version__} sees no CUDA device (driver {info['cuda_driver']})")
    if problems:
        return problems
    try:
        d = wp.get_device(device)
        info["warp_device"] = {"name": d.name, "arch": d.arch, "sms": d.sm_count, "mempool": d.is_mempool_enabled}
        a = wp.zeros(4, dtype=wp.float32, device=d)
        wp.to_torch(a).add_(1.0)
        torch.cuda.synchronize()
        if a.numpy().tolist() != [1.0] * 4:
            problems.append("a torch write to a wp.to_torch view did not reach the Warp array")
    except Exception as e:  # any failure of the device is the preflight's finding, not a crash
        problems.append(f"Warp device {device}: {type(e).__name__}: {e}")
    return problems


def _package_problems(info: dict[str, Any]) -> list[str]:
    """Versions of Newton, Gymnasium and the training libraries; problems: steel_envs not importable, the
    ``steel-envs`` command not on PATH. rsl_rl failing to import is reported, not a problem (only training needs it:
    tensordict's compiled extension is built against one torch)."""
    problems = []
    try:
        import gymnasium
        import newton

        import steel_envs

        info["newton"] = newton.__version__
        info["gymnasium"] = gymnasium.__version__
        info["steel_envs_from"] = steel_envs.__file__
    except Exception as e:
        problems.append(f"import steel_envs failed: {type(e).__name__}: {e}")
    for distribution in _DISTRIBUTIONS:
        info[distribution] = _version(distribution)
    try:
        import rsl_rl.runners  # noqa: F401

        info["rsl_rl import"] = "ok"
    except Exception as e:
        info["rsl_rl import"] = f"FAILED ({type(e).__name__}: {e}): the train and learn stages will fail"
    info["steel-envs command"] = shutil.which("steel-envs")
    if info["steel-envs command"] is None:
        problems.append("the steel-envs command is not on PATH (source .gpukit/b/unpack.sh first)")
    return problems


def preflight(device: str, out: str) -> int:
    """Print the stack's versions and the device's properties, write them to ``out`` (JSON, with ``problems``: a
    list of one-line strings) and return the exit status.

    Args:
        device: The device the stages will use: ``cuda:<k>``, or ``cpu`` (a dry run: CUDA is not required).
        out: Path of the JSON file.

    Returns:
        0 when the stages can run, 2 when a problem was found (no CUDA seen by torch or Warp on a CUDA device,
        steel_envs not importable, no ``steel-envs`` command).
    """
    info: dict[str, Any] = {"device": device, "python": sys.version.split()[0], "platform": platform.platform()}
    _torch_info(info)
    _warp_info(info)
    problems = [] if device == "cpu" else _cuda_problems(device, info)
    problems += _package_problems(info)
    info["problems"] = problems
    for k, v in info.items():
        print(f"  {k:22s} {v}")
    with open(out, "w") as f:
        json.dump(info, f, indent=2, default=str)
    if problems:
        print("PREFLIGHT FAILED:\n  " + "\n  ".join(problems))
        return 2
    return 0
