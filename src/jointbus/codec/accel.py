"""The optional compiled core of the stable-layout fast path (``_cdr_accel``), and how to skip it.

Where it sits: :mod:`jointbus.codec`, used only by :mod:`jointbus.codec.layout`. ``_cdr_accel`` is
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

import os
from types import ModuleType
from typing import Any, Final, Protocol


class Program(Protocol):
    """A compiled layout: ``decode`` returns the message or the miss marker, ``encode`` bytes or
    ``None`` when the object does not have the layout (the generic engine then answers)."""

    def decode(self, data: bytes | bytearray | memoryview, /) -> Any: ...

    def encode(self, obj: object, /) -> bytes | None: ...


def _load() -> ModuleType | None:
    if os.environ.get("JOINTBUS_NO_ACCEL", "") not in ("", "0"):
        return None
    try:
        from jointbus.codec import _cdr_accel
    except ImportError:
        return None
    return _cdr_accel


_CORE: Final = _load()
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
