"""hb50 BridgeState: seed field layout (no header), rosbags-identical bytes and its rules."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.codec import schema_of
from jointbus.codec.msgdef import definition_text
from jointbus.messages.errors import LimitError, NonFiniteError, ValidationError
from jointbus.robots.hb50.messages import BridgeState
from support.rosbags_oracle import rosbags_cdr, rosbags_decode

FLOAT_FIELDS = (
    "battery",
    "bus_v",
    "bus_i",
    "bus_p",
    "bus_pt",
    "legs_v",
    "charger_v",
    "bridge_t",
    "ext1_t",
    "ext2_t",
)
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))
F32 = st.floats(width=32, allow_nan=False, allow_infinity=False)
STATES = st.builds(
    BridgeState,
    st.floats(0.0, 100.0, width=32),
    *([F32] * 9),
    st.booleans(),
    st.lists(TEXT, max_size=4).map(tuple),
    st.integers(0, 2**31 - 1),
)


def test_field_names_order_and_wire_types_are_the_seeds() -> None:
    assert definition_text(schema_of(BridgeState)) == (
        "".join(f"float32 {name}\n" for name in FLOAT_FIELDS)
        + "bool drives_enabled\nstring[] status\nint32 up_time\n"
    )


@given(STATES)
def test_bytes_match_rosbags_and_round_trip(msg: BridgeState) -> None:
    data = msg.to_cdr()
    assert data == rosbags_cdr(msg)
    assert BridgeState.from_cdr(data) == msg
    assert rosbags_decode(BridgeState, data) == msg


def test_float_values_are_rounded_to_float32() -> None:
    msg = BridgeState(bus_v=48.1)
    assert msg.bus_v != 48.1
    assert math.isclose(msg.bus_v, 48.1, rel_tol=1e-7)
    assert BridgeState.from_cdr(msg.to_cdr()).bus_v == msg.bus_v


def test_defaults_are_not_reported() -> None:
    msg = BridgeState()
    assert all(math.isnan(getattr(msg, f)) for f in FLOAT_FIELDS)
    assert (msg.drives_enabled, msg.status, msg.up_time) == (False, (), 0)
    assert BridgeState.from_cdr(msg.to_cdr()).to_cdr() == msg.to_cdr()


@given(st.sampled_from(FLOAT_FIELDS), st.sampled_from([math.inf, -math.inf]))
def test_infinities_are_rejected_by_field(field: str, value: float) -> None:
    with pytest.raises(NonFiniteError) as info:
        BridgeState(**{field: value})
    assert info.value.field == field


@given(st.sampled_from(FLOAT_FIELDS))
def test_beyond_float32_is_rejected_by_field(field: str) -> None:
    with pytest.raises(LimitError) as info:
        BridgeState(**{field: -1e39})
    assert info.value.field == field


@pytest.mark.parametrize("battery", [-0.5, 100.5])
def test_battery_is_a_percentage(battery: float) -> None:
    with pytest.raises(LimitError, match="'battery'"):
        BridgeState(battery=battery)


@pytest.mark.parametrize(
    ("kwargs", "field", "error"),
    [
        ({"up_time": -1}, "up_time", LimitError),
        ({"up_time": 2**31}, "up_time", LimitError),
        ({"up_time": 1.5}, "up_time", ValidationError),
        ({"drives_enabled": 1}, "drives_enabled", ValidationError),
        ({"status": "overheat"}, "status", ValidationError),
        ({"status": ("ok", 3)}, "status", ValidationError),
        ({"bus_v": "48"}, "bus_v", ValidationError),
        ({"bus_i": True}, "bus_i", ValidationError),
    ],
)
def test_bad_values_name_the_field(
    kwargs: dict[str, Any], field: str, error: type[ValidationError]
) -> None:
    with pytest.raises(error) as info:
        BridgeState(**kwargs)
    assert info.value.field == field


def test_status_list_is_normalised_to_tuple() -> None:
    assert BridgeState(status=["a", "b"]).status == ("a", "b")
