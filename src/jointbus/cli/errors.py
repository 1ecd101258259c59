"""How a ``jointbus`` command fails: one ``error:`` line on stderr and an exit code, no traceback.

Where it sits: :mod:`jointbus.cli`, imported by every command module; standard library and
``typer`` only at module level, so that declaring a command costs nothing (see
:mod:`jointbus.cli.main`).

**Exit codes, one rule for every command.** 0: done (a listing that found what runs there, even
if that is nothing of the kind asked for — ``service list`` against nodes that offer no service);
1: the command could not do what was asked, and that includes **"nothing there"** — no node, topic,
service or robot answered where it looked (``estop``, ``mode``, ``topic echo``, ``topic list``,
``node list``, ``service list``, ``param``): the message says where it looked (hub port, domain),
so a script can tell "robot not running" from "done" by the code alone — and a value the command
itself checks and cannot use (a message type it does not know, ``topic pub`` / ``service call``
VALUES that are not YAML or name no field of the type, a ``--qos`` / ``--rmw`` / ``--connect`` it
does not know: :class:`CliError` and the library errors below, one ``error:`` line); 2: a usage
error, typer's (an unknown option, a missing argument, an option value not of its declared type or
range: ``Usage:`` and ``Error:`` lines), or a request the robot refused (``service call``'s NACK).
``chaos`` and ``can-twin`` also exit 2 for a ``--window``, fault option or URL they refuse before
anything runs. Ctrl-C and a closed stdout end a command
quietly with 0.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Final

import typer

#: The exit code of a command that could not do what was asked, "nothing there" included.
FAILED: Final = 1


class CliError(Exception):
    """A problem the user can fix: printed as one ``error:`` line on stderr, exit code 1."""


def note(text: str) -> None:
    """A remark for the user on stderr (stdout stays machine-readable)."""
    typer.echo(text, err=True)


def _user_error_types() -> tuple[type[BaseException], ...]:
    """The library errors that are the user's to fix (bad names, values, types; a node that
    already runs), shown as ``error:`` lines. Only modules a command already imported can have
    raised them, so nothing is imported here just to check."""
    found: list[type[BaseException]] = []
    for module_name, names in (
        ("jointbus.bus.errors", ("BusError",)),
        ("jointbus.cli.values", ("ValuesError",)),
        ("jointbus.messages.registry", ("UnknownTypeError",)),
        ("jointbus.runtime.node", ("DuplicateNodeError",)),
    ):
        module = sys.modules.get(module_name)
        for name in names:
            cls = getattr(module, name, None)
            if isinstance(cls, type) and issubclass(cls, BaseException):
                found.append(cls)
    return tuple(found)


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """Turn the errors a user can fix into ``error: ...`` on stderr and exit code 1, no traceback.

    Ctrl-C and a closed stdout (``| head``) end the command quietly with exit code 0.
    """
    try:
        yield
    except CliError as exc:
        note(f"error: {exc}")
        raise typer.Exit(FAILED) from None
    except KeyboardInterrupt:
        raise typer.Exit(0) from None
    except BrokenPipeError:
        # Python would complain again when flushing stdout at exit: point it at /dev/null.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise typer.Exit(0) from None
    except Exception as exc:
        if isinstance(exc, _user_error_types()):
            note(f"error: {exc}")
            raise typer.Exit(FAILED) from None
        raise


__all__ = ["FAILED", "CliError", "note", "user_errors"]
