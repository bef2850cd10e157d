"""Per-world physical factors (friction, mass, drive gains), set by the user or drawn at reset, and base pushes."""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING

import newton
import numpy as np
import torch
import warp as wp

from .. import kernels
from ..arguments import check_world_factors

if TYPE_CHECKING:
    from ..core import NewtonVectorEnv

__all__ = ["Randomizer"]


class Randomizer:
    """Scales the model's friction coefficients, masses and inertias, and drive gains per world relative to the
    model as built, and pushes floating bases; the backend tells the solver what changed.

    Draws at reset come from the env's reset stream (``env.rng_state``), pushes from its noise stream, so neither
    changes the initial states.

    Raises:
        ValueError: (construction) On pushes in a scene whose first joint is not a floating base.

    Attributes:
        friction_scale, mass_scale, drive_gain_scale: (num_envs,) float32 factors now in the model.
        nominal: The model values as built (``mu``, ``mass``, ``inertia``, ``ke``, ``kd``), which the factors scale.
    """

    def __init__(self, env: NewtonVectorEnv) -> None:
        self.env = weakref.proxy(env)  # no env <-> component cycle: the env goes with its last reference
        n, model, config = env.num_envs, env.model, env.config
        self.friction_scale = wp.ones(n, dtype=wp.float32)
        self.mass_scale = wp.ones(n, dtype=wp.float32)
        self.drive_gain_scale = wp.ones(n, dtype=wp.float32)
        self.nominal = {
            "mu": wp.clone(model.shape_material_mu),
            "mass": wp.clone(model.body_mass),
            "inertia": wp.clone(model.body_inertia),
            "ke": wp.clone(model.joint_target_ke),
            "kd": wp.clone(model.joint_target_kd),
        }
        self._draws = (
            (config.randomize_friction_scale, self.friction_scale),
            (config.randomize_mass_scale, self.mass_scale),
            (config.randomize_drive_gain_scale, self.drive_gain_scale),
        )
        pushes = config.push_interval > 0.0 and config.push_velocity > 0.0
        self._push_interval = max(1, round(config.push_interval / env.control_dt)) if pushes else 0
        if pushes:
            first_joint = int(model.joint_world_start.numpy()[0]) if model.joint_count else -1
            if first_joint < 0 or int(model.joint_type.numpy()[first_joint]) != int(newton.JointType.FREE):
                raise ValueError(f"push_interval: {type(env).__name__} has no floating base to push")

    def set_world_parameters(
        self,
        friction_scale: torch.Tensor | np.ndarray | Sequence[float] | None,
        mass_scale: torch.Tensor | np.ndarray | Sequence[float] | None,
    ) -> None:
        """Check and apply user factors (see :meth:`steel_envs.core.NewtonVectorEnv.set_world_parameters`).

        Raises:
            ValueError: On a wrong shape or dtype, or a factor that is not finite and > 0 in float32, or on a solver
                without per-world model updates; nothing changes then.
        """
        env = self.env
        if not env.backend.supports_world_parameters:
            raise ValueError(
                f"{env.__class__.__name__}.set_world_parameters: not supported on {env.backend.name} scenes (its "
                "notify_model_changed has no world mask)"
            )
        n = env.num_envs
        friction = check_world_factors("friction_scale", friction_scale, n)
        mass = check_world_factors("mass_scale", mass_scale, n)
        if friction is not None:
            self.friction_scale.assign(friction)
        if mass is not None:
            self.mass_scale.assign(mass)
        self._apply(friction is not None, mass is not None)

    def randomize(self, world_mask: wp.array) -> None:
        """Draw the reset randomization of the selected worlds (``randomize_*_scale``) and apply it."""
        for bounds, scale in self._draws:
            if bounds is not None:
                self.env.launch_per_world(
                    kernels.draw_world_scales,
                    inputs=[world_mask, float(bounds[0]), float(bounds[1])],
                    outputs=[self.env.rng_state, scale],
                )
        self._apply(*(bounds is not None for bounds, _ in self._draws), world_mask)

    def push(self) -> None:
        """Push the floating base of each world due (``push_interval``) by U(-v, v) per horizontal axis."""
        if not self._push_interval:
            return
        env = self.env
        env.launch_per_world(
            kernels.push_roots,
            inputs=[
                env.episode_steps,
                self._push_interval,
                float(env.config.push_velocity),
                env.model.joint_dof_world_start,
            ],
            outputs=[env.noise_rng_state, env.state_0.joint_qd],
        )

    def _apply(self, friction: bool, mass: bool, drive_gains: bool = False, world_mask: wp.array | None = None) -> None:
        """Write nominal x world scale into the model and notify the solver (device-only, graph-capturable).
        Worlds whose scale did not change are rewritten with the same value, bit for bit."""
        env = self.env
        model, device, flags = env.model, env.wp_device, 0
        if friction:
            wp.launch(
                kernels.scale_shape_friction,
                model.shape_count,
                inputs=[model.shape_world, self.nominal["mu"], self.friction_scale],
                outputs=[model.shape_material_mu],
                device=device,
            )
            flags |= newton.ModelFlags.SHAPE_PROPERTIES
        if mass:
            wp.launch(
                kernels.scale_body_mass,
                model.body_count,
                inputs=[model.body_world, self.nominal["mass"], self.nominal["inertia"], self.mass_scale],
                outputs=[model.body_mass, model.body_inv_mass, model.body_inertia, model.body_inv_inertia],
                device=device,
            )
            flags |= newton.ModelFlags.BODY_INERTIAL_PROPERTIES
        if drive_gains:
            env.launch_per_world(
                kernels.scale_world_drive_gains,
                inputs=[model.joint_dof_world_start, self.nominal["ke"], self.nominal["kd"], self.drive_gain_scale],
                outputs=[model.joint_target_ke, model.joint_target_kd],
            )
            flags |= newton.ModelFlags.JOINT_DOF_FORCE_PROPERTIES
        if flags:
            env.backend.notify_model_changed(flags, world_mask)
