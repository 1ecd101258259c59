"""One joint of a robot: type, frames, axis, limits, calibration, drive dynamics.

Where it sits: :mod:`jointbus.model`, built by the YAML and URDF loaders and held by
:class:`~jointbus.model.robot.RobotModel`; uses :mod:`jointbus.math` for frames and
:class:`~jointbus.messages.joint_kind.JointKind` to say what shape the joint's state values have.

Conventions (those of URDF, so a model converts both ways without loss):

- ``origin`` is the pose of the joint frame in the parent link's frame (translation in m); the
  child link's frame coincides with the joint frame at zero configuration.
- ``axis`` is expressed in the joint frame. Revolute/continuous joints rotate about it, prismatic
  joints slide along it, and for a planar joint it is the *normal* of the plane of motion. It is
  stored normalised; a zero axis on a moving joint is rejected because it would make the joint
  silently immobile.
- Revolute and prismatic joints need finite position limits (URDF requires them); a continuous
  joint is a revolute joint without them.
- ``calibration`` (direction, offset) maps joint positions to actuator positions; it does not
  change the kinematics, which always works in joint coordinates.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field

from jointbus.math import Transform, Vec3
from jointbus.messages.joint_kind import JointKind
from jointbus.model.actuator_geometry import ActuatorGeometry
from jointbus.model.calibration import JointCalibration
from jointbus.model.errors import DefinitionError
from jointbus.model.limits import JointLimitSpec


class JointType(enum.Enum):
    """The URDF joint types; the value is the URDF spelling."""

    REVOLUTE = "revolute"
    CONTINUOUS = "continuous"
    PRISMATIC = "prismatic"
    FIXED = "fixed"
    PLANAR = "planar"
    FLOATING = "floating"

    @property
    def dof(self) -> int:
        """Degrees of freedom of a joint of this type (0, 1, 3 or 6)."""
        return _DOF[self]

    @property
    def kind(self) -> JointKind:
        """The shape of state values of a joint of this type; a fixed joint has none."""
        if self is JointType.FIXED:
            raise DefinitionError(
                "joint type 'fixed'", "kind", "fixed", "a moving joint (a fixed joint has no state)"
            )
        return _KIND[self]


_DOF = {
    JointType.REVOLUTE: 1,
    JointType.CONTINUOUS: 1,
    JointType.PRISMATIC: 1,
    JointType.FIXED: 0,
    JointType.PLANAR: 3,
    JointType.FLOATING: 6,
}
_KIND = {
    JointType.REVOLUTE: JointKind.SINGLE_DOF,
    JointType.CONTINUOUS: JointKind.SINGLE_DOF,
    JointType.PRISMATIC: JointKind.SINGLE_DOF,
    JointType.PLANAR: JointKind.PLANAR,
    JointType.FLOATING: JointKind.FLOATING,
}
_AXIS_TYPES = frozenset(
    {JointType.REVOLUTE, JointType.CONTINUOUS, JointType.PRISMATIC, JointType.PLANAR}
)
_AXIS_MIN_NORM = 1e-9


@dataclass(frozen=True, slots=True)
class JointDynamics:
    """Drive-train figures a simulator needs: ``armature`` (reflected rotor inertia, kg·m² or kg),
    ``damping`` (viscous, N·m·s/rad or N·s/m) and ``friction`` (Coulomb, N·m or N). All ≥ 0."""

    armature: float = 0.0
    damping: float = 0.0
    friction: float = 0.0

    def __post_init__(self) -> None:
        for name in ("armature", "damping", "friction"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise DefinitionError("joint dynamics", name, value, "a finite number ≥ 0")


@dataclass(frozen=True, slots=True)
class Joint:
    """An immutable joint description (see the module docstring for the frame conventions)."""

    name: str
    type: JointType
    parent: str
    child: str
    origin: Transform = field(default_factory=Transform.identity)
    axis: Vec3 = field(default_factory=lambda: Vec3(1.0, 0.0, 0.0))
    limits: JointLimitSpec = field(default_factory=JointLimitSpec)
    calibration: JointCalibration = field(default_factory=JointCalibration)
    actuated: bool = True
    dynamics: JointDynamics = field(default_factory=JointDynamics)
    actuator: ActuatorGeometry | None = None
    #: What the joint is on the robot when its name does not say it (``knee`` for ``fr_j2``);
    #: ``""`` when the name is enough. Tools show it beside the name and select joints by it.
    role: str = ""

    def __post_init__(self) -> None:
        owner = f"joint {self.name!r}"
        if not isinstance(self.name, str) or not self.name:
            raise DefinitionError("joint", "name", self.name, "a non-empty string")
        if not isinstance(self.role, str) or self.role != self.role.strip():
            raise DefinitionError(owner, "role", self.role, "a string without outer spaces")
        if not isinstance(self.type, JointType):
            raise DefinitionError(owner, "type", self.type, "a JointType")
        for name in ("parent", "child"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise DefinitionError(owner, name, getattr(self, name), "a non-empty link name")
        if self.parent == self.child:
            raise DefinitionError(owner, "child", self.child, "a link other than the parent")
        if self.type in _AXIS_TYPES:
            norm = self.axis.norm()
            if norm < _AXIS_MIN_NORM:
                raise DefinitionError(owner, "axis", tuple(self.axis), "a non-zero vector")
            if norm != 1.0:
                object.__setattr__(self, "axis", self.axis * (1.0 / norm))
        if self.type in (JointType.REVOLUTE, JointType.PRISMATIC):
            lo, hi = self.limits.position_min, self.limits.position_max
            if not (math.isfinite(lo) and math.isfinite(hi)):
                raise DefinitionError(
                    owner,
                    "limits.position",
                    (lo, hi),
                    f"finite [min, max] for a {self.type.value} joint "
                    "(use type 'continuous' for an unbounded revolute joint)",
                )
        if self.type is JointType.FIXED and self.actuated:
            raise DefinitionError(owner, "actuated", True, "false for a fixed joint")

    @property
    def dof(self) -> int:
        """Degrees of freedom: 0 (fixed), 1 (revolute, continuous, prismatic), 3, 6."""
        return self.type.dof

    @property
    def kind(self) -> JointKind:
        """Shape of this joint's state values (raises :class:`DefinitionError` if fixed)."""
        if self.type is JointType.FIXED:
            raise DefinitionError(
                f"joint {self.name!r}",
                "kind",
                "fixed",
                "a moving joint (a fixed joint has no state)",
            )
        return _KIND[self.type]

    @property
    def is_moving(self) -> bool:
        """True for every type but fixed."""
        return self.type is not JointType.FIXED
