"""Typed errors of the message layer.

Where it sits: :mod:`jointbus.messages`, used by every message constructor and by everything that
validates commands (drivers, the bridge). The rule they implement: bad input gets a clear, typed
error that names the joint (by name *and* index), the field, the value and what was expected,
because "element 4 of kp is wrong" is the difference between finding the joint and eyeballing a
list. Every error keeps those parts as attributes so a node can also report them as data.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from jointbus.errors import Refused


def shown(value: Any) -> str:
    """``value`` as an error shows it: ``repr``, and a numpy float in the shortest form of its
    own precision — a checker that knows a field is float32 on the wire passes the value as
    ``np.float32``, so it reads as it was sent, ``1.6``, not as its float64 widening
    ``1.600000023841858`` (new-user trial, 2026-12-05). A built-in float keeps its ``repr``:
    whether it came from a float32 cannot be told from the value."""
    if isinstance(value, np.floating):
        return str(value)
    return repr(value)


class MessageError(Refused, ValueError):
    """Base class of every message-layer error: a refusal (:class:`jointbus.errors.Refused`) of
    a value or message, and a ``ValueError``."""


class ValidationError(MessageError):
    """A message (or a value in it) breaks a rule; nothing was built or applied.

    Attributes: ``type_name`` (message type), ``field``, ``joint`` (name or ``None``), ``index``
    (position in the joint list or ``None``), ``value`` and ``expected`` (a phrase).
    """

    def __init__(
        self,
        type_name: str,
        field: str,
        value: Any,
        expected: str,
        *,
        joint: str | None = None,
        index: int | None = None,
    ) -> None:
        self.type_name = type_name
        self.field = field
        self._shown = shown(value)
        self.value = float(value) if isinstance(value, np.floating) else value
        self.expected = expected
        self.joint = joint
        self.index = index
        super().__init__(self._text())

    def naming(self, joints: Sequence[str]) -> ValidationError:
        """This error with ``joint`` filled in from ``joints[index]`` (same class and facts).

        A message class checks its values without knowing the robot (a Player
        ``MultiPositionCommand`` is a list of numbers), so its errors name the index only; the node
        that serves the array knows the names and uses this to report the joint as well. Returns
        ``self`` when the joint is already named, no index is given or it is out of range."""
        index = self.index
        if self.joint is not None or index is None or not 0 <= index < len(joints):
            return self
        named = type(self).__new__(type(self))  # copy.copy would call __init__ with the text only
        named.__dict__.update(self.__dict__)
        named.joint = joints[index]
        named.args = (named._text(),)
        return named

    def _text(self) -> str:
        where = ""
        if self.joint is not None and self.index is not None:
            where = f"joint {self.joint!r} (index {self.index}): "
        elif self.index is not None:
            where = f"index {self.index}: "
        elif self.joint is not None:
            where = f"joint {self.joint!r}: "
        return (
            f"{self.type_name}: {where}field {self.field!r} = {self._shown}; "
            f"expected {self.expected}"
        )


class LengthMismatchError(ValidationError):
    """A per-joint list has not one entry per joint (nor is empty where that is allowed)."""


class NonFiniteError(ValidationError):
    """A NaN or infinity where a finite number is required."""


class LimitError(ValidationError):
    """A value outside its joint's limits (``expected`` gives the bounds)."""


class ShapeMismatchError(ValidationError):
    """A joint's value is not shaped for its type (e.g. a float for a planar joint)."""


class UnknownJointError(MessageError, LookupError):
    """A joint name that is not in the message / robot. ``name`` carries the missing name.

    Like a :class:`ValidationError` it also says, as data, the ``field`` that named the joint
    (``"joint"`` unless the caller says which: a Rock command's ``names``), the ``value`` asked
    for (the name) and what was ``expected`` (one of the ``known`` joints), so a NACK or a
    status report built from it carries them in its structured fields."""

    def __init__(
        self, name: str, known: tuple[str, ...] | list[str] = (), *, field: str = "joint"
    ) -> None:
        self.name = name
        self.known = tuple(known)
        self.field = field
        self.value: Any = name
        self.expected = (
            f"one of the joints {', '.join(self.known)}" if self.known else "a known joint name"
        )
        hint = f"; known joints: {', '.join(self.known)}" if self.known else ""
        super().__init__(f"unknown joint {name!r}{hint}")

    def __str__(self) -> str:  # LookupError would quote the whole text again
        return str(self.args[0])
