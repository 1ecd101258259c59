"""Wire encodings: ROS 2-compatible CDR and ``.msg`` schemas for every jointbus message.

Where it sits: above :mod:`jointbus.math`, below :mod:`jointbus.messages`. It knows no concrete
message; it reads the wire annotations a message class declares (see :mod:`jointbus.codec.wire`).

:func:`encode` / :func:`decode` / :func:`codec_for` use the per-class codec (stable-layout fast path
with the generic engine behind it); :mod:`jointbus.codec.cdr` is the generic reference engine.
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
