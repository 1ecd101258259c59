"""Foot positions, velocities, Jacobians and ground forces of every leg, in closed form.

Where it sits: :mod:`jointbus.robots.hb50.legged`, used by the state estimator at 500 Hz. It reads
the leg geometry from :class:`~jointbus.model.leg_ik.LegIK` (itself read from the robot model), so
nothing here is hard-coded to the hb50: it is the forward direction of that IK, plus statics.

Why not :class:`jointbus.model.kinematics.Kinematics`: its generic tree walk evaluates the four
feet and their 3 × 12 Jacobians in ≈ 35–60 µs on the 2-core development VM, most of the
estimator's budget at 500 Hz, before any force is computed. A
quadruped leg is three revolute joints with fixed axes (±x, ±y, ±y), so its foot position, its
3 × 3 Jacobian and the inverse of that Jacobian's transpose have short closed forms.

Why a Python loop over the legs and not numpy arrays of shape ``(legs,)``: measured here, the
numpy version of the same formulas (positions, velocities and forces) costs ≈ 35 µs for four
legs (some 60 array operations at ≈ 0.5 µs of call overhead each), the per-leg Python version
≈ 13 µs including building the output arrays. Vectorising pays from a few dozen legs on; a robot
has four. The tests check positions, velocities, Jacobians and forces against the generic
kinematics. :meth:`LegKinematics.evaluate_rows` gives the same numbers as plain floats, for the
estimator, which decides per leg before it builds any array.

Per leg (hip frame = body frame turned by ``j0`` about the abduction axis)::

    psi_t = a1 − s1·j1            thigh direction in the leg plane
    psi_s = psi_t + a2 − s2·j2    shank direction
    x = ox + l1·cos psi_t + l2·cos psi_s,   y = w,   z = oz + l1·sin psi_t + l2·sin psi_s
    foot (body) = hip + Rx(s0·j0) · (x, y, z)
    J = Rx(s0·j0) · H,  H = [[0, dx1, dx2], [−s0·z, 0, 0], [s0·w, dz1, dz2]]
    det J = s0 · z · (dx1·dz2 − dx2·dz1)

Statics: a force ``f`` from the ground on the foot loads the joints with ``Jᵀ·f``; the motors
balance it when ``τ + Jᵀ·f = 0``, so the ground reaction force that the measured torques ``τ``
hold is ``f = −(Jᵀ)⁻¹·τ``. With ``g = Rx(s0·j0)ᵀ·f``, ``Hᵀ·g = −τ`` splits into a 2 × 2 system for
(gx, gz) and one equation for gy. Standing level, a foot reads ≈ (0, 0, +m·g/4).

The walking controller's direction (:meth:`LegKinematics.rates_and_torques`): joint rates for a
foot velocity, ``q̇ = J⁻¹·v``, and the torques that make a foot push with ``f``, ``τ = −Jᵀ·f`` —
the same structure (``H·q̇ = Rx(s0·j0)ᵀ·v`` is one equation for ``q̇0`` and a 2 × 2 system for
``q̇1``, ``q̇2``), so one closed form per leg replaces a batched ``numpy.linalg.solve`` and an
``einsum`` on the (legs, 3, 3) Jacobians (≈ 20 µs of numpy calls with building the Jacobians,
against ≈ 5 µs); the tests check both against those numpy calls on random leg states.

The compiled core: the control node runs :meth:`LegKinematics.evaluate_rows` (the estimator) and
:meth:`LegKinematics.joint_targets` (the walking controller: :meth:`LegKinematics.solve_feet`,
:meth:`LegKinematics.rates_and_torques`, gains and limits) every frame on four legs — some 500
float operations and a dozen sines and square roots, ≈ 30 µs of Python per step. The optional
extension ``_leg_accel`` (``_leg_accel.c``, built by ``setup.py`` when a C compiler is present;
``JOINTBUS_NO_ACCEL=1`` turns it off) does each in one call. The ``*_python`` methods are the
reference it is tested against: the same formulas in the same order (compiled without fused
multiply-add), so the results agree to the last bit except where a hypotenuse enters
(``math.hypot`` is Python's own, correctly rounded; the tests allow 1e-12). :data:`ACCELERATED`
says whether it is in use.

Units: m, rad, rad/s, m/s, N·m, N. Positions, velocities and forces are in the body frame;
velocities are relative to the body.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Final, NamedTuple

import numpy as np
import numpy.typing as npt

from jointbus import compiled_core
from jointbus.model.errors import DefinitionError, UnreachableError
from jointbus.model.leg_ik import LegIK
from jointbus.model.link import Sphere
from jointbus.model.robot import RobotModel

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]

__all__ = [
    "ACCELERATED",
    "DEFAULT_SINGULAR_DET",
    "LegKinematics",
    "LegSample",
    "LegTargets",
    "Vec",
    "leg_core",
    "leg_names",
]

#: A 3-vector of plain floats (m, m/s or N).
Vec = tuple[float, float, float]

#: Smallest ``|det J|`` (m³) of a leg whose ground force is computed; the hb50 standing has ≈ 3e-3.
DEFAULT_SINGULAR_DET = 1e-5
_NAN3 = (math.nan, math.nan, math.nan)


_CORE: Final = compiled_core.load("jointbus.robots.hb50.legged._leg_accel")
#: Whether the compiled core ``_leg_accel`` is built and enabled in this process.
ACCELERATED: Final = _CORE is not None


def leg_core() -> ModuleType | None:
    """The compiled core ``_leg_accel`` when :data:`ACCELERATED`, else None — for the other
    components of the step that have a function in it (the walking controller's plan)."""
    return _CORE


def leg_names(model: RobotModel) -> tuple[str, ...]:
    """The robot's legs in actuator order: prefixes ``<leg>`` with a ``<leg>_j0`` joint in the
    actuator order and a ``<leg>_foot`` link (``("fr", "fl", "rl", "rr")`` for the hb50)."""
    legs: list[str] = []
    for name in model.actuator_order:
        if name.endswith("_j0"):
            leg = name[: -len("_j0")]
            if model.has_link(f"{leg}_foot"):
                legs.append(leg)
    return tuple(legs)


def _foot_radius(model: RobotModel, leg: str) -> float:
    """Radius of the foot sphere (m), 0 if the foot link has none (a point foot)."""
    for collision in model.link(f"{leg}_foot").collisions:
        if isinstance(collision.shape, Sphere):
            return float(collision.shape.radius)
    return 0.0


class LegTargets(NamedTuple):
    """Impedance targets of every joint (actuator order; see :meth:`LegKinematics.
    joint_targets`): gains ``kp`` (N·m/rad), ``kd`` (N·m·s/rad), ``position`` (rad),
    ``velocity`` (rad/s), feed-forward ``torque`` (N·m)."""

    kp: list[float]
    kd: list[float]
    position: list[float]
    velocity: list[float]
    torque: list[float]


@dataclass(frozen=True, slots=True)
class LegSample:
    """Kinematics of every leg at one configuration (fresh arrays, legs in :attr:`LegKinematics.
    legs` order, body frame).

    ``position`` (legs, 3) m: foot-sphere centres. ``velocity`` (legs, 3) m/s: ``J·q̇``, the foot's
    velocity relative to the body (zeros without joint velocities). ``force`` (legs, 3) N: the
    ground reaction force on each foot that the joint torques hold, ``−(Jᵀ)⁻¹·τ`` (NaN without
    torques, or for a leg whose ``|det J|`` is below the singularity threshold). ``det`` (legs,)
    m³: ``det J``.
    """

    position: FloatArray
    velocity: FloatArray
    force: FloatArray
    det: FloatArray


@dataclass(frozen=True, slots=True)
class _Leg:
    """One leg's constants, unpacked for the hot loop (see the module docstring's symbols)."""

    i0: int
    i1: int
    i2: int
    hx: float
    hy: float
    hz: float
    s0: float
    s1: float
    s2: float
    ox: float
    oz: float
    w: float
    l1: float
    a1: float
    l2: float
    a2: float


class LegKinematics:
    """Closed-form forward kinematics and statics of all legs of a quadruped model.

    Attributes: ``legs`` (names, actuator order), ``joint_index`` (legs, 3): where each leg's j0,
    j1, j2 sit in the model's actuator order, ``foot_radius`` (legs,) m.
    """

    def __init__(self, model: RobotModel) -> None:
        legs = leg_names(model)
        if not legs:
            raise DefinitionError(
                f"robot {model.name!r}",
                "actuator_order",
                model.actuator_order,
                "legs: <leg>_j0, <leg>_j1, <leg>_j2 joints ending in a <leg>_foot link",
            )
        iks = tuple(LegIK.from_model(model, leg) for leg in legs)
        self.legs = legs
        self.iks = iks
        self.joint_index: IntArray = np.array([ik.joint_indices for ik in iks], dtype=np.intp)
        self.foot_radius: FloatArray = np.array([_foot_radius(model, leg) for leg in legs])
        self._n_joints = len(model.actuator_order)
        # the compiled core's copy of the constants: the closed form's, then the IK's branch
        # signs and joint limits
        self._core = (
            _CORE.Legs(
                [
                    (
                        *ik.joint_indices,
                        *ik.hip,
                        ik.s0,
                        ik.s1,
                        ik.s2,
                        ik.j1_offset[0],
                        ik.j1_offset[2],
                        ik.plane_y,
                        ik.thigh[0],
                        ik.thigh[1],
                        ik.shank[0],
                        ik.shank[1],
                        ik.below,
                        ik.knee,
                        *(bound for pair in ik.bounds for bound in pair),
                    )
                    for ik in iks
                ],
                self._n_joints,
            )
            if _CORE is not None
            else None
        )
        self._legs = tuple(
            _Leg(
                *ik.joint_indices,
                *ik.hip,
                ik.s0,
                ik.s1,
                ik.s2,
                ik.j1_offset[0],
                ik.j1_offset[2],
                ik.plane_y,
                ik.thigh[0],
                ik.thigh[1],
                ik.shank[0],
                ik.shank[1],
            )
            for ik in iks
        )

    @property
    def count(self) -> int:
        """Number of legs."""
        return len(self.legs)

    def evaluate(
        self,
        positions: Sequence[float] | FloatArray,
        velocities: Sequence[float] | FloatArray | None = None,
        torques: Sequence[float] | FloatArray | None = None,
        *,
        singular_det: float = DEFAULT_SINGULAR_DET,
    ) -> LegSample:
        """Feet at actuator-order joint ``positions`` (rad); with joint ``velocities`` (rad/s)
        their velocities, with joint ``torques`` (N·m) the ground reaction forces.

        Sequences may be tuples, lists or 1-D arrays in actuator order. NaN inputs give NaN
        outputs for their legs; nothing is checked here (the caller knows which measurements are
        missing). ``singular_det`` (m³): smallest ``|det J|`` of a leg whose force is computed.
        """
        pos, vel, force, dets = self.evaluate_rows(
            positions, velocities, torques, singular_det=singular_det
        )
        return LegSample(np.array(pos), np.array(vel), np.array(force), np.array(dets))

    @property
    def core(self) -> Any:
        """The compiled core's ``Legs`` of this robot when :data:`ACCELERATED`, else None (the
        state estimator's compiled step runs on it: ``_leg_accel.c``, ``Legs.estimate``)."""
        return self._core

    def evaluate_rows(
        self,
        positions: Sequence[float] | FloatArray,
        velocities: Sequence[float] | FloatArray | None = None,
        torques: Sequence[float] | FloatArray | None = None,
        *,
        singular_det: float = DEFAULT_SINGULAR_DET,
    ) -> tuple[list[Vec], list[Vec], list[Vec], list[float]]:
        """:meth:`evaluate` as plain floats, for callers that decide per leg before building
        arrays: ``(positions, velocities, forces, dets)``, one ``(x, y, z)`` tuple (or one
        float) per leg; velocities are zeros without joint ``velocities``. Compiled when
        :data:`ACCELERATED` (module docstring)."""
        if self._core is not None:
            rows: tuple[list[Vec], list[Vec], list[Vec], list[float]] = self._core.evaluate(
                positions, velocities, torques, singular_det
            )
            return rows
        return self.evaluate_rows_python(
            positions, velocities, torques, singular_det=singular_det
        )

    def evaluate_rows_python(
        self,
        positions: Sequence[float] | FloatArray,
        velocities: Sequence[float] | FloatArray | None = None,
        torques: Sequence[float] | FloatArray | None = None,
        *,
        singular_det: float = DEFAULT_SINGULAR_DET,
    ) -> tuple[list[Vec], list[Vec], list[Vec], list[float]]:
        """:meth:`evaluate_rows` in pure Python (the compiled core's reference)."""
        cos, sin, nan3 = math.cos, math.sin, _NAN3
        q = positions
        qd = velocities
        tau = torques
        pos: list[Vec] = []
        vel: list[Vec] = []
        force: list[Vec] = []
        dets: list[float] = []
        for leg in self._legs:
            s0, s1, s2, w, l2 = leg.s0, leg.s1, leg.s2, leg.w, leg.l2
            i0, i1, i2 = leg.i0, leg.i1, leg.i2
            a = s0 * q[i0]
            psi_t = leg.a1 - s1 * q[i1]
            psi_s = psi_t + leg.a2 - s2 * q[i2]
            c0, sn0 = cos(a), sin(a)
            l2cs, l2ss = l2 * cos(psi_s), l2 * sin(psi_s)
            lct = leg.l1 * cos(psi_t) + l2cs  # leg-plane x of the foot from j1
            lst = leg.l1 * sin(psi_t) + l2ss  # leg-plane z
            x = leg.ox + lct
            z = leg.oz + lst
            pos.append((leg.hx + x, leg.hy + c0 * w - sn0 * z, leg.hz + sn0 * w + c0 * z))
            dx1, dz1 = s1 * lst, -s1 * lct
            dx2, dz2 = s2 * l2ss, -s2 * l2cs
            plane_det = dx1 * dz2 - dx2 * dz1
            det = s0 * z * plane_det
            dets.append(det)
            if qd is not None:
                d0, d1, d2 = qd[i0], qd[i1], qd[i2]
                vy = -s0 * z * d0
                vz = s0 * w * d0 + dz1 * d1 + dz2 * d2
                vel.append((dx1 * d1 + dx2 * d2, c0 * vy - sn0 * vz, sn0 * vy + c0 * vz))
            else:
                vel.append((0.0, 0.0, 0.0))
            if tau is not None and abs(det) >= singular_det:
                t0, t1, t2 = tau[i0], tau[i1], tau[i2]
                gx = (t2 * dz1 - t1 * dz2) / plane_det
                gz = (t1 * dx2 - t2 * dx1) / plane_det
                gy = (s0 * t0 + w * gz) / z
                force.append((gx, c0 * gy - sn0 * gz, sn0 * gy + c0 * gz))
            else:
                force.append(nan3)
        return pos, vel, force, dets

    def rates_and_torques(
        self,
        positions: Sequence[float] | FloatArray,
        foot_velocities: Sequence[Sequence[float]],
        foot_forces: Sequence[Sequence[float]],
    ) -> tuple[list[float] | None, list[float]]:
        """Joint rates that move each foot at its velocity, ``J⁻¹·v`` (rad/s), and the joint
        torques that make each foot push on the ground with its force, ``−Jᵀ·f`` (N·m), at
        actuator-order joint ``positions`` (rad); both in actuator order (zero for joints on no
        leg). ``foot_velocities`` (m/s, relative to the body) and ``foot_forces`` (N, the ground
        on the foot): one ``(x, y, z)`` per leg, body frame.

        The rates are ``None`` when a leg's Jacobian is exactly singular (``det J == 0``), as
        ``numpy.linalg.solve`` refuses it; near-singular legs give large rates (the caller
        clamps them). NaN inputs give NaN for their leg. Closed form: the module docstring;
        compiled when :data:`ACCELERATED`.
        """
        if self._core is not None:
            result: tuple[list[float] | None, list[float]] = self._core.rates_and_torques(
                positions, foot_velocities, foot_forces
            )
            return result
        return self.rates_and_torques_python(positions, foot_velocities, foot_forces)

    def rates_and_torques_python(
        self,
        positions: Sequence[float] | FloatArray,
        foot_velocities: Sequence[Sequence[float]],
        foot_forces: Sequence[Sequence[float]],
    ) -> tuple[list[float] | None, list[float]]:
        """:meth:`rates_and_torques` in pure Python (the compiled core's reference)."""
        cos, sin = math.cos, math.sin
        q = positions
        n = self._n_joints
        rates = [0.0] * n
        torques = [0.0] * n
        singular = False
        for leg, (vx, vy, vz), (fx, fy, fz) in zip(
            self._legs, foot_velocities, foot_forces, strict=True
        ):
            s0, s1, s2, w, l2 = leg.s0, leg.s1, leg.s2, leg.w, leg.l2
            i0, i1, i2 = leg.i0, leg.i1, leg.i2
            a = s0 * q[i0]
            psi_t = leg.a1 - s1 * q[i1]
            psi_s = psi_t + leg.a2 - s2 * q[i2]
            c0, sn0 = cos(a), sin(a)
            l2cs, l2ss = l2 * cos(psi_s), l2 * sin(psi_s)
            lct = leg.l1 * cos(psi_t) + l2cs
            lst = leg.l1 * sin(psi_t) + l2ss
            z = leg.oz + lst
            dx1, dz1 = s1 * lst, -s1 * lct
            dx2, dz2 = s2 * l2ss, -s2 * l2cs
            # J = Rx·H: τ = −Hᵀ·(Rxᵀ·f)
            gy = c0 * fy + sn0 * fz
            gz = -sn0 * fy + c0 * fz
            torques[i0] = s0 * (z * gy - w * gz)
            torques[i1] = -(dx1 * fx + dz1 * gz)
            torques[i2] = -(dx2 * fx + dz2 * gz)
            # H·q̇ = Rxᵀ·v: row 1 gives q̇0, rows 0 and 2 a 2 × 2 system for q̇1, q̇2
            plane_det = dx1 * dz2 - dx2 * dz1
            if z == 0.0 or plane_det == 0.0:
                singular = True
                continue
            hy = c0 * vy + sn0 * vz
            hz = -sn0 * vy + c0 * vz
            d0 = -s0 * hy / z
            h = hz - s0 * w * d0
            rates[i0] = d0
            rates[i1] = (vx * dz2 - dx2 * h) / plane_det
            rates[i2] = (dx1 * h - dz1 * vx) / plane_det
        return (None if singular else rates), torques

    def solve_feet(self, targets: Sequence[Sequence[float]]) -> list[Vec | None]:
        """Joint angles ``(j0, j1, j2)`` (rad) of each leg putting its foot at its target (m,
        body frame; one ``(x, y, z)`` per leg): :meth:`LegIK.solve
        <jointbus.model.leg_ik.LegIK.solve>` per leg, ``None`` where it raises
        :class:`~jointbus.model.errors.UnreachableError`. Compiled when :data:`ACCELERATED`; a
        leg the core hands back (out of reach, or angles to try ±2π) goes through ``LegIK``."""
        if self._core is None:
            return self.solve_feet_python(targets)
        solved: list[Vec | None] = self._core.solve_ik(targets)
        for k, angles in enumerate(solved):
            if angles is None:
                x, y, z = targets[k]
                with contextlib.suppress(UnreachableError):  # then None: it stays out of reach
                    solved[k] = self.iks[k].solve((x, y, z))
        return solved

    def solve_feet_python(self, targets: Sequence[Sequence[float]]) -> list[Vec | None]:
        """:meth:`solve_feet` in pure Python (the compiled core's reference)."""
        solved: list[Vec | None] = []
        for ik, (x, y, z) in zip(self.iks, targets, strict=True):
            try:
                solved.append(ik.solve((x, y, z)))
            except UnreachableError:
                solved.append(None)
        return solved

    def joint_targets(
        self,
        positions: Sequence[float],
        rotation: Sequence[Sequence[float]],
        *,
        foot_targets: Sequence[Sequence[float]],
        foot_velocities: Sequence[Sequence[float]],
        foot_forces: Sequence[Sequence[float]],
        stance: Sequence[bool],
        gains: tuple[float, float, float, float],
        limits: Sequence[tuple[float, float]],
    ) -> LegTargets:
        """Every joint's impedance targets for feet that should be at ``foot_targets`` (m),
        move at ``foot_velocities`` (m/s, relative to the body) and, on stance legs, push with
        ``foot_forces`` (N, the ground on the foot) — one ``(x, y, z)`` per leg in a frame whose
        rotation from the body frame has the rows ``rotation`` (the walking controller's
        horizontal frame; the identity for the body frame).

        Per leg: positions by the IK (:meth:`solve_feet`; a leg it cannot place keeps the
        measured ``positions``), velocities ``J⁻¹·v`` and torques ``−Jᵀ·f``
        (:meth:`rates_and_torques`; no velocity targets at all when a Jacobian is singular, no
        torque on swing legs), gains ``gains`` = (stance kp, stance kd, swing kp, swing kd);
        then per joint the torque and velocity clamped to ``limits`` (``(torque, velocity)`` per
        joint, N·m and rad/s) and anything not finite replaced (torque, velocity: 0; position:
        the measured one). Actuator order. Compiled when :data:`ACCELERATED`.
        """
        if self._core is None:
            return self.joint_targets_python(
                positions,
                rotation,
                foot_targets=foot_targets,
                foot_velocities=foot_velocities,
                foot_forces=foot_forces,
                stance=stance,
                gains=gains,
                limits=limits,
            )
        kp, kd, position, velocity, torque, unsolved = self._core.joint_targets(
            positions, rotation, foot_targets, foot_velocities, foot_forces, stance, gains, limits
        )
        for k, (x, y, z) in unsolved:  # targets the core leaves to LegIK (then finite, in limits)
            with contextlib.suppress(UnreachableError):  # unreachable: the measured positions
                i0, i1, i2 = self.iks[k].joint_indices
                position[i0], position[i1], position[i2] = self.iks[k].solve((x, y, z))
        return LegTargets(kp, kd, position, velocity, torque)

    def joint_targets_python(
        self,
        positions: Sequence[float],
        rotation: Sequence[Sequence[float]],
        *,
        foot_targets: Sequence[Sequence[float]],
        foot_velocities: Sequence[Sequence[float]],
        foot_forces: Sequence[Sequence[float]],
        stance: Sequence[bool],
        gains: tuple[float, float, float, float],
        limits: Sequence[tuple[float, float]],
    ) -> LegTargets:
        """:meth:`joint_targets` in pure Python (the compiled core's reference)."""
        (ax, ay, az), (bx, by, bz), (cx, cy, cz) = rotation
        # into the body frame: Rᵀ·v
        foot_t_b = [
            (ax * x + bx * y + cx * z, ay * x + by * y + cy * z, az * x + bz * y + cz * z)
            for x, y, z in foot_targets
        ]
        foot_v_b = [
            (ax * x + bx * y + cx * z, ay * x + by * y + cy * z, az * x + bz * y + cz * z)
            for x, y, z in foot_velocities
        ]
        forces_b = [
            (ax * x + bx * y + cx * z, ay * x + by * y + cy * z, az * x + bz * y + cz * z)
            for x, y, z in foot_forces
        ]
        q = list(positions)
        rates, torques = self.rates_and_torques_python(q, foot_v_b, forces_b)
        nj = self._n_joints
        if len(stance) != self.count or len(limits) != nj:
            raise ValueError(
                f"joint_targets: {len(stance)} stance flags, {len(limits)} limit pairs; "
                f"expected one per leg ({self.count}) and one per joint ({nj})"
            )
        vel_t = rates if rates is not None else [0.0] * nj  # a singular leg: no velocity target
        pos_t = list(q)
        kp = [0.0] * nj
        kd = [0.0] * nj
        stance_kp, stance_kd, swing_kp, swing_kd = gains
        # a leg the IK cannot place (None) keeps its measured joints as targets
        for i, angles in enumerate(self.solve_feet_python(foot_t_b)):
            i0, i1, i2 = self.iks[i].joint_indices
            if angles is not None:
                pos_t[i0], pos_t[i1], pos_t[i2] = angles
            if stance[i]:
                kp[i0] = kp[i1] = kp[i2] = stance_kp
                kd[i0] = kd[i1] = kd[i2] = stance_kd
            else:
                kp[i0] = kp[i1] = kp[i2] = swing_kp
                kd[i0] = kd[i1] = kd[i2] = swing_kd
                torques[i0] = torques[i1] = torques[i2] = 0.0
        # clamp (a NaN passes the comparisons, as through np.clip), then non-finite → 0 / q
        isfinite = math.isfinite
        for j, (t_lim, v_lim) in enumerate(limits):
            t = torques[j]
            t = t_lim if t > t_lim else -t_lim if t < -t_lim else t
            torques[j] = t if isfinite(t) else 0.0
            v = vel_t[j]
            v = v_lim if v > v_lim else -v_lim if v < -v_lim else v
            vel_t[j] = v if isfinite(v) else 0.0
            if not isfinite(pos_t[j]):
                pos_t[j] = q[j]
        return LegTargets(kp, kd, pos_t, vel_t, torques)

    def positions_of(self, positions: Sequence[float] | FloatArray) -> FloatArray:
        """Foot positions (legs, 3) in the body frame (m) at actuator-order joint ``positions``."""
        return self.evaluate(positions).position

    def jacobians(self, positions: Sequence[float] | FloatArray) -> FloatArray:
        """The feet's 3 × 3 Jacobians (legs, 3, 3): d foot position (m, body frame) / d (j0, j1,
        j2) (rad), for gravity compensation and tests; not used in the 500 Hz path."""
        out = np.empty((len(self._legs), 3, 3))
        for k, leg in enumerate(self._legs):
            s0, s1, s2, w, l2 = leg.s0, leg.s1, leg.s2, leg.w, leg.l2
            a = s0 * positions[leg.i0]
            psi_t = leg.a1 - s1 * positions[leg.i1]
            psi_s = psi_t + leg.a2 - s2 * positions[leg.i2]
            l2cs, l2ss = l2 * math.cos(psi_s), l2 * math.sin(psi_s)
            lct = leg.l1 * math.cos(psi_t) + l2cs
            lst = leg.l1 * math.sin(psi_t) + l2ss
            z = leg.oz + lst
            h = np.array(
                (
                    (0.0, s1 * lst, s2 * l2ss),
                    (-s0 * z, 0.0, 0.0),
                    (s0 * w, -s1 * lct, -s2 * l2cs),
                )
            )
            c, s = math.cos(a), math.sin(a)
            rx = np.array(((1.0, 0.0, 0.0), (0.0, c, -s), (0.0, s, c)))
            out[k] = rx @ h
        return out
