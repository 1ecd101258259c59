"""Time the VM's host kept this machine's CPUs from running: steal, which no process here controls.

Where it sits: :mod:`jointbus.runtime`, standard library only. Read by the hb50 bridge's pace
reports (:mod:`jointbus.robots.hb50.bridge.node`), the stack's status line
(:mod:`jointbus.stack`) and the soak (:mod:`jointbus.soak`).

Why: on a virtual machine the hypervisor can take a virtual CPU away while it has work — the
``steal`` column of ``/proc/stat`` counts that time per CPU. Nothing in the guest runs then, not
even a SCHED_FIFO loop: its cycle takes far more wall time than CPU time and slots are dropped.
On this project's 2-vCPU VM (2026-12-07) the host took 30–40 ms of every 100 ms from both CPUs
for a second at a time while it was busy, and the bridge loop's unexplained 25–56 ms stalls were
of that size. A report that the bridge skipped cycles without this figure sends the user looking
for a fault in the robot's code; with it, the user sees the machine was not theirs for that time.
On hardware without a hypervisor (a Raspberry Pi, a Jetson) steal stays 0 and nothing is added.

Units: seconds per CPU, from ticks of ``1/SC_CLK_TCK`` s (10 ms with the usual 100 Hz): a steal of
less than one tick is not seen.

Cost: one read of ``/proc/stat`` (24 µs here, raw ``os.open``/``os.read`` as
:mod:`jointbus.runtime.cpu_wait` reads its files). Sampled on a node's timer thread, never in a
hard-timed loop: the loop only looks at the samples already taken (:meth:`StealSamples.over`).
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

__all__ = ["StealSamples", "StealSpan", "parse_steal_s", "read_steal_s"]

#: Ticks per second of ``/proc/stat``'s counters.
USER_HZ: Final = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
#: Samples kept by default: 6.4 s at the bridge's 10 Hz, more than a pace window and its repeat.
KEEP: Final = 64
_STEAL_FIELD: Final = 8  # cpuN user nice system idle iowait irq softirq steal ...


def parse_steal_s(text: bytes, user_hz: int = USER_HZ) -> tuple[float, ...]:
    """Per CPU (``cpu0``, ``cpu1``, … in order), the cumulative steal (s) in a ``/proc/stat``
    text; ``()`` when it has no per-CPU line with a steal column (a kernel before 2.6.11)."""
    out: list[float] = []
    for line in text.splitlines():
        if not line.startswith(b"cpu"):
            break  # the CPU lines come first
        fields = line.split()
        if fields[0] == b"cpu" or len(fields) <= _STEAL_FIELD:
            continue  # the all-CPU sum, or no steal column
        try:
            out.append(int(fields[_STEAL_FIELD]) / user_hz)
        except ValueError:
            return ()
    return tuple(out)


def read_steal_s() -> tuple[float, ...]:
    """Per CPU, the time (s) the hypervisor has kept this machine's virtual CPU from running
    though it had work, since boot; ``()`` where it cannot be read (not Linux)."""
    try:
        fd = os.open("/proc/stat", os.O_RDONLY)
    except OSError:
        return ()
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    except OSError:
        return ()
    finally:
        os.close(fd)
    return parse_steal_s(b"".join(chunks))


@dataclass(frozen=True, slots=True)
class StealSpan:
    """Steal per CPU (s) between two samples ``span_s`` s apart."""

    per_cpu_s: tuple[float, ...]
    span_s: float

    @property
    def total_s(self) -> float:
        """Steal summed over the CPUs (s)."""
        return sum(self.per_cpu_s)

    def describe(self) -> str:
        """One clause for a report (``""`` when nothing was stolen): ``the VM's host held this
        machine's CPUs for 60 ms of 1.0 s (cpu0 40 ms, cpu1 20 ms: steal time, when nothing
        here could run)``."""
        if self.total_s <= 0.0:
            return ""
        each = ", ".join(f"cpu{i} {s * 1e3:.0f} ms" for i, s in enumerate(self.per_cpu_s))
        return (
            f"the VM's host held this machine's CPUs for {self.total_s * 1e3:.0f} ms of "
            f"{self.span_s:.1f} s ({each}: steal time, when nothing here could run)"
        )


class StealSamples:
    """Timestamped steal readings, the newest ``keep``: :meth:`sample` on a timer thread,
    :meth:`over` from any thread (a loop's report) without reading a file.

    Timestamps are the caller's clock in ns (a node's clock, so a test's fake clock works);
    ``read`` is the reading (default :func:`read_steal_s`)."""

    def __init__(
        self, keep: int = KEEP, read: Callable[[], tuple[float, ...]] = read_steal_s
    ) -> None:
        self._read = read
        self._samples: deque[tuple[int, tuple[float, ...]]] = deque(maxlen=keep)
        self._lock = threading.Lock()

    def sample(self, now_ns: int) -> None:
        """Take one reading, stamped ``now_ns``; nothing where steal cannot be read."""
        reading = self._read()
        if reading:
            with self._lock:
                self._samples.append((now_ns, reading))

    def over(self, start_ns: int, end_ns: int) -> StealSpan | None:
        """Steal between the newest sample at or before ``start_ns`` (the oldest kept, if none
        is that old) and the newest at or before ``end_ns``; ``None`` without two such samples.
        The span is the samples' own (``span_s``), which a report states: it is what was
        measured, within one sampling period of the window asked about."""
        with self._lock:
            samples = list(self._samples)
        first = last = None
        for at, reading in samples:
            if at <= start_ns or first is None:
                first = (at, reading)
            if at <= end_ns:
                last = (at, reading)
        if first is None or last is None or last[0] <= first[0]:
            return None
        if len(first[1]) != len(last[1]):
            return None  # a CPU came or went between them
        per_cpu = tuple(max(0.0, b - a) for a, b in zip(first[1], last[1], strict=True))
        return StealSpan(per_cpu, (last[0] - first[0]) / 1e9)
