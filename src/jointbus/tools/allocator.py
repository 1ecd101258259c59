"""glibc's allocator, told to give large blocks back to the system as soon as they are freed.

Where it sits: a leaf of :mod:`jointbus.tools`; the processes whose job is recording call it
once at start (``jointbus record``, the demo's recording process in the process layout,
the soak's observer). It changes a process-wide setting, so
library classes such as :class:`~jointbus.tools.recorder.Recorder` never call it themselves.

**Why.** A recorder closes an MCAP chunk a few times a second, and each close makes several
short-lived blocks of 100–300 KiB (the chunk's bytes, zstd's output, the record built around
it). glibc serves blocks over its *mmap threshold* (128 KiB at start) with their own ``mmap``,
returned to the system by ``free`` — but the first time such a block is freed it raises the
threshold to that block's size (up to 32 MiB), so from then on these blocks come from the
allocator's heaps, where a block freed behind a live one stays resident. Over a long
recording RSS then creeps up by megabytes while the memory in use does not: the soak measured
+3.8 MB held against +0.3 MB in use in 30 minutes (docs/SAFETY.md § Soak). Setting the
threshold explicitly (``mallopt(M_MMAP_THRESHOLD, …)``) turns the dynamic adjustment off: every
block over it is mapped and unmapped, which costs a few page faults per chunk (tens of
microseconds, a few times a second) and keeps RSS flat. Setting the trim threshold explicitly
too stops glibc from raising it along with the mmap threshold.

Not glibc (musl, macOS): nothing to do, :func:`return_large_blocks` says so by returning False.
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any, Final

__all__ = ["LARGE_BLOCK_BYTES", "TRIM_THRESHOLD_BYTES", "return_large_blocks"]

#: Blocks at or over this size (bytes) are mapped for themselves and unmapped on ``free``:
#: glibc's own starting threshold, kept fixed.
LARGE_BLOCK_BYTES: Final = 128 * 1024
#: Free memory at the top of a heap over this size (bytes) is given back: glibc's default.
TRIM_THRESHOLD_BYTES: Final = 128 * 1024

# malloc.h
_M_TRIM_THRESHOLD: Final = -1
_M_MMAP_THRESHOLD: Final = -3


@functools.cache
def _mallopt() -> Any:
    try:
        function = ctypes.CDLL(None).mallopt
    except (AttributeError, OSError):  # not glibc
        return None
    function.restype = ctypes.c_int
    function.argtypes = [ctypes.c_int, ctypes.c_int]
    return function


def return_large_blocks(threshold_bytes: int = LARGE_BLOCK_BYTES) -> bool:
    """Fix glibc's mmap threshold at ``threshold_bytes`` (and its trim threshold at
    :data:`TRIM_THRESHOLD_BYTES`) for this process: large blocks go back to the system when
    freed. True when both settings took; False where there is no glibc ``mallopt``."""
    if not 0 < threshold_bytes <= 32 * 1024 * 1024:
        raise ValueError(f"threshold_bytes = {threshold_bytes}: expected 1 B … 32 MiB")
    function = _mallopt()
    if function is None:
        return False
    return bool(function(_M_MMAP_THRESHOLD, threshold_bytes)) and bool(
        function(_M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)
    )
