"""The ``can://`` driver: MIT-mode CAN motors behind the :class:`ActuatorArray` API.

Where it sits: :mod:`jointbus.drivers.can`, the top of the CAN package: it wraps a
:class:`~.motor_link.MotorLink` (frames, replies, timeouts, bus-off) in the driver contract of
:mod:`jointbus.drivers.actuator_array` (which has already checked, limited and calibrated every
value). ``open_can`` is registered for the ``can`` scheme; :mod:`.config` describes the URL.

**One bus exchange per control cycle, on the caller's thread.** MIT motors answer every frame
with their state, and there is no read-only frame, so a command *is* a read. The driver has no
thread: the bus is used only inside its calls, so a caller that stops calling stops the traffic
and the drives' own communication watchdog switches them off — the safe failure. An exchange
sends every motor its frame for this cycle and collects the replies:

- :meth:`~ActuatorArray.impedance` and :meth:`~ActuatorArray.current` exchange at once with the
  new command (it is held — resent — until the next one);
- :meth:`~ActuatorArray.read` returns the replies of the exchange made since the last read if
  there is one, else exchanges itself, resending what each motor holds. A bridge that reads, then
  commands, at 500 Hz thus costs one exchange (12 frames each way for the hb50) per cycle.

**What each motor is sent** (actuator space), by mode:

- *off* (motor power off, motors in rest mode): a zero command, which rest-mode firmware ignores
  but answers — so positions are read with the power off;
- *profile* (position, speed and home commands): ruckig's reference
  (:class:`~jointbus.drivers.sim.profile.ProfileGenerator`, generic despite living in the sim
  package), advanced at each exchange by the time the driver's clock says passed since the
  previous one ("Time" below), with the config's ``kp`` / ``kd``. These commands take effect
  at the next exchange (the next :meth:`read`);
- *current*: ``τ = k_t · I`` feed-forward, no gains (needs the torque constants);
- *impedance*: the :class:`~jointbus.drivers.impedance.ImpedanceCommand` as it came (checked and
  calibrated by the base class);
- *safe*: ``kp = 0``, ``kd = safe_kd``, no torque — the joints sink slowly instead of collapsing
  or fighting a stale target.

**Time.** A profiled move runs on a monotonic clock (``clock``, default :func:`time.monotonic`,
seconds), not on the number of exchanges: each exchange advances the profile by the time since
the previous exchange (or since the request that re-planned it), so a move takes the time its
speed and acceleration say whether the program exchanges at 100 Hz, 500 Hz or as fast as it
can. Until 2026-12-06 it advanced ``period_s`` per exchange: served at 100 Hz a move ran 5×
slower than its speed, and read flat out it ran *faster* than the speed set — a safety defect.
Two exchanges within one clock tick (zero elapsed) advance nothing. The step is clamped to
:func:`max_profile_step` (50 ms, or two periods if ``period_s`` is longer): after a stall — a GC
pause, a stopped process, a busy host — the move continues from where its setpoint was instead
of jumping ahead by the stall, so no exchange moves a setpoint by more than 50 ms of its motion
(at most ``speed × 50 ms``). 50 ms because the node serves at 100 Hz by default (10 ms) and a
loaded host delays a cycle by tens of ms (the twin's exchanges reached p99.9 28 ms): a smaller
bound would slow moves on an ordinary busy host, a larger one would let a stall jump further.
The profile also looks that far ahead when it stops a speed move at the end of a range, so a
step of up to the clamp cannot carry it past the point where it must brake. ``period_s`` (the
URL's ``period``) stays the *nominal* control period: the limit guard's cycle, the bound on
``set_accel`` and the poll interval of ``wait_until_still``.

**Missing replies and the safe state.** A motor that does not answer within ``reply_timeout_s``
reports NaN for that cycle, gets :attr:`CanStatus.REPLY_TIMEOUT` in its status word and is
reported (:class:`~.motor_link.ReplyTimeout` event). After ``lost_after`` *consecutive* misses it
is flagged lost — :attr:`CanStatus.COMM_LOST` and the ``STALLED`` state flag (Player has no
"unreachable" state; STALLED is its "this actuator is not doing what it is told", so array-state
reductions and Player clients see a fault), both latched — the driver sends every motor the safe
command at once, marks every status word :attr:`CanStatus.SAFE`, reports :class:`DriveWentSafe`,
and refuses motion commands with ``RequestRejected(TIMED_OUT)`` naming the lost joint. The
command that crossed the threshold is refused the same way (it is no longer in effect). Re-arm
with ``power(False)`` then ``power(True)``, which succeeds only when every motor answers.

**A motor reporting an error.** Models with the extended reply send the firmware's error byte
(over-temperature, over-current, encoder or supply faults — the code's meaning is the firmware's;
the bundled models name none, so it is given in hex). A non-zero byte is a drive that must not be
driven on as if healthy, and is handled as a lost motor is: the motor is flagged
(:attr:`CanStatus.MOTOR_ERROR` with the code in bits 0–7 while it reports it, and the latched
``STALLED`` state flag), every motor gets the safe command at once (the array goes safe as a
whole, as for a lost motor: a leg with one limp joint cannot hold a pose either), and motion
commands are refused with ``RequestRejected(DRIVER_FAULT)`` naming the joint, the field
``motor_error`` and the code — a multi-joint command whole, nothing applied in part. The onset is
reported once (:class:`MotorError`, an ERROR on a node's status topic), and so is the code going
back to 0 (:class:`MotorErrorCleared`, a WARN); a missed reply says nothing about the code and
changes neither. Re-arm as after a lost motor, with ``power(False)`` then ``power(True)``;
``power(True)`` is refused while a motor still reports an error (``DRIVER_FAULT``, naming it),
and the motors that entered motor mode are switched back off.

**Refusals and failures.** ``power(True)`` when a motor does not answer is refused
(``TIMED_OUT``, naming the joint) and the motors that did enter motor mode are switched back
off. A command outside a motor model's *wire* range (``kp`` above what the firmware encodes, for
instance) is a :class:`~jointbus.messages.errors.LimitError` naming joint, index, field, value and
range; nothing is sent. A bus-off (error frame, ERROR state, refused send, closed bus) raises
:class:`~jointbus.drivers.errors.DriverIOError` and is reported (:class:`BusFailure`); the held
command stays what it was, though frames sent before the failure cannot be called back.

**State flags.** ``MOVING`` while a commanded move's profile runs (from the call on), or when
a joint's position changed by more than ``moving_velocity × still_window_s`` over the last
``still_window_s`` (0.05 rad/s over 0.1 s by default): the velocity in the replies is too noisy
to tell rest from motion (hb50's MD80 drives report it with σ ≈ 0.38 rad/s, positions with
σ ≈ 0.64 mrad). ``UNPOWERED`` for a motor not in motor mode; ``STALLED`` for a lost motor and
for one that reported an error, until re-armed.

**Status word** (``ActuatorData.status``): bits 0–7 carry the motor's own error byte (models with
the extended reply), the rest are :class:`CanStatus` flags.
"""

from __future__ import annotations

import collections
import enum
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, NoReturn

import can
import numpy as np
import numpy.typing as npt

from jointbus.drivers.actuator_array import (
    ActuatorArray,
    DriverFault,
    ImpedanceTargets,
    RawReading,
    SaturationCallback,
)
from jointbus.drivers.can.config import CanArrayConfig
from jointbus.drivers.can.mit_protocol import OutOfRangeError, ReservedFrameError
from jointbus.drivers.can.motor_link import (
    BusOffError,
    LateReply,
    LinkEvent,
    LinkFeedback,
    MotorLink,
    MotorSpec,
    ReplyTimeout,
    UnexpectedFrame,
)
from jointbus.drivers.capabilities import Capability
from jointbus.drivers.errors import DriverIOError, RejectReason, RequestRejected
from jointbus.drivers.profiled_moves import (
    MODE_CURRENT,
    MODE_IMPEDANCE,
    MODE_OFF,
    MODE_PROFILE,
    ProfiledMoves,
)
from jointbus.drivers.registry import DriverURL
from jointbus.messages.errors import LimitError

__all__ = [
    "ERROR_BYTE_MASK",
    "PROFILE_STEP_MAX_S",
    "BusFailure",
    "CanActuatorArray",
    "CanEvent",
    "CanStatus",
    "DriveWentSafe",
    "MotorError",
    "MotorErrorCleared",
    "fault_of",
    "max_profile_step",
    "open_can",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]
BoolArray = npt.NDArray[np.bool_]

PROFILE_STEP_MAX_S: Final[float] = 0.05
"""The most time, s, a profiled move advances in one exchange (module docstring, "Time")."""

ERROR_BYTE_MASK: Final[int] = 0xFF
"""Status-word bits holding the motor's own error byte (extended reply layouts; else 0)."""

_SAFE: Final[int] = 4  # a motor was lost or reported an error: every motor holds the safe command
_EVENT_HISTORY: Final[int] = 1024
_API: Final[str] = "CanActuatorArray"


class CanStatus(enum.IntFlag):
    """Flag bits of the ``can://`` per-actuator status word (above the error byte)."""

    REPLY_TIMEOUT = 0x100
    """No reply in the last exchange: this actuator's values are NaN."""
    COMM_LOST = 0x200
    """``lost_after`` consecutive replies missing: flagged lost (latched until re-armed)."""
    SAFE = 0x400
    """The array is on the safe damping command because an actuator was lost or reported an
    error (until re-armed)."""
    UNPOWERED = 0x800
    """The motor is not in motor mode (no torque)."""
    MOTOR_ERROR = 0x1000
    """The motor reports a non-zero error byte (its value is in bits 0–7)."""


@dataclass(frozen=True, slots=True)
class DriveWentSafe:
    """A motor was flagged lost, so every motor was sent the safe damping command."""

    motor_index: int
    joint: str
    can_id: int
    missed: int
    """Consecutive replies missing when it was flagged."""


@dataclass(frozen=True, slots=True)
class BusFailure:
    """The bus failed (bus-off, refused send, closed bus): the call raised DriverIOError."""

    detail: str
    frames_sent: int


@dataclass(frozen=True, slots=True)
class MotorError:
    """A motor's reply carries a non-zero error byte (its onset, or a change of code)."""

    motor_index: int
    joint: str
    can_id: int
    code: int
    action: str
    """What the driver does about it (one clause, for the report)."""


@dataclass(frozen=True, slots=True)
class MotorErrorCleared:
    """A motor that reported an error byte reports 0 again."""

    motor_index: int
    joint: str
    can_id: int
    code: int
    """The code it reported before."""
    safe: bool
    """The array is still on the safe command (it stays there until re-armed)."""


CanEvent = LinkEvent | DriveWentSafe | BusFailure | MotorError | MotorErrorCleared
"""Everything the driver reports: link events (timeouts, late replies, error frames) and its own."""


def fault_of(event: CanEvent, reply_timeout_s: float) -> DriverFault:
    """``event`` as a node reports it on its status topic (:meth:`ActuatorArray.take_faults`):
    a user's trial (2026-12-06) served an array whose motors all went silent, and its status
    topic said nothing while every joint read STALLED."""
    if isinstance(event, DriveWentSafe):
        return DriverFault(
            f"motor {event.joint!r} (index {event.motor_index}, CAN id {event.can_id}) lost "
            f"after {event.missed} missed replies: every motor is on the safe damping command; "
            "re-arm with power off, then on",
            f"can lost {event.joint}",
            True,
        )
    if isinstance(event, BusFailure):
        return DriverFault(f"CAN bus failed: {event.detail}", "can bus", True)
    if isinstance(event, MotorError):
        return DriverFault(
            f"motor {event.joint!r} (index {event.motor_index}, CAN id {event.can_id}) reports "
            f"error code 0x{event.code:02x}: {event.action}",
            f"can error {event.joint}",
            True,
        )
    if isinstance(event, MotorErrorCleared):
        return DriverFault(
            f"motor {event.joint!r} (index {event.motor_index}, CAN id {event.can_id}) reports "
            f"no error any more (was 0x{event.code:02x})"
            + (": the array stays on the safe damping command until re-armed with power off, "
               "then on" if event.safe else ""),
            f"can error cleared {event.joint}",
            False,
        )
    if isinstance(event, ReplyTimeout):
        return DriverFault(
            f"motor {event.motor_name!r} (index {event.motor_index}, CAN id {event.can_id}) did "
            f"not answer within {reply_timeout_s * 1e3:g} ms ({event.count} missed replies in "
            "all): its values read NaN (REPLY_TIMEOUT) for that exchange",
            f"can reply {event.motor_name}",
            False,
        )
    if isinstance(event, LateReply):
        return DriverFault(
            f"motor {event.motor_name!r} (index {event.motor_index}, CAN id {event.can_id}) "
            "answered after its exchange: the late reply was discarded",
            f"can late {event.motor_name}",
            False,
        )
    if isinstance(event, UnexpectedFrame):
        return DriverFault(
            f"unexpected CAN frame id 0x{event.arbitration_id:x}: {event.reason}",
            "can frame",
            False,
        )
    return DriverFault(
        f"CAN error frame (class 0x{event.error_class:x}"
        + (", bus off)" if event.bus_off else ")"),
        "can error frame",
        event.bus_off,
    )


def max_profile_step(period_s: float) -> float:
    """The clamp on one exchange's profile step, s: :data:`PROFILE_STEP_MAX_S`, or two control
    periods if ``period_s`` (s) is longer than half of it (a program that means to exchange that
    rarely would otherwise see its moves slowed down)."""
    return max(PROFILE_STEP_MAX_S, 2.0 * period_s)


class CanActuatorArray(ActuatorArray):
    """MIT-mode CAN motors as an actuator array (see the module docstring).

    ``bus``: an open python-can bus to use (the caller keeps ownership, e.g. a virtual bus in a
    test); ``None`` opens ``config.interface`` / ``config.channel`` and closes it on
    :meth:`close`. ``on_event`` is called with every :class:`CanEvent` as it happens (from the
    caller's thread, inside the driver call); :meth:`drain_events` returns the recent ones.
    ``clock`` returns monotonic seconds (default :func:`time.monotonic`): the time profiled moves
    advance by (module docstring, "Time"); a test drives a fake one to run the twin in lock-step.
    """

    def __init__(
        self,
        config: CanArrayConfig,
        bus: can.BusABC | None = None,
        *,
        on_saturation: SaturationCallback | None = None,
        on_event: Callable[[CanEvent], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not isinstance(config, CanArrayConfig):
            raise TypeError(f"config = {config!r}; expected a CanArrayConfig")
        super().__init__(config.array, on_saturation=on_saturation)
        self._can = config
        self._on_event = on_event
        self._events: collections.deque[CanEvent] = collections.deque(maxlen=_EVENT_HISTORY)
        self._faults: collections.deque[DriverFault] = collections.deque(maxlen=_EVENT_HISTORY)
        self._owns_bus = bus is None
        if bus is None:
            kwargs: dict[str, object] = {"interface": config.interface, "channel": config.channel}
            if config.bitrate is not None:
                kwargs["bitrate"] = config.bitrate
            try:
                bus = can.Bus(**kwargs)  # type: ignore[arg-type]
            except (can.CanError, OSError, ValueError, ImportError) as exc:
                raise DriverIOError(
                    f"cannot open CAN interface {config.interface!r} channel "
                    f"{config.channel!r}: {exc}"
                ) from exc
        self._bus = bus
        self._link = MotorLink(
            bus,
            [MotorSpec(m.joint, m.can_id, m.model) for m in config.motors],
            config.reply_timeout_s,
            host_id=config.host_id,
            on_event=self._report_event,
        )
        n = self.count
        self._kp = np.array(config.kp, dtype=np.float64)
        self._kd = np.array(config.kd, dtype=np.float64)
        self._kt = np.array(config.torque_constants, dtype=np.float64)
        self._moves = ProfiledMoves(config.array, jerk_time=config.jerk_time)
        self._clock = clock
        self._max_step_s = max_profile_step(config.period_s)
        self._profile_time = clock()  # the clock's time the profile has been advanced to
        # the held command, actuator space
        self._cmd_p = np.zeros(n)
        self._cmd_v = np.zeros(n)
        self._cmd_kp = np.zeros(n)
        self._cmd_kd = np.zeros(n)
        self._cmd_tau = np.zeros(n)
        self._zeros = np.zeros(n)
        # The drive's limit supervisor (module docstring, "Limits"): speed moves stop at the
        # range's ends; current and impedance commands are bounded at every exchange.
        self._moves.profile.set_position_bounds(*self._actuator_range(margin=True))
        self._guard = self._make_limit_guard(config.period_s)
        self._limited = np.zeros(n, dtype=np.bool_)
        self._speed_limited = np.zeros(n, dtype=np.bool_)  # of _limited: at the speed limit
        # p, v, kp, kd, τ as sent
        self._send = (np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n))
        # the latest replies
        self._time = math.nan
        self._position = np.full(n, np.nan)
        self._velocity = np.full(n, np.nan)
        self._torque = np.full(n, np.nan)
        self._temperature = np.full(n, np.nan)
        self._error_byte = np.zeros(n, dtype=np.uint32)
        self._timed_out = np.zeros(n, dtype=np.bool_)
        self._fresh = False
        self._history: collections.deque[tuple[float, FloatArray]] = collections.deque(
            [(-math.inf, np.full(n, np.nan))]
        )
        # supervision
        self._missed = np.zeros(n, dtype=np.int64)
        self._lost = np.zeros(n, dtype=np.bool_)
        self._error_seen = np.zeros(n, dtype=np.uint32)  # last error byte a reply carried
        self._errored = np.zeros(n, dtype=np.bool_)  # reported an error since re-armed
        self._error_latched = np.zeros(n, dtype=np.uint32)  # the code that made it errored
        self._safe = False
        self._powered = False

    # ---------------------------------------------------------------- CAN extras

    @property
    def can_config(self) -> CanArrayConfig:
        """The CAN configuration."""
        return self._can

    @property
    def link(self) -> MotorLink:
        """The motor link (counters such as ``frames_sent``; do not drive it directly)."""
        return self._link

    @property
    def safe(self) -> bool:
        """True while the array is on the safe command after a lost motor (until re-armed)."""
        return self._safe

    @property
    def lost(self) -> BoolArray:
        """Motors flagged lost (``lost_after`` consecutive missed replies), a copy."""
        return self._lost.copy()

    @property
    def errored(self) -> BoolArray:
        """Motors that reported an error byte since the array was last armed, a copy."""
        return self._errored.copy()

    @property
    def missed_replies(self) -> npt.NDArray[np.int64]:
        """Consecutive missed replies per motor right now, a copy."""
        return self._missed.copy()

    def drain_events(self) -> tuple[CanEvent, ...]:
        """The events reported since the last call (at most the last 1024), oldest first."""
        with self._api_lock:
            events = tuple(self._events)
            self._events.clear()
            return events

    def take_faults(self) -> tuple[DriverFault, ...]:
        """The events since the last call as faults for a status topic (:func:`fault_of`); kept
        apart from :meth:`drain_events`, so a node reporting them takes nothing from a program
        that reads the events."""
        if not self._faults:  # every cycle of a serving node: the common case is none
            return ()
        with self._api_lock:
            faults = tuple(self._faults)
            self._faults.clear()
            return faults

    def _report_event(self, event: CanEvent) -> None:
        self._events.append(event)
        self._faults.append(fault_of(event, self._can.reply_timeout_s))
        if self._on_event is not None:
            self._on_event(event)

    # ---------------------------------------------------------------- the exchange

    def _exchange(
        self,
        p: FloatArray,
        v: FloatArray,
        kp: FloatArray,
        kd: FloatArray,
        tau: FloatArray,
        *,
        modes: npt.NDArray[np.int8] | None = None,
    ) -> LinkFeedback:
        """Send one frame per motor, collect and absorb the replies, supervise.

        ``modes`` (each joint's mode for this command; ``None``: the safe command, unguarded):
        joints driven by a current or impedance command are bounded by the limit guard at the
        latest measured state; the arrays passed in are not changed (they are the held command).
        """
        try:
            if modes is None:
                self._limited[:] = False
                self._speed_limited[:] = False
            else:
                p, v, kp, kd, tau = self._guarded(p, v, kp, kd, tau, modes=modes)
            feedback = self._link.command_all(position=p, velocity=v, kp=kp, kd=kd, torque=tau)
        except OutOfRangeError as exc:
            i = exc.motor_index if exc.motor_index is not None else 0
            raise LimitError(
                _API,
                exc.field,
                exc.value,
                f"within the motor model {self._can.motors[i].model.name!r} wire range "
                f"[{exc.low:g}, {exc.high:g}] {exc.unit} (actuator space); nothing was sent",
                joint=self._names[i],
                index=i,
            ) from None
        except ReservedFrameError as exc:
            raise LimitError(_API, "command", None, f"a sendable command ({exc})") from None
        except BusOffError as exc:
            self._bus_failed(exc)
        self._absorb(feedback)
        return feedback

    def _guarded(
        self,
        p: FloatArray,
        v: FloatArray,
        kp: FloatArray,
        kd: FloatArray,
        tau: FloatArray,
        *,
        modes: npt.NDArray[np.int8],
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
        """The command as it goes out this exchange: the limit guard bounds the joints driven by
        a current or impedance command at the latest replies (module docstring, "Limits"). The
        command as given is checked against the wire ranges first, so a bad value is refused
        rather than hidden by the guard's override; the override itself is kept inside them."""
        np.logical_and(self._moves.profile.limited, modes == MODE_PROFILE, out=self._limited)
        # a profiled speed move is only ever stopped at an end (its speed is checked)
        self._speed_limited[:] = False
        guarded = ((modes == MODE_CURRENT) | (modes == MODE_IMPEDANCE)) & self._link.enabled
        if not guarded.any():
            return p, v, kp, kd, tau
        self._link.check_all(position=p, velocity=v, kp=kp, kd=kd, torque=tau)
        sent = self._send
        for out, held in zip(sent, (p, v, kp, kd, tau), strict=True):
            np.copyto(out, held)
        sp, sv, skp, skd, stau = sent
        limited = self._guard.apply(
            guarded, position=self._position, velocity=self._velocity,
            p_ref=sp, v_ref=sv, torque=stau, kp=skp, kd=skd,
        )
        # The envelope law's gains may exceed what the motor model encodes (a held command was
        # checked above and is unchanged by this): keep what goes out on the wire.
        low, high = self._link.command_ranges
        for row, out in enumerate(sent):
            np.clip(out, low[row], high[row], out=out)
        self._limited |= limited
        np.copyto(self._speed_limited, self._guard.speed_limited)
        return sp, sv, skp, skd, stau

    def _bus_failed(self, exc: BusOffError) -> NoReturn:
        self._report_event(BusFailure(str(exc), exc.sent))
        raise DriverIOError(f"CAN bus {self._can.channel!r}: {exc}") from exc

    def _absorb(self, feedback: LinkFeedback, *, supervise: bool = True) -> None:
        self._time = now = time.monotonic()
        self._position = feedback.position
        history = self._history
        history.append((now, feedback.position))
        # Keep one sample at least a window old (the baseline of _displaced) and the newer ones.
        while len(history) > 1 and history[1][0] <= now - self._can.still_window_s:
            history.popleft()
        self._velocity = feedback.velocity
        self._torque = feedback.torque
        self._temperature = feedback.temperature_c
        self._error_byte = np.array(
            [0 if code is None else code for code in feedback.error_code], dtype=np.uint32
        )
        self._timed_out = feedback.timed_out & feedback.addressed
        self._fresh = True
        answered = feedback.addressed & ~feedback.timed_out
        erring = self._watch_errors(answered, supervise=supervise)
        if not supervise:
            return
        self._missed[answered] = 0
        self._missed[self._timed_out] += 1
        newly_lost = (self._missed >= self._can.lost_after) & ~self._lost
        if newly_lost.any():
            self._lost |= newly_lost
            if not self._safe:
                i = int(np.flatnonzero(newly_lost)[0])
                self._go_safe(
                    i,
                    DriveWentSafe(
                        i, self._names[i], self._can.motors[i].can_id, int(self._missed[i])
                    ),
                )
        # Last, as for a lost motor: going safe exchanges, and absorbs that exchange in turn.
        if erring is not None and not self._safe:
            self._go_safe(erring, None)

    def _watch_errors(self, answered: BoolArray, *, supervise: bool) -> int | None:
        """Report each change of a motor's error byte once; in a supervised exchange flag the
        motors reporting one and return the first newly flagged (the caller puts the array safe;
        a power request refuses instead), else ``None``."""
        codes = self._error_byte
        changed = answered & (codes != self._error_seen)
        if changed.any():
            for i in np.flatnonzero(changed).tolist():
                code, before = int(codes[i]), int(self._error_seen[i])
                self._error_seen[i] = code
                motor = self._can.motors[i]
                if code:
                    action = (
                        "every motor is on the safe damping command (kp 0, kd "
                        f"{self._can.safe_kd:g} N·m·s/rad) and commands are refused until it "
                        "reports 0 and the array is re-armed with power off, then on"
                        if supervise and self._powered
                        else "power on is refused until it reports 0"
                    )
                    self._report_event(MotorError(i, motor.joint, motor.can_id, code, action))
                else:
                    self._report_event(
                        MotorErrorCleared(i, motor.joint, motor.can_id, before, self._safe)
                    )
        if not supervise:
            return None
        erring = answered & (codes != 0)
        np.copyto(self._error_latched, codes, where=erring)
        newly = erring & ~self._errored
        if not newly.any():
            return None
        self._errored |= newly
        return int(np.flatnonzero(newly)[0])

    def _displaced(self) -> BoolArray:
        """Joints that moved faster than ``moving_velocity`` on average over the last
        ``still_window_s`` (their displacement since the newest reply at least that old, or the
        oldest one kept); a joint without both positions is not counted as moving here."""
        window = self._can.still_window_s
        _, baseline = self._history[0]
        with np.errstate(invalid="ignore"):
            return np.abs(self._position - baseline) > self._can.moving_velocity * window

    def _go_safe(self, index: int, event: CanEvent | None) -> None:
        """Put every motor on the safe damping command because of motor ``index``, and report
        ``event`` (``None``: reported already)."""
        self._safe = True
        self._moves.mode[:] = _SAFE
        self._hold_safe()
        if event is not None:
            self._report_event(event)
        if self._powered:
            self._exchange(self._cmd_p, self._cmd_v, self._cmd_kp, self._cmd_kd, self._cmd_tau)

    def _hold_safe(self) -> None:
        self._cmd_p[:] = 0.0
        self._cmd_v[:] = 0.0
        self._cmd_kp[:] = 0.0
        self._cmd_kd[:] = self._can.safe_kd
        self._cmd_tau[:] = 0.0

    def _advance_profile(self) -> None:
        """Advance the profile to the clock's now: by the time since it was last advanced, at
        most ``_max_step_s`` s (a stall does not make the setpoint jump ahead), nothing if no time
        passed (module docstring, "Time"). Called at every exchange and before every request
        that re-plans the profile, so a new move starts from the request's time."""
        now = self._clock()
        elapsed = min(now - self._profile_time, self._max_step_s)
        self._profile_time = max(self._profile_time, now)
        if elapsed > 0.0 and (self._moves.mode == MODE_PROFILE).any():
            self._moves.profile.step(elapsed, lookahead=self._max_step_s)

    def _poll(self) -> None:
        """Exchange with what each motor holds (profiles advanced to the clock's now)."""
        profiled = self._moves.mode == MODE_PROFILE
        self._advance_profile()
        if profiled.any():
            p_ref, v_ref = self._moves.profile.position, self._moves.profile.velocity
            np.copyto(self._cmd_p, p_ref, where=profiled)
            np.copyto(self._cmd_v, v_ref, where=profiled)
            np.copyto(self._cmd_kp, self._kp, where=profiled)
            np.copyto(self._cmd_kd, self._kd, where=profiled)
            np.copyto(self._cmd_tau, self._zeros, where=profiled)
        self._exchange(
            self._cmd_p, self._cmd_v, self._cmd_kp, self._cmd_kd, self._cmd_tau,
            modes=None if self._safe else self._moves.mode,
        )

    def _check_armed(self, request: str, indices: IntArray | None = None) -> None:
        """Refuse motion while the array is safe after a lost motor or one reporting an error.

        The refusal names a commanded joint (``indices``; ``None``: every joint): a faulty one if
        the command includes one, else — a one-joint command to a healthy motor — that joint,
        with the faulty motor that made the array safe in the text."""
        if not self._safe:
            return
        lost = np.flatnonzero(self._lost | self._errored)
        commanded = self._all if indices is None else indices
        lost_commanded = np.intersect1d(lost, commanded)
        cause = int(lost_commanded[0] if lost_commanded.size else lost[0] if lost.size else 0)
        i = int(commanded[0]) if commanded.size == 1 and not lost_commanded.size else cause
        motor = f"motor (can id {self._can.motors[cause].can_id})"
        if i != cause:
            motor += f" of joint {self._names[cause]!r} (index {cause})"
        if self._errored[cause] and not self._lost[cause]:
            code = int(self._error_latched[cause])
            now = int(self._error_seen[cause])
            reports = (
                f"reports error code 0x{now:02x}" if now
                else f"reported error code 0x{code:02x} (now 0)"
            )
            raise RequestRejected(
                request,
                RejectReason.DRIVER_FAULT,
                f"{motor} {reports}; the array is on the safe damping command — once it "
                "reports 0, power(False) then power(True) to re-arm",
                joint=self._names[i],
                index=i,
                field="motor_error",
                value=f"0x{now or code:02x} ({motor})",
                expected="error code 0, then power(False) and power(True) to re-arm",
            )
        raise RequestRejected(
            request,
            RejectReason.TIMED_OUT,
            f"{motor} missed {self._can.lost_after} replies in a row; the array is on the safe "
            "damping command — power(False) then power(True) to re-arm",
            joint=self._names[i],
            index=i,
            field="motor_replies",
            value=f"lost ({motor})",
            expected="every motor answering: power(False) then power(True) to re-arm",
        )

    # ---------------------------------------------------------------- hooks

    def _capabilities(self) -> frozenset[Capability]:
        caps = {
            Capability.POWER,
            Capability.SPEED_CONFIG,
            Capability.ACCEL_CONFIG,
            Capability.POSITION,
            Capability.SPEED,
            Capability.HOME,
            Capability.IMPEDANCE,
        }
        if np.isfinite(self._kt).all():
            caps.add(Capability.CURRENT)
        return frozenset(caps)

    def _motor_power(self) -> bool:
        return self._powered

    def _actuator_command_ranges(self) -> tuple[FloatArray, FloatArray, tuple[str, ...]]:
        """The motor models' wire ranges (actuator space = motor space here): what a frame can
        carry, declared so that a command outside them is refused when checked, not at write."""
        low, high = self._link.command_ranges  # rows position, velocity, kp, kd, torque
        order = [0, 1, 4, 2, 3]  # -> position, velocity, torque, kp, kd
        return low[order], high[order], tuple(
            f"the {m.model.name}'s wire range" for m in self._can.motors
        )

    def _read_raw(self) -> RawReading:
        if not self._fresh:
            self._poll()
        self._fresh = False
        status = self._error_byte & ERROR_BYTE_MASK
        status |= np.where(status != 0, int(CanStatus.MOTOR_ERROR), 0).astype(np.uint32)
        status |= np.where(self._timed_out, int(CanStatus.REPLY_TIMEOUT), 0).astype(np.uint32)
        status |= np.where(self._lost, int(CanStatus.COMM_LOST), 0).astype(np.uint32)
        status |= np.where(self._link.enabled, 0, int(CanStatus.UNPOWERED)).astype(np.uint32)
        if self._safe:
            status |= np.uint32(CanStatus.SAFE)
        moving = self._displaced()
        # A commanded move is MOVING from the call on, not only once the joint has sped up.
        moving |= (self._moves.mode == MODE_PROFILE) & self._moves.profile.active
        n = self.count
        return RawReading(
            time=self._time,
            position=self._position.copy(),
            velocity=self._velocity.copy(),
            acceleration=np.full(n, np.nan),
            current=self._torque / self._kt,
            effort=self._torque.copy(),
            temperature=self._temperature.copy(),
            status=status.astype(np.uint32),
            moving=moving,
            braked=np.zeros(n, dtype=np.bool_),
            stalled=self._lost | self._errored,
            # Powered as far as known: a lost motor's power is unknown, and an array none of
            # whose motors answers is not reported as powered.
            motor_power=self._powered and not bool(self._lost.all()),
            powered=self._link.enabled.copy(),
            limited=self._limited.copy(),
            speed_limited=self._speed_limited.copy(),
        )

    def _wait_tick(self) -> None:
        """Poll at the nominal control period (each read is an exchange; moves run on the
        clock, so this paces the bus traffic, not the moves)."""
        time.sleep(self._can.period_s)

    def _measured_state(self) -> tuple[FloatArray, FloatArray]:
        """The latest replies, without a new exchange (soft limits must not move the bus)."""
        return self._position.copy(), self._velocity.copy()

    def _request_power(self, on: bool) -> None:
        link = self._link
        try:
            feedback = link.enable() if on else link.disable()
        except BusOffError as exc:
            self._bus_failed(exc)
        self._absorb(feedback, supervise=False)
        missing = np.flatnonzero(feedback.timed_out)
        if on and missing.size:
            # Leave the array as it was: switch the motors that did enter motor mode back off.
            for i in np.flatnonzero(feedback.addressed & ~feedback.timed_out).tolist():
                try:
                    link.disable(i)
                except BusOffError as exc:
                    self._bus_failed(exc)
            raise self._no_answer(int(missing[0]), "enter-motor-mode", "power is still off")
        erring = np.flatnonzero(feedback.addressed & (self._error_byte != 0))
        if on and erring.size:
            for i in np.flatnonzero(feedback.addressed).tolist():
                try:
                    link.disable(i)
                except BusOffError as exc:
                    self._bus_failed(exc)
            if not link.enabled.any():  # a re-arm while powered: every motor is off now
                self._powered = False
                if not self._safe:
                    self._moves.mode[:] = MODE_OFF
            i = int(erring[0])
            code = int(self._error_byte[i])
            raise RequestRejected(
                "power",
                RejectReason.DRIVER_FAULT,
                f"motor (can id {self._can.motors[i].can_id}) reports error code 0x{code:02x}; "
                "power is still off — clear the drive's fault first",
                joint=self._names[i],
                index=i,
                field="motor_error",
                value=f"0x{code:02x}",
                expected="error code 0",
            )
        self._powered = on
        self._cmd_p[:] = 0.0
        self._cmd_v[:] = 0.0
        self._cmd_kp[:] = 0.0
        self._cmd_kd[:] = 0.0
        self._cmd_tau[:] = 0.0
        if on:
            # Re-armed: hold where the joints are (the enable replies say where that is).
            self._safe = False
            self._lost[:] = False
            self._errored[:] = False
            self._error_latched[:] = 0
            self._missed[:] = 0
            self._moves.profile.reset(feedback.position, np.zeros(self.count))
            self._profile_time = self._clock()
            self._moves.mode[:] = MODE_PROFILE
        else:
            self._moves.mode[:] = MODE_OFF
            if missing.size:
                raise self._no_answer(
                    int(missing[0]),
                    "exit-motor-mode",
                    "the others are off and it is no longer commanded, so its own "
                    "communication watchdog switches it off",
                )

    def _no_answer(self, index: int, frame: str, outcome: str) -> RequestRejected:
        return RequestRejected(
            "power",
            RejectReason.TIMED_OUT,
            f"motor (can id {self._can.motors[index].can_id}) did not answer {frame} within "
            f"{self._can.reply_timeout_s:g} s; {outcome}",
            joint=self._names[index],
            index=index,
            field="motor_reply",
            value=f"none to {frame}",
            expected=f"a reply within {self._can.reply_timeout_s:g} s",
        )

    def _request_speed(self, indices: IntArray, speeds: FloatArray) -> None:
        self._advance_profile()  # moves under way are re-planned from where they are now
        self._moves.set_speed(indices, speeds)

    def _request_accel(self, indices: IntArray, accels: FloatArray) -> None:
        self._advance_profile()
        self._moves.set_accel(indices, accels)
        self._guard.set_deceleration(indices, accels)

    def _profile_start(self, switching: IntArray) -> tuple[FloatArray, FloatArray]:
        """Joints coming from current or impedance mode start their move from where they are."""
        position = self._position[switching]
        known = np.isfinite(position)
        # A joint whose last reply was lost starts from the target it was holding.
        start = np.where(known, position, self._cmd_p[switching])
        velocity = np.where(np.isfinite(self._velocity[switching]),
                            self._velocity[switching], 0.0)
        return start, velocity

    def _write_positions(self, indices: IntArray, positions: FloatArray) -> None:
        self._check_armed("positions" if indices.size > 1 else "position", indices)
        self._advance_profile()  # the move starts now, the others re-planned from now
        self._moves.move_to(indices, positions, self._profile_start)

    def _write_speeds(self, indices: IntArray, speeds: FloatArray) -> None:
        self._check_armed("speeds" if indices.size > 1 else "speed", indices)
        self._advance_profile()
        self._moves.move_at(indices, speeds, self._profile_start)

    def _write_currents(self, indices: IntArray, currents: FloatArray) -> None:
        self._check_armed("currents" if indices.size > 1 else "current", indices)
        self._check_current_range(indices, currents)
        p, v = self._cmd_p.copy(), self._cmd_v.copy()
        kp, kd, tau = self._cmd_kp.copy(), self._cmd_kd.copy(), self._cmd_tau.copy()
        p[indices] = 0.0
        v[indices] = 0.0
        kp[indices] = 0.0
        kd[indices] = 0.0
        tau[indices] = self._kt[indices] * currents
        self._commit(p, v, kp, kd, tau, indices=indices, mode=MODE_CURRENT, request="current")

    def _check_current_range(self, indices: IntArray, currents: FloatArray) -> None:
        """Refuse (:class:`LimitError`, nothing sent) a current (A, actuator space) whose torque
        ``k_t · I`` the motor's frame cannot carry, naming the joint, the field ``current``, the
        value in joint space and the current range, in joint space, that the wire range sets.

        Why here: a joint whose effort and current limits are unbounded is bounded only by its
        motor's wire range (md80: ±24 N·m), which the base class cannot state in amperes (it
        does not know ``k_t``). Until 2026-12-06 such a current was refused only at the
        exchange, as an actuator-space ``torque`` the caller never sent."""
        ranges = self.command_ranges()
        lower, upper = ranges.bounds_array("effort")  # joint space, N·m
        kt = self._kt[indices]
        d = self._calibration.direction[indices]
        joint_current = d * currents
        torque = kt * joint_current  # what the frame would carry, exactly as _commit sends it
        outside = ~((torque >= lower[indices]) & (torque <= upper[indices]))
        if not outside.any():
            return
        low = lower[indices] / kt
        high = upper[indices] / kt
        k = int(np.flatnonzero(outside)[0])
        i = int(indices[k])
        raise LimitError(
            _API,
            "current",
            float(joint_current[k]),
            f"within [{low[k]:g}, {high[k]:g}] A ({ranges.bound_by[i]}: torque "
            f"[{lower[i]:g}, {upper[i]:g}] N·m over the torque constant {kt[k]:g} N·m/A)",
            joint=self._names[i],
            index=i,
        )

    def _write_impedance(self, targets: ImpedanceTargets) -> None:
        self._check_armed("impedance")
        self._commit(
            targets.position, targets.velocity, targets.kp, targets.kd, targets.torque,
            indices=self._all, mode=MODE_IMPEDANCE, request="impedance",
        )

    def _commit(
        self,
        p: FloatArray,
        v: FloatArray,
        kp: FloatArray,
        kd: FloatArray,
        tau: FloatArray,
        *,
        indices: IntArray,
        mode: int,
        request: str,
    ) -> None:
        """Exchange a new command; hold it only if it went out (profiles sample first)."""
        profiled = self._moves.mode == MODE_PROFILE
        profiled[indices] = False
        self._advance_profile()
        if profiled.any():
            p_ref, v_ref = self._moves.profile.position, self._moves.profile.velocity
            np.copyto(p, p_ref, where=profiled)
            np.copyto(v, v_ref, where=profiled)
            np.copyto(kp, self._kp, where=profiled)
            np.copyto(kd, self._kd, where=profiled)
            np.copyto(tau, self._zeros, where=profiled)
        modes = self._moves.mode.copy()
        modes[indices] = mode
        self._exchange(p, v, kp, kd, tau, modes=modes)
        if self._safe:  # this exchange lost a motor: the command is not in effect
            self._check_armed(request, indices)
        self._cmd_p[:] = p
        self._cmd_v[:] = v
        self._cmd_kp[:] = kp
        self._cmd_kd[:] = kd
        self._cmd_tau[:] = tau
        self._moves.mode[indices] = mode

    def _close(self) -> None:
        try:
            if self._powered:
                self._link.disable()
        except BusOffError:
            pass  # closing anyway; the drives' watchdog switches them off
        finally:
            self._powered = False
            if self._owns_bus:
                self._bus.shutdown()
            # no exchange samples the profile any more (the API is closed): no ruckig object
            # outlives the driver's use of it (ProfileGenerator.release: nanobind's leak report)
            self._moves.release()


def open_can(url: DriverURL) -> CanActuatorArray:
    """Open ``can://<interface>/<channel>?robot=...&model=...`` (see :mod:`.config`)."""
    return CanActuatorArray(CanArrayConfig.from_url(url))
