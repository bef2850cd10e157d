"""``energy drift at rest``: under zero actions, over the second half of the run (the first half settles), the
largest gain of mechanical energy (kinetic and gravitational energy of the dynamic bodies and active particles;
elastic and drive-spring energy are not counted) over its value at the end of settling, per world whose episode runs
through the whole zero-action run, as the height it would lift the world's mass: ``max_t (E(t) - E(t0)) / (M g)``.
Warns above :data:`ENERGY_GAIN_WARN`, fails above :data:`ENERGY_GAIN_TOL`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from steel_envs.doctor.check import Check, Sample, Worst, quat_to_matrix
from steel_envs.doctor.penetration import PENETRATION_TOL
from steel_envs.doctor.report import DoctorLine, DoctorReport

__all__ = ["ENERGY_GAIN_TOL", "ENERGY_GAIN_WARN", "EnergyDrift"]

ENERGY_GAIN_WARN = 0.001
"""Energy gain at rest above which the line warns, as the height it lifts the world's mass [m]."""
ENERGY_GAIN_TOL = PENETRATION_TOL
"""Energy gain at rest above which the line fails [m of lift]. A passive system at rest only loses energy, except
where contacts push a penetrating body out (Baumgarte correction lifts it by at most its penetration): a gain up to
M g :data:`~steel_envs.doctor.penetration.PENETRATION_TOL` is explained by the tolerated penetration, more is energy
the solver made."""

_POLICY = "zero"
"""The action family the line measures."""
_MIN_STEPS = 4


class EnergyDrift(Check):
    """Mechanical energy of each world over the zero-action run, and its largest gain over the second half."""

    def __init__(self, env: Any) -> None:
        import newton

        self.env, m, n = env, env.model, env.num_envs
        # Dynamic bodies and active particles, their worlds, masses and each world's gravity.
        self.body_world = m.body_world.numpy() if m.body_count else np.zeros(0, np.int32)
        self.body_mass = m.body_mass.numpy().astype(np.float64) if m.body_count else np.zeros(0)
        self.body_dynamic = np.zeros(m.body_count, bool)
        if m.body_count:
            self.body_dynamic = (m.body_inv_mass.numpy() > 0.0) & (self.body_world >= 0)
        self.particle_world = m.particle_world.numpy() if m.particle_count else np.zeros(0, np.int32)
        self.particle_mass = m.particle_mass.numpy().astype(np.float64) if m.particle_count else np.zeros(0)
        self.particle_dynamic = np.zeros(m.particle_count, bool)
        if m.particle_count:
            active = (m.particle_flags.numpy() & int(newton.ParticleFlags.ACTIVE)) != 0
            self.particle_dynamic = active & (self.particle_mass > 0.0) & (self.particle_world >= 0)
        gravity = m.gravity.numpy().astype(np.float64)
        self.gravity = np.array([gravity[w] if len(gravity) > w else gravity[0] for w in range(n)])
        """Gravity of each world [m/s^2], shape (num_envs, 3)."""
        self.world_mass = np.zeros(n)
        """Mass of each world's dynamic bodies and active particles [kg], shape (num_envs,)."""
        np.add.at(self.world_mass, self.body_world[self.body_dynamic], self.body_mass[self.body_dynamic])
        np.add.at(
            self.world_mass, self.particle_world[self.particle_dynamic], self.particle_mass[self.particle_dynamic]
        )
        self.energies: list[np.ndarray] = []
        self.ended = np.zeros(n, bool)
        """Worlds whose zero-action episode ended during the run."""
        self.drift: Worst | None = None
        """Largest gain [m of lift] and its world; None where no world qualifies or the run is too short."""
        self.worlds = 0
        """Worlds whose gain was measured (at rest through the whole run)."""
        self.window = (0, 0)
        """The measured steps: from the end of settling to the last step."""

    def energy(self) -> np.ndarray:
        """Mechanical energy per world [J], float64 shape (num_envs,): kinetic (translation and rotation) and
        gravitational energy of the dynamic bodies and the active particles, ``E = m v^2 / 2 + w^T I w / 2 - m g . x``
        with ``x`` the centre of mass and the inertia ``I`` in the body frame."""
        m, s = self.env.model, self.env.state_0
        energy = np.zeros(self.env.num_envs)
        b = self.body_dynamic
        if b.any():
            body_q, body_qd = s.body_q.numpy()[b].astype(np.float64), s.body_qd.numpy()[b].astype(np.float64)
            rot = quat_to_matrix(body_q[:, 3:7])
            com = body_q[:, :3] + np.einsum("bij,bj->bi", rot, m.body_com.numpy()[b].astype(np.float64))
            omega = np.einsum("bji,bj->bi", rot, body_qd[:, 3:6])  # body frame: the inertia's
            inertia = m.body_inertia.numpy()[b].astype(np.float64)
            mass, world = self.body_mass[b], self.body_world[b]
            e = 0.5 * mass * (body_qd[:, :3] ** 2).sum(axis=1) + 0.5 * np.einsum("bi,bij,bj->b", omega, inertia, omega)
            np.add.at(energy, world, e - mass * (self.gravity[world] * com).sum(axis=1))
        p = self.particle_dynamic
        if p.any():
            q, qd = s.particle_q.numpy()[p].astype(np.float64), s.particle_qd.numpy()[p].astype(np.float64)
            mass, world = self.particle_mass[p], self.particle_world[p]
            np.add.at(energy, world, 0.5 * mass * (qd**2).sum(axis=1) - mass * (self.gravity[world] * q).sum(axis=1))
        return energy

    def observe(self, sample: Sample) -> None:
        if sample.policy != _POLICY:
            return
        if sample.ended is None:  # the run's reset
            self.energies, self.ended = [], np.zeros(self.env.num_envs, bool)
        else:
            self.ended |= sample.ended
        self.energies.append(self.energy())

    def end_run(self, policy: str) -> None:
        """Largest energy gain over the second half of the zero-action run, per world that never ended, as lift."""
        if policy != _POLICY:
            return
        energies = np.array(self.energies)
        steps = len(energies) - 1
        self.window = (steps // 2, steps)
        if steps < _MIN_STEPS:
            return
        window = energies[steps // 2 :]
        g = np.linalg.norm(self.gravity, axis=1)
        usable = ~self.ended & (self.world_mass > 0.0) & (g > 0.0) & np.isfinite(window).all(axis=0)
        self.worlds = int(usable.sum())
        if usable.any():
            lift = (window - window[0]).max(axis=0) / (self.world_mass * np.where(g > 0.0, g, 1.0))
            w = int(np.argmax(np.where(usable, lift, -np.inf)))
            self.drift = (float(lift[w]), f"world {w}")

    def lines(self, report: DoctorReport) -> list[DoctorLine]:
        check = "energy drift at rest"
        threshold = f"<= {ENERGY_GAIN_WARN * 1000:g} mm lift (warn), {ENERGY_GAIN_TOL * 1000:g} mm"
        settle, steps = self.window
        if self.drift is None:
            short = steps < _MIN_STEPS
            why = (
                f"needs >= {_MIN_STEPS} steps, got {steps}"
                if short
                else "no world's zero-action episode lasted the whole run"
            )
            return [DoctorLine(check, "n/a", "-", threshold, why)]
        value, where = self.drift
        status = "fail" if value > ENERGY_GAIN_TOL else "warn" if value > ENERGY_GAIN_WARN else "pass"
        advice = (
            "a resting system gains energy: see the penetration and overflow lines; more iterations or a smaller dt"
        )
        detail = f"{where}, steps {settle}-{steps} of zero actions, {self.worlds} of {self.env.num_envs} worlds at rest"
        return [
            DoctorLine(
                check, status, f"{value * 1000:+.3f} mm", threshold, detail, advice if status != "pass" else "", value
            )
        ]
