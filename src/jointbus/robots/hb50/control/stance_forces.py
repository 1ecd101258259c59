"""Ground-reaction forces of the stance feet that hold the body's height and attitude.

Where it sits: :mod:`jointbus.robots.hb50.control`, a pure component of the walking controller
(:mod:`.walking`), which maps the forces to joint torques through the foot Jacobians (``τ = −Jᵀ·f``,
see :mod:`.leg_kinematics`) and sends them as the command's feed-forward torque.

The balance problem (a single rigid body; horizontal frame: yaw-aligned, z up, origin at the body's
centre of mass): the stance feet at ``rᵢ`` must together produce the wrench that gives the body the
wanted accelerations::

    Σ fᵢ = m · (a_des + g),      Σ rᵢ × fᵢ = I · α_des

``a_des`` and ``α_des`` come from PD laws (height, roll, pitch, yaw; velocity for x, y) computed by
the caller. With two or three feet this has no exact solution (a trot's diagonal pair cannot push
about its own line), so it is solved in the least-squares sense with a small penalty on the forces
(Tikhonov), ``(AᵀSA + αI) f = AᵀS b`` — a 3k × 3k linear solve by numpy (≈ 10 µs), cheaper than a
QP at 500 Hz on a 2-core host and without one's iteration-count jitter. The constraints a QP would
impose are then enforced by clamping, in this order: the normal force into
``[fz_min, fz_max]`` (a stance foot keeps some load, so it does not slip or lift; no foot pushes
harder than the motors can), then the tangential force into the friction cone (``|f_xy| ≤ μ·fz``,
scaled towards the normal), which never changes the normal force. Units: N, N·m, m, kg, kg·m².
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from jointbus.messages.errors import LimitError, NonFiniteError

FloatArray = npt.NDArray[np.float64]

__all__ = ["BalanceWeights", "StanceForceSolver"]

_OWNER = "StanceForceSolver"
GRAVITY = 9.81


@dataclass(frozen=True, slots=True)
class BalanceWeights:
    """Weights of the six wrench rows (force x, y, z; torque x, y, z) and of the force penalty."""

    force: tuple[float, float, float] = (1.0, 1.0, 5.0)
    torque: tuple[float, float, float] = (20.0, 20.0, 5.0)
    regularisation: float = 1e-4


class StanceForceSolver:
    """Distributes a wanted body wrench over the stance feet (see the module docstring).

    ``mass`` kg, ``inertia`` (3,) kg·m² (diagonal, body frame ≈ horizontal frame), ``mu`` friction
    coefficient, ``fz_min`` / ``fz_max`` N per stance foot.
    """

    def __init__(
        self,
        mass: float,
        inertia: tuple[float, float, float],
        *,
        mu: float = 0.5,
        fz_min: float = 5.0,
        fz_max: float = 250.0,
        weights: BalanceWeights | None = None,
    ) -> None:
        for name, value in (("mass", mass), ("mu", mu), ("fz_max", fz_max)):
            if not math.isfinite(value):
                raise NonFiniteError(_OWNER, name, value, "a finite value > 0")
            if value <= 0.0:
                raise LimitError(_OWNER, name, value, "> 0")
        if not (math.isfinite(fz_min) and 0.0 <= fz_min < fz_max):
            raise LimitError(_OWNER, "fz_min", fz_min, f"in [0, fz_max = {fz_max}) N")
        self.mass = float(mass)
        self.inertia = np.array(inertia, dtype=np.float64)
        self.mu = float(mu)
        self.fz_min = float(fz_min)
        self.fz_max = float(fz_max)
        w = weights or BalanceWeights()
        self._s = np.array((*w.force, *w.torque))
        self._alpha = w.regularisation

    def wrench(self, accel: FloatArray, angular_accel: FloatArray) -> FloatArray:
        """The body wrench (6,) for linear ``accel`` (m/s², gravity excluded) and ``angular_accel``
        (rad/s²): ``(m·(a + g), I·α)``."""
        out = np.empty(6)
        out[:3] = self.mass * accel
        out[2] += self.mass * GRAVITY
        out[3:] = self.inertia * angular_accel
        return out

    def solve(
        self, feet: FloatArray, stance: npt.NDArray[np.bool_], wrench: FloatArray
    ) -> FloatArray:
        """Forces (legs, 3) N of the ground on each foot (zero for swing feet): the least-squares
        solution for ``wrench`` (6,) from the stance feet at ``feet`` (legs, 3) m relative to the
        centre of mass, then clamped (see the module docstring). No stance foot → all zero."""
        n = feet.shape[0]
        forces = np.zeros((n, 3))
        idx = np.flatnonzero(stance)
        k = idx.size
        if k == 0:
            return forces
        a = np.zeros((6, 3 * k))
        for j, leg in enumerate(idx):
            rx, ry, rz = feet[leg]
            c = 3 * j
            a[0, c] = a[1, c + 1] = a[2, c + 2] = 1.0
            # r × f as a matrix [r]×
            a[3, c + 1], a[3, c + 2] = -rz, ry
            a[4, c], a[4, c + 2] = rz, -rx
            a[5, c], a[5, c + 1] = -ry, rx
        s = self._s
        ats = a.T * s
        h = ats @ a
        h.flat[:: 3 * k + 1] += self._alpha  # the diagonal
        f = np.linalg.solve(h, ats @ wrench).reshape(k, 3)
        fz = np.clip(f[:, 2], self.fz_min, self.fz_max)
        tangential = np.hypot(f[:, 0], f[:, 1])
        limit = self.mu * fz
        scale = np.where(tangential > limit, limit / np.maximum(tangential, 1e-12), 1.0)
        f[:, 0] *= scale
        f[:, 1] *= scale
        f[:, 2] = fz
        forces[idx] = f
        return forces
