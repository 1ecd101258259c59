"""Actuator-array feedback: one :class:`ActuatorData` per actuator, and the array's power state.

Where it sits: :mod:`jointbus.messages.actarray`, above :mod:`~.state`; produced by the drivers
(``ActuatorArray.read()`` in :mod:`jointbus.drivers`, through the one-pass builder
:meth:`ActuatorArrayData.from_arrays`) and published by the array node. Wire types
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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Final

import numpy as np
import numpy.typing as npt

from jointbus.codec.wire import INT_RANGES, Bool, Float64, Primitive, UInt32
from jointbus.messages.base import Message
from jointbus.messages.errors import LengthMismatchError, LimitError, ValidationError
from jointbus.messages.joint_sample import finite_or_nan
from jointbus.messages.numpy_columns import float64_lists, has_infinity, int_list, listed
from jointbus.messages.std_msgs import Header

from .state import ActuatorState

_ALL_FLAGS: Final = int(
    ActuatorState.IDLE
    | ActuatorState.MOVING
    | ActuatorState.BRAKED
    | ActuatorState.STALLED
    | ActuatorState.UNPOWERED
    | ActuatorState.LIMITED
    | ActuatorState.STALE
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
                "a combination of IDLE=1, MOVING=2, BRAKED=4, STALLED=8, UNPOWERED=16, "
                "LIMITED=32, STALE=64",
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

    @classmethod
    def from_arrays(
        cls,
        header: Header,
        *,
        position: npt.NDArray[np.float64],
        speed: npt.NDArray[np.float64],
        acceleration: npt.NDArray[np.float64],
        current: npt.NDArray[np.float64],
        state: npt.NDArray[np.uint8],
        effort: npt.NDArray[np.float64],
        temperature: npt.NDArray[np.float64],
        status: npt.NDArray[np.uint32],
        motor_power: bool,
        names: Sequence[str] | None = None,
    ) -> ActuatorArrayData:
        """The array data of one read, from per-actuator columns (a driver's ``JointReading``).

        The same message, by the same rules, as the constructor given one
        ``ActuatorData(position[i], speed[i], ..., state[i], ..., status[i])`` per actuator —
        built in one pass for the per-cycle path of the array node (:mod:`..numpy_columns`):
        each column is checked once, then the actuators are built without re-running the
        element checks. Units as :class:`ActuatorData`'s (m or rad, m/s or rad/s, ..., A, N or
        N·m, °C); NaN = not measured.

        A column that is not a 1-D numpy array of its usual dtype (float64, ``uint8`` state,
        ``uint32`` status) goes through :class:`ActuatorData` element by element. An invalid
        value raises the error the constructor raises, naming the actuator's ``index`` and, when
        ``names`` is given, its joint; columns of different lengths raise a
        :class:`LengthMismatchError` naming the column. Nothing is built then.
        """
        count = len(position) if type(position) is np.ndarray and position.ndim == 1 else -1
        floats = float64_lists(count, position, speed, acceleration, current, effort, temperature)
        states = int_list(count, state, np.uint8)
        words = int_list(count, status, np.uint32)
        if (
            floats is None
            or states is None
            or words is None
            or type(header) is not Header
            or type(motor_power) is not bool
            or (names is not None and len(names) != count)
            or None in (flags := list(map(_STATE_OF_BYTE.__getitem__, states)))
            or has_infinity(floats)
        ):
            columns = (position, speed, acceleration, current, state, effort, temperature, status)
            return cls._from_columns(header, columns, motor_power, names)
        new = _new
        set_p, set_s, set_a, set_c, set_st, set_e, set_t, set_w = _ACTUATOR_SETTERS
        actuators: list[ActuatorData] = []
        append = actuators.append
        for p, s, a, c, e, t, st, w in zip(*floats, flags, words, strict=True):
            d = new(ActuatorData)
            set_p(d, p)
            set_s(d, s)
            set_a(d, a)
            set_c(d, c)
            set_st(d, st)
            set_e(d, e)
            set_t(d, t)
            set_w(d, w)
            append(d)
        msg = new(cls)
        setattr_ = object.__setattr__
        setattr_(msg, "header", header)
        setattr_(msg, "actuators", tuple(actuators))
        setattr_(msg, "motor_power", motor_power)
        return msg

    @classmethod
    def _from_columns(
        cls,
        header: Header,
        columns: tuple[object, ...],
        motor_power: bool,
        names: Sequence[str] | None,
    ) -> ActuatorArrayData:
        """:meth:`from_arrays` through the constructors, element by element (columns of any
        sequence type; the path that finds and names what is wrong)."""
        tn = cls.TYPE_NAME
        lists = [listed(tn, name, column) for name, column in zip(_COLUMNS, columns, strict=True)]
        count = len(lists[0]) if names is None else len(names)
        for name, values in zip(_COLUMNS, lists, strict=True):
            if len(values) != count:
                expected = "one per actuator" if names is None else "one per joint name"
                raise LengthMismatchError(
                    tn, name, f"{len(values)} values", f"{expected} ({count})"
                )
        actuators = []
        for index, (p, s, a, c, st, e, t, w) in enumerate(zip(*lists, strict=True)):
            try:
                actuators.append(ActuatorData(p, s, a, c, st, e, t, w))
            except ValidationError as exc:
                raise type(exc)(
                    exc.type_name,
                    exc.field,
                    exc.value,
                    exc.expected,
                    joint=None if names is None else names[index],
                    index=index,
                ) from None
        return cls(header, tuple(actuators), motor_power)


def _state_of_byte(value: int) -> ActuatorState | None:
    try:
        return actuator_state(ActuatorData.TYPE_NAME, "state", value)
    except ValidationError:
        return None


#: The state flags of each byte value, ``None`` for a combination :class:`ActuatorData` refuses.
_STATE_OF_BYTE: Final = tuple(_state_of_byte(value) for value in range(256))
_COLUMNS: Final = (
    "position",
    "speed",
    "acceleration",
    "current",
    "state",
    "effort",
    "temperature",
    "status",
)
#: The slot setters of ActuatorData's fields in :data:`_COLUMNS` order: a built actuator's
#: fields, set as its constructor would leave them, without its element checks.
_ACTUATOR_SETTERS: Final = tuple(ActuatorData.__dict__[name].__set__ for name in _COLUMNS)
_new = object.__new__


__all__ = ["ActuatorArrayData", "ActuatorData", "actuator_state"]
