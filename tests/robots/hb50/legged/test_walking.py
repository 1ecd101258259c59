"""The trot on MuJoCo, measured on ground truth (issue 13's required column).

Each test starts from standing and holds a command for 10 s of *simulated* time (stepped, not
wall-clock: deterministic, and as fast as the host allows). "No fall" = base height > 0.2 m and no
floor contact other than the feet, throughout. Speeds are means over the held command after the
first second (the set-point ramps at ``accel_limit`` and the gait needs a cycle to settle).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointbus.math import Quaternion
from jointbus.model.yaml_loader import load_robot
from jointbus.robots.hb50.legged.gait_scheduler import GaitPhase
from jointbus.robots.hb50.legged.leg_kinematics import ACCELERATED
from jointbus.robots.hb50.legged.state_estimator import EstimatedState, rotation_of
from jointbus.robots.hb50.legged.walking import Plan, WalkCommand, WalkingController, WalkParams
from support.accel import assert_runs_without_accel
from support.walking_sim import STAND_HEIGHT, Trace, WalkingSim, constant

HOLD = 10.0  # s
SETTLE = 1.0  # s excluded from the mean


def _no_fall(tr: Trace) -> None:
    assert tr.min_height > 0.2, f"base went down to {tr.min_height:.3f} m"
    assert not tr.body_contact, "a body, thigh or shank touched the floor"


def _mean_world_velocity(tr: Trace, start: float, end: float) -> np.ndarray:
    t, p = tr.arrays()
    t = t - t[0]
    i0, i1 = np.searchsorted(t, start), np.searchsorted(t, end) - 1
    return (p[i1, :2] - p[i0, :2]) / (t[i1] - t[i0])


def test_forward_half_metre_per_second_tracks_within_15_percent() -> None:
    tr = WalkingSim().run(HOLD, constant(vx=0.5))
    _no_fall(tr)
    v = _mean_world_velocity(tr, SETTLE, HOLD)
    assert v[0] == pytest.approx(0.5, rel=0.15)
    _, p = tr.arrays()
    distance = p[-1, 0] - p[0, 0]
    assert abs(p[-1, 1] - p[0, 1]) < 0.1 * distance  # lateral drift
    assert abs(tr.yaw[-1]) < 0.2


def test_at_1000_hz_the_trot_tracks_as_at_500_hz() -> None:
    """Issue 15: the walking controller's timing comes from ``dt`` (gait clock, ramps, estimator),
    so a 1 kHz bridge and control node (1 ms steps) walk like the 500 Hz ones."""
    tr = WalkingSim(period=0.001).run(HOLD, constant(vx=0.5))
    _no_fall(tr)
    v = _mean_world_velocity(tr, SETTLE, HOLD)
    assert v[0] == pytest.approx(0.5, rel=0.15)
    _, p = tr.arrays()
    assert abs(p[-1, 1] - p[0, 1]) < 0.1 * (p[-1, 0] - p[0, 0])  # lateral drift
    assert abs(tr.yaw[-1]) < 0.2


def test_lateral_two_tenths_tracks_within_25_percent() -> None:
    tr = WalkingSim().run(HOLD, constant(vy=0.2))
    _no_fall(tr)
    v = _mean_world_velocity(tr, SETTLE, HOLD)
    assert v[1] == pytest.approx(0.2, rel=0.25)
    assert abs(v[0]) < 0.05


def test_yaw_in_place_tracks_within_20_percent() -> None:
    tr = WalkingSim().run(HOLD, constant(yaw_rate=1.0))
    _no_fall(tr)
    n0 = round(SETTLE / 0.002)
    turned = np.unwrap(np.array(tr.yaw[n0:]))
    rate = (turned[-1] - turned[0]) / (tr.t[-1] - tr.t[n0])
    assert rate == pytest.approx(1.0, rel=0.2)
    _, p = tr.arrays()
    assert np.hypot(*(p[-1, :2] - p[0, :2])) < 0.3  # in place


def test_forward_with_yaw_follows_the_arc() -> None:
    tr = WalkingSim().run(HOLD, constant(vx=0.5, yaw_rate=0.5))
    _no_fall(tr)
    n0 = round(SETTLE / 0.002)
    turned = np.unwrap(np.array(tr.yaw[n0:]))
    rate = (turned[-1] - turned[0]) / (tr.t[-1] - tr.t[n0])
    assert rate == pytest.approx(0.5, rel=0.25)
    speed = np.array(tr.velocity_body)[n0:, 0].mean()
    assert speed == pytest.approx(0.5, rel=0.25)
    # an arc of radius v/ω = 1 m: the robot stays near its circle
    _, p = tr.arrays()
    centre = p[0, :2] + np.array((0.0, 1.0))
    radius = np.hypot(p[n0:, 0] - centre[0], p[n0:, 1] - centre[1])
    assert radius.mean() == pytest.approx(1.0, rel=0.3)


def test_step_changes_settle_within_a_second_and_stop_on_four_feet() -> None:
    def command(t: float) -> WalkCommand:
        vx = 0.0 if t < 1.0 else 0.5 if t < 5.0 else -0.3 if t < 9.0 else 0.0
        return WalkCommand(vx, 0.0, 0.0, STAND_HEIGHT)

    sim = WalkingSim()
    tr = sim.run(12.0, command)
    _no_fall(tr)
    vb = np.array(tr.velocity_body)[:, 0]
    t = np.array(tr.t) - tr.t[0]
    for change, target, until in ((1.0, 0.5, 5.0), (5.0, -0.3, 9.0), (9.0, 0.0, 12.0)):
        window = (t >= change + 1.0) & (t < until)
        assert abs(vb[window].mean() - target) < 0.1, (change, vb[window].mean())
    # zero command: the clock stops within one gait cycle, every foot down
    period = sim.controller.params.gait_period
    stopped = np.array(tr.stance_count)[t >= 9.0 + 0.35 + period] == 4  # ramp 0.3/1.5 s, one cycle
    assert stopped.all()
    assert sim.controller.gait.stopped
    assert sim.world.foot_contacts().all()


@pytest.mark.parametrize("force", [30.0, 60.0])  # N for 0.2 s: required, goal
def test_lateral_push_while_walking_does_not_topple(force: float) -> None:
    sim = WalkingSim()
    tr = sim.run(6.0, constant(vx=0.5), push=(3.0, 0.2, np.array((0.0, force, 0.0))))
    _no_fall(tr)
    v = _mean_world_velocity(tr, 4.5, 6.0)
    assert v[0] > 0.3  # walking on after the push


def test_estimator_velocity_error_below_a_tenth_at_half_metre_per_second() -> None:
    tr = WalkingSim().run(HOLD, constant(vx=0.5))
    n0 = round(SETTLE / 0.002)
    truth = np.array(tr.velocity_body)[n0:, :2]
    est = np.array(tr.estimated_velocity)[n0:, :2]
    rms = math.sqrt(float(((truth - est) ** 2).sum(axis=1).mean()))
    assert rms < 0.05, rms  # the goal (required: < 0.1); measured 0.032


@pytest.mark.long  # a sweep: 10 walks of 4 s (≈ 1 min on a loaded 2-core host)
@pytest.mark.parametrize(
    "name", ["gait_period", "duty_factor", "step_height", "stance_kp", "swing_kp"]
)
def test_walks_at_both_ends_of_each_declared_parameter_range(name: str) -> None:
    """What ``jointbus param set`` accepts (the robot file's bounds) keeps the robot walking."""
    from support.hb50_sim import hb50

    spec = next(s for s in hb50().parameters if s.name == name)
    for value in (spec.min, spec.max):
        params = WalkParams.from_model(hb50(), {name: value})
        tr = WalkingSim(params).run(4.0, constant(vx=0.5))
        _no_fall(tr)
        assert _mean_world_velocity(tr, 1.5, 4.0)[0] == pytest.approx(0.5, rel=0.25), (name, value)


def test_walking_parameters_outside_the_gait_clock_ranges_are_refused() -> None:
    from jointbus.messages.errors import LimitError

    with pytest.raises(LimitError, match="duty"):
        WalkParams(duty_factor=0.4)
    with pytest.raises(LimitError, match="period"):
        WalkParams(run_period=3.0)


def test_take_over_starts_at_the_given_velocity_in_limits_and_swings_the_given_pair() -> None:
    """The bridge's fallback takes a trot over: the set-point starts where the lost controller
    walked (clamped to ``max_speed`` / ``max_yaw_rate``), the pair in the air swings first."""
    sim = WalkingSim()
    ctl = sim.controller
    ctl.take_over((0.8, -0.1, 0.3), [False, True, False, True])
    assert ctl.velocity_setpoint == pytest.approx((0.8, -0.1, 0.3))
    assert ctl.gait.peek().stance == (True, False, True, False)
    ctl.take_over((3.0, math.nan, -9.0), [True, False, True, False])
    params = ctl.params
    assert ctl.velocity_setpoint == (params.max_speed, 0.0, -params.max_yaw_rate)
    # from there a zero command ramps down at accel_limit and stops on four feet
    tr = sim.run(2.0, constant())
    _no_fall(tr)
    assert ctl.gait.stopped and ctl.velocity_setpoint == (0.0, 0.0, 0.0)


# --- the plan's compiled core against its Python reference ----------------------------------------

_CONTROLLER = WalkingController(load_robot("hb50"))
_N = _CONTROLLER.n_legs
_finite = st.floats(-1.0, 1.0, allow_nan=False)
_value = st.one_of(_finite, _finite, _finite, st.just(math.nan))
_cycle = st.tuples(
    st.tuples(st.floats(-0.6, 0.6), st.floats(-0.6, 0.6), st.floats(-math.pi, math.pi)),  # rpy
    st.lists(st.tuples(_value, _value, _value), min_size=_N, max_size=_N),  # feet (m)
    st.tuples(_value, _value, _value),  # body velocity (m/s)
    st.tuples(_value, _value, _value),  # body angular velocity (rad/s)
    st.tuples(_finite, _finite),  # odometry x, y (m)
    st.one_of(st.floats(0.1, 0.45), st.just(math.nan)),  # estimated height (m)
    st.lists(st.booleans(), min_size=_N, max_size=_N),  # stance
    st.lists(st.floats(0.0, 1.0), min_size=_N, max_size=_N),  # progress
    st.floats(0.05, 0.5),  # stance time (s)
    st.floats(0.05, 0.3),  # swing time (s)
    st.booleans(),  # stopped
    st.tuples(_finite, _finite, st.floats(-2.0, 2.0), st.floats(0.2, 0.4)),  # set-point
    st.sampled_from([0.001, 0.002, 0.004]),  # dt (s)
)


def _state(cycle: tuple[Any, ...]) -> EstimatedState:
    (roll, pitch, yaw), feet, velocity, omega, (x, y), height = cycle[:6]
    zeros = np.zeros(len(_CONTROLLER.model.actuator_order))
    return EstimatedState(
        legs=("fr", "fl", "rl", "rr"),
        joint_position=zeros,
        joint_velocity=zeros,
        joint_effort=zeros,
        foot_position=np.array(feet, dtype=np.float64),
        foot_velocity=np.zeros((_N, 3)),
        foot_force=np.zeros((_N, 3)),
        contact=np.ones(_N, dtype=np.bool_),
        orientation=Quaternion.from_rpy(roll, pitch, yaw),
        position=np.array((x, y, 0.3)),
        height=height,
        body_linear_velocity=np.array(velocity, dtype=np.float64),
        body_angular_velocity=np.array(omega, dtype=np.float64),
        world_linear_velocity=np.zeros(3),
        world_angular_velocity=np.zeros(3),
    )


def _flat(plan: Plan) -> list[float]:
    rows, feet, targets, velocities, wrench = plan
    out = [v for row in rows for v in row]
    for vectors in (feet, targets, velocities):
        out.extend(v for vec in vectors for v in vec)
    return [*out, *wrench]


def _same(a: Sequence[float], b: Sequence[float]) -> bool:
    """Equal, NaN where NaN; 1e-12 relative where a hypotenuse entered (module docstring of
    leg_kinematics: Python's ``math.hypot`` is its own)."""
    return len(a) == len(b) and all(
        (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-12)
        for x, y in zip(a, b, strict=True)
    )


@pytest.mark.skipif(not ACCELERATED, reason="the compiled core was not built (no C compiler)")
@settings(max_examples=150, deadline=None)
@given(
    st.lists(_cycle, min_size=1, max_size=6),
    st.lists(st.floats(-0.3, 0.3), min_size=7 * _N + 3, max_size=7 * _N + 3),
    st.lists(st.booleans(), min_size=_N + 2, max_size=_N + 2),
)
def test_the_compiled_plan_is_the_python_plan(
    cycles: list[tuple[Any, ...]], memory: list[float], flags: list[bool]
) -> None:
    """Cycle after cycle from the same memory (stance targets, lift-offs, the feet that were in
    stance, the heading target): the same frames, feet, targets, velocities and wrench, and the
    same memory after each cycle — touchdowns, lift-offs and stops included, NaN inputs too."""
    start = array("d", memory)
    start[6 * _N : 7 * _N] = array("d", [1.0 if f else 0.0 for f in flags[:_N]])
    start[7 * _N + 1] = 1.0 if flags[_N] else 0.0
    start[7 * _N + 2] = 1.0 if flags[_N + 1] else 0.0
    compiled, reference = array("d", start), array("d", start)
    ctl = _CONTROLLER
    for cycle in cycles:
        state = _state(cycle)
        stance, progress, t_stance, t_swing, stopped, setpoint, dt = cycle[6:]
        phase = GaitPhase(tuple(stance), tuple(progress), t_stance, t_swing, stopped)
        ctl._memory = compiled
        fast = ctl.plan(state, phase, setpoint, dt)
        ctl._memory = reference
        slow = ctl.plan_python(state, rotation_of(state.orientation), phase, setpoint, dt)
        assert _same(_flat(fast), _flat(slow))
        assert _same(compiled, reference)
        if all(stance) and not any(map(math.isnan, _flat(slow))):
            # no swing leg, no hypotenuse: to the last bit
            assert _flat(fast) == _flat(slow)
            assert compiled == reference
    ctl.reset()


def test_without_the_core_the_plan_is_its_reference() -> None:
    script = (
        "from jointbus.robots.hb50.legged.walking import WalkingController\n"
        "from jointbus.model.yaml_loader import load_robot\n"
        "assert WalkingController(load_robot('hb50'))._core is None\n"
    )
    assert_runs_without_accel(script)
