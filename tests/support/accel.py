"""Running a check with the optional compiled cores turned off (``JOINTBUS_NO_ACCEL=1``).

Each compiled core is chosen once, when its module is imported, so the reference path is only
reachable in a fresh interpreter: the tests that prove the switch works run a short script there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def assert_runs_without_accel(script: str) -> None:
    """Run ``script`` (Python source) in a new interpreter with every compiled core off; it must
    exit 0 (its asserts are the test). The tests' own modules (``support``) import there too.
    Fails with the script's stderr."""
    tests = str(Path(__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in (tests, os.environ.get("PYTHONPATH", "")) if p)
    result = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "JOINTBUS_NO_ACCEL": "1", "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
