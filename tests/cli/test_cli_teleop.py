"""``jointbus teleop``: teleop_twist_keyboard's keys → normalised velocity commands, in a real
pseudo-terminal, received over Zenoh by another process (this one)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import threading
import time

from jointbus.bus import MAB_RT, Bus, ZenohConfig
from jointbus.messages.geometry_msgs import Twist
from support.cli import cli_env, free_port, wait_until


class _Recorder:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.items: list[tuple[float, Twist]] = []

    def __call__(self, msg: Twist) -> None:
        with self.lock:
            self.items.append((time.monotonic(), msg))

    def since(self, t: float) -> list[Twist]:
        with self.lock:
            return [m for s, m in self.items if s >= t]

    def last(self) -> Twist:
        with self.lock:
            return self.items[-1][1]


def test_teleop_in_a_terminal_publishes_at_rate_and_zero_when_released_and_on_exit() -> None:
    port = free_port()
    rec = _Recorder()
    with Bus(name="teleop-test", zenoh=ZenohConfig(hub_port=port)) as bus:
        bus.subscribe("/hb50/velocity_command", Twist, rec, MAB_RT)
        master, slave = pty.openpty()
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jointbus.cli.main",
                "teleop",
                "--rate",
                "20",
                "--release",
                "0.5",
            ],
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=cli_env(port),
        )
        os.close(slave)
        try:
            assert wait_until(lambda: len(rec.items) > 0, timeout=15.0)
            t0 = time.monotonic()
            time.sleep(1.0)
            assert len(rec.since(t0)) >= 10  # ≥ 10 Hz (20 asked)
            assert rec.last().linear.x == 0.0 and rec.last().linear.z == 0.0  # idle: zero, z 0
            t_key = time.monotonic()
            os.write(master, b"i")
            assert wait_until(lambda: any(m.linear.x == 0.5 for m in rec.since(t_key)), 3.0)
            time.sleep(1.0)  # no key for longer than --release
            assert rec.last().linear.x == 0.0
            os.write(master, b"i")
            assert wait_until(lambda: rec.last().linear.x == 0.5, 3.0)
            t_exit = time.monotonic()
            os.write(master, b"\x03")  # Ctrl-C in a raw terminal
            proc.wait(timeout=10.0)
            time.sleep(0.3)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            os.close(master)
    assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
    after = rec.since(t_exit)
    assert after and after[-1].linear.x == 0.0 and after[-1].angular.z == 0.0
