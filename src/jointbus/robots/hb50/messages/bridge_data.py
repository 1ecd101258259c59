"""``hb50_commons/msg/BridgeData``: the 500 Hz hardware frame (IMU and every actuator).

Where it sits: :mod:`jointbus.robots.hb50.messages`. The bridge node publishes it on
``/hb50/bridge_data`` each control cycle; the control node, user controllers, the recorder and the
monitor read it. Field names, order and wire types are exactly Honey Badger 5.0's (seed 001), so a
ROS 2 ``hb50_commons`` subscriber decodes our bytes.

Rules:

- ``joint_name`` entries are non-empty and unique; every per-joint array has exactly one entry per
  name, in the same order (the actuator order of the robot configuration);
- measured values (position rad, velocity rad/s, effort N·m) may be **NaN**: an actuator that did
  not answer this cycle, or that does not measure a quantity, reports NaN for it rather than a
  stale or made-up number (the design's "not reported is explicit" rule). Infinities and values
  beyond float32 are rejected: no sensor measures them, they can only be bugs;
- the IMU fields are ``geometry_msgs`` wire records (a driver without an IMU sends NaN there);
- ``joint_temperature`` is one byte per actuator in °C (``bytes``), ``joint_status`` the actuator's
  16-bit quick-status word (:class:`JointStatusFlag`).

Float32 values are rounded to float32 on construction (see
:mod:`jointbus.robots.hb50.messages._arrays`).
Because NaN never equals itself, a message holding NaN does not compare equal to its decoded copy;
compare ``to_cdr()`` bytes instead.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar, NamedTuple

from jointbus.codec.rules import WireRule
from jointbus.codec.wire import Float32Seq, StringSeq, UInt8Seq, UInt16Seq
from jointbus.messages.base import Message
from jointbus.messages.errors import UnknownJointError, ValidationError
from jointbus.messages.geometry_msgs import Quaternion, Vector3
from jointbus.messages.std_msgs import Header
from jointbus.robots.hb50.messages._arrays import (
    float32_tuple,
    names_tuple,
    uint8_bytes,
    uint16_tuple,
)


class JointStatusFlag(enum.IntFlag):
    """Bits of an MD actuator's 16-bit quick-status word (``joint_status``); bits 7–14 reserved."""

    MAIN_ENCODER_ERROR = 1 << 0
    OUTPUT_ENCODER_ERROR = 1 << 1
    CALIBRATION_ENCODER_ERROR = 1 << 2
    BRIDGE_ERROR = 1 << 3  # MOSFET bridge
    HARDWARE_ERROR = 1 << 4
    COMMUNICATION_ERROR = 1 << 5
    MOTION_ERROR = 1 << 6
    TARGET_REACHED = 1 << 15


#: Every error bit of :class:`JointStatusFlag` (all but ``TARGET_REACHED``).
JOINT_ERROR_MASK = JointStatusFlag(0x7F)


class JointReading(NamedTuple):
    """One actuator's values from a :class:`BridgeData` frame (SI; NaN = not reported)."""

    name: str
    joint_index: int
    position: float  # rad
    velocity: float  # rad/s
    effort: float  # N·m
    temperature: int  # °C
    status: JointStatusFlag

    @property
    def has_error(self) -> bool:
        """True when any error bit of the quick-status word is set."""
        return bool(self.status & JOINT_ERROR_MASK)


@dataclass(frozen=True, slots=True)
class BridgeData(Message):
    """IMU orientation, body rates and accelerations, and every actuator's measured state."""

    TYPE_NAME: ClassVar[str] = "hb50_commons/msg/BridgeData"
    #: What a decoded number can break (names and lengths are checked once per cached layout).
    WIRE_RULES: ClassVar[Mapping[str, WireRule]] = {
        "joint_position": WireRule(no_inf=True),
        "joint_velocity": WireRule(no_inf=True),
        "joint_effort": WireRule(no_inf=True),
    }
    header: Header = field(default_factory=Header)
    orientation: Quaternion = field(default_factory=Quaternion)  # IMU orientation
    angular_velocity: Vector3 = field(default_factory=Vector3)  # body rates, rad/s
    linear_acceleration: Vector3 = field(default_factory=Vector3)  # m/s²
    joint_name: StringSeq = ()
    joint_position: Float32Seq = ()  # rad
    joint_velocity: Float32Seq = ()  # rad/s
    joint_effort: Float32Seq = ()  # N·m (estimated)
    joint_temperature: UInt8Seq = b""  # °C
    joint_status: UInt16Seq = ()  # JointStatusFlag bits

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        if type(self.header) is not Header:
            raise ValidationError(tn, "header", self.header, "a std_msgs Header")
        if type(self.orientation) is not Quaternion:
            raise ValidationError(tn, "orientation", self.orientation, "a geometry_msgs Quaternion")
        if type(self.angular_velocity) is not Vector3:
            raise ValidationError(
                tn, "angular_velocity", self.angular_velocity, "a geometry_msgs Vector3"
            )
        if type(self.linear_acceleration) is not Vector3:
            raise ValidationError(
                tn, "linear_acceleration", self.linear_acceleration, "a geometry_msgs Vector3"
            )
        names = names_tuple(tn, "joint_name", self.joint_name)
        setattr_ = object.__setattr__
        setattr_(self, "joint_name", names)
        for name in ("joint_position", "joint_velocity", "joint_effort"):
            setattr_(
                self,
                name,
                float32_tuple(
                    tn, name, getattr(self, name), names, names_field="joint_name", allow_nan=True
                ),
            )
        setattr_(
            self,
            "joint_temperature",
            uint8_bytes(
                tn, "joint_temperature", self.joint_temperature, names, names_field="joint_name"
            ),
        )
        setattr_(
            self,
            "joint_status",
            uint16_tuple(tn, "joint_status", self.joint_status, names, names_field="joint_name"),
        )

    def index(self, name: str) -> int:
        """Position of actuator ``name`` in the arrays (:class:`UnknownJointError` if absent)."""
        try:
            return self.joint_name.index(name)
        except ValueError:
            raise UnknownJointError(name, self.joint_name) from None

    def joint(self, name: str) -> JointReading:
        """Every value of actuator ``name`` (:class:`UnknownJointError` if absent)."""
        i = self.index(name)
        return JointReading(
            name,
            i,
            self.joint_position[i],
            self.joint_velocity[i],
            self.joint_effort[i],
            self.joint_temperature[i],
            JointStatusFlag(self.joint_status[i]),
        )


__all__ = ["JOINT_ERROR_MASK", "BridgeData", "JointReading", "JointStatusFlag"]
