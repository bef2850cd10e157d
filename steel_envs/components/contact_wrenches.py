"""The external contact wrench of every body, from SolverSteel's ``contact_f`` observable."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import warp as wp

from .. import kernels

if TYPE_CHECKING:
    from ..core import NewtonVectorEnv

__all__ = ["ContactWrenches"]


class ContactWrenches:
    """Sums the last substep's contact forces (``solver.observables(("contact_f",))``) into one wrench per body:
    force [N] and torque [N m] about the body's COM, world frame (MuJoCo's ``cfrc_ext`` with the force first).

    Attributes:
        wrench: (body_count,) spatial_vector, the env's ``body_contact_wrench``.
    """

    def __init__(self, env: NewtonVectorEnv) -> None:
        self.env = weakref.proxy(env)  # no env <-> component cycle: the env goes with its last reference
        self.wrench = wp.zeros(env.model.body_count, dtype=wp.spatial_vector)

    def update(self) -> None:
        """Recompute every body's wrench from the current contacts and state."""
        env = self.env
        c, m = env.contacts, env.model
        self.wrench.zero_()
        wp.launch(
            kernels.body_contact_wrenches,
            c.rigid_contact_max,
            inputs=[
                c.rigid_contact_count,
                c.rigid_contact_shape0,
                c.rigid_contact_shape1,
                c.rigid_contact_point0,
                c.rigid_contact_point1,
                env.observables.contact_f,
                m.shape_body,
                env.state_0.body_q,
                m.body_com,
            ],
            outputs=[self.wrench],
            device=env.wp_device,
        )

    def reset(self, world_mask: wp.array) -> None:
        """A reset world has no contact wrench yet."""
        env = self.env
        env.launch_per_world(
            kernels.zero_world_body_wrenches,
            inputs=[world_mask, env.model.body_world_start],
            outputs=[self.wrench],
        )
