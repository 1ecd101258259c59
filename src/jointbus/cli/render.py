"""Show a message to a person (YAML-like text) or to a program (one JSON object per line).

Where it sits: :mod:`jointbus.cli`, used by ``topic echo``; it reads any message object (a frozen
dataclass: wire records, the typed Python-facing classes, the :mod:`jointbus.math` types) and
imports nothing else from jointbus.

**Text** (:func:`render_text`) looks like ``ros2 topic echo``: one ``field: value`` per line, nested
messages indented by two spaces, lists of messages as ``- `` items, lists of numbers, strings and
``byte[]`` payloads on one line (``data: [1, 2, 3]``), enum values followed by their name as a
comment (``level: 2  # WARN``). Floats are shortened to ``precision`` significant digits (6 by
default; ``None`` prints the shortest text that reads back bit for bit). The text is valid YAML,
so a printed message pasted into ``jointbus topic pub`` builds the same message (exactly so with
``precision=None``): strings that YAML would read as something else are double-quoted, floats
always carry a ``.`` (``1.0e-05``), NaN and infinities are ``.nan``, ``.inf``, ``-.inf``.

**JSON** (:func:`render_json`) is one line per message with every field and full float precision;
``byte[]`` payloads are lists of ints, enums their values. JSON has no NaN or infinity, so those
are the strings ``"nan"``, ``"inf"``, ``"-inf"`` (``jq`` and strict parsers accept the line).

Fields whose names start with ``_`` are implementation details and are not shown.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import re
from typing import Any, Final

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


def _comment(value: Any) -> str:
    if isinstance(value, enum.Enum):
        return f"  # {value.name}"
    return ""


def _record_lines(obj: Any, precision: int | None) -> list[str]:
    lines: list[str] = []
    for name, value in _fields(obj):
        lines.extend(_entry_lines(name, value, precision))
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
    "render_json",
    "render_text",
    "to_plain",
]
