"""Velocities of a rigid body: :class:`Twist` (3-D) and :class:`Twist2D` (planar base).

Where it sits: :mod:`jointbus.math`; the message layer maps them to ``geometry_msgs/Twist``.
Units: linear m/s, angular rad/s. Both are plain value vectors: they add and scale, and the frame
they are expressed in is the caller's (or the message header's) business — this module does not
guess it. Array order follows ROS: linear first, then angular.
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
_TWIST_NAMES = ("linear.x", "linear.y", "linear.z", "angular.x", "angular.y", "angular.z")


@dataclass(frozen=True, slots=True)
class Twist:
    """An immutable 3-D velocity: ``linear`` (m/s) and ``angular`` (rad/s)."""

    linear: Vec3
    angular: Vec3

    def __post_init__(self) -> None:
        if not isinstance(self.linear, Vec3):
            raise MathError("Twist", "linear", self.linear, "a Vec3 (m/s)")
        if not isinstance(self.angular, Vec3):
            raise MathError("Twist", "angular", self.angular, "a Vec3 (rad/s)")

    @classmethod
    def zero(cls) -> Twist:
        """Standing still."""
        return cls(Vec3.ZERO, Vec3.ZERO)

    def __add__(self, other: Twist) -> Twist:
        if not isinstance(other, Twist):
            return NotImplemented
        return Twist(self.linear + other.linear, self.angular + other.angular)

    def __sub__(self, other: Twist) -> Twist:
        if not isinstance(other, Twist):
            return NotImplemented
        return Twist(self.linear - other.linear, self.angular - other.angular)

    def __neg__(self) -> Twist:
        return Twist(-self.linear, -self.angular)

    def __mul__(self, k: float) -> Twist:
        if not is_real(k):
            return NotImplemented
        return Twist(self.linear * k, self.angular * k)

    def __rmul__(self, k: float) -> Twist:
        return self.__mul__(k)

    def to_numpy(self) -> npt.NDArray[np.float64]:
        """``[vx, vy, vz, wx, wy, wz]``, shape (6,), float64."""
        lin, ang = self.linear, self.angular
        return np.array((lin.x, lin.y, lin.z, ang.x, ang.y, ang.z), dtype=np.float64)

    @classmethod
    def from_numpy(cls, a: npt.ArrayLike) -> Twist:
        """From an array-like of shape (6,): linear (m/s) then angular (rad/s)."""
        vx, vy, vz, wx, wy, wz = finite_array("Twist.from_numpy", a, (6,), _TWIST_NAMES).tolist()
        return cls(Vec3(vx, vy, vz), Vec3(wx, wy, wz))


@dataclass(frozen=True, slots=True)
class Twist2D:
    """An immutable planar velocity: ``vx``, ``vy`` (m/s) and ``omega`` (rad/s, about +z)."""

    vx: float
    vy: float
    omega: float

    def __post_init__(self) -> None:
        vx, vy, omega = self.vx, self.vy, self.omega
        if (
            type(vx) is float
            and type(vy) is float
            and type(omega) is float
            and _isfinite(vx)
            and _isfinite(vy)
            and _isfinite(omega)
        ):
            return
        object.__setattr__(self, "vx", finite_float("Twist2D", "vx", vx))
        object.__setattr__(self, "vy", finite_float("Twist2D", "vy", vy))
        object.__setattr__(self, "omega", finite_float("Twist2D", "omega", omega))

    @classmethod
    def zero(cls) -> Twist2D:
        """Standing still."""
        return cls(0.0, 0.0, 0.0)

    def __add__(self, other: Twist2D) -> Twist2D:
        if not isinstance(other, Twist2D):
            return NotImplemented
        return Twist2D(self.vx + other.vx, self.vy + other.vy, self.omega + other.omega)

    def __sub__(self, other: Twist2D) -> Twist2D:
        if not isinstance(other, Twist2D):
            return NotImplemented
        return Twist2D(self.vx - other.vx, self.vy - other.vy, self.omega - other.omega)

    def __neg__(self) -> Twist2D:
        return Twist2D(-self.vx, -self.vy, -self.omega)

    def __mul__(self, k: float) -> Twist2D:
        if not is_real(k):
            return NotImplemented
        return Twist2D(self.vx * k, self.vy * k, self.omega * k)

    def __rmul__(self, k: float) -> Twist2D:
        return self.__mul__(k)

    def to_twist(self) -> Twist:
        """Lift to 3-D: linear (vx, vy, 0) m/s, angular (0, 0, omega) rad/s."""
        return Twist(Vec3(self.vx, self.vy, 0.0), Vec3(0.0, 0.0, self.omega))

    def to_numpy(self) -> npt.NDArray[np.float64]:
        """``[vx, vy, omega]``, shape (3,), float64."""
        return np.array((self.vx, self.vy, self.omega), dtype=np.float64)

    @classmethod
    def from_numpy(cls, a: npt.ArrayLike) -> Twist2D:
        """From an array-like ``[vx, vy, omega]`` of shape (3,)."""
        names = ("vx", "vy", "omega")
        vx, vy, omega = finite_array("Twist2D.from_numpy", a, (3,), names).tolist()
        return cls(vx, vy, omega)
