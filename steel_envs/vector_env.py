"""The vector env on SolverSteel: :class:`SteelVectorEnv`, the base of the articulated scenes.

The env contract itself (step order, autoreset, zero-copy views, episode statistics) is the solver-neutral core's
(:class:`steel_envs.core.NewtonVectorEnv`); this class only names its solver backend
(:class:`steel_envs.backends.SteelBackend`) and the solver's options.
"""

from __future__ import annotations

from typing import ClassVar

from .backends import SteelBackend
from .core import NewtonVectorEnv
from .solver_options import SteelSolverOptions

__all__ = ["SteelVectorEnv"]


class SteelVectorEnv(NewtonVectorEnv):
    """N worlds of one Newton model on ``newton.solvers.SolverSteel`` (reduced coordinates, projected Gauss-Seidel
    contacts), as a Gymnasium vector env with torch tensors.

    Everything but the solver is :class:`steel_envs.core.NewtonVectorEnv`'s (arguments, step order, ``info``). The
    backend supports per-world model updates (``set_world_parameters``, ``randomize_*_scale``), pushes, and reports
    SolverSteel's ``constraint_overflow`` per world.

    Args:
        As :class:`steel_envs.core.NewtonVectorEnv`; ``solver_options`` are SolverSteel keywords, see
        :class:`steel_envs.SteelSolverOptions`.

    Raises:
        TypeError, ValueError: As :class:`steel_envs.core.NewtonVectorEnv`.
    """

    backend_cls = SteelBackend
    solver_defaults: ClassVar[SteelSolverOptions] = SteelSolverOptions()
    """The scene's SolverSteel options before ``solver_options`` overrides."""
    solver_defaults_cuda: ClassVar[SteelSolverOptions | None] = None
    """The scene's options on CUDA devices, where they differ (e.g. CUDA-only sweeps); None: ``solver_defaults``."""
