"""In a terminal, ``jointbus demo`` opens the monitor (a child process) and still ends cleanly."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from support.cli import free_port

pytestmark = pytest.mark.skipif(shutil.which("script") is None, reason="needs util-linux script")


def test_demo_in_a_terminal_shows_the_monitor_then_the_final_line() -> None:
    port = free_port()
    command = f"{sys.executable} -m jointbus.cli.main demo --duration 6 --hub-port {port}"
    env = {**os.environ, "COLUMNS": "160", "LINES": "48", "TERM": "xterm-256color"}
    result = subprocess.run(
        ["script", "-qec", command, "/dev/null"],  # a pseudo-terminal, as a user's shell gives
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    screen = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", " ", result.stdout)
    assert result.returncode == 0, screen[-2000:]
    assert "jointbus monitor" in screen  # the full-screen monitor's title
    assert "fr_j1" in screen  # a joint row
    assert "control_node" in screen
    assert re.search(r"stopped after [\d.]+ s: mode (STAND|STAND_UP)", screen), screen[-2000:]
