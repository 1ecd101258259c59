"""The timer that detects missed QoS deadlines for publishers and subscribers.

Where it sits: :mod:`jointbus.bus`, owned by a :class:`jointbus.bus.Bus`. The thread starts with the
first endpoint that has a deadline and sleeps until the earliest next due time; endpoints only
record the time of their last message (one attribute store on the hot path) and this thread does
the comparing. Missed deadlines are therefore reported within about a scheduler wake-up (≈ 0.1 ms
here) of the moment they are missed, from this thread.

On a :class:`~jointbus.bus.clock.ManualClock` there is no thread: time moves only in
:meth:`ManualClock.advance`, which runs the same check on the caller's thread, so a test states
"20 ms pass" and sees the missed deadline when ``advance`` returns, without sleeping.
"""

from __future__ import annotations

import logging
import threading
from typing import Protocol

from jointbus.bus.clock import SYSTEM_CLOCK, Clock, ManualClock

_LOG = logging.getLogger("jointbus.bus")

#: Longest sleep of the timer thread (s): bounds how late a newly added endpoint is first checked.
_MAX_SLEEP_S = 0.5


class DeadlineWatched(Protocol):
    """An endpoint with a deadline: checks itself, returns its next due time (monotonic ns)."""

    def _check_deadline(self, now_ns: int) -> int: ...


class DeadlineTimer:
    """One lazily started daemon thread checking every registered endpoint's deadline.

    ``clock``: the time the deadlines are measured on; a :class:`ManualClock` replaces the thread
    by a check in each of its :meth:`~ManualClock.advance` calls.
    """

    def __init__(self, clock: Clock = SYSTEM_CLOCK) -> None:
        self._clock = clock
        self._entities: set[DeadlineWatched] = set()
        self._cond = threading.Condition(threading.Lock())
        self._thread: threading.Thread | None = None
        self._closed = False
        self._stop_listening = (
            clock.on_advance(self._check_all) if isinstance(clock, ManualClock) else None
        )

    def add(self, entity: DeadlineWatched) -> None:
        """Start watching ``entity``."""
        with self._cond:
            if self._closed:
                return
            self._entities.add(entity)
            if self._thread is None and self._stop_listening is None:
                self._thread = threading.Thread(
                    target=self._run, name="jointbus-deadline", daemon=True
                )
                self._thread.start()
            self._cond.notify()

    def remove(self, entity: DeadlineWatched) -> None:
        """Stop watching ``entity`` (no error if it was not watched)."""
        with self._cond:
            self._entities.discard(entity)

    def close(self, timeout: float = 2.0) -> None:
        """Stop the thread; idempotent. ``timeout`` in s."""
        with self._cond:
            self._closed = True
            self._entities.clear()
            self._cond.notify()
            thread = self._thread
        if self._stop_listening is not None:
            self._stop_listening()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _stopping(self) -> bool:
        return self._closed

    def _check_all(self, now: int) -> int:
        """Check every endpoint at ``now`` (ns); return the earliest next due time (ns)."""
        with self._cond:
            if self._closed:
                return now
            entities = tuple(self._entities)
        next_due = now + int(_MAX_SLEEP_S * 1e9)
        for entity in entities:
            try:
                next_due = min(next_due, entity._check_deadline(now))
            except Exception:
                _LOG.exception("deadline check failed")
        return next_due

    def _run(self) -> None:
        clock = self._clock
        while True:
            with self._cond:
                if self._closed:
                    return
            next_due = self._check_all(clock.monotonic_ns())
            with self._cond:
                if self._stopping():
                    return
                delay = (next_due - clock.monotonic_ns()) / 1e9
                if delay > 0:
                    self._cond.wait(delay)


__all__ = ["DeadlineTimer", "DeadlineWatched"]
