"""The bridge on a simulated HB50: rejections move nothing; arbitration, watchdog, e-stop, heat.

Each test runs the node in lock-step with the simulator (``run_loop=False``): per 2 ms step the
fake clock advances, commands are published on the in-process bus, the bridge runs one cycle,
the simulator advances 2 ms and the node's timers (status flush, 10 Hz mirror, heartbeat) run.
No threads and no timing assertions: every duration below is simulated time.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import threading
import time
from collections.abc import Callable, Iterator
from itertools import pairwise
from typing import Any

import numpy as np
import pytest
import zenoh

from jointbus.bus import LATCHED, MAB_RT, RELIABLE, Bus, ZenohConfig, attachment
from jointbus.bus.names import data_key
from jointbus.bus.zenoh_transport import type_hash_of
from jointbus.codec.cdr import encode as cdr_encode
from jointbus.drivers.bus.array_names import ArrayNames
from jointbus.drivers.impedance import ImpedanceCommand
from jointbus.drivers.sim.driver import SimActuatorArray, SimArrayConfig
from jointbus.messages import jointbus_msgs
from jointbus.messages.actarray import (
    ActuatorArrayData,
    ActuatorReply,
    ActuatorState,
    ArrayGeometry,
    PowerRequest,
)
from jointbus.messages.geometry_msgs import Quaternion, Vector3
from jointbus.messages.joint_impedance import JointImpedance
from jointbus.messages.joints import Joints
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header, String
from jointbus.model.yaml_loader import load_robot
from jointbus.robots.hb50.bridge.node import (
    BEHIND_RTF,
    SAFE_KD,
    BridgeConfig,
    BridgeMode,
    BridgeNode,
)
from jointbus.robots.hb50.bridge.unchecked_command import UncheckedJointCommand
from jointbus.robots.hb50.messages import BridgeData, BridgeState, JointCommand, Level, Status
from jointbus.robots.hb50.messages.bridge_status import BridgeStatus
from jointbus.runtime.host_steal import StealSamples
from jointbus.runtime.rate_loop import CycleInfo
from jointbus.runtime.timer import TimerThread
from support.bus import free_port, wait_until
from support.profiled import numpy_reductions, python_calls

STEP_NS = 2_000_000  # 500 Hz
MS = 1_000_000
ROBOT = load_robot("hb50")
ORDER = ROBOT.actuator_order
HOME = np.array([ROBOT.pose("home")[n] for n in ORDER])


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000 * 1_000_000_000

    def __call__(self) -> int:
        return self.now


class Rig:
    """A bridge on a stepped simulated HB50, a bus, and recorders of what it publishes."""

    def __init__(self, config: BridgeConfig | None = None, bus: Bus | None = None) -> None:
        self.clock = FakeClock()
        self.rate_hz = (config if config is not None else BridgeConfig()).rate_hz
        self.period_ns = round(1e9 / self.rate_hz)
        # The drives start at the standing pose the tests command: a first command far from the
        # measured pose would be ramped to (the re-entry tests below).
        config_sim = SimArrayConfig.from_model(ROBOT, realtime=False, noise=False)
        self.sim = SimActuatorArray(dataclasses.replace(config_sim, initial_positions=tuple(HOME)))
        self.bus = bus if bus is not None else Bus()
        self.statuses: list[Status] = []
        self.data: list[BridgeData] = []
        self.states: list[BridgeState] = []
        self.mirror: list[BridgeState] = []
        self.data_mirror: list[BridgeData] = []
        self.heartbeats: list[Status] = []
        sub = self.bus.subscribe
        sub("/hb50/status", Status, self.statuses.append, RELIABLE, realtime=True)
        sub("/hb50/bridge_data", BridgeData, self.data.append, MAB_RT, realtime=True)
        sub("/hb50/bridge_state", BridgeState, self.states.append, MAB_RT, realtime=True)
        sub("/hb50/bridge_state_10hz", BridgeState, self.mirror.append, RELIABLE, realtime=True)
        sub("/hb50/bridge_data_10hz", BridgeData, self.data_mirror.append, RELIABLE, realtime=True)
        sub("/hb50/heartbeat", Status, self.heartbeats.append, RELIABLE, realtime=True)
        self.commands = self.bus.publisher("/hb50/joint_command", JointCommand, MAB_RT)
        self.hardware = self.bus.publisher("/hb50/hardware_command", String, RELIABLE)
        timers = TimerThread("bridge-test-timers", clock=self.clock, threaded=False)
        self.node = BridgeNode(self.sim, self.bus, config, timers=timers, run_loop=False)
        self.node.start()

    def close(self) -> None:
        self.node.shutdown()
        self.bus.close()

    def step(self, *publish: JointCommand | str) -> None:
        """One cycle (2 ms at the default 500 Hz); ``publish`` is sent (commands, or
        hardware-command texts) first."""
        self.clock.now += self.period_ns
        for msg in publish:
            if isinstance(msg, str):
                self.hardware.publish(String(msg))
            else:
                self.commands.publish(msg)
        self.node.cycle(self.clock.now)
        self.sim.step(self.period_ns / 1e9)
        self.node.timers.run_due(self.clock.now)

    def run(self, seconds: float, *sources: Callable[[int], JointCommand | None]) -> None:
        """``seconds`` of cycles; each source is asked for a command every cycle (None: none)."""
        for k in range(round(seconds * self.rate_hz)):
            msgs = [m for m in (source(k) for source in sources) if m is not None]
            self.step(*msgs)

    def positions(self) -> np.ndarray:
        return self.sim.read_joints().position

    def reports(self) -> list[Status]:
        """Status reports so far (pending ones are flushed first, as the 0.1 s timer would)."""
        self.node.reporter.flush()
        return self.statuses

    def errors(self) -> list[Status]:
        return [s for s in self.reports() if s.level == Level.ERROR]

    def texts(self) -> list[str]:
        return [s.status for s in self.reports()]


@pytest.fixture
def rig() -> Iterator[Rig]:
    r = Rig()
    yield r
    r.close()


@pytest.fixture
def sto_rig() -> Iterator[Rig]:
    """A bridge whose e-stop is category 0 (STO: drives off at once), the explicit option."""
    r = Rig(BridgeConfig(estop_category=0))
    yield r
    r.close()


def hold(target: np.ndarray, source: str = "control_node", kp: float = 80.0) -> JointCommand:
    return JointCommand.hold(ORDER, target.tolist(), kp, 3.0, source_node=source)


def joint_space(cmd: JointCommand) -> ImpedanceCommand:
    """``cmd`` as the bridge converts it at its edge (joint space, float64, no names)."""
    return ImpedanceCommand(cmd.t_pos, cmd.t_vel, cmd.t_trq, cmd.kp, cmd.kd, cmd.brake)


def applied_as_sent(node: BridgeNode, cmd: JointCommand) -> bool:
    """The bridge wrote ``cmd`` unchanged, as ``cmd.source_node``'s command, in its last cycle."""
    return node.last_applied == joint_space(cmd) and node.last_applied_source == cmd.source_node


def every_cycle(cmd: JointCommand) -> Callable[[int], JointCommand]:
    return lambda _k: cmd


def unvalidated(base: JointCommand, **fields: Any) -> JointCommand:
    """A command object the constructor would refuse (as a faulty decoder could deliver)."""
    cmd = object.__new__(JointCommand)
    for f in dataclasses.fields(JointCommand):
        object.__setattr__(cmd, f.name, fields.get(f.name, getattr(base, f.name)))
    return cmd


# -- publishing ----------------------------------------------------------------------------


def test_each_cycle_publishes_bridge_data_and_state_and_a_10_hz_mirror(rig: Rig) -> None:
    rig.run(0.5, every_cycle(hold(HOME)))
    assert len(rig.data) == len(rig.states) == 250
    last = rig.data[-1]
    assert last.joint_name == ORDER
    assert np.allclose(last.joint_position, rig.sim.read_joints().position, atol=1e-3)
    assert all(0 < t < 100 for t in last.joint_temperature)
    assert math.isnan(last.orientation.w)  # no IMU given: "not reported"
    state = rig.states[-1]
    assert state.drives_enabled is True
    assert state.status == ("owner: control_node", "mode: run")
    assert 4 <= len(rig.mirror) <= 6  # 10 Hz over 0.5 s of simulated time
    assert rig.mirror[-1] == rig.node.last_state
    assert 4 <= len(rig.data_mirror) <= 6
    assert rig.data_mirror[-1] is rig.node.last_data


def test_heartbeat_is_published(rig: Rig) -> None:
    rig.run(1.2)
    assert any(h.reporting_node == "bridge_node" for h in rig.heartbeats)


def test_commands_move_the_robot(rig: Rig) -> None:
    target = HOME + 0.2 * np.sign(HOME)
    rig.run(0.6, every_cycle(hold(target)))
    assert rig.node.mode is BridgeMode.RUN
    assert np.allclose(rig.positions(), target, atol=0.03)


def test_a_steady_cycle_makes_no_numpy_reduction_in_the_nodes_code(rig: Rig) -> None:
    """The every-cycle tests of a running robot — the command's limits, kp > 0 and brakes, the
    limit watch, the thermal check and derating — read a 12-joint reading or command in plain
    Python (``tolist``): on the bridge's loop thread, whose caches every 2 ms cycle starts cold,
    each numpy call on 12 values costs 5–10 µs (≈ 70 µs of the loop's ≈ 850 µs per cycle,
    2026-12-06; docs/PERFORMANCE.md). What they decide is the same: the safety tests above and
    the components' own tests hold it."""
    rig.run(0.3, every_cycle(hold(HOME)))  # running, the re-entry ramp over
    assert rig.node.mode is BridgeMode.RUN and not rig.node.reentry.ramping
    cmd = hold(HOME + 0.01)
    rig.clock.now += rig.period_ns
    rig.commands.publish(cmd)  # queued for the cycle, outside the count
    _, reductions = numpy_reductions(lambda: rig.node.cycle(rig.clock.now))
    assert reductions == []
    assert applied_as_sent(rig.node, cmd)
    # Nor, inside a publish-rate window, the subscriber's counters (read where a window starts
    # or ends), the stamp's constructors or the checked command's (its arrays are kept as made).
    rig.clock.now += rig.period_ns
    rig.commands.publish(cmd)
    _, calls = python_calls(rig.node.cycle, rig.clock.now)
    stamping = ("stamp.py:from_ns", "stamp.py:__post_init__", "std_msgs.py:__post_init__")
    assert [c for c in calls if c.endswith(":stats") or c in stamping] == []
    assert [c for c in calls if c.startswith("impedance.py:_")] == ["impedance.py:_certify"]


def test_the_imu_fields_are_built_without_their_constructors_calls_and_equal_theirs() -> None:
    """``BridgeData``'s IMU fields, every cycle: the orientation and the two vectors are built
    from the IMU's float64 arrays without the constructors' seven Python calls (each about a
    microsecond on the bridge's cold loop thread), the same values as the constructors give."""
    from jointbus import drivers

    array = drivers.open("sim://hb50?realtime=false&seed=0")
    bus = Bus()
    clock = FakeClock()
    timers = TimerThread("imu-timers", clock=clock, threaded=False)
    node = BridgeNode(array, bus, BridgeConfig(), imu=array.imu, timers=timers, run_loop=False)
    node.start()
    try:
        array.step(0.002)
        clock.now += 2 * MS
        _, calls = python_calls(node.cycle, clock.now)
        assert [c for c in calls if c.startswith("geometry_msgs.py:")] == []
        sample = array.imu()
        assert sample is not None
        w, x, y, z = sample.orientation.tolist()
        frame = node.last_data
        assert frame is not None
        assert frame.orientation == Quaternion(x, y, z, w)
        assert frame.angular_velocity == Vector3(*sample.angular_velocity.tolist())
        assert frame.linear_acceleration == Vector3(*sample.linear_acceleration.tolist())
        assert frame.to_cdr() == dataclasses.replace(frame).to_cdr()  # the constructor's bytes
    finally:
        node.shutdown()
        bus.close()


# -- rejections ----------------------------------------------------------------------------

MOVED = HOME + 0.25 * np.sign(HOME)  # a target the bad commands ask for


def bad_order() -> JointCommand:
    cmd = hold(MOVED)
    swapped = (ORDER[1], ORDER[0], *ORDER[2:])
    return JointCommand.hold(swapped, cmd.t_pos, 80.0, 3.0, source_node="control_node")


def bad_length() -> JointCommand:
    cmd = hold(MOVED)
    return unvalidated(cmd, kd=cmd.kd[:11])


def bad_nan() -> JointCommand:
    cmd = hold(MOVED)
    t_pos = list(cmd.t_pos)
    t_pos[4] = math.nan
    return unvalidated(cmd, t_pos=tuple(t_pos))


def bad_limit() -> JointCommand:
    target = MOVED.copy()
    target[2] = 0.5  # fr_j2 range is [-2.705, 0]
    return hold(target)


def bad_gain() -> JointCommand:
    return hold(MOVED, kp=5000.0)


def bad_source() -> JointCommand:
    return hold(MOVED, source="")


REJECTIONS = [
    # (command, field, joint, index)
    (bad_order, "name", ORDER[1], 0),
    (bad_length, "kd", ORDER[11], 11),
    (bad_nan, "t_pos", ORDER[4], 4),
    (bad_limit, "t_pos", ORDER[2], 2),
    (bad_gain, "kp", ORDER[0], 0),
    (bad_source, "source_node", None, None),
]


@pytest.mark.parametrize(("make_bad", "field", "joint", "index"), REJECTIONS)
def test_rejected_command_is_reported_by_name_and_moves_nothing(
    rig: Rig, make_bad: Callable[[], JointCommand], field: str, joint: str | None, index: int | None
) -> None:
    good = hold(HOME)
    rig.run(0.4, every_cycle(good))
    before = rig.positions()
    assert applied_as_sent(rig.node, good)
    bad = make_bad()
    rig.run(0.1, every_cycle(bad))  # < watchdog: the good command stays applied
    assert applied_as_sent(rig.node, good)
    assert rig.node.mode is BridgeMode.RUN
    assert np.allclose(rig.positions(), before, atol=2e-3)
    assert rig.node.rejected == 50
    # ... and counted on the input's running totals (/hb50/diagnostics' ``inputs``)
    totals = rig.node.command_subscription.totals()
    assert (totals.topic, totals.refused, totals.malformed) == ("/hb50/joint_command", 50, 0)
    assert totals.received >= 250
    errors = rig.errors()
    assert errors, rig.texts()
    report = errors[0]
    assert report.reporting_node == "bridge_node"
    facts = json.loads(report.data)
    assert (facts["field"], facts["joint"], facts["index"]) == (field, joint, index)
    assert facts["source_node"] == bad.source_node
    if joint is not None:
        assert f"joint {joint!r} (index {index})" in report.status
    assert f"field {field!r}" in report.status
    assert "rejected" in report.status
    # 50 identical rejections are folded, not 50 status messages.
    assert len(errors) <= 2


def test_source_outside_the_allow_list_is_rejected_and_named() -> None:
    rig = Rig(BridgeConfig(allowed_sources=("control_node", "teleop")))
    try:
        rig.run(0.2, every_cycle(hold(HOME)))
        rig.run(0.1, every_cycle(hold(MOVED, source="rogue")))
        assert rig.node.last_applied is not None
        assert rig.node.last_applied_source == "control_node"
        (report,) = rig.errors()
        assert "'rogue'" in report.status and "source_node" in report.status
        assert json.loads(report.data)["source_node"] == "rogue"
        assert rig.node.arbiter.owner(rig.clock.now) == "control_node"
    finally:
        rig.close()


def test_rejected_commands_never_take_over(rig: Rig) -> None:
    bad = unvalidated(hold(MOVED, source="teleop"), t_vel=(math.inf,) * 12)
    rig.run(0.3, every_cycle(hold(HOME)), every_cycle(bad))
    assert rig.node.arbiter.owner(rig.clock.now) == "control_node"
    assert rig.node.last_applied is not None
    assert rig.node.last_applied_source == "control_node"


# -- arbitration ---------------------------------------------------------------------------


def test_an_owner_whose_commands_are_refused_is_said_refused_not_silent(rig: Rig) -> None:
    """A user's trial (2026-12-06): a controller of their own owned the robot, then sent an
    unknown joint (or a target out of range) for 0.3 s at 500 Hz; each command was refused, and
    control went back to the control node "(silent: 'my_ctl' went silent)" — it never stopped
    sending."""
    custom = hold(MOVED, source="my_ctl")
    rig.run(0.6, every_cycle(hold(HOME)), every_cycle(custom))
    assert rig.node.arbiter.current == "my_ctl"
    target = MOVED.copy()
    target[2] = 0.5  # fr_j2's range is [-2.705, 0]: each command refused whole
    bad = hold(target, source="my_ctl")
    rig.run(0.3, every_cycle(hold(HOME)), every_cycle(bad))
    assert rig.node.arbiter.current == "control_node"
    change = [t for t in rig.texts() if t.startswith("command owner 'my_ctl' -> 'control_node'")]
    assert change, rig.texts()
    assert "went silent" not in change[0], change[0]
    assert "'my_ctl' sent no command that passed the checks" in change[0], change[0]
    reentry = [t for t in rig.texts() if t.startswith("re-entry after owner change")]
    assert not reentry or "went silent" not in reentry[-1], reentry
    # a source that stops sending is silent, as before
    rig.run(0.6, every_cycle(hold(HOME)), every_cycle(custom))  # it needs 0.8 s now
    rig.run(0.5, every_cycle(hold(HOME)), every_cycle(custom))
    assert rig.node.arbiter.current == "my_ctl"
    rig.run(0.2, every_cycle(hold(HOME)))
    silent = [t for t in rig.texts() if t.startswith("command owner 'my_ctl' -> 'control_node'")]
    assert len(silent) == 2 and "'my_ctl' went silent" in silent[1], silent


def test_fast_custom_source_takes_over_and_falls_back_within_100_ms(rig: Rig) -> None:
    default_cmd = hold(HOME)
    custom_cmd = hold(MOVED, source="teleop")
    rig.run(0.2, every_cycle(default_cmd))
    rig.run(0.39, every_cycle(default_cmd), every_cycle(custom_cmd))
    assert rig.states[-1].status[0] == "owner: control_node"  # 0.4 s of teleop to take over
    rig.run(0.5, every_cycle(default_cmd), every_cycle(custom_cmd))
    assert applied_as_sent(rig.node, custom_cmd)
    assert rig.states[-1].status[0] == "owner: teleop"
    assert np.allclose(rig.positions(), MOVED, atol=0.03)
    assert any("'control_node' -> 'teleop'" in t for t in rig.texts())
    # teleop stops; control_node continues.
    cycles = 0
    while rig.states[-1].status[0] != "owner: control_node":
        rig.step(default_cmd)
        cycles += 1
        assert cycles <= 51  # 100 ms of silence + the cycle that notices it
    assert any("'teleop' -> 'control_node'" in t and "silent" in t for t in rig.texts())
    # Its target is 0.25 rad from where teleop left the joints: the bridge ramps to it from the
    # measured pose (no jump), then applies it as sent.
    rig.step(default_cmd)
    applied = rig.node.last_applied
    assert applied is not None and rig.node.last_applied_source == "bridge_node"
    assert np.max(np.abs(applied.position - MOVED)) < 0.03
    # the re-entry's WARN (what a terminal prints; the change itself is an OK) says why
    warns = [s.status for s in rig.reports() if s.level == Level.WARN and "re-entry" in s.status]
    assert any(
        "owner change to 'control_node' (silent: 'teleop' went silent)" in w for w in warns
    ), warns
    rig.run(0.5, every_cycle(default_cmd))
    assert applied_as_sent(rig.node, default_cmd)


def test_slow_custom_source_does_not_take_over(rig: Rig) -> None:
    custom = hold(MOVED, source="teleop")
    rig.run(1.0, every_cycle(hold(HOME)), lambda k: custom if k % 60 == 0 else None)  # 8.3 Hz
    assert rig.node.arbiter.owner(rig.clock.now) == "control_node"
    # not silently: one WARN says why its commands are not applied, with its rate
    said = [s for s in rig.reports() if "teleop" in s.status]
    assert len(said) == 1 and said[0].level == Level.WARN, [s.status for s in said]
    assert "'teleop' are not applied: 'control_node' owns the array" in said[0].status
    # the rule as the decision applies it, and the rate over the window it names: the 0.5 s
    # before the command at 600 ms holds those at 120, 240, 360 and 480 ms (one every 120 ms)
    assert (
        "sends at ≥ 10 Hz for 0.4 s with no gap over 100 ms ('teleop': 4 commands arrived in "
        "the 0.5 s before its latest (8.0 Hz), the longest gap 120 ms)" in said[0].status
    )


def test_a_source_that_sent_once_then_streams_is_reported_at_its_streams_rate(rig: Rig) -> None:
    """A new user's trial: a source that is not the owner was reported at "0.2 Hz" — the mean of
    its first two commands, 5 s apart — while it streamed several commands a second. The report
    now waits for a window of the stream and names the rate over it, counted in the window."""
    custom = hold(MOVED, source="teleop")
    rig.run(0.01, every_cycle(hold(HOME)), lambda k: custom if k == 0 else None)  # once
    rig.run(2.0, every_cycle(hold(HOME)))  # 2 s of nothing from teleop
    rig.run(1.0, every_cycle(hold(HOME)), lambda k: custom if k % 60 == 0 else None)  # 8.3 Hz
    assert rig.node.arbiter.owner(rig.clock.now) == "control_node"
    said = [s.status for s in rig.reports() if "commands from 'teleop' are not applied" in s.status]
    assert len(said) == 1, rig.texts()
    quoted = "4 commands arrived in the 0.5 s before its latest (8.0 Hz), the longest gap 120 ms"
    assert f"('teleop': {quoted})" in said[0], said[0]


def test_the_default_source_outranked_is_told_why_not_the_rate_rule(rig: Rig) -> None:
    """A 500 Hz control node waiting while a custom source owns the array was told it "takes
    over only when it sends at ≥ 10 Hz" (it sent at 186 Hz): the reason is the priority."""
    rig.run(0.2, every_cycle(hold(HOME)))
    rig.run(1.2, every_cycle(hold(HOME)), every_cycle(hold(MOVED, source="teleop")))
    said = [s.status for s in rig.reports() if "commands from 'control_node'" in s.status]
    assert len(said) == 1, said
    assert (
        "'teleop' owns the array (a source sending at ≥ 10 Hz for 0.4 s with no gap over 100 ms"
        in said[0]
    )
    assert "priority); 'control_node' gets it back when 'teleop' stops or slows down" in said[0]
    assert "takes over only when" not in said[0]


def test_takeover_names_the_rate_of_a_steady_500_hz_source_delivered_in_bunches(
    rig: Rig,
) -> None:
    from jointbus.messages.std_msgs import Header

    # on the source's own clock, a minute behind the bridge's: the stamps' age is not known, so
    # none is dropped as stale however slowly this test runs against the wall clock
    t0 = time.time_ns() - 60 * 1_000 * MS
    steady = [  # stamped every 2 ms by the source, as a 500 Hz loop does
        dataclasses.replace(hold(MOVED, source="teleop"), header=Header.at_ns(t0 + k * 2 * MS))
        for k in range(260)
    ]
    rig.run(0.2, every_cycle(hold(HOME)))
    # delivered late and in pairs at first (arrivals 0, 4, 4, 6, 6 ms), then one a cycle
    batches = [[steady[0]], [], steady[1:3], steady[3:5]] + [[c] for c in steady[5:]]
    for batch in batches:
        rig.step(hold(HOME), *batch)
    assert rig.node.arbiter.owner(rig.clock.now) == "teleop"
    takeover = [t for t in rig.texts() if "'control_node' -> 'teleop'" in t]
    assert len(takeover) == 1, takeover
    # the figure rests on the source's stamps: n commands 2 (n − 1) ms apart, 500.0 Hz
    found = re.search(r"takeover: 'teleop': (\d+) commands sent in ([\d.]+) ms \(500\.0 Hz\)",
                      takeover[0])
    assert found, takeover
    count, span_ms = int(found[1]), float(found[2])
    assert count >= 201 and span_ms == pytest.approx(2.0 * (count - 1))


# -- watchdog ------------------------------------------------------------------------------


def test_watchdog_enters_safe_mode_after_250_ms_and_leaves_on_the_next_command(rig: Rig) -> None:
    cmd = hold(HOME)
    rig.run(0.3, every_cycle(cmd))
    rig.run(0.25)  # exactly the timeout (125 cycles): not yet
    assert rig.node.mode is BridgeMode.RUN
    rig.run(0.01)
    assert rig.node.mode is BridgeMode.SAFE
    safe = rig.node.last_applied
    assert safe is not None
    assert safe.kp.tolist() == [0.0] * 12 and safe.effort.tolist() == [0.0] * 12
    assert safe.kd.tolist() == [SAFE_KD] * 12  # the safe-mode damping, not the stand kd
    assert rig.node.last_applied_source == "bridge_node"
    assert rig.states[-1].status[1] == "mode: safe"
    assert any("watchdog" in s.status and s.level == Level.WARN for s in rig.reports())
    rig.run(0.02, every_cycle(cmd))
    assert rig.node.mode is BridgeMode.RUN
    assert applied_as_sent(rig.node, cmd)
    assert any("resumed" in t for t in rig.texts())


def answering(
    rig: Rig, age_s: float, target: np.ndarray = HOME, source: str = "control_node"
) -> JointCommand:
    """A hold of ``target`` stamped, as the control node stamps its commands, with the frame it
    answers: one ``age_s`` older than the bridge's latest (this rig stamps by the wall clock)."""
    stamp_ns = rig.data[-1].header.stamp.to_ns() - round(age_s * 1e9)
    return JointCommand.hold(
        ORDER, target.tolist(), 80.0, 3.0, source_node=source,
        header=Header(Time.from_ns(stamp_ns), ""),
    )


def answering_frame(rig: Rig, back: int, target: np.ndarray = HOME) -> JointCommand:
    """A hold of ``target`` stamped with the stamp of the frame ``back`` frames before the
    bridge's latest, as the control node stamps its commands."""
    return JointCommand.hold(
        ORDER, target.tolist(), 80.0, 3.0, source_node="control_node",
        header=Header(rig.data[-1 - back].header.stamp, ""),
    )


def test_commands_answering_frames_older_than_the_watchdog_time_are_no_sign_of_life(
    rig: Rig,
) -> None:
    """The chaos campaign's missed watchdog reports (seed 11, #540 / #1095 / #1446): a controller
    stopped after a CPU hog left a backlog of answers to old frames; the bridge applied them
    (command age p99 up to 318 cycles) and they fed its watchdog, so it never saw the stall."""
    rig.run(0.4, every_cycle(hold(HOME)))  # frames to answer
    rig.run(0.3, lambda _k: answering(rig, 0.002))
    assert rig.node.mode is BridgeMode.RUN and rig.node.old_commands == 0
    applied = rig.node.last_applied
    # a backlog: each cycle brings the answer to a frame 0.3 s old
    rig.run(0.3, lambda _k: answering(rig, 0.3, HOME + 0.05))
    assert rig.node.mode is BridgeMode.SAFE  # the watchdog saw the silence
    assert rig.node.old_commands == 150
    assert rig.node.last_applied != applied and rig.node.last_applied_source == "bridge_node"
    texts = [s.status for s in rig.reports() if s.level == Level.WARN]
    assert any(t.startswith("watchdog: no valid command") for t in texts)
    stale = [t for t in texts if t.startswith("stale command from 'control_node' dropped")]
    assert stale and "0.300 s old (more than 0.25 s)" in stale[0]
    # a fresh answer is a sign of life again, and applied
    rig.run(0.02, lambda _k: answering(rig, 0.002))
    assert rig.node.mode is not BridgeMode.SAFE
    # an answer 0.2 s old (within the watchdog time) still counts: a host's short stall
    rig.run(0.3, lambda _k: answering(rig, 0.2))
    assert rig.node.mode is not BridgeMode.SAFE


def test_a_custom_controller_resumed_with_stale_answers_does_not_take_the_robot(
    rig: Rig,
) -> None:
    """A user's trial (2026-12-06): a controller of their own, SIGCONTed after a 1 s stop, sent
    the answers its socket had queued — frames 0.84–1.0 s old — and took the robot from the
    control node in the same millisecond the bridge dropped them as stale. Never applied, they
    are no sign of life and earn no rank; its first fresh answers take over as before."""
    rig.run(0.4, every_cycle(hold(HOME)))
    rig.run(0.1, every_cycle(hold(HOME)), lambda _k: answering(rig, 0.9, HOME, "my_ctl"))
    assert rig.node.arbiter.current == "control_node"
    assert rig.node.last_applied_source == "control_node"
    assert not [t for t in rig.texts() if "-> 'my_ctl'" in t]
    assert any(t.startswith("stale command from 'my_ctl' dropped") for t in rig.texts())
    rig.run(0.3, every_cycle(hold(HOME)), lambda _k: answering(rig, 0.002, HOME, "my_ctl"))
    assert rig.node.arbiter.current == "control_node"  # 0.4 s of steady commands to take over
    rig.run(0.15, every_cycle(hold(HOME)), lambda _k: answering(rig, 0.002, HOME, "my_ctl"))
    assert rig.node.arbiter.current == "my_ctl"  # fresh: a controller like any other


def test_a_controller_stopped_with_answers_in_flight_is_silent_from_its_last_frame(
    rig: Rig,
) -> None:
    """A controller stops while its answers still queue behind a stalled host: they arrive
    over the next 0.2 s, each answering the last frame it saw. Counted from their arrival they
    kept it in charge until 0.45 s after it stopped; counted from the frame they answer, the
    watchdog trips 0.25 s after it (chaos, seed 11, #540: a 0.56 s stop went unreported)."""
    rig.run(0.4, every_cycle(hold(HOME)))
    rig.run(0.3, lambda _k: answering(rig, 0.002))
    assert rig.node.mode is BridgeMode.RUN
    stopped_ns = rig.clock.now
    modes = []
    for _ in range(100):  # 0.2 s of backlog, one answer a cycle to the frame it stopped at
        rig.step(answering(rig, (rig.clock.now - stopped_ns) / 1e9))
        modes.append(((rig.clock.now - stopped_ns) / 1e9, rig.node.mode))
    for _ in range(100):  # then nothing
        rig.step()
        modes.append(((rig.clock.now - stopped_ns) / 1e9, rig.node.mode))
    safe_at = next(t for t, mode in modes if mode is not BridgeMode.RUN)
    assert 0.25 <= safe_at <= 0.25 + 3 * rig.period_ns / 1e9
    texts = [s.status for s in rig.reports() if s.level == Level.WARN]
    assert any(t.startswith("watchdog: no valid command") for t in texts)
    assert rig.node.old_commands == 0  # none was stale: every one within the watchdog time


def test_unstamped_and_other_clock_commands_are_judged_by_their_arrival(rig: Rig) -> None:
    """Only a stamp on the bridge's own clock has an age: a zero stamp, or one from another
    clock (a user's controller stamping its own time), is judged by when it arrives."""
    other = JointCommand.hold(
        ORDER, HOME.tolist(), 80.0, 3.0, source_node="control_node",
        header=Header(Time(5, 0), ""),  # long before the bridge's frames (1 000 s on)
    )
    rig.run(0.6, every_cycle(other))
    assert rig.node.mode is BridgeMode.RUN and rig.node.old_commands == 0
    rig.run(0.6, every_cycle(hold(HOME)))
    assert rig.node.mode is BridgeMode.RUN and rig.node.old_commands == 0


def test_at_1000_hz_the_watchdog_mirrors_and_publish_accounting_keep_their_seconds() -> None:
    """Issue 15: at 1 kHz the watchdog still waits 0.25 s (250 cycles, not 125), the mirrors
    still publish at 10 Hz, and the publish-rate status counts 1000 cycles due a second."""
    rig = Rig(BridgeConfig(rate_hz=1000.0))
    try:
        cmd = hold(HOME)
        rig.run(1.2, every_cycle(cmd))
        assert len(rig.data) == 1200 and len(rig.states) == 1200  # one frame per 1 ms cycle
        assert len(rig.mirror) == len(rig.data_mirror) == 12  # 10 Hz
        assert rig.node.publish_rate_hz == pytest.approx(1000.0)
        assert rig.node.publish_skipped == 0
        status = rig.states[-1].status
        assert any(t.startswith("publish: 1000 Hz, 0 of 1000 cycles") for t in status)
        rig.run(0.25)  # exactly the timeout: 250 cycles at 1 kHz
        assert rig.node.mode is BridgeMode.RUN
        rig.run(0.005)
        assert rig.node.mode is BridgeMode.SAFE
    finally:
        rig.close()


def test_watchdog_time_is_configurable() -> None:
    rig = Rig(BridgeConfig(watchdog_s=0.05))
    try:
        rig.run(0.1, every_cycle(hold(HOME)))
        rig.run(0.06)
        assert rig.node.mode is BridgeMode.SAFE
    finally:
        rig.close()


# -- e-stop --------------------------------------------------------------------------------


def test_estop_latches_until_an_explicit_reset(sto_rig: Rig) -> None:
    cmd = hold(HOME)
    sto_rig.run(0.3, every_cycle(cmd))
    sto_rig.step(cmd, "ESTOP Trial B")  # the verb in any case; the reason as the user wrote it
    assert sto_rig.node.mode is BridgeMode.ESTOP
    assert sto_rig.node.last_applied is None
    assert sto_rig.states[-1].drives_enabled is False
    assert "estop: hardware_command estop Trial B" in sto_rig.states[-1].status
    assert sto_rig.sim.read_joints().motor_power is False
    sto_rig.run(2.0, every_cycle(cmd))  # commands keep coming: nothing re-arms the drives
    assert sto_rig.node.mode is BridgeMode.ESTOP
    assert sto_rig.sim.read_joints().motor_power is False
    sto_rig.step(cmd, "power on")
    assert sto_rig.node.mode is BridgeMode.ESTOP
    assert any("power on refused" in s.status for s in sto_rig.errors())
    assert any("E-STOP latched" in s.status for s in sto_rig.errors())


def test_reset_holds_the_measured_position_and_never_jumps_to_the_stale_target(
    rig: Rig,
) -> None:
    stale = hold(HOME)
    rig.run(0.4, every_cycle(stale))
    rig.step("estop")
    # While the drives are off the robot is moved (it sat down, someone pushed a leg).
    slumped = HOME * 0.5
    with rig.sim.locked() as physics:
        physics.actuators.set_state(slumped)
    rig.run(0.1, every_cycle(stale))
    rig.step("reset")  # the stale command is still queued in the same cycle
    assert rig.node.mode is BridgeMode.HOLD
    held = rig.node.last_applied
    assert held is not None
    assert np.allclose(held.position, slumped, atol=1e-3)
    assert held.kp.tolist() == [80.0] * 12
    rig.run(0.5)
    assert rig.node.mode is BridgeMode.HOLD  # holds until a fresh command, watchdog or not
    assert np.allclose(rig.positions(), slumped, atol=0.01)
    fresh = hold(slumped + 0.05)
    rig.step(fresh)
    assert rig.node.mode is BridgeMode.RUN
    assert applied_as_sent(rig.node, fresh)
    assert any("hold released" in t for t in rig.texts())
    assert rig.states[-1].drives_enabled is True


def test_commands_queued_before_the_reset_are_not_applied(rig: Rig) -> None:
    rig.run(0.2, every_cycle(hold(HOME)))
    rig.step("estop")
    rig.clock.now += MS
    rig.commands.publish(hold(HOME, source="control_node"))  # arrives before the reset ...
    rig.hardware.publish(String("reset"))
    rig.step()  # ... and both are handled in the next cycle
    assert rig.node.mode is BridgeMode.HOLD


def test_power_off_and_on_on_request(rig: Rig) -> None:
    rig.run(0.2, every_cycle(hold(HOME)))
    rig.step("power off")
    assert rig.node.mode is BridgeMode.OFF
    assert rig.states[-1].drives_enabled is False
    rig.run(0.1, every_cycle(hold(HOME)))
    assert rig.node.mode is BridgeMode.OFF
    rig.step("power on")
    assert rig.node.mode is BridgeMode.HOLD
    assert rig.states[-1].drives_enabled is True


def test_unknown_hardware_command_is_an_error_listing_the_accepted_ones(rig: Rig) -> None:
    rig.step("self destruct")
    rig.step()
    (report,) = rig.errors()
    assert "'self destruct'" in report.status and "'estop'" in report.status
    assert rig.node.mode is not BridgeMode.ESTOP


# -- thermal -------------------------------------------------------------------------------


def heat(rig: Rig, index: int, celsius: float) -> None:
    with rig.sim.locked() as physics:
        temps = physics.actuators.motor_temperatures.copy()
        temps[index] = celsius
        physics.actuators.set_temperatures(motor=temps)


def test_hot_joint_is_warned_and_its_torque_derated(rig: Rig) -> None:
    cmd = hold(HOME)
    rig.run(0.2, every_cycle(cmd))
    heat(rig, 1, 95.0)
    rig.run(0.2, every_cycle(cmd))
    applied = rig.node.last_applied
    assert applied is not None
    factor = rig.node.thermal.factors[1]
    assert 0.4 < factor < 0.6  # ~95 °C: halfway between 90 and 100
    assert applied.kp[1] == pytest.approx(80.0 * factor, rel=1e-3)
    assert applied.kd[1] == pytest.approx(3.0 * factor, rel=1e-3)
    assert applied.kp[0] == 80.0
    assert f"thermal WARN: {ORDER[1]} (index 1)" in rig.states[-1].status
    warns = [s for s in rig.reports() if s.level == Level.WARN and "thermal" in s.status]
    assert warns and f"'{ORDER[1]}' (index 1)" in warns[0].status


def test_joint_at_shutdown_temperature_gets_no_torque(rig: Rig) -> None:
    cmd = hold(HOME)
    rig.run(0.2, every_cycle(cmd))
    heat(rig, 7, 105.0)
    rig.run(0.05, every_cycle(cmd))
    applied = rig.node.last_applied
    assert applied is not None
    assert (applied.kp[7], applied.kd[7], applied.effort[7]) == (0.0, 0.0, 0.0)
    assert rig.node.thermal.drive_off[7]
    assert any("drive off" in s.status and ORDER[7] in s.status for s in rig.errors())


# -- configuration and the real loop -------------------------------------------------------


def test_config_from_the_robot_parameters() -> None:
    cfg = BridgeConfig.from_model(ROBOT, watchdog_s=0.5)
    assert cfg.watchdog_s == 0.5  # override wins
    assert (cfg.thermal_warn_c, cfg.thermal_derate_c, cfg.thermal_shutdown_c) == (80, 90, 100)
    assert cfg.takeover_hz == 10.0 and cfg.fallback_s == pytest.approx(0.1)
    assert (cfg.kp_max, cfg.kd_max) == (500.0, 50.0)
    with pytest.raises(ValueError, match="default source"):
        BridgeConfig(allowed_sources=("teleop",))


def test_the_rate_loop_runs_the_cycle_on_its_own_thread() -> None:
    sim = SimActuatorArray(SimArrayConfig.from_model(ROBOT, realtime=True, noise=False))
    bus = Bus()
    data: list[BridgeData] = []
    bus.subscribe("/hb50/bridge_data", BridgeData, data.append, MAB_RT, realtime=True)
    pub = bus.publisher("/hb50/joint_command", JointCommand, MAB_RT)
    node = BridgeNode(sim, bus)
    stop = threading.Event()

    def controller() -> None:
        cmd = hold(HOME)
        while not stop.is_set():
            pub.publish(cmd)
            time.sleep(0.002)

    thread = threading.Thread(target=controller, daemon=True)
    try:
        node.start()
        thread.start()
        deadline = time.monotonic() + 10.0
        while (len(data) < 100 or node.mode is not BridgeMode.RUN) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert node.mode is BridgeMode.RUN
        assert len(data) >= 100
    finally:
        stop.set()
        thread.join()
        node.shutdown()
        bus.close()
    assert sim.closed


def test_bridge_opened_from_a_url_brakes_where_fitted_and_closes_the_array() -> None:
    from jointbus.messages.actarray.state import ActuatorState

    bus = Bus()
    clock = FakeClock()
    timers = TimerThread("arm-timers", clock=clock, threaded=False)
    node = BridgeNode.open(
        "sim://arm6?realtime=false&noise=false", bus, timers=timers, run_loop=False
    )
    arm = node.array
    assert isinstance(arm, SimActuatorArray)
    fitted = tuple(a.has_brakes for a in arm.config.geometry.actuators)
    assert any(fitted) and not all(fitted)
    pub = bus.publisher("/hb50/joint_command", JointCommand, MAB_RT)
    hardware = bus.publisher("/hb50/hardware_command", String, RELIABLE)
    try:
        node.start()
        measured = arm.read_joints().position.tolist()
        cmd = JointCommand.hold(arm.names, measured, 20.0, 1.0, source_node="control_node")
        for _ in range(50):
            clock.now += STEP_NS
            pub.publish(cmd)
            node.cycle(clock.now)
            arm.step(0.002)
        assert applied_as_sent(node, cmd)
        for _ in range(130):  # > 250 ms without commands: safe mode
            clock.now += STEP_NS
            node.cycle(clock.now)
            arm.step(0.002)
        assert node.mode is BridgeMode.SAFE
        assert node.last_applied is not None
        assert tuple(node.last_applied.brake.tolist()) == fitted
        clock.now += STEP_NS
        hardware.publish(String("estop"))
        node.cycle(clock.now)
        state = arm.read_joints().state
        braked = [(int(s) & int(ActuatorState.BRAKED)) != 0 for s in state]
        assert tuple(braked) == fitted
    finally:
        node.shutdown()
        bus.close()
    assert arm.closed


# -- commands refused at decode, over real Zenoh ----------------------------------------------


def _crafted(**fields: Any) -> bytes:
    """CDR bytes of a JointCommand with ``fields`` as a foreign or faulty peer could send them:
    no jointbus constructor runs on them (the unchecked mirror encodes exactly the same layout)."""
    base = hold(HOME, source="rogue_node")
    values = {f.name: getattr(base, f.name) for f in dataclasses.fields(JointCommand)}
    values.update(fields)
    return cdr_encode(UncheckedJointCommand(**values))


CRAFTED = [  # what is wrong, the field and joint index the report must name, the value it shows
    ("nan", {"t_pos": (*HOME[:3], math.nan, *HOME[4:])}, "t_pos", 3, "nan"),
    ("negative_kp", {"kp": (80.0, -5.0, *([80.0] * (len(ORDER) - 2)))}, "kp", 1, "-5.0"),
    ("short", {"kd": (3.0,) * (len(ORDER) - 1)}, "kd", len(ORDER) - 1, "values"),
    ("order", {"name": (ORDER[1], ORDER[0], *ORDER[2:])}, "name", 0, repr(ORDER[1])),
    ("limit", {"t_pos": (*HOME[:2], 9.0, *HOME[3:])}, "t_pos", 2, "9.0"),
]


def test_every_refused_command_is_one_error_naming_its_source_over_zenoh() -> None:
    """Issue 11, item 10: NaN, a negative gain and a short array used to come out as a WARN
    "malformed payload ... from gid ..." without the source (the wire rules refuse them at
    decode), limits and name order as an ERROR naming it. Now each crafted sample is exactly one
    ERROR naming the source node, the joint (name and index), the field and the value — and none
    moves the robot. The bytes are put on the topic's rmw_zenoh data key by a raw Zenoh publisher
    with rmw_zenoh's attachment, as a ROS 2 publisher sends them (no jointbus checks)."""
    port = free_port()
    rig = Rig(bus=Bus(name="bridge", zenoh=ZenohConfig(hub_port=port)))
    rogue = Bus(name="rogue", zenoh=ZenohConfig.loopback(None, (port,)))
    try:
        transport = rogue.zenoh
        assert transport is not None
        key = data_key(
            transport.domain_id,
            "/hb50/joint_command",
            JointCommand.TYPE_NAME,
            type_hash_of(JointCommand),
        )
        pub = transport.session.declare_publisher(key, reliability=zenoh.Reliability.RELIABLE)
        assert wait_until(lambda: bool(getattr(pub.matching_status, "matching", False)), 10.0)
        rig.run(0.2, every_cycle(hold(HOME)))
        subscription = rig.node.command_subscription
        for seq, (_, fields, *_rest) in enumerate(CRAFTED, start=1):
            # as a ROS 2 publisher sends it: rmw_zenoh's attachment (sequence, time, GID)
            pub.put(_crafted(**fields), attachment=attachment.pack(seq, time.time_ns(), b"r" * 16))
            assert wait_until(lambda: rig.node.pending_commands > 0)  # arrived (queued)
            rig.run(0.02, every_cycle(hold(HOME)))
        reports = rig.reports()
        errors = [s for s in reports if s.level == Level.ERROR]
        assert not [s for s in reports if "malformed" in s.status], [s.status for s in reports]
        assert len(errors) == len(CRAFTED), [e.status for e in errors]
        for report, (case_name, _fields, field, index, shown) in zip(errors, CRAFTED, strict=True):
            facts = json.loads(report.data)
            assert facts["source_node"] == "rogue_node", (case_name, report.status)
            assert (facts["field"], facts["index"]) == (field, index), (case_name, facts)
            assert facts["joint"] in ORDER, (case_name, facts)
            assert "'rogue_node'" in report.status and f"field {field!r}" in report.status
            assert f"(index {index})" in report.status and shown in report.status, report.status
        assert subscription.stats().malformed == 3  # NaN, negative kp, short: refused at decode
        assert rig.node.last_applied is not None
        assert rig.node.last_applied_source == "control_node"
    finally:
        rogue.close()
        rig.close()


# -- the achieved publish rate (issue 11, item 11) --------------------------------------------


def _publish_string(state: BridgeState) -> str:
    return next(s for s in state.status if s.startswith("publish: "))


def test_bridge_state_reports_the_achieved_publish_rate_and_skipped_cycles(rig: Rig) -> None:
    """Stepped: for 2.4 s every sixth cycle does not run (its 2 ms pass without a cycle); the
    bridge says so in every BridgeState, not ``500 Hz``. Its 1 s windows start at its first
    publication: the second one, 1.0–2.0 s, lies wholly in the stalled part."""
    cmd = hold(HOME)
    rig.run(0.2, every_cycle(cmd))
    first = len(rig.states)
    for k in range(1200):
        if k % 6 == 5:
            rig.clock.now += STEP_NS  # a slot with no cycle: nothing published
            continue
        rig.step(cmd)
    text = _publish_string(rig.states[-1])
    assert len(rig.states) - first == 1000  # 1200 slots, 200 of them without a cycle
    # The last complete 1 s window: 500 slots, 417 cycles run ≈ 416.7 Hz, 83 skipped (±1 by
    # where the window starts).
    rate, skipped, slots = _parse_publish(text)
    assert slots == 500, text
    assert skipped in (83, 84), text
    assert rate == pytest.approx((slots - skipped) / 1.0, abs=1.0), text
    assert rig.node.publish_rate_hz == pytest.approx(rate, abs=0.5)
    assert rig.node.publish_skipped == skipped
    rig.run(1.6, every_cycle(cmd))  # back to every cycle: the window 3–4 s is clean
    assert _parse_publish(_publish_string(rig.states[-1]))[:2] == (500.0, 0)


def test_an_inactive_spell_is_not_counted_as_skipped_cycles(rig: Rig) -> None:
    cmd = hold(HOME)
    rig.run(1.2, every_cycle(cmd))
    rig.node.deactivate()
    rig.clock.now += 3_000_000_000  # 3 s without cycles: the node was told to stop
    rig.node.activate()
    rig.run(1.2, every_cycle(cmd))
    rate, skipped, slots = _parse_publish(_publish_string(rig.states[-1]))
    assert (rate, skipped, slots) == (500.0, 0, 500)


def _parse_publish(text: str) -> tuple[float, int, int]:
    """``publish: 417 Hz, 83 of 500 cycles skipped in the last 1.0 s`` → (417.0, 83, 500)."""
    words = text.split()
    return float(words[1]), int(words[3]), int(words[5])


@pytest.mark.long  # real time: 2.5 s of the bridge's own 500 Hz loop
def test_reported_rate_and_skips_match_the_published_stamps_under_an_injected_stall() -> None:
    """The bridge's real rate loop, with a body that stalls 9 ms every 25th cycle (a slow driver
    read, as on a loaded host): what the bridge and its loop statistics report must be what a
    subscriber sees in the header stamps — rate, gaps and lateness. Only ratios of the same run
    are asserted, never absolute speed."""
    sim = SimActuatorArray(SimArrayConfig.from_model(ROBOT, realtime=True, noise=False))
    bus = Bus()
    stamps: list[int] = []  # the published header stamps (wall clock)
    arrivals: list[int] = []  # and when each was published (monotonic: in-process, realtime)

    def received(msg: BridgeData) -> None:
        stamps.append(msg.header.stamp.to_ns())
        arrivals.append(time.monotonic_ns())

    bus.subscribe("/hb50/bridge_data", BridgeData, received, MAB_RT, realtime=True)
    node = BridgeNode(sim, bus, run_loop=False)

    def stalling_body(cycle: CycleInfo) -> None:
        if cycle.index % 25 == 24:
            end = time.monotonic_ns() + 9_000_000
            while time.monotonic_ns() < end:  # busy: a driver read that hangs 9 ms
                pass
        node.cycle(node.clock())

    loop = node.create_rate_loop(500.0, stalling_body, name="bridge")  # window: 10 s
    try:
        node.start()
        time.sleep(2.5)
        snap = loop.stats()  # the whole run: its window is longer
        recent = list(stamps)  # the same cycles, give or take the one running now
        published_at = list(arrivals)
        window = node.publish_window_ns
        state = node.last_state
    finally:
        node.shutdown()
        bus.close()
    span_s = (recent[-1] - recent[0]) / 1e9
    observed_rate = (len(recent) - 1) / span_s
    # The grid had span / period slots between the first and last stamp; the missing ones are
    # those without a publication (counting gaps one by one would misjudge jittery ones).
    observed_fraction = 1.0 - (len(recent) - 1) / (span_s * 500.0)
    longest_gap_s = max(b - a for a, b in pairwise(recent)) / 1e9
    print(
        f"\nstall every 25th cycle: stamps {observed_rate:.0f} Hz, {observed_fraction:.1%} missing;"
        f" loop stats {snap.achieved_rate_hz:.0f} Hz, {snap.skipped_fraction:.1%} skipped, "
        f"late p99 {snap.lateness_p99_s * 1e3:.2f} ms; period p50 {snap.period_p50_s * 1e3:.2f} ms;"
        f" longest gap {longest_gap_s * 1e3:.1f} ms"
    )
    assert observed_fraction > 0.05  # the stall really dropped cycles
    assert snap.achieved_rate_hz == pytest.approx(observed_rate, rel=0.05)
    assert snap.skipped_fraction == pytest.approx(observed_fraction, abs=0.03)
    assert snap.achieved_rate_hz < 0.95 * 500  # not "500 Hz"
    assert snap.lateness_p99_s > snap.period_target_s  # the dropped slots show in p99
    assert snap.lateness_max_s >= 0.5 * longest_gap_s
    # The bridge's own 1 s account, against the stamps published in that same window.
    assert window is not None and state is not None
    rate, skipped, slots = _parse_publish(_publish_string(state))
    ran = sum(window[0] < t <= window[1] for t in published_at)
    assert slots - skipped == pytest.approx(ran, abs=1)
    assert slots == round((window[1] - window[0]) * 500 / 1e9)
    assert rate == pytest.approx(ran / ((window[1] - window[0]) / 1e9), rel=0.01)
    assert skipped > 0.05 * slots


# -- re-entry after the drives stopped following commands (issue 11, items 1 and 4) ---------


def _max_step(commands: list[ImpedanceCommand], start: np.ndarray) -> float:
    """Largest change of any applied target from one cycle to the next (rad), from ``start``."""
    previous, largest = start, 0.0
    for cmd in commands:
        position = cmd.position
        largest = max(largest, float(np.max(np.abs(position - previous))))
        previous = position
    return largest


def test_after_a_reset_a_fresh_far_command_is_ramped_to_from_the_measured_pose(rig: Rig) -> None:
    """A source that did not notice the e-stop keeps sending its standing pose; after the reset
    the bridge moves the target there from where the robot lies, at the re-entry speed, with the
    stiffness rising — never the full-gain step that flipped the robot."""
    stand = hold(HOME)
    rig.run(0.3, every_cycle(stand))
    rig.step("estop")
    slumped = HOME * 0.2  # the body dropped, the legs folded under it
    with rig.sim.locked() as physics:
        physics.actuators.set_state(slumped)
    rig.run(0.2, every_cycle(stand))
    rig.step("reset")
    applied: list[ImpedanceCommand] = []
    sources: list[str] = []
    speeds: list[float] = []
    for _ in range(round(2.0 * 500)):
        rig.step(hold(HOME))  # fresh: sent after the reset, computed before the fall
        assert rig.node.last_applied is not None
        applied.append(rig.node.last_applied)
        sources.append(rig.node.last_applied_source)
        speeds.append(float(np.max(np.abs(rig.sim.read_joints().velocity))))
    config = rig.node.config
    step = config.reentry_speed / config.rate_hz
    first = applied[0]
    assert sources[0] == "bridge_node"
    far = np.abs(HOME - slumped) > config.reentry_tolerance  # the hips' 0.04 rad pass at once
    assert far.sum() == 8
    assert np.max(np.abs(first.position - slumped)[far]) <= step + 1e-6
    assert first.kp[2] < 80.0 / 10  # stiffness starts near zero
    assert _max_step(applied[1:], first.position) <= step + 1e-6
    assert max(speeds) < 1.5 * config.reentry_speed  # the joints follow the slow target
    assert applied[-1] == joint_space(hold(HOME)) and sources[-1] == "control_node"
    assert np.allclose(rig.positions(), HOME, atol=0.02)
    warns = [s.status for s in rig.reports() if s.level == Level.WARN and "re-entry" in s.status]
    assert warns and "e-stop reset" in warns[0] and "(index " in warns[0]
    assert any("re-entry after e-stop reset complete" in t for t in rig.texts())


def test_leaving_safe_mode_ramps_from_the_sagged_pose(rig: Rig) -> None:
    stand = hold(HOME)
    rig.run(0.3, every_cycle(stand))
    rig.run(0.3)  # silence: safe mode
    assert rig.node.mode is BridgeMode.SAFE
    sagged = HOME * 0.6
    with rig.sim.locked() as physics:
        physics.actuators.set_state(sagged)
    rig.step(stand)
    assert rig.node.mode is BridgeMode.RUN
    applied = rig.node.last_applied
    assert applied is not None and applied != joint_space(stand)
    assert np.max(np.abs(applied.position - sagged)) <= rig.node.config.reentry_tolerance
    assert np.max(np.abs(applied.position - sagged)[[1, 2, 4, 5, 7, 8, 10, 11]]) <= 0.003
    assert "reentry: ramping from the measured pose" in rig.states[-1].status
    rig.run(1.5, every_cycle(stand))
    assert applied_as_sent(rig.node, stand)
    status = rig.states[-1].status
    assert status[:2] == ("owner: control_node", "mode: run")
    assert not [s for s in status if s.startswith("reentry")], status  # the ramp has ended


ARM6 = load_robot("arm6")


def test_a_braked_joint_is_not_pushed_and_starts_from_where_it_is_on_release() -> None:
    """The bridge's use of JointCommand.brake: while a joint's brake is set its drive gets no
    stiffness, target velocity or torque (nothing pushes against the brake); on release its
    target starts at the measured position and moves at the re-entry speed, below its limit."""
    clock = FakeClock()
    sim = SimActuatorArray(SimArrayConfig.from_model(ARM6, realtime=False, noise=False))
    bus = Bus()
    publisher = bus.publisher("/hb50/joint_command", JointCommand, MAB_RT)
    timers = TimerThread("bridge-brake-timers", clock=clock, threaded=False)
    node = BridgeNode(sim, bus, timers=timers, run_loop=False)
    names = sim.names
    elbow = names.index("elbow")
    start = sim.read_joints().position.copy()

    def step(cmd: JointCommand) -> None:
        clock.now += STEP_NS
        publisher.publish(cmd)
        node.cycle(clock.now)
        sim.step(0.002)
        timers.run_due(clock.now)

    try:
        node.start()
        target = start.copy()
        target[elbow] += 1.0
        braked = np.zeros(len(names), dtype=bool)
        braked[elbow] = True
        hold_start = JointCommand.hold(names, start.tolist(), 80.0, 3.0, source_node="control_node")
        for _ in range(50):
            step(hold_start)
        pushing = dataclasses.replace(
            JointCommand.hold(names, target.tolist(), 80.0, 3.0, source_node="control_node"),
            brake=tuple(braked.tolist()),
        )
        for _ in range(250):
            step(pushing)
            applied = node.last_applied
            assert applied is not None
            assert applied.kp[elbow] == 0.0 and applied.effort[elbow] == 0.0
            assert bool(applied.brake[elbow]) is True
        assert abs(sim.read_joints().position[elbow] - start[elbow]) < 0.01
        released = JointCommand.hold(names, target.tolist(), 80.0, 3.0, source_node="control_node")
        velocities: list[float] = []
        for _ in range(750):
            step(released)
            velocities.append(abs(float(sim.read_joints().velocity[elbow])))
        limit = sim.config.limits[elbow].velocity_max
        speed = node.config.reentry_speed
        print(
            f"\nelbow after brake release: max {max(velocities):.2f} rad/s (ramp {speed}, "
            f"limit {limit})"
        )
        assert max(velocities) < min(1.5 * speed, limit)
        assert abs(sim.read_joints().position[elbow] - target[elbow]) < 0.02
        assert applied_as_sent(node, released)
    finally:
        node.shutdown()
        bus.close()


def test_a_joint_back_from_thermal_shutdown_re_enters_from_where_it_sagged(rig: Rig) -> None:
    cmd = hold(HOME)
    rig.run(0.2, every_cycle(cmd))
    heat(rig, 7, 105.0)  # rl_j1: drive off
    rig.run(0.05, every_cycle(cmd))
    sagged = HOME.copy()
    sagged[7] += 0.6
    with rig.sim.locked() as physics:
        physics.actuators.set_state(sagged)
    heat(rig, 7, 70.0)  # cooled below shutdown − hysteresis: the drive comes back
    rig.step(cmd)
    applied = rig.node.last_applied
    assert applied is not None and rig.node.last_applied_source == "bridge_node"
    assert abs(applied.position[7] - sagged[7]) <= rig.node.config.reentry_speed / 500 + 1e-6
    # the other joints are not touched
    assert applied.position[:7].tolist() == joint_space(cmd).position[:7].tolist()
    assert any("re-entry after thermal shutdown cleared" in t for t in rig.texts())
    rig.run(1.0, every_cycle(cmd))
    assert applied_as_sent(rig.node, cmd)


def test_stiffness_after_damping_only_starts_from_where_the_joints_drifted(rig: Rig) -> None:
    """A source that sends damping first (its own idle) and then, at once, a standing pose far
    from where the unheld joints drifted: the bridge ramps to it, as after a reset."""
    rig.run(0.2, every_cycle(hold(HOME)))
    damping = JointCommand.damping(ORDER, 1.0, source_node="control_node")
    rig.run(0.2, every_cycle(damping))
    assert applied_as_sent(rig.node, damping)
    drifted = HOME * 0.3
    with rig.sim.locked() as physics:
        physics.actuators.set_state(drifted)
    rig.step(hold(HOME))
    applied = rig.node.last_applied
    assert applied is not None and rig.node.last_applied_source == "bridge_node"
    far = np.abs(HOME - drifted) > rig.node.config.reentry_tolerance
    assert np.max(np.abs(applied.position - drifted)[far]) <= 0.002 + 1e-6
    assert any("re-entry after stiffness regained" in t for t in rig.texts())


# ------------------------------------------------- the bridge is hb50's array node (issue 12)


def test_the_bridge_publishes_the_array_node_topics_stamped_like_bridge_data(rig: Rig) -> None:
    """Beam Bots ``joint_state``, Player ``actarray/data`` and Rock ``joints`` of hb50 at
    ``array_topics_hz`` (100 Hz: every 5th cycle) while someone listens, each with the values and
    stamp of one cycle's ``bridge_data``; the geometry is latched."""
    names = ArrayNames("hb50")
    states: list[jointbus_msgs.JointState] = []
    data: list[ActuatorArrayData] = []
    joints: list[Joints] = []
    geometry: list[ArrayGeometry] = []
    sub = rig.bus.subscribe
    sub(names.joint_state, jointbus_msgs.JointState, states.append, MAB_RT, realtime=True)
    sub(names.data, ActuatorArrayData, data.append, MAB_RT, realtime=True)
    sub(names.joints, Joints, joints.append, MAB_RT, realtime=True)
    sub(names.geometry, ArrayGeometry, geometry.append, LATCHED, realtime=True)
    before = len(rig.data)
    rig.run(0.1, every_cycle(hold(HOME)))
    frames = {f.header.stamp: f for f in rig.data[before:]}
    assert len(frames) == 50
    assert len(states) == len(data) == len(joints) == 10
    assert len(geometry) == 1 and len(geometry[0].actuators) == len(ORDER)
    for state, player, rock in zip(states, data, joints, strict=True):
        frame = frames[state.header.stamp]
        assert tuple(state.name) == ORDER == tuple(rock.names)
        assert state.header.stamp == player.header.stamp == frame.header.stamp
        np.testing.assert_allclose(state.position, frame.joint_position, atol=1e-6)
        assert [a.position for a in player.actuators] == list(state.position)
        assert [s.position for s in rock.samples] == list(state.position)
        assert player.motor_power


def test_unobserved_array_node_topics_cost_nothing(rig: Rig) -> None:
    """Nobody listens to ``/hb50/joint_state`` and friends: the bridge builds none of them (its
    500 Hz cycle stays as cheap as before it was an array node)."""
    rig.run(0.1, every_cycle(hold(HOME)))
    for publisher in (rig.node._pub_state, rig.node._pub_data, rig.node._pub_joints):
        assert not publisher.observed
        assert publisher.stats().published == 0
    assert rig.data  # bridge_data is published as always


def test_a_joint_impedance_source_takes_over_like_a_joint_command_source(rig: Rig) -> None:
    """The generic ``JointImpedance`` (what a ``bus://hb50`` client sends) joins hb50's
    arbitration: a custom source at 500 Hz takes over from the control node, and falls back."""
    names = ArrayNames("hb50")
    generic = rig.bus.publisher(names.impedance_command, JointImpedance, MAB_RT)
    squat = HOME * 0.98
    squat_msg = JointImpedance(
        header=Header(),
        source_node="squat",
        name=ORDER,
        position=tuple(squat.tolist()),
        velocity=(0.0,) * len(ORDER),
        effort=(0.0,) * len(ORDER),
        kp=(80.0,) * len(ORDER),
        kd=(3.0,) * len(ORDER),
        brake=(False,) * len(ORDER),
    )

    def both(_k: int) -> JointCommand:
        generic.publish(squat_msg)
        return hold(HOME)

    rig.run(1.0, both)
    assert rig.node.owner == "squat"
    applied = rig.node.last_applied
    assert applied is not None and rig.node.last_applied_source == "squat"
    np.testing.assert_allclose(applied.position, squat, atol=1e-6)
    rig.run(0.5, every_cycle(hold(HOME)))
    assert rig.node.owner == "control_node"
    assert any("squat" in t for t in rig.texts() if "owner" in t)


def test_a_player_command_is_refused_while_the_control_node_streams(rig: Rig) -> None:
    """A one-shot Player position command while the control node's impedance stream drives the
    robot is NACKed (``OWNED``, naming the owner) and moves nothing — its next command would
    override it 2 ms later. Once the stream has been silent for the watchdog time (safe mode) the
    command takes the array (``idle``) and is carried out; the stream's next command ends it."""
    names = ArrayNames("hb50")
    rig.run(0.2, every_cycle(hold(HOME)))
    assert rig.node.mode is BridgeMode.RUN
    command = jointbus_msgs.ActuatorPositionCommand
    position = rig.bus.client(names.command("position"), command, ActuatorReply)
    target = float(HOME[2]) + 0.05
    refused = position.call(command(joint=2, position=target))
    assert not refused.accepted and refused.reason == "OWNED"
    assert "'control_node' streams impedance commands" in refused.detail
    rig.step(hold(HOME))
    assert rig.node.mode is BridgeMode.RUN and applied_as_sent(rig.node, hold(HOME))
    rig.run(0.3)  # the control node is silent: safe mode after the 0.25 s watchdog
    assert rig.node.mode is BridgeMode.SAFE
    reply = position.call(command(joint=2, position=target))
    assert reply.accepted, reply.reason
    rig.run(0.5)
    assert rig.node.mode is BridgeMode.IDLE and rig.node.last_applied is None
    assert BridgeStatus.parse(rig.states[-1].status).mode is BridgeMode.IDLE
    assert abs(rig.positions()[2] - target) < 0.01
    rig.step(hold(HOME))
    assert rig.node.mode is BridgeMode.RUN


def test_the_estop_service_latches_the_bridge_and_a_hardware_reset_rearms_it(sto_rig: Rig) -> None:
    """``/hb50/estop`` (what ``bus://hb50`` and ``jointbus estop`` call) is hb50's e-stop: drives
    off, motion refused with ESTOPPED naming the reason; ``reset`` on ``hardware_command`` holds
    the measured pose until a fresh command."""
    names = ArrayNames("hb50")
    sto_rig.run(0.2, every_cycle(hold(HOME)))
    assert sto_rig.bus.client(names.estop, String, ActuatorReply).call(String("test stop")).accepted
    sto_rig.step(hold(HOME))
    assert sto_rig.node.mode is BridgeMode.ESTOP
    assert BridgeStatus.parse(sto_rig.states[-1].status).estop_reason == "test stop"
    assert not sto_rig.states[-1].drives_enabled
    power = sto_rig.bus.client(names.request("power"), PowerRequest, ActuatorReply)
    refused = power.call(PowerRequest(on=True))
    assert not refused.accepted and refused.reason == "ESTOPPED"
    assert "test stop" in refused.detail
    sto_rig.step("reset")
    assert sto_rig.node.mode is BridgeMode.HOLD
    sto_rig.step(hold(HOME))
    assert sto_rig.node.mode is BridgeMode.RUN


def test_a_second_sender_under_the_control_nodes_name_is_refused(rig: Rig) -> None:
    """A ``bus://hb50`` client left at its default source ``control_node`` beside the real control
    node: its ``JointImpedance`` is refused (named: source, field, the fix) instead of
    interleaving two targets under one name; the control node's commands keep applying."""
    generic = rig.bus.publisher(ArrayNames("hb50").impedance_command, JointImpedance, MAB_RT)
    intruder = JointImpedance(
        header=Header(),
        source_node="control_node",
        name=ORDER,
        position=tuple((HOME * 0.9).tolist()),
        velocity=(0.0,) * len(ORDER),
        effort=(0.0,) * len(ORDER),
        kp=(80.0,) * len(ORDER),
        kd=(3.0,) * len(ORDER),
        brake=(False,) * len(ORDER),
    )
    cmd = hold(HOME)

    def both(_k: int) -> JointCommand:
        generic.publish(intruder)
        return cmd

    rig.run(0.2, every_cycle(cmd))  # the control node streams first, as on a running robot
    rig.run(0.2, both)
    assert applied_as_sent(rig.node, cmd)
    refusals = [s for s in rig.errors() if "field 'source_node'" in s.status]
    assert refusals and "bus://NS?source=NAME" in refusals[0].status
    assert json.loads(refusals[0].data)["field"] == "source_node"
    # once the control node has been silent for the watchdog time, the name is free again
    rig.run(0.3)
    rig.run(0.2, lambda _k: generic.publish(intruder))
    assert rig.node.last_applied_source in ("control_node", "bridge_node")
    applied = rig.node.last_applied
    assert applied is not None and not np.allclose(applied.position, HOME)


def test_a_joint_at_shutdown_temperature_has_its_drive_off_alone_until_it_cooled(rig: Rig) -> None:
    """As in every array node: the hot joint's own drive is switched off (limp, ``UNPOWERED``)
    while the others keep their commands; cooled below shutdown − hysteresis it is on again."""
    cmd = hold(HOME)
    rig.run(0.2, every_cycle(cmd))
    heat(rig, 7, 105.0)
    rig.run(0.1, every_cycle(cmd))
    reading = rig.sim.read_joints()
    assert reading.motor_power and reading.state[7] & ActuatorState.UNPOWERED
    assert not any(reading.state[j] & ActuatorState.UNPOWERED for j in range(12) if j != 7)
    assert rig.node.mode is BridgeMode.RUN and rig.node.last_applied is not None
    heat(rig, 7, 70.0)
    rig.run(0.1, every_cycle(cmd))
    assert not rig.sim.read_joints().state[7] & ActuatorState.UNPOWERED


def test_commands_during_an_estop_are_said_to_be_ignored_once_per_source(rig: Rig) -> None:
    """The control node keeps streaming (damping) through an e-stop: one WARN per source says its
    commands are ignored until the reset — not one a second for as long as the stop lasts."""
    rig.run(0.2, every_cycle(hold(HOME)))
    rig.step("estop test")
    rig.run(3.0, every_cycle(hold(HOME)), every_cycle(hold(HOME, source="teleop")))
    ignored = [t for t in rig.texts() if "is ignored while the e-stop is latched" in t]
    assert len(ignored) == 2, ignored
    assert any("'control_node'" in t for t in ignored) and any("'teleop'" in t for t in ignored)
    rig.step("reset")
    rig.run(0.2, every_cycle(hold(HOME)))
    rig.step("estop again")  # a new stop says it again
    rig.run(0.2, every_cycle(hold(HOME)))
    ignored = [t for t in rig.texts() if "is ignored while the e-stop is latched" in t]
    assert len(ignored) == 3, ignored


def test_a_reset_rearms_the_drives_when_no_stream_was_running(sto_rig: Rig) -> None:
    """hb50's ``reset`` switches the drives on whether or not an impedance stream ran before the
    stop (here a one-shot Player command had the array): ``jointbus estop --reset`` promises
    "drives on"; without a stream there is nothing to hold, so the mode is ``idle``."""
    names = ArrayNames("hb50")
    sto_rig.run(0.2, every_cycle(hold(HOME)))
    sto_rig.run(0.3)  # the control node is silent: safe mode
    command = jointbus_msgs.ActuatorPositionCommand
    position = sto_rig.bus.client(names.command("position"), command, ActuatorReply)
    assert position.call(command(joint=2, position=float(HOME[2]))).accepted
    sto_rig.step()
    assert sto_rig.node.mode is BridgeMode.IDLE
    sto_rig.step("estop test")
    assert sto_rig.node.mode is BridgeMode.ESTOP and not sto_rig.sim.read_joints().motor_power
    sto_rig.step("reset")
    assert sto_rig.sim.read_joints().motor_power and sto_rig.states[-1].drives_enabled
    assert sto_rig.node.mode is BridgeMode.IDLE
    assert any("reset: drives on" in t for t in sto_rig.texts())


class _PaceRig:
    """A bridge on a stepped simulator whose robot time the test advances (``sim_time_ns``),
    one cycle per 2 ms of a fake clock: the bridge's pace windows and reports, without threads."""

    def __init__(self) -> None:
        config_sim = SimArrayConfig.from_model(ROBOT, realtime=False, noise=False)
        self.sim_time_ns = 0
        self.clock = FakeClock()
        self.bus = Bus()
        self.statuses: list[Status] = []
        self.states: list[BridgeState] = []
        self.bus.subscribe("/hb50/status", Status, self.statuses.append, RELIABLE, realtime=True)
        self.bus.subscribe(
            "/hb50/bridge_state", BridgeState, self.states.append, MAB_RT, realtime=True
        )
        sim = SimActuatorArray(dataclasses.replace(config_sim, initial_positions=tuple(HOME)))
        timers = TimerThread("pace-timers", clock=self.clock, threaded=False)
        self.node = BridgeNode(
            sim,
            self.bus,
            timers=timers,
            run_loop=False,
            stamp_ns=lambda: 1_000_000_000 + self.sim_time_ns,
        )
        self.node.start()
        # the host's steal, as the test sets it (s per CPU since boot): the real one moves
        self.steal = (0.0, 0.0)
        self.node.host_steal = StealSamples(read=lambda: self.steal)
        self.commands = self.bus.publisher("/hb50/joint_command", JointCommand, MAB_RT)

    def cycles(self, seconds: float, *, every: int = 1, robot_ns: float = STEP_NS) -> None:
        """``seconds`` of slots; a cycle runs in one slot of ``every`` and advances the robot's
        time by ``robot_ns`` (the slots whose cycle did not run do not advance it)."""
        for k in range(round(seconds * 500)):
            self.clock.now += STEP_NS
            if k % every:
                continue  # this slot's cycle did not run: the simulator did not advance either
            self.sim_time_ns += round(robot_ns)
            self.commands.publish(hold(HOME))
            self.node.cycle(self.clock.now)
            self.node.timers.run_due(self.clock.now)

    def pace_reports(self) -> list[Status]:
        self.node.reporter.flush()
        return [s for s in self.statuses if "real time" in s.status or "skips cycles" in s.status]

    def close(self) -> None:
        self.node.shutdown()
        self.bus.close()


def test_a_bridge_that_falls_behind_says_so_with_its_figures_and_when_it_caught_up() -> None:
    """Issue 21, never silent: a stepped simulator whose bridge misses cycles lives slower than
    the wall clock. Within the next 1 s window /hb50/status carries one WARN with the achieved
    rate, the skipped share and the real-time factor, and BridgeState's ``pace:`` the figures;
    once the bridge keeps up again, one OK. A bridge that keeps up says nothing."""
    rig = _PaceRig()
    node, clock, states = rig.node, rig.clock, rig.states
    try:
        rig.cycles(2.2)
        assert rig.pace_reports() == []
        facts = BridgeStatus.of(states[-1])
        assert facts.real_time_factor == 1.0 and facts.frame_rate_hz == 500.0
        assert facts.command_rate_hz == 500.0
        rig.cycles(2.2, every=4)  # three slots in four lost: the robot runs at 0.25× the clock
        (behind,) = rig.pace_reports()  # said once, at the first window that fell behind
        assert behind.level == Level.WARN
        assert behind.status.startswith("bridge falls behind real time: ")
        assert "of 500 Hz," in behind.status and "% of cycles skipped, real-time factor 0." in (
            behind.status
        )
        facts = BridgeStatus.of(states[-1])
        assert facts.real_time_factor == 0.25 and facts.frame_rate_hz == 125.0
        assert "the robot moves slower than the wall clock" in behind.status
        rig.cycles(2.2)
        back = rig.pace_reports()[-1]
        assert back.level == Level.OK and back.status.startswith("bridge back to real time: 500.0")
        assert len(rig.pace_reports()) == 2
        # one slot in 20 skipped, the simulator stepping it in the next cycle (as the stepped
        # simulator catches up): 5 % skipped at a real-time factor of 1 — behind, but not slower
        for k in range(round(2.2 * 500)):
            clock.now += STEP_NS
            rig.sim_time_ns += STEP_NS
            if k % 20 == 19:
                continue
            rig.commands.publish(hold(HOME))
            node.cycle(clock.now)
            node.timers.run_due(clock.now)
        skipping = rig.pace_reports()[-1]
        assert skipping.level == Level.WARN and "real-time factor 1.000" in skipping.status
        # its title says what is true: not behind real time, but skipping cycles
        assert skipping.status.startswith("bridge skips cycles: ")
        assert "moves slower" not in skipping.status
        assert "read and commanded in fewer cycles" in skipping.status
    finally:
        rig.close()


def test_a_pace_warn_names_the_cpu_time_the_vms_host_took_meanwhile() -> None:
    """On a VM the hypervisor can stop the CPUs while they have work (steal): the bridge's
    loop then drops slots although its cycle is cheap. The WARN says how much the host took in
    its window (as the timer thread sampled it, every 0.1 s), so the user does not hunt for a
    slow cycle in the robot's code; a window without steal adds nothing."""
    rig = _PaceRig()
    try:
        rig.cycles(2.2)
        rig.cycles(1.1, every=20, robot_ns=20 * STEP_NS)  # skipping, no steal
        (plain,) = rig.pace_reports()
        assert plain.status.startswith("bridge skips cycles: ")
        assert "host" not in plain.status
        rig.cycles(2.2)  # back: its OK
        # 40 ms of cpu0 and 10 ms of cpu1 stolen in every 0.1 s sample from now on
        for k in range(round(2.2 * 500)):
            if k % 50 == 0:
                rig.steal = (rig.steal[0] + 0.04, rig.steal[1] + 0.01)
            rig.clock.now += STEP_NS
            if k % 20:
                continue
            rig.sim_time_ns += 20 * STEP_NS
            rig.commands.publish(hold(HOME))
            rig.node.cycle(rig.clock.now)
            rig.node.timers.run_due(rig.clock.now)
        stolen = rig.pace_reports()[-1]
        assert stolen.status.startswith("bridge skips cycles: "), stolen.status
        clause = stolen.status.split("; the VM's host held this machine's CPUs for ")[1]
        found = re.match(r"(\d+) ms of ([\d.]+) s \(cpu0 (\d+) ms, cpu1 (\d+) ms: ", clause)
        assert found is not None, stolen.status
        total, span_s, cpu0, cpu1 = int(found[1]), float(found[2]), int(found[3]), int(found[4])
        # the samples nearest the 1 s window's ends; the window began before the steal did (its
        # WARN is the first behind window's), so at most 50 ms for each 0.1 s of it, 4 to 1
        assert 0.9 <= span_s <= 1.1, stolen.status
        assert 0 < total <= round(span_s * 500) and total % 50 == 0, stolen.status
        assert (cpu0, cpu1) == (total * 4 // 5, total // 5), stolen.status
        assert clause.endswith("steal time, when nothing here could run)")
    finally:
        rig.close()


def test_the_bridge_judges_the_real_time_factor_it_prints() -> None:
    """A new-user trial read "falls behind real time … real-time factor 0.980" while the status
    line, comparing the printed 0.980 with the 0.98 bound, did not flag it. The bridge now judges
    the factor as it publishes it (three digits): 0.9796 is 0.980, on time by both; 0.9794 is
    0.979, behind by both."""
    rig = _PaceRig()
    try:
        rig.cycles(2.2, robot_ns=0.9796 * STEP_NS)
        facts = BridgeStatus.of(rig.states[-1])
        assert facts.real_time_factor == 0.98
        assert not facts.real_time_factor < BEHIND_RTF  # what a display decides from the string
        assert rig.pace_reports() == []
        rig.cycles(2.2, robot_ns=0.9794 * STEP_NS)
        facts = BridgeStatus.of(rig.states[-1])
        assert facts.real_time_factor == 0.979 and facts.real_time_factor < BEHIND_RTF
        (behind,) = rig.pace_reports()
        assert behind.status.startswith("bridge falls behind real time: ")
        assert "real-time factor 0.979 over the last 1 s" in behind.status
    finally:
        rig.close()


def test_a_bridge_that_skips_cycles_and_then_falls_behind_the_clock_says_so_at_once() -> None:
    """A new user's trial (2026-12-05): the demo's status line read "rtf=0.943 … BEHIND REAL
    TIME" eleven times while /hb50/status had only "bridge skips cycles … real-time factor
    0.990": the first window's WARN stood until its repeat ten windows later. A change from
    skipping (the clock kept) to slower than the clock is now said in the window it happens."""
    rig = _PaceRig()
    try:
        rig.cycles(2.2)
        # a cycle in one slot of 20, each stepping the 20 slots' time: skipping, the clock kept
        rig.cycles(2.2, every=20, robot_ns=20 * STEP_NS)
        (skipping,) = rig.pace_reports()
        assert skipping.status.startswith("bridge skips cycles: "), skipping.status
        rig.cycles(1.1, every=2, robot_ns=1.8 * STEP_NS)  # now 0.9x the clock: slower
        slower = rig.pace_reports()
        assert len(slower) == 2, [s.status for s in slower]
        assert slower[-1].status.startswith("bridge falls behind real time: ")
        factor = float(slower[-1].status.split("real-time factor ")[1].split()[0])
        assert 0.89 <= factor < BEHIND_RTF, slower[-1].status  # its window: mostly the 0.9x
        rig.cycles(1.1, every=2, robot_ns=1.8 * STEP_NS)  # still slower: not said again yet
        assert len(rig.pace_reports()) == 2
    finally:
        rig.close()


def test_the_pace_windows_run_between_due_times_so_the_factor_goes_with_the_skips() -> None:
    """A user read "bridge skips cycles … real-time factor 1.001" from a robot that kept the
    clock: the window was timed from when its first cycle ran, 1.5 ms late after a stall (whose
    slots the stepped simulator caught up in it), to a cycle on time, while the frames carry
    their cycles' due times — 1.001 for that window, 0.999 and a phantom skipped cycle (19 of
    501 due) for the one before. Timed between due times (the loop's deadlines), every window
    says 1.000 and the slots really dropped: 3 at the window's end, 3 in each 100 slots."""
    rig = _PaceRig()
    node, clock = rig.node, rig.clock
    stalled = {497, 498, 499} | {k for k in range(3100) if k % 100 in (50, 51, 52)}
    factors: list[float] = []
    skipped: list[tuple[int, float]] = []
    try:
        for k in range(3100):
            clock.now += STEP_NS  # slot k is due
            rig.sim_time_ns += STEP_NS  # the stepped simulator keeps every slot's time
            if k in stalled:
                continue
            late = 1_500_000 if k - 1 in stalled else 0  # the cycle after a stall runs late
            rig.commands.publish(hold(HOME))
            node.cycle(clock.now + late, clock.now)
            node.timers.run_due(clock.now + late)
            window = node.publish_window_ns
            if window is not None and (not skipped or window[1] != skipped[-1][0]):
                factors.append(node.real_time_factor)
                skipped.append((window[1], node.publish_skipped))
        assert factors == [1.0] * 6
        assert [n for _, n in skipped] == [18, 15, 15, 15, 15, 15]
        (warn,) = rig.pace_reports()
        assert warn.status.startswith(
            "bridge skips cycles: 482.0 Hz of 500 Hz, 3.6 % of cycles skipped, real-time factor "
            "1.000 over the last 1 s"
        )
    finally:
        rig.close()


# -- the fallback and the e-stop category ----------------------------------------------------


@pytest.fixture
def model_rig() -> Iterator[Rig]:
    """A bridge built from the robot file, as the stack builds it: hb50's stance fallback."""
    r = Rig(BridgeConfig.from_model(ROBOT))
    yield r
    r.close()


def test_a_silent_owner_hands_a_standing_robot_to_the_stance_fallback_which_says_so(
    model_rig: Rig,
) -> None:
    rig = model_rig
    cmd = hold(HOME)
    rig.run(0.3, every_cycle(cmd))
    rig.run(0.3)  # the owner falls silent: after 250 ms the fallback takes over
    assert rig.node.mode is BridgeMode.SAFE and rig.node.fallback_phase == "stance"
    applied = rig.node.last_applied
    assert applied is not None and min(applied.kp.tolist()) > 70.0  # stiff, not damping
    assert "fallback: stance" in rig.states[-1].status
    assert BridgeStatus.of(rig.states[-1]).fallback == "stance"
    texts = rig.texts()
    assert any("fallback: no command for" in t and "while the robot stood" in t for t in texts)
    # the owner's next command, computed before the stall, is held back while it is not quiet
    rig.step(cmd)
    assert rig.node.mode is BridgeMode.SAFE and rig.node.last_applied_source == "bridge_node"
    texts = rig.texts()
    assert any("not applied during the fallback" in t and "not yet quiet" in t for t in texts)
    rig.run(0.7)  # stance done and still: but its stale command was refused last, so the
    assert rig.node.mode is BridgeMode.SAFE  # sender sees the drives unavailable, to notice
    # noticed: it sends damping, refused (it would drop the robot)
    rig.step(JointCommand.hold(ORDER, HOME.tolist(), 0.0, 3.0, source_node="control_node"))
    assert any("damping only" in t for t in rig.texts())
    rig.step()  # now the bridge holds a pose a controller may start from
    assert rig.node.mode is BridgeMode.HOLD and rig.states[-1].drives_enabled is True
    far = hold(HOME + np.where(np.arange(12) % 3 == 2, 0.4, 0.0))
    rig.step(far)
    assert rig.node.mode is BridgeMode.SAFE
    assert any("from the measured" in t for t in rig.texts())
    rig.step(hold(rig.positions()))  # a stand-up from the measured pose is admitted
    assert rig.node.mode is BridgeMode.RUN and rig.node.fallback_phase is None
    assert any("fallback (stance, then sit) ended" in t for t in rig.texts())


def test_commands_the_fallback_refuses_earn_no_rank_over_the_control_node(
    model_rig: Rig,
) -> None:
    """A user's trial (2026-12-06, a CPU hog beside it): a custom controller whose every command
    the stance fallback refused (its target far from the measured pose) still won takeovers, so
    the control node's admissible commands were "not applied: 'my_ctl' owns the array" until
    the robot sat down. Refused, they count for nothing: the control node ends the fallback."""
    rig = model_rig
    rig.run(0.3, every_cycle(hold(HOME)))
    rig.run(0.3)  # the owner falls silent: the stance fallback takes over
    assert rig.node.mode is BridgeMode.SAFE and rig.node.fallback_phase == "stance"
    far = hold(HOME + np.where(np.arange(12) % 3 == 2, 0.4, 0.0), source="my_ctl")
    rig.run(1.0, every_cycle(far))  # 500 Hz of commands the fallback refuses
    assert rig.node.arbiter.current == "control_node"
    assert any("from 'my_ctl' not applied during the fallback" in t for t in rig.texts())
    rig.step(hold(rig.positions()), far)  # the control node stands up from the measured pose
    assert rig.node.fallback_phase is None, rig.texts()[-5:]
    assert rig.node.mode is BridgeMode.RUN
    assert any(
        "fallback (stance, then sit) ended" in t and "'control_node' commands again" in t
        for t in rig.texts()
    )
    assert not [t for t in rig.texts() if "-> 'my_ctl'" in t]


def test_a_source_that_owns_nothing_does_not_change_what_the_fallback_shows_the_owner(
    model_rig: Rig,
) -> None:
    """The fallback shows ``safe`` while the owner's stiff commands are refused (so a controller
    that missed its own stall notices), ``hold`` once it may start from the measured pose.
    Another source's refused commands are only asked about: they leave ``hold`` as it is."""
    rig = model_rig
    rig.run(0.3, every_cycle(hold(HOME)))
    rig.run(1.2)  # silent: the stance, quiet and held
    assert rig.node.mode is BridgeMode.HOLD
    far = HOME + np.where(np.arange(12) % 3 == 2, 0.4, 0.0)
    rig.run(0.2, every_cycle(hold(far, source="my_ctl")))
    assert rig.node.mode is BridgeMode.HOLD, rig.texts()[-3:]
    rig.step(hold(far))  # the owner's own stiff command, refused: it is shown safe
    assert rig.node.mode is BridgeMode.SAFE


def test_a_category_1_estop_damps_to_rest_then_switches_the_drives_off(rig: Rig) -> None:
    cmd = hold(HOME)
    rig.run(0.3, every_cycle(cmd))
    rig.step(cmd, "estop jointbus_cli")
    assert rig.node.mode is BridgeMode.ESTOP  # latched at once
    applied = rig.node.last_applied
    assert applied is not None and applied.kp.tolist() == [0.0] * 12  # damping, not the owner's
    assert applied.kd.tolist() == [SAFE_KD] * 12
    status = BridgeStatus.of(rig.states[-1])
    assert status.estop_stop is not None and status.estop_stop.startswith("category 1: damping")
    assert rig.sim.read_joints().motor_power is True
    rig.run(0.1, every_cycle(cmd))  # nothing the owner sends is applied
    assert rig.node.last_applied_source == "bridge_node"
    assert rig.node.last_applied is not None and rig.node.last_applied.kp.max() == 0.0
    # the joints are at rest (this simulator has no gravity): drives off after 0.2 s at rest
    rig.run(0.2, every_cycle(cmd))
    assert rig.sim.read_joints().motor_power is False and rig.node.last_applied is None
    assert "estop stop: category 1: damped stop over, drives off" in rig.states[-1].status
    assert any("damped stop over after" in t and "drives off" in t for t in rig.texts())


def test_a_category_0_estop_is_drives_off_at_once_and_says_so(sto_rig: Rig) -> None:
    sto_rig.run(0.3, every_cycle(hold(HOME)))
    sto_rig.step("estop")
    assert sto_rig.sim.read_joints().motor_power is False
    assert "estop stop: category 0 (STO): drives off at once" in sto_rig.states[-1].status


def test_a_category_1_stop_ends_at_its_bound_while_joints_still_move() -> None:
    rig = Rig(BridgeConfig(estop_stop_s=0.1))
    try:
        rig.run(0.3, every_cycle(hold(HOME)))
        moving = hold(HOME + 1.0)
        rig.run(0.05, every_cycle(moving))  # re-entry ramp: joints move at ~1 rad/s
        rig.step("estop")
        rig.run(0.05)
        assert rig.sim.read_joints().motor_power is True
        rig.run(0.06)
        assert rig.sim.read_joints().motor_power is False
    finally:
        rig.close()


def test_a_category_1_stop_keeps_its_bound_by_the_clock_when_cycles_are_dropped() -> None:
    """A loop that runs one slot in four (a loaded host) must not stretch the stop: 0.1 s of
    the node's clock, not 50 cycles."""
    rig = Rig(BridgeConfig(estop_stop_s=0.1))
    try:
        rig.run(0.3, every_cycle(hold(HOME)))
        rig.run(0.05, every_cycle(hold(HOME + 1.0)))  # joints moving: no early end at rest
        rig.step("estop")
        for _ in range(13):  # 12 cycles, 4 slots apart: 0.104 s of the clock
            rig.clock.now += 3 * rig.period_ns  # three slots dropped before each cycle
            rig.step()
        assert rig.sim.read_joints().motor_power is False
    finally:
        rig.close()


def test_bad_estop_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="estop_category"):
        BridgeConfig(estop_category=2)
    with pytest.raises(ValueError, match="estop_stop_s"):
        BridgeConfig(estop_stop_s=0.0)


def test_joints_measured_past_a_position_or_speed_limit_are_reported_and_counted(
    rig: Rig,
) -> None:
    """Issue 22 item 2 on hb50's bridge: every measured reading is watched, with or without a
    command: a knee folded past its end and a hip turning past its speed limit are each one ERROR
    on /hb50/status with joint, index, value and limit (JSON in ``data``), and counted in the
    events /hb50/diagnostics carries."""
    rig.run(0.1, every_cycle(hold(HOME)))
    placed = HOME.copy()
    placed[2] = -2.75  # fr_j2, limit [-2.705, 0]
    speeds = np.zeros(12)
    speeds[3] = 25.0  # fl_j0, limit 20 rad/s
    with rig.sim.locked() as physics:
        physics.actuators.set_state(placed, speeds)
    rig.step()
    facts = [
        json.loads(bytes(s.data).decode())
        for s in rig.errors()
        if s.data and b'"event": "limit"' in bytes(s.data)
    ]
    position = next(f for f in facts if f["kind"] == "position")
    assert (position["joint"], position["index"], position["limit"]) == ("fr_j2", 2, -2.705)
    assert position["value"] == pytest.approx(-2.75, abs=0.01)
    speed = next(f for f in facts if f["kind"] == "speed")
    assert (speed["joint"], speed["index"], speed["limit"]) == ("fl_j0", 3, 20.0)
    assert speed["value"] > 22.0
    texts = [t for t in rig.texts() if "past its position limit" in t or "faster than" in t]
    assert any("'fr_j2' (index 2)" in t and "limit -2.705 rad" in t for t in texts)
    counts = rig.node.event_counts()
    assert counts["limit position"] == 1 and counts["limit speed"] == 1


def test_diagnostics_count_the_applied_commands_by_age_since_the_start(rig: Rig) -> None:
    """The soak judges the command age's p99 over its whole run from these counts: every command
    the bridge applied, by how many cycles after the frame it answers (as the status line's
    ``command age p99``), the old ones in ``8+``; unstamped commands are not aged."""
    rig.run(0.4, every_cycle(hold(HOME)))  # unstamped: no age
    before = rig.node.event_counts()
    assert sum(v for k, v in before.items() if k.startswith("command age")) == 0
    # This rig stamps frames by the wall clock, so the age of an answer is the wall-clock time
    # between its frame and the cycle that applies it (a command the bridge takes a cycle late
    # is a cycle older): the bins are checked by what is certain of them.
    for back, cycles in ((0, 100), (2, 50)):  # answers to the newest frame and to 2 back
        for _ in range(cycles):
            rig.step(answering_frame(rig, back))
    old_frame = rig.data[-1].header.stamp
    time.sleep(0.06)  # more than 25 cycles of the wall clock old, less than the 0.25 s watchdog
    for _ in range(50):
        rig.step(
            JointCommand.hold(
                ORDER, HOME.tolist(), 80.0, 3.0, source_node="control_node",
                header=Header(old_frame, ""),
            )
        )
    counts = rig.node.event_counts()
    ages = {k: v for k, v in counts.items() if k.startswith("command age")}
    assert list(ages) == [f"command age {n} cycles" for n in range(8)] + ["command age 8+ cycles"]
    counted = list(ages.values())
    # one count a cycle for the 200 cycles that applied an answer (the first may still have
    # applied the unstamped hold before them); fresh answers in the low bins, and the 50 cycles
    # on the 60 ms old frame in 8+
    assert 199 <= sum(counted) <= 200, counted
    assert counted[0] + counted[1] + counted[2] > 0 and counted[8] >= 50, counted
    assert counts["limit position"] == 0  # the array node's counts stay beside them


def test_a_command_stamped_with_its_senders_clock_has_no_age(rig: Rig) -> None:
    """A user's trial (2026-12-06): the README's own controller stamps its commands with
    ``Header.now()``; against a simulator's frames, which fall behind the wall clock by what the
    host's stalls lost, ``command age p99`` read 17 cycles while it answered each frame within
    5 ms. A stamp that is none of the frames' has no sensor-to-command age: ``-``, not counted."""
    rig.run(0.4, every_cycle(hold(HOME)))
    before = rig.node.event_counts()
    # stamps 50 ms behind the frames, as the trial's were, but not a frame's own: a clock's
    for _ in range(600):  # past a 1 s pace window
        stamp_ns = rig.data[-1].header.stamp.to_ns() - 50 * MS - 123_457
        rig.step(
            JointCommand.hold(
                ORDER, HOME.tolist(), 80.0, 3.0, source_node="control_node",
                header=Header(Time.from_ns(stamp_ns), ""),
            )
        )
    assert rig.node.mode is BridgeMode.RUN  # applied, as any fresh command is
    counts = rig.node.event_counts()
    assert all(counts[k] == before.get(k, 0) for k in counts if k.startswith("command age"))
    assert rig.node.command_age_p99_cycles is None
    pace = next(t for t in rig.states[-1].status if t.startswith("pace: "))
    assert pace.endswith("command age p99 - cycles"), pace
    # the same commands stamped with a frame's stamp are aged
    for _ in range(600):
        rig.step(answering_frame(rig, 3))
    assert rig.node.command_age_p99_cycles is not None  # (wall-clock cycles: this rig is fast)


def test_a_source_that_lost_control_is_told_the_longer_stream_it_now_needs(rig: Rig) -> None:
    """After a loss a source needs 0.8 s of steady commands (the back-off): waiting longer than
    the 0.5 s window, it is told so with its own figure, not the 0.4 s of a first takeover."""
    custom = hold(MOVED, source="teleop")
    rig.run(0.2, every_cycle(hold(HOME)))
    rig.run(0.5, every_cycle(hold(HOME)), every_cycle(custom))
    assert rig.node.arbiter.current == "teleop"
    rig.run(0.2, every_cycle(hold(HOME)))  # teleop stops: silent, it lost control
    assert rig.node.arbiter.current == "control_node"
    rig.run(0.7, every_cycle(hold(HOME)), every_cycle(custom))
    assert rig.node.arbiter.current == "control_node"  # 0.7 s < the 0.8 s it now needs
    said = [s.status for s in rig.reports() if "commands from 'teleop' are not applied" in s.status]
    assert said, rig.texts()
    rule = (
        "sends at ≥ 10 Hz for 0.8 s (it stopped, slowed or was refused, and lost the actuators "
        "within 10 s)"
    )
    assert rule in said[-1], said[-1]
    rig.run(0.2, every_cycle(hold(HOME)), every_cycle(custom))
    assert rig.node.arbiter.current == "teleop"



@pytest.mark.parametrize(
    ("torque", "first_age_s", "gap_cycles"),
    [(1.5, 0.19, 0), (0.0, 0.24, 10)],
    ids=["mid-stride-0.19s", "posture-0.24s-then-20ms-gap"],
)
def test_a_controller_back_with_answers_to_older_frames_ends_the_fallback_once(
    model_rig: Rig, torque: float, first_age_s: float, gap_cycles: int
) -> None:
    """A controller stalled while the robot stood comes back with a backlog: its first answer
    is to a frame ``first_age_s`` old, the next ones catch up by one cycle each cycle. The
    stance is quiet and the command starts from the measured pose, so it is admitted and ends
    the fallback. Its life counted from that old frame, the robot was silent again at once:
    mid-stride (its stance legs' torques in the command) the next cycle found 0.19 s of silence
    and began a second fallback ("no command for 188 ms" right after "commands resumed"); a
    posture answering a 0.24 s old frame, its next answer 20 ms late (a host's hiccup), met the
    watchdog's 0.25 s — one stall, two fallbacks, the controller refused again until the second
    stance was quiet. The command that ends a fallback lives from its arrival."""
    rig = model_rig
    rig.run(0.02)  # frames to answer
    rig.run(0.4, lambda _k: answering(rig, 0.002))
    rig.run(1.0)  # silent: the watchdog hands the standing robot to the stance; quiet by now
    assert rig.node.fallback_phase == "hold" and rig.node.fallback.quiet
    here = rig.positions()
    age = [first_age_s]

    def catching_up(k: int) -> JointCommand | None:
        if 0 < k <= gap_cycles:
            return None
        cmd = answering(rig, age[0], here)
        age[0] = max(age[0] - 0.002, 0.002)  # one cycle closer each cycle
        return dataclasses.replace(cmd, t_trq=(torque,) * 12)

    rig.run(0.4, catching_up)
    texts = rig.texts()
    begun = [t for t in texts if t.startswith("fallback: no command for")]
    resumed = [t for t in texts if t.startswith("watchdog: commands resumed")]
    assert len(begun) == 1 and len(resumed) == 1, texts
    assert len([t for t in texts if "fallback (stance, then sit) ended" in t]) == 1, texts
    assert rig.node.mode is BridgeMode.RUN and rig.node.fallback_phase is None
    assert rig.node.last_applied_source == "control_node"


# -- a write the driver refuses while the robot walks (the real bridge, control node, MuJoCo) --


def test_a_driver_that_refuses_the_returning_controller_keeps_the_fallback_going() -> None:
    """hb50 stands (lock-step) and its driver refuses every write of the control node's
    commands (a bound it does not declare; the fallback's own commands go through). Before, the
    fallback's quiet stance admitted the control node's stand-up, the driver refused it, and
    0.25 s later a new fallback began from a body a little lower: the robot sank from 0.326 m
    to 0.139 m in 6.5 s, never sat, then lay at 0.062 m flipping between ``run`` and ``safe``
    four times a second. Now the refused first command resumes the fallback where it was (its
    stance held, then the sit), the control node may try again after 1 s, then 2 s, 4 s, and
    once the driver takes its commands again it stands the robot up."""
    from jointbus.drivers.errors import DriverIOError
    from jointbus.robots.hb50.messages import MotionMode
    from support.hb50_lockstep import PERIOD, LockstepRobot

    robot = LockstepRobot()
    bridge = robot.bridge
    statuses: list[Status] = []
    robot.bridge_bus.subscribe("/hb50/status", Status, statuses.append, RELIABLE, realtime=True)
    write = robot.array.impedance
    refusing = [True]
    refused = [0]

    def impedance(cmd: ImpedanceCommand) -> None:
        if refusing[0] and bridge.fallback_phase is None and bool(cmd.kp.any()):
            refused[0] += 1
            raise DriverIOError("CAN bus error on write (test): nothing was sent")
        write(cmd)

    try:
        robot.run(0.1)
        robot.command("stand_up")
        robot.run(2.5)
        assert robot.mode is MotionMode.STAND
        robot.array.impedance = impedance  # type: ignore[method-assign]
        phases: list[str | None] = []
        low, before = math.inf, 0
        for _ in range(round(6.0 / PERIOD)):
            robot.cycle()
            low = min(low, float(robot.pose().position[2]))
            if not phases or phases[-1] != bridge.fallback_phase:
                phases.append(bridge.fallback_phase)
                if len(phases) == 2:  # the fallback began: the tries to end it count from here
                    before = refused[0]
        bridge.reporter.flush()
        texts = [s.status for s in statuses]
        resumed = [t for t in texts if t.startswith("the driver refused the first command of")]
        began = [t for t in texts if t.startswith("fallback: no command for")]
        # one fallback, its stance held and then the sit: no new stance, never down
        assert len(began) == 1 and phases[:3] == [None, "stance", "hold"], (phases, texts)
        assert "down" not in phases and "sit" in phases, phases
        assert low > 0.11, low  # m: the sit's height, not the floor
        # tries after the stance was quiet, then 1 s and 2 s later: three in 6 s
        assert len(resumed) == 3 and refused[0] - before == 3, (refused, before, resumed)
        assert "may end it again in 1 s" in resumed[0] and "in 4 s" in resumed[2], resumed
        assert not [t for t in texts if "commands again" in t], texts  # never said it ended
        waits = [t for t in texts if "refused the command with which it last ended" in t]
        assert waits and "next try in" in waits[0], texts  # its commands meanwhile: why not
        refusing[0] = False
        robot.run(6.0)
        bridge.reporter.flush()
        texts = [s.status for s in statuses]
        assert bridge.fallback_phase is None and bridge.mode is BridgeMode.RUN
        assert [t for t in texts if "commands again" in t], texts
        assert robot.mode is MotionMode.STAND and float(robot.pose().position[2]) > 0.28
    finally:
        robot.close()


@pytest.mark.parametrize("refusals", ["one", "every"])
def test_a_write_the_driver_refuses_mid_trot_is_a_missed_command_and_the_fallback_keeps_it_up(
    refusals: str,
) -> None:
    """hb50 trots at 0.5 m/s (lock-step: ``sim://hb50``, the bridge, the control node) and its
    driver refuses writes of the owner's commands — a bound it does not declare in
    ``command_ranges()``, or an error on its bus — either one write, or every one for 3 s
    (the node's own commands, and a repeat of the last one it took, go through). Before, each
    refused write was followed by the safe command: one cycle of damping mid-stride for a
    single refusal, and for a driver that kept refusing, damping every cycle while the bridge
    said ``run`` — the trotting body sank to 0.088 m, tilted 0.56 rad. Now a refusal is a
    missed command: the drives get the last command they took, the refused one is no sign of
    life, and a driver that keeps refusing hands the robot to its fallback after 0.1 s, as a
    stalled controller does (measured: body ≥ 0.335 m, tilt ≤ 0.17 rad)."""
    from jointbus.drivers.errors import DriverIOError
    from jointbus.messages.geometry_msgs import Twist, Vector3
    from jointbus.robots.hb50.messages import MotionMode
    from support.hb50_lockstep import PERIOD, LockstepRobot

    robot = LockstepRobot()
    bridge = robot.bridge
    statuses: list[Status] = []
    robot.bridge_bus.subscribe("/hb50/status", Status, statuses.append, RELIABLE, realtime=True)
    velocity = robot.control_bus.publisher("/hb50/velocity_command", Twist, MAB_RT)
    forward = Twist(Vector3(0.5, 0.0, 0.0), Vector3())
    write = robot.array.impedance
    taken: list[ImpedanceCommand | None] = [None]
    refused: list[ImpedanceCommand] = []
    refusing = [False]

    def impedance(cmd: ImpedanceCommand) -> None:
        owners = bridge.fallback_phase is None and cmd is not taken[0] and bool(cmd.kp.any())
        if refusing[0] and owners:
            refused.append(cmd)
            refusing[0] = refusals == "every"
            raise DriverIOError("CAN bus error on write (test): nothing was sent")
        write(cmd)
        taken[0] = cmd

    def walk(seconds: float) -> tuple[float, float]:
        """Trot ``seconds`` on a 20 Hz velocity stream: the lowest body and worst tilt (m,
        rad; ground truth)."""
        low, worst = math.inf, 0.0
        for i in range(round(seconds / PERIOD)):
            if i % 25 == 0:
                velocity.publish(forward)
            robot.cycle()
            low, worst = min(low, float(robot.pose().position[2])), max(worst, robot.tilt())
        return low, worst

    try:
        robot.run(0.1)
        robot.command("stand_up")
        robot.run(2.5)
        walk(2.0)
        assert robot.mode is MotionMode.LOCOMOTION
        robot.array.impedance = impedance  # type: ignore[method-assign]
        before = taken[0] = bridge.last_applied
        refusing[0] = True
        robot.cycle()  # the first refusal
        assert refused and bridge.last_applied is before  # the drives keep what they took
        assert bridge.last_applied is not None and bridge.last_applied.kp.all()  # not damping
        assert not bridge.reentry.active
        x0 = float(robot.pose().position[0])
        low, worst = walk(3.0)
        bridge.reporter.flush()
        texts = [s.status for s in statuses]
        said = [t for t in texts if t.startswith("writing the command from 'control_node' failed")]
        assert said and "the drives keep the previous command" in said[0], texts
        print(
            f"\nREFUSED {refusals}: {len(refused)} writes; body ≥ {low:.3f} m, tilt ≤ "
            f"{worst:.3f} rad; bridge {bridge.mode.value}, fallback {bridge.fallback_phase}"
        )
        assert low > 0.28 and worst < 0.3
        begun = [t for t in texts if t.startswith("fallback: no command for")]
        if refusals == "one":
            assert len(refused) == 1 and begun == [], texts
            assert robot.mode is MotionMode.LOCOMOTION and bridge.mode is BridgeMode.RUN
            assert (float(robot.pose().position[0]) - x0) / 3.0 > 0.3  # m/s: walked on
        else:
            assert begun and "while the robot walked" in begun[0], texts
            assert "no command for 10" in begun[0], begun  # 0.1 s after the last write taken
    finally:
        robot.close()


# -- command counts --------------------------------------------------------------------------


def _accounted(rig: Rig) -> tuple[int, int, dict[str, int]]:
    """``/hb50/joint_command``'s ``received`` and, as the diagnostics count them, what became
    of each: refused, admitted, not applied by why, and queued for the next cycle."""
    totals = rig.node.command_subscription.totals()
    counts = rig.node.event_counts()
    fate = {k: v for k, v in counts.items() if k.startswith("command not applied: ")}
    fate["refused"] = totals.refused
    fate["admitted"] = counts["command admitted"]
    fate["pending"] = rig.node.pending_commands
    return totals.received, sum(fate.values()), fate


def test_every_command_received_is_counted_by_what_became_of_it(model_rig: Rig) -> None:
    """A user's hb50 trial (2026-12-06) read ``received: 311057, malformed: 3, refused: 12``
    while the bridge reported thousands of stale and fallback-refused commands that no count
    held. Each command that arrives is now counted once: refused, admitted, or not applied by
    why — so received = refused + not applied + admitted (+ the ones queued for a cycle)."""
    rig = model_rig  # hb50's stance fallback, which refuses commands until the robot is quiet
    rig.run(0.4, every_cycle(hold(HOME)))  # 200 admitted
    rig.run(0.02, lambda _k: bad_limit())  # 10 refused
    rig.run(0.1, lambda _k: answering(rig, 0.3))  # 50 stale
    rig.run(0.3)  # silence: the fallback takes over
    assert rig.node.fallback_phase is not None
    rig.step(hold(HOME + np.where(np.arange(12) % 3 == 2, 0.4, 0.0)))  # far: the fallback refuses
    rig.run(0.4, every_cycle(hold(HOME)))
    rig.run(0.2, every_cycle(hold(HOME)), lambda k: hold(MOVED, "teleop") if k % 60 == 0 else None)
    rig.step("estop")
    rig.run(0.02, every_cycle(hold(HOME)))  # ignored while latched
    received, accounted, fate = _accounted(rig)
    assert received == 200 + 10 + 50 + 1 + 200 + 100 + 2 + 10, fate
    assert accounted == received, fate
    assert fate["refused"] == 10
    assert fate["command not applied: stale"] == 50
    assert fate["command not applied: fallback"] >= 1
    assert fate["command not applied: outranked"] == 2  # teleop, slower than the rule
    assert fate["command not applied: estop"] >= 10
    # the counts are what /hb50/diagnostics carries: one event count each, kind and number
    assert {"command admitted", "command not applied: stale"} <= set(rig.node.event_counts())


def test_commands_pushed_out_of_a_full_queue_are_counted(rig: Rig) -> None:
    """A cycle that comes late finds more than the queue holds (256): the oldest are dropped
    unjudged, counted ``queue full`` instead of vanishing from the totals."""
    rig.run(0.1, every_cycle(hold(HOME)))
    for _ in range(300):
        rig.commands.publish(hold(HOME))
    rig.step()
    received, accounted, fate = _accounted(rig)
    assert fate["command not applied: queue full"] == 300 - 256
    assert accounted == received == 50 + 300, fate
