"""Live parameters: a node's typed, bounded tunables, readable and changeable while it runs.

Where it sits: :mod:`jointbus.runtime`, on top of :class:`~jointbus.runtime.node.Node` and the
declarations of :mod:`jointbus.model.parameters` (type, default, bounds, unit, meaning — loaded from
the robot file's ``parameters:`` section). The bridge and control nodes hold their tunables here
(watchdog time, thermal thresholds, arbitration threshold, stand height, gains, velocity scales);
``jointbus param`` reads and changes them from another process.

Two parts:

- :class:`ParameterStore` — the values, one per declaration, starting at the robot file's
  defaults. :meth:`~ParameterStore.set` checks a value against its declaration and either applies
  it, returning a :class:`ParameterChange`, or raises a :class:`ParameterError` (unknown name: the
  error lists the known ones; wrong type; out of bounds: the error names the value, the bounds and
  the unit) and changes nothing. A node applies new values through :meth:`~ParameterStore.on_change`
  callbacks (the bridge re-arms its watchdog with the new timeout); a callback may refuse a value
  it cannot take (say, a warning temperature above the shutdown one) by raising, and the store then
  rolls the change back everywhere. :meth:`~ParameterStore.watch` callbacks hear about changes
  once they are committed (publishing them) and cannot refuse.
- :class:`NodeParameters` — a store attached to a node on the bus. The node publishes its
  parameters as a :class:`~jointbus.runtime.parameter_messages.ParameterList` on
  ``/<ns>/parameters`` with LATCHED QoS (so a late joiner reads the current values at once) when it
  is created and again after every change, however the change was made. Several nodes share the
  topic (one list each, told apart by ``node``): a reader subscribes transient-local with a depth
  of at least the number of nodes, or with a realtime callback, so that the lists arriving
  together on joining do not overwrite one another in its queue. It accepts
  :class:`~jointbus.runtime.parameter_messages.ParameterUpdate` messages on
  ``/<ns>/config_update`` for its own name (updates for other nodes are ignored) and answers each
  on ``/<ns>/status``: OK ``param watchdog_time changed 0.25 → 0.5 s`` (or ``unchanged``), or
  ERROR ``param watchdog_time refused '9': parameter 'watchdog_time' = 9.0; expected a value in
  [0.01, 5.0] s``; the status's ``data`` is the update's ``request_id``, so the asker can tell its
  answer from another's. Both endpoints are unmanaged: parameters can be read and tuned in every
  lifecycle state, as in ROS 2, including while the node is inactive.

Threads: :class:`ParameterStore` is safe to use from any thread; changes are applied one at a time
(a re-entrant lock, so a callback may read the store), in the order they are made, and published in
that order.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from jointbus.bus import LATCHED, RELIABLE
from jointbus.errors import Refused
from jointbus.messages.status import Level
from jointbus.messages.std_msgs import Header
from jointbus.model.errors import ParameterError
from jointbus.model.parameters import ParameterSpec, ParameterType, ParameterValue
from jointbus.runtime.node import Node, NodePublisher, NodeSubscription
from jointbus.runtime.parameter_messages import (
    Parameter,
    ParameterList,
    ParameterUpdate,
    format_value,
)

_LOG = logging.getLogger("jointbus.runtime.parameters")

#: Topic (relative to the node's namespace) of the latched parameter lists.
PARAMETERS_TOPIC: Final = "parameters"
#: Topic (relative to the node's namespace) on which parameter updates arrive.
CONFIG_UPDATE_TOPIC: Final = "config_update"

_TRUE: Final = frozenset({"true", "1", "yes", "on"})
_FALSE: Final = frozenset({"false", "0", "no", "off"})


class UnknownParameterError(ParameterError):
    """A parameter name that is not declared; ``known`` lists the names that are."""

    def __init__(self, name: str, known: Iterable[str], owner: str = "") -> None:
        self.known = tuple(known)
        super().__init__(name, name, f"one of {list(self.known)}")
        where = f" of {owner}" if owner else ""
        self.args = (f"unknown parameter {name!r}{where}; known parameters: {list(self.known)}",)


class ParameterRefusedError(ParameterError, Refused):
    """A value within its declaration that the node cannot take (a change callback refused it).

    Nothing changed: the value and every callback that had already applied it were rolled back.
    ``reason`` is the callback's explanation.
    """

    def __init__(self, name: str, value: object, reason: str) -> None:
        self.reason = reason
        super().__init__(name, value, f"a value the node accepts ({reason})")


@dataclass(frozen=True, slots=True)
class ParameterChange:
    """One applied :meth:`ParameterStore.set`: ``old`` → ``new`` of parameter ``spec``.

    ``origin`` says who asked (free text, e.g. an update's request id; ``""`` for local code).
    ``changed`` is False when the new value equals the old one (nothing was notified).
    """

    spec: ParameterSpec
    old: ParameterValue
    new: ParameterValue
    origin: str = ""

    @property
    def name(self) -> str:
        """The parameter's name."""
        return self.spec.name

    @property
    def changed(self) -> bool:
        """True when the value is different from before (``type`` included: 1 vs True)."""
        return type(self.old) is not type(self.new) or self.old != self.new

    def reversed(self) -> ParameterChange:
        """The change that undoes this one."""
        return ParameterChange(self.spec, self.new, self.old, self.origin)

    def describe(self) -> str:
        """``param NAME changed OLD → NEW UNIT`` (or ``unchanged``), as the status topic says it."""
        unit = f" {self.spec.unit}" if self.spec.unit else ""
        if not self.changed:
            return f"param {self.name} unchanged ({format_value(self.new)}{unit})"
        return (
            f"param {self.name} changed {format_value(self.old)} → {format_value(self.new)}{unit}"
        )


ChangeCallback = Callable[[ParameterChange], object]


def parse_value(spec: ParameterSpec, text: str) -> ParameterValue:
    """``text`` as a value of parameter ``spec``, checked against its bounds.

    Floats take any Python float spelling (``0.5``, ``5e-1``; not ``nan`` / ``inf``), ints a
    decimal integer (``3``, not ``3.0``), booleans ``true/false``, ``1/0``, ``yes/no``, ``on/off``
    (any case). Raises :class:`ParameterError` naming the parameter, the text and what was
    expected.
    """
    if not isinstance(text, str):
        raise ParameterError(spec.name, text, "the value as text")
    word = text.strip()
    if spec.type is ParameterType.BOOL:
        lowered = word.lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise ParameterError(spec.name, text, "true or false")
    if spec.type is ParameterType.INT:
        try:
            number: int | float = int(word, 10)
        except ValueError:
            raise ParameterError(spec.name, text, f"an integer in {spec.bounds_text()}") from None
    else:
        try:
            number = float(word)
        except ValueError:
            raise ParameterError(spec.name, text, f"a number in {spec.bounds_text()}") from None
    return spec.check(number)


def select_specs(
    specs: Iterable[ParameterSpec], names: Iterable[str], *, missing_ok: bool = False
) -> tuple[ParameterSpec, ...]:
    """The declarations called ``names`` (in that order) out of ``specs`` — one node's share of
    a robot file's parameters.

    A name that is not declared raises :class:`UnknownParameterError`, or is skipped with
    ``missing_ok`` (for a robot file that leaves a tunable out and lets the node use its own
    default).
    """
    by_name = {spec.name: spec for spec in specs}
    chosen: list[ParameterSpec] = []
    for name in names:
        spec = by_name.get(name)
        if spec is None:
            if missing_ok:
                continue
            raise UnknownParameterError(name, by_name, "the robot file")
        chosen.append(spec)
    return tuple(chosen)


class ParameterStore:
    """Typed, bounded values of ``specs``, starting at their defaults (see the module docstring).

    ``values`` overrides some starting values (each checked like a :meth:`set`); ``owner`` names
    the holder in errors (``"node 'bridge_node'"``).
    """

    def __init__(
        self,
        specs: Iterable[ParameterSpec],
        values: Mapping[str, object] | None = None,
        *,
        owner: str = "",
    ) -> None:
        self.owner = owner
        self._specs: dict[str, ParameterSpec] = {}
        for spec in specs:
            if not isinstance(spec, ParameterSpec):
                raise ParameterError(str(spec), spec, "a ParameterSpec")
            if spec.name in self._specs:
                raise ParameterError(spec.name, spec, "each parameter declared once")
            self._specs[spec.name] = spec
        self._values: dict[str, ParameterValue] = {n: s.default for n, s in self._specs.items()}
        for name, value in (values or {}).items():
            self._values[name] = self.spec(name).check(value)
        self._lock = threading.RLock()
        self._appliers: tuple[ChangeCallback, ...] = ()
        self._watchers: tuple[ChangeCallback, ...] = ()

    # ---- reading -----------------------------------------------------------------------------
    @property
    def specs(self) -> tuple[ParameterSpec, ...]:
        """The declarations, in declaration order."""
        return tuple(self._specs.values())

    @property
    def names(self) -> tuple[str, ...]:
        """The parameter names, in declaration order."""
        return tuple(self._specs)

    def spec(self, name: str) -> ParameterSpec:
        """The declaration of ``name``; :class:`UnknownParameterError` if there is none."""
        spec = self._specs.get(name)
        if spec is None:
            raise UnknownParameterError(name, self._specs, self.owner)
        return spec

    def get(self, name: str) -> ParameterValue:
        """The current value of ``name`` (in the parameter's unit)."""
        self.spec(name)
        with self._lock:
            return self._values[name]

    def values(self) -> dict[str, ParameterValue]:
        """``{name: value}`` of every parameter, one consistent snapshot."""
        with self._lock:
            return dict(self._values)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __iter__(self) -> Iterator[str]:
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)

    # ---- changing ----------------------------------------------------------------------------
    def parse(self, name: str, text: str) -> ParameterValue:
        """``text`` as a checked value of parameter ``name`` (see :func:`parse_value`)."""
        return parse_value(self.spec(name), text)

    def set(self, name: str, value: object, *, origin: str = "") -> ParameterChange:
        """Set ``name`` to ``value``; returns the change, or raises :class:`ParameterError`.

        The value is checked against the declaration (type and bounds), then every
        :meth:`on_change` callback applies it (any may refuse it: the change is rolled back and
        :class:`ParameterRefusedError` raised), then :meth:`watch` callbacks are told. Setting
        the current value again is accepted and notifies no one.
        """
        spec = self.spec(name)
        new = spec.check(value)
        with self._lock:
            change = ParameterChange(spec, self._values[name], new, origin)
            if not change.changed:
                return change
            self._values[name] = new
            applied: list[ChangeCallback] = []
            for callback in self._appliers:
                try:
                    callback(change)
                except Exception as exc:
                    self._values[name] = change.old
                    self._undo(applied, change)
                    raise ParameterRefusedError(
                        name, value, f"{type(exc).__name__}: {exc}"
                    ) from exc
                applied.append(callback)
            for watcher in self._watchers:
                try:
                    watcher(change)
                except Exception:
                    _LOG.exception("parameter watcher %r raised on %s", watcher, change.describe())
            return change

    def set_text(self, name: str, text: str, *, origin: str = "") -> ParameterChange:
        """:meth:`set` with the value given as text (parsed per the parameter's type)."""
        return self.set(name, self.parse(name, text), origin=origin)

    @staticmethod
    def _undo(applied: list[ChangeCallback], change: ParameterChange) -> None:
        back = change.reversed()
        for callback in reversed(applied):
            try:
                callback(back)
            except Exception:
                _LOG.exception("rolling back %s: callback %r raised", change.describe(), callback)

    def on_change(self, callback: ChangeCallback) -> Callable[[], None]:
        """Call ``callback(change)`` for every change, before it counts: raising refuses it.

        Use it to apply a new value to whatever uses the parameter. Called on the thread that
        makes the change, with the store locked. Returns a function that removes the callback.
        """
        with self._lock:
            self._appliers = (*self._appliers, callback)
        return self._remover("_appliers", callback)

    def watch(self, callback: ChangeCallback) -> Callable[[], None]:
        """Call ``callback(change)`` after every committed change (its errors are only logged).

        Returns a function that removes the callback.
        """
        with self._lock:
            self._watchers = (*self._watchers, callback)
        return self._remover("_watchers", callback)

    def _remover(self, attribute: str, callback: ChangeCallback) -> Callable[[], None]:
        def remove() -> None:
            with self._lock:
                current: tuple[ChangeCallback, ...] = getattr(self, attribute)
                setattr(self, attribute, tuple(c for c in current if c is not callback))

        return remove

    def __repr__(self) -> str:
        return f"ParameterStore({self.values()!r})"


class NodeParameters:
    """The live parameters of ``node`` on the bus (see the module docstring).

    ``specs`` are the node's declarations (e.g. :func:`select_specs` of the robot model's
    ``parameters``); ``values`` overrides starting values. Publishes the first list at once.
    """

    def __init__(
        self,
        node: Node,
        specs: Iterable[ParameterSpec],
        values: Mapping[str, object] | None = None,
    ) -> None:
        self.node = node
        self.store = ParameterStore(specs, values, owner=f"node {node.name!r}")
        self._counter = itertools.count(1)
        self.publisher: NodePublisher[ParameterList] = node.create_publisher(
            PARAMETERS_TOPIC, ParameterList, LATCHED, managed=False
        )
        self.subscription: NodeSubscription[ParameterUpdate] = node.create_subscription(
            CONFIG_UPDATE_TOPIC, ParameterUpdate, self.handle_update, RELIABLE, managed=False
        )
        self.store.watch(self._announce)
        self.publish()

    @property
    def topic(self) -> str:
        """``/<ns>/parameters``."""
        return self.publisher.topic

    @property
    def update_topic(self) -> str:
        """``/<ns>/config_update``."""
        return self.subscription.topic

    # ---- the store's interface, for the node's own code ---------------------------------------
    def get(self, name: str) -> ParameterValue:
        """The current value of ``name``."""
        return self.store.get(name)

    def set(self, name: str, value: object, *, origin: str = "") -> ParameterChange:
        """Change ``name`` (see :meth:`ParameterStore.set`); a change is published and reported."""
        return self.store.set(name, value, origin=origin)

    def on_change(self, callback: ChangeCallback) -> Callable[[], None]:
        """Apply new values (see :meth:`ParameterStore.on_change`)."""
        return self.store.on_change(callback)

    # ---- the bus side ------------------------------------------------------------------------
    def snapshot(self) -> ParameterList:
        """The node's parameters and their current values as a message, stamped now."""
        values = self.store.values()
        return ParameterList(
            Header.now(),
            self.node.name,
            tuple(Parameter.of(spec, values[spec.name]) for spec in self.store.specs),
        )

    def publish(self) -> ParameterList:
        """Publish :meth:`snapshot` on ``/<ns>/parameters`` (latched) and return it."""
        with self.store._lock:  # lists go out in the order of the changes they show
            message = self.snapshot()
            if not self.publisher.closed:
                self.publisher.publish(message)
        return message

    def handle_update(self, update: ParameterUpdate) -> ParameterChange | None:
        """Apply ``update`` if it is addressed to this node; answer it on the status topic.

        Returns the change, or None when the update is for another node or was refused (the
        refusal is reported as an ERROR naming the parameter, the value and the bounds).
        """
        if update.node != self.node.name:
            return None
        try:
            change = self.store.set_text(update.name, update.value, origin=update.request_id)
        except ParameterError as exc:
            self._report(
                Level.ERROR,
                f"param {update.name} refused {update.value!r}: {exc}",
                update.request_id,
            )
            return None
        if not change.changed:  # nothing was announced: still answer the asker
            self._report(Level.OK, change.describe(), update.request_id)
        return change

    def _announce(self, change: ParameterChange) -> None:
        self.publish()
        self._report(Level.OK, change.describe(), change.origin)

    def _report(self, level: Level, text: str, origin: str) -> None:
        # A key of its own per report: two changes in a row must not be folded into one.
        self.node.report(level, text, origin.encode(), key=f"param:{next(self._counter)}")


__all__ = [
    "CONFIG_UPDATE_TOPIC",
    "PARAMETERS_TOPIC",
    "ChangeCallback",
    "NodeParameters",
    "ParameterChange",
    "ParameterError",
    "ParameterRefusedError",
    "ParameterStore",
    "UnknownParameterError",
    "parse_value",
    "select_specs",
]
