"""One rigid link of a robot: mass, inertia, centre of mass and collision shapes.

Where it sits: :mod:`jointbus.model`, held by :class:`~jointbus.model.robot.RobotModel`; a
simulator builds its bodies from it and :mod:`~jointbus.model.urdf_writer` exports it. Units: mass
in kg, inertia in kg·m² about the centre of mass in the ``com`` frame, lengths in m.

Shapes follow URDF where URDF has them: a box's ``size`` is its full edge lengths (not MuJoCo's
half-extents), a cylinder's axis is its local z with ``length`` the full height. URDF has no
capsule; a :class:`Capsule` (axis z, ``length`` between the two hemisphere centres) is exported as
the cylinder that encloses it, which is why the loaders never produce one from URDF.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from jointbus.math import Transform, Vec3
from jointbus.model.errors import DefinitionError


def _positive(owner: str, name: str, value: float) -> None:
    if not (math.isfinite(value) and value > 0.0):
        raise DefinitionError(owner, name, value, "a finite length > 0 m")


@dataclass(frozen=True, slots=True)
class Inertia:
    """Rotational inertia (kg·m²) about the centre of mass, upper triangle of the symmetric tensor.

    Diagonal entries must be ≥ 0 and satisfy the triangle inequality (``ixx + iyy ≥ izz`` …) of a
    physical body, because a simulator fed anything else either rejects the model or explodes.
    """

    ixx: float = 0.0
    iyy: float = 0.0
    izz: float = 0.0
    ixy: float = 0.0
    ixz: float = 0.0
    iyz: float = 0.0

    def __post_init__(self) -> None:
        for name in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz"):
            if not math.isfinite(getattr(self, name)):
                raise DefinitionError("inertia", name, getattr(self, name), "a finite number")
        for name in ("ixx", "iyy", "izz"):
            if getattr(self, name) < 0.0:
                raise DefinitionError("inertia", name, getattr(self, name), "≥ 0 kg·m²")
        a, b, c = self.ixx, self.iyy, self.izz
        tol = 1e-12 + 1e-9 * (a + b + c)
        if a + b < c - tol or a + c < b - tol or b + c < a - tol:
            raise DefinitionError(
                "inertia",
                "ixx, iyy, izz",
                (a, b, c),
                "principal moments satisfying the triangle inequality (a physical body)",
            )


@dataclass(frozen=True, slots=True)
class Box:
    """A box centred on its frame; ``size`` = full edge lengths (x, y, z) in m."""

    size: Vec3

    def __post_init__(self) -> None:
        for axis, value in zip("xyz", self.size, strict=True):
            _positive("box", f"size.{axis}", value)


@dataclass(frozen=True, slots=True)
class Sphere:
    """A sphere centred on its frame; ``radius`` in m."""

    radius: float

    def __post_init__(self) -> None:
        _positive("sphere", "radius", self.radius)


@dataclass(frozen=True, slots=True)
class Cylinder:
    """A cylinder along its frame's z axis, centred; ``radius`` and full ``length`` in m."""

    radius: float
    length: float

    def __post_init__(self) -> None:
        _positive("cylinder", "radius", self.radius)
        _positive("cylinder", "length", self.length)


@dataclass(frozen=True, slots=True)
class Capsule:
    """A capsule along z, centred; ``length`` (m) between the hemisphere centres, ``radius`` m."""

    radius: float
    length: float

    def __post_init__(self) -> None:
        _positive("capsule", "radius", self.radius)
        _positive("capsule", "length", self.length)


Shape = Box | Sphere | Cylinder | Capsule
"""Every collision shape a link can have."""


@dataclass(frozen=True, slots=True)
class Collision:
    """One collision shape placed at ``origin`` in the link frame."""

    shape: Shape
    origin: Transform = field(default_factory=Transform.identity)


@dataclass(frozen=True, slots=True)
class Link:
    """An immutable link: ``mass`` (kg), ``inertia`` about the centre of mass at ``com``.

    A massless link (mass 0, zero inertia) is allowed: frames such as a foot centre or a tool
    point are links without bodies.
    """

    name: str
    mass: float = 0.0
    inertia: Inertia = field(default_factory=Inertia)
    com: Transform = field(default_factory=Transform.identity)
    collisions: tuple[Collision, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise DefinitionError("link", "name", self.name, "a non-empty string")
        if not (math.isfinite(self.mass) and self.mass >= 0.0):
            raise DefinitionError(f"link {self.name!r}", "mass", self.mass, "a finite mass ≥ 0 kg")
