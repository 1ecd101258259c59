"""The ``std_msgs`` types jointbus uses: ``Header`` and ``String``.

Where it sits: :mod:`jointbus.messages`, directly above :mod:`jointbus.messages.stamp`; every
message with a header (BridgeData, JointCommand, JointState, ...) nests :class:`Header`.

The layout is exactly ROS 2's (``builtin_interfaces/Time stamp``, ``string frame_id``) so the bytes
interoperate with ROS 2 tools. The design's "Time" rule (every message carries wall *and* monotonic
time and the publishing node's name) is met by the bus attachment, not by widening the header: a
wider header would break every ROS subscriber.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Final, Self

from jointbus.codec.rules import WireRule
from jointbus.codec.wire import String as StringField
from jointbus.messages.base import Message
from jointbus.messages.errors import ValidationError
from jointbus.messages.stamp import INT32_SECONDS, NS_PER_S, Time

#: The nanoseconds since the epoch a :class:`Time` holds: seconds within int32.
_NS_MIN: Final = INT32_SECONDS[0] * NS_PER_S
_NS_END: Final = (INT32_SECONDS[1] + 1) * NS_PER_S
_new: Final = object.__new__
_set: Final = object.__setattr__


@dataclass(frozen=True, slots=True)
class Header(Message):
    """When (wall-clock :class:`Time`) and in which coordinate frame the data was measured."""

    TYPE_NAME: ClassVar[str] = "std_msgs/msg/Header"
    #: No wire value can break a rule (the fast decoder builds it without the constructor).
    WIRE_RULES: ClassVar[Mapping[str, WireRule]] = {}
    stamp: Time = field(default_factory=Time)
    frame_id: StringField = ""

    def __post_init__(self) -> None:
        if type(self.stamp) is not Time:
            raise ValidationError(self.TYPE_NAME, "stamp", self.stamp, "a builtin_interfaces Time")
        if type(self.frame_id) is not str:
            raise ValidationError(self.TYPE_NAME, "frame_id", self.frame_id, "a str")

    @classmethod
    def now(cls, frame_id: str = "") -> Self:
        """A header stamped with the current wall-clock time (as ROS stamps are)."""
        return cls.at_ns(time.time_ns(), frame_id)

    @classmethod
    def at_ns(cls, ns: int, frame_id: str = "") -> Self:
        """A header stamped ``ns`` nanoseconds after the epoch.

        An ``int`` whose seconds fit the stamp's int32 and a ``str`` frame — every header a
        node stamps — are stored as the constructors would store them, without their seven
        Python calls (an array node stamps one header per cycle, 500–1000 a second); anything
        else goes through the constructors and their errors."""
        if cls is Header and type(ns) is int and type(frame_id) is str and _NS_MIN <= ns < _NS_END:
            stamp = _new(Time)
            _set(stamp, "sec", ns // NS_PER_S)
            _set(stamp, "nanosec", ns % NS_PER_S)
            header = _new(cls)
            _set(header, "stamp", stamp)
            _set(header, "frame_id", frame_id)
            return header
        return cls(Time.from_ns(ns), frame_id)


@dataclass(frozen=True, slots=True)
class String(Message):
    """A single UTF-8 string (``std_msgs/msg/String``), e.g. a robot description."""

    TYPE_NAME: ClassVar[str] = "std_msgs/msg/String"
    data: StringField = ""

    def __post_init__(self) -> None:
        if type(self.data) is not str:
            raise ValidationError(self.TYPE_NAME, "data", self.data, "a str")


__all__ = ["Header", "String", "Time"]
