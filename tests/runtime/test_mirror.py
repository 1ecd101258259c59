"""Mirror: the newest fast message republished at the lower rate, only when new, with its QoS."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import pytest

from jointbus.bus import MAB_RT, RELIABLE, Bus, QosIncompatibleEvent
from jointbus.codec.wire import Int64
from jointbus.messages.base import Message
from jointbus.runtime import Mirror, MirrorConfigError, Node
from support.runtime import SteppedWorld, wait_until


@dataclass(frozen=True, slots=True)
class Sample(Message):
    """A numbered sample (test-local message type)."""

    TYPE_NAME: ClassVar[str] = "jointbus_test/msg/Sample"
    seq: Int64 = 0


@pytest.fixture
def world() -> Iterator[SteppedWorld]:
    with Bus(name="test") as bus:
        world = SteppedWorld(bus)
        yield world
        world.close()


def test_decimates_to_the_newest_message_per_period(world: SteppedWorld) -> None:
    node = world.node("bridge")
    mirror = Mirror(node, "/hb50/fast", Sample, "/hb50/fast_10hz", rate_hz=10)
    node.start()
    fast = world.bus.publisher("/hb50/fast", Sample, MAB_RT)
    slow: list[Sample] = []
    world.bus.subscribe("/hb50/fast_10hz", Sample, slow.append, RELIABLE, realtime=True)
    seq = 0
    for _ in range(10):  # one second of a 500 Hz source, in 10 ms steps
        for _ in range(50):
            fast.publish(Sample(seq))
            seq += 1
            if seq % 5 == 0:
                world.advance(0.01)
    assert [m.seq for m in slow] == [49, 99, 149, 199, 249, 299, 349, 399, 449, 499]
    assert (mirror.received, mirror.republished) == (500, 10)


def test_a_silent_source_gives_a_silent_mirror(world: SteppedWorld) -> None:
    node = world.node("bridge")
    Mirror(node, "fast", Sample, "fast_10hz")
    node.start()
    fast = world.bus.publisher("/hb50/fast", Sample, MAB_RT)
    slow: list[Sample] = []
    world.bus.subscribe("/hb50/fast_10hz", Sample, slow.append, realtime=True)
    world.advance(1.0)
    assert slow == []
    fast.publish(Sample(1))
    world.advance(1.0)
    assert [m.seq for m in slow] == [1]  # once, not ten times
    same = Sample(2)
    fast.publish(same)
    world.advance(0.1)
    fast.publish(same)  # the same object again is still a new arrival
    world.advance(0.1)
    assert [m.seq for m in slow] == [1, 2, 2]


def test_mirror_offers_reliable_while_the_source_is_best_effort(world: SteppedWorld) -> None:
    node = world.node("bridge")
    mirror = Mirror(node, "/hb50/fast", Sample, "/hb50/fast_10hz")
    fast = world.bus.publisher("/hb50/fast", Sample, MAB_RT)
    assert mirror.publisher.publisher.qos == RELIABLE
    assert mirror.subscription.subscriber.qos == MAB_RT
    # A reliable subscriber cannot be served by the best-effort source, only by the mirror.
    events: list[object] = []
    world.bus.subscribe("/hb50/fast", Sample, None, RELIABLE, on_event=events.append)
    world.bus.subscribe("/hb50/fast_10hz", Sample, None, RELIABLE, on_event=events.append)
    assert [type(e) for e in events] == [QosIncompatibleEvent]
    assert fast.subscriber_count == 1  # only the mirror's


def test_the_mirror_stops_with_its_node_and_resumes(world: SteppedWorld) -> None:
    node = world.node("bridge")
    Mirror(node, "/hb50/fast", Sample, "/hb50/fast_10hz")
    fast = world.bus.publisher("/hb50/fast", Sample, MAB_RT)
    slow: list[Sample] = []
    world.bus.subscribe("/hb50/fast_10hz", Sample, slow.append, realtime=True)
    fast.publish(Sample(1))
    world.advance(0.5)
    assert slow == []  # not active yet
    node.start()
    fast.publish(Sample(2))
    world.advance(0.1)
    node.deactivate()
    fast.publish(Sample(3))
    world.advance(0.5)
    node.activate()
    fast.publish(Sample(4))
    world.advance(0.1)
    assert [m.seq for m in slow] == [2, 4]


def test_close_undeclares_both_endpoints(world: SteppedWorld) -> None:
    node = world.node("bridge")
    mirror = Mirror(node, "/hb50/fast", Sample, "/hb50/fast_10hz")
    mirror.close()
    assert world.bus.local_subscribers("/hb50/fast") == ()
    assert world.bus.local_publishers("/hb50/fast_10hz") == ()


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"rate_hz": 0}, "rate_hz"),
        ({"rate_hz": float("nan")}, "rate_hz"),
        ({"rate_hz": True}, "rate_hz"),
        ({"dst_topic": "/hb50/fast"}, "dst_topic"),
    ],
)
def test_invalid_configuration_is_refused(
    world: SteppedWorld, kwargs: dict[str, object], field: str
) -> None:
    node = world.node("bridge")
    args: dict[str, object] = {"dst_topic": "/hb50/fast_10hz", **kwargs}
    with pytest.raises(MirrorConfigError) as info:
        Mirror(node, "/hb50/fast", Sample, **args)  # type: ignore[arg-type]
    assert info.value.field == field
    names = {t.name for t in world.bus.topics()}
    assert not names & {"/hb50/fast", "/hb50/fast_10hz"}  # nothing declared


def test_mirror_on_real_threads() -> None:
    with Bus() as bus, Node("bridge", bus) as node:
        Mirror(node, "/hb50/fast", Sample, "/hb50/fast_10hz", rate_hz=50)
        node.start()
        fast = bus.publisher("/hb50/fast", Sample, MAB_RT)
        slow: list[Sample] = []
        bus.subscribe("/hb50/fast_10hz", Sample, slow.append)
        seq = [0]

        def more() -> bool:
            seq[0] += 1
            fast.publish(Sample(seq[0]))
            return len(slow) >= 3

        assert wait_until(more, step=0.002)
        assert [m.seq for m in slow] == sorted(
            {m.seq for m in slow}
        )  # newest, in order, no repeats
