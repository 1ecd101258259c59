"""The motor twin for a ``can://`` URL: simulated MIT-mode motors answering on the URL's bus.

Where it sits: :mod:`jointbus.drivers.can`, above :mod:`.firmware_twin` (the simulated firmware)
and :mod:`.config` (the URL); used by the ``jointbus can-twin`` command, the README and the
driver conformance tests. A user who wants to try ``can://`` without motors should not have to
assemble motor specs, physics parameters and a bus endpoint by hand: :class:`TwinServer` reads
the *same* URL the driver opens — robot, motor models, CAN ids, interface, channel — and builds
the twin from it, so the two sides cannot disagree.

The twin's motors have the physics the simulator derives from the robot file
(:meth:`~jointbus.drivers.sim.driver.SimArrayConfig.from_model`) and start at the geometry's home
positions, as ``sim://`` does. On python-can's ``virtual`` interface both ends must live in one
process (that interface does not cross processes); on a SocketCAN ``vcan`` interface or a real
bus the twin can run in its own process (``jointbus can-twin URL``).

Example (one process)::

    url = "can://virtual/demo?robot=hb50&model=md80"
    with TwinServer.from_url(url), drivers.open(url) as legs:
        legs.power(True)
"""

from __future__ import annotations

from types import TracebackType
from typing import Self

import can
import numpy as np

from jointbus.drivers.actuator_array import ActuatorArrayConfigError
from jointbus.drivers.can.config import CanArrayConfig
from jointbus.drivers.can.firmware_twin import FirmwareTwin
from jointbus.drivers.can.motor_link import MotorSpec
from jointbus.drivers.errors import DriverIOError
from jointbus.drivers.registry import DriverURL
from jointbus.drivers.sim.driver import SimArrayConfig

__all__ = ["TwinServer"]


class TwinServer:
    """A :class:`FirmwareTwin` for the motors of a :class:`CanArrayConfig`, on its own bus endpoint.

    ``seed`` seeds the motors' sensor noise; ``noise=False`` removes it. The twin answers from a
    thread between :meth:`start` and :meth:`stop` (or inside a ``with`` block); its bus endpoint
    is opened on :meth:`start` and closed on :meth:`stop`.
    """

    def __init__(self, config: CanArrayConfig, *, seed: int | None = 0, noise: bool = True) -> None:
        if config.robot is None:
            raise ActuatorArrayConfigError(
                "the motor twin needs the robot description (build the config with "
                "CanArrayConfig.from_model or from a URL)"
            )
        self._config = config
        sim = SimArrayConfig.from_model(config.robot, noise=noise)
        cal = config.array.calibrations
        homes = [a.home for a in config.array.geometry.actuators]
        self._initial = np.array(
            [c.direction * h + c.offset for c, h in zip(cal, homes, strict=True)]
        )
        self._params = sim.params
        self._seed = seed
        self._bus: can.BusABC | None = None
        self._twin: FirmwareTwin | None = None

    @classmethod
    def from_url(cls, url: str, *, seed: int | None = 0, noise: bool = True) -> TwinServer:
        """The twin of the motors ``url`` (a ``can://`` driver URL) describes."""
        return cls(CanArrayConfig.from_url(DriverURL.parse(url)), seed=seed, noise=noise)

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
