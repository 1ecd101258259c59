"""``jointbus plot FILE --topic T --field F [--joints NAME ...] -o OUT.png``: fields over time.

Where it sits: :mod:`jointbus.cli`, over :func:`jointbus.tools.plot.plot_bag`. ``--topic`` and
``--field`` repeat and pair in order (or one of either applies to all of the other), so commanded
and measured position share a subplot per joint::

    jointbus plot run.mcap --topic /hb50/joint_command --field t_pos \\
        --topic /hb50/bridge_data --field joint_position --joints fr_j1 --joints fr_j2 -o pos.png

Needs matplotlib (``pip install matplotlib``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jointbus.tools.errors import ToolError


def plot(
    file: Annotated[Path, typer.Argument(help="MCAP file, rosbag2 directory or .db3 file.")],
    topic: Annotated[list[str], typer.Option("--topic", help="Topic to plot (repeatable).")],
    field: Annotated[
        list[str], typer.Option("--field", help="Field path, e.g. joint_position (repeatable).")
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="PNG file to write.")],
    joints: Annotated[
        list[str] | None, typer.Option("--joints", help="Joint to plot (repeatable; default all).")
    ] = None,
) -> None:
    """Plot message fields over time (e.g. commanded vs measured position per joint) to a PNG."""
    try:
        from jointbus.tools.plot import plot_bag
    except ImportError as exc:  # matplotlib missing
        typer.echo(f"error: plotting needs matplotlib ({exc})", err=True)
        raise typer.Exit(1) from exc
    try:
        fig = plot_bag(file, topic, field, output, joints=joints or None)
    except ToolError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    lines = sum(len(ax.get_lines()) for ax in fig.axes)
    typer.echo(f"wrote {output} ({lines} series)")


__all__ = ["plot"]
