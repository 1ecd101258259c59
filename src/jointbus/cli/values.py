"""Build a message from the VALUES a user types: ``jointbus topic pub /t TYPE '{level: 2, ...}'``.

Where it sits: :mod:`jointbus.cli`, used by ``topic pub``; it reads message classes (any frozen
dataclass, wire records of :mod:`jointbus.messages` and the typed Python-facing classes alike) and
imports nothing above :mod:`jointbus.messages`.

VALUES is YAML (so JSON works too, JSON being YAML), a mapping of field names to values, as
``ros2 topic pub`` takes it. :func:`build_message` walks the class's dataclass fields and their type
annotations recursively:

- a nested message (or math type) is a mapping of its own fields; a sequence field is a YAML list
  (stored as a tuple); a ``byte[]`` / ``uint8[]`` field is a list of ints in [0, 255] or a string
  (UTF-8 encoded);
- integer fields take ints; a name from the type's ``.msg`` constants is accepted too
  (``level: WARN`` for ``hb50_commons/msg/Status``); float fields take ints and floats (``.nan``,
  ``.inf`` in YAML); string fields take strings only (quote ``'123'``: a YAML number is a number);
- a field that is missing gets the class's default; a field with no default is an error naming
  it; an unknown field is an error naming it and listing the valid ones; a default the class's
  own checks then refuse (an empty ``brake`` where ``JointImpedance`` wants one value per name)
  is the class's error with a note saying the field was not given;
- **header stamps**: a ``std_msgs/msg/Header`` whose ``stamp`` is not given is stamped with the
  current wall-clock time (``now_ns``, as ROS stamps are), also when the whole ``header`` is
  missing; ``auto_stamp=False`` keeps the class default (zero) instead.

Errors in VALUES raise :class:`ValuesError`, whose ``path`` names the field
(``leg[2].foot_pos_body.x``). Errors the message class itself raises (its own validation: lengths,
limits, NaN) propagate unchanged, with a note naming the field path being built.
"""

from __future__ import annotations

import dataclasses
import difflib
import enum
import time
import types
import typing
from collections.abc import Mapping
from typing import Any, Final, Union

import yaml

from jointbus.codec.wire import INT_RANGES, Primitive, Seq

#: Type name of the header whose stamp is filled in when not given.
HEADER_TYPE: Final = "std_msgs/msg/Header"

_INT_PRIMITIVES: Final = frozenset(INT_RANGES)


class ValuesError(ValueError):
    """VALUES that cannot become the requested message.

    ``path`` is the dotted field path (``""`` for the whole VALUES), ``value`` what was given and
    ``expected`` what would have been accepted.
    """

    def __init__(self, path: str, value: object, expected: str) -> None:
        self.path = path
        self.value = value
        self.expected = expected
        where = f"field {path!r}" if path else "VALUES"
        if value is MISSING:
            super().__init__(f"{where} is missing: expected {expected}")
        else:
            super().__init__(f"{where} = {_short(value)}: expected {expected}")


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


#: The ``value`` of a :class:`ValuesError` about a field that was not given.
MISSING: Final[Any] = _Missing()


def _short(value: object, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def parse_values(text: str) -> dict[str, Any]:
    """Parse VALUES (YAML or JSON) into a mapping; an empty text is ``{}``."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        detail = str(exc).replace("\n", " ")
        raise ValuesError("", text, f"YAML or JSON text ({detail})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValuesError("", data, "a mapping of field names to values, e.g. '{data: hello}'")
    for key in data:
        if isinstance(key, bool):
            raise _boolean_key(text, key)
        if not isinstance(key, str):
            raise ValuesError("", key, "field names that are strings")
    return data


def _boolean_key(text: str, key: bool) -> ValuesError:
    """YAML 1.1 (PyYAML's) reads a bare ``on``/``off``/``yes``/``no`` key as a bool: a field named
    ``on`` (``ActuatorPowerRequest``) must be quoted. Say so with the spelling the user typed."""
    node = yaml.compose(text)
    typed = next(
        (
            k.value
            for k, _ in getattr(node, "value", ())
            if isinstance(k, yaml.ScalarNode)
            and k.tag == "tag:yaml.org,2002:bool"
            and k.style is None
        ),
        str(key).lower(),
    )
    return ValuesError(
        "",
        typed,
        f"a field name, but YAML 1.1 reads the bare key {typed!r} as {key}: quote it, e.g. "
        f"'{{\"{typed}\": false}}'",
    )


def type_label(cls: type[Any]) -> str:
    """How errors name a class: its ROS type name when it has one."""
    name = getattr(cls, "TYPE_NAME", None)
    return name if isinstance(name, str) else cls.__qualname__


def public_fields(cls: type[Any]) -> list[dataclasses.Field[Any]]:
    """The fields a user sets: constructor fields not starting with ``_``."""
    return [f for f in dataclasses.fields(cls) if f.init and not f.name.startswith("_")]


def _has_default(field: dataclasses.Field[Any]) -> bool:
    return (
        field.default is not dataclasses.MISSING or field.default_factory is not dataclasses.MISSING
    )


def build_message(
    cls: type[Any],
    values: Mapping[str, Any] | None,
    *,
    auto_stamp: bool = True,
    now_ns: int | None = None,
    unchecked: bool = False,
) -> Any:
    """An instance of the dataclass ``cls`` built from ``values`` (see the module docstring).

    ``now_ns`` (wall-clock ns since the epoch) is the stamp for unstamped headers; default now.

    ``unchecked=True`` skips the message classes' own validation (``__post_init__``: lengths,
    NaN, limits, signs) and builds the object field by field, so that ``topic pub --unchecked``
    can send what a faulty or hostile node would, and a user can test the receiver's defences.
    VALUES must still have the fields' wire types (a float field takes numbers), since the bytes
    must be encodable. Such an object breaks the class's promises: encode it, never use it.
    """
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise TypeError(f"{cls!r} is not a message class (a dataclass)")
    builder = _Builder(auto_stamp, time.time_ns() if now_ns is None else now_ns, unchecked)
    return builder.message(cls, {} if values is None else values, "")


def _unvalidated(cls: type[Any], kwargs: Mapping[str, Any]) -> Any:
    """An instance of the frozen dataclass ``cls`` holding ``kwargs`` (defaults for the rest)
    without running its ``__post_init__`` checks (see :func:`build_message`)."""
    obj = object.__new__(cls)
    for field in dataclasses.fields(cls):
        if field.name in kwargs:
            value = kwargs[field.name]
        elif field.default is not dataclasses.MISSING:
            value = field.default
        elif field.default_factory is not dataclasses.MISSING:
            value = field.default_factory()
        else:  # pragma: no cover - the builder already required every field without a default
            raise TypeError(f"{type_label(cls)}: no value for {field.name!r}")
        object.__setattr__(obj, field.name, value)
    return obj


def _default_text(field: dataclasses.Field[Any]) -> str:
    """``an empty list`` / ``0.0``: the default a missing field took, for an error's note."""
    if field.default_factory is not dataclasses.MISSING:
        default = field.default_factory()
    else:
        default = field.default
    if isinstance(default, tuple | list) and not default:
        return "an empty list"
    return repr(default)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


class _Builder:
    def __init__(self, auto_stamp: bool, now_ns: int, unchecked: bool = False) -> None:
        self.auto_stamp = auto_stamp
        self.now_ns = now_ns
        self.unchecked = unchecked

    # ---- messages ----------------------------------------------------------------------------
    def message(self, cls: type[Any], values: object, path: str) -> Any:
        if not isinstance(values, Mapping):
            raise ValuesError(path, values, f"a mapping of the fields of {type_label(cls)}")
        fields = public_fields(cls)
        by_name = {f.name: f for f in fields}
        for key in values:
            if key not in by_name:
                names = ", ".join(by_name) or "(none)"
                close = difflib.get_close_matches(str(key), list(by_name), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise ValuesError(
                    _join(path, str(key)),
                    values[key],
                    f"a field of {type_label(cls)}{hint}; its fields are: {names}",
                )
        hints = typing.get_type_hints(cls, include_extras=True)
        kwargs: dict[str, Any] = {}
        for field in fields:
            field_path = _join(path, field.name)
            hint = hints.get(field.name, Any)
            if field.name in values:
                kwargs[field.name] = self.value(hint, values[field.name], field_path, cls)
            elif self.auto_stamp and _is_header_class(hint):
                kwargs[field.name] = self.message(hint, {}, field_path)
            elif not _has_default(field):
                required = ", ".join(f.name for f in fields if not _has_default(f))
                raise ValuesError(
                    field_path,
                    MISSING,
                    f"a value: {type_label(cls)} has no default for it "
                    f"(required fields: {required})",
                )
        if self.auto_stamp and type_label(cls) == HEADER_TYPE and "stamp" not in values:
            stamp_hint = hints.get("stamp")
            from_ns = getattr(stamp_hint, "from_ns", None)
            if callable(from_ns):
                kwargs["stamp"] = from_ns(self.now_ns)
        if self.unchecked:
            return _unvalidated(cls, kwargs)
        try:
            return cls(**kwargs)
        except (ValueError, TypeError) as exc:
            refused = getattr(exc, "field", None)
            if refused in by_name and refused not in values and refused not in kwargs:
                exc.add_note(
                    f"{_join(path, refused)!r} was not given and took its default "
                    f"({_default_text(by_name[refused])}), which {type_label(cls)} refuses here: "
                    "give it in VALUES"
                )
            if path:
                exc.add_note(f"while building field {path!r} ({type_label(cls)})")
            raise

    # ---- one value ---------------------------------------------------------------------------
    def value(self, hint: Any, value: object, path: str, owner: type[Any]) -> Any:
        marker: object = None
        if typing.get_origin(hint) is typing.Annotated:
            marker = next((m for m in hint.__metadata__ if isinstance(m, Primitive | Seq)), None)
            hint = typing.get_args(hint)[0]
        if isinstance(marker, Primitive):
            return self.primitive(marker, value, path, owner)
        if isinstance(marker, Seq):
            return self.sequence(
                marker.element,
                fixed_length=marker.fixed_length,
                hint=hint,
                value=value,
                path=path,
                owner=owner,
            )
        return self.plain(hint, value, path, owner)

    def plain(self, hint: Any, value: object, path: str, owner: type[Any]) -> Any:
        origin = typing.get_origin(hint)
        if origin is Union or origin is types.UnionType:
            return self.union(typing.get_args(hint), value, path, owner)
        if hint is Any or hint is object:
            return value
        if hint is type(None):
            if value is not None:
                raise ValuesError(path, value, "null")
            return None
        if isinstance(hint, type) and issubclass(hint, enum.Enum):
            return _enum(hint, value, path)
        if hint is bool:
            return self.primitive(Primitive.BOOL, value, path, owner)
        if hint is int:
            return self.primitive(Primitive.INT64, value, path, owner, bounded=False)
        if hint is float:
            return self.primitive(Primitive.FLOAT64, value, path, owner)
        if hint is str:
            return self.primitive(Primitive.STRING, value, path, owner)
        if hint is bytes:
            return _bytes(value, path)
        if origin is tuple:
            args = typing.get_args(hint)
            if len(args) == 2 and args[1] is Ellipsis:
                return self.sequence(
                    args[0], fixed_length=None, hint=hint, value=value, path=path, owner=owner
                )
            return self.fixed_tuple(args, value, path, owner)
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            return self.message(hint, value, path)
        return value  # an annotation this builder does not know: the class validates it

    def union(self, members: tuple[Any, ...], value: object, path: str, owner: type[Any]) -> Any:
        if value is None and type(None) in members:
            return None
        candidates = [m for m in members if m is not type(None)]
        if len(candidates) == 1:
            return self.value(candidates[0], value, path, owner)
        # Scalars first so that ``1.5`` is a float, not a failed attempt at a Transform2D.
        candidates.sort(key=lambda m: 0 if m in (bool, int, float, str, bytes) else 1)
        problems: list[str] = []
        for member in candidates:
            try:
                return self.value(member, value, path, owner)
            except (ValueError, TypeError) as exc:
                problems.append(f"as {_hint_label(member)}: {exc}")
        raise ValuesError(
            path,
            value,
            "one of " + ", ".join(_hint_label(m) for m in members) + " — " + "; ".join(problems),
        )

    def sequence(
        self,
        element: object,
        *,
        fixed_length: int | None,
        hint: Any,
        value: object,
        path: str,
        owner: type[Any],
    ) -> Any:
        if element in (Primitive.BYTE, Primitive.UINT8) and hint is bytes:
            data = _bytes(value, path)
            if fixed_length is not None and len(data) != fixed_length:
                raise ValuesError(path, value, f"exactly {fixed_length} bytes, got {len(data)}")
            return data
        if isinstance(value, str | bytes) or not isinstance(value, list | tuple):
            raise ValuesError(path, value, "a list (YAML '[a, b]' or '- a' lines)")
        if fixed_length is not None and len(value) != fixed_length:
            raise ValuesError(
                path, value, f"a list of exactly {fixed_length} items, got {len(value)}"
            )
        items: list[Any] = []
        for index, item in enumerate(value):
            item_path = f"{path}[{index}]"
            if isinstance(element, Primitive):
                items.append(self.primitive(element, item, item_path, owner))
            else:
                items.append(self.value(element, item, item_path, owner))
        return tuple(items)

    def fixed_tuple(
        self, args: tuple[Any, ...], value: object, path: str, owner: type[Any]
    ) -> tuple[Any, ...]:
        if isinstance(value, str | bytes) or not isinstance(value, list | tuple):
            raise ValuesError(path, value, f"a list of {len(args)} items")
        if len(value) != len(args):
            raise ValuesError(path, value, f"a list of exactly {len(args)} items, got {len(value)}")
        return tuple(
            self.value(arg, item, f"{path}[{i}]", owner)
            for i, (arg, item) in enumerate(zip(args, value, strict=True))
        )

    def primitive(
        self,
        kind: Primitive,
        value: object,
        path: str,
        owner: type[Any],
        *,
        bounded: bool = True,
    ) -> Any:
        if kind is Primitive.BOOL:
            if type(value) is not bool:
                raise ValuesError(path, value, "true or false")
            return value
        if kind is Primitive.STRING:
            if not isinstance(value, str):
                raise ValuesError(path, value, f"a string (quote it: '{value}')")
            return value
        if kind in (Primitive.FLOAT32, Primitive.FLOAT64):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValuesError(path, value, f"a number ({kind.value})")
            return float(value)
        if kind in _INT_PRIMITIVES:
            if isinstance(value, str):
                value = _constant(owner, value, path, kind)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValuesError(path, value, f"an integer ({kind.value})")
            lo, hi = INT_RANGES[kind]
            if bounded and not lo <= value <= hi:
                raise ValuesError(path, value, f"an integer in [{lo}, {hi}] ({kind.value})")
            return int(value)
        raise ValuesError(path, value, f"a {kind.value}")  # pragma: no cover - every kind above


def _is_header_class(hint: Any) -> bool:
    return (
        isinstance(hint, type)
        and dataclasses.is_dataclass(hint)
        and getattr(hint, "TYPE_NAME", None) == HEADER_TYPE
    )


def _constant(owner: type[Any], name: str, path: str, kind: Primitive) -> object:
    """The value of the ``.msg`` constant ``name`` of ``owner`` (``level: WARN``)."""
    constants = {c[0]: c[2] for c in getattr(owner, "MSG_CONSTANTS", ())}
    if name in constants:
        return constants[name]
    names = ", ".join(constants)
    extra = f" or one of {type_label(owner)}'s constants ({names})" if names else ""
    raise ValuesError(path, name, f"an integer ({kind.value}){extra}")


def _enum(cls: type[enum.Enum], value: object, path: str) -> enum.Enum:
    if isinstance(value, str) and value in cls.__members__:
        return cls[value]
    try:
        return cls(value)
    except ValueError:
        names = ", ".join(f"{m.name} ({m.value!r})" for m in cls)
        raise ValuesError(path, value, f"one of {names}") from None


def _bytes(value: object, path: str) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            if isinstance(item, bool) or not isinstance(item, int) or not 0 <= item <= 255:
                raise ValuesError(f"{path}[{index}]", item, "a byte: an integer in [0, 255]")
        return bytes(value)
    raise ValuesError(path, value, "a list of integers in [0, 255] or a string (UTF-8)")


def _hint_label(hint: Any) -> str:
    if hint is type(None):
        return "null"
    if isinstance(hint, type):
        return type_label(hint) if dataclasses.is_dataclass(hint) else hint.__name__
    return str(hint)


__all__ = [
    "HEADER_TYPE",
    "MISSING",
    "ValuesError",
    "build_message",
    "parse_values",
    "public_fields",
    "type_label",
]
