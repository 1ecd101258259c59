"""Input checks shared by every maths type: finite scalars and correctly shaped numpy arrays.

Where it sits: inside :mod:`jointbus.math`, used by the value types' constructors and
``from_numpy`` methods; not exported. The checks are written for the 500 Hz scalar path: a plain
finite ``float`` is accepted after one ``type`` test and one :func:`math.isfinite` call, and only
other real numbers (``int``, numpy scalars, ...) take the slower converting branch. Everything is
stored as a built-in ``float`` so equality, hashing and ``repr`` never depend on where a number
came from.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from math import isfinite

import numpy as np
import numpy.typing as npt

from jointbus.math.errors import MathError

FINITE = "a finite real number"


def is_real(value: object) -> bool:
    """True for numbers usable as a scalar factor (``bool`` excluded: ``v * True`` is a bug)."""
    if type(value) is float or type(value) is int:
        return True
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def finite_float(owner: str, field: str, value: object) -> float:
    """Return ``value`` as a finite built-in float or raise :class:`MathError` naming ``field``."""
    if type(value) is float:
        if isfinite(value):
            return value
        raise MathError(owner, field, value, FINITE)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise MathError(owner, field, value, FINITE)
    try:
        result = float(value)
    except (OverflowError, ValueError, TypeError):
        raise MathError(owner, field, value, FINITE) from None
    if not isfinite(result):
        raise MathError(owner, field, value, FINITE)
    return result


def finite_array(
    owner: str, value: npt.ArrayLike, shape: tuple[int, ...], names: Sequence[str] | None = None
) -> npt.NDArray[np.float64]:
    """Convert ``value`` to a finite float64 array of exactly ``shape``.

    ``names`` (for 1-D arrays) labels each element so the error says ``element 3 (angular.x)``
    rather than leaving the reader to count.
    """
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        expected = f"a numeric array of shape {shape} ({exc})"
        raise MathError(owner, "array", value, expected) from None
    if array.shape != shape:
        raise MathError(owner, "array shape", array.shape, f"{shape}")
    finite = np.isfinite(array)
    if not finite.all():
        bad = tuple(int(i) for i in np.argwhere(~finite)[0])
        label = f"element {bad[0]}" if len(bad) == 1 else f"element {list(bad)}"
        if names is not None and len(bad) == 1:
            label += f" ({names[bad[0]]})"
        raise MathError(owner, label, float(array[bad]), FINITE)
    return array
