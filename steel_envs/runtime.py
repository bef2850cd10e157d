"""Process set-up shared by the command line and the shard workers."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import tempfile
import threading

__all__ = ["init_warp", "verbose"]

_state = {"verbose": False}
_stderr_lock = threading.Lock()
_stderr_capture: dict = {"depth": 0, "saved": None, "file": None}


def verbose() -> bool:
    """Whether this process runs with ``--verbose`` (set by :func:`init_warp`): Warp's, the compiler's and third-party
    libraries' notices are shown."""
    return _state["verbose"]


def init_warp(verbose: bool = False) -> None:
    """Initialize Warp; unless ``verbose``, its banner, kernel-load messages, native start-up notices (on a
    machine without a GPU, "Could not find or load the NVIDIA CUDA driver" on every command, which also breaks
    progress bars) and the CPU compiler's warnings about generated kernel code (on a kernel's first compile) stay
    out of the output; a failing compile still shows them."""
    import warp as wp

    _state["verbose"] = verbose
    wp.config.log_level = wp.LOG_INFO if verbose else wp.LOG_WARNING
    if verbose:
        wp.init()
        return
    _quiet_cpu_compiler()
    sys.stderr.flush()
    saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        wp.init()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def _quiet_cpu_compiler() -> None:
    """Route the diagnostics of Warp's in-process CPU compiler (clang, writing to file descriptor 2) to a temporary
    file while it compiles; they are written out only if the build fails. Warp has no setting for them; the wrapper
    replaces ``warp._src.build.build_cpu``, which Warp looks up at each compile, and leaves Warp unchanged if that
    function is gone."""
    import warp._src.build as build

    original = getattr(build, "build_cpu", None)
    if original is None or getattr(original, "steel_envs_quiet", False):
        return

    @functools.wraps(original)
    def build_cpu(*args, **kwargs):
        log = b""
        try:
            with _native_stderr_captured() as captured:
                try:
                    return original(*args, **kwargs)
                except Exception:
                    captured.seek(0)
                    log = captured.read()
                    raise
        finally:
            if log:  # the compiler's reasons, once file descriptor 2 is back
                sys.stderr.write(log.decode(errors="replace"))

    build_cpu.steel_envs_quiet = True
    build.build_cpu = build_cpu


@contextlib.contextmanager
def _native_stderr_captured():
    """File descriptor 2 goes to a temporary file (the one returned) until the outermost of nested or concurrent
    uses ends; Python's ``sys.stderr`` is flushed first."""
    with _stderr_lock:
        if _stderr_capture["depth"] == 0:
            sys.stderr.flush()
            _stderr_capture["file"] = tempfile.TemporaryFile()  # noqa: SIM115 (closed by the outermost exit)
            _stderr_capture["saved"] = os.dup(2)
            os.dup2(_stderr_capture["file"].fileno(), 2)
        _stderr_capture["depth"] += 1
        captured = _stderr_capture["file"]
    try:
        yield captured
    finally:
        with _stderr_lock:
            _stderr_capture["depth"] -= 1
            if _stderr_capture["depth"] == 0:
                sys.stderr.flush()
                os.dup2(_stderr_capture["saved"], 2)
                os.close(_stderr_capture["saved"])
                _stderr_capture["file"].close()
