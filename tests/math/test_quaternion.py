"""Quaternion: normalisation, rejection of bad values, rotation algebra, RPY, matrices."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from jointbus.math import MathError, Quaternion, Vec3

unit = st.floats(-1.0, 1.0, allow_nan=False)
quats = st.tuples(unit, unit, unit, unit).filter(lambda t: math.hypot(*t) > 0.1).map(
    lambda t: Quaternion(*t)
)
coords = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
vecs = st.builds(Vec3, coords, coords, coords)
# Open intervals: ±π are the same yaw, so the round trip may legitimately return the other one.
angle = st.floats(-math.pi + 1e-6, math.pi - 1e-6)
pitch_away_from_lock = st.floats(-math.pi / 2 + 0.05, math.pi / 2 - 0.05)


def rx(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def ry(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def rz(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def test_construction_normalises() -> None:
    assert Quaternion(2, 0, 0, 0) == Quaternion.identity()
    q = Quaternion(0.0, 3.0, 0.0, 4.0)
    assert q == Quaternion(0.0, 0.6, 0.0, 0.8)


def test_huge_components_are_normalised_not_overflowed() -> None:
    q = Quaternion(1.7e308, 1.7e308, 0.0, 0.0)
    assert q.isclose(Quaternion(1.0, 1.0, 0.0, 0.0), 1e-12)


@given(st.tuples(unit, unit, unit, unit).filter(lambda t: math.hypot(*t) > 1e-6))
def test_any_accepted_value_has_unit_norm(t: tuple[float, float, float, float]) -> None:
    q = Quaternion(*t)
    assert math.hypot(q.w, q.x, q.y, q.z) == pytest.approx(1.0, abs=1e-15)


@pytest.mark.parametrize("components", [(0, 0, 0, 0), (1e-10, 0, 0, 0), (0, -5e-10, 5e-10, 0)])
def test_zero_or_tiny_norm_is_rejected(components: tuple[float, ...]) -> None:
    with pytest.raises(MathError, match=r"Quaternion: norm = .*expected at least 1e-09"):
        Quaternion(*components)


@pytest.mark.parametrize("component", ["w", "x", "y", "z"])
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_component_is_rejected_and_named(component: str, bad: float) -> None:
    values = {"w": 1.0, "x": 0.0, "y": 0.0, "z": 0.0, component: bad}
    with pytest.raises(MathError, match=rf"Quaternion: {component} = {bad!r}"):
        Quaternion(**values)


def test_is_frozen() -> None:
    q = Quaternion.identity()
    with pytest.raises(dataclasses.FrozenInstanceError):
        q.w = 0.5  # type: ignore[misc]


def test_value_equality_distinguishes_sign_but_isclose_does_not() -> None:
    q = Quaternion.from_rpy(0.1, 0.2, 0.3)
    minus_q = Quaternion(-q.w, -q.x, -q.y, -q.z)
    assert q == Quaternion.from_rpy(0.1, 0.2, 0.3)
    assert q != minus_q
    assert q.isclose(minus_q)
    assert q.angle_to(minus_q) == pytest.approx(0.0, abs=1e-15)
    assert not q.isclose(Quaternion.from_rpy(0.1, 0.2, 0.31))
    assert hash(q) == hash(Quaternion.from_rpy(0.1, 0.2, 0.3))


def test_quarter_turn_about_z_maps_x_to_y() -> None:
    q = Quaternion.from_axis_angle(Vec3(0, 0, 2), math.pi / 2)  # axis need not be unit
    assert q.rotate(Vec3(1, 0, 0)).isclose(Vec3(0, 1, 0), 1e-15)
    assert q.angle_to(Quaternion.identity()) == pytest.approx(math.pi / 2)


def test_from_axis_angle_rejects_zero_axis_and_bad_angle() -> None:
    with pytest.raises(MathError, match="axis"):
        Quaternion.from_axis_angle(Vec3(0, 0, 0), 1.0)
    with pytest.raises(MathError, match="angle = nan"):
        Quaternion.from_axis_angle(Vec3(0, 0, 1), math.nan)


@given(quats, vecs)
def test_rotate_preserves_norm(q: Quaternion, v: Vec3) -> None:
    assert q.rotate(v).norm() == pytest.approx(v.norm(), rel=1e-12, abs=1e-12)


@given(quats, vecs)
def test_rotate_agrees_with_matrix(q: Quaternion, v: Vec3) -> None:
    np.testing.assert_allclose(
        q.rotate(v).to_numpy(), q.to_matrix() @ v.to_numpy(), rtol=1e-12, atol=1e-9
    )


@given(quats, quats, vecs)
def test_hamilton_product_applies_right_operand_first(
    a: Quaternion, b: Quaternion, v: Vec3
) -> None:
    assert (a * b).rotate(v).isclose(a.rotate(b.rotate(v)), 1e-9)


@given(quats)
def test_product_with_inverse_is_identity(q: Quaternion) -> None:
    assert (q * q.inverse()).isclose(Quaternion.identity(), 1e-12)
    assert (q.conjugate() * q).isclose(Quaternion.identity(), 1e-12)


@given(angle, pitch_away_from_lock, angle)
def test_rpy_round_trip_away_from_gimbal_lock(roll: float, pitch: float, yaw: float) -> None:
    r, p, y = Quaternion.from_rpy(roll, pitch, yaw).to_rpy()
    assert (r, p, y) == pytest.approx((roll, pitch, yaw), abs=1e-9)


@given(angle, st.floats(-math.pi / 2, math.pi / 2), angle)
def test_from_rpy_is_rz_ry_rx(roll: float, pitch: float, yaw: float) -> None:
    expected = rz(yaw) @ ry(pitch) @ rx(roll)
    np.testing.assert_allclose(
        Quaternion.from_rpy(roll, pitch, yaw).to_matrix(), expected, atol=1e-12
    )


@given(quats)
def test_to_rpy_always_reproduces_the_rotation(q: Quaternion) -> None:
    assert Quaternion.from_rpy(*q.to_rpy()).isclose(q, 1e-7)


@pytest.mark.parametrize("pitch", [math.pi / 2, -math.pi / 2])
@pytest.mark.parametrize(("roll", "yaw"), [(0.3, 0.0), (0.3, -1.2), (2.0, 2.5)])
def test_to_rpy_at_gimbal_lock_reports_an_equivalent_rotation(
    roll: float, pitch: float, yaw: float
) -> None:
    q = Quaternion.from_rpy(roll, pitch, yaw)
    r, p, y = q.to_rpy()
    assert p == pytest.approx(pitch)
    assert y == 0.0
    assert Quaternion.from_rpy(r, p, y).isclose(q, 1e-7)


@given(quats)
def test_matrix_round_trip(q: Quaternion) -> None:
    m = q.to_matrix()
    assert m.shape == (3, 3)
    np.testing.assert_allclose(m @ m.T, np.eye(3), atol=1e-12)
    assert np.linalg.det(m) == pytest.approx(1.0)
    assert Quaternion.from_matrix(m).isclose(q, 1e-9)


@pytest.mark.parametrize(
    ("matrix", "message"),
    [
        (np.eye(3) * 2.0, "orthonormal"),
        (np.diag([1.0, 1.0, -1.0]), "determinant"),
        (np.eye(4), "shape"),
        (np.full((3, 3), np.nan), "finite"),
    ],
)
def test_from_matrix_rejects_non_rotations(matrix: np.ndarray, message: str) -> None:
    with pytest.raises(MathError, match=message):
        Quaternion.from_matrix(matrix)


@given(quats)
def test_numpy_round_trip(q: Quaternion) -> None:
    a = q.to_numpy()
    assert a.shape == (4,)
    assert a.dtype == np.float64
    assert a[0] == q.w  # scalar first
    back = Quaternion.from_numpy(a)
    # Same sign, same components (re-normalising a unit value may move the last bit at most).
    np.testing.assert_allclose(back.to_numpy(), a, rtol=0, atol=1e-15)


def test_from_numpy_names_the_bad_element() -> None:
    with pytest.raises(MathError, match=r"element 2 \(y\) = inf"):
        Quaternion.from_numpy([1.0, 0.0, np.inf, 0.0])
    with pytest.raises(MathError, match="shape"):
        Quaternion.from_numpy([1.0, 0.0, 0.0])


@given(st.floats(0.0, math.pi), st.builds(Vec3, unit, unit, unit))
def test_angle_to_measures_the_relative_rotation(theta: float, axis: Vec3) -> None:
    assume(axis.norm() > 0.1)
    q = Quaternion.from_axis_angle(axis, theta)
    assert Quaternion.identity().angle_to(q) == pytest.approx(theta, abs=1e-9)
    assert q.angle_to(q * Quaternion.from_axis_angle(axis, 0.25)) == pytest.approx(0.25, abs=1e-9)


@given(
    st.tuples(*[st.floats(-1, 1, allow_nan=False) for _ in range(4)]).filter(
        lambda c: sum(v * v for v in c) > 1e-6
    )
)
def test_rebuilding_a_unit_quaternion_from_its_components_is_bit_identical(
    components: tuple[float, float, float, float],
) -> None:
    # A wire round trip rebuilds quaternions from their stored components; that must not drift.
    q = Quaternion(*components)
    assert Quaternion(q.w, q.x, q.y, q.z) == q
