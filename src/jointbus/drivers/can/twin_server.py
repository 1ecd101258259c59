"""The motor twin for a ``can://`` URL: simulated MIT-mode motors answering on the URL's bus.

Where it sits: :mod:`jointbus.drivers.can`, above :mod:`.firmware_twin` (the simulated firmware)
and :mod:`.config` (the URL); used by the ``jointbus can-twin`` command, the README and the
driver conformance tests. A user who wants to try ``can://`` without motors should not have to
assemble motor specs, physics parameters and a bus endpoint by hand: :class:`TwinServer` reads
the *same* URL the driver opens — robot, motor models, CAN ids, interface, channel — and builds
the twin from it, so the two sides cannot disagree.

The twin's motors have the physics the simulator derives from the robot file
(:meth:`~jointbus.drivers.sim.driver.SimArrayConfig.from_model`) and start **at rest inside
their limits**, where the robot is found when its power comes on (:func:`rest_positions`): the
robot file's ``rest`` pose where it has one — hb50 lying on its belly, legs folded, the pose
``sim://hb50`` starts in too — else each joint's geometry home, moved :data:`LIMIT_MARGIN` inside
a limit it lies on, near or beyond. Why: real motors are never found at an arbitrary 0; the twin
started every motor at 0 rad, which is hb50's knee limit, so reading the positions and holding
them (the README's impedance pattern) was refused on its first command, half the knees' noisy
readings lying past the limit. On python-can's ``virtual`` interface both ends must live in one
process (that interface does not cross processes); on a SocketCAN ``vcan`` interface or a real
bus the twin can run in its own process (``jointbus can-twin URL``).

**Time.** The twin stands in for real motors, so its physics runs on the monotonic clock
(:func:`time.monotonic`; ``clock=``): each frame advances the motors by the time since the last
step, at most the ``can://`` driver's clamp for the URL's ``period``
(:func:`~.driver.max_profile_step`: 50 ms, or two periods if longer), so positions and the
velocities replied agree with the wall clock whether the program exchanges at 100 Hz, 500 Hz or
flat out, and a stall moves the motors no further than it moves the driver's setpoints. Until
2026-12-06 the twin advanced the URL's ``period`` per exchange: on the default 2 ms and served at
100 Hz it moved 5× slow by the wall clock, and replied velocities 5× the positions' change per
second. ``clock=None`` keeps that per-exchange stepping, for tests that run the driver in
lock-step with the twin (:class:`~.firmware_twin.FirmwareTwin`, "Time").

**Fault injection** (:attr:`TwinServer.twin`, a :class:`FirmwareTwin`; also ``jointbus can-twin``
options): ``drop_replies(can_id, True)`` loses one motor's replies while it still acts on commands
(a broken transmit line: the driver's read of that motor times out), ``set_silent(True)`` makes
every motor ignore all frames and answer nothing (a powered-off bus segment), and
``set_error_code(can_id, code)`` makes a motor report an error byte (the models whose reply
layout is ``extended``, e.g. ``md80``). Each is undone by the opposite call.

Example (one process)::

    url = "can://virtual/demo?robot=hb50&model=md80"
    with TwinServer.from_url(url), drivers.open(url) as legs:
        legs.power(True)
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Final, Self

import can
import numpy as np
import numpy.typing as npt

from jointbus.drivers.actuator_array import ActuatorArrayConfigError
from jointbus.drivers.can.config import CanArrayConfig
from jointbus.drivers.can.driver import max_profile_step
from jointbus.drivers.can.firmware_twin import FirmwareTwin
from jointbus.drivers.can.motor_link import MotorSpec
from jointbus.drivers.errors import DriverIOError
from jointbus.drivers.registry import DriverURL
from jointbus.drivers.sim.driver import SimArrayConfig

__all__ = ["LIMIT_MARGIN", "REST_POSE", "TwinServer", "rest_positions"]

#: Name of the robot-file pose the twin's motors start in, when the robot file has one.
REST_POSE: Final = "rest"
#: How far inside a position limit a home that lies on (or beyond) it is moved: 0.05 rad (or m),
#: at most a tenth of the joint's range — far more than the sensor noise (hb50: σ 6.4e-4 rad),
#: so no reading of the resting joint lies past its limit.
LIMIT_MARGIN: Final = 0.05


def rest_positions(config: CanArrayConfig) -> npt.NDArray[np.float64]:
    """Where the motors of ``config`` start, in *joint* space, rad or m (module docstring): the
    robot file's ``rest`` pose where it has one (the robot model checks that its poses lie
    within the limits), else the joint's geometry home, moved :data:`LIMIT_MARGIN` (at most a
    tenth of the joint's range) inside a limit it lies on, near or beyond."""
    robot = config.robot
    rest = robot.pose(REST_POSE) if robot is not None and REST_POSE in robot.poses else {}
    start = np.array([a.home for a in config.array.geometry.actuators], dtype=np.float64)
    for i, (name, spec) in enumerate(zip(config.array.names, config.array.limits, strict=True)):
        if name in rest:
            start[i] = rest[name]
            continue
        low, high = spec.position_min, spec.position_max
        if math.isfinite(low) and math.isfinite(high):
            margin = min(LIMIT_MARGIN, 0.1 * (high - low))
            start[i] = min(max(start[i], low + margin), high - margin)
    return start


class TwinServer:
    """A :class:`FirmwareTwin` for the motors of a :class:`CanArrayConfig`, on its own bus endpoint.

    ``seed`` seeds the motors' sensor noise; ``noise=False`` removes it. ``initial_positions``
    (joint space, rad or m, one per joint in actuator order) is where the motors start; default
    :func:`rest_positions`. ``clock`` (monotonic seconds, default :func:`time.monotonic`) is what
    the motors' physics runs by; ``None`` steps it one ``period`` per exchange instead (module
    docstring, "Time"). The twin answers from a thread between :meth:`start` and :meth:`stop` (or
    inside a ``with`` block); its bus endpoint is opened on :meth:`start` and closed on
    :meth:`stop`.
    """

    def __init__(
        self,
        config: CanArrayConfig,
        *,
        seed: int | None = 0,
        noise: bool = True,
        initial_positions: Sequence[float] | None = None,
        clock: Callable[[], float] | None = time.monotonic,
    ) -> None:
        if config.robot is None:
            raise ActuatorArrayConfigError(
                "the motor twin needs the robot description (build the config with "
                "CanArrayConfig.from_model or from a URL)"
            )
        self._config = config
        sim = SimArrayConfig.from_model(config.robot, noise=noise)
        cal = config.array.calibrations
        start = (
            rest_positions(config).tolist()
            if initial_positions is None
            else [float(p) for p in initial_positions]
        )
        if len(start) != len(cal) or not all(math.isfinite(p) for p in start):
            raise ActuatorArrayConfigError(
                f"TwinServer initial_positions = {initial_positions!r}; expected {len(cal)} "
                "finite positions (rad or m), one per joint in actuator order"
            )
        self._initial = np.array(
            [c.direction * p + c.offset for c, p in zip(cal, start, strict=True)]
        )
        self._params = sim.params
        self._seed = seed
        self._clock = clock
        self._bus: can.BusABC | None = None
        self._twin: FirmwareTwin | None = None

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        seed: int | None = 0,
        noise: bool = True,
        clock: Callable[[], float] | None = time.monotonic,
    ) -> TwinServer:
        """The twin of the motors ``url`` (a ``can://`` driver URL) describes."""
        config = CanArrayConfig.from_url(DriverURL.parse(url))
        return cls(config, seed=seed, noise=noise, clock=clock)

    @property
    def config(self) -> CanArrayConfig:
        """The CAN configuration the twin serves."""
        return self._config

    @property
    def twin(self) -> FirmwareTwin:
        """The running firmware twin (counters, true positions, fault injection)."""
        if self._twin is None:
            raise RuntimeError("the twin is not running; call start() first")
        return self._twin

    def start(self) -> None:
        """Open the twin's bus endpoint and answer frames on a thread."""
        if self._twin is not None:
            raise RuntimeError("the twin is already running")
        config = self._config
        kwargs: dict[str, object] = {"interface": config.interface, "channel": config.channel}
        if config.bitrate is not None:
            kwargs["bitrate"] = config.bitrate
        try:
            bus = can.Bus(**kwargs)  # type: ignore[arg-type]
        except (can.CanError, OSError, ValueError, ImportError) as exc:
            raise DriverIOError(
                f"cannot open CAN interface {config.interface!r} channel {config.channel!r} for "
                f"the motor twin: {exc}"
            ) from exc
        twin = FirmwareTwin(
            bus,
            [MotorSpec(m.joint, m.can_id, m.model) for m in config.motors],
            self._params,
            control_period_s=config.period_s,
            host_id=config.host_id,
            seed=self._seed,
            initial_positions=self._initial,
            clock=self._clock,
            max_step_s=max_profile_step(config.period_s),
        )
        twin.start()
        self._bus, self._twin = bus, twin

    def stop(self) -> None:
        """Stop answering and close the bus endpoint (idempotent)."""
        twin, bus = self._twin, self._bus
        self._twin = self._bus = None
        try:
            if twin is not None:
                twin.stop()
        finally:
            if bus is not None:
                bus.shutdown()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
