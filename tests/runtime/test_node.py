"""Node: names and topics, managed entities across lifecycle cycles, hooks, rate loops and their
diagnostics, QoS events and failures on the status topic, and shutdown."""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import pytest

from jointbus.bus import MAB_RT, RELIABLE, Bus, TopicNameError
from jointbus.codec.wire import Int64
from jointbus.messages.base import Message
from jointbus.robots.hb50.messages import Level, Status
from jointbus.runtime import (
    CycleInfo,
    LifecycleError,
    LifecycleHookError,
    LifecycleState,
    LoopDiagnostics,
    Node,
    NodeClosedError,
    NodeNameError,
    NodeReservedNameError,
)
from jointbus.runtime.node import NODE_HOOKS, RESERVED_NODE_NAMES
from jointbus.runtime.realtime import RealtimeConfig, RealtimeWarning
from support.runtime import SteppedWorld, wait_until


@dataclass(frozen=True, slots=True)
class Tick(Message):
    """A numbered message (test-local type)."""

    TYPE_NAME: ClassVar[str] = "jointbus_test/msg/Tick"
    n: Int64 = 0


@pytest.fixture
def bus() -> Iterator[Bus]:
    with Bus(name="test") as bus:
        yield bus


@pytest.fixture
def world(bus: Bus) -> Iterator[SteppedWorld]:
    world = SteppedWorld(bus)
    yield world
    world.close()


def status_log(bus: Bus) -> list[Status]:
    got: list[Status] = []
    bus.subscribe("/hb50/status", Status, got.append, RELIABLE.with_(depth=1000), realtime=True)
    return got


# ---- names -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["", "1abc", "a-b", "a/b", "a b", None])
def test_invalid_node_names_are_refused(bus: Bus, name: object) -> None:
    with pytest.raises(NodeNameError) as info:
        Node(name, bus)  # type: ignore[arg-type]
    assert info.value.field == "name"
    assert bus.topics() == []  # nothing was created


@pytest.mark.parametrize("namespace", ["/hb50", "hb50/", "a//b", "1x"])
def test_invalid_namespaces_are_refused(bus: Bus, namespace: str) -> None:
    with pytest.raises(NodeNameError) as info:
        Node("n", bus, namespace=namespace)
    assert info.value.field == "namespace"


def test_relative_topics_resolve_under_the_namespace(world: SteppedWorld) -> None:
    node = world.node("ctl", namespace="robot/left")
    assert node.topic("joint_command") == "/robot/left/joint_command"
    assert node.topic("/tf") == "/tf"
    assert (node.heartbeat_topic, node.status_topic, node.diagnostics_topic) == (
        "/robot/left/heartbeat",
        "/robot/left/status",
        "/robot/left/diagnostics",
    )
    with pytest.raises(TopicNameError):
        node.topic("bad topic")
    root = world.node("r", namespace="")
    assert root.topic("x") == "/x"


# ---- managed entities across lifecycle cycles --------------------------------------------------


def test_managed_publisher_publishes_only_while_active(world: SteppedWorld) -> None:
    node = world.node("ctl")
    pub = node.create_publisher("cmd", Tick, MAB_RT)
    got: list[int] = []
    world.bus.subscribe("/hb50/cmd", Tick, lambda m: got.append(m.n), MAB_RT, realtime=True)
    pub.publish(Tick(0))  # unconfigured: dropped, not raised
    node.configure()
    pub.publish(Tick(1))
    for cycle in range(3):  # the same node stops and starts again, several times
        node.activate()
        pub.publish(Tick(10 + cycle))
        node.deactivate()
        pub.publish(Tick(20 + cycle))
    assert got == [10, 11, 12]
    assert pub.dropped_inactive == 5
    unmanaged = node.create_publisher("always", Tick, managed=False)
    assert unmanaged.enabled


def test_managed_subscription_delivers_only_while_active(world: SteppedWorld) -> None:
    node = world.node("ctl")
    got: list[int] = []
    sub = node.create_subscription("fb", Tick, lambda m: got.append(m.n), realtime=True)
    pub = world.bus.publisher("/hb50/fb", Tick)
    pub.publish(Tick(1))
    node.start()
    pub.publish(Tick(2))
    node.deactivate()
    pub.publish(Tick(3))
    node.activate()
    pub.publish(Tick(4))
    assert got == [2, 4]
    assert sub.dropped_inactive == 2


def test_subscription_callbacks_run_on_the_node_thread(world: SteppedWorld) -> None:
    node = world.node("ctl")
    threads: list[str] = []
    node.create_subscription("fb", Tick, lambda m: threads.append(threading.current_thread().name))
    node.start()
    world.bus.publisher("/hb50/fb", Tick).publish(Tick(1))
    assert wait_until(lambda: len(threads) == 1)
    assert threads == [node.dispatcher.name] == ["ctl-callbacks"]


def test_polling_subscription_is_not_gated(world: SteppedWorld) -> None:
    node = world.node("ctl")
    sub = node.create_subscription("fb", Tick, None)
    world.bus.publisher("/hb50/fb", Tick).publish(Tick(7))
    assert sub.take() == Tick(7)


def test_managed_timers_pause_while_inactive_and_resume(world: SteppedWorld) -> None:
    node = world.node("ctl")
    calls: list[int] = []
    timer = node.create_timer(0.1, lambda: calls.append(world.clock.now))
    world.advance(1.0)
    assert calls == []
    node.start()
    world.advance(0.5)
    assert len(calls) == 5
    node.deactivate()
    world.advance(1.0)
    assert len(calls) == 5 and not timer.active
    node.activate()
    world.advance(0.3)
    assert len(calls) == 8
    always: list[int] = []
    node.create_timer(0.1, lambda: always.append(1), managed=False)
    node.deactivate()
    world.advance(0.5)
    assert len(always) == 5


def test_a_raising_timer_is_reported_as_error_and_keeps_running(world: SteppedWorld) -> None:
    log = status_log(world.bus)
    node = world.node("ctl")

    def bad() -> None:
        raise ValueError("sensor gone")

    timer = node.create_timer(0.1, bad, name="poll")
    node.start()
    world.advance(1.0)
    assert timer.calls == 10 and timer.errors == 10
    errors = [m for m in log if m.level is Level.ERROR]
    assert len(errors) == 1  # ten failures in a second, one report
    assert errors[0].reporting_node == "ctl"
    assert "timer 'poll' raised ValueError: sensor gone" in errors[0].status


# ---- hooks -------------------------------------------------------------------------------------


class Recorder(Node):
    def __init__(self, name: str, bus: Bus, **kwargs: object) -> None:
        self.calls: list[str] = []
        self.fail: set[str] = set()
        super().__init__(name, bus, **kwargs)  # type: ignore[arg-type]
        self.pub = self.create_publisher("out", Tick)

    def _hook(self, name: str) -> None:
        self.calls.append(name)
        if name in self.fail:
            raise RuntimeError(f"{name} failed")

    def on_configure(self) -> None:
        self._hook("configure")

    def on_activate(self) -> None:
        self._hook("activate")
        self.pub.publish(Tick(1))  # publishers work inside on_activate

    def on_deactivate(self) -> None:
        self._hook("deactivate")
        self.pub.publish(Tick(0))  # ...and inside on_deactivate (a last, safe command)

    def on_shutdown(self) -> None:
        self._hook("shutdown")


def test_hooks_run_in_order_and_may_publish(bus: Bus) -> None:
    got: list[int] = []
    bus.subscribe("/hb50/out", Tick, lambda m: got.append(m.n), realtime=True)
    node = Recorder("rec", bus)
    node.start()
    node.deactivate()
    node.activate()
    node.shutdown()
    assert node.calls == [
        "configure",
        "activate",
        "deactivate",
        "activate",
        "deactivate",
        "shutdown",
    ]
    assert got == [1, 0, 1, 0]
    assert node.state is LifecycleState.FINALIZED


class LateCreator(Node):
    def on_activate(self) -> None:
        if not hasattr(self, "late"):
            self.late = self.create_publisher("late", Tick)
        self.late.publish(Tick(5))


def test_entities_created_inside_on_activate_work_at_once(bus: Bus) -> None:
    got: list[int] = []
    bus.subscribe("/hb50/late", Tick, lambda m: got.append(m.n), realtime=True)
    with LateCreator("late", bus) as node:
        node.start()
        node.late.publish(Tick(6))
        node.deactivate()
        node.activate()
    assert got == [5, 6, 5]


def test_a_failing_on_activate_leaves_the_node_inactive_and_silent(bus: Bus) -> None:
    node = Recorder("rec", bus)
    ticks: list[int] = []
    node.create_timer(0.001, lambda: ticks.append(1))
    node.configure()
    node.fail.add("activate")
    with pytest.raises(LifecycleHookError) as info:
        node.activate()
    assert not info.value.completed
    assert node.state is LifecycleState.INACTIVE
    assert not node.pub.enabled
    assert not any(t.active for t in node.timers.timers if t.name == "<lambda>")
    node.fail.clear()
    node.activate()
    assert wait_until(lambda: len(ticks) > 0)
    node.shutdown()


def test_a_failing_on_deactivate_still_stops_everything(bus: Bus) -> None:
    node = Recorder("rec", bus)
    loop_runs = threading.Event()
    loop = node.create_rate_loop(200, lambda c: loop_runs.set())
    node.start()
    assert loop_runs.wait(5)
    node.fail.add("deactivate")
    with pytest.raises(LifecycleHookError) as info:
        node.deactivate()
    assert info.value.completed
    assert node.state is LifecycleState.INACTIVE
    assert not loop.running and not node.pub.enabled
    node.shutdown()


def test_invalid_transitions_are_refused(world: SteppedWorld) -> None:
    node = world.node("ctl")
    with pytest.raises(LifecycleError):
        node.activate()  # not configured
    with pytest.raises(LifecycleError):
        node.deactivate()
    node.start()
    with pytest.raises(LifecycleError):
        node.configure()
    node.shutdown()
    assert node.shutdown() is LifecycleState.FINALIZED  # idempotent
    for transition in (node.configure, node.activate, node.deactivate, node.start):
        with pytest.raises(LifecycleError):
            transition()


def test_deactivate_from_inside_a_timer_callback(bus: Bus) -> None:
    node = Node("ctl", bus)
    done = threading.Event()

    def stop_self() -> None:
        node.deactivate()
        done.set()

    node.create_timer(0.01, stop_self)
    node.start()
    assert done.wait(5)
    assert node.state is LifecycleState.INACTIVE
    node.shutdown()


# ---- rate loops --------------------------------------------------------------------------------


def test_rate_loop_runs_while_active_and_restarts_with_fresh_statistics(bus: Bus) -> None:
    node = Node("ctl", bus)
    cycles: list[CycleInfo] = []
    loop = node.create_rate_loop(200, cycles.append, name="control")
    node.configure()
    assert not loop.running
    node.activate()
    assert wait_until(lambda: len(cycles) >= 10)
    node.deactivate()
    assert not loop.running
    stopped_at = len(cycles)
    first = node.loop_stats()["control"]
    assert first.cycles == stopped_at and first.period_target_s == pytest.approx(0.005)
    node.activate()
    assert wait_until(lambda: len(cycles) >= stopped_at + 5)
    assert loop.runs == 2
    assert cycles[stopped_at].index == 0  # a fresh grid
    node.shutdown()
    assert not loop.running


def test_loop_diagnostics_are_published_for_running_loops(world: SteppedWorld) -> None:
    node = world.node("ctl")
    got: list[LoopDiagnostics] = []
    world.bus.subscribe("/hb50/diagnostics", LoopDiagnostics, got.append, realtime=True)
    started = threading.Event()
    node.create_rate_loop(100, lambda c: started.set(), name="control")
    world.advance(1.0)
    assert got == []  # not running while inactive
    node.start()
    assert started.wait(5)
    assert wait_until(lambda: node.loop_stats()["control"].cycles >= 3)
    world.advance(1.0)
    assert len(got) == 1
    assert (got[0].node, got[0].loop, got[0].rate_hz) == ("ctl", "control", 100.0)
    assert got[0].cycles >= 3


def test_a_raising_loop_body_stops_the_loop_and_is_reported(bus: Bus) -> None:
    log = status_log(bus)
    node = Node("ctl", bus)

    def body(cycle: CycleInfo) -> None:
        if cycle.index == 3:
            raise ZeroDivisionError("bad gain")

    loop = node.create_rate_loop(200, body, name="control")
    node.start()
    assert wait_until(lambda: loop.error is not None and not loop.running)
    assert wait_until(lambda: any(m.level is Level.ERROR for m in log))
    error = next(m for m in log if m.level is Level.ERROR)
    assert "rate loop 'control' stopped" in error.status and "bad gain" in error.status
    node.shutdown()


def test_loop_names_are_unique(world: SteppedWorld) -> None:
    node = world.node("ctl")
    node.create_rate_loop(100, lambda c: None, name="a")
    with pytest.raises(NodeNameError):
        node.create_rate_loop(100, lambda c: None, name="a")


# ---- QoS events on the status topic ------------------------------------------------------------


def test_qos_events_of_the_nodes_endpoints_are_published_as_warn(bus: Bus) -> None:
    log = status_log(bus)
    node = Node("ctl", bus)
    own: list[object] = []
    # Incompatible: a reliable subscription to a best-effort publisher of the same node.
    node.create_publisher("fast", Tick, MAB_RT)
    node.create_subscription("fast", Tick, lambda m: None, RELIABLE, on_event=own.append)
    # Deadline: a subscription expecting a message every 20 ms from a silent topic.
    node.create_subscription("cmd", Tick, lambda m: None, RELIABLE.with_(deadline=0.02))
    try:
        assert wait_until(lambda: len([m for m in log if m.level is Level.WARN]) >= 3)
        warns = [m for m in log if m.level is Level.WARN]
        assert {m.reporting_node for m in warns} == {"ctl"}
        texts = " | ".join(m.status for m in warns)
        assert "incompatible QoS on /hb50/fast" in texts
        assert "deadline of 0.02 s missed on /hb50/cmd" in texts
        assert {b"/hb50/fast", b"/hb50/cmd"} <= {m.data for m in warns}
        assert own  # the user's own hook saw the event too
        deadline_reports = [m for m in warns if m.data == b"/hb50/cmd"]
        assert len(deadline_reports) <= 2  # rate-limited: ~50 events a second, one report
    finally:
        node.shutdown()


def test_report_publishes_a_status(world: SteppedWorld) -> None:
    log = status_log(world.bus)
    node = world.node("ctl")
    node.report(Level.ERROR, "over-temperature on joint 'knee' (index 3)", b"knee")
    world.advance(0.1)
    assert [(m.level, m.reporting_node, m.data) for m in log] == [(Level.ERROR, "ctl", b"knee")]


# ---- shutdown ----------------------------------------------------------------------------------


def test_shutdown_closes_everything_the_node_created(bus: Bus) -> None:
    before = {t.name for t in bus.topics()}
    with Node("ctl", bus) as node:
        node.create_publisher("a", Tick)
        node.create_subscription("b", Tick, lambda m: None)
        node.create_timer(0.1, lambda: None)
        node.create_rate_loop(100, lambda c: None)
        node.start()
        assert {t.name for t in bus.topics()} > before
    assert node.state is LifecycleState.FINALIZED
    assert {t.name for t in bus.topics()} == before
    assert node.timers.closed and node.dispatcher.closed
    assert not any(
        t.name.startswith(("ctl-", "loop-")) and t.is_alive() for t in threading.enumerate()
    )
    with pytest.raises(NodeClosedError):
        node.create_publisher("c", Tick)
    with pytest.raises(NodeClosedError):
        node.create_timer(0.1, lambda: None)


def test_many_nodes_can_come_and_go_on_one_bus(bus: Bus) -> None:
    for i in range(5):
        node = Node(f"n{i}", bus)
        node.start()
        node.shutdown()
    assert bus.topics() == []


# ---- reserved names ----------------------------------------------------------------------------


def test_a_subclass_storing_self_start_is_refused_at_the_assignment(bus: Bus) -> None:
    """The user's bug: ``self.start = ...`` silently replaced ``Node.start()``, which then failed
    much later with ``TypeError: 'NoneType' object is not callable``."""

    class Squat(Node):
        def __init__(self, bus: Bus) -> None:
            super().__init__("squat", bus)
            self.start = None  # type: ignore[assignment]  # meant: the start pose

    with pytest.raises(NodeReservedNameError) as info:
        Squat(bus)
    err = info.value
    assert err.attribute == "start"
    assert err.owner == "Squat"
    assert "start" in err.reserved and "on_activate" not in err.reserved
    text = str(err)
    assert "'start'" in text and "Squat" in text and "reserved" in text
    assert "create_publisher" in text  # the message lists the reserved names


@pytest.mark.parametrize("attribute", ["name", "bus", "heartbeat", "report", "_lock", "_timers"])
def test_reassigning_a_framework_attribute_after_construction_is_refused(
    bus: Bus, attribute: str
) -> None:
    node = Node("n", bus)
    before = getattr(node, attribute)
    with pytest.raises(NodeReservedNameError) as info:
        setattr(node, attribute, 42)
    assert info.value.attribute == attribute
    assert getattr(node, attribute) == before  # nothing changed
    node.start()  # and the node still works
    assert node.active
    node.shutdown()


def test_a_subclass_defining_a_framework_method_is_refused_at_class_definition() -> None:
    with pytest.raises(NodeReservedNameError) as info:

        class Bad(Node):
            def start(self) -> LifecycleState:  # type: ignore[override]
                return LifecycleState.ACTIVE

    assert info.value.attribute == "start"
    assert info.value.owner == "Bad"
    assert "on_activate" in str(info.value)  # points at the hooks meant to be overridden


def test_hooks_and_own_attributes_stay_free(bus: Bus) -> None:
    calls: list[str] = []

    class Mine(Node):
        def __init__(self, bus: Bus) -> None:
            self.start_pose = (0.1, 0.2)  # before super().__init__: fine, not reserved
            super().__init__("mine", bus)
            self.gain = 3.0

        def on_activate(self) -> None:
            calls.append("activate")

    node = Mine(bus)
    node.gain = 4.0
    node.start()
    assert calls == ["activate"] and node.start_pose == (0.1, 0.2) and node.gain == 4.0
    node.shutdown()


def test_every_attribute_node_sets_is_reserved(bus: Bus) -> None:
    """Guards the list itself: an attribute added to ``Node.__init__`` must be reserved too."""
    node = Node("n", bus)
    try:
        assert set(vars(node)) - {"_Node__building"} <= RESERVED_NODE_NAMES
    finally:
        node.shutdown()


def test_the_reserved_list_is_what_node_defines() -> None:
    assert "start" in RESERVED_NODE_NAMES and "_lock" in RESERVED_NODE_NAMES
    for hook in NODE_HOOKS:
        assert hook not in RESERVED_NODE_NAMES
    public = {n for n in dir(Node) if not n.startswith("_") and n not in NODE_HOOKS}
    assert public <= RESERVED_NODE_NAMES
    assert {"name", "bus", "namespace", "heartbeat", "reporter", "status_publisher"} <= (
        RESERVED_NODE_NAMES
    )


def test_callback_realtime_schedules_the_nodes_callback_thread_and_no_other(bus: Bus) -> None:
    """The control node's step runs in its subscription callback: ``callback_realtime`` puts that
    thread (and only it) on SCHED_FIFO, or warns where the OS refuses and the node runs on."""
    seen: list[tuple[int, int]] = []
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        node = Node("rt_callbacks", bus, callback_realtime=RealtimeConfig(priority=10))
        node.create_subscription(
            "/rt/in",
            Status,
            lambda _m: seen.append((os.sched_getscheduler(0), os.sched_getparam(0).sched_priority)),
        )
        node.start()
        bus.publisher("/rt/in", Status).publish(Status.ok("t", "x"))
        assert wait_until(lambda: bool(seen), timeout=5.0)
    try:
        refused = [w for w in record if issubclass(w.category, RealtimeWarning)]
        if refused:  # an unprivileged account: the node runs on the normal scheduler
            assert seen == [(os.sched_getscheduler(0), 0)] and "SCHED_FIFO" in str(refused[0])
        else:
            assert seen == [(os.SCHED_FIFO, 10)]
        assert os.sched_getscheduler(0) != os.SCHED_FIFO  # the caller's thread is untouched
    finally:
        node.shutdown()
