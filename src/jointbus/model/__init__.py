"""jointbus.model: the robot description, its loaders, the bundled robots and kinematics.

Where it sits: above :mod:`jointbus.math`, :mod:`jointbus.codec` and :mod:`jointbus.messages`,
below ``bus`` / ``runtime`` / ``drivers`` / ``nodes``. A :class:`RobotModel` (links, joints,
actuator order, poses, parameters, sensors) comes from a YAML robot file
(:func:`load_robot`; bundled: ``hb50``, ``arm6``, ``rover``) or from URDF
(:func:`jointbus.model.urdf_loader.load_urdf`, imported on its own because the URDF library
takes most of a second to import), and goes back out as URDF with :meth:`RobotModel.to_urdf`.
:class:`Kinematics` gives link poses and point Jacobians; :class:`LegIK` solves a quadruped leg.
"""

from jointbus.model.actuator_geometry import ActuatorGeometry
from jointbus.model.calibration import JointCalibration
from jointbus.model.errors import (
    ConfigurationError,
    DefinitionError,
    ModelError,
    ParameterError,
    RobotFileError,
    TreeError,
    UnknownLinkError,
    UnreachableError,
)
from jointbus.model.joint import Joint, JointDynamics, JointType
from jointbus.model.kinematics import Kinematics, PointSet
from jointbus.model.leg_ik import LegIK, legs_ik
from jointbus.model.limits import JointLimitSpec, SoftLimits
from jointbus.model.link import Box, Capsule, Collision, Cylinder, Inertia, Link, Sphere
from jointbus.model.parameters import ParameterSpec, ParameterType, parameter_defaults
from jointbus.model.robot import RobotModel
from jointbus.model.sensor_mount import SensorMount
from jointbus.model.simulation_spec import SimulationSpec
from jointbus.model.yaml_loader import bundled_robots, load_robot, loads_robot

__all__ = [
    "ActuatorGeometry",
    "Box",
    "Capsule",
    "Collision",
    "ConfigurationError",
    "Cylinder",
    "DefinitionError",
    "Inertia",
    "Joint",
    "JointCalibration",
    "JointDynamics",
    "JointLimitSpec",
    "JointType",
    "Kinematics",
    "LegIK",
    "Link",
    "ModelError",
    "ParameterError",
    "ParameterSpec",
    "ParameterType",
    "PointSet",
    "RobotFileError",
    "RobotModel",
    "SensorMount",
    "SimulationSpec",
    "SoftLimits",
    "Sphere",
    "TreeError",
    "UnknownLinkError",
    "UnreachableError",
    "bundled_robots",
    "legs_ik",
    "load_robot",
    "loads_robot",
    "parameter_defaults",
]
