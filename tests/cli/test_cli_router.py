"""``jointbus router``: a Zenoh router from the package that jointbus processes and rmw_zenoh-style
sessions join (issue 20, item 23: neither ``zenohd`` nor ``rmw_zenohd`` installs from PyPI)."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import zenoh

from jointbus.bus import RELIABLE, Bus, ZenohConfig
from jointbus.messages.std_msgs import String
from support.bus import ros2_peer, wait_until
from support.cli import cli_env, free_port, run_cli


class _Lines:
    """The lines of a child's stderr, read as they come (a thread)."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(proc,), daemon=True)
        self._thread.start()

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            self.lines.append(line)

    def text(self) -> str:
        self._thread.join(timeout=10.0)
        return "".join(self.lines)


@contextmanager
def _router(port: int, *args: str) -> Iterator[subprocess.Popen[str]]:
    """``jointbus router --port PORT ARGS``, started as a script's background job would start it
    (SIGINT inherited ignored), and its ``listening`` line read."""
    proc = subprocess.Popen(
        [sys.executable, "-u", "-m", "jointbus.cli.main", "router", "--port", str(port), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(port),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),  # noqa: PLW1509
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith(f"Zenoh router listening on tcp/127.0.0.1:{port} "), line
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10.0)


def test_jointbus_processes_and_a_ros2_session_join_the_router_and_talk_through_it() -> None:
    port = free_port()
    with _router(port) as router:
        stderr = _Lines(router)
        with (
            Bus(name="talker", zenoh=ZenohConfig(hub_port=port)) as talker,
            Bus(name="listener", zenoh=ZenohConfig(hub_port=port)) as listener,
        ):
            for bus in (talker, listener):
                assert bus.zenoh is not None
                # The hub port was the router's: each process joined it (and says so).
                assert "is taken by a Zenoh router" in bus.zenoh.joined(), bus.zenoh.joined()
            heard: list[str] = []
            listener.subscribe("/router_test/chatter", String, lambda m: heard.append(m.data))
            pub = talker.publisher("/router_test/chatter", String, RELIABLE, node="talker")
            raw: list[bytes] = []
            lock = threading.Lock()

            def on_sample(sample: zenoh.Sample) -> None:
                with lock:
                    raw.append(bytes(sample.payload.to_bytes()))

            with ros2_peer(port) as ros:  # rmw_zenoh's session settings, linked to the router
                ros.declare_subscriber("0/router_test/chatter/**", on_sample)

                def both_hear() -> bool:  # until both subscriptions have propagated
                    pub.publish(String("ping"))
                    with lock:
                        return bool(raw) and bool(heard)

                assert wait_until(both_hear, 10.0, step=0.05), (heard, raw)
                for i in range(5):
                    pub.publish(String(f"hello {i}"))
                wanted = [f"hello {i}" for i in range(5)]
                assert wait_until(lambda: heard[-5:] == wanted and len(raw) >= 6, 10.0)
                # the router says who is linked to it (polled twice a second)
                assert wait_until(
                    lambda: any(" sessions: 3 peers" in line for line in stderr.lines), 10.0
                ), stderr.lines
        with lock:
            assert [String.from_cdr(p).data for p in raw[-5:]] == wanted
        router.send_signal(signal.SIGINT)  # inherited ignored: handled explicitly
        router.wait(timeout=20.0)
        err = stderr.text()
    assert router.returncode == 0, err
    assert err.rstrip().endswith("router stopped")


def test_a_second_router_on_a_taken_port_is_refused_with_the_way_out() -> None:
    port = free_port()
    with _router(port):
        second = run_cli(port, "router", "--port", str(port), "--duration", "1")
    assert second.returncode == 1
    assert second.stderr.startswith(f"error: cannot listen on tcp/127.0.0.1:{port}")
    assert "--port N" in second.stderr


def test_a_bad_endpoint_is_refused_before_anything_opens() -> None:
    done = run_cli(free_port(), "router", "--connect", "192.168.1.10:7447", "--duration", "1")
    assert done.returncode == 1
    assert "is not a Zenoh locator" in done.stderr


@pytest.mark.parametrize("robot", ["arm6"])
def test_the_demo_says_in_its_first_lines_that_it_joined_a_router(robot: str) -> None:
    port = free_port()
    with _router(port):
        demo = run_cli(
            port, "demo", "--robot", robot, "--headless", "--duration", "1", timeout=120.0
        )
    assert demo.returncode == 0, demo.stderr
    first = demo.stderr.splitlines()[:3]
    assert any(
        line.startswith(f"jointbus: Zenoh: hub port {port} is taken by a Zenoh router")
        for line in first
    ), demo.stderr
