"""Per-joint calibration between joint space (what users command) and actuator space (what a
driver's hardware speaks).

Where it sits: :mod:`jointbus.drivers`, applied by the :class:`ActuatorArray` base class *above*
every driver, never inside one: a driver only ever sees actuator-space values, and users only ever
see joint-space values, whatever the backend (LeRobot's lesson: a base interface whose units change
by backend is a trap). Calibration is data (loaded from the robot file), not code.

The relation for each joint is ``actuator = direction · joint + offset`` for positions (rad or m)
and ``actuator = direction · joint`` for rates, efforts and currents.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from jointbus.model.calibration import JointCalibration

FloatArray = NDArray[np.float64]


class Calibration:
    """Vectorised calibration of N joints (numpy arrays, so a 500 Hz cycle costs a few ops)."""

    __slots__ = ("direction", "offset")

    def __init__(self, joints: Sequence[JointCalibration]) -> None:
        self.direction: FloatArray = np.array([float(j.direction) for j in joints])
        self.offset: FloatArray = np.array([float(j.offset) for j in joints])

    @classmethod
    def identity(cls, count: int) -> Calibration:
        return cls([JointCalibration()] * count)

    def position_to_actuator(self, joint: FloatArray) -> FloatArray:
        return self.direction * joint + self.offset

    def position_to_joint(self, actuator: FloatArray) -> FloatArray:
        return (actuator - self.offset) * self.direction

    def rate_to_actuator(self, joint: FloatArray) -> FloatArray:
        """Velocities, accelerations, efforts and currents only change sign."""
        return self.direction * joint

    def rate_to_joint(self, actuator: FloatArray) -> FloatArray:
        return self.direction * actuator
