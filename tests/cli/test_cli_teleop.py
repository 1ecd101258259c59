"""``jointbus teleop``: teleop_twist_keyboard's keys → normalised velocity commands, in a real
pseudo-terminal, received over Zenoh by another process (this one)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import threading
import time

import pytest
from cli_support import cli_env, free_port, wait_until

from jointbus.bus import MAB_RT, Bus, ZenohConfig
from jointbus.cli.teleop import TeleopKeys
from jointbus.messages.geometry_msgs import Twist


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


def test_keys_follow_teleop_twist_keyboard() -> None:
    keys = TeleopKeys(linear_scale=0.5, angular_scale=0.4, release=0.5)
    keys.press("i", 0.0)
    tw = keys.twist(0.1)
    assert (tw.linear.x, tw.linear.y, tw.linear.z, tw.angular.z) == (0.5, 0.0, 1.0, 0.0)
    keys.press("u", 0.2)
    assert keys.twist(0.3).angular.z == 0.4  # forward while turning left
    keys.press("J", 0.4)
    assert (keys.twist(0.5).linear.y, keys.twist(0.5).angular.z) == (0.5, 0.0)  # strafe
    assert keys.twist(1.0).linear.y == 0.0  # released: no key for 0.5 s
    keys.press("q", 1.0)
    assert keys.linear_scale == pytest.approx(0.55)
    for _ in range(20):
        keys.press("q", 1.0)
    assert keys.linear_scale == 1.0  # never beyond the normalised range
    keys.press("b", 1.0)
    assert keys.twist(1.0).linear.z == pytest.approx(0.95)
    for _ in range(40):  # all the way down: z = 0 would mean "height not commanded"
        keys.press("b", 1.0)
    assert keys.twist(1.0).linear.z == pytest.approx(0.05)
    keys.press("i", 2.0)
    keys.press("k", 2.1)
    assert keys.twist(2.2).linear.x == 0.0


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
            assert rec.last().linear.x == 0.0 and rec.last().linear.z == 1.0  # idle: zero
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
