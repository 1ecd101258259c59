"""Interpretation of the normalised ``/hb50/velocity_command`` (``geometry_msgs/Twist``) in SI.

Where it sits: :mod:`jointbus.robots.hb50.messages`, above ``geometry_msgs``. A joystick, a teleop
UI or a
planner publishes a *normalised* Twist; the control node turns it into physical set-points with the
robot's configured scale (``cmd_vel_lin``, ``cmd_vel_ang``). Keeping that rule here, next to the
message, means every consumer reads the same numbers the same way.

The seed (Honey Badger 5.0) defines the components as:

===============  ==============================  ==========================================
component        meaning                         physical value
===============  ==============================  ==========================================
``linear.x``     forward velocity, [-1, 1]       ``vx = x · cmd_vel_lin`` (m/s)
``linear.y``     lateral velocity, [-1, 1]       ``vy = y · cmd_vel_lin`` (m/s)
``linear.z``     walking height, (0, 1]          ``height_fraction = z`` (1 = reference height;
                                                 0: not commanded, ``None``)
``angular.x``    roll command, [-1, 1]           ``roll_rate = x · cmd_vel_ang`` (rad/s)
``angular.y``    pitch command, [-1, 1]          ``pitch_rate = y · cmd_vel_ang`` (rad/s)
``angular.z``    yaw rate, [-1, 1]               ``yaw_rate = z · cmd_vel_ang`` (rad/s)
===============  ==============================  ==========================================

Why roll and pitch become *rates*: the seed says every normalised command is scaled by
``cmd_vel_lin`` / ``cmd_vel_ang`` "to produce physical values in SI units (m/s, rad/s)", so the
angular components share one unit, rad/s. Why the height is not scaled: the seed normalises it "to
1", the configured reference walking height, which only the robot model knows in metres; a height
outside [0, 1] (above the reference, or below the ground) is clamped like every other component.

Why ``linear.z == 0`` means "height not commanded" (``height_fraction is None``, the robot keeps
its current height set-point): every plain ROS Twist — ``'{}'``, ``'{linear: {x: 0.5}}'``,
``teleop_twist_keyboard`` — leaves ``z`` at 0, and reading that as "lowest height" made a
velocity command crouch a standing robot by 13 cm without the user asking for any height. A
height must be asked for with ``z > 0``; the lowest standing height is reached with a small ``z``
(the control node clamps it into its safe range). A negative ``z`` is clamped to 0 (reported) and
so does not command a height either.

Out-of-range values are clamped, not rejected — a joystick slightly past full scale is normal — but
never silently: the :class:`ClampReport` lists each clamped component and its original value so
the node can report it on the status topic. NaN or infinite components are rejected with
:class:`~jointbus.messages.errors.NonFiniteError`: there is no safe guess for them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final, NamedTuple

from jointbus import math as jm
from jointbus.messages.errors import LimitError, NonFiniteError, ValidationError
from jointbus.messages.geometry_msgs import Twist, Vector3

_TWIST: Final = Twist.TYPE_NAME

#: (component path, lower bound, upper bound) of each normalised Twist component, in field order.
NORMALISED_RANGES: Final = (
    ("linear.x", -1.0, 1.0),
    ("linear.y", -1.0, 1.0),
    ("linear.z", 0.0, 1.0),
    ("angular.x", -1.0, 1.0),
    ("angular.y", -1.0, 1.0),
    ("angular.z", -1.0, 1.0),
)


class ClampedComponent(NamedTuple):
    """One normalised component that was outside its range: its path, original and used value."""

    component: str  # e.g. "linear.x"
    value: float  # as received
    clamped_to: float  # the bound that was used instead


@dataclass(frozen=True, slots=True)
class ClampReport:
    """Which components of a velocity command were clamped, and from what (empty: none)."""

    clamped: tuple[ClampedComponent, ...] = ()

    def __bool__(self) -> bool:
        """True when anything was clamped."""
        return bool(self.clamped)

    def components(self) -> tuple[str, ...]:
        """The clamped component paths, in field order."""
        return tuple(c.component for c in self.clamped)

    def describe(self) -> str:
        """One line for a status report, e.g. ``linear.x 1.5 → 1.0; angular.z -2.0 → -1.0``."""
        return "; ".join(f"{c.component} {c.value!r} → {c.clamped_to!r}" for c in self.clamped)


@dataclass(frozen=True, slots=True)
class BodyVelocityCommand:
    """A body velocity set-point in SI: vx, vy (m/s), roll, pitch and yaw rates (rad/s), and the
    walking height as a fraction of the reference height (1.0 = reference; ``None``: not
    commanded, keep the current height — a Twist with ``linear.z == 0``)."""

    vx: float  # m/s, forward
    vy: float  # m/s, left
    yaw_rate: float  # rad/s
    roll_rate: float  # rad/s
    pitch_rate: float  # rad/s
    height_fraction: float | None  # of the reference walking height, (0, 1]; None: keep

    def to_twist(self) -> jm.Twist:
        """The body twist (linear m/s, angular rad/s); the height is not a velocity."""
        return jm.Twist(
            jm.Vec3(self.vx, self.vy, 0.0),
            jm.Vec3(self.roll_rate, self.pitch_rate, self.yaw_rate),
        )


@dataclass(frozen=True, slots=True)
class VelocityScale:
    """The robot's scale of normalised commands: ``cmd_vel_lin`` (m/s) and ``cmd_vel_ang`` (rad/s)
    are the physical values of a full-scale (±1) command. Both must be finite and positive."""

    cmd_vel_lin: float  # m/s at |command| = 1
    cmd_vel_ang: float  # rad/s at |command| = 1

    def __post_init__(self) -> None:
        for name, unit in (("cmd_vel_lin", "m/s"), ("cmd_vel_ang", "rad/s")):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValidationError("VelocityScale", name, value, f"a real number ({unit})")
            value = float(value)
            if not math.isfinite(value) or value <= 0.0:
                raise LimitError("VelocityScale", name, value, f"a finite value > 0 {unit}")
            object.__setattr__(self, name, value)

    def to_si(self, twist: Twist) -> tuple[BodyVelocityCommand, ClampReport]:
        """The SI command for a normalised ``twist`` and the report of what was clamped.

        Raises :class:`NonFiniteError` (naming the component) for NaN or infinite input and
        :class:`ValidationError` if ``twist`` is not a ``geometry_msgs`` Twist.
        """
        if type(twist) is not Twist:
            raise ValidationError(_TWIST, "twist", twist, "a geometry_msgs Twist (normalised)")
        lin, ang = twist.linear, twist.angular
        raw = (lin.x, lin.y, lin.z, ang.x, ang.y, ang.z)
        used: list[float] = []
        clamped: list[ClampedComponent] = []
        for value, (path, lo, hi) in zip(raw, NORMALISED_RANGES, strict=True):
            if not math.isfinite(value):
                expected = f"a finite normalised value in [{lo}, {hi}]"
                raise NonFiniteError(_TWIST, path, value, expected)
            if lo <= value <= hi:
                used.append(value)
                continue
            bound = lo if value < lo else hi
            clamped.append(ClampedComponent(path, value, bound))
            used.append(bound)
        x, y, z, roll, pitch, yaw = used
        command = BodyVelocityCommand(
            vx=x * self.cmd_vel_lin,
            vy=y * self.cmd_vel_lin,
            yaw_rate=yaw * self.cmd_vel_ang,
            roll_rate=roll * self.cmd_vel_ang,
            pitch_rate=pitch * self.cmd_vel_ang,
            height_fraction=z if z > 0.0 else None,
        )
        return command, ClampReport(tuple(clamped))

    def to_normalised(self, command: BodyVelocityCommand) -> Twist:
        """The normalised Twist a publisher sends for ``command`` (inverse of :meth:`to_si`)."""
        return Twist(
            Vector3(
                command.vx / self.cmd_vel_lin,
                command.vy / self.cmd_vel_lin,
                0.0 if command.height_fraction is None else command.height_fraction,
            ),
            Vector3(
                command.roll_rate / self.cmd_vel_ang,
                command.pitch_rate / self.cmd_vel_ang,
                command.yaw_rate / self.cmd_vel_ang,
            ),
        )


__all__ = [
    "NORMALISED_RANGES",
    "BodyVelocityCommand",
    "ClampReport",
    "ClampedComponent",
    "VelocityScale",
]
