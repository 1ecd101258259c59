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

import numpy as np
import numpy.typing as npt

from jointbus.codec.rules import WireRule
from jointbus.codec.wire import Float32Seq, StringSeq, UInt8Seq, UInt16Seq
from jointbus.messages.actarray.state import ActuatorState
from jointbus.messages.base import Message
from jointbus.messages.errors import UnknownJointError, ValidationError
from jointbus.messages.geometry_msgs import Quaternion, Vector3
from jointbus.messages.std_msgs import Header
from jointbus.robots.hb50.messages._arrays import (
    NamesMemo,
    float32_tuple,
    names_tuple,
    uint8_bytes,
    uint16_tuple,
)
from jointbus.robots.hb50.messages.frame_fields import frame_fields


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

    @classmethod
    def from_joint_arrays(
        cls,
        header: Header,
        orientation: Quaternion,
        angular_velocity: Vector3,
        linear_acceleration: Vector3,
        joint_name: tuple[str, ...],
        *,
        position: npt.NDArray[np.float64],
        velocity: npt.NDArray[np.float64],
        effort: npt.NDArray[np.float64],
        temperature: npt.NDArray[np.float64],
        state: npt.NDArray[np.uint8],
    ) -> BridgeData:
        """The frame of one ``read_joints()``: the same message, with the same rules, as the
        constructor given the fields the bridge derives (rad, rad/s, N·m as float32; whole °C
        clipped to 0–255, 0 when ``temperature`` is NaN; ``COMMUNICATION_ERROR`` where the
        position is NaN, ``MOTION_ERROR`` where ``state`` has ``ActuatorState.STALLED``), built
        in one pass (:mod:`.frame_fields`) instead of field by field — the 500/1000 Hz path.

        A value the constructor refuses (±inf, beyond float32), non-tuple or invalid names, or
        arrays of another length: the constructor builds it, and raises its error naming the
        joint, index, field and value.
        """
        fields = None
        if (
            type(joint_name) is tuple
            and (joint_name is _NAMES.last or _NAMES.check(joint_name))
            and type(header) is Header
            and type(orientation) is Quaternion
            and type(angular_velocity) is Vector3
            and type(linear_acceleration) is Vector3
            and len(joint_name)
            == len(position)
            == len(velocity)
            == len(effort)
            == len(temperature)
            == len(state)
        ):
            fields = frame_fields(
                position,
                velocity,
                effort,
                temperature,
                state,
                comm_flag=_COMM_FLAG,
                motion_flag=_MOTION_FLAG,
            )
        if fields is None:
            p, v, e, t, s = _slow_fields(position, velocity, effort, temperature, state)
            return cls(
                header, orientation, angular_velocity, linear_acceleration, joint_name, p, v, e,
                t, s,
            )
        msg = _new(cls)
        setattr_ = object.__setattr__
        setattr_(msg, "header", header)
        setattr_(msg, "orientation", orientation)
        setattr_(msg, "angular_velocity", angular_velocity)
        setattr_(msg, "linear_acceleration", linear_acceleration)
        setattr_(msg, "joint_name", joint_name)
        setattr_(msg, "joint_position", fields.position)
        setattr_(msg, "joint_velocity", fields.velocity)
        setattr_(msg, "joint_effort", fields.effort)
        setattr_(msg, "joint_temperature", fields.temperature)
        setattr_(msg, "joint_status", fields.status)
        return msg

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


_STALLED = ActuatorState.STALLED
_COMM_FLAG = int(JointStatusFlag.COMMUNICATION_ERROR)
_MOTION_FLAG = int(JointStatusFlag.MOTION_ERROR)
_new = object.__new__
#: The names check of the fast constructor (a bridge sends one tuple: checked once).
_NAMES = NamesMemo(BridgeData.TYPE_NAME, "joint_name")


def _slow_fields(
    position: npt.NDArray[np.float64],
    velocity: npt.NDArray[np.float64],
    effort: npt.NDArray[np.float64],
    temperature: npt.NDArray[np.float64],
    state: npt.NDArray[np.uint8],
) -> tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...], bytes, tuple[int, ...]]:
    """The constructor's inputs derived field by field (the path of frames it must refuse)."""
    position = np.asarray(position, dtype=np.float64)
    t = np.asarray(temperature, dtype=np.float64)
    stalled = (np.asarray(state) & int(_STALLED)) != 0
    status = np.where(stalled, _MOTION_FLAG, 0)  # one per state entry: a short one is named
    if len(position) == len(status):
        status[np.isnan(position)] |= _COMM_FLAG
    with np.errstate(invalid="ignore"):
        degrees = np.clip(np.rint(np.where(np.isnan(t), 0.0, t)), 0, 255).astype(np.uint8)
    return (
        tuple(position.tolist()),
        tuple(np.asarray(velocity, dtype=np.float64).tolist()),
        tuple(np.asarray(effort, dtype=np.float64).tolist()),
        degrees.tobytes(),
        tuple(status.tolist()),
    )


__all__ = ["JOINT_ERROR_MASK", "BridgeData", "JointReading", "JointStatusFlag"]
