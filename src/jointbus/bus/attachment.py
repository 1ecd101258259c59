"""The per-message Zenoh attachment: who sent it, its sequence number and when.

Where it sits: :mod:`jointbus.bus`, written by the Zenoh publisher side and read by the receive
path of :mod:`jointbus.bus.zenoh_transport`. The payload stays pure CDR (what any ROS 2 tool
expects); everything jointbus needs to count gaps and measure latency travels beside it in a fixed
36-byte little-endian record::

    offset  size  field
    0       4     magic b"JB\\x01\\x00" (format version 1)
    4       8     publisher gid        (u64, also in the discovery token)
    12      8     sequence number      (u64, 1 for the first message of the publisher)
    20      8     source monotonic ns  (i64, publish time on the sender's monotonic clock)
    28      8     source wall ns       (i64, ns since the Unix epoch when the send began)

Receivers count a gap when a publisher's sequence number skips, and measure latency as receive wall
time minus source wall time (meaningful on one host, or between hosts with synchronised clocks).
"""

from __future__ import annotations

import struct
from typing import Final, NamedTuple

MAGIC: Final = b"JB\x01\x00"
_RECORD: Final = struct.Struct("<4sQQqq")
#: The record after its magic (gid, seq, source mono ns, source wall ns): ``unpack_from(data, 4)``
#: once ``data`` is checked, for the receive hot path (no object built).
FIELDS: Final = struct.Struct("<QQqq")
#: Size of the attachment in bytes.
SIZE: Final = _RECORD.size


class Attachment(NamedTuple):
    """The decoded attachment of one message (a named tuple: built on every received sample, and
    a tuple is the cheapest immutable record Python makes)."""

    gid: int
    seq: int
    source_mono_ns: int
    source_wall_ns: int


def pack(gid: int, seq: int, mono_ns: int, wall_ns: int) -> bytes:
    """Encode an attachment (36 bytes)."""
    return _RECORD.pack(MAGIC, gid, seq, mono_ns, wall_ns)


def unpack(data: bytes | None) -> Attachment | None:
    """Decode an attachment; None when absent or not a jointbus attachment (e.g. raw Zenoh)."""
    if data is None or len(data) != SIZE:
        return None
    if data[:4] != MAGIC:
        return None
    return Attachment._make(FIELDS.unpack_from(data, 4))


__all__ = ["FIELDS", "MAGIC", "SIZE", "Attachment", "pack", "unpack"]
