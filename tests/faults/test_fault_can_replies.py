"""Fault: one motor's CAN replies are lost → that actuator is flagged and the drive goes safe.

The bridge runs on a ``can://`` array — the MIT-mode CAN driver talking to the simulated motor
firmware (:class:`~jointbus.drivers.can.firmware_twin.FirmwareTwin`) on python-can's virtual bus —
in lock-step with a fake clock (one bus exchange per 2 ms cycle), with the control node's
command arriving every cycle. Then the replies of one motor (``rl_j1``, CAN id 8, index 7) stop:

- the cycle after the first missed reply, ``bridge_data`` flags *that* actuator
  (``COMMUNICATION_ERROR``, its position NaN) and no other;
- after ``lost_after`` (5) consecutive misses the driver marks it lost and sends *every* motor
  the safe damping command (``kp = 0``, no torque) — 5 cycles, 10 ms at 500 Hz; from then on
  ``bridge_data`` shows it ``MOTION_ERROR`` (stalled), the bridge's writes are refused naming
  the joint and reported as an ERROR on ``/hb50/status``, and the motors stay on damping.

The driver-level details (the status word, the ``DriveWentSafe`` event, re-arming) are in
``tests/drivers/can/test_can_driver.py``.
"""

from __future__ import annotations

import uuid

import can
import numpy as np
import pytest

from jointbus import drivers
from jointbus.bus import MAB_RT, RELIABLE, Bus
from jointbus.drivers.can.driver import CanActuatorArray
from jointbus.drivers.can.firmware_twin import FirmwareTwin
from jointbus.drivers.can.mit_protocol import MitCommand, decode_command
from jointbus.drivers.can.motor_link import MotorSpec
from jointbus.drivers.can.motor_models import bundled_motor_models
from jointbus.drivers.sim.driver import SimArrayConfig
from jointbus.model.yaml_loader import load_robot
from jointbus.robots.hb50.bridge.node import BridgeConfig, BridgeNode
from jointbus.robots.hb50.messages import BridgeData, JointCommand, JointStatusFlag, Level, Status
from jointbus.runtime.timer import TimerThread

HB50 = load_robot("hb50")
NAMES = HB50.actuator_order
HOME = np.array([HB50.pose("home")[n] for n in NAMES])
MD80 = bundled_motor_models()["md80"]
LOST = 7  # rl_j1
LOST_AFTER = 5
CYCLE_NS = 2_000_000
COMM = int(JointStatusFlag.COMMUNICATION_ERROR)
MOTION = int(JointStatusFlag.MOTION_ERROR)


class _Clock:
    def __init__(self) -> None:
        self.now = 1_000_000_000_000

    def __call__(self) -> int:
        return self.now


@pytest.mark.parametrize("fallback", ["damping", "stance"])
def test_lost_replies_flag_that_actuator_and_put_the_drive_safe(fallback: str) -> None:
    """``fallback``: the bridge's (``stance``: hb50's own, built from the robot file as the
    stack builds it, which takes a refused write for a missed command: its report must not
    say the drives keep the previous command while the driver damps every motor itself)."""
    config = BridgeConfig() if fallback == "damping" else BridgeConfig.from_model(HB50)
    channel = f"jb-fault-can-{uuid.uuid4().hex}"
    twin_bus = can.Bus(interface="virtual", channel=channel)
    listener = can.Bus(interface="virtual", channel=channel)
    twin = FirmwareTwin(
        twin_bus,
        [MotorSpec(name, i + 1, MD80) for i, name in enumerate(NAMES)],
        SimArrayConfig.from_model(HB50, noise=False).params,
        initial_positions=HOME,
    )
    url = f"can://virtual/{channel}?robot=hb50&model=md80&timeout=0.02&lost_after={LOST_AFTER}"
    bus = Bus()
    clock = _Clock()
    data: list[BridgeData] = []
    statuses: list[Status] = []
    bus.subscribe("/hb50/bridge_data", BridgeData, data.append, MAB_RT, realtime=True)
    bus.subscribe("/hb50/status", Status, statuses.append, RELIABLE, realtime=True)
    commands = bus.publisher("/hb50/joint_command", JointCommand, MAB_RT)
    cmd = JointCommand.hold(NAMES, HOME.tolist(), 80.0, 3.0, source_node="control_node")
    try:
        with twin:
            array = drivers.open(url)
            assert isinstance(array, CanActuatorArray)
            timers = TimerThread("can-fault-timers", clock=clock, threaded=False)
            bridge = BridgeNode(array, bus, config, timers=timers, run_loop=False)
            try:
                bridge.start()

                def cycle() -> BridgeData:
                    clock.now += CYCLE_NS
                    commands.publish(cmd)
                    bridge.cycle(clock.now)
                    timers.run_due(clock.now)
                    return data[-1]

                for _ in range(20):
                    frame = cycle()
                assert bridge.last_applied_source == "control_node"
                assert bridge.last_applied is not None
                assert bridge.last_applied.position.tolist() == list(cmd.t_pos)
                assert not any(frame.joint_status)
                twin.drop_replies(LOST + 1, True)  # the motor still acts, its replies are lost
                flagged_at = safe_at = None
                for k in range(1, 40):
                    frame = cycle()
                    status = frame.joint_status
                    if flagged_at is None and status[LOST] & COMM:
                        flagged_at = k
                        assert np.isnan(frame.joint_position[LOST])
                        assert not any(s for i, s in enumerate(status) if i != LOST)
                    if safe_at is None and array.safe:
                        safe_at = k
                    if safe_at is not None and k >= safe_at + 5:
                        break
                print(
                    f"\nFAULT CAN replies lost: actuator flagged in bridge_data of outage cycle "
                    f"{flagged_at} (the first reply is lost in cycle 1's exchange, read in the "
                    f"next); drive safe in outage cycle {safe_at} (lost_after={LOST_AFTER})"
                )
                assert flagged_at == 2  # the exchange of cycle 1 is read in cycle 2
                assert safe_at == LOST_AFTER
                assert array.lost.tolist() == [i == LOST for i in range(12)]
                assert frame.joint_status[LOST] & MOTION  # stalled: not doing what it is told
                assert not any(s for i, s in enumerate(frame.joint_status) if i != LOST)
                bridge.reporter.flush()
                errors = [s.status for s in statuses if s.level == Level.ERROR]
                assert any("rl_j1" in text for text in errors), errors
                if fallback == "stance":
                    (said,) = {
                        t.split(" [")[0] for t in errors
                        if t.startswith("writing the command from 'control_node' failed")
                    }
                    assert "the driver's own fault handling drives the actuators" in said, said
                    assert "keep the previous command" not in said, said
                # On the wire, every motor's latest frame is the safe damping command.
                last: dict[int, MitCommand] = {}
                while (msg := listener.recv(0.0)) is not None:
                    if msg.arbitration_id != 0:
                        decoded = decode_command(msg.data, MD80.ranges)
                        if isinstance(decoded, MitCommand):
                            last[msg.arbitration_id] = decoded
                assert sorted(last) == list(range(1, 13))
                assert all(c.kp == 0.0 and abs(c.torque) < 0.01 and c.kd > 0 for c in last.values())
            finally:
                bridge.shutdown()
    finally:
        bus.close()
        twin_bus.shutdown()
        listener.shutdown()
