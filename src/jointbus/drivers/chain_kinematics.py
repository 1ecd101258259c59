"""Forward kinematics of a serial actuator chain from its Player geometry alone.

Where it sits: :mod:`jointbus.drivers`, above :mod:`jointbus.messages.actarray.geometry` and
:mod:`jointbus.math`. A Player client gets nothing but :class:`ArrayGeometry` from a device, so
this computes where each actuator and the chain's tip are from that message — no robot file
needed. (:mod:`jointbus.model` computes kinematics from a full robot tree; the two agree on the
bundled arm, which a test checks.)

The convention (Player's words made exact):

- ``base_position`` / ``base_orientation`` give the frame of actuator 0 in ``header.frame_id``
  (Player: "the base position should always be the position of the first actuator").
- Every actuator's frame is aligned with the previous one *at rest*: ``orientation`` (the "rest
  orientation") is only a *direction* — rotating +x by it and scaling by ``length`` gives the
  position of the next actuator in this actuator's frame — it does not turn the next frame.
- ``axis`` is expressed in the actuator's own frame. A rotary actuator at position ``q`` rotates
  everything after it by ``q`` rad about its axis (right hand); a linear one translates it by
  ``q`` m along its (normalised) axis.

So, with ``d_i = length_i · R(orientation_i) · x̂``::

    T_0     = Transform(base_position, base_orientation)
    T_{i+1} = T_i · M_i(q_i) · Translation(d_i)        M_i = Rot(axis_i, q_i) or Trans(q_i·axis_i)

This is the "product of exponentials at the zero configuration" form: every serial chain of
revolute and prismatic joints can be written this way (with axes and offsets expressed in the
frames as they are at rest), so the rule loses nothing, and a robot file whose joint origins are
pure translations maps to it one-to-one (``d_i`` = next joint's origin, axis = joint axis).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from jointbus.math import Quaternion, Transform, Vec3
from jointbus.messages.actarray.geometry import ArrayGeometry
from jointbus.messages.actarray.state import ActuatorType
from jointbus.messages.errors import LengthMismatchError, NonFiniteError, ValidationError

__all__ = ["ChainKinematics"]

FloatArray = npt.NDArray[np.float64]

_TYPE = "ChainKinematics"


def _rotation(axis: FloatArray, angle: float) -> FloatArray:
    """Rotation matrix of ``angle`` rad about the unit ``axis`` (Rodrigues)."""
    x, y, z = axis
    k = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    r: FloatArray = np.eye(3) + math.sin(angle) * k + (1.0 - math.cos(angle)) * (k @ k)
    return r


class ChainKinematics:
    """Forward kinematics of the chain described by ``geometry`` (see the module docstring)."""

    __slots__ = ("_axes", "_base", "_linear", "_names", "_offsets")

    def __init__(self, geometry: ArrayGeometry, names: Sequence[str] | None = None) -> None:
        if type(geometry) is not ArrayGeometry:
            raise ValidationError(_TYPE, "geometry", geometry, "an ArrayGeometry")
        n = len(geometry.actuators)
        if names is not None and len(names) != n:
            raise LengthMismatchError(_TYPE, "names", tuple(names), f"{n} names, one per actuator")
        self._names = tuple(names) if names is not None else tuple(str(i) for i in range(n))
        base = np.eye(4)
        base[:3, :3] = geometry.base_orientation.to_quaternion().to_matrix()
        bp = geometry.base_position
        base[:3, 3] = (bp.x, bp.y, bp.z)
        self._base = base
        axes = np.zeros((n, 3))
        offsets = np.zeros((n, 3))
        for i, actuator in enumerate(geometry.actuators):
            a = np.array([actuator.axis.x, actuator.axis.y, actuator.axis.z])
            axes[i] = a / np.linalg.norm(a)
            direction = actuator.orientation.to_quaternion().to_matrix()[:, 0]
            offsets[i] = actuator.length * direction
        self._axes = axes
        self._offsets = offsets
        self._linear = tuple(a.type is ActuatorType.LINEAR for a in geometry.actuators)

    @property
    def count(self) -> int:
        """Number of actuators N."""
        return len(self._linear)

    def _checked(self, positions: npt.ArrayLike) -> FloatArray:
        q = np.asarray(positions, dtype=np.float64)
        if q.shape != (self.count,):
            raise LengthMismatchError(
                _TYPE, "positions", q.shape, f"one position per actuator ({self.count} values)"
            )
        bad = ~np.isfinite(q)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise NonFiniteError(
                _TYPE, "positions", float(q[i]), "a finite number", joint=self._names[i], index=i
            )
        return q

    def matrices(self, positions: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """``(N + 1, 4, 4)`` homogeneous transforms: the frame of each actuator (before its own
        motion), then the tip (end of the last link), all in the geometry's base frame."""
        q = self._checked(positions)
        out = np.empty((self.count + 1, 4, 4))
        current = self._base.copy()
        out[0] = current
        for i in range(self.count):
            motion = np.eye(4)
            if self._linear[i]:
                motion[:3, 3] = q[i] * self._axes[i]
            else:
                motion[:3, :3] = _rotation(self._axes[i], float(q[i]))
            link = np.eye(4)
            link[:3, 3] = self._offsets[i]
            current = current @ motion @ link
            out[i + 1] = current
        return out

    def frames(self, positions: npt.ArrayLike) -> tuple[Transform, ...]:
        """:meth:`matrices` as :class:`~jointbus.math.Transform` values (N + 1 of them)."""
        return tuple(
            Transform(Vec3.from_numpy(m[:3, 3]), Quaternion.from_matrix(m[:3, :3]))
            for m in self.matrices(positions)
        )

    def tip(self, positions: npt.ArrayLike) -> Transform:
        """Pose of the end of the last link, in the base frame."""
        m = self.matrices(positions)[-1]
        return Transform(Vec3.from_numpy(m[:3, 3]), Quaternion.from_matrix(m[:3, :3]))

    def points(self, positions: npt.ArrayLike) -> FloatArray:
        """``(N + 1, 3)`` positions (m) of every actuator and of the tip, in the base frame."""
        return self.matrices(positions)[:, :3, 3].copy()
