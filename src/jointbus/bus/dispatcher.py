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

:class:`HostedDispatcher` is the same contract without a thread of its own: the thread of an event
loop that already wakes for the messages serves it (the same-host links' thread,
:meth:`jointbus.bus.sibling_link.SiblingLinks.dispatcher`). Why: in a layout process whose loop is
a node's callback (the control node's step on each frame), the frame came in on the links' thread
and crossed to the node's callback thread — a second wake-up and a GIL hand-over per frame,
42–135 µs of the control process's CPU a cycle on this VM (docs/PERFORMANCE.md, "One wake-up per
frame"). Served on the links'
thread, a frame is received, decoded and stepped on in one wake-up; the node's other callbacks
(a velocity command over Zenoh) still run on that one thread, so the node needs no locks.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import deque
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


class HostedDispatcher(Dispatcher):
    """A dispatcher served by a thread it does not own (see the module docstring).

    The host calls :meth:`start` once and :meth:`serve` after each of its wake-ups, on its own
    thread; ``wake`` (callable from any thread, never blocking) makes the host's thread serve
    soon. A subscriber scheduled from the host's own thread (a message the host just received)
    costs no wake-up: the host serves it before it waits again (:attr:`pending`)."""

    __slots__ = ("_host_ident", "_pending", "_wake")

    def __init__(
        self, name: str, wake: Callable[[], object], on_start: Callable[[], object] | None = None
    ) -> None:
        # no super().__init__: that starts a thread, and this dispatcher's whole point is none
        self.name = name
        self._closed = False
        self._on_start = on_start
        self._wake = wake
        self._host_ident: int | None = None
        self._pending: deque[Drainable] = deque()

    def schedule(self, subscriber: Drainable) -> None:
        """Ask the host's thread to drain ``subscriber`` soon (any thread)."""
        self._pending.append(subscriber)
        if threading.get_ident() != self._host_ident:
            self._wake()

    @property
    def pending(self) -> bool:
        """Whether subscribers wait to be drained (the host must not sleep meanwhile)."""
        return bool(self._pending)

    def start(self) -> None:
        """Make the calling thread this dispatcher's (the host's, once): ``on_start`` runs here."""
        self._host_ident = threading.get_ident()
        if self._on_start is not None:
            try:
                self._on_start()
            except Exception:
                _LOG.exception("dispatcher %s: its start hook failed", self.name)

    def serve(self) -> None:
        """Drain the subscribers scheduled so far (host's thread). Bounded: one scheduled later
        waits for the next call, as the threaded dispatcher's queue is fair between them."""
        pending = self._pending
        for _ in range(len(pending)):
            subscriber = pending.popleft()
            if self._closed:
                continue
            try:
                subscriber._drain()
            except Exception:  # a bug in the bus itself: keep serving the others
                _LOG.exception("dispatcher %s: draining a subscriber failed", self.name)

    def close(self, timeout: float = 2.0) -> None:
        """Serve nothing more; idempotent (the host forgets it at its next turn)."""
        self._closed = True
        self._pending.clear()


__all__ = ["Dispatcher", "Drainable", "HostedDispatcher"]
