"""What a node says about its own health besides the heartbeat: loop timing and QoS events.

Where it sits: :mod:`jointbus.runtime`, used by :class:`jointbus.runtime.node.Node`; above the bus
(it publishes through bus publishers) and :mod:`jointbus.runtime.loop_stats`.

Two outputs, on two topics:

- ``/<ns>/diagnostics`` — one :class:`LoopDiagnostics` per rate loop of the node, once a second:
  the recent period and lateness distribution, overruns and CPU share of the loop (from
  :class:`~jointbus.runtime.loop_stats.LoopStatsSnapshot`). A message of its own rather than
  ``diagnostic_msgs/DiagnosticArray`` because its fields are typed numbers with SI units that a
  plot (Foxglove, ``jointbus topic echo``) can use directly, where DiagnosticArray carries strings.
- ``/<ns>/status`` — QoS events of the node's endpoints (a missed deadline, incompatible QoS, lost
  or malformed messages, a type mismatch), each as a ``Status`` of level WARN naming the topic and
  the endpoint (``data`` = the topic name), and failures of the node's own timers and loops as
  ERROR. Events arrive on whichever thread detected them; :class:`StatusReporter` only records them
  there and publishes from the node's timer thread, **at most once per second per (kind, topic,
  endpoint)** with a count of the events folded in, because a dead 500 Hz publisher with a 4 ms
  deadline raises 250 events a second and the status topic must stay readable. A folded report
  quotes one event (the newest) and its count covers the others: ``[19 times in 1.0 s]`` when
  all of them were the same (same text; for bus events, the same fields but their running
  counters), else ``[e.g.: 19 times in 1.0 s, 5 like this one]`` — a count of 19 behind one
  sample's details must not pass for 19 such samples (a "44 bytes from unknown (no attachment)"
  once covered 14 samples that had an attachment). A report published 0.25 s or more after the
  event it quotes says so: ``[0.8 s ago]``, ``[4 times in 1.1 s, the last 0.8 s ago]``.

Each :class:`LoopDiagnostics` also carries the node's **input totals**: per topic the node
subscribes to, the running totals of messages received (every one that arrived), malformed
(undecodable), refused (the malformed ones and the commands the node rejected, counted by
:meth:`~jointbus.runtime.node.NodeSubscription.note_refused`) and lost (sequence gaps of remote
publishers) — :class:`InputTotals`, malformed ⊆ refused ⊆ received, so bad input is a number a
plot or a monitor can follow, not only a report.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Self

from jointbus.bus import Publisher, QosEvent
from jointbus.codec.wire import Float64, String, UInt64
from jointbus.messages.base import Message
from jointbus.messages.errors import LimitError, ValidationError
from jointbus.messages.status import Level, Status
from jointbus.messages.std_msgs import Header
from jointbus.runtime.loop_stats import LoopStatsSnapshot

#: Default minimum interval (s) between two status reports of the same kind of QoS event.
EVENT_REPORT_INTERVAL_S: Final = 1.0
#: A report published this long (s) or more after its newest event says how long ago it was.
STALE_AFTER_S: Final = 0.25
#: Distinct shapes a folded report tells apart (more are counted, not told apart).
_SHAPES_KEPT: Final = 64
#: Event fields that change from one event to the next of the same shape: running counters, and
#: the raw payload and exception object (their ``size`` and ``error`` text are the shape).
_EVENT_VARYING: Final = frozenset({"payload", "cause"})

_UINT64_MAX: Final = 2**64 - 1
_FLOAT_FIELDS: Final = (
    "rate_hz",
    "period_target_s",
    "period_p50_s",
    "period_p99_s",
    "period_max_s",
    "lateness_p50_s",
    "lateness_p99_s",
    "lateness_max_s",
    "cpu_fraction",
    "spin_fraction",
    "achieved_rate_hz",
    "skipped_fraction",
)
_COUNT_FIELDS: Final = (
    "cycles",
    "window",
    "overruns",
    "skipped",
    "gc_collections",
    "window_skipped",
    "late_slots",
)


@dataclass(frozen=True, slots=True)
class InputTotals(Message):
    """Running totals of one input topic of a node (``jointbus_msgs``), since it subscribed.

    One meaning everywhere (every node, the array node and hb50's bridge alike), so that the
    counts add up: ``malformed`` ⊆ ``refused`` ⊆ ``received``.

    - ``received``: every message that arrived, decodable or not;
    - ``malformed``: those that could not be decoded as the topic's type (a NaN the message
      class refuses, bytes of another layout) — never applied, so also counted in ``refused``;
    - ``refused``: the malformed ones plus the decoded ones the node refused (a command out of
      limits, from a source not allowed, ...);
    - ``received − refused``: the messages that passed the node's checks — not all applied:
      an array node counts its impedance commands that passed them as ``command admitted`` or
      ``command not applied: <why>`` (stale, refused by the fallback, outranked, ...) in the
      diagnostics' :class:`EventCount` list (:data:`jointbus.nodes.array.node.NOT_APPLIED`);
    - ``lost``: messages remote publishers sent that never arrived (gaps in their sequence
      numbers; for a best-effort topic, what the transport dropped) — not among ``received``.

    Why malformed are received and refused: a user who sent 15 commands — 7 with a NaN, 5 out
    of limits, 3 valid — read ``received 8, malformed 7, refused 12`` (2026-12-06): refused
    larger than received. They now read ``received 15, malformed 7, refused 12``.
    """

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/InputTotals"
    topic: String = ""
    received: UInt64 = 0
    malformed: UInt64 = 0
    refused: UInt64 = 0
    lost: UInt64 = 0

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        if type(self.topic) is not str:
            raise ValidationError(tn, "topic", self.topic, "a str")
        for name in ("received", "malformed", "refused", "lost"):
            value = getattr(self, name)
            if type(value) is not int:
                raise ValidationError(tn, name, value, "an int count (uint64)")
            if not 0 <= value <= _UINT64_MAX:
                raise LimitError(tn, name, value, f"a count in [0, {_UINT64_MAX}] (uint64)")


def _sequence_of(
    type_name: str, field_name: str, value: object, item_type: type
) -> tuple[Any, ...]:
    """``value`` as a tuple of ``item_type`` messages (ValidationError naming the item if not)."""
    if type(value) is not tuple:
        if isinstance(value, str | bytes) or not hasattr(value, "__iter__"):
            raise ValidationError(
                type_name, field_name, value, f"a sequence of {item_type.__name__}"
            )
        value = tuple(value)
    assert isinstance(value, tuple)
    for index, item in enumerate(value):
        if type(item) is not item_type:
            raise ValidationError(
                type_name, f"{field_name}[{index}]", item, f"an {item_type.__name__}"
            )
    return value


@dataclass(frozen=True, slots=True)
class EventCount(Message):
    """How many events of one ``kind`` a node counted since it started (``jointbus_msgs``):
    e.g. an array node's ``limit held`` (a command held back at a joint's limit), ``limit
    position`` / ``limit speed`` (a joint measured past one) — the ones it reports on its status
    topic — or the hb50 bridge's ``command age <n> cycles`` (commands it applied, by their age:
    counts since the start, so two messages give the distribution over any span between them)."""

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/EventCount"
    kind: String = ""
    count: UInt64 = 0

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        if type(self.kind) is not str:
            raise ValidationError(tn, "kind", self.kind, "a str")
        if type(self.count) is not int:
            raise ValidationError(tn, "count", self.count, "an int count (uint64)")
        if not 0 <= self.count <= _UINT64_MAX:
            raise LimitError(tn, "count", self.count, f"a count in [0, {_UINT64_MAX}] (uint64)")


@dataclass(frozen=True, slots=True)
class LoopDiagnostics(Message):
    """Timing of one rate loop of one node over its recent window (``jointbus_msgs``).

    ``node`` and ``loop`` name it; ``rate_hz`` is the loop's target rate (Hz). Times are in seconds:
    period target / p50 / p99 / max (time between wake-ups), lateness p50 / p99 / max (wake-up
    minus deadline). ``cycles`` run since the loop (re)started, ``window`` = cycles the
    percentiles cover, ``overruns`` = cycles that woke a period or more late, ``skipped`` = grid
    slots dropped by them; ``cpu_fraction`` / ``spin_fraction`` = share of wall time in the body /
    busy-waiting; ``gc_collections`` run by the loop. What the loop *achieved* over the window:
    ``achieved_rate_hz`` = cycles run per second (Hz; ``rate_hz`` is only the target),
    ``window_skipped`` = grid slots dropped, ``skipped_fraction`` their share (0–1);
    ``late_slots`` = grid slots since the loop started that were served more than half a period
    late (a count, so two messages give the share over any span between them); the lateness
    figures count every grid slot, dropped ones included
    (:mod:`~jointbus.runtime.loop_stats`). NaN means "no sample yet" (a loop that has run fewer
    than two cycles), never an error. ``inputs``: the node's input totals, one
    :class:`InputTotals` per topic it subscribes to (the same in each of its loops' messages);
    ``events``: the node's counts of the events it reports, one :class:`EventCount` per kind
    (:meth:`~jointbus.runtime.node.Node.event_counts`).
    """

    TYPE_NAME: ClassVar[str] = "jointbus_msgs/msg/LoopDiagnostics"
    header: Header = field(default_factory=Header)
    node: String = ""
    loop: String = ""
    rate_hz: Float64 = math.nan
    cycles: UInt64 = 0
    window: UInt64 = 0
    period_target_s: Float64 = math.nan
    period_p50_s: Float64 = math.nan
    period_p99_s: Float64 = math.nan
    period_max_s: Float64 = math.nan
    lateness_p50_s: Float64 = math.nan
    lateness_p99_s: Float64 = math.nan
    lateness_max_s: Float64 = math.nan
    overruns: UInt64 = 0
    skipped: UInt64 = 0
    cpu_fraction: Float64 = math.nan
    spin_fraction: Float64 = math.nan
    gc_collections: UInt64 = 0
    achieved_rate_hz: Float64 = math.nan
    window_skipped: UInt64 = 0
    skipped_fraction: Float64 = math.nan
    late_slots: UInt64 = 0
    inputs: tuple[InputTotals, ...] = ()
    events: tuple[EventCount, ...] = ()

    def __post_init__(self) -> None:
        tn = self.TYPE_NAME
        if type(self.header) is not Header:
            raise ValidationError(tn, "header", self.header, "a std_msgs Header")
        object.__setattr__(self, "inputs", _sequence_of(tn, "inputs", self.inputs, InputTotals))
        object.__setattr__(self, "events", _sequence_of(tn, "events", self.events, EventCount))
        for name in ("node", "loop"):
            if type(getattr(self, name)) is not str:
                raise ValidationError(tn, name, getattr(self, name), "a str")
        for name in _FLOAT_FIELDS:
            value = getattr(self, name)
            if type(value) is not float:
                if isinstance(value, bool) or not isinstance(value, int | float):
                    raise ValidationError(tn, name, value, "a float (s, Hz or a fraction)")
                object.__setattr__(self, name, float(value))
        for name in _COUNT_FIELDS:
            value = getattr(self, name)
            if type(value) is not int:
                raise ValidationError(tn, name, value, "an int count (uint64)")
            if not 0 <= value <= _UINT64_MAX:
                raise LimitError(tn, name, value, f"a count in [0, {_UINT64_MAX}] (uint64)")

    @classmethod
    def from_snapshot(
        cls,
        node: str,
        loop: str,
        rate_hz: float,
        snapshot: LoopStatsSnapshot,
        *,
        header: Header | None = None,
        inputs: Sequence[InputTotals] = (),
        events: Sequence[EventCount] = (),
    ) -> Self:
        """The message for ``snapshot`` of loop ``loop`` of ``node``, stamped now by default,
        with the node's ``inputs`` totals and ``events`` counts."""
        return cls(
            header=header if header is not None else Header.now(),
            node=node,
            loop=loop,
            rate_hz=float(rate_hz),
            cycles=snapshot.cycles,
            window=snapshot.window,
            period_target_s=snapshot.period_target_s,
            period_p50_s=snapshot.period_p50_s,
            period_p99_s=snapshot.period_p99_s,
            period_max_s=snapshot.period_max_s,
            lateness_p50_s=snapshot.lateness_p50_s,
            lateness_p99_s=snapshot.lateness_p99_s,
            lateness_max_s=snapshot.lateness_max_s,
            overruns=snapshot.overruns,
            skipped=snapshot.skipped,
            cpu_fraction=snapshot.cpu_fraction,
            spin_fraction=snapshot.spin_fraction,
            gc_collections=snapshot.gc_collections,
            achieved_rate_hz=snapshot.achieved_rate_hz,
            window_skipped=snapshot.window_skipped,
            skipped_fraction=snapshot.skipped_fraction,
            late_slots=snapshot.late_slots,
            inputs=tuple(inputs),
            events=tuple(events),
        )


@dataclass(slots=True)
class _Pending:
    level: Level
    text: str
    data: bytes
    count: int
    first_ns: int
    shape: Hashable
    #: Events folded in per shape (at most ``_SHAPES_KEPT`` shapes told apart).
    shapes: dict[Hashable, int]
    last_ns: int = 0  # when the newest event was recorded

    def fold(self, level: Level, text: str, data: bytes, shape: Hashable, now_ns: int) -> None:
        self.level = max(self.level, level)
        self.text, self.data, self.shape = text, data, shape
        self.last_ns = now_ns
        self.count += 1
        if shape in self.shapes or len(self.shapes) < _SHAPES_KEPT:
            self.shapes[shape] = self.shapes.get(shape, 0) + 1
        else:
            self.shapes[_UNTOLD] = self.shapes.get(_UNTOLD, 0) + 1

    def folded_text(self, now_ns: int) -> str:
        """The newest event's text, with what the count covers (module docstring) and, when it
        is published :data:`STALE_AFTER_S` or more after it happened, how long ago: a folded
        "still rising [4 times in 1.1 s]" published after the robot stood read as current."""
        age_s = (now_ns - self.last_ns) / 1e9
        late = age_s >= STALE_AFTER_S
        if self.count == 1:
            return f"{self.text} [{age_s:.1f} s ago]" if late else self.text
        span = f"{self.count} times in {(now_ns - self.first_ns) / 1e9:.1f} s"
        if late:
            span += f", the last {age_s:.1f} s ago"
        if len(self.shapes) == 1 and _UNTOLD not in self.shapes:
            return f"{self.text} [{span}]"
        return f"{self.text} [e.g.: {span}, {self.shapes.get(self.shape, 1)} like this one]"


#: The shape of events folded in beyond the ones told apart.
_UNTOLD: Final = object()


def event_shape(event: QosEvent) -> Hashable:
    """What makes two bus events "the same" for a folded report: their class and fields, but not
    the running counters (``total_count``...) nor the raw payload and exception object, which
    differ in every event (their ``size`` and ``error`` text count)."""
    fields = tuple(
        (f.name, repr(getattr(event, f.name)))
        for f in dataclasses.fields(event)
        if "count" not in f.name and f.name not in _EVENT_VARYING
    )
    return (type(event).__name__, *fields)


class StatusReporter:
    """Collects problems from any thread; :meth:`flush` publishes them as ``Status`` reports.

    ``node`` is the reporting node's name, ``publisher`` its ``/<ns>/status`` publisher, ``clock``
    a monotonic clock (ns) and ``interval_s`` the minimum time (s) between two reports with the
    same key; problems recorded in between are folded into the next report with their count.
    ``recorded`` counts problems seen, ``reported`` statuses published.
    """

    def __init__(
        self,
        node: str,
        publisher: Publisher[Status],
        clock: Callable[[], int],
        *,
        interval_s: float = EVENT_REPORT_INTERVAL_S,
    ) -> None:
        self.node = node
        self.publisher = publisher
        self.interval_ns = round(interval_s * 1e9)
        self.recorded = 0
        self.reported = 0
        self._clock = clock
        self._lock = threading.Lock()
        self._pending: dict[tuple[str, ...], _Pending] = {}
        self._last_report: dict[tuple[str, ...], int] = {}

    def record_event(self, event: QosEvent) -> None:
        """Note a bus QoS event as a WARN (on the thread that detected it; never publishes)."""
        self.record(
            Level.WARN,
            (type(event).__name__, event.topic, event.endpoint),
            event.describe(),
            event.topic.encode(),
            shape=event_shape(event),
        )

    def record(
        self,
        level: Level,
        key: tuple[str, ...],
        text: str,
        data: bytes = b"",
        *,
        shape: Hashable | None = None,
    ) -> None:
        """Note a problem of ``level``; reports with the same ``key`` are rate-limited together.

        ``data`` goes into the status's ``data`` field (the topic, for QoS events). ``shape``
        says which folded problems are the same (default: the text): a report that folds
        problems of several shapes says its text is an example (module docstring).
        """
        form = text if shape is None else shape
        with self._lock:
            self.recorded += 1
            pending = self._pending.get(key)
            now = self._clock()
            if pending is None:
                self._pending[key] = _Pending(level, text, data, 1, now, form, {form: 1}, now)
            else:
                pending.fold(level, text, data, form, now)

    def flush(self) -> int:
        """Publish problems whose key was not reported in the last interval; returns how many."""
        now = self._clock()
        with self._lock:
            due: list[_Pending] = []
            for key, pending in list(self._pending.items()):
                last = self._last_report.get(key)
                if last is not None and now - last < self.interval_ns:
                    continue
                due.append(pending)
                del self._pending[key]
                self._last_report[key] = now
        for pending in due:
            text = pending.folded_text(now)
            if self.publisher.closed:
                break
            self.publisher.publish(Status.of(pending.level, self.node, text, pending.data))
            self.reported += 1
        return len(due)


__all__ = [
    "EVENT_REPORT_INTERVAL_S",
    "InputTotals",
    "LoopDiagnostics",
    "StatusReporter",
    "event_shape",
]
