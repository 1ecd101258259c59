"""``jointbus info``: the ros2-bag-info summary, and clear errors."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from support.cli_tools import tools_app
from support.rosbag2_fixtures import write_rosbag2


def test_info_lists_topics_types_counts_and_duration(tmp_path: Path):
    path = write_rosbag2(tmp_path / "bag", "sqlite3")
    result = CliRunner().invoke(tools_app(), ["info", str(path)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Storage id:        sqlite3" in out
    assert "Duration:          0.190s" in out
    assert "Messages:          30" in out
    assert "Topic: /chatter      | Type: std_msgs/msg/String" in out
    assert "Count: 20" in out and "Count: 10" in out


def test_info_on_a_missing_file_fails_with_a_message(tmp_path: Path):
    result = CliRunner().invoke(tools_app(), ["info", str(tmp_path / "none.mcap")])
    assert result.exit_code == 1
    assert "no such file" in result.output


def test_a_latched_topic_shows_latched_not_a_rate(tmp_path: Path):
    """``/hb50/parameters`` (transient-local) published twice in a recording read ``Rate: 0.34
    Hz``: a count over the bag's duration, for a topic published on change. The recorder stores
    each topic's offered QoS (rosbag2's ``offered_qos_profiles``) and ``info`` shows ``latched``;
    a topic published at a rate keeps its rate."""
    import time

    from jointbus.bus import LATCHED, RELIABLE, Bus
    from jointbus.messages.std_msgs import String
    from jointbus.runtime.parameter_messages import ParameterList
    from jointbus.tools.bag_info import bag_info
    from jointbus.tools.recorder import Recorder

    path = tmp_path / "latched.mcap"
    with Bus(name="stack") as bus:
        params = bus.publisher("/hb50/parameters", ParameterList, LATCHED)
        chatter = bus.publisher("/chatter", String, RELIABLE)
        params.publish(ParameterList(node="bridge_node"))
        with Recorder(bus, path) as rec:
            for i in range(10):
                chatter.publish(String(f"tick {i}"))
                time.sleep(0.05)
            params.publish(ParameterList(node="control_node"))
            stats = rec.stop()
    assert stats.messages == 12
    topics = {t.name: t for t in bag_info(path).topics}
    assert topics["/hb50/parameters"].latched and topics["/hb50/parameters"].rate_hz is None
    assert topics["/hb50/parameters"].count == 2
    assert not topics["/chatter"].latched and topics["/chatter"].rate_hz
    result = CliRunner().invoke(tools_app(), ["info", str(path)])
    assert result.exit_code == 0, result.output
    lines = {line.split("Topic: ")[1].split()[0]: line for line in result.output.splitlines()
             if "Topic: " in line}
    assert "Rate:      latched |" in lines["/hb50/parameters"], lines
    assert "Hz" not in lines["/hb50/parameters"]
    assert re.search(r"Rate: +\d+\.\d\d Hz \|", lines["/chatter"]), lines
