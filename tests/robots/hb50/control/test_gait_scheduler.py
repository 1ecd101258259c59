"""The gait clock: diagonal pairs, duty factor, stopping with four feet down within a cycle."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.messages.errors import LimitError
from jointbus.robots.hb50.control.gait_scheduler import GaitScheduler


def test_trot_moves_diagonal_pairs_together_half_a_cycle_apart() -> None:
    gait = GaitScheduler(period=0.4, duty=0.6)
    seen = set()
    stance_time = [0.0] * 4
    for _ in range(400):  # two cycles at 2 ms
        phase = gait.step(0.002, moving=True)
        fr, fl, rl, rr = phase.stance
        assert fr == rl and fl == rr  # diagonal pairs
        assert fr or fl  # never both pairs in the air
        seen.add(phase.stance)
        for i, s in enumerate(phase.stance):
            stance_time[i] += 0.002 * s
    assert (True, False, True, False) in seen and (False, True, False, True) in seen
    assert stance_time == pytest.approx([0.6 * 0.8] * 4, abs=0.005)  # duty · 2 cycles


@given(st.floats(0.0, 1.0), st.floats(0.52, 0.75), st.floats(0.2, 1.0))
def test_stop_holds_four_feet_down_within_one_swing(
    start: float, duty: float, period: float
) -> None:
    gait = GaitScheduler(period=period, duty=duty)
    t = 0.0
    while t < start * period:  # walk to an arbitrary phase
        gait.step(0.002, moving=True)
        t += 0.002
    t = 0.0
    while not gait.step(0.002, moving=False).stopped:
        t += 0.002
        assert t <= (1.0 - duty) * period + 0.004
    phase = gait.step(0.5, moving=False)  # held
    assert phase.stopped and all(phase.stance)


def test_bad_timing_is_refused_and_changes_nothing() -> None:
    gait = GaitScheduler(period=0.4, duty=0.6)
    with pytest.raises(LimitError, match="duty"):
        gait.set_timing(0.4, 0.3)
    with pytest.raises(LimitError, match="period"):
        gait.set_timing(5.0, 0.6)
    assert (gait.period, gait.duty) == (0.4, 0.6)


@given(
    st.lists(st.tuples(st.floats(0.0, 0.05), st.booleans()), max_size=40),
    st.floats(0.2, 1.0),
    st.floats(0.52, 0.75),
)
def test_peek_is_the_schedule_of_the_clock_as_it_stands(
    steps: list[tuple[float, bool]], period: float, duty: float
) -> None:
    """peek() answers from the last step while nothing changed; a new timing shows at once."""
    gait = GaitScheduler(period=0.4, duty=0.6)
    fresh = GaitScheduler(period=0.4, duty=0.6)
    for dt, moving in steps:
        stepped = gait.step(dt, moving)
        fresh.step(dt, moving)
        assert gait.peek() == stepped
    for timing in ((0.4, duty), (period, duty)):  # the duty alone, then both
        gait.set_timing(*timing)
        fresh.set_timing(*timing)
        fresh._last = None  # the same clock without the remembered schedule
        assert gait.peek() == fresh.peek()
        assert gait.peek().stance_time == pytest.approx(timing[0] * timing[1])
