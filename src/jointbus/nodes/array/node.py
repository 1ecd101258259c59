"""The array node: any :class:`~jointbus.drivers.ActuatorArray` served on the bus, with safety.

Where it sits: :mod:`jointbus.nodes` (above drivers, runtime and bus). ``jointbus serve URL`` runs
one; the ``bus://`` driver (:mod:`jointbus.drivers.bus`) is its client — Player's server/client
model. Names are :class:`~jointbus.drivers.bus.array_names.ArrayNames` (e.g. ``/arm6/...``).

**Each cycle** (``rate_hz``, default 100 Hz) the node reads the array once and publishes
``joint_state`` (Beam Bots ``JointState``, each joint's values shaped by its kind: a float per
scalar joint, a ``Transform2D`` pose and ``Twist2D`` velocity per planar joint the driver declares
— :mod:`jointbus.drivers.planar_joint` — such as the rover's base),
``actarray/data`` (Player data with the state flags), ``joints`` (Rock samples: position, speed,
effort, ``raw`` = current in A, acceleration); ``actarray/geometry`` is latched and re-published
when a speed configuration changes it. Then it applies the safety rules below and, while an
impedance stream owns the array, writes the owner's latest command.

**Commands.** Player commands (position, multi-position, speed, multi-speed, home, current,
multi-current) and Rock ``Joints`` commands are one-shot: they are applied when they arrive, by
the array's own public methods, so every check of the driver API (unknown joint, wrong length, NaN,
limits, power, capability) applies unchanged. Each has a topic (fire and forget) and a service of
the same name answering :class:`~jointbus.messages.actarray.ActuatorReply` (ACK with the clamped
values, or NACK naming joint, index, field and reason). Player *requests* (power, brakes, speed and
acceleration configuration, one joint's drive — ``joint_power`` —, geometry, describe) are
services only. Impedance commands (the generic ``jointbus_msgs/msg/JointImpedance`` on
``joint_command``) are a stream, applied every cycle: each sample is checked and converted once,
on arrival, to the device API's joint-space :class:`~jointbus.drivers.impedance.ImpedanceCommand`,
which is all the stream's safety steps and :meth:`~jointbus.drivers.ActuatorArray.impedance` see.

**Safety** — the components of :mod:`jointbus.nodes.safety`, shared with hb50's bridge:

- *Limits and validation*: one-shot commands by the driver API; impedance commands by
  :class:`~jointbus.nodes.safety.CommandCheck` (source allowed, actuator order, lengths,
  finite, limits, brakes) before arbitration. A Rock ``Joints`` command is checked whole against the
  limits before any joint is commanded, so it is never applied in part.
- *Arbitration* (:class:`~jointbus.nodes.safety.Arbiter`): among impedance sources, the default
  source owns the array and a custom one publishing at ≥ 10 Hz takes it over. A one-shot command
  ends the impedance stream (the array does what it was told last).
- *Watchdog* (:class:`~jointbus.nodes.safety.Watchdog`): an impedance stream silent for
  ``watchdog_s`` (0.25 s) is replaced by the damping-only safe command until the next valid one.
- *Command watchdog* (:class:`~jointbus.drivers.command_expiry.CommandExpiry`): a velocity-type
  command — Player speed / multi-speed (≠ 0), current / multi-current, Rock ``Joints`` in speed or
  raw mode — is a stream that must be renewed within ``command_timeout_s`` (0.25 s, ``jointbus
  serve --command-timeout``): otherwise its joints are brought to rest (a speed-0 command: ramped
  to zero velocity within the joint's configured acceleration, then held where it stopped; a
  driver without speed commands holds them at the measured position) and one WARN on the status
  topic names them (name and index). The next command for them applies as usual. A position or
  home command is a move to a target that ends by itself: it never expires, and it ends a standing
  velocity command on its joints, as do speed 0, power off and the e-stop.
- *Re-entry* (:class:`~jointbus.nodes.safety.ReentryRamp`, as in hb50's bridge): when the
  impedance stream applies again after the drives did not follow it — its start, an e-stop reset,
  power on, a brake release, safe mode — or another source took it over, a target farther than
  ``reentry_tolerance`` (0.1 rad) from the measured pose is ramped to from there at
  ``reentry_speed`` (1 rad/s, capped by each joint's limit), its stiffness rising over
  ``reentry_gain_time`` (0.2 s); a WARN names the joint, an OK says when it is done.
- *E-stop latch* (:class:`~jointbus.nodes.safety.EStopLatch`): ``estop`` switches motor power off
  and engages brakes where fitted; until ``estop_reset`` every motion command and ``power on`` is
  refused with ``RejectReason.ESTOPPED``. After the reset the impedance command held before the
  stop is dropped (only commands received after the reset are applied), and power and brakes stay
  as the stop left them until a client switches power on and releases the brakes — so nothing
  jumps back to a target computed before the stop.
- *Thermal* (:class:`~jointbus.nodes.safety.ThermalGuard`): level changes are reported; impedance
  commands are derated; a joint reaching the shutdown temperature has its own drive switched off
  (:meth:`~jointbus.drivers.ActuatorArray.joint_power`: limp, no torque) while the other joints keep
  running, and motion commands naming it are refused (``POWERED_OFF``, naming it); once it cooled
  below the shutdown threshold minus the hysteresis its drive is switched on again, holding where it
  is. A driver without per-joint drive-off (no ``JOINT_POWER``) has the whole array's motor power
  switched off instead. Power-on is refused (``OUT_OF_RANGE``) while a joint is at the shutdown
  level.

**Bad input** is refused whole and changes nothing; the node survives it. Every refusal is a NACK
to a service caller and, for every origin, a WARN on ``/<ns>/status`` naming the request, joint
(name and index), field and reason. Malformed bytes on a command topic are reported by the bus as
a QoS event, which the node puts on the status topic too.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from jointbus.bus import LATCHED, MAB_RT, RELIABLE, Bus
from jointbus.drivers.actuator_array import ActuatorArray, JointReading
from jointbus.drivers.bus.array_names import DEFAULT_IMPEDANCE_SOURCE, ArrayNames
from jointbus.drivers.bus.errors_on_wire import ack, nack
from jointbus.drivers.capabilities import Capability
from jointbus.drivers.command_expiry import DEFAULT_COMMAND_TIMEOUT_S, CommandExpiry
from jointbus.drivers.errors import DriverError, RejectReason, RequestRejected
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
from jointbus.messages.errors import LengthMismatchError, MessageError, UnknownJointError
from jointbus.messages.joint_impedance import JointImpedance
from jointbus.messages.joint_sample import JointSample, Mode
from jointbus.messages.joint_state import JointState
from jointbus.messages.joints import Joints
from jointbus.messages.status import Level
from jointbus.messages.std_msgs import Header, String
from jointbus.nodes.safety.arbiter import Arbiter
from jointbus.nodes.safety.command_check import CommandCheck, CommandRejected
from jointbus.nodes.safety.estop import EStopLatch
from jointbus.nodes.safety.reentry import ReentryEngaged, ReentryRamp
from jointbus.nodes.safety.thermal_guard import ThermalGuard, ThermalLevel
from jointbus.nodes.safety.watchdog import Watchdog, safe_command
from jointbus.runtime import CycleInfo, Node

__all__ = ["DEFAULT_SOURCE", "ArrayNode", "ArrayNodeConfig"]

_LOG = logging.getLogger("jointbus.nodes.array")

#: The impedance source that owns the array when no custom source qualifies.
DEFAULT_SOURCE: Final = DEFAULT_IMPEDANCE_SOURCE

_ALL: Final = jointbus_msgs.ALL_JOINTS


@dataclass(frozen=True, slots=True)
class ArrayNodeConfig:
    """How the node serves its array.

    ``rate_hz``: publishing and impedance rate (Hz). ``watchdog_s``: silence of the impedance
    stream before the safe command (s). ``command_timeout_s``: time within which a speed or
    current command must be renewed before its joints are brought to rest (s). ``safe_kd``:
    damping of the safe command (N·m·s/rad).
    ``default_source`` / ``allowed_sources``: arbitration's default impedance source and the
    allow-list of sources (``None``: any named source). ``takeover_hz``: the rate at which a custom
    source takes over. Thermal thresholds in °C as :class:`ThermalGuard`'s. ``reentry_speed``
    (rad/s), ``reentry_gain_time`` (s) and ``reentry_tolerance`` (rad) shape an impedance stream
    that applies again (:class:`~jointbus.nodes.safety.ReentryRamp`, the bridge's defaults).
    """

    rate_hz: float = 100.0
    watchdog_s: float = 0.25
    command_timeout_s: float = DEFAULT_COMMAND_TIMEOUT_S
    safe_kd: float = 1.0
    default_source: str = DEFAULT_SOURCE
    allowed_sources: tuple[str, ...] | None = None
    takeover_hz: float = 10.0
    warn_c: float = 80.0
    derate_start_c: float = 90.0
    shutdown_c: float = 100.0
    hysteresis_c: float = 20.0
    reentry_speed: float = 1.0
    reentry_gain_time: float = 0.2
    reentry_tolerance: float = 0.1

    def __post_init__(self) -> None:
        if not (math.isfinite(self.rate_hz) and 0.0 < self.rate_hz <= 2000.0):
            raise ValueError(f"rate_hz = {self.rate_hz!r}; expected 0 < rate ≤ 2000 Hz")
        if not (math.isfinite(self.safe_kd) and self.safe_kd >= 0.0):
            raise ValueError(f"safe_kd = {self.safe_kd!r}; expected a finite number ≥ 0")
        Watchdog.check_timeout(self.watchdog_s)
        CommandExpiry.check_timeout(self.command_timeout_s)
        ThermalGuard.check_thresholds(
            self.warn_c, self.derate_start_c, self.shutdown_c, self.hysteresis_c
        )
        ReentryRamp.check_settings(
            self.reentry_speed, self.reentry_gain_time, self.reentry_tolerance
        )


class ArrayNode(Node):
    """Serves ``array`` under ``namespace`` (see the module docstring). Call :meth:`start`."""

    def __init__(
        self,
        array: ActuatorArray,
        bus: Bus,
        *,
        namespace: str,
        config: ArrayNodeConfig | None = None,
        name: str = "array_node",
    ) -> None:
        super().__init__(name, bus, namespace=namespace)
        self.array = array
        self.settings = config or ArrayNodeConfig()
        self.names = ArrayNames(namespace)
        self._array_lock = threading.RLock()
        cfg = array.config
        self._joint_names = array.names
        self._limits = JointLimits(
            cfg.names, cfg.limits, LimitPolicy.REJECT, type_name=Joints.TYPE_NAME
        )
        self._planar = planar_joints_of(array)
        self._has_brake = tuple(a.has_brakes for a in cfg.geometry.actuators)
        self._check = CommandCheck(
            cfg.names,
            JointLimits(
                cfg.names, cfg.limits, LimitPolicy.REJECT, type_name=JointImpedance.TYPE_NAME
            ),
            allowed_sources=self.settings.allowed_sources,
            has_brake=self._has_brake,
        )
        s = self.settings
        self._arbiter = Arbiter(s.default_source, takeover_hz=s.takeover_hz)
        self._watchdog = Watchdog(s.watchdog_s)
        #: Velocity-type commands standing per joint; guarded by ``_array_lock``.
        self._expiry = CommandExpiry(array.count, s.command_timeout_s)
        self._estop = EStopLatch()
        self._thermal = ThermalGuard(
            cfg.names,
            warn_c=s.warn_c,
            derate_start_c=s.derate_start_c,
            shutdown_c=s.shutdown_c,
            hysteresis_c=s.hysteresis_c,
        )
        self._safe = safe_command(array.count, s.safe_kd, self._has_brake)
        #: Latest valid impedance command per source (checked, joint space), with its arrival
        #: time (ns).
        self._impedance: dict[str, tuple[ImpedanceCommand, int]] = {}
        self._impedance_active = False
        self._lower = np.array([lim.position_min for lim in cfg.limits], dtype=np.float64)
        self._upper = np.array([lim.position_max for lim in cfg.limits], dtype=np.float64)
        self._reentry = ReentryRamp(
            cfg.names,
            [lim.velocity_max for lim in cfg.limits],
            speed=s.reentry_speed,
            gain_time=s.reentry_gain_time,
            tolerance=s.reentry_tolerance,
            period=1.0 / s.rate_hz,
        )
        #: Why the next command of the stream's owner starts a re-entry (``None``: it does not).
        #: Set from request threads (power, brakes, e-stop), taken on the loop thread.
        self._reentry_cause: str | None = "stream start"
        #: Guards the impedance stream's state (commands, arbiter, watchdog). Held only for a few
        #: dict and deque operations, never around a driver call, because the impedance
        #: subscription runs on the publisher's or Zenoh's receive thread.
        self._stream_lock = threading.Lock()
        self._last_reading: JointReading | None = None
        self.cycles = 0
        self._make_endpoints()
        self.create_rate_loop(self.settings.rate_hz, self._cycle, name="array")

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
        self._serve_ack(n.estop, "estop", String, self._trigger_estop)
        self._serve_ack(n.estop_reset, "estop_reset", String, self._reset_estop)
        self.create_service(
            n.request("get_geometry"), GeometryRequest, ArrayGeometry, lambda _r: self._geometry()
        )
        self.create_service(
            n.request("describe"), GeometryRequest, ArrayDescription, lambda _r: self.describe()
        )
        self.create_subscription(
            n.impedance_command, JointImpedance, self._on_impedance, MAB_RT, realtime=True
        )

    def _offer(
        self,
        name: str,
        method: str,
        msg_type: type[Message],
        apply: Callable[[Any], tuple[Saturation, ...]],
    ) -> None:
        """A one-shot command: a topic (fire and forget) and a service of the same name."""
        self._serve_ack(name, method, msg_type, apply)
        self.create_subscription(
            name, msg_type, lambda msg: self._execute(method, apply, msg), RELIABLE
        )

    def _serve_ack(
        self,
        name: str,
        method: str,
        msg_type: type[Message],
        apply: Callable[[Any], tuple[Saturation, ...]],
    ) -> None:
        self.create_service(
            name, msg_type, ActuatorReply, lambda m: self._execute(method, apply, m)
        )

    def _execute(
        self, method: str, apply: Callable[[Any], tuple[Saturation, ...]], msg: Any
    ) -> ActuatorReply:
        """Run one command or request under the node's lock: ACK, or NACK reported on status."""
        try:
            with self._array_lock:
                saturations = apply(msg)
                state = self._data(self.array.read_joints())
        except (DriverError, MessageError, ValueError, TypeError) as exc:
            self._report_refusal(method, exc)
            return nack(method, exc)
        return ack(method, saturations, state)

    def _report_refusal(self, method: str, exc: BaseException) -> None:
        text = f"{method} refused: {exc}"
        self.report(Level.WARN, text, key=text)  # identical repeats are rate-limited

    # ---- one-shot commands ---------------------------------------------------------------------
    def _motion(self, method: str) -> None:
        """Refuse motion while the e-stop is latched; end the impedance stream otherwise."""
        if self._estop.latched:
            raise RequestRejected(method, RejectReason.ESTOPPED, self._estop.reason)
        self._end_stream()

    def _end_stream(self, cause: str = "stream start") -> None:
        """End the impedance stream; its next command re-enters from the measured pose."""
        with self._stream_lock:
            self._impedance_active = False
            self._impedance.clear()
            self._reentry_cause = cause

    def _indices(self, joint: int | None) -> npt.NDArray[np.intp]:
        """The joints a command named (``None``: all), once the array accepted it."""
        if joint is None:
            return np.arange(self.array.count, dtype=np.intp)
        return np.array([self.array.index(joint)], dtype=np.intp)

    def _commanded(
        self, indices: npt.NDArray[np.intp], *, renewed: npt.NDArray[np.bool_] | bool
    ) -> None:
        """Accepted for ``indices``: a velocity-type command where ``renewed`` (the command
        watchdog watches it), a command that ends by itself elsewhere."""
        mask = np.broadcast_to(np.asarray(renewed, dtype=np.bool_), indices.shape)
        self._expiry.arm(indices[mask], time.monotonic())
        self._expiry.disarm(indices[~mask])

    def _position(self, m: Any) -> tuple[Saturation, ...]:
        self._motion("position")
        out = self.array.position(_joint(m.joint), m.position)
        self._commanded(self._indices(_joint(m.joint)), renewed=False)
        return out

    def _speed(self, m: Any) -> tuple[Saturation, ...]:
        self._motion("speed")
        out = self.array.speed(_joint(m.joint), m.speed)
        self._commanded(self._indices(_joint(m.joint)), renewed=m.speed != 0.0)
        return out

    def _home(self, m: Any) -> tuple[Saturation, ...]:
        self._motion("home")
        out = self.array.home(_joint(m.joint))
        self._commanded(self._indices(_joint(m.joint)), renewed=False)
        return out

    def _current(self, m: Any) -> tuple[Saturation, ...]:
        self._motion("current")
        out = self.array.current(_joint(m.joint), m.current)
        self._commanded(self._indices(_joint(m.joint)), renewed=True)
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
        """A Rock command: one mode for every sample; checked whole before any joint moves."""
        indices: list[int] = []
        for i, name in enumerate(cmd.names):
            if name not in self._joint_names:
                raise UnknownJointError(name, self._joint_names)
            if name in cmd.names[:i]:
                raise LengthMismatchError(
                    Joints.TYPE_NAME, "names", name, "each joint at most once", index=i
                )
            indices.append(self._joint_names.index(name))
        if not indices:
            raise LengthMismatchError(Joints.TYPE_NAME, "names", (), "at least one joint")
        modes = [sample.mode() for sample in cmd.samples]
        mode = modes[0]
        for i, other in enumerate(modes):
            if other is not mode:
                raise MessageError(
                    f"{Joints.TYPE_NAME}: joint {cmd.names[i]!r} (index {i}): mode "
                    f"{other.name}; expected {mode.name} like sample 0 (one mode per command)"
                )
        values = np.array([s.get_field(mode) for s in cmd.samples], dtype=np.float64)
        field = {Mode.POSITION: "position", Mode.SPEED: "velocity", Mode.RAW: "current"}.get(mode)
        if field is None:
            raise RequestRejected(
                "joints_command",
                RejectReason.UNSUPPORTED,
                f"mode {mode.name}; the array accepts position, speed and raw (current, A)",
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
        single = {
            Mode.POSITION: self.array.position,
            Mode.SPEED: self.array.speed,
            Mode.RAW: self.array.current,
        }[mode]
        out: list[Saturation] = []
        for k, (index, value) in enumerate(zip(indices, values.tolist(), strict=True)):
            out.extend(single(index, value))
            self._commanded(idx[k : k + 1], renewed=renewed[k : k + 1])
        return tuple(out)

    # ---- requests ------------------------------------------------------------------------------
    def _power(self, m: PowerRequest) -> tuple[Saturation, ...]:
        if m.on and self._estop.latched:
            raise RequestRejected("power", RejectReason.ESTOPPED, self._estop.reason)
        if m.on and any(level is ThermalLevel.ERROR for level in self._thermal.levels):
            hot = [
                n
                for n, lv in zip(self._joint_names, self._thermal.levels, strict=True)
                if lv is ThermalLevel.ERROR
            ]
            i = self._joint_names.index(hot[0])
            raise RequestRejected(
                "power",
                RejectReason.OUT_OF_RANGE,
                f"over temperature; wait until it cooled below "
                f"{self._thermal.shutdown_c - self._thermal.hysteresis_c:g} °C",
                joint=hot[0],
                index=i,
            )
        self.array.power(m.on)
        self._expiry.disarm()  # power off stops every joint; power on holds each where it is
        if m.on:  # the drives did not follow the stream while off: it re-enters from here
            self._reentry_cause = "power on"
        return ()

    def _joint_power(self, m: Any) -> tuple[Saturation, ...]:
        """One joint's drive (``joint_power``): refused on while the e-stop is latched, as power
        on is, and for a joint the thermal guard switched off until it cooled down."""
        joint = _joint(m.joint)
        if m.on and self._estop.latched:
            raise RequestRejected("joint_power", RejectReason.ESTOPPED, self._estop.reason)
        indices = self._indices(joint)
        if m.on:
            for i in indices.tolist():
                if self._thermal.levels[i] is ThermalLevel.ERROR:
                    raise RequestRejected(
                        "joint_power",
                        RejectReason.OUT_OF_RANGE,
                        f"over temperature; wait until it cooled below "
                        f"{self._thermal.shutdown_c - self._thermal.hysteresis_c:g} °C",
                        joint=self._joint_names[i],
                        index=i,
                    )
        self.array.joint_power(joint, m.on)
        self._expiry.disarm(indices)  # off: limp; on: holds where it is
        return ()

    def _brakes(self, m: BrakesRequest) -> tuple[Saturation, ...]:
        self.array.brakes(m.engaged)
        if not m.engaged:
            self._reentry_cause = "brake release"
        return ()

    def _speed_config(self, m: Any) -> tuple[Saturation, ...]:
        self.array.set_speed(_joint(m.joint), m.speed)
        self._pub_geometry.publish(self._geometry())
        return ()

    def _accel_config(self, m: Any) -> tuple[Saturation, ...]:
        self.array.set_accel(_joint(m.joint), m.accel)
        return ()

    def _geometry(self) -> ArrayGeometry:
        with self._array_lock:
            return self.array.geometry()

    def describe(self) -> ArrayDescription:
        """Names, limits, accelerations, policy and capabilities (the ``describe`` service)."""
        cfg = self.array.config
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
        )

    # ---- e-stop --------------------------------------------------------------------------------
    def _trigger_estop(self, m: String) -> tuple[Saturation, ...]:
        reason = m.data or "estop"
        event = self._estop.trigger(reason, time.monotonic_ns())
        self._end_stream()
        self._expiry.disarm()
        caps = self.array.capabilities()
        if Capability.POWER in caps:
            self.array.power(False)
        if Capability.BRAKES in caps and any(self._has_brake):
            self.array.brakes(True)
        if event is not None:
            self.report(Level.ERROR, event.describe(), key="estop")
        return ()

    def _reset_estop(self, m: String) -> tuple[Saturation, ...]:
        reading = self._last_reading
        measured = (
            reading.position.tolist()
            if reading is not None
            else [math.nan] * len(self._joint_names)
        )
        event = self._estop.reset(time.monotonic_ns(), measured)
        self._estop.release_hold()  # power stays off: nothing to hold until a client powers on
        self._end_stream("e-stop reset")
        if event is not None:
            self.report(Level.WARN, event.describe(), key="estop")
        return ()

    @property
    def estopped(self) -> bool:
        """True while the e-stop is latched."""
        return self._estop.latched

    # ---- impedance stream ----------------------------------------------------------------------
    def _on_impedance(self, cmd: JointImpedance) -> None:
        now = time.monotonic_ns()
        try:
            command = self._check.check(cmd)
        except CommandRejected as exc:
            self._report_refusal("impedance", exc.error)
            return
        if self._estop.latched:
            self._report_refusal(
                "impedance",
                RequestRejected("impedance", RejectReason.ESTOPPED, self._estop.reason),
            )
            return
        with self._stream_lock:
            self._arbiter.offer(cmd.source_node, now)
            self._impedance[cmd.source_node] = (command, now)
            if self._arbiter.owner(now) == cmd.source_node:
                self._watchdog.feed(now)
                self._impedance_active = True

    def _apply_impedance(self, now: int) -> None:
        with self._stream_lock:
            if not self._impedance_active:
                return
            owner = self._arbiter.owner(now)
            changes = self._arbiter.take_events()
            events = [e.describe() for e in changes]
            entry = self._impedance.get(owner)
            if entry is not None and entry[1] > (self._watchdog.last_feed_ns or 0):
                self._watchdog.feed(entry[1])
            expired = self._watchdog.expired(now)
            events += [e.describe() for e in self._watchdog.take_events()]
        for text in events:
            self.report(Level.WARN, text, key=text.split(":")[0])
        if expired or entry is None:
            command = self._safe
            if self._reentry.active:
                self._reentry.cancel()
            if expired:  # damped meanwhile: the stream re-enters from where the joints are
                self._reentry_cause = "safe mode (no command for the watchdog time)"
        else:
            command = self._reentered(entry[0], owner, bool(changes))
        try:
            self.array.impedance(self._thermal.derate(command))
        except (DriverError, MessageError) as exc:
            self._report_refusal("impedance", exc)
        else:
            self._expiry.disarm()  # the impedance stream drives every joint (its own watchdog)

    def _reentered(
        self, command: ImpedanceCommand, owner: str, owner_changed: bool
    ) -> ImpedanceCommand:
        """The owner's ``command`` through the re-entry ramp (the bridge's rule): after the drives
        stopped following the stream (e-stop reset, power on, brake release, safe mode) or
        another source took it over, a far target is ramped to from the measured pose."""
        cause = self._reentry_cause
        if cause is None and owner_changed:
            cause = f"owner change to {owner!r}"
        reading = self._last_reading
        if cause is not None and reading is not None:
            self._reentry_cause = None
            measured = np.clip(reading.position, self._lower, self._upper)
            self._reentry.begin(measured, cause, source=owner)
        shaped = self._reentry.shape(command, owner)
        for event in self._reentry.take_events():
            level = Level.WARN if isinstance(event, ReentryEngaged) else Level.OK
            text = event.describe()
            self.report(level, text, key=text)
        return shaped

    # ---- thermal --------------------------------------------------------------------------------
    def _thermal_drive_off(self, index: int, reading: JointReading) -> None:
        """Joint ``index`` reached the shutdown temperature: its drive off, the others running."""
        if Capability.JOINT_POWER in self.array.capabilities():
            self.array.joint_power(index, False)
            self._expiry.disarm(np.array([index], dtype=np.intp))
        elif reading.motor_power:  # no per-joint drive-off: the whole array
            self.array.power(False)
            self._expiry.disarm()

    def _thermal_drive_on(self, index: int) -> None:
        """Joint ``index`` cooled down: its drive on again, holding where it is measured."""
        if Capability.JOINT_POWER not in self.array.capabilities():
            return  # the array's power was switched off: a client switches it on
        try:
            self.array.joint_power(index, True)
        except RequestRejected as exc:  # array power off since: power(True) switches it on
            _LOG.info("thermal: %s stays off until power on: %s", self._joint_names[index], exc)

    # ---- command watchdog ----------------------------------------------------------------------
    def _expire_commands(self, reading: JointReading) -> None:
        """Bring to rest the joints whose speed or current command was not renewed in time."""
        late = self._expiry.expired(time.monotonic())
        if not late.size:
            return
        speed = Capability.SPEED in self.array.capabilities()
        for i in late.tolist():
            try:
                if speed:  # profiled to rest within the configured acceleration, then held
                    self.array.speed(i, 0.0)
                else:
                    self.array.position(i, float(reading.position[i]))
            except (DriverError, MessageError) as exc:
                # powered off or braked since: nothing drives the joint; say why not stopped
                self._report_refusal("command watchdog stop", exc)
        joints = ", ".join(f"{self._joint_names[i]!r} (index {i})" for i in late.tolist())
        text = (
            f"command watchdog: no speed or current command for "
            f"{self._expiry.timeout_s * 1e3:.0f} ms; bringing to rest: {joints}"
        )
        self.report(Level.WARN, text, key=text)

    # ---- the cycle -----------------------------------------------------------------------------
    def on_activate(self) -> None:
        self._pub_geometry.publish(self._geometry())

    def _cycle(self, _cycle: CycleInfo) -> None:
        now = time.monotonic_ns()
        with self._array_lock:
            try:
                reading = self.array.read_joints()
            except DriverError as exc:  # a failed read is reported; the next cycle tries again
                self.report(Level.ERROR, f"read failed: {exc}", key="read failed")
                return
            self._last_reading = reading
            self.cycles += 1
            self._publish(reading)
            for event in self._thermal.update(reading.temperature):
                self.report(
                    Level.WARN if event.new is not ThermalLevel.ERROR else Level.ERROR,
                    event.describe(self._thermal),
                    key=f"thermal:{event.joint}",
                )
                if event.new is ThermalLevel.ERROR:
                    self._thermal_drive_off(event.index, reading)
                elif event.old is ThermalLevel.ERROR:
                    self._thermal_drive_on(event.index)
            self._expire_commands(reading)
            if self._impedance_active and not self._estop.latched:
                self._apply_impedance(now)

    def _joint_state(
        self,
        header: Header,
        names: tuple[str, ...],
        positions: list[float],
        velocities: list[float],
        efforts: list[float],
    ) -> jointbus_msgs.JointState:
        if not self._planar:
            state = JointState(
                names=names,
                positions=tuple(positions),
                velocities=tuple(velocities),
                efforts=tuple(efforts) if all(math.isfinite(e) for e in efforts) else (),
                header=header,
            )
        else:
            state = _shaped_state(
                header, names, positions, velocities, efforts, planar=self._planar
            )
        return state.to_wire()

    def _data(self, r: JointReading) -> ActuatorArrayData:
        """Player's array data of one reading, stamped now."""
        return r.to_data(self.array.config.geometry.header.frame_id)

    def _publish(self, r: JointReading) -> None:
        data = self._data(r)
        header = data.header
        self._pub_data.publish(data)
        positions = r.position.tolist()
        velocities = r.velocity.tolist()
        efforts = r.effort.tolist()
        self._pub_state.publish(self._joint_state(header, r.names, positions, velocities, efforts))
        samples = tuple(
            JointSample(p, v, e, c, a)
            for p, v, e, c, a in zip(
                positions,
                velocities,
                efforts,
                r.current.tolist(),
                r.acceleration.tolist(),
                strict=True,
            )
        )
        self._pub_joints.publish(Joints(header, r.names, samples))


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


def _joint(wire_joint: int) -> int | None:
    """Player's wire joint (``-1`` = all) as the driver API's (``None`` = all)."""
    return None if wire_joint == _ALL else wire_joint


def _multi(name: str) -> type[Message]:
    from jointbus.messages.actarray import commands

    cls: type[Message] = getattr(commands, name)
    return cls
