"""Where a sensor (an IMU, a camera) is fixed on the robot.

Where it sits: :mod:`jointbus.model`, held by :class:`~jointbus.model.robot.RobotModel` (the
``sensors:`` section of the robot file). A state estimator needs the IMU's pose in the base frame
to move its measured accelerations to the base; keeping it in the robot file keeps that number out
of code. Translation in m.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jointbus.math import Transform
from jointbus.model.errors import DefinitionError


@dataclass(frozen=True, slots=True)
class SensorMount:
    """Sensor ``name`` of ``kind`` (e.g. ``"imu"``) at ``origin`` in the frame of ``link``."""

    name: str
    kind: str
    link: str
    origin: Transform = field(default_factory=Transform.identity)

    def __post_init__(self) -> None:
        for name in ("name", "kind", "link"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise DefinitionError("sensor", name, getattr(self, name), "a non-empty string")
