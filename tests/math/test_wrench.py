"""Wrench and Wrench2D: validation, value semantics, arithmetic, lifting and numpy interop."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.math import MathError, Vec3, Wrench, Wrench2D

coords = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
vecs = st.builds(Vec3, coords, coords, coords)
wrenchs = st.builds(Wrench, vecs, vecs)
wrenchs2d = st.builds(Wrench2D, coords, coords, coords)


def test_numpy_order_is_force_then_torque() -> None:
    t = Wrench(Vec3(1, 2, 3), Vec3(4, 5, 6))
    np.testing.assert_array_equal(t.to_numpy(), [1, 2, 3, 4, 5, 6])
    np.testing.assert_array_equal(Wrench2D(1, 2, 3).to_numpy(), [1, 2, 3])


@given(wrenchs)
def test_numpy_round_trip(t: Wrench) -> None:
    a = t.to_numpy()
    assert a.shape == (6,)
    assert a.dtype == np.float64
    assert Wrench.from_numpy(a) == t


@given(wrenchs2d)
def test_numpy_round_trip_2d(t: Wrench2D) -> None:
    a = t.to_numpy()
    assert a.shape == (3,)
    assert Wrench2D.from_numpy(a) == t


def test_from_numpy_rejects_wrong_shape_and_names_bad_element() -> None:
    with pytest.raises(MathError, match="shape"):
        Wrench.from_numpy(np.zeros(3))
    with pytest.raises(MathError, match=r"element 5 \(torque\.z\) = nan"):
        Wrench.from_numpy([0, 0, 0, 0, 0, math.nan])
    with pytest.raises(MathError, match=r"element 2 \(tau\) = inf"):
        Wrench2D.from_numpy([0, 0, math.inf])


def test_fields_are_validated() -> None:
    with pytest.raises(MathError, match="Wrench: torque = "):
        Wrench(Vec3.ZERO, (0.0, 0.0, 1.0))  # type: ignore[arg-type]
    with pytest.raises(MathError, match="Wrench2D: tau = nan"):
        Wrench2D(0.0, 0.0, math.nan)
    assert type(Wrench2D(1, 2, 3).fx) is float


def test_is_frozen_and_compares_by_value() -> None:
    t = Wrench(Vec3(1, 0, 0), Vec3(0, 0, 1))
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.force = Vec3.ZERO  # type: ignore[misc]
    t2 = Wrench2D(1.0, 0.0, 0.5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        t2.tau = 0.0  # type: ignore[misc]
    assert t == Wrench(Vec3(1, 0, 0), Vec3(0, 0, 1))
    assert t2 == Wrench2D(1, 0, 0.5)
    assert t2 != Wrench2D(1, 0, 0.25)


def test_zero() -> None:
    assert Wrench.zero() == Wrench(Vec3(0, 0, 0), Vec3(0, 0, 0))
    assert Wrench2D.zero() == Wrench2D(0, 0, 0)


@given(wrenchs, wrenchs, st.floats(-10, 10))
def test_arithmetic_is_componentwise(a: Wrench, b: Wrench, k: float) -> None:
    np.testing.assert_allclose((a + b).to_numpy(), a.to_numpy() + b.to_numpy())
    np.testing.assert_allclose((a - b).to_numpy(), a.to_numpy() - b.to_numpy())
    assert a * k == k * a
    np.testing.assert_allclose((a * k).to_numpy(), a.to_numpy() * k)
    assert a + Wrench.zero() == a
    assert -a + a == Wrench.zero()


@given(wrenchs2d, wrenchs2d, st.floats(-10, 10))
def test_arithmetic_is_componentwise_2d(a: Wrench2D, b: Wrench2D, k: float) -> None:
    np.testing.assert_allclose((a + b).to_numpy(), a.to_numpy() + b.to_numpy())
    np.testing.assert_allclose((a - b).to_numpy(), a.to_numpy() - b.to_numpy())
    assert a * k == k * a
    np.testing.assert_allclose((a * k).to_numpy(), a.to_numpy() * k)
    assert a + Wrench2D.zero() == a


@given(wrenchs2d)
def test_lift_to_3d(t: Wrench2D) -> None:
    assert t.to_wrench() == Wrench(Vec3(t.fx, t.fy, 0.0), Vec3(0.0, 0.0, t.tau))


def test_mixing_types_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        _ = Wrench.zero() + Wrench2D.zero()  # type: ignore[operator]
    with pytest.raises(TypeError):
        _ = Wrench2D.zero() * Wrench2D.zero()  # type: ignore[operator]
