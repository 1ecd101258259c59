"""Forward kinematics against hand-computed poses, an independent URDF library and finite
differences (the Jacobian)."""

from __future__ import annotations

import io
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointbus.math import Quaternion, Transform, Transform2D, Vec3
from jointbus.messages.errors import UnknownJointError
from jointbus.model.errors import ConfigurationError, UnknownLinkError
from jointbus.model.joint import Joint, JointType
from jointbus.model.kinematics import JointValue, Kinematics
from jointbus.model.limits import JointLimitSpec
from jointbus.model.link import Link
from jointbus.model.robot import RobotModel
from jointbus.model.yaml_loader import load_robot

LEGS = ("fr", "fl", "rl", "rr")
HB50 = load_robot("hb50")
ARM6 = load_robot("arm6")
ROVER = load_robot("rover")
KIN = {m.name: Kinematics(m) for m in (HB50, ARM6, ROVER)}


def _vec(v: Vec3) -> np.ndarray:
    return np.array([v.x, v.y, v.z])


# --- hand-computed poses ------------------------------------------------------------------------
def test_hb50_zero_pose_stretches_every_leg_straight_back() -> None:
    kin = KIN["hb50"]
    q = kin.zero_q()
    # hip (±0.1405, ±0.064, 0) + j1 offset (±0.06, ±0.081, 0) + thigh and shank 0.44 along -x
    expected = {
        "fr": (0.1405 + 0.06 - 0.44, -0.145, 0.0),
        "fl": (0.1405 + 0.06 - 0.44, 0.145, 0.0),
        "rl": (-0.1405 - 0.06 - 0.44, 0.145, 0.0),
        "rr": (-0.1405 - 0.06 - 0.44, -0.145, 0.0),
    }
    for leg, xyz in expected.items():
        np.testing.assert_allclose(_vec(kin.fk(q, f"{leg}_foot").translation), xyz, atol=1e-12)


def test_hb50_hip_flexion_of_90_degrees_points_the_leg_straight_down() -> None:
    kin = KIN["hb50"]
    # a thigh swing "down" is +j1 on the right legs and -j1 on the left legs
    q = kin.q_array(
        {**dict.fromkeys(kin.joint_names, 0.0), "fr_j1": math.pi / 2, "fl_j1": -math.pi / 2}
    )
    np.testing.assert_allclose(
        _vec(kin.fk(q, "fr_foot").translation), (0.2005, -0.145, -0.44), atol=1e-12
    )
    np.testing.assert_allclose(
        _vec(kin.fk(q, "fl_foot").translation), (0.2005, 0.145, -0.44), atol=1e-12
    )
    # the knee at -90° (fr) folds the shank forward: foot 0.22 below and 0.22 ahead of j1
    q2 = kin.q_array(
        {**dict.fromkeys(kin.joint_names, 0.0), "fr_j1": math.pi / 2, "fr_j2": -math.pi / 2}
    )
    np.testing.assert_allclose(
        _vec(kin.fk(q2, "fr_foot").translation), (0.2005 + 0.22, -0.145, -0.22), atol=1e-12
    )


def test_hb50_abduction_turns_the_leg_about_the_hip_axis() -> None:
    kin = KIN["hb50"]
    q = kin.q_array(
        {**dict.fromkeys(kin.joint_names, 0.0), "fr_j1": math.pi / 2, "fr_j0": math.pi / 2}
    )
    # leg hanging straight down at y = -0.145 from the axis at y = -0.064, z = 0; a quarter turn
    # about +x takes (dy, dz) = (-0.081, -0.44) to (0.44, -0.081)
    np.testing.assert_allclose(
        _vec(kin.fk(q, "fr_foot").translation), (0.2005, -0.064 + 0.44, -0.081), atol=1e-12
    )


def test_hb50_standing_pose_matches_the_facts_mujoco_check() -> None:
    """Facts: feet ~0.33 m below the base, x ≈ +0.16 (front) / -0.24 (rear), |y| ≈ 0.145."""
    kin = KIN["hb50"]
    q = kin.q_from_pose("home")
    for leg in LEGS:
        p = kin.fk(q, f"{leg}_foot").translation
        assert p.x == pytest.approx(0.16 if leg[0] == "f" else -0.24, abs=0.03)
        assert abs(p.y) == pytest.approx(0.145, abs=0.03)
        assert p.y < 0 if leg[1] == "r" else p.y > 0
        assert -p.z == pytest.approx(0.33, abs=0.02)
    # the four feet form a rectangle: mirror symmetric left/right, same height
    feet = {leg: _vec(kin.fk(q, f"{leg}_foot").translation) for leg in LEGS}
    np.testing.assert_allclose(feet["fr"] * (1, -1, 1), feet["fl"], atol=1e-12)
    np.testing.assert_allclose(feet["rr"] * (1, -1, 1), feet["rl"], atol=1e-12)
    # the foot centre sits at stand_height minus the foot radius within 2.5 cm
    stand = HB50.parameter("stand_height").default
    assert -feet["fr"][2] + 0.021 == pytest.approx(stand, abs=0.025)


def test_hb50_standing_pose_by_hand() -> None:
    """fr at (0.05, 0.7, -1.4): the thigh turned 0.7 rad down from pointing back (-x), the
    shank a further 1.4 rad the same way (2.1 rad from -x, i.e. forward-down), then the leg
    plane turned 0.05 rad about +x."""
    kin = KIN["hb50"]
    # angles in the x-z plane, measured from +x towards +z: -x is pi, "down from -x" adds
    x = 0.22 * (math.cos(math.pi + 0.7) + math.cos(math.pi + 2.1))
    z = 0.22 * (math.sin(math.pi + 0.7) + math.sin(math.pi + 2.1))
    # in-plane point relative to the j0 axis: (dy, dz) = (-0.081, z); rotate by +0.05 about x
    dy = -0.081 * math.cos(0.05) - z * math.sin(0.05)
    dz = -0.081 * math.sin(0.05) + z * math.cos(0.05)
    expected = (0.2005 + x, -0.064 + dy, dz)
    q = kin.q_from_pose("home")
    np.testing.assert_allclose(_vec(kin.fk(q, "fr_foot").translation), expected, atol=1e-12)


def test_arm6_hand_computed_configurations() -> None:
    kin = KIN["arm6"]
    names = kin.joint_names

    def q(**values: float) -> np.ndarray:
        return kin.q_array({**dict.fromkeys(names, 0.0), **values})

    # zero: straight up, 0.10 + 0.08 + 0.30 + 0.25 + 0.08 + 0.06 + 0.05
    tool = kin.fk(q(), "tool0")
    np.testing.assert_allclose(_vec(tool.translation), (0, 0, 0.92), atol=1e-12)
    assert tool.rotation.isclose(Quaternion.identity())
    # shoulder lift +90° about +y lays the arm along +x at the shoulder height 0.18
    tool = kin.fk(q(shoulder_lift=math.pi / 2), "tool0")
    np.testing.assert_allclose(_vec(tool.translation), (0.74, 0, 0.18), atol=1e-12)
    # ... and panning +90° about z turns it onto +y
    tool = kin.fk(q(shoulder_pan=math.pi / 2, shoulder_lift=math.pi / 2), "tool0")
    np.testing.assert_allclose(_vec(tool.translation), (0, 0.74, 0.18), atol=1e-12)
    # elbow -90° brings the forearm back up: upper arm along +x, the rest vertical
    tool = kin.fk(q(shoulder_lift=math.pi / 2, elbow=-math.pi / 2), "tool0")
    np.testing.assert_allclose(_vec(tool.translation), (0.30, 0, 0.18 + 0.44), atol=1e-12)
    # wrist roll does not move a point on its axis but turns the tool frame
    tool = kin.fk(q(wrist_roll=0.3), "tool0")
    np.testing.assert_allclose(_vec(tool.translation), (0, 0, 0.92), atol=1e-12)
    assert tool.rotation.isclose(Quaternion.from_axis_angle(Vec3(0, 0, 1), 0.3))


def test_rover_planar_base_and_mast_the_seed_example() -> None:
    """Seed 000: names [base, mast], positions [Transform2D(12.4, -3.1, 1.57), 0.5]."""
    kin = KIN["rover"]
    assert kin.joint_names == ("base", "mast")
    assert (kin.nq, kin.nv) == (4, 4)
    q: dict[str, JointValue] = {"base": Transform2D(12.4, -3.1, 1.57), "mast": 0.5}
    camera = kin.fk(q, "camera")
    c, s = math.cos(1.57), math.sin(1.57)
    # the mast sits 0.1 m ahead of the base origin, 0.25 m up; the camera 0.8 m above it
    np.testing.assert_allclose(
        _vec(camera.translation), (12.4 + 0.1 * c, -3.1 + 0.1 * s, 1.05), atol=1e-12
    )
    assert camera.rotation.isclose(Quaternion.from_axis_angle(Vec3(0, 0, 1), 1.57 + 0.5))
    assert kin.fk(q, "base").isclose(Transform2D(12.4, -3.1, 1.57).to_transform())


def test_fk_all_agrees_with_fk_and_names_every_link() -> None:
    kin = KIN["hb50"]
    q = kin.q_from_pose("home")
    poses = kin.fk_all(q)
    assert set(poses) == {link.name for link in HB50.links}
    assert poses["body"].isclose(Transform.identity())
    for name in ("fr_foot", "rl_thigh"):
        assert poses[name].isclose(kin.fk(q, name))


# --- an independent oracle: yourdfpy's own forward kinematics of our URDF ------------------------
def yourdfpy() -> Any:
    """The URDF library, imported when the test runs, not when the suite is collected: it
    imports trimesh and scipy (~0.8 s of CPU), and `make test` collects the suite five times."""
    import yourdfpy  # type: ignore[import-untyped]

    return yourdfpy


@settings(max_examples=25)
@given(st.data())
def test_fk_matches_yourdfpy_on_the_exported_urdf(data: st.DataObject) -> None:
    for model in (HB50, ARM6):
        kin = KIN[model.name]
        urdf = yourdfpy().URDF.load(io.BytesIO(model.to_urdf().encode()), load_meshes=False)
        values = {
            j.name: data.draw(st.floats(j.limits.position_min, j.limits.position_max))
            for j in model.actuated_joints()
        }
        urdf.update_cfg(values)
        q = kin.q_array(values)
        for link in ("fr_foot", "rl_shank") if model.name == "hb50" else ("tool0", "forearm"):
            theirs = urdf.get_transform(link, model.root)
            # yourdfpy drops rotations of ~1e-9 rad; 1e-7 still catches any real frame error.
            np.testing.assert_allclose(kin.fk(q, link).to_matrix(), theirs, atol=1e-7)


# --- Jacobians against finite differences ---------------------------------------------------------
def _numeric_jacobian(kin: Kinematics, q: np.ndarray, link: str, point: Vec3) -> np.ndarray:
    """Central differences of the point position over q, single-DoF and planar coordinates
    (their velocity coordinates are the q rates)."""
    eps = 1e-6
    idx = kin.link_index(link)
    p = np.array([point.x, point.y, point.z, 1.0])
    cols = []
    for i in range(kin.nq):
        dq = np.zeros(kin.nq)
        dq[i] = eps
        plus = kin.frames(q + dq)[idx] @ p
        minus = kin.frames(q - dq)[idx] @ p
        cols.append((plus - minus)[:3] / (2 * eps))
    return np.array(cols).T


finite_q = st.floats(-3.0, 3.0, allow_nan=False)


@given(
    st.lists(finite_q, min_size=12, max_size=12),
    st.sampled_from(LEGS),
    st.tuples(finite_q, finite_q, finite_q),
)
def test_hb50_jacobian_matches_finite_differences(
    values: list[float], leg: str, pt: tuple[float, float, float]
) -> None:
    kin = KIN["hb50"]
    q = np.array(values)
    point = Vec3(*(0.1 * c for c in pt))
    jac = kin.jacobian(q, f"{leg}_shank", point)
    np.testing.assert_allclose(jac, _numeric_jacobian(kin, q, f"{leg}_shank", point), atol=1e-7)
    # a foot depends on its own leg's three joints only
    cols = [kin.joint_names.index(f"{leg}_j{i}") for i in range(3)]
    others = np.delete(kin.jacobian(q, f"{leg}_foot"), cols, axis=1)
    assert not others.any()


@given(st.lists(finite_q, min_size=6, max_size=6))
def test_arm6_jacobian_matches_finite_differences(values: list[float]) -> None:
    kin = KIN["arm6"]
    q = np.array(values)
    point = Vec3(0.01, -0.02, 0.03)
    np.testing.assert_allclose(
        kin.jacobian(q, "tool0", point), _numeric_jacobian(kin, q, "tool0", point), atol=1e-7
    )


@given(st.floats(-50, 50), st.floats(-50, 50), finite_q, finite_q)
def test_rover_planar_jacobian_matches_finite_differences(
    x: float, y: float, theta: float, mast: float
) -> None:
    kin = KIN["rover"]
    q = np.array([x, y, theta, mast])
    point = Vec3(0.05, 0.02, 0.0)
    np.testing.assert_allclose(
        kin.jacobian(q, "camera", point), _numeric_jacobian(kin, q, "camera", point), atol=1e-6
    )


def _floating_robot() -> RobotModel:
    """A free-flying body with a revolute arm (a floating joint inside the tree)."""
    return RobotModel(
        name="flyer",
        links=(Link("world"), Link("body", 1.0), Link("arm", 0.5)),
        joints=(
            Joint("free", JointType.FLOATING, "world", "body", origin=Transform(Vec3(0, 0, 1.0))),
            Joint(
                "hinge",
                JointType.REVOLUTE,
                "body",
                "arm",
                origin=Transform(Vec3(0.2, 0, 0), Quaternion.from_rpy(0.1, 0.2, 0.3)),
                axis=Vec3(0, 1, 1),
                limits=JointLimitSpec(-2, 2),
            ),
        ),
        actuator_order=("free", "hinge"),
    )


@given(
    st.tuples(finite_q, finite_q, finite_q),
    st.tuples(finite_q, finite_q, finite_q),
    st.floats(0.1, math.pi),
    finite_q,
)
def test_floating_joint_jacobian_matches_perturbations(
    t: tuple[float, float, float], axis: tuple[float, float, float], angle: float, hinge: float
) -> None:
    """Columns 0-2: translation along the joint frame; 3-5: rotation about the child origin,
    expressed in the joint frame (left-multiplied onto the joint rotation)."""
    if math.hypot(*axis) < 1e-3:
        axis = (1.0, 0.0, 0.0)
    model = _floating_robot()
    kin = Kinematics(model)
    rot = Quaternion.from_axis_angle(Vec3(*axis), angle)
    pose = Transform(Vec3(*t), rot)
    point = Vec3(0.1, 0.05, -0.02)
    jac = kin.jacobian({"free": pose, "hinge": hinge}, "arm", point)
    assert jac.shape == (3, 7)
    eps = 1e-6

    def position(p: Transform) -> np.ndarray:
        return _vec(kin.fk({"free": p, "hinge": hinge}, "arm").apply(point))

    origin_rotation = Quaternion.identity()  # the floating joint's origin has no rotation
    for i in range(3):
        e = [0.0, 0.0, 0.0]
        e[i] = eps
        plus = Transform(pose.translation + origin_rotation.rotate(Vec3(*e)), rot)
        minus = Transform(pose.translation - origin_rotation.rotate(Vec3(*e)), rot)
        np.testing.assert_allclose(
            jac[:, i], (position(plus) - position(minus)) / (2 * eps), atol=1e-6
        )
        axis_i = Vec3(*(1.0 if k == i else 0.0 for k in range(3)))
        plus = Transform(pose.translation, Quaternion.from_axis_angle(axis_i, eps) * rot)
        minus = Transform(pose.translation, Quaternion.from_axis_angle(axis_i, -eps) * rot)
        np.testing.assert_allclose(
            jac[:, 3 + i], (position(plus) - position(minus)) / (2 * eps), atol=1e-6
        )
    np.testing.assert_allclose(
        jac[:, 6],
        _numeric_jacobian(kin, kin.q_array({"free": pose, "hinge": hinge}), "arm", point)[:, 7],
        atol=1e-6,
    )


def test_point_set_matches_single_point_calls() -> None:
    kin = KIN["hb50"]
    q = kin.q_from_pose("home") + 0.1
    feet = kin.point_set([(f"{leg}_foot", Vec3.ZERO) for leg in LEGS])
    positions, jacobians = feet.evaluate(q)
    assert positions.shape == (4, 3) and jacobians.shape == (4, 3, 12)
    for i, leg in enumerate(LEGS):
        np.testing.assert_allclose(
            positions[i], _vec(kin.fk(q, f"{leg}_foot").translation), atol=1e-12
        )
        np.testing.assert_allclose(jacobians[i], kin.jacobian(q, f"{leg}_foot"), atol=1e-12)


MIXED_TARGETS = (  # chains of 0 to 3 joints, points off the link origins, legs out of q order
    ("body", Vec3(0.1, 0.0, 0.05)),
    ("rr_foot", Vec3.ZERO),
    ("fl_hip", Vec3(0.0, 0.02, 0.0)),
    ("fr_thigh", Vec3(0.05, -0.01, 0.02)),
    ("rl_foot", Vec3(0.0, 0.0, -0.01)),
)


@given(st.lists(finite_q, min_size=12, max_size=12))
def test_point_set_of_chains_of_different_lengths_matches_frames(values: list[float]) -> None:
    # points padded to the longest chain and columns out of order take the general gather and
    # scatter; each must still match the link frames and finite differences
    kin = KIN["hb50"]
    q = np.array(values)
    positions, jacobians = kin.point_set(MIXED_TARGETS).evaluate(q)
    frames = kin.frames(q)
    for i, (link, point) in enumerate(MIXED_TARGETS):
        expected = (frames[kin.link_index(link)] @ np.array([*_vec(point), 1.0]))[:3]
        np.testing.assert_allclose(positions[i], expected, atol=1e-12)
        np.testing.assert_allclose(jacobians[i], _numeric_jacobian(kin, q, link, point), atol=1e-7)
    assert not jacobians[0].any()  # the body's point moves with no joint


def test_point_set_results_are_new_arrays_on_every_call() -> None:
    # the evaluation works in buffers of its own; what it returned earlier must not change
    kin = KIN["hb50"]
    feet = kin.point_set([(f"{leg}_foot", Vec3.ZERO) for leg in LEGS])
    q = kin.q_from_pose("home")
    positions, jacobians = feet.evaluate(q)
    kept = positions.copy(), jacobians.copy()
    feet.evaluate(q + 0.3)
    np.testing.assert_array_equal(positions, kept[0])
    np.testing.assert_array_equal(jacobians, kept[1])


def test_point_set_rejects_a_bad_configuration_and_keeps_working() -> None:
    kin = KIN["hb50"]
    feet = kin.point_set([(f"{leg}_foot", Vec3.ZERO) for leg in LEGS])
    q = kin.q_from_pose("home")
    before = feet.evaluate(q)
    bad = q.copy()
    bad[4] = math.nan
    with pytest.raises(ConfigurationError, match="fl_j1"):
        feet.evaluate(bad)
    after = feet.evaluate(q)
    np.testing.assert_array_equal(before[0], after[0])
    np.testing.assert_array_equal(before[1], after[1])


# --- bad configurations --------------------------------------------------------------------------
def test_configuration_errors_name_the_joint() -> None:
    kin = KIN["hb50"]
    with pytest.raises(ConfigurationError, match=r"shape \(12,\)"):
        kin.frames(np.zeros(11))
    q = kin.zero_q()
    q[4] = math.nan
    with pytest.raises(ConfigurationError) as err:
        kin.frames(q)
    assert (err.value.joint, err.value.index) == ("fl_j1", 4)
    values: dict[str, float] = dict.fromkeys(kin.joint_names, 0.0)
    del values["rr_j2"]
    with pytest.raises(ConfigurationError) as err:
        kin.frames(values)
    assert (err.value.joint, err.value.index) == ("rr_j2", 11)
    with pytest.raises(UnknownJointError) as unknown:
        kin.frames({**dict.fromkeys(kin.joint_names, 0.0), "tail": 1.0})
    assert unknown.value.name == "tail"
    with pytest.raises(ConfigurationError, match="Transform2D"):
        KIN["rover"].frames({"base": 1.0, "mast": 0.0})
    with pytest.raises(UnknownLinkError, match="'fr_toe'"):
        kin.fk(q * 0, "fr_toe")
