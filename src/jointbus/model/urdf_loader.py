"""Load a :class:`~jointbus.model.robot.RobotModel` from URDF, parsed by ``yourdfpy``.

Where it sits: :mod:`jointbus.model`, beside :mod:`~jointbus.model.yaml_loader`; reads robots
described elsewhere (ROS packages) and the output of :mod:`~jointbus.model.urdf_writer`.

URDF has no actuator order, calibration, armature, current limits, poses, parameters or base
mount, so: the actuator order is ``actuator_order`` if given (moving joints left out of it are
passive, not actuated) or else every non-fixed joint in file order; calibration is the identity;
the base mount is the ``base_mount`` argument. ``<safety_controller>`` becomes soft limits and
``<dynamics>`` damping and friction. Mesh geometry cannot be represented by the model; it is an
error unless ``skip_meshes=True`` drops it. Mimic joints are not supported (an error).
Problems — XML, a missing attribute, a broken tree, a refused value — become
:class:`~jointbus.model.errors.RobotFileError` naming the file and the element; inside a joint,
the joint by name and index (file order), the attribute, the value and the rule, e.g.
``arm.urdf: joint[1].limit.effort of joint 'j_shoulder' (index 1) = -10.0; expected a magnitude
≥ 0``. Each joint's XML (type, ``<limit>`` and its attributes, numbers, vectors) is checked here
before yourdfpy parses it, because yourdfpy's own errors name no joint or attribute; anything
yourdfpy alone refuses is reported with its whole message.
"""

from __future__ import annotations

import io
import math
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import yourdfpy  # type: ignore[import-untyped]

from jointbus.math import Transform, Vec3
from jointbus.messages.errors import UnknownJointError
from jointbus.model.errors import DefinitionError, ModelError, RobotFileError, TreeError
from jointbus.model.joint import Joint, JointDynamics, JointType
from jointbus.model.limits import JointLimitSpec, SoftLimits
from jointbus.model.link import Box, Collision, Cylinder, Inertia, Link, Shape, Sphere
from jointbus.model.robot import RobotModel


def load_urdf(
    path: str | Path,
    *,
    actuator_order: tuple[str, ...] | list[str] | None = None,
    base_mount: JointType = JointType.FIXED,
    skip_meshes: bool = False,
) -> RobotModel:
    """A robot from the URDF file at ``path`` (see the module docstring for the defaults)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise RobotFileError(str(path), "", str(path), f"a readable URDF file ({exc}") from exc
    return loads_urdf(
        text,
        source=str(path),
        actuator_order=actuator_order,
        base_mount=base_mount,
        skip_meshes=skip_meshes,
    )


def loads_urdf(
    text: str,
    *,
    source: str = "<urdf>",
    actuator_order: tuple[str, ...] | list[str] | None = None,
    base_mount: JointType = JointType.FIXED,
    skip_meshes: bool = False,
) -> RobotModel:
    """A robot from URDF ``text``; ``source`` names it in error messages."""
    robot = _parse(text, source)
    links = tuple(
        _link(link, f"link {link.name!r} (index {i})", source, skip_meshes)
        for i, link in enumerate(robot.links)
    )
    joints = []
    for i, urdf_joint in enumerate(robot.joints):
        joints.append(_joint(urdf_joint, i, source))
    moving = [j.name for j in joints if j.type is not JointType.FIXED]
    order = tuple(actuator_order) if actuator_order is not None else tuple(moving)
    chosen = set(order)
    joints = [j if j.type is JointType.FIXED or j.name in chosen else _passive(j) for j in joints]
    try:
        return RobotModel(
            name=robot.name,
            links=links,
            joints=tuple(joints),
            actuator_order=order,
            base_mount=base_mount,
        )
    except TreeError as exc:
        if exc.section == "joints" and exc.joint is not None:
            raise RobotFileError(
                source,
                f"joint[{exc.index}]" if exc.index is not None else "joint",
                exc.joint,
                f"a valid tree: {exc.problem}",
                joint=exc.joint,
                index=exc.index,
            ) from exc
        raise RobotFileError(source, exc.section, exc.joint, f"a valid tree: {exc}") from exc
    except (ModelError, UnknownJointError) as exc:
        raise RobotFileError(source, "", robot.name, f"a valid robot: {exc}") from exc


def _passive(joint: Joint) -> Joint:
    return Joint(
        name=joint.name,
        type=joint.type,
        parent=joint.parent,
        child=joint.child,
        origin=joint.origin,
        axis=joint.axis,
        limits=joint.limits,
        calibration=joint.calibration,
        actuated=False,
        dynamics=joint.dynamics,
    )


def _parse(text: str, source: str) -> Any:
    # Well-formedness and the elements yourdfpy dereferences without checking are checked
    # here first: yourdfpy would otherwise "recover" broken XML or fail with an AttributeError.
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise RobotFileError(source, "", text[:60], f"well-formed XML ({exc})") from None
    if root.tag != "robot" or not root.get("name"):
        raise RobotFileError(source, root.tag, root.get("name"), "a <robot name=...> root element")
    for i, element in enumerate(root.findall("link")):
        if not element.get("name"):
            raise RobotFileError(source, f"link (index {i})", None, "a name attribute")
    for i, element in enumerate(root.findall("joint")):
        name = element.get("name") or None
        if name is None:
            raise RobotFileError(
                source, f"joint[{i}].name", None, "a name attribute", joint=None, index=i
            )
        for tag in ("parent", "child"):
            sub = element.find(tag)
            if sub is None or not sub.get("link"):
                raise RobotFileError(
                    source,
                    f"joint[{i}].{tag}",
                    None,
                    f"a <{tag} link=...> element",
                    joint=name,
                    index=i,
                )
        if element.find("mimic") is not None:
            raise RobotFileError(
                source, f"joint[{i}].mimic", "mimic", "no mimic joints", joint=name, index=i
            )
        _check_joint_attributes(element, source, i, name)
    try:
        urdf = yourdfpy.URDF.load(
            io.BytesIO(text.encode("utf-8")),
            build_scene_graph=False,
            build_collision_scene_graph=False,
            load_meshes=False,
            load_collision_meshes=False,
        )
    except Exception as exc:  # yourdfpy raises bare exceptions on bad attribute values
        raise RobotFileError(source, "", type(exc).__name__, f"a valid URDF ({exc})") from None
    if not urdf.validate(validation_fn=lambda errors: not errors):
        # The problems go in ``expected``, which is shown whole (``value`` is shortened).
        kinds = ", ".join(sorted({type(e).__name__ for e in urdf.errors}))
        problems = "; ".join(str(e) for e in urdf.errors)
        raise RobotFileError(source, "", kinds, f"a valid URDF ({problems})")
    return urdf.robot


#: The joint types the URDF format defines (``<joint type=...>``), in the spec's order.
_URDF_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
#: Joint types whose ``<limit>`` is required and must bound the position (lower and upper).
_BOUNDED_TYPES = ("revolute", "prismatic")
#: Number attributes of a joint's sub-elements, by element: limits in m or rad, m/s or rad/s,
#: N or N·m; damping in N·s/m or N·m·s/rad, friction in N or N·m; safety-controller gains.
_NUMBER_ATTRIBUTES = {
    "limit": ("lower", "upper", "effort", "velocity"),
    "dynamics": ("damping", "friction"),
    "safety_controller": ("soft_lower_limit", "soft_upper_limit", "k_position", "k_velocity"),
}
#: Attributes holding three numbers separated by spaces (m, rad, or a direction).
_VECTOR_ATTRIBUTES = {"origin": ("xyz", "rpy"), "axis": ("xyz",)}


def _check_joint_attributes(element: ET.Element, source: str, index: int, name: str) -> None:
    """Refuse what yourdfpy would refuse in joint ``index`` — a type outside the URDF types, a
    missing ``<limit>`` or limit attribute, text where a number belongs — naming the key, the
    joint, the value and the rule; yourdfpy's own messages name neither joint nor attribute
    (or fail with a bare ``ValueError``)."""
    key = f"joint[{index}]"

    def refuse(field: str, value: str | None, expected: str) -> RobotFileError:
        return RobotFileError(source, f"{key}.{field}", value, expected, joint=name, index=index)

    jtype = element.get("type")
    if jtype not in _URDF_JOINT_TYPES:
        raise refuse("type", jtype, f"one of {', '.join(_URDF_JOINT_TYPES)}")
    limit = element.find("limit")
    if limit is None and jtype in _BOUNDED_TYPES:
        raise refuse("limit", None, "a <limit> element (required on a revolute or prismatic joint)")
    if limit is not None:
        required = {"effort": "every <limit>", "velocity": "every <limit>"}
        if jtype in _BOUNDED_TYPES:
            rule = "the <limit> of a revolute or prismatic joint"
            required |= {"lower": rule, "upper": rule}
        for attribute, where in required.items():
            if limit.get(attribute) is None:
                raise refuse(f"limit.{attribute}", None, f"a number (required in {where})")
    for tag, attributes in _NUMBER_ATTRIBUTES.items():
        sub = element.find(tag)
        if sub is None:
            continue
        for attribute in attributes:
            text = sub.get(attribute)
            if text is not None and not _is_number(text):
                raise refuse(f"{tag}.{attribute}", text, "a number")
    for tag, attributes in _VECTOR_ATTRIBUTES.items():
        sub = element.find(tag)
        if sub is None:
            continue
        for attribute in attributes:
            text = sub.get(attribute)
            parts = text.split() if text is not None else []
            if text is not None and not (len(parts) == 3 and all(map(_is_number, parts))):
                raise refuse(f"{tag}.{attribute}", text, "three numbers")


def _is_number(text: str) -> bool:
    """Whether yourdfpy's ``float(text)`` accepts ``text`` (``"Infinity"`` included: unbounded
    limits are written that way; NaN is refused later, with the parsed value)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def _transform(
    matrix: Any, source: str, key: str, *, index: int | None = None, joint: str | None = None
) -> Transform:
    if matrix is None:
        return Transform.identity()
    try:
        return Transform.from_matrix(np.asarray(matrix, dtype=np.float64))
    except ValueError as exc:
        raise RobotFileError(
            source, key, None, f"a rigid transform ({exc})", joint=joint, index=index
        ) from None


def _float(
    value: Any,
    default: float,
    source: str,
    key: str,
    *,
    joint: str | None = None,
    index: int | None = None,
) -> float:
    if value is None:
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise RobotFileError(source, key, value, "a number", joint=joint, index=index) from None
    if math.isnan(number):
        raise RobotFileError(source, key, value, "a number", joint=joint, index=index)
    return number


def _link(link: Any, key: str, source: str, skip_meshes: bool) -> Link:
    mass = 0.0
    inertia = Inertia()
    com = Transform.identity()
    try:
        if link.inertial is not None:
            mass = _float(link.inertial.mass, 0.0, source, f"{key}.inertial.mass")
            com = _transform(link.inertial.origin, source, f"{key}.inertial.origin")
            if link.inertial.inertia is not None:
                m = np.asarray(link.inertial.inertia, dtype=np.float64)
                inertia = Inertia(
                    ixx=float(m[0, 0]),
                    iyy=float(m[1, 1]),
                    izz=float(m[2, 2]),
                    ixy=float(m[0, 1]),
                    ixz=float(m[0, 2]),
                    iyz=float(m[1, 2]),
                )
        collisions = []
        for i, collision in enumerate(link.collisions):
            shape = _shape(collision.geometry, source, f"{key}.collision[{i}]", skip_meshes)
            if shape is not None:
                origin = _transform(collision.origin, source, f"{key}.collision[{i}].origin")
                collisions.append(Collision(shape, origin))
        return Link(link.name, mass, inertia, com, tuple(collisions))
    except RobotFileError:
        raise
    except ValueError as exc:
        raise RobotFileError(source, key, link.name, str(exc)) from exc


def _shape(geometry: Any, source: str, key: str, skip_meshes: bool) -> Shape | None:
    if geometry is None:
        raise RobotFileError(source, key, None, "a <geometry> element")
    if geometry.box is not None:
        x, y, z = (float(v) for v in np.asarray(geometry.box.size).reshape(3))
        return Box(Vec3(x, y, z))
    if geometry.sphere is not None:
        return Sphere(float(geometry.sphere.radius))
    if geometry.cylinder is not None:
        return Cylinder(float(geometry.cylinder.radius), float(geometry.cylinder.length))
    if geometry.mesh is not None and skip_meshes:
        return None
    raise RobotFileError(
        source, key, "mesh", "box, sphere or cylinder (meshes need skip_meshes=True)"
    )


#: URDF attributes (under ``joint[i].``) of the fields a joint's or its limits' constructor refuses.
_URDF_FIELDS = {
    "position": "limit.lower/upper",
    "position_min": "limit.lower",
    "position_max": "limit.upper",
    "velocity_max": "limit.velocity",
    "effort_max": "limit.effort",
    "limits.position": "limit.lower/upper",
    "lower": "safety_controller.soft_lower_limit/soft_upper_limit",
    "k_position": "safety_controller.k_position",
    "k_velocity": "safety_controller.k_velocity",
    "damping": "dynamics.damping",
    "friction": "dynamics.friction",
}


def _joint(joint: Any, index: int, source: str) -> Joint:
    """Joint ``index`` (in file order) of the URDF; every error about it names the joint."""
    key = f"joint[{index}]"

    def number(value: Any, default: float, field: str) -> float:
        return _float(value, default, source, f"{key}.{field}", joint=joint.name, index=index)

    try:
        jtype = JointType(joint.type)
    except ValueError:
        raise RobotFileError(
            source,
            f"{key}.type",
            joint.type,
            f"one of {[t.value for t in JointType]}",
            joint=joint.name,
            index=index,
        ) from None
    origin = _transform(joint.origin, source, f"{key}.origin", joint=joint.name, index=index)
    ax = np.asarray(joint.axis if joint.axis is not None else (1.0, 0.0, 0.0), dtype=np.float64)
    if ax.shape != (3,) or not np.isfinite(ax).all():
        raise RobotFileError(
            source, f"{key}.axis", joint.axis, "three finite numbers", joint=joint.name, index=index
        )
    limit = joint.limit
    lo, hi, effort, velocity = -math.inf, math.inf, math.inf, math.inf
    if limit is not None:
        if jtype in (JointType.REVOLUTE, JointType.PRISMATIC):
            lo = number(limit.lower, -math.inf, "limit.lower")
            hi = number(limit.upper, math.inf, "limit.upper")
        effort = number(limit.effort, math.inf, "limit.effort")
        velocity = number(limit.velocity, math.inf, "limit.velocity")
    soft_values: tuple[float, float, float, float] | None = None
    sc = joint.safety_controller
    if sc is not None and sc.soft_lower_limit is not None and sc.soft_upper_limit is not None:
        soft_values = (
            number(sc.soft_lower_limit, 0.0, "safety_controller.soft_lower_limit"),
            number(sc.soft_upper_limit, 0.0, "safety_controller.soft_upper_limit"),
            number(sc.k_position, 0.0, "safety_controller.k_position"),
            number(sc.k_velocity, 0.0, "safety_controller.k_velocity"),
        )
    damping_friction = (0.0, 0.0)
    if joint.dynamics is not None:
        damping_friction = (
            number(joint.dynamics.damping, 0.0, "dynamics.damping"),
            number(joint.dynamics.friction, 0.0, "dynamics.friction"),
        )
    try:
        soft = SoftLimits(*soft_values) if soft_values is not None else None
        dynamics = JointDynamics(damping=damping_friction[0], friction=damping_friction[1])
        return Joint(
            name=joint.name,
            type=jtype,
            parent=joint.parent,
            child=joint.child,
            origin=origin,
            axis=Vec3(float(ax[0]), float(ax[1]), float(ax[2])),
            limits=JointLimitSpec(
                position_min=lo,
                position_max=hi,
                velocity_max=velocity,
                effort_max=effort,
                soft=soft,
            ),
            actuated=jtype is not JointType.FIXED,
            dynamics=dynamics,
        )
    except DefinitionError as exc:
        field = _URDF_FIELDS.get(exc.field, exc.field)
        raise RobotFileError(
            source, f"{key}.{field}", exc.value, exc.expected, joint=joint.name, index=index
        ) from exc
    except ValueError as exc:
        raise RobotFileError(
            source, key, joint.name, str(exc), joint=joint.name, index=index
        ) from exc
