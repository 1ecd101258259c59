"""JointState (Beam Bots): values shaped per joint kind, every documented rule enforced, the
jointbus_msgs wire record (rosbags oracle) and the lossless ROS pair conversion."""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus import math as jm
from jointbus.codec import DecodeError
from jointbus.messages import geometry_msgs, jointbus_msgs, sensor_msgs
from jointbus.messages.errors import (
    LengthMismatchError,
    NonFiniteError,
    ShapeMismatchError,
    UnknownJointError,
    ValidationError,
)
from jointbus.messages.joint_kind import JointKind
from jointbus.messages.joint_state import JointState
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header
from support.rosbags_oracle import rosbags_cdr, rosbags_decode

SINGLE, PLANAR, FLOATING = JointKind.SINGLE_DOF, JointKind.PLANAR, JointKind.FLOATING
F = st.floats(allow_nan=False, allow_infinity=False)
M = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)  # magnitudes that sum finitely
ANGLE = st.floats(-10.0, 10.0, allow_nan=False)
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))
HEADERS = st.builds(
    Header, st.builds(Time, st.integers(-(2**31), 2**31 - 1), st.integers(0, 10**9 - 1)), TEXT
)
VEC = st.builds(jm.Vec3, M, M, M)


QUAT = (
    st.tuples(*[st.floats(-1.0, 1.0) for _ in range(4)])
    .filter(lambda c: math.hypot(*c) > 0.1)
    .map(lambda c: jm.Quaternion(*c))
)
VALUES: dict[JointKind, tuple[st.SearchStrategy[Any], ...]] = {
    SINGLE: (F, F, F),
    PLANAR: (
        st.builds(jm.Transform2D, F, F, F),
        st.builds(jm.Twist2D, F, F, F),
        st.builds(jm.Wrench2D, F, F, F),
    ),
    FLOATING: (
        st.builds(jm.Transform, VEC, QUAT),
        st.builds(jm.Twist, VEC, VEC),
        st.builds(jm.Wrench, VEC, VEC),
    ),
}
# For the ROS pair: planar headings within ±10 rad (they come back through a quaternion).
ROS_VALUES = {**VALUES, PLANAR: (st.builds(jm.Transform2D, M, M, ANGLE), *VALUES[PLANAR][1:])}


@st.composite
def states(
    draw: st.DrawFn, values: dict[JointKind, tuple[st.SearchStrategy[Any], ...]] = VALUES
) -> JointState:
    names = draw(st.lists(TEXT.filter(bool), unique=True, max_size=6))
    kinds = [draw(st.sampled_from(JointKind)) for _ in names]
    lists = {}
    for slot, field in enumerate(("positions", "velocities", "efforts")):
        reported = draw(st.booleans())
        lists[field] = [draw(values[k][slot]) for k in kinds] if reported else []
    return JointState(names, header=draw(HEADERS), **lists)


def rover() -> JointState:
    return JointState(
        ("base", "mast"),
        positions=(jm.Transform2D(12.4, -3.1, 1.57), 0.5),
        velocities=(jm.Twist2D(0.2, 0.0, 0.1), 0.0),
        header=Header.at_ns(10**9, "odom"),
    )


# ------------------------------------------------------------------------------------------------
# construction and the rules Beam Bots only documents
# ------------------------------------------------------------------------------------------------
def test_beam_bots_examples() -> None:
    arm = JointState(
        ["joint1", "joint2"], positions=[0.0, 1.57], velocities=[0.1, 0.0], efforts=[0.5, 0.2]
    )
    assert arm.positions == (0.0, 1.57)
    assert arm.kinds == (SINGLE, SINGLE)
    r = rover()
    assert r.kinds == (PLANAR, SINGLE)
    assert r.efforts == ()
    assert r.index("mast") == 1


def test_values_are_tuples_of_float_and_ints_and_numpy_are_accepted() -> None:
    s = JointState(["a", "b"], positions=np.array([1.0, 2.0]), velocities=[1, np.float32(0.5)])
    assert s.positions == (1.0, 2.0) and s.velocities == (1.0, 0.5)
    assert all(type(v) is float for v in (*s.positions, *s.velocities))
    assert type(s.names) is tuple


def test_immutable() -> None:
    s = rover()
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.names = ("x",)  # type: ignore[misc]


@pytest.mark.parametrize("field", ["positions", "velocities", "efforts"])
def test_a_list_is_empty_or_one_value_per_name(field: str) -> None:
    with pytest.raises(LengthMismatchError) as info:
        JointState(["a", "b", "c"], **{field: [1.0, 2.0]})
    assert info.value.field == field
    assert str(info.value) == (
        f"JointState: field '{field}' = '2 values'; expected one value per name (3) or none "
        "(not reported)"
    )
    assert JointState(["a", "b", "c"], **{field: []}).kinds == (None, None, None)


def test_names_must_be_unique_and_non_empty() -> None:
    with pytest.raises(ValidationError, match=r"JointState: joint 'a' \(index 2\): field 'names'"):
        JointState(["a", "b", "a"])
    with pytest.raises(ValidationError, match=r"JointState: index 1: field 'names' = ''"):
        JointState(["a", ""])
    with pytest.raises(ValidationError, match="field 'names'"):
        JointState("ab")


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("field", ["positions", "velocities", "efforts"])
def test_non_finite_values_are_rejected_naming_joint_index_field(field: str, bad: float) -> None:
    with pytest.raises(NonFiniteError) as info:
        JointState(["a", "knee"], **{field: [0.0, bad]})
    e = info.value
    assert (e.joint, e.index, e.field) == ("knee", 1, field)
    assert str(e).startswith(f"JointState: joint 'knee' (index 1): field '{field}' = {bad!r}")


def test_a_value_of_the_wrong_quantity_is_a_shape_mismatch() -> None:
    with pytest.raises(ShapeMismatchError) as info:
        JointState(["base"], positions=[jm.Twist2D(0.0, 0.0, 0.0)])
    assert "expected a joint position: a float, Transform2D or Transform" in str(info.value)
    with pytest.raises(ValidationError, match=r"joint 'base' \(index 0\): field 'efforts' = '1'"):
        JointState(["base"], efforts=["1"])
    with pytest.raises(ValidationError, match="field 'velocities' = True"):
        JointState(["base"], velocities=[True])


def test_shape_must_agree_across_lists_and_the_error_is_the_documented_one() -> None:
    with pytest.raises(ShapeMismatchError) as info:
        JointState(
            ["base", "mast"],
            positions=[0.5, 0.1],
            velocities=[jm.Twist2D(0.0, 0.0, 0.1), 0.0],
        )
    assert str(info.value) == (
        "JointState: joint 'base' (index 0): field 'positions' = 0.5; expected Transform2D "
        "(planar joint, shape agrees with velocities)"
    )
    e = info.value
    assert (e.joint, e.index, e.field, e.value) == ("base", 0, "positions", 0.5)


def test_planar_and_floating_values_for_one_joint_disagree() -> None:
    with pytest.raises(ShapeMismatchError) as info:
        JointState(
            ["a", "b"],
            velocities=[0.0, jm.Twist2D(0.0, 0.0, 0.0)],
            efforts=[0.0, jm.Wrench.zero()],
        )
    assert str(info.value) == (
        "JointState: joint 'b' (index 1): field 'efforts' = "
        f"{jm.Wrench.zero()!r}; expected Wrench2D (planar joint, shape agrees with velocities)"
    )


@given(states(), st.data())
def test_any_disagreeing_value_is_caught_naming_its_joint(s: JointState, data: Any) -> None:
    reported = [f for f in ("positions", "velocities", "efforts") if getattr(s, f)]
    if not reported:
        return
    field = data.draw(st.sampled_from(reported))
    index = data.draw(st.integers(0, len(s.names) - 1))
    kind = s.kinds[index]
    other = data.draw(st.sampled_from([k for k in JointKind if k is not kind]))
    slot = ("positions", "velocities", "efforts").index(field)
    values = list(getattr(s, field))
    values[index] = data.draw(VALUES[other][slot])
    if len(reported) == 1:  # nothing to disagree with: the joint simply has another kind now
        changed = dataclasses.replace(s, **{field: values})  # type: ignore[arg-type]
        assert changed.kinds[index] is other
        return
    with pytest.raises(ShapeMismatchError) as info:
        dataclasses.replace(s, **{field: values})  # type: ignore[arg-type]
    assert (info.value.joint, info.value.index) == (s.names[index], index)
    assert info.value.field in reported


@given(states(), st.data())
def test_a_list_of_the_wrong_length_is_always_rejected(s: JointState, data: Any) -> None:
    field = data.draw(st.sampled_from(["positions", "velocities", "efforts"]))
    length = data.draw(st.integers(1, 8).filter(lambda n: n != len(s.names)))
    with pytest.raises(LengthMismatchError) as info:
        dataclasses.replace(s, **{field: [0.0] * length})  # type: ignore[arg-type]
    assert info.value.field == field


def test_check_against_a_robot_description() -> None:
    r = rover()
    r.check_against({"mast": SINGLE, "base": PLANAR, "arm": FLOATING})
    with pytest.raises(UnknownJointError) as info:
        r.check_against({"base": PLANAR})
    assert info.value.name == "mast"
    with pytest.raises(ShapeMismatchError) as shape:
        r.check_against({"base": FLOATING, "mast": SINGLE})
    assert str(shape.value) == (
        "JointState: joint 'base' (index 0): field 'positions' = "
        f"{r.positions[0]!r}; expected Transform (the robot description says 'base' is a "
        "floating joint)"
    )
    # nothing reported: only existence can be checked
    JointState(["base"]).check_against({"base": FLOATING})


# ------------------------------------------------------------------------------------------------
# the jointbus_msgs wire record
# ------------------------------------------------------------------------------------------------
def test_wire_definition_is_self_describing() -> None:
    text = JointState.msgdef()
    assert JointState.TYPE_NAME == "jointbus_msgs/msg/JointState"
    assert text.startswith(
        "uint8 SINGLE_DOF=0\nuint8 PLANAR=1\nuint8 FLOATING=2\nstd_msgs/Header header\n"
        "string[] name\nuint8[] kind\nfloat64[] position\nfloat64[] velocity\nfloat64[] effort\n"
        "jointbus_msgs/Transform2D[] planar_position\n"
    )
    for dep in ("jointbus_msgs/Twist2D", "jointbus_msgs/Wrench2D", "geometry_msgs/Transform"):
        assert f"MSG: {dep}\n" in text


def test_single_dof_only_state_reads_like_sensor_msgs() -> None:
    s = JointState(["a", "b"], positions=[1.0, 2.0], efforts=[3.0, 4.0])
    record = s.to_wire()
    assert record.position == (1.0, 2.0) and record.velocity == () and record.effort == (3.0, 4.0)
    assert record.kind == b"\x00\x00"
    assert record.planar_position == () and record.floating_effort == ()


def test_per_kind_arrays_follow_name_order() -> None:
    s = JointState(
        ["p1", "s1", "f1", "p2"],
        positions=[jm.Transform2D(1, 0, 0), 7.0, jm.Transform.identity(), jm.Transform2D(2, 0, 0)],
    )
    record = s.to_wire()
    assert record.kind == bytes([PLANAR, SINGLE, FLOATING, PLANAR])
    assert [t.x for t in record.planar_position] == [1.0, 2.0]
    assert record.position == (7.0,)
    assert len(record.floating_position) == 1
    assert record.velocity == record.planar_velocity == record.floating_velocity == ()


@given(states())
def test_bytes_match_rosbags_and_round_trip(s: JointState) -> None:
    record = s.to_wire()
    encoded = s.to_cdr()
    assert encoded == record.to_cdr() == rosbags_cdr(record)
    back = JointState.from_cdr(encoded)
    assert back == s
    assert back.kinds == s.kinds
    assert JointState.from_wire(rosbags_decode(jointbus_msgs.JointState, encoded)) == s


def test_not_reported_lists_survive_the_wire() -> None:
    s = JointState(["base", "mast"], velocities=[jm.Twist2D(1.0, 0.0, 0.0), 0.5])
    back = JointState.from_cdr(s.to_cdr())
    assert back.positions == () and back.efforts == ()
    assert back == s


def _record(**overrides: Any) -> jointbus_msgs.JointState:
    fields = {
        "name": ("base", "mast"),
        "kind": bytes([PLANAR, SINGLE]),
        "position": (0.5,),
        "planar_position": (jointbus_msgs.Transform2D(1.0, 2.0, 0.3),),
    }
    fields.update(overrides)
    return jointbus_msgs.JointState(**fields)


def test_record_rejects_inconsistent_per_kind_arrays() -> None:
    with pytest.raises(LengthMismatchError, match=r"field 'planar_position'.*expected 1"):
        _record(planar_position=())
    with pytest.raises(LengthMismatchError, match=r"field 'position'.*expected 1"):
        _record(position=(0.5, 0.6))
    with pytest.raises(ValidationError, match=r"joint 'mast' \(index 1\): field 'kind' = 9"):
        _record(kind=bytes([PLANAR, 9]))
    with pytest.raises(LengthMismatchError, match="one JointKind per name"):
        _record(kind=bytes([PLANAR]))


def test_decode_rejects_bad_content_with_decode_error() -> None:
    good = _record()
    assert JointState.from_cdr(good.to_cdr()) == JointState(
        ["base", "mast"], positions=[jm.Transform2D(1.0, 2.0, 0.3), 0.5]
    )
    nan_planar = _record(planar_position=(jointbus_msgs.Transform2D(math.nan, 0.0, 0.0),))
    with pytest.raises(DecodeError, match=r"joint 'base' \(index 0\): field 'positions'"):
        JointState.from_cdr(nan_planar.to_cdr())
    inf_single = _record(position=(math.inf,))
    with pytest.raises(DecodeError, match=r"joint 'mast' \(index 1\)"):
        JointState.from_cdr(inf_single.to_cdr())
    with pytest.raises(DecodeError):
        JointState.from_cdr(good.to_cdr()[:-9])


# ------------------------------------------------------------------------------------------------
# the ROS pair: sensor_msgs/JointState + sensor_msgs/MultiDOFJointState
# ------------------------------------------------------------------------------------------------
def test_to_ros_splits_single_and_multi_dof_joints() -> None:
    r = JointState(
        ("base", "mast", "drone"),
        positions=(jm.Transform2D(12.4, -3.1, 1.0), 0.5, jm.Transform.identity()),
        efforts=(jm.Wrench2D(1.0, 2.0, 3.0), 4.0, jm.Wrench.zero()),
        header=Header.at_ns(5, "odom"),
    )
    js, mdof = r.to_ros()
    assert js.header == mdof.header == r.header
    assert js.name == ("mast",) and js.position == (0.5,) and js.effort == (4.0,)
    assert js.velocity == ()
    assert mdof.joint_names == ("base", "drone")
    base = mdof.transforms[0]
    assert (base.translation.x, base.translation.y, base.translation.z) == (12.4, -3.1, 0.0)
    assert (base.rotation.x, base.rotation.y) == (0.0, 0.0)
    assert math.isclose(2 * math.atan2(base.rotation.z, base.rotation.w), 1.0)
    assert mdof.wrench[0] == geometry_msgs.Wrench(
        geometry_msgs.Vector3(1.0, 2.0, 0.0), geometry_msgs.Vector3(0.0, 0.0, 3.0)
    )
    assert mdof.twist == ()


def _assert_same(a: JointState, b: JointState) -> None:
    """Equal, except that planar headings agree modulo 2π within rounding."""
    assert (a.names, a.header, a.kinds) == (b.names, b.header, b.kinds)
    assert (a.velocities, a.efforts) == (b.velocities, b.efforts)
    assert len(a.positions) == len(b.positions)
    for x, y in zip(a.positions, b.positions, strict=True):
        if isinstance(x, jm.Transform2D):
            assert isinstance(y, jm.Transform2D)
            assert (x.x, x.y) == (y.x, y.y)
            assert x.isclose(y, 1e-12)
        else:
            assert x == y


@given(states(ROS_VALUES))
def test_ros_pair_round_trip_is_lossless(s: JointState) -> None:
    kinds = {n: k for n, k in zip(s.names, s.kinds, strict=True) if k is not None}
    back = JointState.from_ros(*s.to_ros(), kinds=kinds, order=s.names)
    _assert_same(back, s)


def test_ros_round_trip_keeps_not_reported_lists_and_planar_kind() -> None:
    s = JointState(["base", "mast"], velocities=[jm.Twist2D(1.0, 2.0, 3.0), 0.5])
    back = JointState.from_ros(*s.to_ros(), kinds={"base": PLANAR, "mast": SINGLE})
    assert back.names == ("mast", "base")  # default order: single-DoF joints first
    assert back.positions == () and back.efforts == ()
    assert back.velocities == (0.5, jm.Twist2D(1.0, 2.0, 3.0))


def test_without_kinds_multi_dof_joints_come_back_floating() -> None:
    back = JointState.from_ros(*rover().to_ros())
    assert back.kinds == (SINGLE, FLOATING)
    assert back.velocities[1] == jm.Twist2D(0.2, 0.0, 0.1).to_twist()


def test_from_ros_rejects_off_plane_values_for_a_planar_joint() -> None:
    t = geometry_msgs.Transform(geometry_msgs.Vector3(1.0, 2.0, 0.5))
    mdof = sensor_msgs.MultiDOFJointState(Header(), ("base",), (t,))
    with pytest.raises(ShapeMismatchError, match=r"joint 'base' \(index 0\): field 'positions'"):
        JointState.from_ros(sensor_msgs.JointState(), mdof, kinds={"base": PLANAR})
    assert JointState.from_ros(sensor_msgs.JointState(), mdof).kinds == (FLOATING,)


def test_from_ros_rejects_kinds_that_contradict_the_message() -> None:
    js, mdof = rover().to_ros()
    with pytest.raises(ShapeMismatchError, match=r"joint 'mast' \(index 0\)"):
        JointState.from_ros(js, mdof, kinds={"mast": FLOATING})
    with pytest.raises(ShapeMismatchError, match=r"joint 'base' \(index 0\)"):
        JointState.from_ros(js, mdof, kinds={"base": SINGLE})


def test_from_ros_rejects_a_quantity_reported_in_only_one_message() -> None:
    js, mdof = rover().to_ros()
    partial = sensor_msgs.JointState(js.header, js.name, (), js.velocity)
    with pytest.raises(LengthMismatchError, match="field 'positions'"):
        JointState.from_ros(partial, mdof)


def test_from_ros_needs_one_instant_and_disjoint_names() -> None:
    js, mdof = rover().to_ros()
    later = dataclasses.replace(mdof, header=Header.at_ns(2 * 10**9, "odom"))
    with pytest.raises(ValidationError, match="field 'header'"):
        JointState.from_ros(js, later)
    clash = sensor_msgs.MultiDOFJointState(js.header, ("mast",))
    with pytest.raises(ValidationError, match=r"joint 'mast' \(index 0\): field 'names'"):
        JointState.from_ros(sensor_msgs.JointState(js.header, ("mast",)), clash)
    with pytest.raises(ValidationError, match="field 'order'"):
        JointState.from_ros(js, mdof, order=["mast"])


def test_from_ros_rejects_nan_which_ros_allows() -> None:
    js = sensor_msgs.JointState(Header(), ("a",), (math.nan,))
    with pytest.raises(NonFiniteError, match=r"joint 'a' \(index 0\): field 'positions' = nan"):
        JointState.from_ros(js, sensor_msgs.MultiDOFJointState())


# -- on the bus, as itself (the README's rover) ---------------------------------------------------
def _rover() -> JointState:
    return JointState(names=("base", "mast"), positions=(jm.Transform2D(12.4, -3.1, 1.57), 0.5))


def test_the_typed_state_is_published_as_itself_in_process() -> None:
    from jointbus.bus import Bus

    rover = _rover()
    got: list[JointState] = []
    with Bus() as bus:
        bus.subscribe("/rover/joint_state", JointState, got.append, realtime=True)
        bus.publisher("/rover/joint_state", JointState).publish(rover)
    assert got == [rover] and got[0] is rover  # in-process: the same object, never encoded


def test_the_typed_state_crosses_zenoh_as_itself_and_as_its_wire_record() -> None:
    from jointbus.bus import RELIABLE, Bus, ZenohConfig
    from support.bus import free_port, wait_until

    rover = _rover()
    port = free_port()
    typed: list[JointState] = []
    records: list[jointbus_msgs.JointState] = []
    with (
        Bus(name="rover", zenoh=ZenohConfig.loopback(port)) as robot,
        Bus(name="base-station", zenoh=ZenohConfig.loopback(None, (port,))) as station,
        Bus(name="ros-side", zenoh=ZenohConfig.loopback(None, (port,))) as other,
    ):
        station.subscribe("/rover/joint_state", JointState, typed.append, RELIABLE)
        other.subscribe("/rover/joint_state", jointbus_msgs.JointState, records.append, RELIABLE)
        pub = robot.publisher("/rover/joint_state", JointState, RELIABLE)
        assert wait_until(lambda: pub.remote_matched, timeout=10.0)
        time.sleep(0.3)  # both remote subscribers matched
        pub.publish(rover)
        assert wait_until(lambda: typed and records, timeout=10.0)
    assert typed == [rover]
    assert records == [rover.to_wire()]


# ------------------------------------------------------------------------------------------------
# scalar_wire: the array node's one-pass record of single-DoF joints (same record, same errors)
# ------------------------------------------------------------------------------------------------
@st.composite
def scalar_columns(
    draw: st.DrawFn, min_size: int = 0
) -> tuple[tuple[str, ...], list[np.ndarray[Any, np.dtype[np.float64]]]]:
    """Names and (positions, velocities, efforts) columns, each reported or empty."""
    names = tuple(draw(st.lists(TEXT.filter(bool), unique=True, min_size=min_size, max_size=8)))
    cols = []
    for _ in range(3):
        values = draw(st.lists(F, min_size=len(names), max_size=len(names)))
        cols.append(np.array(values if draw(st.booleans()) else [], dtype=np.float64))
    return names, cols


@given(HEADERS, scalar_columns())
def test_scalar_wire_is_the_constructors_record(
    header: Header, named: tuple[tuple[str, ...], list[Any]]
) -> None:
    names, cols = named
    record = JointState.scalar_wire(header, names, *cols)
    expected = JointState(names, *(tuple(c.tolist()) for c in cols), header=header).to_wire()
    assert type(record) is jointbus_msgs.JointState
    assert record == expected
    assert record.to_cdr() == expected.to_cdr()
    for field in dataclasses.fields(record):
        mine, theirs = getattr(record, field.name), getattr(expected, field.name)
        assert type(mine) is type(theirs)
        if type(mine) is tuple:
            assert [type(v) for v in mine] == [type(v) for v in theirs]
    assert JointState.from_wire(record) == JointState.from_wire(expected)


@given(scalar_columns(min_size=1), st.data())
def test_scalar_wire_refuses_a_non_finite_value_as_the_constructor(
    named: tuple[tuple[str, ...], list[Any]], data: st.DataObject
) -> None:
    names, cols = named
    slot = data.draw(st.integers(0, 2))
    index = data.draw(st.integers(0, len(names) - 1))
    bad = data.draw(st.sampled_from((math.nan, math.inf, -math.inf)))
    column = np.zeros(len(names))
    column[index] = bad
    cols[slot] = column
    with pytest.raises(NonFiniteError) as constructor:
        JointState(names, *cols)
    with pytest.raises(NonFiniteError) as built:
        JointState.scalar_wire(Header(), names, *cols)
    err = built.value
    field = ("positions", "velocities", "efforts")[slot]
    assert (err.field, err.index, err.joint) == (field, index, names[index])
    assert str(err) == str(constructor.value)
    assert math.isnan(bad) if math.isnan(err.value) else err.value == bad


def test_scalar_wire_refuses_bad_names_and_lengths_as_the_constructor() -> None:
    z = np.zeros(2)
    with pytest.raises(LengthMismatchError, match="field 'velocities' = '1 values'"):
        JointState.scalar_wire(Header(), ("a", "b"), z, np.zeros(1), z)
    with pytest.raises(ValidationError, match="a unique joint name") as info:
        JointState.scalar_wire(Header(), ("a", "a"), z, z, z)
    assert (info.value.joint, info.value.index) == ("a", 1)
    with pytest.raises(ValidationError, match="field 'header'"):
        JointState.scalar_wire(None, ("a", "b"), z, z, z)  # type: ignore[arg-type]
