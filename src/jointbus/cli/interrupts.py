"""Ctrl-C and SIGTERM for the CLI's long-running commands: the first one stops, later ones wait.

Where it sits: :mod:`jointbus.cli`, used by the commands that run until stopped (``topic echo``,
``topic hz``, ``topic pub``, ``demo``, ``record``, ``play``, ``foxglove``); it imports only the
standard library and ``typer``.

Why: ``timeout``, ``make``, process managers and impatient users send more than one signal. Python
raises ``KeyboardInterrupt`` for every SIGINT (and these commands turn SIGTERM into one), so a
second signal landed in the middle of the shutdown the first one began and cut it short: a
recording's MCAP summary unwritten, or a stack whose buses closed while its bridge loop still ran
(a traceback at exit, the process killed by the third signal). Inside :func:`stop_on_interrupt`
the first SIGINT or SIGTERM raises ``KeyboardInterrupt`` as before; every later one only says, once,
that the command is already stopping — also after the block, since the command is then ending.
SIGKILL still ends it at once.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

import typer

__all__ = ["STOPPING_NOTE", "stop_on_interrupt"]

#: What a second Ctrl-C / SIGTERM prints (once) while the command shuts down.
STOPPING_NOTE = "jointbus: already stopping, waiting for a clean end (SIGKILL forces it)"

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def stop_on_interrupt() -> Iterator[None]:
    """The first SIGINT / SIGTERM raises ``KeyboardInterrupt``; later ones only print
    :data:`STOPPING_NOTE` once (see the module docstring). Without an interrupt the previous
    handlers are restored at the end; after one they stay replaced (the command is ending). Off
    the main thread (where Python cannot install handlers) it changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    interrupted = told = False

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        nonlocal interrupted, told
        if not interrupted:
            interrupted = True
            raise KeyboardInterrupt
        if not told:
            told = True
            typer.echo(STOPPING_NOTE, err=True)

    previous: dict[signal.Signals, Callable[[int, FrameType | None], Any] | int | None] = {
        sig: signal.signal(sig, on_signal) for sig in _SIGNALS
    }
    try:
        yield
    finally:
        # Once interrupted the command is ending: a signal that arrives after this block (while
        # the command prints its summary and Python exits) only notes too, instead of killing the
        # process that just stopped cleanly (exit code -15 after a complete recording).
        for sig, handler in () if interrupted else previous.items():
            # None: installed from C, not restorable from Python; the default is what it did.
            fallback = signal.default_int_handler if sig is signal.SIGINT else signal.SIG_DFL
            signal.signal(sig, handler if handler is not None else fallback)
