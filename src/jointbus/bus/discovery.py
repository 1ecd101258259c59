"""Discovery records: which topics exist, their types, publishers and subscribers.

Where it sits: :mod:`jointbus.bus`, filled from the local topic table and, with Zenoh attached,
from the ROS 2 graph tokens every participant announces (:mod:`jointbus.bus.ros_graph`): other
jointbus processes and ROS 2 nodes on rmw_zenoh alike, so ``jointbus topic list`` in another
process sees the demo's topics and a ROS 2 laptop's. This module holds the plain records; the
transport does the network part.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from jointbus.bus.endpoint import endpoint_label
from jointbus.bus.errors import BusError
from jointbus.bus.events import EndpointKind
from jointbus.bus.qos import QosProfile
from jointbus.bus.ros_graph import ANONYMOUS_NODE, GraphEntity, parse_token

_KINDS: Final[dict[str, EndpointKind]] = {"MP": "publisher", "MS": "subscriber"}


@dataclass(frozen=True, slots=True)
class EndpointInfo:
    """One publisher or subscriber: where (``zid`` = Zenoh session id, ``""`` for this bus before
    Zenoh is attached), who (``node``, ``gid``), what (``type_name``, ``type_hash``) and how
    (``qos``). ``gid`` is the local endpoint's id, or a remote entity's 128-bit GID (the int of
    the GID bytes its samples carry). ``node`` is ``""`` for endpoints created without a node."""

    kind: EndpointKind
    topic: str
    type_name: str
    node: str
    gid: int
    qos: QosProfile
    zid: str
    local: bool
    type_hash: str = ""
    namespace: str = "/"

    @property
    def label(self) -> str:
        """``node#gid`` as events name endpoints."""
        return endpoint_label(self.node, self.gid)

    @classmethod
    def from_entity(cls, entity: GraphEntity, *, local: bool = False) -> EndpointInfo:
        """The record of a parsed publisher or subscriber token; BusError for other entities."""
        kind = _KINDS.get(entity.kind)
        if kind is None or entity.qos is None:
            raise BusError(f"graph token {entity.key!r} is not a publisher or subscriber")
        node = "" if entity.node == ANONYMOUS_NODE else entity.node
        return cls(
            kind,
            entity.topic,
            entity.type_name,
            node,
            int.from_bytes(entity.gid, "little"),
            entity.qos,
            entity.zid,
            local,
            entity.type_hash,
            entity.namespace,
        )

    @classmethod
    def from_token_key(cls, key: str, *, local: bool = False) -> EndpointInfo:
        """Parse a publisher or subscriber graph token key; raises BusError otherwise."""
        return cls.from_entity(parse_token(key), local=local)


@dataclass(frozen=True, slots=True)
class TopicInfo:
    """A topic as seen by discovery. ``type_names`` has more than one entry only when endpoints
    disagree about the type (a misconfiguration worth showing)."""

    name: str
    type_names: tuple[str, ...]
    publishers: tuple[EndpointInfo, ...]
    subscribers: tuple[EndpointInfo, ...]

    @property
    def type_name(self) -> str:
        """The topic's type (the first one if endpoints disagree)."""
        return self.type_names[0] if self.type_names else ""


def group_topics(endpoints: list[EndpointInfo]) -> list[TopicInfo]:
    """Group endpoint records into topics (deduplicated by gid), sorted by name."""
    by_topic: dict[str, dict[int, EndpointInfo]] = {}
    for info in endpoints:
        existing = by_topic.setdefault(info.topic, {}).get(info.gid)
        if existing is None or (info.local and not existing.local):
            by_topic[info.topic][info.gid] = info
    topics: list[TopicInfo] = []
    for name in sorted(by_topic):
        infos = sorted(by_topic[name].values(), key=lambda e: (e.kind, e.node, e.gid))
        types = tuple(dict.fromkeys(e.type_name for e in infos))
        topics.append(
            TopicInfo(
                name,
                types,
                tuple(e for e in infos if e.kind == "publisher"),
                tuple(e for e in infos if e.kind == "subscriber"),
            )
        )
    return topics


__all__ = ["EndpointInfo", "TopicInfo", "group_topics"]
