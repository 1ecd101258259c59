"""Per-joint numpy columns as lists of built-in floats: the first step of the one-pass builders.

Where it sits: :mod:`jointbus.messages`, below the messages whose classes build themselves straight
from a driver's joint-space arrays (:meth:`~jointbus.messages.actarray.ActuatorArrayData.
from_arrays`, :meth:`~jointbus.messages.joints.Joints.from_arrays`,
:meth:`~jointbus.messages.joint_state.JointState.scalar_wire`); depends on numpy only.

Why: an array node publishes three messages from one reading each cycle, 12 joints for hb50.
Through the constructors every value is checked one element at a time, in Python. The builders
instead check each column once (C-level scans of a list of floats) and then build the frozen
messages without re-running the element checks. A builder uses these helpers to decide whether
its inputs are plain enough for that path (1-D float64 numpy arrays of the joint count); when they
are not, it takes the constructors' path, whose errors name the joint, field and value.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Final

import numpy as np

from jointbus.messages.errors import ValidationError
from jointbus.messages.sensor_msgs import check_names

__all__ = ["float64_lists", "has_infinity", "int_list", "listed", "names_ok"]

_F64: Final = np.dtype(np.float64)
_INF: Final = math.inf
_NEG_INF: Final = -math.inf
_isfinite: Final = math.isfinite


def float64_lists(count: int, *arrays: object) -> list[list[float]] | None:
    """Each array's values as built-in floats, or ``None`` unless every one is a 1-D float64
    numpy array of ``count`` entries (the values ``tolist()`` gives, bit for bit)."""
    shape = (count,)
    out: list[list[float]] = []
    for array in arrays:
        if type(array) is not np.ndarray or array.shape != shape:
            return None
        dtype = array.dtype
        if dtype is not _F64 and dtype != _F64:
            return None
        out.append(array.tolist())
    return out


def int_list(count: int, array: object, dtype: type[np.unsignedinteger[Any]]) -> list[int] | None:
    """``array``'s values as built-in ints, or ``None`` unless it is a 1-D numpy array of
    ``count`` entries of exactly ``dtype`` (so every value is within that type's range)."""
    if type(array) is not np.ndarray or array.dtype != dtype or array.shape != (count,):
        return None
    values: list[int] = array.tolist()
    return values


def has_infinity(columns: list[list[float]]) -> bool:
    """Whether any column holds +inf or -inf (NaN, "not measured", is not an infinity).

    A finite total (C loops) settles the common case; otherwise each column whose sum is not
    finite (NaN, an infinity, or an overflow) is scanned for the two infinities.
    """
    if _isfinite(sum(map(sum, columns))):
        return False
    return any(
        not _isfinite(sum(column)) and (_INF in column or _NEG_INF in column)
        for column in columns
    )


#: The last names tuple that passed :func:`names_ok` (a node sends one tuple every cycle; a tuple
#: of str is immutable, and holding it keeps its id from being reused).
_checked_names: list[tuple[str, ...] | None] = [None]


def names_ok(names: object) -> bool:
    """Whether ``names`` is a tuple of non-empty, unique ``str`` (the rule of
    :func:`~jointbus.messages.sensor_msgs.check_names`), checked once per tuple object."""
    if names is _checked_names[0]:
        return True
    if type(names) is not tuple:
        return False
    try:
        check_names("", "names", names)
    except ValidationError:
        return False
    _checked_names[0] = names
    return True


def listed(type_name: str, field_name: str, column: object) -> list[Any]:
    """``column``'s values as a list (``tolist()`` for numpy, so numbers become built-ins): the
    builders' element-by-element path, which accepts any sequence the constructors accept."""
    if hasattr(column, "tolist") and not isinstance(column, str | bytes):
        values = column.tolist()
        if isinstance(values, list):
            return values
    elif isinstance(column, Iterable) and not isinstance(column, str | bytes):
        return list(column)
    raise ValidationError(type_name, field_name, column, "a 1-D sequence, one value per joint")
