"""The chaos campaign's invariant checker (:mod:`jointbus.tools.chaos.invariants`), fed with
synthetic ground truth: it catches a low body, a tilt, a joint past its limit (measured or
commanded), a stalled owner still obeyed, a late report — and allows a reported sit, an e-stop
and a stack restart."""

from __future__ import annotations

import math

import pytest

from jointbus.messages.status import Level
from jointbus.model.limits import JointLimitSpec
from jointbus.tools.chaos.fault_schedule import Fault, FaultKind
from jointbus.tools.chaos.invariants import InvariantChecker, ReportRule, tilt_of

NAMES = ("hip", "knee")
LIMITS = (
    JointLimitSpec(position_min=-1.0, position_max=1.0, velocity_max=20.0),
    JointLimitSpec(position_min=-2.705, position_max=0.0, velocity_max=20.0),
)
STAND = 0.33


def standing() -> InvariantChecker:
    checker = InvariantChecker(NAMES, LIMITS)
    checker.motion_mode(0.0, "STAND")
    for i in range(10):
        checker.ground_truth(i * 0.002, STAND, 0.01)
    return checker


def rules(checker: InvariantChecker) -> list[str]:
    return [v.rule for v in checker.violations]


def test_a_standing_robot_breaks_nothing() -> None:
    checker = standing()
    checker.joints(0.1, [0.2, -1.5], [1.0, -2.0])
    checker.command(0.1, [0.2, -1.5], [0.0, 0.0])
    checker.finish(1.0, safe=True, nodes_ok=True, detail="standing")
    assert checker.violations == []
    assert checker.samples == 10


def test_a_body_below_0_2_m_is_one_violation_with_its_lowest_height() -> None:
    checker = standing()
    fault = checker.injected(Fault(0, 1.0, FaultKind.STOP_CONTROL, 0.5), 1.0)
    for i, h in enumerate((0.3, 0.19, 0.12, 0.15, 0.25, 0.3)):
        checker.ground_truth(1.1 + i * 0.1, h, 0.05)
    assert rules(checker) == ["body too low"]
    v = checker.violations[0]
    assert v.t_s == pytest.approx(1.2)
    assert v.worst == pytest.approx(0.12)
    assert v.faults == (0,)
    assert "replay: seed 9" in v.describe(9)
    assert fault.min_height_m == pytest.approx(0.12)


def test_a_tilt_past_0_5_rad_is_a_violation() -> None:
    checker = standing()
    checker.ground_truth(1.0, STAND, 0.6)
    checker.ground_truth(1.1, STAND, 1.2)
    checker.finish(2.0, safe=True, nodes_ok=True, detail="")
    assert rules(checker) == ["body tilted"]
    assert checker.violations[0].worst == pytest.approx(1.2)


def test_the_tilt_is_the_angle_of_the_body_axis_from_the_vertical() -> None:
    assert tilt_of(0.0, 0.0, 0.0, 1.0) == pytest.approx(0.0)
    half = 0.6 / 2
    assert tilt_of(math.sin(half), 0.0, 0.0, math.cos(half)) == pytest.approx(0.6)  # roll
    assert tilt_of(0.0, math.sin(half), 0.0, math.cos(half)) == pytest.approx(0.6)  # pitch
    assert tilt_of(0.0, 0.0, math.sin(1.0), math.cos(1.0)) == pytest.approx(0.0)  # yaw only
    assert tilt_of(1.0, 0.0, 0.0, 0.0) == pytest.approx(math.pi)  # on its back


def test_before_the_robot_first_stood_low_and_tilted_is_allowed() -> None:
    checker = InvariantChecker(NAMES, LIMITS)
    checker.motion_mode(0.0, "STAND_UP")
    checker.ground_truth(0.1, 0.06, 0.7)  # lying folded, rising
    assert checker.violations == []


@pytest.mark.parametrize(
    ("positions", "velocities", "rule"),
    [
        ([1.006, -1.0], [0.0, 0.0], "measured position limit hip"),
        ([0.0, -2.712], [0.0, 0.0], "measured position limit knee"),
        ([0.0, -1.0], [0.0, 22.5], "measured speed limit knee"),
    ],
)
def test_a_joint_measured_past_its_limit_is_caught(
    positions: list[float], velocities: list[float], rule: str
) -> None:
    checker = standing()
    checker.joints(1.0, positions, velocities)
    checker.joints(1.002, [0.0, -1.0], [0.0, 0.0])
    assert rules(checker) == [rule]


def test_a_measured_reading_within_the_tolerance_is_not_a_violation() -> None:
    checker = standing()
    checker.joints(1.0, [1.004, 0.004], [21.9, -21.9])  # 5 mrad, 10 %: the bridge's own watch
    assert checker.violations == []


def test_a_command_past_a_limit_is_caught_without_tolerance_and_nan_is_not_checked() -> None:
    checker = standing()
    checker.command(0.9, [1.0000000505, -2.7050001], [0.0, 20.000001])  # float32 of the limits
    checker.command(1.0, [1.001, math.nan], [0.0, math.nan])
    checker.command(1.1, [0.0, -1.0], [0.0, 20.5])
    checker.finish(2.0, safe=True, nodes_ok=True, detail="")
    assert rules(checker) == ["commanded position limit hip", "commanded speed limit knee"]


def test_the_worst_excursion_and_speed_are_counted_to_the_faults_under_way() -> None:
    checker = standing()
    early = checker.injected(Fault(0, 0.5, FaultKind.CPU_HOG, 1.0), 0.5)
    checker.ended(early, 1.5)
    late = checker.injected(Fault(1, 10.0, FaultKind.KILL_CONTROL, 0.0), 10.0)
    checker.joints(2.0, [1.05, -1.0], [3.0, 0.0])  # within 3 s after the hog
    checker.joints(9.0, [0.0, -1.0], [5.0, 0.0])  # no fault under way
    checker.joints(11.0, [0.0, -1.0], [7.0, 0.0])
    assert early.max_excursion_rad == pytest.approx(0.05)
    assert early.max_speed == pytest.approx(3.0)
    assert late.max_speed == pytest.approx(7.0)
    assert late.max_excursion_rad == 0.0


def test_a_stalled_owner_still_obeyed_after_the_watchdog_is_a_violation() -> None:
    checker = standing()
    checker.owner_silent(1.0)
    checker.bridge_state(1.2, "run", "control_node")  # within the watchdog: allowed
    checker.bridge_state(1.4, "safe", "control_node")
    assert checker.violations == []
    checker.bridge_state(1.6, "run", "control_node")
    checker.bridge_state(1.7, "run", "control_node")
    checker.owner_back(1.8)
    checker.bridge_state(1.9, "run", "control_node")
    assert rules(checker) == ["stalled owner"]
    assert checker.violations[0].t_s == pytest.approx(1.6)


def test_a_report_within_its_bound_is_its_detection_and_a_late_one_a_violation() -> None:
    checker = standing()
    rule = ReportRule("bridge_node", 1.5, Level.WARN, contains=("watchdog",))
    on_time = checker.injected(Fault(0, 1.0, FaultKind.STOP_CONTROL, 0.6), 1.0, rule)
    checker.status(1.1, Level.WARN, "control_node", "watchdog: not the bridge")
    checker.status(1.2, Level.OK, "bridge_node", "watchdog: resumed")
    checker.status(1.3, Level.WARN, "bridge_node", "watchdog: no valid command for 251 ms")
    assert on_time.detection_s == pytest.approx(0.3)
    late = checker.injected(Fault(1, 5.0, FaultKind.STOP_CONTROL, 0.6), 5.0, rule)
    checker.status(6.7, Level.WARN, "bridge_node", "watchdog: no valid command for 251 ms")
    checker.tick(6.8)
    assert rules(checker) == ["fault not reported"]
    assert checker.violations[0].faults == (1,)
    assert "it came after 1.700 s" in checker.violations[0].detail
    assert late.detection_s == pytest.approx(1.7)
    checker.tick(20.0)
    assert len(checker.violations) == 1  # one violation per late report


def test_a_missing_report_is_flagged_once_its_bound_and_the_delivery_grace_passed() -> None:
    checker = standing()
    grace = checker.bounds.report_grace_s
    rule = ReportRule("bridge_node", 1.5, Level.WARN, contains=("watchdog",))
    record = checker.injected(Fault(0, 5.0, FaultKind.STOP_CONTROL, 0.6), 5.0, rule)
    checker.tick(6.5 + grace - 0.1)  # the report may still be on its way
    assert checker.violations == []
    checker.tick(6.5 + grace + 0.1)
    assert rules(checker) == ["fault not reported"]
    assert math.isnan(record.detection_s)
    # a later fault's watchdog report is not this one's detection (the report's worst
    # detection column read 17-26 s for a missed stop, the time to the next stop's report)
    checker.status(23.0, Level.WARN, "bridge_node", "watchdog: no valid command for 251 ms")
    assert math.isnan(record.detection_s)


def test_a_report_stamped_within_its_bound_counts_even_when_it_arrives_late() -> None:
    checker = standing()
    rule = ReportRule("bridge_node", 1.5, Level.WARN, contains=("watchdog",))
    record = checker.injected(Fault(0, 5.0, FaultKind.STOP_CONTROL, 0.6), 5.0, rule)
    checker.tick(7.5)
    checker.status(5.4, Level.WARN, "bridge_node", "watchdog: no valid command for 251 ms")
    checker.tick(20.0)
    assert checker.violations == []
    assert record.detection_s == pytest.approx(0.4)


def test_a_report_matched_by_its_data() -> None:
    checker = standing()
    rule = ReportRule("bridge_node", 1.8, Level.STALE, data=b"control_node")
    record = checker.injected(Fault(0, 1.0, FaultKind.KILL_CONTROL, 0.0), 1.0, rule)
    checker.status(1.1, Level.STALE, "bridge_node", "node 'x' STALE", b"chaos_velocity")
    checker.status(1.15, Level.STALE, "bridge_node", "node 'control_node' STALE", b"control_node")
    assert record.detection_s == pytest.approx(0.15)


def test_a_missing_report_at_the_end_is_a_violation() -> None:
    checker = standing()
    rule = ReportRule("bridge_node", 1.8, Level.STALE)
    checker.injected(Fault(0, 1.0, FaultKind.KILL_CONTROL, 0.0), 1.0, rule)
    checker.finish(1.5, safe=True, nodes_ok=True, detail="")
    assert rules(checker) == ["fault not reported"]


def test_a_reported_fallback_sit_allows_a_low_body_until_the_robot_stands_again() -> None:
    checker = standing()
    checker.status(1.0, Level.WARN, "bridge_node", "fallback: control_node silent; holding the "
                   "stance, then a slow sit")
    assert checker.exempt == "fallback sit"
    checker.motion_mode(1.0, "DAMPING")
    for i, h in enumerate((0.3, 0.2, 0.15, 0.12, 0.12)):
        checker.ground_truth(1.1 + i * 0.5, h, 0.1)
    checker.motion_mode(5.0, "STAND_UP")
    checker.ground_truth(5.1, 0.18, 0.1)
    checker.motion_mode(7.0, "STAND")
    checker.ground_truth(7.1, 0.30, 0.02)
    assert checker.violations == []
    assert checker.exempt == ""
    checker.ground_truth(8.0, 0.15, 0.02)  # the sit is over: low is a violation again
    checker.finish(9.0, safe=True, nodes_ok=True, detail="")
    assert rules(checker) == ["body too low"]


@pytest.mark.parametrize(
    ("text", "data", "exempt"),
    [
        ("fallback: lowering the body to a sit", b'{"event": "fallback", "phase": "sit"}', True),
        ("fallback: damping only", b'{"event": "fallback", "phase": "down"}', True),
        ("fallback: all feet down to a stance", b'{"event": "fallback", "phase": "stance"}',
         False),
        ("watchdog: no valid command for 251 ms; safe mode (damping)", b"", False),
    ],
)
def test_only_a_reported_sit_or_down_phase_suspends_the_upright_rule(
    text: str, data: bytes, exempt: bool
) -> None:
    checker = standing()
    checker.status(1.0, Level.WARN, "bridge_node", text, data)
    checker.ground_truth(2.0, 0.15, 0.1)
    assert (checker.exempt == "fallback sit") is exempt
    checker.finish(3.0, safe=True, nodes_ok=True, detail="")
    assert (rules(checker) == []) is exempt


def test_an_estop_allows_the_drop() -> None:
    checker = standing()
    checker.bridge_state(1.0, "estop", "control_node")
    checker.ground_truth(1.5, 0.07, 0.1)
    assert checker.violations == []


def test_a_restart_pauses_every_rule_until_the_robot_stood_again() -> None:
    checker = standing()
    checker.pause(1.0)
    checker.ground_truth(1.1, 0.0, 3.0)
    checker.joints(1.1, [5.0, 5.0], [99.0, 99.0])
    checker.resume(2.0)
    checker.motion_mode(2.0, "STAND_UP")
    checker.ground_truth(2.1, 0.06, 0.1)  # a new simulator: lying folded
    checker.motion_mode(8.0, "STAND")
    checker.ground_truth(8.1, 0.15, 0.1)
    checker.finish(9.0, safe=True, nodes_ok=True, detail="")
    assert rules(checker) == ["body too low"]


def test_the_end_state_is_checked() -> None:
    checker = standing()
    checker.finish(9.0, safe=False, nodes_ok=False, detail="mode FALLEN")
    assert rules(checker) == ["unsafe at the end", "a node not OK at the end"]
    assert all("mode FALLEN" in v.detail for v in checker.violations)


def test_names_and_limits_must_pair_up() -> None:
    with pytest.raises(ValueError, match="one per joint"):
        InvariantChecker(NAMES, LIMITS[:1])


def test_a_report_owed_by_a_node_killed_before_it_was_due_is_not_judged() -> None:
    checker = standing()
    grace = checker.bounds.report_grace_s
    rule = ReportRule("bridge_node", 1.5, Level.ERROR, contains=("chaos_bad_input",))
    pending = checker.injected(Fault(0, 5.0, FaultKind.BAD_JOINT_COMMANDS, 1.0), 5.0, rule)
    overdue = checker.injected(Fault(1, 1.0, FaultKind.BAD_JOINT_COMMANDS, 1.0), 1.0, rule)
    other = ReportRule("launcher", 1.5, Level.ERROR)
    elsewhere = checker.injected(Fault(2, 5.0, FaultKind.KILL_BRIDGE, 0.0), 5.0, other)
    lost = checker.witness_lost("bridge_node", 5.8)
    # the burst due at 6.5 s lost its witness; the one due at 2.5 s was already late
    assert lost == [pending]
    assert pending.expected is None and "bridge_node killed at t=5.80 s" in pending.unwitnessed
    assert overdue.expected is rule and elsewhere.expected is other
    checker.status(5.9, Level.ERROR, "launcher", "process 'bridge' died")
    checker.tick(6.5 + grace + 1.0)
    assert [v.faults for v in checker.violations] == [(1,)]


def test_a_missed_report_names_what_the_bridge_said_and_was_doing_around_it() -> None:
    """A report missed in an hour-long run must explain itself: the campaign keeps no log."""
    checker = standing()
    checker.status(0.5, Level.WARN, "bridge_node", "watchdog: no valid command for 251 ms")
    checker.status(0.6, Level.WARN, "control_node", "not the bridge")
    checker.status(0.7, Level.OK, "bridge_node", "owner: control_node")
    rule = ReportRule("bridge_node", 1.5, Level.WARN, contains=("fallback",))
    checker.injected(
        Fault(7, 1.0, FaultKind.STOP_CONTROL, 1.2), 1.0, rule, "bridge mode run, owner x"
    )
    checker.status(1.4, Level.WARN, "bridge_node", "thermal: fr_j2 hot")
    checker.tick(1.0 + 1.5 + checker.bounds.report_grace_s + 0.1)
    (violation,) = checker.violations
    assert "at injection: bridge mode run, owner x" in violation.detail
    assert "t=0.50 s 'watchdog: no valid command for 251 ms'" in violation.detail
    assert "t=1.40 s 'thermal: fr_j2 hot'" in violation.detail
    assert "not the bridge" not in violation.detail and "owner:" not in violation.detail


def test_a_missed_report_says_when_its_reporter_said_nothing() -> None:
    checker = standing()
    rule = ReportRule("bridge_node", 1.5, Level.WARN, contains=("watchdog",))
    checker.injected(Fault(0, 10.0, FaultKind.STOP_CONTROL, 0.6), 10.0, rule)
    checker.status(2.0, Level.WARN, "bridge_node", "watchdog: long before")
    checker.tick(20.0)
    (violation,) = checker.violations
    assert "bridge_node reported no WARN+ from 5.00 s to 11.50 s" in violation.detail
    assert "at injection" not in violation.detail
