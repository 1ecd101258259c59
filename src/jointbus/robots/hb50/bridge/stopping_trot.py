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
  leg while others carry the body), so the pair in the air steps first, from where it is; taken
  in double support (every foot pushing), at the lift-off of the pair *due* to lift — the one
  whose feet have travelled furthest back along their stance motion. Lifting the pair that had
  just landed instead left the body on feet already far behind it: trotting at 0.42 m/s forward,
  0.26 m/s sideways and −0.70 rad/s, a controller lost in double support tipped the robot to
  0.43 rad (0.17 rad with the right pair; the chaos campaign's SIGKILL #862 of seed 11 rolled it
  onto its back);
- the state comes from the bridge's own frames through the control node's estimators
  (:class:`~jointbus.robots.hb50.legged.state_estimator.StateEstimator`, fused with the IMU by
  the :class:`~jointbus.robots.hb50.legged.walking_estimator.WalkingEstimator`), seeded with that
  velocity.

**Square the feet.** A stop leaves the pair that did not step last where it landed at speed: after
a trot at 0.42 m/s forward, 0.26 m/s sideways and −0.70 rad/s, feet stood up to 86 mm from their
nominal footholds, all to one side of the body. The stand-up a returning controller then makes —
joint-space, to the standing pose over the nominal footprint — drags loaded feet across the floor;
from such a stance it rolled the robot over in 1.5 s (the chaos campaign's SIGKILL #862 of seed 11;
1 of 8 stall points in the lock-step replay). So once stopped and still, a pair whose feet are
more than ``square_tolerance`` (0.03 m) from their nominal footholds steps once more in place —
the clock run for one swing of that pair, set-point zero, the swing landing at the Raibert
foothold of a still body (the nominal one) — the worse pair first, each pair at most once.

**Robot time, not cycles.** Each cycle advances the trot by the time between the stamps of its
frame and the last one (at most :data:`MAX_DT_S`; the bridge period when a stamp is missing or out
of order), not by one bridge period: a bridge starved of CPU skips cycles while the robot moves on
(the drives hold the last command, the simulator steps the skipped time). Counted in cycles, the
gait's clock and the estimators ran at half speed with the bridge running every other cycle, and
the trot tipped a robot stopped from 0.5 m/s to 0.9–1.1 rad in 5 of 6 stride phases (a new
user's trial, 2026-12-05: 3 of 5 stalls of a control node beside another robot's real-time
stack ended fallen).

It is done when the clock has stopped with every foot down, the set-point is zero, the feet are
square (or both pairs have stepped in place) and the body is still; or after ``timeout_s``
whatever the clock says. The fallback then holds the stance from there.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

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
#: The longest step (s) one cycle may take: a longer gap between two frames (a bridge stalled
#: for more than 50 bridge periods) is taken as one period, as the control node does.
MAX_DT_S = 0.1


class StoppingTrot:
    """See the module docstring: :meth:`start`, then :meth:`command` every bridge cycle until
    :attr:`done`."""

    def __init__(
        self,
        model: RobotModel,
        *,
        period: float,
        params: WalkParams | None = None,
        timeout_s: float = 4.0,
        still_speed: float = 0.05,
        still_rate: float = 0.2,
        still_tilt: float = 0.05,
        still_s: float = 0.1,
        moving_speed: float = 0.05,
        square_tolerance: float = 0.03,
    ) -> None:
        self.controller = WalkingController(model, params or WalkParams.from_model(model))
        self.estimator = StateEstimator(model)
        self.fusion = WalkingEstimator()
        self.period = float(period)
        self.timeout_s = float(timeout_s)
        self.still = (float(still_speed), float(still_rate), float(still_tilt), float(still_s))
        self.kinematics = self.controller.kinematics
        self.legs = len(self.kinematics.iks)
        self._joints = [list(ik.joint_indices) for ik in self.kinematics.iks]
        self.moving_speed = float(moving_speed)
        self.square_tolerance = float(square_tolerance)
        self._squared: set[float] = set()  # pairs (their clock offsets) stepped in place
        self.squaring_steps = 0
        """Steps in place taken to square the feet since :meth:`start`."""
        # the trot's pairs: legs with one phase offset of the gait clock lift together
        offsets = self.controller.gait.offsets
        self._pair_of = [offsets[k] for k in range(self.legs)]
        self._pairs = tuple(dict.fromkeys(self._pair_of))
        self._height = WALK_HEIGHTS[1]
        self._cycles = 0
        self._elapsed = 0.0  # s of robot time since start(), from the frames' stamps
        self._still_s = 0.0  # s the body has been still
        self._stamp: float | None = None  # the last frame's stamp (s)
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
        """Stopped, the feet square (module docstring) and the body still — slower than
        ``still_speed`` m/s, turning slower than ``still_rate`` rad/s, tilted less than
        ``still_tilt`` rad, for ``still_s`` s — or out of time (``timeout_s``). The standing
        trot (clock stopped, stance forces) levels and brakes the body a braking trot leaves
        pitched forward and still moving; the fallback's stance, a posture without forces,
        would otherwise take that motion over stiff legs."""
        if self._elapsed >= self.timeout_s:
            return True
        return self._still_s >= self.still[3]

    @property
    def timed_out(self) -> bool:
        """Out of time (``timeout_s``) before the clock had stopped with the body still."""
        return self._elapsed >= self.timeout_s and not self._still_s >= self.still[3]

    @property
    def elapsed_s(self) -> float:
        """Seconds of robot time (the frames' stamps) since :meth:`start`."""
        return self._elapsed

    def walking_velocity(self, last: ImpedanceCommand) -> tuple[tuple[float, float], list[bool]]:
        """What the owner's ``last`` command was doing: the body velocity (vx, vy m/s, body
        frame) its stance feet moved back at, and which legs lift first — the legs that swung
        (no feed-forward torque on the leg while another leg pushes), or in double support the
        pair due to lift (:meth:`due_to_lift`). All ``False`` when none pushes (not walking) or
        every foot is still."""
        effort = np.where(np.isfinite(last.effort), np.abs(last.effort), 0.0)
        pushing = [float(effort[idx].max()) > 1e-3 for idx in self._joints]
        if not any(pushing):
            return (0.0, 0.0), [False] * self.legs
        position = np.where(np.isfinite(last.position), last.position, 0.0)
        rates = np.where(np.isfinite(last.velocity), last.velocity, 0.0)
        feet, feet_velocity, _, _ = self.kinematics.evaluate_rows(position, rates)
        stance = [feet_velocity[k] for k in range(self.legs) if pushing[k]]
        vx = -sum(v[0] for v in stance) / len(stance)
        vy = -sum(v[1] for v in stance) / len(stance)
        if all(pushing):
            return (vx, vy), self.due_to_lift(feet, feet_velocity)
        return (vx, vy), [not p for p in pushing]

    def due_to_lift(
        self,
        feet: Sequence[tuple[float, float, float]],
        feet_velocity: Sequence[tuple[float, float, float]],
    ) -> list[bool]:
        """In double support, the legs of the trot pair that lifts next: every foot is down
        and moving back under the body at its stance velocity (body frame, m/s), and the pair
        whose feet have gone furthest along that motion from their nominal footholds — the
        displacement projected on the direction of travel, summed over the pair — is at the end
        of its stance; the other pair has just landed ahead. All ``False`` when no foot moves
        faster than ``moving_speed`` (standing in a walking posture: the clock stays stopped)."""
        nominal = self.controller.nominal
        score = dict.fromkeys(self._pairs, 0.0)
        fastest = 0.0
        for k in range(self.legs):
            ux, uy = feet_velocity[k][0], feet_velocity[k][1]
            speed = math.hypot(ux, uy)
            if not math.isfinite(speed):
                continue
            fastest = max(fastest, speed)
            if speed > 0.0:
                dx = feet[k][0] - float(nominal[k, 0])
                dy = feet[k][1] - float(nominal[k, 1])
                score[self._pair_of[k]] += (dx * ux + dy * uy) / speed
        if fastest < self.moving_speed:
            return [False] * self.legs
        due = max(self._pairs, key=lambda pair: score[pair])
        return [self._pair_of[k] == due for k in range(self.legs)]

    def start(self, frame: BridgeData, last: ImpedanceCommand) -> None:
        """Take over from the owner's ``last`` command at bridge ``frame``."""
        (vx, vy), swinging = self.walking_velocity(last)
        self.estimator.reset()
        self._stamp = None
        state = self.estimator.update(frame, self._dt(frame))
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
        self._elapsed = 0.0
        self._still_s = 0.0
        self._squared = set()
        self.squaring_steps = 0
        self.last = None

    def _off_square(self, feet: FloatArray) -> float | None:
        """The clock offset of the pair to step in place: the one not yet stepped whose feet
        (body frame, m) are furthest — beyond ``square_tolerance`` — from their nominal
        footholds; ``None`` when the feet are square enough."""
        nominal = self.controller.nominal
        worst: dict[float, float] = {}
        for k in range(self.legs):
            pair = self._pair_of[k]
            off = math.hypot(
                float(feet[k, 0]) - float(nominal[k, 0]), float(feet[k, 1]) - float(nominal[k, 1])
            )
            if math.isfinite(off) and pair not in self._squared:
                worst[pair] = max(worst.get(pair, 0.0), off)
        due = max(worst, key=lambda p: worst[p], default=None)
        if due is None or worst[due] <= self.square_tolerance:
            return None
        return due

    def _dt(self, frame: BridgeData) -> float:
        """Robot time (s) since the last frame: the stamps' difference, or one bridge period
        (the first frame, a stamp missing, going back or further than :data:`MAX_DT_S`)."""
        stamp = frame.header.stamp.to_seconds()
        last, self._stamp = self._stamp, stamp
        dt = stamp - last if last is not None else self.period
        return dt if 0.0 < dt <= MAX_DT_S else self.period

    def command(self, frame: BridgeData) -> ImpedanceCommand:
        """This cycle's command from bridge ``frame`` (set-point towards zero)."""
        self._cycles += 1
        dt = self._dt(frame)
        self._elapsed += dt
        ctl = self.controller
        state = self.estimator.update(frame, dt)
        refined = self.fusion.update(
            state, state.linear_acceleration, ctl.gait.peek().stance, dt, ctl.foot_radius
        )
        out: WalkOutput = ctl.step(refined, WalkCommand(0.0, 0.0, 0.0, self._height), dt)
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
        settling = not self.done  # once done, the fallback holds on: no more steps
        if still and settling and self._still_s + dt >= self.still[3]:
            pair = self._off_square(refined.foot_position)
            if pair is not None:  # step that pair once in place (module docstring)
                self._squared.add(pair)
                self.squaring_steps += 1
                ctl.gait.start_swing([p == pair for p in self._pair_of])
                still = False
        self._still_s = self._still_s + dt if still else 0.0
        command = ImpedanceCommand(
            out.position, out.velocity, out.torque, out.kp, out.kd,
            np.zeros(out.position.shape[0], dtype=np.bool_),
        )
        self.last = command
        return command
