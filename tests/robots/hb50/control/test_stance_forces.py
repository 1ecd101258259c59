"""Balance forces: they carry the weight, hold attitude, and stay in the friction cone."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.robots.hb50.control.stance_forces import StanceForceSolver
from jointbus.robots.hb50.control.swing import raibert_foothold, swing_point

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
