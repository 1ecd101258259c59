"""Bench: how fast the ``jointbus`` command starts — ``--help``, a latched e-stop, a first command.

Each row is a fresh process, timed as a user meets it, against the same run's anchor: a bare
``python -c pass`` of the same interpreter (Python's own start-up, the floor of any command).
Values are medians of several runs; CPU is the child's user + system time (``os.wait4``), wall
the time from ``exec`` to exit (or to the event).

- **``jointbus --help``** (CPU and wall; goal ≤ 0.3 s of CPU on a quiet host — issue 20 item 11
  measured 1.4–2.0 s): the command table only, no command module imported.
- **``jointbus estop`` latched** (wall and CPU; goal ≤ 0.5 s wall on a quiet host — the issue
  measured 3.5–3.9 s under load): start to exit of ``jointbus estop --namespace arm6`` against
  ``jointbus serve sim://arm6`` in its own process, i.e. until the array node's ACK (motor power
  off, brakes on) is printed. Each e-stop is reset (untimed) before the next.
- **``jointbus topic pub --once`` first message** (wall, information): from starting
  ``jointbus topic pub /bench/cli/cmd geometry_msgs/msg/Twist '{linear: {x: 0.5}}' --once`` to
  the message arriving at a subscriber in this process — the gap a script leaves between two
  velocity segments it sends with two ``topic pub`` commands (the robot stops after 0.5 s
  without a command).

Every child runs with Python's bytecode cache as an installation has it: one untimed warm-up run
of each command first, with writing ``.pyc`` files allowed (``PYTHONDONTWRITEBYTECODE`` unset for
the children), so no timed run compiles jointbus's sources.

The goals are stated for a quiet host; on this shared 2-vCPU VM the load average is written
beside every run (``bench/results/latest.machine.json``), and the ratios to the anchor are the
figures to compare between runs.

Run: ``python -m bench.run --only cli`` (``--full`` for more repetitions).
"""

from __future__ import annotations

import os
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

#: Goals of issue 20, item 11, on a quiet host.
HELP_CPU_GOAL_S = 0.3
ESTOP_WALL_GOAL_S = 0.5

_JOINTBUS = shutil.which("jointbus", path=str(Path(sys.executable).parent)) or "jointbus"
#: The children's environment: with the bytecode cache (see the module docstring).
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _timed(argv: list[str]) -> tuple[float, float, int]:
    """``(wall s, CPU s, exit status)`` of one run of ``argv``, output discarded."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_ENV)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, proc.returncode


def _medians(argv: list[str], n: int) -> tuple[float, float]:
    _timed(argv)  # warm-up: the bytecode cache
    walls, cpus = [], []
    for _ in range(n):
        wall, cpu, code = _timed(argv)
        if code != 0:
            raise RuntimeError(f"{' '.join(argv)} exited {code}")
        walls.append(wall)
        cpus.append(cpu)
    return statistics.median(walls), statistics.median(cpus)


def _row(
    metric: str,
    value: float,
    anchor_value: float,
    goal: float | None = None,
    what: str = "wall",
) -> dict[str, Any]:
    return {
        "metric": metric,
        "value": round(value, 3),
        "unit": f"s {what}",
        "anchor": f"python -c pass ({what})",
        "anchor_value": round(anchor_value, 3),
        "ratio": round(value / anchor_value, 1) if anchor_value > 0 else None,
        "goal": None if goal is None else f"<= {goal:g} s {what} (quiet host)",
        "pass": None if goal is None else value <= goal,
    }


class _ServedArm:
    """``jointbus serve sim://arm6`` on a free hub port, in its own process."""

    def __init__(self) -> None:
        self.port = _free_port()
        self.proc = subprocess.Popen(
            [_JOINTBUS, "serve", "sim://arm6?noise=false", "--hub-port", str(self.port)],
            env=_ENV,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("serving"):
            self.close()
            raise RuntimeError(f"jointbus serve did not start: {line!r}")

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _estops(n: int) -> tuple[float, float]:
    """Median (wall, CPU) of ``jointbus estop`` until the served arm's ACK."""
    arm = _ServedArm()
    try:
        where = ["--namespace", "arm6", "--hub-port", str(arm.port)]
        _timed([_JOINTBUS, "estop", *where])  # warm-up: the bytecode cache
        _timed([_JOINTBUS, "estop", "--reset", *where])
        walls, cpus = [], []
        for _ in range(n):
            wall, cpu, code = _timed([_JOINTBUS, "estop", *where])
            if code != 0:
                raise RuntimeError(f"jointbus estop exited {code}")
            walls.append(wall)
            cpus.append(cpu)
            _timed([_JOINTBUS, "estop", "--reset", *where])
        return statistics.median(walls), statistics.median(cpus)
    finally:
        arm.close()


def _first_messages(n: int) -> float:
    """Median wall time from starting ``topic pub --once`` to its message arriving here."""
    from jointbus.bus import RELIABLE, Bus, ZenohConfig
    from jointbus.messages.geometry_msgs import Twist

    port = _free_port()
    arrived = threading.Event()
    times = []
    with Bus(name="bench-cli", zenoh=ZenohConfig(hub_port=port)) as bus:  # the hub
        bus.subscribe("/bench/cli/cmd", Twist, lambda _m: arrived.set(), RELIABLE, realtime=True)
        argv = [
            _JOINTBUS, "topic", "pub", "/bench/cli/cmd", "geometry_msgs/msg/Twist",
            "{linear: {x: 0.5}}", "--once", "--hub-port", str(port),
        ]  # fmt: skip
        for _ in range(n + 1):  # the first: warm-up (the bytecode cache), not counted
            arrived.clear()
            start = time.perf_counter()
            proc = subprocess.Popen(
                argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_ENV
            )
            if not arrived.wait(30.0):
                proc.kill()
                raise RuntimeError("topic pub --once: no message within 30 s")
            times.append(time.perf_counter() - start)
            proc.wait(timeout=30)
    return statistics.median(times[1:])


def run(quick: bool) -> list[dict[str, Any]]:
    """Measure and return the rows (see the module docstring)."""
    n = 5 if quick else 15
    anchor_wall, anchor_cpu = _medians([sys.executable, "-c", "pass"], n)
    help_wall, help_cpu = _medians([_JOINTBUS, "--help"], n)
    estop_help_wall, estop_help_cpu = _medians([_JOINTBUS, "estop", "--help"], n)
    estop_wall, estop_cpu = _estops(n)
    pub_wall = _first_messages(n)
    return [
        _row("cli.help.cpu", help_cpu, anchor_cpu, HELP_CPU_GOAL_S, "CPU"),
        _row("cli.help.wall", help_wall, anchor_wall),
        _row("cli.estop_help.cpu", estop_help_cpu, anchor_cpu, what="CPU"),
        _row("cli.estop_help.wall", estop_help_wall, anchor_wall),
        _row("cli.estop.latched.wall", estop_wall, anchor_wall, ESTOP_WALL_GOAL_S),
        _row("cli.estop.latched.cpu", estop_cpu, anchor_cpu, what="CPU"),
        _row("cli.topic_pub_once.first_message.wall", pub_wall, anchor_wall),
    ]


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv):
        print(row)
