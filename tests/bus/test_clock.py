"""The bus clock: a manual clock moves only when told, never backwards, and runs deadline checks."""

from __future__ import annotations

import math
import threading
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.bus import RELIABLE, SYSTEM_CLOCK, Bus, BusError, ManualClock
from support.bus import Count


@given(st.lists(st.floats(0.0, 10.0), max_size=20))
def test_manual_time_is_the_sum_of_the_steps(steps: list[float]) -> None:
    clock = ManualClock(start_ns=5)
    for step in steps:
        before = clock.monotonic_ns()
        after = clock.advance(step)
        assert after == clock.monotonic_ns() == before + round(step * 1e9)


@pytest.mark.parametrize("bad", [-1e-9, -1.0, math.nan, math.inf, "1", True, None])
def test_a_bad_step_is_refused_and_time_stays(bad: object) -> None:
    clock = ManualClock(start_ns=100)
    with pytest.raises(BusError, match="finite number of s"):
        clock.advance(bad)  # type: ignore[arg-type]
    assert clock.monotonic_ns() == 100


def test_a_manual_clock_bus_starts_no_deadline_thread_and_checks_on_advance() -> None:
    clock = ManualClock()
    before = set(threading.enumerate())
    bus = Bus(name="manual", clock=clock)
    try:
        sub = bus.subscribe("/x", Count, None, RELIABLE.with_(deadline=0.1))
        assert [t.name for t in set(threading.enumerate()) - before if "deadline" in t.name] == []
        clock.advance(0.25)
        assert sub.deadline_missed == 2
    finally:
        bus.close()
    clock.advance(1.0)  # a closed bus no longer listens
    assert sub.deadline_missed == 2


def test_the_default_clock_is_the_host_monotonic_clock() -> None:
    with Bus(name="system") as bus:
        assert bus.clock is SYSTEM_CLOCK
        before = time.monotonic_ns()
        now = SYSTEM_CLOCK.monotonic_ns()
        assert before <= now <= time.monotonic_ns()
