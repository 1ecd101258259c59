"""The in-process bus: delivery, types, QoS semantics (depth, drops, latching, deadline, lifespan,
incompatible pairs), polling, realtime subscribers and clean shutdown."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator

import pytest

from jointbus.bus import (
    LATCHED,
    MAB_RT,
    RELIABLE,
    Bus,
    BusClosedError,
    BusError,
    DeadlineMissedEvent,
    ManualClock,
    MessagesLostEvent,
    QosError,
    QosEvent,
    QosIncompatibleEvent,
    QosProfile,
    Reliability,
    TopicNameError,
    TopicTypeError,
)
from support.bus import Count, Reading, free_port, wait_until


@pytest.fixture
def bus() -> Iterator[Bus]:
    created = Bus(name="test")
    yield created
    created.close()


def test_every_subscriber_gets_the_same_object_off_the_publisher_thread(bus: Bus) -> None:
    seen: list[tuple[Count, str]] = []
    lock = threading.Lock()

    def record(msg: Count) -> None:
        with lock:
            seen.append((msg, threading.current_thread().name))

    bus.subscribe("/hb50/x", Count, record)
    bus.subscribe("/hb50/x", Count, record)
    pub = bus.publisher("/hb50/x", Count)
    msg = Count(7, "seven")
    pub.publish(msg)
    assert wait_until(lambda: len(seen) == 2)
    assert all(got is msg for got, _ in seen)
    assert all(name != threading.current_thread().name for _, name in seen)


def test_realtime_subscriber_runs_inside_publish(bus: Bus) -> None:
    seen: list[tuple[int, str]] = []
    bus.subscribe(
        "/hb50/cmd",
        Count,
        lambda m: seen.append((m.value, threading.current_thread().name)),
        MAB_RT,
        realtime=True,
    )
    pub = bus.publisher("/hb50/cmd", Count, MAB_RT)
    pub.publish(Count(1))
    # No waiting: the callback already ran, on this thread.
    assert seen == [(1, threading.current_thread().name)]


def test_realtime_subscriber_needs_a_callback(bus: Bus) -> None:
    with pytest.raises(BusError, match="needs a callback"):
        bus.subscribe("/x", Count, None, realtime=True)


def test_publishing_another_type_raises_and_delivers_nothing(bus: Bus) -> None:
    sub = bus.subscribe("/hb50/x", Count)
    pub = bus.publisher("/hb50/x", Count)
    with pytest.raises(TopicTypeError) as info:
        pub.publish(Reading(1.0))  # type: ignore[arg-type]
    assert "jointbus_test/msg/Count" in str(info.value)
    assert "jointbus_test/msg/Reading" in str(info.value)
    assert info.value.topic == "/hb50/x"
    assert sub.queued == 0
    assert pub.seq == 0


def test_a_topic_has_one_type(bus: Bus) -> None:
    bus.publisher("/hb50/x", Count)
    with pytest.raises(TopicTypeError, match="/hb50/x"):
        bus.subscribe("/hb50/x", Reading)
    with pytest.raises(TopicTypeError):
        bus.publisher("/hb50/x", Reading)
    assert [t.type_name for t in bus.topics()] == ["jointbus_test/msg/Count"]


def test_a_topic_forgets_its_type_when_its_last_endpoint_closes(bus: Bus) -> None:
    bus.publisher("/t", Count).close()
    bus.publisher("/t", Reading)


def test_bad_arguments_give_clear_errors_and_create_nothing(bus: Bus) -> None:
    with pytest.raises(TopicNameError):
        bus.publisher("hb50/x", Count)
    with pytest.raises(QosError, match="profile"):
        bus.subscribe("/x", Count, None, qos=42)  # type: ignore[arg-type]
    with pytest.raises(QosError, match="depth"):
        bus.subscribe("/x", Count, None, qos=QosProfile(depth=0))
    with pytest.raises(TopicTypeError, match="Message class"):
        bus.publisher("/x", int)  # type: ignore[type-var]
    with pytest.raises(BusError, match="not callable"):
        bus.subscribe("/x", Count, 5)  # type: ignore[arg-type]
    assert bus.topics() == []


def test_qos_may_be_given_by_profile_name(bus: Bus) -> None:
    sub = bus.subscribe("/x", Count, None, "LATCHED")
    assert sub.qos is LATCHED


def test_slow_best_effort_subscriber_never_blocks_the_publisher(bus: Bus) -> None:
    release = threading.Event()
    started = threading.Event()
    got: list[int] = []

    def slow(msg: Count) -> None:
        started.set()
        release.wait(5.0)
        got.append(msg.value)

    sub = bus.subscribe("/fast", Count, slow, QosProfile(Reliability.BEST_EFFORT, 3))
    pub = bus.publisher("/fast", Count, MAB_RT)
    pub.publish(Count(0))
    assert started.wait(5.0)  # the callback now blocks the dispatcher
    for i in range(1, 101):
        pub.publish(Count(i))  # must return although the subscriber is stuck
    assert pub.seq == 101
    release.set()
    assert wait_until(lambda: len(got) == 4)
    assert got == [0, 98, 99, 100]  # the oldest were overwritten: keep-last 3
    stats = sub.stats()
    assert stats.dropped == 97
    assert stats.overflow == 0
    assert stats.received == 101
    assert stats.delivered == 4


def test_reliable_overflow_is_counted_and_reported(bus: Bus) -> None:
    events: list[QosEvent] = []
    sub = bus.subscribe("/status", Count, None, RELIABLE, on_event=events.append)
    pub = bus.publisher("/status", Count, RELIABLE)
    for i in range(15):
        pub.publish(Count(i))
    assert [m.value for m in sub.take_all()] == list(range(5, 15))
    assert sub.stats().overflow == 5
    assert sub.stats().dropped == 0
    lost = [e for e in events if isinstance(e, MessagesLostEvent)]
    assert len(lost) == 1
    assert (lost[0].reason, lost[0].count, lost[0].total_count) == ("overflow", 5, 5)


def test_latched_late_joiner_receives_the_last_n(bus: Bus) -> None:
    pub = bus.publisher("/robot_description", Count, LATCHED.with_(depth=3))
    for i in range(5):
        pub.publish(Count(i))
    late = bus.subscribe("/robot_description", Count, None, LATCHED.with_(depth=3))
    assert [m.value for m in late.take_all()] == [2, 3, 4]
    pub.publish(Count(5))
    assert [m.value for m in late.take_all()] == [5]


def test_latched_history_reaches_a_late_callback_subscriber(bus: Bus) -> None:
    pub = bus.publisher("/config", Count, LATCHED)
    pub.publish(Count(1))
    pub.publish(Count(2))
    got: list[int] = []
    bus.subscribe("/config", Count, lambda m: got.append(m.value), LATCHED)
    assert wait_until(lambda: got == [2])


def test_volatile_late_joiner_receives_nothing_old(bus: Bus) -> None:
    pub = bus.publisher("/config", Count, LATCHED)
    pub.publish(Count(1))
    volatile = bus.subscribe("/config", Count, None, RELIABLE)
    assert volatile.take() is None
    pub.publish(Count(2))
    assert volatile.take() == Count(2)


def test_incompatible_pairs_are_reported_to_both_sides_and_exchange_nothing(bus: Bus) -> None:
    hook_events: list[QosEvent] = []
    bus.on_qos_event(hook_events.append)
    pub_events: list[QosEvent] = []
    sub_events: list[QosEvent] = []
    sub = bus.subscribe("/x", Count, None, RELIABLE, node="listener", on_event=sub_events.append)
    pub = bus.publisher("/x", Count, MAB_RT, node="talker", on_event=pub_events.append)
    pub.publish(Count(1))
    assert sub.take() is None
    assert pub.subscriber_count == 0
    for events, kind in ((pub_events, "publisher"), (sub_events, "subscriber")):
        assert len(events) == 1
        event = events[0]
        assert isinstance(event, QosIncompatibleEvent)
        assert event.kind == kind
        assert event.reasons == ("reliability: best-effort publisher, reliable subscriber",)
        assert event.publisher.startswith("talker#")
        assert event.subscriber.startswith("listener#")
        assert not event.remote
    assert len(hook_events) == 2


def test_an_event_is_logged_only_when_its_endpoint_does_not_report_it(
    bus: Bus, caplog: pytest.LogCaptureFixture
) -> None:
    """A node reports its endpoints' events on its status topic (rate-limited); the bus logging
    them too printed every malformed command twice, once unprefixed and unlimited."""
    handled: list[QosEvent] = []
    with caplog.at_level(logging.DEBUG, logger="jointbus.bus"):
        bus.subscribe("/x", Count, None, RELIABLE, node="listener", on_event=handled.append)
        bus.publisher("/x", Count, MAB_RT, node="talker")
    assert len(handled) == 1
    records = [r for r in caplog.records if "talker#" in r.getMessage()]
    # One event per side, the publisher's first: it has no hook (WARNING); the subscriber's went
    # to its hook (DEBUG only).
    assert [r.levelname for r in records] == ["WARNING", "DEBUG"]


def test_volatile_publisher_and_transient_local_subscriber_are_incompatible(bus: Bus) -> None:
    events: list[QosEvent] = []
    bus.on_qos_event(events.append)
    bus.publisher("/x", Count, RELIABLE)
    bus.subscribe("/x", Count, None, LATCHED)
    assert any(isinstance(e, QosIncompatibleEvent) and "durability" in e.reasons[0] for e in events)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(start_ns=1_000_000_000)


@pytest.fixture
def manual_bus(clock: ManualClock) -> Iterator[Bus]:
    created = Bus(name="manual", clock=clock)
    yield created
    created.close()


def test_subscriber_deadline_missed_is_reported(manual_bus: Bus, clock: ManualClock) -> None:
    events: list[QosEvent] = []
    manual_bus.on_qos_event(events.append)
    qos = RELIABLE.with_(deadline=0.02)
    sub = manual_bus.subscribe("/hb50/joint_command", Count, None, qos, node="bridge")
    pub = manual_bus.publisher("/hb50/joint_command", Count, qos)
    clock.advance(0.019)
    assert sub.deadline_missed == 0 and pub.deadline_missed == 0 and events == []
    clock.advance(0.001)  # exactly one period of silence: missed
    assert sub.deadline_missed == 1 and pub.deadline_missed == 1
    clock.advance(0.045)  # two more whole periods (and 5 ms into the next)
    assert sub.deadline_missed == 3 and pub.deadline_missed == 3
    missed = [e for e in events if isinstance(e, DeadlineMissedEvent) and e.kind == "subscriber"]
    assert [e.total_count_change for e in missed] == [1, 2]
    assert missed[-1].total_count == 3
    assert missed[-1].deadline == pytest.approx(0.02)
    # Publishing within every period stops the misses: 100 messages 19 ms apart, none missed.
    for _ in range(100):
        pub.publish(Count(0))
        clock.advance(0.019)
    assert sub.deadline_missed == 3 and pub.deadline_missed == 3


def test_no_deadline_events_without_a_deadline(manual_bus: Bus, clock: ManualClock) -> None:
    events: list[QosEvent] = []
    manual_bus.on_qos_event(events.append)
    sub = manual_bus.subscribe("/x", Count, None, RELIABLE)
    clock.advance(3600.0)
    assert events == [] and sub.deadline_missed == 0


def test_the_system_clock_deadline_thread_reports_a_silent_topic(bus: Bus) -> None:
    """The default clock: the bus's own thread notices the silence, no ``advance`` needed."""
    sub = bus.subscribe("/x", Count, None, RELIABLE.with_(deadline=0.02))
    assert wait_until(lambda: sub.deadline_missed >= 2)


def test_lifespan_drops_stale_messages(manual_bus: Bus, clock: ManualClock) -> None:
    qos = RELIABLE.with_(lifespan=0.02)
    sub = manual_bus.subscribe("/x", Count, None, qos)
    pub = manual_bus.publisher("/x", Count, qos)
    pub.publish(Count(1))
    clock.advance(0.021)
    pub.publish(Count(2))
    clock.advance(0.02)  # Count(2) is exactly 20 ms old: still alive
    assert sub.latest() == Count(2)
    assert sub.take_all() == [Count(2)]
    assert sub.stats().expired == 1
    clock.advance(0.001)
    assert sub.latest() is None


def test_lifespan_applies_to_latched_history(manual_bus: Bus, clock: ManualClock) -> None:
    qos = LATCHED.with_(lifespan=0.02)
    pub = manual_bus.publisher("/x", Count, qos)
    pub.publish(Count(1))
    clock.advance(0.015)
    early = manual_bus.subscribe("/x", Count, None, qos)
    assert early.take() == Count(1)
    clock.advance(0.006)
    late = manual_bus.subscribe("/x", Count, None, qos)
    assert late.take() is None
    assert late.stats().expired == 1


def test_a_manual_clock_bus_stays_in_process(manual_bus: Bus) -> None:
    with pytest.raises(BusError, match="SYSTEM_CLOCK"):
        manual_bus.attach_zenoh()
    assert manual_bus.zenoh is None


def test_polling_latest_does_not_consume(bus: Bus) -> None:
    sub = bus.subscribe("/x", Count, None, MAB_RT)
    assert sub.latest() is None
    pub = bus.publisher("/x", Count, MAB_RT)
    pub.publish(Count(1))
    pub.publish(Count(2))
    assert sub.latest() == Count(2)
    assert sub.latest() == Count(2)
    assert sub.take() == Count(2)  # depth 1: the newest only
    assert sub.take() is None


def test_take_is_refused_on_a_callback_subscriber(bus: Bus) -> None:
    sub = bus.subscribe("/x", Count, lambda m: None)
    with pytest.raises(BusError, match="polling"):
        sub.take()


def test_a_raising_callback_is_counted_and_the_subscriber_keeps_running(
    bus: Bus, caplog: pytest.LogCaptureFixture
) -> None:
    got: list[int] = []

    def flaky(msg: Count) -> None:
        if msg.value == 1:
            raise RuntimeError("boom")
        got.append(msg.value)

    sub = bus.subscribe("/x", Count, flaky, RELIABLE)
    rt = bus.subscribe("/x", Count, flaky, RELIABLE, realtime=True)
    pub = bus.publisher("/x", Count)
    for i in range(3):
        pub.publish(Count(i))
    assert wait_until(lambda: sub.stats().delivered == 2)
    assert sub.stats().callback_errors == 1
    assert rt.stats().callback_errors == 1
    assert sorted(got) == [0, 0, 2, 2]
    assert "callback raised" in caplog.text


def test_own_dispatcher_isolates_a_slow_subscriber(bus: Bus) -> None:
    release = threading.Event()
    fast_got: list[int] = []
    bus.subscribe("/x", Count, lambda m: release.wait(5.0), MAB_RT)
    bus.subscribe(
        "/x",
        Count,
        lambda m: fast_got.append(m.value),
        MAB_RT,
        dispatcher=bus.dispatcher("fast-node"),
    )
    pub = bus.publisher("/x", Count, MAB_RT)
    pub.publish(Count(1))
    assert wait_until(lambda: fast_got == [1])
    release.set()


def test_closed_endpoints_stop_and_refuse_use(bus: Bus) -> None:
    got: list[int] = []
    sub = bus.subscribe("/x", Count, lambda m: got.append(m.value))
    pub = bus.publisher("/x", Count)
    sub.close()
    pub.publish(Count(1))
    time.sleep(0.02)
    assert got == []
    pub.close()
    with pytest.raises(BusClosedError):
        pub.publish(Count(2))
    with pytest.raises(BusClosedError):
        sub.latest()


def test_closing_the_bus_stops_its_threads() -> None:
    before = set(threading.enumerate())
    created = Bus(name="closing")
    created.subscribe("/x", Count, lambda m: None, RELIABLE.with_(deadline=0.01))
    created.close()
    created.close()  # idempotent
    leftover = [t for t in threading.enumerate() if t not in before and t.is_alive()]
    assert leftover == []
    with pytest.raises(BusClosedError):
        created.publisher("/x", Count)


def test_event_hook_can_be_removed(bus: Bus) -> None:
    events: list[QosEvent] = []
    remove = bus.on_qos_event(events.append)
    remove()
    bus.subscribe("/x", Count, None, RELIABLE)
    bus.publisher("/x", Count, MAB_RT)
    assert events == []


def test_local_topic_listing(bus: Bus) -> None:
    bus.publisher("/hb50/bridge_data", Count, MAB_RT, node="bridge")
    bus.subscribe("/hb50/bridge_data", Count, None, MAB_RT, node="control")
    (info,) = bus.discover()
    assert info.name == "/hb50/bridge_data"
    assert info.type_name == "jointbus_test/msg/Count"
    assert [p.node for p in info.publishers] == ["bridge"]
    assert [s.node for s in info.subscribers] == ["control"]
    assert info.publishers[0].qos == MAB_RT


def test_a_script_that_leaves_its_zenoh_bus_open_still_exits() -> None:
    """zenoh-python runs callbacks on a non-daemon thread that Python joins at exit, before atexit
    handlers: without the bus's shutdown hook this child never ended (a user's one-off script
    hung after its last line)."""
    script = textwrap.dedent(
        f"""
        from jointbus.bus import MAB_RT, Bus, ZenohConfig
        from jointbus.messages.std_msgs import String
        bus = Bus(zenoh=ZenohConfig(hub_port={free_port()}))
        bus.subscribe("/left_open", String, print, MAB_RT)
        print("last line")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "last line"
