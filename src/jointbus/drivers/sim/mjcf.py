"""MuJoCo model text (MJCF) generated from a :class:`~jointbus.model.robot.RobotModel`.

Where it sits: :mod:`jointbus.drivers.sim`, below :mod:`.mujoco_world` (which compiles the text
and steps it). The robot description is the one source of truth: links become bodies with their
mass, centre of mass and inertia; joints become MuJoCo joints with their axis, limits and drive
dynamics; collision shapes become geoms; sensor mounts of kind ``imu`` become a site carrying a
``framequat``, a ``gyro`` and an ``accelerometer``. Nothing here is specific to one robot; the
few figures a robot file does not hold (floor and foot friction) are keyword arguments with
stated defaults.

Mapping choices and why:

* URDF frame conventions carry over unchanged: a joint's ``origin`` is the child body's ``pos`` /
  ``quat`` in the parent body, the joint sits at the child body's origin, the axis is in that
  frame. A fixed joint is a child body without a joint (MuJoCo welds it to its parent).
* The root link gets a ``freejoint`` for a floating base, two slides and a hinge for a planar
  base, nothing for a fixed base. A floating joint below the root is refused (:class:`MjcfError`):
  MuJoCo allows free joints only on bodies attached to the world.
* ``inertiafromgeom="false"``: masses come from the links only, never from geom volumes, so a
  foot sphere does not silently gain the mass of 0.04 kg of water. A massless link (a foot
  centre, a tool point) is a body without an ``inertial``.
* Inertia is written ``diaginertia`` when the tensor is diagonal in the centre-of-mass frame (no
  eigen-decomposition, the numbers survive exactly); otherwise the tensor is rotated into the
  link frame and written ``fullinertia``, which MuJoCo diagonalises itself.
* Collisions: by default robot geoms collide with the floor only (``contype 0``, ``conaffinity
  1``), as in most legged-robot simulations: a crude primitive model would otherwise report
  thigh-against-body contacts the real robot's shapes do not have, and every skipped pair saves
  time. ``self_collision=True`` turns robot-robot contacts on (MuJoCo still skips parent-child
  pairs).
* Feet (see :func:`foot_links`) get ``priority 1`` so that *their* friction and contact
  stiffness (``solref``) decide a foot-floor contact (MuJoCo otherwise takes the larger friction
  of the two geoms, and the floor would override the foot's).
* One ``motor`` per actuated joint, in actuator order, gear 1, ``ctrlrange`` ± the joint's effort
  limit: ``data.ctrl`` is then the vector of joint torques in actuator order (N·m).
* Dry friction (``frictionloss``, which :mod:`.mujoco_world` also uses for brakes) is made
  nearly rigid (:data:`DRY_FRICTION_SOLIMP`): MuJoCo's default lets a loaded joint creep.
* The ``implicitfast`` integrator: joint damping and armature are integrated implicitly, the
  choice MuJoCo's documentation recommends for robots; ``timestep`` 2 ms by default (the
  simulation section of the robot file says what a robot needs).
* One keyframe per named pose of the robot (base at ``base_height``), so the file opened in
  MuJoCo's viewer can jump to ``home``.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Final

import numpy as np

from jointbus.drivers.errors import DriverError
from jointbus.math import Transform, Vec3
from jointbus.model.joint import Joint, JointType
from jointbus.model.link import Box, Capsule, Collision, Cylinder, Link, Sphere
from jointbus.model.robot import RobotModel

__all__ = [
    "DEFAULT_FLOOR_FRICTION",
    "DEFAULT_FOOT_FRICTION",
    "DEFAULT_FOOT_SOLREF",
    "DRY_FRICTION_SOLIMP",
    "FLOOR_NAME",
    "MjcfError",
    "foot_links",
    "geom_name",
    "imu_sensor_names",
    "mjcf_from_model",
]

DEFAULT_FOOT_FRICTION: Final[tuple[float, float, float]] = (1.0, 0.005, 0.0001)
"""Foot friction (sliding, torsional, rolling): rubber on a hard floor, μ ≈ 1. Not published for
the HB50; MuJoCo's own torsional and rolling defaults."""

DEFAULT_FOOT_SOLREF: Final[tuple[float, float]] = (0.01, 1.0)
"""Foot contact (time constant s, damping ratio): 10 ms, critically damped. MuJoCo's 20 ms default
lets the 17 kg HB50 sink 6–9 mm into the floor on its 21 mm feet; 10 ms keeps it to ≈ 2 mm and
is still ≥ 2 steps at the 2 ms default step (MuJoCo raises a shorter one to 2 steps anyway)."""

DEFAULT_FLOOR_FRICTION: Final[tuple[float, float, float]] = (1.0, 0.005, 0.0001)
"""Floor friction (sliding, torsional, rolling): MuJoCo's defaults; used where no foot decides."""

DRY_FRICTION_SOLIMP: Final[tuple[float, float, float, float, float]] = (
    0.999,
    0.999,
    0.001,
    0.5,
    2.0,
)
"""Impedance of the joints' dry-friction constraint (``solimpfriction``), with a time constant
of two steps (``solreffriction``). MuJoCo's default (0.9–0.95, 20 ms) makes dry friction so soft
that a 30 N·m brake let the standing HB50 sink 0.2 m in a second; with this a braked joint under
a quarter of its holding torque creeps by about 1 mrad/s, and a drive's 0.48 N·m Coulomb friction
sticks as it should."""

FLOOR_NAME: Final[str] = "floor"
"""Name of the floor plane geom."""

_PLANAR_SUFFIXES: Final[tuple[str, str, str]] = ("_x", "_y", "_yaw")


class MjcfError(DriverError, ValueError):
    """The robot description holds something MuJoCo cannot represent (or an argument is bad).

    Attributes: ``owner`` (e.g. ``"joint 'x' (index 3)"``), ``field``, ``value``, ``expected``.
    """

    def __init__(self, owner: str, field: str, value: object, expected: str) -> None:
        self.owner = owner
        self.field = field
        self.value = value
        self.expected = expected
        super().__init__(f"{owner}: field {field!r} = {value!r}; expected {expected}")


def geom_name(link: str, index: int) -> str:
    """Name of the geom made from collision ``index`` of ``link``."""
    return f"{link}_collision{index}"


def imu_sensor_names(sensor: str) -> tuple[str, str, str]:
    """MuJoCo sensor names of IMU ``sensor``: orientation, gyro, accelerometer."""
    return f"{sensor}_orientation", f"{sensor}_gyro", f"{sensor}_accelerometer"


def foot_links(model: RobotModel) -> tuple[str, ...]:
    """The robot's feet: leaf links (no child joints) that carry a sphere collision.

    Ordered as their legs are in the actuator order (by the first actuated joint on the way from
    the root), so for the HB50 the order is fr, fl, rl, rr — the leg order of every per-leg
    message. A robot without such links (an arm, a rover) has no feet.
    """
    found: list[tuple[int, str]] = []
    order = {name: i for i, name in enumerate(model.actuator_order)}
    for link in model.links:
        if model.child_joints(link.name) or link.name == model.root:
            continue
        if not any(isinstance(c.shape, Sphere) for c in link.collisions):
            continue
        chain_rank = [order[j.name] for j in model.chain(link.name) if j.name in order]
        found.append((min(chain_rank) if chain_rank else len(order), link.name))
    found.sort()
    return tuple(name for _, name in found)


def _num(value: float) -> str:
    """Shortest text that reads back as exactly ``value``."""
    return repr(float(value))


def _nums(values: Sequence[float]) -> str:
    return " ".join(_num(v) for v in values)


def _frame(element: ET.Element, origin: Transform) -> None:
    """Set ``pos`` / ``quat`` of ``element`` from ``origin`` (omitted when zero / identity)."""
    t, q = origin.translation, origin.rotation
    if (t.x, t.y, t.z) != (0.0, 0.0, 0.0):
        element.set("pos", _nums((t.x, t.y, t.z)))
    if (q.w, q.x, q.y, q.z) != (1.0, 0.0, 0.0, 0.0):
        element.set("quat", _nums((q.w, q.x, q.y, q.z)))


def _check_positive(owner: str, field: str, value: float) -> None:
    if not (math.isfinite(value) and value > 0.0):
        raise MjcfError(owner, field, value, "a finite number > 0")


def _check_friction(field: str, friction: Sequence[float]) -> tuple[float, float, float]:
    values = tuple(float(v) for v in friction)
    if len(values) != 3 or not all(math.isfinite(v) and v >= 0.0 for v in values):
        raise MjcfError(
            "mjcf_from_model", field, friction, "three finite coefficients >= 0 (slide, spin, roll)"
        )
    return values[0], values[1], values[2]


def mjcf_from_model(
    model: RobotModel,
    *,
    timestep: float = 0.002,
    floor: bool = True,
    foot_friction: Sequence[float] = DEFAULT_FOOT_FRICTION,
    foot_solref: Sequence[float] = DEFAULT_FOOT_SOLREF,
    floor_friction: Sequence[float] = DEFAULT_FLOOR_FRICTION,
    self_collision: bool = False,
    base_height: float = 0.0,
    gravity: float = 9.81,
) -> str:
    """MJCF text of ``model`` (see the module docstring for every mapping choice).

    Args:
        model: the robot description.
        timestep: MuJoCo integration step, s (> 0, ≤ 0.01).
        floor: add a floor plane at z = 0.
        foot_friction: (sliding, torsional, rolling) friction of the feet (:func:`foot_links`).
        foot_solref: (time constant s, damping ratio) of foot contacts (MuJoCo ``solref``).
        floor_friction: the same for the floor, used by contacts without a foot.
        self_collision: let robot geoms collide with each other (not just with the floor).
        base_height: initial height of the root body above the floor, m (a floating or planar
            base starts there; :meth:`MujocoWorld.reset` places it anywhere later).
        gravity: magnitude of gravity along −z, m/s².

    Raises:
        MjcfError: an argument out of range, or a construct MuJoCo cannot represent.
    """
    _check_positive("mjcf_from_model", "timestep", timestep)
    if timestep > 0.01:
        raise MjcfError("mjcf_from_model", "timestep", timestep, "<= 0.01 s")
    if not (math.isfinite(base_height) and math.isfinite(gravity) and gravity >= 0.0):
        raise MjcfError(
            "mjcf_from_model",
            "base_height, gravity",
            (base_height, gravity),
            "finite numbers, gravity >= 0",
        )
    feet = frozenset(foot_links(model))
    foot_mu = _check_friction("foot_friction", foot_friction)
    floor_mu = _check_friction("floor_friction", floor_friction)
    solref = tuple(float(v) for v in foot_solref)
    if len(solref) != 2 or not all(math.isfinite(v) and v > 0.0 for v in solref):
        raise MjcfError(
            "mjcf_from_model",
            "foot_solref",
            foot_solref,
            "(time constant > 0 s, damping ratio > 0)",
        )
    foot_contact = {"priority": "1", "friction": _nums(foot_mu), "solref": _nums(solref)}

    root = ET.Element("mujoco", model=model.name)
    ET.SubElement(root, "compiler", angle="radian", inertiafromgeom="false", autolimits="true")
    ET.SubElement(
        root,
        "option",
        timestep=_num(timestep),
        integrator="implicitfast",
        gravity=_nums((0.0, 0.0, -gravity)),
    )
    default = ET.SubElement(root, "default")
    robot_contype = "1" if self_collision else "0"
    ET.SubElement(default, "geom", contype=robot_contype, conaffinity="1", condim="3")
    ET.SubElement(
        default,
        "joint",
        solreffriction=_nums((2.0 * timestep, 1.0)),
        solimpfriction=_nums(DRY_FRICTION_SOLIMP),
    )
    worldbody = ET.SubElement(root, "worldbody")
    if floor:
        ET.SubElement(
            worldbody,
            "geom",
            name=FLOOR_NAME,
            type="plane",
            size="0 0 0.05",
            contype="1",
            conaffinity="1",
            friction=_nums(floor_mu),
        )

    writer = _BodyWriter(model, feet, foot_contact)
    base = ET.SubElement(worldbody, "body", name=model.root)
    mount = model.base_mount
    if mount is not JointType.FIXED:
        base.set("pos", _nums((0.0, 0.0, base_height)))
    if mount is JointType.FLOATING:
        ET.SubElement(base, "freejoint", name=f"{model.root}_free")
        writer.qpos_layout.append((f"{model.root}_free", 7))
    elif mount is JointType.PLANAR:
        for name, axis in _planar_joints(f"{model.root}_planar", Vec3(0.0, 0.0, 1.0)):
            _add_joint_element(base, name, axis)
            writer.qpos_layout.append((name, 1))
    writer.fill_body(base, model.link(model.root))
    writer.add_children(base, model.root)

    actuator = ET.SubElement(root, "actuator")
    for joint in model.actuated_joints():
        if joint.dof != 1:
            raise MjcfError(
                f"joint {joint.name!r} (index {model.actuator_index(joint.name)})",
                "type",
                joint.type.value,
                "a single-DoF joint for an actuator (revolute, continuous or prismatic)",
            )
        motor = ET.SubElement(actuator, "motor", name=joint.name, joint=joint.name, gear="1")
        effort = joint.limits.effort_max
        if math.isfinite(effort):
            motor.set("ctrlrange", _nums((-effort, effort)))

    imus = [s for s in model.sensors if s.kind == "imu"]
    if imus:
        sensor = ET.SubElement(root, "sensor")
        for imu in imus:
            quat_name, gyro_name, acc_name = imu_sensor_names(imu.name)
            ET.SubElement(sensor, "framequat", name=quat_name, objtype="site", objname=imu.name)
            ET.SubElement(sensor, "gyro", name=gyro_name, site=imu.name)
            ET.SubElement(sensor, "accelerometer", name=acc_name, site=imu.name)

    if model.poses:
        _add_keyframes(root, model, writer.qpos_layout, base_height)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode") + "\n"


def _planar_joints(name: str, normal: Vec3) -> list[tuple[str, tuple[str, str]]]:
    """Two slides spanning the plane with normal ``normal``, then a hinge about it."""
    n = np.array(tuple(normal), dtype=np.float64)
    helper = np.array((1.0, 0.0, 0.0)) if abs(n[0]) < 0.9 else np.array((0.0, 1.0, 0.0))
    u = np.cross(n, helper)
    u /= np.linalg.norm(u)
    v = np.cross(n, u)
    axes = (u, v, n)
    kinds = ("slide", "slide", "hinge")
    return [
        (name + suffix, (kind, _nums(tuple(axis.tolist()))))
        for suffix, kind, axis in zip(_PLANAR_SUFFIXES, kinds, axes, strict=True)
    ]


def _add_joint_element(body: ET.Element, name: str, kind_axis: tuple[str, str]) -> ET.Element:
    kind, axis = kind_axis
    return ET.SubElement(body, "joint", name=name, type=kind, axis=axis)


class _BodyWriter:
    """Writes the body tree below the root, recording the qpos layout (joint name, width)."""

    def __init__(
        self, model: RobotModel, feet: frozenset[str], foot_contact: dict[str, str]
    ) -> None:
        self.model = model
        self.feet = feet
        self.foot_contact = foot_contact
        self.qpos_layout: list[tuple[str, int]] = []

    def add_children(self, parent: ET.Element, link_name: str) -> None:
        for joint in self.model.child_joints(link_name):
            body = ET.SubElement(parent, "body", name=joint.child)
            _frame(body, joint.origin)
            self.add_joint(body, joint)
            self.fill_body(body, self.model.link(joint.child))
            self.add_children(body, joint.child)

    def add_joint(self, body: ET.Element, joint: Joint) -> None:
        if joint.type is JointType.FIXED:
            return
        if joint.type is JointType.FLOATING:
            raise MjcfError(
                f"joint {joint.name!r} (index {self.model.joints.index(joint)})",
                "type",
                joint.type.value,
                "no floating joint below the root (MuJoCo allows free joints only on bodies "
                "attached to the world)",
            )
        if joint.type is JointType.PLANAR:
            elements = [
                _add_joint_element(body, name, kind_axis)
                for name, kind_axis in _planar_joints(joint.name, joint.axis)
            ]
            self.qpos_layout.extend((e.get("name", ""), 1) for e in elements)
        else:
            kind = "slide" if joint.type is JointType.PRISMATIC else "hinge"
            element = _add_joint_element(body, joint.name, (kind, _nums(tuple(joint.axis))))
            if joint.type is not JointType.CONTINUOUS:
                lo, hi = joint.limits.position_min, joint.limits.position_max
                element.set("range", _nums((lo, hi)))  # finite: the model checks it
            elements = [element]
            self.qpos_layout.append((joint.name, 1))
        dynamics = joint.dynamics
        for element in elements:
            for attribute, value in (
                ("armature", dynamics.armature),
                ("damping", dynamics.damping),
                ("frictionloss", dynamics.friction),
            ):
                if value > 0.0:
                    element.set(attribute, _num(value))

    def fill_body(self, body: ET.Element, link: Link) -> None:
        """Inertial, geoms and sensor sites of ``link`` into ``body``."""
        if link.mass > 0.0:
            _inertial(body, link)
        for index, collision in enumerate(link.collisions):
            geom = ET.SubElement(body, "geom", name=geom_name(link.name, index))
            _shape(geom, collision)
            _frame(geom, collision.origin)
            if link.name in self.feet and isinstance(collision.shape, Sphere):
                for attribute, text in self.foot_contact.items():
                    geom.set(attribute, text)
        for sensor in self.model.sensors:
            if sensor.link == link.name:
                site = ET.SubElement(body, "site", name=sensor.name)
                _frame(site, sensor.origin)


def _inertial(body: ET.Element, link: Link) -> None:
    """Mass, centre of mass and inertia (rotated into the link frame if the com frame is)."""
    inertial = ET.SubElement(body, "inertial", mass=_num(link.mass))
    t = link.com.translation
    inertial.set("pos", _nums((t.x, t.y, t.z)))
    i = link.inertia
    tensor = np.array(
        ((i.ixx, i.ixy, i.ixz), (i.ixy, i.iyy, i.iyz), (i.ixz, i.iyz, i.izz)), dtype=np.float64
    )
    rotation = link.com.rotation
    if (rotation.w, rotation.x, rotation.y, rotation.z) != (1.0, 0.0, 0.0, 0.0):
        r = rotation.to_matrix()
        tensor = r @ tensor @ r.T
    off_diagonal = (float(tensor[0, 1]), float(tensor[0, 2]), float(tensor[1, 2]))
    if off_diagonal == (0.0, 0.0, 0.0):
        inertial.set("diaginertia", _nums(tuple(np.diag(tensor).tolist())))
    else:
        diagonal = (float(tensor[0, 0]), float(tensor[1, 1]), float(tensor[2, 2]))
        inertial.set("fullinertia", _nums((*diagonal, *off_diagonal)))


def _shape(geom: ET.Element, collision: Collision) -> None:
    shape = collision.shape
    if isinstance(shape, Box):
        geom.set("type", "box")
        geom.set("size", _nums(tuple(0.5 * s for s in shape.size)))
    elif isinstance(shape, Sphere):
        geom.set("type", "sphere")
        geom.set("size", _num(shape.radius))
    elif isinstance(shape, Cylinder):
        geom.set("type", "cylinder")
        geom.set("size", _nums((shape.radius, 0.5 * shape.length)))
    elif isinstance(shape, Capsule):
        geom.set("type", "capsule")
        geom.set("size", _nums((shape.radius, 0.5 * shape.length)))
    # Shape is a closed union; mypy checks the branches are exhaustive.


def _add_keyframes(
    root: ET.Element,
    model: RobotModel,
    qpos_layout: list[tuple[str, int]],
    base_height: float,
) -> None:
    keyframe = ET.SubElement(root, "keyframe")
    for pose_name, values in model.poses.items():
        qpos: list[float] = []
        for name, width in qpos_layout:
            if width == 7:
                qpos.extend((0.0, 0.0, base_height, 1.0, 0.0, 0.0, 0.0))
            else:
                qpos.append(float(values.get(name, 0.0)))
        ET.SubElement(keyframe, "key", name=pose_name, qpos=_nums(qpos))
