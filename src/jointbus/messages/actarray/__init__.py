"""Actuator-array messages (Player ``actarray``): state, feedback, geometry, commands, requests.

Where it sits: :mod:`jointbus.messages`; the ``ActuatorArray`` driver API (:mod:`jointbus.drivers`)
speaks these types, and the simulator and the hardware drivers implement it. Actuators are
addressed by index in array order, as in Player; ``joint=None`` means every actuator (``-1`` on the
wire). All wire types belong to the ``jointbus_msgs`` ROS package.
"""

from .commands import (
    CurrentCommand,
    HomeCommand,
    JointAddressed,
    MultiCurrentCommand,
    MultiPositionCommand,
    MultiSpeedCommand,
    PositionCommand,
    SpeedCommand,
)
from .data import ActuatorArrayData, ActuatorData
from .description import ArrayDescription
from .geometry import ActuatorGeometry, ArrayGeometry, Orientation3D
from .reply import ActuatorReply
from .requests import (
    AccelConfigRequest,
    BrakesRequest,
    GeometryRequest,
    PowerRequest,
    SpeedConfigRequest,
)
from .state import ActuatorState, ActuatorType

__all__ = [
    "AccelConfigRequest",
    "ActuatorArrayData",
    "ActuatorData",
    "ActuatorGeometry",
    "ActuatorReply",
    "ActuatorState",
    "ActuatorType",
    "ArrayDescription",
    "ArrayGeometry",
    "BrakesRequest",
    "CurrentCommand",
    "GeometryRequest",
    "HomeCommand",
    "JointAddressed",
    "MultiCurrentCommand",
    "MultiPositionCommand",
    "MultiSpeedCommand",
    "Orientation3D",
    "PositionCommand",
    "PowerRequest",
    "SpeedCommand",
    "SpeedConfigRequest",
]
