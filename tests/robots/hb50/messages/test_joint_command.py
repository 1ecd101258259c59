"""hb50 JointCommand: seed field layout, rosbags-identical bytes, and every validation rule."""

from __future__ import annotations

import math
import struct
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.codec import DecodeError, schema_of
from jointbus.codec.msgdef import definition_text
from jointbus.codec.wire import FLOAT32_MAX
from jointbus.messages.errors import (
    LengthMismatchError,
    LimitError,
    NonFiniteError,
    UnknownJointError,
    ValidationError,
)
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header
from jointbus.robots.hb50.messages import JointCommand, JointTarget
from support.rosbags_oracle import register, rosbags_cdr, rosbags_decode, typestore

TN = "hb50_commons/msg/JointCommand"
HB50 = tuple(f"{leg}_j{j}" for leg in ("fr", "fl", "rl", "rr") for j in range(3))
FLOAT_FIELDS = ("kp", "ki", "kd", "t_pos", "t_vel", "t_trq")
ALL_FIELDS = (*FLOAT_FIELDS, "brake")
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))
F32 = st.floats(width=32, allow_nan=False, allow_infinity=False)
GAIN = st.floats(width=32, min_value=0.0, allow_infinity=False)
HEADERS = st.builds(
    Header, st.builds(Time, st.integers(-(2**31), 2**31 - 1), st.integers(0, 2**32 - 1)), TEXT
)
NAMES = st.one_of(st.just(HB50), st.lists(TEXT.filter(bool), unique=True, max_size=6).map(tuple))


@st.composite
def commands(draw: st.DrawFn) -> JointCommand:
    names = draw(NAMES)
    n = len(names)

    def arr(element: st.SearchStrategy[Any]) -> tuple[Any, ...]:
        return tuple(draw(st.lists(element, min_size=n, max_size=n)))

    return JointCommand(
        draw(HEADERS),
        draw(TEXT),
        names,
        arr(GAIN),
        arr(F32),
        arr(GAIN),
        arr(F32),
        arr(F32),
        arr(F32),
        arr(st.booleans()),
    )


def valid(n: int = 3, **overrides: Any) -> dict[str, Any]:
    """Keyword arguments of a valid command over the first ``n`` HB50 joints."""
    kwargs: dict[str, Any] = {
        "header": Header(),
        "source_node": "test",
        "name": HB50[:n],
        "kp": (80.0,) * n,
        "ki": (0.0,) * n,
        "kd": (3.0,) * n,
        "t_pos": (0.5,) * n,
        "t_vel": (0.0,) * n,
        "t_trq": (0.0,) * n,
        "brake": (False,) * n,
    }
    kwargs.update(overrides)
    return kwargs


def test_field_names_order_and_wire_types_are_the_seeds() -> None:
    assert definition_text(schema_of(JointCommand)) == (
        "std_msgs/Header header\n"
        "string source_node\n"
        "string[] name\n"
        "float32[] kp\n"
        "float32[] ki\n"
        "float32[] kd\n"
        "float32[] t_pos\n"
        "float32[] t_vel\n"
        "float32[] t_trq\n"
        "bool[] brake\n"
    )


@given(commands())
def test_bytes_match_rosbags_and_round_trip(msg: JointCommand) -> None:
    data = msg.to_cdr()
    assert data == rosbags_cdr(msg)
    assert JointCommand.from_cdr(data) == msg
    assert rosbags_decode(JointCommand, data) == msg


@given(st.floats(-FLOAT32_MAX, FLOAT32_MAX), st.floats(0.0, 1e30))
def test_values_are_rounded_to_float32_so_the_wire_copy_is_equal(pos: float, kp: float) -> None:
    msg = JointCommand(**valid(1, t_pos=(pos,), kp=(kp,)))
    assert msg.t_pos[0] == struct.unpack("<f", struct.pack("<f", pos))[0]
    assert JointCommand.from_cdr(msg.to_cdr()) == msg


def test_lists_and_numpy_arrays_are_normalised() -> None:
    a = JointCommand(**valid(3, name=list(HB50[:3]), kp=np.full(3, 80.0), kd=[3, 3, 3]))
    b = JointCommand(**valid(3, brake=np.zeros(3, dtype=bool)))
    assert a == b == JointCommand(**valid(3))
    assert type(a.kp) is tuple
    assert all(type(v) is float for v in a.kd)


def test_seed_example_error_text() -> None:
    with pytest.raises(LimitError) as info:
        JointCommand(**valid(3, kp=(80.0, -3.0, 80.0)))
    assert str(info.value) == (
        "hb50_commons/msg/JointCommand: joint 'fr_j1' (index 1): field 'kp' = -3.0; expected ≥ 0"
    )


@given(
    st.sampled_from(("kp", "kd")),
    st.integers(0, len(HB50) - 1),
    st.floats(max_value=-1e-30, min_value=-FLOAT32_MAX),
)
def test_negative_gains_name_joint_index_field_and_value(field: str, i: int, value: float) -> None:
    gains = [10.0] * len(HB50)
    gains[i] = value
    with pytest.raises(LimitError) as info:
        JointCommand(**valid(len(HB50), **{field: gains}))
    err = info.value
    assert (err.type_name, err.field, err.joint, err.index) == (TN, field, HB50[i], i)
    assert err.value == struct.unpack("<f", struct.pack("<f", value))[0]
    assert f"joint {HB50[i]!r} (index {i})" in str(err)


@given(
    st.sampled_from(FLOAT_FIELDS),
    st.integers(0, len(HB50) - 1),
    st.sampled_from([math.nan, math.inf, -math.inf]),
)
def test_non_finite_values_name_joint_index_and_field(field: str, i: int, value: float) -> None:
    values = [0.0] * len(HB50)
    values[i] = value
    with pytest.raises(NonFiniteError) as info:
        JointCommand(**valid(len(HB50), **{field: values}))
    err = info.value
    assert (err.field, err.joint, err.index) == (field, HB50[i], i)
    assert f"field {field!r}" in str(err)


@given(
    st.sampled_from(FLOAT_FIELDS),
    st.integers(0, 2),
    st.floats(min_value=FLOAT32_MAX * 1.000001, allow_infinity=False),
    st.booleans(),
)
def test_values_beyond_float32_are_a_limit_error(
    field: str, i: int, magnitude: float, negative: bool
) -> None:
    values = [0.0, 0.0, 0.0]
    values[i] = -magnitude if negative else magnitude
    with pytest.raises(LimitError) as info:
        JointCommand(**valid(3, **{field: values}))
    assert (info.value.field, info.value.joint, info.value.index) == (field, HB50[i], i)
    assert "float32" in info.value.expected


@given(st.sampled_from(ALL_FIELDS), st.integers(0, len(HB50) - 1))
def test_short_array_names_the_first_joint_without_a_value(field: str, length: int) -> None:
    base = valid(len(HB50))
    with pytest.raises(LengthMismatchError) as info:
        JointCommand(**{**base, field: base[field][:length]})
    err = info.value
    assert (err.field, err.joint, err.index) == (field, HB50[length], length)
    assert f"{len(HB50)} values" in err.expected


@given(st.sampled_from(ALL_FIELDS), st.integers(1, 3))
def test_long_array_names_the_first_surplus_index(field: str, extra: int) -> None:
    base = valid(3)
    with pytest.raises(LengthMismatchError) as info:
        JointCommand(**{**base, field: base[field] + base[field][:1] * extra})
    assert (info.value.field, info.value.index, info.value.joint) == (field, 3, None)


def test_ki_is_reserved_but_checked_like_the_others() -> None:
    with pytest.raises(LengthMismatchError, match="'ki'"):
        JointCommand(**valid(3, ki=()))
    with pytest.raises(NonFiniteError, match="'ki'"):
        JointCommand(**valid(3, ki=(0.0, math.nan, 0.0)))


def test_duplicate_and_empty_names_are_rejected() -> None:
    with pytest.raises(ValidationError) as info:
        JointCommand(**valid(3, name=("fr_j0", "fr_j1", "fr_j0")))
    assert (info.value.field, info.value.joint, info.value.index) == ("name", "fr_j0", 2)
    with pytest.raises(ValidationError) as info:
        JointCommand(**valid(3, name=("fr_j0", "", "fr_j2")))
    assert (info.value.field, info.value.index) == ("name", 1)


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"brake": (False, 1, False)}, "brake"),
        ({"kp": (1.0, "2", 3.0)}, "kp"),
        ({"t_pos": (0.0, 0.0, True)}, "t_pos"),
        ({"source_node": None}, "source_node"),
        ({"header": Time()}, "header"),
        ({"t_vel": "abc"}, "t_vel"),
    ],
)
def test_wrong_types_are_rejected_by_field(overrides: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as info:
        JointCommand(**valid(3, **overrides))
    assert info.value.field == field


def _rosbags_bytes(**fields: Any) -> bytes:
    """A JointCommand serialised by rosbags alone, so it can hold what our constructor refuses."""
    register(JointCommand)
    store = typestore()
    header = store.types["std_msgs/msg/Header"](
        store.types["builtin_interfaces/msg/Time"](0, 0), ""
    )
    kw = valid(2)
    kw.update(fields)
    obj = store.types[TN](
        header=header,
        source_node="x",
        name=list(kw["name"]),
        **{f: np.array(kw[f], dtype=np.float32) for f in FLOAT_FIELDS},
        brake=np.array(kw["brake"], dtype=bool),
    )
    return bytes(store.serialize_cdr(obj, TN))


@pytest.mark.parametrize(
    ("fields", "text"),
    [
        ({"kd": (3.0, -1.0)}, "'kd' = -1.0"),
        ({"t_pos": (0.0, math.nan)}, "'t_pos'"),
        ({"t_trq": (0.0,)}, "'t_trq'"),
        ({"name": ("a", "a")}, "unique"),
    ],
)
def test_decoding_an_invalid_command_is_a_decode_error(fields: dict[str, Any], text: str) -> None:
    with pytest.raises(DecodeError, match=text):
        JointCommand.from_cdr(_rosbags_bytes(**fields))


def test_hold_builds_a_position_hold() -> None:
    cmd = JointCommand.hold(HB50, np.linspace(-1.0, 1.0, 12), 80.0, 3.0, source_node="ctl")
    assert cmd.name == HB50
    assert cmd.kp == (80.0,) * 12
    assert cmd.kd == (3.0,) * 12
    assert cmd.t_pos[0] == -1.0
    assert cmd.t_pos[-1] == 1.0
    assert cmd.t_vel == cmd.t_trq == cmd.ki == (0.0,) * 12
    assert cmd.brake == (False,) * 12
    assert cmd.source_node == "ctl"
    per_joint = JointCommand.hold(HB50[:2], [0.0, 0.1], [80.0, 60.0], [3.0, 2.0])
    assert per_joint.kp == (80.0, 60.0)


def test_hold_validates_like_the_constructor() -> None:
    with pytest.raises(LimitError) as info:
        JointCommand.hold(HB50[:2], [0.0, 0.0], [1.0, -1.0], 1.0)
    assert (info.value.joint, info.value.index, info.value.field) == ("fr_j1", 1, "kp")
    with pytest.raises(LengthMismatchError):
        JointCommand.hold(HB50, [0.0] * 11, 1.0, 1.0)
    with pytest.raises(ValidationError):
        JointCommand.hold(HB50[:1], [0.0], True, 1.0)


def test_damping_has_zero_stiffness_and_targets() -> None:
    cmd = JointCommand.damping(HB50, 2.0)
    assert cmd.kp == cmd.t_pos == cmd.t_vel == cmd.t_trq == (0.0,) * 12
    assert cmd.kd == (2.0,) * 12
    assert not any(cmd.brake)


def test_for_joint_and_index() -> None:
    cmd = JointCommand.hold(HB50, [0.1 * i for i in range(12)], 80.0, 3.0)
    target = cmd.for_joint("fl_j2")
    assert target == JointTarget("fl_j2", 5, 80.0, 0.0, 3.0, cmd.t_pos[5], 0.0, 0.0, False)
    assert cmd.index("rr_j2") == 11
    with pytest.raises(UnknownJointError) as info:
        cmd.for_joint("xx_j9")
    assert "xx_j9" in str(info.value)
    assert isinstance(info.value, LookupError)


def test_empty_command_is_valid() -> None:
    assert JointCommand.from_cdr(JointCommand().to_cdr()) == JointCommand()


# ---- from_joint_arrays: the controller's one-pass constructor -------------------------------

#: Any float64 a controller's arithmetic can produce, refused ones included.
ANY_FLOAT = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([-0.0, 3.5e38, -3.5e38, 1e-46, FLOAT32_MAX]),
)
ARRAY_FIELDS = ("kp", "kd", "t_pos", "t_vel", "t_trq")


def _built(build: Any) -> JointCommand | tuple[type[BaseException], str]:
    try:
        result: JointCommand = build()
    except Exception as exc:  # the two paths must raise the same error
        return type(exc), str(exc)
    return result


@given(st.data())
def test_from_joint_arrays_is_the_constructor_for_any_values(data: st.DataObject) -> None:
    """The fast path must never accept what the constructor refuses, nor round differently: the
    same message, or the same error naming joint, index, field and value."""
    names = data.draw(NAMES)
    n = len(names)
    arrays = {
        f: np.array(data.draw(st.lists(ANY_FLOAT, min_size=n, max_size=n)), dtype=np.float64)
        for f in ARRAY_FIELDS
    }
    header = data.draw(HEADERS)
    fast = _built(lambda: JointCommand.from_joint_arrays(header, "ctl", names, **arrays))
    slow = _built(
        lambda: JointCommand(
            header, "ctl", names, ki=(0.0,) * n, brake=(False,) * n,
            **{f: tuple(a.tolist()) for f, a in arrays.items()},
        )
    )
    assert fast == slow
    if isinstance(fast, JointCommand):
        assert all(type(v) is float for f in FLOAT_FIELDS for v in getattr(fast, f))
        assert JointCommand.from_cdr(fast.to_cdr()) == fast


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("kp", -1.0, LimitError),
        ("kd", math.nan, NonFiniteError),
        ("t_pos", math.inf, NonFiniteError),
        ("t_trq", 1e39, LimitError),
    ],
)
def test_from_joint_arrays_refuses_a_bad_value_naming_joint_and_index(
    field: str, value: float, error: type[Exception]
) -> None:
    arrays = {f: np.full(12, 0.5) for f in ARRAY_FIELDS}
    arrays[field][7] = value
    with pytest.raises(error) as caught:
        JointCommand.from_joint_arrays(Header(), "ctl", HB50, **arrays)
    text = str(caught.value)
    assert "'rl_j1' (index 7)" in text and f"field '{field}'" in text


def test_from_joint_arrays_refuses_arrays_of_another_length_and_bad_names() -> None:
    arrays = {f: np.full(12, 0.5) for f in ARRAY_FIELDS}
    arrays["t_vel"] = np.full(11, 0.5)
    with pytest.raises(LengthMismatchError, match="t_vel"):
        JointCommand.from_joint_arrays(Header(), "ctl", HB50, **arrays)
    arrays["t_vel"] = np.full(12, 0.5)
    with pytest.raises(ValidationError, match="name"):
        JointCommand.from_joint_arrays(Header(), "ctl", (*HB50[:11], HB50[0]), **arrays)
    # the check of a good tuple is remembered; a bad one after it is still refused
    JointCommand.from_joint_arrays(Header(), "ctl", HB50, **arrays)
    with pytest.raises(ValidationError, match="name"):
        JointCommand.from_joint_arrays(Header(), "ctl", (*HB50[:11], ""), **arrays)
