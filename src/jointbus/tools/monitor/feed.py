"""The monitor's bus side: polling subscriptions to the robot's slow topics, and discovery.

Where it sits: :mod:`jointbus.tools.monitor`, between :class:`jointbus.bus.Bus` and
:class:`~jointbus.tools.monitor.model.MonitorModel`. The app calls :meth:`MonitorFeed.poll` from its
refresh timer; the feed hands everything that arrived since the last call to the model, on that
one thread.

Topics (``/<ns>/...``, ``hb50`` by default):

==========================  ======================  =========================================
topic                       QoS asked               why
==========================  ======================  =========================================
``bridge_state_10hz``       RELIABLE                owner, mode, e-stop, drives (the mirror)
``robot_state_10hz``        RELIABLE                motion mode / type / gait (the mirror)
``heartbeat``               RELIABLE, depth 256     node liveliness
``node_health``             LATCHED, depth 16       supervisors' verdicts (dead before we came)
``status``                  RELIABLE, depth 256     events (every report, none lost)
``bridge_data_10hz``        RELIABLE                per-joint rows, when a mirror is offered
``bridge_data``             MAB_RT                  per-joint rows otherwise
==========================  ======================  =========================================

Every subscription *polls* (no callback): a publish only appends to the subscription's queue, with
no thread woken, and the monitor takes what is there at its own refresh rate (10 Hz). Only the
per-joint rows need ``BridgeData`` (temperatures and status words are in no other message); the
feed reads it from a ``bridge_data_10hz`` mirror as soon as discovery shows one, and otherwise from
the 500 Hz topic — newest sample only, best-effort, so in-process it costs the bridge one queue
append per cycle, and over Zenoh the bridge encodes it for the monitor.

A discovery thread refreshes the topic list every ``discover_period_s`` (for the rates panel);
rates come from publisher counters for topics of this process (exact, free) and from the feed's
subscriber counters for the others. A rate is only true if it counts every sample, so the feed
also *counts* every other discovered topic it can decode (``/tf``, ``joint_state``,
``diagnostics``, ...): a polling subscription with QoS ``MAB_RT`` (best effort, keep last 1), read
and emptied at each refresh, whose ``received`` counter gives the rate. Two kinds are not received,
and the panel says why instead of a rate: a topic with a ``<name>_10hz`` mirror (``bridge_data``:
receiving it would make the bridge encode 500 frames a second for the monitor), and a topic whose
type this process does not know.

What counting costs the robot: a topic is encoded only while a remote subscriber matches, so the
publishers now encode what the monitor counts (on the hb50 demo ``sim/ground_truth`` and
``joint_command`` at ≈ 500 Hz, four 100 Hz topics, the 10 Hz ones). Measured on the demo stack
(``jointbus demo --headless``, CPU time of its process over 20 s windows, a ``monitor --plain``
attached in every other window, this shared 2-vCPU host at load 5.7–7.6): 57.2 % / 53.4 % of one
core without the monitor, 65.0 % / 57.9 % with it — 4.5 to 7.9 points, the price of a true rate
for every topic while someone watches.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Final, TypeVar

from jointbus.bus import LATCHED, MAB_RT, RELIABLE, Bus, QosProfile, Subscriber, TopicInfo
from jointbus.messages.base import Message
from jointbus.messages.std_msgs import String
from jointbus.robots.hb50.messages import BridgeData, BridgeState, RobotState, Status
from jointbus.runtime import NODE_HEALTH_TOPIC, NodeHealthTable
from jointbus.tools.known_types import known_registry
from jointbus.tools.monitor.model import MonitorModel

__all__ = ["DEFAULT_DISCOVER_PERIOD_S", "MonitorFeed"]

_LOG = logging.getLogger("jointbus.tools.monitor")

#: How often the topic list is refreshed (s).
DEFAULT_DISCOVER_PERIOD_S: Final = 2.0
_NODE: Final = "monitor"
_EVENT_QOS: Final = RELIABLE.with_(depth=256)
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
    ) -> None:
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
        #: Count-only subscriptions of other discovered topics, by topic (for their rates).
        self._counters: dict[str, Subscriber[Any]] = {}
        self.state = self._subscribe("bridge_state_10hz", BridgeState, RELIABLE)
        self.robot = self._subscribe("robot_state_10hz", RobotState, RELIABLE)
        self.heartbeat = self._subscribe("heartbeat", Status, _EVENT_QOS)
        self.node_health = self._subscribe(
            NODE_HEALTH_TOPIC, NodeHealthTable, LATCHED.with_(depth=16)
        )
        self.status = self._subscribe("status", Status, _EVENT_QOS)
        self.data_mirror = self._subscribe("bridge_data_10hz", BridgeData, RELIABLE)
        self.data: Subscriber[BridgeData] | None = self._subscribe(
            "bridge_data", BridgeData, MAB_RT
        )
        # created now, so that it is matched long before anyone needs the e-stop key
        self._hardware = bus.publisher(
            self._prefix + "hardware_command", String, RELIABLE, node=_NODE
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

    @property
    def data_topic(self) -> str:
        """The topic the joint rows come from now."""
        return self.data_mirror.topic if self.data is None else self.data.topic

    # ---- the app's refresh -----------------------------------------------------------------

    def poll(
        self, model: MonitorModel, now_ns: int | None = None, wall_ns: int | None = None
    ) -> None:
        """Hand ``model`` everything received since the last call (and sample the rates), as
        arrived at ``now_ns`` (monotonic) = ``wall_ns`` (wall clock, to date the supervisors'
        stamped tables); both default to the clocks now."""
        now = time.monotonic_ns() if now_ns is None else now_ns
        wall = time.time_ns() if wall_ns is None else wall_ns
        if self.bus.closed:
            return
        model.on_listening(now)
        for msg in self.heartbeat.take_all():
            model.on_heartbeat(msg, now)
        for table in self.node_health.take_all():
            model.on_node_health(table, now, wall_ns=wall)
        for msg in self.status.take_all():
            model.on_status(msg, now)
        if (state := _newest(self.state)) is not None:
            model.on_bridge_state(state, now)
        if (robot := _newest(self.robot)) is not None:
            model.on_robot_state(robot, now)
        mirrored = _newest(self.data_mirror)
        if mirrored is not None:
            self._use_mirror()
            model.on_bridge_data(mirrored, now)
        elif self.data is not None and (data := _newest(self.data)) is not None:
            model.on_bridge_data(data, now)
        with self._lock:
            topics, self._topics = self._topics, None
        if topics is not None:
            model.set_topics(topics)
            if any(t.name == self.data_mirror.topic and t.publishers for t in topics):
                self._use_mirror()
            self._follow(topics, model)
        for counter in self._counters.values():
            counter.take_all()  # only its counter matters: keep the queue empty
        self._count(model, now)

    def _use_mirror(self) -> None:
        """A mirror of the joint frames exists: stop receiving the 500 Hz topic."""
        if self.data is not None:
            self.data.close()
            self._subs.remove(self.data)
            self.data = None

    def _follow(self, topics: list[TopicInfo], model: MonitorModel) -> None:
        """Count every published topic this feed does not receive yet, or tell the model why
        not (see the module docstring)."""
        published = {t.name for t in topics if t.publishers}
        received = {s.topic for s in self._subs} | set(self._counters)
        registry = known_registry()
        for info in topics:
            name = info.name
            if name not in published or name in received or self.bus.local_publishers(name):
                continue  # received already, or counted at its publisher in this process
            if name + MIRROR_SUFFIX in published:
                model.not_measured(
                    name, f"not received: its mirror {name + MIRROR_SUFFIX} is (saves the encoding)"
                )
            elif len(info.type_names) != 1 or info.type_name not in registry:
                model.not_measured(name, "not received: type unknown here")
            else:
                msg_type = registry.by_type_name(info.type_name)
                self._counters[name] = self.bus.subscribe(name, msg_type, None, MAB_RT, node=_NODE)

    def _count(self, model: MonitorModel, now: int) -> None:
        counted: set[str] = set()
        for info in self.bus.topics():
            publishers = self.bus.local_publishers(info.name)
            if publishers:
                model.count(info.name, sum(p.stats().published for p in publishers), now)
                counted.add(info.name)
        for sub in (*self._subs, *self._counters.values()):
            if sub.topic not in counted and not sub.closed:
                model.count(sub.topic, sub.received, now)

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
        """Publish ``estop monitor`` on ``/<ns>/hardware_command`` (what ``jointbus estop`` sends;
        the bridge latches it within one cycle and keeps the first reason)."""
        self._hardware.publish(String("estop monitor"))

    def close(self) -> None:
        """Drop the subscriptions and stop the discovery thread. Idempotent."""
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=5.0)
        for sub in (*self._subs, *self._counters.values()):
            sub.close()
        self._subs.clear()
        self._counters.clear()
        self._hardware.close()

    def __enter__(self) -> MonitorFeed:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _newest(sub: Subscriber[_M]) -> _M | None:
    """The newest queued message (older ones are consumed unseen: only the latest matters)."""
    if sub.closed:
        return None
    messages = sub.take_all()
    return messages[-1] if messages else None
