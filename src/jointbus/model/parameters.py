"""Typed, bounded parameters of a robot stack, declared in the robot file.

Where it sits: :mod:`jointbus.model`; read from the ``parameters:`` section of a robot file by
:mod:`~jointbus.model.yaml_loader` and held by :class:`~jointbus.model.robot.RobotModel`. The
runtime layer makes them live (set at run time, announced on the bus); this module only says what
each parameter is: its type, default, bounds, unit and meaning. Every value — default or later
update — goes through :meth:`ParameterSpec.check`, so a speed limit of ``"fast"`` or a watchdog of
−1 s is refused with an error naming the parameter, the value and the bounds, and nothing changes.

File format (a mapping so each name appears once; the loader rejects duplicate keys)::

    parameters:
      cmd_vel_lin: {type: float, default: 1.0, min: 0.0, max: 2.0, unit: m/s,
                    description: "largest commanded forward speed"}
      arbitration_threshold: {type: float, default: 10.0, min: 0.1, unit: Hz}
      gait_enabled: {type: bool, default: true}

``type`` is ``float``, ``int`` or ``bool``; ``min`` / ``max`` are optional (unbounded when
absent) and not allowed on booleans; ``unit`` is free text (SI, e.g. ``m/s``, ``°C``).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from jointbus.model.errors import ParameterError, RobotFileError
from jointbus.model.file_node import FileNode

ParameterValue = float | int | bool
"""The Python type of a parameter's value (by :class:`ParameterType`: float, int, bool)."""


class ParameterType(enum.Enum):
    """What kind of value a parameter holds; the value is the robot-file spelling."""

    FLOAT = "float"
    INT = "int"
    BOOL = "bool"


@dataclass(frozen=True, slots=True)
class ParameterSpec:
    """One parameter: name, type, default, inclusive bounds (``None`` = unbounded), unit, meaning.

    Construction checks that the bounds fit the type and that the default passes :meth:`check`.
    """

    name: str
    type: ParameterType
    default: ParameterValue
    min: float | None = None
    max: float | None = None
    unit: str = ""
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ParameterError(str(self.name), self.name, "a non-empty parameter name")
        if self.type is ParameterType.BOOL and (self.min is not None or self.max is not None):
            raise ParameterError(self.name, (self.min, self.max), "no min/max on a bool parameter")
        for bound_name in ("min", "max"):
            bound = getattr(self, bound_name)
            if bound is None:
                continue
            if isinstance(bound, bool) or not isinstance(bound, int | float) or math.isnan(bound):
                raise ParameterError(self.name, bound, f"a number for {bound_name}")
            if self.type is ParameterType.INT and math.isfinite(bound) and bound != int(bound):
                raise ParameterError(self.name, bound, f"an integer {bound_name} for an int")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ParameterError(self.name, (self.min, self.max), "min ≤ max")
        object.__setattr__(self, "default", self.check(self.default))

    def bounds_text(self) -> str:
        """The accepted range as text, e.g. ``[0.0, 2.0] m/s``."""
        lo = "-inf" if self.min is None else repr(self.min)
        hi = "inf" if self.max is None else repr(self.max)
        unit = f" {self.unit}" if self.unit else ""
        return f"[{lo}, {hi}]{unit}"

    def check(self, value: object) -> ParameterValue:
        """``value`` converted to this parameter's type, or :class:`ParameterError`.

        Ints are accepted for float parameters (``1`` → ``1.0``); booleans are never numbers, and
        floats are not accepted for int parameters (``2.5`` would have to be rounded, silently).
        """
        if self.type is ParameterType.BOOL:
            if not isinstance(value, bool):
                raise ParameterError(self.name, value, "true or false")
            return value
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ParameterError(self.name, value, f"a number in {self.bounds_text()}")
        if self.type is ParameterType.INT:
            if not isinstance(value, int):
                raise ParameterError(self.name, value, f"an integer in {self.bounds_text()}")
            number: float | int = value
        else:
            number = float(value)
            if not math.isfinite(number):
                raise ParameterError(self.name, value, f"a finite number in {self.bounds_text()}")
        if (self.min is not None and number < self.min) or (
            self.max is not None and number > self.max
        ):
            raise ParameterError(self.name, value, f"a value in {self.bounds_text()}")
        return number


def parameter_defaults(specs: Iterable[ParameterSpec]) -> dict[str, ParameterValue]:
    """``{name: default}`` for ``specs`` — the starting values of a live parameter set."""
    return {spec.name: spec.default for spec in specs}


_KEYS = ("type", "default", "min", "max", "unit", "description")


def parse_parameters(node: FileNode) -> tuple[ParameterSpec, ...]:
    """The :class:`ParameterSpec` list of a ``parameters:`` mapping (see the module docstring).

    Raises :class:`~jointbus.model.errors.RobotFileError` naming the file and key path
    (``parameters.kp.max``) for any bad entry.
    """
    if node.value is None:
        return ()
    specs: list[ParameterSpec] = []
    for name, entry in node.items():
        entry.mapping(_KEYS)
        type_node = entry.require("type")
        try:
            ptype = ParameterType(type_node.value)
        except ValueError:
            raise type_node.fail(f"one of {[t.value for t in ParameterType]}") from None
        default_node = entry.require("default")
        bounds: dict[str, float | None] = {}
        for bound_name in ("min", "max"):
            bound_node = entry.at(bound_name)
            bounds[bound_name] = None if bound_node.value is None else bound_node.number()
        unit = entry.at("unit").text_or("")
        description = entry.at("description").text_or("")
        try:
            spec = ParameterSpec(
                name,
                ptype,
                default_node.value,
                bounds["min"],
                bounds["max"],
                unit,
                description,
            )
        except ParameterError as exc:
            raise RobotFileError(node.source, entry.key, entry.value, exc.expected) from exc
        specs.append(spec)
    return tuple(specs)


def specs_by_name(specs: Iterable[ParameterSpec]) -> Mapping[str, ParameterSpec]:
    """``{name: spec}`` for lookups."""
    return {spec.name: spec for spec in specs}
