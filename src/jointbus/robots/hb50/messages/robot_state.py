"""``hb50_commons/msg/RobotState`` and its per-leg ``LegState``: the estimated state of the robot.

Where it sits: :mod:`jointbus.robots.hb50.messages`. The control node publishes it at 500 Hz on
``/hb50/robot_state`` (and a reliable 10 Hz mirror) for the state machine, planners and UIs.
Field names, order and wire types are exactly Honey Badger 5.0's (seed 001).

Units: positions m, velocities m/s and rad/s, forces N. ``pose`` is the body in the world frame,
``body_vel`` the body twist in the body frame, ``world_vel`` the same twist in the world frame.
The geometry fields are ``geometry_msgs`` wire records (an estimator that has no estimate yet may
send NaN); leg names are non-empty and unique, so a consumer can look a leg up by name.

The three ``byte`` fields carry enums. The seed points to ``hb50_control.hpp`` for their values,
which is not public, so jointbus defines them here (:class:`MotionMode`, :class:`MotionType`,
:class:`MotionGait`) and every jointbus node uses these definitions; a value outside them is
rejected (it means a peer with a different enum table, whose states we must not misread).
Values are never renumbered; new states get new numbers.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import ClassVar, TypeVar

from jointbus.codec.wire import Bool, Byte, String
from jointbus.messages.base import Message
from jointbus.messages.errors import LimitError, UnknownJointError, ValidationError
from jointbus.messages.geometry_msgs import Pose, Twist, Vector3
from jointbus.messages.std_msgs import Header

_E = TypeVar("_E", bound=enum.IntEnum)


class MotionMode(enum.IntEnum):
    """What the control node's state machine is doing (``motion_mode``).

    IDLE 0: drives passive, robot lying down; STAND_UP 1: rising to standing height;
    STAND 2: standing, holding posture; SIT_DOWN 3: lowering the body to the ground;
    LOCOMOTION 4: walking under velocity commands; DAMPING 5: safe mode (zero stiffness, damping
    only) after a fault, watchdog timeout or a stop request; FALLEN 6: the body is tipped over
    (tilt beyond the fall limit, :mod:`jointbus.robots.hb50.control.fall_detector`), damping only,
    no posture commands until it is upright again. FALLEN was added after the first five: a peer
    with the older table rejects it (as any unknown value) rather than misread it.
    """

    IDLE = 0
    STAND_UP = 1
    STAND = 2
    SIT_DOWN = 3
    LOCOMOTION = 4
    DAMPING = 5
    FALLEN = 6


class MotionType(enum.IntEnum):
    """Who or what produces the motion (``motion_type``).

    NONE 0: no motion is commanded; POSTURE 1: a scripted posture change or static stance (stand
    up, sit down, stand); GAIT 2: the gait controller under velocity commands; EXTERNAL 3: a user
    node commands the joints directly and the bridge gives it priority over the control node.
    """

    NONE = 0
    POSTURE = 1
    GAIT = 2
    EXTERNAL = 3


class MotionGait(enum.IntEnum):
    """The current gait (``motion_gait``): IDLE 0, STAND 1, WALK 2 (static), TROT 3, RUN 4."""

    IDLE = 0
    STAND = 1
    WALK = 2
    TROT = 3
    RUN = 4


@dataclass(frozen=True, slots=True)
class LegState(Message):
    """One leg's estimate: foot contact, foot position (m, body frame), foot velocity (m/s) and
    estimated ground reaction force (N)."""

    TYPE_NAME: ClassVar[str] = "hb50_commons/msg/LegState"
    leg_name: String = ""  # e.g. "fr"
    contact: Bool = False
    foot_pos_body: Vector3 = field(default_factory=Vector3)  # m, body frame
    foot_vel: Vector3 = field(default_factory=Vector3)  # m/s
    foot_force_est: Vector3 = field(default_factory=Vector3)  # N

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        if type(self.leg_name) is not str or not self.leg_name:
            raise ValidationError(tn, "leg_name", self.leg_name, "a non-empty str")
        if type(self.contact) is not bool:
            raise ValidationError(tn, "contact", self.contact, "a bool", joint=self.leg_name)
        for name in ("foot_pos_body", "foot_vel", "foot_force_est"):
            value = getattr(self, name)
            if type(value) is not Vector3:
                raise ValidationError(
                    tn, name, value, "a geometry_msgs Vector3", joint=self.leg_name
                )


def _enum_value(type_name: str, name: str, value: object, cls: type[_E]) -> _E:
    if type(value) is cls:
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(type_name, name, value, f"a {cls.__name__} (byte)")
    try:
        return cls(value)
    except ValueError:
        members = ", ".join(f"{m.name}={m.value}" for m in cls)
        raise LimitError(type_name, name, value, f"one of {cls.__name__}: {members}") from None


@dataclass(frozen=True, slots=True)
class RobotState(Message):
    """Estimated body pose and velocities, per-leg state and the controller's mode and gait."""

    TYPE_NAME: ClassVar[str] = "hb50_commons/msg/RobotState"
    header: Header = field(default_factory=Header)
    leg: tuple[LegState, ...] = ()
    pose: Pose = field(default_factory=Pose)  # body in world: m, orientation
    body_vel: Twist = field(default_factory=Twist)  # body frame: m/s, rad/s
    world_vel: Twist = field(default_factory=Twist)  # world frame: m/s, rad/s
    motion_mode: Byte = MotionMode.IDLE
    motion_type: Byte = MotionType.NONE
    motion_gait: Byte = MotionGait.IDLE

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        setattr_ = object.__setattr__
        if type(self.header) is not Header:
            raise ValidationError(tn, "header", self.header, "a std_msgs Header")
        legs = self.leg
        if type(legs) is not tuple:
            if not isinstance(legs, Iterable):
                raise ValidationError(tn, "leg", legs, "a sequence of LegState")
            legs = tuple(legs)
            setattr_(self, "leg", legs)
        seen: dict[str, int] = {}
        for index, item in enumerate(legs):
            if type(item) is not LegState:
                raise ValidationError(tn, "leg", item, "a LegState", index=index)
            if item.leg_name in seen:
                raise ValidationError(
                    tn,
                    "leg",
                    item.leg_name,
                    f"a unique leg_name (also at index {seen[item.leg_name]})",
                    joint=item.leg_name,
                    index=index,
                )
            seen[item.leg_name] = index
        if type(self.pose) is not Pose:
            raise ValidationError(tn, "pose", self.pose, "a geometry_msgs Pose")
        if type(self.body_vel) is not Twist:
            raise ValidationError(tn, "body_vel", self.body_vel, "a geometry_msgs Twist")
        if type(self.world_vel) is not Twist:
            raise ValidationError(tn, "world_vel", self.world_vel, "a geometry_msgs Twist")
        setattr_(self, "motion_mode", _enum_value(tn, "motion_mode", self.motion_mode, MotionMode))
        setattr_(self, "motion_type", _enum_value(tn, "motion_type", self.motion_type, MotionType))
        setattr_(self, "motion_gait", _enum_value(tn, "motion_gait", self.motion_gait, MotionGait))

    def leg_by_name(self, name: str) -> LegState:
        """The state of leg ``name`` (:class:`UnknownJointError`, a ``LookupError``, if absent)."""
        for item in self.leg:
            if item.leg_name == name:
                return item
        raise UnknownJointError(name, tuple(item.leg_name for item in self.leg))


__all__ = ["LegState", "MotionGait", "MotionMode", "MotionType", "RobotState"]
