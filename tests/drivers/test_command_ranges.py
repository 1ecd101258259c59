"""What a driver can carry, in joint space (:mod:`jointbus.drivers.command_ranges`): the map from a
driver's actuator-space ranges through the calibration, and the device API's use of them."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jointbus.drivers.calibration import Calibration
from jointbus.drivers.command_ranges import COMMAND_RANGE_FIELDS, CommandRanges
from jointbus.model.calibration import JointCalibration

NAMES = ("hip", "knee")
#: Actuator space, rows position, velocity, effort, kp, kd; deliberately asymmetric.
LOWER = np.array([[-6.0, -6.0], [-25.0, -25.0], [-24.0, -24.0], [0.0, 0.0], [0.0, 0.0]])
UPPER = np.array([[9.0, 9.0], [40.0, 40.0], [30.0, 30.0], [300.0, 300.0], [4.0, 4.0]])


def test_a_reversed_joint_swaps_its_ends_and_an_offset_shifts_its_position_range() -> None:
    cal = Calibration([JointCalibration(1, 0.5), JointCalibration(-1, 0.5)])
    ranges = CommandRanges.from_actuator(NAMES, LOWER, UPPER, ("the m's wire range",) * 2, cal)
    # hip: joint = actuator − 0.5
    assert ranges.bounds("position", 0) == pytest.approx((-6.5, 8.5))
    assert ranges.bounds("velocity", 0) == (-25.0, 40.0)
    assert ranges.bounds("effort", 0) == (-24.0, 30.0)
    # knee, reversed: joint = 0.5 − actuator, so the ends swap
    assert ranges.bounds("position", 1) == pytest.approx((-8.5, 6.5))
    assert ranges.bounds("velocity", 1) == (-40.0, 25.0)
    assert ranges.bounds("effort", 1) == (-30.0, 24.0)
    for index in (0, 1):  # gains are not calibrated
        assert ranges.bounds("kp", index) == (0.0, 300.0)
        assert ranges.bounds("kd", index) == (0.0, 4.0)
    assert ranges.expectation("kp", 1) == "within [0, 300] (the m's wire range)"


def test_a_driver_that_declares_nothing_is_unbounded() -> None:
    ranges = CommandRanges.unbounded(NAMES)
    assert not ranges.bounded
    for field in COMMAND_RANGE_FIELDS:
        assert ranges.bounds(field, 1) == (-math.inf, math.inf)
    assert ranges.expectation("kp", 0) == "within [-inf, inf]"


def test_ranges_that_do_not_fit_the_joints_are_refused() -> None:
    with pytest.raises(ValueError, match="shape"):
        CommandRanges(NAMES, LOWER[:4], UPPER[:4], ("", ""))
    with pytest.raises(ValueError, match="'knee' \\(index 1\\): kp range"):
        CommandRanges(NAMES, LOWER, np.where(np.arange(2) == 1, -1.0, UPPER), ("", ""))


@settings(max_examples=200, deadline=None)
@given(
    directions=st.tuples(st.sampled_from((1, -1)), st.sampled_from((1, -1))),
    offsets=st.tuples(
        st.floats(-3.0, 3.0, allow_nan=False), st.floats(-3.0, 3.0, allow_nan=False)
    ),
    fraction=st.floats(0.0, 1.0),
    index=st.integers(0, 1),
)
def test_every_joint_position_inside_the_range_maps_inside_the_actuator_range(
    directions: tuple[int, int], offsets: tuple[float, float], fraction: float, index: int
) -> None:
    """Float64 rounding of ``d · x + offset`` never carries a joint value inside the declared
    range (its ends included) a hair outside the driver's range; a step beyond an end does."""
    cal = Calibration([JointCalibration(d, o) for d, o in zip(directions, offsets, strict=True)])
    ranges = CommandRanges.from_actuator(NAMES, LOWER, UPPER, ("", ""), cal)
    lo, hi = ranges.bounds("position", index)
    for value in (lo, hi, min(hi, max(lo, lo + fraction * (hi - lo)))):
        joint = np.zeros(2)
        joint[index] = value
        actuator = cal.position_to_actuator(joint)[index]
        assert LOWER[0, index] <= actuator <= UPPER[0, index], (value, actuator)
    # not narrower than it must be: just beyond either end (a few ULP) leaves the wire range
    for end, outwards in ((lo, -math.inf), (hi, math.inf)):
        beyond = end
        for _ in range(4):
            beyond = float(np.nextafter(beyond, outwards))
        joint = np.zeros(2)
        joint[index] = beyond + (beyond - end) * 1e3  # clearly past rounding
        actuator = cal.position_to_actuator(joint)[index]
        assert not LOWER[0, index] <= actuator <= UPPER[0, index], (end, beyond, actuator)
