"""Per-actuator geometry in the form of Player's ``actarray`` interface.

Where it sits: :mod:`jointbus.model`, an optional part of a :class:`~jointbus.model.joint.Joint`
(the ``actuator:`` sub-section of a joint in the robot file). The actuator-array driver answers
Player's "get geometry" request from it, so the fields mirror ``player_actarray_actuatorgeom_t``:

- ``length`` (m): length of this actuator's link to the next actuator (for a linear actuator, its
  length at position 0);
- ``rest_orientation`` (roll, pitch, yaw in rad, REP 103 fixed-axis X-Y-Z): the orientation of the
  actuator at rest, such that rotating the +x unit vector by it and scaling by ``length`` gives the
  next actuator's position in this actuator's frame — "the direction to the next actuator";
- ``home`` and ``centre`` (rad or m): the home position and the middle of the range of motion;
- ``config_speed`` (rad/s or m/s): the configured speed setting, not the current speed;
- ``has_brakes``: whether the actuator has a holding brake.

The axis and the min/max range come from the joint itself (``Joint.axis``, ``Joint.limits``), so
they are stored once. The data are kept even though the kinematic tree already implies ``length``
and ``rest_orientation``: Player clients read them as given, and a test checks the bundled arm's
values against its tree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from jointbus.model.errors import DefinitionError


@dataclass(frozen=True, slots=True)
class ActuatorGeometry:
    """Player ``actarray`` geometry of one actuator (see the module docstring for each field)."""

    length: float
    rest_orientation: tuple[float, float, float] = (0.0, 0.0, 0.0)
    home: float = 0.0
    centre: float = 0.0
    config_speed: float = 0.0
    has_brakes: bool = False

    def __post_init__(self) -> None:
        owner = "actuator geometry"
        if not (math.isfinite(self.length) and self.length >= 0.0):
            raise DefinitionError(owner, "length", self.length, "a finite length ≥ 0 m")
        if len(self.rest_orientation) != 3 or not all(
            math.isfinite(a) for a in self.rest_orientation
        ):
            raise DefinitionError(
                owner, "rest_orientation", self.rest_orientation, "three finite angles (rad)"
            )
        for name in ("home", "centre"):
            if not math.isfinite(getattr(self, name)):
                raise DefinitionError(owner, name, getattr(self, name), "a finite number")
        if not (math.isfinite(self.config_speed) and self.config_speed >= 0.0):
            raise DefinitionError(owner, "config_speed", self.config_speed, "a finite speed ≥ 0")
