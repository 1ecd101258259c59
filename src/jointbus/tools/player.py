"""``jointbus play``: republish a bag onto a bus with its original timing.

Where it sits: :mod:`jointbus.tools`, beside the nodes: it reads a bag
(:mod:`jointbus.tools.bag_reader`) and publishes on a :class:`jointbus.bus.Bus`, so in-process
subscribers get message objects and, with Zenoh attached, other processes get CDR.

Each stored message is decoded with the class the message registry gives for its type name and
published on a publisher of that class. The bus carries wire records (``Message`` subclasses):
where the registry's class is a Python-facing type with a different shape (the typed
``JointState``, the single-joint actuator commands) its ``to_wire()`` record is published.
Messages whose type the registry does not know, or whose bytes do not decode, are counted and
skipped with one warning per topic; playback goes on.

QoS: each topic is offered with the player's ``qos`` (RELIABLE by default) and, where the bag
records that it was offered latched (transient-local: ``/tf_static``, a node's parameters, an
array's geometry; :mod:`jointbus.tools.bag_qos`), latched again — a topic published once is
otherwise lost to every tool that joins after its one message.

Timing: message *i* is published at ``start + (log_time_i - log_time_0) / rate`` on the monotonic
clock (``start``: when the pass's first message has been read from the bag), so a 500 Hz
recording plays back at 500 Hz and ``rate=2`` plays twice as fast; a slow subscriber cannot make
later messages drift (the player catches up instead; how far it fell behind is counted: messages
published more than :data:`LATE_NOTED_S` after their time and the most any was, in
:class:`PlaybackStats`). With ``loop=True`` the bag starts over after
its last message until :meth:`Player.stop` is called.

Safety: a bag recorded on a robot holds the commands that moved it. Replayed onto a live robot's
bus they would move it again (a recorded ``sit_down`` made a running robot sit down), so by
default the player does **not** publish command topics (:func:`is_command_topic`: a topic a node
acts on) and reports them in :attr:`Player.skipped_commands`; ``include_commands=True`` plays
them. Second, it refuses (:class:`LivePublisherError`) to publish a topic that a live node already
publishes — recorded ``bridge_data`` mixed into a running bridge's feedback is worse than either —
unless ``force=True``. Both are decided once, before the first message.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from jointbus.bus import RELIABLE, Bus, Publisher, QosProfile
from jointbus.bus.qos import Durability, profile
from jointbus.messages.base import Message
from jointbus.messages.registry import TypeRegistry, UnknownTypeError
from jointbus.tools.bag_reader import Bag
from jointbus.tools.command_topics import COMMAND_RULE, is_command_topic
from jointbus.tools.errors import PlaybackError
from jointbus.tools.known_types import known_registry

_LOG = logging.getLogger("jointbus.tools.player")


class LivePublisherError(PlaybackError):
    """A topic the player would publish already has a live publisher on the bus; names the
    topics and their publishing nodes."""

    def __init__(self, live: dict[str, list[str]]) -> None:
        self.live = live
        listing = "; ".join(
            f"{topic} (published by {', '.join(nodes)})" for topic, nodes in sorted(live.items())
        )
        super().__init__(
            f"refusing to publish {len(live)} topic(s) that a live node already publishes: "
            f"{listing} — replayed messages would mix into the live ones; stop those nodes, "
            "leave the topics out (--topics), or pass --force to publish anyway"
        )


@dataclass(frozen=True, slots=True)
class PlaybackProgress:
    """Where playback is: messages published so far and the bag time reached (s from start)."""

    published: int
    skipped: int
    bag_time_s: float
    duration_s: float
    loop: int

    @property
    def fraction(self) -> float:
        """Progress through the current pass, 0..1."""
        return min(1.0, self.bag_time_s / self.duration_s) if self.duration_s > 0 else 1.0


@dataclass(frozen=True, slots=True)
class PlaybackStats:
    """The outcome of :meth:`Player.run`."""

    published: int
    skipped: int
    loops: int
    per_topic: dict[str, int]
    wall_s: float
    #: Messages published more than :data:`LATE_NOTED_S` after their time in the replay (the
    #: player fell behind: a busy host; it then catches up, in a burst), and the most any was.
    late: int = 0
    late_max_s: float = 0.0


#: How late (s) past its time in the replay a message counts in :attr:`PlaybackStats.late`.
LATE_NOTED_S = 0.05


class Player:
    """Republishes ``bag`` onto ``bus``; :meth:`run` blocks until the end (or :meth:`stop`)."""

    def __init__(
        self,
        bus: Bus,
        bag: Bag,
        *,
        rate: float = 1.0,
        loop: bool = False,
        topics: Collection[str] | None = None,
        registry: TypeRegistry | None = None,
        qos: QosProfile | str = RELIABLE,
        node: str = "player",
        settle_s: float = 0.0,
        include_commands: bool = False,
        force: bool = False,
        discover_s: float = 0.5,
    ) -> None:
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 < rate < 1e6:
            raise PlaybackError(f"rate must be a number > 0 (1 = recorded speed), got {rate!r}")
        if topics is not None:
            present = {t.name for t in bag.topics}
            missing = sorted(set(topics) - present)
            if missing:
                raise PlaybackError(
                    f"topic(s) {', '.join(missing)} not in {str(bag.path)!r} "
                    f"(topics: {', '.join(sorted(present)) or 'none'})"
                )
        self._bus = bus
        self._bag = bag
        self._rate = float(rate)
        self._loop = loop
        self._topics = None if topics is None else frozenset(topics)
        self._registry = registry if registry is not None else known_registry()
        self._qos = profile(qos) if isinstance(qos, str) else qos
        # a topic the bag records as offered latched (``/tf_static``, parameters, a geometry) is
        # offered latched again: published once, a tool that joins later gets it only so (a
        # user's trial, 2026-12-06: volatile on replay, ``topic echo /tf_static --once`` never
        # got one, and the monitor reported incompatible QoS on ``node_health``)
        self._latched_qos = self._qos.with_(durability=Durability.TRANSIENT_LOCAL)
        self._latched = frozenset(t.name for t in bag.topics if t.latched)
        self._node = node
        self._settle_s = settle_s
        self._stop = threading.Event()
        self._publishers: dict[str, Publisher[Any]] = {}
        self._unplayable: set[str] = set()
        self._force = force
        self._discover_s = discover_s
        wanted = [t for t in bag.topics if self._topics is None or t.name in self._topics]
        self.skipped_commands: tuple[str, ...] = tuple(
            sorted(
                t.name
                for t in wanted
                if not include_commands and is_command_topic(t.name, t.type_name)
            )
        )
        """Command topics of the bag left out (``include_commands=False``), sorted."""
        self._playing = frozenset(t.name for t in wanted) - set(self.skipped_commands)

    @property
    def topics(self) -> frozenset[str]:
        """The topics this player publishes (the bag's, or ``topics``, less skipped commands)."""
        return self._playing

    def check_live_publishers(self) -> dict[str, list[str]]:
        """Topics this player would publish that another endpoint on the bus already publishes,
        each with the publishing nodes' names (waits up to ``discover_s`` for remote answers).
        Call before :meth:`run` creates the player's own publishers."""
        live: dict[str, list[str]] = {}
        own = set(self._publishers)
        for info in self._bus.discover(self._discover_s):
            if info.name in self._playing and info.name not in own and info.publishers:
                live[info.name] = sorted({p.node or "<anonymous>" for p in info.publishers})
        return live

    def stop(self) -> None:
        """Ask :meth:`run` to return after the message in progress (any thread)."""
        self._stop.set()

    def run(self, on_progress: Callable[[PlaybackProgress], None] | None = None) -> PlaybackStats:
        """Play (every pass when looping); ``on_progress`` is called after each message."""
        bag = self._bag
        start_ns = bag.start_ns
        duration_s = bag.duration_ns / 1e9
        published = skipped = late = 0
        late_max_s = 0.0
        per_topic: dict[str, int] = {}
        loops = 0
        wall_start = time.monotonic()
        if not self._force:
            live = self.check_live_publishers()
            if live:
                raise LivePublisherError(live)
        try:
            self._declare_publishers()
            if self._settle_s > 0:
                self._stop.wait(self._settle_s)
            while not self._stop.is_set():
                # The pass's clock starts when its first message has been read: reading the
                # first chunk (decompression, index) took a few ms that would otherwise shorten
                # the first message's gap to the next ones.
                pass_start: float | None = None
                for record in bag.messages(self._playing):
                    if self._stop.is_set():
                        break
                    if pass_start is None:
                        pass_start = time.monotonic()
                    offset_s = (record.log_time_ns - start_ns) / 1e9
                    delay = pass_start + offset_s / self._rate - time.monotonic()
                    if delay > 0 and self._stop.wait(delay):
                        break
                    if -delay > LATE_NOTED_S:
                        late += 1
                        late_max_s = max(late_max_s, -delay)
                    if self._publish(record.topic, record.type_name, record.data):
                        published += 1
                        per_topic[record.topic] = per_topic.get(record.topic, 0) + 1
                    else:
                        skipped += 1
                    if on_progress is not None:
                        on_progress(
                            PlaybackProgress(published, skipped, offset_s, duration_s, loops)
                        )
                loops += 1
                if not self._loop or published + skipped == 0:
                    break
        finally:
            for pub in self._publishers.values():
                pub.close()
            self._publishers.clear()
        return PlaybackStats(
            published, skipped, loops, per_topic, time.monotonic() - wall_start, late, late_max_s
        )

    def _declare_publishers(self) -> None:
        """Create the publishers before the clock starts, so that subscribers (and remote ones,
        during ``settle_s``) are matched before the first message."""
        for topic in self._bag.topics:
            if topic.name not in self._playing:
                continue
            try:
                cls = self._registry.by_type_name(topic.type_name)
            except UnknownTypeError:
                continue  # reported when its first message is played
            if isinstance(cls, type) and issubclass(cls, Message):
                try:
                    self._publishers[topic.name] = self._bus.publisher(
                        topic.name, cls, self._qos_of(topic.name), node=self._node
                    )
                except Exception as exc:
                    self._give_up(topic.name, str(exc))

    def _publish(self, topic: str, type_name: str, data: bytes) -> bool:
        if topic in self._unplayable:
            return False
        try:
            cls = self._registry.by_type_name(type_name)
        except UnknownTypeError:
            return self._give_up(topic, f"type {type_name!r} is unknown to the message registry")
        try:
            msg = cls.from_cdr(data)
        except Exception as exc:
            _LOG.warning("play: a message on %s does not decode as %s: %s", topic, type_name, exc)
            return False
        if not isinstance(msg, Message):
            to_wire = getattr(msg, "to_wire", None)
            msg = to_wire() if to_wire is not None else None
            if not isinstance(msg, Message):
                return self._give_up(topic, f"{type_name} has no wire record the bus can carry")
        pub = self._publishers.get(topic)
        if pub is None:
            try:
                pub = self._bus.publisher(topic, type(msg), self._qos_of(topic), node=self._node)
            except Exception as exc:
                return self._give_up(topic, str(exc))
            self._publishers[topic] = pub
        pub.publish(msg)
        return True

    def _qos_of(self, topic: str) -> QosProfile:
        """The QoS ``topic`` is offered with: the player's, latched where the bag says so."""
        return self._latched_qos if topic in self._latched else self._qos

    def _give_up(self, topic: str, why: str) -> bool:
        self._unplayable.add(topic)
        _LOG.warning("play: skipping topic %s: %s", topic, why)
        return False


__all__ = [
    "COMMAND_RULE",
    "LivePublisherError",
    "PlaybackProgress",
    "PlaybackStats",
    "Player",
    "is_command_topic",
]
