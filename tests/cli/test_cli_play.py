"""``jointbus play``: another process's subscriber receives the bag over Zenoh."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from pathlib import Path

from typer.testing import CliRunner

from jointbus.bus import Bus, ZenohConfig
from jointbus.messages.std_msgs import String
from jointbus.robots.hb50.messages.bridge_data import BridgeData
from jointbus.robots.hb50.messages.joint_command import JointCommand
from support.cli_tools import free_port, tools_app
from support.tools import bridge_data, joint_command, wait_until, write_mcap

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


def test_play_rejects_a_bad_rate_as_a_usage_error(tmp_path: Path):
    """An option value out of its range is a usage error (exit 2), as ``topic pub --rate -5``
    is: ``play --rate 0`` exited 1 (a new user's trial, 2026-12-07)."""
    bag = write_mcap(tmp_path / "p.mcap", [("/chatter", String("x"), T0)])
    for rate in ("0", "-1"):
        args = ["play", str(bag), "--rate", rate, "--listen", "tcp/127.0.0.1:0", "--quiet"]
        result = CliRunner().invoke(tools_app(), args)
        assert result.exit_code == 2, result.output
        assert "Invalid value for '--rate'" in result.output, result.output


def _robot_bag(tmp_path: Path) -> Path:
    """A recording of a running robot: its feedback and the control node's commands."""
    entries: list[tuple[str, object, int]] = []
    for i in range(20):
        entries.append(("/hb50/bridge_data", bridge_data(i), T0 + i * 10**7))
        entries.append(("/hb50/joint_command", joint_command(i), T0 + i * 10**7 + 1))
    entries.append(("/hb50/control_command", String("sit_down"), T0 + 5 * 10**7))
    return write_mcap(tmp_path / "robot.mcap", entries)


def _play_args(bag: Path, port: int, *extra: str) -> list[str]:
    return [
        "play", str(bag), "--rate", "5", "--connect", f"tcp/127.0.0.1:{port}",
        "--listen", "tcp/127.0.0.1:0", "--settle", "1.0", "--quiet", *extra,
    ]  # fmt: skip


def test_play_onto_a_live_robot_sends_no_commands_by_default(tmp_path: Path):
    """The robot (a remote bus subscribing to its command topics) receives no recorded command;
    the skipped topics are named; --include-commands sends them."""
    bag = _robot_bag(tmp_path)
    port = free_port()
    robot = Bus(zenoh=ZenohConfig.loopback(port), name="robot")
    try:
        commands: list[object] = []
        data: list[object] = []
        robot.subscribe("/hb50/joint_command", JointCommand, commands.append, realtime=True)
        robot.subscribe("/hb50/control_command", String, commands.append, realtime=True)
        robot.subscribe("/hb50/bridge_data", BridgeData, data.append, realtime=True)
        result = CliRunner().invoke(tools_app(), _play_args(bag, port))
        assert result.exit_code == 0, result.output
        assert "not publishing 2 command topic(s)" in result.output
        assert "/hb50/control_command, /hb50/joint_command" in result.output
        assert "--include-commands" in result.output
        assert "played 20 messages" in result.output
        assert wait_until(lambda: len(data) == 20, timeout=5)
        time.sleep(0.3)
        assert commands == []

        result = CliRunner().invoke(tools_app(), _play_args(bag, port, "--include-commands"))
        assert result.exit_code == 0, result.output
        assert "played 41 messages" in result.output
        assert wait_until(lambda: len(commands) == 21, timeout=5)
        assert String("sit_down") in commands
    finally:
        robot.close()


def test_play_refuses_a_topic_a_live_node_publishes_unless_forced(tmp_path: Path):
    """A running bridge publishes /hb50/bridge_data: play refuses before publishing anything,
    naming the topic and the node; --force publishes."""
    bag = _robot_bag(tmp_path)
    port = free_port()
    robot = Bus(zenoh=ZenohConfig.loopback(port), name="robot")
    try:
        live = robot.publisher("/hb50/bridge_data", BridgeData, node="bridge_node")
        got: list[object] = []
        robot.subscribe("/hb50/bridge_data", BridgeData, got.append, realtime=True)
        live.publish(bridge_data(0))
        assert wait_until(lambda: len(got) == 1)
        result = CliRunner().invoke(tools_app(), _play_args(bag, port))
        assert result.exit_code == 1, result.output
        assert "refusing to publish 1 topic(s)" in result.output
        assert "/hb50/bridge_data (published by bridge_node)" in result.output
        assert "--force" in result.output
        time.sleep(0.3)
        assert len(got) == 1  # nothing of the bag reached the live topic

        result = CliRunner().invoke(tools_app(), _play_args(bag, port, "--force"))
        assert result.exit_code == 0, result.output
        assert wait_until(lambda: len(got) == 21, timeout=5)
    finally:
        robot.close()


def test_play_of_a_recorded_sit_down_leaves_a_running_demo_standing(tmp_path: Path):
    """The user's accident: a bag with `sit_down` on /hb50/control_command and recorded
    bridge_data, played onto a running demo. Play refuses the live feedback topic, does not send
    the command by default, and refuses it with --include-commands too (the stack publishes it);
    the robot keeps standing."""
    from support.cli import run_cli, start_cli

    entries: list[tuple[str, object, int]] = [
        ("/hb50/bridge_data", bridge_data(i), T0 + i * 10**7) for i in range(10)
    ]
    entries.append(("/hb50/control_command", String("sit_down"), T0 + 5 * 10**7))
    bag = write_mcap(tmp_path / "sit.mcap", entries)
    port = free_port()
    demo = start_cli(port, "demo", "--headless", "--duration", "60")
    try:
        assert demo.stdout is not None
        while "mode=STAND " not in (line := demo.stdout.readline()):
            assert line.startswith("t="), line
        everything = run_cli(port, "play", str(bag), "-q", timeout=60)
        assert everything.returncode == 1
        assert "/hb50/bridge_data (published by bridge_node)" in everything.stderr
        only_command = run_cli(port, "play", str(bag), "--topics", "/hb50/control_command", "-q")
        assert only_command.returncode == 0, only_command.stderr
        assert "not publishing 1 command topic(s): /hb50/control_command" in only_command.stderr
        assert "played 0 messages" in only_command.stderr
        forced_in = run_cli(
            port, "play", str(bag), "--topics", "/hb50/control_command", "--include-commands", "-q"
        )
        assert forced_in.returncode == 1
        assert "refusing to publish 1 topic(s)" in forced_in.stderr
        for _ in range(3):  # three more seconds of the robot's own summaries
            line = demo.stdout.readline()
            # standing (or, on a loaded host, standing up again), never sitting down
            assert re.search(r"mode=(STAND|STAND_UP) ", line), line
    finally:
        demo.send_signal(signal.SIGINT)
        try:
            demo.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            demo.kill()
            demo.communicate()
