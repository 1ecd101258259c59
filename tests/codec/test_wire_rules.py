"""Building messages from the wire without constructors accepts exactly what constructors accept.

What a user relies on: the 500 Hz messages decode fast because classes that declare ``WIRE_RULES``
(jointbus.codec.rules) are built directly from a cached layout, after checking only those rules.
That must never let through a message the constructor would reject (a negative gain, a NaN target,
an infinite measurement, a battery above 100 %, an unknown status level), nor reject one it
accepts, nor build a different object (a plain ``int`` where the constructor stores a ``Level``).
These tests decode random valid *and* invalid wire content of a layout with every engine (the
Python fast path, the compiled core when built) and compare each with the generic engine, which
runs the real constructor.
"""

from __future__ import annotations

import enum
import math
import struct
from dataclasses import dataclass, fields
from functools import cache
from typing import Any, ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.codec import DecodeError, SchemaError, cdr, schema_of
from jointbus.codec.layout import MISS, Layout, WireRuleViolation, compile_layout
from jointbus.codec.rules import WireRule, rules_of
from jointbus.codec.wire import (
    Byte,
    Float32,
    Float32Seq,
    Float64,
    Float64Seq,
    Int8Seq,
    Int32,
    Int64,
    Primitive,
    String,
    UInt8,
    UInt16Seq,
)
from jointbus.messages.base import Message
from jointbus.messages.geometry_msgs import Pose, Quaternion, Twist, Vector3
from jointbus.messages.stamp import Time
from jointbus.messages.status import Level, Status
from jointbus.messages.std_msgs import Header
from jointbus.robots.hb50.messages import BridgeData, BridgeState, JointCommand
from support.wire_strategies import ENGINES, TEXT, engine_codec

# ---------------------------------------------------------------------------------------------
# layout samples: strings and lengths vary, numbers are overwritten on the wire below
# ---------------------------------------------------------------------------------------------
NAMES = st.lists(TEXT.filter(bool), unique=True, max_size=4).map(tuple)
HEADERS = st.builds(Header, st.just(Time(1, 2)), TEXT)


@st.composite
def joint_commands(draw: st.DrawFn) -> JointCommand:
    names = draw(NAMES)
    zeros = (0.0,) * len(names)
    return JointCommand(
        draw(HEADERS),
        draw(TEXT),
        names,
        zeros,
        zeros,
        zeros,
        zeros,
        zeros,
        zeros,
        (False,) * len(names),
    )


@st.composite
def bridge_data(draw: st.DrawFn) -> BridgeData:
    names = draw(NAMES)
    n = len(names)
    zeros = (0.0,) * n
    return BridgeData(
        draw(HEADERS),
        Quaternion(),
        Vector3(),
        Vector3(),
        names,
        zeros,
        zeros,
        zeros,
        bytes(n),
        (0,) * n,
    )


class Gear(enum.IntEnum):
    """An enum with a gap (3, 4 are not members)."""

    LOW = 1
    HIGH = 2
    REVERSE = 5


@dataclass(frozen=True, slots=True)
class RuleZoo(Message):
    """Every kind of rule on every kind of field, its constructor written out by hand."""

    TYPE_NAME: ClassVar[str] = "jointbus_codec_test/msg/RuleZoo"
    WIRE_RULES: ClassVar[dict[str, WireRule]] = {
        "wide": WireRule(finite=True),
        "narrow": WireRule(finite=True, le=10.0),
        "measured": WireRule(no_inf=True, ge=-1.0),
        "small": WireRule(ge=-3, le=3),
        "gears": WireRule(enum=Gear),
        "gear": WireRule(enum=Gear, ge=2),
        "ratio": WireRule(finite=True, ge=0.0, le=1.0),
        "count": WireRule(le=100),
        "any64": WireRule(no_inf=True),
    }
    label: String
    wide: Float64Seq
    narrow: Float32Seq
    measured: Float32Seq
    small: Int8Seq
    gears: UInt16Seq
    gear: Byte
    ratio: Float32
    count: Int32
    any64: Float64
    free: Float32Seq

    def __post_init__(self) -> None:
        def require(ok: bool, field: str) -> None:
            if not ok:
                raise ValueError(f"{field} breaks its rule")

        require(all(math.isfinite(v) for v in self.wide), "wide")
        require(all(math.isfinite(v) and v <= 10.0 for v in self.narrow), "narrow")
        require(all(not math.isinf(v) and not v < -1.0 for v in self.measured), "measured")
        require(all(-3 <= v <= 3 for v in self.small), "small")
        object.__setattr__(self, "gears", tuple(Gear(v) for v in self.gears))
        require(self.gear >= 2, "gear")
        object.__setattr__(self, "gear", Gear(self.gear))
        require(math.isfinite(self.ratio) and 0.0 <= self.ratio <= 1.0, "ratio")
        require(self.count <= 100, "count")
        require(not math.isinf(self.any64), "any64")


@st.composite
def rule_zoos(draw: st.DrawFn) -> RuleZoo:
    def n() -> int:
        return draw(st.integers(0, 3))

    return RuleZoo(
        draw(TEXT),
        (0.0,) * n(),
        (0.0,) * n(),
        (0.0,) * n(),
        (0,) * n(),
        (1,) * n(),
        2,
        0.5,
        0,
        0.0,
        (0.0,) * n(),
    )


SAMPLES: dict[str, st.SearchStrategy[Any]] = {
    "RuleZoo": rule_zoos(),
    "JointCommand": joint_commands(),
    "BridgeData": bridge_data(),
    "BridgeState": st.builds(BridgeState, status=st.lists(TEXT, max_size=3).map(tuple)),
    "Status": st.builds(Status, HEADERS, st.just(Level.OK), TEXT, TEXT, st.binary(max_size=3)),
    "Header": HEADERS,
    "Time": st.just(Time(0, 0)),
    "Quaternion": st.just(Quaternion()),
    "Vector3": st.just(Vector3()),
    "Twist": st.just(Twist()),
    "Pose": st.just(Pose()),
}
HOT_CLASSES = (JointCommand, BridgeData, BridgeState, Status, Header, Time, Quaternion, Vector3)

# ---------------------------------------------------------------------------------------------
# wire content: any bit pattern, biased towards the values rules are about
# ---------------------------------------------------------------------------------------------
SPECIAL_FLOATS = [
    math.nan,
    math.inf,
    -math.inf,
    -0.0,
    0.0,
    -1.0,
    -1e-40,
    100.0,
    100.00001,
    3.4028234663852886e38,
]


@cache  # one strategy per primitive, not a new one (validated again) per element and example
def wire_value(primitive: Primitive) -> st.SearchStrategy[bytes]:
    """Bytes of one element: mostly interesting values, sometimes raw bits (e.g. signalling NaN)."""
    size = primitive.size
    raw = st.binary(min_size=size, max_size=size)
    if primitive in (Primitive.FLOAT32, Primitive.FLOAT64):
        code = "<f" if primitive is Primitive.FLOAT32 else "<d"
        width = 32 if primitive is Primitive.FLOAT32 else 64
        values = st.one_of(st.sampled_from(SPECIAL_FLOATS), st.floats(width=width))
        return st.one_of(values.map(lambda v: struct.pack(code, v)), raw)
    if primitive is Primitive.BOOL:
        return st.integers(0, 255).map(lambda v: bytes([v]))
    modulus = 256**size  # small values, negative ones as their two's complement bits
    small = st.integers(-2, 6).map(lambda v: (v % modulus).to_bytes(size, "little"))
    return st.one_of(small, raw)


def mutate(draw: st.DrawFn, layout: Layout, payload: bytes) -> bytes:
    """``payload`` with about a quarter of the layout's variable elements rewritten."""
    out = bytearray(payload)
    for offset, primitive in layout.variables:
        if draw(st.integers(0, 3)) == 0:
            out[offset : offset + primitive.size] = draw(wire_value(primitive))
    return bytes(out)


# ---------------------------------------------------------------------------------------------
# comparison
# ---------------------------------------------------------------------------------------------
def same(a: Any, b: Any) -> bool:
    """Equal values of identical types, NaN equal to NaN and -0.0 distinct from 0.0."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
        )
    if isinstance(a, tuple):
        return len(a) == len(b) and all(map(same, a, b))
    if hasattr(type(a), "TYPE_NAME"):
        return all(same(getattr(a, f.name), getattr(b, f.name)) for f in fields(a))
    return bool(a == b)


def engine_result(layout: Layout, data: bytes) -> Any:
    """The engine's object, or MISS when it refuses (MISS or a WireRuleViolation)."""
    try:
        return layout.decode(data)
    except WireRuleViolation:
        return MISS


def reference(cls: type[Any], data: bytes) -> tuple[str, Any]:
    try:
        return ("ok", cdr.decode(cls, data))
    except DecodeError as exc:
        return ("error", (exc.offset, exc.reason))


def layout_for(msg: Any, engine: str) -> Layout:
    layout = compile_layout(schema_of(type(msg)), msg, cdr.encode(msg), compiled=engine == "c")
    assert layout.engine == engine
    return layout


# ---------------------------------------------------------------------------------------------
# the equivalence property
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", list(SAMPLES))
@given(data=st.data())
def test_engine_accepts_exactly_what_the_constructor_accepts(
    name: str, engine: str, data: st.DataObject
) -> None:
    sample = data.draw(SAMPLES[name])
    cls = type(sample)
    layout = layout_for(sample, engine)
    payload = mutate(data.draw, layout, cdr.encode(sample))
    expected = reference(cls, payload)
    got = engine_result(layout, payload)
    if expected[0] == "ok":
        assert got is not MISS, f"{engine} refused content the constructor accepts: {expected[1]}"
        assert same(got, expected[1])
        assert layout.encode(got) == cdr.encode(expected[1])
    else:
        assert got is MISS, f"{engine} accepted content the constructor rejects: {expected[1]}"
    # Through the codec (what from_cdr uses): the same object or the constructor's DecodeError.
    codec = engine_codec(cls, engine, sample)
    try:
        decoded: tuple[str, Any] = ("ok", codec.decode(payload))
    except DecodeError as exc:
        decoded = ("error", (exc.offset, exc.reason))
    assert decoded[0] == expected[0]
    assert same(decoded[1], expected[1]) if decoded[0] == "ok" else decoded == expected


def _command(**changes: Any) -> JointCommand:
    n = 3
    values: dict[str, Any] = {
        "header": Header(Time(1, 2), "base"),
        "source_node": "ctl",
        "name": ("a", "b", "c"),
        "kp": (80.0,) * n,
        "ki": (0.0,) * n,
        "kd": (3.0,) * n,
        "t_pos": (0.5,) * n,
        "t_vel": (0.0,) * n,
        "t_trq": (0.0,) * n,
        "brake": (False,) * n,
    }
    values.update(changes)
    return JointCommand(**values)


def _patched(msg: Any, path: tuple[str, int], code: str, value: Any) -> bytes:
    """The bytes of ``msg`` with element ``index`` of field ``path[0]`` set to ``value``."""
    layout = layout_for(msg, "python")
    field_name, index = path
    target = getattr(msg, field_name)
    marker = 12345.5  # a value no sample field holds, to find the element's offset
    probe = type(msg)(
        **{
            **{f.name: getattr(msg, f.name) for f in fields(msg)},
            field_name: (*target[:index], marker, *target[index + 1 :]),
        }
    )
    data = bytearray(cdr.encode(probe))
    where = bytes(data).index(struct.pack(code, marker))
    assert any(offset == where for offset, _ in layout.variables)
    struct.pack_into(code, data, where, value)
    return bytes(data)


BREAKS = [
    (_command(), ("kp", 1), -1.0, "kp"),
    (_command(), ("kd", 2), -0.5, "kd"),
    (_command(), ("t_pos", 0), math.nan, "t_pos"),
    (_command(), ("ki", 0), math.inf, "ki"),
    (_command(), ("t_trq", 2), -math.inf, "t_trq"),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("msg", "path", "value", "field"), BREAKS)
def test_each_broken_rule_is_refused_and_decodes_to_the_constructors_error(
    engine: str, msg: Any, path: tuple[str, int], value: float, field: str
) -> None:
    data = _patched(msg, path, "<f", value)
    assert engine_result(layout_for(msg, engine), data) is MISS
    with pytest.raises(DecodeError, match=field) as info:
        engine_codec(type(msg), engine, msg).decode(data)
    assert f"index {path[1]}" in info.value.reason


@pytest.mark.parametrize("engine", ENGINES)
def test_a_negative_zero_gain_is_accepted_like_the_constructor_does(engine: str) -> None:
    msg = _command()
    data = _patched(msg, ("kp", 0), "<f", -0.0)
    decoded = engine_result(layout_for(msg, engine), data)
    assert same(decoded, cdr.decode(JointCommand, data))
    assert math.copysign(1.0, decoded.kp[0]) == -1.0


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("level", "ok"), [(0, False), (1, True), (4, True), (5, False)])
def test_status_level_is_decoded_to_a_level_member_or_refused(
    engine: str, level: int, ok: bool
) -> None:
    msg = Status(Header(Time(1, 2), "x"), Level.WARN, "node", "text", b"\x01")
    data = bytearray(cdr.encode(msg))
    level_at = 4 + 8 + 4 + 2  # header id, stamp, frame_id "x" (length + "x\0")
    assert data[level_at] == Level.WARN
    data[level_at] = level
    decoded = engine_result(layout_for(msg, engine), bytes(data))
    if ok:
        assert type(decoded.level) is Level and decoded.level == level
    else:
        assert decoded is MISS


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("field", "value", "ok"),
    [
        ("battery", 100.5, False),
        ("battery", math.nan, True),
        ("battery", 0.0, True),
        ("bus_v", math.inf, False),
        ("ext1_t", math.nan, True),
    ],
)
def test_bridge_state_float_rules(engine: str, field: str, value: float, ok: bool) -> None:
    msg = BridgeState(50.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, True, ("ok",), 3)
    index = [f.name for f in fields(msg)].index(field)
    data = bytearray(cdr.encode(msg))
    struct.pack_into("<f", data, 4 + 4 * index, value)
    decoded = engine_result(layout_for(msg, engine), bytes(data))
    assert (decoded is not MISS) is ok
    if ok:
        assert same(decoded, cdr.decode(BridgeState, bytes(data)))


@pytest.mark.parametrize("engine", ENGINES)
def test_negative_up_time_is_refused(engine: str) -> None:
    msg = BridgeState(up_time=7)
    data = bytearray(cdr.encode(msg))
    assert struct.unpack_from("<i", data, len(data) - 4) == (7,)
    struct.pack_into("<i", data, len(data) - 4, -1)
    assert engine_result(layout_for(msg, engine), bytes(data)) is MISS
    with pytest.raises(DecodeError, match="up_time"):
        engine_codec(BridgeState, engine, msg).decode(bytes(data))


# ---------------------------------------------------------------------------------------------
# the declarations themselves
# ---------------------------------------------------------------------------------------------
def test_the_hot_messages_declare_wire_rules() -> None:
    for cls in (*HOT_CLASSES, Twist, Pose):
        assert rules_of(cls) is not None, cls.__name__


@dataclass(frozen=True, slots=True)
class Ranked(Message):
    """A test class: a float with bounds, an enum byte, a name."""

    TYPE_NAME: ClassVar[str] = "jointbus_codec_test/msg/Ranked"
    WIRE_RULES: ClassVar[dict[str, WireRule]] = {"score": WireRule(ge=0.0, le=1.0)}
    name: String
    score: Float64


@dataclass(frozen=True, slots=True)
class RankedStrict(Ranked):
    """A subclass does not inherit WIRE_RULES: it is built by its constructor."""

    TYPE_NAME: ClassVar[str] = "jointbus_codec_test/msg/RankedStrict"


class Colour(enum.IntFlag):
    RED = 1


def _declare(**annotations_and_rules: Any) -> type[Any]:
    rules = annotations_and_rules.pop("rules")
    namespace: dict[str, Any] = {
        "__annotations__": {"TYPE_NAME": ClassVar[str], **annotations_and_rules},
        "TYPE_NAME": "jointbus_codec_test/msg/Declared",
        "WIRE_RULES": rules,
    }
    return dataclass(frozen=True, slots=True)(type("Declared", (Message,), namespace))


@pytest.mark.parametrize(
    ("annotations", "rules", "match"),
    [
        ({"x": Float64}, {"y": WireRule(finite=True)}, "not a wire field"),
        ({"x": Float64}, {"x": "finite"}, "not a WireRule"),
        ({"x": UInt8}, {"x": WireRule(finite=True)}, "float fields"),
        ({"x": Int64}, {"x": WireRule(ge=0)}, "32-bit"),
        ({"x": UInt8}, {"x": WireRule(enum=Colour)}, "IntEnum"),
        ({"x": Float32}, {"x": WireRule(enum=Level)}, "integer field"),
        ({"h": Header}, {"h": WireRule(finite=True)}, "not messages"),
        ({"x": Float64}, ["x"], "must map"),
    ],
)
def test_bad_declarations_are_schema_errors(
    annotations: dict[str, Any], rules: Any, match: str
) -> None:
    cls = _declare(**annotations, rules=rules)
    with pytest.raises(SchemaError, match=match):
        rules_of(cls)


def test_rules_are_not_inherited() -> None:
    assert rules_of(Ranked) is not None
    assert rules_of(RankedStrict) is None


@pytest.mark.parametrize("engine", ENGINES)
def test_float_bounds_accept_the_bounds_and_nan(engine: str) -> None:
    msg = Ranked("r", 0.5)
    layout = layout_for(msg, engine)
    for score, ok in [(0.0, True), (1.0, True), (math.nan, True), (-1e-300, False), (1.5, False)]:
        data = cdr.encode(Ranked("r", score))
        assert (engine_result(layout, data) is not MISS) is ok, score


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("bits", [0x7F800001, 0x7FC12345, 0xFFC00000, 0x7FC00000])
def test_nan_payloads_round_trip_like_the_generic_engine(engine: str, bits: int) -> None:
    names = ("a", "b")
    msg = BridgeData(
        joint_name=names,
        joint_position=(1.0, 2.0),
        joint_velocity=(0.0, 0.0),
        joint_effort=(0.0, 0.0),
        joint_temperature=b"\x00\x00",
        joint_status=(0, 0),
    )
    data = bytearray(cdr.encode(msg))
    where = bytes(data).index(struct.pack("<2f", 1.0, 2.0))
    struct.pack_into("<I", data, where, bits)  # a NaN (signalling or with a payload)
    expected = cdr.encode(cdr.decode(BridgeData, bytes(data)))
    decoded = engine_result(layout_for(msg, engine), bytes(data))
    assert math.isnan(decoded.joint_position[0])
    assert layout_for(msg, engine).encode(decoded) == expected
