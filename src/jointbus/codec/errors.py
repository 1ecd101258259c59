"""Typed errors of the wire layer.

Where it sits: :mod:`jointbus.codec`, imported by everything that encodes or decodes. Untrusted
bytes must only ever raise :class:`DecodeError` (never ``IndexError`` or ``struct.error``), so a
subscriber can count and report a bad payload and keep running.
"""

from __future__ import annotations


class CodecError(Exception):
    """Base class of every wire-layer error."""


class SchemaError(CodecError):
    """A message class cannot be described on the wire (a programming error, found at import)."""


class EncodeError(CodecError, ValueError):
    """A value cannot be represented in its wire type (out of range, wrong Python type)."""

    def __init__(self, type_name: str, field: str, value: object, expected: str) -> None:
        self.type_name = type_name
        self.field = field
        self.value = value
        self.expected = expected
        super().__init__(f"{type_name}: field {field!r} = {value!r} cannot be encoded: {expected}")


class DecodeError(CodecError, ValueError):
    """Bytes that are not a valid CDR encoding of the expected type.

    ``offset`` is the byte offset into the payload (encapsulation header included) where decoding
    failed, so a hex dump points at the culprit.
    """

    def __init__(self, type_name: str, offset: int, reason: str) -> None:
        self.type_name = type_name
        self.offset = offset
        self.reason = reason
        super().__init__(f"cannot decode {type_name} at byte {offset}: {reason}")
