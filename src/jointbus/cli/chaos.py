"""``jointbus chaos``: the chaos campaign — the walking robot, faults at random, invariants.

Where it sits: :mod:`jointbus.cli`, registered as the ``chaos`` command of :mod:`jointbus.cli.main`
(``make chaos`` runs it); the campaign itself is :mod:`jointbus.chaos_campaign`, imported when the
command runs.

It starts its own robot (the hb50 in its process layout, on a free loopback hub port unless
``--hub-port`` says which), walks it by a seeded velocity script and injects a seeded schedule of
faults — SIGSTOP and SIGKILL of the control node, the velocity publisher, a recorder and a monitor,
SIGKILL of the bridge, CPU hogs on every core, bursts of bad joint and velocity commands, a
duplicate node — while it checks the simulator's ground truth against the invariants at every
step. It prints a progress line every 30 s, then a table per fault kind and every violation with
the command that replays it (the same ``--seed``; ``--window BEGIN:END`` replays only the faults
that start in that span, in a short run). Exit code 0 only with 0 violations, 1 otherwise; 2 for
bad arguments. Ctrl-C stops every process it started.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated

import typer

from jointbus.cli.errors import FAILED, CliError, user_errors
from jointbus.cli.interrupts import stop_on_interrupt


def chaos(  # noqa: PLR0917 (typer maps parameters to options)
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the velocity script and the fault schedule.")
    ] = 1,
    minutes: Annotated[
        float, typer.Option("--minutes", help="Length of the campaign (the robot's run).")
    ] = 10.0,
    seconds: Annotated[
        float | None, typer.Option("--seconds", help="Length in seconds (overrides --minutes).")
    ] = None,
    faults_per_minute: Annotated[
        float,
        typer.Option("--faults-per-minute", help="How many faults a minute, on average."),
    ] = 30.0,
    hub_port: Annotated[
        int | None,
        typer.Option(
            "--hub-port", min=1, max=65535, metavar="PORT",
            help="Loopback port of the campaign's own hub (default: a free one).",
        ),
    ] = None,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Also write the report as JSON here.")
    ] = None,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            "-v",
            help="Print every WARN+ report as it arrives, and what explains a missed "
            "one: gaps in the bridge's state and loop, Zenoh links of the hub opened and closed, "
            "messages the campaign's reliable subscriptions lost.",
        )
    ] = False,
    window: Annotated[
        str | None,
        typer.Option(
            "--window", metavar="BEGIN:END",
            help="Replay only the faults of the schedule that start between BEGIN and END s "
            "(campaign time, as a violation names it), in a short run: the combination that "
            "broke a rule, without the hour before it.",
        ),
    ] = None,
) -> None:
    """Run the chaos campaign: the walking hb50 under seeded, overlapping faults, its ground
    truth checked at every step.

    The robot runs in its process layout (bridge + simulator, control node) beside a velocity
    publisher, a recorder and a monitor, each a process the campaign stops and kills. Prints a
    table per fault kind and every violation with the seed that replays it (and each violation
    as it is found). Ctrl-C (or SIGTERM) stops the run and prints the table of the time run.
    Exit code 0 only with 0 violations over the whole campaign, 1 otherwise (a run stopped
    early included)."""
    with user_errors():
        from jointbus.chaos_campaign import CampaignConfig, CampaignConfigError, run_campaign
        from jointbus.tools.chaos.fault_schedule import FaultScheduleError

        duration = seconds if seconds is not None else minutes * 60.0
        if not math.isfinite(duration):
            raise typer.BadParameter(f"{duration!r} is not a length", param_hint="--seconds")
        span = None if window is None else _window(window)
        config = CampaignConfig(
            seed=seed,
            duration_s=duration,
            faults_per_minute=faults_per_minute,
            hub_port=hub_port,
            verbose=verbose,
            window=span,
        )
        try:
            # the first Ctrl-C / SIGTERM ends the campaign (its report follows); later ones cannot
            # cut its shutdown of the robot's processes short
            with stop_on_interrupt():
                report = run_campaign(config, progress=typer.echo)
        except (CampaignConfigError, FaultScheduleError) as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        except RuntimeError as exc:  # the robot did not stand up at the start
            raise CliError(str(exc)) from None
        for line in report.lines():
            typer.echo(line)
        if json_path is not None:
            json_path.write_text(json.dumps(report.as_dict(), indent=2) + "\n")
        if not report.passed:
            raise typer.Exit(FAILED)


def _window(text: str) -> tuple[float, float]:
    """``BEGIN:END`` in seconds (``2870:2895``)."""
    begin, sep, end = text.partition(":")
    try:
        if not sep:
            raise ValueError(text)
        span = (float(begin), float(end))
    except ValueError:
        raise typer.BadParameter(
            f"{text!r} is not BEGIN:END in seconds (e.g. 2870:2895)", param_hint="--window"
        ) from None
    return span
