"""The recorder: every message of a bus (or the chosen topics) into an MCAP file.

Where it sits: :mod:`jointbus.tools`, beside the nodes — above :mod:`jointbus.bus`, which it
observes, and :mod:`jointbus.tools.mcap_writer`, which writes the file. ``jointbus record`` and
``jointbus demo --record`` are thin wrappers around :class:`Recorder`.

Two sources, chosen per recorder:

- **local** (``local=True``, the default — the demo attaches a recorder to its in-process bus): the
  recorder looks at the bus's topic table every ``discovery_interval`` seconds and subscribes to
  each wanted topic as it appears (topics created later are picked up too). Its subscriptions are
  *realtime* and best-effort: best-effort is compatible with every publisher's QoS, and a realtime
  callback runs inside ``publish`` with no queue that could overflow, so nothing is dropped; it only
  stamps the wall time and appends the message object to the recorder's queue (≈ 0.5 µs on the
  publisher's thread). A topic with a transient-local (latched) publisher — ``/tf_static``,
  ``/<ns>/parameters`` — is subscribed transient-local, so the message it published before the
  recorder started is recorded too. The queue is a lock-free :class:`collections.deque` that the
  writer thread polls every ``POLL_INTERVAL`` (5 ms) instead of being woken per message: at 500 Hz
  the stack publishes ≈ 2000 messages/s, and waking a thread per message (≈ 50 µs of wake-up and GIL
  hand-over each on a small VM) cost more CPU than writing them. 5 ms is far below the flush
  interval, so it changes neither the crash bound below nor what is recorded. In-process messages
  are objects, so the writer thread encodes each once with ``to_cdr()``. Remote publishers of those
  topics reach the subscription through the bus and are recorded the same way.
- **remote** (``remote=True``; what the ``jointbus record`` command uses; on DDS the transport's
  raw tap, :class:`_DdsRawSource`, with the same skipping rules): one raw Zenoh subscriber
  on ``<domain>/**`` (every topic of the ROS domain — jointbus's and ROS 2 nodes' — including ones
  that appear later) on the bus's own session, or, when topics are named, one on each of them
  (``<domain>/<topic>/*/*``): a publisher sends only while a subscriber matches it, so a
  recorder of three topics must not match the others. With one subscriber on the domain, a
  ``jointbus record`` of three topics beside the walking demo made the bridge encode and send
  every topic it has (a new user's trial: 35.8 % of its cycles skipped on a slow minute). The
  CDR payload is stored exactly as received — never decoded or re-encoded; its topic and type
  come from the data key (:mod:`jointbus.bus.names`), its ``.msg`` definition from the message
  registry, its publish time and sequence number from rmw_zenoh's attachment.
  **No Python on Zenoh's receive path.** The subscriber hands samples to a Zenoh FIFO channel
  (:data:`REMOTE_QUEUE_SAMPLES` deep, in Rust), which the writer thread drains in batches; Zenoh's
  receive thread never waits for the GIL. With a Python callback per sample, it did: beside a
  500 Hz stack on a loaded 2-CPU host the callback waited behind the writer thread and the stack's
  own threads, samples queued up to 1.9 s in transit, the senders' best-effort queues
  overflowed and whole bursts were dropped (up to 491 consecutive frames; 1 577 of ≈ 14 000 lost
  in a user's run, 7 325 of ≈ 29 500 in ours). The FIFO rides out such stalls; a reliable
  publisher (``BLOCK`` congestion control) is only ever slowed if the FIFO fills.
  Gaps in a publisher's sequence numbers are counted as ``lost`` — separately for reliable
  publishers (``lost_reliable``: a reliable topic must lose nothing; a gap there means the
  transport or the publisher dropped it) and best-effort ones. Topics that the local source
  records are skipped here so that no message is stored twice. Latched topics (``/tf_static``,
  ``/<ns>/parameters``) were typically published once, before the recorder started: on start it
  also queries every transient-local publisher's zenoh-ext cache (``<key>/@adv/pub/**``, as
  :mod:`jointbus.bus.zenoh_transport` keeps them) and records what the caches hold, except
  messages of a publisher that it has already received live (no duplicates); these samples do not
  count towards ``lost``. A transient-local publisher that discovery finds later (a node started
  after the recorder, or one whose declaration had not arrived when the first query ran) has its
  session's caches asked too, until they answer or 3 s pass; a sample already recorded from a
  cache is not recorded again. A channel's QoS (its ``offered_qos_profiles``) is fixed when it is
  first written and comes from the publisher's discovery token, so a live sample that arrives
  before its publisher's token waits for it, at most :data:`UNKNOWN_PUBLISHER_WAIT_S` (then it is
  written without QoS); its publisher's later samples wait behind it, in order.

All writing happens on one thread that owns the :class:`McapChunkWriter`; it closes a chunk when it
reaches ``chunk_size`` bytes or when ``flush_interval`` seconds have passed, so a recorder killed
with SIGKILL loses at most the messages of its last ``flush_interval`` (plus what was still queued).
Log time is the wall-clock receive time (ns since the Unix epoch), as ``ros2 bag record`` stores it.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

from jointbus.bus import LATCHED, MAB_RT, Bus, Subscriber
from jointbus.bus import attachment as bus_attachment
from jointbus.bus.names import (
    domain_selector,
    parse_data_key,
    topic_selector,
    validate_topic_name,
)
from jointbus.bus.qos import Durability, QosProfile
from jointbus.codec.cdr import header_stamp_ns
from jointbus.messages.base import Message
from jointbus.messages.registry import TypeRegistry, UnknownTypeError
from jointbus.tools.bag_qos import offered_qos_metadata
from jointbus.tools.errors import RecorderError
from jointbus.tools.known_types import known_registry
from jointbus.tools.mcap_writer import DEFAULT_CHUNK_SIZE, McapChunkWriter

if TYPE_CHECKING:
    import zenoh

_LOG = logging.getLogger("jointbus.tools.recorder")

#: Default time after which the chunk in progress is written even if not full (s).
DEFAULT_FLUSH_INTERVAL: Final = 0.5
#: Default period of the local topic-table scan (s).
DEFAULT_DISCOVERY_INTERVAL: Final = 0.1
#: How often the writer thread looks at an empty queue (s); see the module docstring.
POLL_INTERVAL: Final = 0.005
#: Samples the remote source's Zenoh FIFO holds before Zenoh's receive thread has to wait for
#: the writer (≈ 20 s of a 500 Hz stack's ≈ 3000 samples/s).
REMOTE_QUEUE_SAMPLES: Final = 65536
#: Relative difference of message counts under which two stamped topics are streams of one rate
#: (:meth:`Recorder.busiest_stamped_topic`): 2 %, 10 messages in 10 s at 50 Hz.
SAME_STREAM_RATE: Final = 0.02
_BATCH: Final = 4096  # queue items handled between two housekeeping checks
#: A transient-local publisher discovered after the start whose cache has not answered is asked
#: every this many seconds, for at most the window (s): its queryable's declaration may lag its
#: graph token by ≈ 1 s on a loaded host (``zenoh_transport.ROUTE_SETTLE_S`` allows 3 s).
LATE_HISTORY_PERIOD_S: Final = 0.25
LATE_HISTORY_WINDOW_S: Final = 3.0
#: A live sample whose publisher's discovery token has not arrived is held at most this long (s)
#: for the token, which carries the publisher's QoS (``_ZenohRawSource._store``).
UNKNOWN_PUBLISHER_WAIT_S: Final = 1.0


@dataclass(frozen=True, slots=True)
class RecorderStats:
    """A snapshot of a recorder.

    ``messages``: written to the file (including the chunk in progress); ``bytes``: file size so
    far plus the uncompressed chunk in progress; ``topics``: channels in the file; ``queued``:
    received, not yet written; ``lost``: sequence gaps seen in remote publishers' messages, of
    which ``lost_reliable`` from reliable publishers (must stay 0); ``skipped``: messages that
    could not be recorded (type unknown to the registry, no rmw_zenoh attachment, or not
    encodable), ``elapsed_s``: seconds since :meth:`Recorder.start` (until
    :meth:`Recorder.stop`, once stopped); ``first_ns`` / ``last_ns``: log times of the earliest
    and latest message in the file (ns since the Unix epoch; 0 when it holds none).
    """

    messages: int
    bytes: int
    topics: int
    queued: int
    lost: int
    skipped: int
    elapsed_s: float
    first_ns: int = 0
    last_ns: int = 0
    lost_reliable: int = 0

    @property
    def span_s(self) -> float:
        """Seconds between the file's first and last message (what ``jointbus info`` calls its
        duration); 0 with fewer than two."""
        return (self.last_ns - self.first_ns) / 1e9 if self.first_ns else 0.0

    @property
    def rate(self) -> float:
        """Average messages per second since the start."""
        return self.messages / self.elapsed_s if self.elapsed_s > 0 else 0.0


def _stamped(msgdef: str) -> bool:
    """True when the type's first field is a ``std_msgs/Header`` (after its constants): its
    messages carry the publisher's stamp, 8 bytes after the CDR encapsulation (sec, nanosec)."""
    for raw in msgdef.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("="):  # the first nested definition: no field of its own came first
            return False
        parts = line.split()
        if len(parts) >= 2 and "=" in line.split(maxsplit=1)[1]:
            continue  # a constant
        return parts[0] in ("std_msgs/Header", "Header", "std_msgs/msg/Header")
    return False


class _Channel:
    """One (topic, type) of the file; ``id`` is 0 until the writer thread registers it."""

    __slots__ = (
        "count",
        "first_ns",
        "first_pub_ns",
        "first_seq",
        "first_stamp_ns",
        "id",
        "last_ns",
        "last_pub_ns",
        "last_seq",
        "last_stamp_ns",
        "msgdef",
        "qos",
        "stamped",
        "topic",
        "type_name",
    )

    def __init__(self, topic: str, type_name: str, msgdef: str) -> None:
        self.topic = topic
        self.type_name = type_name
        self.msgdef = msgdef
        self.id = 0
        self.count = 0
        #: Earliest and latest log time (ns) of the messages written (0 before the first).
        self.first_ns = 0
        self.last_ns = 0
        #: Earliest and latest publish time (ns): when the publisher sent them (rmw_zenoh's
        #: source time), which a receiver falling behind does not stretch.
        self.first_pub_ns = 0
        self.last_pub_ns = 0
        #: The publisher's first and last sequence number written while they came in order from
        #: one publisher; ``last_seq`` is -1 once they did not (two publishers, a restart, a
        #: local message without one).
        self.first_seq = 0
        self.last_seq = 0
        #: The publisher's QoS if known (stored as the channel's ``offered_qos_profiles``).
        self.qos: QosProfile | None = None
        #: Its type begins with a header: earliest and latest header stamp (ns, the publisher's
        #: clock — a simulator's time for hb50's frames; 0 before the first).
        self.stamped = _stamped(msgdef)
        self.first_stamp_ns = 0
        self.last_stamp_ns = 0


@dataclass(frozen=True, slots=True)
class TopicRecord:
    """What a file holds of one topic: ``count`` messages, their log times (``first_ns`` /
    ``last_ns``: when this recorder received them) and publish times (``first_pub_ns`` /
    ``last_pub_ns``: when the publisher sent them), ns since the Unix epoch.

    Why both: a recorder that falls behind (a busy host) receives late — in a user's trial up
    to 22 s late — so the span of its log times overstates how much of the robot's run the
    file holds; the publish times' span is what the robot sent over."""

    count: int
    first_ns: int
    last_ns: int
    first_pub_ns: int
    last_pub_ns: int
    sent: int | None = None
    """Messages its publisher sent from the first to the last one in the file, by their
    sequence numbers (``count`` of them recorded); ``None`` when that is not known: several
    publishers or channels, numbers out of order, or in-process messages (no numbers)."""
    first_stamp_ns: int = 0
    last_stamp_ns: int = 0
    """The earliest and latest header stamp (ns, the publisher's own clock) of a stamped type's
    messages; 0 for a type without a header."""

    @property
    def sent_span_s(self) -> float:
        """Seconds between the first and the last message's publish times (the wall clock)."""
        return (self.last_pub_ns - self.first_pub_ns) / 1e9

    @property
    def stamp_span_s(self) -> float | None:
        """Seconds between the earliest and the latest header stamp: the time the publisher's own
        clock says the messages cover (a simulator's: the robot's time); ``None`` for a type
        without a header. Why: a simulated robot on a starved host ran at 0.64 of real time, and
        40.01 s of frames by the wall clock held 25.5 s of the robot's time."""
        if not self.first_stamp_ns:
            return None
        return (self.last_stamp_ns - self.first_stamp_ns) / 1e9


# (channel, payload, log time ns, publish time ns, sequence or 0)
_Item = tuple[_Channel, "bytes | Message", int, int, int]


class Recorder:
    """Records a bus into an MCAP file; ``start()`` … ``stop()``, or use it as a context manager.

    ``topics``: exact topic names to record (``None``: every topic). ``registry`` supplies ``.msg``
    definitions for remote payloads (default: every bundled type). ``chunk_size`` (bytes) and
    ``flush_interval`` (s) bound what a crash can lose; ``discovery_interval`` (s) is how often the
    local topic table is scanned for new topics.
    """

    def __init__(
        self,
        bus: Bus,
        path: str | Path,
        topics: Iterable[str] | None = None,
        *,
        local: bool = True,
        remote: bool = False,
        registry: TypeRegistry | None = None,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        flush_interval: float = DEFAULT_FLUSH_INTERVAL,
        discovery_interval: float = DEFAULT_DISCOVERY_INTERVAL,
        node: str = "recorder",
    ) -> None:
        if not (local or remote):
            raise RecorderError("a recorder needs a source: local=True and/or remote=True")
        for name, value in (
            ("flush_interval", flush_interval),
            ("discovery_interval", discovery_interval),
        ):
            if not isinstance(value, (int, float)) or not 0 < value <= 60:
                raise RecorderError(f"{name} must be in (0, 60] s, got {value!r}")
        if remote and bus.transport is None:
            raise RecorderError(
                "remote recording needs a bus with Zenoh attached (Bus(zenoh=ZenohConfig())) or "
                "on DDS (Bus(dds=DdsConfig()))"
            )
        self._bus = bus
        self.path = Path(path)
        self._topics = None if topics is None else frozenset(validate_topic_name(t) for t in topics)
        self._local = local
        self._remote = remote
        self._registry = registry if registry is not None else known_registry()
        self._chunk_size = chunk_size
        self._flush_interval = float(flush_interval)
        self._discovery_interval = float(discovery_interval)
        self._node = node
        # deque append/popleft are atomic (thread-safe without a lock); None is the stop sentinel
        self._queue: collections.deque[_Item | None] = collections.deque()
        self._wake = threading.Event()  # set by stop() so the writer does not sleep out its poll
        self._channels: dict[tuple[str, str], _Channel] = {}
        self._channels_lock = threading.Lock()
        self._schema_ids: dict[str, int] = {}
        self._subscribers: dict[str, Subscriber[Any]] = {}
        #: Topics the local source records (the remote source skips them).
        self._local_topics: frozenset[str] = frozenset()
        self._remote_source: _ZenohRawSource | _DdsRawSource | None = None
        self._thread: threading.Thread | None = None
        self._file: IO[bytes] | None = None
        self._writer: McapChunkWriter | None = None
        self._error: BaseException | None = None
        self._started_at = 0.0
        self._stopped_at: float | None = None
        self._stopped = False
        self._skipped = 0

    # ---- lifecycle ----------------------------------------------------------------------------
    def start(self) -> Recorder:
        """Create the file and start recording; raises RecorderError if it cannot be created."""
        if self._thread is not None or self._stopped:
            raise RecorderError(f"recorder for {str(self.path)!r} was already started")
        try:
            self._file = self.path.open("wb")
        except OSError as exc:
            raise RecorderError(f"cannot create {str(self.path)!r}: {exc.strerror}") from exc
        self._writer = McapChunkWriter(self._file, chunk_size=self._chunk_size)
        self._file.flush()
        self._started_at = time.monotonic()
        if self._local:
            self._scan_local()
        if self._remote:
            self._remote_source = (
                _ZenohRawSource(self, self._bus)
                if self._bus.zenoh is not None
                else _DdsRawSource(self, self._bus)
            )
        self._thread = threading.Thread(target=self._run, name="jointbus-recorder", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> RecorderStats:
        """Stop receiving, write what was received and the MCAP summary, close the file.

        Idempotent. Raises RecorderError if writing failed (the file then holds what was written).
        """
        if self._stopped:
            return self.stats()
        self._stopped = True
        self._stopped_at = time.monotonic()
        for sub in self._subscribers.values():
            sub.close()
        if self._remote_source is not None:
            self._remote_source.close()
        if self._thread is not None:
            self._queue.append(None)
            self._wake.set()
            self._thread.join()
        stats = self.stats()
        if self._error is not None:
            raise RecorderError(f"recording to {str(self.path)!r} failed: {self._error}")
        return stats

    def __enter__(self) -> Recorder:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        """True between :meth:`start` and :meth:`stop`."""
        return self._thread is not None and not self._stopped

    def stats(self) -> RecorderStats:
        """A snapshot (safe from any thread)."""
        writer = self._writer
        messages = writer.message_count if writer is not None else 0
        size = (writer.bytes_written + writer.pending_bytes) if writer is not None else 0
        remote = self._remote_source
        span = writer.log_time_span if writer is not None else None
        end = self._stopped_at if self._stopped_at is not None else time.monotonic()
        return RecorderStats(
            messages=messages,
            bytes=size,
            # channels the file holds, i.e. that have a message: a topic that was discovered and
            # subscribed to but never carried a message has no channel in the file
            topics=sum(1 for c in list(self._channels.values()) if c.id),
            queued=len(self._queue),
            lost=remote.lost if remote is not None else 0,
            lost_reliable=remote.lost_reliable if remote is not None else 0,
            skipped=self._skipped + (remote.skipped if remote is not None else 0),
            elapsed_s=end - self._started_at if self._started_at else 0.0,
            first_ns=span[0] if span is not None else 0,
            last_ns=span[1] if span is not None else 0,
        )

    def topic_record(self, topic: str) -> TopicRecord | None:
        """What the file holds of ``topic`` so far (:class:`TopicRecord`); None when nothing."""
        with self._channels_lock:
            channels = [c for c in self._channels.values() if c.topic == topic and c.first_ns]
        if not channels:
            return None
        (one, *others) = channels
        stamped = [c for c in channels if c.first_stamp_ns]
        return TopicRecord(
            count=sum(c.count for c in channels),
            first_ns=min(c.first_ns for c in channels),
            last_ns=max(c.last_ns for c in channels),
            first_pub_ns=min(c.first_pub_ns for c in channels),
            last_pub_ns=max(c.last_pub_ns for c in channels),
            sent=one.last_seq - one.first_seq + 1 if not others and one.last_seq > 0 else None,
            first_stamp_ns=min((c.first_stamp_ns for c in stamped), default=0),
            last_stamp_ns=max((c.last_stamp_ns for c in stamped), default=0),
        )

    def busiest_stamped_topic(self) -> str | None:
        """The stamped topic (its type begins with a header) with the most messages in the file so
        far — on hb50, ``bridge_data``: the robot's own clock is read from its stamps — or None.

        Topics within :data:`SAME_STREAM_RATE` of the most count as equally busy, and the first of
        them by name is the one: a robot's 500 Hz streams (``bridge_data``, ``joint_command``,
        ``sim/ground_truth``) differ by a few messages from run to run, and the summary named a
        different one each time (a new user's trial, 2026-12-07)."""
        with self._channels_lock:
            counts: dict[str, int] = {}
            for c in self._channels.values():
                if c.stamped and c.first_stamp_ns:
                    counts[c.topic] = counts.get(c.topic, 0) + c.count
        if not counts:
            return None
        most = max(counts.values())
        return min(t for t, n in counts.items() if n >= most * (1.0 - SAME_STREAM_RATE))

    # ---- entry points of the sources ------------------------------------------------------------
    def wants(self, topic: str) -> bool:
        """True if ``topic`` is one of the recorded topics."""
        return self._topics is None or topic in self._topics

    def channel(
        self,
        topic: str,
        type_name: str,
        msgdef: str | None = None,
        qos: QosProfile | None = None,
    ) -> _Channel:
        """The channel of ``(topic, type_name)``, created on first use.

        ``msgdef`` defaults to the registry's definition; raises UnknownTypeError when the
        registry does not know the type. ``qos``, the publisher's QoS when known, is stored in
        the channel's metadata (``jointbus info`` shows a latched topic as ``latched``); the
        first one given before the channel is written wins.
        """
        key = (topic, type_name)
        found = self._channels.get(key)
        if found is None:
            if msgdef is None:
                msgdef = self._registry.by_type_name(type_name).msgdef()
            with self._channels_lock:
                found = self._channels.setdefault(key, _Channel(topic, type_name, msgdef))
        if qos is not None and found.qos is None:
            found.qos = qos
        return found

    def write_raw(
        self,
        topic: str,
        type_name: str,
        data: bytes,
        *,
        log_time_ns: int | None = None,
        publish_time_ns: int | None = None,
        sequence: int = 0,
    ) -> None:
        """Queue already-encoded CDR bytes of ``topic``; they are stored as given.

        This is the remote source's path; it is public for tools that receive CDR elsewhere.
        Raises UnknownTypeError if the registry has no definition of ``type_name``.
        """
        now = time.time_ns() if log_time_ns is None else log_time_ns
        self._queue.append(
            (
                self.channel(topic, type_name),
                data,
                now,
                now if publish_time_ns is None else publish_time_ns,
                sequence,
            )
        )

    def enqueue(self, channel: _Channel, data: bytes, log_ns: int, pub_ns: int, seq: int) -> None:
        """Queue bytes for a channel from :meth:`channel` (the remote source's hot path)."""
        self._queue.append((channel, data, log_ns, pub_ns, seq))

    # ---- local source ---------------------------------------------------------------------------
    def _scan_local(self) -> None:
        """Subscribe to wanted local topics not subscribed yet."""
        if self._stopped:
            return
        added = False
        for info in self._bus.topics():
            topic = info.name
            if topic in self._subscribers or not self.wants(topic):
                continue
            msg_type = self._bus.local_type(topic)
            if msg_type is None:
                continue
            latched = any(p.qos.transient_local for p in info.publishers)
            qos = MAB_RT.with_(durability=Durability.TRANSIENT_LOCAL) if latched else MAB_RT
            offered = next(
                (p.qos for p in info.publishers if p.qos.transient_local or not latched), None
            )
            channel = self.channel(topic, msg_type.TYPE_NAME, msg_type.msgdef(), offered)
            try:
                self._subscribers[topic] = self._bus.subscribe(
                    topic,
                    msg_type,
                    self._local_callback(channel),
                    qos,
                    realtime=True,
                    node=self._node,
                )
            except Exception as exc:  # the topic vanished or changed type between scan and here
                _LOG.debug("recorder: cannot subscribe to %s: %s", topic, exc)
                continue
            added = True
        if added:
            self._local_topics = frozenset(self._subscribers)

    def _local_callback(self, channel: _Channel) -> Callable[[Message], None]:
        put = self._queue.append
        wall_ns = time.time_ns

        def on_message(msg: Message) -> None:
            now = wall_ns()
            put((channel, msg, now, now, 0))

        return on_message

    # ---- writer thread --------------------------------------------------------------------------
    def _run(self) -> None:
        writer = self._writer
        assert writer is not None and self._file is not None
        pop = self._queue.popleft
        wait = self._wake.wait
        next_flush = time.monotonic() + self._flush_interval
        next_scan = time.monotonic() + self._discovery_interval
        running = True
        remote = self._remote_source
        while running:
            handled = 0
            if remote is not None:
                remote.drain(_BATCH)  # into the queue, read just below
            while handled < _BATCH:
                try:
                    item = pop()
                except IndexError:
                    break
                if item is None:
                    running = False
                    break
                self._write(writer, item)
                handled += 1
            now = time.monotonic()
            if running and now >= next_scan:
                next_scan = now + self._discovery_interval
                self._housekeeping()
            if now >= next_flush and self._error is None:
                next_flush = now + self._flush_interval
                try:
                    writer.flush()
                except Exception as exc:
                    self._fail(exc)
            if running and handled < _BATCH:
                wait(POLL_INTERVAL)  # the queue was drained: poll again later (module docstring)
        # Stopping: everything queued before the sentinel has been written above.
        try:
            if self._error is None:
                writer.finish()
        except Exception as exc:
            self._fail(exc)
        finally:
            self._file.close()

    def _housekeeping(self) -> None:
        try:
            if self._local:
                self._scan_local()
        except Exception:
            _LOG.exception("recorder: topic discovery failed; recording continues")

    def _write(self, writer: McapChunkWriter, item: _Item) -> None:
        if self._error is not None:
            self._skipped += 1
            return
        channel, payload, log_ns, pub_ns, seq = item
        try:
            if not channel.id:
                schema_id = self._schema_ids.get(channel.type_name)
                if schema_id is None:
                    schema_id = writer.add_schema(channel.type_name, channel.msgdef.encode())
                    self._schema_ids[channel.type_name] = schema_id
                metadata = None if channel.qos is None else offered_qos_metadata(channel.qos)
                channel.id = writer.add_channel(channel.topic, schema_id, metadata=metadata)
            data = payload if type(payload) is bytes else payload.to_cdr()  # type: ignore[union-attr]
            channel.count += 1
            writer.add_message(channel.id, log_ns, pub_ns, seq or channel.count, data)
            if not channel.first_ns or log_ns < channel.first_ns:
                channel.first_ns = log_ns
            channel.last_ns = max(channel.last_ns, log_ns)
            if not channel.first_pub_ns or pub_ns < channel.first_pub_ns:
                channel.first_pub_ns = pub_ns
            channel.last_pub_ns = max(channel.last_pub_ns, pub_ns)
            if channel.stamped:
                stamp = (
                    header_stamp_ns(data)
                    if type(payload) is bytes
                    else payload.header.stamp.to_ns()  # type: ignore[union-attr]
                )
                if stamp:  # 0: unstamped (a publisher that sets none)
                    if not channel.first_stamp_ns or stamp < channel.first_stamp_ns:
                        channel.first_stamp_ns = stamp
                    channel.last_stamp_ns = max(channel.last_stamp_ns, stamp)
            if channel.count == 1:
                channel.first_seq = channel.last_seq = seq if seq > 0 else -1
            elif channel.last_seq >= 0:
                channel.last_seq = seq if seq > channel.last_seq else -1
        except OSError as exc:
            self._fail(exc)
        except Exception:
            self._skipped += 1
            _LOG.exception("recorder: cannot record a message on %s", channel.topic)

    def _fail(self, exc: BaseException) -> None:
        if self._error is None:
            self._error = exc
            _LOG.error("recording to %s failed: %s; later messages are dropped", self.path, exc)


#: A live sample waiting for its publisher's token: type name, topic, payload, receive time
#: (wall ns) and its attachment.
_HeldSample = tuple[str, str, bytes, int, bus_attachment.Attachment]


class _ZenohRawSource:
    """Raw CDR payloads of every remote jointbus topic, typed by their data key (module doc)."""

    def __init__(self, recorder: Recorder, bus: Bus) -> None:
        import zenoh

        transport = bus.zenoh
        if transport is None:
            raise RecorderError("remote recording needs a bus with Zenoh attached")
        self._recorder = recorder
        self._transport = transport
        self._lock = threading.Lock()
        self._last_seq: dict[int, int] = {}
        #: First sequence number received live from each publisher (gid): older cached samples
        #: are recorded from the history query, newer ones were recorded live.
        self._first_live: dict[int, int] = {}
        #: Highest sequence number recorded from each publisher's cache: a live sample racing
        #: the query with the same number is not stored twice.
        self._history_seq: dict[int, int] = {}
        self._warned: set[str] = set()
        self.lost = 0
        self.lost_reliable = 0
        self.skipped = 0
        self._closed = False
        # Zenoh's receive thread only pushes into these FIFOs (Rust, no GIL); the writer thread
        # drains them (module docstring). Named topics get a subscriber each, not the domain's
        # and a filter here: a publisher sends only while a subscriber matches it, and one on
        # every topic made every publisher of the robot encode and send all its topics.
        domain_id = transport.domain_id
        wanted = recorder._topics
        selectors = (
            [domain_selector(domain_id)]
            if wanted is None
            else [topic_selector(domain_id, topic) for topic in sorted(wanted)]
        )
        self._subs: list[zenoh.Subscriber[zenoh.Handler[zenoh.Sample]]] = [
            transport.session.declare_subscriber(
                selector,
                zenoh.handlers.FifoChannel(REMOTE_QUEUE_SAMPLES),
                allowed_origin=zenoh.Locality.REMOTE,
            )
            for selector in selectors
        ]
        self._handlers = [sub.handler for sub in self._subs]
        #: (publisher gid, sequence number) of every sample recorded from a cache: a cache asked
        #: twice (its publisher found late, below) is not recorded twice.
        self._history_seen: set[tuple[int, int]] = set()
        #: transient-local publishers (gid) whose cache answered, and when (monotonic s) each
        #: one not answered yet was first seen by discovery
        self._history_answered: set[int] = set()
        self._history_pending: dict[int, float] = {}
        #: Live samples of publishers whose discovery token has not arrived: gid → (monotonic s
        #: of the first, the samples in order). ``_store`` explains why they wait.
        self._held: dict[int, tuple[float, list[_HeldSample]]] = {}
        #: Publishers whose token did not come within UNKNOWN_PUBLISHER_WAIT_S: not held again.
        self._unannounced: set[int] = set()
        self._history_thread = threading.Thread(
            target=self._fetch_history, name="jointbus-recorder-history", daemon=True
        )
        self._history_thread.start()

    def drain(self, limit: int) -> int:
        """Handle up to ``limit`` samples waiting in the FIFO (the writer thread); how many."""
        if self._closed:
            return 0
        if self._held:
            with self._lock:
                self._release_held(time.monotonic())
        on_sample = self._on_sample
        handled = 0
        for handler in self._handlers:
            try_recv = handler.try_recv
            while handled < limit:
                try:
                    sample = try_recv()
                except Exception:  # the subscriber was undeclared meanwhile
                    break
                if sample is None:
                    break
                on_sample(sample)
                handled += 1
        return handled

    def _fetch_history(self) -> None:
        """Record what the transient-local publishers' caches hold (module doc): every cache at
        the start, then the caches of transient-local publishers discovered later.

        Why the second part: the first query reaches only the caches this session already knows
        of. A recorder started while the robot comes up (or a latched publisher that appears
        later) would otherwise miss what was published before its live subscription reached the
        publisher — ``/tf_static`` and the parameters are published once. A publisher found by
        discovery whose cache has not answered is asked again every :data:`LATE_HISTORY_PERIOD_S`
        until it does or :data:`LATE_HISTORY_WINDOW_S` pass (its queryable's declaration travels
        apart from its graph token and may come later; an empty cache never answers)."""
        from jointbus.bus.zenoh_transport import history_selector

        domain = domain_selector(self._transport.domain_id)
        self._query_history(history_selector(domain))
        generation = -1
        while True:
            time.sleep(LATE_HISTORY_PERIOD_S)
            if self._closed:
                return
            now = time.monotonic()
            if self._transport.generation != generation:
                generation = self._transport.generation
                for info in self._transport.known_remote_endpoints():
                    if (
                        info.kind == "publisher"
                        and info.qos.transient_local
                        and info.gid not in self._history_answered
                        and info.gid not in self._history_pending
                        and self._recorder.wants(info.topic)
                    ):
                        self._history_pending[info.gid] = now
            zids: set[str] = set()
            for gid, since in list(self._history_pending.items()):
                known = self._transport.remote_info(gid)
                if gid in self._history_answered or known is None:
                    del self._history_pending[gid]
                elif now - since > LATE_HISTORY_WINDOW_S:
                    del self._history_pending[gid]  # an empty cache, or a publisher gone
                else:
                    zids.add(known.zid)
            for zid in sorted(zids):
                self._query_history(history_selector(domain, zid))

    def _query_history(self, selector: str) -> None:
        import zenoh

        from jointbus.bus.zenoh_transport import HISTORY_QUERY_TIMEOUT_S

        try:
            replies = self._transport.session.get(
                selector,
                target=zenoh.QueryTarget.ALL,
                consolidation=zenoh.ConsolidationMode.NONE,
                accept_replies=zenoh.ReplyKeyExpr.ANY,
                allowed_destination=zenoh.Locality.REMOTE,
                timeout=HISTORY_QUERY_TIMEOUT_S,
            )
            for reply in replies:
                sample = reply.ok
                if sample is None or self._closed:
                    continue
                self._on_sample(sample, history=True)
        except Exception:  # the session closed while the query ran
            if not self._closed:
                _LOG.warning("recorder: querying the latched topics' caches failed", exc_info=True)

    def _on_sample(self, sample: zenoh.Sample, history: bool = False) -> None:
        try:
            recorder = self._recorder
            # The data key names topic and type (rmw_zenoh's scheme): no need to wait for the
            # publisher's discovery token.
            topic, type_name = parse_data_key(str(sample.key_expr))[1:3]
            if not recorder.wants(topic) or topic in recorder._local_topics:
                return
            now = time.time_ns()
            raw_att = sample.attachment
            att = bus_attachment.unpack(None if raw_att is None else raw_att.to_bytes())
            if att is None:
                self._skip(topic, "a payload without rmw_zenoh's attachment (publisher unknown)")
                return
            payload = sample.payload.to_bytes()
            with self._lock:
                if history:
                    self._history_answered.add(att.gid)
                    if (att.gid, att.seq) in self._history_seen:
                        return  # this cache was asked before
                    self._history_seen.add((att.gid, att.seq))
                    first_live = self._first_live.get(att.gid)
                    if first_live is None or att.seq < first_live:
                        self._store(type_name, topic, payload, now, att, history=True)
                        seen = self._history_seq.get(att.gid, 0)
                        self._history_seq[att.gid] = max(seen, att.seq)
                    return
                self._deliver(type_name, topic, payload, now, att)
        except Exception:
            _LOG.exception("recorder: receiving a sample failed")

    def _deliver(
        self, type_name: str, topic: str, payload: bytes, now: int, att: bus_attachment.Attachment
    ) -> None:
        if att.seq <= self._history_seq.get(att.gid, 0):
            return  # already recorded from the publisher's cache
        last = self._last_seq.get(att.gid)
        if last is not None and att.seq > last + 1:
            gap = att.seq - last - 1
            self.lost += gap
            remote = self._transport.remote_info(att.gid)
            if remote is not None and remote.qos.reliable:
                self.lost_reliable += gap
        self._last_seq[att.gid] = att.seq
        self._first_live.setdefault(att.gid, att.seq)
        self._store(type_name, topic, payload, now, att)

    def _store(  # noqa: PLR0917 (one sample's parts)
        self,
        type_name: str,
        topic: str,
        payload: bytes,
        now: int,
        att: bus_attachment.Attachment,
        history: bool = False,
    ) -> None:
        # The publisher's QoS from its discovery token; a reply from a publisher's cache is
        # transient-local even before the token is seen.
        held = self._held.get(att.gid) if self._held and not history else None
        if held is not None:  # behind its publisher's earlier samples: in order
            held[1].append((type_name, topic, payload, now, att))
            return
        remote = self._transport.remote_info(att.gid)
        if remote is None and not history and att.gid not in self._unannounced:
            # A live sample can come before its publisher's token: the token is handled on
            # another thread, and a message put while the two sessions were still exchanging
            # declarations can reach a subscriber declared meanwhile (our reading of a failure
            # seen once; not reproduced). The channel's QoS is fixed when it is
            # first written, so the sample waits for the token (drain releases it) rather than
            # record a latched topic as volatile.
            self._held[att.gid] = (time.monotonic(), [(type_name, topic, payload, now, att)])
            return
        qos = remote.qos if remote is not None else (LATCHED if history else None)
        try:
            channel = self._recorder.channel(topic, type_name, qos=qos)
        except UnknownTypeError:
            self._skip(topic, f"type {type_name!r} unknown to the message registry")
            return
        self._recorder.enqueue(channel, payload, now, att.source_wall_ns, att.seq)

    def _release_held(self, now: float, everything: bool = False) -> None:
        """Store the held samples whose publisher is now known, or that waited
        UNKNOWN_PUBLISHER_WAIT_S (then with no QoS), or all of them (``everything``: stopping).
        Called with the lock held."""
        for gid, (since, samples) in list(self._held.items()):
            known = self._transport.remote_info(gid) is not None
            if not (known or everything or now - since > UNKNOWN_PUBLISHER_WAIT_S):
                continue
            del self._held[gid]
            if not known:
                self._unannounced.add(gid)
            for type_name, topic, payload, received, att in samples:
                self._store(type_name, topic, payload, received, att)

    def _skip(self, topic: str, why: str) -> None:
        self.skipped += 1
        if topic not in self._warned:
            self._warned.add(topic)
            _LOG.warning("recorder: not recording %s: %s", topic, why)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with self._lock:  # before the writer's last pass (Recorder.stop): nothing held is lost
            self._release_held(time.monotonic(), everything=True)
        for sub in self._subs:
            try:
                sub.undeclare()  # type: ignore[no-untyped-call]
            except Exception:  # the session may already be closed
                _LOG.debug("recorder: undeclaring a Zenoh subscriber failed", exc_info=True)


class _DdsRawSource:
    """Raw CDR payloads of every remote topic on DDS (the transport's raw tap: one reader per topic
    and type its publishers announce; transient-local readers for latched topics, which bring
    their history). DDS shows a reader no sequence numbers: ``lost`` stays 0, and each
    publisher's samples are numbered in arrival order."""

    def __init__(self, recorder: Recorder, bus: Bus) -> None:
        from jointbus.bus.dds_transport import DdsTransport

        transport = bus.transport
        if not isinstance(transport, DdsTransport):
            raise RecorderError("a DDS raw source needs a bus on DDS")
        self._recorder = recorder
        self._lock = threading.Lock()
        self._seq: dict[int, int] = {}
        self._warned: set[str] = set()
        self.lost = 0
        self.lost_reliable = 0  # DDS shows no sequence numbers: never known to be lost
        self.skipped = 0
        self._closed = False
        self._tap = transport.tap_all(self._on_sample, self._resolve)

    def drain(self, _limit: int) -> int:
        """Nothing to hand over: the tap's callback queues each sample as it arrives."""
        return 0

    def _resolve(self, type_name: str) -> type[Message] | None:
        try:
            cls = self._recorder._registry.by_type_name(type_name)
        except UnknownTypeError:
            return None
        return cls if isinstance(cls, type) and issubclass(cls, Message) else None

    def _on_sample(self, sample: Any) -> None:
        try:
            recorder = self._recorder
            if not recorder.wants(sample.topic) or sample.topic in recorder._local_topics:
                return
            now = time.time_ns()
            try:
                channel = recorder.channel(sample.topic, sample.type_name, qos=sample.qos)
            except UnknownTypeError:
                self._skip(sample.topic, f"type {sample.type_name!r} unknown to the registry")
                return
            with self._lock:
                seq = self._seq[sample.publisher] = self._seq.get(sample.publisher, 0) + 1
            recorder.enqueue(channel, sample.payload, now, sample.source_wall_ns, seq)
        except Exception:
            _LOG.exception("recorder: receiving a sample failed")

    def _skip(self, topic: str, why: str) -> None:
        self.skipped += 1
        if topic not in self._warned:
            self._warned.add(topic)
            _LOG.warning("recorder: not recording %s: %s", topic, why)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._tap.undeclare()


__all__ = [
    "DEFAULT_DISCOVERY_INTERVAL",
    "DEFAULT_FLUSH_INTERVAL",
    "POLL_INTERVAL",
    "Recorder",
    "RecorderStats",
    "TopicRecord",
]
