"""``jointbus service list | call``: see and call request/reply services from a terminal.

Where it sits: :mod:`jointbus.cli` (the top layer), registered as the ``service`` group of
:mod:`jointbus.cli.main`; it joins the bus exactly as ``jointbus topic`` does (same
``--hub-port`` / ``JOINTBUS_HUB_PORT``, ``--connect``, ``--router``; see :mod:`jointbus.cli.topic`)
and builds requests from YAML with :mod:`jointbus.cli.values`, like ``topic pub``.

``list`` prints one line per service; when it finds none it says so on stderr, with where it
looked (hub port, endpoints, domain), and exits 1 if nothing runs there at all (0 if the programs
running there offer no service). ``call`` waits up to ``--wait`` s for the
service to be discovered, takes its response type from the server's announcement, sends one
request and prints the response as JSON (one line). A refused request exits with code 2, so
scripts can tell a NACK (2) from a request that could not be built (an unknown type, bad VALUES)
or delivered (no such service, no answer), which exits 1; typer's usage errors (an unknown
option, an option value out of range) exit 2 as for every command. A request the service layer
refused prints ``refused: <reason>`` on stderr; an array's NACK (an
:class:`~jointbus.messages.actarray.reply.ActuatorReply` with ``accepted`` false) is still printed
as JSON on stdout — it names the joint, field, value and expectation — and ``refused: <REASON>:
<text>`` goes to stderr.
"""

from __future__ import annotations

import dataclasses
import json
import time
from typing import TYPE_CHECKING, Annotated, Final

import typer

from jointbus.cli.errors import CliError, note, user_errors
from jointbus.cli.options import BusOptions, joins_bus, looked_on, where_to_look

if TYPE_CHECKING:
    from jointbus.bus import Bus, ServiceInfo

#: Exit code of a call the server refused (a NACK), distinct from a request that could not be
#: built or delivered (1).
REFUSED_EXIT_CODE: Final = 2

app = typer.Typer(
    help="List request/reply services and call them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.command("list")
@joins_bus()
def list_services(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per service.")] = False,
    wait: Annotated[
        float, typer.Option("--wait", min=0.0, help="Seconds to wait for discovery answers.")
    ] = 0.5,
    *,
    bus_options: BusOptions,
) -> None:
    """List the services offered on the bus (jointbus's and ROS 2's): name, request -> response
    type (or the ROS 2 service type when its messages are unknown here), serving node.

    Exit 1 when nothing runs where it looked; 0 when programs run there that offer no service.
    """
    with user_errors():
        bus = bus_options.open_bus()
        try:
            time.sleep(min(wait, 0.2))  # let the session's links come up before asking
            services = _services(bus, max(wait, 0.05))
            looked = looked_on(bus)
            hint = where_to_look(bus)
            running = bool(services) or any(
                not e.local for t in bus.discover(0.3) for e in (*t.publishers, *t.subscribers)
            )
        finally:
            bus.close()
        if not running:  # "nothing there" is exit 1, as for estop, mode, topic echo
            raise CliError(
                f"no services found ({looked}, waited {wait:g} s): nothing runs there "
                f"({hint})"
            )
        if not services:
            note(f"no services found ({looked}, waited {wait:g} s): the running nodes offer none")
        for info in services:
            if as_json:
                typer.echo(
                    json.dumps(
                        {
                            "name": info.name,
                            "request_type": info.request_type,
                            "response_type": info.response_type,
                            "node": info.node,
                            "service_type": info.service_type,
                        }
                    )
                )
            else:
                node = info.node or "-"
                types = (
                    f"{info.request_type} -> {info.response_type}"
                    if info.request_type
                    else info.service_type  # a ROS 2 server of a pair this installation lacks
                )
                typer.echo(f"{info.name}  {types}  [{node}]")


def _with_types(info: ServiceInfo) -> ServiceInfo:
    """A remote server's record with its request/response types, found among the message types
    this installation knows whose composed service type is the announced one."""
    from jointbus.bus.service_types import service_type_name
    from jointbus.runtime.message_types import runtime_registry

    if info.request_type or not info.service_type:
        return info
    registry = runtime_registry()
    for request_name in registry:
        for response_name in registry:
            request, response = (registry.by_type_name(n) for n in (request_name, response_name))
            if service_type_name(request, response) == info.service_type:
                return dataclasses.replace(
                    info, request_type=request_name, response_type=response_name
                )
    return info


def _services(bus: Bus, timeout_s: float) -> list[ServiceInfo]:
    return [_with_types(info) for info in bus.services(timeout_s=timeout_s)]


def _find(services: list[ServiceInfo], name: str) -> ServiceInfo | None:
    return next((s for s in services if s.name == name), None)


@app.command("call")
@joins_bus()
def call(
    name: Annotated[
        str, typer.Argument(metavar="NAME", help="Service name, e.g. /arm6/actarray/power.")
    ],
    type_name: Annotated[
        str,
        typer.Argument(
            metavar="TYPE", help="Request type, e.g. jointbus_msgs/msg/ActuatorPowerRequest."
        ),
    ],
    values: Annotated[
        str,
        typer.Argument(
            metavar="VALUES",
            help="Request fields as YAML or JSON, e.g. '{\"on\": true}' (JSON: YAML 1.1 "
            "reads a bare on as true).",
        ),
    ] = "{}",
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.001, help="Seconds to wait for the answer.")
    ] = 2.0,
    wait: Annotated[
        float,
        typer.Option("--wait", min=0.0, help="Seconds to wait for the service to be discovered."),
    ] = 2.0,
    *,
    bus_options: BusOptions,
) -> None:
    """Call service NAME with a TYPE request built from VALUES; print the response as JSON.

    Example, while jointbus serve sim://arm6 runs:
      jointbus service call /arm6/actarray/power \\
        jointbus_msgs/msg/ActuatorPowerRequest '{"on": true}'

    Exit codes:
      0  answered (e.g. an ACK)
      2  refused: a NACK (an ActuatorReply with accepted false, still
         printed), or a request the server refused; the reason on stderr;
         also a usage error (an unknown option, an option value out of range)
      1  the request could not be built (an unknown type, bad VALUES) or
         delivered (no such service, no answer)
    """
    from jointbus.bus import ServiceError, ServiceRefused, validate_topic_name
    from jointbus.cli.render import render_json
    from jointbus.cli.topic import resolve_type
    from jointbus.cli.values import ValuesError, build_message, parse_values
    from jointbus.messages.actarray.reply import ActuatorReply

    with user_errors():
        validate_topic_name(name)
        request_type = resolve_type(type_name)
        parsed = parse_values(values)
        try:
            request = request_type.for_wire(build_message(request_type.facing, parsed))
        except ValuesError:
            raise
        except (ValueError, TypeError) as exc:  # the message's own validation, shown as is
            if request_type.facing is request_type.wire:
                raise CliError(str(exc)) from None
            # A typed actuator request knows the joint's index, not its name: the server checks
            # the plain record and its NACK names the joint (name and index), field and value.
            try:
                request = build_message(request_type.wire, parsed)
            except (ValueError, TypeError):
                raise CliError(str(exc)) from None
        bus = bus_options.open_bus()
        try:
            deadline = time.monotonic() + wait
            info = None
            while info is None:
                info = _find(_services(bus, 0.3), name)
                if info is None and time.monotonic() >= deadline:
                    known = ", ".join(s.name for s in bus.services(0.2)) or "none"
                    raise CliError(
                        f"no server offers service {name} (waited {wait:g} s; {looked_on(bus)}); "
                        f"known: {known}"
                    )
                if info is None:
                    time.sleep(0.1)
            if info.request_type != request_type.name:
                raise CliError(f"service {name} takes {info.request_type}, not {request_type.name}")
            response_type = resolve_type(info.response_type)
            client = bus.client(name, request_type.wire, response_type.wire, timeout_s=timeout)
            try:
                response = client.call(request)
            except ServiceRefused as exc:
                note(f"refused: {exc.reason}")
                raise typer.Exit(REFUSED_EXIT_CODE) from None
            except ServiceError as exc:
                raise CliError(str(exc)) from None
            typer.echo(render_json(response_type.for_display(response)))
            if isinstance(response, ActuatorReply) and not response.accepted:
                note(f"refused: {response.reason or 'no reason given'}: {response.text}")
                raise typer.Exit(REFUSED_EXIT_CODE)
        finally:
            bus.close()


__all__ = ["REFUSED_EXIT_CODE", "app"]
