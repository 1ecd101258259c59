"""The command ranges a driver can carry: per joint, the bounds of each impedance field it accepts.

Where it sits: :mod:`jointbus.drivers`, beside :mod:`.calibration` (which it uses to bring a
driver's actuator-space ranges into joint space) and below :mod:`.actuator_array`, whose
:meth:`~jointbus.drivers.actuator_array.ActuatorArray.command_ranges` returns them, and the
nodes' command check (:class:`~jointbus.nodes.safety.command_check.CommandCheck`), which folds
them into its limits.

**Why.** Joint limits say what the *robot* allows; a driver may carry less. A ``can://`` motor's
MIT frame encodes each field over a fixed range (md80: ``kp`` 0…500 N·m/rad), and a value
outside it cannot be sent at all. Until a driver declared these ranges, a served array's checks
passed ``kp`` 600 and the driver refused every write of the stream ("nothing was sent"); now the
check refuses the command up front, whole, with the typed error every other out-of-limit value
gets ("within [0, 500] (the md80's wire range)"), and the previous command keeps running.

**Fields and units** (joint space, actuator order): ``position`` rad (m), ``velocity`` rad/s
(m/s), ``effort`` N·m (N), ``kp`` N·m/rad (N/m), ``kd`` N·m·s/rad (N·s/m). ``±inf`` = no bound
(a driver that declares nothing is unbounded in every field). ``bound_by`` says per joint what
sets its ranges, as errors quote it ("the md80's wire range"; empty when unbounded).

**From actuator space** (:meth:`CommandRanges.from_actuator`): the base class maps a joint-space
command to the driver as ``actuator = direction · joint + offset`` for positions, ``direction ·
joint`` for velocity and effort, gains unchanged (:mod:`.calibration`). So a reversed joint
(direction −1) swaps the ends of its position, velocity and effort ranges, and an offset shifts
its position range. The joint-space ends are then moved inwards by the float64 rounding of that
map where needed (a few ULP at most), so that *every* joint value inside the declared range maps
to an actuator value the driver takes — never one a hair outside it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Self

import numpy as np
import numpy.typing as npt

from jointbus.drivers.calibration import Calibration

__all__ = ["COMMAND_RANGE_FIELDS", "CommandRanges"]

FloatArray = npt.NDArray[np.float64]

COMMAND_RANGE_FIELDS: Final[tuple[str, ...]] = ("position", "velocity", "effort", "kp", "kd")
"""The fields of an impedance command a driver may bound, in the row order of the arrays."""

_POSITION, _VELOCITY, _EFFORT = 0, 1, 2
#: At most this many float64 steps inwards make a joint-space end map inside the actuator range
#: (the map ``d · x + offset`` rounds once: one step suffices; the rest is margin).
_NUDGES: Final = 8


@dataclass(frozen=True, slots=True, eq=False)
class CommandRanges:
    """Per joint, the bounds of each impedance field a driver can carry (see the module docstring).

    ``lower`` / ``upper`` have shape (5, N): rows in :data:`COMMAND_RANGE_FIELDS` order, columns
    in actuator order, joint space, ``±inf`` unbounded (read-only). ``bound_by`` (N entries)
    names what sets each joint's ranges, for errors.
    """

    names: tuple[str, ...]
    lower: FloatArray
    upper: FloatArray
    bound_by: tuple[str, ...]

    def __post_init__(self) -> None:
        n = len(self.names)
        shape = (len(COMMAND_RANGE_FIELDS), n)
        lower = np.array(self.lower, dtype=np.float64)
        upper = np.array(self.upper, dtype=np.float64)
        if lower.shape != shape or upper.shape != shape:
            raise ValueError(
                f"command ranges of shape {lower.shape} / {upper.shape}; expected {shape}: one "
                f"row per field ({', '.join(COMMAND_RANGE_FIELDS)}), one column per joint"
            )
        if len(self.bound_by) != n:
            raise ValueError(f"bound_by has {len(self.bound_by)} entries for {n} joints")
        if np.isnan(lower).any() or np.isnan(upper).any() or (lower > upper).any():
            row, index = (int(k) for k in np.argwhere(~(lower <= upper))[0])
            raise ValueError(
                f"joint {self.names[index]!r} (index {index}): {COMMAND_RANGE_FIELDS[row]} range "
                f"[{lower[row, index]}, {upper[row, index]}]; expected lower ≤ upper"
            )
        lower.flags.writeable = False
        upper.flags.writeable = False
        object.__setattr__(self, "names", tuple(self.names))
        object.__setattr__(self, "bound_by", tuple(self.bound_by))
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)

    @classmethod
    def unbounded(cls, names: Sequence[str]) -> Self:
        """No bound on any field of any joint: what a driver that declares nothing carries."""
        shape = (len(COMMAND_RANGE_FIELDS), len(names))
        return cls(tuple(names), np.full(shape, -math.inf), np.full(shape, math.inf),
                   ("",) * len(names))

    @classmethod
    def from_actuator(
        cls,
        names: Sequence[str],
        lower: npt.ArrayLike,
        upper: npt.ArrayLike,
        bound_by: Sequence[str],
        calibration: Calibration,
    ) -> Self:
        """The joint-space ranges of actuator-space ``lower`` / ``upper`` (shape (5, N), rows in
        :data:`COMMAND_RANGE_FIELDS` order: position, velocity, effort/torque, kp, kd) under
        ``calibration`` (module docstring: a reversed joint swaps the ends; the ends are moved
        inwards by float64 rounding where the map would otherwise leave the actuator range)."""
        act_lo = np.array(lower, dtype=np.float64)
        act_hi = np.array(upper, dtype=np.float64)
        d = calibration.direction
        reversed_ = d < 0.0
        lo = act_lo.copy()
        hi = act_hi.copy()
        # position: joint = (actuator − offset) · d, an order-reversing map when d = −1
        a = (act_lo[_POSITION] - calibration.offset) * d
        b = (act_hi[_POSITION] - calibration.offset) * d
        lo[_POSITION] = np.where(reversed_, b, a)
        hi[_POSITION] = np.where(reversed_, a, b)
        for row in (_VELOCITY, _EFFORT):
            lo[row] = np.where(reversed_, -act_hi[row], act_lo[row])
            hi[row] = np.where(reversed_, -act_lo[row], act_hi[row])
        _fit_positions(lo[_POSITION], hi[_POSITION], act_lo[_POSITION], act_hi[_POSITION],
                       calibration)
        return cls(tuple(names), lo, hi, tuple(bound_by))

    @property
    def count(self) -> int:
        """Number of joints N."""
        return len(self.names)

    @property
    def bounded(self) -> bool:
        """True if any field of any joint has a finite bound."""
        return bool(np.isfinite(self.lower).any() or np.isfinite(self.upper).any())

    def bounds(self, field: str, index: int) -> tuple[float, float]:
        """(lower, upper) of ``field`` (one of :data:`COMMAND_RANGE_FIELDS`) of joint ``index``."""
        row = _row(field)
        return float(self.lower[row, index]), float(self.upper[row, index])

    def bounds_array(self, field: str) -> tuple[FloatArray, FloatArray]:
        """(lower, upper) of ``field`` for every joint (read-only views)."""
        row = _row(field)
        return self.lower[row], self.upper[row]

    def expectation(self, field: str, index: int) -> str:
        """How an error states the range of ``field`` of joint ``index``: ``within [0, 500]
        (the md80's wire range)``."""
        lo, hi = self.bounds(field, index)
        why = self.bound_by[index]
        return f"within [{lo:g}, {hi:g}]" + (f" ({why})" if why else "")

    def __repr__(self) -> str:
        return f"CommandRanges({self.count} joints, bounded={self.bounded})"


def _row(field: str) -> int:
    try:
        return COMMAND_RANGE_FIELDS.index(field)
    except ValueError:
        raise KeyError(
            f"unknown field {field!r}; expected one of {', '.join(COMMAND_RANGE_FIELDS)}"
        ) from None


def _fit_positions(
    lo: FloatArray, hi: FloatArray, act_lo: FloatArray, act_hi: FloatArray, cal: Calibration
) -> None:
    """Move the joint-space ends ``lo`` / ``hi`` (in place) inwards until both map into
    [``act_lo``, ``act_hi``] through ``cal`` exactly as the base class maps a command."""
    for _ in range(_NUDGES):
        with np.errstate(invalid="ignore"):
            at_lo = cal.position_to_actuator(lo)
            at_hi = cal.position_to_actuator(hi)
            lo_out = np.isfinite(lo) & ((at_lo < act_lo) | (at_lo > act_hi))
            hi_out = np.isfinite(hi) & ((at_hi < act_lo) | (at_hi > act_hi))
        if not (lo_out.any() or hi_out.any()):
            return
        lo[lo_out] = np.nextafter(lo[lo_out], math.inf)
        hi[hi_out] = np.nextafter(hi[hi_out], -math.inf)
    raise ValueError("command ranges: a position range does not map into the actuator range")
