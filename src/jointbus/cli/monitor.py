"""``jointbus monitor``: the terminal monitor of a running robot.

Where it sits: :mod:`jointbus.cli`, a thin wrapper around :mod:`jointbus.tools.monitor`. This
process joins the jointbus Zenoh network (with no flags it finds a running demo on this host) and
shows, from the bridge's 10 Hz mirrors, heartbeats and status topic: one row per joint (position,
velocity, effort, temperature, decoded status flags), the nodes and their heartbeat state, the
command owner, e-stop and arming state, topic rates (every topic it can decode is counted; one
it does not receive says why) and the latest status events. On an array served by ``jointbus
serve`` (``--namespace`` its name) the joints come from its ``joint_state`` and
``actarray/data`` instead (position, velocity, effort, actuator state, motor power), with no
bridge lines: such a namespace has no bridge.

In a terminal it is a full-screen textual app (Ctrl+Q or Ctrl+C quits; Ctrl+E latches the robot's
e-stop at once: the session is already on the bus, unlike a new ``jointbus estop``) whose keys
also drive the robot as ``jointbus teleop`` does (``teleop_twist_keyboard``'s keys publish
``/<ns>/velocity_command`` while held, zero when released, on focus loss and on exit). When
stdout is not a terminal, or with ``--plain``, it prints a plain-text summary every
``--interval`` seconds instead; ``--once`` listens for ``--wait`` seconds, prints one summary and
exits (for scripts).
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from types import FrameType
from typing import Annotated

import typer

from jointbus.cli.errors import user_errors
from jointbus.cli.options import BusOptions, joins_bus

#: How often ``--once`` hands the model what arrived while it listens (s).
_ONCE_POLL_S = 0.1


def _raise_interrupt(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@joins_bus()
def monitor(  # noqa: PLR0917 (typer maps parameters to options)
    namespace: Annotated[str, typer.Option(help="Namespace of the robot's topics.")] = "hb50",
    once: Annotated[
        bool, typer.Option("--once", help="Print one plain-text summary after --wait s and exit.")
    ] = False,
    plain: Annotated[
        bool, typer.Option("--plain", help="Plain-text summaries instead of the full-screen UI.")
    ] = False,
    wait: Annotated[
        float, typer.Option(min=0.0, help="With --once: seconds to listen before printing.")
    ] = 2.0,
    interval: Annotated[
        float, typer.Option(min=0.1, help="Plain mode: seconds between two summaries.")
    ] = 1.0,
    duration: Annotated[float | None, typer.Option(help="Stop after this many seconds.")] = None,
    *,
    bus_options: BusOptions,
) -> None:
    """Show joints, bridge state, nodes, topic rates and events of a running robot.

    On an array served by `jointbus serve` (--namespace NAME), its joints, power and actuator
    states instead of the bridge's.

    Every published topic whose type is known is counted for its rate (messages - 1 over the
    span between the first and the last arrival), except one with a _10hz mirror (bridge_data:
    not received, to spare the bridge encoding it); a topic with no rate says why, a latched one
    reads 'latched'.

    In a terminal, teleop_twist_keyboard's keys (i forward, j/l turn, ...) drive
    /<ns>/velocity_command while held, as `jointbus teleop` does; Ctrl+Q quits.
    """
    from jointbus.robots.hb50.control import CONTROL_NODE_NAME  # RobotState's publisher
    from jointbus.tools.monitor import MonitorFeed, MonitorModel

    with user_errors():
        bus = bus_options.open_bus()
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        if not (once or plain) and sys.stdout.isatty():
            from jointbus.tools.monitor.app import run_monitor

            stop = threading.Event()
            # SIGTERM (e.g. from `jointbus demo` ending) closes the full-screen app cleanly.
            signal.signal(signal.SIGTERM, lambda _signum, _frame: stop.set())
            run_monitor(
                bus, namespace=namespace, duration=duration, stop=stop, state_node=CONTROL_NODE_NAME
            )
            return
        model = MonitorModel(state_node=CONTROL_NODE_NAME)
        # no keys here, so no e-stop: nothing announced a watch-only certificate may not do
        with MonitorFeed(
            bus, namespace=namespace, discover_period_s=min(2.0, wait or 2.0), estop=False
        ) as feed:
            if once:
                # Poll as the app does (10 Hz), not only at both ends: the topics discovery
                # finds meanwhile are counted from then on, and have a rate at the end.
                end = time.monotonic() + wait
                feed.poll(model)
                while (left := end - time.monotonic()) > 0:
                    time.sleep(min(_ONCE_POLL_S, left))
                    feed.poll(model)
                typer.echo(model.snapshot(time.monotonic_ns()).to_text())
                return
            deadline = None if duration is None else time.monotonic() + duration
            try:
                while deadline is None or time.monotonic() < deadline:
                    time.sleep(interval)
                    feed.poll(model)
                    typer.echo(model.snapshot(time.monotonic_ns()).to_text())
                    typer.echo("")
            except KeyboardInterrupt:
                pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        bus.close()
