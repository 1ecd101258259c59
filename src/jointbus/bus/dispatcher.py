"""The thread that runs ordinary subscribers' callbacks, off the publisher's thread.

Where it sits: :mod:`jointbus.bus`, used by :class:`jointbus.bus.subscriber.Subscriber`. A bus has a
default dispatcher; a node can create its own (:meth:`jointbus.bus.Bus.dispatcher`, like a ROS 2
executor) so a slow callback in one node does not delay another node's callbacks.

Why this shape: publishing must cost the publisher almost nothing, so a publish only appends to the
subscriber's bounded queue and, if the subscriber is not already scheduled, puts the subscriber on
this dispatcher's ``SimpleQueue`` (a C-level, lock-free-for-the-caller put). The dispatcher thread
takes subscribers off that queue and drains each one (bounded per turn, so one busy topic cannot
starve the others). The "scheduled" flag keeps the queue at most one entry per subscriber, so it
never grows without bound however fast publishers run.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Protocol

_LOG = logging.getLogger("jointbus.bus")


class Drainable(Protocol):
    """What a dispatcher serves: something that runs its pending callbacks when asked."""

    def _drain(self) -> None: ...


class Dispatcher:
    """One daemon thread serving the callbacks of the subscribers bound to it."""

    __slots__ = ("_closed", "_on_start", "_queue", "_thread", "name")

    def __init__(
        self, name: str = "jointbus-dispatch", on_start: Callable[[], object] | None = None
    ) -> None:
        """``on_start`` runs first on the new thread (a node gives its callback thread real-time
        scheduling there: only the thread itself can, portably); an exception in it is logged
        and the thread serves anyway."""
        self.name = name
        self._queue: queue.SimpleQueue[Drainable | None] = queue.SimpleQueue()
        self._closed = False
        self._on_start = on_start
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def schedule(self, subscriber: Drainable) -> None:
        """Ask the thread to drain ``subscriber`` soon (called by publishers and transports)."""
        self._queue.put(subscriber)

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    def close(self, timeout: float = 2.0) -> None:
        """Stop the thread after the work already queued; idempotent. ``timeout`` in s."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(None)
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    def _run(self) -> None:
        if self._on_start is not None:
            try:
                self._on_start()
            except Exception:
                _LOG.exception("dispatcher %s: its start hook failed", self.name)
        get = self._queue.get
        while True:
            subscriber = get()
            if subscriber is None:
                return
            try:
                subscriber._drain()
            except Exception:  # a bug in the bus itself: keep serving the others
                _LOG.exception("dispatcher %s: draining a subscriber failed", self.name)


__all__ = ["Dispatcher", "Drainable"]
