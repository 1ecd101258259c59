"""The Honey Badger 5.0 message set (``hb50_commons``), byte-compatible with the robot's ROS 2.

Where it sits: :mod:`jointbus.robots.hb50`, above the generic messages and the standard ROS types
(``std_msgs``,
``geometry_msgs``). Field names, order and wire types follow seed 001 exactly, so ROS 2 tools that
know ``hb50_commons`` decode what jointbus publishes:

- :class:`BridgeData` — the 500 Hz hardware frame (IMU and every actuator's measurements);
- :class:`BridgeState` — power, temperatures, drive enable, hardware status strings;
- :class:`BridgeStatus` — the bridge's owner, mode and e-stop in those strings, typed: the one
  place that writes and parses them;
- :class:`JointCommand` — impedance targets and gains, in actuator order;
- :class:`RobotState` / :class:`LegState` — the control node's state estimate and motion mode;
- :class:`Status` — events and heartbeats, with :class:`Level` OK / WARN / ERROR / STALE (the
  generic :mod:`jointbus.messages.status`, re-exported: every node of every robot uses it);
- :class:`VelocityScale` — the rule that turns the normalised velocity command into SI.
"""

from typing import Any

from jointbus.messages.registry import message_types_in
from jointbus.messages.status import Level, Status
from jointbus.robots.hb50.messages import bridge_data, bridge_state, joint_command, robot_state
from jointbus.robots.hb50.messages.bridge_data import (
    JOINT_ERROR_MASK,
    BridgeData,
    JointReading,
    JointStatusFlag,
)
from jointbus.robots.hb50.messages.bridge_state import BridgeState
from jointbus.robots.hb50.messages.bridge_status import BridgeMode, BridgeStatus, ThermalNote
from jointbus.robots.hb50.messages.joint_command import JointCommand, JointTarget
from jointbus.robots.hb50.messages.robot_state import (
    LegState,
    MotionGait,
    MotionMode,
    MotionType,
    RobotState,
)
from jointbus.robots.hb50.messages.velocity_command import (
    BodyVelocityCommand,
    ClampedComponent,
    ClampReport,
    VelocityScale,
)

#: Every ``hb50_commons`` wire type (Status is the generic one, in the core's registry already):
#: what a registry adds to decode Honey Badger's topics by name.
HB50_MESSAGE_TYPES: tuple[type[Any], ...] = tuple(
    message_types_in(bridge_data, bridge_state, joint_command, robot_state)
)

__all__ = [
    "HB50_MESSAGE_TYPES",
    "JOINT_ERROR_MASK",
    "BodyVelocityCommand",
    "BridgeData",
    "BridgeMode",
    "BridgeState",
    "BridgeStatus",
    "ClampReport",
    "ClampedComponent",
    "JointCommand",
    "JointReading",
    "JointStatusFlag",
    "JointTarget",
    "LegState",
    "Level",
    "MotionGait",
    "MotionMode",
    "MotionType",
    "RobotState",
    "Status",
    "ThermalNote",
    "VelocityScale",
]
