"""Actuator-array commands: joint None <-> Player's -1 on the wire, value rules, wire (oracle)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.codec import DecodeError
from jointbus.messages import jointbus_msgs
from jointbus.messages.actarray import (
    CurrentCommand,
    HomeCommand,
    MultiCurrentCommand,
    MultiPositionCommand,
    MultiSpeedCommand,
    PositionCommand,
    SpeedCommand,
)
from jointbus.messages.errors import (
    LengthMismatchError,
    LimitError,
    NonFiniteError,
    ValidationError,
)
from support.rosbags_oracle import rosbags_cdr, rosbags_decode

F = st.floats(allow_nan=False, allow_infinity=False)
JOINTS = st.one_of(st.none(), st.integers(0, 2**31 - 1))
SINGLE: dict[type[Any], st.SearchStrategy[Any]] = {
    PositionCommand: st.builds(PositionCommand, JOINTS, F),
    SpeedCommand: st.builds(SpeedCommand, JOINTS, F),
    HomeCommand: st.builds(HomeCommand, JOINTS),
    CurrentCommand: st.builds(CurrentCommand, JOINTS, F),
}
MULTI: dict[type[Any], st.SearchStrategy[Any]] = {
    cls: st.builds(cls, st.lists(F, min_size=1, max_size=12))
    for cls in (MultiPositionCommand, MultiSpeedCommand, MultiCurrentCommand)
}


def test_none_means_all_joints_and_is_minus_one_on_the_wire() -> None:
    cmd = HomeCommand()
    assert cmd.joint is None
    assert cmd.to_wire() == jointbus_msgs.ActuatorHomeCommand(-1)
    assert HomeCommand.from_cdr(cmd.to_cdr()).joint is None
    assert PositionCommand(3, 0.5).to_wire() == jointbus_msgs.ActuatorPositionCommand(3, 0.5)
    assert "int32 ALL_JOINTS=-1\nint32 joint\n" in HomeCommand.msgdef()
    assert PositionCommand.TYPE_NAME == "jointbus_msgs/msg/ActuatorPositionCommand"


def test_python_never_sees_the_sentinel() -> None:
    with pytest.raises(ValidationError, match="or None for all joints") as info:
        PositionCommand(-1, 0.0)
    assert info.value.field == "joint"
    with pytest.raises(LimitError, match="field 'joint' = -2"):
        SpeedCommand(-2, 0.0)
    with pytest.raises(LimitError, match="field 'joint'"):
        HomeCommand(2**31)
    with pytest.raises(ValidationError, match="field 'joint' = True"):
        CurrentCommand(True, 1.0)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match=r"field 'joint' = 1\.0"):
        CurrentCommand(1.0, 1.0)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("cls", "field"),
    [(PositionCommand, "position"), (SpeedCommand, "speed"), (CurrentCommand, "current")],
)
@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_values_must_be_finite_and_the_error_names_the_joint(
    cls: type[Any], field: str, bad: float
) -> None:
    with pytest.raises(NonFiniteError, match=rf"index 4: field '{field}' = {bad!r}") as info:
        cls(4, bad)
    assert info.value.index == 4
    assert getattr(cls(4, 2), field) == 2.0


@pytest.mark.parametrize("cls", list(MULTI), ids=lambda c: c.__name__)
def test_multi_commands_name_the_bad_index_and_need_an_actuator(cls: type[Any]) -> None:
    with pytest.raises(NonFiniteError, match=r"index 2: field '\w+' = nan") as info:
        cls([0.0, 1.0, math.nan])
    assert info.value.index == 2
    with pytest.raises(LengthMismatchError, match="one value per actuator"):
        cls([])
    assert cls([1, 2]) == cls((1.0, 2.0))


@pytest.mark.parametrize("cls", list(SINGLE), ids=lambda c: c.__name__)
@given(data=st.data())
def test_single_joint_bytes_match_rosbags_and_round_trip(
    cls: type[Any], data: st.DataObject
) -> None:
    cmd = data.draw(SINGLE[cls])
    encoded = cmd.to_cdr()
    assert encoded == rosbags_cdr(cmd.to_wire())
    assert cls.from_cdr(encoded) == cmd
    assert cls.from_wire(rosbags_decode(cls.WIRE, encoded)) == cmd


@pytest.mark.parametrize("cls", list(MULTI), ids=lambda c: c.__name__)
@given(data=st.data())
def test_multi_bytes_match_rosbags_and_round_trip(cls: type[Any], data: st.DataObject) -> None:
    cmd = data.draw(MULTI[cls])
    encoded = cmd.to_cdr()
    assert encoded == rosbags_cdr(cmd)
    assert cls.from_cdr(encoded) == cmd
    assert rosbags_decode(cls, encoded) == cmd


def test_decoding_a_negative_joint_other_than_all_is_a_decode_error() -> None:
    data = jointbus_msgs.ActuatorPositionCommand(-7, 0.0).to_cdr()
    with pytest.raises(DecodeError, match="joint"):
        PositionCommand.from_cdr(data)
