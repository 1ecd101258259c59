"""Shared helpers of the bus tests: small test-local message types, free ports, polling waits.

Part of :mod:`support` (``from support.bus import free_port``); ``tests/bus/bus_peer.py`` imports it
in a child process too.
"""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import ClassVar

import zenoh

from jointbus.codec.wire import Float64, Int64, String
from jointbus.messages.base import Message


@dataclass(frozen=True, slots=True)
class Count(Message):
    """A counter with a label: enough to check order, identity and content across the bus."""

    TYPE_NAME: ClassVar[str] = "jointbus_test/msg/Count"
    value: Int64 = 0
    label: String = ""


@dataclass(frozen=True, slots=True)
class Reading(Message):
    """Another type, to check that a topic refuses a second type."""

    TYPE_NAME: ClassVar[str] = "jointbus_test/msg/Reading"
    x: Float64 = 0.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def ros2_peer(port: int, *, timestamping: bool = False) -> Iterator[zenoh.Session]:
    """A plain Zenoh peer configured as rmw_zenoh configures a ROS 2 node's session (peer mode,
    multicast scouting off), connected to the jointbus session listening on ``port``."""
    config = zenoh.Config()
    config.insert_json5("mode", '"peer"')
    config.insert_json5("scouting/multicast/enabled", "false")
    if timestamping:
        config.insert_json5("timestamping/enabled", "true")
    config.insert_json5("listen/endpoints", '["tcp/127.0.0.1:0"]')
    config.insert_json5("connect/endpoints", f'["tcp/127.0.0.1:{port}"]')
    session = zenoh.open(config)
    try:
        yield session
    finally:
        session.close()  # type: ignore[no-untyped-call]


def wait_until(predicate: Callable[[], bool], timeout: float = 5.0, step: float = 0.005) -> bool:
    """Poll ``predicate`` until it is true or ``timeout`` s pass; returns its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()
