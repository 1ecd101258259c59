"""Actuator-array requests: power, brakes, geometry, speed and acceleration configuration."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.messages import jointbus_msgs
from jointbus.messages.actarray import (
    AccelConfigRequest,
    BrakesRequest,
    GeometryRequest,
    PowerRequest,
    SpeedConfigRequest,
)
from jointbus.messages.errors import LimitError, NonFiniteError, ValidationError
from support.rosbags_oracle import rosbags_cdr, rosbags_decode, typestore

POSITIVE = st.floats(min_value=1e-300, allow_nan=False, allow_infinity=False)
JOINTS = st.one_of(st.none(), st.integers(0, 2**31 - 1))


@pytest.mark.parametrize(("cls", "field"), [(PowerRequest, "on"), (BrakesRequest, "engaged")])
def test_switch_requests_take_a_bool(cls: type[Any], field: str) -> None:
    for value in (True, False):
        msg = cls(value)
        assert getattr(msg, field) is value
        assert msg.to_cdr() == rosbags_cdr(msg)
        assert cls.from_cdr(msg.to_cdr()) == msg
        assert rosbags_decode(cls, msg.to_cdr()) == msg
    with pytest.raises(ValidationError, match=f"field '{field}' = 1"):
        cls(1)


def test_geometry_request_is_byte_identical_to_a_ros_empty_message() -> None:
    msg = GeometryRequest()
    empty = typestore().types["std_msgs/msg/Empty"]()
    assert msg.to_cdr() == bytes(typestore().serialize_cdr(empty, "std_msgs/msg/Empty"))
    assert msg.to_cdr() == rosbags_cdr(msg)
    assert GeometryRequest.from_cdr(msg.to_cdr()) == msg
    with pytest.raises(ValidationError):
        GeometryRequest(1)


@pytest.mark.parametrize(
    ("cls", "field"), [(SpeedConfigRequest, "speed"), (AccelConfigRequest, "accel")]
)
def test_configured_limits_must_be_positive_and_finite(cls: type[Any], field: str) -> None:
    assert getattr(cls(None, 2), field) == 2.0
    for bad in (0.0, -1.0):
        with pytest.raises(
            LimitError, match=rf"index 3: field '{field}' = {bad!r}; expected a pos"
        ):
            cls(3, bad)
    with pytest.raises(NonFiniteError, match=f"field '{field}' = inf"):
        cls(None, math.inf)
    with pytest.raises(ValidationError, match="field 'joint'"):
        cls(-1, 1.0)
    assert cls(None, 1.0).to_wire().joint == jointbus_msgs.ALL_JOINTS


@pytest.mark.parametrize("cls", [SpeedConfigRequest, AccelConfigRequest], ids=lambda c: c.__name__)
@given(data=st.data())
def test_config_bytes_match_rosbags_and_round_trip(cls: type[Any], data: st.DataObject) -> None:
    msg = cls(data.draw(JOINTS), data.draw(POSITIVE))
    encoded = msg.to_cdr()
    assert encoded == rosbags_cdr(msg.to_wire())
    assert cls.from_cdr(encoded) == msg
    assert cls.from_wire(rosbags_decode(cls.WIRE, encoded)) == msg
