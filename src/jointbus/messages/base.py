"""The base class of every jointbus message.

Where it sits: :mod:`jointbus.messages`, directly above :mod:`jointbus.codec`. A message is a
frozen, slotted dataclass whose fields carry wire annotations (:mod:`jointbus.codec.wire`) and whose
``TYPE_NAME`` is its ROS 2 name. Subclassing :class:`Message` gives it ``to_cdr``, ``from_cdr`` and
``msgdef``, all derived from that one declaration, so the Python type, the bytes and the published
``.msg`` definition cannot disagree.

Immutability is the contract the bus relies on: the in-process transport hands the *same* object to
every subscriber, so no subscriber can change what another one sees.
"""

from __future__ import annotations

from typing import Any, ClassVar, Self

from jointbus.codec import codec_for, msgdef_bundle, schema_of


class Message:
    """Mixin for message dataclasses: CDR encoding, decoding and the ``.msg`` definition."""

    __slots__ = ()

    TYPE_NAME: ClassVar[str]
    MSG_CONSTANTS: ClassVar[tuple[tuple[str, Any, int | float | str], ...]] = ()
    #: ``(field, expected)`` for each text field its receiving node refuses empty, every time.
    #: The class itself accepts it empty (a decoded sample must reach the node's check to be
    #: reported there), so a sender that is told nothing would publish commands the node never
    #: applies: ``topic pub`` refuses such VALUES up front, naming the field and ``expected``.
    RECEIVER_REQUIRES: ClassVar[tuple[tuple[str, str], ...]] = ()

    def to_cdr(self) -> bytes:
        """CDR bytes (XCDR1 little-endian, encapsulation header included), as ROS 2 sends them."""
        return codec_for(type(self)).encode(self)

    @classmethod
    def from_cdr(cls, data: bytes | bytearray | memoryview) -> Self:
        """Decode CDR bytes; raises :class:`jointbus.codec.DecodeError` (naming the offset) only."""
        result: Self = codec_for(cls).decode(data)
        return result

    @classmethod
    def msgdef(cls) -> str:
        """The ROS 2 ``.msg`` text with its dependencies, as MCAP ``ros2msg`` stores it."""
        return msgdef_bundle(schema_of(cls))
