"""A node's WARN, ERROR and STALE reports as console lines, for commands that run a node.

Where it sits: :mod:`jointbus.cli`, used by ``jointbus serve`` (the demo prints its stack's reports
the same way). Imported when the command runs, never to show its ``--help``.

Why: a served array reports every refused command, watchdog and thermal event on ``/<ns>/status``,
which only a subscriber sees; ``jointbus serve`` printed none of it, so the person at the server's
terminal learnt nothing of a client's refused command or an overheating joint. Reports are taken
from the status topic as they are published (a realtime callback only queues them: the node's
thread never writes to a terminal or a full pipe) and printed by the command's main thread.
"""

from __future__ import annotations

import queue
import time
from typing import TYPE_CHECKING, Final

from jointbus.cli.errors import note
from jointbus.cli.options import cli_node_name
from jointbus.messages.status import Level, Status

if TYPE_CHECKING:
    from jointbus.bus import Bus

#: Queue depth of the status subscription: a burst of reports between two prints is kept.
STATUS_DEPTH: Final = 100


def report_line(report: Status) -> str:
    """One report as the console shows it: local time, level, reporting node, text
    (``12:03:04 ERROR array_node: multi_position from 'x' refused (INVALID): …``)."""
    stamp = time.strftime("%H:%M:%S", time.localtime(report.header.stamp.to_ns() / 1e9))
    return f"{stamp} {Level(report.level).name} {report.reporting_node}: {report.status}"


class StatusLines:
    """Every report of ``level`` or worse published on ``topic`` of ``bus``, printed on stderr
    by :meth:`print_pending` (call it from the command's main loop)."""

    def __init__(self, bus: Bus, topic: str, level: Level = Level.WARN) -> None:
        from jointbus.bus import RELIABLE

        self._level = level
        self._pending: queue.SimpleQueue[Status] = queue.SimpleQueue()
        bus.subscribe(
            topic,
            Status,
            self._pending.put,
            RELIABLE.with_(depth=STATUS_DEPTH),
            realtime=True,
            node=cli_node_name(),
        )

    def print_pending(self) -> int:
        """Print the reports received since the last call; returns how many were printed."""
        printed = 0
        while True:
            try:
                report = self._pending.get_nowait()
            except queue.Empty:
                return printed
            if report.level >= self._level:
                note(report_line(report))
                printed += 1


__all__ = ["STATUS_DEPTH", "StatusLines", "report_line"]
