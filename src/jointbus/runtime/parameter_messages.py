"""The wire records of live parameters: a node's parameter list, and a request to change one.

Where it sits: :mod:`jointbus.runtime`, beside
:class:`~jointbus.runtime.diagnostics.LoopDiagnostics` (the node's other self-description); read
and written by :mod:`jointbus.runtime.parameters` and by ``jointbus param``. Plain
``jointbus_msgs`` records with standard ROS field types, so a ROS 2 tool or Foxglove can decode
them from the ``.msg`` definition alone.

Three types:

- :class:`Parameter` — one parameter: name, type, value, inclusive bounds, unit, meaning. The value
  is typed, one field per type (as ROS 2's ``rcl_interfaces/ParameterValue``): ``float_value`` for
  ``TYPE_FLOAT``, ``int_value`` for ``TYPE_INT``, ``bool_value`` for ``TYPE_BOOL``; the others are
  zero / false. Typed fields rather than text so a plot can follow a gain as it is tuned.
  ``min`` / ``max`` are ``-inf`` / ``inf`` where the parameter is unbounded (always for a bool):
  infinity *is* the bound, not a sentinel.
- :class:`ParameterList` — all parameters of one node, published latched on ``/<ns>/parameters``
  when the node starts and again after every change, so a late joiner (``jointbus param list``)
  reads the current values without asking.
- :class:`ParameterUpdate` — "set ``name`` of ``node`` to ``value``", sent on
  ``/<ns>/config_update``. ``value`` is text (``"0.5"``, ``"3"``, ``"true"``) because the sender
  need not know the type: the node parses it per the parameter's declaration. ``request_id`` is
  echoed in the ``data`` of the ``Status`` the node answers with, so the sender can tell its
  answer from another client's.

``jointbus_msgs/msg/Parameter``::

    uint8 TYPE_FLOAT=1
    uint8 TYPE_INT=2
    uint8 TYPE_BOOL=3
    string name
    uint8 type
    float64 float_value     # TYPE_FLOAT: the value (in ``unit``)
    int64 int_value         # TYPE_INT: the value
    bool bool_value         # TYPE_BOOL: the value
    float64 min             # inclusive lower bound; -inf when unbounded
    float64 max             # inclusive upper bound; inf when unbounded
    string unit             # SI unit text (m/s, °C, ...), may be empty
    string description
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import ClassVar, Final, Self

from jointbus.codec.wire import Bool, Float64, Int64, Primitive, String, UInt8
from jointbus.messages.base import Message
from jointbus.messages.errors import LimitError, ValidationError
from jointbus.messages.std_msgs import Header
from jointbus.model.parameters import ParameterSpec, ParameterType, ParameterValue

_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1


class ParameterKind(enum.IntEnum):
    """Wire value of :attr:`Parameter.type` (never renumbered)."""

    FLOAT = 1
    INT = 2
    BOOL = 3

    @classmethod
    def of(cls, ptype: ParameterType) -> ParameterKind:
        """The wire kind of a model :class:`~jointbus.model.parameters.ParameterType`."""
        return _KIND_OF_TYPE[ptype]

    @property
    def parameter_type(self) -> ParameterType:
        """The model :class:`~jointbus.model.parameters.ParameterType` of this kind."""
        return _TYPE_OF_KIND[self]


_KIND_OF_TYPE: Final = {
    ParameterType.FLOAT: ParameterKind.FLOAT,
    ParameterType.INT: ParameterKind.INT,
    ParameterType.BOOL: ParameterKind.BOOL,
}
_TYPE_OF_KIND: Final = {kind: ptype for ptype, kind in _KIND_OF_TYPE.items()}
_KINDS_TEXT: Final = ", ".join(f"TYPE_{k.name}={k.value}" for k in ParameterKind)


def format_value(value: ParameterValue) -> str:
    """``value`` as the text a :class:`ParameterUpdate` carries and the CLI prints.

    Floats use Python's shortest round-trip form (``0.25``), so text → value → text is exact;
    booleans are ``true`` / ``false`` as in the robot file.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


def _check_str(tn: str, name: str, value: object) -> None:
    if type(value) is not str:
        raise ValidationError(tn, name, value, "a str")


@dataclass(frozen=True, slots=True)
class Parameter(Message):
    """One parameter's declaration and current value (see the module docstring)."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/Parameter"
    MSG_CONSTANTS: ClassVar[tuple[tuple[str, Primitive, int | float | str], ...]] = tuple(
        (f"TYPE_{k.name}", Primitive.UINT8, k.value) for k in ParameterKind
    )
    name: String = ""
    type: UInt8 = ParameterKind.FLOAT
    float_value: Float64 = 0.0
    int_value: Int64 = 0
    bool_value: Bool = False
    min: Float64 = -math.inf
    max: Float64 = math.inf
    unit: String = ""
    description: String = ""

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        for name in ("name", "unit", "description"):
            _check_str(tn, name, getattr(self, name))
        kind = self.type
        if type(kind) is not ParameterKind:
            if isinstance(kind, bool) or not isinstance(kind, int):
                raise ValidationError(tn, "type", kind, f"a parameter type ({_KINDS_TEXT})")
            try:
                kind = ParameterKind(kind)
            except ValueError:
                raise LimitError(tn, "type", kind, f"one of {_KINDS_TEXT}") from None
            object.__setattr__(self, "type", kind)
        for name in ("float_value", "min", "max"):
            value = getattr(self, name)
            if type(value) is not float:
                if isinstance(value, bool) or not isinstance(value, int | float):
                    raise ValidationError(tn, name, value, "a float")
                object.__setattr__(self, name, float(value))
        if math.isnan(self.min) or math.isnan(self.max):
            raise ValidationError(tn, "min/max", (self.min, self.max), "bounds that are not NaN")
        if type(self.int_value) is not int:
            raise ValidationError(tn, "int_value", self.int_value, "an int (int64)")
        if not _INT64_MIN <= self.int_value <= _INT64_MAX:
            raise LimitError(tn, "int_value", self.int_value, "an int64")
        if type(self.bool_value) is not bool:
            raise ValidationError(tn, "bool_value", self.bool_value, "a bool")

    @classmethod
    def of(cls, spec: ParameterSpec, value: ParameterValue) -> Self:
        """The record of parameter ``spec`` holding ``value`` (already checked by the spec)."""
        kind = ParameterKind.of(spec.type)
        return cls(
            name=spec.name,
            type=kind,
            float_value=float(value) if kind is ParameterKind.FLOAT else 0.0,
            int_value=int(value) if kind is ParameterKind.INT else 0,
            bool_value=bool(value) if kind is ParameterKind.BOOL else False,
            min=-math.inf if spec.min is None else float(spec.min),
            max=math.inf if spec.max is None else float(spec.max),
            unit=spec.unit,
            description=spec.description,
        )

    @property
    def value(self) -> ParameterValue:
        """The value, from the field its type selects."""
        if self.type is ParameterKind.BOOL:
            return self.bool_value
        if self.type is ParameterKind.INT:
            return self.int_value
        return self.float_value

    @property
    def value_text(self) -> str:
        """The value as text (:func:`format_value`)."""
        return format_value(self.value)

    def to_spec(self) -> ParameterSpec:
        """The declaration this record describes, with its current value as the default.

        Lets a remote reader (the CLI) check and parse a value exactly as the node will.
        """
        kind = ParameterKind(self.type)
        bounded = kind is not ParameterKind.BOOL
        return ParameterSpec(
            self.name,
            kind.parameter_type,
            self.value,
            self.min if bounded and math.isfinite(self.min) else None,
            self.max if bounded and math.isfinite(self.max) else None,
            self.unit,
            self.description,
        )


@dataclass(frozen=True, slots=True)
class ParameterList(Message):
    """Every parameter of ``node`` with its current value; latched on ``/<ns>/parameters``."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/ParameterList"
    header: Header = field(default_factory=Header)
    node: String = ""
    parameters: tuple[Parameter, ...] = ()

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        if type(self.header) is not Header:
            raise ValidationError(tn, "header", self.header, "a std_msgs Header")
        _check_str(tn, "node", self.node)
        params: object = self.parameters
        if type(params) is not tuple:
            if isinstance(params, str | bytes) or not hasattr(params, "__iter__"):
                raise ValidationError(tn, "parameters", params, "a sequence of Parameter")
            params = tuple(params)
            object.__setattr__(self, "parameters", params)
        seen: set[str] = set()
        for index, item in enumerate(self.parameters):
            if type(item) is not Parameter:
                raise ValidationError(tn, f"parameters[{index}]", item, "a Parameter")
            if item.name in seen:
                raise ValidationError(
                    tn, f"parameters[{index}].name", item.name, "a name not listed before"
                )
            seen.add(item.name)

    def get(self, name: str) -> Parameter | None:
        """The parameter called ``name``, or None."""
        for item in self.parameters:
            if item.name == name:
                return item
        return None

    @property
    def names(self) -> tuple[str, ...]:
        """The parameter names, in the node's order."""
        return tuple(item.name for item in self.parameters)


@dataclass(frozen=True, slots=True)
class ParameterUpdate(Message):
    """Set parameter ``name`` of ``node`` to ``value`` (text, parsed per the parameter's type).

    ``request_id`` (free text, may be empty) comes back in the ``data`` of the node's answering
    ``Status`` (OK when applied, ERROR when refused).
    """

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/ParameterUpdate"
    header: Header = field(default_factory=Header)
    node: String = ""
    name: String = ""
    value: String = ""
    request_id: String = ""

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        if type(self.header) is not Header:
            raise ValidationError(tn, "header", self.header, "a std_msgs Header")
        for name in ("node", "name", "value", "request_id"):
            _check_str(tn, name, getattr(self, name))


__all__ = [
    "Parameter",
    "ParameterKind",
    "ParameterList",
    "ParameterUpdate",
    "format_value",
]
