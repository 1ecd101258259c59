"""sensor_msgs JointState / MultiDOFJointState: ROS 2 bytes (rosbags oracle) and ROS's rules."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.codec import DecodeError
from jointbus.messages.errors import LengthMismatchError, UnknownJointError, ValidationError
from jointbus.messages.geometry_msgs import Quaternion, Transform, Twist, Vector3, Wrench
from jointbus.messages.sensor_msgs import JointState, MultiDOFJointState
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header
from support.rosbags_oracle import register, rosbags_cdr, rosbags_decode, typestore

TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))
NAMES = st.lists(TEXT.filter(bool), unique=True, max_size=8)
F64 = st.floats(allow_nan=False)
HEADERS = st.builds(
    Header, st.builds(Time, st.integers(-(2**31), 2**31 - 1), st.integers(0, 2**32 - 1)), TEXT
)
VECTORS = st.builds(Vector3, F64, F64, F64)
TRANSFORMS = st.builds(Transform, VECTORS, st.builds(Quaternion, F64, F64, F64, F64))


def _per_joint(n: int, element: st.SearchStrategy[Any]) -> st.SearchStrategy[list[Any]]:
    """Either one value per joint or none at all ("not reported")."""
    return st.one_of(st.just([]), st.lists(element, min_size=n, max_size=n))


@st.composite
def joint_states(draw: st.DrawFn) -> JointState:
    names = draw(NAMES)
    n = len(names)
    return JointState(
        draw(HEADERS),
        tuple(names),
        tuple(draw(_per_joint(n, F64))),
        tuple(draw(_per_joint(n, F64))),
        tuple(draw(_per_joint(n, F64))),
    )


@st.composite
def multi_dof_states(draw: st.DrawFn) -> MultiDOFJointState:
    names = draw(NAMES.map(lambda ns: ns[:4]))
    n = len(names)
    return MultiDOFJointState(
        draw(HEADERS),
        tuple(names),
        tuple(draw(_per_joint(n, TRANSFORMS))),
        tuple(draw(_per_joint(n, st.builds(Twist, VECTORS, VECTORS)))),
        tuple(draw(_per_joint(n, st.builds(Wrench, VECTORS, VECTORS)))),
    )


@given(joint_states())
def test_joint_state_bytes_match_rosbags(msg: JointState) -> None:
    data = msg.to_cdr()
    assert data == rosbags_cdr(msg)
    assert JointState.from_cdr(data) == msg
    assert rosbags_decode(JointState, data) == msg


@given(multi_dof_states())
def test_multi_dof_bytes_match_rosbags(msg: MultiDOFJointState) -> None:
    data = msg.to_cdr()
    assert data == rosbags_cdr(msg)
    assert MultiDOFJointState.from_cdr(data) == msg
    assert rosbags_decode(MultiDOFJointState, data) == msg


def test_definitions_are_the_ros_ones() -> None:
    register(JointState)  # raises if ours differs from ROS 2 Humble's
    register(MultiDOFJointState)


def test_nan_means_not_reported_and_survives_the_wire() -> None:
    msg = JointState(Header(), ("a", "b"), (0.5, math.nan), (), ())
    back = JointState.from_cdr(msg.to_cdr())
    assert back.position[0] == 0.5
    assert math.isnan(back.position[1])
    assert back.velocity == ()


def test_lists_and_numpy_are_normalised_to_float_tuples() -> None:
    msg = JointState(Header(), ["a", "b"], np.array([1, 2]), [3, 4.5], ())  # type: ignore[arg-type]
    assert msg.name == ("a", "b")
    assert msg.position == (1.0, 2.0)
    assert all(type(v) is float for v in msg.position + msg.velocity)
    assert msg == JointState(Header(), ("a", "b"), (1.0, 2.0), (3.0, 4.5), ())


@given(NAMES.filter(lambda ns: len(ns) >= 1), st.sampled_from(["position", "velocity", "effort"]))
def test_wrong_length_names_the_field(names: list[str], field: str) -> None:
    values = {field: (0.0,) * (len(names) + 1)}
    with pytest.raises(LengthMismatchError) as info:
        JointState(Header(), tuple(names), **values)  # type: ignore[arg-type]
    assert info.value.field == field
    assert str(len(names)) in info.value.expected


def test_duplicate_names_are_rejected_naming_both_indices() -> None:
    with pytest.raises(ValidationError) as info:
        JointState(Header(), ("a", "b", "a"))
    err = info.value
    assert (err.field, err.joint, err.index) == ("name", "a", 2)
    assert "index 0" in str(err)


def test_empty_name_is_rejected_naming_the_index() -> None:
    with pytest.raises(ValidationError) as info:
        MultiDOFJointState(Header(), ("a", ""))
    assert (info.value.field, info.value.index) == ("joint_names", 1)


def test_bad_value_names_joint_and_index() -> None:
    with pytest.raises(ValidationError) as info:
        JointState(Header(), ("a", "b"), (0.0, "x"))  # type: ignore[arg-type]
    assert (info.value.field, info.value.joint, info.value.index) == ("position", "b", 1)


def test_multi_dof_wrong_element_type_names_joint() -> None:
    with pytest.raises(ValidationError) as info:
        MultiDOFJointState(Header(), ("base",), (), (Wrench(),))  # type: ignore[arg-type]
    assert (info.value.field, info.value.joint, info.value.index) == ("twist", "base", 0)
    with pytest.raises(LengthMismatchError):
        MultiDOFJointState(Header(), ("base",), (Transform(), Transform()))


def test_index_lookup() -> None:
    msg = JointState(Header(), ("a", "b"), (1.0, 2.0))
    assert msg.position[msg.index("b")] == 2.0
    with pytest.raises(UnknownJointError, match="'c'"):
        msg.index("c")
    assert MultiDOFJointState(Header(), ("x", "y")).index("y") == 1


def test_decoding_a_message_that_breaks_the_rules_is_a_decode_error() -> None:
    register(JointState)
    store = typestore()
    cls = store.types["sensor_msgs/msg/JointState"]
    header = store.types["std_msgs/msg/Header"](
        store.types["builtin_interfaces/msg/Time"](0, 0), ""
    )
    bad = cls(header, ["a", "b"], np.array([1.0]), np.array([]), np.array([]))
    data = bytes(store.serialize_cdr(bad, "sensor_msgs/msg/JointState"))
    with pytest.raises(DecodeError, match="position"):
        JointState.from_cdr(data)
