"""The Zenoh leg of services, on rmw_zenoh's wire: a queryable per server, a query per call.

Where it sits: :mod:`jointbus.bus`, used by :mod:`jointbus.bus.service` when the bus has Zenoh
attached; it needs the transport's session, domain and graph (:mod:`jointbus.bus.zenoh_transport`).

The scheme is rmw_zenoh's (``docs/design.md``, ``rmw_service_data.cpp``, ``rmw_client_data.cpp``;
``docs/ROS2.md``), so a ROS 2 client calls a jointbus service and jointbus calls a ROS 2 service::

    service key   <domain>/<name without '/'>/<DDS service type>/<service type hash>
                  0/arm6/actarray/power/jointbus_msgs::srv::dds_::ActuatorPowerRequestActuatorReply_/
                  RIHS01_32d3…                                         (one key; wrapped here)
    server        queryable on the key (complete) + graph token  @ros2_lv/…/SS/…/<QoS ::,10:,:,:,,>
    client        graph token  @ros2_lv/…/SC/…  (one per bus and service; its GID is the token's)
    request       get on the key: payload the request's CDR, attachment the 33 bytes of
                  :mod:`jointbus.bus.attachment` (the client's sequence number from 1, send time,
                  the client's GID)
    reply         payload the response's CDR, attachment the request's sequence number and client
                  GID with the server's send time: the client matches replies by these two

The service type is ``jointbus_msgs/srv/<request><response>`` composed of the two messages
(:mod:`jointbus.bus.service_types`). Because the type and hash are in the key, a client of another
type never reaches the server: no queryable matches, and the caller then finds the server's ``SS``
token with the other type and raises :class:`ServiceTypeError` instead of
:class:`ServiceUnavailableError`.

How the caller tells the outcomes apart (zenoh 1.x, ``tests/bus/test_service.py``):

- no queryable matches → the get ends at once with no reply → :class:`ServiceUnavailableError`
  (or :class:`ServiceTypeError`, above) — unless a server of this type is announced (its ``SS``
  token is in the graph): its queryable has not reached this session yet (tokens and queryables
  propagate separately, and some implementations announce first), so the call asks again every
  10 ms until its timeout;
- a reply whose attachment carries our sequence number and GID → the response (a payload that does
  not decode is a :class:`ServiceError`); other replies are not ours and are skipped;
- ``reply_err`` with jointbus's refusal prefix → :class:`ServiceRefused` (ROS 2 has no refusal:
  rmw_zenoh clients drop error replies, so a ROS 2 caller of a refusing jointbus server times out;
  Player-style services answer NACKs as ordinary ``ActuatorReply`` responses and are not affected);
- Zenoh's own error reply (``Timeout``) or no reply in time → :class:`ServiceTimeoutError`;
- the server's session vanished mid-call → the get ends with no reply → unavailable.

A request without a readable attachment is refused (rmw_zenoh servers drop it). The queryable
accepts remote queries only (``allowed_origin=REMOTE``): a call from the same bus goes in process.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import threading
import time
from typing import TYPE_CHECKING, Any, Final, cast

import zenoh

from jointbus.bus import attachment
from jointbus.bus.errors import BusError
from jointbus.bus.names import data_key, validate_topic_name
from jointbus.bus.qos import QosProfile, Reliability
from jointbus.bus.ros_graph import ANONYMOUS_NODE, EntityKind, gid_of, graph_selector, parse_token
from jointbus.bus.service import RespT, ServiceInfo
from jointbus.bus.service_errors import (
    ServiceDeniedError,
    ServiceError,
    ServiceRefused,
    ServiceTimeoutError,
    ServiceTypeError,
    ServiceUnavailableError,
)
from jointbus.bus.service_types import message_pair, service_type_hash, service_type_name
from jointbus.messages.base import Message

if TYPE_CHECKING:
    from jointbus.bus.service import ServiceClient, ServiceServer
    from jointbus.bus.zenoh_transport import ZenohTransport

__all__ = [
    "SERVICE_QOS",
    "ClientLink",
    "ServiceLink",
    "call_remote",
    "remote_services",
    "service_key",
]

_LOG = logging.getLogger("jointbus.bus.service")

#: QoS announced in ``SS``/``SC`` tokens: ROS 2's services default (reliable, volatile, depth 10).
SERVICE_QOS: Final = QosProfile(Reliability.RELIABLE, 10)
_REFUSED: Final = b"jointbus-refused\n"
#: Pause before asking again when a server is announced but its queryable not yet reachable (s).
_RETRY_S: Final = 0.01
_refs = itertools.count(1)


def service_key(
    domain_id: int,
    name: str,
    request_type: type[Message],
    response_type: type[Message],
    service_type: str | None = None,
) -> str:
    """The queryable key of service ``name`` with this request/response pair, offered as
    ``service_type`` (default: the pair's composed type)."""
    service_type = service_type or service_type_name(request_type, response_type)
    return data_key(
        domain_id,
        validate_topic_name(name),
        service_type,
        service_type_hash(request_type, response_type, service_type),
    )


def _drop(query: zenoh.Query) -> None:
    """Finalise a query (its caller's get ends once every matched queryable dropped its query)."""
    cast(Any, query).drop()


def _announce(
    transport: ZenohTransport,
    kind: EntityKind,
    *,
    node: str,
    name: str,
    request_type: type[Message],
    response_type: type[Message],
    service_type: str,
    namespace: str = "/",
) -> tuple[int, str, zenoh.LivelinessToken | None]:
    ref = -next(_refs)  # negative: never an endpoint GID of the topic path
    declared = transport.announce_service_entity(
        ref,
        kind,
        node=node,
        namespace=namespace,
        name=name,
        type_name=service_type,
        type_hash=service_type_hash(request_type, response_type, service_type),
        qos=SERVICE_QOS,
    )
    if declared is None:
        return ref, "", None
    return ref, declared[0], declared[1]


class ServiceLink:
    """One server's queryable and ``SS`` graph token on a Zenoh session."""

    def __init__(self, transport: ZenohTransport, server: ServiceServer[Any, Any]) -> None:
        self._transport = transport
        self._server = server
        self.key = service_key(
            transport.domain_id,
            server.name,
            server.request_type,
            server.response_type,
            server.service_type,
        )
        self._queryable = transport.session.declare_queryable(
            self.key, self._on_query, complete=True, allowed_origin=zenoh.Locality.REMOTE
        )
        # Announced last: whoever discovers the token can already call.
        self._ref, self.token_key, self._token = _announce(
            transport,
            "SS",
            node=server.node,
            namespace=server.namespace,
            name=server.name,
            request_type=server.request_type,
            response_type=server.response_type,
            service_type=server.service_type,
        )

    def _on_query(self, query: zenoh.Query) -> None:
        # Zenoh's thread: read the attachment, hand the bytes to the server's worker, return.
        try:
            raw = query.attachment
            header = raw.to_bytes() if raw is not None else None
            if header is None or not attachment.is_valid(header):
                query.reply_err(
                    _REFUSED + b"request without rmw_zenoh's 33-byte attachment "
                    b"(sequence number, source time, client GID)"
                )
                _drop(query)
                return
            seq = attachment.FIELDS.unpack(header)[0]
            client_gid = header[17:]
            payload = query.payload
            data = b"" if payload is None else payload.to_bytes()
            key = query.key_expr

            def reply(response: Message | None, reason: str | None) -> None:
                try:
                    if response is not None:
                        query.reply(
                            key,
                            response.to_cdr(),
                            attachment=attachment.pack(seq, time.time_ns(), client_gid),
                        )
                    else:
                        query.reply_err(_REFUSED + (reason or "").encode())
                finally:
                    _drop(query)

            self._server.submit(data, reply)
        except Exception:
            _LOG.exception("receiving a request of service %s failed", self._server.name)

    def close(self) -> None:
        """Withdraw the token and the queryable (no error if the session is already closed)."""
        if self._token is not None:
            self._transport.release_entity(self._ref, self._token)
        with contextlib.suppress(zenoh.ZError):
            cast(Any, self._queryable).undeclare()


class ClientLink:
    """A bus's client of one service on Zenoh: its ``SC`` token, GID and sequence numbers."""

    def __init__(
        self,
        transport: ZenohTransport,
        name: str,
        request_type: type[Message],
        response_type: type[Message],
        service_type: str,
    ) -> None:
        self.key = service_key(transport.domain_id, name, request_type, response_type, service_type)
        self._ref, self.token_key, self._token = _announce(
            transport,
            "SC",
            node="",
            name=name,
            request_type=request_type,
            response_type=response_type,
            service_type=service_type,
        )
        self._transport = transport
        #: The client's 16-byte GID (the XXH3-128 of its token key, as rmw_zenoh derives it).
        self.gid = gid_of(self.token_key)
        self._seq = itertools.count(1)
        self._lock = threading.Lock()

    def next_seq(self) -> int:
        """The next request's sequence number (1, 2, …; thread-safe)."""
        with self._lock:
            return next(self._seq)

    def close(self) -> None:
        """Withdraw the token."""
        if self._token is not None:
            self._transport.release_entity(self._ref, self._token)


def _other_types(transport: ZenohTransport, name: str, own: tuple[str, str]) -> str | None:
    """``type (hash)`` of another session's server of ``name`` with another type or hash."""
    for entity in transport.graph_entities():
        other = (entity.type_name, entity.type_hash)
        if entity.kind == "SS" and entity.topic == name and other != own:
            return f"{other[0]} ({other[1]})"
    return None


def call_remote(
    transport: ZenohTransport,
    link: ClientLink,
    client: ServiceClient[Any, RespT],
    request: Message,
    timeout_s: float,
) -> RespT:
    """One call over Zenoh (see the module docstring for how each outcome is recognised)."""
    start = time.monotonic()
    own = (
        client.service_type,
        service_type_hash(client.request_type, client.response_type, client.service_type),
    )
    announced_by: str | None = None
    while True:
        answered, response = _get_once(transport, link, client, request, timeout_s)
        if answered:
            return cast(RespT, response)
        if time.monotonic() - start >= timeout_s:
            if announced_by is not None:
                # Announced all along, never routed: Zenoh hides it from us (access rules).
                raise ServiceDeniedError(client.name, timeout_s, announced_by)
            raise ServiceTimeoutError(client.name, timeout_s)
        other = _other_types(transport, client.name, own)
        if other is not None:
            raise ServiceTypeError(client.name, "service", other, f"{own[0]} ({own[1]})")
        if not _announced(transport, client.name, own):
            raise ServiceUnavailableError(client.name)
        if announced_by is None:
            announced_by = _announcer(transport, client.name, own)
        # A server of this type is announced but its queryable has not reached this session yet
        # (tokens and queryables propagate separately): ask again until the deadline.
        time.sleep(_RETRY_S)


def _get_once(
    transport: ZenohTransport,
    link: ClientLink,
    client: ServiceClient[Any, RespT],
    request: Message,
    timeout_s: float,
) -> tuple[bool, RespT | None]:
    """One get: (True, response), or (False, None) when no queryable answered."""
    seq = link.next_seq()
    replies = transport.session.get(
        link.key,
        target=zenoh.QueryTarget.BEST_MATCHING,
        consolidation=zenoh.ConsolidationMode.NONE,
        payload=request.to_cdr(),
        attachment=attachment.pack(seq, time.time_ns(), link.gid),
        timeout=timeout_s,
    )
    for reply in replies:
        sample = reply.ok
        if sample is not None:
            raw = sample.attachment
            header = attachment.unpack(raw.to_bytes() if raw is not None else None)
            if header is None or header.seq != seq or header.gid != attachment.gid_int(link.gid):
                continue  # not the answer to this request
            data = sample.payload.to_bytes()
            try:
                return True, client.response_type.from_cdr(data)
            except Exception as exc:
                raise ServiceError(
                    client.name, f"malformed response ({len(data)} bytes): {exc}"
                ) from None
        err = reply.err
        text = b"" if err is None else err.payload.to_bytes()
        if text.startswith(_REFUSED):
            raise ServiceRefused(client.name, text[len(_REFUSED) :].decode(errors="replace"))
        raise ServiceTimeoutError(client.name, timeout_s)
    return False, None


def _announcer(transport: ZenohTransport, name: str, own: tuple[str, str]) -> str:
    """``served by node N (certificate C)``: who announces the server, for a denial."""
    servers = [
        (e.node, e.zid)
        for e in transport.graph_entities()
        if e.kind == "SS" and e.topic == name and (e.type_name, e.type_hash) == own
    ]
    if not servers:  # the subscriber's table lags the graph on a loaded host: ask, as above
        servers = [
            (s.node, s.zid)
            for s in remote_services(transport, timeout_s=0.2)
            if s.name == name and (s.service_type, s.type_hash) == own
        ]
    for node, zid in servers:
        certificate = transport.peer_certificate(zid)
        held = f", whose session holds certificate {certificate!r}" if certificate else ""
        shown = "" if node == ANONYMOUS_NODE else node
        return f"served by node {shown or '(anonymous)'!r}{held}"
    return "its server is announced"


def _announced(transport: ZenohTransport, name: str, own: tuple[str, str]) -> bool:
    """True if another session announces a server of ``name`` with this type and hash.

    The token table fills from a liveliness subscriber, which can lag behind a liveliness query
    (what :meth:`ServiceClient.available` asks) on a loaded host; when the table has no such
    server, ask the way ``available`` does before concluding there is none.
    """
    if any(
        e.kind == "SS" and e.topic == name and (e.type_name, e.type_hash) == own
        for e in transport.graph_entities()
    ):
        return True
    return any(
        s.name == name and (s.service_type, s.type_hash) == own
        for s in remote_services(transport, timeout_s=0.2)
    )


def remote_services(transport: ZenohTransport, timeout_s: float = 0.5) -> list[ServiceInfo]:
    """Servers (``SS`` tokens, jointbus's and ROS 2's) of other sessions in the bus's domain;
    waits up to ``timeout_s`` (s) for the answers. A token carries only the service type
    (``service_type``): ``request_type`` / ``response_type`` are filled when this process knows the
    pair (:func:`~jointbus.bus.service_types.message_pair`), else empty."""
    found: list[ServiceInfo] = []
    selector = graph_selector(transport.domain_id)
    for reply in transport.session.liveliness().get(selector, timeout=timeout_s):
        sample = reply.ok
        if sample is None:
            continue
        try:
            entity = parse_token(str(sample.key_expr))
        except BusError:
            continue
        if entity.kind != "SS" or entity.zid == transport.zid:
            continue
        try:
            validate_topic_name(entity.topic)
        except BusError:
            continue
        node = "" if entity.node == ANONYMOUS_NODE else entity.node
        request, response = message_pair(entity.type_name) or ("", "")
        found.append(
            ServiceInfo(
                entity.topic,
                request,
                response,
                node,
                entity.zid,
                False,
                entity.type_name,
                entity.type_hash,
            )
        )
    return found
