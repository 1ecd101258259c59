"""ActuatorData / ActuatorArrayData: state-flag rules, NaN = not measured, wire (rosbags oracle)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.codec import DecodeError
from jointbus.messages.actarray import ActuatorArrayData, ActuatorData, ActuatorState
from jointbus.messages.errors import (
    LengthMismatchError,
    LimitError,
    NonFiniteError,
    ValidationError,
)
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header
from support.rosbags_oracle import rosbags_cdr, rosbags_decode

MAYBE = st.one_of(st.just(math.nan), st.floats(allow_nan=False, allow_infinity=False))
VALID_STATES = st.sampled_from(
    [s for s in range(128) if s & 6 != 6 and s & 3 != 3 and s & 17 != 17]
)
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))
HEADERS = st.builds(
    Header, st.builds(Time, st.integers(-(2**31), 2**31 - 1), st.integers(0, 10**9 - 1)), TEXT
)
DATA = st.builds(
    ActuatorData,
    MAYBE,
    MAYBE,
    MAYBE,
    MAYBE,
    VALID_STATES,
    MAYBE,
    MAYBE,
    st.integers(0, 2**32 - 1),
)
ARRAYS = st.builds(ActuatorArrayData, HEADERS, st.lists(DATA, max_size=6), st.booleans())


def data(**overrides: object) -> ActuatorData:
    fields: dict[str, object] = {
        "position": 0.5,
        "speed": 0.1,
        "acceleration": 0.0,
        "current": 1.2,
        "state": ActuatorState.MOVING,
    }
    fields.update(overrides)
    return ActuatorData(**fields)  # type: ignore[arg-type]


def test_fields_units_and_defaults() -> None:
    d = data()
    assert d.state is ActuatorState.MOVING
    assert math.isnan(d.effort) and math.isnan(d.temperature)  # not measured
    assert d.status == 0
    assert ActuatorData.TYPE_NAME == "jointbus_msgs/msg/ActuatorData"
    assert ActuatorData.msgdef() == (
        "float64 position\nfloat64 speed\nfloat64 acceleration\nfloat64 current\nuint8 state\n"
        "float64 effort\nfloat64 temperature\nuint32 status\n"
    )


def test_int_state_becomes_flags_and_ints_become_floats() -> None:
    d = data(state=12, position=1)
    assert d.state == ActuatorState.BRAKED | ActuatorState.STALLED
    assert type(d.state) is ActuatorState
    assert type(d.position) is float


@pytest.mark.parametrize("state", [16, 18, 20, 24, 26])
def test_unpowered_combines_with_moving_braked_and_stalled(state: int) -> None:
    """A limp actuator may fall (MOVING), be held by its brake (BRAKED) or blocked (STALLED)."""
    d = data(state=state)
    assert d.state & ActuatorState.UNPOWERED
    assert not d.state & ActuatorState.IDLE


@pytest.mark.parametrize("state", [33, 34, 40, 36, 50])
def test_limited_combines_with_every_motion_flag(state: int) -> None:
    """A joint the drive holds back at a limit may be braking (MOVING), held (IDLE), braked or
    stalled: LIMITED says why, the other flags say what it does."""
    d = data(state=state)
    assert d.state & ActuatorState.LIMITED


@pytest.mark.parametrize(
    ("state", "message"),
    [
        (ActuatorState.MOVING | ActuatorState.BRAKED, "MOVING and BRAKED not both set"),
        (6, "MOVING and BRAKED not both set"),
        (ActuatorState.IDLE | ActuatorState.MOVING, "IDLE and MOVING not both set"),
        (ActuatorState.IDLE | ActuatorState.UNPOWERED, "IDLE and UNPOWERED not both set"),
        (17, "IDLE and UNPOWERED not both set"),
        (128, "a combination of IDLE=1, MOVING=2, BRAKED=4, STALLED=8, UNPOWERED=16, LIMITED=32, "
         "STALE=64"),
        (-1, "a combination"),
        (True, "ActuatorState flags"),
        ("MOVING", "ActuatorState flags"),
    ],
)
def test_inconsistent_or_unknown_state_is_rejected(state: object, message: str) -> None:
    with pytest.raises(ValidationError, match=message) as info:
        data(state=state)
    assert info.value.field == "state"


@pytest.mark.parametrize("field", ["position", "speed", "acceleration", "current", "effort"])
def test_infinities_are_rejected_nan_means_not_measured(field: str) -> None:
    with pytest.raises(NonFiniteError, match=f"field '{field}' = inf"):
        data(**{field: math.inf})
    assert math.isnan(getattr(data(**{field: math.nan}), field))
    assert data(**{field: math.nan}) == data(**{field: math.nan})  # NaN equals NaN here


def test_status_word_is_uint32() -> None:
    assert data(status=2**32 - 1).status == 2**32 - 1
    with pytest.raises(LimitError, match="field 'status'"):
        data(status=2**32)
    with pytest.raises(ValidationError, match="field 'status'"):
        data(status=1.0)


def test_array_data_validates_its_actuators() -> None:
    a = ActuatorArrayData(Header(), [data(), data(state=ActuatorState.IDLE)], True)
    assert len(a) == 2 and type(a.actuators) is tuple and a.motor_power is True
    with pytest.raises(ValidationError, match=r"index 1: field 'actuators' = 0.5"):
        ActuatorArrayData(Header(), (data(), 0.5))  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="field 'motor_power' = 1"):
        ActuatorArrayData(Header(), (), 1)  # type: ignore[arg-type]


@given(DATA)
def test_actuator_bytes_match_rosbags_and_round_trip(d: ActuatorData) -> None:
    encoded = d.to_cdr()
    assert encoded == rosbags_cdr(d)
    assert ActuatorData.from_cdr(encoded) == d
    assert rosbags_decode(ActuatorData, encoded) == d


@given(ARRAYS)
def test_array_bytes_match_rosbags_and_round_trip(a: ActuatorArrayData) -> None:
    encoded = a.to_cdr()
    assert encoded == rosbags_cdr(a)
    assert ActuatorArrayData.from_cdr(encoded) == a
    assert rosbags_decode(ActuatorArrayData, encoded) == a


def test_decoding_moving_and_braked_is_a_decode_error() -> None:
    encoded = bytearray(data().to_cdr())
    state_offset = 4 + 4 * 8
    assert encoded[state_offset] == int(ActuatorState.MOVING)
    encoded[state_offset] = int(ActuatorState.MOVING | ActuatorState.BRAKED)
    with pytest.raises(DecodeError, match="MOVING and BRAKED"):
        ActuatorData.from_cdr(bytes(encoded))


# ------------------------------------------------------------------------------------------------
# from_arrays: the one-pass builder of the array node (same message, same errors)
# ------------------------------------------------------------------------------------------------
FLOAT_COLUMNS = ("position", "speed", "acceleration", "current", "effort", "temperature")


@st.composite
def columns(draw: st.DrawFn, min_size: int = 0) -> dict[str, Any]:
    """A reading's columns as a driver hands them out (float64, uint8 state, uint32 status)."""
    n = draw(st.integers(min_size, 8))
    out: dict[str, Any] = {
        name: np.array(draw(st.lists(MAYBE, min_size=n, max_size=n)), dtype=np.float64)
        for name in FLOAT_COLUMNS
    }
    out["state"] = np.array(draw(st.lists(VALID_STATES, min_size=n, max_size=n)), np.uint8)
    out["status"] = np.array(
        draw(st.lists(st.integers(0, 2**32 - 1), min_size=n, max_size=n)), np.uint32
    )
    return out


def by_constructors(header: Header, cols: dict[str, Any], motor_power: bool) -> ActuatorArrayData:
    """The message built element by element through the public constructors."""
    n = len(cols["position"])
    return ActuatorArrayData(
        header,
        tuple(
            ActuatorData(
                *(cols[name][i].item() for name in ("position", "speed", "acceleration")),
                cols["current"][i].item(),
                ActuatorState(cols["state"][i].item()),
                cols["effort"][i].item(),
                cols["temperature"][i].item(),
                cols["status"][i].item(),
            )
            for i in range(n)
        ),
        motor_power,
    )


def names_for(cols: dict[str, Any]) -> tuple[str, ...]:
    return tuple(f"j{i}" for i in range(len(cols["position"])))


@given(HEADERS, columns(), st.booleans())
def test_from_arrays_builds_what_the_constructors_build(
    header: Header, cols: dict[str, Any], motor_power: bool
) -> None:
    built = ActuatorArrayData.from_arrays(
        header, **cols, motor_power=motor_power, names=names_for(cols)
    )
    expected = by_constructors(header, cols, motor_power)
    assert built == expected
    assert built.to_cdr() == expected.to_cdr()
    assert type(built.actuators) is tuple
    for mine, theirs in zip(built.actuators, expected.actuators, strict=True):
        assert type(mine) is ActuatorData and type(mine.state) is ActuatorState
        for name in (*FLOAT_COLUMNS, "status"):  # built-in floats and ints, bit for bit
            a, b = getattr(mine, name), getattr(theirs, name)
            assert type(a) is type(b) and (a == b or (math.isnan(a) and math.isnan(b)))
    # lists (not numpy) take the element-by-element path and give the same message
    listed = {name: column.tolist() for name, column in cols.items()}
    assert ActuatorArrayData.from_arrays(header, **listed, motor_power=motor_power) == expected


@given(HEADERS, columns(min_size=1), st.data())
def test_from_arrays_refuses_what_the_constructor_refuses_naming_the_joint(
    header: Header, cols: dict[str, Any], data: st.DataObject
) -> None:
    n = len(cols["position"])
    index = data.draw(st.integers(0, n - 1))
    field = data.draw(st.sampled_from((*FLOAT_COLUMNS, "state")))
    if field == "state":
        bad: Any = data.draw(st.sampled_from((3, 6, 17, 128, 255)))
    else:
        bad = data.draw(st.sampled_from((math.inf, -math.inf)))
    cols[field][index] = bad
    row = {name: cols[name][index].item() for name in cols}
    with pytest.raises(ValidationError) as constructor:
        ActuatorData(**row)
    names = names_for(cols)
    with pytest.raises(ValidationError) as built:
        ActuatorArrayData.from_arrays(header, **cols, motor_power=True, names=names)
    err = built.value
    assert type(err) is type(constructor.value)
    assert (err.field, err.index, err.joint) == (field, index, names[index])
    assert err.value == bad and err.expected == constructor.value.expected
    assert f"joint {names[index]!r} (index {index}): field {field!r}" in str(err)


def test_from_arrays_refuses_columns_of_other_lengths_naming_the_column() -> None:
    cols = {name: np.zeros(3) for name in FLOAT_COLUMNS}
    cols["state"] = np.zeros(3, np.uint8)
    cols["status"] = np.zeros(3, np.uint32)
    cols["current"] = np.zeros(2)
    with pytest.raises(LengthMismatchError, match="field 'current' = '2 values'") as info:
        ActuatorArrayData.from_arrays(Header(), **cols, motor_power=False)
    assert info.value.field == "current"
    with pytest.raises(LengthMismatchError, match="one per joint name"):
        ActuatorArrayData.from_arrays(
            Header(), **{**cols, "current": np.zeros(3)}, motor_power=False, names=("a", "b")
        )


def test_from_arrays_checks_header_and_motor_power_as_the_constructor() -> None:
    cols = {name: np.zeros(1) for name in FLOAT_COLUMNS}
    cols["state"] = np.zeros(1, np.uint8)
    cols["status"] = np.zeros(1, np.uint32)
    with pytest.raises(ValidationError, match="field 'motor_power' = 1"):
        ActuatorArrayData.from_arrays(Header(), **cols, motor_power=1)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="field 'header'"):
        ActuatorArrayData.from_arrays(None, **cols, motor_power=True)  # type: ignore[arg-type]
