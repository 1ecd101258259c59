"""Replay: every message back onto the bus, in order, not before its recorded time."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

from jointbus.bus import Bus
from jointbus.codec.wire import Int64
from jointbus.messages.base import Message
from jointbus.messages.sensor_msgs import JointState
from jointbus.messages.std_msgs import String
from jointbus.robots.hb50.messages.bridge_data import BridgeData
from jointbus.robots.hb50.messages.joint_command import JointCommand
from jointbus.tools.bag_reader import open_bag
from jointbus.tools.errors import PlaybackError
from jointbus.tools.player import LivePublisherError, Player, is_command_topic
from support.rosbag2_fixtures import write_rosbag2
from support.tools import bridge_data, joint_command, wait_until, write_mcap

T0 = 1_800_000_000_000_000_000


@dataclass(frozen=True, slots=True)
class Unknown(Message):
    """A type the default registry does not know."""

    TYPE_NAME: ClassVar[str] = "jointbus_test/msg/Unknown"
    value: Int64 = 0


@pytest.fixture
def bus():
    b = Bus(name="test-player")
    yield b
    b.close()


def collect(bus: Bus, topic: str, cls: type[Message]) -> tuple[list[object], list[float]]:
    got: list[object] = []
    times: list[float] = []

    def on_msg(msg: object) -> None:
        times.append(time.monotonic())
        got.append(msg)

    bus.subscribe(topic, cls, on_msg, realtime=True)
    return got, times


def test_every_message_is_republished_in_order_with_its_content(bus: Bus, tmp_path: Path):
    entries = [("/hb50/bridge_data", bridge_data(i), T0 + i * 2_000_000) for i in range(50)]
    entries += [
        ("/hb50/joint_command", joint_command(i), T0 + i * 4_000_000 + 1) for i in range(25)
    ]
    path = write_mcap(tmp_path / "p.mcap", entries)
    data, _ = collect(bus, "/hb50/bridge_data", BridgeData)
    cmds, _ = collect(bus, "/hb50/joint_command", JointCommand)
    with open_bag(path) as bag:
        stats = Player(bus, bag, include_commands=True).run()
    assert stats.published == 75 and stats.skipped == 0
    assert [m.to_cdr() for m in data] == [bridge_data(i).to_cdr() for i in range(50)]
    assert cmds == [joint_command(i) for i in range(25)]


def test_messages_keep_their_recorded_spacing_scaled_by_rate(bus: Bus, tmp_path: Path):
    entries = [("/t", String(str(i)), T0 + i * 150_000_000) for i in range(3)]  # 0, 0.15, 0.3 s
    path = write_mcap(tmp_path / "timing.mcap", entries)
    _, times = collect(bus, "/t", String)
    # The player keeps the recording's schedule from its start (as rosbag play does): a first
    # message published late on a loaded host does not shift the others, none is early.
    with open_bag(path) as bag:
        start = time.monotonic()
        Player(bus, bag).run()
        assert times[1] - start >= 0.15 - 0.002 and times[2] - start >= 0.3 - 0.002
        times.clear()
        start = time.monotonic()
        Player(bus, bag, rate=2.0).run()
        assert times[1] - start >= 0.075 - 0.002 and times[2] - start >= 0.15 - 0.002


def test_loop_starts_over_until_stopped(bus: Bus, tmp_path: Path):
    path = write_mcap(tmp_path / "loop.mcap", [("/t", String(str(i)), T0 + i) for i in range(5)])
    got, _ = collect(bus, "/t", String)
    with open_bag(path) as bag:
        player = Player(bus, bag, loop=True)

        def on_progress(p) -> None:
            if p.loop == 2 and p.published == 13:
                player.stop()

        stats = player.run(on_progress)
    assert [m.data for m in got] == ["0", "1", "2", "3", "4"] * 2 + ["0", "1", "2"]
    assert stats.loops == 3


def test_topics_filter_and_unknown_topics(bus: Bus, tmp_path: Path):
    entries = [("/a", String("a"), T0), ("/b", String("b"), T0 + 1)]
    path = write_mcap(tmp_path / "two.mcap", entries)
    a, _ = collect(bus, "/a", String)
    b, _ = collect(bus, "/b", String)
    with open_bag(path) as bag:
        Player(bus, bag, topics=["/b"]).run()
        with pytest.raises(PlaybackError, match=r"/nope not in .*topics: /a, /b"):
            Player(bus, bag, topics=["/nope"])
    assert (a, [m.data for m in b]) == ([], ["b"])


def test_unknown_types_are_skipped_and_the_rest_plays(bus: Bus, tmp_path: Path):
    path = write_mcap(
        tmp_path / "mixed.mcap",
        [("/u", Unknown(1), T0), ("/s", String("s"), T0 + 1), ("/u", Unknown(2), T0 + 2)],
    )
    got, _ = collect(bus, "/s", String)
    with open_bag(path) as bag:
        stats = Player(bus, bag, include_commands=True).run()
    assert (stats.published, stats.skipped) == (1, 2)
    assert [m.data for m in got] == ["s"]


@pytest.mark.parametrize("rate", [0, -1.0, float("nan"), True])
def test_bad_rate_is_refused(bus: Bus, tmp_path: Path, rate: float):
    path = write_mcap(tmp_path / "r.mcap", [("/s", String("s"), T0)])
    with open_bag(path) as bag, pytest.raises(PlaybackError, match="rate must be"):
        Player(bus, bag, rate=rate)


@pytest.mark.parametrize("storage", ["sqlite3", "mcap"])
def test_rosbag2_directory_from_another_tool_replays_onto_the_bus(
    bus: Bus, tmp_path: Path, storage: str
):
    path = write_rosbag2(tmp_path / f"bag_{storage}", storage)
    texts, _ = collect(bus, "/chatter", String)
    states, _ = collect(bus, "/joint_states", JointState)
    with open_bag(path) as bag:
        stats = Player(bus, bag, rate=10.0).run()
    assert stats.published == 30
    assert [m.data for m in texts] == [f"hello {i}" for i in range(20)]
    assert [list(s.position) for s in states] == [[0.1 * i, -0.1 * i] for i in range(10)]


def test_stop_from_another_thread_ends_a_long_wait(bus: Bus, tmp_path: Path):
    entries = [("/s", String("a"), T0), ("/s", String("b"), T0 + 60 * 10**9)]
    path = write_mcap(tmp_path / "gap.mcap", entries)
    got, _ = collect(bus, "/s", String)
    with open_bag(path) as bag:
        player = Player(bus, bag)
        runner = threading.Thread(target=player.run)
        runner.start()
        assert wait_until(lambda: len(got) == 1)
        player.stop()
        runner.join(timeout=5)
    assert not runner.is_alive()
    assert [m.data for m in got] == ["a"]


@pytest.mark.parametrize(
    ("topic", "type_name"),
    [
        ("/hb50/joint_command", "hb50_commons/msg/JointCommand"),
        ("/hb50/control_command", "std_msgs/msg/String"),
        ("/hb50/hardware_command", "std_msgs/msg/String"),
        ("/hb50/velocity_command", "geometry_msgs/msg/Twist"),
        ("/arm6/joints_command", "jointbus_msgs/msg/Joints"),
        ("/arm6/joint_command", "hb50_commons/msg/JointCommand"),
        ("/arm6/actarray/multi_position", "jointbus_msgs/msg/ActuatorMultiPositionCommand"),
        ("/arm6/actarray/home", "jointbus_msgs/msg/ActuatorHomeCommand"),
        ("/cmd_vel", "geometry_msgs/msg/Twist"),
        ("/my/target", "jointbus_msgs/msg/ActuatorPositionCommand"),
    ],
)
def test_command_topics_are_recognised(topic: str, type_name: str):
    assert is_command_topic(topic, type_name)


@pytest.mark.parametrize(
    ("topic", "type_name"),
    [
        ("/hb50/bridge_data", "hb50_commons/msg/BridgeData"),
        ("/hb50/status", "hb50_commons/msg/Status"),
        ("/tf_static", "tf2_msgs/msg/TFMessage"),
        ("/arm6/actarray/data", "jointbus_msgs/msg/ActuatorArrayData"),
        ("/arm6/joint_state", "sensor_msgs/msg/JointState"),
        ("/chatter", "std_msgs/msg/String"),
    ],
)
def test_feedback_topics_are_not_commands(topic: str, type_name: str):
    assert not is_command_topic(topic, type_name)


def test_command_topics_are_not_played_unless_included(bus: Bus, tmp_path: Path):
    entries = [("/hb50/bridge_data", bridge_data(i), T0 + i * 1000) for i in range(5)]
    entries += [("/hb50/joint_command", joint_command(i), T0 + i * 1000 + 1) for i in range(5)]
    path = write_mcap(tmp_path / "c.mcap", entries)
    data, _ = collect(bus, "/hb50/bridge_data", BridgeData)
    cmds, _ = collect(bus, "/hb50/joint_command", JointCommand)
    with open_bag(path) as bag:
        player = Player(bus, bag)
        assert player.skipped_commands == ("/hb50/joint_command",)
        assert player.topics == {"/hb50/bridge_data"}
        stats = player.run()
        assert stats.published == 5 and len(data) == 5 and cmds == []
        assert Player(bus, bag, include_commands=True).run().published == 10
    assert len(cmds) == 5


def test_a_topic_with_a_live_publisher_is_refused_whole_unless_forced(bus: Bus, tmp_path: Path):
    entries = [("/hb50/bridge_data", bridge_data(i), T0 + i * 1000) for i in range(5)]
    entries += [("/chatter", String(str(i)), T0 + i * 1000 + 1) for i in range(5)]
    path = write_mcap(tmp_path / "l.mcap", entries)
    bus.publisher("/hb50/bridge_data", BridgeData, node="bridge_node")
    data, _ = collect(bus, "/hb50/bridge_data", BridgeData)
    chatter, _ = collect(bus, "/chatter", String)
    with open_bag(path) as bag:
        with pytest.raises(
            LivePublisherError, match=r"/hb50/bridge_data \(published by bridge_node\)"
        ):
            Player(bus, bag).run()
        assert data == [] and chatter == []  # nothing published, not even the free topic
        assert Player(bus, bag, force=True).run().published == 10
    assert len(data) == 5


def test_a_topic_recorded_latched_is_offered_latched_again(bus: Bus, tmp_path: Path):
    """A user's trial (2026-12-06): replayed, ``/tf_static`` and the parameters were volatile,
    so a tool that joined after their one message (``topic echo /tf_static --once``, the
    monitor, Foxglove) never got them. The bag records which topics were offered latched
    (rosbag2's ``offered_qos_profiles``, as our recorder writes it); the player offers those
    latched again, and a subscriber that joins later still gets their message."""
    from jointbus.bus import LATCHED, RELIABLE
    from jointbus.tools.bag_qos import offered_qos_metadata
    from jointbus.tools.mcap_writer import McapChunkWriter

    path = tmp_path / "latched.mcap"
    with path.open("wb") as f:
        writer = McapChunkWriter(f, chunk_size=4096)
        schema = writer.add_schema(String.TYPE_NAME, String.msgdef().encode())
        static = writer.add_channel("/tf_like", schema, metadata=offered_qos_metadata(LATCHED))
        feed = writer.add_channel("/feed", schema, metadata=offered_qos_metadata(RELIABLE))
        writer.add_message(static, T0, T0, 1, String("the frames").to_cdr())
        for i in range(40):  # 0.8 s of a 50 Hz feed after it
            t = T0 + (i + 1) * 20_000_000
            writer.add_message(feed, t, t, i + 2, String(f"tick {i}").to_cdr())
        writer.finish()
    late: list[String] = []
    played: list[int] = []
    with open_bag(path) as bag:
        player = Player(bus, bag)
        runner = threading.Thread(target=player.run, args=(lambda p: played.append(p.published),))
        runner.start()
        try:
            assert wait_until(lambda: len(played) >= 10, 5.0)
            (static_pub,) = bus.local_publishers("/tf_like")
            (feed_pub,) = bus.local_publishers("/feed")
            assert static_pub.qos.transient_local and not feed_pub.qos.transient_local
            bus.subscribe("/tf_like", String, late.append, LATCHED, realtime=True)
        finally:
            runner.join(10.0)
    assert late == [String("the frames")]  # joined after it was played, and got it


def test_a_replay_that_fell_behind_says_how_far(bus: Bus, tmp_path: Path):
    """A user's trial (2026-12-06): a replay on a busy host stalled for 0.94 s, then caught up in
    a burst, and ``play`` said only "played 53123 messages in 27.3 s". The stats now count the
    messages published more than 50 ms after their time, and the most any was."""
    entries = [("/feed", String(f"m{i}"), T0 + i * 10_000_000) for i in range(40)]
    path = write_mcap(tmp_path / "late.mcap", entries)
    stall_s = 0.3

    def slow(msg: String) -> None:
        if msg.data == "m10":
            time.sleep(stall_s)  # a realtime callback runs on the player's thread: it waits

    bus.subscribe("/feed", String, slow, realtime=True)
    with open_bag(path) as bag:
        stats = Player(bus, bag).run()
    assert stats.published == 40
    # m11 was due 10 ms after m10 and went out ≈ 0.29 s late; the burst after it caught up
    assert stats.late >= 5
    assert stall_s - 0.05 <= stats.late_max_s <= stall_s + 0.5
