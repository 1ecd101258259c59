"""Tests of the MJCF generator: the MuJoCo model says what the robot description says.

Every figure a simulation depends on (masses, centres of mass, inertias, joint frames, axes,
limits, drive dynamics, collision shapes, contact set-up, IMU site and sensors) is read back from
the *compiled* MuJoCo model and compared with the :class:`RobotModel` it was generated from.
"""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointbus.drivers.errors import DriverError
from jointbus.drivers.sim.mjcf import (
    DEFAULT_FOOT_SOLREF,
    FLOOR_NAME,
    MjcfError,
    foot_links,
    geom_name,
    imu_sensor_names,
    mjcf_from_model,
)
from jointbus.math import Quaternion, Transform, Vec3
from jointbus.model.joint import Joint, JointDynamics, JointType
from jointbus.model.limits import JointLimitSpec
from jointbus.model.link import Box, Capsule, Collision, Cylinder, Inertia, Link, Sphere
from jointbus.model.robot import RobotModel
from jointbus.model.yaml_loader import load_robot

HB50 = load_robot("hb50")
LEGS = ("fr", "fl", "rl", "rr")
OBJ = mujoco.mjtObj


def _compile(model: RobotModel, **kwargs: object) -> mujoco.MjModel:
    return mujoco.MjModel.from_xml_string(mjcf_from_model(model, **kwargs))  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def hb50() -> mujoco.MjModel:
    return _compile(HB50)


def _id(m: mujoco.MjModel, kind: mujoco.mjtObj, name: str) -> int:
    i = int(mujoco.mj_name2id(m, kind, name))
    assert i >= 0, f"{name!r} missing from the MuJoCo model"
    return i


# ------------------------------------------------------------------ the HB50 model


def test_hb50_compiles_with_a_free_base_and_twelve_motors_in_actuator_order(
    hb50: mujoco.MjModel,
) -> None:
    assert hb50.nq == 7 + 12
    assert hb50.nv == 6 + 12
    assert hb50.nu == 12
    names = [mujoco.mj_id2name(hb50, OBJ.mjOBJ_ACTUATOR, i) for i in range(hb50.nu)]
    assert tuple(names) == HB50.actuator_order
    for i, joint_name in enumerate(HB50.actuator_order):
        assert hb50.actuator_trnid[i, 0] == _id(hb50, OBJ.mjOBJ_JOINT, joint_name)
        np.testing.assert_array_equal(hb50.actuator_ctrlrange[i], (-24.0, 24.0))
        assert hb50.actuator_gear[i, 0] == 1.0
    free = _id(hb50, OBJ.mjOBJ_JOINT, "body_free")
    assert hb50.jnt_type[free] == mujoco.mjtJoint.mjJNT_FREE
    assert hb50.jnt_bodyid[free] == _id(hb50, OBJ.mjOBJ_BODY, HB50.root)


def test_masses_centres_of_mass_and_inertias_match_the_robot_model(
    hb50: mujoco.MjModel,
) -> None:
    for link in HB50.links:
        body = _id(hb50, OBJ.mjOBJ_BODY, link.name)
        assert hb50.body_mass[body] == pytest.approx(link.mass, abs=1e-12), link.name
        if link.mass == 0.0:
            continue
        t = link.com.translation
        np.testing.assert_allclose(hb50.body_ipos[body], (t.x, t.y, t.z), atol=1e-12)
        i = link.inertia
        tensor = np.array(
            ((i.ixx, i.ixy, i.ixz), (i.ixy, i.iyy, i.iyz), (i.ixz, i.iyz, i.izz))
        )
        rotation = np.zeros(9)
        mujoco.mju_quat2Mat(rotation, hb50.body_iquat[body])
        r = rotation.reshape(3, 3)
        rebuilt = r @ np.diag(hb50.body_inertia[body]) @ r.T
        np.testing.assert_allclose(rebuilt, tensor, atol=1e-12, err_msg=link.name)
    assert float(hb50.body_mass.sum()) == pytest.approx(HB50.total_mass(), abs=1e-9)
    assert HB50.total_mass() == pytest.approx(17.096)


def test_body_inertia_of_the_base_is_the_published_one(hb50: mujoco.MjModel) -> None:
    body = _id(hb50, OBJ.mjOBJ_BODY, "body")
    np.testing.assert_allclose(hb50.body_inertia[body], (0.03428, 0.05385, 0.07359), atol=1e-12)
    np.testing.assert_allclose(hb50.body_iquat[body], (1.0, 0.0, 0.0, 0.0), atol=1e-12)


def test_joint_frames_axes_limits_and_drive_dynamics_match(hb50: mujoco.MjModel) -> None:
    for joint in HB50.joints:
        body = _id(hb50, OBJ.mjOBJ_BODY, joint.child)
        parent = _id(hb50, OBJ.mjOBJ_BODY, joint.parent)
        assert hb50.body_parentid[body] == parent
        t, q = joint.origin.translation, joint.origin.rotation
        np.testing.assert_allclose(hb50.body_pos[body], (t.x, t.y, t.z), atol=1e-12)
        np.testing.assert_allclose(hb50.body_quat[body], (q.w, q.x, q.y, q.z), atol=1e-12)
        if joint.type is JointType.FIXED:
            assert hb50.body_jntnum[body] == 0, joint.name
            continue
        j = _id(hb50, OBJ.mjOBJ_JOINT, joint.name)
        assert hb50.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE
        assert hb50.jnt_bodyid[j] == body
        np.testing.assert_allclose(hb50.jnt_axis[j], tuple(joint.axis), atol=1e-12)
        assert hb50.jnt_limited[j]
        np.testing.assert_allclose(
            hb50.jnt_range[j], (joint.limits.position_min, joint.limits.position_max)
        )
        dof = hb50.jnt_dofadr[j]
        assert hb50.dof_armature[dof] == pytest.approx(0.0094)
        assert hb50.dof_damping[dof] == pytest.approx(0.1)
        assert hb50.dof_frictionloss[dof] == pytest.approx(0.48)


def test_collision_shapes_are_the_model_shapes_in_mujoco_sizes(hb50: mujoco.MjModel) -> None:
    box = _id(hb50, OBJ.mjOBJ_GEOM, geom_name("body", 0))
    assert hb50.geom_type[box] == mujoco.mjtGeom.mjGEOM_BOX
    np.testing.assert_allclose(hb50.geom_size[box], (0.098, 0.076, 0.062))
    for leg in LEGS:
        foot = _id(hb50, OBJ.mjOBJ_GEOM, geom_name(f"{leg}_foot", 0))
        assert hb50.geom_type[foot] == mujoco.mjtGeom.mjGEOM_SPHERE
        assert hb50.geom_size[foot, 0] == pytest.approx(0.021)
        shank = _id(hb50, OBJ.mjOBJ_GEOM, geom_name(f"{leg}_shank", 0))
        assert hb50.geom_type[shank] == mujoco.mjtGeom.mjGEOM_CAPSULE
        np.testing.assert_allclose(hb50.geom_size[shank, :2], (0.015, 0.08))
        np.testing.assert_allclose(hb50.geom_pos[shank], (-0.11, 0.0, 0.0), atol=1e-12)


def test_feet_are_found_in_leg_order_and_decide_their_contacts(hb50: mujoco.MjModel) -> None:
    assert foot_links(HB50) == tuple(f"{leg}_foot" for leg in LEGS)
    floor = _id(hb50, OBJ.mjOBJ_GEOM, FLOOR_NAME)
    for leg in LEGS:
        foot = _id(hb50, OBJ.mjOBJ_GEOM, geom_name(f"{leg}_foot", 0))
        assert hb50.geom_priority[foot] > hb50.geom_priority[floor]
        np.testing.assert_allclose(hb50.geom_friction[foot], (1.0, 0.005, 0.0001))
        np.testing.assert_allclose(hb50.geom_solref[foot], DEFAULT_FOOT_SOLREF)
    slippery = _compile(HB50, foot_friction=(0.3, 0.001, 0.0))
    foot = _id(slippery, OBJ.mjOBJ_GEOM, geom_name("rl_foot", 0))
    np.testing.assert_allclose(slippery.geom_friction[foot], (0.3, 0.001, 0.0))


def test_robot_geoms_collide_with_the_floor_only_unless_asked(hb50: mujoco.MjModel) -> None:
    floor = _id(hb50, OBJ.mjOBJ_GEOM, FLOOR_NAME)

    def collide(m: mujoco.MjModel, a: int, b: int) -> bool:
        return bool(
            (m.geom_contype[a] & m.geom_conaffinity[b])
            or (m.geom_contype[b] & m.geom_conaffinity[a])
        )

    body = _id(hb50, OBJ.mjOBJ_GEOM, geom_name("body", 0))
    thigh = _id(hb50, OBJ.mjOBJ_GEOM, geom_name("fr_thigh", 0))
    assert collide(hb50, body, floor)
    assert collide(hb50, thigh, floor)
    assert not collide(hb50, body, thigh)
    both = _compile(HB50, self_collision=True)
    assert collide(both, body, thigh)
    no_floor = _compile(HB50, floor=False)
    assert mujoco.mj_name2id(no_floor, OBJ.mjOBJ_GEOM, FLOOR_NAME) == -1


def test_imu_site_and_its_three_sensors(hb50: mujoco.MjModel) -> None:
    site = _id(hb50, OBJ.mjOBJ_SITE, "imu")
    assert hb50.site_bodyid[site] == _id(hb50, OBJ.mjOBJ_BODY, "body")
    np.testing.assert_allclose(hb50.site_pos[site], (0.0693, 0.0, 0.0))
    expected = (
        mujoco.mjtSensor.mjSENS_FRAMEQUAT,
        mujoco.mjtSensor.mjSENS_GYRO,
        mujoco.mjtSensor.mjSENS_ACCELEROMETER,
    )
    for sensor_name, kind in zip(imu_sensor_names("imu"), expected, strict=True):
        s = _id(hb50, OBJ.mjOBJ_SENSOR, sensor_name)
        assert hb50.sensor_type[s] == kind
        assert hb50.sensor_objtype[s] == OBJ.mjOBJ_SITE
        assert hb50.sensor_objid[s] == site


def test_timestep_gravity_and_integrator(hb50: mujoco.MjModel) -> None:
    assert hb50.opt.timestep == 0.002
    np.testing.assert_allclose(hb50.opt.gravity, (0.0, 0.0, -9.81))
    assert hb50.opt.integrator == mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    fine = _compile(HB50, timestep=0.0005)
    assert fine.opt.timestep == 0.0005


def test_home_keyframe_places_the_joints_at_the_home_pose(hb50: mujoco.MjModel) -> None:
    key = _id(hb50, OBJ.mjOBJ_KEY, "home")
    home = HB50.pose("home")
    for name, value in home.items():
        j = _id(hb50, OBJ.mjOBJ_JOINT, name)
        assert hb50.key_qpos[key, hb50.jnt_qposadr[j]] == pytest.approx(value)
    data = mujoco.MjData(hb50)
    mujoco.mj_resetDataKeyframe(hb50, data, key)
    mujoco.mj_kinematics(hb50, data)
    # Standing pose: every foot below the base, under its own side of the body.
    base = data.xpos[_id(hb50, OBJ.mjOBJ_BODY, "body")]
    for leg in LEGS:
        foot = data.xpos[_id(hb50, OBJ.mjOBJ_BODY, f"{leg}_foot")]
        assert foot[2] < base[2] - 0.3
        assert np.sign(foot[1]) == (1.0 if leg[1] == "l" else -1.0)
        assert np.sign(foot[0]) == (1.0 if leg[0] == "f" else -1.0)


# ------------------------------------------------------------------ other robots, edge cases


def _link(name: str, mass: float = 1.0, **kwargs: object) -> Link:
    inertia = Inertia(0.01, 0.01, 0.01) if mass > 0.0 else Inertia()
    return Link(name, mass, inertia, **kwargs)  # type: ignore[arg-type]


def _joint(name: str, jtype: JointType, parent: str, child: str, **kwargs: object) -> Joint:
    limits = JointLimitSpec(-1.0, 1.0, effort_max=5.0)
    if jtype in (JointType.CONTINUOUS, JointType.PLANAR, JointType.FLOATING, JointType.FIXED):
        limits = JointLimitSpec()
    return Joint(
        name,
        jtype,
        parent,
        child,
        origin=Transform(Vec3(0.0, 0.0, 0.1), Quaternion.identity()),
        axis=Vec3(0.0, 0.0, 1.0),
        limits=limits,
        actuated=jtype is not JointType.FIXED and jtype is not JointType.PLANAR,
        **kwargs,  # type: ignore[arg-type]
    )


def _chain(*types: JointType, mount: JointType = JointType.FIXED) -> RobotModel:
    links = [_link("l0")] + [_link(f"l{i + 1}") for i in range(len(types))]
    joints = [_joint(f"j{i}", t, f"l{i}", f"l{i + 1}") for i, t in enumerate(types)]
    order = tuple(j.name for j in joints if j.actuated)
    return RobotModel("chain", tuple(links), tuple(joints), order, base_mount=mount)


def test_fixed_base_arm_with_every_single_dof_joint_type() -> None:
    robot = _chain(JointType.REVOLUTE, JointType.CONTINUOUS, JointType.PRISMATIC, JointType.FIXED)
    m = _compile(robot, floor=False)
    assert m.nq == 3
    assert m.nu == 3
    j0, j1, j2 = (_id(m, OBJ.mjOBJ_JOINT, f"j{i}") for i in range(3))
    assert m.jnt_type[j0] == mujoco.mjtJoint.mjJNT_HINGE
    assert m.jnt_limited[j0]
    assert m.jnt_type[j1] == mujoco.mjtJoint.mjJNT_HINGE
    assert not m.jnt_limited[j1]  # continuous: no position limits
    assert m.jnt_type[j2] == mujoco.mjtJoint.mjJNT_SLIDE
    assert m.body_jntnum[_id(m, OBJ.mjOBJ_BODY, "l4")] == 0  # fixed: welded
    assert m.body_jntnum[_id(m, OBJ.mjOBJ_BODY, "l0")] == 0  # fixed base
    assert "keyframe" not in mjcf_from_model(robot)


def test_planar_joint_and_planar_base_become_two_slides_and_a_hinge() -> None:
    robot = _chain(JointType.PLANAR, JointType.REVOLUTE, mount=JointType.PLANAR)
    m = _compile(robot)
    assert m.nq == 3 + 3 + 1
    kinds = [int(m.jnt_type[_id(m, OBJ.mjOBJ_JOINT, f"j0{s}")]) for s in ("_x", "_y", "_yaw")]
    assert kinds == [mujoco.mjtJoint.mjJNT_SLIDE] * 2 + [mujoco.mjtJoint.mjJNT_HINGE]
    axes = np.array([m.jnt_axis[_id(m, OBJ.mjOBJ_JOINT, f"j0{s}")] for s in ("_x", "_y", "_yaw")])
    np.testing.assert_allclose(axes @ axes.T, np.eye(3), atol=1e-12)  # orthonormal
    np.testing.assert_allclose(axes[2], (0.0, 0.0, 1.0))  # the hinge is about the normal


def test_floating_joint_below_the_root_is_refused() -> None:
    robot = _chain(JointType.REVOLUTE, JointType.FLOATING)
    with pytest.raises(MjcfError) as info:
        mjcf_from_model(robot)
    assert "j1" in str(info.value)
    assert info.value.field == "type"


def test_actuated_multi_dof_joint_is_refused_naming_the_joint() -> None:
    links = (_link("l0"), _link("l1"))
    joint = Joint("slider", JointType.PLANAR, "l0", "l1", axis=Vec3(0.0, 0.0, 1.0))
    robot = RobotModel("planar", links, (joint,), ("slider",))
    with pytest.raises(MjcfError, match="'slider' \\(index 0\\)"):
        mjcf_from_model(robot)


def test_massless_link_is_a_body_without_mass_and_geoms_add_none() -> None:
    links = (
        _link("l0", collisions=(Collision(Box(Vec3(1.0, 1.0, 1.0))),)),
        _link("tip", 0.0, collisions=(Collision(Sphere(0.5)),)),
    )
    joints = (_joint("weld", JointType.FIXED, "l0", "tip"),)
    m = _compile(RobotModel("r", links, joints, ()))
    assert m.body_mass[_id(m, OBJ.mjOBJ_BODY, "l0")] == 1.0  # not 1000 kg of water
    assert m.body_mass[_id(m, OBJ.mjOBJ_BODY, "tip")] == 0.0


def test_cylinder_and_capsule_use_half_lengths() -> None:
    links = (
        _link(
            "l0",
            collisions=(Collision(Cylinder(0.1, 0.4)), Collision(Capsule(0.05, 0.3))),
        ),
    )
    m = _compile(RobotModel("r", links, (), ()))
    cylinder = _id(m, OBJ.mjOBJ_GEOM, geom_name("l0", 0))
    capsule = _id(m, OBJ.mjOBJ_GEOM, geom_name("l0", 1))
    np.testing.assert_allclose(m.geom_size[cylinder, :2], (0.1, 0.2))
    np.testing.assert_allclose(m.geom_size[capsule, :2], (0.05, 0.15))


_moment = st.floats(0.001, 1.0)
_angle = st.floats(-math.pi, math.pi)


@settings(max_examples=30)
@given(
    a=_moment,
    b=_moment,
    c=_moment,
    roll=_angle,
    pitch=_angle,
    yaw=_angle,
    product=st.floats(-0.3, 0.3),
)
def test_any_inertia_and_com_orientation_reach_mujoco_unchanged(
    a: float, b: float, c: float, roll: float, pitch: float, yaw: float, product: float
) -> None:
    # A physical tensor: principal moments obeying the triangle inequality, plus a product term
    # kept small enough to stay positive definite.
    a, b = a + c, b + c
    ixy = product * min(a, b)
    inertia = Inertia(a, b, a + b - c * 0.5, ixy, 0.0, 0.0)
    rotation = Quaternion.from_rpy(roll, pitch, yaw)
    com = Transform(Vec3(0.01, -0.02, 0.03), rotation)
    robot = RobotModel("r", (Link("l0", 2.5, inertia, com),), (), ())
    m = _compile(robot)
    tensor = np.array(((a, ixy, 0.0), (ixy, b, 0.0), (0.0, 0.0, inertia.izz)))
    r = rotation.to_matrix()
    expected = r @ tensor @ r.T  # the tensor in the link frame
    out = np.zeros(9)
    mujoco.mju_quat2Mat(out, m.body_iquat[0 + 1])
    q = out.reshape(3, 3)
    rebuilt = q @ np.diag(m.body_inertia[1]) @ q.T
    np.testing.assert_allclose(rebuilt, expected, atol=1e-9 * float(np.trace(expected)))
    assert m.body_mass[1] == 2.5
    np.testing.assert_allclose(m.body_ipos[1], (0.01, -0.02, 0.03))


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"timestep": 0.0}, "timestep"),
        ({"timestep": math.nan}, "timestep"),
        ({"timestep": 0.02}, "timestep"),
        ({"foot_friction": (1.0, 0.0)}, "foot_friction"),
        ({"foot_friction": (-1.0, 0.0, 0.0)}, "foot_friction"),
        ({"floor_friction": (math.inf, 0.0, 0.0)}, "floor_friction"),
        ({"foot_solref": (0.0, 1.0)}, "foot_solref"),
        ({"gravity": -9.81}, "base_height, gravity"),
        ({"base_height": math.nan}, "base_height, gravity"),
    ],
)
def test_bad_arguments_raise_a_typed_error_naming_the_field(
    kwargs: dict[str, object], field: str
) -> None:
    with pytest.raises(MjcfError) as info:
        mjcf_from_model(HB50, **kwargs)  # type: ignore[arg-type]
    assert info.value.field == field
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, DriverError)


def test_dynamics_left_at_zero_are_not_written() -> None:
    robot = _chain(JointType.REVOLUTE)
    text = mjcf_from_model(robot)
    assert "armature" not in text
    damped = RobotModel(
        "d",
        robot.links,
        (
            _joint(
                "j0", JointType.REVOLUTE, "l0", "l1", dynamics=JointDynamics(0.1, 0.2, 0.3)
            ),
        ),
        ("j0",),
    )
    m = _compile(damped)
    assert (m.dof_armature[0], m.dof_damping[0], m.dof_frictionloss[0]) == (0.1, 0.2, 0.3)
