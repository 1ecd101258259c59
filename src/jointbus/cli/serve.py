"""``jointbus serve URL``: serve any actuator array on the bus (the array node in its own process).

Where it sits: :mod:`jointbus.cli` (the top layer), registered as the ``serve`` command of
:mod:`jointbus.cli.main`. It opens ``URL`` with :func:`jointbus.drivers.open`, runs an
:class:`~jointbus.nodes.array.ArrayNode` under ``/<name>/`` (default: :func:`default_namespace`,
the robot's name for a robot file, else the URL's host) and joins Zenoh like every bus command
(``--hub-port`` / ``JOINTBUS_HUB_PORT``, ``--connect``, ``--router``; see
:mod:`jointbus.cli.options`). Another process reaches the array with
``drivers.open("bus://<name>")``, ``jointbus service call /<name>/actarray/power ...`` or
``jointbus topic echo /<name>/joint_state``.

It prints one line on stdout when the array is served (``serving URL as /NAME at RATE Hz``), then
every WARN, ERROR and STALE report the node publishes on ``/NAME/status`` as one line on stderr
(``HH:MM:SS ERROR array_node: …``: a client's refused command, a watchdog, a joint switched off
for heat), as ``jointbus demo`` does, and runs until Ctrl-C (SIGINT), SIGTERM or ``--duration``
seconds. Both signals are handled explicitly, so ``kill -INT`` also stops a server started in
the background by a script (which inherits SIGINT ignored). On the way out it switches motor
power off where the driver supports it, then closes the driver. A second ``serve`` of the same
``/NAME`` on the same bus is refused before it opens anything (``error: node 'array_node' in
namespace /NAME already runs on the bus (hub port …)``, exit 1): two servers would answer one
name's clients.

A ``can://`` URL without ``period`` is served with ``period`` = the node's cycle (``1 / --rate``
s, 0.01 at the default 100 Hz), and the first line says so: the driver's limit guard looks one
``period`` ahead of each impedance or current command, and a command the node writes stands
until the next cycle — looking 2 ms (the driver's own default, for a 500 Hz loop) ahead of a
command that stands 10 ms lets a joint run 8 ms further towards its end than the guard allowed
for. A URL that gives ``period`` keeps it; when it differs from the node's cycle the first line
says that too. A firmware twin needs no period to match: it runs its physics by the monotonic
clock (:mod:`jointbus.drivers.can.twin_server`, "Time"). Until 2026-12-06 it stepped one period
per frame — a twin on the default 2 ms served at 100 Hz moved 5× slow with velocities read 5× too
high (a user's trial) — and this line told the user to start the twin with the node's period.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time
import types
from typing import Annotated, Final

import typer

from jointbus.cli.errors import CliError, note, user_errors
from jointbus.cli.options import BusOptions, joins_bus

#: The node that serves the array (one per namespace on a bus: a second server is refused).
SERVER_NODE: Final = "array_node"
#: Signals that stop the server cleanly (motor power off, driver closed).
_STOP_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM)
#: How often the node's WARN / ERROR / STALE reports are printed (s).
_REPORT_POLL_S: Final = 0.1


def url_at_rate(url: str, rate_hz: float) -> tuple[str, str]:
    """``url`` to open for a node cycling at ``rate_hz``, and what the first line adds about it
    (empty: nothing): a ``can://`` URL without ``period`` gets the node's cycle (module
    docstring); one whose ``period`` is not the node's cycle is named."""
    from jointbus import drivers

    try:
        parsed = drivers.DriverURL.parse(url)
    except ValueError:
        return url, ""  # drivers.open reports it
    if parsed.scheme != "can":
        return url, ""
    cycle = 1.0 / rate_hz
    given = parsed.option("period")
    if given is None:
        joined = f"{url}{'&' if '?' in url else '?'}period={cycle:g}"
        return joined, f" (period={cycle:g} s: the node's cycle, the limit guard's horizon)"
    try:
        period = float(given)
    except ValueError:
        return url, ""  # the driver names the bad value
    if abs(period - cycle) > 1e-9 * cycle:
        return url, (
            f" (note: period={period:g} s, but the node writes a command every {cycle:g} s: the"
            " limit guard looks one period ahead of each)"
        )
    return url, ""


def default_namespace(url: str) -> str:
    """The namespace ``serve URL`` uses without ``--name``: the robot's ``name`` when ``URL``
    opens a robot file (``sim://robots/arm3.yaml`` → ``arm3``), else the URL's host
    (``sim://arm6`` → ``arm6``, ``bus://arm6`` → ``arm6``, ``can://virtual/demo`` → ``virtual``).

    A default that is no valid namespace is a :class:`CliError` that says where the name came
    from and that ``--name`` overrides it, without blaming an option the user did not pass.
    """
    from jointbus import drivers
    from jointbus.drivers.bus.array_names import ArrayNames
    from jointbus.drivers.errors import DriverError
    from jointbus.drivers.sim.driver import robot_file_name

    try:
        parsed = drivers.DriverURL.parse(url)
        robot = robot_file_name(parsed)
    except (DriverError, ValueError) as exc:
        raise CliError(str(exc)) from None
    namespace, origin = (
        (robot, f"the robot's name in {url}")
        if robot is not None
        else (parsed.host, f"the host of URL {url}")
    )
    if not namespace:
        raise CliError(f"URL {url} names no array (no host); give the namespace with --name NS")
    try:
        ArrayNames(namespace)
    except ValueError as exc:
        raise CliError(
            f"the default namespace {namespace!r} ({origin}) is not a valid namespace: {exc}; "
            "give one with --name NS"
        ) from None
    return namespace


@joins_bus()
def serve(  # noqa: PLR0917 (typer maps parameters to options)
    url: Annotated[
        str,
        typer.Argument(
            metavar="URL",
            help="Actuator array: sim://arm6, sim://rover, sim://path/to/robot.yaml, can://...",
        ),
    ],
    name: Annotated[
        str | None,
        typer.Option(
            "--name",
            help="Namespace of the served array (default: the robot's name for a robot file, "
            "sim://path/arm3.yaml -> arm3; else the URL's host, sim://arm6 -> arm6).",
        ),
    ] = None,
    rate: Annotated[
        float,
        typer.Option("--rate", min=1.0, max=2000.0, help="Publishing and impedance rate (Hz)."),
    ] = 100.0,
    watchdog: Annotated[
        float,
        typer.Option("--watchdog", min=0.001, help="Impedance stream silence before damping (s)."),
    ] = 0.25,
    command_timeout: Annotated[
        float,
        typer.Option(
            "--command-timeout",
            min=0.001,
            help="A speed or current command not renewed within this time is brought to rest "
            "(s; position moves never expire).",
        ),
    ] = 0.25,
    allowed_source: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-source", help="Accept impedance commands only from this node (repeatable)."
        ),
    ] = None,
    duration: Annotated[
        float | None,
        typer.Option("--duration", min=0.001, help="Stop after SECONDS (default: until Ctrl-C)."),
    ] = None,
    *,
    bus_options: BusOptions,
) -> None:
    """Serve the actuator array at URL on the bus under /NAME (Player's server)."""
    stop = threading.Event()

    def on_signal(_signum: int, _frame: types.FrameType | None) -> None:
        stop.set()

    # Both installed explicitly (a process started in the background by a script inherits SIGINT
    # *ignored*, and Python then raises no KeyboardInterrupt for it), and first: a SIGTERM in the
    # 1-2 s of imports, bus and array opening killed the process (exit -15) with the array
    # possibly opened and powered, never powered off or closed. Now it stops the server at the
    # next step, and whatever was opened is closed.
    previous = {sig: signal.signal(sig, on_signal) for sig in _STOP_SIGNALS}
    try:
        _serve(
            url,
            name=name,
            rate=rate,
            watchdog=watchdog,
            command_timeout=command_timeout,
            allowed_source=allowed_source,
            duration=duration,
            bus_options=bus_options,
            stop=stop,
        )
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _serve(
    url: str,
    *,
    name: str | None,
    rate: float,
    watchdog: float,
    command_timeout: float,
    allowed_source: list[str] | None,
    duration: float | None,
    bus_options: BusOptions,
    stop: threading.Event,
) -> None:
    """:func:`serve` with its stop signals installed (``stop``: set by the first one)."""
    from jointbus import drivers
    from jointbus.cli.status_lines import StatusLines
    from jointbus.drivers.bus.array_names import ArrayNames
    from jointbus.drivers.capabilities import Capability
    from jointbus.drivers.errors import DriverError
    from jointbus.nodes.array import ArrayNode, ArrayNodeConfig
    from jointbus.runtime import ensure_unique_node

    with user_errors():
        try:
            settings = ArrayNodeConfig(
                rate_hz=rate,
                watchdog_s=watchdog,
                command_timeout_s=command_timeout,
                allowed_sources=tuple(allowed_source) if allowed_source else None,
            )
        except ValueError as exc:
            raise CliError(str(exc)) from None
        if name is not None:
            namespace = name
            try:
                ArrayNames(namespace)
            except ValueError as exc:
                raise CliError(f"--name {namespace!r}: {exc}") from None
        else:
            namespace = default_namespace(url)
        if stop.is_set():
            note("stopped before serving: nothing was opened")
            return
        bus = bus_options.open_bus()
        try:
            # Before the array is opened: a refused second server must not touch (or, on its
            # way out, power off) the actuators a running one serves.
            ensure_unique_node(bus, SERVER_NODE, namespace)
            opened_url, about_period = url_at_rate(url, rate)
            if stop.is_set():
                note("stopped before serving: the array was not opened")
                return
            try:
                array = drivers.open(opened_url)
            except (DriverError, ValueError) as exc:
                raise CliError(str(exc)) from None
            served = False
            try:
                if stop.is_set():  # stopped while the array opened: power it off and close it
                    return
                served = True
                node = ArrayNode(array, bus, namespace=namespace, config=settings, name=SERVER_NODE)
                reports = StatusLines(bus, node.status_topic)
                node.start()
                typer.echo(f"serving {url} as /{namespace} at {rate:g} Hz{about_period}")
                sys.stdout.flush()
                end = None if duration is None else time.monotonic() + duration
                while not stop.is_set():
                    left = _REPORT_POLL_S if end is None else end - time.monotonic()
                    if left <= 0:
                        break
                    stop.wait(min(_REPORT_POLL_S, left))
                    reports.print_pending()
                node.shutdown()
                reports.print_pending()
            finally:
                with contextlib.suppress(DriverError):
                    if Capability.POWER in array.capabilities():
                        array.power(False)
                array.close()
                note(
                    f"stopped serving /{namespace}"
                    if served
                    else "stopped before serving: the array was powered off and closed"
                )
        finally:
            bus.close()


__all__ = ["SERVER_NODE", "default_namespace", "serve", "url_at_rate"]
