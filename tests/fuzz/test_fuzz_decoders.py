"""Every decoder fed garbage: only a typed DecodeError comes out; no crash, hang or huge allocation.

What a user relies on: a subscriber, ``jointbus topic echo``, the recorder and ``jointbus play``
decode bytes that came from the network or a file. Whatever those bytes are — random, a corrupted
valid message, a hostile count of four billion elements — ``Cls.from_cdr`` (and
:func:`jointbus.codec.decode`) either returns a message of the type asked for or raises
:class:`jointbus.codec.DecodeError` naming an offset inside the payload; it finishes at once and
allocates in proportion to the bytes actually present. The stable-layout fast path and the generic
engine agree on every input.

Covered classes: every registered type (:func:`jointbus.messages.registry.default_registry` and
hb50's) plus every other message class in :mod:`jointbus.messages` and :mod:`jointbus.runtime` (the
wire records behind Python-facing types, ``LoopDiagnostics``, the parameter messages).

``make test`` runs a quick deterministic campaign (a few thousand inputs) and a hypothesis-driven
one; ``make fuzz`` runs the long campaign (:func:`test_fuzz_one_million_inputs`, marked slow): one
million inputs, counted and printed. A finding is saved under ``tests/fuzz/regressions/`` and
replayed by :func:`test_saved_findings_stay_fixed` from then on.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointbus.codec import DecodeError, decode
from jointbus.messages.registry import default_registry
from jointbus.robots.hb50.messages import HB50_MESSAGE_TYPES
from jointbus.runtime import LoopDiagnostics
from support import fuzz as fuzz_support
from support.fuzz import (
    REGRESSIONS,
    ClassCorpus,
    DecodeChecker,
    Mutator,
    class_id,
    corpus,
    has_schema,
    message_classes,
    run_campaign,
    tracing,
)

CLASSES = message_classes()
IDS = [class_id(c) for c in CLASSES]
SEED = int(os.environ.get("JOINTBUS_FUZZ_SEED", "20261129"))
#: Inputs of the long campaign (``make fuzz``).
CAMPAIGN_INPUTS = 1_000_000
#: Inputs per class of the quick campaign in ``make test`` (≈ 4 500 in all).
QUICK_PER_CLASS = 80


@pytest.fixture(scope="module")
def corpora() -> dict[type[Any], ClassCorpus]:
    return {cls: corpus(cls, CLASSES, SEED, samples=12) for cls in CLASSES}


def _fail_on(checker: DecodeChecker, *, save: bool = False) -> None:
    if not checker.findings:
        return
    if save:
        REGRESSIONS.mkdir(exist_ok=True)
        for finding in checker.findings:
            name = f"{finding.cls}-{hashlib.sha256(finding.data).hexdigest()[:12]}.json"
            (REGRESSIONS / name).write_text(finding.to_json() + "\n")
    listing = "\n".join(str(f)[:500] for f in checker.findings[:10])
    pytest.fail(f"{len(checker.findings)} findings (seed {SEED}):\n{listing}")


# -- coverage of the campaign ---------------------------------------------------------------------


def test_every_registered_and_runtime_type_is_fuzzed_from_valid_encodings(
    corpora: dict[type[Any], ClassCorpus],
) -> None:
    registry = default_registry().with_types(*HB50_MESSAGE_TYPES)
    fuzzed_names = {c.TYPE_NAME for c in CLASSES}
    assert set(registry) <= fuzzed_names
    assert all(registry.by_type_name(name) in CLASSES for name in registry)
    assert LoopDiagnostics in CLASSES
    for cls, entry in corpora.items():
        # Mutating valid encodings is the point: every class needs at least one.
        assert entry.payloads, f"no valid sample of {class_id(cls)}"
        for data in entry.payloads[:3]:
            try:
                msg = cls.from_cdr(data)
            except DecodeError:
                # A Python-facing type may refuse a record its wire class accepts; it must then
                # accept the all-zero record the corpus starts with.
                continue
            assert type(msg) is cls
    assert sum(len(e.payloads) for e in corpora.values()) > 5 * len(CLASSES)


# -- quick campaign (make test) -------------------------------------------------------------------


@pytest.mark.parametrize("cls", CLASSES, ids=IDS)
def test_quick_fuzz_of_each_decoder(cls: type[Any], corpora: dict[type[Any], ClassCorpus]) -> None:
    checker = DecodeChecker()
    with tracing():
        run_campaign([corpora[cls]], checker, seed=SEED, per_class=QUICK_PER_CLASS)
    assert checker.inputs == QUICK_PER_CLASS
    assert checker.rejected > 0  # the mutations do reach the error paths
    _fail_on(checker)


@settings(max_examples=300)
@given(data=st.data())
def test_hypothesis_mutations_of_valid_payloads_raise_only_decode_error(
    data: st.DataObject, corpora: dict[type[Any], ClassCorpus]
) -> None:
    cls = data.draw(st.sampled_from(CLASSES), label="class")
    payloads = corpora[cls].payloads
    payload = bytearray(data.draw(st.sampled_from(payloads), label="valid payload"))
    for _ in range(data.draw(st.integers(1, 4))):
        where = data.draw(st.integers(0, len(payload)))
        action = data.draw(st.sampled_from(["replace", "insert", "delete", "count"]))
        if action == "replace":
            payload[where : where + data.draw(st.integers(1, 4))] = data.draw(
                st.binary(min_size=1, max_size=4)
            )
        elif action == "insert":
            payload[where:where] = data.draw(st.binary(min_size=1, max_size=8))
        elif action == "delete":
            del payload[where : where + data.draw(st.integers(1, 8))]
        elif len(payload) >= 8:
            at = 4 + 4 * data.draw(st.integers(0, (len(payload) - 8) // 4))
            struct.pack_into("<I", payload, at, data.draw(st.integers(0, 2**32 - 1)))
    checker = DecodeChecker(track_memory=False)
    checker.check(cls, bytes(payload), generic=corpora[cls].generic)
    _fail_on(checker)


@settings(max_examples=200)
@given(cls=st.sampled_from(CLASSES), garbage=st.binary(max_size=300))
def test_hypothesis_random_bytes_raise_only_decode_error(cls: type[Any], garbage: bytes) -> None:
    checker = DecodeChecker(track_memory=False)
    for prefix in (b"", b"\x00\x01\x00\x00", b"\x00\x00\x00\x00"):
        checker.check(cls, prefix + garbage, generic=has_schema(cls))
    _fail_on(checker)


@pytest.mark.parametrize("cls", [c for c in CLASSES if has_schema(c)], ids=class_id)
def test_codec_decode_and_from_cdr_agree_on_mutants(
    cls: type[Any], corpora: dict[type[Any], ClassCorpus]
) -> None:
    """``jointbus.codec.decode(cls, data)`` is the same public path as ``cls.from_cdr``."""
    mutator = Mutator(f"{SEED}:decode:{class_id(cls)}")
    payloads = corpora[cls].payloads
    for k in range(20):
        data = payloads[k % len(payloads)] if k < 3 else mutator.mutate(payloads[k % len(payloads)])
        outcomes = []
        for fn in (cls.from_cdr, lambda d: decode(cls, d)):
            try:
                outcomes.append(fn(data).to_cdr())
            except DecodeError as exc:
                outcomes.append((exc.offset, exc.reason))
        assert outcomes[0] == outcomes[1], data.hex()


def test_the_checker_catches_the_failures_it_exists_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """The campaign would notice a decoder that leaks a raw error, hangs or over-allocates."""

    monkeypatch.setattr(fuzz_support, "HANG_S", 0.05)

    class Leaky:
        TYPE_NAME = "jointbus_fuzz_test/msg/Leaky"

        @classmethod
        def from_cdr(cls, data: bytes) -> Any:
            if data[:1] == b"\x01":
                raise IndexError("raw")
            if data[:1] == b"\x02":
                return bytearray(16 * 1024 * 1024)  # 16 MB for a few bytes
            if data[:1] == b"\x03":
                time.sleep(0.1)
                raise DecodeError(cls.TYPE_NAME, 0, "slow")
            if data[:1] == b"\x04":
                raise DecodeError(cls.TYPE_NAME, 99, "offset outside the input")
            raise DecodeError(cls.TYPE_NAME, 0, "fine")

    checker = DecodeChecker()
    with tracing():
        for first in (b"\x00", b"\x01", b"\x02", b"\x03", b"\x04"):
            checker.check(Leaky, first + b"abc", generic=False)
    by_input: dict[bytes, list[str]] = {}
    for f in checker.findings:
        by_input.setdefault(f.data[:1], []).append(f.problem)
    assert b"\x00" not in by_input  # a clean DecodeError is what a decoder should raise
    assert [p for p in by_input[b"\x01"] if "raised IndexError" in p]
    # 16 MB for 4 bytes: wrong type *and* too big (on a loaded host the allocation may also be
    # slower than the shortened hang limit, a third true finding, so it is not counted out)
    assert any("allocated" in p for p in by_input[b"\x02"])
    assert any("returned a bytearray" in p for p in by_input[b"\x02"])
    assert any("took" in p for p in by_input[b"\x03"])
    assert any("offset 99 outside" in p for p in by_input[b"\x04"])


# -- saved findings -------------------------------------------------------------------------------


def _saved_findings() -> list[Path]:
    return sorted(REGRESSIONS.glob("*.json")) if REGRESSIONS.is_dir() else []


def test_saved_findings_stay_fixed() -> None:
    """Every input a campaign ever flagged decodes cleanly now (the regression corpus)."""
    by_id = {class_id(c): c for c in CLASSES}
    checker = DecodeChecker()
    saved = _saved_findings()
    with tracing():
        for path in saved:
            entry = json.loads(path.read_text())
            cls = by_id[entry["class"]]
            checker.check(cls, bytes.fromhex(entry["input_hex"]), generic=has_schema(cls))
    assert checker.inputs == len(saved)
    _fail_on(checker)


# -- the long campaign (make fuzz) ----------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_fuzz_one_million_inputs(
    corpora: dict[type[Any], ClassCorpus], capsys: pytest.CaptureFixture[str]
) -> None:
    per_class = -(-CAMPAIGN_INPUTS // len(CLASSES))
    checker = DecodeChecker()
    start = time.perf_counter()
    with tracing():
        run_campaign(list(corpora.values()), checker, seed=SEED + 1, per_class=per_class)
    elapsed = time.perf_counter() - start
    with capsys.disabled():
        print(
            f"\ndecoder fuzz: {checker.inputs} inputs over {len(CLASSES)} classes in "
            f"{elapsed:.0f} s (seed {SEED + 1}): {checker.decoded} decoded, {checker.rejected} "
            f"DecodeError, {len(checker.findings)} findings; slowest call "
            f"{checker.slowest_s * 1e3:.1f} ms; largest allocation peak {checker.worst_peak[0]} B "
            f"for a {checker.worst_peak[1]}-byte input"
        )
    assert checker.inputs >= CAMPAIGN_INPUTS
    _fail_on(checker, save=True)
