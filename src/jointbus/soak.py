"""The soak run: the whole robot at 500 Hz for a long time, recorded to MCAP, checked for leaks.

Where it sits: beside :mod:`jointbus.stack` at the top of the package (it runs a
:class:`~jointbus.stack.Stack` and a :class:`~jointbus.tools.recorder.Recorder`); ``make soak``
runs ``python -m jointbus.soak --minutes 30`` and ``tests/soak/test_soak.py`` runs one minute.

**What runs.** The stack with ``transport="zenoh"``: the simulated hb50 stepped by the 500 Hz
bridge, the control node standing it up and holding it, each node on its own bus and Zenoh
session, so every message between them is encoded, crosses loopback TCP and is decoded — the
cross-process path, in one process so that one RSS covers all of it. Zenoh uses the default
scheme on a free loopback hub port (or ``--hub-port``). A recorder on the bridge's bus writes
every topic to an MCAP file: the bridge's topics from the bus, the control node's from Zenoh
(stored as received). Extra *reliable* subscriptions on the control node's bus (the bridge's
10 Hz state, status reports, heartbeats, loop diagnostics) make sure reliable traffic crosses
Zenoh in both directions.

**What is measured** (goals from the issue):

- *lost reliable messages* (goal 0): the sequence gaps counted by every reliable subscription of
  both buses (each remote publisher numbers its messages), plus the gaps the recorder saw;
- *RSS growth* (goal < 5 MB): resident memory from ``/proc/self/status``, sampled every
  ``sample_s``; growth = median of the last five samples − median of the first five after the
  warm-up (start-up allocations, the stand-up and the first MCAP chunks are not a leak), and the
  least-squares slope in MB per hour;
- *what grew* (no goal; glibc only): beside RSS, the C heap's bytes *in use* and *held* (taken
  from the OS by ``malloc``, in use or free) from ``mallinfo2``, with the same medians — so a
  grown RSS reads either as live memory (a leak: in use grows) or as memory the allocator keeps
  after a burst (held grows, in use does not). Python's own objects under 512 B live in its
  ``pymalloc`` arenas, outside both. The recorder's largest backlog (messages queued for its
  writer thread, sampled with RSS) is reported too: when a loaded host starves the writer, the
  queued messages are a burst of live objects, and the memory they took stays with the
  allocators after the queue drains;
- *overruns*: bridge cycles that woke a period or more late (and the grid slots they skipped),
  with the loop's lateness — reported, no goal: on a shared VM they come from the host.

The MCAP file is read back at the end (its summary's message count must equal what the recorder
wrote), and the robot must still be standing under the control node.
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import math
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from jointbus.bus import RELIABLE, Bus, Reliability, Subscriber, ZenohConfig
from jointbus.robots.hb50.messages import BridgeState, Status
from jointbus.runtime import LoopDiagnostics
from jointbus.stack import Stack
from jointbus.tools.recorder import Recorder

__all__ = [
    "MallocStats",
    "SoakConfigError",
    "SoakReport",
    "main",
    "read_malloc_stats",
    "read_rss_bytes",
    "run_soak",
]

#: Goals of the issue.
MAX_RSS_GROWTH_BYTES: Final = 5 * 1024 * 1024
MAX_LOST_RELIABLE: Final = 0
#: How long the robot may take to stand up before the soak counts (s).
STAND_TIMEOUT_S: Final = 30.0
_MB: Final = 1024 * 1024
_EDGE_SAMPLES: Final = 5


class SoakConfigError(ValueError):
    """A soak argument is out of range: ``field``, ``value`` and what was ``expected``."""

    def __init__(self, field: str, value: object, expected: str) -> None:
        self.field = field
        self.value = value
        self.expected = expected
        super().__init__(f"soak {field} = {value!r} is invalid: expected {expected}")


def read_rss_bytes() -> int:
    """This process's resident set size (bytes), from ``/proc/self/status`` (``VmRSS``)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise OSError("VmRSS not found in /proc/self/status")


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

    @property
    def goals_met(self) -> bool:
        """No reliable message lost, RSS growth under 5 MB, the file whole, the robot standing."""
        return (
            self.reliable_lost <= MAX_LOST_RELIABLE
            and self.rss_growth_bytes < MAX_RSS_GROWTH_BYTES
            and self.mcap_ok
            and self.standing
        )

    def lines(self) -> list[str]:
        """A readable table of the report."""
        verdict = "all goals met" if self.goals_met else "GOALS NOT MET"
        return [
            f"soak: {self.duration_s:.0f} s at 500 Hz (warm-up {self.warmup_s:.0f} s) — {verdict}",
            f"  lost reliable messages  {self.reliable_lost} of {self.reliable_received} "
            f"(goal 0); recorder gaps {self.recorder_lost}",
            f"  RSS growth              {self.rss_growth_bytes / _MB:+.2f} MB (goal < 5 MB); "
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
        ]

    def _heap_lines(self) -> list[str]:
        if self.heap_in_use_growth_bytes is None or self.heap_held_growth_bytes is None:
            return []
        return [
            f"  C heap (malloc)         in use {self.heap_in_use_growth_bytes / _MB:+.2f} MB, "
            f"held {self.heap_held_growth_bytes / _MB:+.2f} MB over the same samples"
        ]

    def as_dict(self) -> dict[str, Any]:
        """Field name → value (plus ``goals_met``), for JSON output."""
        return {**asdict(self), "goals_met": self.goals_met}


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
) -> SoakReport:
    """Run the stack for ``duration_s`` s once it stands, recording to ``mcap_path``.

    ``warmup_s`` (default: 10 % of the duration, at most 60 s) is where the RSS baseline is
    taken; ``sample_s`` the RSS sampling period; ``progress`` gets a line every
    ``progress_every_s``.
    """
    if not (math.isfinite(duration_s) and duration_s >= 5.0):
        raise SoakConfigError("duration_s", duration_s, "a finite number of seconds ≥ 5")
    warmup = min(60.0, 0.1 * duration_s) if warmup_s is None else warmup_s
    if not (math.isfinite(warmup) and 0 <= warmup < duration_s):
        raise SoakConfigError("warmup_s", warmup_s, f"seconds in [0, {duration_s:g})")
    if not (math.isfinite(sample_s) and 0 < sample_s <= duration_s / 10):
        raise SoakConfigError("sample_s", sample_s, "seconds in (0, duration_s / 10]")
    port = hub_port if hub_port is not None else _free_port()
    say = progress if progress is not None else (lambda _line: None)
    stack = Stack(transport="zenoh", zenoh=ZenohConfig(hub_port=port))
    with stack:
        bridge_bus, control_bus = stack.buses[0], stack.buses[1]
        extra: list[Subscriber[Any]] = [
            control_bus.subscribe(
                "/hb50/bridge_state_10hz", BridgeState, _ignore, RELIABLE, realtime=True
            ),
            control_bus.subscribe("/hb50/status", Status, _ignore, RELIABLE, realtime=True),
            control_bus.subscribe("/hb50/heartbeat", Status, _ignore, RELIABLE, realtime=True),
            control_bus.subscribe(
                "/hb50/diagnostics", LoopDiagnostics, _ignore, RELIABLE, realtime=True
            ),
        ]
        try:
            summary = stack.wait_for(
                lambda s: s.standing and s.bridge_mode == "run", STAND_TIMEOUT_S
            )
            if not summary.standing:
                raise RuntimeError(f"the robot did not stand up within {STAND_TIMEOUT_S:g} s")
            recorder = Recorder(bridge_bus, mcap_path, local=True, remote=True).start()
            try:
                report = _soak(
                    stack,
                    recorder,
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
    count = _mcap_message_count(mcap_path)
    return _finish(
        report,
        recorded=recorder_stats.messages,
        recorder_lost=recorder_stats.lost,
        recorder_skipped=recorder_stats.skipped,
        path=mcap_path,
        mcap_count=count,
    )


def _ignore(_msg: object) -> None:
    """Reliable subscriptions that only count (their statistics are what the soak reads)."""


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
    rss_times: list[float]
    rss_values: list[int]
    heap_samples: list[MallocStats]
    recorder_backlog_max: int
    standing: bool
    bridge_mode: str


def _soak(
    stack: Stack,
    recorder: Recorder,
    *,
    duration_s: float,
    warmup_s: float,
    sample_s: float,
    say: Callable[[str], None],
    progress_every_s: float,
) -> _Partial:
    bridge = stack.bridge
    if bridge is None:  # pragma: no cover - the soak stack always runs the bridge
        raise RuntimeError("the soak stack has no bridge")
    loop = bridge.rate_loops["bridge"]
    cycles0 = loop.stats().cycles
    overruns0, skipped0 = loop.stats().overruns, loop.stats().skipped
    begin = time.monotonic()
    rss_times: list[float] = []
    rss_values: list[int] = []
    heap_samples: list[MallocStats] = []
    backlog_max = 0
    next_sample = begin
    next_report = begin + progress_every_s
    lateness_p99 = 0.0
    lateness_max = 0.0
    while (now := time.monotonic()) < begin + duration_s:
        if now >= next_sample:
            elapsed = now - begin
            if elapsed >= warmup_s:
                rss_times.append(elapsed)
                rss_values.append(read_rss_bytes())
                heap = read_malloc_stats()
                if heap is not None:
                    heap_samples.append(heap)
            backlog_max = max(backlog_max, recorder.stats().queued)
            stats = loop.stats()
            if not math.isnan(stats.lateness_p99_s):
                lateness_p99 = max(lateness_p99, stats.lateness_p99_s)
                lateness_max = max(lateness_max, stats.lateness_max_s)
            next_sample += sample_s
        if now >= next_report:
            lost = sum(s.stats().lost for s in _reliable_subscribers(stack.buses))
            say(
                f"soak t={now - begin:6.0f} s  rss={read_rss_bytes() / _MB:7.1f} MB  "
                f"overruns={loop.stats().overruns - overruns0}  lost_reliable={lost}  "
                f"recorded={recorder.stats().messages}"
            )
            next_report += progress_every_s
        time.sleep(max(0.0, min(next_sample, begin + duration_s) - time.monotonic()))
    stats = loop.stats()
    elapsed = time.monotonic() - begin
    subs = _reliable_subscribers(stack.buses)
    summary = stack.summary()
    return _Partial(
        duration_s=elapsed,
        warmup_s=warmup_s,
        cycles=stats.cycles - cycles0,
        loop_rate_hz=(stats.cycles - cycles0) / elapsed,
        overruns=stats.overruns - overruns0,
        skipped=stats.skipped - skipped0,
        lateness_p99_s=lateness_p99,
        lateness_max_s=max(lateness_max, stats.lateness_max_s),
        reliable_received=sum(s.stats().received for s in subs),
        reliable_lost=sum(s.stats().lost for s in subs),
        rss_times=rss_times,
        rss_values=rss_values,
        heap_samples=heap_samples,
        recorder_backlog_max=backlog_max,
        standing=summary.standing and summary.owner == "control_node",
        bridge_mode=summary.bridge_mode or "?",
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
    values = p.rss_values
    if values:
        start, end = _edges(values)
    else:  # pragma: no cover - run_soak guarantees samples after the warm-up
        start = end = read_rss_bytes()
    heap_in_use = heap_held = None
    if p.heap_samples:
        first, last = _edges([h.in_use for h in p.heap_samples])
        heap_in_use = last - first
        first, last = _edges([h.held for h in p.heap_samples])
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
        rss_slope_bytes_per_h=_slope(p.rss_times, values) * 3600.0,
        rss_samples=len(values),
        standing=p.standing,
        bridge_mode=p.bridge_mode,
        heap_in_use_growth_bytes=heap_in_use,
        heap_held_growth_bytes=heap_held,
        recorder_backlog_max=p.recorder_backlog_max,
    )


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
