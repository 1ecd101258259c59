"""VALUES → message (``jointbus topic pub``): fields, nesting, defaults, stamps and clear errors."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.cli.values import MISSING, ValuesError, build_message, parse_values
from jointbus.math import Transform2D
from jointbus.messages.actarray.commands import PositionCommand
from jointbus.messages.errors import LengthMismatchError, LimitError
from jointbus.messages.joint_state import JointState
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header
from jointbus.messages.tf2_msgs import TFMessage
from jointbus.robots.hb50.messages import Level, RobotState, Status

NOW_NS = 1_700_000_000_123_456_789


def build(cls: type, text: str, **kwargs: object) -> object:
    return build_message(cls, parse_values(text), now_ns=NOW_NS, **kwargs)  # type: ignore[arg-type]


def test_the_issue_example_builds_a_status() -> None:
    msg = build(Status, "{level: 2, reporting_node: me, status: hello}")
    assert msg == Status(Header(Time.from_ns(NOW_NS)), Level.WARN, "me", "hello", b"")


def test_json_is_accepted_as_yaml() -> None:
    msg = build(Status, '{"level": 3, "status": "x", "data": [1, 2, 255]}')
    assert isinstance(msg, Status)
    assert (msg.level, msg.status, msg.data) == (Level.ERROR, "x", b"\x01\x02\xff")


def test_empty_values_give_defaults_and_a_stamped_header() -> None:
    msg = build(Status, "")
    assert msg == Status(Header(Time.from_ns(NOW_NS)))


def test_a_given_stamp_is_kept_and_auto_stamp_can_be_off() -> None:
    msg = build(Status, "{header: {stamp: {sec: 5, nanosec: 6}, frame_id: base}}")
    assert isinstance(msg, Status)
    assert msg.header == Header(Time(5, 6), "base")
    partial = build(Status, "{header: {frame_id: base}}")
    assert isinstance(partial, Status)
    assert partial.header == Header(Time.from_ns(NOW_NS), "base")
    unstamped = build(Status, "{}", auto_stamp=False)
    assert isinstance(unstamped, Status)
    assert unstamped.header == Header()


def test_constant_names_stand_for_their_values() -> None:
    msg = build(Status, "{level: STALE}")
    assert isinstance(msg, Status)
    assert msg.level is Level.STALE


def test_nested_lists_of_messages_and_tuples() -> None:
    msg = build(
        RobotState,
        "{leg: [{leg_name: fl, contact: true, foot_pos_body: {x: 0.1, y: 2, z: -3}}, "
        "{leg_name: fr}], pose: {orientation: {w: 1.0}}}",
    )
    assert isinstance(msg, RobotState)
    assert [leg.leg_name for leg in msg.leg] == ["fl", "fr"]
    assert msg.leg[0].contact is True
    pos = msg.leg[0].foot_pos_body
    assert (pos.x, pos.y, pos.z) == (0.1, 2.0, -3.0)
    assert isinstance(pos.y, float)
    assert isinstance(msg.leg, tuple)


def test_headers_inside_sequences_are_stamped() -> None:
    msg = build(TFMessage, "{transforms: [{child_frame_id: a}, {child_frame_id: b}]}")
    assert isinstance(msg, TFMessage)
    assert all(t.header.stamp == Time.from_ns(NOW_NS) for t in msg.transforms)


def test_typed_joint_state_takes_shaped_values() -> None:
    msg = build(JointState, "{names: [hip, base], positions: [0.5, {x: 1, y: 2, theta: 0.25}]}")
    assert isinstance(msg, JointState)
    assert msg.positions == (0.5, Transform2D(1.0, 2.0, 0.25))


def test_optional_fields_take_null() -> None:
    assert build(PositionCommand, "{joint: null, position: 1}") == PositionCommand(None, 1.0)
    assert build(PositionCommand, "{joint: 3, position: -1.5}") == PositionCommand(3, -1.5)


def test_yaml_nan_and_infinities_reach_float_fields() -> None:
    msg = build(RobotState, "{pose: {position: {x: .nan, y: .inf, z: -.inf}}}")
    assert isinstance(msg, RobotState)
    position = msg.pose.position
    assert math.isnan(position.x)
    assert (position.y, position.z) == (math.inf, -math.inf)


# ---- errors --------------------------------------------------------------------------------------
def test_unknown_field_is_named_with_the_valid_ones() -> None:
    with pytest.raises(ValuesError) as info:
        build(Status, "{lvl: 2}")
    text = str(info.value)
    assert info.value.path == "lvl"
    assert "did you mean 'level'" in text
    assert "header, level, reporting_node, status, data" in text


def test_unknown_nested_field_has_its_path() -> None:
    with pytest.raises(ValuesError) as info:
        build(RobotState, "{leg: [{leg_name: a}, {leg_nam: b}]}")
    assert info.value.path == "leg[1].leg_nam"


def test_missing_required_field_is_named() -> None:
    with pytest.raises(ValuesError) as info:
        build(PositionCommand, "{position: 1.0}")
    assert info.value.path == "joint"
    assert info.value.value is MISSING
    assert "field 'joint' is missing" in str(info.value)


@pytest.mark.parametrize(
    ("text", "path", "fragment"),
    [
        ("{status: 12}", "status", "a string"),
        ("{level: x}", "level", "OK, WARN, ERROR, STALE"),
        ("{level: 1.0}", "level", "an integer"),
        ("{level: true}", "level", "an integer"),
        ("{data: [256]}", "data[0]", "[0, 255]"),
        ("{data: 7}", "data", "a list of integers"),
        ("{header: {stamp: {sec: 1.5}}}", "header.stamp.sec", "an integer (int32)"),
        ("{header: {stamp: {nanosec: -1}}}", "header.stamp.nanosec", "[0, 4294967295]"),
        ("{header: 3}", "header", "a mapping of the fields of std_msgs/msg/Header"),
    ],
)
def test_bad_values_name_field_value_and_expectation(text: str, path: str, fragment: str) -> None:
    with pytest.raises(ValuesError) as info:
        build(Status, text)
    assert info.value.path == path
    assert fragment in str(info.value)


def test_message_validation_errors_propagate_unchanged() -> None:
    with pytest.raises(LimitError, match="level"):
        build(Status, "{level: 9}")
    with pytest.raises(LengthMismatchError):
        build(JointState, "{names: [a, b], positions: [1.0]}")


def test_values_must_be_a_mapping_of_names() -> None:
    for text in ("[1, 2]", "just text", "{1: 2}"):
        with pytest.raises(ValuesError):
            parse_values(text)
    with pytest.raises(ValuesError, match="YAML or JSON"):
        parse_values("{unclosed: [1, 2}")


@given(
    level=st.sampled_from(list(Level)),
    node=st.text(alphabet=st.characters(codec="utf-8"), max_size=20),
    data=st.binary(max_size=16),
    sec=st.integers(-(2**31), 2**31 - 1),
    nanosec=st.integers(0, 999_999_999),
)
def test_any_valid_status_is_built_from_its_fields(
    level: Level, node: str, data: bytes, sec: int, nanosec: int
) -> None:
    values = {
        "header": {"stamp": {"sec": sec, "nanosec": nanosec}},
        "level": int(level),
        "reporting_node": node,
        "data": list(data),
    }
    assert build_message(Status, values) == Status(
        Header(Time(sec, nanosec)), level, node, "", data
    )


@given(st.integers().filter(lambda v: not 0 <= v <= 255))
def test_bytes_out_of_range_are_rejected_whatever_the_value(value: int) -> None:
    with pytest.raises(ValuesError) as info:
        build_message(Status, {"data": [0, value]})
    assert info.value.path == "data[1]"


def test_unchecked_builds_what_the_message_would_refuse_and_it_encodes() -> None:
    import math

    from jointbus.codec.errors import DecodeError
    from jointbus.messages.errors import ValidationError
    from jointbus.robots.hb50.messages import JointCommand

    values = {"name": ["a", "b"], "kp": [float("nan"), 1.0], "kd": [-3.0], "t_pos": [0.1, 0.2]}
    with pytest.raises(ValidationError):
        build_message(JointCommand, values)
    raw = build_message(JointCommand, values, unchecked=True)
    assert type(raw) is JointCommand
    assert math.isnan(raw.kp[0]) and raw.kd == (-3.0,) and raw.t_vel == ()
    with pytest.raises(DecodeError, match=r"kp|kd|t_vel"):  # a receiver refuses the bytes
        JointCommand.from_cdr(raw.to_cdr())


def test_unchecked_still_requires_the_wire_types() -> None:
    from jointbus.robots.hb50.messages import JointCommand

    with pytest.raises(ValuesError, match="kp"):
        build_message(JointCommand, {"kp": ["soft"]}, unchecked=True)


@pytest.mark.parametrize("key", ["on", "off", "yes", "no", "true", "On"])
def test_a_yaml_boolean_key_is_explained_with_the_quoted_fix(key: str) -> None:
    """Issue 12 item 9: ``'{on: false}'`` reads as ``{True: False}`` (YAML 1.1); the error says so
    and shows the quoted form instead of "expected field names that are strings"."""
    with pytest.raises(ValuesError) as info:
        parse_values(f"{{{key}: false}}")
    text = str(info.value)
    assert "YAML 1.1" in text and f"{key!r}" in text, text
    assert f'\'{{"{key}": false}}\'' in text, text  # the quoted form to type instead


def test_a_missing_per_joint_array_is_refused_with_a_note_that_it_was_not_given() -> None:
    """``topic pub``'s help says missing fields take their defaults: for an array that must have
    one value per name the default (empty) is refused by the message itself, and the error says
    the field was not given rather than leaving the user to wonder where '0 values' came from."""
    from jointbus.messages.errors import ValidationError
    from jointbus.messages.joint_impedance import JointImpedance

    given = {"name": ["a", "b"], "position": [0, 0], "velocity": [0, 0], "effort": [0, 0],
             "kp": [1, 1], "kd": [0, 0]}
    with pytest.raises(ValidationError) as info:
        build_message(JointImpedance, given)
    assert info.value.field == "brake"
    assert any(
        "'brake' was not given and took its default (an empty list)" in note
        for note in getattr(info.value, "__notes__", ())
    ), getattr(info.value, "__notes__", ())
    built = build_message(JointImpedance, {**given, "brake": [False, True]})
    assert built.brake == (False, True)
    with pytest.raises(ValidationError) as given_short:  # a field that was given: no such note
        build_message(JointImpedance, {**given, "brake": [False]})
    assert not any("not given" in n for n in getattr(given_short.value, "__notes__", ()))
