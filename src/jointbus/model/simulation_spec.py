"""Simulator-only figures of a robot that belong to no single joint or link.

Where it sits: :mod:`jointbus.model` (the ``simulation:`` section of a robot file), read by the
simulated actuator array in :mod:`jointbus.drivers`. Per-joint drive dynamics (armature, damping,
friction) live on each :class:`~jointbus.model.joint.Joint`; what is here is robot-wide: the
measurement noise a real robot's sensors add (1σ; rad, rad/s, N·m or m, m/s, N) and the physics
time step (s), so a controller tested in simulation sees realistic, not perfect, feedback.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from jointbus.model.errors import DefinitionError


@dataclass(frozen=True, slots=True)
class SimulationSpec:
    """Sensor noise (1σ) on position, velocity and effort, and the physics ``timestep`` (s)."""

    position_noise: float = 0.0
    velocity_noise: float = 0.0
    effort_noise: float = 0.0
    timestep: float = 0.002

    def __post_init__(self) -> None:
        for name in ("position_noise", "velocity_noise", "effort_noise"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise DefinitionError("simulation", name, value, "a finite standard deviation ≥ 0")
        if not (math.isfinite(self.timestep) and self.timestep > 0.0):
            raise DefinitionError("simulation", "timestep", self.timestep, "a finite time > 0 s")
