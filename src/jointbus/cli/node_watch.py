"""What ``jointbus node list`` knows: the nodes of one bus, their heartbeats and endpoints.

Where it sits: :mod:`jointbus.cli`, imported by the ``node list`` command of
:mod:`jointbus.cli.node` when it runs (not to show its ``--help``). It judges heartbeats with
:class:`jointbus.runtime.LivelinessMonitor`, so the CLI and the robot's own supervisors apply one
rule, adds the verdicts those supervisors latched on ``/<ns>/node_health`` (a node that died
before the command started is listed STALE), and never speaks: its monitor does not publish the
changes it sees on the robot's status topic, nor a table of verdicts.
"""

from __future__ import annotations

import dataclasses
import math
import queue
import time
from collections.abc import Callable, Iterable
from typing import Any, Final

from jointbus.bus import LATCHED, Bus, EndpointInfo, Subscriber, TopicInfo
from jointbus.cli.options import cli_node_name
from jointbus.robots.hb50.messages import Level, Status
from jointbus.runtime import (
    NODE_HEALTH_TOPIC,
    LivelinessMonitor,
    Node,
    NodeHealth,
    NodeHealthEntry,
    NodeHealthTable,
)

#: State shown for a node that owns endpoints but publishes no heartbeat.
NO_HEARTBEAT: Final = "-"


class SilentLivelinessMonitor(LivelinessMonitor):
    """A liveliness monitor that keeps its findings to itself (no reports on the status topic)."""

    def _publish(self, health: NodeHealth) -> None:
        """A listing command reports to its user, not to the robot's status topic."""

    def _latch(self, table: NodeHealthTable) -> None:
        """Nor does it publish a table of verdicts: the robot's supervisors do."""


@dataclasses.dataclass(frozen=True, slots=True)
class NodeRow:
    """One line of ``node list``: ``state`` is OK, STALE, SHUTDOWN or ``-`` (no heartbeat);
    ``last_seen_s`` is the age of the last heartbeat (None: none received)."""

    name: str
    namespace: str
    state: str
    last_seen_s: float | None
    lifecycle: str
    publishers: int
    subscribers: int
    reason: str


def heartbeat_namespaces(topics: list[TopicInfo], extra: list[str]) -> list[str]:
    """Namespaces with a ``/<ns>/heartbeat`` Status topic in ``topics``, plus ``extra``."""
    found = [
        t.name[1 : -len("/heartbeat")]
        for t in topics
        if t.name.endswith("/heartbeat") and t.type_name == Status.TYPE_NAME
    ]
    return list(dict.fromkeys([*extra, *found]))


def state_text(health: NodeHealth) -> str:
    if health.shut_down:
        return "SHUTDOWN"
    return "STALE" if health.level is Level.STALE else "OK"


def _forward(changes: queue.SimpleQueue[Any], ns: str) -> Callable[[NodeHealth], None]:
    def put(health: NodeHealth) -> None:
        changes.put((ns, health))

    return put


class NodeWatch:
    """Monitors for every namespace on one bus; the table of what they and discovery know."""

    def __init__(self, bus: Bus, namespaces: list[str], changes: queue.SimpleQueue[Any]) -> None:
        self.bus = bus
        self.name = cli_node_name()
        self.nodes: list[Node] = []
        self.monitors: dict[str, LivelinessMonitor] = {}
        self.tables: dict[str, Subscriber[NodeHealthTable]] = {}
        """Per namespace, the supervisors' latched verdicts (``/<ns>/node_health``)."""
        self._latest_tables: dict[str, dict[str, NodeHealthTable]] = {}
        self.shown: dict[tuple[str, str], int] = {}
        """Per node (namespace, name), ``since_ns`` of the health decision :meth:`rows` showed."""
        try:
            for ns in namespaces:
                node = Node(self.name, bus, namespace=ns)
                self.nodes.append(node)
                self.monitors[ns] = SilentLivelinessMonitor(
                    node,
                    ignore={self.name},
                    on_change=_forward(changes, ns),
                )
                self.tables[ns] = bus.subscribe(
                    node.topic(NODE_HEALTH_TOPIC),
                    NodeHealthTable,
                    None,
                    LATCHED.with_(depth=16),
                    node=self.name,
                    namespace=ns,
                )
        except BaseException:
            self.close()
            raise

    def rows(self, endpoints: list[EndpointInfo], listened_s: float) -> list[NodeRow]:
        """Every node known from heartbeats and from ``endpoints`` (see the module docstring):
        one row per (namespace, name) — ``jointbus serve sim://arm6`` and ``serve sim://rover``
        both run an ``array_node``, in ``/arm6`` and ``/rover``."""
        by_node = _endpoints_by_node(e for e in endpoints if e.node and e.node != self.name)
        rows: dict[tuple[str, str], NodeRow] = {}
        for ns, monitor in self.monitors.items():
            now = monitor.node.clock()
            for name, health in monitor.current().items():
                key = (ns, name)
                self.shown[key] = health.since_ns
                own = by_node.get(key, [])
                rows[key] = NodeRow(
                    name,
                    ns,
                    state_text(health),
                    (now - health.last_seen_ns) / 1e9 if health.heartbeats else None,
                    health.lifecycle,
                    sum(e.kind == "publisher" for e in own),
                    sum(e.kind == "subscriber" for e in own),
                    health.reason,
                )
        for ns in self.monitors:
            for table in self.supervisor_tables(ns):
                for entry in table.nodes:
                    key = (ns, entry.name)
                    if key in rows or not entry.stale:
                        continue  # seen here (what this command sees wins), or alive there
                    own = by_node.get(key, [])
                    rows[key] = NodeRow(
                        entry.name,
                        ns,
                        "STALE",
                        _silent_now(table, entry),
                        entry.lifecycle,
                        sum(e.kind == "publisher" for e in own),
                        sum(e.kind == "subscriber" for e in own),
                        f"STALE per {table.reporting_node}: {entry.reason}",
                    )
        for key, own in by_node.items():
            if key in rows:
                continue
            beats = [
                e
                for e in own
                if e.kind == "publisher"
                and e.type_name == Status.TYPE_NAME
                and e.topic.endswith("/heartbeat")
            ]
            rows[key] = NodeRow(
                key[1],
                key[0],
                "STALE" if beats else NO_HEARTBEAT,
                None,
                "",
                sum(e.kind == "publisher" for e in own),
                sum(e.kind == "subscriber" for e in own),
                (
                    f"heartbeat publisher present but no heartbeat in {listened_s:.1f} s"
                    if beats
                    else "publishes no heartbeat (not a jointbus runtime node)"
                ),
            )
        return [rows[k] for k in sorted(rows, key=lambda k: (k[1], k[0]))]

    def supervisor_tables(self, namespace: str) -> list[NodeHealthTable]:
        """The newest latched verdict table of each supervisor in ``namespace``."""
        latest = self._latest_tables.setdefault(namespace, {})
        sub = self.tables.get(namespace)
        if sub is not None and not sub.closed:
            for table in sub.take_all():
                seen = latest.get(table.reporting_node)
                if seen is None or table.header.stamp.to_ns() >= seen.header.stamp.to_ns():
                    latest[table.reporting_node] = table
        return list(latest.values())

    def already_shown(self, health: NodeHealth, namespace: str) -> bool:
        """True when the table printed by :meth:`rows` already showed this change (or a later
        one) of ``health.name`` in ``namespace``."""
        shown = self.shown.get((namespace, health.name))
        return shown is not None and health.since_ns <= shown

    def close(self) -> None:
        """Stop the monitors and shut the CLI's nodes down."""
        for monitor in self.monitors.values():
            monitor.close()
        for sub in self.tables.values():
            sub.close()
        for node in self.nodes:
            node.shutdown()


def _silent_now(table: NodeHealthTable, entry: NodeHealthEntry) -> float | None:
    """Seconds since the node's last heartbeat now (:meth:`NodeHealthTable.silent_s_at`, wall
    clocks; None when no heartbeat was ever seen)."""
    silent_s = table.silent_s_at(entry, time.time_ns())
    return None if math.isnan(silent_s) else silent_s


def _heartbeat_namespace(e: EndpointInfo) -> str | None:
    """``arm6`` if ``e`` publishes a node's ``/arm6/heartbeat``, else ``None``."""
    if e.kind == "publisher" and e.type_name == Status.TYPE_NAME and e.topic.endswith("/heartbeat"):
        return e.topic[1 : -len("/heartbeat")]
    return None


def _endpoints_by_node(
    endpoints: Iterable[EndpointInfo],
) -> dict[tuple[str, str], list[EndpointInfo]]:
    """Endpoints grouped per node, keyed (namespace, name).

    Discovery names an endpoint's node but not its namespace (the tokens carry ``/``), so a node's
    namespace is that of its heartbeat topic: endpoints are grouped per Zenoh session and node
    name, and a group with heartbeats in several namespaces (one process running two namesakes)
    is split by topic prefix ``/<ns>/``; a group without a heartbeat keeps the endpoints' own
    namespace."""
    sessions: dict[tuple[str, str], list[EndpointInfo]] = {}
    for e in endpoints:
        sessions.setdefault((e.zid, e.node), []).append(e)
    out: dict[tuple[str, str], list[EndpointInfo]] = {}
    for (_zid, name), group in sessions.items():
        namespaces = list(dict.fromkeys(filter(None, map(_heartbeat_namespace, group))))
        for e in group:
            ns = next((n for n in namespaces if e.topic.startswith(f"/{n}/")), None)
            if ns is None:
                ns = namespaces[0] if namespaces else e.namespace.strip("/")
            out.setdefault((ns, name), []).append(e)
    return out


def lifecycle_text(row: NodeRow) -> str:
    """The LIFECYCLE cell: the state the node announced, ``active (last reported)`` when the
    node is STALE — a dead or hung node is in no live state; the table kept printing ``active``
    for a SIGKILLed control node (a new user's trial, 2026-12-06) — and ``-`` when none is
    known."""
    if not row.lifecycle:
        return "-"
    return f"{row.lifecycle} (last reported)" if row.state == "STALE" else row.lifecycle


def row_text(rows: list[NodeRow]) -> str:
    # The column is the heartbeat's, and says so: a user's trial (2026-12-06) read "LAST SEEN
    # never" for a ground-truth publisher sending 450 messages a second (it has no heartbeat).
    table = [["NODE", "NAMESPACE", "STATE", "LAST HEARTBEAT", "LIFECYCLE", "PUBS", "SUBS"]]
    for r in rows:
        seen = "none" if r.last_seen_s is None else f"{r.last_seen_s:.2f} s ago"
        table.append(
            [
                r.name,
                r.namespace or "-",
                r.state,
                seen,
                lifecycle_text(r),
                str(r.publishers),
                str(r.subscribers),
            ]
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in table
    )


def change_record(ns: str, health: NodeHealth) -> dict[str, Any]:
    return {
        "event": "change",
        "name": health.name,
        "namespace": ns,
        "state": state_text(health),
        "lifecycle": health.lifecycle,
        "reason": health.reason,
        "wall_time": time.time(),
    }


__all__ = [
    "NO_HEARTBEAT",
    "NodeRow",
    "NodeWatch",
    "SilentLivelinessMonitor",
    "change_record",
    "heartbeat_namespaces",
    "lifecycle_text",
    "row_text",
    "state_text",
]
