"""Wire rules: the message-layer hook that lets the fast path build messages without constructors.

Where it sits: :mod:`jointbus.codec`, beside :mod:`jointbus.codec.schema`; read by the stable-layout
fast path (:mod:`jointbus.codec.layout` and its compiled core). A message class opts in by declaring

.. code-block:: python

    WIRE_RULES: ClassVar[Mapping[str, WireRule]] = {"kp": WireRule(finite=True, ge=0.0), ...}

Why it exists: decoding the 500 Hz messages through their constructors cost 50–63 % of a round
trip (8–13 µs of 16–20 µs), almost all of it re-normalising values the decoder already knows are
right (types, lengths, float32 rounding). A class's ``WIRE_RULES`` is its promise that, for content
of one cached layout, the constructor's rules reduce to these per-value checks; the fast path then
allocates the object and sets its fields directly after checking only them.

What a layout already guarantees, so rules need not repeat it: every value has its exact wire type
(``float`` rounded to float32 for float32 fields, ``int`` within the wire range, ``bool``,
``bytes``, tuples of the layout's lengths, nested messages of the exact class), and every string,
string sequence and sequence length is the same as in the message the layout was compiled from,
which the constructor accepted. So rules on names (non-empty, unique) and on lengths (one value per
name) hold for every message of the layout. ``WIRE_RULES`` covers what a *number* (or bool) on the
wire can still break: NaN or infinity where not allowed, a bound, an enum value.

The contract is checked, not trusted: ``tests/codec/test_wire_rules.py`` decodes random valid and
invalid wire content with every engine and asserts that each accepts exactly what the constructor
accepts and builds an equal object. A class *without* its own ``WIRE_RULES`` (a subclass does not
inherit its parent's: it may add rules) is always built by calling its constructor.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from jointbus.codec.errors import SchemaError
from jointbus.codec.schema import schema_of
from jointbus.codec.wire import INT_RANGES, Primitive

_FLOATS: Final = frozenset({Primitive.FLOAT32, Primitive.FLOAT64})
#: Integer primitives a bound or an enum may apply to (their values fit a C ``long long``).
_SMALL_INTS: Final = frozenset(
    {
        Primitive.BYTE,
        Primitive.CHAR,
        Primitive.INT8,
        Primitive.UINT8,
        Primitive.INT16,
        Primitive.UINT16,
        Primitive.INT32,
        Primitive.UINT32,
    }
)
#: Largest span of enum values a table may cover (the compiled core indexes a tuple with it).
MAX_ENUM_SPAN: Final = 1024


@dataclass(frozen=True, slots=True)
class WireRule:
    """Checks for one numeric field (every element, for a sequence) decoded from the wire.

    ``finite``: reject NaN and ±inf. ``no_inf``: reject ±inf, allow NaN ("not reported").
    ``ge`` / ``le``: inclusive bounds; NaN passes them (combine with ``finite`` to reject it).
    ``enum``: an :class:`enum.IntEnum`; a value that is not a member is rejected, one that is
    becomes the member (as the constructor converts it).
    """

    finite: bool = False
    no_inf: bool = False
    ge: float | None = None
    le: float | None = None
    enum: type[enum.IntEnum] | None = None

    def accepts(self, value: Any) -> bool:
        """Whether one element passes (the reference semantics every engine implements)."""
        if self.finite and not math.isfinite(value):
            return False
        if self.no_inf and math.isinf(value):
            return False
        if self.ge is not None and value < self.ge:
            return False
        if self.le is not None and value > self.le:
            return False
        return self.enum is None or value in enum_members(self.enum)


def enum_members(enum_cls: type[enum.IntEnum]) -> dict[int, enum.IntEnum]:
    """``{value: member}`` of an IntEnum (what ``enum_cls(value)`` returns for each valid value)."""
    return {int(member.value): member for member in enum_cls}


_CACHE: dict[type[Any], Mapping[str, WireRule] | None] = {}


def rules_of(cls: type[Any]) -> Mapping[str, WireRule] | None:
    """The validated ``WIRE_RULES`` declared by ``cls`` itself, or ``None`` (use the constructor).

    Raises :class:`SchemaError` for a declaration that names an unknown field, puts a rule on a
    field it cannot apply to, or a class the fast path cannot build without its constructor.
    """
    if cls in _CACHE:
        return _CACHE[cls]
    declared = cls.__dict__.get("WIRE_RULES")
    rules = None if declared is None else _validate(cls, declared)
    _CACHE[cls] = rules
    return rules


def _validate(cls: type[Any], declared: object) -> Mapping[str, WireRule]:
    name = cls.__name__
    if not isinstance(declared, Mapping):
        raise SchemaError(f"{name}.WIRE_RULES must map field names to WireRule")
    schema = schema_of(cls)
    by_name = {f.name: f for f in schema.fields}
    if any(not f.init for f in dataclasses.fields(cls)):
        raise SchemaError(f"{name} has fields outside __init__; it cannot declare WIRE_RULES")
    for field_name, rule in declared.items():
        field = by_name.get(field_name)
        if field is None:
            raise SchemaError(f"{name}.WIRE_RULES names {field_name!r}, which is not a wire field")
        if not isinstance(rule, WireRule):
            raise SchemaError(f"{name}.WIRE_RULES[{field_name!r}] is not a WireRule")
        element = field.element
        if field.kind == "message" or not isinstance(element, Primitive):
            raise SchemaError(f"{name}.{field_name}: rules apply to numbers, not messages")
        if element in (Primitive.UINT8, Primitive.BYTE) and field.kind != "primitive":
            raise SchemaError(f"{name}.{field_name}: rules do not apply to byte sequences")
        if (rule.finite or rule.no_inf) and element not in _FLOATS:
            raise SchemaError(f"{name}.{field_name}: finite / no_inf apply to float fields")
        bounded = rule.ge is not None or rule.le is not None
        if (bounded or rule.enum is not None) and element not in _FLOATS | _SMALL_INTS:
            raise SchemaError(f"{name}.{field_name}: bounds and enums need a float or ≤32-bit int")
        if rule.enum is not None:
            _check_enum(name, field_name, rule.enum, element)
    return dict(declared)


def _check_enum(name: str, field_name: str, enum_cls: object, element: Primitive) -> None:
    # An IntFlag is not an IntEnum: its combinations are values no member table can list.
    if not isinstance(enum_cls, type) or not issubclass(enum_cls, enum.IntEnum):
        raise SchemaError(f"{name}.{field_name}: enum must be an IntEnum (not a Flag)")
    if element not in _SMALL_INTS:
        raise SchemaError(f"{name}.{field_name}: an enum needs an integer field")
    values = list(enum_members(enum_cls))
    lo, hi = INT_RANGES[element]
    if not values or min(values) < lo or max(values) > hi:
        raise SchemaError(f"{name}.{field_name}: {enum_cls.__name__} values do not fit the field")
    if max(values) - min(values) >= MAX_ENUM_SPAN:
        raise SchemaError(f"{name}.{field_name}: {enum_cls.__name__} values span too widely")
