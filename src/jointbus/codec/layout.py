"""Stable-layout CDR: one precompiled plan per concrete message layout, run in C or in Python.

Where it sits: :mod:`jointbus.codec`, beside the generic engine (:mod:`jointbus.codec.cdr`) and
used only by :class:`jointbus.codec.codec.Codec`. It runs a layout either with the optional
compiled core (:mod:`jointbus.codec.accel`, ``_cdr_accel.c``) or, when that is not built or is
disabled, with :mod:`struct` in pure Python (the fallback, and the reference the core is tested
against).

Why a hand-written codec exists: the issue requires a 12-joint ``BridgeData`` / ``JointCommand``
to round-trip (decode with every field materialised, then encode) ≥ 8× faster than rosbags'
``deserialize_cdr`` + ``serialize_cdr`` (≈ 26 µs here), goal ≥ 15× and within 1.5× of msgspec
msgpack (≈ 2.4 µs), and no library offers a faster CDR codec for Python. Measured on this VM: the
generic engine ≈ 130 µs; this module with one ``struct`` per layout but message constructors on
decode ≈ 17–20 µs (constructors were 50–63 % of it); in pure Python with :mod:`.rules` instead of
constructors ≈ 10–11 µs (≈ 2.5×); with the compiled core ≈ 1.4 µs (BridgeData, ≈ 19×) and
≈ 1.5 µs (JointCommand, ≈ 18×), both ≈ 0.6× msgspec's time — see ``bench/bench_codec.py`` for
the current numbers. mypyc on this module reached only ≈ 3.5×.

The observation this module exploits: a robot sends the same joint names and the same array lengths
cycle after cycle. Once every string's content and every sequence's length is known, a message is a
fixed run of primitives at fixed offsets. A :class:`Layout` is that run plus what is needed to use
it:

- the *key*: every string (and string sequence) value and every sequence length, in wire order,
  plus the exact class of every nested message; an object whose key matches can be packed with
  the layout;
- the constant bytes (encapsulation id, string lengths and contents, sequence counts): on decode
  they are compared with the expected ones, which both proves the layout applies and makes decoding
  the strings free (the cached ``str`` objects are reused);
- per nested message, how to build it: its constructor, or — for a class that declares
  ``WIRE_RULES`` (:mod:`jointbus.codec.rules`) — a direct build after checking only those rules
  (names and lengths were accepted once, when the layout's sample was constructed). Subtrees with
  no numeric content (only strings) are cached objects: messages are immutable.

A layout is only built from a message the generic engine has already encoded, and is checked
against it (same bytes out, the sample back) before it is used; the codec falls back to the generic
engine for anything a layout does not cover (a rule broken, a value of another type, other bytes),
so every engine gives the same answer. The one deliberate difference of the Python engine: packing
does not re-check the Python type of each number (the message constructors normalise them), so
e.g. ``True`` in a ``float64`` field is written as ``1.0`` where the generic engine would refuse it.

No code is generated with ``exec``: layouts are data (struct formats, index tuples, a nested tuple
spec for the compiled core) driven by small closures and :mod:`operator` getters.
"""

from __future__ import annotations

import dataclasses
import math
import struct
from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter, itemgetter
from typing import Any, Final

from jointbus.codec import accel
from jointbus.codec.rules import WireRule, enum_members, rules_of
from jointbus.codec.schema import MessageSchema, schema_of
from jointbus.codec.wire import INT_RANGES, Primitive

Getter = Callable[[Any], Any]
Path = tuple[str | int, ...]
#: The layout key: (strings, nested classes, string sequences, ...) then sequence lengths.
LayoutKey = tuple[tuple[object, ...], tuple[int, ...]]

_U32: Final = struct.Struct("<I")
_BYTES_PRIMITIVES: Final = frozenset({Primitive.UINT8, Primitive.BYTE})
_INF: Final = math.inf
_NINF: Final = -math.inf


class _Miss:
    """Marker: the layout does not describe these bytes (another layout or the generic engine)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISS"


MISS: Final = _Miss()


class WireRuleViolation(ValueError):
    """Decoded content breaks a class's ``WIRE_RULES``: the generic engine names the error."""


def _empty(_: object) -> tuple[()]:
    return ()


def _tuple_of(*items: Any) -> tuple[Any, ...]:
    return items


def _path_getter(path: Path) -> Getter:
    """A getter for one attribute path; ``int`` steps index a sequence of messages."""
    if all(isinstance(step, str) for step in path):
        return attrgetter(".".join(str(step) for step in path))

    def get(obj: Any) -> Any:
        for step in path:
            obj = getattr(obj, step) if isinstance(step, str) else obj[step]
        return obj

    return get


def _tuple_getter(paths: Sequence[Path]) -> Callable[[Any], tuple[Any, ...]]:
    """A getter returning a tuple with the value at each path (one C call when it can be)."""
    if not paths:
        return _empty
    if all(isinstance(step, str) for path in paths for step in path):
        getter: Getter = attrgetter(*(".".join(str(step) for step in path) for path in paths))
        if len(paths) > 1:
            return getter
        return lambda obj: (getter(obj),)
    getters = [_path_getter(path) for path in paths]
    return lambda obj: tuple(get(obj) for get in getters)


def _index_getter(indices: Sequence[int | slice]) -> Callable[[Any], Sequence[Any]]:
    """A getter returning the items at ``indices`` of a sequence, always as a sequence."""
    if not indices:
        return _empty
    if len(indices) == 1:
        only = indices[0]
        if isinstance(only, slice):
            return lambda seq: (seq[only],)
        return itemgetter(slice(only, only + 1))
    return itemgetter(*indices)


# ---------------------------------------------------------------------------------------------
# wire rules in Python (the compiled core checks the same rules from the spec)
# ---------------------------------------------------------------------------------------------
Validator = Callable[[Any], None]


def _violation() -> WireRuleViolation:
    return WireRuleViolation("decoded content breaks a wire rule")


def _scalar_validator(rule: WireRule) -> Validator:
    accepts = rule.accepts

    def validate(value: Any) -> None:
        if not accepts(value):
            raise _violation()

    return validate


def _sequence_validator(rule: WireRule, *, finite_checked: bool) -> Validator:
    """Whole-tuple C loops where exact; ``finite_checked``: the caller checks finiteness."""
    bounded = rule.ge is not None or rule.le is not None
    if finite_checked and rule.le is None and rule.enum is None:
        ge = rule.ge

        def min_check(values: tuple[float, ...]) -> None:
            if ge is not None and values and min(values) < ge:
                raise _violation()

        return min_check
    if rule.no_inf and not rule.finite and not bounded and rule.enum is None:

        def no_inf_check(values: tuple[float, ...]) -> None:
            if _INF in values or _NINF in values:
                raise _violation()

        return no_inf_check
    accepts = rule.accepts

    def each_check(values: tuple[Any, ...]) -> None:
        if not all(map(accepts, values)):
            raise _violation()

    return each_check


def _setter(cls: type[Any], name: str) -> Callable[[Any, Any], None]:
    """Set field ``name`` of a new, not yet shared ``cls`` object, bypassing frozen ``__setattr__``.

    A slot's member descriptor is the fastest; other classes go through ``object.__setattr__``.
    """
    descriptor = getattr(cls, name, None)
    if type(descriptor).__name__ == "member_descriptor":
        setter: Callable[[Any, Any], None] = descriptor.__set__  # type: ignore[union-attr]
        return setter
    setattr_ = object.__setattr__
    return lambda obj, value: setattr_(obj, name, value)


def _direct_maker(
    cls: type[Any], schema: MessageSchema, rules: Mapping[str, WireRule]
) -> Callable[..., Any]:
    """Build ``cls`` from wire values without its constructor, after checking its wire rules.

    Raises :class:`WireRuleViolation` when a value breaks a rule (the same values the compiled
    core refuses). Float32 sequences that must be finite are checked together: one sum per field,
    finite exactly when every element is (|float32| ≤ 3.4e38, so no sum overflows float64).
    """
    setters = tuple(_setter(cls, f.name) for f in schema.fields)
    finite32: list[int] = []
    validators: list[tuple[int, Validator]] = []
    converters: list[tuple[int, Callable[[Any], Any]]] = []
    for index, field in enumerate(schema.fields):
        rule = rules.get(field.name)
        if rule is None:
            continue
        element = field.element
        assert isinstance(element, Primitive)  # rules_of allows rules on primitives only
        sequence = field.kind != "primitive"
        numeric = dataclasses.replace(rule, enum=None)  # the enum is checked by its converter
        if sequence and numeric.finite and element is Primitive.FLOAT32:
            finite32.append(index)
        if numeric == WireRule() or (sequence and finite32[-1:] == [index] and numeric == _FINITE):
            pass  # nothing numeric to check, or only finiteness (checked for all at once)
        elif sequence:
            grouped = finite32[-1:] == [index]
            validators.append((index, _sequence_validator(numeric, finite_checked=grouped)))
        else:
            validators.append((index, _scalar_validator(numeric)))
        if rule.enum is not None:
            converters.append((index, _enum_converter(enum_members(rule.enum), sequence)))
    finite_get = itemgetter(*finite32) if len(finite32) > 1 else None
    only_finite = finite32[0] if len(finite32) == 1 else None
    new = object.__new__
    isfinite = math.isfinite

    def make(*values: Any) -> Any:
        if finite_get is not None:
            if not isfinite(sum(map(sum, finite_get(values)))):
                raise _violation()
        elif only_finite is not None and not isfinite(sum(values[only_finite])):
            raise _violation()
        for index, validate in validators:
            validate(values[index])
        if converters:
            converted = list(values)
            for index, convert in converters:
                converted[index] = convert(converted[index])
            values = tuple(converted)
        obj = new(cls)
        for set_, value in zip(setters, values, strict=False):  # same length by construction
            set_(obj, value)
        return obj

    return make


_FINITE: Final = WireRule(finite=True)


def _enum_converter(members: dict[int, Any], sequence: bool) -> Callable[[Any], Any]:
    """The member of each value (what ``EnumClass(value)`` returns), or WireRuleViolation."""
    get = members.get

    def convert(value: Any) -> Any:
        member = get(value)
        if member is None:
            raise _violation()
        return member

    if not sequence:
        return convert
    return lambda values: tuple(map(convert, values))


# ---------------------------------------------------------------------------------------------
# compile: walk one sample message, recording the struct format and where every value goes
# ---------------------------------------------------------------------------------------------
class _Const:
    """A field value that is the same for every message of the layout (decode returns ``value``)."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value


class _Node:
    """A message to construct on decode: how, and, per field, where its value comes from."""

    __slots__ = ("maker", "sources")

    def __init__(self, maker: Callable[..., Any]) -> None:
        self.maker = maker
        # ("val", index) | ("slice", (start, stop)) | ("const", value) | ("node", _Node)
        # | ("nodes", [ _Node | _Const, ... ])
        self.sources: list[tuple[str, Any]] = []


class LayoutMismatchError(Exception):
    """The sample cannot be described by a layout (unusual value types): use the generic engine."""


#: Op kinds and rule flags of the compiled core's spec (must match ``_cdr_accel.c``).
K_CONST, K_SCALAR, K_ARRAY, K_BLOB, K_NODE, K_NODES = range(6)
F_FINITE, F_NO_INF, F_GE, F_LE, F_ENUM = 1, 2, 4, 8, 16
#: One op of the spec: (kind, struct code, offset, count, flags, lo, hi, value, child).
OpSpec = tuple[int, str, int, int, int, float | int, float | int, object, object]


def _const_spec(value: object) -> OpSpec:
    return (K_CONST, "", 0, 0, 0, 0, 0, value, None)


def _rule_spec(rule: WireRule | None, element: Primitive) -> tuple[int, Any, Any, object]:
    """(flags, lo, hi, enum table) of a rule, bounds as ints for integer fields."""
    if rule is None:
        return 0, 0, 0, None
    flags = (F_FINITE if rule.finite else 0) | (F_NO_INF if rule.no_inf else 0)
    is_float = element in (Primitive.FLOAT32, Primitive.FLOAT64)
    lo: float | int = 0.0 if is_float else 0
    hi: float | int = 0.0 if is_float else 0
    if rule.ge is not None:
        flags |= F_GE
        lo = float(rule.ge) if is_float else max(math.ceil(rule.ge), INT_RANGES[element][0])
    if rule.le is not None:
        flags |= F_LE
        hi = float(rule.le) if is_float else min(math.floor(rule.le), INT_RANGES[element][1])
    table: object = None
    if rule.enum is not None:
        flags |= F_ENUM
        members = enum_members(rule.enum)
        base = min(members)
        table = (base, tuple(members.get(base + i) for i in range(max(members) - base + 1)))
    return flags, lo, hi, table


class _Compiler:
    """Walks one sample message in wire order and records everything a :class:`Layout` needs."""

    def __init__(self) -> None:
        self.codes: list[str] = ["2s2x"]  # encapsulation id (checked), options (ignored)
        self.n_items = 1
        self.const_indices: list[int] = [0]
        self.pos = 4
        self.pending = bytearray()  # constant bytes not yet emitted (may be only padding)
        self.pending_real = False  # whether ``pending`` holds more than padding
        self.spans: list[tuple[int, int]] = [(0, 2)]  # constant bytes (offset, length), no padding
        self.variables: list[tuple[int, Primitive]] = []  # offset of every variable element
        self.key_strs: list[object] = []
        self.key_str_paths: list[Path] = []
        self.key_lens: list[int] = []
        self.key_len_paths: list[Path] = []
        # encode plan in wire order: ("const", bytes) | ("scalar", path) | ("seq", path)
        # | ("blob", path)
        self.plan: list[tuple[str, Any]] = [("const", b"\x00\x01")]

    # -- byte-level bookkeeping ---------------------------------------------------------------
    def _pad(self, size: int) -> None:
        pad = (-(self.pos - 4)) % size
        if pad:
            self.pending += b"\x00" * pad
            self.pos += pad

    def _const(self, raw: bytes) -> None:
        start, length = self.spans[-1]
        if start + length == self.pos:
            self.spans[-1] = (start, length + len(raw))
        else:
            self.spans.append((self.pos, len(raw)))
        self.pending += raw
        self.pending_real = True
        self.pos += len(raw)

    def _flush(self) -> None:
        if self.pending_real:
            raw = bytes(self.pending)
            self.codes.append(f"{len(raw)}s")
            self.const_indices.append(self.n_items)
            self.n_items += 1
            self.plan.append(("const", raw))
        elif self.pending:
            self.codes.append(f"{len(self.pending)}x")
        self.pending = bytearray()
        self.pending_real = False

    def _var(self, code: str, count: int, size: int) -> int:
        """Append ``count`` variable items of ``code``; return the index of the first."""
        self._flush()
        first = self.n_items
        self.codes.append(f"{count}{code}" if count != 1 else code)
        self.n_items += count if code != "s" else 1
        self.pos += size
        return first

    # -- schema walk ----------------------------------------------------------------------------
    def _string_bytes(self, value: object) -> bytes:
        if type(value) is not str:
            raise LayoutMismatchError(f"string value {value!r} is not a str")
        raw = value.encode("utf-8")
        return _U32.pack(len(raw) + 1) + raw + b"\x00"

    def message(
        self, schema: MessageSchema, obj: object, path: Path
    ) -> tuple[_Node | _Const, OpSpec]:
        cls = schema.cls
        if type(obj) is not cls:
            raise LayoutMismatchError(f"{path}: {type(obj)!r} is not {cls!r}")
        if path:
            self.key_strs.append(cls)
            self.key_str_paths.append((*path, "__class__"))
        rules = rules_of(cls)
        node = _Node(cls if rules is None else _direct_maker(cls, schema, rules))
        specs: list[OpSpec] = []
        for field in schema.fields:
            value = getattr(obj, field.name)
            fpath = (*path, field.name)
            element = field.element
            rule = None if rules is None else rules.get(field.name)
            if field.kind == "primitive":
                assert isinstance(element, Primitive)
                source, spec = self._primitive(element, value, fpath, rule)
            elif field.kind == "message":
                child, spec = self.message(schema_of(element), value, fpath)  # type: ignore[arg-type]
                source = ("const", child.value) if isinstance(child, _Const) else ("node", child)
            else:
                source, spec = self._sequence(field.kind, element, value, fpath, rule)
            node.sources.append(source)
            specs.append(spec)
        if all(kind == "const" for kind, _ in node.sources):
            return _Const(obj), _const_spec(obj)
        names = tuple(f.name for f in schema.fields)
        node_spec = (cls, rules is not None, names, tuple(specs))
        return node, (K_NODE, "", 0, 0, 0, 0, 0, None, node_spec)

    def _primitive(
        self, element: Primitive, value: object, path: Path, rule: WireRule | None
    ) -> tuple[tuple[str, Any], OpSpec]:
        if element is Primitive.STRING:
            self._pad(4)
            self._const(self._string_bytes(value))
            self.key_strs.append(value)
            self.key_str_paths.append(path)
            return ("const", value), _const_spec(value)
        self._pad(element.size)
        offset = self.pos
        index = self._var(element.struct_code, 1, element.size)
        self.plan.append(("scalar", path))
        self.variables.append((offset, element))
        flags, lo, hi, table = _rule_spec(rule, element)
        spec = (K_SCALAR, element.struct_code, offset, 1, flags, lo, hi, table, None)
        return ("val", index), spec

    def _sequence(
        self, kind: str, element: object, value: Any, path: Path, rule: WireRule | None
    ) -> tuple[tuple[str, Any], OpSpec]:
        count = len(value)
        if kind == "sequence":
            self._pad(4)
            self._const(_U32.pack(count))
        if element is Primitive.STRING:
            if type(value) is not tuple:
                raise LayoutMismatchError(f"{path}: string sequence is not a tuple")
            for item in value:
                self._pad(4)
                self._const(self._string_bytes(item))
            self.key_strs.append(value)
            self.key_str_paths.append(path)
            return ("const", value), _const_spec(value)
        self.key_lens.append(count)
        self.key_len_paths.append(path)
        if isinstance(element, Primitive):
            if element in _BYTES_PRIMITIVES:
                if type(value) is not bytes:
                    raise LayoutMismatchError(f"{path}: byte sequence is not bytes")
                if not count:
                    return ("const", b""), _const_spec(b"")
                offset = self.pos
                index = self._var("s", count, count)
                self.plan.append(("blob", path))
                self.variables.extend((offset + i, element) for i in range(count))
                return ("val", index), (K_BLOB, "B", offset, count, 0, 0, 0, None, None)
            if type(value) is not tuple:
                raise LayoutMismatchError(f"{path}: sequence is not a tuple")
            if not count:
                return ("const", ()), _const_spec(())
            self._pad(element.size)
            offset = self.pos
            first = self._var(element.struct_code, count, element.size * count)
            self.plan.append(("seq", path))
            self.variables.extend((offset + i * element.size, element) for i in range(count))
            flags, lo, hi, table = _rule_spec(rule, element)
            array_spec: OpSpec = (
                K_ARRAY, element.struct_code, offset, count, flags, lo, hi, table, None
            )
            return ("slice", (first, first + count)), array_spec
        if type(value) is not tuple:
            raise LayoutMismatchError(f"{path}: message sequence is not a tuple")
        nested = schema_of(element)  # type: ignore[arg-type]
        children = [self.message(nested, item, (*path, i)) for i, item in enumerate(value)]
        if all(isinstance(child, _Const) for child, _ in children):
            return ("const", value), _const_spec(value)
        items = tuple(spec for _, spec in children)
        nodes_spec: OpSpec = (K_NODES, "", 0, count, 0, 0, 0, None, items)
        return ("nodes", [child for child, _ in children]), nodes_spec

    def finish(self) -> None:
        self._flush()


# ---------------------------------------------------------------------------------------------
# the layout itself
# ---------------------------------------------------------------------------------------------
class Layout:
    """One concrete wire layout of a message class.

    Built by :func:`compile_layout` from a message and the generic engine's bytes of it.
    :meth:`encode` / :meth:`decode` are the compiled core's when ``engine == "c"``, else the
    Python ones (:meth:`pack` / :meth:`unpack` with :meth:`matches`, always available).
    """

    __slots__ = (
        "_cls",
        "_const_expected",
        "_const_get",
        "_const_result",
        "_consts",
        "_key_get",
        "_n_strs",
        "_ops",
        "_root_spec",
        "_seq_get",
        "_steps",
        "_struct",
        "decode",
        "encode",
        "engine",
        "key",
        "size",
        "spans",
        "spec",
        "variables",
    )

    def __init__(self, compiler: _Compiler, root: _Node | _Const, root_spec: OpSpec) -> None:
        self._struct = struct.Struct("<" + "".join(compiler.codes))
        self.size = self._struct.size
        self.key: LayoutKey = (tuple(compiler.key_strs), tuple(compiler.key_lens))
        #: Constant bytes (offset, length): what a payload must share with the sample.
        self.spans: tuple[tuple[int, int], ...] = tuple(compiler.spans)
        #: Offset and primitive of every variable element (for tests and diagnostics).
        self.variables: tuple[tuple[int, Primitive], ...] = tuple(compiler.variables)
        self._n_strs = len(compiler.key_strs)
        self._key_get = _tuple_getter([*compiler.key_str_paths, *compiler.key_len_paths])
        self._const_get = _index_getter(compiler.const_indices)
        self._const_expected: Any = None  # set by compile_layout from the sample's own bytes
        self._ops = self._encode_ops(compiler.plan)
        self._const_result: object = MISS
        self._consts: tuple[Any, ...] = ()
        self._seq_get: Callable[[Any], Sequence[Any]] = _empty
        self._steps: tuple[tuple[Callable[..., Any], Callable[[Any], Sequence[Any]]], ...] = ()
        self._cls: type[Any] = type(root.value) if isinstance(root, _Const) else type(None)
        self.spec: tuple[int, bytes, tuple[tuple[int, int], ...], OpSpec] | None = None
        self.engine = "python"
        self.encode: Callable[[object], bytes | None] = self._encode_python
        self.decode: Callable[[bytes | bytearray | memoryview], Any] = self.unpack
        if isinstance(root, _Const):
            self._const_result = root.value
        else:
            self._decode_plan(compiler.n_items, root)
        assert root_spec[0] in (K_CONST, K_NODE)
        node_spec = root_spec[8]
        if isinstance(node_spec, tuple):
            self._cls = node_spec[0]
        self._root_spec = root_spec

    # -- encode -----------------------------------------------------------------------------------
    @staticmethod
    def _encode_ops(
        plan: list[tuple[str, Any]],
    ) -> tuple[tuple[tuple[Any, ...] | None, Getter | None], ...]:
        """Group the plan into ops; each yields the struct arguments of one run, in wire order."""
        ops: list[tuple[tuple[Any, ...] | None, Getter | None]] = []
        run: list[Path] = []

        def prefix(path: Path) -> Path:
            ints = [i for i, step in enumerate(path) if isinstance(step, int)]
            return path[: ints[-1] + 1] if ints else ()

        def flush_run() -> None:
            if run:
                ops.append((None, _tuple_getter(list(run))))
                run.clear()

        for kind, item in plan:
            if kind == "scalar":
                if run and prefix(run[0]) != prefix(item):
                    flush_run()
                run.append(item)
                continue
            flush_run()
            if kind == "const":
                ops.append(((item,), None))
            elif kind == "seq":
                ops.append((None, _path_getter(item)))
            else:  # blob: one bytes argument
                ops.append((None, _tuple_getter([item])))
        flush_run()
        return tuple(ops)

    def matches(self, obj: object) -> bool:
        """Whether ``obj`` (of the layout's class) has this layout's strings and lengths."""
        values = self._key_get(obj)
        n = self._n_strs
        strs, lens = self.key
        return values[:n] == strs and tuple(map(len, values[n:])) == lens

    def pack(self, obj: object) -> bytes:
        """CDR bytes of ``obj`` (which must :meth:`matches`); ``struct.error`` if unpackable."""
        args: list[Any] = []
        extend = args.extend
        for const, getter in self._ops:
            extend(const if getter is None else getter(obj))  # type: ignore[arg-type]
        return self._struct.pack(*args)

    def _encode_python(self, obj: object) -> bytes | None:
        if type(obj) is not self._cls or not self.matches(obj):
            return None
        return self.pack(obj)

    # -- decode -----------------------------------------------------------------------------------
    def _decode_plan(self, n_vals: int, root: _Node) -> None:
        consts: list[Any] = []
        slices: list[slice] = []
        steps: list[tuple[Callable[..., Any], Callable[[Any], Sequence[Any]]]] = []
        # Pool at decode time: [*vals, *consts, *slices, *results of steps]. Sources are resolved
        # in two passes (same traversal order) because the pool offsets of consts and slices
        # depend on how many there are.

        def collect(node: _Node) -> None:
            for kind, payload in node.sources:
                if kind == "const":
                    consts.append(payload)
                elif kind == "slice":
                    slices.append(slice(*payload))
                elif kind == "node":
                    collect(payload)
                elif kind == "nodes":
                    for child in payload:
                        if isinstance(child, _Node):
                            collect(child)

        collect(root)
        base_consts = n_vals
        base_slices = n_vals + len(consts)
        next_result = base_slices + len(slices)
        const_cursor = 0
        slice_cursor = 0

        def build(node: _Node) -> int:
            nonlocal const_cursor, slice_cursor, next_result
            indices: list[int] = []
            for kind, payload in node.sources:
                if kind == "val":
                    indices.append(payload)
                elif kind == "const":
                    indices.append(base_consts + const_cursor)
                    const_cursor += 1
                elif kind == "slice":
                    indices.append(base_slices + slice_cursor)
                    slice_cursor += 1
                elif kind == "node":
                    indices.append(build(payload))
                else:  # nodes: build each child, then one tuple of them
                    parts: list[int] = []
                    for child in payload:
                        if isinstance(child, _Node):
                            parts.append(build(child))
                        else:
                            # constant element inside a varying sequence: append as a const step
                            steps.append((_identity_of(child.value), _empty))
                            parts.append(next_result)
                            next_result += 1
                    steps.append((_tuple_of, _index_getter(parts)))
                    indices.append(next_result)
                    next_result += 1
            steps.append((node.maker, _index_getter(indices)))
            result = next_result
            next_result += 1
            return result

        build(root)
        self._consts = tuple(consts)
        self._seq_get = _index_getter(slices) if slices else _empty
        self._steps = tuple(steps)

    def unpack(self, data: bytes | bytearray | memoryview) -> Any:
        """The message in ``data``, or :data:`MISS` if ``data`` does not have this layout.

        Raises whatever the message constructor raises for invalid content, or
        :class:`WireRuleViolation` (the codec then asks the generic engine, which turns it into a
        DecodeError naming the field and the offset).
        """
        n = data.nbytes if type(data) is memoryview else len(data)
        if not self.size <= n <= self.size + 3:
            return MISS
        vals = self._struct.unpack_from(data)
        if self._const_get(vals) != self._const_expected:
            return MISS
        if self._const_result is not MISS:
            return self._const_result
        pool = [*vals, *self._consts, *self._seq_get(vals)]
        append = pool.append
        for make, args in self._steps:
            append(make(*args(pool)))
        return pool[-1]

    # -- compiled core ----------------------------------------------------------------------------
    def use_compiled_core(self, sample: object, sample_bytes: bytes) -> bool:
        """Switch :meth:`encode` / :meth:`decode` to the compiled core if it is available.

        The core's program is checked on the sample (same bytes out, the same object back) first;
        returns whether the layout now runs compiled.
        """
        spec = (self.size, sample_bytes, self.spans, self._root_spec)
        program = accel.program(spec, MISS)
        if program is None:
            return False
        decoded = program.decode(sample_bytes)
        if program.encode(sample) != sample_bytes or decoded is MISS:
            return False
        if program.encode(decoded) != sample_bytes:
            return False
        self.spec = spec
        self.engine = "c"
        self.encode = program.encode
        self.decode = program.decode
        return True


def _identity_of(value: object) -> Callable[[], object]:
    return lambda: value


def compile_layout(
    schema: MessageSchema, sample: object, sample_bytes: bytes, *, compiled: bool = True
) -> Layout:
    """The layout of ``sample``, checked against ``sample_bytes`` (the generic engine's encoding).

    ``compiled``: run it with the compiled core when that is available (else pure Python).
    Raises :class:`LayoutMismatchError` if the sample cannot be described by a layout or the
    layout would not reproduce the generic engine exactly (then the codec keeps using that).
    """
    compiler = _Compiler()
    root, root_spec = compiler.message(schema, sample, ())
    compiler.finish()
    if compiler.pos != len(sample_bytes):
        raise LayoutMismatchError(f"layout size {compiler.pos} != {len(sample_bytes)} bytes")
    layout = Layout(compiler, root, root_spec)
    layout._const_expected = layout._const_get(layout._struct.unpack_from(sample_bytes))
    if layout.pack(sample) != sample_bytes:
        raise LayoutMismatchError("layout does not reproduce the generic engine's bytes")
    if not layout.matches(sample) or layout.key != key_of(schema, sample):
        raise LayoutMismatchError("layout key does not match its own sample")
    if compiled:
        layout.use_compiled_core(sample, sample_bytes)
    return layout


def key_of(schema: MessageSchema, obj: object) -> LayoutKey:
    """The layout key of a message (what :meth:`Layout.matches` compares), by a generic walk."""
    strs: list[object] = []
    lens: list[int] = []

    def walk(schema: MessageSchema, obj: object, nested: bool) -> None:
        if nested:
            strs.append(type(obj))
        for field in schema.fields:
            value = getattr(obj, field.name)
            element = field.element
            if field.kind == "primitive":
                if element is Primitive.STRING:
                    strs.append(value)
            elif field.kind == "message":
                walk(schema_of(element), value, True)  # type: ignore[arg-type]
            elif element is Primitive.STRING:
                strs.append(value)
            else:
                lens.append(len(value))
                if not isinstance(element, Primitive):
                    nested_schema = schema_of(element)  # type: ignore[arg-type]
                    for item in value:
                        walk(nested_schema, item, True)

    walk(schema, obj, False)
    return (tuple(strs), tuple(lens))
