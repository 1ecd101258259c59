"""The optional compiled core (``_cdr_accel``): used when built, safe with any spec, skippable.

What a user relies on: when the extension is built the codec uses it (that is where the speed comes
from) and gives the same answers as the Python engines (checked with every engine in
``test_layout.py``, ``test_cdr_robustness.py`` and ``test_wire_rules.py``); a spec the core cannot
run safely is refused when the layout is compiled, not discovered while reading untrusted bytes;
decoding and encoding do not leak; and ``JOINTBUS_NO_ACCEL=1`` runs everything in pure Python.
"""

from __future__ import annotations

import gc
import os
import struct
import subprocess
import sys
import tracemalloc
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from jointbus.codec import Codec, accel, cdr, schema_of
from jointbus.codec.layout import K_ARRAY, K_BLOB, K_NODE, MISS, compile_layout
from jointbus.codec.rules import WireRule
from jointbus.codec.wire import Float64, String
from jointbus.messages.base import Message
from jointbus.robots.hb50.messages import JointCommand
from support.wire_strategies import samples

needs_core = pytest.mark.skipif(not accel.AVAILABLE, reason="_cdr_accel not built or disabled")
SAMPLES = samples()


def test_disabling_the_core_runs_everything_in_python() -> None:
    script = (
        "from jointbus.codec import accel, Codec, cdr\n"
        "from jointbus.robots.hb50.messages import JointCommand\n"
        "assert not accel.AVAILABLE\n"
        "msg = JointCommand.hold(('a', 'b'), (0.5, -0.5), 80.0, 3.0)\n"
        "codec = Codec(JointCommand)\n"
        "for _ in range(3):\n"
        "    assert codec.decode(codec.encode(msg)) == msg\n"
        "assert [layout.engine for layout in codec.layouts] == ['python']\n"
    )
    env = {**os.environ, "JOINTBUS_NO_ACCEL": "1"}
    result = subprocess.run(
        [sys.executable, "-c", script],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr


def test_requiring_the_core_when_it_is_missing_is_an_error() -> None:
    if accel.AVAILABLE:
        assert Codec(JointCommand, compiled=True).compiled
    else:
        with pytest.raises(RuntimeError, match="_cdr_accel"):
            Codec(JointCommand, compiled=True)


@needs_core
def test_the_default_codec_runs_the_500hz_messages_compiled() -> None:
    msg = JointCommand.hold(("a", "b"), (0.5, -0.5), 80.0, 3.0)
    codec = Codec(JointCommand)
    for _ in range(3):
        assert codec.decode(codec.encode(msg)) == msg
    assert [layout.engine for layout in codec.layouts] == ["c"]


def _spec_of(msg: Any) -> tuple[Any, ...]:
    layout = compile_layout(schema_of(type(msg)), msg, cdr.encode(msg))
    assert layout.spec is not None
    return layout.spec


def _replace_first(op: Any, kind: int, **changes: int) -> Any:
    """``op`` with the first nested op of ``kind`` changed (offset / count), depth first."""
    names = {"offset": 2, "count": 3, "flags": 4}
    done = False

    def walk(node_op: Any) -> Any:
        nonlocal done
        if done:
            return node_op
        if node_op[0] == kind:
            done = True
            changed = list(node_op)
            for key, value in changes.items():
                changed[names[key]] = value
            return tuple(changed)
        if node_op[0] == K_NODE:
            cls, direct, fields_names, ops = node_op[8]
            new_ops = tuple(walk(o) for o in ops)
            return (*node_op[:8], (cls, direct, fields_names, new_ops))
        return node_op

    return walk(op)


@needs_core
@pytest.mark.parametrize(
    ("kind", "changes"),
    [
        (K_ARRAY, {"offset": 10_000}),
        (K_ARRAY, {"count": 10_000}),
        (K_ARRAY, {"offset": -4}),
        (K_BLOB, {"count": 10_000}),
        (K_ARRAY, {"flags": 1 << 10}),
    ],
)
def test_a_spec_reaching_outside_the_payload_is_refused(kind: int, changes: dict[str, int]) -> None:
    size, template, spans, root = _spec_of(SAMPLES[-1])  # JointFrame: arrays and a blob
    bad = (size, template, spans, _replace_first(root, kind, **changes))
    assert accel.program(bad, MISS) is None
    assert accel.program((size, template, spans, root), MISS) is not None


@needs_core
@pytest.mark.parametrize(
    "spec_change",
    [
        lambda s: (s[0] + 1, *s[1:]),  # template shorter than the size
        lambda s: (s[0], s[1], ((0, s[0] + 1),), s[3]),  # span beyond the payload
        lambda s: (s[0], s[1], ((-1, 2),), s[3]),
        lambda s: (s[0], s[1], s[2], (9, "", 0, 0, 0, 0, 0, None, None)),  # unknown op kind
        lambda s: (s[0], s[1], s[2], (1, "z", 4, 1, 0, 0, 0, None, None)),  # unknown code
        lambda s: s[:3],
    ],
)
def test_malformed_specs_are_refused(spec_change: Any) -> None:
    spec = _spec_of(SAMPLES[-1])
    assert accel.program(spec_change(spec), MISS) is None


@dataclass(frozen=True)
class Unslotted(Message):
    """No __slots__: the core cannot set slots, so it calls the constructor (still correct)."""

    TYPE_NAME: ClassVar[str] = "jointbus_codec_test/msg/Unslotted"
    WIRE_RULES: ClassVar[dict[str, WireRule]] = {"gain": WireRule(ge=0.0)}
    name: String
    gain: Float64


@needs_core
def test_a_class_without_slots_is_built_by_its_constructor() -> None:
    msg = Unslotted("x", 2.0)
    layout = compile_layout(schema_of(Unslotted), msg, cdr.encode(msg))
    assert layout.engine == "c"
    assert layout.decode(cdr.encode(Unslotted("x", 3.0))) == Unslotted("x", 3.0)
    assert layout.encode(Unslotted("x", 4.0)) == cdr.encode(Unslotted("x", 4.0))


@needs_core
def test_decode_and_encode_do_not_leak() -> None:
    names = ("a", "b", "c")
    msg = JointCommand.hold(names, (0.5, 1.0, 2.0), 80.0, 3.0)
    data = cdr.encode(msg)
    layout = compile_layout(schema_of(JointCommand), msg, data)
    kd_at = data.index(struct.pack("<3f", 3.0, 3.0, 3.0))
    broken = data[:kd_at] + struct.pack("<f", -3.0) + data[kd_at + 4 :]  # a rule miss mid-build
    other = bytearray(data)
    other[-20] ^= 0xFF  # inside a float: decodes (or not) but never leaks
    cases = (data, broken, bytes(other), data[:-1], bytearray(data), memoryview(data))
    stranger = JointCommand.hold(("a", "b"), (0.5, 1.0), 80.0, 3.0)

    def cycle() -> None:
        for payload in cases:
            decoded = layout.decode(payload)
            if decoded is not MISS:
                layout.encode(decoded)
        layout.encode(stranger)  # None: another layout

    assert layout.engine == "c"
    assert layout.decode(broken) is MISS
    cycle()
    gc.collect()  # garbage left by the set-up (compile_layout) is not what is looked for
    before = (sys.getrefcount(JointCommand), sys.getrefcount(names), sys.getrefcount(MISS))
    tracemalloc.start()
    try:
        for _ in range(1000):
            cycle()
        first, _ = tracemalloc.get_traced_memory()
        for _ in range(10000):
            cycle()
        second, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    gc.collect()
    after = (sys.getrefcount(JointCommand), sys.getrefcount(names), sys.getrefcount(MISS))
    # A leaked reference would add one a cycle: 11 000. A few either way are the process's
    # one-slot caches (the last names tuple checked, jointbus.messages.numpy_columns), which
    # other threads of a test worker may have refilled meanwhile: `names` read 8, then 10, once
    # in make test; no run of the test alone moved it.
    assert all(abs(a - b) <= 4 for a, b in zip(after, before, strict=True)), (before, after)
    assert second - first < 64 * 1024, f"memory grew by {second - first} bytes"
