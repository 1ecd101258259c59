"""The compiled core of the control step's per-leg arithmetic (``_leg_accel``) against its
pure-Python reference methods, on random leg states.

Stated tolerance: the core evaluates the same formulas in the same order, compiled without fused
multiply-add, so it agrees with the reference to the last bit except where a hypotenuse enters
(Python's ``math.hypot`` is its own correctly rounded algorithm, the C library's may differ by an
ulp): the IK's angles and the stance forces are held to 1e-12 (relative, and 1e-12 absolute),
everything else to exact equality. ``JOINTBUS_NO_ACCEL=1`` runs the reference.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from jointbus.robots.hb50.legged import leg_kinematics as lk
from jointbus.robots.hb50.legged.leg_kinematics import LegKinematics
from jointbus.robots.hb50.legged.stance_forces import StanceForceSolver
from support.accel import assert_runs_without_accel
from support.hb50_sim import hb50

pytestmark = pytest.mark.skipif(not lk.ACCELERATED, reason="_leg_accel not built or disabled")

LEGS = LegKinematics(hb50())
HOME = list(hb50().pose("home").values())
REL = 1e-12

#: Joint values a driver can report: within and beyond the legs' range, NaN, ±inf.
joint = st.one_of(
    st.floats(-3.5, 3.5),
    st.sampled_from([math.nan, math.inf, -math.inf, 0.0, -0.0, math.pi, -math.pi]),
)
joints = st.lists(joint, min_size=12, max_size=12)
component = st.one_of(st.floats(-500, 500), st.sampled_from([math.nan, 0.0, 1e-300]))
vec = st.tuples(component, component, component)
four_vectors = st.lists(vec, min_size=4, max_size=4)


def same(a: object, b: object) -> bool:
    """Equal, NaN equal to NaN (nested lists and tuples of floats, or None)."""
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


def close(a: object, b: object) -> bool:
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=REL, abs_tol=REL)
    return a == b


@given(joints, st.none() | joints, st.none() | joints, st.sampled_from([1e-5, 0.0, 1e-3]))
@example(HOME, HOME, [1.0] * 12, 1e-5)
@example([0.0] * 12, None, [1.0] * 12, 1e-5)  # straight legs: singular, NaN forces
def test_evaluate_equals_the_reference(
    q: list[float], qd: list[float] | None, tau: list[float] | None, singular: float
) -> None:
    assert same(*outcomes(LEGS.evaluate_rows, LEGS.evaluate_rows_python, q, qd, tau, singular))


def outcomes(
    core: Callable[..., object], reference: Callable[..., object], *args: object
) -> tuple[object, object]:
    """What each returns, or the type and text of what it raises (an infinite joint angle: the
    sine's ValueError; a zero determinant with ``singular_det = 0``: ZeroDivisionError)."""
    results = []
    for fn in (core, reference):
        try:
            results.append(fn(*args[:-1], singular_det=args[-1]) if len(args) == 4 else fn(*args))
        except (ValueError, ZeroDivisionError) as exc:
            results.append((type(exc), str(exc)))
    return results[0], results[1]


def test_evaluate_takes_arrays_as_the_reference_does() -> None:
    q = np.array(HOME)
    core = LEGS.evaluate_rows(q, q, q)
    assert same(core, LEGS.evaluate_rows_python(q, q, q))
    assert all(type(v) is float for row in core[0] for v in row)


@given(joints, four_vectors, four_vectors)
@example([0.0] * 12, [(0.1, 0.0, 0.0)] * 4, [(0.0, 0.0, 0.0)] * 4)  # singular: no rates
def test_rates_and_torques_equal_the_reference(
    q: list[float], velocities: list[tuple[float, ...]], forces: list[tuple[float, ...]]
) -> None:
    assert same(
        *outcomes(LEGS.rates_and_torques, LEGS.rates_and_torques_python, q, velocities, forces)
    )


#: Foot targets around each hip: reachable, out of reach, near the limits, not finite.
target = st.tuples(
    st.floats(-0.45, 0.45), st.floats(-0.45, 0.45), st.floats(-0.5, 0.2)
) | st.tuples(component, component, component)


@given(st.lists(target, min_size=4, max_size=4))
@example([LEGS.positions_of(HOME)[k].tolist() for k in range(4)])
def test_the_ik_equals_the_reference(targets: list[tuple[float, float, float]]) -> None:
    core = LEGS.solve_feet(targets)
    reference = LEGS.solve_feet_python(targets)
    assert [a is None for a in core] == [b is None for b in reference]
    assert close(core, reference)


def test_the_ik_returns_the_standing_pose_it_came_from() -> None:
    feet = [tuple(p) for p in LEGS.positions_of(HOME).tolist()]
    solved = LEGS.solve_feet(feet)
    assert None not in solved
    np.testing.assert_allclose([a for leg in solved for a in leg], HOME, atol=1e-12)


FEET = np.array(
    ((0.17, -0.145, -0.33), (0.17, 0.145, -0.33), (-0.23, 0.145, -0.33), (-0.23, -0.145, -0.33))
)
offsets = st.lists(
    st.tuples(st.floats(-0.2, 0.2), st.floats(-0.2, 0.2), st.floats(-0.1, 0.1)),
    min_size=4,
    max_size=4,
)


@given(
    offsets,
    st.lists(st.booleans(), min_size=4, max_size=4),
    st.lists(st.floats(-2000, 2000), min_size=6, max_size=6),
    st.floats(0.1, 1.0),
)
def test_the_stance_forces_equal_the_reference(
    offsets: list[tuple[float, float, float]], stance: list[bool], wrench: list[float], mu: float
) -> None:
    solver = StanceForceSolver(17.1, (0.3, 0.5, 0.6), mu=mu)
    feet = (FEET + np.array(offsets)).tolist()
    core = solver.solve_dual(feet, stance, wrench)
    assert close(core, solver.solve_dual_python(feet, stance, wrench))


def test_bad_input_is_refused_with_the_reference_errors() -> None:
    for method in (LEGS.evaluate_rows, LEGS.evaluate_rows_python):
        with pytest.raises(IndexError):
            method([0.0] * 5)
        with pytest.raises(TypeError):
            method(["a"] * 12)
    three, four = [(0.0, 0.0, 0.0)] * 3, [(0.0, 0.0, 0.0)] * 4
    for method in (LEGS.rates_and_torques, LEGS.rates_and_torques_python):
        with pytest.raises(ValueError):
            method(HOME, three, four)
    row = (0.0, 0.0, -0.3)
    for method in (LEGS.solve_feet, LEGS.solve_feet_python):
        with pytest.raises(ValueError):
            method([row, (0.0, 0.0), row, row])


def test_disabling_the_core_runs_the_reference() -> None:
    script = (
        "from jointbus.robots.hb50.legged import leg_kinematics, stance_forces\n"
        "from jointbus.model.yaml_loader import load_robot\n"
        "assert not leg_kinematics.ACCELERATED and stance_forces._CORE is None\n"
        "legs = leg_kinematics.LegKinematics(load_robot('hb50'))\n"
        "assert legs._core is None\n"
        "q = list(load_robot('hb50').pose('home').values())\n"
        "assert legs.evaluate_rows(q) == legs.evaluate_rows_python(q)\n"
    )
    assert_runs_without_accel(script)


rotations = st.tuples(st.floats(-math.pi, math.pi), st.floats(-0.5, 0.5), st.floats(-0.5, 0.5))


def _rows(yaw: float, pitch: float, roll: float) -> list[list[float]]:
    from jointbus.math import Quaternion

    return Quaternion.from_rpy(roll, pitch, yaw).to_matrix().tolist()


@given(
    joints,
    rotations,
    st.lists(target, min_size=4, max_size=4),
    four_vectors,
    four_vectors,
    st.lists(st.booleans(), min_size=4, max_size=4),
    st.sampled_from([10.0, math.inf, 0.5]),
)
@example(HOME, (0.0, 0.0, 0.0), [(0.2, -0.1, -0.3)] * 4, [(0.0, 0.0, 0.0)] * 4,
         [(0.0, 0.0, 40.0)] * 4, [True, False, True, False], 22.0)
@example([0.0] * 12, (0.0, 0.0, 0.0), [(0.0, 0.0, 0.0)] * 4, [(0.1, 0.0, 0.0)] * 4,
         [(math.nan, 0.0, 1.0)] * 4, [True] * 4, 22.0)  # singular legs, a NaN force
def test_joint_targets_equal_the_reference(
    q: list[float],
    rpy: tuple[float, float, float],
    targets: list[tuple[float, float, float]],
    velocities: list[tuple[float, ...]],
    forces: list[tuple[float, ...]],
    stance: list[bool],
    limit: float,
) -> None:
    kwargs = {
        "foot_targets": targets,
        "foot_velocities": velocities,
        "foot_forces": forces,
        "stance": stance,
        "gains": (20.0, 1.5, 60.0, 2.0),
        "limits": [(limit, 2.0 * limit)] * 12,
    }
    rows = _rows(*rpy)

    def run(method: Callable[..., object]) -> object:
        try:
            return method(q, rows, **kwargs)
        except ValueError as exc:  # an infinite joint angle: the sine's error, both ways
            return (type(exc), str(exc))

    core, reference = run(LEGS.joint_targets), run(LEGS.joint_targets_python)
    assert close(core, reference)
