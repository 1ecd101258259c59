"""The typed error of the maths layer.

Where it sits: :mod:`jointbus.math`, the lowest layer of jointbus; every layer above may catch it.
:class:`MathError` subclasses :class:`ValueError` so callers that only know "bad value" still catch
it, while callers that care can tell a bad pose or vector apart from, say, a bad wire payload.
"""

from __future__ import annotations


class MathError(ValueError):
    """A value cannot form a valid geometric object (non-finite, zero-norm, wrong shape, ...).

    The message always names the owner (type or method), the offending field or component, its
    value and what was expected, e.g. ``Vec3: x = nan; expected a finite real number``. The same
    pieces are kept as attributes so callers can report them in their own words.
    """

    def __init__(self, owner: str, field: str, value: object, expected: str) -> None:
        self.owner = owner
        self.field = field
        self.value = value
        self.expected = expected
        super().__init__(f"{owner}: {field} = {value!r}; expected {expected}")
