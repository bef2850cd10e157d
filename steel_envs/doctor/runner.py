"""The doctor's runner: :func:`doctor` builds the env, steps it under each action family (:class:`Runner`), hands
every measured state to the checks and collects their lines, in the table's order, into a
:class:`~steel_envs.doctor.report.DoctorReport`."""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from steel_envs.doctor.capacities import SteelCapacities, VBDCapacities
from steel_envs.doctor.check import POLICIES, Check, Sample
from steel_envs.doctor.energy import EnergyDrift
from steel_envs.doctor.limits import JointLimits
from steel_envs.doctor.nonfinite import NonFiniteEvents
from steel_envs.doctor.overflow import OverflowRate
from steel_envs.doctor.penetration import BodyPenetration, Ground, ParticlePenetration
from steel_envs.doctor.report import DoctorReport
from steel_envs.doctor.world_count import WorldCountIndependence, WorldTrace

__all__ = ["BANG_BANG_PERIOD", "DOCTOR_KEYWORDS", "Runner", "actions", "build_checks", "doctor"]

BANG_BANG_PERIOD = 5
"""Control steps between the sign flips of the bang-bang actions (as ``tests/test_joint_limits.py``)."""
DOCTOR_KEYWORDS = ("autoreset_mode", "world_offset", "num_shards")
"""Env keywords the doctor sets itself (NextStep autoreset, the twin's offset, one process)."""


def doctor(
    env_id: str,
    num_envs: int = 4,
    steps: int = 50,
    device: str | None = None,
    *,
    seed: int = 0,
    solver_options: Mapping[str, Any] | None = None,
    collision_options: Mapping[str, Any] | None = None,
    check_world_count: bool = True,
    **env_kwargs: Any,
) -> DoctorReport:
    """Run the physics health checks of ``env_id`` (see :mod:`steel_envs.doctor`) and return the report.

    Args:
        env_id: A registered ID, e.g. ``"steel_envs/AntRun-v0"``.
        num_envs: Worlds of the env, >= 1.
        steps: Control steps per action family, >= 1 (the energy line needs >= 4).
        device: Warp device; None: Warp's preferred device.
        seed: Seed of every reset and of the random and bang-bang actions.
        solver_options: Solver keywords over the scene's, as the env's ``solver_options``. On SolverSteel scenes
            ``row_watermark`` is set True and ``warn_constraint_overflow`` defaults to False (the report counts the
            overflows).
        collision_options: ``newton.CollisionPipeline`` keywords over the scene's.
        check_world_count: Build the 1-world twin of the world-count line; False reports that line n/a.
        **env_kwargs: Other keywords of the env, e.g. task config fields (``project_joint_limits=False``).

    Returns:
        The :class:`~steel_envs.doctor.report.DoctorReport`; a failing check is a line with status ``"fail"``, not
        an exception.

    Raises:
        gymnasium.error.UnregisteredEnv: If ``env_id`` is not registered.
        ValueError: If ``num_envs`` or ``steps`` is not an int >= 1, ``env_kwargs`` holds a keyword the doctor sets
            itself (:data:`DOCTOR_KEYWORDS`), or the env rejects an argument.
    """
    from steel_envs.registration import task_class
    from steel_envs.vbd_env import VBDVectorEnv

    for name, value in (("num_envs", num_envs), ("steps", steps)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name}: expected an int >= 1, got {value!r}")
    forbidden = sorted(set(DOCTOR_KEYWORDS) & set(env_kwargs))
    if forbidden:
        raise ValueError(f"{forbidden}: the doctor sets these itself")
    vbd = issubclass(task_class(env_id), VBDVectorEnv)
    options = dict(solver_options or {})
    if not vbd:
        options["row_watermark"] = True
        # The options page: turn the device-side warning off "only when you check constraint_overflow yourself".
        options.setdefault("warn_constraint_overflow", False)
    kwargs = {
        "device": device,
        "seed": seed,
        "autoreset_mode": "NextStep",
        "solver_options": options,
        "collision_options": collision_options,
        **env_kwargs,
    }
    start = time.perf_counter()
    with warnings.catch_warnings():
        # The env's one-time overflow warning says what the capacity lines say, with numbers.
        warnings.filterwarnings("ignore", message=r".*dropped (constraint rows or )?contacts", category=RuntimeWarning)
        report = _diagnose(env_id, int(num_envs), int(steps), seed, vbd, check_world_count, kwargs)
    report.seconds = time.perf_counter() - start
    return report


def build_checks(env: Any, vbd: bool) -> list[Check]:
    """Every check of ``env``, in the table's order: capacities, overflow rate, joint limits, penetration (bodies,
    particles), energy drift, non-finite events, world-count independence."""
    ground = Ground(env.model)
    return [
        VBDCapacities(env) if vbd else SteelCapacities(env),
        OverflowRate(),
        JointLimits(env, vbd),
        BodyPenetration(env, ground),
        ParticlePenetration(env, ground),
        EnergyDrift(env),
        NonFiniteEvents(),
        WorldCountIndependence(env, vbd),
    ]


def _diagnose(
    env_id: str, num_envs: int, steps: int, seed: int, vbd: bool, check_world_count: bool, kwargs: dict[str, Any]
) -> DoctorReport:
    """Build the env and its checks, run every action family, run the twin of the world-count line, and report."""
    from steel_envs.factory import make_vec

    env = make_vec(env_id, num_envs, **kwargs)
    try:
        report = DoctorReport(env_id=env_id, num_envs=num_envs, steps=steps, device=env.device, seed=seed)
        checks = build_checks(env, vbd)
        runner = Runner(env, seed, checks)
        sequences = {p: actions(p, num_envs, env.action_dim, steps, seed) for p in POLICIES}
        for policy in POLICIES:
            runner.run(policy, sequences[policy])
        world_count = next(c for c in checks if isinstance(c, WorldCountIndependence))
        if check_world_count and num_envs > 1:
            twin_env = make_vec(env_id, 1, world_offset=num_envs - 1, **kwargs)
            try:
                trace = WorldTrace(twin_env, 0)
                Runner(twin_env, seed, [trace]).run("random", [a[-1:] for a in sequences["random"]])
                world_count.twin = trace.states
            finally:
                twin_env.close()
        for check in checks:
            report.lines += check.lines(report)
    finally:
        env.close()
    return report


def actions(policy: str, num_envs: int, act_dim: int, steps: int, seed: int) -> list[np.ndarray]:
    """The action sequence of one family: ``steps`` float32 arrays of shape (num_envs, act_dim) in [-1, 1].

    ``random``: uniform; ``bang-bang``: +-1 per action entry, a sign pattern drawn per world and flipped every
    :data:`BANG_BANG_PERIOD` steps; ``zero``: zeros. Seeded by ``(seed, index of the family)``.
    """
    rng = np.random.default_rng([seed, POLICIES.index(policy)])
    if policy == "random":
        return [rng.uniform(-1.0, 1.0, (num_envs, act_dim)).astype(np.float32) for _ in range(steps)]
    if policy == "bang-bang":
        signs = rng.choice(np.array([-1.0, 1.0], np.float32), (num_envs, act_dim))
        return [signs * np.float32(1.0 if (t // BANG_BANG_PERIOD) % 2 == 0 else -1.0) for t in range(steps)]
    return [np.zeros((num_envs, act_dim), np.float32)] * steps


class Runner:
    """Steps one env (``autoreset_mode="NextStep"``) under action sequences and hands each measured state to the
    checks: the reset state, then the state after every control step."""

    def __init__(self, env: Any, seed: int, checks: Sequence[Check]) -> None:
        self.env, self.seed, self.checks = env, seed, list(checks)

    def run(self, policy: str, sequence: Sequence[np.ndarray]) -> None:
        """Reset with the runner's seed and step through ``sequence`` (float32 arrays of shape (num_envs,
        act_dim)), calling every check's :meth:`~steel_envs.doctor.check.Check.observe` after the reset and after
        each step, and :meth:`~steel_envs.doctor.check.Check.end_run` at the end."""
        import torch

        env = self.env
        env.reset(seed=self.seed)
        fresh = np.ones(env.num_envs, bool)
        self._observe(Sample(policy, fresh))
        for a in sequence:
            _, _, terminated, truncated, info = env.step(torch.from_numpy(a).to(env.torch_device))
            ended = (terminated | truncated).cpu().numpy().copy()
            self._observe(Sample(policy, fresh, info, ended))
            fresh = ended  # NextStep: these worlds show their reset state after the next step
        for check in self.checks:
            check.end_run(policy)

    def _observe(self, sample: Sample) -> None:
        for check in self.checks:
            check.observe(sample)
