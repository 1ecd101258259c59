"""The recorder's remote source: payloads from other Zenoh sessions stored exactly as received."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from mcap.reader import make_reader
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

from jointbus.bus import LATCHED, MAB_RT, RELIABLE, Bus, ZenohConfig
from jointbus.messages.geometry_msgs import Transform, TransformStamped
from jointbus.messages.std_msgs import Header, String
from jointbus.messages.tf2_msgs import TFMessage
from jointbus.robots.hb50.messages.bridge_data import BridgeData
from jointbus.runtime.parameter_messages import ParameterList
from jointbus.tools import recorder as recorder_module
from jointbus.tools.bag_info import bag_info
from jointbus.tools.recorder import LATE_HISTORY_WINDOW_S, UNKNOWN_PUBLISHER_WAIT_S, Recorder
from support.tools import bridge_data, free_port, wait_until


@pytest.fixture
def pair():
    port = free_port()
    robot = Bus(zenoh=ZenohConfig.loopback(port), name="robot")
    recorder_bus = Bus(zenoh=ZenohConfig.loopback(None, (port,)), name="rec")
    yield robot, recorder_bus
    recorder_bus.close()
    robot.close()


def test_remote_payloads_are_stored_as_received_with_their_times_and_sequence(pair, tmp_path):
    robot, recorder_bus = pair
    path: Path = tmp_path / "remote.mcap"
    pub = robot.publisher("/hb50/bridge_data", BridgeData, RELIABLE)
    sent = [bridge_data(i) for i in range(200)]
    with Recorder(recorder_bus, path, local=False, remote=True) as rec:
        assert wait_until(lambda: pub.remote_matched)
        for msg in sent:
            pub.publish(msg)
        late = robot.publisher("/late/text", String, RELIABLE)  # a topic created later
        assert wait_until(lambda: late.remote_matched)
        late.publish(String("late"))
        assert wait_until(lambda: rec.stats().messages == 201)
        stats = rec.stop()
    assert stats.lost == 0 and stats.skipped == 0
    held = rec.topic_record("/hb50/bridge_data")
    assert held is not None and (held.count, held.sent) == (200, 200)
    with path.open("rb") as f:
        got = [(s.name, c.topic, m) for s, c, m in make_reader(f).iter_messages()]
    data = [m for name, topic, m in got if topic == "/hb50/bridge_data"]
    assert [m.data for m in data] == [msg.to_cdr() for msg in sent]
    assert [m.sequence for m in data] == list(range(1, 201))
    assert all(m.publish_time <= m.log_time for m in data)
    assert {name for name, topic, _ in got if topic == "/hb50/bridge_data"} == {
        BridgeData.TYPE_NAME
    }
    assert [String.from_cdr(m.data).data for _n, t, m in got if t == "/late/text"] == ["late"]


def test_topic_filter_applies_to_remote_topics(pair, tmp_path):
    robot, recorder_bus = pair
    path: Path = tmp_path / "filtered.mcap"
    wanted = robot.publisher("/wanted", String)
    other = robot.publisher("/other", String)
    with Recorder(recorder_bus, path, ["/wanted"], local=False, remote=True) as rec:
        assert wait_until(lambda: wanted.remote_matched)
        other.publish(String("no"))
        wanted.publish(String("yes"))
        assert wait_until(lambda: rec.stats().messages == 1)
    with path.open("rb") as f:
        records = make_reader(f).iter_messages()
        got = [(c.topic, String.from_cdr(m.data).data) for _s, c, m in records]
    assert got == [("/wanted", "yes")]


def test_a_recorder_of_named_topics_leaves_the_other_publishers_unobserved(pair, tmp_path):
    """A publisher encodes and sends only while a subscriber matches it. A recorder subscribed
    to the whole domain and kept the named topics: a ``jointbus record`` of three topics beside
    the walking demo made the bridge send every topic it has, and on a slow minute it skipped
    35.8 % of its cycles (a new user's trial). Only the named topics' publishers may see it."""
    robot, recorder_bus = pair
    wanted = robot.publisher("/hb50/wanted", String)
    deeper = robot.publisher("/hb50/wanted/deeper", String)  # not a prefix match
    other = robot.publisher("/hb50/other", String)
    with Recorder(
        recorder_bus, tmp_path / "named.mcap", ["/hb50/wanted"], local=False, remote=True
    ) as rec:
        assert wait_until(lambda: wanted.remote_matched)
        time.sleep(1.0)  # the discovery that matched the wanted one has reached the others too
        assert not other.remote_matched and not deeper.remote_matched
        for pub in (wanted, deeper, other):
            pub.publish(String("x"))
        assert wait_until(lambda: rec.stats().messages == 1)
    with Recorder(recorder_bus, tmp_path / "all.mcap", local=False, remote=True):
        assert wait_until(lambda: other.remote_matched and deeper.remote_matched)


def _latched_messages() -> tuple[TFMessage, ParameterList]:
    tf = TFMessage((TransformStamped(Header(frame_id="base_link"), "imu_link", Transform()),))
    params = ParameterList(Header(frame_id=""), "bridge_node")
    return tf, params


def _rosbags_decoded(path: Path) -> dict[str, list[object]]:
    """Every message of the file decoded by rosbags from the schema the file carries."""
    store = get_typestore(Stores.EMPTY)
    out: dict[str, list[object]] = {}
    with path.open("rb") as f:
        for schema, channel, message in make_reader(f).iter_messages():
            if schema.name not in store.fielddefs:
                store.register(get_types_from_msg(schema.data.decode(), schema.name))
            out.setdefault(channel.topic, []).append(
                store.deserialize_cdr(message.data, schema.name)
            )
    return out


def test_latched_topics_published_before_the_recorder_started_are_recorded(pair, tmp_path):
    """``jointbus record`` started after the stack is up: /tf_static and /hb50/parameters were
    published once, long before; the recorder fetches them from the publishers' caches."""
    robot, recorder_bus = pair
    tf, params = _latched_messages()
    tf_pub = robot.publisher("/tf_static", TFMessage, LATCHED, node="control_node")
    param_pub = robot.publisher("/hb50/parameters", ParameterList, LATCHED, node="bridge_node")
    volatile = robot.publisher("/chatter", String, RELIABLE)
    tf_pub.publish(tf)
    param_pub.publish(params)
    volatile.publish(String("gone"))  # volatile: not for a late subscriber
    path: Path = tmp_path / "latched.mcap"
    with Recorder(recorder_bus, path, local=False, remote=True) as rec:
        assert wait_until(lambda: rec.stats().messages >= 2, timeout=5)
        time.sleep(0.3)
        stats = rec.stop()
    assert stats.messages == 2 and stats.lost == 0
    # the publishers' QoS, from their discovery tokens or their caches' replies: latched
    assert all(t.latched for t in bag_info(path).topics), bag_info(path).topics
    decoded = _rosbags_decoded(path)
    assert sorted(decoded) == ["/hb50/parameters", "/tf_static"]
    (tf_got,) = decoded["/tf_static"]
    assert tf_got.transforms[0].header.frame_id == "base_link"  # type: ignore[attr-defined]
    assert tf_got.transforms[0].child_frame_id == "imu_link"  # type: ignore[attr-defined]
    (params_got,) = decoded["/hb50/parameters"]
    assert params_got.node == "bridge_node"  # type: ignore[attr-defined]


class _FirstQueryUnanswered:
    """The recorder bus's Zenoh session, except that its first ``get`` reaches no queryable —
    what happens when the recorder starts while the publishers' cache declarations are still on
    their way (the race a recorder started with the robot runs)."""

    def __init__(self, session: object) -> None:
        self._session = session
        self.gets = 0

    def get(self, *args: object, **kwargs: object) -> object:
        self.gets += 1
        return [] if self.gets == 1 else self._session.get(*args, **kwargs)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self._session, name)


def test_a_latched_message_the_first_query_missed_is_fetched_when_its_publisher_is_found(
    pair, tmp_path, monkeypatch
):
    """The recorder's first query of the caches found nothing (the publishers' declarations had
    not arrived): each transient-local publisher discovery finds is asked again, and its message
    is recorded once — also after the window in which the recorder keeps asking."""
    robot, recorder_bus = pair
    tf, _ = _latched_messages()
    robot.publisher("/tf_static", TFMessage, LATCHED, node="control_node").publish(tf)
    session = _FirstQueryUnanswered(recorder_bus.zenoh.session)
    monkeypatch.setattr(recorder_bus.zenoh, "session", session)
    path: Path = tmp_path / "late_latched.mcap"
    with Recorder(recorder_bus, path, local=False, remote=True) as rec:
        assert wait_until(lambda: rec.stats().messages >= 1, timeout=8)
        time.sleep(LATE_HISTORY_WINDOW_S + 0.5)  # any further query of the cache: no copy
        stats = rec.stop()
    assert session.gets >= 2
    assert stats.messages == 1 and stats.lost == 0
    assert list(_rosbags_decoded(path)) == ["/tf_static"]


class _TokensLate:
    """The recorder's view of discovery with every publisher's token ``delay_s`` late (forever
    when None): what a live sample put while the sessions were still exchanging declarations
    meets when its token is handled after it (seen once in a fresh clone's ``make test``)."""

    def __init__(self, remote_info: Callable[[int], object], delay_s: float | None) -> None:
        self._remote_info = remote_info
        self._until = None if delay_s is None else time.monotonic() + delay_s
        self.unknown_answers = 0

    def __call__(self, gid: int) -> object:
        if self._until is None or time.monotonic() < self._until:
            self.unknown_answers += 1
            return None
        return self._remote_info(gid)


def _publish_live_while_tokens_are_late(
    robot: Bus,
    recorder_bus: Bus,
    path: Path,
    delay_s: float | None,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[Recorder, float, _TokensLate]:
    """Record a latched /tf_static and three /chatter messages published while the recorder's
    transport knows neither publisher (for ``delay_s``); returns the stopped recorder, how long
    it took to have all four (s) and the late view of discovery."""
    tf, _ = _latched_messages()
    tf_pub = robot.publisher("/tf_static", TFMessage, LATCHED, node="control_node")
    chatter = robot.publisher("/chatter", String, RELIABLE)
    with Recorder(recorder_bus, path, local=False, remote=True) as rec:
        assert wait_until(lambda: chatter.remote_matched and tf_pub.remote_matched)
        late = _TokensLate(recorder_bus.zenoh.remote_info, delay_s)
        monkeypatch.setattr(recorder_bus.zenoh, "remote_info", late)
        started = time.monotonic()
        tf_pub.publish(tf)
        for text in ("a", "b", "c"):
            chatter.publish(String(text))
        assert wait_until(lambda: rec.stats().messages == 4, timeout=5)
        took = time.monotonic() - started
        rec.stop()
    return rec, took, late


def test_a_live_sample_before_its_publishers_token_waits_for_the_token_and_its_qos(
    pair, tmp_path, monkeypatch
):
    """A latched topic whose message came live before its publisher's discovery token is still
    recorded as latched: the sample waits for the token (not for ever: below), in order."""
    robot, recorder_bus = pair
    path: Path = tmp_path / "late_token.mcap"
    rec, took, late = _publish_live_while_tokens_are_late(
        robot, recorder_bus, path, 0.4, monkeypatch
    )
    assert late.unknown_answers > 0  # the samples did come before the tokens
    topics = {t.name: t for t in bag_info(path).topics}
    assert topics["/tf_static"].latched and not topics["/chatter"].latched
    assert took >= 0.4
    decoded = _rosbags_decoded(path)
    assert [m.data for m in decoded["/chatter"]] == ["a", "b", "c"]  # type: ignore[attr-defined]
    assert rec.stats().lost == 0


def test_a_publisher_whose_token_never_comes_is_recorded_after_the_wait_without_qos(
    pair, tmp_path, monkeypatch
):
    """A payload whose publisher never announces itself is not held for ever: it is written
    after UNKNOWN_PUBLISHER_WAIT_S with no QoS, and later ones at once; stopping writes what is
    still held."""
    robot, recorder_bus = pair
    path: Path = tmp_path / "no_token.mcap"
    _rec, took, late = _publish_live_while_tokens_are_late(
        robot, recorder_bus, path, None, monkeypatch
    )
    assert UNKNOWN_PUBLISHER_WAIT_S <= took < UNKNOWN_PUBLISHER_WAIT_S + 2.0
    # /chatter's QoS is nowhere to be had. (/tf_static's cache may answer the recorder's late
    # query before its live sample is taken: its reply is transient-local whatever discovery
    # says, and the channel is then rightly latched.)
    assert not {t.name: t for t in bag_info(path).topics}["/chatter"].latched
    assert [m.data for m in _rosbags_decoded(path)["/chatter"]] == ["a", "b", "c"]  # type: ignore[attr-defined]

    # the publisher that never announced itself is not held again; one held at the stop is written
    path2: Path = tmp_path / "unannounced.mcap"
    once = robot.publisher("/chatter2", String, RELIABLE)
    at_stop = robot.publisher("/chatter3", String, RELIABLE)
    with Recorder(recorder_bus, path2, local=False, remote=True) as rec2:
        assert wait_until(lambda: once.remote_matched and at_stop.remote_matched)
        monkeypatch.setattr(recorder_bus.zenoh, "remote_info", _TokensLate(late, None))
        source = rec2._remote_source
        assert isinstance(source, recorder_module._ZenohRawSource)
        once.publish(String("waited"))
        assert wait_until(lambda: rec2.topic_record("/chatter2") is not None, timeout=5)
        # from now on a second wait would last a minute: the next one must not wait at all
        monkeypatch.setattr(recorder_module, "UNKNOWN_PUBLISHER_WAIT_S", 60.0)
        once.publish(String("at once"))
        assert wait_until(lambda: rec2.topic_record("/chatter2").count == 2, timeout=5)  # type: ignore[union-attr]
        at_stop.publish(String("held"))
        assert wait_until(lambda: bool(source._held))  # received, and waiting for a token
        assert rec2.topic_record("/chatter3") is None
        rec2.stop()
    decoded = _rosbags_decoded(path2)
    assert [m.data for m in decoded["/chatter2"]] == ["waited", "at once"]  # type: ignore[attr-defined]
    assert [m.data for m in decoded["/chatter3"]] == ["held"]  # type: ignore[attr-defined]


def test_latched_topics_of_the_recording_process_are_recorded(tmp_path):
    """``demo --record``: the recorder shares the stack's bus; latched topics published before it
    started are in the file too."""
    bus = Bus(name="stack")
    try:
        tf, params = _latched_messages()
        bus.publisher("/tf_static", TFMessage, LATCHED).publish(tf)
        bus.publisher("/hb50/parameters", ParameterList, LATCHED).publish(params)
        path: Path = tmp_path / "local.mcap"
        with Recorder(bus, path) as rec:
            assert wait_until(lambda: rec.stats().messages >= 2, timeout=5)
            stats = rec.stop()
        assert stats.messages == 2
        assert all(t.latched for t in bag_info(path).topics), bag_info(path).topics
        decoded = _rosbags_decoded(path)
        assert sorted(decoded) == ["/hb50/parameters", "/tf_static"]
        assert decoded["/hb50/parameters"][0].node == "bridge_node"  # type: ignore[attr-defined]
    finally:
        bus.close()


def test_gaps_are_counted_and_those_of_reliable_publishers_apart(pair, tmp_path):
    """Issue 20 item 20: a recorder must lose nothing of the reliable topics — so its count
    says which gaps were on reliable publishers (none may be) and which on best-effort ones."""
    robot, recorder_bus = pair
    reliable = robot.publisher("/t/reliable", String, RELIABLE)
    best = robot.publisher("/t/best", String, MAB_RT)
    with Recorder(recorder_bus, tmp_path / "gaps.mcap", local=False, remote=True) as rec:
        assert wait_until(lambda: reliable.remote_matched and best.remote_matched)

        def remote_known() -> bool:  # the publishers' discovery tokens reached the recorder
            transport = recorder_bus.zenoh
            assert transport is not None
            found = [
                e
                for e in transport.remote_endpoints(0.2)
                if e.kind == "publisher" and e.topic in (reliable.topic, best.topic)
            ]
            return len(found) == 2 and all(transport.remote_info(e.gid) for e in found)

        assert wait_until(remote_known)
        for pub in (reliable, best):
            pub.publish(String("a"))
        reliable.seq += 2  # two reliable messages published and never received
        best.seq += 5  # five best-effort ones
        for pub in (reliable, best):
            pub.publish(String("b"))
        assert wait_until(lambda: rec.stats().messages == 4)
        stats = rec.stop()
    assert (stats.lost, stats.lost_reliable) == (7, 2)
    # what each publisher sent from its first to its last message in the file, by sequence
    # numbers (``demo --record`` names the robot's frames missing from it)
    held = rec.topic_record("/t/best")
    assert held is not None and (held.count, held.sent) == (2, 7)
    held = rec.topic_record("/t/reliable")
    assert held is not None and (held.count, held.sent) == (2, 4)


def test_a_stamped_topics_record_gives_the_span_of_its_header_stamps(pair, tmp_path):
    """A simulated robot on a starved host ran at 0.64 of real time: its frames were sent over
    40.01 s by the wall clock and stamped over 25.5 s of its own time, and the summary gave the
    first alone as "the robot's data". The recorder reads each stamped message's header stamp
    (from the CDR bytes as received) and gives their span beside the publish times'; a topic
    without a header has none."""
    robot, recorder_bus = pair
    pub = robot.publisher("/hb50/bridge_data", BridgeData, RELIABLE)
    text = robot.publisher("/note", String, RELIABLE)
    with Recorder(recorder_bus, tmp_path / "stamps.mcap", local=False, remote=True) as rec:
        assert wait_until(lambda: pub.remote_matched and text.remote_matched)
        for i in range(50):  # frames stamped 0.64 ms of robot time apart, on a 25.5 s epoch
            stamp = Header.at_ns(25_500_000_000 + 640_000 * i)
            pub.publish(dataclasses.replace(bridge_data(i), header=stamp))
        text.publish(String("unstamped"))
        text.publish(String("twice"))
        assert wait_until(lambda: rec.stats().messages == 52)
        rec.stop()
    held = rec.topic_record("/hb50/bridge_data")
    assert held is not None
    first = 25_500_000_000
    assert (held.first_stamp_ns, held.last_stamp_ns) == (first, first + 640_000 * 49)
    assert held.stamp_span_s == pytest.approx(49 * 0.00064)
    note = rec.topic_record("/note")
    assert note is not None and note.stamp_span_s is None
    assert rec.busiest_stamped_topic() == "/hb50/bridge_data"


def test_the_busiest_stamped_topic_is_the_same_among_streams_of_one_rate(pair, tmp_path):
    """A robot's 500 Hz streams differ by a few messages from run to run; the summary named
    whichever had a few more. Among topics within 2 % of the most, the first by name is named."""
    robot, recorder_bus = pair
    pubs = {
        name: robot.publisher(name, BridgeData, RELIABLE)
        for name in ("/r/frames_b", "/r/frames_a", "/r/slow")
    }
    counts = {"/r/frames_b": 100, "/r/frames_a": 99, "/r/slow": 40}
    with Recorder(recorder_bus, tmp_path / "busiest.mcap", local=False, remote=True) as rec:
        assert wait_until(lambda: all(p.remote_matched for p in pubs.values()))
        for name, n in counts.items():
            for i in range(n):
                pubs[name].publish(bridge_data(i))
        assert wait_until(lambda: rec.stats().messages == sum(counts.values()))
        assert rec.busiest_stamped_topic() == "/r/frames_a"
        pubs["/r/frames_b"].publish(bridge_data(100))
        pubs["/r/frames_b"].publish(bridge_data(101))  # 102 against 99: 3 % more
        assert wait_until(lambda: rec.stats().messages == sum(counts.values()) + 2)
        assert rec.busiest_stamped_topic() == "/r/frames_b"
        rec.stop()
