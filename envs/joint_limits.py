"""Declared joint limits of a scene: which DOFs have them, and the env's projection of joint coordinates back into
their position limits after every physics step.

SolverSteel enforces position limits with speculative unilateral rows (``enable_joint_limits=True``), solved by
projected Gauss-Seidel together with the contact and friction rows. Where a limit row and the contacts of the same
articulation are coupled (a loaded foot whose hip or ankle is at its limit), the sweep converges slowly (the
humanoid needs 100 or more iterations) or, with friction, alternates between two states from one sweep to the next
(the ant: the same violation after 12 or 5000 iterations; under-relaxation removes it), and a limited joint ends
the step past its limit: measured with newton 1.8.0 on the CPU under random, bang-bang and saturated torques, up to
0.1 rad on AntRun and 0.12 rad on HumanoidRun at 12 iterations. :class:`JointLimitProjection` removes that
residual: after each physics step it clamps every limited coordinate into ``[joint_limit_lower,
joint_limit_upper]``, removes the joint velocity that points out of the range, and re-runs forward kinematics of
the articulations it changed, so ``body_q`` / ``body_qd`` match the joint state the next step and the observations
read.

The clamp is kinematic: it moves the links below the joint without a reaction on the links above, and removes the
kinetic energy of the outward motion. Small corrections are harmless; a large one can push a limb into the ground,
which the next step's contacts push out (measured on HumanoidRun: deepest contact penetration 31 mm with the
projection against 13 mm without it, with the task's terminations; 22 cm against 6 cm for humanoids left lying on
the ground with ``terminate_when_unhealthy=False``). DOFs outside every articulation are left to the solver.
"""

from __future__ import annotations

import newton
import numpy as np
import warp as wp

__all__ = ["UNLIMITED", "JointLimitProjection", "limited_dofs"]

UNLIMITED = 1.0e9
"""A bound at or beyond this magnitude [m or rad] is no limit: the builder's default bounds are +-1e10."""

_LIMITABLE = (newton.JointType.PRISMATIC, newton.JointType.REVOLUTE, newton.JointType.D6)


def limited_dofs(model: newton.Model) -> tuple[np.ndarray, np.ndarray]:
    """Per DOF of ``model``: the index of its coordinate in ``joint_q`` where the DOF declares a position limit
    (a bound below :data:`UNLIMITED` in magnitude), else -1; and the articulation of each DOF (-1: none).

    Raises:
        ValueError: If a DOF of a joint type without position-limit support in SolverSteel (anything but
            PRISMATIC, REVOLUTE and D6) declares a limit; the message names the joint.
    """
    joint_type = model.joint_type.numpy()
    q_start = model.joint_q_start.numpy()
    qd_start = model.joint_qd_start.numpy()
    lower = model.joint_limit_lower.numpy()
    upper = model.joint_limit_upper.numpy()
    dof_coord = np.full(model.joint_dof_count, -1, np.int32)
    dof_articulation = np.full(model.joint_dof_count, -1, np.int32)
    joint_articulation = model.joint_articulation.numpy() if model.joint_count else np.zeros(0, np.int32)
    limitable = {int(t) for t in _LIMITABLE}
    for j in range(model.joint_count):
        for k, d in enumerate(range(int(qd_start[j]), int(qd_start[j + 1]))):
            dof_articulation[d] = joint_articulation[j]
            if not (abs(lower[d]) < UNLIMITED or abs(upper[d]) < UNLIMITED):
                continue
            if int(joint_type[j]) not in limitable:
                raise ValueError(
                    f"joint {model.joint_label[j]!r} ({newton.JointType(int(joint_type[j])).name}) declares a position "
                    f"limit on DOF {k}, which SolverSteel cannot enforce (PRISMATIC, REVOLUTE and D6 only)"
                )
            dof_coord[d] = int(q_start[j]) + k
    return dof_coord, dof_articulation


@wp.kernel(enable_backward=False)
def _project_joint_limits(
    dof_coord: wp.array[wp.int32],
    dof_articulation: wp.array[wp.int32],
    articulation_world: wp.array[wp.int32],
    world_count: wp.int32,
    lower: wp.array[wp.float32],
    upper: wp.array[wp.float32],
    joint_q: wp.array[wp.float32],
    joint_qd: wp.array[wp.float32],
    changed: wp.array[wp.bool],
    changed_worlds: wp.array[wp.bool],
):
    """Clamp each limited coordinate into its range and drop the joint velocity pointing out of it; flag the
    articulation and its world (global articulations: the final entry). Non-finite coordinates are left as they are,
    for the env's non-finite check."""
    d = wp.tid()
    c = dof_coord[d]
    a = dof_articulation[d]
    if c < 0 or a < 0:
        return
    q = joint_q[c]
    if not wp.isfinite(q):
        return
    clamped = False
    if q > upper[d]:
        joint_q[c] = upper[d]
        joint_qd[d] = wp.min(joint_qd[d], 0.0)
        clamped = True
    elif q < lower[d]:
        joint_q[c] = lower[d]
        joint_qd[d] = wp.max(joint_qd[d], 0.0)
        clamped = True
    if clamped:
        changed[a] = True
        w = articulation_world[a]
        if w < 0:
            w = world_count
        changed_worlds[w] = True


class JointLimitProjection:
    """Projects the limited joint coordinates of a state back into their position limits (graph-capturable).

    Args:
        model: The finalized model; its limits are read at every call, so edits of ``joint_limit_lower`` /
            ``joint_limit_upper`` take effect.
        solver: The solver stepping ``model``; with SolverSteel's ``reuse_kinematics`` running, the worlds whose
            state was clamped are reported to it (``notify_state_changed``) so the next step re-derives their
            kinematics.

    Raises:
        ValueError: As :func:`limited_dofs`.
    """

    def __init__(self, model: newton.Model, solver: newton.solvers.SolverBase | None = None) -> None:
        self.model = model
        self.solver = solver
        dof_coord, dof_articulation = limited_dofs(model)
        device = model.device
        self.limited_dof_count = int((dof_coord >= 0).sum())
        self._dof_coord = wp.array(dof_coord, dtype=wp.int32, device=device)
        self._dof_articulation = wp.array(dof_articulation, dtype=wp.int32, device=device)
        self._changed = wp.zeros(max(model.articulation_count, 1), dtype=wp.bool, device=device)
        self._changed_worlds = wp.zeros(model.world_count + 1, dtype=wp.bool, device=device)

    def apply(self, state: newton.State) -> None:
        """Clamp ``state.joint_q`` into the limits, drop outward ``joint_qd``, and re-evaluate the forward kinematics
        (``body_q``, ``body_qd``) of the articulations that changed."""
        if not self.limited_dof_count:
            return
        m = self.model
        self._changed.zero_()
        self._changed_worlds.zero_()
        wp.launch(
            _project_joint_limits,
            m.joint_dof_count,
            inputs=[
                self._dof_coord,
                self._dof_articulation,
                m.articulation_world,
                m.world_count,
                m.joint_limit_lower,
                m.joint_limit_upper,
            ],
            outputs=[state.joint_q, state.joint_qd, self._changed, self._changed_worlds],
            device=m.device,
        )
        newton.eval_fk(m, state.joint_q, state.joint_qd, state, mask=self._changed)
        if getattr(self.solver, "reuse_kinematics", False):
            self.solver.notify_state_changed(state, world_mask=self._changed_worlds)
