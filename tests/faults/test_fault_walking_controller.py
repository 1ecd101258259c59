"""Faults of the control node while the robot trots on a 20 Hz velocity stream that keeps running
(issue 22 item 1, control side; issue 20 item 2): the bridge (a one-node Stack) in this process,
``jointbus control`` in a child process, over Zenoh on loopback; ground truth from the simulator's
``/hb50/sim/ground_truth`` at 500 Hz.

- **Stall** (SIGSTOP 0.5 s mid-trot, then SIGCONT): the bridge's watchdog trips and its fallback
  holds a stance; back, the node steps on the frames that queued in its socket (no gap in their
  stamps), sees the fallback in ``bridge_state`` ("control lost"), stands up from where the body
  is and does not trot away on the stale stream — it walks again only after a zero command.
- **Death** (SIGKILL, a new process started at once): the new node finds the bridge in safe mode;
  up it stands up, down it waits for ``stand_up``; either way the stand-up does not tip the robot
  and the stream still pushing walks it only after a zero command.
"""

from __future__ import annotations

import itertools
import math
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from jointbus.bus import MAB_RT, RELIABLE
from jointbus.messages.geometry_msgs import Twist, Vector3
from jointbus.messages.nav_msgs import Odometry
from jointbus.robots.hb50.messages import Level, MotionMode, RobotState, Status
from jointbus.stack import Stack
from support.faults import (
    end,
    free_port,
    hub_config,
    orphan_shm_files,
    remove_orphan_shm,
    spawn,
    stderr_of,
    wait_until,
)

pytestmark = pytest.mark.long

CONTROL = "control_node"
FORWARD = Twist(Vector3(0.5, 0.0, 0.0), Vector3())
PORT: list[int] = []  # the running fixture's hub port


@dataclass
class Truth:
    """Ground truth samples (wall ns, x, y, z, tilt rad) and the control node's modes."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    samples: list[tuple[int, float, float, float, float]] = field(default_factory=list)
    modes: list[tuple[int, MotionMode]] = field(default_factory=list)
    reports: list[Status] = field(default_factory=list)

    def on_truth(self, m: Odometry) -> None:
        p, q = m.pose.pose.position, m.pose.pose.orientation
        tilt = 2.0 * math.asin(min(1.0, math.hypot(q.x, q.y)))
        with self.lock:
            self.samples.append((time.monotonic_ns(), p.x, p.y, p.z, tilt))

    def on_state(self, m: RobotState) -> None:
        with self.lock:
            self.modes.append((time.monotonic_ns(), MotionMode(m.motion_mode)))

    def on_status(self, m: Status) -> None:
        with self.lock:
            self.reports.append(m)

    def since(self, t_ns: int) -> list[tuple[int, float, float, float, float]]:
        with self.lock:
            return [s for s in self.samples if s[0] >= t_ns]

    def mode(self) -> MotionMode | None:
        with self.lock:
            return self.modes[-1][1] if self.modes else None

    def modes_since(self, t_ns: int) -> set[MotionMode]:
        with self.lock:
            return {m for t, m in self.modes if t >= t_ns}

    def story(self, t_ns: int) -> str:
        """The control node's reports and the mode changes since ``t_ns``: what a failure
        shows (a make test-long run, 2026-12-05, saw LOCOMOTION 15 s after a stall, unexplained
        for want of these)."""
        with self.lock:
            changes, last = [], None
            for t, m in self.modes:
                if t >= t_ns and m is not last:
                    changes.append(f"{(t - t_ns) / 1e9:+.2f} s {m.name}")
                last = m
            said = [
                f"{Level(r.level).name}: {r.status}"
                for r in self.reports
                if r.reporting_node == CONTROL
            ]
        return "modes: " + ", ".join(changes) + "\ncontrol node said:\n  " + "\n  ".join(said[-12:])

    def control_reports(self, text: str, level: Level) -> list[str]:
        with self.lock:
            return [
                r.status
                for r in self.reports
                if r.reporting_node == CONTROL and text in r.status and Level(r.level) is level
            ]


class Stream:
    """A 20 Hz velocity publisher (``topic pub --rate 20``) on its own thread."""

    def __init__(self, stack: Stack) -> None:
        self.pub = stack.bus.publisher("/hb50/velocity_command", Twist, MAB_RT)
        self.twist: Twist | None = None
        self.sent_ns: list[int] = []  # when each command went out (monotonic ns)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            twist = self.twist
            if twist is not None:
                self.pub.publish(twist)
                self.sent_ns.append(time.monotonic_ns())

    def largest_gap_s(self, t_ns: int) -> float:
        """The longest time (s) between two commands sent since ``t_ns``: over the control
        node's ``command_timeout`` (0.5 s) a held command is released by design."""
        sent = [t for t in self.sent_ns if t >= t_ns]
        return max((b - a for a, b in itertools.pairwise(sent)), default=0) / 1e9

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


@pytest.fixture
def robot() -> Iterator[tuple[Stack, Truth, Stream, list[object]]]:
    shm_before = orphan_shm_files()
    port = free_port()
    PORT[:] = [port]
    truth = Truth()
    with Stack(nodes=("bridge",), zenoh=hub_config(port)) as stack:
        bus = stack.bus
        subs = [
            bus.subscribe(
                "/hb50/sim/ground_truth", Odometry, truth.on_truth, MAB_RT, realtime=True
            ),
            bus.subscribe("/hb50/robot_state_10hz", RobotState, truth.on_state, RELIABLE),
            bus.subscribe(
                "/hb50/status", Status, truth.on_status, RELIABLE.with_(depth=1000), realtime=True
            ),
        ]
        stream = Stream(stack)
        children: list[object] = [spawn("control", "--hub-port", str(port))]
        try:
            summary = stack.wait_for(lambda s: s.standing and s.owner == CONTROL, 40.0)
            assert summary.standing, (summary, stderr_of(children[0]))  # type: ignore[arg-type]
            yield stack, truth, stream, children
        finally:
            stream.close()
            for child in children:
                if child.poll() is None:  # type: ignore[attr-defined]
                    child.send_signal(signal.SIGCONT)  # type: ignore[attr-defined]
                end(child)  # type: ignore[arg-type]
            for sub in subs:
                sub.close()
    remove_orphan_shm(shm_before)


def _trot(truth: Truth, stream: Stream) -> None:
    stream.twist = FORWARD
    assert wait_until(lambda: truth.mode() is MotionMode.LOCOMOTION, 10.0)
    time.sleep(2.0)
    trotting = truth.since(time.monotonic_ns() - 1_000_000_000)
    assert truth.mode() is MotionMode.LOCOMOTION and max(s[4] for s in trotting) < 0.5, (
        "the robot must trot upright before the fault"
    )


def _held_then_fresh(truth: Truth, stream: Stream, since_ns: int) -> tuple[float, float]:
    """The robot stands again and stays (the stream still pushing); a zero command, then the
    stream walks it. Returns (worst tilt rad, lowest body m) since ``since_ns``."""
    assert wait_until(lambda: truth.mode() is MotionMode.STAND, 15.0), (
        f"largest gap of the stream {stream.largest_gap_s(since_ns):.2f} s\n"
        + truth.story(since_ns)
    )
    time.sleep(2.0)  # the stream keeps pushing 0.5 m/s
    held = truth.since(time.monotonic_ns() - 1_500_000_000)
    drift = math.hypot(held[-1][1] - held[0][1], held[-1][2] - held[0][2])
    assert truth.mode() is MotionMode.STAND
    assert drift < 0.1, drift  # m in 1.5 s: it did not trot away
    assert wait_until(
        lambda: len(truth.control_reports("velocity held: send zero first", Level.WARN)) == 1, 3.0
    )
    window = truth.since(since_ns)
    worst = max(s[4] for s in window)
    low = min(s[3] for s in window)
    assert MotionMode.FALLEN not in truth.modes_since(since_ns)
    stream.twist = Twist()
    time.sleep(0.3)
    stream.twist = FORWARD
    assert wait_until(lambda: truth.mode() is MotionMode.LOCOMOTION, 5.0)
    assert truth.control_reports("velocity released", Level.OK)
    return worst, low


def test_a_stall_mid_trot_re_enters_standing_and_waits_for_a_fresh_command(
    robot: tuple[Stack, Truth, Stream, list[object]],
) -> None:
    _stack, truth, stream, children = robot
    control = children[0]
    _trot(truth, stream)
    stopped = time.monotonic_ns()
    control.send_signal(signal.SIGSTOP)  # type: ignore[attr-defined]
    time.sleep(0.5)
    control.send_signal(signal.SIGCONT)  # type: ignore[attr-defined]
    assert wait_until(
        lambda: (
            truth.control_reports("control lost", Level.WARN)
            or truth.control_reports("-> DAMPING", Level.WARN)
        ),
        5.0,
    )
    worst, low = _held_then_fresh(truth, stream, stopped)
    print(
        f"\nFAULT control node SIGSTOP 0.5 s mid-trot: lowest body {low:.3f} m, worst tilt "
        f"{worst:.3f} rad"
    )
    assert worst < 0.5


def test_a_killed_and_restarted_control_node_re_enters_from_a_quiet_stance(
    robot: tuple[Stack, Truth, Stream, list[object]],
) -> None:
    stack, truth, stream, children = robot
    _trot(truth, stream)
    killed = time.monotonic_ns()
    children[0].send_signal(signal.SIGKILL)  # type: ignore[attr-defined]
    children[0].wait()  # type: ignore[attr-defined]
    children.append(spawn("control", "--hub-port", str(PORT[0])))  # sends stand_up, as the CLI
    started = time.monotonic_ns()
    found_text = "started while the bridge is in safe mode"
    assert wait_until(lambda: truth.control_reports(found_text, Level.WARN), 10.0)
    found = truth.control_reports(found_text, Level.WARN)[0]
    if "send stand_up" in found:
        stack.command("stand_up")
    worst, low = _held_then_fresh(truth, stream, started)
    print(
        f"\nFAULT control node SIGKILL + restart mid-trot: new node up "
        f"{(started - killed) / 1e9:.1f} s after the kill; lowest body {low:.3f} m, worst tilt "
        f"since its start {worst:.3f} rad; {found[:120]}"
    )
    assert worst < 0.5
