"""The generic Status: seed layout and level constants, rosbags-identical bytes, level rules."""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.codec import DecodeError, schema_of
from jointbus.codec.msgdef import definition_text
from jointbus.messages.errors import LimitError, ValidationError
from jointbus.messages.stamp import Time
from jointbus.messages.status import Level, Status
from jointbus.messages.std_msgs import Header
from support.rosbags_oracle import register, rosbags_cdr, rosbags_decode, typestore

TN = "hb50_commons/msg/Status"
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))
HEADERS = st.builds(
    Header, st.builds(Time, st.integers(-(2**31), 2**31 - 1), st.integers(0, 2**32 - 1)), TEXT
)
STATUSES = st.builds(Status, HEADERS, st.sampled_from(Level), TEXT, TEXT, st.binary(max_size=64))


def test_field_names_order_types_and_constants_are_the_seeds() -> None:
    assert definition_text(schema_of(Status)) == (
        "byte OK=1\nbyte WARN=2\nbyte ERROR=3\nbyte STALE=4\n"
        "std_msgs/Header header\n"
        "byte level\n"
        "string reporting_node\n"
        "string status\n"
        "byte[] data\n"
    )
    assert [(m.name, int(m)) for m in Level] == [("OK", 1), ("WARN", 2), ("ERROR", 3), ("STALE", 4)]


def test_rosbags_reads_the_level_constants() -> None:
    register(Status)
    cls = typestore().types[TN]
    assert (cls.OK, cls.WARN, cls.ERROR, cls.STALE) == (1, 2, 3, 4)


@given(STATUSES)
def test_bytes_match_rosbags_and_round_trip(msg: Status) -> None:
    data = msg.to_cdr()
    assert data == rosbags_cdr(msg)
    assert Status.from_cdr(data) == msg
    assert rosbags_decode(Status, data) == msg


@pytest.mark.parametrize(
    ("make", "level"),
    [
        (Status.ok, Level.OK),
        (Status.warn, Level.WARN),
        (Status.error, Level.ERROR),
        (Status.stale, Level.STALE),
    ],
)
def test_constructors_per_level(make: Any, level: Level) -> None:
    before = time.time_ns()
    msg = make("bridge", "text", b"\x01")
    after = time.time_ns()
    assert (msg.level, msg.reporting_node, msg.status, msg.data) == (
        level,
        "bridge",
        "text",
        b"\x01",
    )
    assert before <= msg.header.stamp.to_ns() <= after


def test_heartbeat_and_explicit_header() -> None:
    header = Header.at_ns(5, "")
    beat = Status.ok("control", header=header)
    assert (beat.level, beat.status, beat.header) == (Level.OK, "", header)


def test_decoded_level_is_a_level_member() -> None:
    assert Status.from_cdr(Status.warn("n", "t").to_cdr()).level is Level.WARN
    assert Status(level=3).level is Level.ERROR


@pytest.mark.parametrize("level", [0, 5, 255])
def test_level_outside_the_enum_is_rejected(level: int) -> None:
    with pytest.raises(LimitError) as info:
        Status(level=level)
    assert info.value.field == "level"
    assert "OK=1" in str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"level": True}, "level"),
        ({"level": "OK"}, "level"),
        ({"reporting_node": None}, "reporting_node"),
        ({"status": b"x"}, "status"),
        ({"data": "text"}, "data"),
        ({"data": [1, 2]}, "data"),
        ({"header": Time()}, "header"),
    ],
)
def test_wrong_types_are_rejected_by_field(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as info:
        Status(**kwargs)
    assert info.value.field == field


def test_bytearray_data_is_stored_as_bytes() -> None:
    assert Status(data=bytearray(b"ab")).data == b"ab"


def test_decoding_an_unknown_level_is_a_decode_error() -> None:
    data = bytearray(Status.ok("n").to_cdr())
    # header: stamp (8) + frame_id "" (4 + 1) → level at offset 4 + 13.
    assert data[4 + 13] == 1
    data[4 + 13] = 9
    with pytest.raises(DecodeError, match="level"):
        Status.from_cdr(bytes(data))


def test_hb50_code_keeps_importing_the_same_status_type() -> None:
    """Honey Badger code and existing bags keep working: one class, same wire name, same bytes."""
    from jointbus.robots.hb50 import messages as hb50
    from jointbus.robots.hb50.messages import status as hb50_status

    assert hb50.Status is Status and hb50.Level is Level
    assert hb50_status.Status is Status and hb50_status.Level is Level
    report = Status.warn("bridge_node", "knee hot", b"\x01", header=Header(Time(3, 4), "base"))
    assert hb50.Status.TYPE_NAME == TN
    assert hb50.Status.from_cdr(report.to_cdr()) == report
    assert report.to_cdr() == rosbags_cdr(report)


def test_the_bundled_registry_decodes_status_by_its_wire_name() -> None:
    from jointbus.messages.registry import default_registry

    assert default_registry().by_type_name(TN) is Status
