"""The soak runner (:mod:`jointbus.soak`): bad arguments are refused, and (in the ``long`` suite)
one minute of the whole stack at 500 Hz over Zenoh, recorded to MCAP, loses no reliable message
and grows its RSS by less than 5 MB (``make soak`` runs the same for 30 minutes).
"""

from __future__ import annotations

import json
import math
import mmap
from pathlib import Path

import pytest
from mcap.reader import make_reader

from jointbus.soak import (
    SoakConfigError,
    SoakReport,
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
        ({"overruns": 100}, True),  # reported, no goal
    ],
)
def test_the_goals(changes: dict[str, object], met: bool) -> None:
    report = _report(**changes)
    assert report.goals_met is met
    assert ("all goals met" in report.lines()[0]) is met
    assert json.loads(json.dumps(report.as_dict()))["goals_met"] is met


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
    assert lines  # progress was reported
    assert report.reliable_received > 500  # reliable traffic really crossed Zenoh
    assert report.reliable_lost == 0
    assert report.recorder_lost == 0
    assert report.rss_growth_bytes < 5 * 1024 * 1024
    # the bridge loop ran through the minute. Its rate has no goal here (overruns are reported,
    # module docstring): this one process carries both nodes, two Zenoh sessions and the
    # recorder, and a 2-core VM runs it at 160-350 Hz; the 500 Hz goal is the process layout's
    # (tests/test_stack_processes.py)
    assert report.cycles > 0.2 * 500 * MINUTE_S
    assert report.standing and report.bridge_mode == "run"
    assert report.mcap_ok
    with path.open("rb") as stream:
        summary = make_reader(stream).get_summary()
    assert summary is not None and summary.statistics is not None
    topics = {channel.topic for channel in summary.channels.values()}
    assert {"/hb50/bridge_data", "/hb50/joint_command", "/hb50/robot_state_10hz"} <= topics
    assert summary.statistics.message_count == report.recorder_messages
    assert report.goals_met


def test_the_report_names_the_recorders_largest_backlog() -> None:
    report = _report(recorder_backlog_max=3103)
    assert any("largest backlog 3103 messages" in line for line in report.lines())
    assert report.as_dict()["recorder_backlog_max"] == 3103
    assert report.goals_met  # reported, no goal
