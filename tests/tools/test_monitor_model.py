"""The monitor's data model and its bus feed: what the screen will show, without a terminal."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.bus import MAB_RT, RELIABLE, Bus, TopicInfo
from jointbus.messages.actarray import ActuatorArrayData, ActuatorData, ActuatorState
from jointbus.messages.joint_kind import JointKind
from jointbus.messages.jointbus_msgs import JointState as ArrayJointState
from jointbus.messages.std_msgs import Header
from jointbus.robots.hb50.messages import (
    BridgeData,
    BridgeState,
    JointStatusFlag,
    Level,
    MotionGait,
    MotionMode,
    MotionType,
    RobotState,
    Status,
)
from jointbus.runtime import NodeHealthEntry, NodeHealthTable
from jointbus.tools.monitor.feed import MonitorFeed
from jointbus.tools.monitor.model import (
    FLAG_LABELS,
    MonitorModel,
    NodeState,
    TopicRow,
    describe_flags,
)
from support.bus import wait_until

S = 1_000_000_000
NAMES = ("fr_j0", "fr_j1", "fr_j2")


def bridge_data(
    positions: tuple[float, ...] = (0.1, -0.7, 1.4), status: tuple[int, ...] = (0, 0, 0)
) -> BridgeData:
    return BridgeData(
        Header.now("body"),
        joint_name=NAMES,
        joint_position=positions,
        joint_velocity=(0.5, 0.0, -0.25),
        joint_effort=(1.5, -2.0, 0.0),
        joint_temperature=bytes([31, 85, 40]),
        joint_status=status,
    )


def bridge_state(*strings: str, drives: bool = True) -> BridgeState:
    return BridgeState(drives_enabled=drives, status=strings, up_time=42)


# ---- flags ------------------------------------------


def test_flags_are_decoded_into_labels() -> None:
    assert describe_flags(0) == "ok"
    word = int(JointStatusFlag.COMMUNICATION_ERROR | JointStatusFlag.MOTION_ERROR)
    assert describe_flags(word) == "communication, motion"
    assert describe_flags(int(JointStatusFlag.TARGET_REACHED)) == "target-reached"
    assert describe_flags(1 << 9) == "bit 9"  # reserved bits are shown, not hidden


@given(st.integers(min_value=0, max_value=0xFFFF))
def test_every_set_bit_appears_exactly_once(word: int) -> None:
    text = describe_flags(word)
    labels = [] if text == "ok" else text.split(", ")
    assert len(labels) == bin(word).count("1")
    for flag, label in FLAG_LABELS.items():
        assert (label in labels) == bool(word & flag)


# ---- joints, bridge, robot ------------------------------------------


def test_joint_rows_come_from_the_newest_bridge_data() -> None:
    model = MonitorModel()
    assert model.snapshot(0).joints == ()
    model.on_bridge_data(bridge_data(), 1 * S)
    status = (0, int(JointStatusFlag.COMMUNICATION_ERROR), int(JointStatusFlag.TARGET_REACHED))
    model.on_bridge_data(bridge_data((0.2, math.nan, 1.0), status), 2 * S)
    snap = model.snapshot(2 * S + S // 2)
    assert [j.name for j in snap.joints] == list(NAMES)
    assert [j.index for j in snap.joints] == [0, 1, 2]
    fr_j1 = snap.joints[1]
    assert math.isnan(fr_j1.position)
    assert fr_j1.velocity == 0.0 and fr_j1.effort == -2.0 and fr_j1.temperature == 85
    assert fr_j1.flags == "communication" and fr_j1.has_error
    assert snap.joints[2].flags == "target-reached" and not snap.joints[2].has_error
    assert snap.joints[0].position == pytest.approx(0.2)
    assert snap.data_age_s == pytest.approx(0.5)


def test_bridge_state_strings_give_owner_mode_estop_and_arming() -> None:
    model = MonitorModel()
    assert model.snapshot(0).bridge is None
    model.on_bridge_state(bridge_state("owner: control_node", "mode: run"), 0)
    bridge = model.snapshot(S).bridge
    assert bridge is not None
    assert (bridge.owner, bridge.mode, bridge.arming, bridge.estop) == (
        "control_node",
        "run",
        "ARMED",
        "clear",
    )
    assert bridge.age_s == pytest.approx(1.0)
    model.on_bridge_state(
        bridge_state(
            "owner: user_node",
            "mode: estop",
            "estop: jointbus_cli",
            "thermal WARN: fr_j1 (index 1)",
            "driver: brakes unsupported",
            drives=False,
        ),
        S,
    )
    bridge = model.snapshot(S).bridge
    assert bridge is not None
    assert bridge.owner == "user_node"
    assert bridge.estop_latched and bridge.estop == "LATCHED (jointbus_cli)"
    assert bridge.arming == "DISARMED"
    assert bridge.thermal == ("thermal WARN: fr_j1 (index 1)",)
    assert bridge.other == ("driver: brakes unsupported",)


def test_robot_state_gives_the_motion_mode() -> None:
    model = MonitorModel()
    model.on_robot_state(
        RobotState(
            motion_mode=MotionMode.STAND,
            motion_type=MotionType.POSTURE,
            motion_gait=MotionGait.STAND,
        ),
        0,
    )
    robot = model.snapshot(0).robot
    assert robot is not None
    assert (robot.motion_mode, robot.motion_type, robot.motion_gait) == (
        "STAND",
        "POSTURE",
        "STAND",
    )


# ---- nodes ------------------------------------------


def test_node_is_stale_after_the_timeout_and_ok_again_on_a_heartbeat() -> None:
    model = MonitorModel(liveliness_timeout_s=1.5)
    model.on_heartbeat(Status.ok("bridge_node", "alive", b"active"), 0)
    model.on_heartbeat(Status.ok("control_node", "alive", b"inactive"), 0)
    snap = model.snapshot(int(1.4 * S))
    assert [(n.name, n.state, n.lifecycle) for n in snap.nodes] == [
        ("bridge_node", NodeState.OK, "active"),
        ("control_node", NodeState.OK, "inactive"),
    ]
    model.on_heartbeat(Status.ok("control_node", "alive", b"active"), int(1.0 * S))
    snap = model.snapshot(int(1.6 * S))
    states = {n.name: n.state for n in snap.nodes}
    assert states == {"bridge_node": NodeState.STALE, "control_node": NodeState.OK}
    assert snap.nodes[0].age_s == pytest.approx(1.6)
    model.on_heartbeat(Status.ok("bridge_node", "alive", b"active"), int(1.7 * S))
    assert model.snapshot(int(1.7 * S)).nodes[0].state is NodeState.OK
    assert model.snapshot(int(1.7 * S)).nodes[0].heartbeats == 2


def test_farewell_heartbeat_marks_a_node_shut_down_not_stale() -> None:
    model = MonitorModel()
    model.on_heartbeat(Status.ok("user_node", "alive", b"active"), 0)
    model.on_heartbeat(Status.ok("user_node", "shutdown", b"finalized"), S)
    row = model.snapshot(60 * S).nodes[0]
    assert row.state is NodeState.SHUTDOWN and row.lifecycle == "finalized"


def test_a_heartbeat_stamped_long_before_it_arrived_is_a_replay_not_a_live_node() -> None:
    """A heartbeat carries the wall-clock stamp of its sending; one played back from a recording
    arrives with the recording's. The node was shown OK, as a live robot; a heartbeat stamped
    more than the liveliness timeout before its arrival makes it REPLAYED (its farewell too), the
    first line says so with the stamp's lag, and a live heartbeat makes it OK again."""
    model = MonitorModel(liveliness_timeout_s=1.5)
    wall = 1_800_000_000 * S
    recorded = Header.at_ns(wall - 42_300_000_000)  # 42.3 s before it arrives
    replayed = Status.ok("array_node", "alive", b"active", header=recorded)
    model.on_heartbeat(replayed, 0, wall_ns=wall)
    model.on_heartbeat(  # stamped 1.4 s before it arrived: within the timeout, live
        Status.ok("late_node", "alive", b"active", header=Header.at_ns(wall - int(1.4 * S))),
        0,
        wall_ns=wall,
    )
    snap = model.snapshot(int(0.5 * S))
    states = {n.name: n.state for n in snap.nodes}
    assert states == {"array_node": NodeState.REPLAYED, "late_node": NodeState.OK}
    text = snap.to_text()
    assert text.splitlines()[0] == (
        "REPLAY, not a live robot: the heartbeats of array_node are stamped 42.3 s before they "
        "arrive (a recording played back, e.g. by jointbus play, or a clock that far off)"
    ), text
    assert (
        "node array_node: REPLAYED (active, last heartbeat 0.5 s ago, stamped 42.3 s before it "
        "arrived)" in text
    ), text
    farewell = Status.ok("array_node", "shutdown", b"finalized", header=recorded)
    model.on_heartbeat(farewell, S, wall_ns=wall + S)
    assert model.snapshot(S).nodes[0].state is NodeState.REPLAYED
    model.on_heartbeat(
        Status.ok("array_node", "alive", b"active", header=Header.at_ns(wall + 2 * S)),
        2 * S,
        wall_ns=wall + 2 * S,
    )
    snap = model.snapshot(2 * S)
    assert snap.nodes[0].state is NodeState.OK and not snap.replay_text


def test_a_stale_report_on_the_status_topic_marks_the_node_stale_at_once() -> None:
    """The robot's liveliness monitor (the bridge's) sees a SIGKILL in ≈ 0.15 s via Zenoh: the
    monitor shows it then, not 1.5 s later by its own heartbeat clock (issue 11, item 8)."""
    model = MonitorModel(liveliness_timeout_s=1.5)
    model.on_heartbeat(Status.ok("control_node", "alive", b"active"), 0)
    report = Status.stale(
        "bridge_node", "node 'control_node' STALE: its heartbeat publisher left", b"control_node"
    )
    model.on_status(report, int(0.2 * S))
    row = model.snapshot(int(0.25 * S)).nodes[0]
    assert (row.name, row.state) == ("control_node", NodeState.STALE)
    assert "control_node: STALE" in model.snapshot(int(0.25 * S)).to_text()
    model.on_heartbeat(Status.ok("control_node", "alive", b"active"), int(3 * S))  # restarted
    assert model.snapshot(int(3 * S)).nodes[0].state is NodeState.OK


def test_a_stale_report_taken_back_by_its_reporter_leaves_a_node_heard_in_time_ok() -> None:
    """A user's ``monitor --plain`` showed ``node bridge_node: STALE (active, last heartbeat 0.7 s
    ago)`` for 0.5 s: the SIGCONTed control node's false STALE report, held although its own
    "OK: heartbeat back" came in the same millisecond. The reporter's OK takes it back; another
    node's OK does not."""
    model = MonitorModel(liveliness_timeout_s=1.5)
    model.on_heartbeat(Status.ok("bridge_node", "alive", b"active"), 0)
    model.on_status(
        Status.stale("control_node", "node 'bridge_node' STALE: no heartbeat", b"bridge_node"),
        int(0.7 * S),
    )
    assert model.snapshot(int(0.7 * S)).nodes[0].state is NodeState.STALE  # as reported
    model.on_status(
        Status.ok("user_node", "node 'bridge_node' OK: heartbeat seen", b"bridge_node"),
        int(0.7 * S),
    )
    assert model.snapshot(int(0.7 * S)).nodes[0].state is NodeState.STALE  # not its verdict
    model.on_status(
        Status.ok("control_node", "node 'bridge_node' OK: heartbeat back", b"bridge_node"),
        int(0.7 * S),
    )
    row = model.snapshot(int(0.8 * S)).nodes[0]
    assert (row.name, row.state) == ("bridge_node", NodeState.OK)
    assert "node bridge_node: OK (active, last heartbeat 0.8 s ago)" in model.snapshot(
        int(0.8 * S)
    ).to_text()


def test_a_monitor_that_did_not_run_for_3_s_calls_no_node_stale() -> None:
    """As the runtime's liveliness monitor: the monitor's own process SIGSTOPped for 3 s; its
    first snapshot after SIGCONT comes before the heartbeats queued meanwhile are fed. A node
    really silent is STALE one timeout after the resumption."""
    model = MonitorModel(liveliness_timeout_s=1.5)
    t = 0.0
    while t < 2.0:  # a heartbeat a second, a snapshot every 0.1 s
        if t % 1.0 < 0.05:
            model.on_heartbeat(Status.ok("bridge_node", "alive", b"active"), int(t * S))
            model.on_heartbeat(Status.ok("dead_node", "alive", b"active"), int(t * S))
        assert all(n.state is NodeState.OK for n in model.snapshot(int(t * S)).nodes)
        t = round(t + 0.1, 3)
    resumed = 1.9 + 3.0  # stopped at 1.9 s: no snapshot, nothing fed
    snap = model.snapshot(int(resumed * S))
    assert [(n.name, n.state) for n in snap.nodes] == [
        ("bridge_node", NodeState.OK),
        ("dead_node", NodeState.OK),
    ]
    model.on_heartbeat(Status.ok("bridge_node", "alive", b"active"), int(resumed * S))
    t = resumed
    for _ in range(14):
        t = round(t + 0.1, 3)
        if abs(t - resumed - 1.0) < 0.01:  # the bridge beats on
            model.on_heartbeat(Status.ok("bridge_node", "alive", b"active"), int(t * S))
        assert all(n.state is NodeState.OK for n in model.snapshot(int(t * S)).nodes)
    t = round(t + 0.2, 3)  # 1.6 s after the resumption
    states = {n.name: n.state for n in model.snapshot(int(t * S)).nodes}
    assert states == {"bridge_node": NodeState.OK, "dead_node": NodeState.STALE}


def test_a_stale_report_about_an_unseen_node_lists_it_stale() -> None:
    model = MonitorModel()
    model.on_status(Status.stale("bridge_node", "node 'x' STALE", b"x"), 5 * S)
    assert [(n.name, n.state, n.heartbeats) for n in model.snapshot(5 * S).nodes] == [
        ("x", NodeState.STALE, 0)
    ]


def test_a_monitor_started_after_a_node_died_lists_it_stale_from_the_supervisors_table() -> None:
    """Issue 20 item 5: a late observer saw absence, not STALE. The bridge's latched verdicts
    name the dead node; a node heard here since its verdict there stays OK."""
    table = NodeHealthTable(
        Header(),
        "bridge_node",
        (
            NodeHealthEntry("control_node", int(Level.STALE), "active", 12.5, "token left"),
            NodeHealthEntry("teleop", int(Level.STALE), "active", 3.0, "no heartbeat"),
            NodeHealthEntry("bridge_node", int(Level.OK), "active", 0.2, "heartbeat seen"),
        ),
    )
    model = MonitorModel()
    model.on_heartbeat(Status.ok("teleop", "alive", b"active"), 9 * S)  # heard 1 s ago: alive
    model.on_node_health(table, 10 * S, wall_ns=0)  # the table is fresh (stamped 0, arrives at 0)
    rows = {n.name: n for n in model.snapshot(10 * S).nodes}
    assert rows["control_node"].state is NodeState.STALE
    assert rows["control_node"].age_s == pytest.approx(12.5)
    assert rows["control_node"].lifecycle == "active"
    assert rows["teleop"].state is NodeState.OK
    assert "bridge_node" not in rows  # an OK verdict adds nothing: its heartbeats will
    assert "node control_node: STALE" in model.snapshot(10 * S).to_text()
    model.on_heartbeat(Status.ok("control_node", "alive", b"active"), 11 * S)  # restarted
    assert {n.name: n.state for n in model.snapshot(11 * S).nodes}["control_node"] is (
        NodeState.OK
    )


WALL_STAMP_NS = 1_700_000_000 * S  # a wall-clock stamp (ns since the epoch)


def _dead_node_table(silent_s: float) -> NodeHealthTable:
    """The bridge's latched verdict on a SIGKILLed control node, stamped at WALL_STAMP_NS."""
    return NodeHealthTable(
        Header.at_ns(WALL_STAMP_NS),
        "bridge_node",
        (NodeHealthEntry("control_node", int(Level.STALE), "active", silent_s, "token left"),),
    )


@pytest.mark.parametrize("late_s", [7.7, 14.3, 20.6, 30.8])
def test_a_late_monitor_adds_the_tables_age_to_the_silence_it_reports(late_s: float) -> None:
    """The new user's ``monitor --once``, started 7.7 / 14.3 / 20.6 / 30.8 s after the kill, said
    "last heartbeat 2.6 s ago" every time: ``silent_s`` is the silence *at the table's stamp*, and
    a latched table arrives any time later. The age is ``silent_s`` plus the table's age when it
    arrived, plus the time since (what ``jointbus node list`` prints)."""
    model = MonitorModel()
    model.on_node_health(_dead_node_table(2.6), 10 * S, wall_ns=WALL_STAMP_NS + round(late_s * S))
    expected = 2.6 + late_s + 0.5
    row = model.snapshot(10 * S + S // 2).nodes[0]
    assert (row.name, row.state) == ("control_node", NodeState.STALE)
    assert row.age_s == pytest.approx(expected)
    text = model.snapshot(10 * S + S // 2).to_text()
    assert f"node control_node: STALE (active, last heartbeat {expected:.1f} s ago)" in text


def test_a_table_stamped_ahead_of_this_clock_counts_no_negative_age() -> None:
    """Another host's clock may run ahead: the table is then taken as fresh, never younger."""
    model = MonitorModel()
    model.on_node_health(_dead_node_table(2.6), 0, wall_ns=WALL_STAMP_NS - 5 * S)
    assert model.snapshot(S).nodes[0].age_s == pytest.approx(3.6)


def test_a_node_whose_heartbeat_nobody_saw_has_no_heartbeat_age() -> None:
    """A node known by its token alone (``silent_s`` NaN), or by a STALE report alone, has no last
    heartbeat: the monitor says so instead of counting an age from the message's arrival."""
    model = MonitorModel()
    model.on_node_health(_dead_node_table(math.nan), 10 * S, wall_ns=WALL_STAMP_NS)
    model.on_status(Status.stale("bridge_node", "node 'x' STALE", b"x"), 10 * S)
    snap = model.snapshot(20 * S)
    assert [(n.name, n.state, n.age_s) for n in snap.nodes] == [
        ("control_node", NodeState.STALE, None),
        ("x", NodeState.STALE, None),
    ]
    assert "node control_node: STALE (active, no heartbeat seen)" in snap.to_text()
    assert "node x: STALE (?, no heartbeat seen)" in snap.to_text()


def test_a_stale_report_then_the_table_gives_the_age_of_the_last_heartbeat() -> None:
    """The STALE report (volatile, no age) may arrive before the latched table: the table's age
    of the last heartbeat is taken then, not the report's arrival."""
    model = MonitorModel()
    report = Status.stale("bridge_node", "node 'control_node' STALE", b"control_node")
    model.on_status(report, 10 * S)
    model.on_node_health(_dead_node_table(1.2), 10 * S, wall_ns=WALL_STAMP_NS)
    row = model.snapshot(11 * S).nodes[0]
    assert (row.state, row.age_s) == (NodeState.STALE, pytest.approx(2.2))


def test_robot_and_bridge_state_are_unknown_once_their_mirrors_stop() -> None:
    """A dead control node's last ``STAND`` must not stay on screen as if it were live."""
    model = MonitorModel(state_timeout_s=0.5)
    model.on_robot_state(RobotState(motion_mode=MotionMode.STAND), 0)
    model.on_bridge_state(bridge_state("owner: control_node", "mode: run"), 0)
    fresh = model.snapshot(int(0.4 * S))
    assert fresh.robot is not None and not fresh.robot.stale
    assert fresh.bridge is not None and not fresh.bridge.stale
    assert "robot: STAND" in fresh.to_text()
    late = model.snapshot(int(2.0 * S))
    assert late.robot is not None and late.robot.stale
    assert late.bridge is not None and late.bridge.stale
    text = late.to_text()
    assert "robot: STAND" not in text
    assert "robot: UNKNOWN (no RobotState for 2.0 s; last said STAND)" in text
    assert "bridge: LOST (no BridgeState for 2.0 s; last said owner control_node, mode run)" in (
        text
    )


def test_the_owner_the_bridge_still_names_is_said_silent_once_its_robot_state_stops() -> None:
    """A user's trial: 0.8 s into a SIGSTOP of the control node the monitor showed ``owner
    control_node`` while the demo's status line said ``(silent)``: the bridge names a stopped
    controller its owner until its watchdog and fallback act. Another owner gets no note."""
    model = MonitorModel(state_timeout_s=0.5, state_node="control_node")
    model.on_robot_state(RobotState(motion_mode=MotionMode.STAND), 0)
    for k in range(9):  # the bridge's state keeps coming (10 Hz), naming the stopped node
        model.on_bridge_state(bridge_state("owner: control_node", "mode: run"), k * S // 10)
    fresh = model.snapshot(int(0.4 * S))
    assert fresh.owner_text == "control_node"
    assert "bridge: owner control_node | mode run" in fresh.to_text()
    silent = model.snapshot(int(0.8 * S))
    assert silent.owner_text == "control_node (silent: no RobotState for 0.8 s)"
    assert "bridge: owner control_node (silent: no RobotState for 0.8 s) | mode run" in (
        silent.to_text()
    )
    model.on_bridge_state(bridge_state("owner: my_ctl", "mode: run"), int(0.85 * S))
    assert model.snapshot(int(0.9 * S)).owner_text == "my_ctl"  # not RobotState's node
    late = MonitorModel(state_timeout_s=0.5, state_node="control_node")  # started after it died
    late.on_listening(0)
    late.on_bridge_state(bridge_state("owner: control_node", "mode: safe"), int(0.8 * S))
    assert late.snapshot(int(0.8 * S)).owner_text == (
        "control_node (silent: no RobotState since this monitor began)"
    )
    unnamed = MonitorModel(state_timeout_s=0.5)  # no state_node given: the bridge's word only
    unnamed.on_robot_state(RobotState(motion_mode=MotionMode.STAND), 0)
    unnamed.on_bridge_state(bridge_state("owner: control_node", "mode: run"), int(0.8 * S))
    assert unnamed.snapshot(int(0.8 * S)).owner_text == "control_node"


def test_a_monitor_that_never_receives_a_robot_state_says_unknown_and_how_long_it_listened(
    bus: Bus,
) -> None:
    """A monitor started after the control node died receives no RobotState (the mirror is not
    latched): ``monitor --once`` printed no robot line, where docs/SAFETY.md says UNKNOWN. Once it
    has listened longer than the state timeout, the robot is UNKNOWN, with how long it listened;
    before that, "no RobotState yet" (the mirror may be one period away)."""
    model = MonitorModel(state_timeout_s=0.5)
    with MonitorFeed(bus, discover_period_s=0.05) as feed:
        feed.poll(model, 10 * S)
        assert "robot: no RobotState yet" in model.snapshot(10 * S + S // 5).to_text()
        feed.poll(model, 12 * S)
        snap = model.snapshot(12 * S)
    assert snap.robot is not None and snap.robot.stale and not snap.robot.received
    assert snap.robot.age_s == pytest.approx(2.0)
    assert "robot: UNKNOWN (no RobotState in the 2.0 s this monitor listened)" in snap.to_text()
    # it claims the silence it heard: to its last poll, however late the snapshot comes
    assert "robot: UNKNOWN (no RobotState in the 2.0 s" in model.snapshot(13 * S).to_text()
    model.on_polled(13 * S)
    assert "robot: UNKNOWN (no RobotState in the 3.0 s" in model.snapshot(13 * S).to_text()


def test_a_robot_state_after_listening_in_vain_gives_the_mode_again(bus: Bus) -> None:
    pub = bus.publisher("/hb50/robot_state_10hz", RobotState, RELIABLE, node="control_node")
    model = MonitorModel(state_timeout_s=0.5)
    with MonitorFeed(bus, discover_period_s=0.05) as feed:
        feed.poll(model, 0)
        feed.poll(model, S)
        assert "robot: UNKNOWN" in model.snapshot(S).to_text()
        pub.publish(RobotState(motion_mode=MotionMode.STAND))
        feed.poll(model, 2 * S)
        text = model.snapshot(2 * S).to_text()
    assert "robot: STAND" in text and "UNKNOWN" not in text


# ---- events and rates ------------------------------------------


def test_events_keep_the_newest_reports_newest_first() -> None:
    model = MonitorModel(max_events=3)
    for i in range(5):
        model.on_status(Status.warn("bridge_node", f"event {i}"), i)
    model.on_status(Status.error("bridge_node", "rejected command from user_node"), 9)
    events = model.snapshot(10).events
    assert [e.text for e in events] == ["rejected command from user_node", "event 4", "event 3"]
    assert events[0].level is Level.ERROR and events[0].node == "bridge_node"


def test_rates_are_measured_from_cumulative_counters() -> None:
    model = MonitorModel(rate_window_s=2.0)
    for k in range(31):  # 500 messages per second, sampled every 0.1 s for 3 s
        model.count("/hb50/bridge_data", 50 * k, k * S // 10)
    model.count("/hb50/status", 3, 0)
    rows = {t.name: t for t in model.snapshot(3 * S).topics}
    assert rows["/hb50/bridge_data"].rate_hz == pytest.approx(500.0)
    assert rows["/hb50/status"].rate_hz is None  # one sample: no rate yet
    model.count("/hb50/bridge_data", 10, 31 * S // 10)  # the counter restarted
    assert model.snapshot(4 * S).topics[0].rate_hz is None


def test_rates_counted_between_arrivals_do_not_count_the_wait_for_the_first() -> None:
    """A remote topic's counter reads 0 until its subscription is matched: sampled at each
    refresh, that wait counted as silence (94 Hz printed for a 100 Hz topic after 2 s, new-user
    trial 2026-12-06). Counted between arrivals, the rate is messages − 1 over their span."""
    model = MonitorModel(rate_window_s=2.0)
    for _ in range(3):  # 0.3 s before the first message arrives
        model.arrived("/arm/joint_state", 0, 0)
    first = S // 3
    for k in range(1, 18):  # then 100 Hz, sampled every 0.1 s: 10 messages per refresh
        model.arrived("/arm/joint_state", 10 * k - 9, first + (10 * k - 10) * S // 100)
    row = {t.name: t for t in model.snapshot(first + 2 * S).topics}["/arm/joint_state"]
    assert row.rate_hz == pytest.approx(100.0)
    assert row.rate_text == "100.0 Hz"
    # the topic stops: after the window (and three periods) its old rate is not shown as live
    silent = {t.name: t for t in model.snapshot(first + 5 * S).topics}["/arm/joint_state"]
    assert silent.rate_hz is None and silent.rate_text.startswith("— (none for 3.")


def test_a_rate_is_read_at_the_first_count_when_the_first_arrival_is_dated() -> None:
    """A new user's ``monitor --plain --interval 2`` (2026-12-07): its second summary read
    ``— (20 msgs)`` for 10 Hz topics — the first count it sampled was already 20, and a rate
    needed a second sample. Dated by its first arrival as well, that count is a rate."""
    model = MonitorModel(rate_window_s=2.0)
    model.arrived("/hb50/bridge_data_10hz", 0, 0, 0)  # counted, nothing arrived yet
    first = S // 10
    model.arrived("/hb50/bridge_data_10hz", 20, first + 19 * S // 10, first)
    row = {t.name: t for t in model.snapshot(2 * S).topics}["/hb50/bridge_data_10hz"]
    assert row.rate_hz == pytest.approx(10.0) and row.rate_text == "10.0 Hz"
    # one message has no interval: still its count, not a rate
    model.arrived("/hb50/once", 1, first, first)
    assert {t.name: t for t in model.snapshot(2 * S).topics}["/hb50/once"].rate_text == (
        "— (1 msg)"
    )


def test_the_heartbeat_topic_reads_each_nodes_rate_not_their_sum() -> None:
    """A new user's trial: ``jointbus monitor`` fed by ``jointbus play`` showed the heartbeat
    topic at "3.7 Hz" — one rate over two nodes' heartbeats, each 1 Hz. The heartbeat topic is
    one stream per node: its rate is shown per node (and a node gone silent says so)."""
    topic = "/hb50/heartbeat"
    model = MonitorModel(rate_window_s=2.0)
    model.heartbeats_on(topic)
    total = 0
    for k in range(6):  # 1 Hz each, 0.4 s apart, as the topic's counter sees them: 2 Hz
        for name, offset in (("bridge_node", 0), ("control_node", 4 * S // 10)):
            at = k * S + offset
            total += 1
            model.on_heartbeat(Status.ok(name, "alive", b"active"), at)
            model.arrived(topic, total, at)
    row = {t.name: t for t in model.snapshot(5 * S + S // 2).topics}[topic]
    assert row.rate_hz is None  # no one figure for two streams
    assert row.rate_text == "per node: bridge_node 1.0 Hz, control_node 1.0 Hz"
    for k in range(6, 10):  # control_node stops; bridge_node goes on
        model.on_heartbeat(Status.ok("bridge_node", "alive", b"active"), k * S)
        model.arrived(topic, total + k - 5, k * S)
    text = {t.name: t for t in model.snapshot(9 * S + S // 2).topics}[topic].rate_text
    assert text == "per node: bridge_node 1.0 Hz, control_node — (none for 4.1 s)", text


def test_a_node_heard_once_is_in_the_heartbeat_row_without_a_rate() -> None:
    """A trial's first summary (2026-12-06): ``per node: control_node 1.0 Hz`` while
    ``node bridge_node: OK`` stood above it — bridge_node, heard once, was left out of the row."""
    topic = "/hb50/heartbeat"
    model = MonitorModel(rate_window_s=2.0)
    model.heartbeats_on(topic)
    heard = [("control_node", 0), ("control_node", S), ("bridge_node", S + S // 2)]
    for total, (name, at) in enumerate(heard, 1):
        model.on_heartbeat(Status.ok(name, "alive", b"active"), at)
        model.arrived(topic, total, at)
    text = {t.name: t for t in model.snapshot(S + 6 * S // 10).topics}[topic].rate_text
    assert text == "per node: bridge_node — (one heartbeat so far), control_node 1.0 Hz", text


def test_a_latched_topic_without_a_rate_reads_latched() -> None:
    from jointbus.bus import LATCHED, EndpointInfo, QosProfile

    def publisher(topic: str, qos: QosProfile) -> EndpointInfo:
        return EndpointInfo("publisher", topic, "t/msg/T", "array_node", 1, qos, "z", False)

    model = MonitorModel()
    model.set_topics(
        [
            TopicInfo("/arm/actarray/geometry", ("t/msg/T",), (publisher("/g", LATCHED),), ()),
            TopicInfo("/arm/status", ("t/msg/T",), (publisher("/s", RELIABLE),), ()),
        ]
    )
    model.arrived("/arm/actarray/geometry", 0, 0)
    model.arrived("/arm/status", 0, 0)
    rows = {t.name: t.rate_text for t in model.snapshot(S).topics}
    assert rows == {"/arm/actarray/geometry": "latched", "/arm/status": "— (0 msgs)"}
    # sent again now and then (a replay's loops): a rate, and then a silence that is no stop
    for k in range(1, 4):
        model.arrived("/arm/actarray/geometry", k, k * S // 10)
        model.arrived("/arm/status", k, k * S // 10)
    later = {t.name: t.rate_text for t in model.snapshot(6 * S).topics}
    assert later["/arm/actarray/geometry"] == "latched", later
    assert later["/arm/status"].startswith("— (none for"), later


def array_state(positions: tuple[float, ...] = (0.25, -0.5)) -> ArrayJointState:
    return ArrayJointState(
        Header.now("base"),
        name=("shoulder", "elbow"),
        kind=bytes([JointKind.SINGLE_DOF] * 2),
        position=positions,
        velocity=(0.1, 0.0),
        effort=(1.25, -0.5),
    )


def array_data(power: bool = True) -> ActuatorArrayData:
    state = ActuatorState.MOVING if power else ActuatorState.UNPOWERED
    return ActuatorArrayData(
        actuators=tuple(
            ActuatorData(p, 0.0, 0.0, 0.0, state, temperature=31.0) for p in (0.25, -0.5)
        ),
        motor_power=power,
    )


def test_a_served_arrays_joint_state_replaces_the_bridge_lines_it_can_never_fill() -> None:
    """``jointbus monitor --namespace myarm`` on a served array printed "bridge: no BridgeState
    yet", "robot: UNKNOWN" and "joints: no BridgeData yet" and no joint at all."""
    model = MonitorModel(state_timeout_s=0.5)
    model.on_listening(0)
    model.on_joint_state(array_state(), 0)
    model.on_array_data(array_data())
    model.on_heartbeat(Status.ok("array_node", "alive", b"active"), 0)
    snap = model.snapshot(S // 10)
    assert snap.array is not None and snap.bridge is None and snap.robot is None
    assert [(j.name, j.position, j.state) for j in snap.array.joints] == [
        ("shoulder", 0.25, "MOVING"),
        ("elbow", -0.5, "MOVING"),
    ]
    text = model.snapshot(2 * S // 10).to_text()
    assert "array: 2 joints | motor power on | joint_state 0.2 s old" in text
    assert re.search(r"^shoulder +\+0\.250 +\+0\.100 +\+1\.25 +31°C  MOVING$", text, re.M), text
    assert re.search(r"^elbow +-0\.500 +\+0\.000 +-0\.50 +31°C  MOVING$", text, re.M), text
    assert "node array_node: OK" in text
    for hb50_only in ("bridge:", "robot:", "BridgeData", "BridgeState", "RobotState"):
        assert hb50_only not in text
    # silent for longer than the state timeout: shown as lost, not as the live state
    assert "array: LOST (no joint_state for 2.0 s" in model.snapshot(2 * S).to_text()
    # a bridge on the namespace (hb50 publishes joint_state too): the bridge view, as ever
    model.on_bridge_published()
    late = model.snapshot(2 * S)
    assert late.array is None and "robot: UNKNOWN" in late.to_text()


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="liveliness_timeout_s"):
        MonitorModel(liveliness_timeout_s=0)
    with pytest.raises(ValueError, match="max_events"):
        MonitorModel(max_events=0)


def test_plain_text_summary_names_everything() -> None:
    model = MonitorModel()
    model.on_bridge_data(bridge_data(status=(0, int(JointStatusFlag.MOTION_ERROR), 0)), 0)
    model.on_bridge_state(bridge_state("owner: control_node", "mode: run"), 0)
    model.on_heartbeat(Status.ok("bridge_node", "alive", b"active"), 0)
    model.on_status(Status.warn("bridge_node", "watchdog: no command for 0.25 s"), 0)
    text = model.snapshot(0).to_text()
    for expected in (
        "owner control_node",
        "mode run",
        "ARMED",
        "e-stop clear",
        "fr_j1",
        "motion",
        "+1.400",
        "node bridge_node: OK",
        "watchdog: no command",
    ):
        assert expected in text


# ---- the feed: real bus subscriptions ------------------------------------------


@pytest.fixture
def bus() -> Iterator[Bus]:
    with Bus(name="monitor-test") as b:
        yield b


def test_feed_hands_the_model_what_the_bus_carries(bus: Bus) -> None:
    data_pub = bus.publisher("/hb50/bridge_data", BridgeData, MAB_RT, node="bridge_node")
    state_pub = bus.publisher("/hb50/bridge_state_10hz", BridgeState, RELIABLE, node="bridge_node")
    beat_pub = bus.publisher("/hb50/heartbeat", Status, RELIABLE, node="bridge_node")
    status_pub = bus.publisher("/hb50/status", Status, RELIABLE, node="bridge_node")
    model = MonitorModel()
    with MonitorFeed(bus, discover_period_s=0.05) as feed:
        assert feed.data_topic == "/hb50/bridge_data"
        for i in range(5):
            data_pub.publish(bridge_data((0.1 * i, 0.0, 0.0)))
        state_pub.publish(bridge_state("owner: control_node", "mode: hold"))
        beat_pub.publish(Status.ok("bridge_node", "alive", b"active"))
        for i in range(12):  # more than RELIABLE's depth 10: none may be lost
            status_pub.publish(Status.warn("bridge_node", f"report {i}"))
        feed.poll(model, 0)
        snap = model.snapshot(0)
        assert snap.joints[0].position == pytest.approx(0.4)  # the newest frame
        assert snap.bridge is not None and snap.bridge.mode == "hold"
        assert [n.name for n in snap.nodes] == ["bridge_node"]
        assert [e.text for e in snap.events][:2] == ["report 11", "report 10"]
        assert len(snap.events) == 12
        for _ in range(50):
            data_pub.publish(bridge_data())
        feed.poll(model, S)
        rates = {t.name: t.rate_hz for t in model.snapshot(S).topics}
        assert rates["/hb50/bridge_data"] == pytest.approx(50.0)  # 50 published in 1 s
    assert data_pub.subscriber_count == 0  # closing the feed drops its subscriptions


NODES = ("bridge_node", "control_node")


def test_the_feed_shows_the_heartbeat_topics_rate_per_node(bus: Bus) -> None:
    """Two nodes' 1 Hz heartbeats on one topic, through the feed: a rate per node (the feed names
    the heartbeat topic to the model), not the topic's 2 Hz."""
    beats = [bus.publisher("/hb50/heartbeat", Status, RELIABLE, node=n) for n in NODES]
    model = MonitorModel(rate_window_s=2.0)
    with MonitorFeed(bus, discover_period_s=0.05) as feed:
        for k in range(4):  # polled once a second, as they come
            for pub, name in zip(beats, NODES, strict=True):
                pub.publish(Status.ok(name, "alive", b"active"))
            feed.poll(model, k * S)
        row = {t.name: t for t in model.snapshot(3 * S).topics}["/hb50/heartbeat"]
    assert row.rate_text == "per node: bridge_node 1.0 Hz, control_node 1.0 Hz", row


def test_feed_lists_no_topic_only_the_monitor_itself_publishes(bus: Bus) -> None:
    """The feed's e-stop publisher on ``/<ns>/hardware_command`` was listed as a robot topic at
    0.0 Hz, on a namespace where nothing else publishes it (a served array's)."""
    joint_state = bus.publisher("/myarm/joint_state", ArrayJointState, MAB_RT, node="array_node")
    model = MonitorModel()
    with MonitorFeed(bus, namespace="myarm", discover_period_s=0.05) as feed:
        assert bus.local_publishers("/myarm/hardware_command")  # the feed's own, for Ctrl+E

        def listed() -> bool:
            joint_state.publish(array_state())
            feed.poll(model, 0)
            return model.snapshot(0).array is not None

        assert wait_until(listed, 5.0)
        names = [t.name for t in model.snapshot(0).topics]
    assert names == ["/myarm/joint_state"]


def test_a_feed_without_keys_announces_no_publisher_or_client(bus: Bus) -> None:
    """A user's trial (2026-12-06): ``monitor --once`` run with a watch-only certificate was
    reported on the robot's status as denied for publishing ``/hb50/hardware_command``: the
    feed declared its Ctrl+E e-stop although ``--once`` and ``--plain`` have no keys. Without
    them it announces only subscriptions; the full-screen app's feed keeps its e-stop ready."""
    with MonitorFeed(bus, discover_period_s=0.05, estop=False) as feed:
        assert bus.local_publishers("/hb50/hardware_command") == ()
        assert bus.local_server("/hb50/estop") is None
        assert not [e for e in bus.local_endpoints() if e.kind != "subscriber"]
        with pytest.raises(RuntimeError, match="without its e-stop"):
            feed.send_estop()
    with MonitorFeed(bus, discover_period_s=0.05) as feed:
        assert bus.local_publishers("/hb50/hardware_command")


def test_feed_prefers_a_bridge_data_mirror(bus: Bus) -> None:
    fast = bus.publisher("/hb50/bridge_data", BridgeData, MAB_RT, node="bridge_node")
    mirror = bus.publisher("/hb50/bridge_data_10hz", BridgeData, RELIABLE, node="bridge_node")
    model = MonitorModel()
    with MonitorFeed(bus, discover_period_s=0.05) as feed:
        mirror.publish(bridge_data((1.0, 2.0, 3.0)))
        feed.poll(model, 0)
        assert feed.data_topic == "/hb50/bridge_data_10hz"
        assert fast.subscriber_count == 0  # the 500 Hz topic is no longer received
        assert model.snapshot(0).joints[0].position == 1.0


def test_every_published_topic_of_another_process_gets_a_true_rate_or_a_reason() -> None:
    """The monitor in its own Zenoh session: ``/tf``, ``joint_state`` and the like, which it
    does not otherwise receive, are counted as they arrive (the rate is messages − 1 over the
    span between the first and the last arrival counted), ``bridge_data`` is not received once its
    mirror is seen (no subscriber left matching it: the bridge encodes nothing for the monitor)
    and says so, and a topic of a type unknown here says so."""
    import time

    from jointbus.bus import ZenohConfig
    from jointbus.messages.sensor_msgs import JointState
    from jointbus.messages.tf2_msgs import TFMessage
    from support.bus import Count, free_port, wait_until

    port = free_port()
    with (
        Bus(name="robot", zenoh=ZenohConfig(hub_port=port)) as robot,
        Bus(name="monitor", zenoh=ZenohConfig(hub_port=port)) as bus,
    ):
        counted = {
            "/tf": (robot.publisher("/tf", TFMessage, RELIABLE, node="bridge_node"), TFMessage()),
            "/hb50/joint_state": (
                robot.publisher("/hb50/joint_state", JointState, RELIABLE, node="bridge_node"),
                JointState(),
            ),
        }
        fast = robot.publisher("/hb50/bridge_data", BridgeData, MAB_RT, node="bridge_node")
        mirror = robot.publisher("/hb50/bridge_data_10hz", BridgeData, RELIABLE, node="bridge_node")
        unknown = robot.publisher("/hb50/custom", Count, RELIABLE, node="bridge_node")
        model = MonitorModel(rate_window_s=10.0)
        with MonitorFeed(bus, discover_period_s=0.05) as feed:

            def ready() -> bool:
                feed.poll(model)
                rows = {t.name: t for t in model.snapshot(time.monotonic_ns()).topics}
                return (
                    all(pub.remote_matched for pub, _ in counted.values())
                    and not fast.remote_matched
                    and "mirror" in rows.get("/hb50/bridge_data", TopicRow("", "", 0, None)).note
                    and "/hb50/custom" in rows
                    and rows["/hb50/custom"].note != ""
                )

            assert wait_until(ready, 10.0)
            rows = {t.name: t for t in model.snapshot(time.monotonic_ns()).topics}
            assert all(rows[name].rate_text == "— (0 msgs)" for name in counted)
            period_s, sent = 0.02, 51  # 50 Hz for 1 s, the feed polled between two messages
            start = time.monotonic()
            for i in range(sent):
                time.sleep(max(0.0, start + i * period_s - time.monotonic()))
                for pub, msg in counted.values():
                    pub.publish(msg)
                fast.publish(bridge_data())
                if i % 10 == 0:
                    mirror.publish(bridge_data())
                unknown.publish(Count(i))
                feed.poll(model)
            sent_s = time.monotonic() - start

            def measured() -> bool:
                feed.poll(model)
                rows = {t.name: t for t in model.snapshot(time.monotonic_ns()).topics}
                return all(rows[name].messages == sent for name in counted)

            assert wait_until(measured, 10.0)
            rows = {t.name: t for t in model.snapshot(time.monotonic_ns()).topics}
            for name in counted:
                rate = rows[name].rate_hz
                print(f"{name}: {rate} Hz; sent {sent} in {sent_s:.3f} s")
                # arrivals may bunch on a loaded host, never beyond the sending span
                assert rate is not None and rate >= (sent - 1) / sent_s * 0.85, rows[name]
                assert rate <= 50.0 * 1.3, rows[name]
            assert rows["/hb50/bridge_data"].rate_hz is None
            assert rows["/hb50/bridge_data"].rate_text == (
                "not received: its mirror /hb50/bridge_data_10hz is (saves the encoding)"
            )
            assert rows["/hb50/custom"].rate_text == "not received: type unknown here"
            text = model.snapshot(time.monotonic_ns()).to_text()
            assert re.search(r"^topic /tf \[tf2_msgs/msg/TFMessage\] \d+\.\d Hz$", text, re.M)
            assert "topic /hb50/custom [jointbus_test/msg/Count] not received" in text
        # the counting taps close with the feed
        assert wait_until(lambda: not any(p.remote_matched for p, _ in counted.values()), 5.0)
