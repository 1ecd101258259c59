"""The optional compiled core (``_cdr_accel``) of the codec and of the receive path; how to skip it.

Where it sits: :mod:`jointbus.codec`, used by :mod:`jointbus.codec.layout` (layout programs) and by
:mod:`jointbus.bus.sample_gate` (the steady state of the Zenoh receive path: attachment, sequence
gaps, latency, decode and delivery of one sample in one call) and by
:mod:`jointbus.bus.zenoh_transport` (encode, stamp and put one message in one call); see
``_cdr_accel.c`` (a higher layer using a lower one). ``_cdr_accel`` is
a small C extension (``_cdr_accel.c``) built by ``pip install`` when a C compiler is present
(``setup.py`` marks it ``optional``): without it everything works, in pure Python, ≈ 6–7× slower
on the 500 Hz messages. Why it exists: pure Python plateaus at ≈ 10–11 µs per 12-joint
``BridgeData`` / ``JointCommand`` round trip (Python glue around :mod:`struct` plus building the
objects, even without their constructors); the issue requires ≥ 8× rosbags (≤ 3.3 µs) and aims at
≥ 15× (≤ 1.7 µs); the core does it in ≈ 1.4–1.5 µs. The numbers are in the docstring of
:mod:`jointbus.codec.layout` and in ``bench/bench_codec.py``.

Set ``JOINTBUS_NO_ACCEL=1`` in the environment (before jointbus is imported) to run without the
core, e.g. to check that the fallback passes the test suite.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Protocol

from jointbus import compiled_core


class Program(Protocol):
    """A compiled layout: ``decode`` returns the message or the miss marker, ``encode`` bytes or
    ``None`` when the object does not have the layout (the generic engine then answers)."""

    def decode(self, data: bytes | bytearray | memoryview, /) -> Any: ...

    def encode(self, obj: object, /) -> bytes | None: ...


class LatencyCounters(Protocol):
    """A subscriber's latency counters (ns): ``note`` one latency; ``count``, ``sum``, ``last``,
    ``max`` (0 until a positive latency was noted)."""

    @property
    def count(self) -> int: ...

    @property
    def sum(self) -> int: ...

    @property
    def last(self) -> int: ...

    @property
    def max(self) -> int: ...

    def note(self, latency_ns: int, /) -> None: ...


class Gate(Protocol):
    """The receive path's steady state (contract in ``_cdr_accel.c`` and
    :mod:`jointbus.bus.sample_gate`): ``receive`` returns None when it handled the sample, else
    ``(attachment bytes or None, now_mono_ns, now_wall_ns)`` for the Python path."""

    samples: int

    def receive(
        self, attachment: Any, payload: Any, subs: tuple[Any, ...], generation: int, /
    ) -> tuple[bytes | None, int, int] | None: ...


_CORE: Final = compiled_core.load("jointbus.codec._cdr_accel")
#: Whether the compiled core is built and enabled in this process.
AVAILABLE: Final = _CORE is not None


def program(spec: tuple[Any, ...], miss: object) -> Program | None:
    """The core's program for a layout spec (see ``_cdr_accel.c``), or ``None`` without the core.

    A spec the core refuses (it validates every offset against the size) also gives ``None``:
    the layout then runs in Python.
    """
    if _CORE is None:
        return None
    try:
        made: Program = _CORE.Program(spec, miss)
    except (TypeError, ValueError, OverflowError):
        return None
    return made


def latency_counters() -> LatencyCounters | None:
    """The core's latency counters (updated without a Python call by its gate), or ``None``."""
    if _CORE is None:
        return None
    made: LatencyCounters = _CORE.LatencyStats()
    return made


def sample_gate(
    decode: Callable[[bytes], Any], last_seq: dict[bytes, int], plans: dict[bytes, Any]
) -> Gate | None:
    """The core's receive gate over the caller's ``last_seq`` and ``plans`` dicts, or ``None``."""
    if _CORE is None:
        return None
    made: Gate = _CORE.SampleGate(decode, last_seq, plans)
    return made


def sender(
    put: Callable[..., Any], encode: Callable[[Any], bytes], gid: bytes
) -> Callable[[Any, int, int], None] | None:
    """The core's ``send(message, seq, mono_ns)``: ``put(encode(message), attachment=...)`` with
    rmw_zenoh's 33-byte attachment (``seq``, wall-clock ns, GID) stamped in C; ``None`` without
    the core."""
    if _CORE is None:
        return None
    made: Callable[[Any, int, int], None] = _CORE.Sender(put, encode, gid).send
    return made
