"""The control node's own pace: frames it skips while starved of CPU are reported once, with
their share and the step time, and an OK follows when it keeps pace again (issue 20 item 27)."""

from __future__ import annotations

from jointbus.robots.hb50.control.step_pace import WINDOW_S, PaceReport, StepPace

PERIOD = 0.002


def _run(
    pace: StepPace, seconds: float, every: int, t: float, wall: int
) -> tuple[list[PaceReport], float, int]:
    reports: list[PaceReport] = []
    for _ in range(round(seconds / PERIOD / every)):
        t += every * PERIOD
        wall += every * 2_000_000
        r = pace.step(t, wall, wall + 300_000)
        if r is not None:
            reports.append(r)
    return reports, t, wall


def test_skipped_frames_are_reported_with_figures_and_the_recovery_once() -> None:
    pace = StepPace(PERIOD)
    quiet, t, wall = _run(pace, 3 * WINDOW_S, 1, 0.0, 0)
    assert quiet == []
    starved, t, wall = _run(pace, 2.5 * WINDOW_S, 2, t, wall)  # every other frame skipped
    assert len(starved) == 1 and starved[0].behind
    assert "50.0 % of the bridge's frames skipped" in starved[0].text
    assert "control step p99 0.30 ms" in starved[0].text
    back, t, wall = _run(pace, 2.5 * WINDOW_S, 1, t, wall)
    assert len(back) == 1 and not back[0].behind and "keeps pace again" in back[0].text
    assert pace.skipped_total > 0


def test_a_stall_is_not_counted_as_skipped_frames() -> None:
    pace = StepPace(PERIOD)
    _r, t, wall = _run(pace, 1.0, 1, 0.0, 0)
    pace.step(t + 0.5, wall + 500_000_000, wall + 500_300_000)  # reported as a stall instead
    assert pace.skipped_total == 0
