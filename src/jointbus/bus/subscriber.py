"""Subscribers: per-subscriber bounded queues, callbacks off or on the publisher's thread, polling.

Where it sits: :mod:`jointbus.bus`, created by :meth:`jointbus.bus.Bus.subscribe`; fed by local
publishers (objects, never serialised) and by the Zenoh transport (decoded once per sample, then
shared). Every subscriber of a topic receives the *same* immutable message object.

Three ways to consume:

- **ordinary callback** (default): a publish appends ``(message, birth time)`` to this subscriber's
  queue — a ``deque(maxlen=depth)`` — and schedules it on its :class:`Dispatcher`, whose thread runs
  the callback. The publisher never waits: when the queue is full the *oldest* message is
  overwritten. On a best-effort topic that is counted in ``dropped`` (expected: the newest sample
  matters); on a reliable topic it is counted in ``overflow`` and reported as a
  :class:`MessagesLostEvent` — the ROS 2 KEEP_LAST behaviour (DDS also overwrites the reader's
  history), made visible. We deliberately never block the publisher: a 500 Hz loop must not stall
  because a logger is slow. Give a reliable subscriber a deeper queue if it must absorb bursts.
- **realtime callback** (``realtime=True``): the callback runs synchronously inside ``publish`` (on
  the publisher's thread, or on the Zenoh receive thread for remote messages), with no queue and no
  thread hop — for a 500 Hz control loop that wants the newest command within the same cycle. It
  must be short and must not block.
- **polling** (no callback): messages wait in the queue; :meth:`Subscriber.take` pops the oldest,
  :meth:`Subscriber.latest` peeks at the newest, which suits a loop that samples at its own rate.

Lifespan is checked when a message is handed over (callback, ``take``, ``latest``): older messages
are dropped and counted in ``expired``. Counters are exact when each topic is published from one
thread (the normal case); with several publishing threads they may under-count by a few.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic

from jointbus.bus.clock import Clock
from jointbus.bus.dispatcher import Dispatcher
from jointbus.bus.endpoint import EmitFn, Endpoint, EventCallback, MsgT
from jointbus.bus.errors import BusClosedError, BusError
from jointbus.bus.events import EndpointKind, MalformedPayloadEvent, MessagesLostEvent
from jointbus.bus.qos import QosProfile
from jointbus.bus.sample_gate import new_latency_stats

_LOG = logging.getLogger("jointbus.bus")

#: How a subscriber is offered a message: ``offer(message, birth_ns, arrival_ns)`` (monotonic ns).
OfferFn = Callable[[MsgT, int, int], None]


@dataclass(frozen=True, slots=True)
class SubscriberStats:
    """A snapshot of one subscriber's counters.

    ``received``: messages offered (local or remote); ``delivered``: handed to the callback or
    taken; ``dropped``: overwritten in a full best-effort queue; ``overflow``: overwritten in a full
    reliable queue; ``expired``: older than the lifespan; ``lost``: sequence gaps from remote
    publishers; ``malformed``: undecodable remote payloads; ``callback_errors``: exceptions
    raised by the callback. Latency (ns) is measured for remote messages from the sender's wall
    clock (only meaningful between hosts with synchronised clocks); 0 when none was measured.
    """

    received: int
    delivered: int
    dropped: int
    overflow: int
    expired: int
    lost: int
    malformed: int
    deadline_missed: int
    callback_errors: int
    queued: int
    latency_count: int
    latency_last_ns: int
    latency_mean_ns: float
    latency_max_ns: int


class Subscriber(Endpoint[MsgT], Generic[MsgT]):
    """A subscription to one topic. Create with :meth:`jointbus.bus.Bus.subscribe`."""

    KIND: EndpointKind = "subscriber"

    def __init__(
        self,
        topic: str,
        msg_type: type[MsgT],
        callback: Callable[[MsgT], object] | None,
        qos: QosProfile,
        *,
        realtime: bool,
        node: str,
        on_event: EventCallback | None,
        emit: EmitFn,
        clock: Clock,
        dispatcher: Dispatcher | None,
        on_close: Callable[[Subscriber[MsgT]], None],
        namespace: str = "/",
    ) -> None:
        super().__init__(
            topic,
            msg_type,
            qos,
            node=node,
            on_event=on_event,
            emit=emit,
            clock=clock,
            namespace=namespace,
        )
        if realtime and callback is None:
            raise BusError(f"realtime subscriber on {topic!r} needs a callback")
        if callback is not None and not callable(callback):
            raise BusError(f"subscriber callback on {topic!r} is not callable: {callback!r}")
        self.realtime = realtime
        self._callback = callback
        self._dispatcher = dispatcher
        self._on_close = on_close
        self._buffer: deque[tuple[MsgT, int]] = deque(maxlen=qos.depth)
        self._depth = qos.depth
        self._reliable = qos.reliable
        self._lifespan_ns = qos.lifespan_ns
        self._latest: tuple[MsgT, int] | None = None
        self._scheduled = False
        self.received = 0
        self.delivered = 0
        self.dropped = 0
        self.overflow = 0
        self.expired = 0
        self.lost = 0
        self.malformed = 0
        self.callback_errors = 0
        self._overflow_unreported = 0
        #: Latency counters of remote samples: the compiled core's when built, so that the
        #: receive gate (jointbus.bus.sample_gate) updates them without a Python call.
        self.latency_stats = new_latency_stats()
        #: The bound method publishers call; chosen once so the hot path has no branch on mode.
        self.offer: OfferFn[MsgT] = self._offer_sync if realtime else self._offer_queued

    # ---- hot path -------------------------------------------------------------------------
    def _offer_sync(self, msg: MsgT, born_ns: int, now_ns: int) -> None:
        self.received += 1
        self._last_activity_ns = now_ns
        if self._lifespan_ns and now_ns - born_ns > self._lifespan_ns:
            self.expired += 1
            return
        self._latest = (msg, born_ns)
        try:
            self._callback(msg)  # type: ignore[misc]
        except Exception:
            self._callback_failed()
        else:
            self.delivered += 1

    def _offer_queued(self, msg: MsgT, born_ns: int, now_ns: int) -> None:
        buffer = self._buffer
        if len(buffer) == self._depth:
            if self._reliable:
                self.overflow += 1
                self._overflow_unreported += 1
            else:
                self.dropped += 1
        buffer.append((msg, born_ns))
        self._latest = (msg, born_ns)
        self.received += 1
        self._last_activity_ns = now_ns
        if not self._scheduled and self._dispatcher is not None:
            self._scheduled = True
            self._dispatcher.schedule(self)

    def _drain(self) -> None:
        """Run the callback for the queued messages (dispatcher thread)."""
        self._scheduled = False
        if self._closed:
            return
        buffer = self._buffer
        callback = self._callback
        lifespan = self._lifespan_ns
        self._report_overflow()
        for _ in range(len(buffer)):  # bounded turn: fairness between subscribers
            try:
                msg, born = buffer.popleft()
            except IndexError:
                break
            if lifespan and self._clock.monotonic_ns() - born > lifespan:
                self.expired += 1
                continue
            try:
                callback(msg)  # type: ignore[misc]
            except Exception:
                self._callback_failed()
            else:
                self.delivered += 1
            if self.closed:
                return
        if buffer and not self._scheduled and self._dispatcher is not None:
            self._scheduled = True
            self._dispatcher.schedule(self)

    def _callback_failed(self) -> None:
        self.callback_errors += 1
        _LOG.exception(
            "subscriber %s on %s: callback raised (error %d); the subscriber keeps running",
            self.label,
            self.topic,
            self.callback_errors,
        )

    def _report_overflow(self) -> None:
        count = self._overflow_unreported
        if count:
            self._overflow_unreported = 0
            self._emit(
                MessagesLostEvent(self.topic, self.label, "overflow", count, self.overflow, "local")
            )

    # ---- remote bookkeeping (called by the Zenoh transport) -----------------------------------
    def _note_lost(self, count: int, publisher: str) -> None:
        self.lost += count
        self._emit(MessagesLostEvent(self.topic, self.label, "gap", count, self.lost, publisher))

    def _note_malformed(self, publisher: str, size: int, payload: bytes, cause: Exception) -> None:
        self.malformed += 1
        self._emit(
            MalformedPayloadEvent(
                self.topic, self.label, publisher, size, str(cause), self.malformed, payload, cause
            )
        )

    def _note_latency(self, latency_ns: int) -> None:
        self.latency_stats.note(latency_ns)

    # ---- public API --------------------------------------------------------------------------
    def take(self) -> MsgT | None:
        """Pop the oldest unexpired queued message (polling subscribers only); None if empty."""
        self._check_polling("take")
        self._report_overflow()
        buffer = self._buffer
        lifespan = self._lifespan_ns
        while buffer:
            try:
                msg, born = buffer.popleft()
            except IndexError:
                return None
            if lifespan and self._clock.monotonic_ns() - born > lifespan:
                self.expired += 1
                continue
            self.delivered += 1
            return msg
        return None

    def take_all(self) -> list[MsgT]:
        """Pop every unexpired queued message, oldest first (polling subscribers only)."""
        out: list[MsgT] = []
        while (msg := self.take()) is not None:
            out.append(msg)
        return out

    def latest(self) -> MsgT | None:
        """The newest message received (not consumed), or None if none or it has expired."""
        if self._closed:
            raise BusClosedError(f"subscriber {self.label} on {self.topic!r} is closed")
        latest = self._latest
        if latest is None:
            return None
        msg, born = latest
        if self._lifespan_ns and self._clock.monotonic_ns() - born > self._lifespan_ns:
            return None
        return msg

    @property
    def latest_sent_ns(self) -> int | None:
        """When the newest message received was sent (ns, this host's ``time.monotonic_ns()``
        clock; ``None``: none yet): its publisher's send time from the sample's attachment, as
        its latency is measured, or its arrival when it carries none. Read in a ``realtime``
        callback it is the message being delivered's. Why: a figure over arrival times is as
        late as this process was — a starved launcher read its robot's real-time factor 0.82
        where the bridge's own windows said 0.954–0.960 (a user's trial, 2026-12-06)."""
        latest = self._latest
        return None if latest is None else latest[1]

    @property
    def queued(self) -> int:
        """Messages waiting in the queue."""
        return len(self._buffer)

    def stats(self) -> SubscriberStats:
        """A snapshot of the counters."""
        latency = self.latency_stats
        count = latency.count
        return SubscriberStats(
            received=self.received,
            delivered=self.delivered,
            dropped=self.dropped,
            overflow=self.overflow,
            expired=self.expired,
            lost=self.lost,
            malformed=self.malformed,
            deadline_missed=self.deadline_missed,
            callback_errors=self.callback_errors,
            queued=len(self._buffer),
            latency_count=count,
            latency_last_ns=latency.last,
            latency_mean_ns=latency.sum / count if count else 0.0,
            latency_max_ns=latency.max,
        )

    def close(self) -> None:
        """Stop receiving; queued messages are discarded. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._buffer.clear()
        self._on_close(self)

    def __enter__(self) -> Subscriber[MsgT]:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _check_polling(self, what: str) -> None:
        if self._closed:
            raise BusClosedError(f"subscriber {self.label} on {self.topic!r} is closed")
        if self._callback is not None:
            raise BusError(
                f"{what}() is for polling subscribers; subscriber {self.label} on {self.topic!r} "
                "has a callback (create it with callback=None to poll)"
            )


__all__ = ["OfferFn", "Subscriber", "SubscriberStats"]
