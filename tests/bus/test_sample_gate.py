"""The receive gate: the compiled one and its pure-Python twin keep the same contract.

What a user relies on (through the Zenoh transport, whose tests run both gates end to end): the
gate handles only the steady state — a known publisher, the next sequence number or a repeat, a
payload that decodes — and hands back every other sample *with nothing changed*, so that gaps,
malformed payloads and new publishers are counted and reported by the transport's one Python
path; latency counters are exact (64-bit overflow folded into a Python int) and latencies are
clamped to ±2⁶² ns.
"""

from __future__ import annotations

import sys
import time
import tracemalloc
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointbus.bus import attachment
from jointbus.bus.sample_gate import (
    LATENCY_CLAMP_NS,
    LatencyStats,
    PySampleGate,
    clamp_latency,
    new_gate,
    new_latency_stats,
)
from jointbus.codec import accel
from jointbus.codec.errors import DecodeError
from support.bus import Count

KINDS = ["python", "compiled"] if accel.AVAILABLE else ["python"]
GIDS = [bytes([i]) * 16 for i in (1, 2, 3)]


def _gate(kind: str, last_seq: dict[bytes, int], plans: dict[bytes, Any]) -> accel.Gate:
    return new_gate(Count.from_cdr, last_seq, plans, compiled=kind == "compiled")


def _stats(kind: str) -> accel.LatencyCounters:
    return new_latency_stats(compiled=kind == "compiled")


class Offers:
    """What a subscriber's ``offer`` was given."""

    def __init__(self) -> None:
        self.got: list[tuple[Count, int, int]] = []

    def __call__(self, msg: Count, born: int, now: int) -> None:
        self.got.append((msg, born, now))


def _att(gid: bytes, seq: int, source_ns: int) -> bytes:
    return attachment.pack(seq, source_ns, gid)


@pytest.mark.parametrize("kind", KINDS)
def test_steady_state_is_delivered_with_latency_and_sequence(kind: str) -> None:
    last_seq: dict[bytes, int] = {GIDS[0]: 4}
    subs = ("a sub",)
    offers, stats = Offers(), _stats(kind)
    plans: dict[bytes, Any] = {GIDS[0]: (subs, 7, ((offers, stats),))}
    gate = _gate(kind, last_seq, plans)
    source = time.time_ns() - 1_000_000  # sent 1 ms ago
    mono_before = time.monotonic_ns()
    assert gate.receive(_att(GIDS[0], 5, source), Count(5).to_cdr(), subs, 7) is None
    assert gate.receive(_att(GIDS[0], 5, source), Count(6).to_cdr(), subs, 7) is None  # repeat
    assert last_seq == {GIDS[0]: 5}
    assert gate.samples == 2
    assert [m for m, _, _ in offers.got] == [Count(5), Count(6)]
    _msg, born, now = offers.got[0]
    assert now >= mono_before
    assert 1_000_000 <= now - born < 1_000_000_000  # the latency, moved to the monotonic clock
    assert stats.count == 2
    assert 1_000_000 <= stats.last < 1_000_000_000
    assert stats.max >= stats.last
    assert stats.sum >= 2 * 1_000_000


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("case", "att", "payload", "generation"),
    [
        ("no attachment", None, Count(1).to_cdr(), 7),
        ("a 32-byte attachment", _att(GIDS[0], 5, 0)[:32], Count(1).to_cdr(), 7),
        ("a GID length that is not 16", _att(GIDS[0], 5, 0)[:16] + b"\x08" + bytes(16), b"", 7),
        ("a publisher without a plan", _att(GIDS[1], 1, 0), Count(1).to_cdr(), 7),
        ("a stale generation", _att(GIDS[0], 5, 0), Count(1).to_cdr(), 8),
        ("a gap", _att(GIDS[0], 6, 0), Count(1).to_cdr(), 7),
        ("a malformed payload", _att(GIDS[0], 5, 0), b"\x00\x01garbage", 7),
        ("an empty payload", _att(GIDS[0], 5, 0), b"", 7),
    ],
)
def test_everything_but_the_steady_state_comes_back_untouched(
    kind: str, case: str, att: bytes | None, payload: bytes, generation: int
) -> None:
    last_seq: dict[bytes, int] = {GIDS[0]: 4}
    subs = ("a sub",)
    offers, stats = Offers(), _stats(kind)
    plans: dict[bytes, Any] = {GIDS[0]: (subs, 7, ((offers, stats),))}
    gate = _gate(kind, last_seq, plans)
    before = time.monotonic_ns()
    back = gate.receive(att, payload, subs, generation)
    assert back is not None, case
    raw, now_mono, now_wall = back
    assert raw == att
    assert now_mono >= before
    assert abs(now_wall - time.time_ns()) < 10**9
    assert (last_seq, gate.samples, offers.got, stats.count) == ({GIDS[0]: 4}, 0, [], 0)


@pytest.mark.parametrize("kind", KINDS)
def test_a_plan_replaced_while_the_sample_decodes_still_delivers_it(kind: str) -> None:
    """Decoding runs Python, so another Zenoh receive thread may replace this publisher's plan
    meanwhile (its ``_receive`` rebuilds plans). The sample in hand goes to the plan it was
    gated by, the next ones to the new plan. (The compiled gate held that plan by a borrowed
    reference: on a loaded host it once read a freed one, "a plan target is (offer, stats)",
    while an e-stop's 10 Hz mirror arrived; it holds it now.)"""
    last_seq: dict[bytes, int] = {GIDS[0]: 4}
    subs = ("a sub",)
    offers, stats = Offers(), _stats(kind)
    plans: dict[bytes, Any] = {}

    def decode_while_replanned(data: bytes) -> Count:
        # the only reference to the old plan (and its targets tuple) goes with it
        plans[GIDS[0]] = (subs, 7, tuple((Offers(), _stats(kind)) for _ in range(3)))
        return Count.from_cdr(data)

    plans[GIDS[0]] = (subs, 7, tuple((offers, stats) for _ in range(1)))
    gate = new_gate(decode_while_replanned, last_seq, plans, compiled=kind == "compiled")
    for seq in (5, 6, 7):
        att = _att(GIDS[0], seq, time.time_ns())
        assert gate.receive(att, Count(seq).to_cdr(), subs, 7) is None
    assert [m for m, _, _ in offers.got] == [Count(5)]  # then the new plan's offers took over
    assert last_seq == {GIDS[0]: 7}


@pytest.mark.parametrize("kind", KINDS)
def test_a_new_subscriber_tuple_makes_the_plan_stale(kind: str) -> None:
    old_subs, new_subs = ("a",), ("a", "b")
    plans: dict[bytes, Any] = {GIDS[0]: (old_subs, 0, ((Offers(), _stats(kind)),))}
    gate = _gate(kind, {}, plans)
    assert gate.receive(_att(GIDS[0], 1, 0), Count(1).to_cdr(), new_subs, 0) is not None
    assert gate.samples == 0


@pytest.mark.parametrize("kind", KINDS)
def test_nobody_listening_counts_the_sample_only(kind: str) -> None:
    last_seq: dict[bytes, int] = {}
    gate = _gate(kind, last_seq, {})
    assert gate.receive(None, b"", (), 0) is None
    assert (gate.samples, last_seq) == (1, {})


@pytest.mark.parametrize("kind", KINDS)
def test_a_publisher_of_another_type_is_dropped_without_decoding(kind: str) -> None:
    last_seq: dict[bytes, int] = {GIDS[0]: 1}
    subs = ("a",)
    gate = _gate(kind, last_seq, {GIDS[0]: (subs, 0, None)})
    assert gate.receive(_att(GIDS[0], 9, 0), b"not even CDR", subs, 0) is None
    assert (gate.samples, last_seq) == (1, {GIDS[0]: 1})  # counted, no sequence bookkeeping


@pytest.mark.parametrize("kind", KINDS)
def test_a_corrupt_source_time_is_clamped_not_fatal(kind: str) -> None:
    subs = ("a",)
    offers, stats = Offers(), _stats(kind)
    gate = _gate(kind, {}, {GIDS[0]: (subs, 0, ((offers, stats),))})
    assert gate.receive(_att(GIDS[0], 1, -(2**63)), Count(1).to_cdr(), subs, 0) is None
    assert gate.receive(_att(GIDS[0], 2, 2**63 - 1), Count(2).to_cdr(), subs, 0) is None
    assert [m for m, _, _ in offers.got] == [Count(1), Count(2)]
    assert (stats.count, stats.max, stats.last) == (2, LATENCY_CLAMP_NS, -LATENCY_CLAMP_NS)
    assert stats.sum == 0


@pytest.mark.parametrize("kind", KINDS)
def test_an_exception_from_an_offer_propagates_after_the_bookkeeping(kind: str) -> None:
    # The transport logs it and keeps Zenoh's thread alive; the sample did arrive.
    def broken(_msg: Count, _born: int, _now: int) -> None:
        raise RuntimeError("subscriber broke")

    last_seq: dict[bytes, int] = {}
    subs = ("a",)
    gate = _gate(kind, last_seq, {GIDS[0]: (subs, 0, ((broken, _stats(kind)),))})
    with pytest.raises(RuntimeError, match="subscriber broke"):
        gate.receive(_att(GIDS[0], 1, 0), Count(1).to_cdr(), subs, 0)
    assert (gate.samples, last_seq) == (1, {GIDS[0]: 1})


class Decoded:
    """A ``decode`` that counts its calls (a malformed payload must not be half-processed)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, data: bytes) -> Count:
        self.calls += 1
        return Count.from_cdr(data)


_sample = st.tuples(
    st.sampled_from([*GIDS, None, "short"]),  # publisher, no attachment, a foreign attachment
    st.integers(min_value=-3, max_value=40),  # sequence number
    st.one_of(st.integers(min_value=0, max_value=99).map(Count), st.just(None)),  # None: garbage
    st.integers(min_value=0, max_value=3),  # generation
)


@settings(max_examples=150, deadline=None)
@given(stream=st.lists(_sample, max_size=40), planned=st.sets(st.sampled_from(GIDS)))
def test_both_gates_answer_every_stream_alike(stream: list[Any], planned: set[bytes]) -> None:
    if not accel.AVAILABLE:
        pytest.skip("_cdr_accel not built or disabled")
    subs = ("a", "b")
    results: dict[str, Any] = {}
    for kind in ("python", "compiled"):
        last_seq: dict[bytes, int] = {}
        offers, stats = Offers(), _stats(kind)
        plans: dict[bytes, Any] = {gid: (subs, 1, ((offers, stats),)) for gid in planned}
        decode = Decoded()
        gate = new_gate(decode, last_seq, plans, compiled=kind == "compiled")
        answers = []
        for gid, seq, msg, generation in stream:
            if gid is None:
                att = None
            elif gid == "short":
                att = b"\x01" * 20
            else:
                att = _att(gid, seq, 1_700_000_000_000_000_000 + seq)
            payload = msg.to_cdr() if msg is not None else b"\x00\x01garbage"
            back = gate.receive(att, payload, subs, generation)
            answers.append((back is None, None if back is None else back[0]))
            if back is not None and isinstance(gid, bytes):
                last_seq[gid] = seq  # what the transport's Python path does with it
        results[kind] = (
            answers,
            dict(last_seq),
            gate.samples,
            [m for m, _, _ in offers.got],
            stats.count,
            decode.calls,
        )
    assert results["python"] == results["compiled"]


@pytest.mark.parametrize("kind", KINDS)
def test_latency_counters_are_exact_beyond_64_bits(kind: str) -> None:
    stats = _stats(kind)
    twin = LatencyStats()
    values = [LATENCY_CLAMP_NS] * 5 + [-7, 3, -LATENCY_CLAMP_NS, 12]
    for value in values:
        stats.note(value)
        twin.note(value)
    assert (stats.count, stats.sum, stats.last, stats.max) == (
        len(values),
        sum(values),
        12,
        LATENCY_CLAMP_NS,
    )
    assert (twin.count, twin.sum, twin.last, twin.max) == (
        stats.count,
        stats.sum,
        stats.last,
        stats.max,
    )


@pytest.mark.parametrize("kind", KINDS)
def test_latency_counters_refuse_an_unclamped_latency(kind: str) -> None:
    stats = _stats(kind)
    with pytest.raises((ValueError, OverflowError)):
        stats.note(LATENCY_CLAMP_NS + 1)
    assert stats.count == 0


def test_clamp_latency() -> None:
    assert clamp_latency(5) == 5
    assert clamp_latency(2**70) == LATENCY_CLAMP_NS
    assert clamp_latency(-(2**70)) == -LATENCY_CLAMP_NS


def test_the_python_twin_is_what_runs_without_the_core() -> None:
    gate = new_gate(Count.from_cdr, {}, {}, compiled=False)
    assert isinstance(gate, PySampleGate)
    assert isinstance(new_latency_stats(compiled=False), LatencyStats)
    if accel.AVAILABLE:
        assert not isinstance(new_gate(Count.from_cdr, {}, {}), PySampleGate)
    else:
        with pytest.raises(RuntimeError, match="_cdr_accel"):
            new_gate(Count.from_cdr, {}, {}, compiled=True)


def test_decode_errors_are_the_codecs() -> None:
    # The gate treats any Exception from decode as "malformed: hand it back"; the codec raises
    # DecodeError, which the transport reports with its message.
    with pytest.raises(DecodeError):
        Count.from_cdr(b"\x00\x01garbage")


@pytest.mark.skipif(not accel.AVAILABLE, reason="_cdr_accel not built or disabled")
def test_the_compiled_gate_does_not_leak() -> None:
    subs = ("a",)
    offers, stats = Offers(), _stats("compiled")
    plan = (subs, 0, ((offers, stats),))
    last_seq: dict[bytes, int] = {}
    gate = _gate("compiled", last_seq, {GIDS[0]: plan})
    good, bad = Count(1).to_cdr(), b"\x00\x01garbage"

    def cycle(base: int) -> None:
        for i in range(10):
            gate.receive(_att(GIDS[0], base + i, 0), good, subs, 0)  # steady state
        gate.receive(_att(GIDS[0], base + 20, 0), good, subs, 0)  # a gap: handed back
        last_seq[GIDS[0]] = base + 29  # as the Python path would (then the next cycle is steady)
        gate.receive(_att(GIDS[0], base + 9, 0), bad, subs, 0)  # malformed: handed back
        gate.receive(_att(GIDS[1], 1, 0), good, subs, 0)  # unknown publisher
        gate.receive(None, good, subs, 0)
        gate.receive(None, good, (), 0)
        offers.got.clear()

    cycle(0)
    assert stats.count == 10
    before = (sys.getrefcount(Count), sys.getrefcount(plan), sys.getrefcount(subs))
    tracemalloc.start()
    try:
        for n in range(1, 200):
            cycle(30 * n)
        first, _ = tracemalloc.get_traced_memory()
        for n in range(200, 2200):
            cycle(30 * n)
        second, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (sys.getrefcount(Count), sys.getrefcount(plan), sys.getrefcount(subs)) == before
    assert stats.count == 10 * 2200
    assert second - first < 64 * 1024, f"memory grew by {second - first} bytes"
