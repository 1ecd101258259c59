"""``jointbus param list | get | set``: read and tune the live parameters of running nodes.

Where it sits: :mod:`jointbus.cli` (the top layer), registered as the ``param`` group of
:mod:`jointbus.cli.main`. It joins the bus as :mod:`jointbus.cli.topic` does (same options, same
no-flag default, endpoints owned by the hidden node ``_jointbus_cli_<pid>``) and speaks the
protocol of :mod:`jointbus.runtime.parameters`:

- ``list [NODE]`` and ``get NODE NAME`` read the :class:`ParameterList` each node keeps latched on
  ``/<ns>/parameters``: the values shown are the ones the node holds, not the robot file's.
- ``set NODE NAME VALUE`` sends a :class:`ParameterUpdate` on ``/<ns>/config_update`` with a request
  id of its own and waits for the node's answer: the new value in the node's parameter list (and
  its OK status), or the ERROR status the node publishes for that request, whose text (the
  parameter, the value, the bounds and unit) is printed on stderr with exit code 1. The node is
  the only judge of a value: the CLI does not check bounds itself, so the refusal is also in the
  robot's status log.

``--namespace`` picks the topics' namespace (``hb50``). Errors are one ``error: ...`` line on stderr
and exit code 1.
"""

from __future__ import annotations

import json
from typing import Annotated, Final

import typer

from jointbus.cli.errors import CliError, note, user_errors
from jointbus.cli.options import DEFAULT_NAMESPACE, BusOptions, joins_bus, looked_on

#: How long ``list`` / ``get`` / ``set`` wait for nodes' parameter lists by default (s).
DEFAULT_WAIT_S: Final = 3.0
#: How long ``set`` waits for the node's answer by default (s).
DEFAULT_ANSWER_TIMEOUT_S: Final = 5.0

app = typer.Typer(
    help="Read and change the live parameters of running nodes.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

NamespaceOption = Annotated[
    str,
    typer.Option("--namespace", help="Namespace of the parameter topics (/<ns>/parameters)."),
]
WaitOption = Annotated[
    float,
    typer.Option("--wait", min=0.0, help="Seconds to wait for the nodes' parameter lists."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="JSON on stdout.")]


@app.command("list")
@joins_bus()
def list_parameters(
    node: Annotated[
        str | None, typer.Argument(metavar="[NODE]", help="Only this node's parameters.")
    ] = None,
    namespace: NamespaceOption = DEFAULT_NAMESPACE,
    wait: WaitOption = DEFAULT_WAIT_S,
    as_json: JsonOption = False,
    *,
    bus_options: BusOptions,
) -> None:
    """Every parameter of every node (or of NODE): value, unit, range, type, meaning.

    When nodes run in the namespace but none offers parameters (jointbus serve's array node has
    none: its settings are fixed at start) it says so on stderr, prints nothing (--json: []) and
    exits 0. When nothing runs there it exits 1 and says where it looked (hub port, domain).
    """
    from jointbus.cli.parameter_watch import (
        FIXED_SETTINGS,
        ParameterRow,
        ParameterWatch,
        node_list,
        range_text,
        row_json,
        table_text,
    )
    from jointbus.runtime.parameter_messages import ParameterKind

    with user_errors():
        bus = bus_options.open_bus()
        try:
            watch = ParameterWatch(bus, namespace)
            where = looked_on(bus)  # (a closed bus no longer knows its hub port)
            if node is not None:
                lists = {node: node_list(watch, node, wait)}
            else:
                lists = watch.wait_all(None, wait)
            rows = [
                ParameterRow.of(name, p) for name, msg in lists.items() for p in msg.parameters
            ]
            running = watch.running_nodes(0.5) if not rows else []
        finally:
            bus.close()
        if not rows and running:  # the truth: programs run there, and offer no parameters
            note(
                f"no parameters in /{namespace.strip('/')}: "
                + ("node " if len(running) == 1 else "nodes ")
                + ", ".join(running)
                + (" runs" if len(running) == 1 else " run")
                + f" there but offer{'s' if len(running) == 1 else ''} no live parameters "
                f"(nothing on {watch.parameters_topic}; {where}); {FIXED_SETTINGS}"
            )
            if as_json:
                typer.echo("[]")
            return
        if not rows:  # a "nothing there" error, as get / set: where it looked, exit 1
            raise CliError(
                f"no parameters on {watch.parameters_topic} within {wait:g} s "
                f"({where}; is a jointbus program running there? "
                "see --namespace / --hub-port)"
            )
        if as_json:
            typer.echo(json.dumps([row_json(r) for r in rows], ensure_ascii=False))
            return
        table = [["NODE", "NAME", "VALUE", "UNIT", "RANGE", "TYPE", "DESCRIPTION"]]
        for name, msg in lists.items():
            table.extend(
                [
                    name,
                    p.name,
                    p.value_text,
                    p.unit or "-",
                    range_text(p),
                    ParameterKind(p.type).name.lower(),
                    p.description,
                ]
                for p in msg.parameters
            )
        typer.echo(table_text(table))


@app.command("get")
@joins_bus()
def getparameter_named(
    node: Annotated[str, typer.Argument(metavar="NODE", help="Node name, e.g. bridge_node.")],
    name: Annotated[str, typer.Argument(metavar="NAME", help="Parameter name.")],
    namespace: NamespaceOption = DEFAULT_NAMESPACE,
    wait: WaitOption = DEFAULT_WAIT_S,
    as_json: JsonOption = False,
    *,
    bus_options: BusOptions,
) -> None:
    """Print the current value of parameter NAME of NODE (--json: with its declaration)."""
    from jointbus.cli.parameter_watch import (
        ParameterRow,
        ParameterWatch,
        node_list,
        parameter_named,
        row_json,
    )

    with user_errors():
        bus = bus_options.open_bus()
        try:
            params = node_list(ParameterWatch(bus, namespace), node, wait)
        finally:
            bus.close()
        param = parameter_named(params, name)
        if as_json:
            typer.echo(json.dumps(row_json(ParameterRow.of(node, param)), ensure_ascii=False))
        else:
            typer.echo(param.value_text)


@app.command("set")
@joins_bus()
def setparameter_named(  # noqa: PLR0917 (typer options)
    node: Annotated[str, typer.Argument(metavar="NODE", help="Node name, e.g. bridge_node.")],
    name: Annotated[str, typer.Argument(metavar="NAME", help="Parameter name.")],
    value: Annotated[
        str, typer.Argument(metavar="VALUE", help="New value: 0.5, 3, true (per its type).")
    ],
    namespace: NamespaceOption = DEFAULT_NAMESPACE,
    wait: WaitOption = DEFAULT_WAIT_S,
    timeout: Annotated[
        float,
        typer.Option("--timeout", min=0.0, help="Seconds to wait for the node's answer."),
    ] = DEFAULT_ANSWER_TIMEOUT_S,
    *,
    bus_options: BusOptions,
) -> None:
    """Set parameter NAME of NODE to VALUE; exit 1 with the node's reason if it refuses."""
    from jointbus.cli.parameter_watch import set_value

    with user_errors():
        bus = bus_options.open_bus()
        try:
            answer = set_value(bus, namespace, node, name, value, wait, timeout)
        finally:
            bus.close()
        typer.echo(answer)


__all__ = ["DEFAULT_ANSWER_TIMEOUT_S", "DEFAULT_WAIT_S", "app"]
