"""Shared helpers of the tools tests: HB50 messages with known content, polling waits.

Part of :mod:`support` (``from support.tools import ...``).
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jointbus.messages.std_msgs import Header
from jointbus.robots.hb50.messages.bridge_data import BridgeData
from jointbus.robots.hb50.messages.joint_command import JointCommand
from jointbus.tools.mcap_writer import McapChunkWriter

JOINTS = ("fr_j0", "fr_j1", "fr_j2")


def bridge_data(i: int) -> BridgeData:
    """Frame ``i``: joint k measured at ``0.01 * i + k`` rad (rounded to float32)."""
    return BridgeData(
        header=Header.at_ns(1_000_000 * i),
        joint_name=JOINTS,
        joint_position=[0.01 * i + k for k in range(len(JOINTS))],
        joint_velocity=[0.5 * k for k in range(len(JOINTS))],
        joint_effort=[0.0] * len(JOINTS),
        joint_temperature=bytes([30 + k for k in range(len(JOINTS))]),
        joint_status=[0] * len(JOINTS),
    )


def joint_command(i: int) -> JointCommand:
    """Command ``i``: joint k commanded to ``0.02 * i - k`` rad."""
    return JointCommand.hold(JOINTS, [0.02 * i - k for k in range(len(JOINTS))], kp=20.0, kd=0.5)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_until(predicate: Callable[[], bool], timeout: float = 10.0, step: float = 0.01) -> bool:
    """Poll ``predicate`` until it is true or ``timeout`` s pass; returns its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def write_mcap(path: Path, entries: list[tuple[str, Any, int]]) -> Path:
    """An MCAP file holding ``(topic, message, log time ns)`` entries, written with our writer."""
    with path.open("wb") as f:
        writer = McapChunkWriter(f, chunk_size=4096)
        schemas: dict[str, int] = {}
        channels: dict[str, int] = {}
        for seq, (topic, msg, t) in enumerate(entries, 1):
            name = msg.TYPE_NAME
            if name not in schemas:
                schemas[name] = writer.add_schema(name, msg.msgdef().encode())
            if topic not in channels:
                channels[topic] = writer.add_channel(topic, schemas[name])
            writer.add_message(channels[topic], t, t, seq, msg.to_cdr())
        writer.finish()
    return path
