"""The clock a bus measures QoS time with: deadlines, lifespans and message birth times.

Where it sits: :mod:`jointbus.bus`, below every endpoint; nothing above the bus needs it unless it
builds a :class:`jointbus.bus.Bus` with ``clock=``. Why injectable: a deadline (a topic silent for
longer than its period) and a lifespan (a message older than its age limit) are statements about
time, and a test or a stepped simulation wants to state them exactly — "20 ms pass, one deadline is
missed" — instead of sleeping and hoping the scheduler kept up on a loaded host.

- :data:`SYSTEM_CLOCK` — the host's monotonic clock (the default); the bus's deadline thread sleeps
  on it and reports a missed deadline within about a scheduler wake-up.
- :class:`ManualClock` — time moves only when :meth:`ManualClock.advance` says so; the deadlines of
  every bus on it are checked inside that call, on the caller's thread, before it returns, so the
  events and counters it causes are visible as soon as ``advance`` returns.

All times are monotonic nanoseconds (int); :meth:`ManualClock.advance` takes seconds (float), as
every QoS duration does.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Final, Protocol

from jointbus.bus.errors import BusError


class Clock(Protocol):
    """A monotonic clock, ns: never goes back."""

    def monotonic_ns(self) -> int:
        """Now, ns (only differences are meaningful)."""
        ...


class SystemClock:
    """The host's monotonic clock (:func:`time.monotonic_ns`)."""

    monotonic_ns: Final = staticmethod(time.monotonic_ns)

    def __repr__(self) -> str:
        return "SystemClock()"


#: The default clock of every bus.
SYSTEM_CLOCK: Final = SystemClock()


class ManualClock:
    """A clock that moves only when told: :meth:`advance` (s) runs the deadline checks it causes.

    ``start_ns``: the first reading (ns). A bus on a manual clock has no deadline thread; each
    :meth:`advance` checks the deadlines of every bus built on this clock before returning.
    """

    def __init__(self, start_ns: int = 0) -> None:
        if isinstance(start_ns, bool) or not isinstance(start_ns, int):
            raise BusError(f"ManualClock start_ns = {start_ns!r}; expected an int (ns)")
        self._now_ns = start_ns
        self._lock = threading.Lock()
        self._listeners: list[Callable[[int], object]] = []

    def monotonic_ns(self) -> int:
        """Now, ns."""
        return self._now_ns

    def advance(self, seconds: float) -> int:
        """Move time forward by ``seconds`` (s, finite, ≥ 0); return the new time (ns).

        Raises BusError for a negative, non-finite or non-numeric step (a monotonic clock never
        goes back), leaving the time unchanged.
        """
        if (
            isinstance(seconds, bool)
            or not isinstance(seconds, int | float)
            or not math.isfinite(seconds)
            or seconds < 0
        ):
            raise BusError(f"ManualClock.advance({seconds!r}); expected a finite number of s ≥ 0")
        with self._lock:
            self._now_ns += round(seconds * 1e9)
            now = self._now_ns
            listeners = tuple(self._listeners)
        for listener in listeners:
            listener(now)
        return now

    def on_advance(self, listener: Callable[[int], object]) -> Callable[[], None]:
        """Call ``listener(now_ns)`` after every :meth:`advance`; returns its remover."""
        with self._lock:
            self._listeners.append(listener)

        def remove() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return remove

    def __repr__(self) -> str:
        return f"ManualClock(now_ns={self._now_ns})"


__all__ = ["SYSTEM_CLOCK", "Clock", "ManualClock", "SystemClock"]
