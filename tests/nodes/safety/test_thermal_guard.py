"""Thermal guard: WARN, linear torque derating, drive off at shutdown, back after hysteresis."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.drivers.impedance import ImpedanceCommand
from jointbus.nodes.safety.thermal_guard import ThermalGuard, ThermalLevel
from support.profiled import numpy_reductions

NAMES = ("hip", "knee", "ankle")
OK, WARN, ERROR = ThermalLevel.OK, ThermalLevel.WARN, ThermalLevel.ERROR


def guard() -> ThermalGuard:
    return ThermalGuard(
        NAMES, warn_c=80.0, derate_start_c=90.0, shutdown_c=100.0, hysteresis_c=20.0
    )


def test_cool_joints_are_ok_and_not_derated() -> None:
    g = guard()
    assert g.update([30.0, 45.0, 79.9]) == []
    assert g.levels == (OK, OK, OK)
    assert g.factors.tolist() == [1.0, 1.0, 1.0]
    assert not g.drive_off.any()


def test_warn_at_the_warning_temperature_names_joint_and_index() -> None:
    g = guard()
    (event,) = g.update([30.0, 80.0, 30.0])
    assert (event.joint, event.index, event.old, event.new) == ("knee", 1, OK, WARN)
    assert event.temperature_c == 80.0
    text = event.describe(g)
    assert "'knee' (index 1)" in text and "80.0 °C" in text
    assert g.factors[1] == 1.0  # warned, not yet derated


def test_derating_is_linear_from_derate_start_to_shutdown() -> None:
    g = guard()
    g.update([90.0, 95.0, 99.0])
    assert g.factors == pytest.approx([1.0, 0.5, 0.1])
    assert g.levels == (WARN, WARN, WARN)


def test_shutdown_turns_the_drive_off_until_cooled_by_the_hysteresis() -> None:
    g = guard()
    (event,) = g.update([30.0, 30.0, 100.0])
    assert (event.joint, event.new) == ("ankle", ERROR)
    assert "drive off" in event.describe(g)
    assert g.drive_off.tolist() == [False, False, True]
    for t in (99.0, 90.0, 85.0, 80.5):
        assert g.update([30.0, 30.0, t]) == []
        assert g.drive_off[2] and g.factors[2] == 0.0
    (back,) = g.update([30.0, 30.0, 79.0])
    assert (back.old, back.new) == (ERROR, WARN)
    assert not g.drive_off[2]
    assert g.factors[2] == 1.0
    (ok,) = g.update([30.0, 30.0, 59.0])
    assert (ok.old, ok.new) == (WARN, OK)


def test_warning_does_not_chatter_around_the_threshold() -> None:
    g = guard()
    events = [e for t in (80.0, 79.0, 80.5, 78.0, 81.0, 65.0) for e in g.update([t, 0.0, 0.0])]
    assert [(e.old, e.new) for e in events] == [(OK, WARN)]


def test_missing_reading_changes_nothing() -> None:
    g = guard()
    g.update([100.0, 95.0, 30.0])
    assert g.update([math.nan, math.nan, math.nan]) == []
    assert g.levels == (ERROR, WARN, OK)
    assert g.factors == pytest.approx([0.0, 0.5, 1.0])


def test_derate_scales_the_whole_impedance_law() -> None:
    g = guard()
    g.update([30.0, 95.0, 100.0])
    cmd = ImpedanceCommand.hold((0.1, 0.2, 0.3), 80.0, 4.0).replace(effort=(2.0, 2.0, 2.0))
    derated = g.derate(cmd)
    assert derated.kp.tolist() == [80.0, 40.0, 0.0]
    assert derated.kd.tolist() == [4.0, 2.0, 0.0]
    assert derated.effort.tolist() == [2.0, 1.0, 0.0]
    # the target is unchanged, only the torque is scaled
    assert derated.position.tolist() == cmd.position.tolist()


def test_derate_returns_the_same_command_when_cool() -> None:
    g = guard()
    g.update([30.0, 30.0, 30.0])
    cmd = ImpedanceCommand.hold((0.0, 0.0, 0.0), 80.0, 3.0)
    assert g.derate(cmd) is cmd


@given(st.floats(0.0, 150.0))
def test_factor_is_monotone_and_bounded(t: float) -> None:
    g = guard()
    g.update([t, t + 1.0, t + 10.0])
    f = g.factors
    assert np.all((f >= 0.0) & (f <= 1.0))
    assert f[0] >= f[1] >= f[2]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"warn_c": 95.0, "derate_start_c": 90.0},
        {"derate_start_c": 100.0},
        {"hysteresis_c": -1.0},
        {"shutdown_c": math.nan},
    ],
)
def test_inconsistent_thresholds_are_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        ThermalGuard(NAMES, **kwargs)


def test_wrong_number_of_readings_is_refused() -> None:
    with pytest.raises(ValueError, match="temperatures"):
        guard().update([30.0, 30.0])


_TEMPERATURE = st.one_of(
    st.sampled_from((0.0, -0.0, 60.0, 79.999, 80.0, 89.9, 90.0, 95.0, 100.0, 120.0)),
    st.sampled_from((math.nan, math.inf, -math.inf)),
    st.floats(-50.0, 150.0),
)


@given(st.lists(st.tuples(_TEMPERATURE, _TEMPERATURE, _TEMPERATURE), min_size=1, max_size=8))
def test_a_cool_robot_costs_no_numpy_reduction_and_decides_as_the_full_update(
    readings: list[tuple[float, float, float]],
) -> None:
    """Every cycle of a cool robot — all joints OK, every reading below the warning — costs no
    numpy reduction in :meth:`ThermalGuard.update` and :meth:`ThermalGuard.derate` (each 5–10 µs
    on the bridge's loop thread, whose caches every cycle starts cold). Over any run of readings
    (NaN, ±inf, at and around each threshold) the levels, events, factors and derated commands
    are those of a guard that takes the full update every time (new thresholds, even the same
    ones, make the next update a full one)."""
    cool = guard()
    cmd = ImpedanceCommand.hold(np.zeros(3), 80.0, 3.0)
    reading = np.array([30.0, 45.0, 79.9])
    (events, same), reductions = numpy_reductions(lambda: (cool.update(reading), cool.derate(cmd)))
    assert events == [] and same is cmd and reductions == []
    fast, full = guard(), guard()
    for temperatures in readings:
        full.set_thresholds(warn_c=80.0, derate_start_c=90.0, shutdown_c=100.0, hysteresis_c=20.0)
        got, want = fast.update(np.array(temperatures)), full.update(np.array(temperatures))
        assert repr(got) == repr(want)
        assert fast.levels == full.levels
        assert fast.factors.tobytes() == full.factors.tobytes()
        assert fast.derate(cmd) == full.derate(cmd)
        assert (fast.derate(cmd) is cmd) == (full.derate(cmd) is cmd)
