"""Fault, judged on MuJoCo ground truth: stand → e-stop → fall → reset, the default flow.

The robot as ``make demo`` runs it (bridge, control node and the simulated hb50 in this process),
and the user does only what issue 11 item 1 did: ``jointbus estop`` while it stands, then
``jointbus estop --reset`` once it lies on the floor — no ``mode idle`` in between. Every bridge
cycle the simulator's own state is sampled (a realtime ``bridge_data`` subscription runs inside the
bridge's cycle): base height, roll and pitch, and the true joint velocities.

What a user relies on:

- the control node notices the e-stop: it leaves STAND and says so in RobotState (DAMPING);
- after the reset the robot stands up *smoothly*, from where it lies: no joint faster than its
  velocity limit (the measured maximum is printed for docs/SAFETY.md), the body never above the
  stand height plus a margin (before the fix it was thrown to 0.56 m), never rolled or pitched
  over, and standing again at ≈ 0.33 m in STAND;
- the bridge rejects none of the control node's commands in the whole flow (issue 11 item 2:
  after a collapse its stand-up targets stay inside the joint limits).

Bounds do not depend on the host's speed: a loaded host slows the simulated time, not the motion
the bridge lets through (its ramp counts cycles).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pytest

from jointbus.bus import MAB_RT, RELIABLE
from jointbus.drivers.sim.mujoco_world import MujocoWorld
from jointbus.robots.hb50.messages import (
    BridgeData,
    JointCommand,
    Level,
    MotionMode,
    RobotState,
    Status,
)
from jointbus.stack import Stack
from support.faults import wait_until

#: How far above the stand height the body may get while standing up again (m).
HEIGHT_MARGIN_M = 0.03
#: Largest roll or pitch (rad) while standing up again: the body stays level-ish.
TILT_MAX_RAD = 0.3


@dataclass
class Truth:
    """Truth per bridge cycle: (monotonic s, height m, roll, pitch rad, |joint vel| rad/s)."""

    rows: list[tuple[float, float, float, float, np.ndarray]] = field(default_factory=list)
    modes: list[tuple[float, MotionMode]] = field(default_factory=list)
    statuses: list[Status] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def height(self) -> float:
        """The newest ground-truth base height (m; NaN before the first sample)."""
        with self.lock:
            return self.rows[-1][1] if self.rows else math.nan

    def between(self, t0: float, t1: float) -> list[tuple[float, float, float, float, np.ndarray]]:
        with self.lock:
            return [r for r in self.rows if t0 <= r[0] < t1]


def _roll_pitch(q: np.ndarray) -> tuple[float, float]:
    w, x, y, z = q.tolist()
    roll = math.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = math.asin(max(-1.0, min(1.0, 2 * (w * y - z * x))))
    return roll, pitch


@pytest.fixture(scope="module")
def standing() -> Iterator[tuple[Stack, Truth]]:
    with Stack(zenoh=None, estop_category=0) as stack:  # STO: the drives off at the latch
        array = stack.array
        assert array is not None
        truth = Truth()

        def sample(_data: BridgeData) -> None:
            with array.locked() as physics:  # type: ignore[attr-defined]
                assert isinstance(physics, MujocoWorld)
                pose = physics.base_pose()
                speeds = np.abs(physics.joint_velocities())
            roll, pitch = _roll_pitch(pose.orientation)
            with truth.lock:
                truth.rows.append((time.monotonic(), float(pose.position[2]), roll, pitch, speeds))

        def mode(state: RobotState) -> None:
            with truth.lock:
                if not truth.modes or truth.modes[-1][1] != state.motion_mode:
                    truth.modes.append((time.monotonic(), MotionMode(state.motion_mode)))

        subs = [
            stack.bus.subscribe("/hb50/bridge_data", BridgeData, sample, MAB_RT, realtime=True),
            stack.bus.subscribe("/hb50/robot_state", RobotState, mode, MAB_RT, realtime=True),
            stack.bus.subscribe(
                "/hb50/status", Status, truth.statuses.append, RELIABLE, realtime=True
            ),
        ]
        try:
            summary = stack.wait_for(lambda s: s.standing and s.true_base_height_m > 0.3, 30.0)
            assert summary.standing, summary
            yield stack, truth
        finally:
            for sub in subs:
                sub.close()


def test_estop_reset_in_the_default_flow_stands_the_robot_up_smoothly(
    standing: tuple[Stack, Truth],
) -> None:
    stack, truth = standing
    control, bridge = stack.control, stack.bridge
    assert control is not None and bridge is not None
    model = stack.model
    limits = np.array(
        [
            {j.name: j for j in model.actuated_joints()}[n].limits.velocity_max
            for n in model.actuator_order
        ]
    )
    stand_height = control.motion.params.stand_height
    rejected_before = bridge.rejected
    time.sleep(0.5)
    t_estop = time.monotonic()
    stack.hardware_command("estop")
    # The control node follows the bridge: out of STAND, and RobotState says so.
    assert wait_until(lambda: control.motion.mode is MotionMode.DAMPING, 2.0)
    assert wait_until(lambda: truth.modes[-1][1] is MotionMode.DAMPING, 2.0), truth.modes
    assert wait_until(lambda: truth.height() < 0.12, 5.0)
    time.sleep(0.5)  # lying on the floor
    fallen = truth.between(t_estop, time.monotonic())
    lowest = min(r[1] for r in fallen)
    t_reset = time.monotonic()
    stack.hardware_command("reset")  # the default flow: no `mode idle` first
    up = stack.wait_for(
        lambda s: s.motion_mode == "STAND" and abs(s.true_base_height_m - 0.33) < 0.02, 15.0
    )
    time.sleep(1.0)  # and it stays there
    after = truth.between(t_reset, time.monotonic())
    heights = np.array([r[1] for r in after])
    tilt = max(max(abs(r[2]), abs(r[3])) for r in after)
    speeds = np.array([r[4] for r in after])
    fastest = int(np.argmax(speeds.max(axis=0)))
    top_speed = float(speeds.max())
    print(
        f"\nFAULT e-stop reset (default flow, MuJoCo truth): fell to {lowest:.3f} m; after the "
        f"reset the body rose to at most {heights.max():.3f} m (stand height {stand_height} m), "
        f"|roll|,|pitch| ≤ {tilt:.3f} rad, fastest joint {model.actuator_order[fastest]} at "
        f"{top_speed:.2f} rad/s (limit {limits[fastest]:g}), standing at {heights[-1]:.3f} m "
        f"in {after[-1][0] - t_reset:.1f} s; modes {[m.name for _t, m in truth.modes[-4:]]}"
    )
    assert up.motion_mode == "STAND", up
    assert (speeds <= limits).all()
    assert heights.max() <= stand_height + HEIGHT_MARGIN_M
    assert tilt <= TILT_MAX_RAD
    assert heights[-1] == pytest.approx(0.33, abs=0.02)
    # It rose through a stand-up from where it lay, not by a jump to the standing targets.
    modes_after = [m for t, m in truth.modes if t >= t_reset]
    assert MotionMode.STAND_UP in modes_after
    # Not one of the control node's commands was refused (issue 11 item 2).
    assert bridge.rejected == rejected_before
    refused = [
        s.status for s in truth.statuses if s.level == Level.ERROR and "control_node" in s.status
    ]
    assert not refused, refused


def test_a_source_that_ignores_the_estop_is_ramped_to_by_the_bridge(
    standing: tuple[Stack, Truth],
) -> None:
    """The bridge's own layer, whatever the source: a custom controller that takes over and keeps
    sending the standing pose through the e-stop and the reset (it never looks at the robot)
    gets its target *ramped to* from where the robot lies, at the re-entry speed."""
    stack, truth = standing
    bridge, control = stack.bridge, stack.control
    assert bridge is not None and control is not None
    q_stand = control.motion.q_stand.tolist()
    names = stack.model.actuator_order
    publisher = stack.bus.publisher("/hb50/joint_command", JointCommand, MAB_RT)
    stop = threading.Event()

    def stubborn() -> None:
        while not stop.is_set():
            publisher.publish(JointCommand.hold(names, q_stand, 80.0, 3.0, source_node="stubborn"))
            time.sleep(0.002)

    sender = threading.Thread(target=stubborn, daemon=True)
    sender.start()
    try:
        assert wait_until(lambda: bridge.owner == "stubborn", 5.0)
        stack.hardware_command("estop")
        assert wait_until(lambda: truth.height() < 0.12, 5.0)
        time.sleep(0.5)
        t_reset = time.monotonic()
        stack.hardware_command("reset")
        assert wait_until(lambda: bridge.reentry.ramping, 2.0)
        assert wait_until(lambda: not bridge.reentry.ramping, 10.0)
        time.sleep(0.5)
        after = truth.between(t_reset, time.monotonic())
    finally:
        stop.set()
        sender.join()
        publisher.close()
    heights = np.array([r[1] for r in after])
    tilt = max(max(abs(r[2]), abs(r[3])) for r in after)
    top_speed = float(np.array([r[4] for r in after]).max())
    speed = bridge.config.reentry_speed
    print(
        f"\nFAULT e-stop reset under a source that ignores it (MuJoCo truth): body at most "
        f"{heights.max():.3f} m, |roll|,|pitch| ≤ {tilt:.3f} rad, fastest joint "
        f"{top_speed:.2f} rad/s (re-entry speed {speed:g} rad/s), standing at {heights[-1]:.3f} m"
    )
    assert bridge.owner == "control_node" or bridge.owner == "stubborn"
    assert top_speed <= 2 * speed  # the joints follow the ramped target (24 rad/s before)
    assert heights.max() <= control.motion.params.stand_height + HEIGHT_MARGIN_M
    assert tilt <= TILT_MAX_RAD
    assert heights[-1] == pytest.approx(0.33, abs=0.02)
    assert any("re-entry after e-stop reset" in s.status for s in truth.statuses)
