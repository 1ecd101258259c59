"""The ``geometry_msgs`` wire records jointbus uses, with conversions to :mod:`jointbus.math`.

Where it sits: :mod:`jointbus.messages`, above :mod:`jointbus.math` and :mod:`jointbus.codec`;
nested in BridgeData, RobotState, MultiDOFJointState and ``tf2_msgs/TFMessage``.

Why two families of types: these classes are *wire records*. They hold exactly what a ROS 2 peer
sent — a zero quaternion, a NaN component (ROS uses it for "unknown") — because a decoder that
normalised or rejected such data would corrupt or drop other people's messages. They only check
that every component is a real number (stored as a built-in ``float``). Arithmetic lives in
:mod:`jointbus.math`, whose types are always finite and whose quaternions are always unit length;
``to_math()`` crosses from one to the other and raises :class:`jointbus.math.MathError` when the
wire data cannot form a valid geometric object (NaN, zero quaternion), ``from_math()`` goes back.

Component order: the wire quaternion is ``x, y, z, w`` (ROS); :class:`jointbus.math.Quaternion`
is ``w, x, y, z``. The conversions handle the swap, so nothing else should touch it.

Units as in ROS: positions in m, linear velocities in m/s, angular velocities in rad/s, forces in N,
torques in N·m.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Self

from jointbus import math as jm
from jointbus.codec.rules import WireRule
from jointbus.codec.wire import Float64, String
from jointbus.messages.base import Message
from jointbus.messages.errors import ValidationError
from jointbus.messages.std_msgs import Header


def _real(type_name: str, field_name: str, value: object) -> float:
    """``value`` as a built-in float (NaN and infinities allowed: ROS data may hold them)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValidationError(type_name, field_name, value, "a real number (float64)")
    return float(value)


def _check_xyz(obj: Vector3 | Point) -> None:
    x, y, z = obj.x, obj.y, obj.z
    if type(x) is float and type(y) is float and type(z) is float:
        return
    name = obj.TYPE_NAME
    object.__setattr__(obj, "x", _real(name, "x", x))
    object.__setattr__(obj, "y", _real(name, "y", y))
    object.__setattr__(obj, "z", _real(name, "z", z))


def _check_nested(obj: object, type_name: str, field_name: str, cls: type) -> None:
    value = getattr(obj, field_name)
    if type(value) is not cls:
        raise ValidationError(
            type_name, field_name, value, f"a {getattr(cls, 'TYPE_NAME', cls.__name__)}"
        )


@dataclass(frozen=True, slots=True)
class Vector3(Message):
    """A free 3-vector (a direction, velocity, acceleration, force or torque; units by use)."""

    TYPE_NAME: ClassVar[str] = "geometry_msgs/msg/Vector3"
    #: Any wire value is valid (NaN included), so the fast decoder skips the constructor.
    WIRE_RULES: ClassVar[Mapping[str, WireRule]] = {}
    x: Float64 = 0.0
    y: Float64 = 0.0
    z: Float64 = 0.0

    def __post_init__(self) -> None:
        _check_xyz(self)

    def to_math(self) -> jm.Vec3:
        """The :class:`jointbus.math.Vec3` (:class:`MathError` if a component is not finite)."""
        return jm.Vec3(self.x, self.y, self.z)

    @classmethod
    def from_math(cls, v: jm.Vec3) -> Self:
        """The wire record of a :class:`jointbus.math.Vec3`."""
        return cls(v.x, v.y, v.z)


@dataclass(frozen=True, slots=True)
class Point(Message):
    """A position in space (m)."""

    TYPE_NAME: ClassVar[str] = "geometry_msgs/msg/Point"
    #: Any wire value is valid (NaN included), so the fast decoder skips the constructor.
    WIRE_RULES: ClassVar[Mapping[str, WireRule]] = {}
    x: Float64 = 0.0
    y: Float64 = 0.0
    z: Float64 = 0.0

    def __post_init__(self) -> None:
        _check_xyz(self)

    def to_math(self) -> jm.Vec3:
        """The :class:`jointbus.math.Vec3` (:class:`MathError` if a component is not finite)."""
        return jm.Vec3(self.x, self.y, self.z)

    @classmethod
    def from_math(cls, v: jm.Vec3) -> Self:
        """The wire record of a :class:`jointbus.math.Vec3`."""
        return cls(v.x, v.y, v.z)


@dataclass(frozen=True, slots=True)
class Quaternion(Message):
    """An orientation as ROS sends it: ``x, y, z, w``, *not* normalised (may even be zero).

    The default is the identity (``w = 1``), matching the ROS 2 definition's default value.
    """

    TYPE_NAME: ClassVar[str] = "geometry_msgs/msg/Quaternion"
    #: Any wire value is valid (NaN included), so the fast decoder skips the constructor.
    WIRE_RULES: ClassVar[Mapping[str, WireRule]] = {}
    x: Float64 = 0.0
    y: Float64 = 0.0
    z: Float64 = 0.0
    w: Float64 = 1.0

    def __post_init__(self) -> None:
        x, y, z, w = self.x, self.y, self.z, self.w
        if type(x) is float and type(y) is float and type(z) is float and type(w) is float:
            return
        name = self.TYPE_NAME
        object.__setattr__(self, "x", _real(name, "x", x))
        object.__setattr__(self, "y", _real(name, "y", y))
        object.__setattr__(self, "z", _real(name, "z", z))
        object.__setattr__(self, "w", _real(name, "w", w))

    def to_math(self) -> jm.Quaternion:
        """The unit :class:`jointbus.math.Quaternion` (``w, x, y, z``), normalised.

        Raises :class:`jointbus.math.MathError` for a zero or non-finite quaternion.
        """
        return jm.Quaternion(self.w, self.x, self.y, self.z)

    @classmethod
    def from_math(cls, q: jm.Quaternion) -> Self:
        """The wire record (``x, y, z, w``) of a :class:`jointbus.math.Quaternion`."""
        return cls(q.x, q.y, q.z, q.w)


@dataclass(frozen=True, slots=True)
class Pose(Message):
    """A position (m) and orientation; as a transform, it maps the pose's frame to its parent."""

    TYPE_NAME: ClassVar[str] = "geometry_msgs/msg/Pose"
    #: Any wire value is valid (NaN included), so the fast decoder skips the constructor.
    WIRE_RULES: ClassVar[Mapping[str, WireRule]] = {}
    position: Point = field(default_factory=Point)
    orientation: Quaternion = field(default_factory=Quaternion)

    def __post_init__(self) -> None:
        if type(self.position) is not Point:
            _check_nested(self, self.TYPE_NAME, "position", Point)
        if type(self.orientation) is not Quaternion:
            _check_nested(self, self.TYPE_NAME, "orientation", Quaternion)

    def to_math(self) -> jm.Transform:
        """The pose as a :class:`jointbus.math.Transform` (:class:`MathError` if invalid)."""
        return jm.Transform(self.position.to_math(), self.orientation.to_math())

    @classmethod
    def from_math(cls, t: jm.Transform) -> Self:
        """The wire record of a :class:`jointbus.math.Transform`."""
        return cls(Point.from_math(t.translation), Quaternion.from_math(t.rotation))


@dataclass(frozen=True, slots=True)
class Twist(Message):
    """A velocity: ``linear`` (m/s) and ``angular`` (rad/s)."""

    TYPE_NAME: ClassVar[str] = "geometry_msgs/msg/Twist"
    #: Any wire value is valid (NaN included), so the fast decoder skips the constructor.
    WIRE_RULES: ClassVar[Mapping[str, WireRule]] = {}
    linear: Vector3 = field(default_factory=Vector3)
    angular: Vector3 = field(default_factory=Vector3)

    def __post_init__(self) -> None:
        if type(self.linear) is not Vector3:
            _check_nested(self, self.TYPE_NAME, "linear", Vector3)
        if type(self.angular) is not Vector3:
            _check_nested(self, self.TYPE_NAME, "angular", Vector3)

    def to_math(self) -> jm.Twist:
        """The :class:`jointbus.math.Twist` (:class:`MathError` if a component is not finite)."""
        return jm.Twist(self.linear.to_math(), self.angular.to_math())

    @classmethod
    def from_math(cls, t: jm.Twist) -> Self:
        """The wire record of a :class:`jointbus.math.Twist`."""
        return cls(Vector3.from_math(t.linear), Vector3.from_math(t.angular))


@dataclass(frozen=True, slots=True)
class Wrench(Message):
    """A force (N) and a torque (N·m)."""

    TYPE_NAME: ClassVar[str] = "geometry_msgs/msg/Wrench"
    force: Vector3 = field(default_factory=Vector3)
    torque: Vector3 = field(default_factory=Vector3)

    def __post_init__(self) -> None:
        if type(self.force) is not Vector3:
            _check_nested(self, self.TYPE_NAME, "force", Vector3)
        if type(self.torque) is not Vector3:
            _check_nested(self, self.TYPE_NAME, "torque", Vector3)

    def to_math(self) -> jm.Wrench:
        """The :class:`jointbus.math.Wrench` (:class:`MathError` if a component is not finite)."""
        return jm.Wrench(self.force.to_math(), self.torque.to_math())

    @classmethod
    def from_math(cls, w: jm.Wrench) -> Self:
        """The wire record of a :class:`jointbus.math.Wrench`."""
        return cls(Vector3.from_math(w.force), Vector3.from_math(w.torque))


@dataclass(frozen=True, slots=True)
class Transform(Message):
    """A rigid transform: ``translation`` (m) and ``rotation`` (child frame in parent frame)."""

    TYPE_NAME: ClassVar[str] = "geometry_msgs/msg/Transform"
    translation: Vector3 = field(default_factory=Vector3)
    rotation: Quaternion = field(default_factory=Quaternion)

    def __post_init__(self) -> None:
        if type(self.translation) is not Vector3:
            _check_nested(self, self.TYPE_NAME, "translation", Vector3)
        if type(self.rotation) is not Quaternion:
            _check_nested(self, self.TYPE_NAME, "rotation", Quaternion)

    def to_math(self) -> jm.Transform:
        """The :class:`jointbus.math.Transform` (:class:`MathError` if invalid)."""
        return jm.Transform(self.translation.to_math(), self.rotation.to_math())

    @classmethod
    def from_math(cls, t: jm.Transform) -> Self:
        """The wire record of a :class:`jointbus.math.Transform`."""
        return cls(Vector3.from_math(t.translation), Quaternion.from_math(t.rotation))


@dataclass(frozen=True, slots=True)
class TransformStamped(Message):
    """The transform from ``header.frame_id`` (parent) to ``child_frame_id`` at a time (tf)."""

    TYPE_NAME: ClassVar[str] = "geometry_msgs/msg/TransformStamped"
    header: Header = field(default_factory=Header)
    child_frame_id: String = ""
    transform: Transform = field(default_factory=Transform)

    def __post_init__(self) -> None:
        if type(self.header) is not Header:
            _check_nested(self, self.TYPE_NAME, "header", Header)
        if type(self.child_frame_id) is not str:
            raise ValidationError(self.TYPE_NAME, "child_frame_id", self.child_frame_id, "a str")
        if type(self.transform) is not Transform:
            _check_nested(self, self.TYPE_NAME, "transform", Transform)


__all__ = [
    "Point",
    "Pose",
    "Quaternion",
    "Transform",
    "TransformStamped",
    "Twist",
    "Vector3",
    "Wrench",
]
