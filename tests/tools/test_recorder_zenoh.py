"""The recorder's remote source: payloads from other Zenoh sessions stored exactly as received."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcap.reader import make_reader
from tools_support import bridge_data, free_port, wait_until

from jointbus.bus import RELIABLE, Bus, ZenohConfig
from jointbus.messages.hb50.bridge_data import BridgeData
from jointbus.messages.std_msgs import String
from jointbus.tools.recorder import Recorder


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
