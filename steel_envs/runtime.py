"""Process set-up shared by the command line and the shard workers."""

from __future__ import annotations

import os
import sys

__all__ = ["init_warp"]


def init_warp(verbose: bool = False) -> None:
    """Initialize Warp; unless ``verbose``, its banner, kernel-load messages and native start-up notices (on a
    machine without a GPU, "Could not find or load the NVIDIA CUDA driver" on every command, which also breaks
    progress bars) stay out of the output."""
    import warp as wp

    wp.config.log_level = wp.LOG_INFO if verbose else wp.LOG_WARNING
    if verbose:
        wp.init()
        return
    sys.stderr.flush()
    saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        wp.init()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)
