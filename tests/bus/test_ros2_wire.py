"""jointbus on the wire is an rmw_zenoh participant: byte-checked with plain eclipse-zenoh.

A jointbus bus listens on a free loopback port; a raw Zenoh session (no jointbus code on its side)
plays the ROS 2 node: it reads our keys, tokens and attachments byte for byte, and publishes the
way rmw_zenoh does (key, tokens, 33-byte attachment, zenoh-ext advanced publisher/subscriber for
transient local), including the bad inputs a ROS 2 graph can contain.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Iterator

import pytest
import zenoh
import zenoh.ext

from jointbus.bus import (
    LATCHED,
    RELIABLE,
    AttachmentEvent,
    Bus,
    QosEvent,
    TypeMismatchEvent,
    ZenohConfig,
    ZenohConfigError,
    attachment,
    data_key,
)
from jointbus.bus.ros_graph import endpoint_token, gid_of, node_token
from jointbus.codec.type_hash import rihs01_of
from jointbus.messages.std_msgs import String
from support.bus import Count, free_port, ros2_peer, wait_until

_STRING_HASH = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"
_STRING_KEY = f"0/chatter/std_msgs::msg::dds_::String_/{_STRING_HASH}"


@pytest.fixture
def port() -> int:
    return free_port()


@pytest.fixture
def bus(port: int) -> Iterator[Bus]:
    with Bus(name="robot", zenoh=ZenohConfig(listen=(f"tcp/127.0.0.1:{port}",), domain_id=0)) as b:
        yield b


@pytest.fixture
def ros(port: int) -> Iterator[zenoh.Session]:
    """A plain Zenoh peer, configured as rmw_zenoh configures a ROS 2 node's session."""
    with ros2_peer(port, timestamping=True) as session:
        yield session


def _tokens(session: zenoh.Session) -> list[str]:
    return sorted(
        str(r.ok.key_expr) for r in session.liveliness().get("@ros2_lv/0/**", timeout=1.0) if r.ok
    )


def test_a_publisher_puts_rmw_zenoh_keys_attachments_and_tokens(
    bus: Bus, ros: zenoh.Session
) -> None:
    samples: list[zenoh.Sample] = []
    ros.declare_subscriber(_STRING_KEY, samples.append)
    pub = bus.publisher("/chatter", String, RELIABLE, node="talker")
    assert wait_until(lambda: pub.remote_matched)
    before = time.time_ns()
    pub.publish(String("hello"))
    pub.publish(String("world"))
    assert wait_until(lambda: len(samples) == 2)
    zid = bus.zenoh.zid  # type: ignore[union-attr]
    node, publisher = _tokens(ros)
    assert node == f"@ros2_lv/0/{zid}/1/1/NN/%/%/talker"
    assert publisher == (
        f"@ros2_lv/0/{zid}/1/2/MP/%/%/talker/%chatter/std_msgs::msg::dds_::String_/"
        f"{_STRING_HASH}/::,10:,:,:,,"
    )
    for seq, sample in enumerate(samples, start=1):
        assert str(sample.key_expr) == _STRING_KEY
        assert sample.payload.to_bytes() == String(("hello", "world")[seq - 1]).to_cdr()
        raw = sample.attachment.to_bytes()  # type: ignore[union-attr]
        assert len(raw) == 33
        number, stamp = struct.unpack_from("<qq", raw)
        assert number == seq
        assert before <= stamp <= time.time_ns()
        assert raw[16] == 0x10
        assert raw[17:] == gid_of(publisher)


def test_a_ros2_publisher_reaches_a_jointbus_subscriber_and_shows_in_discovery(
    bus: Bus, ros: zenoh.Session
) -> None:
    got: list[String] = []
    sub = bus.subscribe("/chatter", String, got.append, RELIABLE)
    zid = str(ros.zid())
    node = ros.liveliness().declare_token(node_token(0, zid, 0, "ros_talker"))
    token = endpoint_token(
        0,
        zid,
        node_id=0,
        entity_id=1,
        kind="MP",
        node="ros_talker",
        topic="/chatter",
        type_name="std_msgs/msg/String",
        type_hash=_STRING_HASH,
        qos=RELIABLE.with_(depth=7),
    )
    alive = ros.liveliness().declare_token(token)  # kept: a dropped token is undeclared
    publisher = ros.declare_publisher(_STRING_KEY)
    assert wait_until(lambda: bool(getattr(publisher.matching_status, "matching", False)))
    for seq in (1, 2, 3):
        publisher.put(
            String(f"m{seq}").to_cdr(),
            attachment=attachment.pack(seq, time.time_ns(), gid_of(token)),
        )
    assert wait_until(lambda: [m.data for m in got] == ["m1", "m2", "m3"])
    stats = sub.stats()
    assert (stats.lost, stats.malformed, stats.latency_count) == (0, 0, 3)
    (topic,) = [t for t in bus.discover(timeout=0.5) if t.name == "/chatter"]
    (remote,) = topic.publishers
    assert (remote.node, remote.zid, remote.qos.depth, remote.type_hash) == (
        "ros_talker",
        zid,
        7,
        _STRING_HASH,
    )
    assert remote.gid == int.from_bytes(gid_of(token), "little")
    alive.undeclare()
    node.undeclare()


def test_a_publisher_with_another_type_hash_is_reported_once_and_never_decoded(
    bus: Bus, ros: zenoh.Session
) -> None:
    """E.g. a ROS 2 node built with another String definition (or Humble's TypeHashNotSupported):
    its token is reported once, its samples never reach the decoder."""
    events: list[QosEvent] = []
    got: list[String] = []
    bus.subscribe("/chatter", String, got.append, on_event=events.append)
    wrong_hash = f"RIHS01_{'0' * 64}"
    zid = str(ros.zid())
    token = endpoint_token(
        0,
        zid,
        node_id=0,
        entity_id=1,
        kind="MP",
        node="old_talker",
        topic="/chatter",
        type_name="std_msgs/msg/String",
        type_hash=wrong_hash,
        qos=RELIABLE,
    )
    alive = ros.liveliness().declare_token(token)
    other = ros.declare_publisher(f"0/chatter/std_msgs::msg::dds_::String_/{wrong_hash}")
    good = ros.declare_publisher(_STRING_KEY)
    assert wait_until(lambda: bool(getattr(good.matching_status, "matching", False)))
    assert not getattr(other.matching_status, "matching", False)  # Zenoh routes nothing to us
    for seq in (1, 2, 3):
        other.put(String("wrong").to_cdr(), attachment=attachment.pack(seq, 0, gid_of(token)))
    good.put(String("right").to_cdr(), attachment=attachment.pack(1, 0, b"\x01" * 16))
    assert wait_until(lambda: [m.data for m in got] == ["right"])
    assert wait_until(lambda: any(isinstance(e, TypeMismatchEvent) for e in events))
    time.sleep(0.2)
    (mismatch,) = [e for e in events if isinstance(e, TypeMismatchEvent)]
    assert mismatch.remote_type == f"std_msgs/msg/String ({wrong_hash})"
    assert mismatch.remote.startswith("old_talker#")
    assert [m.data for m in got] == ["right"]
    alive.undeclare()


def test_samples_without_attachment_are_delivered_counted_and_reported_once(
    bus: Bus, ros: zenoh.Session
) -> None:
    events: list[QosEvent] = []
    got: list[String] = []
    sub = bus.subscribe("/chatter", String, got.append, on_event=events.append)
    raw = ros.declare_publisher(_STRING_KEY)
    assert wait_until(lambda: bool(getattr(raw.matching_status, "matching", False)))
    raw.put(String("a").to_cdr())
    raw.put(String("b").to_cdr(), attachment=b"JB\x01\x00" + bytes(32))  # the old 36-byte record
    raw.put(String("c").to_cdr())
    assert wait_until(lambda: [m.data for m in got] == ["a", "b", "c"])
    reported = [e for e in events if isinstance(e, AttachmentEvent)]
    assert [e.reason for e in reported] == [
        "no attachment",
        "a 36-byte attachment that is not rmw_zenoh's 33-byte record",
    ]
    assert bus.zenoh.subscription("/chatter").bad_attachments == 3  # type: ignore[union-attr]
    assert sub.stats().latency_count == 0


def test_malformed_and_unknown_type_tokens_are_counted_not_fatal(
    bus: Bus, ros: zenoh.Session
) -> None:
    got: list[String] = []
    bus.subscribe("/chatter", String, got.append)
    zid = str(ros.zid())
    bad = ros.liveliness().declare_token(f"@ros2_lv/0/{zid}/1/2/MP/%/%/n/%chatter/garbage")
    unknown = endpoint_token(
        0,
        zid,
        node_id=1,
        entity_id=3,
        kind="MP",
        node="n",
        topic="/other",
        type_name="unknown_pkg/msg/Nope",
        type_hash=f"RIHS01_{'1' * 64}",
        qos=RELIABLE,
    )
    alive = ros.liveliness().declare_token(unknown)
    transport = bus.zenoh
    assert transport is not None
    assert wait_until(lambda: transport.bad_tokens >= 1)
    topics = {t.name: t for t in bus.discover(timeout=0.5)}
    assert topics["/other"].type_name == "unknown_pkg/msg/Nope"  # listed, never decoded
    bad.undeclare()
    alive.undeclare()


def test_a_latched_publisher_serves_an_rmw_zenoh_style_late_subscriber(
    bus: Bus, ros: zenoh.Session
) -> None:
    pub = bus.publisher("/robot_description", String, LATCHED.with_(depth=2), node="model")
    for text in ("a", "b", "c"):
        pub.publish(String(text))
    got: list[zenoh.Sample] = []
    key = data_key(0, "/robot_description", String.TYPE_NAME, rihs01_of(String))
    # rmw_zenoh's transient-local subscription: an AdvancedSubscriber querying history.
    late = zenoh.ext.declare_advanced_subscriber(
        ros,
        key,
        got.append,
        history=zenoh.ext.HistoryConfig(detect_late_publishers=True, max_samples=2),
    )
    assert wait_until(lambda: len(got) == 2)
    assert [String.from_cdr(s.payload.to_bytes()).data for s in got] == ["b", "c"]
    assert all(len(s.attachment.to_bytes()) == 33 for s in got)  # type: ignore[union-attr]
    late.undeclare()


def test_a_jointbus_latched_subscriber_gets_a_ros2_publishers_cache(
    bus: Bus, ros: zenoh.Session
) -> None:
    zid = str(ros.zid())
    token = endpoint_token(
        0,
        zid,
        node_id=0,
        entity_id=1,
        kind="MP",
        node="map_server",
        topic="/map",
        type_name=Count.TYPE_NAME,
        type_hash=rihs01_of(Count),
        qos=LATCHED,
    )
    # rmw_zenoh's transient-local publisher: an AdvancedPublisher with a cache.
    adv = zenoh.ext.declare_advanced_publisher(
        ros,
        data_key(0, "/map", Count.TYPE_NAME, rihs01_of(Count)),
        cache=zenoh.ext.CacheConfig(1),
        publisher_detection=True,
    )
    adv.put(Count(7).to_cdr(), attachment=attachment.pack(1, time.time_ns(), gid_of(token)))
    alive = ros.liveliness().declare_token(token)
    late = bus.subscribe("/map", Count, None, LATCHED)
    assert wait_until(lambda: late.latest() == Count(7))
    assert late.stats().received == 1
    alive.undeclare()
    adv.undeclare()


def test_domain_comes_from_the_option_or_ros_domain_id(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ZenohConfig(domain_id=3).domain == 3
    monkeypatch.setenv("ROS_DOMAIN_ID", "12")
    assert ZenohConfig().domain == 12
    monkeypatch.setenv("ROS_DOMAIN_ID", "twelve")
    with pytest.raises(ZenohConfigError, match="ROS_DOMAIN_ID"):
        _ = ZenohConfig().domain
    with pytest.raises(ZenohConfigError, match="domain_id"):
        ZenohConfig(domain_id=300)


def test_other_domains_are_invisible(port: int, ros: zenoh.Session) -> None:
    with Bus(zenoh=ZenohConfig(listen=(f"tcp/127.0.0.1:{port}",), domain_id=4)) as b:
        got: list[zenoh.Sample] = []
        ros.declare_subscriber("4/**", got.append)
        pub = b.publisher("/chatter", String, node="talker")
        assert wait_until(lambda: pub.remote_matched)
        pub.publish(String("x"))
        assert wait_until(lambda: len(got) == 1)
        assert str(got[0].key_expr) == f"4/chatter/std_msgs::msg::dds_::String_/{_STRING_HASH}"
        assert _tokens(ros) == []  # nothing in domain 0
