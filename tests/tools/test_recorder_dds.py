"""``jointbus record`` on DDS: the recorder's remote source is the DDS transport's raw tap — every
topic another participant publishes in the domain, the CDR stored as received, latched topics'
history included — and the file reads back in rosbags."""

from __future__ import annotations

import time
from pathlib import Path

from rosbags.highlevel import AnyReader

from jointbus.bus import LATCHED, RELIABLE, Bus, DdsConfig
from jointbus.messages.std_msgs import String
from jointbus.tools.recorder import Recorder
from support.dds_peer import free_domain, wait_until


def test_a_recorder_on_dds_stores_remote_topics_and_latched_history(tmp_path: Path) -> None:
    domain = free_domain()
    path = tmp_path / "dds.mcap"
    with Bus(name="robot", dds=DdsConfig(domain_id=domain)) as robot:
        latched = robot.publisher("/robot_description", String, LATCHED, node="robot")
        latched.publish(String("<robot name='x'/>"))  # before the recorder exists
        chatter = robot.publisher("/chatter", String, RELIABLE, node="robot")
        with Bus(name="recorder", dds=DdsConfig(domain_id=domain)) as bus:
            recorder = Recorder(bus, path, local=False, remote=True).start()
            assert wait_until(lambda: chatter.remote_matched, timeout=10.0)
            for i in range(20):
                chatter.publish(String(f"line {i}"))
                time.sleep(0.01)
            assert wait_until(lambda: recorder.stats().messages >= 21, timeout=10.0)
            stats = recorder.stop()
    assert stats.messages >= 21
    with AnyReader([path]) as reader:
        seen: dict[str, list[str]] = {}
        for connection, _t, raw in reader.messages():
            msg = reader.deserialize(raw, connection.msgtype)
            seen.setdefault(connection.topic, []).append(msg.data)
    assert seen["/robot_description"] == ["<robot name='x'/>"]
    assert seen["/chatter"] == [f"line {i}" for i in range(20)]
