"""The bus: one per process, holding the topic table, dispatchers, the deadline timer and Zenoh.

Where it sits: the top of :mod:`jointbus.bus`; the runtime's ``Node`` sits on it. Pass the bus
around explicitly (``Node(name, bus)``); :func:`default_bus` is a convenience for scripts.

Inside the process a message goes publisher → subscriber as an object, never serialised (see
:mod:`jointbus.bus.publisher` and :mod:`jointbus.bus.subscriber`). With Zenoh attached
(``Bus(zenoh=ZenohConfig())`` or :meth:`Bus.attach_zenoh`) the same topics are offered to other
processes and machines: local publishes reach remote subscribers (encoded only while one matches)
and remote publications reach local subscribers, through the same queues and callbacks.

The middleware is chosen as ROS 2 users choose it (:mod:`jointbus.bus.rmw`): a bus asked for a
network (``Bus(zenoh=ZenohConfig(...))``) speaks Zenoh unless ``RMW_IMPLEMENTATION`` (or the
``rmw`` argument) names a DDS one — ``rmw_cyclonedds_cpp``, ``rmw_fastrtps_cpp`` — and then joins
the same ROS domain on DDS instead (:mod:`jointbus.bus.dds_transport`, settings from
:class:`~jointbus.bus.dds_config.DdsConfig`; ``Bus(dds=DdsConfig(...))`` asks for DDS outright).
Either transport offers the same seams (:attr:`Bus.transport`); a bus without a network stays in
process whatever the variable says.

Threads: one default dispatcher (ordinary callbacks), more on request (:meth:`Bus.dispatcher`), a
deadline timer started by the first endpoint with a deadline, and Zenoh's own threads.

QoS events (missed deadlines, incompatible QoS, lost and malformed messages, type mismatches) go to
the endpoint's ``on_event`` callback and to every hook registered with :meth:`Bus.on_qos_event`;
the runtime publishes them on the status topic. An event of an endpoint without ``on_event`` is
also logged (``jointbus.bus``, WARNING; lost messages and missed deadlines at DEBUG).

Services (request/reply, :mod:`jointbus.bus.service`) sit beside the topics: :meth:`Bus.serve`
and :meth:`Bus.client` are the request/reply counterparts of :meth:`Bus.publisher` and
:meth:`Bus.subscribe`, in process and, with Zenoh, across processes.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from jointbus.bus.clock import SYSTEM_CLOCK, Clock
from jointbus.bus.deadline import DeadlineTimer
from jointbus.bus.discovery import EndpointInfo, TopicInfo, group_topics
from jointbus.bus.dispatcher import Dispatcher
from jointbus.bus.endpoint import Endpoint, EventCallback, MsgT
from jointbus.bus.errors import BusClosedError, BusError, DdsConfigError, QosError, TopicTypeError
from jointbus.bus.events import (
    DeadlineMissedEvent,
    EndpointKind,
    MessagesLostEvent,
    QosEvent,
    QosIncompatibleEvent,
)
from jointbus.bus.names import ros_namespace, validate_topic_name
from jointbus.bus.publisher import Publisher
from jointbus.bus.qos import RELIABLE, SUBSCRIPTION_DEFAULT, QosProfile, incompatibilities, profile
from jointbus.bus.service import (
    DEFAULT_CALL_TIMEOUT_S,
    DecodeErrorText,
    RefusalHook,
    ReqT,
    RespT,
    ServiceClient,
    ServiceHandler,
    ServiceInfo,
    ServiceServer,
    ServiceTable,
)
from jointbus.bus.subscriber import Subscriber
from jointbus.bus.topic import Topic
from jointbus.messages.base import Message

if TYPE_CHECKING:
    from jointbus.bus.dds_config import DdsConfig
    from jointbus.bus.dds_transport import DdsTransport
    from jointbus.bus.zenoh_config import ZenohConfig
    from jointbus.bus.zenoh_transport import ZenohTransport

    #: The network leg of a bus: Zenoh's or DDS's (the same seams).
    Transport = ZenohTransport | DdsTransport

_LOG = logging.getLogger("jointbus.bus")
_T = TypeVar("_T")


def _resolve_qos(qos: QosProfile | str) -> QosProfile:
    if isinstance(qos, QosProfile):
        return qos
    if isinstance(qos, str):
        return profile(qos)
    raise QosError("profile", qos, "a QosProfile or a profile name (MAB_RT, RELIABLE, LATCHED)")


def _check_msg_type(topic: str, msg_type: object, context: str) -> None:
    if not (
        isinstance(msg_type, type)
        and issubclass(msg_type, Message)
        and isinstance(getattr(msg_type, "TYPE_NAME", None), str)
    ):
        raise TopicTypeError(
            topic, "a jointbus Message class with a TYPE_NAME", repr(msg_type), context
        )


class Bus:
    """Topics, publishers and subscribers of one process; optionally bridged to Zenoh."""

    def __init__(
        self,
        *,
        zenoh: ZenohConfig | None = None,
        name: str = "jointbus",
        clock: Clock = SYSTEM_CLOCK,
        dds: DdsConfig | None = None,
        rmw: str | None = None,
    ) -> None:
        """``clock``: what deadlines, lifespans and birth times are measured on (default the
        host's monotonic clock); a :class:`~jointbus.bus.clock.ManualClock` makes QoS time move only
        when told, for tests and stepped simulation, and keeps the bus in-process (Zenoh peers stamp
        their messages on the host clock).

        ``zenoh`` asks for a network: Zenoh with those settings, or DDS in the same ROS domain when
        the middleware (``rmw``, else ``RMW_IMPLEMENTATION``; :mod:`jointbus.bus.rmw`) is a DDS
        one. ``dds`` asks for DDS with those settings whatever the middleware variable says.
        ``rmw`` alone asks for a network too, on that middleware with its default settings (a
        user's trial, 2026-12-06: ``Bus(rmw="rmw_fastrtps_cpp")`` stayed in process, and its
        subscriber waited for a robot it could never hear). Raises BusError for a middleware
        jointbus does not speak."""
        self.name = name
        self.clock = clock
        self._lock = threading.RLock()
        self._topics: dict[str, Topic] = {}
        self._hooks: tuple[EventCallback, ...] = ()
        self._closed = False
        self._default_dispatcher = Dispatcher(f"{name}-dispatch")
        self._dispatchers: list[Dispatcher] = [self._default_dispatcher]
        self._deadlines = DeadlineTimer(clock)
        self._transport: Transport | None = None
        self._services = ServiceTable(self)
        if zenoh is None and dds is None and rmw is None:
            return
        try:
            self.attach(zenoh, dds=dds, rmw=rmw)
        except BaseException:
            self.close()  # no thread left behind by a bus that failed to start
            raise

    # ---- endpoints ---------------------------------------------------------------------------
    def publisher(
        self,
        topic: str,
        msg_type: type[MsgT],
        qos: QosProfile | str = RELIABLE,
        *,
        node: str = "",
        namespace: str = "",
        on_event: EventCallback | None = None,
    ) -> Publisher[MsgT]:
        """A publisher of ``msg_type`` on ``topic``, owned by ``node`` in ``namespace`` (the ROS 2
        graph shows it as ``/<namespace>/<node>``; ``""`` is the root namespace).

        Raises TopicNameError, QosError, or TopicTypeError if the topic already has another type.
        """
        validate_topic_name(topic)
        ros_namespace(namespace)  # TopicNameError before anything is created
        _check_msg_type(topic, msg_type, "publisher")
        resolved = _resolve_qos(qos)
        with self._lock:
            self._check_open()
            entry = self._entry(topic, msg_type, "publisher")
            pub: Publisher[MsgT] = Publisher(
                topic,
                msg_type,
                resolved,
                node=node,
                on_event=on_event,
                emit=self._emit,
                clock=self.clock,
                on_close=self._remove_publisher,
                namespace=namespace,
            )
            entry.publishers = (*entry.publishers, pub)
            entry.rewire()
            peers = entry.subscribers
        for sub in peers:
            self._meet(pub, sub)
        if resolved.deadline is not None:
            self._deadlines.add(pub)
        transport = self._transport
        if transport is not None:
            transport.publisher_added(pub)
        return pub

    def subscribe(
        self,
        topic: str,
        msg_type: type[MsgT],
        callback: Callable[[MsgT], object] | None = None,
        qos: QosProfile | str = SUBSCRIPTION_DEFAULT,
        *,
        realtime: bool = False,
        node: str = "",
        namespace: str = "",
        on_event: EventCallback | None = None,
        dispatcher: Dispatcher | None = None,
    ) -> Subscriber[MsgT]:
        """Subscribe to ``topic`` (as ``node`` in ``namespace``, see :meth:`publisher`).

        ``callback`` runs on ``dispatcher`` (default: the bus's) — or synchronously in the
        publisher's thread when ``realtime`` — and is ``None`` for a polling subscriber
        (:meth:`Subscriber.take` / :meth:`Subscriber.latest`). A transient-local subscriber first
        receives the history of transient-local publishers already present.

        Without ``qos`` the subscription is :data:`~jointbus.bus.qos.SUBSCRIPTION_DEFAULT` (best
        effort, depth 10): it receives from best-effort publishers (the 500 Hz ``MAB_RT`` topics)
        as well as reliable ones, as ROS 2's sensor-data profile does; a RELIABLE subscription
        receives nothing from a best-effort publisher (an incompatible pair, reported once).
        """
        validate_topic_name(topic)
        ros_namespace(namespace)  # TopicNameError before anything is created
        _check_msg_type(topic, msg_type, "subscribe")
        resolved = _resolve_qos(qos)
        if dispatcher is not None and dispatcher.closed:
            raise BusClosedError(f"dispatcher {dispatcher.name!r} is closed")
        with self._lock:
            self._check_open()
            entry = self._entry(topic, msg_type, "subscribe")
            sub: Subscriber[MsgT] = Subscriber(
                topic,
                msg_type,
                callback,
                resolved,
                realtime=realtime,
                node=node,
                on_event=on_event,
                emit=self._emit,
                clock=self.clock,
                dispatcher=(dispatcher or self._default_dispatcher) if callback else None,
                on_close=self._remove_subscriber,
                namespace=namespace,
            )
            peers = entry.publishers
            if resolved.transient_local:
                # Replay under the lock, before live delivery starts, so history comes first.
                now = self.clock.monotonic_ns()
                for pub in peers:
                    if not incompatibilities(pub.qos, resolved):
                        for msg, born, _seq in pub.history:
                            sub.offer(msg, born, now)
            entry.subscribers = (*entry.subscribers, sub)
            entry.rewire()
        for pub in peers:
            self._meet(pub, sub)
        if resolved.deadline is not None:
            self._deadlines.add(sub)
        transport = self._transport
        if transport is not None:
            transport.subscriber_added(sub)
        return sub

    def dispatcher(
        self,
        name: str,
        on_start: Callable[[], object] | None = None,
        *,
        on_sibling_links: bool = False,
    ) -> Dispatcher:
        """A new callback thread owned (and closed) by this bus, e.g. one per node; ``on_start``
        runs first on that thread (see :class:`~jointbus.bus.dispatcher.Dispatcher`).
        ``on_sibling_links``: the callbacks run on this process's same-host links' thread instead
        (:meth:`jointbus.bus.sibling_link.SiblingLinks.dispatcher`) where it has them, else on a
        thread of their own as without it."""
        with self._lock:
            self._check_open()
            zenoh = self.zenoh if on_sibling_links else None
            links = zenoh.siblings if zenoh is not None else None
            created = (
                links.dispatcher(name, on_start)
                if links is not None and not links.closed
                else Dispatcher(name, on_start)
            )
            self._dispatchers.append(created)
            return created

    # ---- services ----------------------------------------------------------------------------
    def serve(
        self,
        name: str,
        request_type: type[ReqT],
        response_type: type[RespT],
        handler: ServiceHandler[ReqT, RespT],
        *,
        node: str = "",
        namespace: str = "",
        on_refused: RefusalHook | None = None,
        service_type: str | None = None,
        decode_error_text: DecodeErrorText = str,
    ) -> ServiceServer[ReqT, RespT]:
        """Answer requests to service ``name`` with ``handler`` (see :mod:`jointbus.bus.service`),
        as ``node`` in ``namespace`` (see :meth:`publisher`).

        ``on_refused(name, reason)`` is called for every refused request;
        ``decode_error_text(exc)`` writes the reason of a request that could not be decoded
        (default ``str``). ``service_type`` (e.g.
        ``example_interfaces/srv/AddTwoInts``) offers it to ROS 2 under that type instead of the
        pair's composed ``jointbus_msgs/srv/...`` (:mod:`jointbus.bus.service_types`). Raises
        TopicNameError, TopicTypeError, BusError (a malformed ``service_type``), or ServiceError if
        this bus already serves ``name``.
        """
        return self._services.serve(
            name,
            request_type,
            response_type,
            handler,
            node=node,
            namespace=namespace,
            on_refused=on_refused,
            service_type=service_type,
            decode_error_text=decode_error_text,
        )

    def client(
        self,
        name: str,
        request_type: type[ReqT],
        response_type: type[RespT],
        *,
        timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
        service_type: str | None = None,
    ) -> ServiceClient[ReqT, RespT]:
        """A client of service ``name``; :meth:`ServiceClient.call` waits at most ``timeout_s``.

        ``service_type`` calls a ROS 2 service of that type (e.g.
        ``example_interfaces/srv/AddTwoInts``) whose request and response have the fields of the
        two messages; by default the pair's composed type (:mod:`jointbus.bus.service_types`)."""
        return self._services.client(name, request_type, response_type, timeout_s, service_type)

    def services(self, timeout_s: float = 0.5) -> list[ServiceInfo]:
        """Servers of this bus and, with Zenoh attached, of every reachable bus."""
        return self._services.services(timeout_s)

    # ---- events ------------------------------------------------------------------------------
    def on_qos_event(self, hook: EventCallback) -> Callable[[], None]:
        """Call ``hook(event)`` for every QoS event of this bus; returns a remover function."""
        with self._lock:
            self._hooks = (*self._hooks, hook)

        def remove() -> None:
            with self._lock:
                self._hooks = tuple(h for h in self._hooks if h is not hook)

        return remove

    def _emit(self, event: QosEvent, endpoint_hook: EventCallback | None) -> None:
        # An endpoint with its own ``on_event`` reports its events itself (a runtime node
        # publishes them rate-limited on its status topic; the bridge turns a refused command into
        # one ERROR): logging them as well would print each twice, once unprefixed and without any
        # rate limit. Only events nobody handles are logged as warnings.
        if endpoint_hook is not None or isinstance(event, (DeadlineMissedEvent, MessagesLostEvent)):
            _LOG.debug("%s", event.describe())
        else:
            _LOG.warning("%s", event.describe())
        for hook in (endpoint_hook, *self._hooks):
            if hook is None:
                continue
            try:
                hook(event)
            except Exception:
                _LOG.exception("QoS event hook %r raised on %s", hook, event.describe())

    def _meet(self, pub: Publisher[Any], sub: Subscriber[Any]) -> None:
        reasons = incompatibilities(pub.qos, sub.qos)
        if reasons:
            for side in (pub, sub):
                side._emit(
                    QosIncompatibleEvent(
                        pub.topic, side.label, side.KIND, pub.label, sub.label, reasons, False
                    )
                )

    def _report_remote_incompatible(
        self, local: Endpoint[Any], remote: EndpointInfo, reasons: tuple[str, ...]
    ) -> None:
        """Called by the transport when a remote endpoint meets an incompatible local one."""
        kind: EndpointKind = local.KIND
        pub_label, sub_label = (
            (local.label, remote.label) if kind == "publisher" else (remote.label, local.label)
        )
        local._emit(
            QosIncompatibleEvent(
                local.topic, local.label, kind, pub_label, sub_label, reasons, True
            )
        )

    # ---- topic table ---------------------------------------------------------------------------
    def _entry(self, topic: str, msg_type: type[Message], context: str) -> Topic:
        entry = self._topics.get(topic)
        if entry is None:
            entry = Topic(topic, msg_type)
            self._topics[topic] = entry
        else:
            entry.check_type(msg_type, context)
        return entry

    def _remove_publisher(self, pub: Publisher[Any]) -> None:
        with self._lock:
            entry = self._topics.get(pub.topic)
            if entry is not None:
                entry.publishers = tuple(p for p in entry.publishers if p is not pub)
                self._forget_if_empty(entry)
        self._deadlines.remove(pub)
        transport = self._transport
        if transport is not None:
            transport.publisher_removed(pub)

    def _remove_subscriber(self, sub: Subscriber[Any]) -> None:
        with self._lock:
            entry = self._topics.get(sub.topic)
            if entry is not None:
                entry.subscribers = tuple(s for s in entry.subscribers if s is not sub)
                entry.rewire()
                self._forget_if_empty(entry)
        self._deadlines.remove(sub)
        transport = self._transport
        if transport is not None:
            transport.subscriber_removed(sub)

    def _forget_if_empty(self, entry: Topic) -> None:
        if entry.empty and self._topics.get(entry.name) is entry:
            del self._topics[entry.name]

    def local_subscribers(self, topic: str) -> tuple[Subscriber[Any], ...]:
        """This process's subscribers of ``topic`` (a snapshot; used by the Zenoh receive path)."""
        entry = self._topics.get(topic)
        return entry.subscribers if entry is not None else ()

    def local_server(self, name: str) -> ServiceServer[Any, Any] | None:
        """This process's server of service ``name``, if any (the access watch reports to it)."""
        return self._services.server(name)

    def local_publishers(self, topic: str) -> tuple[Publisher[Any], ...]:
        """This process's publishers of ``topic`` (a snapshot)."""
        entry = self._topics.get(topic)
        return entry.publishers if entry is not None else ()

    def local_type(self, topic: str) -> type[Message] | None:
        """The message class of a local topic, or None if this process has no endpoint on it."""
        entry = self._topics.get(topic)
        return entry.msg_type if entry is not None else None

    # ---- discovery -----------------------------------------------------------------------------
    def local_endpoints(self) -> list[EndpointInfo]:
        """Records of this bus's own publishers and subscribers."""
        transport = self._transport
        zid = transport.zid if transport is not None else ""
        with self._lock:
            entries = list(self._topics.values())
        out: list[EndpointInfo] = []
        for entry in entries:
            for ep in (*entry.publishers, *entry.subscribers):
                out.append(
                    EndpointInfo(
                        ep.KIND,
                        ep.topic,
                        ep.type_name,
                        ep.node,
                        ep.gid,
                        ep.qos,
                        zid,
                        True,
                        namespace=ep.namespace,
                    )
                )
        return out

    def topics(self) -> list[TopicInfo]:
        """Topics of this process only (no network round trip)."""
        return group_topics(self.local_endpoints())

    def discover(self, timeout: float = 0.5) -> list[TopicInfo]:
        """Topics of this process and, with Zenoh attached, of every reachable bus.

        ``timeout`` (s) bounds the wait for remote answers.
        """
        endpoints = self.local_endpoints()
        transport = self._transport
        if transport is not None:
            endpoints.extend(transport.remote_endpoints(timeout))
        return group_topics(endpoints)

    # ---- transports --------------------------------------------------------------------------
    def attach(
        self,
        zenoh: ZenohConfig | None = None,
        *,
        dds: DdsConfig | None = None,
        rmw: str | None = None,
    ) -> Transport:
        """Join the network with the middleware chosen as :meth:`__init__` describes: DDS with
        ``dds`` when given; else Zenoh with ``zenoh`` (default settings when None) unless the
        middleware is a DDS one, then DDS in ``zenoh``'s ROS domain."""
        from jointbus.bus.dds_config import DdsConfig
        from jointbus.bus.rmw import is_dds, resolve_rmw

        if dds is not None:
            return self.attach_dds(dds)
        middleware = resolve_rmw(rmw)
        if is_dds(middleware):
            from jointbus.bus.zenoh_security import security_of, unsecured_dds_refusal

            held = security_of(zenoh) if zenoh is not None else []
            if held:
                # Joining DDS instead would drop the certificates and rules without a word.
                raise DdsConfigError(unsecured_dds_refusal(held, middleware))
            domain_id = zenoh.domain_id if zenoh is not None else None
            return self.attach_dds(DdsConfig(domain_id=domain_id, rmw=middleware))
        return self.attach_zenoh(zenoh)

    def attach_zenoh(self, config: ZenohConfig | None = None) -> ZenohTransport:
        """Open a Zenoh session and offer every existing and future topic on it."""
        from jointbus.bus.zenoh_config import ZenohConfig
        from jointbus.bus.zenoh_transport import ZenohTransport

        def make() -> ZenohTransport:
            return ZenohTransport(self, config or ZenohConfig())

        return self._attach(make, "Zenoh")

    def attach_dds(self, config: DdsConfig | None = None) -> DdsTransport:
        """Join a DDS domain (loopback by default) and offer every existing and future topic on
        it (:mod:`jointbus.bus.dds_transport`)."""
        from jointbus.bus.dds_config import DdsConfig
        from jointbus.bus.dds_transport import DdsTransport

        def make() -> DdsTransport:
            return DdsTransport(self, config or DdsConfig())

        return self._attach(make, "DDS")

    def _attach(self, make: Callable[[], _T], what: str) -> _T:
        with self._lock:
            self._check_open()
            if self._transport is not None:
                raise BusClosedError(f"bus {self.name!r} already has a network transport")
            if self.clock is not SYSTEM_CLOCK:
                raise BusError(
                    f"bus {self.name!r} runs on {self.clock!r}: {what} peers stamp their messages "
                    f"on the host's clock, so only a bus on SYSTEM_CLOCK can attach {what}"
                )
            transport = make()
            self._transport = cast("Transport", transport)
            entries = list(self._topics.values())
        attached = cast("Transport", transport)
        _close_at_shutdown(self)
        for entry in entries:
            for pub in entry.publishers:
                attached.publisher_added(pub)
            for sub in entry.subscribers:
                attached.subscriber_added(sub)
        self._services.attach(attached)
        return transport

    @property
    def transport(self) -> Transport | None:
        """The attached network transport, Zenoh's or DDS's (the same seams), if any."""
        return self._transport

    @property
    def zenoh(self) -> ZenohTransport | None:
        """The attached Zenoh transport, if the bus is on Zenoh (None on DDS: see
        :attr:`transport`)."""
        transport = self._transport
        if transport is None or transport.KIND != "zenoh":
            return None
        return cast("ZenohTransport", transport)

    # ---- lifecycle -----------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise BusClosedError(f"bus {self.name!r} is closed")

    def close(self) -> None:
        """Close every endpoint, the Zenoh session and the threads. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            entries = list(self._topics.values())
        for entry in entries:
            for pub in entry.publishers:
                pub.close()
            for sub in entry.subscribers:
                sub.close()
        self._services.close()
        transport, self._transport = self._transport, None
        if transport is not None:
            transport.close()
        self._deadlines.close()
        for dispatcher in self._dispatchers:
            dispatcher.close()

    def __enter__(self) -> Bus:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


_open_with_zenoh: weakref.WeakSet[Bus] = weakref.WeakSet()
_shutdown_lock = threading.Lock()
_shutdown_hook_registered = False


def _close_at_shutdown(bus: Bus) -> None:
    """Close ``bus`` when the interpreter shuts down, if the program has not.

    Why: zenoh-python runs Python callbacks on a non-daemon thread, and Python joins non-daemon
    threads *before* ``atexit`` handlers run — so a script that ends without closing its bus
    would never exit. ``threading._register_atexit`` (what ``concurrent.futures`` uses) runs before
    that join; closing the session there ends Zenoh's thread.
    """
    global _shutdown_hook_registered
    with _shutdown_lock:
        _open_with_zenoh.add(bus)
        if not _shutdown_hook_registered:
            register = getattr(threading, "_register_atexit", None)
            if register is not None:  # CPython ≥ 3.9; elsewhere the program must close its bus
                register(_close_open_buses)
            _shutdown_hook_registered = True


def _close_open_buses() -> None:
    for bus in list(_open_with_zenoh):
        try:
            bus.close()
        except Exception:  # shutting down: close the others whatever this one raised
            _LOG.exception("closing bus %r at interpreter shutdown failed", bus.name)


_default: Bus | None = None
_default_lock = threading.Lock()


def default_bus() -> Bus:
    """A process-wide in-process bus created on first use (a convenience for scripts)."""
    global _default
    with _default_lock:
        if _default is None or _default.closed:
            _default = Bus(name="default")
        return _default


__all__ = ["Bus", "default_bus"]
