"""The LOCOMOTION mode of the control node: velocity commands in, a trot out.

Where it sits: :mod:`jointbus.robots.hb50.control`, a pure component the motion state machine
(:mod:`.motion`) runs while its mode is ``LOCOMOTION``. It owns the walking controller
(:mod:`.walking`) and the walking estimator (:mod:`.walking_estimator`) and turns the SI velocity
command (:class:`~jointbus.robots.hb50.messages.BodyVelocityCommand`, already scaled by
``cmd_vel_lin``
/ ``cmd_vel_ang`` and clamped to the normalised ranges) into the controller's set-point:

- ``vx``, ``vy`` (m/s) and ``yaw_rate`` (rad/s) as they are; the controller limits them to
  ``max_speed`` / ``max_yaw_rate`` and ramps towards them (never a jump). ``roll_rate`` and
  ``pitch_rate`` are not used while walking (they lean the body in STAND);
- the walking height = ``height_fraction × stand_height`` (``None``, a Twist with ``linear.z ==
  0``: the height stays), kept inside ``WALK_HEIGHT_RANGE`` (m;
  the range the trot is tested in: lower, the knees run out of room to swing; higher, the legs
  straighten) and slewed at ``height_rate`` m/s;
- a command older than ``command_timeout`` s counts as zero motion (a dead joystick stops the
  robot; the height stays);
- a stop request (``stand``) counts as zero motion too; :attr:`Locomotion.stopped` turns true
  once the gait clock has stopped with every foot down — within one gait cycle.

The gait it reports (RobotState ``motion_gait``): STAND while the clock is stopped, RUN while the
faster trot runs (commanded speed ≥ ``run_speed`` or forced by ``run``), TROT otherwise.
"""

from __future__ import annotations

import math
from typing import Final

from jointbus.model.robot import RobotModel
from jointbus.robots.hb50.legged.state_estimator import EstimatedState
from jointbus.robots.hb50.legged.walking import (
    WalkCommand,
    WalkingController,
    WalkOutput,
    WalkParams,
)
from jointbus.robots.hb50.legged.walking_estimator import WalkingEstimator
from jointbus.robots.hb50.messages import BodyVelocityCommand, MotionGait

__all__ = ["WALK_HEIGHT_RANGE", "Locomotion"]

#: Body heights (m) the trot walks at; a commanded height is clamped into this range.
WALK_HEIGHT_RANGE: Final = (0.28, 0.36)


class Locomotion:
    """See the module docstring. :meth:`start` before the first :meth:`step`."""

    def __init__(self, model: RobotModel, params: WalkParams | None = None) -> None:
        self.controller = WalkingController(model, params)
        self.estimator = WalkingEstimator()
        self.force_run = False
        self._stop_requested = False
        self._height = math.nan
        self._last: EstimatedState | None = None

    @property
    def params(self) -> WalkParams:
        """The walking parameters in force."""
        return self.controller.params

    def retune(self, params: WalkParams) -> None:
        """Walking parameters from the next step on (checked when ``params`` was built)."""
        self.controller.retune(params)

    def start(self, state: EstimatedState, height: float, *, run: bool = False) -> None:
        """Begin walking from ``state`` (standing) at body ``height`` (m); ``run`` forces RUN."""
        self.controller.reset()
        self.estimator.reset(state)
        self.force_run = run
        self._stop_requested = False
        lo, hi = WALK_HEIGHT_RANGE
        self._height = min(max(height, lo), hi) if math.isfinite(height) else hi

    def request_stop(self) -> None:
        """Settle to standing: zero motion from now on; :attr:`stopped` tells when it is done."""
        self._stop_requested = True

    @property
    def stop_requested(self) -> bool:
        """True after :meth:`request_stop` (until the next :meth:`start`)."""
        return self._stop_requested

    @property
    def stopped(self) -> bool:
        """True while the gait clock is held with every foot down."""
        return self.controller.gait.stopped

    @property
    def gait(self) -> MotionGait:
        """``motion_gait`` now (see the module docstring)."""
        if self.controller.gait.stopped:
            return MotionGait.STAND
        return MotionGait.RUN if self.controller.running else MotionGait.TROT

    @property
    def height(self) -> float:
        """The walking height set-point now (m)."""
        return self._height

    @property
    def estimate(self) -> EstimatedState | None:
        """The walking estimate of the last step (contacts from the gait, fused velocity)."""
        return self._last

    def step(
        self,
        state: EstimatedState,
        command: BodyVelocityCommand | None,
        *,
        stand_height: float,
        height_rate: float,
        dt: float,
    ) -> WalkOutput:
        """One control step. ``command``: the SI velocity command, ``None`` when there is none
        or it timed out; ``stand_height`` m (the reference the height fraction scales);
        ``height_rate`` m/s; ``dt`` s."""
        ctl = self.controller
        refined = self.estimator.update(
            state,
            state.linear_acceleration,
            ctl.gait.peek().stance,
            dt,
            ctl.foot_radius,
        )
        self._last = refined
        lo, hi = WALK_HEIGHT_RANGE
        if command is None or self._stop_requested:
            vx = vy = wz = 0.0
            target = self._height
        else:
            vx, vy, wz = command.vx, command.vy, command.yaw_rate
            fraction = command.height_fraction  # None (linear.z == 0): keep the height
            target = (
                self._height if fraction is None else min(max(fraction * stand_height, lo), hi)
            )
        step = height_rate * dt
        self._height = (
            min(target, self._height + step)
            if target > self._height
            else max(target, self._height - step)
        )
        return ctl.step(
            refined, WalkCommand(vx, vy, wz, self._height), dt, force_run=self.force_run
        )
