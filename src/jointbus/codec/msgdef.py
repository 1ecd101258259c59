"""ROS 2 ``.msg`` text for a message schema, as MCAP's ``ros2msg`` schema encoding stores it.

Where it sits: :mod:`jointbus.codec`, beside the CDR engine; both read the same
:class:`~jointbus.codec.schema.MessageSchema`, so the published definition always describes the
bytes we put on the wire. The bundle format is the one rosbag2 and Foxglove write: the main
definition, then for every nested type a separator line of 80 ``=``, ``MSG: pkg/Name`` and its
definition.
"""

from __future__ import annotations

from jointbus.codec.schema import FieldSchema, MessageSchema, schema_of
from jointbus.codec.wire import Primitive

_SEPARATOR = "=" * 80


def short_name(type_name: str) -> str:
    """``pkg/msg/Name`` → ``pkg/Name`` (the spelling used inside ``.msg`` files)."""
    parts = type_name.split("/")
    if len(parts) == 3 and parts[1] == "msg":
        return f"{parts[0]}/{parts[2]}"
    return type_name


def _type_text(field: FieldSchema) -> str:
    element = field.element
    if isinstance(element, Primitive):
        base = element.value
    else:
        base = short_name(schema_of(element).type_name)  # type: ignore[arg-type]
    if field.kind == "sequence":
        return f"{base}[]"
    if field.kind == "array":
        return f"{base}[{field.fixed_length}]"
    return base


def _constant_text(name: str, primitive: Primitive, value: int | float | str) -> str:
    if primitive is Primitive.STRING:
        return f'{primitive.value} {name}="{value}"'
    if primitive is Primitive.BOOL:
        return f"{primitive.value} {name}={'true' if value else 'false'}"
    return f"{primitive.value} {name}={value}"


def definition_text(schema: MessageSchema) -> str:
    """The ``.msg`` body of one type (constants first, then fields), without dependencies."""
    lines = [_constant_text(*c) for c in schema.constants]
    lines += [f"{_type_text(f)} {f.name}" for f in schema.fields]
    return "\n".join(lines) + "\n"


def msgdef_bundle(schema: MessageSchema) -> str:
    """The full definition of ``schema`` with every nested type appended (rosbag2 / MCAP style)."""
    parts = [definition_text(schema)]
    for dep in schema.dependencies():
        parts.append(f"{_SEPARATOR}\nMSG: {short_name(dep.type_name)}\n{definition_text(dep)}")
    return "".join(parts)
