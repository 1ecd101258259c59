"""Actuator-array requests (Player ``actarray`` REQ subtypes): power, brakes, geometry, limits.

Where it sits: :mod:`jointbus.messages.actarray`, beside :mod:`~.commands` (whose joint
addressing the speed and acceleration requests share); the ``ActuatorArray`` driver API in
:mod:`jointbus.drivers` answers each request with an ACK or a NACK, and a
:class:`GeometryRequest` with an :class:`~jointbus.messages.actarray.geometry.ArrayGeometry`.

========================  =================================  ==========================
Player subtype            class                              meaning
========================  =================================  ==========================
POWER (1)                 :class:`PowerRequest`              motor power of the whole array on/off
BRAKES (2)                :class:`BrakesRequest`             brakes of every braked actuator on/off
GET_GEOM (3)              :class:`GeometryRequest`           ask for the array geometry
SPEED (4)                 :class:`SpeedConfigRequest`        speed for later moves, m/s or rad/s
ACCEL (5)                 :class:`AccelConfigRequest`        acceleration, m/s² or rad/s²
========================  =================================  ==========================

Player's ``uint8 value`` (0 off, 1 on) becomes a ``bool`` field with a name that says what "on"
means. The configured speed and acceleration must be positive: a limit of zero would stall every
later move. ``joint=None`` addresses every actuator (``-1`` on the wire, as in Player).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from jointbus.codec.wire import Bool, UInt8
from jointbus.messages import jointbus_msgs
from jointbus.messages.base import Message
from jointbus.messages.errors import LimitError, ValidationError

from .commands import JointAddressed, finite_value, joint_index


@dataclass(frozen=True, slots=True)
class PowerRequest(Message):
    """Switch the motor power of the whole array on (``on=True``) or off.

    Careful when switching on: many arrays move to their home position, so it must be clear.
    """

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/ActuatorPowerRequest"
    on: Bool

    def __post_init__(self) -> None:
        if type(self.on) is not bool:
            raise ValidationError(self.TYPE_NAME, "on", self.on, "a bool (True = power on)")


@dataclass(frozen=True, slots=True)
class BrakesRequest(Message):
    """Engage (``engaged=True``) or release the brakes of every actuator that has them."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/ActuatorBrakesRequest"
    engaged: Bool

    def __post_init__(self) -> None:
        if type(self.engaged) is not bool:
            raise ValidationError(
                self.TYPE_NAME, "engaged", self.engaged, "a bool (True = brakes on)"
            )


@dataclass(frozen=True, slots=True)
class GeometryRequest(Message):
    """Ask for the array's geometry (Player's null ``GET_GEOM`` request).

    The one field is the placeholder rosidl adds to every empty ROS 2 message, declared here so
    that the bytes equal what a ROS 2 peer sends for an empty message; it is always 0.
    """

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/ActuatorGeometryRequest"
    structure_needs_at_least_one_member: UInt8 = 0

    def __post_init__(self) -> None:
        if self.structure_needs_at_least_one_member != 0:
            raise ValidationError(
                self.TYPE_NAME,
                "structure_needs_at_least_one_member",
                self.structure_needs_at_least_one_member,
                "0 (a placeholder with no meaning)",
            )


def _positive(type_name: str, field: str, value: object, joint: int | None) -> float:
    result = finite_value(type_name, field, value, joint)
    if result <= 0.0:
        raise LimitError(type_name, field, value, "a positive limit (> 0)", index=joint)
    return result


@dataclass(frozen=True, slots=True)
class SpeedConfigRequest(JointAddressed):
    """Set the speed used by later moves of ``joint`` (``None``: every actuator), m/s or rad/s."""

    WIRE: ClassVar[type[Any]] = jointbus_msgs.ActuatorSpeedConfigRequest
    TYPE_NAME: ClassVar[str] = WIRE.TYPE_NAME
    joint: int | None
    speed: float

    def __post_init__(self) -> None:
        joint = joint_index(self.TYPE_NAME, self.joint)
        object.__setattr__(self, "joint", joint)
        object.__setattr__(self, "speed", _positive(self.TYPE_NAME, "speed", self.speed, joint))


@dataclass(frozen=True, slots=True)
class AccelConfigRequest(JointAddressed):
    """Set the acceleration of later moves of ``joint`` (``None``: every actuator), m/s² or
    rad/s²."""

    WIRE: ClassVar[type[Any]] = jointbus_msgs.ActuatorAccelConfigRequest
    TYPE_NAME: ClassVar[str] = WIRE.TYPE_NAME
    joint: int | None
    accel: float

    def __post_init__(self) -> None:
        joint = joint_index(self.TYPE_NAME, self.joint)
        object.__setattr__(self, "joint", joint)
        object.__setattr__(self, "accel", _positive(self.TYPE_NAME, "accel", self.accel, joint))


__all__ = [
    "AccelConfigRequest",
    "BrakesRequest",
    "GeometryRequest",
    "PowerRequest",
    "SpeedConfigRequest",
]
