"""Helpers of the tools' CLI tests: a typer app holding only the commands under test.

Part of :mod:`support`. ``jointbus.cli.main`` registers the same functions.
"""

from __future__ import annotations

import socket

import typer

from jointbus.cli.info import info
from jointbus.cli.play import play
from jointbus.cli.plot import plot
from jointbus.cli.record import record


def tools_app() -> typer.Typer:
    """``record``, ``play``, ``info`` and ``plot`` as ``jointbus`` registers them."""
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    for name, fn in (("record", record), ("play", play), ("info", info), ("plot", plot)):
        app.command(name)(fn)
    return app


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
