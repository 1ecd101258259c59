"""The lines ``jointbus demo`` prints (:mod:`jointbus.cli.demo`), built from a summary: each
figure says what span it covers. The demo run end to end is ``test_cli_demo.py``."""

from __future__ import annotations

import dataclasses
import math

import pytest

from jointbus.cli.demo import final_line
from jointbus.runtime import LoopRun
from jointbus.stack import StackSummary

NAN = math.nan


def _summary(run: LoopRun | None, **figures: object) -> StackSummary:
    """A standing robot's summary with the loop figures ``figures`` and the loop's counts
    ``run``; each test sets the figures its line prints."""
    base = StackSummary(
        elapsed_s=12.0,
        nodes=("bridge", "control"),
        transport="processes",
        joints=(),
        motion_mode="STAND",
        bridge_mode="run",
        owner="control_node",
        estop=None,
        drives_enabled=True,
        base_height_m=0.327,
        true_base_height_m=0.326,
        bridge_data_hz=500.0,
        command_hz=500.0,
        loop_rate_hz=500.0,
        lateness_p50_s=1e-6,
        lateness_p99_s=1e-5,
        lateness_max_s=1e-4,
        overruns=0,
        skipped_fraction=0.0,
        cpu_fraction=0.5,
        simulator_cpu_fraction=0.0,
        cpu_mean_fraction=0.5,
        real_time_factor=1.0,
        loop_run=run,
    )
    return dataclasses.replace(base, **figures)  # type: ignore[arg-type]


def test_the_last_line_gives_the_run_before_its_last_window_and_no_stale_figures() -> None:
    """A trial's run held 500 Hz for minutes and stalled at its end; the last line said only the
    end ("429 Hz achieved, 14.3 % skipped"). It now gives the run from the loop's counts first;
    without a recent report from the bridge it gives no loop figure at all, never an old one."""
    run = LoopRun(
        cycles=149_000,
        skipped=480,
        late_slots=600,
        window_s=10.0,
        rate_hz=429.0,
        skipped_fraction=0.143,
        lateness_p99_s=0.0289,
    )
    summary = _summary(
        run,
        elapsed_s=300.0,
        bridge_data_hz=429.0,
        command_hz=429.0,
        loop_rate_hz=429.0,
        lateness_p50_s=1e-5,
        lateness_p99_s=0.0289,
        lateness_max_s=0.05,
        overruns=40,
        skipped_fraction=0.143,
        cpu_fraction=0.6,
        cpu_mean_fraction=0.6,
    )
    last = final_line(summary)
    assert (
        "bridge loop over the run 149000 of 149480 due cycles (0.32 % skipped, 0.40 % more "
        "than half a period late); last 10.0 s: 429 Hz achieved, 14.3 % skipped, lateness "
        "p99 28900 us,"
    ) in last, last
    stale = final_line(dataclasses.replace(summary, loop_run=None, loop_rate_hz=NAN))
    assert "bridge loop: no figures (no recent report from it)," in stale, stale
    assert "Hz achieved" not in stale and "skipped" not in stale, stale


def test_the_status_line_names_the_window_of_each_group() -> None:
    """A trial read ``bridge_data=438Hz rtf=0.921`` beside ``loop=491Hz skipped=1.9%`` and
    could not tell why: the first group covers the last second, the second the loop's window."""
    run = LoopRun(
        cycles=5000,
        skipped=0,
        late_slots=0,
        window_s=10.0,
        rate_hz=491.0,
        skipped_fraction=0.019,
        lateness_p99_s=1.2e-5,
    )
    summary = _summary(
        run,
        bridge_data_hz=438.0,
        command_hz=438.0,
        loop_rate_hz=491.0,
        lateness_p99_s=1.2e-5,
        overruns=3,
        skipped_fraction=0.019,
        real_time_factor=0.921,
    )
    line = summary.line()
    assert (
        "| last 1s: bridge_data=438Hz commands=438Hz rtf=0.921 cpu=50% BEHIND REAL TIME "
        "| bridge loop, last 10s: loop=491Hz skipped=1.9% late_p99=12us"
    ) in line, line
    unknown = dataclasses.replace(summary, loop_run=None).line()
    assert "| bridge loop, last ?s: loop=491Hz" in unknown, unknown


def test_a_run_a_process_of_its_layout_died_in_ends_with_one_error_line() -> None:
    """A SIGKILLed control process with ``--duration 10``, and Ctrl-C after a SIGKILLed bridge,
    both exited 0: a script could not tell a crashed stack from a clean run. The run's summary
    now gives the error line (exit code 1); a clean run none."""
    from jointbus.cli.demo import failure_line
    from jointbus.stack import ProcessExit

    clean = _summary(None)
    assert failure_line(clean) is None
    control = ProcessExit("control", "killed by SIGKILL", 5.7, respawn=False)
    crashed = dataclasses.replace(clean, exits=(control,))  # type: ignore[call-arg]
    assert failure_line(crashed) == (
        "a process of the layout died during the run: process 'control' was killed by "
        "SIGKILL at +5.7 s"
    )
    bridge = ProcessExit("bridge", "killed by SIGKILL", 6.9, respawn=False, bridge=True)
    gone = dataclasses.replace(  # type: ignore[call-arg]
        clean, exits=(bridge,), bridge_gone=bridge, bridge_mode="gone"
    )
    assert failure_line(gone) == (
        "the robot is gone: process 'bridge' was killed by SIGKILL at +6.9 s, and the layout "
        "does not start it again"
    )
    starting = dataclasses.replace(bridge, respawn=True)  # stopped before its respawn spoke
    respawning = dataclasses.replace(  # type: ignore[call-arg]
        clean, exits=(starting,), bridge_gone=starting, bridge_mode="gone"
    )
    assert failure_line(respawning) == (
        "a process of the layout died during the run: process 'bridge' was killed by SIGKILL "
        "at +6.9 s (started again, not heard since)"
    )
    respawned = dataclasses.replace(bridge, respawn=True, back_s=8.7)
    again = dataclasses.replace(clean, exits=(respawned,))  # type: ignore[call-arg]
    assert failure_line(again) == (
        "a process of the layout died during the run: process 'bridge' was killed by SIGKILL "
        "at +6.9 s (started again, heard from +8.7 s)"
    )


def test_the_owner_and_the_lost_mode_say_what_is_known_of_a_dead_control_process() -> None:
    """The line kept ``owner=control_node`` while the control process was dead, and the summary
    gave no cause for the unknown mode. The owner stays the bridge's word, marked; the mode says
    why no RobotState comes."""
    summary = dataclasses.replace(  # type: ignore[call-arg]
        _summary(None),
        motion_mode="UNKNOWN",
        robot_state_age_s=4.0,
        base_height_m=NAN,
        owner_note="process gone",
        control_why="the control process was killed by SIGKILL at +5.7 s",
    )
    line = summary.line()
    assert (
        "mode=UNKNOWN(no RobotState for 4.0s; the control process was killed by SIGKILL at "
        "+5.7 s) bridge=run owner=control_node(process gone)"
    ) in line, line
    last = final_line(summary)
    assert (
        "mode UNKNOWN (no RobotState for 4.0 s; the control process was killed by SIGKILL at "
        "+5.7 s)"
    ) in last, last
    assert "owner control_node (per the bridge; that node: process gone)," in last, last


class _Reports:
    """What a stack's ``take_reports`` hands the demo: the reports given, once."""

    def __init__(self, *reports: tuple[int, str, str]) -> None:
        from jointbus.messages.std_msgs import Header
        from jointbus.robots.hb50.messages import Status

        self._reports = [
            Status(Header.now(""), level=level, reporting_node=node, status=text)
            for level, node, text in reports
        ]

    def take_reports(self) -> list[object]:
        taken, self._reports = self._reports, []
        return taken


def test_the_console_prints_problems_and_the_ok_that_clears_each(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A user's trial: the console's last word stayed "velocity commands stopped …; stopping on
    four feet" while the robot walked on — the OK that said the commands were back was on the bus
    only. A node's next OK after a problem it reported is printed; other OKs are not."""
    from jointbus.cli.demo import ConsoleReports
    from jointbus.robots.hb50.messages import Level

    printed = ConsoleReports()
    printed.print_new(
        _Reports(  # type: ignore[arg-type]
            (Level.OK, "control_node", "motion mode STAND -> LOCOMOTION (velocity command)"),
            (Level.WARN, "control_node", "velocity commands stopped after 3 s; stopping"),
            (Level.OK, "bridge_node", "drives on"),
            (Level.OK, "control_node", "velocity commands are back"),
            (Level.OK, "control_node", "motion mode STAND -> LOCOMOTION (velocity command)"),
            (Level.ERROR, "bridge_node", "fallback: no command for 101 ms"),
        )
    )
    printed.print_new(_Reports((Level.OK, "bridge_node", "fallback: a controller took over")))  # type: ignore[arg-type]
    lines = [line.split(" ", 1)[1] for line in capsys.readouterr().err.splitlines()]
    assert lines == [
        "WARN control_node: velocity commands stopped after 3 s; stopping",
        "OK control_node: velocity commands are back",
        "ERROR bridge_node: fallback: no command for 101 ms",
        "OK bridge_node: fallback: a controller took over",  # across calls
    ]
