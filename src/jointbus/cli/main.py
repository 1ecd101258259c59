"""The ``jointbus`` command line.

Where it sits: the top layer (:mod:`jointbus.cli`); it may import every other layer. Each command
group lives in its own module, listed in the two tables below; those modules import their heavy
dependencies (Zenoh, MuJoCo, textual) inside the command functions.

Why only the command asked for is imported: ``jointbus estop`` is a safety command, and importing
every command module (the nodes, the simulator, every robot's message types) made it take 1.9–25 s
to start on a loaded host. ``jointbus CMD ...`` imports only ``CMD``'s module; ``jointbus``,
``--help`` or an unknown command imports them all (the help lists every command, and a usage error
lists what exists). A module that fails to import still fails loudly — when its command is run,
and in ``tests/cli/test_cli_main.py``, which imports every registration. Every command with the
shared bus options gets the security options on registration (:mod:`jointbus.cli.bus_security`).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable, Sequence

import typer

from jointbus.cli.bus_security import with_bus_security

app = typer.Typer(
    name="jointbus",
    help="State and command traffic for robot actuator arrays.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# group name -> (module, attribute holding a typer.Typer, help)
_GROUPS: dict[str, tuple[str, str, str]] = {
    "topic": ("jointbus.cli.topic", "app", "List, echo, measure and publish topics."),
    "node": ("jointbus.cli.node", "app", "List nodes and their heartbeat state."),
    "param": ("jointbus.cli.param", "app", "List, read and change live node parameters."),
    "ros2": ("jointbus.cli.ros2", "app", "ROS 2 interop: export messages, see the graph."),
    "service": ("jointbus.cli.service", "app", "List request/reply services and call them."),
    "security": ("jointbus.cli.security", "app", "Access rules for a robot on a TLS-only bus."),
}
# command name -> (module, attribute holding a function)
_COMMANDS: dict[str, tuple[str, str]] = {
    "record": ("jointbus.cli.record", "record"),
    "play": ("jointbus.cli.play", "play"),
    "info": ("jointbus.cli.info", "info"),
    "plot": ("jointbus.cli.plot", "plot"),
    "foxglove": ("jointbus.cli.foxglove", "foxglove"),
    "monitor": ("jointbus.cli.monitor", "monitor"),
    "demo": ("jointbus.cli.demo", "demo"),
    "bridge": ("jointbus.cli.launch", "bridge"),
    "control": ("jointbus.cli.launch", "control"),
    "estop": ("jointbus.cli.launch", "estop"),
    "mode": ("jointbus.cli.launch", "mode"),
    "serve": ("jointbus.cli.serve", "serve"),
    "teleop": ("jointbus.cli.teleop", "teleop"),
    "can-twin": ("jointbus.cli.can_twin", "can_twin"),
}


_registered: set[str] = set()


def _register(names: Iterable[str] | None = None) -> None:
    """Attach the commands ``names`` (``None``: every command), each once. A module that fails to
    import is a bug and fails loudly: a command that silently vanished from ``--help`` would be
    far harder to diagnose."""
    for name in [*_GROUPS, *_COMMANDS] if names is None else names:
        if name in _registered:
            continue
        _registered.add(name)
        if name in _GROUPS:
            module_name, attribute, help_text = _GROUPS[name]
            module = importlib.import_module(module_name)
            group = getattr(module, attribute)
            for command in group.registered_commands:
                if command.callback is not None:
                    command.callback = with_bus_security(command.callback)
            app.add_typer(group, name=name, help=help_text)
        else:
            module_name, attribute = _COMMANDS[name]
            module = importlib.import_module(module_name)
            app.command(name=name)(with_bus_security(getattr(module, attribute)))


def _commands_for(args: Sequence[str]) -> list[str] | None:
    """The commands ``args`` needs registered: the one it names, or ``None`` (all) for the help
    and for anything that is not a command name (typer then reports it with the full list)."""
    if args and (args[0] in _GROUPS or args[0] in _COMMANDS):
        return [args[0]]
    if args and args[0] == "version":
        return []
    return None


@app.command("version")
def version() -> None:
    """Print the jointbus version."""
    from jointbus import __version__

    typer.echo(__version__)


@app.callback()
def _root() -> None:
    """State and command traffic for robot actuator arrays."""


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit code."""
    args = sys.argv[1:] if argv is None else argv
    _register(_commands_for(args))
    try:
        app(args=args, prog_name="jointbus")
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
