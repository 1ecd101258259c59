"""``jointbus info``: the ros2-bag-info summary, and clear errors."""

from __future__ import annotations

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
