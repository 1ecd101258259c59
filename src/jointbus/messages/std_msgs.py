"""The ``std_msgs`` types jointbus uses: ``Header`` and ``String``.

Where it sits: :mod:`jointbus.messages`, directly above :mod:`jointbus.messages.stamp`; every
message with a header (BridgeData, JointCommand, JointState, ...) nests :class:`Header`.

The layout is exactly ROS 2's (``builtin_interfaces/Time stamp``, ``string frame_id``) so the bytes
interoperate with ROS 2 tools. The design's "Time" rule (every message carries wall *and* monotonic
time and the publishing node's name) is met by the bus attachment, not by widening the header: a
wider header would break every ROS subscriber.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Self

from jointbus.codec.rules import WireRule
from jointbus.codec.wire import String as StringField
from jointbus.messages.base import Message
from jointbus.messages.errors import ValidationError
from jointbus.messages.stamp import Time


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
        return cls(Time.now(), frame_id)

    @classmethod
    def at_ns(cls, ns: int, frame_id: str = "") -> Self:
        """A header stamped ``ns`` nanoseconds after the epoch."""
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
