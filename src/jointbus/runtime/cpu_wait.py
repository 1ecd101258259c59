"""How long this process's threads waited for a CPU: stopped (or frozen) versus starved.

Where it sits: :mod:`jointbus.runtime`, read by components that tell a stall of their own process
apart from starvation (the hb50 control node's pace, :mod:`jointbus.robots.hb50.control.step_pace`).
Standard library only.

Why: a thread that did not run for a while was either *not runnable* — stopped (SIGSTOP, a
debugger), blocked, or the whole host frozen — or *runnable and waiting for a CPU* that other
work held (a CPU hog, another program's SCHED_FIFO threads). The kernel counts the second per
thread: the second field of ``/proc/<pid>/task/<tid>/schedstat`` is the time (ns) the thread spent
on a run queue waiting. A trial (2026-12-06) saw the control node report a 0.28 s gap between two
steps as "its process did not run — stopped or frozen, not starved of CPU" while another robot's
real-time threads held both CPUs; nothing had been stopped. The most any one thread waited over a
span says which it was: a stopped process's threads wait for nothing.
"""

from __future__ import annotations

import os

__all__ = ["most_waited_s", "thread_waits", "wait_rates"]


def thread_waits() -> dict[int, int]:
    """This process's threads' cumulative run-queue wait (ns), by thread id; empty where the
    kernel does not count it (no ``schedstat``). Reads one small file per thread (about 10 µs
    each): for a look now and then, not every control cycle."""
    waits: dict[int, int] = {}
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return waits
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/schedstat", encoding="ascii") as stat:
                fields = stat.read().split()
            waits[int(tid)] = int(fields[1])
        except (OSError, IndexError, ValueError):
            continue  # a thread that ended meanwhile
    return waits


def most_waited_s(
    before: dict[int, int],
    after: dict[int, int],
    *,
    usual: dict[int, float] | None = None,
    usual_s: float = 0.0,
) -> float:
    """The longest any one thread present in both readings waited for a CPU between them (s),
    less, with ``usual`` (each thread's usual waiting, s per s — :func:`wait_rates` of two
    earlier readings), what it usually waits in ``usual_s`` of the span: on a loaded host a
    thread that wakes 500 times a second waits a little at every wake, which adds up to a good
    share of a second without any stall."""
    usual = usual or {}
    grown = [
        (after[tid] - wait) / 1e9 - usual.get(tid, 0.0) * usual_s
        for tid, wait in before.items()
        if tid in after
    ]
    return max(grown, default=0.0)


def wait_rates(before: dict[int, int], after: dict[int, int], span_s: float) -> dict[int, float]:
    """Each thread's run-queue wait per second (s/s) between two readings ``span_s`` apart."""
    if span_s <= 0.0:
        return {}
    return {tid: (after[tid] - w) / 1e9 / span_s for tid, w in before.items() if tid in after}
