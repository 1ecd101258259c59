"""The walking estimator refines an estimate and carries the rest of it through; its compiled
core (``_estimate_accel``) equals the pure-Python reference, ``update_python``, bit for bit.

(Its accuracy on MuJoCo walks is judged in ``test_walking.py``: body-velocity error against the
simulator's ground truth.) Stated tolerance for the core: none — the same formulas in the same
order, compiled without fused multiply-add, so every result and the filter state compare ``==``
(NaN equal to NaN, and the sign of a zero the same). ``JOINTBUS_NO_ACCEL=1`` runs the reference.
"""

from __future__ import annotations

import dataclasses
import math
import random
from array import array
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from jointbus.math import Quaternion
from jointbus.robots.hb50.legged import walking_estimator as we
from jointbus.robots.hb50.legged.state_estimator import EstimatedState
from jointbus.robots.hb50.legged.walking_estimator import WalkingEstimator, WalkingEstimatorConfig
from support.accel import assert_runs_without_accel

#: The fields the walking estimator computes itself; every other one is the input's.
REFINED = {"contact", "position", "height", "body_linear_velocity", "world_linear_velocity"}
FEET = np.array(
    ((0.17, -0.145, -0.33), (0.17, 0.145, -0.33), (-0.23, 0.145, -0.33), (-0.23, -0.145, -0.33))
)


def standing() -> EstimatedState:
    return EstimatedState(
        legs=("fr", "fl", "rl", "rr"),
        joint_position=np.arange(12.0),
        joint_velocity=np.zeros(12),
        joint_effort=np.ones(12),
        foot_position=FEET.copy(),
        foot_velocity=np.zeros((4, 3)),
        foot_force=np.tile((0.0, 0.0, 42.0), (4, 1)),
        contact=np.ones(4, dtype=bool),
        orientation=Quaternion.identity(),
        position=np.array((1.0, 2.0, 0.3)),
        height=0.3,
        body_linear_velocity=np.zeros(3),
        body_angular_velocity=np.zeros(3),
        world_linear_velocity=np.zeros(3),
        world_angular_velocity=np.zeros(3),
        linear_acceleration=np.array((0.0, 0.0, 9.81)),
    )


def test_every_field_it_does_not_refine_is_the_input_s() -> None:
    state = standing()
    out = WalkingEstimator().update(
        state, state.linear_acceleration, (True, False, True, False), 0.002, np.full(4, 0.021)
    )
    for f in dataclasses.fields(EstimatedState):
        if f.name not in REFINED:
            assert getattr(out, f.name) is getattr(state, f.name), f.name


def test_contacts_follow_the_schedule_confirmed_by_force_and_height_the_stance_feet() -> None:
    state = standing()
    out = WalkingEstimator().update(
        state, state.linear_acceleration, (True, False, True, False), 0.002, np.full(4, 0.021)
    )
    assert out.contact.tolist() == [True, False, True, False]
    assert out.height == np.float64(0.33 + 0.021)
    np.testing.assert_allclose(out.position, (1.0, 2.0, 0.351), atol=1e-12)
    # at rest, level, IMU reading gravity: no velocity appears
    np.testing.assert_allclose(out.world_linear_velocity, 0.0, atol=1e-12)
    np.testing.assert_allclose(out.body_linear_velocity, 0.0, atol=1e-12)


# ---- the compiled core against the reference ----------------------------------------------------

needs_core = pytest.mark.skipif(
    not we.ACCELERATED,
    reason="_estimate_accel not built (no C compiler when installed) or JOINTBUS_NO_ACCEL set",
)


def same(a: object, b: object) -> bool:
    """Equal: floats by ``==`` with NaN equal to NaN and the same sign of zero; sequences item
    by item; anything else by ``==``."""
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    return a == b


CONTACT_FORCE = 5.0
#: around the default contact threshold (N): exactly on it, an ulp either side
NEAR = [CONTACT_FORCE, math.nextafter(CONTACT_FORCE, 0.0), math.nextafter(CONTACT_FORCE, 99.0)]


def generic(lo: float, hi: float) -> st.SearchStrategy[float]:
    """Floats spread over [lo, hi] with full mantissas, drawn from a seeded generator: hypothesis's
    own floats (and integers) favour round and boundary values, whose products and sums round
    exactly and would hide a changed order of operations."""
    return st.integers(0, 2**32 - 1).map(lambda seed: random.Random(seed).uniform(lo, hi))


def mostly(common: st.SearchStrategy[Any], rare: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``common`` four times in five, ``rare`` (NaN, ±inf, extreme values) the fifth."""
    return st.one_of(common, common, common, common, rare)


def vec3(lo: float, hi: float, z_lo: float | None = None, z_hi: float | None = None) -> Any:
    z = generic(lo if z_lo is None else z_lo, hi if z_hi is None else z_hi)
    return st.tuples(generic(lo, hi), generic(lo, hi), z)


#: any float64, NaN, ±inf, ±0, subnormals and huge values included
anything3 = st.tuples(st.floats(), st.floats(), st.floats())
quaternion = st.one_of(
    st.just(Quaternion.identity()),  # the vertical force is then fz itself: the threshold exactly
    st.builds(Quaternion.from_rpy, generic(-0.3, 0.3), generic(-0.3, 0.3), generic(-4.0, 4.0)),
    st.tuples(generic(-1, 1), generic(-1, 1), generic(-1, 1), generic(-1, 1))
    .filter(lambda q: math.hypot(*q) > 0.1)
    .map(lambda q: Quaternion(*q)),
)
force_row = mostly(
    vec3(-60, 60, -20, 80),
    st.one_of(
        st.tuples(st.just(0.0), st.just(0.0), st.sampled_from(NEAR)),
        st.just((math.nan, math.nan, math.nan)),  # a singular leg: the schedule's word
        anything3,
    ),
)
position_row = mostly(
    vec3(-0.4, 0.4, -0.45, -0.1),
    st.one_of(st.sampled_from([(math.nan, 0.0, -0.3), (0.2, math.inf, -0.3)]), anything3),
)
velocity_row = mostly(vec3(-2, 2), st.one_of(st.sampled_from([(math.nan, 0.0, 0.0)]), anything3))
acceleration = mostly(
    vec3(-40, 40, -20, 40),
    st.one_of(
        st.sampled_from([(math.nan, 0.0, 9.81), (0.0, math.inf, 9.81), (0.0, 0.0, -math.inf)]),
        anything3,
    ),
)
angular = mostly(vec3(-6, 6), st.one_of(st.just((0.0, math.nan, 0.0)), anything3))
#: how an (n, 3) or (n,) float64 input arrives: C-contiguous, Fortran-ordered, a strided view
layout = st.sampled_from(["c", "f", "strided"])


def laid_out(rows: Any, how: str) -> np.ndarray:
    a = np.array(rows, dtype=np.float64)
    if how == "f":
        return np.asfortranarray(a)
    if how == "strided":
        wide = np.zeros((*a.shape[:-1], 2 * a.shape[-1]))
        wide[..., ::2] = a
        return wide[..., ::2]
    return a


step = st.fixed_dictionaries(
    {
        "orientation": quaternion,
        "force": st.lists(force_row, min_size=4, max_size=4),
        "position": st.lists(position_row, min_size=4, max_size=4),
        "velocity": st.lists(velocity_row, min_size=4, max_size=4),
        "radius": st.lists(generic(0.0, 0.03), min_size=4, max_size=4),
        "stance": st.lists(st.booleans(), min_size=4, max_size=4),
        "stance_as_array": st.booleans(),
        "acceleration": acceleration,
        "acceleration_as": st.sampled_from(["array", "tuple", "list"]),
        "angular": angular,
        "dt": st.one_of(st.sampled_from([0.002, 0.001, 0.0005]), generic(1e-5, 0.05)),
        "height": st.sampled_from([0.3, math.nan]),
        "layout": layout,
    }
)
configs = st.sampled_from(
    [
        WalkingEstimatorConfig(),
        WalkingEstimatorConfig(contact_force=20.0, accel_noise=2.0, odometry_noise=0.08),
        WalkingEstimatorConfig(contact_force=5, accel_noise=1, odometry_noise=3),  # ints
        # squares that underflow to 0: a variance of 0 + 0 — the reference's ZeroDivisionError
        WalkingEstimatorConfig(accel_noise=1e-170, odometry_noise=1e-170),
    ]
)
start = st.fixed_dictionaries(
    {
        "velocity": vec3(-1, 1, -0.5, 0.5),
        "position": vec3(-5, 5, 0, 0.5),
        "height": st.sampled_from([0.3, math.nan]),
        # None: reset's variances; else every variance this value
        "variance": st.none() | st.sampled_from([0.0, 1e-3, 1.0, math.inf]),
    }
)


def state_of(d: dict[str, Any]) -> EstimatedState:
    how = d["layout"]
    return dataclasses.replace(
        standing(),
        orientation=d["orientation"],
        foot_force=laid_out(d["force"], how),
        foot_position=laid_out(d["position"], how),
        foot_velocity=laid_out(d["velocity"], how),
        body_angular_velocity=laid_out(d["angular"], how),
        height=d["height"],
    )


def call(estimator: WalkingEstimator, method: str, d: dict[str, Any]) -> object:
    """``estimator.<method>`` on step ``d``: the refined fields and the filter state, or the
    exception it raised and the filter state."""
    state = state_of(d)
    a = d["acceleration"]
    acc: Any = {"array": np.array(a), "tuple": tuple(a), "list": list(a)}[d["acceleration_as"]]
    stance: Any = np.array(d["stance"]) if d["stance_as_array"] else tuple(d["stance"])
    radius = laid_out(d["radius"], d["layout"])
    try:
        out = getattr(estimator, method)(state, acc, stance, d["dt"], radius)
    except ZeroDivisionError as exc:
        return (type(exc), str(exc), list(estimator._state))
    for f in dataclasses.fields(EstimatedState):
        if f.name not in REFINED:
            assert getattr(out, f.name) is getattr(state, f.name), f.name
    assert out.contact.dtype == np.bool_
    return (
        out.contact.tolist(),
        out.position.tolist(),
        out.height,
        out.body_linear_velocity.tolist(),
        out.world_linear_velocity.tolist(),
        list(estimator._state),
    )


def no_fallback(*args: object) -> EstimatedState:
    raise AssertionError("the compiled core left these inputs to the reference")


#: standing level on four feet, one on the threshold, one an ulp below, one above, one NaN
LEVEL_STEP = {
    "orientation": Quaternion.identity(),
    "force": [(0.0, 0.0, f) for f in (*NEAR, math.nan)],
    "position": FEET.tolist(),
    "velocity": [(0.1, 0.0, 0.0)] * 4,
    "radius": [0.021] * 4,
    "stance": [True] * 4,
    "stance_as_array": False,
    "acceleration": (0.0, 0.0, 9.81),
    "acceleration_as": "array",
    "angular": (0.0, 0.0, 0.0),
    "dt": 0.002,
    "height": 0.3,
    "layout": "c",
}
LEVEL_START = {"velocity": (0.1, 0.0, 0.0), "position": (1.0, 2.0, 0.3), "height": 0.3}


@needs_core
@given(configs, start, st.lists(step, min_size=1, max_size=6))
@example(WalkingEstimatorConfig(), {**LEVEL_START, "variance": None}, [LEVEL_STEP] * 3)
@example(  # variances 0 + 0: ZeroDivisionError after the prediction, in both
    WalkingEstimatorConfig(accel_noise=1e-170, odometry_noise=1e-170),
    {**LEVEL_START, "variance": None},
    [LEVEL_STEP],
)
def test_the_compiled_core_equals_the_reference(
    config: WalkingEstimatorConfig, init: dict[str, Any], steps: list[dict[str, Any]]
) -> None:
    first = dataclasses.replace(
        standing(),
        world_linear_velocity=np.array(init["velocity"]),
        position=np.array(init["position"]),
        height=init["height"],
    )
    core, reference = WalkingEstimator(config), WalkingEstimator(config)
    for estimator in (core, reference):
        estimator.reset(first)
        if init["variance"] is not None:
            estimator._state[3:6] = array("d", [init["variance"]] * 3)
    core.update_python = no_fallback  # type: ignore[method-assign, assignment]
    for d in steps:
        got, want = call(core, "update", d), call(reference, "update_python", d)
        assert same(got, want), (got, want)


@needs_core
def test_inputs_the_core_does_not_take_run_the_reference() -> None:
    state = standing()
    acc = state.linear_acceleration
    stance = (True, False, True, True)
    radius = np.full(4, 0.021)
    cases: list[tuple[EstimatedState, Any, Any, float, Any]] = [
        (
            dataclasses.replace(state, foot_force=state.foot_force.astype(np.float32)),
            acc,
            stance,
            0.002,
            radius,
        ),
        (state, acc.astype(np.float32), stance, 0.002, radius),
        (state, acc, stance, np.float64(0.002), radius),
        (state, acc, stance, 0.002, np.full(5, 0.021)),  # the reference indexes what it needs
        (state, (0, 0, 9.81), stance, 0.002, radius),  # a tuple with an int
    ]
    fell_back: list[int] = []
    for n, args in enumerate(cases):
        core, reference = WalkingEstimator(), WalkingEstimator()

        def spy(*a: Any, core: WalkingEstimator = core, n: int = n) -> EstimatedState:
            fell_back.append(n)
            return WalkingEstimator.update_python(core, *a)

        core.update_python = spy  # type: ignore[method-assign, assignment]
        for _ in range(3):
            got, want = core.update(*args), reference.update_python(*args)
            assert same(got.contact.tolist(), want.contact.tolist())
            assert same(got.position.tolist(), want.position.tolist())
            assert same(got.body_linear_velocity.tolist(), want.body_linear_velocity.tolist())
            assert same(list(core._state), list(reference._state))
        assert fell_back.count(n) == 3, n


def test_disabling_the_core_runs_the_reference() -> None:
    script = (
        "import sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "import numpy as np\n"
        "from jointbus.robots.hb50.legged import walking_estimator\n"
        "from test_walking_estimator import standing\n"
        "assert not walking_estimator.ACCELERATED and walking_estimator._CORE is None\n"
        "s = standing()\n"
        "args = (s, s.linear_acceleration, (True,) * 4, 0.002, np.full(4, 0.021))\n"
        "a, b = walking_estimator.WalkingEstimator(), walking_estimator.WalkingEstimator()\n"
        "assert a.update(*args).height == b.update_python(*args).height\n"
        "assert a._state == b._state\n"
    )
    assert_runs_without_accel(script)
