"""What the terminal monitor shows, as plain data: joints, bridge, nodes, topic rates, events.

Where it sits: :mod:`jointbus.tools.monitor`, below the textual app (:mod:`.app`) and fed by
:mod:`.feed` (or directly by a test). It knows messages, not the bus and not the terminal, so every
decision the screen shows — which flags are decoded, when a node counts as STALE, how a rate is
measured, what the e-stop and arming state are — is testable without either.

:class:`MonitorModel` is fed messages with their arrival time (monotonic ns) and answers
:meth:`MonitorModel.snapshot`, an immutable :class:`MonitorSnapshot` for one screen refresh. It is
not thread-safe: one thread feeds and reads it (the app's refresh timer, which also polls the feed).

- **Joints** come from the newest ``BridgeData`` (position rad, velocity rad/s, effort N·m,
  temperature °C and the quick-status word decoded into :class:`JointStatusFlag` names).
- **A served array** (``jointbus serve``: the generic array node, no hb50 bridge) has none of
  the bridge's topics: once its ``joint_state`` arrives and no bridge message has (nor bridge
  topics, :meth:`MonitorModel.on_bridge_published`), the snapshot is an array's
  (:class:`ArraySummary`): joints from ``joint_state`` (names, positions, velocities, efforts),
  motor power, actuator state flags and temperatures from ``actarray/data``, LOST after
  ``state_timeout_s`` of silence — and no bridge, robot or ``BridgeData`` line, which such a
  namespace can never fill (new-user trial, 2026-12-06).
- **Bridge**: ``BridgeState`` (the 10 Hz mirror) gives drives enabled (*arming*) and the status
  strings the bridge writes — ``owner: <node>``, ``mode: <mode>``, ``estop: <reason>`` while the
  e-stop is latched, ``thermal <LEVEL>: <joint> (index i)`` — which are parsed here.
- **Robot and bridge state go stale.** A mirror that has not arrived for ``state_timeout_s``
  (0.5 s = five periods of the 10 Hz mirrors) is shown as what it is — ``robot: UNKNOWN``,
  ``bridge: LOST`` with its age and what it last said — never as the live state of a node that
  may be dead (a SIGKILLed control node's last ``STAND`` stayed on screen before). A monitor
  started after the control node died receives no ``RobotState`` at all (the mirror is not
  latched): once it has listened for ``state_timeout_s`` (:meth:`MonitorModel.on_listening`,
  called by the feed) the robot is ``UNKNOWN`` too, with how long it listened in vain — before,
  ``monitor --once`` printed no robot line, where docs/SAFETY.md promised UNKNOWN.
- **Nodes**: one row per node that sent a heartbeat. A node is STALE after ``liveliness_timeout_s``
  (1.5 s, the runtime's rule) without one, SHUTDOWN after its farewell heartbeat; the lifecycle
  state is the heartbeat's ``data``. The monitor judges silence itself from arrival times rather
  than running a :class:`jointbus.runtime.LivelinessMonitor`: that is a node which publishes its
  verdicts on the status topic, and a viewer must not add reports (or a node) to the robot's bus.
  It *reads* those verdicts instead: a STALE report on the status topic (``data`` = the node's
  name, as the bridge's monitor publishes it ≈ 0.15 s after a SIGKILL, through Zenoh's liveliness
  tokens) marks the node STALE at once, until a heartbeat of it arrives after the report. The
  reports also appear among the events. A monitor started after a node died reads the same
  verdict from the supervisors' latched table (``/<ns>/node_health``,
  :meth:`MonitorModel.on_node_health`): the dead node is listed STALE, with the age of its last
  heartbeat, instead of being absent. That age is the entry's ``silent_s`` (the silence when the
  verdict was made) plus the table's age when it arrived
  (:meth:`~jointbus.runtime.NodeHealthTable.silent_s_at`, what ``jointbus node list`` prints),
  then counted on this monitor's clock; a node whose heartbeat nobody saw (known by its token or
  a STALE report alone) has no age, and the monitor says so rather than count one from the
  arrival of the news.
  A supervisor's verdict is taken back by its own OK about the node (``OK: heartbeat back``): a
  user's ``monitor --plain`` showed ``node bridge_node: STALE (active, last heartbeat 0.7 s ago)``
  for 0.5 s, holding a (false) STALE report of the SIGCONTed control node although that node's
  "OK: heartbeat back" had followed in the same millisecond and a heartbeat 0.7 s old is within
  the timeout. And as the runtime's monitor (:mod:`jointbus.runtime.liveliness`), this one
  blames no node for its own stall: a snapshot that comes late — more than the usual gap between
  two snapshots plus ``timeout - 1 s`` (0.5 s) — gives every node a fresh timeout from then.
- **A replayed heartbeat is no sign of life.** A node stamps each heartbeat with the wall clock
  when it sends it (``Header.now()``), and ``jointbus play`` republishes a recording's messages
  as they were recorded, stamps included. A heartbeat stamped more than ``liveliness_timeout_s``
  before it arrived (by this host's wall clock) cannot show that its node is alive now — by the
  runtime's own rule such a node is already STALE — so the node is REPLAYED, with how old the
  stamp was, and the snapshot's first line says the robot shown is played back, not live: a
  user's monitor fed by ``jointbus play`` showed the recorded ``array_node`` OK, as a live robot.
  (A clock that far off between two hosts reads the same; the line names both causes.) A live
  heartbeat of the node afterwards makes it OK again.
- **Topic rates** are measured over the last ``rate_window_s`` from cumulative message counters:
  publisher counters of topics of this process, read at each refresh (:meth:`MonitorModel.count`),
  and arrival counters of the others, each sample dated by the arrival of its last message
  (:meth:`MonitorModel.arrived`), so that the rate is messages − 1 over the span between the first
  and the last arrival — the wait for a new subscription to be matched is not counted as silence.
  A topic with no rate shows why (``note``: not received, and the reason), ``latched`` (every
  publisher offers it transient-local: published on change), ``— (1 msg)`` (too few messages),
  ``— (none for 3.2 s)`` (it stopped), or ``-`` while it is not counted yet; a topic the monitor
  stopped receiving shows no rate (its old one would be stale). Topics nobody publishes are left
  out (the feed leaves out the monitor's own publishers).
- **Events**: the newest ``max_events`` reports of the status topic, newest first.
"""

from __future__ import annotations

import enum
import math
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from jointbus.bus import TopicInfo
from jointbus.messages.actarray import ActuatorArrayData, ActuatorState
from jointbus.messages.joint_kind import JointKind
from jointbus.messages.jointbus_msgs import JointState
from jointbus.robots.hb50.messages import (
    JOINT_ERROR_MASK,
    BridgeData,
    BridgeState,
    JointStatusFlag,
    Level,
    RobotState,
    Status,
)
from jointbus.robots.hb50.messages.bridge_status import BridgeStatus
from jointbus.runtime import DEFAULT_LIVELINESS_TIMEOUT_S, HEARTBEAT_SHUTDOWN, NodeHealthTable

__all__ = [
    "DEFAULT_STATE_TIMEOUT_S",
    "FLAG_LABELS",
    "ArrayJointRow",
    "ArraySummary",
    "BridgeSummary",
    "EventRow",
    "JointRow",
    "MonitorModel",
    "MonitorSnapshot",
    "NodeRow",
    "NodeState",
    "RobotSummary",
    "TopicRow",
    "describe_flags",
]

_NS_PER_S: Final = 1_000_000_000
#: Age (s) after which the robot's and the bridge's 10 Hz state mirrors count as stale: five
#: periods, so one or two late mirrors on a loaded host do not flicker the screen.
DEFAULT_STATE_TIMEOUT_S: Final = 0.5

#: Short labels of the quick-status bits, in bit order (they fit a table cell).
FLAG_LABELS: Final[dict[JointStatusFlag, str]] = {
    JointStatusFlag.MAIN_ENCODER_ERROR: "main-encoder",
    JointStatusFlag.OUTPUT_ENCODER_ERROR: "output-encoder",
    JointStatusFlag.CALIBRATION_ENCODER_ERROR: "calib-encoder",
    JointStatusFlag.BRIDGE_ERROR: "mosfet-bridge",
    JointStatusFlag.HARDWARE_ERROR: "hardware",
    JointStatusFlag.COMMUNICATION_ERROR: "communication",
    JointStatusFlag.MOTION_ERROR: "motion",
    JointStatusFlag.TARGET_REACHED: "target-reached",
}


def describe_flags(word: int) -> str:
    """The set bits of a quick-status word as labels (``"ok"`` when none; reserved bits as
    ``bit N``), errors first, so the cell reads ``communication, motion``."""
    labels = [label for flag, label in FLAG_LABELS.items() if word & flag]
    known = 0
    for flag in FLAG_LABELS:
        known |= flag
    labels.extend(f"bit {bit}" for bit in range(16) if word & ~known & (1 << bit))
    return ", ".join(labels) if labels else "ok"


@dataclass(frozen=True, slots=True)
class JointRow:
    """One actuator: SI values (NaN = not reported), temperature °C, the quick-status word."""

    name: str
    index: int
    position: float  # rad
    velocity: float  # rad/s
    effort: float  # N·m
    temperature: int  # °C
    status: int  # JointStatusFlag bits

    @property
    def flags(self) -> str:
        """The decoded quick-status word (:func:`describe_flags`)."""
        return describe_flags(self.status)

    @property
    def has_error(self) -> bool:
        """True when an error bit (not just ``target-reached``) is set."""
        return bool(self.status & JOINT_ERROR_MASK)


@dataclass(frozen=True, slots=True)
class ArrayJointRow:
    """One joint of a served actuator array, from its ``joint_state`` (SI values of a single-DoF
    joint; NaN = not reported) and, when the array's ``actarray/data`` has a row for it, the
    actuator's state flags and temperature (°C, NaN = not reported).

    A planar or floating joint has no single position: ``pose`` gives it (``x +0.100 y -0.200
    θ +0.300`` for a planar joint, the translation for a floating one) and the floats are NaN."""

    name: str
    index: int
    kind: JointKind
    position: float  # rad or m
    velocity: float  # rad/s or m/s
    effort: float  # N·m or N
    pose: str = ""
    state: str = ""  # ActuatorState flag names ("" = no actarray/data row for it)
    temperature: float = math.nan  # °C

    @property
    def has_error(self) -> bool:
        """True when the actuator reports itself stalled or its reading stale."""
        return "STALLED" in self.state or "STALE" in self.state


@dataclass(frozen=True, slots=True)
class ArraySummary:
    """A served actuator array (``jointbus serve``, the generic array node): its joints from the
    newest ``joint_state``, ``age_s`` since it arrived, ``stale`` when older than the model's
    ``state_timeout_s``; ``motor_power`` from the newest ``actarray/data`` (None: none arrived)."""

    joints: tuple[ArrayJointRow, ...]
    age_s: float
    stale: bool
    motor_power: bool | None

    @property
    def power_text(self) -> str:
        """``motor power on`` / ``off`` / ``unknown`` (no ``actarray/data``)."""
        if self.motor_power is None:
            return "motor power unknown (no actarray/data)"
        return f"motor power {'on' if self.motor_power else 'off'}"


@dataclass(frozen=True, slots=True)
class BridgeSummary:
    """The bridge's state from its latest ``BridgeState``; ``age_s`` since it arrived."""

    owner: str
    mode: str
    drives_enabled: bool
    estop_latched: bool
    estop_reason: str
    thermal: tuple[str, ...]
    other: tuple[str, ...]
    battery: float  # % (NaN = not reported)
    bus_voltage: float  # V
    up_time_s: int
    age_s: float
    stale: bool = False  # no BridgeState for longer than the model's ``state_timeout_s``

    @property
    def arming(self) -> str:
        """``ARMED`` when the drives are energised, ``DISARMED`` otherwise."""
        return "ARMED" if self.drives_enabled else "DISARMED"

    @property
    def estop(self) -> str:
        """``LATCHED (<reason>)`` or ``clear``."""
        if not self.estop_latched:
            return "clear"
        return f"LATCHED ({self.estop_reason})" if self.estop_reason else "LATCHED"


@dataclass(frozen=True, slots=True)
class RobotSummary:
    """The control node's state machine from its latest ``RobotState``; ``stale`` when it is
    older than the model's ``state_timeout_s`` (its publisher may be dead: the mode is unknown).

    ``received`` False: no ``RobotState`` arrived in the ``age_s`` seconds the monitor has
    listened (longer than ``state_timeout_s``; ``stale`` then, the mode fields empty)."""

    motion_mode: str
    motion_type: str
    motion_gait: str
    age_s: float
    stale: bool = False
    received: bool = True

    @property
    def unknown_text(self) -> str:
        """Why the mode is unknown (for a stale summary): ``no RobotState for 2.0 s; last said
        STAND`` or ``no RobotState in the 2.0 s this monitor listened``."""
        if not self.received:
            return f"no RobotState in the {self.age_s:.1f} s this monitor listened"
        return f"no RobotState for {self.age_s:.1f} s; last said {self.motion_mode}"


class NodeState(enum.Enum):
    """What a node's heartbeats say."""

    OK = "OK"
    STALE = "STALE"
    SHUTDOWN = "SHUTDOWN"
    #: Its last heartbeat was stamped more than the liveliness timeout before it arrived: played
    #: back from a recording (``jointbus play``), not sent by a live node (module docstring).
    REPLAYED = "REPLAYED"


@dataclass(frozen=True, slots=True)
class NodeRow:
    """One node: its state, lifecycle state, seconds since its last heartbeat arrived (None: no
    heartbeat of it seen, here or by a supervisor), heartbeats received here, and how long before
    its arrival the last one was stamped (s, by this host's wall clock; None: not known)."""

    name: str
    state: NodeState
    lifecycle: str
    age_s: float | None
    heartbeats: int
    stamp_lag_s: float | None = None

    @property
    def age_text(self) -> str:
        """``last heartbeat 2.6 s ago``, ``no heartbeat seen``, or for a REPLAYED node
        ``last heartbeat 0.4 s ago, stamped 41.2 s before it arrived``."""
        if self.age_s is None:
            return "no heartbeat seen"
        text = f"last heartbeat {self.age_s:.1f} s ago"
        if self.state is NodeState.REPLAYED and self.stamp_lag_s is not None:
            text += f", stamped {self.stamp_lag_s:.1f} s before it arrived"
        return text


@dataclass(frozen=True, slots=True)
class TopicRow:
    """One topic: type, publisher count, measured rate (Hz; None = not measured here, and
    ``note`` says why when it is known), the messages counted (None: not counted here) and
    whether every publisher offers it latched (transient-local: published on change, not at a
    rate)."""

    name: str
    type_name: str
    publishers: int
    rate_hz: float | None
    note: str = ""
    messages: int | None = None
    latched: bool = False

    @property
    def rate_text(self) -> str:
        """``"500.0 Hz"``, the reason no rate is measured, ``"latched"`` (a latched topic with no
        rate), ``"— (1 msg)"`` (counted, too few for a rate), or ``"-"`` (not counted yet)."""
        if self.rate_hz is not None:
            return f"{self.rate_hz:.1f} Hz"
        if self.note:
            return self.note
        if self.latched:
            return "latched"
        if self.messages is not None:
            return f"— ({self.messages} msg{'' if self.messages == 1 else 's'})"
        return "-"


@dataclass(frozen=True, slots=True)
class EventRow:
    """One status report: its stamp (wall ns), level, reporting node and text."""

    stamp_ns: int
    level: Level
    node: str
    text: str


@dataclass(frozen=True, slots=True)
class MonitorSnapshot:
    """Everything one screen refresh shows. ``data_age_s`` is the age of the joint rows (None:
    no ``BridgeData`` yet).

    ``array`` is set when the namespace is a served actuator array (its ``joint_state`` arrived
    and no hb50 bridge topic did, :meth:`MonitorModel.snapshot`): its joints and power replace
    the bridge, robot and ``BridgeData`` lines, which such a namespace can never fill."""

    joints: tuple[JointRow, ...]
    data_age_s: float | None
    bridge: BridgeSummary | None
    robot: RobotSummary | None
    nodes: tuple[NodeRow, ...]
    topics: tuple[TopicRow, ...]
    events: tuple[EventRow, ...]
    array: ArraySummary | None = None
    #: The node that publishes ``RobotState`` (the robot's controller; "" = not known here).
    state_node: str = ""

    @property
    def owner_text(self) -> str:
        """The bridge's command owner as the bridge names it, and ``(silent: no RobotState for
        0.8 s)`` after it while that owner is :attr:`state_node` and its ``RobotState`` is stale.
        Why: the bridge names a stopped controller its owner until its watchdog and fallback act;
        a user's trial saw ``owner control_node`` 0.8 s into a SIGSTOP of that node while the
        demo's status line already said ``(silent)``."""
        bridge = self.bridge
        if bridge is None:
            return "?"
        owner = bridge.owner or "?"
        robot = self.robot
        if self.state_node and owner == self.state_node and robot is not None and robot.stale:
            # a monitor started after the owner stopped has heard none ("yet" read as "coming"
            # in a trial, 70 s after the control process was killed)
            heard = f"for {robot.age_s:.1f} s" if robot.received else "since this monitor began"
            return f"{owner} (silent: no RobotState {heard})"
        return owner

    @property
    def replay_text(self) -> str:
        """What REPLAYED nodes mean, the screen's first line (``""`` when no node is one), e.g.
        ``REPLAY, not a live robot: the heartbeats of array_node are stamped 41.2 s before they
        arrive (a recording played back, e.g. by jointbus play, or a clock that far off)``."""
        replayed = [n for n in self.nodes if n.state is NodeState.REPLAYED]
        if not replayed:
            return ""
        lags = [n.stamp_lag_s for n in replayed if n.stamp_lag_s is not None]
        low, high = f"{min(lags):.1f}", f"{max(lags):.1f}"
        return (
            f"REPLAY, not a live robot: the heartbeats of {', '.join(n.name for n in replayed)} "
            f"are stamped {low if low == high else f'{low} to {high}'} s before they arrive (a "
            "recording played back, e.g. by jointbus play, or a clock that far off)"
        )

    def to_text(self) -> str:
        """A plain-text rendering (for a terminal without the UI, logs and ``--once``)."""
        array = self.array
        lines = [self.replay_text] if self.replay_text else []
        lines += _array_lines(array) if array is not None else self._bridge_lines()
        for node in self.nodes:
            lines.append(
                f"node {node.name}: {node.state.value} ({node.lifecycle or '?'}, {node.age_text})"
            )
        for topic in self.topics:
            lines.append(f"topic {topic.name} [{topic.type_name}] {topic.rate_text}")
        for event in self.events:
            lines.append(f"event {event.level.name} {event.node}: {event.text}")
        return "\n".join(lines)

    def _bridge_lines(self) -> list[str]:
        lines: list[str] = []
        bridge = self.bridge
        if bridge is None:
            lines.append("bridge: no BridgeState yet")
        elif bridge.stale:
            lines.append(
                f"bridge: LOST (no BridgeState for {bridge.age_s:.1f} s; last said owner "
                f"{bridge.owner or '?'}, mode {bridge.mode or '?'})"
            )
        else:
            lines.append(
                f"bridge: owner {self.owner_text} | mode {bridge.mode or '?'} | "
                f"{bridge.arming} | e-stop {bridge.estop} | up {bridge.up_time_s} s"
            )
            lines.extend(f"  {text}" for text in (*bridge.thermal, *bridge.other))
        if self.robot is None:
            lines.append("robot: no RobotState yet")
        elif self.robot.stale:
            lines.append(f"robot: UNKNOWN ({self.robot.unknown_text})")
        else:
            robot = self.robot
            lines.append(
                f"robot: {robot.motion_mode} / {robot.motion_type} / gait {robot.motion_gait}"
            )
        if self.joints:
            lines.append(
                f"{'joint':<10} {'pos rad':>9} {'vel rad/s':>10} {'eff N·m':>9} {'temp':>6}  flags"
            )
            for j in self.joints:
                lines.append(
                    f"{j.name:<10} {fmt_float(j.position, 3):>9} {fmt_float(j.velocity, 3):>10} "
                    f"{fmt_float(j.effort, 2):>9} {j.temperature:>4}°C  {j.flags}"
                )
        else:
            lines.append("joints: no BridgeData yet")
        return lines


def _array_lines(array: ArraySummary) -> list[str]:
    """The plain-text lines of a served array: a head line, then one line per joint (SI: rad or
    m, rad/s or m/s, N·m or N, as the joint is revolute or prismatic)."""
    joints = array.joints
    if array.stale:
        head = f"array: LOST (no joint_state for {array.age_s:.1f} s; the values below are old)"
    else:
        head = (
            f"array: {len(joints)} joint{'' if len(joints) == 1 else 's'} | "
            f"{array.power_text} | joint_state {array.age_s:.1f} s old"
        )
    w = max([10, *(len(j.name) for j in joints)])
    lines = [head, f"{'joint':<{w}} {'pos':>9} {'vel':>10} {'eff':>9} {'temp':>7}  state"]
    for j in joints:
        if j.kind is JointKind.SINGLE_DOF:
            values = (
                f"{fmt_float(j.position, 3):>9} {fmt_float(j.velocity, 3):>10} "
                f"{fmt_float(j.effort, 2):>9}"
            )
        else:
            values = f"{j.kind.name.lower()} {j.pose}"
        temp = "n/a" if math.isnan(j.temperature) else f"{j.temperature:.0f}°C"
        lines.append(f"{j.name:<{w}} {values} {temp:>7}  {j.state or '-'}")
    return lines


def fmt_float(value: float, digits: int) -> str:
    """``value`` with a sign and ``digits`` decimals, or ``n/a`` when not reported (NaN)."""
    return "n/a" if math.isnan(value) else f"{value:+.{digits}f}"


class _RateMeter:
    """Messages per second from a cumulative counter, sampled in one of two ways.

    - ``arrivals=False``: the counter as read at a refresh (``at_ns`` = the refresh): a local
      publisher's counter, which has counted since before the monitor started, so every refresh
      interval holds what was published in it.
    - ``arrivals=True``: the counter with the arrival time of its last message (``at_ns``), a
      sample taken only when the count moved. The rate between two samples is then messages − 1
      over the span between the first and the last arrival: exact, and the time a new
      subscription waits to be matched (no arrivals yet) weighs nothing — sampling a remote
      subscription's counter at each refresh counted that wait as silence and read 94 Hz for
      a 100 Hz topic after 2 s (new-user trial, 2026-12-06).
    """

    __slots__ = ("_samples", "_window_ns", "arrivals")

    def __init__(self, window_ns: int, *, arrivals: bool = False) -> None:
        self._window_ns = window_ns
        self.arrivals = arrivals
        self._samples: deque[tuple[int, int]] = deque()

    def sample(self, at_ns: int, total: int) -> None:
        samples = self._samples
        if samples and total < samples[-1][1]:
            samples.clear()  # the counter restarted (a publisher replaced): start over
        if self.arrivals and (total == 0 or (samples and total == samples[-1][1])):
            return  # no new arrival: nothing to date
        samples.append((at_ns, total))
        while len(samples) > 2 and at_ns - samples[1][0] >= self._window_ns:
            samples.popleft()

    @property
    def total(self) -> int:
        """The newest counter value (0 before any sample)."""
        return self._samples[-1][1] if self._samples else 0

    def rate(self) -> float | None:
        samples = self._samples
        if len(samples) < 2:
            return None
        (t0, n0), (t1, n1) = samples[0], samples[-1]
        return (n1 - n0) * _NS_PER_S / (t1 - t0) if t1 > t0 else None

    def silent_ns(self, now_ns: int) -> int | None:
        """For an arrival-stamped meter whose last message is older than the window and three of
        its mean periods (the topic stopped: its rate would be stale), how long ago it came;
        None otherwise."""
        samples = self._samples
        if not self.arrivals or not samples:
            return None
        (t0, n0), (t1, n1) = samples[0], samples[-1]
        period = (t1 - t0) // (n1 - n0) if n1 > n0 else 0
        silent = now_ns - t1
        return silent if silent > max(self._window_ns, 3 * period) else None


class _NodeRecord:
    __slots__ = (
        "heartbeats",
        "last_ns",
        "lifecycle",
        "rate",
        "reported_stale_by",
        "reported_stale_ns",
        "shut_down",
        "stamp_lag_ns",
    )

    def __init__(self, window_ns: int) -> None:
        #: Monotonic ns of its last heartbeat, heard here or dated from a supervisor's table
        #: (None: no heartbeat of it known).
        self.last_ns: int | None = None
        self.heartbeats = 0
        #: Its heartbeats' rate here (arrivals dated when handed over): one node's stream.
        self.rate = _RateMeter(window_ns, arrivals=True)
        self.lifecycle = ""
        self.shut_down = False
        self.reported_stale_ns: int | None = None  # arrival of the last STALE report about it
        self.reported_stale_by = ""  # the node that reported it (its own OK takes it back)
        #: How long before its arrival its last heartbeat was stamped (wall ns; None: unknown).
        self.stamp_lag_ns: int | None = None


class MonitorModel:
    """The monitor's state, fed message by message (see the module docstring).

    ``liveliness_timeout_s``: silence after which a node is STALE (s); ``state_timeout_s``: age
    after which the robot's and the bridge's state are shown as unknown / lost (s);
    ``max_events``: status reports kept; ``rate_window_s``: the span rates are averaged over (s);
    ``state_node``: the node that publishes ``RobotState``, so the owner line can say when the
    bridge still names that node while it is silent (:attr:`MonitorSnapshot.owner_text`).
    """

    def __init__(
        self,
        *,
        liveliness_timeout_s: float = DEFAULT_LIVELINESS_TIMEOUT_S,
        state_timeout_s: float = DEFAULT_STATE_TIMEOUT_S,
        max_events: int = 50,
        rate_window_s: float = 2.0,
        state_node: str = "",
    ) -> None:
        if not (math.isfinite(liveliness_timeout_s) and liveliness_timeout_s > 0):
            raise ValueError(
                f"liveliness_timeout_s = {liveliness_timeout_s!r}; expected a duration > 0 s"
            )
        if not (math.isfinite(state_timeout_s) and state_timeout_s > 0):
            raise ValueError(f"state_timeout_s = {state_timeout_s!r}; expected a duration > 0 s")
        if isinstance(max_events, bool) or not isinstance(max_events, int) or max_events < 1:
            raise ValueError(f"max_events = {max_events!r}; expected an int >= 1")
        if not (math.isfinite(rate_window_s) and rate_window_s > 0):
            raise ValueError(f"rate_window_s = {rate_window_s!r}; expected a duration > 0 s")
        self._state_node = state_node
        self._timeout_ns = round(liveliness_timeout_s * _NS_PER_S)
        self._state_timeout_ns = round(state_timeout_s * _NS_PER_S)
        self._window_ns = round(rate_window_s * _NS_PER_S)
        # this monitor's own stall (module docstring): snapshots' usual gap, the last, a resumption
        self._late_ns = max(self._timeout_ns - _NS_PER_S, self._timeout_ns // 3)
        self._look_gap_ns: int | None = None
        self._last_look_ns: int | None = None
        self._resumed_ns: int | None = None
        self._data: tuple[BridgeData, int] | None = None
        self._state: tuple[BridgeState, int] | None = None
        self._robot: tuple[RobotState, int] | None = None
        self._joint_state: tuple[JointState, int] | None = None
        self._array_data: ActuatorArrayData | None = None
        #: An hb50 bridge is known on this namespace (a message of it, or discovery): its view.
        self._bridge_known = False
        self._listening_since_ns: int | None = None
        #: When the feed last took what had arrived (:meth:`on_polled`; None: fed directly).
        self._polled_ns: int | None = None
        self._nodes: dict[str, _NodeRecord] = {}
        self._events: deque[EventRow] = deque(maxlen=max_events)
        self._rates: dict[str, _RateMeter] = {}
        self._heartbeat_topic: str | None = None  # its rate is per node (heartbeats_on)
        self._notes: dict[str, str] = {}
        self._topics: dict[str, TopicInfo] = {}

    # ---- feeding ---------------------------------------------------------------------------

    def on_bridge_data(self, msg: BridgeData, now_ns: int) -> None:
        """The newest actuator frame (arrived at ``now_ns``, monotonic)."""
        self._data = (msg, now_ns)
        self._bridge_known = True

    def on_bridge_state(self, msg: BridgeState, now_ns: int) -> None:
        """The newest bridge state (normally from the 10 Hz mirror)."""
        self._state = (msg, now_ns)
        self._bridge_known = True

    def on_robot_state(self, msg: RobotState, now_ns: int) -> None:
        """The newest estimated robot state (normally from the 10 Hz mirror)."""
        self._robot = (msg, now_ns)
        self._bridge_known = True

    def on_bridge_published(self) -> None:
        """Discovery shows an hb50 bridge's topics on this namespace: show the bridge view even
        before its first state arrives (its ``joint_state`` may come first)."""
        self._bridge_known = True

    def on_joint_state(self, msg: JointState, now_ns: int) -> None:
        """The newest ``joint_state`` of a served array (Beam Bots' record, arrived at
        ``now_ns``). Without an hb50 bridge on the namespace it makes the snapshot an array's."""
        self._joint_state = (msg, now_ns)

    def on_array_data(self, msg: ActuatorArrayData) -> None:
        """The newest ``actarray/data`` of a served array (motor power, per-actuator state flags
        and temperatures, in the order of ``joint_state``'s names)."""
        self._array_data = msg

    def on_listening(self, now_ns: int) -> None:
        """The feed's subscriptions are open at ``now_ns`` (monotonic): the first call starts the
        span in which a ``RobotState`` that never arrives counts (later calls change nothing).
        Without a call the robot is never UNKNOWN for lack of one (only "no RobotState yet")."""
        if self._listening_since_ns is None:
            self._listening_since_ns = now_ns

    def on_polled(self, now_ns: int) -> None:
        """The feed took everything that had arrived until ``now_ns`` (monotonic). A verdict of
        silence counts only to the latest such time (:meth:`_heard_until`): what arrived after
        it is not known yet, and is no silence."""
        if self._polled_ns is None or now_ns > self._polled_ns:
            self._polled_ns = now_ns

    def _heard_until(self, now_ns: int) -> int:
        """Until when this monitor has heard the bus at ``now_ns``: the last poll
        (:meth:`on_polled`), or ``now_ns`` for a model fed directly.

        Why: ``monitor --plain`` judged at the snapshot what it had taken at the poll before,
        and its first poll, which declares the taps of every topic found, took 0.3-0.5 s at
        load 15 (2.6 s in a new user's trial at load 10-30): the first summary said ``bridge:
        LOST (no BridgeState for 0.5 s)``, ``robot: UNKNOWN`` and ``node bridge_node: STALE``
        beside ``bridge_state_10hz — (1 msg)``, of a robot running all along."""
        polled = self._polled_ns
        return now_ns if polled is None else min(now_ns, polled)

    def on_heartbeat(self, msg: Status, now_ns: int, *, wall_ns: int | None = None) -> None:
        """A heartbeat of ``msg.reporting_node``, arrived at ``now_ns`` (monotonic) = ``wall_ns``
        (wall clock, ns since the epoch: what the heartbeat's stamp is compared with; None: not
        compared); ``data`` holds its lifecycle state. One stamped more than the liveliness
        timeout before ``wall_ns`` makes the node REPLAYED (module docstring)."""
        name = msg.reporting_node
        if not name:
            return
        record = self._nodes.get(name)
        if record is None:
            record = self._nodes[name] = _NodeRecord(self._window_ns)
        record.last_ns = now_ns
        record.stamp_lag_ns = None if wall_ns is None else wall_ns - msg.header.stamp.to_ns()
        record.heartbeats += 1
        record.rate.sample(now_ns, record.heartbeats)
        record.shut_down = msg.status == HEARTBEAT_SHUTDOWN
        if msg.data:
            record.lifecycle = msg.data.decode("ascii", "replace")

    def on_status(self, msg: Status, now_ns: int) -> None:
        """A report of the status topic (kept among the newest ``max_events``); a STALE report
        (a liveliness monitor's, ``data`` = the node's name) marks that node STALE now."""
        level = Level(msg.level)
        self._events.append(
            EventRow(msg.header.stamp.to_ns(), level, msg.reporting_node, msg.status)
        )
        if level is Level.STALE and msg.data:
            name = msg.data.decode("utf-8", "replace")
            record = self._nodes.get(name)
            if record is None:  # known only from the report (no age: it carries none)
                record = self._nodes[name] = _NodeRecord(self._window_ns)
            record.reported_stale_ns = now_ns
            record.reported_stale_by = msg.reporting_node
        elif level is Level.OK and msg.data:
            # the reporter's own verdict taken back (its "OK: heartbeat back")
            record = self._nodes.get(msg.data.decode("utf-8", "replace"))
            if record is not None and record.reported_stale_by == msg.reporting_node:
                record.reported_stale_ns = None
                record.reported_stale_by = ""

    def on_node_health(self, msg: NodeHealthTable, now_ns: int, *, wall_ns: int) -> None:
        """A supervisor's latched verdicts, arrived at ``now_ns`` (monotonic) = ``wall_ns`` (wall
        clock, ns since the epoch: the table's stamp is one). A node it judged STALE that has not
        been heard here since its last heartbeat there is STALE here too, listed if this monitor
        never saw it; its last heartbeat is dated ``silent_s`` plus the table's age before
        ``now_ns`` (:meth:`NodeHealthTable.silent_s_at`: a latched table may be minutes old)."""
        for entry in msg.nodes:
            if not entry.stale:
                continue
            silent_s = msg.silent_s_at(entry, wall_ns)
            last_there = None if math.isnan(silent_s) else now_ns - round(silent_s * _NS_PER_S)
            record = self._nodes.get(entry.name)
            if record is None:
                record = self._nodes[entry.name] = _NodeRecord(self._window_ns)
                record.lifecycle = entry.lifecycle
            elif (
                record.heartbeats
                and record.last_ns is not None
                and (last_there is None or record.last_ns > last_there)
            ):
                continue  # heard here after its last heartbeat there: alive
            if last_there is not None and (record.last_ns is None or last_there > record.last_ns):
                record.last_ns = last_there
            record.reported_stale_ns = now_ns

    def count(self, topic: str, total: int, now_ns: int) -> None:
        """Sample the cumulative message count ``total`` of ``topic`` read at ``now_ns`` (a
        counter that ran before the monitor: a publisher's in this process), for its rate."""
        self._meter(topic, arrivals=False).sample(now_ns, total)

    def arrived(
        self, topic: str, total: int, last_arrival_ns: int, first_arrival_ns: int | None = None
    ) -> None:
        """``total`` messages of ``topic`` have arrived, the last at ``last_arrival_ns``
        (monotonic, the clock of :meth:`snapshot`) and the first at ``first_arrival_ns`` (when
        the counter knows it): its rate is counted between arrivals, from the first one (see
        :class:`_RateMeter`). With the first arrival dated, two messages give a rate at once: a
        new user's ``monitor --plain --interval 2`` showed ``— (20 msgs)`` for 10 Hz topics in
        its second summary, the first count sampled being already 20 (2026-12-07)."""
        meter = self._meter(topic, arrivals=True)
        if first_arrival_ns is not None and not meter.total and total >= 2:
            meter.sample(first_arrival_ns, 1)
        meter.sample(last_arrival_ns, total)

    def _meter(self, topic: str, *, arrivals: bool) -> _RateMeter:
        meter = self._rates.get(topic)
        if meter is None or meter.arrivals != arrivals:
            meter = self._rates[topic] = _RateMeter(self._window_ns, arrivals=arrivals)
            self._notes.pop(topic, None)
        return meter

    def heartbeats_on(self, topic: str) -> None:
        """``topic`` carries the heartbeats (:meth:`on_heartbeat`): each node publishes its own
        stream on it (1 Hz), so its rate is shown per node, from the heartbeats each node's name
        is on, never as one figure for the topic. Why: ``jointbus monitor`` fed by a replay of two
        nodes showed the topic at "3.7 Hz" — a sum of streams that no node sends, read as if one
        did."""
        self._heartbeat_topic = topic

    def not_measured(self, topic: str, reason: str) -> None:
        """``topic``'s rate is not measured, for ``reason`` (shown instead of a rate); a rate
        measured before is dropped (it would no longer be true)."""
        self._rates.pop(topic, None)
        self._notes[topic] = reason

    def set_topics(self, topics: Iterable[TopicInfo]) -> None:
        """The topics discovery found (names, types, publishers)."""
        self._topics = {t.name: t for t in topics}

    # ---- reading ---------------------------------------------------------------------------

    def snapshot(self, now_ns: int) -> MonitorSnapshot:
        """What the screen shows at ``now_ns`` (monotonic, the clock the feeding used).

        A namespace whose ``joint_state`` arrived while no hb50 bridge message did (nor its
        topics, :meth:`on_bridge_published`) is a served array: its snapshot has ``array`` and
        none of the bridge's joints, state or robot mode, which it has not got."""
        if self._joint_state is not None and not self._bridge_known:
            msg, at = self._joint_state
            array = ArraySummary(
                _array_joint_rows(msg, self._array_data),
                _age(now_ns, at),
                now_ns - at > self._state_timeout_ns,
                None if self._array_data is None else self._array_data.motor_power,
            )
            return MonitorSnapshot(
                joints=(),
                data_age_s=_age(now_ns, at),
                bridge=None,
                robot=None,
                nodes=self._node_rows(now_ns),
                topics=self._topic_rows(now_ns),
                events=tuple(reversed(self._events)),
                array=array,
            )
        return MonitorSnapshot(
            joints=self._joint_rows(),
            data_age_s=None if self._data is None else _age(now_ns, self._data[1]),
            bridge=self._bridge(now_ns),
            robot=self._robot_summary(now_ns),
            nodes=self._node_rows(now_ns),
            topics=self._topic_rows(now_ns),
            state_node=self._state_node,
            events=tuple(reversed(self._events)),
        )

    def _joint_rows(self) -> tuple[JointRow, ...]:
        if self._data is None:
            return ()
        msg = self._data[0]
        return tuple(
            JointRow(
                name,
                i,
                msg.joint_position[i],
                msg.joint_velocity[i],
                msg.joint_effort[i],
                msg.joint_temperature[i],
                msg.joint_status[i],
            )
            for i, name in enumerate(msg.joint_name)
        )

    def _bridge(self, now_ns: int) -> BridgeSummary | None:
        if self._state is None:
            return None
        msg, at = self._state
        facts = BridgeStatus.of(msg)
        return BridgeSummary(
            owner=facts.owner,
            mode=facts.mode.value if facts.mode is not None else "",
            drives_enabled=msg.drives_enabled,
            estop_latched=facts.estop_latched,
            estop_reason=facts.estop_reason or "",
            thermal=facts.thermal_strings(),
            other=facts.detail_strings(),
            battery=msg.battery,
            bus_voltage=msg.bus_v,
            up_time_s=msg.up_time,
            age_s=_age(now_ns, at),
            stale=self._heard_until(now_ns) - at > self._state_timeout_ns,
        )

    def _robot_summary(self, now_ns: int) -> RobotSummary | None:
        if self._robot is None:
            since = self._listening_since_ns
            heard = self._heard_until(now_ns)
            if since is None or heard - since <= self._state_timeout_ns:
                return None  # no RobotState *yet*: the mirror may be one period away
            return RobotSummary("", "", "", _age(heard, since), stale=True, received=False)
        msg, at = self._robot
        return RobotSummary(
            _enum_name(msg.motion_mode),
            _enum_name(msg.motion_type),
            _enum_name(msg.motion_gait),
            _age(now_ns, at),
            stale=self._heard_until(now_ns) - at > self._state_timeout_ns,
        )

    def _look(self, now_ns: int) -> int:
        """Note a snapshot at ``now_ns``; the start of the silence this monitor heard (ns): its
        resumption after a stall of its own, else 0 (module docstring)."""
        last, self._last_look_ns = self._last_look_ns, now_ns
        if last is not None and now_ns > last:
            gap = now_ns - last
            usual = self._look_gap_ns
            if usual is not None and gap > usual + self._late_ns:
                self._resumed_ns = now_ns  # this process did not run: judge no silence from it
            else:
                self._look_gap_ns = gap if usual is None else min(gap, (usual * 7 + gap) // 8)
        return self._resumed_ns or 0

    def _node_rows(self, now_ns: int) -> tuple[NodeRow, ...]:
        heard_from = self._look(now_ns)
        heard_until = self._heard_until(now_ns)
        rows = []
        for name in sorted(self._nodes):
            record = self._nodes[name]
            last = record.last_ns
            lag = record.stamp_lag_ns
            if lag is not None and lag > self._timeout_ns:
                state = NodeState.REPLAYED  # its farewell too: a recorded one says nothing now
            elif record.shut_down:
                state = NodeState.SHUTDOWN
            elif (
                last is None
                or heard_until - max(last, heard_from) > self._timeout_ns
                or (record.reported_stale_ns is not None and record.reported_stale_ns >= last)
            ):
                state = NodeState.STALE
            else:
                state = NodeState.OK
            age = None if last is None else _age(now_ns, last)
            lag_s = None if lag is None else lag / _NS_PER_S
            rows.append(NodeRow(name, state, record.lifecycle, age, record.heartbeats, lag_s))
        return tuple(rows)

    def _topic_rows(self, now_ns: int) -> tuple[TopicRow, ...]:
        names = sorted(set(self._topics) | set(self._rates))
        rows = []
        for name in names:
            info = self._topics.get(name)
            meter = self._rates.get(name)
            if (info is None or not info.publishers) and (meter is None or not meter.total):
                continue  # only the monitor's own subscription: nothing to show yet
            rate = meter.rate() if meter is not None else None
            note = "" if meter is not None else self._notes.get(name, "")
            latched = (
                info is not None
                and bool(info.publishers)
                and all(e.qos.transient_local for e in info.publishers)
            )
            silent = meter.silent_ns(now_ns) if meter is not None else None
            if name == self._heartbeat_topic:  # one stream per node: a rate per node
                rate, note = None, self._per_node_rates(now_ns)
            elif silent is not None:
                # A latched topic is published on change: its silence is no stop. (A replay's
                # latched topics, sent again at each loop of ``jointbus play --loop``, had a rate
                # and then read "— (none for 2.1 s)" as if dead: a user's trial, 2026-12-06.)
                rate, note = None, "" if latched else f"— (none for {silent / _NS_PER_S:.1f} s)"
            rows.append(
                TopicRow(
                    name,
                    info.type_name if info is not None else "",
                    len(info.publishers) if info is not None else 0,
                    rate,
                    note,
                    meter.total if meter is not None else None,
                    latched,
                )
            )
        return tuple(rows)


    def _per_node_rates(self, now_ns: int) -> str:
        """The heartbeat topic's rate column: each node's heartbeat rate here, by name
        (``"per node: bridge_node 1.0 Hz, control_node 1.0 Hz"``), a silent node's silence, a node
        heard once ``—`` (one heartbeat: no rate yet); empty (the count is shown) while no node's
        rate is measured yet. A monitor's first summary left a node heard once out of the row
        (``per node: control_node 1.0 Hz`` beside ``node bridge_node: OK``: a trial, 2026-12-06)."""
        parts = []
        measured = False
        for name in sorted(self._nodes):
            meter = self._nodes[name].rate
            silent = meter.silent_ns(now_ns)
            rate = meter.rate()
            if silent is not None:
                parts.append(f"{name} — (none for {silent / _NS_PER_S:.1f} s)")
                measured = True
            elif rate is not None:
                parts.append(f"{name} {rate:.1f} Hz")
                measured = True
            else:
                parts.append(f"{name} — (one heartbeat so far)")
        return "per node: " + ", ".join(parts) if measured else ""


def _array_joint_rows(msg: JointState, data: ActuatorArrayData | None) -> tuple[ArrayJointRow, ...]:
    """One row per joint of ``msg``: a single-DoF joint's values from the per-kind arrays (the
    k-th entry belongs to the k-th joint of its kind), a planar or floating joint's pose as
    text; state and temperature from ``data`` when it has one actuator per joint."""
    actuators = data.actuators if data is not None and len(data.actuators) == len(msg.name) else ()
    rows = []
    seen = {kind: 0 for kind in JointKind}
    for index, name in enumerate(msg.name):
        kind = JointKind(msg.kind[index])
        k = seen[kind]
        seen[kind] += 1
        position = velocity = effort = math.nan
        pose = ""
        if kind is JointKind.SINGLE_DOF:
            position = msg.position[k] if msg.position else math.nan
            velocity = msg.velocity[k] if msg.velocity else math.nan
            effort = msg.effort[k] if msg.effort else math.nan
        elif kind is JointKind.PLANAR and msg.planar_position:
            p = msg.planar_position[k]
            pose = f"x {p.x:+.3f} y {p.y:+.3f} θ {p.theta:+.3f}"
        elif kind is JointKind.FLOATING and msg.floating_position:
            t = msg.floating_position[k].translation
            pose = f"x {t.x:+.3f} y {t.y:+.3f} z {t.z:+.3f}"
        state, temperature = "", math.nan
        if actuators:
            actuator = actuators[index]
            state = ", ".join(
                f.name for f in ActuatorState if f.name is not None and f in actuator.state
            )
            temperature = actuator.temperature
        rows.append(
            ArrayJointRow(name, index, kind, position, velocity, effort, pose, state, temperature)
        )
    return tuple(rows)


def _age(now_ns: int, then_ns: int) -> float:
    return max(0.0, (now_ns - then_ns) / _NS_PER_S)


def _enum_name(value: object) -> str:
    name = getattr(value, "name", None)
    return name if isinstance(name, str) else str(value)
