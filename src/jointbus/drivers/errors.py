"""Typed errors of the driver layer.

Where it sits: :mod:`jointbus.drivers`, used by every driver and by the bridge. The hierarchy
follows python-can's lesson (initialisation / operation / timeout): a caller can catch
:class:`DriverError` for everything, or a precise subclass to react. Invalid *commands* raise the
message layer's :class:`~jointbus.messages.errors.ValidationError` family instead, so the same
error (naming joint, index, field, value, expectation) reaches the user whether a command was
checked by the bridge or by the driver.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

import numpy as np

from jointbus.errors import Refused
from jointbus.messages.errors import UnknownJointError


class DriverError(Exception):
    """Base class of every driver-layer error."""


class DriverNotFoundError(DriverError, LookupError):
    """No driver is registered for a URL scheme; ``known`` lists the schemes that are."""

    def __init__(self, scheme: str, known: tuple[str, ...]) -> None:
        self.scheme = scheme
        self.known = known
        super().__init__(
            f"no actuator-array driver for scheme {scheme!r}; known schemes: {', '.join(known)}"
        )

    def __str__(self) -> str:
        return str(self.args[0])


class DriverURLError(DriverError, ValueError):
    """A driver URL that cannot be parsed or names something the driver does not have."""


class DriverFileError(DriverURLError):
    """A driver URL names a file (a robot description) that is missing or cannot be used.

    ``path`` is the file as resolved (absolute); the loader's own error, naming the key and value
    at fault, is the text and ``__cause__``.
    """

    def __init__(self, url: str, path: str, problem: str) -> None:
        self.url = url
        self.path = path
        super().__init__(f"driver URL {url!r}: {problem}")


class DriverLoadError(DriverError, ImportError):
    """A registered driver failed to import (a missing optional dependency, typically)."""


class DriverClosedError(DriverError):
    """The driver was used after :meth:`close`."""


class DriverIOError(DriverError):
    """Communication with the hardware failed (bus-off, device gone)."""


class MotionTimeoutError(DriverError, TimeoutError):
    """:meth:`ActuatorArray.wait_until_still` ran out of time: some joints still move.

    ``joints`` / ``indices`` name them (actuator order), ``positions`` and ``velocities`` are
    their last readings — rad and rad/s for a rotary (revolute) joint, m and m/s for a linear
    (prismatic) one, as ``linear`` says per joint (the actuator's ``ActuatorType`` in the
    array's geometry) — and ``timeout`` the time waited, s. The text gives each value with its
    unit: ``still moving after 0.01 s: 'elbow' (index 2) at 1.5 rad, -0.0081 rad/s``.
    """

    def __init__(
        self,
        timeout: float,
        joints: Sequence[str],
        indices: Sequence[int],
        positions: Sequence[float],
        velocities: Sequence[float],
        *,
        linear: Sequence[bool],
    ) -> None:
        self.timeout = timeout
        self.joints = tuple(joints)
        self.indices = tuple(indices)
        self.positions = tuple(positions)
        self.velocities = tuple(velocities)
        self.linear = tuple(bool(x) for x in linear)
        moving = ", ".join(
            f"{name!r} (index {i}) at {p:.4g} {unit}, {v:+.3g} {unit}/s"
            for name, i, p, v, unit in zip(
                self.joints,
                self.indices,
                self.positions,
                self.velocities,
                ("m" if x else "rad" for x in self.linear),
                strict=True,
            )
        )
        super().__init__(f"still moving after {timeout:g} s: {moving}")


class RejectReason(enum.Enum):
    """Why a request was refused (Player's NACK, made specific)."""

    UNKNOWN_JOINT = "unknown joint"
    UNSUPPORTED = "unsupported"
    OUT_OF_RANGE = "out of range"
    POWERED_OFF = "powered off"
    TIMED_OUT = "timed out"
    ESTOPPED = "emergency stop latched"
    BRAKED = "brakes engaged"
    #: A one-shot command while an impedance stream drives the array (arbitration's owner).
    OWNED = "an impedance stream drives the array"
    #: An e-stop reset with no e-stop latched: nothing to reset.
    NOT_LATCHED = "the e-stop is not latched"
    #: A command the message rules refuse: NaN, a wrong length, a wrong joint order or source.
    INVALID = "invalid command"
    #: The device failed to carry the request out (closed, not answering): nothing was refused
    #: on its merits, retrying may work once the device is back.
    DRIVER_FAULT = "the driver failed"


class RequestRejected(DriverError, Refused):
    """A request was refused (NACKed); nothing changed. ``reason`` says why, ``detail`` how.

    A :class:`DriverError` and a :class:`jointbus.errors.Refused`, like the message layer's
    validation errors that a driver raises for a bad command. Like them it names, as data, the
    joint (``joint`` / ``index``, ``None`` when the refusal is not about one joint), the
    ``field`` at fault, its ``value`` and what was ``expected`` — the argument or the state
    that stood in the way (``motor_power`` = ``False``, expected on; ``brakes`` = ``True``,
    expected released; ``estop`` = ``'latched'``, ...) — so a NACK carries them in its
    structured fields, not only in ``detail``'s text. ``field`` is ``""`` only where a caller
    built the error without them (then ``value`` is ``None`` and means nothing)."""

    def __init__(
        self,
        request: str,
        reason: RejectReason,
        detail: str = "",
        *,
        joint: str | None = None,
        index: int | None = None,
        field: str = "",
        value: object = None,
        expected: str = "",
    ) -> None:
        self.request = request
        self.reason = reason
        self.detail = detail
        self.joint = joint
        self.index = index
        self.field = field
        # a numpy scalar is shown as the number it is (``-3.0``, not ``np.float64(-3.0)``)
        self.value = value.item() if isinstance(value, np.generic) else value
        self.expected = expected
        where = f" for joint {joint!r} (index {index})" if joint is not None else ""
        tail = f": {detail}" if detail else ""
        super().__init__(f"request {request!r} refused{where}: {reason.value}{tail}")


def joint_expectation(names: Sequence[str], *, wire: bool = False) -> str:
    """What a call naming a joint of an array of ``names`` expects, as a refusal says it:
    ``an index in [0, 5] or a joint name (shoulder_pan, ..., flange_roll)``; ``wire``: a request
    from the network, where Player's wire names a joint by its index only and ``-1`` every
    joint — ``an index in [0, 5] (shoulder_pan, ..., flange_roll), or -1 for every joint``."""
    count = len(names)
    if not count:
        return "a joint of the array (it has none)"
    span = f"[0, {count - 1}]" if count > 1 else "0"
    listed = ", ".join(names)
    if wire:
        return f"an index in {span} ({listed}), or -1 for every joint"
    return f"an index in {span} or a joint name ({listed})"


class UnknownArrayJointError(UnknownJointError, RequestRejected):
    """A joint name or index the array does not have, from any call that names a joint.

    One error for one mistake: it is the message layer's :class:`UnknownJointError` (what a
    command such as ``position`` raised) *and* a :class:`RequestRejected` with reason
    ``UNKNOWN_JOINT`` (what a request such as ``set_speed`` raised), so code catching either keeps
    working; catch :class:`UnknownJointError` to handle them all. ``name`` is the joint asked for
    (``str(index)`` for an index), ``index`` the index asked for (``None`` for a name), ``known``
    the array's joints in actuator order; ``expected`` replaces the expectation a Python caller
    is told (:func:`joint_expectation`) for a request from the network, which names joints by
    index only (:func:`joint_expectation` with ``wire``). The message reads naturally::

        no joint with index 99; the array has 6 joints (0–5): shoulder_pan, ..., flange_roll
        no joint named 'elbw' (did you mean 'elbow'?); the array's joints: shoulder_pan, ...
    """

    def __init__(
        self,
        request: str,
        joint: str | int,
        known: Sequence[str],
        suggestion: str | None = None,
        *,
        expected: str | None = None,
    ) -> None:
        names = tuple(known)
        listed = ", ".join(names)
        if isinstance(joint, str):
            hint = f" (did you mean {suggestion!r}?)" if suggestion else ""
            text = f"no joint named {joint!r}{hint}; the array's joints: {listed}"
            asked_index: int | None = None
        else:
            count = len(names)
            span = f"0–{count - 1}" if count > 1 else "0"
            text = f"no joint with index {joint}; the array has {count} joints ({span}): {listed}"
            asked_index = joint
        RequestRejected.__init__(
            self,
            request,
            RejectReason.UNKNOWN_JOINT,
            text,
            field="joint",
            value=joint,
            expected=joint_expectation(names) if expected is None else expected,
        )
        self.name = str(joint)
        self.known = names
        self.joint = None
        self.index = asked_index
        self.args = (text,)

    def __str__(self) -> str:
        return str(self.args[0])
