"""The heartbeat: one OK Status per period from construction to shutdown, then a farewell."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from jointbus.bus import RELIABLE, Bus
from jointbus.robots.hb50.messages import Level, Status
from jointbus.runtime import HEARTBEAT_ALIVE, HEARTBEAT_QOS, HEARTBEAT_SHUTDOWN, Node
from support.runtime import SteppedWorld, wait_until


@pytest.fixture
def world() -> Iterator[SteppedWorld]:
    with Bus(name="test") as bus:
        world = SteppedWorld(bus)
        yield world
        world.close()


def listen(bus: Bus, topic: str = "/hb50/heartbeat") -> list[Status]:
    got: list[Status] = []
    bus.subscribe(topic, Status, got.append, RELIABLE.with_(depth=1000), realtime=True)
    return got


def test_one_heartbeat_at_once_then_one_per_period(world: SteppedWorld) -> None:
    got = listen(world.bus)
    world.node("bridge")
    world.run_due()
    assert len(got) == 1  # at once: a monitor sees a new node without waiting a period
    world.advance(10.0)
    assert len(got) == 11
    assert {(m.level, m.reporting_node, m.status) for m in got} == {
        (Level.OK, "bridge", HEARTBEAT_ALIVE)
    }


def test_period_is_configurable(world: SteppedWorld) -> None:
    got = listen(world.bus)
    world.node("fast", heartbeat_period_s=0.25)
    world.advance(2.0)
    assert len(got) == 9


def test_heartbeat_carries_the_lifecycle_state_and_continues_while_inactive(
    world: SteppedWorld,
) -> None:
    got = listen(world.bus)
    node = world.node("ctl")
    world.advance(1.0)
    node.start()
    world.advance(1.0)
    node.deactivate()
    world.advance(1.0)
    assert [m.data for m in got] == [b"unconfigured", b"unconfigured", b"active", b"inactive"]


def test_shutdown_sends_a_farewell_and_stops(world: SteppedWorld) -> None:
    got = listen(world.bus)
    node = world.node("ctl")
    world.advance(1.0)
    node.shutdown()
    world.advance(5.0)
    assert [m.status for m in got] == [HEARTBEAT_ALIVE, HEARTBEAT_ALIVE, HEARTBEAT_SHUTDOWN]
    assert not node.heartbeat.running


def test_namespace_and_qos() -> None:
    with Bus() as bus:
        got = listen(bus, "/robot2/heartbeat")
        node = Node("n", bus, namespace="robot2")
        try:
            assert wait_until(lambda: len(got) >= 1)
            pub = bus.local_publishers("/robot2/heartbeat")[0]
            assert pub.qos == HEARTBEAT_QOS == RELIABLE  # the seed: heartbeat is Reliable
            assert pub.node == "n"
        finally:
            node.shutdown()


def test_real_timer_thread_keeps_beating() -> None:
    with Bus() as bus:
        got = listen(bus)
        node = Node("n", bus, heartbeat_period_s=0.02)
        try:
            assert wait_until(lambda: len(got) >= 5)
        finally:
            node.shutdown()
        assert got[-1].status == HEARTBEAT_SHUTDOWN
