"""hb50's ``JointCommand`` read back from bytes its own rules refused, so the bridge can name why.

Where it sits: :mod:`jointbus.robots.hb50.bridge`, used by the bridge node on a malformed-payload
event of ``/hb50/joint_command``. ``JointCommand.from_cdr`` applies the message's wire rules, so a
NaN, a negative gain or a short array never becomes a ``JointCommand`` and reaches the bridge only
as a :class:`~jointbus.bus.MalformedPayloadEvent` carrying the bytes. :func:`decode_unchecked`
reads those bytes into an :class:`UncheckedJointCommand` — the same CDR layout, built without any
check — and the bridge's :class:`~jointbus.nodes.safety.command_check.CommandCheck` (with
:data:`HB50_COMMAND_FIELDS`) accepts it, so such a sample is refused with the same named error
(source node, joint, index, field, value) as one that decoded. Why a mirror class rather than a
flag on the decoder: the codec stays strict for everyone else, and the command check, which holds
for any object with these fields, is the only judge of these bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Final

from jointbus.codec import cdr
from jointbus.codec.wire import BoolSeq, Float32Seq, String, StringSeq
from jointbus.messages.std_msgs import Header
from jointbus.nodes.safety.command_check import ImpedanceFields
from jointbus.robots.hb50.messages import JointCommand

__all__ = ["HB50_COMMAND_FIELDS", "UncheckedJointCommand", "decode_unchecked"]

#: Where hb50's ``JointCommand`` keeps each quantity of the impedance law (``ki`` is reserved:
#: bounded to float32 range, not applied).
HB50_COMMAND_FIELDS: Final = ImpedanceFields(
    JointCommand.TYPE_NAME,
    position="t_pos",
    velocity="t_vel",
    effort="t_trq",
    reserved=("ki",),
    float32=True,
)


@dataclass(frozen=True, slots=True)
class UncheckedJointCommand:
    """A ``JointCommand``'s wire content exactly as sent: same fields, same CDR layout, no checks.

    Only for reading (and, in tests, writing) samples the message's own rules refuse; see the
    module docstring. Units as in :class:`~jointbus.robots.hb50.messages.JointCommand`.
    """

    TYPE_NAME: ClassVar[str] = JointCommand.TYPE_NAME
    header: Header = field(default_factory=Header)
    source_node: String = ""
    name: StringSeq = ()
    kp: Float32Seq = ()  # N·m/rad
    ki: Float32Seq = ()
    kd: Float32Seq = ()  # N·m·s/rad
    t_pos: Float32Seq = ()  # rad
    t_vel: Float32Seq = ()  # rad/s
    t_trq: Float32Seq = ()  # N·m
    brake: BoolSeq = ()


def decode_unchecked(payload: bytes | bytearray | memoryview) -> UncheckedJointCommand:
    """``payload`` (CDR with its encapsulation header) as an :class:`UncheckedJointCommand`;
    :class:`~jointbus.codec.DecodeError` when the bytes are not even that layout."""
    decoded: UncheckedJointCommand = cdr.decode(UncheckedJointCommand, payload)
    return decoded
