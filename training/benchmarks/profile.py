"""``steel-envs bench --profile``: where a control step's time goes, per kernel and per phase.

The env is stepped eagerly (``graph_capture=False``) so that every Warp kernel launch can be timed: on the CPU a
launch runs synchronously, so the wall time around ``wp.launch`` is the kernel's time; on CUDA Warp's own
activity timing (``wp.timing_begin(cuda_filter=wp.TIMING_KERNEL)``) gives each kernel's device time. Kernels are
grouped into phases by the module that defines them (Newton's module names show what they do): collision (broad
and narrow phase, contact sorting), the solver's kinematics, mass matrix, constraint rows, friction patches and
PGS iterations, the task's and the core's kernels, cameras. ``host`` is what remains of the step: Python,
argument packing and, in this eager mode, the launch overhead a captured graph removes, so the captured step of
``steel-envs bench`` is faster than this profile's total.
"""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass, field
from typing import Any

import torch
import warp as wp

__all__ = ["PHASES", "KernelTime", "Profile", "phase_of", "profile"]

PHASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("collision", ("newton._src.geometry", "newton._src.sim.collide", "narrow_phase")),
    ("solver: kinematics", ("newton._src.solvers.steel.kernels.kinematics", "newton._src.sim.articulation")),
    ("solver: mass matrix", ("newton._src.solvers.steel.kernels.mass_dynamics", "newton._src.solvers.steel.cpu")),
    ("solver: drives", ("newton._src.solvers.steel.kernels.inverse_dynamics",)),
    ("solver: friction patches", ("newton._src.solvers.steel.friction_patches",)),
    ("solver: rows and Jacobians", ("newton._src.solvers.steel.kernels",)),
    ("solver: PGS iterations", ("newton._src.solvers.steel.cpu_fallback", "newton._src.solvers.steel.pgs")),
    ("solver: particles (VBD)", ("newton._src.solvers.vbd.particle_vbd",)),
    ("solver: rigid bodies (AVBD)", ("newton._src.solvers.vbd.rigid_vbd",)),
    ("solver: other", ("newton._src.solvers",)),
    ("cameras", ("newton._src.sensors",)),
    ("task", ("steel_envs.tasks", "steel_envs.envs")),
    ("core", ("steel_envs",)),
)
"""Phase name -> module-name prefixes, tried in order (the first match wins); anything else is ``other``."""

# Kernels whose module does not say what they do (SolverSteel's shared kernel module, or a generated module of a
# kernel made by a factory function) but whose name does: (module prefix, name fragment, phase).
_BY_NAME = (
    ("newton._src.solvers.steel", "pgs", "solver: PGS iterations"),
    ("newton._src.solvers.steel", "hinv", "solver: mass matrix"),
    ("newton._src.solvers.steel", "trisolve", "solver: mass matrix"),
    ("create_", "rigid_body", "solver: rigid bodies (AVBD)"),
    ("create_", "body_body", "solver: rigid bodies (AVBD)"),
    ("update_duals_joint", "", "solver: rigid bodies (AVBD)"),
)


def phase_of(module: str, kernel: str) -> str:
    """The phase of a kernel from its module's and its own name (see :data:`PHASES`)."""
    for prefix, fragment, phase in _BY_NAME:
        if module.startswith(prefix) and fragment in kernel:
            return phase
    for phase, prefixes in PHASES:
        if module.startswith(prefixes):
            return phase
    return "other"


@dataclass
class KernelTime:
    """One kernel's share of a control step."""

    module: str
    kernel: str
    phase: str
    ms_per_step: float
    launches_per_step: float


@dataclass
class Profile:
    """Where the time of one control step of ``env_id`` at ``num_envs`` worlds goes [ms per control step]."""

    env_id: str
    num_envs: int
    device: str
    steps: int
    step_ms: float
    """Wall time of an eager step (every launch timed)."""
    phases: dict[str, float]
    """Kernel time per phase, plus ``host``: the rest of the step."""
    kernels: list[KernelTime] = field(default_factory=list)

    def table(self, top: int = 8) -> str:
        """The phases (share of the step) and the ``top`` kernels, as text."""
        lines = [f"profile {self.env_id} x {self.num_envs} on {self.device}: {self.step_ms:.2f} ms per eager step"]
        for phase, ms in sorted(self.phases.items(), key=lambda kv: -kv[1]):
            lines.append(f"  {phase:28s} {ms:8.3f} ms  {100 * ms / self.step_ms:5.1f} %")
        lines.append(f"  top kernels ({len(self.kernels)} in all):")
        for k in self.kernels[:top]:
            lines.append(f"    {k.ms_per_step:8.3f} ms  x{k.launches_per_step:<4g} {k.phase:26s} {k.kernel}")
        return "\n".join(lines)


def _names(kernel: Any) -> tuple[str, str]:
    module = getattr(getattr(kernel, "module", None), "name", "") or ""
    return module, str(getattr(kernel, "key", kernel))


def profile(
    env_id: str, num_envs: int, steps: int = 20, device: str = "cpu", warmup: int = 3, **kwargs: Any
) -> Profile:
    """Step ``env_id`` eagerly with random actions and time every kernel launch (see the module doc).

    Args:
        env_id: A registered ID.
        num_envs: Worlds.
        steps: Timed control steps (after ``warmup`` untimed ones that compile and fill caches).
        device: Warp device.
        **kwargs: Env keyword arguments.

    Raises:
        ValueError: If ``steps`` < 1 (and the env's own errors).
    """
    import steel_envs

    if steps < 1:
        raise ValueError(f"steps: expected an int >= 1, got {steps}")
    env = steel_envs.make_vec(env_id, num_envs, device=device, seed=0, graph_capture=False, **kwargs)
    cuda = env.torch_device.type == "cuda"
    generator = torch.Generator(device=env.torch_device).manual_seed(0)
    shape = (num_envs, env.action_dim)

    def actions() -> torch.Tensor:
        return torch.rand(shape, generator=generator, device=env.torch_device) * 2.0 - 1.0

    totals: dict[tuple[str, str], float] = collections.defaultdict(float)
    counts: collections.Counter = collections.Counter()
    original = wp.launch

    def timed_launch(kernel, *args, **kw):
        start = time.perf_counter()
        result = original(kernel, *args, **kw)
        key = _names(kernel)
        counts[key] += 1
        if not cuda:
            totals[key] += time.perf_counter() - start
        return result

    try:
        env.reset(seed=0)
        for _ in range(warmup):
            env.step(actions())
        wp.synchronize_device(env.device)
        wp.launch = timed_launch
        if cuda:
            wp.timing_begin(cuda_filter=wp.TIMING_KERNEL, synchronize=True)
        start = time.perf_counter()
        for _ in range(steps):
            env.step(actions())
        wp.synchronize_device(env.device)
        wall = time.perf_counter() - start
        if cuda:  # Warp names a kernel's activity after its key: map it back to the launching module
            modules = {kernel: module for module, kernel in counts}
            for r in wp.timing_end():
                kernel = next((k for k in modules if k in (r.name or "")), r.name or "?")
                totals[(modules.get(kernel, ""), kernel)] += 1e-3 * r.elapsed
    finally:
        wp.launch = original
        env.close()
    phases: dict[str, float] = collections.defaultdict(float)
    kernels = []
    for (module, kernel), seconds in totals.items():
        phase = phase_of(module, kernel)
        ms = 1e3 * seconds / steps
        phases[phase] += ms
        kernels.append(KernelTime(module, kernel, phase, ms, counts[(module, kernel)] / steps))
    step_ms = 1e3 * wall / steps
    phases["host"] = max(step_ms - sum(phases.values()), 0.0)
    kernels.sort(key=lambda k: -k.ms_per_step)
    return Profile(env_id, num_envs, str(env.device), steps, step_ms, dict(phases), kernels)
