"""Actuator-array feedback: one :class:`ActuatorData` per actuator, and the array's power state.

Where it sits: :mod:`jointbus.messages.actarray`, above :mod:`~.state`; produced by the drivers
(``ActuatorArray.read()`` in :mod:`jointbus.drivers`) and published by the bridge. Wire types
``jointbus_msgs/msg/ActuatorData`` and ``jointbus_msgs/msg/ActuatorArrayData``.

From Player's ``player_actarray_actuator_t``: position (m or rad, by the actuator's type), speed
(m/s or rad/s), acceleration (m/s² or rad/s²), current (A) and state flags. Added for the driver
API: effort (N or N·m), temperature (°C) and a driver-specific status word (fault bits as the
motor reports them, 0 when there is nothing to report). Floats are float64 on the wire (Player
used C ``float``; float64 keeps what a driver measured bit-exact).

A quantity a driver does not measure (many motors report no acceleration or temperature) is NaN:
"not measured" is explicit, never a made-up 0. Infinities are rejected. The state flags must be
consistent: an actuator cannot be ``MOVING`` and ``BRAKED``, nor ``IDLE`` and ``MOVING``, nor
``IDLE`` and ``UNPOWERED``; state 0 (no flag) means the driver does not know.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Final

from jointbus.codec.wire import INT_RANGES, Bool, Float64, Primitive, UInt32
from jointbus.messages.base import Message
from jointbus.messages.errors import LimitError, ValidationError
from jointbus.messages.joint_sample import finite_or_nan
from jointbus.messages.std_msgs import Header

from .state import ActuatorState

_ALL_FLAGS: Final = int(
    ActuatorState.IDLE
    | ActuatorState.MOVING
    | ActuatorState.BRAKED
    | ActuatorState.STALLED
    | ActuatorState.UNPOWERED
)
_MOVING_BRAKED: Final = int(ActuatorState.MOVING | ActuatorState.BRAKED)
_IDLE_MOVING: Final = int(ActuatorState.IDLE | ActuatorState.MOVING)
_IDLE_UNPOWERED: Final = int(ActuatorState.IDLE | ActuatorState.UNPOWERED)
_UINT32_MAX: Final = INT_RANGES[Primitive.UINT32][1]
_FLOATS: Final = ("position", "speed", "acceleration", "current", "effort", "temperature")


def actuator_state(type_name: str, field_name: str, value: object) -> ActuatorState:
    """``value`` as a consistent :class:`ActuatorState` (ints accepted, unknown bits rejected)."""
    if type(value) is not ActuatorState:
        if isinstance(value, bool):
            raise ValidationError(type_name, field_name, value, "ActuatorState flags (uint8)")
        try:
            raw = operator.index(value)  # type: ignore[arg-type]
        except TypeError:
            raise ValidationError(
                type_name, field_name, value, "ActuatorState flags (uint8)"
            ) from None
        if raw & ~_ALL_FLAGS or raw < 0:
            raise ValidationError(
                type_name,
                field_name,
                value,
                "a combination of IDLE=1, MOVING=2, BRAKED=4, STALLED=8, UNPOWERED=16",
            )
        value = ActuatorState(raw)
    assert isinstance(value, ActuatorState)
    if value & _MOVING_BRAKED == _MOVING_BRAKED:
        raise ValidationError(
            type_name, field_name, value, "MOVING and BRAKED not both set (braked means still)"
        )
    if value & _IDLE_MOVING == _IDLE_MOVING:
        raise ValidationError(type_name, field_name, value, "IDLE and MOVING not both set")
    if value & _IDLE_UNPOWERED == _IDLE_UNPOWERED:
        raise ValidationError(
            type_name, field_name, value, "IDLE and UNPOWERED not both set (unpowered is not idle)"
        )
    return value


@dataclass(frozen=True, slots=True, eq=False)
class ActuatorData(Message):
    """One actuator's measured state; NaN marks a quantity the driver does not measure."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/ActuatorData"
    position: Float64
    speed: Float64
    acceleration: Float64
    current: Float64
    state: Annotated[ActuatorState, Primitive.UINT8]
    effort: Float64 = math.nan
    temperature: Float64 = math.nan
    status: UInt32 = 0

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        p, s, a, c, e, t = (
            self.position,
            self.speed,
            self.acceleration,
            self.current,
            self.effort,
            self.temperature,
        )
        if not (
            type(p) is float
            and type(s) is float
            and type(a) is float
            and type(c) is float
            and type(e) is float
            and type(t) is float
            and math.inf not in (abs(p), abs(s), abs(a), abs(c), abs(e), abs(t))
        ):
            for name in _FLOATS:
                object.__setattr__(self, name, finite_or_nan(tn, name, getattr(self, name)))
        state = self.state
        if type(state) is not ActuatorState or state & _MOVING_BRAKED == _MOVING_BRAKED:
            object.__setattr__(self, "state", actuator_state(tn, "state", state))
        elif state & _IDLE_MOVING == _IDLE_MOVING or state & _IDLE_UNPOWERED == _IDLE_UNPOWERED:
            actuator_state(tn, "state", state)
        status = self.status
        if type(status) is not int or not 0 <= status <= _UINT32_MAX:
            if isinstance(status, bool):
                raise ValidationError(tn, "status", status, "a status word (uint32)")
            try:
                status = operator.index(status)
            except TypeError:
                raise ValidationError(tn, "status", status, "a status word (uint32)") from None
            if not 0 <= status <= _UINT32_MAX:
                raise LimitError(tn, "status", status, f"an integer in [0, {_UINT32_MAX}]")
            object.__setattr__(self, "status", status)

    def __eq__(self, other: object) -> bool:
        """Field-wise equality in which NaN ("not measured") equals NaN."""
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, ActuatorData)
        return (
            self.state == other.state
            and self.status == other.status
            and all(
                a == b or (math.isnan(a) and math.isnan(b))
                for a, b in zip(self._floats(), other._floats(), strict=True)
            )
        )

    def __hash__(self) -> int:
        floats = (None if math.isnan(v) else v for v in self._floats())
        return hash((self.state, self.status, *floats))

    def _floats(self) -> tuple[float, ...]:
        return (
            self.position,
            self.speed,
            self.acceleration,
            self.current,
            self.effort,
            self.temperature,
        )


@dataclass(frozen=True, slots=True)
class ActuatorArrayData(Message):
    """The state of every actuator of an array, in array order, and whether motor power is on.

    Actuators are addressed by index (as Player does); the bridge maps indices to joint names.
    """

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/ActuatorArrayData"
    header: Header = field(default_factory=Header)
    actuators: tuple[ActuatorData, ...] = ()
    motor_power: Bool = False

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        if type(self.header) is not Header:
            raise ValidationError(tn, "header", self.header, "a std_msgs Header")
        actuators: Any = self.actuators
        if type(actuators) is not tuple:
            if isinstance(actuators, str | bytes) or not isinstance(actuators, Iterable):
                raise ValidationError(tn, "actuators", actuators, "a sequence of ActuatorData")
            actuators = tuple(actuators)
            object.__setattr__(self, "actuators", actuators)
        for index, item in enumerate(actuators):
            if type(item) is not ActuatorData:
                raise ValidationError(tn, "actuators", item, "an ActuatorData", index=index)
        if type(self.motor_power) is not bool:
            raise ValidationError(tn, "motor_power", self.motor_power, "a bool")

    def __len__(self) -> int:
        return len(self.actuators)


__all__ = ["ActuatorArrayData", "ActuatorData", "actuator_state"]
