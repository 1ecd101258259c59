"""``jointbus demo``: the simulated hb50 with its bridge and control node, standing up.

``--robot arm6`` / ``--robot rover`` run those robots instead, served by the array node and moved
by its first client (:mod:`jointbus.cli.served_demo`); what follows is the hb50 run.

Where it sits: :mod:`jointbus.cli`, registered as the ``demo`` command of :mod:`jointbus.cli.main`
(``make demo`` runs it). It is a view of a :class:`jointbus.stack.Stack`; :mod:`jointbus.cli.launch`
reuses the view for ``jointbus bridge`` and ``jointbus control``.

What the user sees:

- in a terminal, the textual monitor (:mod:`jointbus.tools.monitor`: joints, nodes, owner,
  e-stop, rates, events), run as a *child process* (``jointbus monitor``) that joins the demo over
  Zenoh on loopback. It is a separate process because textual redraws in the bridge's interpreter
  cost the 500 Hz loop dearly: measured here, in-process the bridge loop's lateness p99 went from
  tens of µs to ≈ 35 ms. ``--no-monitor`` (or ``--isolated``, which opens no Zenoh session)
  shows a compact rich live view instead (mode, owner, height, rates, loop timing, joints);
- with ``--headless``, or when stdout is not a terminal (a pipe, CI), one plain summary line a
  second (mode, owner, height, rates, loop lateness, CPU);
- without the monitor, every WARN, ERROR and STALE report of ``/hb50/status`` as one line on
  stderr (``HH:MM:SS ERROR bridge_node: joint command from 'x' rejected: …``), so a rejected
  command, a watchdog or a dead node shows where the user looks (the monitor lists them among
  its events);
- at the end (``--duration``, Ctrl-C, SIGTERM or quitting the monitor) the stack shuts down —
  control first, then the bridge damps and switches off the drives — and one final line reports
  the base height reached, the mode, the bridge loop's lateness p99 and the CPU use; exit code 0
  when every process of the layout lived through the run.
- when a process of the layout dies: from the moment the launcher knows (its ``ERROR launcher:
  process 'bridge' of the layout was killed by SIGKILL``), the status line and the summary give
  nothing of a dead bridge or its simulator as current (``bridge=gone(killed by SIGKILL 3.2s
  ago)``, no height, rates, owner or loop figures) and blame what is missing (the control node
  has no frames to step on; or its own process died). A bridge process that dies and is not
  started again (no ``respawn``, or a respawn not running within 1 s) ends the run: the robot
  is gone. Any process that died during the run (respawned ones too, and even if the user then
  stops with Ctrl-C) makes the run fail: after the summary, one ``error:`` line
  (:func:`failure_line`) and exit code 1, so a script or CI tells a crashed stack from a clean
  run. Before (a new user's trials, 2026-12-06), the summary blamed the control node and quoted
  the dead simulator's height, the line kept the dead bridge's loop figures for 2–3 s, the demo
  without a bridge never ended, and every such run exited 0. A respawn is named in the summary
  (which process, when it died, when it was heard again), and the run's figures say what part
  of the run they cover.

``--transport inproc`` (default) keeps bridge and control in one bus and offers its topics on
Zenoh (so ``jointbus topic echo /hb50/bridge_data`` in another terminal works); ``--isolated``
opens no Zenoh session at all; ``--transport zenoh`` sends every message between the nodes
through Zenoh (see :mod:`jointbus.stack`). ``--record FILE.mcap`` records every topic with
:class:`jointbus.tools.recorder.Recorder` while the demo runs: the recorder is subscribed before
the robot is commanded (the stack holds its ``stand_up`` until then), so the file begins with the
robot lying and holds the whole stand-up. The file so begins with the nodes' start-up (their
parameters, ``/tf_static``, heartbeats; 1–4 s, more on a loaded host) before the robot's first
frame; ``--duration`` counts from when the robot runs (the start-up line's "runs N s from now"),
and at its end the robot runs on until the file holds that many seconds of its data
(``bridge_data``, first to last frame by the times the bridge sent them; at most 1 s more: its
frames reach the recorder a little late). The line that names the file gives both spans —
``(9.72 s: the nodes' start-up, then the robot's data from +3.72 s, 6.00 s by the wall clock,
6.00 s by their stamps)`` — the frames' stamps are the robot's own time, with its ratio to the
wall clock when they differ by over 2 % (a simulated robot at 0.64 of real time: "40.01 s by the
wall clock, 25.50 s by their stamps (0.64 of real time)") — how many of
the frames sent in that span the file holds when over 1 % are missing, the sequence gaps
(``lost``), and the reason when the robot's data is shorter than asked (the run was stopped
early: how long after it began). Before, the recorder started after
the robot had been commanded: under load the files began with it standing and were 0.6–1.2 s
short of a 10 s run; then the line gave the file's span alone (9.72 s for ``--duration 6``), and
a run stopped early "after 11.04 s", counted from the recorder's start, when the robot had run
4.9 s (a new user's trials, 2026-12-05).
"""

from __future__ import annotations

import contextlib
import math
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final

import typer

from jointbus.cli.errors import CliError, note, user_errors
from jointbus.cli.interrupts import stop_on_interrupt
from jointbus.cli.options import BusOptions, joined_line, joins_bus
from jointbus.cli.report_times import next_report_at

if TYPE_CHECKING:
    from rich.console import RenderableType

    from jointbus.bus import ZenohConfig
    from jointbus.robots.hb50.messages import Status
    from jointbus.stack import Stack, StackSummary
    from jointbus.tools.recorder import TopicRecord

__all__ = [
    "demo",
    "failure_line",
    "final_line",
    "report_line",
    "run_view",
    "start_notes",
    "summary_table",
]

#: Robots the demo runs as a :class:`Stack` (bridge + control node); the others are served by the
#: array node (:mod:`jointbus.cli.served_demo`).
STACK_ROBOTS: Final = ("hb50",)
#: ``jointbus.stack.DEFAULT_RATE_HZ``, spelled out so that declaring ``--rate`` loads no stack
#: (``tests/cli/test_cli_options.py`` compares them).
DEFAULT_RATE_HZ: Final = 500.0
#: Period of the plain and rich summaries (s).
SUMMARY_PERIOD_S = 1.0
#: How often the status reports received are printed (s).
_REPORT_POLL_S = 0.1
#: With ``--record``, how long the run may go on after ``--duration`` (s) until the file holds
#: that much of the robot's data (see :func:`_await_robot_data`), and how often it looks (s).
_RECORD_GRACE_S = 1.0
_RECORD_POLL_S = 0.01


def _fmt(value: float, scale: float = 1.0, digits: int = 0) -> str:
    return "?" if math.isnan(value) else f"{value * scale:.{digits}f}"


def final_line(summary: StackSummary) -> str:
    """The last line a run prints: height reached, mode, owner, the bridge loop over the whole
    run and over its last window, CPU since start."""
    parts = [f"{'+'.join(summary.nodes)} stopped after {summary.elapsed_s:.1f} s:"]
    gone = summary.bridge_gone
    if gone is not None:
        parts.append(
            f"the bridge process {gone.ended} at +{gone.at_s:.1f} s "
            f"({summary.elapsed_s - gone.at_s:.1f} s before the end)"
            + (" and its respawn was not heard yet" if gone.respawn else "")
            + ": no figure of the bridge or the simulator after it,"
        )
    if summary.control_lost:
        age = f"no RobotState for {_fmt(summary.robot_state_age_s, 1, 1)} s"
        why = (
            f"{age}; {summary.control_why}"
            if summary.control_why
            else f"the control node is gone: {age}"
        )
        parts.append(f"mode {summary.motion_mode} ({why}),")
    elif summary.motion_mode is not None:
        parts.append(f"mode {summary.motion_mode},")
    if not math.isnan(summary.true_base_height_m):
        parts.append(f"base height {summary.true_base_height_m:.3f} m")
        if math.isnan(summary.base_height_m):
            parts[-1] += " (simulator; no estimate),"
        else:
            parts.append(f"(estimated {summary.base_height_m:.3f} m),")
    elif not math.isnan(summary.base_height_m):
        parts.append(f"base height {summary.base_height_m:.3f} m (estimated),")
    if summary.owner is not None:
        note = f" (per the bridge; that node: {summary.owner_note})" if summary.owner_note else ""
        parts.append(f"owner {summary.owner}{note},")
    if summary.estop:
        parts.append(f"e-stop latched ({summary.estop}),")
    respawns = [e for e in summary.exits if e.respawn]
    if respawns:
        times = "once" if len(respawns) == 1 else f"{len(respawns)} times"
        parts.append(f"respawned {times}: {'; '.join(e.describe() for e in respawns)},")
    if summary.loop_run is not None:
        # the run's shares from the loop's counts, then its last window: the window alone read
        # "429 Hz achieved (14.3 % skipped)" after a run that kept 500 Hz for minutes
        of = ""
        if math.isfinite(summary.loop_since_s):  # a respawned bridge counts its own life only
            of = f" (of the respawned process only, heard from +{summary.loop_since_s:.1f} s)"
        parts.append(f"bridge loop{of} {summary.loop_run.describe()},")
    elif gone is None:
        parts.append("bridge loop: no figures (no recent report from it),")
    if summary.run_wall_s > 0 and math.isfinite(summary.run_robot_s):
        since = ""
        if math.isfinite(summary.run_since_s):
            end_s = summary.run_since_s + summary.run_wall_s
            since = f" from +{summary.run_since_s:.1f} s to +{end_s:.1f} s"
        gaps = ""
        gap_s, ran_s = summary.run_gap_s, summary.run_wall_s - summary.run_gap_s
        if gap_s > 0 and ran_s > 0:  # a respawned bridge: its robot's time stood still between
            gaps = (
                f"; {gap_s:.1f} s of it without a bridge, "
                f"{summary.run_robot_s / ran_s:.2f} while one ran"
            )
        behind = ""
        if summary.run_behind_s >= 0.001:  # the stamps a user reads carry what the stalls lost
            behind = (
                f"; its last second's frames stamped {summary.run_behind_s * 1e3:.0f} ms behind "
                "the wall clock"
            )
        parts.append(
            f"robot time {summary.run_robot_s:.1f} s in {summary.run_wall_s:.1f} s of the wall "
            f"clock{since} (real-time factor {summary.run_robot_s / summary.run_wall_s:.2f} "
            f"over the run, by its frames' stamps{gaps}{behind}),"
        )
    processes = "all processes, " if summary.transport == "processes" else ""
    cpu = f"CPU {_fmt(summary.cpu_mean_fraction, 100)} % of one core ({processes}mean since start)"
    if summary.simulator_cpu_fraction > 0:
        cpu += f" (simulator physics {_fmt(summary.simulator_cpu_fraction, 100)} %)"
    if summary.host_steal_run_s > 0:  # NaN: not readable; 0: nothing to say
        cpu += (
            f"; the VM's host took {summary.host_steal_run_s:.2f} s of CPU time from this "
            "machine while it had work (steal)"
        )
    parts.append(cpu)
    return " ".join(parts)


def report_line(report: Status) -> str:
    """One status report as the demo prints it: local time, level, reporting node, text."""
    from jointbus.robots.hb50.messages import Level

    stamp = time.strftime("%H:%M:%S", time.localtime(report.header.stamp.to_ns() / 1e9))
    return f"{stamp} {Level(report.level).name} {report.reporting_node}: {report.status}"


class ConsoleReports:
    """What the demo prints of the robot's ``/hb50/status`` (stderr): every WARN / ERROR / STALE
    report, and a node's next OK after one of them, so the console does not end on a problem that
    has cleared. Why: in a user's trial its last word stayed "velocity commands stopped …;
    stopping on four feet" while the robot walked on; the OK that said the commands were back
    was on the bus only."""

    def __init__(self) -> None:
        self._troubled: set[str] = set()  # nodes whose last printed report was a problem

    def print_new(self, stack: Stack) -> None:
        """Print what arrived since the last call."""
        from jointbus.robots.hb50.messages import Level

        for report in stack.take_reports():
            node = report.reporting_node
            if report.level >= Level.WARN:
                note(report_line(report))
                self._troubled.add(node)
            elif report.level == Level.OK and node in self._troubled:
                note(report_line(report))
                self._troubled.discard(node)


def summary_table(summary: StackSummary) -> RenderableType:
    """The rich live view: a status line and the joints table."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    height = summary.true_base_height_m
    if math.isnan(height):
        height = summary.base_height_m
    bridge = summary.bridge_mode or "?"
    if summary.bridge_gone is not None:
        gone = summary.bridge_gone
        bridge += f" ({gone.how} {summary.elapsed_s - gone.at_s:.1f} s ago)"
    owner = summary.owner or "?"
    if summary.owner_note:
        owner += f" ({summary.owner_note})"
    head = Text.assemble(
        ("mode ", "dim"),
        (summary.motion_mode or "?", "bold"),
        ("  bridge ", "dim"),
        (bridge, "bold red" if summary.estop or summary.bridge_gone else "bold"),
        ("  owner ", "dim"),
        (owner, "bold"),
        ("  height ", "dim"),
        (f"{_fmt(height, 1, 3)} m", "bold"),
    )
    if summary.estop:
        head.append(f"  E-STOP: {summary.estop}", style="bold red")
    run = summary.loop_run
    window = _fmt(run.window_s) if run is not None else "?"
    since = (
        f"{_fmt(run.run_skipped_fraction, 100, 2)} % of {run.due} due cycles skipped"
        if run is not None
        else "?"
    )
    rates = Text(
        f"last 1 s: bridge_data {_fmt(summary.bridge_data_hz)} Hz  commands "
        f"{_fmt(summary.command_hz)} Hz  rtf {_fmt(summary.real_time_factor, 1, 3)}  CPU "
        f"{_fmt(summary.cpu_fraction, 100)} %  |  bridge loop, last {window} s: "
        f"{_fmt(summary.loop_rate_hz)} Hz (skipped {_fmt(summary.skipped_fraction, 100, 1)} %)"
        f"  lateness p50/p99/max "
        f"{_fmt(summary.lateness_p50_s, 1e6)}/{_fmt(summary.lateness_p99_s, 1e6)}/"
        f"{_fmt(summary.lateness_max_s, 1e6)} us  |  since start: {since}, overruns "
        f"{summary.overruns}  t={summary.elapsed_s:.0f} s",
        style="dim",
    )
    table = Table(box=None, pad_edge=False)
    for column in ("joint", "position rad", "velocity rad/s", "effort N·m", "temp °C"):
        table.add_column(column, justify="left" if column == "joint" else "right")
    for j in summary.joints:
        table.add_row(
            j.name,
            f"{j.position:+.3f}",
            f"{j.velocity:+.2f}",
            f"{j.effort:+.2f}",
            f"{j.temperature_c:.0f}",
        )
    return Group(head, rates, table)


def _monitor_available() -> bool:
    try:
        import jointbus.tools.monitor.app  # noqa: F401
    except ImportError:
        return False
    return True


def _run_monitor(stack: Stack, end: float | None, zenoh_args: list[str]) -> None:
    """``jointbus monitor`` in a child process on this terminal, until the user quits it (Ctrl+Q)
    or the monotonic time ``end`` passes; the child joins the demo's Zenoh hub on loopback."""
    command = [sys.executable, "-m", "jointbus.cli.main", "monitor"]
    command += ["--namespace", stack.namespace, *zenoh_args]
    child = subprocess.Popen(command)  # inherits the terminal
    try:
        # until the user quits it, ``end``, or the bridge is gone for good (the robot is)
        while end is None or time.monotonic() < end:
            wait = SUMMARY_PERIOD_S
            if end is not None:
                wait = min(wait, end - time.monotonic())
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=max(0.0, wait))
                break
            if stack.bridge_gone_for_good() is not None:
                break
    finally:
        if child.poll() is None:
            child.terminate()  # the monitor closes its full-screen app on SIGTERM
            try:
                child.wait(timeout=5.0)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


def _run_summaries(
    stack: Stack, end: float | None, live: bool, reports: ConsoleReports
) -> None:
    """Plain lines (or a rich live view) every second until the monotonic time ``end`` or
    Ctrl-C."""
    show: Callable[[StackSummary], None]
    context: contextlib.AbstractContextManager[Any]
    if live:
        from rich.live import Live

        view = Live(summary_table(stack.summary()), auto_refresh=False, transient=False)
        context = view

        def show(summary: StackSummary) -> None:
            view.update(summary_table(summary), refresh=True)

    else:
        context = contextlib.nullcontext()

        def show(summary: StackSummary) -> None:
            typer.echo(summary.line())
            sys.stdout.flush()

    with context:
        tick = time.monotonic()
        while end is None or time.monotonic() < end:
            tick = next_report_at(tick, time.monotonic(), SUMMARY_PERIOD_S)
            wake = tick if end is None else min(tick, end)
            while (left := wake - time.monotonic()) > 0:  # reports within 0.1 s of arriving
                time.sleep(min(left, _REPORT_POLL_S))
                reports.print_new(stack)
            show(stack.summary())
            if stack.bridge_gone_for_good() is not None:
                break  # the robot is gone: the run ends (run_view says why, exit code 1)
        reports.print_new(stack)


def failure_line(summary: StackSummary) -> str | None:
    """Why a run was not a clean one, for its one ``error:`` line (exit code 1), or ``None``: a
    process of its layout ended without being asked to — the bridge for good (the robot is
    gone, and the demo ends on it), or any process even if respawned or the user stopped the run
    afterwards with Ctrl-C. A script or CI tells a crashed stack from a clean run by the code."""
    if not summary.exits:
        return None
    gone = summary.bridge_gone
    deaths = "; ".join(e.describe() for e in summary.exits)
    if gone is not None and not gone.respawn:
        return f"the robot is gone: {deaths}, and the layout does not start it again"
    count = "a process" if len(summary.exits) == 1 else f"{len(summary.exits)} processes"
    return f"{count} of the layout died during the run: {deaths}"


def run_view(
    stack: Stack,
    *,
    duration: float | None,
    headless: bool,
    monitor: bool,
    record: Path | None = None,
    zenoh_args: list[str] | None = None,
) -> StackSummary:
    """Start ``stack`` and show it until ``duration`` / Ctrl-C / SIGTERM; stop it; print and
    return the final summary. ``monitor=True`` opens the textual monitor in a child process
    (terminals only, and only when the stack is on Zenoh; ``zenoh_args`` tell it how to join)."""
    from jointbus.stack import StackError

    if duration is not None and not (math.isfinite(duration) and duration > 0):
        raise CliError(f"--duration {duration!r}: expected a number of seconds > 0")
    terminal = sys.stdout.isatty() and not headless
    use_monitor = terminal and bool(monitor) and stack.zenoh is not None and _monitor_available()
    reports = ConsoleReports()
    recorder: Any = None
    summary: StackSummary | None = None
    end: float | None = None
    began: float | None = None  # monotonic time the run began: --duration's origin
    with stop_on_interrupt():
        try:

            def start_recorder(bus: Any) -> None:
                # Before any node runs: the recording holds the robot from its first message.
                nonlocal recorder
                from jointbus.tools.recorder import Recorder

                assert record is not None
                remote = stack.transport in ("zenoh", "processes")
                if stack.transport == "processes":  # this process only records and watches
                    from jointbus.tools.allocator import return_large_blocks

                    return_large_blocks()
                recorder = Recorder(bus, record, remote=remote)
                recorder.start()

            stack.start(before_nodes=start_recorder if record is not None else None)
            # --duration counts from here, once the stack runs: opening the simulator and the
            # nodes (the start-up printed below) is not part of it.
            started_s = stack.summary().elapsed_s
            began = time.monotonic()
            end = None if duration is None else began + duration
            note(
                f"jointbus: {_where(stack)}; started in {started_s:.1f} s"
                + (f", runs {duration:g} s from now" if duration is not None else "")
                + "; Ctrl-C stops"
            )
            joined = joined_line(stack.bus)
            if joined is not None:
                note(joined)
            for warning in (stack.realtime_note, *stack.neighbour_notes):
                if warning is not None:
                    note(f"WARN {warning}")
            for line in start_notes(stack):
                note(line)
            with contextlib.suppress(KeyboardInterrupt):
                if use_monitor:  # it ends with the bridge, too (_run_monitor)
                    _run_monitor(stack, end, zenoh_args or [])
                else:
                    _run_summaries(stack, end, live=terminal, reports=reports)
                if recorder is not None and end is not None and time.monotonic() >= end - 0.05:
                    _await_robot_data(recorder, _robot_topic(stack), duration or 0.0)
            summary = stack.summary()
        finally:
            with contextlib.suppress(KeyboardInterrupt):
                if recorder is not None:
                    now = time.monotonic()
                    ran_s = None if began is None else now - began
                    stopped_early = end is None or now < end - 0.05
                    stopped_ns = time.time_ns()
                    stats = recorder.stop()
                    note(
                        _recorded_line(
                            stats,
                            record,
                            duration,
                            robot=recorder.topic_record(_robot_topic(stack)),
                            ran_s=ran_s,
                            early=stopped_early,
                            stopped_ns=stopped_ns,
                        )
                    )
                stack.stop()
                # what the nodes said as they stopped (the control node's last words, the
                # bridge leaving the drives damped): a user's walking robot was stopped with
                # Ctrl-C and these were on the bus only, not on the console); a stack that did
                # not start says why in one error line, and nothing else
                if began is not None:
                    reports.print_new(stack)
    if summary is None:  # pragma: no cover - start() raised, and that propagated
        raise StackError("the stack did not run")
    typer.echo(final_line(summary))
    failure = failure_line(summary)
    if failure is not None:
        raise CliError(failure)
    return summary


def _robot_topic(stack: Stack) -> str:
    """The topic whose messages are the robot running: the bridge's frames."""
    return f"/{stack.namespace}/bridge_data" if stack.namespace else "/bridge_data"


def _await_robot_data(recorder: Any, topic: str, duration: float) -> None:
    """Keep the robot running until the file holds ``duration`` s of its data (``topic``, first
    to last message by their publish times), at most :data:`_RECORD_GRACE_S` more: the robot's
    first frames reach the recorder a little after the run begins, its last ones a little after
    they are sent (under load 0.1–0.3 s in all), and a file stopped at the end of the run held
    that much less."""
    give_up = time.monotonic() + _RECORD_GRACE_S
    while time.monotonic() < give_up:
        held = recorder.topic_record(topic)
        if held is not None and held.sent_span_s >= duration:
            return
        time.sleep(_RECORD_POLL_S)


#: Share of the robot's frames (within the span the file holds) below which ``--record``'s line
#: says how many are missing (a recorder that fell behind on a busy host).
_MISSING_NOTED: Final = 0.01


def _recorded_line(
    stats: Any,
    path: Path | None,
    duration: float | None,
    *,
    robot: TopicRecord | None,
    ran_s: float | None,
    early: bool,
    stopped_ns: int | None = None,
) -> str:
    """What ``--record`` wrote: counts, the file's span and, within it, the robot's data (the
    bridge's frames, first to last, by the times the bridge sent them — ``robot``), how many of
    the frames sent in that span (by their sequence numbers) the file holds when over 1 % are
    missing, the sequence gaps, and why the robot's data is shorter than asked. The file's span
    (what ``jointbus info`` calls its duration) also holds the nodes' start-up before the
    robot's first frame; ``--duration`` counts from when the robot runs, as ``ran_s`` (None: the
    run never began) does.

    Why publish times: a new user's recorder, on a host with eight CPU-bound processes beside
    the robot, received frames up to 22 s late and lost most of them; the line, from receive
    times, said "41.27 s of the robot's data" for frames the bridge had sent over 19.6 s, and
    nothing about the frames missing. Why the frames' stamps too (:func:`~jointbus.cli.record.
    clock_spans`): they are the robot's own time, and a simulated robot on a starved host ran at
    0.64 of real time — "40.01 s of the robot's data" by the wall clock held 25.5 s of it.

    ``stopped_ns`` (the wall clock, ns, when the recorder was stopped): frames the bridge sent
    after the last one the file holds were never written — still on their way to a recorder
    that fell behind, or lost — and counted nowhere else (sequence gaps need a later frame).
    When the last frame in the file was sent more than :data:`_TAIL_NOTED_S` before the stop,
    the line says so, with how many frames the bridge sent in that time at its rate in the file
    (≈). A trial's 10 s ``--record`` beside another robot's real-time threads wrote 2.20 s of
    the robot's data, its last frame sent 9.7 s before the stop, and said only "lost 1805"."""
    text = f"recorded {stats.messages} messages on {stats.topics} topics to {path} "
    robot_s = math.nan
    if robot is None:
        text += f"({stats.span_s:.2f} s)"
    else:
        from jointbus.cli.record import clock_spans

        robot_s = robot.sent_span_s
        # From its first frame's send time, as the spans after it are by send times: from the
        # receive time, "+2.45 s, 6.32 s by the wall clock" of an 8.57 s file added up to
        # 8.77 s (its first frame had reached the recorder 0.195 s late; a trial, 2026-12-07)
        first = robot.first_pub_ns or robot.first_ns
        text += (
            f"({stats.span_s:.2f} s: the nodes' start-up, then the robot's data from "
            f"+{(first - stats.first_ns) / 1e9:.2f} s, {clock_spans(robot)}"
        )
        sent = robot.sent
        if sent is not None and robot.count < (1.0 - _MISSING_NOTED) * sent:
            text += (
                f"; {robot.count} of the {sent} frames the bridge sent in that time, "
                f"{100.0 * (1.0 - robot.count / sent):.0f} % not recorded: the recorder fell "
                "behind (too little CPU for it on this host?)"
            )
        text += ")"
    if stats.lost:
        from jointbus.cli.record import LOST_MEANING  # the recorder's words, where they are used

        text += f"; lost {stats.lost} ({LOST_MEANING})"
    if duration is None or robot_s >= duration - 0.1:
        return text
    if early:
        why = (
            "the run was stopped during its start-up"
            if ran_s is None
            else f"the run was stopped {ran_s:.2f} s after it began (at 'runs {duration:g} s "
            "from now')"
        )
    elif stats.messages == 0:
        why = "nothing was received"
    elif robot is None:
        why = f"none of the robot's data reached the recorder in its {stats.elapsed_s:.2f} s"
    else:
        ran = "" if ran_s is None else f"the run lasted {ran_s:.2f} s; "
        why = f"{ran}the robot's data in the file was sent over {robot_s:.2f} s"
        tail = _unwritten_tail(robot, stopped_ns)
        if tail:
            why += f": {tail}"
    return f"{text}, not the {duration:g} s asked: {why}"


#: Seconds between the last frame the file holds (sent) and the recorder's stop beyond which
#: ``--record``'s line says the frames after it were never written: more than the transport's
#: delay and the robot's 1 s grace at the end (:func:`_await_robot_data`).
_TAIL_NOTED_S: Final = 1.5


def _unwritten_tail(robot: TopicRecord, stopped_ns: int | None) -> str:
    """The frames sent after the last one in the file (see :func:`_recorded_line`), or ``""``."""
    if stopped_ns is None:
        return ""
    tail_s = (stopped_ns - robot.last_pub_ns) / 1e9
    if not tail_s > _TAIL_NOTED_S:
        return ""
    sent = robot.sent if robot.sent is not None else robot.count
    about = ""
    if robot.sent_span_s > 0 and sent > 1:
        about = f" (≈ {round((sent - 1) / robot.sent_span_s * tail_s)} frames at its rate)"
    return (
        f"the last frame written was sent {tail_s:.2f} s before the recorder stopped, and what "
        f"the bridge sent after it{about} was never written: the recorder fell behind (too "
        "little CPU for it on this host?)"
    )


def _where(stack: Stack) -> str:
    """What runs where, for the start-up line: the processes of a layout (nodes, CPU, priority)
    and the file they come from, or the nodes of this process and their transport."""
    layout = stack.layout
    url = stack.url
    if layout is not None and "bridge" not in layout.nodes:
        # no process of the layout opens the actuators: "on sim://hb50 … stepped by the
        # bridge's loop" named a simulator nothing ran (a new user's trial, 2026-12-07)
        url = "no actuators of its own (the layout runs no bridge)"
    elif "realtime=false" in url:
        # a trial read "realtime=false" beside SCHED_FIFO processes as "not real time": say what
        # it means here — no clock of the simulator's own; the bridge's loop steps it
        url += " (stepped by the bridge's loop, on the wall clock)"
    if layout is None:
        if stack.bridge is None:  # `jointbus control`: this node alone, its bridge elsewhere
            return f"{' + '.join(stack.nodes)} in this process, its bridge over Zenoh"
        how = (
            "over Zenoh"
            if len(stack.nodes) == 1
            else ("in-process only" if stack.zenoh is None else f"transport {stack.transport}")
        )
        return f"{' + '.join(stack.nodes)} on {url} in one process, {how}"
    # what each process applies on this host, not what the layout asked for: a layout's CPU 7
    # on a 2-CPU host read "bridge on CPU 7" while its loop ran on CPUs 0-1
    # each with its pid once it runs: a user stopping the control process to see what the robot
    # does had to find it by its command line (a trial, 2026-12-06)
    group = stack.processes
    parts = []
    for placement in stack.placements:
        text = placement.describe()
        pid = None if group is None else group.pid(placement.process)
        parts.append(text if pid is None else f"{text[:-1]}, pid {pid})")
    transport = stack.bus.transport
    where = "" if transport is None else transport.where
    wire = where if where.startswith("DDS") else f"Zenoh ({where})"
    joined = f"; joined over {wire}"
    if layout.same_host_link and len(parts) > 1:
        joined += ", their per-cycle streams by same-host links"
    processes = "1 process" if len(parts) == 1 else f"{len(parts)} processes"
    return (
        f"{stack.robot} on {url} in {processes}: {', '.join(parts)} "
        f"— layout {layout.source}{joined}"
    )


def start_notes(stack: Stack) -> list[str]:
    """The lines after the start-up line about the layout: a WARN per CPU or priority it asked
    for and its process does not get on this host (:attr:`Stack.placements`), and, once, that
    nothing commands the robot when the layout leaves out the control node (allowed: a user's
    own controller takes its place; before, such a run said nothing, and its status lines read
    ``commands=0Hz``)."""
    lines = [f"WARN {text}" for placement in stack.placements for text in placement.warnings]
    layout = stack.layout
    if layout is not None and "control" not in layout.nodes:
        topic = f"/{stack.namespace}/joint_command" if stack.namespace else "/joint_command"
        lines.append(
            f"jointbus: no control node in this layout: the robot is held until a controller "
            f"publishes {topic}"
        )
    if layout is not None and "bridge" not in layout.nodes:
        lines.append(
            "jointbus: no bridge in this layout: nothing here opens the actuators or steps a "
            f"simulator; the control node waits for a bridge of {stack.robot} on the bus "
            "(another machine's, on this hub and domain), and the status line reads "
            "bridge=? until one is heard"
        )
    return lines


@joins_bus()
def demo(  # noqa: PLR0917 (typer maps parameters to options)
    headless: Annotated[
        bool, typer.Option("--headless", help="Plain summary lines, no terminal UI.")
    ] = False,
    duration: Annotated[
        float | None,
        typer.Option(
            "--duration",
            min=0.001,
            help="Run SECONDS once the robot is running (default: until Ctrl-C). Not counted: "
            "opening the simulator and the nodes before (hb50 prints it as 'started in S s'; "
            "its status lines' t= and final 'stopped after' count from its beginning, so they "
            "end near S + SECONDS), Python's start-up and the clean shutdown after. With "
            "--record, the robot runs on (at most 1 s) until the file holds SECONDS of its data.",
        ),
    ] = None,
    layout: Annotated[
        str,
        typer.Option(
            "--layout",
            help="Which node runs in which process. processes (default): the robot's launch "
            "file (hb50: the simulator and bridge on CPU 0, the control node on CPU 1, joined "
            "over Zenoh); inproc: every node in this process; or a launch file of your own "
            "(YAML; copy src/jointbus/robots/hb50/launch.yaml).",
        ),
    ] = "processes",
    transport: Annotated[
        str,
        typer.Option(
            "--transport",
            help="With --layout inproc: inproc, the nodes share one bus (topics offered on "
            "Zenoh); zenoh, every message between them goes through Zenoh.",
        ),
    ] = "inproc",
    isolated: Annotated[
        bool,
        typer.Option("--isolated", help="Open no Zenoh session: nothing outside sees the robot."),
    ] = False,
    record: Annotated[
        Path | None, typer.Option("--record", help="Record every topic to this MCAP file.")
    ] = None,
    monitor: Annotated[
        bool,
        typer.Option(
            "--monitor/--no-monitor",
            help="In a terminal, show the textual monitor (a child process joined over Zenoh); "
            "--no-monitor shows a compact live view instead.",
        ),
    ] = True,
    realtime: Annotated[
        bool | None,
        typer.Option(
            "--realtime/--no-realtime",
            help="SCHED_FIFO and 1 ns timer slack for the robot's loops where the OS allows it. "
            "Default: real time unless another real-time program (another robot) already runs "
            "on this host — two stall each other; --realtime forces it beside one.",
            show_default=False,
        ),
    ] = None,
    rate: Annotated[
        float,
        typer.Option(
            "--rate",
            help="hb50: the bridge's cycle rate in Hz, and so the control node's (one step per "
            "frame) and the simulator's (one physics period per cycle): 500 (default) or 1000; "
            "250 and 2000 also divide the physics step.",
        ),
    ] = DEFAULT_RATE_HZ,
    robot: Annotated[
        str,
        typer.Option(
            "--robot",
            help="Bundled robot to simulate: hb50 (bridge + control node, stands up); arm6, "
            "rover (served by the array node as `jointbus serve` does, and moved).",
        ),
    ] = "hb50",
    *,
    bus_options: BusOptions,
) -> None:
    """Run a simulated robot: hb50 stands up under its control node; arm6 and rover are served by
    the array node and moved.

    Exit code 0 when the run ends (--duration, Ctrl-C, SIGTERM) with every process of its layout
    alive all along; 1, after the summary and one error: line, when a process of the layout
    died during the run (respawned or not, Ctrl-C or not). When the bridge process dies and is
    not started again, the robot is gone: the demo ends by itself, with exit code 1."""
    from jointbus.stack import DEFAULT_REALTIME, TRANSPORTS, Stack, StackError, rate_problem

    with user_errors():
        if robot not in STACK_ROBOTS:
            from jointbus.cli.served_demo import run_served_demo

            if transport != "inproc":
                raise CliError(f"--transport {transport}: only hb50 runs nodes that talk over it")
            if rate != DEFAULT_RATE_HZ:
                raise CliError(f"--rate {rate:g}: only hb50 runs a bridge loop at a chosen rate")
            if layout != "processes":  # a trial's launch file for arm6 was ignored unsaid
                raise CliError(
                    f"--layout {layout}: only hb50 runs in a process layout ({robot} is one "
                    "served array in this process)"
                )
            with stop_on_interrupt():
                run_served_demo(
                    robot,
                    zenoh=(None if isolated else bus_options.zenoh_config()),
                    duration=duration,
                    record=record,
                )
            return
        expected = rate_problem(rate)
        if expected is not None:
            # a usage error (exit 2, `Usage:` and `Error:` lines), before anything starts: it was
            # one `error:` line (exit 1), and a rate the simulator cannot step was refused only
            # by the bridge's process, once the layout's processes had started
            raise typer.BadParameter(f"{rate:g} Hz; expected {expected}", param_hint="'--rate'")
        if transport not in TRANSPORTS:
            raise CliError(f"--transport {transport!r}: expected one of {', '.join(TRANSPORTS)}")
        if isolated and transport == "zenoh":
            raise CliError("--isolated and --transport zenoh exclude each other")
        if layout == "processes" and (isolated or transport != "inproc"):
            layout = "inproc"  # one process: isolated (no Zenoh to join processes) or its transport
        config: ZenohConfig | None = None if isolated else bus_options.zenoh_config()
        try:
            stack = Stack(
                robot,
                transport=transport,
                zenoh=config,
                realtime=None if realtime is False else DEFAULT_REALTIME,
                rate_hz=rate,
                layout=layout,
                realtime_if_alone=realtime is None,
            )
        except (StackError, LookupError, ValueError) as exc:
            raise CliError(str(exc)) from None
        run_stack(
            stack,
            duration=duration,
            headless=headless,
            monitor=monitor,
            record=record,
            zenoh_args=bus_options.command_line(),
        )


def run_stack(
    stack: Stack,
    *,
    duration: float | None,
    headless: bool,
    monitor: bool,
    record: Path | None = None,
    zenoh_args: list[str] | None = None,
) -> StackSummary:
    """:func:`run_view` with the errors a user can fix turned into ``error:`` lines."""
    from jointbus.drivers.errors import DriverError
    from jointbus.stack import StackError
    from jointbus.tools.errors import ToolError

    try:
        return run_view(
            stack,
            duration=duration,
            headless=headless,
            monitor=monitor,
            record=record,
            zenoh_args=zenoh_args,
        )
    except (DriverError, StackError, ToolError) as exc:
        raise CliError(str(exc)) from None
