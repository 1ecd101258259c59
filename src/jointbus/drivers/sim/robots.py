"""The simulated robots that ``sim://<name>`` opens, built from the bundled robot descriptions.

Where it sits: :mod:`jointbus.drivers.sim`, above :mod:`.driver`; :func:`.driver.open_sim` looks the
URL's host up here. There is no second robot format: each entry loads the robot file of
:mod:`jointbus.model` (``load_robot(name)``) and derives the simulated drives from it
(:meth:`~jointbus.drivers.sim.driver.SimArrayConfig.from_model`). An entry is a builder
``(SimOptions) -> SimActuatorArray`` so that a robot needing an external physics engine (the
MuJoCo quadruped) can construct its world and pass it as ``physics``.

- ``arm6`` — the six-joint rotary arm, drives alone (no links, no gravity): Player geometry,
  limits, soft limits on the shoulder lift, brakes on the first three joints.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from jointbus.drivers.limits import LimitPolicy
from jointbus.drivers.sim.driver import MIN_RATE, SimActuatorArray, SimArrayConfig
from jointbus.model.yaml_loader import load_robot

__all__ = ["SIM_ROBOTS", "SimOptions", "build_sim_robot", "sim_robots"]


@dataclass(frozen=True, slots=True)
class SimOptions:
    """The ``sim://`` URL options: noise seed, real time or stepping, physics rate (Hz),
    sensor noise on/off, and the limit policy."""

    seed: int | None = 0
    realtime: bool = True
    rate: float = MIN_RATE
    noise: bool = True
    policy: LimitPolicy = LimitPolicy.REJECT


SimRobotBuilder = Callable[[SimOptions], SimActuatorArray]


def _standalone(robot: str) -> SimRobotBuilder:
    """A robot simulated by its drives alone (rotor dynamics, no external engine)."""

    def build(options: SimOptions) -> SimActuatorArray:
        config = SimArrayConfig.from_model(
            load_robot(robot),
            policy=options.policy,
            seed=options.seed,
            realtime=options.realtime,
            rate=options.rate,
            noise=options.noise,
        )
        return SimActuatorArray(config)

    return build


SIM_ROBOTS: Mapping[str, SimRobotBuilder] = MappingProxyType({"arm6": _standalone("arm6")})
"""Simulated robot name → builder."""


def sim_robots() -> tuple[str, ...]:
    """Names ``sim://`` accepts, sorted."""
    return tuple(sorted(SIM_ROBOTS))


def build_sim_robot(name: str, options: SimOptions) -> SimActuatorArray:
    """Build simulated robot ``name`` (``KeyError`` if there is none; see :func:`sim_robots`)."""
    return SIM_ROBOTS[name](options)
