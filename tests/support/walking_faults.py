"""Faults while the hb50 trots: the robot in its process layout, a velocity stream, ground truth.

Where it sits: :mod:`support`, for ``tests/faults/test_fault_walking.py`` (and the chaos
campaign). :class:`WalkingRig` runs :class:`~jointbus.stack.Stack`'s default layout (bridge with
the simulator in one process, the control node in another, Zenoh on loopback), streams a
velocity command at 20 Hz from a thread of the test process (or from a ``jointbus topic pub``
child, which a fault may kill), and watches the simulator's ground truth
(``/hb50/sim/ground_truth``, 500 Hz): body height and tilt, the worst of each over a window. The
bridge watches every measured joint reading against the limits and reports each excursion on
``/hb50/status`` (JSON ``"event": "limit"``): :meth:`WalkingRig.limit_excursions` collects them.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from jointbus.bus import MAB_RT, ZenohConfig
from jointbus.messages.geometry_msgs import Twist, Vector3
from jointbus.messages.nav_msgs import Odometry
from jointbus.robots.hb50.messages import Status
from jointbus.stack import Stack
from support.bus import free_port, wait_until

#: Issue 22's bounds while faults hit a trotting robot.
MIN_HEIGHT_M = 0.2
MAX_TILT_RAD = 0.5


def tilt_of(x: float, y: float, z: float, w: float) -> float:
    """Angle (rad) between the body's z axis and the vertical, for orientation (x, y, z, w)."""
    norm = x * x + y * y + z * z + w * w
    up = (w * w - x * x - y * y + z * z) / norm
    return math.acos(max(-1.0, min(1.0, up)))


@dataclass
class Window:
    """Worst ground truth seen since :meth:`WalkingRig.window` opened it (m, rad)."""

    min_height: float = math.inf
    max_tilt: float = 0.0
    samples: int = 0
    heights: list[tuple[float, float]] = field(default_factory=list)  # (wall s, height m)

    def add(self, now: float, height: float, tilt: float) -> None:
        self.min_height = min(self.min_height, height)
        self.max_tilt = max(self.max_tilt, tilt)
        self.samples += 1
        self.heights.append((now, height))


class WalkingRig:
    """A running stack, its ground truth and a velocity stream (see the module docstring)."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.bus = stack.bus
        self._lock = threading.Lock()
        self._windows: list[Window] = []
        self.height = math.nan
        self.tilt = math.nan
        self.reports: list[Status] = []
        self._velocity = self.bus.publisher(
            f"/{stack.namespace}/velocity_command", Twist, MAB_RT
        )
        self._speed: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._stream, name="velocity", daemon=True)
        self._thread.start()
        self._truth = self.bus.subscribe(
            f"/{stack.namespace}/sim/ground_truth", Odometry, self._on_truth, MAB_RT,
            realtime=True,
        )
        self.publisher_process: subprocess.Popen[bytes] | None = None

    @classmethod
    @contextmanager
    def running(cls) -> Iterator[WalkingRig]:
        """The default layout standing, with a rig around it; everything stopped afterwards."""
        with Stack(zenoh=ZenohConfig(hub_port=free_port())) as stack:
            assert stack.wait_for(lambda s: s.standing, 60.0).standing
            rig = cls(stack)
            try:
                assert wait_until(lambda: not math.isnan(rig.height), 10.0)
                yield rig
            finally:
                rig.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2.0)
        self._truth.close()
        self.kill_publisher_process()

    # ---- ground truth ----------------------------------------------------------------------
    def _on_truth(self, msg: Odometry) -> None:
        p, q = msg.pose.pose.position, msg.pose.pose.orientation
        tilt = tilt_of(q.x, q.y, q.z, q.w)
        now = time.monotonic()
        with self._lock:
            self.height, self.tilt = p.z, tilt
            for window in self._windows:
                window.add(now, p.z, tilt)

    @contextmanager
    def window(self) -> Iterator[Window]:
        """The worst height and tilt while the ``with`` block runs."""
        w = Window()
        with self._lock:
            self._windows.append(w)
        try:
            yield w
        finally:
            with self._lock:
                self._windows.remove(w)

    # ---- velocity --------------------------------------------------------------------------
    def _stream(self) -> None:
        while not self._stop.wait(0.05):
            speed = self._speed
            if speed is not None:
                self._velocity.publish(Twist(Vector3(speed, 0.0, 0.0), Vector3()))

    def walk(self, speed: float) -> None:
        """Stream ``speed`` (normalised forward velocity, × ``cmd_vel_lin`` = 1 m/s) at 20 Hz."""
        self._speed = speed

    def stop_stream(self) -> None:
        self._speed = None

    def publish_velocity(self, speed: float) -> None:
        """One velocity command now (beside the stream)."""
        self._velocity.publish(Twist(Vector3(speed, 0.0, 0.0), Vector3()))

    def start_publisher_process(self, speed: float) -> None:
        """A ``jointbus topic pub`` child streaming ``speed`` at 20 Hz (a fault may kill it)."""
        zenoh = self.stack.zenoh
        assert zenoh is not None
        self.publisher_process = subprocess.Popen(
            [
                sys.executable, "-m", "jointbus.cli.main", "topic", "pub",
                f"/{self.stack.namespace}/velocity_command", "geometry_msgs/msg/Twist",
                f"{{linear: {{x: {speed}}}}}", "--rate", "20",
                "--hub-port", str(zenoh.hub_port),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def kill_publisher_process(self) -> None:
        proc = self.publisher_process
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(5.0)
        self.publisher_process = None

    # ---- the robot's processes -------------------------------------------------------------
    def pid(self, name: str) -> int:
        group = self.stack.processes
        assert group is not None
        pid = group.pid(name)
        assert pid is not None
        return pid

    def stall(self, name: str, seconds: float) -> None:
        """SIGSTOP process ``name`` of the layout for ``seconds``, then SIGCONT."""
        pid = self.pid(name)
        os.kill(pid, signal.SIGSTOP)
        try:
            time.sleep(seconds)
        finally:
            os.kill(pid, signal.SIGCONT)

    # ---- reports ---------------------------------------------------------------------------
    def take_reports(self) -> list[Status]:
        self.reports.extend(self.stack.take_reports())
        return self.reports

    def reported(self, text: str) -> bool:
        return any(text in r.status for r in self.take_reports())

    def limit_excursions(self) -> list[dict[str, object]]:
        """Measured excursions past a position or speed limit the bridge reported so far."""
        out = []
        for report in self.take_reports():
            try:
                facts = json.loads(bytes(report.data).decode() or "{}")
            except (ValueError, UnicodeDecodeError):
                continue
            if (
                isinstance(facts, dict)
                and facts.get("event") == "limit"
                and facts.get("kind") in ("position", "speed")
            ):
                out.append(facts)
        return out
