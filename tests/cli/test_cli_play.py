"""``jointbus play``: another process's subscriber receives the bag over Zenoh."""

from __future__ import annotations

import sys
from pathlib import Path

from cli_tools_support import free_port, tools_app
from typer.testing import CliRunner

from jointbus.bus import Bus, ZenohConfig
from jointbus.messages.std_msgs import String

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from tools_support import wait_until, write_mcap

T0 = 1_800_000_000_000_000_000


def test_play_publishes_every_message_to_a_remote_subscriber(tmp_path: Path):
    entries = [("/chatter", String(str(i)), T0 + i * 10**7) for i in range(30)]
    bag = write_mcap(tmp_path / "p.mcap", entries)
    port = free_port()
    listener = Bus(zenoh=ZenohConfig.loopback(port), name="listener")
    try:
        got: list[str] = []
        listener.subscribe("/chatter", String, lambda m: got.append(m.data), realtime=True)
        args = [
            "play",
            str(bag),
            "--rate",
            "5",
            "--connect",
            f"tcp/127.0.0.1:{port}",
            "--listen",
            "tcp/127.0.0.1:0",
            "--settle",
            "1.0",
            "--quiet",
        ]
        result = CliRunner().invoke(tools_app(), args)
        assert result.exit_code == 0, result.output
        assert "played 30 messages" in result.output
        assert wait_until(lambda: len(got) == 30, timeout=5)
        assert got == [str(i) for i in range(30)]
    finally:
        listener.close()


def test_play_rejects_a_bad_rate(tmp_path: Path):
    bag = write_mcap(tmp_path / "p.mcap", [("/chatter", String("x"), T0)])
    args = ["play", str(bag), "--rate", "0", "--listen", "tcp/127.0.0.1:0", "--quiet"]
    result = CliRunner().invoke(tools_app(), args)
    assert result.exit_code == 1
    assert "rate must be" in result.output
