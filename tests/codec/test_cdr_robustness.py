"""Untrusted bytes raise only DecodeError, naming an offset, quickly and without big allocations.

What a user relies on: a subscriber fed garbage (a truncated datagram, another type's payload, a
hostile peer claiming 4 billion elements) counts a :class:`DecodeError` and keeps running; it never
sees ``IndexError`` / ``struct.error``, never hangs and never allocates gigabytes. The generic
engine and the warmed-up per-class codec (its stable-layout fast path) on every layout engine
available (pure Python, and the compiled core when built) are checked.
"""

from __future__ import annotations

import struct
import tracemalloc
from array import array
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointbus.codec import Codec, DecodeError, cdr
from support.wire_strategies import (
    ENGINES,
    Head,
    OnlyStrings,
    Sequences,
    Stamp,
    engine_codec,
    samples,
)

SAMPLES = samples()
IDS = [type(m).__name__ for m in SAMPLES]


def warmed_codec(msg: Any, engine: str) -> Codec:
    """A codec that has compiled the layout of ``msg`` (so the fast path sees the input first)."""
    return engine_codec(type(msg), engine, msg)


def decoders(msg: Any) -> list[Callable[[bytes], Any]]:
    """The generic engine, then a warmed codec per layout engine."""
    cls = type(msg)
    codecs = [warmed_codec(msg, engine).decode for engine in ENGINES]
    return [lambda data: cdr.decode(cls, data), *codecs]


def assert_decodes_or_fails_cleanly(decode: Callable[[bytes], Any], cls: type, data: bytes) -> None:
    try:
        result = decode(data)
    except DecodeError as exc:
        assert 0 <= exc.offset <= len(data), exc
        assert exc.type_name == cls.TYPE_NAME  # type: ignore[attr-defined]
    else:
        assert type(result) is cls


@pytest.mark.parametrize("msg", SAMPLES, ids=IDS)
def test_every_truncation_raises_decode_error_within_the_payload(msg: Any) -> None:
    data = cdr.encode(msg)
    for decode in decoders(msg):
        for cut in range(len(data)):
            with pytest.raises(DecodeError) as info:
                decode(data[:cut])
            assert 0 <= info.value.offset <= cut


@pytest.mark.parametrize("msg", SAMPLES, ids=IDS)
def test_up_to_three_trailing_bytes_are_padding_more_are_an_error(msg: Any) -> None:
    data = cdr.encode(msg)
    for decode in decoders(msg):
        for extra in range(1, 4):
            assert decode(data + b"\x00" * extra) == msg
        with pytest.raises(DecodeError, match="unexpected bytes") as info:
            decode(data + b"\x00" * 4)
        assert info.value.offset == len(data)


BAD_HEADERS = [b"", b"\x00", b"\x00\x01\x00", b"\x00\x02\x00\x00", b"\x01\x00\x00\x00", b"\xff\xff"]


@pytest.mark.parametrize("header", BAD_HEADERS)
def test_bad_encapsulation_is_rejected_at_offset_0(header: bytes) -> None:
    for decode in decoders(Head(Stamp(1, 2), "x")):
        with pytest.raises(DecodeError) as info:
            decode(header + cdr.encode(Head(Stamp(1, 2), "x"))[4:] if len(header) == 4 else header)
        assert info.value.offset == 0


def _sequences_with_count(field_offset: int, count: int) -> bytes:
    data = bytearray(cdr.encode(Sequences("", (), (), (), (), 0.0, b"", b"", (), (), (), (), 0)))
    struct.pack_into("<I", data, field_offset, count)
    return bytes(data)


@pytest.mark.parametrize("count", [0xFFFFFFFF, 0x7FFFFFFF, 1 << 20])
def test_absurd_sequence_counts_fail_fast_without_allocating(count: int) -> None:
    # Sequences("") layout: header(4) label len(4)+NUL(1)+pad(3) -> names count at byte 12.
    data = _sequences_with_count(12, count)
    for decode in decoders(SAMPLES[3]):
        tracemalloc.start()
        try:
            with pytest.raises(DecodeError, match="claims") as info:
                decode(data)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert info.value.offset == 12
        assert peak < 256 * 1024, f"decoding allocated {peak} bytes"


def test_absurd_string_length_fails_without_allocating() -> None:
    data = bytearray(cdr.encode(Head(Stamp(1, 2), "abc")))
    struct.pack_into("<I", data, 12, 0xFFFFFFFF)
    tracemalloc.start()
    try:
        with pytest.raises(DecodeError, match="frame_id") as info:
            cdr.decode(Head, bytes(data))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert info.value.offset == 16
    assert peak < 256 * 1024


def test_invalid_utf8_names_the_offending_byte() -> None:
    data = bytearray(cdr.encode(OnlyStrings("abcd", ())))
    data[4 + 4 + 2] = 0xFF  # third byte of "abcd"
    for decode in decoders(OnlyStrings("abcd", ())):
        with pytest.raises(DecodeError, match="UTF-8") as info:
            decode(bytes(data))
        assert info.value.offset == 10


@pytest.mark.parametrize(
    ("patch", "reason"),
    [
        ((8, b"\x00"), "not NUL-terminated"),  # last byte of "abc\0" -> "abcX"
        ((5, b"\x00"), "contains a NUL"),  # "a\0c\0"
    ],
)
def test_malformed_string_terminators_are_rejected(patch: tuple[int, bytes], reason: str) -> None:
    data = bytearray(cdr.encode(OnlyStrings("abc", ())))
    offset, _ = patch
    data[offset + 3] = ord("X") if reason == "not NUL-terminated" else 0
    with pytest.raises(DecodeError, match=reason):
        cdr.decode(OnlyStrings, bytes(data))


def test_zero_length_string_is_rejected() -> None:
    data = bytearray(cdr.encode(OnlyStrings("", ())))
    struct.pack_into("<I", data, 4, 0)
    with pytest.raises(DecodeError, match="length 0") as info:
        cdr.decode(OnlyStrings, bytes(data))
    assert info.value.offset == 4


@pytest.mark.parametrize("msg", SAMPLES, ids=IDS)
def test_any_buffer_type_decodes_like_bytes(msg: Any) -> None:
    data = cdr.encode(msg)
    cls = type(msg)
    words = array("B", data)
    assert cdr.decode(cls, bytearray(data)) == msg
    assert cdr.decode(cls, memoryview(data)) == msg
    assert cdr.decode(cls, memoryview(words)) == msg
    for engine in ENGINES:
        codec = warmed_codec(msg, engine)
        assert codec.decode(bytearray(data)) == msg
        assert codec.decode(memoryview(data)) == msg
        assert codec.decode(memoryview(words)) == msg
        assert codec.decode(memoryview(data)[::1]) == msg
        if len(data) % 4 == 0:  # a view whose items are 4 bytes wide: length in bytes still counts
            assert codec.decode(memoryview(data).cast("I")) == msg
    if len(data) % 4 == 0:
        assert cdr.decode(cls, memoryview(data).cast("I")) == msg
    assert cdr.decode(cls, memoryview(data)[::1]) == msg


@pytest.mark.parametrize("msg", SAMPLES, ids=IDS)
@given(
    garbage=st.binary(max_size=200),
    prefix=st.sampled_from([b"", b"\x00\x01\x00\x00", b"\x00\x00\x00\x00"]),
)
def test_random_bytes_raise_only_decode_error(msg: Any, garbage: bytes, prefix: bytes) -> None:
    for decode in decoders(msg):
        assert_decodes_or_fails_cleanly(decode, type(msg), prefix + garbage)


@pytest.mark.parametrize("msg", SAMPLES, ids=IDS)
@given(data=st.data())
def test_corrupted_valid_payloads_raise_only_decode_error(msg: Any, data: st.DataObject) -> None:
    payload = bytearray(cdr.encode(msg))
    for _ in range(data.draw(st.integers(1, 4))):
        where = data.draw(st.integers(0, len(payload) - 1))
        action = data.draw(st.sampled_from(["set", "insert", "delete"]))
        if action == "set":
            payload[where] = data.draw(st.integers(0, 255))
        elif action == "insert":
            payload[where:where] = data.draw(st.binary(min_size=1, max_size=8))
        elif len(payload) > 1:
            del payload[where]
    for decode in decoders(msg):
        assert_decodes_or_fails_cleanly(decode, type(msg), bytes(payload))


def test_message_sequence_count_is_bounded_by_the_element_size() -> None:
    # Nested.items holds Inner messages (>= 4+1 + 4 + 1 + 8 = 18 bytes each): a claim of 5 items
    # with 40 bytes left is refused at the count, before any element is decoded.
    from support.wire_strategies import Head, Inner, Nested

    msg = Nested(Head(Stamp(0, 0), ""), Inner("", (), 0, 0.0), (), (), 0, ())
    data = bytearray(cdr.encode(msg))
    items_count_at = 44  # header 4, stamp 8, frame_id 5, name 3+5, count 3+4, level 1, 3+8
    assert struct.unpack_from("<I", data, items_count_at) == (0,)
    struct.pack_into("<I", data, items_count_at, 5)
    with pytest.raises(DecodeError, match="claims 5 elements") as info:
        cdr.decode(Nested, bytes(data))
    assert info.value.offset == items_count_at


@pytest.mark.slow
@pytest.mark.parametrize("msg", SAMPLES, ids=IDS)
@settings(max_examples=5000)
@given(data=st.data())
def test_fuzz_decoders_with_corrupted_and_random_payloads(msg: Any, data: st.DataObject) -> None:
    payload = bytearray(cdr.encode(msg))
    for _ in range(data.draw(st.integers(0, 6))):
        where = data.draw(st.integers(0, len(payload)))
        payload[where : where + data.draw(st.integers(0, 4))] = data.draw(st.binary(max_size=6))
    for decode in decoders(msg):
        assert_decodes_or_fails_cleanly(decode, type(msg), bytes(payload))
