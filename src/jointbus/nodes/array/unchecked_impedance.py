"""The generic ``JointImpedance`` read back from bytes its own rules refused, to name why.

Where it sits: :mod:`jointbus.nodes.array`, used by the array node on a malformed-payload event of
``/<ns>/joint_impedance`` (through :meth:`~jointbus.nodes.array.ArrayNode.refusing_at_decode`, the
mechanism every impedance input shares; hb50's ``JointCommand`` has its own mirror in
:mod:`jointbus.robots.hb50.bridge.unchecked_command`). ``JointImpedance.from_cdr`` runs the
message's constructor, so a NaN, a negative gain or a short array never becomes a
``JointImpedance`` and reaches the node only as a :class:`~jointbus.bus.MalformedPayloadEvent`
carrying the bytes. :func:`decode_unchecked_impedance` reads those bytes into an
:class:`UncheckedJointImpedance` — the same CDR layout, built without any check — and the node's
:class:`~jointbus.nodes.safety.command_check.CommandCheck` judges it, so such a sample is refused
with the same named error (source node, joint, index, field, value) as one that decoded. Why a
mirror class rather than a flag on the decoder: the codec stays strict for everyone else, and a
mirror is never mistaken for a checked ``JointImpedance`` (it is not one).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from jointbus.codec import cdr
from jointbus.codec.wire import BoolSeq, Float64Seq, String, StringSeq
from jointbus.messages.joint_impedance import JointImpedance
from jointbus.messages.std_msgs import Header

__all__ = ["UncheckedJointImpedance", "decode_unchecked_impedance"]


@dataclass(frozen=True, slots=True)
class UncheckedJointImpedance:
    """A ``JointImpedance``'s wire content exactly as sent: same fields, same CDR layout, no checks.

    Only for reading (and, in tests, writing) samples the message's own rules refuse; see the
    module docstring. Units as in :class:`~jointbus.messages.joint_impedance.JointImpedance`.
    """

    TYPE_NAME: ClassVar[str] = JointImpedance.TYPE_NAME
    header: Header = field(default_factory=Header)
    source_node: String = ""
    name: StringSeq = ()
    position: Float64Seq = ()  # rad or m
    velocity: Float64Seq = ()  # rad/s or m/s
    effort: Float64Seq = ()  # N·m or N
    kp: Float64Seq = ()  # N·m/rad
    kd: Float64Seq = ()  # N·m·s/rad
    brake: BoolSeq = ()


def decode_unchecked_impedance(payload: bytes | bytearray | memoryview) -> UncheckedJointImpedance:
    """``payload`` (CDR with its encapsulation header) as an :class:`UncheckedJointImpedance`;
    :class:`~jointbus.codec.DecodeError` when the bytes are not even that layout."""
    decoded: UncheckedJointImpedance = cdr.decode(UncheckedJointImpedance, payload)
    return decoded
