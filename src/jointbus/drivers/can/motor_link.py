"""Host side of an MIT-mode CAN bus: N motors, one python-can bus, one exchange per cycle.

Where it sits: :mod:`jointbus.drivers.can`, above :mod:`.mit_protocol` and :mod:`.motor_models`;
the ``can://`` :class:`ActuatorArray` driver wraps it. It knows frames, motors and CAN ids —
not joints, limits or calibration, which live above the drivers.

One cycle (:meth:`MotorLink.command_all`):

1. **Validate everything first.** All 5×N values are checked against each motor's wire ranges
   before a single frame is built; one bad value rejects the whole command set and nothing is
   sent (the error names the motor, its index, the field, the value and the range).
2. **Drain stale frames.** MIT replies carry no sequence number, so a reply that arrived after the
   previous cycle's timeout would otherwise be taken for this cycle's answer. Anything already
   queued is read and reported as :class:`LateReply` before sending.
3. **Send** one frame per motor.
4. **Collect** replies until every motor has answered or ``reply_timeout_s`` (measured from the
   last send) has passed and nothing more is queued (a reply that arrived in time while this
   thread was descheduled still counts). A motor that did not answer is flagged ``timed_out``
   in the returned feedback (its values are NaN), its counter goes up and a
   :class:`ReplyTimeout` event is reported; the other motors still report normally.

Bus failures are not events to be overlooked: a send that python-can refuses
(:class:`can.CanOperationError`), a bus whose ``state`` is :attr:`can.BusState.ERROR`, or a
received SocketCAN error frame with the bus-off class bit raises :class:`BusOffError`. Other error
frames (error-passive warnings, lost arbitration, …) are reported as :class:`BusErrorFrame` events.

Events are returned with each cycle's feedback and, if ``on_event`` is given, also passed to it
as they happen. The link is not thread-safe: one caller drives it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

import can
import numpy as np
import numpy.typing as npt

from jointbus.drivers.can.mit_protocol import (
    COMMAND_FIELDS,
    CommandRangeTable,
    MitCommand,
    OutOfRangeError,
    ReplyTable,
    ReservedFrameError,
    SpecialFrame,
    decode_replies,
    encode_command,
    encode_commands,
    special_frame,
)
from jointbus.drivers.can.motor_models import MotorModel

__all__ = [
    "CAN_ERR_BUSOFF",
    "BusErrorFrame",
    "BusOffError",
    "CommandShapeError",
    "LateReply",
    "LinkEvent",
    "LinkFeedback",
    "MotorFeedback",
    "MotorLink",
    "MotorLinkError",
    "MotorSpec",
    "MotorSpecError",
    "ReplyTimeout",
    "UnexpectedFrame",
    "UnknownMotorError",
]

#: Error-class bit of a SocketCAN error frame's id meaning "controller went bus-off"
#: (``CAN_ERR_BUSOFF`` in linux/can/error.h).
CAN_ERR_BUSOFF: Final[int] = 0x040
_MAX_MOTOR_ID: Final[int] = 0xFF  # the reply names its motor in one byte


# --------------------------------------------------------------------------------------------
# Configuration and errors
# --------------------------------------------------------------------------------------------


class MotorLinkError(Exception):
    """Base class of the motor-link errors."""


class MotorSpecError(MotorLinkError, ValueError):
    """A motor list that cannot work on one bus (duplicate names or ids, ids out of range)."""


class UnknownMotorError(MotorLinkError, LookupError):
    """A motor index or name that is not on this link."""


class CommandShapeError(MotorLinkError, ValueError):
    """A per-motor array that does not have one value per motor; nothing was sent."""


class BusOffError(MotorLinkError):
    """The CAN bus cannot carry frames (bus-off, controller error, send refused).

    ``sent`` is how many frames of this cycle went out before the failure; ``feedback`` holds the
    replies collected so far when the failure was seen while collecting, else ``None``.
    """

    def __init__(
        self, message: str, *, sent: int = 0, feedback: LinkFeedback | None = None
    ) -> None:
        self.sent = sent
        self.feedback = feedback
        super().__init__(message)


@dataclass(frozen=True, slots=True)
class MotorSpec:
    """One motor on the bus: a name (for errors and reports), its CAN id and its model."""

    name: str
    can_id: int
    model: MotorModel


# --------------------------------------------------------------------------------------------
# Events
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReplyTimeout:
    """A motor did not answer within ``reply_timeout_s``; ``count`` is its running total."""

    motor_index: int
    motor_name: str
    can_id: int
    count: int


@dataclass(frozen=True, slots=True)
class LateReply:
    """A reply from an earlier cycle found queued before sending; it was discarded."""

    motor_index: int
    motor_name: str
    can_id: int


@dataclass(frozen=True, slots=True)
class UnexpectedFrame:
    """A frame addressed to the host that is not a valid, awaited reply (``reason`` says why)."""

    arbitration_id: int
    data: bytes
    reason: str


@dataclass(frozen=True, slots=True)
class BusErrorFrame:
    """A CAN error frame (SocketCAN delivers bus errors as frames with an error-class id)."""

    error_class: int
    data: bytes
    bus_off: bool


LinkEvent = ReplyTimeout | LateReply | UnexpectedFrame | BusErrorFrame


# --------------------------------------------------------------------------------------------
# Feedback
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MotorFeedback:
    """One motor's answer. Values are NaN (``error_code`` None) when not reported.

    Units: position rad, velocity rad/s, torque N·m, temperature °C.
    """

    index: int
    name: str
    position: float
    velocity: float
    torque: float
    temperature_c: float
    error_code: int | None
    timed_out: bool


@dataclass(frozen=True, slots=True)
class LinkFeedback:
    """One cycle's answers, one entry per motor on the link (in the link's order).

    ``addressed`` marks the motors this cycle sent a frame to; the others are NaN and never
    ``timed_out``. ``temperature_c`` is NaN and ``error_code`` ``None`` for models whose replies do
    not carry them. Units: rad, rad/s, N·m, °C.
    """

    names: tuple[str, ...]
    position: npt.NDArray[np.float64]
    velocity: npt.NDArray[np.float64]
    torque: npt.NDArray[np.float64]
    temperature_c: npt.NDArray[np.float64]
    error_code: tuple[int | None, ...]
    timed_out: npt.NDArray[np.bool_]
    addressed: npt.NDArray[np.bool_]
    events: tuple[LinkEvent, ...] = field(default=())

    def motor(self, index: int) -> MotorFeedback:
        """The feedback of motor ``index`` as a single record."""
        return MotorFeedback(
            index=index,
            name=self.names[index],
            position=float(self.position[index]),
            velocity=float(self.velocity[index]),
            torque=float(self.torque[index]),
            temperature_c=float(self.temperature_c[index]),
            error_code=self.error_code[index],
            timed_out=bool(self.timed_out[index]),
        )

    @property
    def any_timed_out(self) -> bool:
        """True if any addressed motor failed to answer."""
        return bool(self.timed_out.any())


# --------------------------------------------------------------------------------------------
# The link
# --------------------------------------------------------------------------------------------


class MotorLink:
    """Talks to N MIT-mode motors on one python-can bus (see the module docstring for a cycle).

    ``host_id`` is the arbitration id the motors answer on (0 in the reference firmware); frames
    with other ids are other nodes' traffic and are ignored. The link does not own ``bus``: the
    caller closes it.
    """

    def __init__(
        self,
        bus: can.BusABC,
        motors: Sequence[MotorSpec],
        reply_timeout_s: float,
        *,
        host_id: int = 0,
        on_event: Callable[[LinkEvent], None] | None = None,
    ) -> None:
        motors = tuple(motors)
        if not motors:
            raise MotorSpecError("MotorLink needs at least one motor")
        if not (math.isfinite(reply_timeout_s) and reply_timeout_s > 0):
            raise MotorSpecError(
                f"reply_timeout_s = {reply_timeout_s!r}; expected a finite time > 0 s"
            )
        if not 0 <= host_id <= 0x7FF:
            raise MotorSpecError(f"host_id = {host_id!r}; expected a standard id 0…0x7FF")
        names: dict[str, int] = {}
        ids: dict[int, int] = {}
        for index, spec in enumerate(motors):
            if spec.name in names:
                raise MotorSpecError(
                    f"motor {spec.name!r} (index {index}): name already used by index "
                    f"{names[spec.name]}"
                )
            if not 1 <= spec.can_id <= _MAX_MOTOR_ID or spec.can_id == host_id:
                raise MotorSpecError(
                    f"motor {spec.name!r} (index {index}): can_id = {spec.can_id!r}; expected "
                    f"1…{_MAX_MOTOR_ID} (replies name the motor in one byte) and not the "
                    f"host id {host_id}"
                )
            if spec.can_id in ids:
                other = motors[ids[spec.can_id]]
                raise MotorSpecError(
                    f"motor {spec.name!r} (index {index}): can_id {spec.can_id} already used "
                    f"by motor {other.name!r} (index {ids[spec.can_id]})"
                )
            names[spec.name] = index
            ids[spec.can_id] = index
        self._bus = bus
        self._motors = motors
        self._names = tuple(spec.name for spec in motors)
        self._index_by_name = names
        self._index_by_id = ids
        self._timeout_s = float(reply_timeout_s)
        self._host_id = host_id
        self._on_event = on_event
        self._table = CommandRangeTable([spec.model.ranges for spec in motors])
        self._reply_table = ReplyTable(
            [spec.model.ranges for spec in motors], [spec.model.reply for spec in motors]
        )
        self._timeouts = np.zeros(len(motors), dtype=np.int64)
        self._enabled = np.zeros(len(motors), dtype=np.bool_)
        self.frames_sent = 0
        self.replies_received = 0

    # ---------------------------------------------------------------- properties

    @property
    def motors(self) -> tuple[MotorSpec, ...]:
        """The motors, in link order."""
        return self._motors

    @property
    def names(self) -> tuple[str, ...]:
        """Motor names, in link order."""
        return self._names

    @property
    def reply_timeout_s(self) -> float:
        """How long a cycle waits for replies after its last send, s."""
        return self._timeout_s

    @property
    def timeout_counts(self) -> npt.NDArray[np.int64]:
        """Missed replies per motor since the link was made (a copy)."""
        return self._timeouts.copy()

    @property
    def enabled(self) -> npt.NDArray[np.bool_]:
        """Motors whose enter-motor-mode frame was answered and not since exited (a copy)."""
        return self._enabled.copy()

    def index(self, motor: int | str) -> int:
        """Link index of a motor given by index or name."""
        if isinstance(motor, str):
            try:
                return self._index_by_name[motor]
            except KeyError:
                raise UnknownMotorError(
                    f"unknown motor {motor!r}; motors on this link: {', '.join(self._names)}"
                ) from None
        if isinstance(motor, bool) or not isinstance(motor, int | np.integer):
            raise UnknownMotorError(f"motor {motor!r}: expected an index or a name")
        if not 0 <= motor < len(self._motors):
            raise UnknownMotorError(
                f"motor index {motor} out of range; this link has {len(self._motors)} motors "
                f"(0…{len(self._motors) - 1})"
            )
        return int(motor)

    # ---------------------------------------------------------------- mode frames

    def enable(self, motor: int | str | None = None) -> LinkFeedback:
        """Send enter-motor-mode to one motor (index or name) or to all (``None``)."""
        return self._special(SpecialFrame.ENTER_MOTOR_MODE, motor)

    def disable(self, motor: int | str | None = None) -> LinkFeedback:
        """Send exit-motor-mode (the motor stops producing torque)."""
        return self._special(SpecialFrame.EXIT_MOTOR_MODE, motor)

    def zero(self, motor: int | str | None = None) -> LinkFeedback:
        """Make the present position the motor's zero (the motor stores it)."""
        return self._special(SpecialFrame.ZERO_POSITION, motor)

    def _special(self, kind: SpecialFrame, motor: int | str | None) -> LinkFeedback:
        indices = range(len(self._motors)) if motor is None else (self.index(motor),)
        data = special_frame(kind)
        feedback = self._exchange([(i, data) for i in indices])
        answered = feedback.addressed & ~feedback.timed_out
        if kind is SpecialFrame.ENTER_MOTOR_MODE:
            self._enabled |= answered
        elif kind is SpecialFrame.EXIT_MOTOR_MODE:
            self._enabled &= ~answered
        return feedback

    # ---------------------------------------------------------------- commands

    def command(
        self,
        motor: int | str,
        *,
        position: float,
        velocity: float,
        kp: float,
        kd: float,
        torque: float,
    ) -> MotorFeedback:
        """Send one impedance command to one motor and return its answer.

        Units: position rad, velocity rad/s, kp N·m/rad, kd N·m·s/rad, torque N·m.
        Raises :class:`OutOfRangeError` (nothing sent) for a value outside the model's ranges.
        """
        index = self.index(motor)
        spec = self._motors[index]
        values = MitCommand(float(position), float(velocity), float(kp), float(kd), float(torque))
        try:
            data = encode_command(values, spec.model.ranges)
        except OutOfRangeError as exc:
            raise OutOfRangeError(
                exc.field, exc.value, exc.low, exc.high,
                motor_name=spec.name, motor_index=index, model=spec.model.name,
            ) from None
        except ReservedFrameError as exc:
            raise ReservedFrameError(f"motor {spec.name!r} (index {index}): {exc}") from None
        return self._exchange([(index, data)]).motor(index)

    def command_all(
        self,
        *,
        position: npt.ArrayLike,
        velocity: npt.ArrayLike,
        kp: npt.ArrayLike,
        kd: npt.ArrayLike,
        torque: npt.ArrayLike,
    ) -> LinkFeedback:
        """Send one impedance command to every motor (arrays in link order) and collect replies.

        Whole-message rejection: every value is checked first; on the first one outside its
        motor's range, :class:`OutOfRangeError` names the motor (name and index), the field, the
        value and the range, and no frame is sent. Units as in :meth:`command`.
        """
        values = self.check_all(
            position=position, velocity=velocity, kp=kp, kd=kd, torque=torque
        )
        try:
            frames = encode_commands(values, self._table)
        except ReservedFrameError as exc:
            raise ReservedFrameError(f"{exc} (motors: {', '.join(self._names)})") from None
        raw = frames.tobytes()
        n = len(self._motors)
        return self._exchange([(i, raw[8 * i : 8 * i + 8]) for i in range(n)])

    def check_all(
        self,
        *,
        position: npt.ArrayLike,
        velocity: npt.ArrayLike,
        kp: npt.ArrayLike,
        kd: npt.ArrayLike,
        torque: npt.ArrayLike,
    ) -> npt.NDArray[np.float64]:
        """The checks of :meth:`command_all` without sending: the values as a (5, N) array in
        :data:`COMMAND_FIELDS` order, or :class:`OutOfRangeError` / :class:`CommandShapeError`
        naming the first offender. A driver that adjusts a command before it goes out (the limit
        guard) checks the command as it was given with this first."""
        n = len(self._motors)
        values = np.empty((5, n), dtype=np.float64)
        for row, (name, array) in enumerate(
            zip(COMMAND_FIELDS, (position, velocity, kp, kd, torque), strict=True)
        ):
            column = np.asarray(array, dtype=np.float64)
            if column.shape != (n,):
                raise CommandShapeError(
                    f"field {name!r} has shape {column.shape}; expected ({n},), one value per "
                    f"motor ({', '.join(self._names)}); nothing was sent"
                )
            values[row] = column
        violation = self._table.first_violation(values)
        if violation is not None:
            field_index, i = violation
            raise OutOfRangeError(
                COMMAND_FIELDS[field_index],
                float(values[field_index, i]),
                float(self._table.low[field_index, i]),
                float(self._table.high[field_index, i]),
                motor_name=self._names[i], motor_index=i, model=self._motors[i].model.name,
            )
        return values

    @property
    def command_ranges(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """(low, high) of every command field per motor, shape (5, N) in
        :data:`COMMAND_FIELDS` order (read-only views)."""
        low = self._table.low.view()
        high = self._table.high.view()
        low.flags.writeable = False
        high.flags.writeable = False
        return low, high

    # ---------------------------------------------------------------- the exchange

    def _report(self, events: list[LinkEvent], event: LinkEvent) -> None:
        events.append(event)
        if self._on_event is not None:
            self._on_event(event)

    def _error_frame(self, msg: can.Message, events: list[LinkEvent]) -> bool:
        """Report an error frame; True if it says bus-off."""
        bus_off = bool(msg.arbitration_id & CAN_ERR_BUSOFF)
        self._report(events, BusErrorFrame(msg.arbitration_id, bytes(msg.data), bus_off))
        return bus_off

    def _exchange(self, frames: list[tuple[int, bytes]]) -> LinkFeedback:
        bus = self._bus
        events: list[LinkEvent] = []
        if bus.state is can.BusState.ERROR:
            raise BusOffError("CAN bus is in the ERROR (bus-off) state; nothing was sent")

        try:
            return self._exchange_on(bus, frames, events)
        except can.CanOperationError as exc:  # recv on a failed or closed bus
            raise BusOffError(f"CAN bus failed: {exc}") from exc

    def _exchange_on(
        self, bus: can.BusABC, frames: list[tuple[int, bytes]], events: list[LinkEvent]
    ) -> LinkFeedback:
        n = len(self._motors)
        # 2. drain what is already queued: late replies of an earlier cycle, error frames
        while (stale := bus.recv(0.0)) is not None:
            if stale.is_error_frame:
                if self._error_frame(stale, events):
                    raise BusOffError("CAN controller reported bus-off; nothing was sent")
                continue
            if stale.arbitration_id != self._host_id or stale.is_extended_id or not stale.data:
                continue
            late = self._index_by_id.get(stale.data[0])
            if late is None:
                self._report(
                    events,
                    UnexpectedFrame(
                        stale.arbitration_id, bytes(stale.data), "reply from an unknown motor id"
                    ),
                )
            else:
                self._report(
                    events, LateReply(late, self._names[late], self._motors[late].can_id)
                )

        # 3. send
        pending = [False] * n
        sent = 0
        for index, data in frames:
            message = can.Message(
                arbitration_id=self._motors[index].can_id,
                data=data,
                is_extended_id=False,
                check=False,
            )
            try:
                bus.send(message)
            except can.CanOperationError as exc:
                raise BusOffError(
                    f"sending to motor {self._names[index]!r} (index {index}) failed after "
                    f"{sent} of {len(frames)} frames: {exc}",
                    sent=sent,
                ) from exc
            pending[index] = True
            sent += 1
        self.frames_sent += sent
        addressed = np.array(pending, dtype=np.bool_)

        # 4. collect (frames are matched and length-checked here, decoded together at the end)
        received: list[tuple[int, bytes]] = []
        lengths = self._reply_table.length
        host_id = self._host_id
        index_by_id = self._index_by_id
        waiting = sent
        deadline = time.monotonic() + self._timeout_s
        while waiting:
            # Past the deadline, still take what is already queued: a reply that arrived in time
            # while this thread was not running (a loaded host) is not a missing reply.
            remaining = max(0.0, deadline - time.monotonic())
            msg = bus.recv(remaining)
            if msg is None:
                break
            if msg.is_error_frame:
                if self._error_frame(msg, events):
                    raise BusOffError(
                        f"CAN controller reported bus-off while waiting for {waiting} "
                        f"repl{'y' if waiting == 1 else 'ies'}",
                        sent=sent,
                        feedback=self._feedback(received, [False] * n, addressed, events),
                    )
                continue
            if msg.arbitration_id != host_id or msg.is_extended_id:
                continue  # another node's traffic
            payload = bytes(msg.data)
            index = index_by_id.get(payload[0], -1) if payload else -1
            if index < 0:
                self._report(
                    events,
                    UnexpectedFrame(msg.arbitration_id, payload, "reply from an unknown motor id"),
                )
                continue
            if not pending[index]:
                reason = "that was not awaited"
            elif len(payload) != lengths[index]:
                reason = f"has {len(payload)} bytes; its model sends {lengths[index]}"
            else:
                received.append((index, payload))
                pending[index] = False
                waiting -= 1
                continue
            self._report(
                events,
                UnexpectedFrame(
                    msg.arbitration_id,
                    payload,
                    f"reply from motor {self._names[index]!r} (index {index}) {reason}",
                ),
            )
        self.replies_received += sent - waiting

        timed_out = np.array(pending, dtype=np.bool_)
        if waiting:
            self._timeouts += timed_out
            for index in np.flatnonzero(timed_out).tolist():
                spec = self._motors[index]
                self._report(
                    events,
                    ReplyTimeout(index, spec.name, spec.can_id, int(self._timeouts[index])),
                )
        return self._feedback(received, timed_out, addressed, events)

    def _feedback(
        self,
        received: list[tuple[int, bytes]],
        timed_out: Sequence[bool] | npt.NDArray[np.bool_],
        addressed: npt.NDArray[np.bool_],
        events: list[LinkEvent],
    ) -> LinkFeedback:
        n = len(self._motors)
        position = np.full(n, np.nan)
        velocity = np.full(n, np.nan)
        torque = np.full(n, np.nan)
        temperature = np.full(n, np.nan)
        errors: list[int | None] = [None] * n
        if received:
            motors = np.array([index for index, _ in received], dtype=np.intp)
            raw = b"".join(payload.ljust(8, b"\0") for _, payload in received)
            frames = np.frombuffer(raw, dtype=np.uint8).reshape(len(received), 8)
            pvt, temperature[motors] = decode_replies(frames, motors, self._reply_table)
            position[motors], velocity[motors], torque[motors] = pvt
            extended = self._reply_table.extended
            for (index, payload) in received:
                if extended[index]:
                    errors[index] = payload[7]
        return LinkFeedback(
            self._names, position, velocity, torque, temperature, tuple(errors),
            np.asarray(timed_out, dtype=np.bool_), addressed, tuple(events),
        )
