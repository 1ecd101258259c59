"""The README's example script (examples/arm6_move.py) runs and moves the elbow of sim://arm6."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "arm6_move.py"


def test_example_moves_the_elbow_in_real_time() -> None:
    result = subprocess.run(
        [sys.executable, str(EXAMPLE), "sim://arm6?seed=1"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    match = re.search(r"elbow: position (-?\d+\.\d+) rad, speed (-?\d+\.\d+) rad/s", result.stdout)
    assert match, result.stdout
    position, speed = (float(g) for g in match.groups())
    assert abs(position - 0.5) < 0.02  # from home 1.5 rad, within the PD loop's friction band
    assert abs(speed) < 0.2  # at rest (sensor noise σ = 0.01 rad/s)
    assert "IDLE" in result.stdout
