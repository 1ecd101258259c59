"""The steady state of the Zenoh receive path, in one call per sample (compiled, or this twin).

Where it sits: :mod:`jointbus.bus`, used by :mod:`jointbus.bus.zenoh_transport` (one gate per
topic subscription) and :mod:`jointbus.bus.subscriber` (latency counters). The compiled gate is in
the codec's core (``jointbus/codec/_cdr_accel.c``, loaded by :mod:`jointbus.codec.accel`); this
module holds its pure-Python twin, used when the core is not built or ``JOINTBUS_NO_ACCEL=1``,
and kept to the same contract (the tests run both on the same inputs).

Why: a received sample used to cost ≈ 4 µs of Python before the user's callback (clocks,
attachment, sequence-gap and latency bookkeeping, delivery plan, decode, in a dozen calls), which
is where the bus lost a third to a half of raw Zenoh's throughput and ≈ 12 µs at 1 kHz (numbers in
docs/PERFORMANCE.md, "Where a received sample's time goes"). Only the steady state is done here:
an rmw_zenoh attachment from a publisher whose delivery plan is current, the next sequence number
(or a repeat), a payload that decodes. Anything else — no or foreign attachment, a new publisher,
a stale plan, a gap, a malformed payload, a transient-local subscriber — is handed back *before
anything changed*, and the transport's Python path handles it exactly as before: gaps are counted
and reported, a malformed sample is counted malformed (its sequence number still arrived, so it is
never also counted lost), and every event is emitted from one place.

The contract (:class:`jointbus.codec.accel.Gate`): ``receive(attachment, payload, subs,
generation)``, attachment and payload as bytes or Zenoh ``ZBytes`` (anything with ``to_bytes()``).
``plans[gid] = (subs, generation, targets)`` is the delivery plan the transport computed for the
publisher with that 16-byte GID while the local subscriber tuple was ``subs`` (the same object)
and the discovery generation ``generation``; ``targets`` is ``((offer, latency counters), ...)``,
or ``None`` to drop that publisher's samples (another type, reported when it was discovered).
Latency is the receive wall time minus the attachment's source time, clamped to ±2⁶² ns (a
source time that far off is a corrupt stamp; the clamp keeps the compiled counters in 64 bits).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final

from jointbus.bus import attachment
from jointbus.codec import accel

#: Latencies are clamped to ± this (ns): 2⁶² ns ≈ 146 years.
LATENCY_CLAMP_NS: Final = 1 << 62


def clamp_latency(latency_ns: int) -> int:
    """``latency_ns`` within ±:data:`LATENCY_CLAMP_NS`."""
    return max(-LATENCY_CLAMP_NS, min(LATENCY_CLAMP_NS, latency_ns))


class LatencyStats:
    """A subscriber's latency counters (ns), the twin of the core's ``LatencyStats``."""

    __slots__ = ("count", "last", "max", "sum")

    def __init__(self) -> None:
        self.count = 0
        self.sum = 0
        self.last = 0
        self.max = 0

    def note(self, latency_ns: int) -> None:
        """Count one latency (within ±:data:`LATENCY_CLAMP_NS`)."""
        if not -LATENCY_CLAMP_NS <= latency_ns <= LATENCY_CLAMP_NS:
            raise ValueError("latency beyond +-2**62 ns (clamp it first)")
        self.count += 1
        self.sum += latency_ns
        self.last = latency_ns
        self.max = max(self.max, latency_ns)


def _as_bytes(data: Any) -> bytes:
    return data if type(data) is bytes else bytes(data.to_bytes())


class PySampleGate:
    """The pure-Python gate (contract in the module docstring)."""

    __slots__ = ("_decode", "_last_seq", "_plans", "samples")

    def __init__(
        self, decode: Callable[[bytes], Any], last_seq: dict[bytes, int], plans: dict[bytes, Any]
    ) -> None:
        self._decode = decode
        self._last_seq = last_seq
        self._plans = plans
        self.samples = 0

    def receive(
        self, att: Any, payload: Any, subs: tuple[Any, ...], generation: int
    ) -> tuple[bytes | None, int, int] | None:
        """None when the sample was handled; else what the Python path needs (nothing changed)."""
        now_wall = time.time_ns()
        now_mono = time.monotonic_ns()
        if not subs:
            self.samples += 1
            return None
        if att is None:
            return None, now_mono, now_wall
        raw = _as_bytes(att)
        if len(raw) != attachment.SIZE or raw[16] != attachment.GID_SIZE:
            return raw, now_mono, now_wall
        gid = raw[17:]
        plan = self._plans.get(gid)
        if plan is None or plan[0] is not subs or plan[1] != generation:
            return raw, now_mono, now_wall
        targets = plan[2]
        if targets is None:
            self.samples += 1
            return None
        seq, source_wall, _, _ = attachment.FIELDS.unpack(raw)
        last = self._last_seq.get(gid)
        if last is not None and seq > last + 1:
            return raw, now_mono, now_wall
        try:
            msg = self._decode(_as_bytes(payload))
        except Exception:
            return raw, now_mono, now_wall
        self._last_seq[gid] = seq
        self.samples += 1
        latency = clamp_latency(now_wall - source_wall)
        born = now_mono - latency if latency > 0 else now_mono
        for offer, stats in targets:
            stats.note(latency)
            offer(msg, born, now_mono)
        return None


def new_latency_stats(compiled: bool | None = None) -> accel.LatencyCounters:
    """Latency counters: the core's when built (``compiled`` None or True), else the twin's."""
    if compiled is not False:
        made = accel.latency_counters()
        if made is not None:
            return made
        if compiled:
            raise RuntimeError("the compiled core (_cdr_accel) is not built or is disabled")
    return LatencyStats()


def new_gate(
    decode: Callable[[bytes], Any],
    last_seq: dict[bytes, int],
    plans: dict[bytes, Any],
    compiled: bool | None = None,
) -> accel.Gate:
    """A gate over ``last_seq`` and ``plans``: the core's when built (``compiled`` None or True),
    else :class:`PySampleGate`; ``compiled=True`` without the core raises RuntimeError."""
    if compiled is not False:
        made = accel.sample_gate(decode, last_seq, plans)
        if made is not None:
            return made
        if compiled:
            raise RuntimeError("the compiled core (_cdr_accel) is not built or is disabled")
    return PySampleGate(decode, last_seq, plans)


__all__ = [
    "LATENCY_CLAMP_NS",
    "LatencyStats",
    "PySampleGate",
    "clamp_latency",
    "new_gate",
    "new_latency_stats",
]
