"""The liveliness monitor: which nodes are alive, from their heartbeats; STALE when one goes silent.

Where it sits: :mod:`jointbus.runtime`, on top of :class:`jointbus.runtime.node.Node` (it uses the
node's subscription, timer thread and status publisher). The ``jointbus`` monitor, the bridge (to
notice a dead controller) and user supervisors create one.

The contract (seed 001 and the issue): every node publishes a heartbeat at least once a second on
``/<ns>/heartbeat``; the monitor marks a node **STALE** when no heartbeat came for more than
``timeout_s`` (1.5 s), **OK** again when one arrives, and publishes every change as a ``Status`` on
``/<ns>/status`` — level STALE or OK, ``reporting_node`` = the monitoring node, the text naming the
watched node, ``data`` = the watched node's name (UTF-8) for programs. User callbacks get the same
change as a :class:`NodeHealth`.

How, and why:

- A heartbeat only records its arrival time (on the monitor node's clock, never the sender's stamp:
  clocks of two hosts disagree); all decisions are taken by a check on the node's timer thread every
  ``check_period_s`` (50 ms), so changes are published in order from one thread, and a silence is
  detected within ``timeout_s + check_period_s`` of the last heartbeat. The heartbeat subscription
  is a *realtime* one (no queue, no thread hop): recording a time is cheaper than a hand-over.
- A node that shuts down cleanly sends a ``"shutdown"`` heartbeat; the monitor reports it once
  (level OK, ``shut_down=True``) and stops expecting heartbeats from it.
- **Faster detection of a dead process over Zenoh.** Every jointbus endpoint announces a Zenoh
  liveliness token that Zenoh withdraws the moment the session's link closes — a SIGKILLed process's
  sockets are closed by the kernel, so that is milliseconds, not a timeout. With ``watch_tokens``
  (default) and Zenoh attached, the monitor also watches the tokens of remote heartbeat publishers:
  when the last one of a node is withdrawn and no farewell heartbeat follows within
  ``token_grace_s`` (100 ms — the farewell and the withdrawal travel separately), the node is STALE
  at once — also when the monitor joined after the node's last heartbeat and knew it only by its
  token (a ``jointbus node list`` started between two heartbeats). The heartbeat rule still
  holds on its own (a hung process keeps its link but stops beating; a token may never have been
  seen), so the tokens only ever make detection earlier.
- **A death is judged once, whatever follows it.** A withdrawal is kept until a check has judged
  it, and it is judged for the incarnation that left: the token of a restarted process of the same
  name (the layout respawns a killed control node at once; a ``Node`` starts the moment its
  predecessor's token is gone) does not erase it, nor does its first heartbeat. The node is
  STALE, then OK again at the new incarnation's next heartbeat. A node already STALE by its
  silence (a SIGSTOPped process) whose process then exits is reported again — still STALE, now
  "left the Zenoh network": a hung process and a dead one call for different actions.
- **Verdicts that outlive the moment.** The status reports are volatile: an observer that joins
  after a node died sees no heartbeat, no token and no report — absence, not death. So after
  every change the monitor also publishes its whole table of verdicts, latched, on
  ``/<ns>/node_health`` (:class:`~jointbus.runtime.node_health.NodeHealthTable`): a node this
  monitor saw and that died is STALE for every later ``jointbus node list`` and monitor too.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final

from jointbus.bus import LATCHED, BusError, EndpointInfo, Publisher
from jointbus.bus.ros_graph import ADMIN_SPACE
from jointbus.messages.status import Level, Status
from jointbus.messages.std_msgs import Header
from jointbus.runtime.heartbeat import (
    DEFAULT_HEARTBEAT_PERIOD_S,
    HEARTBEAT_QOS,
    HEARTBEAT_SHUTDOWN,
)
from jointbus.runtime.node import Node, NodeSubscription
from jointbus.runtime.node_health import (
    MAX_NODES,
    NODE_HEALTH_TOPIC,
    NodeHealthEntry,
    NodeHealthTable,
)
from jointbus.runtime.timer import Timer

if TYPE_CHECKING:
    import zenoh

_LOG = logging.getLogger("jointbus.runtime")

#: The issue's timeout (s): a node is STALE after this long without a heartbeat.
DEFAULT_LIVELINESS_TIMEOUT_S: Final = 1.5
#: How often the monitor checks (s); detection is within timeout + this.
DEFAULT_CHECK_PERIOD_S: Final = 0.05
#: How long after a withdrawn heartbeat token the monitor waits for a farewell heartbeat (s).
DEFAULT_TOKEN_GRACE_S: Final = 0.1

_NS_PER_S = 1_000_000_000


class LivelinessConfigError(ValueError):
    """A monitor parameter out of range (names the field, the value and what was expected)."""

    def __init__(self, field: str, value: object, expected: str) -> None:
        self.field = field
        self.value = value
        self.expected = expected
        super().__init__(f"LivelinessMonitor {field} = {value!r} is invalid: expected {expected}")


@dataclass(frozen=True, slots=True)
class NodeHealth:
    """What the monitor knows about one node, at its last change.

    ``level`` is ``Level.OK`` or ``Level.STALE``; times are on the monitor's monotonic clock (ns):
    ``last_seen_ns`` = arrival of the last heartbeat, ``since_ns`` = when ``level`` was decided.
    ``heartbeats`` counts heartbeats received; ``lifecycle`` is the lifecycle state the node last
    announced (``"active"``, ...); ``shut_down`` is True after a clean shutdown; ``reason`` is the
    text published with the change.
    """

    name: str
    level: Level
    last_seen_ns: int
    since_ns: int
    heartbeats: int
    lifecycle: str
    shut_down: bool
    reason: str

    @property
    def stale(self) -> bool:
        """True when the node is STALE."""
        return self.level is Level.STALE


class _Watched:
    """Mutable record of one node (guarded by the monitor's lock)."""

    __slots__ = (
        "farewell_pending",
        "health",
        "heartbeats",
        "last_seen_ns",
        "lifecycle",
        "shut_down",
        "tokens",
        "withdrawn_ns",
        "withdrawn_silence_ns",
    )

    def __init__(self, now_ns: int) -> None:
        self.last_seen_ns = now_ns
        self.heartbeats = 0
        self.lifecycle = ""
        self.shut_down = False
        self.farewell_pending = False
        self.health: NodeHealth | None = None  # None until the first check reports the node
        self.tokens: set[int] = set()  # gids of live remote heartbeat publishers of this node
        # when a token of it was withdrawn with no farewell, until a check judged it; and how
        # long after its last heartbeat then (a restart's heartbeats may follow before the check)
        self.withdrawn_ns: int | None = None
        self.withdrawn_silence_ns = 0


class LivelinessMonitor:
    """Watches the heartbeats on ``node``'s namespace; see the module docstring.

    ``timeout_s``: silence (s) after which a node is STALE; ``check_period_s``: how often to check
    (s); ``on_change``: called with the new :class:`NodeHealth` of each change (on the node's
    timer thread); ``ignore``: node names not to watch; ``watch``: when given, the only node
    names to watch (a control node watching its bridge); ``hidden=False`` leaves out hidden nodes
    (names starting with ``_``, as in ROS 2: CLI processes that come and go, whose arrivals
    would only add noise to the robot's log); ``watch_tokens``: also use Zenoh liveliness tokens
    (when the bus has Zenoh); ``token_grace_s``: see the module docstring.
    """

    def __init__(
        self,
        node: Node,
        *,
        timeout_s: float = DEFAULT_LIVELINESS_TIMEOUT_S,
        check_period_s: float = DEFAULT_CHECK_PERIOD_S,
        on_change: Callable[[NodeHealth], object] | None = None,
        ignore: Iterable[str] = (),
        watch: Iterable[str] | None = None,
        hidden: bool = True,
        watch_tokens: bool = True,
        token_grace_s: float = DEFAULT_TOKEN_GRACE_S,
    ) -> None:
        for field, value in (
            ("timeout_s", timeout_s),
            ("check_period_s", check_period_s),
            ("token_grace_s", token_grace_s),
        ):
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1e6:
                raise LivelinessConfigError(field, value, "a duration > 0 s")
        self.node = node
        self.timeout_s = float(timeout_s)
        self.check_period_s = float(check_period_s)
        self.token_grace_s = float(token_grace_s)
        self._timeout_ns = round(timeout_s * _NS_PER_S)
        self._grace_ns = round(token_grace_s * _NS_PER_S)
        self.late_s = max(self.timeout_s - DEFAULT_HEARTBEAT_PERIOD_S, 4 * self.check_period_s)
        """A check this long (s) after the previous one means this process did not run: no
        silence is judged from it (module docstring)."""
        self._late_ns = round(self.late_s * _NS_PER_S)
        self._last_check_ns: int | None = None
        self._resumed_ns: int | None = None  # the last check after a stall of this process
        self.own_stalls = 0
        """Checks that came late (this process stopped or starved), each reported once."""
        self._ignore = frozenset(ignore)
        self._only = None if watch is None else frozenset(watch)
        self._hidden = hidden
        self._callbacks: list[Callable[[NodeHealth], object]] = []
        if on_change is not None:
            self._callbacks.append(on_change)
        self._lock = threading.Lock()
        self._watched: dict[str, _Watched] = {}
        self._token_sub: Any = None
        self._table_pub: Publisher[NodeHealthTable] | None = None
        self._closed = False
        self.changes = 0
        self._subscription: NodeSubscription[Status] = node.create_subscription(
            node.heartbeat_topic,
            Status,
            self._on_heartbeat,
            HEARTBEAT_QOS,
            realtime=True,
            managed=False,
        )
        self._timer: Timer = node.create_timer(
            check_period_s, self.check, name=f"{node.name}-liveliness", managed=False
        )
        if watch_tokens:
            self._watch_tokens()

    # ---- queries -----------------------------------------------------------------------------
    def states(self) -> dict[str, NodeHealth]:
        """Every node reported so far, by name (its latest :class:`NodeHealth`)."""
        with self._lock:
            return {n: w.health for n, w in self._watched.items() if w.health is not None}

    def current(self) -> dict[str, NodeHealth]:
        """Every node reported so far, by name, as of now: ``level``, ``since_ns`` and ``reason``
        of its latest change, with ``last_seen_ns``, ``heartbeats`` and ``lifecycle`` of its latest
        heartbeat.

        :meth:`states` keeps each change as it was published (a node OK for an hour still carries
        the ``last_seen_ns`` of the heartbeat that made it OK); a table of "last seen" ages, such
        as ``jointbus node list``, needs the arrival of the newest heartbeat instead."""
        with self._lock:
            return {
                n: replace(
                    w.health,
                    last_seen_ns=w.last_seen_ns,
                    heartbeats=w.heartbeats,
                    lifecycle=w.lifecycle,
                )
                for n, w in self._watched.items()
                if w.health is not None
            }

    def health(self, name: str) -> NodeHealth | None:
        """The latest health of node ``name``, or None if it was never reported."""
        with self._lock:
            watched = self._watched.get(name)
            return watched.health if watched is not None else None

    def stale(self) -> list[str]:
        """Names of the nodes that are STALE now, sorted."""
        return sorted(n for n, h in self.states().items() if h.stale)

    def add_callback(self, callback: Callable[[NodeHealth], object]) -> None:
        """Also call ``callback(health)`` on every change."""
        with self._lock:
            self._callbacks.append(callback)

    # ---- inputs ------------------------------------------------------------------------------
    def watches(self, name: str) -> bool:
        """True when node ``name`` is watched (see ``ignore``, ``watch`` and ``hidden``)."""
        if name in self._ignore or (not self._hidden and name.startswith("_")):
            return False
        return self._only is None or name in self._only

    def _on_heartbeat(self, msg: Status) -> None:
        name = msg.reporting_node
        if not self.watches(name):
            return
        now = self.node.clock()
        with self._lock:
            watched = self._watched.get(name)
            if watched is None:
                watched = self._watched[name] = _Watched(now)
            watched.last_seen_ns = now
            watched.heartbeats += 1
            watched.lifecycle = msg.data.decode("ascii", "replace")
            if msg.status == HEARTBEAT_SHUTDOWN:
                watched.shut_down = True
                watched.farewell_pending = True
                watched.withdrawn_ns = None  # the withdrawal was its farewell's, not a death
            elif watched.shut_down:  # the same name is back: a restarted node
                watched.shut_down = False
                watched.farewell_pending = False
                watched.health = None
                watched.withdrawn_ns = None

    def _watch_tokens(self) -> None:
        transport = self.node.bus.zenoh
        if transport is None:
            return
        import zenoh

        own_zid = transport.zid
        topic = self.node.heartbeat_topic
        delete = zenoh.SampleKind.DELETE

        def on_token(sample: zenoh.Sample) -> None:
            try:
                info = EndpointInfo.from_token_key(str(sample.key_expr))
            except BusError:
                return
            if info.topic != topic or info.zid == own_zid or not self.watches(info.node):
                return
            self._on_token(info.node, info.gid, sample.kind != delete)

        self._token_sub = transport.session.liveliness().declare_subscriber(
            f"{ADMIN_SPACE}/{transport.domain_id}/*/*/*/MP/**", on_token, history=True
        )

    def _on_token(self, name: str, gid: int, alive: bool) -> None:
        now = self.node.clock()
        with self._lock:
            if self._closed:
                return
            watched = self._watched.get(name)
            if watched is None:
                if not alive:
                    return
                # Known by its token before its first heartbeat: wait for the heartbeat to report.
                watched = self._watched[name] = _Watched(now)
                watched.last_seen_ns = now
            if alive:
                # A new token never erases a withdrawal not yet judged (module docstring): it is
                # a restarted process, and the one before it still died.
                watched.tokens.add(gid)
            else:
                known = gid in watched.tokens
                watched.tokens.discard(gid)
                if (
                    (known or not watched.tokens)
                    and watched.withdrawn_ns is None
                    and not watched.shut_down
                ):
                    watched.withdrawn_ns = now
                    watched.withdrawn_silence_ns = now - watched.last_seen_ns

    # ---- the check ---------------------------------------------------------------------------
    def check(self) -> list[NodeHealth]:
        """Decide every node's level now and publish the changes; returns them (timer calls it)."""
        now = self.node.clock()
        changes: list[NodeHealth] = []
        stalled_s: float | None = None
        with self._lock:
            if self._closed:
                return changes
            last_check, self._last_check_ns = self._last_check_ns, now
            if last_check is not None and now - last_check > self._late_ns:
                # this process did not run: no peer's silence is judged from that gap
                self._resumed_ns = now
                self.own_stalls += 1
                stalled_s = (now - last_check) / _NS_PER_S
            for name, watched in self._watched.items():
                change = self._decide(name, watched, now)
                if change is not None:
                    watched.health = change
                    changes.append(change)
            callbacks = list(self._callbacks)
        if stalled_s is not None:
            self._report_own_stall(stalled_s)
        for health in changes:
            self.changes += 1
            self._publish(health)
            for callback in callbacks:
                try:
                    callback(health)
                except Exception:
                    _LOG.exception("liveliness callback %r raised for %s", callback, health.name)
        if changes:
            self._latch(self.table(now))
        return changes

    def table(self, now_ns: int | None = None) -> NodeHealthTable:
        """Every verdict, as the latched ``/<ns>/node_health`` carries it (module docstring):
        cleanly shut down nodes left out, at most ``MAX_NODES``, the latest decided first."""
        now = self.node.clock() if now_ns is None else now_ns
        with self._lock:
            decided = [
                (w.health, w)
                for w in self._watched.values()
                if w.health is not None and not w.shut_down
            ]
            decided.sort(key=lambda hw: hw[0].since_ns, reverse=True)
            entries = tuple(
                NodeHealthEntry(
                    h.name,
                    int(h.level),
                    w.lifecycle,
                    (now - w.last_seen_ns) / _NS_PER_S if w.heartbeats else float("nan"),
                    h.reason,
                )
                for h, w in decided[:MAX_NODES]
            )
        return NodeHealthTable(Header.now(), self.node.name, entries)

    def _decide(self, name: str, w: _Watched, now: int) -> NodeHealth | None:
        previous = w.health

        def health(level: Level, reason: str, *, shut_down: bool = False) -> NodeHealth:
            return NodeHealth(
                name, level, w.last_seen_ns, now, w.heartbeats, w.lifecycle, shut_down, reason
            )

        if w.shut_down:
            if not w.farewell_pending:
                return None
            w.farewell_pending = False
            return health(Level.OK, f"node {name!r} shut down cleanly", shut_down=True)
        silent_ns = now - w.last_seen_ns
        # silence heard: not counted from before this monitor's own last stall (module docstring)
        resumed = self._resumed_ns
        heard_silent_ns = silent_ns if resumed is None else min(silent_ns, now - resumed)
        pending = w.withdrawn_ns is not None
        withdrawn = pending and now - (w.withdrawn_ns or 0) >= self._grace_ns
        if w.heartbeats == 0:
            # Seen only by its token so far (a monitor that joined between two heartbeats): its
            # first heartbeat reports it; a token withdrawn with no farewell is a node that died
            # before then — STALE, not forgotten (``jointbus node list`` must show it).
            if not withdrawn or previous is not None:
                return None
            w.withdrawn_ns = None  # judged
            return health(
                Level.STALE,
                f"node {name!r} STALE: its heartbeat publisher left the Zenoh network before "
                "a heartbeat arrived here (process exited or link lost)",
            )
        if previous is None or previous.shut_down:
            if heard_silent_ns <= self._timeout_ns and not pending:
                return health(Level.OK, f"node {name!r} OK: heartbeat seen")
            previous_level = Level.OK  # first seen already silent: decide STALE below
        else:
            previous_level = previous.level
        if withdrawn:
            # Judged once (module docstring): also for a node already STALE by its silence, and
            # also when a restarted namesake's token and heartbeats followed the withdrawal.
            w.withdrawn_ns = None
            was = (
                " (it was STALE already: silent, now gone)" if previous_level is Level.STALE else ""
            )
            return health(
                Level.STALE,
                f"node {name!r} STALE: its heartbeat publisher left the Zenoh network "
                f"{w.withdrawn_silence_ns / 1e9:.2f} s after its last heartbeat (process exited "
                f"or link lost){was}",
            )
        if previous_level is Level.OK:
            if heard_silent_ns > self._timeout_ns:
                return health(
                    Level.STALE,
                    f"node {name!r} STALE: no heartbeat for {silent_ns / 1e9:.2f} s "
                    f"(timeout {self.timeout_s:g} s)",
                )
            return None
        # STALE: back when a heartbeat arrived after the STALE decision and its publisher is there.
        if previous is None:
            return None
        if w.last_seen_ns > previous.since_ns and not pending and silent_ns <= self._timeout_ns:
            gap = (w.last_seen_ns - previous.last_seen_ns) / 1e9
            return health(Level.OK, f"node {name!r} OK: heartbeat back after {gap:.2f} s")
        return None

    def _report_own_stall(self, stalled_s: float) -> None:
        """This monitor's check came ``stalled_s`` after the previous one: say so, once."""
        pub = self.node.status_publisher
        if pub.closed:
            return
        text = (
            f"liveliness checks of {self.node.name!r} resumed after {stalled_s:.2f} s (this "
            "process did not run: stopped or starved of CPU); no node is judged STALE from that "
            f"silence: each gets a fresh {self.timeout_s:g} s from now"
        )
        # on the status topic only, as every other judgement here: logged too, the demo's console
        # showed it twice (the process's log line, then the report)
        pub.publish(Status.of(Level.WARN, self.node.name, text))

    def _publish(self, health: NodeHealth) -> None:
        pub = self.node.status_publisher
        if pub.closed:
            return
        pub.publish(Status.of(health.level, self.node.name, health.reason, health.name.encode()))

    def _latch(self, table: NodeHealthTable) -> None:
        """Publish ``table`` latched on ``/<ns>/node_health`` (the publisher is made on first
        use, so a monitor that never decides anything offers no such topic)."""
        pub = self._table_pub
        if pub is None:
            if self._closed:
                return
            pub = self._table_pub = self.node._internal_publisher(  # closed with the node
                self.node.topic(NODE_HEALTH_TOPIC), NodeHealthTable, LATCHED
            )
        if not pub.closed:
            pub.publish(table)

    # ---- end ---------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop watching (the node's shutdown also stops the subscription and timer). Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            token_sub, self._token_sub = self._token_sub, None
        self._timer.cancel()
        self._subscription.close()
        if token_sub is not None:
            try:
                token_sub.undeclare()
            except Exception:  # the session may already be closed with the bus
                _LOG.debug("undeclaring the liveliness token subscriber failed", exc_info=True)


__all__ = [
    "DEFAULT_CHECK_PERIOD_S",
    "DEFAULT_LIVELINESS_TIMEOUT_S",
    "DEFAULT_TOKEN_GRACE_S",
    "LivelinessConfigError",
    "LivelinessMonitor",
    "NodeHealth",
]
