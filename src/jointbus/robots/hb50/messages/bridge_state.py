"""``hb50_commons/msg/BridgeState``: power, temperatures and hardware status of the bridge.

Where it sits: :mod:`jointbus.robots.hb50.messages`. The bridge node publishes it at 500 Hz on
``/hb50/bridge_state`` (and a reliable 10 Hz mirror, ``/hb50/bridge_state_10hz``) for diagnostics,
UI and monitoring. Field names, order and wire types are exactly Honey Badger 5.0's (seed 001);
like the original it has **no header**: it is read next to BridgeData, whose header dates it.

Units are the seed's: ``battery`` is a charge state in % (0–100), voltages V, current A, ``bus_p``
W, ``bus_pt`` the cumulative energy transferred in **kWh** (the seed's unit, kept for wire
compatibility), temperatures °C, ``up_time`` whole seconds.

Rules: every float is float32 (rounded on construction) and may be NaN when its sensor is absent
or did not report (a board without auxiliary sensors sends NaN in ``ext1_t`` / ``ext2_t``), never
±inf; ``battery`` is within [0, 100] % or NaN; ``up_time`` ≥ 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar, Final

from jointbus.codec.rules import WireRule
from jointbus.codec.wire import INT_RANGES, Bool, Float32, Int32, Primitive, StringSeq
from jointbus.messages.base import Message
from jointbus.messages.errors import LimitError, ValidationError
from jointbus.robots.hb50.messages._arrays import float32_scalar

_FLOAT_FIELDS: Final = (
    "battery",
    "bus_v",
    "bus_i",
    "bus_p",
    "bus_pt",
    "legs_v",
    "charger_v",
    "bridge_t",
    "ext1_t",
    "ext2_t",
)
_INT32_MAX: Final = INT_RANGES[Primitive.INT32][1]


@dataclass(frozen=True, slots=True)
class BridgeState(Message):
    """Power subsystem readings, board temperatures, drive enable and hardware status strings."""

    TYPE_NAME: ClassVar[str] = "hb50_commons/msg/BridgeState"
    #: What a decoded value can break (the status strings are checked once per cached layout).
    WIRE_RULES: ClassVar[Mapping[str, WireRule]] = {
        **{name: WireRule(no_inf=True) for name in _FLOAT_FIELDS},
        "battery": WireRule(no_inf=True, ge=0.0, le=100.0),
        "up_time": WireRule(ge=0),
    }
    battery: Float32 = math.nan  # charge state, % (0–100)
    bus_v: Float32 = math.nan  # bus voltage, V
    bus_i: Float32 = math.nan  # bus current, A
    bus_p: Float32 = math.nan  # instantaneous bus power, W
    bus_pt: Float32 = math.nan  # cumulative bus energy, kWh
    legs_v: Float32 = math.nan  # leg actuator supply voltage, V
    charger_v: Float32 = math.nan  # charger input voltage, V
    bridge_t: Float32 = math.nan  # bridge board temperature, °C
    ext1_t: Float32 = math.nan  # auxiliary sensor 1, °C
    ext2_t: Float32 = math.nan  # auxiliary sensor 2, °C
    drives_enabled: Bool = False  # actuators energised
    status: StringSeq = ()  # hardware status strings (warnings, errors)
    up_time: Int32 = 0  # s

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        setattr_ = object.__setattr__
        for name in _FLOAT_FIELDS:
            setattr_(self, name, float32_scalar(tn, name, getattr(self, name), allow_nan=True))
        battery = self.battery
        if not math.isnan(battery) and not 0.0 <= battery <= 100.0:
            raise LimitError(tn, "battery", battery, "a charge state in [0, 100] % or NaN")
        if type(self.drives_enabled) is not bool:
            raise ValidationError(tn, "drives_enabled", self.drives_enabled, "a bool")
        status: object = self.status
        if type(status) is not tuple:
            if isinstance(status, str | bytes) or not isinstance(status, Iterable):
                raise ValidationError(tn, "status", status, "a sequence of str")
            status = tuple(status)
            setattr_(self, "status", status)
        for index, text in enumerate(status):
            if type(text) is not str:
                raise ValidationError(tn, "status", text, "a str", index=index)
        up_time = self.up_time
        if isinstance(up_time, bool) or not isinstance(up_time, int):
            raise ValidationError(tn, "up_time", up_time, "an integer number of seconds (int32)")
        if not 0 <= up_time <= _INT32_MAX:
            raise LimitError(tn, "up_time", up_time, f"seconds in [0, {_INT32_MAX}] (int32)")
        setattr_(self, "up_time", int(up_time))


__all__ = ["BridgeState"]
