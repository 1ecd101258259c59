"""``jointbus play FILE``: republish a bag onto the bus with its original timing.

Where it sits: :mod:`jointbus.cli`, over :class:`jointbus.tools.player.Player`. This process joins
the jointbus Zenoh network like every other command (``--hub-port`` / ``JOINTBUS_HUB_PORT``,
``--connect`` / ``JOINTBUS_CONNECT``, ``--router`` / ``JOINTBUS_ROUTER``, ``--domain-id`` /
``ROS_DOMAIN_ID``) and publishes every
message of the bag (or of ``--topics``) at its recorded time, scaled by ``--rate``; ``--loop``
starts over at the end. A progress bar shows the bag time reached. Reads our MCAP files and rosbag2
directories written by other tools (via rosbags).

Safety (see :mod:`jointbus.tools.player`): command topics are left out unless
``--include-commands``, and a topic a live node already publishes is refused unless ``--force``.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from jointbus.cli.errors import user_errors
from jointbus.cli.interrupts import stop_on_interrupt
from jointbus.cli.options import BusOptions, joins_bus
from jointbus.tools.command_topics import COMMAND_RULE

if TYPE_CHECKING:
    from jointbus.tools.player import PlaybackProgress


@joins_bus()
def play(  # noqa: PLR0917 (typer maps parameters to options)
    file: Annotated[Path, typer.Argument(help="MCAP file, rosbag2 directory or .db3 file.")],
    rate: Annotated[
        float,
        typer.Option(min=0.001, help="Playback speed (> 0; 1 = as recorded, 0.5 = half speed)."),
    ] = 1.0,
    loop: Annotated[bool, typer.Option("--loop", help="Start over at the end.")] = False,
    topics: Annotated[
        list[str] | None, typer.Option("--topics", help="Only this topic (repeatable).")
    ] = None,
    settle: Annotated[
        float, typer.Option(help="Seconds to let subscribers match before the first message.")
    ] = 1.0,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    include_commands: Annotated[
        bool,
        typer.Option(
            "--include-commands",
            help="Also publish command topics (left out by default: they move a live robot).",
        ),
    ] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Publish topics that a live node already publishes (refused by default).",
        ),
    ] = False,
    *,
    bus_options: BusOptions,
) -> None:
    """Republish a bag onto the bus with the original timing.

    Safe by default for a bus with a live robot on it: command topics are NOT published unless
    --include-commands (the skipped ones are listed); COMMAND_RULE. And play refuses, before
    publishing anything, when a live node already publishes one of the topics to play (e.g.
    /hb50/bridge_data while a bridge runs) unless --force.
    """
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from jointbus.tools.bag_reader import open_bag
    from jointbus.tools.errors import ToolError
    from jointbus.tools.player import LATE_NOTED_S, Player

    console = Console(stderr=True)
    try:
        bag = open_bag(file)
    except ToolError as exc:
        console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(1) from exc
    try:
        with user_errors():
            bus = bus_options.open_bus()
    except typer.Exit:
        bag.close()
        raise
    signals = contextlib.ExitStack()
    signals.enter_context(stop_on_interrupt())  # until the finally below
    try:
        player = Player(
            bus,
            bag,
            rate=rate,
            loop=loop,
            topics=topics or None,
            settle_s=settle,
            include_commands=include_commands,
            force=force,
            discover_s=1.0,  # a live publisher missed here is a robot fed replayed data
        )
        if player.skipped_commands:
            console.print(
                f"not publishing {len(player.skipped_commands)} command topic(s): "
                f"{', '.join(player.skipped_commands)} (--include-commands plays them)"
            )
        duration = bag.duration_ns / 1e9
        with Progress(
            TextColumn("[bold]play[/] {task.description}"),
            BarColumn(),
            TextColumn("{task.completed:.1f}/{task.total:.1f} s  {task.fields[msgs]} msgs"),
            TimeElapsedColumn(),
            console=console,
            disable=quiet,
        ) as progress:
            task = progress.add_task(file.name, total=max(duration, 1e-9), msgs=0)

            def on_progress(p: PlaybackProgress) -> None:
                if p.published % 50 == 0 or p.fraction >= 1.0:
                    progress.update(
                        task,
                        completed=p.bag_time_s,
                        msgs=p.published,
                        description=f"{file.name} (pass {p.loop + 1})" if loop else file.name,
                    )

            try:
                stats = player.run(on_progress)
            except KeyboardInterrupt:
                player.stop()
                raise typer.Exit(130) from None
            progress.update(task, completed=duration, msgs=stats.published)
    except ToolError as exc:
        console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(1) from exc
    finally:
        signals.close()
        bag.close()
        bus.close()
    console.print(
        f"played {stats.published} messages"
        + (f" ({stats.skipped} skipped)" if stats.skipped else "")
        + f" in {stats.wall_s:.1f} s"
        + (
            f"; {stats.late} of them more than {LATE_NOTED_S * 1e3:g} ms behind the recording's "
            f"timing (up to {stats.late_max_s:.2f} s late: the host was busy; the player then "
            "caught up in a burst)"
            if stats.late
            else ""
        )
    )


play.__doc__ = (play.__doc__ or "").replace("COMMAND_RULE", COMMAND_RULE)

__all__ = ["play"]
