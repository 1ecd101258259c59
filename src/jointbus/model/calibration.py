"""Per-joint calibration as a robot description states it: mounting direction and zero offset.

Where it sits: :mod:`jointbus.model`. The relation for each joint is
``actuator = direction · joint + offset`` for positions (rad or m) and
``actuator = direction · joint`` for velocities, efforts and currents. It is data, kept in the robot
file apart from code (LeRobot's lesson: calibration as data); :mod:`jointbus.drivers.calibration`
applies it, vectorised, above every driver.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class JointCalibration:
    """One joint: ``direction`` is +1 or −1 (mounting sense), ``offset`` in rad or m."""

    direction: int = 1
    offset: float = 0.0

    def __post_init__(self) -> None:
        if self.direction not in (1, -1):
            raise ValueError(f"calibration direction = {self.direction!r}; expected +1 or -1")
        if not math.isfinite(self.offset):
            raise ValueError(f"calibration offset = {self.offset!r}; expected a finite number")
