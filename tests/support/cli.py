"""Shared helpers of the CLI tests, and the talker process they run the CLI against.

Part of :mod:`support` (``from support.cli import ...``).

As a script, ``python tests/support/cli.py HUB_PORT``: the *talker*, a jointbus program as a user
writes one. It joins Zenoh with the default scheme (``ZenohConfig(hub_port=HUB_PORT)``: it is the
first process, so it becomes the hub) and runs node ``cli_talker`` (1 Hz heartbeat) publishing
``Status`` on :data:`TALK_TOPIC` at 50 Hz, prints ``ready`` and lives until stdin closes or it is
killed. The CLI processes reach it with nothing but ``JOINTBUS_HUB_PORT=HUB_PORT`` — the same "no
flags" scheme ``make demo`` and ``jointbus topic echo`` use on the real port 7447.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

# As a script (the talker) this file's folder is on sys.path, not tests/: put it there for the
# shared support package.
_TESTS = str(Path(__file__).resolve().parents[1])
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

from support.bus import free_port, wait_until  # noqa: E402

#: The talker's Status topic and publishing rate (Hz).
TALK_TOPIC = "/cli_test/status_feed"
TALK_RATE_HZ = 50.0
#: The talker's node name.
TALKER_NODE = "cli_talker"

_SRC = str(Path(__file__).resolve().parents[2] / "src")


def cli_env(hub_port: int) -> dict[str, str]:
    """The environment of a CLI process joining the talker's hub (and nothing else)."""
    env = dict(os.environ)
    env["JOINTBUS_HUB_PORT"] = str(hub_port)
    env["PYTHONPATH"] = os.pathsep.join([_SRC, *filter(None, [env.get("PYTHONPATH")])])
    env.pop("JOINTBUS_CONNECT", None)
    return env


def run_cli(
    hub_port: int, *args: str, timeout: float = 30.0, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``jointbus ARGS...`` as a user would (a new Python process) and wait for it."""
    return subprocess.run(
        [sys.executable, "-m", "jointbus.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=cli_env(hub_port),
        input=stdin,
        check=False,
    )


def start_cli(hub_port: int, *args: str) -> subprocess.Popen[str]:
    """Start ``jointbus ARGS...`` in the background (stdout/stderr piped, line buffered)."""
    return subprocess.Popen(
        [sys.executable, "-u", "-m", "jointbus.cli.main", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(hub_port),
    )


def start_talker(hub_port: int) -> subprocess.Popen[str]:
    """Start the talker (see the module docstring) and wait for its ``ready`` line."""
    proc = subprocess.Popen(
        [sys.executable, "-u", __file__, str(hub_port)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=cli_env(hub_port),
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if line != "ready":
        proc.kill()
        proc.wait()
        raise RuntimeError(f"talker did not start: {line!r}")
    return proc


def stop(proc: subprocess.Popen[str]) -> None:
    """End a child process (politely through stdin, else killed) and reap it."""
    if proc.poll() is None and proc.stdin is not None:
        try:
            proc.stdin.close()
            proc.wait(timeout=5.0)
        except (subprocess.TimeoutExpired, OSError):
            pass
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def _talk(hub_port: int) -> int:
    from jointbus.bus import RELIABLE, Bus, ZenohConfig
    from jointbus.robots.hb50.messages import Status
    from jointbus.runtime import Node

    with (
        Bus(name="talker", zenoh=ZenohConfig(hub_port=hub_port)) as bus,
        Node(TALKER_NODE, bus) as node,
    ):
        pub = node.create_publisher(TALK_TOPIC, Status, RELIABLE)
        node.start()
        stop_event = threading.Event()

        def talk() -> None:
            period = 1.0 / TALK_RATE_HZ
            deadline = time.monotonic()
            count = 0
            while not stop_event.is_set():
                count += 1
                pub.publish(Status.warn(TALKER_NODE, f"tick {count}", b"\x01\x02"))
                deadline += period
                stop_event.wait(max(0.0, deadline - time.monotonic()))

        thread = threading.Thread(target=talk, daemon=True)
        thread.start()
        print("ready", flush=True)
        sys.stdin.read()  # the parent closes stdin (clean end) or kills us
        stop_event.set()
        thread.join()
    return 0


__all__ = [
    "TALKER_NODE",
    "TALK_RATE_HZ",
    "TALK_TOPIC",
    "cli_env",
    "free_port",
    "run_cli",
    "start_cli",
    "start_talker",
    "stop",
    "wait_until",
]

if __name__ == "__main__":
    sys.exit(_talk(int(sys.argv[1])))
