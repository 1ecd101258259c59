"""The in-process topic table entry: one name, one message type, its publishers and subscribers.

Where it sits: :mod:`jointbus.bus`, owned by :class:`jointbus.bus.Bus` (which serialises changes
with its lock). Endpoint lists are tuples that are *replaced* on every change, so publishers and the
Zenoh receive path read them without a lock. :meth:`Topic.rewire` recomputes each publisher's
delivery tuple: the ``offer`` methods of the subscribers whose QoS it is compatible with, realtime
subscribers first (a control loop should not wait behind a queue append).
"""

from __future__ import annotations

from typing import Any

from jointbus.bus.errors import TopicTypeError
from jointbus.bus.publisher import Publisher
from jointbus.bus.qos import incompatibilities
from jointbus.bus.subscriber import Subscriber
from jointbus.messages.base import Message


def type_label(msg_type: type[Message]) -> str:
    """``TYPE_NAME (module.Class)`` for error messages."""
    return f"{msg_type.TYPE_NAME} ({msg_type.__module__}.{msg_type.__qualname__})"


class Topic:
    """One topic of a bus. The type is fixed by the first endpoint and kept while any remain."""

    __slots__ = ("msg_type", "name", "publishers", "subscribers")

    def __init__(self, name: str, msg_type: type[Message]) -> None:
        self.name = name
        self.msg_type = msg_type
        self.publishers: tuple[Publisher[Any], ...] = ()
        self.subscribers: tuple[Subscriber[Any], ...] = ()

    def check_type(self, msg_type: type[Message], context: str) -> None:
        """Raise TopicTypeError unless ``msg_type`` is exactly this topic's class."""
        if msg_type is not self.msg_type:
            raise TopicTypeError(
                self.name, type_label(self.msg_type), type_label(msg_type), context
            )

    @property
    def empty(self) -> bool:
        """No endpoint left."""
        return not self.publishers and not self.subscribers

    def rewire(self) -> None:
        """Recompute every publisher's tuple of compatible subscriber ``offer`` methods."""
        ordered = sorted(self.subscribers, key=lambda s: not s.realtime)
        for pub in self.publishers:
            pub._targets = tuple(
                sub.offer
                for sub in ordered
                if not sub.closed and not incompatibilities(pub.qos, sub.qos)
            )


__all__ = ["Topic", "type_label"]
