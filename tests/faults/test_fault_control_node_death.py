"""Fault: the control node hangs or dies → STALE within 1.5 s, and the bridge goes to safe mode.

The robot as ``jointbus bridge`` + ``jointbus control`` run it: the bridge (a one-node
:class:`~jointbus.stack.Stack`) in this process — so its 500 Hz ``bridge_state`` is seen inside
its own cycle — and the control node in a child process, over Zenoh on loopback. A
:class:`~jointbus.runtime.LivelinessMonitor` in this process watches the heartbeats, as
``jointbus node list`` and the monitor do.

- **Hang** (SIGSTOP: the process is alive, its sockets open, nothing runs): commands stop, so the
  bridge enters safe mode in the first cycle past the 250 ms watchdog time; the heartbeats stop
  too and, the Zenoh link being up, only the heartbeat rule can see it: STALE 1.5 s after the
  last heartbeat (+ the 50 ms check period). SIGCONT: commands resume (``mode: run``) and the
  node is OK again.
- **Death** (SIGKILL): the kernel closes the sockets, Zenoh withdraws the node's liveliness
  tokens, and the monitor reports STALE within the 100 ms token grace — well inside 1.5 s; the
  bridge is in safe mode (damping, drives still on) within the watchdog time + one cycle.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from jointbus.bus import RELIABLE
from jointbus.robots.hb50.messages import Level, Status
from jointbus.runtime import LivelinessMonitor, Node, NodeHealth
from jointbus.stack import Stack
from jointbus.tools.monitor.feed import MonitorFeed
from jointbus.tools.monitor.model import MonitorModel, NodeState
from support.faults import (
    CYCLE_NS,
    ModeLog,
    end,
    free_port,
    hub_config,
    kill,
    orphan_shm_files,
    remove_orphan_shm,
    spawn,
    stderr_of,
    wait_until,
)

CONTROL = "control_node"
WATCHDOG_S = 0.25
STALE_S = 1.5  # the liveliness timeout
CHECK_S = 0.05  # the monitor's check period
HEADROOM_S = 0.1  # wake-up lateness and host stalls on a loaded 2-vCPU VM


@dataclass
class Robot:
    stack: Stack
    log: ModeLog
    monitor: LivelinessMonitor
    control: subprocess.Popen[str]
    changes: list[NodeHealth]
    lock: threading.Lock
    reports: list[tuple[int, Status]]  # (arrival, monotonic ns) of every /hb50/status report

    def bridge_reports_about(self, name: str, since_ns: int) -> list[tuple[int, Status]]:
        """The bridge's liveliness reports about node ``name`` that arrived after ``since_ns``."""
        with self.lock:
            return [
                (t, m)
                for t, m in self.reports
                if t >= since_ns and m.reporting_node == "bridge_node" and m.data == name.encode()
            ]

    def health(self) -> NodeHealth | None:
        return self.monitor.health(CONTROL)

    def stale_since(self, t_ns: int) -> NodeHealth | None:
        with self.lock:
            return next((h for h in self.changes if h.stale and h.since_ns >= t_ns), None)


@pytest.fixture(scope="module")
def robot() -> Iterator[Robot]:
    shm_before = orphan_shm_files()
    port = free_port()
    changes: list[NodeHealth] = []
    lock = threading.Lock()

    def on_change(health: NodeHealth) -> None:
        if health.name == CONTROL:
            with lock:
                changes.append(health)

    reports: list[tuple[int, Status]] = []

    def on_status(msg: Status) -> None:
        with lock:
            reports.append((time.monotonic_ns(), msg))

    with Stack(nodes=("bridge",), zenoh=hub_config(port)) as stack:  # first: the hub
        log = ModeLog(stack.bus)
        stack.bus.subscribe(
            "/hb50/status", Status, on_status, RELIABLE.with_(depth=1000), realtime=True
        )
        watcher = Node("fault_monitor", stack.bus)
        monitor = LivelinessMonitor(watcher, on_change=on_change)
        control = spawn("control", "--hub-port", str(port))
        try:
            summary = stack.wait_for(
                lambda s: s.standing and s.owner == CONTROL and s.bridge_mode == "run", 40.0
            )
            assert summary.standing, (summary, stderr_of(control))
            assert wait_until(lambda: (h := monitor.health(CONTROL)) is not None and not h.stale)
            yield Robot(stack, log, monitor, control, changes, lock, reports)
        finally:
            if control.poll() is None:
                control.send_signal(signal.SIGCONT)
            end(control)
            monitor.close()
            watcher.shutdown()
            log.close()
    remove_orphan_shm(shm_before)


def _safe_delay(robot: Robot, since_ns: int) -> tuple[float, float]:
    """(delay of the first ``safe`` cycle, of the cycle before it) after the last command (s)."""
    bridge = robot.stack.bridge
    assert bridge is not None
    # The stance fallback follows safe with hold once the stance is quiet: look for the safe cycle
    # in the log, not at the mode now.
    assert wait_until(
        lambda: robot.log.first(since_ns, lambda c: c.mode == "safe") is not None, 3.0
    ), robot.log.changes[-3:]
    last_ns = bridge.watchdog.last_feed_ns
    assert last_ns is not None and last_ns <= time.monotonic_ns()
    safe = robot.log.first(max(since_ns, last_ns), lambda c: c.mode == "safe")
    assert safe is not None, robot.log.since(since_ns)
    return (safe.t_ns - last_ns) / 1e9, (safe.prev_ns - last_ns) / 1e9


def _check_safe_bound(delay: float, before: float) -> None:
    assert delay > WATCHDOG_S
    assert before <= WATCHDOG_S + 0.001  # the first cycle past the watchdog time acts
    assert delay <= WATCHDOG_S + CYCLE_NS / 1e9 + HEADROOM_S


def test_a_hung_control_node_is_stale_by_its_heartbeats_and_the_bridge_goes_safe(
    robot: Robot,
) -> None:
    stopped_ns = time.monotonic_ns()
    robot.control.send_signal(signal.SIGSTOP)
    try:
        delay, before = _safe_delay(robot, stopped_ns)
        assert wait_until(lambda: robot.stale_since(stopped_ns) is not None, STALE_S + 3.0)
        stale = robot.stale_since(stopped_ns)
        assert stale is not None
        silent = (stale.since_ns - stale.last_seen_ns) / 1e9
        assert robot.stack.summary().drives_enabled  # damping, not off
        # The bridge's own monitor checks every 50 ms too, not in step with this one: resume
        # only once it has reported the silence, or the node can be back before it looks.
        assert wait_until(
            lambda: any(
                Level(m.level) is Level.STALE
                for _, m in robot.bridge_reports_about(CONTROL, stopped_ns)
            ),
            1.0,
        ), [(m.reporting_node, m.level, m.status) for _, m in robot.reports]
    finally:
        resumed_ns = time.monotonic_ns()
        robot.control.send_signal(signal.SIGCONT)
    print(
        f"\nFAULT control node hangs (SIGSTOP): safe mode {delay * 1e3:.1f} ms after its last "
        f"command; STALE {silent:.3f} s after its last heartbeat (timeout {STALE_S} s)"
    )
    _check_safe_bound(delay, before)
    assert STALE_S < silent <= STALE_S + CHECK_S + HEADROOM_S
    assert "no heartbeat" in stale.reason
    assert wait_until(
        lambda: robot.log.first(resumed_ns, lambda c: c.mode == "run") is not None, 5.0
    )
    assert robot.log.owner == CONTROL
    assert wait_until(lambda: (h := robot.health()) is not None and not h.stale, 5.0)
    # ... and the robot reported both on /hb50/status: STALE while silent, OK when back.
    assert wait_until(lambda: len(robot.bridge_reports_about(CONTROL, stopped_ns)) >= 2, 10.0), [
        (m.reporting_node, m.level, m.status, m.data) for _, m in robot.reports
    ]
    levels = [Level(m.level) for _, m in robot.bridge_reports_about(CONTROL, stopped_ns)]
    assert levels == [Level.STALE, Level.OK]


class MonitorWatch:
    """The terminal monitor's feed and model, refreshed at its 10 Hz on a thread: when did its
    screen first show the control node STALE, and the robot's mode as unknown?"""

    def __init__(self, robot: Robot) -> None:
        self.feed = MonitorFeed(robot.stack.bus)
        self.model = MonitorModel()
        self.node_stale_ns: int | None = None
        self.robot_unknown_ns: int | None = None
        self.robot_seen = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            now = time.monotonic_ns()
            self.feed.poll(self.model, now)
            snap = self.model.snapshot(now)
            node = next((n for n in snap.nodes if n.name == CONTROL), None)
            if node is not None and node.state is NodeState.STALE and self.node_stale_ns is None:
                self.node_stale_ns = now
            if snap.robot is not None:
                if not snap.robot.stale:
                    self.robot_seen = True
                elif self.robot_seen and self.robot_unknown_ns is None:
                    self.robot_unknown_ns = now

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5.0)
        self.feed.close()


def test_a_killed_control_node_is_stale_at_once_and_the_bridge_goes_safe(robot: Robot) -> None:
    assert wait_until(lambda: robot.log.mode == "run", 5.0)
    screen = MonitorWatch(robot)
    try:
        assert wait_until(lambda: screen.robot_seen, 5.0)
        killed_ns = kill(robot.control)
        _check_kill(robot, killed_ns)
        # The monitor shows it too (issue 11, item 8: it took ≈ 1.2 s and kept "robot: STAND").
        assert wait_until(lambda: screen.node_stale_ns is not None, STALE_S + 1.0)
        assert wait_until(lambda: screen.robot_unknown_ns is not None, 3.0)
    finally:
        screen.close()
    assert screen.node_stale_ns is not None and screen.robot_unknown_ns is not None
    on_screen = (screen.node_stale_ns - killed_ns) / 1e9
    unknown = (screen.robot_unknown_ns - killed_ns) / 1e9
    print(
        f"monitor: control_node STALE {on_screen * 1e3:.0f} ms, robot mode UNKNOWN "
        f"{unknown * 1e3:.0f} ms after SIGKILL"
    )
    assert on_screen < STALE_S  # from the bridge's report, not its own 1.5 s heartbeat clock
    assert unknown <= 0.5 + 0.1 + 0.1 + HEADROOM_S  # state timeout + mirror period + refresh


def _check_kill(robot: Robot, killed_ns: int) -> None:
    delay, before = _safe_delay(robot, killed_ns)
    assert wait_until(lambda: robot.stale_since(killed_ns) is not None, STALE_S + 1.0)
    stale = robot.stale_since(killed_ns)
    assert stale is not None
    detected = (stale.since_ns - killed_ns) / 1e9
    print(
        f"\nFAULT control node killed (SIGKILL): STALE after {detected * 1e3:.0f} ms "
        f"({stale.reason}); safe mode {delay * 1e3:.1f} ms after its last command"
    )
    _check_safe_bound(delay, before)
    assert detected <= STALE_S
    # The robot itself says so on /hb50/status (docs/SAFETY.md): the bridge's liveliness monitor
    # publishes one STALE naming the dead node, as fast as the test's own monitor sees it.
    assert wait_until(lambda: robot.bridge_reports_about(CONTROL, killed_ns), STALE_S + 1.0)
    time.sleep(0.3)
    reports = robot.bridge_reports_about(CONTROL, killed_ns)
    assert [Level(m.level) for _, m in reports] == [Level.STALE], reports
    arrived_ns, stale_report = reports[0]
    on_topic = (arrived_ns - killed_ns) / 1e9
    print(f"STALE on /hb50/status {on_topic * 1e3:.0f} ms after SIGKILL: {stale_report.status}")
    assert on_topic <= STALE_S
    assert CONTROL in stale_report.status
    cycles = robot.log.count
    time.sleep(0.3)
    # Nobody commands the robot any more: the bridge's stance fallback holds it up (safe while the
    # stance settles, then hold), and no cycle runs a command again.
    assert robot.log.mode in ("safe", "hold"), robot.log.since(killed_ns)
    assert "run" not in [c.mode for c in robot.log.since(killed_ns)]
    assert robot.stack.summary().drives_enabled
    assert robot.log.count - cycles > 100  # the bridge loop carries on at 500 Hz
