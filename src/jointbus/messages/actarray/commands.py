"""Actuator-array commands (Player ``actarray`` CMD subtypes): move, drive, home.

Where it sits: :mod:`jointbus.messages.actarray`, above :mod:`jointbus.messages.jointbus_msgs`
(the wire records of the single-joint commands); consumed by the ``ActuatorArray`` driver API in
:mod:`jointbus.drivers`. One class per Player command:

========================  =================================  ==========================
Player subtype            class                              units
========================  =================================  ==========================
POS (1)                   :class:`PositionCommand`           m or rad
MULTI_POS (2)             :class:`MultiPositionCommand`      m or rad, one per actuator
SPEED (3)                 :class:`SpeedCommand`              m/s or rad/s
MULTI_SPEED (4)           :class:`MultiSpeedCommand`         m/s or rad/s
HOME (5)                  :class:`HomeCommand`               —
CURRENT (6)               :class:`CurrentCommand`            A
MULTI_CURRENT (7)         :class:`MultiCurrentCommand`       A, one per actuator
========================  =================================  ==========================

**Joint addressing.** A single-joint command names an actuator by index (``joint >= 0``) or, with
``joint=None``, every actuator — Python has a value for "no particular joint", so it does not
need Player's ``-1`` sentinel. The wire keeps Player's ``int32 joint`` with ``-1``
(``ALL_JOINTS``); the conversion happens in :meth:`JointAddressed.to_wire` /
:meth:`JointAddressed.from_wire` and nowhere else. Passing ``-1`` in Python is rejected, so the
sentinel cannot leak into code that does arithmetic on indices.

Values must be finite; multi commands must name at least one actuator (whether the count matches
the array is the driver's check: only it knows the array). Errors name the joint index, the
field and the value.
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Self

from jointbus.codec import DecodeError, schema_of
from jointbus.codec.wire import INT_RANGES, Float64Seq, Primitive
from jointbus.messages import jointbus_msgs
from jointbus.messages.base import Message
from jointbus.messages.errors import (
    LengthMismatchError,
    LimitError,
    NonFiniteError,
    ValidationError,
)
from jointbus.messages.jointbus_msgs import ALL_JOINTS

_INT32_MAX: Final = INT_RANGES[Primitive.INT32][1]


def joint_index(type_name: str, value: object) -> int | None:
    """``value`` as an actuator index (``int >= 0``) or ``None`` (all joints)."""
    if value is None or (type(value) is int and 0 <= value <= _INT32_MAX):
        return value
    if isinstance(value, bool):
        raise ValidationError(type_name, "joint", value, "an actuator index (int) or None")
    try:
        index = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise ValidationError(
            type_name, "joint", value, "an actuator index (int) or None (all joints)"
        ) from None
    if index == ALL_JOINTS:
        raise ValidationError(
            type_name,
            "joint",
            value,
            "an actuator index >= 0, or None for all joints (-1 is only the wire's spelling)",
        )
    if not 0 <= index <= _INT32_MAX:
        raise LimitError(type_name, "joint", value, f"an actuator index in [0, {_INT32_MAX}]")
    return index


def finite_value(type_name: str, field: str, value: object, joint: int | None = None) -> float:
    """``value`` as a finite float (ints accepted); errors name the joint index if there is one."""
    if type(value) is float and math.isfinite(value):
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValidationError(type_name, field, value, "a finite real number", index=joint)
    try:
        result = float(value)
    except (OverflowError, ValueError, TypeError):
        result = math.nan
    if not math.isfinite(result):
        raise NonFiniteError(type_name, field, value, "a finite real number", index=joint)
    return result


def finite_values(type_name: str, field: str, values: object) -> tuple[float, ...]:
    """A non-empty tuple of finite floats, one per actuator; errors name the index."""
    if type(values) is not tuple:
        if hasattr(values, "tolist") and not isinstance(values, str | bytes):
            values = values.tolist()
        if isinstance(values, str | bytes) or not isinstance(values, Iterable):
            raise ValidationError(type_name, field, values, "a sequence of numbers")
        values = tuple(values)
    assert isinstance(values, tuple)
    if not values:
        raise LengthMismatchError(type_name, field, values, "one value per actuator (not none)")
    if all(type(v) is float for v in values) and math.isfinite(sum(values)):
        return values
    return tuple(finite_value(type_name, field, v, i) for i, v in enumerate(values))


class JointAddressed:
    """Mixin of the commands and requests that address one joint or all of them.

    Such a class is an immutable dataclass whose fields are its wire record's (``WIRE``), except
    that ``joint`` is ``int | None`` instead of ``int32`` with ``-1``. It offers the message
    interface (``TYPE_NAME``, ``to_cdr``, ``from_cdr``, ``msgdef``) through that record.
    """

    __slots__ = ()
    WIRE: ClassVar[type[Any]]
    TYPE_NAME: ClassVar[str]

    def to_wire(self) -> Any:
        """The wire record (``joint`` ``None`` becomes ``ALL_JOINTS`` = -1)."""
        values = {f.name: getattr(self, f.name) for f in schema_of(self.WIRE).fields}
        if values["joint"] is None:
            values["joint"] = ALL_JOINTS
        return self.WIRE(**values)

    @classmethod
    def from_wire(cls, record: Any) -> Self:
        """The Python command of a wire record (``-1`` becomes ``None``); validates."""
        values = {f.name: getattr(record, f.name) for f in schema_of(cls.WIRE).fields}
        if values["joint"] == ALL_JOINTS:
            values["joint"] = None
        return cls(**values)

    def to_cdr(self) -> bytes:
        """CDR bytes of the wire record."""
        data: bytes = self.to_wire().to_cdr()
        return data

    @classmethod
    def from_cdr(cls, data: bytes | bytearray | memoryview) -> Self:
        """Decode; raises only :class:`~jointbus.codec.DecodeError`."""
        record = cls.WIRE.from_cdr(data)
        try:
            return cls.from_wire(record)
        except ValueError as exc:
            reason = f"decoded message is invalid: {exc}"
            raise DecodeError(cls.TYPE_NAME, len(data), reason) from exc

    @classmethod
    def msgdef(cls) -> str:
        """The ``.msg`` definition of the wire record."""
        text: str = cls.WIRE.msgdef()
        return text


@dataclass(frozen=True, slots=True)
class PositionCommand(JointAddressed):
    """Move actuator ``joint`` (``None``: every actuator) to ``position`` (m or rad)."""

    WIRE: ClassVar[type[Any]] = jointbus_msgs.ActuatorPositionCommand
    TYPE_NAME: ClassVar[str] = WIRE.TYPE_NAME
    joint: int | None
    position: float

    def __post_init__(self) -> None:
        joint = joint_index(self.TYPE_NAME, self.joint)
        object.__setattr__(self, "joint", joint)
        value = finite_value(self.TYPE_NAME, "position", self.position, joint)
        object.__setattr__(self, "position", value)


@dataclass(frozen=True, slots=True)
class SpeedCommand(JointAddressed):
    """Move actuator ``joint`` (``None``: every actuator) at ``speed`` (m/s or rad/s)."""

    WIRE: ClassVar[type[Any]] = jointbus_msgs.ActuatorSpeedCommand
    TYPE_NAME: ClassVar[str] = WIRE.TYPE_NAME
    joint: int | None
    speed: float

    def __post_init__(self) -> None:
        joint = joint_index(self.TYPE_NAME, self.joint)
        object.__setattr__(self, "joint", joint)
        object.__setattr__(self, "speed", finite_value(self.TYPE_NAME, "speed", self.speed, joint))


@dataclass(frozen=True, slots=True)
class HomeCommand(JointAddressed):
    """Send actuator ``joint`` (``None``: the whole array) to its home position."""

    WIRE: ClassVar[type[Any]] = jointbus_msgs.ActuatorHomeCommand
    TYPE_NAME: ClassVar[str] = WIRE.TYPE_NAME
    joint: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "joint", joint_index(self.TYPE_NAME, self.joint))


@dataclass(frozen=True, slots=True)
class CurrentCommand(JointAddressed):
    """Drive actuator ``joint`` (``None``: every actuator) with ``current`` (A)."""

    WIRE: ClassVar[type[Any]] = jointbus_msgs.ActuatorCurrentCommand
    TYPE_NAME: ClassVar[str] = WIRE.TYPE_NAME
    joint: int | None
    current: float

    def __post_init__(self) -> None:
        joint = joint_index(self.TYPE_NAME, self.joint)
        object.__setattr__(self, "joint", joint)
        value = finite_value(self.TYPE_NAME, "current", self.current, joint)
        object.__setattr__(self, "current", value)


@dataclass(frozen=True, slots=True)
class MultiPositionCommand(Message):
    """Move every actuator to its position (m or rad): ``positions[i]`` for actuator ``i``."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/ActuatorMultiPositionCommand"
    positions: Float64Seq

    def __post_init__(self) -> None:
        values = finite_values(self.TYPE_NAME, "positions", self.positions)
        object.__setattr__(self, "positions", values)


@dataclass(frozen=True, slots=True)
class MultiSpeedCommand(Message):
    """Move every actuator at its speed (m/s or rad/s): ``speeds[i]`` for actuator ``i``."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/ActuatorMultiSpeedCommand"
    speeds: Float64Seq

    def __post_init__(self) -> None:
        object.__setattr__(self, "speeds", finite_values(self.TYPE_NAME, "speeds", self.speeds))


@dataclass(frozen=True, slots=True)
class MultiCurrentCommand(Message):
    """Drive every actuator with its current (A): ``currents[i]`` for actuator ``i``."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/ActuatorMultiCurrentCommand"
    currents: Float64Seq

    def __post_init__(self) -> None:
        values = finite_values(self.TYPE_NAME, "currents", self.currents)
        object.__setattr__(self, "currents", values)


__all__ = [
    "CurrentCommand",
    "HomeCommand",
    "JointAddressed",
    "MultiCurrentCommand",
    "MultiPositionCommand",
    "MultiSpeedCommand",
    "PositionCommand",
    "SpeedCommand",
    "finite_value",
    "finite_values",
    "joint_index",
]
