"""``jointbus can-twin URL [SCRIPT [ARGS]...]``: simulated MIT-mode motors for a ``can://`` URL.

Where it sits: :mod:`jointbus.cli`, over :class:`~jointbus.drivers.can.twin_server.TwinServer`.
It lets a user run ``can://`` code with no motors and no adapter: the twin reads the same URL the
driver opens (robot, motor models, CAN ids, interface, channel) and answers on that bus like the
motors would.

python-can's ``virtual`` interface connects only the buses of one process, so with ``virtual``
the command runs SCRIPT itself, in this process, while the twin answers (``sys.argv`` is
``[SCRIPT, *ARGS]``; the exit code is the script's). On an interface that crosses processes — a
SocketCAN ``vcan`` interface, or a real bus with nothing else on it — the twin can also serve
alone until Ctrl-C (or ``--duration``) while another process opens the URL.
"""

from __future__ import annotations

import runpy
import sys
import time
import traceback
from pathlib import Path
from typing import Annotated

import typer

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
    code = 0
    try:
        if script is not None:
            code = _run_script(script, args or [])
        else:
            _serve(duration)
    finally:
        twin = server.twin
        received, sent = twin.frames_received, twin.replies_sent
        server.stop()
        typer.echo(f"motor twin: {received} frames received, {sent} replies sent", err=True)
    if code:
        raise typer.Exit(code)


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
