"""``jointbus record``: records another process's topics over Zenoh; ``info`` reads the file."""

from __future__ import annotations

import dataclasses
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from mcap.reader import make_reader
from typer.testing import CliRunner

from jointbus.bus import Bus, ZenohConfig
from jointbus.cli.record import status_text
from jointbus.messages.std_msgs import String
from jointbus.tools.bag_reader import open_bag
from jointbus.tools.recorder import RecorderStats
from support.cli_tools import free_port, tools_app


def test_record_stores_every_message_published_while_it_runs(tmp_path: Path):
    port = free_port()
    robot = Bus(zenoh=ZenohConfig.loopback(port), name="robot")
    pub = robot.publisher("/counter", String)
    other = robot.publisher("/other", String)
    stop = threading.Event()
    sent: list[int] = []

    def feed() -> None:
        i = 0
        while not stop.is_set():
            if pub.remote_matched:  # count only what the recorder can see
                pub.publish(String(str(i)))
                other.publish(String("x"))
                sent.append(i)
                i += 1
            time.sleep(0.005)

    feeder = threading.Thread(target=feed)
    out = tmp_path / "rec.mcap"
    try:
        feeder.start()
        args = [
            "record",
            str(out),
            "/counter",
            "--duration",
            "2.0",
            "--connect",
            f"tcp/127.0.0.1:{port}",
            "--listen",
            "tcp/127.0.0.1:0",
            "--quiet",
        ]
        result = CliRunner().invoke(tools_app(), args)
    finally:
        stop.set()
        feeder.join()
        robot.close()
    assert result.exit_code == 0, result.output
    assert "recorded" in result.output and " on 1 topic to " in result.output
    with open_bag(out) as bag:
        assert not bag.truncated
        assert [t.name for t in bag.topics] == ["/counter"]
        values = [int(String.from_cdr(m.data).data) for m in bag.messages()]
    # a contiguous run of what was published: nothing lost while recording
    assert len(values) > 50
    assert values == list(range(values[0], values[0] + len(values)))
    info = CliRunner().invoke(tools_app(), ["info", str(out)])
    assert info.exit_code == 0 and f"Count: {len(values)}" in info.output


def test_the_summary_gives_a_stamped_topics_wall_clock_and_stamp_spans(tmp_path: Path):
    """A new user's simulated robot ran at 0.64 of real time on a starved host: its frames were
    sent over 40.01 s and the summary called that "the robot's data", while their header stamps
    (the robot's own time) spanned 25.5 s. The summary now gives the busiest stamped topic's span
    by both clocks and their ratio when they differ by over 2 %. Here frames are stamped with a
    clock that runs at 0.64 of the wall clock, at 100 Hz, for the recorder's 2 s."""
    import re

    from jointbus.bus import RELIABLE
    from jointbus.messages.std_msgs import Header
    from jointbus.robots.hb50.messages.bridge_data import BridgeData

    port = free_port()
    robot = Bus(zenoh=ZenohConfig.loopback(port), name="robot")
    pub = robot.publisher("/hb50/bridge_data", BridgeData, RELIABLE)
    stop = threading.Event()

    def feed() -> None:
        start = time.time_ns()
        while not stop.is_set():
            stamp = 1_000_000_000 + round(0.64 * (time.time_ns() - start))  # the robot's time
            pub.publish(BridgeData(header=Header.at_ns(stamp)))
            time.sleep(0.01)

    feeder = threading.Thread(target=feed)
    out = tmp_path / "slow.mcap"
    try:
        feeder.start()
        args = [
            "record", str(out), "--duration", "2.0", "--connect", f"tcp/127.0.0.1:{port}",
            "--listen", "tcp/127.0.0.1:0", "--quiet",
        ]
        result = CliRunner().invoke(tools_app(), args)
    finally:
        stop.set()
        feeder.join()
        robot.close()
    assert result.exit_code == 0, result.output
    said = re.search(
        r"; /hb50/bridge_data: (\d+) messages over ([\d.]+) s by the wall clock, ([\d.]+) s by "
        r"their stamps \(([\d.]+) of real time\)",
        result.output,
    )
    assert said, result.output
    with open_bag(out) as bag:
        frames = [m for m in bag.messages() if m.topic == "/hb50/bridge_data"]
    stamps = [BridgeData.from_cdr(m.data).header.stamp.to_ns() for m in frames]
    sent = [m.publish_time_ns for m in frames]
    assert int(said.group(1)) == len(frames) > 50
    assert float(said.group(2)) == pytest.approx((max(sent) - min(sent)) / 1e9, abs=0.006)
    assert float(said.group(3)) == pytest.approx((max(stamps) - min(stamps)) / 1e9, abs=0.006)
    assert float(said.group(4)) == pytest.approx(0.64, abs=0.015)


def test_clock_spans_give_the_ratio_only_when_the_clocks_differ_by_over_2_percent() -> None:
    from jointbus.cli.record import clock_spans
    from jointbus.tools.recorder import TopicRecord

    s = 1_000_000_000
    trial = TopicRecord(
        count=9_000, first_ns=0, last_ns=0, first_pub_ns=3 * s, last_pub_ns=43_010_000_000,
        first_stamp_ns=s, last_stamp_ns=26_500_000_000,
    )
    assert clock_spans(trial) == (
        "40.01 s by the wall clock, 25.50 s by their stamps (0.64 of real time)"
    )
    alike = dataclasses.replace(trial, last_stamp_ns=s + 39_500_000_000)  # 1.3 % short
    assert clock_spans(alike) == "40.01 s by the wall clock, 39.50 s by their stamps"
    unstamped = dataclasses.replace(trial, first_stamp_ns=0, last_stamp_ns=0)
    assert clock_spans(unstamped) == "40.01 s by the wall clock"


def _record_on_a_terminal(tmp_path: Path, *extra: str) -> str:
    """Run ``jointbus record`` against the talker with stderr on a pseudo-terminal; its stderr."""
    import os
    import pty
    import subprocess

    from support.cli import TALK_TOPIC, cli_env, start_talker, stop

    port = free_port()
    talker = start_talker(port)
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jointbus.cli.main",
                "record",
                str(tmp_path / "t.mcap"),
                TALK_TOPIC,
                "--duration",
                "2",
                *extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=slave,
            env=cli_env(port),
        )
        os.close(slave)
        chunks: list[bytes] = []
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert proc.wait(timeout=30) == 0
    finally:
        os.close(master)
        stop(talker)
    return b"".join(chunks).decode()


def test_record_status_line_ends_with_a_newline_on_a_terminal(tmp_path: Path):
    text = _record_on_a_terminal(tmp_path)
    assert "recording: " in text
    # with --duration 2 it stops by itself: its first line says so (it said "Ctrl-C stops")
    assert "; stops after 2 s or at Ctrl-C" in text, repr(text[:300])
    status, _, summary = text.rpartition("recorded ")
    assert status.endswith("\n"), repr(text[-300:])  # the summary starts on its own line
    assert summary.startswith(tuple("123456789"))


def test_record_quiet_prints_no_status_line(tmp_path: Path):
    text = _record_on_a_terminal(tmp_path, "-q")
    assert "recording: " not in text
    assert text.startswith("recorded "), repr(text)


def test_record_says_what_lost_and_skipped_count():
    """A bare "lost 204" left a user guessing: the status line names sequence gaps, and --help
    explains both counts."""
    stats = RecorderStats(
        messages=9000,
        bytes=10**6,
        topics=12,
        queued=0,
        lost=204,
        skipped=3,
        elapsed_s=5.0,
        lost_reliable=0,
    )
    line = status_text(stats, 1800.0)
    assert "lost 204 (sequence gaps: published, never received; 0 on reliable topics)" in line
    assert "skipped 3 (received, not recordable)" in line
    help_text = " ".join(CliRunner().invoke(tools_app(), ["record", "--help"]).output.split())
    assert "missing from a remote publisher's sequence numbers" in help_text.replace("│ ", "")
    assert "not recordable" in help_text


def test_the_summary_names_a_span_shorter_than_the_recording_and_the_silence_at_its_end():
    """A user's recorder on a busy host ran 70.4 s, held 22.9 s of messages (``jointbus info``'s
    duration) and said only "70.4 s". The summary now gives the messages' span when it is a
    second or more shorter, and how long before the stop the last message came."""
    from jointbus.cli.record import _held
    from jointbus.tools.recorder import RecorderStats

    s = 1_000_000_000
    start = 1_700_000_000 * s
    stats = RecorderStats(
        messages=994,
        bytes=1,
        topics=4,
        queued=0,
        lost=0,
        skipped=0,
        elapsed_s=70.4,
        first_ns=start,
        last_ns=start + 22_900_000_000,
    )
    stopped = start + 70 * s
    assert _held(stats, stopped) == "; the messages span 22.9 s, none arrived in the last 47.1 s"
    whole = dataclasses.replace(stats, last_ns=start + 69_900_000_000)
    assert _held(whole, stopped) == ""


def test_record_started_after_the_stack_is_up_holds_its_latched_topics(tmp_path: Path):
    """`jointbus record` joined to a running demo: /tf_static and /hb50/parameters, published
    once when the nodes started, are in the file and decode with rosbags."""
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore

    from support.cli import run_cli, start_cli

    port = free_port()
    demo = start_cli(port, "demo", "--headless", "--duration", "60")
    try:
        assert demo.stdout is not None
        line = demo.stdout.readline()  # the first summary: the stack runs, latched topics sent
        assert line.startswith("t="), line
        out = tmp_path / "late.mcap"
        result = run_cli(port, "record", str(out), "--duration", "2", "-q", timeout=60)
        assert result.returncode == 0, result.stderr
    finally:
        demo.send_signal(signal.SIGINT)
        try:
            demo.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            demo.kill()
            demo.communicate()
    store = get_typestore(Stores.EMPTY)
    decoded: dict[str, list[Any]] = {}
    with out.open("rb") as f:
        for schema, channel, message in make_reader(f).iter_messages():
            if channel.topic not in ("/tf_static", "/hb50/parameters"):
                continue
            if schema.name not in store.fielddefs:
                store.register(get_types_from_msg(schema.data.decode(), schema.name))
            decoded.setdefault(channel.topic, []).append(
                store.deserialize_cdr(message.data, schema.name)
            )
    assert sorted(decoded) == ["/hb50/parameters", "/tf_static"], sorted(decoded)
    assert {p.node for p in decoded["/hb50/parameters"]} == {"bridge_node", "control_node"}
    assert all(t.transforms for t in decoded["/tf_static"])
