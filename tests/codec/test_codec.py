"""The per-class codec: caching, fallbacks and validation on decode (jointbus.codec.codec).

What a user relies on: ``codec_for(cls)`` is one shared object per class; it learns the layouts it
sees without growing without bound when a peer varies its content; two publishers with different
joint sets on one topic both decode correctly; and a constructor's validation still runs on every
decode, its rejection surfacing as a :class:`DecodeError` (the same one the generic engine gives).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pytest

import jointbus.codec as codec_api
from jointbus.codec import Codec, DecodeError, EncodeError, cdr, codec_for
from jointbus.codec.codec import MAX_LAYOUTS
from jointbus.codec.wire import Float64, String
from jointbus.messages.base import Message
from support.fresh import last_line_in_fresh_interpreter
from support.wire_strategies import Head, JointFrame, OnlyStrings, Stamp


@dataclass(frozen=True, slots=True)
class Gain(Message):
    """A message whose constructor rejects negative gains (as JointCommand does)."""

    TYPE_NAME: ClassVar[str] = "jointbus_codec_test/msg/Gain"
    joint: String
    kp: Float64

    def __post_init__(self) -> None:
        if self.kp < 0:
            raise ValueError(f"kp = {self.kp} must be >= 0")


def frame(names: tuple[str, ...], value: float = 0.5) -> JointFrame:
    n = len(names)
    return JointFrame(
        Head(Stamp(1, 2), "base"), names, (value,) * n, (0.0,) * n, bytes(n), (0,) * n, (False,) * n
    )


def test_codec_for_returns_one_shared_codec_per_class() -> None:
    assert codec_for(JointFrame) is codec_for(JointFrame)
    assert codec_for(JointFrame) is not codec_for(Head)
    assert codec_for(JointFrame).cls is JointFrame


def test_public_encode_decode_and_message_methods_agree_with_the_generic_engine() -> None:
    msg = frame(("a", "b"))
    data = cdr.encode(msg)
    assert codec_api.encode(msg) == data == msg.to_cdr()
    assert codec_api.decode(JointFrame, data) == msg == JointFrame.from_cdr(data)


def test_a_layout_is_compiled_on_the_second_sighting() -> None:
    codec = Codec(JointFrame)
    msg = frame(("a", "b"))
    codec.encode(msg)
    assert codec.layouts == ()
    codec.encode(msg)
    assert len(codec.layouts) == 1
    codec.decode(msg.to_cdr())  # decoding the same layout reuses it
    assert len(codec.layouts) == 1


def test_unfast_codec_never_compiles() -> None:
    codec = Codec(JointFrame, fast=False)
    msg = frame(("a",))
    for _ in range(3):
        assert codec.decode(codec.encode(msg)) == msg
    assert codec.layouts == ()


def test_layout_cache_is_bounded_when_content_keeps_changing() -> None:
    codec = Codec(JointFrame)
    for i in range(4 * MAX_LAYOUTS):
        msg = frame((f"joint_{i}",))
        data = codec.encode(msg)
        codec.encode(msg)
        assert codec.decode(data) == msg
    assert len(codec.layouts) <= MAX_LAYOUTS


def test_two_robots_on_one_topic_alternate_correctly() -> None:
    codec = Codec(JointFrame)
    small = frame(("a", "b"), 1.0)
    other_small = frame(("x", "y"), 2.0)  # same size as `small`, different names
    big = frame(("a", "b", "c"), 3.0)
    payloads = [(m, cdr.encode(m)) for m in (small, other_small, big)]
    for _ in range(4):
        for msg, data in payloads:
            assert codec.decode(data) == msg
            assert codec.encode(msg) == data
    assert len(codec.layouts) == 3


def test_constructor_rejection_on_decode_is_the_generic_decode_error() -> None:
    codec = Codec(Gain)
    good = Gain("fr_j0", 2.0)
    for _ in range(3):
        assert codec.decode(codec.encode(good)) == good
    bad = bytearray(cdr.encode(good))
    bad[-1] ^= 0x80  # flip the sign bit of kp (last byte, little-endian float64)
    with pytest.raises(DecodeError, match=r"kp = -2\.0 must be >= 0") as fast_info:
        codec.decode(bytes(bad))
    with pytest.raises(DecodeError) as generic_info:
        cdr.decode(Gain, bytes(bad))
    assert (fast_info.value.offset, fast_info.value.reason) == (
        generic_info.value.offset,
        generic_info.value.reason,
    )
    assert fast_info.value.offset == len(bad)


def test_an_unvalidated_sample_is_encoded_every_time_and_seeds_no_layout() -> None:
    """``topic pub --unchecked`` builds a message without its constructor's checks (a negative
    gain) to test a receiver's defences: encoding it again and again gives the generic engine's
    bytes (learning a layout from it decodes the sample, which the class refuses) and the
    receiver's decode refuses those bytes."""
    codec = Codec(Gain)
    bad = object.__new__(Gain)
    object.__setattr__(bad, "joint", "fr_j0")
    object.__setattr__(bad, "kp", -2.0)
    expected = cdr.encode(bad)
    for _ in range(3):
        assert codec.encode(bad) == expected
    assert codec.layouts == ()
    with pytest.raises(DecodeError, match=r"kp = -2\.0 must be >= 0"):
        codec.decode(expected)
    good = Gain("fr_j0", 2.0)
    for _ in range(2):
        assert codec.decode(codec.encode(good)) == good
    assert len(codec.layouts) == 1  # a valid sample of the same layout still seeds one


def test_message_with_only_strings_decodes_to_an_equal_object() -> None:
    codec = Codec(OnlyStrings)
    msg = OnlyStrings("a", ("b", "c"))
    for _ in range(3):
        assert codec.decode(codec.encode(msg)) == msg


def test_subclass_instances_use_the_generic_engine() -> None:
    @dataclass(frozen=True, slots=True)
    class TaggedHead(Head):
        pass

    codec = Codec(Head)
    msg = Head(Stamp(1, 2), "x")
    for _ in range(3):
        codec.encode(msg)
    tagged = TaggedHead(Stamp(1, 2), "x")
    assert codec.encode(tagged) == cdr.encode(tagged)


def test_wrong_nested_class_is_refused_even_with_a_warm_layout() -> None:
    codec = Codec(Head)
    msg = Head(Stamp(1, 2), "x")
    for _ in range(3):
        codec.encode(msg)
    impostor = Head(Gain("x", 1.0), "x")  # type: ignore[arg-type]
    with pytest.raises(EncodeError) as info:
        codec.encode(impostor)
    assert info.value.field == "stamp"


def test_out_of_range_value_with_a_warm_layout_raises_encode_error() -> None:
    codec = Codec(Head)
    for _ in range(3):
        codec.encode(Head(Stamp(1, 2), "x"))
    with pytest.raises(EncodeError) as info:
        codec.encode(Head(Stamp(2**31, 0), "x"))
    assert info.value.field == "stamp.sec"


def test_threads_sharing_one_codec_get_the_generic_results() -> None:
    import threading

    codec = Codec(JointFrame)
    messages = [frame(tuple(f"j{k}_{i}" for k in range(i % 3 + 1)), float(i)) for i in range(40)]
    expected = [cdr.encode(m) for m in messages]
    failures: list[str] = []

    def work(offset: int) -> None:
        for round_ in range(30):
            i = (offset + round_) % len(messages)
            if codec.encode(messages[i]) != expected[i] or codec.decode(expected[i]) != messages[i]:
                failures.append(f"thread {offset} message {i}")

    threads = [threading.Thread(target=work, args=(k * 7,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert len(codec.layouts) <= MAX_LAYOUTS


def test_a_codec_prepares_its_nested_classes_before_its_first_encode() -> None:
    """The bus makes a codec when a publisher is made; its first encode may come in a 500 Hz
    loop (the cycle after a recorder joined built three messages nobody had listened to). That
    encode must not evaluate class annotations (``typing.get_type_hints``, ≈ 1 ms a class with
    nested messages): the codec did that when it was made. In a fresh interpreter, where no
    schema is cached yet."""
    code = (
        "import typing\n"
        "from jointbus.codec.codec import Codec\n"
        "from jointbus.messages.actarray.data import ActuatorArrayData, ActuatorData\n"
        "from jointbus.messages.actarray.state import ActuatorState\n"
        "codec = Codec(ActuatorArrayData)\n"
        "calls = []\n"
        "real = typing.get_type_hints\n"
        "typing.get_type_hints = lambda *a, **k: calls.append(a[0].__name__) or real(*a, **k)\n"
        "joint = ActuatorData(0.5, 0.0, 0.0, 0.0, ActuatorState.IDLE)\n"
        "msg = ActuatorArrayData(actuators=(joint, joint))\n"
        "codec.encode(msg)\n"
        "codec.encode(msg)\n"
        "print(calls)\n"
    )
    evaluated = last_line_in_fresh_interpreter(code)
    assert evaluated == "[]", f"the first encodes evaluated {evaluated}"
