"""The ``penetration`` end cause: a body deeper than ``penetration_limit`` into another shape, or a particle centre
below the ground plane."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import newton
import warp as wp

from .. import kernels

if TYPE_CHECKING:
    from ..core import NewtonVectorEnv

__all__ = ["PenetrationProbe"]


class PenetrationProbe:
    """Measures, after each step, the deepest rigid contact of each world (the last substep's contacts evaluated on
    the state after the step by ``newton.eval_rigid_contact_kinematics``: signed distance less both shapes'
    margins) and whether a particle centre is below the ground plane (z = 0), and flags the worlds past
    ``penetration_limit`` (None: never, and nothing is launched).

    Attributes:
        flags: (1, num_envs) bool, the worlds flagged this step (2-D to share ``copy_final_flags`` with the
            termination terms); ``final_flags`` the same for the episodes that ended.
    """

    def __init__(self, env: NewtonVectorEnv) -> None:
        self.env = weakref.proxy(env)  # no env <-> component cycle: the env goes with its last reference
        n = env.num_envs
        self.limit = env.config.penetration_limit
        self.flags = wp.zeros((1, n), dtype=wp.bool)
        self.final_flags = wp.zeros((1, n), dtype=wp.bool)
        self._depth = wp.zeros(n, dtype=wp.float32)
        contacts = env.contacts
        self._distance = wp.zeros(contacts.rigid_contact_max, dtype=wp.float32) if contacts else None
        self._no_world_starts = wp.zeros(n + 1, dtype=wp.int32)  # stand-ins for a scene without particles
        self._no_points = wp.zeros(1, dtype=wp.vec3)

    def measure(self) -> None:
        """Write ``flags`` from the env's current state and contacts."""
        if self.limit is None:
            return
        env = self.env
        m, state, c = env.model, env.state_0, env.contacts
        self._depth.zero_()
        if c is not None and c.rigid_contact_max > 0 and state.body_q is not None:
            newton.eval_rigid_contact_kinematics(m, state, c, out_distance=self._distance)
            wp.launch(
                kernels.deepest_rigid_contact,
                c.rigid_contact_max,
                inputs=[c.rigid_contact_count, c.rigid_contact_shape0, c.rigid_contact_shape1, self._distance],
                outputs=[m.shape_margin, m.shape_world, self._depth],
                device=env.wp_device,
            )
        particles = env.add_ground_plane and m.particle_count > 0
        env.launch_per_world(
            kernels.flag_penetration,
            inputs=[
                self._depth,
                float(self.limit),
                particles,
                m.particle_world_start if particles else self._no_world_starts,
                state.particle_q if particles else self._no_points,
            ],
            outputs=[self.flags],
        )
