"""Publishers: type-checked publish to local subscribers (as objects) and, when observed, to Zenoh.

Where it sits: :mod:`jointbus.bus`, created by :meth:`jointbus.bus.Bus.publisher`. The topic table
(:mod:`jointbus.bus.topic`) keeps, per publisher, a tuple of the ``offer`` methods of the local
subscribers whose QoS is compatible; ``publish`` walks that tuple without taking a lock, so a
publish costs a type check, a clock read and one call per subscriber. The tuple is replaced (never
mutated) when subscribers come and go.

Remote delivery is attached by the Zenoh transport as a :class:`RemoteLink`; ``publish`` encodes to
CDR and sends only while the link reports a matching remote subscriber, so an unobserved robot pays
one attribute read per publish for having Zenoh enabled.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol

from jointbus.bus.clock import Clock
from jointbus.bus.endpoint import EmitFn, Endpoint, EventCallback, MsgT
from jointbus.bus.errors import BusClosedError, TopicTypeError
from jointbus.bus.events import EndpointKind
from jointbus.bus.qos import QosProfile
from jointbus.bus.subscriber import OfferFn
from jointbus.messages.base import Message


class RemoteLink(Protocol):
    """The Zenoh side of one publisher (see :mod:`jointbus.bus.zenoh_transport`).

    ``matched``: a remote subscriber matches; ``send_always``: send even when none does (a
    transient-local publisher feeds the cache late joiners query)."""

    matched: bool
    send_always: bool

    def send(self, msg: Message, seq: int, mono_ns: int) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class PublisherStats:
    """Counters of one publisher: messages published, sent over Zenoh, deadlines missed."""

    published: int
    remote_sent: int
    remote_matched: bool
    local_subscribers: int
    deadline_missed: int


class Publisher(Endpoint[MsgT], Generic[MsgT]):
    """Publishes messages of one type on one topic; create with :meth:`Bus.publisher`."""

    KIND: EndpointKind = "publisher"

    def __init__(
        self,
        topic: str,
        msg_type: type[MsgT],
        qos: QosProfile,
        *,
        node: str,
        on_event: EventCallback | None,
        emit: EmitFn,
        clock: Clock,
        on_close: Callable[[Publisher[MsgT]], None],
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
        self._on_close = on_close
        self._targets: tuple[OfferFn[MsgT], ...] = ()
        #: (message, publish time ns, sequence number) kept for transient-local late joiners.
        self._history: deque[tuple[MsgT, int, int]] | None = (
            deque(maxlen=qos.depth) if qos.transient_local else None
        )
        self._remote: RemoteLink | None = None
        self.seq = 0
        self.remote_sent = 0

    def publish(self, msg: MsgT) -> None:
        """Deliver ``msg`` to every compatible subscriber; raises TopicTypeError for another type.

        Ordinary subscribers get it queued (their dispatcher runs the callback later), realtime
        subscribers are called right here. Never blocks on a subscriber.
        """
        if type(msg) is not self.msg_type:
            raise TopicTypeError(
                self.topic,
                self.msg_type.TYPE_NAME,
                f"{type(msg).__module__}.{type(msg).__qualname__}"
                + (f" ({getattr(msg, 'TYPE_NAME', '?')})" if isinstance(msg, Message) else ""),
                "publish",
            )
        if self._closed:
            raise BusClosedError(f"publisher {self.label} on {self.topic!r} is closed")
        now = self._clock.monotonic_ns()
        self.seq = seq = self.seq + 1
        self._last_activity_ns = now
        for offer in self._targets:
            offer(msg, now, now)
        if self._history is not None:
            self._history.append((msg, now, seq))
        remote = self._remote
        if remote is not None and (remote.matched or remote.send_always):
            remote.send(msg, seq, now)
            self.remote_sent += 1

    @property
    def history(self) -> tuple[tuple[MsgT, int, int], ...]:
        """Transient-local history: (message, publish monotonic ns, seq), oldest first."""
        return tuple(self._history) if self._history is not None else ()

    @property
    def remote_matched(self) -> bool:
        """True while a remote (Zenoh) subscriber matches this topic."""
        return self._remote is not None and self._remote.matched

    @property
    def observed(self) -> bool:
        """True while someone listens: a local subscriber or a matching remote one. A publisher
        whose message costs time to build asks this first, so an unobserved topic costs nothing."""
        return bool(self._targets) or (self._remote is not None and self._remote.matched)

    @property
    def subscriber_count(self) -> int:
        """Local compatible subscribers currently served."""
        return len(self._targets)

    def stats(self) -> PublisherStats:
        """A snapshot of the counters."""
        return PublisherStats(
            self.seq,
            self.remote_sent,
            self.remote_matched,
            len(self._targets),
            self.deadline_missed,
        )

    def close(self) -> None:
        """Stop publishing (undeclares the Zenoh side too). Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._targets = ()
        self._on_close(self)

    def __enter__(self) -> Publisher[MsgT]:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


__all__ = ["Publisher", "PublisherStats", "RemoteLink"]
