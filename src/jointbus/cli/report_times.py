"""When a command's next periodic line is due: the status lines of ``jointbus demo`` (and its
served robots) and the reports of ``jointbus topic hz``.

Where it sits: :mod:`jointbus.cli`, beside the commands that print once a period; no jointbus
imports.

Why a grid that skips: a command starved of CPU on a busy host wakes past one or more of its
lines. Printing each missed one on waking puts lines in a burst whose figures are from the same
instant — a new user's demo printed two lines in a row reading ``t= 59.0s`` (2026-12-05, load
17), and ``topic hz`` a run of ``no new messages`` — so the missed lines are skipped and the next
one is on the same grid after now.
"""

from __future__ import annotations

import math

__all__ = ["next_report_at"]


def next_report_at(previous: float, now: float, period: float) -> float:
    """The first point of the ``period`` grid through ``previous`` that is after ``now`` (all in
    seconds of one clock, e.g. ``time.monotonic()``)."""
    due = previous + period
    if due <= now:
        due += math.ceil((now - due) / period + 1e-9) * period
    return due
