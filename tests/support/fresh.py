"""Run a snippet in a fresh Python interpreter (part of :mod:`support`).

Why: some behaviour shows only the first time something happens in a process — a lazy import, a
class's first evaluation — and the test process has long since done it. The snippet prints its
finding on its last line.
"""

from __future__ import annotations

import subprocess
import sys


def last_line_in_fresh_interpreter(code: str) -> str:
    """The last line ``code`` printed, run by ``python -c`` in a new interpreter (which raises
    ``CalledProcessError`` if it fails)."""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    return out.strip().splitlines()[-1] if out.strip() else ""
