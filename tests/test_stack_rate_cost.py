"""A rate the bridge's own cycle cannot hold is said as soon as its first cycles measured it,
not ~1 s in when the first pace window closes (a user's ``--rate 2000``): the CPU time of the
cycles after a warm-up against the period, and nothing when it fits."""

from __future__ import annotations

import time

import pytest

from jointbus.robots.hb50.messages import Level
from jointbus.stack import _COST_CYCLES, _COST_WARMUP_CYCLES, Stack, _CycleCost

MS = 1_000_000  # ns


def _feed(cost: _CycleCost, cycles: list[tuple[float, int]]) -> list[str | None]:
    return [cost.add(round(ms * MS), slots) for ms, slots in cycles]


def test_only_the_cycles_after_the_warm_up_are_timed() -> None:
    timed = [i for i in range(_COST_WARMUP_CYCLES + _COST_CYCLES + 5) if _CycleCost.measures(i)]
    assert timed == list(range(_COST_WARMUP_CYCLES, _COST_WARMUP_CYCLES + _COST_CYCLES))


def test_cycles_costlier_than_the_period_per_slot_say_it_falls_behind_once() -> None:
    notes = _feed(_CycleCost(2000.0, stepped=True), [(0.6, 1)] * _COST_CYCLES)
    assert notes[:-1] == [None] * (_COST_CYCLES - 1)
    assert notes[-1] == (
        "bridge falls behind real time from the start: the simulator's step and the bridge's "
        "cycle took 0.60 ms of CPU per 0.5 ms slot (cycles 10-109, measured), more than the "
        "2000 Hz period on this host; the robot moves slower than the wall clock"
    )


def test_one_slot_cycles_over_the_period_say_it_skips_cycles() -> None:
    """Catching up on dropped slots keeps the wall clock (0.43 ms per slot), but a cycle of one
    slot (0.6 ms) overruns the 0.5 ms period: the loop skips cycles."""
    half = _COST_CYCLES // 2
    notes = _feed(_CycleCost(2000.0, stepped=True), [(0.6, 1)] * half + [(0.7, 2)] * half)
    assert notes[-1] is not None and notes[-1].startswith(
        f"bridge skips cycles from the start: the simulator's step and the bridge's cycle took "
        f"0.60 ms of CPU (median of {half} one-slot cycles 10-109, measured), more than its "
        "0.5 ms period at 2000 Hz"
    )


@pytest.mark.parametrize("ms", [0.1, 0.36, 0.5])
def test_a_cost_within_the_period_says_nothing(ms: float) -> None:
    assert _feed(_CycleCost(2000.0, stepped=True), [(ms, 1)] * _COST_CYCLES)[-1] is None


def test_the_running_stack_reports_it_on_its_status_topic(monkeypatch: pytest.MonkeyPatch) -> None:
    """Wired: the bridge's loop times its cycles and the WARN reaches the stack's reports. A slow
    host is stood in for by counting each timed cycle's CPU time 1000 times."""
    add = _CycleCost.add
    monkeypatch.setattr(_CycleCost, "add", lambda self, ns, slots: add(self, ns * 1000, slots))
    with Stack(zenoh=None, layout="inproc", start_command=None, realtime=None) as stack:
        deadline = time.monotonic() + 10.0
        found: list[str] = []
        while not found and time.monotonic() < deadline:
            found = [
                r.status
                for r in stack.take_reports()
                if r.level == Level.WARN and "from the start" in r.status
            ]
            time.sleep(0.05)
    assert len(found) == 1 and found[0].startswith("bridge falls behind real time from the start")
