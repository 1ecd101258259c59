"""Parameter, ParameterList, ParameterUpdate: rosbags-identical bytes, typed values, validation."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.messages.errors import LimitError, ValidationError
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header
from jointbus.model import load_robot
from jointbus.model.parameters import ParameterSpec, ParameterType
from jointbus.runtime.parameter_messages import (
    Parameter,
    ParameterKind,
    ParameterList,
    ParameterUpdate,
    format_value,
)
from support.rosbags_oracle import rosbags_cdr, rosbags_decode

TEXT = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"))
HEADERS = st.builds(
    Header, st.builds(Time, st.integers(-(2**31), 2**31 - 1), st.integers(0, 10**9 - 1)), TEXT
)
PARAMETERS = st.builds(
    Parameter,
    name=TEXT,
    type=st.sampled_from(list(ParameterKind)),
    float_value=st.floats(allow_nan=False),
    int_value=st.integers(-(2**63), 2**63 - 1),
    bool_value=st.booleans(),
    min=st.floats(allow_nan=False),
    max=st.floats(allow_nan=False),
    unit=TEXT,
    description=TEXT,
)
LISTS = st.builds(
    ParameterList,
    header=HEADERS,
    node=TEXT,
    parameters=st.lists(PARAMETERS, max_size=5, unique_by=lambda p: p.name).map(tuple),
)
UPDATES = st.builds(
    ParameterUpdate, header=HEADERS, node=TEXT, name=TEXT, value=TEXT, request_id=TEXT
)


@given(LISTS)
def test_parameter_list_bytes_match_rosbags_and_round_trip(msg: ParameterList) -> None:
    data = msg.to_cdr()
    assert data == rosbags_cdr(msg)
    assert ParameterList.from_cdr(data) == msg
    assert rosbags_decode(ParameterList, data) == msg


@given(UPDATES)
def test_parameter_update_bytes_match_rosbags_and_round_trip(msg: ParameterUpdate) -> None:
    data = msg.to_cdr()
    assert data == rosbags_cdr(msg)
    assert ParameterUpdate.from_cdr(data) == msg
    assert rosbags_decode(ParameterUpdate, data) == msg


def test_definition_has_type_constants_and_typed_value_fields() -> None:
    text = Parameter.msgdef()
    for line in ("uint8 TYPE_FLOAT=1", "uint8 TYPE_INT=2", "uint8 TYPE_BOOL=3"):
        assert line in text
    for line in ("float64 float_value", "int64 int_value", "bool bool_value", "float64 min"):
        assert line in text
    assert "jointbus_msgs/Parameter[] parameters" in ParameterList.msgdef()


def test_every_robot_file_parameter_survives_the_wire_with_value_bounds_and_unit() -> None:
    for spec in load_robot("hb50").parameters:
        record = Parameter.of(spec, spec.default)
        back = Parameter.from_cdr(record.to_cdr())
        assert back.value == spec.default and type(back.value) is type(spec.default)
        assert back.to_spec() == spec
        assert (back.unit, back.description) == (spec.unit, spec.description)


def test_each_type_uses_its_own_value_field_and_unbounded_is_infinite() -> None:
    ints = Parameter.of(ParameterSpec("n", ParameterType.INT, 3, 1, None), 7)
    assert (ints.type, ints.int_value, ints.float_value, ints.value) == (ParameterKind.INT, 7, 0, 7)
    assert (ints.min, ints.max) == (1.0, math.inf)
    flag = Parameter.of(ParameterSpec("on", ParameterType.BOOL, True), False)
    assert (flag.type, flag.value, flag.min, flag.max) == (
        ParameterKind.BOOL,
        False,
        -math.inf,
        math.inf,
    )
    assert flag.to_spec().min is None and flag.to_spec().max is None
    assert ints.to_spec() == ParameterSpec("n", ParameterType.INT, 7, 1, None)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_float_text_round_trips_exactly(value: float) -> None:
    assert float(format_value(value)) == value


def test_value_text_of_each_type() -> None:
    assert (format_value(True), format_value(False), format_value(3), format_value(0.25)) == (
        "true",
        "false",
        "3",
        "0.25",
    )


@pytest.mark.parametrize(
    ("kwargs", "field", "error"),
    [
        ({"type": 9}, "type", LimitError),
        ({"type": "float"}, "type", ValidationError),
        ({"min": math.nan}, "min/max", ValidationError),
        ({"int_value": 1.5}, "int_value", ValidationError),
        ({"int_value": 2**63}, "int_value", LimitError),
        ({"bool_value": 1}, "bool_value", ValidationError),
        ({"name": b"x"}, "name", ValidationError),
    ],
)
def test_invalid_parameter_records_are_refused_naming_the_field(
    kwargs: dict[str, object], field: str, error: type[Exception]
) -> None:
    with pytest.raises(error, match=field.replace("/", ".")):
        Parameter(**kwargs)  # type: ignore[arg-type]


def test_a_list_refuses_duplicate_names_and_foreign_entries() -> None:
    with pytest.raises(ValidationError, match=r"parameters\[1\]\.name"):
        ParameterList(parameters=(Parameter(name="a"), Parameter(name="a")))
    with pytest.raises(ValidationError, match=r"parameters\[0\]"):
        ParameterList(parameters=("a",))  # type: ignore[arg-type]
    listed = ParameterList(parameters=[Parameter(name="a"), Parameter(name="b")])  # type: ignore[arg-type]
    assert listed.names == ("a", "b") and listed.get("b") == Parameter(name="b")
    assert listed.get("c") is None


def test_an_update_refuses_a_non_text_value() -> None:
    with pytest.raises(ValidationError, match="value"):
        ParameterUpdate(node="n", name="kp", value=80.0)  # type: ignore[arg-type]
