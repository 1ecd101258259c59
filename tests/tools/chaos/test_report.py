"""The chaos campaign's report (:mod:`jointbus.tools.chaos.report`): one row per fault kind with
its worst values, the verdict, and each violation with the command that replays it."""

from __future__ import annotations

import json
import math

from jointbus.tools.chaos.fault_schedule import Fault, FaultKind
from jointbus.tools.chaos.invariants import FaultRecord, ReportRule, Violation
from jointbus.tools.chaos.report import CampaignReport, replay_command


def _record(index: int, kind: FaultKind, **values: float) -> FaultRecord:
    record = FaultRecord(Fault(index, float(index), kind, 0.5), float(index))
    for name, value in values.items():
        setattr(record, name, value)
    return record


def _report(violations: list[Violation], stopped_at_s: float | None = None) -> CampaignReport:
    rule = ReportRule("bridge_node", 1.5)
    records = [
        _record(0, FaultKind.STOP_CONTROL, min_height_m=0.31, max_tilt_rad=0.05, max_speed=3.0,
                detected_s=0.3),
        _record(1, FaultKind.STOP_CONTROL, min_height_m=0.28, max_tilt_rad=0.12, max_speed=9.5,
                max_excursion_rad=0.002, detected_s=1.45),
        _record(2, FaultKind.CPU_HOG, min_height_m=0.33, max_tilt_rad=0.02, max_speed=2.0),
        _record(3, FaultKind.KILL_CONTROL, min_height_m=0.07, max_tilt_rad=1.1, max_speed=12.0),
    ]
    records[0].expected = records[1].expected = rule
    records[1].missed = True  # its report came after its bound
    return CampaignReport.of(
        seed=11,
        duration_s=60.0,
        wall_s=80.0,
        faults_per_minute=30.0,
        records=records,
        violations=violations,
        ground_truth_samples=30000,
        load=2.5,
        stopped_at_s=stopped_at_s,
    )


def test_one_row_per_kind_with_the_worst_of_each() -> None:
    report = _report([])
    rows = {row.kind: row for row in report.rows}
    assert set(rows) == {FaultKind.STOP_CONTROL, FaultKind.CPU_HOG, FaultKind.KILL_CONTROL}
    stop = rows[FaultKind.STOP_CONTROL]
    assert stop.count == 2
    assert stop.min_height_m == 0.28
    assert stop.max_tilt_rad == 0.12
    assert stop.max_speed == 9.5
    assert stop.max_excursion_rad == 0.002
    assert stop.worst_detection_s == 1.45 - 1.0  # detected at 1.45, injected at 1.0
    assert (stop.expected_reports, stop.missed_reports) == (2, 1)
    assert math.isnan(rows[FaultKind.CPU_HOG].worst_detection_s)
    assert report.faults == 4


def test_a_clean_campaign_passes_and_prints_its_table() -> None:
    report = _report([])
    assert report.passed
    lines = report.lines()
    assert "seed 11" in lines[0] and "0 violations" in lines[0] and "4 faults" in lines[0]
    table = [line for line in lines if line.startswith("| sigstop control |")]
    assert table == [
        "| sigstop control | 2 | 0.280 | 0.120 | 9.50 | 0.0020 | 0.450 (1 of 2 missed) |"
    ]
    assert any(line.startswith("| cpu hog | 1 |") and line.endswith("| - |") for line in lines)


def test_a_campaign_stopped_by_ctrl_c_does_not_pass_and_says_how_far_it_ran() -> None:
    """A user who stops a long run keeps its table — and neither the exit code nor the verdict
    may read as a campaign that passed."""
    report = _report([], stopped_at_s=41.3)
    assert not report.passed
    lines = report.lines()
    assert "41 s of campaign" in lines[0]
    assert "STOPPED early (Ctrl-C or SIGTERM) at t=41.3 s of 60 s" in lines[0]
    assert "0 violations" in lines[0]
    assert any(line.startswith("| sigstop control | 2 |") for line in lines)
    assert report.as_dict()["stopped_at_s"] == 41.3 and report.as_dict()["passed"] is False


def test_each_violation_is_listed_with_its_time_and_the_replay() -> None:
    violations = [
        Violation(30.5, "body too low", "ground-truth height 0.070 m < 0.2 m", 0.07, (3,)),
        Violation(3.0, "fault not reported", "#1 sigstop control ...", 1.5, (1,)),
    ]
    report = _report(violations)
    assert not report.passed
    lines = report.lines()
    assert "2 VIOLATIONS" in lines[0]
    replay = replay_command(11, 60.0, 30.0)
    assert replay == "jointbus chaos --seed 11 --seconds 60 --faults-per-minute 30"
    assert f"violations (replay: {replay}):" in lines
    listed = [line for line in lines if line.startswith("  t=")]
    assert listed[0].startswith("  t=3.00 s fault not reported") and "during #1" in listed[0]
    assert listed[1].startswith("  t=30.50 s body too low") and "seed 11" in listed[1]
    rows = {row.kind: row for row in report.rows}
    assert rows[FaultKind.STOP_CONTROL].missed_reports == 1
    assert any("(1 of 2 missed)" in line for line in lines)
    # each violation also names the short replay of the faults of the 30 s before it
    alone = [line for line in lines if "the faults before it alone" in line]
    assert alone[0].endswith(f"{replay} --window 0:3")
    assert alone[1].endswith(f"{replay} --window 1:31")


def test_a_window_replays_report_in_the_whole_schedules_time() -> None:
    """A windowed run's times are its own (the window's first fault 5 s in); its replay lines
    name the whole schedule and the window in that schedule's time."""
    violation = Violation(29.4, "fault not reported", "#1446 sigstop control ...", 1.5, (1446,))
    report = CampaignReport.of(
        seed=11, duration_s=47.0, wall_s=80.0, faults_per_minute=30.0, records=[],
        violations=[violation], ground_truth_samples=1, load=1.0, schedule_s=3600.0,
        window=(2865.0, 2895.0),
    )  # fmt: skip
    assert report.replay == (
        "jointbus chaos --seed 11 --seconds 3600 --faults-per-minute 30 --window 2865:2895"
    )
    # 29.4 s into the run is 2889.4 s of the schedule: its faults from 2860 s on
    assert report.violation_replay(violation).endswith("--window 2860:2890")
    assert report.as_dict()["window"] == [2865.0, 2895.0]


def test_the_json_form_holds_everything() -> None:
    report = _report([Violation(30.5, "body tilted", "tilt 1.1 rad", 1.1, (3,))])
    data = json.loads(json.dumps(report.as_dict()))
    assert data["seed"] == 11 and data["passed"] is False
    assert data["replay"] == replay_command(11, 60.0, 30.0)
    assert {row["kind"] for row in data["rows"]} == {"sigstop control", "cpu hog",
                                                   "sigkill control"}
    hog = next(row for row in data["rows"] if row["kind"] == "cpu hog")
    assert hog["worst_detection_s"] is None
    assert data["violations"][0]["rule"] == "body tilted"
