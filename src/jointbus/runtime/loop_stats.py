"""Timing statistics of a fixed-rate loop: period, lateness, overruns, CPU fraction.

Where it sits: :mod:`jointbus.runtime`, filled by :class:`jointbus.runtime.rate_loop.RateLoop` once
per cycle and read by the node that owns the loop (for its diagnostics topic, its status level, a
log line). It depends only on numpy.

Design:

- Samples live in fixed-size numpy ring buffers allocated once, so recording a cycle never grows a
  list or allocates an array (the loop must not hand the allocator or the garbage collector work
  at 500 Hz). The distribution figures (p50 / p99 / max) are computed over the last ``capacity``
  cycles only, so a node's diagnostics describe recent behaviour; the counters (``cycles``,
  ``overruns``, ``skipped``, ``gc_collections``) count since the loop started.
- ``lateness`` is kept **per grid slot**: for each slot, how long after its deadline the cycle
  that served it woke. A cycle on time serves its own slot; an overrun cycle also stands for the
  slots it dropped, each late by the wake-up minus *its* deadline (the first dropped slot's
  lateness is the cycle's own). Why: per executed cycle, a 40 ms stall is one sample among
  thousands and p99 stays at microseconds while 20 outputs in a row never happened; per slot,
  the percentiles say what the consumers of the loop's output saw. ``period`` is the time between
  two consecutive wake-ups. Both are in integer nanoseconds internally and in seconds in a
  snapshot.
- ``achieved_rate_hz`` is the rate over the window (executed cycles per second of wall time)
  and ``window_skipped`` the slots dropped in it — the same newest ``capacity`` grid slots as
  the lateness figures (a status line names their span: 10 s at 500 Hz), not the newest
  ``capacity`` cycles run, which span more time the more slots were dropped;
  ``skipped_fraction`` = dropped / (run + dropped). The median period cannot show dropped
  slots (the cycles that did run are on the grid), so a loop losing 17 % of its cycles still had
  a 2 ms median period.
- ``cpu_fraction`` is the time spent in the loop body divided by wall time. The rate loop measures
  the body on its own monotonic clock (``time.monotonic_ns``, the same ``CLOCK_MONOTONIC`` as
  ``time.perf_counter_ns`` on Linux), not with ``time.thread_time_ns``: what a fixed-rate loop must
  budget is the wall time the body holds the cycle, including time it blocks on I/O or loses to
  pre-emption, and thread CPU time would hide exactly those. (It also keeps one injectable clock
  for tests.) ``spin_fraction`` is the share of wall time the loop busy-waits before deadlines —
  the CPU price of its precision.
- Percentiles use numpy's default linear interpolation. ``np.percentile`` imports ``numpy.ma``
  on its first call (numpy 2.x loads it lazily, through ``np.unique``): 10–11 ms of import, and
  the first snapshot is taken by the owning node's 1 Hz report on a thread of the loop's own
  process, about a second after the loop starts. Measured in the bridge process of
  ``jointbus demo`` (2026-12-07): that import held the loop off for 5–16 ms, 8 slots were
  dropped in one burst (two runs) and every start reported ``bridge skips cycles`` (3 of 3 runs;
  none in 4 with the call made at import). So this module calls it once when it is imported,
  before any loop runs.
- A snapshot may be taken from another thread: recording and copying the buffers take one lock,
  the percentiles are computed outside it, so a reader stalls the loop by one short copy at most.
"""

from __future__ import annotations

import math
import threading
from dataclasses import asdict, dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

__all__ = ["LoopRun", "LoopStats", "LoopStatsSnapshot"]

_NS_PER_S = 1e9


@dataclass(frozen=True, slots=True)
class LoopStatsSnapshot:
    """Timing of a rate loop at one instant. Times in seconds; NaN where there is no sample yet.

    Fields: ``cycles`` run since start; ``window`` = how many recent grid slots the lateness
    figures cover (dropped slots included, see the module docstring); target / p50 / p99 / max
    of the period; p50 / p99 / max of lateness per slot; ``overruns`` = cycles that woke one
    period or more after their deadline; ``skipped`` = grid slots dropped by those overruns since
    start; ``cpu_fraction`` / ``spin_fraction`` of wall time spent in the body / busy-waiting
    (over the window); ``gc_collections`` run by the loop in its slack; ``achieved_rate_hz`` =
    cycles actually run per second over the window (Hz), ``window_skipped`` = slots dropped in it
    and ``skipped_fraction`` = their share of the window's slots (0–1); ``late_slots`` = grid
    slots since start served more than half a period after their deadline (dropped slots
    included). Why a count since start beside the window's percentiles: two snapshots give the
    share of late slots over any span between them exactly — a soak's p99 over 30 minutes is
    within half a period if and only if at most 1 % of its slots are late — which no number of
    overlapping window percentiles can.
    """

    cycles: int
    window: int
    period_target_s: float
    period_p50_s: float
    period_p99_s: float
    period_max_s: float
    lateness_p50_s: float
    lateness_p99_s: float
    lateness_max_s: float
    overruns: int
    skipped: int
    cpu_fraction: float
    spin_fraction: float
    gc_collections: int
    achieved_rate_hz: float = math.nan
    window_skipped: int = 0
    skipped_fraction: float = math.nan
    late_slots: int = 0

    def as_dict(self) -> dict[str, float | int]:
        """Field name → value, ready to fill a diagnostics message or a JSON log line."""
        return asdict(self)


class _LoopFigures(Protocol):
    """What :class:`LoopRun` reads: a :class:`LoopStatsSnapshot`, or the ``LoopDiagnostics``
    message a node publishes from one (the same fields)."""

    @property
    def cycles(self) -> int: ...
    @property
    def skipped(self) -> int: ...
    @property
    def late_slots(self) -> int: ...
    @property
    def window(self) -> int: ...
    @property
    def period_target_s(self) -> float: ...
    @property
    def achieved_rate_hz(self) -> float: ...
    @property
    def skipped_fraction(self) -> float: ...
    @property
    def lateness_p99_s(self) -> float: ...


@dataclass(frozen=True, slots=True)
class LoopRun:
    """A rate loop over its whole run beside its recent window, as the last line of a run says it.

    Why both: the window's figures (``rate_hz`` achieved, ``skipped_fraction``, ``lateness_p99_s``
    over the last ``window_s`` seconds) describe the end of a run only — a run that kept 500 Hz
    for five minutes and then lost 14 % of its cycles in its last seconds read "429 Hz achieved,
    14.3 % of cycles skipped" as its summary (new-user trial, 2026-12-04). The counts since the
    loop started (``cycles`` run, ``skipped`` grid slots dropped, ``late_slots`` served more
    than half a period late) give the run's shares exactly. ``age_s``: how old the figures are
    (s) when the line is said — the loop's 1 Hz report read in another process is up to a second
    old, and "over the run 19 930 of 19 930 due cycles" after 40 s of run read as if the run's
    last 0.17 s had not been due (new-user trial, 2026-12-05); the line says so.
    """

    cycles: int
    skipped: int
    late_slots: int
    window_s: float
    rate_hz: float
    skipped_fraction: float
    lateness_p99_s: float
    age_s: float = 0.0

    @classmethod
    def of(cls, figures: _LoopFigures, *, age_s: float = 0.0) -> LoopRun:
        """The run and window of a snapshot or a ``LoopDiagnostics`` message (``age_s`` s old)."""
        return cls(
            cycles=figures.cycles,
            skipped=figures.skipped,
            late_slots=figures.late_slots,
            window_s=figures.window * figures.period_target_s,
            rate_hz=figures.achieved_rate_hz,
            skipped_fraction=figures.skipped_fraction,
            lateness_p99_s=figures.lateness_p99_s,
            age_s=age_s,
        )

    @property
    def due(self) -> int:
        """Grid slots due since the loop started: the cycles run and the slots dropped."""
        return self.cycles + self.skipped

    @property
    def run_skipped_fraction(self) -> float:
        """Share of the run's due slots that were dropped (0–1; NaN before the first cycle)."""
        return self.skipped / self.due if self.due else math.nan

    @property
    def run_late_fraction(self) -> float:
        """Share of the run's due slots served more than half a period late, dropped ones
        included (0–1; NaN before the first cycle)."""
        return self.late_slots / self.due if self.due else math.nan

    def describe(self) -> str:
        """``over the run 149 000 of 149 480 due cycles (0.32 % skipped, 0.41 % more than half a
        period late); last 8.2 s: 429 Hz achieved, 14.3 % skipped, lateness p99 28918 us``."""
        return (
            f"over the run {self.cycles} of {self.due} due cycles "
            f"({_percent(self.run_skipped_fraction)} skipped, "
            f"{_percent(self.run_late_fraction)} more than half a period late"
            f"{_as_of_text(self.age_s)}); "
            f"last {_number(self.window_s, 1)} s: {_number(self.rate_hz, 0)} Hz achieved, "
            f"{_percent(self.skipped_fraction, 1)} skipped, lateness p99 "
            f"{_number(self.lateness_p99_s * 1e6, 0)} us"
        )


def _as_of_text(age_s: float) -> str:
    """The line's note of figures read ``age_s`` s before it (none for fresh ones)."""
    return f"; counted to its report {age_s:.1f} s before this line" if age_s >= 0.05 else ""


def _number(value: float, digits: int) -> str:
    return "?" if math.isnan(value) else f"{value:.{digits}f}"


def _percent(fraction: float, digits: int = 2) -> str:
    return "? %" if math.isnan(fraction) else f"{fraction * 100:.{digits}f} %"


class LoopStats:
    """Ring-buffered timing statistics of one rate loop.

    ``period_target_s`` is the loop's nominal period (s); ``capacity`` the number of recent cycles
    kept for percentiles. The ``record_*`` methods are called by the loop; :meth:`snapshot` by
    anyone.
    """

    def __init__(self, period_target_s: float, capacity: int = 4096) -> None:
        if not (math.isfinite(period_target_s) and period_target_s > 0):
            raise ValueError(
                f"LoopStats period_target_s = {period_target_s!r}: expected a finite period > 0 s"
            )
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ValueError(f"LoopStats capacity = {capacity!r}: expected an int >= 1")
        self._period_target_s = period_target_s
        self._capacity = capacity
        self._period_ns = round(period_target_s * _NS_PER_S)
        self._half_period_ns = self._period_ns // 2
        self._lock = threading.Lock()
        # Per grid slot: lateness of the cycle that served it (dropped slots included).
        self._lateness = np.zeros(capacity, dtype=np.int64)
        # Per interval between wake-ups i-1 and i: its length, the body time of cycle i-1 and the
        # busy-wait time before wake-up i — so cpu/spin fractions are ratios over the same spans.
        self._period = np.zeros(capacity, dtype=np.int64)
        self._busy = np.zeros(capacity, dtype=np.int64)
        self._spin = np.zeros(capacity, dtype=np.int64)
        self._skips = np.zeros(capacity, dtype=np.int64)  # slots dropped before wake-up i
        self.reset()

    @property
    def capacity(self) -> int:
        """Number of recent cycles the percentiles cover (at most)."""
        return self._capacity

    def reset(self) -> None:
        """Forget every sample and counter (a loop calls this when it starts)."""
        with self._lock:
            self._cycles = 0
            self._slots = 0
            self._intervals = 0
            self._overruns = 0
            self._skipped = 0
            self._late_slots = 0
            self._gc_collections = 0
            self._last_wake_ns: int | None = None
            self._body_ns = 0

    def record_body(self, body_ns: int) -> None:
        """Time (ns) the body of the current cycle held the loop; counted into the next period."""
        self._body_ns = body_ns

    def record_cycle(self, wake_ns: int, lateness_ns: int, skipped: int, spin_ns: int) -> None:
        """Record a wake-up at ``wake_ns`` (loop clock), ``lateness_ns`` after its due deadline.

        ``skipped`` grid slots were dropped before it (> 0 marks an overrun); the loop busy-waited
        ``spin_ns`` before waking.
        """
        with self._lock:
            capacity = self._capacity
            self._lateness[self._slots % capacity] = lateness_ns
            self._slots += 1
            self._cycles += 1
            if lateness_ns > self._half_period_ns:
                # This slot and the dropped ones, each a period less late than the one before:
                # those still more than half a period late.
                late = (lateness_ns - self._half_period_ns - 1) // self._period_ns + 1
                self._late_slots += min(late, skipped + 1)
            if skipped > 0:
                self._overruns += 1
                self._skipped += skipped
                # The later dropped slots, each ``period`` less late than the one before
                # (only the newest ``capacity`` can stay in the window).
                count = min(skipped, capacity)
                first = skipped - count + 1
                steps = np.arange(first, skipped + 1, dtype=np.int64)
                slots = (self._slots + np.arange(count)) % capacity
                self._lateness[slots] = lateness_ns - steps * self._period_ns
                self._slots += skipped
            last = self._last_wake_ns
            if last is not None:
                slot = self._intervals % self._capacity
                self._period[slot] = wake_ns - last
                self._busy[slot] = self._body_ns
                self._spin[slot] = spin_ns
                self._skips[slot] = skipped
                self._intervals += 1
            self._last_wake_ns = wake_ns
            self._body_ns = 0

    def record_gc(self) -> None:
        """Count one garbage collection run by the loop."""
        self._gc_collections += 1

    def snapshot(self) -> LoopStatsSnapshot:
        """Summarise the recent window and the counters.

        Allocates and sorts (≈ 0.1 ms for 5000 cycles): call it at 1–10 Hz, not every cycle.
        """
        with self._lock:
            n_late = min(self._slots, self._capacity)
            n_per = min(self._intervals, self._capacity)
            oldest = self._intervals % self._capacity  # the ring's oldest interval, once full
            lateness = self._lateness[:n_late].copy()
            period = self._period[:n_per].copy()
            busy = self._busy[:n_per].copy()
            spin = self._spin[:n_per].copy()
            skips = self._skips[:n_per].copy()
            cycles, overruns, skipped = self._cycles, self._overruns, self._skipped
            late_slots = self._late_slots
            gc_collections = self._gc_collections
        if n_per == self._capacity and oldest:  # oldest first
            period, busy, spin, skips = (np.roll(a, -oldest) for a in (period, busy, spin, skips))
        # The rate figures cover the same grid slots as the lateness figures (the newest
        # ``capacity``, dropped ones included), not the newest ``capacity`` cycles run: those
        # span more wall time the more slots were dropped, and a status line said "last 10s:
        # loop=215Hz skipped=57.0%" of 23 s while the bridge's 1 s reports of its last 10 s
        # averaged 382 Hz (a new user's trial, 2026-12-07). At least the newest interval.
        slots_back = np.cumsum(skips[::-1] + 1)
        keep = max(1, int(np.searchsorted(slots_back, self._capacity, side="right")))
        if n_per > keep:
            period, busy, spin, skips = period[-keep:], busy[-keep:], spin[-keep:], skips[-keep:]
            n_per = keep
        window_skipped = int(skips.sum())
        busy_ns = int(busy.sum())
        spin_ns = int(spin.sum())
        late_p50, late_p99, late_max = _summary(lateness)
        per_p50, per_p99, per_max = _summary(period)
        wall_ns = int(period.sum())
        slots = n_per + window_skipped
        return LoopStatsSnapshot(
            cycles=cycles,
            window=n_late,
            period_target_s=self._period_target_s,
            period_p50_s=per_p50,
            period_p99_s=per_p99,
            period_max_s=per_max,
            lateness_p50_s=late_p50,
            lateness_p99_s=late_p99,
            lateness_max_s=late_max,
            overruns=overruns,
            skipped=skipped,
            cpu_fraction=busy_ns / wall_ns if wall_ns > 0 else math.nan,
            spin_fraction=spin_ns / wall_ns if wall_ns > 0 else math.nan,
            gc_collections=gc_collections,
            achieved_rate_hz=n_per * _NS_PER_S / wall_ns if wall_ns > 0 else math.nan,
            window_skipped=window_skipped,
            skipped_fraction=window_skipped / slots if slots > 0 else math.nan,
            late_slots=late_slots,
        )


def _warm_percentile() -> None:
    """Make ``np.percentile``'s first call here, at import (the module docstring says why)."""
    np.percentile(np.zeros(2, dtype=np.int64), [50.0, 99.0])


_warm_percentile()


def _summary(samples_ns: npt.NDArray[np.int64]) -> tuple[float, float, float]:
    """p50, p99 and max of integer-nanosecond samples, in seconds (NaN when empty)."""
    if samples_ns.size == 0:
        return math.nan, math.nan, math.nan
    p50, p99 = np.percentile(samples_ns, [50.0, 99.0])
    return float(p50) / _NS_PER_S, float(p99) / _NS_PER_S, int(samples_ns.max()) / _NS_PER_S
