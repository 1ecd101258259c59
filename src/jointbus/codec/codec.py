"""The per-class CDR codec: stable-layout fast path first, the generic engine for everything else.

Where it sits: :mod:`jointbus.codec`, above :mod:`jointbus.codec.cdr` (the reference engine) and
:mod:`jointbus.codec.layout` (the fast path); :class:`jointbus.messages.base.Message` calls it for
``to_cdr`` / ``from_cdr``. :func:`codec_for` returns one cached :class:`Codec` per message class.

How the two engines share the work, and why the result is always the generic engine's:

- the first time a layout (strings + sequence lengths) is seen, the generic engine does the work;
  the second time, a :class:`~jointbus.codec.layout.Layout` is compiled from that message and
  checked against the generic engine's bytes, then used for every later message of that layout
  (run by the compiled core when it is built, :mod:`jointbus.codec.accel`, else in Python);
- a message or payload the cached layouts do not describe, and anything the fast path cannot pack
  or unpack (a value out of range, a constructor that rejects the content, a truncated payload),
  or a message class's ``WIRE_RULES`` (:mod:`jointbus.codec.rules`) reject,
  goes to the generic engine, which returns the bytes / object or raises the precise
  :class:`~jointbus.codec.errors.EncodeError` / :class:`~jointbus.codec.errors.DecodeError`.

Why the fast path exists at all (measured, 12-joint ``BridgeData`` / ``JointCommand`` round trip on
the dev VM): generic engine ≈ 130 µs, rosbags ≈ 26 µs, layouts with the compiled core ≈ 1.4–1.5 µs
(≥ 15×, the issue's goal; msgspec msgpack ≈ 2.4 µs), layouts in pure Python ≈ 10–11 µs.

Caches are bounded per class (:data:`MAX_LAYOUTS`), so a stream of ever-different names from an
untrusted peer costs at most that many layouts.

A codec is made when a publisher or subscription of its class is (the bus asks for its encoder or
decoder then), and it prepares then what its first use would otherwise do: the schemas of the
nested message classes (their annotations evaluated, ``typing.get_type_hints``) and their wire
rules. Why: that first use came in a real-time loop. In the bridge's 500 Hz loop, the cycle after
a recorder joined built and encoded three message types it had not published before (nobody
listened): 6.9 ms of CPU in one 2 ms cycle, two slots dropped; a first generic encode of
``ActuatorArrayData`` cost 1.26 ms cold and 0.24 ms with its classes prepared (2026-12-07).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Final

from jointbus.codec import accel, cdr
from jointbus.codec.errors import EncodeError, SchemaError
from jointbus.codec.layout import (
    MISS,
    Layout,
    LayoutKey,
    LayoutMismatchError,
    compile_layout,
    key_of,
)
from jointbus.codec.rules import rules_of
from jointbus.codec.schema import MessageSchema, schema_of

#: Layouts kept per message class (a robot uses one or two; more means varying content).
MAX_LAYOUTS: Final = 16
#: Keys remembered as "seen once" per class before a layout is compiled on the second sighting.
MAX_SEEN: Final = 64

Buffer = bytes | bytearray | memoryview


class Codec:
    """Encoder and decoder of one message class (``encode(obj) -> bytes``, ``decode(data)``).

    ``fast=False`` gives a codec that always uses the generic engine (for comparisons and
    debugging); ``compiled=False`` one whose layouts run in Python even when the compiled core is
    available (``compiled=True`` requires the core). All produce the same bytes and objects.
    """

    __slots__ = (
        "_by_key",
        "_by_size",
        "_dec_last",
        "_enc_last",
        "_lock",
        "_seen",
        "cls",
        "compiled",
        "fast",
        "schema",
    )

    def __init__(
        self, cls: type[Any], *, fast: bool = True, compiled: bool | None = None
    ) -> None:
        if compiled and not accel.AVAILABLE:
            raise RuntimeError("the compiled core (_cdr_accel) is not built or is disabled")
        self.cls = cls
        self.schema = schema_of(cls)
        self.fast = fast
        self.compiled = accel.AVAILABLE if compiled is None else compiled
        self._by_key: dict[LayoutKey, Layout] = {}
        self._by_size: dict[int, list[Layout]] = {}
        self._seen: dict[LayoutKey, None] = {}
        self._enc_last: Layout | None = None
        self._dec_last: Layout | None = None
        self._lock = threading.Lock()  # guards the caches on the (slow) learning path only
        _prepare(self.schema)

    # -- encode -----------------------------------------------------------------------------------
    def encode(self, obj: object) -> bytes:
        """CDR bytes of ``obj``; :class:`~jointbus.codec.errors.EncodeError` if not encodable."""
        layout = self._enc_last
        if layout is not None:
            try:
                data = layout.encode(obj)
            except Exception:  # the generic engine below gives the precise answer
                data = None
            if data is not None:
                return data
        return self._encode_slow(obj)

    def _encode_slow(self, obj: object) -> bytes:
        data = cdr.encode(obj)
        if self.fast and type(obj) is self.cls:
            layout = self._learn(obj, data)
            if layout is not None:
                self._enc_last = layout
        return data

    # -- decode -----------------------------------------------------------------------------------
    def decode(self, data: Buffer) -> Any:
        """The message in ``data``; :class:`~jointbus.codec.errors.DecodeError` if malformed."""
        layout = self._dec_last
        if layout is not None:
            try:
                result = layout.decode(data)
            except Exception:  # invalid content: the generic engine names the offset
                return self._decode_slow(data, try_layouts=False)
            if result is not MISS:
                return result
        return self._decode_slow(data, try_layouts=True)

    def _decode_slow(self, data: Buffer, *, try_layouts: bool) -> Any:
        if try_layouts and self._by_size:
            size = data.nbytes if isinstance(data, memoryview) else len(data)
            for candidate in self._by_size.get(size, ()):
                try:
                    result = candidate.decode(data)
                except Exception:  # let the generic engine report it
                    break
                if result is not MISS:
                    self._dec_last = candidate
                    return result
        obj = cdr.decode(self.cls, data)
        if self.fast:
            layout = self._learn(obj, None)
            if layout is not None:
                self._dec_last = layout
        return obj

    # -- layout cache -----------------------------------------------------------------------------
    def _learn(self, obj: object, data: bytes | None) -> Layout | None:
        """The cached layout of ``obj``, compiling it on the second sighting of its key."""
        try:
            key = key_of(self.schema, obj)
            hash(key)
        except TypeError:  # an unhashable value (e.g. a list where a tuple belongs): no layout
            return None
        with self._lock:
            return self._learn_locked(key, obj, data)

    def _learn_locked(self, key: LayoutKey, obj: object, data: bytes | None) -> Layout | None:
        layout = self._by_key.get(key)
        if layout is not None:
            return layout
        if key not in self._seen:
            if len(self._seen) >= MAX_SEEN:
                del self._seen[next(iter(self._seen))]
            self._seen[key] = None
            return None
        try:
            layout = compile_layout(
                self.schema,
                obj,
                cdr.encode(obj) if data is None else data,
                compiled=self.compiled,
            )
        except (LayoutMismatchError, EncodeError):
            return None
        except (ValueError, TypeError):
            # The compiled core is checked by decoding the sample, which runs the class's own
            # validation: a sample built unchecked (``topic pub --unchecked``: a NaN, a negative
            # gain) is refused there. Its bytes are still the generic engine's; it just seeds no
            # layout (a later valid message of the same layout will).
            return None
        if len(self._by_key) >= MAX_LAYOUTS:
            self._forget(next(iter(self._by_key.values())))
        self._by_key[key] = layout
        self._by_size.setdefault(layout.size, []).append(layout)
        return layout

    def _forget(self, layout: Layout) -> None:
        del self._by_key[layout.key]
        same_size = self._by_size[layout.size]
        same_size.remove(layout)
        if not same_size:
            del self._by_size[layout.size]
        if self._enc_last is layout:
            self._enc_last = None
        if self._dec_last is layout:
            self._dec_last = None

    @property
    def layouts(self) -> tuple[Layout, ...]:
        """The compiled layouts currently cached (oldest first)."""
        return tuple(self._by_key.values())


_CODECS: dict[type[Any], Codec] = {}


def _prepare(schema: MessageSchema) -> None:
    """Evaluate the nested classes' schemas and validate every class's wire rules now (module
    docstring: not in the first encode). A class that cannot be described is left for that
    encode or decode, which reports it as it always did."""
    with contextlib.suppress(SchemaError):
        for each in (schema, *schema.dependencies()):
            rules_of(each.cls)


def codec_for(cls: type[Any]) -> Codec:
    """The (cached) codec of a message class."""
    codec = _CODECS.get(cls)
    if codec is None:
        codec = _CODECS[cls] = Codec(cls)
    return codec


def encode(obj: object) -> bytes:
    """CDR bytes of a message object (little-endian, encapsulation header included)."""
    return codec_for(type(obj)).encode(obj)


def decode(cls: type[Any], data: Buffer) -> Any:
    """The ``cls`` message in CDR ``data``; raises only :class:`~jointbus.codec.DecodeError`."""
    return codec_for(cls).decode(data)
