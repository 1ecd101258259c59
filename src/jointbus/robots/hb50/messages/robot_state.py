"""``hb50_commons/msg/RobotState`` and its per-leg ``LegState``: the estimated state of the robot.

Where it sits: :mod:`jointbus.robots.hb50.messages`. The control node publishes it at 500 Hz on
``/hb50/robot_state`` (and a reliable 10 Hz mirror) for the state machine, planners and UIs.
Field names, order and wire types are exactly Honey Badger 5.0's (seed 001).

Units: positions m, velocities m/s and rad/s, forces N. ``pose`` is the body in the world frame,
``body_vel`` the body twist in the body frame, ``world_vel`` the same twist in the world frame.
The geometry fields are ``geometry_msgs`` wire records (an estimator that has no estimate yet may
send NaN); leg names are non-empty and unique, so a consumer can look a leg up by name.

The control node builds one every frame with :meth:`RobotState.from_estimate_arrays`: the same
message as the constructors build, in one pass, for arrays whose types already guarantee what the
checks check; anything else goes through the constructors and their errors. It is 25 nested
records (≈ 70 fields, 51 floats): through the constructors ≈ 17 µs warm, in one pass in Python
(:meth:`RobotState.from_estimate_arrays_python`, the reference) ≈ 12 µs warm but 30–40 µs inside
the running stack, where the caches are cold between frames; the optional compiled core
``_robot_state_accel`` (``_robot_state_accel.c``, built by ``setup.py`` when a C compiler is
present; ``JOINTBUS_NO_ACCEL=1`` turns it off) sets the same slots in one call.

The three ``byte`` fields carry enums. The seed points to ``hb50_control.hpp`` for their values,
which is not public, so jointbus defines them here (:class:`MotionMode`, :class:`MotionType`,
:class:`MotionGait`) and every jointbus node uses these definitions; a value outside them is
rejected (it means a peer with a different enum table, whose states we must not misread).
Values are never renumbered; new states get new numbers.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, ClassVar, Final, TypeVar

import numpy as np
import numpy.typing as npt

from jointbus import compiled_core
from jointbus.codec.wire import Bool, Byte, String
from jointbus.messages.base import Message
from jointbus.messages.errors import (
    LengthMismatchError,
    LimitError,
    ShapeMismatchError,
    UnknownJointError,
    ValidationError,
)
from jointbus.messages.geometry_msgs import Point, Pose, Quaternion, Twist, Vector3
from jointbus.messages.std_msgs import Header

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

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

    @classmethod
    def from_estimate_arrays(
        cls,
        header: Header,
        leg_names: tuple[str, ...],
        *,
        contact: BoolArray,
        foot_position: FloatArray,
        foot_velocity: FloatArray,
        foot_force: FloatArray,
        position: FloatArray,
        orientation: Quaternion,
        body_linear_velocity: FloatArray,
        body_angular_velocity: FloatArray,
        world_linear_velocity: FloatArray,
        world_angular_velocity: FloatArray,
        motion_mode: MotionMode,
        motion_type: MotionType,
        motion_gait: MotionGait,
    ) -> RobotState:
        """The message of one estimate: leg ``i`` is ``leg_names[i]`` with ``contact[i]`` and row
        ``i`` of the (legs, 3) ``foot_*`` arrays (m, m/s, N; body frame); ``position`` (3,) m
        and ``orientation`` make the pose; the four (3,) velocity arrays the two twists (m/s,
        rad/s).

        Built in one pass when the inputs are what an estimator produces — float64 arrays of
        those shapes, a bool ``contact``, a ``Header``, a wire ``Quaternion``, enum members and
        leg names already found valid once: a float64 array holds only floats, which is all the
        geometry records check. Anything else is built by the constructors, which raise their
        errors (naming the leg, field and value). The one pass is compiled when
        :data:`ACCELERATED` (the module docstring); :meth:`from_estimate_arrays_python` is its
        reference.
        """
        if (
            _CORE is not None
            and type(header) is Header
            and type(orientation) is Quaternion
            and type(motion_mode) is MotionMode
            and type(motion_type) is MotionType
            and type(motion_gait) is MotionGait
            and (leg_names is _checked_legs[0] or _legs_ok(leg_names))
        ):
            try:  # the core checks the arrays' types, shapes and layout itself
                state: RobotState = _CORE.build(
                    header,
                    leg_names,
                    contact,
                    foot_position,
                    foot_velocity,
                    foot_force,
                    position,
                    orientation,
                    body_linear_velocity,
                    body_angular_velocity,
                    world_linear_velocity,
                    world_angular_velocity,
                    motion_mode,
                    motion_type,
                    motion_gait,
                )
                return state
            except (TypeError, ValueError):
                pass  # not what the one pass takes: the reference sorts it out
        return cls.from_estimate_arrays_python(
            header,
            leg_names,
            contact=contact,
            foot_position=foot_position,
            foot_velocity=foot_velocity,
            foot_force=foot_force,
            position=position,
            orientation=orientation,
            body_linear_velocity=body_linear_velocity,
            body_angular_velocity=body_angular_velocity,
            world_linear_velocity=world_linear_velocity,
            world_angular_velocity=world_angular_velocity,
            motion_mode=motion_mode,
            motion_type=motion_type,
            motion_gait=motion_gait,
        )

    @classmethod
    def from_estimate_arrays_python(
        cls,
        header: Header,
        leg_names: tuple[str, ...],
        *,
        contact: BoolArray,
        foot_position: FloatArray,
        foot_velocity: FloatArray,
        foot_force: FloatArray,
        position: FloatArray,
        orientation: Quaternion,
        body_linear_velocity: FloatArray,
        body_angular_velocity: FloatArray,
        world_linear_velocity: FloatArray,
        world_angular_velocity: FloatArray,
        motion_mode: MotionMode,
        motion_type: MotionType,
        motion_gait: MotionGait,
    ) -> RobotState:
        """:meth:`from_estimate_arrays` in pure Python (the compiled core's reference)."""
        n = len(leg_names)
        if _one_pass(
            header,
            leg_names,
            contact=contact,
            per_leg=(foot_position, foot_velocity, foot_force),
            vectors=(
                position,
                body_linear_velocity,
                body_angular_velocity,
                world_linear_velocity,
                world_angular_velocity,
            ),
            orientation=orientation,
            enums=(motion_mode, motion_type, motion_gait),
        ):
            vec = _vector3
            legs = tuple(
                _leg_state(name, c, vec(*p), vec(*v), vec(*f))
                for name, c, p, v, f in zip(
                    leg_names,
                    contact.tolist(),
                    foot_position.tolist(),
                    foot_velocity.tolist(),
                    foot_force.tolist(),
                    strict=True,
                )
            )
            state: RobotState = _robot_state(
                header,
                legs,
                _pose(_point(*position.tolist()), orientation),
                _twist(vec(*body_linear_velocity.tolist()), vec(*body_angular_velocity.tolist())),
                _twist(
                    vec(*world_linear_velocity.tolist()), vec(*world_angular_velocity.tolist())
                ),
                motion_mode,
                motion_type,
                motion_gait,
            )
            return state
        tn = cls.TYPE_NAME
        per_leg = {
            "foot_pos_body": foot_position,
            "foot_vel": foot_velocity,
            "foot_force_est": foot_force,
        }
        rows = {name: np.asarray(values).tolist() for name, values in per_leg.items()}
        contacts = np.asarray(contact).tolist()
        for name, values in (("contact", contacts), *rows.items()):
            if len(values) != n:
                raise LengthMismatchError(
                    tn, f"leg.{name}", f"{len(values)} rows", f"one per leg ({n})"
                )
        legs = tuple(
            LegState(
                leg,
                contacts[i],
                *(_vector_of(tn, f"leg.{name}", rows[name][i], leg, i) for name in per_leg),
            )
            for i, leg in enumerate(leg_names)
        )
        return cls(
            header,
            legs,
            Pose(Point(*_xyz(tn, "pose.position", position)), orientation),
            Twist(
                Vector3(*_xyz(tn, "body_vel.linear", body_linear_velocity)),
                Vector3(*_xyz(tn, "body_vel.angular", body_angular_velocity)),
            ),
            Twist(
                Vector3(*_xyz(tn, "world_vel.linear", world_linear_velocity)),
                Vector3(*_xyz(tn, "world_vel.angular", world_angular_velocity)),
            ),
            motion_mode,
            motion_type,
            motion_gait,
        )

    def leg_by_name(self, name: str) -> LegState:
        """The state of leg ``name`` (:class:`UnknownJointError`, a ``LookupError``, if absent)."""
        for item in self.leg:
            if item.leg_name == name:
                return item
        raise UnknownJointError(name, tuple(item.leg_name for item in self.leg))


# ---- the one pass of RobotState.from_estimate_arrays ---------------------------------------
_new: Final = object.__new__


def _record(cls: type[Any], *names: str) -> Callable[..., Any]:
    """A builder of ``cls`` from its field values in ``names`` order, without the constructor:
    the slots are set directly (for values the constructor would accept as they are)."""
    setters = tuple(vars(cls)[name].__set__ for name in names)
    if len(setters) == 2:
        set_a, set_b = setters

        def make2(a: object, b: object) -> Any:
            obj = _new(cls)
            set_a(obj, a)
            set_b(obj, b)
            return obj

        return make2
    if len(setters) == 3:
        set_x, set_y, set_z = setters

        def make3(x: object, y: object, z: object) -> Any:
            obj = _new(cls)
            set_x(obj, x)
            set_y(obj, y)
            set_z(obj, z)
            return obj

        return make3

    def make(*values: object) -> Any:
        obj = _new(cls)
        for set_, value in zip(setters, values, strict=True):
            set_(obj, value)
        return obj

    return make


_vector3: Final = _record(Vector3, "x", "y", "z")
_point: Final = _record(Point, "x", "y", "z")
_pose: Final = _record(Pose, "position", "orientation")
_twist: Final = _record(Twist, "linear", "angular")
_leg_state: Final = _record(
    LegState, "leg_name", "contact", "foot_pos_body", "foot_vel", "foot_force_est"
)
_robot_state: Final = _record(
    RobotState,
    "header",
    "leg",
    "pose",
    "body_vel",
    "world_vel",
    "motion_mode",
    "motion_type",
    "motion_gait",
)
#: The last leg-name tuple found valid (non-empty, unique str names): checked once, not per frame.
_checked_legs: list[tuple[str, ...] | None] = [None]


def _legs_ok(names: object) -> bool:
    if (
        type(names) is not tuple
        or not all(type(name) is str and name for name in names)
        or len(set(names)) != len(names)
    ):
        return False
    _checked_legs[0] = names
    return True


def _xyz(type_name: str, field: str, values: object) -> list[Any]:
    """Three components of ``values`` (else a :class:`ShapeMismatchError` naming ``field``)."""
    items = np.asarray(values).tolist()
    if type(items) is not list or len(items) != 3:
        raise ShapeMismatchError(type_name, field, values, "3 components (x, y, z)")
    return items


def _vector_of(type_name: str, field: str, row: object, leg: str, index: int) -> Vector3:
    """One leg's 3-vector (a row of three components, else an error naming the leg)."""
    if type(row) is not list or len(row) != 3:
        raise ShapeMismatchError(
            type_name, field, row, "3 components (x, y, z)", joint=leg, index=index
        )
    return Vector3(*row)


def _floats_of_shape(values: object, shape: tuple[int, ...]) -> bool:
    return type(values) is np.ndarray and values.dtype is _F64 and values.shape == shape


def _one_pass(
    header: Header,
    leg_names: tuple[str, ...],
    *,
    contact: BoolArray,
    per_leg: tuple[FloatArray, ...],
    vectors: tuple[FloatArray, ...],
    orientation: Quaternion,
    enums: tuple[MotionMode, MotionType, MotionGait],
) -> bool:
    """Whether the inputs are what the one pass takes as they are (else: the constructors)."""
    if not (
        type(header) is Header
        and type(orientation) is Quaternion
        and type(enums[0]) is MotionMode
        and type(enums[1]) is MotionType
        and type(enums[2]) is MotionGait
        and (leg_names is _checked_legs[0] or _legs_ok(leg_names))
    ):
        return False
    n = len(leg_names)
    return (
        type(contact) is np.ndarray
        and contact.dtype is _BOOL
        and contact.shape == (n,)
        and contact.flags.c_contiguous
        and all(_floats_of_shape(a, (n, 3)) and a.flags.c_contiguous for a in per_leg)
        and all(_floats_of_shape(a, (3,)) and a.flags.c_contiguous for a in vectors)
    )


_F64: Final = np.dtype(np.float64)
_BOOL: Final = np.dtype(np.bool_)


def _load() -> ModuleType | None:
    core = compiled_core.load("jointbus.robots.hb50.messages._robot_state_accel")
    if core is not None:  # it builds these classes' objects directly
        core.bind(Vector3, Point, Pose, Twist, LegState, RobotState)
    return core


_CORE: Final = _load()
#: Whether the compiled core ``_robot_state_accel`` builds :meth:`RobotState.from_estimate_arrays`.
ACCELERATED: Final = _CORE is not None


__all__ = ["LegState", "MotionGait", "MotionMode", "MotionType", "RobotState"]
