"""The fixed-rate loop every periodic node runs (the 500 Hz bridge, controllers, publishers).

Where it sits: :mod:`jointbus.runtime`, below the nodes and above the bus; it uses only
:mod:`jointbus.runtime.loop_stats` and :mod:`jointbus.runtime.realtime`. A node either hands it a
body (:meth:`RateLoop.run`) or writes its own ``while`` loop around :meth:`RateLoop.wait_next`.

How it keeps time, and why:

- **Absolute deadlines.** Cycle slot ``k`` is due at ``t0 + k·period`` on the monotonic clock in
  integer nanoseconds (the period is kept as an exact fraction, so even 300 Hz does not round).
  A loop that sleeps ``period`` after each body drifts by body time + wake-up lateness every cycle
  (≈ 5 % slow at 500 Hz on our VMs); an absolute grid cannot drift, whatever the body takes.
  Never the wall clock: NTP steps would shift the grid.
- **Sleep, then spin.** ``time.sleep`` wakes ≈ 100–130 µs late here (timer slack plus the VM's
  wake-up cost), so the loop sleeps until ``spin_s`` (default 200 µs) before the deadline and
  busy-waits the rest. That buys ≈ sub-µs median lateness for ≈ 7–10 % of a core at 500 Hz;
  ``spin_s=0`` gives the pure-sleep behaviour back.
- **Adaptive spin** (``adaptive_spin=True``; the bridge uses it). A fixed spin window has to
  cover the worst wake-up seen on any machine, and the loop burns the difference between that
  and the actual oversleep every cycle (≈ 150 µs, 7–8 % of a core at 500 Hz under SCHED_FIFO,
  whose sleeps wake ≈ 30–50 µs late here, p99 ≈ 60–100 µs). With ``adaptive_spin`` the loop
  measures how late each sleep woke and tracks a quantile of it (``spin_quantile``, default
  :data:`SPIN_QUANTILE`, a stochastic quantile estimate: up by ``spin_quantile × step`` on a
  later wake-up, down by ``(1 − spin_quantile) × step`` on an earlier one, so a single
  multi-ms stall moves it by one step only); the window is that estimate plus
  ``spin_margin_s`` (:data:`SPIN_MARGIN_S`), never more than ``spin_s``. It starts at ``spin_s``
  and settles within a second. Cycles whose wake-up exceeds the window (about one in ten) are
  late by that excess only, typically tens of µs. Why the 90 % quantile and 10 µs: the sleeps'
  wake-up lateness has a long tail here, and covering its 98 % quantile plus 20 µs (the first
  setting) cost 4.8 % of a core in spin at 500 Hz and 7.4 % at 1 kHz for a lateness p99 of
  17–21 µs; 90 % and 10 µs cost 1.5 % and 2.4 % for 11–17 µs (a bare loop on SCHED_FIFO with a
  300 µs body, this 2-vCPU VM at load 10, 2026-12-02; ``bench_rate_loop``'s ``spin policy``
  rows measure both side by side). Without spinning at all the lateness p99 is 60–90 µs.
  Spinning never helps a loop whose wake-ups wait for another thread's GIL: it then holds the
  GIL itself while it spins.
- **Overruns skip, they do not burst.** When a cycle wakes one period or more after its due
  deadline (a slow body, a host stall of several ms), the missed slots are dropped: the cycle runs
  at once as the most recent slot whose deadline has passed and the loop continues on the same
  grid. Catching up instead would run the body several times back to back and send the actuators
  a burst of commands computed from the same stale feedback — worse than one missing command,
  which the bridge's watchdog already tolerates. The overrun and the number of skipped slots are
  counted in :class:`~jointbus.runtime.loop_stats.LoopStats`.
- **Garbage collection out of the cycle** (``freeze_gc=True``). At start the loop runs a full
  collection, moves every set-up object to the permanent generation (``gc.freeze()``) and turns
  automatic collection off, because an automatic collection can fire on any allocation inside the
  body and take milliseconds. Instead, after each body, when the young generation is due (its
  allocation count has reached the gc threshold) *and* the next deadline is at least
  ``gc_slack_s`` beyond the spin window, the loop runs ``gc.collect(0)`` (``gc.collect(1)`` when
  that generation is due in turn) — ≈ 10 µs for 700 young objects here. It never runs a full
  collection inside the loop; if the body never leaves enough slack the young generation is
  collected anyway once it holds ten times its threshold, so memory stays bounded. Everything is
  put back when the loop ends.
- **Real time** (``realtime=RealtimeConfig(...)``): SCHED_FIFO, CPU affinity and timer slack are
  applied to the thread that starts the loop, with a
  :class:`~jointbus.runtime.realtime.RealtimeWarning` for each setting the OS refuses, and
  restored at the end.
"""

from __future__ import annotations

import gc
import math
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from types import TracebackType

from jointbus.runtime.loop_stats import LoopStats, LoopStatsSnapshot
from jointbus.runtime.realtime import (
    RealtimeConfig,
    RealtimeState,
    apply_realtime,
    read_realtime_state,
    restore_realtime,
)

__all__ = ["CycleInfo", "RateLoop", "RateLoopConfigError", "RateLoopStateError"]

_NS_PER_S = 1_000_000_000
#: Highest rate accepted (Hz): beyond this Python cannot run a body per period anyway.
MAX_RATE_HZ = 100_000.0
#: Young-generation size, in multiples of its gc threshold, at which the loop collects even
#: without slack (bounds memory when a body never leaves enough slack).
_GC_FORCE_FACTOR = 10
#: Adaptive spin: the quantile of the sleeps' wake-up lateness the spin window covers (default of
#: ``RateLoop(spin_quantile=...)``; see the module docstring for why 0.9).
SPIN_QUANTILE = 0.9
#: Adaptive spin: added to the estimated quantile (s; default of ``spin_margin_s``).
SPIN_MARGIN_S = 10e-6
#: Adaptive spin: step of the quantile estimate (ns).
_SPIN_STEP_NS = 10_000


class RateLoopConfigError(ValueError):
    """A :class:`RateLoop` parameter is out of range."""

    def __init__(self, field: str, value: object, expected: str) -> None:
        self.field = field
        self.value = value
        self.expected = expected
        super().__init__(f"RateLoop {field} = {value!r} is invalid: expected {expected}")


class RateLoopStateError(RuntimeError):
    """A :class:`RateLoop` method was called in the wrong state (not started, already running)."""


@dataclass(frozen=True, slots=True)
class CycleInfo:
    """What a cycle body knows about its cycle. Times are on the loop's monotonic clock (ns).

    ``index`` counts executed cycles (0, 1, 2, … without gaps); ``tick`` is the grid slot this
    cycle stands for (it jumps over slots dropped by an overrun — use ``tick × period`` as the
    cycle's time on a trajectory); ``deadline_ns`` is when this cycle was due and ``wake_ns`` when
    it started, ``lateness_ns = wake_ns − deadline_ns``; ``dt_s`` is the time since the previous
    cycle's wake-up in seconds (0.0 on the first cycle); ``skipped`` is the number of grid slots
    dropped just before this cycle (> 0 means it overran).
    """

    index: int
    tick: int
    deadline_ns: int
    wake_ns: int
    lateness_ns: int
    dt_s: float
    skipped: int


class RateLoop:
    """A fixed-rate loop on absolute deadlines with sleep-then-spin waiting.

    ``rate_hz`` is the loop rate (Hz); ``spin_s`` how long before each deadline to stop sleeping
    and busy-wait (s); ``clock`` a monotonic clock in integer nanoseconds and ``sleep`` a sleep in
    seconds (both injectable for tests); ``freeze_gc`` moves garbage collection out of the cycle
    (see the module docstring) with ``gc_slack_s`` (s) the free time a collection needs;
    ``realtime`` optional real-time settings for the loop thread; ``stats_window_s`` how many
    seconds of recent cycles :attr:`stats` keeps for its percentiles; ``adaptive_spin`` shrinks
    the spin window to what the sleeps' measured lateness needs (at most ``spin_s``): the
    ``spin_quantile`` of that lateness (0 < q < 1) plus ``spin_margin_s`` (s; see the module
    docstring).

    Use ``loop.run(body)``, or ``with loop: for info in loop: ...`` / ``loop.wait_next()``.
    """

    def __init__(
        self,
        rate_hz: float,
        *,
        spin_s: float = 200e-6,
        clock: Callable[[], int] = time.monotonic_ns,
        sleep: Callable[[float], None] = time.sleep,
        freeze_gc: bool = False,
        gc_slack_s: float = 250e-6,
        realtime: RealtimeConfig | None = None,
        stats_window_s: float = 10.0,
        adaptive_spin: bool = False,
        spin_quantile: float = SPIN_QUANTILE,
        spin_margin_s: float = SPIN_MARGIN_S,
    ) -> None:
        if isinstance(rate_hz, bool) or not isinstance(rate_hz, int | float):
            raise RateLoopConfigError("rate_hz", rate_hz, "a number of Hz")
        if not (math.isfinite(rate_hz) and 0 < rate_hz <= MAX_RATE_HZ):
            raise RateLoopConfigError("rate_hz", rate_hz, f"a rate in (0, {MAX_RATE_HZ:g}] Hz")
        for field, value in (
            ("spin_s", spin_s),
            ("gc_slack_s", gc_slack_s),
            ("spin_margin_s", spin_margin_s),
        ):
            if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
                raise RateLoopConfigError(field, value, "a finite duration >= 0 s")
        if not (isinstance(stats_window_s, int | float) and math.isfinite(stats_window_s)) or (
            stats_window_s <= 0
        ):
            raise RateLoopConfigError("stats_window_s", stats_window_s, "a finite duration > 0 s")
        if realtime is not None and not isinstance(realtime, RealtimeConfig):
            raise RateLoopConfigError("realtime", realtime, "a RealtimeConfig or None")
        if isinstance(spin_quantile, bool) or not isinstance(spin_quantile, int | float) or not (
            0.0 < spin_quantile < 1.0
        ):
            raise RateLoopConfigError("spin_quantile", spin_quantile, "a fraction in (0, 1)")
        rate = Fraction(rate_hz).limit_denominator(1_000_000)
        self.rate_hz = float(rate_hz)
        #: Slot k is due at t0 + ceil(k · _grid_num / _grid_den) ns (exact period = num/den ns).
        self._grid_num = _NS_PER_S * rate.denominator
        self._grid_den = rate.numerator
        self._period_ns = self._grid_num // self._grid_den
        self.period_s = float(Fraction(rate.denominator, rate.numerator))
        self._spin_ns = round(spin_s * _NS_PER_S)
        self._adaptive_spin = bool(adaptive_spin)
        self._spin_up = float(spin_quantile) * _SPIN_STEP_NS  # ns per later wake-up
        self._spin_down = (1.0 - float(spin_quantile)) * _SPIN_STEP_NS  # ns per earlier one
        self._spin_margin_ns = round(spin_margin_s * _NS_PER_S)
        #: Adaptive spin: the estimated wake-up lateness quantile of a sleep (ns).
        self._oversleep_ns = float(self._spin_ns)
        self._window_ns = self._spin_ns
        self._gc_slack_ns = round(gc_slack_s * _NS_PER_S)
        self._clock = clock
        self._sleep = sleep
        self._freeze_gc = freeze_gc
        self._realtime = realtime
        self.stats = LoopStats(self.period_s, max(16, math.ceil(stats_window_s * self.rate_hz)))
        #: Messages of the real-time settings refused at the last start (empty = all applied).
        self.realtime_warnings: list[str] = []
        self._running = False
        self._t0 = 0
        self._tick = -1
        self._index = 0
        self._last_wake: int | None = None
        self._gc_was_enabled = False
        self._gc_froze = False
        self._gc_threshold = (0, 0)
        self._rt_state: RealtimeState | None = None

    # -- life cycle -----------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """True between :meth:`start` and :meth:`close`."""
        return self._running

    def start(self) -> None:
        """Prepare to run on the calling thread: reset statistics, apply gc and real-time settings.

        Call it after the node's set-up (so ``gc.freeze()`` captures the set-up objects) and on
        the thread that will run the loop. The time grid starts at the first :meth:`wait_next`.
        """
        if self._running:
            raise RateLoopStateError("RateLoop.start(): the loop is already running")
        self.stats.reset()
        self._tick = -1
        self._index = 0
        self._last_wake = None
        self._oversleep_ns = float(self._spin_ns)
        self._window_ns = self._spin_ns
        self.realtime_warnings = []
        if self._freeze_gc:
            self._gc_was_enabled = gc.isenabled()
            self._gc_froze = gc.get_freeze_count() == 0
            gc.disable()
            gc.collect()
            gc.freeze()
            threshold = gc.get_threshold()
            self._gc_threshold = (threshold[0], threshold[1])
        if self._realtime is not None:
            self._rt_state = read_realtime_state()
            self.realtime_warnings = apply_realtime(self._realtime)
        self._running = True

    def close(self) -> None:
        """Stop: restore the gc and real-time state found at :meth:`start`. Idempotent.

        ``gc.unfreeze()`` is called only if nothing was frozen before the loop started (unfreezing
        is all-or-nothing, and someone else's freeze must survive).
        """
        if not self._running:
            return
        self._running = False
        if self._freeze_gc:
            if self._gc_froze:
                gc.unfreeze()
            if self._gc_was_enabled:
                gc.enable()
        if self._rt_state is not None:
            state, self._rt_state = self._rt_state, None
            restore_realtime(state)

    def __enter__(self) -> RateLoop:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- running ----------------------------------------------------------------------------

    def run(
        self,
        body: Callable[[CycleInfo], None],
        *,
        cycles: int | None = None,
        stop: threading.Event | None = None,
    ) -> LoopStatsSnapshot:
        """Call ``body`` once per cycle until ``cycles`` bodies have run or ``stop`` is set.

        ``stop`` is checked after each body, so the loop ends within one period of it being set.
        Exceptions from the body propagate after the gc and real-time state are restored.
        Returns the final statistics.
        """
        if cycles is not None and (
            isinstance(cycles, bool) or not isinstance(cycles, int) or cycles < 0
        ):
            raise RateLoopConfigError("cycles", cycles, "an int >= 0 or None")
        with self:
            done = 0
            while (cycles is None or done < cycles) and not (stop is not None and stop.is_set()):
                body(self.wait_next())
                done += 1
        return self.stats.snapshot()

    def __iter__(self) -> Iterator[CycleInfo]:
        """Yield one :class:`CycleInfo` per cycle, forever; the loop must be started."""
        while True:
            yield self.wait_next()

    def wait_next(self) -> CycleInfo:
        """Block until the next cycle is due and return its :class:`CycleInfo`.

        The time since the previous call returned is counted as that cycle's body time. The first
        call after :meth:`start` anchors the grid at the current time and returns at once.
        """
        if not self._running:
            raise RateLoopStateError(
                "RateLoop.wait_next(): call start() or use `with loop:` first"
            )
        clock = self._clock
        now = clock()
        last_wake = self._last_wake
        if last_wake is None:
            self._t0 = now
            due_tick = 0
        else:
            self.stats.record_body(now - last_wake)
            due_tick = self._tick + 1
            if self._freeze_gc:
                now = self._collect_in_slack(now, self._deadline(due_tick))
        due = self._deadline(due_tick)
        spin_ns = 0
        if now < due:
            remaining = due - now
            window = self._window_ns
            while remaining > window:
                asked = remaining - window
                self._sleep(asked / _NS_PER_S)
                woke = clock()
                if self._adaptive_spin:
                    window = self._learn_oversleep(woke - now - asked)
                now = woke
                remaining = due - now
            spin_start = now
            while now < due:
                now = clock()
            spin_ns = now - spin_start
        lateness = now - due
        tick = due_tick
        if lateness >= self._period_ns:
            # Overrun: run now as the latest slot already due, drop the ones in between.
            tick = max(due_tick, ((now - self._t0) * self._grid_den) // self._grid_num)
        skipped = tick - due_tick
        self._tick = tick
        self.stats.record_cycle(now, lateness, skipped, spin_ns)
        info = CycleInfo(
            index=self._index,
            tick=tick,
            deadline_ns=due,
            wake_ns=now,
            lateness_ns=lateness,
            dt_s=0.0 if last_wake is None else (now - last_wake) / _NS_PER_S,
            skipped=skipped,
        )
        self._index += 1
        self._last_wake = now
        return info

    def _learn_oversleep(self, late_ns: int) -> int:
        """Update the oversleep quantile with one sleep ``late_ns`` late; the new spin window."""
        if late_ns > self._oversleep_ns:
            self._oversleep_ns += self._spin_up
        else:
            self._oversleep_ns = max(0.0, self._oversleep_ns - self._spin_down)
        window = min(self._spin_ns, round(self._oversleep_ns) + self._spin_margin_ns)
        self._window_ns = window
        return window

    @property
    def spin_window_s(self) -> float:
        """The current spin window (s): ``spin_s``, or less with ``adaptive_spin``."""
        return self._window_ns / _NS_PER_S

    def deadline_ns(self, tick: int) -> int:
        """Deadline (loop clock, ns) of grid slot ``tick`` of the current run."""
        return self._deadline(tick)

    def _deadline(self, tick: int) -> int:
        # Ceiling, so that slot_at(deadline(k)) == k exactly (see the overrun branch above).
        return self._t0 + -((-tick * self._grid_num) // self._grid_den)

    def _collect_in_slack(self, now: int, next_due: int) -> int:
        """Run a young-generation collection if one is due and fits before the spin window."""
        count0, count1, _ = gc.get_count()
        threshold0, threshold1 = self._gc_threshold
        if threshold0 <= 0 or count0 < threshold0:
            return now
        slack = next_due - self._spin_ns - now
        if slack < self._gc_slack_ns and count0 < _GC_FORCE_FACTOR * threshold0:
            return now
        gc.collect(1 if threshold1 > 0 and count1 >= threshold1 else 0)
        self.stats.record_gc()
        return self._clock()
