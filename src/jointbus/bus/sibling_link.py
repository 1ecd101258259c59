"""Same-host links between the processes of one launch: the 500 Hz streams without Zenoh's hops.

Where it sits: :mod:`jointbus.bus`, an adjunct of the Zenoh transport
(:meth:`jointbus.bus.zenoh_transport.ZenohTransport.join_siblings`). It knows sockets, topics and
the transport's publisher links and topic subscriptions; nothing of robots or layouts.
:class:`jointbus.stack.Stack` gives each process of a layout its :class:`SiblingGroup` (the
launch's key, its own name, its siblings' names); ``launch.yaml``'s ``same_host_link`` turns it
off.

**Why hand-written, beside Zenoh.** Between the bridge process and the control process three
messages cross every 2 ms cycle (the frame and the bridge's state one way, the joint command the
other). Over Zenoh each costs the sending process its tx thread's wake-up and the receiving
process an rx thread, zenoh-python's callback thread and the GIL hand-over: ≈ 400 µs of CPU a
cycle together, as much as the bare loop's whole cycle (docs/PERFORMANCE.md, "Thread by thread").
Zenoh's shared memory saves the copy, not the wake-ups (its notification goes the same way);
iceoryx2 saved 35 µs of 74 a message (``bench_shm``). Measured here (2026-12-06, plain Python,
400 bytes at 500 Hz, two processes, receiving thread handing to a consumer thread as the bus
does): a ``SOCK_SEQPACKET`` socket pair costs the receiver 33 µs a message and the sender one
``sendmsg``, against Zenoh's 104–127 µs and 84–108 µs. ``bench_layout`` measures the layout
with and without the links in one run (``layout.*.cpu_with_same_host_link_vs_zenoh``: 0.78–0.99×
of the CPU over Zenoh standing, 0.82–0.87× walking, 2026-12-06).

What a link is: a Unix ``SOCK_SEQPACKET`` connection (one datagram per message, in order, never
merged or split) from each process to each sibling, on Linux's abstract socket namespace
(no file to leave behind), named by a random key the launcher made for this launch. A process
accepts only its own launcher's children: the connecting process must run as the same user
and have the same parent (``SO_PEERCRED``, ``/proc/<pid>/stat``).

What it carries — only **best-effort, volatile** topics, the per-cycle streams whose loss the bus
already tolerates and reports (``MAB_RT``): a reliable or latched topic keeps Zenoh's reliability,
congestion control and history. A process tells each sibling which such topics it subscribes, with
their type and hash; a sibling's publisher of the same type then sends each message over the link
(``sendmsg`` without blocking: a full socket drops the message, counted by the receiver as a gap
of sequence numbers, as a dropped Zenoh sample is), and over Zenoh only while Zenoh reports a
matching subscriber. The receiving process declares no Zenoh subscriber for a topic whose every
publisher the ROS 2 graph names is heard by a link already (and all of whose local subscribers
are carried), so that subscriber is someone else's — a recorder, ``topic echo`` or ``hz``,
another machine; a publisher the graph names and no link brings keeps it declared. (A plain Zenoh
``put`` with no graph token is therefore not heard on such a topic.) The receiving process
delivers through the topic's Zenoh subscription — the same receive gate, sequence-gap and latency
counting, type and QoS checks as a Zenoh sample — and drops the Zenoh copy of a message it had by
the link (same publisher GID). A sibling that dies takes its link with it: its publishers'
streams fall back to Zenoh (the receiver declares its Zenoh subscriber again for any publisher
the graph still names), and a respawned sibling is linked again within :data:`RETRY_S`.

The links' thread can also be a node's callback thread (:meth:`SiblingLinks.dispatcher`): the
control node's step then runs in the wake-up that received its frame, not after a second thread's
(−42 to −135 µs of the control process's CPU a cycle, docs/PERFORMANCE.md, "One wake-up per
frame").

A process whose loop is a rate loop (the bridge's) can read its inbound links itself instead
(:meth:`SiblingLinks.inbound_reader`): the loop reads every message waiting, once a cycle, right
before it takes its commands, and the links' thread is not woken for them. Why: the joint command
woke the bridge process's links' thread each cycle, and the thread then waited for the
interpreter the loop held (a GIL hand-over in the middle of a cycle at 1 kHz, where the cycle
takes most of the period), 72 µs of CPU a cycle in one reading against 45–48 on the loop for the
same message; at 1 kHz the bridge's process read 60–257 µs a cycle less in eight pairs
(docs/PERFORMANCE.md, "The loop reads its links").

Frames: ``H`` + JSON ``{"name"}`` (hello, connector to acceptor), ``S`` + topic id (u32) + JSON
``{"topic", "type", "hash"}`` (the acceptor subscribes), ``U`` + topic id (no longer), ``D`` +
topic id + the 33-byte rmw_zenoh attachment + the CDR payload (data, connector to acceptor).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import selectors
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from jointbus.bus import attachment
from jointbus.bus.dispatcher import Dispatcher, HostedDispatcher
from jointbus.bus.errors import BusError
from jointbus.bus.qos import QosProfile

if TYPE_CHECKING:
    from jointbus.bus.zenoh_transport import ZenohTransport

_LOG = logging.getLogger("jointbus.bus.sibling")

#: How often a process tries again to connect to a sibling it has no link to (s).
RETRY_S: Final = 0.2
#: Send buffer of a link (bytes): ≈ 60 frames of hb50 at 500 Hz (0.12 s) before a stalled
#: receiver's messages are dropped rather than delivered late.
SEND_BUFFER_BYTES: Final = 64 * 1024
_TOPIC_ID: Final = struct.Struct("<I")
_DATA_HEAD: Final = 1 + _TOPIC_ID.size
_ATT_END: Final = _DATA_HEAD + attachment.SIZE
#: The largest message a link carries (bytes; a larger one arrives cut, and fails to decode:
#: counted malformed). hb50's frame is ≈ 400 bytes.
MAX_FRAME_BYTES: Final = 1 << 20
_D: Final = ord("D")
#: Never block the sender's loop; a dead sibling is an error here, not a SIGPIPE.
_SEND_FLAGS: Final = socket.MSG_DONTWAIT | socket.MSG_NOSIGNAL
_RECV_FLAGS: Final = socket.MSG_DONTWAIT
#: The most messages :meth:`InboundReader.read` delivers a call: one command a cycle is the
#: rule, a few with a second controller; 16 received cost ≈ 0.3–0.7 ms of a loop on this VM
#: (20–45 µs each), and a full link (:data:`SEND_BUFFER_BYTES`, ≈ 115 hb50 commands after a
#: stall) drains in 8 cycles.
READ_LIMIT: Final = 16
_NAME_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")
_PEERCRED: Final = struct.Struct("3i")


def carried(qos: QosProfile) -> bool:
    """Whether a link carries a topic endpoint of this QoS: best effort and volatile only."""
    return not qos.reliable and not qos.transient_local


@dataclass(frozen=True, slots=True)
class SiblingGroup:
    """The processes of one launch as one of them sees it: the launch's ``key`` (random hex),
    this process's ``name`` and its siblings' ``peers`` (process names of the layout)."""

    key: str
    name: str
    peers: tuple[str, ...]

    def __post_init__(self) -> None:
        for role, value in (("name", self.name), *(("peer", p) for p in self.peers)):
            if not value or not set(value) <= _NAME_CHARS:
                raise BusError(f"sibling group {role} {value!r}; expected [a-z0-9_]+")
        if not self.key or not all(c in "0123456789abcdef" for c in self.key):
            raise BusError(f"sibling group key {self.key!r}; expected lower-case hex")
        if self.name in self.peers:
            raise BusError(f"sibling group: {self.name!r} is among its own peers")

    @classmethod
    def of_launch(cls, names: Iterable[str]) -> tuple[SiblingGroup, ...]:
        """One group per process of a new launch (a fresh random key)."""
        key = secrets.token_hex(16)
        all_names = tuple(names)
        return tuple(cls(key, name, tuple(n for n in all_names if n != name)) for name in all_names)

    def address(self, name: str) -> bytes:
        """The abstract socket address of process ``name`` of this launch."""
        return b"\0jointbus-sibling/" + self.key.encode() + b"/" + name.encode()

    def to_arg(self) -> str:
        """``key:name:peer,peer`` (a child's command line; :meth:`from_arg` reads it)."""
        return f"{self.key}:{self.name}:{','.join(self.peers)}"

    @classmethod
    def from_arg(cls, text: str) -> SiblingGroup:
        """The group :meth:`to_arg` wrote (:class:`BusError` for anything else)."""
        parts = text.split(":")
        if len(parts) != 3:
            raise BusError(f"sibling group {text!r}; expected key:name:peer,peer")
        key, name, peers = parts
        return cls(key, name, tuple(p for p in peers.split(",") if p))


@dataclass(frozen=True, slots=True)
class SiblingTarget:
    """Where a publisher's message goes over a link: the socket and the frame's head (``D`` and
    the receiver's topic id)."""

    sock: socket.socket
    head: bytes


@dataclass(slots=True)
class _Sibling:
    """One sibling process: its links and what it subscribes."""

    name: str
    out: socket.socket | None = None  # our messages to it; its announcements come back here
    inbound: socket.socket | None = None  # its messages to us
    #: topic → (frame head, type name, type hash) of what it subscribes (its ``S`` frames).
    topics: dict[str, tuple[bytes, str, str]] = field(default_factory=dict)
    next_try: float = 0.0


class SiblingLinks:
    """This process's links to the other processes of its launch (see the module docstring).

    One thread (``jointbus-sibling``) accepts, connects, reads announcements and receives
    messages, delivering them through the transport's topic subscriptions (realtime subscribers
    are called on it, as on Zenoh's receive thread). It also serves the callbacks of the
    dispatchers it hosts (:meth:`dispatcher`) after each wake-up, so a message by link reaches
    such a callback in the wake-up that received it."""

    def __init__(self, transport: ZenohTransport, group: SiblingGroup) -> None:
        self._transport = transport
        self.group = group
        self._lock = threading.Lock()
        self._closed = False
        self._siblings = {name: _Sibling(name) for name in group.peers}
        #: Topics this process announced: topic → the id its siblings' frames carry.
        self._announced: dict[str, int] = {}
        self._topic_of: dict[int, str] = {}
        self._next_id = 0
        #: When the links' thread next looks for siblings to connect to (monotonic s).
        self._connect_after = 0.0
        #: Accepted connections not yet introduced (no ``H`` yet).
        self._pending: set[socket.socket] = set()
        #: Topics whose Zenoh subscriber is to be declared or undeclared (:meth:`reconsider`).
        self._reconsider: set[str] = set()
        #: Refused connections (not our launch's children).
        self.refused = 0
        #: Messages delivered by this thread, and by readers (each counter has one writer).
        self._received_here = 0
        self._received_by_readers = 0
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._listener.bind(group.address(group.name))
        except OSError as exc:
            self._listener.close()
            raise BusError(
                f"process {group.name!r} cannot open its same-host link: {exc}"
            ) from None
        self._listener.listen(len(group.peers) * 2 + 2)
        self._listener.setblocking(False)
        # One receive buffer, reused: a fresh 1 MiB ``recv`` per message cost ≈ 40 µs (allocated,
        # faulted in and given back each time).
        self._buffer = bytearray(MAX_FRAME_BYTES)
        self._view = memoryview(self._buffer)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._listener, selectors.EVENT_READ)
        #: Dispatchers served on this thread (:meth:`dispatcher`); new ones start on it first.
        self._hosted: list[HostedDispatcher] = []
        self._hosted_new: list[HostedDispatcher] = []
        #: The inbound links a caller's loop reads (:meth:`inbound_reader`): (socket, sibling)
        #: pairs, replaced whole under ``_lock``; ``_poll_lock`` is held while a reader reads
        #: them and while this thread closes one, so no socket is closed under a read.
        self._reader: InboundReader | None = None
        self._polled: tuple[tuple[socket.socket, str], ...] = ()
        self._poll_lock = threading.Lock()
        #: Links a reader found closed, and whether the readers' sockets change hands (both for
        #: this thread to act on at its next wake-up).
        self._polled_gone: list[tuple[socket.socket, str]] = []
        self._handover = False
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ)
        self._thread = threading.Thread(target=self._run, name="jointbus-sibling", daemon=True)
        self._thread.start()

    # ---- what publishers and subscribers ask ---------------------------------------------------
    def targets(self, topic: str, type_name: str, type_hash: str) -> tuple[SiblingTarget, ...]:
        """Where a carried publisher of ``topic`` sends: every linked sibling that subscribes to
        it with the same type and hash."""
        with self._lock:
            found = []
            for sibling in self._siblings.values():
                wanted = sibling.topics.get(topic)
                if (
                    wanted is not None
                    and sibling.out is not None
                    and wanted[1:] == (type_name, type_hash)
                ):
                    found.append(SiblingTarget(sibling.out, wanted[0]))
            return tuple(found)

    def linked(self) -> tuple[str, ...]:
        """Names of the siblings linked both ways now."""
        with self._lock:
            return tuple(
                s.name
                for s in self._siblings.values()
                if s.out is not None and s.inbound is not None
            )

    def subscriptions_changed(self, topic: str, subscribed: bool) -> None:
        """This process's carried subscription of ``topic`` began or ended: tell the siblings."""
        with self._lock:
            if self._closed:
                return
            if subscribed:
                if topic in self._announced:
                    return
                self._next_id += 1
                topic_id = self._announced[topic] = self._next_id
                self._topic_of[topic_id] = topic
                frame = self._subscribe_frame(topic, topic_id)
            else:
                gone = self._announced.pop(topic, None)
                if gone is None:
                    return
                self._topic_of.pop(gone, None)
                frame = b"U" + _TOPIC_ID.pack(gone)
            inbound = [s.inbound for s in self._siblings.values() if s.inbound is not None]
        for sock in inbound:
            _send_quietly(sock, frame)

    def reconsider(self, topic: str) -> None:
        """Have the links' thread declare or undeclare ``topic``'s Zenoh subscriber as the
        transport says it is needed (never on a Zenoh callback's thread)."""
        with self._lock:
            if self._closed:
                return
            self._reconsider.add(topic)
        self._wake()

    def dispatcher(self, name: str, on_start: Callable[[], object] | None = None) -> Dispatcher:
        """A dispatcher whose callbacks run on the links' thread (``on_start`` first runs there:
        a node's real-time scheduling and CPU then are this thread's). For the node whose
        callback is its process's loop — the control node's step on each frame — so a frame by
        link is received and stepped on in one wake-up; its messages from Zenoh (a velocity
        command) wake this thread to run theirs (:class:`~jointbus.bus.dispatcher.
        HostedDispatcher`)."""
        created = HostedDispatcher(name, self._wake, on_start)
        with self._lock:
            if self._closed:
                raise BusError(f"the same-host links of {self.group.name!r} are closed")
            self._hosted_new.append(created)
        self._wake()
        return created

    def inbound_reader(self) -> InboundReader:
        """Read the messages siblings send this process on the caller's thread, at
        :meth:`InboundReader.read`, instead of on the links' thread (module docstring): for a
        process whose loop takes its inputs once a cycle (the bridge's). One at a time: a second
        while one is open is a :class:`BusError`. Announcements, hellos and closed links stay the
        links' thread's."""
        with self._lock:
            if self._closed:
                raise BusError(f"the same-host links of {self.group.name!r} are closed")
            if self._reader is not None:
                raise BusError(f"the inbound links of {self.group.name!r} already have a reader")
            reader = self._reader = InboundReader(self)
            self._handover = True
        self._wake()
        return reader

    def _reader_closed(self, reader: InboundReader) -> None:
        with self._lock:
            if self._reader is reader:
                self._reader = None
                self._handover = True
        self._wake()

    def _hand_over(self) -> None:
        """Give every named inbound link to the reader, or take them all back (this thread)."""
        with self._lock:
            self._handover = False
            reading = self._reader is not None
            inbound = [(s.inbound, s.name) for s in self._siblings.values() if s.inbound]
        with self._poll_lock:
            for sock, name in inbound:
                with contextlib.suppress(KeyError, ValueError, OSError):
                    self._selector.unregister(sock)
                if not reading:
                    try:
                        self._selector.register(sock, selectors.EVENT_READ, ("in", name))
                    except (ValueError, OSError):  # closed meanwhile: its drop is under way
                        continue
            with self._lock:
                self._polled = tuple(inbound) if reading else ()

    def _take_gone(self) -> None:
        """Drop the links a reader found closed (this thread)."""
        with self._lock:
            gone, self._polled_gone = self._polled_gone, []
        for sock, name in gone:
            self._drop(sock, ("in", name))

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # full: a wake-up is pending anyway; closed: ending
            self._wake_w.send(b"w", socket.MSG_DONTWAIT)

    def _serve_hosted(self) -> bool:
        """Start new hosted dispatchers and serve all; whether any has more waiting."""
        if self._hosted_new:
            with self._lock:
                new, self._hosted_new = self._hosted_new, []
            for hosted in new:
                hosted.start()
            self._hosted += new
        busy = closed = False
        for hosted in self._hosted:
            if hosted.closed:
                closed = True
                continue
            hosted.serve()
            busy = busy or hosted.pending
        if closed:  # forgotten here, on the thread that iterates them
            self._hosted = [h for h in self._hosted if not h.closed]
        return busy

    def _subscribe_frame(self, topic: str, topic_id: int) -> bytes:
        subscription = self._transport.subscription(topic)
        if subscription is None:
            type_name, type_hash = "", ""
        else:
            type_name, type_hash = subscription.type_name, subscription.type_hash
        body = json.dumps({"topic": topic, "type": type_name, "hash": type_hash})
        return b"S" + _TOPIC_ID.pack(topic_id) + body.encode()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` ran."""
        return self._closed

    @property
    def received(self) -> int:
        """Messages received over the links (by this thread and by readers)."""
        return self._received_here + self._received_by_readers

    # ---- the thread -----------------------------------------------------------------------------
    def _run(self) -> None:
        busy = False
        while not self._closed:
            try:
                events = self._selector.select(timeout=0.0 if busy else RETRY_S)
            except (OSError, ValueError):
                if self.closed:
                    return
                raise
            for key, _mask in events:
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                try:
                    if sock is self._listener:
                        self._accept()
                    elif sock is self._wake_r:
                        with contextlib.suppress(BlockingIOError):
                            sock.recv(4096)
                    else:
                        self._read(sock, key.data)
                except Exception:  # one bad frame or peer must not end every link
                    if self.closed:
                        return
                    _LOG.exception("same-host link %s failed", key.data or "(accepting)")
                    if sock is not self._listener and sock is not self._wake_r:
                        self._drop(sock, key.data)
            busy = self._serve_hosted()
            if self._handover:
                self._hand_over()
            if self._polled_gone:
                self._take_gone()
            self._connect_missing()
            with self._lock:
                topics, self._reconsider = self._reconsider, set()
            for topic in topics:
                try:
                    with _ordinary_scheduling():  # a Zenoh subscriber starts a callback thread
                        self._transport.listen_as_needed(topic)
                except Exception:
                    if self.closed:
                        return
                    _LOG.exception("declaring or undeclaring the Zenoh subscriber of %s", topic)

    def _connect_missing(self) -> None:
        # runs after every wake-up (500-1 500 a second): a look at the siblings costs ≈ 3 µs,
        # so look only when a try is due — every RETRY_S, as each sibling's own next try
        now = time.monotonic()
        if now < self._connect_after:
            return
        self._connect_after = now + RETRY_S
        for sibling in list(self._siblings.values()):
            if sibling.out is not None or now < sibling.next_try or self._closed:
                continue
            sibling.next_try = now + RETRY_S
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                sock.connect(self.group.address(sibling.name))
            except OSError:
                sock.close()  # not started yet, or gone: Zenoh carries its messages meanwhile
                continue
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER_BYTES)
            hello = json.dumps({"name": self.group.name})
            try:
                sock.send(b"H" + hello.encode())
            except OSError:
                sock.close()
                continue
            with self._lock:
                sibling.out = sock
                sibling.topics = {}
            self._selector.register(sock, selectors.EVENT_READ, ("out", sibling.name))

    def _accept(self) -> None:
        try:
            sock, _ = self._listener.accept()
        except BlockingIOError:
            return
        why = _not_a_sibling(sock)
        if why is not None:
            self.refused += 1
            _LOG.warning("refused a same-host link: %s", why)
            sock.close()
            return
        sock.setblocking(True)
        with self._lock:
            self._pending.add(sock)
        self._selector.register(sock, selectors.EVENT_READ, ("in", ""))

    def _read(self, sock: socket.socket, data: tuple[str, str]) -> None:
        """Every message waiting on ``sock`` (one wake-up for the frame and the state the bridge
        sends back to back)."""
        direction, name = data
        buffer = self._buffer
        flags = 0
        while True:
            try:
                size = sock.recv_into(buffer, 0, flags)
            except BlockingIOError:
                return
            except ConnectionError:  # the sibling ended (its death is reported elsewhere)
                size = 0
            if size == 0:  # the sibling closed the link (no frame is empty)
                self._drop(sock, data)
                return
            flags = socket.MSG_DONTWAIT
            if buffer[0] == _D and direction == "in":
                self._received_here += self._deliver(self._view, size, name)
            else:
                with _ordinary_scheduling():
                    self._control(sock, bytes(self._view[:size]), direction, name)
                if direction == "in" and not name:
                    return  # a hello: the selector's key now names the sibling

    def _control(self, sock: socket.socket, frame: bytes, direction: str, name: str) -> None:
        kind = frame[:1]
        if kind == b"H" and direction == "in":
            self._hello(sock, json.loads(frame[1:]))
        elif kind == b"S" and direction == "out":
            (topic_id,) = _TOPIC_ID.unpack_from(frame, 1)
            body = json.loads(frame[_DATA_HEAD:])
            topic = str(body["topic"])
            with self._lock:
                self._siblings[name].topics[topic] = (
                    b"D" + _TOPIC_ID.pack(topic_id),
                    str(body["type"]),
                    str(body["hash"]),
                )
            self._transport.siblings_changed(topic)
        elif kind == b"U" and direction == "out":
            (topic_id,) = _TOPIC_ID.unpack_from(frame, 1)
            head = b"D" + _TOPIC_ID.pack(topic_id)
            with self._lock:
                topics = self._siblings[name].topics
                gone = [t for t, w in topics.items() if w[0] == head]
                for topic in gone:
                    del topics[topic]
            for topic in gone:
                self._transport.siblings_changed(topic)
        else:
            raise BusError(f"unexpected frame {kind!r} on a link ({direction}, {name or '?'})")

    def _deliver(self, view: memoryview, size: int, sibling: str) -> bool:
        """The data frame of ``size`` bytes at the start of ``view``, through its topic's
        subscription (on the links' thread, or a reader's); whether a subscription took it."""
        (topic_id,) = _TOPIC_ID.unpack_from(view, 1)
        topic = self._topic_of.get(topic_id)
        if topic is None:
            return False  # a message sent before our unsubscribe reached its publisher
        subscription = self._transport.subscription(topic)
        if subscription is None:
            return False
        subscription.receive_sibling(
            bytes(view[_DATA_HEAD:_ATT_END]), bytes(view[_ATT_END:size]), sibling
        )
        return True

    def _hello(self, sock: socket.socket, body: object) -> None:
        """An accepted link introduced itself: it is the sibling's messages to us, and it gets
        what this process subscribes."""
        if not isinstance(body, dict):
            raise BusError("a link's hello is not a JSON object")
        peer = str(body.get("name", ""))
        sibling = self._siblings.get(peer)
        if sibling is None:
            raise BusError(f"a link from {peer!r}, which is not a sibling of {self.group.name!r}")
        with self._lock:
            self._pending.discard(sock)
            old = sibling.inbound
            sibling.inbound = sock
            frames = [
                self._subscribe_frame(topic, topic_id)
                for topic, topic_id in self._announced.items()
            ]
        if old is not None:
            self._close_socket(old)
            self._transport.sibling_gone(peer)
        # the reader's from now on (what is already waiting behind the hello too), or ours
        with self._lock:
            reading = self._reader is not None
            if reading:
                self._polled = (*(p for p in self._polled if p[0] is not old), (sock, peer))
        if reading:
            self._selector.unregister(sock)
        else:
            self._selector.modify(sock, selectors.EVENT_READ, ("in", peer))
        for frame in frames:
            _send_quietly(sock, frame)

    def _drop(self, sock: socket.socket, data: tuple[str, str]) -> None:
        with _ordinary_scheduling():  # the streams fall back to Zenoh: its subscribers declared
            self._drop_link(sock, data)

    def _drop_link(self, sock: socket.socket, data: tuple[str, str]) -> None:
        direction, name = data
        topics: list[str] = []
        with self._lock:
            self._pending.discard(sock)
            sibling = self._siblings.get(name)
            if sibling is not None:
                if direction == "out" and sibling.out is sock:
                    sibling.out = None
                    self._connect_after = 0.0  # try it again at once
                    topics = list(sibling.topics)
                    sibling.topics = {}
                elif direction == "in" and sibling.inbound is sock:
                    sibling.inbound = None
        self._close_socket(sock)
        for topic in topics:
            self._transport.siblings_changed(topic)
        if direction == "in" and name:
            self._transport.sibling_gone(name)

    def _close_socket(self, sock: socket.socket) -> None:
        with contextlib.suppress(KeyError, ValueError, OSError):
            self._selector.unregister(sock)
        with self._poll_lock:  # never under a reader's read
            with self._lock:
                if any(p[0] is sock for p in self._polled):
                    self._polled = tuple(p for p in self._polled if p[0] is not sock)
            sock.close()

    def close(self) -> None:
        """Close every link and the listening socket, and end the thread. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            socks = [s for sib in self._siblings.values() for s in (sib.out, sib.inbound) if s]
            socks += list(self._pending)
            for sibling in self._siblings.values():
                sibling.out = sibling.inbound = None
                sibling.topics = {}
            hosted = self._hosted + self._hosted_new
        for dispatcher in hosted:
            dispatcher.close()
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=2.0)
        with self._poll_lock:
            self._polled = ()
            for sock in (*socks, self._listener, self._wake_r, self._wake_w):
                sock.close()
        self._selector.close()


class InboundReader:
    """A loop's reading of its process's inbound links (:meth:`SiblingLinks.inbound_reader`).

    :meth:`read` delivers every message waiting, as the links' thread would have: the same
    subscriptions, receive gate and counting; a realtime subscriber's callback runs on the
    caller's thread. At most ``limit`` messages a call (:data:`READ_LIMIT`): a backlog after the
    loop stalled, or a flood, waits in the socket — whose sender drops what no longer fits,
    counted by the receiver as a gap — and drains over the next calls instead of holding one
    cycle. :meth:`close` gives the links back to the links' thread."""

    __slots__ = ("_buffer", "_closed", "_links", "_view", "delivered")

    def __init__(self, links: SiblingLinks) -> None:
        self._links = links
        self._closed = False
        # Its own buffer: the links' thread still reads hellos and announcements into its own.
        self._buffer = bytearray(MAX_FRAME_BYTES)
        self._view = memoryview(self._buffer)
        #: Messages this reader took off the links (delivered, or dropped as a Zenoh copy's).
        self.delivered = 0

    def read(self, limit: int = READ_LIMIT) -> int:
        """Deliver the messages waiting on the inbound links, at most ``limit``; how many it
        took off them (one whose Zenoh copy came first is taken and dropped)."""
        links = self._links
        buffer, view = self._buffer, self._view
        done = 0
        gone: list[tuple[socket.socket, str]] = []
        with links._poll_lock:
            if self._closed:
                return 0
            for sock, name in links._polled:
                while done < limit:
                    try:
                        size = sock.recv_into(buffer, 0, _RECV_FLAGS)
                    except BlockingIOError:
                        break
                    except OSError:  # the sibling ended (reset), or the link is closing
                        size = 0
                    if size == 0 or buffer[0] != _D:  # closed, or not a data frame: dropped
                        gone.append((sock, name))
                        break
                    done += 1
                    if links._deliver(view, size, name):
                        links._received_by_readers += 1
        if gone:
            with links._lock:
                links._polled = tuple(p for p in links._polled if p not in gone)
                links._polled_gone += gone
            links._wake()
        self.delivered += done
        return done

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` ran."""
        return self._closed

    def close(self) -> None:
        """Stop reading: the links' thread reads the inbound links again. Idempotent."""
        if not self._closed:
            self._closed = True
            self._links._reader_closed(self)


def send_to(targets: tuple[SiblingTarget, ...], att: bytes, payload: bytes) -> None:
    """One message to each target, never blocking: a full link drops it (the receiver counts
    the gap in the sequence numbers), a closed one is the reader thread's to notice."""
    for target in targets:
        with contextlib.suppress(OSError):
            target.sock.sendmsg((target.head, att, payload), (), _SEND_FLAGS)


@contextlib.contextmanager
def _ordinary_scheduling() -> Iterator[None]:
    """Run the block with the main thread's scheduling (policy, priority, CPUs), then this
    thread's again.

    Why: a thread starts with its creator's scheduling. The links' thread may serve a node's
    callbacks at that node's real-time priority on its CPU (:meth:`SiblingLinks.dispatcher`); the
    Zenoh subscribers it declares meanwhile start callback threads, which inherited that priority
    and CPU (a user's trial counted four threads of the control process at the step's priority
    49 on its CPU, where the layout gives the process's other threads 39 on any CPU). The links'
    thread declares them here with the process's ordinary scheduling instead. Only for what
    happens when links and subscriptions change, never per message: six system calls."""
    def scheduling(tid: int) -> tuple[int, os.sched_param, set[int]]:
        return os.sched_getscheduler(tid), os.sched_getparam(tid), os.sched_getaffinity(tid)

    try:
        own, ordinary = scheduling(0), scheduling(os.getpid())  # os.getpid(): the main thread
    except OSError:  # not readable here: leave the scheduling as it is
        yield
        return
    if own == ordinary:
        yield
        return
    try:
        os.sched_setscheduler(0, ordinary[0], ordinary[1])
        os.sched_setaffinity(0, ordinary[2])
    except OSError:
        pass  # lowering one's own priority is always allowed; an odd host keeps its own
    try:
        yield
    finally:
        try:
            os.sched_setscheduler(0, own[0], own[1])
            os.sched_setaffinity(0, own[2])
        except OSError as exc:
            _LOG.warning("the same-host links' thread could not take its scheduling back: %s", exc)


def _send_quietly(sock: socket.socket, frame: bytes) -> None:
    with contextlib.suppress(OSError):
        sock.send(frame)


def _not_a_sibling(sock: socket.socket) -> str | None:
    """Why a connecting process is not one of our launch's children (None when it is): another
    user, or another parent."""
    try:
        pid, uid, _gid = _PEERCRED.unpack(
            sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size)
        )
    except OSError as exc:
        return f"its credentials could not be read ({exc})"
    if uid != os.getuid():
        return f"process {pid} runs as user {uid}, not {os.getuid()}"
    parent = _parent_of(pid)
    if parent != os.getppid():
        return f"process {pid}'s parent is {parent}, not this launch's ({os.getppid()})"
    return None


def _parent_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            text = stat.read()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: the fields after its last ')'
    fields = text[text.rfind(")") + 2 :].split()
    return int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else None


__all__ = [
    "READ_LIMIT",
    "RETRY_S",
    "SEND_BUFFER_BYTES",
    "InboundReader",
    "SiblingGroup",
    "SiblingLinks",
    "SiblingTarget",
    "carried",
    "send_to",
]
