"""Ground-reaction forces of the stance feet that hold the body's height and attitude.

Where it sits: :mod:`jointbus.robots.hb50.legged`, a pure component of the walking controller
(:mod:`.walking`), which maps the forces to joint torques through the foot Jacobians (``τ = −Jᵀ·f``,
see :mod:`.leg_kinematics`) and sends them as the command's feed-forward torque.

The balance problem (a single rigid body; horizontal frame: yaw-aligned, z up, origin at the body's
centre of mass): the stance feet at ``rᵢ`` must together produce the wrench that gives the body the
wanted accelerations::

    Σ fᵢ = m · (a_des + g),      Σ rᵢ × fᵢ = I · α_des

``a_des`` and ``α_des`` come from PD laws (height, roll, pitch, yaw; velocity for x, y) computed by
the caller. With two or three feet this has no exact solution (a trot's diagonal pair cannot push
about its own line), so it is solved in the least-squares sense with a small penalty on the forces
(Tikhonov), ``(AᵀSA + αI) f = AᵀS b`` — cheaper than a QP at 500 Hz on a 2-core host and without
one's iteration-count jitter. The constraints a QP would impose are then enforced by clamping, in
this order: the normal force into ``[fz_min, fz_max]`` (a stance foot keeps some load, so it does
not slip or lift; no foot pushes harder than the motors can), then the tangential force into the
friction cone (``|f_xy| ≤ μ·fz``, scaled towards the normal), which never changes the normal
force. Units: N, N·m, m, kg, kg·m².

Two ways to the same solution. :meth:`StanceForceSolver.solve` is the reference: it builds ``A``
(6 × 3k) and solves the 3k × 3k system with numpy. :meth:`StanceForceSolver.solve_dual` is what the
walking controller runs each step: the same minimiser written as ``f = Aᵀ·y`` with
``(A·Aᵀ + α·S⁻¹) y = b`` (multiply the normal equations out: ``(AᵀSA + αI)·Aᵀ = AᵀS·(AAᵀ + αS⁻¹)``),
a 6 × 6 system whatever the number of feet. ``A·Aᵀ`` has a closed form in the feet (``k·I``,
``[c]×`` with ``c = Σ rᵢ``, ``Σ (|rᵢ|² I − rᵢ rᵢᵀ)``), the system is solved by eliminating the
force rows (a diagonal block) and a 3 × 3 solve of the Schur complement, and each foot's force is
``u + v × rᵢ``. In plain floats it is ≈ 3 µs against ≈ 22 µs for the reference's numpy calls
(a dozen of them at ≈ 1 µs each, on 12 × 12 arrays); the tests check that both agree on random
feet, stance sets and wrenches. The optional compiled core of :mod:`.leg_kinematics`
(``_leg_accel``, see there) runs the same arithmetic in one call;
:meth:`StanceForceSolver.solve_dual_python` is its reference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from jointbus import compiled_core
from jointbus.messages.errors import LimitError, NonFiniteError

FloatArray = npt.NDArray[np.float64]

__all__ = ["BalanceWeights", "StanceForceSolver", "Vec"]

#: A 3-vector of plain floats (m or N).
Vec = tuple[float, float, float]

_OWNER = "StanceForceSolver"
GRAVITY = 9.81


_CORE: Final = compiled_core.load("jointbus.robots.hb50.legged._leg_accel")


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
        # the dual system's diagonal additions α/sᵢ (force rows, torque rows)
        self._reg_force = tuple(w.regularisation / s for s in w.force)
        self._reg_torque = tuple(w.regularisation / s for s in w.torque)
        self._reg = self._reg_force + self._reg_torque
        self._inertia = (float(inertia[0]), float(inertia[1]), float(inertia[2]))

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

    def wrench_of(self, accel: Sequence[float], angular_accel: Sequence[float]) -> tuple[
        float, float, float, float, float, float
    ]:
        """:meth:`wrench` in plain floats: ``(m·(a + g), I·α)`` for ``accel`` (m/s², gravity
        excluded) and ``angular_accel`` (rad/s²)."""
        m, (ix, iy, iz) = self.mass, self._inertia
        ax, ay, az = accel
        bx, by, bz = angular_accel
        return (m * ax, m * ay, m * az + m * GRAVITY, ix * bx, iy * by, iz * bz)

    def solve_dual(
        self, feet: Sequence[Sequence[float]], stance: Sequence[bool], wrench: Sequence[float]
    ) -> list[Vec]:
        """:meth:`solve` through the 6 × 6 dual system, in plain floats (module docstring): the
        same forces (to rounding), one ``(fx, fy, fz)`` tuple per foot (zeros for swing feet).

        ``feet``: one ``(x, y, z)`` per leg (m, relative to the centre of mass); ``stance``: one
        flag per leg; ``wrench``: 6 values (N, N·m). Compiled when the core is built.
        """
        if _CORE is not None:
            forces: list[Vec] = _CORE.stance_dual(
                feet, stance, wrench, self._reg, self.fz_min, self.fz_max, self.mu
            )
            return forces
        return self.solve_dual_python(feet, stance, wrench)

    def solve_dual_python(
        self, feet: Sequence[Sequence[float]], stance: Sequence[bool], wrench: Sequence[float]
    ) -> list[Vec]:
        """:meth:`solve_dual` in pure Python (the compiled core's reference)."""
        zero = (0.0, 0.0, 0.0)
        on = [i for i, s in enumerate(stance) if s]
        k = len(on)
        if k == 0:
            return [zero] * len(feet)
        # A·Aᵀ + α·S⁻¹ = [[P, −[c]×], [[c]×, Q]], P diagonal
        cx = cy = cz = 0.0
        qxx = qyy = qzz = qxy = qxz = qyz = 0.0
        for i in on:
            rx, ry, rz = feet[i]
            cx += rx
            cy += ry
            cz += rz
            qxx += ry * ry + rz * rz
            qyy += rx * rx + rz * rz
            qzz += rx * rx + ry * ry
            qxy -= rx * ry
            qxz -= rx * rz
            qyz -= ry * rz
        fx_reg, fy_reg, fz_reg = self._reg_force
        tx_reg, ty_reg, tz_reg = self._reg_torque
        d0, d1, d2 = 1.0 / (k + fx_reg), 1.0 / (k + fy_reg), 1.0 / (k + fz_reg)  # P⁻¹
        # Schur complement of P: Q − [c]×·P⁻¹·[c]×ᵀ (symmetric, positive definite)
        s00 = qxx + tx_reg - (d1 * cz * cz + d2 * cy * cy)
        s11 = qyy + ty_reg - (d0 * cz * cz + d2 * cx * cx)
        s22 = qzz + tz_reg - (d0 * cy * cy + d1 * cx * cx)
        s01 = qxy + d2 * cx * cy
        s02 = qxz + d1 * cx * cz
        s12 = qyz + d0 * cy * cz
        b0, b1, b2, b3, b4, b5 = wrench
        # right-hand side: b_τ − [c]×·P⁻¹·b_f
        px, py, pz = d0 * b0, d1 * b1, d2 * b2
        r0 = b3 - (cy * pz - cz * py)
        r1 = b4 - (cz * px - cx * pz)
        r2 = b5 - (cx * py - cy * px)
        # v = S⁻¹·r by the adjugate (S is 3 × 3)
        a00 = s11 * s22 - s12 * s12
        a01 = s02 * s12 - s01 * s22
        a02 = s01 * s12 - s02 * s11
        a11 = s00 * s22 - s02 * s02
        a12 = s01 * s02 - s00 * s12
        a22 = s00 * s11 - s01 * s01
        inv_det = 1.0 / (s00 * a00 + s01 * a01 + s02 * a02)
        vx = (a00 * r0 + a01 * r1 + a02 * r2) * inv_det
        vy = (a01 * r0 + a11 * r1 + a12 * r2) * inv_det
        vz = (a02 * r0 + a12 * r1 + a22 * r2) * inv_det
        # u = P⁻¹·(b_f + [c]×·v) = P⁻¹·(b_f + c × v)
        ux = d0 * (b0 + cy * vz - cz * vy)
        uy = d1 * (b1 + cz * vx - cx * vz)
        uz = d2 * (b2 + cx * vy - cy * vx)
        fz_min, fz_max, mu = self.fz_min, self.fz_max, self.mu
        forces = [zero] * len(feet)
        for i in on:
            rx, ry, rz = feet[i]
            fx = ux + vy * rz - vz * ry  # u + v × r
            fy = uy + vz * rx - vx * rz
            fz = min(max(uz + vx * ry - vy * rx, fz_min), fz_max)  # NaN stays NaN, as np.clip
            tangential = math.hypot(fx, fy)
            limit = mu * fz
            if tangential > limit:
                scale = limit / max(tangential, 1e-12)
                fx *= scale
                fy *= scale
            forces[i] = (fx, fy, fz)
        return forces
