"""Tests of the actuator physics: impedance law, power, brakes, friction, stall, thermal,
electrical, determinism, and agreement of the standalone and external-physics modes."""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointbus.drivers.sim.actuator_model import (
    ActuatorArrayModel,
    ActuatorParams,
)
from jointbus.messages.errors import (
    LengthMismatchError,
    LimitError,
    NonFiniteError,
    ValidationError,
)

HB50 = ActuatorParams.hb50()
QUIET = dataclasses.replace(HB50, position_noise=0.0, velocity_noise=0.0, torque_noise=0.0)
BRAKED = dataclasses.replace(QUIET, has_brake=True, brake_holding_torque=10.0)


def _names(n: int) -> list[str]:
    return [f"j{i}" for i in range(n)]


def _model(n: int = 1, params: ActuatorParams = QUIET, **kwargs: object) -> ActuatorArrayModel:
    model = ActuatorArrayModel(_names(n), params, **kwargs)  # type: ignore[arg-type]
    return model


def _on(n: int = 1) -> np.ndarray:
    return np.ones(n, dtype=bool)


def _run(model: ActuatorArrayModel, seconds: float, dt: float = 0.002) -> None:
    for _ in range(round(seconds / dt)):
        model.advance(dt)


# ---------------------------------------------------------------- impedance law


finite = st.floats(-50.0, 50.0)


@given(
    kp=st.floats(0.0, 500.0),
    kd=st.floats(0.0, 20.0),
    p_target=finite,
    p=finite,
    v_target=st.floats(-20.0, 20.0),
    v=st.floats(-17.9, 17.9),  # outside the roll-off band
    tau_ff=st.floats(-40.0, 40.0),
)
def test_impedance_law_matches_the_formula_and_clamps(
    kp: float, kd: float, p_target: float, p: float, v_target: float, v: float, tau_ff: float
) -> None:
    model = _model()
    model.set_power(_on())
    model.set_command(position=[p_target], velocity=[v_target], torque=[tau_ff], kp=[kp], kd=[kd])
    tau = model.actuate([p], [v], 0.002)[0]
    law = tau_ff + kp * (p_target - p) + kd * (v_target - v)
    expected = min(max(law, -24.0), 24.0)
    assert tau == pytest.approx(expected, rel=1e-12, abs=1e-9)
    assert abs(tau) <= 24.0


@given(v=st.floats(-40.0, 40.0), tau_ff=st.floats(-100.0, 100.0))
def test_torque_never_exceeds_the_limit_and_fades_near_the_velocity_limit(
    v: float, tau_ff: float
) -> None:
    model = _model()
    model.set_power(_on())
    model.set_command(torque=[tau_ff])
    tau = model.actuate([0.0], [v], 0.002)[0]
    assert abs(tau) <= 24.0
    if abs(v) >= 20.0 and tau != 0.0:
        assert math.copysign(1.0, tau) != math.copysign(1.0, v)  # only braking at the limit
    if abs(v) <= 18.0:
        assert tau == pytest.approx(max(-24.0, min(24.0, tau_ff)))


def test_free_rotor_under_full_torque_stays_below_the_velocity_limit() -> None:
    model = _model()
    model.set_power(_on())
    model.set_command(torque=[24.0])
    peak = 0.0
    for _ in range(1000):
        model.advance(0.002)
        peak = max(peak, float(model.velocities[0]))
    assert 19.0 < peak <= 20.0


# ---------------------------------------------------------------- power


def test_powered_off_gives_zero_motor_torque() -> None:
    model = _model(3)
    model.set_command(position=[1.0, -1.0, 2.0], kp=[80.0] * 3, kd=[3.0] * 3, torque=[5.0] * 3)
    torques = model.actuate([0.0, 0.0, 0.0], [1.0, 0.0, -1.0], 0.002)
    assert np.all(torques == 0.0)
    model.set_state([0.0, 0.0, 0.0])
    _run(model, 0.2)
    assert np.all(model.motor_torques == 0.0)
    assert np.all(model.positions == 0.0)  # nothing moves an unpowered, unloaded joint
    assert np.all(model.phase_currents == 0.0)


def test_unpowered_joint_feels_only_external_torque_and_friction() -> None:
    model = _model()
    model.set_command(position=[0.0], kp=[80.0])
    model.set_external_torque([2.0])  # gravity-like load, above the 0.48 N·m Coulomb friction
    _run(model, 0.1)
    # J·a = −τ_ext − friction: a = −(2 − 0.48)/0.0094 at low speed.
    assert model.velocities[0] < 0.0
    assert model.positions[0] < -0.05


def test_switching_power_on_applies_the_command() -> None:
    model = _model()
    model.set_command(torque=[3.0])
    assert model.actuate([0.0], [0.0], 0.002)[0] == 0.0
    model.set_power(_on())
    assert model.actuate([0.0], [0.0], 0.002)[0] == 3.0


# ---------------------------------------------------------------- brakes


def test_brake_holds_against_external_and_motor_torque_below_its_rating() -> None:
    model = _model(params=BRAKED, initial_positions=[0.3])
    model.set_power(_on())
    model.set_brakes(_on())
    model.set_external_torque([6.0])
    model.set_command(torque=[-4.0])  # net 10 N·m < 10 + 0.48 N·m
    _run(model, 1.0)
    assert model.positions[0] == 0.3
    assert model.velocities[0] == 0.0


def test_brake_slips_above_its_holding_torque_and_holds_again_when_released_load() -> None:
    model = _model(params=BRAKED)
    model.set_brakes(_on())
    model.set_external_torque([15.0])
    _run(model, 0.2)
    assert model.positions[0] < -0.01  # 15 > 10.48 N·m: slips
    model.set_external_torque([0.0])
    _run(model, 0.2)
    held = float(model.positions[0])
    _run(model, 0.5)
    assert model.positions[0] == held


def test_released_brake_lets_the_joint_move() -> None:
    model = _model(params=BRAKED)
    model.set_brakes(_on())
    model.set_external_torque([6.0])
    _run(model, 0.2)
    assert model.positions[0] == 0.0
    model.set_brakes(np.zeros(1, dtype=bool))
    _run(model, 0.2)
    assert model.positions[0] < -0.01


def test_brake_on_an_actuator_without_one_is_rejected_and_changes_nothing() -> None:
    model = ActuatorArrayModel(["hip", "knee"], [BRAKED, QUIET])
    with pytest.raises(LimitError) as info:
        model.set_brakes([True, True])
    assert info.value.joint == "knee"
    assert info.value.index == 1
    assert "knee" in str(info.value)
    assert not model.braked.any()
    model.set_brakes([True, False])
    assert model.braked.tolist() == [True, False]
    assert model.dry_friction.tolist() == [0.48 + 10.0, 0.48]


# ---------------------------------------------------------------- friction


def test_friction_decelerates_a_free_spinning_rotor_and_stops_it() -> None:
    model = _model()
    model.set_state([0.0], [10.0])
    speeds = []
    for _ in range(100):
        model.advance(0.002)
        speeds.append(float(model.velocities[0]))
    assert all(b <= a for a, b in itertools.pairwise(speeds))
    assert speeds[-1] == 0.0  # stopped exactly, no chatter around zero
    # J·dv/dt = −b·v − c  ⇒  t_stop = (J/b)·ln(1 + b·v0/c)
    t_stop = 0.0094 / 0.1 * math.log(1.0 + 0.1 * 10.0 / 0.48)
    stopped_at = 0.002 * (speeds.index(0.0) + 1)
    assert stopped_at == pytest.approx(t_stop, abs=0.003)
    at_rest = float(model.positions[0])
    _run(model, 0.2)
    assert model.positions[0] == at_rest


def test_torque_below_coulomb_friction_does_not_move_a_resting_rotor() -> None:
    model = _model()
    model.set_power(_on())
    model.set_command(torque=[0.47])
    _run(model, 0.5)
    assert model.positions[0] == 0.0
    model.set_command(torque=[0.6])
    _run(model, 0.1)
    assert model.positions[0] > 0.0


def test_pd_settles_within_the_coulomb_dead_band() -> None:
    model = _model()
    model.set_power(_on())
    model.set_command(position=[1.0], kp=[80.0], kd=[3.0])
    _run(model, 1.0)
    # The rest point lies on the edge of the dead band, approached asymptotically.
    assert abs(1.0 - model.positions[0]) <= 0.48 / 80.0 + 1e-9
    assert abs(model.velocities[0]) < 1e-6


def test_advance_subdivides_into_substeps() -> None:
    coarse, fine = _model(), _model()
    for model in (coarse, fine):
        model.set_power(_on())
        model.set_command(position=[1.0], kp=[80.0], kd=[1.0])
    coarse.advance(0.02)
    for _ in range(40):
        fine.advance(0.0005)
    assert coarse.positions[0] == pytest.approx(fine.positions[0], rel=1e-9)
    assert coarse.time == pytest.approx(0.02)


# ---------------------------------------------------------------- stall


def test_stall_sets_when_blocked_and_saturated_and_clears_when_freed() -> None:
    model = _model(2)
    model.set_power(_on(2))
    model.set_command(position=[2.0, 2.0], kp=[80.0, 80.0], kd=[1.0, 1.0])
    model.set_blocked([True, False])
    _run(model, 0.4)  # < stall_time 0.5 s
    assert not model.stalled.any()
    _run(model, 0.2)
    assert model.stalled.tolist() == [True, False]  # the free joint moved instead
    assert model.positions[0] == 0.0
    model.set_blocked([False, False])
    _run(model, 0.02)
    assert not model.stalled[0]
    assert model.positions[0] > 0.0


def test_large_error_while_still_counts_as_stall_even_below_saturation() -> None:
    model = _model()
    model.set_power(_on())
    model.set_command(position=[0.4], kp=[10.0])  # 4 N·m, not saturated; error 0.4 > 0.3 rad
    model.set_blocked(_on())
    _run(model, 0.6)
    assert model.stalled[0]


def test_stall_timed_at_the_protection_period_sets_after_stall_time_and_clears() -> None:
    """Stall detection every 10 ms (as MujocoWorld's drives run it): still 0.5 s to set, give or
    take one period, and cleared within a period of the joint moving again."""
    model = _model(2, protection_period=0.01)
    model.set_power(_on(2))
    model.set_command(position=[2.0, 2.0], kp=[80.0, 80.0], kd=[1.0, 1.0])
    model.set_blocked([True, False])
    _run(model, 0.49)
    assert not model.stalled.any()
    _run(model, 0.02)
    assert model.stalled.tolist() == [True, False]
    model.set_blocked([False, False])
    _run(model, 0.012)
    assert not model.stalled[0]


def test_powered_off_joint_does_not_stall() -> None:
    model = _model()
    model.set_command(position=[2.0], kp=[80.0])
    model.set_blocked(_on())
    _run(model, 1.0)
    assert not model.stalled[0]


# ---------------------------------------------------------------- thermal


HOT = dataclasses.replace(QUIET, motor_thermal_capacity=2.0)  # τ = 3 s: heats in well under 1 s


def test_thermal_heats_shuts_down_holds_off_through_hysteresis_and_recovers() -> None:
    model = _model(params=HOT)
    model.set_power(_on())
    model.set_command(position=[3.0], kp=[80.0])  # saturated: 40 A, 320 W copper loss
    model.set_blocked(_on())
    temperatures = []
    while model.enabled[0]:
        model.advance(0.002)
        temperatures.append(float(model.motor_temperatures[0]))
        assert len(temperatures) < 2000
    assert temperatures[0] < temperatures[-1]
    assert all(a <= b for a, b in itertools.pairwise(temperatures))
    assert temperatures[-2] < 120.0 <= temperatures[-1]
    assert model.motor_overheated[0]
    assert model.powered[0]  # still commanded on; the protection is what cut torque
    model.advance(0.002)
    assert model.motor_torques[0] == 0.0
    # Cools with no torque; stays off until 120 − 20 = 100 °C.
    while model.motor_overheated[0]:
        assert model.motor_temperatures[0] > 100.0
        assert model.motor_torques[0] == 0.0
        model.advance(0.002)
    assert model.motor_temperatures[0] <= 100.0
    assert model.enabled[0]
    model.advance(0.002)
    assert model.motor_torques[0] == 24.0


def _trip(model: ActuatorArrayModel) -> tuple[float, float]:
    """Heat a blocked, saturated joint until its winding protection cuts the torque; the
    (time s, temperature °C) at which it did."""
    model.set_power(_on())
    model.set_command(position=[3.0], kp=[80.0])  # saturated: 40 A, 320 W copper loss
    model.set_blocked(_on())
    while model.enabled[0]:
        model.advance(0.002)
        assert model.time < 4.0
    return model.time, float(model.motor_temperatures[0])


def test_protections_at_a_lower_rate_trip_at_the_same_temperature() -> None:
    """The thermal model stepped every 10 ms on the mean heat: the same exact first-order curve
    as every 2 ms, so the protection trips at its threshold, at most one period (and the heat of
    one period: 160 K/s here) later."""
    fast_time, fast_temperature = _trip(_model(params=HOT))
    slow = _model(params=HOT, protection_period=0.01)
    slow_time, slow_temperature = _trip(slow)
    assert 120.0 <= fast_temperature < 120.0 + 160.0 * 0.002
    assert 120.0 <= slow_temperature < 120.0 + 160.0 * 0.01
    assert fast_time <= slow_time < fast_time + 0.01 + 1e-9
    assert slow.motor_overheated[0]
    slow.advance(0.002)
    assert slow.motor_torques[0] == 0.0
    # On the common 10 ms instants the two curves are the same (constant power, exact step).
    fast, slow = _model(params=HOT), _model(params=HOT, protection_period=0.01)
    for model in (fast, slow):
        model.set_power(_on())
        model.set_command(torque=[12.0])
        model.set_blocked(_on())
    for _ in range(50):
        for model in (fast, slow):
            model.advance(0.01)
        assert slow.motor_temperatures[0] == pytest.approx(fast.motor_temperatures[0], rel=1e-12)
        assert slow.driver_temperatures[0] == pytest.approx(fast.driver_temperatures[0], rel=1e-12)


def test_lower_rate_thermal_uses_the_heat_of_the_whole_period() -> None:
    """A torque on for 8 ms and off for 12 ms, period after period: the 10 ms protection sees
    the mean heat, not the torque of the moment it runs (which here is always off)."""
    fast, slow = _model(params=HOT), _model(params=HOT, protection_period=0.01)
    for model in (fast, slow):
        model.set_power(_on())
        model.set_blocked(_on())
    for k in range(500):
        on = k % 10 < 4
        for model in (fast, slow):
            model.set_command(torque=[24.0 if on else 0.0])
            model.advance(0.002)
    rise = float(fast.motor_temperatures[0]) - 25.0
    assert rise > 20.0
    assert float(slow.motor_temperatures[0]) - 25.0 == pytest.approx(rise, rel=0.02)


def test_protection_period_is_checked() -> None:
    with pytest.raises(LimitError, match="protection_period"):
        _model(protection_period=0.001)  # shorter than the 2 ms supervision
    with pytest.raises(LimitError, match="protection_period"):
        _model(protection_period=math.nan)


def test_driver_over_temperature_also_cuts_torque() -> None:
    model = _model()
    model.set_power(_on())
    model.set_command(torque=[5.0])
    model.set_temperatures(driver=[100.0])
    assert model.driver_overheated[0]
    assert not model.enabled[0]
    assert model.actuate([0.0], [0.0], 0.002)[0] == 0.0


def test_sustained_current_heats_the_hb50_winding_slowly() -> None:
    model = _model(params=HB50)
    model.set_power(_on())
    model.set_command(torque=[8.0])
    model.set_blocked(_on())
    model.advance(4.0)
    rise = float(model.motor_temperatures[0]) - 25.0
    # P = (8/0.6)²·0.2 ≈ 35.6 W into 120 J/K with τ = 180 s: ≈ 1.2 K in 4 s.
    power = (8.0 / 0.6) ** 2 * 0.2
    expected = power * 1.5 * (1.0 - math.exp(-4.0 / 180.0))
    assert rise == pytest.approx(expected, rel=1e-6)


# ---------------------------------------------------------------- electrical


def test_current_and_bus_current_follow_torque_and_power() -> None:
    model = _model(2, bus_voltage=50.0)
    model.set_power(_on(2))
    model.set_command(torque=[12.0, -12.0])
    model.actuate([0.0, 0.0], [0.0, 10.0], 0.002)
    current = 12.0 / 0.6
    assert model.phase_currents.tolist() == pytest.approx([current, -current])
    losses = current**2 * 0.2 + current**2 * 0.01 + 0.6
    expected = [losses / 50.0, (losses - 12.0 * 10.0) / 50.0]
    assert model.bus_currents.tolist() == pytest.approx(expected)
    assert model.bus_currents[1] < 0.0  # braking a moving joint regenerates
    assert model.total_bus_current == pytest.approx(sum(expected))


def test_an_unpowered_actuator_draws_nothing() -> None:
    model = _model()
    model.actuate([0.0], [3.0], 0.002)
    assert model.bus_currents[0] == 0.0


# ---------------------------------------------------------------- noise and determinism


def _closed_loop(seed: int, steps: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """A velocity loop closed on the *measured* (noisy) velocity, so noise shapes the motion."""
    model = ActuatorArrayModel(_names(4), HB50, seed=seed)
    model.set_power(_on(4))
    model.set_external_torque([1.0, -1.0, 0.5, 0.0])
    true_p, measured = [], []
    for _ in range(steps):
        m = model.measure()
        model.set_command(torque=-2.0 * m.velocity + 0.5)
        model.advance(0.002)
        true_p.append(model.positions.copy())
        measured.append(np.concatenate([m.position, m.velocity, m.torque]))
    return np.array(true_p), np.array(measured)


def test_same_seed_gives_bit_identical_trajectories() -> None:
    p1, m1 = _closed_loop(7)
    p2, m2 = _closed_loop(7)
    assert np.array_equal(p1, p2)
    assert np.array_equal(m1, m2)


def test_different_seeds_give_different_noise() -> None:
    p1, m1 = _closed_loop(7)
    p2, m2 = _closed_loop(8)
    assert not np.array_equal(m1, m2)
    assert not np.array_equal(p1, p2)


def test_noise_has_the_configured_spread() -> None:
    model = ActuatorArrayModel(_names(1), HB50, seed=3)
    samples = np.array([model.measure().velocity[0] for _ in range(4000)])
    assert samples.std() == pytest.approx(0.38, rel=0.05)
    assert abs(samples.mean()) < 0.05


def test_zero_noise_reports_the_true_state() -> None:
    model = _model(initial_positions=[0.25])
    model.set_state([0.25], [1.5])
    m = model.measure()
    assert m.position[0] == 0.25
    assert m.velocity[0] == 1.5
    assert m.torque[0] == 0.0


# ---------------------------------------------------------------- the two modes agree


def test_external_physics_mode_returns_the_standalone_torques_for_the_same_state() -> None:
    n = 3
    standalone = ActuatorArrayModel(_names(n), QUIET, max_substep=0.002)
    external = ActuatorArrayModel(_names(n), QUIET, max_substep=0.002)
    for model in (standalone, external):
        model.set_power(_on(n))
        model.set_command(
            position=[1.0, -0.5, 3.0], velocity=[0.0, 1.0, 0.0], torque=[0.2, 0.0, -0.1],
            kp=[80.0, 40.0, 200.0], kd=[3.0, 1.0, 2.0],
        )
    standalone.set_external_torque([0.5, -1.0, 2.0])
    for _ in range(200):
        p, v = standalone.positions.copy(), standalone.velocities.copy()
        standalone.advance(0.002)  # one substep: torque computed at (p, v)
        torque = external.actuate(p, v, 0.002)
        assert np.array_equal(torque, standalone.motor_torques)
        assert np.array_equal(external.phase_currents, standalone.phase_currents)
        assert np.array_equal(external.motor_temperatures, standalone.motor_temperatures)
    assert np.any(standalone.motor_torques != 0.0)


# ---------------------------------------------------------------- the law inside an engine


@given(
    kp=st.floats(0.0, 500.0),
    kd=st.floats(0.0, 20.0),
    p_target=finite,
    p=finite,
    v_target=st.floats(-20.0, 20.0),
    v=st.floats(-17.9, 17.9),
    tau_ff=st.floats(-40.0, 40.0),
    powered=st.booleans(),
)
def test_drive_law_terms_give_the_actuate_torques_below_the_roll_off_band(
    kp: float,
    kd: float,
    p_target: float,
    p: float,
    v_target: float,
    v: float,
    tau_ff: float,
    powered: bool,
) -> None:
    """What an engine computes from DriveLaw ((offset − kp·p) − kd·v clamped to ±torque_max) is
    what actuate returns, bit for bit, wherever speed_sq_bound says the terms apply."""
    model = _model()
    model.set_power(np.array([powered]))
    model.set_command(position=[p_target], velocity=[v_target], torque=[tau_ff], kp=[kp], kd=[kd])
    law = model.drive_law
    assert v * v < law.speed_sq_bound
    demand = (float(law.offset[0]) - float(law.kp[0]) * p) - float(law.kd[0]) * v
    limit = float(law.torque_max[0])
    engine = min(max(demand, -limit), limit)
    assert model.actuate([p], [v], 0.002)[0] == engine


def test_speed_sq_bound_ends_where_the_slowest_roll_off_band_starts() -> None:
    slow = dataclasses.replace(QUIET, velocity_limit=10.0, torque_rolloff_band=1.0)
    model = ActuatorArrayModel(_names(2), [QUIET, slow])
    assert model.drive_law.speed_sq_bound == pytest.approx(9.0**2, rel=1e-8)
    assert model.drive_law.speed_sq_bound < 9.0**2  # a hair inside: never in the band


def test_drive_state_version_changes_with_power_brakes_and_protections() -> None:
    model = _model(params=BRAKED)
    seen = model.drive_state_version
    model.set_power(_on())
    assert model.drive_state_version != seen
    assert model.drive_law.torque_max.tolist() == [24.0]
    seen = model.drive_state_version
    model.set_brakes(_on())
    assert model.drive_state_version != seen
    assert model.dry_friction[0] == pytest.approx(10.48)
    seen = model.drive_state_version
    model.set_temperatures(motor=[130.0])
    assert model.drive_state_version != seen
    assert model.drive_law.torque_max.tolist() == [0.0]
    with pytest.raises(ValueError):
        model.drive_law.offset[0] = 1.0  # read-only views


def test_applied_supervises_like_actuate() -> None:
    """An engine that applied the law itself and reports it with applied() leaves the model in
    the state actuate would: currents, temperatures, stall, time."""
    n = 2
    by_actuate = _model(n, params=HOT, protection_period=0.01)
    by_engine = _model(n, params=HOT, protection_period=0.01)
    for model in (by_actuate, by_engine):
        model.set_power(_on(n))
        model.set_command(position=[3.0, 0.1], kp=[80.0, 80.0], kd=[2.0, 2.0])
    p, v = np.array([0.0, 0.1]), np.zeros(n)
    for _ in range(300):
        for _ in range(4):
            torques = by_actuate.actuate(p, v, 0.0005).copy()
        assert by_engine.substeps_to_supervision(0.0005) == 4
        by_engine.applied(p, v, torques, 0.0005, 4)
    assert by_engine.time == by_actuate.time  # the same sums
    np.testing.assert_array_equal(by_engine.motor_torques, by_actuate.motor_torques)
    np.testing.assert_array_equal(by_engine.phase_currents, by_actuate.phase_currents)
    np.testing.assert_allclose(by_engine.bus_currents, by_actuate.bus_currents, rtol=1e-12)
    np.testing.assert_allclose(
        by_engine.motor_temperatures, by_actuate.motor_temperatures, rtol=1e-12
    )
    assert by_engine.motor_temperatures[0] > 100.0
    assert by_engine.stalled.tolist() == by_actuate.stalled.tolist() == [True, False]
    with pytest.raises(NonFiniteError) as info:
        by_engine.applied(p, v, np.array([0.0, math.nan]), 0.002)
    assert (info.value.field, info.value.index) == ("torques", 1)
    with pytest.raises(LimitError, match="substeps"):
        by_engine.applied(p, v, torques, 0.0005, 0)
    by_engine.applied(p, v, torques, 0.0005)
    assert by_engine.substeps_to_supervision(0.0005) == 3  # one of four already done
    assert by_engine.substeps_to_supervision(0.002) == 1
    with pytest.raises(LimitError):
        by_engine.substeps_to_supervision(0.0)


_FIELDS = ("position", "velocity", "torque", "kp", "kd")


@given(
    field=st.sampled_from(_FIELDS),
    index=st.integers(0, 2),
    bad=st.sampled_from([math.nan, math.inf, -math.inf, -1.0]),
)
def test_a_whole_command_with_a_bad_value_names_field_and_joint_and_changes_nothing(
    field: str, index: int, bad: float
) -> None:
    """The per-step command (all five fields as float64 arrays, the driver's case) is checked
    by one finiteness test; a bad value still gets the error of the field-by-field check."""
    model = ActuatorArrayModel(["hip", "thigh", "knee"], QUIET)
    model.set_power(_on(3))
    good = {name: np.full(3, 0.5) for name in _FIELDS}
    model.set_command(**good)
    before = model.actuate([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], 0.002).copy()
    command = {name: np.full(3, 0.25) for name in _FIELDS}
    command[field][index] = bad
    if bad == -1.0 and field not in ("kp", "kd"):
        model.set_command(**command)  # a negative target is a fine target
        return
    with pytest.raises(ValidationError) as info:
        model.set_command(**command)
    error = info.value
    assert isinstance(error, NonFiniteError if math.isnan(bad) or math.isinf(bad) else LimitError)
    assert (error.field, error.index, error.joint) == (
        field,
        index,
        ("hip", "thigh", "knee")[index],
    )
    np.testing.assert_array_equal(model.actuate([0.0] * 3, [0.0] * 3, 0.002), before)
    np.testing.assert_array_equal(model.drive_law.offset, np.full(3, 0.5 + 0.5 * 0.5 * 2))


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_a_whole_command_whose_terms_overflow_is_still_accepted() -> None:
    model = _model()
    model.set_power(_on())
    huge = np.array([1e200])
    model.set_command(
        position=huge, velocity=np.zeros(1), torque=np.zeros(1), kp=huge, kd=np.zeros(1)
    )
    assert model.actuate([0.0], [0.0], 0.002)[0] == 24.0


def test_external_mode_does_not_integrate() -> None:
    model = _model()
    model.set_power(_on())
    model.set_command(torque=[10.0])
    model.actuate([0.5], [0.0], 0.002)
    model.actuate([0.5], [0.0], 0.002)
    assert model.positions[0] == 0.5
    assert model.velocities[0] == 0.0
    assert model.time == pytest.approx(0.004)
    assert model.motor_temperatures[0] > 25.0


# ---------------------------------------------------------------- validation


def _with(field: str, value: float) -> ActuatorParams:
    changes: dict[str, Any] = {field: value}
    return dataclasses.replace(HB50, **changes)


POSITIVE_FIELDS = [
    "rotor_inertia", "torque_limit", "velocity_limit", "torque_constant", "phase_resistance",
    "motor_thermal_capacity", "motor_thermal_resistance", "driver_thermal_capacity",
    "driver_thermal_resistance", "stall_velocity", "stall_time",
]
NON_NEGATIVE_FIELDS = ["viscous_friction", "coulomb_friction", "position_noise",
                       "velocity_noise", "torque_noise"]


@pytest.mark.parametrize("field", POSITIVE_FIELDS)
@given(value=st.floats(max_value=0.0, allow_nan=False, allow_infinity=False))
def test_params_reject_non_positive_values_naming_field_and_value(
    field: str, value: float
) -> None:
    with pytest.raises(ValueError) as info:
        _with(field, value)
    assert field in str(info.value)
    assert repr(value) in str(info.value)


@pytest.mark.parametrize("field", NON_NEGATIVE_FIELDS)
@given(value=st.floats(max_value=-1e-300, allow_nan=False, allow_infinity=False))
def test_params_reject_negative_values(field: str, value: float) -> None:
    with pytest.raises(LimitError) as info:
        _with(field, value)
    assert info.value.field == field


@pytest.mark.parametrize("field", POSITIVE_FIELDS + NON_NEGATIVE_FIELDS)
def test_zero_allowed_only_where_it_makes_sense(field: str) -> None:
    if field in NON_NEGATIVE_FIELDS:
        _with(field, 0.0)
    else:
        with pytest.raises(LimitError):
            _with(field, 0.0)


def test_params_reject_nan_and_out_of_family_values() -> None:
    with pytest.raises(NonFiniteError):
        dataclasses.replace(HB50, ambient_temperature=math.nan)
    with pytest.raises(LimitError, match="140"):
        dataclasses.replace(HB50, motor_shutdown_temperature=150.0)
    with pytest.raises(LimitError, match="brake_holding_torque"):
        dataclasses.replace(HB50, has_brake=True)
    with pytest.raises(LimitError, match="torque_rolloff_band"):
        dataclasses.replace(HB50, torque_rolloff_band=25.0)
    with pytest.raises(ValidationError):
        dataclasses.replace(HB50, rotor_inertia="heavy")  # type: ignore[arg-type]


def test_hb50_preset_carries_the_published_figures() -> None:
    p = HB50
    assert (p.rotor_inertia, p.viscous_friction, p.coulomb_friction) == (0.0094, 0.1, 0.48)
    assert (p.torque_limit, p.velocity_limit) == (24.0, 20.0)
    assert (p.driver_shutdown_temperature, p.driver_shutdown_hysteresis) == (100.0, 20.0)
    assert p.motor_shutdown_hysteresis == 20.0
    assert p.motor_shutdown_temperature <= 140.0
    assert (p.position_noise, p.velocity_noise, p.torque_noise) == (6.4e-4, 0.38, 0.0052)


def test_bad_command_names_the_joint_and_changes_nothing() -> None:
    model = ActuatorArrayModel(["hip", "thigh", "knee"], QUIET)
    model.set_command(position=[0.1, 0.2, 0.3], kp=[1.0, 1.0, 1.0])
    with pytest.raises(NonFiniteError) as info:
        model.set_command(position=[9.0, 9.0, 9.0], kp=[1.0, math.nan, 1.0])
    assert (info.value.joint, info.value.index, info.value.field) == ("thigh", 1, "kp")
    assert "'thigh' (index 1)" in str(info.value)
    with pytest.raises(LimitError) as info2:
        model.set_command(kd=[0.0, 0.0, -1.0])
    assert (info2.value.joint, info2.value.index) == ("knee", 2)
    with pytest.raises(LengthMismatchError):
        model.set_command(position=[1.0, 2.0])
    model.set_power(_on(3))
    torque = model.actuate([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], 0.002)
    assert torque.tolist() == pytest.approx([0.1, 0.2, 0.3])  # the old command


def test_bad_masks_and_steps_are_rejected() -> None:
    model = _model(2)
    with pytest.raises(ValidationError):
        model.set_power([1, 0])  # not booleans
    with pytest.raises(LengthMismatchError):
        model.set_power([True])
    with pytest.raises(LimitError):
        model.advance(0.0)
    with pytest.raises(LimitError):
        model.advance(math.inf)
    with pytest.raises(LengthMismatchError):
        ActuatorArrayModel(_names(2), [QUIET])
    with pytest.raises(ValidationError):
        ActuatorArrayModel(["a", "a"], QUIET)
    assert not model.powered.any()


def test_state_views_are_read_only() -> None:
    model = _model()
    with pytest.raises(ValueError):
        model.positions[0] = 1.0
    with pytest.raises(ValueError):
        model.stalled[0] = True
