"""Wire types: how a message field is laid out in CDR and spelled in a ROS 2 ``.msg`` file.

Where it sits: the lowest part of :mod:`jointbus.codec`. It knows nothing of any concrete message;
message classes (in :mod:`jointbus.messages`) annotate their dataclass fields with the aliases
defined here, and :mod:`jointbus.codec.schema` turns those annotations into a schema that both the
CDR engine and the ``.msg`` renderer read. One declaration per field is therefore the single source
of truth for the Python type, the wire layout and the published definition: they cannot drift.

Python value conventions (chosen so that messages are immutable and compare by value):

- ``bool`` / integer / float primitives are Python ``bool`` / ``int`` / ``float``;
- ``string`` is ``str`` (UTF-8 on the wire);
- a sequence or fixed array of numbers, bools or strings is a ``tuple``;
- ``uint8[]`` / ``byte[]`` payloads are ``bytes``;
- nested messages are message objects, sequences of them tuples of message objects.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Annotated, Final


class Primitive(enum.Enum):
    """A ROS 2 primitive type. The value is its ``.msg`` spelling."""

    BOOL = "bool"
    BYTE = "byte"
    CHAR = "char"
    INT8 = "int8"
    UINT8 = "uint8"
    INT16 = "int16"
    UINT16 = "uint16"
    INT32 = "int32"
    UINT32 = "uint32"
    INT64 = "int64"
    UINT64 = "uint64"
    FLOAT32 = "float32"
    FLOAT64 = "float64"
    STRING = "string"

    @property
    def struct_code(self) -> str:
        """The :mod:`struct` format character (little-endian use); ``""`` for ``string``."""
        return _STRUCT_CODES[self]

    @property
    def size(self) -> int:
        """Size in bytes on the wire (and its CDR alignment); 0 for ``string``."""
        return _SIZES[self]


_STRUCT_CODES: Final = {
    Primitive.BOOL: "?",
    Primitive.BYTE: "B",
    Primitive.CHAR: "B",
    Primitive.INT8: "b",
    Primitive.UINT8: "B",
    Primitive.INT16: "h",
    Primitive.UINT16: "H",
    Primitive.INT32: "i",
    Primitive.UINT32: "I",
    Primitive.INT64: "q",
    Primitive.UINT64: "Q",
    Primitive.FLOAT32: "f",
    Primitive.FLOAT64: "d",
    Primitive.STRING: "",
}
_SIZES: Final = {
    Primitive.BOOL: 1,
    Primitive.BYTE: 1,
    Primitive.CHAR: 1,
    Primitive.INT8: 1,
    Primitive.UINT8: 1,
    Primitive.INT16: 2,
    Primitive.UINT16: 2,
    Primitive.INT32: 4,
    Primitive.UINT32: 4,
    Primitive.INT64: 8,
    Primitive.UINT64: 8,
    Primitive.FLOAT32: 4,
    Primitive.FLOAT64: 8,
    Primitive.STRING: 0,
}

#: Inclusive integer ranges, used to reject values that would not fit before anything is encoded.
INT_RANGES: Final = {
    Primitive.BYTE: (0, 0xFF),
    Primitive.CHAR: (0, 0xFF),
    Primitive.INT8: (-(2**7), 2**7 - 1),
    Primitive.UINT8: (0, 2**8 - 1),
    Primitive.INT16: (-(2**15), 2**15 - 1),
    Primitive.UINT16: (0, 2**16 - 1),
    Primitive.INT32: (-(2**31), 2**31 - 1),
    Primitive.UINT32: (0, 2**32 - 1),
    Primitive.INT64: (-(2**63), 2**63 - 1),
    Primitive.UINT64: (0, 2**64 - 1),
}

#: Largest finite float32 magnitude; a float32 field holding more would become ``inf`` on the wire.
FLOAT32_MAX: Final = 3.4028234663852886e38


@dataclass(frozen=True, slots=True)
class Seq:
    """A sequence field: ``T[]`` (unbounded) or ``T[N]`` (fixed length ``N``) in ``.msg``.

    ``element`` is a :class:`Primitive` or a message class (anything with a dataclass schema).
    """

    element: object
    fixed_length: int | None = None


# --- Annotated aliases used by message classes -------------------------------------------------
Bool = Annotated[bool, Primitive.BOOL]
Byte = Annotated[int, Primitive.BYTE]
Int8 = Annotated[int, Primitive.INT8]
UInt8 = Annotated[int, Primitive.UINT8]
Int16 = Annotated[int, Primitive.INT16]
UInt16 = Annotated[int, Primitive.UINT16]
Int32 = Annotated[int, Primitive.INT32]
UInt32 = Annotated[int, Primitive.UINT32]
Int64 = Annotated[int, Primitive.INT64]
UInt64 = Annotated[int, Primitive.UINT64]
Float32 = Annotated[float, Primitive.FLOAT32]
Float64 = Annotated[float, Primitive.FLOAT64]
String = Annotated[str, Primitive.STRING]

BoolSeq = Annotated[tuple[bool, ...], Seq(Primitive.BOOL)]
ByteSeq = Annotated[bytes, Seq(Primitive.BYTE)]
UInt8Seq = Annotated[bytes, Seq(Primitive.UINT8)]
Int8Seq = Annotated[tuple[int, ...], Seq(Primitive.INT8)]
UInt16Seq = Annotated[tuple[int, ...], Seq(Primitive.UINT16)]
Int32Seq = Annotated[tuple[int, ...], Seq(Primitive.INT32)]
UInt32Seq = Annotated[tuple[int, ...], Seq(Primitive.UINT32)]
Float32Seq = Annotated[tuple[float, ...], Seq(Primitive.FLOAT32)]
Float64Seq = Annotated[tuple[float, ...], Seq(Primitive.FLOAT64)]
StringSeq = Annotated[tuple[str, ...], Seq(Primitive.STRING)]
