"""Request/reply on the bus: a service answers each request with one response or a refusal.

Where it sits: :mod:`jointbus.bus`, beside publishers and subscribers; :class:`jointbus.bus.Bus`
creates servers (:meth:`~jointbus.bus.Bus.serve`) and clients (:meth:`~jointbus.bus.Bus.client`),
and the runtime's ``Node`` wraps them (``create_service`` / ``create_client``). The network legs
are :mod:`jointbus.bus.service_zenoh` (queryables) and :mod:`jointbus.bus.service_dds` (ROS 2's
``rq/`` / ``rr/`` topics), reached through the bus's transport. Player's actuator-array requests
(power, brakes, configured speed and acceleration, geometry) are services of the array node,
answered ACK or NACK.

A service has a name (a fully qualified ROS 2 name, like a topic: ``/arm6/actarray/power``), a
request type and a response type (jointbus :class:`~jointbus.messages.base.Message` classes).
Its name space is separate from the topics' (as in ROS 2): a service and a topic may share a name.

**Semantics.**

- The handler runs on the server's own worker thread, one request at a time, in arrival order —
  never on the caller's thread nor on Zenoh's: a slow handler delays only its own service, and a
  handler may itself call services or publish without deadlocking Zenoh.
- The handler returns the response, or raises :class:`ServiceRefused` to refuse (a NACK with a
  reason). Any other exception is a refusal too (``server error: ...``), logged, and the server
  keeps serving. A request that cannot be decoded is refused (``malformed request: ...``) and
  reported to the server's ``on_refused`` hook, like every refusal.
- In process, a call goes to a local server as the same immutable object (no serialisation); with
  Zenoh attached and no local server, it goes to a remote server as CDR over a Zenoh query.
- A call waits at most ``timeout_s``: :class:`ServiceTimeoutError` if the server took the request
  but did not answer in time, :class:`ServiceUnavailableError` — at once, without waiting — if no
  server exists. A call never hangs.

Why a thread per server: Zenoh runs query callbacks on its own few threads; a handler that blocks
there (a driver talking to hardware, a nested service call) would stall every other callback of
the session. One queue and one thread per server keep requests ordered, which is what an actuator
array needs (power on, then move).
"""

from __future__ import annotations

import concurrent.futures
import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from jointbus.bus.errors import BusClosedError, TopicTypeError
from jointbus.bus.names import ros_namespace, validate_topic_name
from jointbus.bus.service_errors import (
    ServiceError,
    ServiceRefused,
    ServiceTimeoutError,
    ServiceTypeError,
    ServiceUnavailableError,
)
from jointbus.bus.service_types import check_service_type, service_type_hash, service_type_name
from jointbus.messages.base import Message

if TYPE_CHECKING:
    from jointbus.bus.bus import Bus

__all__ = [
    "DEFAULT_CALL_TIMEOUT_S",
    "DecodeErrorText",
    "RefusalHook",
    "ServiceClient",
    "ServiceHandler",
    "ServiceInfo",
    "ServiceServer",
    "ServiceTable",
]

_LOG = logging.getLogger("jointbus.bus.service")

ReqT = TypeVar("ReqT", bound=Message)
RespT = TypeVar("RespT", bound=Message)

#: Default time a call waits for its answer (s).
DEFAULT_CALL_TIMEOUT_S = 1.0

ServiceHandler = Callable[[ReqT], RespT]
"""A server's handler: request → response; raises :class:`ServiceRefused` to refuse."""

RefusalHook = Callable[[str, str], None]
"""Called with (service name, reason) for every request a server refused."""

DecodeErrorText = Callable[[Exception], str]
"""Turns the error decoding a request into the text of its refusal: the node serving an array
names the joint a message class could only name by index."""

#: Where a worker job's outcome goes: (response, None) or (None, refusal reason).
_Reply = Callable[[Message | None, str | None], None]


def check_message_type(service: str, field: str, msg_type: object) -> None:
    """Refuse anything but a jointbus Message class with a TYPE_NAME as a request/response type."""
    if not (
        isinstance(msg_type, type)
        and issubclass(msg_type, Message)
        and isinstance(getattr(msg_type, "TYPE_NAME", None), str)
    ):
        raise TopicTypeError(
            service, "a jointbus Message class with a TYPE_NAME", repr(msg_type), field
        )


@dataclass(frozen=True, slots=True)
class ServiceInfo:
    """One server as discovery sees it: ``name``, its types, its ``node`` and Zenoh ``zid``
    (``""`` for a server of this bus before Zenoh is attached).

    ``service_type`` / ``type_hash`` are the ROS 2 service type and RIHS01 hash it is offered under
    on Zenoh (:mod:`jointbus.bus.service_types`). A remote server's graph token carries only
    those, so its ``request_type`` / ``response_type`` are ``""`` (the CLI resolves the pair)."""

    name: str
    request_type: str
    response_type: str
    node: str
    zid: str
    local: bool
    service_type: str = ""
    type_hash: str = ""


class ServiceServer(Generic[ReqT, RespT]):
    """A service's server: a worker thread answering requests with ``handler`` (see module doc)."""

    def __init__(
        self,
        name: str,
        request_type: type[ReqT],
        response_type: type[RespT],
        handler: ServiceHandler[ReqT, RespT],
        *,
        node: str,
        on_refused: RefusalHook | None,
        on_close: Callable[[ServiceServer[Any, Any]], None],
        service_type: str | None = None,
        decode_error_text: DecodeErrorText = str,
        namespace: str = "/",
    ) -> None:
        self.name = name
        self.request_type = request_type
        self.response_type = response_type
        #: The ROS 2 service type it is offered under on Zenoh (:mod:`jointbus.bus.service_types`).
        self.service_type = service_type or service_type_name(request_type, response_type)
        self.node = node
        #: The ROS 2 namespace of ``node`` (``/arm3``; ``/`` for the root).
        self.namespace = ros_namespace(namespace)
        self._handler = handler
        self._on_refused = on_refused
        self._decode_error_text = decode_error_text
        self._on_close = on_close
        self._jobs: queue.SimpleQueue[tuple[Message | bytes, _Reply] | None] = queue.SimpleQueue()
        self._closed = False
        self._lock = threading.Lock()
        #: Requests answered and requests refused so far.
        self.answered = 0
        self.refused = 0
        #: The network leg (:mod:`jointbus.bus.service_zenoh` or :mod:`jointbus.bus.service_dds`).
        self.link: Any = None
        self._thread = threading.Thread(
            target=self._work, name=f"jointbus-service{name.replace('/', '-')}", daemon=True
        )
        self._thread.start()

    @property
    def closed(self) -> bool:
        """True after :meth:`close`."""
        return self._closed

    def info(self, zid: str) -> ServiceInfo:
        """This server's discovery record."""
        return ServiceInfo(
            self.name,
            self.request_type.TYPE_NAME,
            self.response_type.TYPE_NAME,
            self.node,
            zid,
            True,
            self.service_type,
            service_type_hash(self.request_type, self.response_type, self.service_type),
        )

    def submit(self, request: Message | bytes, reply: _Reply) -> None:
        """Queue a request (an object, or CDR bytes from Zenoh) for the worker thread."""
        if self._closed:
            reply(None, "the server is shutting down")
            return
        self._jobs.put((request, reply))

    def note_refusal(self, reason: str) -> None:
        """Tell the ``on_refused`` hook of a refusal that happened before any request reached
        this server (a call its access rules dropped: :mod:`jointbus.bus.access_watch`)."""
        hook = self._on_refused
        if hook is None:
            _LOG.warning("service %s: %s", self.name, reason)
            return
        try:
            hook(self.name, reason)
        except Exception:
            _LOG.exception("refusal hook of service %s raised", self.name)

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            request, reply = job
            response, reason = self._answer(request)
            if reason is not None:
                self.refused += 1
                hook = self._on_refused
                if hook is not None:
                    try:
                        hook(self.name, reason)
                    except Exception:
                        _LOG.exception("refusal hook of service %s raised", self.name)
            else:
                self.answered += 1
            try:
                reply(response, reason)
            except Exception:
                _LOG.exception("sending the answer of service %s failed", self.name)

    def _answer(self, received: Message | bytes) -> tuple[Message | None, str | None]:
        request: Message
        if isinstance(received, bytes):
            try:
                request = self.request_type.from_cdr(received)
            except Exception as exc:
                try:
                    text = self._decode_error_text(exc)
                except Exception:
                    _LOG.exception("decode_error_text of service %s raised", self.name)
                    text = str(exc)
                return None, f"malformed request ({len(received)} bytes): {text}"
        else:
            request = received
        if type(request) is not self.request_type:
            return None, (
                f"request type {type(request).__name__}; expected {self.request_type.TYPE_NAME}"
            )
        try:
            response: Message = self._handler(request)
        except ServiceRefused as exc:
            return None, exc.reason
        except Exception as exc:
            _LOG.exception("handler of service %s raised", self.name)
            return None, f"server error: {type(exc).__name__}: {exc}"
        if type(response) is not self.response_type:
            return None, (
                f"server error: the handler returned {type(response).__name__}, "
                f"not {self.response_type.TYPE_NAME}"
            )
        return response, None

    def close(self) -> None:
        """Stop serving: requests already queued are refused; idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._on_close(self)
        self._jobs.put(None)
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=5.0)
        while True:  # anything queued after the stop marker
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                break
            if job is not None:
                job[1](None, "the server is shutting down")


class ServiceClient(Generic[ReqT, RespT]):
    """Calls one service by name (see :meth:`call`); cheap, holds no thread of its own."""

    def __init__(
        self,
        table: ServiceTable,
        name: str,
        request_type: type[ReqT],
        response_type: type[RespT],
        timeout_s: float,
        *,
        service_type: str | None = None,
    ) -> None:
        self.name = name
        self.request_type = request_type
        self.response_type = response_type
        #: The ROS 2 service type it calls on Zenoh (:mod:`jointbus.bus.service_types`).
        self.service_type = service_type or service_type_name(request_type, response_type)
        self.timeout_s = timeout_s
        self._table = table

    def call(self, request: ReqT, timeout_s: float | None = None) -> RespT:
        """Send ``request`` and wait for the response (at most ``timeout_s`` s, default the
        client's). Raises :class:`ServiceUnavailableError`, :class:`ServiceTimeoutError`,
        :class:`ServiceRefused` or :class:`ServiceTypeError`."""
        if type(request) is not self.request_type:
            raise ServiceTypeError(
                self.name, "request", self.request_type.TYPE_NAME, type(request).__name__
            )
        timeout = self.timeout_s if timeout_s is None else timeout_s
        if not timeout > 0.0:
            raise ValueError(f"timeout_s = {timeout!r}; expected a number of seconds > 0")
        return self._table.call(self, request, timeout)

    def available(self) -> bool:
        """True if a server offers this service now (in this process or, with Zenoh, remotely)."""
        return self._table.available(self.name)


class ServiceTable:
    """A bus's local servers, and the path of each call (local server first, then Zenoh)."""

    def __init__(self, bus: Bus) -> None:
        self._bus = bus
        self._lock = threading.Lock()
        self._servers: dict[str, ServiceServer[Any, Any]] = {}
        #: This bus's network client of each (service, request type, response type) it called.
        self._client_links: dict[tuple[str, type[Message], type[Message], str], Any] = {}

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
        validate_topic_name(name)
        ros_namespace(namespace)  # TopicNameError before anything is created
        check_message_type(name, "service request", request_type)
        check_message_type(name, "service response", response_type)
        if service_type is not None:
            check_service_type(service_type)
        with self._lock:
            if self._bus.closed:
                raise BusClosedError(f"bus {self._bus.name!r} is closed")
            if name in self._servers:
                raise ServiceError(name, "already served by this bus (one server per name)")
            server: ServiceServer[ReqT, RespT] = ServiceServer(
                name,
                request_type,
                response_type,
                handler,
                node=node,
                on_refused=on_refused,
                on_close=self._removed,
                service_type=service_type,
                decode_error_text=decode_error_text,
                namespace=namespace,
            )
            self._servers[name] = server
        transport = self._bus.transport
        if transport is not None:
            self.link(server, transport)
        return server

    def server(self, name: str) -> ServiceServer[Any, Any] | None:
        """The local server of ``name``, if any."""
        with self._lock:
            return self._servers.get(name)

    def link(self, server: ServiceServer[Any, Any], transport: Any) -> None:
        """Offer ``server`` on the network (at creation, or when a transport is attached later)."""
        if server.closed or server.link is not None:
            return
        server.link = transport.link_service(server)

    def attach(self, transport: Any) -> None:
        """A transport was attached to the bus: offer every existing server on it."""
        with self._lock:
            servers = list(self._servers.values())
        for server in servers:
            self.link(server, transport)

    def _removed(self, server: ServiceServer[Any, Any]) -> None:
        with self._lock:
            if self._servers.get(server.name) is server:
                del self._servers[server.name]
        link, server.link = server.link, None
        if link is not None:
            link.close()

    def client(
        self,
        name: str,
        request_type: type[ReqT],
        response_type: type[RespT],
        timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
        service_type: str | None = None,
    ) -> ServiceClient[ReqT, RespT]:
        validate_topic_name(name)
        check_message_type(name, "service request", request_type)
        check_message_type(name, "service response", response_type)
        if service_type is not None:
            check_service_type(service_type)
        return ServiceClient(
            self, name, request_type, response_type, timeout_s, service_type=service_type
        )

    def local(self, name: str) -> ServiceServer[Any, Any] | None:
        """This bus's server of ``name``, if any."""
        return self._servers.get(name)

    def available(self, name: str) -> bool:
        if name in self._servers:
            return True
        transport = self._bus.transport
        if transport is None:
            return False
        return any(s.name == name for s in transport.remote_services())

    def call(self, client: ServiceClient[ReqT, RespT], request: ReqT, timeout_s: float) -> RespT:
        if self._bus.closed:
            raise BusClosedError(f"bus {self._bus.name!r} is closed")
        server = self._servers.get(client.name)
        if server is not None:
            return self._call_local(server, client, request, timeout_s)
        transport = self._bus.transport
        if transport is None:
            raise ServiceUnavailableError(client.name, "no server in this process (no network)")
        key = (client.name, client.request_type, client.response_type, client.service_type)
        with self._lock:
            link = self._client_links.get(key)
            if link is None:
                link = self._client_links[key] = transport.client_link(
                    client.name,
                    client.request_type,
                    client.response_type,
                    client.service_type,
                )
        response: RespT = transport.call_service(link, client, request, timeout_s)  # type: ignore[arg-type]
        return response

    @staticmethod
    def _call_local(
        server: ServiceServer[Any, Any],
        client: ServiceClient[ReqT, RespT],
        request: ReqT,
        timeout_s: float,
    ) -> RespT:
        for field, mine, theirs in (
            ("request", client.request_type, server.request_type),
            ("response", client.response_type, server.response_type),
        ):
            if mine is not theirs:
                raise ServiceTypeError(client.name, field, theirs.TYPE_NAME, mine.TYPE_NAME)
        future: concurrent.futures.Future[tuple[Message | None, str | None]] = (
            concurrent.futures.Future()
        )

        def reply(response: Message | None, reason: str | None) -> None:
            future.set_result((response, reason))

        server.submit(request, reply)
        try:
            response, reason = future.result(timeout=timeout_s)
        except concurrent.futures.TimeoutError:
            raise ServiceTimeoutError(client.name, timeout_s) from None
        if reason is not None:
            raise ServiceRefused(client.name, reason)
        result: RespT = cast(RespT, response)
        return result

    def services(self, timeout_s: float = 0.5) -> list[ServiceInfo]:
        """Servers of this bus and, with a network, of every reachable bus, sorted by name."""
        transport = self._bus.transport
        zid = transport.zid if transport is not None else ""
        with self._lock:
            found = [s.info(zid) for s in self._servers.values()]
        if transport is not None:
            found.extend(transport.remote_services(timeout_s))
        return sorted(found, key=lambda s: (s.name, s.node, s.zid))

    def close(self) -> None:
        """Close every server and client link (the bus is closing)."""
        with self._lock:
            servers = list(self._servers.values())
            links = list(self._client_links.values())
            self._client_links.clear()
        for server in servers:
            server.close()
        for link in links:
            link.close()
