"""Every ``jointbus`` command that joins the bus takes the same options and environment variables.

The structural test walks the whole command tree of ``jointbus --help``; the others run
``record``, ``play`` and ``foxglove`` — the commands that once ignored ``JOINTBUS_HUB_PORT`` — as a
user would, against a talker that is the hub on a non-default port, with nothing but the variable
telling them where it is.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import websockets

from jointbus.bus import RELIABLE, Bus, ZenohConfig
from jointbus.cli import main as cli
from jointbus.cli.options import BUS_ENVIRONMENT, BUS_OPTIONS
from jointbus.robots.hb50.messages import Status
from jointbus.tools.bag_reader import open_bag
from support.cli import (
    TALK_TOPIC,
    TALKER_NODE,
    free_port,
    run_cli,
    start_cli,
    start_talker,
    stop,
    wait_until,
)

#: Commands that never join the jointbus bus: they read or write files (``ros2 export-msgs``
#: writes .msg packages, ``security rules`` access rules), print the version, speak CAN only
#: (``can-twin``), or are what the others join (``router``: its ``--port`` is their hub port,
#: ``JOINTBUS_HUB_PORT``). A new command must be added here or take the shared options.
# Commands that join no user's bus: offline tools, the router (it is the bus), and the chaos
# campaign, which runs a robot of its own on a private loopback hub (a free port, or --hub-port)
# so that its faults can never reach a robot the user runs.
OFFLINE_COMMANDS = frozenset(
    {
        "info", "plot", "version", "can-twin", "ros2 export-msgs", "security rules", "router",
        "chaos",
    }
)


def _leaf_commands() -> list[tuple[str, Any]]:
    """``(path, command)`` of every command under ``jointbus`` (typer's vendored click objects)."""
    root: Any = cli.command_tree()
    found: list[tuple[str, Any]] = []

    def walk(prefix: str, group: Any) -> None:
        for name, command in group.commands.items():
            path = f"{prefix} {name}".strip()
            if hasattr(command, "commands"):
                walk(path, command)
            else:
                found.append((path, command))

    walk("", root)
    return found


def test_every_bus_joining_command_takes_the_shared_options_and_variables() -> None:
    commands = _leaf_commands()
    joining = [
        (p, c)
        for p, c in commands
        if p not in OFFLINE_COMMANDS and p.split()[0] not in OFFLINE_COMMANDS
    ]
    names = {p for p, _ in joining}
    assert {"record", "play", "foxglove", "monitor", "demo", "topic echo", "ros2 graph"} <= names
    for path, command in joining:
        options = {opt: param for param in command.params for opt in param.opts}
        for flag, variable in zip(BUS_OPTIONS, BUS_ENVIRONMENT, strict=True):
            assert flag in options, f"`jointbus {path}` has no {flag}"
            if variable is not None:
                assert options[flag].envvar == variable, f"`jointbus {path}` {flag}: {variable}"


def test_record_follows_jointbus_hub_port(tmp_path: Path) -> None:
    port = free_port()
    talker = start_talker(port)
    out = tmp_path / "talk.mcap"
    try:
        result = run_cli(port, "record", str(out), TALK_TOPIC, "--duration", "3", "--quiet")
    finally:
        stop(talker)
    assert result.returncode == 0, result.stderr
    with open_bag(out) as bag:
        assert [t.name for t in bag.topics] == [TALK_TOPIC]
        texts = [Status.from_cdr(m.data).status for m in bag.messages()]
    assert len(texts) > 20 and all(t.startswith("tick ") for t in texts)


def test_a_recorder_that_finds_nothing_warns_early_and_exits_non_zero(tmp_path: Path) -> None:
    port = free_port()  # nothing runs there
    out = tmp_path / "empty.mcap"
    proc = start_cli(port, "record", str(out), "--duration", "6")
    assert proc.stderr is not None
    joined: float | None = None  # when it says it records (Python has started, the bus joined)
    first_warning = None
    lines: list[str] = []
    for line in proc.stderr:
        lines.append(line)
        if joined is None and line.startswith("recording every topic"):
            joined = time.monotonic()
        if first_warning is None and joined is not None and "warning" in line:
            first_warning = time.monotonic() - joined
    assert proc.wait(timeout=30) == 1, "".join(lines)
    stderr = "".join(lines)
    assert first_warning is not None and first_warning < 5.0, stderr
    assert f"hub port {port}" in stderr
    assert "error: recorded nothing" in stderr


def test_play_follows_jointbus_hub_port(tmp_path: Path) -> None:
    from jointbus.messages.std_msgs import String
    from jointbus.tools.mcap_writer import McapChunkWriter

    bag = tmp_path / "chatter.mcap"
    with bag.open("wb") as f:
        writer = McapChunkWriter(f)
        schema = writer.add_schema(String.TYPE_NAME, String.msgdef().encode())
        channel = writer.add_channel("/chatter", schema)
        for i in range(20):
            t = 1_800_000_000_000_000_000 + i * 10_000_000
            writer.add_message(channel, t, t, i + 1, String(str(i)).to_cdr())
        writer.finish()
    port = free_port()
    got: list[str] = []
    with Bus(name="listener", zenoh=ZenohConfig(hub_port=port)) as listener:  # the hub
        listener.subscribe("/chatter", String, lambda m: got.append(m.data), realtime=True)
        result = run_cli(port, "play", str(bag), "--rate", "4", "--settle", "1.5", "--quiet")
        assert result.returncode == 0, result.stderr
        assert wait_until(lambda: len(got) == 20, timeout=5.0)
    assert got == [str(i) for i in range(20)]


async def _advertised_topics(url: str, wanted: str, timeout: float) -> set[str]:
    topics: set[str] = set()
    protocols = [websockets.Subprotocol("foxglove.sdk.v1")]
    async with websockets.connect(url, subprotocols=protocols) as ws:
        deadline = time.monotonic() + timeout
        while wanted not in topics and time.monotonic() < deadline:
            try:
                frame = await asyncio.wait_for(ws.recv(), 0.5)
            except TimeoutError:
                continue
            if isinstance(frame, str):
                msg: dict[str, Any] = json.loads(frame)
                if msg["op"] == "advertise":
                    topics.update(c["topic"] for c in msg["channels"])
    return topics


def test_foxglove_follows_jointbus_hub_port() -> None:
    port = free_port()
    ws_port = free_port()
    talker = start_talker(port)
    view = start_cli(port, "foxglove", "--port", str(ws_port), "--robot", "", "--duration", "20")
    try:
        assert view.stdout is not None
        line = view.stdout.readline()
        if not line:  # it exited: say why
            assert view.stderr is not None
            pytest.fail(f"foxglove exited {view.wait(timeout=10)}: {view.stderr.read()}")
        assert f"ws://127.0.0.1:{ws_port}" in line, line
        topics = asyncio.run(_advertised_topics(f"ws://127.0.0.1:{ws_port}", TALK_TOPIC, 10.0))
        assert TALK_TOPIC in topics
    finally:
        view.terminate()
        try:
            view.wait(timeout=10)
        except subprocess.TimeoutExpired:
            view.kill()
            view.wait()
        stop(talker)


@pytest.mark.parametrize("command", ["record", "play", "foxglove"])
def test_hub_port_option_is_documented_in_help(command: str) -> None:
    result = run_cli(1, command, "--help")
    assert result.returncode == 0
    assert "--hub-port" in result.stdout and "JOINTBUS_HUB_PORT" in result.stdout


def test_two_stacks_on_one_hub_in_different_domains_never_see_each_others_topics(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The talker (domain 5, from ROS_DOMAIN_ID) is the hub; a program in domain 6 joins the same
    hub. Neither hears nor lists the other's topics; the CLI picks its domain by --domain-id or
    ROS_DOMAIN_ID."""
    port = free_port()
    monkeypatch.setenv("ROS_DOMAIN_ID", "5")
    talker = start_talker(port)
    monkeypatch.delenv("ROS_DOMAIN_ID")
    other_topic = "/cli_test/other_domain"
    try:
        with (
            Bus(name="six", zenoh=ZenohConfig(hub_port=port, domain_id=6)) as six,
            Bus(name="five", zenoh=ZenohConfig(hub_port=port, domain_id=5)) as five,
        ):
            heard_six: list[Status] = []
            heard_five: list[Status] = []
            six.subscribe(TALK_TOPIC, Status, heard_six.append, RELIABLE, realtime=True)
            five.subscribe(TALK_TOPIC, Status, heard_five.append, RELIABLE, realtime=True)
            six.publisher(other_topic, Status, RELIABLE)
            # 20 talker samples reach domain 5 in the time domain 6 hears none.
            assert wait_until(lambda: len(heard_five) >= 20, timeout=20.0)
            assert heard_six == []
            listed_six = run_cli(port, "topic", "list", "--domain-id", "6")
            monkeypatch.setenv("ROS_DOMAIN_ID", "5")
            listed_five = run_cli(port, "topic", "list")
        assert listed_six.returncode == 0, listed_six.stderr
        # Domain 6 lists its own publisher and subscriber, never the talker's publisher.
        assert other_topic in listed_six.stdout
        assert _publishers(listed_six.stdout, TALK_TOPIC) == "-"
        assert listed_five.returncode == 0, listed_five.stderr
        assert TALKER_NODE in _publishers(listed_five.stdout, TALK_TOPIC)
        assert other_topic not in listed_five.stdout
    finally:
        stop(talker)


def _publishers(table: str, topic: str) -> str:
    """The PUBLISHERS cell of ``topic``'s row in ``jointbus topic list``'s table."""
    header, *rows = table.splitlines()
    row = next(r for r in rows if r.split()[0] == topic)
    start = header.index("PUBLISHERS")
    return row[start : header.index("SUBSCRIBERS")].strip()
