"""Per-joint array checks shared by the Honey Badger 5.0 messages (private to this package).

Where it sits: inside :mod:`jointbus.robots.hb50.messages`, used by the constructors of BridgeData,
BridgeState and JointCommand. Every check returns the normalised value (a tuple of built-in
numbers, or ``bytes``) or raises a typed :mod:`jointbus.messages.errors` error naming the message
type, the joint (name *and* index), the field, the value and what was expected.

Why float32 values are rounded on construction: the wire holds float32, so a value such as 0.1
arrives at a remote subscriber as 0.10000000149011612. Rounding once, when the message is built,
makes the object an in-process subscriber receives identical to the one a remote subscriber decodes
(and ``from_cdr(m.to_cdr()) == m``), so a controller behaves the same whichever transport it uses.
The rounding uses :mod:`array` (C speed): these messages are built and decoded at 500 Hz.
"""

from __future__ import annotations

import math
import numbers
from array import array
from collections.abc import Iterable
from typing import Any, Final

from jointbus.codec.wire import FLOAT32_MAX, INT_RANGES, Primitive
from jointbus.messages.errors import (
    LengthMismatchError,
    LimitError,
    NonFiniteError,
    ValidationError,
)
from jointbus.messages.sensor_msgs import check_names as names_tuple

__all__ = [
    "NamesMemo",
    "bool_tuple",
    "check_length",
    "float32_scalar",
    "float32_tuple",
    "names_tuple",
    "uint8_bytes",
    "uint16_tuple",
]

F32_RANGE: Final = f"a finite float32 (|x| ≤ {FLOAT32_MAX:.4g})"
_FLOAT_ONLY: Final = {float}
_UINT16_MAX: Final = INT_RANGES[Primitive.UINT16][1]


def _as_tuple(type_name: str, field: str, values: object, what: str) -> tuple[Any, ...]:
    if type(values) is tuple:
        return values
    tolist = getattr(values, "tolist", None)
    if tolist is not None and not isinstance(values, str | bytes | bytearray):
        listed = tolist()  # numpy arrays / array.array: one C-speed conversion
        if not isinstance(listed, list):
            raise ValidationError(type_name, field, values, f"a 1-D sequence of {what}")
        return tuple(listed)
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise ValidationError(type_name, field, values, f"a sequence of {what}")
    return tuple(values)


def _round32(value: float) -> float:
    """``value`` rounded to the nearest float32 (``inf`` if it is beyond float32's range)."""
    rounded: float = array("f", (value,))[0]
    return rounded


def check_length(
    type_name: str, field: str, count: int, names: tuple[str, ...], names_field: str
) -> None:
    """Raise :class:`LengthMismatchError` unless ``count == len(names)``.

    The error names the first joint left without a value (or the first surplus index): that is
    where the two lists stop lining up.
    """
    n = len(names)
    if count == n:
        return
    expected = f"{n} values, one per {names_field}"
    if count < n:
        raise LengthMismatchError(
            type_name, field, f"{count} values", expected, joint=names[count], index=count
        )
    raise LengthMismatchError(type_name, field, f"{count} values", expected, index=n)


def float32_tuple(
    type_name: str,
    field: str,
    values: object,
    names: tuple[str, ...],
    *,
    names_field: str,
    allow_nan: bool = False,
) -> tuple[float, ...]:
    """One float32 per joint, rounded to float32, as a tuple of built-in floats.

    Infinities and magnitudes beyond float32 are always rejected; NaN only unless ``allow_nan``
    (measurements use NaN for "this joint did not report it").
    """
    result = _as_tuple(type_name, field, values, "floats")
    check_length(type_name, field, len(result), names, names_field)
    if not result:
        return ()
    # Fast path (the 500 Hz case): only built-in floats, and after rounding to float32 their sum
    # is finite, so none is NaN, infinite or beyond float32 (which would round to infinity).
    if set(map(type, result)) == _FLOAT_ONLY:
        rounded = array("f", result).tolist()
        if math.isfinite(sum(rounded)):
            return tuple(rounded)
    converted = _scan(type_name, field, result, names, allow_nan=allow_nan)
    return tuple(array("f", converted).tolist())


def _scan(
    type_name: str,
    field: str,
    values: tuple[Any, ...],
    names: tuple[str, ...],
    *,
    allow_nan: bool,
) -> tuple[float, ...]:
    out: list[float] = []
    for index, value in enumerate(values):
        if type(value) is float:
            out.append(value)
            continue
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ValidationError(
                type_name, field, value, "a real number", joint=names[index], index=index
            )
        out.append(float(value))
    result = tuple(out)
    _raise_culprit(type_name, field, result, names, allow_nan=allow_nan)
    return result


def _raise_culprit(
    type_name: str,
    field: str,
    values: tuple[float, ...],
    names: tuple[str, ...],
    *,
    allow_nan: bool,
) -> None:
    for index, value in enumerate(values):
        if math.isnan(value):
            if allow_nan:
                continue
            raise NonFiniteError(
                type_name, field, value, "a finite number", joint=names[index], index=index
            )
        if math.isinf(value):
            raise NonFiniteError(
                type_name,
                field,
                value,
                "a finite number or NaN (not reported)" if allow_nan else "a finite number",
                joint=names[index],
                index=index,
            )
        if math.isinf(_round32(value)):
            raise LimitError(type_name, field, value, F32_RANGE, joint=names[index], index=index)


def float32_scalar(type_name: str, field: str, value: object, *, allow_nan: bool) -> float:
    """One float32 value rounded to float32 (NaN only if ``allow_nan``; never ±inf)."""
    if type(value) is not float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ValidationError(type_name, field, value, "a real number (float32)")
        value = float(value)
    if math.isnan(value):
        if allow_nan:
            return value
        raise NonFiniteError(type_name, field, value, "a finite number")
    if math.isinf(value):
        raise NonFiniteError(type_name, field, value, "a finite number or NaN (not reported)")
    rounded = _round32(value)
    if math.isinf(rounded):
        raise LimitError(type_name, field, value, F32_RANGE)
    return rounded


def uint8_bytes(
    type_name: str, field: str, values: object, names: tuple[str, ...], *, names_field: str
) -> bytes:
    """One uint8 per joint as ``bytes`` (lists of ints 0–255 are accepted and converted)."""
    if type(values) is bytes:
        result = values
    elif isinstance(values, bytearray | memoryview):
        result = bytes(values)
    else:
        items = _as_tuple(type_name, field, values, "integers 0–255")
        for index, item in enumerate(items):
            if isinstance(item, bool) or not isinstance(item, numbers.Integral):
                raise ValidationError(
                    type_name,
                    field,
                    item,
                    "an integer (uint8)",
                    joint=_at(names, index),
                    index=index,
                )
            if not 0 <= int(item) <= 0xFF:
                raise LimitError(
                    type_name,
                    field,
                    item,
                    "an integer in [0, 255] (uint8)",
                    joint=_at(names, index),
                    index=index,
                )
        result = bytes(int(i) for i in items)
    check_length(type_name, field, len(result), names, names_field)
    return result


def uint16_tuple(
    type_name: str, field: str, values: object, names: tuple[str, ...], *, names_field: str
) -> tuple[int, ...]:
    """One uint16 per joint as a tuple of built-in ints."""
    result = _as_tuple(type_name, field, values, "integers 0–65535")
    check_length(type_name, field, len(result), names, names_field)
    if all(type(v) is int for v in result) and (
        not result or (min(result) >= 0 and max(result) <= _UINT16_MAX)
    ):
        return result
    out: list[int] = []
    for index, item in enumerate(result):
        if isinstance(item, bool) or not isinstance(item, numbers.Integral):
            raise ValidationError(
                type_name, field, item, "an integer (uint16)", joint=names[index], index=index
            )
        if not 0 <= int(item) <= _UINT16_MAX:
            raise LimitError(
                type_name,
                field,
                item,
                f"an integer in [0, {_UINT16_MAX}] (uint16)",
                joint=names[index],
                index=index,
            )
        out.append(int(item))
    return tuple(out)


def bool_tuple(
    type_name: str, field: str, values: object, names: tuple[str, ...], *, names_field: str
) -> tuple[bool, ...]:
    """One bool per joint (``numpy.bool_`` accepted; ints are not: ``1`` is not a decision)."""
    result = _as_tuple(type_name, field, values, "bools")
    check_length(type_name, field, len(result), names, names_field)
    for index, item in enumerate(result):
        if type(item) is not bool:
            raise ValidationError(type_name, field, item, "a bool", joint=names[index], index=index)
    return result


def _at(names: tuple[str, ...], index: int) -> str | None:
    return names[index] if index < len(names) else None


class NamesMemo:
    """Whether a joint-name tuple passes :func:`names_tuple` for field ``field`` of message type
    ``type_name``, remembering the last tuple that passed (:attr:`last`).

    Why: a bridge or a controller builds every 500 Hz message with the same tuple object, so the
    fast constructors (``BridgeData.from_arrays``, ``JointCommand.from_joint_arrays``) test
    ``names is memo.last`` first — one identity test — and run the full check only for a new
    tuple. A tuple that fails is not remembered: the constructor then raises the typed error.
    """

    __slots__ = ("field", "last", "type_name")

    def __init__(self, type_name: str, field: str) -> None:
        self.type_name = type_name
        self.field = field
        self.last: tuple[str, ...] | None = None

    def check(self, names: tuple[str, ...]) -> bool:
        """True (and ``names`` remembered) when ``names`` passes the check."""
        try:
            names_tuple(self.type_name, self.field, names)
        except ValidationError:
            return False
        self.last = names
        return True
