"""The seeded velocity script (:mod:`jointbus.tools.chaos.velocity_script`): a seed replays the
same walk, every kind of motion appears, and no command leaves the script's limits."""

from __future__ import annotations

import math

import pytest

from jointbus.tools.chaos.velocity_script import (
    LIMITS,
    SEGMENT_S,
    SegmentKind,
    VelocityScript,
    VelocityScriptError,
)


def test_a_seed_gives_the_same_script_and_another_seed_another() -> None:
    a = VelocityScript.from_seed(7, 300.0)
    assert a.segments == VelocityScript.from_seed(7, 300.0).segments
    assert a.segments != VelocityScript.from_seed(8, 300.0).segments


@pytest.mark.parametrize("seed", range(20))
def test_every_command_is_within_the_limits_and_every_kind_is_driven(seed: int) -> None:
    script = VelocityScript.from_seed(seed, 120.0)
    assert {s.kind for s in script.segments} == set(SegmentKind)
    assert script.segments[-1].end_s >= 120.0
    for s in script.segments:
        assert SEGMENT_S[0] <= s.duration_s <= SEGMENT_S[1]
        assert abs(s.forward) <= LIMITS.forward
        assert abs(s.sideways) <= LIMITS.sideways
        assert abs(s.turn) <= LIMITS.turn
    for i in range(1200):
        forward, sideways, turn = script.at(i * 0.1)
        assert abs(forward) <= LIMITS.forward
        assert abs(sideways) <= LIMITS.sideways
        assert abs(turn) <= LIMITS.turn


def test_segments_follow_each_other_and_the_script_stops_outside_them() -> None:
    script = VelocityScript.from_seed(3, 60.0)
    for before, after in zip(script.segments, script.segments[1:], strict=False):
        assert after.start_s == pytest.approx(before.end_s)
    stops = [s for s in script.segments if s.kind is SegmentKind.STOP]
    assert stops and all(script.at(s.start_s + 0.1) == (0.0, 0.0, 0.0) for s in stops)
    assert script.at(-1.0) == (0.0, 0.0, 0.0)
    assert script.at(script.segments[-1].end_s + 1.0) == (0.0, 0.0, 0.0)
    forward = next(s for s in script.segments if s.kind is SegmentKind.FORWARD)
    assert script.at(forward.start_s + 0.5)[0] > 0


@pytest.mark.parametrize(
    ("seed", "duration", "field"),
    [
        (1.5, 10.0, "seed"),
        (True, 10.0, "seed"),
        (1, 0.0, "duration_s"),
        (1, math.inf, "duration_s"),
    ],
)
def test_bad_arguments_are_refused(seed: object, duration: float, field: str) -> None:
    with pytest.raises(VelocityScriptError) as info:
        VelocityScript.from_seed(seed, duration)  # type: ignore[arg-type]
    assert info.value.field == field
