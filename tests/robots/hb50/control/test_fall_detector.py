"""The fall detector: tilt from the IMU quaternion, the fall and upright holds, the hysteresis."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.math import Quaternion
from jointbus.messages.errors import LimitError, ValidationError
from jointbus.robots.hb50.control.fall_detector import FallConfig, FallDetector, Tilt

UP = Quaternion.identity()


def _about_x(angle: float) -> Quaternion:
    return Quaternion(math.cos(angle / 2), math.sin(angle / 2), 0.0, 0.0)


def _about_y(angle: float) -> Quaternion:
    return Quaternion(math.cos(angle / 2), 0.0, math.sin(angle / 2), 0.0)


unit = st.floats(-1.0, 1.0, allow_nan=False)


@given(unit, unit, unit, unit)
def test_tilt_is_the_angle_of_the_body_z_axis_from_the_vertical(
    w: float, x: float, y: float, z: float
) -> None:
    norm = math.sqrt(w * w + x * x + y * y + z * z)
    if norm < 1e-3:
        return
    q = Quaternion(w / norm, x / norm, y / norm, z / norm)
    body_z = np.array(q.to_matrix())[:, 2]
    expected = math.acos(max(-1.0, min(1.0, float(body_z[2]))))
    tilt = Tilt.of(q, 0.1)
    assert tilt.tilt == pytest.approx(expected, abs=1e-6)
    # cos tilt = cos roll · cos pitch: tilt is never below |roll| or |pitch| folded into [0, π/2]
    assert math.cos(tilt.tilt) == pytest.approx(
        math.cos(tilt.roll) * math.cos(tilt.pitch), abs=1e-6
    )


def test_the_new_users_robot_on_its_back_reads_roll_pi() -> None:
    # /hb50/sim/ground_truth of the report: x=-7.4e-05, y=1.0, z=-7.4e-09, w=-9.9e-05
    tilt = Tilt.of(Quaternion(-9.9e-05, -7.4e-05, 1.0, -7.4e-09), -0.295)
    assert tilt.tilt == pytest.approx(math.pi, abs=1e-3)
    assert abs(tilt.roll) == pytest.approx(math.pi, abs=1e-3) and abs(tilt.pitch) < 1e-3
    assert "roll" in tilt.describe() and "-0.295 m" in tilt.describe()


def test_a_fall_needs_the_tilt_held_for_the_fall_hold() -> None:
    detector = FallDetector()
    cfg = detector.config
    on_side = _about_x(math.pi / 2)
    assert not detector.update(on_side, 0.0, 10.0)
    assert not detector.update(UP, 0.1, 10.1)  # a glitch: the hold restarts
    assert not detector.update(on_side, 0.0, 10.2)
    assert not detector.update(on_side, 0.0, 10.2 + cfg.fall_hold - 0.002)
    assert detector.update(on_side, 0.0, 10.2 + cfg.fall_hold)
    assert detector.at_change is not None and detector.at_change.tilt == pytest.approx(math.pi / 2)


def test_upright_again_needs_the_upright_limit_held_for_the_upright_hold() -> None:
    detector = FallDetector()
    cfg = detector.config
    detector.update(_about_y(2.0), 0.0, 0.0)
    assert detector.update(_about_y(2.0), 0.0, cfg.fall_hold)
    between = _about_y((cfg.tilt_limit + cfg.upright_limit) / 2)  # inside the hysteresis band
    for k in range(20):
        assert detector.update(between, 0.0, 1.0 + k * 0.5)
    assert detector.update(UP, 0.1, 20.0)
    assert detector.update(UP, 0.1, 20.0 + cfg.upright_hold - 0.002)
    assert not detector.update(UP, 0.1, 20.0 + cfg.upright_hold)


def test_tilt_inside_the_limit_is_never_a_fall() -> None:
    detector = FallDetector()
    for k in range(1000):
        assert not detector.update(_about_x(0.99 * math.sin(k)), 0.3, k * 0.01)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"tilt_limit": -1.0}, LimitError),
        ({"tilt_limit": 4.0}, LimitError),
        ({"fall_hold": math.nan}, LimitError),
        ({"upright_limit": 1.2}, LimitError),
        ({"upright_hold": "1"}, ValidationError),
    ],
)
def test_bad_thresholds_are_refused(kwargs: dict[str, object], error: type[Exception]) -> None:
    with pytest.raises(error) as info:
        FallConfig(**kwargs)  # type: ignore[arg-type]
    assert next(iter(kwargs)) in str(info.value)
