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
import queue
import sys
import time
from typing import TYPE_CHECKING, Annotated, Any, Final

import typer

from jointbus.cli.errors import CliError, note, user_errors
from jointbus.cli.options import (
    DEFAULT_NAMESPACE,
    BusOptions,
    joins_bus,
    looked_on,
    where_to_look,
)

if TYPE_CHECKING:
    from jointbus.cli.node_watch import NodeWatch

#: ``jointbus.runtime.DEFAULT_LIVELINESS_TIMEOUT_S``: how long ``node list`` listens by default
#: (s), spelled out so that declaring the option imports no runtime (a test compares them).
LISTEN_S: Final = 1.5

app = typer.Typer(
    help="Nodes on the network and their heartbeat state.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.command("list")
@joins_bus()
def list_nodes(  # noqa: PLR0917 (typer options)
    wait: Annotated[
        float,
        typer.Option("--wait", min=0.0, help="Seconds to listen for heartbeats before listing."),
    ] = LISTEN_S,
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
    *,
    bus_options: BusOptions,
) -> None:
    """Nodes with their heartbeat state (OK / STALE), last-seen age and lifecycle state.

    Exit 1 when no node runs where it looked (--json prints [] first); --watch goes on
    watching instead.
    """
    from jointbus.cli.node_watch import NodeWatch, heartbeat_namespaces, row_text
    from jointbus.runtime import NodeError

    with user_errors():
        started = time.monotonic()
        bus = bus_options.open_bus()
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
                typer.echo(row_text(rows))
            sys.stdout.flush()
            if not rows:
                nothing = (
                    f"no nodes found ({looked_on(bus)}; is a jointbus program running there? "
                    f"{where_to_look(bus)})"
                )
                if not watch:  # "nothing there" is exit 1, as for estop, mode, topic echo
                    raise CliError(nothing)
                note(nothing)
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
    from jointbus.cli.node_watch import change_record, state_text

    while end is None or time.monotonic() < end:
        timeout = 0.2 if end is None else max(0.0, min(0.2, end - time.monotonic()))
        try:
            ns, health = changes.get(timeout=timeout)
        except queue.Empty:
            continue
        if (health.name.startswith("_") and not show_all) or watcher.already_shown(health, ns):
            continue
        if as_json:
            typer.echo(json.dumps(change_record(ns, health)))
        else:
            stamp = time.strftime("%H:%M:%S")
            typer.echo(f"{stamp}  {state_text(health):8}  {health.name}  {health.reason}")
        sys.stdout.flush()


__all__ = ["LISTEN_S", "app"]
