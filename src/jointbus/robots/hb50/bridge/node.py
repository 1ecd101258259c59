"""The bridge node: hb50's array node — owns the actuators and applies joint commands safely.

Where it sits: :mod:`jointbus.robots.hb50.bridge`. :class:`BridgeNode` *is* the generic
:class:`~jointbus.nodes.array.ArrayNode` (the node ``jointbus serve`` runs: the cycle, the
impedance stream's modes, the safety components of :mod:`jointbus.nodes.safety`, Player's and
Rock's commands and requests, the Beam Bots / Player / Rock topics) plus hb50's message adapter,
which is this module: hb50's ``JointCommand`` as an impedance input (checked and converted once,
with hb50's field names), ``BridgeData`` / ``BridgeState`` and their 10 Hz mirrors, the
``hardware_command`` texts, the live parameters, the publish-rate report and the liveliness
supervisor. It is the only node that talks to the actuators (Honey Badger 5.0's ``bridge_node``).

hb50's own topics (``/hb50/...`` by default; the array node's are in :mod:`jointbus.nodes.array`
— ``joint_state``, ``actarray/data``, ``actarray/geometry``, ``joints``, ``joint_impedance``, the
``actarray/*`` commands and requests, ``estop`` / ``estop_reset``):

==========================  ======================  ==========  =================================
topic                       type                    QoS         what
==========================  ======================  ==========  =================================
``bridge_data``             ``BridgeData``          MAB_RT      every cycle: every actuator
``bridge_state``            ``BridgeState``         MAB_RT      every cycle: drives, owner, mode
``bridge_state_10hz``       ``BridgeState``         RELIABLE    10 Hz mirror of ``bridge_state``
``bridge_data_10hz``        ``BridgeData``          RELIABLE    10 Hz mirror of ``bridge_data``
``joint_command``  (sub)    ``JointCommand``        MAB_RT      hb50's command input
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

**One cycle** (:meth:`~jointbus.nodes.array.ArrayNode.cycle`): read the array → take the hardware
commands, check and arbitrate the queued joint commands, run the watchdog and the thermal guard →
publish ``BridgeData`` and ``BridgeState`` (and, every 5th cycle, the array node's topics while
someone listens) → write the command of the current mode (:class:`BridgeMode`, the array node's
:class:`~jointbus.nodes.array.StreamMode`): ``estop``, ``off``, ``idle`` (a Player or Rock one-shot
command ended the stream until the next impedance command), ``hold`` (after a reset or a drive-on),
``safe`` (the watchdog's damping) or ``run``, with the re-entry ramp and the brakes rule. The
bridge's settings of the array node: the drives are switched on and the measured pose held at start
(``power_on_start``), and ``reset`` switches them on again (``rearm_drives_on``).

**The command path.** A ``JointCommand`` is converted once, at the edge: the command check
(:class:`~jointbus.nodes.safety.command_check.CommandCheck` with hb50's field names) validates it
and returns the joint-space :class:`~jointbus.drivers.impedance.ImpedanceCommand` (float64 arrays
in actuator order) that arbitration, the re-entry ramp, the brakes rule, the thermal derating and
:meth:`~jointbus.drivers.ActuatorArray.impedance` work on; no later step rebuilds a message.

The chosen command is scaled by the thermal derating before it is written. Incoming commands are
only *queued* by the subscription callback (with their arrival time); every decision runs on the
loop thread, in arrival order, and a test drives the node with
:meth:`~jointbus.nodes.array.ArrayNode.cycle` and an injected clock.

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
:class:`~jointbus.nodes.safety.command_check.CommandCheck` names the source and the culprit — the
array node's :meth:`~jointbus.nodes.array.ArrayNode.refusing_at_decode`, which its generic
``joint_impedance`` input uses too;
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
them; a custom source then takes over after four periods of steady commands: 0.4 s at 10 Hz).
``kp`` / ``kd`` belong to the control node (its posture gains): the bridge takes only their
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
import math
import threading
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar, Final, Protocol

import numpy as np
import numpy.typing as npt

from jointbus.bus import MAB_RT, RELIABLE, Bus
from jointbus.drivers.actuator_array import ActuatorArray, JointReading
from jointbus.drivers.errors import DriverError, RequestRejected
from jointbus.messages.errors import MessageError
from jointbus.messages.geometry_msgs import Quaternion, Vector3
from jointbus.messages.std_msgs import Header, String
from jointbus.model.parameters import ParameterSpec, ParameterValue
from jointbus.model.robot import RobotModel
from jointbus.nodes.array import ArrayNode, ArrayNodeConfig, StreamMode
from jointbus.nodes.safety.arbiter import Arbiter
from jointbus.nodes.safety.reentry import ReentryRamp
from jointbus.nodes.safety.thermal_guard import ThermalGuard, ThermalLevel
from jointbus.nodes.safety.watchdog import Watchdog
from jointbus.robots.hb50.bridge.command_age import COMMAND_AGE_BINS, age_kind
from jointbus.robots.hb50.bridge.fallback import StanceFallback, StanceFallbackSettings
from jointbus.robots.hb50.bridge.unchecked_command import (
    HB50_COMMAND_FIELDS,
    decode_unchecked,
)
from jointbus.robots.hb50.messages import (
    BridgeData,
    BridgeState,
    JointCommand,
    Level,
)
from jointbus.robots.hb50.messages.bridge_status import BridgeMode, BridgeStatus, ThermalNote
from jointbus.runtime.host_steal import StealSamples
from jointbus.runtime.liveliness import LivelinessMonitor
from jointbus.runtime.parameters import NodeParameters, ParameterChange, select_specs
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
#: Hardware commands buffered between two cycles.
_QUEUE_DEPTH: Final = 256
_NAN3: Final = (math.nan, math.nan, math.nan)
_new: Final = object.__new__
_set: Final = object.__setattr__
#: Span of the publish-rate accounting (s) shown in ``BridgeState.status``.
PUBLISH_WINDOW_S: Final = 1.0
#: Below this real-time factor (robot time per wall-clock second) the bridge says it falls behind.
BEHIND_RTF: Final = 0.98
#: Above this share of skipped cycles (0–1) the bridge says it falls behind.
BEHIND_SKIPPED: Final = 0.01
#: Command ages (cycles) are counted up to this many frames back: the stamps of that many of the
#: last frames published are kept to tell a frame's stamp from a sender's own clock.
_MAX_AGE_CYCLES: Final = 1000
#: A command stamped more than this (s) before the last frame is on another clock (a controller
#: that does not stamp with the frame it answers), not old: its age is not known. A stalled
#: controller's queue holds ≈ 1 s of frames at most (the socket buffers).
_OTHER_CLOCK_S: Final = 10.0
#: While it stays behind, the bridge says so again every this many publish windows.
BEHIND_REPEAT_WINDOWS: Final = 10
#: Period (s) of the host-steal samples a pace WARN reads its steal from: within 0.1 s of the
#: window's ends, for 10 reads of /proc/stat a second on the timer thread (≈ 0.25 ms of CPU).
STEAL_SAMPLE_S: Final = 0.1
#: Safe-mode damping (N·m·s/rad), the :attr:`BridgeConfig.safe_kd` default. Measured on the
#: hb50 in MuJoCo (``tests/faults/test_fault_watchdog.py``): standing, it sinks to 0.15 m in
#: 0.77 s and to 0.10 m in 1.91 s (0.57 s and 1.53 s with the stand gain 3.0 used before; 0.97 s
#: and 2.23 s at 6.0). Higher is slower but bounded by the drive: 4.5 · 2 ms / 0.0094 kg·m²
#: (armature) = 0.96 < 1, so even a damping updated only at the 500 Hz bus rate does not
#: overshoot; the 0.38 rad/s velocity noise becomes 1.7 N·m (1σ), 7 % of the 24 N·m limit; the
#: largest torque while sinking was 9.1 N·m.
SAFE_KD: Final = 4.5
#: Bound (s) of the category-1 e-stop's damped stop before the drives go off, the
#: :attr:`BridgeConfig.estop_stop_s` default (see docs/SAFETY.md for the measured stop).
ESTOP_STOP_S: Final = 2.0
#: The fallbacks a bridge can run when its command owner stalls or dies (``BridgeConfig.fallback``).
FALLBACKS: Final = ("stance", "damping")

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
    the value of its field here. Empty: nothing is tunable at run time. ``array_topics_hz``: the
    rate of the array node's Beam Bots / Player / Rock topics (Hz; 100: every 5th cycle at
    500 Hz — ``bridge_data`` is hb50's every-cycle topic; building the three costs ≈ 30 µs).
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
    array_topics_hz: float = 100.0
    parameters: tuple[ParameterSpec, ...] = ()
    fallback: str = "stance"
    estop_category: int = 1
    estop_stop_s: float = ESTOP_STOP_S
    model: RobotModel | None = dataclasses.field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        specs = tuple(self.parameters)
        object.__setattr__(self, "parameters", specs)
        for spec in specs:
            if not isinstance(spec, ParameterSpec) or spec.name not in _PARAMETER_FIELDS:
                raise ValueError(
                    f"BridgeConfig.parameters holds {getattr(spec, 'name', spec)!r}; expected "
                    f"declarations of the bridge's parameters {list(BRIDGE_PARAMETERS)}"
                )
        if self.fallback not in FALLBACKS:
            raise ValueError(
                f"BridgeConfig.fallback = {self.fallback!r}; expected one of {list(FALLBACKS)}"
            )
        if self.estop_category not in (0, 1) or isinstance(self.estop_category, bool):
            raise ValueError(
                f"BridgeConfig.estop_category = {self.estop_category!r}; expected 0 (STO: drives "
                "off at once) or 1 (damped stop, then drives off)"
            )
        if not (math.isfinite(self.estop_stop_s) and 0.0 < self.estop_stop_s <= 10.0):
            raise ValueError(
                f"BridgeConfig.estop_stop_s = {self.estop_stop_s!r}; expected a bound in "
                "(0, 10] s for the category-1 stop"
            )
        for name in ("rate_hz", "mirror_hz", "array_topics_hz"):
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
            "parameters": select_specs(model.parameters, BRIDGE_PARAMETERS, missing_ok=True),
            "model": model,
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
            # and a source must keep it up for four periods to take over (0.4 s at 10 Hz, five
            # commands in a 0.5 s window, however fast it sends).
            values["fallback_s"] = 1.0 / threshold
            values["arbitration_window_s"] = 5.0 / threshold
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]

    def array_settings(self) -> ArrayNodeConfig:
        """The array node's settings this bridge runs with; an e-stop reset switches the drives
        on and holds the measured pose (hb50's ``reset`` re-arms the robot)."""
        return ArrayNodeConfig(
            rate_hz=self.rate_hz,
            watchdog_s=self.watchdog_s,
            safe_kd=self.safe_kd,
            hold_kp=self.hold_kp,
            hold_kd=self.hold_kd,
            kp_max=self.kp_max,
            kd_max=self.kd_max,
            default_source=self.default_source,
            allowed_sources=self.allowed_sources,
            takeover_hz=self.takeover_hz,
            arbitration_window_s=self.arbitration_window_s,
            fallback_s=self.fallback_s,
            warn_c=self.thermal_warn_c,
            derate_start_c=self.thermal_derate_c,
            shutdown_c=self.thermal_shutdown_c,
            hysteresis_c=self.thermal_hysteresis_c,
            reentry_speed=self.reentry_speed,
            reentry_gain_time=self.reentry_gain_time,
            reentry_tolerance=self.reentry_tolerance,
            power_on_start=self.power_on_start,
            rearm_drives_on=True,
            state_hz=min(self.array_topics_hz, self.rate_hz),
            estop_stop_s=self.estop_stop_s if self.estop_category == 1 else 0.0,
        )

    def fallback_policy(
        self,
        up: Callable[[], tuple[float, float, float] | None] | None = None,
        *,
        frame: Callable[[], BridgeData | None] | None = None,
    ) -> StanceFallback | None:
        """hb50's :class:`~.fallback.StanceFallback` (stand gains ``hold_kp`` / ``hold_kd``)
        when :attr:`fallback` is ``"stance"`` and the robot model is known (:meth:`from_model`);
        ``None``: the array node's damping."""
        if self.fallback != "stance" or self.model is None:
            return None
        return StanceFallback.from_model(
            self.model,
            period=1.0 / self.rate_hz,
            settings=StanceFallbackSettings(kp=self.hold_kp, kd=self.hold_kd, down_kd=self.safe_kd),
            up=up,
            frame=frame,
        )

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


class BridgeNode(ArrayNode):
    """The bridge: hb50's array node (see the module docstring). ``array`` is closed at shutdown
    if ``owns_array``.

    ``imu`` optionally returns the body IMU's reading each cycle; ``timers``, ``run_loop`` and
    ``stamp_ns`` are the :class:`~jointbus.nodes.array.ArrayNode`'s: a test injects a fake clock,
    a stepped simulator runs :meth:`cycle` itself and stamps ``bridge_data`` in simulated time (on
    the wall-clock epoch of simulated time 0), so the control node, whose clock is the frame
    stamps, moves in the robot's time and not in the host's — a host stall does not fast-forward
    a stand-up the simulated robot has not lived through.
    """

    ROLE: ClassVar[str] = "bridge"
    LOOP_NAME: ClassVar[str] = "bridge"
    ADAPTIVE_SPIN: ClassVar[bool] = True

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
        self.config = cfg
        """The configuration in force (live parameter changes replace it, see the module
        docstring)."""
        self._initial_config = cfg
        self._imu = imu
        self._names = array.names
        self._hardware: deque[tuple[int, str]] = deque(maxlen=_QUEUE_DEPTH)
        self._state_key: tuple[object, ...] = ()
        self._state_strings: tuple[str, ...] = ()
        self.last_state: BridgeState | None = None
        self.last_data: BridgeData | None = None
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
        self._window_stamp_ns = 0  # the robot's time (frame stamp) at the window's start
        self._window_commands = 0
        self._publish_text = ""
        self.real_time_factor = math.nan
        """Robot time per wall-clock second over the last completed window: a stepped
        simulator's time from the frame stamps (1 for hardware, whose stamps are the clock)."""
        self.command_rate_hz = math.nan
        """``JointCommand`` samples received per second over the last completed window (Hz)."""
        self._behind = False
        self._behind_windows = 0
        self._behind_slow = False  # behind, and slower than the wall clock (not only skipping)
        self._window_ages: list[int] = []
        self._age_counts = [0] * (COMMAND_AGE_BINS + 1)
        # The stamps of the last frames published, to age only a command that carries one.
        self._frame_stamps: set[int] = set()
        self._frame_stamp_order: deque[int] = deque()
        self.command_age_p99_cycles: int | None = None
        """p99 of the applied commands' age in cycles over the last window (``None``: none)."""
        self.stamps_robot_time = stamp_ns is not None
        """Frames are stamped with the robot's own time (a stepped simulator's), which may run
        slower than the wall clock; else with the wall clock (hardware)."""
        self._staged: BridgeConfig | None = None
        self._staged_lock = threading.Lock()
        super().__init__(
            array,
            bus,
            namespace=cfg.namespace,
            config=cfg.array_settings(),
            name=cfg.node_name,
            owns_array=owns_array,
            timers=timers,
            run_loop=run_loop,
            stamp_ns=stamp_ns,
            fallback=cfg.fallback_policy(
                self._up if imu is not None else None,
                frame=(lambda: self.last_data) if imu is not None else None,
            ),
        )
        try:
            self.check = self.command_check(
                JointCommand.TYPE_NAME, HB50_COMMAND_FIELDS, limit_type_name="command"
            )
            """The edge of hb50's command path: checks each ``JointCommand`` and converts it,
            once, to the joint-space :class:`~jointbus.drivers.impedance.ImpedanceCommand`
            everything after it works on."""
            self.parameters = NodeParameters(
                self,
                cfg.parameters,
                {s.name: getattr(cfg, _PARAMETER_FIELDS[s.name]) for s in cfg.parameters},
            )
            """The bridge's live parameters (see the module docstring)."""
            self.parameters.on_change(self._stage_parameters)
            self._start_ns = self.clock()
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
                # an undecodable sample is queued as a refused command (the array node's rule)
                on_event=self.refusing_at_decode(
                    decode_unchecked, JointCommand.TYPE_NAME, self.check
                ),
                report_events=False,
            )
            self.count_refusals(self.check, self.command_subscription)
            self.hardware_subscription = self.create_subscription(
                "hardware_command", String, self._on_hardware, RELIABLE, realtime=True
            )
            self.create_timer(1.0 / cfg.mirror_hz, self._publish_mirror, name="bridge_state_10hz")
            self.host_steal = StealSamples()
            """The host's steal time, sampled on the timer thread (never in the loop: a file
            read), which a pace WARN states (:mod:`jointbus.runtime.host_steal`)."""
            self.create_timer(
                STEAL_SAMPLE_S,
                lambda: self.host_steal.sample(self.timers.clock()),
                name="host_steal",
                managed=False,
            )
            self.liveliness = LivelinessMonitor(self, ignore={cfg.node_name}, hidden=False)
            """Which other nodes are alive; every change is reported on the status topic."""
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
    def mode(self) -> BridgeMode:  # type: ignore[override]
        """What the bridge wrote in the last cycle (as ``BridgeState`` states it)."""
        return BridgeMode(self._mode.value)

    def _up(self) -> tuple[float, float, float] | None:
        """The world's vertical in the body frame (unit vector) by the IMU's orientation
        (w, x, y, z), ``None`` when it gives none: the third row of the body's rotation."""
        if self._imu is None:
            return None
        try:
            w, x, y, z = np.asarray(self._imu().orientation, dtype=np.float64).reshape(4).tolist()
        except (ValueError, TypeError, MessageError, DriverError):
            return None
        norm = w * w + x * x + y * y + z * z
        if not math.isfinite(norm) or norm <= 0.0:
            return None
        return (
            2.0 * (x * z - w * y) / norm,
            2.0 * (y * z + w * x) / norm,
            (w * w - x * x - y * y + z * z) / norm,
        )

    # ---- subscription callbacks (any thread: only queue, with the arrival time) ---------------

    def _on_command(self, msg: JointCommand) -> None:
        self.queue_impedance(msg, self.check)

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

    def before_cycle(self) -> None:
        """Put the staged parameter set into force (loop thread, start of a cycle)."""
        staged: BridgeConfig | None = self._staged
        if staged is None:
            return
        with self._staged_lock:
            cfg, self._staged = self._staged, None
        if cfg is None:  # taken by a concurrent caller
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
        super().on_activate()

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
            super().on_shutdown()

    def event_counts(self) -> dict[str, int]:
        """The array node's limit events, and the commands applied since the start by their age
        in cycles (``command age 0 cycles`` … ``command age 8+ cycles``, the age as in the
        status line's ``command age p99``). Why counts since the start: two diagnostics give the
        age distribution over any span between them exactly — a soak's p99 over 30 minutes —
        where the status line has only each second's p99."""
        counts = super().event_counts()
        for age, count in enumerate(self._age_counts):
            counts[age_kind(age)] = count
        return counts

    # ---- hardware commands (loop thread) -------------------------------------------------------

    def command_age_s(self, stamp_ns: int) -> float | None:
        """How old (s) a command stamped ``stamp_ns`` is against the last published frame: the
        control node stamps each command with the frame it answers. Unstamped (0), stamped
        later than that frame, or more than :data:`_OTHER_CLOCK_S` before it (another clock):
        ``None``, not known."""
        last = self.last_data
        if stamp_ns <= 0 or last is None:
            return None
        age_ns = last.header.stamp.to_ns() - stamp_ns
        if not 0 <= age_ns <= _OTHER_CLOCK_S * _NS_PER_S:
            return None
        return age_ns / _NS_PER_S

    def take_requests(self, reading: JointReading) -> bool:
        """The queued ``hardware_command`` texts, in arrival order."""
        if not self._hardware:
            return False
        while self._hardware:
            received_ns, text = self._hardware.popleft()
            words = text.strip().split(maxsplit=1)
            verb = words[0].lower() if words else ""
            rest = words[1] if len(words) > 1 else ""  # an e-stop's reason keeps its case
            if verb == "estop":
                self._trigger_estop(f"hardware_command estop {rest}".strip(), received_ns)
            elif verb == "reset" and not rest:
                self._reset_estop(reading.position, received_ns)
            elif verb == "power" and rest.lower() == "off":
                self._power_off(engage_brakes=True)
            elif verb == "power" and rest.lower() == "on":
                self._hardware_power_on(received_ns)
            else:
                self._event(
                    Level.ERROR,
                    "hardware",
                    f"unknown hardware_command {text!r}; expected one of "
                    f"{', '.join(repr(c) for c in HARDWARE_COMMANDS)}",
                )
        return True

    def _hardware_power_on(self, now_ns: int) -> None:
        if self.estop.latched:
            self._event(
                Level.ERROR,
                "power",
                f"power on refused: the e-stop is latched ({self.estop.reason}); reset it first",
            )
            return
        try:
            self._refuse_while_hot("power on", np.arange(len(self._names), dtype=np.intp))
        except RequestRejected as exc:
            self._event(Level.ERROR, "power", f"power on refused: {exc}")
            return
        self._power_on(now_ns, "power on")

    # ---- publishing --------------------------------------------------------------------------

    def publish_robot(self, reading: JointReading, now_ns: int, header: Header) -> None:
        """``BridgeData`` and ``BridgeState`` of this cycle, and the publish-rate accounting."""
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
        cycle_ns = header.stamp.to_ns()
        self._frame_stamps.add(cycle_ns)
        self._frame_stamp_order.append(cycle_ns)
        if len(self._frame_stamp_order) > _MAX_AGE_CYCLES:
            self._frame_stamps.discard(self._frame_stamp_order.popleft())
        drives = bool(reading.motor_power) and (not self.estop.latched or self.estop_stopping)
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
        if self._mode is StreamMode.RUN and self.command_stamp_ns in self._frame_stamps:
            # Sensor to command: cycles between the frame this command answers (its stamp,
            # for a controller that stamps its output with its input, as the control node does)
            # and the cycle that applies it. Only a stamp that is one of the last frames' has
            # that age: a command stamped with its sender's clock (``Header.now()``) has none —
            # against a stepped simulator's frames, which fall behind the wall clock by the time
            # a stall lost, its stamp read as a 17-cycle age while the controller answered each
            # frame within 5 ms (a user's trial, 2026-12-06).
            period_ns = round(_NS_PER_S / self.config.rate_hz)
            age = (cycle_ns - self.command_stamp_ns + period_ns // 2) // period_ns
            if 0 <= age <= _MAX_AGE_CYCLES:
                self._window_ages.append(age)
                self._age_counts[min(age, COMMAND_AGE_BINS)] += 1
        # The robot's time: a stepped simulator's stamps; hardware's is the wall clock itself.
        robot_ns = cycle_ns if self.stamps_robot_time else None
        self._account_publish(self.cycle_due_ns, robot_ns)

    def _account_publish(self, now_ns: int, stamp_ns: int | None) -> None:
        """Close the publish-rate window when :data:`PUBLISH_WINDOW_S` has passed (loop thread).

        The window runs from one publication to a later one, each at the time its cycle was due
        (``now_ns``: :attr:`cycle_due_ns`, the loop's deadline): the cycles due in between are
        the elapsed time × rate, the ones that ran are the publications counted after the first.
        The real-time factor is the robot time the frame stamps (``stamp_ns``: a stepped
        simulator's time; ``None`` for hardware, whose time is the clock: factor 1) advanced over
        the same span. Why due times: a stepped simulator's frames are stamped with their
        cycle's due time, so a window measured from a cycle that ran late (the one after a
        stall, the stall's skipped slots stepped in it) to one on time gave 1 + the lateness:
        "skips cycles … real-time factor 1.001" for a robot that kept the clock exactly, and
        0.999 for the window before it;
        falling behind — a factor under :data:`BEHIND_RTF` or more than :data:`BEHIND_SKIPPED` of
        the cycles skipped — is one WARN on the status topic with the figures, and its end one OK.
        """
        start = self._window_start_ns
        if start is None:
            self._window_start_ns, self._window_published = now_ns, self.published
            self._window_stamp_ns = stamp_ns or 0
            self._window_commands = self.command_subscription.stats().received
            return
        elapsed_ns = now_ns - start
        if elapsed_ns < PUBLISH_WINDOW_S * _NS_PER_S:
            return
        # The subscriber's counters only where a window starts or ends: a snapshot of them is
        # an object built per call, which the 499 cycles in between never read.
        received = self.command_subscription.stats().received
        ran = self.published - self._window_published
        due = max(ran, round(elapsed_ns * self.config.rate_hz / _NS_PER_S))
        self.publish_rate_hz = ran * _NS_PER_S / elapsed_ns
        self.publish_skipped = due - ran
        self.publish_window_ns = (start, now_ns)
        # Rounded to the three digits it is published and printed with, so that the WARN, the
        # ``pace:`` string and a display comparing that string with BEHIND_RTF agree: a trial saw
        # "falls behind real time … 0.980" beside a status line that did not flag 0.980.
        self.real_time_factor = (
            1.0 if stamp_ns is None else round((stamp_ns - self._window_stamp_ns) / elapsed_ns, 3)
        )
        self.command_rate_hz = (received - self._window_commands) * _NS_PER_S / elapsed_ns
        ages = self._window_ages
        self.command_age_p99_cycles = (
            sorted(ages)[min(len(ages) - 1, (99 * len(ages)) // 100)] if ages else None
        )
        self._window_ages = []
        self._publish_text = (
            f"{self.publish_rate_hz:.0f} Hz, {self.publish_skipped} of {due} cycles "
            f"skipped in the last {elapsed_ns / _NS_PER_S:.1f} s"
        )
        self._window_start_ns, self._window_published = now_ns, self.published
        self._window_stamp_ns, self._window_commands = stamp_ns or 0, received
        self._report_pace(due)

    def _report_pace(self, due: int) -> None:
        """WARN when the bridge falls behind, with its figures, and again every
        :data:`BEHIND_REPEAT_WINDOWS` windows while it stays behind; OK once it caught up."""
        skipped = self.publish_skipped / due if due else 0.0
        behind = self.real_time_factor < BEHIND_RTF or skipped > BEHIND_SKIPPED
        figures = (
            f"{self.publish_rate_hz:.1f} Hz of {self.config.rate_hz:g} Hz, "
            f"{skipped * 100:.1f} % of cycles skipped, real-time factor "
            f"{self.real_time_factor:.3f} over the last {PUBLISH_WINDOW_S:g} s"
        )
        windows = self._behind_windows
        self._behind_windows = windows + 1 if behind else 0
        slow = self.real_time_factor < BEHIND_RTF
        # A bridge that skipped cycles while keeping the clock and then falls behind it says so
        # at once, not at the next repeat (a trial's status line read "rtf=0.943 BEHIND REAL
        # TIME" for 11 s while /hb50/status had only "skips cycles … real-time factor 0.990").
        became_slow = behind and slow and not self._behind_slow
        self._behind_slow = behind and slow
        if behind and (windows % BEHIND_REPEAT_WINDOWS == 0 or became_slow):
            # say what is true: a loop that skips slots while the robot keeps the wall clock
            # (the simulator steps the missed slots in one cycle) does not move slower
            title = "bridge falls behind real time" if slow else "bridge skips cycles"
            what = (
                "the robot moves slower than the wall clock and its commands arrive late"
                if slow
                else "the robot keeps the wall clock, but its actuators are read and commanded "
                "in fewer cycles"
            )
            steal = self._steal_clause()
            self.report(Level.WARN, f"{title}: {figures}; {what}{steal}", key="pace")
        elif not behind and self._behind:
            self.report(Level.OK, f"bridge back to real time: {figures}", key="pace")
        self._behind = behind

    def _steal_clause(self) -> str:
        """``; the VM's host held …`` when the host stole CPU time in the last window (the
        samples nearest its ends), else ``""``: a bridge that skips cycles because the
        hypervisor stopped its CPUs is not one whose cycle costs too much."""
        window = self.publish_window_ns
        span = None if window is None else self.host_steal.over(*window)
        text = "" if span is None else span.describe()
        return f"; {text}" if text else ""

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
                # Python floats from float64 arrays: what the constructors keep unchanged,
                # stored as they store them, without their seven Python calls (every cycle).
                w, x, y, z = o.tolist()
                orientation = _new(Quaternion)
                _set(orientation, "x", x)
                _set(orientation, "y", y)
                _set(orientation, "z", z)
                _set(orientation, "w", w)
                x, y, z = g.tolist()
                rates = _new(Vector3)
                _set(rates, "x", x)
                _set(rates, "y", y)
                _set(rates, "z", z)
                x, y, z = a.tolist()
                specific_force = _new(Vector3)
                _set(specific_force, "x", x)
                _set(specific_force, "y", y)
                _set(specific_force, "z", z)
                return orientation, rates, specific_force
            w, x, y, z = np.asarray(sample.orientation, dtype=np.float64).reshape(4).tolist()
            gyro = np.asarray(sample.angular_velocity, dtype=np.float64).reshape(3).tolist()
            accel = np.asarray(sample.linear_acceleration, dtype=np.float64).reshape(3).tolist()
            return Quaternion(x, y, z, w), Vector3(*gyro), Vector3(*accel)
        except (ValueError, TypeError, MessageError, DriverError) as exc:
            self.report(Level.ERROR, f"IMU reading failed: {exc}", key="imu")
            return Quaternion(*_NAN3, math.nan), Vector3(*_NAN3), Vector3(*_NAN3)

    def _status_strings(self) -> tuple[str, ...]:
        owner = self.arbiter.current  # as the cycle decided it: evaluating here flipped it
        levels = self.thermal.levels
        ramping = self._mode is StreamMode.RUN and self.reentry.ramping
        fallback = self.fallback_phase
        stop = self._estop_stop_text() if self.estop.latched else None
        key = (
            owner, self._mode, self.estop.reason, levels, self._publish_text, ramping,
            self.real_time_factor, self.command_rate_hz, self.command_age_p99_cycles,
            fallback, stop,
        )
        if key != self._state_key:
            strings = BridgeStatus(
                owner=owner,
                mode=BridgeMode(self._mode.value),
                estop_reason=self.estop.reason if self.estop.latched else None,
                publish=self._publish_text,
                reentry_ramping=ramping,
                real_time_factor=None
                if math.isnan(self.real_time_factor)
                else round(self.real_time_factor, 3),
                frame_rate_hz=None
                if math.isnan(self.publish_rate_hz)
                else round(self.publish_rate_hz, 1),
                command_rate_hz=None
                if math.isnan(self.command_rate_hz)
                else round(self.command_rate_hz, 1),
                command_age_p99_cycles=self.command_age_p99_cycles,
                thermal=tuple(
                    ThermalNote(level.name, self._names[index], index)
                    for index, level in enumerate(levels)
                    if level is not ThermalLevel.OK
                ),
                fallback=fallback,
                estop_stop=stop,
            ).to_strings()
            self._state_key = key
            self._state_strings = strings
        return self._state_strings

    def _estop_stop_text(self) -> str:
        """What the latched e-stop does to the drives (``estop stop:`` in ``BridgeState``)."""
        cfg = self.settings
        if cfg.estop_category == 0:
            return "category 0 (STO): drives off at once"
        if self.estop_stopping:
            return (
                f"category 1: damping until at rest (below {cfg.estop_rest_speed:g} rad/s for "
                f"{cfg.estop_rest_s:g} s) or {cfg.estop_stop_s:g} s, then drives off"
            )
        return "category 1: damped stop over, drives off"

    def _publish_mirror(self) -> None:
        state, data = self.last_state, self.last_data
        if state is not None:
            self.mirror_publisher.publish(state)
        if data is not None:
            self.data_mirror_publisher.publish(data)
