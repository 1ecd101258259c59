"""Fuzzing support: every message class, valid samples of each, a seeded mutation engine, a checker.

Where it sits: :mod:`support`, for ``tests/fuzz``. The decoder fuzz tests (quick and long campaign),
the Zenoh receive-path fuzz and the bridge fuzz share it.

Why a deterministic engine rather than a coverage-guided one: the decoders are pure functions of
their bytes, the interesting inputs are *near* valid encodings (a flipped bit in a count, a cut in
the middle of a string), and a seeded :class:`random.Random` makes every run reproducible — a
failure prints its seed, class and input, and :data:`REGRESSIONS` keeps any finding for good.
It generates a million inputs in a few minutes on this 2-core VM, with no extra dependency.

What the checker enforces for every input (:class:`DecodeChecker`):

- ``Cls.from_cdr`` returns an instance of ``Cls`` or raises :class:`jointbus.codec.DecodeError`
  whose ``offset`` lies inside the payload — never ``IndexError``, ``struct.error``,
  ``OverflowError``, a message-layer error or anything else;
- the stable-layout fast path (``Cls.from_cdr`` → :func:`jointbus.codec.codec_for`) and the
  generic engine (:func:`jointbus.codec.cdr.decode`) agree: both fail, or both return messages
  with the same encoding;
- no call takes longer than :data:`HANG_S` (a hang check with a huge margin, not a speed test);
- the peak of memory allocated during a call stays under :func:`allocation_cap` of the input size
  (a 4-byte count that claims 4 billion elements must fail before anything is allocated).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import pkgutil
import random
import struct
import time
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np

from jointbus.codec import DecodeError, SchemaError, cdr, schema_of
from jointbus.codec.wire import INT_RANGES, Primitive
from jointbus.messages.registry import default_registry
from jointbus.robots.hb50.messages import HB50_MESSAGE_TYPES

#: Where findings are kept as regression inputs (one JSON file each).
REGRESSIONS: Final = Path(__file__).resolve().parents[1] / "fuzz" / "regressions"
#: A single decode taking longer than this is a hang (decodes take microseconds).
HANG_S: Final = 1.0
#: Peak allocation allowed per decode: this many times the input size ...
ALLOCATION_FACTOR: Final = 10
#: ... plus this many bytes (object headers, the exception and its traceback, a compiled layout).
ALLOCATION_SLACK: Final = 128 * 1024
#: u32 values written over 4-aligned words to fake absurd counts and string lengths.
ABSURD_U32: Final = (
    0,
    1,
    2,
    3,
    0x7F,
    0xFF,
    0x100,
    0xFFFF,
    0x10000,
    1 << 20,
    1 << 24,
    1 << 28,
    0x7FFFFFFF,
    0x80000000,
    0xFFFFFFFE,
    0xFFFFFFFF,
)
_INTERESTING_BYTES: Final = (0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF)
_HEADERS: Final = (b"\x00\x01\x00\x00", b"\x00\x00\x00\x00", b"\x00\x01", b"\x01\x00\x00\x00")
_PACKAGES: Final = ("jointbus.messages", "jointbus.runtime")


def allocation_cap(input_size: int) -> int:
    """Bytes a decode of ``input_size`` bytes may allocate at its peak.

    A valid payload legitimately grows when decoded (a 4-byte float becomes a 24-byte ``float``
    plus a tuple slot, a 5-byte string a ~50-byte ``str``), and the first sighting of a layout
    compiles it; the constant covers that for the payload sizes fuzzed here (the million-input
    campaign peaked at 32 KB, for a 527-byte input). What the bound excludes is allocation driven
    by a *claimed* size rather than by the bytes actually present.
    """
    return ALLOCATION_FACTOR * input_size + ALLOCATION_SLACK


# ---------------------------------------------------------------------------------------------
# the classes under test
# ---------------------------------------------------------------------------------------------
def message_classes() -> tuple[type[Any], ...]:
    """Every message class jointbus defines: the default registry plus all classes with a
    ``TYPE_NAME`` and ``from_cdr`` in the message and runtime packages (``LoopDiagnostics``, the
    parameter messages, and the wire records that Python-facing types decode through)."""
    found: dict[type[Any], None] = {}
    registry = default_registry().with_types(*HB50_MESSAGE_TYPES)
    for name in registry:
        found[registry.by_type_name(name)] = None
    for package_name in _PACKAGES:
        package = importlib.import_module(package_name)
        modules = [package]
        for info in pkgutil.walk_packages(package.__path__, f"{package_name}."):
            modules.append(importlib.import_module(info.name))
        for module in modules:
            for value in vars(module).values():
                if (
                    isinstance(value, type)
                    and value.__module__ == module.__name__
                    and isinstance(getattr(value, "TYPE_NAME", None), str)
                    and callable(getattr(value, "from_cdr", None))
                ):
                    found[value] = None
    return tuple(sorted(found, key=class_id))


def class_id(cls: type[Any]) -> str:
    """A readable, unique test id (``module.Class``: two classes can share a TYPE_NAME)."""
    return f"{cls.__module__.removeprefix('jointbus.')}.{cls.__qualname__}"


def has_schema(cls: type[Any]) -> bool:
    """True when the generic engine can decode ``cls`` directly (a wire dataclass)."""
    try:
        schema_of(cls)
    except SchemaError:
        return False
    return True


def wire_classes_of(cls: type[Any], classes: Sequence[type[Any]]) -> list[type[Any]]:
    """Classes with a schema that share ``cls``'s TYPE_NAME (itself first if it has one): their
    encodings are what ``cls.from_cdr`` reads."""
    same = [c for c in classes if c.TYPE_NAME == cls.TYPE_NAME and has_schema(c)]
    same.sort(key=lambda c: c is not cls)
    return same


# ---------------------------------------------------------------------------------------------
# valid samples, built through the constructors (so they satisfy every message rule)
# ---------------------------------------------------------------------------------------------
_TEXTS: Final = ("", "a", "base_link", "fr_j0", "hüfte ✓", "x" * 40)


def _f32(value: float) -> float:
    return float(np.float32(value))


def _primitive(rng: random.Random, primitive: Primitive, plain: bool) -> Any:
    if primitive is Primitive.BOOL:
        return False if plain else rng.random() < 0.5
    if primitive is Primitive.STRING:
        return "" if plain else rng.choice(_TEXTS)
    if primitive in (Primitive.FLOAT32, Primitive.FLOAT64):
        return 0.0 if plain else _f32(rng.uniform(-1.0, 1.0))
    lo, hi = INT_RANGES[primitive]
    return max(lo, 0) if plain else rng.randint(max(lo, 0), min(hi, 3))


def _build(cls: type[Any], rng: random.Random, n: int, plain: bool, depth: int = 0) -> Any:
    """One instance of ``cls``: every sequence has ``n`` entries (parallel per-joint arrays must
    agree), strings in sequences are distinct (names must be unique)."""
    values: list[Any] = []
    for fs in schema_of(cls).fields:
        element = fs.element
        if fs.kind == "primitive":
            assert isinstance(element, Primitive)
            values.append(_primitive(rng, element, plain))
        elif fs.kind == "message":
            values.append(_build(element, rng, n, plain, depth + 1))  # type: ignore[arg-type]
        else:
            count = fs.fixed_length if fs.kind == "array" else (n if depth < 2 else min(n, 1))
            assert count is not None
            if element is Primitive.STRING:
                values.append(tuple(f"j{i}" for i in range(count)))
            elif element in (Primitive.UINT8, Primitive.BYTE):
                values.append(bytes(0 if plain else rng.randint(0, 3) for _ in range(count)))
            elif isinstance(element, Primitive):
                values.append(tuple(_primitive(rng, element, plain) for _ in range(count)))
            else:
                values.append(
                    tuple(_build(element, rng, n, plain, depth + 1) for _ in range(count))  # type: ignore[arg-type]
                )
    return cls(*values)


def valid_samples(cls: type[Any], rng: random.Random, count: int) -> list[Any]:
    """Up to ``count`` distinct valid instances of the wire class ``cls`` (at least one: the
    all-defaults / all-zero message). Attempts the constructor rejects are skipped."""
    out: list[Any] = []
    seen: set[bytes] = set()

    def keep(msg: Any) -> None:
        data = cdr.encode(msg)
        if data not in seen:
            seen.add(data)
            out.append(msg)

    for n in (0, 1, 3):
        with contextlib.suppress(ValueError, TypeError):
            keep(_build(cls, rng, n, plain=True))
    attempts = 0
    while len(out) < count and attempts < 20 * count:
        attempts += 1
        n = rng.choice((0, 1, 2, 3, 4, 12))
        try:
            keep(_build(cls, rng, n, plain=False))
        except (ValueError, TypeError):
            continue
    return out[:count]


# ---------------------------------------------------------------------------------------------
# the mutation engine
# ---------------------------------------------------------------------------------------------
class Mutator:
    """Seeded byte-level mutations of a payload (deterministic for a given seed)."""

    def __init__(self, seed: int | str) -> None:
        self.rng = random.Random(seed)
        self._ops: tuple[Callable[[bytearray, Sequence[bytes]], None], ...] = (
            self._flip_bits,
            self._set_byte,
            self._truncate,
            self._insert,
            self._delete,
            self._corrupt_word,
            self._corrupt_word,  # counts and lengths are the most productive target
            self._splice,
            self._swap_header,
            self._duplicate,
        )

    def mutate(self, data: bytes, others: Sequence[bytes] = ()) -> bytes:
        """``data`` with 1–4 random mutations (``others``: same-type payloads to splice from)."""
        buf = bytearray(data)
        for _ in range(self.rng.choice((1, 1, 1, 2, 3, 4))):
            self.rng.choice(self._ops)(buf, others)
        return bytes(buf)

    def random_bytes(self) -> bytes:
        """Plain random bytes, half of them behind a valid or near-valid CDR header."""
        rng = self.rng
        body = rng.randbytes(rng.choice((0, 1, 3, 4, 8, 16, 32, 64, 256)))
        if rng.random() < 0.5:
            return rng.choice(_HEADERS) + body
        return body

    def _pos(self, buf: bytearray, end_ok: bool = False) -> int:
        return self.rng.randint(0, len(buf) if end_ok else max(len(buf) - 1, 0))

    def _flip_bits(self, buf: bytearray, _others: Sequence[bytes]) -> None:
        if buf:
            for _ in range(self.rng.randint(1, 8)):
                buf[self._pos(buf)] ^= 1 << self.rng.randint(0, 7)

    def _set_byte(self, buf: bytearray, _others: Sequence[bytes]) -> None:
        if buf:
            buf[self._pos(buf)] = self.rng.choice((*_INTERESTING_BYTES, self.rng.randint(0, 255)))

    def _truncate(self, buf: bytearray, _others: Sequence[bytes]) -> None:
        del buf[self._pos(buf, end_ok=True) :]

    def _insert(self, buf: bytearray, _others: Sequence[bytes]) -> None:
        at = self._pos(buf, end_ok=True)
        buf[at:at] = self.rng.randbytes(self.rng.choice((1, 2, 3, 4, 8, 16)))

    def _delete(self, buf: bytearray, _others: Sequence[bytes]) -> None:
        if buf:
            at = self._pos(buf)
            del buf[at : at + self.rng.choice((1, 2, 3, 4, 8))]

    def _corrupt_word(self, buf: bytearray, _others: Sequence[bytes]) -> None:
        """Overwrite an aligned u32 (where counts and string lengths live) with an absurd or
        off-by-a-little value."""
        words = (len(buf) - 4) // 4
        if words <= 0:
            return
        at = 4 + 4 * self.rng.randrange(words)
        (old,) = struct.unpack_from("<I", buf, at)
        value = self.rng.choice(
            (*ABSURD_U32, old + 1, old - 1, old * 2, len(buf), len(buf) - at, len(buf) + 1)
        )
        struct.pack_into("<I", buf, at, value & 0xFFFFFFFF)

    def _splice(self, buf: bytearray, others: Sequence[bytes]) -> None:
        if others:
            other = self.rng.choice(others)
            cut = self._pos(buf, end_ok=True)
            buf[cut:] = other[min(cut, len(other)) :]

    def _swap_header(self, buf: bytearray, _others: Sequence[bytes]) -> None:
        buf[:4] = self.rng.choice(_HEADERS)

    def _duplicate(self, buf: bytearray, _others: Sequence[bytes]) -> None:
        if buf:
            at = self._pos(buf)
            chunk = buf[at : at + self.rng.choice((4, 8, 16))]
            where = self._pos(buf, end_ok=True)
            buf[where:where] = chunk


def absurd_count_inputs(data: bytes) -> Iterator[bytes]:
    """``data`` with each aligned u32 word, in turn, replaced by each of :data:`ABSURD_U32`.

    Every count and string length of a payload sits on such a word, so this reaches each of them
    with each absurd value (systematic, unlike the random mutations)."""
    for at in range(4, len(data) - 3, 4):
        for value in ABSURD_U32:
            buf = bytearray(data)
            struct.pack_into("<I", buf, at, value)
            yield bytes(buf)


# ---------------------------------------------------------------------------------------------
# the checker
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Finding:
    """One input that broke a rule: which class, what went wrong, and the bytes."""

    cls: str
    type_name: str
    problem: str
    data: bytes

    def to_json(self) -> str:
        return json.dumps(
            {
                "class": self.cls,
                "type_name": self.type_name,
                "problem": self.problem,
                "input_hex": self.data.hex(),
            },
            indent=2,
        )

    def __str__(self) -> str:
        return f"{self.cls}: {self.problem}; input {self.data.hex()}"


def _same_message(a: object, b: object) -> bool:
    """Equal content (by encoding: NaN payloads compare equal, unlike ``==`` on floats)."""
    if type(a) is not type(b):
        return False
    try:
        return cdr.encode(a) == cdr.encode(b)
    except Exception:
        return False


@dataclass(slots=True)
class DecodeChecker:
    """Runs decodes under the rules of the module docstring and collects :class:`Finding` s.

    ``track_memory``: measure each call's allocation peak with :mod:`tracemalloc` (the caller
    starts tracing, see :meth:`tracing`). ``max_findings``: stop recording after this many (a
    systematic bug would otherwise fill memory with copies of itself).
    """

    track_memory: bool = True
    max_findings: int = 50
    inputs: int = 0
    decoded: int = 0
    rejected: int = 0
    slowest_s: float = 0.0
    #: Largest allocation peak of one call (bytes) and the size of its input.
    worst_peak: tuple[int, int] = (0, 0)
    findings: list[Finding] = field(default_factory=list)

    def _note(self, cls: type[Any], problem: str, data: bytes) -> None:
        if len(self.findings) < self.max_findings:
            self.findings.append(Finding(class_id(cls), cls.TYPE_NAME, problem, data))

    def _call(
        self, cls: type[Any], decode: Callable[[bytes], Any], data: bytes, what: str
    ) -> tuple[bool, Any]:
        """(ok, result-or-error); records a finding for anything but a result or DecodeError."""
        if self.track_memory:
            tracemalloc.reset_peak()
            base = tracemalloc.get_traced_memory()[0]
        start = time.perf_counter()
        outcome: tuple[bool, Any]
        try:
            outcome = (True, decode(data))
        except DecodeError as exc:
            outcome = (False, exc)
        except Exception as exc:
            self._note(cls, f"{what} raised {type(exc).__name__}: {exc}", data)
            outcome = (False, exc)
        elapsed = time.perf_counter() - start
        self.slowest_s = max(self.slowest_s, elapsed)
        if elapsed > HANG_S:
            self._note(cls, f"{what} took {elapsed:.2f} s", data)
        if self.track_memory:
            peak = tracemalloc.get_traced_memory()[1] - base
            if peak > self.worst_peak[0]:
                self.worst_peak = (peak, len(data))
            if peak > allocation_cap(len(data)):
                self._note(cls, f"{what} allocated {peak} bytes for {len(data)} input bytes", data)
        ok, value = outcome
        if ok and type(value) is not cls:
            self._note(cls, f"{what} returned a {type(value).__name__}", data)
        if not ok and isinstance(value, DecodeError):
            if not 0 <= value.offset <= len(data):
                problem = f"{what}: DecodeError offset {value.offset} outside the input"
                self._note(cls, problem, data)
            if value.type_name != cls.TYPE_NAME:
                self._note(cls, f"{what}: DecodeError names type {value.type_name!r}", data)
        return outcome

    def check(self, cls: type[Any], data: bytes, *, generic: bool) -> bool:
        """Decode ``data`` as ``cls`` (public path, and the generic engine when ``generic``);
        True when it decoded."""
        self.inputs += 1
        ok, value = self._call(cls, cls.from_cdr, data, "from_cdr")
        if generic:
            ok_g, value_g = self._call(cls, lambda d: cdr.decode(cls, d), data, "cdr.decode")
            if ok != ok_g:
                self._note(
                    cls,
                    f"fast path and generic engine disagree: from_cdr "
                    f"{'decoded' if ok else repr(value)}, cdr.decode "
                    f"{'decoded' if ok_g else repr(value_g)}",
                    data,
                )
            elif ok and not _same_message(value, value_g):
                self._note(cls, "fast path and generic engine decoded different messages", data)
        if ok:
            self.decoded += 1
        else:
            self.rejected += 1
        return ok


@dataclass(slots=True)
class ClassCorpus:
    """What the campaign needs about one class: valid payloads to mutate, whether the generic
    engine applies, and the codec warmed up so its fast path sees the mutants."""

    cls: type[Any]
    payloads: list[bytes]
    generic: bool


def corpus(cls: type[Any], classes: Sequence[type[Any]], seed: int, samples: int) -> ClassCorpus:
    """Valid payloads for ``cls`` (from its own or its wire record's constructor)."""
    rng = random.Random(f"{seed}:{class_id(cls)}")
    payloads: list[bytes] = []
    for wire in wire_classes_of(cls, classes):
        payloads.extend(cdr.encode(m) for m in valid_samples(wire, rng, samples))
        if payloads:
            break
    generic = has_schema(cls)
    for data in payloads:  # twice each: the codec compiles a layout on the second sighting
        for _ in range(2):
            try:
                cls.from_cdr(data)
            except DecodeError:
                break  # the Python-facing type may refuse a record its wire class accepts
    return ClassCorpus(cls, payloads, generic)


def run_campaign(
    corpora: Sequence[ClassCorpus],
    checker: DecodeChecker,
    *,
    seed: int,
    per_class: int,
    absurd: bool = True,
) -> None:
    """Feed ``per_class`` inputs to each class: the valid payloads themselves, every absurd count
    of each (when ``absurd``; these count towards ``per_class``), then a mix of random bytes
    (1 in 8) and mutations of the valid payloads (7 in 8)."""
    for entry in corpora:
        mutator = Mutator(f"{seed}:{class_id(entry.cls)}")
        budget = per_class
        for data in entry.payloads:
            checker.check(entry.cls, data, generic=entry.generic)
            budget -= 1
        if absurd:
            for data in entry.payloads:
                for mutant in absurd_count_inputs(data):
                    if budget <= per_class // 3:
                        break
                    checker.check(entry.cls, mutant, generic=entry.generic)
                    budget -= 1
        while budget > 0:
            if not entry.payloads or mutator.rng.random() < 0.125:
                data = mutator.random_bytes()
            else:
                data = mutator.mutate(mutator.rng.choice(entry.payloads), entry.payloads)
            checker.check(entry.cls, data, generic=entry.generic)
            budget -= 1


class tracing:  # noqa: N801 - used as a context manager like tracemalloc itself
    """``with tracing():`` — tracemalloc on for the block (off again after, even on failure)."""

    def __enter__(self) -> None:
        tracemalloc.start()

    def __exit__(self, *_exc: object) -> None:
        tracemalloc.stop()
