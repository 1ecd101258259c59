"""Rigid 3-D transforms (rotation then translation), e.g. the pose of a link in its parent frame.

Where it sits: :mod:`jointbus.math`, above :mod:`~jointbus.math.vec3` and
:mod:`~jointbus.math.quaternion`; used by forward kinematics in :mod:`jointbus.model`.

Convention: ``T.apply(p) = R p + t`` — ``T`` maps coordinates expressed in the child frame to the
parent frame, as ``geometry_msgs/Transform`` and tf2 do. ``a @ b`` (also ``a.compose(b)``)
applies ``b`` first, so chains read left to right from the root:
``base_T_tool = base_T_link @ link_T_tool``.
Translation in m.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from jointbus.math.errors import MathError
from jointbus.math.quaternion import Quaternion, check_rotation
from jointbus.math.validation import finite_array
from jointbus.math.vec3 import Vec3


@dataclass(frozen=True, slots=True)
class Transform:
    """An immutable rigid transform: ``rotation`` (unit quaternion) then ``translation`` (m)."""

    translation: Vec3 = field(default_factory=Vec3.zero)
    rotation: Quaternion = field(default_factory=Quaternion.identity)

    def __post_init__(self) -> None:
        if not isinstance(self.translation, Vec3):
            raise MathError("Transform", "translation", self.translation, "a Vec3")
        if not isinstance(self.rotation, Quaternion):
            raise MathError("Transform", "rotation", self.rotation, "a Quaternion")

    @classmethod
    def identity(cls) -> Transform:
        """The transform that changes nothing."""
        return cls(Vec3.ZERO, Quaternion.identity())

    def compose(self, other: Transform) -> Transform:
        """``self ∘ other``: the transform that applies ``other`` first, then ``self``."""
        return Transform(
            self.translation + self.rotation.rotate(other.translation),
            self.rotation * other.rotation,
        )

    def __matmul__(self, other: Transform) -> Transform:
        """Same as :meth:`compose`."""
        if not isinstance(other, Transform):
            return NotImplemented
        return self.compose(other)

    def inverse(self) -> Transform:
        """The transform ``inv`` with ``self @ inv`` and ``inv @ self`` equal to the identity."""
        inv_rotation = self.rotation.conjugate()
        return Transform(-inv_rotation.rotate(self.translation), inv_rotation)

    def apply(self, point: Vec3) -> Vec3:
        """Map a point (m) from the child frame to the parent frame: ``R p + t``."""
        return self.rotation.rotate(point) + self.translation

    def isclose(self, other: Transform, tol: float = 1e-9) -> bool:
        """Translations within ``tol`` (m) per component and rotations close (q ≡ -q)."""
        return self.translation.isclose(other.translation, tol) and self.rotation.isclose(
            other.rotation, tol
        )

    def to_matrix(self) -> npt.NDArray[np.float64]:
        """The 4×4 homogeneous matrix ``[[R, t], [0, 0, 0, 1]]`` (float64)."""
        m = np.eye(4, dtype=np.float64)
        m[:3, :3] = self.rotation.to_matrix()
        m[:3, 3] = (self.translation.x, self.translation.y, self.translation.z)
        return m

    @classmethod
    def from_matrix(cls, m: npt.ArrayLike, tol: float = 1e-6) -> Transform:
        """From a 4×4 homogeneous matrix.

        The bottom row must be ``[0, 0, 0, 1]`` and the rotation block orthonormal with
        determinant +1, each within ``tol``; otherwise :class:`MathError` (a projective or scaled
        matrix is not a rigid transform, and guessing would hide a wrong frame).
        """
        a = finite_array("Transform.from_matrix", m, (4, 4))
        bottom = a[3].tolist()
        if max(abs(bottom[0]), abs(bottom[1]), abs(bottom[2]), abs(bottom[3] - 1.0)) > tol:
            raise MathError("Transform.from_matrix", "bottom row", bottom, "[0, 0, 0, 1]")
        rotation_block = a[:3, :3]
        check_rotation("Transform.from_matrix", rotation_block, tol)
        x, y, z = a[:3, 3].tolist()
        return cls(Vec3(x, y, z), Quaternion.from_matrix(rotation_block, tol))
