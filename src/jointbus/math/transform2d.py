"""Planar rigid transforms ``(x, y, theta)``: a mobile base's pose on the floor, a 2-D offset.

Where it sits: :mod:`jointbus.math`; lifts to :class:`~jointbus.math.transform.Transform` (rotation
about +z) so planar and 3-D code can meet. Units: x, y in m, theta in rad, counter-clockwise.

Angle wrapping — the choice and why:

- The **constructor stores theta exactly as given** (it does not wrap). A heading is sometimes
  deliberately unwrapped (multi-turn odometry, a commanded turn of 2π), ``geometry_msgs/Pose2D``
  carries it as given, and a value type should not silently change what it was handed: a
  message decoded and re-encoded must produce the same bytes.
- **Derived transforms wrap**: :meth:`Transform2D.compose` and :meth:`Transform2D.inverse` return
  theta in (-π, π] (see :func:`wrap_angle`), so long composition chains stay bounded and
  comparable. :meth:`Transform2D.from_matrix` returns theta in (-π, π] as well.
- Because of this, ``==`` (exact) distinguishes theta = 0 from theta = 2π;
  :meth:`Transform2D.isclose` compares headings modulo 2π.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from jointbus.math.errors import MathError
from jointbus.math.quaternion import Quaternion
from jointbus.math.transform import Transform
from jointbus.math.validation import finite_array, finite_float
from jointbus.math.vec3 import Vec3

_isfinite = math.isfinite
_TAU = math.tau
_PI = math.pi


def wrap_angle(angle: float) -> float:
    """``angle`` (rad) wrapped into (-π, π] (so π stays π and -π becomes π)."""
    wrapped = math.remainder(angle, _TAU)
    return _PI if wrapped <= -_PI else wrapped


@dataclass(frozen=True, slots=True)
class Transform2D:
    """An immutable planar transform: rotate by ``theta`` (rad, CCW) then translate by (x, y) m."""

    x: float
    y: float
    theta: float

    def __post_init__(self) -> None:
        x, y, theta = self.x, self.y, self.theta
        if (
            type(x) is float
            and type(y) is float
            and type(theta) is float
            and _isfinite(x)
            and _isfinite(y)
            and _isfinite(theta)
        ):
            return
        object.__setattr__(self, "x", finite_float("Transform2D", "x", x))
        object.__setattr__(self, "y", finite_float("Transform2D", "y", y))
        object.__setattr__(self, "theta", finite_float("Transform2D", "theta", theta))

    @classmethod
    def identity(cls) -> Transform2D:
        """The planar transform that changes nothing."""
        return cls(0.0, 0.0, 0.0)

    def compose(self, other: Transform2D) -> Transform2D:
        """``self ∘ other`` (``other`` applied first); theta of the result wrapped to (-π, π]."""
        c, s = math.cos(self.theta), math.sin(self.theta)
        return Transform2D(
            self.x + c * other.x - s * other.y,
            self.y + s * other.x + c * other.y,
            wrap_angle(self.theta + other.theta),
        )

    def __matmul__(self, other: Transform2D) -> Transform2D:
        """Same as :meth:`compose`."""
        if not isinstance(other, Transform2D):
            return NotImplemented
        return self.compose(other)

    def inverse(self) -> Transform2D:
        """The inverse transform; theta wrapped to (-π, π]."""
        c, s = math.cos(self.theta), math.sin(self.theta)
        x, y = self.x, self.y
        return Transform2D(-(c * x + s * y), s * x - c * y, wrap_angle(-self.theta))

    def apply(self, x: float, y: float) -> tuple[float, float]:
        """Map the point (x, y) m from the child frame to the parent frame."""
        x = finite_float("Transform2D.apply", "x", x)
        y = finite_float("Transform2D.apply", "y", y)
        c, s = math.cos(self.theta), math.sin(self.theta)
        return (c * x - s * y + self.x, s * x + c * y + self.y)

    def to_transform(self) -> Transform:
        """Lift to 3-D: translation (x, y, 0) m and a rotation of theta about +z."""
        half = 0.5 * self.theta
        return Transform(
            Vec3(self.x, self.y, 0.0), Quaternion(math.cos(half), 0.0, 0.0, math.sin(half))
        )

    def isclose(self, other: Transform2D, tol: float = 1e-9) -> bool:
        """x, y within ``tol`` m and headings within ``tol`` rad modulo 2π."""
        return (
            abs(self.x - other.x) <= tol
            and abs(self.y - other.y) <= tol
            and abs(wrap_angle(self.theta - other.theta)) <= tol
        )

    def to_matrix(self) -> npt.NDArray[np.float64]:
        """The 3×3 homogeneous matrix ``[[c, -s, x], [s, c, y], [0, 0, 1]]`` (float64)."""
        c, s = math.cos(self.theta), math.sin(self.theta)
        return np.array(((c, -s, self.x), (s, c, self.y), (0.0, 0.0, 1.0)), dtype=np.float64)

    @classmethod
    def from_matrix(cls, m: npt.ArrayLike, tol: float = 1e-6) -> Transform2D:
        """From a 3×3 homogeneous matrix; theta in (-π, π].

        The bottom row must be ``[0, 0, 1]`` and the 2×2 block a rotation (orthonormal,
        determinant +1) within ``tol``; otherwise :class:`MathError`.
        """
        a = finite_array("Transform2D.from_matrix", m, (3, 3))
        (m00, m01, x), (m10, m11, y), bottom = a.tolist()
        if max(abs(bottom[0]), abs(bottom[1]), abs(bottom[2] - 1.0)) > tol:
            raise MathError("Transform2D.from_matrix", "bottom row", bottom, "[0, 0, 1]")
        error = max(
            abs(m00 - m11), abs(m01 + m10), abs(m00 * m00 + m10 * m10 - 1.0)
        )
        if error > tol:
            raise MathError(
                "Transform2D.from_matrix",
                "rotation block",
                [[m00, m01], [m10, m11]],
                f"[[cos θ, -sin θ], [sin θ, cos θ]] within {tol}",
            )
        return cls(x, y, wrap_angle(math.atan2(m10, m00)))
