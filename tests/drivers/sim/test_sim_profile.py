"""Tests of the ruckig-backed profile generator: limits respected, targets reached, joints
independent, run-time limit changes, speed moves, and validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointbus.drivers.sim.profile import ProfileGenerator
from jointbus.messages.errors import LengthMismatchError, LimitError, NonFiniteError

EPS = 1e-6
DT = 0.001


def _generator(n: int = 3, **kwargs: object) -> ProfileGenerator:
    args: dict[str, object] = {"max_velocity": 2.0, "max_acceleration": 8.0, "max_jerk": 100.0}
    args.update(kwargs)
    return ProfileGenerator([f"j{i}" for i in range(n)], **args)  # type: ignore[arg-type]


def _sample(gen: ProfileGenerator, seconds: float, dt: float = DT) -> tuple[np.ndarray, ...]:
    rows = [tuple(a.copy() for a in gen.step(dt)) for _ in range(round(seconds / dt))]
    p, v, a = (np.array([row[k] for row in rows]) for k in range(3))
    return p, v, a


def _check_limits(gen: ProfileGenerator, p: np.ndarray, v: np.ndarray, a: np.ndarray) -> None:
    vmax, amax = gen.max_velocity, gen.max_acceleration
    assert np.all(np.abs(v) <= vmax + EPS)
    assert np.all(np.abs(a) <= amax + EPS)
    # The sampled positions themselves, not just the reported derivatives, obey the limits.
    assert np.all(np.abs(np.diff(p, axis=0)) / DT <= vmax + 1e-3)
    assert np.all(np.abs(np.diff(v, axis=0)) / DT <= amax + 1e-3)


@settings(max_examples=40)
@given(
    targets=st.lists(st.floats(-4.0, 4.0), min_size=3, max_size=3),
    vmax=st.floats(0.5, 10.0),
    amax=st.floats(0.5, 50.0),
    jerk=st.one_of(st.just(math.inf), st.floats(5.0, 500.0)),
)
def test_moves_respect_speed_and_acceleration_limits_and_reach_the_target(
    targets: list[float], vmax: float, amax: float, jerk: float
) -> None:
    gen = _generator(max_velocity=vmax, max_acceleration=amax, max_jerk=jerk)
    gen.move_to(None, targets)
    rows = []
    while not gen.finished.all():
        rows.append(tuple(a.copy() for a in gen.step(DT)))
        assert len(rows) < 60_000  # a move of at most 8 rad at >= 0.5 rad/s ends well before
    rows.extend(tuple(a.copy() for a in gen.step(DT)) for _ in range(10))
    p, v, a = (np.array([row[k] for row in rows]) for k in range(3))
    _check_limits(gen, p, v, a)
    assert gen.finished.all()
    assert not gen.active.any()
    assert gen.position.tolist() == pytest.approx(targets, abs=1e-6)
    assert np.abs(gen.velocity).max() <= 1e-6


def test_jerk_limit_makes_acceleration_continuous() -> None:
    gen = _generator(1, max_velocity=2.0, max_acceleration=8.0, max_jerk=100.0)
    gen.move_to(0, 1.0)
    _, _, a = _sample(gen, 1.5)
    assert np.all(np.abs(np.diff(a[:, 0])) <= 100.0 * DT + 1e-6)


def test_one_joint_moves_and_the_others_hold() -> None:
    gen = _generator(3, initial_positions=[0.1, 0.2, 0.3])
    gen.move_to(1, 1.0)
    p, _, _ = _sample(gen, 0.3)
    assert np.all(p[:, 0] == 0.1)
    assert np.all(p[:, 2] == 0.3)
    assert gen.active.tolist() == [False, True, False]
    assert gen.finished.tolist() == [True, False, True]
    _sample(gen, 1.5)
    assert gen.position[1] == pytest.approx(1.0)
    assert gen.finished.all()


def test_finished_is_per_joint() -> None:
    gen = _generator(2)
    gen.move_to(None, [0.1, 3.0])
    seen_short_done_long_running = False
    for _ in range(3000):
        gen.step(DT)
        if gen.finished[0] and not gen.finished[1]:
            seen_short_done_long_running = True
            assert gen.position[0] == pytest.approx(0.1)
    assert seen_short_done_long_running
    assert gen.finished.all()


def test_retargeting_mid_move_is_smooth_and_keeps_other_joints_on_course() -> None:
    reference = _generator(2)
    reference.move_to(None, [2.0, -1.0])
    p_ref, _, _ = _sample(reference, 2.5)

    gen = _generator(2)
    gen.move_to(None, [2.0, -1.0])
    p1, v1, a1 = _sample(gen, 0.4)
    gen.move_to(0, -1.0)  # reverse joint 0 mid-move
    p2, v2, a2 = _sample(gen, 2.1)
    p, v, a = np.vstack([p1, p2]), np.vstack([v1, v2]), np.vstack([a1, a2])
    _check_limits(gen, p, v, a)
    assert gen.position.tolist() == pytest.approx([-1.0, -1.0])
    # Joint 1's motion is unchanged by joint 0's new target.
    assert np.allclose(p[:, 1], p_ref[:, 1], atol=1e-9)


def test_speed_move_reaches_and_keeps_the_speed_then_stops() -> None:
    gen = _generator(2, max_velocity=3.0, max_acceleration=6.0)
    gen.move_at(0, -2.5)
    p, v, a = _sample(gen, 1.0)
    _check_limits(gen, p, v, a)
    assert gen.velocity[0] == pytest.approx(-2.5)
    assert gen.finished[0]
    assert gen.active.tolist() == [True, False]
    before = float(gen.position[0])
    gen.step(0.1)
    assert gen.position[0] == pytest.approx(before - 0.25)
    gen.move_at(0, 0.0)
    p, v, a = _sample(gen, 1.0)
    _check_limits(gen, p, v, a)
    assert gen.velocity[0] == pytest.approx(0.0, abs=1e-9)
    assert not gen.active.any()
    held = float(gen.position[0])
    gen.step(0.5)
    assert gen.position[0] == pytest.approx(held)


def test_lowering_the_speed_limit_mid_move_slows_the_joint() -> None:
    gen = _generator(1, max_velocity=4.0, max_acceleration=20.0, max_jerk=math.inf)
    gen.move_to(0, 10.0)
    _sample(gen, 0.5)
    assert gen.velocity[0] == pytest.approx(4.0)
    gen.set_limits(0, max_velocity=1.0)
    _, v, _ = _sample(gen, 0.5)
    assert np.all(np.abs(np.diff(v[:, 0])) / DT <= 20.0 + 1e-3)  # braked within amax
    _, v, _ = _sample(gen, 2.0)
    assert np.all(np.abs(v) <= 1.0 + EPS)
    assert gen.max_velocity[0] == 1.0
    _sample(gen, 10.0)
    assert gen.position[0] == pytest.approx(10.0)


def test_limits_can_be_set_for_all_joints() -> None:
    gen = _generator(3)
    gen.set_limits(None, max_velocity=[1.0, 2.0, 3.0], max_acceleration=5.0)
    assert gen.max_velocity.tolist() == [1.0, 2.0, 3.0]
    assert gen.max_acceleration.tolist() == [5.0, 5.0, 5.0]
    gen.move_to(None, [5.0, 5.0, 5.0])
    _, v, _ = _sample(gen, 2.0)
    assert np.abs(v).max(axis=0).tolist() == pytest.approx([1.0, 2.0, 3.0])


def test_homing_is_a_move_to_the_home_pose() -> None:
    home = [0.05, 0.7, -1.4]
    gen = _generator(3, initial_positions=[0.5, -0.2, 0.0])
    gen.move_to(None, home)
    _sample(gen, 3.0)
    assert gen.position.tolist() == pytest.approx(home)
    assert gen.finished.all()


def test_reset_takes_the_actual_state_and_stops_moving_joints_smoothly() -> None:
    gen = _generator(2)
    gen.move_to(None, [3.0, 3.0])
    _sample(gen, 0.2)
    gen.reset([1.0, -1.0], [0.0, 1.5])
    assert gen.position.tolist() == [1.0, -1.0]
    p, v, a = _sample(gen, 1.0)
    _check_limits(gen, p, v, a)
    assert gen.position[0] == 1.0
    assert gen.velocity[1] == pytest.approx(0.0, abs=1e-9)
    assert gen.position[1] > -1.0


def test_bad_requests_name_the_joint_and_change_nothing() -> None:
    gen = ProfileGenerator(["hip", "knee"], max_velocity=2.0, max_acceleration=5.0)
    gen.move_to(None, [0.5, 0.5])
    with pytest.raises(NonFiniteError) as info:
        gen.move_to(None, [1.0, math.nan])
    assert (info.value.joint, info.value.index) == ("knee", 1)
    with pytest.raises(LimitError) as info2:
        gen.move_at(1, 2.5)  # faster than max_velocity
    assert (info2.value.joint, info2.value.index, info2.value.field) == ("knee", 1, "velocity")
    assert "knee" in str(info2.value)
    with pytest.raises(LimitError):
        gen.move_to(2, 0.0)
    with pytest.raises(LengthMismatchError):
        gen.move_to(0, [1.0, 2.0])
    with pytest.raises(LengthMismatchError):
        gen.move_to(None, [1.0])
    with pytest.raises(LimitError) as info3:
        gen.set_limits(0, max_velocity=0.0, max_acceleration=9.0)
    assert (info3.value.joint, info3.value.field) == ("hip", "max_velocity")
    assert gen.max_acceleration.tolist() == [5.0, 5.0]
    with pytest.raises(NonFiniteError):
        gen.set_limits(None, max_acceleration=math.inf)
    with pytest.raises(LimitError):
        gen.step(0.0)
    assert gen.target_position.tolist() == [0.5, 0.5]
    assert gen.target_velocity.tolist() == [0.0, 0.0]


def test_speed_limit_below_a_cruising_speed_is_rejected() -> None:
    gen = _generator(1, max_velocity=3.0)
    gen.move_at(0, 2.0)
    with pytest.raises(LimitError) as info:
        gen.set_limits(0, max_velocity=1.0)
    assert info.value.field == "max_velocity"
    assert gen.max_velocity[0] == 3.0


def test_reference_views_are_read_only() -> None:
    gen = _generator(1)
    p, _, _ = gen.step(DT)
    with pytest.raises(ValueError):
        p[0] = 1.0


# ------------------------------------------------------------------------------ position bounds


@settings(max_examples=25)
@given(
    speed=st.floats(0.1, 2.0),
    start=st.floats(-0.9, 0.9),
    amax=st.floats(2.0, 50.0),
    jerk=st.one_of(st.just(math.inf), st.floats(20.0, 500.0)),
    dt=st.sampled_from([0.001, 0.002]),
)
def test_a_speed_move_stops_at_its_bound_within_the_limits(
    speed: float, start: float, amax: float, jerk: float, dt: float
) -> None:
    """A renewed speed request must not carry a joint past the end of its range: it decelerates
    within its acceleration and jerk limits and stops exactly at the bound, flagged limited."""
    gen = ProfileGenerator(
        ["j"], max_velocity=2.0, max_acceleration=amax, max_jerk=jerk, initial_positions=[start]
    )
    gen.set_position_bounds([-1.0], [1.0])
    gen.move_at(0, speed)
    p = []
    for _ in range(round(3.5 / dt)):  # 2 rad at ≥ 0.1 rad/s would take longer: see below
        p.append(float(gen.step(dt)[0][0]))
        assert abs(float(gen.acceleration[0])) <= amax + 1e-6
        assert abs(float(gen.velocity[0])) <= 2.0 + 1e-6
    assert max(p) <= 1.0 + 1e-9
    if gen.limited[0]:  # it reached the bound's stopping distance: it stops exactly there
        for _ in range(round(2.0 / dt)):  # a stop within the limits takes at most 1 s here
            p.append(float(gen.step(dt)[0][0]))
        assert max(p) <= 1.0 + 1e-9
        assert p[-1] == pytest.approx(1.0, abs=1e-9) and not gen.active[0]
    else:  # a slow joint from far away: still cruising, at its speed
        assert float(gen.velocity[0]) == pytest.approx(speed) and p[-1] < 1.0


def _longest_reach(lookahead: float | None) -> float:
    """The furthest a 10 rad/s speed move from 5 rad towards the bound at 10 rad gets, stepped
    every 0.5 ms near where it must brake (a driver read flat out) but once by 50 ms (a stalled
    host), that long step placed anywhere over the 0.6 rad before it brakes."""
    reach = -math.inf
    for stall_at in np.linspace(8.0, 8.6, 13).tolist():
        gen = ProfileGenerator(
            ["j"], max_velocity=10.0, max_acceleration=50.0, max_jerk=1000.0,
            initial_positions=[5.0],
        )
        gen.set_position_bounds([-10.0], [10.0])
        gen.move_at(0, 10.0)
        stalled = False
        for _ in range(3000):
            here = float(gen.position[0])
            dt = 0.002 if here < 7.5 else 0.0005
            if not stalled and here > stall_at:
                dt, stalled = 0.05, True
            gen.step(dt, lookahead=lookahead)
            reach = max(reach, float(gen.position[0]))
            if stalled and not gen.active[0]:
                break
    return reach


def test_steps_of_varying_length_stop_at_the_bound_when_told_the_longest() -> None:
    """The ``can://`` driver steps the profile by the clock (2026-12-06): 0.5 ms per read in a
    loop reading flat out, up to 50 ms after a stall. The stop at a bound looked one step of the
    *current* length ahead, so a 50 ms step after 0.5 ms ones carried a 10 rad/s move 0.24 rad
    past its bound; told the longest step (``lookahead``), it stops exactly there."""
    assert _longest_reach(None) > 10.1  # what the look-ahead is for
    assert _longest_reach(0.05) <= 10.0 + 1e-9


def test_a_speed_request_towards_a_bound_it_stands_at_holds_it_there() -> None:
    gen = ProfileGenerator(["j"], max_velocity=2.0, max_acceleration=8.0, initial_positions=[1.0])
    gen.set_position_bounds([-1.0], [1.0])
    for _ in range(100):  # renewed, as a 500 Hz stream renews it
        gen.move_at(0, 1.0)
        assert float(gen.step(0.002)[0][0]) == pytest.approx(1.0, abs=1e-12)
    assert gen.limited[0]
    gen.move_at(0, -1.0)  # away from it: moves, no longer limited
    _sample(gen, 0.5, dt=0.002)
    assert float(gen.position[0]) < 0.9 and not gen.limited[0]


def test_a_stop_that_would_end_past_a_bound_ends_at_it() -> None:
    """Speed 0 requested too close to the end (the drive watchdog's stop, say): the stop is
    retargeted to the bound rather than coasting past it. It is limited while it brakes, and no
    longer once it rests at the bound: a speed of 0 asks for nothing beyond it."""
    gen = ProfileGenerator(["j"], max_velocity=2.0, max_acceleration=2.0, initial_positions=[0.0])
    gen.move_at(0, 2.0)
    _sample(gen, 1.3)  # at ≈ 2.0 rad/s, p ≈ 2.1: 1 rad/s² more would need 1 rad to stop
    gen.set_position_bounds([-10.0], [float(gen.position[0]) + 0.5])
    bound = float(gen.position[0]) + 0.5
    gen.move_at(0, 0.0)
    assert gen.limited[0]
    p, _, _ = _sample(gen, 3.0)
    assert p.max() <= bound + 0.6  # it cannot stop in 0.5 rad: ruckig overshoots and returns
    assert p[-1, 0] == pytest.approx(bound, abs=1e-9) and not gen.limited[0]


def test_a_stop_that_ends_inside_the_range_is_left_alone() -> None:
    gen = ProfileGenerator(["j"], max_velocity=2.0, max_acceleration=8.0, initial_positions=[0.0])
    gen.set_position_bounds([-5.0], [5.0])
    gen.move_at(0, 1.0)
    _sample(gen, 0.5)
    gen.move_at(0, 0.0)
    p, _, _ = _sample(gen, 1.0)
    assert p[-1, 0] < 1.0 and not gen.limited[0]


def test_position_bounds_are_checked_whole() -> None:
    gen = _generator()
    with pytest.raises(LengthMismatchError):
        gen.set_position_bounds([-1.0], [1.0])
    with pytest.raises(LimitError, match="joint 'j1' \\(index 1\\)"):
        gen.set_position_bounds([-1.0, 2.0, -1.0], [1.0, 1.0, 1.0])
    with pytest.raises(NonFiniteError, match="j2"):
        gen.set_position_bounds([-1.0, -1.0, math.nan], [1.0, 1.0, 1.0])


# -- a request is planned whole or not at all (a user's trial, 2026-12-06) ----------------------


def test_a_move_too_slow_to_plan_is_refused_whole_naming_the_joint() -> None:
    """A speed of 1e-6 rad/s made ruckig refuse the next six-joint move ("-101 is not a valid
    Result", a plain ValueError) after five joints had started: now nothing starts, and the
    refusal names the joint, its index, the field, the value and why."""
    gen = _generator(max_velocity=[2.0, 1e-6, 2.0])
    with pytest.raises(LimitError) as refused:
        gen.move_to(None, [0.3, 0.3, 0.3])
    err = refused.value
    assert (err.joint, err.index, err.field, err.value) == ("j1", 1, "position", 0.3)
    assert "a move of at most 3600 s" in str(err) and "≈ 3e+05 s" in str(err)
    assert "raise the joint's speed or acceleration" in str(err)
    assert gen.target_position.tolist() == [0.0, 0.0, 0.0]
    p, v, _a = _sample(gen, 0.2)
    assert np.all(p == 0.0) and np.all(v == 0.0)  # nothing moved
    gen.move_to(None, [0.3, 0.0, 0.3])  # the slow joint left where it is: the others move
    p, _v, _a = _sample(gen, 1.0)
    assert p[-1] == pytest.approx([0.3, 0.0, 0.3])


def test_listed_joints_move_in_one_plan_or_not_at_all() -> None:
    gen = _generator(max_velocity=[2.0, 2.0, 1e-6])
    with pytest.raises(LimitError) as refused:
        gen.move_to([0, 2], [0.5, 0.5])
    assert (refused.value.joint, refused.value.index) == ("j2", 2)
    assert gen.target_position.tolist() == [0.0, 0.0, 0.0]
    assert not gen.active.any()
    gen.move_to([0, 1], [0.5, -0.5])
    assert gen.target_position.tolist() == [0.5, -0.5, 0.0]
    assert gen.active.tolist() == [True, True, False]
    with pytest.raises(LengthMismatchError):
        gen.move_to([0, 1], [0.5])
    with pytest.raises(NonFiniteError) as nan:
        gen.move_at([1, 2], [0.1, math.nan])
    assert (nan.value.joint, nan.value.index) == ("j2", 2)
    with pytest.raises(LimitError):
        gen.move_to([0, 3], [0.1, 0.1])


def test_a_limit_that_would_stretch_a_move_under_way_past_an_hour_is_refused() -> None:
    gen = _generator()
    gen.move_to(None, [1.0, 1.0, 1.0])
    _sample(gen, 0.1)
    with pytest.raises(LimitError) as refused:
        gen.set_limits(1, max_acceleration=1e-9)
    assert (refused.value.field, refused.value.index) == ("max_acceleration", 1)
    assert gen.max_acceleration.tolist() == [8.0, 8.0, 8.0]  # nothing changed
    p, _v, _a = _sample(gen, 2.0)
    assert p[-1] == pytest.approx([1.0, 1.0, 1.0])
    # at rest on its target a joint has no move to stretch: the limit is taken, and the move
    # that would take too long is refused when it is asked for
    gen.set_limits(1, max_velocity=1e-6)
    with pytest.raises(LimitError):
        gen.move_to(1, 0.0)


@settings(max_examples=60, deadline=None)
@given(
    speed=st.floats(1e-7, 2.0),
    accel=st.floats(1e-7, 20.0),
    target=st.floats(-3.0, 3.0),
)
def test_any_limits_either_plan_the_move_or_refuse_it_and_change_nothing(
    speed: float, accel: float, target: float
) -> None:
    gen = _generator(n=2, max_velocity=[2.0, speed], max_acceleration=[8.0, accel])
    try:
        gen.move_to(None, [0.5, target])
    except LimitError as err:
        assert err.index == 1
        assert gen.target_position.tolist() == [0.0, 0.0] and not gen.active.any()
    else:
        assert gen.target_position.tolist() == [0.5, target]
