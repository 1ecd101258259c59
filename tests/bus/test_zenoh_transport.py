"""The Zenoh transport between two real sessions on loopback (two buses in this process).

Each test gets its own free port: bus ``a`` listens on it, bus ``b`` connects. Sessions are closed
by the fixture, and no test may leave Zenoh shared-memory files in /dev/shm.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import zenoh

from jointbus.bus import (
    LATCHED,
    MAB_RT,
    RELIABLE,
    SUBSCRIPTION_DEFAULT,
    Bus,
    MalformedPayloadEvent,
    MessagesLostEvent,
    QosEvent,
    QosIncompatibleEvent,
    Reliability,
    TypeMismatchEvent,
    ZenohConfig,
    attachment,
    data_key,
)
from jointbus.codec import accel
from jointbus.codec.type_hash import rihs01_of
from support.bus import Count, Reading, free_port, wait_until


def _key(topic: str, cls: type = Count) -> str:
    """The rmw_zenoh data key of ``topic`` carrying ``cls`` in domain 0."""
    return data_key(0, topic, cls.TYPE_NAME, rihs01_of(cls))


def _att(gid: int, seq: int) -> bytes:
    """An rmw_zenoh attachment from the publisher with GID ``gid`` (as an int)."""
    return attachment.pack(seq, 0, gid.to_bytes(16, "little"))


def _shm_files() -> set[str]:
    try:
        return {f for f in os.listdir("/dev/shm") if "zenoh" in f.lower()}
    except FileNotFoundError:
        return set()


def _own_shm_files() -> set[str]:
    """Zenoh's shared-memory files this process maps now (its own sessions' segments). Other
    processes' files are not this process's leak: with the suite run on several workers, another
    worker's shared-memory test creates its own files while this one runs."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return set()
    return {f for f in _shm_files() if f"/dev/shm/{f}" in maps}


@pytest.fixture
def port() -> int:
    return free_port()


@pytest.fixture(params=[None, False], ids=["default-core", "python-twin"])
def pair(port: int, request: pytest.FixtureRequest) -> Iterator[tuple[Bus, Bus]]:
    """Two buses; every test runs with the default send and receive paths (the compiled core's
    when it is built) and with their pure-Python twins."""
    shm_before = _shm_files()
    a = Bus(name="a", zenoh=ZenohConfig.loopback(port))
    b = Bus(name="b", zenoh=ZenohConfig.loopback(None, (port,)))
    for bus in (a, b):
        assert bus.zenoh is not None
        bus.zenoh.compiled_receive = request.param
        bus.zenoh.compiled_send = request.param
    yield a, b
    own = _own_shm_files() - shm_before
    b.close()
    a.close()
    assert not own & _shm_files(), "closed sessions left their shared memory in /dev/shm"


@pytest.fixture
def raw(port: int) -> Iterator[zenoh.Session]:
    """A plain Zenoh session (no jointbus) connected to bus ``a``, for wire-level tests."""
    config = zenoh.Config()
    for key, value in ZenohConfig.loopback(None, (port,)).json5_items(
        ("tcp/127.0.0.1:0",), (f"tcp/127.0.0.1:{port}",)
    ):
        config.insert_json5(key, value)
    session = zenoh.open(config)
    yield session
    session.close()  # type: ignore[no-untyped-call]


def test_remote_publish_reaches_remote_subscriber_once_and_local_one_without_zenoh(
    pair: tuple[Bus, Bus],
) -> None:
    a, b = pair
    local: list[Count] = []
    remote: list[Count] = []
    deep = RELIABLE.with_(depth=100)  # a burst of 20 must not overflow the keep-last queue
    a.subscribe("/hb50/x", Count, local.append, deep)
    b.subscribe("/hb50/x", Count, remote.append, deep)
    pub = a.publisher("/hb50/x", Count, RELIABLE, node="talker")
    assert wait_until(lambda: pub.remote_matched)
    sent = [Count(i, f"m{i}") for i in range(20)]
    for msg in sent:
        pub.publish(msg)
    assert wait_until(lambda: len(remote) == 20)
    assert remote == sent
    assert wait_until(lambda: len(local) == 20)
    assert all(x is y for x, y in zip(local, sent, strict=True))  # objects, never serialised
    assert pub.stats().remote_sent == 20
    stats = b.local_subscribers("/hb50/x")[0].stats()
    assert (stats.lost, stats.malformed, stats.latency_count) == (0, 0, 20)


def test_unobserved_publisher_does_not_send(pair: tuple[Bus, Bus]) -> None:
    a, b = pair
    pub = a.publisher("/hb50/x", Count, MAB_RT)
    for i in range(5):
        pub.publish(Count(i))
    assert pub.stats().remote_sent == 0
    got: list[Count] = []
    sub = b.subscribe("/hb50/x", Count, got.append, MAB_RT)
    assert wait_until(lambda: pub.remote_matched)
    pub.publish(Count(99))
    assert wait_until(lambda: got == [Count(99)])
    sub.close()
    assert wait_until(lambda: not pub.remote_matched)
    pub.publish(Count(100))
    assert pub.stats().remote_sent == 1


def test_remote_messages_reach_a_realtime_subscriber(pair: tuple[Bus, Bus]) -> None:
    a, b = pair
    got: list[int] = []
    b.subscribe("/cmd", Count, lambda m: got.append(m.value), MAB_RT, realtime=True)
    pub = a.publisher("/cmd", Count, MAB_RT)
    assert wait_until(lambda: pub.remote_matched)
    pub.publish(Count(3))
    assert wait_until(lambda: got == [3])


def test_subscribers_added_and_closed_mid_stream_get_exactly_their_share(
    pair: tuple[Bus, Bus],
) -> None:
    # The receive path caches each remote publisher's subscriber list: it must follow changes.
    a, b = pair
    first: list[int] = []
    second: list[int] = []
    sub1 = b.subscribe("/cmd", Count, lambda m: first.append(m.value), RELIABLE, realtime=True)
    pub = a.publisher("/cmd", Count, RELIABLE)
    assert wait_until(lambda: pub.remote_matched)
    pub.publish(Count(1))
    assert wait_until(lambda: first == [1])
    b.subscribe("/cmd", Count, lambda m: second.append(m.value), RELIABLE, realtime=True)
    pub.publish(Count(2))
    assert wait_until(lambda: first == [1, 2] and second == [2])
    sub1.close()
    pub.publish(Count(3))
    assert wait_until(lambda: second == [2, 3])
    assert first == [1, 2]  # nothing after its close


def test_discovery_lists_remote_publishers_with_type_and_qos(pair: tuple[Bus, Bus]) -> None:
    a, b = pair
    a.publisher("/hb50/bridge_data", Count, MAB_RT, node="bridge")
    a.subscribe("/hb50/joint_command", Reading, None, MAB_RT, node="bridge")

    def seen() -> bool:
        return {t.name for t in b.discover(0.3)} == {"/hb50/bridge_data", "/hb50/joint_command"}

    assert wait_until(seen)
    topics = {t.name: t for t in b.discover(0.3)}
    data = topics["/hb50/bridge_data"]
    assert data.type_name == "jointbus_test/msg/Count"
    (publisher,) = data.publishers
    assert (publisher.node, publisher.qos, publisher.local) == ("bridge", MAB_RT, False)
    assert publisher.zid == a.zenoh.zid  # type: ignore[union-attr]
    assert topics["/hb50/joint_command"].subscribers[0].type_name == "jointbus_test/msg/Reading"


def test_malformed_payload_is_counted_reported_and_survived(
    pair: tuple[Bus, Bus], raw: zenoh.Session
) -> None:
    a, _ = pair
    events: list[QosEvent] = []
    got: list[Count] = []
    sub = a.subscribe("/hb50/x", Count, got.append, on_event=events.append)
    assert wait_until(lambda: bool(a.zenoh and a.zenoh.subscription("/hb50/x")))
    raw_pub = raw.declare_publisher(_key("/hb50/x"))
    assert wait_until(lambda: bool(getattr(raw_pub.matching_status, "matching", False)))
    raw_pub.put(b"\x00\x01garbage")
    raw_pub.put(b"", attachment=_att(7, 1))
    raw_pub.put(Count(5, "ok").to_cdr())  # a plain Zenoh publisher: no attachment, still valid
    assert wait_until(lambda: got == [Count(5, "ok")])
    assert sub.stats().malformed == 2
    malformed = [e for e in events if isinstance(e, MalformedPayloadEvent)]
    assert [e.size for e in malformed] == [9, 0]
    assert malformed[1].publisher == f"gid {7:032x}"
    assert malformed[1].total_count == 2


def test_sequence_gaps_are_counted_and_reported(pair: tuple[Bus, Bus], raw: zenoh.Session) -> None:
    a, _ = pair
    events: list[QosEvent] = []
    got: list[int] = []
    sub = a.subscribe("/x", Count, lambda m: got.append(m.value), on_event=events.append)
    raw_pub = raw.declare_publisher(_key("/x"))
    assert wait_until(lambda: bool(getattr(raw_pub.matching_status, "matching", False)))
    for seq in (1, 2, 5, 6):
        raw_pub.put(Count(seq).to_cdr(), attachment=_att(42, seq))
    assert wait_until(lambda: got == [1, 2, 5, 6])
    assert sub.stats().lost == 2
    (gap,) = [e for e in events if isinstance(e, MessagesLostEvent)]
    assert (gap.reason, gap.count) == ("gap", 2)


def test_a_malformed_sample_is_counted_malformed_not_lost(
    pair: tuple[Bus, Bus], raw: zenoh.Session
) -> None:
    """Issue 11 item 9: an undecodable sample arrived, so the next good one is no gap."""
    a, _ = pair
    events: list[QosEvent] = []
    got: list[int] = []
    sub = a.subscribe(
        "/hb50/joint_command", Count, lambda m: got.append(m.value), on_event=events.append
    )
    raw_pub = raw.declare_publisher(_key("/hb50/joint_command"))
    assert wait_until(lambda: bool(getattr(raw_pub.matching_status, "matching", False)))
    raw_pub.put(Count(1).to_cdr(), attachment=_att(42, 1))
    raw_pub.put(b"\x00\x01garbage", attachment=_att(42, 2))
    raw_pub.put(Count(3).to_cdr(), attachment=_att(42, 3))
    # A real gap after the malformed one is still a gap (seq 4 never sent).
    raw_pub.put(Count(5).to_cdr(), attachment=_att(42, 5))
    assert wait_until(lambda: got == [1, 3, 5])
    stats = sub.stats()
    assert (stats.malformed, stats.lost) == (1, 1)
    (gap,) = [e for e in events if isinstance(e, MessagesLostEvent)]
    assert gap.count == 1
    assert len([e for e in events if isinstance(e, MalformedPayloadEvent)]) == 1


def test_incompatible_qos_across_zenoh_is_reported_and_blocks_delivery(
    pair: tuple[Bus, Bus],
) -> None:
    a, b = pair
    a_events: list[QosEvent] = []
    b_events: list[QosEvent] = []
    got: list[Count] = []
    pub = a.publisher("/x", Count, MAB_RT, node="talker", on_event=a_events.append)
    b.subscribe("/x", Count, got.append, RELIABLE, node="listener", on_event=b_events.append)
    assert wait_until(lambda: any(isinstance(e, QosIncompatibleEvent) for e in a_events))
    assert wait_until(lambda: any(isinstance(e, QosIncompatibleEvent) for e in b_events))
    event = next(e for e in b_events if isinstance(e, QosIncompatibleEvent))
    assert event.remote
    assert event.publisher.startswith("talker#")
    assert "reliability" in event.reasons[0]
    # A compatible subscriber in the same process proves the messages do cross.
    probe: list[Count] = []
    b.subscribe("/x", Count, probe.append, MAB_RT.with_(depth=10))
    assert wait_until(lambda: pub.remote_matched)
    pub.publish(Count(1))
    pub.publish(Count(2))
    assert wait_until(lambda: probe == [Count(1), Count(2)])
    assert got == []


def test_an_incompatible_remote_pair_is_reported_once_per_endpoint_pair(
    pair: tuple[Bus, Bus],
) -> None:
    """Issue 20, item 25: a reliable subscriber of a best-effort topic was reported again each
    time another endpoint met it (a second local subscriber re-reported the first; a token seen
    twice, twice). One event per (publisher, subscriber) pair, on each side."""
    a, b = pair
    a_events: list[QosEvent] = []
    b_events: list[QosEvent] = []
    a.publisher("/x", Count, MAB_RT, node="talker", on_event=a_events.append)
    first = b.subscribe("/x", Count, None, RELIABLE, node="listener", on_event=b_events.append)
    assert wait_until(lambda: len([e for e in b_events if isinstance(e, QosIncompatibleEvent)]))
    second = b.subscribe("/x", Count, None, RELIABLE, node="listener", on_event=b_events.append)
    assert wait_until(
        lambda: len([e for e in a_events if isinstance(e, QosIncompatibleEvent)]) >= 2
    )
    time.sleep(1.0)  # tokens seen again by the liveliness subscriber and queries meanwhile
    mine = [e for e in b_events if isinstance(e, QosIncompatibleEvent)]
    theirs = [e for e in a_events if isinstance(e, QosIncompatibleEvent)]
    assert sorted(e.subscriber for e in mine) == sorted([first.label, second.label])
    assert len(theirs) == 2  # the talker hears of each of the two subscribers once
    assert len({e.subscriber for e in theirs}) == 2


def test_a_subscription_without_qos_receives_a_best_effort_topic(pair: tuple[Bus, Bus]) -> None:
    """Issue 20, item 25: with RELIABLE as the default, ``subscribe`` of a 500 Hz MAB_RT topic
    received nothing (an incompatible pair). The default is best effort now, which every
    publisher serves: in process and across Zenoh, from MAB_RT and RELIABLE publishers."""
    a, b = pair
    assert SUBSCRIPTION_DEFAULT.reliability is Reliability.BEST_EFFORT
    fast = a.publisher("/fast", Count, MAB_RT)
    slow = a.publisher("/slow", Count, RELIABLE)
    here: list[Count] = []
    there: list[Count] = []
    slow_there: list[Count] = []
    events: list[QosEvent] = []
    a.subscribe("/fast", Count, here.append, realtime=True, on_event=events.append)
    sub = b.subscribe("/fast", Count, there.append, realtime=True, on_event=events.append)
    b.subscribe("/slow", Count, slow_there.append, realtime=True, on_event=events.append)
    assert sub.qos == SUBSCRIPTION_DEFAULT
    assert wait_until(lambda: fast.remote_matched and slow.remote_matched)
    for i in range(3):
        fast.publish(Count(i))
        slow.publish(Count(i))
    assert wait_until(lambda: len(there) == 3 and len(slow_there) == 3)
    assert here == [Count(0), Count(1), Count(2)]
    assert not [e for e in events if isinstance(e, QosIncompatibleEvent)]


def test_latched_topic_reaches_a_late_remote_joiner(pair: tuple[Bus, Bus]) -> None:
    a, b = pair
    pub = a.publisher("/robot_description", Count, LATCHED.with_(depth=2))
    for i in range(4):
        pub.publish(Count(i))
    late = b.subscribe("/robot_description", Count, None, LATCHED.with_(depth=2))
    assert wait_until(lambda: late.queued == 2)
    assert [m.value for m in late.take_all()] == [2, 3]
    assert wait_until(lambda: pub.remote_matched)
    pub.publish(Count(4))
    assert wait_until(lambda: late.latest() == Count(4))
    assert [m.value for m in late.take_all()] == [4]


def test_type_mismatch_across_zenoh_is_reported_and_ignored(pair: tuple[Bus, Bus]) -> None:
    a, b = pair
    events: list[QosEvent] = []
    got: list[Reading] = []
    pub = a.publisher("/x", Count)
    b.subscribe("/x", Reading, got.append, on_event=events.append)
    assert wait_until(lambda: any(isinstance(e, TypeMismatchEvent) for e in events))
    event = next(e for e in events if isinstance(e, TypeMismatchEvent))
    assert (event.local_type, event.remote_type) == (
        f"jointbus_test/msg/Reading ({rihs01_of(Reading)})",
        f"jointbus_test/msg/Count ({rihs01_of(Count)})",
    )
    # Each type has its own key (type name and hash are part of it): Zenoh never matches them.
    assert not wait_until(lambda: pub.remote_matched, timeout=0.3)
    pub.publish(Count(1))
    pub.publish(Count(2))
    # Give the samples time to arrive; they must be dropped, not delivered or counted malformed.
    sub = b.local_subscribers("/x")[0]
    assert not wait_until(lambda: sub.stats().received > 0, timeout=0.3)
    assert sub.stats().malformed == 0


def test_json5_items_keep_multicast_off_and_shared_memory_off() -> None:
    items = dict(ZenohConfig.loopback(7000).json5_items(("tcp/127.0.0.1:7000",), ()))
    assert json.loads(items["scouting/multicast/enabled"]) is False
    assert json.loads(items["transport/shared_memory/enabled"]) is False
    assert json.loads(items["mode"]) == "peer"


def test_latched_publisher_appearing_after_the_subscriber_is_caught_up(
    pair: tuple[Bus, Bus],
) -> None:
    a, b = pair
    early = b.subscribe("/map", Count, None, LATCHED)
    pub = a.publisher("/map", Count, LATCHED)
    pub.publish(Count(1))  # most likely before Zenoh reports the match: not sent live
    assert wait_until(lambda: early.latest() == Count(1))
    assert wait_until(lambda: early.queued >= 1)
    assert early.take_all() == [Count(1)]
    assert early.stats().received == 1  # once, not once live and once from history


def test_a_late_history_fetch_ending_with_the_bus_is_quiet(
    pair: tuple[Bus, Bus], caplog: pytest.LogCaptureFixture
) -> None:
    """A program may end while a late-history query runs: the thread ends without an error
    (it raised zenoh's "session closed" out of the thread before)."""
    _, b = pair
    sub = b.subscribe("/map", Count, None, LATCHED)
    transport = b._transport
    assert transport is not None
    subscription = transport.subscription("/map")
    assert subscription is not None
    b.close()
    transport.fetch_late_history(subscription, sub, "0123456789abcdef")
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


def test_a_publisher_restarting_its_numbering_loses_nothing(
    pair: tuple[Bus, Bus], raw: zenoh.Session
) -> None:
    """Repeated or lower sequence numbers (a restarted publisher with the same GID) are no gap;
    the steady state after a gap is delivered again (the gate takes over once more)."""
    a, _ = pair
    events: list[QosEvent] = []
    got: list[int] = []
    sub = a.subscribe("/x", Count, lambda m: got.append(m.value), on_event=events.append)
    raw_pub = raw.declare_publisher(_key("/x"))
    assert wait_until(lambda: bool(getattr(raw_pub.matching_status, "matching", False)))
    seqs = (1, 2, 3, 1, 2, 2, 9, 10, 11)
    for i, seq in enumerate(seqs):
        raw_pub.put(Count(i).to_cdr(), attachment=_att(42, seq))
    assert wait_until(lambda: got == list(range(len(seqs))))
    stats = sub.stats()
    assert (stats.lost, stats.received, stats.latency_count) == (6, len(seqs), len(seqs))
    assert [e.count for e in events if isinstance(e, MessagesLostEvent)] == [6]
    subscription = a.zenoh.subscription("/x")  # type: ignore[union-attr]
    assert subscription is not None and subscription.samples == len(seqs)


def test_a_corrupt_source_time_is_clamped_and_the_sample_delivered(
    pair: tuple[Bus, Bus], raw: zenoh.Session
) -> None:
    a, _ = pair
    got: list[int] = []
    sub = a.subscribe("/x", Count, lambda m: got.append(m.value), MAB_RT, realtime=True)
    raw_pub = raw.declare_publisher(_key("/x"))
    assert wait_until(lambda: bool(getattr(raw_pub.matching_status, "matching", False)))
    gid = (42).to_bytes(16, "little")
    for seq in (1, 2, 3):
        raw_pub.put(Count(seq).to_cdr(), attachment=attachment.pack(seq, -(2**63), gid))
    assert wait_until(lambda: got == [1, 2, 3])
    stats = sub.stats()
    assert (stats.latency_count, stats.latency_max_ns, stats.latency_last_ns) == (3, 2**62, 2**62)


@pytest.mark.skipif(not accel.AVAILABLE, reason="_cdr_accel not built or disabled")
def test_the_compiled_send_puts_the_cdr_with_rmw_zenohs_attachment() -> None:
    puts: list[tuple[bytes, bytes]] = []

    def put(payload: bytes, *, attachment: bytes) -> None:
        puts.append((payload, attachment))

    gid = bytes(range(16))
    send = accel.sender(put, Count.to_cdr, gid)
    assert send is not None
    before = time.time_ns()
    send(Count(7, "x"), 2**40 + 3, 0)
    after = time.time_ns()
    ((payload, att),) = puts
    assert payload == Count(7, "x").to_cdr()
    record = attachment.unpack(att)
    assert record is not None
    assert (record.seq, record.gid) == (2**40 + 3, int.from_bytes(gid, "little"))
    assert before <= record.source_wall_ns <= after
    assert att == attachment.pack(record.seq, record.source_wall_ns, gid)
    with pytest.raises(OverflowError):
        send(Count(7), 2**63, 0)  # the Python twin refuses it too (struct.error)
    assert len(puts) == 1


def test_a_sessions_node_names_are_kept_after_it_closes(port: int) -> None:
    """``session_nodes``: what a closed link's session ran (the chaos campaign's ``-v`` names
    it). Its node tokens go before its link does: read at that moment, the graph has them no
    more, and a loaded host's late link event said "nodes not yet known" (make test)."""
    a = Bus(name="a", zenoh=ZenohConfig.loopback(port))
    b = Bus(name="b", zenoh=ZenohConfig.loopback(None, (port,)))
    try:
        assert a.zenoh is not None and b.zenoh is not None
        zid = b.zenoh.zid
        b.publisher("/probe/x", Count, node="first", namespace="probe")
        b.publisher("/probe/y", Count, node="second", namespace="probe")
        assert wait_until(lambda: a.zenoh is not None and len(a.zenoh.session_nodes(zid)) == 2)
        assert a.zenoh.session_nodes(zid) == ("first", "second")
        assert a.zenoh.session_nodes("0" * len(zid)) == ()  # a session never heard of
        b.close()
        assert wait_until(
            lambda: a.zenoh is not None
            and not any(e.zid == zid for e in a.zenoh.graph_entities())
        )
        assert a.zenoh.session_nodes(zid) == ("first", "second")
    finally:
        b.close()
        a.close()
