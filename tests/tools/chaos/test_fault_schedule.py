"""The seeded fault schedule (:mod:`jointbus.tools.chaos.fault_schedule`): a seed gives the same
faults at the same times, faults overlap, every kind is dealt, lengths are within their ranges."""

from __future__ import annotations

import math

import pytest

from jointbus.tools.chaos.fault_schedule import (
    BAD_INPUT_S,
    HOG_S,
    STOP_S,
    WINDOW_LEAD_S,
    WINDOW_TAIL_S,
    FaultKind,
    FaultSchedule,
    FaultScheduleError,
)


def test_a_seed_replays_the_same_schedule() -> None:
    a = FaultSchedule.from_seed(42, 600.0)
    assert a == FaultSchedule.from_seed(42, 600.0)
    assert a.faults != FaultSchedule.from_seed(43, 600.0).faults


def test_ten_minutes_hold_200_faults_every_kind_at_least_ten_times() -> None:
    schedule = FaultSchedule.from_seed(1, 600.0, faults_per_minute=30.0)
    assert len(schedule.faults) >= 200
    for kind in FaultKind:
        assert schedule.count(kind) >= 10, kind


@pytest.mark.parametrize("seed", range(10))
def test_faults_are_ordered_inside_the_window_and_overlap(seed: int) -> None:
    schedule = FaultSchedule.from_seed(seed, 60.0, faults_per_minute=30.0, warmup_s=2.0, tail_s=5.0)
    assert len(schedule.faults) == 30
    starts = [f.at_s for f in schedule.faults]
    assert starts == sorted(starts)
    assert all(2.0 <= t < 55.0 for t in starts)
    assert [f.index for f in schedule.faults] == list(range(30))
    assert schedule.overlapping_pairs() > 0  # 30 faults in a minute, several lasting seconds


def test_every_kind_is_dealt_once_per_round_and_lengths_fit_the_kind() -> None:
    schedule = FaultSchedule.from_seed(5, 120.0, faults_per_minute=len(FaultKind) / 2)
    assert {f.kind for f in schedule.faults} == set(FaultKind)
    for f in FaultSchedule.from_seed(6, 600.0).faults:
        if f.kind.is_stop:
            assert STOP_S[0] <= f.duration_s <= STOP_S[1]
        elif f.kind is FaultKind.CPU_HOG:
            assert HOG_S[0] <= f.duration_s <= HOG_S[1]
        elif f.kind in (FaultKind.BAD_JOINT_COMMANDS, FaultKind.VELOCITY_FLIP):
            assert BAD_INPUT_S[0] <= f.duration_s <= BAD_INPUT_S[1]
        else:
            assert f.kind.is_kill or f.kind is FaultKind.DUPLICATE_NODE
            assert f.duration_s == 0


def test_a_subset_of_kinds_is_all_that_is_dealt() -> None:
    kinds = (FaultKind.STOP_CONTROL, FaultKind.CPU_HOG)
    schedule = FaultSchedule.from_seed(2, 60.0, kinds=kinds)
    assert {f.kind for f in schedule.faults} == set(kinds)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"seed": "1"}, "seed"),
        ({"duration_s": 5.0}, "duration_s"),
        ({"duration_s": math.nan}, "duration_s"),
        ({"faults_per_minute": 0.0}, "faults_per_minute"),
        ({"kinds": ()}, "kinds"),
        ({"kinds": (FaultKind.CPU_HOG, FaultKind.CPU_HOG)}, "kinds"),
        ({"warmup_s": -1.0}, "warmup_s/tail_s"),
    ],
)
def test_bad_arguments_are_refused(kwargs: dict[str, object], field: str) -> None:
    args: dict[str, object] = {"seed": 1, "duration_s": 60.0, **kwargs}
    seed, duration = args.pop("seed"), args.pop("duration_s")
    with pytest.raises(FaultScheduleError) as info:
        FaultSchedule.from_seed(seed, duration, **args)  # type: ignore[arg-type]
    assert info.value.field == field


def test_a_window_holds_the_faults_that_start_in_it_moved_to_a_short_run() -> None:
    full = FaultSchedule.from_seed(11, 3600.0)
    window = full.window(2865.0, 2895.0)
    inside = [f for f in full.faults if 2865.0 <= f.at_s <= 2895.0]
    assert [f.index for f in window.faults] == [f.index for f in inside] != []
    assert 1446 in [f.index for f in window.faults]  # the SIGSTOP of the 60-minute run's violation
    for moved, original in zip(window.faults, inside, strict=True):
        assert moved.kind is original.kind and moved.duration_s == original.duration_s
        assert moved.at_s == pytest.approx(original.at_s - 2865.0 + WINDOW_LEAD_S)
    assert window.duration_s == pytest.approx(30.0 + WINDOW_LEAD_S + WINDOW_TAIL_S)
    assert window.seed == 11


@pytest.mark.parametrize(
    "span", [(10.0, 5.0), (-1.0, 5.0), (5.0, 5.0), (0.0, 3601.0), (math.nan, 5.0)]
)
def test_a_window_outside_the_schedule_is_refused(span: tuple[float, float]) -> None:
    with pytest.raises(FaultScheduleError, match="window"):
        FaultSchedule.from_seed(11, 3600.0).window(*span)
