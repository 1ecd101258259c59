"""JointSample (Rock base::JointState): NaN = unset, predicates, mode, fields by mode, wire."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.codec import DecodeError
from jointbus.messages.errors import NonFiniteError, ValidationError
from jointbus.messages.joint_sample import (
    FIELDS,
    AmbiguousModeError,
    InvalidModeError,
    JointSample,
    Mode,
)
from support.rosbags_oracle import rosbags_cdr, rosbags_decode

VALUE = st.floats(allow_nan=False, allow_infinity=False)
MAYBE = st.one_of(st.just(math.nan), VALUE)
SAMPLES = st.builds(JointSample, MAYBE, MAYBE, MAYBE, MAYBE, MAYBE)
FIELD_MODES = [m for m in Mode if m is not Mode.UNSET]


def test_mode_has_rocks_order() -> None:
    assert [m.name for m in Mode] == [
        "POSITION",
        "SPEED",
        "EFFORT",
        "RAW",
        "ACCELERATION",
        "UNSET",
    ]
    assert [int(m) for m in Mode] == [0, 1, 2, 3, 4, 5]


def test_default_sample_is_unset() -> None:
    s = JointSample()
    assert all(math.isnan(v) for v in s.values())
    assert not any(
        (s.has_position(), s.has_speed(), s.has_effort(), s.has_raw(), s.has_acceleration())
    )
    assert s.mode() is Mode.UNSET
    assert s.set_fields() == ()


@pytest.mark.parametrize("mode", FIELD_MODES, ids=lambda m: m.name)
def test_one_constructor_per_field_sets_only_that_field(mode: Mode) -> None:
    name = FIELDS[mode]
    s = getattr(JointSample, f"from_{name}")(1.5)
    assert getattr(s, name) == 1.5
    assert s.set_fields() == (name,)
    assert s.mode() is mode
    assert s.get_field(mode) == 1.5
    assert s == JointSample.from_mode(mode, 1.5)
    for other in FIELD_MODES:
        other_name = FIELDS[other]
        assert getattr(s, f"has_{other_name}")() is (other is mode)
        assert getattr(s, f"is_{other_name}")() is (other is mode)


def test_is_means_only_field_set_while_has_means_set() -> None:
    s = JointSample(position=0.1, speed=0.2)
    assert s.has_position() and s.has_speed()
    assert not s.is_position() and not s.is_speed()


def test_several_fields_set_make_mode_ambiguous() -> None:
    s = JointSample(position=0.1, effort=2.0)
    with pytest.raises(AmbiguousModeError) as info:
        s.mode()
    assert info.value.fields == ("position", "effort")
    assert "position, effort" in str(info.value)


@given(SAMPLES)
def test_predicates_agree_with_mode(s: JointSample) -> None:
    set_fields = [name for name in FIELDS if getattr(s, f"has_{name}")()]
    assert set_fields == list(s.set_fields())
    if len(set_fields) > 1:
        with pytest.raises(AmbiguousModeError):
            s.mode()
        assert not any(getattr(s, f"is_{name}")() for name in FIELDS)
    elif set_fields:
        assert FIELDS[s.mode()] == set_fields[0]
        assert getattr(s, f"is_{set_fields[0]}")()
    else:
        assert s.mode() is Mode.UNSET


@pytest.mark.parametrize("mode", FIELD_MODES, ids=lambda m: m.name)
def test_set_field_returns_a_new_sample_and_leaves_the_original(mode: Mode) -> None:
    original = JointSample(position=1.0)
    changed = original.set_field(mode, -2.5)
    assert changed.get_field(mode) == -2.5
    assert original == JointSample(position=1.0)
    for other in FIELD_MODES:
        if other is not mode:
            assert changed.get_field(other) == original.get_field(other) or (
                math.isnan(changed.get_field(other)) and math.isnan(original.get_field(other))
            )


def test_set_field_nan_unsets_and_accepts_int_modes() -> None:
    s = JointSample(position=1.0, speed=2.0)
    assert s.set_field(1, math.nan) == JointSample(position=1.0)
    assert s.get_field(0) == 1.0


@pytest.mark.parametrize("bad", [Mode.UNSET, 5, 6, -1, True, "position", 1.0, None])
def test_invalid_mode_is_rejected_everywhere(bad: object) -> None:
    s = JointSample(position=1.0)
    for call in (
        lambda: s.get_field(bad),  # type: ignore[arg-type]
        lambda: s.set_field(bad, 1.0),  # type: ignore[arg-type]
        lambda: JointSample.from_mode(bad, 1.0),  # type: ignore[arg-type]
    ):
        with pytest.raises(InvalidModeError) as info:
            call()
        assert info.value.value is bad or info.value.value == bad
        assert "POSITION (0)" in str(info.value)


def test_ints_and_numpy_scalars_are_stored_as_float() -> None:
    s = JointSample(position=1, speed=np.float32(0.5), effort=np.int64(3))  # type: ignore[arg-type]
    assert s == JointSample(position=1.0, speed=0.5, effort=3.0)
    assert all(type(v) is float for v in s.values())


@pytest.mark.parametrize("name", FIELDS)
@pytest.mark.parametrize("bad", [math.inf, -math.inf])
def test_infinity_is_rejected_naming_the_field(name: str, bad: float) -> None:
    with pytest.raises(NonFiniteError, match=rf"field '{name}' = {bad!r}; expected a finite"):
        JointSample(**{name: bad})


@pytest.mark.parametrize("bad", ["1.0", None, True, [1.0], 10**400])
def test_non_numbers_are_rejected(bad: object) -> None:
    with pytest.raises(ValidationError, match="field 'speed'"):
        JointSample(speed=bad)  # type: ignore[arg-type]


def test_immutable() -> None:
    s = JointSample(position=1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.position = 2.0  # type: ignore[misc]


def test_unset_equals_unset_and_hashes_alike() -> None:
    a = JointSample(position=1.0)
    b = JointSample(position=1.0, speed=float("nan"))
    assert a == b
    assert hash(a) == hash(b)
    assert a != JointSample(position=1.0, speed=0.0)
    assert len({a, b}) == 1


def test_wire_definition() -> None:
    assert JointSample.TYPE_NAME == "jointbus_msgs/msg/JointSample"
    assert JointSample.msgdef() == (
        "float64 position\nfloat64 speed\nfloat64 effort\nfloat64 raw\nfloat64 acceleration\n"
    )


@given(SAMPLES)
def test_bytes_match_rosbags_and_round_trip(s: JointSample) -> None:
    encoded = s.to_cdr()
    assert encoded == rosbags_cdr(s)
    assert JointSample.from_cdr(encoded) == s
    assert rosbags_decode(JointSample, encoded) == s


def test_decoding_an_infinite_value_raises_decode_error() -> None:
    data = bytearray(JointSample(position=1.0).to_cdr())
    data[4:12] = np.float64(np.inf).tobytes()
    with pytest.raises(DecodeError, match="position"):
        JointSample.from_cdr(bytes(data))
