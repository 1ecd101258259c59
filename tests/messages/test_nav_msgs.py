"""nav_msgs/Odometry: ROS 2 bytes (rosbags oracle), ROS's definition, covariance checks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.messages.errors import LengthMismatchError, ValidationError
from jointbus.messages.geometry_msgs import Point, Pose, Quaternion, Twist, Vector3
from jointbus.messages.nav_msgs import Odometry, PoseWithCovariance, TwistWithCovariance
from jointbus.messages.registry import default_registry
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header
from support.rosbags_oracle import register, rosbags_cdr, rosbags_decode

F64 = st.floats(allow_nan=False)
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))
HEADERS = st.builds(
    Header, st.builds(Time, st.integers(-(2**31), 2**31 - 1), st.integers(0, 2**32 - 1)), TEXT
)
VECTORS = st.builds(Vector3, F64, F64, F64)
COVARIANCES = st.lists(F64, min_size=36, max_size=36).map(tuple)
POSES = st.builds(
    PoseWithCovariance,
    st.builds(Pose, st.builds(Point, F64, F64, F64), st.builds(Quaternion, F64, F64, F64, F64)),
    COVARIANCES,
)
TWISTS = st.builds(TwistWithCovariance, st.builds(Twist, VECTORS, VECTORS), COVARIANCES)
ODOMETRY = st.builds(Odometry, HEADERS, TEXT, POSES, TWISTS)


@given(ODOMETRY)
def test_odometry_bytes_match_rosbags(msg: Odometry) -> None:
    data = msg.to_cdr()
    assert data == rosbags_cdr(msg)
    assert Odometry.from_cdr(data) == msg
    assert rosbags_decode(Odometry, data) == msg


def test_definition_is_the_ros_one() -> None:
    register(Odometry)  # raises if ours differs from ROS 2 Humble's nav_msgs/msg/Odometry
    assert "float64[36] covariance" in PoseWithCovariance.msgdef()


def test_odometry_is_in_the_default_registry() -> None:
    assert default_registry().by_type_name("nav_msgs/msg/Odometry") is Odometry


def test_covariance_must_have_36_real_entries() -> None:
    with pytest.raises(LengthMismatchError, match="covariance"):
        PoseWithCovariance(Pose(), (0.0,) * 35)
    with pytest.raises(ValidationError, match="index 3"):
        TwistWithCovariance(Twist(), (0.0, 0.0, 0.0, "x", *(0.0,) * 32))
    assert PoseWithCovariance(Pose(), [1] * 36).covariance == (1.0,) * 36
