"""RIHS01 type hashes: the version-1 ROS interface hash of REP 2011, computed from ``.msg`` text.

Where it sits: :mod:`jointbus.codec`, beside :mod:`jointbus.codec.msgdef` (whose bundles it reads);
it imports nothing above the codec. The bus (:mod:`jointbus.bus.names`) puts the hash in every data
key and liveliness token, because rmw_zenoh (ROS 2 Jazzy and later) only matches endpoints whose
type hashes are equal.

Why from the ``.msg`` bundle (``cls.msgdef()``) rather than from the dataclass schema: every message
class has a bundle, including the Python-facing classes that share a type name with their wire
record (the typed ``JointState``, Player's single-joint commands) and have no schema of their own;
the bundle is also exactly what recordings and ``jointbus ros2 export-msgs`` publish, so the three
cannot disagree. Why not rosbags: it would need a type store per process and per type; the hash is
a few lines of REP 2011. ``tests/codec/test_type_hash.py`` checks every registered type against
rosbags' ``Typestore.hash_rihs01`` and against hashes published by ROS 2 itself.

The algorithm (``rosidl_generator_type_description``): describe the type as
``{"type_description": {"type_name", "fields"}, "referenced_type_descriptions": [...]}`` where each
field is ``{"name", "type": {"type_id", "capacity", "string_capacity", "nested_type_name"}}``
(default values left out; constants are not part of it), the referenced types are the transitive
closure of nested types sorted by name, the text is Python's ``json.dumps`` with ``", "`` and
``": "`` separators in that key order, and the hash is ``"RIHS01_" + sha256(text).hexdigest()``.
An empty ``.msg`` gets the member ``uint8 structure_needs_at_least_one_member`` as in ROS 2 IDL.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Final

from jointbus.codec.errors import SchemaError

#: Prefix of a version-1 hash string (``RIHS01_`` + 64 lowercase hex digits).
PREFIX: Final = "RIHS01_"

# type_description_interfaces/msg/FieldType ids. ``char`` is ``uint8`` in ROS 2 IDL, ``byte`` is
# ``octet``; ``float32``/``float64`` are ``float``/``double``.
_TYPE_IDS: Final[dict[str, int]] = {
    "int8": 2,
    "uint8": 3,
    "int16": 4,
    "uint16": 5,
    "int32": 6,
    "uint32": 7,
    "int64": 8,
    "uint64": 9,
    "float32": 10,
    "float64": 11,
    "char": 3,
    "bool": 15,
    "byte": 16,
    "string": 17,
}
_NESTED_TYPE: Final = 1
_BOUNDED_STRING: Final = 21
# Offsets added to the element's id: fixed array, bounded sequence, unbounded sequence.
_ARRAY: Final = 48
_BOUNDED_SEQUENCE: Final = 96
_UNBOUNDED_SEQUENCE: Final = 144

_SEPARATOR = re.compile(r"^={10,}\s*$", re.MULTILINE)
_FIELD = re.compile(
    r"(?P<base>[A-Za-z_][A-Za-z0-9_/]*)(?:<=(?P<strcap>\d+))?"
    r"(?P<seq>\[(?P<bounded><=)?(?P<size>\d*)\])?\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*(?P<rest>.*)\Z"
)


def _full_name(base: str, package: str) -> str:
    """``pkg/Name`` or a bare ``Name`` (same package) → ``pkg/msg/Name``."""
    parts = base.split("/")
    if len(parts) == 1:
        return f"{package}/msg/{base}"
    if len(parts) == 2:
        return f"{parts[0]}/msg/{parts[1]}"
    return base


def _field_type(match: re.Match[str], package: str) -> dict[str, Any]:
    base = match["base"]
    if base == "Header":  # the one bare name ROS resolves to another package
        base = "std_msgs/Header"
    capacity = 0
    string_capacity = int(match["strcap"] or 0)
    nested = ""
    if base in _TYPE_IDS:
        type_id = _BOUNDED_STRING if string_capacity and base == "string" else _TYPE_IDS[base]
    else:
        type_id = _NESTED_TYPE
        nested = _full_name(base, package)
    if match["seq"] is not None:
        if match["bounded"]:
            type_id += _BOUNDED_SEQUENCE
            capacity = int(match["size"])
        elif match["size"]:
            type_id += _ARRAY
            capacity = int(match["size"])
        else:
            type_id += _UNBOUNDED_SEQUENCE
    return {
        "type_id": type_id,
        "capacity": capacity,
        "string_capacity": string_capacity,
        "nested_type_name": nested,
    }


def _parse_one(type_name: str, text: str) -> dict[str, Any]:
    package = type_name.split("/", maxsplit=1)[0]
    fields: list[dict[str, Any]] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        match = _FIELD.match(line)
        if match is None:
            raise SchemaError(f"{type_name}: cannot read .msg line {raw!r}")
        rest = match["rest"]
        if rest.startswith("="):
            continue  # a constant: not part of the type description
        fields.append({"name": match["name"], "type": _field_type(match, package)})
    if not fields:
        fields.append(
            {
                "name": "structure_needs_at_least_one_member",
                "type": {"type_id": 3, "capacity": 0, "string_capacity": 0, "nested_type_name": ""},
            }
        )
    return {"type_name": type_name, "fields": fields}


def parse_bundle(type_name: str, bundle: str) -> dict[str, dict[str, Any]]:
    """Type name → description for the main type and every ``MSG: pkg/Name`` part of ``bundle``
    (the rosbag2 / MCAP ``ros2msg`` format :mod:`jointbus.codec.msgdef` writes)."""
    chunks = _SEPARATOR.split(bundle)
    descriptions = {type_name: _parse_one(type_name, chunks[0])}
    for chunk in chunks[1:]:
        head, _, text = chunk.strip("\n").partition("\n")
        if not head.startswith("MSG: "):
            raise SchemaError(f"{type_name}: bundle part without 'MSG: pkg/Name': {head!r}")
        name = _full_name(head[5:].strip(), type_name.split("/", maxsplit=1)[0])
        descriptions[name] = _parse_one(name, text)
    return descriptions


def type_description_json(type_name: str, bundle: str) -> str:
    """The exact text REP 2011 hashes for ``type_name`` defined by ``bundle``."""
    known = parse_bundle(type_name, bundle)
    return _document(type_name, known[type_name], known)


def _document(type_name: str, main: dict[str, Any], known: dict[str, dict[str, Any]]) -> str:
    """The JSON text of ``main`` with the transitive closure of its nested types from ``known``."""
    referenced: dict[str, dict[str, Any]] = {}
    pending = [main]
    while pending:
        for field in pending.pop()["fields"]:
            nested = field["type"]["nested_type_name"]
            if nested and nested not in referenced:
                if nested not in known:
                    raise SchemaError(f"{type_name}: the bundle does not define {nested}")
                referenced[nested] = known[nested]
                pending.append(known[nested])
    document = {
        "type_description": main,
        "referenced_type_descriptions": [referenced[n] for n in sorted(referenced)],
    }
    return json.dumps(document, separators=(", ", ": "))


def qualify_msg_line(line: str, package: str) -> str:
    """One ``.msg`` line with a bare nested type name (``Name``, meaning ``package/Name``, or
    ``Header``) written in full, so the line means the same inside a ``.srv`` of another package;
    comments, constants, blank lines and primitive fields come back unchanged."""
    body, hash_mark, comment = line.partition("#")
    match = _FIELD.match(body.strip())
    if match is None or "/" in match["base"] or match["base"] in _TYPE_IDS:
        return line
    base = "std_msgs/Header" if match["base"] == "Header" else f"{package}/{match['base']}"
    indent = body[: len(body) - len(body.lstrip())]
    return f"{indent}{base}{body.strip()[len(match['base']) :]}" + (
        f" {hash_mark}{comment}" if hash_mark else ""
    )


def _service_parts(service_type: str) -> tuple[str, str, str]:
    match = re.fullmatch(r"([A-Za-z][A-Za-z0-9_]*)/srv/([A-Za-z][A-Za-z0-9_]*)", service_type)
    if match is None:
        raise SchemaError(f"{service_type!r} is not a service type name like 'pkg/srv/Name'")
    return service_type + "_Request", service_type + "_Response", service_type + "_Event"


def _nested(type_id: int, name: str, capacity: int = 0) -> dict[str, Any]:
    return {
        "type_id": type_id,
        "capacity": capacity,
        "string_capacity": 0,
        "nested_type_name": name,
    }


def _scalar(name: str, type_id: int, capacity: int = 0) -> dict[str, Any]:
    return {"name": name, "type": _nested(type_id, "", capacity)}


#: ``service_msgs/msg/ServiceEventInfo`` and ``builtin_interfaces/msg/Time`` as rosidl describes
#: them (every service's event message refers to them; ``char[16] client_gid`` is ``uint8[16]``).
_SERVICE_EVENT_TYPES: Final[dict[str, dict[str, Any]]] = {
    "builtin_interfaces/msg/Time": {
        "type_name": "builtin_interfaces/msg/Time",
        "fields": [_scalar("sec", _TYPE_IDS["int32"]), _scalar("nanosec", _TYPE_IDS["uint32"])],
    },
    "service_msgs/msg/ServiceEventInfo": {
        "type_name": "service_msgs/msg/ServiceEventInfo",
        "fields": [
            _scalar("event_type", _TYPE_IDS["uint8"]),
            {"name": "stamp", "type": _nested(_NESTED_TYPE, "builtin_interfaces/msg/Time")},
            _scalar("client_gid", _TYPE_IDS["uint8"] + _ARRAY, 16),
            _scalar("sequence_number", _TYPE_IDS["int64"]),
        ],
    },
}


def service_type_description_json(
    service_type: str,
    request: tuple[str, str],
    response: tuple[str, str],
) -> str:
    """The exact text REP 2011 hashes for a service ``pkg/srv/Name`` whose request and response
    have the fields of the messages ``request`` and ``response`` (each ``(type name, .msg
    bundle)``).

    As ``rosidl`` builds a ``.srv``: the service is a type with the fields ``request_message``,
    ``response_message`` and ``event_message`` (``Name_Request``, ``Name_Response``,
    ``Name_Event``); the event has ``info`` (``service_msgs/msg/ServiceEventInfo``) and
    ``request`` / ``response`` as sequences of at most one element. The request and response
    keep the messages' fields, whose nested types are already fully qualified by the message's
    own package, so a field of a ``hb50_commons`` message stays a ``hb50_commons`` type.
    """
    main, known = _service_descriptions(service_type, request, response)
    return _document(service_type, main, known)


def _service_descriptions(
    service_type: str, request: tuple[str, str], response: tuple[str, str]
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The service's own description and every type it refers to (see
    :func:`service_type_description_json`)."""
    request_name, response_name, event_name = _service_parts(service_type)
    known: dict[str, dict[str, Any]] = dict(_SERVICE_EVENT_TYPES)
    for part_name, (msg_name, bundle) in ((request_name, request), (response_name, response)):
        described = parse_bundle(msg_name, bundle)
        own = described.pop(msg_name)
        for name, description in described.items():
            known.setdefault(name, description)
        known[part_name] = {"type_name": part_name, "fields": own["fields"]}
    known[event_name] = {
        "type_name": event_name,
        "fields": [
            {"name": "info", "type": _nested(_NESTED_TYPE, "service_msgs/msg/ServiceEventInfo")},
            {"name": "request", "type": _nested(_NESTED_TYPE + _BOUNDED_SEQUENCE, request_name, 1)},
            {
                "name": "response",
                "type": _nested(_NESTED_TYPE + _BOUNDED_SEQUENCE, response_name, 1),
            },
        ],
    }
    main = {
        "type_name": service_type,
        "fields": [
            {"name": "request_message", "type": _nested(_NESTED_TYPE, request_name)},
            {"name": "response_message", "type": _nested(_NESTED_TYPE, response_name)},
            {"name": "event_message", "type": _nested(_NESTED_TYPE, event_name)},
        ],
    }
    return main, known


def rihs01_service(service_type: str, request: tuple[str, str], response: tuple[str, str]) -> str:
    """``RIHS01_<sha256 hex>`` of a service (see :func:`service_type_description_json`)."""
    text = service_type_description_json(service_type, request, response)
    return PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()


def rihs01_service_part(
    service_type: str, request: tuple[str, str], response: tuple[str, str], part: str
) -> str:
    """``RIHS01_<sha256 hex>`` of a service's ``Name_Request`` or ``Name_Response`` message
    (``part`` ``"Request"`` or ``"Response"``): what the DDS rmws put in the USER_DATA of a
    service's request and reply endpoints."""
    if part not in ("Request", "Response"):
        raise SchemaError(f"service part {part!r}: expected 'Request' or 'Response'")
    main, known = _service_descriptions(service_type, request, response)
    del main
    name = f"{service_type}_{part}"
    text = _document(name, known[name], known)
    return PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()


def rihs01(type_name: str, bundle: str) -> str:
    """``RIHS01_<sha256 hex>`` of ``type_name`` defined by a ``.msg`` bundle."""
    text = type_description_json(type_name, bundle)
    return PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()


_BY_CLASS: dict[type[Any], str] = {}


def rihs01_of(cls: type[Any]) -> str:
    """The hash of a message class (anything with ``TYPE_NAME`` and ``msgdef()``; cached: a
    class's definition never changes)."""
    cached = _BY_CLASS.get(cls)
    if cached is None:
        cached = _BY_CLASS[cls] = rihs01(cls.TYPE_NAME, cls.msgdef())
    return cached


def is_rihs01(text: str) -> bool:
    """True for a well-formed version-1 hash string."""
    digest = text[len(PREFIX) :]
    return (
        text.startswith(PREFIX)
        and len(digest) == 64
        and all(c in "0123456789abcdef" for c in digest)
    )


__all__ = [
    "PREFIX",
    "is_rihs01",
    "parse_bundle",
    "qualify_msg_line",
    "rihs01",
    "rihs01_of",
    "rihs01_service",
    "rihs01_service_part",
    "service_type_description_json",
    "type_description_json",
]
