"""``sim://rover``: a simulated mobile base with a camera mast, as an actuator array.

Where it sits: :mod:`jointbus.drivers.sim`, opened by :func:`jointbus.drivers.sim.driver.open_sim`
for host ``rover``; the robot is :mod:`jointbus.model`'s bundled ``rover`` (a planar joint ``base``
from the world and a revolute ``mast``).

**A planar joint in a scalar API.** The driver API addresses scalar actuators, so the planar base
is three of them, in this order: ``base_x`` (m), ``base_y`` (m), ``base_theta`` (rad), then
``mast`` (rad). :attr:`RoverSimArray.planar_joints` says that the first three are the planar
joint ``base``, so the array node publishes the base in Beam Bots' ``JointState`` as one
``Transform2D`` pose and one ``Twist2D`` velocity, beside the mast's float.

- *Positions* of the base axes are the pose in the world frame (x, y in m; theta in rad, wrapped
  to (−π, π]); the simulated yard is ±:data:`YARD_HALF_SIZE_M` m.
- *Velocities* and *speed commands* of the base axes are the base's own planar velocity (a
  ``cmd_vel``: vx forward, vy left in m/s, omega in rad/s), so a commanded speed reads back as the
  measured speed once reached. :meth:`RoverSimArray.drive` commands the three at once from a
  :class:`~jointbus.math.Twist2D`; ``speed``/``speeds`` work too.
- The base is velocity-commanded only: a position, home or current command addressing a base axis
  is refused (``UNSUPPORTED``, naming the joint). The mast takes position, speed and home.
- **Drive watchdog**: a base velocity not renewed within :attr:`watchdog_s` (the robot's
  ``watchdog_time`` parameter, 0.25 s) ramps to zero, as a real base drive stops when its
  ``cmd_vel`` stream stops. Send velocity commands at ≥ 10 Hz to keep moving.
- Dynamics: each axis tracks its commanded velocity within its configured acceleration; the mast
  moves to a position target at its configured speed and decelerates in time (a trapezoid). The
  state is integrated in 1 ms steps up to the time of each call (no thread of its own), so it
  advances with the wall clock like the other real-time simulators.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Final

import numpy as np

from jointbus.drivers.actuator_array import (
    ActuatorArray,
    ActuatorArrayConfig,
    FloatArray,
    IntArray,
    RawReading,
)
from jointbus.drivers.capabilities import Capability
from jointbus.drivers.errors import DriverURLError, RejectReason, RequestRejected
from jointbus.drivers.limits import LimitPolicy, Saturation
from jointbus.drivers.planar_joint import PlanarJoint
from jointbus.drivers.registry import DriverURL
from jointbus.math import Twist2D
from jointbus.messages.actarray.geometry import ActuatorGeometry, ArrayGeometry, Orientation3D
from jointbus.messages.actarray.state import ActuatorType
from jointbus.messages.geometry_msgs import Point, Vector3
from jointbus.messages.std_msgs import Header
from jointbus.model.calibration import JointCalibration
from jointbus.model.limits import JointLimitSpec
from jointbus.model.yaml_loader import load_robot

__all__ = ["YARD_HALF_SIZE_M", "RoverSimArray", "open_rover"]

#: m: the simulated yard spans ±this in x and y (Player's geometry needs a finite range).
YARD_HALF_SIZE_M: Final = 1000.0
_STEP_S: Final = 0.001
_BASE: Final = 3  # base_x, base_y, base_theta
_MAST: Final = 3


def _config(policy: LimitPolicy) -> tuple[ActuatorArrayConfig, float]:
    model = load_robot("rover")
    base = model.joint("base")
    mast = model.joint("mast")
    v_base = base.limits.velocity_max
    params = {spec.name: spec for spec in model.parameters}
    omega_max = float(params["cmd_vel_ang"].max or math.inf)
    watchdog = float(params["watchdog_time"].default)
    yard = YARD_HALF_SIZE_M
    specs = (
        JointLimitSpec(-yard, yard, v_base, math.inf, math.inf),
        JointLimitSpec(-yard, yard, v_base, math.inf, math.inf),
        JointLimitSpec(-math.pi, math.pi, omega_max, math.inf, math.inf),
        mast.limits,
    )
    kinds = (ActuatorType.LINEAR, ActuatorType.LINEAR, ActuatorType.ROTARY, ActuatorType.ROTARY)
    axes = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0), tuple(mast.axis))
    geometry = ArrayGeometry(
        header=Header(frame_id=model.root),
        actuators=tuple(
            ActuatorGeometry(
                type=kind,
                length=0.0,
                orientation=Orientation3D(),
                axis=Vector3(*axis),
                min=spec.position_min,
                centre=0.0,
                max=spec.position_max,
                home=0.0,
                config_speed=spec.velocity_max,
                has_brakes=False,
            )
            for kind, axis, spec in zip(kinds, axes, specs, strict=True)
        ),
        base_position=Point(),
        base_orientation=Orientation3D(),
    )
    config = ActuatorArrayConfig(
        names=("base_x", "base_y", "base_theta", "mast"),
        types=kinds,
        limits=specs,
        calibrations=(JointCalibration(),) * 4,
        geometry=geometry,
        policy=policy,
    )
    return config, watchdog


def _wrap(angle: float) -> float:
    """``angle`` in (−π, π]."""
    wrapped = math.remainder(angle, math.tau)
    return math.pi if wrapped == -math.pi else wrapped


class RoverSimArray(ActuatorArray):
    """The simulated rover (see the module docstring)."""

    planar_joints: tuple[PlanarJoint, ...] = (PlanarJoint("base", 0, 1, 2),)
    """The planar joint ``base`` is actuators 0, 1, 2 (x, y, theta)."""

    def __init__(self, *, policy: LimitPolicy = LimitPolicy.REJECT) -> None:
        config, watchdog = _config(policy)
        super().__init__(config)
        self.watchdog_s = watchdog
        self._sim_lock = threading.Lock()
        self._t = time.monotonic()
        self._start = self._t
        self._pose = np.zeros(3)  # world x, y (m), theta (rad)
        self._velocity = np.zeros(4)  # base body vx, vy (m/s), omega (rad/s); mast rad/s
        self._mast = 0.0
        self._target_velocity = np.zeros(4)
        self._mast_target: float | None = None
        self._base_commanded_at = -math.inf
        self._power = False

    # ---- simulation ----------------------------------------------------------------------------
    def _advance(self) -> None:
        now = time.monotonic()
        steps = int((now - self._t) / _STEP_S)
        if steps <= 0:
            return
        accel = self.config_accelerations
        speed = self.config_speeds
        for _ in range(min(steps, 200_000)):
            self._t += _STEP_S
            target = self._target_velocity.copy()
            if not self._power or self._t - self._base_commanded_at > self.watchdog_s:
                target[:_BASE] = 0.0
            if not self._power:
                target[_MAST] = 0.0
            elif self._mast_target is not None:
                error = self._mast_target - self._mast
                reach = math.sqrt(2.0 * accel[_MAST] * abs(error))
                target[_MAST] = math.copysign(min(speed[_MAST], reach), error)
                if abs(error) < 1e-4 and abs(self._velocity[_MAST]) < 1e-3:
                    self._mast, target[_MAST], self._velocity[_MAST] = self._mast_target, 0.0, 0.0
            change = np.clip(target - self._velocity, -accel * _STEP_S, accel * _STEP_S)
            self._velocity += change
            vx, vy, omega = self._velocity[:_BASE]
            theta = self._pose[2]
            c, s = math.cos(theta), math.sin(theta)
            self._pose[0] += (c * vx - s * vy) * _STEP_S
            self._pose[1] += (s * vx + c * vy) * _STEP_S
            self._pose[2] = _wrap(theta + omega * _STEP_S)
            self._mast += self._velocity[_MAST] * _STEP_S
        self._t = max(self._t, now - _STEP_S)

    # ---- hooks ---------------------------------------------------------------------------------
    def _capabilities(self) -> frozenset[Capability]:
        return frozenset(
            {
                Capability.POWER,
                Capability.POSITION,
                Capability.SPEED,
                Capability.HOME,
                Capability.SPEED_CONFIG,
                Capability.ACCEL_CONFIG,
            }
        )

    def _read_raw(self) -> RawReading:
        with self._sim_lock:
            self._advance()
            position = np.array([*self._pose, self._mast])
            velocity = self._velocity.copy()
            moving = np.abs(velocity) > 1e-3
            if self._mast_target is not None and abs(self._mast_target - self._mast) > 1e-4:
                moving[_MAST] = True
            nan = np.full(4, math.nan)
            return RawReading(
                time=self._t - self._start,
                position=position,
                velocity=velocity,
                acceleration=nan.copy(),
                current=nan.copy(),
                effort=nan,
                temperature=np.full(4, 25.0),
                status=np.zeros(4, dtype=np.uint32),
                moving=moving,
                braked=np.zeros(4, dtype=np.bool_),
                stalled=np.zeros(4, dtype=np.bool_),
                motor_power=self._power,
            )

    def _motor_power(self) -> bool:
        return self._power

    def _request_power(self, on: bool) -> None:
        with self._sim_lock:
            self._advance()
            self._power = on
            self._target_velocity[:] = 0.0
            self._mast_target = None

    def _request_speed(self, indices: IntArray, speeds: FloatArray) -> None:
        pass  # the base class keeps the configured speeds the simulation reads

    def _request_accel(self, indices: IntArray, accels: FloatArray) -> None:
        pass

    def _mast_only(self, request: str, indices: IntArray) -> None:
        base = [int(i) for i in indices if i < _BASE]
        if base:
            raise RequestRejected(
                request,
                RejectReason.UNSUPPORTED,
                "the base is velocity-commanded (speed, speeds or drive)",
                joint=self.names[base[0]],
                index=base[0],
                field="request",
                value=request,
                expected="speed, speeds or drive for a base axis (the base is velocity-commanded)",
            )

    def _write_positions(self, indices: IntArray, positions: FloatArray) -> None:
        self._move_mast("position", indices, positions)

    def _write_home(self, indices: IntArray, home_positions: FloatArray) -> None:
        if indices.size == self.count:  # home of the whole array: the mast (the base has none)
            indices, home_positions = indices[_MAST:], home_positions[_MAST:]
        self._move_mast("home", indices, home_positions)

    def _move_mast(self, request: str, indices: IntArray, positions: FloatArray) -> None:
        """Send the mast to ``positions[-1]`` (m) for ``request`` (``position`` / ``home``), the
        name a refusal of a base axis carries: the user called ``home``, not ``position``."""
        self._mast_only(request, indices)
        with self._sim_lock:
            self._advance()
            self._mast_target = float(positions[-1])

    def _write_speeds(self, indices: IntArray, speeds: FloatArray) -> None:
        with self._sim_lock:
            self._advance()
            for i, v in zip(indices.tolist(), speeds.tolist(), strict=True):
                self._target_velocity[i] = v
                if i == _MAST:
                    self._mast_target = None
            if any(i < _BASE for i in indices.tolist()):
                self._base_commanded_at = self._t

    # ---- the planar command ----------------------------------------------------------------------
    def drive(self, twist: Twist2D) -> tuple[Saturation, ...]:
        """Command the base's planar velocity (vx, vy m/s in its own frame, omega rad/s); it
        must be renewed within :attr:`watchdog_s`. Checked like any speed command."""
        if type(twist) is not Twist2D:
            raise TypeError(f"twist = {twist!r}; expected a jointbus.math.Twist2D")
        with self._api_lock:
            self._begin(Capability.SPEED)
            values = np.array([twist.vx, twist.vy, twist.omega], dtype=np.float64)
            return self._speeds(np.arange(_BASE, dtype=np.intp), values, "drive")


def open_rover(url: DriverURL) -> RoverSimArray:
    """Open ``sim://rover`` (no options: the rover has no sensor noise and runs in real time)."""
    if url.options:
        raise DriverURLError(
            f"driver URL {url.text!r}: sim://rover takes no options; got "
            + ", ".join(sorted(url.options))
        )
    return RoverSimArray()
