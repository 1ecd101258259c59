"""``jointbus can-twin``: simulated CAN motors for a can:// URL, and the README's command line
run exactly as written (issue 11 item 16: nothing showed how to run can:// against the twin)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
URL = "can://virtual/jb-cli-twin?robot=hb50&model=md80"


def run(*args: str, cwd: Path = ROOT, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    """``jointbus ARGS...`` in a new Python process, as a user runs it."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), *filter(None, [env.get("PYTHONPATH")])])
    return subprocess.run(
        [sys.executable, "-m", "jointbus.cli.main", *args],
        capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd, check=False,
    )


def test_the_documented_command_lines_run_as_written() -> None:
    """README.md and docs/CAN.md's virtual-bus command lines (the vcan ones need a kernel
    module this machine lacks)."""
    lines = [
        line
        for doc in ("README.md", "docs/CAN.md")
        for line in re.findall(
            r"^\.venv/bin/jointbus can-twin .*$",
            (ROOT / doc).read_text(encoding="utf-8"),
            re.MULTILINE,
        )
        if "can://virtual/" in line
    ]
    assert len(lines) == 3, "README and docs/CAN.md show the can-twin command, CAN.md a fault"
    for line in lines:
        command = shlex.split(line.split("  #")[0])
        result = run(*command[1:])
        assert result.returncode == 0, result.stderr
        assert "12 joints in the standing pose within 0.0" in result.stdout, result.stdout
        assert "motor twin: 12 motors (md80; CAN ids 1, 2, 3" in result.stderr
        assert "reply timeout 250 ms" in result.stdout
        if "--drop-replies" in command:
            assert "fault injected: replies of CAN id 2 (fr_j1) dropped" in result.stderr
            assert "fault undone: replies of CAN id 2 (fr_j1) dropped" in result.stderr


def test_a_script_runs_against_the_twin_with_its_arguments_and_exit_code(tmp_path: Path) -> None:
    script = tmp_path / "probe.py"
    script.write_text(
        "import sys\n"
        "from jointbus import drivers\n"
        "with drivers.open(sys.argv[1]) as legs:\n"
        "    legs.power(True)\n"
        "    print('powered', legs.read().motor_power, sys.argv[2:])\n"
        "sys.exit(3)\n",
        encoding="utf-8",
    )
    result = run("can-twin", URL, str(script), URL, "--", "--flag")
    assert result.returncode == 3, result.stderr
    assert "powered True ['--flag']" in result.stdout
    received = re.search(r"motor twin: (\d+) frames received, (\d+) replies sent", result.stderr)
    assert received and int(received.group(1)) >= 24  # enable + exit frames of 12 motors


def test_a_failing_script_shows_its_traceback_and_exits_1(tmp_path: Path) -> None:
    script = tmp_path / "broken.py"
    script.write_text("raise RuntimeError('boom')\n", encoding="utf-8")
    result = run("can-twin", URL, str(script))
    assert result.returncode == 1
    assert "RuntimeError: boom" in result.stderr


def test_the_virtual_interface_without_a_script_is_refused_with_the_reason() -> None:
    result = run("can-twin", URL)
    assert result.returncode == 2
    assert "reaches only this process" in result.stderr


def test_bad_urls_and_missing_scripts_are_clear_errors(tmp_path: Path) -> None:
    result = run("can-twin", "can://virtual/x?robot=hb50")
    assert result.returncode == 2 and "missing model=" in result.stderr
    result = run("can-twin", URL, str(tmp_path / "none.py"))
    assert result.returncode == 2 and "no script" in result.stderr


def test_help_says_which_interfaces_work() -> None:
    result = run("can-twin", "--help")
    assert result.returncode == 0
    assert "virtual" in result.stdout and "vcan0" in result.stdout


FAULT_PROBE = """\
import sys, time
from jointbus import drivers
with drivers.open(sys.argv[1]) as legs:
    legs.power(True)
    seen = {}
    clean = -1.0
    end = time.monotonic() + float(sys.argv[2])
    while time.monotonic() < end:
        r = legs.read_joints()
        t = round(time.monotonic() - end + float(sys.argv[2]), 1)
        lost = [n for n, p in zip(legs.names, r.position) if p != p]
        seen.setdefault(tuple(lost), t)
        if not lost:
            clean = t
        status = int(r.status[1])
    print("lost", {",".join(k) or "-": v for k, v in seen.items()}, "status", status)
    print("finally lost", lost)
    print("every motor answered at", clean)
"""


def test_fault_options_drop_a_motors_replies_from_a_time_on_and_undo_it(tmp_path: Path) -> None:
    """Issue 20 item 16: the twin's fault injection was undocumented and the CLI offered none."""
    script = tmp_path / "probe.py"
    script.write_text(FAULT_PROBE, encoding="utf-8")
    result = run(
        "can-twin", URL, str(script), URL, "4.0",
        "--drop-replies", "2", "--fault-at", "1.0", "--fault-for", "1.5",
    )
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert "motor twin: fault injected: replies of CAN id 2 (fr_j1) dropped" in lines
    assert "motor twin: fault undone: replies of CAN id 2 (fr_j1) dropped" in lines
    seen = re.search(r"lost \{(.*)\} status", result.stdout)
    assert seen, result.stdout
    # every motor answered first, then fr_j1 alone was lost, then it answered again
    assert "'-': 0.0" in seen.group(1) and "'fr_j1'" in seen.group(1), result.stdout
    assert not re.search(r"'fr_j\d,", seen.group(1))  # no other motor lost
    # undone at 2.5 s: it answers again (any read after it: on a loaded host one read can miss
    # replies of other motors, as a real bus's late replies do)
    clean = re.search(r"every motor answered at ([\d.-]+)", result.stdout)
    assert clean and float(clean.group(1)) >= 2.6, result.stdout


def test_fault_options_set_an_error_byte_and_refuse_an_unknown_motor(tmp_path: Path) -> None:
    script = tmp_path / "probe.py"
    script.write_text(FAULT_PROBE, encoding="utf-8")
    result = run("can-twin", URL, str(script), URL, "0.5", "--error-code", "2=0x10")
    assert "fault injected: CAN id 2 (fr_j1) reports error byte 0x10" in result.stderr
    # A drive that reports an error is not powered up as if healthy (docs/CAN.md).
    assert result.returncode != 0, result.stdout
    assert "motor (can id 2) reports error code 0x10; power is still off" in result.stderr
    unknown = run("can-twin", URL, str(script), "--drop-replies", "40")
    assert unknown.returncode == 2
    assert "--drop-replies 40: the twin has no motor with that CAN id" in unknown.stderr
    malformed = run("can-twin", URL, str(script), "--error-code", "2:16")
    assert malformed.returncode == 2 and "expected ID=CODE" in malformed.stderr
