"""The DDS transport: the same topics on ROS 2's other wire, for machines on Cyclone or Fast DDS.

Where it sits: :mod:`jointbus.bus`, attached to one :class:`jointbus.bus.Bus` in place of the Zenoh
transport when the middleware is a DDS one (``RMW_IMPLEMENTATION=rmw_cyclonedds_cpp`` or
``rmw_fastrtps_cpp``; :mod:`jointbus.bus.rmw`). It offers the bus the Zenoh transport's seams —
``publisher_added`` / ``subscriber_added`` and their removals, ``graph``, ``remote_endpoints``,
``remote_info``, services (:mod:`jointbus.bus.service_dds`), taps on raw samples — so local
delivery, the runtime, the tools and the CLI work unchanged on either wire.

On the wire jointbus is a ROS 2 participant as rmw_cyclonedds makes one (``docs/ROS2.md``):

- **One participant per bus** in the ROS domain (``DdsConfig.domain``), USER_DATA
  ``enclave=/;``; joined with :mod:`jointbus.bus.dds_config`'s settings (loopback by default).
- **Topics**: ``/a/b`` is the DDS topic ``rt/a/b`` of type ``pkg::msg::dds_::Name_``, keyless,
  XCDR1 (data representation policy XCDR1 only, as rmw_cyclonedds requests it). Every endpoint's
  USER_DATA carries ``typehash=RIHS01_…;`` as Jazzy's rmws write it.
- **QoS**: reliability, durability and history depth (KEEP_LAST) of the jointbus profile, deadline
  and lifespan when set (readers and reliable volatile writers keep at least
  :data:`READER_HISTORY` samples: see :func:`dds_qos`) — ``MAB_RT`` is best effort depth 1,
  ``RELIABLE`` reliable depth 10, ``LATCHED`` reliable transient-local depth 1. DDS enforces
  compatibility itself (a best-effort writer never serves a reliable reader), which is also
  jointbus's rule.
- **Publishing**: each local publisher gets a DDS writer; ``publish`` writes the codec's CDR bytes
  as they are (no second serialiser) only while a remote reader matches (the writer's
  publication-matched status), or always for a transient-local publisher, whose writer history is
  what late joiners receive.
- **Receiving**: each local subscriber gets a DDS reader with its own QoS (history at least
  :data:`READER_HISTORY` deep, so nothing is lost between two takes); a listener on Cyclone's
  receive thread takes the raw samples, decodes them with the topic's message class and offers
  them to the subscriber — realtime callbacks right there, ordinary ones through their dispatcher,
  as on Zenoh. Readers and writers ignore their own participant (``IgnoreLocal.Participant``):
  the bus serves its own process in-process. A payload that does not decode is counted and
  reported (:class:`~jointbus.bus.events.MalformedPayloadEvent`) and never delivered; a writer whose
  USER_DATA announces another type hash is never decoded, and reported once when discovered
  (:class:`~jointbus.bus.events.TypeMismatchEvent`), as on Zenoh. A DDS sample carries no
  sequence number a reader can see, so ``lost`` is not counted on DDS; latency is measured from the
  sample's source timestamp.
- **Graph**: DDS discovery (the DCPSParticipant, DCPSPublication and DCPSSubscription built-in
  topics) gives every remote endpoint with its topic, type, QoS and USER_DATA;
  ``ros_discovery_info`` (:mod:`jointbus.bus.dds_graph`) names the nodes that own them, and
  carries this bus's nodes to ``ros2 node list``. Both become
  :class:`~jointbus.bus.ros_graph.GraphEntity` records, so the namesake check, ``node list``,
  ``topic list`` and liveliness read one graph on either wire.

**Writing pre-encoded bytes.** cyclonedds-python's ``DataWriter.write`` serialises an ``IdlStruct``
sample, then hands the bytes to ``_clayer.ddspy_write``; jointbus's bytes come from its codec, and
the binding's sertype stores whatever bytes it is handed, so the transport calls ``ddspy_write``
with the codec's bytes directly (copied once into Cyclone's serdata, as after serialising). That
call holds the GIL while Cyclone delivers to this process's own readers synchronously, and Cyclone
runs one listener of a reader at a time: if another thread (Cyclone's receive thread with a remote
sample) is in that reader's listener waiting for the GIL, the write waits for it while holding the
GIL it needs — a deadlock. So a writer uses ``ddspy_write`` only while its process has a single
participant in the domain (no reader in this process can match it), and otherwise the C
library's ``dds_write`` through ``ctypes`` (:func:`write_raw`), which releases the GIL; it chooses
again whenever its matched readers change (:func:`write_for`). Measured by ``bench/bench_dds.py``
(row ``dds.write``): 0.8 µs against 1.5 µs per write, and ≈ 10 µs of one-way latency at 1 kHz on
this VM.

Threads: Cyclone's receive and event threads run the listeners; they never take the bus lock. The
transport's own lock, which listeners take, is never held across a call into Cyclone: creating a
writer delivers a discovery sample to this process's built-in readers and waits for their listeners
(found as a deadlock under load, and fixed so).
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Final, NamedTuple

from cyclonedds._clayer import ddspy_take, ddspy_write  # type: ignore[import-not-found]
from cyclonedds.builtin import (
    BuiltinDataReader,
    BuiltinTopicDcpsParticipant,
    BuiltinTopicDcpsPublication,
    BuiltinTopicDcpsSubscription,
)
from cyclonedds.core import DDSException, Entity, InstanceState, Listener, Policy, Qos
from cyclonedds.domain import Domain, DomainParticipant
from cyclonedds.internal import load_cyclonedds
from cyclonedds.pub import DataWriter
from cyclonedds.pub import Publisher as DdsPublisher
from cyclonedds.sub import DataReader
from cyclonedds.sub import Subscriber as DdsSubscriber
from cyclonedds.topic import Sample, Topic

from jointbus.bus.dds_config import DdsConfig
from jointbus.bus.dds_graph import (
    DISCOVERY_TOPIC,
    DISCOVERY_TYPE_HASH,
    Gid,
    NodeEntitiesInfo,
    ParticipantEntitiesInfo,
    parse_dds_name,
    parse_user_data,
    service_type_of,
    topic_dds_name,
    typehash_user_data,
)
from jointbus.bus.dds_types import idl_struct_named, idl_struct_of
from jointbus.bus.discovery import EndpointInfo
from jointbus.bus.errors import BusError, DdsConfigError
from jointbus.bus.events import TypeMismatchEvent
from jointbus.bus.names import dds_type_name, ros_namespace, ros_type_name
from jointbus.bus.publisher import Publisher
from jointbus.bus.qos import MAX_DEPTH, Durability, QosProfile, Reliability, incompatibilities
from jointbus.bus.ros_graph import ANONYMOUS_NODE, EntityKind, GraphEntity, node_name_of
from jointbus.bus.sample_gate import clamp_latency
from jointbus.bus.subscriber import Subscriber
from jointbus.codec.codec import codec_for
from jointbus.codec.type_hash import rihs01_of
from jointbus.messages.base import Message

if TYPE_CHECKING:
    from jointbus.bus.bus import Bus
    from jointbus.bus.service import RespT, ServiceClient, ServiceInfo, ServiceServer
    from jointbus.bus.service_dds import DdsClientLink, DdsServiceLink

_LOG = logging.getLogger("jointbus.bus.dds")

#: Least history depth of a reader: its listener takes everything at each call, so this only
#: bounds a burst that arrives while one call runs (the notes: a reader polled with ``take`` loses
#: samples unless its history holds what arrives between takes).
READER_HISTORY: Final = 64
#: Samples taken per call of the receive listener.
TAKE_BATCH: Final = 64
#: How long the graph must stop growing before a discovery answer is final (s).
GRAPH_SETTLE_S: Final = 0.2
#: How long after joining a participant has seen the others on loopback (s): a graph question
#: asked sooner waits until then. DDS discovery answers within a few ms on a quiet host and
#: ``ros_discovery_info`` records follow once the endpoints match; on this 2-vCPU VM with a load
#: average of 20, 0.5 s was sometimes not enough for a CLI command to see a running robot.
DISCOVERY_WARMUP_S: Final = 1.0
#: The participant's USER_DATA (rmw_cyclonedds's, default enclave).
PARTICIPANT_USER_DATA: Final = b"enclave=/;"
#: Sample states: any (read or not, new or not, alive or not).
_ANY_STATE: Final = 0xFFFF_FFFF & 0x7F
_ALIVE: Final = InstanceState.Alive
_NS_PER_S: Final = 1_000_000_000

class _SampleBytes(ctypes.Structure):
    """The binding's sample container (``topic.Sample``: pointer, size), with the pointer typed
    ``c_char_p`` so ctypes points it at a ``bytes`` object's buffer without a cast (0.3 µs instead
    of 1 µs per message here) and keeps the object alive with the struct."""

    _fields_: ClassVar = [("usample", ctypes.c_char_p), ("usample_size", ctypes.c_size_t)]


assert ctypes.sizeof(_SampleBytes) == ctypes.sizeof(Sample)  # the binding's layout
_lib = load_cyclonedds()
_dds_write = _lib.dds_write
_dds_write.argtypes = [ctypes.c_int32, ctypes.POINTER(_SampleBytes)]
_dds_write.restype = ctypes.c_int32


def write_raw(writer_ref: int, data: bytes) -> int:
    """Write pre-encoded CDR ``data`` (encapsulation header included) on a writer whose topic type
    is cyclonedds-python's (see the module docstring); returns ``dds_write``'s return code. The
    GIL is released for the call."""
    return int(_dds_write(writer_ref, _SampleBytes(data, len(data))))


def listener(**callbacks: Callable[..., None]) -> Listener:
    """A Cyclone DDS listener with these callbacks (``on_data_available=…``); the binding's
    constructor is untyped."""
    made: Listener = Listener(**callbacks)  # type: ignore[no-untyped-call]
    return made


def decoder_of(msg_type: type[Message]) -> Callable[[bytes], Message]:
    """``msg_type.from_cdr``, or its codec's ``decode`` when the class does not override it (one
    Python frame less per received sample, as the Zenoh transport does)."""
    if getattr(msg_type.from_cdr, "__func__", None) is getattr(Message.from_cdr, "__func__", 0):
        decode: Callable[[bytes], Message] = codec_for(msg_type).decode
        return decode
    return msg_type.from_cdr


def encoder_of(msg_type: type[Message]) -> Callable[[Message], bytes]:
    """``msg_type.to_cdr``, or its codec's ``encode`` when the class does not override it."""
    if msg_type.to_cdr is Message.to_cdr:
        encode: Callable[[Message], bytes] = codec_for(msg_type).encode
        return encode
    return msg_type.to_cdr


_dds_lookup_participant = _lib.dds_lookup_participant
_dds_lookup_participant.argtypes = [ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t]
_dds_lookup_participant.restype = ctypes.c_int32


def write_for(domain_id: int) -> Callable[[int, bytes], int]:
    """The write a writer in ``domain_id`` uses now: the binding's ``ddspy_write`` (GIL held, the
    fastest: 0.8 µs against 1.5 µs, and ≈ 10 µs less one-way latency measured at 1 kHz) while this
    process has a single participant in the domain — then every reader the write delivers to
    synchronously is in another process, and none can be waiting for the GIL inside Cyclone —
    else :func:`write_raw` (GIL released; see the module docstring for the deadlock it avoids).
    A writer chooses again whenever its matched readers change, which is when another
    participant of this process could start reading it."""
    count = _dds_lookup_participant(domain_id, None, 0)
    chosen: Callable[[int, bytes], int] = ddspy_write if count == 1 else write_raw
    return chosen


def _delete(entity: Entity | None) -> None:
    """Delete a DDS entity now (and its children); idempotent."""
    if entity is not None:
        with contextlib.suppress(Exception):
            entity.__del__()


# ---- domains ----------------------------------------------------------------------------------


class _Joined(NamedTuple):
    domain: Domain
    xml: str
    users: int


_domains: dict[int, _Joined] = {}
_domains_lock = threading.Lock()


def _join_domain(domain_id: int, xml: str) -> None:
    """Create (or share) this process's DDS domain ``domain_id`` configured with ``xml``: a
    process has one configuration per domain, so every bus in it on that domain must agree (as
    rmw_cyclonedds requires of its nodes)."""
    with _domains_lock:
        joined = _domains.get(domain_id)
        if joined is not None:
            if joined.xml != xml:
                raise DdsConfigError(
                    f"DDS domain {domain_id} is already joined by this process with other settings "
                    "(discovery range, peers or CYCLONEDDS_URI); every bus of a process on one "
                    "domain must use the same"
                )
            _domains[domain_id] = joined._replace(users=joined.users + 1)
            return
        try:
            domain = Domain(domain_id, xml or None)
        except DDSException as exc:
            raise DdsConfigError(
                f"cannot join DDS domain {domain_id} with configuration {xml!r}: {exc}"
            ) from None
        _domains[domain_id] = _Joined(domain, xml, 1)


def _leave_domain(domain_id: int) -> None:
    with _domains_lock:
        joined = _domains.get(domain_id)
        if joined is None:
            return
        if joined.users > 1:
            _domains[domain_id] = joined._replace(users=joined.users - 1)
            return
        del _domains[domain_id]
    _delete(joined.domain)


# ---- QoS ------------------------------------------------------------------------------------


def dds_qos(qos: QosProfile, user_data: bytes, *, reader: bool = False) -> Qos:
    """The DDS QoS of a jointbus profile (see the module docstring). A reader's history is at
    least :data:`READER_HISTORY` deep, and so is a reliable volatile writer's: a KEEP_LAST writer
    overwrites samples its readers have not acknowledged yet, so a burst longer than ``depth``
    (20 status messages at once) would lose some, where jointbus's RELIABLE promises none. A
    transient-local writer keeps exactly ``depth``: that is what late joiners receive."""
    deep = reader or (qos.reliable and not qos.transient_local)
    depth = max(qos.depth, READER_HISTORY) if deep else qos.depth
    policies: list[Any] = [
        Policy.Reliability.Reliable(max_blocking_time=_NS_PER_S // 10)
        if qos.reliable
        else Policy.Reliability.BestEffort,
        Policy.Durability.TransientLocal if qos.transient_local else Policy.Durability.Volatile,
        Policy.History.KeepLast(depth),
        Policy.DataRepresentation(use_cdrv0_representation=True),
        Policy.IgnoreLocal.Participant,
        Policy.Userdata(user_data),
    ]
    if qos.deadline is not None:
        policies.append(Policy.Deadline(qos.deadline_ns))
    if qos.lifespan is not None and not reader:
        policies.append(Policy.Lifespan(qos.lifespan_ns))
    return Qos(*policies)


def profile_of(qos: Qos) -> QosProfile:
    """The jointbus profile of a discovered endpoint's DDS QoS (KEEP_ALL becomes the largest
    depth jointbus accepts; infinite durations none)."""
    reliability = Reliability.RELIABLE
    durability = Durability.VOLATILE
    depth = 1
    deadline: float | None = None
    lifespan: float | None = None
    for policy in qos:
        # A policy's class name is "<kind>" (``BestEffort``) or "<scope>.<kind>" or "<scope>".
        name = type(policy).__name__.rpartition(".")[2]
        scope = getattr(policy, "__scope__", "")
        if scope == "Reliability":
            reliability = Reliability.BEST_EFFORT if name == "BestEffort" else Reliability.RELIABLE
        elif scope == "Durability":
            durability = Durability.VOLATILE if name == "Volatile" else Durability.TRANSIENT_LOCAL
        elif scope == "History":
            depth = int(getattr(policy, "depth", MAX_DEPTH)) if name == "KeepLast" else MAX_DEPTH
        elif scope == "Deadline":
            deadline = _duration_s(getattr(policy, "deadline", 0))
        elif scope == "Lifespan":
            lifespan = _duration_s(getattr(policy, "lifespan", 0))
    return QosProfile(reliability, min(max(depth, 1), MAX_DEPTH), durability, deadline, lifespan)


def _duration_s(ns: int) -> float | None:
    if ns <= 0 or ns >= (1 << 63) - 1:
        return None
    return ns / 1e9


def _user_data(qos: Qos) -> bytes:
    for policy in qos:
        if getattr(policy, "__scope__", "") == "Userdata":
            data: bytes = policy.data
            return data
    return b""


def padded(data: bytes) -> bytes:
    """``data`` padded to a multiple of 4 bytes, the padding counted in the encapsulation
    options' low bits (XCDR1, as Cyclone DDS's own serialiser writes it); unchanged if aligned."""
    pad = -len(data) % 4
    if not pad:
        return data
    return data[:3] + bytes((data[3] | pad,)) + data[4:] + bytes(pad)


# ---- remote endpoints ------------------------------------------------------------------------


class DdsEndpoint(NamedTuple):
    """An endpoint DDS discovery reported: its GUID, participant, DDS topic and type, QoS and
    USER_DATA, and whether it writes."""

    guid: bytes
    participant: bytes
    topic: str
    type_name: str
    qos: QosProfile
    user_data: dict[str, str]
    writer: bool


def _participant_id(guid: bytes) -> str:
    return guid.hex()


# ---- publishers -------------------------------------------------------------------------------


class DdsPublisherLink:
    """The DDS leg of one local publisher (a :class:`jointbus.bus.publisher.RemoteLink`)."""

    def __init__(self, transport: DdsTransport, pub: Publisher[Any]) -> None:
        self._pub = pub
        topic = transport.topic(topic_dds_name(pub.topic), pub.msg_type)
        self.matched = False
        self.send_always = pub.qos.transient_local
        self._listener = listener(on_publication_matched=self._on_matched)
        self.writer = DataWriter(
            transport.dds_publisher,
            topic,
            dds_qos(pub.qos, typehash_user_data(rihs01_of(pub.msg_type))),
            self._listener,
        )
        self.guid: bytes = self.writer.guid.bytes
        self._ref: int = self.writer._ref
        self._encode = encoder_of(pub.msg_type)
        self._domain_id = transport.domain_id
        #: Which write this link uses (see :func:`write_for`), chosen again on the publishing
        #: thread after every change of the matched readers (the listener only sets the flag).
        self._write: Callable[[int, bytes], int] = write_raw
        self._rechoose = True
        for msg, _born, _seq in pub.history:  # published before DDS was attached
            self.send(msg, 0, 0)

    def _on_matched(self, _writer: object, status: Any) -> None:
        self.matched = status.current_count > 0
        self._rechoose = True
        _LOG.debug(
            "%s on %s: remote readers %d", self._pub.label, self._pub.topic, status.current_count
        )

    def send(self, msg: Message, seq: int, mono_ns: int) -> None:
        """Encode and write one message (``publish`` calls it while matched, or always for a
        transient-local publisher)."""
        if self._rechoose:
            self._rechoose = False
            self._write = write_for(self._domain_id)
        rc = self._write(self._ref, padded(self._encode(msg)))
        if rc < 0:
            _LOG.warning("writing on %s failed: DDS return code %d", self._pub.topic, rc)

    def close(self) -> None:
        """Delete the writer."""
        _delete(self.writer)


# ---- subscribers ------------------------------------------------------------------------------


class DdsSubscriptionLink:
    """One DDS reader feeding one local subscriber."""

    def __init__(self, transport: DdsTransport, sub: Subscriber[Any]) -> None:
        self._transport = transport
        self._sub = sub
        self.topic = sub.topic
        self.msg_type = sub.msg_type
        self._decode = decoder_of(sub.msg_type)
        self._note_latency = sub.latency_stats.note
        self._type_hash = rihs01_of(sub.msg_type)
        #: Samples taken, undecodable payloads, and samples of writers announcing another type
        #: hash (never decoded).
        self.samples = 0
        self.malformed = 0
        self.foreign_type = 0
        #: Remote writer (instance handle) → (label, deliver?).
        self._writers: dict[int, tuple[str, bool]] = {}
        self._ref: int | None = None  # the listener may run before the reader is assigned
        self._listener = listener(on_data_available=self._on_data)
        self.reader = DataReader(
            transport.dds_subscriber,
            transport.topic(topic_dds_name(sub.topic), sub.msg_type),
            dds_qos(sub.qos, typehash_user_data(self._type_hash), reader=True),
            self._listener,
        )
        self.guid: bytes = self.reader.guid.bytes
        self._ref = self.reader._ref
        self._on_data(None)  # transient-local history that arrived before the reader was set

    def _writer(self, handle: int) -> tuple[str, bool]:
        """(label, deliver?) of the remote writer with instance handle ``handle``, from the
        transport's discovery tables — never from a Cyclone call on this (listener) thread: a call
        that holds the GIL while Cyclone holds a lock another listener waits in would deadlock.
        A writer not discovered yet is delivered under its handle and looked up again next time."""
        known = self._writers.get(handle)
        if known is not None:
            return known
        endpoint = self._transport.endpoint_by_handle(handle)
        if endpoint is None:
            return f"writer {handle:016x}", True
        remote = self._transport.remote_info(int.from_bytes(endpoint.guid, "little"))
        label = remote.label if remote is not None else f"gid {endpoint.guid.hex()}"
        announced = endpoint.user_data.get("typehash", "")
        known = self._writers[handle] = (label, not announced or announced == self._type_hash)
        return known

    def _on_data(self, _reader: object) -> None:
        # Cyclone's receive thread (or the constructor): take everything, decode, offer.
        ref = self._ref
        if ref is None:
            return
        try:
            while True:
                taken = ddspy_take(ref, _ANY_STATE, TAKE_BATCH)
                if type(taken) is int or not taken:
                    return
                for data, info in taken:
                    if info.valid_data:
                        self._receive(data, info)
                if len(taken) < TAKE_BATCH:
                    return
        except Exception:  # never let one sample kill Cyclone's thread
            _LOG.exception("receiving a sample on %s failed", self.topic)

    def _receive(self, data: bytes, info: Any) -> None:
        self.samples += 1
        sub = self._sub
        handle = info.publication_handle
        known = self._writers.get(handle)
        if known is None:
            known = self._writer(handle)
        if not known[1]:
            self.foreign_type += 1
            return
        try:
            msg = self._decode(data)
        except Exception as exc:
            self.malformed += 1
            sub._note_malformed(known[0], len(data), data, exc)
            return
        now_mono = time.monotonic_ns()
        latency = clamp_latency(time.time_ns() - info.source_timestamp)
        self._note_latency(latency)
        sub.offer(msg, now_mono - latency if latency > 0 else now_mono, now_mono)

    def close(self) -> None:
        """Delete the reader."""
        _delete(self.reader)


# ---- raw taps ---------------------------------------------------------------------------------

#: How often a tap looks for new publisher types on its topic (s).
TAP_DISCOVERY_S: Final = 0.2


class RawSample(NamedTuple):
    """One sample a :class:`RawTap` took: its ROS topic and type, the CDR bytes as received, the
    writer's source time (ns since the epoch), an id of the writer (its GID when discovered, else
    its instance handle) and the writer's QoS when discovered."""

    topic: str
    type_name: str
    payload: bytes
    source_wall_ns: int
    publisher: int
    qos: QosProfile | None


class RawTap:
    """Every sample of one topic (``topic``) or of every ROS 2 topic (``None``), raw — never
    decoded: ``on_sample(RawSample)`` per arrival. What ``topic hz``, ``topic list``'s rates and
    ``jointbus record`` need.

    DDS delivers samples only to a reader of the writer's type: a small thread watches the graph
    and opens one reader per (topic, type) its publishers announce — jointbus's DDS type when
    ``resolve`` knows the type name, else a placeholder of that name (rmws announce no type
    information, so a name match is enough; another Cyclone DDS program's type of a kind jointbus
    does not know is not matched). The reader is best effort and volatile, so every writer matches,
    except for a topic whose first discovered publisher is transient-local: then it is reliable
    and transient-local, and receives the latched history (``/tf_static``, parameters).
    """

    def __init__(
        self,
        transport: DdsTransport,
        topic: str | None,
        on_sample: Callable[[RawSample], None],
        resolve: Callable[[str], type[Message] | None],
    ) -> None:
        self._transport = transport
        self._topic = topic
        self._on_sample = on_sample
        self._resolve = resolve
        self._readers: dict[tuple[str, str], tuple[DataReader[Any], Listener]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="jointbus-dds-tap", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.is_set():
            for entity in self._transport.graph_entities():
                if entity.kind == "MP" and self._topic in (None, entity.topic):
                    try:
                        self._open(entity)
                    except Exception:
                        _LOG.exception("opening a raw reader of %s failed", entity.topic)
            self._stop.wait(TAP_DISCOVERY_S)

    def _open(self, entity: GraphEntity) -> None:
        key = (entity.topic, entity.type_name)
        if key in self._readers or self._stop.is_set():
            return
        struct: Any = idl_struct_named(entity.type_name, self._resolve(entity.type_name))
        if struct is None:
            struct = placeholder_struct(entity.type_name)
        latched = entity.qos is not None and entity.qos.transient_local
        qos = (
            QosProfile(Reliability.RELIABLE, max(entity.qos.depth, 1), Durability.TRANSIENT_LOCAL)
            if latched and entity.qos is not None
            else QosProfile(Reliability.BEST_EFFORT, READER_HISTORY)
        )
        topic, type_name = key
        transport = self._transport
        cell: list[int] = []

        def on_data(_reader: object) -> None:
            if not cell:
                return
            while True:
                taken = ddspy_take(cell[0], _ANY_STATE, TAKE_BATCH)
                if type(taken) is int or not taken:
                    return
                for data, info in taken:
                    if not info.valid_data:
                        continue
                    endpoint = transport.endpoint_by_handle(info.publication_handle)
                    publisher = (
                        int.from_bytes(endpoint.guid, "little")
                        if endpoint is not None
                        else info.publication_handle
                    )
                    self._on_sample(
                        RawSample(
                            topic,
                            type_name,
                            data,
                            info.source_timestamp,
                            publisher,
                            endpoint.qos if endpoint is not None else None,
                        )
                    )
                if len(taken) < TAKE_BATCH:
                    return

        callbacks = listener(on_data_available=on_data)
        reader: DataReader[Any] = DataReader(
            transport.dds_subscriber,
            transport.topic_of_type(topic_dds_name(topic), struct),
            dds_qos(qos, b"", reader=True),
            callbacks,
        )
        cell.append(reader._ref)
        self._readers[key] = (reader, callbacks)
        on_data(reader)

    def undeclare(self) -> None:
        """Stop: delete the readers (the name Zenoh's subscribers use, so callers close either)."""
        self._stop.set()
        self._thread.join(timeout=2.0)
        for reader, _callbacks in self._readers.values():
            _delete(reader)
        self._readers.clear()


def placeholder_struct(type_name: str) -> Any:
    """A Cyclone DDS type named as ROS 2 names ``type_name`` on DDS, with one octet member: it
    matches writers that announce no type information (ROS 2's rmws) by name alone."""
    from cyclonedds.idl import make_idl_struct
    from cyclonedds.idl import types as idl

    dds_name = dds_type_name(type_name)
    return make_idl_struct(
        dds_name.replace(":", "_"), dds_name, {"structure_needs_at_least_one_member": idl.uint8}
    )


# ---- the transport ----------------------------------------------------------------------------


class DdsTransport:
    """A bus's DDS participant, writers, readers, graph and ``ros_discovery_info``."""

    #: Which wire this transport is (the Zenoh transport's is ``"zenoh"``).
    KIND: Final = "dds"
    #: How messages name this transport's peers ("… runs in DDS participant <guid>").
    PEER_NOUN: Final = "DDS participant"

    def __init__(self, bus: Bus, config: DdsConfig) -> None:
        self.bus = bus
        self.config = config
        self.domain_id = config.domain
        self.rmw = config.rmw
        xml = config.xml()
        _join_domain(self.domain_id, xml)
        try:
            self.participant = DomainParticipant(
                self.domain_id, Qos(Policy.Userdata(PARTICIPANT_USER_DATA))
            )
        except DDSException as exc:
            _leave_domain(self.domain_id)
            raise DdsConfigError(
                f"cannot create a participant in DDS domain {self.domain_id}: {exc}"
            ) from None
        self.guid: bytes = self.participant.guid.bytes
        #: The participant's id as graph records carry it (what ``zid`` is on Zenoh).
        self.zid = _participant_id(self.guid)
        self.joined_at = time.monotonic()
        self.dds_publisher = DdsPublisher(self.participant)
        self.dds_subscriber = DdsSubscriber(self.participant)
        #: Guards the Python tables; listeners on Cyclone's threads take it, so it is never held
        #: while calling into Cyclone (a Cyclone call may wait for one of those listeners).
        self._lock = threading.RLock()
        #: Serialises creating topics and writing ``ros_discovery_info`` (never taken by a
        #: listener).
        self._entity_lock = threading.RLock()
        self._closed = False
        self._topics: dict[tuple[str, str], Topic[Any]] = {}
        self._links: dict[int, DdsPublisherLink] = {}
        self._subscriptions: dict[int, DdsSubscriptionLink] = {}
        #: Local node (namespace, name) → ({reader GUIDs}, {writer GUIDs}).
        self._nodes: dict[tuple[str, str], tuple[set[bytes], set[bytes]]] = {}
        #: Local entity ref (endpoint gid, or a service's negative ref) → (node, GUIDs).
        self._entity_nodes: dict[int, tuple[tuple[str, str], tuple[bytes, ...]]] = {}
        #: Remote participants (GUID) seen alive, remote endpoints by GUID, and the nodes each
        #: participant announced (participant GUID → its ParticipantEntitiesInfo).
        self._participants: set[bytes] = set()
        self._endpoints: dict[bytes, DdsEndpoint] = {}
        #: Remote writers by instance handle (what a sample's ``publication_handle`` names).
        self._by_handle: dict[int, DdsEndpoint] = {}
        self._node_infos: dict[bytes, ParticipantEntitiesInfo] = {}
        #: Endpoint records by int GID (what ``EndpointInfo.gid`` holds).
        self._remote: dict[int, EndpointInfo] = {}
        #: Bumped after every change of the graph (what Zenoh's transport calls its generation).
        self.generation = 0
        #: Discovery records that could not be read (counted; logged once each).
        self.bad_records = 0
        self._graph_hooks: list[Callable[[GraphEntity, bool], None]] = []
        try:
            self._open_graph()
        except BaseException:
            self.close()
            raise

    # ---- the graph's own endpoints ----------------------------------------------------------
    def _open_graph(self) -> None:
        info_qos = QosProfile(Reliability.RELIABLE, 1, Durability.TRANSIENT_LOCAL)
        topic = self.topic(DISCOVERY_TOPIC, ParticipantEntitiesInfo)
        self._info_writer = DataWriter(
            self.dds_publisher,
            topic,
            dds_qos(info_qos, typehash_user_data(DISCOVERY_TYPE_HASH)),
        )
        self._info_listener = listener(on_data_available=self._on_node_info)
        reader_qos = QosProfile(Reliability.RELIABLE, 1000, Durability.TRANSIENT_LOCAL)
        self._info_reader: DataReader[Any] | None = None
        self._info_reader = DataReader(
            self.dds_subscriber,
            topic,
            dds_qos(reader_qos, typehash_user_data(DISCOVERY_TYPE_HASH), reader=True),
            self._info_listener,
        )
        self._publish_nodes()
        # A listener may run before its reader is assigned (history arriving at creation): the
        # callbacks read the readers from here, and each reader is drained once it is set.
        self._builtin: dict[str, BuiltinDataReader | None] = dict.fromkeys(
            ("participants", "publications", "subscriptions")
        )
        self._builtin_listeners = (
            listener(on_data_available=lambda _r: self._on_participants()),
            listener(on_data_available=lambda _r: self._on_endpoints(True)),
            listener(on_data_available=lambda _r: self._on_endpoints(False)),
        )
        builtin_topics = (
            BuiltinTopicDcpsParticipant,
            BuiltinTopicDcpsPublication,
            BuiltinTopicDcpsSubscription,
        )
        for kind, topic_, callbacks in zip(
            self._builtin, builtin_topics, self._builtin_listeners, strict=True
        ):
            self._builtin[kind] = BuiltinDataReader(self.participant, topic_, None, callbacks)
        self._on_participants()
        self._on_endpoints(True)
        self._on_endpoints(False)
        self._on_node_info(None)

    def topic(self, dds_name: str, msg_type: type[Message]) -> Topic[Any]:
        """The participant's DDS topic ``dds_name`` of ``msg_type``'s DDS type (created once)."""
        key = (dds_name, msg_type.TYPE_NAME)
        with self._entity_lock:
            known = self._topics.get(key)
            if known is None:
                known = self._topics[key] = Topic(
                    self.participant, dds_name, idl_struct_of(msg_type)
                )
            return known

    def topic_of_type(self, dds_name: str, struct: Any) -> Topic[Any]:
        """The participant's DDS topic ``dds_name`` of an explicit Cyclone type (services)."""
        key = (
            dds_name,
            struct.__idl_typename__ if hasattr(struct, "__idl_typename__") else struct.__name__,
        )
        with self._entity_lock:
            known = self._topics.get(key)
            if known is None:
                known = self._topics[key] = Topic(self.participant, dds_name, struct)
            return known

    # ---- ros_discovery_info ----------------------------------------------------------------
    def _publish_nodes(self) -> None:
        """Publish this participant's nodes on ``ros_discovery_info`` as they are now (called
        without ``_lock``: the record is read under it, and written under ``_entity_lock``, so
        two updates never publish out of order)."""
        with self._entity_lock:
            with self._lock:
                if self._closed:
                    return
                nodes = tuple(
                    NodeEntitiesInfo(
                        namespace,
                        node_name_of(name),
                        tuple(Gid.of(g) for g in sorted(readers)),
                        tuple(Gid.of(g) for g in sorted(writers)),
                    )
                    for (namespace, name), (readers, writers) in sorted(self._nodes.items())
                )
            record = ParticipantEntitiesInfo(Gid.of(self.guid), nodes)
            rc = write_raw(self._info_writer._ref, padded(record.to_cdr()))
        if rc < 0:
            _LOG.warning("publishing ros_discovery_info failed: DDS return code %d", rc)

    def register_entity(
        self,
        ref: int,
        node: str,
        namespace: str,
        *,
        readers: tuple[bytes, ...] = (),
        writers: tuple[bytes, ...] = (),
    ) -> None:
        """Record that node ``node`` in ``namespace`` owns these readers / writers, and tell
        ``ros_discovery_info`` (``ref`` identifies them for :meth:`release_entity`)."""
        identity = (ros_namespace(namespace), node)
        with self._lock:
            if self._closed:
                return
            own_readers, own_writers = self._nodes.setdefault(identity, (set(), set()))
            own_readers.update(readers)
            own_writers.update(writers)
            self._entity_nodes[ref] = (identity, (*readers, *writers))
        self._publish_nodes()

    def release_entity(self, ref: int) -> None:
        """Forget the entities registered under ``ref`` (and their node with its last one)."""
        with self._lock:
            known = self._entity_nodes.pop(ref, None)
            if known is None or self._closed:
                return
            identity, guids = known
            readers, writers = self._nodes.get(identity, (set(), set()))
            readers.difference_update(guids)
            writers.difference_update(guids)
            if not any(i == identity for i, _ in self._entity_nodes.values()):
                self._nodes.pop(identity, None)
        self._publish_nodes()

    def _on_node_info(self, _reader: object) -> None:
        reader = self._info_reader
        if reader is None:
            return
        try:
            changed = False
            while True:
                taken = ddspy_take(reader._ref, _ANY_STATE, TAKE_BATCH)
                if type(taken) is int or not taken:
                    break
                for data, info in taken:
                    if not info.valid_data:
                        continue
                    try:
                        record = ParticipantEntitiesInfo.from_cdr(data)
                    except Exception as exc:
                        self._bad_record(f"ros_discovery_info record ({len(data)} bytes): {exc}")
                        continue
                    participant = record.gid.guid
                    if participant != self.guid:
                        self._node_infos[participant] = record
                        changed = True
                if len(taken) < TAKE_BATCH:
                    break
            if changed:
                self._graph_changed()
        except Exception:
            _LOG.exception("reading ros_discovery_info failed")

    # ---- DDS discovery --------------------------------------------------------------------------
    def _on_participants(self) -> None:
        reader = self._builtin["participants"]
        if reader is None:
            return
        try:
            changed = False
            for sample in reader.take(TAKE_BATCH * 4):
                guid = sample.key.bytes
                if guid == self.guid:
                    continue
                if sample.sample_info.instance_state == _ALIVE:
                    self._participants.add(guid)
                else:
                    self._participants.discard(guid)
                    self._node_infos.pop(guid, None)
                changed = True
            if changed:
                self._graph_changed()
        except Exception:
            _LOG.exception("reading DDS participants failed")

    def _on_endpoints(self, writers: bool) -> None:
        reader = self._builtin["publications" if writers else "subscriptions"]
        if reader is None:
            return
        try:
            appeared: list[DdsEndpoint] = []
            changed = False
            samples = reader.take(TAKE_BATCH * 4)
            # Under ``_lock``: the publications' and the subscriptions' listeners run on two
            # DDS threads, and each one's ``_graph_changed`` iterates ``_endpoints`` ("dictionary
            # changed size during iteration" in a test run, 2026-12-06: the graph then missed
            # the endpoints of that change).
            with self._lock:
                for sample in samples:
                    guid = sample.key.bytes
                    participant = sample.participant_key.bytes
                    if participant == self.guid:
                        continue
                    changed = True
                    handle = sample.sample_info.instance_handle
                    if sample.sample_info.instance_state != _ALIVE or not sample.topic_name:
                        self._endpoints.pop(guid, None)
                        self._by_handle.pop(handle, None)
                        self._remote.pop(int.from_bytes(guid, "little"), None)
                        continue
                    try:
                        endpoint = DdsEndpoint(
                            guid,
                            participant,
                            sample.topic_name,
                            sample.type_name,
                            profile_of(sample.qos),
                            parse_user_data(_user_data(sample.qos)),
                            writers,
                        )
                    except Exception as exc:
                        self._bad_record(
                            f"endpoint {guid.hex()} on {sample.topic_name!r}: {exc}"
                        )
                        continue
                    self._endpoints[guid] = endpoint
                    if writers:
                        # A sample's publication handle is its writer's DCPSPublication instance.
                        self._by_handle[handle] = endpoint
                    appeared.append(endpoint)
            if changed:
                self._graph_changed()
            for endpoint in appeared:
                info = self._endpoint_info(endpoint)
                if info is not None:
                    self._meet(info)
        except Exception:
            _LOG.exception("reading DDS endpoints failed")

    def _bad_record(self, text: str) -> None:
        self.bad_records += 1
        if self.bad_records <= 10:
            _LOG.warning("ignoring an unreadable DDS discovery record: %s", text)

    def _graph_changed(self) -> None:
        with self._lock:
            self.generation += 1
            remote: dict[int, EndpointInfo] = {}
            for endpoint in self._endpoints.values():
                info = self._endpoint_info(endpoint)
                if info is not None:
                    remote[info.gid] = info
            self._remote = remote
            hooks = list(self._graph_hooks)
        if hooks:
            entities = self.graph_entities()
            for hook in hooks:
                for entity in entities:
                    with contextlib.suppress(Exception):
                        hook(entity, True)

    def _owner(self, endpoint: DdsEndpoint) -> tuple[str, str]:
        """(namespace, node) that ``ros_discovery_info`` says owns ``endpoint``; the hidden
        anonymous node when none does (a plain DDS program)."""
        record = self._node_infos.get(endpoint.participant)
        if record is not None:
            for node in record.node_entities_info_seq:
                gids = node.writer_gid_seq if endpoint.writer else node.reader_gid_seq
                if any(g.guid == endpoint.guid for g in gids):
                    return node.node_namespace or "/", node.node_name
        return "/", ANONYMOUS_NODE

    def _entity(self, endpoint: DdsEndpoint) -> GraphEntity | None:
        """The graph record of a discovered endpoint; None for DDS topics that are not ROS 2's
        and for a service's reply side (its request side stands for it)."""
        try:
            role, name = parse_dds_name(endpoint.topic)
            kind: EntityKind
            if role == "topic":
                kind = "MP" if endpoint.writer else "MS"
                type_name = ros_type_name(endpoint.type_name)
            elif role == "request":
                kind = "SC" if endpoint.writer else "SS"
                type_name = service_type_of(endpoint.type_name)
            else:
                return None
        except BusError:
            return None
        namespace, node = self._owner(endpoint)
        return GraphEntity(
            f"dds/{self.domain_id}/{endpoint.participant.hex()}/{endpoint.guid.hex()}",
            self.domain_id,
            _participant_id(endpoint.participant),
            0,
            int.from_bytes(endpoint.guid[12:], "big"),
            kind,
            "/",
            namespace,
            node,
            name,
            type_name,
            endpoint.user_data.get("typehash", ""),
            endpoint.qos,
            endpoint.guid,
        )

    def _endpoint_info(self, endpoint: DdsEndpoint) -> EndpointInfo | None:
        entity = self._entity(endpoint)
        if entity is None or entity.kind not in ("MP", "MS"):
            return None
        return EndpointInfo.from_entity(entity)

    def graph_entities(self) -> list[GraphEntity]:
        """Every live graph entity of other participants: nodes (from ``ros_discovery_info``),
        topic endpoints and services."""
        with self._lock:
            endpoints = list(self._endpoints.values())
            infos = [(p, r) for p, r in self._node_infos.items() if p in self._participants]
        out: list[GraphEntity] = []
        for endpoint in endpoints:
            entity = self._entity(endpoint)
            if entity is not None:
                out.append(entity)
        for participant, record in infos:
            for index, node in enumerate(record.node_entities_info_seq):
                out.append(
                    GraphEntity(
                        f"dds/{self.domain_id}/{participant.hex()}/node/{index}",
                        self.domain_id,
                        _participant_id(participant),
                        index,
                        index,
                        "NN",
                        "/",
                        node.node_namespace or "/",
                        node.node_name,
                    )
                )
        return out

    def graph(self, timeout: float = 0.5) -> list[GraphEntity]:
        """Every graph entity of other participants in the domain, watched until it stops
        changing for :data:`GRAPH_SETTLE_S` (or ``timeout`` s pass); a bus that joined less than
        :data:`DISCOVERY_WARMUP_S` ago first waits for discovery to answer (bounded by
        ``timeout``)."""
        deadline = time.monotonic() + timeout
        warm = min(self.joined_at + DISCOVERY_WARMUP_S, deadline)
        generation, stable_since = -1, time.monotonic()
        while True:
            now = time.monotonic()
            if self.generation != generation:
                generation, stable_since = self.generation, now
            elif (now - stable_since >= GRAPH_SETTLE_S and now >= warm) or now >= deadline:
                return self.graph_entities()
            time.sleep(0.01)

    def remote_endpoints(self, timeout: float = 0.5) -> list[EndpointInfo]:
        """Every publisher and subscriber of other participants; waits up to ``timeout`` s."""
        return [EndpointInfo.from_entity(e) for e in self.graph(timeout) if e.kind in ("MP", "MS")]

    def endpoint_by_handle(self, handle: int) -> DdsEndpoint | None:
        """The discovered remote writer whose instance handle is ``handle``, if seen."""
        return self._by_handle.get(handle)

    def remote_info(self, gid: int) -> EndpointInfo | None:
        """The discovery record of a remote endpoint, if discovered."""
        return self._remote.get(gid)

    def watch_graph(self, hook: Callable[[GraphEntity, bool], None]) -> Callable[[], None]:
        """Call ``hook(entity, True)`` for every graph entity each time the graph changes (and
        once now); returns a remover. (DDS reports disappearances as changes: a hook compares
        what it is shown.)"""
        with self._lock:
            self._graph_hooks.append(hook)
        for entity in self.graph_entities():
            with contextlib.suppress(Exception):
                hook(entity, True)

        def remove() -> None:
            with self._lock:
                if hook in self._graph_hooks:
                    self._graph_hooks.remove(hook)

        return remove

    def _meet(self, remote: EndpointInfo) -> None:
        """Report type mismatches and incompatible QoS between ``remote`` and local endpoints."""
        if self.bus.local_type(remote.topic) is None:
            return
        locals_: tuple[Publisher[Any] | Subscriber[Any], ...]
        if remote.kind == "publisher":
            locals_ = self.bus.local_subscribers(remote.topic)
        else:
            locals_ = self.bus.local_publishers(remote.topic)
        for local in locals_:
            local_hash = rihs01_of(local.msg_type)
            if remote.type_name != local.type_name or (
                remote.type_hash and remote.type_hash != local_hash
            ):
                local._emit(
                    TypeMismatchEvent(
                        local.topic,
                        local.label,
                        f"{local.type_name} ({local_hash})",
                        f"{remote.type_name} ({remote.type_hash or 'no type hash'})",
                        remote.label,
                    )
                )
                continue
            if remote.kind == "publisher":
                reasons = incompatibilities(remote.qos, local.qos)
            else:
                reasons = incompatibilities(local.qos, remote.qos)
            if reasons:
                self.bus._report_remote_incompatible(local, remote, reasons)

    # ---- local endpoints ---------------------------------------------------------------------
    def publisher_added(self, pub: Publisher[Any]) -> None:
        """Give a local publisher its DDS writer and announce it under its node."""
        if self._closed or pub.closed:
            return
        # Created outside ``_lock``: creating a DDS entity delivers discovery samples to this
        # process's built-in readers, whose listeners take ``_lock`` (a lock-order deadlock).
        link = DdsPublisherLink(self, pub)
        with self._lock:
            closed = self.closed  # may have changed while the writer was created
            if not closed:
                self._links[pub.gid] = link
                pub._remote = link
        if closed:
            link.close()
            return
        self.register_entity(pub.gid, pub.node, pub.namespace, writers=(link.guid,))
        for info in list(self._remote.values()):
            if info.topic == pub.topic and info.kind == "subscriber":
                self._meet(info)

    def publisher_removed(self, pub: Publisher[Any]) -> None:
        """Withdraw a closed local publisher."""
        with self._lock:
            link = self._links.pop(pub.gid, None)
        pub._remote = None
        self.release_entity(pub.gid)
        if link is not None:
            link.close()

    def subscriber_added(self, sub: Subscriber[Any]) -> None:
        """Feed a local subscriber from its own DDS reader, and announce it under its node."""
        if self._closed or sub.closed:
            return
        link = DdsSubscriptionLink(self, sub)  # outside ``_lock``, as in publisher_added
        with self._lock:
            closed = self.closed  # may have changed while the reader was created
            if not closed:
                self._subscriptions[sub.gid] = link
        if closed:
            link.close()
            return
        self.register_entity(sub.gid, sub.node, sub.namespace, readers=(link.guid,))
        for info in list(self._remote.values()):
            if info.topic == sub.topic and info.kind == "publisher":
                self._meet(info)

    def subscriber_removed(self, sub: Subscriber[Any]) -> None:
        """Withdraw a closed local subscriber."""
        with self._lock:
            link = self._subscriptions.pop(sub.gid, None)
        self.release_entity(sub.gid)
        if link is not None:
            link.close()

    def subscription(self, sub: Subscriber[Any]) -> DdsSubscriptionLink | None:
        """The DDS reader feeding a local subscriber, if any (diagnostics, tests)."""
        return self._subscriptions.get(sub.gid)

    def info_of(self, endpoint: Publisher[Any] | Subscriber[Any]) -> EndpointInfo:
        """The discovery record of a local endpoint."""
        return EndpointInfo(
            endpoint.KIND,
            endpoint.topic,
            endpoint.type_name,
            endpoint.node,
            endpoint.gid,
            endpoint.qos,
            self.zid,
            True,
            rihs01_of(endpoint.msg_type),
            endpoint.namespace,
        )

    @property
    def where(self) -> str:
        """Where this bus looks for the others (``DDS domain 0 (rmw_cyclonedds_cpp, loopback)``)."""
        return self.config.where

    def tap(
        self,
        topic: str,
        on_sample: Callable[[int | None], None],
        resolve: Callable[[str], type[Message] | None] = lambda _name: None,
    ) -> RawTap:
        """Call ``on_sample(publisher id)`` for every sample of ``topic``, never decoded (see
        :class:`RawTap`); ``resolve`` turns a type name into a message class when it can."""
        return RawTap(self, topic, lambda sample: on_sample(sample.publisher), resolve)

    def tap_payloads(
        self,
        topic: str,
        on_sample: Callable[[int | None, bytes], None],
        resolve: Callable[[str], type[Message] | None] = lambda _name: None,
    ) -> RawTap:
        """As :meth:`tap`, with each sample's CDR bytes as received (never decoded): what
        ``topic hz`` reads a header stamp from."""
        return RawTap(
            self, topic, lambda sample: on_sample(sample.publisher, sample.payload), resolve
        )

    def tap_all(
        self,
        on_sample: Callable[[RawSample], None],
        resolve: Callable[[str], type[Message] | None] = lambda _name: None,
    ) -> RawTap:
        """Call ``on_sample`` with every sample of every ROS 2 topic other participants publish
        in the domain, raw (what ``jointbus record`` stores; see :class:`RawTap`)."""
        return RawTap(self, None, on_sample, resolve)

    # ---- services (jointbus.bus.service_dds) --------------------------------------------------
    def link_service(self, server: ServiceServer[Any, Any]) -> DdsServiceLink:
        """Offer a local server: its request reader and reply writer."""
        from jointbus.bus.service_dds import DdsServiceLink

        return DdsServiceLink(self, server)

    def client_link(
        self,
        name: str,
        request_type: type[Message],
        response_type: type[Message],
        service_type: str,
    ) -> DdsClientLink:
        """This bus's client of one service: its request writer and reply reader."""
        from jointbus.bus.service_dds import DdsClientLink

        return DdsClientLink(self, name, request_type, response_type, service_type)

    def call_service(
        self,
        link: DdsClientLink,
        client: ServiceClient[Any, RespT],
        request: Message,
        timeout_s: float,
    ) -> RespT:
        """One call over DDS (:func:`jointbus.bus.service_dds.call_remote`)."""
        from jointbus.bus.service_dds import call_remote

        return call_remote(self, link, client, request, timeout_s)

    def remote_services(self, timeout_s: float = 0.5) -> list[ServiceInfo]:
        """Servers of other participants in the domain."""
        from jointbus.bus.service_dds import remote_services

        return remote_services(self, timeout_s)

    # ---- lifecycle -----------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    def close(self) -> None:
        """Delete the participant (and everything in it) and leave the domain. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            links = list(self._links.values())
            subscriptions = list(self._subscriptions.values())
            self._links.clear()
            self._subscriptions.clear()
            self._graph_hooks.clear()
        for link in links:
            link.close()
        for subscription in subscriptions:
            subscription.close()
        _delete(self.participant)
        _leave_domain(self.domain_id)


__all__ = [
    "DISCOVERY_WARMUP_S",
    "GRAPH_SETTLE_S",
    "READER_HISTORY",
    "TAKE_BATCH",
    "DdsEndpoint",
    "DdsPublisherLink",
    "DdsSubscriptionLink",
    "DdsTransport",
    "RawSample",
    "RawTap",
    "dds_qos",
    "listener",
    "padded",
    "placeholder_struct",
    "profile_of",
    "write_raw",
]
