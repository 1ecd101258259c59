"""``jointbus demo`` as a user runs it: a new process, plain output (not a terminal), the robot
stands up, the run ends at ``--duration`` or Ctrl-C with exit code 0 and a final line; MCAP
recording; bad options are one ``error:`` line and exit code 1.

Each run joins its own Zenoh hub port (``JOINTBUS_HUB_PORT``), never the real 7447.
"""

from __future__ import annotations

import dataclasses
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcap.reader import make_reader

from jointbus import drivers
from jointbus.bus import MAB_RT, Bus, ZenohConfig
from jointbus.cli.demo import SUMMARY_PERIOD_S
from jointbus.messages import jointbus_msgs
from jointbus.model.yaml_loader import load_robot
from jointbus.robots.hb50.messages import BridgeData, JointCommand
from support.cli import cli_env, free_port, run_cli, start_cli

STAND_HEIGHT = 0.34  # m
FINAL = re.compile(r"stopped after [\d.]+ s: mode (\w+), base height ([\d.]+) m")


def _final(stdout: str) -> tuple[str, float]:
    match = FINAL.search(stdout)
    assert match, stdout
    return match.group(1), float(match.group(2))


def test_demo_stands_up_and_ends_cleanly_at_duration() -> None:
    result = run_cli(free_port(), "demo", "--headless", "--duration", "4", timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    summaries = [line for line in lines if line.startswith("t=")]
    assert len(summaries) >= 3, result.stdout
    assert "owner=control_node" in summaries[-1] and "mode=STAND" in summaries[-1]
    mode, height = _final(result.stdout)
    assert mode == "STAND"
    assert abs(height - STAND_HEIGHT) <= 0.1 * STAND_HEIGHT
    assert "lateness p99" in lines[-1] and "CPU" in lines[-1]
    # the run's real-time factor, from the frames' stamps against when they were sent (a user
    # computed it from a recording: the line gave the skipped cycles only)
    run = re.search(
        r"robot time ([\d.]+) s in ([\d.]+) s of the wall clock (?:from \+[\d.]+ s to "
        r"\+[\d.]+ s )?\(real-time factor ([\d.]+) over the run",
        lines[-1],
    )
    assert run, lines[-1]
    robot_s, wall_s, rtf = (float(g) for g in run.groups())
    # the two spans are printed to 0.05 s, the factor to 0.005: "robot time 10.0 s in 10.0 s
    # (… 0.99 …)" is 9.96 s in 10.04 s (a run at load 22)
    assert wall_s >= 3.0
    assert (robot_s - 0.05) / (wall_s + 0.05) - 0.005 <= rtf, run.groups()
    assert rtf <= (robot_s + 0.05) / (wall_s - 0.05) + 0.005, run.groups()
    # what the nodes said as they stopped is on the console too (a user's walking robot was
    # stopped with Ctrl-C; the bridge leaving the drives damped was on the bus only): the robot
    # stands, so the control node sends no damping and the bridge, stopped too, damps
    assert re.search(r"WARN bridge_node: bridge inactive: drives left in damping", result.stderr)
    assert "a bridge stopped with this node leaves the drives damped" in result.stderr
    # the start-up line says what realtime=false means where the processes run SCHED_FIFO
    assert re.search(
        r"hb50 on sim://hb50\?realtime=false\S* \(stepped by the bridge's loop, on the wall "
        r"clock\) in 2 processes: bridge \(bridge on CPU 0",
        result.stdout + result.stderr,
    ), result.stderr
    # --duration counts once the stack runs; the start-up before it is printed, and the final
    # line (which counts from the start-up's beginning) adds up to both.
    started = re.search(r"started in ([\d.]+) s, runs 4 s from now", result.stderr)
    stopped = re.search(r"stopped after ([\d.]+) s", result.stdout)
    assert started and stopped, result.stderr + result.stdout
    ran_s = float(stopped.group(1)) - float(started.group(1))
    assert 4.0 - 0.1 <= ran_s <= 4.0 + SUMMARY_PERIOD_S, (started.group(0), stopped.group(0))
    # the bridge loop over the whole run, from its counts since it started (in its 1 Hz
    # diagnostics: up to a second before the end): its due cycles are the 500 Hz grid of at
    # least the 4 s run but that second, at most the whole time since the start-up began
    run = re.search(
        r"bridge loop over the run (\d+) of (\d+) due cycles \(([\d.]+) % skipped", lines[-1]
    )
    assert run, lines[-1]
    cycles, due = int(run.group(1)), int(run.group(2))
    assert 500 * (4.0 - 1.1) <= due <= 500 * (float(stopped.group(1)) + 0.1), lines[-1]
    assert float(run.group(3)) == pytest.approx(100 * (due - cycles) / due, abs=0.006)


def test_demo_at_1000_hz_stands_up_and_says_the_rate_it_achieved() -> None:
    """Issue 15: ``--rate 1000`` runs bridge and control at 1 kHz; the final line reports the
    loop rate achieved, at most the 1000 requested. How close to 1000 Hz it gets is the host's
    share of the CPU (bench rows ``stack.1000hz.*``), not a test's bound: at load 15-18, beside
    another robot's SCHED_FIFO stack (so this one ran without real-time scheduling), it said
    205-345 Hz in 6 of 10 runs and the former floor of 600 Hz failed them. That the loop runs on
    the 1 kHz grid is what ``--rate`` does, and its due cycles show it whatever the load."""
    # 8 s: on this 2-core VM the 1 kHz layout's control process can miss ~1 s of frames (the
    # demo says BEHIND REAL TIME); the bridge's fallback then holds the rising robot and the
    # control node stands it up again from there, which a 4 s run did not always see end.
    result = run_cli(
        free_port(), "demo", "--headless", "--duration", "8", "--rate", "1000", timeout=120
    )
    assert result.returncode == 0, result.stderr
    mode, height = _final(result.stdout)
    assert mode == "STAND", result.stdout  # its status lines say what the loop achieved
    assert abs(height - STAND_HEIGHT) <= 0.1 * STAND_HEIGHT
    last = result.stdout.splitlines()[-1]
    achieved = re.search(r"last [\d.]+ s: ([\d.]+) Hz achieved", last)
    assert achieved, result.stdout
    assert 0.0 < float(achieved.group(1)) <= 1010.0, last
    # the run's due cycles are the 1 kHz grid (a 500 Hz loop has half as many): at least the
    # 8 s run (less the 0.1 s the 500 Hz test allows) but the age of the bridge's last report
    # (less 0.1 s: it is rounded), at most the whole time since start-up
    run = re.search(r"over the run (\d+) of (\d+) due cycles \(([\d.]+) % skipped", last)
    stopped = re.search(r"stopped after ([\d.]+) s", last)
    assert run and stopped, last
    age = re.search(r"counted to its report ([\d.]+) s before this line", last)
    age_s = float(age.group(1)) if age else 0.0
    cycles, due = int(run.group(1)), int(run.group(2))
    assert 1000 * (8.0 - 0.1 - age_s - 0.1) <= due <= 1000 * (float(stopped.group(1)) + 0.1), last
    assert float(run.group(3)) == pytest.approx(100 * (due - cycles) / due, abs=0.006)
    help_text = run_cli(free_port(), "demo", "--help").stdout
    assert "--rate" in help_text and "1000" in help_text


def test_demo_over_zenoh_records_every_topic(tmp_path: Path) -> None:
    path = tmp_path / "demo.mcap"
    result = run_cli(
        free_port(),
        "demo",
        "--headless",
        "--duration",
        "4",
        "--transport",
        "zenoh",
        "--record",
        str(path),
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert _final(result.stdout)[0] == "STAND"
    counts: dict[str, int] = {}
    with path.open("rb") as f:
        for _schema, channel, _message in make_reader(f).iter_messages():
            counts[channel.topic] = counts.get(channel.topic, 0) + 1
    # every topic, each at its rate for 4 s: this one process (both nodes over Zenoh) reaches
    # 160-350 Hz of its 500 on a 2-core VM (the demo says so), so the floors are 100 Hz and 50 Hz
    assert counts.get("/hb50/bridge_data", 0) > 400, counts
    assert counts.get("/hb50/joint_command", 0) > 200, counts
    assert counts.get("/hb50/robot_state_10hz", 0) > 10, counts


def test_demo_record_prints_the_counts_of_the_file(tmp_path: Path) -> None:
    path = tmp_path / "demo.mcap"
    result = run_cli(
        free_port(), "demo", "--headless", "--duration", "3", "--record", str(path), timeout=60
    )
    assert result.returncode == 0, result.stderr
    printed = re.search(r"recorded (\d+) messages on (\d+) topics", result.stderr)
    assert printed, result.stderr
    with path.open("rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        assert summary is not None and summary.statistics is not None
        in_file = sum(1 for _ in reader.iter_messages())
        channels = {c.topic for c in summary.channels.values()}
    assert int(printed.group(1)) == in_file == summary.statistics.message_count
    assert int(printed.group(2)) == len(channels)
    # latched topics, published once before the recorder started
    assert {"/tf_static", "/hb50/parameters"} <= channels, channels


#: The line naming the file: its span, then the robot's data within it (``bridge_data``): where
#: it begins, its span by the wall clock (sent) and by the frames' stamps (the robot's time).
RECORDED = re.compile(
    r"recorded \d+ messages on \d+ topics to .* \(([\d.]+) s: the nodes' start-up, then the "
    r"robot's data from \+([\d.]+) s, ([\d.]+) s by the wall clock, ([\d.]+) s by their stamps"
    r"(?: \(([\d.]+) of real time\))?\)"
)


def _spans(path: Path) -> tuple[float, float, float]:
    """The file's span, its ``bridge_data``'s span by publish times (when the bridge sent
    them) and where that begins in the file (its first publish time against the file's first
    log time, s: the demo's line counts from there since fa5ac5e), from the MCAP read back."""
    first: int | None = None
    first_sent: int | None = None
    last_sent = 0
    with path.open("rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        assert summary is not None and summary.statistics is not None
        stats = summary.statistics
        for _schema, _channel, message in reader.iter_messages(topics=["/hb50/bridge_data"]):
            first = message.log_time if first is None else min(first, message.log_time)
            sent = message.publish_time
            first_sent = sent if first_sent is None else min(first_sent, sent)
            last_sent = max(last_sent, sent)
    assert first is not None and first_sent is not None, "no bridge_data in the file"
    start = stats.message_start_time
    return (
        (stats.message_end_time - start) / 1e9,
        (last_sent - first_sent) / 1e9,
        (first_sent - start) / 1e9,
    )


def _stamp_span(path: Path) -> float:
    """The span of the file's ``bridge_data`` header stamps (the robot's time, s)."""
    from jointbus.robots.hb50.messages.bridge_data import BridgeData

    with path.open("rb") as f:
        stamps = [
            BridgeData.from_cdr(message.data).header.stamp.to_ns()
            for _s, _c, message in make_reader(f).iter_messages(topics=["/hb50/bridge_data"])
        ]
    return (max(stamps) - min(stamps)) / 1e9


def test_the_record_line_gives_the_robots_time_beside_the_wall_clock() -> None:
    """A new user's simulated robot ran at 0.64 of real time on a starved host: the line said
    "40.01 s of the robot's data" — the frames' send times — while their stamps, the robot's own
    time, spanned 25.5 s. Both are given, with their ratio when they differ by over 2 %."""
    from jointbus.cli.demo import _recorded_line
    from jointbus.tools.recorder import RecorderStats, TopicRecord

    s = 1_000_000_000
    start = 1_700_000_000 * s
    stats = RecorderStats(
        messages=20_000, bytes=1, topics=14, queued=0, lost=0, skipped=0, elapsed_s=44.0,
        first_ns=start, last_ns=start + 43_730_000_000,
    )
    robot = TopicRecord(
        count=20_000, first_ns=start + 3_720_000_000, last_ns=start + 43_730_000_000,
        first_pub_ns=start + 3_700_000_000, last_pub_ns=start + 43_710_000_000,
        first_stamp_ns=s, last_stamp_ns=s + 25_500_000_000,
    )
    line = _recorded_line(stats, Path("slow.mcap"), 40.0, robot=robot, ran_s=40.3, early=False)
    assert line.endswith(
        "(43.73 s: the nodes' start-up, then the robot's data from +3.70 s, 40.01 s by the wall "
        "clock, 25.50 s by their stamps (0.64 of real time))"
    ), line
    # +3.70 s is the first frame's send time, as 40.01 s is a span of send times: the two add
    # up to the file's 43.71 s (from its receive time, +3.72 s, a trial's pair overran the file)


def test_the_record_line_counts_the_robot_data_by_when_it_was_sent_and_names_what_is_missing() -> (
    None
):
    """A new user's recorder, beside eight CPU-bound processes, received frames up to 22 s late
    and most not at all; the line said "41.27 s of the robot's data" (receive times) for frames
    sent over 19.6 s, and nothing of what was missing. The span is now the frames' publish
    times', and the frames missing in it and the sequence gaps are named."""
    from jointbus.cli.demo import _recorded_line
    from jointbus.tools.recorder import RecorderStats, TopicRecord

    s = 1_000_000_000
    start = 1_700_000_000 * s
    stats = RecorderStats(
        messages=20_191,
        bytes=1,
        topics=14,
        queued=0,
        lost=7_477,
        skipped=0,
        elapsed_s=41.5,
        first_ns=start,
        last_ns=start + 41_270_000_000,
    )
    robot = TopicRecord(
        count=2_323,
        first_ns=start + s,
        last_ns=start + 41 * s,
        first_pub_ns=start + s // 2,
        last_pub_ns=start + s // 2 + 19_600_000_000,
        sent=9_801,
    )
    line = _recorded_line(stats, Path("fwd.mcap"), 40.0, robot=robot, ran_s=40.3, early=False)
    assert "then the robot's data from +0.50 s, 19.60 s by the wall clock;" in line, line
    assert "2323 of the 9801 frames the bridge sent in that time, 76 % not recorded" in line
    assert "lost 7477 (sequence gaps: published, never received)" in line
    assert line.endswith(
        "not the 40 s asked: the run lasted 40.30 s; the robot's data in the "
        "file was sent over 19.60 s"
    ), line
    whole = dataclasses.replace(robot, count=9_801)
    quiet = dataclasses.replace(stats, lost=0)
    line = _recorded_line(quiet, Path("fwd.mcap"), 19.0, robot=whole, ran_s=19.2, early=False)
    assert "frames" not in line and "lost" not in line and "asked" not in line, line
    # a bridge that skipped cycles sent fewer frames than its rate: what it did not send is
    # not "not recorded" (without sequence numbers, in-process, nothing is claimed)
    unknown = dataclasses.replace(robot, sent=None)
    line = _recorded_line(quiet, Path("fwd.mcap"), 19.0, robot=unknown, ran_s=19.2, early=False)
    assert "frames" not in line, line


def test_the_record_line_says_the_frames_sent_after_the_last_one_written_were_never_written() -> (
    None
):
    """A trial's ``demo --record --duration 10`` beside another robot's real-time threads: the
    file held 989 frames sent over 2.20 s, the last one sent 9.7 s before the recorder stopped;
    the line said "lost 1805" (gaps between frames received) and nothing of the ≈ 4 900 frames
    sent after the last one written. Now it says so; a recorder that kept up says nothing."""
    from jointbus.cli.demo import _recorded_line
    from jointbus.tools.recorder import RecorderStats, TopicRecord

    s = 1_000_000_000
    start = 1_700_000_000 * s
    stats = RecorderStats(
        messages=9_752, bytes=1, topics=22, queued=0, lost=1_805, skipped=0, elapsed_s=14.5,
        first_ns=start, last_ns=start + 14_470_000_000,
    )  # fmt: skip
    # 989 frames received over 11.5 s, sent over 2.20 s: 1 101 by their sequence numbers
    robot = TopicRecord(
        count=989, first_ns=start + 2_900_000_000, last_ns=start + 14_400_000_000,
        first_pub_ns=start + 2_900_000_000, last_pub_ns=start + 5_100_000_000, sent=1_101,
    )  # fmt: skip
    stopped = start + 5_100_000_000 + 9_730_000_000
    line = _recorded_line(
        stats, Path("run.mcap"), 10.0, robot=robot, ran_s=11.19, early=False, stopped_ns=stopped
    )
    assert line.endswith(
        "the robot's data in the file was sent over 2.20 s: the last frame written was sent "
        "9.73 s before the recorder stopped, and what the bridge sent after it (≈ 4865 frames "
        "at its rate) was never written: the recorder fell behind (too little CPU for it on "
        "this host?)"
    ), line
    # the last frame sent just before the stop (the transport's delay): nothing to say
    kept = dataclasses.replace(robot, last_pub_ns=start + 12_900_000_000, sent=5_000)
    line = _recorded_line(
        stats, Path("run.mcap"), 10.0, robot=kept, ran_s=10.3, early=False, stopped_ns=stopped
    )
    assert "never written" not in line, line


def test_demo_record_holds_the_stand_up_from_lying_and_spans_the_duration(
    tmp_path: Path,
) -> None:
    """Issue 20 item 19: ``demo --record run.mcap --duration 10`` under load gave 8.85 s and
    9.42 s files that began with the robot already standing, so the README's "record the
    stand-up and plot the knees" could not be reproduced. The recorder is now subscribed before
    the robot is commanded; the duration counts from when the robot runs, and the file holds
    that much of the robot's data. A new user's ``--duration 6`` then printed "(9.72 s)" alone:
    the file also holds the nodes' start-up before the robot's first frame, and the line now
    says which part is which, as the file read back has it."""
    from mcap_ros2.decoder import DecoderFactory

    path = tmp_path / "run.mcap"
    duration = 5.0
    result = run_cli(
        free_port(),
        "demo",
        "--headless",
        "--duration",
        f"{duration:g}",
        "--record",
        str(path),
        timeout=90,
    )
    assert result.returncode == 0, result.stderr
    heights: list[float] = []  # the simulator's true base height, m, in file order
    commands: list[tuple[int, str]] = []
    with path.open("rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        summary = reader.get_summary()
        assert summary is not None and summary.statistics is not None
        first_ns = summary.statistics.message_start_time
        for _schema, channel, message, decoded in reader.iter_decoded_messages(
            topics=["/hb50/sim/ground_truth", "/hb50/control_command"]
        ):
            if channel.topic == "/hb50/control_command":
                commands.append((message.log_time, decoded.data))
            else:
                heights.append(decoded.pose.pose.position.z)
    span, robot, robot_from = _spans(path)
    printed = RECORDED.search(result.stderr)
    assert printed, result.stderr
    assert float(printed.group(1)) == pytest.approx(span, abs=0.006)  # jointbus info's duration
    assert float(printed.group(3)) == pytest.approx(robot, abs=0.006)
    assert float(printed.group(2)) == pytest.approx(robot_from, abs=0.006)
    assert float(printed.group(4)) == pytest.approx(_stamp_span(path), abs=0.006)
    assert robot >= duration, (robot, result.stderr)  # what was asked, of the robot running
    assert "asked" not in result.stderr, result.stderr
    assert heights[0] < 0.1, heights[:5]  # the file begins with the robot lying on its belly
    assert max(heights) > 0.3  # ... and holds it standing up
    assert commands and commands[0][1] == "stand_up", commands  # the command that raised it
    assert commands[0][0] > first_ns  # recorded after the file began


def test_demo_record_stopped_early_says_how_long_the_run_ran(tmp_path: Path) -> None:
    """A new user stopped ``demo --duration 20 --record run.mcap`` (SIGINT to its process group)
    and read "… (7.40 s), not the 20 s asked: the run was stopped after 11.04 s" — a figure
    counted from the recorder's start, before the nodes' start-up, that fit neither the file
    (7.40 s) nor the robot's data (4.9 s). It now counts from where ``--duration`` does (the
    start-up line's "runs 20 s from now"), as the final line's "stopped after" minus "started
    in" does, and the spans printed are the file's."""
    path = tmp_path / "run.mcap"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-u",
            "-m",
            "jointbus.cli.main",
            "demo",
            "--headless",
            "--duration",
            "60",
            "--record",
            str(path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(free_port()),
        start_new_session=True,  # its own process group, as a terminal's Ctrl-C signals
    )
    try:
        assert proc.stdout is not None
        for _ in range(3):  # three summaries: the robot runs
            assert proc.stdout.readline().startswith("t=")
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, err
    printed = RECORDED.search(err)
    stopped = re.search(r", not the 60 s asked: the run was stopped ([\d.]+) s after it began", err)
    assert printed and stopped, err
    span, robot, robot_from = _spans(path)
    assert float(printed.group(1)) == pytest.approx(span, abs=0.006)
    assert float(printed.group(3)) == pytest.approx(robot, abs=0.006)
    assert float(printed.group(2)) == pytest.approx(robot_from, abs=0.006)
    assert float(printed.group(4)) == pytest.approx(_stamp_span(path), abs=0.006)
    started = re.search(r"started in ([\d.]+) s, runs 60 s from now", err)
    final = re.search(r"stopped after ([\d.]+) s: mode", out)
    assert started and final, err + out
    # the same origin as --duration: the final line's run less the start-up (each to 0.05 s)
    ran_s = float(final.group(1)) - float(started.group(1))
    assert float(stopped.group(1)) == pytest.approx(ran_s, abs=0.2), (stopped.group(0), ran_s)


def test_ctrl_c_stops_the_demo_with_exit_code_0() -> None:
    proc = start_cli(free_port(), "demo", "--headless", "--isolated")
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # the first summary: the stack is running
        assert line.startswith("t="), line
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "stopped after" in out


def _child_of(parent: int, name: str) -> int | None:
    """The pid of the layout process ``name`` started by ``parent`` (its command line names it)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii") as stat:
                ppid = int(stat.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                command = cmdline.read().decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue
        if ppid == parent and f'"name": "{name}"' in command:
            return int(entry)
    return None


def test_a_demo_whose_bridge_process_is_killed_ends_with_exit_code_1() -> None:
    """A new user SIGKILLed the bridge process: the demo printed ``bridge=lost`` forever (the
    loop figures and the simulator's height for seconds more), and exited 0 after Ctrl-C. The
    robot is gone (no respawn): the demo ends by itself, says so in one ``error:`` line and
    exits 1; its lines say the bridge is gone, not its last figures."""
    proc = start_cli(free_port(), "demo", "--headless", "--duration", "60")
    try:
        assert proc.stdout is not None and proc.stderr is not None
        line = proc.stdout.readline()  # the first summary: the stack is running
        assert line.startswith("t="), line + proc.stderr.read()
        bridge = _child_of(proc.pid, "bridge")
        assert bridge is not None
        os.kill(bridge, signal.SIGKILL)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1, out + err
    errors = [e for e in err.splitlines() if e.startswith("error: ")]
    assert errors == [
        errors[0]
    ] and "error: the robot is gone: process 'bridge' was killed by SIGKILL at +" in errors[0], err
    assert "bridge=gone(killed by SIGKILL " in out, out
    after = out.split("bridge=gone(", 1)[1]
    assert "loop=" not in after and "height=0" not in after, out
    assert "the bridge process was killed by SIGKILL at +" in out.splitlines()[-1], out


def test_sigterm_stops_the_demo_with_exit_code_0() -> None:
    proc = start_cli(free_port(), "demo", "--headless", "--isolated")
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("t=")
        proc.terminate()
        out, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    assert proc.returncode == 0, err
    assert "stopped after" in out


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--transport", "udp"], "--transport 'udp'"),
        (["--isolated", "--transport", "zenoh"], "exclude each other"),
        (["--robot", "no_such_robot"], "no_such_robot"),
        (["--robot", "arm6", "--rate", "1000"], "only hb50"),
        (["--robot", "arm6", "--layout", "x.yaml"], "--layout x.yaml: only hb50 runs in a pro"),
    ],
)
def test_bad_options_are_one_error_line(args: list[str], expected: str) -> None:
    result = run_cli(free_port(), "demo", "--headless", "--duration", "1", *args)
    assert result.returncode == 1
    assert result.stderr.startswith("error:") and expected in result.stderr, result.stderr


def test_the_demo_console_shows_rejected_commands_naming_their_source() -> None:
    """Issue 11, item 10: a refused command is reported on /hb50/status — and the person watching
    the demo sees it there, not only a tool subscribed to the status topic."""
    port = free_port()
    proc = start_cli(port, "demo", "--headless", "--duration", "8")
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("t=")  # the stack is running
        order = load_robot("hb50").actuator_order
        swapped = (order[1], order[0], *order[2:])
        with Bus(name="rogue", zenoh=ZenohConfig(hub_port=port)) as bus:
            pub = bus.publisher("/hb50/joint_command", JointCommand, MAB_RT, node="rogue_node")
            bad = JointCommand.hold(swapped, [0.0] * len(order), 10.0, 1.0, source_node="rogue")
            deadline = time.monotonic() + 5.0
            while time.monotonic() < deadline and not pub.remote_matched:
                time.sleep(0.05)
            for _ in range(5):
                pub.publish(bad)
                time.sleep(0.05)
        out, err = proc.communicate(timeout=40)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    shown = [line for line in err.splitlines() if "rejected" in line]
    assert shown, err
    assert "ERROR bridge_node: joint command from 'rogue' rejected" in shown[0]
    assert f"joint {order[1]!r} (index 0): field 'name'" in shown[0]
    # Five identical rejections: the first at once, the repeats folded into one counted report.
    assert len(shown) <= 2, shown
    assert len(shown) == 1 or " times in " in shown[1], shown
    assert "stopped after" in out


# -- arm6 and rover: served by the array node (issue 12, item 5) ---------------------------------

SERVED_FINAL = re.compile(
    r"(\w+) \(array node\) stopped after ([\d.]+) s: (\d+) commands accepted, (\d+) refused, "
    r"loop over the run (\d+) of (\d+) due cycles .*; last [\d.]+ s: ([\d.]+) Hz achieved"
)


def _joint_positions(path: Path, topic: str) -> list[tuple[float, ...]]:
    from jointbus.messages.joint_state import JointState

    positions: list[tuple[float, ...]] = []
    with path.open("rb") as f:
        for _schema, _channel, message in make_reader(f).iter_messages(topics=[topic]):
            positions.append(tuple(JointState.from_cdr(message.data).positions))
    return positions


@pytest.mark.parametrize("robot", ["arm6", "rover"])
def test_demo_serves_arm6_and_rover_with_the_array_node_and_moves_them(
    robot: str, tmp_path: Path
) -> None:
    path = tmp_path / f"{robot}.mcap"
    result = run_cli(
        free_port(),
        "demo",
        "--robot",
        robot,
        "--headless",
        "--duration",
        "4",
        "--record",
        str(path),
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    summaries = [line for line in result.stdout.splitlines() if line.startswith("t=")]
    assert len(summaries) >= 3, result.stdout
    assert f"robot={robot} power=on" in summaries[-1]
    assert re.search(r"cpu_mean=\d+% \| loop, last \d+s: loop=\d+Hz", summaries[-1]), summaries[-1]
    final = SERVED_FINAL.search(result.stdout)
    assert final, result.stdout
    assert final.group(1) == robot and int(final.group(3)) >= 2 and final.group(4) == "0"
    # the array loop's due cycles since it started: 100 Hz over at most the run's time
    assert 100 * 3.0 <= int(final.group(6)) <= 100 * (float(final.group(2)) + 0.1), final.group(0)
    counts: dict[str, int] = {}
    with path.open("rb") as f:
        for _schema, channel, _message in make_reader(f).iter_messages():
            counts[channel.topic] = counts.get(channel.topic, 0) + 1
    # Every family the array node publishes, at its 100 Hz for about 4 s.
    for topic in ("joint_state", "actarray/data", "joints"):
        assert counts.get(f"/{robot}/{topic}", 0) > 200, counts
    positions = _joint_positions(path, f"/{robot}/joint_state")
    travel = max(
        abs(float(a) - float(b))
        for first, last in ((positions[0], p) for p in positions)
        for a, b in zip(_flat(first), _flat(last), strict=True)
    )
    assert travel > 0.2, (positions[0], positions[-1])  # rad or m: the robot moved


def _flat(values: tuple[object, ...]) -> list[float]:
    """A joint_state position vector as floats (a planar joint's pose is x, y, theta)."""
    out: list[float] = []
    for value in values:
        if isinstance(value, float | int):
            out.append(float(value))
        else:
            out.extend(float(getattr(value, axis)) for axis in ("x", "y", "theta"))
    return out


def test_only_hb50_runs_nodes_that_talk_over_a_transport() -> None:
    result = run_cli(free_port(), "demo", "--robot", "arm6", "--transport", "zenoh")
    assert result.returncode == 1
    assert result.stderr.startswith("error:") and "only hb50" in result.stderr, result.stderr


def test_arm6_demo_alternates_with_the_arms_own_home_pose(tmp_path: Path) -> None:
    """Issue 12 item 6: "home" is the arm's geometry home (0, -0.5, 1.5, 0, 0.6, 0), not zeros."""
    from jointbus import drivers

    with drivers.open("sim://arm6") as arm:
        home = [a.home for a in arm.config.geometry.actuators]
    assert home == pytest.approx([0.0, -0.5, 1.5, 0.0, 0.6, 0.0])
    path = tmp_path / "arm6.mcap"
    result = run_cli(
        free_port(),
        "demo",
        "--robot",
        "arm6",
        "--headless",
        "--duration",
        "6.5",
        "--record",
        str(path),
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    distance = [
        max(abs(p - h) for p, h in zip(_flat(q), home, strict=True))
        for q in _joint_positions(path, "/arm6/joint_state")
    ]
    left = next(i for i, d in enumerate(distance) if d > 0.2)  # the reach pose first
    assert min(distance[left:]) < 0.02, min(distance[left:])  # then back at home (rad)


# -- the bridge is hb50's array node (issue 12, item 2) -------------------------------------------


def test_another_process_reaches_the_demo_robot_as_bus_hb50() -> None:
    """``drivers.open("bus://hb50")`` beside a running demo: the bridge answers as any served array
    does — names, geometry, a reading equal to the robot's own ``bridge_data`` — and its Beam Bots
    ``joint_state`` is published at 100 Hz (every 5th 500 Hz cycle) while someone listens."""
    port = free_port()
    proc = start_cli(port, "demo", "--headless", "--duration", "15")
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("t=")  # the stack is running
        order = load_robot("hb50").actuator_order
        frames: list[BridgeData] = []
        states: list[jointbus_msgs.JointState] = []
        with Bus(name="viewer", zenoh=ZenohConfig(hub_port=port)) as bus:
            bus.subscribe("/hb50/bridge_data", BridgeData, frames.append, MAB_RT, realtime=True)
            bus.subscribe(
                "/hb50/joint_state", jointbus_msgs.JointState, states.append, MAB_RT, realtime=True
            )
            with drivers.open(f"bus://hb50?hub_port={port}&timeout=5") as hb:
                assert hb.names == order
                assert len(hb.geometry().actuators) == len(order)
                time.sleep(1.0)
                reading = hb.read_joints()
                assert frames, "no bridge_data seen"
                latest = frames[-1]
                # the robot stands: a reading and a frame a few ms apart agree to sensor noise
                assert (
                    max(
                        abs(a - b)
                        for a, b in zip(reading.position, latest.joint_position, strict=True)
                    )
                    < 0.05
                )
            n = len(states)
            time.sleep(1.0)
            window = states[n:]
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=40)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert states and tuple(states[-1].name) == order
    # The rate the bridge published at, by the messages' stamps: arrivals in one second of this
    # process's clock bunch on a loaded host (make test-long, 2026-12-06: 134 in 1 s, the rest
    # of a backlog), and a loaded host drops some of a best-effort stream, never most.
    stamps = [m.header.stamp.to_ns() for m in window]
    assert len(stamps) >= 50, len(stamps)
    rate = (len(stamps) - 1) / ((stamps[-1] - stamps[0]) / 1e9)
    print(f"\njoint_state over Zenoh: {len(stamps)} messages in 1 s, {rate:.1f} Hz by their stamps")
    assert 90.0 <= rate <= 110.0, rate  # every 5th of the bridge's 500 Hz cycles
    assert "mode STAND" in out, out
