"""The generic CDR engine against rosbags, the independent reference (jointbus.codec.cdr).

What a user relies on: the bytes we publish are exactly what a ROS 2 node (rosbags'
``serialize_cdr``) would publish for the same content, and we decode what ROS 2 sends. Every wire
type is covered through the test-local classes in ``wire_strategies``; rosbags learns each type
from *our* ``msgdef()``, so the definition text is exercised too.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rosbags.typesys import get_types_from_msg

from jointbus.codec import EncodeError, SchemaError, cdr, schema_of
from jointbus.codec.msgdef import short_name
from jointbus.codec.wire import Primitive
from support.rosbags_oracle import rosbags_cdr, rosbags_decode, to_rosbags, typestore
from support.wire_strategies import (
    ALL_CLASSES,
    AllPrimitives,
    FixedArrays,
    Head,
    Inner,
    Nested,
    Sequences,
    Stamp,
    message_strategy,
)

CLASS_IDS = [cls.__name__ for cls in ALL_CLASSES]


@pytest.mark.parametrize("cls", ALL_CLASSES, ids=CLASS_IDS)
@given(data=st.data())
def test_bytes_equal_rosbags_and_decode_inverts(cls: type[Any], data: st.DataObject) -> None:
    msg = data.draw(message_strategy(cls))
    ours = cdr.encode(msg)
    theirs = rosbags_cdr(msg)
    assert ours == theirs
    assert cdr.decode(cls, theirs) == msg
    # and rosbags reads our bytes back to the same content
    assert rosbags_decode(cls, ours) == msg


@pytest.mark.parametrize("cls", ALL_CLASSES, ids=CLASS_IDS)
@given(data=st.data())
def test_big_endian_from_rosbags_decodes_to_the_same_message(
    cls: type[Any], data: st.DataObject
) -> None:
    msg = data.draw(message_strategy(cls))
    big = bytes(typestore().serialize_cdr(to_rosbags(msg), cls.TYPE_NAME, little_endian=False))
    assert big[:2] == b"\x00\x00"
    assert cdr.decode(cls, big) == msg


@given(msg=message_strategy(AllPrimitives, allow_nan=True))
def test_nan_payloads_match_rosbags(msg: AllPrimitives) -> None:
    # NaN != NaN, so compare the bytes and re-encode instead of comparing objects
    ours = cdr.encode(msg)
    assert ours == rosbags_cdr(msg)
    assert cdr.encode(cdr.decode(AllPrimitives, ours)) == ours


def test_known_bytes_of_a_header_shaped_message() -> None:
    # Fixed bytes, independent of rosbags: 0x00 0x01 header, int32, uint32, string len+UTF-8+NUL.
    msg = Head(Stamp(-2, 7), "é")
    header = b"\x00\x01\x00\x00"
    expected = header + struct.pack("<iII", -2, 7, 3) + "é".encode() + b"\x00"
    assert cdr.encode(msg) == expected
    assert cdr.decode(Head, expected) == msg


def test_empty_sequence_is_not_followed_by_padding_for_its_element_type() -> None:
    # float64[] with no elements, then a float64: the count is at 4..8, the float64 aligns to 8.
    msg = Sequences("", (), (), (), (), 1.5, b"", b"", (), (), (), (), 3)
    assert cdr.encode(msg) == rosbags_cdr(msg)


@pytest.mark.parametrize("cls", ALL_CLASSES, ids=CLASS_IDS)
def test_msgdef_parses_in_rosbags_to_our_fields(cls: type[Any]) -> None:
    schema = schema_of(cls)
    parsed = get_types_from_msg(cls.msgdef(), cls.TYPE_NAME)
    consts, fields = parsed[cls.TYPE_NAME]
    assert [name for name, _ in fields] == [f.name for f in schema.fields]
    assert [(name, typ) for name, typ, _ in consts] == [
        (name, prim.value) for name, prim, _ in schema.constants
    ]
    for (name, _typ, value), (_, _, ours) in zip(consts, schema.constants, strict=True):
        assert value == ours, name
    for dep in schema.dependencies():
        assert dep.type_name in parsed, f"{dep.type_name} missing from {cls.__name__}.msgdef()"


def test_msgdef_text_of_nested_message() -> None:
    text = Nested.msgdef()
    assert text.startswith(
        "jointbus_codec_test/Head header\njointbus_codec_test/Inner inner\n"
        "jointbus_codec_test/Inner[] items\njointbus_codec_test/Stamp[] stamps\n"
        "byte code\nfloat32[] trailer\n"
    )
    separator = "=" * 80
    assert f"{separator}\nMSG: jointbus_codec_test/Head\n" in text
    assert f"{separator}\nMSG: jointbus_codec_test/Stamp\nint32 sec\nuint32 nanosec\n" in text
    assert text.count("MSG: jointbus_codec_test/Inner\n") == 1  # each dependency once
    assert short_name("pkg/msg/Name") == "pkg/Name"


def test_fixed_arrays_msgdef_spells_lengths() -> None:
    text = FixedArrays.msgdef()
    assert "float64[9] covariance\n" in text
    assert "string[3] labels\n" in text
    assert "jointbus_codec_test/Stamp[2] corners\n" in text


# ---------------------------------------------------------------------------------------------
# encode: values that cannot be represented raise EncodeError naming the field
# ---------------------------------------------------------------------------------------------
def _prims(**overrides: Any) -> AllPrimitives:
    values: dict[str, Any] = {f.name: 0 for f in schema_of(AllPrimitives).fields}
    values.update(a_bool=False, b_float64=0.0, m_float32=0.0, n_string="", o_float64=0.0)
    values.update(overrides)
    return AllPrimitives(**values)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("c_byte", 256),
        ("c_byte", -1),
        ("g_int8", 128),
        ("h_int32", 2**31),
        ("l_uint32", -1),
        ("f_uint64", 2**64),
        ("d_int64", -(2**63) - 1),
        ("h_int32", 1.0),
        ("h_int32", True),
        ("a_bool", 1),
        ("m_float32", 1e39),
        ("m_float32", "1.0"),
        ("b_float64", 10**400),
        ("n_string", "nul\x00inside"),
        ("n_string", "\ud800"),
        ("n_string", b"bytes"),
    ],
)
def test_unrepresentable_value_raises_encode_error(field: str, value: object) -> None:
    with pytest.raises(EncodeError) as info:
        cdr.encode(_prims(**{field: value}))
    assert info.value.field == field
    assert info.value.type_name == AllPrimitives.TYPE_NAME


def test_float32_infinity_is_representable() -> None:
    msg = _prims(m_float32=math.inf)
    assert cdr.encode(msg) == rosbags_cdr(msg)


def test_fixed_array_of_wrong_length_raises_encode_error() -> None:
    msg = FixedArrays(
        0, (0.0,) * 8, (0.0, 0.0), b"12345", ("a", "b", "c"), (Stamp(0, 0),) * 2, (1, 2, 3), 0
    )
    with pytest.raises(EncodeError, match="exactly 9 elements") as info:
        cdr.encode(msg)
    assert info.value.field == "covariance"


def test_nested_value_of_the_wrong_message_class_raises_encode_error() -> None:
    msg = Head(Inner("x", (), 0, 0.0), "frame")  # type: ignore[arg-type]
    with pytest.raises(EncodeError, match="Stamp") as info:
        cdr.encode(msg)
    assert info.value.field == "stamp"


def test_sequence_element_of_the_wrong_class_names_its_index() -> None:
    stamps = (Stamp(0, 0), Head(Stamp(0, 0), ""))
    inner = Inner("", (), 0, 0.0)
    msg = Nested(Head(Stamp(0, 0), ""), inner, (inner,), stamps, 0, ())  # type: ignore[arg-type]
    with pytest.raises(EncodeError) as info:
        cdr.encode(msg)
    assert info.value.field == "stamps[1]"


def test_sequence_item_out_of_range_names_its_index() -> None:
    msg = Sequences("", (), (), (), (1, 200), 0.0, b"", b"", (), (), (), (), 0)
    with pytest.raises(EncodeError) as info:
        cdr.encode(msg)
    assert info.value.field == "small[1]"


def test_uint8_sequence_accepts_a_tuple_of_ints_like_the_bytes() -> None:
    as_bytes = Sequences("", (), (), (), (), 0.0, b"\x01\xff", b"", (), (), (), (), 0)
    as_ints = Sequences("", (), (), (), (), 0.0, (1, 255), b"", (), (), (), (), 0)  # type: ignore[arg-type]
    assert cdr.encode(as_ints) == cdr.encode(as_bytes)
    assert cdr.decode(Sequences, cdr.encode(as_ints)) == as_bytes  # decodes to bytes


def test_numpy_scalars_are_not_silently_accepted_by_the_generic_engine() -> None:
    # Normalising numpy values is the message constructors' job; the engine names the culprit.
    msg = Sequences("", (), (), (), (), 0.0, (np.uint8(1),), b"", (), (), (), (), 0)  # type: ignore[arg-type]
    with pytest.raises(EncodeError) as info:
        cdr.encode(msg)
    assert info.value.field == "raw[0]"


def test_primitive_struct_codes_cover_every_primitive() -> None:
    for primitive in Primitive:
        if primitive is Primitive.STRING:
            assert primitive.size == 0
        else:
            assert struct.calcsize("<" + primitive.struct_code) == primitive.size


def test_a_message_without_wire_fields_is_a_schema_error() -> None:
    @dataclass(frozen=True, slots=True)
    class Nothing:
        TYPE_NAME: ClassVar[str] = "jointbus_codec_test/msg/Nothing"

    with pytest.raises(SchemaError, match="structure_needs_at_least_one_member"):
        schema_of(Nothing)


@given(
    sec=st.integers(-(2**31), 2**31 - 1),
    nanosec=st.integers(0, 999_999_999),
    frame=st.text(max_size=12),
)
def test_a_header_stamp_is_read_from_the_bytes_as_rosbags_serialises_them(
    sec: int, nanosec: int, frame: str
) -> None:
    """``topic hz`` and the recorder read the stamp of every sample of a stamped topic without
    decoding it (:func:`cdr.header_stamp_ns`): the stamp rosbags' own serializer wrote, in
    either byte order, and nothing for bytes too short or of another encapsulation."""
    from jointbus.messages.stamp import Time
    from jointbus.messages.std_msgs import Header

    msg = Header(Time(sec, nanosec), frame)
    little = rosbags_cdr(msg)
    big = bytes(
        typestore().serialize_cdr(to_rosbags(msg), Header.TYPE_NAME, little_endian=False)
    )
    expected = sec * 1_000_000_000 + nanosec
    assert cdr.header_stamp_ns(little) == expected
    assert cdr.header_stamp_ns(big) == expected
    assert cdr.header_stamp_ns(little[:11]) is None
    assert cdr.header_stamp_ns(b"\x00\x03" + little[2:]) is None  # PL_CDR_LE: no plain layout
