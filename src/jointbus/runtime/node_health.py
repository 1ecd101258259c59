"""A supervisor's verdicts on the nodes it watches, latched for observers that come later.

Where it sits: :mod:`jointbus.runtime`, beside :mod:`.liveliness`, whose
:class:`~jointbus.runtime.liveliness.LivelinessMonitor` publishes a :class:`NodeHealthTable` on
``/<ns>/node_health`` (:data:`NODE_HEALTH_TOPIC`, QoS ``LATCHED``: reliable, transient-local)
every time one of its verdicts changes; ``jointbus node list`` and the terminal monitor read it.

Why: a node's death is visible to whoever watched it die — its heartbeats stop, its Zenoh
liveliness token is withdrawn — and to nobody who arrives later: a ``jointbus node list`` started
after the control node was SIGKILLed saw no heartbeat and no token, and listed nothing, as if the
node had never run. The bridge's supervisor (its liveliness monitor) did see it, and said so once
on the status topic, which is volatile. Latched, its table reaches every later subscriber: a dead
node is **STALE for everyone**, not absent for late observers.

What a table holds: every node the monitor watches and has decided on, except those that shut
down cleanly (a clean shutdown is no fault, and command-line tools come and go), at most
:data:`MAX_NODES` (the most recently decided). Each entry is a :class:`NodeHealthEntry`: the
node's name, its level (``OK`` or ``STALE``, :class:`~jointbus.messages.status.Level` values),
the lifecycle state it last announced, the reason of the verdict and ``silent_s``, the seconds
between its last heartbeat and the table's header stamp (NaN when no heartbeat was ever seen: a
node known by its token alone), so an observer can tell how long it has been silent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar, Final

from jointbus.codec.wire import Float64, String, UInt8
from jointbus.messages.base import Message
from jointbus.messages.errors import ValidationError
from jointbus.messages.status import Level
from jointbus.messages.std_msgs import Header

__all__ = ["MAX_NODES", "NODE_HEALTH_TOPIC", "NodeHealthEntry", "NodeHealthTable"]

#: The table's topic, relative to the monitoring node's namespace.
NODE_HEALTH_TOPIC: Final = "node_health"
#: Entries a table holds at most (the most recently decided ones).
MAX_NODES: Final = 64
_LEVELS: Final = frozenset(int(level) for level in Level)


@dataclass(frozen=True, slots=True)
class NodeHealthEntry(Message):
    """One watched node: ``name``, ``level`` (a :class:`Level` value: OK or STALE), the
    ``lifecycle`` state it announced, ``silent_s`` (s from its last heartbeat to the table's
    stamp; NaN: none seen) and the ``reason`` the monitor gave for the level."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/NodeHealthEntry"
    name: String = ""
    level: UInt8 = int(Level.OK)
    lifecycle: String = ""
    silent_s: Float64 = math.nan
    reason: String = ""

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        for name in ("name", "lifecycle", "reason"):
            if type(getattr(self, name)) is not str:
                raise ValidationError(tn, name, getattr(self, name), "a str")
        if isinstance(self.level, bool) or self.level not in _LEVELS:
            raise ValidationError(tn, "level", self.level, f"a Level value {sorted(_LEVELS)}")
        if type(self.silent_s) is not float:
            if isinstance(self.silent_s, bool) or not isinstance(self.silent_s, int):
                raise ValidationError(tn, "silent_s", self.silent_s, "a float (s)")
            object.__setattr__(self, "silent_s", float(self.silent_s))

    @property
    def stale(self) -> bool:
        """True when the monitor judged the node STALE."""
        return self.level == Level.STALE


@dataclass(frozen=True, slots=True)
class NodeHealthTable(Message):
    """Every verdict of ``reporting_node``'s liveliness monitor (see the module docstring)."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/NodeHealthTable"
    header: Header = field(default_factory=Header)
    reporting_node: String = ""
    nodes: tuple[NodeHealthEntry, ...] = ()

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        if type(self.header) is not Header:
            raise ValidationError(tn, "header", self.header, "a std_msgs Header")
        if type(self.reporting_node) is not str:
            raise ValidationError(tn, "reporting_node", self.reporting_node, "a str")
        nodes: object = self.nodes
        if type(nodes) is not tuple:
            if isinstance(nodes, str | bytes) or not hasattr(nodes, "__iter__"):
                raise ValidationError(tn, "nodes", nodes, "a sequence of NodeHealthEntry")
            nodes = tuple(nodes)
            object.__setattr__(self, "nodes", nodes)
        for index, item in enumerate(self.nodes):
            if type(item) is not NodeHealthEntry:
                raise ValidationError(tn, f"nodes[{index}]", item, "a NodeHealthEntry")

    def entry(self, name: str) -> NodeHealthEntry | None:
        """The entry of node ``name``, or None."""
        return next((e for e in self.nodes if e.name == name), None)

    def silent_s_at(self, entry: NodeHealthEntry, wall_ns: int) -> float:
        """Seconds from ``entry``'s last heartbeat to ``wall_ns`` (wall clock, ns since the epoch):
        its ``silent_s`` plus the table's age at ``wall_ns``; NaN when no heartbeat was seen.

        Why: ``silent_s`` is the silence *at the header stamp*, when the verdict changed, and a
        latched table reaches a later observer any time after that — seconds or hours. Read alone
        it is a number frozen at the verdict (monitors started 7.7 to 30.8 s after a SIGKILL all
        printed "last heartbeat 2.6 s ago"). A stamp ahead of ``wall_ns`` (another host's clock
        running ahead) counts as a fresh table, never a negative age."""
        if math.isnan(entry.silent_s):
            return math.nan
        return entry.silent_s + max(0.0, (wall_ns - self.header.stamp.to_ns()) / 1e9)
