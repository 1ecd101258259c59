"""The Zenoh leg of services: a queryable per server, a query per remote call, liveliness tokens.

Where it sits: :mod:`jointbus.bus`, used by :mod:`jointbus.bus.service` when the bus has Zenoh
attached; it only needs the transport's open ``zenoh.Session`` and Zenoh id.

Keys (every key is built by :func:`service_key` and :func:`service_token_key` and nowhere else, so
that mapping them onto rmw_zenoh's service keys — ``<domain>/<name>/<type>/<hash>`` and ``SS`` /
``SC`` graph tokens, as the topics now use — is a change of these two functions)::

    service "/arm6/actarray/power"  →  queryable key  "jbsrv/arm6/actarray/power"
    server announcement             →  liveliness     "@jointbus/srv/<zid>/<node>/<request type>/
                                                         <response type>/arm6/actarray/power"

``node`` and the type names are percent-encoded (``-`` for no node), as in endpoint tokens
(:mod:`jointbus.bus.discovery`).

**A call** is one ``get`` on the service key with the request's CDR as payload and the request
and response type names as attachment (``"<request type>\\n<response type>"``), target *best
matching* (one server answers). The server checks the type names, decodes and queues the request
for its worker thread, which replies with the response's CDR, or with ``reply_err`` whose payload
says why (a refusal or a type mismatch, each with its own prefix). How the caller tells the cases
apart (measured with zenoh 1.x, see ``tests/bus/test_service.py``):

- no queryable matches → the get ends at once with no reply → :class:`ServiceUnavailableError`;
- a reply → the response (a payload that does not decode is a :class:`ServiceError`);
- ``reply_err`` with our prefix → :class:`ServiceRefused` / :class:`ServiceTypeError`;
- Zenoh's own error reply (``Timeout``) or no reply after the timeout →
  :class:`ServiceTimeoutError`;
- the server's session vanished mid-call → Zenoh ends the get with no reply →
  :class:`ServiceUnavailableError` (the server is gone).

The queryable accepts remote queries only (``allowed_origin=REMOTE``): a call from the same bus
goes in process.
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any, Final, cast
from urllib.parse import quote, unquote

import zenoh

from jointbus.bus.names import validate_topic_name
from jointbus.bus.service import RespT, ServiceInfo
from jointbus.bus.service_errors import (
    ServiceError,
    ServiceRefused,
    ServiceTimeoutError,
    ServiceTypeError,
    ServiceUnavailableError,
)
from jointbus.messages.base import Message

if TYPE_CHECKING:
    from jointbus.bus.service import ServiceClient, ServiceServer

__all__ = [
    "SERVICE_DATA_PREFIX",
    "SERVICE_TOKEN_PREFIX",
    "ServiceLink",
    "call_remote",
    "remote_services",
    "service_key",
    "service_token_key",
]

_LOG = logging.getLogger("jointbus.bus.service")

#: Prefix of every service's queryable key.
SERVICE_DATA_PREFIX: Final = "jbsrv"
#: Prefix of the servers' liveliness tokens (a Zenoh verbatim chunk, so ``**`` never matches it;
#: rmw_zenoh's service keys and ``SS``/``SC`` graph tokens replace both prefixes later).
SERVICE_TOKEN_PREFIX: Final = "@jointbus/srv"
_REFUSED: Final = b"jointbus-refused\n"
_WRONG_TYPE: Final = b"jointbus-type\n"


def service_key(name: str) -> str:
    """The queryable key of service ``name``: ``/a/b`` → ``jbsrv/a/b``."""
    return SERVICE_DATA_PREFIX + validate_topic_name(name)


def service_token_key(info: ServiceInfo) -> str:
    """The liveliness token key announcing a server."""
    node = quote(info.node, safe="") if info.node else "-"
    return (
        f"{SERVICE_TOKEN_PREFIX}/{info.zid}/{node}/{quote(info.request_type, safe='')}/"
        f"{quote(info.response_type, safe='')}{info.name}"
    )


def _parse_token_key(key: str) -> ServiceInfo | None:
    parts = key.split("/")
    prefix = SERVICE_TOKEN_PREFIX.split("/")
    if len(parts) < 7 or parts[: len(prefix)] != prefix:
        return None
    try:
        name = validate_topic_name("/" + "/".join(parts[6:]))
    except ValueError:
        return None
    node = "" if parts[3] == "-" else unquote(parts[3])
    return ServiceInfo(name, unquote(parts[4]), unquote(parts[5]), node, parts[2], False)


def _drop(query: zenoh.Query) -> None:
    """Finalise a query (its caller's get ends once every matched queryable dropped its query)."""
    cast(Any, query).drop()


def _type_attachment(request_type: type[Message], response_type: type[Message]) -> bytes:
    return f"{request_type.TYPE_NAME}\n{response_type.TYPE_NAME}".encode()


class ServiceLink:
    """One server's queryable and liveliness token on a Zenoh session."""

    def __init__(self, session: zenoh.Session, zid: str, server: ServiceServer[Any, Any]) -> None:
        self._server = server
        self._key = service_key(server.name)
        self._types = _type_attachment(server.request_type, server.response_type)
        self._queryable = session.declare_queryable(
            self._key, self._on_query, complete=True, allowed_origin=zenoh.Locality.REMOTE
        )
        # Announced last: whoever discovers the token can already call.
        self._token = session.liveliness().declare_token(service_token_key(server.info(zid)))

    def _on_query(self, query: zenoh.Query) -> None:
        # Zenoh's thread: check the types, hand the bytes to the server's worker, return.
        try:
            raw = query.attachment
            types = b"" if raw is None else raw.to_bytes()
            if types != self._types:
                got = types.decode(errors="replace").replace("\n", " → ") or "none"
                want = self._types.decode().replace("\n", " → ")
                query.reply_err(_WRONG_TYPE + f"{want}\n{got}".encode())
                _drop(query)
                return
            payload = query.payload
            data = b"" if payload is None else payload.to_bytes()
            key = self._key

            def reply(response: Message | None, reason: str | None) -> None:
                try:
                    if response is not None:
                        query.reply(key, response.to_cdr())
                    else:
                        query.reply_err(_REFUSED + (reason or "").encode())
                finally:
                    _drop(query)

            self._server.submit(data, reply)
        except Exception:
            _LOG.exception("receiving a request of service %s failed", self._server.name)

    def close(self) -> None:
        """Withdraw the token and the queryable (no error if the session is already closed)."""
        for entity in (self._token, self._queryable):
            with contextlib.suppress(zenoh.ZError):
                cast(Any, entity).undeclare()


def call_remote(
    session: zenoh.Session, client: ServiceClient[Any, RespT], request: Message, timeout_s: float
) -> RespT:
    """One call over Zenoh (see the module docstring for how each outcome is recognised)."""
    start = time.monotonic()
    replies = session.get(
        service_key(client.name),
        target=zenoh.QueryTarget.BEST_MATCHING,
        consolidation=zenoh.ConsolidationMode.NONE,
        payload=request.to_cdr(),
        attachment=_type_attachment(client.request_type, client.response_type),
        timeout=timeout_s,
    )
    for reply in replies:
        sample = reply.ok
        if sample is not None:
            data = sample.payload.to_bytes()
            try:
                return client.response_type.from_cdr(data)
            except Exception as exc:
                raise ServiceError(
                    client.name, f"malformed response ({len(data)} bytes): {exc}"
                ) from None
        err = reply.err
        text = b"" if err is None else err.payload.to_bytes()
        if text.startswith(_REFUSED):
            raise ServiceRefused(client.name, text[len(_REFUSED) :].decode(errors="replace"))
        if text.startswith(_WRONG_TYPE):
            want, _, got = text[len(_WRONG_TYPE) :].decode(errors="replace").partition("\n")
            raise ServiceTypeError(client.name, "request → response", want, got)
        raise ServiceTimeoutError(client.name, timeout_s)
    if time.monotonic() - start >= timeout_s:
        raise ServiceTimeoutError(client.name, timeout_s)
    raise ServiceUnavailableError(client.name)


def remote_services(
    session: zenoh.Session, own_zid: str, timeout_s: float = 0.5
) -> list[ServiceInfo]:
    """Servers announced by other sessions; waits up to ``timeout_s`` (s) for the answers."""
    found: list[ServiceInfo] = []
    for reply in session.liveliness().get(f"{SERVICE_TOKEN_PREFIX}/**", timeout=timeout_s):
        sample = reply.ok
        if sample is None:
            continue
        info = _parse_token_key(str(sample.key_expr))
        if info is not None and info.zid != own_zid:
            found.append(info)
    return found
