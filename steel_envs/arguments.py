"""Host-side checks of what a user passes to an env: the constructor's arguments, actions, reset masks and collision
options. Each raises a ValueError (or TypeError) naming the argument, the expected and the received value; none
touches the device except to copy a validated batch there."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

import newton
import numpy as np
import torch
import warp as wp
from gymnasium.vector import AutoresetMode

__all__ = [
    "check_actions",
    "check_collision_options",
    "check_env_arguments",
    "check_episode_lengths",
    "check_reset_mask",
    "check_reset_options",
    "check_seed",
    "check_world_factors",
    "device_seed",
    "throughput_kwargs",
]

_COLLISION_CAPACITIES = ("rigid_contact_max", "soft_contact_max", "shape_pairs_max", "max_triangle_pairs")


def _is_int(value: Any) -> bool:
    return not isinstance(value, (bool, np.bool_)) and isinstance(value, (int, np.integer))


def check_seed(seed: Any) -> None:
    """Raise ValueError unless ``seed`` is None or an int >= 0."""
    if seed is not None and not (_is_int(seed) and seed >= 0):
        raise ValueError(f"seed: expected None or an int >= 0, got {seed!r}")


def check_env_arguments(
    *,
    num_envs: Any,
    max_episode_steps: Any,
    obs_mode: Any,
    render_mode: Any,
    render_size: Any,
    render_num_worlds: Any,
    autoreset_mode: Any,
    seed: Any,
    nonfinite_actions: Any,
    graph_capture: Any,
    world_offset: Any,
) -> AutoresetMode:
    """Check the env constructor's own arguments (``max_episode_steps`` already resolved from the task's default);
    return ``autoreset_mode`` as an ``AutoresetMode``.

    Raises:
        ValueError: On a wrong type or an out-of-range value, naming the argument.
    """
    if not (_is_int(num_envs) and 1 <= num_envs < 2**31):
        raise ValueError(f"num_envs: expected an int in [1, 2**31), got {num_envs!r}")
    if not _is_int(max_episode_steps):
        raise ValueError(f"max_episode_steps: expected an int >= 1, got {max_episode_steps!r}")
    if not 1 <= max_episode_steps < 2**31:
        raise ValueError(f"max_episode_steps: expected an int in [1, 2**31), got {max_episode_steps!r}")
    if obs_mode not in ("state", "rgb", "depth"):
        raise ValueError(f"obs_mode: expected 'state', 'rgb' or 'depth', got {obs_mode!r}")
    if render_mode not in (None, "rgb_array"):
        raise ValueError(f"render_mode: expected None or 'rgb_array', got {render_mode!r}")
    if not (
        isinstance(render_size, (tuple, list))
        and len(render_size) == 2
        and all(_is_int(v) and 1 <= v <= 4096 for v in render_size)
    ):
        raise ValueError(f"render_size: expected (width, height) ints in [1, 4096], got {render_size!r}")
    if not (_is_int(render_num_worlds) and 1 <= render_num_worlds <= num_envs):
        raise ValueError(f"render_num_worlds: expected an int in [1, num_envs={num_envs}], got {render_num_worlds!r}")
    try:
        autoreset_mode = AutoresetMode(autoreset_mode)
    except ValueError:
        raise ValueError(
            f"autoreset_mode: expected one of {[m.value for m in AutoresetMode]}, got {autoreset_mode!r}"
        ) from None
    check_seed(seed)
    if nonfinite_actions not in ("raise", "end_episode"):
        raise ValueError(f"nonfinite_actions: expected 'raise' or 'end_episode', got {nonfinite_actions!r}")
    if graph_capture not in (True, False, "physics"):
        raise ValueError(f"graph_capture: expected True, False or 'physics', got {graph_capture!r}")
    if not (_is_int(world_offset) and world_offset >= 0):
        raise ValueError(f"world_offset: expected an int >= 0, got {world_offset!r}")
    return autoreset_mode


def check_collision_options(
    options: Mapping[str, Any] | None, enable_collisions: bool, defaults: Mapping[str, Any], owner: str
) -> dict[str, Any]:
    """``collision_options`` over the scene's ``defaults``, as a dict of ``newton.CollisionPipeline`` keywords.

    Raises:
        ValueError: On a non-mapping, options for a scene without collisions (``owner`` names it), an unknown
            keyword, a non-bool for a bool option or a capacity (``rigid_contact_max``, ``soft_contact_max``, ...)
            that is not None or an int >= 1. Other values are checked by Newton.
    """
    if options is None:
        options = {}
    if not isinstance(options, Mapping):
        raise ValueError(f"collision_options: expected a dict or None, got {type(options).__name__}")
    if options and not enable_collisions:
        raise ValueError(f"collision_options: {owner} runs no collision pipeline; pass None")
    parameters = inspect.signature(newton.CollisionPipeline.__init__).parameters
    accepted = set(parameters) - {"self", "model"}
    unknown = sorted(set(options) - accepted, key=str)
    if unknown:
        raise ValueError(
            f"collision_options: unknown keyword(s) {unknown}; newton.CollisionPipeline takes {sorted(accepted)}"
        )
    for name, value in options.items():
        default = parameters[name].default
        if isinstance(default, bool) and not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"collision_options['{name}']: expected a bool, got {value!r}")
        if name in _COLLISION_CAPACITIES and value is not None and not (_is_int(value) and value >= 1):
            raise ValueError(f"collision_options['{name}']: expected None or an int >= 1, got {value!r}")
    return {**defaults, **options}


def throughput_kwargs(device: str | None) -> dict[str, Any]:
    """Env keywords for loops that must not wait for the device every step (training, benchmarks, rollouts).

    On CUDA (``device``, or Warp's preferred device for None), ``nonfinite_actions="end_episode"``: a NaN or
    infinite action ends its world's episode as a truncation, reported in ``info["nonfinite_action"]`` and the
    episode statistics, instead of raising ValueError, which needs a host read of every action batch.
    """
    try:
        cuda = wp.get_device(device).is_cuda
    except Exception:  # not a device: the env's own check names the argument
        return {}
    return {"nonfinite_actions": "end_episode"} if cuda else {}


def check_actions(
    actions: Any, expected: tuple[int, int], device: torch.device, nonfinite_actions: str
) -> torch.Tensor:
    """Validate a batch of actions and return it as a contiguous float32 tensor on ``device``.

    Numpy arrays of any real dtype are clipped to [-1, 1] in their own precision and converted; torch tensors
    must be float32, dense and on ``device``. Non-finite entries raise unless ``nonfinite_actions`` is
    ``"end_episode"`` (then they pass through for the device to flag).

    Raises:
        TypeError: If ``actions`` is neither a torch tensor nor a numpy array.
        ValueError: On a wrong shape, dtype, layout or device, or a non-finite entry.
    """
    if isinstance(actions, np.ndarray):
        if actions.dtype.kind not in "fiu":
            raise ValueError(f"actions: expected a real dtype, got numpy {actions.dtype}")
        if actions.shape != expected:
            raise ValueError(f"actions: expected shape {expected}, got {actions.shape}")
        finite = np.isfinite(actions)
        if nonfinite_actions == "raise" and not finite.all():
            bad = np.flatnonzero(~finite.all(axis=1))[:8].tolist()
            raise ValueError(f"actions: expected finite values, got NaN or inf in world(s) {bad}")
        # Clipped in the input's own precision first, so finite values beyond float32 clip as documented;
        # non-finite entries stay NaN for the device to flag.
        clipped = np.where(finite, np.clip(actions, -1.0, 1.0), np.nan).astype(np.float32)
        return torch.from_numpy(clipped).to(device)
    if isinstance(actions, torch.Tensor):
        if actions.dtype != torch.float32:
            raise ValueError(f"actions: expected dtype torch.float32, got {actions.dtype}")
        if actions.layout != torch.strided:
            raise ValueError(f"actions: expected a dense (strided) tensor, got layout {actions.layout}")
        if actions.device != device:
            raise ValueError(f"actions: expected device {device}, got {actions.device}")
        if tuple(actions.shape) != expected:
            raise ValueError(f"actions: expected shape {expected}, got {tuple(actions.shape)}")
        # Lazy negation / conjugation bits are not in the memory Warp reads: materialize them.
        actions = actions.detach().resolve_neg().resolve_conj()
        if not actions.is_contiguous():
            actions = actions.contiguous()
    else:
        raise TypeError(f"actions: expected a torch.Tensor or numpy.ndarray, got {type(actions).__name__}")
    if nonfinite_actions != "raise":
        return actions
    finite = torch.isfinite(actions).all(dim=1)
    if not bool(finite.all()):
        bad = torch.nonzero(~finite).flatten()[:8].tolist()
        raise ValueError(f"actions: expected finite values, got NaN or inf in world(s) {bad}")
    return actions


def check_world_factors(name: str, value: Any, num_envs: int) -> np.ndarray | None:
    """Validate one argument of ``set_world_parameters``: None, or ``num_envs`` real factors > 0 that are finite in
    float32 (numpy, torch or a sequence); return them as float32 numpy.

    Raises:
        ValueError: On a wrong dtype or shape, or a factor that is not finite and > 0 in float32; naming ``name``.
    """
    if value is None:
        return None
    if isinstance(value, torch.Tensor):  # grad-tracking, low-precision or device tensors: their values, as float64
        value = value.detach().to("cpu", torch.float64 if value.is_floating_point() else value.dtype)
    raw = np.asarray(value)
    if raw.dtype.kind not in "iuf":
        raise ValueError(f"{name}: expected {num_envs} real factors > 0, got dtype {raw.dtype}")
    with np.errstate(over="ignore", under="ignore"):
        arr = raw.astype(np.float32)
    if arr.shape != (num_envs,) or not (np.isfinite(arr).all() and (arr > 0).all()):
        raise ValueError(f"{name}: expected {num_envs} finite factors > 0 (in float32), got {value!r}")
    return arr


def check_episode_lengths(lengths: Any, num_envs: int, max_episode_steps: int) -> torch.Tensor:
    """Validate the argument of ``set_episode_length``: ``num_envs`` integer step counts in [0, max_episode_steps)
    (torch, numpy or a sequence); return them as a CPU int32 tensor.

    Raises:
        ValueError: On another shape, a non-integer dtype or a count outside [0, max_episode_steps); naming
            ``lengths``.
    """
    # A sequence or array becomes a CPU tensor (not one on torch's default device); a tensor keeps its own device.
    t = lengths.detach() if isinstance(lengths, torch.Tensor) else torch.as_tensor(lengths, device="cpu")
    if t.shape != (num_envs,) or t.dtype.is_floating_point or t.dtype.is_complex or t.dtype == torch.bool:
        raise ValueError(f"lengths: expected ({num_envs},) integers, got shape {tuple(t.shape)} of dtype {t.dtype}")
    t = t.to("cpu")
    if len(t) and not (int(t.min()) >= 0 and int(t.max()) < max_episode_steps):
        raise ValueError(f"lengths: expected counts in [0, {max_episode_steps}), got [{int(t.min())}, {int(t.max())}]")
    return t.to(torch.int32)


def check_reset_options(
    options: Any, num_envs: int, device: torch.device, task: Any = None
) -> tuple[torch.Tensor | None, dict[str, torch.Tensor]]:
    """Validate ``reset``'s ``options``: its ``reset_mask`` as a bool tensor on ``device`` (None: all) and the
    per-world options of ``task`` (an env or its class: ``reset_options``, checked by its ``check_reset_option``)
    present, each a numeric (num_envs,) tensor on ``device``.

    Raises:
        ValueError: On a non-mapping, an unknown key, a bad mask (see :func:`check_reset_mask`) or a per-world
            option that is not a numeric numpy array or torch tensor of shape (num_envs,) or that the task refuses.
    """
    world_options = () if task is None else tuple(task.reset_options)
    options = {} if options is None else options
    if not isinstance(options, Mapping):
        raise ValueError(f"options: expected a dict or None, got {type(options).__name__}")
    known = ("reset_mask", *world_options)
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(f"options: unknown key(s) {unknown}; the options are {list(known)}")
    mask = options.get("reset_mask")
    values = {
        name: _check_world_tensor(options[name], f"options[{name!r}]", num_envs, device, numeric=True)
        for name in world_options
        if name in options
    }
    for name, value in values.items():
        task.check_reset_option(name, value)
    return (None if mask is None else check_reset_mask(mask, num_envs, device)), values


def check_reset_mask(mask: Any, num_envs: int, device: torch.device) -> torch.Tensor:
    """Validate ``options["reset_mask"]``: a bool numpy array or dense torch tensor of shape (num_envs,).

    Raises:
        ValueError: On a wrong type, dtype, layout or shape; the message names ``options['reset_mask']``.
    """
    return _check_world_tensor(mask, "options['reset_mask']", num_envs, device, numeric=False)


def _check_world_tensor(value: Any, label: str, num_envs: int, device: torch.device, *, numeric: bool) -> torch.Tensor:
    """One value per world: a numpy array or dense torch tensor of shape (num_envs,), of a bool dtype or (``numeric``)
    an integer or float one, as a tensor on ``device``.

    Raises:
        ValueError: On a wrong type, dtype, layout or shape; the message names ``label``.
    """
    kind = "numeric" if numeric else "bool"
    if isinstance(value, np.ndarray):
        if not ((value.dtype.kind in "iuf") if numeric else (value.dtype == np.bool_)):
            raise ValueError(
                f"{label}: expected dtype {'int or float' if numeric else 'bool'}, got numpy {value.dtype}"
            )
        value = torch.tensor(value, device=device)
    elif isinstance(value, torch.Tensor):
        dtype = value.dtype
        if not ((dtype != torch.bool and not dtype.is_complex) if numeric else (dtype == torch.bool)):
            raise ValueError(f"{label}: expected dtype {'int or float' if numeric else 'torch.bool'}, got {dtype}")
        if value.layout != torch.strided or value.device.type == "meta":
            raise ValueError(f"{label}: expected a dense tensor with data, got layout {value.layout} on {value.device}")
        value = value.to(device)
    else:
        raise ValueError(f"{label}: expected a {kind} numpy array or torch tensor, got {type(value).__name__}")
    if tuple(value.shape) != (num_envs,):
        raise ValueError(f"{label}: expected shape ({num_envs},), got {tuple(value.shape)}")
    return value


def device_seed(seed: int) -> int:
    """Map any seed >= 0 to the int32 seed of Warp's ``rand_init``, distinct seeds to distinct streams
    (up to hash collisions), through NumPy's SeedSequence."""
    return int(np.random.SeedSequence(seed).generate_state(1, np.uint32)[0] & 0x7FFFFFFF)
