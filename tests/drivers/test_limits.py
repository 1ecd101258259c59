"""Limit enforcement: reject names the culprit, saturate reports clamps, soft limits slow down."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.drivers.limits import JointLimits, LimitPolicy
from jointbus.messages.errors import LimitError, NonFiniteError
from jointbus.model.limits import JointLimitSpec, SoftLimits

NAMES = ("hip", "knee", "ankle")
SPECS = [
    JointLimitSpec(-1.0, 1.0, velocity_max=5.0, effort_max=10.0, current_max=3.0),
    JointLimitSpec(-2.0, 0.0, velocity_max=4.0, effort_max=20.0),
    JointLimitSpec(),  # unbounded
]


def limits(policy: LimitPolicy = LimitPolicy.REJECT) -> JointLimits:
    return JointLimits(NAMES, SPECS, policy, type_name="JointCommand")


def test_reject_names_joint_index_field_value_and_bounds() -> None:
    with pytest.raises(LimitError) as info:
        limits().apply("position", np.array([0.5, 0.3, 100.0]), command_field="t_pos")
    err = info.value
    assert (err.joint, err.index, err.field, err.value) == ("knee", 1, "t_pos", 0.3)
    assert "'knee' (index 1)" in str(err)
    assert "t_pos" in str(err)
    assert "[-2, 0]" in str(err)


def test_values_within_limits_pass_unchanged() -> None:
    values = np.array([0.5, -0.3, 1e6])
    applied, records = limits().apply("position", values)
    assert applied is values
    assert records == []


def test_subset_of_joints_is_checked_against_their_own_limits() -> None:
    with pytest.raises(LimitError) as info:
        limits().apply("velocity", np.array([4.5]), indices=[1])
    assert info.value.joint == "knee"
    assert info.value.index == 1
    applied, _ = limits().apply("velocity", np.array([4.5]), indices=[0])
    assert applied.tolist() == [4.5]


@pytest.mark.parametrize("policy", list(LimitPolicy))
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_is_rejected_under_every_policy(policy: LimitPolicy, bad: float) -> None:
    with pytest.raises(NonFiniteError) as info:
        limits(policy).apply("effort", np.array([0.0, 0.0, bad]))
    assert (info.value.joint, info.value.index) == ("ankle", 2)


def test_saturate_clamps_and_reports_each_clamp() -> None:
    applied, records = limits(LimitPolicy.SATURATE).apply("effort", np.array([12.0, -25.0, 3.0]))
    assert applied.tolist() == [10.0, -20.0, 3.0]
    assert [(r.joint, r.index, r.requested, r.applied) for r in records] == [
        ("hip", 0, 12.0, 10.0),
        ("knee", 1, -25.0, -20.0),
    ]


@given(st.lists(st.floats(-1e3, 1e3), min_size=3, max_size=3))
def test_saturated_values_always_lie_within_bounds(values: list[float]) -> None:
    applied, records = limits(LimitPolicy.SATURATE).apply("current", np.array(values))
    assert -3.0 <= applied[0] <= 3.0
    assert len(records) == int(abs(values[0]) > 3.0)
    assert applied[1:].tolist() == values[1:]


def test_soft_limits_follow_ros2_control_law() -> None:
    soft = SoftLimits(lower=-0.8, upper=0.8, k_position=10.0, k_velocity=2.0)
    lim = JointLimits(["j"], [JointLimitSpec(-1, 1, velocity_max=5, effort_max=10, soft=soft)])
    # Deep inside: velocity range is the hard one.
    vmin, vmax = lim.soft_velocity_bounds(np.array([0.0]))
    assert (vmin[0], vmax[0]) == (-5.0, 5.0)
    # 0.1 rad from the upper soft bound: max velocity shrinks to k_position * distance.
    vmin, vmax = lim.soft_velocity_bounds(np.array([0.7]))
    assert vmax[0] == pytest.approx(1.0)
    assert vmin[0] == -5.0
    # Past the soft bound the joint must move back.
    _, vmax = lim.soft_velocity_bounds(np.array([0.9]))
    assert vmax[0] == pytest.approx(-1.0)
    # Effort bound: -k_velocity * (v - vmax).
    emin, emax = lim.soft_effort_bounds(np.array([0.7]), np.array([2.0]))
    assert emax[0] == pytest.approx(-2.0)
    assert emin[0] == -10.0


def test_invalid_specs_are_refused() -> None:
    with pytest.raises(ValueError, match="min ≤ max"):
        JointLimitSpec(1.0, -1.0)
    with pytest.raises(ValueError, match="velocity_max"):
        JointLimitSpec(velocity_max=-1.0)
    with pytest.raises(ValueError, match="lower ≤ upper"):
        SoftLimits(1.0, -1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="3 joint names but 2"):
        JointLimits(NAMES, SPECS[:2])


def test_a_bound_rounded_to_float32_is_still_the_bound() -> None:
    # Commands travel as float32: -1.047 arrives as -1.0470000505... , just below the limit.
    lim = JointLimits(["j"], [JointLimitSpec(-1.047, 1.571)])
    at_bound = float(np.float32(-1.047))
    assert at_bound < -1.047
    applied, records = lim.apply("position", np.array([at_bound]))
    assert applied.tolist() == [-1.047]  # clamped onto the exact bound, quietly
    assert records == []
    with pytest.raises(LimitError):  # one float32 step further is outside
        lim.apply("position", np.array([float(np.nextafter(np.float32(at_bound), -2))]))
