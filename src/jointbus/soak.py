"""The soak run: the whole robot at 500 Hz for a long time, recorded to MCAP, checked for leaks.

Where it sits: beside :mod:`jointbus.stack` at the top of the package (it runs a
:class:`~jointbus.stack.Stack` and a :class:`~jointbus.tools.recorder.Recorder`); ``make soak``
runs ``python -m jointbus.soak --minutes 30`` and ``tests/soak/test_soak.py`` runs one minute.

**What runs.** The robot in its process layout, as ``jointbus demo`` runs it
(:class:`~jointbus.stack.Stack`'s default ``layout="processes"``): the simulated hb50 stepped
by the 500 Hz bridge in one process, the control node standing it up and holding it in another,
joined over Zenoh on a free loopback hub port (or ``--hub-port``). This process is the
observer: a recorder on its bus writes every topic it receives to an MCAP file, and *reliable*
subscriptions (the bridge's and the control node's 10 Hz state, status reports, heartbeats,
loop diagnostics) make sure reliable traffic crosses Zenoh from both processes.

**What is measured** (goals from the issue):

- *lost reliable messages* (goal 0): the sequence gaps counted by every reliable subscription of
  both buses (each remote publisher numbers its messages), plus the gaps the recorder saw;
- *RSS growth* (goal < 5 MB **per process**: the bridge's, the control node's and this
  observer's): resident memory from ``/proc/<pid>/status``, sampled every ``sample_s``; growth =
  median of the last five samples − median of the first five after the warm-up (start-up
  allocations, the stand-up and the first MCAP chunks are not a leak), and the least-squares
  slope in MB per hour;
- *real time, per process of the layout* (the issue's goals): the bridge's loop rate by the wall
  clock (cycles run per second between its first and last ``/hb50/diagnostics`` after the
  warm-up, by their stamps) ≥ :data:`MIN_RATE_HZ`, the share of its grid slots it skipped ≤
  :data:`MAX_SKIPPED_FRACTION`, and its lateness p99 over the run ≤ :data:`MAX_LATENESS_P99_S`;
  the control node's commands received by the bridge per wall-clock second ≥
  :data:`MIN_RATE_HZ`, the share of frames it left unanswered ≤ :data:`MAX_SKIPPED_FRACTION`,
  and the age of its commands when applied (its lateness; the bridge's ``command age``, in
  cycles) p99 over the run ≤ :data:`MAX_COMMAND_AGE_P99_CYCLES`. A p99 over the run is within
  its bound exactly when at most 1 % of the run's slots (commands) are beyond it: the soak
  counts them from counters since the start that the bridge's diagnostics carry (its loop's
  ``late_slots``, its commands by age), taken after the warm-up and at the end. The worst
  windows (the loop's 10 s windows, one a second; the command age's 1 s windows) are reported
  beside them, with how many missed the bound and the host's steal in the worst three, as
  information: a p99 of one second in 1 800 is the tail of the run, not its p99 (the goals
  were on the worst window until 2026-12-04: one 52 ms stall of the host in 30 minutes missed
  them);
- *what grew* (no goal; glibc only): beside RSS, the C heap's bytes *in use* and *held* (taken
  from the OS by ``malloc``, in use or free) from ``mallinfo2``, with the same medians — so a
  grown RSS reads either as live memory (a leak: in use grows) or as memory the allocator keeps
  after a burst (held grows, in use does not). Python's own objects under 512 B live in its
  ``pymalloc`` arenas, outside both. The recorder's largest backlog (messages queued for its
  writer thread, sampled with RSS) is reported too: when a loaded host starves the writer, the
  queued messages are a burst of live objects, and the memory they took stays with the
  allocators after the queue drains;
- *overruns*: bridge cycles that woke a period or more late (and the grid slots they skipped) —
  reported; what they cost is in the rate and skipped goals above.

The MCAP file is read back at the end (its summary's message count must equal what the recorder
wrote), and the robot must still be standing under the control node. "all goals met" only when
every goal of every process is.
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
import ctypes
import functools
import math
import os
import socket
import statistics
import sys
import tempfile
import time
from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from jointbus.bus import RELIABLE, Bus, Reliability, Subscriber, ZenohConfig
from jointbus.robots.hb50.bridge.command_age import ages_between
from jointbus.robots.hb50.messages import BridgeState, BridgeStatus, Status
from jointbus.runtime import LoopDiagnostics
from jointbus.runtime.host_steal import read_steal_s
from jointbus.stack import Stack
from jointbus.tools.allocator import return_large_blocks
from jointbus.tools.recorder import Recorder

__all__ = [
    "MAX_COMMAND_AGE_P99_CYCLES",
    "MAX_LATENESS_P99_S",
    "MAX_LATE_FRACTION",
    "MAX_SKIPPED_FRACTION",
    "MIN_RATE_HZ",
    "MallocStats",
    "ProcessReport",
    "SoakConfigError",
    "SoakReport",
    "WorstWindow",
    "main",
    "read_malloc_stats",
    "read_rss_bytes",
    "run_soak",
]

#: Goals of the issue.
MAX_RSS_GROWTH_BYTES: Final = 5 * 1024 * 1024
MAX_LOST_RELIABLE: Final = 0
#: Each process of the layout keeps the 500 Hz grid by the wall clock: at least this rate (Hz)...
MIN_RATE_HZ: Final = 490.0
#: ... and skips at most this share of its slots (the bridge) or frames (the control node).
MAX_SKIPPED_FRACTION: Final = 0.01
#: The bridge loop's lateness p99 over the run (s): half a 2 ms period — the bound of its
#: diagnostics' ``late_slots``.
MAX_LATENESS_P99_S: Final = 0.001
#: The control node's commands, when the bridge applies them, are at most this many cycles old
#: (p99 over the run of the bridge's ``command age``): computed from the previous frame is 1.
MAX_COMMAND_AGE_P99_CYCLES: Final = 2
#: A p99 within its bound: at most this share of the slots or commands beyond it.
MAX_LATE_FRACTION: Final = 0.01
_BRIDGE_NODE: Final = "bridge_node"
#: One command-age row per this many seconds of 10 Hz states (s): each of the bridge's 1 s
#: windows once. Rows by a change of the status text instead merged consecutive windows whose
#: figures were identical.
_AGE_ROW_S: Final = 0.95
_CYCLE_S: Final = 0.002
#: How long the robot may take to stand up before the soak counts (s): its processes start
#: (Python, MuJoCo, Zenoh) and it rises; a loaded host stretches both.
STAND_TIMEOUT_S: Final = 60.0
_MB: Final = 1024 * 1024
_EDGE_SAMPLES: Final = 5


class SoakConfigError(ValueError):
    """A soak argument is out of range: ``field``, ``value`` and what was ``expected``."""

    def __init__(self, field: str, value: object, expected: str) -> None:
        self.field = field
        self.value = value
        self.expected = expected
        super().__init__(f"soak {field} = {value!r} is invalid: expected {expected}")


def read_rss_bytes(pid: int | None = None) -> int:
    """The resident set size (bytes) of process ``pid`` (``None``: this one), from
    ``/proc/<pid>/status`` (``VmRSS``); OSError when it cannot be read (a process that ended)."""
    path = f"/proc/{'self' if pid is None else pid}/status"
    with open(path, encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise OSError(f"VmRSS not found in {path}")


@dataclass(frozen=True, slots=True)
class MallocStats:
    """The C heap (bytes): ``in_use`` by live allocations, ``held`` from the OS (used or free)."""

    in_use: int
    held: int


class _MallInfo2(ctypes.Structure):
    # glibc's struct mallinfo2 (malloc.h), every field a size_t
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


@functools.cache
def _mallinfo2() -> Any:
    try:
        function = ctypes.CDLL(None).mallinfo2
    except (AttributeError, OSError):  # not glibc, or glibc < 2.33
        return None
    function.restype = _MallInfo2
    function.argtypes = []
    return function


def read_malloc_stats() -> MallocStats | None:
    """This process's C heap from glibc's ``mallinfo2`` (every arena, plus mmapped blocks), or
    ``None`` where there is no ``mallinfo2``. Takes each arena's lock briefly."""
    function = _mallinfo2()
    if function is None:
        return None
    info = function()
    return MallocStats(in_use=info.uordblks + info.hblkhd, held=info.arena + info.hblkhd)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(frozen=True, slots=True)
class ProcessReport:
    """One process of the soak: ``name`` (``bridge``, ``control``, ``observer``) and ``pid``;
    ``rate_hz`` by the wall clock (the bridge's cycles, the control node's commands at the
    bridge; NaN: no loop, the observer), ``skipped_fraction`` of its slots or frames (0–1),
    ``late_fraction``: the share (0–1) of the run's grid slots (the bridge) or applied commands
    (the control node) later than ``lateness_goal_s`` (the bridge: served more than 1 ms after
    their deadline; the control node: applied more than 2 cycles after the frame they answer) —
    at most :data:`MAX_LATE_FRACTION` is a p99 within ``lateness_goal_s``; ``late_count`` and
    ``late_of`` its terms; ``worst_window_p99_s`` the worst window's p99 (the loop's 10 s, the
    commands' 1 s), reported; RSS in bytes as in :class:`SoakReport`."""

    name: str
    pid: int
    rate_hz: float
    skipped_fraction: float
    late_count: int
    late_of: int
    lateness_goal_s: float
    worst_window_p99_s: float
    rss_start_bytes: int
    rss_end_bytes: int
    rss_growth_bytes: int
    rss_slope_bytes_per_h: float

    @property
    def has_loop(self) -> bool:
        return not math.isnan(self.lateness_goal_s)

    @property
    def late_fraction(self) -> float:
        """Share (0–1) of the run's slots or commands later than ``lateness_goal_s``; NaN:
        none counted (then the goal is missed: nothing measured is no goal met)."""
        return self.late_count / self.late_of if self.late_of > 0 else math.nan

    @property
    def goals_met(self) -> bool:
        """RSS growth < 5 MB; with a loop also ≥ 490 Hz, ≤ 1 % skipped, lateness within goal."""
        memory = self.rss_growth_bytes < MAX_RSS_GROWTH_BYTES
        if not self.has_loop:
            return memory
        return (
            memory
            and self.rate_hz >= MIN_RATE_HZ
            and self.skipped_fraction <= MAX_SKIPPED_FRACTION
            and self.late_fraction <= MAX_LATE_FRACTION
        )

    def line(self) -> str:
        mark = "ok" if self.goals_met else "GOAL MISSED"
        rss = (
            f"RSS {self.rss_growth_bytes / _MB:+.2f} MB ({self.rss_start_bytes / _MB:.1f} -> "
            f"{self.rss_end_bytes / _MB:.1f} MB)"
        )
        if not self.has_loop:
            return f"  {self.name:<9} pid {self.pid:<7} {rss} — {mark}"
        if self.name == "control":
            late = f"commands older than {self.lateness_goal_s / _CYCLE_S:g} cycles"
            worst = f"{self.worst_window_p99_s / _CYCLE_S:.0f} cycles in the worst 1 s window"
        else:
            late = f"slots later than {self.lateness_goal_s * 1e3:g} ms"
            worst = f"{self.worst_window_p99_s * 1e3:.2f} ms in the worst 10 s window"
        return (
            f"  {self.name:<9} pid {self.pid:<7} {self.rate_hz:.1f} Hz (goal ≥ {MIN_RATE_HZ:g}), "
            f"skipped {self.skipped_fraction * 100:.2f} % (goal ≤ "
            f"{MAX_SKIPPED_FRACTION * 100:g} %), {late} {self.late_count} of {self.late_of} = "
            f"{self.late_fraction * 100:.3f} % (goal ≤ {MAX_LATE_FRACTION * 100:g} %: p99 over "
            f"the run within it; p99 {worst}), {rss} — {mark}"
        )


@dataclass(frozen=True, slots=True)
class WorstWindow:
    """One of the soak's worst windows: ``what`` it is worst in (``lateness`` of the bridge loop,
    p99 in s over 10 s; ``command age`` of the applied commands, p99 in cycles over 1 s),
    ``value``, ``at_s`` (its end, seconds since the soak's start) and ``steal_s``: per CPU, the
    time (s) the VM's host kept that CPU from running during it (:func:`read_steal_s`, read
    once a second, so ± 1 s)."""

    what: str
    at_s: float
    value: float
    steal_s: tuple[float, ...]

    def line(self) -> str:
        value = (
            f"{self.value * 1e3:.2f} ms" if self.what == "lateness" else f"{self.value:.0f} cycles"
        )
        steal = ", ".join(f"cpu{i} {s * 1e3:.0f} ms" for i, s in enumerate(self.steal_s))
        span = "10 s" if self.what == "lateness" else "1 s"
        return (
            f"    {self.what:<11} p99 {value:>11} in the {span} up to t={self.at_s:7.1f} s; "
            f"host steal in it: {steal or 'not readable'}"
        )


@dataclass(frozen=True, slots=True)
class SoakReport:
    """The result of :func:`run_soak` (SI units; memory in bytes, rates in Hz, times in s).

    ``reliable_received`` / ``reliable_lost``: messages received by, and sequence gaps seen by,
    every reliable subscription of both buses; ``recorder_lost``: gaps the recorder saw in the
    remote publishers it records (any QoS); ``rss_growth_bytes`` and ``rss_slope_bytes_per_h``:
    see the module docstring; ``standing``: the robot still stood under the control node at the
    end; ``mcap_ok``: the file's summary counts what the recorder wrote.
    """

    duration_s: float
    warmup_s: float
    cycles: int
    loop_rate_hz: float
    overruns: int
    skipped: int
    lateness_p99_s: float
    lateness_max_s: float
    reliable_received: int
    reliable_lost: int
    recorder_messages: int
    recorder_lost: int
    recorder_skipped: int
    mcap_path: str
    mcap_bytes: int
    mcap_ok: bool
    rss_start_bytes: int
    rss_end_bytes: int
    rss_growth_bytes: int
    rss_slope_bytes_per_h: float
    rss_samples: int
    standing: bool
    bridge_mode: str
    heap_in_use_growth_bytes: int | None = None
    heap_held_growth_bytes: int | None = None
    recorder_backlog_max: int = 0
    processes: tuple[ProcessReport, ...] = ()
    worst_windows: tuple[WorstWindow, ...] = ()
    windows: int = 0
    late_windows: int = 0
    command_windows: int = 0
    slow_command_windows: int = 0
    stalled_command_windows: int = 0
    host_steal_s: tuple[float, ...] = ()

    @property
    def goals_met(self) -> bool:
        """No reliable message lost, RSS growth under 5 MB, the file whole, the robot standing,
        and every process of the layout measured and within its goals."""
        return (
            self.reliable_lost <= MAX_LOST_RELIABLE
            and self.rss_growth_bytes < MAX_RSS_GROWTH_BYTES
            and self.mcap_ok
            and self.standing
            and bool(self.processes)
            and all(p.goals_met for p in self.processes)
        )

    def lines(self) -> list[str]:
        """A readable table of the report."""
        verdict = "all goals met" if self.goals_met else "GOALS NOT MET"
        return [
            f"soak: {self.duration_s:.0f} s at 500 Hz (warm-up {self.warmup_s:.0f} s) — {verdict}",
            f"  lost reliable messages  {self.reliable_lost} of {self.reliable_received} "
            f"(goal 0); recorder gaps {self.recorder_lost}",
            "  processes (goals per process)",
            *(p.line() for p in self.processes),
            f"  RSS growth (observer)   {self.rss_growth_bytes / _MB:+.2f} MB (goal < 5 MB); "
            f"{self.rss_start_bytes / _MB:.1f} -> {self.rss_end_bytes / _MB:.1f} MB, slope "
            f"{self.rss_slope_bytes_per_h / _MB:+.2f} MB/h over {self.rss_samples} samples",
            *self._heap_lines(),
            f"  bridge loop             {self.cycles} cycles, {self.loop_rate_hz:.1f} Hz, "
            f"{self.overruns} overruns ({self.skipped} slots skipped), lateness p99 "
            f"{self.lateness_p99_s * 1e6:.0f} us, max {self.lateness_max_s * 1e3:.2f} ms",
            f"  MCAP                    {self.recorder_messages} messages, "
            f"{self.mcap_bytes / _MB:.1f} MB, read back {'ok' if self.mcap_ok else 'FAILED'} "
            f"({self.mcap_path}); {self.recorder_skipped} skipped; largest backlog "
            f"{self.recorder_backlog_max} messages",
            f"  robot                   {'standing' if self.standing else 'NOT standing'}, "
            f"bridge mode {self.bridge_mode}",
            *self._window_lines(),
        ]

    def _window_lines(self) -> list[str]:
        if not self.windows:
            return []
        steal = ", ".join(f"cpu{i} {s:.2f} s" for i, s in enumerate(self.host_steal_s))
        return [
            f"  windows (no goal)       bridge lateness p99 over {MAX_LATENESS_P99_S * 1e3:g} ms "
            f"in {self.late_windows} of {self.windows} 10 s windows (one a second), command age "
            f"p99 over {MAX_COMMAND_AGE_P99_CYCLES} cycles in {self.slow_command_windows} of "
            f"{self.command_windows} 1 s windows ({self.stalled_command_windows} of them with a "
            "bridge stall in them or the 2 s before); host steal over the run "
            f"{steal or 'not readable'}; the worst:",
            *(w.line() for w in self.worst_windows),
        ]

    def _heap_lines(self) -> list[str]:
        if self.heap_in_use_growth_bytes is None or self.heap_held_growth_bytes is None:
            return []
        return [
            f"  C heap (malloc)         in use {self.heap_in_use_growth_bytes / _MB:+.2f} MB, "
            f"held {self.heap_held_growth_bytes / _MB:+.2f} MB over the same samples"
        ]

    def as_dict(self) -> dict[str, Any]:
        """Field name → value (plus ``goals_met``, also per process), for JSON output."""
        out = {**asdict(self), "goals_met": self.goals_met}
        out["processes"] = [{**asdict(p), "goals_met": p.goals_met} for p in self.processes]
        return out


def _reliable_subscribers(buses: Sequence[Bus]) -> list[Subscriber[Any]]:
    subs: list[Subscriber[Any]] = []
    for bus in buses:
        for topic in bus.topics():
            subs.extend(
                s
                for s in bus.local_subscribers(topic.name)
                if s.qos.reliability is Reliability.RELIABLE
            )
    return subs


def _slope(times: Sequence[float], values: Sequence[int]) -> float:
    """Least-squares slope of ``values`` over ``times`` (per second); 0 with < 2 samples."""
    if len(times) < 2:
        return 0.0
    mean_t = statistics.fmean(times)
    mean_v = statistics.fmean(values)
    den = sum((t - mean_t) ** 2 for t in times)
    if den == 0:
        return 0.0
    return sum((t - mean_t) * (v - mean_v) for t, v in zip(times, values, strict=True)) / den


def _mcap_message_count(path: Path) -> int | None:
    from mcap.reader import make_reader

    with path.open("rb") as stream:
        summary = make_reader(stream).get_summary()
    if summary is None or summary.statistics is None:
        return None
    return int(summary.statistics.message_count)


def run_soak(
    duration_s: float,
    *,
    mcap_path: Path,
    warmup_s: float | None = None,
    sample_s: float = 1.0,
    hub_port: int | None = None,
    progress: Callable[[str], None] | None = None,
    progress_every_s: float = 60.0,
    timeline_path: Path | None = None,
) -> SoakReport:
    """Run the robot in its process layout for ``duration_s`` s once it stands, recording to
    ``mcap_path``.

    ``warmup_s`` (default: 10 % of the duration, at most 60 s) is where the baselines are
    taken (RSS, the first diagnostics); ``sample_s`` the RSS sampling period; ``progress`` gets
    a line every ``progress_every_s``; ``timeline_path``, when given, gets every sample as JSON
    (seconds since the start: each process's RSS, the C heap, the host's steal per CPU, the
    bridge loop's 10 s windows and the command ages' 1 s windows) to plot or to find when
    something grew.
    """
    if not (math.isfinite(duration_s) and duration_s >= 5.0):
        raise SoakConfigError("duration_s", duration_s, "a finite number of seconds ≥ 5")
    warmup = min(60.0, 0.1 * duration_s) if warmup_s is None else warmup_s
    if not (math.isfinite(warmup) and 0 <= warmup < duration_s):
        raise SoakConfigError("warmup_s", warmup_s, f"seconds in [0, {duration_s:g})")
    if not (math.isfinite(sample_s) and 0 < sample_s <= duration_s / 10):
        raise SoakConfigError("sample_s", sample_s, "seconds in (0, duration_s / 10]")
    port = hub_port if hub_port is not None else _free_port()
    # This process is the robot's recorder: large blocks go back to the system when freed, as
    # in `jointbus record` (jointbus.tools.allocator says why).
    return_large_blocks()
    say = progress if progress is not None else (lambda _line: None)
    stack = Stack(zenoh=ZenohConfig(hub_port=port))  # the robot's process layout
    watch = _LoopWatch()
    with stack:
        bus = stack.bus
        extra: list[Subscriber[Any]] = [
            bus.subscribe("/hb50/heartbeat", Status, _ignore, RELIABLE, realtime=True),
            bus.subscribe("/hb50/diagnostics", LoopDiagnostics, watch.diagnostics, RELIABLE,
                          realtime=True),
            bus.subscribe("/hb50/bridge_state_10hz", BridgeState, watch.bridge_state, RELIABLE,
                          realtime=True),
        ]  # fmt: skip
        try:
            summary = stack.wait_for(
                lambda s: s.standing and s.bridge_mode == "run", STAND_TIMEOUT_S
            )
            if not summary.standing:
                raise RuntimeError(f"the robot did not stand up within {STAND_TIMEOUT_S:g} s")
            recorder = Recorder(bus, mcap_path, local=True, remote=True).start()
            try:
                report = _soak(
                    stack,
                    recorder,
                    watch,
                    duration_s=duration_s,
                    warmup_s=warmup,
                    sample_s=sample_s,
                    say=say,
                    progress_every_s=progress_every_s,
                )
            finally:
                recorder_stats = recorder.stop()
        finally:
            for sub in extra:
                sub.close()
    if timeline_path is not None:
        _write_timeline(report, timeline_path)
    count = _mcap_message_count(mcap_path)
    return _finish(
        report,
        recorded=recorder_stats.messages,
        recorder_lost=recorder_stats.lost,
        recorder_skipped=recorder_stats.skipped,
        path=mcap_path,
        mcap_count=count,
    )


def _write_timeline(p: _Partial, path: Path) -> None:
    import json

    begin = p.wall_begin_s
    path.write_text(
        json.dumps(
            {
                "rss_bytes": {
                    name: list(zip(p.rss_times, values, strict=False))
                    for name, values in p.rss_values.items()
                },
                "heap": [
                    [t, in_use, held]
                    for t, (in_use, held) in zip(p.rss_times, p.heap_samples, strict=False)
                ],
                "steal_s": [[t - begin, list(v)] for t, v in p.steal],
                "bridge_windows_10s": [[t - begin, *rest] for t, *rest in p.windows],
                "command_age_cycles": [[t - begin, age] for t, age in p.ages],
            }
        )
        + "\n"
    )


def _ignore(_msg: object) -> None:
    """Reliable subscriptions that only count (their statistics are what the soak reads)."""


class _Columns:
    """Rows of floats kept column by column in ``array('d')`` (8 bytes a value): the soak's
    timeline grows by a row a second for the whole run, and it lives in the observer, whose RSS
    growth is one of the goals — a list of tuples would cost ≈ 100 bytes a value."""

    def __init__(self, width: int) -> None:
        self.columns = tuple(array("d") for _ in range(width))

    def append(self, *values: float) -> None:
        for column, value in zip(self.columns, values, strict=True):
            column.append(value)

    def __len__(self) -> int:
        return len(self.columns[0])

    def rows(self) -> list[tuple[float, ...]]:
        return list(zip(*self.columns, strict=True))


class _LoopWatch:
    """The bridge's diagnostics and state from the warm-up on (``armed``): the first and the
    last diagnostics, the worst windowed lateness, the oldest command age p99 (cycles), and
    every window's figures with its wall-clock time (``windows``, ``ages``) for the timeline."""

    def __init__(self) -> None:
        self.armed = False
        self.first: LoopDiagnostics | None = None
        self.last: LoopDiagnostics | None = None
        self.lateness_p99_s = 0.0
        self.lateness_max_s = 0.0
        self.command_age_p99_cycles = 0
        #: wall clock s, lateness p99 s, lateness max s, slots skipped: one row a diagnostics
        #: message (1 Hz; each covers the loop's last 10 s)
        self.windows = _Columns(4)
        #: wall clock s, command age p99 (cycles): one row a second, i.e. one per 1 s window of
        #: the bridge's (its 10 Hz state repeats a window's figure until the next one closes)
        self.ages = _Columns(2)
        self._age_at = -math.inf

    def diagnostics(self, d: LoopDiagnostics) -> None:
        if d.node != _BRIDGE_NODE or d.loop != "bridge" or not self.armed:
            return
        if self.first is None:
            self.first = d
        self.last = d
        if not math.isnan(d.lateness_p99_s):
            self.lateness_p99_s = max(self.lateness_p99_s, d.lateness_p99_s)
            self.lateness_max_s = max(self.lateness_max_s, d.lateness_max_s)
            self.windows.append(
                time.time(), d.lateness_p99_s, d.lateness_max_s, float(d.window_skipped)
            )

    def bridge_state(self, state: BridgeState) -> None:
        age = BridgeStatus.of(state).command_age_p99_cycles
        if self.armed and age is not None:
            self.command_age_p99_cycles = max(self.command_age_p99_cycles, age)
            now = time.time()
            if now - self._age_at >= _AGE_ROW_S:  # the state comes at 10 Hz: one row a window
                self._age_at = now
                self.ages.append(now, float(age))


def _received(d: LoopDiagnostics, topic: str) -> int:
    return sum(int(i.received) for i in d.inputs if i.topic == topic)


@dataclass(slots=True)
class _Partial:
    duration_s: float
    warmup_s: float
    cycles: int
    loop_rate_hz: float
    overruns: int
    skipped: int
    lateness_p99_s: float
    lateness_max_s: float
    reliable_received: int
    reliable_lost: int
    rss_times: Sequence[float]
    rss_values: Mapping[str, Sequence[int]]
    pids: dict[str, int]
    heap_samples: Sequence[tuple[float, ...]]
    recorder_backlog_max: int
    standing: bool
    bridge_mode: str
    command_rate_hz: float
    command_skipped_fraction: float
    command_age_p99_cycles: int
    late_slots: int = 0
    slots: int = 0
    old_commands: int = 0
    aged_commands: int = 0
    wall_begin_s: float = 0.0
    windows: Sequence[tuple[float, ...]] = ()
    ages: Sequence[tuple[float, ...]] = ()
    steal: Sequence[tuple[float, tuple[float, ...]]] = ()


def _soak(
    stack: Stack,
    recorder: Recorder,
    watch: _LoopWatch,
    *,
    duration_s: float,
    warmup_s: float,
    sample_s: float,
    say: Callable[[str], None],
    progress_every_s: float,
) -> _Partial:
    group = stack.processes
    if group is None:  # pragma: no cover - the soak stack always runs the layout
        raise RuntimeError("the soak stack runs no processes")
    pids = {name: pid for name in group.names if (pid := group.pid(name)) is not None}
    pids["observer"] = os.getpid()
    begin = time.monotonic()
    # one row a second for the whole run, in this (the observer's) RSS: compact arrays
    rss_times = array("d")
    rss_values = {name: array("q") for name in pids}
    heap_samples = _Columns(2)
    steal = _Columns(1 + len(read_steal_s()))
    wall_begin = time.time()
    backlog_max = 0
    next_sample = begin
    next_report = begin + progress_every_s
    while (now := time.monotonic()) < begin + duration_s:
        if now >= next_sample:
            elapsed = now - begin
            if elapsed >= warmup_s:
                watch.armed = True
                rss_times.append(elapsed)
                for name, pid in pids.items():
                    with contextlib.suppress(OSError):  # a process that died: its last sample
                        rss_values[name].append(read_rss_bytes(None if name == "observer" else pid))
                heap = read_malloc_stats()
                if heap is not None:
                    heap_samples.append(heap.in_use, heap.held)
                if len(steal.columns) > 1:
                    with contextlib.suppress(ValueError):  # a CPU came or went: skip the row
                        steal.append(time.time(), *read_steal_s())
            backlog_max = max(backlog_max, recorder.stats().queued)
            next_sample += sample_s
        if now >= next_report:
            lost = sum(s.stats().lost for s in _reliable_subscribers(stack.buses))
            last = watch.last
            say(
                f"soak t={now - begin:6.0f} s  rss={read_rss_bytes() / _MB:7.1f} MB  "
                f"bridge={0 if last is None else last.achieved_rate_hz:.0f} Hz  "
                f"overruns={0 if last is None else last.overruns}  lost_reliable={lost}  "
                f"recorded={recorder.stats().messages}"
            )
            next_report += progress_every_s
        time.sleep(max(0.0, min(next_sample, begin + duration_s) - time.monotonic()))
    elapsed = time.monotonic() - begin
    subs = _reliable_subscribers(stack.buses)
    summary = stack.summary()
    first, last = watch.first, watch.last
    late_slots = old_commands = aged_commands = 0
    if first is None or last is None or last is first:
        cycles = overruns = skipped = commands = 0
        span = math.nan
    else:
        late_slots = int(last.late_slots - first.late_slots)
        ages = ages_between(first, last)
        aged_commands = sum(ages)
        old_commands = sum(ages[MAX_COMMAND_AGE_P99_CYCLES + 1 :])
        span = (last.header.stamp.to_ns() - first.header.stamp.to_ns()) / 1e9
        cycles = int(last.cycles - first.cycles)
        overruns = int(last.overruns - first.overruns)
        skipped = int(last.skipped - first.skipped)
        commands = _received(last, "/hb50/joint_command") - _received(first, "/hb50/joint_command")
    rate = cycles / span if span > 0 else math.nan
    return _Partial(
        duration_s=elapsed,
        warmup_s=warmup_s,
        cycles=cycles,
        loop_rate_hz=rate,
        overruns=overruns,
        skipped=skipped,
        lateness_p99_s=watch.lateness_p99_s,
        lateness_max_s=watch.lateness_max_s,
        reliable_received=sum(s.stats().received for s in subs),
        reliable_lost=sum(s.stats().lost for s in subs),
        rss_times=rss_times,
        rss_values=rss_values,
        pids=pids,
        heap_samples=heap_samples.rows(),
        recorder_backlog_max=backlog_max,
        standing=summary.standing and summary.owner == "control_node",
        bridge_mode=summary.bridge_mode or "?",
        command_rate_hz=commands / span if span > 0 else math.nan,
        command_skipped_fraction=(
            max(0.0, 1.0 - commands / cycles) if cycles > 0 else math.nan
        ),
        command_age_p99_cycles=watch.command_age_p99_cycles,
        late_slots=late_slots,
        slots=cycles + skipped,
        old_commands=old_commands,
        aged_commands=aged_commands,
        wall_begin_s=wall_begin,
        windows=watch.windows.rows(),
        ages=watch.ages.rows(),
        steal=[(row[0], row[1:]) for row in steal.rows()],
    )


def _finish(
    p: _Partial,
    *,
    recorded: int,
    recorder_lost: int,
    recorder_skipped: int,
    path: Path,
    mcap_count: int | None,
) -> SoakReport:
    def rss(name: str) -> tuple[int, int, float]:
        values = p.rss_values.get(name, [])
        if not values:
            return 0, 2**62, math.nan  # nothing measured: the goal is missed
        start, end = _edges(values)
        return start, end, _slope(p.rss_times[: len(values)], values) * 3600.0

    processes: list[ProcessReport] = []
    for name, pid in p.pids.items():
        start, end, slope = rss(name)
        loop: tuple[float, float, int, int, float, float]
        if name == "bridge":
            due = p.cycles + p.skipped
            loop = (
                p.loop_rate_hz,
                p.skipped / due if due > 0 else math.nan,
                p.late_slots,
                p.slots,
                MAX_LATENESS_P99_S,
                p.lateness_p99_s,
            )
        elif name == "control":
            loop = (
                p.command_rate_hz,
                p.command_skipped_fraction,
                p.old_commands,
                p.aged_commands,
                MAX_COMMAND_AGE_P99_CYCLES * _CYCLE_S,
                p.command_age_p99_cycles * _CYCLE_S,
            )
        else:
            loop = (math.nan, math.nan, 0, 0, math.nan, math.nan)
        processes.append(ProcessReport(name, pid, *loop, start, end, end - start, slope))
    worst, late, slow = _worst_windows(p)
    start, end, slope = rss("observer")
    heap_in_use = heap_held = None
    if p.heap_samples:
        first, last = _edges([int(h[0]) for h in p.heap_samples])
        heap_in_use = last - first
        first, last = _edges([int(h[1]) for h in p.heap_samples])
        heap_held = last - first
    return SoakReport(
        duration_s=p.duration_s,
        warmup_s=p.warmup_s,
        cycles=p.cycles,
        loop_rate_hz=p.loop_rate_hz,
        overruns=p.overruns,
        skipped=p.skipped,
        lateness_p99_s=p.lateness_p99_s,
        lateness_max_s=p.lateness_max_s,
        reliable_received=p.reliable_received,
        reliable_lost=p.reliable_lost,
        recorder_messages=recorded,
        recorder_lost=recorder_lost,
        recorder_skipped=recorder_skipped,
        mcap_path=str(path),
        mcap_bytes=path.stat().st_size,
        mcap_ok=mcap_count == recorded and recorded > 0,
        rss_start_bytes=start,
        rss_end_bytes=end,
        rss_growth_bytes=end - start,
        rss_slope_bytes_per_h=slope,
        rss_samples=len(p.rss_values.get("observer", [])),
        standing=p.standing,
        bridge_mode=p.bridge_mode,
        heap_in_use_growth_bytes=heap_in_use,
        heap_held_growth_bytes=heap_held,
        recorder_backlog_max=p.recorder_backlog_max,
        processes=tuple(processes),
        worst_windows=worst,
        windows=len(p.windows),
        late_windows=late,
        command_windows=len(p.ages),
        slow_command_windows=slow,
        stalled_command_windows=_late_seconds_with_a_bridge_stall(p),
        host_steal_s=_steal_between(p.steal, -math.inf, math.inf),
    )


_WORST_SHOWN: Final = 3
#: How long before a late command-age second a bridge stall is taken as its cause (s).
_STALL_LOOKBACK_S: Final = 2.0
#: The bridge loop's diagnostics cover its last 10 s (``RateLoop``'s ``stats_window_s``).
_DIAGNOSTICS_WINDOW_S: Final = 10.0


def _steal_between(
    samples: Sequence[tuple[float, tuple[float, ...]]], begin: float, end: float
) -> tuple[float, ...]:
    """Per CPU, the host steal (s) between the first sample at or after ``begin`` − 1 s and the
    last at or before ``end`` + 1 s (samples are 1 s apart: a window is covered whole)."""
    inside = [values for t, values in samples if begin - 1.0 <= t <= end + 1.0 and values]
    if len(inside) < 2:
        return ()
    return tuple(b - a for a, b in zip(inside[0], inside[-1], strict=False))


def _worst_windows(p: _Partial) -> tuple[tuple[WorstWindow, ...], int, int]:
    """The worst windows of the bridge's lateness (10 s windows, one a second: the worst
    :data:`_WORST_SHOWN` that do not overlap) and of the command age (1 s windows), each with the
    host's steal over it; and how many rows missed each goal."""
    late = sum(1 for row in p.windows if row[1] > MAX_LATENESS_P99_S)
    slow = sum(1 for row in p.ages if row[1] > MAX_COMMAND_AGE_P99_CYCLES)
    worst: list[WorstWindow] = []
    for t, p99, *_rest in sorted(p.windows, key=lambda row: -row[1]):
        if len(worst) == _WORST_SHOWN:
            break
        if all(abs(t - (w.at_s + p.wall_begin_s)) >= _DIAGNOSTICS_WINDOW_S for w in worst):
            steal = _steal_between(p.steal, t - _DIAGNOSTICS_WINDOW_S, t)
            worst.append(WorstWindow("lateness", t - p.wall_begin_s, p99, steal))
    for t, age in sorted(p.ages, key=lambda row: -row[1])[:_WORST_SHOWN]:
        steal = _steal_between(p.steal, t - 1.0, t)
        worst.append(WorstWindow("command age", t - p.wall_begin_s, age, steal))
    return tuple(worst), late, slow


def _late_seconds_with_a_bridge_stall(p: _Partial) -> int:
    """How many command-age seconds over the goal had a bridge stall in them or in the
    :data:`_STALL_LOOKBACK_S` before: a row of the loop's diagnostics in that span (to 0.5 s
    after the second) whose 10 s window counts more skipped slots than the row before it.

    Why: a stalled bridge applies, in its first cycle after the stall, the command that answered
    the frame before it, so its stalls make late commands of their own; a late second without
    one points at the controller's side or the bus. Approximate: a slot leaving the 10 s window
    as a new one is skipped hides that rise."""
    rises = [b[0] for a, b in zip(p.windows, p.windows[1:], strict=False) if b[3] > a[3]]
    count = 0
    for t, age in p.ages:
        if age > MAX_COMMAND_AGE_P99_CYCLES:
            i = bisect.bisect_left(rises, t - 1.0 - _STALL_LOOKBACK_S)
            count += i < len(rises) and rises[i] <= t + 0.5
    return count


def _edges(values: Sequence[int]) -> tuple[int, int]:
    """Medians of the first and of the last five samples (one stray sample moves neither)."""
    return (
        int(statistics.median(values[:_EDGE_SAMPLES])),
        int(statistics.median(values[-_EDGE_SAMPLES:])),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m jointbus.soak [--minutes M | --seconds S] [--record PATH] [--json PATH]``;
    exit 0 when every goal is met, 1 otherwise."""
    parser = argparse.ArgumentParser(
        prog="python -m jointbus.soak", description=__doc__.split("\n", 1)[0]
    )
    parser.add_argument("--minutes", type=float, default=30.0, help="soak length (default 30)")
    parser.add_argument("--seconds", type=float, help="soak length in seconds (overrides)")
    parser.add_argument("--warmup", type=float, help="seconds before the RSS baseline")
    parser.add_argument("--record", type=Path, help="MCAP file to keep (default: a temp file)")
    parser.add_argument("--json", type=Path, help="also write the report as JSON here")
    parser.add_argument("--hub-port", type=int, help="Zenoh hub port (default: a free one)")
    parser.add_argument(
        "--timeline", type=Path, help="write every sample (RSS, steal, windows) as JSON here"
    )
    args = parser.parse_args(argv)
    duration = args.seconds if args.seconds is not None else args.minutes * 60.0
    with tempfile.TemporaryDirectory(prefix="jointbus-soak-") as tmp:
        path = args.record if args.record is not None else Path(tmp) / "soak.mcap"
        try:
            report = run_soak(
                duration,
                mcap_path=path,
                warmup_s=args.warmup,
                hub_port=args.hub_port,
                progress=lambda line: print(line, flush=True),
                progress_every_s=min(60.0, max(5.0, duration / 10)),
                timeline_path=args.timeline,
            )
        except SoakConfigError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        for line in report.lines():
            print(line)
        if args.json is not None:
            import json

            args.json.write_text(json.dumps(report.as_dict(), indent=2) + "\n")
    return 0 if report.goals_met else 1


if __name__ == "__main__":
    sys.exit(main())
