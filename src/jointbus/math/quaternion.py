"""Unit quaternions for 3-D rotations, stored (w, x, y, z) and normalised on construction.

Where it sits: :mod:`jointbus.math`, above :mod:`~jointbus.math.vec3`; used by
:class:`~jointbus.math.transform.Transform` and by the kinematics of :mod:`jointbus.model`.

Design choices:

- **Scalar first** (w, x, y, z), as in Eigen's constructor and MuJoCo. ROS messages
  (``geometry_msgs/Quaternion``) order them x, y, z, w; the message layer does that reordering, not
  this type.
- **Always unit length.** The constructor divides by the norm, so ``Quaternion(2, 0, 0, 0)`` *is*
  the identity and repeated products cannot drift away from a rotation. A norm below
  :data:`MIN_NORM` (1e-9) is rejected rather than normalised: such a value is almost always an
  uninitialised or zeroed field, and normalising it would invent an arbitrary rotation.
- **Sign is not canonicalised.** ``q`` and ``-q`` are the same rotation but different values
  (``==`` compares components exactly); :meth:`Quaternion.isclose` and
  :meth:`Quaternion.angle_to` treat them as equal. Flipping signs on construction would make
  interpolation and products discontinuous.
- **Roll/pitch/yaw** follow the ROS convention (REP 103, tf2 ``setRPY``): fixed axes X, then Y,
  then Z, i.e. ``R = Rz(yaw) · Ry(pitch) · Rx(roll)``; angles in rad.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from jointbus.math.errors import MathError
from jointbus.math.validation import finite_array, finite_float
from jointbus.math.vec3 import Vec3

MIN_NORM = 1e-9
"""Smallest quaternion norm accepted before normalising (see the module docstring)."""

_GIMBAL_COS = 1e-8
"""Below this cos(pitch) :meth:`Quaternion.to_rpy` treats the pose as gimbal-locked (yaw := 0)."""

_isfinite = math.isfinite
_hypot = math.hypot


#: |norm − 1| below which a quaternion is taken as already normalised (a few ulp of 1.0).
_UNIT_TOLERANCE = 4.0 * 2.220446049250313e-16


@dataclass(frozen=True, slots=True)
class Quaternion:
    """An immutable unit quaternion ``w + xi + yj + zk`` representing a rotation."""

    w: float
    x: float
    y: float
    z: float

    def __post_init__(self) -> None:
        w, x, y, z = self.w, self.x, self.y, self.z
        plain = (
            type(w) is float
            and type(x) is float
            and type(y) is float
            and type(z) is float
            and _isfinite(w)
            and _isfinite(x)
            and _isfinite(y)
            and _isfinite(z)
        )
        if not plain:
            w = finite_float("Quaternion", "w", w)
            x = finite_float("Quaternion", "x", x)
            y = finite_float("Quaternion", "y", y)
            z = finite_float("Quaternion", "z", z)
        n = _hypot(w, x, y, z)
        if abs(n - 1.0) <= _UNIT_TOLERANCE:
            # Already unit length to within rounding: keep the components bit for bit, so a
            # quaternion that went through a wire round trip compares equal to the original
            # (re-dividing by a norm of 1 ± 1 ulp would change the last bit of some values).
            if not plain:
                object.__setattr__(self, "w", w)
                object.__setattr__(self, "x", x)
                object.__setattr__(self, "y", y)
                object.__setattr__(self, "z", z)
            return
        if not _isfinite(n):  # components near the float maximum: scale down before measuring
            big = max(abs(w), abs(x), abs(y), abs(z))
            w, x, y, z = w / big, x / big, y / big, z / big
            n = _hypot(w, x, y, z)
        if n < MIN_NORM:
            raise MathError(
                "Quaternion",
                "norm",
                n,
                f"at least {MIN_NORM} (a zero quaternion is not a rotation; "
                f"got w={w!r}, x={x!r}, y={y!r}, z={z!r})",
            )
        object.__setattr__(self, "w", w / n)
        object.__setattr__(self, "x", x / n)
        object.__setattr__(self, "y", y / n)
        object.__setattr__(self, "z", z / n)

    # -- construction ------------------------------------------------------------------------

    @classmethod
    def identity(cls) -> Quaternion:
        """The rotation that does nothing."""
        return cls(1.0, 0.0, 0.0, 0.0)

    @classmethod
    def from_axis_angle(cls, axis: Vec3, angle: float) -> Quaternion:
        """Rotation of ``angle`` rad about ``axis`` (right-hand rule); the axis need not be unit.

        Raises :class:`MathError` for a zero axis (there is no direction to rotate about).
        """
        angle = finite_float("Quaternion.from_axis_angle", "angle", angle)
        n = axis.norm()
        if n < MIN_NORM:
            raise MathError("Quaternion.from_axis_angle", "axis", axis, "a non-zero vector")
        half = 0.5 * angle
        s = math.sin(half) / n
        return cls(math.cos(half), axis.x * s, axis.y * s, axis.z * s)

    @classmethod
    def from_rpy(cls, roll: float, pitch: float, yaw: float) -> Quaternion:
        """Rotation ``Rz(yaw) · Ry(pitch) · Rx(roll)`` (ROS / tf2 ``setRPY``), angles in rad."""
        roll = finite_float("Quaternion.from_rpy", "roll", roll)
        pitch = finite_float("Quaternion.from_rpy", "pitch", pitch)
        yaw = finite_float("Quaternion.from_rpy", "yaw", yaw)
        cr, sr = math.cos(0.5 * roll), math.sin(0.5 * roll)
        cp, sp = math.cos(0.5 * pitch), math.sin(0.5 * pitch)
        cy, sy = math.cos(0.5 * yaw), math.sin(0.5 * yaw)
        return cls(
            cr * cp * cy + sr * sp * sy,
            sr * cp * cy - cr * sp * sy,
            cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy,
        )

    @classmethod
    def from_matrix(cls, m: npt.ArrayLike, tol: float = 1e-6) -> Quaternion:
        """From a 3×3 rotation matrix (orthonormal, determinant +1 within ``tol``).

        Anything else (a scaled, sheared or mirrored matrix) raises :class:`MathError`: silently
        extracting "the nearest rotation" would hide a wrong frame.
        """
        r = finite_array("Quaternion.from_matrix", m, (3, 3))
        check_rotation("Quaternion.from_matrix", r, tol)
        (m00, m01, m02), (m10, m11, m12), (m20, m21, m22) = r.tolist()
        # Shepperd's method: divide by the largest of the four candidate denominators.
        trace = m00 + m11 + m22
        if trace > 0.0:
            s = 2.0 * math.sqrt(trace + 1.0)
            return cls(0.25 * s, (m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s)
        if m00 > m11 and m00 > m22:
            s = 2.0 * math.sqrt(1.0 + m00 - m11 - m22)
            return cls((m21 - m12) / s, 0.25 * s, (m01 + m10) / s, (m02 + m20) / s)
        if m11 > m22:
            s = 2.0 * math.sqrt(1.0 + m11 - m00 - m22)
            return cls((m02 - m20) / s, (m01 + m10) / s, 0.25 * s, (m12 + m21) / s)
        s = 2.0 * math.sqrt(1.0 + m22 - m00 - m11)
        return cls((m10 - m01) / s, (m02 + m20) / s, (m12 + m21) / s, 0.25 * s)

    @classmethod
    def from_numpy(cls, a: npt.ArrayLike) -> Quaternion:
        """From an array-like ``[w, x, y, z]`` of shape (4,); normalised like the constructor."""
        w, x, y, z = finite_array("Quaternion.from_numpy", a, (4,), ("w", "x", "y", "z")).tolist()
        return cls(w, x, y, z)

    # -- algebra -------------------------------------------------------------------------------

    def __mul__(self, other: Quaternion) -> Quaternion:
        """Hamilton product: ``(a * b).rotate(v) == a.rotate(b.rotate(v))`` (b applied first)."""
        if not isinstance(other, Quaternion):
            return NotImplemented
        aw, ax, ay, az = self.w, self.x, self.y, self.z
        bw, bx, by, bz = other.w, other.x, other.y, other.z
        return Quaternion(
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        )

    def conjugate(self) -> Quaternion:
        """``(w, -x, -y, -z)``; for a unit quaternion this is the inverse rotation."""
        return Quaternion(self.w, -self.x, -self.y, -self.z)

    def inverse(self) -> Quaternion:
        """The inverse rotation (equal to :meth:`conjugate`, as the value is always unit length)."""
        return Quaternion(self.w, -self.x, -self.y, -self.z)

    def rotate(self, v: Vec3) -> Vec3:
        """Rotate ``v`` by this rotation (``q v q*``), without building a matrix."""
        w, qx, qy, qz = self.w, self.x, self.y, self.z
        vx, vy, vz = v.x, v.y, v.z
        # t = 2 (q_vec × v);  v' = v + w t + q_vec × t
        tx = 2.0 * (qy * vz - qz * vy)
        ty = 2.0 * (qz * vx - qx * vz)
        tz = 2.0 * (qx * vy - qy * vx)
        return Vec3(
            vx + w * tx + (qy * tz - qz * ty),
            vy + w * ty + (qz * tx - qx * tz),
            vz + w * tz + (qx * ty - qy * tx),
        )

    def angle_to(self, other: Quaternion) -> float:
        """Angle in rad, in [0, π], of the rotation taking ``self`` to ``other`` (q ≡ -q)."""
        d = self.conjugate() * other
        return 2.0 * math.atan2(math.hypot(d.x, d.y, d.z), abs(d.w))

    def isclose(self, other: Quaternion, tol: float = 1e-9) -> bool:
        """True if components agree within ``tol`` with ``other`` or ``-other`` (same rotation)."""
        dw, dx, dy, dz = self.w - other.w, self.x - other.x, self.y - other.y, self.z - other.z
        if abs(dw) <= tol and abs(dx) <= tol and abs(dy) <= tol and abs(dz) <= tol:
            return True
        sw, sx, sy, sz = self.w + other.w, self.x + other.x, self.y + other.y, self.z + other.z
        return abs(sw) <= tol and abs(sx) <= tol and abs(sy) <= tol and abs(sz) <= tol

    # -- conversion ----------------------------------------------------------------------------

    def to_rpy(self) -> tuple[float, float, float]:
        """``(roll, pitch, yaw)`` in rad with pitch in [-π/2, π/2], roll and yaw in [-π, π].

        At gimbal lock (pitch = ±π/2) roll and yaw are not separable; yaw is then reported as 0
        and roll carries the whole rotation about the vertical, so ``from_rpy(*q.to_rpy())`` is
        always the same rotation as ``q``.
        """
        w, x, y, z = self.w, self.x, self.y, self.z
        r00 = 1.0 - 2.0 * (y * y + z * z)
        r10 = 2.0 * (x * y + w * z)
        r20 = 2.0 * (x * z - w * y)
        cos_pitch = math.hypot(r00, r10)
        pitch = math.atan2(-r20, cos_pitch)
        if cos_pitch < _GIMBAL_COS:
            r11 = 1.0 - 2.0 * (x * x + z * z)
            r12 = 2.0 * (y * z - w * x)
            return math.atan2(-r12, r11), pitch, 0.0
        r21 = 2.0 * (y * z + w * x)
        r22 = 1.0 - 2.0 * (x * x + y * y)
        return math.atan2(r21, r22), pitch, math.atan2(r10, r00)

    def to_matrix(self) -> npt.NDArray[np.float64]:
        """The 3×3 rotation matrix (float64), acting on column vectors."""
        w, x, y, z = self.w, self.x, self.y, self.z
        xx, yy, zz = x * x, y * y, z * z
        xy, xz, yz = x * y, x * z, y * z
        wx, wy, wz = w * x, w * y, w * z
        return np.array(
            (
                (1.0 - 2.0 * (yy + zz), 2.0 * (xy - wz), 2.0 * (xz + wy)),
                (2.0 * (xy + wz), 1.0 - 2.0 * (xx + zz), 2.0 * (yz - wx)),
                (2.0 * (xz - wy), 2.0 * (yz + wx), 1.0 - 2.0 * (xx + yy)),
            ),
            dtype=np.float64,
        )

    def to_numpy(self) -> npt.NDArray[np.float64]:
        """A new float64 array ``[w, x, y, z]`` of shape (4,)."""
        return np.array((self.w, self.x, self.y, self.z), dtype=np.float64)


def check_rotation(owner: str, r: npt.NDArray[np.float64], tol: float) -> None:
    """Raise :class:`MathError` unless ``r`` (3×3) is orthonormal with determinant +1 within tol."""
    error = float(np.max(np.abs(r @ r.T - np.eye(3))))
    if error > tol:
        raise MathError(
            owner, "max |R·Rᵀ - I| of the rotation part", error, f"an orthonormal matrix (<= {tol})"
        )
    det = float(np.linalg.det(r))
    if det < 0.0:
        raise MathError(
            owner, "determinant of the rotation part", det, "+1 (a reflection is not a rotation)"
        )
