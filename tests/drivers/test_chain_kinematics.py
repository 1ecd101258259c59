"""Forward kinematics from Player geometry: hand-computed poses of sim://arm6, and agreement with
the robot tree."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.drivers import ActuatorArrayConfig, ChainKinematics
from jointbus.math import Quaternion, Transform, Vec3
from jointbus.messages.actarray import ActuatorGeometry, ActuatorType, ArrayGeometry
from jointbus.messages.actarray.geometry import Orientation3D
from jointbus.messages.errors import LengthMismatchError, NonFiniteError
from jointbus.messages.geometry_msgs import Point, Vector3
from jointbus.model.joint import JointType
from jointbus.model.yaml_loader import load_robot

ARM6 = load_robot("arm6")
GEOMETRY = ActuatorArrayConfig.from_model(ARM6).geometry
FK = ChainKinematics(GEOMETRY, ARM6.actuator_order)
HALF_PI = math.pi / 2


def q(**joints: float) -> list[float]:
    return [joints.get(name, 0.0) for name in ARM6.actuator_order]


# Hand-computed from arm6.yaml: base 0.10 up, then links 0.08, 0.30, 0.25, 0.08, 0.06 and the
# flange 0.05, all along +z at rest; lift, elbow and wrist_pitch turn about +y, the rest about +z.
@pytest.mark.parametrize(
    ("config", "tip"),
    [
        (q(), (0.0, 0.0, 0.92)),
        # lift +90° about y: everything above the shoulder (0.74 m) points along +x
        (q(shoulder_lift=HALF_PI), (0.74, 0.0, 0.18)),
        # pan +90° about z first: the same arm points along +y
        (q(shoulder_pan=HALF_PI, shoulder_lift=HALF_PI), (0.0, 0.74, 0.18)),
        # elbow +90°: upper arm vertical to z = 0.48, then 0.44 m along +x
        (q(elbow=HALF_PI), (0.44, 0.0, 0.48)),
        # lift +90°, elbow −90°: upper arm along +x (0.30), forearm back up along +z
        (q(shoulder_lift=HALF_PI, elbow=-HALF_PI), (0.30, 0.0, 0.18 + 0.44)),
        # rolls do not move the tip of a straight arm
        (q(wrist_roll=1.0, flange_roll=-2.0, shoulder_pan=0.3), (0.0, 0.0, 0.92)),
        # wrist pitch −90°: last 0.11 m along −x
        (q(wrist_pitch=-HALF_PI), (-0.11, 0.0, 0.81)),
    ],
)
def test_arm6_hand_computed_tip_positions(
    config: list[float], tip: tuple[float, float, float]
) -> None:
    assert FK.tip(config).translation.to_numpy() == pytest.approx(tip, abs=1e-12)


def test_arm6_actuator_positions_and_tip_orientation() -> None:
    points = FK.points(q(shoulder_lift=HALF_PI))
    assert points[0] == pytest.approx([0.0, 0.0, 0.10])  # the base is the first actuator
    assert points[1] == pytest.approx([0.0, 0.0, 0.18])  # the lift joint does not move itself
    assert points[2] == pytest.approx([0.30, 0.0, 0.18], abs=1e-12)
    tip = FK.tip(q(shoulder_lift=HALF_PI, flange_roll=HALF_PI))
    expected = Quaternion.from_axis_angle(Vec3(0, 1, 0), HALF_PI) * Quaternion.from_axis_angle(
        Vec3(0, 0, 1), HALF_PI
    )
    assert tip.rotation.isclose(expected, 1e-12)


def _tree_tip(config: list[float]) -> Transform:
    """The flange pose computed independently from the robot tree (joint origins and axes)."""
    positions = dict(zip(ARM6.actuator_order, config, strict=True))
    pose = Transform.identity()
    for joint in ARM6.chain("tool0"):
        pose = pose @ joint.origin
        if joint.type is JointType.REVOLUTE:
            pose = pose @ Transform(
                Vec3.ZERO, Quaternion.from_axis_angle(joint.axis, positions[joint.name])
            )
    return pose


@given(st.lists(st.floats(-3.0, 3.0), min_size=6, max_size=6))
def test_geometry_agrees_with_the_robot_tree(config: list[float]) -> None:
    ours, tree = FK.tip(config), _tree_tip(config)
    assert ours.translation.isclose(tree.translation, 1e-9)
    assert ours.rotation.isclose(tree.rotation, 1e-9)


def test_linear_actuator_and_base_pose() -> None:
    actuators = (
        ActuatorGeometry(ActuatorType.LINEAR, 0.2, Orientation3D(), Vector3(0.0, 0.0, 2.0),
                         0.0, 0.25, 0.5, 0.0, 0.1),
        ActuatorGeometry(ActuatorType.ROTARY, 0.1, Orientation3D(yaw=HALF_PI),
                         Vector3(0.0, 0.0, 1.0), -1.0, 0.0, 1.0, 0.0, 1.0),
    )
    geometry = ArrayGeometry(
        actuators=actuators,
        base_position=Point(1.0, 2.0, 3.0),
        base_orientation=Orientation3D(yaw=math.pi),
    )
    fk = ChainKinematics(geometry)
    # base yaw 180°: x → −x, y → −y; slide 0.3 along (normalised) z, link 0.2 along x,
    # then the rotary joint turns 90° and its 0.1 link points along its rest direction (+y → −x)
    points = fk.points([0.3, HALF_PI])
    assert points[1] == pytest.approx([1.0 - 0.2, 2.0, 3.3])
    assert points[2] == pytest.approx([0.8 + 0.1, 2.0, 3.3], abs=1e-12)


def test_bad_positions_are_typed_errors() -> None:
    with pytest.raises(LengthMismatchError):
        FK.tip([0.0] * 5)
    with pytest.raises(NonFiniteError) as info:
        FK.tip(q(elbow=math.nan))
    assert (info.value.joint, info.value.index) == ("elbow", 2)
    assert np.isfinite(FK.matrices(q())).all()


ROTATED = """
name: twist
links: [{name: base}, {name: a}, {name: b}, {name: tip}]
joints:
  - name: j0
    type: revolute
    parent: base
    child: a
    origin: {xyz: [0.1, 0.0, 0.0], rpy: [0.0, 0.0, 1.5707963267948966]}
    axis: [0, 0, 1]
    limits: {position: [-3, 3], velocity: 1.0}
    # next joint 0.2 m along x of j0's (rotated) frame — the rest-aligned frame of actuator 0
    actuator: {length: 0.2}
  - name: j1
    type: revolute
    parent: a
    child: b
    origin: {xyz: [0.2, 0.0, 0.0], rpy: [1.5707963267948966, 0.0, 0.0]}
    axis: [0, 0, 1]
    limits: {position: [-3, 3], velocity: 1.0}
    # the tip is 0.1 m along z of j1's frame, i.e. along -y of actuator 0's frame
    actuator: {length: 0.1, rest_orientation: [0.0, 0.0, -1.5707963267948966]}
  - {name: tip_joint, type: fixed, parent: b, child: tip, origin: {xyz: [0.0, 0.0, 0.1]}}
"""


@given(st.floats(-3.0, 3.0), st.floats(-3.0, 3.0))
def test_axes_of_rotated_joint_frames_are_re_expressed(q0: float, q1: float) -> None:
    from jointbus.model.yaml_loader import loads_robot

    model = loads_robot(ROTATED)
    geometry = ActuatorArrayConfig.from_model(model).geometry
    axis = geometry.actuators[1].axis
    assert (axis.x, axis.y, axis.z) == pytest.approx((0.0, -1.0, 0.0))  # R_x(90°)·z
    positions = {"j0": q0, "j1": q1}
    tree = Transform.identity()
    for joint in model.chain("tip"):
        tree = tree @ joint.origin
        if joint.type is JointType.REVOLUTE:
            tree = tree @ Transform(
                Vec3.ZERO, Quaternion.from_axis_angle(joint.axis, positions[joint.name])
            )
    ours = ChainKinematics(geometry).tip([q0, q1])
    assert ours.translation.isclose(tree.translation, 1e-9)
