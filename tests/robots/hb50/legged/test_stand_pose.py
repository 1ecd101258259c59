"""Stand pose: body pose → feet over a fixed footprint → joint targets, clamped to safe ranges."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.math import Quaternion
from jointbus.messages.errors import NonFiniteError
from jointbus.model.errors import UnreachableError
from jointbus.model.kinematics import Kinematics
from jointbus.robots.hb50.legged.stand_pose import BodyPose, PoseLimits, StandPose
from support.hb50_sim import hb50

MODEL = hb50()
POSE = StandPose(MODEL)
KIN = Kinematics(MODEL)
LIM = POSE.limits


def feet_in_world(q: np.ndarray, pose: BodyPose) -> np.ndarray:
    """Foot centres in the ground frame for joints ``q`` and the body at ``pose`` (generic FK)."""
    rot = Quaternion.from_rpy(pose.roll, pose.pitch, pose.yaw)
    body = np.array(
        [tuple(KIN.fk(q, f"{leg}_foot").translation) for leg in ("fr", "fl", "rl", "rr")]
    )
    world: np.ndarray = body @ rot.to_matrix().T + np.array([0.0, 0.0, pose.height])
    return world


def test_the_footprint_is_the_home_stance_on_the_ground() -> None:
    home = KIN.q_from_pose("home")
    for k, leg in enumerate(("fr", "fl", "rl", "rr")):
        foot = KIN.fk(home, f"{leg}_foot").translation
        assert POSE.footprint[k].tolist() == pytest.approx([foot.x, foot.y, 0.021])


def test_reference_height_gives_a_pose_close_to_home() -> None:
    q, report = POSE.joint_targets(BodyPose(0.34))
    assert not report
    home = KIN.q_from_pose("home")
    assert np.abs(q - home).max() < 0.15  # home stands the body at 0.356 m


@given(
    st.floats(LIM.height_min, LIM.height_max),
    st.floats(-LIM.roll_max, LIM.roll_max),
    st.floats(-LIM.pitch_max, LIM.pitch_max),
    st.floats(-LIM.yaw_max, LIM.yaw_max),
)
def test_feet_stay_on_their_footprint_whatever_the_body_pose(
    height: float, roll: float, pitch: float, yaw: float
) -> None:
    pose = BodyPose(height, roll, pitch, yaw)
    q, report = POSE.joint_targets(pose)
    assert not report
    np.testing.assert_allclose(feet_in_world(q, pose), POSE.footprint, atol=1e-9)


def test_every_corner_of_the_safe_ranges_is_reachable() -> None:
    for height in (LIM.height_min, LIM.height_max):
        for roll, pitch, yaw in itertools.product(
            (-LIM.roll_max, 0.0, LIM.roll_max),
            (-LIM.pitch_max, 0.0, LIM.pitch_max),
            (-LIM.yaw_max, 0.0, LIM.yaw_max),
        ):
            POSE.joint_targets(BodyPose(height, roll, pitch, yaw))  # raises if not


def test_out_of_range_poses_are_clamped_and_reported() -> None:
    q, report = POSE.joint_targets(BodyPose(0.5, -1.0, 0.1, 0.25))
    assert [name for name, _, _ in report.clamped] == ["height", "roll", "yaw"]
    assert report.clamped[0] == ("height", 0.5, LIM.height_max)
    assert "height 0.5 → 0.37" in report.describe()
    expected, _ = POSE.joint_targets(BodyPose(LIM.height_max, -LIM.roll_max, 0.1, LIM.yaw_max))
    np.testing.assert_array_equal(q, expected)


def test_solve_without_clamping_reaches_the_folded_pose_and_names_what_fails() -> None:
    q = POSE.solve(BodyPose(0.14))
    assert np.abs(q[[2, 5, 8, 11]]).min() > 2.4  # knees folded
    with pytest.raises(UnreachableError, match="fr_j2"):
        POSE.solve(BodyPose(0.09))


def test_widened_limits_can_be_unreachable() -> None:
    wide = StandPose(MODEL, PoseLimits(height_max=0.5))
    with pytest.raises(UnreachableError, match="reaches"):
        wide.joint_targets(BodyPose(0.5))


def test_bad_poses_are_refused() -> None:
    with pytest.raises(NonFiniteError, match="roll"):
        BodyPose(0.3, math.nan)
    assert BodyPose(1).height == 1.0
