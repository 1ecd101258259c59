"""Calibration maps joint space to actuator space and back without loss."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.drivers.calibration import Calibration
from jointbus.model.calibration import JointCalibration

finite = st.floats(-100, 100, allow_nan=False)


def test_direction_and_offset_apply_to_positions_and_only_sign_to_rates() -> None:
    cal = Calibration([JointCalibration(1, 0.5), JointCalibration(-1, 0.25)])
    assert cal.position_to_actuator(np.array([1.0, 1.0])).tolist() == [1.5, -0.75]
    assert cal.rate_to_actuator(np.array([2.0, 2.0])).tolist() == [2.0, -2.0]


@given(st.lists(st.tuples(st.sampled_from([1, -1]), finite, finite), min_size=1, max_size=8))
def test_round_trip_is_identity(rows: list[tuple[int, float, float]]) -> None:
    cal = Calibration([JointCalibration(d, off) for d, off, _ in rows])
    q = np.array([v for *_, v in rows])
    assert np.allclose(cal.position_to_joint(cal.position_to_actuator(q)), q)
    assert np.array_equal(cal.rate_to_joint(cal.rate_to_actuator(q)), q)


def test_invalid_calibration_is_refused() -> None:
    with pytest.raises(ValueError, match="direction"):
        JointCalibration(2, 0.0)
    with pytest.raises(ValueError, match="offset"):
        JointCalibration(1, float("nan"))
