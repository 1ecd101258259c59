"""``jointbus teleop``: drive the robot from the keyboard, as ROS's ``teleop_twist_keyboard`` does.

Where it sits: :mod:`jointbus.cli` (the top layer), registered as a command of
:mod:`jointbus.cli.main`; it joins the bus as the other CLI commands do (same options, the
``JOINTBUS_HUB_PORT`` default) and publishes the *normalised* ``geometry_msgs/msg/Twist`` that
``/<ns>/velocity_command`` carries (:mod:`jointbus.robots.hb50.messages.velocity_command`:
components in [-1, 1], ``linear.z`` the walking height as a fraction of the reference height).

The keys, the release timeout and the publishing thread are
:mod:`jointbus.tools.teleop_keys`'s (the monitor drives the robot with the same ones); this module
only reads keys from a raw terminal. Ctrl-C quits (a zero command is sent on the way out). While no
key is held it keeps publishing the zero command at ``--rate`` Hz, as ``teleop_twist_keyboard``
does: its only job is teleoperation.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Annotated, Final

import typer

from jointbus.bus import DEFAULT_HUB_PORT, MAB_RT
from jointbus.cli.topic import (
    CliError,
    ConnectOption,
    DomainIdOption,
    HubPortOption,
    RouterOption,
    cli_node_name,
    note,
    open_bus,
    user_errors,
    zenoh_config,
)
from jointbus.messages.geometry_msgs import Twist
from jointbus.runtime import DEFAULT_NAMESPACE
from jointbus.tools.teleop_keys import KEY_HELP, TeleopKeys, TwistStream

__all__ = ["teleop"]

_CTRL_C: Final = "\x03"


@contextlib.contextmanager
def _raw_terminal(fd: int) -> Iterator[None]:
    """The terminal in raw mode (keys arrive one by one, unechoed; Ctrl-C arrives as a key, so
    the zero command on the way out is always sent) while the block runs."""
    import termios
    import tty

    if not os.isatty(fd):
        yield
        return
    saved = termios.tcgetattr(fd)
    try:
        tty.setraw(fd)
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


HELP: Final = f"jointbus teleop — {KEY_HELP}, Ctrl-C quit"


def teleop(  # noqa: PLR0917 (typer maps parameters to options)
    rate: Annotated[
        float, typer.Option("--rate", min=10.0, max=200.0, help="Publishing rate, Hz.")
    ] = 20.0,
    speed: Annotated[
        float, typer.Option("--speed", min=0.0, max=1.0, help="Initial linear scale (of ±1).")
    ] = 0.5,
    turn: Annotated[
        float, typer.Option("--turn", min=0.0, max=1.0, help="Initial turning scale (of ±1).")
    ] = 0.5,
    release: Annotated[
        float,
        typer.Option(
            "--release", min=0.05, max=5.0, help="Seconds without a key after which it is released."
        ),
    ] = 0.6,
    namespace: Annotated[
        str, typer.Option("--namespace", help="Robot namespace.")
    ] = DEFAULT_NAMESPACE,
    hub_port: HubPortOption = DEFAULT_HUB_PORT,
    connect: ConnectOption = None,
    router: RouterOption = None,
    domain_id: DomainIdOption = None,
) -> None:
    """Drive the robot with the keyboard: normalised /<ns>/velocity_command at --rate Hz."""
    with user_errors():
        fd = sys.stdin.fileno()
        if not os.isatty(fd):
            raise CliError("teleop reads keys from a terminal; stdin is not one")
        keys = TeleopKeys(linear_scale=speed, angular_scale=turn, release=release)
        bus = open_bus(zenoh_config(hub_port, connect, router, domain_id=domain_id))
        try:
            pub = bus.publisher(
                f"/{namespace}/velocity_command", Twist, MAB_RT, node=cli_node_name()
            )
            note(HELP)
            with _raw_terminal(fd), TwistStream(pub, keys, rate_hz=rate) as stream:
                while True:  # the stream publishes on its own thread; this one reads keys
                    chunk = os.read(fd, 32).decode(errors="ignore")
                    if not chunk or _CTRL_C in chunk:
                        break  # leaving the block sends the zero command
                    for key in chunk:
                        line = stream.press(key)
                        if line is not None:
                            note(line + "\r")
        finally:
            bus.close()
