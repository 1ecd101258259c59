"""Another real-time program on the host, for tests: a process of its own session (not a child
of the test: ``setsid --fork``, so the test's session and ancestry do not claim it) whose main
thread runs SCHED_FIFO and sleeps — what a second robot's loop thread looks like to the OS."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

_CODE = """
import os, sys, time
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(int(sys.argv[2])))
open(sys.argv[1] + ".tmp", "w").write(str(os.getpid()))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(120)
"""


@contextlib.contextmanager
def realtime_program(tmp_path: Path, priority: int = 45) -> Iterator[int]:
    """The pid of a SCHED_FIFO ``priority`` program in a session of its own (default 45: at
    the priorities the robot's threads take, 39–50); killed on exit. Skips the test where
    SCHED_FIFO is refused (no CAP_SYS_NICE)."""
    pidfile = tmp_path / "holder.pid"
    subprocess.run(
        ["setsid", "--fork", sys.executable, "-c", _CODE, str(pidfile), str(priority)],
        check=True, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10.0
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    if not pidfile.exists():
        pytest.skip("SCHED_FIFO refused on this account: no real-time program to start")
    pid = int(pidfile.read_text())
    try:
        yield pid
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
