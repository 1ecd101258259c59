"""What a remote client needs to know about a served actuator array beyond Player's geometry.

Where it sits: :mod:`jointbus.messages.actarray`. Player's geometry describes each actuator but not
its name nor its velocity, effort and current limits; the array node answers its ``describe``
service with an :class:`ArrayDescription` so that a ``bus://`` client can address joints by name
and report the same configuration as the served array.

One entry per actuator in every per-joint field, actuator order. Limits are SI magnitudes (rad or
m; rad/s or m/s; N·m or N; A); ``inf`` means unbounded. ``policy`` is the array's
:class:`~jointbus.drivers.limits.LimitPolicy` value (``reject`` or ``saturate``);
``capabilities`` the method names it supports (:class:`~jointbus.drivers.capabilities.Capability`).

What the served driver can carry (:meth:`jointbus.drivers.ActuatorArray.command_ranges`: a CAN
motor model's wire range, ``kp`` 0…500 for md80) travels too, so that a ``bus://`` client refuses
a command outside it before sending, with the error the server would give: ``command_fields``
names the impedance fields declared (empty: none, every field unbounded), ``command_min`` /
``command_max`` hold one bound per field and joint, field-major (field ``k`` of joint ``i`` at
``k · N + i``; ``±inf`` unbounded), and ``command_bound_by`` says per joint what sets them
("the md80's wire range").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from jointbus.codec.wire import Float64Seq, String, StringSeq
from jointbus.messages.base import Message
from jointbus.messages.errors import LengthMismatchError, ValidationError
from jointbus.messages.sensor_msgs import check_names

__all__ = ["ArrayDescription"]

_PER_JOINT = (
    "position_min",
    "position_max",
    "velocity_max",
    "effort_max",
    "current_max",
    "acceleration",
)


@dataclass(frozen=True, slots=True)
class ArrayDescription(Message):
    """Names, limits, configured accelerations, limit policy and capabilities of an array."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/ActuatorArrayDescription"
    names: StringSeq = ()
    position_min: Float64Seq = ()
    position_max: Float64Seq = ()
    velocity_max: Float64Seq = ()
    effort_max: Float64Seq = ()
    current_max: Float64Seq = ()
    acceleration: Float64Seq = ()
    policy: String = "reject"
    capabilities: StringSeq = ()
    command_fields: StringSeq = ()
    command_min: Float64Seq = ()
    command_max: Float64Seq = ()
    command_bound_by: StringSeq = ()

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        names = check_names(tn, "names", self.names)
        object.__setattr__(self, "names", names)
        for name in _PER_JOINT:
            values = tuple(float(v) for v in getattr(self, name))
            object.__setattr__(self, name, values)
            if len(values) != len(names):
                raise LengthMismatchError(tn, name, values, f"{len(names)} values, one per joint")
            for i, v in enumerate(values):
                if math.isnan(v):
                    raise ValidationError(
                        tn, name, v, "a number (inf = unbounded)", joint=names[i], index=i
                    )
        self._check_command_ranges(names)

    def _check_command_ranges(self, names: tuple[str, ...]) -> None:
        tn = self.TYPE_NAME
        n = len(names)
        fields = tuple(self.command_fields)
        object.__setattr__(self, "command_fields", fields)
        object.__setattr__(self, "command_bound_by", tuple(self.command_bound_by))
        if len(set(fields)) != len(fields):
            raise ValidationError(tn, "command_fields", fields, "each field at most once")
        if fields and len(self.command_bound_by) != n:
            raise LengthMismatchError(
                tn, "command_bound_by", self.command_bound_by, f"{n} entries, one per joint"
            )
        bounds = []
        for name in ("command_min", "command_max"):
            values = tuple(float(v) for v in getattr(self, name))
            object.__setattr__(self, name, values)
            if len(values) != len(fields) * n:
                raise LengthMismatchError(
                    tn, name, f"{len(values)} values",
                    f"{len(fields) * n}: one per field of command_fields and joint",
                )
            bounds.append(values)
        for k, (lo, hi) in enumerate(zip(*bounds, strict=True)):
            if not lo <= hi:  # NaN too
                i = k % n
                raise ValidationError(
                    tn, f"command_min/command_max of {fields[k // n]}", (lo, hi),
                    "lower ≤ upper (inf = unbounded)", joint=names[i], index=i,
                )
