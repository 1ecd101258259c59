"""std_msgs Header and String: ROS 2 bytes (checked against rosbags) and construction rules."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.messages.errors import ValidationError
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header, String
from support.rosbags_oracle import register, rosbags_cdr, rosbags_decode

TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))
TIMES = st.builds(Time, st.integers(-(2**31), 2**31 - 1), st.integers(0, 2**32 - 1))
HEADERS = st.builds(Header, TIMES, TEXT)


@given(HEADERS)
def test_header_bytes_match_rosbags(header: Header) -> None:
    data = header.to_cdr()
    assert data == rosbags_cdr(header)
    assert Header.from_cdr(data) == header
    assert rosbags_decode(Header, data) == header


@given(TEXT)
def test_string_bytes_match_rosbags(text: str) -> None:
    msg = String(text)
    data = msg.to_cdr()
    assert data == rosbags_cdr(msg)
    assert String.from_cdr(data) == msg


def test_definitions_are_the_ros_ones() -> None:
    # register() raises if our definition differs from the ROS 2 Humble one rosbags knows.
    register(Header)
    register(String)
    assert Header.msgdef().startswith("builtin_interfaces/Time stamp\nstring frame_id\n")


def test_header_now_is_wall_clock_with_frame() -> None:
    before = time.time_ns()
    header = Header.now("base_link")
    after = time.time_ns()
    assert header.frame_id == "base_link"
    assert before <= header.stamp.to_ns() <= after


def test_header_at_ns() -> None:
    assert Header.at_ns(1_500_000_000, "odom") == Header(Time(1, 500_000_000), "odom")


def test_default_header_is_zero_stamp_no_frame() -> None:
    assert Header() == Header(Time(0, 0), "")


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"stamp": 5}, "stamp"), ({"frame_id": 3}, "frame_id"), ({"frame_id": b"x"}, "frame_id")],
)
def test_header_rejects_wrong_types(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError) as info:
        Header(**kwargs)  # type: ignore[arg-type]
    assert info.value.field == field


def test_string_rejects_non_str() -> None:
    with pytest.raises(ValidationError, match="'data'"):
        String(b"bytes")  # type: ignore[arg-type]


def test_messages_are_immutable() -> None:
    header = Header.now("a")
    with pytest.raises(AttributeError):
        header.frame_id = "b"  # type: ignore[misc]
