"""Fault: the wall clock jumps → loops on the monotonic clock are undisturbed.

The system clock is not touched: ``time.time`` / ``time.time_ns`` are replaced in this process by a
wall clock that jumps an hour forward, then two hours back (an NTP step, a wrong RTC fixed at
boot), while the 500 Hz bridge runs on its own thread with a controller publishing every 2 ms.

- The message stamps are wall-clock time (as in ROS 2), so they jump — that proves the jump
  reached everything that reads the wall clock.
- The bridge's rate loop (absolute deadlines on ``time.monotonic_ns``) keeps its 500 Hz grid:
  neither a burst of catch-up cycles after the forward jump nor a stall after the backward one.
- The watchdog and the arbitration (times of arrival on the monotonic clock) see no gap: the
  bridge never leaves ``mode: run``, and the owner stays ``control_node``.
"""

from __future__ import annotations

import itertools
import threading
import time

import numpy as np
import pytest

from jointbus.bus import MAB_RT, Bus
from jointbus.drivers.sim.driver import SimActuatorArray, SimArrayConfig
from jointbus.model.yaml_loader import load_robot
from jointbus.robots.hb50.bridge.node import BridgeMode, BridgeNode
from jointbus.robots.hb50.messages import BridgeData, JointCommand
from support.faults import ModeLog, wait_until

ROBOT = load_robot("hb50")
ORDER = ROBOT.actuator_order
HOME = np.array([ROBOT.pose("home")[n] for n in ORDER])
HOUR_NS = 3600 * 1_000_000_000
PHASE_S = 0.5  # s of running before, between and after the jumps
RATE_HZ = 500.0


class JumpingWallClock:
    """The real wall clock plus an offset the test changes (ns)."""

    def __init__(self) -> None:
        self.offset_ns = 0
        self._time_ns = time.time_ns

    def time_ns(self) -> int:
        return self._time_ns() + self.offset_ns

    def time(self) -> float:
        return self.time_ns() / 1e9


def test_a_jumping_wall_clock_moves_the_stamps_and_nothing_else(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wall = JumpingWallClock()
    monkeypatch.setattr(time, "time_ns", wall.time_ns)
    monkeypatch.setattr(time, "time", wall.time)
    sim = SimActuatorArray(SimArrayConfig.from_model(ROBOT, realtime=True, noise=False))
    bus = Bus()
    stamps: list[tuple[int, int]] = []  # (monotonic ns at arrival, header stamp ns)

    def on_frame(frame: BridgeData) -> None:
        stamps.append((time.monotonic_ns(), frame.header.stamp.to_ns()))

    bus.subscribe("/hb50/bridge_data", BridgeData, on_frame, MAB_RT, realtime=True)
    pub = bus.publisher("/hb50/joint_command", JointCommand, MAB_RT)
    log = ModeLog(bus)
    bridge = BridgeNode(sim, bus)
    stop = threading.Event()

    def controller() -> None:
        cmd = JointCommand.hold(ORDER, HOME.tolist(), 80.0, 3.0, source_node="control_node")
        while not stop.is_set():
            pub.publish(cmd)
            time.sleep(0.002)

    thread = threading.Thread(target=controller, daemon=True)
    phases: list[tuple[int, int, int, int]] = []  # (start ns, end ns, cycles at start, at end)
    try:
        bridge.start()
        thread.start()
        assert wait_until(lambda: bridge.mode is BridgeMode.RUN, 10.0)
        # The log hears of the change to run over the bus, a little after the bridge made it.
        assert wait_until(lambda: log.mode == "run", 5.0), log.changes
        running_ns = time.monotonic_ns()
        for offset in (0, HOUR_NS, -HOUR_NS):
            wall.offset_ns = offset  # the jump
            start, cycles = time.monotonic_ns(), bridge.cycles
            time.sleep(PHASE_S)
            phases.append((start, time.monotonic_ns(), cycles, bridge.cycles))
        loop = bridge.rate_loops["bridge"].stats()
    finally:
        stop.set()
        thread.join()
        bridge.shutdown()
        log.close()
        bus.close()
    steps = [b[1] - a[1] for a, b in itertools.pairwise(stamps)]
    rates = [(c1 - c0) / ((t1 - t0) / 1e9) for t0, t1, c0, c1 in phases]
    print(
        f"\nFAULT wall clock +1 h then -2 h: stamp steps {max(steps) / 1e9:+.0f} s and "
        f"{min(steps) / 1e9:+.0f} s; bridge loop {', '.join(f'{r:.0f}' for r in rates)} Hz per "
        f"phase; period max {loop.period_max_s * 1e3:.2f} ms; modes since running: "
        f"{[c.mode for c in log.since(running_ns)]}"
    )
    assert max(steps) > 0.99 * HOUR_NS and min(steps) < -1.99 * HOUR_NS  # the stamps jumped
    assert not log.since(running_ns)  # no safe mode, no owner change: nothing noticed
    # A loop on the wall clock would stall for an hour after the backward jump and run an hour
    # of catch-up cycles after the forward one. Bounds loose enough for a loaded VM (whose
    # stalls cost cycles: they are skipped, never caught up) and far from either failure:
    for rate in rates:
        assert 0.2 * RATE_HZ <= rate <= 1.02 * RATE_HZ
    assert loop.period_max_s < PHASE_S / 2
