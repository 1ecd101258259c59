"""Topic names, ROS type names and the Zenoh key expressions they map to (rmw_zenoh's scheme).

Where it sits: the bottom of :mod:`jointbus.bus`; used by the topic table, the Zenoh transport,
discovery (:mod:`jointbus.bus.ros_graph`), the recorder and the CLI. Every key jointbus puts on
Zenoh is built here, so a new transport feature (services, tools) calls these functions instead
of formatting keys itself.

A topic name is a fully qualified ROS 2 name: it starts with ``/``, its tokens are made of ASCII
letters, digits and ``_`` and do not start with a digit, and tokens are separated by single ``/``
(no empty token, no trailing ``/``). Relative names and ``~`` substitution are a node's business
(the runtime layer resolves them); the bus only accepts the resolved, absolute name, so the same
string always means the same topic.

Data keys are rmw_zenoh's (ROS 2 Jazzy and later, ``docs/ROS2.md``)::

    <domain id>/<topic without its leading '/'>/<DDS type name>/<RIHS01 type hash>
    e.g. 0/hb50/bridge_data/hb50_commons::msg::dds_::BridgeData_/RIHS01_1c4f…

The domain id comes from ``ROS_DOMAIN_ID`` (default 0) or ``ZenohConfig(domain_id=…)``. The DDS
type name of ``pkg/msg/Name`` is ``pkg::msg::dds_::Name_``. Because ROS tokens only use
``[A-Za-z0-9_]``, every topic maps to a valid key expression and back without escaping; the type
and hash are always the last two chunks, so ``<domain>/<topic>/*/*`` selects a topic whatever its
publishers' types (``jointbus topic hz``); the bus's own subscribers use the exact key, so a
publisher of another type or hash never reaches their decoder.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Final, NamedTuple

from jointbus.bus.errors import BusError, TopicNameError

#: Environment variable ROS 2 reads the domain id from.
DOMAIN_ENV: Final = "ROS_DOMAIN_ID"
#: Largest ROS domain id (ROS 2 documents 0–232; rmw_zenoh puts it in every key).
MAX_DOMAIN_ID: Final = 232

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def validate_topic_name(name: object) -> str:
    """Return ``name`` if it is a fully qualified ROS 2 topic name, else raise TopicNameError."""
    if type(name) is not str:
        raise TopicNameError(name, f"a topic name is a str, not {type(name).__name__}")
    if not name.startswith("/"):
        raise TopicNameError(
            name, "it does not start with '/' (relative names are not resolved here)"
        )
    if name == "/":
        raise TopicNameError(name, "it has no tokens")
    if name.endswith("/"):
        raise TopicNameError(name, "it ends with '/'")
    for index, token in enumerate(name[1:].split("/")):
        if token == "":
            raise TopicNameError(name, f"token {index} is empty ('//')")
        if not _TOKEN.match(token):
            raise TopicNameError(
                name,
                f"token {index} {token!r} has a character outside [A-Za-z0-9_] "
                "or starts with a digit",
            )
    return name


def check_domain_id(value: object) -> int:
    """Return ``value`` if it is a ROS domain id (int in [0, 232]), else raise BusError."""
    if type(value) is not int or not 0 <= value <= MAX_DOMAIN_ID:
        raise BusError(f"ROS domain id must be an int in [0, {MAX_DOMAIN_ID}], got {value!r}")
    return value


def domain_id_from_env(environ: Mapping[str, str] | None = None) -> int:
    """The domain id from ``ROS_DOMAIN_ID`` (0 when unset or empty); BusError when malformed."""
    raw = (os.environ if environ is None else environ).get(DOMAIN_ENV, "").strip()
    if not raw:
        return 0
    try:
        value = int(raw)
    except ValueError:
        raise BusError(
            f"{DOMAIN_ENV}={raw!r} is not an integer; expected 0..{MAX_DOMAIN_ID}"
        ) from None
    return check_domain_id(value)


_ROS_TYPE = re.compile(r"(?P<pkg>[A-Za-z][A-Za-z0-9_]*)/(?P<kind>msg|srv|action)/(?P<name>\w+)\Z")
_DDS_TYPE = re.compile(
    r"(?P<pkg>[A-Za-z][A-Za-z0-9_]*)::(?P<kind>msg|srv|action)::dds_::(?P<name>\w+)_\Z"
)


def dds_type_name(type_name: str) -> str:
    """``pkg/msg/Name`` → ``pkg::msg::dds_::Name_`` (the type as rmw_zenoh names it)."""
    match = _ROS_TYPE.match(type_name)
    if match is None:
        raise BusError(f"{type_name!r} is not a ROS type name like 'pkg/msg/Name'")
    return f"{match['pkg']}::{match['kind']}::dds_::{match['name']}_"


def ros_type_name(dds_name: str) -> str:
    """Inverse of :func:`dds_type_name`; raises BusError for other text."""
    match = _DDS_TYPE.match(dds_name)
    if match is None:
        raise BusError(f"{dds_name!r} is not a DDS type name like 'pkg::msg::dds_::Name_'")
    return f"{match['pkg']}/{match['kind']}/{match['name']}"


class DataKey(NamedTuple):
    """The parts of a data key: domain id, topic, ROS type name and type hash."""

    domain_id: int
    topic: str
    type_name: str
    type_hash: str


def data_key(domain_id: int, topic: str, type_name: str, type_hash: str) -> str:
    """The Zenoh key of a topic's samples, e.g. ``0/hb50/x/pkg::msg::dds_::T_/RIHS01_…``."""
    return f"{domain_id}/{validate_topic_name(topic)[1:]}/{dds_type_name(type_name)}/{type_hash}"


def topic_selector(domain_id: int, topic: str) -> str:
    """Selects every sample of ``topic`` in a domain whatever its type and hash."""
    return f"{domain_id}/{validate_topic_name(topic)[1:]}/*/*"


def domain_selector(domain_id: int) -> str:
    """Selects every sample of every topic in a domain (the recorder's subscription)."""
    return f"{domain_id}/**"


def parse_data_key(key: str) -> DataKey:
    """Split a data key; raises BusError (TopicNameError for a bad topic) for other keys."""
    parts = key.split("/")
    if len(parts) < 4 or not parts[0].isdigit():
        raise BusError(f"{key!r} is not a data key '<domain>/<topic>/<DDS type>/<hash>'")
    topic = validate_topic_name("/" + "/".join(parts[1:-2]))
    return DataKey(int(parts[0]), topic, ros_type_name(parts[-2]), parts[-1])


def ros_namespace(namespace: str) -> str:
    """The fully qualified ROS 2 namespace of a jointbus node namespace: ``""`` and ``"/"`` are
    the root ``"/"``, ``"arm3"`` and ``"/arm3"`` are ``"/arm3"`` (what rcl hands rmw_zenoh, and
    so what its graph tokens carry). Raises TopicNameError for one that is not a ROS 2 name."""
    stripped = namespace.strip("/") if isinstance(namespace, str) else namespace
    if stripped == "":
        return "/"
    return validate_topic_name(f"/{stripped}")


__all__ = [
    "DOMAIN_ENV",
    "MAX_DOMAIN_ID",
    "DataKey",
    "check_domain_id",
    "data_key",
    "dds_type_name",
    "domain_id_from_env",
    "domain_selector",
    "parse_data_key",
    "ros_namespace",
    "ros_type_name",
    "topic_selector",
    "validate_topic_name",
]
