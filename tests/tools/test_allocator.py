"""``jointbus.tools.allocator``: with the threshold fixed, large blocks freed behind live ones go
back to the system (RSS falls); glibc's dynamic threshold keeps them resident. Each case runs in
a child process: the setting is process-wide and one-way."""

from __future__ import annotations

import subprocess
import sys

import pytest

from jointbus.soak import read_malloc_stats
from jointbus.tools.allocator import return_large_blocks

_MB = 1024 * 1024

# A large block freed first (glibc then raises its threshold past 300 KiB), then 200 blocks of
# 300 KiB, each followed by a live 100 KiB one, and the large ones freed: what stays resident
# beyond the 20 MB still alive is what the allocator kept.
_CHILD = """
import sys
from jointbus.soak import read_rss_bytes
from jointbus.tools.allocator import return_large_blocks
if sys.argv[1] == "fixed":
    assert return_large_blocks()
block = bytearray(1 << 20)
del block
base = read_rss_bytes()
blocks, kept = [], []
for _ in range(200):
    blocks.append(bytearray(300 * 1024))
    kept.append(bytearray(100 * 1024))
del blocks
print(read_rss_bytes() - base)
"""


def _resident_after_free(mode: str) -> int:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, mode], capture_output=True, text=True, check=True
    )
    return int(out.stdout)


@pytest.mark.skipif(read_malloc_stats() is None, reason="glibc only")
def test_freed_large_blocks_leave_rss_once_the_threshold_is_fixed() -> None:
    kept = 200 * 100 * 1024  # the live blocks: resident either way
    dynamic = _resident_after_free("dynamic")
    fixed = _resident_after_free("fixed")
    assert dynamic > kept + 40 * _MB  # glibc's default keeps most of the 60 MB freed
    assert fixed < kept + 5 * _MB  # fixed: only what is alive stays


def test_a_threshold_out_of_glibc_range_is_refused() -> None:
    for bad in (0, -1, 64 * 1024 * 1024):
        with pytest.raises(ValueError, match="threshold_bytes"):
            return_large_blocks(bad)
