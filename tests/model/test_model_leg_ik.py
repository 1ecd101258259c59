"""hb50 leg inverse kinematics: round trips both ways, conventions, unreachable targets."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from jointbus.math import Vec3
from jointbus.model.errors import DefinitionError, UnknownLinkError, UnreachableError
from jointbus.model.kinematics import Kinematics
from jointbus.model.leg_ik import LegIK, legs_ik
from jointbus.model.yaml_loader import load_robot

LEGS = ("fr", "fl", "rl", "rr")
HB50 = load_robot("hb50")
KIN = Kinematics(HB50)
IK = legs_ik(HB50)


def _foot(q: np.ndarray, leg: str) -> np.ndarray:
    t = KIN.fk(q, f"{leg}_foot").translation
    return np.array([t.x, t.y, t.z])


def _leg_q(leg: str, angles: tuple[float, float, float]) -> np.ndarray:
    q = KIN.q_from_pose("home")
    for i, angle in enumerate(angles):
        q[KIN.joint_names.index(f"{leg}_j{i}")] = angle
    return q


def test_standing_pose_round_trips_exactly() -> None:
    q = KIN.q_from_pose("home")
    for leg in LEGS:
        solved = IK[leg].solve(Vec3(*_foot(q, leg)))
        expected = [HB50.pose("home")[f"{leg}_j{i}"] for i in range(3)]
        np.testing.assert_allclose(solved, expected, atol=1e-12)


def test_closed_form_forward_agrees_with_the_tree() -> None:
    q = KIN.q_from_pose("home")
    for leg in LEGS:
        angles = tuple(HB50.pose("home")[f"{leg}_j{i}"] for i in range(3))
        np.testing.assert_allclose(IK[leg].forward(*angles), _foot(q, leg), atol=1e-12)


@st.composite
def leg_angles(draw: st.DrawFn, leg: str) -> tuple[float, float, float]:
    """Angles inside the limits that keep the standing conventions (foot below the abduction
    axis, knee bent the standing way) with a margin from the branch boundaries."""
    limits = [HB50.joint(f"{leg}_j{i}").limits for i in range(3)]
    angles = tuple(
        draw(st.floats(spec.position_min, spec.position_max, allow_nan=False)) for spec in limits
    )
    assume(abs(angles[2]) > 0.02)  # knee not straight: both knee directions meet there
    ik = IK[leg]
    _x, _y, z = ik._hip_frame_foot(angles[1], angles[2])
    assume(z < -0.03)  # clearly below the abduction axis (the standing side)
    return angles[0], angles[1], angles[2]


@pytest.mark.parametrize("leg", LEGS)
@given(data=st.data())
def test_ik_of_fk_returns_the_configuration(leg: str, data: st.DataObject) -> None:
    angles = data.draw(leg_angles(leg))
    target = _foot(_leg_q(leg, angles), leg)
    solved = IK[leg].solve(Vec3(*target))
    np.testing.assert_allclose(solved, angles, atol=1e-7)


@pytest.mark.parametrize("leg", LEGS)
@given(
    dx=st.floats(-0.08, 0.08),
    dy=st.floats(-0.05, 0.05),
    dz=st.floats(-0.06, 0.1),
)
def test_fk_of_ik_reaches_targets_around_the_standing_foot(
    leg: str, dx: float, dy: float, dz: float
) -> None:
    stand = _foot(KIN.q_from_pose("home"), leg)
    target = stand + np.array([dx, dy, dz])
    solved = IK[leg].solve(Vec3(*target))
    for i, angle in enumerate(solved):
        spec = HB50.joint(f"{leg}_j{i}").limits
        assert spec.position_min <= angle <= spec.position_max
    np.testing.assert_allclose(_foot(_leg_q(leg, solved), leg), target, atol=1e-9)
    # knee bent the standing way on every solution
    assert math.copysign(1, solved[2]) == math.copysign(1, HB50.pose("home")[f"{leg}_j2"])


def test_out_of_reach_targets_raise_a_typed_error() -> None:
    ik = IK["fr"]
    with pytest.raises(UnreachableError, match="the leg reaches") as err:
        ik.solve(Vec3(0.2, -0.145, -0.6))  # 0.6 m below: longer than 0.44 m of leg
    assert err.value.leg == "fr" and err.value.target == (0.2, -0.145, -0.6)
    with pytest.raises(UnreachableError, match="lateral offset"):
        ik.solve(Vec3(0.2, -0.064, -0.01))  # on the abduction axis
    with pytest.raises(UnreachableError, match="not finite"):
        ik.solve((0.2, math.nan, -0.3))


def test_targets_needing_a_joint_beyond_its_limit_name_that_joint() -> None:
    # fr_j0 may turn 1.047 rad outwards (negative); a foot far out sideways needs more
    ik = IK["fr"]
    with pytest.raises(UnreachableError) as err:
        ik.solve((0.2, -0.064 - 0.3, 0.1))
    assert err.value.joint == "fr_j0" and err.value.index == 0
    assert "outside its limits" in str(err.value)


def test_a_leg_with_another_structure_is_refused() -> None:
    with pytest.raises(UnknownLinkError, match="'fr_foot'"):
        LegIK.from_model(load_robot("arm6"), "fr")
    joints = tuple(
        dataclasses.replace(j, axis=Vec3(0, 0, 1)) if j.name == "fr_j1" else j for j in HB50.joints
    )
    tilted = dataclasses.replace(HB50, joints=joints)
    with pytest.raises(DefinitionError, match="fr_j1") as err:
        LegIK.from_model(tilted, "fr")
    assert err.value.field == "axis"
    LegIK.from_model(tilted, "fl")  # the other legs are unaffected
