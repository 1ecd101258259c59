"""ROS 2 time on the wire: ``builtin_interfaces/msg/Time`` and ``Duration``, and clock helpers.

Where it sits: :mod:`jointbus.messages`, the lowest message module (only :mod:`jointbus.codec`
below it). :mod:`jointbus.messages.std_msgs` builds its ``Header`` on :class:`Time`.

The ROS layout is kept exactly (``int32 sec``, ``uint32 nanosec``) so every jointbus message with a
header is byte-compatible with ROS 2. A header stamp is *wall-clock* time (``time.time_ns``), as in
ROS, because recordings and other machines compare stamps across hosts; the bus attachment carries
the publisher's monotonic time and node name separately (see the design's "Time" rule).

Conversions use nanoseconds as plain ``int``: no float can hold today's epoch time to the
nanosecond. Negative times follow ``rclcpp``: ``sec`` is floored and ``nanosec`` is always in
``[0, 1e9)``, so ``-1 ns`` is ``sec=-1, nanosec=999_999_999``.

Decoded messages accept any ``nanosec`` that fits ``uint32`` (ROS does not forbid an
un-normalised stamp on the wire and a decoder must not reject what ROS sends); :meth:`Time.to_ns`
handles it arithmetically, and everything jointbus builds itself is normalised.
"""

from __future__ import annotations

import operator
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Final, Self

from jointbus.codec.rules import WireRule
from jointbus.codec.wire import INT_RANGES, Int32, Primitive, UInt32
from jointbus.messages.base import Message
from jointbus.messages.errors import LimitError, ValidationError

NS_PER_S = 1_000_000_000
_INT32_MIN, _INT32_MAX = INT_RANGES[Primitive.INT32]
_UINT32_MAX = INT_RANGES[Primitive.UINT32][1]
#: The range of a stamp's ``sec`` (int32), s.
INT32_SECONDS: Final = (_INT32_MIN, _INT32_MAX)


def _wire_int(type_name: str, field: str, value: object, *, lo: int, hi: int, wire: str) -> int:
    """``value`` as a Python ``int`` in ``[lo, hi]``; bools, floats and strings are rejected."""
    if type(value) is not int:
        if isinstance(value, bool):
            raise ValidationError(type_name, field, value, f"an integer ({wire}), not a bool")
        try:
            value = operator.index(value)  # type: ignore[arg-type]  # numpy ints, never floats
        except TypeError:
            raise ValidationError(type_name, field, value, f"an integer ({wire})") from None
    if not lo <= value <= hi:
        raise LimitError(type_name, field, value, f"an integer in [{lo}, {hi}] ({wire})")
    return value


def _check_sec_nanosec(obj: Time | Duration) -> None:
    sec, nanosec = obj.sec, obj.nanosec
    if (
        type(sec) is int
        and type(nanosec) is int
        and _INT32_MIN <= sec <= _INT32_MAX
        and 0 <= nanosec <= _UINT32_MAX
    ):
        return
    name = obj.TYPE_NAME
    sec = _wire_int(name, "sec", sec, lo=_INT32_MIN, hi=_INT32_MAX, wire="int32")
    nanosec = _wire_int(name, "nanosec", nanosec, lo=0, hi=_UINT32_MAX, wire="uint32")
    object.__setattr__(obj, "sec", sec)
    object.__setattr__(obj, "nanosec", nanosec)


def _split_ns(type_name: str, ns: object) -> tuple[int, int]:
    if type(ns) is not int:
        if isinstance(ns, bool):
            raise ValidationError(type_name, "ns", ns, "an integer number of nanoseconds")
        try:
            ns = operator.index(ns)  # type: ignore[arg-type]
        except TypeError:
            raise ValidationError(type_name, "ns", ns, "an integer number of nanoseconds") from None
    sec, nanosec = divmod(ns, NS_PER_S)
    if not _INT32_MIN <= sec <= _INT32_MAX:
        raise LimitError(
            type_name,
            "ns",
            ns,
            f"a time whose seconds fit int32 [{_INT32_MIN}, {_INT32_MAX}] s",
        )
    return sec, nanosec


@dataclass(frozen=True, slots=True)
class Time(Message):
    """A point in time: ``sec`` seconds plus ``nanosec`` nanoseconds since the Unix epoch (wall)."""

    TYPE_NAME: ClassVar[str] = "builtin_interfaces/msg/Time"
    #: Any int32 / uint32 from the wire is valid (see the module docstring on ``nanosec``).
    WIRE_RULES: ClassVar[Mapping[str, WireRule]] = {}
    sec: Int32 = 0
    nanosec: UInt32 = 0

    def __post_init__(self) -> None:
        _check_sec_nanosec(self)

    @classmethod
    def from_ns(cls, ns: int) -> Self:
        """The stamp for ``ns`` nanoseconds since the epoch (:class:`LimitError` past int32 s)."""
        sec, nanosec = _split_ns(cls.TYPE_NAME, ns)
        return cls(sec, nanosec)

    @classmethod
    def now(cls) -> Self:
        """The current wall-clock time (``time.time_ns``), the clock ROS uses for stamps."""
        return cls.from_ns(time.time_ns())

    def to_ns(self) -> int:
        """Nanoseconds since the epoch (exact integer)."""
        return self.sec * NS_PER_S + self.nanosec

    def to_seconds(self) -> float:
        """Seconds since the epoch as a float (rounded to ~0.2 µs today; use :meth:`to_ns`)."""
        return self.sec + self.nanosec * 1e-9


@dataclass(frozen=True, slots=True)
class Duration(Message):
    """A signed time span: ``sec`` seconds plus ``nanosec`` (non-negative) nanoseconds."""

    TYPE_NAME: ClassVar[str] = "builtin_interfaces/msg/Duration"
    sec: Int32 = 0
    nanosec: UInt32 = 0

    def __post_init__(self) -> None:
        _check_sec_nanosec(self)

    @classmethod
    def from_ns(cls, ns: int) -> Self:
        """The span of ``ns`` nanoseconds (may be negative; :class:`LimitError` past int32 s)."""
        sec, nanosec = _split_ns(cls.TYPE_NAME, ns)
        return cls(sec, nanosec)

    def to_ns(self) -> int:
        """The span in nanoseconds (exact integer)."""
        return self.sec * NS_PER_S + self.nanosec

    def to_seconds(self) -> float:
        """The span in seconds as a float."""
        return self.sec + self.nanosec * 1e-9


__all__ = ["INT32_SECONDS", "NS_PER_S", "Duration", "Time"]
