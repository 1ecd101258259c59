"""``jointbus plot FILE --topic T --field F [--joints NAME ...] -o OUT.png``: fields over time.

Where it sits: :mod:`jointbus.cli`, over :func:`jointbus.tools.plot.plot_bag`. ``--topic`` and
``--field`` repeat and pair in order (or one of either applies to all of the other), so commanded
and measured position share a subplot per joint::

    jointbus plot run.mcap --topic /hb50/joint_command --field t_pos \\
        --topic /hb50/bridge_data --field joint_position --joints fr_j1 --joints knee -o pos.png

``--joints`` takes joint names and the roles the robot model gives them (``knee``: every knee);
the axes say the unit of each field. Targets that command nothing (``t_pos`` where ``kp`` is 0) are
not drawn, and lines break at gaps in a topic. The time axis is the messages' header stamps (their
own time; receive time for messages without one), see :mod:`jointbus.tools.plot`. Needs
matplotlib (``pip install matplotlib``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from jointbus.tools.errors import ToolError


def plot(  # noqa: PLR0917 (typer maps parameters to options)
    file: Annotated[Path, typer.Argument(help="MCAP file, rosbag2 directory or .db3 file.")],
    topic: Annotated[list[str], typer.Option("--topic", help="Topic to plot (repeatable).")],
    field: Annotated[
        list[str], typer.Option("--field", help="Field path, e.g. joint_position (repeatable).")
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="PNG file to write.")],
    joints: Annotated[
        list[str] | None,
        typer.Option(
            "--joints",
            help="Joint name or role, e.g. fr_j2 or knee (every knee) (repeatable; default all).",
        ),
    ] = None,
    robot: Annotated[
        str,
        typer.Option(
            "--robot",
            help="Robot model for joint roles and units: bundled name or robot file; 'auto' "
            "(default) picks the bundled robot having the plotted joints, '' none.",
        ),
    ] = "auto",
) -> None:
    """Plot message fields over time (e.g. commanded vs measured position per joint) to a PNG.

    The y axes name each joint with its role where the model has one (fr_j2 (knee)) and the
    field's unit (rad, rad/s, N·m...); legends sit beside the plots. Only what happened is
    drawn: t_pos of a joint whose kp is 0 in that command (damping, idle) is left out, and a
    line breaks where its topic has no message for more than 5 of its typical periods there (a
    point alone between two breaks is a dot). Time is each message's header stamp (receive
    time for messages without one).
    """
    try:
        from jointbus.tools.plot import plot_bag
    except ImportError as exc:  # matplotlib missing
        typer.echo(f"error: plotting needs matplotlib ({exc})", err=True)
        raise typer.Exit(1) from exc
    model: Any = robot or None
    if robot and robot != "auto":
        from jointbus.model import load_robot
        from jointbus.model.errors import ModelError

        try:
            model = load_robot(robot)
        except (ModelError, OSError) as exc:
            typer.echo(f"error: cannot load robot {robot!r}: {exc}", err=True)
            raise typer.Exit(1) from exc
    try:
        fig = plot_bag(file, topic, field, output, joints=joints or None, robot=model)
    except ToolError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    lines = sum(len(ax.get_lines()) for ax in fig.axes)
    typer.echo(f"wrote {output} ({lines} series)")


__all__ = ["plot"]
