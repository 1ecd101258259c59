"""The gait clock: diagonal pairs, duty factor, stopping with four feet down within a cycle."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.messages.errors import LimitError
from jointbus.robots.hb50.legged.gait_scheduler import GaitScheduler


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


@pytest.mark.parametrize(
    "legs", [(True, False, True, False), (False, True, False, True), (False, False, True, False)]
)
def test_start_swing_lifts_the_given_pair_first_and_runs_the_clock(
    legs: tuple[bool, ...],
) -> None:
    """The bridge's fallback takes a trot over mid-stride: the pair in the air swings first."""
    gait = GaitScheduler(period=0.3, duty=0.6)
    gait.start_swing(list(legs))
    assert not gait.stopped
    phase = gait.step(0.002, moving=True)
    first = legs.index(True)
    swinging = tuple(not s for s in phase.stance)
    pair = (first, (first + 2) % 4)  # diagonal partner
    assert all(swinging[i] for i in pair) and sum(swinging) == 2
    assert phase.progress[first] < 0.05  # the swing has just begun


def test_start_swing_with_no_leg_in_the_air_leaves_the_clock_stopped() -> None:
    gait = GaitScheduler(period=0.3, duty=0.6)
    gait.step(0.1, moving=True)
    gait.start_swing([False] * 4)
    assert gait.stopped and all(gait.step(0.002, moving=False).stance)
    with pytest.raises(ValueError, match="3 flags"):
        gait.start_swing([True] * 3)
