"""``jointbus_msgs/msg/JointImpedance``: impedance targets for every joint of a served array.

Where it sits: :mod:`jointbus.messages` (generic: it knows no robot). The array node
(``jointbus serve``, :mod:`jointbus.nodes.array`) takes it on ``/<ns>/joint_impedance`` as its
impedance stream, and the ``bus://`` driver sends it for :meth:`ActuatorArray.impedance
<jointbus.drivers.actuator_array.ActuatorArray.impedance>`; both convert it to and from the device
API's joint-space value (:class:`jointbus.drivers.impedance.ImpedanceCommand`) at their edge.
Honey Badger's ``hb50_commons/msg/JointCommand`` is the same idea with the robot's own field names
and float32 values; this one is float64, so a value at a limit arrives exactly at it.

Layout::

    std_msgs/Header header
    string source_node    # the commanding node: arbitration ranks commands by their source
    string[] name         # the array's joints, in actuator order
    float64[] position    # rad (m for a linear joint)
    float64[] velocity    # rad/s (m/s)
    float64[] effort      # feed-forward N·m (N)
    float64[] kp          # N·m/rad (N/m), ≥ 0
    float64[] kd          # N·m·s/rad (N·s/m), ≥ 0
    bool[] brake          # engage the joint's brake

Each joint follows ``τ = effort + kp·(position − p) + kd·(velocity − v)``.

Rules, checked on construction and so on decode (the class declares no ``WIRE_RULES``: every
decoded sample goes through the constructor): names non-empty and unique; every array one entry
per name; every number finite; ``kp ≥ 0`` and ``kd ≥ 0``. Errors name the joint (name and index),
the field, the value and the rule. Whether the names are the array's actuator order, and whether
the values are within its limits, is the receiving node's check (it knows the array).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from jointbus.codec.wire import BoolSeq, Float64Seq, String, StringSeq
from jointbus.messages.base import Message
from jointbus.messages.errors import (
    LengthMismatchError,
    LimitError,
    NonFiniteError,
    ValidationError,
)
from jointbus.messages.sensor_msgs import check_names
from jointbus.messages.std_msgs import Header

__all__ = ["JointImpedance"]

_FLOAT_FIELDS = ("position", "velocity", "effort", "kp", "kd")
_GAIN_FIELDS = ("kp", "kd")


@dataclass(frozen=True, slots=True)
class JointImpedance(Message):
    """Impedance targets and gains per named joint (see the module docstring for the rules)."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/JointImpedance"
    #: The array node's command check refuses an empty ``source_node`` (it cannot be ranked).
    RECEIVER_REQUIRES: ClassVar[tuple[tuple[str, str], ...]] = (
        ("source_node", "a non-empty node name (arbitration ranks commands by their source)"),
    )
    header: Header = field(default_factory=Header)
    source_node: String = ""
    name: StringSeq = ()
    position: Float64Seq = ()  # rad or m
    velocity: Float64Seq = ()  # rad/s or m/s
    effort: Float64Seq = ()  # N·m or N
    kp: Float64Seq = ()  # N·m/rad, ≥ 0
    kd: Float64Seq = ()  # N·m·s/rad, ≥ 0
    brake: BoolSeq = ()

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        if type(self.header) is not Header:
            raise ValidationError(tn, "header", self.header, "a std_msgs Header")
        if type(self.source_node) is not str:
            raise ValidationError(tn, "source_node", self.source_node, "a str (node name)")
        names = check_names(tn, "name", self.name)
        setattr_ = object.__setattr__
        setattr_(self, "name", names)
        n = len(names)
        for name in _FLOAT_FIELDS:
            values = sequence_tuple(tn, name, getattr(self, name))
            if len(values) != n:
                raise LengthMismatchError(
                    tn, name, f"{len(values)} values", f"{n} values, one per name"
                )
            if any(type(v) is not float for v in values):
                values = tuple(_real(tn, name, v, names, i) for i, v in enumerate(values))
            if not all(math.isfinite(v) for v in values):
                i = next(i for i, v in enumerate(values) if not math.isfinite(v))
                raise NonFiniteError(
                    tn, name, values[i], "a finite number", joint=names[i], index=i
                )
            if name in _GAIN_FIELDS and values and min(values) < 0.0:
                i = next(i for i, v in enumerate(values) if v < 0.0)
                raise LimitError(tn, name, values[i], "≥ 0", joint=names[i], index=i)
            setattr_(self, name, values)
        brake = sequence_tuple(tn, "brake", self.brake)
        if len(brake) != n:
            raise LengthMismatchError(
                tn, "brake", f"{len(brake)} values", f"{n} values, one per name"
            )
        for i, b in enumerate(brake):
            if type(b) is not bool:
                raise ValidationError(tn, "brake", b, "a bool", joint=names[i], index=i)
        setattr_(self, "brake", brake)


def sequence_tuple(type_name: str, field_name: str, value: object) -> tuple[Any, ...]:
    """``value`` (a tuple, list, numpy array, ...) as a tuple of built-in values."""
    if type(value) is tuple:
        return value
    tolist = getattr(value, "tolist", None)
    if tolist is not None and not isinstance(value, str | bytes):
        listed = tolist()
        if isinstance(listed, list):
            return tuple(listed)
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise ValidationError(type_name, field_name, value, "a sequence, one entry per name")
    return tuple(value)


def _real(type_name: str, field_name: str, value: object, names: tuple[str, ...], i: int) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValidationError(
            type_name, field_name, value, "a real number", joint=names[i], index=i
        )
    return float(value)
