"""``jointbus info FILE``: topics, types, counts, rates and duration, like ``ros2 bag info``.

Where it sits: :mod:`jointbus.cli`, over :mod:`jointbus.tools.bag_info`. Reads our MCAP files
(including ones cut short by a crash, reported as truncated), other ``ros2`` MCAP files, and rosbag2
directories or ``.db3`` files through rosbags.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def info(
    file: Annotated[Path, typer.Argument(help="MCAP file, rosbag2 directory or .db3 file.")],
) -> None:
    """Show what a bag holds: topics, types, message counts, rates, duration.

    Rate is each topic's own: (n-1)/(t_last-t_first) of its n messages, as topic list measures;
    '-' for a topic with fewer than 2 messages; 'latched' for a topic recorded as transient-local
    (published on change, not at a rate).
    """
    from jointbus.tools.bag_info import bag_info, format_bag_info
    from jointbus.tools.errors import ToolError

    try:
        summary = bag_info(file)
    except ToolError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    typer.echo(format_bag_info(summary))


__all__ = ["info"]
