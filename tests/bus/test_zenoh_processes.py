"""Two real processes over Zenoh on loopback: publish/subscribe both ways, and discovery."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from jointbus.bus import RELIABLE, Bus, ZenohConfig
from support.bus import Count, free_port, wait_until

_PEER = Path(__file__).with_name("bus_peer.py")


def _spawn(*args: str) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(_PEER.parent), *filter(None, [env.get("PYTHONPATH")])])
    return subprocess.Popen(
        [sys.executable, str(_PEER), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )


@pytest.fixture
def listening_bus() -> Iterator[tuple[Bus, int]]:
    port = free_port()
    bus = Bus(name="parent", zenoh=ZenohConfig.loopback(port))
    yield bus, port
    bus.close()


def test_messages_and_discovery_from_another_process(listening_bus: tuple[Bus, int]) -> None:
    bus, port = listening_bus
    got: list[Count] = []
    bus.subscribe("/hb50/peer_data", Count, got.append, RELIABLE.with_(depth=1000))
    peer = _spawn("talk", str(port), "/hb50/peer_data", "50")
    try:
        assert peer.stdout is not None
        assert wait_until(lambda: len(got) == 50, timeout=20.0)
        assert [m.value for m in got] == list(range(50))
        assert got[0].label == "from peer"
        topics = {t.name: t for t in bus.discover(1.0)}
        info = topics["/hb50/peer_data"]
        assert info.type_name == "jointbus_test/msg/Count"
        remote = [p for p in info.publishers if not p.local]
        assert [(p.node, p.qos) for p in remote] == [("peer_talker", RELIABLE)]
        sub = bus.local_subscribers("/hb50/peer_data")[0]
        assert sub.stats().lost == 0
    finally:
        if peer.stdin is not None:
            peer.stdin.close()
        assert peer.wait(timeout=20.0) == 0


def test_messages_to_another_process(listening_bus: tuple[Bus, int]) -> None:
    bus, port = listening_bus
    pub = bus.publisher("/hb50/cmd", Count, RELIABLE)
    peer = _spawn("listen", str(port), "/hb50/cmd", "30")
    try:
        assert peer.stdout is not None
        assert peer.stdout.readline().strip() == "ready"
        assert wait_until(lambda: pub.remote_matched, timeout=20.0)
        for i in range(30):
            pub.publish(Count(i))
        out, _ = peer.communicate(timeout=20.0)
        assert json.loads(out.strip().splitlines()[-1]) == list(range(30))
    finally:
        if peer.poll() is None:
            peer.kill()
            peer.wait()
