"""Actuator-array geometry: each actuator's type, link, axis and range, and the array's base pose.

Where it sits: :mod:`jointbus.messages.actarray`, above :mod:`~.state` and
:mod:`jointbus.messages.geometry_msgs`; a driver answers a
:class:`~jointbus.messages.actarray.requests.GeometryRequest` with an :class:`ArrayGeometry`, and
the robot model can be checked against it. Wire types ``jointbus_msgs/msg/Orientation3D``,
``jointbus_msgs/msg/ActuatorGeometry`` and ``jointbus_msgs/msg/ArrayGeometry``.

From Player's ``player_actarray_actuatorgeom_t`` / ``player_actarray_geom_t``: lengths and the
range of motion in m (linear actuators) or rad (rotary), the configured speed in m/s or rad/s.
Orientations are roll / pitch / yaw in rad like Player's ``player_orientation_3d_t``, composed as
in ROS (REP 103, fixed axes X then Y then Z): :meth:`Orientation3D.to_quaternion`. The array
geometry carries a header: its base position and orientation are expressed in
``header.frame_id``.

Rules enforced (the ones a driver or a kinematics routine would trip over): every number finite,
``min ≤ centre ≤ max`` and ``min ≤ home ≤ max``, a non-zero axis, a non-negative link length and
configured speed, a known actuator type.
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Self

from jointbus import math as jm
from jointbus.codec.wire import Bool, Float64, Primitive
from jointbus.messages.base import Message
from jointbus.messages.errors import LimitError, NonFiniteError, ValidationError
from jointbus.messages.geometry_msgs import Point, Vector3
from jointbus.messages.std_msgs import Header

from .state import ActuatorType

MIN_AXIS_NORM = 1e-9
"""Shortest axis accepted: a (near) zero axis gives no direction to move along or about."""


def finite(type_name: str, field_name: str, value: object) -> float:
    """``value`` as a finite built-in float (ints accepted) or a typed error naming the field."""
    if type(value) is float and math.isfinite(value):
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValidationError(type_name, field_name, value, "a finite real number")
    try:
        result = float(value)
    except (OverflowError, ValueError, TypeError):
        raise ValidationError(type_name, field_name, value, "a finite real number") from None
    if not math.isfinite(result):
        raise NonFiniteError(type_name, field_name, value, "a finite real number")
    return result


def actuator_type(type_name: str, field_name: str, value: object) -> ActuatorType:
    """``value`` as an :class:`ActuatorType` (ints accepted, bools and unknown codes rejected)."""
    expected = "an ActuatorType (LINEAR=1, ROTARY=2)"
    if isinstance(value, bool):
        raise ValidationError(type_name, field_name, value, expected)
    try:
        return ActuatorType(operator.index(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValidationError(type_name, field_name, value, expected) from None


@dataclass(frozen=True, slots=True)
class Orientation3D(Message):
    """An orientation as roll, pitch, yaw (rad): ``R = Rz(yaw) · Ry(pitch) · Rx(roll)``."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/Orientation3D"
    roll: Float64 = 0.0
    pitch: Float64 = 0.0
    yaw: Float64 = 0.0

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        for name in ("roll", "pitch", "yaw"):
            object.__setattr__(self, name, finite(tn, name, getattr(self, name)))

    def to_quaternion(self) -> jm.Quaternion:
        """The same rotation as a unit quaternion."""
        return jm.Quaternion.from_rpy(self.roll, self.pitch, self.yaw)

    @classmethod
    def from_quaternion(cls, q: jm.Quaternion) -> Self:
        """Roll, pitch, yaw of ``q`` (yaw := 0 at gimbal lock, as :meth:`Quaternion.to_rpy`)."""
        return cls(*q.to_rpy())


def _vector(type_name: str, field_name: str, value: object, cls: type[Any]) -> Any:
    """``value`` as a wire ``cls`` (a math :class:`~jointbus.math.Vec3` is converted) with
    finite components."""
    if isinstance(value, jm.Vec3):
        return cls.from_math(value)
    if type(value) is not cls:
        raise ValidationError(type_name, field_name, value, f"a {cls.TYPE_NAME} or a Vec3")
    for axis in ("x", "y", "z"):
        finite(type_name, f"{field_name}.{axis}", getattr(value, axis))
    return value


@dataclass(frozen=True, slots=True)
class ActuatorGeometry(Message):
    """The static description of one actuator.

    ``length`` is the link to the next actuator (m; for a linear actuator, its length at position
    0), ``orientation`` the direction to the next actuator at rest, ``axis`` the rotation axis
    (rotary) or direction of travel (linear), ``min`` / ``centre`` / ``max`` / ``home`` positions
    and ``config_speed`` the configured speed (not the current one).
    """

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/ActuatorGeometry"
    type: Annotated[ActuatorType, Primitive.UINT8]
    length: Float64
    orientation: Orientation3D
    axis: Vector3
    min: Float64
    centre: Float64
    max: Float64
    home: Float64
    config_speed: Float64
    has_brakes: Bool = False

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        if type(self.type) is not ActuatorType:
            object.__setattr__(self, "type", actuator_type(tn, "type", self.type))
        for name in ("length", "min", "centre", "max", "home", "config_speed"):
            object.__setattr__(self, name, finite(tn, name, getattr(self, name)))
        if self.length < 0.0:
            raise LimitError(tn, "length", self.length, "a link length >= 0 (m)")
        if self.config_speed < 0.0:
            raise LimitError(tn, "config_speed", self.config_speed, "a configured speed >= 0")
        if type(self.orientation) is not Orientation3D:
            raise ValidationError(tn, "orientation", self.orientation, "an Orientation3D")
        axis = _vector(tn, "axis", self.axis, Vector3)
        object.__setattr__(self, "axis", axis)
        if math.hypot(axis.x, axis.y, axis.z) < MIN_AXIS_NORM:
            raise ValidationError(tn, "axis", axis, "a non-zero axis vector")
        lo, hi = self.min, self.max
        if lo > hi:
            raise LimitError(tn, "min", lo, f"at most max = {hi!r}")
        for name in ("centre", "home"):
            value = getattr(self, name)
            if not lo <= value <= hi:
                raise LimitError(tn, name, value, f"within [min, max] = [{lo!r}, {hi!r}]")
        if type(self.has_brakes) is not bool:
            raise ValidationError(tn, "has_brakes", self.has_brakes, "a bool")


@dataclass(frozen=True, slots=True)
class ArrayGeometry(Message):
    """Every actuator's geometry, in array order, and the base pose in ``header.frame_id``.

    ``base_position`` (m) should be the position of the first actuator; ``base_orientation`` is
    the base's own orientation, distinct from the first actuator's.
    """

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/ArrayGeometry"
    header: Header = field(default_factory=Header)
    actuators: tuple[ActuatorGeometry, ...] = ()
    base_position: Point = field(default_factory=Point)
    base_orientation: Orientation3D = field(default_factory=Orientation3D)

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        if type(self.header) is not Header:
            raise ValidationError(tn, "header", self.header, "a std_msgs Header")
        actuators: Any = self.actuators
        if type(actuators) is not tuple:
            if isinstance(actuators, str | bytes) or not isinstance(actuators, Iterable):
                raise ValidationError(tn, "actuators", actuators, "a sequence of ActuatorGeometry")
            actuators = tuple(actuators)
            object.__setattr__(self, "actuators", actuators)
        for index, item in enumerate(actuators):
            if type(item) is not ActuatorGeometry:
                raise ValidationError(tn, "actuators", item, "an ActuatorGeometry", index=index)
        object.__setattr__(
            self, "base_position", _vector(tn, "base_position", self.base_position, Point)
        )
        if type(self.base_orientation) is not Orientation3D:
            raise ValidationError(tn, "base_orientation", self.base_orientation, "an Orientation3D")

    def __len__(self) -> int:
        return len(self.actuators)


__all__ = [
    "MIN_AXIS_NORM",
    "ActuatorGeometry",
    "ArrayGeometry",
    "Orientation3D",
    "actuator_type",
    "finite",
]
