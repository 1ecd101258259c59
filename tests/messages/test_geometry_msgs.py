"""geometry_msgs wire records: ROS 2 bytes (rosbags oracle), no normalisation, math conversions."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus import math as jm
from jointbus.math import MathError
from jointbus.messages.errors import ValidationError
from jointbus.messages.geometry_msgs import (
    Point,
    Pose,
    Quaternion,
    Transform,
    TransformStamped,
    Twist,
    Vector3,
    Wrench,
)
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header
from support.rosbags_oracle import rosbags_cdr, rosbags_decode

F64 = st.floats(allow_nan=False)  # infinities are legal float64 wire values
FINITE = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))
VECTORS = st.builds(Vector3, F64, F64, F64)
POINTS = st.builds(Point, F64, F64, F64)
QUATERNIONS = st.builds(Quaternion, F64, F64, F64, F64)
HEADERS = st.builds(
    Header, st.builds(Time, st.integers(-(2**31), 2**31 - 1), st.integers(0, 2**32 - 1)), TEXT
)
MESSAGES: dict[type[Any], st.SearchStrategy[Any]] = {
    Vector3: VECTORS,
    Point: POINTS,
    Quaternion: QUATERNIONS,
    Pose: st.builds(Pose, POINTS, QUATERNIONS),
    Twist: st.builds(Twist, VECTORS, VECTORS),
    Wrench: st.builds(Wrench, VECTORS, VECTORS),
    Transform: st.builds(Transform, VECTORS, QUATERNIONS),
    TransformStamped: st.builds(
        TransformStamped, HEADERS, TEXT, st.builds(Transform, VECTORS, QUATERNIONS)
    ),
}


@pytest.mark.parametrize("cls", list(MESSAGES), ids=lambda c: c.__name__)
@given(data=st.data())
def test_bytes_match_rosbags_and_round_trip(cls: type[Any], data: st.DataObject) -> None:
    msg = data.draw(MESSAGES[cls])
    encoded = msg.to_cdr()
    assert encoded == rosbags_cdr(msg)
    assert cls.from_cdr(encoded) == msg
    assert rosbags_decode(cls, encoded) == msg


def test_quaternion_wire_order_is_xyzw_and_default_is_identity() -> None:
    q = Quaternion(1.0, 2.0, 3.0, 4.0)
    assert (q.x, q.y, q.z, q.w) == (1.0, 2.0, 3.0, 4.0)
    assert Quaternion() == Quaternion(0.0, 0.0, 0.0, 1.0)
    assert "float64 x\nfloat64 y\nfloat64 z\nfloat64 w\n" in Quaternion.msgdef()


def test_wire_records_keep_zero_quaternions_and_nan() -> None:
    # ROS peers may send these; a decoder must pass them on unchanged.
    zero = Quaternion(0.0, 0.0, 0.0, 0.0)
    assert Quaternion.from_cdr(zero.to_cdr()) == zero
    v = Vector3.from_cdr(Vector3(math.nan, 0.0, 1.0).to_cdr())
    assert math.isnan(v.x)
    assert (v.y, v.z) == (0.0, 1.0)


def test_not_normalised() -> None:
    q = Quaternion(0.0, 0.0, 0.0, 2.0)
    assert q.w == 2.0


def test_ints_and_numpy_scalars_are_stored_as_float() -> None:
    v = Vector3(1, np.float32(2.5), np.int64(3))  # type: ignore[arg-type]
    assert all(type(c) is float for c in (v.x, v.y, v.z))
    assert v == Vector3(1.0, 2.5, 3.0)


@pytest.mark.parametrize("bad", [True, "1.0", None, [1.0]])
def test_non_numbers_are_rejected_naming_the_field(bad: object) -> None:
    with pytest.raises(ValidationError) as info:
        Vector3(0.0, bad, 0.0)  # type: ignore[arg-type]
    assert info.value.field == "y"
    assert info.value.type_name == "geometry_msgs/msg/Vector3"


@pytest.mark.parametrize(
    ("cls", "kwargs", "field"),
    [
        (Pose, {"position": Vector3()}, "position"),
        (Pose, {"orientation": jm.Quaternion.identity()}, "orientation"),
        (Twist, {"angular": (0.0, 0.0, 1.0)}, "angular"),
        (Wrench, {"force": Point()}, "force"),
        (Transform, {"rotation": None}, "rotation"),
        (TransformStamped, {"child_frame_id": 3}, "child_frame_id"),
        (TransformStamped, {"header": Time()}, "header"),
    ],
)
def test_nested_fields_need_their_wire_type(
    cls: type[Any], kwargs: dict[str, object], field: str
) -> None:
    with pytest.raises(ValidationError) as info:
        cls(**kwargs)
    assert info.value.field == field


# --- conversions to jointbus.math -----------------------------------------------------------
MATH_VECTORS = st.builds(jm.Vec3, FINITE, FINITE, FINITE)
MATH_QUATERNIONS = st.builds(
    jm.Quaternion.from_rpy,
    st.floats(-3.0, 3.0),
    st.floats(-1.5, 1.5),
    st.floats(-3.0, 3.0),
)


@given(MATH_VECTORS)
def test_vector_and_point_round_trip_through_math(v: jm.Vec3) -> None:
    assert Vector3.from_math(v).to_math() == v
    assert Point.from_math(v).to_math() == v
    assert Vector3.from_math(v) == Vector3(v.x, v.y, v.z)


@given(MATH_QUATERNIONS)
def test_quaternion_swaps_component_order(q: jm.Quaternion) -> None:
    wire = Quaternion.from_math(q)
    assert (wire.x, wire.y, wire.z, wire.w) == (q.x, q.y, q.z, q.w)
    assert wire.to_math().isclose(q, 1e-12)


def test_quaternion_to_math_normalises() -> None:
    q = Quaternion(0.0, 0.0, 0.0, 2.0).to_math()
    assert (q.w, q.x, q.y, q.z) == (1.0, 0.0, 0.0, 0.0)
    yaw = Quaternion(0.0, 0.0, math.sin(0.5), math.cos(0.5)).to_math()
    assert math.isclose(yaw.to_rpy()[2], 1.0)


def test_invalid_rotation_raises_math_error_on_conversion_only() -> None:
    zero = Quaternion(0.0, 0.0, 0.0, 0.0)
    with pytest.raises(MathError):
        zero.to_math()
    with pytest.raises(MathError):
        Transform(Vector3(), zero).to_math()
    with pytest.raises(MathError):
        Vector3(math.nan, 0.0, 0.0).to_math()


@given(MATH_VECTORS, MATH_QUATERNIONS)
def test_pose_and_transform_round_trip_through_math(t: jm.Vec3, q: jm.Quaternion) -> None:
    transform = jm.Transform(t, q)
    for cls in (Pose, Transform):
        back = cls.from_math(transform).to_math()
        assert back.translation == t
        assert back.rotation.isclose(q, 1e-12)
    pose = Pose.from_math(transform)
    assert pose.position == Point(t.x, t.y, t.z)


@given(MATH_VECTORS, MATH_VECTORS)
def test_twist_and_wrench_round_trip_through_math(a: jm.Vec3, b: jm.Vec3) -> None:
    twist = jm.Twist(a, b)
    wrench = jm.Wrench(a, b)
    assert Twist.from_math(twist).to_math() == twist
    assert Wrench.from_math(wrench).to_math() == wrench
    assert Twist.from_math(twist).linear == Vector3(a.x, a.y, a.z)
    assert Wrench.from_math(wrench).torque == Vector3(b.x, b.y, b.z)
