"""``jointbus record FILE.mcap [TOPIC ...]``: record the bus (every topic by default) to MCAP.

Where it sits: :mod:`jointbus.cli`, a thin wrapper around :class:`jointbus.tools.recorder.Recorder`
with its remote (Zenoh) source: this process joins the jointbus Zenoh network and stores each
payload exactly as received. A status line shows messages, megabytes and the message rate; Ctrl-C
(or SIGTERM, or ``--duration``) stops the recording and writes the MCAP summary. A recorder that is
killed instead loses at most its last ``--flush-interval`` of messages; ``jointbus info`` reads such
a file and reports it as truncated.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

from jointbus.bus import Bus, ZenohConfig
from jointbus.tools.errors import ToolError
from jointbus.tools.recorder import DEFAULT_FLUSH_INTERVAL, Recorder, RecorderStats


def status_text(stats: RecorderStats, rate_hz: float) -> str:
    """The status line: messages, megabytes, current rate (msg/s), topics, and any losses."""
    text = (
        f"recording: {stats.messages} msgs  {stats.bytes / 1e6:.2f} MB  {rate_hz:.0f} msg/s  "
        f"{stats.topics} topics  {stats.elapsed_s:.1f} s"
    )
    if stats.lost or stats.skipped:
        text += f"  lost {stats.lost}  skipped {stats.skipped}"
    return text


def _raise_interrupt(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def record(  # noqa: PLR0917 (typer maps parameters to options)
    file: Annotated[Path, typer.Argument(help="Output MCAP file (overwritten).")],
    topics: Annotated[
        list[str] | None, typer.Argument(help="Topics to record (default: every topic).")
    ] = None,
    duration: Annotated[
        float | None, typer.Option(help="Stop after this many seconds (default: until Ctrl-C).")
    ] = None,
    connect: Annotated[
        list[str] | None,
        typer.Option(help="Zenoh endpoint to connect to, e.g. tcp/127.0.0.1:7447 (repeatable)."),
    ] = None,
    listen: Annotated[
        list[str] | None, typer.Option(help="Zenoh endpoint to listen on (repeatable).")
    ] = None,
    flush_interval: Annotated[
        float, typer.Option(help="Write the chunk in progress at least this often (s).")
    ] = DEFAULT_FLUSH_INTERVAL,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No status line.")] = False,
) -> None:
    """Record bus traffic to an MCAP file (ros2msg schemas, CDR, zstd chunks)."""
    from rich.console import Console
    from rich.live import Live

    console = Console(stderr=True)
    try:
        config = ZenohConfig(listen=tuple(listen) if listen else None, connect=tuple(connect or ()))
        bus = Bus(zenoh=config, name="recorder")
    except Exception as exc:
        console.print(f"[red]error:[/] cannot join the Zenoh network: {exc}")
        raise typer.Exit(1) from exc
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    recorder = Recorder(bus, file, topics or None, local=False, remote=True,
                        flush_interval=flush_interval)
    try:
        recorder.start()
        deadline = None if duration is None else time.monotonic() + duration
        last = recorder.stats()
        with Live(status_text(last, 0.0), console=console, transient=False,
                  auto_refresh=False, redirect_stderr=False) as live:
            try:
                while deadline is None or time.monotonic() < deadline:
                    time.sleep(0.25 if deadline is None else
                               max(0.0, min(0.25, deadline - time.monotonic())))
                    now = recorder.stats()
                    dt = now.elapsed_s - last.elapsed_s
                    rate = (now.messages - last.messages) / dt if dt > 0 else 0.0
                    if not quiet:
                        live.update(status_text(now, rate), refresh=True)
                    last = now
            except KeyboardInterrupt:
                pass
        stats = recorder.stop()
    except ToolError as exc:
        recorder.stop() if recorder.running else None
        console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(1) from exc
    finally:
        signal.signal(signal.SIGTERM, previous)
        bus.close()
    console.print(
        f"recorded {stats.messages} messages on {stats.topics} topics to {file} "
        f"({stats.bytes / 1e6:.2f} MB, {stats.elapsed_s:.1f} s)"
        + (f"; lost {stats.lost}, skipped {stats.skipped}" if stats.lost or stats.skipped else "")
    )


__all__ = ["record", "status_text"]
