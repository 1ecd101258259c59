"""The soak runner (:mod:`jointbus.soak`): bad arguments are refused, the goals are every
process's (rate, skipped, lateness, RSS), and (in the ``long`` suite) one minute of the robot in
its process layout, recorded to MCAP, loses no reliable message, keeps 500 Hz by the wall clock
in every process and grows no process's RSS by 5 MB (``make soak`` runs the same for 30 minutes).
"""

from __future__ import annotations

import json
import math
import mmap
from pathlib import Path

import pytest
from mcap.reader import make_reader

from jointbus.soak import (
    MAX_COMMAND_AGE_P99_CYCLES,
    MAX_LATENESS_P99_S,
    MAX_SKIPPED_FRACTION,
    MIN_RATE_HZ,
    ProcessReport,
    SoakConfigError,
    SoakReport,
    _Partial,
    _worst_windows,
    main,
    read_malloc_stats,
    read_rss_bytes,
    run_soak,
)

MINUTE_S = 60.0


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"duration_s": 1.0}, "duration_s"),
        ({"duration_s": math.nan}, "duration_s"),
        ({"duration_s": 60.0, "warmup_s": 60.0}, "warmup_s"),
        ({"duration_s": 60.0, "warmup_s": -1.0}, "warmup_s"),
        ({"duration_s": 60.0, "sample_s": 0.0}, "sample_s"),
        ({"duration_s": 60.0, "sample_s": 30.0}, "sample_s"),
    ],
)
def test_bad_arguments_are_refused_before_anything_runs(
    tmp_path: Path, kwargs: dict[str, float], field: str
) -> None:
    duration = kwargs.pop("duration_s")
    path = tmp_path / "soak.mcap"
    with pytest.raises(SoakConfigError) as info:
        run_soak(duration, mcap_path=path, **kwargs)
    assert info.value.field == field
    assert not path.exists()


def test_the_command_line_refuses_a_too_short_soak(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--seconds", "1"]) == 2
    assert "duration_s" in capsys.readouterr().err


def test_rss_is_read_from_proc() -> None:
    # A fresh anonymous mapping: its pages count only once touched (a bytearray could reuse
    # memory the allocator already holds, which is resident before and after).
    size = 32 * 1024 * 1024
    with mmap.mmap(-1, size) as block:
        before = read_rss_bytes()
        for offset in range(0, size, mmap.PAGESIZE):
            block[offset] = 1  # touch every page
        assert read_rss_bytes() - before > 24 * 1024 * 1024


def test_the_c_heap_in_use_follows_live_allocations() -> None:
    # objects over 512 B come from malloc: 20 000 of 2 KiB are ≈ 40 MB in use while alive, and
    # no longer in use once freed (the allocator may keep holding them: that is "held")
    if read_malloc_stats() is None:
        pytest.skip("no glibc mallinfo2 on this platform")
    before = read_malloc_stats()
    blocks = [bytes(2048) + bytes([i % 256]) for i in range(20_000)]
    alive = read_malloc_stats()
    del blocks
    after = read_malloc_stats()
    assert before is not None and alive is not None and after is not None
    assert alive.in_use - before.in_use > 35 * 1024 * 1024
    assert alive.held >= alive.in_use
    assert alive.in_use - after.in_use > 35 * 1024 * 1024


def _process(name: str, **changes: object) -> ProcessReport:
    goal = {"bridge": MAX_LATENESS_P99_S, "control": MAX_COMMAND_AGE_P99_CYCLES * 0.002}
    fields: dict[str, object] = {
        "name": name,
        "pid": 1234,
        "rate_hz": 499.5 if name != "observer" else math.nan,
        "skipped_fraction": 0.001 if name != "observer" else math.nan,
        "late_count": 3 if name != "observer" else 0,
        "late_of": 30_000 if name != "observer" else 0,
        "lateness_goal_s": goal.get(name, math.nan),
        "worst_window_p99_s": 0.0002 if name != "observer" else math.nan,
        "rss_start_bytes": 80 << 20,
        "rss_end_bytes": 81 << 20,
        "rss_growth_bytes": 1 << 20,
        "rss_slope_bytes_per_h": 0.0,
    }
    fields.update(changes)
    return ProcessReport(**fields)  # type: ignore[arg-type]


PROCESSES = (_process("bridge"), _process("control"), _process("observer"))


def _report(**changes: object) -> SoakReport:
    fields: dict[str, object] = {
        "duration_s": 60.0,
        "warmup_s": 6.0,
        "cycles": 30000,
        "loop_rate_hz": 500.0,
        "overruns": 0,
        "skipped": 0,
        "lateness_p99_s": 1e-5,
        "lateness_max_s": 1e-3,
        "reliable_received": 1000,
        "reliable_lost": 0,
        "recorder_messages": 100,
        "recorder_lost": 0,
        "recorder_skipped": 0,
        "mcap_path": "x.mcap",
        "mcap_bytes": 1,
        "mcap_ok": True,
        "rss_start_bytes": 100 << 20,
        "rss_end_bytes": 101 << 20,
        "rss_growth_bytes": 1 << 20,
        "rss_slope_bytes_per_h": 0.0,
        "rss_samples": 50,
        "standing": True,
        "bridge_mode": "run",
        "processes": PROCESSES,
    }
    fields.update(changes)
    return SoakReport(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changes", "met"),
    [
        ({}, True),
        ({"reliable_lost": 1}, False),
        ({"rss_growth_bytes": 5 << 20}, False),
        ({"mcap_ok": False}, False),
        ({"standing": False}, False),
        ({"overruns": 100}, True),  # reported; their cost is in the rate and skipped goals
        ({"processes": ()}, False),  # nothing measured is no goal met
    ],
)
def test_the_goals(changes: dict[str, object], met: bool) -> None:
    report = _report(**changes)
    assert report.goals_met is met
    assert ("all goals met" in report.lines()[0]) is met
    assert json.loads(json.dumps(report.as_dict()))["goals_met"] is met


@pytest.mark.parametrize(
    ("name", "changes"),
    [
        ("bridge", {"rate_hz": 351.3}),  # the soak: 351 Hz printed "all goals met"
        ("bridge", {"skipped_fraction": 0.011}),
        ("bridge", {"late_count": 301}),  # 1.003 % of the slots over 1 ms: p99 over it
        ("bridge", {"late_count": 0, "late_of": 0}),  # no slot counted: nothing measured
        ("control", {"rate_hz": 480.0}),
        ("control", {"late_count": 301}),  # 1.003 % of the commands 3 or more cycles old
        ("control", {"rss_growth_bytes": 5 << 20}),
        ("observer", {"rss_growth_bytes": 6 << 20}),
    ],
)
def test_each_process_must_meet_every_goal(name: str, changes: dict[str, object]) -> None:
    processes = tuple(
        _process(p.name, **changes) if p.name == name else p for p in PROCESSES
    )
    report = _report(processes=processes)
    assert not report.goals_met
    lines = report.lines()
    assert "GOALS NOT MET" in lines[0]
    missed = [line for line in lines if "GOAL MISSED" in line]
    assert len(missed) == 1 and missed[0].strip().startswith(name)
    data = json.loads(json.dumps(report.as_dict(), default=str))
    assert [p["goals_met"] for p in data["processes"]] == [p.name != name for p in PROCESSES]


def test_a_process_line_states_rate_skipped_lateness_and_rss_with_their_goals() -> None:
    line = _process("bridge", rate_hz=351.3, skipped_fraction=0.0425).line()
    assert "351.3 Hz (goal ≥ 490)" in line
    assert "skipped 4.25 % (goal ≤ 1 %)" in line
    assert "slots later than 1 ms 3 of 30000 = 0.010 % (goal ≤ 1 %: p99 over the run" in line
    assert "p99 0.20 ms in the worst 10 s window" in line
    assert "RSS +1.00 MB" in line and line.endswith("GOAL MISSED")
    assert "Hz" not in _process("observer").line()


def test_the_control_line_counts_commands_older_than_two_cycles() -> None:
    line = _process("control", worst_window_p99_s=0.05).line()
    assert "commands older than 2 cycles 3 of 30000 = 0.010 % (goal ≤ 1 %" in line
    assert "p99 25 cycles in the worst 1 s window" in line and line.endswith("ok")


def test_a_worst_window_over_the_bound_is_reported_but_is_not_the_runs_p99() -> None:
    """One 52 ms stall of the host in 30 minutes put a 10 s window's p99 at 2.3 ms: 26 of
    900 000 slots. The run's p99 is within 1 ms; the window is reported beside it."""
    bridge = _process("bridge", late_count=26, late_of=900_000, worst_window_p99_s=0.0023)
    assert bridge.goals_met
    assert "2.30 ms in the worst 10 s window" in bridge.line()


def _windows(**changes: object) -> _Partial:
    """60 s of a soak: the loop's 10 s windows one a second with p99 0.1 ms, except a 3 ms
    stall's ten windows from t=20 s and a 1.5 ms one's from t=45 s; the command ages' 1 s windows
    at 1 cycle, 7 cycles at t=30 s; the host stole 30 ms of CPU 0 between t=18 and t=19 s."""
    begin = 1_000.0
    windows = [
        (begin + t, 0.003 if 20 <= t < 30 else 0.0015 if 45 <= t < 55 else 1e-4, 0.004, 0.0)
        for t in range(60)
    ]
    ages = [(begin + t + 0.5, 7.0 if t == 30 else 1.0) for t in range(60)]
    steal = [(begin + t, (0.03 if t >= 19 else 0.0, 0.0)) for t in range(60)]
    fields: dict[str, object] = {
        "duration_s": 60.0, "warmup_s": 0.0, "cycles": 30_000, "loop_rate_hz": 500.0,
        "overruns": 0, "skipped": 0, "lateness_p99_s": 0.003, "lateness_max_s": 0.004,
        "reliable_received": 1, "reliable_lost": 0, "rss_times": [], "rss_values": {},
        "pids": {}, "heap_samples": [], "recorder_backlog_max": 0, "standing": True,
        "bridge_mode": "run", "command_rate_hz": 500.0, "command_skipped_fraction": 0.0,
        "command_age_p99_cycles": 7, "wall_begin_s": begin, "windows": windows, "ages": ages,
        "steal": steal,
    }  # fmt: skip
    fields.update(changes)
    return _Partial(**fields)  # type: ignore[arg-type]


def test_the_worst_windows_are_distinct_stalls_each_with_the_hosts_steal() -> None:
    worst, late, slow = _worst_windows(_windows())
    assert late == 20 and slow == 1  # rows over 1 ms / over 2 cycles
    lateness = [w for w in worst if w.what == "lateness"]
    # one row per stall (the 3 ms stall's ten windows overlap: one of them is shown), worst first
    assert [round(w.value, 4) for w in lateness] == [0.003, 0.0015, 0.0001]
    assert lateness[0].at_s < lateness[1].at_s - 10
    assert lateness[0].steal_s == pytest.approx((0.03, 0.0))  # the 30 ms stolen at 18-19 s
    assert lateness[1].steal_s == pytest.approx((0.0, 0.0))
    age = [w for w in worst if w.what == "command age"]
    assert age[0].value == 7 and age[0].at_s == pytest.approx(30.5)
    assert "7 cycles in the 1 s up to t=   30.5 s; host steal in it: cpu0 0 ms" in age[0].line()
    assert "3.00 ms in the 10 s up to" in lateness[0].line()


def test_the_command_age_is_one_row_a_second_even_when_windows_read_alike(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 3 s of the bridge's 10 Hz state, every window with the same figures (a steady robot):
    # three 1 s windows, three rows — counting changes of the status text saw one
    import jointbus.soak as soak
    from jointbus.robots.hb50.messages import BridgeState
    from jointbus.robots.hb50.messages.bridge_status import BridgeStatus

    facts = BridgeStatus(real_time_factor=1.0, frame_rate_hz=500.0, command_rate_hz=500.0,
                         command_age_p99_cycles=3)  # fmt: skip
    state = BridgeState(drives_enabled=True, status=facts.to_strings(), up_time=5)
    clock = iter(1_000.0 + 0.1 * i for i in range(30))
    monkeypatch.setattr(soak.time, "time", lambda: next(clock))
    watch = soak._LoopWatch()
    watch.armed = True
    for _ in range(30):
        watch.bridge_state(state)
    rows = watch.ages.rows()
    assert [age for _t, age in rows] == [3.0, 3.0, 3.0]
    assert [round(t - 1_000.0, 1) for t, _age in rows] == [0.0, 1.0, 2.0]


def test_the_report_counts_the_windows_that_missed_and_lists_the_worst() -> None:
    worst, late, slow = _worst_windows(_windows())
    report = _report(
        worst_windows=worst, windows=60, late_windows=late, command_windows=60,
        slow_command_windows=slow, host_steal_s=(0.03, 0.0),
    )  # fmt: skip
    text = "\n".join(report.lines())
    assert "over 1 ms in 20 of 60 10 s windows" in text
    assert "over 2 cycles in 1 of 60 1 s windows" in text
    assert "host steal over the run cpu0 0.03 s, cpu1 0.00 s" in text


def test_late_command_seconds_are_told_apart_by_a_bridge_stall_before_them() -> None:
    import jointbus.soak as soak

    # the loop skipped slots at t=28 s (its window's count rises from 0 to 3, and stays for
    # 10 s); late command seconds end at 30.5 s (a stall 2.5 s before: counted), 40.5 s (the
    # window still counts the old stall, no new one: not counted) and 50.5 s (none)
    begin = 1_000.0
    windows = [(begin + t, 1e-4, 0.004, 3.0 if 28 <= t < 38 else 0.0) for t in range(60)]
    ages = [(begin + t + 0.5, 5.0 if t in (30, 40, 50) else 1.0) for t in range(60)]
    p = _windows(windows=windows, ages=ages)
    assert soak._late_seconds_with_a_bridge_stall(p) == 1
    # a second stall at t=49 s: the late second at 50.5 s comes with it
    windows[49] = (begin + 49, 1e-4, 0.004, 1.0)
    assert soak._late_seconds_with_a_bridge_stall(_windows(windows=windows, ages=ages)) == 2
    report = _report(command_windows=60, slow_command_windows=3, stalled_command_windows=2,
                     windows=60)  # fmt: skip
    assert "over 2 cycles in 3 of 60 1 s windows (2 of them with a bridge stall" in "\n".join(
        report.lines()
    )


def test_rss_is_read_for_another_process() -> None:
    import subprocess
    import sys

    # a child that holds 40 MB it touched (bytearray zero-fills them), then says so
    code = "import sys, time; b = bytearray(40 << 20); print('held', flush=True); time.sleep(30)"
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline() == "held\n"
        assert 40 << 20 < read_rss_bytes(child.pid) < 200 << 20
        assert read_rss_bytes(child.pid) != read_rss_bytes()
    finally:
        child.kill()
        child.wait()
    with pytest.raises(OSError):
        read_rss_bytes(child.pid)


def test_the_c_heap_line_shows_when_measured() -> None:
    assert not any("C heap" in line for line in _report().lines())
    lines = _report(heap_in_use_growth_bytes=1 << 19, heap_held_growth_bytes=3 << 20).lines()
    assert any("in use +0.50 MB, held +3.00 MB" in line for line in lines)


@pytest.mark.timeout(300)
def test_one_minute_of_the_whole_stack_loses_nothing_and_does_not_grow(tmp_path: Path) -> None:
    path = tmp_path / "soak.mcap"
    lines: list[str] = []
    report = run_soak(MINUTE_S, mcap_path=path, progress=lines.append, progress_every_s=15.0)
    print("\n" + "\n".join(report.lines()))
    assert {p.name for p in report.processes} == {"bridge", "control", "observer"}
    assert lines  # progress was reported
    assert report.reliable_received > 500  # reliable traffic really crossed Zenoh
    assert report.reliable_lost == 0
    # best effort may drop under load (4 and 40 gaps in ≈ 170 000 messages in two runs here,
    # 2026-12-02; the recorder lost 11 %): at most 1 in 1 000; reliable topics, above,
    # lose nothing
    assert report.recorder_lost <= 1e-3 * report.recorder_messages, report.recorder_lost
    assert report.rss_growth_bytes < 5 * 1024 * 1024
    assert report.cycles > 0.8 * 500 * MINUTE_S
    assert report.standing and report.bridge_mode == "run"
    assert report.mcap_ok
    with path.open("rb") as stream:
        summary = make_reader(stream).get_summary()
    assert summary is not None and summary.statistics is not None
    topics = {channel.topic for channel in summary.channels.values()}
    assert {"/hb50/bridge_data", "/hb50/joint_command", "/hb50/robot_state_10hz"} <= topics
    assert summary.statistics.message_count == report.recorder_messages
    # Each process of the layout keeps its 500 Hz by the wall clock and skips at most 1 %. Its
    # lateness (the bridge's slots over 1 ms late, commands over 2 cycles old) is counted over
    # every slot and every applied command of the run; the goal on it (≤ 1 %) is the report's,
    # judged by `make soak` on a quiet host, not here beside other tests.
    loops = [p for p in report.processes if p.has_loop]
    assert {p.name for p in loops} == {"bridge", "control"}
    for p in loops:
        assert p.rate_hz >= MIN_RATE_HZ and p.skipped_fraction <= MAX_SKIPPED_FRACTION, p.line()
        assert p.rss_growth_bytes < 5 * 1024 * 1024, p.line()
    control = next(p for p in loops if p.name == "control")
    # the bridge's counts by age crossed the bus: about one applied command a cycle
    assert control.late_of > 0.95 * report.cycles, control.line()
    assert ("all goals met" in report.lines()[0]) is report.goals_met


def test_the_report_names_the_recorders_largest_backlog() -> None:
    report = _report(recorder_backlog_max=3103)
    assert any("largest backlog 3103 messages" in line for line in report.lines())
    assert report.as_dict()["recorder_backlog_max"] == 3103
    assert report.goals_met  # reported, no goal
