"""jointbus.robots.hb50.control — the control node: state estimation, motion modes, the robot's
frames.

Where it sits: :mod:`jointbus.robots.hb50`, above the runtime, the bus and the model. The decision
logic is in pure components, each tested on its own; :mod:`.node` wires them to the bus:

- :mod:`.leg_kinematics` — feet, foot velocities and ground forces of all legs in closed form;
- :mod:`.state_estimator` — :class:`StateEstimator`: legs (contact, force), body pose and twist;
- :mod:`.stand_pose` — :class:`StandPose`: body height / roll / pitch / yaw → joint targets (IK);
- :mod:`.fall_detector` — :class:`FallDetector`: tipped over or upright, from the IMU's tilt;
- :mod:`.motion` — :class:`MotionController`: IDLE, STAND_UP, STAND, SIT_DOWN, LOCOMOTION,
  DAMPING, FALLEN;
- :mod:`.tf_publisher` — :class:`TfFrames`: ``/tf`` and ``/tf_static``;
- :mod:`.node` — :class:`ControlNode`.
"""

from jointbus.robots.hb50.control.fall_detector import FallConfig, FallDetector, Tilt
from jointbus.robots.hb50.control.leg_kinematics import LegKinematics, LegSample, leg_names
from jointbus.robots.hb50.control.motion import (
    SOURCE_NODE,
    MotionCommand,
    MotionController,
    MotionError,
    MotionParams,
    MotionTuning,
    TransitionError,
    TuningError,
    UnknownCommandError,
)
from jointbus.robots.hb50.control.node import (
    CONTROL_NODE_NAME,
    CONTROL_PARAMETERS,
    ControlNode,
    robot_state_message,
)
from jointbus.robots.hb50.control.stand_pose import BodyPose, PoseClamp, PoseLimits, StandPose
from jointbus.robots.hb50.control.state_estimator import (
    EstimatedState,
    EstimatorConfig,
    StateEstimator,
)
from jointbus.robots.hb50.control.tf_publisher import DEFAULT_WORLD_FRAME, TfFrames

__all__ = [
    "CONTROL_NODE_NAME",
    "CONTROL_PARAMETERS",
    "DEFAULT_WORLD_FRAME",
    "SOURCE_NODE",
    "BodyPose",
    "ControlNode",
    "EstimatedState",
    "EstimatorConfig",
    "FallConfig",
    "FallDetector",
    "LegKinematics",
    "LegSample",
    "MotionCommand",
    "MotionController",
    "MotionError",
    "MotionParams",
    "MotionTuning",
    "PoseClamp",
    "PoseLimits",
    "StandPose",
    "StateEstimator",
    "TfFrames",
    "Tilt",
    "TransitionError",
    "TuningError",
    "UnknownCommandError",
    "leg_names",
    "robot_state_message",
]
