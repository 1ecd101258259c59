"""Load a :class:`~jointbus.model.robot.RobotModel` from a YAML robot file or a bundled name.

Where it sits: :mod:`jointbus.model`; the bundled robots live in ``jointbus/model/robots/*.yaml``
(``hb50``, ``arm6``, ``rover``). ``load_robot("hb50")`` loads a bundled robot, ``load_robot(path)``
a file. Every error is a :class:`~jointbus.model.errors.RobotFileError` that names the file, the
key path (``joints[4].limits.position``), inside a joint the joint by name and index (``of joint
'fr_j1' (index 4)``), the value and what was expected; nothing is half-built.
Duplicate keys in a mapping are errors too (plain PyYAML keeps the last one silently, which would
hide a copy-paste slip such as two ``fr_j1`` entries in a pose).

Robot file schema (SI units; angles in rad; every key not marked *required* is optional)::

    name: hb50                          # required
    base: {link: body, mount: floating} # mount: fixed (default) | floating | planar;
                                        #   link, if given, must be the root link
    actuator_order: [fr_j0, ...]        # default: actuated joints in file order
    links:                              # required, list
      - name: body                      # required
        mass: 7.812                     # kg
        inertia: {ixx: .., iyy: .., izz: .., ixy: 0, ixz: 0, iyz: 0}   # kg·m², about the CoM
        com: {xyz: [x, y, z], rpy: [r, p, y]}                          # CoM frame in link frame
        collisions:
          - {shape: box, size: [sx, sy, sz], origin: {xyz: .., rpy: ..}}   # full edge lengths
          - {shape: sphere, radius: r}
          - {shape: cylinder, radius: r, length: l}                        # along local z
          - {shape: capsule, radius: r, length: l}   # l between hemisphere centres
    joints:                             # list
      - name: fr_j0                     # required
        type: revolute                  # required: revolute, continuous, prismatic,
                                        #   fixed, planar or floating
        parent: body                    # required
        child: fr_hip                   # required
        role: hip_abduction             # what the joint is, when the name does not say it
        origin: {xyz: [..], rpy: [..]}  # joint frame in the parent link frame
        axis: [1, 0, 0]                 # default [1, 0, 0]; the plane normal for planar joints
        limits:
          position: [min, max]          # required for revolute and prismatic
          velocity: 20.0                # rad/s or m/s (default unbounded; .inf allowed)
          effort: 24.0                  # N·m or N
          current: 40.0                 # A
          soft: {lower: .., upper: .., k_position: .., k_velocity: ..}
        calibration: {direction: 1, offset: 0.0}   # actuator = direction·joint + offset
        dynamics: {armature: .., damping: .., friction: ..}   # kg·m², N·m·s/rad, N·m
        actuated: true                  # default: true unless fixed
        actuator:                       # Player actarray geometry (see actuator_geometry.py)
          length: 0.3                   # m, to the next actuator
          rest_orientation: [r, p, y]   # rad; rotates +x onto the direction to the next actuator
          home: 0.0
          centre: 0.0
          config_speed: 1.0             # rad/s
          has_brakes: false
    poses: {home: {fr_j0: 0.05, ...}}   # named single-DoF poses, inside the limits
    parameters: {...}                   # see jointbus.model.parameters
    sensors:
      - {name: imu, type: imu, link: body, origin: {xyz: [0.0693, 0, 0]}}
    simulation: {position_noise: .., velocity_noise: .., effort_noise: .., timestep: 0.002}
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from jointbus.math import Vec3
from jointbus.messages.errors import UnknownJointError
from jointbus.model.actuator_geometry import ActuatorGeometry
from jointbus.model.calibration import JointCalibration
from jointbus.model.errors import DefinitionError, ModelError, RobotFileError, TreeError
from jointbus.model.file_node import FileNode
from jointbus.model.joint import Joint, JointDynamics, JointType
from jointbus.model.limits import JointLimitSpec, SoftLimits
from jointbus.model.link import Box, Capsule, Collision, Cylinder, Inertia, Link, Shape, Sphere
from jointbus.model.parameters import parse_parameters
from jointbus.model.robot import BASE_MOUNTS, RobotModel
from jointbus.model.sensor_mount import SensorMount
from jointbus.model.simulation_spec import SimulationSpec

_TOP_KEYS = (
    "name",
    "base",
    "actuator_order",
    "links",
    "joints",
    "poses",
    "parameters",
    "sensors",
    "simulation",
)
_LINK_KEYS = ("name", "mass", "inertia", "com", "collisions")
_JOINT_KEYS = (
    "name",
    "type",
    "parent",
    "child",
    "origin",
    "axis",
    "limits",
    "calibration",
    "dynamics",
    "actuated",
    "actuator",
    "role",
)


def bundled_robots() -> tuple[str, ...]:
    """Names of the robots shipped with jointbus (``load_robot(name)`` loads them)."""
    folder = resources.files("jointbus.model") / "robots"
    return tuple(
        sorted(p.name.removesuffix(".yaml") for p in folder.iterdir() if p.name.endswith(".yaml"))
    )


def load_robot(path_or_name: str | Path) -> RobotModel:
    """A robot from a bundled name (``"hb50"``, ``"arm6"``, ``"rover"``) or a YAML file path."""
    if isinstance(path_or_name, str) and path_or_name in bundled_robots():
        return _bundled_robot(path_or_name)
    path = Path(path_or_name)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RobotFileError(
            str(path),
            "",
            str(path_or_name),
            f"a readable robot file or a bundled robot name {bundled_robots()} ({exc.strerror})",
        ) from exc
    return loads_robot(text, source=str(path))


@cache
def _bundled_robot(name: str) -> RobotModel:
    """A bundled robot, parsed once per process: the model is immutable, and a stack, its nodes
    and its simulator each load it (hb50's file takes ~50 ms to parse in pure-Python YAML)."""
    resource = resources.files("jointbus.model") / "robots" / f"{name}.yaml"
    return loads_robot(resource.read_text(encoding="utf-8"), source=f"{name}.yaml")


def loads_robot(text: str, source: str = "<string>") -> RobotModel:
    """A robot from YAML ``text``; ``source`` names it in error messages."""
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader subclass
    except _DuplicateKeyError as exc:
        raise RobotFileError(source, exc.where, exc.key, "each key once in its mapping") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise RobotFileError(
            source, where, getattr(exc, "problem", str(exc)), "valid YAML"
        ) from None
    return robot_from_data(FileNode(data, source))


def robot_from_data(root: FileNode) -> RobotModel:
    """A robot from already-decoded YAML data (a mapping) — the loader's core."""
    root.mapping(_TOP_KEYS)
    name = root.require("name").text()
    links = tuple(_link(node) for node in root.require("links").elements())
    joint_nodes = root.at("joints").elements() if root.has("joints") else []
    joints = tuple(_joint(node, i) for i, node in enumerate(joint_nodes))
    base = root.at("base")
    mount = JointType.FIXED
    base_link: str | None = None
    if base.value is not None:
        base.mapping(("link", "mount"))
        mount_node = base.at("mount")
        if mount_node.value is not None:
            mount = _enum(mount_node, JointType)
            if mount not in BASE_MOUNTS:
                raise mount_node.fail(f"one of {[m.value for m in BASE_MOUNTS]}")
        if base.has("link"):
            base_link = base.at("link").text()
    if root.has("actuator_order"):
        order_node = root.at("actuator_order")
        actuator_order = tuple(n.text() for n in order_node.elements())
    else:
        actuator_order = tuple(j.name for j in joints if j.actuated)
    poses = _poses(root.at("poses"))
    parameters = parse_parameters(root.at("parameters"))
    sensors = (
        tuple(_sensor(n) for n in root.at("sensors").elements()) if root.has("sensors") else ()
    )
    simulation = _simulation(root.at("simulation"))
    try:
        model = RobotModel(
            name=name,
            links=links,
            joints=joints,
            actuator_order=actuator_order,
            base_mount=mount,
            poses=poses,
            parameters=parameters,
            sensors=sensors,
            simulation=simulation,
        )
    except TreeError as exc:
        key = exc.section + (f"[{exc.index}]" if exc.index is not None else "")
        if exc.section == "joints" and exc.joint is not None:
            raise RobotFileError(
                root.source,
                key,
                exc.joint,
                f"a valid tree: {exc.problem}",
                joint=exc.joint,
                index=exc.index,
            ) from exc
        raise RobotFileError(root.source, key, exc.joint, f"a valid tree: {exc}") from exc
    except UnknownJointError as exc:
        raise RobotFileError(
            root.source, "poses", exc.name, f"a joint of the robot: {exc}"
        ) from exc
    except ModelError as exc:
        raise RobotFileError(root.source, "", name, f"a valid robot: {exc}") from exc
    if base_link is not None and base_link != model.root:
        raise base.at("link").fail(f"the root link of the tree, {model.root!r}")
    return model


# --- sections --------------------------------------------------------------------------------
def _built(node: FileNode, build: Any, *args: Any, **kwargs: Any) -> Any:
    """Call ``build``; a ValueError from a constructor becomes a RobotFileError at ``node``
    (at ``node``'s key ``field`` with the refused value, when the constructor named them)."""
    try:
        return build(*args, **kwargs)
    except DefinitionError as exc:
        if isinstance(node.value, Mapping) and exc.field in node.value:
            raise node.fail_at(node.at(exc.field).key, exc.value, exc.expected) from exc
        raise node.fail_at(node.key, exc.value, f"{exc.field} {exc.expected}") from exc
    except (ValueError, TypeError) as exc:
        raise node.fail(str(exc)) from exc


def _enum(node: FileNode, enum_type: type[JointType]) -> JointType:
    try:
        return enum_type(node.value)
    except ValueError:
        raise node.fail(f"one of {[e.value for e in enum_type]}") from None


def _link(node: FileNode) -> Link:
    node.mapping(_LINK_KEYS)
    name = node.require("name").text()
    mass = node.at("mass").number_or(0.0)
    inertia = _inertia(node.at("inertia"))
    com = node.at("com").transform()
    collisions: tuple[Collision, ...] = ()
    if node.has("collisions"):
        collisions = tuple(_collision(c) for c in node.at("collisions").elements())
    link: Link = _built(node, Link, name, mass, inertia, com, collisions)
    return link


def _inertia(node: FileNode) -> Inertia:
    if node.value is None:
        return Inertia()
    keys = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")
    node.mapping(keys)
    values = {k: node.at(k).number_or(0.0) for k in keys}
    inertia: Inertia = _built(node, Inertia, **values)
    return inertia


def _collision(node: FileNode) -> Collision:
    mapping = node.mapping(("shape", "size", "radius", "length", "origin"))
    shape_node = node.require("shape")
    kind = shape_node.text()
    shape: Shape
    allowed: tuple[str, ...]
    if kind == "box":
        allowed = ("size",)
        shape = _built(node, Box, node.require("size").vec3())
    elif kind == "sphere":
        allowed = ("radius",)
        shape = _built(node, Sphere, node.require("radius").number())
    elif kind in ("cylinder", "capsule"):
        allowed = ("radius", "length")
        cls = Cylinder if kind == "cylinder" else Capsule
        shape = _built(node, cls, node.require("radius").number(), node.require("length").number())
    else:
        raise shape_node.fail("one of 'box', 'sphere', 'cylinder', 'capsule'")
    for key in mapping:
        if key not in (*allowed, "shape", "origin"):
            raise node.at(key).fail(f"no {key!r} on a {kind} (its keys: {allowed})")
    return Collision(shape, node.at("origin").transform())


def _joint(entry: FileNode, index: int) -> Joint:
    """Joint ``index`` of the file; every error about it names the joint (name and index)."""
    given = entry.value.get("name") if isinstance(entry.value, Mapping) else None
    node = entry.of_joint(given if isinstance(given, str) and given else None, index)
    node.mapping(_JOINT_KEYS)
    name = node.require("name").text()
    jtype = _enum(node.require("type"), JointType)
    parent = node.require("parent").text()
    child = node.require("child").text()
    origin = node.at("origin").transform()
    axis = node.at("axis").vec3() if node.has("axis") else Vec3(1.0, 0.0, 0.0)
    moving_axis = (JointType.REVOLUTE, JointType.CONTINUOUS, JointType.PRISMATIC, JointType.PLANAR)
    if jtype in moving_axis and axis.norm() < 1e-9:
        raise node.at("axis").fail("a non-zero axis vector")
    limits = _limits(node.at("limits"), jtype)
    calibration = _calibration(node.at("calibration"))
    dynamics = _dynamics(node.at("dynamics"))
    actuated = node.at("actuated").boolean_or(jtype is not JointType.FIXED)
    actuator = _actuator(node.at("actuator"))
    role = node.at("role").text_or("")
    joint: Joint = _built(
        node,
        Joint,
        name=name,
        type=jtype,
        parent=parent,
        child=child,
        origin=origin,
        axis=axis,
        limits=limits,
        calibration=calibration,
        actuated=actuated,
        dynamics=dynamics,
        actuator=actuator,
        role=role,
    )
    return joint


def _limits(node: FileNode, jtype: JointType) -> JointLimitSpec:
    if node.value is None:
        if jtype in (JointType.REVOLUTE, JointType.PRISMATIC):
            raise node.fail(f"limits with a position range for a {jtype.value} joint")
        return JointLimitSpec()
    node.mapping(("position", "velocity", "effort", "current", "soft"))
    lo, hi = -math.inf, math.inf
    if node.has("position"):
        lo, hi = node.at("position").floats(2, "a [min, max] pair of numbers")
        if lo > hi:
            raise node.at("position").fail("[min, max] with min ≤ max")
    elif jtype in (JointType.REVOLUTE, JointType.PRISMATIC):
        raise node.at("position").fail(f"a [min, max] range for a {jtype.value} joint")
    soft = None
    soft_node = node.at("soft")
    if soft_node.value is not None:
        soft_node.mapping(("lower", "upper", "k_position", "k_velocity"))
        soft = _built(
            soft_node,
            SoftLimits,
            soft_node.require("lower").number(),
            soft_node.require("upper").number(),
            soft_node.require("k_position").number(),
            soft_node.require("k_velocity").number(),
        )
    magnitudes = {}
    for key in ("velocity", "effort", "current"):
        value = node.at(key).number_or(math.inf, finite=False)
        if value < 0:
            raise node.at(key).fail("a magnitude ≥ 0")
        magnitudes[key] = value
    spec: JointLimitSpec = _built(
        node,
        JointLimitSpec,
        position_min=lo,
        position_max=hi,
        velocity_max=magnitudes["velocity"],
        effort_max=magnitudes["effort"],
        current_max=magnitudes["current"],
        soft=soft,
    )
    return spec


def _calibration(node: FileNode) -> JointCalibration:
    if node.value is None:
        return JointCalibration()
    node.mapping(("direction", "offset"))
    direction_node = node.at("direction")
    direction = 1 if direction_node.value is None else direction_node.integer()
    if direction not in (1, -1):
        raise direction_node.fail("+1 or -1")
    calibration: JointCalibration = _built(
        node, JointCalibration, direction, node.at("offset").number_or(0.0)
    )
    return calibration


def _dynamics(node: FileNode) -> JointDynamics:
    if node.value is None:
        return JointDynamics()
    node.mapping(("armature", "damping", "friction"))
    dynamics: JointDynamics = _built(
        node,
        JointDynamics,
        node.at("armature").number_or(0.0),
        node.at("damping").number_or(0.0),
        node.at("friction").number_or(0.0),
    )
    return dynamics


def _actuator(node: FileNode) -> ActuatorGeometry | None:
    if node.value is None:
        return None
    node.mapping(("length", "rest_orientation", "home", "centre", "config_speed", "has_brakes"))
    rest = (0.0, 0.0, 0.0)
    if node.has("rest_orientation"):
        r, p, y = node.at("rest_orientation").floats(3, "[roll, pitch, yaw] in rad")
        rest = (r, p, y)
    geometry: ActuatorGeometry = _built(
        node,
        ActuatorGeometry,
        length=node.require("length").number(),
        rest_orientation=rest,
        home=node.at("home").number_or(0.0),
        centre=node.at("centre").number_or(0.0),
        config_speed=node.at("config_speed").number_or(0.0),
        has_brakes=node.at("has_brakes").boolean_or(False),
    )
    return geometry


def _poses(node: FileNode) -> dict[str, dict[str, float]]:
    poses: dict[str, dict[str, float]] = {}
    if node.value is None:
        return poses
    for pose_name, pose_node in node.items():
        poses[pose_name] = {joint: value_node.number() for joint, value_node in pose_node.items()}
    return poses


def _sensor(node: FileNode) -> SensorMount:
    node.mapping(("name", "type", "link", "origin"))
    sensor: SensorMount = _built(
        node,
        SensorMount,
        node.require("name").text(),
        node.require("type").text(),
        node.require("link").text(),
        node.at("origin").transform(),
    )
    return sensor


def _simulation(node: FileNode) -> SimulationSpec:
    if node.value is None:
        return SimulationSpec()
    node.mapping(("position_noise", "velocity_noise", "effort_noise", "timestep"))
    spec: SimulationSpec = _built(
        node,
        SimulationSpec,
        node.at("position_noise").number_or(0.0),
        node.at("velocity_noise").number_or(0.0),
        node.at("effort_noise").number_or(0.0),
        node.at("timestep").number_or(0.002),
    )
    return spec


# --- YAML with duplicate-key detection ---------------------------------------------------------
class _DuplicateKeyError(yaml.YAMLError):
    def __init__(self, key: str, where: str) -> None:
        super().__init__(f"duplicate key {key!r} at {where}")
        self.key = key
        self.where = where


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a key that appears twice in one mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                mark = key_node.start_mark
                raise _DuplicateKeyError(
                    str(key), f"line {mark.line + 1}, column {mark.column + 1}"
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)
