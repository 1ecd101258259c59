"""The fallback's clock (:class:`jointbus.nodes.safety.fallback.FallbackClock`): seconds into
a fallback by the driver's clock, the cycles counted as its floor."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.nodes.safety.fallback import FallbackClock

PERIOD = 0.002


def test_a_driver_clock_in_step_with_the_cycles_gives_one_period_a_cycle() -> None:
    clock = FallbackClock(PERIOD)
    clock.start(5.0)  # the reading the fallback began at is also its first cycle's
    assert clock.tick(5.0) == pytest.approx(PERIOD)
    ticks = [clock.tick(5.0 + k * PERIOD) for k in range(1, 500)]
    assert ticks[-1] == pytest.approx(500 * PERIOD)


def test_skipped_cycles_count_as_the_drivers_time_not_as_cycles() -> None:
    """Every other slot skipped: 250 cycles over 1 s of the driver's clock are 1 s in."""
    clock = FallbackClock(PERIOD)
    clock.start(0.0)
    for k in range(250):
        elapsed = clock.tick(k * 2 * PERIOD)
    assert elapsed == pytest.approx(249 * 2 * PERIOD + PERIOD)


@pytest.mark.parametrize("now", [0.0, math.nan, -1.0])
def test_a_driver_clock_that_stands_still_or_is_missing_counts_cycles(now: float) -> None:
    clock = FallbackClock(PERIOD)
    clock.start(0.0 if now != now else now)
    for _ in range(100):
        elapsed = clock.tick(now)
    assert elapsed == pytest.approx(100 * PERIOD)


@given(st.lists(st.floats(-0.3, 0.3), min_size=1, max_size=400))
def test_read_time_jitter_adds_no_drift(jitter: list[float]) -> None:
    """A drive bus's read times, ±30 % of a period around their slots: the time in is the last
    read's, not a sum of per-cycle maxima that would run ahead."""
    clock = FallbackClock(PERIOD)
    clock.start(1.0)
    for k, j in enumerate(jitter):
        elapsed = clock.tick(1.0 + (k + j) * PERIOD)
    k = len(jitter) - 1
    assert elapsed == pytest.approx(max((k + jitter[-1]) * PERIOD + PERIOD, len(jitter) * PERIOD))
    assert elapsed <= (k + 1.3) * PERIOD + 1e-12


def test_set_moves_the_time_on_and_the_next_cycle_adds_to_it() -> None:
    clock = FallbackClock(PERIOD)
    clock.start(0.0)
    clock.tick(0.0)
    clock.set(0.152, 0.4)
    assert clock.elapsed == 0.152
    assert clock.tick(0.4 + PERIOD) == pytest.approx(0.152 + PERIOD)


@pytest.mark.parametrize("period", [0.0, -0.002, math.inf, math.nan])
def test_a_period_that_is_no_cycle_time_is_refused(period: float) -> None:
    with pytest.raises(ValueError, match="expected a finite cycle time"):
        FallbackClock(period)
