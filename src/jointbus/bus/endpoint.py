"""What publishers and subscribers share: identity, QoS, events, and the deadline check.

Where it sits: :mod:`jointbus.bus`, the base of :mod:`jointbus.bus.publisher` and
:mod:`jointbus.bus.subscriber`. An endpoint has a random 64-bit ``gid`` (its identity inside the
process, in events and ``jointbus topic info``) and the name of the node that owns it, so events can
say *who*. On Zenoh it also gets rmw_zenoh's 16-byte GID, derived from its graph token
(:mod:`jointbus.bus.ros_graph`); that one travels in every sample's attachment.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from typing import Generic, TypeVar

from jointbus.bus.clock import Clock
from jointbus.bus.events import DeadlineMissedEvent, EndpointKind, QosEvent
from jointbus.bus.names import ros_namespace
from jointbus.bus.qos import QosProfile
from jointbus.messages.base import Message

_LOG = logging.getLogger("jointbus.bus")

MsgT = TypeVar("MsgT", bound=Message)

#: Callback that receives QoS events of one endpoint.
EventCallback = Callable[[QosEvent], object]
#: How an endpoint reports an event to its bus (which also calls the endpoint's own callback).
EmitFn = Callable[[QosEvent, "EventCallback | None"], None]


def endpoint_label(node: str, gid: int) -> str:
    """Text naming an endpoint in events and logs: ``node#gid`` (gid in hex)."""
    return f"{node or 'anonymous'}#{gid:016x}"


class Endpoint(Generic[MsgT]):
    """Base of Publisher and Subscriber (not created directly)."""

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
        namespace: str = "/",
    ) -> None:
        self.topic = topic
        #: What QoS time (deadlines, lifespans, birth times) is measured on.
        self._clock = clock
        self.msg_type = msg_type
        self.qos = qos
        self.node = node
        #: The ROS 2 namespace of ``node`` (``/arm3``; ``/`` for the root), as its tokens carry it.
        self.namespace = ros_namespace(namespace)
        self.gid = secrets.randbits(64)
        self.label = endpoint_label(node, self.gid)
        self.on_event = on_event
        self._emit_fn = emit
        self._closed = False
        self.deadline_missed = 0
        self._deadline_ns = qos.deadline_ns
        now = clock.monotonic_ns()
        # The last message (published or received) and the end of the last counted missed period.
        self._last_activity_ns = now
        self._deadline_anchor_ns = now

    @property
    def type_name(self) -> str:
        """ROS 2 type name of the topic's messages, e.g. ``hb50_commons/msg/Status``."""
        return self.msg_type.TYPE_NAME

    @property
    def closed(self) -> bool:
        """True once closed."""
        return self._closed

    def _emit(self, event: QosEvent) -> None:
        self._emit_fn(event, self.on_event)

    def _check_deadline(self, now_ns: int) -> int:
        """Count and report missed deadline periods; return the next due time (monotonic ns)."""
        deadline = self._deadline_ns
        last = max(self._last_activity_ns, self._deadline_anchor_ns)
        if now_ns - last < deadline or self._closed:
            return last + deadline
        missed = (now_ns - last) // deadline
        self._deadline_anchor_ns = last + missed * deadline
        self.deadline_missed += missed
        self._emit(
            DeadlineMissedEvent(
                self.topic,
                self.label,
                self.KIND,
                deadline / 1e9,
                self.deadline_missed,
                missed,
            )
        )
        return self._deadline_anchor_ns + deadline

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.topic!r}, {self.type_name}, {self.qos.describe()}, "
            f"{self.label})"
        )


__all__ = ["EmitFn", "Endpoint", "EventCallback", "MsgT", "endpoint_label"]
