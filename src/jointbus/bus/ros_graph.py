"""The ROS 2 graph on Zenoh: rmw_zenoh's liveliness tokens, QoS text and entity GIDs.

Where it sits: :mod:`jointbus.bus`, below discovery (:mod:`jointbus.bus.discovery` turns parsed
tokens into :class:`~jointbus.bus.discovery.EndpointInfo`) and the transport (which declares the
tokens). Plain functions and records: no session, no threads.

Every node and endpoint announces one Zenoh liveliness token, alive exactly as long as it is
(Zenoh withdraws it when the session ends, even on a crash). The key is rmw_zenoh's (Jazzy ≥ 0.2,
Kilted, Rolling; see ``docs/ROS2.md``), so ``ros2 node list`` / ``ros2 topic list -t`` /
``ros2 topic info -v`` on a ROS 2 machine show jointbus, and jointbus sees ROS 2 nodes::

    @ros2_lv/<domain>/<zid>/<node id>/<node id>/NN/<enclave>/<namespace>/<node>
    @ros2_lv/<domain>/<zid>/<node id>/<entity id>/<MP|MS|SS|SC>/<enclave>/<namespace>/<node>/
        <topic>/<DDS type>/<type hash>/<qos>                     (one key; wrapped here)

``zid`` is the Zenoh session id, node and entity ids are decimal counters of the session. Names are
*mangled*: every ``/`` becomes ``%`` (the root namespace ``/`` and the default enclave ``/`` are
``%``, topic ``/hb50/x`` is ``%hb50%x``; a node's namespace is fully qualified, as rcl hands it
to rmw_zenoh: ``/arm3`` is ``%arm3``, so ``arm3``'s ``array_node`` is ROS 2's
``/arm3/array_node``). The QoS text is rmw_zenoh's
``<rel>:<dur>:<hist>,<depth>:<deadline s>,<ns>:<lifespan s>,<ns>:<liveliness>,<s>,<ns>`` where an
empty field means rmw_zenoh's default (reliable, volatile, keep last, depth 42, infinite
durations, automatic liveliness). An entity's 16-byte GID is the XXH3-128 hash of its token key
(low 64 bits first, each little-endian), which rmw_zenoh also puts in every sample's attachment.

jointbus endpoints created without a node belong to the hidden node ``_jointbus`` (ROS 2 hides
names starting with ``_``). That is the only jointbus-specific bookkeeping: everything else a
jointbus endpoint needs (type, hash, QoS with deadline and lifespan) fits ROS 2's own fields.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

import xxhash

from jointbus.bus.errors import BusError, QosError
from jointbus.bus.names import dds_type_name, ros_namespace, ros_type_name, validate_topic_name
from jointbus.bus.qos import MAX_DEPTH, Durability, QosProfile, Reliability

#: Admin space of every graph token (a Zenoh verbatim chunk: ``**`` never matches it).
ADMIN_SPACE: Final = "@ros2_lv"
#: The hidden node that owns endpoints created without a node name.
ANONYMOUS_NODE: Final = "_jointbus"
#: rmw_zenoh's default history depth (an empty depth field means this).
DEFAULT_DEPTH: Final = 42

EntityKind = Literal["NN", "MP", "MS", "SS", "SC"]
_KINDS: Final = ("NN", "MP", "MS", "SS", "SC")
_NODE_PARTS: Final = 9
_ENDPOINT_PARTS: Final = 13
# Characters Zenoh gives a meaning in key expressions; never in a name we announce.
_KEY_SPECIAL = re.compile(r"[*$?#@/]")


def graph_selector(domain_id: int) -> str:
    """Selects every graph token of a domain (liveliness subscriber and get)."""
    return f"{ADMIN_SPACE}/{domain_id}/**"


def mangle(name: str) -> str:
    """``/`` → ``%`` (``""`` and ``"/"`` both become ``%``)."""
    return name.replace("/", "%") if name else "%"


def demangle(text: str) -> str:
    """``%`` → ``/``."""
    return text.replace("%", "/")


def node_name_of(node: str) -> str:
    """The ROS node name announced for a jointbus node name (``""`` → the hidden anonymous node);
    characters Zenoh reserves become ``_`` so the token is always a valid key."""
    return _KEY_SPECIAL.sub("_", node) if node else ANONYMOUS_NODE


def gid_of(token_key: str) -> bytes:
    """The 16-byte GID rmw_zenoh derives from an entity's token key."""
    digest = xxhash.xxh3_128_intdigest(token_key.encode("utf-8"))
    low, high = digest & (2**64 - 1), digest >> 64
    return low.to_bytes(8, "little") + high.to_bytes(8, "little")


# ---- QoS text ---------------------------------------------------------------------------------


def _duration_text(seconds: float | None) -> str:
    if seconds is None:
        return ","
    ns = max(1, round(seconds * 1e9))
    return f"{ns // 1_000_000_000},{ns % 1_000_000_000}"


def qos_to_text(qos: QosProfile) -> str:
    """rmw_zenoh's QoS field for a jointbus profile (keep-last history, automatic liveliness)."""
    reliability = "" if qos.reliable else "2"
    durability = "1" if qos.transient_local else ""
    depth = "" if qos.depth == DEFAULT_DEPTH else str(qos.depth)
    return (
        f"{reliability}:{durability}:,{depth}:{_duration_text(qos.deadline)}:"
        f"{_duration_text(qos.lifespan)}:,,"
    )


def _int_field(text: str, what: str, default: int) -> int:
    if text == "":
        return default
    if not text.isdigit():
        raise QosError(what, text, "a decimal integer or empty (rmw_zenoh's default)")
    return int(text)


def _duration_field(text: str, what: str) -> float | None:
    parts = text.split(",")
    if len(parts) != 2:
        raise QosError(what, text, "'<s>,<ns>' (either may be empty)")
    if parts == ["", ""]:
        return None
    seconds = _int_field(parts[0], what, 0)
    nanos = _int_field(parts[1], what, 0)
    # rmw's "infinite" is 9223372036 s + 854775807 ns (INT64_MAX ns); anything that long is none.
    if seconds >= 9_223_372_036 or (seconds == 0 and nanos == 0):
        return None
    return (seconds * 1_000_000_000 + nanos) / 1e9  # one rounding: s + ns/1e9 rounds twice


def qos_from_text(text: str) -> QosProfile:
    """A jointbus profile from rmw_zenoh's QoS field; raises QosError for malformed text.

    Keep-all history becomes the largest depth jointbus accepts; liveliness is not modelled."""
    parts = text.split(":")
    if len(parts) != 6:
        raise QosError("qos", text, "6 ':'-separated fields (rmw_zenoh QoS text)")
    rel, dur, hist, deadline, lifespan, liveliness = parts
    if rel not in ("", "0", "1", "2", "3"):
        raise QosError("reliability", rel, "empty, 1 (reliable) or 2 (best effort)")
    if dur not in ("", "0", "1", "2", "3"):
        raise QosError("durability", dur, "empty, 1 (transient local) or 2 (volatile)")
    history = hist.split(",")
    if len(history) != 2 or history[0] not in ("", "0", "1", "2", "3"):
        raise QosError("history", hist, "'<kind>,<depth>' with kind empty, 1 or 2")
    lease = liveliness.split(",")
    if len(lease) != 3 or lease[0] not in ("", "0", "1", "2", "3", "4"):
        raise QosError("liveliness", liveliness, "'<kind>,<s>,<ns>' with kind empty or 1..4")
    _duration_field(",".join(lease[1:]), "liveliness lease")  # checked, not modelled
    depth = _int_field(history[1], "depth", DEFAULT_DEPTH)
    if history[0] == "2":
        depth = MAX_DEPTH
    depth = min(max(depth, 1), MAX_DEPTH) if depth else DEFAULT_DEPTH
    return QosProfile(
        Reliability.BEST_EFFORT if rel == "2" else Reliability.RELIABLE,
        depth,
        Durability.TRANSIENT_LOCAL if dur == "1" else Durability.VOLATILE,
        _duration_field(deadline, "deadline"),
        _duration_field(lifespan, "lifespan"),
    )


# ---- tokens -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GraphEntity:
    """One parsed graph token. ``topic``, ``type_name``, ``type_hash`` and ``qos`` are empty /
    None for a node (``NN``). ``node`` is the ROS node name as announced (demangled).

    The DDS transport describes its discovered entities with the same record
    (:mod:`jointbus.bus.dds_transport`): ``key`` is then its own text, ``zid`` the participant's
    GUID in hex and ``guid`` the entity's 16-byte DDS GUID, which is its GID."""

    key: str
    domain_id: int
    zid: str
    node_id: int
    entity_id: int
    kind: EntityKind
    enclave: str
    namespace: str
    node: str
    topic: str = ""
    type_name: str = ""
    type_hash: str = ""
    qos: QosProfile | None = None
    guid: bytes = b""

    @property
    def gid(self) -> bytes:
        """The entity's 16-byte GID (rmw_zenoh's from its token key; on DDS its GUID)."""
        return self.guid or gid_of(self.key)


def node_token(domain_id: int, zid: str, node_id: int, node: str, namespace: str = "/") -> str:
    """The ``NN`` token key of a node (default enclave) in ``namespace`` (``"arm3"`` and
    ``"/arm3"`` both announce ``/arm3``, mangled ``%arm3``; ``""`` is the root, ``%``)."""
    return (
        f"{ADMIN_SPACE}/{domain_id}/{zid}/{node_id}/{node_id}/NN/%/"
        f"{mangle(ros_namespace(namespace))}/"
        f"{mangle(node_name_of(node))}"
    )


def endpoint_token(
    domain_id: int,
    zid: str,
    *,
    node_id: int,
    entity_id: int,
    kind: EntityKind,
    node: str,
    topic: str,
    type_name: str,
    type_hash: str,
    qos: QosProfile,
    namespace: str = "/",
) -> str:
    """The token key of a publisher (``MP``), subscriber (``MS``), service (``SS``) or client
    (``SC``) of a node in ``namespace`` (as :func:`node_token`)."""
    return (
        f"{ADMIN_SPACE}/{domain_id}/{zid}/{node_id}/{entity_id}/{kind}/%/"
        f"{mangle(ros_namespace(namespace))}/"
        f"{mangle(node_name_of(node))}/{mangle(validate_topic_name(topic))}/"
        f"{dds_type_name(type_name)}/{type_hash}/{qos_to_text(qos)}"
    )


def parse_token(key: str) -> GraphEntity:
    """Parse a graph token key (ours or any rmw_zenoh participant's); BusError when malformed."""
    parts = key.split("/")
    if len(parts) < _NODE_PARTS or parts[0] != ADMIN_SPACE:
        raise BusError(f"not a ROS 2 graph token: {key!r}")
    kind = parts[5]
    if kind not in _KINDS:
        raise BusError(f"graph token {key!r}: unknown entity kind {kind!r}")
    expected = _NODE_PARTS if kind == "NN" else _ENDPOINT_PARTS
    if len(parts) != expected or any(not p for p in parts):
        raise BusError(f"graph token {key!r}: expected {expected} non-empty chunks for {kind}")
    if not (parts[1].isdigit() and parts[3].isdigit() and parts[4].isdigit()):
        raise BusError(f"graph token {key!r}: domain, node id and entity id must be decimal")
    common = (
        key,
        int(parts[1]),
        parts[2],
        int(parts[3]),
        int(parts[4]),
        kind,
        demangle(parts[6]),
        demangle(parts[7]),
        demangle(parts[8]),
    )
    if kind == "NN":
        return GraphEntity(*common)  # type: ignore[arg-type]
    try:
        topic = demangle(parts[9])
        if kind in ("MP", "MS"):
            topic = validate_topic_name(topic)
        type_name = ros_type_name(parts[10])
        qos = qos_from_text(parts[12])
    except BusError as exc:
        raise BusError(f"graph token {key!r}: {exc}") from exc
    return GraphEntity(*common, topic, type_name, parts[11], qos)  # type: ignore[arg-type]


__all__ = [
    "ADMIN_SPACE",
    "ANONYMOUS_NODE",
    "DEFAULT_DEPTH",
    "EntityKind",
    "GraphEntity",
    "demangle",
    "endpoint_token",
    "gid_of",
    "graph_selector",
    "mangle",
    "node_name_of",
    "node_token",
    "parse_token",
    "qos_from_text",
    "qos_to_text",
]
