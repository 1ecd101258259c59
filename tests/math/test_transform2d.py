"""Transform2D: theta handling, composition, inverse, lifting to 3-D and matrix conversion."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.math import MathError, Transform, Transform2D, Vec3, wrap_angle

coords = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
thetas = st.floats(-20.0, 20.0, allow_nan=False)
poses = st.builds(Transform2D, coords, coords, thetas)


def test_theta_is_stored_as_given() -> None:
    assert Transform2D(0.0, 0.0, 2 * math.pi).theta == 2 * math.pi
    assert Transform2D(1, 2, -7).theta == -7.0
    assert type(Transform2D(1, 2, 3).x) is float


def test_exact_equality_distinguishes_full_turns_but_isclose_does_not() -> None:
    a, b = Transform2D(1.0, 2.0, 0.0), Transform2D(1.0, 2.0, 2 * math.pi)
    assert a != b
    assert a.isclose(b)
    assert not a.isclose(Transform2D(1.0, 2.0, 0.01))


@pytest.mark.parametrize(
    ("angle", "wrapped"),
    [
        (0.0, 0.0),
        (math.pi, math.pi),
        (-math.pi, math.pi),
        (3 * math.pi, math.pi),
        (7.0, 7.0 - math.tau),
    ],
)
def test_wrap_angle_known_values(angle: float, wrapped: float) -> None:
    assert wrap_angle(angle) == pytest.approx(wrapped, abs=1e-12)


@given(st.floats(-1e4, 1e4, allow_nan=False))
def test_wrap_angle_stays_in_range_and_keeps_direction(angle: float) -> None:
    w = wrap_angle(angle)
    assert -math.pi < w <= math.pi
    assert math.cos(w) == pytest.approx(math.cos(angle), abs=1e-9)
    assert math.sin(w) == pytest.approx(math.sin(angle), abs=1e-9)


@given(poses, poses)
def test_composition_wraps_theta(a: Transform2D, b: Transform2D) -> None:
    assert -math.pi < (a @ b).theta <= math.pi
    assert -math.pi < a.inverse().theta <= math.pi


@pytest.mark.parametrize("field", ["x", "y", "theta"])
@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_non_finite_field_is_rejected_and_named(field: str, bad: float) -> None:
    values = {"x": 0.0, "y": 0.0, "theta": 0.0, field: bad}
    with pytest.raises(MathError, match=rf"Transform2D: {field} = {bad!r}"):
        Transform2D(**values)


def test_is_frozen() -> None:
    t = Transform2D(1.0, 2.0, 0.5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.theta = 0.0  # type: ignore[misc]
    assert t == Transform2D(1.0, 2.0, 0.5)


def test_known_pose() -> None:
    t = Transform2D(1.0, 0.0, math.pi / 2)
    assert t.apply(1.0, 0.0) == pytest.approx((1.0, 1.0))
    with pytest.raises(MathError, match=r"Transform2D\.apply: y = nan"):
        t.apply(0.0, math.nan)


@given(poses)
def test_compose_with_inverse_is_identity(t: Transform2D) -> None:
    assert (t @ t.inverse()).isclose(Transform2D.identity(), 1e-9)
    assert t.inverse().compose(t).isclose(Transform2D.identity(), 1e-9)


@given(poses, poses, coords, coords)
def test_composition_applies_the_right_operand_first(
    a: Transform2D, b: Transform2D, x: float, y: float
) -> None:
    assert (a @ b).apply(x, y) == pytest.approx(a.apply(*b.apply(x, y)), abs=1e-8)


@given(poses, poses)
def test_lift_agrees_with_3d_composition(a: Transform2D, b: Transform2D) -> None:
    assert (a @ b).to_transform().isclose(a.to_transform() @ b.to_transform(), 1e-9)
    assert a.inverse().to_transform().isclose(a.to_transform().inverse(), 1e-9)


@given(poses, coords, coords)
def test_lift_maps_points_like_the_2d_transform(t: Transform2D, x: float, y: float) -> None:
    p = t.to_transform().apply(Vec3(x, y, 0.0))
    assert (p.x, p.y) == pytest.approx(t.apply(x, y), abs=1e-9)
    assert p.z == 0.0
    assert isinstance(t.to_transform(), Transform)


@given(poses)
def test_matrix_round_trip(t: Transform2D) -> None:
    m = t.to_matrix()
    assert m.shape == (3, 3)
    back = Transform2D.from_matrix(m)
    assert -math.pi < back.theta <= math.pi
    assert back.isclose(t, 1e-9)


@given(poses, poses)
def test_matrix_product_is_composition(a: Transform2D, b: Transform2D) -> None:
    np.testing.assert_allclose(a.to_matrix() @ b.to_matrix(), (a @ b).to_matrix(),
                               rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize(
    ("matrix", "message"),
    [
        (np.array([[1.0, 0, 0], [0, 1, 0], [0.1, 0, 1]]), "bottom row"),
        (np.array([[2.0, 0, 0], [0, 2, 0], [0, 0, 1]]), "rotation block"),
        (np.array([[1.0, 0, 0], [0, -1, 0], [0, 0, 1]]), "rotation block"),
        (np.array([[1.0, 0.5, 0], [0, 1, 0], [0, 0, 1]]), "rotation block"),  # shear
        (np.eye(4), "shape"),
    ],
)
def test_from_matrix_rejects_non_rigid_matrices(matrix: np.ndarray, message: str) -> None:
    with pytest.raises(MathError, match=message):
        Transform2D.from_matrix(matrix)
