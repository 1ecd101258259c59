"""``nav_msgs/msg/Odometry`` and the two covariance records it nests, as ROS 2 lays them out.

Where it sits: :mod:`jointbus.messages`, above ``std_msgs`` and ``geometry_msgs``. The simulator's
ground truth (``/hb50/sim/ground_truth``) is published as an Odometry, the message every ROS tool
(RViz, Foxglove, ``robot_localization``) reads a base's pose and twist from.

ROS's conventions, kept as they are: the pose is in ``header.frame_id`` (the world / odometry
frame), the twist in ``child_frame_id`` (the robot's base frame); a covariance is a row-major 6 × 6
matrix over (x, y, z, rotation about x, y, z), m² and rad², and all zeros when it is not known.
Units: m, rad, m/s, rad/s. Like the other wire records, values are not required to be finite (ROS
puts NaN for unknown); only their types and the covariance's 36 entries are checked.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar

from jointbus.codec.rules import WireRule
from jointbus.codec.wire import Primitive, Seq, String
from jointbus.messages.base import Message
from jointbus.messages.errors import LengthMismatchError, ValidationError
from jointbus.messages.geometry_msgs import Pose, Twist
from jointbus.messages.std_msgs import Header

__all__ = ["COVARIANCE_SIZE", "Odometry", "PoseWithCovariance", "TwistWithCovariance"]

#: Entries of a ROS 6 × 6 covariance (row-major).
COVARIANCE_SIZE = 36

Covariance = Annotated[tuple[float, ...], Seq(Primitive.FLOAT64, COVARIANCE_SIZE)]
_ZERO_COVARIANCE: tuple[float, ...] = (0.0,) * COVARIANCE_SIZE


def _covariance(type_name: str, values: object) -> tuple[float, ...]:
    """``values`` as a tuple of 36 built-in floats, or a typed error naming the bad entry."""
    if values is _ZERO_COVARIANCE:  # the default ("unknown"): no need to look at 36 entries
        return values
    if (
        type(values) is tuple
        and len(values) == COVARIANCE_SIZE
        and all(type(v) is float for v in values)
    ):
        return values
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise ValidationError(type_name, "covariance", values, "36 floats (row-major 6 × 6)")
    items: tuple[Any, ...] = tuple(values)
    if len(items) != COVARIANCE_SIZE:
        raise LengthMismatchError(
            type_name, "covariance", f"{len(items)} values", "36 values (row-major 6 × 6)"
        )
    out: list[float] = []
    for index, value in enumerate(items):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ValidationError(type_name, "covariance", value, "a real number", index=index)
        out.append(float(value))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class PoseWithCovariance(Message):
    """A pose (m, unit quaternion) with its 6 × 6 covariance (m², rad²; zeros = unknown)."""

    TYPE_NAME: ClassVar[str] = "geometry_msgs/msg/PoseWithCovariance"
    #: A fixed-length float64 array holds only floats: nothing on the wire can break a rule.
    WIRE_RULES: ClassVar[Mapping[str, WireRule]] = {}
    pose: Pose = field(default_factory=Pose)
    covariance: Covariance = _ZERO_COVARIANCE

    def __post_init__(self) -> None:
        if type(self.pose) is not Pose:
            raise ValidationError(self.TYPE_NAME, "pose", self.pose, "a geometry_msgs/msg/Pose")
        object.__setattr__(self, "covariance", _covariance(self.TYPE_NAME, self.covariance))


@dataclass(frozen=True, slots=True)
class TwistWithCovariance(Message):
    """A twist (m/s, rad/s) with its 6 × 6 covariance (zeros = unknown)."""

    TYPE_NAME: ClassVar[str] = "geometry_msgs/msg/TwistWithCovariance"
    WIRE_RULES: ClassVar[Mapping[str, WireRule]] = {}
    twist: Twist = field(default_factory=Twist)
    covariance: Covariance = _ZERO_COVARIANCE

    def __post_init__(self) -> None:
        if type(self.twist) is not Twist:
            raise ValidationError(self.TYPE_NAME, "twist", self.twist, "a geometry_msgs/msg/Twist")
        object.__setattr__(self, "covariance", _covariance(self.TYPE_NAME, self.covariance))


@dataclass(frozen=True, slots=True)
class Odometry(Message):
    """Where a base is (``pose``, in ``header.frame_id``) and how it moves (``twist``, in
    ``child_frame_id``), each with a covariance."""

    TYPE_NAME: ClassVar[str] = "nav_msgs/msg/Odometry"
    WIRE_RULES: ClassVar[Mapping[str, WireRule]] = {}
    header: Header = field(default_factory=Header)
    child_frame_id: String = ""
    pose: PoseWithCovariance = field(default_factory=PoseWithCovariance)
    twist: TwistWithCovariance = field(default_factory=TwistWithCovariance)

    def __post_init__(self) -> None:
        name = self.TYPE_NAME
        if type(self.header) is not Header:
            raise ValidationError(name, "header", self.header, "a std_msgs/msg/Header")
        if type(self.child_frame_id) is not str:
            raise ValidationError(name, "child_frame_id", self.child_frame_id, "a str")
        if type(self.pose) is not PoseWithCovariance:
            raise ValidationError(name, "pose", self.pose, "a PoseWithCovariance")
        if type(self.twist) is not TwistWithCovariance:
            raise ValidationError(name, "twist", self.twist, "a TwistWithCovariance")
