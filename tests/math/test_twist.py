"""Twist and Twist2D: validation, value semantics, arithmetic, lifting and numpy interop."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.math import MathError, Twist, Twist2D, Vec3

coords = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
vecs = st.builds(Vec3, coords, coords, coords)
twists = st.builds(Twist, vecs, vecs)
twists2d = st.builds(Twist2D, coords, coords, coords)


def test_numpy_order_is_linear_then_angular() -> None:
    t = Twist(Vec3(1, 2, 3), Vec3(4, 5, 6))
    np.testing.assert_array_equal(t.to_numpy(), [1, 2, 3, 4, 5, 6])
    np.testing.assert_array_equal(Twist2D(1, 2, 3).to_numpy(), [1, 2, 3])


@given(twists)
def test_numpy_round_trip(t: Twist) -> None:
    a = t.to_numpy()
    assert a.shape == (6,)
    assert a.dtype == np.float64
    assert Twist.from_numpy(a) == t


@given(twists2d)
def test_numpy_round_trip_2d(t: Twist2D) -> None:
    a = t.to_numpy()
    assert a.shape == (3,)
    assert Twist2D.from_numpy(a) == t


def test_from_numpy_rejects_wrong_shape_and_names_bad_element() -> None:
    with pytest.raises(MathError, match="shape"):
        Twist.from_numpy(np.zeros(3))
    with pytest.raises(MathError, match=r"element 5 \(angular\.z\) = nan"):
        Twist.from_numpy([0, 0, 0, 0, 0, math.nan])
    with pytest.raises(MathError, match=r"element 2 \(omega\) = inf"):
        Twist2D.from_numpy([0, 0, math.inf])


def test_fields_are_validated() -> None:
    with pytest.raises(MathError, match="Twist: angular = "):
        Twist(Vec3.ZERO, (0.0, 0.0, 1.0))  # type: ignore[arg-type]
    with pytest.raises(MathError, match="Twist2D: omega = nan"):
        Twist2D(0.0, 0.0, math.nan)
    assert type(Twist2D(1, 2, 3).vx) is float


def test_is_frozen_and_compares_by_value() -> None:
    t = Twist(Vec3(1, 0, 0), Vec3(0, 0, 1))
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.linear = Vec3.ZERO  # type: ignore[misc]
    t2 = Twist2D(1.0, 0.0, 0.5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        t2.omega = 0.0  # type: ignore[misc]
    assert t == Twist(Vec3(1, 0, 0), Vec3(0, 0, 1))
    assert t2 == Twist2D(1, 0, 0.5)
    assert t2 != Twist2D(1, 0, 0.25)


def test_zero() -> None:
    assert Twist.zero() == Twist(Vec3(0, 0, 0), Vec3(0, 0, 0))
    assert Twist2D.zero() == Twist2D(0, 0, 0)


@given(twists, twists, st.floats(-10, 10))
def test_arithmetic_is_componentwise(a: Twist, b: Twist, k: float) -> None:
    np.testing.assert_allclose((a + b).to_numpy(), a.to_numpy() + b.to_numpy())
    np.testing.assert_allclose((a - b).to_numpy(), a.to_numpy() - b.to_numpy())
    assert a * k == k * a
    np.testing.assert_allclose((a * k).to_numpy(), a.to_numpy() * k)
    assert a + Twist.zero() == a
    assert -a + a == Twist.zero()


@given(twists2d, twists2d, st.floats(-10, 10))
def test_arithmetic_is_componentwise_2d(a: Twist2D, b: Twist2D, k: float) -> None:
    np.testing.assert_allclose((a + b).to_numpy(), a.to_numpy() + b.to_numpy())
    np.testing.assert_allclose((a - b).to_numpy(), a.to_numpy() - b.to_numpy())
    assert a * k == k * a
    np.testing.assert_allclose((a * k).to_numpy(), a.to_numpy() * k)
    assert a + Twist2D.zero() == a


@given(twists2d)
def test_lift_to_3d(t: Twist2D) -> None:
    assert t.to_twist() == Twist(Vec3(t.vx, t.vy, 0.0), Vec3(0.0, 0.0, t.omega))


def test_mixing_types_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        _ = Twist.zero() + Twist2D.zero()  # type: ignore[operator]
    with pytest.raises(TypeError):
        _ = Twist2D.zero() * Twist2D.zero()  # type: ignore[operator]
