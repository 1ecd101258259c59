"""``jointbus teleop``: teleop_twist_keyboard's keys → normalised velocity commands, in a real
pseudo-terminal (stdin, stdout and stderr on it, as in a user's terminal), received over Zenoh by
another process (this one) — decoded by a jointbus subscriber and as the raw CDR bytes a plain
Zenoh / ROS 2 peer receives.

Quitting is tested the three ways a user's Ctrl-C reaches the program: the byte 0x03 in the raw
terminal, SIGINT to the process (``kill -INT``), and a SIGINT the kernel hands to a thread other
than the main one (POSIX lets a process-directed signal land on any thread that does not block it;
``kill`` of a thread id does exactly that on Linux); SIGTERM quits the same way. Each with no
key pressed before, and after a key released well before the Ctrl-C.
"""

from __future__ import annotations

import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import zenoh

from jointbus.bus import MAB_RT, RELIABLE, Bus, ZenohConfig
from jointbus.messages.geometry_msgs import Twist
from support.bus import ros2_peer
from support.cli import cli_env, free_port, wait_until

#: The Zenoh key of every /hb50/velocity_command sample in domain 0, whatever its type hash.
_VELOCITY_KEYS = "0/hb50/velocity_command/**"
#: How long a quit may take at most (s): the zero commands (3 periods at 20 Hz) and closing the
#: bus take well under a second; the defect was "never, until a key comes".
_QUIT_WITHIN_S = 10.0


class _Recorder:
    """Every Twist received, with its arrival time (monotonic s)."""

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


class _Payloads:
    """The raw payload bytes of every sample a plain Zenoh peer receives."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.items: list[tuple[float, bytes]] = []

    def __call__(self, sample: zenoh.Sample) -> None:
        with self.lock:
            self.items.append((time.monotonic(), bytes(sample.payload.to_bytes())))

    def since(self, t: float) -> list[bytes]:
        with self.lock:
            return [p for s, p in self.items if s >= t]


class _Teleop:
    """``jointbus teleop`` running on a pseudo-terminal; the terminal's output is drained (a
    terminal shows it) and kept."""

    def __init__(self, port: int, *args: str) -> None:
        self.port = port
        self.master, slave = pty.openpty()
        self.initial_lflag = termios.tcgetattr(self.master)[3]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jointbus.cli.main", "teleop", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=cli_env(port),
            start_new_session=True,
        )
        os.close(slave)
        self._output = bytearray()
        self._lock = threading.Lock()
        self._hung_up = threading.Event()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        while not self._hung_up.is_set():
            # not a blocking read: hang_up() must be able to stop this thread before it closes
            # the master (a read in progress would keep the terminal open)
            if not select.select([self.master], [], [], 0.05)[0]:
                continue
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # EIO: every slave end closed (the process ended)
                return
            if not chunk:
                return
            with self._lock:
                self._output += chunk

    @property
    def output(self) -> str:
        with self._lock:
            return self._output.decode(errors="replace")

    def in_raw_mode(self) -> bool:
        """The terminal has echo, line editing and signal keys off (teleop reads every key)."""
        lflag = termios.tcgetattr(self.master)[3]
        return not lflag & (termios.ICANON | termios.ECHO | termios.ISIG)

    def press(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def other_thread_id(self) -> int:
        """The id of a thread of the process other than its main one."""
        tasks = sorted(int(t) for t in os.listdir(f"/proc/{self.proc.pid}/task"))
        others = [t for t in tasks if t != self.proc.pid]
        assert others, "teleop runs no thread besides its main one"
        return others[-1]

    def hang_up(self) -> None:
        """Close the terminal (its window closed): teleop's reads of it fail from now on."""
        self._hung_up.set()
        self._reader.join(timeout=5.0)
        os.close(self.master)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if not self._hung_up.is_set():
            self._hung_up.set()
            self._reader.join(timeout=5.0)
            os.close(self.master)


@contextmanager
def _teleop_on_a_bus(*args: str) -> Iterator[tuple[_Teleop, _Recorder, _Payloads]]:
    """A hub (this process's bus, subscribed to /hb50/velocity_command), a plain Zenoh peer
    subscribed to its raw samples, and ``jointbus teleop ARGS`` joined to the hub, started and
    publishing."""
    port = free_port()
    rec = _Recorder()
    raw = _Payloads()
    with Bus(name="teleop-test", zenoh=ZenohConfig(hub_port=port)) as bus:
        bus.subscribe("/hb50/velocity_command", Twist, rec, MAB_RT)
        with ros2_peer(port) as peer:
            peer.declare_subscriber(_VELOCITY_KEYS, raw)
            teleop = _Teleop(port, *args)
            try:
                assert wait_until(lambda: len(rec.items) > 0, timeout=20.0), teleop.output
                assert wait_until(teleop.in_raw_mode, timeout=5.0)
                yield teleop, rec, raw
            finally:
                teleop.close()


def _twist_values(payload: bytes) -> tuple[float, ...]:
    """linear x, y, z and angular x, y, z of a geometry_msgs/Twist in CDR (little-endian)."""
    assert payload[:4] == b"\x00\x01\x00\x00" and len(payload) == 4 + 6 * 8
    return struct.unpack("<6d", payload[4:])


def test_teleop_in_a_terminal_publishes_at_rate_and_zero_when_released_and_on_exit() -> None:
    with _teleop_on_a_bus("--rate", "20", "--release", "0.5") as (teleop, rec, _raw):
        t0 = time.monotonic()
        time.sleep(1.0)
        assert len(rec.since(t0)) >= 10  # ≥ 10 Hz (20 asked)
        assert rec.last() == Twist()  # idle: the zero command
        t_key = time.monotonic()
        teleop.press(b"i")
        assert wait_until(lambda: any(m.linear.x == 0.5 for m in rec.since(t_key)), 3.0)
        time.sleep(1.0)  # no key for longer than --release
        assert rec.last().linear.x == 0.0
        teleop.press(b"i")
        assert wait_until(lambda: rec.last().linear.x == 0.5, 3.0)
        t_exit = time.monotonic()
        teleop.press(b"\x03")  # Ctrl-C in a raw terminal, while a key is held
        teleop.proc.wait(timeout=_QUIT_WITHIN_S)
        time.sleep(0.3)
        assert teleop.proc.returncode == 0, teleop.output
    after = rec.since(t_exit)
    assert after and after[-1] == Twist()


def test_teleop_sends_linear_z_0_height_not_commanded_until_a_height_key() -> None:
    """README: ``z: 0``, what every plain ROS Twist and teleop sends, means "height not
    commanded" — checked on the bytes a plain Zenoh peer receives."""
    with _teleop_on_a_bus("--release", "0.5") as (teleop, _rec, raw):
        t_idle = time.monotonic()
        assert wait_until(lambda: len(raw.since(t_idle)) >= 5, 5.0)
        assert {_twist_values(p) for p in raw.since(t_idle)} == {(0.0,) * 6}
        t_key = time.monotonic()
        teleop.press(b"i")
        assert wait_until(lambda: any(_twist_values(p)[0] == 0.5 for p in raw.since(t_key)), 3.0)
        driving = [_twist_values(p) for p in raw.since(t_key) if _twist_values(p)[0] == 0.5]
        assert all(v == (0.5, 0.0, 0.0, 0.0, 0.0, 0.0) for v in driving)
        t_lower = time.monotonic()
        teleop.press(b"b")  # lower: now the height is commanded, 0.95 of the reference
        assert wait_until(lambda: any(_twist_values(p)[2] == 0.95 for p in raw.since(t_lower)), 3.0)
        assert "height 0.95 of the reference" in teleop.output


@pytest.mark.parametrize("keys_before", [b"", b"i"], ids=["no-key", "key-then-pause"])
@pytest.mark.parametrize(
    "quit_by", ["ctrl-c-byte", "sigint", "sigint-on-another-thread", "sigterm"]
)
def test_ctrl_c_quits_stops_publishing_and_sends_the_zero_command(
    quit_by: str, keys_before: bytes
) -> None:
    """The user's reproduction: in a terminal, press a key (or none), pause longer than the
    release time, Ctrl-C. teleop must quit at once with status 0, its last command the zero
    command, and the terminal restored."""
    with _teleop_on_a_bus("--release", "0.3") as (teleop, rec, _raw):
        if keys_before:
            t_key = time.monotonic()
            teleop.press(keys_before)
            assert wait_until(lambda: any(m.linear.x == 0.5 for m in rec.since(t_key)), 3.0)
        time.sleep(1.0)  # the key released, the zero command flowing
        t_quit = time.monotonic()
        if quit_by == "ctrl-c-byte":
            teleop.press(b"\x03")
        elif quit_by == "sigint":
            os.kill(teleop.proc.pid, signal.SIGINT)
        elif quit_by == "sigterm":
            os.kill(teleop.proc.pid, signal.SIGTERM)
        else:
            os.kill(teleop.other_thread_id(), signal.SIGINT)
        try:
            teleop.proc.wait(timeout=_QUIT_WITHIN_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"teleop still runs {_QUIT_WITHIN_S} s after {quit_by}: {teleop.output}")
        assert teleop.proc.returncode == 0, teleop.output
        assert "Traceback" not in teleop.output
        time.sleep(0.3)
        assert rec.since(t_quit) and rec.since(t_quit)[-1] == Twist()  # the zero command last
        lflag = termios.tcgetattr(teleop.master)[3]
        assert lflag == teleop.initial_lflag  # the terminal as teleop found it


def test_teleop_refuses_a_stdin_that_is_not_a_terminal() -> None:
    port = free_port()
    proc = subprocess.run(
        [sys.executable, "-m", "jointbus.cli.main", "teleop"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=cli_env(port),
        timeout=30.0,
        check=False,
    )
    assert proc.returncode == 1
    assert "teleop reads keys from a terminal; stdin is not one" in proc.stderr


def test_a_closed_terminal_quits_with_the_zero_command() -> None:
    """The terminal window closed under teleop (its reads fail): it quits as on Ctrl-C."""
    with _teleop_on_a_bus("--release", "0.3") as (teleop, rec, _raw):
        t_key = time.monotonic()
        teleop.press(b"i")
        assert wait_until(lambda: any(m.linear.x == 0.5 for m in rec.since(t_key)), 3.0)
        t_close = time.monotonic()
        teleop.hang_up()
        try:
            teleop.proc.wait(timeout=_QUIT_WITHIN_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"teleop still runs {_QUIT_WITHIN_S} s after its terminal closed")
        time.sleep(0.3)
        assert teleop.proc.returncode == 0
        assert rec.since(t_close) and rec.since(t_close)[-1] == Twist()


def test_teleop_shows_the_command_it_sends_and_no_warning_about_another_subscriber() -> None:
    """Issue 20, item 17: teleop showed no current command (speed, turn, height), and a QoS
    warning about an unrelated (reliable) subscriber of the velocity command was printed into
    its raw terminal."""
    with _teleop_on_a_bus("--release", "0.5") as (teleop, rec, _raw):
        assert wait_until(lambda: "sending: fwd +0.00" in teleop.output, 5.0), teleop.output
        assert "(speed 0.50, turn 0.50, height as is)" in teleop.output
        with Bus(name="other", zenoh=ZenohConfig(hub_port=teleop.port)) as other:
            # ros2 topic echo's default: reliable, which a best-effort publisher cannot serve
            other.subscribe("/hb50/velocity_command", Twist, lambda _m: None, RELIABLE)
            time.sleep(2.0)
        t_key = time.monotonic()
        teleop.press(b"i")
        assert wait_until(lambda: any(m.linear.x == 0.5 for m in rec.since(t_key)), 3.0)
        assert wait_until(lambda: "sending: fwd +0.50" in teleop.output, 3.0), teleop.output
        teleop.press(b"q")  # faster: both scales x 1.1
        teleop.press(b"t")  # the first height key: 1.0 of the reference
        assert wait_until(lambda: "height 1.00)" in teleop.output, 3.0), teleop.output
        assert "(speed 0.55, turn 0.55, height 1.00)" in teleop.output
        assert "incompatible QoS" not in teleop.output, teleop.output
        assert "Traceback" not in teleop.output
