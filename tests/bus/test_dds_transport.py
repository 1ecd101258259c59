"""The DDS transport against real Cyclone DDS participants on loopback: jointbus buses with each
other, and with an independent peer (``support.dds_peer``: Cyclone DDS's Python binding with ROS 2's
types written out by hand)."""

from __future__ import annotations

import sys
import threading
import time
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from cyclonedds.core import InstanceState
from rosbags.typesys import Stores, get_typestore

from jointbus.bus import LATCHED, MAB_RT, RELIABLE, Bus, MalformedPayloadEvent, QosEvent
from jointbus.bus.dds_config import DdsConfig
from jointbus.bus.dds_transport import _ALIVE, DdsTransport, dds_qos, padded, profile_of
from jointbus.codec.type_hash import rihs01_of
from jointbus.messages.geometry_msgs import Twist, Vector3
from jointbus.messages.sensor_msgs import JointState
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header, String
from jointbus.robots.hb50.messages import JointCommand
from support import dds_peer
from support.dds_peer import free_domain, ros_peer, wait_until


@pytest.fixture
def domain() -> int:
    return free_domain()


def _bus(domain: int, name: str = "jointbus") -> Bus:
    return Bus(name=name, dds=DdsConfig(domain_id=domain))


def test_the_peer_types_serialise_byte_identical_to_rosbags() -> None:
    store = get_typestore(Stores.ROS2_JAZZY)
    js_cls = store.types["sensor_msgs/msg/JointState"]
    hdr = store.types["std_msgs/msg/Header"]
    time_cls = store.types["builtin_interfaces/msg/Time"]
    ours = dds_peer.JointState(
        dds_peer.Header(dds_peer.Time(3, 4), "base"), ["a", "b"], [0.5, -1.0], [2.0, 3.0], []
    )
    theirs = js_cls(
        header=hdr(stamp=time_cls(sec=3, nanosec=4), frame_id="base"),
        name=["a", "b"],
        position=np.array([0.5, -1.0]),
        velocity=np.array([2.0, 3.0]),
        effort=np.array([], dtype=np.float64),
    )
    assert ours.serialize(use_version_2=False) == bytes(
        store.serialize_cdr(theirs, "sensor_msgs/msg/JointState")
    )
    twist = dds_peer.Twist(dds_peer.Vector3(1, 2, 3), dds_peer.Vector3(4, 5, 6))
    vec = store.types["geometry_msgs/msg/Vector3"]
    assert twist.serialize(use_version_2=False) == bytes(
        store.serialize_cdr(
            store.types["geometry_msgs/msg/Twist"](
                linear=vec(x=1.0, y=2.0, z=3.0), angular=vec(x=4.0, y=5.0, z=6.0)
            ),
            "geometry_msgs/msg/Twist",
        )
    )


def test_two_buses_exchange_messages_and_latched_history(domain: int) -> None:
    with _bus(domain, "a") as a, _bus(domain, "b") as b:
        got: list[String] = []
        # A queue deep enough for the burst: this checks the wire, not the subscriber's queue
        # (a depth-10 queue drained by a dispatcher on a loaded host overflows, by design).
        b.subscribe("/chatter", String, got.append, RELIABLE.with_(depth=100), node="listener")
        pub = a.publisher("/chatter", String, RELIABLE, node="talker")
        latched = a.publisher("/latched", String, LATCHED, node="talker")
        latched.publish(String("the last word"))
        assert wait_until(lambda: pub.remote_matched)
        for i in range(20):
            pub.publish(String(f"hello {i}"))
        assert wait_until(lambda: len(got) == 20)
        assert got == [String(f"hello {i}") for i in range(20)]
        late: list[String] = []
        b.subscribe("/latched", String, late.append, LATCHED, node="late")
        assert wait_until(lambda: late == [String("the last word")])


def test_an_unobserved_publisher_writes_nothing(domain: int) -> None:
    with _bus(domain, "a") as a:
        pub = a.publisher("/quiet", String, MAB_RT)
        time.sleep(0.3)
        pub.publish(String("nobody listens"))
        assert pub.stats().remote_sent == 0
        with _bus(domain, "b") as b:
            b.subscribe("/quiet", String, lambda _m: None, MAB_RT)
            assert wait_until(lambda: pub.remote_matched)
            pub.publish(String("now someone does"))
            assert pub.stats().remote_sent == 1


def test_qos_maps_to_dds_and_back() -> None:
    for qos in (MAB_RT, RELIABLE, LATCHED):
        mapped = profile_of(dds_qos(qos, b""))
        assert (mapped.reliability, mapped.durability) == (qos.reliability, qos.durability)
    assert profile_of(dds_qos(MAB_RT, b"")).depth == 1
    assert profile_of(dds_qos(LATCHED, b"")).depth == 1  # what a late joiner receives
    # A reliable volatile writer keeps more than its depth: a burst is not overwritten unacked.
    assert profile_of(dds_qos(RELIABLE, b"")).depth >= 64


def test_padding_keeps_the_codec_bytes_and_counts_the_pad() -> None:
    data = String("abc").to_cdr()  # 4 + 4 + 4 = 12: aligned
    assert padded(data) == data
    odd = String("ab").to_cdr()  # 11 bytes
    out = padded(odd)
    assert len(out) == 12 and out[3] == 1 and out[4:11] == odd[4:]
    assert String.from_cdr(out) == String("ab")


def test_an_independent_peer_reads_what_jointbus_publishes(domain: int) -> None:
    with _bus(domain) as bus, ros_peer(domain) as peer:
        seen: list[Any] = []
        peer.reader("/joint_states", dds_peer.JointState, seen.append)
        pub = bus.publisher("/joint_states", JointState, MAB_RT, node="arm")
        assert wait_until(lambda: pub.remote_matched)
        msg = JointState(
            Header(Time(7, 8), "base"), ("j0", "j1"), (0.25, -0.5), (1.0, 2.0), (0.0, 0.0)
        )
        pub.publish(msg)
        assert wait_until(lambda: bool(seen))
        got = seen[0]
        assert (got.name, got.position, got.header.stamp.sec) == (["j0", "j1"], [0.25, -0.5], 7)


def test_jointbus_receives_the_peers_twist_with_its_type_hash(domain: int) -> None:
    with _bus(domain) as bus, ros_peer(domain) as peer:
        got: list[Twist] = []
        bus.subscribe("/cmd_vel", Twist, got.append, RELIABLE, node="base")
        writer = peer.writer("/cmd_vel", dds_peer.Twist, reliable=True, typehash=rihs01_of(Twist))
        assert wait_until(lambda: bool(writer.get_matched_subscriptions()))
        writer.write(dds_peer.Twist(dds_peer.Vector3(0.5, 0, 0), dds_peer.Vector3(0, 0, 0.2)))
        assert wait_until(lambda: bool(got))
        assert got[0] == Twist(Vector3(0.5, 0.0, 0.0), Vector3(0.0, 0.0, 0.2))


def test_a_sample_the_message_class_refuses_is_counted_and_reported_never_delivered(
    domain: int,
) -> None:
    with _bus(domain) as bus, ros_peer(domain) as peer:
        got: list[JointCommand] = []
        events: list[QosEvent] = []
        sub = bus.subscribe(
            "/hb50/joint_command", JointCommand, got.append, MAB_RT, on_event=events.append
        )
        writer = peer.writer("/hb50/joint_command", dds_peer.JointCommand)
        assert wait_until(lambda: bool(writer.get_matched_subscriptions()))
        one = [0.0]
        writer.write(  # a NaN target: JointCommand refuses it while decoding
            dds_peer.JointCommand(
                source_node="peer", name=["fr_j0"], kp=[80.0], ki=one, kd=[3.0],
                t_pos=[float("nan")], t_vel=one, t_trq=one, brake=[False],
            )
        )
        assert wait_until(lambda: sub.stats().malformed == 1)
        assert got == []
        malformed = [e for e in events if isinstance(e, MalformedPayloadEvent)]
        assert malformed and "t_pos" in malformed[0].describe()


def test_a_writer_announcing_another_type_hash_is_never_decoded(domain: int) -> None:
    with _bus(domain) as bus, ros_peer(domain) as peer:
        got: list[Twist] = []
        bus.subscribe("/cmd_vel", Twist, got.append, RELIABLE, node="base")
        other = "RIHS01_" + "0" * 64
        writer = peer.writer("/cmd_vel", dds_peer.Twist, reliable=True, typehash=other)
        assert wait_until(lambda: bool(writer.get_matched_subscriptions()))
        writer.write(dds_peer.Twist())
        time.sleep(0.3)
        assert got == []
        transport = bus.transport
        assert isinstance(transport, DdsTransport)
        assert transport.subscription(bus.local_subscribers("/cmd_vel")[0]).foreign_type == 1


def test_two_domains_on_one_host_stay_apart() -> None:
    first, second = free_domain(), free_domain()
    while second == first:
        second = free_domain()
    with _bus(first, "a") as a, _bus(second, "b") as b, _bus(first, "c") as c:
        in_b: list[String] = []
        in_c: list[String] = []
        b.subscribe("/chatter", String, in_b.append, RELIABLE)
        c.subscribe("/chatter", String, in_c.append, RELIABLE)
        pub = a.publisher("/chatter", String, RELIABLE)
        assert wait_until(lambda: pub.remote_matched)
        pub.publish(String("domain one"))
        assert wait_until(lambda: in_c == [String("domain one")])
        time.sleep(0.3)
        assert in_b == []
        transport = b.transport
        assert transport is not None
        assert transport.remote_endpoints(0.5) == []


def test_a_writer_holds_the_gil_only_while_no_reader_of_its_process_can_match(
    domain: int,
) -> None:
    """The binding's GIL-holding write is used only while the process has one participant in the
    domain; with a second one (a reader in this process could match), the GIL-releasing write."""
    from cyclonedds._clayer import ddspy_write  # type: ignore[import-not-found]

    from jointbus.bus.dds_transport import write_for, write_raw

    with _bus(domain, "a"):
        assert write_for(domain) is ddspy_write
        with _bus(domain, "b"):
            assert write_for(domain) is write_raw
        assert write_for(domain) is ddspy_write


class _Discovered:
    """What Cyclone DDS's built-in publications reader hands the listener: one endpoint's
    record (``key``, ``participant_key``, ``sample_info``, topic, type, QoS)."""

    def __init__(self, index: int, alive: bool) -> None:
        self.key = SimpleNamespace(bytes=bytes([index % 256, index // 256]) + b"\x07" * 14)
        self.participant_key = SimpleNamespace(bytes=b"\x09" * 16)
        self.sample_info = SimpleNamespace(
            instance_handle=1000 + index,
            instance_state=_ALIVE if alive else InstanceState.NotAliveDisposed,
        )
        self.topic_name = f"rt/race/t{index}"
        self.type_name = "std_msgs::msg::dds_::String_"
        self.qos: list[Any] = []


class _Reader:
    """A built-in reader whose every ``take`` brings 100 endpoints, appearing and vanishing by
    turns: the endpoint table changes size on each call."""

    def __init__(self) -> None:
        self.calls = 0

    def take(self, _n: int) -> list[_Discovered]:
        self.calls += 1
        alive = self.calls % 2 == 1
        return [_Discovered(i, alive) for i in range(100)]


def test_endpoints_found_on_one_listener_thread_never_break_the_others_graph_update(
    domain: int, caplog: pytest.LogCaptureFixture
) -> None:
    """The publications' and the subscriptions' listeners run on two DDS threads, and each one's
    graph update iterates the endpoint table the other fills. Recorded outside the lock, an update
    raised "dictionary changed size during iteration" and the graph missed that change (a test
    run, 2026-12-06). Here one thread keeps recording endpoints while another updates the graph,
    the interpreter switching threads every 20 µs."""
    with _bus(domain) as bus:
        transport = bus.transport
        assert isinstance(transport, DdsTransport)
        reader = _Reader()
        transport._builtin["publications"] = reader  # type: ignore[assignment]
        failures: list[BaseException] = []
        stop = threading.Event()

        def update_the_graph() -> None:
            while not stop.is_set():
                try:
                    transport._graph_changed()
                except Exception as exc:
                    failures.append(exc)
                    return
                time.sleep(0)  # let the other thread take the lock: Python's is not fair

        interval = sys.getswitchinterval()
        sys.setswitchinterval(2e-5)
        other = threading.Thread(target=update_the_graph, name="test-graph-update")
        other.start()
        try:
            for _ in range(100):
                transport._on_endpoints(True)
        finally:
            stop.set()
            other.join(10.0)
            sys.setswitchinterval(interval)
        assert reader.calls == 100
        assert failures == []
        assert "reading DDS endpoints failed" not in caplog.text
        # the last take removed every endpoint it had brought: none is left in the graph
        assert not any(e.topic.startswith("rt/race/") for e in transport._endpoints.values())
