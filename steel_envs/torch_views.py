"""Torch tensors of the library that land on the env's device whatever torch's defaults say.

``wp.to_torch`` wraps a CPU array with a device-less ``torch.as_tensor`` (through NumPy), which follows
``torch.set_default_device(...)``: with a default of ``"cuda"`` the "view" is a one-off copy on the GPU that no
step ever updates, with ``"meta"`` it holds no data at all. Every view the library hands out goes through
:func:`to_torch`, which pins that constructor to the array's own device. (The default dtype never applies: the
view takes the array's dtype.) Third-party code the library drives that allocates without a device or dtype
(rsl_rl's models and rollout storage) is built inside :func:`library_defaults`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch
import warp as wp

__all__ = ["library_defaults", "to_torch"]


def to_torch(array: wp.array) -> torch.Tensor:
    """A torch view of ``array``: same storage, shape and dtype, on the torch device of the array's device,
    whatever ``torch.set_default_device`` or ``torch.set_default_dtype`` say.

    Args:
        array: A Warp array on the CPU or a CUDA device torch can address.

    Returns:
        A tensor sharing ``array``'s memory (``data_ptr() == array.ptr``); writes through either are seen by both.

    Raises:
        RuntimeError: As ``wp.to_torch``, for an array torch cannot view (a struct dtype, a device torch lacks).
    """
    # The device context fills in the device of the constructors Warp calls without one (its CPU path); an
    # explicit device (its CUDA path) is left as is.
    with torch.device(wp.device_to_torch(array.device)):
        return wp.to_torch(array)


@contextlib.contextmanager
def library_defaults(device: torch.device | str) -> Iterator[None]:
    """Within the block, torch constructors given no device allocate on ``device`` and those given no dtype make
    float32, whatever ``torch.set_default_device`` / ``torch.set_default_dtype`` say outside; both are restored
    on exit (the default dtype is process-wide, so other threads see float32 meanwhile).

    Args:
        device: A torch device or its string (``"cpu"``, ``"cuda:0"``).
    """
    dtype = torch.get_default_dtype()
    torch.set_default_dtype(torch.float32)
    try:
        with torch.device(device):
            yield
    finally:
        torch.set_default_dtype(dtype)
