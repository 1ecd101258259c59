"""The ROS 2 graph on DDS: ``ros_discovery_info`` records and the names of ROS 2's DDS topics.

Where it sits: :mod:`jointbus.bus`, below :mod:`jointbus.bus.dds_transport` (which publishes and
reads the records and turns DDS discovery into :class:`~jointbus.bus.ros_graph.GraphEntity`
records). Plain messages and functions: no DDS is loaded here.

DDS itself knows participants, writers and readers, not ROS nodes. The ROS 2 rmws on DDS
(rmw_cyclonedds, rmw_fastrtps; package ``rmw_dds_common``) tell each other which node owns which
endpoint on the topic ``ros_discovery_info`` (no ``rt/`` prefix; reliable, transient-local, keep
last 1): each participant publishes one :class:`ParticipantEntitiesInfo` — its GUID, and per node
its namespace, name and the GUIDs of its readers and writers — again whenever that changes.
``ros2 node list`` on a ROS 2 machine lists what these records name, so jointbus publishes its
nodes the same way, and reads everyone's to name the owners of the endpoints it discovers.

The records are Jazzy's layout (``rmw_dds_common`` 2.x and later: ``Gid`` is ``char[16]``, a DDS
GUID). Humble's ``rmw_dds_common`` 1.x has a 24-byte ``Gid`` whose records do not decode here, nor
ours there: on Humble, topics and services interoperate but ``ros2 node list`` does not show
jointbus's nodes (docs/ROS2.md).

Topic names (rmw_cyclonedds's ``make_fqtopic``): topic ``/a/b`` is the DDS topic ``rt/a/b``; service
``/s`` is ``rq/sRequest`` (requests) and ``rr/sReply`` (replies).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, ClassVar, Final, Literal

from jointbus.bus.errors import BusError
from jointbus.bus.names import validate_topic_name
from jointbus.codec.wire import Primitive, Seq
from jointbus.codec.wire import String as StringField
from jointbus.messages.base import Message
from jointbus.messages.errors import ValidationError

#: The graph topic's DDS name (ROS 2 gives it no ``rt/`` prefix).
DISCOVERY_TOPIC: Final = "ros_discovery_info"
#: The DDS type name of its records.
DISCOVERY_TYPE: Final = "rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_"
#: RIHS01 of ``rmw_dds_common/msg/ParticipantEntitiesInfo`` (Jazzy; its ``string<=256`` bounds are
#: part of the hash, which the codec's unbounded strings are not: checked against rosbags in
#: ``tests/bus/test_dds_graph.py``).
DISCOVERY_TYPE_HASH: Final = (
    "RIHS01_e725f4a506958c79f95dd693b965722c57b19cd18e7eff984f49561b93dc985d"
)
#: DDS topic prefixes of ROS 2 topics, service requests and service replies.
TOPIC_PREFIX: Final = "rt"
REQUEST_PREFIX: Final = "rq"
REPLY_PREFIX: Final = "rr"
GID_SIZE: Final = 16

GidData = Annotated[tuple[int, ...], Seq(Primitive.CHAR, GID_SIZE)]


@dataclass(frozen=True, slots=True)
class Gid(Message):
    """An entity's global id: on DDS its 16-byte GUID (participant prefix + entity id)."""

    TYPE_NAME: ClassVar[str] = "rmw_dds_common/msg/Gid"
    data: GidData = (0,) * GID_SIZE

    def __post_init__(self) -> None:
        if type(self.data) is not tuple or len(self.data) != GID_SIZE:
            raise ValidationError(self.TYPE_NAME, "data", self.data, f"{GID_SIZE} octets")

    @classmethod
    def of(cls, guid: bytes) -> Gid:
        """The Gid of a 16-byte GUID."""
        return cls(tuple(guid))

    @property
    def guid(self) -> bytes:
        """The 16 bytes."""
        return bytes(self.data)


@dataclass(frozen=True, slots=True)
class NodeEntitiesInfo(Message):
    """One node of a participant: namespace, name, and its readers' and writers' GIDs."""

    TYPE_NAME: ClassVar[str] = "rmw_dds_common/msg/NodeEntitiesInfo"
    #: ``string<=256`` in the ``.msg``: the bounds are part of the DDS type (its XTypes
    #: information), not of the bytes, which the codec's strings write the same.
    DDS_STRING_BOUNDS: ClassVar[dict[str, int]] = {"node_namespace": 256, "node_name": 256}
    node_namespace: StringField = "/"
    node_name: StringField = ""
    reader_gid_seq: tuple[Gid, ...] = ()
    writer_gid_seq: tuple[Gid, ...] = ()


@dataclass(frozen=True, slots=True)
class ParticipantEntitiesInfo(Message):
    """What a participant publishes on ``ros_discovery_info``: its GID and its nodes."""

    TYPE_NAME: ClassVar[str] = "rmw_dds_common/msg/ParticipantEntitiesInfo"
    gid: Gid = field(default_factory=Gid)
    node_entities_info_seq: tuple[NodeEntitiesInfo, ...] = ()


TopicRole = Literal["topic", "request", "reply"]


def topic_dds_name(topic: str) -> str:
    """``/a/b`` → ``rt/a/b``."""
    return f"{TOPIC_PREFIX}{validate_topic_name(topic)}"


def request_dds_name(service: str) -> str:
    """``/s`` → ``rq/sRequest``."""
    return f"{REQUEST_PREFIX}{validate_topic_name(service)}Request"


def reply_dds_name(service: str) -> str:
    """``/s`` → ``rr/sReply``."""
    return f"{REPLY_PREFIX}{validate_topic_name(service)}Reply"


def parse_dds_name(dds_name: str) -> tuple[TopicRole, str]:
    """The role and ROS name of a DDS topic name; BusError for a topic that is none of ROS 2's
    (``ros_discovery_info``, another program's own topics)."""
    prefix, _, rest = dds_name.partition("/")
    role: TopicRole
    if prefix == TOPIC_PREFIX:
        role, name = "topic", "/" + rest
    elif prefix == REQUEST_PREFIX and rest.endswith("Request"):
        role, name = "request", "/" + rest[: -len("Request")]
    elif prefix == REPLY_PREFIX and rest.endswith("Reply"):
        role, name = "reply", "/" + rest[: -len("Reply")]
    else:
        raise BusError(f"DDS topic {dds_name!r} is not a ROS 2 topic or service")
    return role, validate_topic_name(name)


def service_dds_types(service_type: str) -> tuple[str, str]:
    """The DDS type names of a service's requests and replies: ``pkg/srv/Name`` →
    ``pkg::srv::dds_::Name_Request_``, ``pkg::srv::dds_::Name_Response_``."""
    package, kind, name = service_type.split("/")
    if kind != "srv":
        raise BusError(f"{service_type!r} is not a service type 'pkg/srv/Name'")
    base = f"{package}::srv::dds_::{name}"
    return f"{base}_Request_", f"{base}_Response_"


def service_type_of(dds_type: str) -> str:
    """Inverse of :func:`service_dds_types` for either name; BusError for other text."""
    for suffix in ("_Request_", "_Response_"):
        if dds_type.endswith(suffix) and "::srv::dds_::" in dds_type:
            package, _, name = dds_type[: -len(suffix)].partition("::srv::dds_::")
            return f"{package}/srv/{name}"
    raise BusError(f"{dds_type!r} is not a ROS 2 service request or response type")


def typehash_user_data(type_hash: str, extra: str = "") -> bytes:
    """The USER_DATA of an endpoint as Jazzy's rmws write it: ``typehash=RIHS01_…;`` (after
    ``extra``, e.g. rmw_cyclonedds's ``clientid=…;``)."""
    return f"{extra}typehash={type_hash};".encode("ascii") if type_hash else extra.encode()


def parse_user_data(data: bytes) -> dict[str, str]:
    """``key=value;`` pairs of a USER_DATA (rmw's format); malformed parts are skipped."""
    pairs: dict[str, str] = {}
    for part in data.decode("utf-8", "replace").split(";"):
        key, sep, value = part.partition("=")
        if sep and key:
            pairs[key.strip()] = value.strip()
    return pairs


__all__ = [
    "DISCOVERY_TOPIC",
    "DISCOVERY_TYPE",
    "DISCOVERY_TYPE_HASH",
    "GID_SIZE",
    "REPLY_PREFIX",
    "REQUEST_PREFIX",
    "TOPIC_PREFIX",
    "Gid",
    "NodeEntitiesInfo",
    "ParticipantEntitiesInfo",
    "TopicRole",
    "parse_dds_name",
    "parse_user_data",
    "reply_dds_name",
    "request_dds_name",
    "service_dds_types",
    "service_type_of",
    "topic_dds_name",
    "typehash_user_data",
]
