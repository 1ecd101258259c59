"""Impedance targets for every joint of an array, in joint space: what ``ActuatorArray.impedance``
takes.

Where it sits: :mod:`jointbus.drivers`, beside :mod:`.actuator_array` (whose ``impedance`` method
checks and applies it) and below the nodes (the array node and hb50's bridge convert their wire
messages — the generic ``jointbus_msgs/msg/JointImpedance``, hb50's ``JointCommand`` — into it
once, at their edge, and their safety components shape it). It is not a wire message: it has no
header, no names and no source; the arrays are in the array's actuator order, like every other
whole-array call of the device API (``positions``, ``speeds``, ``currents``).

Each joint follows the impedance law ``τ = effort + kp·(position − p) + kd·(velocity − v)``:
``position`` rad (m for a linear joint), ``velocity`` rad/s (m/s), ``effort`` N·m (N), ``kp``
N·m/rad (N/m), ``kd`` N·m·s/rad (N·s/m); ``brake`` engages a joint's brake.

Why numpy float64 arrays and no checks here: this value travels the 500 Hz path (decode → check →
arbitrate → shape → derate → write) and every step is a vector operation on these arrays; keeping
them float64 arrays end to end spares the tuple ↔ array conversions the hb50 message path used to
make at each step. What a command must satisfy (one value per joint, finite, ``kp``/``kd`` ≥ 0,
limits, brakes) depends on the array, so the array checks it (:meth:`ActuatorArray.impedance`), and
the errors name the joint, index, field, value and expectation there. The arrays are made
read-only, so a command handed to several consumers cannot be changed under one of them.

**Checked once.** On the 500 Hz path of a node the command check
(:class:`~jointbus.nodes.safety.command_check.CommandCheck`) already validated every value —
lengths, finite, gains, hard limits, the driver's command ranges, brakes — before the driver sees
it. What it returns is a :class:`CheckedImpedance`: the same arrays plus the limits and command
ranges they were checked against, a type only that validation makes (constructing one directly
raises ``TypeError``). The driver applies a :class:`CheckedImpedance` checked against its own
limits and ranges without checking those again; it still
applies what depends on the moment (soft limits at the measured state, power). Any other
:class:`ImpedanceCommand` — user code calling the device API, a command a node changed after the
check (re-entry ramp, derating, hold, safe) — is checked in full.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Final, Self

import numpy as np
import numpy.typing as npt

from jointbus.drivers.command_ranges import CommandRanges
from jointbus.messages.errors import ValidationError
from jointbus.model.limits import JointLimitSpec

__all__ = ["CheckedImpedance", "ImpedanceCommand"]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

_TYPE: Final = "ImpedanceCommand"


_F64: Final = np.dtype(np.float64)
_BOOL: Final = np.dtype(np.bool_)


def _floats(field_name: str, values: object) -> FloatArray:
    """``values`` as a read-only 1-D float64 array (no copy when it already is one)."""
    if (
        type(values) is np.ndarray
        and values.dtype is _F64
        and values.ndim == 1
        and not values.flags.writeable
    ):  # already what is kept (every command a check made): the 500 Hz path, first
        return values
    if isinstance(values, str | bytes):
        raise ValidationError(_TYPE, field_name, values, "a sequence of numbers, one per joint")
    if type(values) is np.ndarray and values.dtype == np.float64 and values.ndim == 1:
        array: FloatArray = values
    else:
        try:
            array = np.array(values, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValidationError(
                _TYPE, field_name, values, "a sequence of numbers, one per joint"
            ) from None
        if array.ndim != 1:
            raise ValidationError(
                _TYPE, field_name, values, f"a 1-D sequence, one number per joint ({array.shape})"
            )
    if array.flags.writeable:
        array = array.copy() if array is values else array
        array.flags.writeable = False
    return array


def _bools(values: object) -> BoolArray:
    if (
        type(values) is np.ndarray
        and values.dtype is _BOOL
        and values.ndim == 1
        and not values.flags.writeable
    ):  # already what is kept: as in ``_floats``
        return values
    if type(values) is np.ndarray and values.dtype == np.bool_ and values.ndim == 1:
        array: BoolArray = values
    else:
        if isinstance(values, str | bytes):
            raise ValidationError(_TYPE, "brake", values, "a sequence of bools, one per joint")
        try:
            items = list(values)  # type: ignore[call-overload]
        except TypeError:
            raise ValidationError(
                _TYPE, "brake", values, "a sequence of bools, one per joint"
            ) from None
        for index, item in enumerate(items):
            if not isinstance(item, bool | np.bool_):
                raise ValidationError(_TYPE, "brake", item, "a bool", index=index)
        array = np.array(items, dtype=np.bool_)
    if array.flags.writeable:
        array = array.copy() if array is values else array
        array.flags.writeable = False
    return array


def _per_joint(field_name: str, value: object, n: int) -> object:
    """A scalar broadcast to ``n`` joints (gains given once for all); sequences pass."""
    if isinstance(value, bool):
        raise ValidationError(_TYPE, field_name, value, "a real number")
    if isinstance(value, numbers.Real):
        return np.full(n, float(value))
    return value


@dataclass(frozen=True, slots=True, eq=False)
class ImpedanceCommand:
    """Impedance targets for every joint in actuator order (see the module docstring for units).

    Built from any sequences (converted once to read-only float64 / bool arrays); lengths and
    values are checked by the array that applies it. ``velocity``, ``effort`` and ``brake`` may be
    left empty for "zero / released on every joint" only through :meth:`hold` and
    :meth:`damping`; the constructor takes every field as given.
    """

    position: FloatArray
    velocity: FloatArray
    effort: FloatArray
    kp: FloatArray
    kd: FloatArray
    brake: BoolArray

    FIELDS: ClassVar[tuple[str, ...]] = ("position", "velocity", "effort", "kp", "kd")
    """The float fields, in the order errors and checks list them."""

    def __post_init__(self) -> None:
        setattr_ = object.__setattr__
        for name in self.FIELDS:
            setattr_(self, name, _floats(name, getattr(self, name)))
        setattr_(self, "brake", _bools(self.brake))

    @property
    def count(self) -> int:
        """Number of joints the positions are given for."""
        return int(self.position.shape[0])

    @classmethod
    def hold(
        cls,
        positions: Sequence[float] | FloatArray,
        kp: float | Sequence[float] | FloatArray,
        kd: float | Sequence[float] | FloatArray,
    ) -> Self:
        """Hold each joint at ``positions`` (rad or m) with stiffness ``kp`` and damping ``kd``
        (one value for all joints or one per joint); zero target velocity and effort, brakes
        released."""
        position = _floats("position", positions)
        n = position.shape[0]
        zeros = np.zeros(n)
        return cls(
            position,
            zeros,
            zeros,
            _per_joint("kp", kp, n),  # type: ignore[arg-type]
            _per_joint("kd", kd, n),  # type: ignore[arg-type]
            np.zeros(n, dtype=np.bool_),
        )

    @classmethod
    def damping(cls, count: int, kd: float | Sequence[float] | FloatArray) -> Self:
        """Zero stiffness, damping ``kd`` towards zero velocity on ``count`` joints: each joint
        only resists motion (``τ = −kd·v``), the safe-mode command."""
        zeros = np.zeros(count)
        return cls(
            zeros,
            zeros,
            zeros,
            zeros,
            _per_joint("kd", kd, count),  # type: ignore[arg-type]
            np.zeros(count, dtype=np.bool_),
        )

    def replace(self, **fields: object) -> Self:
        """A copy with ``fields`` (``position=...``, ``kp=...``) replaced."""
        values: dict[str, object] = {name: getattr(self, name) for name in (*self.FIELDS, "brake")}
        values.update(fields)
        return type(self)(**values)  # type: ignore[arg-type]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ImpedanceCommand):
            return NotImplemented
        return all(
            np.array_equal(getattr(self, name), getattr(other, name))
            for name in (*self.FIELDS, "brake")
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        fields = ", ".join(
            f"{name}={getattr(self, name).tolist()!r}" for name in (*self.FIELDS, "brake")
        )
        return f"ImpedanceCommand({fields})"


_SEAL: Final = object()


@dataclass(frozen=True, slots=True, eq=False)
class CheckedImpedance(ImpedanceCommand):
    """An :class:`ImpedanceCommand` that passed a full check against ``limits`` (the array's
    ``ActuatorArrayConfig.limits``, by identity) and ``ranges`` (the array's
    :meth:`~jointbus.drivers.actuator_array.ActuatorArray.command_ranges`, by identity; ``None``:
    not checked) with its brakes checked against ``has_brake``.

    Made only by :func:`_certify`, which only validation calls (see the module docstring); a
    direct construction raises ``TypeError``, so holding one means the check ran.
    """

    limits: tuple[JointLimitSpec, ...]
    has_brake: tuple[bool, ...]
    ranges: CommandRanges | None
    _seal: object

    def __post_init__(self) -> None:
        if self._seal is not _SEAL:
            raise TypeError(
                "a CheckedImpedance is made only by a command check "
                "(jointbus.nodes.safety.CommandCheck); build an ImpedanceCommand instead"
            )
        ImpedanceCommand.__post_init__(self)

    def replace(self, **fields: object) -> ImpedanceCommand:  # type: ignore[override]
        """A plain :class:`ImpedanceCommand` with ``fields`` replaced: a changed command is no
        longer the checked one."""
        values: dict[str, object] = {name: getattr(self, name) for name in (*self.FIELDS, "brake")}
        values.update(fields)
        return ImpedanceCommand(**values)  # type: ignore[arg-type]


def _certify(  # noqa: PLR0917 - one array per field of the command
    position: FloatArray,
    velocity: FloatArray,
    effort: FloatArray,
    kp: FloatArray,
    kd: FloatArray,
    brake: BoolArray,
    limits: tuple[JointLimitSpec, ...],
    has_brake: tuple[bool, ...],
    ranges: CommandRanges | None,
) -> CheckedImpedance:
    """A :class:`CheckedImpedance` of these arrays. Private to jointbus: called only by the
    command check, after it validated every value against ``limits``, ``ranges`` and
    ``has_brake``.

    Arrays that are already what the command keeps (read-only 1-D float64, and bool for
    ``brake``: what the check hands over, every command of the 500 Hz path) are stored as they
    are, as the constructor would store them, without its eight Python calls (≈ 2 µs a command
    on a warm cache, several times that on the bridge's loop thread, whose caches every cycle
    starts cold); anything else goes through the constructor, which converts or refuses it."""
    if (  # the test _floats and _bools pass unchanged, inline: each call is a cost here
        type(position) is _NDARRAY
        and position.dtype is _F64
        and position.ndim == 1
        and not position.flags.writeable
        and type(velocity) is _NDARRAY
        and velocity.dtype is _F64
        and velocity.ndim == 1
        and not velocity.flags.writeable
        and type(effort) is _NDARRAY
        and effort.dtype is _F64
        and effort.ndim == 1
        and not effort.flags.writeable
        and type(kp) is _NDARRAY
        and kp.dtype is _F64
        and kp.ndim == 1
        and not kp.flags.writeable
        and type(kd) is _NDARRAY
        and kd.dtype is _F64
        and kd.ndim == 1
        and not kd.flags.writeable
        and type(brake) is _NDARRAY
        and brake.dtype is _BOOL
        and brake.ndim == 1
        and not brake.flags.writeable
    ):
        checked = _new(CheckedImpedance)
        _set(checked, "position", position)
        _set(checked, "velocity", velocity)
        _set(checked, "effort", effort)
        _set(checked, "kp", kp)
        _set(checked, "kd", kd)
        _set(checked, "brake", brake)
        _set(checked, "limits", limits)
        _set(checked, "has_brake", has_brake)
        _set(checked, "ranges", ranges)
        _set(checked, "_seal", _SEAL)
        return checked
    return CheckedImpedance(
        position, velocity, effort, kp, kd, brake, limits, has_brake, ranges, _SEAL
    )


_NDARRAY: Final = np.ndarray
_new: Final = object.__new__
_set: Final = object.__setattr__
