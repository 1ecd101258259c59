"""Typed errors of the robot description: bad robot files, broken trees, unreachable targets.

Where it sits: :mod:`jointbus.model`, above :mod:`jointbus.messages` (whose
:class:`~jointbus.messages.errors.UnknownJointError` the model raises for a joint name it does not
know, so callers catch one error type whether a message or the model rejected the name). Every
error keeps its parts as attributes — file, key path, joint name and index, value, what was
expected — so a node can report them as data and a person can find the line to fix.
"""

from __future__ import annotations

from typing import Any


class ModelError(ValueError):
    """Base class of every robot-description error."""


class RobotFileError(ModelError):
    """A robot file (YAML or URDF) holds data that cannot describe a robot; nothing was built.

    Attributes: ``source`` (file path or bundled name), ``key`` (key path such as
    ``joints[3].limits.position``, ``""`` for the whole file), ``value`` and ``expected``; for a
    value inside one joint, ``joint`` (its name, ``None`` when the name itself is missing) and
    ``index`` (its position in the file's list of joints), shown as "of joint 'fr_j1' (index 3)".
    """

    def __init__(
        self,
        source: str,
        key: str,
        value: Any,
        expected: str,
        *,
        joint: str | None = None,
        index: int | None = None,
    ) -> None:
        self.source = source
        self.key = key
        self.value = value
        self.expected = expected
        self.joint = joint
        self.index = index
        where = f"{source}: {key}" if key else source
        if joint is not None or index is not None:
            where += f" of {joint_label(joint, index)}"
        shown = _short_repr(value)
        super().__init__(f"{where} = {shown}; expected {expected}")


def joint_label(joint: str | None, index: int | None) -> str:
    """``joint 'fr_j1' (index 3)`` — how every error names a joint (``joint (index 3)`` when
    the name is unknown, ``joint 'fr_j1'`` when the index is)."""
    named = f"joint {joint!r}" if joint is not None else "joint"
    return named + (f" (index {index})" if index is not None else "")


class DefinitionError(ModelError):
    """One joint, link or section of a robot description has a field that breaks its rule.

    Attributes: ``owner`` (e.g. ``"joint 'fr_j1'"``), ``field``, ``value``, ``expected``. The
    file loaders turn this into a :class:`RobotFileError` that also names the file and key path.
    """

    def __init__(self, owner: str, field: str, value: Any, expected: str) -> None:
        self.owner = owner
        self.field = field
        self.value = value
        self.expected = expected
        super().__init__(f"{owner}: field {field!r} = {_short_repr(value)}; expected {expected}")


class TreeError(ModelError):
    """The links and joints do not form one valid kinematic tree (or names clash).

    Attributes: ``joint`` (name or ``None``), ``index`` (position in the list named by
    ``section`` or ``None``), ``problem`` (a sentence), ``section`` (the robot-file section at
    fault: ``"links"``, ``"joints"`` or ``"actuator_order"``).
    """

    def __init__(
        self,
        problem: str,
        *,
        joint: str | None = None,
        index: int | None = None,
        section: str = "joints",
    ) -> None:
        self.joint = joint
        self.index = index
        self.problem = problem
        self.section = section
        where = ""
        if joint is not None:
            where = f"joint {joint!r}" + (f" (index {index})" if index is not None else "") + ": "
        super().__init__(f"{where}{problem}")


class UnknownLinkError(ModelError, LookupError):
    """A link name that is not in the robot. ``name`` carries the missing name."""

    def __init__(self, name: str, known: tuple[str, ...] | list[str] = ()) -> None:
        self.name = name
        self.known = tuple(known)
        hint = f"; known links: {', '.join(self.known)}" if self.known else ""
        super().__init__(f"unknown link {name!r}{hint}")

    def __str__(self) -> str:  # LookupError would quote the whole text again
        return str(self.args[0])


class ConfigurationError(ModelError):
    """A joint configuration ``q`` handed to kinematics has the wrong size, shape or a NaN.

    Attributes: ``joint`` and ``index`` (when one joint is at fault), ``value``, ``expected``.
    """

    def __init__(
        self, value: Any, expected: str, *, joint: str | None = None, index: int | None = None
    ) -> None:
        self.joint = joint
        self.index = index
        self.value = value
        self.expected = expected
        where = ""
        if joint is not None:
            where = f"joint {joint!r}" + (f" (index {index})" if index is not None else "") + ": "
        super().__init__(f"{where}q = {_short_repr(value)}; expected {expected}")


class UnreachableError(ModelError):
    """Leg inverse kinematics has no solution inside the workspace or the joint limits.

    Attributes: ``leg``, ``target`` (x, y, z in m, body frame), ``reason``; ``joint`` and
    ``index`` name the joint whose limit was broken, when that is the cause.
    """

    def __init__(
        self,
        leg: str,
        target: tuple[float, float, float],
        reason: str,
        *,
        joint: str | None = None,
        index: int | None = None,
    ) -> None:
        self.leg = leg
        self.target = target
        self.reason = reason
        self.joint = joint
        self.index = index
        x, y, z = target
        super().__init__(f"leg {leg!r}: foot target ({x:.4f}, {y:.4f}, {z:.4f}) m: {reason}")


class ParameterError(ModelError):
    """A parameter value or declaration breaks its type or bounds; nothing was changed.

    Attributes: ``name``, ``value``, ``expected``.
    """

    def __init__(self, name: str, value: Any, expected: str) -> None:
        self.name = name
        self.value = value
        self.expected = expected
        super().__init__(f"parameter {name!r} = {_short_repr(value)}; expected {expected}")


def _short_repr(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
