"""The control node: state estimate, motion modes and the robot's frames on the bus.

Where it sits: the top of :mod:`jointbus.robots.hb50.control`, a :class:`jointbus.runtime.Node` that
wires the pure components — :class:`.state_estimator.StateEstimator`,
:class:`.motion.MotionController`, :class:`.tf_publisher.TfFrames` — to the topics of the seed:

=====================================  ==================  =========  =======================
topic                                  type                QoS        when
=====================================  ==================  =========  =======================
``/hb50/bridge_data`` (in)             BridgeData          MAB_RT     each frame (500 Hz)
``/hb50/bridge_state`` (in)            BridgeState         MAB_RT     each frame (500 Hz)
``/hb50/control_command`` (in)         std_msgs/String     RELIABLE   ``stand_up`` / ``stand``
                                                                      / ``sit_down`` / ``idle``
                                                                      / ``walk`` / ``run``
``/hb50/velocity_command`` (in)        geometry_msgs/Twist MAB_RT     as needed (normalised)
``/hb50/joint_command`` (out)          JointCommand        MAB_RT     each frame
``/hb50/robot_state`` (out)            RobotState          MAB_RT     each frame (*)
``/hb50/robot_state_10hz`` (out)       RobotState          RELIABLE   10 Hz (a copy)
``/hb50/joint_states`` (out)           sensor_msgs/        RELIABLE   10 Hz
                                       JointState
``/tf`` (out)                          tf2_msgs/TFMessage  RELIABLE   10 Hz
``/tf_static`` (out)                   tf2_msgs/TFMessage  LATCHED    on activation
=====================================  ==================  =========  =======================

(*) Built and published only while someone listens to it (a local subscriber or a matching
remote one): nothing in the default layout reads it at the frame rate, and the message costs
≈ 16 µs of the step's CPU a frame there (docs/PERFORMANCE.md, "The control step"). Its 10 Hz
copy carries the same messages — the newest step's, with that step's stamp, once each, silent
when the steps stop, as a :class:`~jointbus.runtime.Mirror` of ``robot_state`` would — built on
the timer thread from the step's snapshot when the step built none.

Timing — event-driven, not a second 500 Hz loop: the estimator and the motion controller run in the
``bridge_data`` callback, on the node's callback thread (not in the bridge's thread: the bridge's
cycle must not pay for the control node; in its own process of a layout that thread is the same-host
links' thread, ``callbacks_on_sibling_links``, so a frame costs one wake-up). One control step per
bridge frame means no second clock beating against the bridge's, the command is computed from the
newest frame with one thread hop of latency, and a MAB_RT (depth 1) subscription drops stale frames
rather than queueing them when the node falls behind. The command and velocity callbacks run on the
same thread, so the components need no locks; the 10 Hz publishers (timer thread) only read the
newest immutable estimate.

Time base: the frames' header stamps. ``dt`` of the estimator is the difference of consecutive
stamps (the bridge's nominal period — ``rate_hz``, 2 ms at the default 500 Hz — when that
difference is not in (0, 0.1] s, e.g. the first frame), and the
motion controller's clock is the frame stamp, so a simulation running faster or slower than real
time gets the same stand-up as real hardware.

Following the bridge: the newest ``bridge_state`` (kept by a realtime callback, one assignment)
says whether the drives apply this node's commands (:func:`drives_available`: not while the
e-stop is latched, the drives are off or the bridge is in safe mode). Each control step passes
that to :meth:`~.motion.MotionController.follow_drives`, so an e-stop takes the node out of
STAND (DAMPING, reported in RobotState and as a WARN) and the reset brings it back through a
stand-up from the measured pose (OK), never straight to the old standing targets.

Problems go to ``/hb50/status``: refused or unknown commands (WARN, with the reason), clamped
velocity commands (WARN), velocity commands that do nothing in the current mode (WARN: IDLE,
STAND_UP, SIT_DOWN, DAMPING, FALLEN), frames the estimator cannot use (ERROR, e.g. an actuator
missing). Mode changes are reported (OK), with their cause. A fall (the body tipped beyond the
fall limit, :mod:`.fall_detector`) is ONE ERROR naming roll, pitch, tilt and the estimated base
height — the mode is FALLEN in RobotState from then on, damping only — and the righting one OK.
Faults that report (each once, rate-limited, with its figures; an OK when it clears): the
velocity publisher dying mid-stride ("velocity commands stopped after N s at a commanded X m/s;
stopping"),
two sources writing ``velocity_command`` at once (:mod:`.velocity_conflict`: sign reversals per
second), this node starved of CPU (:mod:`.step_pace`: share of the bridge's frames skipped, step
time p99, key ``pace``) or stalled (one WARN saying whether its process was stopped or starved of
CPU, from its threads' run-queue waits, which the timer thread reads and reports — never the
control step), a held velocity command after control was lost ("velocity held: send zero
first …"), and control lost: a gap between two frames stepped on longer than the bridge's
``watchdog_time`` (this process stalled: the bridge went safe) takes the node to DAMPING —
holding the pose it finds for 0.3 s before it damps: its view of the bridge is as old as the
stall, and the bridge may already apply its commands again — and
from there through a stand-up from the measured pose, walking only on a fresh command. A stall
whose frames queued meanwhile shows no gap in their stamps: the node's own clock sees it (steps
further apart than the watchdog), the bridge's fallback in its state says control was lost, and
the frames stepped on in the catch-up count no silence of the velocity stream
(:meth:`~.motion.MotionController.catch_up`). A node
that starts while the bridge is in safe mode or runs its fallback (its previous process died)
stands the robot up
from the measured pose if the body is up (≥ :data:`UP_HEIGHT_FRACTION` of ``stand_height``) and
stays IDLE if it is down. While walking, RobotState carries the walking
estimate (:mod:`.walking_estimator`: contacts from the gait confirmed by force, body velocity from
leg odometry fused with the IMU). On deactivation the node goes to IDLE; it sends one damping
command only if the robot is down (IDLE, DAMPING, FALLEN): up, damping would fold it, so it sends
nothing and the bridge's fallback holds a stance, then sits the robot down.

Live parameters (:class:`~jointbus.runtime.parameters.NodeParameters` on ``/hb50/parameters`` and
``/hb50/config_update``): every :class:`~.motion.MotionParams` field the robot file declares
(:data:`CONTROL_PARAMETERS`; on the hb50 ``cmd_vel_lin``, ``cmd_vel_ang``, ``stand_height``,
``kp``, ``kd``), starting at the node's motion parameters, and the walking parameters the robot
file declares (:data:`~.walking.WALK_PARAMETERS`: ``gait_period``, ``duty_factor``,
``step_height``, stance and swing gains, ``max_speed``, ``max_yaw_rate``, ``run_speed``; checked
by :class:`~.walking.WalkParams`, acting from the next step). ``kp`` / ``kd`` are declared once in
the robot file and both nodes use them: the control node owns them (they are its posture gains,
changed live here); the bridge takes their defaults and maxima once, when it is built. A value
out of its declared bounds is refused by the declaration; one the controller cannot run with (a
``stand_height`` outside the standing range of the pose limits, a zero velocity scale) is refused
by :meth:`~.motion.MotionController.tuning`; either way an ERROR status names the parameter, the
value and the range, and nothing changes. *When a change takes effect*: the change callback runs
on the thread that made the change; it prepares and checks the new tuning there (leg IK included)
and stages it, and the callback thread picks it up at the start of the next control step (or
command / velocity callback), so a step never sees half a change and the controller stays
lock-free.
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from typing import Final, NamedTuple

import numpy as np

from jointbus import math as jm
from jointbus.bus import LATCHED, MAB_RT, RELIABLE, Bus
from jointbus.messages.errors import MessageError
from jointbus.messages.geometry_msgs import Quaternion as QuaternionMsg
from jointbus.messages.geometry_msgs import Twist
from jointbus.messages.sensor_msgs import JointState
from jointbus.messages.stamp import Time
from jointbus.messages.std_msgs import Header, String
from jointbus.messages.tf2_msgs import TFMessage
from jointbus.model.parameters import parameter_defaults
from jointbus.model.robot import RobotModel
from jointbus.model.yaml_loader import load_robot
from jointbus.robots.hb50.control.motion import (
    SOURCE_NODE,
    MotionController,
    MotionError,
    MotionParams,
    MotionTuning,
)
from jointbus.robots.hb50.control.step_pace import LOOK_S, StepPace
from jointbus.robots.hb50.control.tf_publisher import DEFAULT_WORLD_FRAME, TfFrames
from jointbus.robots.hb50.control.velocity_conflict import VelocityConflict
from jointbus.robots.hb50.legged.state_estimator import (
    EstimatedState,
    EstimatorConfig,
    StateEstimator,
)
from jointbus.robots.hb50.legged.walking import WALK_PARAMETERS
from jointbus.robots.hb50.messages import (
    BridgeData,
    BridgeState,
    JointCommand,
    Level,
    MotionGait,
    MotionMode,
    MotionType,
    RobotState,
)
from jointbus.robots.hb50.messages.bridge_status import BridgeMode, BridgeStatus
from jointbus.runtime import DEFAULT_NAMESPACE, Node, TimerThread
from jointbus.runtime.cpu_wait import thread_waits
from jointbus.runtime.parameters import NodeParameters, ParameterChange, select_specs
from jointbus.runtime.realtime import RealtimeConfig

__all__ = [
    "CONTROL_NODE_NAME",
    "CONTROL_PARAMETERS",
    "ControlNode",
    "command_owner",
    "drives_available",
    "robot_state_message",
]

#: The node's name (also the ``source_node`` of its joint commands).
CONTROL_NODE_NAME: Final = SOURCE_NODE
#: Rate of ``joint_states``, ``/tf`` and the ``robot_state_10hz`` mirror (Hz), as the seed says.
SLOW_RATE_HZ: Final = 10.0
#: The bridge's nominal period at its default rate (s), used for ``dt`` when frame stamps do not
#: give one (a node built with another ``rate_hz`` uses that period instead).
NOMINAL_PERIOD_S: Final = 0.002
_MAX_DT_S: Final = 0.1
#: The bridge's watchdog time (s) when the robot file declares none: a gap this long between two
#: frames this node stepped on means its commands were not applied (the bridge went safe).
DEFAULT_WATCHDOG_S: Final = 0.25
#: Modes in which this node holds the robot up: deactivated in one of them, it sends no damping
#: command (see :meth:`ControlNode.on_deactivate`).
UP_MODES: Final = frozenset(
    {MotionMode.STAND_UP, MotionMode.STAND, MotionMode.SIT_DOWN, MotionMode.LOCOMOTION}
)
#: A node started while the bridge is in safe mode stands the robot up again only if the body is
#: at least this share of ``stand_height`` high (held up, not lying: it does not lift a robot
#: someone left down).
UP_HEIGHT_FRACTION: Final = 0.6
_WALKING_OR_STANDING: Final = (MotionMode.LOCOMOTION, MotionMode.STAND)
#: A stall measured by the clock is the one "control lost" names while the frames queued during
#: it are stepped, within this (ns) of its end.
_STALL_DRAIN_NS: Final = 1_000_000_000
#: The live parameters the control node owns: every :class:`MotionParams` field (those the robot
#: file declares become live; the others keep the node's value).
CONTROL_PARAMETERS: Final = (
    "cmd_vel_lin",
    "cmd_vel_ang",
    "stand_height",
    "kp",
    "kd",
    "stand_up_time",
    "sit_down_time",
    "sit_height",
    "idle_kd",
    "height_rate",
    "attitude_rate",
    "command_timeout",
    "quiet_time",
    "stall_hold_time",
)


def drives_available(state: BridgeState | None) -> tuple[bool, str]:
    """Whether the bridge that published ``state`` applies commands, and if not why.

    ``None`` (no state received yet) counts as available: the bridge switches its drives on
    holding the measured pose when it starts, and a controller without a bridge moves nothing.
    The bridge's mode and e-stop are read with :class:`BridgeStatus` (its ``status`` strings).
    """
    if state is None:
        return True, ""
    return _drives_of(state, BridgeStatus.of(state))


def _drives_of(state: BridgeState, facts: BridgeStatus) -> tuple[bool, str]:
    """:func:`drives_available` of ``state`` whose ``facts`` are read already."""
    if facts.estop_reason is not None:
        return False, f"e-stop latched ({facts.estop_reason})"
    mode = facts.mode.value if facts.mode is not None else ""
    if not state.drives_enabled:
        return False, f"drives off (bridge mode: {mode or 'unknown'})"
    if facts.mode in (BridgeMode.ESTOP, BridgeMode.OFF, BridgeMode.SAFE):
        return False, f"bridge mode: {mode}"
    return True, ""


def command_owner(state: BridgeState | None) -> str:
    """The source whose joint commands the bridge applies (read with :class:`BridgeStatus`;
    empty when unknown)."""
    return BridgeStatus.of(state).owner if state is not None else ""


def robot_state_message(
    state: EstimatedState,
    mode: MotionMode,
    controller: MotionController,
    header: Header,
) -> RobotState:
    """``RobotState`` of an estimate and the controller's mode, type and gait.

    Leg names are the model's leg prefixes (``fr``, ``fl``, ``rl``, ``rr``); the pose is the body
    in the odometry frame (``header.frame_id``), ``body_vel`` in the body frame, ``world_vel`` in
    the odometry frame. An unknown height is sent as NaN.
    """
    return _state_message(state, mode, controller.motion_type, controller.motion_gait, header)


def _state_message(
    state: EstimatedState,
    mode: MotionMode,
    motion_type: MotionType,
    motion_gait: MotionGait,
    header: Header,
) -> RobotState:
    """:func:`robot_state_message` with the controller's type and gait as read at the step (the
    10 Hz copy builds it on the timer thread, from the step's snapshot)."""
    # one pass (RobotState.from_estimate_arrays): this runs every frame someone listens to
    return RobotState.from_estimate_arrays(
        header,
        state.legs,
        contact=state.contact,
        foot_position=state.foot_position,
        foot_velocity=state.foot_velocity,
        foot_force=state.foot_force,
        position=state.position,
        orientation=QuaternionMsg.from_math(state.orientation),
        body_linear_velocity=state.body_linear_velocity,
        body_angular_velocity=state.body_angular_velocity,
        world_linear_velocity=state.world_linear_velocity,
        world_angular_velocity=state.world_angular_velocity,
        motion_mode=mode,
        motion_type=motion_type,
        motion_gait=motion_gait,
    )


class _Snapshot(NamedTuple):
    """The newest step's estimate and what ``RobotState`` needs besides it, for the timer
    thread (one tuple, assigned once per step: the timer never pairs one step's estimate with
    another's mode). ``message``: the step's ``RobotState`` when it built one (someone listens to
    ``robot_state``), else None (the 10 Hz copy builds it). ``frames``: frames used so far."""

    state: EstimatedState
    stamp: Time
    mode: MotionMode
    motion_type: MotionType
    motion_gait: MotionGait
    message: RobotState | None
    frames: int


#: How long (s, robot time) after the actuators were handed back to this node the bridge's
#: re-entry ramp may take to show in ``bridge_state``: one comes with the next frames, or none.
_HAND_BACK_RAMP_S = 0.5


class ControlNode(Node):
    """The control node on ``bus`` (see the module docstring); call :meth:`start` to run it.

    Args:
        bus: the process's bus.
        model: the robot (default: the bundled ``hb50``).
        params: motion parameters (default: from the robot file's parameters).
        estimator: estimator tuning.
        name, namespace: node name and topic namespace.
        world_frame: name of the odometry frame in ``/tf`` and RobotState.
        timers: an injected timer thread (tests), see :class:`~jointbus.runtime.Node`.
    """

    def __init__(
        self,
        bus: Bus,
        model: RobotModel | None = None,
        *,
        params: MotionParams | None = None,
        estimator: EstimatorConfig | None = None,
        name: str = CONTROL_NODE_NAME,
        namespace: str = DEFAULT_NAMESPACE,
        world_frame: str = DEFAULT_WORLD_FRAME,
        timers: TimerThread | None = None,
        rate_hz: float = 1.0 / NOMINAL_PERIOD_S,
        callback_realtime: RealtimeConfig | None = None,
        callbacks_on_sibling_links: bool = False,
    ) -> None:
        if not (math.isfinite(rate_hz) and rate_hz > 0.0):
            raise ValueError(f"ControlNode rate_hz = {rate_hz!r}; expected a finite rate > 0 Hz")
        self.nominal_period_s = 1.0 / rate_hz
        """The bridge's period (s): the estimator's ``dt`` when frame stamps give none."""
        robot = model if model is not None else load_robot("hb50")
        # components first: a model they cannot handle fails before any thread starts
        self.robot = robot
        self.estimator = StateEstimator(robot, estimator)
        self.motion = MotionController(robot, params)
        self.frames = TfFrames(robot, world_frame=world_frame)
        self.world_frame = world_frame
        super().__init__(
            name,
            bus,
            namespace=namespace,
            timers=timers,
            callback_realtime=callback_realtime,
            callbacks_on_sibling_links=callbacks_on_sibling_links,
        )
        # the newest step's snapshot for the timer thread: one reference, assigned once per step
        self._latest: _Snapshot | None = None
        self._state_10hz_sent = 0  # ``frames`` of the snapshot last sent on robot_state_10hz
        self._last_stamp: float | None = None
        self._last_step_ns = 0  # monotonic ns of the last frame stepped on
        self._now = 0.0
        self.frames_used = 0
        self.frames_rejected = 0
        self._staged: MotionTuning | None = None
        self._staged_lock = threading.Lock()
        self._bridge_state: BridgeState | None = None  # newest, kept by a realtime callback
        self._walked: EstimatedState | None = None  # the walking estimator's, last step
        self._stalled = (0.0, 0)  # the last stall by the clock (s), and when it ended (ns)
        self._held_by_tilt: float | None = None  # rad: reported once while it holds a stand-up
        self._seen_bridge = False
        self._owner_seen = ""
        self._handed_back = False
        self._handed_back_at = 0.0
        self._handed_back_ramped = False
        watchdog = parameter_defaults(robot.parameters).get("watchdog_time", DEFAULT_WATCHDOG_S)
        self.stall_s = float(watchdog)
        """A gap (s) between two frames stepped on beyond which this node lost control."""
        self.velocity_conflict = VelocityConflict()
        """Two sources writing ``velocity_command`` (:mod:`.velocity_conflict`)."""
        self.pace = StepPace(self.nominal_period_s, self.stall_s, thread_waits)
        """The node's own pace (:mod:`.step_pace`): stepped in the control step, looked at
        (the threads' run-queue waits read, a stall's cause told and reported) on the timer
        thread."""
        try:
            specs = select_specs(
                robot.parameters, CONTROL_PARAMETERS + WALK_PARAMETERS, missing_ok=True
            )
            start = self.motion.params
            walk = self.motion.locomotion.params
            self.parameters = NodeParameters(
                self,
                specs,
                {
                    spec.name: getattr(walk if spec.name in WALK_PARAMETERS else start, spec.name)
                    for spec in specs
                },
            )
            """The node's live parameters (see the module docstring)."""
            self.parameters.on_change(self._stage_parameters)
            self.joint_command_pub = self.create_publisher("joint_command", JointCommand, MAB_RT)
            self.robot_state_pub = self.create_publisher("robot_state", RobotState, MAB_RT)
            self.robot_state_10hz_pub = self.create_publisher(
                "robot_state_10hz", RobotState, RELIABLE
            )
            self.joint_states_pub = self.create_publisher("joint_states", JointState, RELIABLE)
            self.tf_pub = self.create_publisher("/tf", TFMessage, RELIABLE)
            self.tf_static_pub = self.create_publisher("/tf_static", TFMessage, LATCHED)
            self._frames = self.create_subscription(
                "bridge_data", BridgeData, self._on_bridge_data, MAB_RT
            )
            self.create_subscription(
                "bridge_state", BridgeState, self._keep_bridge_state, MAB_RT, realtime=True
            )
            self.create_subscription("control_command", String, self._on_control_command, RELIABLE)
            self.create_subscription("velocity_command", Twist, self._on_velocity_command, MAB_RT)
            self.create_timer(1.0 / SLOW_RATE_HZ, self.publish_slow, name="control-10hz")
            self.create_timer(
                1.0 / SLOW_RATE_HZ, self.publish_state_10hz, name="control-robot-state-10hz"
            )
            self.create_timer(LOOK_S, self._look_at_pace, name="control-pace")
        except BaseException:
            self.shutdown()
            raise
        if self.motion.reference_clamp:
            self.report(
                Level.WARN,
                f"stand_height outside the safe range: {self.motion.reference_clamp.describe()}",
            )

    # ---- live parameters ---------------------------------------------------------------------
    def _stage_parameters(self, change: ParameterChange) -> None:
        """Prepare the motion tuning of the whole new parameter set and stage it, or raise to
        refuse the change (any thread; the store, locked, already holds the new value)."""
        values = {k: float(v) for k, v in self.parameters.store.values().items()}
        walk_values = {k: v for k, v in values.items() if k in WALK_PARAMETERS}
        motion_values = {k: v for k, v in values.items() if k not in WALK_PARAMETERS}
        params = dataclasses.replace(self.motion.params, **motion_values)
        walk = dataclasses.replace(self.motion.locomotion.params, **walk_values)
        tuning = self.motion.tuning(params, walk)
        with self._staged_lock:
            self._staged = tuning

    def _take_staged(self) -> None:
        """Put a staged tuning in force (callback thread, before the controller is used)."""
        if self._staged is None:
            return
        with self._staged_lock:
            tuning, self._staged = self._staged, None
        if tuning is not None:
            self.motion.retune(tuning)

    # ---- lifecycle ---------------------------------------------------------------------------
    def on_activate(self) -> None:
        """Publish the static frames (latched, so late subscribers get them too)."""
        self.tf_static_pub.publish(self.frames.static())

    def on_deactivate(self) -> None:
        """Leave the robot safe: IDLE, and one damping command only if the robot is down.

        Why not always damping: a standing or walking hb50 given ``kp = 0`` folds in 0.25 s
        (measured: a controller stopped with SIGTERM while standing took the body from 0.327 m
        to 0.175 m, tilted 0.24 rad, before the bridge noticed). Up, the node sends nothing
        more; the bridge's watchdog then runs its fallback (a held stance, then a slow sit,
        drives on), which is how a stopped controller leaves a standing robot down safely."""
        before = self.motion.mode
        self.motion.handle_command("idle")
        if before in UP_MODES:
            self.report(
                Level.WARN,
                f"deactivated in mode {before.name} with the robot up: no damping command (it "
                "would drop the robot); a bridge that runs on holds a stance with its fallback, "
                "then sits it down (a bridge stopped with this node leaves the drives damped)",
            )
            return
        self.joint_command_pub.publish(
            JointCommand.damping(
                self.robot.actuator_order,
                self.motion.params.idle_kd,
                header=Header.now(),
                source_node=SOURCE_NODE,
            )
        )

    # ---- commands ----------------------------------------------------------------------------
    def command(self, text: str) -> MotionMode:
        """Apply a motion command now (``stand_up``, ``stand``, ``sit_down``, ``idle``).

        Raises :class:`~jointbus.robots.hb50.control.motion.MotionError` (unknown or refused
        command);
        nothing changes then. The bus path (``/hb50/control_command``) reports those on the
        status topic instead. Call it from the node's callback thread or while no frames flow.
        """
        self._take_staged()
        before = self.motion.mode
        mode = self.motion.handle_command(text)
        if mode is not before:
            self.report(Level.OK, f"motion mode {before.name} -> {mode.name} ({text!r})")
        return mode

    def _on_control_command(self, msg: String) -> None:
        try:
            self.command(msg.data)
        except MotionError as exc:
            self.report(Level.WARN, str(exc))

    def _on_velocity_command(self, msg: Twist) -> None:
        self._take_staged()
        try:
            report = self.motion.set_velocity_command(msg, self._now)
        except MessageError as exc:
            self.report(Level.WARN, f"velocity_command refused: {exc}", key="velocity_command")
            return
        fight = self.velocity_conflict.update(
            time.monotonic(), msg.linear.x, msg.linear.y, msg.angular.z
        )
        if fight is not None:
            level = Level.WARN if fight.conflict else Level.OK
            self.report(level, fight.text, key="velocity_command sources")
        self._report_motion_events()
        if report:
            self.report(
                Level.WARN,
                f"velocity_command clamped: {report.describe()}",
                key="velocity_command clamped",
            )
        height = self.motion.take_height_report()
        if height is not None:
            self.report(Level.WARN, height, key="velocity_command height")
        walking = self.motion.walking_height_clamped()
        if walking is not None:
            self.report(
                Level.WARN,
                f"velocity_command clamped: {walking}",
                key="velocity_command walking height",
            )
        ignored = self.motion.velocity_ignored()
        if ignored is not None:
            self.report(Level.WARN, f"velocity_command {ignored}", key="velocity_command ignored")

    def _report_motion_events(self) -> None:
        """The velocity stream's end or return and the fresh-start hold, once each."""
        for event, key in (
            (self.motion.take_stream_report(), "velocity_command stream"),
            (self.motion.take_hold_report(), "velocity held"),
        ):
            if event is not None:
                self.report(event[0], event[1], key=key)

    # ---- the control step --------------------------------------------------------------------
    def _on_bridge_data(self, frame: BridgeData) -> None:
        start_ns = time.monotonic_ns()
        stamp = frame.header.stamp
        now = stamp.to_seconds()
        last = self._last_stamp
        dt = now - last if last is not None else self.nominal_period_s
        if not 0.0 < dt <= _MAX_DT_S:
            dt = self.nominal_period_s
        try:
            state = self.estimator.update(frame, dt)
        except MessageError as exc:
            self.frames_rejected += 1
            self.report(Level.ERROR, f"bridge_data frame not usable: {exc}", key="bridge_data")
            return
        self._last_stamp = now
        self._now = now
        gap = (start_ns - self._last_step_ns) / 1e9 if last is not None else 0.0
        if last is not None and gap > self.stall_s:
            # this node stalled while the frames queued: they span (last, last + gap]
            self.motion.catch_up(last + gap)
            self._stalled = (gap, start_ns)
        self._last_step_ns = start_ns
        self._take_staged()
        # the newest bridge_state, read once: every check of this step sees the same one (the
        # bus's thread replaces it at any time), its status strings parsed once
        bridge = self._bridge_state
        facts = BridgeStatus.of(bridge) if bridge is not None else None
        self._note_owner(facts)
        if last is not None and now - last > self.stall_s:
            # by the clock, as the step after the stall measured it (the frames queued during a
            # stall are stepped first, back to back, and this gap in their stamps is shorter:
            # a trial's 0.52 s SIGSTOP read "0.41 s"); by the stamps in lock-step
            stalled_s, when_ns = self._stalled
            recent = start_ns - when_ns < _STALL_DRAIN_NS
            without = max(stalled_s if recent else 0.0, now - last)
            self._lost_control(f"no control step for {without:.2f} s", now, stalled=True)
        elif self.motion.mode in _WALKING_OR_STANDING and (why := self._taken_over(facts)):
            self._lost_control(why, now)
        self._follow_bridge(state, bridge, facts)
        before = self.motion.mode
        # Stamped with the frame it answers (the robot's time of the measurement it was computed
        # from), as a controller's output is in ROS: the bridge reads the sensor-to-command age
        # off it, and a recording pairs each command with its frame.
        command = self.motion.step(state, now, header=Header(stamp, ""))
        after = self.motion.mode
        fall = self.motion.take_fall_report()
        if fall is not None:
            self.report(Level.ERROR if after is MotionMode.FALLEN else Level.OK, fall)
        elif after is not before:
            why = self.motion.transition_note or (
                "velocity command" if after is MotionMode.LOCOMOTION else "move finished"
            )
            self.report(Level.OK, f"motion mode {before.name} -> {after.name} ({why})")
        self._report_motion_events()
        self.joint_command_pub.publish(command)
        state = self._continuous_odometry(self.motion.estimate or state)
        motion = self.motion
        motion_type, motion_gait = motion.motion_type, motion.motion_gait
        message: RobotState | None = None
        if self.robot_state_pub.observed:
            # built only for a listener: nobody in the default layout reads robot_state at the
            # frame rate, and building it costs 16 µs a frame there (docs/PERFORMANCE.md)
            message = robot_state_message(state, after, motion, Header(stamp, self.world_frame))
            self.robot_state_pub.publish(message)
        self.frames_used = used = self.frames_used + 1
        self._latest = _Snapshot(state, stamp, after, motion_type, motion_gait, message, used)
        frames = self._frames.subscriber  # its counters: frames this node never stepped on
        pace = self.pace.step(
            start_ns, time.monotonic_ns(), frames.dropped, frames.lost, stamp_s=now
        )
        if pace is not None:
            level = Level.WARN if pace.behind or pace.stall else Level.OK
            self.report(level, pace.text, key="pace")

    def _continuous_odometry(self, state: EstimatedState) -> EstimatedState:
        """``state``, this step's estimate (the walking estimator's while walking), with one
        odometry across the modes: when the walk ends, the state estimator's odometry is moved
        to where the walking estimator's stood, so the pose in ``robot_state`` and ``/tf`` goes
        on from there (it jumped back to the state estimator's own, 0.39× the distance walked)."""
        if state is self.motion.locomotion.estimate:
            self._walked = state  # a new estimate each step: kept, not copied (500 Hz)
            return state
        walked = self._walked
        if walked is None:
            return state
        self._walked = None
        x, y = float(walked.position[0]), float(walked.position[1])
        self.estimator.move_odometry((x, y))
        return dataclasses.replace(state, position=np.array((x, y, float(state.position[2]))))

    def _look_at_pace(self) -> None:
        """The timer thread's part of the pace (:meth:`.step_pace.StepPace.look`): the readings
        of the threads' run-queue waits (10-25 ms each with ~100 threads, which the control step
        must not pay) and the report of a stall once its cause is known — at most
        :data:`.step_pace.LOOK_S` after its catch-up ended."""
        for pace in self.pace.look(time.monotonic_ns()):
            self.report(Level.WARN, pace.text, key="pace")

    def _taken_over(self, facts: BridgeStatus | None) -> str:
        """Why the bridge is not applying this node's walking or standing commands although
        this node may not have seen ``mode: safe`` (a host stall: the frames and states of the
        stall arrive afterwards, or the bridge left safe mode on its first stale command): it
        runs its fallback (whose quiet ``hold`` counts as drives available), or it is ramping
        back from safe mode. Empty: neither. ``facts``: the newest ``bridge_state``'s (None: none
        received yet)."""
        if facts is None:
            return ""
        if facts.fallback is not None:
            return f"the bridge runs its fallback ({facts.fallback})"
        if facts.reentry_ramping and facts.owner == self.name and not self._handed_back:
            return "the bridge is re-entering from safe mode"
        return ""

    def _note_owner(self, facts: BridgeStatus | None) -> None:
        """Whether the actuators were just handed back to this node by another source (a user's
        controller that stopped): the bridge then ramps from that source's pose to this node's
        targets — its re-entry, but no stall of this node's. Taken for one (trial 2026-12-03:
        "control lost: the bridge is re-entering from safe mode" after every hand-back, and a
        needless DAMPING that let the body sag 2 cm before standing up again). ``facts``: the
        newest ``bridge_state``'s (None: none received yet)."""
        if facts is None:
            return
        owner = facts.owner or ""
        if owner != self._owner_seen:
            if owner == self.name and self._owner_seen not in ("", self.name):
                self._handed_back, self._handed_back_ramped = True, False
                self._handed_back_at = self._now
            self._owner_seen = owner
        if not self._handed_back:
            return
        if facts.reentry_ramping:
            self._handed_back_ramped = True
        elif self._handed_back_ramped or self._now - self._handed_back_at > _HAND_BACK_RAMP_S:
            self._handed_back = False  # that ramp is over, or none came: a later one is a stall

    def _lost_control(self, what: str, now: float, *, stalled: bool = False) -> None:
        """The bridge stopped applying this node's commands for a while (``what``: a gap between
        two frames stepped on longer than the bridge's watchdog — this process stalled: SIGSTOP,
        a host freeze — or the bridge re-entering from safe mode while this node walks or
        stands): the robot may have sagged. Walking on from the old command would start from
        stale foot targets and a stale command: stand up again from the measured pose, and walk
        on a fresh command only."""
        before = self.motion.mode
        after = self.motion.lose_control(
            f"a stall of the control node ({what}; watchdog {self.stall_s:g} s)",
            now,
            stalled=stalled,
        )
        then = (
            "it stands up from the measured pose once the bridge applies its commands"
            if after is MotionMode.DAMPING
            else f"it stays in {before.name}"
        )
        self.report(
            Level.WARN,
            f"control lost: {what} (the bridge's watchdog is {self.stall_s:g} s); motion mode "
            f"{before.name} -> {self.motion.mode.name}: {then}; "
            "walking waits for a fresh velocity command (zero first)",
            key="control lost",
        )

    def _keep_bridge_state(self, msg: BridgeState) -> None:
        self._bridge_state = msg  # one assignment: this runs in the publisher's thread

    def _follow_bridge(
        self, state: EstimatedState, bridge: BridgeState | None, facts: BridgeStatus | None
    ) -> None:
        """Follow the bridge's newest state ``bridge`` (None: none received yet), whose status
        ``facts`` are read already: its owner, its drives (what :func:`command_owner` and
        :func:`drives_available` say of it)."""
        if not self._seen_bridge and bridge is not None:
            self._seen_bridge = True
            self._found_bridge(bridge, state)
        owner = facts.owner if facts is not None else ""
        if owner and owner != self.name and self.motion.leave_walking():
            self.report(
                Level.WARN,
                f"motion mode LOCOMOTION -> STAND: {owner!r} owns the actuators (its joint "
                "commands win the arbitration); walking stopped",
            )
        available, reason = (
            _drives_of(bridge, facts) if bridge is not None and facts is not None else (True, "")
        )
        if available == self.motion.drives_available and self.motion.mode is not MotionMode.DAMPING:
            return
        before = self.motion.mode
        after = self.motion.follow_drives(available, reason, state.joint_position)
        tilt = self.motion.held_by_tilt
        if tilt is not None and self._held_by_tilt is None:
            limit = self.motion.fall.config.upright_limit
            self.report(
                Level.WARN,
                f"motion mode DAMPING: the drives are back but the body is tipped {tilt:.2f} rad "
                f"(upright is below {limit:g} rad); the robot stands up from its measured pose "
                "once upright, FALLEN if it goes over",
            )
        upright_again = self._held_by_tilt is not None and tilt is None
        self._held_by_tilt = tilt
        if after is None or after is before:
            return
        if after is MotionMode.DAMPING:
            then = "stands up again" if self.motion.stands_when_back else "stays down"
            self.report(
                Level.WARN,
                f"motion mode {before.name} -> DAMPING: {reason}; the robot {then} from its "
                "measured pose when the drives are back",
            )
        else:
            level = self.motion.fall.tilt
            upright = (
                f" and the body is upright again ({level.tilt:.2f} rad)"
                if upright_again and level is not None
                else ""
            )
            self.report(
                Level.OK, f"motion mode {before.name} -> {after.name}: the drives are back{upright}"
            )

    def _found_bridge(self, bridge: BridgeState, state: EstimatedState) -> None:
        """The first ``bridge_state`` this node sees: a bridge in safe mode or running its
        fallback (``fallback:`` in its state: stance, hold, sit) means a controller (this node's
        previous process, killed or hung) lost the robot. The robot is re-entered
        from a quiet stance: held up (the fallback's stance) it stands up from the measured pose;
        down it stays IDLE until ``stand_up``. Either way walking needs a fresh command."""
        facts = BridgeStatus.of(bridge)
        if facts.mode is not BridgeMode.SAFE and facts.fallback is None:
            return
        height = state.height
        up_height = UP_HEIGHT_FRACTION * self.motion.params.stand_height
        up = math.isfinite(height) and height >= up_height
        owner = facts.owner or "unknown"
        before = self.motion.mode
        self.motion.lose_control(
            f"the bridge's safe mode (previous owner {owner!r} lost)", self._now, stand=up
        )
        if self.motion.mode is MotionMode.DAMPING:
            then = f"the body is {height:.3f} m high: standing up from the measured pose" + (
                "" if before is MotionMode.IDLE else f" (a {before.name} was under way)"
            )
        else:
            then = (
                f"the body is down ({height:.3f} m < {up_height:.3f} m): staying "
                f"{self.motion.mode.name}, send stand_up"
            )
        self.report(
            Level.WARN,
            f"started while the bridge is in safe mode or its fallback (previous owner {owner!r}, "
            f"fallback {facts.fallback or 'none'}): {then}; "
            "walking waits for a fresh velocity command (zero first)",
            key="control lost",
        )

    def publish_state_10hz(self) -> bool:
        """Publish the newest step's ``RobotState`` on ``robot_state_10hz`` (the 10 Hz timer
        calls this), once per step: False when no step came since the last one sent.

        What a :class:`~jointbus.runtime.Mirror` of ``robot_state`` did (a decimated copy, the
        step's stamps; silent when the steps stop), without the 500 Hz message it needed: the
        message is built here, at 10 Hz, when no step built it for a listener of
        ``robot_state``."""
        latest = self._latest
        if latest is None or latest.frames == self._state_10hz_sent:
            return False
        self._state_10hz_sent = latest.frames
        message = latest.message
        if message is None:
            message = _state_message(
                latest.state,
                latest.mode,
                latest.motion_type,
                latest.motion_gait,
                Header(latest.stamp, self.world_frame),
            )
        self.robot_state_10hz_pub.publish(message)
        return True

    def publish_slow(self) -> bool:
        """Publish ``joint_states`` and ``/tf`` from the newest estimate (the 10 Hz timer calls
        this); False when no frame arrived yet."""
        latest = self._latest
        if latest is None:
            return False
        state, stamp = latest.state, latest.stamp
        self.joint_states_pub.publish(
            JointState(
                Header(stamp, ""),
                self.robot.actuator_order,
                tuple(state.joint_position.tolist()),
                tuple(state.joint_velocity.tolist()),
                tuple(state.joint_effort.tolist()),
            )
        )
        pose: jm.Transform | None = None
        if all(math.isfinite(v) for v in state.position.tolist()):
            pose = jm.Transform(jm.Vec3(*state.position.tolist()), state.orientation)
        header = Header(stamp, self.world_frame)
        self.tf_pub.publish(self.frames.dynamic(state.joint_position.tolist(), pose, header))
        return True
