"""``jointbus ros2``: what a ROS 2 machine needs to work with a jointbus robot.

Where it sits: the top layer (:mod:`jointbus.cli`). jointbus speaks rmw_zenoh on the wire
(:mod:`jointbus.bus.zenoh_transport`), so a ROS 2 node on rmw_zenoh sees jointbus topics with no
bridge. What it cannot have without help is the *types* only jointbus defines (``hb50_commons``,
``jointbus_msgs``): ``export-msgs`` writes them as ROS 2 interface packages (``package.xml``,
``CMakeLists.txt``, ``msg/*.msg``, and the composed ``srv/*.srv`` of jointbus's services) from the
same ``.msg`` text whose RIHS01 hashes jointbus puts in its keys, so ``colcon build`` gives the
same hashes and ``ros2 topic echo /hb50/bridge_data`` decodes. ``graph`` lists the ROS 2 graph of
a domain — every node and topic, jointbus's and ROS 2's — as ``ros2 node list`` and ``ros2 topic
list -t`` would.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

import typer

from jointbus.cli.errors import CliError, user_errors
from jointbus.cli.options import BusOptions, joins_bus, looked_on

app = typer.Typer(
    help="ROS 2 interop: export message packages, see the graph.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.command("export-msgs")
def export_msgs(
    directory: Annotated[Path, typer.Argument(help="Where to write the packages (e.g. ~/ws/src).")],
    package: Annotated[
        list[str] | None,
        typer.Option("--package", "-p", help="Only this package (repeatable)."),
    ] = None,
    with_deps: Annotated[
        bool,
        typer.Option(
            "--with-deps",
            help="Also write the standard interfaces the robot sends (builtin_interfaces, "
            "std_msgs, geometry_msgs, sensor_msgs, nav_msgs, tf2_msgs: the types jointbus "
            "uses), for a client without ROS 2; a ROS 2 machine has them, do not build them "
            "there.",
        ),
    ] = False,
) -> None:
    """Write ROS 2 interface packages for the types only jointbus defines (hb50_commons,
    jointbus_msgs): package.xml, CMakeLists.txt, msg/*.msg and the services' srv/*.srv. Build them
    with colcon on the ROS 2 machine; their type hashes equal the ones jointbus puts on the wire.

    Each type is listed with its RIHS01 hash, the one in jointbus's Zenoh keys and tokens (a
    client that computes another one for the same name has another definition).
    """
    from jointbus.cli.interface_packages import (
        JOINTBUS_PACKAGES,
        export_packages,
        type_hashes,
        with_dependencies,
    )

    with user_errors():
        chosen = list(package or JOINTBUS_PACKAGES)
        if with_deps:
            chosen = with_dependencies(chosen)
        written = export_packages(directory, chosen)
        hashes = type_hashes(written)
        for name, types in written.items():
            services = sum("/srv/" in t for t in types)
            typer.echo(f"{directory / name}: {len(types) - services} messages, {services} services")
            for type_name in types:
                typer.echo(f"  {type_name}  {hashes[type_name]}")


def graph_rows(endpoints: Iterable[Any], nodes: Iterable[tuple[str, str]]) -> list[str]:
    """Text lines of the graph: nodes (``namespace`` joined with ``name``), then topics with
    their type, hash and publisher/subscriber counts."""
    lines = ["nodes:"]
    for namespace, name in sorted(set(nodes)):
        lines.append(f"  {namespace.rstrip('/')}/{name}")
    lines.append("topics:")
    by_topic: dict[tuple[str, str, str], list[int]] = {}
    for e in endpoints:
        counts = by_topic.setdefault((e.topic, e.type_name, e.type_hash), [0, 0])
        counts[0 if e.kind == "publisher" else 1] += 1
    for (topic, type_name, type_hash), (pubs, subs) in sorted(by_topic.items()):
        lines.append(f"  {topic} [{type_name}] {type_hash} ({pubs} pub, {subs} sub)")
    return lines


@app.command("graph")
@joins_bus()
def graph(
    timeout: Annotated[float, typer.Option(help="How long to collect tokens (s).")] = 1.0,
    *,
    bus_options: BusOptions,
) -> None:
    """List the ROS 2 graph of a domain — nodes and topics of jointbus and ROS 2 programs alike —
    from rmw_zenoh's liveliness tokens (what `ros2 node list` and `ros2 topic list -t` show).
    Malformed tokens are counted and logged, never fatal. Exit 1 when nothing runs there."""
    from jointbus.bus.discovery import EndpointInfo

    with user_errors():
        bus = bus_options.open_bus()
        try:
            transport = bus.transport
            if transport is None:
                raise CliError("no network transport")
            nodes: list[tuple[str, str]] = []
            endpoints: list[EndpointInfo] = []
            for entity in transport.graph(timeout):
                if entity.kind == "NN":
                    nodes.append((entity.namespace, entity.node))
                elif entity.kind in ("MP", "MS"):
                    endpoints.append(EndpointInfo.from_entity(entity))
            if not nodes and not endpoints:  # "nothing there" is exit 1, as for node list
                raise CliError(
                    f"no ROS 2 graph found ({looked_on(bus)}; is anything running there? "
                    "see --domain-id / ROS_DOMAIN_ID, --hub-port, --connect, --router)"
                )
            typer.echo(f"domain {transport.domain_id}")
            for line in graph_rows(endpoints, nodes):
                typer.echo(line)
        finally:
            bus.close()


__all__ = ["app", "graph_rows"]
