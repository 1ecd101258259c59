"""A 3-vector of finite floats: positions (m), velocities (m/s, rad/s), forces (N), torques (N·m).

Where it sits: the lowest value type of :mod:`jointbus.math`; quaternions, transforms, twists and
wrenches are built from it. The arithmetic is pure Python on purpose: for three components it is
several times faster than a numpy round trip, and these objects are made at 500 Hz per joint.
Use :meth:`Vec3.to_numpy` / :meth:`Vec3.from_numpy` to cross into array code.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from jointbus.math.validation import finite_array, finite_float, is_real

_isfinite = math.isfinite


@dataclass(frozen=True, slots=True)
class Vec3:
    """An immutable 3-vector; components are finite floats (ints are accepted and converted).

    Equality is exact float equality of the components; compare computed results with a tolerance.
    """

    x: float
    y: float
    z: float

    ZERO: ClassVar[Vec3]

    def __post_init__(self) -> None:
        x, y, z = self.x, self.y, self.z
        # Fast path: three finite built-in floats (the common case) need no conversion.
        if (
            type(x) is float
            and type(y) is float
            and type(z) is float
            and _isfinite(x)
            and _isfinite(y)
            and _isfinite(z)
        ):
            return
        object.__setattr__(self, "x", finite_float("Vec3", "x", x))
        object.__setattr__(self, "y", finite_float("Vec3", "y", y))
        object.__setattr__(self, "z", finite_float("Vec3", "z", z))

    @classmethod
    def zero(cls) -> Vec3:
        """The zero vector."""
        return cls(0.0, 0.0, 0.0)

    def __iter__(self) -> Iterator[float]:
        """Iterate x, y, z (so ``x, y, z = v`` and ``list(v)`` work)."""
        return iter((self.x, self.y, self.z))

    def __add__(self, other: Vec3) -> Vec3:
        if not isinstance(other, Vec3):
            return NotImplemented
        return Vec3(self.x + other.x, self.y + other.y, self.z + other.z)

    def __sub__(self, other: Vec3) -> Vec3:
        if not isinstance(other, Vec3):
            return NotImplemented
        return Vec3(self.x - other.x, self.y - other.y, self.z - other.z)

    def __neg__(self) -> Vec3:
        return Vec3(-self.x, -self.y, -self.z)

    def __mul__(self, k: float) -> Vec3:
        """Scale by a real number (a vector-vector product is :meth:`dot` or :meth:`cross`)."""
        if not is_real(k):
            return NotImplemented
        return Vec3(self.x * k, self.y * k, self.z * k)

    def __rmul__(self, k: float) -> Vec3:
        if not is_real(k):
            return NotImplemented
        return Vec3(self.x * k, self.y * k, self.z * k)

    def dot(self, other: Vec3) -> float:
        """Scalar product."""
        return self.x * other.x + self.y * other.y + self.z * other.z

    def cross(self, other: Vec3) -> Vec3:
        """Vector product ``self × other`` (right-handed)."""
        ax, ay, az = self.x, self.y, self.z
        bx, by, bz = other.x, other.y, other.z
        return Vec3(ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx)

    def norm(self) -> float:
        """Euclidean length (overflow-safe: uses :func:`math.hypot`)."""
        return math.hypot(self.x, self.y, self.z)

    def isclose(self, other: Vec3, tol: float = 1e-9) -> bool:
        """True if every component differs by at most ``tol`` (absolute, in the vector's unit)."""
        return (
            abs(self.x - other.x) <= tol
            and abs(self.y - other.y) <= tol
            and abs(self.z - other.z) <= tol
        )

    def to_numpy(self) -> npt.NDArray[np.float64]:
        """A new float64 array ``[x, y, z]`` of shape (3,)."""
        return np.array((self.x, self.y, self.z), dtype=np.float64)

    @classmethod
    def from_numpy(cls, a: npt.ArrayLike) -> Vec3:
        """Build from an array-like of shape (3,); raises :class:`MathError` otherwise."""
        x, y, z = finite_array("Vec3.from_numpy", a, (3,), ("x", "y", "z")).tolist()
        return cls(x, y, z)


Vec3.ZERO = Vec3(0.0, 0.0, 0.0)
