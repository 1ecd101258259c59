"""The array node: any :class:`~jointbus.drivers.ActuatorArray` served on the bus, with safety.

Where it sits: :mod:`jointbus.nodes` (above drivers, runtime and bus). ``jointbus serve URL`` runs
one; the ``bus://`` driver (:mod:`jointbus.drivers.bus`) is its client — Player's server/client
model. Names are :class:`~jointbus.drivers.bus.array_names.ArrayNames` (e.g. ``/arm6/...``). A
robot's own bridge is this node plus the robot's message adapter: hb50's
:class:`~jointbus.robots.hb50.bridge.BridgeNode` subclasses it, adds its wire types (its
``JointCommand`` as a second impedance input, ``BridgeData`` / ``BridgeState`` and their 10 Hz
mirrors, ``hardware_command``) and live parameters through the hooks marked *adapter hook*, and
keeps every rule below.

**Each cycle** (``rate_hz``; 100 Hz for ``jointbus serve``, 500 Hz for hb50's bridge) the node
reads the array once, takes the commands queued since the last cycle, applies the safety rules
below, publishes, and writes the impedance command of the current mode (:class:`StreamMode`). It
publishes ``joint_state`` (Beam Bots ``JointState``, each joint's values shaped by its kind: a
float per scalar joint, a ``Transform2D`` pose and ``Twist2D`` velocity per planar joint the
driver declares — :mod:`jointbus.drivers.planar_joint` — such as the rover's base),
``actarray/data`` (Player data with the state flags), ``joints`` (Rock samples: position, speed,
effort, ``raw`` = current in A, acceleration); ``actarray/geometry`` is latched and re-published
when a speed configuration changes it. Each of the three per-cycle topics is built only while a
subscriber (in this process or over Zenoh) listens, and ``state_hz`` may publish them every n-th
cycle: each is built in one pass from the reading's arrays (the messages' ``from_arrays`` /
``scalar_wire`` builders), ≈ 30 µs for the three of 12 joints, 0.27× the element-by-element
construction they replaced (``bench/bench_array_state.py``); hb50's bridge publishes them at
100 Hz (every 5th cycle, on the stamp of that cycle's ``bridge_data``) and an unobserved one pays
nothing for them.

**Commands.** Player commands (position, multi-position, speed, multi-speed, home, current,
multi-current) and Rock ``Joints`` commands are one-shot: they are applied when they arrive, by
the array's own public methods, so every check of the driver API (unknown joint, wrong length, NaN,
limits, power, capability) applies unchanged. Each has a topic (fire and forget) and a service of
the same name answering :class:`~jointbus.messages.actarray.ActuatorReply` (ACK with the clamped
values, or NACK naming joint, index, field and reason). Player *requests* (power, brakes, speed and
acceleration configuration, one joint's drive — ``joint_power`` —, geometry, describe) are
services only. Impedance commands (the generic ``jointbus_msgs/msg/JointImpedance`` on
``joint_impedance``, and a robot adapter's own type) are a stream: each sample is queued with its
arrival time by the subscription and, on the loop thread, checked and converted once to the device
API's joint-space :class:`~jointbus.drivers.impedance.ImpedanceCommand`, which is all the stream's
safety steps and :meth:`~jointbus.drivers.ActuatorArray.impedance` see.

**What is written each cycle** (:class:`StreamMode`, highest priority first):

- ``estop`` — latched: drives off, brakes engaged where fitted; nothing is written;
- ``off`` — drives off on request (``power off``), or the driver reports them unpowered;
- ``idle`` — no impedance stream: nothing is written, the array does what its last one-shot
  command told it (the array node's state until an impedance command arrives; a one-shot command
  accepted outside ``run`` ends the stream);
- ``hold`` — after drives-on while streaming (a start with ``power_on_start``, power on, an e-stop
  reset with ``rearm_drives_on``): hold the position *measured at that moment* until a command
  sent afterwards arrives (never a stale target);
- ``safe`` — no valid command for the watchdog time: damping only, brakes where fitted;
- ``run`` — the owner's latest valid command; when commands apply again after any of the modes
  above, an owner change, a brake release, a thermal shutdown or damping-only commands
  (``kp = 0``), a target far from the measured pose is ramped to from there
  (:class:`~jointbus.nodes.safety.ReentryRamp`), and a braked joint gets no stiffness, target
  velocity or torque.

**Safety** — the components of :mod:`jointbus.nodes.safety`:

- *Limits and validation*: one-shot commands by the driver API; impedance commands by
  :class:`~jointbus.nodes.safety.CommandCheck` (source allowed, actuator order, lengths,
  finite, limits, gains, brakes) before arbitration; its limits include what the driver can
  carry (:meth:`~jointbus.drivers.ActuatorArray.command_ranges`: a CAN motor model's wire range,
  ``kp`` 0…500 for md80), so such a command is refused whole there and the previous command (or
  the robot's fallback) keeps running. A write the driver still refuses (a bound no declared
  range covers, an error on its bus) is the backstop, and the fallback policy says what it is
  (``rides_through_refusals``): with damping (``jointbus serve``) the same cycle writes the
  safe command and the next accepted command re-enters from the measured pose; with a walking
  robot's (hb50) it is a missed command — the last command the driver took is written again,
  the refused one is no sign of life, and a driver that keeps refusing hands the robot to the
  fallback by the policy's early rule or the watchdog. A Rock ``Joints`` command is checked whole
  against the limits before any joint is commanded, so it is never applied in part.
- *Arbitration* (:class:`~jointbus.nodes.safety.Arbiter`): among impedance sources, the default
  source owns the array and a custom one publishing at ≥ ``takeover_hz`` for
  :attr:`~jointbus.nodes.safety.Arbiter.takeover_s` (0.4 s) takes it over; a source
  that keeps sending for the arbitration window without taking over is told so once (a WARN with
  its rate), as is a second sender using a source name another input already uses (refused). A
  one-shot motion command while the stream runs (``run``, commands within the watchdog time) is
  refused ``OWNED``, naming the owner: the stream's next command would override it at once, so
  an ACK would be untrue; once the stream has been silent for the watchdog time it is accepted
  and ends the stream (``idle``).
- *Watchdog* (:class:`~jointbus.nodes.safety.Watchdog`): an impedance stream silent for
  ``watchdog_s`` (0.25 s) is replaced by the damping-only safe command until the next valid one.
- *Command watchdog* (:class:`~jointbus.drivers.command_expiry.CommandExpiry`): a velocity-type
  command — Player speed / multi-speed (≠ 0), current / multi-current, Rock ``Joints`` in speed or
  raw mode — is a stream that must be renewed within ``command_timeout_s`` (0.25 s, ``jointbus
  serve --command-timeout``): otherwise its joints are brought to rest (a speed-0 command: ramped
  to zero velocity within the joint's configured acceleration, then held where it stopped; a
  driver without speed commands holds them at the measured position) and one WARN on the status
  topic names them (name and index). A position or home command is a move to a target that ends
  by itself: it never expires, and it ends a standing velocity command on its joints, as do
  speed 0, power off and the e-stop.
- *E-stop latch* (:class:`~jointbus.nodes.safety.EStopLatch`): ``estop`` switches motor power off
  and engages brakes where fitted; until ``estop_reset`` every motion command and ``power on`` is
  refused with ``RejectReason.ESTOPPED``, and impedance commands are ignored (one WARN per source
  and stop says so). A reset with nothing latched is refused ``NOT_LATCHED``. An impedance command
  sent before the reset is never applied after it. With ``rearm_drives_on`` (hb50's bridge) the
  reset switches the drives on and holds the measured pose; otherwise (``jointbus serve``) power
  and brakes stay as the stop left them until a client switches power on.
- *Thermal* (:class:`~jointbus.nodes.safety.ThermalGuard`): level changes are reported; impedance
  commands are derated; a joint reaching the shutdown temperature has its own drive switched off
  (:meth:`~jointbus.drivers.ActuatorArray.joint_power`: limp, no torque) while the other joints keep
  running, and motion commands naming it are refused (``POWERED_OFF``, naming it); once it cooled
  below the shutdown threshold minus the hysteresis its drive is switched on again (and a stream
  re-enters it from where it is). A driver without per-joint drive-off (no ``JOINT_POWER``) has
  the joint limp through the derating while a stream runs, and otherwise the whole array's motor
  power switched off. Power-on is refused (``OUT_OF_RANGE``) while a joint is at the shutdown
  level.

**Threads.** Subscriptions only queue (with the node clock's arrival time). The cycle and every
service or one-shot command run under one lock, so a request is decided between two cycles and
the components need no locks of their own; a test drives the node with :meth:`ArrayNode.cycle`
and an injected clock (``run_loop=False``).

**Bad input** is refused whole and changes nothing; the node survives it. Every refusal is a NACK
to a service caller and, for every origin, one ERROR on ``/<ns>/status`` naming the request, the
sender, joint (name and index), field, value, expectation and (a one-shot command or request) the
``RejectReason``, with the same facts as JSON in ``data`` (:func:`refusal_data`, one builder for
impedance and one-shot refusals). The bus names the sender of a sample only when it cannot be
decoded (the publisher's ``node#gid`` label: the text names the node, the JSON keeps the label);
otherwise the report says "a topic publisher" or "a service call". Malformed bytes on a command
topic or in a request are refused too: the report (and the NACK's reason) names the sender and,
for a value the message class refused by index (a NaN in a Player multi-position command: the
class does not know the robot), the joint's name as well.
An impedance sample the message class refused at decode (a NaN, a negative gain, a short array)
is read back from its bytes (:mod:`.unchecked_impedance`) and refused by the command check like
any other, as the same ERROR naming the source node (:meth:`ArrayNode.refusing_at_decode`, which
a robot adapter's own impedance input uses too); bytes that are not even the layout are one
ERROR naming the publisher.
"""

from __future__ import annotations

import enum
import itertools
import json
import math
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Protocol

import numpy as np
import numpy.typing as npt

from jointbus.bus import LATCHED, MAB_RT, RELIABLE, Bus, MalformedPayloadEvent, QosEvent
from jointbus.codec import DecodeError
from jointbus.drivers.actuator_array import ActuatorArray, JointReading
from jointbus.drivers.bus.array_names import DEFAULT_IMPEDANCE_SOURCE, ArrayNames
from jointbus.drivers.bus.errors_on_wire import ack, nack
from jointbus.drivers.capabilities import Capability
from jointbus.drivers.command_expiry import DEFAULT_COMMAND_TIMEOUT_S, CommandExpiry
from jointbus.drivers.command_ranges import COMMAND_RANGE_FIELDS
from jointbus.drivers.errors import (
    DriverError,
    RejectReason,
    RequestRejected,
    UnknownArrayJointError,
    joint_expectation,
)
from jointbus.drivers.impedance import ImpedanceCommand
from jointbus.drivers.limits import JointLimits, LimitPolicy, Saturation
from jointbus.drivers.planar_joint import PlanarJoint, planar_joints_of
from jointbus.math import Transform2D, Twist2D, Wrench2D
from jointbus.messages import jointbus_msgs
from jointbus.messages.actarray.data import ActuatorArrayData
from jointbus.messages.actarray.description import ArrayDescription
from jointbus.messages.actarray.geometry import ArrayGeometry
from jointbus.messages.actarray.reply import ActuatorReply
from jointbus.messages.actarray.requests import BrakesRequest, GeometryRequest, PowerRequest
from jointbus.messages.base import Message
from jointbus.messages.errors import (
    LengthMismatchError,
    MessageError,
    UnknownJointError,
    ValidationError,
)
from jointbus.messages.joint_impedance import JointImpedance
from jointbus.messages.joint_sample import JointSample, Mode
from jointbus.messages.joint_state import JointState
from jointbus.messages.joints import Joints
from jointbus.messages.status import Level
from jointbus.messages.std_msgs import Header, String
from jointbus.nodes.array.unchecked_impedance import decode_unchecked_impedance
from jointbus.nodes.safety.arbiter import (
    BACKOFF_MEMORY_S,
    SILENT,
    Arbiter,
    OwnerChanged,
)
from jointbus.nodes.safety.command_check import CommandCheck, CommandRejected, ImpedanceMessage
from jointbus.nodes.safety.estop import EStopLatch
from jointbus.nodes.safety.fallback import (
    DampingFallback,
    FallbackClock,
    FallbackPolicy,
    FallbackReport,
)
from jointbus.nodes.safety.limit_watch import LIMIT_KINDS, LimitWatch
from jointbus.nodes.safety.reentry import ReentryEngaged, ReentryRamp
from jointbus.nodes.safety.thermal_guard import ThermalGuard, ThermalLevel
from jointbus.nodes.safety.watchdog import (
    SafeModeEntered,
    Watchdog,
    WatchdogEvent,
    safe_command,
)
from jointbus.runtime import CycleInfo, Node, NodeSubscription
from jointbus.runtime.timer import TimerThread

__all__ = [
    "DEFAULT_SOURCE",
    "ArrayNode",
    "ArrayNodeConfig",
    "ImpedanceInput",
    "RefusedSample",
    "StreamMode",
]

#: The impedance source that owns the array when no custom source qualifies.
DEFAULT_SOURCE: Final = DEFAULT_IMPEDANCE_SOURCE

_ALL: Final = jointbus_msgs.ALL_JOINTS
#: Impedance commands buffered between two cycles (500 Hz from a few sources fits many times).
_QUEUE_DEPTH: Final = 256
#: Why an impedance command that arrived was not applied although the checks passed it, as the
#: event counts of ``/<ns>/diagnostics`` name them (``command not applied: <why>``) beside the
#: input totals' ``refused``: ``stale`` (it answers a frame older than the watchdog time),
#: ``fallback`` (the fallback refused it, or its source waits before it may end the fallback
#: again), ``outranked`` (another source owns the array), ``estop`` (ignored while the e-stop is
#: latched, or queued when it latched), ``before reset`` (sent before the last e-stop reset or
#: drive-on), ``stream ended`` (queued when a one-shot command ended the impedance stream),
#: ``queue full`` (pushed out of the node's queue by newer commands before a cycle judged it),
#: ``inactive`` (arrived while the node was not active). Why counted: a user's hb50 trial
#: (2026-12-06) read ``received: 311057, malformed: 3, refused: 12`` while the bridge had
#: dropped about 2 270 stale and fallback-refused commands that no count showed.
NOT_APPLIED: Final = (
    "stale",
    "fallback",
    "outranked",
    "estop",
    "before reset",
    "stream ended",
    "queue full",
    "inactive",
)
#: The event kind of the count of commands not applied for ``why`` (one of :data:`NOT_APPLIED`).
NOT_APPLIED_KIND: Final = "command not applied: {}"
#: The event kind of the count of commands admitted: they passed the checks and arbitration
#: and became the node's command (written in that cycle unless a newer one admitted in the
#: same cycle superseded it, the mode writes something else, or the driver refused the write,
#: which is reported).
ADMITTED_KIND: Final = "command admitted"
#: Status events of one kind get distinct reporter keys modulo this, so none is folded into
#: another unless more than this many happen within the reporter's interval.
_EVENT_KEYS: Final = 64
#: Sources whose run of refused commands is kept (:meth:`ArrayNode._owner_why`): bounded whatever
#: names arrive on the topic.
_REFUSED_SOURCES_KEPT: Final = 64
#: The wait (s) before a source whose first command after a fallback the driver refused may end
#: the fallback again, doubling with each such refusal up to the last (:meth:`ArrayNode.
#: _resume_fallback`); a command the driver takes clears it.
_FIRST_RETRY_S: Final = 1.0
_LAST_RETRY_S: Final = 8.0
#: Where a one-shot command came from when the bus does not name its sender (report text).
_FROM_TOPIC: Final = "a topic publisher"
_FROM_SERVICE: Final = "a service call"
_THERMAL_LEVEL: Final = {
    ThermalLevel.OK: Level.OK,
    ThermalLevel.WARN: Level.WARN,
    ThermalLevel.ERROR: Level.ERROR,
}


class StreamMode(enum.Enum):
    """What the node writes this cycle (highest priority first; see the module docstring).

    The values are the words a robot adapter shows (hb50's ``BridgeState`` ``mode:`` string).
    """

    ESTOP = "estop"
    OFF = "off"
    IDLE = "idle"
    HOLD = "hold"
    SAFE = "safe"
    RUN = "run"


@dataclass(frozen=True, slots=True)
class ArrayNodeConfig:
    """How the node serves its array (SI units).

    ``rate_hz``: cycle, publishing and impedance rate (Hz). ``watchdog_s``: silence of the
    impedance stream before the safe command (s). ``command_timeout_s``: time within which a speed
    or current command must be renewed before its joints are brought to rest (s). ``safe_kd``:
    damping of the safe command (N·m·s/rad); ``hold_kp`` / ``hold_kd``: gains of the hold after
    drives-on. ``kp_max`` / ``kd_max`` bound every impedance command's gains.
    ``default_source`` / ``allowed_sources``: arbitration's default impedance source and the
    allow-list of sources (``None``: any named source). ``takeover_hz``, ``arbitration_window_s``
    and ``fallback_s``: the :class:`~jointbus.nodes.safety.Arbiter`'s timing. Thermal thresholds in
    °C as :class:`ThermalGuard`'s. ``reentry_speed`` (rad/s), ``reentry_gain_time`` (s) and
    ``reentry_tolerance`` (rad) shape an impedance stream that applies again
    (:class:`~jointbus.nodes.safety.ReentryRamp`). ``power_on_start``: switch the drives on and
    hold the measured pose (an impedance stream from the start) when the node is activated.
    ``rearm_drives_on``: an e-stop reset switches the drives on and holds (else power stays off
    until a client switches it on). ``state_hz``: the rate of ``joint_state``, ``actarray/data``
    and ``joints`` (every ``round(rate_hz / state_hz)``-th cycle; ``None``: every cycle).
    """

    rate_hz: float = 100.0
    watchdog_s: float = 0.25
    command_timeout_s: float = DEFAULT_COMMAND_TIMEOUT_S
    safe_kd: float = 1.0
    hold_kp: float = 80.0
    hold_kd: float = 3.0
    kp_max: float = math.inf
    kd_max: float = math.inf
    default_source: str = DEFAULT_SOURCE
    allowed_sources: tuple[str, ...] | None = None
    takeover_hz: float = 10.0
    arbitration_window_s: float = 0.5
    fallback_s: float = 0.1
    warn_c: float = 80.0
    derate_start_c: float = 90.0
    shutdown_c: float = 100.0
    hysteresis_c: float = 20.0
    reentry_speed: float = 1.0
    reentry_gain_time: float = 0.2
    reentry_tolerance: float = 0.1
    power_on_start: bool = False
    rearm_drives_on: bool = False
    state_hz: float | None = None
    estop_stop_s: float = 0.0
    estop_rest_speed: float = 0.3
    estop_rest_s: float = 0.2

    def __post_init__(self) -> None:
        if not (math.isfinite(self.rate_hz) and 0.0 < self.rate_hz <= 2000.0):
            raise ValueError(f"rate_hz = {self.rate_hz!r}; expected 0 < rate ≤ 2000 Hz")
        if self.state_hz is not None and not (
            math.isfinite(self.state_hz) and 0.0 < self.state_hz <= self.rate_hz
        ):
            raise ValueError(
                f"state_hz = {self.state_hz!r}; expected 0 < rate ≤ rate_hz ({self.rate_hz:g} Hz)"
            )
        for name in ("safe_kd", "hold_kp", "hold_kd"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise ValueError(f"{name} = {value!r}; expected a finite number ≥ 0")
        Watchdog.check_timeout(self.watchdog_s)
        CommandExpiry.check_timeout(self.command_timeout_s)
        ThermalGuard.check_thresholds(
            self.warn_c, self.derate_start_c, self.shutdown_c, self.hysteresis_c
        )
        ReentryRamp.check_settings(
            self.reentry_speed, self.reentry_gain_time, self.reentry_tolerance
        )
        Arbiter.check_timing(self.takeover_hz, self.arbitration_window_s, self.fallback_s)
        check_estop_stop(self.estop_stop_s, self.estop_rest_speed, self.estop_rest_s)

    @property
    def estop_category(self) -> int:
        """The e-stop's stop category (IEC 60204-1): 0 (STO, drives off at once) when
        ``estop_stop_s`` is 0, else 1 (damped, then drives off)."""
        return 0 if self.estop_stop_s == 0.0 else 1


def check_estop_stop(stop_s: float, rest_speed: float, rest_s: float) -> None:
    """ValueError unless ``stop_s`` (s, 0 = STO) is finite and in [0, 10], ``rest_speed``
    (rad/s) > 0 and ``rest_s`` (s) ≥ 0, all finite."""
    if not (math.isfinite(stop_s) and 0.0 <= stop_s <= 10.0):
        raise ValueError(
            f"estop_stop_s = {stop_s!r}; expected 0 (category 0: drives off at once) or a "
            "category-1 damped stop of at most 10 s"
        )
    if not (math.isfinite(rest_speed) and rest_speed > 0.0):
        raise ValueError(f"estop_rest_speed = {rest_speed!r}; expected a finite speed > 0 rad/s")
    if not (math.isfinite(rest_s) and rest_s >= 0.0):
        raise ValueError(f"estop_rest_s = {rest_s!r}; expected a finite time ≥ 0 s")


class ImpedanceInput(ImpedanceMessage, Protocol):
    """What the stream needs of an impedance message, whatever its wire type: the
    :class:`~jointbus.nodes.safety.CommandCheck` reads the rest by its field names."""

    @property
    def header(self) -> Header: ...


@dataclass(frozen=True, slots=True)
class RefusedSample:
    """An impedance sample the decoder refused, queued for the loop like a command.

    ``unchecked`` is its content read without checks (``None``: not even the layout), so the loop
    can name what is wrong; ``type_name`` is the wire type expected; ``publisher`` and ``error``
    are the transport's words for it.
    """

    unchecked: ImpedanceInput | None
    type_name: str
    publisher: str
    size: int
    error: str

    def rejection(self, check: CommandCheck) -> CommandRejected:
        """The error to report: the command check's, or "undecodable" naming the publisher."""
        source = ""
        if self.unchecked is not None:
            try:
                check.check(self.unchecked)
            except CommandRejected as rejection:
                return rejection
            source = self.unchecked.source_node
        return CommandRejected(
            source,
            ValidationError(
                self.type_name,
                "payload",
                f"{self.size} bytes from {self.publisher}",
                f"a decodable {self.type_name.rsplit('/', 1)[-1]} ({self.error})",
            ),
        )


_Queued = tuple[int, "ImpedanceInput | RefusedSample", CommandCheck]


class ArrayNode(Node):
    """Serves ``array`` under ``namespace`` (see the module docstring). Call :meth:`start`.

    ``owns_array``: close the array at shutdown. ``timers`` lets a test inject a non-threaded
    :class:`TimerThread` with a fake clock (the node's clock is the timer clock). ``run_loop=False``
    creates no rate loop: the caller runs :meth:`cycle` itself (lock-step with a stepped simulator,
    or a test). ``stamp_ns`` returns the header stamp of what the node publishes (ns since the Unix
    epoch; default the wall clock, as ROS stamps are): a stepped simulator passes its simulated
    time, so consumers move in the robot's time and not in the host's.
    """

    #: The node's role in its lifecycle events ("array active: ..."); an adapter names its own.
    ROLE: ClassVar[str] = "array"
    #: The rate loop's name and whether it spins the last part of each period (sharper wake-ups
    #: for a fast robot loop, at the cost of CPU).
    LOOP_NAME: ClassVar[str] = "array"
    ADAPTIVE_SPIN: ClassVar[bool] = False

    def __init__(
        self,
        array: ActuatorArray,
        bus: Bus,
        *,
        namespace: str,
        config: ArrayNodeConfig | None = None,
        name: str = "array_node",
        owns_array: bool = False,
        timers: TimerThread | None = None,
        run_loop: bool = True,
        stamp_ns: Callable[[], int] | None = None,
        fallback: FallbackPolicy | None = None,
    ) -> None:
        s = config or ArrayNodeConfig()
        self.settings = s
        self.array = array
        self.names = ArrayNames(namespace)
        self._owns_array = owns_array
        self._stamp_ns = stamp_ns
        cfg = array.config
        self._joint_names = array.names
        self._frame_id = cfg.geometry.header.frame_id
        self._array_lock = threading.RLock()
        self._limits = JointLimits(
            cfg.names, cfg.limits, LimitPolicy.REJECT, type_name=Joints.TYPE_NAME
        )
        self._planar = planar_joints_of(array)
        self._has_brake = tuple(a.has_brakes for a in cfg.geometry.actuators)
        self._brakes_supported = False
        self._caps: frozenset[Capability] = frozenset()
        self._lower = np.array([lim.position_min for lim in cfg.limits], dtype=np.float64)
        self._upper = np.array([lim.position_max for lim in cfg.limits], dtype=np.float64)
        self.impedance_check = self.command_check(JointImpedance.TYPE_NAME)
        """Checks and converts each ``JointImpedance`` (the generic impedance input)."""
        self.arbiter = Arbiter(
            s.default_source,
            takeover_hz=s.takeover_hz,
            window_s=s.arbitration_window_s,
            fallback_s=s.fallback_s,
        )
        self.watchdog = Watchdog(s.watchdog_s)
        self.estop = EStopLatch()
        self.thermal = ThermalGuard(
            cfg.names,
            warn_c=s.warn_c,
            derate_start_c=s.derate_start_c,
            shutdown_c=s.shutdown_c,
            hysteresis_c=s.hysteresis_c,
        )
        speed_bounds, speed_bound_by = array.speed_bounds()
        self.limit_watch = LimitWatch(
            cfg.names, cfg.limits, speed_bounds=speed_bounds, speed_bound_by=speed_bound_by
        )
        """Every reading's joints against their limits: the drive's holds and real excursions,
        speeds against the bound the driver enforces (a ``can://`` motor's wire range on a joint
        without a velocity limit: :meth:`ActuatorArray.speed_bounds`)."""
        self.reentry = ReentryRamp(
            cfg.names,
            [lim.velocity_max for lim in cfg.limits],
            speed=s.reentry_speed,
            gain_time=s.reentry_gain_time,
            tolerance=s.reentry_tolerance,
            period=1.0 / s.rate_hz,
        )
        """Shapes the owner's commands after the drives stopped following them."""
        self._safe = safe_command(array.count, s.safe_kd, self._has_brake)
        self.fallback: FallbackPolicy = fallback or DampingFallback(self._safe)
        """What is written when the stream's owner stalls or dies while it ran (see the module
        docstring): damping by default, a robot's own policy where given."""
        self._fallback_active = False
        self._fallback_clock = FallbackClock(1.0 / s.rate_hz)  # seconds it ran, for reports
        #: Cycles of the category-1 e-stop's damped stop so far (``None``: not stopping), and
        #: the consecutive cycles every joint was at rest.
        self._estop_stop_cycles: int | None = None
        self._estop_rest_cycles = 0
        self._estop_stop_since_ns = 0  # node clock at the latch of the damped stop
        #: Velocity-type one-shot commands standing per joint (the command watchdog).
        self._expiry = CommandExpiry(array.count, s.command_timeout_s)
        self._braked = np.zeros(array.count, dtype=np.bool_)  # brakes of the last command run
        self._any_braked = False
        self._limp = np.zeros(array.count, dtype=np.bool_)  # kp = 0 in the last command run
        self._any_limp = False
        #: Whether an impedance stream drives the array (``False``: ``idle``, one-shot control).
        self._streaming = s.power_on_start
        self._idle_cause = "stream start"
        self._hold_cause = "start"
        self._hold_cmd: ImpedanceCommand | None = None
        self._command: ImpedanceCommand | None = None
        self._command_source = ""  # the source_node of ``_command``
        #: Commands that passed the checks but were not applied, by why (:data:`NOT_APPLIED`;
        #: ``inactive`` is the subscriptions' own count), and the admitted ones.
        self._not_applied: dict[str, int] = dict.fromkeys(NOT_APPLIED, 0)
        self.admitted_commands = 0
        """Impedance commands admitted (:data:`ADMITTED_KIND`)."""
        #: Guards the command queue: whoever appends to a full queue counts what it pushes out.
        self._queue_lock = threading.Lock()
        self.command_stamp_ns = 0
        """Header stamp (ns) of the impedance command applied now (0: none yet): a robot adapter
        compares it with its frames' stamps (hb50's bridge measures the sensor-to-command age)."""
        self._commands: deque[_Queued] = deque(maxlen=_QUEUE_DEPTH)
        #: The input whose refusals each check counts (id of the check → its subscription).
        self._input_of_check: dict[int, NodeSubscription[Any]] = {}
        #: Sources whose commands were ignored during the current e-stop (each said once).
        self._ignored_in_estop: set[str] = set()
        #: Per source that does not own the array: since when (ns) its commands are not applied
        #: without a pause longer than the arbitration window, and their arrival times (ns) over
        #: the last window; ``None`` once that was reported (until the next owner change).
        self._not_owner: dict[str, tuple[int, deque[int]] | None] = {}
        # per source: its commands refused since the last one that passed the checks
        self._refused_run: dict[str, int] = {}
        #: Per source name, the wire type it last commanded through and when (ns).
        self._source_inputs: dict[str, tuple[type, int]] = {}
        self._power_off_requested = False
        self._mode = StreamMode.SAFE if self._streaming else StreamMode.IDLE
        self._event_seq = 0
        self._last_reading: JointReading | None = None
        self.last_applied: ImpedanceCommand | None = None
        """The command written to the array in the last cycle (``None``: nothing written)."""
        self.last_applied_source = ""
        """Whose command :attr:`last_applied` is: the owner's ``source_node`` in ``run`` mode, the
        node's own name for hold and safe and while the re-entry ramp shapes the owner's."""
        #: The last command the driver took (any source; ``None``: none since the drives came
        #: on) and its source: what the drives still apply after a write they refused.
        self._taken: tuple[ImpedanceCommand, str] | None = None
        #: Where the owner's life began for its command the driver took last in this run (ns,
        #: :attr:`Watchdog.last_feed_ns`); ``None``: none taken yet in this run.
        self._taken_life_ns: int | None = None
        #: While the driver refuses the owner's commands (riding through, ``rides_through_
        #: refusals``): the life (ns) the watchdog is held back to; ``None``: not refusing.
        self._refusing_life_ns: int | None = None
        #: The arrival and answered frame (ns) of the newest admitted command, to feed the
        #: watchdog with once the driver takes it after refusals.
        self._command_life: tuple[int, int | None] = (0, None)
        #: The source whose admitted command ended the fallback while the driver has taken none
        #: of that run yet, the phase and the fallback's seconds then: the policy is not
        #: cancelled until it does (``_refused_write`` resumes it otherwise); ``None``: no
        #: fallback waits on a first write.
        self._fallback_pending: tuple[str, str, float] | None = None
        #: Per source whose first command after a fallback the driver refused: when (ns, node
        #: clock) it may end the fallback again, and the wait (s) the next refusal sets.
        self._fallback_retry: dict[str, tuple[int, float]] = {}
        self.cycles = 0
        self.cycle_due_ns = 0
        """When the current (or last) cycle was due on the node clock (ns): its loop's deadline,
        or the time it ran when no loop says (:meth:`cycle`'s ``due_ns``)."""
        self.rejected = 0
        """Impedance commands refused (each reported)."""
        self.undecodable = 0
        """Impedance samples (of any input) the decoder refused; each is also counted in
        :attr:`rejected` once a cycle has judged it."""
        #: The array node's per-cycle topics go out every this many cycles (``state_hz``).
        self._state_every = 1 if s.state_hz is None else max(1, round(s.rate_hz / s.state_hz))
        super().__init__(name, bus, namespace=namespace, timers=timers)
        try:
            self._make_endpoints()
            if run_loop:
                self.create_rate_loop(
                    s.rate_hz, self._body, name=self.LOOP_NAME, adaptive_spin=self.ADAPTIVE_SPIN
                )
        except BaseException:
            self.shutdown()
            raise

    def command_check(
        self,
        type_name: str,
        fields: Any = None,
        *,
        limit_type_name: str | None = None,
    ) -> CommandCheck:
        """A :class:`CommandCheck` of this array's impedance commands of wire type ``type_name``
        (``fields``: where that type keeps each quantity; default the generic message's), against
        the array's limits and what its driver can carry (its ``command_ranges()``: a CAN motor
        model's wire range), so a command the driver would refuse at write is refused here."""
        cfg = self.array.config
        s = self.settings
        extra: dict[str, Any] = {} if fields is None else {"fields": fields}
        return CommandCheck(
            cfg.names,
            JointLimits(
                cfg.names,
                cfg.limits,
                LimitPolicy.REJECT,
                type_name=limit_type_name or type_name,
            ),
            kp_max=s.kp_max,
            kd_max=s.kd_max,
            allowed_sources=s.allowed_sources,
            has_brake=self._has_brake,
            ranges=self.array.command_ranges(),
            **extra,
        )

    # ---- wiring --------------------------------------------------------------------------------
    def _make_endpoints(self) -> None:
        n = self.names
        self._pub_state = self.create_publisher(n.joint_state, jointbus_msgs.JointState, MAB_RT)
        self._pub_data = self.create_publisher(n.data, ActuatorArrayData, MAB_RT)
        self._pub_joints = self.create_publisher(n.joints, Joints, MAB_RT)
        self._pub_geometry = self.create_publisher(n.geometry, ArrayGeometry, LATCHED)
        one_shot: dict[str, tuple[type[Message], Callable[[Any], tuple[Saturation, ...]]]] = {
            "position": (jointbus_msgs.ActuatorPositionCommand, self._position),
            "speed": (jointbus_msgs.ActuatorSpeedCommand, self._speed),
            "home": (jointbus_msgs.ActuatorHomeCommand, self._home),
            "current": (jointbus_msgs.ActuatorCurrentCommand, self._current),
            "multi_position": (_multi("MultiPositionCommand"), self._positions),
            "multi_speed": (_multi("MultiSpeedCommand"), self._speeds),
            "multi_current": (_multi("MultiCurrentCommand"), self._currents),
        }
        for method, (msg_type, apply) in one_shot.items():
            self._offer(n.command(method), method, msg_type, apply)
        self._offer(n.joints_command, "joints_command", Joints, self._joints_command)
        requests: dict[str, tuple[type[Message], Callable[[Any], tuple[Saturation, ...]]]] = {
            "power": (PowerRequest, self._power),
            "brakes": (BrakesRequest, self._brakes),
            "joint_power": (jointbus_msgs.ActuatorJointPowerRequest, self._joint_power),
            "speed_config": (jointbus_msgs.ActuatorSpeedConfigRequest, self._speed_config),
            "accel_config": (jointbus_msgs.ActuatorAccelConfigRequest, self._accel_config),
        }
        for method, (msg_type, apply) in requests.items():
            self._serve_ack(n.request(method), method, msg_type, apply)
        self._serve_ack(n.estop, "estop", String, self._estop_request)
        self._serve_ack(n.estop_reset, "estop_reset", String, self._estop_reset_request)
        self.create_service(
            n.request("get_geometry"), GeometryRequest, ArrayGeometry, lambda _r: self._geometry()
        )
        self.create_service(
            n.request("describe"), GeometryRequest, ArrayDescription, lambda _r: self.describe()
        )
        self.impedance_subscription = self.create_subscription(
            n.impedance_command,
            JointImpedance,
            self._on_impedance,
            MAB_RT,
            realtime=True,
            on_event=self.refusing_at_decode(
                decode_unchecked_impedance, JointImpedance.TYPE_NAME, self.impedance_check
            ),
            report_events=False,
        )
        self.count_refusals(self.impedance_check, self.impedance_subscription)

    def count_refusals(self, check: CommandCheck, subscription: NodeSubscription[Any]) -> None:
        """Count the commands ``check`` refuses on ``subscription``'s input totals (the
        ``refused`` of ``/<ns>/diagnostics``) (*adapter hook*: call it for each impedance input
        with the check its commands are queued with)."""
        self._input_of_check[id(check)] = subscription

    # ---- state -----------------------------------------------------------------------------------
    @property
    def mode(self) -> StreamMode:
        """What the node wrote in the last cycle."""
        return self._mode

    @property
    def owner(self) -> str:
        """The impedance source that owned the array at the last evaluation (the cycle's; see
        :attr:`Arbiter.current <jointbus.nodes.safety.arbiter.Arbiter.current>`)."""
        return self.arbiter.current

    @property
    def pending_commands(self) -> int:
        """Impedance commands received and not yet processed by a cycle."""
        return len(self._commands)

    @property
    def estopped(self) -> bool:
        """True while the e-stop is latched."""
        return self.estop.latched

    @property
    def fallback_phase(self) -> str | None:
        """The fallback's phase while it drives the array (``None``: no fallback runs)."""
        return self.fallback.phase if self._fallback_active else None

    @property
    def estop_stopping(self) -> bool:
        """True during a category-1 e-stop's damped stop (latched, drives still on)."""
        return self._estop_stop_cycles is not None

    # ---- impedance inputs (any thread: only queue, with the arrival time) ----------------------
    def _on_impedance(self, cmd: JointImpedance) -> None:
        self.queue_impedance(cmd, self.impedance_check)

    def queue_impedance(self, cmd: ImpedanceInput | RefusedSample, check: CommandCheck) -> None:
        """Queue an adapter's impedance message (or a sample its decoder refused) for the next
        cycle, to be judged by ``check`` (*adapter hook*; any thread). A full queue drops its
        oldest, counted ``queue full`` (a refused sample is already counted malformed)."""
        item = (self.clock(), cmd, check)
        with self._queue_lock:
            commands = self._commands
            if len(commands) == commands.maxlen and not isinstance(commands[0][1], RefusedSample):
                self._not_applied["queue full"] += 1
            commands.append(item)

    def _discard_queued(self, why: str) -> None:
        """Drop the queued commands unjudged, counted not applied for ``why`` (a refused sample
        is already counted malformed)."""
        with self._queue_lock:
            dropped = sum(not isinstance(q[1], RefusedSample) for q in self._commands)
            self._commands.clear()
        self._not_applied[why] += dropped

    def _next_command(self) -> _Queued | None:
        """The oldest queued command, ``None`` when none (under the queue's lock)."""
        with self._queue_lock:
            return self._commands.popleft() if self._commands else None

    @property
    def old_commands(self) -> int:
        """Commands dropped because they answered a frame older than the watchdog time."""
        return self._not_applied["stale"]

    def not_applied_counts(self) -> dict[str, int]:
        """Impedance commands that passed the checks but were not applied since the start, by
        why (:data:`NOT_APPLIED`; ``inactive`` summed over the impedance inputs)."""
        counts = dict(self._not_applied)
        inputs = {id(sub): sub for sub in self._input_of_check.values()}
        counts["inactive"] = sum(sub.dropped_inactive for sub in inputs.values())
        return counts

    def refusing_at_decode(
        self,
        decode_unchecked: Callable[[bytes], ImpedanceInput],
        type_name: str,
        check: CommandCheck,
    ) -> Callable[[QosEvent], None]:
        """The ``on_event`` of an impedance input's subscription (*adapter hook*; pass it with
        ``report_events=False``): a sample of wire type ``type_name`` the decoder refused (a NaN,
        a negative gain, a short array: the message class's own rules) is read back by
        ``decode_unchecked`` (a mirror of the type's layout built without checks, e.g.
        :func:`~.unchecked_impedance.decode_unchecked_impedance`) and queued as a
        :class:`RefusedSample`, so the cycle reports it as ``check`` reports any refused command:
        one ERROR naming the source node, the joint (name and index), the field, the value and
        the expectation, JSON in ``data``, repeats folded like every rejection. Bytes that are
        not even that layout are one ERROR naming the publisher. Every other event is reported
        as any node reports it. Runs on the receiving thread (the read-back stays off the loop).
        """

        def on_event(event: QosEvent) -> None:
            if not isinstance(event, MalformedPayloadEvent):
                self.reporter.record_event(event)
                return
            try:
                unchecked: ImpedanceInput | None = decode_unchecked(event.payload)
            except (DecodeError, ValueError, TypeError):
                unchecked = None
            self.undecodable += 1
            self.queue_impedance(
                RefusedSample(unchecked, type_name, event.publisher, event.size, event.error),
                check,
            )

        return on_event

    # ---- the cycle -------------------------------------------------------------------------------
    def on_activate(self) -> None:
        with self._array_lock:
            try:
                self._caps = frozenset(self.array.capabilities())
            except DriverError as exc:
                self._event(Level.ERROR, "driver", f"driver capabilities unavailable: {exc}")
            self._brakes_supported = Capability.BRAKES in self._caps and any(self._has_brake)
            self._pub_geometry.publish(self._geometry())
            if self.settings.power_on_start and not self.estop.latched:
                self._drives_on(self.clock(), "start")
            self._event(
                Level.OK,
                "lifecycle",
                f"{self.ROLE} active: {self.array.count} actuators at "
                f"{self.settings.rate_hz:g} Hz; default command source "
                f"{self.settings.default_source!r}",
            )

    def on_deactivate(self) -> None:
        """The loop has stopped: a streamed array is left damped rather than on a last target."""
        with self._array_lock:
            if not self._streaming:
                return
            if not self.estop.latched and not self._power_off_requested:
                self._write(self._safe, "deactivate", self.name)
            self._mode = StreamMode.SAFE
            self._event(Level.WARN, "lifecycle", f"{self.ROLE} inactive: drives left in damping")

    def on_shutdown(self) -> None:
        if self._owns_array:
            self.array.close()

    def _body(self, cycle: CycleInfo) -> None:
        self.cycle(self.clock(), cycle.deadline_ns)  # both on the monotonic clock

    def cycle(self, now_ns: int, due_ns: int | None = None) -> None:
        """One cycle at ``now_ns`` (node clock): read → decide → publish → write. ``due_ns``:
        when the cycle was due (its rate loop's deadline, same clock; default ``now_ns``), kept
        as :attr:`cycle_due_ns` for an adapter that measures its pace on the loop's grid."""
        with self._array_lock:
            self.cycles += 1
            self.cycle_due_ns = now_ns if due_ns is None else due_ns
            self.before_cycle()
            try:
                reading = self.array.read_joints()
            except DriverError as exc:  # reported; the next cycle tries again
                self.report(Level.ERROR, f"reading the actuators failed: {exc}", key="read")
                self._report_faults()
                return
            self._report_faults()
            if self.take_requests(reading):
                try:  # the drives may have been switched: decide and publish on their new state
                    reading = self.array.read_joints()
                except DriverError as exc:
                    self.report(Level.ERROR, f"reading the actuators failed: {exc}", key="read")
                    return
            self._last_reading = reading
            self._watch_limits(reading)
            self._take_thermal(reading)
            if self._expiry.any_armed:
                self._expire_commands(reading)
            self._take_joint_commands(now_ns)
            self.arbiter.owner(now_ns)  # a silent owner falls back even when nothing arrives
            new_owner = owner_why = ""
            for change in self.arbiter.take_events():
                new_owner, owner_why = change.new, self._owner_why(change)
                text = f"command owner {change.old!r} -> {change.new!r} ({owner_why})"
                self._event(Level.OK, "owner", text)
                self._not_owner.clear()
            previous = self._mode
            mode = self._decide(reading, now_ns)
            if mode is StreamMode.RUN:
                last_ns = self.watchdog.last_feed_ns
                silence_s = 0.0 if last_ns is None else (now_ns - last_ns) / 1e9
                if silence_s >= self.fallback.early_after_s and self.fallback.early(
                    reading, self.last_applied, silence_s
                ):  # the policy will not wait for the watchdog (a robot mid-stride)
                    self._begin_fallback(reading, silence_s)
                    mode = self._decide(reading, now_ns)
            for event in self.watchdog.take_events():
                ran = previous is StreamMode.RUN and mode is StreamMode.SAFE
                if ran and isinstance(event, SafeModeEntered) and not self._fallback_active:
                    self._begin_fallback(reading, event.silence_s)
                    mode = self._decide(reading, now_ns)
                # after the fallback began: the report says what is written now
                self._event(Level.WARN, "watchdog", self._watchdog_text(event))
            if self._fallback_active and mode not in (StreamMode.SAFE, StreamMode.HOLD):
                self._end_fallback(f"{mode.value}")
            self._begin_reentry(previous, mode, new_owner, reading, owner_why)
            if self._mode is not mode:  # (each attribute set is a Python call: Node.__setattr__)
                self._mode = mode
            if mode is not StreamMode.RUN:  # a refusal spell and its life belong to one run
                self._refusing_life_ns = self._taken_life_ns = None
                if self._fallback_pending is not None and not self._fallback_active:
                    # the run ended before a write (e-stop, drives off): so did the fallback
                    seconds = self._fallback_pending[2]
                    self._fallback_pending = None
                    self.fallback.cancel()
                    self._event(
                        Level.WARN,
                        "fallback",
                        f"fallback ({self.fallback.name}) ended after {seconds:.2f} s: mode "
                        f"{mode.value}",
                    )
            command = None
            source = self._command_source
            if mode is StreamMode.RUN and self._command is not None:
                command = self._shaped(self._command, reading)
                if self.reentry.shaped:  # the ramp's command, not the owner's as sent
                    source = self.name
            try:
                self._publish(reading, now_ns)
            except Exception as exc:  # telemetry must not stop the drives' loop: report, go on
                self.report(
                    Level.ERROR,
                    f"publishing the state of cycle {self.cycles} failed ({type(exc).__name__}: "
                    f"{exc}); the cycle's command is still written",
                    key="publish",
                )
            if self._fallback_active:
                self._fallback_clock.tick(reading.time)
                fallback = self.fallback.command(reading)
                self._write(self.thermal.derate(fallback), "fallback", self.name)
                self._take_fallback_reports()
            elif mode is StreamMode.ESTOP and self._estop_stop_cycles is not None:
                self._estop_stop(reading, now_ns)
            elif mode is StreamMode.HOLD:
                self._write(self.thermal.derate(self._hold()), "hold", self.name)
            elif mode is StreamMode.SAFE:
                self._write(self.thermal.derate(self._safe), "safe", self.name)
            elif command is not None:
                if self._write(self.thermal.derate(command), "command", source):
                    if self._fallback_pending is not None:  # the run is on: the fallback ends
                        ended = self._fallback_pending
                        self._fallback_pending = None
                        self._fallback_retry.pop(ended[0], None)
                        self.fallback.cancel()
                        self._fallback_ended(*ended)
                    if self._refusing_life_ns is not None:  # taken again: alive from this one
                        received_ns, answers = self._command_life
                        self.watchdog.feed(received_ns, answers_ns=answers)
                        self._refusing_life_ns = None
                    self._taken_life_ns = self.watchdog.last_feed_ns
                else:
                    self._refused_write(reading, now_ns)
            else:
                self.last_applied = None

    def _refused_write(self, reading: JointReading, now_ns: int) -> None:
        """The backstop: the driver refused the owner's command that the checks let through (a
        bound its ``command_ranges()`` does not declare, an error on the bus; a motor's wire
        range such as kp 600 over md80's 500 is refused by the command check since
        2026-12-06). Writing nothing left the drives on the last command they took — a velocity
        target moved a joint 0.15 rad in a user's CAN trial — while a stream of refused commands
        kept the watchdog fed, for as long as it came.

        What is written now is the fallback policy's call (:attr:`FallbackPolicy.
        rides_through_refusals`). Damping (``jointbus serve``): the safe command in this cycle,
        and the next accepted command re-enters from the measured pose. A walking robot's: a
        missed command — the last command the driver took is written again and the owner's
        life stays where that command left it, so a driver that keeps refusing hands the robot
        to the fallback by the policy's early rule (hb50 mid-stride: 0.1 s) or the watchdog's
        time, as a stalled controller does (damping every cycle took a trotting hb50 down to
        0.088 m while the bridge said ``run``); one refused write is one cycle on the previous
        command, as a late one is, not a cycle of damping mid-stride. Refusals go on counting
        as no sign of life until the driver takes a command again."""
        if self._fallback_pending is not None:  # the first command after a fallback
            self._resume_fallback(reading, now_ns)
            return
        taken = self._taken
        if not self.fallback.rides_through_refusals or taken is None:
            self._write(self.thermal.derate(self._safe), "safe", self.name)
            self.reentry.begin(self._clipped(reading.position), "a refused command")
            return
        if self._refusing_life_ns is None:
            # Nothing of this run taken yet (the command that ended a fallback, refused): the
            # run's first command starts the count, the drives on the fallback's last command.
            life = self._taken_life_ns
            if life is None:
                life = self.watchdog.last_feed_ns
            self._refusing_life_ns = life if life is not None else now_ns
        self.watchdog.withdraw(self._refusing_life_ns)
        self._write(taken[0], "previous", taken[1])

    def _report_faults(self) -> None:
        """What the driver detected since the last cycle (a CAN motor's missed replies, a lost
        motor, a failed bus: :meth:`ActuatorArray.take_faults`) on the status topic, each fault
        at most once per report interval, its repeats counted."""
        for fault in self.array.take_faults():
            self.report(Level.ERROR if fault.severe else Level.WARN, fault.text, key=fault.key)

    def before_cycle(self) -> None:
        """*Adapter hook*: run first in every cycle, on the loop thread (e.g. staged parameters)."""

    def command_age_s(self, stamp_ns: int) -> float | None:
        """*Adapter hook*: how old (s, on the robot's clock) is a command stamped ``stamp_ns``;
        ``None`` (the default): not known — the stamp is not on this node's clock.

        An adapter whose controllers stamp each command with the frame it answers (hb50's
        bridge) says so here, and then a command answering a frame older than the watchdog time
        is neither applied nor taken as a sign of life (:meth:`_old_command`): a controller
        resumed after a stall, or whose commands waited in a queue, sends a burst of answers to
        frames of the stall — measured in the chaos campaign at 0.1–0.6 s old — which fed the
        watchdog while the controller was stopped and drove the robot with old targets. A command
        of known age that is applied feeds the watchdog from the frame it answers
        (:meth:`~jointbus.nodes.safety.watchdog.Watchdog.feed`), so the owner is seen silent the
        watchdog time after its last frame, however late its last answers arrive."""
        return None

    def take_requests(self, reading: JointReading) -> bool:
        """*Adapter hook*: act on the adapter's queued requests; True if the drives may have been
        switched (the cycle then reads the array again)."""
        return False

    def _decide(self, reading: JointReading, now_ns: int) -> StreamMode:
        if self.estop.latched:
            return StreamMode.ESTOP
        if self._power_off_requested or not reading.motor_power:
            return StreamMode.OFF
        if not self._streaming:
            return StreamMode.IDLE
        if self.estop.holding:
            return StreamMode.HOLD
        if self._fallback_active:
            self.watchdog.expired(now_ns)  # its own report when its time passes
            # quiet: the fallback holds a pose a controller may start from
            return StreamMode.HOLD if self.fallback.quiet else StreamMode.SAFE
        if self.watchdog.expired(now_ns) or self._command is None:
            return StreamMode.SAFE
        return StreamMode.RUN

    def _take_joint_commands(self, now_ns: int) -> None:
        not_applied = self._not_applied
        while (queued := self._next_command()) is not None:
            received_ns, cmd, check = queued
            if isinstance(cmd, RefusedSample):
                # reported as a refusal, counted as one by the input's totals (malformed)
                self._reject(cmd.rejection(check))
                continue
            try:
                command = check.check(cmd)
            except CommandRejected as rejection:
                self._reject(rejection, check)
                continue
            if self._refused_run:  # it sent one that passes the checks
                self._refused_run.pop(cmd.source_node, None)
            if self._name_taken(cmd.source_node, cmd, received_ns):
                self._count_refused(check)
                continue
            # What is never applied is no sign of life and never earns the actuators: a command
            # answering a frame older than the watchdog time, and one the fallback would refuse.
            # Offered first, a controller SIGCONTed after a 1 s stop took the robot back with
            # the stale commands its socket had queued, and under a CPU hog a source whose
            # every command the fallback refused outranked the control node until the robot
            # sat down (a user's trial, 2026-12-06).
            stamp_ns = cmd.header.stamp.to_ns()
            age_s = self.command_age_s(stamp_ns)
            if age_s is not None and age_s > self.watchdog.timeout_s:
                self._old_command(cmd.source_node, age_s)
                continue
            if self._fallback_active and (
                self._retry_waits(cmd.source_node, now_ns)
                or self._fallback_refuses(cmd.source_node, command)
            ):
                not_applied["fallback"] += 1
                continue
            # Arbitration goes on through an e-stop: a source that keeps sending keeps its rank.
            if not self.arbiter.offer(cmd.source_node, received_ns, stamp_ns):
                not_applied["outranked"] += 1
                self._outranked(cmd.source_node, received_ns)
                continue
            if self.estop.latched:
                not_applied["estop"] += 1
                if cmd.source_node not in self._ignored_in_estop:  # once per source and stop
                    self._ignored_in_estop.add(cmd.source_node)
                    self._event(
                        Level.WARN,
                        "estop",
                        f"impedance from {cmd.source_node!r} is ignored while the e-stop is "
                        f"latched ({self.estop.reason}): only commands sent after the reset apply",
                    )
                continue
            if not self.estop.is_fresh(received_ns):
                not_applied["before reset"] += 1
                continue  # sent before the last reset / drive-on: never a stale target
            self.admitted_commands += 1
            # The command that ends a fallback lives from its arrival, not from the frame it
            # answers: the policy has just judged it against this cycle's reading (hb50's:
            # quiet stance, targets at the measured pose). Counted from its frame, a controller
            # back from a stall with answers 0.1-0.25 s old (its backlog, catching up) was
            # silent again in the next cycle, mid-stride by the early rule or a few ms later by
            # the watchdog's time: a second fallback for one stall, its catch-up refused
            # ("fallback: no command for 188 ms" right after "commands resumed", stepped).
            resumed = self._fallback_active
            if resumed:
                self._end_fallback_for(cmd.source_node)  # admitted above, and it owns
            self._command = command
            self._command_source = cmd.source_node
            self.command_stamp_ns = stamp_ns
            if not self._streaming:
                self._streaming = True
            # a command answering a frame of known age lives from that frame (Watchdog.feed)
            answers = None if age_s is None or resumed else now_ns - round(age_s * 1e9)
            self.watchdog.feed(received_ns, answers_ns=answers)
            self._command_life = (received_ns, answers)
            if self._refusing_life_ns is not None:  # no sign of life until the driver takes one
                self.watchdog.withdraw(self._refusing_life_ns)
            if self.estop.holding:
                self.estop.release_hold()
                self._hold_cmd = None
                self._event(
                    Level.OK,
                    "hold",
                    f"hold released: command from {cmd.source_node!r} received after re-arming",
                )

    def _old_command(self, source: str, age_s: float) -> None:
        """A command from ``source`` answering a frame ``age_s`` old (s, more than the watchdog
        time) was dropped: counted, and reported once a second per source (the text is the key's
        repeats folded in)."""
        self._not_applied["stale"] += 1
        self.report(
            Level.WARN,
            f"stale command from {source!r} dropped: it answers a frame {age_s:.3f} s old (more "
            f"than {self.watchdog.timeout_s:g} s): not applied, and no sign that {source!r} "
            "is alive",
            key=f"old command:{source}",
        )

    # ---- the fallback (loop thread) ---------------------------------------------------------
    def _begin_fallback(self, reading: JointReading, silence_s: float) -> None:
        """The owner fell silent while its commands ran: the fallback policy takes over from
        the command written last cycle."""
        self._fallback_active = True
        self._fallback_clock.start(reading.time)
        report = self.fallback.begin(reading, self.last_applied, silence_s)
        if report is not None:
            self._fallback_report(report)
        self._take_fallback_reports()

    def _end_fallback(self, why: str) -> None:
        """The fallback ends without a command: ``why`` (the node's new mode)."""
        self._fallback_active = False
        self.fallback.cancel()
        self._event(
            Level.WARN,
            "fallback",
            f"fallback ({self.fallback.name}) ended after {self._fallback_seconds():.2f} s: "
            f"mode {why}",
        )

    def _fallback_seconds(self) -> float:
        return self._fallback_clock.elapsed  # the driver's seconds (FallbackClock)

    def _fallback_refuses(self, source: str, command: ImpedanceCommand) -> bool:
        """Whether the fallback refuses a valid command of ``source`` now (the policy decides;
        a refusal is one WARN a second per source, repeats counted, with the policy's reason).
        Asked before arbitration: a refused command does not count for its source's rank. The
        owner's command is put to the policy (:meth:`FallbackPolicy.admits`, which may act on a
        refusal); another source's is only asked about (:meth:`FallbackPolicy.refusal`), so a
        source that owns nothing cannot change what the fallback shows the owner."""
        reading = self._last_reading
        if reading is None:
            return False
        if source == self.arbiter.current:
            reason = self.fallback.admits(command, reading)
        else:
            reason = self.fallback.refusal(command, reading)
        if reason is None:
            return False
        self.report(
            Level.WARN,
            f"command from {source!r} not applied during the fallback "
            f"({self.fallback.phase}): {reason}",
            json.dumps(
                {"event": "fallback", "refused": source, "phase": self.fallback.phase}
            ).encode(),
            key=f"fallback-refused:{source}:{reason[:24]}",
        )
        return True

    def _end_fallback_for(self, source: str) -> None:
        """An admitted command of ``source``, which owns the array, ends the fallback — for a
        policy that rides through refusals, once the driver takes it: the policy keeps its state
        and the report waits until then (:meth:`_resume_fallback`), in the same cycle when the
        driver takes it."""
        phase = self.fallback.phase
        self._fallback_active = False
        self._hold_cause = f"fallback ({phase})"
        if self.fallback.rides_through_refusals:
            self._fallback_pending = (source, phase, self._fallback_seconds())
        else:
            self.fallback.cancel()
            self._fallback_ended(source, phase, self._fallback_seconds())

    def _fallback_ended(self, source: str, phase: str, seconds: float) -> None:
        self._event(
            Level.OK,
            "fallback",
            f"fallback ({self.fallback.name}) ended after {seconds:.2f} s in phase {phase}: "
            f"{source!r} commands again",
        )

    def _resume_fallback(self, reading: JointReading, now_ns: int) -> None:
        """The driver refused the first command of the run that ended a fallback: the
        fallback goes on where it was, and that source may end it again only after a wait
        (1 s, doubling to 8 s while the driver keeps refusing its first command).

        Why: the policy admitted the command against the robot (hb50's: a quiet stance, targets
        at the measured pose), but only the driver can say whether the drives take it. A driver
        that refused every command of the control node (a bound it does not declare, a bus
        error on the owner's writes only) ended and restarted hb50's fallback every 0.25 s:
        each new stance began from a body a little lower than the last, so the robot sank
        from 0.326 m to 0.139 m in 6.5 s, never sat, and lay at 0.062 m flipping between
        ``run`` and ``safe`` four times a second (lock-step, 2026-12-06). Resumed, the fallback
        holds, sits and stays sat with the drives on, as for a controller that never came back.
        """
        assert self._fallback_pending is not None
        source, _, _ = self._fallback_pending
        self._fallback_pending = None
        self._fallback_active = True
        self._refusing_life_ns = self._taken_life_ns = None
        _, wait_s = self._fallback_retry.get(source, (0, _FIRST_RETRY_S))
        self._fallback_retry[source] = (
            now_ns + round(wait_s * 1e9),
            min(2 * wait_s, _LAST_RETRY_S),
        )
        self._event(
            Level.WARN,
            "fallback",
            f"the driver refused the first command of {source!r} after the fallback: the "
            f"fallback ({self.fallback.name}) goes on in phase {self.fallback.phase}; "
            f"{source!r} may end it again in {wait_s:g} s",
        )
        self._fallback_clock.tick(reading.time)
        self._write(self.thermal.derate(self.fallback.command(reading)), "fallback", self.name)
        self._take_fallback_reports()

    def _retry_waits(self, source: str, now_ns: int) -> bool:
        """Whether ``source`` must still wait before its commands may end the fallback again
        (:meth:`_resume_fallback`; reported once a second, the wait left in it)."""
        retry = self._fallback_retry.get(source)
        if retry is None or now_ns >= retry[0]:
            return False
        self.report(
            Level.WARN,
            f"command from {source!r} not applied during the fallback ({self.fallback.phase}): "
            f"the driver refused the command with which it last ended the fallback; next try "
            f"in {(retry[0] - now_ns) / 1e9:.1f} s",
            key=f"fallback-retry:{source}",
        )
        return True

    def _take_fallback_reports(self) -> None:
        for report in self.fallback.take_reports():
            self._fallback_report(report)

    def _fallback_report(self, report: FallbackReport) -> None:
        self._event_seq += 1
        self.report(
            Level[report.level],
            report.text,
            report.data(),
            key=f"event:fallback:{self._event_seq % _EVENT_KEYS}",
        )

    def _name_taken(self, source: str, cmd: ImpedanceInput, received_ns: int) -> bool:
        """Refuse a source name that another input (wire type) is using: arbitration ranks
        sources by name, so two senders under one name (a ``bus://`` client's default
        ``control_node`` beside a robot's own control node) would interleave their targets at the
        stream's rate. The input that used the name first keeps it until it has been silent for
        the watchdog time."""
        wire = type(cmd)
        previous = self._source_inputs.get(source)
        if (
            previous is None
            or previous[0] is wire
            or received_ns - previous[1] >= self.watchdog.timeout_s * 1e9
        ):
            self._source_inputs[source] = (wire, received_ns)
            return False
        expected = (
            f"a source name no other sender uses: {source!r} is commanding through "
            f"{_wire_name(previous[0])} (name this sender differently, e.g. "
            f"bus://NS?source=NAME)"
        )
        self._reject(
            CommandRejected(
                source, ValidationError(_wire_name(wire), "source_node", source, expected)
            )
        )
        return True

    def _outranked(self, source: str, received_ns: int) -> None:
        """Say once (per owner) that ``source``'s valid commands are not applied: it has been
        sending for the arbitration window without taking over (e.g. below ``takeover_hz``).
        A source about to take over is not reported: that takes less than the window, unless
        it lost control lately and must send longer (the rule named is its own, back-off
        included).

        The rate named is the source's over the window before the command that completes it:
        the commands that arrived in the ``window_s`` before it, over ``window_s``, saying so, with
        the longest gap between them (the takeover rule also asks for no gap over
        ``fallback_s``). Why: it was the mean from the first command not applied to the latest
        (:class:`~jointbus.nodes.safety.arbiter.RateMeasure`), and a source that sent once and,
        5 s later, began a stream was reported at 0.2 Hz — the rate of its first two commands,
        not of the stream. A pause longer than the window starts the count again, so the report
        waits for a window of the stream. The command that completes the window is not counted
        in it: counted from one arrival to the next, a window ending on a command holds one
        command more than its span's worth (a steady 8.3 Hz source read 10 Hz, the threshold it
        fails)."""
        window_ns = round(self.arbiter.window_s * 1e9)
        seen = self._not_owner.get(source, ())
        if seen is None:
            return
        if not seen or received_ns - seen[1][-1] > window_ns:  # first, or after a pause
            seen = (received_ns, deque())
            self._not_owner[source] = seen
        since, arrivals = seen
        arrivals.append(received_ns)
        while arrivals[0] < received_ns - window_ns:
            arrivals.popleft()
        if received_ns - since < window_ns:
            return
        self._not_owner[source] = None
        count = len(arrivals) - 1  # in [received − window, received)
        gap_ns = max((b - a for a, b in itertools.pairwise(arrivals)), default=0)
        window_s = window_ns / 1e9
        measure = (
            f"{count} command{'s' if count != 1 else ''} arrived in the {window_s:g} s before "
            f"its latest ({count / window_s:.1f} Hz), the longest gap {gap_ns / 1e6:.0f} ms"
        )
        arbiter = self.arbiter
        owner = arbiter.current
        rule = (
            f"at ≥ {arbiter.takeover_hz:g} Hz for {arbiter.takeover_s:g} s with no gap over "
            f"{arbiter.fallback_s * 1e3:g} ms"
        )
        if source == arbiter.default_source:  # a custom source took over: the default waits
            why = (
                f"{owner!r} owns the array (a source sending {rule} has priority); "
                f"{source!r} gets it back when {owner!r} stops or slows down"
            )
        elif owner != arbiter.default_source:  # another custom source owns it
            why = f"{owner!r} owns the array; another source takes over only when it stops"
        else:  # the rate rule, measured as the decision measures it
            needed = arbiter.needed_s(source, received_ns)
            if needed > arbiter.takeover_s:  # it lost control lately: its own, longer rule
                rule = (
                    f"at ≥ {arbiter.takeover_hz:g} Hz for {needed:g} s (it stopped, slowed or "
                    f"was refused, and lost the actuators within {BACKOFF_MEMORY_S:g} s) with no "
                    f"gap over "
                    f"{arbiter.fallback_s * 1e3:g} ms"
                )
            why = f"{owner!r} owns the array, and a source takes over only when it sends {rule}"
        self._event(
            Level.WARN,
            "owner",
            f"commands from {source!r} are not applied: {why} ({source!r}: {measure})",
        )

    def _owner_why(self, change: OwnerChanged) -> str:
        """The arbiter's reason for ``change``, unless the old owner fell silent because this node
        refused what it sent: the arbiter sees only the commands that pass the checks, and a
        user's controller whose every command was refused for 0.3 s (an unknown joint) was
        reported as "'my_ctl' went silent" (a user's trial, 2026-12-06)."""
        refused = self._refused_run.get(change.old, 0)
        if change.reason == SILENT and refused:
            return (
                f"{SILENT}: {change.old!r} sent no command that passed the checks — its last "
                f"{refused} were refused (see the ERROR reports)"
            )
        return change.why()

    def _count_refused(self, check: CommandCheck | None) -> None:
        source = None if check is None else self._input_of_check.get(id(check))
        if source is not None:
            source.note_refused()

    def _reject(self, rejection: CommandRejected, check: CommandCheck | None = None) -> None:
        self._count_refused(check)
        if rejection.source_node:
            run = self._refused_run
            if rejection.source_node in run or len(run) < _REFUSED_SOURCES_KEPT:
                run[rejection.source_node] = run.get(rejection.source_node, 0) + 1
        self.rejected += 1
        data = refusal_data(
            rejection.source_node,
            joint=rejection.joint,
            index=rejection.index,
            field=rejection.field,
            value=repr(rejection.value),
            expected=rejection.expected,
        )
        key = f"reject:{rejection.source_node}:{rejection.field}:{rejection.index}"
        self.report(Level.ERROR, str(rejection), data, key=key)

    def _begin_reentry(
        self,
        previous: StreamMode,
        mode: StreamMode,
        new_owner: str,
        reading: JointReading,
        owner_why: str = "",
    ) -> None:
        """Start a re-entry from the measured pose when commands are applied again after the
        drives did not follow them (idle, hold, safe, off), or when another source took over
        (``owner_why``: the arbiter's reason, named in the WARN — the change itself is an OK,
        which a demo's terminal does not print, and a user whose controller lost the robot
        under load saw only "re-entry after owner change")."""
        if mode is not StreamMode.RUN:
            if self.reentry.active:
                self.reentry.cancel()
            return
        source = None
        if previous is not StreamMode.RUN:
            cause = {
                StreamMode.IDLE: self._idle_cause,
                StreamMode.HOLD: self._hold_cause,
                StreamMode.SAFE: "safe mode (no command for the watchdog time)",
                StreamMode.OFF: "drives off",
                StreamMode.ESTOP: "e-stop reset",  # reset and a fresh command in one cycle
            }[previous]
        elif new_owner:
            why = f" ({owner_why})" if owner_why else ""
            cause, source = f"owner change to {new_owner!r}{why}", new_owner
        else:
            return
        self.reentry.begin(self._clipped(reading.position), cause, source=source)
        self._braked[:] = False
        self._any_braked = False
        self._limp[:] = False
        self._any_limp = False

    def _shaped(self, cmd: ImpedanceCommand, reading: JointReading) -> ImpedanceCommand:
        """The owner's command as it is written this cycle: braked joints get no stiffness, no
        target velocity and no torque (the brake holds them, the drive must not push against
        it); a joint whose brake is released, or that gets stiffness again after commands
        without (``kp = 0``: damping only, nothing held it), starts a re-entry from its measured
        position; the re-entry ramp shapes the rest."""
        # The common case costs one scan of each array, in plain Python: ``0.0 in kp.tolist()``
        # is ``not kp.all()``, ``True in brake.tolist()`` is ``brake.any()``, at ≈ 4 µs against
        # numpy's ≈ 11 µs on a loop thread whose caches each cycle starts cold (flushed before
        # each call, 2026-12-06).
        if self._any_limp or 0.0 in cmd.kp.tolist():
            stiff = cmd.kp > 0.0
            regained = self._limp & stiff
            if regained.any():  # held by nothing until now: it may be anywhere
                self.reentry.begin(self._clipped(reading.position), "stiffness regained", regained)
            self._limp = ~stiff
            self._any_limp = bool(self._limp.any())
        if self._any_braked or True in cmd.brake.tolist():
            brake = cmd.brake
            released = self._braked & ~brake
            if released.any():
                self.reentry.begin(self._clipped(reading.position), "brake release", released)
            self._braked = brake
            self._any_braked = bool(brake.any())
            if self._any_braked:
                cmd = _without_motion(cmd, brake)
        shaped = self.reentry.shape(cmd, self._command_source)
        for event in self.reentry.take_events():
            level = Level.WARN if isinstance(event, ReentryEngaged) else Level.OK
            self._event(level, "reentry", event.describe())
        return shaped

    def _hold(self) -> ImpedanceCommand:
        if self._hold_cmd is None:
            self._hold_cmd = self.estop.hold_command(self.settings.hold_kp, self.settings.hold_kd)
        return self._hold_cmd

    def _clipped(self, positions: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Measured positions clipped into the position limits (NaN stays NaN): a hold target
        must itself be a valid command, and a joint a hair past its limit is held at it."""
        clipped: npt.NDArray[np.float64] = np.clip(positions, self._lower, self._upper)
        return clipped

    def _write(self, cmd: ImpedanceCommand, why: str, source: str) -> bool:
        """Write ``cmd`` (``why``: ``command`` — the owner's — or the node's own ``hold``,
        ``safe``, ``fallback``, ...); False when the driver refused it (reported)."""
        try:
            self.array.impedance(cmd)
        except (DriverError, MessageError) as exc:
            self.last_applied = None
            what = f"the command from {source!r}" if why == "command" else f"the {why} command"
            if why != "command" and _driver_holds_its_own(exc):
                # The driver refuses every command while its own fault handling drives the
                # actuators (a CAN motor lost or reporting an error: every motor on its damping
                # command, reported by the driver as a fault). "writing the safe command failed"
                # read as "damping failed" to a user whose motors were damped (trial, 2026-12-06).
                self.report(
                    Level.WARN,
                    f"the driver refuses {what} while its own fault handling drives the "
                    f"actuators (its fault report says how; {exc})",
                    key=f"write:{why}",
                )
                return False
            then = ""
            if why == "command" and not (
                self.fallback.rides_through_refusals and self._taken is not None
            ):
                then = "; the drives are damped until a command is accepted"
            elif why == "command":  # a missed command (_refused_write)
                then = (
                    "; the driver's own fault handling drives the actuators (its fault report "
                    "says how)"
                    if _driver_holds_its_own(exc)
                    else "; the drives keep the previous command"
                ) + ", and the fallback takes over if the driver keeps refusing"
            self.report(Level.ERROR, f"writing {what} failed: {exc}{then}", key=f"write:{why}")
            return False
        self.last_applied = cmd
        self.last_applied_source = source
        self._taken = (cmd, source)
        if self._expiry.any_armed:
            self._expiry.disarm()  # the impedance stream drives every joint (its own watchdog)
        return True

    # ---- e-stop, power (loop thread or under the lock) -------------------------------------------
    def trigger_estop(self, reason: str) -> None:
        """Latch the e-stop now (in-process callers; over the bus: the ``estop`` service)."""
        with self._array_lock:
            self._trigger_estop(reason, self.clock())

    def _trigger_estop(self, reason: str, now_ns: int, *, strict: bool = False) -> None:
        """Latch; drives off and brakes on. ``strict`` (a request): a driver failure, reported as
        an ERROR like any, is also raised, after the latch and every step were tried."""
        event = self.estop.trigger(reason, now_ns)
        self._command = None
        self._hold_cmd = None
        self._discard_queued("estop")
        self._expiry.disarm()
        if event is None:
            return  # already latched: the first reason stands
        self._ignored_in_estop.clear()
        self._mode = StreamMode.ESTOP
        if self._fallback_active:
            self._fallback_active = False
            self.fallback.cancel()
        reading = self._last_reading
        if (
            self.settings.estop_category == 1
            and reading is not None
            and reading.motor_power
            and not self._power_off_requested
        ):
            # Category 1: damped to rest with the drives on, then off (see _estop_stop).
            self._estop_stop_cycles = 0
            self._estop_rest_cycles = 0
            self._estop_stop_since_ns = now_ns
            self._event(
                Level.ERROR,
                "estop",
                f"{event.describe()} (category 1: damping until every joint is below "
                f"{self.settings.estop_rest_speed:g} rad/s for {self.settings.estop_rest_s:g} s, "
                f"at most {self.settings.estop_stop_s:g} s, then drives off)",
            )
            self._write(self._safe, "e-stop damping", self.name)
            return
        self._event(Level.ERROR, "estop", f"{event.describe()} (category 0: drives off at once)")
        self._drives_off("e-stop", engage_brakes=True, strict=strict)

    def _estop_stop(self, reading: JointReading, now_ns: int) -> None:
        """One cycle of a category-1 e-stop: damping (``kp = 0``, no torque, brakes where fitted)
        until every joint has been at rest for ``estop_rest_s`` or ``estop_stop_s`` has passed,
        then drives off. Nothing an owner sends is applied meanwhile. The bound is kept by the
        node's clock as well as in cycles: a loop that drops slots (a loaded host ran the
        one-process stack at 300 Hz) must not stretch a 2 s stop to 3.3 s."""
        cycles = self._estop_stop_cycles
        if cycles is None:  # pragma: no cover - the caller checked
            return
        cycles += 1
        self._estop_stop_cycles = cycles
        s = self.settings
        velocity = reading.velocity
        at_rest = bool(np.all(np.abs(velocity[np.isfinite(velocity)]) < s.estop_rest_speed))
        self._estop_rest_cycles = self._estop_rest_cycles + 1 if at_rest else 0
        rest_cycles = max(1, round(s.estop_rest_s * s.rate_hz))
        elapsed = max(cycles / s.rate_hz, (now_ns - self._estop_stop_since_ns) / 1e9)
        if self._estop_rest_cycles >= rest_cycles or elapsed >= s.estop_stop_s:
            self._estop_stop_cycles = None
            why = (
                f"every joint below {s.estop_rest_speed:g} rad/s for {s.estop_rest_s:g} s"
                if self._estop_rest_cycles >= rest_cycles
                else f"the {s.estop_stop_s:g} s bound"
            )
            self._drives_off("e-stop", engage_brakes=True)
            self._event(
                Level.WARN,
                "estop",
                f"e-stop category 1: damped stop over after {elapsed:.2f} s ({why}); drives off",
            )
            return
        self._write(self._safe, "e-stop damping", self.name)

    def _reset_estop(self, positions: npt.NDArray[np.float64], now_ns: int) -> None:
        """Re-arm after an e-stop; ``positions`` are the measured ones (rad, the hold target)."""
        if not self.estop.latched:
            self._event(Level.WARN, "estop", "reset ignored: the e-stop is not latched")
            return
        event = self.estop.reset(now_ns, self._clipped(positions).tolist())
        if event is None:  # pragma: no cover - latched was checked above
            return
        self._estop_stop_cycles = None  # a reset mid-stop: re-armed, holding the measured pose
        self._hold_cmd = None
        self._event(Level.OK, "estop", event.describe())
        if not self._streaming or not self.settings.rearm_drives_on:
            # Nothing to hold: no stream drives the array, or power stays as the stop left it
            # until a client switches it on.
            self.estop.release_hold()
            self._streaming = False
            self._idle_cause = "e-stop reset"
        else:
            self._hold_cause = "e-stop reset"
        if self.settings.rearm_drives_on and not self._power_off_requested:
            # Re-armed: drives on, holding the measured pose (a stream's hold, or the drive's own
            # hold where it stands without one).
            self._switch_on("reset", release_brakes=self._streaming)

    def _power_off(self, *, engage_brakes: bool, strict: bool = False) -> None:
        self._power_off_requested = True
        self._estop_stop_cycles = None
        self._command = None
        self._hold_cmd = None
        self._expiry.disarm()
        self._event(Level.WARN, "power", "drives switched off on request (power off)")
        self._drives_off("power off", engage_brakes=engage_brakes, strict=strict)

    def _power_on(self, now_ns: int, why: str, *, strict: bool = False) -> None:
        """Switch the drives on (the caller checked the e-stop): a stream holds the measured pose
        until a command sent after ``now_ns``; otherwise the array holds where it is. ``strict``:
        a driver failure is raised as well as reported."""
        self._power_off_requested = False
        self._expiry.disarm()  # power on holds each joint where it is
        if self._streaming:
            self._drives_on(now_ns, why, strict=strict)
        else:
            self.array.power(True)
            self._idle_cause = why

    def _drives_on(self, now_ns: int, why: str, *, strict: bool = False) -> None:
        """Switch on and hold the measured position until a command sent after ``now_ns``."""
        try:
            measured = self._clipped(self.array.read_joints().position)
        except DriverError as exc:
            self._event(Level.ERROR, "driver", f"{why}: reading the actuators failed: {exc}")
            if strict:
                raise
            return
        self.estop.begin_hold(now_ns, measured.tolist())
        self._hold_cmd = None
        self._hold_cause = f"drives on ({why})"
        self._command = None
        self._streaming = True
        self._switch_on(why, release_brakes=True, strict=strict)

    def _switch_on(self, why: str, *, release_brakes: bool, strict: bool = False) -> None:
        try:
            if release_brakes and self._brakes_supported:
                self.array.brakes(False)
            self.array.power(True)
        except (DriverError, MessageError) as exc:
            self._event(Level.ERROR, "driver", f"{why}: switching the drives on failed: {exc}")
            if strict:
                raise
            return
        self._event(Level.OK, "power", f"{why}: drives on, holding the measured position")

    def _drives_off(self, why: str, *, engage_brakes: bool, strict: bool = False) -> None:
        """Brakes on (where fitted and asked) and power off: both are tried whatever fails;
        each failure is an ERROR, and with ``strict`` the first is raised afterwards."""
        failed: DriverError | MessageError | None = None
        try:
            if engage_brakes and self._brakes_supported:
                self.array.brakes(True)
        except (DriverError, MessageError) as exc:
            self._event(Level.ERROR, "driver", f"{why}: engaging the brakes failed: {exc}")
            failed = exc
        try:
            self.array.power(False)
        except (DriverError, MessageError) as exc:
            self._event(Level.ERROR, "driver", f"{why}: switching the drives off failed: {exc}")
            failed = failed or exc
        self.last_applied = None
        if strict and failed is not None:
            raise failed

    # ---- thermal ---------------------------------------------------------------------------------
    def _take_thermal(self, reading: JointReading) -> None:
        back: list[int] = []
        for event in self.thermal.update(reading.temperature):
            self._event(_THERMAL_LEVEL[event.new], "thermal", event.describe(self.thermal))
            if event.new is ThermalLevel.ERROR:
                self._thermal_drive_off(event.index, reading)
            elif event.old is ThermalLevel.ERROR:
                self._thermal_drive_on(event.index)
                back.append(event.index)
        if back and self._streaming:  # sagged meanwhile: the stream re-enters from where it is
            mask = np.zeros(self.array.count, dtype=np.bool_)
            mask[back] = True
            self.reentry.begin(self._clipped(reading.position), "thermal shutdown cleared", mask)

    def _thermal_drive_off(self, index: int, reading: JointReading) -> None:
        """Joint ``index`` reached the shutdown temperature: its drive off, the others running."""
        try:
            if Capability.JOINT_POWER in self._caps:
                self.array.joint_power(index, False)
                self._expiry.disarm(np.array([index], dtype=np.intp))
            elif not self._streaming and reading.motor_power:
                # no per-joint drive-off and no derated stream to limp it: the whole array
                self.array.power(False)
                self._expiry.disarm()
        except (DriverError, MessageError) as exc:
            self._event(Level.ERROR, "driver", f"thermal drive-off failed: {exc}")

    def _thermal_drive_on(self, index: int) -> None:
        """Joint ``index`` cooled down: its drive on again, holding where it is measured."""
        if Capability.JOINT_POWER not in self._caps:
            return  # derated only, or the array's power was switched off: a client switches it on
        try:
            self.array.joint_power(index, True)
        except (DriverError, MessageError) as exc:  # array power off since: power on restores it
            self._event(
                Level.WARN,
                "thermal",
                f"thermal: {self._joint_names[index]!r} (index {index}) stays off until "
                f"power on: {exc}",
            )

    def event_counts(self) -> dict[str, int]:
        """Limit events so far, by kind (``limit held``, ``limit position``, ``limit speed``),
        all joints, and the impedance commands admitted and not applied by why
        (:data:`ADMITTED_KIND`, :data:`NOT_APPLIED_KIND`): what ``/<ns>/diagnostics`` carries
        beside the status reports. With the input totals of the impedance inputs they account
        for every command: received = refused + not applied (every why) + admitted + the few
        queued for the next cycle (:attr:`pending_commands`)."""
        counts = {f"limit {kind}": self.limit_watch.total(kind) for kind in LIMIT_KINDS}
        for why, count in self.not_applied_counts().items():
            counts[NOT_APPLIED_KIND.format(why)] = count
        counts[ADMITTED_KIND] = self.admitted_commands
        return counts

    # ---- limits on every reading ---------------------------------------------------------------
    def _watch_limits(self, reading: JointReading) -> None:
        """Report each limit event that begins with this reading: a drive's hold as a WARN, a
        measured excursion past a limit as an ERROR (:mod:`~jointbus.nodes.safety.limit_watch`),
        with the facts as JSON. The limit that holds a joint is the drive's word
        (``reading.speed_limited``). Repeats of one joint's event at one limit within a second
        are counted in one report; a hold at its speed limit and then at the end of its range
        are two reports, whenever they come."""
        events = self.limit_watch.update(
            reading.position, reading.velocity, reading.state, reading.speed_limited
        )
        for event in events:
            level = Level.ERROR if event.excursion else Level.WARN
            data = json.dumps(event.data()).encode()
            key = f"limit:{event.kind}:{event.quantity}:{event.index}"
            self.report(level, event.describe(), data, key=key)

    # ---- command watchdog ----------------------------------------------------------------------
    def _expire_commands(self, reading: JointReading) -> None:
        """Bring to rest the joints whose speed or current command was not renewed in time."""
        late = self._expiry.expired(self.clock() * 1e-9)
        if not late.size:
            return
        speed = Capability.SPEED in self._caps
        for i in late.tolist():
            try:
                if speed:  # profiled to rest within the configured acceleration, then held
                    self.array.speed(i, 0.0)
                else:
                    self.array.position(i, float(reading.position[i]))
            except (DriverError, MessageError) as exc:
                # powered off or braked since: nothing drives the joint; say why not stopped
                text = f"command watchdog stop refused: {exc}"
                self.report(Level.WARN, text, key=text)
        joints = ", ".join(f"{self._joint_names[i]!r} (index {i})" for i in late.tolist())
        text = (
            f"command watchdog: no speed or current command for "
            f"{self._expiry.timeout_s * 1e3:.0f} ms; bringing to rest: {joints}"
        )
        self.report(Level.WARN, text, key=text)

    # ---- publishing ------------------------------------------------------------------------------
    def header(self) -> Header:
        """The header of this cycle's publications: stamped by ``stamp_ns`` or the wall clock."""
        stamp = self._stamp_ns
        if stamp is None:
            return Header.now(self._frame_id)
        return Header.at_ns(stamp(), self._frame_id)

    def _publish(self, r: JointReading, now_ns: int) -> None:
        header = self.header()
        if self._state_every == 1 or self.cycles % self._state_every == 0:
            self._publish_state(r, header)
        self.publish_robot(r, now_ns, header)

    def _publish_state(self, r: JointReading, header: Header) -> None:
        """``actarray/data``, ``joint_state`` and ``joints`` of one reading, each while observed;
        each is built in one pass from the reading's arrays (the messages' ``from_arrays`` /
        ``scalar_wire`` builders: the same messages and errors as their constructors)."""
        if self._pub_data.observed:
            self._pub_data.publish(r.to_data(self._frame_id, header))
        if self._pub_state.observed:
            self._pub_state.publish(self._joint_state(header, r))
        if self._pub_joints.observed:
            self._pub_joints.publish(
                Joints.from_arrays(
                    header,
                    r.names,
                    position=r.position,
                    speed=r.velocity,
                    effort=r.effort,
                    raw=r.current,
                    acceleration=r.acceleration,
                )
            )

    def publish_robot(self, reading: JointReading, now_ns: int, header: Header) -> None:
        """*Adapter hook*: publish the robot's own state messages of this cycle (``header`` is
        the one the generic topics carry)."""

    def _joint_state(self, header: Header, r: JointReading) -> jointbus_msgs.JointState:
        """The ``joint_state`` record of one reading; each quantity — positions, velocities,
        efforts — is reported only when every one of it is measured (finite), as Beam Bots
        reports a quantity for all joints or none (``JointState`` holds no NaN). A motor's
        missed reply reads NaN for that cycle (``REPLY_TIMEOUT`` in ``actarray/data`` and
        ``joints``, which say which joint): its positions once stopped this node's loop for good
        while anything subscribed ``joint_state`` (a user's CAN trial, 2026-12-06)."""
        if not self._planar:
            return JointState.scalar_wire(
                header,
                r.names,
                r.position if _all_finite(r.position) else _NOT_REPORTED,
                r.velocity if _all_finite(r.velocity) else _NOT_REPORTED,
                r.effort if _all_finite(r.effort) else _NOT_REPORTED,
            )
        return _shaped_state(
            header,
            r.names,
            r.position.tolist(),
            r.velocity.tolist(),
            r.effort.tolist(),
            planar=self._planar,
        ).to_wire()

    def _data(self, r: JointReading) -> ActuatorArrayData:
        """Player's array data of one reading, stamped now (a reply's state)."""
        return r.to_data(self._frame_id, self.header())

    # ---- reports -------------------------------------------------------------------------------
    def _event(self, level: Level, kind: str, text: str) -> None:
        """One status event; distinct keys so consecutive events are never folded together."""
        self._event_seq += 1
        self.report(level, text, key=f"event:{kind}:{self._event_seq % _EVENT_KEYS}")

    def _report_refusal(
        self, method: str, error: BaseException, origin: str, sender: str = "", prefix: str = ""
    ) -> None:
        """Report a refused one-shot command or request as a refused impedance command is
        reported: one ERROR naming the request, who sent it, the :class:`RejectReason` and the
        error's joint (name and index), field, value and expectation, the same facts as JSON in
        ``data`` (:func:`refusal_data`). ``sender`` is the publisher's label (``node#gid``) when
        known: the text names its node, the JSON keeps the label; else (no label, or a bare
        ``gid …`` of a publisher not yet discovered) ``origin`` says where the command came from
        ("a topic publisher", "a service call"). ``prefix`` goes before the
        error in the text (what was refused: the malformed payload). Identical repeats are
        rate-limited (the text is the key)."""
        facts = nack(method, error)  # the facts the caller's NACK carries, from the same error
        # a label without a node (``gid …``: the sample came before the publisher's liveliness
        # token, a race a `topic pub --once` wins one time in two) names no one a user knows
        node, named, _gid = sender.partition("#")
        who = repr(node) if named else origin
        text = f"{method} from {who} refused ({facts.reason}): {prefix}{error}"
        data = refusal_data(
            sender,
            joint=facts.joint[0] if facts.joint else None,
            index=facts.index[0] if facts.index else None,
            field=facts.field,
            value=facts.value,
            expected=facts.expected or facts.detail,
            request=method,
            reason=facts.reason,
        )
        self.report(Level.ERROR, text, data, key=text)

    # ---- services and one-shot commands (service / subscription threads, under the lock) -------
    def _offer(
        self,
        name: str,
        method: str,
        msg_type: type[Message],
        apply: Callable[[Any], tuple[Saturation, ...]],
    ) -> None:
        """A one-shot command: a topic (fire and forget) and a service of the same name."""
        self._serve_ack(name, method, msg_type, apply)
        inputs: list[NodeSubscription[Any]] = []  # the subscription, once made (its totals)

        def on_event(event: QosEvent) -> None:
            # A value the message class refused at decode is a refusal like any other (naming
            # the joint and the sender), not the generic malformed-payload WARN.
            # Not noted as refused here: the input's totals count every malformed sample so.
            if isinstance(event, MalformedPayloadEvent) and event.cause is not None:
                self._report_refusal(
                    method,
                    self._named_error(event.cause),
                    _FROM_TOPIC,
                    event.publisher,
                    prefix=f"malformed payload ({event.size} bytes): ",
                )
            else:
                self.reporter.record_event(event)

        def on_command(msg: Any) -> None:
            if not self._execute(method, apply, msg, _FROM_TOPIC).accepted:
                for subscription in inputs:
                    subscription.note_refused()

        inputs.append(
            self.create_subscription(
                name, msg_type, on_command, RELIABLE, on_event=on_event, report_events=False
            )
        )

    def _named_error(self, exc: Exception) -> Exception:
        """The message-layer error behind a decode failure, with its joint named (see
        :meth:`~jointbus.messages.errors.ValidationError.naming`); ``exc`` itself if there is
        none."""
        cause = exc if isinstance(exc, ValidationError) else exc.__cause__
        if isinstance(cause, ValidationError):
            return cause.naming(self._joint_names)
        return exc

    def _serve_ack(
        self,
        name: str,
        method: str,
        msg_type: type[Message],
        apply: Callable[[Any], tuple[Saturation, ...]],
    ) -> None:
        self.create_service(
            name,
            msg_type,
            ActuatorReply,
            lambda m: self._execute(method, apply, m, _FROM_SERVICE),
            decode_error_text=lambda exc: str(self._named_error(exc)),
        )

    def _execute(
        self, method: str, apply: Callable[[Any], tuple[Saturation, ...]], msg: Any, origin: str
    ) -> ActuatorReply:
        """Run one command or request under the node's lock: ACK, or NACK reported on status
        (``origin``: where it came from, for the report: the bus does not name the sender of a
        decoded sample or of a service call)."""
        try:
            with self._array_lock:
                saturations = apply(msg)
                state = self._data(self.array.read_joints())
        except (DriverError, MessageError, ValueError, TypeError) as exc:
            self._report_refusal(method, exc, origin)
            return nack(method, exc)
        return ack(method, saturations, state)

    # ---- one-shot commands ---------------------------------------------------------------------
    def _motion(self, method: str) -> None:
        """Refuse motion while the e-stop is latched, or while an impedance stream drives the
        array: its next command (2 ms later on a 500 Hz robot) would override the one-shot one,
        which would be ACKed and never carried out. Once the stream has been silent for the
        watchdog time (safe mode), a one-shot command takes the array and ends the stream."""
        if self.estop.latched:
            raise self._estopped(method)
        now = self.clock()
        if self._mode is StreamMode.RUN and not self.watchdog.expired(now):
            raise RequestRejected(
                method,
                RejectReason.OWNED,
                f"{self.arbiter.current!r} streams impedance commands to this array; a "
                f"one-shot command applies once that stream has been silent for "
                f"{self.watchdog.timeout_s:g} s",
                field="owner",
                value=self.arbiter.current,
                expected=f"no impedance stream (silent for ≥ {self.watchdog.timeout_s:g} s)",
            )

    def _estopped(self, method: str) -> RequestRejected:
        """The refusal of ``method`` while the e-stop is latched (its reason is the detail)."""
        return RequestRejected(
            method,
            RejectReason.ESTOPPED,
            self.estop.reason,
            field="estop",
            value="latched",
            expected="not latched: reset the e-stop first (estop_reset)",
        )

    def _end_stream(self, cause: str) -> None:
        """End the impedance stream (an accepted one-shot command): the array does what it was
        told last, and the stream's next command re-enters from the measured pose."""
        if not self._streaming:
            return
        self._streaming = False
        self._idle_cause = cause
        self._command = None
        self._discard_queued("stream ended")
        if self.estop.holding:
            self.estop.release_hold()
            self._hold_cmd = None
        if self.reentry.active:
            self.reentry.cancel()

    def _wire_joint(self, request: str, wire_joint: int) -> int | None:
        """Player's wire joint (``-1`` = all) as the driver API's (``None`` = all), checked here:
        a network sender can name a joint by its index only, so its refusal expects an index (or
        ``-1``), not the name a Python caller of the driver may also pass. ``request`` is the
        driver call the wire request becomes (``set_speed`` for ``speed_config``), as the
        driver's own refusals of that request name it."""
        if wire_joint == _ALL:
            return None
        if not 0 <= wire_joint < self.array.count:
            names = self.array.names
            raise UnknownArrayJointError(
                request, wire_joint, names, expected=joint_expectation(names, wire=True)
            )
        return int(wire_joint)

    def _indices(self, joint: int | None) -> npt.NDArray[np.intp]:
        """The joints a command named (``None``: all), once the array accepted it."""
        if joint is None:
            return np.arange(self.array.count, dtype=np.intp)
        return np.array([self.array.index(joint)], dtype=np.intp)

    def _commanded(
        self, indices: npt.NDArray[np.intp], *, renewed: npt.NDArray[np.bool_] | bool
    ) -> None:
        """Accepted for ``indices``: a velocity-type command where ``renewed`` (the command
        watchdog watches it), a command that ends by itself elsewhere; it ends an impedance
        stream."""
        self._end_stream("one-shot command")
        mask = np.broadcast_to(np.asarray(renewed, dtype=np.bool_), indices.shape)
        self._expiry.arm(indices[mask], self.clock() * 1e-9)
        self._expiry.disarm(indices[~mask])

    def _position(self, m: Any) -> tuple[Saturation, ...]:
        self._motion("position")
        joint = self._wire_joint("position", m.joint)
        out = self.array.position(joint, m.position)
        self._commanded(self._indices(joint), renewed=False)
        return out

    def _speed(self, m: Any) -> tuple[Saturation, ...]:
        self._motion("speed")
        joint = self._wire_joint("speed", m.joint)
        out = self.array.speed(joint, m.speed)
        self._commanded(self._indices(joint), renewed=m.speed != 0.0)
        return out

    def _home(self, m: Any) -> tuple[Saturation, ...]:
        self._motion("home")
        joint = self._wire_joint("home", m.joint)
        out = self.array.home(joint)
        self._commanded(self._indices(joint), renewed=False)
        return out

    def _current(self, m: Any) -> tuple[Saturation, ...]:
        self._motion("current")
        joint = self._wire_joint("current", m.joint)
        out = self.array.current(joint, m.current)
        self._commanded(self._indices(joint), renewed=True)
        return out

    def _positions(self, m: Any) -> tuple[Saturation, ...]:
        self._motion("positions")
        out = self.array.positions(m.positions)
        self._commanded(self._indices(None), renewed=False)
        return out

    def _speeds(self, m: Any) -> tuple[Saturation, ...]:
        self._motion("speeds")
        out = self.array.speeds(m.speeds)
        self._commanded(self._indices(None), renewed=np.asarray(m.speeds) != 0.0)
        return out

    def _currents(self, m: Any) -> tuple[Saturation, ...]:
        self._motion("currents")
        out = self.array.currents(m.currents)
        self._commanded(self._indices(None), renewed=True)
        return out

    def _joints_command(self, cmd: Joints) -> tuple[Saturation, ...]:
        """A Rock command: one mode for every sample; checked whole before any joint moves.

        A refusal names the joint by its name and its index *in the array*, as every other
        refusal does, and the entry of the command in its field (``samples[1]``): the index
        used to be the entry's position for some checks and the array's for others, so
        ``(index 1)`` and ``(index 2)`` could name one joint (a user's trial, 2026-12-06)."""
        indices: list[int] = []
        for i, name in enumerate(cmd.names):
            if name not in self._joint_names:
                raise UnknownJointError(name, self._joint_names, field=f"names[{i}]")
            index = self._joint_names.index(name)
            if name in cmd.names[:i]:
                raise LengthMismatchError(
                    Joints.TYPE_NAME,
                    f"names[{i}]",
                    name,
                    f"each joint at most once (also names[{cmd.names.index(name)}])",
                    joint=name,
                    index=index,
                )
            indices.append(index)
        if not indices:
            raise LengthMismatchError(Joints.TYPE_NAME, "names", (), "at least one joint")
        modes = [
            _sample_mode(cmd.names[i], indices[i], i, s) for i, s in enumerate(cmd.samples)
        ]
        mode = modes[0]
        for i, other in enumerate(modes):
            if other is not mode:
                raise ValidationError(
                    Joints.TYPE_NAME,
                    f"samples[{i}]",
                    f"mode {other.name}",
                    f"mode {mode.name} like samples[0] (one mode per command)",
                    joint=cmd.names[i],
                    index=indices[i],
                )
        values = np.array([s.get_field(mode) for s in cmd.samples], dtype=np.float64)
        field = {Mode.POSITION: "position", Mode.SPEED: "velocity", Mode.RAW: "current"}.get(mode)
        if field is None:
            raise RequestRejected(
                "joints_command",
                RejectReason.UNSUPPORTED,
                f"mode {mode.name}; the array accepts position, speed and raw (current, A)",
                field="samples",
                value=mode.name,
                expected="mode POSITION, SPEED or RAW (current, A)",
            )
        self._motion("joints_command")
        idx = np.array(indices, dtype=np.intp)
        self._limits.apply(field, values, idx, command_field=mode.name.lower())
        renewed = {
            Mode.POSITION: np.zeros(len(indices), dtype=np.bool_),
            Mode.SPEED: values != 0.0,
            Mode.RAW: np.ones(len(indices), dtype=np.bool_),
        }[mode]
        if len(indices) == self.array.count and indices == list(range(self.array.count)):
            whole = {
                Mode.POSITION: self.array.positions,
                Mode.SPEED: self.array.speeds,
                Mode.RAW: self.array.currents,
            }[mode]
            saturations = whole(values)
            self._commanded(idx, renewed=renewed)
            return saturations
        kind = {Mode.POSITION: "position", Mode.SPEED: "speed", Mode.RAW: "current"}[mode]
        saturations = self.array.joints_command(kind, indices, values)  # all or none
        self._commanded(idx, renewed=renewed)
        return saturations

    # ---- requests ------------------------------------------------------------------------------
    def _refuse_while_hot(self, method: str, joints: npt.NDArray[np.intp]) -> None:
        """Refuse switching on ``joints`` while one is at the thermal shutdown level."""
        levels = self.thermal.levels
        cool = self.thermal.shutdown_c - self.thermal.hysteresis_c
        for i in joints.tolist():
            if levels[i] is ThermalLevel.ERROR:
                raise RequestRejected(
                    method,
                    RejectReason.OUT_OF_RANGE,
                    f"over temperature; wait until it cooled below {cool:g} °C",
                    joint=self._joint_names[i],
                    index=i,
                    field="temperature",
                    value=self._temperature(i),
                    expected=f"below {cool:g} °C (cooled after the thermal shutdown)",
                )

    def _temperature(self, index: int) -> float:
        """Joint ``index``'s last measured temperature, °C (NaN before the first reading)."""
        reading = self._last_reading
        return math.nan if reading is None else float(reading.temperature[index])

    def _power(self, m: PowerRequest) -> tuple[Saturation, ...]:
        """Player's power request: off switches the drives off (brakes are their own request);
        on is refused while the e-stop is latched or a joint is over temperature."""
        if not m.on:
            self._power_off(engage_brakes=False, strict=True)
            return ()
        if self.estop.latched:
            raise self._estopped("power")
        self._refuse_while_hot("power", self._indices(None))
        self._power_on(self.clock(), "power on", strict=True)
        return ()

    def _joint_power(self, m: Any) -> tuple[Saturation, ...]:
        """One joint's drive (``joint_power``): refused on while the e-stop is latched, as power
        on is, and for a joint the thermal guard switched off until it cooled down."""
        joint = self._wire_joint("joint_power", m.joint)
        if m.on and self.estop.latched:
            raise self._estopped("joint_power")
        indices = self._indices(joint)
        if m.on:
            self._refuse_while_hot("joint_power", indices)
        self.array.joint_power(joint, m.on)
        self._expiry.disarm(indices)  # off: limp; on: holds where it is
        if m.on and self._streaming:  # limp meanwhile: the stream re-enters it from where it is
            reading = self._last_reading
            if reading is not None:
                mask = np.zeros(self.array.count, dtype=np.bool_)
                mask[indices] = True
                self.reentry.begin(self._clipped(reading.position), "joint power on", mask)
        return ()

    def _brakes(self, m: BrakesRequest) -> tuple[Saturation, ...]:
        """Player's brakes request. A release while the stream runs re-enters the stream's
        target from the measured pose; a release once the stream has gone silent (safe mode or
        its fallback, which brake every fitted joint each cycle) ends the stream, as a one-shot
        command does — else the next safe cycle would brake the joint again, and a one-shot
        command on it, refused while braked, could never end the stream: only a power cycle
        freed the array."""
        self.array.brakes(m.engaged)
        if m.engaged or not self._streaming:
            return ()
        if self._mode is StreamMode.RUN and not self.watchdog.expired(self.clock()):
            reading = self._last_reading
            if reading is not None:
                self.reentry.begin(self._clipped(reading.position), "brake release")
        else:
            self._end_stream("brake release")
        return ()

    def _watchdog_text(self, event: WatchdogEvent) -> str:
        """The watchdog's report: what the node writes now — a robot's own fallback and its
        phase (hb50's bridge said "safe mode (damping)" on every stall while its fallback
        trotted the robot to a stop and held a stance), or the safe command, naming the joints
        it brakes and what frees them (a client told only "damping" found its braked joints
        refusing one-shot commands)."""
        fallback = self.fallback
        if (
            isinstance(event, SafeModeEntered)
            and self._fallback_active
            and not isinstance(fallback, DampingFallback)
        ):
            return event.describe(f"fallback ({fallback.name}) in phase {fallback.phase}")
        text = event.describe()
        braked = [i for i, fitted in enumerate(self._has_brake) if fitted]
        if not isinstance(event, SafeModeEntered) or not braked or not self._brakes_supported:
            return text
        names = ", ".join(f"{self.array.names[i]!r} ({i})" for i in braked)
        return f"{text}, brakes on {names} until brakes(False) or a new impedance command"

    def _speed_config(self, m: Any) -> tuple[Saturation, ...]:
        self.array.set_speed(self._wire_joint("set_speed", m.joint), m.speed)
        self._pub_geometry.publish(self._geometry())
        return ()

    def _accel_config(self, m: Any) -> tuple[Saturation, ...]:
        self.array.set_accel(self._wire_joint("set_accel", m.joint), m.accel)
        return ()

    def _geometry(self) -> ArrayGeometry:
        with self._array_lock:
            return self.array.geometry()

    def describe(self) -> ArrayDescription:
        """Names, limits, accelerations, policy, capabilities and what the driver can carry
        (the ``describe`` service; a ``bus://`` client checks its commands against all of it)."""
        cfg = self.array.config
        ranges = self.array.command_ranges()
        carried: dict[str, Any] = {}
        if ranges.bounded:
            carried = {
                "command_fields": COMMAND_RANGE_FIELDS,
                "command_min": tuple(ranges.lower.ravel().tolist()),
                "command_max": tuple(ranges.upper.ravel().tolist()),
                "command_bound_by": ranges.bound_by,
            }
        return ArrayDescription(
            names=cfg.names,
            position_min=tuple(s.position_min for s in cfg.limits),
            position_max=tuple(s.position_max for s in cfg.limits),
            velocity_max=tuple(s.velocity_max for s in cfg.limits),
            effort_max=tuple(s.effort_max for s in cfg.limits),
            current_max=tuple(s.current_max for s in cfg.limits),
            acceleration=tuple(self.array.config_accelerations.tolist()),
            policy=cfg.policy.value,
            capabilities=tuple(sorted(c.value for c in self.array.capabilities())),
            **carried,
        )

    # ---- e-stop services -----------------------------------------------------------------------
    def _estop_request(self, m: String) -> tuple[Saturation, ...]:
        self._trigger_estop(m.data or "estop", self.clock(), strict=True)
        return ()

    def _estop_reset_request(self, m: String) -> tuple[Saturation, ...]:
        if not self.estop.latched:
            raise RequestRejected(
                "estop_reset",
                RejectReason.NOT_LATCHED,
                "nothing to reset",
                field="estop",
                value="not latched",
                expected="latched (a reset clears a latched e-stop)",
            )
        reading = self._last_reading
        if reading is not None:
            measured = reading.position
        else:
            measured = np.full(self.array.count, math.nan, dtype=np.float64)
        self._reset_estop(measured, self.clock())
        return ()


def _without_motion(cmd: ImpedanceCommand, braked: npt.NDArray[np.bool_]) -> ImpedanceCommand:
    """``cmd`` with ``kp``, velocity and effort zero on the ``braked`` joints (``kd`` kept:
    damping only resists motion)."""
    keep = ~braked
    return ImpedanceCommand(
        cmd.position,
        np.where(keep, cmd.velocity, 0.0),
        np.where(keep, cmd.effort, 0.0),
        np.where(keep, cmd.kp, 0.0),
        cmd.kd,
        cmd.brake,
    )


def _sample_mode(joint: str, index: int, entry: int, sample: JointSample) -> Mode:
    """The one command mode of a Rock sample (``entry`` of the command, for joint ``index`` of
    the array); a sample with none or several set is refused naming its joint, its index and
    the entry (``samples[entry]``; NaN = unset)."""
    try:
        mode = sample.mode()
    except MessageError as exc:  # several fields set
        raise ValidationError(
            Joints.TYPE_NAME,
            f"samples[{entry}]",
            f"{', '.join(sample.set_fields())} set",
            f"exactly one of position, speed, effort, raw, acceleration set ({exc})",
            joint=joint,
            index=index,
        ) from None
    if mode is Mode.UNSET:
        raise ValidationError(
            Joints.TYPE_NAME,
            f"samples[{entry}]",
            "no field set (all NaN)",
            "exactly one of position, speed, effort, raw, acceleration set (NaN = unset): "
            "the sample's command mode",
            joint=joint,
            index=index,
        )
    return mode


def refusal_data(
    source_node: str,
    *,
    joint: str | None,
    index: int | None,
    field: str,
    value: str,
    expected: str,
    **context: str,
) -> bytes:
    """The JSON ``data`` of a refused command's status report: who sent it (``source_node``:
    the impedance command's source node, a publisher's ``node#gid`` label, ``""`` unknown), the
    joint (name and index, ``null`` when none is named), the field, the value (its ``repr``) and
    the expectation, plus ``context`` (a one-shot command's ``request`` and ``reason``). One
    builder, so a tool reading ``/<ns>/status`` parses every refusal alike."""
    facts: dict[str, str | int | None] = {
        "source_node": source_node,
        "joint": joint,
        "index": index,
        "field": field,
        "value": value,
        "expected": expected,
    }
    facts.update(context)
    return json.dumps(facts).encode()


def _wire_name(wire: type) -> str:
    """A message class's ROS type name (``jointbus_msgs/msg/JointImpedance``), else its name."""
    name: str = getattr(wire, "TYPE_NAME", wire.__name__)
    return name


#: An empty column: a quantity not reported.
_NOT_REPORTED: Final = np.empty(0, dtype=np.float64)


def _all_finite(values: npt.NDArray[np.float64]) -> bool:
    """Whether every value is finite (a finite sum, one C loop, settles the common case; for
    12 values this is cheaper than numpy's ``isfinite(...).all()``)."""
    listed: list[float] = values.tolist()
    return math.isfinite(sum(listed)) or all(map(math.isfinite, listed))


def _shaped_state(
    header: Header,
    names: tuple[str, ...],
    positions: list[float],
    velocities: list[float],
    efforts: list[float],
    *,
    planar: tuple[PlanarJoint, ...],
) -> JointState:
    """Beam Bots' JointState: a float per scalar joint, Transform2D / Twist2D / Wrench2D per
    planar joint (in the order of its first actuator). A quantity is reported only if every value
    of it is measured (finite): a planar value cannot hold NaN, and Beam Bots reports a quantity
    for all joints or none."""
    grouped = {j.x: j for j in planar}
    members = {i for j in planar for i in j.indices}
    order: list[int | PlanarJoint] = []
    for i in range(len(names)):
        if i in grouped:
            order.append(grouped[i])
        elif i not in members:
            order.append(i)

    def shaped(values: list[float], planar_type: Any) -> tuple[Any, ...]:
        if not all(math.isfinite(v) for v in values):
            return ()
        return tuple(
            planar_type(*(values[k] for k in item.indices))
            if isinstance(item, PlanarJoint)
            else values[item]
            for item in order
        )

    return JointState(
        names=tuple(item.name if isinstance(item, PlanarJoint) else names[item] for item in order),
        positions=shaped(positions, Transform2D),
        velocities=shaped(velocities, Twist2D),
        efforts=shaped(efforts, Wrench2D),
        header=header,
    )


def _multi(name: str) -> type[Message]:
    from jointbus.messages.actarray import commands

    cls: type[Message] = getattr(commands, name)
    return cls


def _driver_holds_its_own(exc: Exception) -> bool:
    """Whether a refused write says the driver itself drives the actuators now: a refusal for a
    driver fault or a device that stopped answering (``DRIVER_FAULT``, ``TIMED_OUT``), which a
    driver such as ``can://`` answers by putting every motor on its own safe command."""
    return isinstance(exc, RequestRejected) and exc.reason in (
        RejectReason.DRIVER_FAULT,
        RejectReason.TIMED_OUT,
    )
