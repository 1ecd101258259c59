"""``jointbus node list``: the nodes on the network and whether their heartbeat is alive.

Where it sits: :mod:`jointbus.cli` (the top layer), registered as the ``node`` group of
:mod:`jointbus.cli.main`; it joins the bus as :mod:`jointbus.cli.topic` does (same options, same
no-flag default) and judges heartbeats with :class:`jointbus.runtime.LivelinessMonitor`, so the CLI
and the robot's own supervisors apply one rule: a node is **STALE** when no heartbeat came for
more than 1.5 s (or, over Zenoh, the moment its process leaves the network).

What is listed, one row per node — a (namespace, name) pair, as ROS 2 names nodes: two served
arrays both run an ``array_node``, in ``/arm6`` and ``/rover``, and are two rows, each with its
own endpoint counts:

- every node whose heartbeat arrives on ``/<ns>/heartbeat`` while the command listens (``--wait``,
  1.5 s by default, longer than the 1 s heartbeat period), for every namespace that discovery
  shows a heartbeat topic in (plus ``hb50`` and any ``--namespace``): state OK, the age of its
  last heartbeat and the lifecycle state it announces;
- every node that owns endpoints per discovery: one with a heartbeat publisher but no heartbeat
  during the wait is STALE (alive on the network, silent: a hung process); one without a
  heartbeat publisher is shown as ``-`` (a program that uses the bus without a runtime node);
- ``SHUTDOWN`` for a node that said goodbye (its farewell heartbeat) during the wait;
- every node a supervisor on the robot saw die: the bridge's liveliness monitor latches its
  verdicts on ``/<ns>/node_health`` (:mod:`jointbus.runtime.node_health`), so a node that died
  before this command started — no heartbeat, no token left to see — is listed STALE with the
  supervisor's reason (``STALE per bridge_node: …``) and the age of its last heartbeat, not
  left out. What this command sees itself wins: a node beating now is OK.

``--watch`` keeps listening after the table and prints one line per change (OK ↔ STALE, shutdown)
until Ctrl-C or ``--duration``. Every change the monitors publish is queued from the start and
compared with what the table showed (each node's health decision carries its time): a change the
table already shows is not repeated, and any other is printed — so a node that appears while the
table is being built (discovery takes up to a second) is listed exactly once, never lost between
the table and the watch. Nodes whose names start with ``_`` (CLI processes such as this
one) are hidden unless ``--all``.

The command judges but never speaks: its monitor does not publish the changes it sees on the
robot's status topic (a listing must not add reports to the robot's log); its own hidden node
only sends the heartbeat every node sends.
"""

from __future__ import annotations

import dataclasses
import json
import math
import queue
import sys
import time
from collections.abc import Callable, Iterable
from typing import Annotated, Any, Final

import typer

from jointbus.bus import DEFAULT_HUB_PORT, LATCHED, Bus, EndpointInfo, Subscriber, TopicInfo
from jointbus.cli.topic import (
    CliError,
    ConnectOption,
    DomainIdOption,
    HubPortOption,
    RmwOption,
    RouterOption,
    cli_node_name,
    looked_on,
    note,
    open_bus,
    user_errors,
    zenoh_config,
)
from jointbus.robots.hb50.messages import Level, Status
from jointbus.runtime import (
    DEFAULT_LIVELINESS_TIMEOUT_S,
    DEFAULT_NAMESPACE,
    NODE_HEALTH_TOPIC,
    LivelinessMonitor,
    Node,
    NodeError,
    NodeHealth,
    NodeHealthTable,
)

#: State shown for a node that owns endpoints but publishes no heartbeat.
NO_HEARTBEAT: Final = "-"

app = typer.Typer(
    help="Nodes on the network and their heartbeat state.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


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


def _state(health: NodeHealth) -> str:
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
                    _state(health),
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
                        _silent_now(table, entry.silent_s),
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


def _silent_now(table: NodeHealthTable, silent_s: float) -> float | None:
    """Seconds since the node's last heartbeat now: its silence at the table's stamp plus the
    table's age (wall clocks; None when no heartbeat was ever seen)."""
    if math.isnan(silent_s):
        return None
    return silent_s + max(0.0, (time.time_ns() - table.header.stamp.to_ns()) / 1e9)


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


def _row_text(rows: list[NodeRow]) -> str:
    table = [["NODE", "NAMESPACE", "STATE", "LAST SEEN", "LIFECYCLE", "PUBS", "SUBS"]]
    for r in rows:
        seen = "never" if r.last_seen_s is None else f"{r.last_seen_s:.2f} s ago"
        table.append(
            [
                r.name,
                r.namespace or "-",
                r.state,
                seen,
                r.lifecycle or "-",
                str(r.publishers),
                str(r.subscribers),
            ]
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in table
    )


def _change_record(ns: str, health: NodeHealth) -> dict[str, Any]:
    return {
        "event": "change",
        "name": health.name,
        "namespace": ns,
        "state": _state(health),
        "lifecycle": health.lifecycle,
        "reason": health.reason,
        "wall_time": time.time(),
    }


@app.command("list")
def list_nodes(  # noqa: PLR0917 (typer options)
    wait: Annotated[
        float,
        typer.Option("--wait", min=0.0, help="Seconds to listen for heartbeats before listing."),
    ] = DEFAULT_LIVELINESS_TIMEOUT_S,
    as_json: Annotated[
        bool, typer.Option("--json", help="JSON on stdout (--watch: one object per line).")
    ] = False,
    show_all: Annotated[
        bool, typer.Option("--all", "-a", help="Also hidden nodes (names starting with _).")
    ] = False,
    watch: Annotated[
        bool, typer.Option("--watch", "-w", help="Keep listening and print each change.")
    ] = False,
    duration: Annotated[
        float | None,
        typer.Option("--duration", min=0.0, help="With --watch: stop after this many seconds."),
    ] = None,
    namespace: Annotated[
        list[str] | None,
        typer.Option("--namespace", help="Also watch this heartbeat namespace (repeatable)."),
    ] = None,
    hub_port: HubPortOption = DEFAULT_HUB_PORT,
    connect: ConnectOption = None,
    router: RouterOption = None,
    domain_id: DomainIdOption = None,
    rmw: RmwOption = None,
) -> None:
    """Nodes with their heartbeat state (OK / STALE), last-seen age and lifecycle state."""
    with user_errors():
        started = time.monotonic()
        bus = open_bus(zenoh_config(hub_port, connect, router, domain_id=domain_id, rmw=rmw))
        changes: queue.SimpleQueue[Any] = queue.SimpleQueue()
        watcher: NodeWatch | None = None
        try:
            topics = bus.discover(1.0)
            namespaces = heartbeat_namespaces(topics, [DEFAULT_NAMESPACE, *(namespace or [])])
            try:
                watcher = NodeWatch(bus, namespaces, changes)
            except (NodeError, ValueError) as exc:
                raise CliError(str(exc)) from None
            time.sleep(wait)
            endpoints = [e for t in bus.discover(1.0) for e in (*t.publishers, *t.subscribers)]
            rows = [
                r
                for r in watcher.rows([e for e in endpoints if not e.local], wait)
                if show_all or not r.name.startswith("_")
            ]
            if as_json:
                payload = [dataclasses.asdict(r) for r in rows]
                typer.echo(
                    json.dumps(payload if not watch else {"event": "list", "nodes": payload})
                )
            elif rows:
                typer.echo(_row_text(rows))
            else:
                note(
                    f"no nodes found ({looked_on(bus)}; is a jointbus program running there? "
                    "see --hub-port / JOINTBUS_HUB_PORT, --connect, --router)"
                )
            sys.stdout.flush()
            if watch:
                end = None if duration is None else started + duration
                _watch(changes, watcher, show_all, as_json, end)
        finally:
            if watcher is not None:
                watcher.close()
            bus.close()


def _watch(
    changes: queue.SimpleQueue[Any],
    watcher: NodeWatch,
    show_all: bool,
    as_json: bool,
    end: float | None,
) -> None:
    while end is None or time.monotonic() < end:
        timeout = 0.2 if end is None else max(0.0, min(0.2, end - time.monotonic()))
        try:
            ns, health = changes.get(timeout=timeout)
        except queue.Empty:
            continue
        if (health.name.startswith("_") and not show_all) or watcher.already_shown(health, ns):
            continue
        if as_json:
            typer.echo(json.dumps(_change_record(ns, health)))
        else:
            stamp = time.strftime("%H:%M:%S")
            typer.echo(f"{stamp}  {_state(health):8}  {health.name}  {health.reason}")
        sys.stdout.flush()


__all__ = [
    "NO_HEARTBEAT",
    "NodeRow",
    "NodeWatch",
    "SilentLivelinessMonitor",
    "app",
    "heartbeat_namespaces",
]
