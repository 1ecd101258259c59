"""The motion-mode state machine of the control node: IDLE, STAND_UP, STAND, SIT_DOWN, LOCOMOTION.

Where it sits: :mod:`jointbus.robots.hb50.control`, a pure component (the caller passes the time,
the state estimate and the commands): the control node calls :meth:`MotionController.step` once per
bridge frame and publishes the returned :class:`~jointbus.robots.hb50.messages.JointCommand`
(``source_node`` ``"control_node"``, actuator order) on ``/hb50/joint_command``.

Modes (values of :class:`~jointbus.robots.hb50.messages.MotionMode`; ``motion_type`` /
``motion_gait`` as reported in RobotState):

=========  ===============================================================  ===============
mode       joint command                                                    type / gait
=========  ===============================================================  ===============
IDLE       damping only: ``kp = 0``, ``kd = idle_kd``, no targets — a       NONE / IDLE
           lying robot stays soft and a falling one is damped, not held
STAND_UP   minimum-jerk interpolation (``10τ³ − 15τ⁴ + 6τ⁵``, its velocity  POSTURE / STAND
           as ``t_vel``) over ``stand_up_time`` from the joints measured
           when the command arrived to the standing pose (:mod:`.stand_pose`
           at ``stand_height``), gains ``kp`` / ``kd``; then STAND by itself.
           From a sprawled pose (a joint more than ``TUCK_THRESHOLD`` =
           0.8 rad from the folded pose and one as far from the standing
           one, as after a fall) it first folds
           the legs to the sitting pose (same profile, peak ``TUCK_SPEED``
           = 1.5 rad/s): swept from a sprawl straight to standing, the
           feet push the body along the floor and can tip it over
STAND      hold the stand pose for the body pose set-point (height, roll,   POSTURE / STAND
           pitch, yaw) through leg IK, gains ``kp`` / ``kd``
SIT_DOWN   the same interpolation over ``sit_down_time`` to the folded      POSTURE / STAND
           pose (body at ``sit_height``), then IDLE by itself
LOCOMOTION the trot (:mod:`.locomotion`, :mod:`.walking`): swing legs on      GAIT / TROT, RUN;
           their IK path at swing gains, stance legs by feed-forward         STAND while the
           ``Jᵀ·f`` at low gains; the velocity command steers it             gait is stopped
DAMPING    damping only, as IDLE, while the bridge does not apply this       NONE / IDLE
           node's commands (see "Following the bridge" below)
FALLEN     damping only, as IDLE, while the body is tipped over (see         NONE / IDLE
           "Fallen over" below); entered from every mode
=========  ===============================================================  ===============

Every target is clamped into the joint's position limits (the model's): after a collapse the
measured pose can lie past a limit (a knee folded beyond 2.705 rad), and a stand-up that starts
there would send targets the bridge rejects; starting at the limit, the interpolation moves the
joint back into range along the same ramp.

Following the bridge (:meth:`MotionController.follow_drives`, called by the node with what
``/hb50/bridge_state`` says): while the drives do not follow this node's commands — e-stop
latched, drives off, safe mode — posture commands would only pile up a target the robot no longer
holds. The controller leaves STAND_UP / STAND / SIT_DOWN / LOCOMOTION for DAMPING (and says so in
RobotState);
when the drives are back it stands up again *from the measured pose* through STAND_UP if it was
standing or rising (a sit-down ends in IDLE) — once the body's tilt is below ``upright_limit``
(0.5 rad; DAMPING until then, :attr:`MotionController.held_by_tilt` gives the tilt for the
node's WARN; FALLEN if it goes over): the bridge's fallback hands back a robot that tipped past
0.5 rad, and a stand-up started on it tipping rolled it over (a user's trial,
2026-12-05: "DAMPING -> STAND_UP: the drives are back", FALLEN 0.6 s later). Lost by a stall
of this node (its step gap past the bridge's watchdog: :meth:`MotionController.lose_control`
with ``stalled``), DAMPING first holds the pose measured on its first step there, stiff (``kp`` /
``kd``), for
``stall_hold_time`` (0.3 s), and damps only after that: right after the stall this node's view
of the bridge is as old as the stall, and the bridge may already apply its commands again —
damping applied to a standing robot folds it. In the chaos campaign (seed 11, t ≈ 1 597 s) a
node starved just after the bridge's fallback had handed the robot back went to DAMPING, by its
log on a stale ``mode: safe``; what the log suggests (it has the reports, not the commands): the
bridge applied that damping, then dropped the node's stale commands and caught a sagging,
moving body in a fallback stance that tipped over. The 0.3 s hold covers
three ``bridge_state`` periods: a state published after the stall has arrived by then, and a
bridge that applies the commands (``run``) takes the node on to a stand-up from the measured
pose at once. A bridge still in its fallback refuses the hold as it refuses any command before
its stance is quiet (≥ 0.45 s from its start), or admits it when it matches the measured pose;
after the 0.3 s it sees damping, the sign that this node knows it lost the robot (a stiff
command it refuses keeps its stance from counting as quiet: a hold without an end could keep the
node out until the sit). ``idle`` in DAMPING cancels the stand (IDLE: stay down);
``stand_up`` while the drives are unavailable is accepted as the wish to stand once they are back.

Fallen over (:mod:`.fall_detector`, fed the estimate's IMU orientation and height every step):
a tilt of the body beyond ``tilt_limit`` (1.0 rad) held for ``fall_hold`` (0.2 s) takes every mode
to FALLEN. Stiffness would only fight the ground (legs pushing against the floor or the air, a
stand-up swept from a body lying on its back), so FALLEN commands damping only, as IDLE, and
refuses ``stand_up``, ``stand``, ``sit_down``, ``walk`` and ``run`` with the reason;
:meth:`MotionController.take_fall_report` hands the node one report per fall (and one per
righting). ``idle`` is accepted and means "stay down once righted". Once the tilt stays below
``upright_limit`` (0.5 rad) for ``upright_hold`` (1 s) — someone righted the robot — the
controller does what it does when the drives come back after DAMPING: if the robot was standing,
rising or walking (or a ``stand_up`` was pending in DAMPING) it stands up *from where it lies*
(STAND_UP, through the fold if sprawled), else it goes to IDLE; if the drives are not available
then, to DAMPING with that wish kept.

Commands (``/hb50/control_command`` text or the CLI) and the transitions they make; anything else
raises :class:`TransitionError` (with the reason) or :class:`UnknownCommandError` and changes
nothing:

============  ======================  =================================================
command       accepted in             effect
============  ======================  =================================================
``stand_up``  IDLE, SIT_DOWN          → STAND_UP (rising again from part-way down works)
``stand``     STAND                   re-level: pose set-point back to level at the
                                      reference height (slewed, see below)
``sit_down``  STAND, STAND_UP         → SIT_DOWN
``idle``      every mode              → IDLE; stopping is never refused
``walk``      STAND, LOCOMOTION       → LOCOMOTION (the gait follows the speed)
``run``       STAND, LOCOMOTION       → LOCOMOTION with the running trot forced
``stand``     LOCOMOTION              stop: zero motion, then STAND once the gait clock
                                      holds every foot down (within one gait cycle)
``stand_up``  DAMPING                 stand up once the drives are back (stays DAMPING)
``idle``      FALLEN                  stay down once righted (stays FALLEN)
(any other)   FALLEN                  refused: the robot is tipped over
============  ======================  =================================================

Walking (``/hb50/velocity_command`` in LOCOMOTION): ``linear.x/y`` × ``cmd_vel_lin`` are the forward
and sideways speed (m/s), ``angular.z`` × ``cmd_vel_ang`` the turn rate (rad/s), ``linear.z`` the
walking height as a fraction of ``stand_height`` (clamped into
:data:`~.locomotion.WALK_HEIGHT_RANGE`; ``linear.z == 0`` keeps the current height); the set-point
ramps towards them (no jump), limited by the walking parameters ``max_speed`` / ``max_yaw_rate``. In
STAND a velocity command that would move a standing foot faster than :data:`AUTO_WALK_SPEED` (its
speed, turn rate or both: :meth:`MotionController.foot_speed`) starts walking by itself — a joystick
pushed forward, sideways or turned (teleop ``j``/``l``) walks or turns the robot in place — except
after an explicit ``stand``, until the command centres or times out, so a joystick still pushing
does not undo it. A command older than ``command_timeout`` counts as zero (the robot stops on four
feet). In IDLE, STAND_UP and SIT_DOWN a velocity command does nothing; in STAND one below that
threshold or held through a stop moves nothing either; :meth:`MotionController.velocity_ignored`
says why (the node reports it). A zero command (stand still) is nothing to report.

Fresh start (issue: a velocity stream still running walked the robot off the moment an e-stop
reset had stood it up): whenever control was taken away — the drives stopped following this
node's commands (e-stop, drives off, the bridge's safe mode or fallback: DAMPING), a fall
(FALLEN), a stall of this node past the bridge's watchdog, a new process that finds the bridge
in safe mode (:meth:`MotionController.lose_control`), or simply a new controller: a stream
already running when it starts (its previous process may have died mid-trot) — a velocity
command is *held*: it does not
start walking from STAND and counts as none in LOCOMOTION, until the stick is neutral — a zero
command (speed, turn rate below :data:`AUTO_WALK_SPEED`) or no command for ``command_timeout``
(the publisher stopped), as RC transmitters and teleop systems want a centred stick before
re-arming. After a stall of this process (:meth:`MotionController.catch_up`) no silence is
counted over the frames that queued during it: they are stepped on within milliseconds, their
stamps running 0.5 s ahead in 20 ms, while the stream's commands queued beside them may have
been taken first — by the stamps alone the stream looked silent for 0.50 s and released the
hold (``make test-long``, 2026-12-05: a stall mid-trot stood up and walked on the stream that
never stopped). A command that arrives after the robot is up is *not* enough: a stream that never
stopped keeps arriving after it. :meth:`MotionController.take_hold_report` gives the node one
WARN per hold ("velocity held: send zero first …" with the command's figures) the first time a
held command reaches a standing robot, and one OK when it is released — also when control was
lost again before the release and no held command reached the robot since (a user's trial,
2026-12-06: the status line read "velocity held" for good while the robot walked).

Quiet → STAND: LOCOMOTION whose gait clock holds every foot down with no motion commanded (none,
stale, held, or below :data:`AUTO_WALK_SPEED`) for ``quiet_time`` (1.5 s) hands over to STAND —
the stand controller and its CPU, at ``stand_height`` (or the commanded ``linear.z`` height) —
and a new non-zero velocity command starts walking again from STAND. The trot carries the body on
stance torques, STAND on position gains that take the weight only after a ≈ 1 cm sag, so STAND
keeps the walk's last stance torques and fades them out over :data:`HANDOVER_S` (1 s): the body
settles by ≈ 12 mm at under 0.05 m/s instead of dropping.

Velocity command in STAND (``/hb50/velocity_command``, normalised, read with
:class:`~jointbus.robots.hb50.messages.VelocityScale` as the seed says): ``angular.x/y`` scaled by
``cmd_vel_ang`` are roll and pitch *rates* (rad/s) that move the body attitude target (``angular.z``
is the seed's yaw rate: it turns the robot, walking, as above — not a twist of the body over its
feet);
``linear.z`` is the height as a fraction of the reference height ``stand_height`` (1 = reference;
before the first command it is 1). ``linear.z == 0`` means "height not commanded": the height
set-point stays where it is. Why: every plain ROS Twist (``'{}'``, ``'{linear: {x: 0.5}}'``,
``teleop_twist_keyboard``) leaves ``z`` at 0, and reading it as the lowest height crouched a
standing robot by 13 cm unasked. A command that moves the body height target by more than
:data:`HEIGHT_REPORT_THRESHOLD` is reported once (:meth:`MotionController.take_height_report`; the
node puts it on ``/hb50/status``), so a height change is never silent. Targets are clamped to the
safe ranges of :class:`~jointbus.robots.hb50.legged.stand_pose.PoseLimits`, and the set-point
follows
them at most ``height_rate`` m/s and ``attitude_rate`` rad/s, so no command makes the joints jump. A
velocity command older than ``command_timeout`` counts as zero rates (a dead joystick stops the
motion; the height stays). ``linear.x/y`` and ``angular.z`` start walking (above).

Retuning while running (the control node's live parameters): :meth:`MotionController.tuning`
checks a new :class:`MotionParams` and computes what follows from it (velocity scale, standing
reference pose and joint targets, folded pose) without touching the controller — a
``stand_height`` outside the standing range of :class:`~.stand_pose.PoseLimits` is refused with
:class:`TuningError` — and :meth:`MotionController.retune` puts such a set in force at once. Gains
and the velocity scale act from the next step (a velocity command already received keeps the rates
it was converted to until the next one). A new ``stand_height`` moves the STAND height target and
the set-point follows it at ``height_rate``, as for a joystick command, so the body never jumps;
a stand-up or sit-down in progress finishes at the pose it started for (STAND then slews to the
new height), and the next stand-up rises to the new height.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Final

import numpy as np
import numpy.typing as npt

from jointbus.messages.errors import LimitError, NonFiniteError, ValidationError
from jointbus.messages.geometry_msgs import Twist
from jointbus.messages.std_msgs import Header
from jointbus.model.parameters import ParameterValue, parameter_defaults
from jointbus.model.robot import RobotModel
from jointbus.robots.hb50.control.fall_detector import FallConfig, FallDetector
from jointbus.robots.hb50.control.locomotion import WALK_HEIGHT_RANGE, Locomotion
from jointbus.robots.hb50.legged.stand_pose import BodyPose, PoseClamp, PoseLimits, StandPose
from jointbus.robots.hb50.legged.state_estimator import EstimatedState
from jointbus.robots.hb50.legged.walking import WalkParams
from jointbus.robots.hb50.messages import (
    BodyVelocityCommand,
    ClampReport,
    JointCommand,
    Level,
    MotionGait,
    MotionMode,
    MotionType,
    VelocityScale,
)

FloatArray = npt.NDArray[np.float64]

__all__ = [
    "SOURCE_NODE",
    "MotionCommand",
    "MotionController",
    "MotionError",
    "MotionParams",
    "MotionTuning",
    "TransitionError",
    "TuningError",
    "UnknownCommandError",
]

#: ``source_node`` of the commands this controller produces.
SOURCE_NODE = "control_node"
#: Longest step (s) the STAND set-point integrates over; a longer gap is not a reason to jump.
_MAX_DT = 0.05
#: Step (s) the walking controller uses when the clock gives none (first frame, repeated stamp).
_NOMINAL_DT = 0.002
#: A STAND velocity command that would move a foot of the standing footprint faster than this
#: (m/s) starts walking (LOCOMOTION): one deadband for forward, sideways and turn commands, since a
#: turn rate ω moves a foot at distance r from the body centre at ω·r (hb50: a turn alone from
#: 0.069 rad/s, the rear feet being 0.288 m out). Below it a joystick's centre noise does not walk.
AUTO_WALK_SPEED = 0.02
#: A stand-up whose measured pose is further than this (rad, any joint) from the folded pose
#: first folds the legs under the body (see the module docstring).
TUCK_THRESHOLD: Final = 0.8
#: Peak joint speed of that fold (rad/s); its duration follows from the largest joint gap.
TUCK_SPEED: Final = 1.5
_MIN_JERK_PEAK: Final = 1.875  # peak of d/dτ of the minimum-jerk profile
#: A velocity command that moves the body height target further than this (m) from the height
#: last reported (or set by a mode change) is reported once: a few cm is a visible crouch.
HEIGHT_REPORT_THRESHOLD: Final = 0.03
#: Time (s) over which STAND fades out the walk's stance torques after a quiet hand-over: the trot
#: carries the body on feed-forward forces, STAND on its position gains, which take the weight
#: only after the body sank ≈ 1 cm; fading the forces lets it settle slowly instead of dropping.
HANDOVER_S: Final = 1.0


class MotionCommand(enum.Enum):
    """A request to the state machine; the value is the text of ``/hb50/control_command``."""

    STAND_UP = "stand_up"
    STAND = "stand"
    SIT_DOWN = "sit_down"
    IDLE = "idle"
    WALK = "walk"
    RUN = "run"


class MotionError(ValueError):
    """Base class of the motion controller's errors."""


class UnknownCommandError(MotionError):
    """A command text that is not one of :class:`MotionCommand` (``command``, ``known``)."""

    def __init__(self, command: object) -> None:
        self.command = command
        self.known = tuple(c.value for c in MotionCommand)
        super().__init__(f"unknown motion command {command!r}; expected one of {self.known}")


class TransitionError(MotionError):
    """A command refused in the current mode; nothing changed (``command``, ``mode``,
    ``reason``)."""

    def __init__(self, command: MotionCommand, mode: MotionMode, reason: str) -> None:
        self.command = command
        self.mode = mode
        self.reason = reason
        super().__init__(f"command {command.value!r} refused in mode {mode.name}: {reason}")


class TuningError(MotionError):
    """A set of :class:`MotionParams` the controller cannot run with; nothing changed.

    ``name`` (the parameter), ``value`` and ``expected`` (the range it must lie in, with why).
    """

    def __init__(self, name: str, value: float, expected: str) -> None:
        self.name = name
        self.value = value
        self.expected = expected
        super().__init__(f"{name} = {value!r}; expected {expected}")


@dataclass(frozen=True, slots=True)
class MotionParams:
    """Gains, heights and timings of the controller (SI units).

    ``kp`` N·m/rad, ``kd`` N·m·s/rad: posture gains (stand up, stand, sit down); ``idle_kd``
    N·m·s/rad: damping in IDLE. ``stand_height`` m: reference body height, the *commanded* one —
    STAND holds it with ``kp`` / ``kd`` and no gravity feed-forward, so under the robot's weight the
    body stands lower (hb50 on MuJoCo: 0.327 m for 0.34 m, a 1.3 cm sag; the knees give most of
    it); ``sit_height`` m: body
    height of the folded pose at the end of SIT_DOWN. ``stand_up_time`` / ``sit_down_time`` s.
    ``cmd_vel_lin`` m/s, ``cmd_vel_ang`` rad/s: the velocity command's scale. ``height_rate`` m/s,
    ``attitude_rate`` rad/s: slew limits of the STAND set-point. ``command_timeout`` s: age after
    which a velocity command's rates count as zero. ``quiet_time`` s: how long a walk stopped on
    four feet with no motion commanded stays in LOCOMOTION before it hands over to STAND.
    ``stall_hold_time`` s: after a stall of this node, how long DAMPING holds the measured pose
    (stiff) before it damps — longer than the 10 Hz ``bridge_state`` period, so a state published
    after the stall has arrived by then.

    :meth:`from_model` takes every field the robot file declares as a parameter (``kp``, ``kd``,
    ``stand_height``, ``cmd_vel_lin``, ``cmd_vel_ang`` on the hb50) and the defaults below for
    the rest.
    """

    kp: float = 80.0
    kd: float = 3.0
    idle_kd: float = 1.0
    stand_height: float = 0.34
    sit_height: float = 0.14
    stand_up_time: float = 1.5
    sit_down_time: float = 1.5
    cmd_vel_lin: float = 1.0
    cmd_vel_ang: float = 1.0
    height_rate: float = 0.1
    attitude_rate: float = 0.5
    command_timeout: float = 0.5
    quiet_time: float = 1.5
    stall_hold_time: float = 0.3

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValidationError("MotionParams", f.name, value, "a real number")
            if not math.isfinite(value):
                raise NonFiniteError("MotionParams", f.name, value, "a finite number")
            if value < 0.0 or (value == 0.0 and f.name not in ("kp", "kd", "idle_kd")):
                raise LimitError("MotionParams", f.name, value, "> 0 (gains ≥ 0)")
            object.__setattr__(self, f.name, float(value))

    @classmethod
    def from_parameters(cls, values: Mapping[str, ParameterValue]) -> MotionParams:
        """The fields found in ``values`` (e.g. live parameters), defaults for the others;
        names that are not fields are ignored (the robot file has parameters for other nodes)."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: float(v) for k, v in values.items() if k in names})

    @classmethod
    def from_model(
        cls, model: RobotModel, overrides: Mapping[str, ParameterValue] | None = None
    ) -> MotionParams:
        """The robot file's parameter defaults, then ``overrides``."""
        values = dict(parameter_defaults(model.parameters))
        values.update(overrides or {})
        return cls.from_parameters(values)


@dataclass(frozen=True, slots=True)
class MotionTuning:
    """A checked :class:`MotionParams` and what the controller derives from it — the velocity
    scale, the standing reference pose and its joint targets (rad, actuator order), the folded
    sitting targets — made by :meth:`MotionController.tuning`, put in force in one step by
    :meth:`MotionController.retune`."""

    params: MotionParams
    scale: VelocityScale
    reference_pose: BodyPose
    q_stand: FloatArray
    q_sit: FloatArray
    walk: WalkParams | None = None  # new walking parameters (None: keep those in force)


def _min_jerk(tau: float) -> tuple[float, float]:
    """Position fraction and its derivative w.r.t. tau of the minimum-jerk profile on [0, 1]."""
    if tau >= 1.0:
        return 1.0, 0.0
    if tau <= 0.0:
        return 0.0, 0.0
    t2 = tau * tau
    return t2 * tau * (10.0 - 15.0 * tau + 6.0 * t2), 30.0 * t2 * (1.0 - 2.0 * tau + t2)


def _clip(q: FloatArray, lower: FloatArray, upper: FloatArray) -> FloatArray:
    """``np.clip(q, lower, upper)``: the same numbers (NaN stays NaN, the same signed zeros),
    as the two ufuncs it runs, without ``np.clip``'s Python dispatch — ≈ 2.5 against 7.7 µs a
    call warm on the development VM (2026-12-06), and it runs every control step."""
    return np.minimum(np.maximum(q, lower), upper)


def _approach(value: float, target: float, step: float) -> float:
    """``value`` moved towards ``target`` by at most ``step``."""
    if target > value:
        return min(target, value + step)
    return max(target, value - step)


_MODE_TYPE_GAIT = {
    MotionMode.IDLE: (MotionType.NONE, MotionGait.IDLE),
    MotionMode.STAND_UP: (MotionType.POSTURE, MotionGait.STAND),
    MotionMode.STAND: (MotionType.POSTURE, MotionGait.STAND),
    MotionMode.SIT_DOWN: (MotionType.POSTURE, MotionGait.STAND),
    MotionMode.LOCOMOTION: (MotionType.GAIT, MotionGait.TROT),
    MotionMode.DAMPING: (MotionType.NONE, MotionGait.IDLE),
    MotionMode.FALLEN: (MotionType.NONE, MotionGait.IDLE),
}
#: Modes that command a posture: left for DAMPING while the drives do not follow commands
#: (LOCOMOTION too, for the walking controller that will set it: a gait is a posture in motion).
_MOVES: Final = (
    MotionMode.STAND_UP,
    MotionMode.STAND,
    MotionMode.SIT_DOWN,
    MotionMode.LOCOMOTION,
)


#: Modes in which a velocity command would move the robot (were it not held).
_UP: Final = (MotionMode.STAND, MotionMode.LOCOMOTION)


class MotionController:
    """The state machine (see the module docstring). Starts in IDLE.

    Time ``now`` (s) is any monotonic clock the caller chooses (wall, simulated); only
    differences are used.
    """

    def __init__(
        self,
        model: RobotModel,
        params: MotionParams | None = None,
        *,
        pose_limits: PoseLimits | None = None,
        walk_params: WalkParams | None = None,
        fall: FallConfig | None = None,
    ) -> None:
        self.model = model
        self.fall = FallDetector(fall)
        """Tipped over or upright (see "Fallen over" in the module docstring)."""
        self._fall_report: str | None = None
        self.params = params or MotionParams.from_model(model)
        self.locomotion = Locomotion(model, walk_params or WalkParams.from_model(model))
        self._state: EstimatedState | None = None
        self._auto_walk = False
        self._auto_walk_armed = True
        self.names = model.actuator_order
        self.stand_pose = StandPose(model, pose_limits)
        self._foot_xy: FloatArray = self.stand_pose.footprint[:, :2].copy()
        """(legs, 2) m: where the standing feet are around the body centre (x, y)."""
        self.scale = VelocityScale(self.params.cmd_vel_lin, self.params.cmd_vel_ang)
        p = self.params
        self.reference_pose, self.reference_clamp = self.stand_pose.clamp(BodyPose(p.stand_height))
        self.q_stand = self.stand_pose.solve(self.reference_pose)
        self.q_sit = self.stand_pose.solve(BodyPose(p.sit_height))
        n = len(self.names)
        joints = {j.name: j for j in model.actuated_joints()}
        self.lower: FloatArray = np.array([joints[q].limits.position_min for q in self.names])
        """Position limits (rad, actuator order) every target is clamped into."""
        self.upper: FloatArray = np.array([joints[q].limits.position_max for q in self.names])
        self._mode = MotionMode.IDLE
        self._tucking = False
        self._stand_goal = self.q_stand
        self._drives_available = True
        self._drives_reason = ""
        self._stand_when_back = False
        self._held_by_tilt: float | None = None  # rad: the tilt that holds back a stand-up
        # DAMPING after this node's own stall: hold (not damp) until this controller time (s)
        self._hold_lost_until = -math.inf
        self._q_lost: FloatArray | None = None  # the pose it holds (rad), from its first step
        # _posture's constant columns: (kp, kd, kp column, kd column, zeros) of the gains in force
        self._posture_columns: tuple[float, float, FloatArray, FloatArray, FloatArray] | None = None
        self._measured: FloatArray | None = None
        self._start_pending = False
        self._t_start = 0.0
        self._q_start = np.zeros(n)
        self._q_goal = self.q_stand
        self._duration = p.stand_up_time
        self._t_last: float | None = None
        # STAND set-point and target (height m, roll, pitch, yaw rad)
        self._setpoint = self.reference_pose
        self._target = self.reference_pose
        self._height_fraction = 1.0
        # the body height target (m) last reported or set by a mode change; a velocity command
        # that moves it further than HEIGHT_REPORT_THRESHOLD is reported (take_height_report)
        self._height_anchor = p.stand_height
        self._height_report: str | None = None
        self._rates = (0.0, 0.0, 0.0)
        self._t_command = -math.inf
        self._velocity = BodyVelocityCommand(0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
        self._q_hold = self.q_stand.copy()
        # _stand's memos: (inputs, height target) and (stand pose, setpoint, joint targets).
        self._height_memo: tuple[tuple[object, ...], BodyPose] | None = None
        self._solved: tuple[StandPose, BodyPose, FloatArray] | None = None
        # fresh start: what took control away (None: no hold), and the reports it owes
        # a new process holds a stream that was already running when it started (its previous
        # process may have been killed mid-trot); silence from the first step releases it
        self._hold_cause: str | None = "this control node's start"
        self._hold_since: float | None = None  # controller time (s) the hold began (None: next)
        self._queued_until = -math.inf  # frames up to this time (s) queued in a stall of ours
        self._hold_reported = False  # the WARN for the current cause went out
        # a WARN went out for a hold not released since (whatever its cause): the release owes
        # its OK, also after control was lost again in between (its cause then changes)
        self._hold_warned = False
        self._hold_report: tuple[Level, str] | None = None
        # quiet → STAND: since when (s) the walk has stood still on four feet, uncommanded
        self._quiet_since: float | None = None
        self._transition_note = ""
        self._handover: tuple[float, FloatArray] | None = None  # (start s, stance torques N·m)
        # the velocity stream: live (a command within command_timeout), since when (s), and
        # whether its end while walking was reported (then its return is too)
        self._stream_live = False
        self._stream_start = -math.inf
        self._stream_stop_reported = False
        self._stream_report: tuple[Level, str] | None = None

    # ------------------------------------------------------------------ state

    @property
    def mode(self) -> MotionMode:
        """The current mode."""
        return self._mode

    @property
    def drives_available(self) -> bool:
        """What the bridge last said (:meth:`follow_drives`); True until it says otherwise."""
        return self._drives_available

    @property
    def stands_when_back(self) -> bool:
        """In DAMPING: will the robot stand up again when the drives are back?"""
        return self._stand_when_back

    @property
    def held_by_tilt(self) -> float | None:
        """In DAMPING with the drives back: the body's tilt (rad) that holds back the stand-up
        (at or above ``upright_limit``), else ``None``. The node reports it, so a robot waiting
        to be righted says why it does not stand."""
        return self._held_by_tilt if self._mode is MotionMode.DAMPING else None

    @property
    def motion_type(self) -> MotionType:
        """``motion_type`` of the current mode (RobotState)."""
        return _MODE_TYPE_GAIT[self._mode][0]

    @property
    def motion_gait(self) -> MotionGait:
        """``motion_gait`` of the current mode (RobotState); in LOCOMOTION the walking gait now
        (STAND while the gait clock is stopped, TROT, RUN)."""
        if self._mode is MotionMode.LOCOMOTION:
            return self.locomotion.gait
        return _MODE_TYPE_GAIT[self._mode][1]

    @property
    def estimate(self) -> EstimatedState | None:
        """The state estimate of the last step: in LOCOMOTION the walking estimator's (contacts
        from the gait confirmed by force, leg odometry fused with the IMU), else the one given."""
        if self._mode is MotionMode.LOCOMOTION and self.locomotion.estimate is not None:
            return self.locomotion.estimate
        return self._state

    def walking_height_clamped(self) -> str | None:
        """In LOCOMOTION, what became of a commanded height outside the walking range (``None``:
        inside it, or not walking) — the normalised ``linear.z`` is valid from 0 to 1, but the trot
        walks only between the bounds of :data:`~.locomotion.WALK_HEIGHT_RANGE`."""
        if self._mode is not MotionMode.LOCOMOTION:
            return None
        fraction = self._velocity.height_fraction
        if fraction is None:  # linear.z == 0: the height is not commanded
            return None
        height = fraction * self.params.stand_height
        lo, hi = WALK_HEIGHT_RANGE
        if lo <= height <= hi:
            return None
        used = lo if height < lo else hi
        return (
            f"linear.z {fraction!r} asks for a {height:.3f} m walking height; walking at "
            f"{used} m, the end of the walking range [{lo}, {hi}] m"
        )

    def velocity_ignored(self) -> str | None:
        """Why a velocity command does nothing in the current mode (``None``: it is used)."""
        reasons = {
            MotionMode.IDLE: "the robot is down: send stand_up first",
            MotionMode.STAND_UP: "the robot is still rising",
            MotionMode.SIT_DOWN: "the robot is sitting down",
            MotionMode.DAMPING: "the robot is in damping (safe) mode",
            MotionMode.FALLEN: "the robot has fallen over (damping only until it is upright)",
        }
        reason = reasons.get(self._mode) or self._walking_ignored()
        return None if reason is None else f"ignored in mode {self._mode.name}: {reason}"

    def _walking_ignored(self) -> str | None:
        """In STAND / LOCOMOTION: why the last command's speed and turn rate do not move the
        robot (``None``: they do, or there are none — a zero command means "stand still")."""
        v = self._velocity
        speed = self.foot_speed(v)
        if speed == 0.0:
            return None
        if self._mode is MotionMode.LOCOMOTION:
            if not self.locomotion.stop_requested:
                return None
            return (
                "stopping on four feet (`stand`); the robot then stays standing until the "
                "command centres"
            )
        if self._mode is not MotionMode.STAND or self._auto_walk:
            return None
        if speed > AUTO_WALK_SPEED and self._hold_cause is not None:
            return None  # the fresh-start hold: reported once (take_hold_report)
        if speed > AUTO_WALK_SPEED:  # disarmed
            return (
                "a stop (`stand`, or another controller taking the actuators) holds the robot "
                "standing until the command centres: send a zero command, or none for "
                f"{self.params.command_timeout} s (command_timeout), then a command walks again"
            )
        return (
            f"velocity {v.vx:.3f} / {v.vy:.3f} m/s and turn rate {v.yaw_rate:.3f} rad/s would "
            f"move the feet at most {speed:.3f} m/s, below the {AUTO_WALK_SPEED} m/s that starts "
            f"walking (a turn alone: above {self.auto_walk_turn_rate:.3f} rad/s); `jointbus mode "
            "walk` walks at any speed"
        )

    # ------------------------------------------------------------------ fresh start

    @property
    def velocity_held(self) -> str | None:
        """What took control away since the stick was last neutral (``None``: no hold): while
        set, a non-zero velocity command does not start walking (see "Fresh start" in the module
        docstring)."""
        return self._hold_cause

    def _hold(self, cause: str) -> None:
        """Control was taken away (``cause``): walking needs a fresh start."""
        self._auto_walk_armed = False
        self._auto_walk = False
        self._hold_cause = cause
        self._hold_since = self._t_last
        self._hold_reported = False

    def catch_up(self, until: float) -> None:
        """The frames stamped up to ``until`` (s) queued while this node stalled (its own clock
        saw the gap, their stamps do not): the velocity commands sent meanwhile queued beside
        them and are taken in any order with them, so no silence of the stream — which releases
        a hold and ends a walk — is counted before ``until``."""
        self._queued_until = max(self._queued_until, until)

    def _release_hold(self, why: str) -> None:
        """A neutral stick (``why``: a zero command, or none for ``command_timeout``)."""
        self._auto_walk_armed = True
        if self._hold_cause is None:
            return
        if self._hold_warned:
            self._hold_report = (
                Level.OK,
                f"velocity released: {why} after {self._hold_cause}; the next command walks",
            )
        self._hold_cause = None
        self._hold_reported = False
        self._hold_warned = False

    def take_hold_report(self) -> tuple[Level, str] | None:
        """The fresh-start report owed now, once per hold (``None``: nothing new): WARN the
        first time a held command reaches a standing robot, with the command's figures; OK
        when the stick centres after that."""
        report = self._hold_report
        self._hold_report = None
        if report is not None:
            return report
        cause = self._hold_cause
        if cause is None or self._hold_reported or self._mode not in _UP:
            return None
        v = self._velocity
        if not self._stream_live or self.foot_speed(v) <= AUTO_WALK_SPEED:
            return None
        self._hold_reported = True
        self._hold_warned = True
        return (
            Level.WARN,
            f"velocity held: send zero first — the command asks for {v.vx:.2f} m/s "
            f"forward, {v.vy:.2f} m/s sideways, {v.yaw_rate:.2f} rad/s turn, and no command "
            f"was neutral since {cause}; walking needs a fresh start: a zero command (neutral "
            f"stick), or none for {self.params.command_timeout} s (command_timeout), "
            "then the next command walks",
        )

    def lose_control(
        self, cause: str, now: float | None = None, *, stand: bool = False, stalled: bool = False
    ) -> MotionMode | None:
        """This node's commands were not applied for a while (``cause``: its process stalled
        past the bridge's watchdog; or it starts while the bridge is in safe mode after
        another incarnation lost the robot). Walking needs a fresh start; a posture mode
        (and, with ``stand``, IDLE too) goes to DAMPING and stands up again from the measured
        pose as soon as the bridge applies this node's commands. Returns the new mode when it
        changed (``None``: it did not). ``now`` (s): when control was found lost (default: the
        last step's time); silence of the velocity commands counts from then. ``stalled``: the
        cause is this node's own stall — its view of the bridge is as old as the stall, so DAMPING
        holds the measured pose for ``stall_hold_time`` before it damps (module docstring)."""
        self._hold(cause)
        if now is not None:
            self._hold_since = now
        self._quiet_since = None
        mode = self._mode
        if mode is MotionMode.FALLEN:
            return None
        if mode in _MOVES or (stand and mode is MotionMode.IDLE):
            self._stand_when_back = mode is not MotionMode.SIT_DOWN
            since = now if now is not None else self._t_last
            if stalled and self._stand_when_back and since is not None:
                self._hold_lost_until = since + self.params.stall_hold_time
            self._q_lost = None
            self._mode = MotionMode.DAMPING
            self._start_pending = False
            self._tucking = False
            return self._mode
        return None

    def take_stream_report(self) -> tuple[Level, str] | None:
        """The velocity stream's report owed now (``None``: nothing new): WARN once when the
        commands stop while the robot walks (the publisher died mid-stride: the robot stops on
        four feet, correctly — and says so), OK once when they come back."""
        report, self._stream_report = self._stream_report, None
        return report

    @property
    def transition_note(self) -> str:
        """Why the last step changed the mode by itself (empty: a move finished)."""
        return self._transition_note

    @property
    def pose_setpoint(self) -> BodyPose:
        """The STAND body pose set-point now (m, rad)."""
        return self._setpoint

    @property
    def velocity_command(self) -> BodyVelocityCommand:
        """The last velocity command in SI units (scaled by ``cmd_vel_lin`` / ``cmd_vel_ang``
        when it arrived); before the first, zero rates at the reference height."""
        return self._velocity

    # ------------------------------------------------------------------ retuning

    def tuning(self, params: MotionParams, walk: WalkParams | None = None) -> MotionTuning:
        """``params`` checked and prepared for :meth:`retune`; the controller is not touched.

        Safe to call from another thread than the one stepping the controller (it only reads the
        immutable stand geometry). Raises :class:`TuningError` for a ``stand_height`` outside the
        standing range of the pose limits (within it the legs reach every stand attitude; the
        robot file's bounds may be wider), and whatever the scale or the leg IK raise for values
        they cannot take (e.g. :class:`~jointbus.model.errors.UnreachableError` for a
        ``sit_height`` the legs cannot fold to).
        """
        lim = self.stand_pose.limits
        if not lim.height_min <= params.stand_height <= lim.height_max:
            raise TuningError(
                "stand_height",
                params.stand_height,
                f"a height in the standing range [{lim.height_min!r}, {lim.height_max!r}] m, "
                "where the legs reach every stand attitude",
            )
        scale = VelocityScale(params.cmd_vel_lin, params.cmd_vel_ang)
        reference = BodyPose(params.stand_height)
        q_stand = self.stand_pose.solve(reference)
        q_sit = (
            self.q_sit
            if params.sit_height == self.params.sit_height
            else self.stand_pose.solve(BodyPose(params.sit_height))
        )
        return MotionTuning(params, scale, reference, q_stand, q_sit, walk)

    def retune(self, tuning: MotionTuning) -> None:
        """Put ``tuning`` (from :meth:`tuning`) in force now; call it between two :meth:`step`
        calls, on the thread that steps the controller (see the module docstring)."""
        self.params = tuning.params
        self.scale = tuning.scale
        self.reference_pose = tuning.reference_pose
        self.reference_clamp = PoseClamp()
        self.q_stand = tuning.q_stand
        self.q_sit = tuning.q_sit
        if tuning.walk is not None:
            self.locomotion.retune(tuning.walk)

    # ------------------------------------------------------------------ commands

    def handle_command(self, command: str | MotionCommand) -> MotionMode:
        """Apply ``command`` (text or :class:`MotionCommand`); returns the new mode.

        Raises :class:`UnknownCommandError` or :class:`TransitionError`; nothing changes then.
        """
        if isinstance(command, MotionCommand):
            cmd = command
        else:
            try:
                cmd = MotionCommand(command.strip().lower() if isinstance(command, str) else "")
            except ValueError:
                raise UnknownCommandError(command) from None
        mode = self._mode
        if mode is MotionMode.FALLEN:
            return self._while_fallen(cmd)
        if cmd is MotionCommand.IDLE:
            self._mode = MotionMode.IDLE
            self._start_pending = False
            self._stand_when_back = False
            return self._mode
        if mode is MotionMode.DAMPING or (
            not self._drives_available and mode in (MotionMode.IDLE, MotionMode.SIT_DOWN)
        ):
            return self._while_unavailable(cmd)
        if cmd in (MotionCommand.WALK, MotionCommand.RUN):
            return self._begin_walking(cmd)
        if cmd is MotionCommand.STAND_UP:
            if mode not in (MotionMode.IDLE, MotionMode.SIT_DOWN):
                reason = "already rising" if mode is MotionMode.STAND_UP else "already standing"
                raise TransitionError(cmd, mode, reason)
            self._begin_move(cmd, MotionMode.STAND_UP, self.q_stand, self.params.stand_up_time)
            self._setpoint = self._target = self.reference_pose
            return self._mode
        if cmd is MotionCommand.SIT_DOWN:
            if mode not in (MotionMode.STAND, MotionMode.STAND_UP):
                reason = {
                    MotionMode.SIT_DOWN: "already sitting down",
                    MotionMode.LOCOMOTION: "walking: send stand first (it stops within one "
                    "gait cycle)",
                }.get(mode, "the robot is down")
                raise TransitionError(cmd, mode, reason)
            self._begin_move(cmd, MotionMode.SIT_DOWN, self.q_sit, self.params.sit_down_time)
            return self._mode
        # STAND: stop walking, or re-level
        if mode is MotionMode.LOCOMOTION:
            self.locomotion.request_stop()
            # a joystick still pushing must not start the walk again: wait for it to centre
            self._auto_walk_armed = False
            return self._mode  # STAND follows once every foot is down (see step)
        if mode is not MotionMode.STAND:
            reasons = {
                MotionMode.IDLE: "the robot is down: send stand_up first",
                MotionMode.SIT_DOWN: "the robot is sitting down: send stand_up to rise again",
                MotionMode.STAND_UP: "still rising; STAND follows when the stand-up ends",
            }
            raise TransitionError(cmd, mode, reasons.get(mode, f"not available in {mode.name}"))
        self._height_fraction = 1.0
        self._height_anchor = self.reference_pose.height
        self._target = self.reference_pose
        return self._mode

    def _begin_walking(self, cmd: MotionCommand) -> MotionMode:
        """WALK / RUN: from STAND into LOCOMOTION (RUN forces the running trot); in LOCOMOTION
        switch between the two (and cancel a pending stop)."""
        mode = self._mode
        run = cmd is MotionCommand.RUN
        if mode is MotionMode.LOCOMOTION:
            if self.locomotion.stop_requested:
                raise TransitionError(cmd, mode, "stopping: wait for STAND, then walk again")
            self.locomotion.force_run = run
            return mode
        if mode is not MotionMode.STAND:
            reasons = {
                MotionMode.IDLE: "the robot is down: send stand_up first",
                MotionMode.SIT_DOWN: "the robot is sitting down: send stand_up first",
                MotionMode.STAND_UP: "still rising; walk once it stands",
            }
            raise TransitionError(cmd, mode, reasons.get(mode, f"not available in {mode.name}"))
        state = self._state
        if state is None:
            raise TransitionError(cmd, mode, "no joint feedback received yet")
        self.locomotion.start(state, self._setpoint.height, run=run)
        self._mode = MotionMode.LOCOMOTION
        self._auto_walk = False
        self._quiet_since = None
        return self._mode

    def _while_fallen(self, cmd: MotionCommand) -> MotionMode:
        """A command while tipped over: ``idle`` = stay down once righted; the rest refused."""
        if cmd is MotionCommand.IDLE:
            self._stand_when_back = False
            return self._mode
        tilt = self.fall.tilt
        how = f" ({tilt.describe()})" if tilt is not None else ""
        then = (
            "it stands up by itself once upright"
            if self._stand_when_back
            else "send stand_up once it is upright"
        )
        limit = self.fall.config
        raise TransitionError(
            cmd,
            self._mode,
            f"the robot has fallen over{how}; right it (tilt below {limit.upright_limit} rad "
            f"for {limit.upright_hold} s) — {then}",
        )

    def take_fall_report(self) -> str | None:
        """What the last :meth:`step` found about a fall (once; ``None``: nothing new): the fall
        (the node reports it as an ERROR) or the righting (OK)."""
        report, self._fall_report = self._fall_report, None
        return report

    def _follow_fall(self, state: EstimatedState, now: float) -> None:
        """Enter FALLEN when the detector says so, leave it when it says upright again."""
        mode = self._mode
        fallen = self.fall.update(state.orientation, state.height, now)
        if fallen is (mode is MotionMode.FALLEN):
            return  # nothing changes (every step but a fall's or a righting's)
        cfg = self.fall.config
        tilt = self.fall.at_change
        how = tilt.describe() if tilt is not None else ""
        if fallen and mode is not MotionMode.FALLEN:
            self._stand_when_back = mode in (
                MotionMode.STAND_UP,
                MotionMode.STAND,
                MotionMode.LOCOMOTION,
            ) or (mode is MotionMode.DAMPING and self._stand_when_back)
            self._mode = MotionMode.FALLEN
            self._start_pending = False
            self._tucking = False
            self._hold("a fall")
            then = "stands up by itself" if self._stand_when_back else "stays down"
            self._fall_report = (
                f"motion mode {mode.name} -> FALLEN: the robot has fallen over: {how}, tilt "
                f"beyond {cfg.tilt_limit} rad for {cfg.fall_hold} s; damping only, stand_up / "
                f"stand / walk refused; once upright ({cfg.upright_limit} rad for "
                f"{cfg.upright_hold} s) it {then}"
            )
        elif not fallen and mode is MotionMode.FALLEN:
            self._leave_fallen(how)

    def _leave_fallen(self, how: str) -> None:
        if not self._drives_available:
            self._mode = MotionMode.DAMPING  # keeps _stand_when_back for the drives' return
            self._hold_lost_until = -math.inf  # it was lying: nothing to hold up
            then = f"DAMPING: {self._drives_reason or 'the drives are not available'}"
        elif self._stand_when_back:
            try:
                self._begin_move(
                    MotionCommand.STAND_UP,
                    MotionMode.STAND_UP,
                    self.q_stand,
                    self.params.stand_up_time,
                )
            except TransitionError as exc:
                self._mode = MotionMode.IDLE
                then = f"IDLE: cannot stand up ({exc.reason})"
            else:
                self._stand_when_back = False
                self._setpoint = self._target = self.reference_pose
                then = "STAND_UP from where it lies"
        else:
            self._mode = MotionMode.IDLE
            then = "IDLE (it stays down)"
        self._fall_report = f"motion mode FALLEN -> {then}: upright again ({how})"

    def _while_unavailable(self, cmd: MotionCommand) -> MotionMode:
        """``stand_up`` / ``stand`` / ``sit_down`` while the drives do not follow commands."""
        why = self._drives_reason or "the bridge is not applying commands"
        if cmd is MotionCommand.STAND_UP and not self._drives_available:
            if self._mode is not MotionMode.DAMPING:
                self._hold_lost_until = -math.inf  # from IDLE / SIT_DOWN: the robot is down
            self._mode = MotionMode.DAMPING
            self._stand_when_back = True
            return self._mode
        if cmd is MotionCommand.STAND_UP:  # DAMPING, drives back before the next step
            self._stand_when_back = False
            self._begin_move(cmd, MotionMode.STAND_UP, self.q_stand, self.params.stand_up_time)
            self._setpoint = self._target = self.reference_pose
            return self._mode
        raise TransitionError(
            cmd, self._mode, f"{why}; send stand_up (it starts when the drives are back) or idle"
        )

    def follow_drives(
        self, available: bool, reason: str, measured: FloatArray | None = None
    ) -> MotionMode | None:
        """Follow the bridge: are the drives applying this node's commands (``available``), and
        if not, why (``reason``, e.g. ``"e-stop latched (...)"``)? ``measured``: the newest
        joint positions (rad), where a stand-up after the drives came back starts.

        Returns the new mode when this changed it (see the module docstring), else ``None``.
        """
        if measured is not None:
            self._measured = measured
        self._drives_available = available
        self._drives_reason = "" if available else reason
        self._held_by_tilt = None
        mode = self._mode
        if mode is MotionMode.FALLEN:
            return None  # damping anyway; what to do once upright reads _drives_available
        if not available:
            if mode not in _MOVES:
                return None
            self._stand_when_back = mode is not MotionMode.SIT_DOWN
            self._hold_lost_until = -math.inf  # the bridge said so: damping it expects
            self._mode = MotionMode.DAMPING
            self._start_pending = False
            self._hold(f"the drives stopped following commands ({reason})")
            return self._mode
        if mode is not MotionMode.DAMPING:
            return None
        if not self._stand_when_back:
            self._mode = MotionMode.IDLE
            return self._mode
        tilt = self.fall.tilt
        if tilt is not None and tilt.tilt >= self.fall.config.upright_limit:  # NaN: no IMU
            # Tipping (the bridge's fallback hands a robot over once it tipped past 0.5 rad):
            # stay in DAMPING with the wish kept; stand once it is upright, or FALLEN takes it.
            self._held_by_tilt = tilt.tilt
            return None
        try:
            self._begin_move(
                MotionCommand.STAND_UP, MotionMode.STAND_UP, self.q_stand, self.params.stand_up_time
            )
        except TransitionError:
            return None  # no usable feedback yet: stay in DAMPING, try with the next frame
        self._stand_when_back = False
        self._setpoint = self._target = self.reference_pose
        return self._mode

    def _begin_move(
        self, cmd: MotionCommand, mode: MotionMode, goal: FloatArray, duration: float
    ) -> None:
        measured = self._measured
        if measured is None:
            raise TransitionError(cmd, self._mode, "no joint feedback received yet")
        bad = ~np.isfinite(measured)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise TransitionError(
                cmd,
                self._mode,
                f"joint {self.names[i]!r} (index {i}) reports no position (NaN); "
                "cannot start a move from an unknown pose",
            )
        self._mode = mode
        self._q_start = np.clip(measured, self.lower, self.upper)  # a collapse can pass a limit
        self._q_goal = goal
        self._duration = duration
        self._start_pending = True
        self._tucking = False
        if mode is MotionMode.STAND_UP:
            spread = float(np.max(np.abs(self._q_start - self.q_sit)))
            # Sprawled after a fall: far from the folded pose *and* from the standing one. A
            # robot still (nearly) standing — a short safe spell, a power blip — rises from
            # where it is: folding it first dropped it from 0.33 m to 0.12 m and back.
            standing = float(np.max(np.abs(self._q_start - goal))) <= TUCK_THRESHOLD
            if spread > TUCK_THRESHOLD and not standing:  # fold the legs under it first
                self._tucking = True
                self._stand_goal = goal
                self._q_goal = self.q_sit
                self._duration = _MIN_JERK_PEAK * spread / TUCK_SPEED

    def set_velocity_command(self, twist: Twist, now: float) -> ClampReport:
        """Take a normalised ``/hb50/velocity_command`` received at ``now`` (s).

        Returns what was clamped (for a status report). Raises
        :class:`~jointbus.messages.errors.NonFiniteError` for NaN / infinite components and
        changes nothing then.
        """
        si, report = self.scale.to_si(twist)
        self._velocity = si
        if not self._stream_live:
            self._stream_live = True
            self._stream_start = now
            if self._stream_stop_reported:
                self._stream_stop_reported = False
                self._stream_report = (Level.OK, "velocity commands are back")
        self._t_command = now
        if self.foot_speed(si) <= AUTO_WALK_SPEED:
            self._release_hold("a zero velocity command")
        if si.height_fraction is not None:  # linear.z == 0: height not commanded, keep it
            self._note_height(si.height_fraction, twist.linear.z)
        if self._mode is MotionMode.LOCOMOTION:
            return report  # the walking set-point is read from _velocity each step
        # angular.z is a turn rate (it walks, below), not a twist of the standing body
        self._rates = (si.roll_rate, si.pitch_rate, 0.0)
        if si.height_fraction is not None:
            self._height_fraction = si.height_fraction
        if self.foot_speed(si) <= AUTO_WALK_SPEED:
            self._auto_walk_armed = True
        elif self._mode is MotionMode.STAND and self._auto_walk_armed:
            self._auto_walk = True  # the next step starts walking (it has the estimate)
        return report

    def foot_speed(self, command: BodyVelocityCommand) -> float:
        """The speed (m/s) at which ``command``'s planar velocity and turn rate would move the
        fastest foot of the standing footprint (``v + ω × r``): what :data:`AUTO_WALK_SPEED`
        is compared with, so a forward, a sideways and a turn command count alike."""
        x, y = self._foot_xy[:, 0], self._foot_xy[:, 1]
        w = command.yaw_rate
        return float(np.max(np.hypot(command.vx - w * y, command.vy + w * x)))

    @property
    def auto_walk_turn_rate(self) -> float:
        """The turn rate (rad/s) above which a turn alone starts walking from STAND: the one that
        moves the outermost standing foot at :data:`AUTO_WALK_SPEED`."""
        return AUTO_WALK_SPEED / float(np.max(np.hypot(self._foot_xy[:, 0], self._foot_xy[:, 1])))

    def _note_height(self, fraction: float, z: float) -> None:
        """Keep a report when the height ``fraction`` (of ``stand_height``; ``z`` as received)
        moves the body height target (m, after the mode's safe range) by more than
        :data:`HEIGHT_REPORT_THRESHOLD` from the last reported one."""
        height = fraction * self.params.stand_height
        if self._mode is MotionMode.LOCOMOTION:
            lo, hi = WALK_HEIGHT_RANGE
            target = min(max(height, lo), hi)
        else:
            target = self.stand_pose.clamp(replace(self._target, height=height))[0].height
        if abs(target - self._height_anchor) <= HEIGHT_REPORT_THRESHOLD:
            return
        self._height_report = (
            f"velocity_command linear.z = {z!r} moves the body height target "
            f"{self._height_anchor:.3f} → {target:.3f} m "
            f"(z is a fraction of stand_height {self.params.stand_height!r} m; "
            "send z = 0 to keep the height)"
        )
        self._height_anchor = target

    def take_height_report(self) -> str | None:
        """The report of the last velocity command that moved the body height target by more
        than :data:`HEIGHT_REPORT_THRESHOLD` m (``None``: none since the last call)."""
        report, self._height_report = self._height_report, None
        return report

    def _height_target(self) -> BodyPose:
        height = self._height_fraction * self.params.stand_height
        safe, _ = self.stand_pose.clamp(replace(self._target, height=height))
        return safe

    # ------------------------------------------------------------------ control

    def step(
        self, state: EstimatedState, now: float, *, header: Header | None = None
    ) -> JointCommand:
        """The joint command for this cycle, given the latest estimate at time ``now`` (s)."""
        self._measured = state.joint_position
        self._state = state
        dt = 0.0 if self._t_last is None else min(max(now - self._t_last, 0.0), _MAX_DT)
        self._t_last = now
        p = self.params
        hdr = header if header is not None else Header.now()
        self._transition_note = ""
        if now - max(self._t_command, self._queued_until) > p.command_timeout:
            # no joystick (for that long since the hold began): the next push may start walking
            if self._hold_since is None:
                self._hold_since = now
            if now - max(self._hold_since, self._queued_until) > p.command_timeout:
                self._release_hold(f"no velocity command for {p.command_timeout} s")
            if self._stream_live:
                self._stream_ended(now)
        self._follow_fall(state, now)
        if self._auto_walk:
            self._auto_walk = False
            if self._mode is MotionMode.STAND:
                self._begin_walking(MotionCommand.WALK)
        mode = self._mode
        if mode is MotionMode.LOCOMOTION:
            return self._walk(state, now, dt, hdr)
        if mode is MotionMode.DAMPING and now < self._hold_lost_until and self._stand_when_back:
            return self._hold_lost_pose(state.joint_position, hdr)
        if mode in (MotionMode.IDLE, MotionMode.DAMPING, MotionMode.FALLEN):
            return JointCommand.damping(self.names, p.idle_kd, header=hdr, source_node=SOURCE_NODE)
        if mode is MotionMode.STAND:
            return self._stand(now, dt, hdr)
        # STAND_UP / SIT_DOWN: interpolation
        if self._start_pending:
            self._t_start = now
            self._start_pending = False
        tau = (now - self._t_start) / self._duration
        s, ds = _min_jerk(tau)
        delta = self._q_goal - self._q_start
        position = np.clip(self._q_start + delta * s, self.lower, self.upper)
        velocity = delta * (ds / self._duration)
        if tau >= 1.0:
            if mode is MotionMode.STAND_UP and self._tucking:
                self._tucking = False  # folded: now the stand-up proper, from the folded pose
                self._q_start = self._q_goal
                self._q_goal = self._stand_goal
                self._duration = p.stand_up_time
                self._start_pending = True
            elif mode is MotionMode.STAND_UP:
                self._mode = MotionMode.STAND
                self._handover = None
                self._q_hold = self._q_goal.copy()
            else:
                self._mode = MotionMode.IDLE
        n = len(self.names)
        zeros = (0.0,) * n
        return JointCommand(
            hdr,
            SOURCE_NODE,
            self.names,
            (p.kp,) * n,
            zeros,
            (p.kd,) * n,
            tuple(position.tolist()),
            tuple(velocity.tolist()),
            zeros,
            (False,) * n,
        )

    def _hold_lost_pose(self, measured: FloatArray, header: Header) -> JointCommand:
        """DAMPING after :meth:`lose_control` with the robot to stand again: the pose measured
        on the first step there, held at ``kp`` / ``kd`` (module docstring: damping a robot the
        bridge may still drive folds it)."""
        if self._q_lost is None:
            if not np.isfinite(measured).all():
                return JointCommand.damping(
                    self.names, self.params.idle_kd, header=header, source_node=SOURCE_NODE
                )
            self._q_lost = np.clip(measured, self.lower, self.upper)
        return self._posture(self._q_lost, header)

    def _posture(self, q: FloatArray, header: Header) -> JointCommand:
        """Joint targets ``q`` (rad) held at the posture gains ``kp`` / ``kd``, no velocity or
        feed-forward torque."""
        p = self.params
        columns = self._posture_columns
        if columns is None or columns[0] != p.kp or columns[1] != p.kd:
            # the constant columns, built once per gain pair (read-only: the command reads them,
            # nothing writes them); three numpy calls a step less while standing
            n = len(self.names)
            kp, kd, zeros = np.full(n, p.kp), np.full(n, p.kd), np.zeros(n)
            for column in (kp, kd, zeros):
                column.flags.writeable = False
            columns = self._posture_columns = (p.kp, p.kd, kp, kd, zeros)
        _, _, kp, kd, zeros = columns
        return JointCommand.from_joint_arrays(
            header, SOURCE_NODE, self.names, kp=kp, kd=kd, t_pos=q, t_vel=zeros, t_trq=zeros
        )

    def _stream_ended(self, now: float) -> None:
        """The velocity commands stopped (none for ``command_timeout`` at ``now``, s): report it
        when the robot was walking on them."""
        self._stream_live = False
        v = self._velocity
        if self._mode is not MotionMode.LOCOMOTION or self.foot_speed(v) <= AUTO_WALK_SPEED:
            return
        lasted = max(self._t_command - self._stream_start, 0.0)
        self._stream_stop_reported = True
        self._stream_report = (
            Level.WARN,
            f"velocity commands stopped after {lasted:.1f} s (robot time) at a commanded "
            f"{math.hypot(v.vx, v.vy):.2f} m/s "
            f"(turn {v.yaw_rate:.2f} rad/s): none for {self.params.command_timeout} s "
            "(command_timeout); stopping on four feet",
        )

    def _walk(self, state: EstimatedState, now: float, dt: float, header: Header) -> JointCommand:
        """LOCOMOTION: one step of the trot (:mod:`.locomotion`); STAND once a requested stop
        has every foot down, holding the walking height."""
        p = self.params
        # a command held for a fresh start counts as none (as a stale one does)
        fresh = now - self._t_command <= p.command_timeout and self._hold_cause is None
        loco = self.locomotion
        out = loco.step(
            state,
            self._velocity if fresh else None,
            stand_height=p.stand_height,
            height_rate=p.height_rate,
            dt=dt if dt > 0.0 else _NOMINAL_DT,
        )
        if loco.stop_requested and loco.stopped:
            self._enter_stand(loco.height)
            self._transition_note = "stopped on four feet"
        elif loco.stopped and not (fresh and self.foot_speed(self._velocity) > AUTO_WALK_SPEED):
            if self._quiet_since is None:
                self._quiet_since = now
            elif now - self._quiet_since >= p.quiet_time:
                self._enter_stand(loco.height)
                self._handover = (now, out.torque.copy())
                fraction = self._velocity.height_fraction if fresh else None
                self._height_fraction = 1.0 if fraction is None else fraction
                self._transition_note = (
                    f"quiet for {p.quiet_time} s: no motion commanded, every foot down; "
                    f"standing at {self._height_target().height:.3f} m"
                )
        else:
            self._quiet_since = None
        # the IK keeps to the limits; its fallback to the measured pose might not (after a slip)
        position = _clip(out.position, self.lower, self.upper)
        return JointCommand.from_joint_arrays(
            header,
            SOURCE_NODE,
            self.names,
            kp=out.kp,
            kd=out.kd,
            t_pos=position,
            t_vel=out.velocity,
            t_trq=out.torque,
        )

    def _enter_stand(self, height: float) -> None:
        """STAND at body ``height`` (m), level: where a walk ends."""
        self._mode = MotionMode.STAND
        self._handover = None
        self._height_fraction = height / self.params.stand_height
        self._height_anchor = height
        self._rates = (0.0, 0.0, 0.0)
        self._target = self._setpoint = BodyPose(height)

    def leave_walking(self) -> bool:
        """Drop LOCOMOTION for STAND at once, without the stop on four feet (another source owns
        the actuators: the walk this node computes is not being applied, and must not resume
        from stale foot targets when control comes back). True if the mode changed."""
        if self._mode is not MotionMode.LOCOMOTION:
            return False
        self._enter_stand(self.locomotion.height)
        self._auto_walk_armed = False  # a joystick still pushing waits for the centre
        return True

    def _stand(self, now: float, dt: float, header: Header) -> JointCommand:
        """STAND: move the setpoint towards the commanded pose and hold its joint targets.

        At rest (no attitude rates, setpoint at the target) nothing changes from one cycle to
        the next, so the steps whose inputs are unchanged are skipped: the attitude update when
        every rate is zero (the height target clamps the attitude into the same limits anyway),
        the height target and the leg IK when their inputs equal the last ones (kept with their
        results) — the same targets, without ≈ 100 µs of IK and pose objects per cycle.
        """
        p = self.params
        lim = self.stand_pose.limits
        rates = self._rates if now - self._t_command <= p.command_timeout else (0.0, 0.0, 0.0)
        target = self._target
        if rates[0] or rates[1] or rates[2]:
            target = replace(
                target,
                roll=min(max(target.roll + rates[0] * dt, -lim.roll_max), lim.roll_max),
                pitch=min(max(target.pitch + rates[1] * dt, -lim.pitch_max), lim.pitch_max),
                yaw=min(max(target.yaw + rates[2] * dt, -lim.yaw_max), lim.yaw_max),
            )
            self._target = target
        key = (target, self._height_fraction, p.stand_height, self.stand_pose)
        if self._height_memo is not None and self._height_memo[0] == key:
            target = self._height_memo[1]
        else:
            target = self._height_target()
            self._height_memo = (key, target)
        self._target = target
        sp = self._setpoint
        if sp != target:
            step_h, step_a = p.height_rate * dt, p.attitude_rate * dt
            self._setpoint = sp = BodyPose(
                _approach(sp.height, target.height, step_h),
                _approach(sp.roll, target.roll, step_a),
                _approach(sp.pitch, target.pitch, step_a),
                _approach(sp.yaw, target.yaw, step_a),
            )
        solved = self._solved
        if solved is not None and solved[0] is self.stand_pose and solved[1] == sp:
            q = solved[2]
        else:
            try:
                q, _ = self.stand_pose.joint_targets(sp)
                self._q_hold = q
                self._solved = (self.stand_pose, sp, q)
            except ValueError:  # unreachable only with widened limits: keep the last targets
                q = self._q_hold
        q = _clip(q, self.lower, self.upper)
        handover = self._handover
        if handover is not None:
            fade = 1.0 - (now - handover[0]) / HANDOVER_S
            if fade > 0.0:
                n = len(self.names)
                return JointCommand(
                    header,
                    SOURCE_NODE,
                    self.names,
                    (p.kp,) * n,
                    (0.0,) * n,
                    (p.kd,) * n,
                    tuple(q.tolist()),
                    (0.0,) * n,
                    tuple((handover[1] * fade).tolist()),
                    (False,) * n,
                )
            self._handover = None
        return self._posture(q, header)
