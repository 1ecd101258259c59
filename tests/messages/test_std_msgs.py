"""std_msgs Header and String: ROS 2 bytes (checked against rosbags) and construction rules."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.messages.errors import LimitError, ValidationError
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header, String
from support.profiled import python_calls
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


_INT32_NS = (-(2**31) * 10**9, 2**31 * 10**9 - 1)  # the stamps whose seconds fit int32


@given(
    st.one_of(
        st.integers(*_INT32_NS),
        st.sampled_from((0, -1, 1, 999_999_999, 10**9, _INT32_NS[0], _INT32_NS[1])),
    ),
    st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=8),  # as on a wire
)
def test_a_header_at_ns_is_stamped_without_python_calls_as_the_constructors_stamp_it(
    ns: int, frame_id: str
) -> None:
    """An array node stamps a header every cycle (500–1000 a second) on a thread whose caches
    each cycle starts cold: ``at_ns`` builds it without the constructors' seven Python calls,
    the same value and bytes as they build."""
    header, calls = python_calls(Header.at_ns, ns, frame_id)
    assert [c for c in calls if c.startswith(("stamp.py:", "std_msgs.py:", "<string>:"))] == []
    want = Header(Time.from_ns(ns), frame_id)
    assert header == want and header.to_cdr() == want.to_cdr()
    assert type(header.stamp.sec) is int and type(header.stamp.nanosec) is int


@pytest.mark.parametrize(
    ("ns", "frame_id", "error"),
    [
        (_INT32_NS[1] + 1, "", LimitError),
        (_INT32_NS[0] - 1, "", LimitError),
        (1.5, "", ValidationError),
        (True, "", ValidationError),
        (5, 7, ValidationError),
    ],
)
def test_a_header_at_ns_keeps_the_constructors_errors(
    ns: object, frame_id: object, error: type[Exception]
) -> None:
    with pytest.raises(error):
        Header.at_ns(ns, frame_id)  # type: ignore[arg-type]


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
