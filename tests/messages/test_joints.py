"""Joints (Rock base::samples::Joints): lookup by name, length and name rules, wire."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.messages.errors import (
    LengthMismatchError,
    NonFiniteError,
    UnknownJointError,
    ValidationError,
)
from jointbus.messages.joint_sample import AmbiguousModeError, JointSample, Mode
from jointbus.messages.joints import Joints
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header
from support.rosbags_oracle import rosbags_cdr, rosbags_decode

MAYBE = st.one_of(st.just(math.nan), st.floats(allow_nan=False, allow_infinity=False))
SAMPLES = st.builds(JointSample, MAYBE, MAYBE, MAYBE, MAYBE, MAYBE)
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))
HEADERS = st.builds(
    Header, st.builds(Time, st.integers(-(2**31), 2**31 - 1), st.integers(0, 10**9 - 1)), TEXT
)


@st.composite
def joints(draw: st.DrawFn) -> Joints:
    names = draw(st.lists(TEXT.filter(bool), unique=True, max_size=8))
    samples = draw(st.lists(SAMPLES, min_size=len(names), max_size=len(names)))
    return Joints(draw(HEADERS), names, samples)


def make() -> Joints:
    return Joints(
        Header.at_ns(1_500_000_000, "base"),
        ("hip", "knee"),
        (JointSample.from_position(0.3), JointSample(position=1.0, speed=0.5)),
    )


def test_lookup_by_name() -> None:
    j = make()
    assert j.index("knee") == 1
    assert j.sample("hip") == JointSample.from_position(0.3)
    assert j["knee"].speed == 0.5
    assert "hip" in j and "ankle" not in j
    assert len(j) == 2
    assert list(j) == list(zip(j.names, j.samples, strict=True))
    assert j.time == Time(1, 500_000_000)


def test_unknown_name_raises_a_typed_error_carrying_the_name() -> None:
    j = make()
    for call in (lambda: j.sample("ankle"), lambda: j["ankle"], lambda: j.index("ankle")):
        with pytest.raises(UnknownJointError) as info:
            call()
        assert info.value.name == "ankle"
        assert info.value.known == ("hip", "knee")
        assert isinstance(info.value, LookupError)


def test_mode_by_name_names_the_joint_when_ambiguous() -> None:
    j = make()
    assert j.mode("hip") is Mode.POSITION
    with pytest.raises(AmbiguousModeError) as info:
        j.mode("knee")
    assert (info.value.joint, info.value.index) == ("knee", 1)
    assert "joint 'knee' (index 1)" in str(info.value)


@pytest.mark.parametrize("count", [0, 1, 3])
def test_length_mismatch_is_rejected(count: int) -> None:
    with pytest.raises(LengthMismatchError, match=r"field 'samples' = '\d samples'; expected one"):
        Joints(Header(), ("hip", "knee"), (JointSample(),) * count)


def test_duplicate_and_empty_names_are_rejected_naming_the_index() -> None:
    with pytest.raises(ValidationError, match=r"joint 'hip' \(index 2\).*also at index 0"):
        Joints(Header(), ("hip", "knee", "hip"), (JointSample(),) * 3)
    with pytest.raises(ValidationError, match=r"index 1: field 'names' = ''"):
        Joints(Header(), ("hip", ""), (JointSample(),) * 2)


def test_non_sample_is_rejected_naming_joint_and_index() -> None:
    with pytest.raises(ValidationError, match=r"joint 'knee' \(index 1\): field 'samples' = 0.5"):
        Joints(Header(), ("hip", "knee"), (JointSample(), 0.5))  # type: ignore[arg-type]


def test_lists_are_stored_as_tuples_and_from_pairs_keeps_order() -> None:
    j = Joints(Header(), ["a", "b"], [JointSample(), JointSample.from_speed(1)])
    assert j.names == ("a", "b")
    assert type(j.samples) is tuple
    assert Joints.from_pairs({"a": JointSample(), "b": JointSample.from_speed(1.0)}.items()) == j


def test_wire_definition() -> None:
    text = Joints.msgdef()
    assert text.startswith(
        "std_msgs/Header header\nstring[] names\njointbus_msgs/JointSample[] samples\n"
    )
    assert "MSG: jointbus_msgs/JointSample" in text


@given(joints())
def test_bytes_match_rosbags_and_round_trip(j: Joints) -> None:
    encoded = j.to_cdr()
    assert encoded == rosbags_cdr(j)
    assert Joints.from_cdr(encoded) == j
    assert rosbags_decode(Joints, encoded) == j


# ------------------------------------------------------------------------------------------------
# from_arrays: the one-pass builder of the array node (same message, same errors)
# ------------------------------------------------------------------------------------------------
COLUMNS = ("position", "speed", "effort", "raw", "acceleration")


@st.composite
def named_columns(draw: st.DrawFn, min_size: int = 0) -> tuple[tuple[str, ...], dict[str, Any]]:
    names = tuple(draw(st.lists(TEXT.filter(bool), unique=True, min_size=min_size, max_size=8)))
    n = len(names)
    cols = {
        name: np.array(draw(st.lists(MAYBE, min_size=n, max_size=n)), dtype=np.float64)
        for name in COLUMNS
    }
    return names, cols


@given(HEADERS, named_columns())
def test_from_arrays_builds_what_the_constructors_build(
    header: Header, named: tuple[tuple[str, ...], dict[str, Any]]
) -> None:
    names, cols = named
    built = Joints.from_arrays(header, names, **cols)
    expected = Joints(
        header,
        names,
        tuple(
            JointSample(*(cols[c][i].item() for c in COLUMNS)) for i in range(len(names))
        ),
    )
    assert built == expected
    assert built.to_cdr() == expected.to_cdr()
    assert type(built.names) is tuple and type(built.samples) is tuple
    for mine, theirs in zip(built.samples, expected.samples, strict=True):
        assert type(mine) is JointSample
        for a, b in zip(mine.values(), theirs.values(), strict=True):
            assert type(a) is float and (a == b or (math.isnan(a) and math.isnan(b)))
    listed = {c: column.tolist() for c, column in cols.items()}  # any sequence: same message
    assert Joints.from_arrays(header, list(names), **listed) == expected  # type: ignore[arg-type]


@given(named_columns(min_size=1), st.data())
def test_from_arrays_refuses_an_infinity_naming_joint_index_field_and_value(
    named: tuple[tuple[str, ...], dict[str, Any]], data: st.DataObject
) -> None:
    names, cols = named
    index = data.draw(st.integers(0, len(names) - 1))
    field = data.draw(st.sampled_from(COLUMNS))
    bad = data.draw(st.sampled_from((math.inf, -math.inf)))
    cols[field][index] = bad
    with pytest.raises(ValidationError) as constructor:
        JointSample(**{c: cols[c][index].item() for c in COLUMNS})
    with pytest.raises(NonFiniteError) as built:
        Joints.from_arrays(Header(), names, **cols)
    err = built.value
    assert type(err) is type(constructor.value)
    assert (err.field, err.index, err.joint, err.value) == (field, index, names[index], bad)
    assert f"joint {names[index]!r} (index {index}): field {field!r} = {bad!r}" in str(err)


def test_from_arrays_refuses_bad_names_and_lengths_as_the_constructor() -> None:
    cols = {c: np.zeros(2) for c in COLUMNS}
    with pytest.raises(ValidationError, match="a unique joint name") as info:
        Joints.from_arrays(Header(), ("hip", "hip"), **cols)
    assert (info.value.joint, info.value.index) == ("hip", 1)
    with pytest.raises(LengthMismatchError, match="field 'raw' = '1 values'"):
        Joints.from_arrays(Header(), ("hip", "knee"), **{**cols, "raw": np.zeros(1)})
    with pytest.raises(ValidationError, match="field 'header'"):
        Joints.from_arrays(None, ("hip", "knee"), **cols)  # type: ignore[arg-type]
