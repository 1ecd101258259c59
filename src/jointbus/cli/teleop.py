"""``jointbus teleop``: drive the robot from the keyboard, as ROS's ``teleop_twist_keyboard`` does.

Where it sits: :mod:`jointbus.cli` (the top layer), registered as a command of
:mod:`jointbus.cli.main`; it joins the bus as the other CLI commands do (same options, the
``JOINTBUS_HUB_PORT`` default) and publishes the *normalised* ``geometry_msgs/msg/Twist`` that
``/<ns>/velocity_command`` carries (:mod:`jointbus.messages.hb50.velocity_command`: components in
[-1, 1], ``linear.z`` the walking height as a fraction of the reference height).

Keys (``teleop_twist_keyboard``'s layout; capitals strafe instead of turning)::

    u  i  o        U  I  O        i / ,   forward / back
    j  k  l        J  K  L        j / l   turn left / right (J / L: sideways)
    m  ,  .        M  <  >        u o m . forward or back while turning (or strafing)
                                  k       stop
    q / z  all speeds ×1.1 / ×0.9     w / x  linear only     e / c  turning only
    t / b  walking height up / down (fraction of the reference height, 0.05 to 1)
    Ctrl-C quit (a zero command is sent on the way out)

Why a *release* timeout: a terminal reports key presses, never releases. A held key repeats
(typically after 0.25–0.5 s, then ≈ 30 times a second), so when no key came for ``--release``
seconds (default 0.6 s) the key counts as released and the command drops to zero — the robot stops
when you let go, as ``teleop_twist_keyboard`` does with its ``key_timeout``. The command is
republished at ``--rate`` Hz (default 20, at least 10) whether or not a key arrived, so the control
node's command timeout never mistakes a held key for a dead joystick.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
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
from jointbus.messages.geometry_msgs import Twist, Vector3
from jointbus.runtime import DEFAULT_NAMESPACE

__all__ = ["MOVE_KEYS", "SPEED_KEYS", "TeleopKeys", "teleop"]

#: key → (forward, sideways, turn), each −1, 0 or 1 (teleop_twist_keyboard's table).
MOVE_KEYS: Final[dict[str, tuple[int, int, int]]] = {
    "i": (1, 0, 0),
    "o": (1, 0, -1),
    "j": (0, 0, 1),
    "l": (0, 0, -1),
    "u": (1, 0, 1),
    ",": (-1, 0, 0),
    ".": (-1, 0, 1),
    "m": (-1, 0, -1),
    "O": (1, -1, 0),
    "I": (1, 0, 0),
    "J": (0, 1, 0),
    "L": (0, -1, 0),
    "U": (1, 1, 0),
    "<": (-1, 0, 0),
    ">": (-1, -1, 0),
    "M": (-1, 1, 0),
}
#: key → (factor on the linear scale, factor on the turning scale).
SPEED_KEYS: Final[dict[str, tuple[float, float]]] = {
    "q": (1.1, 1.1),
    "z": (0.9, 0.9),
    "w": (1.1, 1.0),
    "x": (0.9, 1.0),
    "e": (1.0, 1.1),
    "c": (1.0, 0.9),
}
#: Height-fraction step of ``t`` / ``b``.
HEIGHT_STEP: Final = 0.05
_CTRL_C: Final = "\x03"


@dataclass
class TeleopKeys:
    """The keyboard state: scales (normalised, 0 … 1), the held motion and the height fraction.

    :meth:`press` takes one key at time ``now`` (s), :meth:`twist` is the command at time ``now``
    (zero motion once ``release`` s passed without a key).
    """

    linear_scale: float = 0.5
    angular_scale: float = 0.5
    height: float = 1.0
    release: float = 0.6
    _motion: tuple[int, int, int] = (0, 0, 0)
    _last_key: float = -math.inf

    def press(self, key: str, now: float) -> str | None:
        """Apply ``key``; returns a line for the user when a scale or the height changed."""
        if key in MOVE_KEYS:
            self._motion = MOVE_KEYS[key]
            self._last_key = now
            return None
        if key in SPEED_KEYS:
            lin, ang = SPEED_KEYS[key]
            self.linear_scale = min(1.0, self.linear_scale * lin)
            self.angular_scale = min(1.0, self.angular_scale * ang)
            return f"speed {self.linear_scale:.2f}  turn {self.angular_scale:.2f}"
        if key in ("t", "b"):
            step = HEIGHT_STEP if key == "t" else -HEIGHT_STEP
            # never 0: on /velocity_command z = 0 means "height not commanded" (the robot keeps
            # its height), so the lowest key step is HEIGHT_STEP (the robot clamps it safely)
            self.height = min(1.0, max(HEIGHT_STEP, round(self.height + step, 6)))
            return f"height {self.height:.2f} of the reference"
        self._motion = (0, 0, 0)  # k, space, anything else: stop
        return None

    def twist(self, now: float) -> Twist:
        """The normalised velocity command now."""
        fwd, side, turn = self._motion if now - self._last_key <= self.release else (0, 0, 0)
        return Twist(
            Vector3(fwd * self.linear_scale, side * self.linear_scale, self.height),
            Vector3(0.0, 0.0, turn * self.angular_scale),
        )

    def stop(self) -> Twist:
        """A zero command at the current height (sent on exit)."""
        self._motion = (0, 0, 0)
        return Twist(Vector3(0.0, 0.0, self.height), Vector3())


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


HELP: Final = (
    "jointbus teleop — u i o / j k l / m , . move (capitals strafe), k stop, "
    "q/z speed, w/x linear, e/c turn, t/b height, Ctrl-C quit"
)


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
            period = 1.0 / rate
            next_send = time.monotonic()
            with _raw_terminal(fd):
                try:
                    while True:
                        now = time.monotonic()
                        wait = max(0.0, next_send - now)
                        ready, _, _ = select.select([fd], [], [], wait)
                        if ready:
                            chunk = os.read(fd, 32).decode(errors="ignore")
                            if not chunk or _CTRL_C in chunk:
                                break
                            for key in chunk:
                                line = keys.press(key, time.monotonic())
                                if line is not None:
                                    note(line + "\r")
                        now = time.monotonic()
                        if now >= next_send:
                            pub.publish(keys.twist(now))
                            next_send += period
                            if next_send < now:  # fell behind (a stalled terminal): no burst
                                next_send = now + period
                finally:
                    zero = keys.stop()
                    for _ in range(3):  # best effort QoS: more than once
                        pub.publish(zero)
                        time.sleep(period)
        finally:
            bus.close()
