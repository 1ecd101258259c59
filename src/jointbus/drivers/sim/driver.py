"""The ``sim://`` driver: a simulated actuator array behind the :class:`ActuatorArray` API.

Where it sits: :mod:`jointbus.drivers.sim`, the top of the simulator package; it wraps the
physics (:class:`~jointbus.drivers.sim.actuator_model.ActuatorArrayModel`, alone or inside an
external engine such as :class:`~jointbus.drivers.sim.mujoco_world.MujocoWorld`) and the ruckig
profiles (:class:`~jointbus.drivers.sim.profile.ProfileGenerator`) in the driver API of
:mod:`jointbus.drivers.actuator_array`. ``open_sim`` is registered for the ``sim`` scheme.

**What a command does.** Each actuator is in one of four modes:

- *off* — motor power is off, or this joint's drive stage is (``joint_power``): no torque
  (kp = kd = τ = 0); the other joints keep running.
- *profile* — position, speed and home commands: ruckig plans a speed-, acceleration- and
  jerk-limited move (configured speed and acceleration per joint, as ``set_speed`` /
  ``set_accel`` set them; jerk = acceleration / :attr:`SimArrayConfig.jerk_time`) and the drive
  tracks the reference with its impedance law: kp, kd from the config plus a feed-forward of
  the rotor inertia and friction (``J·a_ref + b·v_ref + c·sign(v_ref)``, the sign ramped over
  ±1 mrad/s so that a reference at rest gets none), as a drive that knows
  its own motor would. On power-on every joint holds where it is.
- *current* — ``current`` commands: kp = kd = 0, τ = k_t · I.
- *impedance* — the :class:`~jointbus.drivers.impedance.ImpedanceCommand`, passed to the drive as
  it is (after the base class's checks and calibration), except that a joint
  whose ``brake`` the command sets gets no drive torque (the brake holds it).

**Drive watchdog** (``command_timeout``, s; off by default): a speed (≠ 0) or current command
not renewed within that time runs out, as a servo drive's communication watchdog stops its
motor: the joint is brought to rest by a profiled speed-0 move (within its configured
acceleration) and held where it stopped; the next command applies as usual. Position and home
moves end by themselves and never expire. Off by default because an in-process program that
dies takes the simulator with it; ``sim://arm6?command_timeout=0.25`` behaves as the array node
(``jointbus serve``) does for its clients, whose default is 0.25 s
(:mod:`jointbus.drivers.command_expiry`). In real time it is timed on the monotonic wall clock,
as the array node's watchdog is (docs/SAFETY.md): a command is armed at its arrival and checked
against the monotonic clock at each control step, so a stream never ends before
``command_timeout`` of wall-clock silence. Simulated time would not do: after a host stall of up to
0.1 s the real-time thread runs its steps back to back to catch the clock up, and a command that
arrived during the stall, stamped with the lagging simulated time, ran out up to 0.1 s early by
the wall clock (0.245 s of 0.25 in a fresh-clone ``make test``; 0.20 s after a 50 ms stall). In
stepping mode (``realtime=False``) the caller's steps are the only clock, so it is timed on
simulated time and expires commands deterministically.

**Time.** The control step (:attr:`SimArrayConfig.control_period`, 2 ms: profile sampling and
the command to the drive) is subdivided by the physics at ``rate`` Hz (≥ 2 kHz). The targets are
held over a control step, as a bus-fed drive holds the last frame, so a joint's speed ripples
within the step (about 0.4 % at 1.5 rad/s on arm6's wrist) while its position follows the
profile exactly on average. By default a
thread runs it in real time (``realtime=True``); with ``realtime=False`` nothing moves until the
caller calls :meth:`SimActuatorArray.step` — deterministic, for tests. Same seed, same commands
and same steps give bit-identical readings: the only randomness is the sensor noise, drawn from
the seeded generator at each :meth:`read`.

**External physics.** ``SimActuatorArray(config, physics=world)`` drives any object with an
``actuators`` :class:`ActuatorArrayModel` and a ``step(dt)`` (the :class:`ExternalPhysics`
protocol; :class:`MujocoWorld` is one): the driver sends commands, power and brakes to
``physics.actuators`` and calls ``physics.step(dt)`` once per control step, the engine integrates.
Without one, :class:`StandalonePhysics` integrates the rotors alone.

**State flags.** ``MOVING`` when the true joint speed exceeds the actuator's
``stall_velocity`` (the model's "still" threshold, so MOVING and STALLED use one notion of
standing still), ``BRAKED`` from the brakes, ``STALLED`` from the drive's stall detection; see
:mod:`jointbus.drivers.array_state` for how they combine. The status word (:class:`SimStatus`)
carries the thermal protections and the rest.

**Threads.** One lock guards the physics and profiles; the real-time thread holds it for one
control step (tens of µs), caller hooks for one command. :meth:`SimActuatorArray.locked` hands
out the physics under that lock for scenario set-up (block a joint, heat a motor, add a load).
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import math
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol, runtime_checkable
from urllib.parse import unquote

import numpy as np
import numpy.typing as npt

from jointbus.drivers.actuator_array import (
    ActuatorArray,
    ActuatorArrayConfig,
    ActuatorArrayConfigError,
    ImpedanceTargets,
    RawReading,
    SaturationCallback,
)
from jointbus.drivers.capabilities import Capability
from jointbus.drivers.command_expiry import CommandExpiry
from jointbus.drivers.errors import DriverError, DriverFileError, DriverURLError
from jointbus.drivers.limits import LimitPolicy
from jointbus.drivers.profiled_moves import (
    MODE_CURRENT,
    MODE_IMPEDANCE,
    MODE_OFF,
    MODE_PROFILE,
    ProfiledMoves,
)
from jointbus.drivers.registry import DriverURL
from jointbus.drivers.sim.actuator_model import ActuatorArrayModel, ActuatorParams
from jointbus.messages.errors import LimitError
from jointbus.model.robot import RobotModel

if TYPE_CHECKING:  # robots.py imports this module; it is imported lazily in open_sim
    from jointbus.drivers.sim.robots import SimOptions

__all__ = [
    "ExternalPhysics",
    "SimActuatorArray",
    "SimArrayConfig",
    "SimStatus",
    "StandalonePhysics",
    "open_sim",
    "robot_file_name",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]
BoolArray = npt.NDArray[np.bool_]

MIN_RATE: Final[float] = 2000.0
"""Lowest physics rate accepted, Hz (the actuator model's mechanics need ≥ 2 kHz)."""

_FRICTION_BAND: Final[float] = 1e-3  # rad/s
_URL_OPTIONS: Final = {"seed", "realtime", "rate", "noise", "command_timeout"}


class SimStatus(enum.IntFlag):
    """Bits of the simulator's per-actuator status word (``ActuatorData.status``)."""

    MOTOR_OVERHEATED = 0x01
    """Winding over-temperature protection tripped (no torque until it has cooled)."""
    DRIVER_OVERHEATED = 0x02
    """Drive-electronics protection tripped."""
    STALLED = 0x04
    """The drive detected a stall (also the STALLED state flag)."""
    BLOCKED = 0x08
    """Simulation only: the joint is held by a simulated obstacle."""
    UNPOWERED = 0x10
    """The drive stage is off."""


_BIT_MOTOR_OVERHEATED: Final = np.uint32(SimStatus.MOTOR_OVERHEATED)
_BIT_DRIVER_OVERHEATED: Final = np.uint32(SimStatus.DRIVER_OVERHEATED)
_BIT_STALLED: Final = np.uint32(SimStatus.STALLED)
_BIT_BLOCKED: Final = np.uint32(SimStatus.BLOCKED)
_BIT_UNPOWERED: Final = np.uint32(SimStatus.UNPOWERED)


@runtime_checkable
class ExternalPhysics(Protocol):
    """Physics the driver sits on: the drives (``actuators``) and a way to advance time."""

    @property
    def actuators(self) -> ActuatorArrayModel:
        """The drives, in the array's actuator order."""
        ...

    def step(self, dt: float) -> None:
        """Advance the world by ``dt`` seconds with the drives' current commands."""
        ...


class StandalonePhysics:
    """The rotors alone (no links, no gravity): :meth:`ActuatorArrayModel.advance`."""

    def __init__(self, actuators: ActuatorArrayModel) -> None:
        self._actuators = actuators

    @property
    def actuators(self) -> ActuatorArrayModel:
        return self._actuators

    def step(self, dt: float) -> None:
        self._actuators.advance(dt)


@dataclass(frozen=True, slots=True)
class SimArrayConfig:
    """Everything a simulated array needs: the array config plus the simulated drives.

    ``params`` (one per actuator) are used by :class:`StandalonePhysics`; an external physics
    brings its own drives. ``kp`` / ``kd`` (N·m/rad, N·m·s/rad) are the drive's position loop for
    profiled moves. ``initial_positions`` (joint space; default: the geometry's home) is where
    the joints start. ``rate`` is the physics rate (Hz, ≥ :data:`MIN_RATE`), ``control_period``
    the control step (s). ``noise=False`` zeroes the sensor noise (σ) of the standalone drives.
    ``command_timeout`` (s; ``None``: off) is the drive watchdog of speed and current commands
    (module docstring).
    """

    array: ActuatorArrayConfig
    params: tuple[ActuatorParams, ...]
    kp: tuple[float, ...]
    kd: tuple[float, ...]
    initial_positions: tuple[float, ...] = ()
    seed: int | None = 0
    realtime: bool = True
    rate: float = MIN_RATE
    noise: bool = True
    control_period: float = 0.002
    jerk_time: float = 0.05
    bus_voltage: float = 48.0
    command_timeout: float | None = None

    def __post_init__(self) -> None:
        n = self.array.count
        for name in ("params", "kp", "kd", "initial_positions"):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))
        for name in ("params", "kp", "kd"):
            if len(getattr(self, name)) != n:
                raise ActuatorArrayConfigError(
                    f"SimArrayConfig.{name} has {len(getattr(self, name))} entries for {n} "
                    "joints; expected one per joint"
                )
        for name in ("kp", "kd"):
            for i, gain in enumerate(getattr(self, name)):
                if not (math.isfinite(gain) and gain >= 0.0):
                    raise ActuatorArrayConfigError(
                        f"SimArrayConfig.{name}[{i}] (joint {self.array.names[i]!r}) = {gain!r}; "
                        "expected a finite gain >= 0"
                    )
        if not self.initial_positions:
            homes = tuple(a.home for a in self.array.geometry.actuators)
            object.__setattr__(self, "initial_positions", homes)
        elif len(self.initial_positions) != n or not all(
            math.isfinite(p) for p in self.initial_positions
        ):
            raise ActuatorArrayConfigError(
                f"SimArrayConfig.initial_positions = {self.initial_positions!r}; expected {n} "
                "finite positions"
            )
        if self.command_timeout is not None:
            try:
                CommandExpiry.check_timeout(self.command_timeout)
            except ValueError as exc:
                raise ActuatorArrayConfigError(f"SimArrayConfig: {exc}") from None
        if not (math.isfinite(self.rate) and self.rate >= MIN_RATE):
            raise ActuatorArrayConfigError(
                f"SimArrayConfig.rate = {self.rate!r} Hz; expected >= {MIN_RATE:g} Hz"
            )
        for name in ("control_period", "jerk_time"):
            value = getattr(self, name)
            if not (math.isfinite(value) and 0.0 < value <= 1.0):
                raise ActuatorArrayConfigError(
                    f"SimArrayConfig.{name} = {value!r} s; expected a duration in (0, 1] s"
                )
        seed: object = self.seed
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ActuatorArrayConfigError(f"SimArrayConfig.seed = {self.seed!r}; expected an int")

    @classmethod
    def from_model(
        cls,
        model: RobotModel,
        *,
        policy: LimitPolicy = LimitPolicy.REJECT,
        seed: int | None = 0,
        realtime: bool = True,
        rate: float = MIN_RATE,
        noise: bool = True,
        command_timeout: float | None = None,
    ) -> SimArrayConfig:
        """A simulated array of ``model``'s actuated joints with drives derived from it.

        Each drive starts from the MD-series figures (:meth:`ActuatorParams.hb50`) and takes
        from the robot file what it states: rotor inertia, viscous and Coulomb friction
        (``dynamics``), torque limit (``effort``), torque constant (``effort / current``),
        brakes (holding the torque limit) and sensor noise (``simulation``). The drive's own
        speed limit is 1.5 × the joint's velocity limit, so that commanded speeds are reachable;
        the phase resistance is scaled so the copper loss at the current limit equals the
        MD-series figure (a motor driven at its limit trips its thermal protection in about a
        minute, whatever its size). Position-loop gains come from the model's ``kp`` / ``kd``
        parameters if declared, else 60 N·m/rad and 2 N·m·s/rad.
        """
        array = ActuatorArrayConfig.from_model(model, policy=policy)
        base = ActuatorParams.hb50()
        base_loss = (base.torque_limit / base.torque_constant) ** 2 * base.phase_resistance
        sim = model.simulation
        params: list[ActuatorParams] = []
        for joint, geom in zip(model.actuated_joints(), array.geometry.actuators, strict=True):
            lim, dyn = joint.limits, joint.dynamics
            torque_limit = lim.effort_max if math.isfinite(lim.effort_max) else base.torque_limit
            kt = (
                lim.effort_max / lim.current_max
                if math.isfinite(lim.effort_max) and math.isfinite(lim.current_max)
                else base.torque_constant
            )
            v_limit = (
                1.5 * lim.velocity_max if math.isfinite(lim.velocity_max) else base.velocity_limit
            )
            specified = dyn.armature > 0.0
            params.append(
                dataclasses.replace(
                    base,
                    rotor_inertia=dyn.armature if specified else base.rotor_inertia,
                    viscous_friction=dyn.damping if specified else base.viscous_friction,
                    coulomb_friction=dyn.friction if specified else base.coulomb_friction,
                    torque_limit=torque_limit,
                    velocity_limit=v_limit,
                    torque_rolloff_band=min(base.torque_rolloff_band, 0.25 * v_limit),
                    torque_constant=kt,
                    phase_resistance=base_loss / (torque_limit / kt) ** 2,
                    has_brake=geom.has_brakes,
                    brake_holding_torque=torque_limit if geom.has_brakes else 0.0,
                    position_noise=sim.position_noise if noise else 0.0,
                    velocity_noise=sim.velocity_noise if noise else 0.0,
                    torque_noise=sim.effort_noise if noise else 0.0,
                )
            )
        kp, kd = 60.0, 2.0
        names = {p.name for p in model.parameters}
        if "kp" in names:
            kp = float(model.parameter("kp").default)
        if "kd" in names:
            kd = float(model.parameter("kd").default)
        n = array.count
        return cls(
            array=array,
            params=tuple(params),
            kp=(kp,) * n,
            kd=(kd,) * n,
            seed=seed,
            realtime=realtime,
            rate=rate,
            noise=noise,
            command_timeout=command_timeout,
        )


class SimActuatorArray(ActuatorArray):
    """A simulated actuator array (see the module docstring).

    ``physics=None`` simulates the drives alone (:class:`StandalonePhysics`); otherwise pass an
    :class:`ExternalPhysics` whose ``actuators`` have the config's joint names in the same order.
    """

    def __init__(
        self,
        config: SimArrayConfig,
        physics: ExternalPhysics | None = None,
        *,
        on_saturation: SaturationCallback | None = None,
    ) -> None:
        if not isinstance(config, SimArrayConfig):
            raise ActuatorArrayConfigError(f"config = {config!r}; expected a SimArrayConfig")
        super().__init__(config.array, on_saturation=on_saturation)
        self._sim = config
        n = self.count
        cal = self._calibration
        start = cal.position_to_actuator(np.array(config.initial_positions, dtype=np.float64))
        if physics is None:
            model = ActuatorArrayModel(
                config.array.names,
                config.params,
                bus_voltage=config.bus_voltage,
                seed=config.seed,
                max_substep=1.0 / config.rate,
                initial_positions=start,
            )
            physics = StandalonePhysics(model)
        elif not isinstance(physics, ExternalPhysics):
            raise ActuatorArrayConfigError(
                f"physics = {physics!r}; expected an object with .actuators and .step(dt)"
            )
        elif physics.actuators.names != config.array.names:
            raise ActuatorArrayConfigError(
                f"physics actuators {physics.actuators.names} do not match the array's joints "
                f"{config.array.names} (same names, same order)"
            )
        self._physics = physics
        self._model = physics.actuators
        drive_params = self._model.params
        self._inertia = np.array([p.rotor_inertia for p in drive_params])
        self._viscous = np.array([p.viscous_friction for p in drive_params])
        self._coulomb = np.array([p.coulomb_friction for p in drive_params])
        self._kt = np.array([p.torque_constant for p in drive_params])
        self._still = np.array([p.stall_velocity for p in drive_params])
        self._brake_fitted = np.array([p.has_brake for p in drive_params], dtype=np.bool_)
        # Fixed by the drives fitted, and asked by every command: computed once.
        caps = set(Capability)
        if not self._brake_fitted.any():
            caps.discard(Capability.BRAKES)
        self._caps = frozenset(caps)
        self._kp = np.array(config.kp, dtype=np.float64)
        self._kd = np.array(config.kd, dtype=np.float64)
        self._moves = ProfiledMoves(
            config.array,
            jerk_time=config.jerk_time,
            initial_positions=self._model.positions.copy(),
        )
        # The drive's limit supervisor: speed moves stop at the range's ends, and current and
        # impedance commands are bounded each control step (module docstring, "Limits").
        self._moves.profile.set_position_bounds(*self._actuator_range(margin=True))
        self._guard = self._make_limit_guard(config.control_period, self._inertia)
        self._limited = np.zeros(n, dtype=np.bool_)
        self._speed_limited = np.zeros(n, dtype=np.bool_)  # of _limited: at the speed limit
        # p, v, τ, kp, kd as sent this step
        self._send = (np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n))
        self._load = np.zeros(n)  # N·m: the guard's estimate of the load on each drive
        self._cmd_p = np.zeros(n)
        self._cmd_v = np.zeros(n)
        self._cmd_tau = np.zeros(n)
        self._cmd_kp = np.zeros(n)
        self._cmd_kd = np.zeros(n)
        self._accel = np.zeros(n)
        self._v_before = np.zeros(n)
        self._state_lock = threading.RLock()  # re-entrant: driver calls inside locked()
        #: Joints whose drive stage was switched off alone (``joint_power``) while the array's
        #: power stays on; guarded by ``_state_lock``.
        self._joint_off = np.zeros(n, dtype=np.bool_)
        #: The status word and array power of the last read, and the drives'
        #: ``drive_state_version`` they were derived from (flags change at 10 ms at most).
        self._status = np.zeros(n, dtype=np.uint32)
        self._status_version = -1
        self._array_power = False
        #: The drive watchdog, or None; guarded by ``_state_lock``. Its clock is
        #: :meth:`_expiry_clock`: monotonic in real time, simulated time in stepping mode.
        self._expiry = (
            CommandExpiry(n, config.command_timeout) if config.command_timeout is not None else None
        )
        self._stop = threading.Event()
        self._thread_error: BaseException | None = None
        self._thread: threading.Thread | None = None
        if config.realtime:
            self._thread = threading.Thread(
                target=self._run, name=f"sim-array-{id(self):x}", daemon=True
            )
            self._thread.start()

    # ---------------------------------------------------------------- simulator extras

    @property
    def sim_config(self) -> SimArrayConfig:
        """The simulator configuration."""
        return self._sim

    @property
    def realtime(self) -> bool:
        """True when a thread advances the simulation in real time."""
        return self._thread is not None

    @property
    def time(self) -> float:
        """Simulated time, s."""
        with self._state_lock:
            return self._model.time

    @contextlib.contextmanager
    def locked(self) -> Iterator[ExternalPhysics]:
        """The physics, with the simulation paused while the block runs (scenario set-up:
        ``with sim.locked() as physics: physics.actuators.set_blocked(...)``)."""
        self._check_open()
        with self._state_lock:
            yield self._physics

    def step(self, dt: float) -> None:
        """Advance the simulation by ``dt`` s (stepping mode only, ``realtime=False``): whole
        control steps of ``control_period``, then the rest in one step. (Equal steps of
        ``dt / count`` could split the physics timestep: 5 ms at a 2 ms control period gave
        three steps of 1.67 ms, which the world refuses — a 1 kHz bridge catching up on four
        dropped slots stopped its loop.)"""
        with self._api_lock:
            self._check_open()
            if self._thread is not None:
                raise DriverError(
                    "step() is for stepping mode; this simulator runs in real time "
                    "(open it with realtime=false)"
                )
            if not (isinstance(dt, int | float) and math.isfinite(dt) and dt > 0.0):
                raise LimitError("SimActuatorArray", "dt", dt, "a finite duration > 0 s")
            period = self._sim.control_period
            whole = int(dt / period + 1e-9)
            rest = dt - whole * period
            with self._state_lock:
                for _ in range(whole):
                    self._tick(period)
                if rest > 1e-9 * period:
                    self._tick(rest)

    # ---------------------------------------------------------------- the control step

    def _tick(self, dt: float) -> None:
        """One control step: sample the profiles, command the drives, advance the physics."""
        if self._expiry is not None and self._expiry.any_armed:
            late = self._expiry.expired(self._expiry_clock())
            if late.size:  # not renewed: a profiled stop from where the joints are
                self._moves.move_at(late, np.zeros(late.size), self._profile_start)
        p_ref, v_ref, a_ref = self._moves.profile.step(dt)
        profiled = self._moves.mode == MODE_PROFILE
        if profiled.any():
            feed_forward = self._inertia * a_ref + self._viscous * v_ref
            # Coulomb compensation ramps in over ±_FRICTION_BAND: at rest the reference speed is
            # round-off (~1e-16), and c·sign(round-off) would push a resting joint off target.
            feed_forward += self._coulomb * np.clip(v_ref / _FRICTION_BAND, -1.0, 1.0)
            np.copyto(self._cmd_p, p_ref, where=profiled)
            np.copyto(self._cmd_v, v_ref, where=profiled)
            np.copyto(self._cmd_tau, feed_forward, where=profiled)
            np.copyto(self._cmd_kp, self._kp, where=profiled)
            np.copyto(self._cmd_kd, self._kd, where=profiled)
        model = self._model
        held = (self._cmd_p, self._cmd_v, self._cmd_tau, self._cmd_kp, self._cmd_kd)
        command = held
        mode = self._moves.mode
        guarded = ((mode == MODE_CURRENT) | (mode == MODE_IMPEDANCE)) & model.powered
        guarded &= ~model.braked
        if guarded.any():
            # The held command stays as commanded; what the drive gets this step is bounded.
            for sent, value in zip(self._send, held, strict=True):
                np.copyto(sent, value)
            command = self._send
            # The load the last step's drive torque met beyond the rotor's inertia (a
            # disturbance observer: links, gravity, ground, friction, a block).
            np.multiply(self._inertia, self._accel, out=self._load)
            np.subtract(model.motor_torques, self._load, out=self._load)
            self._guard.apply(
                guarded, position=model.positions, velocity=model.velocities,
                p_ref=command[0], v_ref=command[1], torque=command[2],
                kp=command[3], kd=command[4], load=self._load,
            )
            np.logical_and(self._moves.profile.limited, profiled, out=self._limited)
            self._limited |= self._guard.limited
            # a profiled speed move is only ever stopped at an end (its speed is checked)
            np.copyto(self._speed_limited, self._guard.speed_limited)
        else:
            np.logical_and(self._moves.profile.limited, profiled, out=self._limited)
            self._speed_limited[:] = False
        model.set_command(
            position=command[0],
            velocity=command[1],
            torque=command[2],
            kp=command[3],
            kd=command[4],
        )
        self._v_before[:] = model.velocities
        self._physics.step(dt)
        np.subtract(model.velocities, self._v_before, out=self._accel)
        self._accel /= dt

    def _expiry_clock(self) -> float:
        """The drive watchdog's clock, s: in real time the monotonic wall clock (a safety bound on
        wall-clock silence, which simulated time, caught up in a burst after a stall, undercuts);
        in stepping mode simulated time (the caller's steps are the only clock there)."""
        return time.monotonic() if self._thread is not None else self._model.time

    def _run(self) -> None:
        period = self._sim.control_period
        deadline = time.monotonic()
        try:
            while not self._stop.is_set():
                deadline += period
                with self._state_lock:
                    self._tick(period)
                delay = deadline - time.monotonic()
                if delay > 0.0:
                    self._stop.wait(delay)
                elif delay < -0.1:  # a host stall: resume from now rather than race to catch up
                    deadline = time.monotonic()
        except BaseException as exc:  # reported to the caller by the next API call
            self._thread_error = exc

    def _check_thread(self) -> None:
        if self._thread_error is not None:
            raise DriverError(
                f"the simulation thread stopped: {self._thread_error!r}"
            ) from self._thread_error

    # ---------------------------------------------------------------- hooks

    def _capabilities(self) -> frozenset[Capability]:
        return self._caps

    def _motor_power(self) -> bool:
        self._check_thread()
        with self._state_lock:
            return self._array_powered()

    def _array_powered(self) -> bool:
        """The array's power: every drive on but those switched off alone (``_state_lock``)."""
        return bool((self._model.powered | self._joint_off).all())

    def _joints_powered(self) -> BoolArray:
        with self._state_lock:
            return self._model.powered.copy()

    def _read_raw(self) -> RawReading:
        self._check_thread()
        with self._state_lock:
            model = self._model
            m = model.measure()
            # A commanded move is MOVING from the call on, not only once the joint has sped up.
            moving = (np.abs(model.velocities) > self._still) | (
                (self._moves.mode == MODE_PROFILE) & self._moves.profile.active
            )
            accel = self._accel.copy()
            limited = self._limited.copy()
            speed_limited = self._speed_limited.copy()
            if model.drive_state_version != self._status_version:
                # bool array × uint32 bit → uint32 array: two numpy calls per flag, none per
                # joint; only when a flag may have changed (power, brakes, protections).
                status = np.multiply(m.motor_overheated, _BIT_MOTOR_OVERHEATED)
                status |= np.multiply(m.driver_overheated, _BIT_DRIVER_OVERHEATED)
                status |= np.multiply(m.stalled, _BIT_STALLED)
                status |= np.multiply(model.blocked, _BIT_BLOCKED)
                status |= np.multiply(~m.powered, _BIT_UNPOWERED)
                self._status = status
                self._array_power = bool((m.powered | self._joint_off).all())
                self._status_version = model.drive_state_version
            status = self._status.copy()
            array_power = self._array_power
        return RawReading(
            time=m.time,
            position=m.position,
            velocity=m.velocity,
            acceleration=accel,
            current=m.phase_current,
            effort=m.torque,
            temperature=m.motor_temperature,
            status=status,
            moving=moving,
            braked=m.braked,
            stalled=m.stalled,
            motor_power=array_power,
            powered=m.powered,  # measure() returns fresh arrays
            limited=limited,
            speed_limited=speed_limited,
        )

    def _measured_state(self) -> tuple[FloatArray, FloatArray]:
        """The drive's own (noise-free) view: soft limits act inside the drive here."""
        with self._state_lock:
            return self._model.positions.copy(), self._model.velocities.copy()

    def _request_power(self, on: bool) -> None:
        self._check_thread()
        with self._state_lock:
            model = self._model
            model.set_power(np.full(self.count, on))
            self._joint_off[:] = False
            self._renewed(self._all, False)
            self._cmd_tau[:] = 0.0
            self._cmd_kp[:] = 0.0
            self._cmd_kd[:] = 0.0
            if on:
                # Hold where the joints are (or bring moving ones to a profiled stop).
                self._moves.profile.reset(model.positions.copy(), model.velocities.copy())
                self._moves.mode[:] = MODE_PROFILE
            else:
                self._moves.mode[:] = MODE_OFF

    def _request_joint_power(self, indices: IntArray, on: bool) -> None:
        """One joint's drive stage: off — no torque, the joint is limp (mode off); on — it holds
        where it is measured (a profile from its position at rest), like power-on."""
        self._check_thread()
        with self._state_lock:
            model = self._model
            powered = model.powered.copy()
            powered[indices] = on
            model.set_power(powered)
            self._joint_off[indices] = not on
            self._renewed(indices, False)
            self._cmd_kp[indices] = 0.0
            self._cmd_kd[indices] = 0.0
            self._cmd_tau[indices] = 0.0
            if on:
                self._moves.profile.reset_joints(
                    indices.tolist(), model.positions[indices], np.zeros(indices.size)
                )
                self._moves.mode[indices] = MODE_PROFILE
            else:
                self._moves.mode[indices] = MODE_OFF

    def _request_brakes(self, on: bool) -> None:
        """Engage or release the brakes; either way the braked joints stop what they were
        doing and hold where they are measured, so a move or current cut short by the brake
        never resumes as a jump on release (commands are refused while braked)."""
        self._check_thread()
        with self._state_lock:
            model = self._model
            model.set_brakes(self._brake_fitted & on)
            fitted = np.flatnonzero(self._brake_fitted & model.powered)
            if fitted.size:
                self._renewed(fitted, False)
                self._moves.mode[fitted] = MODE_PROFILE
                self._moves.profile.reset_joints(
                    fitted.tolist(), model.positions[fitted], np.zeros(fitted.size)
                )
                self._cmd_tau[fitted] = 0.0

    def _engaged_brakes(self) -> BoolArray:
        with self._state_lock:
            return self._model.braked.copy()

    def _wait_clock(self) -> float:
        """Real time: the wall clock; stepping mode: simulated time."""
        return super()._wait_clock() if self._thread is not None else self.time

    def _wait_tick(self) -> None:
        """Real time: sleep; stepping mode: advance the simulation one control step."""
        if self._thread is not None:
            super()._wait_tick()
        else:
            self.step(self._sim.control_period)

    def _request_speed(self, indices: IntArray, speeds: FloatArray) -> None:
        self._check_thread()
        with self._state_lock:
            self._moves.set_speed(indices, speeds)

    def _request_accel(self, indices: IntArray, accels: FloatArray) -> None:
        self._check_thread()
        with self._state_lock:
            self._moves.set_accel(indices, accels)
            self._guard.set_deceleration(indices, accels)

    def _profile_start(self, switching: IntArray) -> tuple[FloatArray, FloatArray]:
        """Joints coming from current/impedance mode start profiles from where they are."""
        model = self._model
        return model.positions[switching], model.velocities[switching]

    def _renewed(self, indices: IntArray, renewed: BoolArray | bool) -> None:
        """The drive watchdog: ``indices`` got a speed/current command (``renewed``) or one
        that ends by itself. Call with ``_state_lock`` held."""
        if self._expiry is None:
            return
        mask = np.broadcast_to(np.asarray(renewed, dtype=np.bool_), indices.shape)
        self._expiry.arm(indices[mask], self._expiry_clock())  # its arrival, on that clock
        self._expiry.disarm(indices[~mask])

    def _write_positions(self, indices: IntArray, positions: FloatArray) -> None:
        self._check_thread()
        with self._state_lock:
            self._moves.move_to(indices, positions, self._profile_start)
            self._renewed(indices, False)

    def _write_speeds(self, indices: IntArray, speeds: FloatArray) -> None:
        self._check_thread()
        with self._state_lock:
            self._moves.move_at(indices, speeds, self._profile_start)
            self._renewed(indices, speeds != 0.0)

    def _write_currents(self, indices: IntArray, currents: FloatArray) -> None:
        self._check_thread()
        with self._state_lock:
            self._renewed(indices, True)
            self._moves.mode[indices] = MODE_CURRENT
            self._cmd_kp[indices] = 0.0
            self._cmd_kd[indices] = 0.0
            self._cmd_p[indices] = 0.0
            self._cmd_v[indices] = 0.0
            self._cmd_tau[indices] = self._kt[indices] * currents

    def _write_impedance(self, targets: ImpedanceTargets) -> None:
        """Apply the targets; a joint the command brakes gets no drive torque (kp = kd = τ = 0),
        as a servo drive switches its stage off behind an engaged brake: it neither heats
        fighting the brake nor winds up toward a target it would jump to on release."""
        self._check_thread()
        with self._state_lock:
            self._model.set_brakes(targets.brake)
            self._renewed(self._all, False)  # a stream its sender watches (the node's watchdog)
            self._moves.mode[:] = MODE_IMPEDANCE
            driven = ~targets.brake
            self._cmd_kp[:] = targets.kp * driven
            self._cmd_kd[:] = targets.kd * driven
            self._cmd_p[:] = targets.position
            self._cmd_v[:] = targets.velocity
            self._cmd_tau[:] = targets.torque * driven

    def _close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        if self._thread is None or not self._thread.is_alive():
            # the last sampler has stopped: no ruckig object outlives the driver's use of it
            # (ProfileGenerator.release: nanobind's leak report at exit)
            self._moves.release()


# --------------------------------------------------------------------------------------------
# URL entry point
# --------------------------------------------------------------------------------------------


def _bool_option(url: DriverURL, key: str, default: bool) -> bool:
    text = url.option(key)
    if text is None:
        return default
    value = text.strip().lower()
    if value in ("true", "1", "yes", "on"):
        return True
    if value in ("false", "0", "no", "off"):
        return False
    raise DriverURLError(f"driver URL {url.text!r}: {key}={text!r}; expected true or false")


def _float_option(url: DriverURL, key: str, default: float) -> float:
    text = url.option(key)
    if text is None:
        return default
    try:
        return float(text)
    except ValueError:
        raise DriverURLError(
            f"driver URL {url.text!r}: {key}={text!r}; expected a number"
        ) from None


def open_sim(url: DriverURL) -> ActuatorArray:
    """Open ``sim://<robot>?seed=N&realtime=true|false&rate=HZ&noise=true|false&command_timeout=S``.

    ``<robot>`` is a bundled robot (``arm6``, ``hb50``) or a robot file: a path ending in
    ``.yaml``, ``.yml`` or ``.urdf``, relative to the working directory
    (``sim://robots/pan_tilt.yaml``) or absolute (``sim:///home/me/pan_tilt.urdf``); see
    :mod:`.robots`. ``seed`` (int, default 0) seeds the sensor noise; ``realtime=false`` gives
    stepping mode (:meth:`SimActuatorArray.step`); ``rate`` is the physics rate in Hz (≥ 2000,
    default 2000); ``noise=false`` removes sensor noise — by default each reading carries the
    robot file's ``simulation`` noise (1 σ; hb50: position 6.4e-4 rad, velocity 0.38 rad/s, torque
    0.0052 N·m, from its data sheet), so a robot standing still reports joint velocities of a few
    tenths of a rad/s (measured: σ 0.381 rad/s, peaks 1.5 rad/s over 500 readings; with
    ``noise=false`` σ 0.036 rad/s, the unpowered legs settling); ``command_timeout`` (s, default
    off) is the drive watchdog of speed and current commands. Unknown robots and options are a
    :class:`~jointbus.drivers.errors.DriverURLError`; a robot file that is missing or cannot
    describe an actuator array a :class:`~jointbus.drivers.errors.DriverFileError` naming the
    file (and the key and value at fault). ``sim://rover`` is the mobile base of
    :mod:`jointbus.drivers.sim.rover` (its own simulator; no options).
    """
    from jointbus.drivers.sim.robots import (
        SimOptions,
        build_sim_robot,
        build_sim_robot_file,
        sim_robots,
    )

    if url.host == "rover" and not url.path:  # a mobile base: its own simulator
        from jointbus.drivers.sim.rover import open_rover

        return open_rover(url)
    url.unknown_options(_URL_OPTIONS)
    location = _robot_location(url)
    is_file = _names_a_file(location)
    if not is_file and location not in sim_robots():
        raise DriverURLError(
            f"driver URL {url.text!r}: no simulated robot {location!r}; available: "
            + ", ".join(sorted((*sim_robots(), "rover")))
            + ", or a robot file (sim://path/to/robot.yaml, .urdf)"
        )
    seed_text = url.option("seed")
    seed = 0
    if seed_text is not None:
        try:
            seed = int(seed_text)
        except ValueError:
            raise DriverURLError(
                f"driver URL {url.text!r}: seed={seed_text!r}; expected an integer"
            ) from None
    rate = _float_option(url, "rate", MIN_RATE)
    if not (math.isfinite(rate) and rate >= MIN_RATE):
        raise DriverURLError(
            f"driver URL {url.text!r}: rate={rate:g}; expected a physics rate >= {MIN_RATE:g} Hz"
        )
    timeout_text = url.option("command_timeout")
    command_timeout = None
    if timeout_text is not None:
        command_timeout = _float_option(url, "command_timeout", math.nan)
        try:
            CommandExpiry.check_timeout(command_timeout)
        except ValueError:
            raise DriverURLError(
                f"driver URL {url.text!r}: command_timeout={timeout_text!r}; expected a time "
                "> 0 s (the drive watchdog of speed and current commands)"
            ) from None
    options = SimOptions(
        seed=seed,
        realtime=_bool_option(url, "realtime", True),
        rate=rate,
        noise=_bool_option(url, "noise", True),
        command_timeout=command_timeout,
    )
    if not is_file:
        return build_sim_robot(location, options)
    return _open_robot_file(url, Path(location), options, build_sim_robot_file)


def robot_file_name(url: DriverURL) -> str | None:
    """The robot's ``name`` in the robot file a ``sim://`` URL opens (a URDF's robot name), or
    ``None`` when the URL names no file (a bundled robot, the rover, another scheme).

    Why: ``jointbus serve sim://robots/arm3.yaml`` serves the array under the robot's own name
    (``/arm3``); the URL's host (``robots``, or ``arm3.yaml``) names no robot. A file that is
    missing or describes no robot is the :class:`DriverFileError` :func:`open_sim` would raise.
    """
    from jointbus.drivers.sim.robots import load_robot_file
    from jointbus.model.errors import ModelError

    if url.scheme != "sim" or (url.host == "rover" and not url.path):
        return None
    location = _robot_location(url)
    if not _names_a_file(location):
        return None
    resolved = _existing_robot_file(url, Path(location))
    try:
        return load_robot_file(resolved).name
    except (ModelError, ValueError, LookupError) as exc:
        raise DriverFileError(
            url.text, str(resolved), f"robot file {resolved} cannot be simulated: {exc}"
        ) from exc


def _names_a_file(location: str) -> bool:
    """``sim://`` names a robot file (a path, or a robot-file ending), not a bundled robot."""
    from jointbus.drivers.sim.robots import ROBOT_FILE_SUFFIXES

    return "/" in location or location.lower().endswith(ROBOT_FILE_SUFFIXES)


def _existing_robot_file(url: DriverURL, path: Path) -> Path:
    """``path`` resolved, or the DriverFileError saying where it was looked for."""
    resolved = path.resolve()
    if not resolved.is_file():
        raise DriverFileError(
            url.text,
            str(resolved),
            f"no robot file {str(path)!r} (looked for {resolved}); expected a readable .yaml, "
            ".yml or .urdf robot file, or a bundled robot",
        )
    return resolved


def _robot_location(url: DriverURL) -> str:
    """What follows ``sim://`` up to the options: a robot name or a file path, as written."""
    rest = url.text.split("://", 1)[1]
    for mark in ("?", "#"):
        rest = rest.split(mark, 1)[0]
    return unquote(rest)


def _open_robot_file(
    url: DriverURL,
    path: Path,
    options: SimOptions,
    build: Callable[[Path, SimOptions], SimActuatorArray],
) -> SimActuatorArray:
    """Build the robot of file ``path``, turning every way it can fail into a DriverFileError."""
    from jointbus.model.errors import ModelError

    resolved = _existing_robot_file(url, path)
    try:
        return build(resolved, options)
    except (ModelError, ActuatorArrayConfigError, ValueError, LookupError) as exc:
        raise DriverFileError(
            url.text, str(resolved), f"robot file {resolved} cannot be simulated: {exc}"
        ) from exc
