"""rosbags as an independent CDR oracle for every jointbus message test.

Where it sits: :mod:`support`, shared by every message test
(``from support.rosbags_oracle import ...``). rosbags is the reference the issue names:
our ``to_cdr()`` must be byte-identical to its ``serialize_cdr`` for the same content. The types are
registered in rosbags *from our own* ``msgdef()``, so a definition that rosbags cannot parse, or one
that disagrees with a type rosbags already knows (a ROS 2 Humble type), fails here too.

The rosbags object is built generically by walking our schema, never by hand per type, so the oracle
cannot share a mistake with a message's own code:

- primitives pass through (``int`` / ``float`` / ``bool`` / ``str``), except a scalar ``byte``
  above 127: rosbags packs scalar ``byte`` as a signed ``int8`` (the ROS 1 meaning) while ROS 2
  defines it as an octet (0..255, our convention), so it is handed over as the same bit pattern;
- numeric and bool sequences / fixed arrays become numpy arrays of the wire dtype (rosbags'
  convention); ``bytes`` become ``np.uint8`` arrays;
- string sequences become lists of ``str``;
- nested messages become the rosbags class registered under the nested ``TYPE_NAME``.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.store import Typestore

from jointbus.codec import schema_of
from jointbus.codec.schema import FieldSchema
from jointbus.codec.wire import Primitive

#: numpy dtype of each primitive inside a rosbags array (little-endian, as rosbags builds them).
NUMPY_DTYPES: dict[Primitive, str] = {
    Primitive.BOOL: "bool",
    Primitive.BYTE: "uint8",
    Primitive.CHAR: "uint8",
    Primitive.INT8: "int8",
    Primitive.UINT8: "uint8",
    Primitive.INT16: "<i2",
    Primitive.UINT16: "<u2",
    Primitive.INT32: "<i4",
    Primitive.UINT32: "<u4",
    Primitive.INT64: "<i8",
    Primitive.UINT64: "<u8",
    Primitive.FLOAT32: "<f4",
    Primitive.FLOAT64: "<f8",
}

_REGISTERED: set[str] = set()


@functools.cache
def typestore() -> Typestore:
    """The session's rosbags type store (ROS 2 Humble types plus everything :func:`register`-ed)."""
    return get_typestore(Stores.ROS2_HUMBLE)


def register(cls: type[Any]) -> None:
    """Register ``cls.msgdef()`` under ``cls.TYPE_NAME`` (and its dependencies); idempotent.

    Raises rosbags' ``TypesysError`` when our definition of a type rosbags already knows (e.g.
    ``std_msgs/msg/Header``) differs from it: that is a wire incompatibility, not a test problem.
    """
    name: str = cls.TYPE_NAME
    if name in _REGISTERED:
        return
    store = typestore()
    store.register(get_types_from_msg(cls.msgdef(), name))
    _REGISTERED.add(name)


def _field_to_rosbags(field: FieldSchema, value: Any) -> Any:
    element = field.element
    if field.kind == "primitive":
        if element is Primitive.BYTE and isinstance(value, int) and value > 0x7F:
            return value - 0x100  # rosbags holds a scalar byte as int8 (ROS 1); same wire byte
        return value
    if field.kind == "message":
        return to_rosbags(value)
    if isinstance(element, Primitive):
        if element is Primitive.STRING:
            return list(value)
        dtype = NUMPY_DTYPES[element]
        if isinstance(value, bytes | bytearray | memoryview):
            return np.frombuffer(bytes(value), dtype=np.uint8).copy()
        return np.array(list(value), dtype=dtype)
    return [to_rosbags(item) for item in value]


def to_rosbags(msg: Any) -> Any:
    """The rosbags message object holding the same content as our message ``msg``."""
    cls = type(msg)
    register(cls)
    schema = schema_of(cls)
    rosbags_cls = typestore().types[schema.type_name]
    kwargs = {f.name: _field_to_rosbags(f, getattr(msg, f.name)) for f in schema.fields}
    return rosbags_cls(**kwargs)


def rosbags_cdr(msg: Any) -> bytes:
    """rosbags' ``serialize_cdr`` (little-endian) of the same content as our message ``msg``."""
    obj = to_rosbags(msg)
    return bytes(typestore().serialize_cdr(obj, type(msg).TYPE_NAME))


def _field_from_rosbags(field: FieldSchema, value: Any) -> Any:
    element = field.element
    if field.kind == "primitive":
        if isinstance(value, np.generic):
            value = value.item()
        if element is Primitive.BYTE and isinstance(value, int) and value < 0:
            return value + 0x100  # ROS 2 ``byte`` is an octet (0..255); rosbags reads int8
        return value
    if field.kind == "message":
        return from_rosbags(element, value)  # type: ignore[arg-type]
    if isinstance(element, Primitive):
        if element is Primitive.STRING:
            return tuple(value)
        if element in (Primitive.UINT8, Primitive.BYTE):
            return np.ascontiguousarray(value).tobytes()  # rosbags: uint8 or int8 (byte[])
        return tuple(np.asarray(value).tolist())
    return tuple(from_rosbags(element, item) for item in value)  # type: ignore[arg-type]


def from_rosbags(cls: type[Any], obj: Any) -> Any:
    """Our message of class ``cls`` built from a rosbags object (goes through validation)."""
    schema = schema_of(cls)
    return cls(*(_field_from_rosbags(f, getattr(obj, f.name)) for f in schema.fields))


def rosbags_decode(cls: type[Any], data: bytes) -> Any:
    """rosbags' ``deserialize_cdr`` of ``data`` as ``cls.TYPE_NAME``, converted to our message."""
    register(cls)
    return from_rosbags(cls, typestore().deserialize_cdr(data, cls.TYPE_NAME))
