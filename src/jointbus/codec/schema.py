"""Schemas derived from message dataclasses: the field list read by the CDR engine and ``.msg``.

Where it sits: :mod:`jointbus.codec`, above :mod:`jointbus.codec.wire`, below every message. A
message class is a frozen dataclass with a ``TYPE_NAME`` class variable (the ROS 2 name, e.g.
``hb50_commons/msg/BridgeData``) whose fields are annotated with the aliases of
:mod:`jointbus.codec.wire` (or with another message class, or ``tuple[OtherMessage, ...]``).
:func:`schema_of` reads those annotations once per class and caches the result.

Constants (``uint8 OK=1`` lines in ``.msg``) are declared as ``MSG_CONSTANTS``: a tuple of
``(name, Primitive, value)``.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass
from typing import Any, Final

from jointbus.codec.errors import SchemaError
from jointbus.codec.wire import Primitive, Seq

_PLAIN: Final[dict[object, Primitive]] = {
    bool: Primitive.BOOL,
    float: Primitive.FLOAT64,
    str: Primitive.STRING,
}


@dataclass(frozen=True, slots=True)
class FieldSchema:
    """One field: its name, wire type and, for sequences, the element and fixed length.

    ``kind`` is ``"primitive"``, ``"message"``, ``"sequence"`` (unbounded ``T[]``) or ``"array"``
    (fixed ``T[N]``). ``element`` is a :class:`Primitive` or a message class.
    """

    name: str
    kind: str
    element: object
    fixed_length: int | None = None

    @property
    def is_primitive_element(self) -> bool:
        return isinstance(self.element, Primitive)


@dataclass(frozen=True, slots=True)
class MessageSchema:
    """The wire description of one message class."""

    type_name: str
    cls: type[Any]
    fields: tuple[FieldSchema, ...]
    constants: tuple[tuple[str, Primitive, int | float | str], ...]

    def dependencies(self) -> tuple[MessageSchema, ...]:
        """Every nested message schema, depth first, each once (the order ``.msg`` bundles use)."""
        seen: dict[str, MessageSchema] = {}

        def visit(schema: MessageSchema) -> None:
            for field in schema.fields:
                if not isinstance(field.element, Primitive):
                    nested = schema_of(field.element)  # type: ignore[arg-type]
                    if nested.type_name not in seen:
                        seen[nested.type_name] = nested
                        visit(nested)

        visit(self)
        return tuple(seen.values())


_CACHE: dict[type[Any], MessageSchema] = {}


def is_message_class(obj: object) -> bool:
    """True for a dataclass type that declares a ``TYPE_NAME``."""
    return (
        isinstance(obj, type)
        and dataclasses.is_dataclass(obj)
        and isinstance(getattr(obj, "TYPE_NAME", None), str)
    )


def schema_of(cls: type[Any]) -> MessageSchema:
    """Return (and cache) the schema of a message class; :class:`SchemaError` if unusable."""
    cached = _CACHE.get(cls)
    if cached is not None:
        return cached
    if not is_message_class(cls):
        raise SchemaError(f"{cls!r} is not a message class (a dataclass with TYPE_NAME)")
    hints = typing.get_type_hints(cls, include_extras=True)
    fields = tuple(
        _field_schema(cls, f.name, hints[f.name]) for f in dataclasses.fields(cls) if f.init
    )
    if not fields:
        # ROS 2 gives an empty message one uint8 member; an empty wire layout would disagree with
        # every ROS 2 peer (and a sequence of them would cost nothing per element to claim).
        raise SchemaError(
            f"{cls.__name__} has no wire fields; declare `structure_needs_at_least_one_member: "
            "UInt8 = 0` as ROS 2 does for empty messages"
        )
    constants = tuple(getattr(cls, "MSG_CONSTANTS", ()))
    schema = MessageSchema(cls.TYPE_NAME, cls, fields, constants)
    _CACHE[cls] = schema
    return schema


def _field_schema(cls: type[Any], name: str, hint: object) -> FieldSchema:
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        metadata = hint.__metadata__  # type: ignore[attr-defined]
        marker = next((m for m in metadata if isinstance(m, Primitive | Seq)), None)
        if isinstance(marker, Primitive):
            return FieldSchema(name, "primitive", marker)
        if isinstance(marker, Seq):
            kind = "sequence" if marker.fixed_length is None else "array"
            return FieldSchema(name, kind, marker.element, marker.fixed_length)
        hint = typing.get_args(hint)[0]
        origin = typing.get_origin(hint)
    if hint in _PLAIN:
        return FieldSchema(name, "primitive", _PLAIN[hint])
    if is_message_class(hint):
        return FieldSchema(name, "message", hint)
    if origin is tuple:
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            element = args[0]
            if is_message_class(element):
                return FieldSchema(name, "sequence", element)
            if element in _PLAIN:
                return FieldSchema(name, "sequence", _PLAIN[element])
    raise SchemaError(
        f"{cls.__name__}.{name}: annotation {hint!r} has no wire type; use an alias from "
        "jointbus.codec.wire, a message class, or tuple[MessageClass, ...]"
    )
