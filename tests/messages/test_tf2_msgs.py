"""tf2_msgs TFMessage: ROS 2 bytes (rosbags oracle) and element checks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus import math as jm
from jointbus.messages.errors import ValidationError
from jointbus.messages.geometry_msgs import (
    Quaternion,
    Transform,
    TransformStamped,
    Vector3,
)
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header
from jointbus.messages.tf2_msgs import TFMessage
from support.rosbags_oracle import register, rosbags_cdr, rosbags_decode

TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))
F64 = st.floats(allow_nan=False)
VECTORS = st.builds(Vector3, F64, F64, F64)
STAMPED = st.builds(
    TransformStamped,
    st.builds(
        Header, st.builds(Time, st.integers(-(2**31), 2**31 - 1), st.integers(0, 2**32 - 1)), TEXT
    ),
    TEXT,
    st.builds(Transform, VECTORS, st.builds(Quaternion, F64, F64, F64, F64)),
)


@given(st.lists(STAMPED, max_size=5))
def test_bytes_match_rosbags(transforms: list[TransformStamped]) -> None:
    msg = TFMessage(tuple(transforms))
    data = msg.to_cdr()
    assert data == rosbags_cdr(msg)
    assert TFMessage.from_cdr(data) == msg
    assert rosbags_decode(TFMessage, data) == msg


def test_definition_is_the_ros_one() -> None:
    register(TFMessage)


def test_list_is_normalised_to_tuple() -> None:
    t = TransformStamped(Header.at_ns(0, "body"), "fr_foot", Transform.from_math(jm.Transform()))
    assert TFMessage([t]).transforms == (t,)


def test_wrong_element_names_its_index() -> None:
    good = TransformStamped()
    with pytest.raises(ValidationError) as info:
        TFMessage((good, Transform()))  # type: ignore[arg-type]
    assert (info.value.field, info.value.index) == ("transforms", 1)
