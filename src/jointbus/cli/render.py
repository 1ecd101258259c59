"""Show a message to a person (YAML-like text) or to a program (one JSON object per line).

Where it sits: :mod:`jointbus.cli`, used by ``topic echo``; it reads any message object (a frozen
dataclass: wire records, the typed Python-facing classes, the :mod:`jointbus.math` types) and
imports nothing else from jointbus but the field declarations of :mod:`jointbus.codec.wire`.

**Text** (:func:`render_text`) looks like ``ros2 topic echo``: one ``field: value`` per line, nested
messages indented by two spaces, lists of messages as ``- `` items, lists of numbers, strings and
``byte[]`` payloads on one line (``data: [1, 2, 3]``), enum values followed by their name as a
comment (``level: 2 # WARN``). A ``byte[]`` payload (not a ``uint8[]`` of numbers) that is readable
UTF-8 text (a status detail, a JSON document) is shown as that text with a comment saying so
(``data: "{...}" # 30 bytes, JSON``): a list of byte values hides what a person needs to read, and
``topic pub`` turns the text back into the same bytes. Floats are shortened to ``precision``
significant digits (6 by default; ``None`` prints the shortest text that reads back bit for bit).
The text is valid YAML, so a printed message pasted into ``jointbus topic pub`` builds the same
message (exactly so with ``precision=None``): strings that YAML would read as something else are
double-quoted, floats always carry a ``.`` (``1.0e-05``), NaN and infinities are ``.nan``, ``.inf``,
``-.inf``.

**JSON** (:func:`render_json`) is one line per message with every field and full float precision;
``byte[]`` payloads are lists of ints, enums their values. JSON has no NaN or infinity, so those
are the strings ``"nan"``, ``"inf"``, ``"-inf"`` (``jq`` and strict parsers accept the line).

Fields whose names start with ``_`` are implementation details and are not shown.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
import math
import re
import typing
from typing import Any, Final

from jointbus.codec.wire import Primitive, Seq

#: Significant digits of floats in the text form unless told otherwise.
DEFAULT_PRECISION: Final = 6

# A string YAML reads back as the same string when written bare (and that cannot break a flow
# list): starts with a letter or '_', then letters, digits, '_', '.', '/', '-' and single spaces.
_PLAIN = re.compile(r"[A-Za-z_](?:[A-Za-z0-9_./-]| (?=[A-Za-z0-9_./-]))*\Z")
# Words YAML 1.1 reads as booleans or null whatever their case.
_YAML_WORDS: Final = frozenset(
    {"y", "n", "yes", "no", "true", "false", "on", "off", "null", "nan", "inf"}
)


def _fields(obj: Any) -> list[tuple[str, Any]]:
    return [
        (f.name, getattr(obj, f.name))
        for f in dataclasses.fields(obj)
        if not f.name.startswith("_")
    ]


def _is_record(value: object) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def _as_sequence(value: object) -> list[Any] | None:
    """Lists, tuples and numpy arrays as a list; None for anything else."""
    if isinstance(value, list | tuple):
        return list(value)
    tolist = getattr(value, "tolist", None)
    if callable(tolist) and hasattr(value, "shape"):
        result = tolist()
        return result if isinstance(result, list) else None
    return None


# ---- plain data (JSON) -------------------------------------------------------------------------
def to_plain(value: Any) -> Any:
    """``value`` as plain data: dicts in field order, lists, str, int, float, bool, None."""
    if _is_record(value):
        return {name: to_plain(v) for name, v in _fields(value)}
    if isinstance(value, enum.Enum):
        inner = value.value
        return inner if isinstance(inner, int | float | str | bool) else value.name
    if isinstance(value, bytes | bytearray | memoryview):
        return list(bytes(value))
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    items = _as_sequence(value)
    if items is not None:
        return [to_plain(v) for v in items]
    item = getattr(value, "item", None)  # a numpy scalar
    if callable(item):
        return to_plain(item())
    return repr(value)


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


def render_json(msg: Any) -> str:
    """One line of strict JSON with every field of ``msg`` (see the module docstring)."""
    return json.dumps(_json_safe(to_plain(msg)), ensure_ascii=False, allow_nan=False)


# ---- text (YAML-like) --------------------------------------------------------------------------
def format_float(value: float, precision: int | None = DEFAULT_PRECISION) -> str:
    """A float as YAML reads it back as a float: ``1.5``, ``1.0e-05``, ``.nan``, ``-.inf``."""
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value) if precision is None else format(value, f".{precision}g")
    if "e" in text:
        mantissa, exponent = text.split("e")
        if "." not in mantissa:
            mantissa += ".0"
        if exponent[0] not in "+-":
            exponent = "+" + exponent
        return f"{mantissa}e{exponent}"
    return text if "." in text else text + ".0"


def _escape(char: str) -> str:
    code = ord(char)
    named = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}
    if char in named:
        return named[char]
    printable = (
        0x20 <= code <= 0x7E
        or 0xA0 <= code <= 0xD7FF
        or (0xE000 <= code <= 0xFFFD and code != 0xFEFF)
        or code >= 0x10000
    )
    if printable:
        return char
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def format_string(value: str) -> str:
    """A string as YAML reads it back unchanged: bare when safe, else double-quoted."""
    if value == "":
        return "''"
    if _PLAIN.match(value) and value.lower() not in _YAML_WORDS:
        return value
    return '"' + "".join(_escape(c) for c in value) + '"'


def _scalar(value: Any, precision: int | None) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return _scalar(to_plain(value), precision)
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return format_float(value, precision)
    if isinstance(value, str):
        return format_string(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return "[" + ", ".join(str(b) for b in bytes(value)) + "]"
    items = _as_sequence(value)
    if items is not None:
        return "[" + ", ".join(_scalar(v, precision) for v in items) + "]"
    item = getattr(value, "item", None)
    if callable(item):
        return _scalar(item(), precision)
    return format_string(repr(value))


def readable_text(data: bytes) -> str | None:
    """``data`` as text when it is non-empty UTF-8 of printable characters (tabs and newlines
    allowed), else None."""
    if not data:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not all(c.isprintable() or c in "\t\n\r" for c in text):
        return None
    return text


def _is_json_document(text: str) -> bool:
    if not text.lstrip().startswith(("{", "[")):
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _comment(value: Any) -> str:
    if isinstance(value, enum.Enum):
        return f"  # {value.name}"
    return ""


@functools.cache
def _byte_payload_fields(cls: type) -> frozenset[str]:
    """Fields of ``cls`` declared ``byte[]`` (opaque payloads), as opposed to ``uint8[]``
    (numbers, e.g. temperatures in °C): only payloads may be shown as text."""
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except Exception:  # a class whose annotations cannot be resolved: no payload fields
        return frozenset()
    return frozenset(
        name
        for name, hint in hints.items()
        if any(
            isinstance(meta, Seq) and meta.element is Primitive.BYTE
            for meta in getattr(hint, "__metadata__", ())
        )
    )


def _payload_line(name: str, value: Any) -> str | None:
    """``name: "text"  # N bytes, JSON`` for a readable byte payload, else None."""
    if not isinstance(value, bytes | bytearray | memoryview):
        return None
    text = readable_text(bytes(value))
    if text is None:
        return None
    kind = "JSON" if _is_json_document(text) else "UTF-8 text"
    return f"{name}: {format_string(text)}  # {len(value)} bytes, {kind}"


def _record_lines(obj: Any, precision: int | None) -> list[str]:
    lines: list[str] = []
    cls: type = type(obj)
    payloads = _byte_payload_fields(cls)
    for name, value in _fields(obj):
        payload = _payload_line(name, value) if name in payloads else None
        lines.extend([payload] if payload is not None else _entry_lines(name, value, precision))
    return lines


def _entry_lines(name: str, value: Any, precision: int | None) -> list[str]:
    if _is_record(value):
        inner = _record_lines(value, precision)
        if not inner:
            return [f"{name}: {{}}"]
        return [f"{name}:", *("  " + line for line in inner)]
    items = None if isinstance(value, str | bytes | bytearray | memoryview) else _as_sequence(value)
    if items is not None and any(_is_record(v) or _as_sequence(v) is not None for v in items):
        return [f"{name}:", *_item_lines(items, precision)]
    return [f"{name}: {_scalar(value, precision)}{_comment(value)}"]


def _item_lines(items: list[Any], precision: int | None) -> list[str]:
    lines: list[str] = []
    for item in items:
        if _is_record(item):
            inner = _record_lines(item, precision) or ["{}"]
            lines.append("- " + inner[0])
            lines.extend("  " + line for line in inner[1:])
        else:
            lines.append(f"- {_scalar(item, precision)}")
    return lines


def render_text(msg: Any, *, precision: int | None = DEFAULT_PRECISION) -> str:
    """``msg`` as YAML-like text without a trailing newline (see the module docstring)."""
    if not _is_record(msg):
        return _scalar(msg, precision)
    lines = _record_lines(msg, precision)
    return "\n".join(lines) if lines else "{}"


__all__ = [
    "DEFAULT_PRECISION",
    "format_float",
    "format_string",
    "readable_text",
    "render_json",
    "render_text",
    "to_plain",
]
