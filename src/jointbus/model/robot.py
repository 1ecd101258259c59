"""The robot description: links, joints, actuator order, named poses, parameters, sensors.

Where it sits: :mod:`jointbus.model`, the layer above :mod:`jointbus.messages`; built by
:mod:`~jointbus.model.yaml_loader` or :mod:`~jointbus.model.urdf_loader`, read by kinematics, the
drivers, the bridge (which checks command names against :attr:`RobotModel.actuator_order`) and the
live view (which publishes :meth:`RobotModel.to_urdf`).

A :class:`RobotModel` is validated whole on construction — unique names, parents and children that
exist, exactly one root link, no cycles, an actuator order that names every actuated joint once,
poses inside the limits — so every later consumer can rely on a well-formed tree. Lookups of a
name that is not there raise :class:`~jointbus.messages.errors.UnknownJointError` (or
:class:`~jointbus.model.errors.UnknownLinkError`) carrying the missing name.

How the root link moves in the world is ``base_mount``: ``FIXED`` (an arm bolted to a table),
``FLOATING`` (a legged robot's body, whose pose comes from state estimation, not from a joint) or
``PLANAR``. A mobile base whose pose *is* reported as joint state (the rover) instead has an
explicit planar joint from a ``world`` root link, so that it appears in JointState next to its
other joints.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from jointbus.messages.errors import UnknownJointError
from jointbus.messages.joint_kind import JointKind
from jointbus.model.errors import DefinitionError, TreeError, UnknownLinkError
from jointbus.model.joint import Joint, JointType
from jointbus.model.limits import JointLimitSpec
from jointbus.model.link import Link
from jointbus.model.parameters import ParameterSpec
from jointbus.model.sensor_mount import SensorMount
from jointbus.model.simulation_spec import SimulationSpec

BASE_MOUNTS = (JointType.FIXED, JointType.FLOATING, JointType.PLANAR)
"""How a root link may be attached to the world."""

_POSE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class RobotModel:
    """An immutable, validated robot description (see the module docstring)."""

    name: str
    links: tuple[Link, ...]
    joints: tuple[Joint, ...]
    actuator_order: tuple[str, ...]
    base_mount: JointType = JointType.FIXED
    poses: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    parameters: tuple[ParameterSpec, ...] = ()
    sensors: tuple[SensorMount, ...] = ()
    simulation: SimulationSpec = field(default_factory=SimulationSpec)

    _joint_by_name: dict[str, Joint] = field(init=False, repr=False, compare=False)
    _link_by_name: dict[str, Link] = field(init=False, repr=False, compare=False)
    _parent_joint: dict[str, Joint] = field(init=False, repr=False, compare=False)
    _child_joints: dict[str, tuple[Joint, ...]] = field(init=False, repr=False, compare=False)
    _root: str = field(init=False, repr=False, compare=False)
    _tree_order: tuple[Joint, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for attr in ("links", "joints", "actuator_order", "parameters", "sensors"):
            value = getattr(self, attr)
            if not isinstance(value, tuple):
                object.__setattr__(self, attr, tuple(value))
        if not isinstance(self.name, str) or not self.name:
            raise DefinitionError("robot", "name", self.name, "a non-empty string")
        if self.base_mount not in BASE_MOUNTS:
            raise DefinitionError(
                f"robot {self.name!r}",
                "base_mount",
                self.base_mount,
                f"one of {[m.value for m in BASE_MOUNTS]}",
            )
        link_by_name = self._check_links()
        joint_by_name, parent_joint, child_joints = self._check_joints(link_by_name)
        root = self._find_root(link_by_name, parent_joint)
        tree_order = self._walk(root, link_by_name, child_joints)
        object.__setattr__(self, "_joint_by_name", joint_by_name)
        object.__setattr__(self, "_link_by_name", link_by_name)
        object.__setattr__(self, "_parent_joint", parent_joint)
        object.__setattr__(self, "_child_joints", child_joints)
        object.__setattr__(self, "_root", root)
        object.__setattr__(self, "_tree_order", tree_order)
        self._check_actuator_order()
        self._check_poses()
        self._check_named_extras()

    # --- validation -------------------------------------------------------------------------
    def _check_links(self) -> dict[str, Link]:
        if not self.links:
            raise TreeError("a robot needs at least one link", section="links")
        by_name: dict[str, Link] = {}
        for i, link in enumerate(self.links):
            if link.name in by_name:
                raise TreeError(f"link {link.name!r} (index {i}) is defined twice", section="links")
            by_name[link.name] = link
        return by_name

    def _check_joints(
        self, links: dict[str, Link]
    ) -> tuple[dict[str, Joint], dict[str, Joint], dict[str, tuple[Joint, ...]]]:
        by_name: dict[str, Joint] = {}
        parent_joint: dict[str, Joint] = {}
        children: dict[str, list[Joint]] = {name: [] for name in links}
        for i, joint in enumerate(self.joints):
            if joint.name in by_name:
                raise TreeError("the name is used by two joints", joint=joint.name, index=i)
            by_name[joint.name] = joint
            for role in ("parent", "child"):
                link_name = getattr(joint, role)
                if link_name not in links:
                    raise TreeError(
                        f"{role} link {link_name!r} is not a link of the robot",
                        joint=joint.name,
                        index=i,
                    )
            if joint.child in parent_joint:
                other = parent_joint[joint.child]
                raise TreeError(
                    f"link {joint.child!r} already has parent joint {other.name!r}; "
                    "a link has at most one parent (a tree, not a graph)",
                    joint=joint.name,
                    index=i,
                )
            parent_joint[joint.child] = joint
            children[joint.parent].append(joint)
        return by_name, parent_joint, {k: tuple(v) for k, v in children.items()}

    def _find_root(self, links: dict[str, Link], parent_joint: dict[str, Joint]) -> str:
        roots = [name for name in links if name not in parent_joint]
        if len(roots) != 1:
            detail = (
                "every link has a parent joint, so the joints form a cycle"
                if not roots
                else f"links {roots} have no parent joint; the joints must connect them"
            )
            raise TreeError(f"expected exactly one root link: {detail}")
        return roots[0]

    def _walk(
        self, root: str, links: dict[str, Link], children: dict[str, tuple[Joint, ...]]
    ) -> tuple[Joint, ...]:
        order: list[Joint] = []
        seen = {root}
        frontier = [root]
        while frontier:
            nxt: list[str] = []
            for link_name in frontier:
                for joint in children[link_name]:
                    order.append(joint)
                    seen.add(joint.child)
                    nxt.append(joint.child)
            frontier = nxt
        unreachable = [name for name in links if name not in seen]
        if unreachable:
            joint = next(j for j in self.joints if j.child in unreachable)
            raise TreeError(
                f"links {unreachable} cannot be reached from root {root!r}: "
                "the joints form a cycle",
                joint=joint.name,
                index=self.joints.index(joint),
            )
        return tuple(order)

    def _check_actuator_order(self) -> None:
        seen: set[str] = set()
        for i, name in enumerate(self.actuator_order):
            joint = self._joint_by_name.get(name)
            if joint is None:
                raise TreeError(
                    f"actuator_order[{i}] names no joint of the robot "
                    f"(joints: {', '.join(self._joint_by_name)})",
                    joint=name,
                    index=i,
                    section="actuator_order",
                )
            if name in seen:
                raise TreeError(
                    f"actuator_order[{i}] repeats the joint",
                    joint=name,
                    index=i,
                    section="actuator_order",
                )
            if not joint.actuated:
                raise TreeError(
                    f"actuator_order[{i}] names a joint that is not actuated",
                    joint=name,
                    index=i,
                    section="actuator_order",
                )
            seen.add(name)
        for i, joint in enumerate(self.joints):
            if joint.actuated and joint.name not in seen:
                raise TreeError(
                    "the joint is actuated but missing from actuator_order",
                    joint=joint.name,
                    index=i,
                    section="joints",
                )

    def _check_poses(self) -> None:
        frozen: dict[str, Mapping[str, float]] = {}
        for pose_name, values in self.poses.items():
            owner = f"pose {pose_name!r}"
            checked: dict[str, float] = {}
            for joint_name, value in values.items():
                joint = self._joint_by_name.get(joint_name)
                if joint is None:
                    raise UnknownJointError(joint_name, tuple(self._joint_by_name))
                if joint.type.dof != 1:
                    raise DefinitionError(
                        owner, joint_name, value, "a single-DoF joint (poses hold numbers only)"
                    )
                if isinstance(value, bool) or not isinstance(value, int | float):
                    raise DefinitionError(owner, joint_name, value, "a number (rad or m)")
                lo, hi = joint.limits.position_min, joint.limits.position_max
                if not (
                    math.isfinite(value) and lo - _POSE_TOLERANCE <= value <= hi + _POSE_TOLERANCE
                ):
                    raise DefinitionError(owner, joint_name, value, f"a position in [{lo}, {hi}]")
                checked[joint_name] = float(value)
            frozen[pose_name] = MappingProxyType(checked)
        object.__setattr__(self, "poses", MappingProxyType(frozen))

    def _check_named_extras(self) -> None:
        seen: set[str] = set()
        for spec in self.parameters:
            if spec.name in seen:
                raise DefinitionError("parameters", spec.name, spec.name, "a unique name")
            seen.add(spec.name)
        sensor_names: set[str] = set()
        for sensor in self.sensors:
            if sensor.link not in self._link_by_name:
                raise UnknownLinkError(sensor.link, tuple(self._link_by_name))
            if sensor.name in sensor_names:
                raise DefinitionError("sensors", sensor.name, sensor.name, "a unique name")
            sensor_names.add(sensor.name)

    # --- lookups ----------------------------------------------------------------------------
    @property
    def root(self) -> str:
        """Name of the root link (the base: ``body`` of a legged robot, ``world`` of the rover)."""
        return self._root

    @property
    def tree_order(self) -> tuple[Joint, ...]:
        """All joints, breadth-first from the root (each parent before its children)."""
        return self._tree_order

    def joint(self, name: str) -> Joint:
        """The joint called ``name`` (:class:`UnknownJointError` if there is none)."""
        try:
            return self._joint_by_name[name]
        except KeyError:
            raise UnknownJointError(name, tuple(self._joint_by_name)) from None

    def link(self, name: str) -> Link:
        """The link called ``name`` (:class:`UnknownLinkError` if there is none)."""
        try:
            return self._link_by_name[name]
        except KeyError:
            raise UnknownLinkError(name, tuple(self._link_by_name)) from None

    def has_joint(self, name: str) -> bool:
        """True if the robot has a joint called ``name``."""
        return name in self._joint_by_name

    def has_link(self, name: str) -> bool:
        """True if the robot has a link called ``name``."""
        return name in self._link_by_name

    def parent_joint(self, link: str) -> Joint | None:
        """The joint whose child is ``link`` (``None`` for the root)."""
        self.link(link)
        return self._parent_joint.get(link)

    def child_joints(self, link: str) -> tuple[Joint, ...]:
        """The joints whose parent is ``link``, in file order."""
        self.link(link)
        return self._child_joints[link]

    def chain(self, link: str) -> tuple[Joint, ...]:
        """The joints from the root down to ``link`` (empty for the root itself)."""
        self.link(link)
        out: list[Joint] = []
        current = link
        while (joint := self._parent_joint.get(current)) is not None:
            out.append(joint)
            current = joint.parent
        return tuple(reversed(out))

    def actuator_index(self, name: str) -> int:
        """Position of joint ``name`` in the actuator order (:class:`UnknownJointError`)."""
        try:
            return self.actuator_order.index(name)
        except ValueError:
            raise UnknownJointError(name, self.actuator_order) from None

    def actuated_joints(self) -> tuple[Joint, ...]:
        """The actuated joints in actuator order."""
        return tuple(self._joint_by_name[name] for name in self.actuator_order)

    def moving_joints(self) -> tuple[Joint, ...]:
        """Every non-fixed joint: the actuated ones in actuator order, then the rest in tree order.

        This is the joint order of :class:`~jointbus.model.kinematics.Kinematics` configurations.
        """
        actuated = self.actuated_joints()
        rest = tuple(j for j in self._tree_order if j.is_moving and not j.actuated)
        return actuated + rest

    def joint_kinds(self) -> Mapping[str, JointKind]:
        """``{name: kind}`` of every moving joint, in :meth:`moving_joints` order — what
        :meth:`jointbus.messages.joint_state.JointState.check_against` needs."""
        return {j.name: j.kind for j in self.moving_joints()}

    def limits_for(self, names: Iterable[str]) -> list[JointLimitSpec]:
        """The limits of the joints ``names``, in that order (:class:`UnknownJointError`)."""
        return [self.joint(name).limits for name in names]

    def pose(self, name: str) -> Mapping[str, float]:
        """Named pose ``name`` (e.g. ``"home"``): ``{joint: position}`` in rad or m."""
        try:
            return self.poses[name]
        except KeyError:
            raise DefinitionError(
                f"robot {self.name!r}", "poses", name, f"one of {sorted(self.poses)}"
            ) from None

    def parameter(self, name: str) -> ParameterSpec:
        """The parameter declaration called ``name``."""
        for spec in self.parameters:
            if spec.name == name:
                return spec
        raise DefinitionError(
            f"robot {self.name!r}",
            "parameters",
            name,
            f"one of {[s.name for s in self.parameters]}",
        )

    def sensor(self, name: str) -> SensorMount:
        """The sensor mount called ``name``."""
        for sensor in self.sensors:
            if sensor.name == name:
                return sensor
        raise DefinitionError(
            f"robot {self.name!r}", "sensors", name, f"one of {[s.name for s in self.sensors]}"
        )

    def total_mass(self) -> float:
        """Sum of the link masses (kg)."""
        return math.fsum(link.mass for link in self.links)

    def to_urdf(self) -> str:
        """This robot as URDF text (see :mod:`jointbus.model.urdf_writer` for what is kept)."""
        from jointbus.model.urdf_writer import to_urdf

        return to_urdf(self)
