"""Vec3: validation, immutability, value semantics, arithmetic and numpy interop."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.math import MathError, Vec3

coords = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
vecs = st.builds(Vec3, coords, coords, coords)
scalars = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


def test_ints_are_stored_as_float() -> None:
    v = Vec3(1, 2, 3)
    assert v == Vec3(1.0, 2.0, 3.0)
    assert all(type(c) is float for c in v)


def test_numpy_scalars_are_stored_as_builtin_float() -> None:
    v = Vec3(np.float32(0.5), np.int64(2), np.float64(3.0))  # type: ignore[arg-type]
    assert v == Vec3(0.5, 2.0, 3.0)
    assert all(type(c) is float for c in v)


@pytest.mark.parametrize("component", ["x", "y", "z"])
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_component_is_rejected_and_named(component: str, bad: float) -> None:
    values = {"x": 1.0, "y": 2.0, "z": 3.0, component: bad}
    with pytest.raises(MathError, match=rf"Vec3: {component} = {bad!r}; expected a finite"):
        Vec3(**values)


@pytest.mark.parametrize("bad", ["1.0", None, True, [1.0], 10**400])
def test_non_number_component_is_rejected(bad: object) -> None:
    with pytest.raises(MathError, match="Vec3: y = "):
        Vec3(0.0, bad, 0.0)  # type: ignore[arg-type]


def test_math_error_is_a_value_error_with_fields() -> None:
    with pytest.raises(ValueError) as info:
        Vec3(0.0, 0.0, math.nan)
    assert isinstance(info.value, MathError)
    assert info.value.field == "z"
    assert math.isnan(info.value.value)  # type: ignore[arg-type]


def test_overflowing_arithmetic_raises_instead_of_storing_inf() -> None:
    big = Vec3(1e308, 0.0, 0.0)
    with pytest.raises(MathError, match="Vec3: x = inf"):
        _ = big + big


def test_is_frozen() -> None:
    v = Vec3(1.0, 2.0, 3.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.x = 5.0  # type: ignore[misc]
    assert v == Vec3(1.0, 2.0, 3.0)


def test_value_equality_and_hash() -> None:
    assert Vec3(1.0, 2.0, 3.0) == Vec3(1.0, 2.0, 3.0)
    assert Vec3(1.0, 2.0, 3.0) != Vec3(1.0, 2.0, 3.5)
    assert len({Vec3(1.0, 2.0, 3.0), Vec3(1, 2, 3)}) == 1
    assert Vec3.ZERO == Vec3.zero() == Vec3(0, 0, 0)


def test_iterates_x_y_z() -> None:
    x, y, z = Vec3(1.0, 2.0, 3.0)
    assert (x, y, z) == (1.0, 2.0, 3.0)


def test_multiplying_by_a_non_number_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        _ = Vec3(1.0, 2.0, 3.0) * Vec3(1.0, 2.0, 3.0)  # type: ignore[operator]
    with pytest.raises(TypeError):
        _ = Vec3(1.0, 2.0, 3.0) + 1.0  # type: ignore[operator]


def test_known_products() -> None:
    ex, ey, ez = Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1)
    assert ex.cross(ey) == ez
    assert ey.cross(ez) == ex
    assert Vec3(1, 2, 3).dot(Vec3(4, 5, 6)) == 32.0
    assert Vec3(3, 4, 12).norm() == 13.0
    assert -Vec3(1, -2, 3) == Vec3(-1, 2, -3)
    assert Vec3(1, 2, 3) * 2 == 2 * Vec3(1, 2, 3) == Vec3(2, 4, 6)


@given(vecs, vecs)
def test_add_then_subtract_returns_the_original(a: Vec3, b: Vec3) -> None:
    assert ((a + b) - b).isclose(a, 1e-9)
    assert a + b == b + a
    assert a - b == a + (-b)


@given(vecs, scalars)
def test_scalar_multiplication_commutes(v: Vec3, k: float) -> None:
    assert v * k == k * v
    assert (v * k).to_numpy() == pytest.approx(v.to_numpy() * k)


@given(vecs, vecs)
def test_cross_and_dot_agree_with_numpy(a: Vec3, b: Vec3) -> None:
    np.testing.assert_allclose(
        a.cross(b).to_numpy(), np.cross(a.to_numpy(), b.to_numpy()), rtol=1e-12, atol=1e-9
    )
    assert a.dot(b) == pytest.approx(float(np.dot(a.to_numpy(), b.to_numpy())), abs=1e-9)
    assert a.norm() == pytest.approx(float(np.linalg.norm(a.to_numpy())))
    assert a.cross(b) == -b.cross(a)


@given(vecs)
def test_numpy_round_trip_is_exact(v: Vec3) -> None:
    a = v.to_numpy()
    assert a.shape == (3,)
    assert a.dtype == np.float64
    assert Vec3.from_numpy(a) == v


def test_to_numpy_returns_a_copy() -> None:
    v = Vec3(1.0, 2.0, 3.0)
    a = v.to_numpy()
    a[0] = 99.0
    assert v.x == 1.0


@pytest.mark.parametrize("bad", [[1.0, 2.0], [1.0, 2.0, 3.0, 4.0], [[1.0, 2.0, 3.0]], "abc"])
def test_from_numpy_rejects_wrong_shape(bad: object) -> None:
    with pytest.raises(MathError, match=r"Vec3\.from_numpy"):
        Vec3.from_numpy(bad)  # type: ignore[arg-type]


def test_from_numpy_names_the_non_finite_element() -> None:
    with pytest.raises(MathError, match=r"element 1 \(y\) = nan"):
        Vec3.from_numpy(np.array([0.0, np.nan, 0.0]))
