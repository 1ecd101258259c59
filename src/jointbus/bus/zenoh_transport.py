"""The Zenoh transport: the same topics across processes and machines.

Where it sits: :mod:`jointbus.bus`, attached to one :class:`jointbus.bus.Bus`
(``Bus(zenoh=ZenohConfig())`` / :meth:`jointbus.bus.Bus.attach_zenoh`). It never changes how local
delivery works; it adds a remote leg to each local publisher and a remote source to each topic with
local subscribers.

- **Keys**: topic ``/a/b`` ↔ data key ``jb/a/b`` (:mod:`jointbus.bus.names`).
- **Publishing**: each local publisher gets a Zenoh publisher (``allowed_destination=REMOTE``: our
  own process is served in-process, never through Zenoh) and a matching listener. ``publish``
  encodes to CDR and puts only while Zenoh reports a matching remote subscriber, so an unobserved
  robot pays nothing for Zenoh. Reliable topics use Zenoh's reliable channel with congestion
  control *block*; best-effort ones *drop* under congestion.
- **Payload**: CDR exactly as ROS 2 sends it; the 36-byte attachment
  (:mod:`jointbus.bus.attachment`) carries gid, sequence number and source times.
- **Receiving**: one Zenoh subscriber per topic with local subscribers
  (``allowed_origin=REMOTE``, so no loop-back of our own messages). A sample is decoded once with
  the topic's message class and the same object is offered to every compatible local subscriber.
  An undecodable payload is counted and reported (:class:`MalformedPayloadEvent`) and dropped; the
  subscription keeps running. Gaps in a publisher's sequence numbers are counted (``lost``) and
  reported; latency is measured from the source wall time. Realtime subscribers
  (``realtime=True``) are called right on Zenoh's receive thread, with no thread hop (a hop costs
  ≈ 50 µs on a VM that halts idle vCPUs): such a callback must be quick and must not block, or it
  delays every later sample of every topic of the session. Ordinary callbacks stay off Zenoh's
  threads: the message is queued and their dispatcher runs them.
- **Discovery**: each endpoint announces a liveliness token (:mod:`jointbus.bus.discovery`) with
  its type and QoS. A liveliness subscriber keeps the table of remote endpoints, which is used to
  report incompatible QoS and type mismatches when endpoints meet across processes, and to filter
  samples from incompatible or mistyped publishers (no messages flow between them, as in ROS 2).
- **Durability**: a transient-local publisher declares a queryable at
  ``@jointbus/hist/<topic tokens>/<gid>`` that answers with its history; a transient-local
  subscriber queries ``@jointbus/hist/<topic tokens>/*`` when it joins.

Callbacks from Zenoh run on Zenoh's threads; they never take the bus lock.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from typing import TYPE_CHECKING, Any, cast

import zenoh

from jointbus.bus import attachment
from jointbus.bus.discovery import ENDPOINT_WILDCARD, EndpointInfo
from jointbus.bus.errors import BusError, ZenohConfigError
from jointbus.bus.events import TypeMismatchEvent
from jointbus.bus.names import META_PREFIX, topic_to_key
from jointbus.bus.publisher import Publisher
from jointbus.bus.qos import incompatibilities
from jointbus.bus.subscriber import Subscriber
from jointbus.bus.zenoh_config import ZenohConfig
from jointbus.messages.base import Message

if TYPE_CHECKING:
    from jointbus.bus.bus import Bus

_LOG = logging.getLogger("jointbus.bus.zenoh")

#: How long a joining transient-local subscriber waits for history replies (s).
HISTORY_QUERY_TIMEOUT_S = 1.0


def history_key(topic: str, gid: int | None) -> str:
    """Key of a transient-local publisher's history queryable (``gid=None``: the wildcard)."""
    return f"{META_PREFIX}/hist{topic}/" + ("*" if gid is None else f"{gid:016x}")


def open_session(config: ZenohConfig) -> zenoh.Session:
    """Open a Zenoh session following ``config``'s attempts; raises ZenohConfigError."""
    attempts = config.attempts()
    last_error: Exception | None = None
    for listen, connect in attempts:
        zconfig = zenoh.Config()
        try:
            for key, value in config.json5_items(listen, connect):
                zconfig.insert_json5(key, value)
        except zenoh.ZError as exc:
            raise ZenohConfigError(f"Zenoh rejected the configuration: {exc}") from exc
        try:
            return zenoh.open(zconfig)
        except zenoh.ZError as exc:
            last_error = exc
            _LOG.debug("zenoh open with listen=%s connect=%s failed: %s", listen, connect, exc)
    raise ZenohConfigError(f"could not open a Zenoh session with {config}: {last_error}")


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


def _publisher_label(remote: EndpointInfo | None, att: attachment.Attachment | None) -> str:
    """How events name the sender of a sample."""
    if remote is not None:
        return remote.label
    if att is not None:
        return f"gid {att.gid:016x}"
    return "unknown (no jointbus attachment)"


class PublisherLink:
    """The remote leg of one local publisher (a :class:`jointbus.bus.publisher.RemoteLink`)."""

    def __init__(self, transport: ZenohTransport, pub: Publisher[Any]) -> None:
        session = transport.session
        self._pub = pub
        self._gid = pub.gid
        self._zpub = session.declare_publisher(
            topic_to_key(pub.topic),
            allowed_destination=zenoh.Locality.REMOTE,
            **_qos_args(pub.qos.reliable),
        )
        self._put = self._zpub.put  # bound once: ``send`` is on the publish hot path
        self.matched: bool = _matching(self._zpub.matching_status)
        self._listener = self._zpub.declare_matching_listener(self._on_matching)
        self._queryable: zenoh.Queryable[None] | None = None
        if pub.qos.transient_local:
            self._queryable = session.declare_queryable(
                history_key(pub.topic, pub.gid),
                self._on_query,
                allowed_origin=zenoh.Locality.REMOTE,
            )
        # Announced last: whoever discovers the token can already query the history.
        self._token = session.liveliness().declare_token(transport.info_of(pub).to_token_key())

    def _on_matching(self, status: zenoh.MatchingStatus) -> None:
        self.matched = _matching(status)
        _LOG.debug(
            "%s on %s: remote subscribers %s", self._pub.label, self._pub.topic, self.matched
        )

    def send(self, msg: Message, seq: int, mono_ns: int) -> None:
        """Encode and put one message (called by ``publish`` while matched)."""
        self._put(msg.to_cdr(), attachment=attachment.pack(self._gid, seq, mono_ns, time.time_ns()))

    def _on_query(self, query: zenoh.Query) -> None:
        try:
            now_mono, now_wall = time.monotonic_ns(), time.time_ns()
            key = history_key(self._pub.topic, self._gid)
            for msg, born, seq in self._pub.history:
                wall = now_wall - (now_mono - born)
                query.reply(
                    key, msg.to_cdr(), attachment=attachment.pack(self._gid, seq, born, wall)
                )
        except Exception:
            _LOG.exception("answering a history query on %s failed", self._pub.topic)

    def close(self) -> None:
        """Undeclare everything (no error if the session is already closed)."""
        for entity in (self._queryable, self._token, self._listener, self._zpub):
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
        self._last_seq: dict[int, int] = {}
        # For transient-local subscribers: first live sequence number per (subscriber, publisher),
        # and the publishers whose history a subscriber already received (no duplicates).
        self._first_live: dict[tuple[int, int], int] = {}
        self._history_done: set[tuple[int, int]] = set()
        self._history_last: dict[tuple[int, int], int] = {}
        self._history_lock = threading.Lock()
        #: QoS compatibility of (remote publisher gid, local subscriber gid); neither QoS changes.
        self._compat: dict[tuple[int, int], bool] = {}
        #: Per remote publisher gid: (local subscribers, its discovery record, the compatible
        #: subscribers with their transient-local flag): the live path's delivery list, rebuilt
        #: when either of the first two changes (the bus replaces its subscriber tuple on every
        #: change; discovery records are immutable and replaced when re-announced).
        self._plans: dict[
            int,
            tuple[
                tuple[Subscriber[Any], ...],
                EndpointInfo | None,
                tuple[tuple[Subscriber[Any], bool], ...],
            ],
        ] = {}
        #: Samples received and undecodable payloads, whatever the local subscribers (diagnostics).
        self.samples = 0
        self.malformed = 0
        self._zsub = transport.session.declare_subscriber(
            topic_to_key(topic), self._on_sample, allowed_origin=zenoh.Locality.REMOTE
        )

    def _on_sample(self, sample: zenoh.Sample) -> None:
        # Runs on Zenoh's receive thread. Realtime subscribers are called right here (no thread
        # hop: on this VM a hop costs ≈ 50 µs); ordinary ones get the message queued for their
        # dispatcher. Clocks are read first so latency covers the whole receive path. This is the
        # live path of ``_receive``, kept lean (it runs for every sample at up to kHz rates).
        now_wall = time.time_ns()
        now_mono = time.monotonic_ns()
        try:
            raw_attachment = sample.attachment
            raw = None if raw_attachment is None else raw_attachment.to_bytes()
            if raw is None or len(raw) != attachment.SIZE or raw[:4] != attachment.MAGIC:
                self._receive(sample.payload.to_bytes(), raw, None, now_mono, now_wall)
                return
            self.samples += 1
            subs = self._bus.local_subscribers(self.topic)
            if not subs:
                return
            gid, seq, _source_mono, source_wall = attachment.FIELDS.unpack_from(raw, 4)
            remote = self._transport.remote_info(gid)
            if remote is not None and remote.type_name != self._type_name:
                return  # reported once as a TypeMismatchEvent when the endpoint was discovered
            # Sequence numbers count what arrived, decodable or not: a malformed sample is
            # counted as malformed, never also as lost (issue 11 item 9).
            last = self._last_seq.get(gid)
            if last is not None and seq > last + 1:
                publisher = _publisher_label(remote, attachment.unpack(raw))
                for sub in subs:
                    sub._note_lost(seq - last - 1, publisher)
            self._last_seq[gid] = seq
            payload = sample.payload.to_bytes()
            try:
                msg = self.msg_type.from_cdr(payload)
            except Exception as exc:
                self._report_malformed(subs, remote, gid, len(payload), exc)
                return
            latency = now_wall - source_wall
            born = now_mono - latency if latency > 0 else now_mono
            plan = self._plans.get(gid)
            if plan is None or plan[0] is not subs or plan[1] is not remote:
                plan = self._plans[gid] = (subs, remote, self._delivery_plan(subs, remote))
            for sub, transient_local in plan[2]:
                sub._note_latency(latency)
                if transient_local:
                    pair = (sub.gid, gid)
                    if seq <= self._history_last.get(pair, 0):
                        continue  # already delivered from the publisher's history
                    self._first_live.setdefault(pair, seq)
                sub.offer(msg, born, now_mono)
        except Exception:  # never let one sample kill Zenoh's callback thread
            _LOG.exception("receiving a sample on %s failed", self.topic)

    def _delivery_plan(
        self, subs: tuple[Subscriber[Any], ...], remote: EndpointInfo | None
    ) -> tuple[tuple[Subscriber[Any], bool], ...]:
        """The subscribers of ``subs`` compatible with ``remote``, each with its transient-local
        flag: computed once per (subscriber set, publisher), not per sample."""
        return tuple(
            (sub, sub.qos.transient_local)
            for sub in subs
            if remote is None or self._compatible(remote, sub)
        )

    def _report_malformed(
        self,
        subs: tuple[Subscriber[Any], ...],
        remote: EndpointInfo | None,
        gid: int | None,
        size: int,
        exc: Exception,
    ) -> None:
        self.malformed += 1
        if remote is not None:
            publisher = remote.label
        elif gid is not None:
            publisher = f"gid {gid:016x}"
        else:
            publisher = "unknown (no jointbus attachment)"
        for sub in subs:
            sub._note_malformed(publisher, size, str(exc))

    def _receive(
        self,
        payload: bytes,
        raw_attachment: bytes | None,
        history_for: Subscriber[Any] | None,
        now_mono: int,
        now_wall: int,
    ) -> None:
        self.samples += 1
        subs = (
            (history_for,) if history_for is not None else self._bus.local_subscribers(self.topic)
        )
        if not subs:
            return
        att = attachment.unpack(raw_attachment)
        remote = None
        if att is not None:
            remote = self._transport.remote_info(att.gid)
            if remote is not None and remote.type_name != self._type_name:
                return  # reported once as a TypeMismatchEvent when the endpoint was discovered
            if history_for is not None:
                first_live = self._first_live.get((history_for.gid, att.gid))
                if first_live is not None and att.seq >= first_live:
                    return  # already delivered live
        if att is not None and history_for is None:
            # Count the sequence number before decoding: malformed is not lost (issue 11 item 9).
            last = self._last_seq.get(att.gid)
            if last is not None and att.seq > last + 1:
                publisher = _publisher_label(remote, att)
                for sub in subs:
                    sub._note_lost(att.seq - last - 1, publisher)
            self._last_seq[att.gid] = att.seq
        try:
            msg = self.msg_type.from_cdr(payload)
        except Exception as exc:
            self._report_malformed(
                subs, remote, None if att is None else att.gid, len(payload), exc
            )
            return
        if att is None:
            for sub in subs:
                sub.offer(msg, now_mono, now_mono)
            return
        latency = now_wall - att.source_wall_ns
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
        for sub in subs:
            if remote is not None and not self._compatible(remote, sub):
                continue
            sub._note_latency(latency)
            if sub.qos.transient_local:
                pair = (sub.gid, gid)
                if seq <= self._history_last.get(pair, 0):
                    continue  # already delivered from the publisher's history
                self._first_live.setdefault(pair, seq)
            sub.offer(msg, born, now_mono)

    def _compatible(self, remote: EndpointInfo, sub: Subscriber[Any]) -> bool:
        key = (remote.gid, sub.gid)
        known = self._compat.get(key)
        if known is None:
            known = self._compat[key] = not incompatibilities(remote.qos, sub.qos)
        return known

    def fetch_history(self, sub: Subscriber[Any], publisher_gid: int | None = None) -> None:
        """Deliver transient-local publishers' history to a transient-local subscriber.

        Called when the subscriber joins (all publishers) and when a transient-local publisher is
        discovered later (that one only). Each publisher's history reaches a subscriber once, and
        only the part older than the first message the subscriber received from it live; it may
        therefore arrive after a few live messages when both race.
        """
        replies = list(
            self._transport.session.get(
                history_key(self.topic, publisher_gid),
                target=zenoh.QueryTarget.ALL,
                # Every history entry is a reply on the same key: keep them all, in order.
                consolidation=zenoh.ConsolidationMode.NONE,
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
        _undeclare(self._zsub)


class ZenohTransport:
    """A bus's Zenoh session, publisher links, topic subscriptions and discovery table."""

    def __init__(self, bus: Bus, config: ZenohConfig) -> None:
        self.bus = bus
        self.config = config
        self.session = open_session(config)
        self.zid = str(self.session.zid())
        self._lock = threading.Lock()
        self._closed = False
        self._links: dict[int, PublisherLink] = {}
        self._tokens: dict[int, zenoh.LivelinessToken] = {}
        self._subscriptions: dict[str, TopicSubscription] = {}
        self._remote: dict[int, EndpointInfo] = {}
        self._liveliness = self.session.liveliness().declare_subscriber(
            ENDPOINT_WILDCARD, self._on_token, history=True
        )

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
        )

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
                self._meet(info)

    def publisher_removed(self, pub: Publisher[Any]) -> None:
        """Withdraw a closed local publisher."""
        with self._lock:
            link = self._links.pop(pub.gid, None)
        pub._remote = None
        if link is not None:
            link.close()

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
            self._tokens[sub.gid] = self.session.liveliness().declare_token(
                self.info_of(sub).to_token_key()
            )
        if sub.qos.transient_local:
            subscription.fetch_history(sub)
        for info in list(self._remote.values()):
            if info.topic == sub.topic and info.kind == "publisher":
                self._meet(info)

    def subscriber_removed(self, sub: Subscriber[Any]) -> None:
        """Withdraw a closed local subscriber (and, with the last one, the Zenoh subscriber)."""
        with self._lock:
            token = self._tokens.pop(sub.gid, None)
            current = self._subscriptions.get(sub.topic)
            if current is not None:
                current.forget(sub)
            subscription = None
            if not self.bus.local_subscribers(sub.topic):
                subscription = self._subscriptions.pop(sub.topic, None)
        if token is not None:
            _undeclare(token)
        if subscription is not None:
            subscription.close()

    def subscription(self, topic: str) -> TopicSubscription | None:
        """The Zenoh subscription feeding ``topic``'s local subscribers, if any (diagnostics)."""
        return self._subscriptions.get(topic)

    # ---- discovery -----------------------------------------------------------------------------
    def _on_token(self, sample: zenoh.Sample) -> None:
        try:
            info = EndpointInfo.from_token_key(str(sample.key_expr))
        except BusError as exc:
            _LOG.debug("ignoring liveliness token: %s", exc)
            return
        if info.zid == self.zid:
            return
        if sample.kind == zenoh.SampleKind.DELETE:
            self._remote.pop(info.gid, None)
            return
        self._remote[info.gid] = info
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
        if subscription is None or publisher.type_name != subscription.msg_type.TYPE_NAME:
            return
        for sub in self.bus.local_subscribers(publisher.topic):
            if sub.qos.transient_local and not incompatibilities(publisher.qos, sub.qos):
                threading.Thread(
                    target=subscription.fetch_history,
                    args=(sub, publisher.gid),
                    name="jointbus-history",
                    daemon=True,
                ).start()

    def _meet(self, remote: EndpointInfo) -> None:
        """Report type mismatches and incompatible QoS between ``remote`` and local endpoints."""
        local_type = self.bus.local_type(remote.topic)
        if local_type is None:
            return
        locals_: tuple[Publisher[Any] | Subscriber[Any], ...]
        if remote.kind == "publisher":
            locals_ = self.bus.local_subscribers(remote.topic)
        else:
            locals_ = self.bus.local_publishers(remote.topic)
        for local in locals_:
            if remote.type_name != local.type_name:
                local._emit(
                    TypeMismatchEvent(
                        local.topic, local.label, local.type_name, remote.type_name, remote.label
                    )
                )
                continue
            if remote.kind == "publisher":
                reasons = incompatibilities(remote.qos, local.qos)
            else:
                reasons = incompatibilities(local.qos, remote.qos)
            if reasons:
                self.bus._report_remote_incompatible(local, remote, reasons)

    def remote_info(self, gid: int) -> EndpointInfo | None:
        """The discovery record of a remote endpoint, if its token has been seen."""
        return self._remote.get(gid)

    def remote_endpoints(self, timeout: float = 0.5) -> list[EndpointInfo]:
        """Every endpoint token of other sessions; waits up to ``timeout`` s for answers."""
        out: list[EndpointInfo] = []
        for reply in self.session.liveliness().get(ENDPOINT_WILDCARD, timeout=timeout):
            sample = reply.ok
            if sample is None:
                continue
            try:
                info = EndpointInfo.from_token_key(str(sample.key_expr))
            except BusError:
                continue
            if info.zid != self.zid:
                out.append(info)
        return out

    # ---- lifecycle -----------------------------------------------------------------------------
    def close(self) -> None:
        """Undeclare everything and close the session. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            links = list(self._links.values())
            tokens = list(self._tokens.values())
            subscriptions = list(self._subscriptions.values())
            self._links.clear()
            self._tokens.clear()
            self._subscriptions.clear()
        for link in links:
            link.close()
        for subscription in subscriptions:
            subscription.close()
        for token in tokens:
            _undeclare(token)
        _undeclare(self._liveliness)
        cast(Any, self.session).close()


__all__ = [
    "HISTORY_QUERY_TIMEOUT_S",
    "PublisherLink",
    "TopicSubscription",
    "ZenohTransport",
    "history_key",
    "open_session",
]
