"""The simulator's numerical core: actuator physics, thermal model and motion profiles.

Where it sits: :mod:`jointbus.drivers.sim`, in the drivers layer. The ``sim://`` driver wraps
:class:`ActuatorArrayModel` (vectorised actuator physics, standalone or as the actuator layer over
an external physics engine) and :class:`ProfileGenerator` (ruckig-computed position and speed
moves) in the ``ActuatorArray`` API; this package itself knows nothing of that API or of the bus.
"""

from jointbus.drivers.sim.actuator_model import (
    MOTOR_SHUTDOWN_MAX,
    ActuatorArrayModel,
    ActuatorMeasurement,
    ActuatorParams,
)
from jointbus.drivers.sim.profile import ProfileGenerator, ProfilePlanningError
from jointbus.drivers.sim.thermal import ThermalModel

__all__ = [
    "MOTOR_SHUTDOWN_MAX",
    "ActuatorArrayModel",
    "ActuatorMeasurement",
    "ActuatorParams",
    "ProfileGenerator",
    "ProfilePlanningError",
    "ThermalModel",
]
