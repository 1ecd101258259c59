"""``jointbus demo --rate`` refused as a usage error before anything starts: exit code 2 with
``Usage:`` and ``Error:`` lines naming the option, the value and what is allowed (README: "a
usage error … `--rate -5`"), and no process of the layout started. Before, ``--rate -5`` was one
``error: Stack rate_hz = -5.0 is invalid`` line with exit code 1, and ``--rate 700`` started the
layout's processes until the bridge's refused it."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.cli import free_port, run_cli

#: Records every Python process that starts (its pid and its parent's) in $JB_STARTS.
_SITECUSTOMIZE = """\
import os
if os.environ.get("JB_STARTS"):
    with open(os.environ["JB_STARTS"], "a", encoding="ascii") as out:
        out.write(f"{os.getpid()} {os.getppid()}\\n")
"""


@pytest.mark.parametrize(
    ("rate", "expected"),
    [
        ("-5", "-5 Hz; expected a rate in [50, 2000] Hz"),
        ("5000", "5000 Hz; expected a rate in [50, 2000] Hz"),
        ("700", "700 Hz; expected a rate whose period is a whole number of the simulator's"),
        ("400", "400 Hz; expected a rate whose period is a whole number of the simulator's"),
    ],
)
def test_a_rate_the_demo_cannot_run_is_a_usage_error_and_starts_nothing(
    rate: str, expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sitecustomize.py").write_text(_SITECUSTOMIZE, encoding="ascii")
    starts = tmp_path / "starts"
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("JB_STARTS", str(starts))
    result = run_cli(free_port(), "demo", "--headless", "--duration", "1", "--rate", rate)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("Usage: jointbus demo"), result.stderr
    assert f"Error: Invalid value for '--rate': {expected}" in result.stderr, result.stderr
    # the command itself and no other Python process (no process of the layout)
    assert len(starts.read_text(encoding="ascii").splitlines()) == 1
