"""The bridge node: owns the actuator array and applies joint commands safely at 500 Hz.

Where it sits: :mod:`jointbus.robots.hb50.bridge`, on top of :class:`jointbus.runtime.node.Node`
(which gives it the heartbeat, the lifecycle, the status reporter and the rate loop), a
:class:`jointbus.drivers.ActuatorArray` (real or ``sim://``) and the pure decision components of
this package. It is the only node that talks to the actuators (Honey Badger 5.0's
``bridge_node``).

Topics (``/hb50/...`` by default):

==========================  ======================  ==========  =================================
topic                       type                    QoS         what
==========================  ======================  ==========  =================================
``bridge_data``             ``BridgeData``          MAB_RT      every cycle: every actuator
``bridge_state``            ``BridgeState``         MAB_RT      every cycle: drives, owner, mode
``bridge_state_10hz``       ``BridgeState``         RELIABLE    10 Hz mirror of ``bridge_state``
``bridge_data_10hz``        ``BridgeData``          RELIABLE    10 Hz mirror of ``bridge_data``
``joint_command``  (sub)    ``JointCommand``        MAB_RT      the only command input
``hardware_command`` (sub)  ``std_msgs/String``     RELIABLE    ``estop``, ``reset``, power
``status``                  ``Status``              RELIABLE    events and rejections
``heartbeat``               ``Status``              (runtime)   1 Hz, from the runtime node
``heartbeat``      (sub)    ``Status``              (runtime)   the liveliness of the other nodes
==========================  ======================  ==========  =================================

**Hardware commands** are ``std_msgs/String`` texts (case and surrounding spaces ignored):
``estop`` (optionally followed by a reason, ``estop jointbus_cli``) latches the e-stop;
``reset`` re-arms it; ``power off`` / ``power on`` switch the drives off and on outside an
emergency. A plain string keeps the topic usable from any ROS 2 tool
(``ros2 topic pub /hb50/hardware_command std_msgs/msg/String "data: estop"``). Anything else is
answered by an ERROR status listing the accepted commands.

**One cycle** (:meth:`BridgeNode.cycle`): read the array → take the hardware commands, check and
arbitrate the queued joint commands, run the watchdog and the thermal guard → publish
``BridgeData`` and ``BridgeState`` → write the command of the current mode:

- ``estop`` — latched: drives off, brakes engaged where fitted; nothing is written;
- ``off`` — drives off on request (``power off``), or the driver reports them unpowered;
- ``hold`` — after a reset or a drive-on: hold the position *measured at that moment* until a
  command sent afterwards arrives (never a stale target: :mod:`.estop`);
- ``safe`` — no valid command for the watchdog time: damping only, brakes where fitted;
- ``run`` — the owner's latest valid command; when commands apply again after any of the modes
  above, an owner change, a brake release, a thermal shutdown or damping-only commands
  (``kp = 0``), a target far from the measured pose is ramped to from there (:mod:`.reentry`),
  and a braked joint gets no stiffness, target velocity or torque.

**The command path.** A ``JointCommand`` is converted once, at the edge: the command check
(:class:`~jointbus.nodes.safety.command_check.CommandCheck` with hb50's field names) validates it
and returns the joint-space :class:`~jointbus.drivers.impedance.ImpedanceCommand` (float64 arrays
in actuator order) that arbitration, the re-entry ramp, the brakes rule, the thermal derating and
:meth:`~jointbus.drivers.ActuatorArray.impedance` work on; no later step rebuilds a message.

The chosen command is scaled by the thermal derating (:mod:`.thermal_guard`) before it is
written. Incoming commands are only *queued* by the subscription callback (with their arrival
time); every decision runs on the loop thread, in arrival order, so the components need no locks
and a test drives the node with :meth:`BridgeNode.cycle` and an injected clock.

**The achieved publish rate.** The bridge counts what it actually published: every second (node
clock) it compares the ``BridgeData`` / ``BridgeState`` pairs published with the cycles the rate
was due (elapsed time × ``rate_hz``) and puts the result in every ``BridgeState``'s ``status`` as
``publish: 417 Hz, 83 of 500 cycles skipped in the last 1.0 s`` (also
:attr:`BridgeNode.publish_rate_hz` / :attr:`BridgeNode.publish_skipped`). A cycle is skipped when
the loop dropped its slot (an overrun: a stall of the host or of a driver read) or when reading
the actuators failed. Why here and not only in the loop's statistics: this is what a consumer of
``/hb50/bridge_data`` gets, whoever runs the loop (the node's own, a stack's lock-step body or a
test), and it reaches every viewer of ``bridge_state_10hz``; under load the bridge used to skip
≈ 17 % of its publications while the status line said ``loop=500Hz`` (the median period).

**Liveliness.** The bridge is the robot's supervisor: it runs a
:class:`~jointbus.runtime.liveliness.LivelinessMonitor` (:attr:`BridgeNode.liveliness`) over every
other visible node's heartbeat (hidden ``_``-nodes, CLI processes, are left out) and publishes each
change on ``/hb50/status``: STALE naming the node when it goes silent for 1.5 s or its process
leaves the Zenoh network (SIGKILL: within the 100 ms token grace), OK when it is back, OK once for a
clean shutdown. ``data`` holds the node's name (docs/SAFETY.md's promise).

**Reports** on ``/hb50/status``: a rejected command is an ERROR naming the source node, the
joint (name and index), the field, the value and the expectation (text), with the same facts as
JSON in ``data`` — every refused command, also one the message's wire rules refused at decode (a
NaN, a negative gain, a short array: it arrives as a malformed-payload event with its bytes, which
:func:`~.unchecked_command.decode_unchecked` reads back so the
:class:`~jointbus.nodes.safety.command_check.CommandCheck` names the source and the culprit;
bytes that are not even a ``JointCommand`` layout are one ERROR naming the publisher). Such a
sample is reported only as that rejection, not also as the generic "malformed payload" WARN;
repeats of the same rejection (same source, field and joint) are folded into one report a second
with a count. Owner changes, watchdog, e-stop, power and thermal
transitions are each a status event of their own. The current owner and mode are also in every
``BridgeState``'s ``status`` strings (``owner: control_node``, ``mode: run``), written by
:class:`~jointbus.robots.hb50.messages.bridge_status.BridgeStatus`, the one place that formats and
parses them.

What the ``ActuatorArray`` API does not provide is published as "not reported": the IMU fields
of ``BridgeData`` are NaN unless an ``imu`` source is given, and the power fields of
``BridgeState`` (battery, bus voltage, ...) are NaN. ``joint_temperature`` is whole °C clipped to
0–255 (0 when the actuator does not report one); ``joint_status`` sets
``COMMUNICATION_ERROR`` for an actuator that returned no position and ``MOTION_ERROR`` for a
stalled one (driver status words have driver-specific meanings and are not copied).

**Live parameters** (:class:`~jointbus.runtime.parameters.NodeParameters`, declared in the robot
file's ``parameters:`` section and carried by :attr:`BridgeConfig.parameters`): the bridge owns
``watchdog_time``, ``thermal_warn``, ``thermal_derate``, ``thermal_shutdown``,
``thermal_hysteresis`` and ``arbitration_threshold`` (:data:`BRIDGE_PARAMETERS`). They are
published latched on ``/hb50/parameters`` and changed with ``jointbus param set bridge_node ...``
(a ``ParameterUpdate`` on ``/hb50/config_update``); an out-of-bounds value is refused by the
declaration, and a value that breaks ``thermal_warn ≤ thermal_derate < thermal_shutdown`` is
refused by the bridge, each with an ERROR status naming the parameter, the value and the range it
must lie in. A new ``arbitration_threshold`` scales the fallback time and the takeover window with
it (one period and five periods at the threshold, as :meth:`BridgeConfig.from_model` derives
them). ``kp`` / ``kd`` belong to the control node (its posture gains): the bridge takes only their
declared *maxima* (the bound of every command's gains) and defaults (hold and safe-mode gains)
when it is built, and those stay fixed while it runs.

*When a change takes effect*: the change callback runs on whichever thread made the change (the
node's callback thread for a bus update), never the loop's. It only checks the complete new set
of values against the components' own rules and *stages* it (one reference swap under a small
lock); the loop picks the staged set up at the start of its next cycle (:meth:`BridgeNode.cycle`),
before any decision is made. So a cycle always runs with one consistent set, the components stay
lock-free, and a change is in force within one cycle (2 ms) of being published.
"""

from __future__ import annotations

import dataclasses
import json
import math
import threading
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final, Protocol

import numpy as np
import numpy.typing as npt

from jointbus.bus import MAB_RT, RELIABLE, Bus, MalformedPayloadEvent, QosEvent
from jointbus.codec import DecodeError
from jointbus.drivers.actuator_array import ActuatorArray, JointReading
from jointbus.drivers.capabilities import Capability
from jointbus.drivers.errors import DriverError
from jointbus.drivers.impedance import ImpedanceCommand
from jointbus.drivers.limits import JointLimits
from jointbus.messages.errors import MessageError, ValidationError
from jointbus.messages.geometry_msgs import Quaternion, Vector3
from jointbus.messages.std_msgs import Header, String
from jointbus.model.parameters import ParameterSpec, ParameterValue
from jointbus.model.robot import RobotModel
from jointbus.nodes.safety.arbiter import Arbiter
from jointbus.nodes.safety.command_check import CommandCheck, CommandRejected
from jointbus.nodes.safety.estop import EStopLatch
from jointbus.nodes.safety.reentry import ReentryEngaged, ReentryRamp
from jointbus.nodes.safety.thermal_guard import ThermalGuard, ThermalLevel
from jointbus.nodes.safety.watchdog import Watchdog, safe_command
from jointbus.robots.hb50.bridge.unchecked_command import (
    HB50_COMMAND_FIELDS,
    UncheckedJointCommand,
    decode_unchecked,
)
from jointbus.robots.hb50.messages import (
    BridgeData,
    BridgeState,
    JointCommand,
    Level,
)
from jointbus.robots.hb50.messages.bridge_status import BridgeMode, BridgeStatus, ThermalNote
from jointbus.runtime.liveliness import LivelinessMonitor
from jointbus.runtime.node import Node
from jointbus.runtime.parameters import NodeParameters, ParameterChange, select_specs
from jointbus.runtime.rate_loop import CycleInfo
from jointbus.runtime.timer import TimerThread

__all__ = [
    "BRIDGE_PARAMETERS",
    "HARDWARE_COMMANDS",
    "SAFE_KD",
    "BridgeConfig",
    "BridgeMode",
    "BridgeNode",
    "ImuReading",
]

_NS_PER_S: Final = 1_000_000_000
#: Accepted ``/hb50/hardware_command`` texts (``estop`` may be followed by a reason).
HARDWARE_COMMANDS: Final = ("estop", "reset", "power on", "power off")
#: Joint commands buffered between two cycles (500 Hz from a few sources fits many times over).
_QUEUE_DEPTH: Final = 256
#: Status events of one kind get distinct reporter keys modulo this, so none is folded into
#: another unless more than this many happen within the reporter's interval.
_EVENT_KEYS: Final = 64
_NAN3: Final = (math.nan, math.nan, math.nan)
#: Span of the publish-rate accounting (s) shown in ``BridgeState.status``.
PUBLISH_WINDOW_S: Final = 1.0
#: Safe-mode damping (N·m·s/rad), the :attr:`BridgeConfig.safe_kd` default. Measured on the
#: hb50 in MuJoCo (``tests/faults/test_fault_watchdog.py``): standing, it sinks to 0.15 m in
#: 0.77 s and to 0.10 m in 1.91 s (0.57 s and 1.53 s with the stand gain 3.0 used before; 0.97 s
#: and 2.23 s at 6.0). Higher is slower but bounded by the drive: 4.5 · 2 ms / 0.0094 kg·m²
#: (armature) = 0.96 < 1, so even a damping updated only at the 500 Hz bus rate does not
#: overshoot; the 0.38 rad/s velocity noise becomes 1.7 N·m (1σ), 7 % of the 24 N·m limit; the
#: largest torque while sinking was 9.1 N·m.
SAFE_KD: Final = 4.5

#: The live parameters the bridge owns, and the :class:`BridgeConfig` field each one sets.
_PARAMETER_FIELDS: Final[Mapping[str, str]] = {
    "watchdog_time": "watchdog_s",
    "thermal_warn": "thermal_warn_c",
    "thermal_derate": "thermal_derate_c",
    "thermal_shutdown": "thermal_shutdown_c",
    "thermal_hysteresis": "thermal_hysteresis_c",
    "arbitration_threshold": "takeover_hz",
}
#: Names of the bridge's live parameters (its share of the robot file's ``parameters:``).
BRIDGE_PARAMETERS: Final = tuple(_PARAMETER_FIELDS)
_THERMAL_ORDER: Final = ("thermal_warn", "thermal_derate", "thermal_shutdown")


@dataclass(frozen=True, slots=True)
class RefusedSample:
    """A ``joint_command`` sample the decoder refused, queued for the loop like a command.

    ``unchecked`` is its content read without checks (``None``: not even the layout), so the loop
    can name what is wrong; ``publisher`` and ``error`` are the transport's words for it.
    """

    unchecked: UncheckedJointCommand | None
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
                JointCommand.TYPE_NAME,
                "payload",
                f"{self.size} bytes from {self.publisher}",
                f"a decodable JointCommand ({self.error})",
            ),
        )


class ImuReading(Protocol):
    """An IMU sample: ``orientation`` (w, x, y, z), ``angular_velocity`` rad/s,
    ``linear_acceleration`` m/s² (e.g. :class:`jointbus.drivers.sim.mujoco_world.ImuSample`)."""

    @property
    def orientation(self) -> npt.ArrayLike: ...

    @property
    def angular_velocity(self) -> npt.ArrayLike: ...

    @property
    def linear_acceleration(self) -> npt.ArrayLike: ...


@dataclass(frozen=True, slots=True)
class BridgeConfig:
    """Settings of the bridge node (SI units). :meth:`from_model` takes the robot's parameters.

    ``allowed_sources``: when set, only these command sources are accepted (the default source
    must be one of them). ``safe_kd`` is the safe-mode damping (N·m·s/rad, :data:`SAFE_KD`, not
    the robot's stand ``kd``: a damper needs more than a posture loop); ``hold_kp`` /
    ``hold_kd`` the gains of the hold after a reset or drive-on; ``reentry_speed`` (rad/s),
    ``reentry_gain_time`` (s) and ``reentry_tolerance`` (rad) shape the first commands after
    the drives stopped following commands (:mod:`.reentry`); ``kp_max`` / ``kd_max`` bound
    command gains. ``power_on_start``: switch the drives on (holding the measured position) when
    the node is activated. ``parameters``: declarations of the bridge's live parameters (names
    from :data:`BRIDGE_PARAMETERS`; :meth:`from_model` takes the robot file's); each starts at
    the value of its field here. Empty: nothing is tunable at run time.
    """

    node_name: str = "bridge_node"
    namespace: str = "hb50"
    rate_hz: float = 500.0
    mirror_hz: float = 10.0
    default_source: str = "control_node"
    allowed_sources: tuple[str, ...] | None = None
    takeover_hz: float = 10.0
    arbitration_window_s: float = 0.5
    fallback_s: float = 0.1
    watchdog_s: float = 0.25
    safe_kd: float = SAFE_KD
    hold_kp: float = 80.0
    hold_kd: float = 3.0
    reentry_speed: float = 1.0
    reentry_gain_time: float = 0.2
    reentry_tolerance: float = 0.1
    kp_max: float = 500.0
    kd_max: float = 50.0
    thermal_warn_c: float = 80.0
    thermal_derate_c: float = 90.0
    thermal_shutdown_c: float = 100.0
    thermal_hysteresis_c: float = 20.0
    power_on_start: bool = True
    parameters: tuple[ParameterSpec, ...] = ()

    def __post_init__(self) -> None:
        specs = tuple(self.parameters)
        object.__setattr__(self, "parameters", specs)
        for spec in specs:
            if not isinstance(spec, ParameterSpec) or spec.name not in _PARAMETER_FIELDS:
                raise ValueError(
                    f"BridgeConfig.parameters holds {getattr(spec, 'name', spec)!r}; expected "
                    f"declarations of the bridge's parameters {list(BRIDGE_PARAMETERS)}"
                )
        for name in ("rate_hz", "mirror_hz"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"BridgeConfig.{name} = {value}; expected a finite rate > 0 Hz")
        for name in ("safe_kd", "hold_kp", "hold_kd"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"BridgeConfig.{name} = {value}; expected a finite gain ≥ 0")
        try:
            ReentryRamp.check_settings(
                self.reentry_speed, self.reentry_gain_time, self.reentry_tolerance
            )
        except ValueError as exc:
            raise ValueError(f"BridgeConfig.{exc}") from None
        if self.allowed_sources is not None:
            allowed = tuple(self.allowed_sources)
            object.__setattr__(self, "allowed_sources", allowed)
            if self.default_source not in allowed:
                raise ValueError(
                    f"BridgeConfig.allowed_sources {allowed} leaves out the default source "
                    f"{self.default_source!r}; expected it to be allowed"
                )

    @classmethod
    def from_model(cls, model: RobotModel, **overrides: object) -> BridgeConfig:
        """Defaults from ``model``'s parameters where it declares them (``watchdog_time``,
        ``thermal_*``, ``arbitration_threshold``, ``kp`` / ``kd`` defaults and maxima — the
        hold gains, not the safe-mode damping), then
        ``overrides``. The declarations of :data:`BRIDGE_PARAMETERS` the model has become the
        live :attr:`parameters`."""
        declared = {p.name: p for p in model.parameters}
        values: dict[str, object] = {
            "parameters": select_specs(model.parameters, BRIDGE_PARAMETERS, missing_ok=True)
        }

        def take(parameter: str, field: str) -> None:
            if parameter in declared:
                values[field] = float(declared[parameter].default)

        take("watchdog_time", "watchdog_s")
        take("thermal_warn", "thermal_warn_c")
        take("thermal_derate", "thermal_derate_c")
        take("thermal_shutdown", "thermal_shutdown_c")
        take("thermal_hysteresis", "thermal_hysteresis_c")
        take("arbitration_threshold", "takeover_hz")
        take("kp", "hold_kp")
        take("kd", "hold_kd")
        for parameter, field in (("kp", "kp_max"), ("kd", "kd_max")):
            spec = declared.get(parameter)
            if spec is not None and spec.max is not None:
                values[field] = float(spec.max)
        threshold = values.get("takeover_hz")
        if isinstance(threshold, float):
            # A stopped source falls back after one period at the threshold (100 ms at 10 Hz),
            # and a source must show five commands in a row to take over (0.5 s at 10 Hz).
            values["fallback_s"] = 1.0 / threshold
            values["arbitration_window_s"] = 5.0 / threshold
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]

    def tuned(self, values: Mapping[str, ParameterValue]) -> BridgeConfig:
        """This configuration with live parameter ``values`` (names of :data:`BRIDGE_PARAMETERS`)
        applied; a new ``arbitration_threshold`` scales ``fallback_s`` and
        ``arbitration_window_s`` so they stay the same number of periods at the threshold."""
        fields: dict[str, float] = {
            _PARAMETER_FIELDS[name]: float(value)
            for name, value in values.items()
            if name in _PARAMETER_FIELDS
        }
        takeover = fields.get("takeover_hz", self.takeover_hz)
        if takeover != self.takeover_hz:
            fields["fallback_s"] = self.fallback_s * self.takeover_hz / takeover
            fields["arbitration_window_s"] = self.arbitration_window_s * self.takeover_hz / takeover
        return dataclasses.replace(self, **fields)  # type: ignore[arg-type]

    def check_live(self, changed: str = "") -> None:
        """ValueError unless this configuration's tunable settings can run together: a usable
        watchdog time, thermal thresholds in order, a workable arbitration timing. ``changed``
        (a parameter name) makes the message say which range that parameter must lie in."""
        Watchdog.check_timeout(self.watchdog_s)
        warn, derate, shutdown = self.thermal_warn_c, self.thermal_derate_c, self.thermal_shutdown_c
        if not warn <= derate < shutdown:
            order = "thermal_warn ≤ thermal_derate < thermal_shutdown"
            now = f"{warn!r} / {derate!r} / {shutdown!r} °C"
            if changed in _THERMAL_ORDER:
                value = {"thermal_warn": warn, "thermal_derate": derate}.get(changed, shutdown)
                raise ValueError(
                    f"{changed} = {value!r} °C would break {order} ({now}); expected {changed} "
                    f"in {self._thermal_range(changed)} °C"
                )
            raise ValueError(f"thermal thresholds {now} break {order}")
        ThermalGuard.check_thresholds(warn, derate, shutdown, self.thermal_hysteresis_c)
        Arbiter.check_timing(self.takeover_hz, self.arbitration_window_s, self.fallback_s)

    def _thermal_range(self, name: str) -> str:
        """The range (°C, as text) thermal parameter ``name`` may take given the other two and
        its declared bounds."""
        spec = next((s for s in self.parameters if s.name == name), None)
        floor = -math.inf if spec is None or spec.min is None else float(spec.min)
        ceiling = math.inf if spec is None or spec.max is None else float(spec.max)
        if name == "thermal_warn":
            return f"[{floor!r}, {self.thermal_derate_c!r}]"
        if name == "thermal_derate":
            return f"[{self.thermal_warn_c!r}, {self.thermal_shutdown_c!r})"
        return f"({self.thermal_derate_c!r}, {ceiling!r}]"


class BridgeNode(Node):
    """The bridge (see the module docstring). ``array`` is closed at shutdown if ``owns_array``.

    ``imu`` optionally returns the body IMU's reading each cycle; ``timers`` lets a test inject a
    non-threaded :class:`TimerThread` with a fake clock (the node's clock is the timer clock).
    ``run_loop=False`` creates no rate loop: the caller runs :meth:`cycle` itself (lock-step with
    a stepped simulator, or a test). ``stamp_ns`` returns the header stamp of ``bridge_data`` (ns
    since the Unix epoch; default the wall clock, as ROS stamps are): a stepped simulator passes
    its simulated time (on the wall-clock epoch of simulated time 0), so the control node, whose
    clock is the frame stamps, moves in the robot's time and not in the host's — a host stall
    does not fast-forward a stand-up the simulated robot has not lived through.
    """

    def __init__(
        self,
        array: ActuatorArray,
        bus: Bus,
        config: BridgeConfig | None = None,
        *,
        owns_array: bool = True,
        imu: Callable[[], ImuReading] | None = None,
        timers: TimerThread | None = None,
        run_loop: bool = True,
        stamp_ns: Callable[[], int] | None = None,
    ) -> None:
        cfg = config if config is not None else BridgeConfig()
        self._stamp_ns = stamp_ns
        self.config = cfg
        """The configuration in force (live parameter changes replace it, see the module
        docstring)."""
        self._initial_config = cfg
        self.array = array
        self._owns_array = owns_array
        self._imu = imu
        names = array.names
        self._names = names
        limits_cfg = array.config.limits
        self._has_brake = tuple(a.has_brakes for a in array.config.geometry.actuators)
        self._brakes_supported = False
        self._lower = np.array([s.position_min for s in limits_cfg], dtype=np.float64)
        self._upper = np.array([s.position_max for s in limits_cfg], dtype=np.float64)
        self.check = CommandCheck(
            names,
            JointLimits(names, limits_cfg),
            kp_max=cfg.kp_max,
            kd_max=cfg.kd_max,
            allowed_sources=cfg.allowed_sources,
            has_brake=self._has_brake,
            fields=HB50_COMMAND_FIELDS,
        )
        """The edge of the command path: checks each ``JointCommand`` and converts it, once, to
        the joint-space :class:`~jointbus.drivers.impedance.ImpedanceCommand` everything after
        it works on."""
        self.arbiter = Arbiter(
            cfg.default_source,
            takeover_hz=cfg.takeover_hz,
            window_s=cfg.arbitration_window_s,
            fallback_s=cfg.fallback_s,
        )
        self.watchdog = Watchdog(cfg.watchdog_s)
        self.estop = EStopLatch()
        self.thermal = ThermalGuard(
            names,
            warn_c=cfg.thermal_warn_c,
            derate_start_c=cfg.thermal_derate_c,
            shutdown_c=cfg.thermal_shutdown_c,
            hysteresis_c=cfg.thermal_hysteresis_c,
        )
        self._safe = safe_command(len(names), cfg.safe_kd, self._has_brake)
        self.reentry = ReentryRamp(
            names,
            [s.velocity_max for s in limits_cfg],
            speed=cfg.reentry_speed,
            gain_time=cfg.reentry_gain_time,
            tolerance=cfg.reentry_tolerance,
            period=1.0 / cfg.rate_hz,
        )
        """Shapes the owner's commands after the drives stopped following them (:mod:`.reentry`)."""
        self._braked = np.zeros(len(names), dtype=np.bool_)  # brakes of the last command run
        self._any_braked = False
        self._limp = np.zeros(len(names), dtype=np.bool_)  # kp = 0 in the last command run
        self._any_limp = False
        self._hold_cause = "start"
        self._hold_cmd: ImpedanceCommand | None = None
        self._command: ImpedanceCommand | None = None
        self._command_source = ""  # the source_node of ``_command``
        self._commands: deque[tuple[int, JointCommand | RefusedSample]] = deque(
            maxlen=_QUEUE_DEPTH
        )
        self._hardware: deque[tuple[int, str]] = deque(maxlen=_QUEUE_DEPTH)
        self._received = 0
        self._power_off_requested = False
        self._mode = BridgeMode.SAFE
        self._event_seq = 0
        self._state_key: tuple[object, ...] = ()
        self._state_strings: tuple[str, ...] = ()
        self.last_state: BridgeState | None = None
        self.last_data: BridgeData | None = None
        self.last_applied: ImpedanceCommand | None = None
        """The command written to the array in the last cycle (``None``: nothing written)."""
        self.last_applied_source = ""
        """Whose command :attr:`last_applied` is: the owner's ``source_node`` in ``run`` mode, the
        bridge's own name for hold and safe and while the re-entry ramp shapes the owner's."""
        self.cycles = 0
        self.rejected = 0
        self.published = 0
        """``BridgeData`` / ``BridgeState`` pairs published since construction."""
        self.publish_rate_hz = math.nan
        """Pairs published per second over the last completed window (Hz)."""
        self.publish_skipped = 0
        """Cycles due but not published in the last completed window."""
        self.publish_window_ns: tuple[int, int] | None = None
        """(start, end) of the last completed window on the node clock (ns): the publications
        counted are those after ``start`` up to and including ``end``."""
        self._window_start_ns: int | None = None
        self._window_published = 0
        self._publish_text = ""
        self.undecodable = 0
        """``joint_command`` samples the decoder refused (each also counted in ``rejected``)."""
        self._staged: BridgeConfig | None = None
        self._staged_lock = threading.Lock()
        super().__init__(cfg.node_name, bus, namespace=cfg.namespace, timers=timers)
        try:
            self.parameters = NodeParameters(
                self,
                cfg.parameters,
                {s.name: getattr(cfg, _PARAMETER_FIELDS[s.name]) for s in cfg.parameters},
            )
            """The bridge's live parameters (see the module docstring)."""
            self.parameters.on_change(self._stage_parameters)
            self._start_ns = self.clock()
            self._frame_id = array.config.geometry.header.frame_id
            self.data_publisher = self.create_publisher("bridge_data", BridgeData, MAB_RT)
            self.state_publisher = self.create_publisher("bridge_state", BridgeState, MAB_RT)
            self.mirror_publisher = self.create_publisher(
                "bridge_state_10hz", BridgeState, RELIABLE
            )
            # Not in the seed: monitors and UIs read joint temperatures and status flags from
            # this 10 Hz reliable copy, so a remote viewer never makes the bridge encode 500 Hz.
            self.data_mirror_publisher = self.create_publisher(
                "bridge_data_10hz", BridgeData, RELIABLE
            )
            self.command_subscription = self.create_subscription(
                "joint_command",
                JointCommand,
                self._on_command,
                MAB_RT,
                realtime=True,
                on_event=self._on_command_event,
                report_events=False,
            )
            self.hardware_subscription = self.create_subscription(
                "hardware_command", String, self._on_hardware, RELIABLE, realtime=True
            )
            self.create_timer(1.0 / cfg.mirror_hz, self._publish_mirror, name="bridge_state_10hz")
            self.liveliness = LivelinessMonitor(self, ignore={cfg.node_name}, hidden=False)
            """Which other nodes are alive; every change is reported on the status topic."""
            if run_loop:
                self.create_rate_loop(cfg.rate_hz, self._body, name="bridge", adaptive_spin=True)
        except BaseException:
            self.shutdown()
            raise

    @classmethod
    def open(
        cls,
        url: str,
        bus: Bus,
        config: BridgeConfig | None = None,
        **kwargs: object,
    ) -> BridgeNode:
        """A bridge owning the actuator array at ``url`` (``sim://...``, ``can://...``)."""
        from jointbus import drivers

        array = drivers.open(url)
        try:
            return cls(array, bus, config, owns_array=True, **kwargs)  # type: ignore[arg-type]
        except BaseException:
            array.close()
            raise

    # ---- state -------------------------------------------------------------------------------

    @property
    def mode(self) -> BridgeMode:
        """What the bridge wrote in the last cycle."""
        return self._mode

    @property
    def owner(self) -> str:
        """The command source that owned the actuators at the last evaluation."""
        return self.arbiter.owner(self.clock())

    @property
    def pending_commands(self) -> int:
        """Joint commands received and not yet processed by a cycle."""
        return len(self._commands)

    # ---- subscription callbacks (any thread: only queue, with the arrival time) ---------------

    def _on_command(self, msg: JointCommand) -> None:
        self._received += 1
        self._commands.append((self.clock(), msg))

    def _on_command_event(self, event: QosEvent) -> None:
        """A QoS event of the command subscription: an undecodable sample is queued as a
        refused command (read back here, on the receiving thread, to keep the loop lean); every
        other event is reported as any node reports it."""
        if not isinstance(event, MalformedPayloadEvent):
            self.reporter.record_event(event)
            return
        try:
            unchecked: UncheckedJointCommand | None = decode_unchecked(event.payload)
        except (DecodeError, ValueError, TypeError):
            unchecked = None
        self.undecodable += 1
        self._commands.append(
            (self.clock(), RefusedSample(unchecked, event.publisher, event.size, event.error))
        )

    def _on_hardware(self, msg: String) -> None:
        self._hardware.append((self.clock(), msg.data))

    # ---- live parameters (any thread: check and stage; the loop applies) ----------------------

    def _stage_parameters(self, change: ParameterChange) -> None:
        """Check the whole new parameter set; stage it for the next cycle, or raise to refuse.

        Runs with the parameter store locked, after the store took the new value, so
        :meth:`~jointbus.runtime.parameters.ParameterStore.values` is the candidate set. A
        rollback (another callback refused) comes back here with the old value and re-stages
        the old set.
        """
        # From the starting configuration, so rescaled arbitration times never accumulate
        # rounding over many changes (every live field comes from the store anyway).
        candidate = self._initial_config.tuned(self.parameters.store.values())
        candidate.check_live(change.name)
        with self._staged_lock:
            self._staged = candidate

    def _apply_staged(self) -> None:
        """Put the staged parameter set into force (loop thread, start of a cycle)."""
        with self._staged_lock:
            cfg, self._staged = self._staged, None
        if cfg is None:
            return
        try:
            self.watchdog.set_timeout(cfg.watchdog_s)
            self.thermal.set_thresholds(
                warn_c=cfg.thermal_warn_c,
                derate_start_c=cfg.thermal_derate_c,
                shutdown_c=cfg.thermal_shutdown_c,
                hysteresis_c=cfg.thermal_hysteresis_c,
            )
            self.arbiter.retune(
                takeover_hz=cfg.takeover_hz,
                window_s=cfg.arbitration_window_s,
                fallback_s=cfg.fallback_s,
            )
        except ValueError as exc:  # pragma: no cover - staged sets passed the same checks
            self._event(Level.ERROR, "parameters", f"parameter change not applied: {exc}")
            return
        self.config = cfg

    # ---- lifecycle hooks ---------------------------------------------------------------------

    def on_activate(self) -> None:
        self._window_start_ns = None  # an inactive spell is not a run of skipped cycles
        try:
            self._brakes_supported = Capability.BRAKES in self.array.capabilities()
        except DriverError as exc:
            self._event(Level.ERROR, "driver", f"driver capabilities unavailable: {exc}")
        if self.config.power_on_start and not self.estop.latched:
            self._drives_on(self.clock(), "start")
        self._event(
            Level.OK,
            "lifecycle",
            f"bridge active: {len(self._names)} actuators at {self.config.rate_hz:g} Hz; "
            f"default command source {self.config.default_source!r}",
        )

    def on_deactivate(self) -> None:
        """The loop has stopped: leave the drives damped rather than on a last target."""
        if not self.estop.latched and not self._power_off_requested:
            self._write(self._safe, "deactivate", self.config.node_name)
        self._mode = BridgeMode.SAFE
        self._event(Level.WARN, "lifecycle", "bridge inactive: drives left in damping")

    def on_shutdown(self) -> None:
        liveliness: LivelinessMonitor | None = getattr(self, "liveliness", None)
        if liveliness is not None:
            liveliness.close()
        try:
            if not self.array.closed:
                self.array.power(False)
        except (DriverError, MessageError) as exc:
            self._event(Level.ERROR, "driver", f"power off at shutdown failed: {exc}")
        finally:
            if self._owns_array:
                self.array.close()

    # ---- the cycle ---------------------------------------------------------------------------

    def _body(self, _cycle: CycleInfo) -> None:
        self.cycle(self.clock())

    def cycle(self, now_ns: int) -> None:
        """One bridge cycle at ``now_ns`` (node clock): read → decide → publish → write.

        Parameter changes staged since the last cycle take effect first.
        """
        self.cycles += 1
        if self._staged is not None:
            self._apply_staged()
        try:
            reading = self.array.read_joints()
        except DriverError as exc:
            self.report(Level.ERROR, f"reading the actuators failed: {exc}", key="read")
            return
        if self._hardware:
            self._take_hardware_commands(reading)
            try:  # the drives may have been switched: decide and publish on their new state
                reading = self.array.read_joints()
            except DriverError as exc:
                self.report(Level.ERROR, f"reading the actuators failed: {exc}", key="read")
                return
        self._take_thermal(reading)
        self._take_joint_commands()
        self.arbiter.owner(now_ns)  # a silent owner falls back even when nothing arrives
        new_owner = ""
        for change in self.arbiter.take_events():
            self._event(Level.OK, "owner", change.describe())
            new_owner = change.new
        previous = self._mode
        mode = self._decide(reading, now_ns)
        for event in self.watchdog.take_events():
            self._event(Level.WARN, "watchdog", event.describe())
        self._begin_reentry(previous, mode, new_owner, reading)
        self._mode = mode
        command = None
        source = self._command_source
        if mode is BridgeMode.RUN and self._command is not None:
            command = self._shaped(self._command, reading)
            if self.reentry.shaped:  # the ramp's command, not the owner's as sent
                source = self.config.node_name
        self._publish(reading, now_ns)
        if mode is BridgeMode.HOLD:
            self._write(self.thermal.derate(self._hold()), "hold", self.config.node_name)
        elif mode is BridgeMode.SAFE:
            self._write(self.thermal.derate(self._safe), "safe", self.config.node_name)
        elif command is not None:
            self._write(self.thermal.derate(command), "command", source)
        else:
            self.last_applied = None

    def _begin_reentry(
        self, previous: BridgeMode, mode: BridgeMode, new_owner: str, reading: JointReading
    ) -> None:
        """Start a re-entry from the measured pose when commands are applied again after the
        drives did not follow them (hold, safe, off), or when another source took over."""
        if mode is not BridgeMode.RUN:
            if self.reentry.active:
                self.reentry.cancel()
            return
        source = None
        if previous is not BridgeMode.RUN:
            cause = {
                BridgeMode.HOLD: self._hold_cause,
                BridgeMode.SAFE: "safe mode (no command for the watchdog time)",
                BridgeMode.OFF: "drives off",
                BridgeMode.ESTOP: "e-stop reset",  # reset and a fresh command in one cycle
            }[previous]
        elif new_owner:
            cause, source = f"owner change to {new_owner!r}", new_owner
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
        position; the re-entry ramp shapes the rest (:mod:`.reentry`)."""
        if self._any_limp or not cmd.kp.all():  # the common case costs one array scan
            stiff = cmd.kp > 0.0
            regained = self._limp & stiff
            if regained.any():  # held by nothing until now: it may be anywhere
                self.reentry.begin(self._clipped(reading.position), "stiffness regained", regained)
            self._limp = ~stiff
            self._any_limp = bool(self._limp.any())
        if self._any_braked or cmd.brake.any():
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
            if isinstance(event, ReentryEngaged):
                self._event(Level.WARN, "reentry", event.describe())
            else:
                self._event(Level.OK, "reentry", event.describe())
        return shaped

    def _decide(self, reading: JointReading, now_ns: int) -> BridgeMode:
        if self.estop.latched:
            return BridgeMode.ESTOP
        if self._power_off_requested or not reading.motor_power:
            return BridgeMode.OFF
        if self.estop.holding:
            return BridgeMode.HOLD
        if self.watchdog.expired(now_ns) or self._command is None:
            return BridgeMode.SAFE
        return BridgeMode.RUN

    def _take_joint_commands(self) -> None:
        commands = self._commands
        while commands:
            received_ns, cmd = commands.popleft()
            if isinstance(cmd, RefusedSample):
                self._reject(cmd.rejection(self.check))
                continue
            try:
                command = self.check.check(cmd)
            except CommandRejected as rejection:
                self._reject(rejection)
                continue
            if not self.arbiter.offer(cmd.source_node, received_ns, cmd.header.stamp.to_ns()):
                continue
            if not self.estop.is_fresh(received_ns):
                continue  # latched, or sent before the last reset / drive-on
            self._command = command
            self._command_source = cmd.source_node
            self.watchdog.feed(received_ns)
            if self.estop.holding:
                self.estop.release_hold()
                self._hold_cmd = None
                self._event(
                    Level.OK,
                    "hold",
                    f"hold released: command from {cmd.source_node!r} received after re-arming",
                )

    def _reject(self, rejection: CommandRejected) -> None:
        self.rejected += 1
        data = json.dumps(
            {
                "source_node": rejection.source_node,
                "joint": rejection.joint,
                "index": rejection.index,
                "field": rejection.field,
                "value": repr(rejection.value),
                "expected": rejection.expected,
            }
        ).encode()
        key = f"reject:{rejection.source_node}:{rejection.field}:{rejection.index}"
        self.report(Level.ERROR, str(rejection), data, key=key)

    def _take_hardware_commands(self, reading: JointReading) -> None:
        while self._hardware:
            received_ns, text = self._hardware.popleft()
            words = text.strip().lower().split(maxsplit=1)
            verb = words[0] if words else ""
            rest = words[1] if len(words) > 1 else ""
            if verb == "estop":
                self._trigger_estop(f"hardware_command estop {rest}".strip(), received_ns)
            elif verb == "reset" and not rest:
                self._reset_estop(reading, received_ns)
            elif verb == "power" and rest == "off":
                self._power_off()
            elif verb == "power" and rest == "on":
                self._power_on(received_ns)
            else:
                self._event(
                    Level.ERROR,
                    "hardware",
                    f"unknown hardware_command {text!r}; expected one of "
                    f"{', '.join(repr(c) for c in HARDWARE_COMMANDS)}",
                )

    def trigger_estop(self, reason: str) -> None:
        """Latch the e-stop now (in-process callers; over the bus: ``hardware_command``)."""
        self._trigger_estop(reason, self.clock())

    def _trigger_estop(self, reason: str, now_ns: int) -> None:
        event = self.estop.trigger(reason, now_ns)
        self._command = None
        self._hold_cmd = None
        self._commands.clear()
        if event is None:
            return  # already latched: the first reason stands
        self._mode = BridgeMode.ESTOP
        self._event(Level.ERROR, "estop", event.describe())
        self._drives_off("e-stop")

    def _reset_estop(self, reading: JointReading, now_ns: int) -> None:
        if not self.estop.latched:
            self._event(Level.WARN, "estop", "reset ignored: the e-stop is not latched")
            return
        measured = self._clipped(reading.position)
        event = self.estop.reset(now_ns, measured.tolist())
        if event is None:  # pragma: no cover - latched was checked above
            return
        self._hold_cmd = None
        self._hold_cause = "e-stop reset"
        self._event(Level.OK, "estop", event.describe())
        if not self._power_off_requested:
            self._switch_on("reset")

    def _power_off(self) -> None:
        self._power_off_requested = True
        self._command = None
        self._hold_cmd = None
        self._event(Level.WARN, "power", "drives switched off on request (power off)")
        self._drives_off("power off")

    def _power_on(self, now_ns: int) -> None:
        if self.estop.latched:
            self._event(
                Level.ERROR,
                "power",
                f"power on refused: the e-stop is latched ({self.estop.reason}); reset it first",
            )
            return
        self._power_off_requested = False
        self._drives_on(now_ns, "power on")

    def _drives_on(self, now_ns: int, why: str) -> None:
        """Switch on and hold the measured position until a command sent after ``now_ns``."""
        try:
            measured = self._clipped(self.array.read_joints().position)
        except DriverError as exc:
            self._event(Level.ERROR, "driver", f"{why}: reading the actuators failed: {exc}")
            return
        self.estop.begin_hold(now_ns, measured.tolist())
        self._hold_cmd = None
        self._hold_cause = f"drives on ({why})"
        self._command = None
        self._switch_on(why)

    def _switch_on(self, why: str) -> None:
        try:
            if self._brakes_supported:
                self.array.brakes(False)
            self.array.power(True)
        except (DriverError, MessageError) as exc:
            self._event(Level.ERROR, "driver", f"{why}: switching the drives on failed: {exc}")
            return
        self._event(Level.OK, "power", f"{why}: drives on, holding the measured position")

    def _drives_off(self, why: str) -> None:
        try:
            if self._brakes_supported:
                self.array.brakes(True)
        except (DriverError, MessageError) as exc:
            self._event(Level.ERROR, "driver", f"{why}: engaging the brakes failed: {exc}")
        try:
            self.array.power(False)
        except (DriverError, MessageError) as exc:
            self._event(Level.ERROR, "driver", f"{why}: switching the drives off failed: {exc}")
        self.last_applied = None

    def _take_thermal(self, reading: JointReading) -> None:
        back: list[int] = []
        for event in self.thermal.update(reading.temperature):
            level = {
                ThermalLevel.OK: Level.OK,
                ThermalLevel.WARN: Level.WARN,
                ThermalLevel.ERROR: Level.ERROR,
            }[event.new]
            self._event(level, "thermal", event.describe(self.thermal))
            if event.old is ThermalLevel.ERROR:
                back.append(event.index)
        if back:  # a drive off for heat sagged meanwhile: it re-enters from where it is
            mask = np.zeros(len(self._names), dtype=np.bool_)
            mask[back] = True
            self.reentry.begin(self._clipped(reading.position), "thermal shutdown cleared", mask)

    def _hold(self) -> ImpedanceCommand:
        if self._hold_cmd is None:
            self._hold_cmd = self.estop.hold_command(self.config.hold_kp, self.config.hold_kd)
        return self._hold_cmd

    def _clipped(self, positions: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Measured positions clipped into the position limits (NaN stays NaN): a hold target
        must itself be a valid command, and a joint a hair past its limit is held at it."""
        clipped: npt.NDArray[np.float64] = np.clip(positions, self._lower, self._upper)
        return clipped

    def _write(self, cmd: ImpedanceCommand, why: str, source: str) -> None:
        try:
            self.array.impedance(cmd)
        except (DriverError, MessageError) as exc:
            self.last_applied = None
            self.report(Level.ERROR, f"writing the {why} command failed: {exc}", key=f"write:{why}")
            return
        self.last_applied = cmd
        self.last_applied_source = source

    # ---- publishing --------------------------------------------------------------------------

    def _publish(self, reading: JointReading, now_ns: int) -> None:
        stamp = self._stamp_ns
        frame_id = self._frame_id
        header = Header.now(frame_id) if stamp is None else Header.at_ns(stamp(), frame_id)
        orientation, gyro, accel = self._imu_fields()
        # One pass from the driver's arrays (float32 rounding, temperature bytes, status flags:
        # BridgeData.from_joint_arrays); NaN temperature (not reported) → 0, as uint8 has no NaN.
        data = BridgeData.from_joint_arrays(
            header,
            orientation,
            gyro,
            accel,
            self._names,
            position=reading.position,
            velocity=reading.velocity,
            effort=reading.effort,
            temperature=reading.temperature,
            state=reading.state,
        )
        self.last_data = data
        self.data_publisher.publish(data)
        drives = bool(reading.motor_power) and not self.estop.latched
        status = self._status_strings()
        up_time = max(0, (now_ns - self._start_ns) // _NS_PER_S)
        state = self.last_state
        # BridgeState changes about once a second (up_time, the publish-rate text): the same
        # immutable message is published again until one of its fields changes.
        if (
            state is None
            or state.drives_enabled is not drives
            or state.status is not status
            or state.up_time != up_time
        ):
            state = BridgeState(drives_enabled=drives, status=status, up_time=up_time)
        self.last_state = state
        self.state_publisher.publish(state)
        self.published += 1
        self._account_publish(now_ns)

    def _account_publish(self, now_ns: int) -> None:
        """Close the publish-rate window when :data:`PUBLISH_WINDOW_S` has passed (loop thread).

        The window runs from one publication to a later one: the cycles due in between are the
        elapsed time × rate, the ones that ran are the publications counted after the first.
        """
        start = self._window_start_ns
        if start is None:
            self._window_start_ns, self._window_published = now_ns, self.published
            return
        elapsed_ns = now_ns - start
        if elapsed_ns < PUBLISH_WINDOW_S * _NS_PER_S:
            return
        ran = self.published - self._window_published
        due = max(ran, round(elapsed_ns * self.config.rate_hz / _NS_PER_S))
        self.publish_rate_hz = ran * _NS_PER_S / elapsed_ns
        self.publish_skipped = due - ran
        self.publish_window_ns = (start, now_ns)
        self._publish_text = (
            f"{self.publish_rate_hz:.0f} Hz, {self.publish_skipped} of {due} cycles "
            f"skipped in the last {elapsed_ns / _NS_PER_S:.1f} s"
        )
        self._window_start_ns, self._window_published = now_ns, self.published

    def _imu_fields(self) -> tuple[Quaternion, Vector3, Vector3]:
        if self._imu is None:
            return Quaternion(*_NAN3, math.nan), Vector3(*_NAN3), Vector3(*_NAN3)
        try:
            sample = self._imu()
            o, g, a = sample.orientation, sample.angular_velocity, sample.linear_acceleration
            if (  # the simulator's and drivers' ImuReading: float64 arrays, one tolist each
                type(o) is np.ndarray
                and type(g) is np.ndarray
                and type(a) is np.ndarray
                and o.shape == (4,)
                and g.shape == a.shape == (3,)
                and o.dtype == g.dtype == a.dtype == np.float64
            ):
                w, x, y, z = o.tolist()
                return Quaternion(x, y, z, w), Vector3(*g.tolist()), Vector3(*a.tolist())
            w, x, y, z = np.asarray(sample.orientation, dtype=np.float64).reshape(4).tolist()
            gyro = np.asarray(sample.angular_velocity, dtype=np.float64).reshape(3).tolist()
            accel = np.asarray(sample.linear_acceleration, dtype=np.float64).reshape(3).tolist()
            return Quaternion(x, y, z, w), Vector3(*gyro), Vector3(*accel)
        except (ValueError, TypeError, MessageError, DriverError) as exc:
            self.report(Level.ERROR, f"IMU reading failed: {exc}", key="imu")
            return Quaternion(*_NAN3, math.nan), Vector3(*_NAN3), Vector3(*_NAN3)

    def _status_strings(self) -> tuple[str, ...]:
        owner = self.arbiter.owner(self.clock())
        levels = self.thermal.levels
        ramping = self._mode is BridgeMode.RUN and self.reentry.ramping
        key = (owner, self._mode, self.estop.reason, levels, self._publish_text, ramping)
        if key != self._state_key:
            strings = BridgeStatus(
                owner=owner,
                mode=self._mode,
                estop_reason=self.estop.reason if self.estop.latched else None,
                publish=self._publish_text,
                reentry_ramping=ramping,
                thermal=tuple(
                    ThermalNote(level.name, self._names[index], index)
                    for index, level in enumerate(levels)
                    if level is not ThermalLevel.OK
                ),
            ).to_strings()
            self._state_key = key
            self._state_strings = strings
        return self._state_strings

    def _publish_mirror(self) -> None:
        state, data = self.last_state, self.last_data
        if state is not None:
            self.mirror_publisher.publish(state)
        if data is not None:
            self.data_mirror_publisher.publish(data)

    # ---- reports -----------------------------------------------------------------------------

    def _event(self, level: Level, kind: str, text: str) -> None:
        """One status event; distinct keys so consecutive events are never folded together."""
        self._event_seq += 1
        self.report(level, text, key=f"event:{kind}:{self._event_seq % _EVENT_KEYS}")


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
