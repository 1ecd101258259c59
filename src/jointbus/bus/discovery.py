"""Discovery records: which topics exist, their types, publishers and subscribers.

Where it sits: :mod:`jointbus.bus`, filled from the local topic table and, with Zenoh attached,
from liveliness tokens announced by every bus (so ``jointbus topic list`` in another process sees
the demo's topics). This module holds the plain records and the token encoding; the transport does
the network part.

Each endpoint announces one Zenoh liveliness token, alive exactly as long as the endpoint (Zenoh
withdraws it when the session ends, even on a crash)::

    @jointbus/ep/<pub|sub>/<zenoh id>/<gid hex>/<node>/<type>/<qos>/<topic tokens...>
    e.g. @jointbus/ep/pub/4b27…/00a1…f3/bridge/hb50_commons%2Fmsg%2FBridgeData/B1V_0_0/
         hb50/bridge_data  (one key; wrapped here)

``node`` and ``type`` are percent-encoded (type names contain ``/``), ``-`` stands for "no node";
``qos`` is :meth:`jointbus.bus.qos.QosProfile.to_token`; the topic comes last because it has a
variable number of tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final
from urllib.parse import quote, unquote

from jointbus.bus.endpoint import endpoint_label
from jointbus.bus.errors import BusError
from jointbus.bus.events import EndpointKind
from jointbus.bus.names import META_PREFIX, validate_topic_name
from jointbus.bus.qos import QosProfile

#: Key expression under which endpoint tokens live, and its wildcard form.
ENDPOINT_PREFIX: Final = f"{META_PREFIX}/ep"
ENDPOINT_WILDCARD: Final = f"{ENDPOINT_PREFIX}/**"

_KINDS: Final[dict[str, EndpointKind]] = {"pub": "publisher", "sub": "subscriber"}


@dataclass(frozen=True, slots=True)
class EndpointInfo:
    """One publisher or subscriber: where (``zid`` = Zenoh session id, ``""`` for this bus before
    Zenoh is attached), who (``node``, ``gid``), what (``type_name``) and how (``qos``)."""

    kind: EndpointKind
    topic: str
    type_name: str
    node: str
    gid: int
    qos: QosProfile
    zid: str
    local: bool

    @property
    def label(self) -> str:
        """``node#gid`` as events name endpoints."""
        return endpoint_label(self.node, self.gid)

    def to_token_key(self) -> str:
        """The liveliness token key announcing this endpoint."""
        kind = "pub" if self.kind == "publisher" else "sub"
        node = quote(self.node, safe="") if self.node else "-"
        return (
            f"{ENDPOINT_PREFIX}/{kind}/{self.zid}/{self.gid:016x}/{node}/"
            f"{quote(self.type_name, safe='')}/{self.qos.to_token()}{self.topic}"
        )

    @classmethod
    def from_token_key(cls, key: str, *, local: bool = False) -> EndpointInfo:
        """Parse a token key written by :meth:`to_token_key`; raises BusError otherwise."""
        parts = key.split("/")
        prefix = ENDPOINT_PREFIX.split("/")
        if len(parts) < 9 or parts[:2] != prefix or parts[2] not in _KINDS:
            raise BusError(f"not a jointbus endpoint token: {key!r}")
        try:
            gid = int(parts[4], 16)
            qos = QosProfile.from_token(parts[7])
            topic = validate_topic_name("/" + "/".join(parts[8:]))
        except (ValueError, BusError) as exc:
            raise BusError(f"malformed jointbus endpoint token {key!r}: {exc}") from exc
        node = "" if parts[5] == "-" else unquote(parts[5])
        return cls(_KINDS[parts[2]], topic, unquote(parts[6]), node, gid, qos, parts[3], local)


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


__all__ = ["ENDPOINT_PREFIX", "ENDPOINT_WILDCARD", "EndpointInfo", "TopicInfo", "group_topics"]
