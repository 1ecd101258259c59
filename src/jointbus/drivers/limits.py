"""Joint limits as a driver enforces them: reject or saturate, and ros2_control's soft limits.

Where it sits: :mod:`jointbus.drivers`, applied by the :class:`ActuatorArray` base class to every
command before any value reaches a driver hook (so nothing is ever applied in part), and reused by
the bridge for the same checks. Checks are vectorised with numpy: a 12-joint command costs a few
array operations, not 12 Python iterations; only when a check fails does the code look for the
culprit to name it.

Policies: :attr:`LimitPolicy.REJECT` raises :class:`~jointbus.messages.errors.LimitError` naming
the first offending joint (name and index), the field, the value and the bounds;
:attr:`LimitPolicy.SATURATE` clamps and returns a :class:`Saturation` record per clamped value, so
that saturation is *reported*, never silent.

Soft limits follow ros2_control's ``SoftJointLimiter`` law (``k_position`` in 1/s, ``k_velocity``
in N·m·s/rad·… per unit velocity): near a soft bound the admissible velocity shrinks in proportion
to the remaining distance, and the admissible effort in proportion to the velocity error, so a
joint slows down smoothly instead of hitting a hard stop.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from jointbus.messages.errors import LimitError, NonFiniteError
from jointbus.model.limits import JointLimitSpec

FloatArray = NDArray[np.float64]


class LimitPolicy(enum.Enum):
    """What to do with a value outside its limits."""

    REJECT = "reject"
    SATURATE = "saturate"


@dataclass(frozen=True, slots=True)
class Saturation:
    """One clamped value: which joint, which field, what was asked and what was applied."""

    joint: str
    index: int
    field: str
    requested: float
    applied: float


#: Relative half-ulp of float32. Commands may travel as float32 (hb50's ``JointCommand``), so a
#: target set exactly at a limit can arrive up to this much outside it: the same value, not a
#: violation.
_F32_REL_TOLERANCE = 2.0**-24
#: Half the smallest float32 subnormal: float32 rounding moves a value near 0 by up to this much.
_F32_ABS_TOLERANCE = 2.0**-150


def at_limit_bounds(lower: FloatArray, upper: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The bounds a value is *accepted* within for the limits [``lower``, ``upper``]: each widened
    by float32 rounding (half an ulp of float32: relative, or half the smallest subnormal near 0).

    The one rule for "a float32 value at a limit is at the limit", applied by
    :meth:`JointLimits.apply` (the device API) and by the nodes' command check alike: rounding to
    float32 moves a value by at most this much, and it is monotone, so a target at or inside a
    limit stays accepted after rounding, and a value beyond the widened bound was beyond the limit
    before it. An accepted value outside [``lower``, ``upper``] is applied clamped to the limit.
    Infinite bounds stay infinite.
    """
    with np.errstate(invalid="ignore"):
        widened_lower = lower - np.maximum(np.abs(lower) * _F32_REL_TOLERANCE, _F32_ABS_TOLERANCE)
        widened_upper = upper + np.maximum(np.abs(upper) * _F32_REL_TOLERANCE, _F32_ABS_TOLERANCE)
    return widened_lower, widened_upper


class JointLimits:
    """Vectorised limits of N named joints, with one policy for commands."""

    __slots__ = ("_lower", "_names", "_upper", "policy", "soft", "specs", "type_name")

    FIELDS = ("position", "velocity", "effort", "current")

    def __init__(
        self,
        names: Sequence[str],
        specs: Sequence[JointLimitSpec],
        policy: LimitPolicy = LimitPolicy.REJECT,
        *,
        type_name: str = "command",
    ) -> None:
        if len(names) != len(specs):
            raise ValueError(f"{len(names)} joint names but {len(specs)} limit specs")
        self._names = tuple(names)
        self.specs: tuple[JointLimitSpec, ...] = specs if isinstance(specs, tuple) else tuple(specs)
        """The specs as given (the same tuple object when a tuple was given: an array's
        ``config.limits``, so a check can say which array's limits it applied)."""
        self.policy = policy
        self.type_name = type_name
        self.soft = tuple(s.soft for s in specs)
        self._lower = {
            "position": np.array([s.position_min for s in specs], dtype=np.float64),
            "velocity": np.array([-s.velocity_max for s in specs], dtype=np.float64),
            "effort": np.array([-s.effort_max for s in specs], dtype=np.float64),
            "current": np.array([-s.current_max for s in specs], dtype=np.float64),
        }
        self._upper = {
            "position": np.array([s.position_max for s in specs], dtype=np.float64),
            "velocity": np.array([s.velocity_max for s in specs], dtype=np.float64),
            "effort": np.array([s.effort_max for s in specs], dtype=np.float64),
            "current": np.array([s.current_max for s in specs], dtype=np.float64),
        }

    @property
    def names(self) -> tuple[str, ...]:
        return self._names

    def bounds(self, field: str, index: int) -> tuple[float, float]:
        """(lower, upper) of one joint's field."""
        return float(self._lower[field][index]), float(self._upper[field][index])

    def bounds_array(self, field: str) -> tuple[FloatArray, FloatArray]:
        """(lower, upper) of ``field`` for every joint (copies)."""
        return self._lower[field].copy(), self._upper[field].copy()

    def apply(
        self,
        field: str,
        values: FloatArray,
        indices: NDArray[np.intp] | Sequence[int] | None = None,
        *,
        command_field: str | None = None,
    ) -> tuple[FloatArray, list[Saturation]]:
        """Check ``values`` (for the joints at ``indices``; all joints when ``None``).

        Returns the values to apply (a new array when saturated) and the saturation records.
        Raises :class:`NonFiniteError` for NaN/inf whatever the policy (a NaN cannot be saturated
        into meaning), and :class:`LimitError` under the reject policy.
        """
        idx = np.arange(len(self._names)) if indices is None else np.asarray(indices, dtype=np.intp)
        lower = self._lower[field][idx]
        upper = self._upper[field][idx]
        shown = command_field or field
        if not np.isfinite(values).all():
            k = int(np.flatnonzero(~np.isfinite(values))[0])
            j = int(idx[k])
            raise NonFiniteError(
                self.type_name,
                shown,
                float(values[k]),
                "a finite number",
                joint=self._names[j],
                index=j,
            )
        low = values < lower
        high = values > upper
        if not (low.any() or high.any()):
            return values, []
        # Within float32 rounding of a bound is *at* the bound: clamp quietly, report nothing.
        accept_lower, accept_upper = at_limit_bounds(lower, upper)
        low &= values < accept_lower
        high &= values > accept_upper
        if not (low.any() or high.any()):
            return np.clip(values, lower, upper), []
        if self.policy is LimitPolicy.REJECT:
            k = int(np.flatnonzero(low | high)[0])
            j = int(idx[k])
            raise LimitError(
                self.type_name,
                shown,
                float(values[k]),
                f"within [{lower[k]:g}, {upper[k]:g}]",
                joint=self._names[j],
                index=j,
            )
        applied = np.clip(values, lower, upper)
        records = [
            Saturation(
                self._names[int(idx[k])], int(idx[k]), shown, float(values[k]), float(applied[k])
            )
            for k in np.flatnonzero(low | high)
        ]
        return applied, records

    def soft_velocity_bounds(self, position: FloatArray) -> tuple[FloatArray, FloatArray]:
        """ros2_control law: admissible velocity range per joint given measured position (rad)."""
        vmin = self._lower["velocity"].copy()
        vmax = self._upper["velocity"].copy()
        for j, soft in enumerate(self.soft):
            if soft is None:
                continue
            vmin[j] = np.clip(-soft.k_position * (position[j] - soft.lower), vmin[j], vmax[j])
            vmax[j] = np.clip(-soft.k_position * (position[j] - soft.upper), vmin[j], vmax[j])
        return vmin, vmax

    def soft_effort_bounds(
        self, position: FloatArray, velocity: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        """ros2_control law: admissible effort range per joint given position and velocity."""
        vmin, vmax = self.soft_velocity_bounds(position)
        emin = self._lower["effort"].copy()
        emax = self._upper["effort"].copy()
        for j, soft in enumerate(self.soft):
            if soft is None:
                continue
            lo, hi = emin[j], emax[j]
            emin[j] = np.clip(-soft.k_velocity * (velocity[j] - vmin[j]), lo, hi)
            emax[j] = np.clip(-soft.k_velocity * (velocity[j] - vmax[j]), lo, hi)
        return emin, emax
