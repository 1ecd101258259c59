"""Transform: composition order, inverse, point mapping and 4×4 matrix conversion."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.math import MathError, Quaternion, Transform, Vec3

unit = st.floats(-1.0, 1.0, allow_nan=False)
quats = st.tuples(unit, unit, unit, unit).filter(lambda t: math.hypot(*t) > 0.1).map(
    lambda t: Quaternion(*t)
)
coords = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
vecs = st.builds(Vec3, coords, coords, coords)
transforms = st.builds(Transform, vecs, quats)


def test_default_is_identity() -> None:
    assert Transform() == Transform.identity()
    assert Transform().apply(Vec3(1, 2, 3)) == Vec3(1, 2, 3)


def test_known_pose() -> None:
    # A frame 1 m along x, turned a quarter turn about z: its own x axis points along parent y.
    t = Transform(Vec3(1, 0, 0), Quaternion.from_axis_angle(Vec3(0, 0, 1), math.pi / 2))
    assert t.apply(Vec3(1, 0, 0)).isclose(Vec3(1, 1, 0), 1e-15)
    assert t.inverse().apply(Vec3(1, 1, 0)).isclose(Vec3(1, 0, 0), 1e-15)


def test_fields_must_have_the_right_type() -> None:
    with pytest.raises(MathError, match="Transform: translation = "):
        Transform((1.0, 2.0, 3.0))  # type: ignore[arg-type]
    with pytest.raises(MathError, match="Transform: rotation = "):
        Transform(Vec3.ZERO, (1.0, 0.0, 0.0, 0.0))  # type: ignore[arg-type]


def test_is_frozen_and_compares_by_value() -> None:
    t = Transform(Vec3(1, 2, 3), Quaternion.from_rpy(0.1, 0.2, 0.3))
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.translation = Vec3.ZERO  # type: ignore[misc]
    assert t == Transform(Vec3(1, 2, 3), Quaternion.from_rpy(0.1, 0.2, 0.3))
    assert t != Transform(Vec3(1, 2, 3.5), Quaternion.from_rpy(0.1, 0.2, 0.3))


@given(transforms)
def test_compose_with_inverse_is_identity(t: Transform) -> None:
    assert (t @ t.inverse()).isclose(Transform.identity(), 1e-9)
    assert t.inverse().compose(t).isclose(Transform.identity(), 1e-9)


@given(transforms, transforms, vecs)
def test_composition_applies_the_right_operand_first(a: Transform, b: Transform, p: Vec3) -> None:
    assert (a @ b).apply(p).isclose(a.apply(b.apply(p)), 1e-8)


@given(transforms, vecs)
def test_inverse_undoes_apply(t: Transform, p: Vec3) -> None:
    assert t.inverse().apply(t.apply(p)).isclose(p, 1e-8)


@given(transforms, vecs)
def test_matrix_acts_like_apply(t: Transform, p: Vec3) -> None:
    m = t.to_matrix()
    assert m.shape == (4, 4)
    np.testing.assert_array_equal(m[3], [0.0, 0.0, 0.0, 1.0])
    np.testing.assert_allclose((m @ np.append(p.to_numpy(), 1.0))[:3], t.apply(p).to_numpy(),
                               rtol=1e-12, atol=1e-9)


@given(transforms)
def test_matrix_round_trip(t: Transform) -> None:
    back = Transform.from_matrix(t.to_matrix())
    assert back.translation == t.translation
    assert back.isclose(t, 1e-9)


@given(transforms, transforms)
def test_matrix_product_is_composition(a: Transform, b: Transform) -> None:
    np.testing.assert_allclose(a.to_matrix() @ b.to_matrix(), (a @ b).to_matrix(),
                               rtol=1e-12, atol=1e-9)


def _matrix_with(row: int, col: int, value: float) -> np.ndarray:
    m = Transform(Vec3(1, 2, 3), Quaternion.from_rpy(0.1, 0.2, 0.3)).to_matrix()
    m[row, col] = value
    return m


@pytest.mark.parametrize(
    ("matrix", "message"),
    [
        (_matrix_with(3, 0, 0.5), "bottom row"),
        (_matrix_with(3, 3, 2.0), "bottom row"),
        (_matrix_with(0, 0, 3.0), "orthonormal"),
        (np.diag([1.0, 1.0, -1.0, 1.0]), "determinant"),
        (_matrix_with(1, 3, np.nan), r"element \[1, 3\] = nan"),
        (np.eye(3), "shape"),
    ],
)
def test_from_matrix_rejects_non_rigid_matrices(matrix: np.ndarray, message: str) -> None:
    with pytest.raises(MathError, match=message):
        Transform.from_matrix(matrix)


def test_matmul_with_other_types_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        _ = Transform() @ Vec3(1, 2, 3)  # type: ignore[operator]
