"""An independent DDS peer for the tests: Cyclone DDS's Python binding with ROS 2's types written
out by hand, as a program on a ROS 2 machine (or Unitree's SDK) would declare them.

Part of :mod:`support` (``from support.dds_peer import RosPeer``). Nothing here comes from jointbus:
the types below are typed in from the ``.msg`` files (ROS 2's DDS names ``pkg::msg::dds_::Name_``,
``char`` → ``uint8``, ``byte`` → ``octet``), serialised by cyclonedds itself, and checked
byte-identical to rosbags' serialiser in ``tests/bus/test_dds_transport.py``. A test that passes
against this peer therefore shows jointbus speaks ROS 2's DDS wire, not merely agrees with itself.

No ``from __future__ import annotations`` here: cyclonedds resolves an IdlStruct's annotations when
the class is created (``/work/shared/notes/dds.md``).
"""

import contextlib
import random
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from cyclonedds.core import DDSException, Listener, Policy, Qos
from cyclonedds.domain import Domain, DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl import types as t
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

LOOPBACK_CONFIG = (
    "<CycloneDDS><Domain><General><Interfaces><NetworkInterface address='127.0.0.1'/>"
    "</Interfaces><AllowMulticast>false</AllowMulticast></General><Discovery>"
    "<ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>32"
    "</MaxAutoParticipantIndex><Peers><Peer address='127.0.0.1'/></Peers></Discovery>"
    "</Domain></CycloneDDS>"
)


def free_domain() -> int:
    """A ROS domain id (100–232) whose first DDS unicast discovery port is free on this host, so
    concurrent tests do not meet each other."""
    for _ in range(200):
        domain = random.randint(100, 232)
        port = 7400 + 250 * domain + 10
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            try:
                sock.bind(("0.0.0.0", port))
            except OSError:
                continue
        return domain
    raise RuntimeError("no free DDS domain")


# ---- ROS 2 types, by hand ----------------------------------------------------------------------


@dataclass
class Time(IdlStruct, typename="builtin_interfaces::msg::dds_::Time_"):
    sec: t.int32 = 0
    nanosec: t.uint32 = 0


@dataclass
class Header(IdlStruct, typename="std_msgs::msg::dds_::Header_"):
    stamp: Time = field(default_factory=Time)
    frame_id: str = ""


@dataclass
class String(IdlStruct, typename="std_msgs::msg::dds_::String_"):
    data: str = ""


@dataclass
class Vector3(IdlStruct, typename="geometry_msgs::msg::dds_::Vector3_"):
    x: t.float64 = 0.0
    y: t.float64 = 0.0
    z: t.float64 = 0.0


@dataclass
class Quaternion(IdlStruct, typename="geometry_msgs::msg::dds_::Quaternion_"):
    x: t.float64 = 0.0
    y: t.float64 = 0.0
    z: t.float64 = 0.0
    w: t.float64 = 1.0


@dataclass
class Point(IdlStruct, typename="geometry_msgs::msg::dds_::Point_"):
    x: t.float64 = 0.0
    y: t.float64 = 0.0
    z: t.float64 = 0.0


@dataclass
class Twist(IdlStruct, typename="geometry_msgs::msg::dds_::Twist_"):
    linear: Vector3 = field(default_factory=Vector3)
    angular: Vector3 = field(default_factory=Vector3)


@dataclass
class Pose(IdlStruct, typename="geometry_msgs::msg::dds_::Pose_"):
    position: Point = field(default_factory=Point)
    orientation: Quaternion = field(default_factory=Quaternion)


@dataclass
class PoseWithCovariance(IdlStruct, typename="geometry_msgs::msg::dds_::PoseWithCovariance_"):
    pose: Pose = field(default_factory=Pose)
    covariance: t.array[t.float64, 36] = field(default_factory=lambda: [0.0] * 36)


@dataclass
class TwistWithCovariance(IdlStruct, typename="geometry_msgs::msg::dds_::TwistWithCovariance_"):
    twist: Twist = field(default_factory=Twist)
    covariance: t.array[t.float64, 36] = field(default_factory=lambda: [0.0] * 36)


@dataclass
class Odometry(IdlStruct, typename="nav_msgs::msg::dds_::Odometry_"):
    header: Header = field(default_factory=Header)
    child_frame_id: str = ""
    pose: PoseWithCovariance = field(default_factory=PoseWithCovariance)
    twist: TwistWithCovariance = field(default_factory=TwistWithCovariance)


@dataclass
class JointState(IdlStruct, typename="sensor_msgs::msg::dds_::JointState_"):
    header: Header = field(default_factory=Header)
    name: t.sequence[str] = field(default_factory=list)
    position: t.sequence[t.float64] = field(default_factory=list)
    velocity: t.sequence[t.float64] = field(default_factory=list)
    effort: t.sequence[t.float64] = field(default_factory=list)


@dataclass
class BridgeData(IdlStruct, typename="hb50_commons::msg::dds_::BridgeData_"):
    header: Header = field(default_factory=Header)
    orientation: Quaternion = field(default_factory=Quaternion)
    angular_velocity: Vector3 = field(default_factory=Vector3)
    linear_acceleration: Vector3 = field(default_factory=Vector3)
    joint_name: t.sequence[str] = field(default_factory=list)
    joint_position: t.sequence[t.float32] = field(default_factory=list)
    joint_velocity: t.sequence[t.float32] = field(default_factory=list)
    joint_effort: t.sequence[t.float32] = field(default_factory=list)
    joint_temperature: t.sequence[t.uint8] = field(default_factory=list)
    joint_status: t.sequence[t.uint16] = field(default_factory=list)


@dataclass
class JointCommand(IdlStruct, typename="hb50_commons::msg::dds_::JointCommand_"):
    header: Header = field(default_factory=Header)
    source_node: str = ""
    name: t.sequence[str] = field(default_factory=list)
    kp: t.sequence[t.float32] = field(default_factory=list)
    ki: t.sequence[t.float32] = field(default_factory=list)
    kd: t.sequence[t.float32] = field(default_factory=list)
    t_pos: t.sequence[t.float32] = field(default_factory=list)
    t_vel: t.sequence[t.float32] = field(default_factory=list)
    t_trq: t.sequence[t.float32] = field(default_factory=list)
    brake: t.sequence[bool] = field(default_factory=list)


@dataclass
class Transform2D(IdlStruct, typename="jointbus_msgs::msg::dds_::Transform2D_"):
    x: t.float64 = 0.0
    y: t.float64 = 0.0
    theta: t.float64 = 0.0


@dataclass
class Twist2D(IdlStruct, typename="jointbus_msgs::msg::dds_::Twist2D_"):
    vx: t.float64 = 0.0
    vy: t.float64 = 0.0
    omega: t.float64 = 0.0


@dataclass
class Wrench2D(IdlStruct, typename="jointbus_msgs::msg::dds_::Wrench2D_"):
    fx: t.float64 = 0.0
    fy: t.float64 = 0.0
    tau: t.float64 = 0.0


@dataclass
class Transform(IdlStruct, typename="geometry_msgs::msg::dds_::Transform_"):
    translation: Vector3 = field(default_factory=Vector3)
    rotation: Quaternion = field(default_factory=Quaternion)


@dataclass
class Wrench(IdlStruct, typename="geometry_msgs::msg::dds_::Wrench_"):
    force: Vector3 = field(default_factory=Vector3)
    torque: Vector3 = field(default_factory=Vector3)


@dataclass
class JointbusJointState(IdlStruct, typename="jointbus_msgs::msg::dds_::JointState_"):
    header: Header = field(default_factory=Header)
    name: t.sequence[str] = field(default_factory=list)
    kind: t.sequence[t.uint8] = field(default_factory=list)
    position: t.sequence[t.float64] = field(default_factory=list)
    velocity: t.sequence[t.float64] = field(default_factory=list)
    effort: t.sequence[t.float64] = field(default_factory=list)
    planar_position: t.sequence[Transform2D] = field(default_factory=list)
    planar_velocity: t.sequence[Twist2D] = field(default_factory=list)
    planar_effort: t.sequence[Wrench2D] = field(default_factory=list)
    floating_position: t.sequence[Transform] = field(default_factory=list)
    floating_velocity: t.sequence[Twist] = field(default_factory=list)
    floating_effort: t.sequence[Wrench] = field(default_factory=list)


@dataclass
class Gid(IdlStruct, typename="rmw_dds_common::msg::dds_::Gid_"):
    data: t.array[t.uint8, 16] = field(default_factory=lambda: [0] * 16)


@dataclass
class NodeEntitiesInfo(IdlStruct, typename="rmw_dds_common::msg::dds_::NodeEntitiesInfo_"):
    node_namespace: t.bounded_str[256] = ""
    node_name: t.bounded_str[256] = ""
    reader_gid_seq: t.sequence[Gid] = field(default_factory=list)
    writer_gid_seq: t.sequence[Gid] = field(default_factory=list)


@dataclass
class ParticipantEntitiesInfo(
    IdlStruct, typename="rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_"
):
    gid: Gid = field(default_factory=Gid)
    node_entities_info_seq: t.sequence[NodeEntitiesInfo] = field(default_factory=list)


# ---- QoS as ROS 2 sets it ----------------------------------------------------------------------


def ros_qos(
    *, reliable: bool = True, depth: int = 10, transient_local: bool = False, typehash: str = ""
) -> Qos:
    """A ROS 2 endpoint's QoS on rmw_cyclonedds: XCDR1, keep last ``depth``, USER_DATA
    ``typehash=…;`` when given."""
    policies: list[Any] = [
        Policy.Reliability.Reliable(max_blocking_time=100_000_000)
        if reliable
        else Policy.Reliability.BestEffort,
        Policy.Durability.TransientLocal if transient_local else Policy.Durability.Volatile,
        Policy.History.KeepLast(depth),
        Policy.DataRepresentation(use_cdrv0_representation=True),
    ]
    if typehash:
        policies.append(Policy.Userdata(f"typehash={typehash};".encode()))
    return Qos(*policies)


class RosPeer:
    """One DDS participant on loopback in ``domain``, reading and writing ROS 2 topics."""

    def __init__(self, domain: int) -> None:
        # A jointbus bus of this process may have created the domain already (with the same
        # loopback settings): the participant then joins it.
        self.domain: Domain | None
        try:
            self.domain = Domain(domain, LOOPBACK_CONFIG)
        except DDSException:
            self.domain = None
        self.participant = DomainParticipant(domain)
        self._keep: list[Any] = []

    def reader(
        self,
        topic: str,
        data_type: type[IdlStruct],
        on_sample: Callable[[Any], None],
        *,
        reliable: bool = False,
        depth: int = 200,
        transient_local: bool = False,
    ) -> DataReader[Any]:
        """A reader of ROS 2 topic ``topic`` (``/a/b``: DDS topic ``rt/a/b``) calling
        ``on_sample`` for every sample (on Cyclone's thread)."""

        # The listener may fire before the reader is assigned (transient-local history):
        # it takes from the reader once known, and the reader is drained once assigned.
        cell: list[DataReader[Any]] = []

        def on_data(_reader: Any) -> None:
            if cell:
                try:
                    samples = cell[0].take(256)
                except DDSException:  # deleted while the listener ran (closing)
                    return
                for sample in samples:
                    on_sample(sample)

        dds_topic = Topic(self.participant, "rt" + topic, data_type)
        made: DataReader[Any] = DataReader(
            self.participant,
            dds_topic,
            ros_qos(reliable=reliable, depth=depth, transient_local=transient_local),
            Listener(on_data_available=on_data),
        )
        cell.append(made)
        on_data(made)
        self._keep += [dds_topic, made]
        return made

    def writer(
        self,
        topic: str,
        data_type: type[IdlStruct],
        *,
        reliable: bool = False,
        depth: int = 1,
        typehash: str = "",
    ) -> DataWriter[Any]:
        """A writer on ROS 2 topic ``topic``."""
        dds_topic = Topic(self.participant, "rt" + topic, data_type)
        made: DataWriter[Any] = DataWriter(
            self.participant,
            dds_topic,
            ros_qos(reliable=reliable, depth=depth, typehash=typehash),
        )
        self._keep += [dds_topic, made]
        return made

    def discovery_reader(self, on_record: Callable[[ParticipantEntitiesInfo], None]) -> None:
        """Read ``ros_discovery_info`` (what ``ros2 node list`` reads)."""

        cell: list[DataReader[Any]] = []

        def on_data(_reader: Any) -> None:
            if cell:
                try:
                    samples = cell[0].take(256)
                except DDSException:  # deleted while the listener ran (closing)
                    return
                for sample in samples:
                    on_record(sample)

        topic = Topic(self.participant, "ros_discovery_info", ParticipantEntitiesInfo)
        reader: DataReader[Any] = DataReader(
            self.participant,
            topic,
            ros_qos(reliable=True, depth=100, transient_local=True),
            Listener(on_data_available=on_data),
        )
        cell.append(reader)
        on_data(reader)
        self._keep += [topic, reader]

    def close(self) -> None:
        """Delete the participant and the domain."""
        self._keep.clear()
        self.participant.__del__()
        if self.domain is not None:
            self.domain.__del__()


@contextlib.contextmanager
def ros_peer(domain: int) -> Iterator[RosPeer]:
    """A :class:`RosPeer` closed on exit."""
    peer = RosPeer(domain)
    try:
        yield peer
    finally:
        peer.close()


def wait_until(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Poll ``predicate`` every 10 ms until true or ``timeout`` s pass; returns its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()
