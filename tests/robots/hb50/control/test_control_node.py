"""The control node on an in-process bus, closed around the simulated robot in MuJoCo.

The test plays the bridge: it publishes each BridgeData frame from the simulator, waits for the
node's JointCommand and applies it to the simulated drives — lock-step, so the result does not
depend on this machine's speed.
"""

from __future__ import annotations

import dataclasses
import math
import queue
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator

import numpy as np
import pytest

from jointbus.bus import LATCHED, MAB_RT, RELIABLE, Bus
from jointbus.drivers.sim.mujoco_world import MujocoWorld
from jointbus.messages.geometry_msgs import Quaternion, Twist, Vector3
from jointbus.messages.sensor_msgs import JointState
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import String
from jointbus.messages.tf2_msgs import TFMessage
from jointbus.robots.hb50.control.node import ControlNode, drives_available
from jointbus.robots.hb50.messages import (
    BridgeData,
    BridgeState,
    JointCommand,
    Level,
    MotionGait,
    MotionMode,
    MotionType,
    RobotState,
    Status,
)
from jointbus.runtime.timer import TimerThread
from support.hb50_sim import PERIOD, apply, frame, hb50, lying_world

TIMEOUT = 5.0


def wait_until(predicate: Callable[[], bool], timeout: float = TIMEOUT) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.005)
    return predicate()


class Rig:
    """The node, the simulated robot and the test's endpoints on one bus."""

    def __init__(self, bus: Bus, world: MujocoWorld) -> None:
        self.bus = bus
        self.world = world
        self.node = ControlNode(bus, hb50())
        self.commands: queue.Queue[JointCommand] = queue.Queue()
        self.statuses: list[Status] = []
        bus.subscribe("/hb50/joint_command", JointCommand, self.commands.put, MAB_RT, realtime=True)
        bus.subscribe("/hb50/status", Status, self.statuses.append, RELIABLE, realtime=True)
        self.states = bus.subscribe("/hb50/robot_state", RobotState, None, MAB_RT)
        self.states_10hz = bus.subscribe("/hb50/robot_state_10hz", RobotState, None, RELIABLE)
        self.joint_states = bus.subscribe("/hb50/joint_states", JointState, None, RELIABLE)
        self.tf = bus.subscribe("/tf", TFMessage, None, RELIABLE)
        self.frames = bus.publisher("/hb50/bridge_data", BridgeData, MAB_RT)
        self.control = bus.publisher("/hb50/control_command", String, RELIABLE)
        self.velocity = bus.publisher("/hb50/velocity_command", Twist, MAB_RT)
        self.node.start()

    def cycle(self, data: BridgeData | None = None) -> JointCommand:
        self.frames.publish(data if data is not None else frame(self.world))
        command = self.commands.get(timeout=TIMEOUT)
        apply(self.world, command)
        self.world.step(PERIOD)
        return command

    def run(self, seconds: float) -> JointCommand:
        command = self.cycle()
        for _ in range(round(seconds / PERIOD) - 1):
            command = self.cycle()
        return command

    def status_with(self, text: str, level: Level) -> bool:
        return any(s.level == level and text in s.status for s in self.statuses)


@pytest.fixture
def rig() -> Iterator[Rig]:
    bus = Bus(name="control-test")
    made = Rig(bus, lying_world())
    try:
        yield made
    finally:
        made.node.shutdown()
        bus.close()


def test_the_node_stands_the_robot_up_on_command(rig: Rig) -> None:
    idle = rig.run(0.1)
    assert idle.source_node == "control_node"
    assert set(idle.kp) == {0.0}
    rig.control.publish(String("stand_up"))
    assert wait_until(lambda: rig.node.motion.mode is MotionMode.STAND_UP)
    assert wait_until(lambda: rig.status_with("IDLE -> STAND_UP", Level.OK))
    last = rig.run(rig.node.motion.params.stand_up_time + 1.0)
    assert set(last.kp) == {80.0}
    truth = rig.world.base_pose()
    assert truth.position[2] == pytest.approx(0.34, rel=0.10)
    assert rig.world.foot_contacts().all()

    state = rig.states.latest()
    assert state is not None
    assert state.motion_mode == MotionMode.STAND
    assert (state.motion_type, state.motion_gait) == (MotionType.POSTURE, MotionGait.STAND)
    assert [leg.leg_name for leg in state.leg] == ["fr", "fl", "rl", "rr"]
    assert all(leg.contact for leg in state.leg)
    assert state.pose.position.z == pytest.approx(truth.position[2], abs=0.02)
    assert state.header.frame_id == "odom"
    assert sum(leg.foot_force_est.z for leg in state.leg) == pytest.approx(
        hb50().total_mass() * 9.81, rel=0.15
    )
    assert wait_until(lambda: rig.node.motion.mode is MotionMode.STAND)


def test_slow_topics_and_static_frames(rig: Rig) -> None:
    rig.run(0.3)
    assert wait_until(lambda: rig.states_10hz.queued > 0 and rig.joint_states.queued > 0)
    assert wait_until(lambda: rig.tf.queued > 0)
    joints = rig.joint_states.latest()
    assert joints is not None and joints.name == hb50().actuator_order
    assert len(joints.position) == len(joints.velocity) == len(joints.effort) == 12
    tf = rig.tf.latest()
    assert tf is not None
    children = {t.child_frame_id for t in tf.transforms}
    assert {"body", "fr_hip", "rr_shank"} <= children
    # /tf_static is latched: a subscriber that comes late still gets it
    late = rig.bus.subscribe("/tf_static", TFMessage, None, LATCHED)
    static = late.take()
    assert static is not None
    assert {t.child_frame_id for t in static.transforms} >= {"imu", "fr_foot"}


def test_refused_and_unknown_commands_are_reported(rig: Rig) -> None:
    rig.run(0.02)
    rig.control.publish(String("sit_down"))
    rig.control.publish(String("dance"))
    assert wait_until(lambda: rig.status_with("refused in mode IDLE", Level.WARN))
    assert wait_until(lambda: rig.status_with("unknown motion command 'dance'", Level.WARN))
    assert rig.node.motion.mode is MotionMode.IDLE


def test_velocity_command_moves_the_standing_body(rig: Rig) -> None:
    rig.run(0.02)
    rig.control.publish(String("stand_up"))
    assert wait_until(lambda: rig.node.motion.mode is MotionMode.STAND_UP)
    rig.run(rig.node.motion.params.stand_up_time + 0.5)
    assert rig.node.motion.mode is MotionMode.STAND
    lowered = Twist(Vector3(0.0, 0.0, 0.8), Vector3())
    for _ in range(round(1.5 / PERIOD)):
        rig.velocity.publish(lowered)
        rig.cycle()
    assert rig.world.base_pose().position[2] == pytest.approx(0.8 * 0.34, abs=0.03)
    rig.velocity.publish(Twist(Vector3(2.0, 0.0, 1.0), Vector3()))
    assert wait_until(lambda: rig.status_with("clamped: linear.x 2.0 → 1.0", Level.WARN))


def _stand(rig: Rig) -> float:
    """Stand the robot up and let it settle; its ground-truth base height (m)."""
    rig.run(0.02)
    rig.control.publish(String("stand_up"))
    assert wait_until(lambda: rig.node.motion.mode is MotionMode.STAND_UP)
    rig.run(rig.node.motion.params.stand_up_time + 0.5)
    assert rig.node.motion.mode is MotionMode.STAND
    return float(rig.world.base_pose().position[2])


def _hold(rig: Rig, twist: Twist, seconds: float) -> None:
    """Publish ``twist`` at 20 Hz for ``seconds`` of simulated time, as ``topic pub --rate 20``."""
    for _ in range(round(seconds / 0.05)):
        rig.velocity.publish(twist)
        rig.run(0.05)


def test_the_body_stands_a_little_below_the_commanded_stand_height(rig: Rig) -> None:
    """``stand_height`` is the commanded height: without gravity feed-forward the stand gains
    let the body sag about 1.3 cm under its weight (what the parameter description says)."""
    sag = rig.node.motion.params.stand_height - _stand(rig)
    assert 0.008 < sag < 0.02


def test_a_plain_twist_keeps_the_stand_height(rig: Rig) -> None:
    """A ROS Twist leaves ``linear.z`` at 0: that is "height not commanded", not "crouch"."""
    standing = _stand(rig)
    _hold(rig, Twist(Vector3(), Vector3()), 1.5)
    assert rig.world.base_pose().position[2] == pytest.approx(standing, abs=0.005)
    assert not rig.status_with("body height", Level.WARN)


def test_a_walk_command_without_height_walks_at_the_stand_height(rig: Rig) -> None:
    standing = _stand(rig)
    _hold(rig, Twist(Vector3(0.5, 0.0, 0.0), Vector3()), 3.0)
    assert rig.node.motion.mode is MotionMode.LOCOMOTION
    rig.control.publish(String("stand"))
    _hold(rig, Twist(Vector3(), Vector3()), 1.5)
    assert rig.node.motion.mode is MotionMode.STAND
    assert rig.world.base_pose().position[2] == pytest.approx(standing, abs=0.005)
    assert not rig.status_with("body height", Level.WARN)


def test_a_commanded_height_still_lowers_the_body_and_is_reported_once(rig: Rig) -> None:
    standing = _stand(rig)
    _hold(rig, Twist(Vector3(0.0, 0.0, 0.5), Vector3()), 2.0)
    assert rig.world.base_pose().position[2] < standing - 0.05
    assert wait_until(lambda: rig.status_with("body height", Level.WARN))
    reports = [s for s in rig.statuses if "body height" in s.status]
    assert len(reports) == 1, [s.status for s in reports]
    assert "linear.z = 0.5" in reports[0].status


def test_an_unusable_frame_is_reported_and_not_acted_on(rig: Rig) -> None:
    rig.run(0.02)
    good = frame(rig.world)
    partial = BridgeData(
        header=good.header,
        joint_name=good.joint_name[:11],
        joint_position=good.joint_position[:11],
        joint_velocity=good.joint_velocity[:11],
        joint_effort=good.joint_effort[:11],
        joint_temperature=good.joint_temperature[:11],
        joint_status=good.joint_status[:11],
    )
    rig.frames.publish(partial)
    assert wait_until(lambda: rig.node.frames_rejected == 1)
    assert rig.commands.empty()
    assert wait_until(lambda: rig.status_with("unknown joint 'rr_j2'", Level.ERROR))


def test_deactivation_damps_a_robot_that_is_down(rig: Rig) -> None:
    rig.run(0.1)  # lying, IDLE
    while not rig.commands.empty():
        rig.commands.get_nowait()
    rig.node.deactivate()
    last = rig.commands.get(timeout=TIMEOUT)
    assert set(last.kp) == {0.0} and set(last.kd) == {rig.node.motion.params.idle_kd}
    assert rig.node.motion.mode is MotionMode.IDLE


def test_deactivation_sends_no_damping_to_a_robot_that_is_up(rig: Rig) -> None:
    """Damping would fold a standing robot; the bridge's fallback sits it down instead."""
    rig.run(0.02)
    rig.control.publish(String("stand_up"))
    assert wait_until(lambda: rig.node.motion.mode is MotionMode.STAND_UP)
    rig.run(0.2)
    while not rig.commands.empty():
        rig.commands.get_nowait()
    rig.node.deactivate()
    with pytest.raises(queue.Empty):
        rig.commands.get(timeout=0.5)
    assert rig.node.motion.mode is MotionMode.IDLE
    assert wait_until(lambda: rig.status_with("deactivated in mode STAND_UP", Level.WARN))


def test_the_node_follows_the_bridge_out_of_stand_and_back_through_a_stand_up(rig: Rig) -> None:
    """What ``/hb50/bridge_state`` says decides: an e-stop takes the node out of STAND (DAMPING in
    RobotState, a WARN), the reset brings it back through a stand-up from the measured pose."""
    states = rig.bus.publisher("/hb50/bridge_state", BridgeState, MAB_RT)
    running = BridgeState(drives_enabled=True, status=("owner: control_node", "mode: run"))
    states.publish(running)
    rig.run(0.05)
    rig.control.publish(String("stand_up"))
    assert wait_until(lambda: rig.node.motion.mode is MotionMode.STAND_UP)
    rig.run(rig.node.motion.params.stand_up_time + 0.3)
    assert rig.node.motion.mode is MotionMode.STAND
    states.publish(
        BridgeState(
            drives_enabled=False,
            status=("owner: control_node", "mode: estop", "estop: hardware_command estop"),
        )
    )
    damping = rig.cycle()
    assert rig.node.motion.mode is MotionMode.DAMPING
    assert set(damping.kp) == {0.0}
    state = rig.states.latest()
    assert state is not None and state.motion_mode == MotionMode.DAMPING
    assert wait_until(lambda: rig.status_with("STAND -> DAMPING: e-stop latched", Level.WARN))
    rig.world.actuators.set_power(np.zeros(12, dtype=np.bool_))  # the drives are off: it falls
    rig.run(1.0)
    fallen = np.array(frame(rig.world).joint_position)
    rig.world.actuators.set_power(np.ones(12, dtype=np.bool_))
    states.publish(BridgeState(drives_enabled=True, status=("owner: control_node", "mode: hold")))
    first = rig.cycle()
    assert rig.node.motion.mode is MotionMode.STAND_UP
    assert np.max(np.abs(np.array(first.t_pos) - fallen)) < 0.05  # from where it lies
    assert wait_until(lambda: rig.status_with("DAMPING -> STAND_UP: the drives are back", Level.OK))
    tilt = 0.0
    for _ in range(round(6.0 / PERIOD)):  # fold the sprawled legs, then the stand-up proper
        rig.cycle()
        _w, x, y, _z = rig.world.base_pose().orientation.tolist()
        tilt = max(tilt, 2 * math.asin(min(1.0, math.hypot(x, y))))  # angle off upright
        if rig.node.motion.mode is MotionMode.STAND:
            break
    rig.run(0.3)
    assert rig.node.motion.mode is MotionMode.STAND
    assert tilt < 0.3, tilt
    assert rig.world.base_pose().position[2] == pytest.approx(0.33, abs=0.02)


def test_a_tipped_robot_says_why_it_does_not_stand_up_when_the_drives_are_back(rig: Rig) -> None:
    """The bridge's fallback hands over a robot that tipped past 0.5 rad; the node does not stand
    it up until it is upright (a stand-up on it rolled it over) — and says so, once, with the
    tilt, rather than waiting in DAMPING without a word."""
    states = rig.bus.publisher("/hb50/bridge_state", BridgeState, MAB_RT)
    states.publish(BridgeState(drives_enabled=True, status=("owner: control_node", "mode: run")))
    rig.run(0.05)
    rig.control.publish(String("stand_up"))
    assert wait_until(lambda: rig.node.motion.mode is MotionMode.STAND_UP)
    rig.run(rig.node.motion.params.stand_up_time + 0.3)
    states.publish(BridgeState(drives_enabled=False, status=("owner: none", "mode: safe")))
    rig.cycle()
    assert rig.node.motion.mode is MotionMode.DAMPING
    roll = 0.7  # rad: past upright (0.5), short of fallen (1.0)
    half = roll / 2
    tipped = dataclasses.replace(
        frame(rig.world), orientation=Quaternion(math.sin(half), 0.0, 0.0, math.cos(half))
    )
    for _ in range(5):  # the body tips while the drives are off
        rig.cycle(dataclasses.replace(tipped, header=frame(rig.world).header))
    states.publish(BridgeState(drives_enabled=True, status=("owner: none", "mode: hold")))
    for _ in range(50):
        rig.cycle(dataclasses.replace(tipped, header=frame(rig.world).header))
    assert rig.node.motion.mode is MotionMode.DAMPING
    waiting = "the drives are back but the body is tipped 0.70 rad (upright is below 0.5 rad)"
    assert wait_until(lambda: rig.status_with(waiting, Level.WARN))
    assert sum(waiting in s.status for s in rig.statuses) == 1
    rig.cycle()  # level again: the estimator sees it in this frame, the stand-up in the next
    rig.cycle()
    assert rig.node.motion.mode is MotionMode.STAND_UP
    assert wait_until(
        lambda: rig.status_with(
            "DAMPING -> STAND_UP: the drives are back and the body is upright again", Level.OK
        )
    )


@pytest.mark.parametrize(
    ("enabled", "status", "available", "why"),
    [
        (True, ("owner: control_node", "mode: run"), True, ""),
        (True, ("owner: control_node", "mode: hold"), True, ""),
        (True, ("owner: teleop", "mode: run", "reentry: ramping from the measured pose"), True, ""),
        (True, ("owner: control_node", "mode: safe"), False, "bridge mode: safe"),
        (False, ("owner: control_node", "mode: off"), False, "drives off (bridge mode: off)"),
        (False, ("owner: x", "mode: estop", "estop: jointbus_cli"), False, "e-stop latched"),
    ],
)
def test_drives_available_reads_the_bridge_state(
    enabled: bool, status: tuple[str, ...], available: bool, why: str
) -> None:
    ok, reason = drives_available(BridgeState(drives_enabled=enabled, status=status))
    assert ok is available
    assert reason.startswith(why)
    assert drives_available(None) == (True, "")  # no bridge heard yet: nothing to follow


#: (thread name, path) of each ``/proc/self/task`` file or folder opened while a test collects
#: them (None: not collecting). An audit hook cannot be removed, so it stays and does nothing.
_PROC_OPENS: list[tuple[str, str]] | None = None
_STALLED = re.compile(r"control node stalled for (\d+\.\d+) s")
_AUDITING = False


def _audit(event: str, args: tuple[object, ...]) -> None:
    opens = _PROC_OPENS
    if opens is None or event not in ("open", "os.listdir") or not args:
        return
    path = args[0]
    if isinstance(path, str | bytes) and str(path).startswith(("/proc/self/task", "b'/proc")):
        opens.append((threading.current_thread().name, str(path)))


def test_the_control_step_never_reads_proc_the_timer_thread_does_and_reports_the_stall(
    rig: Rig,
) -> None:
    """The run-queue waits that tell a stopped process from a starved one are read from
    ``/proc/self/task/*/schedstat``: 11-18 ms for 100 threads. Read in the control step
    (c70ecf3), they stalled it 250 ms beside a second stack and tripped the bridge's watchdog.
    Every ``/proc`` open of the node is its timer thread's, and the stall's report comes from
    there too — here a 1 s pause of the frames, through which the timer thread ran: no stop."""
    global _PROC_OPENS, _AUDITING
    if not _AUDITING:
        sys.addaudithook(_audit)
        _AUDITING = True
    opens: list[tuple[str, str]] = []
    _PROC_OPENS = opens
    try:
        started = time.monotonic()
        while time.monotonic() - started < 4.5:  # readings 2 s apart: the usual waits known
            rig.cycle()
        since = len(rig.statuses)
        time.sleep(1.0)  # no frame: a gap between steps beyond the watchdog's 0.25 s

        def paused() -> list[str]:
            # the 1 s pause, and what a loaded host adds to the test's own loop around it (1.41 s
            # once in make test): a report of 1.0 s to 2.5 s
            return [
                s.status
                for s in rig.statuses[since:]
                if (m := _STALLED.match(s.status)) and 1.0 <= float(m[1]) <= 2.5
            ]

        deadline = time.monotonic() + 2 * TIMEOUT
        while not paused():
            assert time.monotonic() < deadline, [s.status for s in rig.statuses]
            rig.cycle()
    finally:
        _PROC_OPENS = None
    timer_thread = f"{rig.node.name}-timers"
    assert opens, "the timer thread read no run-queue waits"
    assert {name for name, _ in opens} == {timer_thread}, sorted(set(opens))[:5]
    stalled = paused()
    assert len(stalled) == 1, stalled
    assert "no control step: its process ran (its timer thread looked" in stalled[0], stalled[0]


def test_robot_state_is_built_for_a_listener_and_its_10hz_copy_carries_the_steps() -> None:
    """``robot_state`` costs a message per frame only while someone listens to it; its 10 Hz
    copy carries the newest step's message either way (once per step, the step's stamp), as the
    Mirror it replaced did. Lock-step on a hand-driven 10 Hz timer (simulated time)."""
    clock_ns = [0]
    timers = TimerThread("control-test", clock=lambda: clock_ns[0], threaded=False)
    bus = Bus(name="control-test-10hz")
    node = ControlNode(bus, hb50(), timers=timers)
    world = lying_world()
    commands: queue.Queue[JointCommand] = queue.Queue()
    copies: list[RobotState] = []
    bus.subscribe("/hb50/joint_command", JointCommand, commands.put, MAB_RT, realtime=True)
    bus.subscribe("/hb50/robot_state_10hz", RobotState, copies.append, RELIABLE, realtime=True)
    frames = bus.publisher("/hb50/bridge_data", BridgeData, MAB_RT)
    node.start()
    stamps: list[Time] = []

    def run(cycles: int) -> None:
        for _ in range(cycles):
            data = frame(world)
            stamps.append(data.header.stamp)
            frames.publish(data)
            apply(world, commands.get(timeout=TIMEOUT))
            world.step(PERIOD)
            clock_ns[0] += round(PERIOD * 1e9)
            timers.run_due(clock_ns[0])

    try:
        run(150)  # 0.3 s: no listener of robot_state
        assert node.robot_state_pub.publisher.seq == 0
        assert 2 <= len(copies) <= 4
        for copy in copies:
            assert copy.header.stamp in stamps
            assert copy.header.frame_id == "odom"
            assert copy.motion_mode == MotionMode.IDLE
            assert [leg.leg_name for leg in copy.leg] == ["fr", "fl", "rl", "rr"]
        newest = node._latest
        assert newest is not None and newest.message is None
        assert copies[-1].header.stamp == newest.stamp  # the timer ran right after that step
        # nothing new since: the copy stays silent, as a mirror of a silent source does
        sent = len(copies)
        clock_ns[0] += 200_000_000
        timers.run_due(clock_ns[0])
        assert len(copies) == sent

        fast: list[RobotState] = []
        bus.subscribe("/hb50/robot_state", RobotState, fast.append, MAB_RT, realtime=True)
        sent = len(copies)
        run(100)  # 0.2 s with a listener: one message a frame, and the copies are among them
        assert len(fast) == 100 == node.robot_state_pub.publisher.seq
        assert 1 <= len(copies) - sent <= 3
        wire = {m.to_cdr() for m in fast}
        assert all(copy.to_cdr() in wire for copy in copies[sent:])
    finally:
        node.shutdown()
        bus.close()
