"""How long this process's threads waited for a CPU: a stopped process versus a starved one.

Where it sits: :mod:`jointbus.runtime`, read by components that tell a stall of their own process
apart from starvation (the hb50 control node's pace,
:mod:`jointbus.robots.hb50.control.step_pace`). Standard library only.

Why: a thread that did not run for a while was either *not runnable* — stopped (SIGSTOP, a
debugger), blocked, or the whole host frozen — or *runnable and waiting for a CPU* that other
work held (a CPU hog, another program's SCHED_FIFO threads). The kernel counts the second per
thread: the second field of ``/proc/<pid>/task/<tid>/schedstat`` is the time (ns) the thread spent
on a run queue waiting. A trial (2026-12-06) saw the control node report a 0.28 s gap between two
steps as "its process did not run — stopped or frozen, not starved of CPU" while another robot's
real-time threads held both CPUs; nothing had been stopped. The most any one thread waited over a
span says which it was: a stopped process's threads wait for nothing.

**Not for a hard-timed thread.** A reading opens one file per thread: 101 threads took 11-18 ms
(median; up to 67 ms) on this 2-CPU VM at load 8 (2026-12-06; ``open()`` with a text wrapper took
39-45 ms, hence the raw ``os.open``). Read it on a slow thread — a node's timer thread — never in
a control step: done in the step, it stalled the hb50 control step 250 ms beside a second stack
and tripped the bridge's watchdog (c70ecf3, reverted in c4b6c18). Each file read releases the GIL,
so the other threads of the process run meanwhile.
"""

from __future__ import annotations

import os

__all__ = ["most_waited_s", "thread_waits", "wait_rates"]

_TASKS = "/proc/self/task"


def thread_waits() -> dict[int, int]:
    """This process's threads' cumulative run-queue wait (ns), by thread id; empty where the
    kernel does not count it (no ``schedstat``: a kernel without ``CONFIG_SCHED_INFO``, not
    Linux). Opens one small file per thread — see the module docstring for its cost and where
    not to call it."""
    waits: dict[int, int] = {}
    try:
        tids = os.listdir(_TASKS)
    except OSError:
        return waits
    for tid in tids:
        try:
            fd = os.open(f"{_TASKS}/{tid}/schedstat", os.O_RDONLY)
            try:
                fields = os.read(fd, 128).split()
            finally:
                os.close(fd)
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
    share of a second without any stall. 0.0 when no thread is in both."""
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
