"""``jointbus can-twin URL [SCRIPT [ARGS]...]``: simulated MIT-mode motors for a ``can://`` URL.

Where it sits: :mod:`jointbus.cli`, over :class:`~jointbus.drivers.can.twin_server.TwinServer`.
It lets a user run ``can://`` code with no motors and no adapter: the twin reads the same URL the
driver opens (robot, motor models, CAN ids, interface, channel) and answers on that bus like the
motors would.

python-can's ``virtual`` interface connects only the buses of one process, so with ``virtual``
the command runs SCRIPT itself, in this process, while the twin answers (``sys.argv`` is
``[SCRIPT, *ARGS]``; the exit code is the script's). On an interface that crosses processes — a
SocketCAN ``vcan`` interface, or a real bus with nothing else on it — the twin can also serve
alone until Ctrl-C (or ``--duration``) while another process opens the URL. The motors' physics
runs on the monotonic clock, as real motors' does, whatever rate the program exchanges at
(:mod:`~jointbus.drivers.can.twin_server`, "Time").

Fault injection, to see what a program does when motors fail (the twin's
:class:`~jointbus.drivers.can.firmware_twin.FirmwareTwin` calls): ``--drop-replies ID`` loses a
motor's replies while it still acts on commands (repeatable), ``--silent`` makes every motor
ignore all frames and answer nothing, ``--error-code ID=CODE`` makes a motor report an error
byte (repeatable); ``--fault-at S`` injects them S seconds after the twin starts (default at
once) and ``--fault-for S`` undoes them S seconds later (default: never). Each injection and
its end is one line on stderr.
"""

from __future__ import annotations

import runpy
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from jointbus.drivers.can.twin_server import TwinServer

__all__ = ["can_twin"]


def can_twin(
    url: Annotated[
        str,
        typer.Argument(
            help="The can:// URL the driver opens, e.g. "
            "'can://virtual/demo?robot=hb50&model=md80' (quote it: it holds '?' and '&')."
        ),
    ],
    script: Annotated[
        Path | None,
        typer.Argument(
            help="Python script to run in this process against the twin (needed on the "
            "virtual interface); its arguments follow it (put '--' before options)."
        ),
    ] = None,
    args: Annotated[
        list[str] | None, typer.Argument(help="Arguments passed to SCRIPT.", show_default=False)
    ] = None,
    *,
    seed: Annotated[int, typer.Option(help="Seed of the motors' sensor noise.")] = 0,
    noise: Annotated[
        bool, typer.Option("--noise/--no-noise", help="Simulate sensor noise.")
    ] = True,
    duration: Annotated[
        float | None,
        typer.Option(help="Without SCRIPT: serve this long, s (default: until Ctrl-C)."),
    ] = None,
    drop_replies: Annotated[
        list[int] | None,
        typer.Option(
            "--drop-replies",
            metavar="ID",
            help="Fault: lose the replies of the motor with this CAN id; it still acts on "
            "commands (repeatable).",
        ),
    ] = None,
    silent: Annotated[
        bool,
        typer.Option("--silent", help="Fault: every motor ignores all frames, answers nothing."),
    ] = False,
    error_code: Annotated[
        list[str] | None,
        typer.Option(
            "--error-code",
            metavar="ID=CODE",
            help="Fault: the motor with CAN id ID reports error byte CODE (0-255; extended "
            "reply layouts such as md80's) (repeatable).",
        ),
    ] = None,
    fault_at: Annotated[
        float,
        typer.Option(min=0.0, help="Inject the faults this many seconds after the start."),
    ] = 0.0,
    fault_for: Annotated[
        float | None,
        typer.Option(min=0.0, help="Undo the faults this many seconds after injecting them."),
    ] = None,
) -> None:
    """Run simulated MIT-mode motors that answer a can:// URL, like the real ones would.

    python-can's 'virtual' interface connects one process only: give SCRIPT, it runs here.

    On SocketCAN (a vcan0 from 'ip link add dev vcan0 type vcan') the twin can serve alone.
    """
    from jointbus.drivers.can.twin_server import TwinServer
    from jointbus.drivers.errors import DriverError

    try:
        server = TwinServer.from_url(url, seed=seed, noise=noise)
    except (DriverError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    config = server.config
    if script is None and config.interface == "virtual":
        typer.echo(
            "error: python-can's 'virtual' interface reaches only this process; give a SCRIPT "
            "to run against the twin (jointbus can-twin URL script.py), or use an interface "
            "other processes share (socketcan with a vcan interface)",
            err=True,
        )
        raise typer.Exit(2)
    if script is not None and not script.is_file():
        typer.echo(f"error: no script {str(script)!r}", err=True)
        raise typer.Exit(2)
    ids = config.can_ids
    models = sorted({m.model.name for m in config.motors})
    try:
        inject, undo = _faults(server, drop_replies or [], silent, error_code or [])
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    try:
        server.start()
    except DriverError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    typer.echo(
        f"motor twin: {len(ids)} motors ({', '.join(models)}; CAN ids {', '.join(map(str, ids))};"
        f" host id {config.host_id}) answering on {config.interface} channel "
        f"{config.channel!r}",
        err=True,
    )
    timers = _schedule(inject, undo, fault_at, fault_for)
    code = 0
    try:
        if script is not None:
            code = _run_script(script, args or [])
        else:
            _serve(duration)
    finally:
        for timer in timers:
            timer.cancel()
        twin = server.twin
        received, sent = twin.frames_received, twin.replies_sent
        server.stop()
        typer.echo(f"motor twin: {received} frames received, {sent} replies sent", err=True)
    if code:
        raise typer.Exit(code)


Fault = Callable[[], None]


def _faults(
    server: TwinServer, drop: list[int], silent: bool, codes: list[str]
) -> tuple[Fault | None, Fault]:
    """The injection and its undoing for the options (``None``: no fault asked for); raises
    ValueError naming an id the twin does not have or a malformed ``ID=CODE``."""
    config = server.config
    joint_of = {m.can_id: m.joint for m in config.motors}

    def motor(can_id: int, option: str) -> str:
        if can_id not in joint_of:
            known = ", ".join(f"{j}={i}" for i, j in joint_of.items())
            raise ValueError(f"{option} {can_id}: the twin has no motor with that CAN id ({known})")
        return f"CAN id {can_id} ({joint_of[can_id]})"

    errors: list[tuple[int, int]] = []
    for item in codes:
        id_text, sep, code_text = item.partition("=")
        try:
            if not sep:
                raise ValueError
            can_id, code = int(id_text), int(code_text, 0)
        except ValueError:
            raise ValueError(f"--error-code {item!r}: expected ID=CODE, e.g. 3=0x10") from None
        if not 0 <= code <= 0xFF:
            raise ValueError(f"--error-code {item!r}: CODE {code} is outside 0-255")
        motor(can_id, "--error-code")
        errors.append((can_id, code))
    what = [f"replies of {motor(i, '--drop-replies')} dropped" for i in drop]
    what += [f"{motor(i, '--error-code')} reports error byte {c:#04x}" for i, c in errors]
    what += ["every motor silent"] if silent else []
    if not what:
        return None, lambda: None
    description = "; ".join(what)

    def apply(on: bool) -> None:
        twin = server.twin
        for can_id in drop:
            twin.drop_replies(can_id, on)
        for can_id, code in errors:
            twin.set_error_code(can_id, code if on else 0)
        if silent:
            twin.set_silent(on)
        verb = "fault injected" if on else "fault undone"
        typer.echo(f"motor twin: {verb}: {description}", err=True)

    return (lambda: apply(True)), (lambda: apply(False))


def _schedule(
    inject: Fault | None, undo: Fault, at: float, length: float | None
) -> list[threading.Timer]:
    """Run ``inject`` ``at`` s from now (at once for 0) and ``undo`` ``length`` s later."""
    if inject is None:
        return []
    timers: list[threading.Timer] = []
    if at > 0:
        timers.append(threading.Timer(at, inject))
    else:
        inject()
    if length is not None:
        timers.append(threading.Timer(at + length, undo))
    for timer in timers:
        timer.daemon = True
        timer.start()
    return timers


def _run_script(script: Path, args: list[str]) -> int:
    """Run ``script`` as ``__main__`` with ``sys.argv = [script, *args]``; its exit code."""
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [str(script), *args]
    sys.path.insert(0, str(script.resolve().parent))
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exc:
        if exc.code is None:
            return 0
        if isinstance(exc.code, int):
            return exc.code
        typer.echo(str(exc.code), err=True)
        return 1
    except Exception:  # the user's script failed: show it as Python would, exit 1
        traceback.print_exc()
        return 1
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    return 0


def _serve(duration: float | None) -> None:
    """Answer until Ctrl-C, or for ``duration`` s."""
    end = None if duration is None else time.monotonic() + duration
    try:
        while end is None or time.monotonic() < end:
            time.sleep(0.1 if end is None else max(0.0, min(0.1, end - time.monotonic())))
    except KeyboardInterrupt:
        pass
