"""The joint names of the served array behind an ``actarray`` topic or service, to name the joint
of a command the CLI's own check refused by index.

Where it sits: :mod:`jointbus.cli`, used by ``service call`` and ``topic pub`` before they send
anything. Why: a Player command (``ActuatorSpeedCommand``, ``ActuatorPositionCommand``, …) names
its joint by index, and its message class checks a value without knowing the robot, so a NaN was
refused as ``…ActuatorSpeedCommand: index 2: field 'speed' = nan`` — no joint name (a user's
trial, 2026-12-06), where every refusal should name the joint by name *and* index. The array's
server knows the names: its ``describe`` service
(:class:`~jointbus.drivers.bus.array_names.ArrayNames`) answers them, and the error is given again
with the joint named
(:meth:`~jointbus.messages.errors.ValidationError.naming`). Asked only once a check has refused,
so a valid command costs nothing; when no server answers within :data:`DESCRIBE_TIMEOUT_S`, the
error is given as the message class said it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from jointbus.bus import Bus, BusError
from jointbus.cli.errors import CliError
from jointbus.messages.errors import ValidationError

__all__ = ["DESCRIBE_TIMEOUT_S", "describe_service_of", "naming_the_joint"]

#: How long (s) a refused command waits for the array's names before it is reported as it is.
DESCRIBE_TIMEOUT_S: Final = 1.0


def describe_service_of(topic: str) -> str | None:
    """``/<ns>/actarray/describe`` for a topic or service ``/<ns>/actarray/<method>``;
    ``None`` for any other name."""
    parent, _, method = topic.rpartition("/")
    if not method or not parent.endswith("/actarray"):
        return None
    return f"{parent}/describe"


def naming_the_joint(
    error: BaseException, topic: str, open_bus: Callable[[], Bus]
) -> BaseException:
    """``error`` with its joint named from the array served behind ``topic``, when it is a
    :class:`ValidationError` that gives only an index and the array's ``describe`` service
    answers; else ``error`` unchanged."""
    if not isinstance(error, ValidationError) or error.joint is not None or error.index is None:
        return error
    service = describe_service_of(topic)
    if service is None:
        return error
    from jointbus.messages.actarray.description import ArrayDescription
    from jointbus.messages.actarray.requests import GeometryRequest

    try:
        bus = open_bus()
    except CliError:  # the network cannot be joined: the command's own error says so later
        return error
    try:
        client = bus.client(
            service, GeometryRequest, ArrayDescription, timeout_s=DESCRIBE_TIMEOUT_S
        )
        names = client.call(GeometryRequest()).names
    except (BusError, TimeoutError):
        return error
    finally:
        bus.close()
    return error.naming(names)
