"""The bundled robot files hold the figures they claim: hb50 facts, arm6 Player geometry."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from jointbus.math import Quaternion, Vec3
from jointbus.model.joint import JointType
from jointbus.model.kinematics import Kinematics
from jointbus.model.yaml_loader import load_robot

HB50 = load_robot("hb50")
ARM6 = load_robot("arm6")

# the joint-limit table of hb50-facts.md
LIMITS = {
    "fr": ((-1.047, 1.571), (-1.571, 1.571), (-2.705, 0.0)),
    "fl": ((-1.571, 1.047), (-1.571, 1.571), (0.0, 2.705)),
    "rl": ((-1.047, 1.571), (-3.142, 1.571), (0.0, 2.705)),
    "rr": ((-1.571, 1.047), (-1.571, 3.142), (-2.705, 0.0)),
}


def test_hb50_actuator_order_and_limits_follow_the_facts() -> None:
    assert HB50.actuator_order == tuple(f"{leg}_j{i}" for leg in LIMITS for i in range(3))
    for leg, table in LIMITS.items():
        for i, (lo, hi) in enumerate(table):
            limits = HB50.joint(f"{leg}_j{i}").limits
            assert (limits.position_min, limits.position_max) == (lo, hi)
            assert (limits.effort_max, limits.velocity_max) == (24.0, 20.0)


def test_hb50_masses_and_body() -> None:
    assert HB50.total_mass() == pytest.approx(17.0, abs=0.2)
    body = HB50.link("body")
    assert body.mass == 7.812
    assert (body.inertia.ixx, body.inertia.iyy, body.inertia.izz) == (0.03428, 0.05385, 0.07359)
    box = body.collisions[0].shape
    assert tuple(box.size) == pytest.approx((0.196, 0.152, 0.124))  # type: ignore[union-attr]
    for leg in LIMITS:
        assert HB50.link(f"{leg}_hip").mass == 0.10
        assert HB50.link(f"{leg}_thigh").mass == 2.08
        assert HB50.link(f"{leg}_shank").mass == 0.141
        assert HB50.link(f"{leg}_foot").collisions[0].shape.radius == 0.021  # type: ignore[union-attr]


def test_hb50_geometry_follows_the_facts() -> None:
    kin = Kinematics(HB50)
    frames = kin.frames(kin.zero_q())
    hips = {
        "fr": (0.1405, -0.064),
        "fl": (0.1405, 0.064),
        "rl": (-0.1405, 0.064),
        "rr": (-0.1405, -0.064),
    }
    for leg, (x, y) in hips.items():
        j0 = HB50.joint(f"{leg}_j0")
        assert j0.parent == "body" and tuple(j0.origin.translation) == (x, y, 0.0)
        assert abs(j0.axis.x) == 1.0  # along the body's long axis
        j1_at = frames[kin.link_index(f"{leg}_thigh")][:3, 3]
        assert abs(j1_at[0]) == pytest.approx(abs(x) + 0.06)  # 0.06 m further out along x
        assert abs(j1_at[1]) == pytest.approx(0.064 + 0.081)  # the leg plane, 0.081 outboard
        for name in (f"{leg}_j1", f"{leg}_j2"):
            assert abs(HB50.joint(name).axis.y) == 1.0  # lateral
        thigh = HB50.joint(f"{leg}_j2").origin.translation.norm()
        shank = HB50.joint(f"{leg}_foot_joint").origin.translation.norm()
        assert (thigh, shank) == (0.22, 0.22)
    assert HB50.sensor("imu").origin.translation.isclose(Vec3(0.0693, 0, 0))
    assert HB50.sensor("imu").link == "body"


def test_hb50_home_is_the_facts_standing_pose() -> None:
    stand = {
        "fr": (0.05, 0.7, -1.4),
        "fl": (-0.05, -0.7, 1.4),
        "rl": (0.05, -0.7, 1.4),
        "rr": (-0.05, 0.7, -1.4),
    }
    home = HB50.pose("home")
    for leg, angles in stand.items():
        assert tuple(home[f"{leg}_j{i}"] for i in range(3)) == angles


def test_arm6_player_geometry_agrees_with_its_tree() -> None:
    """length and rest_orientation must give the next actuator's position in this one's frame."""
    assert ARM6.base_mount is JointType.FIXED and len(ARM6.actuator_order) == 6
    chain = ARM6.chain("tool0")
    for joint, following in itertools.pairwise(chain):
        geometry = joint.actuator
        assert geometry is not None, joint.name
        direction = Quaternion.from_rpy(*geometry.rest_orientation).rotate(Vec3(1, 0, 0))
        assert (direction * geometry.length).isclose(following.origin.translation, 1e-12), (
            joint.name
        )
        lo, hi = joint.limits.position_min, joint.limits.position_max
        assert lo <= geometry.home <= hi
        assert geometry.centre == pytest.approx((lo + hi) / 2)
        assert geometry.config_speed <= joint.limits.velocity_max
    brakes = [ARM6.joint(name).actuator.has_brakes for name in ARM6.actuator_order]  # type: ignore[union-attr]
    assert brakes == [True, True, True, False, False, False]
    home = ARM6.pose("home")
    assert {n: ARM6.joint(n).actuator.home for n in ARM6.actuator_order} == home  # type: ignore[union-attr]


def test_arm6_home_folds_the_tool_over_the_base() -> None:
    kin = Kinematics(ARM6)
    tool = kin.fk(kin.q_from_pose("home"), "tool0").translation
    assert 0.0 < tool.z < 0.92 and math.hypot(tool.x, tool.y) < 0.5
    np.testing.assert_allclose(tool.y, 0.0, atol=1e-12)
