"""One node name, one node — on DDS too: a second node of the same name and namespace is refused,
naming the DDS participant that runs it; a SIGKILLed predecessor does not block a restart."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import pytest

from jointbus.bus import Bus, DdsConfig
from jointbus.runtime import Node
from jointbus.runtime.node import DuplicateNodeError
from support.dds_peer import free_domain


def test_a_second_node_of_the_same_name_is_refused_on_dds() -> None:
    domain = free_domain()
    config = DdsConfig(domain_id=domain)
    with Bus(dds=config) as first, Bus(dds=config) as second:
        running = Node("bridge_node", first, namespace="hb50")
        running.start()
        try:
            with pytest.raises(DuplicateNodeError, match=r"DDS participant [0-9a-f]{32}"):
                Node("bridge_node", second, namespace="hb50")
            Node("bridge_node", second, namespace="other").shutdown()  # another namespace: fine
        finally:
            running.shutdown()


def test_a_sigkilled_namesake_does_not_block_a_restart() -> None:
    domain = free_domain()
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import time
            from jointbus.bus import Bus, DdsConfig
            from jointbus.runtime import Node
            bus = Bus(dds=DdsConfig(domain_id={domain}))
            Node("bridge_node", bus, namespace="hb50").start()
            print("up", flush=True)
            time.sleep(60)
        """)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "up"
        with Bus(dds=DdsConfig(domain_id=domain)) as bus:
            with pytest.raises(DuplicateNodeError):
                Node("bridge_node", bus, namespace="hb50")
            child.send_signal(signal.SIGKILL)
            child.wait()
            started = time.monotonic()
            node = Node("bridge_node", bus, namespace="hb50")  # waits out the dead one's lease
            node.shutdown()
            assert time.monotonic() - started < 2.5
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
