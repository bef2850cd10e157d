"""Explicit actuator models from :mod:`newton.actuators`: joint efforts computed every physics step from the state and
the position targets, written to ``control.joint_f`` in place of SolverSteel's implicit drive rows."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import numpy as np
import warp as wp
from newton.actuators import Actuator, ClampingDCMotor, ClampingMaxEffort, Delay, DrivePD

if TYPE_CHECKING:
    import newton

    from ..core import NewtonVectorEnv

__all__ = ["ACTUATOR_MODELS", "ExplicitActuators"]

ACTUATOR_MODELS = ("pd", "delayed_pd", "dc_motor")
"""The actuator models of the joint-position scenes: ``"pd"``, SolverSteel's implicit PD drive rows (the default);
``"delayed_pd"``, an explicit PD law on targets delayed by a per-world number of physics steps, effort clamped at the
limit (Isaac Lab's ``DelayedPDActuator``); ``"dc_motor"``, an explicit PD law whose effort is clamped by a DC
motor's torque-speed line (Isaac Lab's ``DCMotor``)."""


@wp.kernel(enable_backward=False)
def _scaled_gains(
    stiffness: wp.array[wp.float32],
    damping: wp.array[wp.float32],
    gain_scale: wp.array[wp.float32],
    kp: wp.array[wp.float32],
    kd: wp.array[wp.float32],
):
    """kp, kd of world w's joint j (actuator ``w * joints + j``): the nominal gains times the world's drive-gain
    factor (``Randomizer.drive_gain_scale``)."""
    w, j = wp.tid()
    i = w * stiffness.shape[0] + j
    kp[i] = stiffness[j] * gain_scale[w]
    kd[i] = damping[j] * gain_scale[w]


@wp.kernel(enable_backward=False)
def _reset_worlds(
    world_mask: wp.array[wp.bool],
    joints: wp.int32,
    low: wp.int32,
    high: wp.int32,
    rng_state: wp.array[wp.uint32],
    actuator_mask: wp.array[wp.bool],
    delay_steps: wp.array[wp.int32],
):
    """Mark the selected worlds' actuators for a reset and draw each selected world's delay ~ U{low..high} [physics
    steps] from its reset stream (one draw per world, shared by its joints)."""
    w = wp.tid()
    selected = world_mask[w]
    delay = int(0)
    if selected and high > low:
        rng = rng_state[w]
        delay = wp.randi(rng, low, high + 1)
        rng_state[w] = rng
    elif selected:
        delay = low
    for j in range(joints):
        actuator_mask[w * joints + j] = selected
        if selected:
            delay_steps[w * joints + j] = delay


class ExplicitActuators:
    """One :class:`newton.actuators.Actuator` over the actuated joints of every world: a PD drive on the position
    targets (``control.joint_target_q``), an optional per-world delay and an effort clamp, stepped before each physics
    step into ``control.joint_f`` (zeroed first). The model's drive gains of these joints must be zero (no drive
    rows); the joint velocity limits stay SolverSteel's.

    Actuator ``w * joints + j`` is world ``w``'s joint ``j``. Its gains are the nominal ones times the world's
    drive-gain factor, refreshed every control step (:meth:`refresh_gains`), so ``randomize_drive_gain_scale`` and
    ``set_world_parameters`` act on them as on the drive rows.

    Args:
        env: The env (its model, control, ``rng_state``, ``randomizer``).
        model: ``"delayed_pd"`` or ``"dc_motor"`` (:data:`ACTUATOR_MODELS`).
        dofs: (joints,) each actuated joint's DOF offset within its world.
        coords: (joints,) each actuated joint's coordinate offset within its world.
        stiffness, damping: (joints,) PD gains [N m/rad], [N m s/rad].
        effort_limit: (joints,) [N m]: the clamp (``"delayed_pd"``), the stall torque and the largest effort
            (``"dc_motor"``).
        velocity_limit: (joints,) [rad/s]: the no-load speed of ``"dc_motor"``.
        delay: (low, high) delay of ``"delayed_pd"`` [physics steps], drawn per world at each reset.

    Raises:
        ValueError: On an unknown model or a delay range outside 0 <= low <= high.

    Attributes:
        actuator: The :class:`newton.actuators.Actuator`.
        state: Its state (:class:`newton.actuators.Actuator.State`; the delay buffer of ``"delayed_pd"``), or None.
        delay_steps: (num_envs * joints,) int32, each actuator's delay [physics steps].
        kp, kd: (num_envs * joints,) float32, each actuator's gains.
    """

    def __init__(
        self,
        env: NewtonVectorEnv,
        model: str,
        *,
        dofs: np.ndarray,
        coords: np.ndarray,
        stiffness: np.ndarray,
        damping: np.ndarray,
        effort_limit: np.ndarray,
        velocity_limit: np.ndarray,
        delay: tuple[int, int] = (0, 0),
    ) -> None:
        if model not in ACTUATOR_MODELS[1:]:
            raise ValueError(f"actuator: expected one of {ACTUATOR_MODELS[1:]} for explicit actuators, got {model!r}")
        low, high = (int(d) for d in delay)
        if not 0 <= low <= high:
            raise ValueError(f"actuator_delay: expected (low, high) physics steps with 0 <= low <= high, got {delay!r}")
        self.env = weakref.proxy(env)  # no env <-> component cycle: the env goes with its last reference
        self.joints, self.delay = len(dofs), (low, high)
        n, device = env.num_envs, env.wp_device
        dof_start = env.model.joint_dof_world_start.numpy()[:n].astype(np.int64)
        coord_start = env.model.joint_coord_world_start.numpy()[:n].astype(np.int64)

        def per_actuator(values: np.ndarray) -> wp.array:
            return wp.array(np.tile(np.asarray(values, np.float64), n), dtype=wp.float32, device=device)

        def indices(start: np.ndarray, offsets: np.ndarray) -> wp.array:
            flat = (start[:, None] + np.asarray(offsets, np.int64)[None, :]).reshape(-1)
            return wp.array(flat.astype(np.uint32), dtype=wp.uint32, device=device)

        self.stiffness = wp.array(np.asarray(stiffness, np.float32), dtype=wp.float32, device=device)
        self.damping = wp.array(np.asarray(damping, np.float32), dtype=wp.float32, device=device)
        count = n * self.joints
        self.kp = wp.zeros(count, dtype=wp.float32, device=device)
        self.kd = wp.zeros(count, dtype=wp.float32, device=device)
        effort = per_actuator(effort_limit)
        if model == "dc_motor":
            clamp = ClampingDCMotor(
                saturation_effort=effort, velocity_limit=per_actuator(velocity_limit), max_motor_effort=effort
            )
        else:
            clamp = ClampingMaxEffort(max_effort=effort)
        self.delay_steps = wp.zeros(count, dtype=wp.int32, device=device)
        delay_component = Delay(delay_steps=self.delay_steps, max_delay=max(1, high)) if model == "delayed_pd" else None
        self.actuator = Actuator(
            indices=indices(dof_start, dofs),
            pos_indices=indices(coord_start, coords),
            drive=DrivePD(kp=self.kp, kd=self.kd),
            delay=delay_component,
            clamping=[clamp],
            control_feedforward_attr=None,
        )
        # Two delay buffers: the step reads one and writes the other, which is copied back (a captured graph holds
        # the buffers' addresses, so they are never swapped).
        self.state = self.actuator.state()
        self._next = self.actuator.state()
        self._mask = wp.zeros(count, dtype=wp.bool, device=device)
        self.refresh_gains()

    def refresh_gains(self) -> None:
        """kp, kd of every actuator: the nominal gains times its world's drive-gain factor (graph-capturable)."""
        env = self.env
        wp.launch(
            _scaled_gains,
            (env.num_envs, self.joints),
            inputs=[self.stiffness, self.damping, env.randomizer.drive_gain_scale],
            outputs=[self.kp, self.kd],
            device=env.wp_device,
        )

    def reset(self, world_mask: wp.array) -> None:
        """Empty the delay buffers of the worlds in ``world_mask`` ((num_envs + 1,) bool) and draw their delays: a
        reset world's first steps use its current targets until the buffer holds its delay."""
        if self.state is None:
            return
        env = self.env
        env.launch_per_world(
            _reset_worlds,
            inputs=[world_mask, self.joints, self.delay[0], self.delay[1]],
            outputs=[env.rng_state, self._mask, self.delay_steps],
        )
        self.state.reset(self._mask)
        self._next.reset(self._mask)

    def step(self, state: newton.State, dt: float) -> None:
        """Efforts of ``state`` [N m] into ``control.joint_f`` (zeroed first), and the delay buffers advanced by one
        physics step of ``dt`` [s] (graph-capturable)."""
        control = self.env.control
        control.joint_f.zero_()
        self.actuator.step(state, control, self.state, self._next, dt)
        if self.state is not None:
            self.state.assign(self._next)
