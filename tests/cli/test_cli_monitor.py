"""``jointbus monitor --once`` run as a user runs it: after a node in another process died, and
on an array served by ``jointbus serve``.

The robot's supervisor is played by a :class:`~jointbus.runtime.LivelinessMonitor` in this process
(the one the bridge runs, latching its verdicts on ``/hb50/node_health``); the node it watches is
the CLI tests' talker (a child process, 1 Hz heartbeat), SIGKILLed. This process opens the hub
first, so the talker's death leaves the hub up.
"""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest

from jointbus import drivers
from jointbus.bus import MAB_RT, Bus, ZenohConfig
from jointbus.messages.jointbus_msgs import JointState
from jointbus.runtime import LivelinessMonitor, Node
from support.cli import (
    TALKER_NODE,
    free_port,
    run_cli,
    start_cli,
    start_talker,
    stop,
    wait_until,
)

#: The talker's heartbeat period (s): its last heartbeat came at most this long before the kill.
HEARTBEAT_PERIOD_S = 1.0
#: ``--once`` prints ages to 0.1 s.
ROUNDING_S = 0.05
#: ``--once --wait``: it prints at least this long after it started (s).
WAIT_S = 1.0
_AGE = re.compile(
    rf"^node {TALKER_NODE}: STALE \(\w+, last heartbeat (\d+\.\d) s ago\)$", re.MULTILINE
)


def _monitor_once(port: int) -> tuple[float, float, str]:
    """Run ``jointbus monitor --once``: (monotonic start, monotonic end, stdout)."""
    started = time.monotonic()
    result = run_cli(port, "monitor", "--once", "--wait", str(WAIT_S), "--hub-port", str(port))
    ended = time.monotonic()
    assert result.returncode == 0, result.stderr
    return started, ended, result.stdout


def _stop_server(server: subprocess.Popen[str]) -> None:
    """SIGTERM (``serve`` stops cleanly on it); killed if it has not ended within 10 s."""
    server.terminate()
    try:
        server.wait(timeout=10.0)
    except subprocess.TimeoutExpired:
        stop(server)


def test_a_monitor_started_after_a_node_died_prints_the_true_growing_age_of_its_heartbeat() -> None:
    """The new user's monitors, started 7.7 to 30.8 s after the kill, all printed "last heartbeat
    2.6 s ago" (the silence at the supervisor's verdict, without the verdict's age). The age
    printed must lie between the time since the kill and that plus one heartbeat period, and grow
    with the time between two monitors."""
    port = free_port()
    with (
        Bus(name="supervisor", zenoh=ZenohConfig(hub_port=port)) as bus,
        Node("supervisor_node", bus) as node,
    ):
        liveliness = LivelinessMonitor(node, ignore={"supervisor_node"}, hidden=False)
        node.start()
        talker: subprocess.Popen[str] = start_talker(port)
        try:
            assert wait_until(lambda: TALKER_NODE in liveliness.states(), 10.0)
            talker.kill()
            killed = time.monotonic()
            talker.wait()
        finally:
            stop(talker)
        assert wait_until(lambda: TALKER_NODE in liveliness.stale(), 5.0)
        runs: list[tuple[float, float, float]] = []  # (start, end, age) of each monitor
        for pause_s in (0.0, 3.0):
            time.sleep(pause_s)
            started, ended, stdout = _monitor_once(port)
            match = _AGE.search(stdout)
            assert match is not None, stdout
            age = float(match[1])
            print(f"\nmonitor --once {started - killed:.2f} s after the kill: age {age:.1f} s")
            # it printed between started + WAIT_S and ended; the last heartbeat came at most one
            # period before the kill
            assert started + WAIT_S - killed - ROUNDING_S <= age, stdout
            assert age <= ended - killed + HEARTBEAT_PERIOD_S + ROUNDING_S, stdout
            runs.append((started, ended, age))
        (start1, end1, age1), (start2, end2, age2) = runs
        grown = age2 - age1
        assert start2 + WAIT_S - end1 - 2 * ROUNDING_S <= grown <= end2 - start1 + 2 * ROUNDING_S


def test_a_served_array_is_shown_as_an_array_with_its_joints_and_true_rates() -> None:
    """``jointbus monitor --namespace myarm`` on a user's arm served by ``jointbus serve`` (new
    user, 2026-12-06) printed hb50's "bridge: no BridgeState yet", "robot: UNKNOWN" and "joints:
    no BridgeData yet" and no joint; listed /myarm/hardware_command, which nothing publishes;
    showed the latched geometry at 0.0 Hz; and read 59–94 Hz for the 100 Hz joint_state. Now:
    the arm's joints with the positions a client commanded, its node, no hb50 line, only
    published topics, the geometry latched, and the joint_state rate this process measures
    over the same seconds."""
    port = free_port()
    server = start_cli(port, "serve", "sim://arm6?noise=false", "--name", "myarm")
    try:
        line = server.stdout.readline() if server.stdout is not None else ""
        assert line.startswith("serving sim://arm6?noise=false as /myarm"), line
        with (
            drivers.open(f"bus://myarm?hub_port={port}&timeout=2.0") as arm,
            Bus(name="watcher", zenoh=ZenohConfig(hub_port=port)) as bus,
        ):
            arrivals: list[int] = []
            bus.subscribe(
                "/myarm/joint_state",
                JointState,
                lambda _msg: arrivals.append(time.monotonic_ns()),
                MAB_RT,
                realtime=True,
            )
            arm.power(True)
            arm.position("elbow", 0.5)
            assert wait_until(lambda: abs(arm.read().actuators[2].position - 0.5) < 0.005, 20.0)
            assert wait_until(lambda: len(arrivals) > 20, 10.0)
            result = run_cli(port, "monitor", "--namespace", "myarm", "--once", "--wait", "1")
            ended = time.monotonic_ns()
            published = {t.name for t in bus.discover(1.0) if t.publishers}
            names = arm.names
    finally:
        _stop_server(server)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    print(out)
    assert f"array: {len(names)} joints | motor power on" in out, out
    for name in names:
        assert re.search(rf"^{name} +[+-]\d+\.\d{{3}} ", out, re.M), (name, out)
    assert re.search(r"^elbow +\+0\.50\d ", out, re.M), out
    assert "node array_node: OK (active" in out, out
    for hb50_only in ("bridge:", "robot:", "BridgeData", "BridgeState", "RobotState"):
        assert hb50_only not in out, out
    listed = re.findall(r"^topic (\S+) ", out, re.M)
    assert listed and set(listed) <= published, (listed, published)
    assert "/myarm/hardware_command" not in out, out
    assert "topic /myarm/actarray/geometry [jointbus_msgs/msg/ArrayGeometry] latched" in out
    # the rate printed against the arrivals here in the monitor's last second (it listened 1 s)
    rate = re.search(
        r"^topic /myarm/joint_state \[jointbus_msgs/msg/JointState\] (\S+) Hz$", out, re.M
    )
    assert rate is not None, out
    recent = [t for t in arrivals if ended - 2 * 10**9 <= t <= ended]
    true_hz = (len(recent) - 1) * 1e9 / (recent[-1] - recent[0])
    print(f"monitor --wait 1: {rate[1]} Hz; this process over its last 2 s: {true_hz:.1f} Hz")
    assert float(rate[1]) == pytest.approx(true_hz, rel=0.08), (rate[1], true_hz)


def test_a_monitor_fed_by_play_says_it_shows_a_replay_not_a_live_robot(tmp_path: Path) -> None:
    """A user's ``jointbus monitor`` fed by ``jointbus play`` of a recording showed the recorded
    ``array_node`` as ``OK (active, last heartbeat 0.9 s ago)``: a live robot. Recorded here from
    a real ``jointbus serve`` (which then stops), played on the real bus: the node is REPLAYED,
    the first line says the robot is played back, and the stamp's lag it prints is true — between
    the end of the recording and the monitor's start, and its start and the monitor's end."""
    port = free_port()
    bag = tmp_path / "arm.mcap"
    server = start_cli(port, "serve", "sim://arm6?noise=false", "--name", "replayarm")
    try:
        line = server.stdout.readline() if server.stdout is not None else ""
        assert line.startswith("serving sim://arm6?noise=false as /replayarm"), line
        recording_started = time.time()
        recorded = run_cli(port, "record", str(bag), "--duration", "3", "--quiet")
        recording_ended = time.time()
        assert recorded.returncode == 0, recorded.stderr
    finally:
        _stop_server(server)
    player = start_cli(port, "play", str(bag), "--loop", "--quiet")
    try:
        out = ""
        for _ in range(5):  # until the player's first heartbeat reached the monitor
            monitor_started = time.time()
            result = run_cli(port, "monitor", "--namespace", "replayarm", "--once", "--wait", "2")
            monitor_ended = time.time()
            assert result.returncode == 0, result.stderr
            out = result.stdout
            if "node array_node:" in out:
                break
    finally:
        player.terminate()
        try:
            player.wait(timeout=10.0)
        except subprocess.TimeoutExpired:
            stop(player)
    print(out)
    assert "node array_node: OK" not in out, out
    lag = re.search(
        r"^node array_node: REPLAYED \(active, last heartbeat \d+\.\d s ago, stamped "
        r"(\d+\.\d) s before it arrived\)$",
        out,
        re.M,
    )
    assert lag is not None, out
    first = out.splitlines()[0]
    assert first == (
        f"REPLAY, not a live robot: the heartbeats of array_node are stamped {lag[1]} s before "
        "they arrive (a recording played back, e.g. by jointbus play, or a clock that far off)"
    ), out
    low, high = monitor_started - recording_ended, monitor_ended - recording_started
    assert low - ROUNDING_S <= float(lag[1]) <= high + ROUNDING_S, (lag[1], low, high)
