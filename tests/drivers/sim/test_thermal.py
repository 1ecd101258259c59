"""Tests of the lumped thermal model: exact first-order response, shutdown with hysteresis."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.drivers.sim.thermal import ThermalModel
from jointbus.messages.errors import LengthMismatchError, LimitError, NonFiniteError


def _model(n: int = 1, **overrides: float) -> ThermalModel:
    values = {
        "capacity": 10.0,
        "resistance": 2.0,
        "ambient": 25.0,
        "shutdown": 100.0,
        "hysteresis": 20.0,
    }
    values.update(overrides)
    return ThermalModel(**{k: np.full(n, v) for k, v in values.items()})


@given(
    power=st.floats(0.0, 200.0),
    dt=st.floats(1e-4, 5.0),
    steps=st.integers(1, 20),
)
def test_matches_the_analytic_first_order_response(power: float, dt: float, steps: int) -> None:
    model = _model(shutdown=1e6, hysteresis=1.0)  # never trips here
    for _ in range(steps):
        model.update(np.array([power]), dt)
    tau = 2.0 * 10.0
    expected = 25.0 + power * 2.0 * (1.0 - math.exp(-steps * dt / tau))
    assert model.temperature[0] == pytest.approx(expected, rel=1e-9, abs=1e-9)


def test_one_long_step_equals_many_short_ones() -> None:
    coarse, fine = _model(shutdown=1e6), _model(shutdown=1e6)
    coarse.update(np.array([30.0]), 4.0)
    for _ in range(2000):
        fine.update(np.array([30.0]), 0.002)
    assert coarse.temperature[0] == pytest.approx(fine.temperature[0], rel=1e-9)


def test_cools_towards_ambient_without_power() -> None:
    model = _model()
    model.set_temperature([90.0])
    model.update(np.array([0.0]), 1000.0)
    assert model.temperature[0] == pytest.approx(25.0, abs=1e-6)


def test_shutdown_trips_at_threshold_and_releases_after_hysteresis() -> None:
    model = _model()
    heating = np.array([100.0])  # T∞ = 225 °C
    history: list[tuple[float, bool]] = []
    while not model.overheated[0]:
        model.update(heating, 0.01)
        history.append((float(model.temperature[0]), bool(model.overheated[0])))
        assert len(history) < 10_000
    # Tripped exactly when the threshold was crossed, not before.
    assert all(t < 100.0 for t, _ in history[:-1])
    assert history[-1][0] >= 100.0
    # Cooling: stays tripped while above 80 °C, releases at or below it.
    cooling = np.array([0.0])
    while model.overheated[0]:
        above_release = model.temperature[0] > 80.0
        assert above_release
        model.update(cooling, 0.01)
    assert model.temperature[0] <= 80.0
    # Once released, it stays released below the threshold (no chatter at 80-100 °C).
    model.set_temperature([95.0])
    assert not model.overheated[0]


def test_set_temperature_inside_the_band_keeps_the_flag() -> None:
    model = _model()
    model.set_temperature([120.0])
    assert model.overheated[0]
    model.set_temperature([90.0])  # between release (80) and shutdown (100)
    assert model.overheated[0]
    model.set_temperature([80.0])
    assert not model.overheated[0]


def test_bodies_are_independent() -> None:
    model = _model(n=3)
    model.update(np.array([0.0, 50.0, 500.0]), 1.0)
    t = model.temperature
    assert t[0] == pytest.approx(25.0)
    assert t[0] < t[1] < t[2]


def test_state_views_are_read_only() -> None:
    model = _model()
    with pytest.raises(ValueError):
        model.temperature[0] = 0.0
    with pytest.raises(ValueError):
        model.overheated[0] = True


@pytest.mark.parametrize("field", ["capacity", "resistance", "hysteresis"])
@given(value=st.floats(max_value=0.0, allow_nan=False, allow_infinity=False))
def test_non_positive_parameters_are_rejected(field: str, value: float) -> None:
    with pytest.raises(LimitError) as info:
        _model(1, **{field: value})
    assert info.value.field == field
    assert info.value.index == 0
    assert field in str(info.value)


def test_non_finite_and_mislengthed_parameters_are_rejected() -> None:
    with pytest.raises(NonFiniteError):
        _model(ambient=math.nan)
    with pytest.raises(LengthMismatchError):
        ThermalModel(
            capacity=[1.0, 1.0], resistance=[1.0], ambient=[25.0, 25.0], shutdown=[90.0, 90.0],
            hysteresis=[10.0, 10.0],
        )


def test_a_release_temperature_below_ambient_is_rejected() -> None:
    with pytest.raises(LimitError) as info:
        _model(shutdown=40.0, hysteresis=20.0)  # would release at 20 °C < 25 °C ambient
    assert info.value.field == "hysteresis"
