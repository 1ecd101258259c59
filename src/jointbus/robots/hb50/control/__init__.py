"""jointbus.robots.hb50.control — the control node: state estimation, motion modes, the robot's
frames.

Where it sits: :mod:`jointbus.robots.hb50`, above the runtime, the bus, the model and hb50's leg
and body models (:mod:`jointbus.robots.hb50.legged`: kinematics, estimators, stand poses, the
trot — re-exported here where the control node's users know them). The decision logic is in pure
components, each tested on its own; :mod:`.node` wires them to the bus:

- :mod:`.fall_detector` — :class:`FallDetector`: tipped over or upright, from the IMU's tilt;
- :mod:`.motion` — :class:`MotionController`: IDLE, STAND_UP, STAND, SIT_DOWN, LOCOMOTION,
  DAMPING, FALLEN;
- :mod:`.tf_publisher` — :class:`TfFrames`: ``/tf`` and ``/tf_static``;
- :mod:`.node` — :class:`ControlNode`.
"""

from jointbus.robots.hb50.control.fall_detector import FallConfig, FallDetector, Tilt
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
from jointbus.robots.hb50.control.tf_publisher import DEFAULT_WORLD_FRAME, TfFrames
from jointbus.robots.hb50.legged.leg_kinematics import LegKinematics, LegSample, leg_names
from jointbus.robots.hb50.legged.stand_pose import BodyPose, PoseClamp, PoseLimits, StandPose
from jointbus.robots.hb50.legged.state_estimator import (
    EstimatedState,
    EstimatorConfig,
    StateEstimator,
)

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
