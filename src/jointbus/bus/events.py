"""QoS and transport events: what a subscriber, a publisher and the status topic are told.

Where it sits: :mod:`jointbus.bus`, produced by the topic table, the deadline timer, subscribers and
the Zenoh transport; consumed by ``on_event`` callbacks of endpoints and by hooks registered with
:meth:`jointbus.bus.Bus.on_qos_event` (the runtime layer turns them into ``Status`` messages).

Events are frozen data so a hook may keep or forward them. They are delivered on the thread that
detected them (the deadline timer, a dispatcher, a Zenoh thread, or the caller of ``subscribe``), so
hooks must be quick and thread-safe; an exception in a hook is logged and swallowed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

EndpointKind = Literal["publisher", "subscriber"]


@dataclass(frozen=True, slots=True)
class QosEvent:
    """Base of every bus event: ``topic`` is the topic name, ``endpoint`` the side told."""

    topic: str
    endpoint: str

    def describe(self) -> str:
        """One line for logs and the status topic."""
        return f"{type(self).__name__} on {self.topic} ({self.endpoint})"


@dataclass(frozen=True, slots=True)
class DeadlineMissedEvent(QosEvent):
    """No message arrived (subscriber) or was published (publisher) within the QoS deadline.

    ``total_count`` is the number of missed periods so far, ``total_count_change`` how many this
    event adds (several when a long silence spans several periods), as ROS 2 reports them.
    """

    kind: EndpointKind
    deadline: float
    total_count: int
    total_count_change: int

    def describe(self) -> str:
        return (
            f"deadline of {self.deadline:g} s missed on {self.topic} by {self.kind} {self.endpoint}"
            f" ({self.total_count_change} new, {self.total_count} total)"
        )


@dataclass(frozen=True, slots=True)
class QosIncompatibleEvent(QosEvent):
    """A publisher and a subscriber with incompatible QoS met; no messages flow between them."""

    kind: EndpointKind
    publisher: str
    subscriber: str
    reasons: tuple[str, ...]
    remote: bool

    def describe(self) -> str:
        where = "remote " if self.remote else ""
        return (
            f"incompatible QoS on {self.topic} between {where}publisher {self.publisher} and "
            f"subscriber {self.subscriber}: {'; '.join(self.reasons)}"
        )


@dataclass(frozen=True, slots=True)
class MessagesLostEvent(QosEvent):
    """Messages a subscriber will never see.

    ``reason`` is ``"overflow"`` (a *reliable* subscriber's queue was full and its oldest messages
    were overwritten) or ``"gap"`` (sequence numbers from a remote publisher skipped). Best-effort
    queue drops are expected behaviour and only counted, not reported.
    """

    reason: Literal["overflow", "gap"]
    count: int
    total_count: int
    publisher: str

    def describe(self) -> str:
        return (
            f"{self.count} message(s) lost on {self.topic} by {self.endpoint} ({self.reason}, "
            f"from {self.publisher}; {self.total_count} total)"
        )


@dataclass(frozen=True, slots=True)
class MalformedPayloadEvent(QosEvent):
    """A payload from the wire could not be decoded as the topic's type; it was discarded.

    ``payload`` holds the bytes as received and ``cause`` the decoder's exception, so the
    subscribing node can say more than the decoder did (the bridge reads a refused command's
    source node and values from the bytes; the array node names the joint of a value the message
    class refused by index, from the :class:`~jointbus.messages.errors.ValidationError` that is
    the cause's ``__cause__``).
    """

    publisher: str
    size: int
    error: str
    total_count: int
    payload: bytes = field(default=b"", repr=False)
    cause: Exception | None = field(default=None, repr=False, compare=False)

    def describe(self) -> str:
        return (
            f"malformed payload on {self.topic} ({self.size} bytes from {self.publisher}): "
            f"{self.error} ({self.total_count} total)"
        )


@dataclass(frozen=True, slots=True)
class AttachmentEvent(QosEvent):
    """Samples arrived without rmw_zenoh's 33-byte attachment (a plain Zenoh ``put``, or an old
    rmw_zenoh build): they are delivered, but not counted for gaps or latency. Reported once per
    kind of defect and topic; ``total_count`` counts such samples so far."""

    reason: str
    total_count: int

    def describe(self) -> str:
        return (
            f"samples on {self.topic} carry {self.reason}: delivered without gap counting or "
            f"latency ({self.total_count} so far)"
        )


@dataclass(frozen=True, slots=True)
class TypeMismatchEvent(QosEvent):
    """A remote endpoint uses the topic with another message type or type hash (the types are
    written ``pkg/msg/Name (RIHS01_…)``); its messages are never decoded."""

    local_type: str
    remote_type: str
    remote: str

    def describe(self) -> str:
        return (
            f"type mismatch on {self.topic}: local {self.local_type}, remote {self.remote} uses "
            f"{self.remote_type}"
        )


@dataclass(frozen=True, slots=True)
class PublicationDeniedEvent(QosEvent):
    """The publishing side of a denial: ``subscriber`` (a remote endpoint's label) announces a
    subscription of ``topic`` with this publisher's type, but Zenoh has routed nothing to it from
    this session for ``waited_s`` (s). A TLS-only robot's access rules tell a role only about the
    subscribers it may publish to (``docs/SECURITY.md``), so what this publisher sends never
    leaves this host for it. ``holder`` is the certificate common name of that session's link
    (``None``: not a TLS link, or not a direct one). Reported once per publisher and subscriber.
    """

    subscriber: str
    holder: str | None
    waited_s: float

    def describe(self) -> str:
        held = f", whose session holds certificate {self.holder!r}" if self.holder else ""
        return (
            f"publication denied: {self.topic}: its subscriber {self.subscriber} is announced"
            f"{held}, but "
            f"nothing published here was routed to it in {round(self.waited_s, 1):g} s — its "
            "access rules "
            "do not let this host's certificate publish it (or it is not reachable from here); "
            "what this publisher sends does not arrive there"
        )


__all__ = [
    "AccessDeniedEvent",
    "AttachmentEvent",
    "DeadlineMissedEvent",
    "EndpointKind",
    "MalformedPayloadEvent",
    "MessagesLostEvent",
    "PublicationDeniedEvent",
    "QosEvent",
    "QosIncompatibleEvent",
    "TypeMismatchEvent",
]


@dataclass(frozen=True, slots=True)
class AccessDeniedEvent(QosEvent):
    """A peer announced a publisher of ``topic`` (``action`` ``publishes``) or a client of
    service ``topic`` (``calls``) that this process's Zenoh access rules deny it: Zenoh drops
    what it sends. ``peer`` is its certificate common name (``None``: no certificate, e.g. a
    plain ``tcp/`` link), ``zid`` its session, ``roles`` the rules' subjects it matched (none: it
    names no role). Reported once per peer session, action and name
    (:mod:`jointbus.bus.access_watch`).
    """

    peer: str | None
    zid: str
    action: Literal["publishes", "calls"]
    roles: tuple[str, ...]

    def describe(self) -> str:
        who = f"certificate {self.peer!r}" if self.peer else "a peer without a certificate"
        role = f"role {', '.join(self.roles)}" if self.roles else "no role"
        return (
            f"access denied: {who} (zid {self.zid}, {role}) {self.action} {self.topic}: "
            "the access rules drop it"
        )
