"""DDS type support for jointbus messages: ROS 2's DDS type names, and a type for Cyclone DDS.

Where it sits: :mod:`jointbus.bus`, below :mod:`jointbus.bus.dds_transport`; it reads the codec's
schemas (:mod:`jointbus.codec.schema`) and builds nothing that ever serialises a message.

ROS 2 on DDS names the type of ``pkg/msg/Name`` ``pkg::msg::dds_::Name_`` (a service's request and
response ``pkg::srv::dds_::Name_Request_`` / ``..._Response_``), and its samples are XCDR1
little-endian, keyless. Those bytes are the codec's own (``Message.to_cdr``): the transport writes
them as they are. Cyclone DDS's Python binding nevertheless needs a *type* to create a topic: it
announces the type's XTypes TypeInformation in discovery, and a reader of another participant that
also announces one matches only an assignable type. So each message class gets an ``IdlStruct``
built here from the same schema the codec reads — member names, primitive kinds, sequences, fixed
arrays and nested structs exactly as rosidl's IDL declares them (``byte`` → ``octet``, ``char`` →
``uint8``; a class's ``DDS_STRING_BOUNDS`` gives ``string<=N`` fields their bound), final
extensibility — used for its type information only. A Cyclone DDS program whose
hand-written ROS 2 types match the ``.msg`` (the tests' independent peer) therefore matches
jointbus; ROS 2's rmws announce no type information and match on the type name alone.

``IdlStruct`` classes resolve their annotations when created, so this module builds them with
:func:`cyclonedds.idl.make_idl_struct` from real type objects (the notes warn that ``from
__future__ import annotations`` breaks annotations written as text).
"""

from __future__ import annotations

import threading
from typing import Any, Final, cast

from cyclonedds.idl import IdlStruct, make_idl_struct
from cyclonedds.idl import types as idl

from jointbus.bus.names import dds_type_name
from jointbus.codec.schema import FieldSchema, MessageSchema, schema_of
from jointbus.codec.wire import Primitive
from jointbus.messages.base import Message

_PRIMITIVES: Final[dict[Primitive, Any]] = {
    Primitive.BOOL: bool,
    Primitive.BYTE: idl.byte,
    Primitive.CHAR: idl.uint8,
    Primitive.INT8: idl.int8,
    Primitive.UINT8: idl.uint8,
    Primitive.INT16: idl.int16,
    Primitive.UINT16: idl.uint16,
    Primitive.INT32: idl.int32,
    Primitive.UINT32: idl.uint32,
    Primitive.INT64: idl.int64,
    Primitive.UINT64: idl.uint64,
    Primitive.FLOAT32: idl.float32,
    Primitive.FLOAT64: idl.float64,
    Primitive.STRING: str,
}

#: Members of rmw_cyclonedds's request header, put before a service request's or reply's fields
#: (``cdds_request_header_t``: the client's 64-bit id, then the request's sequence number).
REQUEST_HEADER_FIELDS: Final = (("client_guid", idl.uint64), ("sequence_number", idl.int64))

_lock = threading.Lock()
_structs: dict[tuple[str, bool], type[IdlStruct]] = {}


def _class_name(type_name: str) -> str:
    return type_name.replace("/", "_").replace(":", "_")


def _element_type(element: object) -> Any:
    if isinstance(element, Primitive):
        return _PRIMITIVES[element]
    return _struct_of(schema_of(cast(type[Any], element)))


def _field_type(field: FieldSchema) -> Any:
    element = _element_type(field.element)
    if field.kind == "sequence":
        return idl.sequence[element]  # type: ignore[misc]
    if field.kind == "array":
        return idl.array[element, field.fixed_length]  # type: ignore[misc]
    return element


def _struct_of(schema: MessageSchema, *, type_name: str = "", request_header: bool = False) -> Any:
    """The IdlStruct of ``schema`` named ``type_name`` (default: its DDS type name)."""
    name = type_name or dds_type_name(schema.type_name)
    key = (name, request_header)
    known = _structs.get(key)
    if known is not None:
        return known
    fields: dict[str, Any] = {}
    if request_header:
        fields.update(REQUEST_HEADER_FIELDS)
    bounds: dict[str, int] = getattr(schema.cls, "DDS_STRING_BOUNDS", {})
    for field in schema.fields:
        bound = bounds.get(field.name)
        fields[field.name] = (
            idl.bounded_str[bound] if bound else _field_type(field)  # type: ignore[misc]
        )
    if not fields:
        # rosidl gives an empty message one uint8 member (``structure_needs_at_least_one_member``),
        # and its CDR is that byte: the codec writes the same.
        fields["structure_needs_at_least_one_member"] = idl.uint8
    made = make_idl_struct(_class_name(name), name, fields)
    _structs[key] = made
    return made


def idl_struct_of(msg_type: type[Message]) -> type[IdlStruct]:
    """The Cyclone DDS type of a message class's topic (type information only; cached)."""
    with _lock:
        made: type[IdlStruct] = _struct_of(schema_of(msg_type))
        return made


def _message_classes() -> list[type[Message]]:
    found: list[type[Message]] = []
    stack: list[type[Message]] = list(Message.__subclasses__())
    while stack:
        cls = stack.pop()
        found.append(cls)
        stack.extend(cls.__subclasses__())
    return found


def idl_struct_named(type_name: str, hint: type[Message] | None = None) -> type[IdlStruct] | None:
    """The Cyclone DDS type of ROS type ``type_name``: ``hint``'s when its fields are the wire
    record's, else that of a loaded message class of that name whose are (a typed Python-facing
    class such as the multi-DoF ``JointState`` travels as its wire record); None when this process
    knows no such class."""
    candidates = [hint] if hint is not None else []
    candidates += [c for c in _message_classes() if getattr(c, "TYPE_NAME", None) == type_name]
    for cls in candidates:
        try:
            return idl_struct_of(cls)
        except Exception:  # fields that are not the wire record's: try the next class
            continue
    return None


def service_struct_of(msg_type: type[Message], dds_name: str) -> type[IdlStruct]:
    """The Cyclone DDS type of a service's request or reply topic, ``dds_name``
    (``pkg::srv::dds_::Name_Request_``): rmw_cyclonedds's request header, then the message's
    fields."""
    with _lock:
        made: type[IdlStruct] = _struct_of(
            schema_of(msg_type), type_name=dds_name, request_header=True
        )
        return made


__all__ = ["REQUEST_HEADER_FIELDS", "idl_struct_named", "idl_struct_of", "service_struct_of"]
