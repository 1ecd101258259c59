"""ActuatorGeometry / ArrayGeometry / Orientation3D: range and axis rules, math interop, wire."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus import math as jm
from jointbus.messages.actarray import (
    ActuatorGeometry,
    ActuatorType,
    ArrayGeometry,
    Orientation3D,
)
from jointbus.messages.errors import LimitError, NonFiniteError, ValidationError
from jointbus.messages.geometry_msgs import Point, Vector3
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header
from support.rosbags_oracle import rosbags_cdr, rosbags_decode

F = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))
HEADERS = st.builds(
    Header, st.builds(Time, st.integers(-(2**31), 2**31 - 1), st.integers(0, 10**9 - 1)), TEXT
)
ORIENTATIONS = st.builds(Orientation3D, F, F, F)
AXES = st.builds(Vector3, F, F, F).filter(lambda v: math.hypot(v.x, v.y, v.z) > 1e-6)


@st.composite
def geometries(draw: st.DrawFn) -> ActuatorGeometry:
    # + 0.0 turns -0.0 into 0.0: sorted() keeps (0.0, -0.0) as drawn, and st.floats(0.0, -0.0)
    # is refused (a `make test` run drew it)
    lo, hi = sorted((draw(F) + 0.0, draw(F) + 0.0))
    centre = draw(st.floats(lo, hi))
    home = draw(st.floats(lo, hi))
    return ActuatorGeometry(
        draw(st.sampled_from(ActuatorType)),
        draw(st.floats(0.0, 10.0)),
        draw(ORIENTATIONS),
        draw(AXES),
        lo,
        centre,
        hi,
        home,
        draw(st.floats(0.0, 100.0)),
        draw(st.booleans()),
    )


ARRAYS = st.builds(
    ArrayGeometry,
    HEADERS,
    st.lists(geometries(), max_size=4),
    st.builds(Point, F, F, F),
    ORIENTATIONS,
)


def geometry(**overrides: object) -> ActuatorGeometry:
    fields: dict[str, object] = {
        "type": ActuatorType.ROTARY,
        "length": 0.3,
        "orientation": Orientation3D(),
        "axis": Vector3(0.0, 0.0, 1.0),
        "min": -1.0,
        "centre": 0.0,
        "max": 1.0,
        "home": 0.5,
        "config_speed": 2.0,
        "has_brakes": True,
    }
    fields.update(overrides)
    return ActuatorGeometry(**fields)  # type: ignore[arg-type]


def test_valid_geometry_and_conversions() -> None:
    g = geometry(type=1, axis=jm.Vec3(1, 0, 0), length=1)
    assert g.type is ActuatorType.LINEAR
    assert g.axis == Vector3(1.0, 0.0, 0.0)  # a math Vec3 is accepted and converted
    assert type(g.length) is float


@pytest.mark.parametrize(
    ("overrides", "field", "expected"),
    [
        ({"centre": -1.5}, "centre", r"within \[min, max\] = \[-1.0, 1.0\]"),
        ({"centre": 1.5}, "centre", r"within \[min, max\]"),
        ({"home": 2.0}, "home", r"within \[min, max\]"),
        ({"home": -2.0}, "home", r"within \[min, max\]"),
        ({"min": 2.0, "centre": 2.0, "home": 2.0}, "min", "at most max = 1.0"),
        ({"length": -0.1}, "length", ">= 0"),
        ({"config_speed": -1.0}, "config_speed", ">= 0"),
    ],
)
def test_range_rules(overrides: dict[str, object], field: str, expected: str) -> None:
    with pytest.raises(LimitError, match=expected) as info:
        geometry(**overrides)
    assert info.value.field == field


def test_axis_must_be_non_zero_and_finite() -> None:
    with pytest.raises(ValidationError, match=r"field 'axis'.*non-zero axis"):
        geometry(axis=Vector3(0.0, 0.0, 0.0))
    with pytest.raises(NonFiniteError, match=r"field 'axis\.y' = nan"):
        geometry(axis=Vector3(1.0, math.nan, 0.0))
    with pytest.raises(ValidationError, match="field 'axis'"):
        geometry(axis=(0.0, 0.0, 1.0))


@pytest.mark.parametrize("bad", [0, 3, True, "ROTARY"])
def test_unknown_type_is_rejected(bad: object) -> None:
    with pytest.raises(ValidationError, match=r"field 'type'.*LINEAR=1, ROTARY=2"):
        geometry(type=bad)


@pytest.mark.parametrize("field", ["min", "centre", "max", "home", "length", "config_speed"])
def test_non_finite_numbers_are_rejected(field: str) -> None:
    with pytest.raises(NonFiniteError, match=f"field '{field}' = inf"):
        geometry(**{field: math.inf})


def test_array_geometry_rules() -> None:
    a = ArrayGeometry(Header(frame_id="base_link"), [geometry()], jm.Vec3(0, 0, 0.1))
    assert a.base_position == Point(0.0, 0.0, 0.1) and len(a) == 1
    with pytest.raises(ValidationError, match=r"index 0: field 'actuators'"):
        ArrayGeometry(Header(), ["x"])  # type: ignore[arg-type]
    with pytest.raises(NonFiniteError, match=r"field 'base_position\.z' = inf"):
        ArrayGeometry(Header(), (), Point(0.0, 0.0, math.inf))


@given(st.floats(-3.0, 3.0), st.floats(-1.5, 1.5), st.floats(-3.0, 3.0))
def test_orientation_matches_ros_rpy(roll: float, pitch: float, yaw: float) -> None:
    o = Orientation3D(roll, pitch, yaw)
    q = o.to_quaternion()
    assert q.isclose(jm.Quaternion.from_rpy(roll, pitch, yaw))
    assert Orientation3D.from_quaternion(q).to_quaternion().isclose(q, 1e-9)


def test_orientation_rejects_non_finite() -> None:
    with pytest.raises(NonFiniteError, match="field 'yaw' = nan"):
        Orientation3D(0.0, 0.0, math.nan)


@given(geometries())
def test_actuator_geometry_bytes_match_rosbags_and_round_trip(g: ActuatorGeometry) -> None:
    encoded = g.to_cdr()
    assert encoded == rosbags_cdr(g)
    assert ActuatorGeometry.from_cdr(encoded) == g
    assert rosbags_decode(ActuatorGeometry, encoded) == g


@given(ARRAYS)
def test_array_geometry_bytes_match_rosbags_and_round_trip(a: ArrayGeometry) -> None:
    encoded = a.to_cdr()
    assert encoded == rosbags_cdr(a)
    assert ArrayGeometry.from_cdr(encoded) == a
    assert rosbags_decode(ArrayGeometry, encoded) == a
