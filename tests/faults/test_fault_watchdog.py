"""Fault: the command stream stops → the bridge is in safe mode within the watchdog time + a cycle.

Two views of the same bound:

- **cycle-exact** (simulated time, parametrised over the watchdog time): the bridge runs in
  lock-step with a stepped simulator and a fake clock; after the last command, every cycle up to
  ``watchdog_time`` later still applies it, and the first cycle past it writes the safe command
  (damping only, ``kp = 0``, no torque) — never a cycle later.
- **how fast it sinks** (MuJoCo, stepped): the standing hb50 whose commands stop sinks under
  the safe-mode damping; docs/SAFETY.md states the times to 0.15 m and 0.10 m it must not beat.
- **real time** (the robot as ``make demo`` runs it, in this process): the control node stops
  publishing (it is deactivated: one last damping command, then silence); the bridge's 500 Hz
  loop reports ``mode: safe`` in the first cycle more than 250 ms after the last command arrived.
  The delay is printed; asserted against the bound with headroom for this noisy 2-vCPU VM.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import numpy as np
import pytest

from jointbus.bus import MAB_RT, Bus
from jointbus.drivers.sim.driver import SimActuatorArray, SimArrayConfig
from jointbus.model.yaml_loader import load_robot
from jointbus.robots.hb50.bridge.node import BridgeConfig, BridgeMode, BridgeNode
from jointbus.robots.hb50.messages import JointCommand
from jointbus.runtime.timer import TimerThread
from jointbus.stack import Stack
from support.faults import CYCLE_NS, ModeLog, wait_until

ROBOT = load_robot("hb50")
ORDER = ROBOT.actuator_order
HOME = np.array([ROBOT.pose("home")[n] for n in ORDER])
WATCHDOG_S = 0.25  # the robot file's watchdog_time (and the MD drives' own)
HEADROOM_S = 0.05  # real-time runs only: wake-up lateness and host stalls on a loaded VM


class _Clock:
    def __init__(self) -> None:
        self.now = 1_000_000_000_000

    def __call__(self) -> int:
        return self.now


@pytest.mark.parametrize("watchdog_s", [0.05, WATCHDOG_S, 0.5])
def test_the_first_cycle_after_the_watchdog_time_is_safe(watchdog_s: float) -> None:
    clock = _Clock()
    start = SimArrayConfig.from_model(ROBOT, realtime=False, noise=False)
    sim = SimActuatorArray(dataclasses.replace(start, initial_positions=tuple(HOME)))
    bus = Bus()
    timers = TimerThread("watchdog-fault-timers", clock=clock, threaded=False)
    bridge = BridgeNode(
        sim, bus, BridgeConfig(watchdog_s=watchdog_s), timers=timers, run_loop=False
    )
    commands = bus.publisher("/hb50/joint_command", JointCommand, MAB_RT)
    cmd = JointCommand.hold(ORDER, HOME.tolist(), 80.0, 3.0, source_node="control_node")
    try:
        bridge.start()

        def cycle() -> None:
            clock.now += CYCLE_NS
            bridge.cycle(clock.now)
            sim.step(CYCLE_NS / 1e9)
            timers.run_due(clock.now)

        for _ in range(100):
            clock.now += CYCLE_NS
            commands.publish(cmd)  # arrives at clock.now, like a controller publishing each cycle
            bridge.cycle(clock.now)
            sim.step(CYCLE_NS / 1e9)
        assert bridge.mode is BridgeMode.RUN and bridge.last_applied_source == "control_node"
        assert bridge.last_applied is not None
        assert bridge.last_applied.position.tolist() == list(cmd.t_pos)
        last_ns = clock.now  # the stream stops here
        while bridge.mode is BridgeMode.RUN:
            cycle()
            assert clock.now - last_ns <= round(watchdog_s * 1e9) + CYCLE_NS, "safe mode is late"
        silence = clock.now - last_ns
        assert silence > round(watchdog_s * 1e9)  # not before the watchdog time ...
        assert silence - CYCLE_NS <= round(watchdog_s * 1e9)  # ... and the cycle before was not
        assert bridge.mode is BridgeMode.SAFE
        safe = bridge.last_applied
        assert safe is not None
        assert safe.kp.tolist() == [0.0] * 12 and safe.effort.tolist() == [0.0] * 12
        assert min(safe.kd) > 0
        assert bridge.last_state is not None and "mode: safe" in bridge.last_state.status
    finally:
        bridge.shutdown()
        bus.close()


@pytest.fixture(scope="module")
def robot() -> Iterator[tuple[Stack, ModeLog]]:
    with Stack(zenoh=None) as stack:
        log = ModeLog(stack.bus)
        summary = stack.wait_for(lambda s: s.standing and s.bridge_mode == "run", 20.0)
        assert summary.standing, summary
        yield stack, log
        log.close()


def test_a_stopped_command_stream_puts_the_running_robot_in_safe_mode_in_time(
    robot: tuple[Stack, ModeLog],
) -> None:
    stack, log = robot
    bridge, control = stack.bridge, stack.control
    assert bridge is not None and control is not None
    control.deactivate()  # one last damping command, then no more commands
    assert wait_until(lambda: log.mode == "safe", 3.0), log.changes[-3:]
    last_ns = bridge.watchdog.last_feed_ns
    assert last_ns is not None
    safe = log.first(last_ns, lambda c: c.mode == "safe")
    assert safe is not None
    delay = (safe.t_ns - last_ns) / 1e9
    before = (safe.prev_ns - last_ns) / 1e9
    print(
        f"\nFAULT command stream stops: safe mode {delay * 1e3:.1f} ms after the last command "
        f"(bound {WATCHDOG_S * 1e3:.0f} ms + one 2 ms cycle); cycle before at {before * 1e3:.1f} ms"
    )
    assert delay > WATCHDOG_S  # the watchdog time is honoured ...
    assert before <= WATCHDOG_S + 0.001  # ... and the first cycle past it acts (1 ms: stamping)
    assert delay <= WATCHDOG_S + CYCLE_NS / 1e9 + HEADROOM_S
    assert stack.summary().drives_enabled  # damping, not drives off: the robot sinks slowly


#: docs/SAFETY.md: in safe mode the standing hb50 takes at least this long (s) to sink to these
#: heights (m) — measured 0.77 s and 1.91 s with the default damping (0.57 s and 1.53 s with 3.0).
SINK_BOUNDS_S = {0.15: 0.7, 0.10: 1.8}


def test_in_safe_mode_the_standing_hb50_sinks_no_faster_than_documented() -> None:
    from jointbus import drivers
    from jointbus.drivers.sim.mujoco_world import MujocoWorld
    from jointbus.robots.hb50.control.motion import MotionController

    q_stand = MotionController(ROBOT).q_stand
    array = drivers.open("sim://hb50?realtime=false&seed=0")
    with array.locked() as world:  # type: ignore[attr-defined]
        assert isinstance(world, MujocoWorld)
        world.reset(base_height=0.345, joint_positions=q_stand)
    clock = _Clock()
    bus = Bus()
    timers = TimerThread("sink-timers", clock=clock, threaded=False)
    # the damping alone (what a robot already down gets, and `jointbus serve`): a standing hb50
    # gets the stance fallback by default (test_fault_walking.py)
    config = BridgeConfig.from_model(ROBOT, fallback="damping")
    bridge = BridgeNode(array, bus, config, timers=timers, run_loop=False)
    commands = bus.publisher("/hb50/joint_command", JointCommand, MAB_RT)
    cmd = JointCommand.hold(ORDER, q_stand.tolist(), 80.0, 3.0, source_node="control_node")
    heights: list[float] = []
    try:
        bridge.start()
        for k in range(500 + 1500):  # 1 s standing, then 3 s without commands
            clock.now += CYCLE_NS
            if k < 500:
                commands.publish(cmd)
            bridge.cycle(clock.now)
            array.step(CYCLE_NS / 1e9)  # type: ignore[attr-defined]
            if bridge.mode is BridgeMode.SAFE:
                with array.locked() as world:  # type: ignore[attr-defined]
                    heights.append(float(world.base_pose().position[2]))
            elif k >= 500:
                assert k < 500 + WATCHDOG_S * 500 + 1
    finally:
        bridge.shutdown()
        bus.close()
    h = np.array(heights)
    assert h[0] == pytest.approx(0.327, abs=0.01)  # it was standing
    reached = {z: float(np.flatnonzero(h <= z)[0]) * CYCLE_NS / 1e9 for z in SINK_BOUNDS_S}
    print(
        f"\nFAULT safe mode (kd = {bridge.config.safe_kd} N·m·s/rad): the standing hb50 sank from "
        f"{h[0]:.3f} m to 0.15 m in {reached[0.15]:.2f} s, to 0.10 m in {reached[0.10]:.2f} s"
    )
    for height, bound in SINK_BOUNDS_S.items():
        assert reached[height] >= bound, (height, reached[height])
