"""The simulated robots that ``sim://<name>`` opens, built from the bundled robot descriptions.

Where it sits: :mod:`jointbus.drivers.sim`, above :mod:`.driver`; :func:`.driver.open_sim` looks the
URL's host up here. There is no second robot format: each entry loads the robot file of
:mod:`jointbus.model` (``load_robot(name)``) and derives the simulated drives from it
(:meth:`~jointbus.drivers.sim.driver.SimArrayConfig.from_model`). An entry is a builder
``(SimOptions) -> SimActuatorArray`` so that a robot needing an external physics engine (the
MuJoCo quadruped) can construct its world and pass it as ``physics``.

- ``arm6`` — the six-joint rotary arm, drives alone (no links, no gravity): Player geometry,
  limits, soft limits on the shoulder lift, brakes on the first three joints.
- ``hb50`` — the Honey Badger quadruped in MuJoCo (:class:`MujocoSimArray` over a
  :class:`~jointbus.drivers.sim.mujoco_world.MujocoWorld` with a floor), 12 drives in the robot's
  actuator order, the body IMU through :meth:`~MujocoSimArray.imu`.

**A user's robot file** (:func:`build_sim_robot_file`: ``sim://path/to/robot.yaml``,
``sim:///abs/path/robot.urdf``) is simulated like ``arm6``: its actuated joints' drives alone
(rotor inertia, friction, torque and speed limits from the file), no links, no gravity — what a
user needs to run a control loop against the joints before the hardware exists. A YAML file is
the robot schema of :mod:`jointbus.model.yaml_loader`; a URDF file is read by
:func:`~jointbus.model.urdf_loader.load_urdf` (actuated joints: every moving joint in file order;
mesh geometry is dropped, since drives alone have no use for it).

**Where hb50 starts.** As a real robot is found when its power comes on: lying on its belly
(base at :data:`HB50_LYING_HEIGHT`), legs folded (:data:`HB50_LYING_POSE`: hips splayed
0.45 rad outwards, thighs 0.2 rad above horizontal, knees folded 2.7 rad), motor power off.
That pose is where the unpowered robot settles by itself (dropped from a fold with the drives
off, MuJoCo brings it there), so nothing moves until a command arrives: ``make demo``'s control
node powers the drives and ramps the joints from where they are to the standing pose. A *step*
to the standing pose at stand gains is not a stand-up: the 24 N·m drives kick the body off the
floor and it lands on its back — ramp over ~1 s, as a real stand-up does.

**Physics rate.** The ``rate`` option (Hz) sets MuJoCo's timestep: the largest step ≤ 1/rate
that divides the 2 ms control step (0.5 ms at the default 2 kHz), so the drives' impedance law
runs every substep. Stepping mode must then advance in whole timesteps.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Final

import numpy as np

from jointbus.drivers.actuator_array import ImuReading, SaturationCallback
from jointbus.drivers.limits import LimitPolicy
from jointbus.drivers.sim.driver import MIN_RATE, SimActuatorArray, SimArrayConfig
from jointbus.drivers.sim.mujoco_world import MujocoWorld
from jointbus.model.robot import RobotModel
from jointbus.model.yaml_loader import load_robot

__all__ = [
    "HB50_LYING_HEIGHT",
    "HB50_LYING_POSE",
    "ROBOT_FILE_SUFFIXES",
    "SIM_ROBOTS",
    "MujocoSimArray",
    "SimOptions",
    "build_sim_robot",
    "build_sim_robot_file",
    "load_robot_file",
    "sim_robots",
]

ROBOT_FILE_SUFFIXES: Final[tuple[str, ...]] = (".yaml", ".yml", ".urdf")
"""File name endings ``sim://`` reads as a robot file (YAML robot schema, or URDF)."""

HB50_LYING_POSE: Final[tuple[float, float, float]] = (-0.45, -0.2, 2.7)
"""hb50 start pose per leg (rad) as (abduction, hip, knee) in the *standing pose's sense*: each
value is multiplied by the sign of the same joint in the ``home`` pose, so −0.45 splays every
hip outwards, −0.2 lifts every thigh above horizontal and 2.7 folds every knee (limit 2.705)."""

HB50_LYING_HEIGHT: Final[float] = 0.062
"""m: base height of the lying hb50 — half the body box's 0.124 m, belly on the floor."""


@dataclass(frozen=True, slots=True)
class SimOptions:
    """The ``sim://`` URL options: noise seed, real time or stepping, physics rate (Hz),
    sensor noise on/off, the limit policy and the drive watchdog of speed and current commands
    (s, ``None``: off)."""

    seed: int | None = 0
    realtime: bool = True
    rate: float = MIN_RATE
    noise: bool = True
    policy: LimitPolicy = LimitPolicy.REJECT
    command_timeout: float | None = None


SimRobotBuilder = Callable[[SimOptions], SimActuatorArray]


def _drives_alone(model: RobotModel, options: SimOptions) -> SimActuatorArray:
    """``model``'s actuated joints simulated by their drives alone (no external engine)."""
    config = SimArrayConfig.from_model(
        model,
        policy=options.policy,
        seed=options.seed,
        realtime=options.realtime,
        rate=options.rate,
        noise=options.noise,
        command_timeout=options.command_timeout,
    )
    return SimActuatorArray(config)


def _standalone(robot: str) -> SimRobotBuilder:
    """A bundled robot simulated by its drives alone (rotor dynamics, no external engine)."""

    def build(options: SimOptions) -> SimActuatorArray:
        return _drives_alone(load_robot(robot), options)

    return build


def load_robot_file(path: Path) -> RobotModel:
    """The robot described by ``path``: a YAML robot file, or URDF (by the file name's ending).

    Raises :class:`~jointbus.model.errors.RobotFileError` (naming file, key and value) for a file
    that cannot be read or describe a robot, ``ValueError`` for an ending not in
    :data:`ROBOT_FILE_SUFFIXES`.
    """
    suffix = path.suffix.lower()
    if suffix == ".urdf":
        # Imported here: the URDF library (yourdfpy, trimesh, scipy) takes ~1 s of CPU to import,
        # which every sim:// robot paid before, URDF or not.
        from jointbus.model.urdf_loader import load_urdf

        return load_urdf(path, skip_meshes=True)
    if suffix in (".yaml", ".yml"):
        return load_robot(path)
    raise ValueError(
        f"robot file {path} ends in {suffix!r}; expected one of {', '.join(ROBOT_FILE_SUFFIXES)}"
    )


def build_sim_robot_file(path: Path, options: SimOptions) -> SimActuatorArray:
    """The robot of file ``path`` (YAML or URDF), simulated by its drives alone (see the module
    docstring); errors as :func:`load_robot_file` and
    :class:`~jointbus.drivers.actuator_array.ActuatorArrayConfigError`."""
    return _drives_alone(load_robot_file(path), options)


class MujocoSimArray(SimActuatorArray):
    """A simulated array whose physics is a :class:`MujocoWorld`: adds the body IMU to the
    driver API (:meth:`imu`) and the world itself, for scenario set-up and ground truth."""

    def __init__(
        self,
        config: SimArrayConfig,
        world: MujocoWorld,
        *,
        on_saturation: SaturationCallback | None = None,
    ) -> None:
        super().__init__(config, world, on_saturation=on_saturation)
        self._world = world
        self._imu_name = world.imu_names[0] if world.imu_names else None

    @property
    def world(self) -> MujocoWorld:
        """The MuJoCo world (ground truth such as :meth:`MujocoWorld.base_pose`, pushes, contacts;
        hold :meth:`locked` while touching it in real-time mode)."""
        return self._world

    def _read_imu(self) -> ImuReading | None:
        if self._imu_name is None:
            return None
        with self._state_lock:  # (imu() has checked that the array is open)
            sample = self._world.imu(self._imu_name)
        return ImuReading(
            time=sample.time,
            orientation=sample.orientation,
            angular_velocity=sample.angular_velocity,
            linear_acceleration=sample.linear_acceleration,
        )


def _timestep(rate: float, control_period: float) -> float:
    """The largest MuJoCo step ≤ 1/``rate`` that divides ``control_period`` (s)."""
    return control_period / math.ceil(control_period * rate - 1e-9)


def _hb50(options: SimOptions) -> SimActuatorArray:
    """hb50 in MuJoCo, lying folded with power off (see the module docstring)."""
    model = load_robot("hb50")
    home = model.pose("home")
    signs = np.sign([home[name] for name in model.actuator_order])
    lying = signs * np.tile(HB50_LYING_POSE, len(model.actuator_order) // 3)
    config = SimArrayConfig.from_model(
        model,
        policy=options.policy,
        seed=options.seed,
        realtime=False,  # the thread starts below, once the world is in place
        rate=options.rate,
        noise=options.noise,
        command_timeout=options.command_timeout,
    )
    config = dataclasses.replace(config, initial_positions=tuple(lying.tolist()))
    world = MujocoWorld(
        model,
        config.params,
        timestep=_timestep(options.rate, config.control_period),
        seed=options.seed,
    )
    # MuJoCo's joint angles are the robot file's joints; the driver reads them as actuator
    # positions, which is right because hb50's calibration is the identity.
    world.reset(HB50_LYING_HEIGHT, lying)
    return MujocoSimArray(dataclasses.replace(config, realtime=options.realtime), world)


SIM_ROBOTS: Mapping[str, SimRobotBuilder] = MappingProxyType(
    {"arm6": _standalone("arm6"), "hb50": _hb50}
)
"""Simulated robot name → builder."""


def sim_robots() -> tuple[str, ...]:
    """Names ``sim://`` accepts, sorted."""
    return tuple(sorted(SIM_ROBOTS))


def build_sim_robot(name: str, options: SimOptions) -> SimActuatorArray:
    """Build simulated robot ``name`` (``KeyError`` if there is none; see :func:`sim_robots`)."""
    return SIM_ROBOTS[name](options)
