"""The recorder on an in-process bus: every message, once, as its CDR; files others can decode."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
from rosbags.rosbag2 import Reader
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

from jointbus.bus import MAB_RT, Bus
from jointbus.messages.std_msgs import String
from jointbus.robots.hb50.messages.bridge_data import BridgeData
from jointbus.robots.hb50.messages.joint_command import JointCommand
from jointbus.tools.errors import RecorderError
from jointbus.tools.recorder import Recorder
from support.tools import bridge_data, joint_command, wait_until


@pytest.fixture
def bus():
    b = Bus(name="test-recorder")
    yield b
    b.close()


def read_all(path: Path) -> list[tuple[str, str, bytes, int]]:
    with path.open("rb") as f:
        return [
            (ch.topic, schema.name, m.data, m.log_time)
            for schema, ch, m in make_reader(f).iter_messages(log_time_order=True)
        ]


def _recorder_subscribes(bus: Bus, topic: str) -> bool:
    return any(
        t.name == topic and any(s.node == "recorder" for s in t.subscribers) for t in bus.topics()
    )


def test_records_every_message_of_every_topic_including_later_ones(bus: Bus, tmp_path: Path):
    path = tmp_path / "run.mcap"
    data_pub = bus.publisher("/hb50/bridge_data", BridgeData, MAB_RT)
    sent_data = [bridge_data(i) for i in range(300)]
    sent_cmd = [joint_command(i) for i in range(40)]
    with Recorder(bus, path, discovery_interval=0.01):
        for msg in sent_data[:100]:
            data_pub.publish(msg)
        cmd_pub = bus.publisher("/hb50/joint_command", JointCommand)  # appears after the start
        assert wait_until(lambda: _recorder_subscribes(bus, "/hb50/joint_command"))
        for msg in sent_data[100:]:
            data_pub.publish(msg)
        for msg in sent_cmd:
            cmd_pub.publish(msg)
    records = read_all(path)
    data = [r for r in records if r[0] == "/hb50/bridge_data"]
    cmds = [r for r in records if r[0] == "/hb50/joint_command"]
    assert [r[2] for r in data] == [m.to_cdr() for m in sent_data]
    assert [r[2] for r in cmds] == [m.to_cdr() for m in sent_cmd]
    assert {r[1] for r in data} == {BridgeData.TYPE_NAME}
    assert {r[1] for r in cmds} == {JointCommand.TYPE_NAME}
    # log time is the wall clock of reception
    assert abs(records[0][3] - time.time_ns()) < 60e9


def test_a_burst_larger_than_any_queue_is_recorded_whole(bus: Bus, tmp_path: Path):
    path = tmp_path / "burst.mcap"
    pub = bus.publisher("/burst", String, MAB_RT)  # best effort, depth 1
    with Recorder(bus, path, chunk_size=4096) as rec:
        for i in range(20_000):
            pub.publish(String(f"{i}"))
        stats = rec.stop()
    assert stats.messages == 20_000
    assert [String.from_cdr(r[2]).data for r in read_all(path)] == [f"{i}" for i in range(20_000)]


def test_only_the_named_topics_are_recorded(bus: Bus, tmp_path: Path):
    path = tmp_path / "some.mcap"
    a = bus.publisher("/a", String)
    b = bus.publisher("/b", String)
    with Recorder(bus, path, ["/b"]):
        a.publish(String("a"))
        b.publish(String("b"))
    assert [(r[0], String.from_cdr(r[2]).data) for r in read_all(path)] == [("/b", "b")]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # mcap's reader helpers warn on import
def test_files_decode_with_mcap_ros2_and_rosbags(bus: Bus, tmp_path: Path):
    path = tmp_path / "interop.mcap"
    data_pub = bus.publisher("/hb50/bridge_data", BridgeData)
    cmd_pub = bus.publisher("/hb50/joint_command", JointCommand)
    text_pub = bus.publisher("/status_text", String)
    with Recorder(bus, path):
        for i in range(50):
            data_pub.publish(bridge_data(i))
            cmd_pub.publish(joint_command(i))
            text_pub.publish(String(f"t{i}"))

    # mcap's own reader with its ROS 2 decoder: decoded from the ros2msg schema in the file
    from mcap_ros2.reader import read_ros2_messages  # warns (deprecation) on import

    decoded = list(read_ros2_messages(str(path)))
    assert len(decoded) == 150
    positions = [
        list(m.ros_msg.joint_position) for m in decoded if m.channel.topic == "/hb50/bridge_data"
    ]
    assert positions == [list(bridge_data(i).joint_position) for i in range(50)]
    texts = [m.ros_msg.data for m in decoded if m.channel.topic == "/status_text"]
    assert texts == [f"t{i}" for i in range(50)]
    with path.open("rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        n = sum(1 for _ in reader.iter_decoded_messages())
    assert n == 150

    # rosbags: types registered from the definitions stored in the file, every message decoded
    store = get_typestore(Stores.ROS2_HUMBLE)
    with Reader(path) as reader:
        for conn in reader.connections:
            if conn.msgtype.startswith("hb50_commons/"):
                store.register(get_types_from_msg(conn.msgdef.data, conn.msgtype))
        got: dict[str, list[object]] = {}
        for conn, _t, raw in reader.messages():
            got.setdefault(conn.topic, []).append(store.deserialize_cdr(raw, conn.msgtype))
    assert [list(m.t_pos) for m in got["/hb50/joint_command"]] == [
        list(joint_command(i).t_pos) for i in range(50)
    ]
    assert [m.data for m in got["/status_text"]] == [f"t{i}" for i in range(50)]
    assert len(got["/hb50/bridge_data"]) == 50


def test_stop_is_idempotent_and_a_recorder_cannot_restart(bus: Bus, tmp_path: Path):
    rec = Recorder(bus, tmp_path / "x.mcap").start()
    first = rec.stop()
    assert rec.stop().messages == first.messages == 0
    assert not rec.running
    with pytest.raises(RecorderError, match="already started"):
        rec.start()


def test_bad_options_are_refused_before_anything_is_created(bus: Bus, tmp_path: Path):
    with pytest.raises(RecorderError, match="needs a source"):
        Recorder(bus, tmp_path / "a.mcap", local=False, remote=False)
    with pytest.raises(RecorderError, match="Zenoh attached"):
        Recorder(bus, tmp_path / "a.mcap", remote=True)
    with pytest.raises(RecorderError, match="flush_interval"):
        Recorder(bus, tmp_path / "a.mcap", flush_interval=0)
    assert not (tmp_path / "a.mcap").exists()
    with pytest.raises(RecorderError, match="cannot create"):
        Recorder(bus, tmp_path / "missing-dir" / "a.mcap").start()


def test_stats_count_the_topics_and_messages_in_the_file(bus: Bus, tmp_path: Path):
    out = tmp_path / "counts.mcap"
    bus.subscribe("/only_subscribed", String, lambda _m: None, MAB_RT)  # no message ever
    pub = bus.publisher("/talked", String, MAB_RT)
    with Recorder(bus, out, discovery_interval=0.01) as rec:
        assert wait_until(lambda: "/only_subscribed" in {t.name for t in bus.topics()})
        time.sleep(0.1)  # several scans: both topics are seen
        for i in range(25):
            pub.publish(String(str(i)))
        assert wait_until(lambda: rec.stats().messages == 25)
    stats = rec.stats()
    with out.open("rb") as f:
        summary = make_reader(f).get_summary()
    assert summary is not None and summary.statistics is not None
    assert stats.topics == len(summary.channels) == 1
    assert stats.messages == summary.statistics.message_count == 25


def test_each_topics_record_is_its_count_and_first_and_last_log_and_publish_times(
    bus: Bus, tmp_path: Path
):
    """``jointbus demo --record`` tells the robot's data (``bridge_data``) apart from the file's
    span, which also holds the nodes' start-up before it: a file of 9.72 s held 6.0 s of it (a new
    user's trial, 2026-12-05). The recorder gives each topic's span as the file holds it."""
    out = tmp_path / "spans.mcap"
    early = bus.publisher("/early", String, MAB_RT)
    data_pub = bus.publisher("/hb50/bridge_data", BridgeData, MAB_RT)
    with Recorder(bus, out, discovery_interval=0.01) as rec:
        assert wait_until(lambda: _recorder_subscribes(bus, "/hb50/bridge_data"))
        assert rec.topic_record("/hb50/bridge_data") is None  # nothing yet
        early.publish(String("before the robot"))
        time.sleep(0.05)
        for i in range(20):
            data_pub.publish(bridge_data(i))
            time.sleep(0.002)
        assert wait_until(lambda: rec.stats().messages == 21)
        stats = rec.stop()
    first_last: dict[str, tuple[int, int]] = {}
    for topic, _type, _data, log_ns in read_all(out):
        first, _ = first_last.get(topic, (log_ns, log_ns))
        first_last[topic] = (first, log_ns)
    held = rec.topic_record("/hb50/bridge_data")
    assert held is not None and held.count == 20
    assert (held.first_ns, held.last_ns) == first_last["/hb50/bridge_data"]
    # in-process messages: sent as received (a remote one's publish time is its sender's,
    # tests/cli/test_cli_demo.py reads it back)
    assert (held.first_pub_ns, held.last_pub_ns) == first_last["/hb50/bridge_data"]
    assert held.sent is None  # in-process: no sequence numbers to count what was sent
    early_held = rec.topic_record("/early")
    assert (
        early_held is not None and (early_held.first_ns, early_held.last_ns) == first_last["/early"]
    )
    assert rec.topic_record("/never") is None
    # the file's span reaches back before the robot's data
    assert stats.first_ns == first_last["/early"][0] < first_last["/hb50/bridge_data"][0]
    assert stats.last_ns == first_last["/hb50/bridge_data"][1]
