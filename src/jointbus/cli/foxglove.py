"""``jointbus foxglove``: the live view — a Foxglove WebSocket server on 127.0.0.1:8765.

Where it sits: :mod:`jointbus.cli`, a thin wrapper around
:class:`jointbus.tools.foxglove_view.FoxgloveView`. This process joins the jointbus Zenoh network
like every other command (with no flags it finds a running demo on this host; ``--hub-port`` /
``JOINTBUS_HUB_PORT``, ``--connect`` / ``JOINTBUS_CONNECT``, ``--router`` / ``JOINTBUS_ROUTER``
reach another; ``--domain-id`` / ``ROS_DOMAIN_ID`` picks the ROS domain) and serves every topic, the
robot description (URDF generated from ``--robot``) and the joint transforms to Foxglove: open
Foxglove, choose *Open connection* → *Foxglove WebSocket* and enter the printed URL. The server
(foxglove-sdk) speaks the subprotocol ``foxglove.sdk.v1`` only: clients that offer only the older
name ``foxglove.websocket.v1`` get HTTP 400 (the README lists which clients work), and each such
refusal is one ``warning:`` line on stderr naming the subprotocols the server accepts (the HTTP
answer cannot). The ``Foxglove live view on ws://…`` line is printed on stdout the moment the port
listens, before the bus is first scanned. Ctrl-C (or SIGTERM, or ``--duration``) stops it.
"""

from __future__ import annotations

import contextlib
import sys
import time
from typing import Annotated, Final

import typer

from jointbus.cli.errors import note, user_errors
from jointbus.cli.interrupts import stop_on_interrupt
from jointbus.cli.options import BusOptions, joins_bus

#: ``jointbus.tools.foxglove_view``'s ``DEFAULT_HOST`` and ``DEFAULT_PORT``, spelled out so that
#: declaring the options loads no foxglove-sdk (``tests/cli/test_cli_options.py`` compares them).
DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 8765
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


@joins_bus()
def foxglove(
    port: Annotated[int, typer.Option(min=0, max=65535, help="WebSocket port (0: any free).")] = (
        DEFAULT_PORT
    ),
    host: Annotated[
        str, typer.Option(help="Address to bind. Anything but loopback exposes the robot's data.")
    ] = DEFAULT_HOST,
    robot: Annotated[
        str, typer.Option(help="Bundled robot name or robot file for the URDF ('' for none).")
    ] = "hb50",
    namespace: Annotated[str, typer.Option(help="Namespace of the bridge's topics.")] = "hb50",
    duration: Annotated[
        float | None, typer.Option(help="Stop after this many seconds (default: until Ctrl-C).")
    ] = None,
    *,
    bus_options: BusOptions,
) -> None:
    """Serve the bus and the robot model to Foxglove over WebSocket.

    Subprotocol foxglove.sdk.v1 (the Foxglove app, recent Lichtblick and Flora); clients that
    offer only foxglove.websocket.v1 are refused with HTTP 400, and each refusal is a warning
    here naming the subprotocols the server accepts. The "live view on ws://..." line is printed
    as soon as the port listens.
    """
    from rich.console import Console

    from jointbus.model import load_robot
    from jointbus.model.errors import ModelError
    from jointbus.tools.errors import ToolError
    from jointbus.tools.foxglove_view import ACCEPTED_SUBPROTOCOLS, FoxgloveView

    console = Console(stderr=True)
    try:
        model = load_robot(robot) if robot else None
    except (ModelError, OSError) as exc:
        console.print(f"[red]error:[/] cannot load robot {robot!r}: {exc}")
        raise typer.Exit(1) from exc
    if host not in _LOOPBACK:
        console.print(
            f"[yellow]warning:[/] binding {host}: any client that reaches this address can read "
            "every topic (the server has no authentication)"
        )
    with user_errors():
        bus = bus_options.open_bus()
    signals = contextlib.ExitStack()
    signals.enter_context(stop_on_interrupt())  # until the finally below
    try:
        def listening(url: str) -> None:  # as soon as the port listens, before the first scan
            typer.echo(
                f"Foxglove live view on {url} (Ctrl-C to stop; WebSocket subprotocol "
                f"{' or '.join(ACCEPTED_SUBPROTOCOLS)})"
            )
            sys.stdout.flush()

        def refused(text: str) -> None:
            note(f"{time.strftime('%H:%M:%S')} warning: {text}")

        try:
            view = FoxgloveView(
                bus,
                host=host,
                port=port,
                robot=model,
                namespace=namespace,
                on_listening=listening,
                on_client_refused=refused,
            )
        except ToolError as exc:
            console.print(f"[red]error:[/] {exc}")
            raise typer.Exit(1) from exc
        with view:
            deadline = None if duration is None else time.monotonic() + duration
            try:
                while deadline is None or (left := deadline - time.monotonic()) > 0:
                    time.sleep(0.2 if deadline is None else min(0.2, left))
            except KeyboardInterrupt:
                pass
            console.print(f"stopped; {len(view.topics())} topics were offered")
    finally:
        signals.close()
        bus.close()
