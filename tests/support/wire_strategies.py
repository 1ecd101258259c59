"""Hypothesis strategies derived from a message schema, and test-local message classes.

Where it sits: :mod:`support`, for ``tests/codec``. The strategies walk
:func:`jointbus.codec.schema_of`, so every wire type the schema can express gets random valid
content without a hand-written strategy per class. The classes below exist only for the codec
tests: they have no validation, so the tests exercise the codec alone (``Stamp`` and ``Inner``
declare empty ``WIRE_RULES``, so the fast path builds them directly, the others through their
constructors, and nested mixes of both occur), and together they cover
every primitive, strings (non-ASCII included), sequences, fixed arrays, nested messages, sequences
of messages, empty sequences and the alignment cases (a wide type after a narrow one, data after
an odd-length string, data after an empty sequence).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, ClassVar

from hypothesis import strategies as st

from jointbus.codec import Codec, accel, schema_of
from jointbus.codec.rules import WireRule
from jointbus.codec.schema import FieldSchema
from jointbus.codec.wire import (
    INT_RANGES,
    Bool,
    BoolSeq,
    Byte,
    ByteSeq,
    Float32,
    Float32Seq,
    Float64,
    Float64Seq,
    Int8,
    Int8Seq,
    Int16,
    Int32,
    Int32Seq,
    Int64,
    Primitive,
    Seq,
    String,
    StringSeq,
    UInt8,
    UInt8Seq,
    UInt16,
    UInt16Seq,
    UInt32,
    UInt32Seq,
    UInt64,
)
from jointbus.messages.base import Message

#: The layout engines available in this process: the pure-Python fast path always, the compiled
#: core when it is built and not disabled (``JOINTBUS_NO_ACCEL=1``).
ENGINES: tuple[str, ...] = ("python", "c") if accel.AVAILABLE else ("python",)


def engine_codec(cls: type[Any], engine: str, sample: Any) -> Codec:
    """A codec of ``cls`` whose layouts run on ``engine``, warmed up with ``sample``."""
    codec = Codec(cls, compiled=engine == "c")
    for _ in range(2):
        codec.decode(codec.encode(sample))
    assert [layout.engine for layout in codec.layouts] == [engine]
    return codec


#: Text without NUL (CDR strings are NUL-terminated) and without lone surrogates (not UTF-8).
TEXT = st.text(
    alphabet=st.characters(exclude_characters="\x00", exclude_categories=("Cs",)), max_size=12
)


def primitive_strategy(primitive: Primitive, *, allow_nan: bool = False) -> st.SearchStrategy[Any]:
    """Random valid Python values of one wire primitive (floats exactly representable)."""
    if primitive is Primitive.BOOL:
        return st.booleans()
    if primitive is Primitive.STRING:
        return TEXT
    if primitive is Primitive.FLOAT32:
        return st.floats(width=32, allow_nan=allow_nan)
    if primitive is Primitive.FLOAT64:
        return st.floats(allow_nan=allow_nan)
    lo, hi = INT_RANGES[primitive]
    return st.integers(lo, hi)


def field_strategy(field: FieldSchema, *, allow_nan: bool = False) -> st.SearchStrategy[Any]:
    """Random valid values of one field, in the Python types the codec decodes to."""
    element = field.element
    if field.kind == "primitive":
        assert isinstance(element, Primitive)
        return primitive_strategy(element, allow_nan=allow_nan)
    if field.kind == "message":
        return message_strategy(element, allow_nan=allow_nan)  # type: ignore[arg-type]
    fixed = field.fixed_length
    size = {"min_size": fixed, "max_size": fixed} if fixed is not None else {"max_size": 6}
    if element in (Primitive.UINT8, Primitive.BYTE):
        return st.binary(**size)  # type: ignore[arg-type]
    if isinstance(element, Primitive):
        items = primitive_strategy(element, allow_nan=allow_nan)
    else:
        items = message_strategy(element, allow_nan=allow_nan)  # type: ignore[arg-type]
    return st.lists(items, **size).map(tuple)  # type: ignore[arg-type]


@cache
def message_strategy(cls: type[Any], *, allow_nan: bool = False) -> st.SearchStrategy[Any]:
    """Random valid instances of a message class (built through its constructor).

    Built once per class: a strategy is immutable, and tests draw it inside the test body, where a
    new one each example had hypothesis validate the whole strategy tree again every time.
    """
    schema = schema_of(cls)
    return st.builds(cls, *(field_strategy(f, allow_nan=allow_nan) for f in schema.fields))


# ---------------------------------------------------------------------------------------------
# test-local message classes (no validation: the codec alone is under test)
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Stamp(Message):
    """Same layout as ``builtin_interfaces/Time``, under a test name."""

    TYPE_NAME: ClassVar[str] = "jointbus_codec_test/msg/Stamp"
    #: Built directly by the fast path (no constructor); nested in classes that are not.
    WIRE_RULES: ClassVar[dict[str, WireRule]] = {}
    sec: Int32
    nanosec: UInt32


@dataclass(frozen=True, slots=True)
class Head(Message):
    """Same layout as ``std_msgs/Header``: a nested message then an odd-length string."""

    TYPE_NAME: ClassVar[str] = "jointbus_codec_test/msg/Head"
    stamp: Stamp
    frame_id: String


@dataclass(frozen=True, slots=True)
class AllPrimitives(Message):
    """Every primitive, ordered so that almost every field needs padding before it."""

    TYPE_NAME: ClassVar[str] = "jointbus_codec_test/msg/AllPrimitives"
    MSG_CONSTANTS: ClassVar[tuple[tuple[str, Primitive, int | float | str], ...]] = (
        ("LIMIT", Primitive.INT32, -7),
        ("GAIN", Primitive.FLOAT64, 0.5),
        ("NAME", Primitive.STRING, "hb50"),
    )
    a_bool: Bool
    b_float64: Float64
    c_byte: Byte
    d_int64: Int64
    e_char: Annotated[int, Primitive.CHAR]
    f_uint64: UInt64
    g_int8: Int8
    h_int32: Int32
    i_uint8: UInt8
    j_int16: Int16
    k_uint16: UInt16
    l_uint32: UInt32
    m_float32: Float32
    n_string: String
    o_float64: Float64


@dataclass(frozen=True, slots=True)
class Sequences(Message):
    """Every sequence flavour, interleaved with scalars and strings to move the alignment."""

    TYPE_NAME: ClassVar[str] = "jointbus_codec_test/msg/Sequences"
    label: String
    names: StringSeq
    flags: BoolSeq
    wide: Float64Seq
    small: Int8Seq
    after_small: Float64
    raw: UInt8Seq
    payload: ByteSeq
    narrow: Float32Seq
    counts: UInt16Seq
    ints: Int32Seq
    words: UInt32Seq
    tail: UInt8


@dataclass(frozen=True, slots=True)
class FixedArrays(Message):
    """Fixed-length arrays (no count on the wire) of numbers, bytes, strings and messages."""

    TYPE_NAME: ClassVar[str] = "jointbus_codec_test/msg/FixedArrays"
    first: UInt8
    covariance: Annotated[tuple[float, ...], Seq(Primitive.FLOAT64, 9)]
    pair: Annotated[tuple[float, ...], Seq(Primitive.FLOAT32, 2)]
    digest: Annotated[bytes, Seq(Primitive.UINT8, 5)]
    labels: Annotated[tuple[str, ...], Seq(Primitive.STRING, 3)]
    corners: Annotated[tuple[Stamp, ...], Seq(Stamp, 2)]
    chars: Annotated[tuple[int, ...], Seq(Primitive.CHAR, 3)]
    last: Int16


@dataclass(frozen=True, slots=True)
class Inner(Message):
    """A nested message with a string, a sequence and a wide scalar."""

    TYPE_NAME: ClassVar[str] = "jointbus_codec_test/msg/Inner"
    WIRE_RULES: ClassVar[dict[str, WireRule]] = {}
    name: String
    values: Float64Seq
    level: UInt8
    weight: Float64


@dataclass(frozen=True, slots=True)
class Nested(Message):
    """Nested messages and sequences of messages (the RobotState / LegState shape)."""

    TYPE_NAME: ClassVar[str] = "jointbus_codec_test/msg/Nested"
    header: Head
    inner: Inner
    items: tuple[Inner, ...]
    stamps: tuple[Stamp, ...]
    code: Byte
    trailer: Float32Seq


@dataclass(frozen=True, slots=True)
class OnlyStrings(Message):
    """No numeric content at all: a layout decodes it to a cached object."""

    TYPE_NAME: ClassVar[str] = "jointbus_codec_test/msg/OnlyStrings"
    name: String
    others: StringSeq


@dataclass(frozen=True, slots=True)
class JointFrame(Message):
    """The shape of the 500 Hz messages (BridgeData): header, names, per-joint arrays."""

    TYPE_NAME: ClassVar[str] = "jointbus_codec_test/msg/JointFrame"
    header: Head
    joint_name: StringSeq
    position: Float32Seq
    velocity: Float32Seq
    temperature: UInt8Seq
    status: UInt16Seq
    brake: BoolSeq


#: Every test-local class, for parametrised tests.
ALL_CLASSES: tuple[type[Any], ...] = (
    Stamp,
    Head,
    AllPrimitives,
    Sequences,
    FixedArrays,
    Inner,
    Nested,
    OnlyStrings,
    JointFrame,
)


def samples() -> tuple[Any, ...]:
    """One message of every test-local class with every sequence non-empty (fixed examples)."""
    head = Head(Stamp(-5, 999_999_999), "base_link")
    inner = Inner("hüfte", (1.5, -2.25), 7, 3.0)
    return (
        Stamp(1, 2),
        head,
        AllPrimitives(
            True,
            1.25,
            200,
            -(2**62),
            65,
            2**63,
            -3,
            123456,
            255,
            -300,
            60000,
            2**31,
            0.5,
            "ünïcode ✓",
            -0.0,
        ),
        Sequences(
            "lbl",
            ("a", "", "ccc"),
            (True, False),
            (1.0, 2.0),
            (-1, 2, 3),
            9.5,
            b"\x00\x01",
            b"\xff",
            (0.25,),
            (1, 2, 3),
            (-7,),
            (8, 9),
            4,
        ),
        FixedArrays(
            1,
            tuple(float(i) for i in range(9)),
            (0.5, 1.5),
            b"abcde",
            ("x", "yy", ""),
            (Stamp(1, 1), Stamp(2, 2)),
            (97, 98, 99),
            -2,
        ),
        inner,
        Nested(head, inner, (inner, Inner("", (), 0, 0.0)), (Stamp(3, 4),), 9, (1.0, 2.0)),
        OnlyStrings("only", ("strings", "here")),
        JointFrame(
            head,
            ("fr_j0", "fr_j1", "fr_j2"),
            (0.5, -0.5, 1.0),
            (0.0, 0.25, -0.25),
            b"\x1e\x1f\x20",
            (0, 1, 65535),
            (False, True, False),
        ),
    )


@cache
def same_layout_strategy(msg: Any, *, allow_nan: bool = False) -> st.SearchStrategy[Any]:
    """Messages with ``msg``'s strings and sequence lengths but fresh numbers (one layout).

    Built once per message, as :func:`message_strategy` is.
    """
    schema = schema_of(type(msg))
    parts: list[st.SearchStrategy[Any]] = []
    for field in schema.fields:
        value = getattr(msg, field.name)
        element = field.element
        if field.kind == "primitive":
            assert isinstance(element, Primitive)
            parts.append(
                st.just(value)
                if element is Primitive.STRING
                else primitive_strategy(element, allow_nan=allow_nan)
            )
        elif field.kind == "message":
            parts.append(same_layout_strategy(value, allow_nan=allow_nan))
        elif element is Primitive.STRING:
            parts.append(st.just(value))
        elif element in (Primitive.UINT8, Primitive.BYTE):
            parts.append(st.binary(min_size=len(value), max_size=len(value)))
        elif isinstance(element, Primitive):
            items = primitive_strategy(element, allow_nan=allow_nan)
            parts.append(st.tuples(*(items for _ in value)))
        else:
            parts.append(st.tuples(*(same_layout_strategy(v, allow_nan=allow_nan) for v in value)))
    return st.builds(type(msg), *parts)
