"""``jointbus router``: a Zenoh router for jointbus processes and ROS 2 nodes, from the package.

Where it sits: :mod:`jointbus.cli`, registered as the ``router`` command of
:mod:`jointbus.cli.main`. It opens one eclipse-zenoh session in *router* mode — the library
jointbus already depends on; neither ``zenohd`` nor ``rmw_zenohd`` installs from PyPI — with
``rmw_zenohd``'s ROS settings: multicast scouting off, gossip scouting on, timestamping on (which
the transient-local caches of rmw_zenoh and jointbus need).

**Where it listens.** On ``tcp/127.0.0.1:7447`` by default (``--port``, or ``JOINTBUS_HUB_PORT``
like the other commands): loopback only, so nothing off the host reaches it; the port is the one
``rmw_zenohd`` uses and the one the jointbus hub scheme looks at first. So with the router running,
every jointbus process on the host finds the port taken and joins the router (``jointbus demo``
says so in its first lines), and a ROS 2 node with ``RMW_IMPLEMENTATION=rmw_zenoh_cpp``, whose
default session connects to ``tcp/localhost:7447``, joins it too; the router routes between
them. ``--listen ENDPOINT`` replaces the loopback endpoint (``tcp/0.0.0.0:7447`` accepts other
hosts — then anyone on that network reaches the robot's topics; see docs/SECURITY.md), and
``--connect ENDPOINT`` links it to another router (the robot's, from a laptop). docs/ROS2.md
has the settings for both machines.

It prints one line on stdout when it listens (``Zenoh router listening on …``), then a line on
stderr each time the sessions linked to it change, and runs until Ctrl-C, SIGINT or SIGTERM
(handled explicitly, also when a script started it in the background) or ``--duration``.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
import types
from typing import Annotated, Any, Final

import typer

from jointbus.cli.errors import CliError, note, user_errors
from jointbus.cli.options import DEFAULT_HUB_PORT

#: Loopback addresses: a router bound to anything else is reachable from other hosts.
_LOOPBACK: Final = ("127.0.0.1", "[::1]", "localhost")
#: How often the linked sessions are looked at (s).
_POLL_S: Final = 0.5


def router_config_items(listen: list[str], connect: list[str]) -> list[tuple[str, str]]:
    """The ``zenoh.Config.insert_json5`` pairs of the router: router mode on ``listen``, linked
    to ``connect``, with ``rmw_zenohd``'s ROS settings (see the module docstring)."""
    return [
        ("mode", json.dumps("router")),
        ("listen/endpoints", json.dumps(listen)),
        ("connect/endpoints", json.dumps(connect)),
        ("scouting/multicast/enabled", "false"),
        ("scouting/gossip/enabled", "true"),
        ("timestamping/enabled", "true"),
        ("transport/shared_memory/enabled", "false"),
        # as the jointbus sessions do: a lost link to another router is retried within 0.5 s
        ("connect/retry", '{"period_init_ms": 100, "period_max_ms": 500, '
         '"period_increase_factor": 2}'),
    ]  # fmt: skip


def _sessions(session: Any) -> tuple[int, int]:
    info = session.info
    return sum(1 for _ in info.peers_zid()), sum(1 for _ in info.routers_zid())


def router(
    port: Annotated[
        int,
        typer.Option(
            "--port",
            envvar="JOINTBUS_HUB_PORT",
            min=1,
            max=65535,
            metavar="PORT",
            help="Loopback port to listen on: where jointbus processes (their hub port) and "
            "ROS 2 nodes on rmw_zenoh (7447) look first.",
        ),
    ] = DEFAULT_HUB_PORT,
    listen: Annotated[
        list[str] | None,
        typer.Option(
            "--listen",
            metavar="ENDPOINT",
            help="Listen here instead of tcp/127.0.0.1:PORT (repeatable); tcp/0.0.0.0:7447 "
            "accepts other hosts.",
        ),
    ] = None,
    connect: Annotated[
        list[str] | None,
        typer.Option(
            "--connect",
            envvar="JOINTBUS_CONNECT",
            metavar="ENDPOINT",
            help="Another router to link to, e.g. the robot's tcp/192.168.1.10:7447 "
            "(repeatable).",
        ),
    ] = None,
    duration: Annotated[
        float | None,
        typer.Option("--duration", min=0.001, help="Stop after SECONDS (default: until Ctrl-C)."),
    ] = None,
) -> None:
    """Run a Zenoh router (loopback by default) that jointbus processes and ROS 2 nodes on
    rmw_zenoh join."""
    import zenoh

    from jointbus.bus import ZenohConfig, ZenohConfigError

    with user_errors():
        endpoints = list(listen or [f"tcp/127.0.0.1:{port}"])
        links = list(connect or [])
        try:  # the same endpoint checks as every jointbus session's
            ZenohConfig(listen=tuple(endpoints), connect=tuple(links))
        except ZenohConfigError as exc:
            raise CliError(str(exc)) from None
        config = zenoh.Config()
        for key, value in router_config_items(endpoints, links):
            config.insert_json5(key, value)
        try:
            session = zenoh.open(config)
        except zenoh.ZError as exc:
            raise CliError(
                f"cannot listen on {', '.join(endpoints)}: {exc} (another router or jointbus "
                "hub holds the port? `jointbus router --port N` picks another)"
            ) from None
        stop = threading.Event()

        def on_signal(_signum: int, _frame: types.FrameType | None) -> None:
            stop.set()

        previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            exposed = [e for e in endpoints if not any(h in e for h in _LOOPBACK)]
            if exposed:
                note(
                    f"warning: listening on {', '.join(exposed)}: other hosts can reach it, and "
                    "through it every topic and service (docs/SECURITY.md: TLS, access control)"
                )
            typer.echo(
                f"Zenoh router listening on {', '.join(endpoints)} (zid {session.zid()})"
                + (f", linked to {', '.join(links)}" if links else "")
                + "; Ctrl-C stops"
            )
            sys.stdout.flush()
            seen = (0, 0)
            end = None if duration is None else time.monotonic() + duration
            while not stop.is_set():
                left = _POLL_S if end is None else end - time.monotonic()
                if left <= 0:
                    break
                stop.wait(min(_POLL_S, left))
                now = _sessions(session)
                if now != seen:
                    seen = now
                    note(f"{time.strftime('%H:%M:%S')} sessions: {now[0]} peers, {now[1]} routers")
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            session.close()  # type: ignore[no-untyped-call]
            note("router stopped")


__all__ = ["router", "router_config_items"]
