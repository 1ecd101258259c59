"""The ``jointbus`` command line.

Where it sits: the top layer (:mod:`jointbus.cli`); it may import every other layer. Each command
(or command group) lives in its own module, named in :data:`COMMANDS` with its one-line help.

**Why a command's module is imported only when that command runs.** ``jointbus estop`` is a safety
command and ``jointbus topic pub`` is typed between two velocity segments: importing every command
module (the nodes, the simulator, every robot's message types, numpy, Zenoh) made ``jointbus
--help`` cost 1.4–2.0 s of CPU and ``estop`` 3.5–3.9 s under load. So:

- ``jointbus`` and ``jointbus --help`` list the commands from :data:`COMMANDS` and import none of
  them (``tests/cli/test_cli_main.py`` checks that each one-line help here is the command's own);
- ``jointbus CMD ...`` imports ``CMD``'s module alone, and a command module imports at module level
  only the standard library, ``typer`` and the light :mod:`jointbus.cli.options` /
  :mod:`jointbus.cli.errors`: what a command *runs on* (``jointbus.bus``, numpy, Zenoh, MuJoCo,
  rosbags, textual) is imported inside the command function, so ``jointbus CMD --help`` loads none
  of it either (``tests/cli/test_cli_main.py`` runs every command's ``--help`` and lists what it
  imported).

**How a command declares its options.** In its own function signature, with typer's
``Annotated[type, typer.Option(...)]``; a command that joins the bus adds ``@joins_bus()`` and a
``bus_options: BusOptions`` parameter, and takes the shared bus options from
:class:`jointbus.cli.options.BusOptions` (adding one there adds it to every bus command). A new
command is one entry in :data:`COMMANDS`.

Help is click's plain layout (typer's Rich panels are off): rewrapped paragraphs, a flag shows no
type, a valued option its metavar (``--hub-port PORT``).
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import logging
import signal
import sys
import threading
from typing import Any, Final

import typer
from typer._click.exceptions import UsageError
from typer.core import TyperGroup


@dataclasses.dataclass(frozen=True, slots=True)
class CommandEntry:
    """One ``jointbus`` command: the module and attribute that define it (a command function or
    a ``typer.Typer`` group) and the one-line help ``jointbus --help`` shows for it."""

    module: str
    attribute: str
    help: str


#: Every command, in the order ``jointbus --help`` lists them (``version`` is defined below).
COMMANDS: Final[dict[str, CommandEntry]] = {
    "demo": CommandEntry(
        "jointbus.cli.demo",
        "demo",
        "Run a simulated robot: hb50 stands up under its control node; arm6 and rover are served "
        "by the array node and moved.",
    ),
    "monitor": CommandEntry(
        "jointbus.cli.monitor",
        "monitor",
        "Show joints, bridge state, nodes, topic rates and events of a running robot.",
    ),
    "teleop": CommandEntry(
        "jointbus.cli.teleop",
        "teleop",
        "Drive the robot with the keyboard: normalised /<ns>/velocity_command at --rate Hz.",
    ),
    "estop": CommandEntry(
        "jointbus.cli.launch",
        "estop",
        "Latch the e-stop of whatever owns the actuators of --namespace and wait for it to "
        "confirm; --reset re-arms.",
    ),
    "mode": CommandEntry(
        "jointbus.cli.launch",
        "mode",
        "Send a motion command to the control node and print its answer.",
    ),
    "bridge": CommandEntry(
        "jointbus.cli.launch",
        "bridge",
        "Run the bridge node alone (its own process, over Zenoh): it owns the actuators.",
    ),
    "control": CommandEntry(
        "jointbus.cli.launch",
        "control",
        "Run the control node alone (its own process, over Zenoh); it stands the robot up.",
    ),
    "serve": CommandEntry(
        "jointbus.cli.serve",
        "serve",
        "Serve the actuator array at URL on the bus under /NAME (Player's server).",
    ),
    "router": CommandEntry(
        "jointbus.cli.router",
        "router",
        "Run a Zenoh router (loopback by default) that jointbus processes and ROS 2 nodes on "
        "rmw_zenoh join.",
    ),
    "topic": CommandEntry(
        "jointbus.cli.topic",
        "app",
        "List topics, print their messages, measure their rate, publish.",
    ),
    "node": CommandEntry(
        "jointbus.cli.node", "app", "Nodes on the network and their heartbeat state."
    ),
    "param": CommandEntry(
        "jointbus.cli.param", "app", "Read and change the live parameters of running nodes."
    ),
    "service": CommandEntry(
        "jointbus.cli.service", "app", "List request/reply services and call them."
    ),
    "security": CommandEntry(
        "jointbus.cli.security", "app", "Access rules for a robot on a TLS-only bus."
    ),
    "ros2": CommandEntry(
        "jointbus.cli.ros2", "app", "ROS 2 interop: export message packages, see the graph."
    ),
    "record": CommandEntry(
        "jointbus.cli.record",
        "record",
        "Record bus traffic to an MCAP file (ros2msg schemas, CDR, zstd chunks).",
    ),
    "play": CommandEntry(
        "jointbus.cli.play", "play", "Republish a bag onto the bus with the original timing."
    ),
    "info": CommandEntry(
        "jointbus.cli.info",
        "info",
        "Show what a bag holds: topics, types, message counts, rates, duration.",
    ),
    "plot": CommandEntry(
        "jointbus.cli.plot",
        "plot",
        "Plot message fields over time (e.g. commanded vs measured position per joint) to a PNG.",
    ),
    "foxglove": CommandEntry(
        "jointbus.cli.foxglove",
        "foxglove",
        "Serve the bus and the robot model to Foxglove over WebSocket.",
    ),
    "chaos": CommandEntry(
        "jointbus.cli.chaos",
        "chaos",
        "Run the chaos campaign: the walking hb50 under seeded, overlapping faults, its ground "
        "truth checked at every step.",
    ),
    "can-twin": CommandEntry(
        "jointbus.cli.can_twin",
        "can_twin",
        "Run simulated MIT-mode motors that answer a can:// URL, like the real ones would.",
    ),
}


def load_command(name: str) -> Any:
    """The click command (or group) of :data:`COMMANDS` ``name``: its module imported now.

    A module that fails to import is a bug and fails loudly, when its command is run (and in
    ``tests/cli/test_cli_main.py``, which loads every command)."""
    entry = COMMANDS[name]
    target = getattr(importlib.import_module(entry.module), entry.attribute)
    if isinstance(target, typer.Typer):
        target.rich_markup_mode = None  # plain help (see the module docstring)
        command: Any = typer.main.get_group(target)
    else:
        holder = typer.Typer(
            add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None
        )
        holder.command(name=name)(target)
        command = typer.main.get_command(holder)
    command.name = name
    _name_values(command)
    return command


def _name_values(command: Any) -> None:
    """Give every valued option without a metavar its name as one (``--reason REASON``, as
    argparse and ROS 2's tools write it) instead of typer's type label (``--reason <str>``)."""
    for param in getattr(command, "params", ()):
        if param.param_type_name == "option" and not param.is_flag and param.metavar is None:
            flag = max(param.opts, key=len).lstrip("-")  # --wait-matching -> WAIT_MATCHING
            param.metavar = flag.replace("-", "_").upper()
    for sub in getattr(command, "commands", {}).values():
        _name_values(sub)


class _LazyGroup(TyperGroup):
    """The root group: lists :data:`COMMANDS` from the table, loads one when it is invoked."""

    def list_commands(self, ctx: Any) -> list[str]:
        return [*self.commands, *(n for n in COMMANDS if n not in self.commands)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = self.commands.get(cmd_name)
        if command is None and cmd_name in COMMANDS:
            command = self.commands[cmd_name] = load_command(cmd_name)
        return command

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = [
            (name, COMMANDS[name].help if name in COMMANDS else self.commands[name].help or "")
            for name in self.list_commands(ctx)
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        try:
            return self._click_resolve_command(ctx, args)
        except UsageError as exc:
            close = difflib.get_close_matches(args[0], self.list_commands(ctx)) if args else []
            if close:
                exc.message = (
                    f"{exc.message.rstrip('.')}. Did you mean {', '.join(map(repr, close))}?"
                )
            raise


app = typer.Typer(
    name="jointbus",
    cls=_LazyGroup,
    help="State and command traffic for robot actuator arrays.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


@app.command("version")
def version() -> None:
    """Print the jointbus version."""
    from jointbus import __version__

    typer.echo(__version__)


@app.callback()
def _root() -> None:
    """State and command traffic for robot actuator arrays."""


def command_tree() -> Any:
    """The root click group with every command of :data:`COMMANDS` loaded, for what must walk
    them all (the tests); running one command never needs this."""
    root: Any = typer.main.get_command(app)
    for name in COMMANDS:
        root.get_command(None, name)
    return root


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit code.

    Warnings the libraries log are printed with time, level and logger name. Ctrl-C (SIGINT)
    stops every command, also one a script started in the background: such a
    process inherits SIGINT *ignored* (so that Ctrl-C in the script's terminal spares it), and
    Python then raises no KeyboardInterrupt, so ``kill -INT`` did nothing to ``jointbus serve
    ... &``. The default handler is installed explicitly (commands that stop cleanly on a signal
    install their own on top: ``serve``, ``record``, ``demo``, ``teleop``, ...).
    """
    # Library warnings (a QoS event of an endpoint nobody handles, the Foxglove SDK's errors)
    # as the status lines read: "12:03:04 WARNING jointbus.bus: …", not a bare message (Python's
    # last-resort output) that a user cannot tell from the command's own lines.
    logging.basicConfig(
        level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
    )  # fmt: skip
    ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    if ignored and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)
    args = sys.argv[1:] if argv is None else argv
    try:
        app(args=args, prog_name="jointbus")
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
