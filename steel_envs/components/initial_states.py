"""Initial joint states: the scene's declaration (:class:`steel_envs.InitialStateSpec`) drawn per world at reset."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import newton
import numpy as np
import warp as wp

from .. import kernels
from ..spec import NOISE_KINDS, InitialStateSpec

if TYPE_CHECKING:
    from ..core import NewtonVectorEnv

__all__ = ["InitialStates"]


class InitialStates:
    """Draws ``q = default_q + q_noise * n`` and ``qd = default_qd + qd_noise * n`` for the selected worlds from the
    env's reset stream (``env.rng_state``), renormalizes a free joint's quaternion, and writes the articulations'
    body poses by forward kinematics.

    Raises:
        RuntimeError: (construction) If the declared arrays do not have one entry per joint coordinate / DOF of a
            world, naming the scene.
    """

    def __init__(self, env: NewtonVectorEnv, spec: InitialStateSpec) -> None:
        self.env = weakref.proxy(env)  # no env <-> component cycle: the env goes with its last reference
        as_array = lambda values: wp.array(np.asarray(values, np.float32), dtype=wp.float32)  # noqa: E731
        self._q, self._qd = as_array(spec.default_q), as_array(spec.default_qd)
        self._q_noise, self._qd_noise = as_array(spec.q_noise), as_array(spec.qd_noise)
        coords, dofs, owner = env.coords_per_world, env.dofs_per_world, type(env).__name__
        if self._q.shape[0] != coords or self._q_noise.shape[0] != coords:
            raise RuntimeError(f"{owner}.initial_state: q arrays need {coords} entries")
        if self._qd.shape[0] != dofs or self._qd_noise.shape[0] != dofs:
            raise RuntimeError(f"{owner}.initial_state: qd arrays need {dofs} entries")
        self._kinds = (NOISE_KINDS[spec.q_noise_kind], NOISE_KINDS[spec.qd_noise_kind])
        self._quat_coord = int(spec.quat_coord)
        self._articulation_mask = wp.zeros(env.model.articulation_count, dtype=wp.bool)

    def reset(self, world_mask: wp.array, *, kinematics: bool = True) -> None:
        """Write the initial joint state of the selected worlds ((num_envs + 1,) bool) into ``env.state_0``, and with
        ``kinematics`` their body state (:meth:`eval_fk`; a scene that moves the joint state first passes False)."""
        env = self.env
        model, state = env.model, env.state_0
        env.launch_per_world(
            kernels.reset_joint_state,
            inputs=[
                world_mask,
                model.joint_coord_world_start,
                model.joint_dof_world_start,
                self._q,
                self._qd,
                self._q_noise,
                self._qd_noise,
                self._kinds[0],
                self._kinds[1],
                self._quat_coord,
            ],
            outputs=[env.rng_state, state.joint_q, state.joint_qd],
        )
        if kinematics:
            self.eval_fk(world_mask)

    def eval_fk(self, world_mask: wp.array) -> None:
        """Write the body poses and velocities of the selected worlds' articulations ((num_envs + 1,) bool) from
        their joint state in ``env.state_0`` (forward kinematics)."""
        env = self.env
        model, state = env.model, env.state_0
        if model.articulation_count:
            wp.launch(
                kernels.world_mask_to_articulation_mask,
                model.articulation_count,
                inputs=[world_mask, model.articulation_world, env.num_envs],
                outputs=[self._articulation_mask],
                device=env.wp_device,
            )
            newton.eval_fk(model, state.joint_q, state.joint_qd, state, mask=self._articulation_mask)
