"""A node refuses to start while a node of the same name and namespace runs on the bus.

Real processes over real Zenoh sessions on loopback (``runtime_peer.py`` runs the other node); a
SIGKILLed predecessor (a restart) is waited for, not refused.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jointbus.bus import Bus, ZenohConfig
from jointbus.runtime import DuplicateNodeError, Node
from jointbus.runtime.namesakes import NAMESAKE_VANISH_S, live_namesakes
from support.runtime import free_port

_PEER = Path(__file__).with_name("runtime_peer.py")


def _spawn_peer(port: int, name: str) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(_PEER.parent), *filter(None, [env.get("PYTHONPATH")])])
    peer = subprocess.Popen(
        [sys.executable, str(_PEER), str(port), name],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert peer.stdout is not None
    assert peer.stdout.readline().strip() == "ready"
    return peer


def _end(peer: subprocess.Popen[str]) -> None:
    if peer.poll() is None:
        peer.kill()
    peer.wait(timeout=10.0)


def test_a_node_refuses_to_start_when_another_process_runs_its_name() -> None:
    port = free_port()
    config = ZenohConfig.loopback(port)
    with Bus(name="parent", zenoh=config) as bus:
        peer = _spawn_peer(port, "twin")
        try:
            started = time.monotonic()
            with pytest.raises(DuplicateNodeError) as caught:
                Node("twin", bus)
            refused_s = time.monotonic() - started
            err = caught.value
            assert (err.name, err.namespace) == ("twin", "hb50")
            assert len(err.others) == 1 and err.others[0].startswith("Zenoh session ")
            text = str(err)
            for part in ("'twin'", "/hb50", f"tcp/127.0.0.1:{port}", f"domain {config.domain}"):
                assert part in text, (part, text)
            # Refused whole: nothing of the second node was announced on the bus.
            assert bus.local_publishers("/hb50/heartbeat") == ()
            assert bus.local_publishers("/hb50/status") == ()
            # The name is free in another namespace, and another name is free here.
            with Node("twin", bus, namespace="arm6"), Node("other", bus):
                pass
            print(f"\nduplicate node refused after {refused_s * 1e3:.0f} ms")
            assert refused_s >= NAMESAKE_VANISH_S  # a live namesake was given the restart window
        finally:
            _end(peer)


def test_a_restarted_node_waits_for_its_killed_predecessor_instead_of_refusing() -> None:
    port = free_port()
    with Bus(name="parent", zenoh=ZenohConfig.loopback(port)) as bus:
        peer = _spawn_peer(port, "twin")
        try:
            assert live_namesakes(bus, "twin", "hb50", "/hb50/heartbeat", vanish_s=0.0)
            peer.send_signal(signal.SIGKILL)
            killed = time.monotonic()
            with Node("twin", bus) as node:  # the successor starts while the token may linger
                started_s = time.monotonic() - killed
                node.start()
                assert node.active
            print(f"\nrestarted node started {started_s * 1e3:.0f} ms after the SIGKILL")
        finally:
            _end(peer)


def test_a_node_starting_with_no_namesake_pays_one_graph_look() -> None:
    port = free_port()
    with Bus(name="parent", zenoh=ZenohConfig.loopback(port)) as bus:
        peer = _spawn_peer(port, "someone_else")
        try:
            started = time.monotonic()
            with Node("fresh", bus):
                created_s = time.monotonic() - started
            print(f"\nnode with no namesake created in {created_s * 1e3:.0f} ms (Zenoh, one peer)")
        finally:
            _end(peer)


def test_two_nodes_of_one_name_on_one_bus_are_refused_too() -> None:
    with Bus() as bus:
        first = Node("solo", bus)
        with pytest.raises(DuplicateNodeError) as caught:
            Node("solo", bus)
        assert caught.value.others == ["this process"]
        assert "in-process bus" in str(caught.value)
        assert len(bus.local_publishers("/hb50/heartbeat")) == 1  # only the first one's
        with Node("solo", bus, namespace="other"):
            pass
        first.shutdown()
        with Node("solo", bus) as again:  # the name is free once its node shut down
            again.start()
            assert again.active
