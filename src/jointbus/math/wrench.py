"""Forces on a rigid body: :class:`Wrench` (3-D) and :class:`Wrench2D` (planar base).

Where it sits: :mod:`jointbus.math`; the message layer maps them to ``geometry_msgs/Wrench``.
Units: force N, torque N·m. Both are plain value vectors: they add and scale (summing the loads
on a body), and the frame and reference point they are expressed in are the caller's (or the
message header's) business — this module does not guess them.
Array order follows ROS: force first, then torque.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from jointbus.math.errors import MathError
from jointbus.math.validation import finite_array, finite_float, is_real
from jointbus.math.vec3 import Vec3

_isfinite = math.isfinite
_WRENCH_NAMES = ("force.x", "force.y", "force.z", "torque.x", "torque.y", "torque.z")


@dataclass(frozen=True, slots=True)
class Wrench:
    """An immutable 3-D force/torque pair: ``force`` (N) and ``torque`` (N·m)."""

    force: Vec3
    torque: Vec3

    def __post_init__(self) -> None:
        if not isinstance(self.force, Vec3):
            raise MathError("Wrench", "force", self.force, "a Vec3 (N)")
        if not isinstance(self.torque, Vec3):
            raise MathError("Wrench", "torque", self.torque, "a Vec3 (N·m)")

    @classmethod
    def zero(cls) -> Wrench:
        """No force and no torque."""
        return cls(Vec3.ZERO, Vec3.ZERO)

    def __add__(self, other: Wrench) -> Wrench:
        if not isinstance(other, Wrench):
            return NotImplemented
        return Wrench(self.force + other.force, self.torque + other.torque)

    def __sub__(self, other: Wrench) -> Wrench:
        if not isinstance(other, Wrench):
            return NotImplemented
        return Wrench(self.force - other.force, self.torque - other.torque)

    def __neg__(self) -> Wrench:
        return Wrench(-self.force, -self.torque)

    def __mul__(self, k: float) -> Wrench:
        if not is_real(k):
            return NotImplemented
        return Wrench(self.force * k, self.torque * k)

    def __rmul__(self, k: float) -> Wrench:
        return self.__mul__(k)

    def to_numpy(self) -> npt.NDArray[np.float64]:
        """``[fx, fy, fz, tx, ty, tz]``, shape (6,), float64."""
        frc, trq = self.force, self.torque
        return np.array((frc.x, frc.y, frc.z, trq.x, trq.y, trq.z), dtype=np.float64)

    @classmethod
    def from_numpy(cls, a: npt.ArrayLike) -> Wrench:
        """From an array-like of shape (6,): force (N) then torque (N·m)."""
        array = finite_array("Wrench.from_numpy", a, (6,), _WRENCH_NAMES)
        fx, fy, fz, tx, ty, tz = array.tolist()
        return cls(Vec3(fx, fy, fz), Vec3(tx, ty, tz))


@dataclass(frozen=True, slots=True)
class Wrench2D:
    """An immutable planar force/torque: ``fx``, ``fy`` (N) and ``tau`` (N·m, about +z)."""

    fx: float
    fy: float
    tau: float

    def __post_init__(self) -> None:
        fx, fy, tau = self.fx, self.fy, self.tau
        if (
            type(fx) is float
            and type(fy) is float
            and type(tau) is float
            and _isfinite(fx)
            and _isfinite(fy)
            and _isfinite(tau)
        ):
            return
        object.__setattr__(self, "fx", finite_float("Wrench2D", "fx", fx))
        object.__setattr__(self, "fy", finite_float("Wrench2D", "fy", fy))
        object.__setattr__(self, "tau", finite_float("Wrench2D", "tau", tau))

    @classmethod
    def zero(cls) -> Wrench2D:
        """No force and no torque."""
        return cls(0.0, 0.0, 0.0)

    def __add__(self, other: Wrench2D) -> Wrench2D:
        if not isinstance(other, Wrench2D):
            return NotImplemented
        return Wrench2D(self.fx + other.fx, self.fy + other.fy, self.tau + other.tau)

    def __sub__(self, other: Wrench2D) -> Wrench2D:
        if not isinstance(other, Wrench2D):
            return NotImplemented
        return Wrench2D(self.fx - other.fx, self.fy - other.fy, self.tau - other.tau)

    def __neg__(self) -> Wrench2D:
        return Wrench2D(-self.fx, -self.fy, -self.tau)

    def __mul__(self, k: float) -> Wrench2D:
        if not is_real(k):
            return NotImplemented
        return Wrench2D(self.fx * k, self.fy * k, self.tau * k)

    def __rmul__(self, k: float) -> Wrench2D:
        return self.__mul__(k)

    def to_wrench(self) -> Wrench:
        """Lift to 3-D: force (fx, fy, 0) N, torque (0, 0, tau) N·m."""
        return Wrench(Vec3(self.fx, self.fy, 0.0), Vec3(0.0, 0.0, self.tau))

    def to_numpy(self) -> npt.NDArray[np.float64]:
        """``[fx, fy, tau]``, shape (3,), float64."""
        return np.array((self.fx, self.fy, self.tau), dtype=np.float64)

    @classmethod
    def from_numpy(cls, a: npt.ArrayLike) -> Wrench2D:
        """From an array-like ``[fx, fy, tau]`` of shape (3,)."""
        names = ("fx", "fy", "tau")
        fx, fy, tau = finite_array("Wrench2D.from_numpy", a, (3,), names).tolist()
        return cls(fx, fy, tau)
