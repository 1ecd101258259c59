"""Typed errors of the bus layer.

Where it sits: :mod:`jointbus.bus`, raised by topic-name validation, QoS construction, publishers,
subscribers and the Zenoh transport. Every error is raised *before* anything changes (no endpoint is
half-created, no message half-delivered) and says what was given and what was expected.
"""

from __future__ import annotations


class BusError(Exception):
    """Base class of every bus-layer error."""


class TopicNameError(BusError, ValueError):
    """A topic name that is not a fully qualified ROS 2 name (e.g. ``/hb50/bridge_data``)."""

    def __init__(self, name: object, reason: str) -> None:
        self.name = name
        self.reason = reason
        super().__init__(
            f"invalid topic name {name!r}: {reason}; expected a fully qualified ROS 2 name such as "
            "'/hb50/bridge_data' (tokens of letters, digits and '_', not starting with a digit, "
            "separated by single '/')"
        )


class TopicTypeError(BusError, TypeError):
    """A message type that is not the topic's one type (publish, subscribe, publisher creation).

    Attributes: ``topic``, ``expected`` (type name of the topic) and ``got`` (what was given).
    """

    def __init__(self, topic: str, expected: str, got: str, context: str) -> None:
        self.topic = topic
        self.expected = expected
        self.got = got
        super().__init__(f"{context} on topic {topic!r}: got {got}, expected {expected}")


class QosError(BusError, ValueError):
    """An invalid QoS profile: ``policy`` names the field, ``value`` what was given."""

    def __init__(self, policy: str, value: object, expected: str) -> None:
        self.policy = policy
        self.value = value
        self.expected = expected
        super().__init__(f"invalid QoS {policy} = {value!r}; expected {expected}")


class BusClosedError(BusError, RuntimeError):
    """Use of a publisher, subscriber or bus after ``close()``."""


class ZenohConfigError(BusError, ValueError):
    """An invalid Zenoh transport configuration, or a session that could not be opened with it."""


class DdsConfigError(BusError, ValueError):
    """An invalid DDS transport configuration (middleware name, discovery range, peers), or a
    DDS domain that could not be joined with it."""


__all__ = [
    "BusClosedError",
    "BusError",
    "DdsConfigError",
    "QosError",
    "TopicNameError",
    "TopicTypeError",
    "ZenohConfigError",
]
