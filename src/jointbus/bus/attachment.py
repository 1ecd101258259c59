"""The per-sample Zenoh attachment: rmw_zenoh's sequence number, source time and publisher GID.

Where it sits: :mod:`jointbus.bus`, written by the Zenoh publisher side and read by the receive
path of :mod:`jointbus.bus.zenoh_transport` and by the recorder. The payload stays pure CDR; what a
receiver needs to count gaps and measure latency travels beside it in the 33 bytes rmw_zenoh
writes (Jazzy ≥ 0.2.4, Kilted, Rolling; zenoh-ext serialisation of an int64, an int64 and a
16-byte array)::

    offset  size  field
    0       8     sequence number   (int64 LE; rmw_zenoh counts from 1, some tools from 0)
    8       8     source timestamp  (int64 LE, ns since the Unix epoch when the send began)
    16      1     0x10              (length of the GID that follows)
    17      16    publisher GID     (the XXH3-128 of its graph token, see jointbus.bus.ros_graph)

ROS 2 subscribers drop samples without it, so jointbus attaches it to every sample, history replies
included. Receivers count a gap when a publisher's sequence number skips, and measure latency as
receive wall time minus source time (meaningful on one host, or between hosts with synchronised
clocks). Older Jazzy builds (0.2.0–0.2.3) wrote a different, labelled format: not read here.
"""

from __future__ import annotations

import struct
from typing import Final, NamedTuple

#: Length byte of the GID (rmw's GID storage size).
GID_SIZE: Final = 16
_RECORD: Final = struct.Struct("<qqB16s")
#: The whole record, for the receive hot path: ``unpack(raw)`` once ``len(raw) == SIZE`` and
#: ``raw[16] == GID_SIZE`` (no object built).
FIELDS: Final = _RECORD
#: Size of the attachment in bytes.
SIZE: Final = _RECORD.size


class Attachment(NamedTuple):
    """The decoded attachment of one sample (a named tuple: built per received sample, and a
    tuple is the cheapest immutable record Python makes). ``gid`` is the GID as an int
    (little-endian bytes)."""

    seq: int
    source_wall_ns: int
    gid: int


def pack(seq: int, wall_ns: int, gid: bytes) -> bytes:
    """Encode an attachment (33 bytes); ``gid`` is the publisher's 16-byte GID."""
    return _RECORD.pack(seq, wall_ns, GID_SIZE, gid)


def is_valid(data: bytes | None) -> bool:
    """True when ``data`` is an rmw_zenoh attachment this module can read."""
    return data is not None and len(data) == SIZE and data[16] == GID_SIZE


def unpack(data: bytes | None) -> Attachment | None:
    """Decode an attachment; None when absent or not in rmw_zenoh's 33-byte form."""
    if data is None or not is_valid(data):
        return None
    seq, wall_ns, _, gid = _RECORD.unpack(data)
    return Attachment(seq, wall_ns, int.from_bytes(gid, "little"))


def gid_int(gid: bytes) -> int:
    """A 16-byte GID as the int :class:`Attachment` and discovery records use."""
    return int.from_bytes(gid, "little")


__all__ = ["FIELDS", "GID_SIZE", "SIZE", "Attachment", "gid_int", "is_valid", "pack", "unpack"]
