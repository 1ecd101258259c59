"""Vectorised physics of N torque-controlled actuators (MD-series-like), the simulator's core.

Where it sits: :mod:`jointbus.drivers.sim`, above :mod:`.thermal`; the ``sim://`` driver wraps
:class:`ActuatorArrayModel` in the ``ActuatorArray`` API, and a MuJoCo-backed simulation uses it
as its actuator layer. It imports only numpy and the message layer's validation errors.

What is modelled, per actuator, all as numpy arrays of length N (no per-joint Python loop in the
step, so 12 and 256 actuators cost about the same):

* The drive's impedance law, ``τ = τ_ff + kp·(p* − p) + kd·(v* − v)``, clamped to the torque
  limit. Near the velocity limit the torque available *in the direction of motion* falls linearly
  to zero over ``torque_rolloff_band`` (the back-EMF/speed limit of a real drive, and what keeps a
  joint from exceeding ``velocity_limit``); braking torque stays available. No torque when powered
  off or when a thermal protection has tripped.
* Rigid-rotor dynamics ``J·a = τ_motor − friction − τ_external`` with reflected rotor inertia
  ``J``, viscous friction ``b·v`` and Coulomb friction ``c·sign(v)``. Both frictions are integrated
  *implicitly*: viscous as ``v/(1 + h·b/J)``, Coulomb as a velocity impulse ``h·c/J`` that can stop
  the rotor but never reverse it (a soft threshold). This is the exact semi-implicit treatment of
  dry friction, so the rotor sticks at rest under torques below ``c`` without the chatter of
  ``sign(v)`` and without the stiffness of a ``tanh`` smoothing. A brake is the same thing with a
  larger threshold (``c + brake_holding_torque``): a braked joint does not move under any net
  torque up to that level, and slips with that friction above it. The drive keeps obeying its
  command while braked (a motor fighting its brake heats up and can stall); switch power off to
  rest it.
* Electrical: phase current ``I = τ/k_t``, copper loss ``I²·R``, drive loss ``I²·R_drive +
  P_idle``, electrical power ``P = I²R + I²R_drive + P_idle + τ·ω`` drawn from the bus, bus current
  ``P/V_bus`` (negative when regenerating).
* Thermal (:class:`.thermal.ThermalModel`): winding and driver temperatures, shutdown at their
  thresholds, recovery after the hysteresis.
* Stall detection: torque saturated, or a large position error under a position gain, while the
  joint is (nearly) still, for longer than ``stall_time`` → ``stalled``; clears when that no longer
  holds.
* Sensor noise on the *reported* position, velocity and torque (1σ per actuator, zero allowed),
  drawn from a seeded :class:`numpy.random.Generator`: same seed and same inputs give
  bit-identical measurements. The drive's own loop uses the true state, because the published σ's
  describe the noise a controller sees on the bus, not the drive's far finer encoder loop.

Rates, each as slow as the physics it models allows (a drive's supervisor, too, runs slower than
its current loop):

* the mechanics (impedance law, friction) at ``max_substep`` (0.5 ms, 2 kHz) or faster whatever
  the caller's rate (:meth:`ActuatorArrayModel.advance` subdivides);
* the electrical state (phase and bus current) at ``monitor_period`` (2 ms), from the torque of
  the substep that completes it, so every 500 Hz read reports the current of its own cycle; the
  heat of each period (``I²·R``) is added up as it goes;
* the protections — winding and drive temperatures with their shutdowns, stall detection — at
  ``protection_period`` on the heat *averaged* over it: by default with every supervision
  (2 ms); :class:`~jointbus.drivers.sim.mujoco_world.MujocoWorld`'s drives use 10 ms. The thermal
  nodes' time constants are 80–180 s (hb50), so a 10 ms step of the exact first-order solution
  fed with the mean power is as good as a 2 ms one (for a constant power it is the same curve,
  sampled less often); a protection trips at the same temperature (its threshold), at most one
  period later. Stall needs its condition for ``stall_time`` (0.5 s) and is timed in whole
  periods. Power and temperature changes by command take effect at once (the heat up to that
  instant is integrated first). Between two runs the temperatures, shutdown and stall flags are
  those of the last one.

Three ways to use it share the same law and supervision:

1. standalone — :meth:`~ActuatorArrayModel.advance` integrates the rotors, with an optional
   external load torque and a "blocked" mask (a joint held by an obstacle, for stall tests);
2. actuator layer over an external physics engine — :meth:`~ActuatorArrayModel.actuate` takes the
   engine's measured positions/velocities and returns the motor torques to apply, updating
   current, thermal and stall state (at their periods, as in standalone mode) without
   integrating anything. The engine applies the
   rotor inertia, viscous friction and :attr:`~ActuatorArrayModel.dry_friction` (Coulomb plus
   brake) itself (MuJoCo: ``dof_armature``, ``dof_damping``, ``dof_frictionloss``), because a
   brake or dry friction written as an explicit torque would chatter in the engine's integrator;
3. the clamp inside the engine — an engine that can clamp an actuator's force (MuJoCo's
   ``forcerange``) takes the law's terms from :attr:`~ActuatorArrayModel.drive_law`
   (``τ = (offset − kp·p) − kd·v``, the same operations in the same order as :meth:`actuate`,
   clamped to ``±torque_max``: exact while every joint is slower than its roll-off band, which
   :attr:`DriveLaw.speed_sq_bound` tells) and reports what it applied with
   :meth:`~ActuatorArrayModel.applied`, which runs the same supervision at the same rates. The
   engine's substep then costs four numpy calls instead of (2)'s twenty (the state checked and
   copied, the speed-dependent bounds, the clamp), and the torques are bit for bit (2)'s.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, TypeGuard

import numpy as np
import numpy.typing as npt

from jointbus.drivers.sim.thermal import ThermalModel
from jointbus.messages.errors import (
    LengthMismatchError,
    LimitError,
    NonFiniteError,
    ValidationError,
)

__all__ = [
    "MOTOR_SHUTDOWN_MAX",
    "ActuatorArrayModel",
    "ActuatorMeasurement",
    "ActuatorParams",
    "DriveLaw",
]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

MOTOR_SHUTDOWN_MAX: Final[float] = 140.0
"""Highest motor shutdown temperature an MD-series drive accepts, °C."""

_MODEL: Final[str] = "ActuatorArrayModel"
#: ``actuate`` supervises once the pending time reaches this fraction of ``monitor_period``
#: (four 0.5 ms substeps may add up to a hair under 2 ms in floating point).
_MONITOR_DUE: Final[float] = 1.0 - 1e-9
#: A speed this far (relative) below the roll-off band counts as outside it in
#: :attr:`DriveLaw.speed_sq_bound`, so that round-off in ``(v_limit − v)·gain`` can never make the
#: band's bound a hair below the torque limit where the engine's constant clamp is used.
_BAND_MARGIN: Final[float] = 1e-9


@dataclass(frozen=True, slots=True)
class ActuatorParams:
    """Scalar parameters of one actuator, SI units (angles in rad, temperatures in °C).

    Build from :meth:`hb50` and change what differs with :func:`dataclasses.replace`; every value
    is checked on construction (a bad one raises :class:`~jointbus.messages.errors.LimitError` or
    :class:`~jointbus.messages.errors.NonFiniteError` — both ``ValueError`` — naming the field and
    value). Torques, inertia and velocities are at the actuator *output* (after the gearbox).
    """

    rotor_inertia: float
    """Reflected rotor inertia (armature), kg·m² (> 0)."""
    viscous_friction: float
    """Viscous friction coefficient, N·m·s/rad (≥ 0)."""
    coulomb_friction: float
    """Coulomb (dry) friction torque, N·m (≥ 0); also the breakaway torque from rest."""
    torque_limit: float
    """Output torque limit of the drive, N·m (> 0)."""
    velocity_limit: float
    """Speed at which the drive can no longer push further, rad/s (> 0)."""
    torque_rolloff_band: float
    """Speed band below ``velocity_limit`` over which the torque available in the direction of
    motion falls from ``torque_limit`` to zero, rad/s (> 0, ≤ ``velocity_limit``)."""
    torque_constant: float
    """Output torque per phase (q-axis) ampere, N·m/A (> 0; includes the gear ratio)."""
    phase_resistance: float
    """Winding resistance such that copper loss = I²·R for q-axis current I, Ω (> 0)."""
    motor_thermal_capacity: float
    """Heat capacity of the winding node, J/K (> 0)."""
    motor_thermal_resistance: float
    """Thermal resistance winding → ambient, K/W (> 0)."""
    motor_shutdown_temperature: float
    """Winding temperature at which the drive switches off, °C (≤ 140, the MD-series maximum)."""
    motor_shutdown_hysteresis: float
    """The winding must cool this far below the shutdown temperature to recover, K (> 0)."""
    driver_conduction_resistance: float
    """Drive-stage (MOSFET) conduction resistance: drive loss = I²·R + idle power, Ω (≥ 0)."""
    driver_idle_power: float
    """Drive-stage loss while powered, independent of current, W (≥ 0)."""
    driver_thermal_capacity: float
    """Heat capacity of the drive electronics, J/K (> 0)."""
    driver_thermal_resistance: float
    """Thermal resistance drive electronics → ambient, K/W (> 0)."""
    driver_shutdown_temperature: float
    """Drive temperature at which it switches off, °C (MD series: 100)."""
    driver_shutdown_hysteresis: float
    """The drive must cool this far below its shutdown temperature to recover, K (> 0)."""
    ambient_temperature: float
    """Temperature of the surroundings both thermal nodes cool to, °C."""
    has_brake: bool
    """Whether the actuator has a holding brake."""
    brake_holding_torque: float
    """Torque the engaged brake holds without slipping, N·m (> 0 if ``has_brake``, else ≥ 0)."""
    stall_velocity: float
    """Speed below which a joint counts as not moving for stall detection, rad/s (> 0)."""
    stall_position_error: float
    """Position error (with kp > 0) that counts as "large" for stall detection, rad (> 0)."""
    stall_time: float
    """How long the stall condition must last before ``stalled`` is set, s (> 0)."""
    position_noise: float
    """1σ noise on the reported position, rad (≥ 0)."""
    velocity_noise: float
    """1σ noise on the reported velocity, rad/s (≥ 0)."""
    torque_noise: float
    """1σ noise on the reported torque, N·m (≥ 0)."""

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.name == "has_brake":
                if not isinstance(value, bool):
                    raise ValidationError("ActuatorParams", "has_brake", value, "a bool")
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValidationError("ActuatorParams", field.name, value, "a number")
            if not math.isfinite(value):
                raise NonFiniteError("ActuatorParams", field.name, value, "a finite number")
            if field.name in _POSITIVE and not value > 0.0:
                raise LimitError("ActuatorParams", field.name, value, "> 0")
            if field.name in _NON_NEGATIVE and not value >= 0.0:
                raise LimitError("ActuatorParams", field.name, value, ">= 0")
        if self.torque_rolloff_band > self.velocity_limit:
            raise LimitError(
                "ActuatorParams",
                "torque_rolloff_band",
                self.torque_rolloff_band,
                f"<= velocity_limit ({self.velocity_limit} rad/s)",
            )
        if self.motor_shutdown_temperature > MOTOR_SHUTDOWN_MAX:
            raise LimitError(
                "ActuatorParams",
                "motor_shutdown_temperature",
                self.motor_shutdown_temperature,
                f"<= {MOTOR_SHUTDOWN_MAX} °C (MD-series maximum)",
            )
        for node in ("motor", "driver"):
            trip = getattr(self, f"{node}_shutdown_temperature")
            hysteresis = getattr(self, f"{node}_shutdown_hysteresis")
            if not trip - hysteresis > self.ambient_temperature:
                raise LimitError(
                    "ActuatorParams",
                    f"{node}_shutdown_temperature",
                    trip,
                    f"shutdown − hysteresis ({trip - hysteresis} °C) above ambient "
                    f"({self.ambient_temperature} °C), or the {node} could never recover",
                )
        if self.has_brake and not self.brake_holding_torque > 0.0:
            raise LimitError(
                "ActuatorParams",
                "brake_holding_torque",
                self.brake_holding_torque,
                "> 0 when has_brake is True",
            )

    @classmethod
    def hb50(cls) -> ActuatorParams:
        """An MD-series actuator as used on the Honey Badger 5.0 look-alike.

        From ``hb50-facts.md``: rotor inertia 0.0094 kg·m², viscous 0.1 N·m·s/rad, Coulomb
        0.48 N·m, torque limit 24 N·m, velocity limit 20 rad/s, driver shutdown 100 °C and both
        hysteresis values (20 °C), sensor noise (6.4e-4 rad, 0.38 rad/s, 0.0052 N·m).

        *Chosen here* (plausible MD80-with-6:1-gearbox figures, not published for this robot):
        torque constant 0.6 N·m/A at the output (≈ 40 A at the 24 N·m limit), phase resistance
        0.2 Ω, winding 120 J/K and 1.5 K/W (≈ 3 min time constant; ≈ 8 N·m continuous stays
        below 80 °C, the torque limit trips the winding in about a minute), motor shutdown
        120 °C (below the 140 °C maximum), drive stage 0.01 Ω + 0.6 W idle, 20 J/K, 4 K/W, ambient
        25 °C, torque roll-off over the last 2 rad/s below the velocity limit, no brake, stall
        after 0.5 s with |v| < 0.05 rad/s and torque saturated or error > 0.3 rad.
        """
        return cls(
            rotor_inertia=0.0094,
            viscous_friction=0.1,
            coulomb_friction=0.48,
            torque_limit=24.0,
            velocity_limit=20.0,
            torque_rolloff_band=2.0,
            torque_constant=0.6,
            phase_resistance=0.2,
            motor_thermal_capacity=120.0,
            motor_thermal_resistance=1.5,
            motor_shutdown_temperature=120.0,
            motor_shutdown_hysteresis=20.0,
            driver_conduction_resistance=0.01,
            driver_idle_power=0.6,
            driver_thermal_capacity=20.0,
            driver_thermal_resistance=4.0,
            driver_shutdown_temperature=100.0,
            driver_shutdown_hysteresis=20.0,
            ambient_temperature=25.0,
            has_brake=False,
            brake_holding_torque=0.0,
            stall_velocity=0.05,
            stall_position_error=0.3,
            stall_time=0.5,
            position_noise=6.4e-4,
            velocity_noise=0.38,
            torque_noise=0.0052,
        )


_POSITIVE: Final[frozenset[str]] = frozenset(
    {
        "rotor_inertia",
        "torque_limit",
        "velocity_limit",
        "torque_rolloff_band",
        "torque_constant",
        "phase_resistance",
        "motor_thermal_capacity",
        "motor_thermal_resistance",
        "motor_shutdown_hysteresis",
        "driver_thermal_capacity",
        "driver_thermal_resistance",
        "driver_shutdown_hysteresis",
        "stall_velocity",
        "stall_position_error",
        "stall_time",
    }
)
_NON_NEGATIVE: Final[frozenset[str]] = frozenset(
    {
        "viscous_friction",
        "coulomb_friction",
        "driver_conduction_resistance",
        "driver_idle_power",
        "brake_holding_torque",
        "position_noise",
        "velocity_noise",
        "torque_noise",
    }
)


@dataclass(frozen=True, slots=True)
class ActuatorMeasurement:
    """One read of the whole array: fresh arrays of length N (the caller may keep them).

    ``position``, ``velocity`` and ``torque`` carry sensor noise; everything else is the model's
    true state.
    """

    time: float
    """Simulated time of the read, s."""
    position: FloatArray
    """Measured joint position, rad."""
    velocity: FloatArray
    """Measured joint velocity, rad/s."""
    torque: FloatArray
    """Measured motor output torque, N·m."""
    phase_current: FloatArray
    """q-axis phase current, A."""
    bus_current: FloatArray
    """Current each actuator draws from the supply, A (negative when regenerating)."""
    bus_voltage: float
    """Supply voltage, V."""
    motor_temperature: FloatArray
    """Winding temperature, °C."""
    driver_temperature: FloatArray
    """Drive-electronics temperature, °C."""
    motor_overheated: BoolArray
    """Winding over-temperature protection tripped."""
    driver_overheated: BoolArray
    """Drive over-temperature protection tripped."""
    powered: BoolArray
    """Drive stage switched on by command."""
    enabled: BoolArray
    """Producing torque: powered and no protection tripped."""
    braked: BoolArray
    """Brake engaged."""
    stalled: BoolArray
    """Stall detected."""


@dataclass(frozen=True, slots=True)
class DriveLaw:
    """The drive's impedance law for an engine that clamps the torque itself (mode 3 of the module
    docstring).

    ``τ = (offset − kp·p) − kd·v`` (in this order: the operations of
    :meth:`ActuatorArrayModel.actuate`, so the result is bit for bit the same), clamped to
    ``[−torque_max, +torque_max]``, per joint: exactly the law of
    :meth:`ActuatorArrayModel.actuate` as long as ``Σ v² < speed_sq_bound`` (every joint then
    runs below its roll-off band, where the available torque is the constant limit).
    The arrays are read-only live views of the model's own (N per array), so an engine keeps one
    ``DriveLaw`` and reads it each step; :attr:`ActuatorArrayModel.drive_state_version` says when
    ``torque_max`` or :attr:`ActuatorArrayModel.dry_friction` changed.
    """

    offset: FloatArray
    """``τ_ff + kp·p* + kd·v*``, N·m: the part of the law set by the command."""
    kp: FloatArray
    """Position gain, N·m/rad (≥ 0)."""
    kd: FloatArray
    """Velocity gain, N·m·s/rad (≥ 0)."""
    torque_max: FloatArray
    """Torque available in either direction below the roll-off band, N·m: the limit where the
    drive is enabled, 0 where it is off or tripped."""
    speed_sq_bound: float
    """(rad/s)²: while the sum of the squared joint speeds stays below this, no joint is in its
    roll-off band (the bound is the slowest band's start, squared)."""


def _read_only(array: npt.NDArray[np.generic]) -> npt.NDArray[np.generic]:
    view = array.view()
    view.flags.writeable = False
    return view


_FLOAT64: Final = np.dtype(np.float64)


def _is_floats(values: object, shape: tuple[int]) -> TypeGuard[FloatArray]:
    """``values`` is a float64 ndarray of ``shape`` (not a subclass): usable without a copy."""
    return type(values) is np.ndarray and values.dtype is _FLOAT64 and values.shape == shape


class ActuatorArrayModel:
    """Physics of N actuators in one set of numpy arrays; see the module docstring.

    Args:
        names: joint names in actuator order; N = ``len(names)``; used in error messages.
        params: one :class:`ActuatorParams` for all joints, or one per joint.
        bus_voltage: supply voltage, V (> 0; 48 V nominal, a full 12S pack is 50.4 V).
        seed: seed of the sensor-noise generator; ``None`` draws one from the OS.
        max_substep: longest mechanical integration step, s (default 0.5 ms → ≥ 2 kHz).
        monitor_period: longest step of the electrical supervision (phase and bus current,
            heat added up), s (2 ms).
        protection_period: step of the protections (thermal model and shutdowns on the mean
            heat, stall detection), s (at least ``monitor_period``; default ``None``: every
            supervision, ``monitor_period``).
        initial_positions: starting joint positions, rad (default zeros).

    All joints start at rest, powered off, brakes released, at ambient temperature, with zero
    command (kp = kd = 0, targets and feed-forward 0). Command, power and brake changes are
    validated whole and either applied whole or rejected with a
    :class:`~jointbus.messages.errors.ValidationError` naming joint, index, field and value.
    """

    def __init__(
        self,
        names: Sequence[str],
        params: ActuatorParams | Sequence[ActuatorParams],
        *,
        bus_voltage: float = 48.0,
        seed: int | None = 0,
        max_substep: float = 0.0005,
        monitor_period: float = 0.002,
        protection_period: float | None = None,
        initial_positions: npt.ArrayLike | None = None,
    ) -> None:
        self._names = tuple(names)
        n = len(self._names)
        if n == 0:
            raise LengthMismatchError(_MODEL, "names", self._names, "at least one joint")
        if len(set(self._names)) != n:
            raise ValidationError(_MODEL, "names", self._names, "unique joint names")
        if isinstance(params, ActuatorParams):
            per_joint: tuple[ActuatorParams, ...] = (params,) * n
        else:
            per_joint = tuple(params)
            if len(per_joint) != n:
                raise LengthMismatchError(
                    _MODEL, "params", len(per_joint), f"one ActuatorParams per joint ({n})"
                )
        if protection_period is None:
            protection_period = monitor_period
        for name, value, expected_max in (
            ("bus_voltage", bus_voltage, math.inf),
            ("max_substep", max_substep, 0.01),
            ("monitor_period", monitor_period, 1.0),
            ("protection_period", protection_period, 1.0),
        ):
            if not (math.isfinite(value) and 0.0 < value <= expected_max):
                raise LimitError(_MODEL, name, value, f"> 0 and <= {expected_max}")
        if protection_period < monitor_period:
            raise LimitError(
                _MODEL,
                "protection_period",
                protection_period,
                f">= monitor_period ({monitor_period} s)",
            )
        self._n = n
        self._shape = (n,)
        self._params = per_joint
        self._bus_voltage = float(bus_voltage)
        self._max_substep = float(max_substep)
        self._monitor_period = float(monitor_period)
        self._protection_due = float(protection_period) * _MONITOR_DUE
        self._rng = np.random.default_rng(seed)
        self._time = 0.0
        self._unsupervised = 0.0  # external mode: actuated time the supervision has not run over, s
        self._heat_time = 0.0  # s of ∫I²dt in _i_sq_time not yet given to the thermal model
        self._unprotected = 0.0  # s since the protections last ran
        #: Bumped whenever ``torque_max`` (power, protections), the dry friction (brakes) or a
        #: state flag may have changed (:attr:`drive_state_version`).
        self._drive_state_version = 0

        def column(field: str) -> FloatArray:
            return np.array([float(getattr(p, field)) for p in per_joint], dtype=np.float64)

        # Parameters as arrays.
        self._inertia = column("rotor_inertia")
        self._viscous = column("viscous_friction")
        self._coulomb = column("coulomb_friction")
        self._tau_limit = column("torque_limit")
        v_limit = column("velocity_limit")
        gain = self._tau_limit / column("torque_rolloff_band")  # N·m per rad/s
        # The available torque is computed for both directions at once in a (2, N) array:
        # row 0 (positive) = clip((v_limit − v)·gain, 0, τ_limit·enabled),
        # row 1 (negative) = clip(−(v_limit + v)·gain, −τ_limit·enabled, 0).
        self._bound_sign = np.stack([-np.ones(n), np.ones(n)])
        self._bound_offset = np.stack([v_limit, v_limit])
        self._bound_gain = np.stack([gain, -gain])
        self._bound_max = np.zeros((2, n))  # row 0 = τ_limit where enabled, row 1 = 0
        self._bound_min = np.zeros((2, n))  # row 0 = 0, row 1 = −τ_limit where enabled
        # Below the roll-off band of every joint (|v| < v_limit − band) both bounds are the
        # constant ±τ_limit·enabled: the engine-side law's clamp (DriveLaw).
        knee = float(np.min(v_limit - column("torque_rolloff_band")))
        self._knee_speed = knee * (1.0 - _BAND_MARGIN)
        self._kt = column("torque_constant")
        self._r_phase = column("phase_resistance")
        self._r_driver = column("driver_conduction_resistance")
        self._r_total = self._r_phase + self._r_driver  # Ω: copper + drive-stage loss per I²
        self._p_idle = column("driver_idle_power")
        self._has_brake = np.array([p.has_brake for p in per_joint], dtype=np.bool_)
        self._brake_torque = column("brake_holding_torque")
        self._stall_velocity = column("stall_velocity")
        self._stall_error = column("stall_position_error")
        self._stall_time = column("stall_time")
        # 1σ of the reported position, velocity and torque, rows as _measured.
        self._sigma = np.stack(
            [column("position_noise"), column("velocity_noise"), column("torque_noise")]
        )
        # One thermal model of 2N bodies: windings first, then drive electronics.
        def both(motor_field: str, driver_field: str) -> FloatArray:
            return np.concatenate([column(motor_field), column(driver_field)])

        self._thermal = ThermalModel(
            capacity=both("motor_thermal_capacity", "driver_thermal_capacity"),
            resistance=both("motor_thermal_resistance", "driver_thermal_resistance"),
            ambient=both("ambient_temperature", "ambient_temperature"),
            shutdown=both("motor_shutdown_temperature", "driver_shutdown_temperature"),
            hysteresis=both("motor_shutdown_hysteresis", "driver_shutdown_hysteresis"),
        )
        self._heat = np.zeros(2 * n)  # W dissipated: copper loss, then drive loss
        self._heat_rows = self._heat.reshape(2, n)
        self._driver_loss = self._heat[n:]
        self._heat_resistance = np.stack([self._r_phase, self._r_driver])  # Ω, rows as _heat
        self._i_sq_time = np.zeros(n)  # ∫I²dt since the thermal model last ran, A²·s
        self._motor_temperature = self._thermal.temperature[:n]
        self._driver_temperature = self._thermal.temperature[n:]
        self._motor_overheated = self._thermal.overheated[:n]
        self._driver_overheated = self._thermal.overheated[n:]

        # State.
        # What measure() reads is kept in a few blocks, rows per quantity, so that a read is
        # one noise draw and a handful of block copies instead of a call per quantity.
        self._measured = np.zeros((3, n))  # rows: position rad, velocity rad/s, torque N·m
        self._p = self._measured[0]
        if initial_positions is not None:
            self._p[:] = self._checked("initial_positions", initial_positions)
        self._v = self._measured[1]
        self._tau = self._measured[2]  # motor output torque, N·m
        self._demand = np.zeros(n)  # impedance law before clamping, N·m
        self._bounds = np.zeros((2, n))  # torque available in each direction, N·m
        self._upper = self._bounds[0]  # positive direction (≥ 0)
        self._lower = self._bounds[1]  # negative direction (≤ 0)
        self._currents = np.zeros((2, n))  # rows: phase current A, bus current A
        self._current = self._currents[0]
        self._i_sq = np.zeros(n)  # A², of the last supervision
        self._bus_current = self._currents[1]
        self._flags = np.zeros((4, n), dtype=np.bool_)  # rows: powered, enabled, braked, stalled
        self._powered = self._flags[0]
        self._enabled = self._flags[1]
        self._braked = self._flags[2]
        self._stalled = self._flags[3]
        self._blocked = np.zeros(n, dtype=np.bool_)
        self._idle_loss = np.zeros(n)  # driver idle power where powered, W
        self._stall_timer = np.zeros(n)  # s the stall condition has held
        self._dry_friction = self._coulomb.copy()  # Coulomb + brake where braked, N·m

        # Command.
        self._p_target = np.zeros(n)
        self._v_target = np.zeros(n)
        self._tau_ff = np.zeros(n)
        self._kp = np.zeros(n)
        self._kd = np.zeros(n)
        self._kp_positive = np.zeros(n, dtype=np.bool_)
        self._law_offset = np.zeros(n)  # τ_ff + kp·p* + kd·v*, N·m
        self._external = np.zeros(n)

        # Substep coefficients (depend on h, brakes and the blocked mask).
        self._coeff_h = math.nan
        self._h_over_j = np.zeros(n)
        self._impulse = np.zeros(n)  # h·dry_friction/J, rad/s
        self._v_scale = np.zeros(n)  # 1/(1 + h·b/J), 0 where blocked

        # Scratch.
        self._s1 = np.zeros(n)
        self._s2 = np.zeros(n)
        self._s_offset = np.zeros(n)
        self._b1 = np.zeros(n, dtype=np.bool_)
        self._b2 = np.zeros(n, dtype=np.bool_)
        self._b3 = np.zeros(n, dtype=np.bool_)

        self._views = {
            name: _read_only(getattr(self, attr))
            for name, attr in (
                ("positions", "_p"),
                ("velocities", "_v"),
                ("motor_torques", "_tau"),
                ("phase_currents", "_current"),
                ("bus_currents", "_bus_current"),
                ("powered", "_powered"),
                ("braked", "_braked"),
                ("blocked", "_blocked"),
                ("enabled", "_enabled"),
                ("stalled", "_stalled"),
                ("dry_friction", "_dry_friction"),
            )
        }
        self._drive_law = DriveLaw(
            offset=_read_only(self._law_offset),  # type: ignore[arg-type]
            kp=_read_only(self._kp),  # type: ignore[arg-type]
            kd=_read_only(self._kd),  # type: ignore[arg-type]
            torque_max=_read_only(self._bound_max[0]),  # type: ignore[arg-type]
            speed_sq_bound=self._knee_speed**2,
        )

    # ------------------------------------------------------------------ properties

    @property
    def names(self) -> tuple[str, ...]:
        """Joint names in actuator order."""
        return self._names

    @property
    def count(self) -> int:
        """Number of actuators N."""
        return self._n

    @property
    def params(self) -> tuple[ActuatorParams, ...]:
        """Parameters per joint."""
        return self._params

    @property
    def time(self) -> float:
        """Simulated time, s (advanced by :meth:`advance` and :meth:`actuate`)."""
        return self._time

    @property
    def bus_voltage(self) -> float:
        """Supply voltage, V."""
        return self._bus_voltage

    @property
    def total_bus_current(self) -> float:
        """Current drawn from the supply by all actuators, A (negative when regenerating)."""
        return float(self._bus_current.sum())

    @property
    def positions(self) -> FloatArray:
        """True joint positions, rad (read-only live view)."""
        return self._views["positions"]  # type: ignore[return-value]

    @property
    def velocities(self) -> FloatArray:
        """True joint velocities, rad/s (read-only live view)."""
        return self._views["velocities"]  # type: ignore[return-value]

    @property
    def motor_torques(self) -> FloatArray:
        """Motor output torques of the last step, N·m (read-only live view)."""
        return self._views["motor_torques"]  # type: ignore[return-value]

    @property
    def phase_currents(self) -> FloatArray:
        """q-axis phase currents, A (read-only live view)."""
        return self._views["phase_currents"]  # type: ignore[return-value]

    @property
    def bus_currents(self) -> FloatArray:
        """Supply current per actuator, A (read-only live view)."""
        return self._views["bus_currents"]  # type: ignore[return-value]

    @property
    def motor_temperatures(self) -> FloatArray:
        """Winding temperatures, °C (read-only live view)."""
        return self._motor_temperature

    @property
    def driver_temperatures(self) -> FloatArray:
        """Drive temperatures, °C (read-only live view)."""
        return self._driver_temperature

    @property
    def motor_overheated(self) -> BoolArray:
        """Winding protection tripped (read-only live view)."""
        return self._motor_overheated

    @property
    def driver_overheated(self) -> BoolArray:
        """Drive protection tripped (read-only live view)."""
        return self._driver_overheated

    @property
    def powered(self) -> BoolArray:
        """Drive stage switched on by command (read-only live view)."""
        return self._views["powered"]  # type: ignore[return-value]

    @property
    def braked(self) -> BoolArray:
        """Brake engaged (read-only live view)."""
        return self._views["braked"]  # type: ignore[return-value]

    @property
    def blocked(self) -> BoolArray:
        """Joint held fixed by an obstacle in standalone mode (read-only live view)."""
        return self._views["blocked"]  # type: ignore[return-value]

    @property
    def enabled(self) -> BoolArray:
        """Producing torque: powered and neither protection tripped (read-only live view)."""
        return self._views["enabled"]  # type: ignore[return-value]

    @property
    def stalled(self) -> BoolArray:
        """Stall detected (read-only live view)."""
        return self._views["stalled"]  # type: ignore[return-value]

    @property
    def dry_friction(self) -> FloatArray:
        """Dry friction an external engine must apply: Coulomb + brake holding torque where
        braked, N·m (read-only live view; MuJoCo: ``dof_frictionloss``)."""
        return self._views["dry_friction"]  # type: ignore[return-value]

    @property
    def drive_law(self) -> DriveLaw:
        """The impedance law's terms for an engine that applies it itself (live views; see
        :class:`DriveLaw` and :meth:`applied`)."""
        return self._drive_law

    @property
    def drive_state_version(self) -> int:
        """A counter that changes whenever :attr:`DriveLaw.torque_max` (power, a protection
        tripping or releasing), :attr:`dry_friction` (brakes) or one of the state flags
        (powered, braked, blocked, overheated, stalled) may have changed: an engine that copies
        them into its own model, or a driver that derives a status word from them, does it
        again when the counter differs from the last one seen."""
        return self._drive_state_version

    # ------------------------------------------------------------------ inputs

    def _checked(
        self, field: str, values: npt.ArrayLike, *, non_negative: bool = False
    ) -> FloatArray:
        """``values`` as a float array of one finite value per joint (``non_negative``: ≥ 0).

        A float64 array of the right shape is checked without a copy (the caller copies it into
        the model's own arrays): its self dot product is finite only when every element is, and
        a non-finite or negative result falls back to the element-wise check that names the
        joint. Anything else is converted first. Per-substep callers (``actuate``, the driver's
        control step) thus pay two numpy calls instead of a copy and four.
        """
        if (
            type(values) is np.ndarray
            and values.dtype == np.float64
            and values.shape == self._shape
            and math.isfinite(values.dot(values))
            and not (non_negative and min(values.tolist()) < 0.0)
        ):
            return values
        array = np.array(values, dtype=np.float64)
        if array.shape != (self._n,):
            raise LengthMismatchError(
                _MODEL, field, array.shape, f"one value per joint ({self._n} values)"
            )
        bad = ~np.isfinite(array)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise NonFiniteError(
                _MODEL, field, float(array[i]), "a finite number", joint=self._names[i], index=i
            )
        if non_negative:
            negative = array < 0.0
            if negative.any():
                i = int(np.flatnonzero(negative)[0])
                raise LimitError(
                    _MODEL, field, float(array[i]), ">= 0", joint=self._names[i], index=i
                )
        return array

    def _checked_mask(self, field: str, values: npt.ArrayLike) -> BoolArray:
        array = np.asarray(values)
        if array.shape != (self._n,):
            raise LengthMismatchError(
                _MODEL, field, array.shape, f"one flag per joint ({self._n} flags)"
            )
        if array.dtype != np.bool_:
            raise ValidationError(_MODEL, field, str(array.dtype), "booleans")
        return array.copy()

    def set_command(
        self,
        *,
        position: npt.ArrayLike | None = None,
        velocity: npt.ArrayLike | None = None,
        torque: npt.ArrayLike | None = None,
        kp: npt.ArrayLike | None = None,
        kd: npt.ArrayLike | None = None,
    ) -> None:
        """Set impedance targets (length-N arrays; ``None`` keeps the current value).

        position rad, velocity rad/s, torque (feed-forward) N·m, kp N·m/rad (≥ 0),
        kd N·m·s/rad (≥ 0). All given arrays are checked before any is applied.
        """
        if self._set_whole_command(position, velocity, torque, kp, kd):
            return
        checked = [
            (target, self._checked(field, values, non_negative=field in ("kp", "kd")))
            for field, values, target in (
                ("position", position, self._p_target),
                ("velocity", velocity, self._v_target),
                ("torque", torque, self._tau_ff),
                ("kp", kp, self._kp),
                ("kd", kd, self._kd),
            )
            if values is not None
        ]
        for target, array in checked:
            target[:] = array
        offset = self._law_offset
        np.multiply(self._kp, self._p_target, out=offset)
        offset += self._tau_ff
        offset += self._kd * self._v_target

    def _set_whole_command(
        self,
        position: npt.ArrayLike | None,
        velocity: npt.ArrayLike | None,
        torque: npt.ArrayLike | None,
        kp: npt.ArrayLike | None,
        kd: npt.ArrayLike | None,
    ) -> bool:
        """The per-control-step case: all five fields as float64 arrays of N (as a driver sends
        them every step). Applied, and True, when they are valid; False (nothing changed) for
        anything else, which :meth:`set_command` then checks field by field.

        One finiteness test covers all five: ``τ_ff + kp·p* + kd·v*`` is finite only if every
        term is (a NaN or ±inf anywhere, even times a zero gain, leaves NaN or ±inf), so its
        self dot product stands for five. A finite command whose terms overflow fails the test
        too and gets the field-by-field check, which accepts it as before.
        """
        shape = self._shape
        if not (
            _is_floats(position, shape)
            and _is_floats(velocity, shape)
            and _is_floats(torque, shape)
            and _is_floats(kp, shape)
            and _is_floats(kd, shape)
        ):
            return False
        offset, term = self._s_offset, self._s2
        np.multiply(kp, position, out=offset)  # the order of the law's offset, term by term
        offset += torque
        np.multiply(kd, velocity, out=term)
        offset += term
        offset_sq = float(offset.dot(offset))
        # (finite from here on, so min() of the plain floats is well defined and cheaper than a
        # numpy reduction on 12 values)
        if not math.isfinite(offset_sq) or min(kp.tolist()) < 0.0 or min(kd.tolist()) < 0.0:
            return False
        self._p_target[:] = position
        self._v_target[:] = velocity
        self._tau_ff[:] = torque
        self._kp[:] = kp
        self._kd[:] = kd
        self._law_offset[:] = offset
        return True

    def set_power(self, on: npt.ArrayLike) -> None:
        """Switch drive stages on (True) or off (False), one flag per joint."""
        mask = self._checked_mask("power", on)
        self._integrate_heat()  # the idle loss changes from here on
        self._powered[:] = mask
        np.multiply(self._p_idle, mask, out=self._idle_loss)
        self._update_enabled()

    def set_brakes(self, engaged: npt.ArrayLike) -> None:
        """Engage (True) or release (False) brakes; engaging one on a joint without a brake is
        rejected (:class:`~jointbus.messages.errors.LimitError`)."""
        mask = self._checked_mask("brake", engaged)
        missing = mask & ~self._has_brake
        if missing.any():
            i = int(np.flatnonzero(missing)[0])
            raise LimitError(
                _MODEL, "brake", True, "False: this actuator has no brake",
                joint=self._names[i], index=i,
            )
        self._braked[:] = mask
        np.multiply(self._brake_torque, self._braked, out=self._dry_friction)
        self._dry_friction += self._coulomb
        self._coeff_h = math.nan
        self._drive_state_version += 1

    def set_external_torque(self, torque: npt.ArrayLike) -> None:
        """Load torque opposing each motor in standalone mode (``J·a = τ_motor − friction −
        τ_external``), N·m; e.g. gravity on a link. Stays until changed."""
        self._external[:] = self._checked("external_torque", torque)

    def set_blocked(self, blocked: npt.ArrayLike) -> None:
        """Hold joints fixed (as by an obstacle) in standalone mode; a blocked joint's velocity is
        zero and its position does not change, whatever torque acts on it."""
        mask = self._checked_mask("blocked", blocked)
        self._blocked[:] = mask
        self._v[mask] = 0.0
        self._coeff_h = math.nan
        self._drive_state_version += 1

    def set_state(
        self, positions: npt.ArrayLike, velocities: npt.ArrayLike | None = None
    ) -> None:
        """Place the joints at ``positions`` (rad) moving at ``velocities`` (rad/s, default 0)."""
        p = self._checked("positions", positions)
        v = np.zeros(self._n) if velocities is None else self._checked("velocities", velocities)
        self._p[:] = p
        self._v[:] = v

    def set_temperatures(
        self, motor: npt.ArrayLike | None = None, driver: npt.ArrayLike | None = None
    ) -> None:
        """Set winding and/or drive temperatures, °C (to start a scenario hot); protections
        re-evaluate at once."""
        m = None if motor is None else self._checked("motor_temperature", motor)
        d = None if driver is None else self._checked("driver_temperature", driver)
        self._integrate_heat()  # the heat up to now warms what was there before
        temperature = self._thermal.temperature.copy()
        if m is not None:
            temperature[: self._n] = m
        if d is not None:
            temperature[self._n :] = d
        self._thermal.set_temperature(temperature)
        self._update_enabled()

    # ------------------------------------------------------------------ stepping

    def advance(self, dt: float) -> None:
        """Standalone mode: integrate the rotors for ``dt`` seconds.

        ``dt`` is cut into supervision chunks of at most ``monitor_period`` and each chunk into
        equal mechanical substeps of at most ``max_substep``; commands, external torque, power and
        brakes are held over the whole call.
        """
        if not (math.isfinite(dt) and dt > 0.0):
            raise LimitError(_MODEL, "dt", dt, "a finite duration > 0 s")
        chunks = max(1, math.ceil(dt / self._monitor_period - 1e-9))
        chunk = dt / chunks
        substeps = max(1, math.ceil(chunk / self._max_substep - 1e-9))
        h = chunk / substeps
        if h != self._coeff_h:
            self._update_coefficients(h)
        for _ in range(chunks):
            for _ in range(substeps):
                self._substep(h)
            self._monitor(chunk)

    def actuate(
        self, positions: npt.ArrayLike, velocities: npt.ArrayLike, dt: float
    ) -> FloatArray:
        """External-physics mode: the motor torques (N·m) to apply for the next ``dt`` seconds.

        ``positions`` (rad) and ``velocities`` (rad/s) are the engine's joint state; they become
        the model's state (for :meth:`measure`). The engine integrates; it must also apply the
        rotor inertia, viscous friction and :attr:`dry_friction` (which includes engaged brakes).
        Returns a read-only view of the model's torque array, overwritten by the next step.

        The supervision runs at ``monitor_period``, as in :meth:`advance`: once the calls since
        the last supervision add up to a monitor period, over that whole time, with the torques
        of the call that completes it. An engine stepping 0.5 ms substeps thus pays for it once
        per 2 ms instead of four times, and a call of a monitor period or longer
        (``actuate(p, v, 0.002)``) is supervised at once; between two supervisions the currents
        are those of the last one. The protections (temperatures, shutdowns, stall) run every
        ``protection_period`` of supervised time (module docstring).
        """
        if not (math.isfinite(dt) and dt > 0.0):
            raise LimitError(_MODEL, "dt", dt, "a finite duration > 0 s")
        p = self._checked("positions", positions)
        v = self._checked("velocities", velocities)
        self._p[:] = p
        self._v[:] = v
        self._compute_motor_torque()
        pending = self._unsupervised + dt
        if pending >= self._monitor_period * _MONITOR_DUE:
            self._monitor(pending)
            pending = 0.0
        self._unsupervised = pending
        self._time += dt
        return self.motor_torques

    def substeps_to_supervision(self, dt: float) -> int:
        """After how many more substeps of ``dt`` seconds the supervision runs (the same sums
        as :meth:`actuate` and :meth:`applied` make): an engine that applies the law itself
        reports that substep with :meth:`applied` right after it."""
        if not (math.isfinite(dt) and dt > 0.0):
            raise LimitError(_MODEL, "dt", dt, "a finite duration > 0 s")
        pending, due, substeps = self._unsupervised, self._monitor_period * _MONITOR_DUE, 1
        pending += dt
        while pending < due:
            pending += dt
            substeps += 1
        return substeps

    def applied(
        self,
        positions: npt.ArrayLike,
        velocities: npt.ArrayLike,
        torques: npt.ArrayLike,
        dt: float,
        substeps: int = 1,
    ) -> None:
        """Mode 3 of the module docstring: the engine ran ``substeps`` substeps of ``dt``
        seconds, applying :attr:`drive_law` with its own clamp.

        ``torques`` (N·m) are what it applied over its last substep and ``positions`` (rad) /
        ``velocities`` (rad/s) the state at that substep's end; all three become the model's
        state. Time advances substep by substep, exactly as as many :meth:`actuate` calls
        would advance it (the same floating-point sums), and the supervision runs when the
        last substep completes its period, as in :meth:`advance` (the torques of that substep
        with the state it ended in). An engine calls this right after the substep
        :meth:`substeps_to_supervision` names, at the end of its step, and before it uses
        :meth:`actuate` again.
        """
        if not (math.isfinite(dt) and dt > 0.0):
            raise LimitError(_MODEL, "dt", dt, "a finite duration > 0 s")
        if type(substeps) is not int or substeps < 1:
            raise LimitError(_MODEL, "substeps", substeps, "a whole number >= 1")
        shape = self._shape
        if not (
            _is_floats(positions, shape)
            and _is_floats(velocities, shape)
            and _is_floats(torques, shape)
            and math.isfinite(
                positions.dot(positions) + velocities.dot(velocities) + torques.dot(torques)
            )
        ):  # not three clean arrays: checked one by one, the error naming field and joint
            positions = self._checked("positions", positions)
            velocities = self._checked("velocities", velocities)
            torques = self._checked("torques", torques)
        self._p[:] = positions
        self._v[:] = velocities
        self._tau[:] = torques
        pending, time = self._unsupervised, self._time
        for _ in range(substeps):
            pending += dt
            time += dt
        self._time = time
        if pending >= self._monitor_period * _MONITOR_DUE:
            self._monitor(pending, bounds_known=False)
            pending = 0.0
        self._unsupervised = pending

    def _update_coefficients(self, h: float) -> None:
        np.divide(h, self._inertia, out=self._h_over_j)
        np.multiply(self._dry_friction, self._h_over_j, out=self._impulse)
        np.multiply(self._viscous, self._h_over_j, out=self._v_scale)
        self._v_scale += 1.0
        np.divide(1.0, self._v_scale, out=self._v_scale)
        self._v_scale[self._blocked] = 0.0
        self._coeff_h = h

    def _compute_motor_torque(self) -> None:
        """The drive: impedance law, speed-dependent torque limit, power/protection gate.

        Reads ``_p``, ``_v`` and the command; writes ``_demand`` (unclamped law), ``_upper`` /
        ``_lower`` (available torque) and ``_tau``. Shared by both modes.
        """
        p, v = self._p, self._v
        # τ_ff + kp·(p* − p) + kd·(v* − v), as (τ_ff + kp·p* + kd·v*) − kp·p − kd·v: the bracket
        # changes only with the command, so it is computed in set_command.
        demand, scratch = self._demand, self._s1
        np.multiply(self._kp, p, out=demand)
        np.subtract(self._law_offset, demand, out=demand)
        np.multiply(self._kd, v, out=scratch)
        demand -= scratch
        self._compute_bounds()
        tau = self._tau
        np.minimum(demand, self._upper, out=tau)
        np.maximum(tau, self._lower, out=tau)

    def _compute_bounds(self) -> None:
        """``_upper`` / ``_lower`` (the torque available each way) at the velocity ``_v``: the
        full limit until the roll-off band, then down to 0 at the velocity limit, in the
        direction of motion only; 0 both ways when not enabled."""
        bounds = self._bounds
        np.multiply(self._bound_sign, self._v, out=bounds)
        bounds += self._bound_offset
        bounds *= self._bound_gain
        np.minimum(bounds, self._bound_max, out=bounds)
        np.maximum(bounds, self._bound_min, out=bounds)

    def _substep(self, h: float) -> None:
        self._compute_motor_torque()
        v_free, magnitude = self._s1, self._s2
        # Velocity after the step without Coulomb/brake, before implicit viscous scaling.
        np.subtract(self._tau, self._external, out=v_free)
        v_free *= self._h_over_j
        v_free += self._v
        # Dry friction: an impulse that can stop the rotor but never reverse it.
        np.abs(v_free, out=magnitude)
        magnitude -= self._impulse
        np.maximum(magnitude, 0.0, out=magnitude)
        np.copysign(magnitude, v_free, out=self._v)
        self._v *= self._v_scale  # implicit viscous friction; 0 where blocked
        np.multiply(self._v, h, out=magnitude)
        self._p += magnitude
        self._time += h

    def _monitor(self, dt: float, *, bounds_known: bool = True) -> None:
        """Electrical supervision over ``dt`` with the current torques; the protections when
        their period is complete (``bounds_known``: ``_upper`` / ``_lower`` are those the
        torques were clamped to, else they are computed from ``_v`` first)."""
        tau, multiply = self._tau, np.multiply
        current, i_sq, scratch, bus = self._current, self._i_sq, self._s1, self._bus_current
        np.divide(tau, self._kt, out=current)
        multiply(current, current, out=i_sq)
        multiply(tau, self._v, out=bus)  # mechanical power, W
        multiply(i_sq, self._r_total, out=scratch)  # copper and drive-stage loss, W
        bus += scratch
        bus += self._idle_loss
        bus /= self._bus_voltage
        multiply(i_sq, dt, out=scratch)
        self._i_sq_time += scratch
        self._heat_time += dt
        self._unprotected += dt
        if self._unprotected >= self._protection_due:
            if not bounds_known:
                self._compute_bounds()
            self._protect()

    def _integrate_heat(self) -> None:
        """Give the thermal model the heat since it last ran, as its mean power over that time
        (the exact first-order step; see :mod:`.thermal`)."""
        elapsed = self._heat_time
        if elapsed <= 0.0:
            return
        heat = self._heat_rows
        np.multiply(self._heat_resistance, self._i_sq_time, out=heat)  # W·s: ∫I²dt·R per row
        heat /= elapsed
        self._driver_loss += self._idle_loss
        self._thermal.update(self._heat, elapsed)
        self._i_sq_time.fill(0.0)
        self._heat_time = 0.0

    def _protect(self) -> None:
        """The protections over the time since they last ran: temperatures and shutdowns on the
        mean heat, then stall detection on the current state. :attr:`drive_state_version`
        changes only if a protection or stall flag did (most runs change none)."""
        dt = self._unprotected
        self._unprotected = 0.0
        overheated, stalled = self._thermal.overheated, self._stalled
        # (bytes: for 12–36 flags, the cheapest way to tell whether any changed)
        heat_before, stall_before = overheated.tobytes(), stalled.tobytes()
        self._integrate_heat()
        if overheated.tobytes() != heat_before:
            self._update_enabled()
        tau, v = self._tau, self._v
        # Stall: enabled, nearly still, and saturated or far from the target under a position
        # gain, for longer than stall_time. Saturated: the torque is at a bound (the law clamped
        # to it), the same as the unclamped law at or beyond that bound.
        still, pushing = self._b1, self._b2
        np.abs(v, out=self._s1)
        np.less(self._s1, self._stall_velocity, out=still)
        np.logical_and(still, self._enabled, out=still)
        np.subtract(self._p_target, self._p, out=self._s1)
        np.abs(self._s1, out=self._s1)
        np.greater(self._s1, self._stall_error, out=pushing)
        np.greater(self._kp, 0.0, out=self._kp_positive)
        np.logical_and(pushing, self._kp_positive, out=pushing)
        saturated = self._b3
        np.greater_equal(tau, self._upper, out=saturated)
        np.logical_or(pushing, saturated, out=pushing)
        np.less_equal(tau, self._lower, out=saturated)
        np.logical_or(pushing, saturated, out=pushing)
        np.logical_and(still, pushing, out=still)
        self._stall_timer += dt
        self._stall_timer *= still
        np.greater_equal(self._stall_timer, self._stall_time, out=stalled)
        if stalled.tobytes() != stall_before:
            self._drive_state_version += 1

    def _update_enabled(self) -> None:
        enabled = self._enabled
        np.logical_or(self._motor_overheated, self._driver_overheated, out=enabled)
        np.logical_not(enabled, out=enabled)
        np.logical_and(enabled, self._powered, out=enabled)
        np.multiply(self._tau_limit, enabled, out=self._bound_max[0])
        np.negative(self._bound_max[0], out=self._bound_min[1])
        self._drive_state_version += 1

    # ------------------------------------------------------------------ outputs

    def measure(self) -> ActuatorMeasurement:
        """Read the array: noisy position, velocity and torque, and the true supervision state.

        Each call draws 3·N normal samples from the model's generator, in a fixed order, so a
        run is reproducible from its seed.
        """
        noise = self._rng.standard_normal((3, self._n))
        noise *= self._sigma
        noise += self._measured
        n = self._n
        currents = self._currents.copy()
        temperatures = self._thermal.temperature.copy()
        overheated = self._thermal.overheated.copy()
        flags = self._flags.copy()
        return ActuatorMeasurement(
            time=self._time,
            position=noise[0],
            velocity=noise[1],
            torque=noise[2],
            phase_current=currents[0],
            bus_current=currents[1],
            bus_voltage=self._bus_voltage,
            motor_temperature=temperatures[:n],
            driver_temperature=temperatures[n:],
            motor_overheated=overheated[:n],
            driver_overheated=overheated[n:],
            powered=flags[0],
            enabled=flags[1],
            braked=flags[2],
            stalled=flags[3],
        )
