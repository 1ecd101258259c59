"""Wire encodings: ROS 2-compatible CDR and ``.msg`` schemas for every jointbus message.

Where it sits: above :mod:`jointbus.math`, below :mod:`jointbus.messages`. It knows no concrete
message; it reads the wire annotations a message class declares (see :mod:`jointbus.codec.wire`).

:func:`encode` / :func:`decode` / :func:`codec_for` use the per-class codec (stable-layout fast path
with the generic engine behind it); :mod:`jointbus.codec.cdr` is the generic reference engine.
The fast path (:mod:`jointbus.codec.layout`) runs on an optional compiled core
(:mod:`jointbus.codec.accel`) or in pure Python, and builds classes that declare ``WIRE_RULES``
(:mod:`jointbus.codec.rules`) without their constructors. Why it is hand-written at all: the
500 Hz messages must round-trip ≥ 8× faster than rosbags; the measured numbers are in the
docstring of :mod:`jointbus.codec.layout` and in ``bench/bench_codec.py``.
"""

from jointbus.codec.codec import Codec, codec_for, decode, encode
from jointbus.codec.errors import CodecError, DecodeError, EncodeError, SchemaError
from jointbus.codec.msgdef import msgdef_bundle
from jointbus.codec.schema import FieldSchema, MessageSchema, schema_of

__all__ = [
    "Codec",
    "CodecError",
    "DecodeError",
    "EncodeError",
    "FieldSchema",
    "MessageSchema",
    "SchemaError",
    "codec_for",
    "decode",
    "encode",
    "msgdef_bundle",
    "schema_of",
]
