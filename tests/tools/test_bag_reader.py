"""Bags written by other tools: rosbag2 directories (sqlite3 and mcap storage) through rosbags."""

from __future__ import annotations

from pathlib import Path

import pytest

from jointbus.messages.sensor_msgs import JointState
from jointbus.messages.std_msgs import String
from jointbus.tools.bag_info import bag_info, format_bag_info
from jointbus.tools.bag_reader import open_bag
from jointbus.tools.errors import BagError
from support.rosbag2_fixtures import JOINT_NAMES, START_NS, STATE_PERIOD_NS, write_rosbag2


@pytest.mark.parametrize("storage", ["sqlite3", "mcap"])
def test_rosbag2_directory_is_inspected(tmp_path: Path, storage: str):
    path = write_rosbag2(tmp_path / f"bag_{storage}", storage)
    info = bag_info(path)
    assert info.storage == storage
    assert info.message_count == 30
    assert [(t.name, t.type_name, t.count) for t in info.topics] == [
        ("/chatter", "std_msgs/msg/String", 20),
        ("/joint_states", "sensor_msgs/msg/JointState", 10),
    ]
    assert info.start_ns == START_NS
    assert info.end_ns == START_NS + 19 * 10_000_000
    assert not info.truncated
    text = format_bag_info(info)
    assert "Topic: /chatter" in text and "Count: 20" in text
    assert f"Storage id:        {storage}" in text
    # 20 messages 10 ms apart: 19 intervals over 0.19 s, 100 Hz (not 20 / 0.19 = 105 Hz)
    assert info.topics[0].rate_hz == pytest.approx(19 / 0.19)


@pytest.mark.parametrize("storage", ["sqlite3", "mcap"])
def test_rosbag2_messages_decode_with_our_classes_in_time_order(tmp_path: Path, storage: str):
    path = write_rosbag2(tmp_path / f"bag_{storage}", storage)
    with open_bag(path) as bag:
        records = list(bag.messages())
        states = [JointState.from_cdr(r.data) for r in bag.messages(["/joint_states"])]
    assert [r.log_time_ns for r in records] == sorted(r.log_time_ns for r in records)
    texts = [String.from_cdr(r.data).data for r in records if r.topic == "/chatter"]
    assert texts == [f"hello {i}" for i in range(20)]
    assert [list(s.name) for s in states] == [JOINT_NAMES] * 10
    assert [list(s.position) for s in states] == [[0.1 * i, -0.1 * i] for i in range(10)]
    assert [s.header.stamp.to_ns() for s in states] == [
        START_NS + i * STATE_PERIOD_NS for i in range(10)
    ]


def test_unreadable_paths_give_a_bag_error_naming_the_path(tmp_path: Path):
    with pytest.raises(BagError, match="no such file"):
        open_bag(tmp_path / "nothing.mcap")
    junk = tmp_path / "junk.mcap"
    junk.write_bytes(b"not an mcap file")
    with pytest.raises(BagError, match=r"junk\.mcap.*not an MCAP file"):
        open_bag(junk)
    with pytest.raises(BagError, match="rosbags cannot open it"):
        open_bag(tmp_path)  # a directory without metadata.yaml
