"""``jointbus record FILE.mcap [TOPIC ...]``: record the bus (every topic by default) to MCAP.

Where it sits: :mod:`jointbus.cli`, a thin wrapper around :class:`jointbus.tools.recorder.Recorder`
with its remote (Zenoh) source: this process joins the jointbus Zenoh network and stores each
payload exactly as received. It joins the bus like every other command (``--hub-port`` /
``JOINTBUS_HUB_PORT``, ``--connect`` / ``JOINTBUS_CONNECT``, ``--router`` / ``JOINTBUS_ROUTER``,
``--domain-id`` / ``ROS_DOMAIN_ID``; see :mod:`jointbus.cli.options`). In a terminal, a status line
shows messages, megabytes and the message rate (``-q`` hides it; off a terminal it is not drawn);
Ctrl-C (or SIGTERM, or ``--duration``) stops the recording and writes the MCAP summary. A recorder
that is killed instead loses at most its last ``--flush-interval`` of messages; ``jointbus info``
reads such a file and reports it as truncated.
"""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Final, TextIO

import typer

from jointbus.cli.errors import note, user_errors
from jointbus.cli.interrupts import stop_on_interrupt
from jointbus.cli.options import BusOptions, joins_bus, where_to_look

if TYPE_CHECKING:
    from jointbus.tools.recorder import Recorder, RecorderStats, TopicRecord

#: ``jointbus.tools.recorder.DEFAULT_FLUSH_INTERVAL`` (s), spelled out so that declaring the
#: option imports no recorder (``tests/cli/test_cli_record.py`` compares them).
DEFAULT_FLUSH_INTERVAL: Final = 0.5


def _topics(count: int) -> str:
    """``1 topic``, ``3 topics``."""
    return f"{count} topic" if count == 1 else f"{count} topics"


def status_text(stats: RecorderStats, rate_hz: float) -> str:
    """The status line: messages, megabytes, current rate (msg/s), topics, and any losses —
    each count says what it counts (a bare "lost 204" left users guessing)."""
    text = (
        f"recording: {stats.messages} msgs  {stats.bytes / 1e6:.2f} MB  {rate_hz:.0f} msg/s  "
        f"{_topics(stats.topics)}  {stats.elapsed_s:.1f} s"
    )
    if stats.lost or stats.skipped:
        text += f"  lost {_lost(stats)}  skipped {stats.skipped} ({SKIPPED_MEANING})"
    return text


def _lost(stats: RecorderStats) -> str:
    """``lost`` with what it counts, and how many of the gaps were on reliable topics."""
    return f"{stats.lost} ({LOST_MEANING}; {stats.lost_reliable} on reliable topics)"


def _held(stats: RecorderStats, stopped_ns: int) -> str:
    """What the summary adds after the recording's own time: the messages' span (what
    ``jointbus info`` calls the file's duration) when it is a second or more shorter, and how
    long before the stop the last message arrived when that is more than
    :data:`SILENT_NOTED_S` — a user's recorder on a busy host ran 70.4 s, held 22.9 s of
    messages and said only "70.4 s"."""
    if not stats.messages or stats.elapsed_s - stats.span_s < 1.0:
        return ""
    text = f"; the messages span {stats.span_s:.1f} s"
    silent_s = (stopped_ns - stats.last_ns) / 1e9
    if silent_s > SILENT_NOTED_S:
        text += f", none arrived in the last {silent_s:.1f} s"
    return text


def clock_spans(record: TopicRecord) -> str:
    """``40.01 s by the wall clock, 25.50 s by their stamps (0.64 of real time)``: how long the
    messages of one stamped topic cover by the times they were sent and by their header stamps
    (the publisher's own clock: a simulated robot's time), with the ratio of the two when they
    differ by more than :data:`CLOCKS_DIFFER` — or the wall clock's alone for an unstamped topic.

    Why both: a recording's summary said "40.01 s of the robot's data" by the frames' send times
    while the simulated robot, on a starved host, ran at 0.64 of real time: its frames' stamps
    spanned 25.5 s of its own time. Either figure alone misleads the reader who expects the
    other."""
    wall = record.sent_span_s
    text = f"{wall:.2f} s by the wall clock"
    stamps = record.stamp_span_s
    if stamps is None:
        return text
    text += f", {stamps:.2f} s by their stamps"
    if wall > 0.0 and abs(stamps / wall - 1.0) > CLOCKS_DIFFER:
        text += f" ({stamps / wall:.2f} of real time)"
    return text


def _stamped_spans(recorder: Recorder) -> str:
    """The summary's clause on the busiest stamped topic (:func:`clock_spans`), or nothing."""
    topic = recorder.busiest_stamped_topic()
    record = None if topic is None else recorder.topic_record(topic)
    if topic is None or record is None or record.count < 2:
        return ""
    return f"; {topic}: {record.count} messages over {clock_spans(record)}"


#: Relative difference between a topic's wall-clock span and its stamps' span above which the
#: summary gives their ratio (a robot simulated slower or faster than real time).
CLOCKS_DIFFER: Final = 0.02
#: Seconds without a message before the stop that the summary names (see :func:`_held`).
SILENT_NOTED_S: Final = 2.0
#: What ``lost`` counts, as the status line and the summary say it.
LOST_MEANING: Final = "sequence gaps: published, never received"
#: What ``skipped`` counts.
SKIPPED_MEANING: Final = "received, not recordable"

#: Seconds after which a recorder that has found no topic says so (the recording goes on).
NO_TOPIC_WARNING_S: Final = 3.0


class StatusLine:
    """The live status line on stderr: redrawn in place in a terminal, ended with a newline.

    Off a terminal (a pipe, a log file) nothing is drawn: carriage returns would garble it, and the
    final summary line says what was recorded.
    """

    def __init__(self, stream: TextIO, *, enabled: bool) -> None:
        self._stream = stream
        self._enabled = enabled and stream.isatty()
        self._drawn = False

    def show(self, text: str) -> None:
        """Replace the line with ``text``."""
        if self._enabled:
            self._stream.write(f"\r{text}\x1b[K")
            self._stream.flush()
            self._drawn = True

    def end(self) -> None:
        """Finish the line so the next output starts on a line of its own."""
        if self._drawn:
            self._stream.write("\n")
            self._stream.flush()
            self._drawn = False


@joins_bus()
def record(
    file: Annotated[Path, typer.Argument(help="Output MCAP file (overwritten).")],
    topics: Annotated[
        list[str] | None, typer.Argument(help="Topics to record (default: every topic).")
    ] = None,
    duration: Annotated[
        float | None, typer.Option(help="Stop after this many seconds (default: until Ctrl-C).")
    ] = None,
    flush_interval: Annotated[
        float, typer.Option(help="Write the chunk in progress at least this often (s).")
    ] = DEFAULT_FLUSH_INTERVAL,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No live status line (the summary stays).")
    ] = False,
    *,
    bus_options: BusOptions,
) -> None:
    """Record bus traffic to an MCAP file (ros2msg schemas, CDR, zstd chunks).

    Warns when no message has arrived after 3 s, and exits with code 1 if nothing was recorded
    (the file is still a valid, empty MCAP file).

    The status line and the summary count 'lost': messages missing from a remote publisher's
    sequence numbers (each sample carries its publisher's sequence number; a jump from 7 to 10
    counts 2), i.e. published but never received here — best-effort topics under load (the
    count says how many were on reliable topics: none should be); and 'skipped': messages
    received but not recordable (type unknown to the message registry, or no rmw_zenoh
    attachment naming the publisher).
    """
    from jointbus.tools.allocator import return_large_blocks
    from jointbus.tools.errors import ToolError
    from jointbus.tools.recorder import Recorder

    return_large_blocks()  # this process records for hours: its RSS must not creep

    with user_errors():
        bus = bus_options.open_bus()
    # what the bus joined, Zenoh's or DDS's (a trial's DDS recording said "hub port 7447")
    where = "in this process" if bus.transport is None else f"on {bus.transport.where}"
    signals = contextlib.ExitStack()
    signals.enter_context(stop_on_interrupt())  # until the finally below
    status = StatusLine(sys.stderr, enabled=not quiet)
    try:
        recorder = Recorder(
            bus, file, topics or None, local=False, remote=True, flush_interval=flush_interval
        )
        recorder.start()
        if not quiet:
            wanted = " ".join(topics) if topics else "every topic"
            stops = "Ctrl-C stops"
            if duration is not None:
                stops = f"stops after {duration:g} s or at Ctrl-C"
            note(f"recording {wanted} (joined the bus {where}) to {file}; {stops}")
        deadline = None if duration is None else time.monotonic() + duration
        warn_at: float | None = time.monotonic() + NO_TOPIC_WARNING_S
        last = recorder.stats()
        try:
            while deadline is None or time.monotonic() < deadline:
                time.sleep(
                    0.25 if deadline is None else max(0.0, min(0.25, deadline - time.monotonic()))
                )
                now = recorder.stats()
                dt = now.elapsed_s - last.elapsed_s
                rate = (now.messages - last.messages) / dt if dt > 0 else 0.0
                status.show(status_text(now, rate))
                last = now
                if warn_at is not None and time.monotonic() >= warn_at:
                    warn_at = None
                    if now.messages == 0:
                        status.end()
                        wanted = " ".join(topics) if topics else "any topic"
                        note(
                            f"warning: no message on {wanted} after {NO_TOPIC_WARNING_S:g} s "
                            f"(joined the bus {where}; is a jointbus program running there? "
                            f"{where_to_look(bus)})"
                        )
        except KeyboardInterrupt:
            pass
        status.end()
        stats = recorder.stop()
    except ToolError as exc:
        status.end()
        note(f"error: {exc}")
        raise typer.Exit(1) from exc
    finally:
        signals.close()
        bus.close()
    note(
        f"recorded {stats.messages} messages on {_topics(stats.topics)} to {file} "
        f"({stats.bytes / 1e6:.2f} MB in {stats.elapsed_s:.1f} s{_held(stats, time.time_ns())})"
        + _stamped_spans(recorder)
        + (
            f"; lost {_lost(stats)}, skipped {stats.skipped} ({SKIPPED_MEANING})"
            if stats.lost or stats.skipped
            else ""
        )
    )
    if stats.messages == 0:
        note(f"error: recorded nothing (joined the bus {where})")
        raise typer.Exit(1)


__all__ = [
    "LOST_MEANING",
    "NO_TOPIC_WARNING_S",
    "SILENT_NOTED_S",
    "SKIPPED_MEANING",
    "StatusLine",
    "record",
    "status_text",
]
