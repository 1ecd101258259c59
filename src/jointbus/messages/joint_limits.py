"""Per-joint limits on samples (Rock ``base::JointLimitRange`` / ``base::JointLimits``).

Where it sits: :mod:`jointbus.messages`, above :mod:`~.joint_sample` and :mod:`~.joints`; the
robot model (:mod:`jointbus.model`) builds a :class:`JointLimits` from its description, and the
bridge and drivers call :meth:`JointLimits.validate` (reject a command) or
:meth:`JointLimits.saturate` (clamp one) before anything reaches an actuator.

A :class:`JointLimitRange` is a pair of samples, ``min`` and ``max``, field by field (position in
rad or m, speed in rad/s or m/s, effort in N·m or N, raw, acceleration). A **NaN bound means
unbounded** on that side, as in Rock; a NaN (unset) field of the sample being checked is not
checked. Wire types: ``jointbus_msgs/msg/JointLimitRange`` (``JointSample min``, ``JointSample
max``) and ``jointbus_msgs/msg/JointLimits`` (``string[] names``, ``JointLimitRange[] ranges``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from jointbus.codec.wire import StringSeq
from jointbus.messages.base import Message
from jointbus.messages.errors import (
    LengthMismatchError,
    LimitError,
    UnknownJointError,
    ValidationError,
)
from jointbus.messages.joint_sample import FIELDS, JointSample
from jointbus.messages.joints import Joints
from jointbus.messages.sensor_msgs import check_names


def _bounds_text(lo: float, hi: float) -> str:
    low = "-inf" if math.isnan(lo) else repr(lo)
    high = "inf" if math.isnan(hi) else repr(hi)
    return f"[{low}, {high}]"


@dataclass(frozen=True, slots=True)
class JointLimitRange(Message):
    """The bounds of one joint: every set field of ``min`` ≤ the sample's field ≤ ``max``'s."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/JointLimitRange"
    min: JointSample = field(default_factory=JointSample)
    max: JointSample = field(default_factory=JointSample)

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        if type(self.min) is not JointSample:
            raise ValidationError(tn, "min", self.min, "a JointSample")
        if type(self.max) is not JointSample:
            raise ValidationError(tn, "max", self.max, "a JointSample")
        for name, lo, hi in zip(FIELDS, self.min.values(), self.max.values(), strict=True):
            if lo > hi:  # False whenever either is NaN (unbounded)
                raise ValidationError(
                    tn, f"min.{name}", lo, f"at most max.{name} = {hi!r} (an empty range)"
                )

    @classmethod
    def position(cls, lo: float, hi: float) -> JointLimitRange:
        """A range that bounds only the position (rad or m); NaN for an open side."""
        return cls(JointSample(position=lo), JointSample(position=hi))

    def bounds(self, name: str) -> tuple[float, float]:
        """``(min, max)`` of field ``name`` (NaN = unbounded)."""
        lo: float = getattr(self.min, name)
        hi: float = getattr(self.max, name)
        return lo, hi

    def first_violation(self, sample: JointSample) -> tuple[str, float, float, float] | None:
        """``(field, value, min, max)`` of the first out-of-range field, or ``None``."""
        for name, value, lo, hi in zip(
            FIELDS, sample.values(), self.min.values(), self.max.values(), strict=True
        ):
            if value < lo or value > hi:  # comparisons with NaN are False: unset / unbounded
                return name, value, lo, hi
        return None

    def is_valid(self, sample: JointSample) -> bool:
        """Whether every set field of ``sample`` is within bounds."""
        return self.first_violation(sample) is None

    def validate(
        self, sample: JointSample, *, joint: str | None = None, index: int | None = None
    ) -> None:
        """Raise :class:`LimitError` naming the field, value and bounds (and the joint if given)."""
        violation = self.first_violation(sample)
        if violation is not None:
            name, value, lo, hi = violation
            raise LimitError(
                "JointLimits",
                name,
                value,
                f"within {_bounds_text(lo, hi)}",
                joint=joint,
                index=index,
            )

    def saturate(self, sample: JointSample) -> tuple[bool, JointSample]:
        """``(changed, sample clamped into bounds)``; an unchanged sample is returned as is."""
        if self.first_violation(sample) is None:
            return False, sample
        clamped: dict[str, Any] = {}
        for name, value, lo, hi in zip(
            FIELDS, sample.values(), self.min.values(), self.max.values(), strict=True
        ):
            if value < lo:
                clamped[name] = lo
            elif value > hi:
                clamped[name] = hi
            else:
                clamped[name] = value
        return True, JointSample(**clamped)


@dataclass(frozen=True, slots=True)
class JointLimits(Message):
    """Limit ranges of named joints: ``ranges[i]`` bounds joint ``names[i]``."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/JointLimits"
    names: StringSeq = ()
    ranges: tuple[JointLimitRange, ...] = ()

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        names = check_names(tn, "names", self.names)
        object.__setattr__(self, "names", names)
        ranges: Any = self.ranges
        if type(ranges) is not tuple:
            if isinstance(ranges, str | bytes) or not isinstance(ranges, Iterable):
                raise ValidationError(tn, "ranges", ranges, "a sequence of JointLimitRange")
            ranges = tuple(ranges)
            object.__setattr__(self, "ranges", ranges)
        if len(ranges) != len(names):
            raise LengthMismatchError(
                tn, "ranges", f"{len(ranges)} ranges", f"one range per name ({len(names)})"
            )
        for index, item in enumerate(ranges):
            if type(item) is not JointLimitRange:
                raise ValidationError(
                    tn, "ranges", item, "a JointLimitRange", joint=names[index], index=index
                )

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[str, JointLimitRange]]) -> JointLimits:
        """Build from ``(name, range)`` pairs (e.g. ``dict.items()``), in their order."""
        items = tuple(pairs)
        return cls(tuple(n for n, _ in items), tuple(r for _, r in items))

    def __len__(self) -> int:
        return len(self.names)

    def range(self, name: str) -> JointLimitRange:
        """The range of joint ``name`` (:class:`UnknownJointError` carrying ``name`` if absent)."""
        try:
            return self.ranges[self.names.index(name)]
        except ValueError:
            raise UnknownJointError(name, self.names) from None

    def validate(self, joints: Joints) -> None:
        """Check every joint of ``joints`` against its range, matched by name.

        Raises :class:`LimitError` naming the joint, its index in ``joints``, the field, the value
        and the bounds, or :class:`UnknownJointError` for a joint these limits do not know.
        """
        for index, (name, sample) in enumerate(zip(joints.names, joints.samples, strict=True)):
            self.range(name).validate(sample, joint=name, index=index)

    def is_valid(self, joints: Joints) -> bool:
        """Whether every joint of ``joints`` is within its range (unknown joints raise)."""
        return all(
            self.range(name).is_valid(sample)
            for name, sample in zip(joints.names, joints.samples, strict=True)
        )

    def saturate(self, joints: Joints) -> tuple[bool, Joints]:
        """``(changed, joints clamped into their ranges)``; unchanged input is returned as is."""
        changed = False
        samples: list[JointSample] = []
        for name, sample in zip(joints.names, joints.samples, strict=True):
            was_clamped, new = self.range(name).saturate(sample)
            changed = changed or was_clamped
            samples.append(new)
        if not changed:
            return False, joints
        return True, Joints(joints.header, joints.names, tuple(samples))


__all__ = ["JointLimitRange", "JointLimits"]
