"""The bridge's own trot to a stop, for a controller lost while hb50 walks.

Where it sits: :mod:`jointbus.robots.hb50.bridge`, the first phase of hb50's fallback
(:mod:`.fallback`) when the command owner stalls or dies mid-stride. A pure component: the
fallback passes the bridge's frames and the last command the owner sent; no bus, no clock.

**Why step.** A robot moving at speed cannot stop by planting its feet where they are: the body
carries on over them. Measured on MuJoCo before this existed: trotting at 1 m/s, a 0.28 s SIGSTOP
of the control node — the bridge holding its last command, then putting every foot straight down —
tipped the robot over its front feet in 3 runs of 3 (pitch 0.13 → 0.47 rad in 0.2 s with the joints
still: the whole robot pivoting as one piece). Stiffer or faster stances, and feet placed ahead by
the capture-point offset ``v·√(h/g)``, all still fell. What stops a trotting robot is what the
walking controller does when its velocity command goes to zero: keep trotting, the footholds
shortening as the set-point ramps down at ``accel_limit``, the stance forces braking the body,
until the clock stops with four feet down (within one gait cycle of the set-point reaching zero).
So the bridge runs that same controller (:class:`~jointbus.robots.hb50.legged.walking.
WalkingController`, with the robot file's walking parameters) from where the owner left it:

- the set-point starts at the velocity the owner's last command was walking at — its stance legs'
  feet move backwards at ``−v`` relative to the body (``J·q̇`` of the commanded joint rates), the
  yaw rate from the gyro — and ramps to zero;
- the clock starts at the lift-off of the legs that were swinging (no feed-forward torque on the
  leg while others carry the body), so the pair in the air steps first, from where it is;
- the state comes from the bridge's own frames through the control node's estimators
  (:class:`~jointbus.robots.hb50.legged.state_estimator.StateEstimator`, fused with the IMU by
  the :class:`~jointbus.robots.hb50.legged.walking_estimator.WalkingEstimator`), seeded with that
  velocity.

It is done when the clock has stopped with every foot down and the set-point is zero, or after
``timeout_s`` whatever the clock says; the fallback then holds the stance from there.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import numpy.typing as npt

from jointbus.drivers.impedance import ImpedanceCommand
from jointbus.model.robot import RobotModel
from jointbus.robots.hb50.legged.state_estimator import StateEstimator, mat_vec, rotation_of
from jointbus.robots.hb50.legged.walking import (
    WalkCommand,
    WalkingController,
    WalkOutput,
    WalkParams,
)
from jointbus.robots.hb50.legged.walking_estimator import WalkingEstimator
from jointbus.robots.hb50.messages import BridgeData

__all__ = ["StoppingTrot"]

FloatArray = npt.NDArray[np.float64]

#: Body heights (m) the trot is tested in (the control node's LOCOMOTION range).
WALK_HEIGHTS = (0.28, 0.36)


class StoppingTrot:
    """See the module docstring: :meth:`start`, then :meth:`command` every bridge cycle until
    :attr:`done`."""

    def __init__(
        self,
        model: RobotModel,
        *,
        period: float,
        params: WalkParams | None = None,
        timeout_s: float = 3.0,
        still_speed: float = 0.05,
        still_rate: float = 0.2,
        still_tilt: float = 0.05,
        still_s: float = 0.1,
    ) -> None:
        self.controller = WalkingController(model, params or WalkParams.from_model(model))
        self.estimator = StateEstimator(model)
        self.fusion = WalkingEstimator()
        self.period = float(period)
        self.timeout_s = float(timeout_s)
        self.still = (float(still_speed), float(still_rate), float(still_tilt), float(still_s))
        self._still_cycles = 0
        self.kinematics = self.controller.kinematics
        self.legs = len(self.kinematics.iks)
        self._joints = [list(ik.joint_indices) for ik in self.kinematics.iks]
        self._height = WALK_HEIGHTS[1]
        self._cycles = 0
        self.start_velocity: tuple[float, float, float] = (0.0, 0.0, 0.0)
        """The set-point the trot started from: vx, vy (m/s), yaw rate (rad/s)."""
        self.last: ImpedanceCommand | None = None
        """The command of the last cycle."""

    @property
    def stopped(self) -> bool:
        """The clock stopped with every foot down and the set-point at zero."""
        vx, vy, wz = self.controller.velocity_setpoint
        return self.controller.gait.stopped and vx == vy == wz == 0.0

    @property
    def done(self) -> bool:
        """Stopped and the body still — slower than ``still_speed`` m/s, turning slower than
        ``still_rate`` rad/s, tilted less than ``still_tilt`` rad, for ``still_s`` s — or out of
        time (``timeout_s``). The standing trot (clock stopped, stance forces) levels and brakes
        the body a braking trot leaves pitched forward and still moving; the fallback's stance,
        a posture without forces, would otherwise take that motion over stiff legs."""
        if self._cycles * self.period >= self.timeout_s:
            return True
        return self._still_cycles * self.period >= self.still[3]

    @property
    def timed_out(self) -> bool:
        """Out of time (``timeout_s``) before the clock had stopped with the body still."""
        return self._cycles * self.period >= self.timeout_s and not (
            self._still_cycles * self.period >= self.still[3]
        )

    @property
    def elapsed_s(self) -> float:
        """Seconds since :meth:`start`."""
        return self._cycles * self.period

    def walking_velocity(self, last: ImpedanceCommand) -> tuple[tuple[float, float], list[bool]]:
        """What the owner's ``last`` command was doing: the body velocity (vx, vy m/s, body
        frame) its stance feet moved back at, and which legs swung (no feed-forward torque on
        the leg while another leg pushes; all ``False`` when none pushes: not walking)."""
        effort = np.where(np.isfinite(last.effort), np.abs(last.effort), 0.0)
        pushing = [float(effort[idx].max()) > 1e-3 for idx in self._joints]
        if not any(pushing):
            return (0.0, 0.0), [False] * self.legs
        position = np.where(np.isfinite(last.position), last.position, 0.0)
        rates = np.where(np.isfinite(last.velocity), last.velocity, 0.0)
        _, feet_velocity, _, _ = self.kinematics.evaluate_rows(position, rates)
        stance = [feet_velocity[k] for k in range(self.legs) if pushing[k]]
        vx = -sum(v[0] for v in stance) / len(stance)
        vy = -sum(v[1] for v in stance) / len(stance)
        return (vx, vy), [not p for p in pushing]

    def start(self, frame: BridgeData, last: ImpedanceCommand) -> None:
        """Take over from the owner's ``last`` command at bridge ``frame``."""
        (vx, vy), swinging = self.walking_velocity(last)
        self.estimator.reset()
        state = self.estimator.update(frame, self.period)
        wz = float(state.body_angular_velocity[2])
        rot = rotation_of(state.orientation)
        seeded = dataclasses.replace(
            state,
            body_linear_velocity=np.array((vx, vy, 0.0)),
            world_linear_velocity=np.array(mat_vec(rot, vx, vy, 0.0)),
        )
        self.fusion.reset(seeded)
        lo, hi = WALK_HEIGHTS
        h = state.height
        self._height = min(max(h, lo), hi) if math.isfinite(h) else hi
        self.start_velocity = (vx, vy, wz if math.isfinite(wz) else 0.0)
        self.controller.take_over(self.start_velocity, swinging)
        self._cycles = 0
        self._still_cycles = 0
        self.last = None

    def command(self, frame: BridgeData) -> ImpedanceCommand:
        """This cycle's command from bridge ``frame`` (set-point towards zero)."""
        self._cycles += 1
        ctl = self.controller
        state = self.estimator.update(frame, self.period)
        refined = self.fusion.update(
            state, state.linear_acceleration, ctl.gait.peek().stance, self.period,
            ctl.foot_radius,
        )
        out: WalkOutput = ctl.step(refined, WalkCommand(0.0, 0.0, 0.0, self._height), self.period)
        speed, rate, tilt, _ = self.still
        v = refined.body_linear_velocity
        w = refined.body_angular_velocity
        up_z = rotation_of(refined.orientation)[2][2]
        still = (
            self.stopped
            and math.hypot(float(v[0]), float(v[1])) < speed
            and math.hypot(float(w[0]), float(w[1]), float(w[2])) < rate
            and up_z > math.cos(tilt)
        )
        self._still_cycles = self._still_cycles + 1 if still else 0
        command = ImpedanceCommand(
            out.position, out.velocity, out.torque, out.kp, out.kd,
            np.zeros(out.position.shape[0], dtype=np.bool_),
        )
        self.last = command
        return command
