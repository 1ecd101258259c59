"""Typed errors of the driver layer.

Where it sits: :mod:`jointbus.drivers`, used by every driver and by the bridge. The hierarchy
follows python-can's lesson (initialisation / operation / timeout): a caller can catch
:class:`DriverError` for everything, or a precise subclass to react. Invalid *commands* raise the
message layer's :class:`~jointbus.messages.errors.ValidationError` family instead, so the same
error (naming joint, index, field, value, expectation) reaches the user whether a command was
checked by the bridge or by the driver.
"""

from __future__ import annotations

import enum


class DriverError(Exception):
    """Base class of every driver-layer error."""


class DriverNotFoundError(DriverError, LookupError):
    """No driver is registered for a URL scheme; ``known`` lists the schemes that are."""

    def __init__(self, scheme: str, known: tuple[str, ...]) -> None:
        self.scheme = scheme
        self.known = known
        super().__init__(
            f"no actuator-array driver for scheme {scheme!r}; known schemes: {', '.join(known)}"
        )

    def __str__(self) -> str:
        return str(self.args[0])


class DriverURLError(DriverError, ValueError):
    """A driver URL that cannot be parsed or names something the driver does not have."""


class DriverLoadError(DriverError, ImportError):
    """A registered driver failed to import (a missing optional dependency, typically)."""


class DriverClosedError(DriverError):
    """The driver was used after :meth:`close`."""


class DriverIOError(DriverError):
    """Communication with the hardware failed (bus-off, device gone)."""


class RejectReason(enum.Enum):
    """Why a request was refused (Player's NACK, made specific)."""

    UNKNOWN_JOINT = "unknown joint"
    UNSUPPORTED = "unsupported"
    OUT_OF_RANGE = "out of range"
    POWERED_OFF = "powered off"
    TIMED_OUT = "timed out"
    ESTOPPED = "emergency stop latched"


class RequestRejected(DriverError):
    """A request was refused (NACKed); nothing changed. ``reason`` says why, ``detail`` how."""

    def __init__(
        self,
        request: str,
        reason: RejectReason,
        detail: str = "",
        *,
        joint: str | None = None,
        index: int | None = None,
    ) -> None:
        self.request = request
        self.reason = reason
        self.detail = detail
        self.joint = joint
        self.index = index
        where = f" for joint {joint!r} (index {index})" if joint is not None else ""
        tail = f": {detail}" if detail else ""
        super().__init__(f"request {request!r} refused{where}: {reason.value}{tail}")
