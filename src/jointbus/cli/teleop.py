"""``jointbus teleop``: drive the robot from the keyboard, as ROS's ``teleop_twist_keyboard`` does.

Where it sits: :mod:`jointbus.cli` (the top layer), registered as a command of
:mod:`jointbus.cli.main`; it joins the bus as the other CLI commands do (same options, the
``JOINTBUS_HUB_PORT`` default) and publishes the *normalised* ``geometry_msgs/msg/Twist`` that
``/<ns>/velocity_command`` carries (:mod:`jointbus.robots.hb50.messages.velocity_command`:
components in [-1, 1], ``linear.z`` the walking height as a fraction of the reference height).

The keys, the release timeout and the publishing thread are
:mod:`jointbus.tools.teleop_keys`'s (the monitor drives the robot with the same ones); this module
only reads keys from a raw terminal. While no key is held it keeps publishing the zero command at
``--rate`` Hz, as ``teleop_twist_keyboard`` does: its only job is teleoperation. The height is not
commanded (``linear.z = 0``) until ``t`` / ``b`` is pressed.

Quitting. Ctrl-C quits — the byte 0x03 from the raw terminal, or SIGINT (``kill -INT``); SIGTERM,
SIGHUP and a terminal closed under it quit the same way — and the way out always stops the
publishing thread and sends the zero command. Why the main thread waits on a signal wake-up pipe as
well as on the terminal: it used to sit in a blocking ``read()`` of the terminal. Python runs
signal handlers only in the main thread, but the kernel may hand a process-directed SIGINT to *any*
thread that does not block it, and this process has a dozen (Zenoh's runtime, the publishing
thread); when another thread took it, the main thread's ``read()`` was not interrupted, so the
KeyboardInterrupt waited for the next key while the robot kept receiving commands at ``--rate`` Hz.
With :func:`signal.set_wakeup_fd` the C-level handler writes the signal number to a pipe from
whichever thread it runs on, and :func:`select.select` on the terminal and that pipe wakes the main
thread at once. The quit signals' Python handlers do nothing (no KeyboardInterrupt), so no
exception can land between starting the publishing thread and entering the block that stops it, nor
in the middle of the zero commands.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
from collections.abc import Iterator
from types import FrameType
from typing import Annotated, Final, TextIO

import typer

from jointbus.cli.errors import CliError, note, user_errors
from jointbus.cli.options import DEFAULT_NAMESPACE, BusOptions, cli_node_name, joins_bus

__all__ = ["teleop"]

_CTRL_C: Final = b"\x03"
#: Signals that quit teleop like Ctrl-C (SIGHUP: its terminal was closed).
_QUIT_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def _raw_terminal(fd: int) -> Iterator[None]:
    """The terminal in raw mode (keys arrive one by one, unechoed; Ctrl-C arrives as a key, so
    the zero command on the way out is always sent) while the block runs; restored after it,
    unless the terminal is gone (closed under teleop: nothing left to restore)."""
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
        with contextlib.suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def _record_quit(_signum: int, _frame: FrameType | None) -> None:
    """A quit signal's Python-level handler: nothing to do here — the C-level handler has already
    written the signal number to the wake-up pipe, which the key loop reads. Not raising
    KeyboardInterrupt keeps the way out (stop the stream, zero command, restore the terminal)
    from being interrupted."""


@contextlib.contextmanager
def _quit_signals() -> Iterator[int]:
    """While the block runs, :data:`_QUIT_SIGNALS` only write their number to a pipe, whichever
    thread the kernel delivers them to; yields the pipe's read end (see the module docstring).
    Must run in the main thread (Python's rule for signal handlers)."""
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    os.set_blocking(write_end, False)
    previous_fd = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    previous = {sig: signal.signal(sig, _record_quit) for sig in _QUIT_SIGNALS}
    try:
        yield read_end
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        signal.set_wakeup_fd(previous_fd)
        os.close(read_end)
        os.close(write_end)


def _quit_requested(wakeup_fd: int) -> bool:
    """Drain the wake-up pipe; True if a quit signal came (other handled signals write too)."""
    numbers = b""
    with contextlib.suppress(BlockingIOError):
        while chunk := os.read(wakeup_fd, 64):
            numbers += chunk
    return any(number in numbers for number in _QUIT_SIGNALS)


#: How often the command line is redrawn when no key comes (s): a held key's release shows.
_REDRAW_S: Final = 0.1


class _CommandLine:
    """The command teleop sends now, redrawn in place on one terminal line (raw mode: ``\\r``
    returns to its start, ``ESC [K`` clears the rest); event lines go above it."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._shown = ""

    def _write(self, text: str) -> None:
        with contextlib.suppress(OSError):  # the terminal may be gone (closed under teleop)
            self._stream.write(text)
            self._stream.flush()

    def show(self, text: str) -> None:
        """Draw ``text`` as the command line (nothing is written if it did not change)."""
        if text != self._shown:
            self._shown = text
            self._write(f"\r{_COMMAND_PREFIX}{text}\x1b[K")

    def event(self, line: str) -> None:
        """Print ``line`` above the command line, which is drawn again below it."""
        shown, self._shown = self._shown, ""
        self._write(f"\r{line}\x1b[K\r\n")
        if shown:
            self.show(shown)

    def end(self) -> None:
        """Leave the command line as it is and move below it."""
        if self._shown:
            self._write("\r\n")
            self._shown = ""


#: How the command line starts.
_COMMAND_PREFIX: Final = "sending: "


def _not_for_the_terminal(_event: object) -> None:
    """teleop's publisher's QoS events (a reliable ``ros2 topic echo`` of the velocity command,
    another program's subscriber of another type) concern *that* subscriber, whose own process
    reports them; printed here they garbled the raw terminal and said nothing about the robot."""


def help_line() -> str:
    """The key help teleop prints when it starts."""
    from jointbus.tools.teleop_keys import KEY_HELP

    return f"jointbus teleop — {KEY_HELP}, Ctrl-C quit"


@joins_bus()
def teleop(
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
    *,
    bus_options: BusOptions,
) -> None:
    """Drive the robot with the keyboard: normalised /<ns>/velocity_command at --rate Hz.

    The line under the key help shows the command being sent, redrawn as it changes:
    forward, sideways and turn (normalised, of ±1), and the speed and turn scales and the
    height. linear.z is 0 (height not commanded, "height as is") until t/b is pressed.
    Ctrl-C (or SIGINT, SIGTERM, SIGHUP) quits at once and sends the zero command on the way out.
    """
    from jointbus.bus import MAB_RT
    from jointbus.messages.geometry_msgs import Twist
    from jointbus.tools.teleop_keys import TeleopKeys, TwistStream

    with user_errors():
        fd = sys.stdin.fileno()
        if not os.isatty(fd):
            raise CliError("teleop reads keys from a terminal; stdin is not one")
        keys = TeleopKeys(linear_scale=speed, angular_scale=turn, release=release)
        bus = bus_options.open_bus()
        try:
            pub = bus.publisher(
                f"/{namespace}/velocity_command",
                Twist,
                MAB_RT,
                node=cli_node_name(),
                on_event=_not_for_the_terminal,
            )
            note(help_line())
            status = _CommandLine(sys.stderr)
            with (
                _raw_terminal(fd),
                _quit_signals() as wakeup_fd,
                TwistStream(pub, keys, rate_hz=rate) as stream,
            ):
                try:
                    while True:  # the stream publishes on its own thread; this one reads keys
                        status.show(stream.describe())
                        ready, _, _ = select.select([fd, wakeup_fd], [], [], _REDRAW_S)
                        if wakeup_fd in ready and _quit_requested(wakeup_fd):
                            break  # leaving the block stops the stream and sends zero
                        if fd not in ready:
                            continue
                        try:
                            chunk = os.read(fd, 32)
                        except OSError:  # EIO: the terminal was closed under us — quit
                            break
                        if not chunk or _CTRL_C in chunk:
                            break
                        for key in chunk.decode(errors="ignore"):
                            line = stream.press(key)
                            if line is not None:
                                status.event(line)
                finally:
                    status.end()
        finally:
            bus.close()
