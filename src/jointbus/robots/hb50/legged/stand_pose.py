"""Body pose while standing → joint targets: feet fixed on the ground, body moved above them.

Where it sits: :mod:`jointbus.robots.hb50.legged`, used by the motion controller in STAND (and for
its stand-up and sit-down end poses). It only needs the robot model's legs and IK
(:class:`~jointbus.model.leg_ik.LegIK`); no bus, no clock.

The stance: each foot stands where the model's ``home`` pose puts it in x and y (body frame) —
under its hip, on the ground. A body pose (height ``h`` of the body origin above the ground,
roll, pitch, yaw) places the body above that footprint: a foot at ground point ``g`` (in the
frame on the ground under the nominal body centre, z up, foot-sphere centre at z = radius) is at
``Rᵀ·(g − (0, 0, h))`` in the body frame, with ``R = Rz(yaw)·Ry(pitch)·Rx(roll)``. Leg IK turns
those foot positions into joint targets (rad, actuator order).

Safe ranges — the commanded pose is clamped into them, never rejected, because it comes from a
joystick (the :class:`PoseClamp` of the result says what was clamped):

==========  =================  =======================================================
quantity    range              why
==========  =================  =======================================================
height      0.22 … 0.37 m      lower, the folded knees (limit 2.705 rad) leave too little
                               room to tilt; higher, the legs are nearly straight (the
                               knee singularity, poor force control)
roll        ±0.20 rad          every combination of the three angles at every height in
pitch       ±0.20 rad          range is reachable (at 0.20 m the reachable box shrinks
yaw         ±0.20 rad          to ±0.20 rad, at 0.16 m to ±0.10 rad)
==========  =================  =======================================================

The ranges are checked by the tests: IK succeeds at every corner of the box.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from jointbus.math import Quaternion
from jointbus.messages.errors import LimitError, NonFiniteError
from jointbus.model.robot import RobotModel
from jointbus.robots.hb50.legged.leg_kinematics import LegKinematics

FloatArray = npt.NDArray[np.float64]

__all__ = ["BodyPose", "PoseClamp", "PoseLimits", "StandPose"]

_OWNER = "StandPose"


@dataclass(frozen=True, slots=True)
class BodyPose:
    """A standing body pose: ``height`` (m, body origin above the ground) and ``roll``,
    ``pitch``, ``yaw`` (rad) of the body over its fixed footprint."""

    height: float
    roll: float = 0.0
    pitch: float = 0.0
    yaw: float = 0.0

    def __post_init__(self) -> None:
        for name in ("height", "roll", "pitch", "yaw"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise LimitError("BodyPose", name, value, "a real number")
            if not math.isfinite(value):
                raise NonFiniteError("BodyPose", name, value, "a finite number")
            object.__setattr__(self, name, float(value))


@dataclass(frozen=True, slots=True)
class PoseLimits:
    """Inclusive safe ranges of a :class:`BodyPose` (m, rad); see the module docstring."""

    height_min: float = 0.22
    height_max: float = 0.37
    roll_max: float = 0.20
    pitch_max: float = 0.20
    yaw_max: float = 0.20

    def __post_init__(self) -> None:
        if not 0.0 < self.height_min <= self.height_max:
            raise LimitError("PoseLimits", "height_min", self.height_min, "0 < min ≤ height_max")
        for name in ("roll_max", "pitch_max", "yaw_max"):
            if not 0.0 <= getattr(self, name) < math.pi / 2:
                raise LimitError("PoseLimits", name, getattr(self, name), "in [0, π/2) rad")


@dataclass(frozen=True, slots=True)
class PoseClamp:
    """What :meth:`StandPose.clamp` changed: ``(field, requested, used)`` per clamped field."""

    clamped: tuple[tuple[str, float, float], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.clamped)

    def describe(self) -> str:
        """One line for a status report, e.g. ``height 0.5 → 0.37``."""
        return "; ".join(f"{name} {asked!r} → {used!r}" for name, asked, used in self.clamped)


class StandPose:
    """Joint targets (rad, actuator order) for body poses over the ``home`` footprint."""

    def __init__(self, model: RobotModel, limits: PoseLimits | None = None) -> None:
        self.model = model
        self.limits = limits or PoseLimits()
        self.kinematics = LegKinematics(model)
        self._n = len(model.actuator_order)
        home = model.pose("home")
        q_home = [home.get(name, 0.0) for name in model.actuator_order]
        feet = self.kinematics.positions_of(q_home)
        footprint = feet.copy()
        footprint[:, 2] = self.kinematics.foot_radius  # foot-sphere centres on the ground
        self.footprint: FloatArray = footprint
        """(legs, 3) m: foot centres in the ground frame under the nominal body centre."""

    def clamp(self, pose: BodyPose) -> tuple[BodyPose, PoseClamp]:
        """``pose`` clamped into :attr:`limits`, and what was clamped."""
        lim = self.limits
        ranges = (
            ("height", lim.height_min, lim.height_max),
            ("roll", -lim.roll_max, lim.roll_max),
            ("pitch", -lim.pitch_max, lim.pitch_max),
            ("yaw", -lim.yaw_max, lim.yaw_max),
        )
        used: list[float] = []
        clamped: list[tuple[str, float, float]] = []
        for name, lo, hi in ranges:
            value: float = getattr(pose, name)
            bounded = min(max(value, lo), hi)
            if bounded != value:
                clamped.append((name, value, bounded))
            used.append(bounded)
        return BodyPose(*used), PoseClamp(tuple(clamped))

    def feet(self, pose: BodyPose) -> FloatArray:
        """Foot-centre targets (legs, 3) in the body frame (m) for ``pose`` (not clamped)."""
        rot = Quaternion.from_rpy(pose.roll, pose.pitch, pose.yaw).to_matrix()
        relative = self.footprint - np.array((0.0, 0.0, pose.height))
        out: FloatArray = relative @ rot  # row-wise Rᵀ·(g − h)
        return out

    def joint_targets(self, pose: BodyPose) -> tuple[FloatArray, PoseClamp]:
        """Joint targets (rad, actuator order) for ``pose`` clamped to the safe ranges.

        Raises :class:`~jointbus.model.errors.UnreachableError` only if the limits were widened
        beyond what the legs reach.
        """
        safe, report = self.clamp(pose)
        return self.solve(safe), report

    def solve(self, pose: BodyPose) -> FloatArray:
        """Joint targets (rad, actuator order) for ``pose`` as given, *without* clamping — for
        end poses the controller chooses itself (the folded sitting pose lies below the
        standing range). Raises :class:`~jointbus.model.errors.UnreachableError` naming the leg
        and joint when a foot cannot be placed."""
        feet = self.feet(pose)
        q = np.zeros(self._n)
        for k, ik in enumerate(self.kinematics.iks):
            x, y, z = feet[k].tolist()
            q[list(ik.joint_indices)] = ik.solve((x, y, z))
        return q
