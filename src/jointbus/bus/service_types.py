"""The ROS 2 service type of a jointbus service: a ``.srv`` composed of its two messages.

Where it sits: :mod:`jointbus.bus`, below :mod:`jointbus.bus.service_zenoh` (which puts the name and
hash in the service's Zenoh key and ``SS`` / ``SC`` graph tokens) and used by ``jointbus ros2
export-msgs`` (which writes the ``.srv`` files); it imports only the codec and the message base.

Why a composed type: rmw_zenoh keys a service by its ``.srv`` type (``pkg/srv/Name``, DDS name
``pkg::srv::dds_::Name_``) and the RIHS01 hash of that type, while a jointbus service is a pair of
existing messages (a Player ``ActuatorPowerRequest`` answered by an ``ActuatorReply``). jointbus
names the pair ``jointbus_msgs/srv/<request name><response name>`` (``PowerRequest`` +
``ActuatorReply`` → ``jointbus_msgs/srv/ActuatorPowerRequestActuatorReply``), whose request has
exactly the request message's fields and whose response the response message's — as rosidl builds
``Name_Request`` / ``Name_Response`` / ``Name_Event`` from a ``.srv`` — so the request and response
bytes on the wire are the messages' own CDR, and a ROS 2 machine that builds the exported
``.srv`` gets the same hash. Nested types keep their packages (a bare ``Name`` in a message of
``hb50_commons`` is written ``hb50_commons/Name`` in the ``.srv``).

To serve or call an existing ROS 2 service, give its type (``Bus.client(..., service_type=
"example_interfaces/srv/AddTwoInts")``) and two messages with the fields of its request and
response: the key then carries that type and its hash, computed the same way.
"""

from __future__ import annotations

import re
from typing import Final

from jointbus.bus.errors import BusError
from jointbus.codec.type_hash import qualify_msg_line, rihs01_service
from jointbus.messages.base import Message

#: The package every composed service type belongs to.
SERVICE_PACKAGE: Final = "jointbus_msgs"

# The line between a bundle's own definition and its dependencies (rosbag2's ``ros2msg`` form).
_BUNDLE_SEPARATOR: Final = re.compile(r"^={10,}\s*$", re.MULTILINE)
_SERVICE_TYPE: Final = re.compile(r"[A-Za-z][A-Za-z0-9_]*/srv/[A-Za-z][A-Za-z0-9_]*\Z")
_HASHES: dict[tuple[type[Message], type[Message], str], str] = {}
#: Service type name → (request, response) type names of every pair named in this process.
_PAIRS: dict[str, tuple[str, str]] = {}


def _short(type_name: str) -> str:
    return type_name.rsplit("/", maxsplit=1)[-1]


def service_type_name(request_type: type[Message], response_type: type[Message]) -> str:
    """``jointbus_msgs/srv/<request name><response name>`` of a request/response pair (the pair
    is remembered for :func:`message_pair`)."""
    request, response = request_type.TYPE_NAME, response_type.TYPE_NAME
    name = f"{SERVICE_PACKAGE}/srv/{_short(request)}{_short(response)}"
    _PAIRS.setdefault(name, (request, response))
    return name


def message_pair(service_type: str) -> tuple[str, str] | None:
    """The (request, response) message type names of a composed service type this process has
    named (by serving, calling or :func:`service_type_name`), else None: a remote server's token
    carries only the service type."""
    return _PAIRS.get(service_type)


def service_type_hash(
    request_type: type[Message], response_type: type[Message], service_type: str | None = None
) -> str:
    """The RIHS01 hash of the pair as service type ``service_type`` (default: the composed
    :func:`service_type_name`); cached, a class's definition never changes."""
    name = service_type or service_type_name(request_type, response_type)
    key = (request_type, response_type, name)
    cached = _HASHES.get(key)
    if cached is None:
        cached = _HASHES[key] = rihs01_service(
            name,
            (request_type.TYPE_NAME, request_type.msgdef()),
            (response_type.TYPE_NAME, response_type.msgdef()),
        )
    return cached


def check_service_type(service_type: object) -> str:
    """Return ``service_type`` if it is a ROS service type name ``pkg/srv/Name``, else raise
    BusError."""
    if not (isinstance(service_type, str) and _SERVICE_TYPE.match(service_type)):
        raise BusError(
            f"service type {service_type!r}: expected a ROS service type like "
            "'example_interfaces/srv/AddTwoInts'"
        )
    return service_type


def srv_text(request_type: type[Message], response_type: type[Message]) -> str:
    """The ``.srv`` file of the pair: the request message's own definition, ``---``, the
    response's (bare nested names written with their package)."""
    parts = []
    for cls in (request_type, response_type):
        own = _BUNDLE_SEPARATOR.split(cls.msgdef(), maxsplit=1)[0].rstrip("\n")
        package = cls.TYPE_NAME.split("/", maxsplit=1)[0]
        parts.append("\n".join(qualify_msg_line(line, package) for line in own.splitlines()))
    return f"{parts[0]}\n---\n{parts[1]}\n"


__all__ = [
    "SERVICE_PACKAGE",
    "check_service_type",
    "message_pair",
    "service_type_hash",
    "service_type_name",
    "srv_text",
]
