"""One joint's sample with optional fields (Rock ``base::JointState``), wire ``JointSample``.

Where it sits: :mod:`jointbus.messages`, above :mod:`jointbus.codec`; :mod:`~.joints` names a
vector of samples and :mod:`~.joint_limits` bounds them. Drivers and controllers use a sample both
as feedback (several fields set) and as a command, where exactly one field must be set and
:meth:`JointSample.mode` says which — a position controller refuses anything but
:meth:`JointSample.is_position`.

Fields and units (angular / linear joints): ``position`` rad / m (an angular joint that turns
freely accumulates past ±π), ``speed`` rad/s / m/s (instantaneous, not a finite difference of two
positions), ``effort`` N·m / N, ``raw`` the actuator's raw command or reading (commonly a PWM duty
in [0, 1]), ``acceleration`` rad/s² / m/s².

**NaN means "unset"**, as in Rock; infinities are rejected (no joint is at an infinite position).
Unlike Rock, every field is float64 on the wire (Rock stores speed, effort, raw and acceleration
as C ``float``): a Python float is a double, and float64 keeps a sample bit-exact through the wire.

**Immutable** (``set_field`` returns a new sample), because the in-process bus hands the same object
to every subscriber: a controller that set a field in place would change what the logger and the
safety monitor see. Equality treats NaN as equal to NaN, so an unset field compares equal to an
unset field and a decoded sample equals the one that was sent.
"""

from __future__ import annotations

import enum
import math
import numbers
import operator
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Self

from jointbus.codec.wire import Float64
from jointbus.messages.base import Message
from jointbus.messages.errors import MessageError, NonFiniteError, ValidationError

_NAN: Final = math.nan
_INF: Final = math.inf
_isnan = math.isnan


class Mode(enum.IntEnum):
    """Which field a command sets; the order (and values) are Rock's ``MODE`` enum."""

    POSITION = 0
    SPEED = 1
    EFFORT = 2
    RAW = 3
    ACCELERATION = 4
    UNSET = 5


#: The sample field each mode selects (``UNSET`` selects none).
FIELD_OF_MODE: Final[dict[Mode, str]] = {
    Mode.POSITION: "position",
    Mode.SPEED: "speed",
    Mode.EFFORT: "effort",
    Mode.RAW: "raw",
    Mode.ACCELERATION: "acceleration",
}
FIELDS: Final = ("position", "speed", "effort", "raw", "acceleration")


class AmbiguousModeError(MessageError):
    """:meth:`JointSample.mode` was asked of a sample with several fields set.

    ``fields`` names the fields that are set; ``joint`` and ``index`` are filled in when the
    sample was looked up by name in a :class:`~jointbus.messages.joints.Joints`.
    """

    def __init__(
        self, fields: tuple[str, ...], *, joint: str | None = None, index: int | None = None
    ) -> None:
        self.fields = fields
        self.joint = joint
        self.index = index
        where = f"joint {joint!r} (index {index}): " if joint is not None else ""
        super().__init__(
            f"JointSample: {where}mode is ambiguous: fields {', '.join(fields)} are all set; "
            "expected exactly one set field (or none)"
        )


class InvalidModeError(MessageError):
    """A mode that selects no field: not one of POSITION .. ACCELERATION. ``value`` keeps it."""

    def __init__(self, value: object) -> None:
        self.value = value
        super().__init__(
            f"JointSample: mode = {value!r}; expected one of "
            + ", ".join(f"{m.name} ({m.value})" for m in FIELD_OF_MODE)
        )


def _as_mode(mode: object) -> Mode:
    """``mode`` as a field-selecting :class:`Mode` (ints accepted, as Rock takes ``int``)."""
    if type(mode) is Mode and mode is not Mode.UNSET:
        return mode
    if isinstance(mode, bool):
        raise InvalidModeError(mode)
    try:
        result = Mode(operator.index(mode))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InvalidModeError(mode) from None
    if result is Mode.UNSET:
        raise InvalidModeError(mode)
    return result


def finite_or_nan(type_name: str, field: str, value: object) -> float:
    """``value`` as a built-in float that is finite or NaN ("unset"); ints accepted."""
    if type(value) is float:
        if value in (_INF, -_INF):
            raise NonFiniteError(type_name, field, value, "a finite number or NaN (unset)")
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValidationError(type_name, field, value, "a real number or NaN (unset)")
    try:
        result = float(value)
    except (OverflowError, ValueError, TypeError):
        raise ValidationError(type_name, field, value, "a real number or NaN (unset)") from None
    if result in (_INF, -_INF):
        raise NonFiniteError(type_name, field, value, "a finite number or NaN (unset)")
    return result


def _same(a: float, b: float) -> bool:
    return a == b or (_isnan(a) and _isnan(b))


@dataclass(frozen=True, slots=True, eq=False)
class JointSample(Message):
    """One joint's position, speed, effort, raw value and acceleration; NaN = unset.

    Build a command with one of the ``from_*`` constructors (``JointSample.from_position(0.3)``)
    and test one with ``is_*`` / :meth:`mode`.
    """

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/JointSample"
    position: Float64 = _NAN
    speed: Float64 = _NAN
    effort: Float64 = _NAN
    raw: Float64 = _NAN
    acceleration: Float64 = _NAN

    def __post_init__(self) -> None:
        p, s, e, r, a = self.position, self.speed, self.effort, self.raw, self.acceleration
        if (
            type(p) is float
            and type(s) is float
            and type(e) is float
            and type(r) is float
            and type(a) is float
            and _INF not in (abs(p), abs(s), abs(e), abs(r), abs(a))
        ):
            return
        tn = self.TYPE_NAME
        for name in FIELDS:
            object.__setattr__(self, name, finite_or_nan(tn, name, getattr(self, name)))

    # -- value semantics (NaN == NaN: "unset" equals "unset") ---------------------------------

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, JointSample)
        return (
            _same(self.position, other.position)
            and _same(self.speed, other.speed)
            and _same(self.effort, other.effort)
            and _same(self.raw, other.raw)
            and _same(self.acceleration, other.acceleration)
        )

    def __hash__(self) -> int:
        return hash(tuple(None if _isnan(v) else v for v in self.values()))

    def values(self) -> tuple[float, float, float, float, float]:
        """``(position, speed, effort, raw, acceleration)``, in :class:`Mode` order."""
        return (self.position, self.speed, self.effort, self.raw, self.acceleration)

    # -- constructors, one per field (Rock's static Position(), Speed(), ...) ----------------

    @classmethod
    def from_position(cls, value: float) -> Self:
        """A sample with only ``position`` set (rad or m)."""
        return cls(position=value)

    @classmethod
    def from_speed(cls, value: float) -> Self:
        """A sample with only ``speed`` set (rad/s or m/s)."""
        return cls(speed=value)

    @classmethod
    def from_effort(cls, value: float) -> Self:
        """A sample with only ``effort`` set (N·m or N)."""
        return cls(effort=value)

    @classmethod
    def from_raw(cls, value: float) -> Self:
        """A sample with only ``raw`` set (actuator units, e.g. PWM duty)."""
        return cls(raw=value)

    @classmethod
    def from_acceleration(cls, value: float) -> Self:
        """A sample with only ``acceleration`` set (rad/s² or m/s²)."""
        return cls(acceleration=value)

    @classmethod
    def from_mode(cls, mode: Mode | int, value: float) -> Self:
        """A sample with only the field of ``mode`` set (:class:`InvalidModeError` for UNSET)."""
        return cls(**{FIELD_OF_MODE[_as_mode(mode)]: value})

    # -- predicates ---------------------------------------------------------------------------

    def has_position(self) -> bool:
        """Whether ``position`` is set."""
        return not _isnan(self.position)

    def has_speed(self) -> bool:
        """Whether ``speed`` is set."""
        return not _isnan(self.speed)

    def has_effort(self) -> bool:
        """Whether ``effort`` is set."""
        return not _isnan(self.effort)

    def has_raw(self) -> bool:
        """Whether ``raw`` is set."""
        return not _isnan(self.raw)

    def has_acceleration(self) -> bool:
        """Whether ``acceleration`` is set."""
        return not _isnan(self.acceleration)

    def set_fields(self) -> tuple[str, ...]:
        """Names of the fields that are set, in :class:`Mode` order."""
        return tuple(name for name, v in zip(FIELDS, self.values(), strict=True) if not _isnan(v))

    def _only(self, index: int) -> bool:
        values = self.values()
        if _isnan(values[index]):
            return False
        return sum(1 for v in values if not _isnan(v)) == 1

    def is_position(self) -> bool:
        """Whether ``position`` is the only field set (a valid position command)."""
        return self._only(Mode.POSITION)

    def is_speed(self) -> bool:
        """Whether ``speed`` is the only field set (a valid speed command)."""
        return self._only(Mode.SPEED)

    def is_effort(self) -> bool:
        """Whether ``effort`` is the only field set (a valid torque/force command)."""
        return self._only(Mode.EFFORT)

    def is_raw(self) -> bool:
        """Whether ``raw`` is the only field set (a valid raw / PWM command)."""
        return self._only(Mode.RAW)

    def is_acceleration(self) -> bool:
        """Whether ``acceleration`` is the only field set (a valid acceleration command)."""
        return self._only(Mode.ACCELERATION)

    def mode(self) -> Mode:
        """The one field that is set, ``UNSET`` if none; :class:`AmbiguousModeError` if several."""
        set_fields = self.set_fields()
        if not set_fields:
            return Mode.UNSET
        if len(set_fields) > 1:
            raise AmbiguousModeError(set_fields)
        return Mode(FIELDS.index(set_fields[0]))

    # -- field access by mode -------------------------------------------------------------------

    def get_field(self, mode: Mode | int) -> float:
        """The value of the field ``mode`` selects (NaN if unset); :class:`InvalidModeError` for
        ``UNSET`` or a number that is no mode."""
        value: float = getattr(self, FIELD_OF_MODE[_as_mode(mode)])
        return value

    def set_field(self, mode: Mode | int, value: float) -> Self:
        """A copy with the field of ``mode`` set to ``value`` (NaN unsets it); self is unchanged."""
        name = FIELD_OF_MODE[_as_mode(mode)]
        kwargs: dict[str, Any] = dict(zip(FIELDS, self.values(), strict=True))
        kwargs[name] = value
        return type(self)(**kwargs)


UNSET_SAMPLE: Final = JointSample()
"""The sample with every field unset."""

__all__ = [
    "FIELDS",
    "FIELD_OF_MODE",
    "UNSET_SAMPLE",
    "AmbiguousModeError",
    "InvalidModeError",
    "JointSample",
    "Mode",
    "finite_or_nan",
]
