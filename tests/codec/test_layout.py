"""The stable-layout fast path is exactly the generic engine, only faster (jointbus.codec.layout).

What a user relies on: whichever path the codec takes, ``to_cdr`` gives the same bytes and
``from_cdr`` the same object or the same :class:`DecodeError` as the reference engine (which is in
turn checked against rosbags in ``test_cdr.py``). Tests warm a codec up so that a layout is
compiled, then compare it with ``jointbus.codec.cdr`` on fresh content of that layout, on random
bytes and on corrupted payloads; one disables the generic engine to prove the fast path works.
Every test runs on each layout engine available (pure Python, and the compiled core when built).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jointbus.codec.codec as codec_module
from jointbus.codec import Codec, DecodeError, EncodeError, cdr, schema_of
from jointbus.codec.layout import MISS, compile_layout, key_of
from support.wire_strategies import (
    ALL_CLASSES,
    ENGINES,
    JointFrame,
    engine_codec,
    message_strategy,
    same_layout_strategy,
    samples,
)

SAMPLES = samples()
IDS = [type(m).__name__ for m in SAMPLES]

#: Examples per case of each property below. Each runs 18 cases (9 classes or samples x 2
#: engines), so this is ~540 examples per property a run; hypothesis' default of 100 per case made
#: this file the costliest of the quick suite. A profile with more examples
#: (``HYPOTHESIS_PROFILE=fuzz``) scales it up.
PER_CASE = settings(max_examples=max(30, settings.default.max_examples // 4))


def warmed(msg: Any, engine: str) -> Codec:
    return engine_codec(type(msg), engine, msg)


def outcome(fn: Callable[[], Any]) -> tuple[str, Any]:
    """("ok", (type, bytes)) or ("error", (type, offset / field)) so two engines' answers compare.

    A decoded object is compared by its class and its re-encoding: corrupted floats may be NaN,
    which never equals itself, while equal bytes from one encoder mean equal content.
    """
    try:
        result = fn()
        content = cdr.encode(result) if hasattr(result, "TYPE_NAME") else result
        return ("ok", (type(result), content))
    except DecodeError as exc:
        return ("error", (DecodeError, exc.offset, exc.reason))
    except EncodeError as exc:
        return ("error", (EncodeError, exc.field))


@pytest.fixture
def disable_generic_engine(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """A function that makes any later use of the generic engine by the codec fail loudly."""

    def refuse(*_: object) -> Any:
        raise AssertionError("the generic engine was used; the fast path should have been")

    def disable() -> None:
        monkeypatch.setattr(codec_module.cdr, "encode", refuse)
        monkeypatch.setattr(codec_module.cdr, "decode", refuse)

    return disable


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("msg", SAMPLES, ids=IDS)
@PER_CASE
@given(data=st.data())
def test_fast_path_equals_generic_on_fresh_content_of_the_layout(
    engine: str, msg: Any, data: st.DataObject
) -> None:
    codec = warmed(msg, engine)
    fresh = data.draw(same_layout_strategy(msg))
    expected = cdr.encode(fresh)
    assert codec.encode(fresh) == expected
    assert codec.decode(expected) == cdr.decode(type(msg), expected) == fresh


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("msg", SAMPLES, ids=IDS)
def test_fast_path_does_the_work_once_warm(
    engine: str, msg: Any, disable_generic_engine: Callable[[], None]
) -> None:
    codec = warmed(msg, engine)
    disable_generic_engine()
    data = codec.encode(msg)
    assert codec.decode(data) == msg
    assert codec.decode(data + b"\x00\x00") == msg  # trailing padding is accepted by both paths


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("cls", ALL_CLASSES, ids=[c.__name__ for c in ALL_CLASSES])
@PER_CASE
@given(data=st.data())
def test_codec_equals_generic_on_random_messages(
    engine: str, cls: type[Any], data: st.DataObject
) -> None:
    codec = Codec(cls, compiled=engine == "c")
    for _ in range(3):  # first: generic; second: compiles; third: fast path
        msg = data.draw(message_strategy(cls))
        expected = cdr.encode(msg)
        for _ in range(3):
            assert codec.encode(msg) == expected
            assert codec.decode(expected) == msg


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("msg", SAMPLES, ids=IDS)
@PER_CASE
@given(data=st.data())
def test_fast_path_equals_generic_on_corrupted_payloads(
    engine: str, msg: Any, data: st.DataObject
) -> None:
    codec = warmed(msg, engine)
    payload = bytearray(cdr.encode(msg))
    # Mostly single-byte changes: they keep the layout's constant bytes, so the fast path decodes.
    for _ in range(data.draw(st.integers(1, 3))):
        where = data.draw(st.integers(0, len(payload) - 1))
        payload[where] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        payload += data.draw(st.binary(max_size=5))
    blob = bytes(payload)
    assert outcome(lambda: codec.decode(blob)) == outcome(lambda: cdr.decode(type(msg), blob))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("msg", SAMPLES, ids=IDS)
@PER_CASE
@given(garbage=st.binary(max_size=300))
def test_fast_path_equals_generic_on_random_bytes(engine: str, msg: Any, garbage: bytes) -> None:
    codec = warmed(msg, engine)
    blob = b"\x00\x01\x00\x00" + garbage
    assert outcome(lambda: codec.decode(blob)) == outcome(lambda: cdr.decode(type(msg), blob))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("msg", SAMPLES, ids=IDS)
@PER_CASE
@given(data=st.data())
def test_fast_path_equals_generic_on_nan_and_extreme_floats(
    engine: str, msg: Any, data: st.DataObject
) -> None:
    codec = warmed(msg, engine)
    fresh = data.draw(same_layout_strategy(msg, allow_nan=True))
    expected = cdr.encode(fresh)
    assert codec.encode(fresh) == expected
    assert cdr.encode(codec.decode(expected)) == expected  # NaN != NaN: compare re-encodings


@pytest.mark.parametrize("engine", ENGINES)
def test_layout_of_a_sample_reproduces_the_generic_bytes(engine: str) -> None:
    for msg in SAMPLES:
        schema = schema_of(type(msg))
        data = cdr.encode(msg)
        layout = compile_layout(schema, msg, data, compiled=engine == "c")
        assert layout.engine == engine
        assert layout.size == len(data)
        assert layout.pack(msg) == data == layout.encode(msg)
        assert layout.unpack(data) == msg == layout.decode(data)
        assert layout.matches(msg)
        assert layout.key == key_of(schema, msg)


@pytest.mark.parametrize("engine", ENGINES)
def test_layout_refuses_bytes_and_objects_of_another_layout(engine: str) -> None:
    a = JointFrame(SAMPLES[1], ("a",), (1.0,), (2.0,), b"\x01", (3,), (True,))
    b = JointFrame(SAMPLES[1], ("b",), (1.0,), (2.0,), b"\x01", (3,), (True,))
    longer = JointFrame(SAMPLES[1], ("a",), (1.0, 2.0), (2.0,), b"\x01", (3,), (True,))
    layout = compile_layout(schema_of(JointFrame), a, cdr.encode(a), compiled=engine == "c")
    assert layout.decode(cdr.encode(b)) is MISS  # same size, different name: caught by the consts
    assert not layout.matches(b)
    assert layout.encode(b) is None
    assert layout.encode(longer) is None
    assert layout.encode(SAMPLES[1]) is None  # another class
    assert layout.decode(cdr.encode(a)[:-1]) is MISS
    assert layout.decode(b"\x00\x00" + cdr.encode(a)[2:]) is MISS  # big-endian id


@pytest.mark.parametrize("engine", ENGINES)
def test_wrong_lengths_in_a_matching_layout_fall_back_and_raise_like_generic(engine: str) -> None:
    msg = SAMPLES[-1]  # JointFrame
    codec = warmed(msg, engine)
    rest = (msg.temperature, msg.status, msg.brake)
    bad = JointFrame(msg.header, msg.joint_name, msg.position, (1.0,), *rest)
    assert codec.encode(bad) == cdr.encode(bad)  # a new layout, still the generic bytes
    overflow = JointFrame(msg.header, msg.joint_name, (1e39, 0.0, 0.0), msg.velocity, *rest)
    with pytest.raises(EncodeError) as info:
        codec.encode(overflow)
    assert info.value.field == "position[0]"
