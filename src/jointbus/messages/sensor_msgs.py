"""``sensor_msgs/JointState`` and ``sensor_msgs/MultiDOFJointState``, as ROS 2 lays them out.

Where it sits: :mod:`jointbus.messages`, above ``std_msgs`` and ``geometry_msgs``. jointbus'
richer joint-state message (per-joint values shaped by joint type) is built on these wire records,
and ROS tools (RViz's robot_state_publisher, Foxglove) read them directly.

Rules enforced (the ones ROS documents and consumers rely on):

- every per-joint array is either empty ("this field is not reported", as ROS documents) or has
  exactly one entry per name — a shorter list would silently shift values onto the wrong joints;
- names are non-empty and unique, because consumers map values by name (a duplicate makes that
  mapping ambiguous).

Values are *not* required to be finite: ROS uses NaN for "this joint did not report this value",
and a decoder must not drop such messages. Values are float64 in m / rad, m/s / rad/s, N / N·m
depending on the joint type.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from jointbus.codec.wire import Float64Seq, StringSeq
from jointbus.messages.base import Message
from jointbus.messages.errors import LengthMismatchError, UnknownJointError, ValidationError
from jointbus.messages.geometry_msgs import Transform, Twist, Wrench
from jointbus.messages.std_msgs import Header


def check_names(type_name: str, field_name: str, names: object) -> tuple[str, ...]:
    """``names`` as a tuple of non-empty, unique strings, or a :class:`ValidationError`.

    The error names the offending index and, for a duplicate, the index of its first use.
    """
    if type(names) is not tuple:
        if isinstance(names, str | bytes) or not isinstance(names, Iterable):
            raise ValidationError(type_name, field_name, names, "a sequence of joint names")
        names = tuple(names)
    if len(set(names)) == len(names) and all(type(n) is str and n for n in names):
        return names
    seen: dict[str, int] = {}
    for index, name in enumerate(names):
        if type(name) is not str:
            raise ValidationError(type_name, field_name, name, "a str", index=index)
        if not name:
            raise ValidationError(
                type_name, field_name, name, "a non-empty joint name", index=index
            )
        if name in seen:
            raise ValidationError(
                type_name,
                field_name,
                name,
                f"a unique joint name (also at index {seen[name]})",
                joint=name,
                index=index,
            )
        seen[name] = index
    return names  # pragma: no cover - the fast check above and this loop agree


def _float64_seq(
    type_name: str, field_name: str, values: object, names: tuple[str, ...]
) -> tuple[float, ...]:
    """``values`` as a tuple of built-in floats, empty or one per name (NaN allowed)."""
    if type(values) is tuple:
        result: tuple[Any, ...] = values
    elif hasattr(values, "tolist") and not isinstance(values, str | bytes):
        listed = values.tolist()
        if not isinstance(listed, list):
            raise ValidationError(type_name, field_name, values, "a 1-D sequence of floats")
        result = tuple(listed)
    else:
        if isinstance(values, str | bytes) or not isinstance(values, Iterable):
            raise ValidationError(type_name, field_name, values, "a sequence of floats")
        result = tuple(values)
    if result and len(result) != len(names):
        raise LengthMismatchError(
            type_name,
            field_name,
            f"{len(result)} values",
            f"one value per name ({len(names)}) or none (not reported)",
        )
    for value in result:
        if type(value) is not float:
            break
    else:
        return result
    out = []
    for index, value in enumerate(result):
        if type(value) is float:
            out.append(value)
        elif isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ValidationError(
                type_name, field_name, value, "a real number", joint=names[index], index=index
            )
        else:
            out.append(float(value))
    return tuple(out)


def _message_seq(
    type_name: str, field_name: str, values: object, names: tuple[str, ...], cls: type
) -> tuple[Any, ...]:
    if type(values) is not tuple:
        if isinstance(values, str | bytes) or not isinstance(values, Iterable):
            raise ValidationError(type_name, field_name, values, f"a sequence of {cls.__name__}")
        values = tuple(values)
    if values and len(values) != len(names):
        raise LengthMismatchError(
            type_name,
            field_name,
            f"{len(values)} values",
            f"one value per name ({len(names)}) or none (not reported)",
        )
    for index, value in enumerate(values):
        if type(value) is not cls:
            raise ValidationError(
                type_name,
                field_name,
                value,
                f"a {getattr(cls, 'TYPE_NAME', cls.__name__)}",
                joint=names[index],
                index=index,
            )
    return values


def _index(names: tuple[str, ...], name: str) -> int:
    try:
        return names.index(name)
    except ValueError:
        raise UnknownJointError(name, names) from None


@dataclass(frozen=True, slots=True)
class JointState(Message):
    """The state of single-DoF joints: position (rad or m), velocity (rad/s or m/s), effort
    (N·m or N), one entry per ``name``; an empty array means the field is not reported."""

    TYPE_NAME: ClassVar[str] = "sensor_msgs/msg/JointState"
    header: Header = field(default_factory=Header)
    name: StringSeq = ()
    position: Float64Seq = ()
    velocity: Float64Seq = ()
    effort: Float64Seq = ()

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        if type(self.header) is not Header:
            raise ValidationError(tn, "header", self.header, "a std_msgs Header")
        names = check_names(tn, "name", self.name)
        object.__setattr__(self, "name", names)
        object.__setattr__(self, "position", _float64_seq(tn, "position", self.position, names))
        object.__setattr__(self, "velocity", _float64_seq(tn, "velocity", self.velocity, names))
        object.__setattr__(self, "effort", _float64_seq(tn, "effort", self.effort, names))

    def index(self, name: str) -> int:
        """Position of joint ``name`` in the arrays (:class:`UnknownJointError` if absent)."""
        return _index(self.name, name)


@dataclass(frozen=True, slots=True)
class MultiDOFJointState(Message):
    """The state of multi-DoF joints (planar, floating): a transform, twist and wrench per joint;
    an empty array means the field is not reported."""

    TYPE_NAME: ClassVar[str] = "sensor_msgs/msg/MultiDOFJointState"
    header: Header = field(default_factory=Header)
    joint_names: StringSeq = ()
    transforms: tuple[Transform, ...] = ()
    twist: tuple[Twist, ...] = ()
    wrench: tuple[Wrench, ...] = ()

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        if type(self.header) is not Header:
            raise ValidationError(tn, "header", self.header, "a std_msgs Header")
        names = check_names(tn, "joint_names", self.joint_names)
        object.__setattr__(self, "joint_names", names)
        object.__setattr__(
            self, "transforms", _message_seq(tn, "transforms", self.transforms, names, Transform)
        )
        object.__setattr__(self, "twist", _message_seq(tn, "twist", self.twist, names, Twist))
        object.__setattr__(self, "wrench", _message_seq(tn, "wrench", self.wrench, names, Wrench))

    def index(self, name: str) -> int:
        """Position of joint ``name`` in the arrays (:class:`UnknownJointError` if absent)."""
        return _index(self.joint_names, name)


__all__ = ["JointState", "MultiDOFJointState", "check_names"]
