"""Joint limits as a robot description states them (position range, velocity, effort, current).

Where it sits: :mod:`jointbus.model`, the robot description. The numbers are data, loaded from the
robot file or URDF; :mod:`jointbus.drivers.limits` enforces them on commands and the bridge checks
commands against them. Units: position in rad (revolute) or m (prismatic), velocity in rad/s (m/s),
effort in N·m (N), current in A. ``inf`` means unbounded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from jointbus.model.errors import DefinitionError

_INF = math.inf


@dataclass(frozen=True, slots=True)
class SoftLimits:
    """ros2_control soft limits: bounds inside the hard ones, and the two gains of the law."""

    lower: float
    upper: float
    k_position: float
    k_velocity: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.lower) and math.isfinite(self.upper)) or self.lower > self.upper:
            raise DefinitionError(
                "soft limits", "lower", (self.lower, self.upper), "finite lower ≤ upper"
            )
        for name in ("k_position", "k_velocity"):
            if getattr(self, name) < 0:
                raise DefinitionError("soft limits", name, getattr(self, name), "a gain ≥ 0")


@dataclass(frozen=True, slots=True)
class JointLimitSpec:
    """Limits of one joint in joint space. ``inf`` (or NaN in input files) means unbounded.

    position in rad (or m), velocity in rad/s (m/s), effort in N·m (N), current in A. Velocity,
    effort and current limits are symmetric magnitudes, as actuator data sheets give them.
    """

    position_min: float = -_INF
    position_max: float = _INF
    velocity_max: float = _INF
    effort_max: float = _INF
    current_max: float = _INF
    soft: SoftLimits | None = None

    def __post_init__(self) -> None:
        if self.position_min > self.position_max:
            raise DefinitionError(
                "joint limits", "position", (self.position_min, self.position_max), "min ≤ max"
            )
        for name in ("velocity_max", "effort_max", "current_max"):
            if getattr(self, name) < 0:
                raise DefinitionError("joint limits", name, getattr(self, name), "a magnitude ≥ 0")
