"""What a call does on the way, seen with ``sys.setprofile``: the numpy reductions and the Python
functions it runs.

Why the tests look: on the bridge's loop thread, whose caches every 2 ms cycle starts cold, each
numpy call on a 12-joint array costs 5–10 µs and each Python call about a microsecond
(2026-12-06, docs/PERFORMANCE.md), so the every-cycle paths read such arrays in plain Python and
build their small messages without their constructors' calls. Comparisons and arithmetic on
arrays are not calls the profiler sees; the reduction that ends each such test (``any``, ``all``,
``max``, ``clip``, …) and any call into numpy's Python code are.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

#: Where jointbus's own code lives (a call made from a frame of these files is counted).
OURS = ("/jointbus/nodes/", "/jointbus/robots/hb50/bridge/", "/jointbus/drivers/impedance.py")
_REDUCTIONS = frozenset({"any", "all", "max", "min", "sum", "clip", "reduce"})


def _profiled(call: Callable[[], T], profile: Callable[[Any, str, Any], None]) -> T:
    sys.setprofile(profile)
    try:
        return call()
    finally:
        sys.setprofile(None)


def numpy_reductions(call: Callable[[], T], ours: tuple[str, ...] = OURS) -> tuple[T, list[str]]:
    """``call()``'s result and the numpy reductions made from ``ours`` while it ran, each as
    ``"<caller>: <what>"``."""
    calls: list[str] = []

    def mine(frame: Any) -> bool:
        return frame is not None and any(part in frame.f_code.co_filename for part in ours)

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "c_call" and mine(frame):
            name = getattr(arg, "__qualname__", "")
            owner, _, method = name.partition(".")
            if owner in ("ndarray", "ufunc") and method in _REDUCTIONS:
                calls.append(f"{frame.f_code.co_name}: {name}")
        elif event == "call" and "/numpy/" in frame.f_code.co_filename and mine(frame.f_back):
            calls.append(f"{frame.f_back.f_code.co_name}: numpy {frame.f_code.co_name}")

    return _profiled(call, profile), calls


def python_calls(function: Callable[..., T], *args: Any) -> tuple[T, list[str]]:
    """``function(*args)``'s result and the Python functions it ran on the way (not
    ``function`` itself), each as ``"<file>:<function>"``, in order."""
    calls: list[str] = []
    depth = [0]

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            depth[0] += 1
            if depth[0] > 2:  # (1: the lambda below, 2: function)
                code = frame.f_code
                calls.append(f"{code.co_filename.rsplit('/', 1)[-1]}:{code.co_name}")
        elif event == "return":
            depth[0] -= 1

    return _profiled(lambda: function(*args), profile), calls
