"""Typed errors of request/reply services: no server, timeout, refusal, wrong types.

Where it sits: :mod:`jointbus.bus`, beside :mod:`jointbus.bus.errors` (every class here is a
:class:`~jointbus.bus.errors.BusError`); raised by :mod:`jointbus.bus.service` to the caller of
:meth:`jointbus.bus.service.ServiceClient.call`. A caller can catch :class:`ServiceError` for every
failed call or one subclass to react: retry later (:class:`ServiceUnavailableError`), give up or
escalate (:class:`ServiceTimeoutError`), show the server's reason (:class:`ServiceRefused`).
"""

from __future__ import annotations

from jointbus.bus.errors import BusError
from jointbus.errors import Refused

__all__ = [
    "ServiceDeniedError",
    "ServiceError",
    "ServiceRefused",
    "ServiceTimeoutError",
    "ServiceTypeError",
    "ServiceUnavailableError",
]


class ServiceError(BusError):
    """Base class of every service error; ``service`` names the service."""

    def __init__(self, service: str, text: str) -> None:
        self.service = service
        super().__init__(f"service {service!r}: {text}")


class ServiceUnavailableError(ServiceError, LookupError):
    """No server offers the service (in this process nor on any reachable bus): nothing was sent.

    Raised as soon as that is known — at once in process, and as soon as Zenoh reports that no
    queryable matches — never after waiting out the timeout.
    """

    def __init__(self, service: str, detail: str = "no server offers it") -> None:
        self.detail = detail
        super().__init__(service, detail)


class ServiceTimeoutError(ServiceError, TimeoutError):
    """A server took the request but no answer came within ``timeout_s`` (s).

    The request may still be carried out by the server: a timeout says nothing about that.
    """

    def __init__(self, service: str, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        super().__init__(service, f"no answer within {round(timeout_s, 1):g} s")


class ServiceDeniedError(ServiceTimeoutError):
    """The server is announced (its graph token is seen) but Zenoh never routed a call to it from
    this session until the timeout: its access rules hide it from this host (a TLS-only robot
    shows a server only to the roles that may call it; ``docs/SECURITY.md``). Nothing was sent.
    ``detail`` names the server and the certificate that holds the rules, where known."""

    def __init__(self, service: str, timeout_s: float, detail: str) -> None:
        self.detail = detail
        ServiceError.__init__(
            self,
            service,
            f"denied: {detail}, but no call was routed to it from this host in "
            f"{round(timeout_s, 1):g} s"
            " — its access rules do not let this host's certificate call it (or the server "
            "never became reachable); nothing was sent",
        )
        self.timeout_s = timeout_s


class ServiceRefused(ServiceError, Refused):
    """The server refused the request (a NACK) and said why in ``reason``; it answered nothing else.

    A handler raises it to refuse; the caller receives it with the same ``reason``. Requests that
    cannot be decoded, or whose handler failed, are refused the same way by the server itself.
    """

    def __init__(self, service: str, reason: str) -> None:
        self.reason = reason
        super().__init__(service, f"refused: {reason}")


class ServiceTypeError(ServiceError, TypeError):
    """A request or response type that is not the service's: ``expected`` versus ``got``."""

    def __init__(self, service: str, field: str, expected: str, got: str) -> None:
        self.field = field
        self.expected = expected
        self.got = got
        super().__init__(service, f"{field} type {got}; expected {expected}")
