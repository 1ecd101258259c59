"""hb50 BridgeData: seed layout, rosbags-identical bytes, per-joint rules, NaN = not reported."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.codec import schema_of
from jointbus.codec.msgdef import definition_text
from jointbus.messages.errors import (
    LengthMismatchError,
    LimitError,
    NonFiniteError,
    UnknownJointError,
    ValidationError,
)
from jointbus.messages.geometry_msgs import Quaternion, Vector3
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header
from jointbus.robots.hb50.messages import JOINT_ERROR_MASK, BridgeData, JointStatusFlag
from support.rosbags_oracle import rosbags_cdr, rosbags_decode

HB50 = tuple(f"{leg}_j{j}" for leg in ("fr", "fl", "rl", "rr") for j in range(3))
MEASURED = ("joint_position", "joint_velocity", "joint_effort")
PER_JOINT = (*MEASURED, "joint_temperature", "joint_status")
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))
F32 = st.floats(width=32, allow_nan=False, allow_infinity=False)
F64 = st.floats(allow_nan=False)
HEADERS = st.builds(
    Header, st.builds(Time, st.integers(-(2**31), 2**31 - 1), st.integers(0, 2**32 - 1)), TEXT
)
NAMES = st.one_of(st.just(HB50), st.lists(TEXT.filter(bool), unique=True, max_size=6).map(tuple))


@st.composite
def frames(draw: st.DrawFn, measured: st.SearchStrategy[float] = F32) -> BridgeData:
    names = draw(NAMES)
    n = len(names)

    def arr(element: st.SearchStrategy[Any]) -> list[Any]:
        return draw(st.lists(element, min_size=n, max_size=n))

    return BridgeData(
        draw(HEADERS),
        draw(st.builds(Quaternion, F64, F64, F64, F64)),
        draw(st.builds(Vector3, F64, F64, F64)),
        draw(st.builds(Vector3, F64, F64, F64)),
        names,
        tuple(arr(measured)),
        tuple(arr(measured)),
        tuple(arr(measured)),
        bytes(arr(st.integers(0, 255))),
        tuple(arr(st.integers(0, 0xFFFF))),
    )


def valid(n: int = 3, **overrides: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "joint_name": HB50[:n],
        "joint_position": (0.25,) * n,
        "joint_velocity": (0.0,) * n,
        "joint_effort": (1.5,) * n,
        "joint_temperature": bytes([30] * n),
        "joint_status": (0,) * n,
    }
    kwargs.update(overrides)
    return kwargs


def test_field_names_order_and_wire_types_are_the_seeds() -> None:
    assert definition_text(schema_of(BridgeData)) == (
        "std_msgs/Header header\n"
        "geometry_msgs/Quaternion orientation\n"
        "geometry_msgs/Vector3 angular_velocity\n"
        "geometry_msgs/Vector3 linear_acceleration\n"
        "string[] joint_name\n"
        "float32[] joint_position\n"
        "float32[] joint_velocity\n"
        "float32[] joint_effort\n"
        "uint8[] joint_temperature\n"
        "uint16[] joint_status\n"
    )


@given(frames())
def test_bytes_match_rosbags_and_round_trip(msg: BridgeData) -> None:
    data = msg.to_cdr()
    assert data == rosbags_cdr(msg)
    assert BridgeData.from_cdr(data) == msg
    assert rosbags_decode(BridgeData, data) == msg


@given(frames(st.one_of(F32, st.just(math.nan))))
def test_nan_measurements_are_allowed_and_survive_the_wire(msg: BridgeData) -> None:
    # NaN != NaN, so compare bytes: rosbags agrees, and our decode re-encodes identically.
    data = msg.to_cdr()
    assert data == rosbags_cdr(msg)
    assert BridgeData.from_cdr(data).to_cdr() == data


def test_unreported_value_is_nan_after_decode() -> None:
    msg = BridgeData(**valid(3, joint_effort=(1.0, math.nan, 2.0)))
    back = BridgeData.from_cdr(msg.to_cdr())
    assert math.isnan(back.joint(HB50[1]).effort)
    assert back.joint_effort[0] == 1.0


@given(st.sampled_from(MEASURED), st.integers(0, 2), st.sampled_from([math.inf, -math.inf]))
def test_infinite_measurement_names_joint_index_and_field(field: str, i: int, v: float) -> None:
    values = [0.0, 0.0, 0.0]
    values[i] = v
    with pytest.raises(NonFiniteError) as info:
        BridgeData(**valid(3, **{field: values}))
    assert (info.value.field, info.value.joint, info.value.index) == (field, HB50[i], i)


@given(st.sampled_from(MEASURED), st.integers(0, 2))
def test_beyond_float32_is_a_limit_error(field: str, i: int) -> None:
    values = [0.0, 0.0, 0.0]
    values[i] = 1e39
    with pytest.raises(LimitError) as info:
        BridgeData(**valid(3, **{field: values}))
    assert (info.value.field, info.value.joint, info.value.index) == (field, HB50[i], i)


@given(st.sampled_from(PER_JOINT), st.integers(0, len(HB50) - 1))
def test_short_array_names_the_first_joint_without_a_value(field: str, length: int) -> None:
    base = valid(len(HB50))
    with pytest.raises(LengthMismatchError) as info:
        BridgeData(**{**base, field: base[field][:length]})
    assert (info.value.field, info.value.joint, info.value.index) == (field, HB50[length], length)


@given(st.sampled_from(PER_JOINT))
def test_long_array_is_rejected(field: str) -> None:
    base = valid(2)
    with pytest.raises(LengthMismatchError) as info:
        BridgeData(**{**base, field: base[field] + base[field][:1]})
    assert (info.value.field, info.value.index) == (field, 2)


@pytest.mark.parametrize(
    ("overrides", "field", "index", "error"),
    [
        ({"joint_temperature": [30, 256, 30]}, "joint_temperature", 1, LimitError),
        ({"joint_temperature": [30, 30, -1]}, "joint_temperature", 2, LimitError),
        ({"joint_temperature": [30.5, 30, 30]}, "joint_temperature", 0, ValidationError),
        ({"joint_status": (0, 0x10000, 0)}, "joint_status", 1, LimitError),
        ({"joint_status": (0, -1, 0)}, "joint_status", 1, LimitError),
        ({"joint_status": (0, 0, 1.0)}, "joint_status", 2, ValidationError),
        ({"joint_position": (0.0, "1", 0.0)}, "joint_position", 1, ValidationError),
        ({"joint_name": ("a", "b", "a")}, "joint_name", 2, ValidationError),
        ({"joint_name": ("a", "", "c")}, "joint_name", 1, ValidationError),
    ],
)
def test_bad_per_joint_values_name_field_and_index(
    overrides: dict[str, Any], field: str, index: int, error: type[ValidationError]
) -> None:
    with pytest.raises(error) as info:
        BridgeData(**valid(3, **overrides))
    assert (info.value.field, info.value.index) == (field, index)


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"orientation": Vector3()}, "orientation"),
        ({"angular_velocity": (0.0, 0.0, 0.0)}, "angular_velocity"),
        ({"linear_acceleration": None}, "linear_acceleration"),
        ({"header": None}, "header"),
    ],
)
def test_nested_fields_need_their_wire_type(overrides: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as info:
        BridgeData(**valid(3, **overrides))
    assert info.value.field == field


def test_numpy_and_lists_are_normalised() -> None:
    msg = BridgeData(
        **valid(
            3,
            joint_position=np.array([0.25, 0.25, 0.25], dtype=np.float32),
            joint_temperature=np.array([30, 30, 30], dtype=np.uint8),
            joint_status=np.zeros(3, dtype=np.uint16),
            joint_effort=[1.5, 1.5, 1.5],
        )
    )
    assert msg == BridgeData(**valid(3))
    assert type(msg.joint_temperature) is bytes
    assert all(type(s) is int for s in msg.joint_status)


def test_joint_reading_and_status_flags() -> None:
    status = (0, int(JointStatusFlag.TARGET_REACHED), int(JointStatusFlag.MOTION_ERROR))
    msg = BridgeData(**valid(3, joint_status=status, joint_temperature=bytes([30, 41, 99])))
    reading = msg.joint("fr_j2")
    assert reading.joint_index == 2
    assert reading.temperature == 99
    assert reading.status == JointStatusFlag.MOTION_ERROR
    assert reading.has_error
    assert not msg.joint("fr_j1").has_error
    assert JointStatusFlag.TARGET_REACHED not in JOINT_ERROR_MASK
    with pytest.raises(UnknownJointError):
        msg.joint("nope")
