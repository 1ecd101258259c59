"""The status report: events, warnings, errors and the 1 Hz heartbeat of every node, of any robot.

Where it sits: :mod:`jointbus.messages` (generic), below ``bus`` and ``runtime``, which build every
node's heartbeat, liveliness and diagnostics on it. Every node publishes a ``level=OK`` heartbeat at
least once a second on ``/<ns>/heartbeat``; nodes report events (a rejected command, an
over-temperature actuator) on ``/<ns>/status``. A missing heartbeat means a lost or crashed node.

Why it is generic yet named ``hb50_commons/msg/Status`` on the wire: the type was first Honey Badger
5.0's (seed 001) and ROS 2 tools, bags and monitors already know it by that name; it carries
nothing robot-specific, so every node of every robot uses it unchanged. Field names, order and wire
types are exactly the seed's, and :mod:`jointbus.robots.hb50.messages` re-exports it for hb50 users.

``level`` is one of :class:`Level` (``OK=1, WARN=2, ERROR=3, STALE=4``, the seed's values, also
published as ``.msg`` constants); anything else is rejected, because a monitor that cannot rank a
report cannot decide whether to raise an alarm. ``data`` is optional node-specific payload bytes.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Self

from jointbus.codec.rules import WireRule
from jointbus.codec.wire import Byte, ByteSeq, Primitive, String
from jointbus.messages.base import Message
from jointbus.messages.errors import LimitError, ValidationError
from jointbus.messages.std_msgs import Header


class Level(enum.IntEnum):
    """Severity of a :class:`Status` report (the seed's values; never renumbered)."""

    OK = 1  # normal operation (and the heartbeat)
    WARN = 2  # warning condition
    ERROR = 3  # error condition
    STALE = 4  # stale / timeout condition (e.g. a node's heartbeat went missing)


_LEVELS = ", ".join(f"{m.name}={m.value}" for m in Level)


@dataclass(frozen=True, slots=True)
class Status(Message):
    """One status report: severity, who reports it, a human-readable text and optional data."""

    TYPE_NAME: ClassVar[str] = "hb50_commons/msg/Status"
    MSG_CONSTANTS: ClassVar[tuple[tuple[str, Primitive, int | float | str], ...]] = tuple(
        (m.name, Primitive.BYTE, m.value) for m in Level
    )
    #: What a decoded value can break: the level must be a Level (decoded as the member).
    WIRE_RULES: ClassVar[Mapping[str, WireRule]] = {"level": WireRule(enum=Level)}
    header: Header = field(default_factory=Header)
    level: Byte = Level.OK
    reporting_node: String = ""
    status: String = ""
    data: ByteSeq = b""

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        if type(self.header) is not Header:
            raise ValidationError(tn, "header", self.header, "a std_msgs Header")
        level = self.level
        if type(level) is not Level:
            if isinstance(level, bool) or not isinstance(level, int):
                raise ValidationError(tn, "level", level, f"a status level ({_LEVELS})")
            try:
                level = Level(level)
            except ValueError:
                raise LimitError(tn, "level", level, f"one of {_LEVELS}") from None
            object.__setattr__(self, "level", level)
        if type(self.reporting_node) is not str:
            raise ValidationError(tn, "reporting_node", self.reporting_node, "a str (node name)")
        if type(self.status) is not str:
            raise ValidationError(tn, "status", self.status, "a str")
        data: object = self.data
        if type(data) is not bytes:
            if not isinstance(data, bytearray | memoryview):
                raise ValidationError(tn, "data", data, "bytes")
            object.__setattr__(self, "data", bytes(data))

    # -- construction, one per level ---------------------------------------------------------

    @classmethod
    def of(
        cls,
        level: Level,
        node: str,
        text: str,
        data: bytes = b"",
        *,
        header: Header | None = None,
    ) -> Self:
        """A report of ``level`` from ``node``, stamped now unless ``header`` is given."""
        return cls(header if header is not None else Header.now(), level, node, text, data)

    @classmethod
    def ok(
        cls, node: str, text: str = "", data: bytes = b"", *, header: Header | None = None
    ) -> Self:
        """Normal operation; with an empty text this is the 1 Hz heartbeat."""
        return cls.of(Level.OK, node, text, data, header=header)

    @classmethod
    def warn(cls, node: str, text: str, data: bytes = b"", *, header: Header | None = None) -> Self:
        """A warning condition."""
        return cls.of(Level.WARN, node, text, data, header=header)

    @classmethod
    def error(
        cls, node: str, text: str, data: bytes = b"", *, header: Header | None = None
    ) -> Self:
        """An error condition (e.g. a rejected command, with the error's text)."""
        return cls.of(Level.ERROR, node, text, data, header=header)

    @classmethod
    def stale(
        cls, node: str, text: str, data: bytes = b"", *, header: Header | None = None
    ) -> Self:
        """A stale / timeout condition (``node`` reports that something went silent)."""
        return cls.of(Level.STALE, node, text, data, header=header)


__all__ = ["Level", "Status"]
