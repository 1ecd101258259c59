"""A node: a named unit of a robot program with publishers, subscriptions, timers and rate loops.

Where it sits: the centre of :mod:`jointbus.runtime`, on top of a :class:`jointbus.bus.Bus`; the
long-running nodes (:mod:`jointbus.nodes`) and user programs are nodes. It brings together the
heartbeat, the lifecycle, the timer thread, rate loops and the node's reports on the status and
diagnostics topics.

What every node does, whatever the user adds (the seed's rules):

- publishes a heartbeat (``Status``, level OK) every ``heartbeat_period_s`` (1 s) on
  ``/<ns>/heartbeat``, from construction until shutdown, in every lifecycle state;
- reports the QoS events of its own endpoints (missed deadlines, incompatible QoS, lost and
  malformed messages, type mismatches) and failures of its timers and loops on ``/<ns>/status``
  (rate-limited, see :mod:`jointbus.runtime.diagnostics`);
- publishes the timing of each running rate loop on ``/<ns>/diagnostics`` once a second
  (:class:`~jointbus.runtime.diagnostics.LoopDiagnostics`); :meth:`Node.loop_stats` reads it
  locally.

Services: :meth:`Node.create_service` / :meth:`Node.create_client` (request/reply, relative names
under the namespace); a refused request is reported on the status topic.

Threads: one timer thread per node (all its timers, see :mod:`jointbus.runtime.timer`), one
callback thread per node (a bus :class:`~jointbus.bus.Dispatcher`, so a slow callback of one node
does not delay another's), and one thread per rate loop.

Lifecycle (:mod:`jointbus.runtime.lifecycle`): a node is created UNCONFIGURED; ``configure()``,
``activate()``, ``deactivate()``, ``shutdown()`` (or ``start()`` = configure if needed + activate).
Entities created with ``managed=True`` (the default) work only while the node is ACTIVE:

- a managed publisher drops (and counts) messages published while inactive instead of raising, so
  a loop racing a deactivate does not crash;
- a managed subscription drops (and counts) messages arriving while inactive;
- managed timers are paused and rate loops stopped (their threads joined) on deactivate, and start
  again on activate (a timer one period later; a loop on a fresh grid with fresh statistics).

Publishers and subscriptions stay declared on the bus while inactive (no Zenoh re-discovery on
each activate). ``managed=False`` entities — the heartbeat, the status reports, a liveliness
monitor — work from creation until shutdown. Hooks ``on_configure``, ``on_activate``,
``on_deactivate``, ``on_shutdown`` (override them in a subclass) run inside the transitions:
``on_activate`` before timers and loops start (managed publishers already work, so it may publish
an initial message); ``on_deactivate`` after timers and loops stopped and before publishers stop
(so it may publish a last message, e.g. a zero command). Shutdown closes everything the node
created, sends a farewell heartbeat and stops the node's threads.

**One node per name.** A node refuses to start (:class:`DuplicateNodeError`) when a node of the
same name and namespace already runs on the bus, in this process or another (after waiting up to
2 s for a restarted process's predecessor to leave; :mod:`jointbus.runtime.namesakes`): two bridges
or two control nodes must never command one robot.

Topic names given to ``create_*`` may be relative (``"joint_command"``): they resolve to
``/<namespace>/joint_command``.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from functools import partial
from types import TracebackType
from typing import Any, Final, Generic

from jointbus.bus import (
    RELIABLE,
    SUBSCRIPTION_DEFAULT,
    Bus,
    Dispatcher,
    Publisher,
    PublisherStats,
    QosEvent,
    QosProfile,
    ServiceClient,
    ServiceServer,
    Subscriber,
    SubscriberStats,
    validate_topic_name,
)
from jointbus.bus.endpoint import EventCallback, MsgT
from jointbus.bus.service import ReqT, RespT
from jointbus.messages.status import Level, Status
from jointbus.runtime.diagnostics import (
    EVENT_REPORT_INTERVAL_S,
    EventCount,
    InputTotals,
    LoopDiagnostics,
    StatusReporter,
)
from jointbus.runtime.heartbeat import DEFAULT_HEARTBEAT_PERIOD_S, HEARTBEAT_QOS, Heartbeat
from jointbus.runtime.lifecycle import Lifecycle, LifecycleState, Transition
from jointbus.runtime.loop_stats import LoopStatsSnapshot
from jointbus.runtime.namesakes import live_namesakes
from jointbus.runtime.rate_loop import CycleInfo, RateLoop
from jointbus.runtime.realtime import RealtimeConfig, apply_realtime
from jointbus.runtime.timer import Timer, TimerThread

_LOG = logging.getLogger("jointbus.runtime")

#: Namespace of the Honey Badger topics (``/hb50/heartbeat``, ``/hb50/status``, ...).
DEFAULT_NAMESPACE: Final = "hb50"
#: How often the node publishes its loops' diagnostics (s).
DEFAULT_DIAGNOSTICS_PERIOD_S: Final = 1.0
#: How often queued status reports are flushed (s): bounds how late a QoS event is reported.
_STATUS_FLUSH_PERIOD_S: Final = 0.1
#: How long stopping a rate loop waits for its thread (s) before reporting it stuck.
LOOP_JOIN_TIMEOUT_S: Final = 2.0

#: The lifecycle hooks a subclass overrides (never reserved).
NODE_HOOKS: Final = (
    "on_configure", "on_activate", "on_deactivate", "on_shutdown", "event_counts"
)
#: Attributes :meth:`Node.__init__` sets on every node (reserved with the class's own names).
_NODE_INSTANCE_ATTRIBUTES: Final = frozenset(
    {
        "name",
        "bus",
        "namespace",
        "diagnostics_period_s",
        "status_publisher",
        "reporter",
        "heartbeat",
        "_lifecycle",
        "_lock",
        "_publishers",
        "_subscriptions",
        "_timer_list",
        "_loops",
        "_servers",
        "_internal",
        "_diagnostics",
        "_closed",
        "_endpoints_on",
        "_timers",
        "_dispatcher",
    }
)

_NODE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_NAMESPACE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*)?\Z")


class NodeError(RuntimeError):
    """Base of the node's own errors (lifecycle errors: :mod:`~jointbus.runtime.lifecycle`)."""


class NodeNameError(NodeError, ValueError):
    """A node name or namespace that is not a ROS 2 name; ``field`` says which, ``value`` what."""

    def __init__(self, field: str, value: object, expected: str) -> None:
        self.field = field
        self.value = value
        self.expected = expected
        super().__init__(f"node {field} {value!r} is invalid: expected {expected}")


class NodeReservedNameError(NodeError, AttributeError):
    """A subclass or a program tried to replace a name the :class:`Node` framework relies on.

    ``owner`` is the class whose code did it, ``attribute`` the name, ``reserved`` every reserved
    name (:data:`RESERVED_NODE_NAMES`). Raised when the class is defined (a method or class
    attribute of that name) or at the assignment (``self.start = ...``), so the mistake shows
    where it is made instead of as ``TypeError: 'NoneType' object is not callable`` much later.
    """

    def __init__(self, owner: str, attribute: str, reserved: frozenset[str]) -> None:
        self.owner = owner
        self.attribute = attribute
        self.reserved = reserved
        public = ", ".join(sorted(n for n in reserved if not n.startswith("_")))
        super().__init__(
            f"{owner} sets {attribute!r}, a name reserved by jointbus.runtime.Node "
            f"(replacing it breaks the node): choose another name, e.g. "
            f"'my_{attribute.strip('_')}'. Reserved: {public}, and every name Node uses that "
            f"starts with '_' ({len(reserved)} in all: jointbus.runtime.node.RESERVED_NODE_NAMES). "
            f"Override the hooks {', '.join(NODE_HOOKS)} instead of the lifecycle methods"
        )


class DuplicateNodeError(NodeError):
    """A node of the same name and namespace already runs on the bus: this one refuses to start.

    ``name`` and ``namespace`` are the node's, ``where`` says where the bus looked (hub port,
    router, connect endpoints, domain), ``others`` where the running one is (``"this process"``,
    ``"Zenoh session <zid>"``). Why refuse: two bridges or two control nodes would command one
    robot (see :mod:`jointbus.runtime.namesakes`).
    """

    def __init__(self, name: str, namespace: str, where: str, others: list[str]) -> None:
        self.name = name
        self.namespace = namespace
        self.where = where
        self.others = others
        super().__init__(
            f"node {name!r} in namespace /{namespace} already runs on the bus ({where}; "
            f"{', '.join(others)}): refusing to start a second one — stop the running one, or "
            "give this one another namespace or hub port"
        )


def quiet_tools_bookkeeping(bus: Bus, namespace: str) -> None:
    """Ask ``bus``'s Zenoh session (if any) not to report, under its access rules, the
    heartbeat and status publishers of hidden nodes (``_`` names: command-line tools) in
    ``namespace`` — a tool's own bookkeeping, not a command: a watch-only ``node list`` or
    monitor would otherwise be an alarm on every look. Every :class:`Node` asks it; so does a
    process that watches the robot's status without a node of its own (the demo's launcher,
    which logged the alarms a user's watch-only ``node list`` raised, 2026-12-06)."""
    if bus.zenoh is None:
        return
    prefix = f"/{namespace}/" if namespace else "/"
    bus.zenoh.quiet_for_hidden((prefix + "status", prefix + "heartbeat"))


def ensure_unique_node(bus: Bus, name: str, namespace: str) -> None:
    """Raise :class:`DuplicateNodeError` when a node ``name`` in ``namespace`` runs on ``bus``
    (after the restart window of :mod:`jointbus.runtime.namesakes`).

    :class:`Node` calls it before it announces anything; a program that must touch hardware
    before it creates its node (``jointbus serve``, the bridge's stack) calls it first, so a
    refused second instance never opens — or, on its way out, powers off — a running robot's
    actuators."""
    heartbeat_topic = f"/{namespace}/heartbeat" if namespace else "/heartbeat"
    others = live_namesakes(bus, name, namespace, heartbeat_topic)
    if others:
        transport = bus.transport
        where = transport.where if transport is not None else "in-process bus"
        raise DuplicateNodeError(name, namespace, where, others)


class NodeClosedError(NodeError):
    """An entity was created on (or a loop started by) a node that was shut down."""


def _chain_events(first: EventCallback, second: EventCallback | None) -> EventCallback:
    if second is None:
        return first

    def both(event: QosEvent) -> None:
        first(event)
        second(event)

    return both


class NodePublisher(Generic[MsgT]):
    """A node's publisher; a managed one publishes only while the node is ACTIVE.

    ``publisher`` is the bus publisher; ``dropped_inactive`` counts messages dropped because the
    node was not active.
    """

    def __init__(self, publisher: Publisher[MsgT], *, managed: bool) -> None:
        self.publisher = publisher
        self.managed = managed
        self.dropped_inactive = 0
        self._enabled = not managed

    @property
    def topic(self) -> str:
        """The topic name."""
        return self.publisher.topic

    @property
    def enabled(self) -> bool:
        """True when :meth:`publish` reaches the bus."""
        return self._enabled

    @property
    def closed(self) -> bool:
        """True once closed."""
        return self.publisher.closed

    @property
    def observed(self) -> bool:
        """True while someone listens (:attr:`jointbus.bus.Publisher.observed`)."""
        return self.publisher.observed

    def publish(self, msg: MsgT) -> None:
        """Publish ``msg`` (see :meth:`jointbus.bus.Publisher.publish`); dropped while inactive."""
        if self._enabled:
            self.publisher.publish(msg)
        else:
            self.dropped_inactive += 1

    def stats(self) -> PublisherStats:
        """The bus publisher's counters."""
        return self.publisher.stats()

    def close(self) -> None:
        """Undeclare the publisher. Idempotent."""
        self._enabled = False
        self.publisher.close()


class NodeSubscription(Generic[MsgT]):
    """A node's subscription; a managed one hands messages to its callback only while ACTIVE.

    ``subscriber`` is the bus subscriber; ``dropped_inactive`` counts messages dropped because the
    node was not active; ``refused`` counts the decoded messages the node refused
    (:meth:`note_refused`), published with the bus counters as the node's input totals
    (:meth:`totals`, which adds the malformed ones). A polling subscription (no
    callback) is never gated.
    """

    def __init__(self, callback: Callable[[MsgT], object] | None, *, managed: bool) -> None:
        self.managed = managed
        self.dropped_inactive = 0
        self.refused = 0
        self._callback = callback
        self._enabled = not managed
        self.subscriber: Subscriber[MsgT]  # set by the node right after construction

    @property
    def topic(self) -> str:
        """The topic name."""
        return self.subscriber.topic

    @property
    def enabled(self) -> bool:
        """True when arriving messages reach the callback."""
        return self._enabled

    @property
    def closed(self) -> bool:
        """True once closed."""
        return self.subscriber.closed

    def _deliver(self, msg: MsgT) -> None:
        if self._enabled:
            self._callback(msg)  # type: ignore[misc]
        else:
            self.dropped_inactive += 1

    def take(self) -> MsgT | None:
        """Pop the oldest queued message (polling subscriptions only)."""
        return self.subscriber.take()

    def latest(self) -> MsgT | None:
        """The newest message received (polling subscriptions only)."""
        return self.subscriber.latest()

    def stats(self) -> SubscriberStats:
        """The bus subscriber's counters."""
        return self.subscriber.stats()

    def note_refused(self, count: int = 1) -> None:
        """Count ``count`` *decoded* messages of this input that the node refused (a rejected
        command), toward the ``refused`` total of the node's diagnostics (any thread; the GIL
        makes the increment whole). A malformed message is counted refused by :meth:`totals`
        already: do not note it here, whatever the node reports about it."""
        self.refused += count

    def totals(self) -> InputTotals:
        """This input's running totals, in the one meaning :class:`InputTotals` gives them:
        ``received`` every message that arrived (decoded or malformed), ``malformed`` the
        undecodable ones, ``refused`` the malformed ones plus the decoded ones the node refused
        — so malformed ≤ refused ≤ received, and received − refused were accepted."""
        refused = self.refused  # read before the bus counters: a refusal follows its arrival
        s = self.subscriber.stats()
        return InputTotals(
            self.topic, s.received + s.malformed, s.malformed, s.malformed + refused, s.lost
        )

    def close(self) -> None:
        """Stop receiving. Idempotent."""
        self._enabled = False
        self.subscriber.close()


class NodeRateLoop:
    """A :class:`RateLoop` run on its own thread by a node while the node is ACTIVE.

    ``name`` names it (diagnostics, thread name); ``loop`` is the rate loop (``stats`` are live);
    ``error`` holds the exception that stopped the last run, if any; ``runs`` counts starts.
    """

    def __init__(
        self,
        name: str,
        loop: RateLoop,
        body: Callable[[CycleInfo], None],
        on_failure: Callable[[NodeRateLoop, Exception], None],
    ) -> None:
        self.name = name
        self.loop = loop
        self.body = body
        self.error: Exception | None = None
        self.runs = 0
        self._on_failure = on_failure
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def rate_hz(self) -> float:
        """The loop's rate (Hz)."""
        return self.loop.rate_hz

    @property
    def running(self) -> bool:
        """True while the loop thread runs."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    def stats(self) -> LoopStatsSnapshot:
        """Timing statistics of the current (or last) run."""
        return self.loop.stats.snapshot()

    def start(self) -> None:
        """Start the loop thread (no-op if it is running)."""
        if self.running:
            return
        self._stop = threading.Event()
        self.error = None
        self.runs += 1
        self._thread = threading.Thread(
            target=self._run, args=(self._stop,), name=f"loop-{self.name}", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = LOOP_JOIN_TIMEOUT_S) -> bool:
        """Ask the loop to end after its current cycle and wait up to ``timeout`` s.

        Returns False if the thread is still running (a body that blocks); called from the loop's
        own body it only asks, and returns True.
        """
        self._stop.set()
        thread = self._thread
        if thread is None or thread is threading.current_thread():
            return True
        thread.join(timeout)
        return not thread.is_alive()

    def _run(self, stop: threading.Event) -> None:
        try:
            self.loop.run(self.body, stop=stop)
        except Exception as exc:
            self.error = exc
            _LOG.exception("rate loop %r stopped: its body raised", self.name)
            self._on_failure(self, exc)


class Node:
    """A named node on ``bus``; see the module docstring. ``name`` is a ROS 2 node name.

    **Reserved names.** A subclass adds its own attributes and overrides the hooks ``on_configure``,
    ``on_activate``, ``on_deactivate`` and ``on_shutdown``; every other name the node uses is
    reserved (:data:`RESERVED_NODE_NAMES`): its methods and properties (``start``, ``configure``,
    ``activate``, ``deactivate``, ``shutdown``, ``close``, ``topic``, ``clock``, ``report``,
    ``create_publisher``, ``create_subscription``, ``create_timer``, ``create_rate_loop``,
    ``create_service``, ``create_client``, ``loop_stats``, ``publish_diagnostics``, ``rate_loops``,
    ``state``, ``active``, ``timers``, ``dispatcher``, ``status_topic``, ``heartbeat_topic``,
    ``diagnostics_topic``), the attributes it sets (``name``, ``bus``, ``namespace``,
    ``diagnostics_period_s``, ``status_publisher``, ``reporter``, ``heartbeat``) and its private
    ``_``-names. Defining one in a subclass raises :class:`NodeReservedNameError` when the class is
    created; assigning one (``self.start = pose``) raises it at the assignment and changes nothing.
    Why: a stored ``self.start`` used to replace ``Node.start()`` silently and fail much later as
    ``'NoneType' object is not callable``.

    ``namespace`` prefixes the node's standard topics (``/<namespace>/heartbeat``, ``status``,
    ``diagnostics``) and its relative topic names; ``heartbeat_period_s`` and
    ``diagnostics_period_s`` are in seconds; ``timers`` lets a test inject a
    :class:`TimerThread` (e.g. ``threaded=False`` with a fake clock) — the node closes it at
    shutdown. ``event_report_interval_s`` rate-limits status reports of the same problem.
    ``callback_realtime`` gives the node's callback thread real-time scheduling (SCHED_FIFO,
    affinity, timer slack; refusals are :class:`~jointbus.runtime.realtime.RealtimeWarning` s), for
    a node whose control step runs in a subscription callback (see :mod:`jointbus.stack`).
    ``callbacks_on_sibling_links``: the node's callbacks run on its process's same-host links'
    thread, where the process has them (:meth:`jointbus.bus.Bus.dispatcher`): for the node whose
    callback is its process's loop, so each frame by link costs one wake-up, not two.
    """

    def __init__(
        self,
        name: str,
        bus: Bus,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        heartbeat_period_s: float = DEFAULT_HEARTBEAT_PERIOD_S,
        diagnostics_period_s: float = DEFAULT_DIAGNOSTICS_PERIOD_S,
        timers: TimerThread | None = None,
        event_report_interval_s: float = EVENT_REPORT_INTERVAL_S,
        callback_realtime: RealtimeConfig | None = None,
        callbacks_on_sibling_links: bool = False,
    ) -> None:
        object.__setattr__(self, "_Node__building", True)  # Node's own attributes may be set
        try:
            self.__build(
                name,
                bus,
                namespace=namespace,
                heartbeat_period_s=heartbeat_period_s,
                diagnostics_period_s=diagnostics_period_s,
                timers=timers,
                event_report_interval_s=event_report_interval_s,
                callback_realtime=callback_realtime,
                callbacks_on_sibling_links=callbacks_on_sibling_links,
            )
        finally:
            object.__setattr__(self, "_Node__building", False)
        self.heartbeat.start()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        clashes = sorted(n for n in vars(cls) if n in RESERVED_NODE_NAMES)
        if clashes:
            raise NodeReservedNameError(cls.__name__, clashes[0], RESERVED_NODE_NAMES)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in RESERVED_NODE_NAMES and not self.__dict__.get("_Node__building", False):
            raise NodeReservedNameError(type(self).__name__, name, RESERVED_NODE_NAMES)
        object.__setattr__(self, name, value)

    def __build(
        self,
        name: str,
        bus: Bus,
        *,
        namespace: str,
        heartbeat_period_s: float,
        diagnostics_period_s: float,
        timers: TimerThread | None,
        event_report_interval_s: float,
        callback_realtime: RealtimeConfig | None,
        callbacks_on_sibling_links: bool,
    ) -> None:
        if not isinstance(name, str) or not _NODE_NAME.match(name):
            raise NodeNameError(
                "name", name, "letters, digits and '_', not starting with a digit (e.g. 'bridge')"
            )
        if not isinstance(namespace, str) or not _NAMESPACE.match(namespace):
            raise NodeNameError(
                "namespace", namespace, "'' or tokens of letters, digits and '_' joined by '/'"
            )
        ensure_unique_node(bus, name, namespace)
        self.name = name
        self.bus = bus
        self.namespace = namespace
        self.diagnostics_period_s = diagnostics_period_s
        self._lifecycle = Lifecycle(name)
        self._lock = threading.RLock()
        self._publishers: list[NodePublisher[Any]] = []
        self._subscriptions: list[NodeSubscription[Any]] = []
        self._timer_list: list[Timer] = []
        self._loops: dict[str, NodeRateLoop] = {}
        self._servers: list[ServiceServer[Any, Any]] = []
        self._internal: list[Publisher[Any]] = []
        self._diagnostics: Publisher[LoopDiagnostics] | None = None
        self._closed = False
        self._endpoints_on = False  # managed publishers/subscriptions work (set before on_activate)
        self._timers = timers if timers is not None else TimerThread(f"{name}-timers")
        self._timers.on_error = self._timer_failed
        self._dispatcher: Dispatcher | None = None
        try:
            self._dispatcher = bus.dispatcher(
                f"{name}-callbacks",
                None if callback_realtime is None else partial(apply_realtime, callback_realtime),
                on_sibling_links=callbacks_on_sibling_links,
            )
            # access rules on either side: no false alarms (first: a publisher meets the remote
            # subscribers as it is made)
            quiet_tools_bookkeeping(bus, self.namespace)
            self.status_publisher: Publisher[Status] = self._internal_publisher(
                self.topic("status"), Status, RELIABLE
            )
            self.reporter = StatusReporter(
                name, self.status_publisher, self._timers.clock, interval_s=event_report_interval_s
            )
            self._timers.add(
                _STATUS_FLUSH_PERIOD_S, self.reporter.flush, name=f"{name}-status-flush"
            )
            self.heartbeat = Heartbeat(
                self._internal_publisher(self.topic("heartbeat"), Status, HEARTBEAT_QOS),
                self._timers,
                name,
                period_s=heartbeat_period_s,
                describe_state=lambda: self._lifecycle.state.value,
            )
        except BaseException:
            self._release()
            raise

    # ---- names and time ----------------------------------------------------------------------
    def topic(self, name: str) -> str:
        """``name`` as a fully qualified topic: relative names go under ``/<namespace>/``."""
        if not isinstance(name, str) or not name:
            validate_topic_name(name)  # raises TopicNameError naming the value
        if not name.startswith("/"):
            name = f"/{self.namespace}/{name}" if self.namespace else f"/{name}"
        return validate_topic_name(name)

    @property
    def status_topic(self) -> str:
        """``/<namespace>/status``."""
        return self.topic("status")

    @property
    def heartbeat_topic(self) -> str:
        """``/<namespace>/heartbeat``."""
        return self.topic("heartbeat")

    @property
    def diagnostics_topic(self) -> str:
        """``/<namespace>/diagnostics``."""
        return self.topic("diagnostics")

    def clock(self) -> int:
        """The node's monotonic clock (ns): its timer thread's clock (injectable for tests)."""
        return self._timers.clock()

    @property
    def timers(self) -> TimerThread:
        """The node's timer thread."""
        return self._timers

    @property
    def dispatcher(self) -> Dispatcher:
        """The thread running this node's subscription callbacks."""
        if self._dispatcher is None:  # only after a failed __init__
            raise NodeClosedError(f"node {self.name!r} has no callback thread")
        return self._dispatcher

    # ---- lifecycle ---------------------------------------------------------------------------
    @property
    def state(self) -> LifecycleState:
        """The lifecycle state."""
        return self._lifecycle.state

    @property
    def active(self) -> bool:
        """True in the ACTIVE state."""
        return self._lifecycle.state is LifecycleState.ACTIVE

    def on_configure(self) -> None:
        """Hook: UNCONFIGURED → INACTIVE (create entities, load parameters). Raise to refuse."""

    def on_activate(self) -> None:
        """Hook: INACTIVE → ACTIVE, before managed timers and loops start. Raise to refuse."""

    def on_deactivate(self) -> None:
        """Hook: ACTIVE → INACTIVE, after timers and loops stopped, before publishers stop."""

    def on_shutdown(self) -> None:
        """Hook: → FINALIZED, before the node's entities are closed."""

    def configure(self) -> LifecycleState:
        """UNCONFIGURED → INACTIVE; raises LifecycleError / LifecycleHookError (state unchanged)."""
        return self._lifecycle.run(Transition.CONFIGURE, self.on_configure)

    def activate(self) -> LifecycleState:
        """INACTIVE → ACTIVE: managed publishers, subscriptions, timers and loops start."""
        return self._lifecycle.run(Transition.ACTIVATE, self._activate_work)

    def deactivate(self) -> LifecycleState:
        """ACTIVE → INACTIVE: managed timers pause, loops stop, publishers/subscriptions drop."""
        return self._lifecycle.run(Transition.DEACTIVATE, self._deactivate_work)

    def shutdown(self) -> LifecycleState:
        """→ FINALIZED: deactivate if active, close everything; a no-op once finalized."""
        if self._lifecycle.state is LifecycleState.FINALIZED:
            return LifecycleState.FINALIZED
        return self._lifecycle.run(Transition.SHUTDOWN, self._shutdown_work)

    def start(self) -> LifecycleState:
        """Configure (if unconfigured) and activate: the one call a simple program needs."""
        if self._lifecycle.state is LifecycleState.UNCONFIGURED:
            self.configure()
        return self.activate()

    def close(self) -> None:
        """Same as :meth:`shutdown` (for ``with Node(...) as node:``)."""
        self.shutdown()

    def __enter__(self) -> Node:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.shutdown()

    def _activate_work(self) -> None:
        with self._lock:
            self._set_endpoints_enabled(True)
            try:
                self.on_activate()
            except BaseException:
                self._set_endpoints_enabled(False)
                raise
            for timer in self._timer_list:
                if not timer.cancelled:
                    timer.start()
            for loop in self._loops.values():
                loop.start()

    def _deactivate_work(self) -> None:
        self._stop_work()
        try:
            self.on_deactivate()
        finally:
            self._set_endpoints_enabled(False)

    def _shutdown_work(self) -> None:
        errors: list[Exception] = []
        if self._lifecycle.state is LifecycleState.ACTIVE:
            try:
                self._deactivate_work()
            except Exception as exc:
                errors.append(exc)
        try:
            self.on_shutdown()
        except Exception as exc:
            errors.append(exc)
        self._release()
        if errors:
            raise errors[0]

    def _stop_work(self) -> None:
        """Pause managed timers (waiting for a running callback) and stop the loops."""
        with self._lock:
            timers = list(self._timer_list)
            loops = list(self._loops.values())
        for timer in timers:
            timer.pause()
        self._timers.wait_idle()
        for loop in loops:
            if not loop.stop():
                self.report(
                    Level.ERROR,
                    f"rate loop {loop.name!r} did not stop within {LOOP_JOIN_TIMEOUT_S:g} s "
                    "(its body blocks); it will end after its current cycle",
                )

    def _set_endpoints_enabled(self, enabled: bool) -> None:
        with self._lock:
            object.__setattr__(self, "_endpoints_on", enabled)
            for pub in self._publishers:
                if pub.managed:
                    pub._enabled = enabled and not pub.closed
            for sub in self._subscriptions:
                if sub.managed:
                    sub._enabled = enabled and not sub.closed

    def _release(self) -> None:
        """Close everything the node created and stop its threads (shutdown, failed __init__)."""
        with self._lock:
            object.__setattr__(self, "_closed", True)
            loops = list(self._loops.values())
            timers = list(self._timer_list)
            publishers = list(self._publishers)
            subscriptions = list(self._subscriptions)
            servers = list(self._servers)
        for server in servers:
            server.close()
        for loop in loops:
            loop.stop()
        for timer in timers:
            timer.cancel()
        for sub in subscriptions:
            sub.close()
        for pub in publishers:
            pub.close()
        heartbeat: Heartbeat | None = getattr(self, "heartbeat", None)
        if heartbeat is not None:
            heartbeat.stop(farewell=True)
        reporter: StatusReporter | None = getattr(self, "reporter", None)
        if reporter is not None:
            reporter.interval_ns = 0
            reporter.flush()
        self._timers.close()
        for internal in self._internal:
            internal.close()
        if self._dispatcher is not None:
            self._dispatcher.close()

    # ---- entities ----------------------------------------------------------------------------
    def _check_open(self, what: str) -> None:
        if self._closed:
            raise NodeClosedError(f"node {self.name!r} is shut down: cannot {what}")

    def _internal_publisher(
        self, topic: str, msg_type: type[MsgT], qos: QosProfile
    ) -> Publisher[MsgT]:
        reporter: StatusReporter | None = getattr(self, "reporter", None)
        pub = self.bus.publisher(
            topic,
            msg_type,
            qos,
            node=self.name,
            namespace=self.namespace,
            on_event=reporter.record_event if reporter is not None else None,
        )
        self._internal.append(pub)
        return pub

    def _event_hook(self, user: EventCallback | None) -> EventCallback:
        return _chain_events(self.reporter.record_event, user)

    def create_publisher(
        self,
        topic: str,
        msg_type: type[MsgT],
        qos: QosProfile | str = RELIABLE,
        *,
        managed: bool = True,
        on_event: EventCallback | None = None,
    ) -> NodePublisher[MsgT]:
        """A publisher of ``msg_type`` on ``topic`` (relative names go under the namespace).

        Managed publishers publish only while the node is ACTIVE. QoS events go to the status
        topic and to ``on_event``. Bus errors (TopicNameError, QosError, TopicTypeError) propagate.
        """
        self._check_open("create a publisher")
        pub = self.bus.publisher(
            self.topic(topic),
            msg_type,
            qos,
            node=self.name,
            namespace=self.namespace,
            on_event=self._event_hook(on_event),
        )
        handle = NodePublisher(pub, managed=managed)
        with self._lock:
            handle._enabled = not managed or self._endpoints_on
            self._publishers.append(handle)
        return handle

    def create_subscription(
        self,
        topic: str,
        msg_type: type[MsgT],
        callback: Callable[[MsgT], object] | None,
        qos: QosProfile | str = SUBSCRIPTION_DEFAULT,
        *,
        realtime: bool = False,
        managed: bool = True,
        on_event: EventCallback | None = None,
        report_events: bool = True,
    ) -> NodeSubscription[MsgT]:
        """Subscribe to ``topic``; ``callback`` runs on the node's callback thread.

        With ``realtime`` it runs in the publisher's (or Zenoh's) thread instead — see
        :meth:`jointbus.bus.Bus.subscribe`. ``callback=None`` makes a polling subscription. A
        managed subscription's callback is called only while the node is ACTIVE. Without ``qos``
        it is :data:`~jointbus.bus.SUBSCRIPTION_DEFAULT` (best effort: it also receives the
        best-effort 500 Hz topics), as for :meth:`jointbus.bus.Bus.subscribe`.
        ``report_events=False`` hands the subscription's QoS events to ``on_event`` only, for a
        node that reports them itself (the bridge turns an undecodable command into a rejection;
        the generic WARN would report the same sample twice).
        """
        self._check_open("create a subscription")
        handle: NodeSubscription[MsgT] = NodeSubscription(callback, managed=managed)
        handle.subscriber = self.bus.subscribe(
            self.topic(topic),
            msg_type,
            handle._deliver if callback is not None else None,
            qos,
            realtime=realtime,
            node=self.name,
            namespace=self.namespace,
            on_event=self._event_hook(on_event) if report_events else on_event,
            dispatcher=self._dispatcher,
        )
        with self._lock:
            handle._enabled = not managed or self._endpoints_on or callback is None
            self._subscriptions.append(handle)
        return handle

    def create_service(
        self,
        name: str,
        request_type: type[ReqT],
        response_type: type[RespT],
        handler: Callable[[ReqT], RespT],
        *,
        decode_error_text: Callable[[Exception], str] = str,
    ) -> ServiceServer[ReqT, RespT]:
        """Serve ``name`` (relative names go under the namespace) with ``handler``; see
        :meth:`jointbus.bus.Bus.serve` (also for ``decode_error_text``). Refused requests are
        reported on the status topic (WARN); the server is closed at shutdown."""
        self._check_open("create a service")

        def refused(service: str, reason: str) -> None:
            self.report(Level.WARN, f"service {service}: refused: {reason}", key=service)

        server = self.bus.serve(
            self.topic(name),
            request_type,
            response_type,
            handler,
            node=self.name,
            namespace=self.namespace,
            on_refused=refused,
            decode_error_text=decode_error_text,
        )
        with self._lock:
            self._servers.append(server)
        return server

    def create_client(
        self,
        name: str,
        request_type: type[ReqT],
        response_type: type[RespT],
        *,
        timeout_s: float = 1.0,
    ) -> ServiceClient[ReqT, RespT]:
        """A client of service ``name`` (relative names go under the namespace)."""
        self._check_open("create a client")
        return self.bus.client(self.topic(name), request_type, response_type, timeout_s=timeout_s)

    def create_timer(
        self,
        period_s: float,
        callback: Callable[[], object],
        *,
        name: str = "",
        managed: bool = True,
        immediately: bool = False,
    ) -> Timer:
        """Call ``callback()`` every ``period_s`` s on the node's timer thread.

        A managed timer runs while the node is ACTIVE (first call one period after activation, or
        at once with ``immediately``); an unmanaged one from now until shutdown. Exceptions in the
        callback are reported on the status topic and the timer keeps running.
        """
        self._check_open("create a timer")
        with self._lock:
            run = not managed or self.active
            timer = self._timers.add(
                period_s, callback, name=name, start=run, immediately=immediately
            )
            if managed:
                self._timer_list.append(timer)
        return timer

    def create_rate_loop(
        self,
        rate_hz: float,
        body: Callable[[CycleInfo], None],
        *,
        name: str = "loop",
        spin_s: float = 200e-6,
        freeze_gc: bool = False,
        realtime: RealtimeConfig | None = None,
        stats_window_s: float = 10.0,
        adaptive_spin: bool = False,
    ) -> NodeRateLoop:
        """Run ``body(cycle)`` at ``rate_hz`` on a thread of its own while the node is ACTIVE.

        The options are :class:`RateLoop`'s. The loop's statistics are in :meth:`loop_stats` and
        on the diagnostics topic. A body that raises stops the loop and is reported (ERROR) on the
        status topic; the next activate starts it again. ``name`` must be unique in the node.
        """
        self._check_open("create a rate loop")
        loop = RateLoop(
            rate_hz,
            spin_s=spin_s,
            freeze_gc=freeze_gc,
            realtime=realtime,
            stats_window_s=stats_window_s,
            adaptive_spin=adaptive_spin,
        )
        handle = NodeRateLoop(name, loop, body, self._loop_failed)
        with self._lock:
            if name in self._loops:
                raise NodeNameError("rate loop name", name, "a name not used by another loop")
            if self._diagnostics is None:
                diagnostics = self._internal_publisher(
                    self.diagnostics_topic, LoopDiagnostics, RELIABLE
                )
                object.__setattr__(self, "_diagnostics", diagnostics)
                self._timers.add(
                    self.diagnostics_period_s,
                    self.publish_diagnostics,
                    name=f"{self.name}-diagnostics",
                )
            self._loops[name] = handle
            if self.active:
                handle.start()
        return handle

    @property
    def rate_loops(self) -> dict[str, NodeRateLoop]:
        """The node's rate loops by name."""
        with self._lock:
            return dict(self._loops)

    def loop_stats(self) -> dict[str, LoopStatsSnapshot]:
        """Timing statistics of every rate loop (current or last run), by loop name."""
        return {name: loop.stats() for name, loop in self.rate_loops.items()}

    def publish_diagnostics(self) -> int:
        """Publish one LoopDiagnostics per running loop now, each with the node's input totals
        (the diagnostics timer calls this)."""
        pub = self._diagnostics
        if pub is None or pub.closed:
            return 0
        sent = 0
        inputs: tuple[InputTotals, ...] | None = None
        events: tuple[EventCount, ...] = ()
        for name, loop in self.rate_loops.items():
            if loop.running:
                if inputs is None:
                    inputs = self._input_totals()
                    events = tuple(
                        EventCount(kind, count) for kind, count in self.event_counts().items()
                    )
                pub.publish(
                    LoopDiagnostics.from_snapshot(
                        self.name, name, loop.rate_hz, loop.stats(), inputs=inputs, events=events
                    )
                )
                sent += 1
        return sent

    def event_counts(self) -> dict[str, int]:
        """*Hook*: counts, by kind, of the events this node has reported since it started, for
        its diagnostics (default: none). An array node counts its limit events."""
        return {}

    def _input_totals(self) -> tuple[InputTotals, ...]:
        """Per topic the node subscribes to (sorted), the running totals of messages received,
        malformed, refused and lost (:class:`InputTotals`; two subscriptions of one topic add
        up)."""
        with self._lock:
            subscriptions = [s for s in self._subscriptions if not s.closed]
        by_topic: dict[str, InputTotals] = {}
        for sub in subscriptions:
            t = sub.totals()
            seen = by_topic.get(t.topic)
            if seen is not None:
                t = InputTotals(
                    t.topic,
                    seen.received + t.received,
                    seen.malformed + t.malformed,
                    seen.refused + t.refused,
                    seen.lost + t.lost,
                )
            by_topic[t.topic] = t
        return tuple(by_topic[k] for k in sorted(by_topic))

    # ---- reports -----------------------------------------------------------------------------
    def report(self, level: Level, text: str, data: bytes = b"", *, key: str = "") -> None:
        """Queue a ``Status`` of ``level`` from this node on the status topic.

        Reports with the same ``key`` (default: the text) are published at most once per
        ``event_report_interval_s``, the repeats counted in the next one; they go out from the
        node's timer thread within 0.1 s.
        """
        self.reporter.record(Level(level), ("report", key or text), text, data)

    def _timer_failed(self, timer: Timer, exc: Exception) -> None:
        self.report(
            Level.ERROR,
            f"timer {timer.name!r} raised {type(exc).__name__}: {exc} (error {timer.errors})",
            key=f"timer:{timer.name}",
        )

    def _loop_failed(self, loop: NodeRateLoop, exc: Exception) -> None:
        self.report(
            Level.ERROR,
            f"rate loop {loop.name!r} stopped: its body raised {type(exc).__name__}: {exc}",
            key=f"loop:{loop.name}",
        )

    def __repr__(self) -> str:
        return f"Node({self.name!r}, namespace={self.namespace!r}, {self.state.value})"


#: Every name a :class:`Node` subclass may not define or assign (see :class:`Node`): the class's
#: methods and properties except the hooks, and the attributes ``Node.__init__`` sets.
RESERVED_NODE_NAMES: Final = (
    frozenset(n for n in vars(Node) if not (n.startswith("__") and n.endswith("__")))
    - frozenset(NODE_HOOKS)
    | _NODE_INSTANCE_ATTRIBUTES
)


__all__ = [
    "DEFAULT_DIAGNOSTICS_PERIOD_S",
    "DEFAULT_NAMESPACE",
    "LOOP_JOIN_TIMEOUT_S",
    "NODE_HOOKS",
    "RESERVED_NODE_NAMES",
    "DuplicateNodeError",
    "Node",
    "NodeClosedError",
    "NodeError",
    "NodeNameError",
    "NodePublisher",
    "NodeRateLoop",
    "NodeReservedNameError",
    "NodeSubscription",
    "ensure_unique_node",
]
