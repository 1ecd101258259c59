"""The actuator-array device API (Player ``actarray``): one base class that every driver extends.

Where it sits: :mod:`jointbus.drivers`, above the message layer (whose ``actarray`` types are what
:meth:`ActuatorArray.read` and :meth:`ActuatorArray.geometry` return), :mod:`.limits`,
:mod:`.calibration` and :mod:`.capabilities`; below the bridge node. Drivers (``sim://``,
``can://``) subclass :class:`ActuatorArray`.

**Public methods here, small hooks in the drivers** (python-can's lesson). Every public method
does all the checking — the driver is open, the capability is supported, the joint exists, the
values have the right count, are finite and within limits (or are saturated, by policy), power is
on for motion — and converts joint space to actuator space with the calibration, and only *then*
calls one private hook with numpy arrays in actuator space. A hook therefore never sees a bad
value, and a rejected call has changed nothing (nothing is applied in part). :meth:`read` converts
the hook's actuator-space reading back to joint space. Units are SI throughout: rad or m, rad/s
or m/s, rad/s² or m/s², A, N·m or N, °C.

Hooks a driver implements (``indices`` is an ``intp`` array of actuator indices, values are
``float64`` arrays of the same length, already in actuator space):

==============================================  ===============================================
hook                                            called by
==============================================  ===============================================
``_capabilities() -> frozenset[Capability]``    :meth:`capabilities`, and before every call
``_read_raw() -> RawReading``                   :meth:`read`, :meth:`read_joints`
``_motor_power() -> bool``                      motion commands (``POWERED_OFF`` when False)
``_measured_state() -> (position, velocity)``   soft limits (default: from ``_read_raw``)
``_request_power(on)``                          :meth:`power`
``_request_joint_power(indices, on)``           :meth:`joint_power`
``_joints_powered() -> BoolArray``              motion commands, per joint (default: all on)
``_request_brakes(on)``                         :meth:`brakes`
``_request_speed(indices, speeds)``             :meth:`set_speed` (speeds > 0)
``_request_accel(indices, accels)``             :meth:`set_accel` (accels > 0)
``_write_positions(indices, positions)``        :meth:`position`, :meth:`positions`
``_write_speeds(indices, speeds)``              :meth:`speed`, :meth:`speeds`
``_write_home(indices, home_positions)``        :meth:`home` (default: ``_write_positions``)
``_write_currents(indices, currents)``          :meth:`current`, :meth:`currents`
``_write_impedance(targets)``                   :meth:`impedance` (all N actuators)
``_read_imu() -> ImuReading | None``            :meth:`imu` (default: ``None``, no IMU)
``_actuator_command_ranges()``                  :meth:`command_ranges` (default: ``None``)
``_close()``                                    :meth:`close`, once
==============================================  ===============================================

A hook may refuse with :class:`~jointbus.drivers.errors.RequestRejected` (e.g. ``TIMED_OUT`` when
motors do not answer) or fail with :class:`~jointbus.drivers.errors.DriverIOError`; it must then
leave the device as it was, as far as the hardware allows.

**Errors.** Requests (power, brakes, set_speed, set_accel) are ACKed by returning ``None`` and
NACKed with :class:`RequestRejected` carrying a :class:`RejectReason` (unsupported, out of range,
...). Invalid *commands* raise the message layer's
:class:`~jointbus.messages.errors.ValidationError` family (:class:`LengthMismatchError`,
:class:`NonFiniteError`, :class:`LimitError`), naming joint (name and index), field, value and
expectation — the same errors the bridge raises for the same mistakes. An unknown joint is one
error whichever call names it: :class:`~jointbus.drivers.errors.UnknownArrayJointError`, both an
:class:`UnknownJointError` and a ``RequestRejected(UNKNOWN_JOINT)`` ("no joint with index 99;
the array has 6 joints (0–5): ..."). An unsupported command, or a motion command while motor
power is off or the joint's brake is engaged, is refused with :class:`RequestRejected`
(``UNSUPPORTED`` / ``POWERED_OFF`` / ``BRAKED``).

**Motion while powered off or braked is refused, not queued**: a target stored while the power
is off, or while a brake holds the joint, would make it jump when power returns or the brake
opens, and a command silently dropped is worse. Power on first (:meth:`power`), release the
brakes first (:meth:`brakes`); on power-on, and when brakes engage or release, a driver cancels
the braked joints' moves and holds them where they are measured, so nothing resumes as a jump.

**Moves and their end.** A commanded move (``position``, ``speed``, ``home``) is ``MOVING``
from the call on — not only once the joint has sped up — until its profile has ended and the
joint is still; :meth:`wait_until_still` waits for that, with a timeout
(:class:`~jointbus.drivers.errors.MotionTimeoutError` names the joints still moving).
**Power state**: every reading carries ``motor_power`` (Player's ``motor_state``), and an
actuator whose drive stage is off is flagged ``UNPOWERED``, never ``IDLE``. :meth:`joint_power`
switches one joint's drive stage off (no torque: the joint is limp, the others keep running) or
on again (holding where it is measured) — what a thermal shutdown of one motor needs, where
switching the whole array off would drop every other joint; the array's ``motor_power`` stays on,
motion commands naming that joint are refused (``POWERED_OFF``, naming it), and ``power(True)``
switches every drive on again.

**Limits.** Hard limits (position, velocity, effort, current) follow the config's
:class:`~jointbus.drivers.limits.LimitPolicy`: ``REJECT`` raises :class:`LimitError`, ``SATURATE``
clamps. Speed commands are also bounded by the *configured* speed (Player's speed request: a
joint whose velocity limit is 3.0 rad/s but whose configured speed is 2.0 refuses a speed of 2.5
"within [-2, 2]"; ``set_speed`` raises it, up to the velocity limit), under the same policy. A
position target outside the *soft* range is a target like one outside the hard range: refused
under ``REJECT`` (field ``"position (soft limit)"``), clamped under ``SATURATE``. The rest of
ros2_control's soft-limit law always clamps, because it is a smooth brake near the end of the
range, not a validity check: a velocity into the ``k_position`` bounds and a torque into the
``k_velocity`` bounds at the measured state. Every clamp is reported: returned by the command,
kept in :attr:`ActuatorArray.last_saturations` and passed to ``on_saturation``.

**What the driver can carry** (:meth:`ActuatorArray.command_ranges`,
:mod:`jointbus.drivers.command_ranges`). A driver may carry less than the joint limits allow: a
``can://`` motor's frame encodes ``kp`` only over 0…500 (md80). A driver declares these ranges in
actuator space (``_actuator_command_ranges``); the base class brings them into joint space with
the calibration (a reversed joint swaps the ends) and checks every impedance command, position
and speed against them, always refusing (whatever the policy: a clamped gain is another command)
with :class:`LimitError` naming joint, index, field, value and the range with what sets it
("within [0, 500] (the md80's wire range)"). A node's command check folds the same ranges into
its limits (:class:`~jointbus.nodes.safety.command_check.CommandCheck`), so a served array
refuses such a command before arbitration, and a ``bus://`` client, which gets them in the
server's description, before it sends. Where a joint's velocity or effort limit is unbounded (or
wider), the carried range is its bound wherever that limit bounds something else too
(:meth:`ActuatorArray._carried_bound`): ``set_speed``, the most ``set_accel`` takes, and the limit
guard's speed limit and gain.

**Limits in every mode, while the joint moves.** A command is checked when it arrives; a speed, a
current or an impedance velocity target keeps acting after that. Drivers that command their
drives every cycle (``sim://``, ``can://``) therefore run the drive's limit supervisor,
:mod:`jointbus.drivers.limit_guard`: a speed move decelerates to stop at the end of the range
(:meth:`_actuator_range`), and current and impedance commands are bounded so that the joint can
still stop at the end within its acceleration and never exceeds its speed limit. A joint so held
is flagged :attr:`~jointbus.messages.actarray.state.ActuatorState.LIMITED` in the reading, and
:attr:`JointReading.speed_limited` says which limit holds it: its speed limit, or an end of its
range.

**Threads.** Public methods are serialised by one re-entrant lock (held only while checking and
calling the hook), so a driver's hooks are never called concurrently from two caller threads; a
driver with its own thread (the real-time simulator) protects its state from that thread itself.
"""

from __future__ import annotations

import abc
import dataclasses
import difflib
import math
import numbers
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import ClassVar, Final, Self

import numpy as np
import numpy.typing as npt

from jointbus.drivers.array_state import actuator_states, array_state
from jointbus.drivers.calibration import Calibration
from jointbus.drivers.capabilities import Capability
from jointbus.drivers.command_ranges import CommandRanges
from jointbus.drivers.errors import (
    DriverClosedError,
    DriverError,
    MotionTimeoutError,
    RejectReason,
    RequestRejected,
    UnknownArrayJointError,
)
from jointbus.drivers.impedance import CheckedImpedance, ImpedanceCommand
from jointbus.drivers.limit_guard import LimitGuard
from jointbus.drivers.limits import JointLimits, LimitPolicy, Saturation
from jointbus.math import Transform
from jointbus.messages.actarray.data import ActuatorArrayData
from jointbus.messages.actarray.geometry import ActuatorGeometry, ArrayGeometry, Orientation3D
from jointbus.messages.actarray.state import ActuatorState, ActuatorType
from jointbus.messages.errors import (
    LengthMismatchError,
    LimitError,
    NonFiniteError,
    ValidationError,
)
from jointbus.messages.geometry_msgs import Point, Vector3
from jointbus.messages.std_msgs import Header
from jointbus.model.calibration import JointCalibration
from jointbus.model.joint import JointType
from jointbus.model.limits import JointLimitSpec
from jointbus.model.robot import RobotModel

__all__ = [
    "ActuatorArray",
    "ActuatorArrayConfig",
    "ActuatorArrayConfigError",
    "DriverFault",
    "ImpedanceTargets",
    "ImuReading",
    "JointReading",
    "RawReading",
    "SaturationCallback",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]
BoolArray = npt.NDArray[np.bool_]

SaturationCallback = Callable[[tuple[Saturation, ...]], None]
"""Called with the saturations of a command that clamped at least one value."""
_CommandWriter = Callable[[IntArray, FloatArray, str], tuple[Saturation, ...]]
"""A command internal (``_positions``, ``_speeds``, ``_currents``): indices, values, field."""

_API: Final = "ActuatorArray"
#: The state bits that are not about motion (a joint not measured keeps only these).
_NOT_MOTION: Final = np.uint8(
    0xFF & ~(ActuatorState.IDLE | ActuatorState.MOVING | ActuatorState.BRAKED)
)
#: The fields of an impedance command, in the row order of its fast check.
#: An unbounded limit in the fast impedance check: finite, so that the check also fails on ±inf.
_BIG: Final = float(np.finfo(np.float64).max)
_IMPEDANCE_FIELDS: Final = ("position", "velocity", "effort", "kp", "kd", "brake")


#: rad or m: a speed move of a joint without soft limits stops this far inside its position
#: limits (or 1 % of its range, if less), so that the reading where it rests — sensor noise,
#: encoder quantisation and the drive's tracking error included — is still a valid position
#: target ("hold where you are") rather than a value just past the limit.
GUARD_MARGIN: Final = 0.002


class ActuatorArrayConfigError(DriverError, ValueError):
    """An :class:`ActuatorArrayConfig` that cannot describe a working array (names the field)."""


# --------------------------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ActuatorArrayConfig:
    """Everything the base class needs about an array, in joint space, in actuator order.

    ``geometry`` is Player's geometry in joint space; its ``min`` / ``max`` should equal the
    position limits (:meth:`from_model` makes them so) and its ``config_speed`` is the initial
    configured speed (0 means "use the velocity limit"). ``accelerations`` is the initial
    configured acceleration of each joint (rad/s² or m/s²; default: reach the configured speed in
    :attr:`DEFAULT_RAMP_TIME`). Validated whole on construction.
    """

    names: tuple[str, ...]
    types: tuple[ActuatorType, ...]
    limits: tuple[JointLimitSpec, ...]
    calibrations: tuple[JointCalibration, ...]
    geometry: ArrayGeometry
    policy: LimitPolicy = LimitPolicy.REJECT
    accelerations: tuple[float, ...] = ()

    DEFAULT_RAMP_TIME: ClassVar[float] = 0.25
    """s: the default acceleration reaches the configured speed in this time."""

    def __post_init__(self) -> None:
        for name in ("names", "types", "limits", "calibrations", "accelerations"):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))
        n = len(self.names)
        if n == 0:
            raise ActuatorArrayConfigError("an actuator array needs at least one actuator")
        for i, name in enumerate(self.names):
            if not isinstance(name, str) or not name:
                raise ActuatorArrayConfigError(f"names[{i}] = {name!r}; expected a non-empty str")
            if name in self.names[:i]:
                raise ActuatorArrayConfigError(f"joint {name!r} (index {i}) is named twice")
        for field_name in ("types", "limits", "calibrations"):
            count = len(getattr(self, field_name))
            if count != n:
                raise ActuatorArrayConfigError(
                    f"{field_name} has {count} entries for {n} joints; expected one per joint"
                )
        if type(self.geometry) is not ArrayGeometry or len(self.geometry) != n:
            raise ActuatorArrayConfigError(
                f"geometry must be an ArrayGeometry with {n} actuators, one per joint"
            )
        if not isinstance(self.policy, LimitPolicy):
            raise ActuatorArrayConfigError(f"policy = {self.policy!r}; expected a LimitPolicy")
        for i, (name, kind, geom) in enumerate(
            zip(self.names, self.types, self.geometry.actuators, strict=True)
        ):
            if not isinstance(kind, ActuatorType):
                raise ActuatorArrayConfigError(
                    f"joint {name!r} (index {i}): type {kind!r}; expected an ActuatorType"
                )
            if geom.type is not kind:
                raise ActuatorArrayConfigError(
                    f"joint {name!r} (index {i}): geometry type {geom.type.name} but type "
                    f"{kind.name}"
                )
        speeds = self.config_speeds
        for i, speed in enumerate(speeds):
            if not (math.isfinite(speed) and speed > 0.0):
                raise ActuatorArrayConfigError(
                    f"joint {self.names[i]!r} (index {i}): no configured speed (geometry "
                    f"config_speed is 0 and the velocity limit is {speed}); expected a finite "
                    "speed > 0 in one of them"
                )
            limit = self.limits[i].velocity_max
            if speed > limit:
                raise ActuatorArrayConfigError(
                    f"joint {self.names[i]!r} (index {i}): config_speed {speed} exceeds the "
                    f"velocity limit {limit}"
                )
        if not self.accelerations:
            object.__setattr__(
                self, "accelerations", tuple(s / self.DEFAULT_RAMP_TIME for s in speeds)
            )
        elif len(self.accelerations) != n:
            raise ActuatorArrayConfigError(
                f"accelerations has {len(self.accelerations)} entries for {n} joints"
            )
        for i, accel in enumerate(self.accelerations):
            if isinstance(accel, bool) or not (math.isfinite(accel) and accel > 0.0):
                raise ActuatorArrayConfigError(
                    f"joint {self.names[i]!r} (index {i}): acceleration = {accel!r}; "
                    "expected a finite number > 0"
                )

    @property
    def count(self) -> int:
        """Number of actuators N."""
        return len(self.names)

    @property
    def config_speeds(self) -> tuple[float, ...]:
        """Initial configured speed per joint: the geometry's, or the velocity limit if 0."""
        return tuple(
            g.config_speed if g.config_speed > 0.0 else lim.velocity_max
            for g, lim in zip(self.geometry.actuators, self.limits, strict=True)
        )

    @classmethod
    def from_model(
        cls,
        model: RobotModel,
        *,
        policy: LimitPolicy = LimitPolicy.REJECT,
        accelerations: Sequence[float] = (),
    ) -> ActuatorArrayConfig:
        """The config of ``model``'s actuated joints, in its actuator order.

        Geometry comes from each joint's ``actuator:`` section (length, rest orientation, home,
        centre, configured speed, brakes), its axis and its position limits. Axes are expressed
        in the rest-aligned frames of :mod:`jointbus.drivers.chain_kinematics` (for a tree whose
        joint origins carry no rotation, that is the joint's own axis). The base pose is the
        first actuator's frame in the root link, in frame ``model.root``. A joint without an
        ``actuator:`` section gets length 0, home 0 (clipped into range) and centre mid-range.
        """
        joints = model.actuated_joints()
        if not joints:
            raise ActuatorArrayConfigError(f"robot {model.name!r} has no actuated joints")
        types: list[ActuatorType] = []
        geometries: list[ActuatorGeometry] = []
        rest_frames = [_rest_frame(model, j.name) for j in joints]
        base = rest_frames[0]
        base_inverse = base.rotation.inverse()
        for i, joint in enumerate(joints):
            if joint.type in (JointType.REVOLUTE, JointType.CONTINUOUS):
                kind = ActuatorType.ROTARY
            elif joint.type is JointType.PRISMATIC:
                kind = ActuatorType.LINEAR
            else:
                raise ActuatorArrayConfigError(
                    f"joint {joint.name!r} (index {i}) is {joint.type.value}; an actuator array "
                    "holds revolute, continuous and prismatic joints only"
                )
            lo, hi = joint.limits.position_min, joint.limits.position_max
            if not (math.isfinite(lo) and math.isfinite(hi)):
                raise ActuatorArrayConfigError(
                    f"joint {joint.name!r} (index {i}): position range [{lo}, {hi}]; Player "
                    "geometry needs a finite range"
                )
            act = joint.actuator
            axis = (base_inverse * rest_frames[i].rotation).rotate(joint.axis)
            geometries.append(
                ActuatorGeometry(
                    type=kind,
                    length=act.length if act else 0.0,
                    orientation=Orientation3D(*act.rest_orientation) if act else Orientation3D(),
                    axis=Vector3.from_math(axis),
                    min=lo,
                    centre=act.centre if act else (lo + hi) / 2.0,
                    max=hi,
                    home=act.home if act else min(max(0.0, lo), hi),
                    config_speed=act.config_speed if act else 0.0,
                    has_brakes=act.has_brakes if act else False,
                )
            )
            types.append(kind)
        geometry = ArrayGeometry(
            header=Header(frame_id=model.root),
            actuators=tuple(geometries),
            base_position=Point.from_math(base.translation),
            base_orientation=Orientation3D.from_quaternion(base.rotation),
        )
        return cls(
            names=tuple(j.name for j in joints),
            types=tuple(types),
            limits=tuple(j.limits for j in joints),
            calibrations=tuple(j.calibration for j in joints),
            geometry=geometry,
            policy=policy,
            accelerations=tuple(accelerations),
        )


def _rest_frame(model: RobotModel, joint_name: str) -> Transform:
    """Pose of joint ``joint_name``'s frame in the root link with every joint at zero."""
    joint = model.joint(joint_name)
    pose = Transform.identity()
    for j in model.chain(joint.child):
        pose = pose @ j.origin
    return pose


# --------------------------------------------------------------------------------------------
# Values passed between the base class and the drivers
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RawReading:
    """One read of the array in *actuator* space, as a driver's ``_read_raw`` returns it.

    Arrays of length N in actuator order; NaN where the driver does not measure a quantity
    (``acceleration`` and ``temperature`` often). ``status`` is the driver's status word per
    actuator (its meaning is the driver's; 0 = nothing to report). ``moving`` / ``braked`` /
    ``stalled`` become the state flags (:func:`~jointbus.drivers.array_state.actuator_states`).
    ``time`` is the driver's clock (simulated time for the simulator), s.
    """

    time: float
    position: FloatArray
    velocity: FloatArray
    acceleration: FloatArray
    current: FloatArray
    effort: FloatArray
    temperature: FloatArray
    status: npt.NDArray[np.uint32]
    moving: BoolArray
    braked: BoolArray
    stalled: BoolArray
    motor_power: bool
    powered: BoolArray | None = None
    """Per actuator: is its drive stage on? ``None``: all as ``motor_power`` says."""
    limited: BoolArray | None = None
    """Per actuator: does the drive's limit guard hold it back at its position range or speed
    limit now (:mod:`jointbus.drivers.limit_guard`)? ``None``: no guard reports it."""
    speed_limited: BoolArray | None = None
    """Per actuator: of the ``limited`` ones, is it held at its speed limit (the others are held
    at an end of their range)? ``None``: the driver cannot tell (a ``bus://`` client: Player's
    state carries ``LIMITED`` alone)."""


@dataclass(frozen=True, slots=True)
class JointReading:
    """One read of the array in *joint* space (calibration applied), as numpy arrays.

    The fast form of :meth:`ActuatorArray.read` (no message objects), for a 500 Hz bridge.
    ``state`` holds the :class:`ActuatorState` bits per actuator (``UNPOWERED`` where the drive
    stage is off); ``motor_power`` is the array's power state (Player's ``motor_state``).
    ``speed_limited`` says, of the actuators flagged ``LIMITED``, which the drive holds at their
    speed limit — the others it holds at an end of their range — so that a report names the
    limit that acted, not one guessed from the speed read (the drive cuts a command the cycle
    *before* it would pass the speed limit); ``None`` where the driver cannot tell (``bus://``).
    """

    names: tuple[str, ...]
    time: float
    position: FloatArray
    velocity: FloatArray
    acceleration: FloatArray
    current: FloatArray
    effort: FloatArray
    temperature: FloatArray
    status: npt.NDArray[np.uint32]
    state: npt.NDArray[np.uint8]
    motor_power: bool
    speed_limited: BoolArray | None = None

    def array_state(self, has_brakes: Sequence[bool] | BoolArray | None = None) -> ActuatorState:
        """The array-wide state (:func:`jointbus.drivers.array_state.array_state`)."""
        return array_state(self.state, has_brakes)

    def to_data(self, frame_id: str, header: Header | None = None) -> ActuatorArrayData:
        """This reading as Player's array data: ``header``, or one stamped now in ``frame_id``.

        Built in one pass (:meth:`ActuatorArrayData.from_arrays`): the array node publishes it
        every state cycle. A value ``ActuatorData`` refuses (an infinity, inconsistent state
        flags) raises its error naming the joint (name and index), field and value.
        """
        return ActuatorArrayData.from_arrays(
            header or Header.now(frame_id),
            position=self.position,
            speed=self.velocity,
            acceleration=self.acceleration,
            current=self.current,
            state=self.state,
            effort=self.effort,
            temperature=self.temperature,
            status=self.status,
            motor_power=self.motor_power,
            names=self.names,
        )


@dataclass(frozen=True, slots=True)
class ImpedanceTargets:
    """A validated impedance command for all N actuators, in *actuator* space.

    ``τ = torque + kp·(position − p) + kd·(velocity − v)``: kp N·m/rad, kd N·m·s/rad, position
    rad, velocity rad/s, torque N·m (N, m, m/s for linear actuators); ``brake`` engages a brake.
    """

    kp: FloatArray
    kd: FloatArray
    position: FloatArray
    velocity: FloatArray
    torque: FloatArray
    brake: BoolArray


@dataclass(frozen=True, slots=True)
class ImuReading:
    """One reading of the body IMU that a driver's hardware carries (or simulates).

    Optional part of the API: a legged robot's IMU often sits on the same bus or in the same
    simulation as its actuators, and the bridge publishes it in the same 500 Hz frame, so the
    driver hands it out; :meth:`ActuatorArray.imu` returns ``None`` when there is none.
    ``orientation`` (w, x, y, z): the IMU frame in the world frame (z up), as an orientation
    filter reports it; ``angular_velocity`` rad/s and ``linear_acceleration`` m/s² in the IMU
    frame, the acceleration being specific force (≈ (0, 0, +9.81) at rest, level). ``time`` is
    the driver's clock, as in :class:`RawReading`, s.
    """

    time: float
    orientation: FloatArray
    angular_velocity: FloatArray
    linear_acceleration: FloatArray


# --------------------------------------------------------------------------------------------
# The base class
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class DriverFault:
    """A fault a driver detected (:meth:`ActuatorArray.take_faults`): ``text`` says what and
    names the joint (name and index); ``severe``: the actuators no longer do what they are told
    (reported as ERROR, else WARN); ``key`` groups repeats of one fault, which a node reports
    at most once per its report interval, counted."""

    text: str
    key: str
    severe: bool


class ActuatorArray(abc.ABC):
    """An actuator array (Player ``actarray``): see the module docstring for the contract.

    Joints are addressed by index (``int``, actuator order) or name (``str``); ``None`` means
    every joint. Usable as a context manager (closes on exit).
    """

    WAIT_POLL_S: ClassVar[float] = 0.005
    """s: how often :meth:`wait_until_still` reads the array (default ``_wait_tick``)."""

    def __init__(
        self, config: ActuatorArrayConfig, *, on_saturation: SaturationCallback | None = None
    ) -> None:
        if not isinstance(config, ActuatorArrayConfig):
            raise ActuatorArrayConfigError(f"config = {config!r}; expected ActuatorArrayConfig")
        self._config = config
        n = config.count
        self._n = n
        self._names = config.names
        self._index_of = {name: i for i, name in enumerate(config.names)}
        self._limits = JointLimits(config.names, config.limits, config.policy, type_name=_API)
        self._calibration = Calibration(config.calibrations)
        self._config_speed = np.array(config.config_speeds, dtype=np.float64)
        self._config_accel = np.array(config.accelerations, dtype=np.float64)
        actuators = config.geometry.actuators
        self._home = np.array([a.home for a in actuators], dtype=np.float64)
        self._has_brakes = np.array([a.has_brakes for a in actuators], dtype=np.bool_)
        self._has_brakes_tuple = tuple(a.has_brakes for a in actuators)
        #: The most ``set_accel`` takes per joint (rad/s² or m/s²) and why: set with the limit
        #: guard (:meth:`_make_limit_guard`, which knows the period and the inertia); unbounded
        #: for a driver without one (``bus://``: its server checks).
        self._accel_max = np.full(n, math.inf)
        self._accel_max_why: tuple[str, ...] = ("",) * n
        soft = [s.soft for s in config.limits]
        self._soft_mask = np.array([s is not None for s in soft], dtype=np.bool_)
        self._soft_lower = np.array([s.lower if s else -math.inf for s in soft])
        self._soft_upper = np.array([s.upper if s else math.inf for s in soft])
        self._all = np.arange(n, dtype=np.intp)
        self._any_soft = bool(self._soft_mask.any())
        # impedance()'s fast path: rows position, velocity, effort, kp, kd against their bounds.
        self._impedance_lower = np.array(
            [[s.position_min, -s.velocity_max, -s.effort_max, 0.0, 0.0] for s in config.limits],
            dtype=np.float64,
        ).T.clip(-_BIG, _BIG)
        self._impedance_upper = np.array(
            [
                [s.position_max, s.velocity_max, s.effort_max, _BIG, _BIG]
                for s in config.limits
            ],
            dtype=np.float64,
        ).T.clip(-_BIG, _BIG)
        self._no_brakes = np.zeros(n, dtype=np.bool_)
        #: What the driver can carry (:meth:`command_ranges`), asked of it on first use: a driver
        #: builds what it needs for that after this constructor.
        self._command_ranges: CommandRanges | None = None
        self._api_lock = threading.RLock()
        self._closed = False
        self._on_saturation = on_saturation
        self.last_saturations: tuple[Saturation, ...] = ()
        """Saturations of the last accepted command (empty if nothing was clamped)."""

    # ---------------------------------------------------------------- the limit guard

    def _actuator_range(self, *, margin: bool = False) -> tuple[FloatArray, FloatArray]:
        """Each joint's range in *actuator* space, (lower, upper): its soft limits where the
        config has them, else its position limits — where a drive's limit supervisor stops it
        (:mod:`jointbus.drivers.limit_guard`). ``margin``: position limits brought in by
        :data:`GUARD_MARGIN`, for the rest points the driver chooses itself (a speed move's stop
        at the end), so that the reading there is a valid target; commands keep the full range."""
        hard_lower, hard_upper = self._limits.bounds_array("position")
        if margin:
            with np.errstate(invalid="ignore"):
                inset = np.minimum(GUARD_MARGIN, 0.01 * (hard_upper - hard_lower))
            inset = np.where(np.isfinite(inset), inset, GUARD_MARGIN)
            hard_lower = hard_lower + inset
            hard_upper = hard_upper - inset
        lower = np.where(self._soft_mask, self._soft_lower, hard_lower)
        upper = np.where(self._soft_mask, self._soft_upper, hard_upper)
        cal = self._calibration
        a = cal.position_to_actuator(lower)
        b = cal.position_to_actuator(upper)
        with np.errstate(invalid="ignore"):
            return np.fmin(a, b), np.fmax(a, b)

    def _make_limit_guard(self, period: float, inertia: FloatArray | None = None) -> LimitGuard:
        """The limit supervisor of this array (:mod:`jointbus.drivers.limit_guard`) for a driver
        that sends one command per ``period`` s: its range (:meth:`_actuator_range`), speed
        bounds (:meth:`_carried_bound`: the velocity limit, or the driver's carried range where
        the limit is unbounded or wider), configured accelerations as decelerations, and a gain of
        ``inertia / period`` (``inertia``: the drive's rotor inertia, kg·m² — the least the joint
        can have; ``None`` or a joint without one: its effort bound over a tenth of its speed
        bound, else 1)."""
        lower, upper = self._actuator_range()
        speed = self._carried_bound("velocity")[0]
        vmax = np.where(speed > 0.0, speed, math.inf)
        effort = self._carried_bound("effort")[0]
        with np.errstate(divide="ignore", invalid="ignore"):
            fallback = np.where(
                np.isfinite(effort) & np.isfinite(vmax) & (effort > 0.0),
                effort / (0.1 * vmax),
                1.0,
            )
        gain = fallback if inertia is None else np.where(inertia > 0.0, inertia / period, fallback)
        self._bound_accelerations(period, vmax, effort, inertia)
        return LimitGuard(
            lower, upper, velocity_max=vmax, deceleration=self._config_accel, gain=gain,
            period=period,
        )

    def _bound_accelerations(
        self, period: float, vmax: FloatArray, effort: FloatArray, inertia: FloatArray | None
    ) -> None:
        """The most acceleration ``set_accel`` takes, per joint: what its drive could reach at
        best — its effort limit over its rotor inertia (the least inertia the joint can have)
        when the driver knows it — and never more than the velocity limit reached within one
        command ``period`` (beyond it the profile steps to full speed in one cycle anyway).

        Why a bound at all: ``set_accel(1e12)`` was accepted (a user's trial, 2026-12-06); the
        next move stepped to full speed in one sample and overshot its target, and the limit
        guard takes the configured acceleration as the deceleration it counts on before a
        position limit, so it would brake too late."""
        with np.errstate(divide="ignore", invalid="ignore"):
            per_cycle = vmax / period
            by_drive = (
                np.full(self._n, math.inf)
                if inertia is None
                else np.where((inertia > 0.0) & np.isfinite(effort), effort / inertia, math.inf)
            )
        self._accel_max = np.minimum(per_cycle, by_drive)
        speed_why = self._carried_bound("velocity")[1]
        self._accel_max_why = tuple(
            f"its effort limit {effort[i]:g} over its rotor inertia {inertia[i]:g}"
            if inertia is not None and by_drive[i] <= per_cycle[i]
            else f"its velocity limit {vmax[i]:g} reached within one {period * 1e3:g} ms cycle"
            if not speed_why[i]
            else f"its speed bound {vmax[i]:g} ({speed_why[i]}) reached within one "
            f"{period * 1e3:g} ms cycle"
            for i in range(self._n)
        )

    def _carried_bound(self, field_name: str) -> tuple[FloatArray, tuple[str, ...]]:
        """Per joint, the most ``field_name`` (``"velocity"``, rad/s or m/s, or ``"effort"``,
        N·m or N; a magnitude, joint space) a command may ask: the joint's limit, or what the
        driver can carry (:meth:`command_ranges`) where that is less — and per joint what sets
        it (the range's ``bound_by``, e.g. "the md80's wire range"; empty: the joint's limit).

        Why: a joint limit may be unbounded (``inf``: the robot file states none), while a
        ``can://`` motor's frame carries a velocity and a torque only over its model's wire range
        (md80: ±25 rad/s, ±24 N·m). Until 2026-12-06 such a joint's ``set_speed(j, 100)`` was
        taken and its next move refused at the first exchange ("velocity = 100 … nothing was
        sent"), the limit guard let an impedance or current command spin it past the wire range,
        and ``set_accel`` was unbounded. A speed bound holds in both senses (a speed move may go
        either way), so an asymmetric carried range [lower, upper] — the calibration swaps the
        ends of a reversed joint's — bounds the magnitude by ``min(−lower, upper)``; a carried
        range that does not straddle 0 leaves the limit as it is."""
        limit = self._limits.bounds_array(field_name)[1]
        ranges = self.command_ranges()
        if not ranges.bounded:
            return limit, ("",) * self._n
        lower, upper = ranges.bounds_array(field_name)
        carried = np.minimum(-lower, upper)
        tighter = (carried < limit) & (carried > 0.0)
        return np.where(tighter, carried, limit), tuple(
            ranges.bound_by[i] if tighter[i] else "" for i in range(self._n)
        )

    # ---------------------------------------------------------------- hooks (driver side)

    @abc.abstractmethod
    def _capabilities(self) -> frozenset[Capability]:
        """What this driver supports."""

    @abc.abstractmethod
    def _read_raw(self) -> RawReading:
        """Read every actuator (actuator space)."""

    @abc.abstractmethod
    def _motor_power(self) -> bool:
        """True while motor power is on (motion commands are refused otherwise)."""

    def _measured_state(self) -> tuple[FloatArray, FloatArray]:
        """Measured (position, velocity) in actuator space, for the soft-limit law."""
        raw = self._read_raw()
        return raw.position, raw.velocity

    def _engaged_brakes(self) -> BoolArray:
        """Which actuators' brakes are engaged now (default: from ``_read_raw``; none when the
        driver has no ``BRAKES`` capability). Motion commands on these are refused."""
        if Capability.BRAKES not in self._capabilities():
            return self._no_brakes
        return np.asarray(self._read_raw().braked, dtype=np.bool_)

    def _wait_clock(self) -> float:
        """The time :meth:`wait_until_still`'s timeout runs on, s (default: the monotonic wall
        clock; a stepping simulator returns its simulated time)."""
        return time.monotonic()

    def _wait_tick(self) -> None:
        """Let time pass between two reads of :meth:`wait_until_still`.

        Default: sleep :attr:`WAIT_POLL_S`. A driver whose time is not the wall clock's (a
        stepping simulator) or whose reads are bus exchanges paced at its period (``can://``)
        overrides it.
        """
        time.sleep(self.WAIT_POLL_S)

    def _close(self) -> None:  # noqa: B027 - optional hook; most drivers have nothing to free
        """Release the driver's resources (called once)."""

    def _read_imu(self) -> ImuReading | None:
        """The body IMU's reading, or ``None`` if this driver has no IMU."""
        return None

    def _actuator_command_ranges(self) -> tuple[FloatArray, FloatArray, tuple[str, ...]] | None:
        """What the driver can carry, in *actuator* space: (lower, upper), each of shape (5, N)
        with rows position, velocity, torque (effort), kp, kd (``±inf``: unbounded), and per
        actuator what sets them, as an error says it ("the md80's wire range"). Asked once.
        Default ``None``: unbounded (:meth:`command_ranges`)."""
        return None

    def _request_power(self, on: bool) -> None:
        raise self._unsupported(Capability.POWER.value)

    def _request_joint_power(self, indices: IntArray, on: bool) -> None:
        raise self._unsupported(Capability.JOINT_POWER.value)

    def _joints_powered(self) -> BoolArray:
        """Which actuators' drive stages are on while the array's power is (default: all; a
        driver with ``JOINT_POWER`` reports the ones switched off)."""
        return np.ones(self._n, dtype=np.bool_)

    def _request_brakes(self, on: bool) -> None:
        raise self._unsupported(Capability.BRAKES.value)

    def _request_speed(self, indices: IntArray, speeds: FloatArray) -> None:
        raise self._unsupported(Capability.SPEED_CONFIG.value)

    def _request_accel(self, indices: IntArray, accels: FloatArray) -> None:
        raise self._unsupported(Capability.ACCEL_CONFIG.value)

    def _write_positions(self, indices: IntArray, positions: FloatArray) -> None:
        raise self._unsupported(Capability.POSITION.value)

    def _write_speeds(self, indices: IntArray, speeds: FloatArray) -> None:
        raise self._unsupported(Capability.SPEED.value)

    def _write_home(self, indices: IntArray, home_positions: FloatArray) -> None:
        """Default homing: a position move to the geometry's home positions."""
        self._write_positions(indices, home_positions)

    def _write_currents(self, indices: IntArray, currents: FloatArray) -> None:
        raise self._unsupported(Capability.CURRENT.value)

    def _write_impedance(self, targets: ImpedanceTargets) -> None:
        raise self._unsupported(Capability.IMPEDANCE.value)

    # ---------------------------------------------------------------- basics

    @property
    def config(self) -> ActuatorArrayConfig:
        """The configuration this array was built with."""
        return self._config

    @property
    def names(self) -> tuple[str, ...]:
        """Joint names in actuator order."""
        return self._names

    @property
    def count(self) -> int:
        """Number of actuators N."""
        return self._n

    @property
    def closed(self) -> bool:
        """True after :meth:`close`."""
        return self._closed

    def index(self, joint: int | str) -> int:
        """Actuator index of ``joint`` (an index or a name).

        An unknown name or index raises :class:`UnknownArrayJointError` — an
        :class:`UnknownJointError` and a ``RequestRejected(UNKNOWN_JOINT)`` at once, whichever
        call named the joint.
        """
        return self._index("index", joint)

    def _index(self, request: str, joint: int | str) -> int:
        if isinstance(joint, str):
            try:
                return self._index_of[joint]
            except KeyError:
                close = difflib.get_close_matches(joint, self._names, n=1)
                raise UnknownArrayJointError(
                    request, joint, self._names, close[0] if close else None
                ) from None
        value: object = joint  # callers may pass anything; check at run time
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise ValidationError(
                _API, "joint", value, f"an index 0..{self._n - 1}, a joint name, or None"
            )
        index = int(value)
        if not 0 <= index < self._n:
            raise UnknownArrayJointError(request, index, self._names)
        return index

    def capabilities(self) -> frozenset[Capability]:
        """What this driver supports; everything else is refused as ``UNSUPPORTED``."""
        with self._api_lock:
            self._check_open()
            return self._capabilities()

    def close(self) -> None:
        """Stop the driver and release its resources; later calls raise DriverClosedError."""
        with self._api_lock:
            if self._closed:
                return
            self._closed = True
            self._close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def command_ranges(self) -> CommandRanges:
        """Per joint, the bounds of each impedance field this driver can carry, in joint space
        (:class:`~jointbus.drivers.command_ranges.CommandRanges`; unbounded unless the driver
        declares them, as ``can://`` does its motor models' wire ranges). Fixed for the driver's
        life: the same object on every call. Commands outside them are refused (module docstring,
        "What the driver can carry")."""
        ranges = self._command_ranges
        if ranges is None:
            with self._api_lock:
                ranges = self._command_ranges
                if ranges is None:
                    ranges = self._make_command_ranges()
        return ranges

    def _make_command_ranges(self) -> CommandRanges:
        """The driver's ranges in joint space, folded into the fast impedance check (lock held)."""
        declared = self._actuator_command_ranges()
        if declared is None:
            ranges = CommandRanges.unbounded(self._names)
        else:
            lower, upper, bound_by = declared
            ranges = CommandRanges.from_actuator(
                self._names, lower, upper, bound_by, self._calibration
            )
            self._impedance_lower = np.maximum(self._impedance_lower, ranges.lower).clip(
                -_BIG, _BIG
            )
            self._impedance_upper = np.minimum(self._impedance_upper, ranges.upper).clip(
                -_BIG, _BIG
            )
        self._command_ranges = ranges
        return ranges

    def _check_ranges(self, field_name: str, indices: IntArray, values: FloatArray,
                      request_field: str | None = None) -> None:
        """Refuse (:class:`LimitError`, whatever the policy) the first of ``values`` (of joints
        ``indices``) outside the driver's range of ``field_name``; the error names
        ``request_field`` (default ``field_name``), the field the caller sent."""
        ranges = self.command_ranges()
        if not ranges.bounded:
            return
        lower, upper = ranges.bounds_array(field_name)
        outside = ~((values >= lower[indices]) & (values <= upper[indices]))
        if outside.any():
            k = int(np.flatnonzero(outside)[0])
            i = int(indices[k])
            raise LimitError(
                _API,
                request_field or field_name,
                float(values[k]),
                ranges.expectation(field_name, i),
                joint=self._names[i],
                index=i,
            )

    # ---------------------------------------------------------------- geometry and feedback

    def geometry(self) -> ArrayGeometry:
        """Player geometry in joint space, with the *currently* configured speeds."""
        with self._api_lock:
            self._check_open()
            base = self._config.geometry
            actuators = tuple(
                dataclasses.replace(a, config_speed=float(s))
                for a, s in zip(base.actuators, self._config_speed, strict=True)
            )
            return dataclasses.replace(
                base, header=Header.now(base.header.frame_id), actuators=actuators
            )

    def take_faults(self) -> tuple[DriverFault, ...]:
        """The faults this driver detected since the last call, oldest first, each one sentence
        naming the joint (name and index): what a node serving the array reports on its status
        topic (a CAN motor that missed its replies, was flagged lost, a failed bus). A node
        calls it every cycle; this default has none."""
        return ()

    def read_joints(self) -> JointReading:
        """Read every actuator, in joint space, as numpy arrays (see :class:`JointReading`)."""
        with self._api_lock:
            self._check_open()
            raw = self._read_raw()
        cal = self._calibration
        d = cal.direction
        state = actuator_states(
            raw.moving,
            raw.braked,
            raw.stalled,
            raw.motor_power if raw.powered is None else raw.powered,
            raw.limited,
        )
        unmeasured = np.isnan(raw.position)
        if unmeasured.any():  # no reply this cycle: whether it moves is not known, so not IDLE
            state[unmeasured] &= _NOT_MOTION
        return JointReading(
            names=self._names,
            time=raw.time,
            position=cal.position_to_joint(raw.position),
            velocity=d * raw.velocity,
            acceleration=d * raw.acceleration,
            current=d * raw.current,
            effort=d * raw.effort,
            temperature=raw.temperature.copy(),
            status=raw.status.copy(),
            state=state,
            motor_power=bool(raw.motor_power),
            speed_limited=None if raw.speed_limited is None else raw.speed_limited.copy(),
        )

    def imu(self) -> ImuReading | None:
        """The body IMU's latest reading (see :class:`ImuReading`); ``None``: no IMU here."""
        with self._api_lock:
            self._check_open()
            return self._read_imu()

    def read(self) -> ActuatorArrayData:
        """Read every actuator: Player's array data (joint space, header stamped now)."""
        return self.read_joints().to_data(self._config.geometry.header.frame_id)

    # ---------------------------------------------------------------- requests

    def power(self, on: bool) -> None:
        """Switch motor power of the whole array on or off (ACK: returns; NACK: raises)."""
        self._switch(Capability.POWER, "power", on, self._request_power)

    def joint_power(self, joint: int | str | None, on: bool) -> None:
        """Switch the drive stage of ``joint`` (``None``: every joint) off — no torque, the joint
        is limp and ``UNPOWERED``, the others keep running — or on again, holding where it is
        measured. The array's motor power must be on to switch a joint on (``POWERED_OFF``)."""
        with self._api_lock:
            self._begin(Capability.JOINT_POWER)
            indices = self._request_joints("joint_power", joint)
            if type(on) is not bool:
                raise RequestRejected(
                    "joint_power",
                    RejectReason.OUT_OF_RANGE,
                    f"on = {on!r}; expected a bool",
                    field="on",
                    value=on,
                    expected="a bool",
                )
            if on:
                self._require_power("joint_power")
            self._request_joint_power(indices, on)

    def brakes(self, on: bool) -> None:
        """Engage (``True``) or release the brakes of every actuator that has one."""
        self._switch(Capability.BRAKES, "brakes", on, self._request_brakes)

    def _switch(
        self, capability: Capability, request: str, on: bool, apply: Callable[[bool], None]
    ) -> None:
        """An on/off request of the whole array: ``on`` must be a bool, then ``apply(on)``."""
        with self._api_lock:
            self._begin(capability)
            if type(on) is not bool:
                raise RequestRejected(
                    request,
                    RejectReason.OUT_OF_RANGE,
                    f"on = {on!r}; expected a bool",
                    field="on",
                    value=on,
                    expected="a bool",
                )
            apply(on)

    def set_speed(self, joint: int | str | None, speed: float) -> None:
        """Configured speed of later moves of ``joint`` (``None``: all), rad/s or m/s.

        NaN or inf raises :class:`NonFiniteError` (naming the joint, index, field and value, as
        every NaN check does); a speed ≤ 0 or above the joint's velocity limit — or above what
        the driver can carry, where that is less (a ``can://`` motor's wire range on a joint
        whose velocity limit is unbounded: :meth:`_carried_bound`) — is refused
        (``OUT_OF_RANGE``).
        """
        with self._api_lock:
            self._begin(Capability.SPEED_CONFIG)
            indices = self._request_joints("set_speed", joint)
            value = self._request_value("set_speed", "speed", speed, indices)
            bound, why = self._carried_bound("velocity")
            over = np.flatnonzero(value > bound[indices])
            if over.size:
                i = int(indices[over[0]])
                expected = (
                    f"a speed > 0 and ≤ {bound[i]:g} ({why[i]})" if why[i]
                    else f"a speed > 0 and ≤ the velocity limit {bound[i]:g}"
                )
                raise RequestRejected(
                    "set_speed",
                    RejectReason.OUT_OF_RANGE,
                    f"speed = {value:g}; expected {expected}",  # as every refusal says it
                    joint=self._names[i],
                    index=i,
                    field="speed",
                    value=value,
                    expected=expected,
                )
            values = np.full(indices.size, value)
            self._request_speed(indices, values)
            self._config_speed[indices] = values

    def set_accel(self, joint: int | str | None, accel: float) -> None:
        """Configured acceleration of later moves of ``joint`` (``None``: all), rad/s² or m/s².

        NaN or inf raises :class:`NonFiniteError`; an acceleration ≤ 0, or above what the joint
        can reach (:meth:`_bound_accelerations`: its drive's effort over its rotor inertia, at
        most its velocity limit within one command period), is refused (``OUT_OF_RANGE``).
        """
        with self._api_lock:
            self._begin(Capability.ACCEL_CONFIG)
            indices = self._request_joints("set_accel", joint)
            value = self._request_value("set_accel", "accel", accel, indices)
            over = np.flatnonzero(value > self._accel_max[indices])
            if over.size:
                i = int(indices[over[0]])
                expected = (
                    f"at most {self._accel_max[i]:.4g}, the most the joint can reach "
                    f"({self._accel_max_why[i]})"
                )
                raise RequestRejected(
                    "set_accel",
                    RejectReason.OUT_OF_RANGE,
                    f"accel = {value:g}; expected {expected}",
                    joint=self._names[i],
                    index=i,
                    field="accel",
                    value=value,
                    expected=expected,
                )
            values = np.full(indices.size, value)
            self._request_accel(indices, values)
            self._config_accel[indices] = values

    def speed_bounds(self) -> tuple[FloatArray, tuple[str, ...]]:
        """Per joint, the speed bound this driver enforces (rad/s or m/s, a magnitude, joint
        space; ``inf``: none) and what sets it (empty: the joint's velocity limit; else the
        carried range's ``bound_by``, e.g. "the md80's wire range").

        Why public: it is the figure ``set_speed`` refuses above and the limit guard holds the
        joint to (:meth:`_carried_bound`), and a node that watches measured speeds
        (:class:`~jointbus.nodes.safety.limit_watch.LimitWatch`) must judge them against the same
        figure — against the joint's limit alone, a ``can://`` joint without a velocity limit had
        none (``inf``), so its overspeed was never reported and a hold read "speed limit ±inf"."""
        bound, why = self._carried_bound("velocity")
        return bound.copy(), why

    @property
    def config_speeds(self) -> FloatArray:
        """Currently configured speed per joint (a copy), rad/s or m/s."""
        return self._config_speed.copy()

    @property
    def config_accelerations(self) -> FloatArray:
        """Currently configured acceleration per joint (a copy), rad/s² or m/s²."""
        return self._config_accel.copy()

    # ---------------------------------------------------------------- commands

    def position(self, joint: int | str | None, position: float) -> tuple[Saturation, ...]:
        """Move ``joint`` (``None``: every joint) to ``position`` (rad or m), profiled at the
        configured speed and acceleration. Returns the saturations applied (if any)."""
        return self._joint_command(
            Capability.POSITION, "position", joint, position, self._positions
        )

    def positions(self, positions: Sequence[float] | FloatArray) -> tuple[Saturation, ...]:
        """Move every joint to its position (one per joint, actuator order)."""
        return self._array_command(Capability.POSITION, "positions", positions, self._positions)

    def speed(self, joint: int | str | None, speed: float) -> tuple[Saturation, ...]:
        """Move ``joint`` (``None``: every joint) at ``speed`` (rad/s or m/s; 0 stops)."""
        return self._joint_command(Capability.SPEED, "speed", joint, speed, self._speeds)

    def speeds(self, speeds: Sequence[float] | FloatArray) -> tuple[Saturation, ...]:
        """Move every joint at its speed (one per joint)."""
        return self._array_command(Capability.SPEED, "speeds", speeds, self._speeds)

    def home(self, joint: int | str | None = None) -> tuple[Saturation, ...]:
        """Move ``joint`` (``None``: the whole array) to its home position (geometry ``home``)."""
        with self._api_lock:
            self._begin(Capability.HOME)
            indices = self._joints("home", joint)
            targets, saturations = self._limits.apply(
                "position", self._home[indices], indices, command_field="home"
            )
            self._require_power("home", indices)
            self._require_unbraked("home", indices)
            self._write_home(indices, self._to_actuator_position(indices, targets))
            return self._report(saturations)

    def wait_until_still(
        self,
        joints: int | str | Sequence[int | str] | None = None,
        *,
        timeout: float,
    ) -> JointReading:
        """Wait until none of ``joints`` (``None``: every joint) is ``MOVING`` and each one's
        position is known; return that reading.

        A commanded move (``position``, ``speed``, ``home``) is ``MOVING`` from the call on, so
        calling this right after a command waits for the whole move. ``timeout`` is in s of the
        driver's time (wall time; simulated time for a stepping simulator, which this advances);
        when it runs out, :class:`~jointbus.drivers.errors.MotionTimeoutError` names the joints
        still moving. Unknown joints raise :class:`UnknownArrayJointError` before any wait. A
        ``speed`` move that cruises never ends: stop it (``speed(joint, 0)``) first.
        """
        limit = _as_float(timeout)
        if limit is None or not (math.isfinite(limit) and limit >= 0.0):
            raise ValidationError(_API, "timeout", timeout, "a finite duration >= 0 s")
        with self._api_lock:
            self._check_open()
            if joints is None:
                indices = self._all
            elif isinstance(joints, str | int):
                indices = self._joints("wait_until_still", joints)
            else:
                indices = np.array(
                    [self._index("wait_until_still", j) for j in joints], dtype=np.intp
                )
        deadline = self._wait_clock() + limit
        moving_bit = np.uint8(ActuatorState.MOVING)
        while True:
            reading = self.read_joints()
            # A joint whose position is not known this cycle (a missed reply) is not known to be
            # still: keep waiting rather than return a reading without it.
            unsettled = ((reading.state[indices] & moving_bit) != 0) | ~np.isfinite(
                reading.position[indices]
            )
            moving = indices[unsettled]
            if moving.size == 0:
                return reading
            if self._wait_clock() >= deadline:
                types = self._config.types
                raise MotionTimeoutError(
                    limit,
                    [self._names[i] for i in moving.tolist()],
                    moving.tolist(),
                    reading.position[moving].tolist(),
                    reading.velocity[moving].tolist(),
                    linear=[types[i] is ActuatorType.LINEAR for i in moving.tolist()],
                )
            self._check_open()
            self._wait_tick()

    def current(self, joint: int | str | None, current: float) -> tuple[Saturation, ...]:
        """Drive ``joint`` (``None``: every joint) with ``current`` (A, joint sense)."""
        return self._joint_command(Capability.CURRENT, "current", joint, current, self._currents)

    def currents(self, currents: Sequence[float] | FloatArray) -> tuple[Saturation, ...]:
        """Drive every joint with its current (A, one per joint)."""
        return self._array_command(Capability.CURRENT, "currents", currents, self._currents)

    def joints_command(
        self,
        kind: str,
        joints: Sequence[int | str],
        values: Sequence[float] | FloatArray,
    ) -> tuple[Saturation, ...]:
        """``kind`` — ``"position"`` (rad or m), ``"speed"`` (rad/s or m/s) or ``"current"``
        (A) — for the listed ``joints`` (indices or names, each at most once), one value each:
        checked whole and written in one call, so all of them take it or none does (Rock's
        ``Joints`` command, whose joints need not be the whole array). Why not one call per
        joint: a refusal of a later joint (braked, unpowered, a move too slow to plan) came
        after the earlier ones had started."""
        kinds = {
            "position": (Capability.POSITION, self._positions),
            "speed": (Capability.SPEED, self._speeds),
            "current": (Capability.CURRENT, self._currents),
        }
        if kind not in kinds:
            raise ValidationError(_API, "kind", kind, f"one of {', '.join(kinds)}")
        capability, write = kinds[kind]
        with self._api_lock:
            self._begin(capability)
            listed: list[int] = []
            for joint in joints:
                index = self._index(kind, joint)
                if index in listed:
                    raise ValidationError(
                        _API, "joints", joint, "each joint at most once",
                        joint=self._names[index], index=index,
                    )
                listed.append(index)
            if not listed:
                raise LengthMismatchError(_API, "joints", joints, "at least one joint")
            indices = np.array(listed, dtype=np.intp)
            try:
                array = np.array(values, dtype=np.float64)
            except (TypeError, ValueError):
                raise ValidationError(
                    _API, kind, values, f"{indices.size} numbers, one per listed joint"
                ) from None
            if array.shape != (indices.size,):
                raise LengthMismatchError(
                    _API, kind, values, f"{indices.size} values, one per listed joint"
                )
            return write(indices, array, kind)

    def impedance(self, command: ImpedanceCommand) -> tuple[Saturation, ...]:
        """Apply impedance targets to every joint: an
        :class:`~jointbus.drivers.impedance.ImpedanceCommand` (arrays in actuator order, joint
        space).

        Every field must hold one finite value per joint; ``kp`` and ``kd`` must be ≥ 0;
        ``position`` is checked against the position limits, ``velocity`` against the velocity
        limits, ``effort`` against the effort limits (policy), every field against what the
        driver can carry (:meth:`command_ranges`; always refused), then soft limits clamp;
        ``brake`` may only be set on joints with a brake. Errors name the joint (name and index),
        the field, the value and the expectation; a refused command changes nothing.

        A :class:`~jointbus.drivers.impedance.CheckedImpedance` that a node's command check made
        against this array's limits, command ranges and brakes is not checked again (its values
        are; soft limits and power, which depend on the moment, are). Any other command whose
        values all lie within their bounds (the normal case at 500 Hz) is checked with one
        comparison of the five stacked rows against precomputed bounds (NaN fails it); any other
        goes through the per-field check, which names the joint and applies the limit policy.
        """
        with self._api_lock:
            self._begin(Capability.IMPEDANCE)
            ranges = self._command_ranges or self._make_command_ranges()
            if (
                type(command) is CheckedImpedance
                and command.limits is self._config.limits
                and command.ranges is ranges
                and command.has_brake == self._has_brakes_tuple
            ):
                return self._apply_impedance(
                    position=command.position,
                    velocity=command.velocity,
                    effort=command.effort,
                    kp=command.kp,
                    kd=command.kd,
                    brake=command.brake,
                    saturations=[],
                )
            if not isinstance(command, ImpedanceCommand):
                raise ValidationError(
                    _API, "command", command, "an ImpedanceCommand (arrays in actuator order)"
                )
            n = self._n
            for field_name in _IMPEDANCE_FIELDS:
                count = getattr(command, field_name).shape[0]
                if count != n:
                    # named by the first joint without a value (the first extra value's index
                    # when there are too many), as a short /hb50/joint_command is
                    raise LengthMismatchError(
                        _API,
                        field_name,
                        f"{count} values",
                        f"{n} values, one per joint in actuator order ({', '.join(self._names)})",
                        joint=self._names[count] if count < n else None,
                        index=min(count, n),
                    )
            rows = np.vstack(
                (command.position, command.velocity, command.effort, command.kp, command.kd)
            )
            saturations: list[Saturation]
            if (
                np.greater_equal(rows, self._impedance_lower).all()
                and np.less_equal(rows, self._impedance_upper).all()
            ):
                position, velocity, effort = rows[0], rows[1], rows[2]
                saturations = []
            else:
                self._check_gains(rows[3:])
                position, s_pos = self._limits.apply("position", rows[0], command_field="position")
                velocity, s_vel = self._limits.apply("velocity", rows[1], command_field="velocity")
                effort, s_eff = self._limits.apply("effort", rows[2], command_field="effort")
                saturations = s_pos + s_vel + s_eff
                for field_name, values in zip(
                    ("position", "velocity", "effort", "kp", "kd"),
                    (position, velocity, effort, rows[3], rows[4]),
                    strict=True,
                ):
                    self._check_ranges(field_name, self._all, values)
            brake = command.brake
            if brake.any():
                missing = brake & ~self._has_brakes
                if missing.any():
                    i = int(np.flatnonzero(missing)[0])
                    raise LimitError(
                        _API, "brake", True, "False: this actuator has no brake",
                        joint=self._names[i], index=i,
                    )
            return self._apply_impedance(
                position=position,
                velocity=velocity,
                effort=effort,
                kp=rows[3],
                kd=rows[4],
                brake=brake,
                saturations=saturations,
            )

    def _apply_impedance(
        self,
        *,
        position: FloatArray,
        velocity: FloatArray,
        effort: FloatArray,
        kp: FloatArray,
        kd: FloatArray,
        brake: BoolArray,
        saturations: list[Saturation],
    ) -> tuple[Saturation, ...]:
        """Soft limits (at the measured state), power, calibration, the hook: what applies to
        every impedance command once its values are known to be valid (lock held)."""
        if self._any_soft:
            p_meas, v_meas = self._measured_joint_state("impedance")
            position, s = self._clamp_soft_position(self._all, position, "position")
            saturations += s
            vmin, vmax = self._limits.soft_velocity_bounds(p_meas)
            velocity, s = self._clamp(self._all, velocity, vmin, vmax, "velocity (soft limit)")
            saturations += s
            emin, emax = self._limits.soft_effort_bounds(p_meas, v_meas)
            effort, s = self._clamp(self._all, effort, emin, emax, "effort (soft limit)")
            saturations += s
        self._require_power("impedance")
        d = self._calibration.direction
        self._write_impedance(
            ImpedanceTargets(
                kp=kp.copy(),
                kd=kd.copy(),
                position=self._calibration.position_to_actuator(position),
                velocity=d * velocity,
                torque=d * effort,
                brake=brake.copy(),
            )
        )
        return self._report(saturations)

    def _check_gains(self, gains: FloatArray) -> None:
        """Raise for the first non-finite or negative ``kp`` / ``kd`` (rows 0 and 1 of ``gains``),
        naming the joint and index."""
        for row, field_name in enumerate(("kp", "kd")):
            values = gains[row]
            bad = ~np.isfinite(values)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise NonFiniteError(
                    _API, field_name, float(values[i]), "a finite number",
                    joint=self._names[i], index=i,
                )
            negative = values < 0.0
            if negative.any():
                i = int(np.flatnonzero(negative)[0])
                raise LimitError(
                    _API, field_name, float(values[i]), "≥ 0", joint=self._names[i], index=i
                )

    # ---------------------------------------------------------------- command internals

    def _joint_command(
        self,
        capability: Capability,
        field_name: str,
        joint: int | str | None,
        value: float,
        write: _CommandWriter,
    ) -> tuple[Saturation, ...]:
        """One value for ``joint`` (``None``: every joint): check it, then ``write`` it."""
        with self._api_lock:
            self._begin(capability)
            indices = self._joints(field_name, joint)
            values = self._scalar(field_name, value, indices)
            return write(indices, values, field_name)

    def _array_command(
        self,
        capability: Capability,
        field_name: str,
        values: Sequence[float] | FloatArray,
        write: _CommandWriter,
    ) -> tuple[Saturation, ...]:
        """One value per joint (actuator order): check them, then ``write`` them."""
        with self._api_lock:
            self._begin(capability)
            checked = self._vector(field_name, values)
            return write(self._all, checked, field_name)

    def _positions(
        self, indices: IntArray, values: FloatArray, field_name: str
    ) -> tuple[Saturation, ...]:
        targets, saturations = self._limits.apply(
            "position", values, indices, command_field=field_name
        )
        targets, soft = self._clamp_soft_position(indices, targets, field_name)
        self._check_ranges("position", indices, targets, field_name)
        self._require_power(field_name, indices)
        self._require_unbraked(field_name, indices)
        self._write_positions(indices, self._to_actuator_position(indices, targets))
        return self._report(saturations + soft)

    def _speeds(
        self, indices: IntArray, values: FloatArray, field_name: str
    ) -> tuple[Saturation, ...]:
        # The configured speed first: it is the tighter bound (set_speed raises it at most to
        # the velocity limit), so a refusal names the range a retry must fall in. Checked the
        # other way round, a new user's 10 rad/s was told "within [-2.5, 2.5]" and the 2.4 that
        # followed "within [-1.2, 1.2]" (2026-12-06). NaN and ±inf are the limits' check's to
        # refuse, as not finite.
        configured: list[Saturation] = []
        if np.isfinite(values).all():
            cap = self._config_speed[indices]
            values, configured = self._bounded(
                indices, values, -cap, cap, field_name,
                bound="the configured speed; set_speed raises it up to the velocity limit",
            )
        targets, saturations = self._limits.apply(
            "velocity", values, indices, command_field=field_name
        )
        saturations = configured + saturations
        if self._soft_mask[indices].any():
            p_meas, _ = self._measured_joint_state(field_name)
            vmin, vmax = self._limits.soft_velocity_bounds(p_meas)
            targets, soft = self._clamp(
                indices, targets, vmin[indices], vmax[indices], f"{field_name} (soft limit)"
            )
            saturations += soft
        self._check_ranges("velocity", indices, targets, field_name)
        self._require_power(field_name, indices)
        self._require_unbraked(field_name, indices)
        self._write_speeds(indices, self._calibration.direction[indices] * targets)
        return self._report(saturations)

    def _currents(
        self, indices: IntArray, values: FloatArray, field_name: str
    ) -> tuple[Saturation, ...]:
        targets, saturations = self._limits.apply(
            "current", values, indices, command_field=field_name
        )
        self._require_power(field_name, indices)
        self._require_unbraked(field_name, indices)
        self._write_currents(indices, self._calibration.direction[indices] * targets)
        return self._report(saturations)

    def _to_actuator_position(self, indices: IntArray, values: FloatArray) -> FloatArray:
        cal = self._calibration
        return cal.direction[indices] * values + cal.offset[indices]

    def _clamp_soft_position(
        self, indices: IntArray, values: FloatArray, field_name: str
    ) -> tuple[FloatArray, list[Saturation]]:
        """A position target against the soft range, under the policy: ``REJECT`` refuses one
        outside it (LimitError naming "<field> (soft limit)"), ``SATURATE`` clamps it (reported)."""
        if not self._soft_mask[indices].any():
            return values, []
        return self._bounded(
            indices,
            values,
            self._soft_lower[indices],
            self._soft_upper[indices],
            f"{field_name} (soft limit)",
        )

    def _clamp(
        self,
        indices: IntArray,
        values: FloatArray,
        lower: FloatArray,
        upper: FloatArray,
        label: str,
    ) -> tuple[FloatArray, list[Saturation]]:
        """Clamp into [lower, upper] whatever the policy (soft limits), reporting each clamp."""
        outside = (values < lower) | (values > upper)
        if not outside.any():
            return values, []
        applied = np.clip(values, lower, upper)
        return applied, [
            Saturation(
                self._names[int(indices[k])],
                int(indices[k]),
                label,
                float(values[k]),
                float(applied[k]),
            )
            for k in np.flatnonzero(outside)
        ]

    def _bounded(
        self,
        indices: IntArray,
        values: FloatArray,
        lower: FloatArray,
        upper: FloatArray,
        label: str,
        *,
        bound: str = "",
    ) -> tuple[FloatArray, list[Saturation]]:
        """Bounds under the configured policy (reject raises LimitError, saturate clamps).
        ``bound``: what the bound is, said after the range in a refusal and after ``label`` in
        a saturation (the field stays ``label`` in a refusal: the one the caller sent)."""
        outside = (values < lower) | (values > upper)
        if not outside.any():
            return values, []
        note = f" ({bound})" if bound else ""
        if self._config.policy is LimitPolicy.REJECT:
            k = int(np.flatnonzero(outside)[0])
            j = int(indices[k])
            raise LimitError(
                _API,
                label,
                float(values[k]),
                f"within [{lower[k]:g}, {upper[k]:g}]{note}",
                joint=self._names[j],
                index=j,
            )
        return self._clamp(indices, values, lower, upper, f"{label}{note}")

    def _measured_joint_state(self, request: str) -> tuple[FloatArray, FloatArray]:
        position, velocity = self._measured_state()
        cal = self._calibration
        p = cal.position_to_joint(position)
        v = cal.direction * velocity
        unknown = self._soft_mask & ~(np.isfinite(p) & np.isfinite(v))
        if unknown.any():
            i = int(np.flatnonzero(unknown)[0])
            raise RequestRejected(
                request,
                RejectReason.TIMED_OUT,
                "no valid position/velocity measurement for the soft-limit law",
                joint=self._names[i],
                index=i,
                field="position" if not np.isfinite(p[i]) else "velocity",
                value=float(p[i]) if not np.isfinite(p[i]) else float(v[i]),
                expected="a measured (finite) value, for the soft-limit law",
            )
        return p, v

    def _report(self, saturations: Iterable[Saturation]) -> tuple[Saturation, ...]:
        records = tuple(saturations)
        self.last_saturations = records
        if records and self._on_saturation is not None:
            self._on_saturation(records)
        return records

    # ---------------------------------------------------------------- checking helpers

    def _check_open(self) -> None:
        if self._closed:
            raise DriverClosedError(f"{type(self).__name__} is closed")

    def _begin(self, capability: Capability) -> None:
        self._check_open()
        if capability not in self._capabilities():
            raise self._unsupported(capability.value)

    def _unsupported(self, request: str) -> RequestRejected:
        supported = ", ".join(sorted(c.value for c in self._capabilities()))
        return RequestRejected(
            request,
            RejectReason.UNSUPPORTED,
            f"{type(self).__name__} supports: {supported}",
            field="request",
            value=request,
            expected=f"a request {type(self).__name__} supports ({supported})",
        )

    def _require_power(self, request: str, indices: IntArray | None = None) -> None:
        """Refuse motion while the array's power is off — naming the joint when the call named
        one (``indices`` of one joint), else saying all joints are unpowered — or (``indices``)
        while the drive of one of those joints is switched off (:meth:`joint_power`), naming it."""
        if not self._motor_power():
            joint: str | None = None
            index: int | None = None
            if indices is not None and indices.size == 1:
                index = int(indices[0])
                joint = self._names[index]
            n = len(self._names)
            addressed = "" if joint is not None else f"all {n} joints are unpowered; "
            raise RequestRejected(
                request,
                RejectReason.POWERED_OFF,
                f"{addressed}switch motor power on first (power(True))",
                joint=joint,
                index=index,
                field="motor_power",
                value=False,
                expected="True: switch motor power on first (power(True))",
            )
        if indices is None:
            return
        off = ~self._joints_powered()[indices]
        if off.any():
            i = int(indices[int(np.flatnonzero(off)[0])])
            raise RequestRejected(
                request,
                RejectReason.POWERED_OFF,
                "its drive is switched off (joint_power(joint, True), or power(True) for all)",
                joint=self._names[i],
                index=i,
                field="joint_power",
                value=False,
                expected="True: switch its drive on (joint_power(joint, True), or power(True))",
            )

    def _require_unbraked(self, request: str, indices: IntArray) -> None:
        """Refuse motion on a joint whose brake is engaged (like power-off: see the module
        docstring, "Motion while braked")."""
        engaged = self._engaged_brakes()[indices]
        if engaged.any():
            braked = [int(indices[k]) for k in np.flatnonzero(engaged).tolist()]
            i = braked[0]
            others = (
                "braked: " + ", ".join(f"{self._names[j]!r} (index {j})" for j in braked) + "; "
                if len(braked) > 1
                else ""
            )
            raise RequestRejected(
                request,
                RejectReason.BRAKED,
                f"{others}release the brakes first (brakes(False)); a target stored while "
                "braked would make the joint jump on release",
                joint=self._names[i],
                index=i,
                field="brake",
                value=True,
                expected="False: release the brakes first (brakes(False))",
            )

    def _joints(self, request: str, joint: int | str | None) -> IntArray:
        if joint is None:
            return self._all
        return np.array([self._index(request, joint)], dtype=np.intp)

    def _request_joints(self, request: str, joint: int | str | None) -> IntArray:
        """Joints of a request: an unknown one raises :class:`UnknownArrayJointError` (itself a
        ``RequestRejected``), a joint that is neither index nor name ``RequestRejected``."""
        try:
            return self._joints(request, joint)
        except UnknownArrayJointError:
            raise
        except ValidationError as exc:
            raise RequestRejected(
                request,
                RejectReason.UNKNOWN_JOINT,
                str(exc),
                field=exc.field,
                value=exc.value,
                expected=exc.expected,
            ) from None

    def _request_value(
        self, request: str, field_name: str, value: object, indices: IntArray
    ) -> float:
        joint: str | None = None
        index: int | None = None
        if indices.size == 1:
            index = int(indices[0])
            joint = self._names[index]
        number = _as_float(value)
        if number is not None and not math.isfinite(number):
            # NaN / inf is the typed error of every other NaN check (position, kp, ...), naming
            # the joint (the first one for a whole-array request, as a whole-array command does)
            i = 0 if index is None else index
            raise NonFiniteError(
                _API, field_name, number, "a finite number > 0", joint=self._names[i], index=i
            )
        if number is None or number <= 0.0:
            raise RequestRejected(
                request,
                RejectReason.OUT_OF_RANGE,
                f"{field_name} = {value!r}; expected a finite number > 0",
                joint=joint,
                index=index,
                field=field_name,
                value=value,
                expected="a finite number > 0",
            )
        return number

    def _scalar(self, field_name: str, value: object, indices: IntArray) -> FloatArray:
        number = _as_float(value)
        if number is None:
            i = int(indices[0]) if indices.size == 1 else None
            raise ValidationError(
                _API,
                field_name,
                value,
                "a real number",
                joint=self._names[i] if i is not None else None,
                index=i,
            )
        return np.full(indices.size, number)

    def _vector(self, field_name: str, values: object) -> FloatArray:
        if isinstance(values, str | bytes):
            raise ValidationError(_API, field_name, values, "a sequence of numbers")
        try:
            array = np.array(values, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValidationError(
                _API, field_name, values, f"{self._n} numbers, one per joint"
            ) from None
        if array.shape != (self._n,):
            # named by the first joint without a value (the first extra value's index when there
            # are too many), as impedance() does: a trial's positions([0.0] * 5) for six joints
            # named no joint
            count = array.shape[0] if array.ndim == 1 else None
            raise LengthMismatchError(
                _API,
                field_name,
                values,
                f"{self._n} values, one per joint ({', '.join(self._names)}); "
                f"got shape {array.shape}",
                joint=self._names[count] if count is not None and count < self._n else None,
                index=None if count is None else min(count, self._n),
            )
        return array


def _as_float(value: object) -> float | None:
    """``value`` as a float if it is a real number (bools are not), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    return float(value)

