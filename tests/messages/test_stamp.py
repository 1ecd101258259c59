"""builtin_interfaces Time / Duration: ROS layout, exact nanosecond conversions, range checks."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.codec import DecodeError
from jointbus.messages.errors import LimitError, ValidationError
from jointbus.messages.stamp import NS_PER_S, Duration, Time
from support.rosbags_oracle import rosbags_cdr, rosbags_decode

INT32 = st.integers(-(2**31), 2**31 - 1)
UINT32 = st.integers(0, 2**32 - 1)
# Every ns value whose floor-seconds fit int32.
NS = st.integers(-(2**31) * NS_PER_S, (2**31) * NS_PER_S - 1)


@given(INT32, UINT32)
def test_time_bytes_match_rosbags(sec: int, nanosec: int) -> None:
    msg = Time(sec, nanosec)
    data = msg.to_cdr()
    assert data == rosbags_cdr(msg)
    assert Time.from_cdr(data) == msg
    assert rosbags_decode(Time, data) == msg


@given(INT32, UINT32)
def test_duration_bytes_match_rosbags(sec: int, nanosec: int) -> None:
    msg = Duration(sec, nanosec)
    data = msg.to_cdr()
    assert data == rosbags_cdr(msg)
    assert Duration.from_cdr(data) == msg


@given(NS)
def test_from_ns_round_trips_exactly_and_normalises(ns: int) -> None:
    for cls in (Time, Duration):
        stamp = cls.from_ns(ns)
        assert stamp.to_ns() == ns
        assert 0 <= stamp.nanosec < NS_PER_S


def test_negative_ns_floors_seconds_like_rclcpp() -> None:
    assert Time.from_ns(-1) == Time(-1, 999_999_999)
    assert Duration.from_ns(-1_500_000_000) == Duration(-2, 500_000_000)


def test_unnormalised_wire_nanosec_is_accepted_and_converted() -> None:
    # ROS does not forbid nanosec >= 1e9 on the wire; a decoder must not reject it.
    assert Time(1, 2_000_000_000).to_ns() == 3 * NS_PER_S


@pytest.mark.parametrize("ns", [2**31 * NS_PER_S, -(2**31) * NS_PER_S - 1])
def test_from_ns_outside_int32_seconds_is_a_limit_error(ns: int) -> None:
    with pytest.raises(LimitError, match="int32"):
        Time.from_ns(ns)


def test_from_ns_rejects_floats_and_bools() -> None:
    with pytest.raises(ValidationError, match="ns"):
        Time.from_ns(1.5)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        Time.from_ns(True)


def test_numpy_integers_are_accepted_and_stored_as_int() -> None:
    stamp = Time(np.int64(5), np.uint32(7))  # type: ignore[arg-type]
    assert type(stamp.sec) is int
    assert type(stamp.nanosec) is int
    assert stamp == Time(5, 7)


@pytest.mark.parametrize(
    ("sec", "nanosec", "field", "error"),
    [
        (2**31, 0, "sec", LimitError),
        (0, -1, "nanosec", LimitError),
        (0, 2**32, "nanosec", LimitError),
        (1.0, 0, "sec", ValidationError),
        (0, True, "nanosec", ValidationError),
        ("1", 0, "sec", ValidationError),
    ],
)
def test_bad_fields_raise_naming_the_field(
    sec: object, nanosec: object, field: str, error: type[Exception]
) -> None:
    with pytest.raises(error) as info:
        Time(sec, nanosec)  # type: ignore[arg-type]
    assert isinstance(info.value, ValidationError)
    assert info.value.field == field


def test_now_is_wall_clock() -> None:
    before = time.time_ns()
    stamp = Time.now().to_ns()
    after = time.time_ns()
    assert before <= stamp <= after


def test_to_seconds() -> None:
    assert Time(3, 500_000_000).to_seconds() == 3.5
    assert Duration.from_ns(-500_000_000).to_seconds() == -0.5


def test_truncated_payload_is_a_decode_error() -> None:
    with pytest.raises(DecodeError):
        Time.from_cdr(Time(1, 2).to_cdr()[:-2])
