"""Player's ACK / NACK, made specific: the answer of an actuator array to a request or command.

Where it sits: :mod:`jointbus.messages.actarray`, beside :mod:`~.requests` and :mod:`~.commands`;
the array node (:mod:`jointbus.nodes.array`) answers every request and acknowledged command with
one :class:`ActuatorReply`, and the ``bus://`` driver turns a NACK back into the very error the
served array raised (:mod:`jointbus.drivers.bus.errors_on_wire`).

Player answered a request with a bare ACK or NACK. A NACK here says *why*, in the fields the
driver layer's errors carry, so a remote caller learns what a local one would:

- ``error``: the error's class name (``RequestRejected``, ``LimitError``, ``UnknownJointError``,
  ``LengthMismatchError``, ``NonFiniteError``, ``ValidationError``, ``JointOrderError``,
  ``SourceNotAllowedError``, ``DriverClosedError``, ...); empty for an ACK.
- ``reason``: in every NACK, the :class:`~jointbus.drivers.errors.RejectReason` member name
  (``POWERED_OFF``, ``OUT_OF_RANGE`` for a ``LimitError``, ``UNKNOWN_JOINT``, ``INVALID`` for
  another message-rule refusal, ``DRIVER_FAULT``, ...); empty for an ACK.
- ``type_name``, ``field``, ``value`` (the offending value's ``repr``), ``expected``: as in
  :class:`~jointbus.messages.errors.ValidationError`; ``detail`` for ``RequestRejected``.
- ``joint`` / ``index``: the joint named by the error (name and index) — one entry each, or empty
  when the error is not about one joint ("not reported" is an empty list, never ``-1``).
- ``text``: the error's full message, exactly as ``str(error)`` printed it on the server.
- ``saturated_*``: for an ACKed command, every value the array clamped (joint, index, field,
  requested, applied), one entry per clamp, as :class:`~jointbus.drivers.limits.Saturation`.
- ``state``: for an ACK, the array read right after the call (one entry; empty in a NACK). A
  remote caller's next ``read()`` then reflects its own call — a move is ``MOVING``, power is on —
  instead of a sample published before the call was applied.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from jointbus.codec.wire import Bool, Float64Seq, Int32Seq, String, StringSeq
from jointbus.messages.actarray.data import ActuatorArrayData
from jointbus.messages.base import Message
from jointbus.messages.errors import LengthMismatchError, ValidationError

__all__ = ["ActuatorReply"]


@dataclass(frozen=True, slots=True)
class ActuatorReply(Message):
    """ACK (``accepted=True``) or NACK with the reason (see the module docstring)."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/ActuatorReply"
    accepted: Bool = True
    request: String = ""
    error: String = ""
    reason: String = ""
    type_name: String = ""
    field: String = ""
    value: String = ""
    expected: String = ""
    detail: String = ""
    joint: StringSeq = ()
    index: Int32Seq = ()
    text: String = ""
    saturated_joint: StringSeq = ()
    saturated_index: Int32Seq = ()
    saturated_field: StringSeq = ()
    saturated_requested: Float64Seq = ()
    saturated_applied: Float64Seq = ()
    state: tuple[ActuatorArrayData, ...] = ()

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        if type(self.accepted) is not bool:
            raise ValidationError(tn, "accepted", self.accepted, "a bool (True = ACK)")
        if self.accepted and self.error:
            raise ValidationError(tn, "error", self.error, "empty in an ACK")
        if not self.accepted and not self.error:
            raise ValidationError(tn, "error", self.error, "the error's class name in a NACK")
        if type(self.state) is not tuple:
            object.__setattr__(self, "state", tuple(self.state))
        if len(self.state) > 1 or not all(type(d) is ActuatorArrayData for d in self.state):
            raise ValidationError(
                tn, "state", self.state, "at most one ActuatorArrayData (empty: not reported)"
            )
        for name in ("joint", "index"):
            if len(getattr(self, name)) > 1:
                raise LengthMismatchError(
                    tn, name, getattr(self, name), "at most one entry (empty: no joint)"
                )
        count = len(self.saturated_joint)
        for name in (
            "saturated_index",
            "saturated_field",
            "saturated_requested",
            "saturated_applied",
        ):
            if len(getattr(self, name)) != count:
                raise LengthMismatchError(
                    tn, name, getattr(self, name), f"{count} entries, one per saturated_joint"
                )
