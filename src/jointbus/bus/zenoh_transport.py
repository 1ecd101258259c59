"""The Zenoh transport: the same topics across processes and machines.

Where it sits: :mod:`jointbus.bus`, attached to one :class:`jointbus.bus.Bus`
(``Bus(zenoh=ZenohConfig())`` / :meth:`jointbus.bus.Bus.attach_zenoh`). It never changes how local
delivery works; it adds a remote leg to each local publisher and a remote source to each topic with
local subscribers.

On the wire jointbus is a ROS 2 participant speaking rmw_zenoh's protocol (``docs/ROS2.md``): ROS 2
nodes on rmw_zenoh and jointbus processes see and talk to each other with no bridge.

- **Keys**: topic ``/a/b`` of type ``pkg/msg/T`` ↔ data key
  ``<domain>/a/b/pkg::msg::dds_::T_/RIHS01_<hash>`` (:mod:`jointbus.bus.names`,
  :mod:`jointbus.codec.type_hash`); the domain is ``ZenohConfig.domain`` (``ROS_DOMAIN_ID``).
- **Publishing**: each local publisher gets a Zenoh publisher (``allowed_destination=REMOTE``: our
  own process is served in-process, never through Zenoh) and a matching listener. ``publish``
  encodes to CDR and puts only while Zenoh reports a matching remote subscriber, so an unobserved
  robot pays nothing for Zenoh. Reliable topics use Zenoh's reliable channel with congestion
  control *block*; best-effort ones *drop* under congestion.
- **Payload**: CDR exactly as ROS 2 sends it; the 33-byte rmw_zenoh attachment
  (:mod:`jointbus.bus.attachment`) carries sequence number, source time and the publisher's GID.
- **Receiving**: one Zenoh subscriber per topic with local subscribers, on the topic's exact data
  key (``allowed_origin=REMOTE``, so no loop-back of our own messages). A publisher of another type
  or type hash therefore never reaches the decoder (as in rmw_zenoh); its graph token is reported
  once as a :class:`TypeMismatchEvent`. (A wildcard ``<domain>/<topic>/*/*`` subscriber would see
  such samples too, but cost 8–38 µs more per sample in Zenoh's routing: measured with
  ``bench/bench_bus.py``.) A sample is decoded once with the topic's message class and the same
  object is offered to every compatible local subscriber. The steady state (a known publisher, the
  next sequence number, a payload that decodes) runs in one call of the topic's receive gate
  (:mod:`jointbus.bus.sample_gate`: the compiled core's when built, else its Python twin); every
  other sample is handed back untouched and takes the Python path below, which alone counts and
  reports gaps, malformed payloads and foreign attachments. An undecodable payload is counted and
  reported (:class:`MalformedPayloadEvent`) and dropped; the subscription keeps running. A sample
  without a readable attachment (a plain Zenoh ``put``) is delivered, but counted and reported once
  (:class:`AttachmentEvent`): no gap counting or latency for it. Gaps in a publisher's sequence
  numbers are counted (``lost``) and reported; latency is measured from the source time. Realtime
  subscribers (``realtime=True``) are called right on Zenoh's receive thread, with no thread hop (a
  hop costs ≈ 50 µs on a VM that halts idle vCPUs): such a callback must be quick and must not
  block, or it delays every later sample of every topic of the session. Ordinary callbacks stay off
  Zenoh's threads: the message is queued and their dispatcher runs them.
- **Discovery**: ROS 2 graph tokens (:mod:`jointbus.bus.ros_graph`): one ``NN`` token per node,
  one ``MP``/``MS`` token per endpoint with its type, hash and QoS. A liveliness subscriber on
  ``@ros2_lv/<domain>/**`` keeps the table of remote endpoints (jointbus's and ROS 2's), used to
  report incompatible QoS and type mismatches when endpoints meet, and to filter samples from
  incompatible or mistyped publishers (no messages flow between them, as in ROS 2). Malformed
  tokens are counted and logged once each.
- **Durability** (as rmw_zenoh does it): a transient-local publisher is a zenoh-ext
  ``AdvancedPublisher`` with a cache of ``depth`` samples and publisher detection, and puts every
  message (the cache must hold them whoever listens). A transient-local subscriber queries
  ``<data key>/@adv/pub/**`` (every cache of the topic) when it joins, and a publisher's
  cache when its token appears later; ROS 2 subscribers use zenoh-ext's ``AdvancedSubscriber``,
  which queries our caches the same way.

Callbacks from Zenoh run on Zenoh's threads; they never take the bus lock.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Final, cast

import zenoh
import zenoh.ext

from jointbus.bus import attachment
from jointbus.bus.access_watch import AccessWatch, policy_of
from jointbus.bus.discovery import EndpointInfo
from jointbus.bus.errors import BusError, ZenohConfigError
from jointbus.bus.events import AttachmentEvent, PublicationDeniedEvent, TypeMismatchEvent
from jointbus.bus.hub_relay import HubRelay
from jointbus.bus.names import data_key, parse_data_key, ros_namespace, topic_selector
from jointbus.bus.publisher import Publisher
from jointbus.bus.qos import QosProfile, incompatibilities
from jointbus.bus.ros_graph import (
    EntityKind,
    GraphEntity,
    endpoint_token,
    gid_of,
    graph_selector,
    node_token,
    parse_token,
)
from jointbus.bus.sample_gate import clamp_latency, new_gate
from jointbus.bus.sibling_link import SiblingGroup, SiblingLinks, SiblingTarget, carried, send_to
from jointbus.bus.subscriber import Subscriber
from jointbus.bus.tls_probe import TlsFiles, TlsRefusal, probe, speaks_tls
from jointbus.bus.zenoh_config import ZenohConfig
from jointbus.bus.zenoh_security import TLS_PREFIX
from jointbus.codec import accel
from jointbus.codec.codec import codec_for
from jointbus.codec.type_hash import rihs01_of
from jointbus.messages.base import Message

if TYPE_CHECKING:
    from jointbus.bus.bus import Bus
    from jointbus.bus.service import RespT, ServiceClient, ServiceInfo, ServiceServer
    from jointbus.bus.service_zenoh import ClientLink, ServiceLink

_LOG = logging.getLogger("jointbus.bus.zenoh")

#: How long opening a session waits for its first link when it has ``connect`` endpoints (s).
CONNECT_WAIT_S = 1.0
#: How long the graph must stop growing before a discovery answer is final (s).
GRAPH_SETTLE_S = 0.2
#: How long a joining transient-local subscriber waits for history replies (s).
HISTORY_QUERY_TIMEOUT_S = 1.0
#: Period of the sporadic heartbeat a reliable transient-local publisher sends so that
#: subscribers detect a missed last sample (rmw_zenoh's value).
MISS_DETECTION_HEARTBEAT_S = 0.5
#: How long a remote subscriber of a local publisher's topic and type may stay announced while
#: Zenoh routes nothing to it before the publisher is told it is denied (s). The graph token and
#: the subscriber's declaration travel separately; on a loaded host the second lags by up to ≈ 1 s.
ROUTE_SETTLE_S = 3.0
#: How many other sessions' node names :meth:`ZenohTransport.session_nodes` keeps (the newest).
_SESSIONS_REMEMBERED = 256


def history_selector(key: str, zid: str | None = None) -> str:
    """Selects the zenoh-ext publication caches of a data key (``zid``: of one session only)."""
    return f"{key}/@adv/pub/{zid or '*'}/**"


def type_hash_of(msg_type: type[Message]) -> str:
    """The RIHS01 hash of a message class, as keys and tokens carry it."""
    return rihs01_of(msg_type)


def open_session(config: ZenohConfig) -> zenoh.Session:
    """Open a Zenoh session following ``config``'s attempts; raises ZenohConfigError."""
    return _open_session(config)[0]


def _open_session(config: ZenohConfig) -> tuple[zenoh.Session, int]:
    """:func:`open_session`, and the index of the attempt that opened it (in the default scheme
    0: this process is the hub; 1: the hub port was taken, it joined whatever holds it)."""
    attempts = config.attempts()
    last_error: Exception | None = None
    for index, (listen, connect) in enumerate(attempts):
        zconfig = zenoh.Config()
        try:
            for key, value in config.json5_items(listen, connect):
                zconfig.insert_json5(key, value)
        except zenoh.ZError as exc:
            raise ZenohConfigError(f"Zenoh rejected the configuration: {exc}") from exc
        try:
            session = zenoh.open(zconfig)
        except zenoh.ZError as exc:
            last_error = exc
            _LOG.debug("zenoh open with listen=%s connect=%s failed: %s", listen, connect, exc)
            continue
        if connect and not _wait_for_a_link(session):
            refusal = _tls_refusal(config, connect)
            if refusal is not None:
                cast(Any, session).close()
                raise ZenohConfigError(refusal.describe())
            unsecured = _tls_without_certificate(config, connect)
            if unsecured is not None:
                cast(Any, session).close()
                raise ZenohConfigError(unsecured)
        return session, index
    # where it looked, not the whole configuration (TLS access rules run to kilobytes)
    raise ZenohConfigError(f"could not open a Zenoh session ({config.where}): {last_error}")


def _tls_refusal(config: ZenohConfig, connect: tuple[str, ...]) -> TlsRefusal | None:
    """Why no TLS link came up, if a handshake with the session's files is refused."""
    options = dict(config.options)
    try:
        files = TlsFiles(
            json.loads(options[f"{TLS_PREFIX}/root_ca_certificate"]),
            json.loads(options[f"{TLS_PREFIX}/connect_certificate"]),
            json.loads(options[f"{TLS_PREFIX}/connect_private_key"]),
        )
        verify_name = json.loads(options.get(f"{TLS_PREFIX}/verify_name_on_connect", "true"))
    except (KeyError, ValueError):
        return None  # not a session of jointbus's TLS settings
    refusals = [
        refusal
        for endpoint in connect
        if endpoint.startswith("tls/")
        and (refusal := probe(endpoint, files, bool(verify_name))) is not None
    ]
    return refusals[0] if refusals else None


def _tls_without_certificate(config: ZenohConfig, connect: tuple[str, ...]) -> str | None:
    """Why a session without TLS files got no link, if an endpoint is a TLS-only listener: a
    plain ``tcp/`` link to it, or a ``tls/`` one without this host's certificate, is dropped by
    the listener and Zenoh says nothing — the user saw "no topics found" from a running robot."""
    if any(key.startswith(TLS_PREFIX) for key, _ in config.options):
        return None  # a session with TLS files: ``_tls_refusal`` says why
    for endpoint in connect:
        if endpoint.startswith(("tcp/", "tls/")) and speaks_tls(endpoint):
            address = endpoint.split("/", 1)[1]
            return (
                f"{endpoint} is a TLS-only listener and this host has no certificate: connect "
                f"with tls/{address} and give --tls-cert, --tls-key and --tls-ca "
                "(JOINTBUS_TLS_CERT, JOINTBUS_TLS_KEY, JOINTBUS_TLS_CA; docs/SECURITY.md)"
            )
    return None


def _wait_for_a_link(session: zenoh.Session) -> bool:
    """Wait (at most ``CONNECT_WAIT_S``) until the session is linked to a peer or router.

    A Zenoh peer opens its configured ``connect`` links in the background, so ``zenoh.open``
    returns before they exist; a CLI command that asks the graph right away (``topic list``,
    ``ros2 graph``) would then see nothing. An endpoint that never answers costs the bound once.
    Returns whether a link came up."""
    deadline = time.monotonic() + CONNECT_WAIT_S
    info = session.info
    while time.monotonic() < deadline:
        if any(True for _ in info.peers_zid()) or any(True for _ in info.routers_zid()):
            return True
        time.sleep(0.005)
    return False


def _undeclare(entity: object) -> None:
    """Undeclare a Zenoh entity, ignoring the error of an already closed session."""
    with contextlib.suppress(zenoh.ZError):
        cast(Any, entity).undeclare()


def _matching(status: object) -> bool:
    """``matching_status`` is a ``MatchingStatus`` at run time (the stub says ``bool``)."""
    return bool(getattr(status, "matching", status))


def _qos_args(reliable: bool) -> dict[str, Any]:
    if reliable:
        return {
            "reliability": zenoh.Reliability.RELIABLE,
            "congestion_control": zenoh.CongestionControl.BLOCK,
        }
    return {
        "reliability": zenoh.Reliability.BEST_EFFORT,
        "congestion_control": zenoh.CongestionControl.DROP,
    }


def _decoder_of(msg_type: type[Message]) -> Callable[[bytes], Message]:
    """``msg_type.from_cdr``, or its codec's ``decode`` straight away when the class does not
    override ``from_cdr`` (one Python frame less per received sample)."""
    if getattr(msg_type.from_cdr, "__func__", None) is getattr(Message.from_cdr, "__func__", 0):
        decode: Callable[[bytes], Message] = codec_for(msg_type).decode
        return decode
    return msg_type.from_cdr


def _encoder_of(msg_type: type[Message]) -> Callable[[Message], bytes]:
    """``msg_type.to_cdr``, or its codec's ``encode`` when the class does not override it."""
    if msg_type.to_cdr is Message.to_cdr:
        encode: Callable[[Message], bytes] = codec_for(msg_type).encode
        return encode
    return msg_type.to_cdr


def _publisher_label(remote: EndpointInfo | None, att: attachment.Attachment | None) -> str:
    """How events name the sender of a sample."""
    if remote is not None:
        return remote.label
    if att is not None:
        return f"gid {att.gid:032x}"
    return "unknown (no attachment)"


class PublisherLink:
    """The remote leg of one local publisher (a :class:`jointbus.bus.publisher.RemoteLink`)."""

    def __init__(self, transport: ZenohTransport, pub: Publisher[Any]) -> None:
        session = transport.session
        self._pub = pub
        self._transport = transport
        key = data_key(transport.domain_id, pub.topic, pub.type_name, type_hash_of(pub.msg_type))
        self.key = key
        self.topic = pub.topic
        # A plain publisher for its matching status (the advanced one has none in Python).
        self._zpub = session.declare_publisher(
            key, allowed_destination=zenoh.Locality.REMOTE, **_qos_args(pub.qos.reliable)
        )
        self._adv: zenoh.ext.AdvancedPublisher | None = None
        self.send_always = pub.qos.transient_local
        if self.send_always:
            miss = None
            if pub.qos.reliable:
                miss = zenoh.ext.MissDetectionConfig(
                    heartbeat=None, sporadic_heartbeat=MISS_DETECTION_HEARTBEAT_S
                )
            self._adv = zenoh.ext.declare_advanced_publisher(
                session,
                key,
                allowed_destination=zenoh.Locality.REMOTE,
                cache=zenoh.ext.CacheConfig(pub.qos.depth),
                sample_miss_detection=miss,
                publisher_detection=True,
                **_qos_args(pub.qos.reliable),
            )
        self._put = (self._adv or self._zpub).put  # bound once: ``send`` is on the hot path
        self._encode = _encoder_of(pub.msg_type)
        self._pack = attachment.FIELDS.pack
        #: A remote subscriber matches on Zenoh (its matching status).
        self.zenoh_matched: bool = _matching(self._zpub.matching_status)
        self.matched: bool = self.zenoh_matched
        #: Siblings this publisher's messages go to over a same-host link
        #: (:mod:`jointbus.bus.sibling_link`; best-effort volatile publishers only).
        self.sibling_targets: tuple[SiblingTarget, ...] = ()
        self._carried = carried(pub.qos)
        self._retarget_lock = threading.Lock()
        self._zenoh_send: Callable[[Message, int, int], None] = self.send_python
        self.send: Callable[[Message, int, int], None] = self.send_python
        self._listener = self._zpub.declare_matching_listener(self._on_matching)
        # Announced last: whoever discovers the token can already query the cache.
        self._token_key, self._token = transport.declare_endpoint(pub, "MP")
        self.gid = gid_of(self._token_key)
        #: ``send`` as ``publish`` calls it: the compiled core's (encode, stamp, put in one call)
        #: when built and allowed, else :meth:`send_python`.
        core = None
        if transport.compiled_send is not False:
            core = accel.sender(self._put, self._encode, self.gid)
        self._zenoh_send = core or self.send_python
        self.retarget()
        for msg, _born, seq in pub.history:  # published before Zenoh was attached
            self.send(msg, seq, 0)

    def _on_matching(self, status: zenoh.MatchingStatus) -> None:
        self.zenoh_matched = _matching(status)
        _LOG.debug(
            "%s on %s: remote subscribers %s", self._pub.label, self._pub.topic, self.zenoh_matched
        )
        self.retarget()

    def retarget(self) -> None:
        """Choose where ``send`` goes — Zenoh, the siblings' links, or both — from the matching
        status and the siblings' subscriptions (called when either changes). A sibling served by
        a link declares no Zenoh subscriber for a publisher it has by the link, so Zenoh's
        matching status then says whether anyone else (a recorder, another machine) listens."""
        siblings = self._transport.siblings
        with self._retarget_lock:
            targets: tuple[SiblingTarget, ...] = ()
            if siblings is not None and self._carried:
                targets = siblings.targets(
                    self._pub.topic, self._pub.type_name, type_hash_of(self._pub.msg_type)
                )
            self.sibling_targets = targets
            if not targets:
                self.send = self._zenoh_send
            elif self.zenoh_matched:
                self.send = self._send_both
            else:
                self.send = self._send_siblings
            self.matched = self.zenoh_matched or bool(targets)

    def _send_siblings(self, msg: Message, seq: int, mono_ns: int) -> None:
        att = self._pack(seq, time.time_ns(), attachment.GID_SIZE, self.gid)
        send_to(self.sibling_targets, att, self._encode(msg))

    def _send_both(self, msg: Message, seq: int, mono_ns: int) -> None:
        payload = self._encode(msg)
        att = self._pack(seq, time.time_ns(), attachment.GID_SIZE, self.gid)
        send_to(self.sibling_targets, att, payload)
        self._put(payload, attachment=att)

    def send_python(self, msg: Message, seq: int, mono_ns: int) -> None:
        """Encode and put one message (``send``, called by ``publish`` while matched, or always
        for a transient-local publisher, is this or the compiled core's twin of it)."""
        self._put(
            self._encode(msg),
            attachment=self._pack(seq, time.time_ns(), attachment.GID_SIZE, self.gid),
        )

    def close(self) -> None:
        """Undeclare everything (no error if the session is already closed)."""
        for entity in (self._token, self._listener, self._adv, self._zpub):
            if entity is not None:
                _undeclare(entity)


class TopicSubscription:
    """One Zenoh subscriber feeding every local subscriber of a topic."""

    def __init__(self, transport: ZenohTransport, topic: str, msg_type: type[Message]) -> None:
        self._transport = transport
        self._bus = transport.bus
        self.topic = topic
        self.msg_type = msg_type
        self._type_name = msg_type.TYPE_NAME
        #: Last sequence number per remote publisher GID (16 bytes), shared with the gate.
        self._last_seq: dict[bytes, int] = {}
        # For transient-local subscribers: first live sequence number per (subscriber, publisher),
        # and the publishers whose history a subscriber already received (no duplicates).
        self._first_live: dict[tuple[int, int], int] = {}
        self._history_done: set[tuple[int, int]] = set()
        self._history_last: dict[tuple[int, int], int] = {}
        self._history_lock = threading.Lock()
        #: QoS compatibility of (remote publisher gid, local subscriber gid); neither QoS changes.
        self._compat: dict[tuple[int, int], bool] = {}
        #: Per remote publisher GID (16 bytes): the gate's delivery plan, ``(local subscribers,
        #: discovery generation, ((offer, latency counters), ...) or None)``, stored by
        #: ``_receive``; stale (and rebuilt there) when the bus replaces its subscriber tuple or
        #: discovery changes the generation.
        self._plans: dict[bytes, tuple[tuple[Subscriber[Any], ...], int, Any]] = {}
        self._gate = new_gate(
            _decoder_of(msg_type), self._last_seq, self._plans, transport.compiled_receive
        )
        #: Samples received, undecodable payloads, samples without a readable attachment and
        #: history replies of another type or hash (never decoded), whatever the local subscribers
        #: (``samples`` is counted by the gate).
        self.malformed = 0
        self.bad_attachments = 0
        self.foreign_type = 0
        #: Keys (type mismatch) and publisher keys (attachment) already reported: once each.
        self._reported: set[str] = set()
        self.type_hash = type_hash_of(msg_type)
        self.key = data_key(transport.domain_id, topic, self._type_name, self.type_hash)
        #: Publishers (GID int → sibling process name) whose messages came by a same-host link
        #: (:mod:`jointbus.bus.sibling_link`): their Zenoh copies are dropped, and no Zenoh
        #: subscriber is kept for them.
        self.sibling_gids: dict[int, str] = {}
        #: Linked publishers (16-byte GID → its int) whose link may still bring messages Zenoh
        #: delivered first (``receive_sibling``).
        self._catching_up: dict[bytes, int] = {}
        #: Zenoh copies of link-delivered messages dropped.
        self.sibling_copies = 0
        self._zsub_lock = threading.Lock()
        self._zsub: zenoh.Subscriber[None] | None = None
        self._closed = False
        if transport.siblings is None:
            self.listen_on_zenoh(True)
        else:  # whether a Zenoh subscriber is needed is the siblings' thread's to decide
            transport.siblings.reconsider(topic)

    @property
    def type_name(self) -> str:
        """The topic's type name (``pkg/msg/T``)."""
        return self._type_name

    @property
    def on_zenoh(self) -> bool:
        """Whether the Zenoh subscriber is declared now."""
        return self._zsub is not None

    def listen_on_zenoh(self, on: bool) -> None:
        """Declare or undeclare the Zenoh subscriber (idempotent; never again once closed)."""
        with self._zsub_lock:
            if on and self._zsub is None and not self._closed:
                self._zsub = self._transport.session.declare_subscriber(
                    self.key,
                    self._on_sample,
                    allowed_origin=zenoh.Locality.REMOTE,
                )
            elif not on and self._zsub is not None:
                _undeclare(self._zsub)
                self._zsub = None

    def receive_sibling(self, att: bytes, payload: bytes, sibling: str) -> None:
        """One message that came by a sibling's link: the same path as a Zenoh sample."""
        try:
            if len(att) == attachment.SIZE:
                key = att[17:]
                gid = attachment.gid_int(key)
                if gid not in self.sibling_gids:
                    # the publisher's first message by the link: from now on its Zenoh copies
                    # are dropped
                    self.sibling_gids[gid] = sibling
                    self._catching_up[key] = gid
                    siblings = self._transport.siblings
                    if siblings is not None:
                        siblings.reconsider(self.topic)
                if self._catching_up and key in self._catching_up:
                    # Until the link is ahead of what Zenoh delivered, a linked message whose
                    # Zenoh copy came first is dropped: a loop that reads its links once a cycle
                    # (SiblingLinks.inbound_reader) can find several such behind the Zenoh ones,
                    # and must not deliver an older command after a newer.
                    last = self._last_seq.get(key)
                    if last is not None and attachment.FIELDS.unpack(att)[0] <= last:
                        return
                    del self._catching_up[key]
            generation = self._transport.generation
            slow = self._gate.receive(
                att, payload, self._bus.local_subscribers(self.topic), generation
            )
            if slow is not None:
                raw, now_mono, now_wall = slow
                self._receive(payload, raw, None, now_mono, now_wall, generation=generation)
        except Exception:  # never let one message end the links' thread
            _LOG.exception("receiving a linked message on %s failed", self.topic)

    def sibling_gone(self, sibling: str) -> None:
        """A sibling's link closed: its publishers are Zenoh's again."""
        for gid in [g for g, s in self.sibling_gids.items() if s == sibling]:
            self.sibling_gids.pop(gid, None)
        for key in [k for k, g in self._catching_up.items() if g not in self.sibling_gids]:
            self._catching_up.pop(key, None)

    def _on_sample(self, sample: zenoh.Sample) -> None:
        # Runs on Zenoh's receive thread. Realtime subscribers are called right here (no thread
        # hop: on this VM a hop costs ≈ 50 µs); ordinary ones get the message queued for their
        # dispatcher. The steady state (a known publisher, the next sequence number, a payload that
        # decodes) is the gate's, in one call (compiled when the core is built: see
        # jointbus.bus.sample_gate); everything else comes back untouched, with the clocks the
        # gate read first, and goes through ``_receive``.
        try:
            if self.sibling_gids:
                raw_att = sample.attachment
                if raw_att is not None:
                    gid = attachment.unpack(raw_att.to_bytes())
                    if gid is not None and gid.gid in self.sibling_gids:
                        self.sibling_copies += 1  # had by the link already
                        return
            generation = self._transport.generation
            slow = self._gate.receive(
                sample.attachment,
                sample.payload,
                self._bus.local_subscribers(self.topic),
                generation,
            )
            if slow is not None:
                raw, now_mono, now_wall = slow
                self._receive(
                    sample.payload.to_bytes(), raw, None, now_mono, now_wall, generation=generation
                )
        except Exception:  # never let one sample kill Zenoh's callback thread
            _LOG.exception("receiving a sample on %s failed", self.topic)

    @property
    def samples(self) -> int:
        """Samples received on the topic's key, whatever the local subscribers."""
        return self._gate.samples

    def _report_malformed(
        self,
        subs: tuple[Subscriber[Any], ...],
        remote: EndpointInfo | None,
        gid: int | None,
        payload: bytes,
        exc: Exception,
    ) -> None:
        self.malformed += 1
        if remote is not None:
            publisher = remote.label
        elif gid is not None:
            publisher = f"gid {gid:032x}"
        else:
            publisher = "unknown (no attachment)"
        for sub in subs:
            sub._note_malformed(publisher, len(payload), payload, exc)

    def _receive(
        self,
        payload: bytes,
        raw_attachment: bytes | None,
        history_for: Subscriber[Any] | None,
        now_mono: int,
        now_wall: int,
        *,
        generation: int | None = None,
    ) -> None:
        """Every sample the gate does not handle, and every history reply: the whole receive
        path. ``generation``: the discovery generation the live sample was received under; the
        publisher's delivery plan is then stored for the gate."""
        self._gate.samples += 1
        subs = (
            (history_for,) if history_for is not None else self._bus.local_subscribers(self.topic)
        )
        if not subs:
            return
        att = attachment.unpack(raw_attachment)
        if att is None:
            self._bad_attachment(subs, raw_attachment)
        remote = None
        gid_key = b""
        if att is not None:
            assert raw_attachment is not None
            gid_key = raw_attachment[17:]
            remote = self._transport.remote_info(att.gid)
            if remote is not None and remote.type_name != self._type_name:
                if history_for is None and generation is not None:
                    self._plans[gid_key] = (subs, generation, None)  # the gate drops them too
                return  # reported once as a TypeMismatchEvent when the endpoint was discovered
            if history_for is not None:
                first_live = self._first_live.get((history_for.gid, att.gid))
                if first_live is not None and att.seq >= first_live:
                    return  # already delivered live
        if att is not None and history_for is None:
            # Count the sequence number before decoding: malformed is not lost (issue 11 item 9).
            last = self._last_seq.get(gid_key)
            if last is not None and att.seq > last + 1:
                publisher = _publisher_label(remote, att)
                for sub in subs:
                    sub._note_lost(att.seq - last - 1, publisher)
            self._last_seq[gid_key] = att.seq
        try:
            msg = self.msg_type.from_cdr(payload)
        except Exception as exc:
            self._report_malformed(subs, remote, None if att is None else att.gid, payload, exc)
            return
        if att is None:
            for sub in subs:
                sub.offer(msg, now_mono, now_mono)
            return
        latency = clamp_latency(now_wall - att.source_wall_ns)
        born = now_mono - latency if latency > 0 else now_mono
        gid = att.gid
        seq = att.seq
        if history_for is not None:
            if remote is not None and not self._compatible(remote, history_for):
                return
            pair = (history_for.gid, gid)
            history_last = self._history_last.get(pair, 0)
            self._history_last[pair] = seq if seq > history_last else history_last
            history_for.offer(msg, born, now_mono)
            return
        targets = tuple(sub for sub in subs if remote is None or self._compatible(remote, sub))
        for sub in targets:
            sub._note_latency(latency)
            if sub.qos.transient_local:
                pair = (sub.gid, gid)
                if seq <= self._history_last.get(pair, 0):
                    continue  # already delivered from the publisher's history
                self._first_live.setdefault(pair, seq)
            sub.offer(msg, born, now_mono)
        if generation is not None and not any(sub.qos.transient_local for sub in targets):
            # The gate delivers this publisher's next samples (transient-local subscribers need
            # the history bookkeeping above: theirs always come here).
            self._plans[gid_key] = (
                subs,
                generation,
                tuple((sub.offer, sub.latency_stats) for sub in targets),
            )

    def _foreign(self, key: str) -> None:
        """A history reply on our topic whose key names another type or hash (a cache answering
        with any key): never decoded; counted, and reported once per key."""
        self.foreign_type += 1
        if key in self._reported:
            return
        self._reported.add(key)
        try:
            parsed = parse_data_key(key)
            remote_type = f"{parsed.type_name} ({parsed.type_hash})"
        except BusError:
            remote_type = f"unreadable key {key!r}"
        local_type = f"{self._type_name} ({self.key.rsplit('/', 1)[-1]})"
        for sub in self._bus.local_subscribers(self.topic):
            sub._emit(
                TypeMismatchEvent(
                    self.topic, sub.label, local_type, remote_type, "a publisher (from its key)"
                )
            )

    def _bad_attachment(self, subs: tuple[Subscriber[Any], ...], raw: bytes | None) -> None:
        """A sample without an rmw_zenoh attachment: delivered, counted, reported once."""
        self.bad_attachments += 1
        marker = "none" if raw is None else f"{len(raw)}"
        if marker in self._reported:
            return
        self._reported.add(marker)
        reason = (
            "no attachment"
            if raw is None
            else f"a {len(raw)}-byte attachment that is not rmw_zenoh's 33-byte record"
        )
        for sub in subs:
            sub._emit(AttachmentEvent(self.topic, sub.label, reason, self.bad_attachments))

    def _compatible(self, remote: EndpointInfo, sub: Subscriber[Any]) -> bool:
        key = (remote.gid, sub.gid)
        known = self._compat.get(key)
        if known is None:
            known = self._compat[key] = not incompatibilities(remote.qos, sub.qos)
        return known

    def fetch_history(self, sub: Subscriber[Any], publisher_zid: str | None = None) -> None:
        """Deliver transient-local publishers' caches to a transient-local subscriber.

        Called when the subscriber joins (every cache on the topic) and when a transient-local
        publisher is discovered later (the caches of its session). Each publisher's history
        reaches a subscriber once, and only the part older than the first message the subscriber
        received from it live; it may therefore arrive after a few live messages when both race.
        """
        replies = list(
            self._transport.session.get(
                history_selector(self.key, publisher_zid),
                target=zenoh.QueryTarget.ALL,
                # Every cached sample is a reply on the data key: keep them all, in order.
                consolidation=zenoh.ConsolidationMode.NONE,
                accept_replies=zenoh.ReplyKeyExpr.ANY,
                allowed_destination=zenoh.Locality.REMOTE,
                timeout=HISTORY_QUERY_TIMEOUT_S,
            )
        )
        with self._history_lock:
            served: set[tuple[int, int]] = set()
            for reply in replies:
                sample = reply.ok
                if sample is None or sub.closed:
                    continue
                if str(sample.key_expr) != self.key:
                    self._foreign(str(sample.key_expr))
                    continue
                raw = None if sample.attachment is None else sample.attachment.to_bytes()
                att = attachment.unpack(raw)
                if att is not None:
                    if (sub.gid, att.gid) in self._history_done:
                        continue
                    served.add((sub.gid, att.gid))
                self._receive(
                    sample.payload.to_bytes(), raw, sub, time.monotonic_ns(), time.time_ns()
                )
            self._history_done |= served

    def forget(self, sub: Subscriber[Any]) -> None:
        """Drop the bookkeeping of a closed subscriber."""
        with self._history_lock:
            self._history_done = {k for k in self._history_done if k[0] != sub.gid}
            for key in [k for k in self._first_live if k[0] == sub.gid]:
                self._first_live.pop(key, None)
            for key in [k for k in self._history_last if k[0] == sub.gid]:
                self._history_last.pop(key, None)
            for pair in [k for k in self._compat if k[1] == sub.gid]:
                self._compat.pop(pair, None)
            self._plans.clear()  # rebuilt on the next sample, without ``sub``

    def close(self) -> None:
        """Undeclare the Zenoh subscriber."""
        with self._zsub_lock:
            self._closed = True
        self.listen_on_zenoh(False)


class ZenohTransport:
    """A bus's Zenoh session, publisher links, topic subscriptions, graph tokens and discovery."""

    #: Which wire this transport is (the DDS transport's is ``"dds"``).
    KIND: Final = "zenoh"
    #: How messages name this transport's peers ("… runs in Zenoh session <zid>").
    PEER_NOUN: Final = "Zenoh session"

    def __init__(self, bus: Bus, config: ZenohConfig) -> None:
        self.bus = bus
        self.config = config
        self.domain_id = config.domain
        self.session, self._attempt = _open_session(config)
        self.zid = str(self.session.zid())
        #: Which receive gate topic subscriptions made from now on use: None = the compiled one
        #: when the core is built, False = the pure-Python twin (what runs without the core; the
        #: tests run both), True = the compiled one or RuntimeError.
        self.compiled_receive: bool | None = None
        #: The same for the send path of publishers linked from now on (None: the compiled
        #: ``send`` when built; False: :meth:`PublisherLink.send_python`).
        self.compiled_send: bool | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._links: dict[int, PublisherLink] = {}
        self._tokens: dict[int, zenoh.LivelinessToken] = {}
        #: Local endpoint gid → its node's (namespace, name) (for the node token's reference
        #: count).
        self._endpoint_nodes: dict[int, tuple[str, str]] = {}
        #: Node (namespace, name) → (node id, NN token, endpoints announced under it).
        self._nodes: dict[tuple[str, str], tuple[int, zenoh.LivelinessToken, int]] = {}
        self._next_id = 0
        self._subscriptions: dict[str, TopicSubscription] = {}
        self._remote: dict[int, EndpointInfo] = {}
        # (local gid, remote gid) of every pair already reported as incompatible or mistyped:
        # one report per endpoint pair, however often the two meet again (a token seen by both
        # the liveliness subscriber and a query, a second local endpoint on the topic).
        self._reported: set[tuple[int, int]] = set()
        self._reported_lock = threading.Lock()
        #: Bumped after every change of ``_remote``: the receive gates' delivery plans name the
        #: generation they were computed under, and a plan of an older one is rebuilt.
        self.generation = 0
        #: Every live graph entity of other sessions by token key (the liveliness subscriber's
        #: view): nodes, endpoints, services.
        self._graph: dict[str, GraphEntity] = {}
        #: The node names each other session announced (by session id), kept after they leave:
        #: what a closed link's session ran is asked when its tokens are already gone. The last
        #: :data:`_SESSIONS_REMEMBERED` sessions.
        self._session_nodes: dict[str, tuple[str, ...]] = {}
        #: Graph tokens that could not be parsed (counted; each key logged once).
        self.bad_tokens = 0
        self._bad_token_keys: set[str] = set()
        #: Reports peers whose announced publishers and clients the session's access rules deny
        #: (None without readable rules).
        policy = policy_of(config.options)
        self.access_watch = AccessWatch(self, policy) if policy is not None else None
        #: A session with TLS files: the peers' access rules name it by its certificate, so its
        #: publishers are watched for routes the rules refuse (see ``_watch_route``).
        self.secured = any(key.startswith(TLS_PREFIX) for key, _ in config.options)
        self._quiet_for_hidden: frozenset[str] = frozenset()
        #: Same-host links to the other processes of this launch (:meth:`join_siblings`).
        self.siblings: SiblingLinks | None = None
        self._liveliness = self.session.liveliness().declare_subscriber(
            graph_selector(self.domain_id), self._on_token, history=True
        )
        #: Answers on the hub port once the jointbus process that held it has left (None: this
        #: session is the hub, found a router there, or does not use the default scheme — the
        #: only one with a second attempt, the hub port taken).
        self.hub_relay: HubRelay | None = None
        if (
            self._attempt == 1
            and config.hub_relay
            and not self._linked_to_a_router()
        ):
            self.hub_relay = HubRelay(config, router_seen=self._linked_to_a_router)

    def _linked_to_a_router(self) -> bool:
        """Whether this session has a link to a Zenoh router now (False once it is closed)."""
        try:
            return any(True for _ in self.session.info.routers_zid())
        except zenoh.ZError:
            return False

    # ---- local endpoints -----------------------------------------------------------------------
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
            type_hash_of(endpoint.msg_type),
            endpoint.namespace,
        )

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def declare_endpoint(
        self, endpoint: Publisher[Any] | Subscriber[Any], kind: EntityKind
    ) -> tuple[str, zenoh.LivelinessToken]:
        """Announce a local endpoint (and, with its node's first endpoint, the node): returns the
        token key (its GID's source) and the token. Called with the transport lock held."""
        return self.declare_entity(
            endpoint.gid,
            kind,
            node=endpoint.node,
            namespace=endpoint.namespace,
            name=endpoint.topic,
            type_name=endpoint.type_name,
            type_hash=type_hash_of(endpoint.msg_type),
            qos=endpoint.qos,
        )

    def declare_entity(
        self,
        ref: int,
        kind: EntityKind,
        *,
        node: str,
        name: str,
        type_name: str,
        type_hash: str,
        qos: QosProfile,
        namespace: str = "/",
    ) -> tuple[str, zenoh.LivelinessToken]:
        """Announce one graph entity — a topic endpoint, a service server (``SS``) or client
        (``SC``) — under ``node`` in ``namespace`` (announcing the node with its first entity:
        two nodes of one name in two namespaces are two ROS 2 nodes, ``/arm3/array_node`` and
        ``/arm4/array_node``); ``ref`` identifies it for :meth:`release_entity`. Returns the
        token key and the token. Called with the transport lock held (services go through
        :meth:`announce_service_entity`)."""
        identity = (ros_namespace(namespace), node)
        known = self._nodes.get(identity)
        if known is None:
            node_id = self._new_id()
            token = self.session.liveliness().declare_token(
                node_token(self.domain_id, self.zid, node_id, node, identity[0])
            )
            known = (node_id, token, 0)
        self._nodes[identity] = (known[0], known[1], known[2] + 1)
        self._endpoint_nodes[ref] = identity
        key = endpoint_token(
            self.domain_id,
            self.zid,
            node_id=known[0],
            entity_id=self._new_id(),
            kind=kind,
            node=node,
            topic=name,
            type_name=type_name,
            type_hash=type_hash,
            qos=qos,
            namespace=identity[0],
        )
        return key, self.session.liveliness().declare_token(key)

    def announce_service_entity(
        self,
        ref: int,
        kind: EntityKind,
        *,
        node: str,
        name: str,
        type_name: str,
        type_hash: str,
        qos: QosProfile,
        namespace: str = "/",
    ) -> tuple[str, zenoh.LivelinessToken] | None:
        """:meth:`declare_entity` under the transport lock (services); None once closed."""
        with self._lock:
            if self._closed:
                return None
            return self.declare_entity(
                ref,
                kind,
                node=node,
                name=name,
                type_name=type_name,
                type_hash=type_hash,
                qos=qos,
                namespace=namespace,
            )

    def release_entity(self, ref: int, token: zenoh.LivelinessToken) -> None:
        """Withdraw an entity announced by :meth:`announce_service_entity` (and its node with
        the node's last entity)."""
        with self._lock:
            node_token_ = self._release_node(ref)
        _undeclare(token)
        if node_token_ is not None:
            _undeclare(node_token_)

    def graph_entities(self) -> list[GraphEntity]:
        """Every live graph entity of other sessions, as the liveliness subscriber saw them."""
        with self._lock:
            return list(self._graph.values())

    def session_nodes(self, zid: str) -> tuple[str, ...]:
        """The names of the nodes session ``zid`` (its full id, as :attr:`GraphEntity.zid`)
        announced, in the order they came, also after they left or the session closed; empty
        for a session not heard of (or one of the oldest beyond :data:`_SESSIONS_REMEMBERED`)."""
        with self._lock:
            return self._session_nodes.get(zid, ())

    def _remember_node(self, entity: GraphEntity) -> None:
        """Keep ``entity``'s node name under its session (the liveliness subscriber's thread)."""
        with self._lock:
            names = self._session_nodes.pop(entity.zid, ())
            if entity.node not in names:
                names += (entity.node,)
            self._session_nodes[entity.zid] = names  # the newest last
            while len(self._session_nodes) > _SESSIONS_REMEMBERED:
                del self._session_nodes[next(iter(self._session_nodes))]

    def _release_node(self, endpoint_gid: int) -> zenoh.LivelinessToken | None:
        """Forget an endpoint's node reference; returns the node token to undeclare when it was
        the node's last endpoint. Called with the transport lock held."""
        node = self._endpoint_nodes.pop(endpoint_gid, None)  # (namespace, name)
        if node is None or node not in self._nodes:
            return None
        node_id, token, count = self._nodes[node]
        if count > 1:
            self._nodes[node] = (node_id, token, count - 1)
            return None
        del self._nodes[node]
        return token

    def publisher_added(self, pub: Publisher[Any]) -> None:
        """Give a local publisher its remote leg and announce it."""
        with self._lock:
            if self._closed or pub.closed:
                return
            link = PublisherLink(self, pub)
            self._links[pub.gid] = link
            pub._remote = link
        for info in list(self._remote.values()):
            if info.topic == pub.topic and info.kind == "subscriber":
                self._meet(info, (pub,))

    def publisher_removed(self, pub: Publisher[Any]) -> None:
        """Withdraw a closed local publisher."""
        with self._lock:
            link = self._links.pop(pub.gid, None)
            node_token_ = self._release_node(pub.gid)
        pub._remote = None
        self._forget_reported(local=pub.gid)
        if link is not None:
            link.close()
        if node_token_ is not None:
            _undeclare(node_token_)

    def subscriber_added(self, sub: Subscriber[Any]) -> None:
        """Feed a local subscriber from Zenoh and announce it."""
        with self._lock:
            if self._closed or sub.closed:
                return
            subscription = self._subscriptions.get(sub.topic)
            if subscription is None or subscription.msg_type is not sub.msg_type:
                if subscription is not None:
                    subscription.close()
                subscription = TopicSubscription(self, sub.topic, sub.msg_type)
                self._subscriptions[sub.topic] = subscription
            _key, self._tokens[sub.gid] = self.declare_endpoint(sub, "MS")
        self._tell_siblings(sub.topic)
        if sub.qos.transient_local:
            subscription.fetch_history(sub)
        for info in list(self._remote.values()):
            if info.topic == sub.topic and info.kind == "publisher":
                self._meet(info, (sub,))

    def subscriber_removed(self, sub: Subscriber[Any]) -> None:
        """Withdraw a closed local subscriber (and, with the last one, the Zenoh subscriber)."""
        with self._lock:
            token = self._tokens.pop(sub.gid, None)
            node_token_ = self._release_node(sub.gid)
            current = self._subscriptions.get(sub.topic)
            if current is not None:
                current.forget(sub)
            subscription = None
            if not self.bus.local_subscribers(sub.topic):
                subscription = self._subscriptions.pop(sub.topic, None)
        self._forget_reported(local=sub.gid)
        for entity in (token, node_token_):
            if entity is not None:
                _undeclare(entity)
        if subscription is not None:
            subscription.close()
        self._tell_siblings(sub.topic)

    # ---- same-host links (jointbus.bus.sibling_link) -------------------------------------------
    def join_siblings(self, group: SiblingGroup) -> SiblingLinks:
        """Link this process to the other processes of its launch on this host: best-effort
        volatile topics between them go by a socket instead of Zenoh (see
        :mod:`jointbus.bus.sibling_link`). Once per transport (:class:`BusError` again)."""
        with self._lock:
            if self._closed:
                raise BusError("the Zenoh transport is closed")
            if self.siblings is not None:
                raise BusError(f"already linked as {self.siblings.group.name!r}")
            self.siblings = SiblingLinks(self, group)
            topics = list(self._subscriptions)
        for topic in topics:
            self._tell_siblings(topic)
        return self.siblings

    def _tell_siblings(self, topic: str) -> None:
        siblings = self.siblings
        if siblings is None:
            return
        subscribed = any(carried(sub.qos) for sub in self.bus.local_subscribers(topic))
        siblings.subscriptions_changed(topic, subscribed)
        siblings.reconsider(topic)

    def siblings_changed(self, topic: str) -> None:
        """A sibling subscribes ``topic`` by a link now, or no longer: retarget its publishers."""
        for link in list(self._links.values()):
            if link.topic == topic:
                link.retarget()

    def sibling_gone(self, sibling: str) -> None:
        """A sibling's link closed: its publishers are heard on Zenoh again."""
        siblings = self.siblings
        for subscription in list(self._subscriptions.values()):
            subscription.sibling_gone(sibling)
            if siblings is not None:
                siblings.reconsider(subscription.topic)

    def needs_zenoh(self, topic: str) -> bool:
        """Whether ``topic``'s subscription needs its Zenoh subscriber: unless every local
        subscriber is carried by links and every publisher the graph names is heard by a link
        already. (Without a Zenoh subscriber for them, a linked publisher sends nothing on
        Zenoh while nobody else listens.)"""
        subscription = self._subscriptions.get(topic)
        if subscription is None:
            return False
        subs = self.bus.local_subscribers(topic)
        if not subs or not all(carried(sub.qos) for sub in subs):
            return True
        heard = subscription.sibling_gids
        return any(
            info.kind == "publisher" and info.topic == topic and info.gid not in heard
            for info in list(self._remote.values())
        )

    def listen_as_needed(self, topic: str) -> None:
        """Declare or undeclare ``topic``'s Zenoh subscriber as :meth:`needs_zenoh` says (the
        links' thread calls it, never a Zenoh callback)."""
        subscription = self._subscriptions.get(topic)
        if subscription is not None and not self._closed:
            subscription.listen_on_zenoh(self.needs_zenoh(topic))

    def subscription(self, topic: str) -> TopicSubscription | None:
        """The Zenoh subscription feeding ``topic``'s local subscribers, if any (diagnostics)."""
        return self._subscriptions.get(topic)

    # ---- discovery -----------------------------------------------------------------------------
    def _parse_entity(self, key: str) -> GraphEntity | None:
        """A graph token key parsed; None for malformed keys (counted, logged once each)."""
        try:
            return parse_token(key)
        except BusError as exc:
            self.bad_tokens += 1
            if key not in self._bad_token_keys:
                self._bad_token_keys.add(key)
                _LOG.warning("ignoring a malformed ROS 2 graph token: %s", exc)
            return None

    def _parse_token(self, key: str) -> EndpointInfo | None:
        """The endpoint record of a token key; None for nodes and services (not topics), and for
        malformed keys."""
        entity = self._parse_entity(key)
        if entity is None or entity.kind not in ("MP", "MS"):
            return None
        return EndpointInfo.from_entity(entity)

    def _on_token(self, sample: zenoh.Sample) -> None:
        key = str(sample.key_expr)
        entity = self._parse_entity(key)
        if entity is None or entity.zid == self.zid:
            return
        if sample.kind == zenoh.SampleKind.DELETE:
            self._graph.pop(key, None)
        else:
            self._graph[key] = entity
            if entity.kind == "NN":
                self._remember_node(entity)
            if self.access_watch is not None:
                try:
                    self.access_watch.saw(entity)
                except Exception:
                    _LOG.exception("checking %s against the access rules failed", key)
        if entity.kind not in ("MP", "MS"):
            return
        info = EndpointInfo.from_entity(entity)
        siblings = self.siblings
        if sample.kind == zenoh.SampleKind.DELETE:
            self._remote.pop(info.gid, None)
            self._forget_reported(remote=info.gid)
            self.generation += 1
            if siblings is not None and info.kind == "publisher":
                siblings.reconsider(info.topic)
            return
        self._remote[info.gid] = info
        self.generation += 1
        if siblings is not None and info.kind == "publisher":
            siblings.reconsider(info.topic)
        try:
            self._meet(info)
            if info.kind == "publisher" and info.qos.transient_local:
                self._fetch_late_history(info)
        except Exception:
            _LOG.exception("checking remote endpoint %s failed", info.label)

    def _fetch_late_history(self, publisher: EndpointInfo) -> None:
        """A transient-local publisher appeared after our transient-local subscribers: fetch its
        history for them, on a short-lived thread (a Zenoh callback must not block on a query)."""
        subscription = self._subscriptions.get(publisher.topic)
        if subscription is None or not subscription.key.endswith(publisher.type_hash):
            return
        for sub in self.bus.local_subscribers(publisher.topic):
            if sub.qos.transient_local and not incompatibilities(publisher.qos, sub.qos):
                threading.Thread(
                    target=self.fetch_late_history,
                    args=(subscription, sub, publisher.zid),
                    name="jointbus-history",
                    daemon=True,
                ).start()

    def fetch_late_history(
        self, subscription: TopicSubscription, sub: Subscriber[Any], publisher_zid: str
    ) -> None:
        """The body of a late-history thread. The bus may close while its query runs (a program
        ending right after a latched publisher appeared): Zenoh then raises "session closed",
        which is the end of the job, not an error; any other failure is logged, never left to
        escape the thread unreported."""
        try:
            subscription.fetch_history(sub, publisher_zid)
        except zenoh.ZError:
            if not self._closed:
                _LOG.exception("fetching %s's history from %s failed", sub.topic, publisher_zid)

    def _meet(
        self,
        remote: EndpointInfo,
        only: tuple[Publisher[Any] | Subscriber[Any], ...] | None = None,
    ) -> None:
        """Report type mismatches and incompatible QoS between ``remote`` and local endpoints
        (``only`` these, when given: a local endpoint just added), once per endpoint pair."""
        local_type = self.bus.local_type(remote.topic)
        if local_type is None:
            return
        locals_: tuple[Publisher[Any] | Subscriber[Any], ...]
        if only is not None:
            locals_ = only
        elif remote.kind == "publisher":
            locals_ = self.bus.local_subscribers(remote.topic)
        else:
            locals_ = self.bus.local_publishers(remote.topic)
        for local in locals_:
            if not self._first_report(local.gid, remote.gid):
                continue
            local_hash = type_hash_of(local.msg_type)
            if remote.type_name != local.type_name or remote.type_hash != local_hash:
                local._emit(
                    TypeMismatchEvent(
                        local.topic,
                        local.label,
                        f"{local.type_name} ({local_hash})",
                        f"{remote.type_name} ({remote.type_hash})",
                        remote.label,
                    )
                )
                continue
            if remote.kind == "publisher":
                reasons = incompatibilities(remote.qos, local.qos)
            else:
                reasons = incompatibilities(local.qos, remote.qos)
                if isinstance(local, Publisher):
                    self._watch_route(local, remote)
            if reasons:
                self.bus._report_remote_incompatible(local, remote, reasons)

    # ---- denied publications -----------------------------------------------------------------
    # A TLS-only robot's access rules tell a role only about the subscribers it may publish to
    # (``declare_subscriber`` egress, :mod:`jointbus.bus.access_roles`): its publisher never
    # matches although the graph announces the subscriber. The robot reports the attempt on its
    # side (:mod:`jointbus.bus.access_watch`); these say so on the publishing side.
    def quiet_for_hidden(self, topics: Iterable[str]) -> None:
        """Hidden nodes' (``_`` names: command-line tools) publishers of ``topics`` — a runtime
        node's heartbeat and status, its own bookkeeping — are neither reported when the rules
        here deny them (:meth:`AccessWatch.quiet_for_hidden`) nor told when a robot's rules
        deny them: a watch-only ``node list`` or monitor is no alarm on either side."""
        with self._lock:
            self._quiet_for_hidden = self._quiet_for_hidden | frozenset(topics)
        if self.access_watch is not None:
            self.access_watch.quiet_for_hidden(topics)

    def _watch_route(self, pub: Publisher[Any], remote: EndpointInfo) -> None:
        """Check, :data:`ROUTE_SETTLE_S` from now, that Zenoh routes ``pub`` to ``remote``
        (whatever its matching status says now: a denied publisher can read matched for a moment
        after it is declared, before the robot's filtered declarations settle)."""
        if not self.secured:  # `jointbus security rules` name peers by certificate (none: no link)
            return
        if pub.node.startswith("_") and pub.topic in self._quiet_for_hidden:
            return
        self._check_route_later(pub, remote, ROUTE_SETTLE_S)

    def _check_route_later(
        self, pub: Publisher[Any], remote: EndpointInfo, waited_s: float
    ) -> None:
        timer = threading.Timer(ROUTE_SETTLE_S, self._check_route, (pub, remote, waited_s))
        timer.name = "jointbus-route-check"
        timer.daemon = True
        timer.start()

    def _check_route(self, pub: Publisher[Any], remote: EndpointInfo, waited_s: float) -> None:
        if self._closed or pub.closed or remote.gid not in self._remote:
            return
        link = pub._remote
        if link is not None and link.matched:
            return
        if link is None or pub.seq == 0:
            # Its Zenoh leg not made yet (the remote endpoint can be met while it is), or nothing
            # sent yet, so nothing lost yet (a node's heartbeat publisher on a watch-only host
            # that never starts it is no one's concern): asked again later.
            self._check_route_later(pub, remote, waited_s + ROUTE_SETTLE_S)
            return
        pub._emit(self._denial(pub, remote, waited_s))

    def _denial(
        self, pub: Publisher[Any], remote: EndpointInfo, waited_s: float
    ) -> PublicationDeniedEvent:
        return PublicationDeniedEvent(
            pub.topic, pub.label, remote.label, self.peer_certificate(remote.zid), waited_s
        )

    def publication_denied(
        self, pub: Publisher[Any], waited_s: float
    ) -> PublicationDeniedEvent | None:
        """The denial of ``pub`` now, if any: a remote subscriber of its topic, type and hash is
        announced, but Zenoh matches none (``waited_s``: how long the caller has waited for a
        match, for the text). A command-line publisher asks this once its wait is over."""
        link = pub._remote
        if link is None or link.matched:
            return None
        own = (pub.type_name, type_hash_of(pub.msg_type))
        for info in list(self._remote.values()):
            if (
                info.kind == "subscriber"
                and info.topic == pub.topic
                and (info.type_name, info.type_hash) == own
            ):
                return self._denial(pub, info, waited_s)
        return None

    def peer_certificate(self, zid: str) -> str | None:
        """The certificate common name of the link to session ``zid`` (None: no TLS link)."""
        for link in self.session.info.links():
            if str(link.zid) == zid:
                return link.auth_identifier
        return None

    def _first_report(self, local: int, remote: int) -> bool:
        """Whether the pair (``local``, ``remote``) gid has not been checked yet (and mark it).
        Checked pairs are forgotten when either endpoint goes, so a new one is checked again."""
        with self._reported_lock:
            if (local, remote) in self._reported:
                return False
            self._reported.add((local, remote))
            return True

    def _forget_reported(self, *, local: int | None = None, remote: int | None = None) -> None:
        with self._reported_lock:
            self._reported = {
                (lo, rem) for lo, rem in self._reported if lo != local and rem != remote
            }

    def joined(self) -> str:
        """How this session joined the network, in a few words for a program's first lines: the
        hub (listening on the hub port), or the hub port taken — by a Zenoh router
        (``rmw_zenohd``, ``zenohd``, ``jointbus router``), which it joined, or by another
        jointbus process, which it joined as a peer — or a router / explicit endpoints given."""
        config = self.config
        routed = self._linked_to_a_router()
        extra = f"; also connected to {', '.join(config.connect)}" if config.connect else ""
        if config.router is not None:
            return f"joined the Zenoh router at {config.router} (client mode){extra}"
        if config.listen:
            return f"listening on {', '.join(config.listen)}{extra}"
        if config.listen is not None:
            return f"listening nowhere{extra}"
        if self._attempt == 0:
            via = "; linked to a Zenoh router" if routed else ""
            return f"the hub: listening on {config.hub_endpoint}{via}{extra}"
        holder = (
            "a Zenoh router (rmw_zenohd, zenohd or jointbus router): joined it"
            if routed
            else "another jointbus process: joined it as a peer"
        )
        return (
            f"hub port {config.hub_port} is taken by {holder}, listening on an ephemeral "
            f"loopback port{extra}"
        )

    def remote_info(self, gid: int) -> EndpointInfo | None:
        """The discovery record of a remote endpoint, if its token has been seen."""
        return self._remote.get(gid)

    def known_remote_endpoints(self) -> list[EndpointInfo]:
        """The remote endpoints whose tokens this session has seen so far — no query, no wait
        (:meth:`remote_endpoints` is the settled answer); :attr:`generation` changes with it."""
        return list(self._remote.values())

    def graph(self, timeout: float = 0.5) -> list[GraphEntity]:
        """Every graph entity (nodes, endpoints, services) of other sessions in the domain.

        The union of a liveliness query and the liveliness subscriber's table, watched until it
        stops growing for ``GRAPH_SETTLE_S`` (or ``timeout`` s pass): through a router, a query
        right after a session opened sometimes came back empty or partial (1 in 4 on a loaded
        host) while the links and the subscriber's history were still arriving."""
        found: dict[str, GraphEntity] = {}
        deadline = time.monotonic() + timeout
        for reply in self.session.liveliness().get(graph_selector(self.domain_id), timeout=timeout):
            sample = reply.ok
            if sample is None:
                continue
            key = str(sample.key_expr)
            entity = self._parse_entity(key)
            if entity is not None and entity.zid != self.zid:
                found[key] = entity
        size, stable_since = -1, time.monotonic()
        while True:
            found.update(dict(self._graph))
            now = time.monotonic()
            if len(found) != size:
                size, stable_since = len(found), now
            elif now - stable_since >= GRAPH_SETTLE_S or now >= deadline:
                return list(found.values())
            time.sleep(0.01)

    def remote_endpoints(self, timeout: float = 0.5) -> list[EndpointInfo]:
        """Every publisher and subscriber of other sessions; waits up to ``timeout`` s."""
        return [EndpointInfo.from_entity(e) for e in self.graph(timeout) if e.kind in ("MP", "MS")]

    def tap(
        self,
        topic: str,
        on_sample: Callable[[int | None], None],
        resolve: Callable[[str], type[Message] | None] = lambda _name: None,
    ) -> zenoh.Subscriber[None]:
        """Call ``on_sample(publisher GID)`` for every sample of ``topic`` whatever its type,
        never decoded (``None`` for a sample without rmw_zenoh's attachment); ``undeclare()``
        the returned subscriber to stop. ``resolve`` is not needed on Zenoh (keys name types)."""
        del resolve

        def on_zenoh_sample(sample: zenoh.Sample) -> None:
            raw = None if sample.attachment is None else sample.attachment.to_bytes()
            att = attachment.unpack(raw)
            on_sample(None if att is None else att.gid)

        return self.session.declare_subscriber(
            topic_selector(self.domain_id, topic), on_zenoh_sample
        )

    def tap_payloads(
        self,
        topic: str,
        on_sample: Callable[[int | None, bytes], None],
        resolve: Callable[[str], type[Message] | None] = lambda _name: None,
    ) -> zenoh.Subscriber[None]:
        """As :meth:`tap`, with each sample's CDR bytes as received (never decoded): what
        ``topic hz`` reads a header stamp from."""
        del resolve

        def on_zenoh_sample(sample: zenoh.Sample) -> None:
            raw = None if sample.attachment is None else sample.attachment.to_bytes()
            att = attachment.unpack(raw)
            on_sample(None if att is None else att.gid, sample.payload.to_bytes())

        return self.session.declare_subscriber(
            topic_selector(self.domain_id, topic), on_zenoh_sample
        )

    # ---- services (jointbus.bus.service_zenoh) ------------------------------------------------
    def link_service(self, server: ServiceServer[Any, Any]) -> ServiceLink:
        """Offer a local server: its queryable and ``SS`` token."""
        from jointbus.bus.service_zenoh import ServiceLink

        return ServiceLink(self, server)

    def client_link(
        self,
        name: str,
        request_type: type[Message],
        response_type: type[Message],
        service_type: str,
    ) -> ClientLink:
        """This bus's client of one service: its ``SC`` token, GID and sequence numbers."""
        from jointbus.bus.service_zenoh import ClientLink

        return ClientLink(self, name, request_type, response_type, service_type)

    def call_service(
        self,
        link: ClientLink,
        client: ServiceClient[Any, RespT],
        request: Message,
        timeout_s: float,
    ) -> RespT:
        """One call over Zenoh (:func:`jointbus.bus.service_zenoh.call_remote`)."""
        from jointbus.bus.service_zenoh import call_remote

        return call_remote(self, link, client, request, timeout_s)

    def remote_services(self, timeout_s: float = 0.5) -> list[ServiceInfo]:
        """Servers of other sessions in the domain."""
        from jointbus.bus.service_zenoh import remote_services

        return remote_services(self, timeout_s)

    @property
    def where(self) -> str:
        """Where this bus looks for the others (``hub port 7447, domain 0``, ...)."""
        return self.config.where

    # ---- lifecycle -----------------------------------------------------------------------------
    def close(self) -> None:
        """Undeclare everything and close the session. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            links = list(self._links.values())
            tokens = list(self._tokens.values()) + [n[1] for n in self._nodes.values()]
            self._nodes.clear()
            self._endpoint_nodes.clear()
            subscriptions = list(self._subscriptions.values())
            self._links.clear()
            self._tokens.clear()
            self._subscriptions.clear()
            siblings = self.siblings
        if siblings is not None:
            siblings.close()
        if self.hub_relay is not None:
            self.hub_relay.close()
        for link in links:
            link.close()
        for subscription in subscriptions:
            subscription.close()
        for token in tokens:
            _undeclare(token)
        _undeclare(self._liveliness)
        if self.access_watch is not None:
            self.access_watch.close()
        cast(Any, self.session).close()


__all__ = [
    "CONNECT_WAIT_S",
    "GRAPH_SETTLE_S",
    "HISTORY_QUERY_TIMEOUT_S",
    "MISS_DETECTION_HEARTBEAT_S",
    "PublisherLink",
    "TopicSubscription",
    "ZenohTransport",
    "history_selector",
    "open_session",
    "type_hash_of",
]
