"""Periodic callbacks of a node: every timer of one node runs on that node's one timer thread.

Where it sits: :mod:`jointbus.runtime`, below :mod:`jointbus.runtime.node` (which owns one
:class:`TimerThread` per node) and beside the rate loop. It knows nothing of the bus.

Why one thread per node, not one per timer nor one for the process:

- A node's timers (its 1 Hz heartbeat, a 10 Hz mirror, the liveliness check, the user's timers)
  are short and slow; a thread each would cost a thread per 1 Hz callback, and callbacks of one node
  that touch the same state would race. On one thread they run one after the other, like a ROS 2
  single-threaded executor, so a node's timer callbacks never need locks against each other.
- One thread for the whole process would let a slow callback of one node delay the heartbeat of
  every other node, which the liveliness monitor would then report as a fault that is not there.
- Fast periodic work (500 Hz control) does not belong here: it runs on a
  :class:`~jointbus.runtime.rate_loop.RateLoop` with its own thread, absolute deadlines and
  statistics. Timers wake with ordinary ``Condition.wait`` (≈ 0.1 ms late here), which is plenty at
  1–100 Hz.

Timing rules (the same as the rate loop's, for the same reasons): a timer fires on an absolute grid
``start + k·period`` on the monotonic clock, so it does not drift; when a callback overruns, the
missed slots are skipped (counted in :attr:`Timer.skipped`), never run back to back.

An exception in a callback is logged, counted in :attr:`Timer.errors` and passed to the thread's
``on_error`` hook (the node reports it on its status topic); the timer keeps running, because one
bad heartbeat must not silence a node for good.

Tests drive a :class:`TimerThread` created with ``threaded=False`` and an injected clock by calling
:meth:`TimerThread.run_due` — no sleeping, no timing assertions.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable

_LOG = logging.getLogger("jointbus.runtime")

_NS_PER_S = 1_000_000_000
#: Longest single wait of the timer thread (s), so a closed thread notices quickly even if a
#: notification were lost.
_MAX_WAIT_S = 1.0

#: Called with the timer and the exception when a timer callback raises.
TimerErrorHook = Callable[["Timer", Exception], None]


class TimerConfigError(ValueError):
    """A timer parameter is out of range (names the field, the value and what was expected)."""

    def __init__(self, field: str, value: object, expected: str) -> None:
        self.field = field
        self.value = value
        self.expected = expected
        super().__init__(f"timer {field} = {value!r} is invalid: expected {expected}")


class TimerClosedError(RuntimeError):
    """A timer was added to, or started on, a closed :class:`TimerThread`."""


def _check_period(period_s: object) -> float:
    if isinstance(period_s, bool) or not isinstance(period_s, int | float):
        raise TimerConfigError("period_s", period_s, "a number of seconds")
    if not (math.isfinite(period_s) and 1e-4 <= period_s <= 86_400.0):
        raise TimerConfigError("period_s", period_s, "a period in [0.0001, 86400] s")
    return float(period_s)


class Timer:
    """One periodic callback on a :class:`TimerThread`; create it with :meth:`TimerThread.add`.

    ``period_s`` is the period (s). A timer is *active* (scheduled) or *paused*; :meth:`cancel`
    removes it for good. Counters: ``calls`` (callbacks run), ``errors`` (callbacks that raised),
    ``skipped`` (grid slots dropped because a callback overran).
    """

    def __init__(
        self,
        owner: TimerThread,
        period_s: float,
        callback: Callable[[], object],
        name: str,
    ) -> None:
        self.period_s = period_s
        self.period_ns = max(1, round(period_s * _NS_PER_S))
        self.callback = callback
        self.name = name
        self.calls = 0
        self.errors = 0
        self.skipped = 0
        self._owner = owner
        #: Monotonic ns at which the next call is due; None while paused.
        self._due_ns: int | None = None
        self._cancelled = False

    @property
    def active(self) -> bool:
        """True while the timer is scheduled (started and neither paused nor cancelled)."""
        return self._due_ns is not None

    @property
    def cancelled(self) -> bool:
        """True once :meth:`cancel` was called."""
        return self._cancelled

    @property
    def next_due_ns(self) -> int | None:
        """Monotonic time (ns, on the thread's clock) of the next call; None while paused."""
        return self._due_ns

    def start(self, *, immediately: bool = False) -> None:
        """(Re)start the grid now: first call now if ``immediately``, else one period from now.

        Starting an active timer re-anchors its grid. Raises TimerClosedError once cancelled or
        when the thread is closed.
        """
        self._owner._start(self, immediately)

    def pause(self) -> None:
        """Stop calling until :meth:`start`; a callback already running finishes. Idempotent."""
        self._owner._pause(self)

    def cancel(self) -> None:
        """Remove the timer from its thread for good. Idempotent."""
        self._owner._cancel(self)

    def __repr__(self) -> str:
        state = "cancelled" if self._cancelled else "active" if self.active else "paused"
        return f"Timer({self.name!r}, {self.period_s:g} s, {state}, calls={self.calls})"


class TimerThread:
    """Runs the timers of one node, one callback at a time, on one daemon thread.

    ``clock`` is a monotonic clock in integer ns. With ``threaded=False`` no thread is started and
    the owner (a test) calls :meth:`run_due` itself — use that with an injected clock, since the
    thread waits in real time. ``on_error`` is called (on this thread) when a callback raises.
    """

    def __init__(
        self,
        name: str = "jointbus-timers",
        *,
        clock: Callable[[], int] = time.monotonic_ns,
        threaded: bool = True,
        on_error: TimerErrorHook | None = None,
    ) -> None:
        self.name = name
        self.on_error = on_error
        self._clock = clock
        self._timers: list[Timer] = []
        self._cond = threading.Condition(threading.Lock())
        # Held while a callback runs, so pausing can wait for a running callback to finish.
        self._running = threading.Lock()
        self._closed = False
        self._thread: threading.Thread | None = None
        if threaded:
            self._thread = threading.Thread(target=self._run, name=name, daemon=True)
            self._thread.start()

    # ---- public ------------------------------------------------------------------------------
    def clock(self) -> int:
        """The thread's monotonic clock (ns); the node and its monitors read time through it."""
        return self._clock()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    @property
    def timers(self) -> tuple[Timer, ...]:
        """The timers not cancelled (active or paused)."""
        with self._cond:
            return tuple(self._timers)

    def add(
        self,
        period_s: float,
        callback: Callable[[], object],
        *,
        name: str = "",
        start: bool = True,
        immediately: bool = False,
    ) -> Timer:
        """A new timer calling ``callback()`` every ``period_s`` s; started at once if ``start``.

        Raises TimerConfigError for a period outside [0.1 ms, 1 day] or a callback that is not
        callable, TimerClosedError on a closed thread.
        """
        period = _check_period(period_s)
        if not callable(callback):
            raise TimerConfigError("callback", callback, "a callable taking no arguments")
        timer = Timer(self, period, callback, name or getattr(callback, "__name__", "timer"))
        with self._cond:
            if self._closed:
                raise TimerClosedError(f"timer thread {self.name!r} is closed")
            self._timers.append(timer)
        if start:
            timer.start(immediately=immediately)
        return timer

    def run_due(self, now_ns: int | None = None) -> int:
        """Run every timer due at ``now_ns`` (default: the clock now), earliest first.

        Returns how many callbacks ran. The thread calls this; so do tests with ``threaded=False``.
        Each timer runs at most once per call, on the next grid slot after ``now_ns``.
        """
        now = self._clock() if now_ns is None else now_ns
        ran = 0
        while True:
            with self._cond:
                due = [t for t in self._timers if t._due_ns is not None and t._due_ns <= now]
                if not due or self._closed:
                    return ran
                timer = min(due, key=lambda t: t._due_ns or 0)
                slot = timer._due_ns or 0
                behind = (now - slot) // timer.period_ns  # whole periods missed
                timer.skipped += behind
                timer._due_ns = slot + (behind + 1) * timer.period_ns
                callback = timer.callback
            with self._running:
                # A pause/cancel between picking the timer and here wins: do not call it.
                if timer._due_ns is None or timer._cancelled:
                    continue
                try:
                    callback()
                except Exception as exc:
                    timer.errors += 1
                    _LOG.exception(
                        "timer %r of %s raised (error %d)", timer.name, self.name, timer.errors
                    )
                    hook = self.on_error
                    if hook is not None:
                        try:
                            hook(timer, exc)
                        except Exception:
                            _LOG.exception("timer error hook of %s raised", self.name)
                finally:
                    timer.calls += 1
            ran += 1

    def wait_idle(self) -> None:
        """Return once no callback is running (at once when called from a callback itself)."""
        if threading.current_thread() is self._thread:
            return
        with self._running:
            pass

    def close(self, timeout: float = 2.0) -> None:
        """Cancel every timer and stop the thread (waits ``timeout`` s for it). Idempotent."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            for timer in self._timers:
                timer._due_ns = None
                timer._cancelled = True
            self._timers.clear()
            self._cond.notify_all()
        thread = self._thread
        if thread is not None and threading.current_thread() is not thread:
            thread.join(timeout)

    # ---- used by Timer -----------------------------------------------------------------------
    def _start(self, timer: Timer, immediately: bool) -> None:
        with self._cond:
            if self._closed or timer._cancelled:
                raise TimerClosedError(
                    f"timer {timer.name!r} cannot start: "
                    + ("it was cancelled" if timer._cancelled else f"{self.name!r} is closed")
                )
            now = self._clock()
            timer._due_ns = now if immediately else now + timer.period_ns
            self._cond.notify_all()

    def _pause(self, timer: Timer) -> None:
        with self._cond:
            timer._due_ns = None

    def _cancel(self, timer: Timer) -> None:
        with self._cond:
            timer._due_ns = None
            timer._cancelled = True
            if timer in self._timers:
                self._timers.remove(timer)

    # ---- the thread --------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            with self._cond:
                if self._closed:
                    return
                dues = [t._due_ns for t in self._timers if t._due_ns is not None]
                wait_s = _MAX_WAIT_S
                if dues:
                    wait_s = min(wait_s, (min(dues) - self._clock()) / _NS_PER_S)
                if wait_s > 0:
                    self._cond.wait(wait_s)
                    continue
            self.run_due()


__all__ = ["Timer", "TimerClosedError", "TimerConfigError", "TimerErrorHook", "TimerThread"]
