"""Message → text and JSON (``jointbus topic echo``): readable, valid YAML/JSON, and lossless enough
that what echo prints, pub builds back."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
import yaml
from hypothesis import assume, given
from hypothesis import strategies as st

from jointbus.cli.render import (
    format_float,
    format_string,
    render_json,
    render_text,
    to_plain,
)
from jointbus.cli.values import build_message
from jointbus.codec.schema import schema_of
from jointbus.codec.wire import FLOAT32_MAX, INT_RANGES, Primitive
from jointbus.math import Transform2D
from jointbus.messages.joint_state import JointState
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header
from jointbus.messages.tf2_msgs import TFMessage
from jointbus.robots.hb50.messages import BridgeState, Level, RobotState, Status

_TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=12)


def _primitive(kind: Primitive, *, finite: bool) -> st.SearchStrategy[Any]:
    if kind is Primitive.BOOL:
        return st.booleans()
    if kind is Primitive.STRING:
        return _TEXT
    if kind is Primitive.FLOAT64:
        return st.floats(allow_nan=not finite, allow_infinity=not finite)
    if kind is Primitive.FLOAT32:
        return st.floats(width=32, allow_nan=not finite, allow_infinity=not finite).filter(
            lambda x: not math.isfinite(x) or abs(x) <= FLOAT32_MAX
        )
    lo, hi = INT_RANGES[kind]
    return st.integers(lo, hi)


def messages(cls: type, *, finite: bool = True, depth: int = 0) -> st.SearchStrategy[Any]:
    """Any valid instance of the wire message ``cls`` (invalid combinations are skipped)."""
    fields: dict[str, st.SearchStrategy[Any]] = {}
    for f in schema_of(cls).fields:
        if cls is Status and f.name == "level":
            fields[f.name] = st.sampled_from(list(Level))
        elif f.kind == "primitive":
            fields[f.name] = _primitive(f.element, finite=finite)  # type: ignore[arg-type]
        elif f.kind == "message":
            fields[f.name] = messages(f.element, finite=finite, depth=depth + 1)  # type: ignore[arg-type]
        elif f.element in (Primitive.BYTE, Primitive.UINT8):
            fields[f.name] = st.binary(max_size=8)
        elif isinstance(f.element, Primitive):
            size = f.fixed_length
            fields[f.name] = st.lists(
                _primitive(f.element, finite=finite),
                min_size=size or 0,
                max_size=size if size is not None else 4,
            ).map(tuple)
        else:
            fields[f.name] = st.lists(
                messages(f.element, finite=finite, depth=depth + 1),  # type: ignore[arg-type]
                max_size=2 if depth == 0 else 1,
            ).map(tuple)
    return (
        st.fixed_dictionaries(fields).map(lambda kw: _try(cls, kw)).filter(lambda m: m is not None)
    )


def _try(cls: type, kwargs: dict[str, Any]) -> Any:
    try:
        return cls(**kwargs)
    except (ValueError, TypeError):
        return None


WIRE_TYPES = st.sampled_from([Status, TFMessage, RobotState, BridgeState])


def _status() -> Status:
    return Status(Header(Time(12, 34), "base"), Level.WARN, "bridge", "over temp", b"\x01\xff")


def test_text_looks_like_ros2_topic_echo() -> None:
    assert render_text(_status()) == (
        "header:\n"
        "  stamp:\n"
        "    sec: 12\n"
        "    nanosec: 34\n"
        "  frame_id: base\n"
        "level: 2  # WARN\n"
        "reporting_node: bridge\n"
        "status: over temp\n"
        "data: [1, 255]"
    )


def test_lists_of_messages_are_dash_items() -> None:
    msg = build_message(RobotState, {"leg": [{"leg_name": "fl"}, {"leg_name": "fr"}]}, now_ns=0)
    text = render_text(msg)
    assert "leg:\n- leg_name: fl\n  contact: false\n  foot_pos_body:\n    x: 0.0\n" in text
    assert "\n- leg_name: fr\n" in text


def test_floats_are_short_by_default_and_exact_on_request() -> None:
    msg = build_message(RobotState, {"pose": {"position": {"x": 0.123456789, "y": 1e-9}}}, now_ns=0)
    assert "x: 0.123457\n" in render_text(msg)
    assert "y: 1.0e-09\n" in render_text(msg)
    assert "x: 0.123456789\n" in render_text(msg, precision=None)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1.0"),
        (-0.0, "-0.0"),
        (1e-5, "1.0e-05"),
        (1e20, "1.0e+20"),
        (math.nan, ".nan"),
        (math.inf, ".inf"),
        (-math.inf, "-.inf"),
    ],
)
def test_float_text_reads_back_as_a_float(value: float, text: str) -> None:
    assert format_float(value, None) == text
    parsed = yaml.safe_load(text)
    assert isinstance(parsed, float)
    assert parsed == value or (math.isnan(parsed) and math.isnan(value))


@given(st.floats(), st.one_of(st.none(), st.integers(1, 17)))
def test_every_float_text_is_a_yaml_float(value: float, precision: int | None) -> None:
    parsed = yaml.safe_load(format_float(value, precision))
    assert isinstance(parsed, float)
    if precision is None:
        assert parsed == value or (math.isnan(parsed) and math.isnan(value))


@pytest.mark.parametrize("value", ["", "yes", "No", "null", "123", "1.5", "a: b", "#x", " x", "ü"])
def test_ambiguous_strings_are_quoted_so_yaml_keeps_them_strings(value: str) -> None:
    assert yaml.safe_load(f"k: {format_string(value)}") == {"k": value}


@given(_TEXT)
def test_every_string_reads_back_unchanged(value: str) -> None:
    assert yaml.safe_load(f"k: {format_string(value)}") == {"k": value}
    assert yaml.safe_load(f"k: [{format_string(value)}, x]") == {"k": [value, "x"]}


def test_typed_joint_state_shows_shaped_values_and_hides_internals() -> None:
    msg = JointState(("hip", "base"), (0.5, Transform2D(1.0, 2.0, 0.25)))
    text = render_text(msg)
    assert "positions:\n- 0.5\n- x: 1.0\n  y: 2.0\n  theta: 0.25\n" in text
    assert "_kinds" not in text
    assert "_kinds" not in render_json(msg)


def test_json_is_strict_with_non_finite_floats_as_strings() -> None:
    msg = build_message(
        RobotState,
        {"pose": {"position": {"x": math.nan, "y": math.inf, "z": -math.inf}}},
        now_ns=0,
    )
    line = render_json(msg)
    assert "\n" not in line
    data = json.loads(line, parse_constant=lambda c: pytest.fail(f"non-standard JSON {c}"))
    assert data["pose"]["position"] == {"x": "nan", "y": "inf", "z": "-inf"}
    assert data["motion_mode"] == 0


def test_json_has_every_field_in_order_with_bytes_as_ints() -> None:
    data = json.loads(render_json(_status()))
    assert list(data) == ["header", "level", "reporting_node", "status", "data"]
    assert data["data"] == [1, 255]
    assert data["level"] == 2


@given(WIRE_TYPES.flatmap(messages))
def test_text_at_full_precision_builds_back_the_same_message(msg: Any) -> None:
    parsed = yaml.safe_load(render_text(msg, precision=None))
    assert build_message(type(msg), parsed or {}, auto_stamp=False) == msg


@given(WIRE_TYPES.flatmap(messages))
def test_json_builds_back_the_same_message(msg: Any) -> None:
    assert build_message(type(msg), json.loads(render_json(msg)), auto_stamp=False) == msg


@given(WIRE_TYPES.flatmap(lambda cls: messages(cls, finite=False)))
def test_text_and_json_are_always_parseable(msg: Any) -> None:
    assume(msg is not None)
    assert isinstance(yaml.safe_load(render_text(msg)), dict)
    plain = json.loads(render_json(msg))
    assert list(plain) == list(to_plain(msg))


def test_text_bytes_show_as_text_and_binary_bytes_as_values() -> None:
    header = Header(Time(1, 2), "")
    text = Status(header, Level.OK, "bridge_node", "alive", b"state=run owner=control_node")
    assert render_text(text).endswith(
        '\ndata: "state=run owner=control_node"  # 28 bytes, UTF-8 text'
    )
    doc = b'{"joint": "fr_j2", "index": 2}'
    as_json = Status(header, Level.ERROR, "bridge_node", "rejected", doc)
    assert render_text(as_json).endswith(
        '\ndata: "{\\"joint\\": \\"fr_j2\\", \\"index\\": 2}"  # 30 bytes, JSON'
    )
    assert render_text(_status()).endswith("\ndata: [1, 255]")  # not text: the byte values
    for msg in (text, as_json):  # pasted into `topic pub`, the text builds the same message
        parsed = yaml.safe_load(render_text(msg, precision=None))
        assert build_message(Status, parsed, auto_stamp=False) == msg


def test_uint8_numbers_stay_numbers_even_when_they_spell_text() -> None:
    from jointbus.robots.hb50.messages import BridgeData

    frame = BridgeData(
        header=Header(Time(1, 2), ""),
        joint_name=("a", "b"),
        joint_position=[0.0, 0.0],
        joint_velocity=[0.0, 0.0],
        joint_effort=[0.0, 0.0],
        joint_temperature=b"45",  # 52 °C and 53 °C, not the text "45"
        joint_status=[0, 0],
    )
    assert "\njoint_temperature: [52, 53]\n" in render_text(frame)
