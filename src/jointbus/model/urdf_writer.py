"""Write a :class:`~jointbus.model.robot.RobotModel` as URDF text.

Where it sits: :mod:`jointbus.model`, called as :meth:`RobotModel.to_urdf`; the live view
publishes the result as the robot description, and :mod:`~jointbus.model.urdf_loader` reads it
back (the round trip is tested: joints, limits, origins, axes, inertias and shapes survive).

What URDF can carry is written; the rest is not: actuator order, calibration, armature, current
limits, poses, parameters, sensors and the base mount stay in the YAML robot file. A
:class:`~jointbus.model.link.Capsule` becomes the cylinder that encloses it (URDF has no
capsule). Each collision shape is also written as a ``<visual>`` so viewers that draw only visuals
(Foxglove, RViz) show the robot. Numbers are written with ``repr`` (shortest exact round trip)
and an unbounded limit as ``Infinity``, which Python, C ``strtod`` and JavaScript all parse.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from jointbus.math import Transform
from jointbus.model.joint import Joint, JointType
from jointbus.model.link import Box, Capsule, Collision, Cylinder, Link, Sphere
from jointbus.model.robot import RobotModel


def _num(value: float) -> str:
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(float(value) + 0.0)  # + 0.0 turns -0.0 into 0.0


def _origin(parent: ET.Element, origin: Transform) -> None:
    t = origin.translation
    roll, pitch, yaw = origin.rotation.to_rpy()
    ET.SubElement(
        parent,
        "origin",
        xyz=f"{_num(t.x)} {_num(t.y)} {_num(t.z)}",
        rpy=f"{_num(roll)} {_num(pitch)} {_num(yaw)}",
    )


def _geometry(parent: ET.Element, collision: Collision) -> None:
    geometry = ET.SubElement(parent, "geometry")
    shape = collision.shape
    if isinstance(shape, Box):
        s = shape.size
        ET.SubElement(geometry, "box", size=f"{_num(s.x)} {_num(s.y)} {_num(s.z)}")
    elif isinstance(shape, Sphere):
        ET.SubElement(geometry, "sphere", radius=_num(shape.radius))
    elif isinstance(shape, Cylinder):
        ET.SubElement(geometry, "cylinder", radius=_num(shape.radius), length=_num(shape.length))
    else:
        assert isinstance(shape, Capsule)
        ET.SubElement(
            geometry,
            "cylinder",
            radius=_num(shape.radius),
            length=_num(shape.length + 2.0 * shape.radius),
        )


def _link(robot: ET.Element, link: Link) -> None:
    element = ET.SubElement(robot, "link", name=link.name)
    inertia = link.inertia
    if link.mass > 0.0 or any(
        getattr(inertia, k) != 0.0 for k in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")
    ):
        inertial = ET.SubElement(element, "inertial")
        _origin(inertial, link.com)
        ET.SubElement(inertial, "mass", value=_num(link.mass))
        ET.SubElement(
            inertial,
            "inertia",
            ixx=_num(inertia.ixx),
            ixy=_num(inertia.ixy),
            ixz=_num(inertia.ixz),
            iyy=_num(inertia.iyy),
            iyz=_num(inertia.iyz),
            izz=_num(inertia.izz),
        )
    for tag in ("visual", "collision"):
        for i, collision in enumerate(link.collisions):
            shape_element = ET.SubElement(element, tag, name=f"{link.name}_{tag}_{i}")
            _origin(shape_element, collision.origin)
            _geometry(shape_element, collision)


def _joint(robot: ET.Element, joint: Joint) -> None:
    element = ET.SubElement(robot, "joint", name=joint.name, type=joint.type.value)
    ET.SubElement(element, "parent", link=joint.parent)
    ET.SubElement(element, "child", link=joint.child)
    _origin(element, joint.origin)
    if joint.type not in (JointType.FIXED, JointType.FLOATING):
        a = joint.axis
        ET.SubElement(element, "axis", xyz=f"{_num(a.x)} {_num(a.y)} {_num(a.z)}")
    if joint.type in (JointType.REVOLUTE, JointType.CONTINUOUS, JointType.PRISMATIC):
        limits = joint.limits
        attributes = {"effort": _num(limits.effort_max), "velocity": _num(limits.velocity_max)}
        if joint.type is not JointType.CONTINUOUS:
            attributes["lower"] = _num(limits.position_min)
            attributes["upper"] = _num(limits.position_max)
        ET.SubElement(element, "limit", attributes)
    elif joint.type is JointType.PLANAR and (
        math.isfinite(joint.limits.velocity_max) or math.isfinite(joint.limits.effort_max)
    ):
        ET.SubElement(
            element,
            "limit",
            effort=_num(joint.limits.effort_max),
            velocity=_num(joint.limits.velocity_max),
        )
    if joint.type in (JointType.REVOLUTE, JointType.CONTINUOUS, JointType.PRISMATIC):
        limits = joint.limits
        dynamics = joint.dynamics
        if dynamics.damping or dynamics.friction:
            ET.SubElement(
                element,
                "dynamics",
                damping=_num(dynamics.damping),
                friction=_num(dynamics.friction),
            )
        soft = limits.soft
        if soft is not None:
            ET.SubElement(
                element,
                "safety_controller",
                soft_lower_limit=_num(soft.lower),
                soft_upper_limit=_num(soft.upper),
                k_position=_num(soft.k_position),
                k_velocity=_num(soft.k_velocity),
            )


def to_urdf(model: RobotModel) -> str:
    """URDF text of ``model`` (see the module docstring for what URDF cannot carry)."""
    robot = ET.Element("robot", name=model.name)
    for link in model.links:
        _link(robot, link)
    for joint in model.joints:
        _joint(robot, joint)
    ET.indent(robot)
    return '<?xml version="1.0"?>\n' + ET.tostring(robot, encoding="unicode") + "\n"
