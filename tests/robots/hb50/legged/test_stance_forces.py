"""Balance forces: they carry the weight, hold attitude, and stay in the friction cone."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.robots.hb50.legged.stance_forces import StanceForceSolver
from jointbus.robots.hb50.legged.swing import raibert_foothold, swing_point

FEET = np.array(
    ((0.17, -0.145, -0.33), (0.17, 0.145, -0.33), (-0.23, 0.145, -0.33), (-0.23, -0.145, -0.33))
)


def test_four_feet_share_the_weight() -> None:
    solver = StanceForceSolver(17.0, (0.3, 0.5, 0.6))
    f = solver.solve(FEET, np.ones(4, bool), solver.wrench(np.zeros(3), np.zeros(3)))
    assert f[:, 2].sum() == pytest.approx(17.0 * 9.81, rel=0.01)
    # moments balance about the centre of mass: the front feet (nearer) carry more
    assert f[0, 2] > f[3, 2]
    assert np.abs(np.cross(FEET, f).sum(axis=0)).max() < 1.0


def test_swing_feet_get_no_force_and_a_diagonal_pair_carries_the_robot() -> None:
    solver = StanceForceSolver(17.0, (0.3, 0.5, 0.6))
    stance = np.array((True, False, True, False))
    f = solver.solve(FEET, stance, solver.wrench(np.zeros(3), np.zeros(3)))
    assert (f[~stance] == 0).all()
    assert f[:, 2].sum() == pytest.approx(17.0 * 9.81, rel=0.05)


@given(st.lists(st.floats(-50, 50), min_size=6, max_size=6), st.integers(1, 15))
def test_forces_respect_the_friction_cone_and_load_bounds(w: list[float], mask: int) -> None:
    solver = StanceForceSolver(17.0, (0.3, 0.5, 0.6), mu=0.5, fz_min=5.0, fz_max=250.0)
    stance = np.array([bool(mask >> i & 1) for i in range(4)])
    f = solver.solve(FEET, stance, solver.wrench(np.array(w[:3]), np.array(w[3:])))
    on = f[stance]
    assert (on[:, 2] >= 5.0 - 1e-9).all() and (on[:, 2] <= 250.0 + 1e-9).all()
    assert (np.hypot(on[:, 0], on[:, 1]) <= 0.5 * on[:, 2] + 1e-9).all()


def test_raibert_foothold_steps_ahead_with_speed_and_into_an_error() -> None:
    nominal = (0.17, -0.145, 0.0)
    kw = {"stance_time": 0.2, "t_ahead": 0.0, "gain": 0.05, "max_reach": 0.15}
    at_rest = raibert_foothold(nominal, (0, 0, 0), (0, 0, 0), 0.0, **kw)
    assert at_rest == pytest.approx(nominal[:2])
    moving = raibert_foothold(nominal, (0.5, 0, 0), (0.5, 0, 0), 0.0, **kw)
    assert moving[0] == pytest.approx(0.17 + 0.5 * 0.1)
    too_fast = raibert_foothold(nominal, (0.7, 0, 0), (0.5, 0, 0), 0.0, **kw)
    assert too_fast[0] > moving[0]
    far = raibert_foothold(nominal, (9.0, 0, 0), (0, 0, 0), 0.0, **kw)
    assert far[0] == pytest.approx(0.17 + 0.15)  # reach limit


def test_swing_starts_and_ends_at_rest_and_clears_the_ground() -> None:
    start, end = (0.0, 0.0, -0.3), (0.1, 0.02, -0.3)
    p0, v0 = swing_point(start, end, 0.08, 0.0, 0.16)
    p1, v1 = swing_point(start, end, 0.08, 1.0, 0.16)
    pm, _ = swing_point(start, end, 0.08, 0.5, 0.16)
    assert p0 == pytest.approx(start) and p1 == pytest.approx(end)
    assert v0 == pytest.approx((0, 0, 0)) and v1 == pytest.approx((0, 0, 0))
    assert pm[2] == pytest.approx(-0.3 + 0.08)


# ---- the walking controller's path: the 6 × 6 dual system in plain floats ----------------------
# Reference: solve (the 3k × 3k primal system by numpy). Random feet around the hb50's stance
# footprint, any stance set, wrenches up to what the walking controller asks (|a| ≤ 5 m/s²,
# |α| ≤ 100 rad/s²). Stated tolerance: 1e-6 N (forces are tens of newtons; the two ways round
# differently, both systems have a condition number of ≈ 1e5 for a trot pair).
feet_strategy = st.lists(
    st.tuples(st.floats(-0.15, 0.15), st.floats(-0.1, 0.1), st.floats(-0.08, 0.08)),
    min_size=4,
    max_size=4,
).map(lambda d: np.array(FEET) + np.array(d))


@given(
    feet_strategy,
    st.integers(0, 15),
    st.lists(st.floats(-5, 5), min_size=3, max_size=3),
    st.lists(st.floats(-100, 100), min_size=3, max_size=3),
    st.floats(0.2, 1.0),
)
def test_the_dual_solve_equals_the_reference_on_random_stances(
    feet: np.ndarray, mask: int, accel: list[float], alpha: list[float], mu: float
) -> None:
    solver = StanceForceSolver(17.1, (0.3, 0.5, 0.6), mu=mu)
    stance = [bool(mask >> i & 1) for i in range(4)]
    reference = solver.solve(
        feet, np.array(stance), solver.wrench(np.array(accel), np.array(alpha))
    )
    fast = solver.solve_dual(feet.tolist(), stance, solver.wrench_of(accel, alpha))
    np.testing.assert_allclose(np.array(fast), reference, rtol=0, atol=1e-6)
    assert solver.wrench_of(accel, alpha) == tuple(
        solver.wrench(np.array(accel), np.array(alpha)).tolist()
    )


def test_without_stance_feet_the_dual_solve_gives_no_force() -> None:
    solver = StanceForceSolver(17.0, (0.3, 0.5, 0.6))
    w = solver.wrench_of((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    assert solver.solve_dual(FEET.tolist(), [False] * 4, w) == [(0.0, 0.0, 0.0)] * 4
