"""``jointbus chaos``'s own options (the campaign is ``tests/test_chaos_campaign.py``): a
``--window`` that is not ``BEGIN:END`` in seconds is refused with exit 2 before anything runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from jointbus.cli.main import app


@pytest.mark.parametrize("window", ["2870", "a:b", "2870-2895", ":5"])
def test_a_window_that_is_not_begin_end_is_refused(window: str) -> None:
    result = CliRunner().invoke(app, ["chaos", "--seconds", "3600", "--window", window])
    assert result.exit_code == 2
    assert "BEGIN:END" in result.output


def test_a_window_outside_the_schedule_is_refused_with_the_bounds() -> None:
    result = CliRunner().invoke(app, ["chaos", "--seconds", "60", "--window", "50:70"])
    assert result.exit_code == 2
    assert "window" in result.output and "60" in result.output


@pytest.mark.long
@pytest.mark.timeout(300)
def test_ctrl_c_stops_the_campaign_with_its_table_and_a_failing_exit_code() -> None:
    """A user stops a long run: the table of the time run is printed, the verdict says it was
    stopped early, the exit code is not 0 (a script must not read it as passed), and every
    process of the robot and the tools is gone."""
    process = subprocess.Popen(
        [sys.executable, "-m", "jointbus.cli.main", "chaos", "--seconds", "600"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if "faults over 600 s" in line:  # the robot stands: the campaign clock runs
                break
        time.sleep(8.0)
        started = _descendants(process.pid)
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    lines += out.splitlines()
    text = "".join(f"{line.rstrip()}\n" for line in lines)
    assert process.returncode == 1, text
    verdict = next(line for line in lines if "s of campaign" in line)
    assert "STOPPED early (Ctrl-C or SIGTERM) at t=" in verdict and "of 600 s" in verdict, text
    assert "| fault | count |" in text
    assert len(started) >= 4  # the layout's processes and the tools were running
    time.sleep(1.0)
    assert [pid for pid in started if _alive(pid)] == []


def _descendants(root: int) -> set[int]:
    """Every live process below ``root`` (from /proc)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat:
                    parents[int(entry)] = int(stat.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
