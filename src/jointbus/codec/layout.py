"""Stable-layout CDR: one precompiled :class:`struct.Struct` per concrete message layout.

Where it sits: :mod:`jointbus.codec`, beside the generic engine (:mod:`jointbus.codec.cdr`) and
used only by :class:`jointbus.codec.codec.Codec`. Why it is hand-written: the issue requires the
500 Hz messages (``BridgeData``, ``JointCommand``) to round-trip several times faster than rosbags,
and no library offers a faster CDR codec for Python. The generic engine interprets the schema field
by field (≈ 100 µs per round trip); rosbags generates code per type (≈ 30 µs).

The observation this module exploits: a robot sends the same joint names and the same array lengths
cycle after cycle. Once every string's content and every sequence's length is known, a message is a
fixed run of primitives at fixed offsets, i.e. one ``struct`` format. A :class:`Layout` is that
format plus what is needed to use it:

- the *key*: every string (and string sequence) value and every sequence length, in wire order,
  plus the exact class of every nested message; an object whose key matches can be packed with
  the one struct;
- the constant parts of the bytes (encapsulation id, string lengths and contents, sequence counts
  and the padding between them): on decode they are unpacked as a few ``bytes`` items and compared
  with the expected ones in one tuple comparison, which both proves the layout applies and makes
  decoding the strings free (the cached ``str`` objects are reused);
- a post-order list of constructor calls that rebuilds nested messages from the unpacked values.
  Subtrees with no numeric content (only strings) are cached objects: messages are immutable.

A layout is only built from a message the generic engine has already encoded, and is checked
against it (same bytes out, equal object back) before it is used; the codec falls back to the
generic engine for anything a layout does not cover, so both give the same answer. The one
deliberate difference: packing does not re-check the Python type of each number (the message
constructors normalise them), so e.g. ``True`` in a ``float64`` field is written as ``1.0`` where
the generic engine would refuse it.

No code is generated with ``exec``: layouts are data (struct formats, index tuples) driven by small
closures and :mod:`operator` getters, all visible to type checkers and debuggers.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from operator import attrgetter, itemgetter
from typing import Any, Final

from jointbus.codec.schema import MessageSchema, schema_of
from jointbus.codec.wire import Primitive

Getter = Callable[[Any], Any]
Path = tuple[str | int, ...]
#: The layout key: (strings, nested classes, string sequences, ...) then sequence lengths.
LayoutKey = tuple[tuple[object, ...], tuple[int, ...]]

_U32: Final = struct.Struct("<I")
_BYTES_PRIMITIVES: Final = frozenset({Primitive.UINT8, Primitive.BYTE})


class _Miss:
    """Marker: the layout does not describe these bytes (another layout or the generic engine)."""

    __slots__ = ()


MISS: Final = _Miss()


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
# compile: walk one sample message, recording the struct format and where every value goes
# ---------------------------------------------------------------------------------------------
class _Const:
    """A field value that is the same for every message of the layout (decode returns ``value``)."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value


class _Node:
    """A message to construct on decode: its class and, per field, where its value comes from."""

    __slots__ = ("cls", "sources")

    def __init__(self, cls: type[Any]) -> None:
        self.cls = cls
        # ("val", index) | ("slice", (start, stop)) | ("const", value) | ("node", _Node)
        # | ("nodes", [ _Node | _Const, ... ])
        self.sources: list[tuple[str, Any]] = []


class LayoutMismatchError(Exception):
    """The sample cannot be described by a layout (unusual value types): use the generic engine."""


class _Compiler:
    """Walks one sample message in wire order and records everything a :class:`Layout` needs."""

    def __init__(self) -> None:
        self.codes: list[str] = ["2s2x"]  # encapsulation id (checked), options (ignored)
        self.n_items = 1
        self.const_indices: list[int] = [0]
        self.pos = 4
        self.pending = bytearray()  # constant bytes not yet emitted (may be only padding)
        self.pending_real = False  # whether ``pending`` holds more than padding
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

    def message(self, schema: MessageSchema, obj: object, path: Path) -> _Node | _Const:
        if type(obj) is not schema.cls:
            raise LayoutMismatchError(f"{path}: {type(obj)!r} is not {schema.cls!r}")
        if path:
            self.key_strs.append(schema.cls)
            self.key_str_paths.append((*path, "__class__"))
        node = _Node(schema.cls)
        for field in schema.fields:
            value = getattr(obj, field.name)
            fpath = (*path, field.name)
            element = field.element
            if field.kind == "primitive":
                assert isinstance(element, Primitive)
                node.sources.append(self._primitive(element, value, fpath))
            elif field.kind == "message":
                child = self.message(schema_of(element), value, fpath)  # type: ignore[arg-type]
                if isinstance(child, _Const):
                    node.sources.append(("const", child.value))
                else:
                    node.sources.append(("node", child))
            else:
                node.sources.append(self._sequence(field.kind, element, value, fpath))
        if all(kind == "const" for kind, _ in node.sources):
            return _Const(obj)
        return node

    def _primitive(self, element: Primitive, value: object, path: Path) -> tuple[str, Any]:
        if element is Primitive.STRING:
            self._pad(4)
            self._const(self._string_bytes(value))
            self.key_strs.append(value)
            self.key_str_paths.append(path)
            return ("const", value)
        self._pad(element.size)
        index = self._var(element.struct_code, 1, element.size)
        self.plan.append(("scalar", path))
        return ("val", index)

    def _sequence(self, kind: str, element: object, value: Any, path: Path) -> tuple[str, Any]:
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
            return ("const", value)
        self.key_lens.append(count)
        self.key_len_paths.append(path)
        if isinstance(element, Primitive):
            if element in _BYTES_PRIMITIVES:
                if type(value) is not bytes:
                    raise LayoutMismatchError(f"{path}: byte sequence is not bytes")
                if not count:
                    return ("const", b"")
                index = self._var("s", count, count)
                self.plan.append(("blob", path))
                return ("val", index)
            if type(value) is not tuple:
                raise LayoutMismatchError(f"{path}: sequence is not a tuple")
            if not count:
                return ("const", ())
            self._pad(element.size)
            first = self._var(element.struct_code, count, element.size * count)
            self.plan.append(("seq", path))
            return ("slice", (first, first + count))
        if type(value) is not tuple:
            raise LayoutMismatchError(f"{path}: message sequence is not a tuple")
        nested = schema_of(element)  # type: ignore[arg-type]
        children = [self.message(nested, item, (*path, i)) for i, item in enumerate(value)]
        if all(isinstance(child, _Const) for child in children):
            return ("const", value)
        return ("nodes", children)

    def finish(self) -> None:
        self._flush()


# ---------------------------------------------------------------------------------------------
# the layout itself
# ---------------------------------------------------------------------------------------------
class Layout:
    """One concrete wire layout of a message class, packed and unpacked by a single struct.

    Built by :func:`compile_layout` from a message and the generic engine's bytes of it.
    """

    __slots__ = (
        "_const_expected",
        "_const_get",
        "_const_result",
        "_consts",
        "_key_get",
        "_n_strs",
        "_ops",
        "_seq_get",
        "_steps",
        "_struct",
        "key",
        "size",
    )

    def __init__(self, compiler: _Compiler, root: _Node | _Const) -> None:
        self._struct = struct.Struct("<" + "".join(compiler.codes))
        self.size = self._struct.size
        self.key: LayoutKey = (tuple(compiler.key_strs), tuple(compiler.key_lens))
        self._n_strs = len(compiler.key_strs)
        self._key_get = _tuple_getter([*compiler.key_str_paths, *compiler.key_len_paths])
        self._const_get = _index_getter(compiler.const_indices)
        self._const_expected: Any = None  # set by compile_layout from the sample's own bytes
        self._ops = self._encode_ops(compiler.plan)
        self._const_result: object = MISS
        self._consts: tuple[Any, ...] = ()
        self._seq_get: Callable[[Any], Sequence[Any]] = _empty
        self._steps: tuple[tuple[Callable[..., Any], Callable[[Any], Sequence[Any]]], ...] = ()
        if isinstance(root, _Const):
            self._const_result = root.value
        else:
            self._decode_plan(compiler.n_items, root)

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
            steps.append((node.cls, _index_getter(indices)))
            result = next_result
            next_result += 1
            return result

        build(root)
        self._consts = tuple(consts)
        self._seq_get = _index_getter(slices) if slices else _empty
        self._steps = tuple(steps)

    def unpack(self, data: bytes | bytearray | memoryview) -> Any:
        """The message in ``data``, or :data:`MISS` if ``data`` does not have this layout.

        Raises whatever the message constructor raises for invalid content (the codec then asks
        the generic engine, which turns it into a DecodeError with the exact offset).
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


def _identity_of(value: object) -> Callable[[], object]:
    return lambda: value


def compile_layout(schema: MessageSchema, sample: object, sample_bytes: bytes) -> Layout:
    """The layout of ``sample``, checked against ``sample_bytes`` (the generic engine's encoding).

    Raises :class:`LayoutMismatchError` if the sample cannot be described by a layout or the
    layout would not reproduce the generic engine exactly (then the codec keeps using that).
    """
    compiler = _Compiler()
    root = compiler.message(schema, sample, ())
    compiler.finish()
    if compiler.pos != len(sample_bytes):
        raise LayoutMismatchError(f"layout size {compiler.pos} != {len(sample_bytes)} bytes")
    layout = Layout(compiler, root)
    layout._const_expected = layout._const_get(layout._struct.unpack_from(sample_bytes))
    if layout.pack(sample) != sample_bytes:
        raise LayoutMismatchError("layout does not reproduce the generic engine's bytes")
    if not layout.matches(sample) or layout.key != key_of(schema, sample):
        raise LayoutMismatchError("layout key does not match its own sample")
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
