"""The monitor's bus side: polling subscriptions to the robot's slow topics, and discovery.

Where it sits: :mod:`jointbus.tools.monitor`, between :class:`jointbus.bus.Bus` and
:class:`~jointbus.tools.monitor.model.MonitorModel`. The app calls :meth:`MonitorFeed.poll` from its
refresh timer; the feed hands everything that arrived since the last call to the model, on that
one thread.

Topics (``/<ns>/...``, ``hb50`` by default):

==========================  ======================  =========================================
topic                       QoS asked               why
==========================  ======================  =========================================
``bridge_state_10hz``       RELIABLE                owner, mode, e-stop, drives (the mirror) ★
``robot_state_10hz``        RELIABLE                motion mode / type / gait (the mirror) ★
``heartbeat``               RELIABLE, depth 256     node liveliness ★
``node_health``             LATCHED, depth 16       supervisors' verdicts (dead before we came)
``status``                  RELIABLE, depth 256     events (every report, none lost) ★
``bridge_data_10hz``        RELIABLE                per-joint rows, when a mirror is offered
``bridge_data``             MAB_RT                  per-joint rows otherwise
``joint_state``             MAB_RT                  a served array's joints (see below)
``actarray/data``           MAB_RT                  its motor power, actuator states
==========================  ======================  =========================================

A served array (``jointbus serve``) publishes none of hb50's bridge topics: its ``joint_state``
(``jointbus_msgs/msg/JointState``) and ``actarray/data`` are subscribed once discovery shows them
published with those types and no bridge topic on the namespace; a bridge's topics close them
and tell the model to keep the bridge view (hb50's bridge publishes ``joint_state`` too).

Every subscription *polls* (no callback): a publish only appends to the subscription's queue, with
no thread woken, and the monitor takes what is there at its own refresh rate (10 Hz, or once a
``--interval`` in plain mode) — except the four topics marked ★, whose messages the model judges
silence and ages by. Those are *realtime* subscriptions (no queue hand-over, no thread woken either)
whose callback only appends the message with its arrival time (monotonic and wall ns) to a deque:
a polled message was dated by the poll that took it, so ``monitor --plain`` (one poll a second)
printed ``last heartbeat 0.0 s ago`` for a heartbeat up to 1 s old (0.53 s after a SIGKILL, and
1.02 s into a SIGSTOP: a new user's trial, 2026-12-06, ≈ 0.4 s too young on average). A message is
dated by its arrival, never later than the poll that hands it over (``now_ns``: a test's injected
clock behind the real one dates it at the poll). :meth:`MonitorFeed.poll` takes them *last*, after
discovery's topics are followed (the first poll, which declares a tap for each topic found on the
hb50 demo, ended 0.3-0.5 s after it had taken the messages at load 15, 1.6 s at load 20: the
heartbeat ages of the first summary), and tells the model when it took them
(:meth:`MonitorModel.on_polled`): a verdict of silence counts only to then, so a snapshot printed
after a slow poll does not call LOST what simply was not taken yet.

Only the per-joint rows need ``BridgeData`` (temperatures and status words are in no other
message); the feed reads it from a ``bridge_data_10hz`` mirror as soon as discovery shows one, and
otherwise from
the 500 Hz topic — newest sample only, best-effort, so in-process it costs the bridge one queue
append per cycle, and over Zenoh the bridge encodes it for the monitor.

A discovery thread refreshes the topic list every ``discover_period_s`` (for the rates panel),
without the monitor's own endpoints (its e-stop publisher on ``hardware_command``, the app's
teleop publisher: nothing of the robot's). Rates come from publisher counters for topics of this
process (exact, free) and, for every topic another process publishes, from an arrival counter: the
transport's raw tap, as ``jointbus topic hz`` counts (not decoded), which dates each count by the
arrival of its last message, so a rate is messages − 1 over the span between arrivals
(:meth:`MonitorModel.arrived`). Sampling a subscription's counter at each refresh instead counted
the wait for it to be matched as silence: 94 Hz for a 100 Hz topic after 2 s. Two kinds are not
counted, and the panel says why instead of a rate: a topic with a ``<name>_10hz`` mirror
(``bridge_data``: counting it would make the bridge encode 500 frames a second for the monitor),
and a topic whose type this process does not know.

What counting costs the robot: a topic is encoded only while a remote subscriber matches, so the
publishers now encode what the monitor counts (on the hb50 demo ``sim/ground_truth`` and
``joint_command`` at ≈ 500 Hz, four 100 Hz topics, the 10 Hz ones). Measured on the demo stack
(``jointbus demo --headless``, CPU time of its process over 20 s windows, a ``monitor --plain``
attached in every other window, this shared 2-vCPU host at load 5.7–7.6): 57.2 % / 53.4 % of one
core without the monitor, 65.0 % / 57.9 % with it — 4.5 to 7.9 points, the price of a true rate
for every topic while someone watches.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Final, Generic, TypeVar

from jointbus.bus import (
    LATCHED,
    MAB_RT,
    RELIABLE,
    Bus,
    EndpointInfo,
    Publisher,
    QosProfile,
    ServiceClient,
    ServiceError,
    ServiceUnavailableError,
    Subscriber,
    TopicInfo,
)
from jointbus.messages.actarray import ActuatorArrayData, ActuatorReply
from jointbus.messages.base import Message
from jointbus.messages.jointbus_msgs import JointState
from jointbus.messages.registry import TypeRegistry
from jointbus.messages.std_msgs import String
from jointbus.robots.hb50.messages import BridgeData, BridgeState, RobotState, Status
from jointbus.runtime import NODE_HEALTH_TOPIC, NodeHealthTable
from jointbus.tools.known_types import known_registry
from jointbus.tools.monitor.model import MonitorModel

__all__ = ["DEFAULT_DISCOVER_PERIOD_S", "MONITOR_NODE", "MonitorFeed"]

_LOG = logging.getLogger("jointbus.tools.monitor")

#: How often the topic list is refreshed (s).
DEFAULT_DISCOVER_PERIOD_S: Final = 2.0
#: The node name of the monitor's own endpoints (the feed's, the app's teleop publisher): they are
#: not the robot's, so the topics panel leaves them out.
MONITOR_NODE: Final = "monitor"
_NODE: Final = MONITOR_NODE
#: An hb50 bridge's topics (relative to the namespace): one of them published means the namespace
#: is an hb50 robot's, shown with the bridge view.
_BRIDGE_TOPICS: Final = ("bridge_state_10hz", "bridge_data", "bridge_data_10hz", "robot_state_10hz")
_EVENT_QOS: Final = RELIABLE.with_(depth=256)
#: How long the e-stop call waits for a served array's answer (s).
_ESTOP_CALL_TIMEOUT_S: Final = 2.0
#: The suffix of a topic's slow mirror (``bridge_data`` → ``bridge_data_10hz``).
MIRROR_SUFFIX: Final = "_10hz"
_M = TypeVar("_M", bound=Message)


class MonitorFeed:
    """Subscriptions feeding a :class:`MonitorModel` (see the module docstring).

    ``discover_timeout_s`` bounds the wait for remote answers in each discovery round.
    Close it (or use it as a context manager) to drop the subscriptions and stop the thread.
    """

    def __init__(
        self,
        bus: Bus,
        *,
        namespace: str = "hb50",
        discover_period_s: float = DEFAULT_DISCOVER_PERIOD_S,
        discover_timeout_s: float = 0.3,
        estop: bool = True,
    ) -> None:
        """``estop``: declare the e-stop's publisher and client now (the full-screen app's
        Ctrl+E); ``False`` for a view with no keys (``--plain``, ``--once``), which then
        announces no publisher at all — a watch-only certificate's monitor was reported as
        denied for publishing ``hardware_command`` (a user's trial, 2026-12-06)."""
        self.bus = bus
        ns = namespace.strip("/")
        self.namespace = ns
        self._prefix = f"/{ns}/" if ns else "/"
        self._discover_period_s = discover_period_s
        self._discover_timeout_s = discover_timeout_s
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._topics: list[TopicInfo] | None = None
        self._subs: list[Subscriber[Any]] = []
        #: Arrival counters (undecoded taps) of the discovered remote topics, by topic.
        self._counters: dict[str, _ArrivalCounter] = {}
        # only the newest state matters; every heartbeat and report does (depth as the QoS's)
        self.state: _Arrivals[BridgeState] = self._arrivals("bridge_state_10hz", BridgeState, 1)
        self.robot: _Arrivals[RobotState] = self._arrivals("robot_state_10hz", RobotState, 1)
        self.heartbeat: _Arrivals[Status] = self._arrivals("heartbeat", Status, _EVENT_QOS.depth)
        self.node_health = self._subscribe(
            NODE_HEALTH_TOPIC, NodeHealthTable, LATCHED.with_(depth=16)
        )
        self.status: _Arrivals[Status] = self._arrivals("status", Status, _EVENT_QOS.depth)
        self.data_mirror = self._subscribe("bridge_data_10hz", BridgeData, RELIABLE)
        self.data: Subscriber[BridgeData] | None = self._subscribe(
            "bridge_data", BridgeData, MAB_RT
        )
        # a served array's state (jointbus serve): subscribed once discovery shows them
        # published with these types and no bridge on the namespace (_follow_array)
        self.joint_state: Subscriber[JointState] | None = None
        self.array_data: Subscriber[ActuatorArrayData] | None = None
        self._bridge_seen = False
        # created now, so that it is matched long before anyone needs the e-stop key
        self._hardware = (
            bus.publisher(self._prefix + "hardware_command", String, RELIABLE, node=_NODE)
            if estop
            else None
        )
        # a served array's e-stop is its service (it has no hardware_command)
        self._estop = (
            bus.client(
                self._prefix + "estop", String, ActuatorReply, timeout_s=_ESTOP_CALL_TIMEOUT_S
            )
            if estop
            else None
        )
        self._mirror_seen = False
        self._thread = threading.Thread(
            target=self._discover_loop, name="monitor-discovery", daemon=True
        )
        self._thread.start()

    def _subscribe(self, name: str, msg_type: type[_M], qos: QosProfile) -> Subscriber[_M]:
        sub = self.bus.subscribe(self._prefix + name, msg_type, None, qos, node=_NODE)
        self._subs.append(sub)
        return sub

    def _arrivals(self, name: str, msg_type: type[_M], depth: int) -> _Arrivals[_M]:
        """A realtime subscription whose callback dates each message by its arrival (module
        docstring), keeping the newest ``depth``."""
        topic = self._prefix + name
        arrivals: _Arrivals[_M] = _Arrivals(topic, depth)
        sub = self.bus.subscribe(
            topic, msg_type, arrivals.on_message, _EVENT_QOS, realtime=True, node=_NODE
        )
        self._subs.append(sub)
        return arrivals

    @property
    def data_topic(self) -> str:
        """The topic the joint rows come from now."""
        return self.data_mirror.topic if self.data is None else self.data.topic

    # ---- the app's refresh -----------------------------------------------------------------

    def poll(
        self, model: MonitorModel, now_ns: int | None = None, wall_ns: int | None = None
    ) -> None:
        """Hand ``model`` everything received since the last call (and sample the rates), as
        of ``now_ns`` (monotonic) = ``wall_ns`` (wall clock, to date the supervisors' stamped
        tables); both default to the clocks when the messages are taken, after the topics.

        The messages whose arrival is recorded (module docstring) are taken last and dated by
        their arrival, at most ``now_ns``; the model then hears that this monitor listened until
        ``now_ns`` (:meth:`MonitorModel.on_polled`)."""
        if self.bus.closed:
            return
        # Discovery first: following 30 new topics can take 0.5 s on a loaded host, and
        # what arrives meanwhile belongs to this poll, not to the next.
        with self._lock:
            topics, self._topics = self._topics, None
        if topics is not None:
            topics = [_without_monitor(t) for t in topics]
            model.set_topics(topics)
            published = {t.name for t in topics if t.publishers}
            if self.data_mirror.topic in published:
                self._use_mirror()
            if any(self._prefix + name in published for name in _BRIDGE_TOPICS):
                self._use_bridge(model)
            else:
                self._follow_array(topics)
            self._follow(topics, model)
        now = time.monotonic_ns() if now_ns is None else now_ns
        wall = time.time_ns() if wall_ns is None else wall_ns
        model.on_listening(now)
        model.heartbeats_on(self.heartbeat.topic)  # a rate per node (MonitorModel.heartbeats_on)
        for msg, at, at_wall in self.heartbeat.take_all(now, wall):
            model.on_heartbeat(msg, at, wall_ns=at_wall)
        for table in self.node_health.take_all():
            model.on_node_health(table, now, wall_ns=wall)
        for msg, at, _ in self.status.take_all(now, wall):
            model.on_status(msg, at)
        for state, at, _ in self.state.take_all(now, wall):
            model.on_bridge_state(state, at)
        for robot, at, _ in self.robot.take_all(now, wall):
            model.on_robot_state(robot, at)
        mirrored = _newest(self.data_mirror)
        if mirrored is not None:
            self._use_mirror()
            model.on_bridge_data(mirrored, now)
        elif self.data is not None and (data := _newest(self.data)) is not None:
            model.on_bridge_data(data, now)
        if self.joint_state is not None and (joints := _newest(self.joint_state)) is not None:
            model.on_joint_state(joints, now)
        if self.array_data is not None and (array := _newest(self.array_data)) is not None:
            model.on_array_data(array)
        model.on_polled(now)
        self._count(model, now)

    def _follow_array(self, topics: list[TopicInfo]) -> None:
        """Subscribe to a served array's ``joint_state`` and ``actarray/data`` once they are
        published with the array node's types (a ``sensor_msgs/JointState`` of the same name is
        not subscribed as another type: both sides would report the mismatch)."""
        if self._bridge_seen:
            return
        types = {t.name: t.type_names for t in topics if t.publishers}
        for attr, name, msg_type in (
            ("joint_state", "joint_state", JointState),
            ("array_data", "actarray/data", ActuatorArrayData),
        ):
            if getattr(self, attr) is None and types.get(self._prefix + name) == (
                msg_type.TYPE_NAME,
            ):
                setattr(self, attr, self._subscribe(name, msg_type, MAB_RT))

    def _use_bridge(self, model: MonitorModel) -> None:
        """An hb50 bridge publishes on this namespace: its view, and no array subscriptions."""
        model.on_bridge_published()
        self._bridge_seen = True
        for name in ("joint_state", "array_data"):
            sub: Subscriber[Any] | None = getattr(self, name)
            if sub is not None:
                sub.close()
                self._subs.remove(sub)
                setattr(self, name, None)

    def _use_mirror(self) -> None:
        """A mirror of the joint frames exists: stop receiving the 500 Hz topic."""
        if self.data is not None:
            self.data.close()
            self._subs.remove(self.data)
            self.data = None

    def _follow(self, topics: list[TopicInfo], model: MonitorModel) -> None:
        """Count the arrivals of every published topic of another process not counted yet, or
        tell the model why not (see the module docstring)."""
        transport = self.bus.transport
        if transport is None:
            return  # every topic is this process's: counted at its publishers
        published = {t.name for t in topics if t.publishers}
        registry = known_registry()
        for info in topics:
            name = info.name
            if name not in published or name in self._counters or self._local(name):
                continue  # counted already, or at its publisher in this process
            if name + MIRROR_SUFFIX in published:
                model.not_measured(
                    name, f"not received: its mirror {name + MIRROR_SUFFIX} is (saves the encoding)"
                )
            elif len(info.type_names) != 1 or info.type_name not in registry:
                model.not_measured(name, "not received: type unknown here")
            else:
                counter = _ArrivalCounter()
                counter.tap = transport.tap(name, counter.on_sample, _resolver(registry))
                self._counters[name] = counter

    def _local(self, topic: str) -> list[Publisher[Any]]:
        """The robot's publishers of ``topic`` in this process (not the monitor's own)."""
        return [p for p in self.bus.local_publishers(topic) if p.node != _NODE]

    def _count(self, model: MonitorModel, now: int) -> None:
        for info in self.bus.topics():
            publishers = self._local(info.name)
            if publishers:
                model.count(info.name, sum(p.stats().published for p in publishers), now)
        for name, counter in self._counters.items():
            total, first_ns, last_ns = counter.read()
            model.arrived(name, total, last_ns, first_ns)  # 0: counted, nothing arrived yet

    # ---- discovery -------------------------------------------------------------------------

    def _discover_loop(self) -> None:
        while not self._stop.is_set():
            try:
                topics = self.discover()
            except Exception:
                if self._stop.is_set() or self.bus.closed:
                    return  # the bus closed under us
                _LOG.exception("monitor: discovery failed; retrying")
                topics = None
            if topics is not None:
                with self._lock:
                    self._topics = topics
            self._stop.wait(self._discover_period_s)

    def discover(self) -> list[TopicInfo]:
        """The topics of this process and (with Zenoh) of every reachable bus."""
        if self.bus.transport is None:
            return self.bus.topics()
        return self.bus.discover(self._discover_timeout_s)

    # ---- lifecycle ---------------------------------------------------------------------------

    def send_estop(self) -> None:
        """Publish ``estop monitor`` on ``/<ns>/hardware_command`` and call ``/<ns>/estop`` with
        reason ``monitor`` (what ``jointbus estop`` sends: the hb50 bridge latches the first
        within one cycle, a served array node — ``jointbus serve`` — answers the second; each
        keeps the first reason). The call runs on a thread of its own: the caller (the app's
        key handler) does not wait for the answer, which is logged."""
        if self._hardware is None or self._estop is None:
            raise RuntimeError("this monitor feed was opened without its e-stop (estop=False)")
        self._hardware.publish(String("estop monitor"))
        threading.Thread(
            target=self._call_estop, args=(self._estop,), name="monitor-estop", daemon=True
        ).start()

    def _call_estop(self, estop: ServiceClient[String, ActuatorReply]) -> None:
        try:
            reply = estop.call(String("monitor"))
        except ServiceUnavailableError:
            return  # no array node serves it here: the bridge's topic is the path
        except ServiceError:
            _LOG.exception("monitor: e-stop call to %s failed", estop.name)
            return
        if not reply.accepted:
            _LOG.error("monitor: %s refused the e-stop: %s", estop.name, reply.text)

    def close(self) -> None:
        """Drop the subscriptions and stop the discovery thread. Idempotent."""
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=5.0)
        for sub in self._subs:
            sub.close()
        for counter in self._counters.values():
            counter.close()
        self._subs.clear()
        self._counters.clear()
        if self._hardware is not None:
            self._hardware.close()

    def __enter__(self) -> MonitorFeed:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


class _Arrivals(Generic[_M]):
    """The newest ``depth`` messages of one topic, each with its arrival (monotonic ns, wall ns),
    appended by a realtime subscription's callback (on the receiving thread: a deque append is
    thread-safe and all it does) and taken by :meth:`MonitorFeed.poll`."""

    __slots__ = ("_queue", "topic")

    def __init__(self, topic: str, depth: int) -> None:
        self.topic = topic
        self._queue: deque[tuple[_M, int, int]] = deque(maxlen=depth)

    def on_message(self, msg: _M) -> None:
        self._queue.append((msg, time.monotonic_ns(), time.time_ns()))

    def take_all(self, now_ns: int, wall_ns: int) -> list[tuple[_M, int, int]]:
        """Every message queued, oldest first, with its arrival no later than ``now_ns`` /
        ``wall_ns`` (a test's clock behind the real one: the poll's)."""
        out = []
        queue = self._queue
        while queue:
            msg, at, at_wall = queue.popleft()
            out.append((msg, min(at, now_ns), min(at_wall, wall_ns)))
        return out


class _ArrivalCounter:
    """Messages of one topic counted as they arrive, undecoded (the transport's raw tap, as
    ``jointbus topic hz`` counts), with the arrival times of the first and the last one
    (monotonic ns)."""

    __slots__ = ("_lock", "_state", "tap")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state = (0, 0, 0)
        self.tap: Any = None

    def on_sample(self, _publisher: int | None) -> None:
        now = time.monotonic_ns()
        with self._lock:
            total, first, _last = self._state
            self._state = (total + 1, first if total else now, now)

    def read(self) -> tuple[int, int, int]:
        """(messages so far, arrival of the first one, arrival of the last one)."""
        with self._lock:
            return self._state

    def close(self) -> None:
        if self.tap is not None:
            try:
                self.tap.undeclare()
            except Exception:  # the session may be closing already
                _LOG.debug("monitor: closing a tap failed", exc_info=True)
            self.tap = None


def _resolver(registry: TypeRegistry) -> Callable[[str], type[Message] | None]:
    """A type name's class if ``registry`` knows it, else None (what a DDS tap asks)."""

    def resolve(type_name: str) -> type[Message] | None:
        if type_name not in registry:
            return None
        cls: type[Message] = registry.by_type_name(type_name)
        return cls

    return resolve


def _without_monitor(topic: TopicInfo) -> TopicInfo:
    """``topic`` without the monitor's own endpoints in this process (``hardware_command``'s
    e-stop publisher is not something the robot publishes)."""

    def mine(e: EndpointInfo) -> bool:
        return e.local and e.node == _NODE

    if not any(mine(e) for e in (*topic.publishers, *topic.subscribers)):
        return topic
    return dataclasses.replace(
        topic,
        publishers=tuple(e for e in topic.publishers if not mine(e)),
        subscribers=tuple(e for e in topic.subscribers if not mine(e)),
    )


def _newest(sub: Subscriber[_M]) -> _M | None:
    """The newest queued message (older ones are consumed unseen: only the latest matters)."""
    if sub.closed:
        return None
    messages = sub.take_all()
    return messages[-1] if messages else None
