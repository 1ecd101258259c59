"""``jointbus_msgs`` wire records whose Python type has a different shape.

Where it sits: :mod:`jointbus.messages`, beside :mod:`~.sensor_msgs` and :mod:`~.geometry_msgs`
(one module per ROS package of plain wire records). Two jointbus types cannot *be* their own wire
record, so their record lives here and the Python type converts to and from it:

- :class:`jointbus.messages.joint_state.JointState` holds heterogeneous lists (a float, a
  ``Transform2D`` or a ``Transform`` per joint), which no ROS field type can express; its record is
  :class:`JointState` below.
- The actuator-array commands and requests address one joint or, with ``joint=None``, all of
  them; the wire keeps Player's ``int32 joint`` with ``-1`` (``ALL_JOINTS``) for "all". Their
  records are the ``Actuator*`` classes below.

Every other ``jointbus_msgs`` type (``JointSample``, ``Joints``, ``JointLimits``,
``ActuatorData``, ...) *is* its own record and lives with its semantics in its own module. All of
them are designed so that a ROS 2 tool can decode them from the ``.msg`` definition alone: only
standard field types, constants for every enumerated value, no unions.

The records check types and structure (so a bad payload fails at decode, naming the field), not
meaning: the finiteness and shape rules are the Python types' (they run when
:meth:`jointbus.messages.joint_state.JointState.from_wire` converts a record).

``jointbus_msgs/msg/JointState`` layout (one joint per ``name``; per-kind arrays so that every
value keeps field names a tool can show, e.g. ``floating_position[0].rotation.w``)::

    uint8 SINGLE_DOF=0
    uint8 PLANAR=1
    uint8 FLOATING=2
    std_msgs/Header header
    string[] name
    uint8[] kind                                  # JointKind of each joint, one per name
    float64[] position                            # single-DoF joints, in name order (rad or m)
    float64[] velocity                            # (rad/s or m/s)
    float64[] effort                              # (N·m or N)
    jointbus_msgs/Transform2D[] planar_position   # planar joints, in name order
    jointbus_msgs/Twist2D[] planar_velocity
    jointbus_msgs/Wrench2D[] planar_effort
    geometry_msgs/Transform[] floating_position   # floating joints, in name order
    geometry_msgs/Twist[] floating_velocity
    geometry_msgs/Wrench[] floating_effort

The k-th entry of a per-kind array belongs to the k-th joint of that kind in ``name`` order. A
quantity (position, velocity or effort) is either reported for every joint — each of its three
arrays then has one entry per joint of its kind — or not reported at all (all three empty). A
message whose joints are all single-DoF therefore reads exactly like ``sensor_msgs/JointState``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Self

from jointbus import math as jm
from jointbus.codec.wire import Bool, Float64, Float64Seq, Int32, Primitive, StringSeq, UInt8Seq
from jointbus.messages.base import Message
from jointbus.messages.errors import LengthMismatchError, ValidationError
from jointbus.messages.geometry_msgs import Transform, Twist, Wrench
from jointbus.messages.joint_kind import JointKind
from jointbus.messages.sensor_msgs import check_names
from jointbus.messages.std_msgs import Header

ALL_JOINTS: Final = -1
"""Player's wire value of ``joint`` meaning "every joint" (Python uses ``None``)."""


def _real(type_name: str, field_name: str, value: object) -> float:
    if type(value) is float:
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValidationError(type_name, field_name, value, "a real number (float64)")
    return float(value)


# ------------------------------------------------------------------------------------------------
# planar value records
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Transform2D(Message):
    """A planar pose on the wire: ``x``, ``y`` (m), ``theta`` (rad, CCW, as given: not wrapped)."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/Transform2D"
    x: Float64 = 0.0
    y: Float64 = 0.0
    theta: Float64 = 0.0

    def __post_init__(self) -> None:
        if type(self.x) is float and type(self.y) is float and type(self.theta) is float:
            return
        for name in ("x", "y", "theta"):
            object.__setattr__(self, name, _real(self.TYPE_NAME, name, getattr(self, name)))

    def to_math(self) -> jm.Transform2D:
        """The :class:`jointbus.math.Transform2D` (:class:`MathError` if not finite)."""
        return jm.Transform2D(self.x, self.y, self.theta)

    @classmethod
    def from_math(cls, t: jm.Transform2D) -> Self:
        return cls(t.x, t.y, t.theta)


@dataclass(frozen=True, slots=True)
class Twist2D(Message):
    """A planar velocity on the wire: ``vx``, ``vy`` (m/s), ``omega`` (rad/s about +z)."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/Twist2D"
    vx: Float64 = 0.0
    vy: Float64 = 0.0
    omega: Float64 = 0.0

    def __post_init__(self) -> None:
        if type(self.vx) is float and type(self.vy) is float and type(self.omega) is float:
            return
        for name in ("vx", "vy", "omega"):
            object.__setattr__(self, name, _real(self.TYPE_NAME, name, getattr(self, name)))

    def to_math(self) -> jm.Twist2D:
        """The :class:`jointbus.math.Twist2D` (:class:`MathError` if not finite)."""
        return jm.Twist2D(self.vx, self.vy, self.omega)

    @classmethod
    def from_math(cls, t: jm.Twist2D) -> Self:
        return cls(t.vx, t.vy, t.omega)


@dataclass(frozen=True, slots=True)
class Wrench2D(Message):
    """A planar force on the wire: ``fx``, ``fy`` (N), ``tau`` (N·m about +z)."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/Wrench2D"
    fx: Float64 = 0.0
    fy: Float64 = 0.0
    tau: Float64 = 0.0

    def __post_init__(self) -> None:
        if type(self.fx) is float and type(self.fy) is float and type(self.tau) is float:
            return
        for name in ("fx", "fy", "tau"):
            object.__setattr__(self, name, _real(self.TYPE_NAME, name, getattr(self, name)))

    def to_math(self) -> jm.Wrench2D:
        """The :class:`jointbus.math.Wrench2D` (:class:`MathError` if not finite)."""
        return jm.Wrench2D(self.fx, self.fy, self.tau)

    @classmethod
    def from_math(cls, w: jm.Wrench2D) -> Self:
        return cls(w.fx, w.fy, w.tau)


# ------------------------------------------------------------------------------------------------
# JointState record
# ------------------------------------------------------------------------------------------------
_KIND_VALUES: Final = frozenset(int(k) for k in JointKind)
#: (single-DoF field, planar field, floating field) of each reported quantity.
QUANTITY_FIELDS: Final = {
    "position": ("position", "planar_position", "floating_position"),
    "velocity": ("velocity", "planar_velocity", "floating_velocity"),
    "effort": ("effort", "planar_effort", "floating_effort"),
}
_ELEMENT_TYPES: Final[dict[str, type[Any]]] = {
    "planar_position": Transform2D,
    "planar_velocity": Twist2D,
    "planar_effort": Wrench2D,
    "floating_position": Transform,
    "floating_velocity": Twist,
    "floating_effort": Wrench,
}


def _tuple(type_name: str, field_name: str, value: object) -> tuple[Any, ...]:
    if type(value) is tuple:
        return value
    if hasattr(value, "tolist") and not isinstance(value, str | bytes):
        listed = value.tolist()
        if isinstance(listed, list):
            return tuple(listed)
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise ValidationError(type_name, field_name, value, "a sequence")
    return tuple(value)


@dataclass(frozen=True, slots=True)
class JointState(Message):
    """The wire record of :class:`jointbus.messages.joint_state.JointState` (see module doc)."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/JointState"
    MSG_CONSTANTS: ClassVar[tuple[tuple[str, Primitive, int | float | str], ...]] = tuple(
        (k.name, Primitive.UINT8, int(k)) for k in JointKind
    )
    header: Header = field(default_factory=Header)
    name: StringSeq = ()
    kind: UInt8Seq = b""
    position: Float64Seq = ()
    velocity: Float64Seq = ()
    effort: Float64Seq = ()
    planar_position: tuple[Transform2D, ...] = ()
    planar_velocity: tuple[Twist2D, ...] = ()
    planar_effort: tuple[Wrench2D, ...] = ()
    floating_position: tuple[Transform, ...] = ()
    floating_velocity: tuple[Twist, ...] = ()
    floating_effort: tuple[Wrench, ...] = ()

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        if type(self.header) is not Header:
            raise ValidationError(tn, "header", self.header, "a std_msgs Header")
        names = check_names(tn, "name", self.name)
        object.__setattr__(self, "name", names)
        kind: Any = self.kind
        if type(kind) is not bytes:
            try:
                kind = bytes(_tuple(tn, "kind", kind))
            except (TypeError, ValueError):
                raise ValidationError(tn, "kind", self.kind, "a JointKind per joint") from None
            object.__setattr__(self, "kind", kind)
        if len(kind) != len(names):
            raise LengthMismatchError(
                tn, "kind", f"{len(kind)} kinds", f"one JointKind per name ({len(names)})"
            )
        for index, value in enumerate(kind):
            if value not in _KIND_VALUES:
                raise ValidationError(
                    tn,
                    "kind",
                    value,
                    "SINGLE_DOF=0, PLANAR=1 or FLOATING=2",
                    joint=names[index],
                    index=index,
                )
        counts = (
            kind.count(JointKind.SINGLE_DOF),
            kind.count(JointKind.PLANAR),
            kind.count(JointKind.FLOATING),
        )
        for quantity, fields in QUANTITY_FIELDS.items():
            arrays = []
            for field_name in fields:
                value = _tuple(tn, field_name, getattr(self, field_name))
                element = _ELEMENT_TYPES.get(field_name)
                if element is None:
                    value = tuple(_real(tn, field_name, v) for v in value)
                else:
                    for item in value:
                        if type(item) is not element:
                            raise ValidationError(tn, field_name, item, f"a {element.TYPE_NAME}")
                object.__setattr__(self, field_name, value)
                arrays.append(value)
            reported = any(arrays)
            for field_name, array, count in zip(fields, arrays, counts, strict=True):
                expected = count if reported else 0
                if len(array) != expected:
                    raise LengthMismatchError(
                        tn,
                        field_name,
                        f"{len(array)} values",
                        f"{expected} (one per joint of this kind, as {quantity} is "
                        f"{'reported' if reported else 'not reported'})",
                    )


# ------------------------------------------------------------------------------------------------
# actuator-array commands and requests that address a joint (-1 = all)
# ------------------------------------------------------------------------------------------------
_JOINT_CONSTANTS: Final[tuple[tuple[str, Primitive, int | float | str], ...]] = (
    ("ALL_JOINTS", Primitive.INT32, ALL_JOINTS),
)


@dataclass(frozen=True, slots=True)
class ActuatorPositionCommand(Message):
    """Move actuator ``joint`` (``ALL_JOINTS`` = every one) to ``position`` (m or rad)."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/ActuatorPositionCommand"
    MSG_CONSTANTS: ClassVar[tuple[tuple[str, Primitive, int | float | str], ...]] = _JOINT_CONSTANTS
    joint: Int32 = ALL_JOINTS
    position: Float64 = 0.0


@dataclass(frozen=True, slots=True)
class ActuatorSpeedCommand(Message):
    """Move actuator ``joint`` (``ALL_JOINTS`` = every one) at ``speed`` (m/s or rad/s)."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/ActuatorSpeedCommand"
    MSG_CONSTANTS: ClassVar[tuple[tuple[str, Primitive, int | float | str], ...]] = _JOINT_CONSTANTS
    joint: Int32 = ALL_JOINTS
    speed: Float64 = 0.0


@dataclass(frozen=True, slots=True)
class ActuatorHomeCommand(Message):
    """Send actuator ``joint`` (``ALL_JOINTS`` = every one) to its home position."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/ActuatorHomeCommand"
    MSG_CONSTANTS: ClassVar[tuple[tuple[str, Primitive, int | float | str], ...]] = _JOINT_CONSTANTS
    joint: Int32 = ALL_JOINTS


@dataclass(frozen=True, slots=True)
class ActuatorCurrentCommand(Message):
    """Drive actuator ``joint`` (``ALL_JOINTS`` = every one) with ``current`` (A)."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/ActuatorCurrentCommand"
    MSG_CONSTANTS: ClassVar[tuple[tuple[str, Primitive, int | float | str], ...]] = _JOINT_CONSTANTS
    joint: Int32 = ALL_JOINTS
    current: Float64 = 0.0


@dataclass(frozen=True, slots=True)
class ActuatorSpeedConfigRequest(Message):
    """Set the speed (m/s or rad/s) of ``joint`` (``ALL_JOINTS`` = every one) for later moves."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/ActuatorSpeedConfigRequest"
    MSG_CONSTANTS: ClassVar[tuple[tuple[str, Primitive, int | float | str], ...]] = _JOINT_CONSTANTS
    joint: Int32 = ALL_JOINTS
    speed: Float64 = 0.0


@dataclass(frozen=True, slots=True)
class ActuatorAccelConfigRequest(Message):
    """Set the acceleration (m/s² or rad/s²) of ``joint`` (``ALL_JOINTS`` = every one)."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/ActuatorAccelConfigRequest"
    MSG_CONSTANTS: ClassVar[tuple[tuple[str, Primitive, int | float | str], ...]] = _JOINT_CONSTANTS
    joint: Int32 = ALL_JOINTS
    accel: Float64 = 0.0


@dataclass(frozen=True, slots=True)
class ActuatorJointPowerRequest(Message):
    """Switch the drive stage of ``joint`` (``ALL_JOINTS`` = every one) on (``on=True``) or off
    (limp, no torque) while the array's motor power stays as it is. Player has no such request
    (its power is the whole array's); the driver API's ``joint_power`` needs it on the bus."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/ActuatorJointPowerRequest"
    MSG_CONSTANTS: ClassVar[tuple[tuple[str, Primitive, int | float | str], ...]] = _JOINT_CONSTANTS
    joint: Int32 = ALL_JOINTS
    on: Bool = False


__all__ = [
    "ALL_JOINTS",
    "QUANTITY_FIELDS",
    "ActuatorAccelConfigRequest",
    "ActuatorCurrentCommand",
    "ActuatorHomeCommand",
    "ActuatorJointPowerRequest",
    "ActuatorPositionCommand",
    "ActuatorSpeedCommand",
    "ActuatorSpeedConfigRequest",
    "JointState",
    "Transform2D",
    "Twist2D",
    "Wrench2D",
]
