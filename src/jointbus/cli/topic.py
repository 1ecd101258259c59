"""``jointbus topic list | echo | hz | pub``: look at and inject topic traffic from a terminal.

Where it sits: :mod:`jointbus.cli` (the top layer), registered as the ``topic`` group of
:mod:`jointbus.cli.main`. Messages are turned into text by :mod:`jointbus.cli.render` and built from
typed VALUES by :mod:`jointbus.cli.values`; this module joins the bus and runs the commands.

**Joining with no flags.** Every command opens a :class:`jointbus.bus.Bus` with Zenoh's default
jointbus scheme (:class:`jointbus.bus.ZenohConfig`): the first jointbus process on the host listens
on ``tcp/127.0.0.1:7447`` and later ones connect to it, so ``make demo`` in one terminal and
``jointbus topic echo /hb50/bridge_data`` in another find each other. ``--hub-port``
(``JOINTBUS_HUB_PORT``), ``--connect`` (``JOINTBUS_CONNECT``, space-separated) and ``--router``
(``JOINTBUS_ROUTER``) reach other setups; ``--domain-id`` (``ROS_DOMAIN_ID``) picks the ROS
domain. The CLI's endpoints belong to the hidden node ``_jointbus_cli_<pid>`` (a leading ``_``
hides a node, as in ROS 2).

**How each command listens.** ``echo`` subscribes with the topic's type, found by discovery (or
``--type``), and a QoS every publisher can serve (best effort unless all publishers are reliable;
transient-local only if all are, so a latched topic shows its last message). ``hz`` and the
rates of ``list`` only need arrival times, so they count samples on the topic's Zenoh key without
decoding them: a 500 Hz topic costs the CLI nothing but the count, and works for types this
installation does not know. Rates use arrival times on this host, as ``ros2 topic hz`` does:
``list`` reports ``(n − 1) / (t_last − t_first)`` of the ``n`` messages received in its window,
with ``n``, and no rate (``—``) when fewer than two arrived.

**Errors** (unknown type, bad VALUES, topic not found, a topic of another type) are one line on
stderr starting with ``error:`` and exit code 1; Ctrl-C ends a command quietly (exit 0).
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import json
import math
import queue
import statistics
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Final

import typer

from jointbus.cli.errors import CliError, note, user_errors
from jointbus.cli.interrupts import stop_on_interrupt
from jointbus.cli.options import (
    BusOptions,
    cli_node_name,
    joins_bus,
    looked_on,
    refuse_denied,
    where_to_look,
)
from jointbus.cli.report_times import next_report_at

if TYPE_CHECKING:
    from jointbus.bus import Bus, EndpointInfo, QosEvent, QosProfile, TopicInfo
    from jointbus.messages.base import Message
    from jointbus.messages.registry import TypeRegistry

#: How long ``pub`` keeps its session open after the last message (s), so a reliable message is
#: on the wire before the process exits.
PUB_LINGER_S: Final = 0.3
#: Depth of ``echo``'s subscription queue: a burst the terminal cannot print at once is kept.
ECHO_DEPTH: Final = 100
#: ``jointbus.cli.render.DEFAULT_PRECISION`` and the names of ``jointbus.bus.PROFILES``, spelled
#: out so that declaring the options imports neither (``tests/cli/test_cli_topic.py`` compares).
DEFAULT_PRECISION: Final = 6
QOS_PROFILE_NAMES: Final = ("MAB_RT", "RELIABLE", "LATCHED", "SUBSCRIPTION_DEFAULT")

app = typer.Typer(
    help="List topics, print their messages, measure their rate, publish.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


# ---- types ---------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, slots=True)
class TopicType:
    """A topic's message type: the class users work with and the wire record the bus carries.

    They are the same class except for the typed Python-facing types (the multi-DoF
    ``JointState``, the single-joint Player commands) whose bytes go through a wire record.
    """

    facing: type[Any]
    wire: type[Message]

    @property
    def name(self) -> str:
        """The ROS 2 type name."""
        return self.wire.TYPE_NAME

    def for_display(self, record: Message) -> Any:
        """A received wire record as the type users work with (the record if that fails)."""
        if self.facing is self.wire:
            return record
        from_wire = getattr(self.facing, "from_wire", None)
        if from_wire is None:
            return record
        try:
            return from_wire(record)
        except (ValueError, TypeError):
            return record

    def for_wire(self, value: Any) -> Message:
        """A message built as the facing type, as the record the bus carries."""
        if isinstance(value, self.wire):
            return value
        record: Message = value.to_wire()
        return record


def _message_classes() -> Iterator[type[Message]]:
    from jointbus.messages.base import Message

    stack: list[type[Message]] = list(Message.__subclasses__())
    while stack:
        cls = stack.pop()
        yield cls
        stack.extend(cls.__subclasses__())


def resolve_type(type_name: str, registry: TypeRegistry | None = None) -> TopicType:
    """The :class:`TopicType` of ``type_name`` (``pkg/msg/Name`` or ``pkg/Name``).

    Without ``registry``, the generic core's types are tried first and every robot's only for a
    name the core does not know: loading the runtime's and every robot's message modules costs
    ``topic pub geometry_msgs/msg/Twist`` a tenth of a second of start-up it does not need (the
    core's registry is a subset of :func:`~jointbus.tools.known_types.known_registry`, same
    classes). Raises CliError naming close matches (or every known type) when the name is unknown.
    """
    from jointbus.messages.base import Message
    from jointbus.messages.registry import UnknownTypeError, default_registry

    try:
        if registry is None:
            try:
                facing = default_registry().by_type_name(type_name)
            except UnknownTypeError:
                # every message type of every robot, which `estop` / `mode` never need
                from jointbus.tools.known_types import known_registry

                facing = known_registry().by_type_name(type_name)
        else:
            facing = registry.by_type_name(type_name)
    except UnknownTypeError as exc:
        close = difflib.get_close_matches(type_name, exc.known, n=3, cutoff=0.6)
        hint = (
            f"did you mean {', '.join(close)}?" if close else f"known types: {', '.join(exc.known)}"
        )
        raise CliError(f"unknown message type {type_name!r}; {hint}") from None
    if isinstance(facing, type) and issubclass(facing, Message):
        return TopicType(facing, facing)
    wire = getattr(facing, "WIRE", None)
    if wire is None:
        wire = next((c for c in _message_classes() if c.TYPE_NAME == facing.TYPE_NAME), None)
    if not (isinstance(wire, type) and issubclass(wire, Message)):
        raise CliError(f"message type {type_name!r} has no wire record the bus can carry")
    return TopicType(facing, wire)


def raw_record_type(topic_type: TopicType) -> TopicType:
    """The plain wire dataclass that carries ``topic_type``'s bytes, as a TopicType of its own.

    ``topic pub --unchecked`` builds that record unvalidated: a typed class (the Beam Bots
    ``JointState``) converts through its record with ``to_wire()``, which would validate again.
    """
    cls = topic_type.wire
    if "to_wire" not in vars(cls):
        return TopicType(cls, cls)
    for candidate in _message_classes():
        if (
            candidate.TYPE_NAME == cls.TYPE_NAME
            and "to_wire" not in vars(candidate)
            and hasattr(candidate, "__dataclass_fields__")
        ):
            return TopicType(candidate, candidate)
    raise CliError(f"message type {cls.TYPE_NAME!r} has no wire record to send unchecked")


# ---- discovery -----------------------------------------------------------------------------------
def wait_for_topic(bus: Bus, topic: str, timeout_s: float) -> TopicInfo | None:
    """The topic's discovery record once it has a publisher, or None after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        remaining = deadline - time.monotonic()
        for info in bus.discover(max(0.05, min(0.5, remaining))):
            if info.name == topic and info.publishers:
                return info
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.1)


def _not_found(bus: Bus, topic: str, timeout_s: float) -> CliError:
    names = [t.name for t in bus.discover(0.2) if t.publishers]
    close = difflib.get_close_matches(topic, names, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return CliError(
        f"topic {topic} has no publisher (waited {timeout_s:g} s; {looked_on(bus)}){hint} "
        "— `jointbus topic list` shows the topics; give --type TYPE to wait for it anyway"
    )


def _single_type(info: TopicInfo) -> str:
    if len(info.type_names) > 1:
        raise CliError(
            f"topic {info.name} has endpoints of several types ({', '.join(info.type_names)}); "
            "choose one with --type"
        )
    return info.type_name


def subscriber_qos(publishers: Sequence[EndpointInfo], depth: int = ECHO_DEPTH) -> QosProfile:
    """A subscription QoS that every one of ``publishers`` can serve (see the module docstring)."""
    from jointbus.bus import Durability, QosProfile, Reliability

    reliable = bool(publishers) and all(p.qos.reliable for p in publishers)
    latched = bool(publishers) and all(p.qos.transient_local for p in publishers)
    return QosProfile(
        Reliability.RELIABLE if reliable else Reliability.BEST_EFFORT,
        depth,
        Durability.TRANSIENT_LOCAL if latched else Durability.VOLATILE,
        name="cli",
    )


def _report_event(event: QosEvent) -> None:
    note(f"warning: {event.describe()}")


# ---- rates -------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, slots=True)
class RateStats:
    """``ros2 topic hz`` figures over the intervals in a window (rate in Hz, periods in s)."""

    rate_hz: float
    min_s: float
    max_s: float
    std_dev_s: float
    window: int


class RateWindow:
    """The last ``size`` intervals between arrivals (monotonic ns) and their statistics."""

    def __init__(self, size: int) -> None:
        if type(size) is not int or size < 1:
            raise CliError(f"--window {size!r} is invalid: expected an integer >= 1")
        self._intervals: deque[float] = deque(maxlen=size)
        self._last_ns: int | None = None

    def add(self, arrival_ns: int) -> None:
        """Record one arrival."""
        if self._last_ns is not None:
            self._intervals.append((arrival_ns - self._last_ns) / 1e9)
        self._last_ns = arrival_ns

    def stats(self) -> RateStats | None:
        """The window's statistics; None before two arrivals."""
        intervals = list(self._intervals)
        if not intervals:
            return None
        mean = statistics.fmean(intervals)
        return RateStats(
            1.0 / mean if mean > 0 else math.inf,
            min(intervals),
            max(intervals),
            statistics.pstdev(intervals, mean),
            len(intervals),
        )


class PublisherWindows:
    """A :class:`RateWindow` per publisher of one topic (keyed by the id its samples carry: the
    GID of the rmw_zenoh attachment, the DDS writer's handle; ``None`` for samples without one),
    in the order they were first heard, and whether each was heard since the last report.

    Why beside the topic's one window: ``topic hz`` times every arrival together, as ``ros2 topic
    hz`` does, so a user's 500 Hz controller beside the control node reads 1000 Hz, and its own
    rate is nowhere (new-user trial, 2026-12-07: "no tool gives my controller's rate")."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._windows: dict[int | None, RateWindow] = {}
        self._fresh: set[int | None] = set()

    def add(self, publisher: int | None, arrivals: Sequence[int]) -> None:
        """Record ``publisher``'s arrivals (monotonic ns, oldest first)."""
        window = self._windows.get(publisher)
        if window is None:
            window = self._windows[publisher] = RateWindow(self._size)
        for t in arrivals:
            window.add(t)
        if arrivals:
            self._fresh.add(publisher)

    def take(self) -> list[tuple[int | None, RateStats | None, bool]]:
        """Each publisher heard so far: its id, its window's statistics (``None`` before two
        arrivals) and whether it sent anything since the last call."""
        fresh, self._fresh = self._fresh, set()
        return [(p, w.stats(), p in fresh) for p, w in self._windows.items()]


class ArrivalRecorder:
    """Arrival times (monotonic ns) of every sample on a topic, not decoded (the transport's raw
    tap: every sample on the topic's Zenoh keys, or of every DDS writer of the topic), also kept
    per publisher (the GID of the rmw_zenoh attachment, the DDS writer's handle, as an int;
    ``None`` for a sample without one)."""

    def __init__(self, bus: Bus, topic: str) -> None:
        transport = bus.transport
        if transport is None:
            raise CliError("the bus has no network transport")
        self._lock = threading.Lock()
        self._times: list[tuple[int, int | None]] = []
        self.heard = False
        """Whether any sample has arrived since the recorder was made (drains keep it)."""
        self._sub: Any = transport.tap(topic, self._on_sample, _known_type)

    def _on_sample(self, publisher: int | None) -> None:
        now = time.monotonic_ns()
        with self._lock:
            self._times.append((now, publisher))
            self.heard = True

    def _take(self) -> list[tuple[int, int | None]]:
        with self._lock:
            times, self._times = self._times, []
        return times

    def drain(self) -> list[int]:
        """The arrivals since the last call, oldest first (every publisher's together)."""
        return [t for t, _ in self._take()]

    def drain_by_publisher(self) -> dict[int | None, list[int]]:
        """The arrivals since the last call per publisher GID, each oldest first."""
        by_publisher: dict[int | None, list[int]] = {}
        for t, publisher in self._take():
            by_publisher.setdefault(publisher, []).append(t)
        return by_publisher

    def close(self) -> None:
        """Stop counting."""
        with contextlib.suppress(Exception):
            self._sub.undeclare()


class StampRecorder:
    """The header stamps (ns since the epoch) of every sample on a topic whose type starts with
    a ``std_msgs/Header``, read from the CDR bytes (never decoded): the times the publisher
    stamped, which a burst of queued samples does not compress. Until :meth:`stamped` says the
    type has such a header, nothing is recorded."""

    def __init__(self, bus: Bus, topic: str) -> None:
        transport = bus.transport
        if transport is None:
            raise CliError("the bus has no network transport")
        from jointbus.codec.cdr import header_stamp_ns  # here: the CLI starts without the codec

        self._stamp_of = header_stamp_ns
        self._lock = threading.Lock()
        self._stamps: list[int] = []
        self._stamped = False
        self._sub: Any = transport.tap_payloads(topic, self._on_sample, _known_type)

    def stamped(self, type_name: str) -> bool:
        """Record from now on if ``type_name`` begins with a header; whether it does."""
        self._stamped = has_header(type_name)
        return self._stamped

    def _on_sample(self, _publisher: int | None, payload: bytes) -> None:
        if not self._stamped:
            return
        stamp = self._stamp_of(payload)
        if stamp is not None:
            with self._lock:
                self._stamps.append(stamp)

    def drain(self) -> list[int]:
        """The stamps since the last call, in arrival order."""
        with self._lock:
            stamps, self._stamps = self._stamps, []
        return stamps

    def close(self) -> None:
        """Stop recording."""
        with contextlib.suppress(Exception):
            self._sub.undeclare()


def has_header(type_name: str) -> bool:
    """Whether the message type ``type_name`` (known to this installation) begins with a
    ``std_msgs/Header`` field, whose stamp is then the first 8 bytes after the CDR
    encapsulation."""
    from jointbus.messages.std_msgs import Header

    cls = _known_type(type_name)
    if cls is None:
        return False
    as_dataclass: Any = cls  # every Message is a dataclass (ClassVars are no fields)
    fields = dataclasses.fields(as_dataclass)
    return bool(fields) and fields[0].name == "header" and fields[0].type in (Header, "Header")


def stamp_rate(stamps: Sequence[int]) -> float | None:
    """The rate (Hz) by the samples' header stamps — in the publisher's clock, simulated time for a
    simulated robot: (n − 1) / (newest − oldest stamp) of ``stamps`` (ns); ``None`` with fewer
    than two or no span."""
    if len(stamps) < 2:
        return None
    span = max(stamps) - min(stamps)
    return (len(stamps) - 1) / (span / 1e9) if span > 0 else None


def _known_type(type_name: str) -> type[Message] | None:
    """The wire class of ``type_name`` if this installation knows it (a DDS tap then matches
    writers that announce their type information), else None."""
    try:
        resolve_type(type_name)  # loads every known message class
    except CliError:
        return None
    from jointbus.codec.schema import schema_of

    for cls in _message_classes():
        if getattr(cls, "TYPE_NAME", None) == type_name:
            try:
                schema_of(cls)  # the class whose fields are the wire record's
            except Exception:
                continue
            return cls
    return None


def measured_rate(arrivals: Sequence[int]) -> float | None:
    """Rate (Hz) of the messages received: ``(n − 1) / (t_last − t_first)`` of their arrival
    times (monotonic ns) — what was received, not what a publisher was configured for.

    ``None`` for fewer than two arrivals: one message (a 1 Hz heartbeat in a 1 s window) or none
    has no interval to measure, and dividing the count by the window would print a rate that
    depends on where the window fell (0 or 2 Hz for 1 Hz)."""
    from jointbus.tools.message_rate import interval_rate

    return interval_rate(len(arrivals), arrivals[0], arrivals[-1]) if arrivals else None


@dataclasses.dataclass(frozen=True, slots=True)
class TopicRate:
    """What ``topic list`` measured on one topic: the summed rate of its publishers.

    ``rate_hz`` is the sum of each publisher's :func:`measured_rate` (``None``: no publisher
    sent two messages); N nodes heartbeating at 1 Hz are N Hz. One rate over every publisher's
    arrivals together would measure the gap between two nodes' messages (two heartbeats 0.3 s
    apart read 3.3 Hz). ``lower_bound``: some publisher sent a single message, which adds to the
    rate but cannot be measured, so the true total is more. ``messages`` and ``publishers``
    count what arrived.
    """

    rate_hz: float | None
    messages: int
    publishers: int
    lower_bound: bool = False


def summed_rate(by_publisher: Mapping[int | None, Sequence[int]]) -> TopicRate:
    """The :class:`TopicRate` of arrival times (monotonic ns) grouped per publisher."""
    rates = [measured_rate(arrivals) for arrivals in by_publisher.values()]
    measured = [r for r in rates if r is not None]
    return TopicRate(
        math.fsum(measured) if measured else None,
        sum(len(a) for a in by_publisher.values()),
        len(by_publisher),
        bool(measured) and len(measured) < len(rates),
    )


def rate_text(rate: TopicRate, latched: bool = False) -> str:
    """The RATE cell: ``58.1 Hz (59 msgs)``, ``2.0 Hz (6 msgs from 2 publishers)``, ``— (1
    msg)`` when no publisher sent two, ``≥ 50.0 Hz (...)`` when one sent a single message.
    ``latched``: every publisher offers the topic transient-local — published on change, not at
    a rate (``/tf_static``) — so no rate reads ``latched (0 msgs)``, as ``jointbus info`` says
    of such a topic, not ``— (0 msgs)`` (new-user trial, 2026-12-05: it looked dead)."""
    msgs = f"{rate.messages} msg" + ("" if rate.messages == 1 else "s")
    if rate.publishers > 1:
        msgs += f" from {rate.publishers} publishers"
    if rate.rate_hz is None:
        return f"{'latched' if latched else '—'} ({msgs})"
    return f"{'≥ ' if rate.lower_bound else ''}{rate.rate_hz:.1f} Hz ({msgs})"


# ---- topic list --------------------------------------------------------------------------------
def describe_endpoints(endpoints: Sequence[EndpointInfo]) -> str:
    """The PUBLISHERS / SUBSCRIBERS cell: node names (``name (x2)`` for two endpoints of one node);
    endpoints created without a node are counted per Zenoh session (one per bus, normally one per
    process), e.g. ``2 without node (session 4b27c0a1)``; ``-`` when there are none."""
    named = [e.node for e in endpoints if e.node]
    parts = [n if (c := named.count(n)) == 1 else f"{n} (x{c})" for n in dict.fromkeys(named)]
    anonymous = [e.zid or "this process" for e in endpoints if not e.node]
    for zid in dict.fromkeys(anonymous):
        parts.append(f"{anonymous.count(zid)} without node (session {zid[:8]})")
    return ", ".join(parts) or "-"


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


@app.command("list")
@joins_bus()
def list_topics(
    measure: Annotated[
        float,
        typer.Option(
            "--measure",
            min=0.0,
            help="Seconds to listen for measuring rates (0: do not measure). A publisher's "
            "rate is (n-1)/(t_last-t_first) of the n messages received from it in that time; "
            "with fewer than 2 messages no rate is measured for it. RATE is the sum over the "
            "topic's publishers (N nodes at 1 Hz: N Hz), shown with the messages (and "
            "publishers) it rests on: '— (1 msg)' / '— (0 msgs)' when no publisher has a rate "
            "('latched (0 msgs)' when every publisher offers it transient-local: published on "
            "change, not at a rate), "
            "'≥' when some have none (a 1 Hz topic needs --measure 2 or more). On DDS the "
            "window begins once every topic was heard (at most 3 s): DDS matches a reader "
            "with the writers only after discovery.",
        ),
    ] = 1.0,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON document on stdout.")] = False,
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.01, help="Seconds to wait for discovery answers.")
    ] = 1.0,
    *,
    bus_options: BusOptions,
) -> None:
    """Topics on the network: type, publishing nodes, subscribers and measured rate.

    Exit 1 when no topic is found where it looked (--json prints [] first).
    """
    with user_errors():
        bus = bus_options.open_bus()
        where = looked_on(bus)
        hint = where_to_look(bus)
        try:
            topics = bus.discover(timeout)
            rates: dict[str, TopicRate] = {}
            if measure > 0:
                recorders = {t.name: ArrivalRecorder(bus, t.name) for t in topics if t.publishers}
                if bus.zenoh is None:
                    _await_dds_matching(list(recorders.values()))
                time.sleep(measure)
                for name, recorder in recorders.items():
                    rates[name] = summed_rate(recorder.drain_by_publisher())
                    recorder.close()
        finally:
            bus.close()
        if as_json:
            out = [
                {
                    "name": t.name,
                    "type": t.type_name,
                    "types": list(t.type_names),
                    "publishers": [_endpoint_json(e) for e in t.publishers],
                    "subscribers": [_endpoint_json(e) for e in t.subscribers],
                    "rate_hz": rates[t.name].rate_hz if t.name in rates else None,
                    "rate_is_lower_bound": rates[t.name].lower_bound if t.name in rates else None,
                    "messages_measured": rates[t.name].messages if t.name in rates else None,
                    "publishers_measured": rates[t.name].publishers if t.name in rates else None,
                    "measure_s": measure if measure > 0 else None,
                    "latched": _latched(t),
                }
                for t in topics
            ]
            typer.echo(json.dumps(out, indent=2))
        if not topics:  # "nothing there" is exit 1, as for estop, mode, topic echo
            raise CliError(
                f"no topics found ({where}; is a jointbus program running there? "
                f"{hint})"
            )
        if as_json:
            return
        rows = [["TOPIC", "TYPE", "RATE", "PUBLISHERS", "SUBSCRIBERS"]]
        for t in topics:
            if t.name in rates:
                rate = rate_text(rates[t.name], _latched(t))
            else:
                rate = "-" if measure > 0 else "not measured"
            type_text = " | ".join(t.type_names) + (
                " (TYPE CONFLICT)" if len(t.type_names) > 1 else ""
            )
            rows.append(
                [
                    t.name,
                    type_text,
                    rate,
                    describe_endpoints(t.publishers),
                    describe_endpoints(t.subscribers),
                ]
            )
        typer.echo(_table(rows))


def _latched(topic: TopicInfo) -> bool:
    """Every publisher of ``topic`` offers it transient-local (none: not latched)."""
    return bool(topic.publishers) and all(e.qos.transient_local for e in topic.publishers)


#: Longest wait (s) on DDS for the rate recorders' readers to match the writers before
#: ``topic list`` starts its window: matching took 1–1.6 s in a user's trial (2026-12-07).
DDS_MATCH_WAIT_S: Final = 3.0


def _await_dds_matching(recorders: Sequence[ArrivalRecorder]) -> None:
    """Wait until every recorder heard a sample (at most :data:`DDS_MATCH_WAIT_S`), then forget
    what arrived meanwhile. Why: a DDS reader receives only once discovery matched it with the
    writers, and the window began when the readers were made — with the default ``--measure 1``
    a user's ``topic list --rmw rmw_cyclonedds_cpp`` read ``— (0 msgs)`` for a 500 Hz
    ``bridge_data`` in 4 runs of 4, and bursts of what matched first (1002.8 Hz from 24
    messages). A topic that publishes more slowly than the wait is measured as before."""
    deadline = time.monotonic() + DDS_MATCH_WAIT_S
    while time.monotonic() < deadline and not all(r.heard for r in recorders):
        time.sleep(0.05)
    for recorder in recorders:
        recorder.drain()


def _endpoint_json(e: EndpointInfo) -> dict[str, Any]:
    return {"node": e.node, "qos": e.qos.describe(), "zid": e.zid}


# ---- topic echo --------------------------------------------------------------------------------
#: ``topic echo`` / ``hz --duration``: time listened, from when the bus is open — "no messages
#: within 3 s" must mean 3 s of listening, not of the command's start-up.
ListenSeconds = Annotated[
    float | None,
    typer.Option(
        "--duration",
        min=0.0,
        help="Stop after listening this many seconds (counted once the bus is open, not "
        "from the command's start).",
    ),
]


@app.command("echo")
@joins_bus()
def echo(  # noqa: PLR0917 (typer options)
    topic: Annotated[
        str, typer.Argument(metavar="TOPIC", help="Topic name, e.g. /hb50/bridge_data.")
    ],
    type_name: Annotated[
        str | None,
        typer.Option("--type", "-t", help="Message type (default: found by discovery)."),
    ] = None,
    once: Annotated[bool, typer.Option("--once", help="Print one message and exit.")] = False,
    count: Annotated[
        int | None, typer.Option("--count", "-n", min=1, help="Print N messages and exit.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object per message and line.")
    ] = False,
    precision: Annotated[
        int,
        typer.Option(
            "--precision",
            min=0,
            max=17,
            help="Significant digits of floats in text output (0: full precision).",
        ),
    ] = DEFAULT_PRECISION,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            min=0.0,
            help="Seconds to wait for the topic to appear. Then it waits for messages as long as "
            "the topic has a publisher: once its last publisher has left, --once / --count end "
            "with an error.",
        ),
    ] = 5.0,
    duration: ListenSeconds = None,
    *,
    bus_options: BusOptions,
) -> None:
    """Print the messages of TOPIC, decoded: readable text (or --json lines)."""
    from jointbus.bus import validate_topic_name
    from jointbus.cli.render import render_json, render_text

    with user_errors(), stop_on_interrupt():  # SIGTERM ends it as Ctrl-C does
        validate_topic_name(topic)
        limit = 1 if once else count
        topic_type = resolve_type(type_name) if type_name is not None else None
        bus = bus_options.open_bus()
        started = time.monotonic()  # --duration counts from here, as topic hz's does
        where = looked_on(bus)  # said after the bus has closed
        try:
            publishers: tuple[EndpointInfo, ...] = ()
            info = wait_for_topic(bus, topic, timeout if topic_type is None else 0.0)
            if info is not None:
                publishers = info.publishers
            if topic_type is None:
                if info is None:
                    raise _not_found(bus, topic, timeout)
                topic_type = resolve_type(_single_type(info))
            elif info is not None and topic_type.name not in info.type_names:
                note(
                    f"warning: {topic} is published as {', '.join(info.type_names)}, "
                    f"not {topic_type.name}: those messages will not be shown"
                )
            received = _echo_loop(
                bus,
                topic,
                topic_type,
                subscriber_qos(publishers),
                limit=limit,
                end=None if duration is None else started + duration,
                show=(
                    render_json
                    if as_json
                    else (lambda m: render_text(m, precision=precision or None) + "\n---")
                ),
                # a publisher seen, then gone (a bag's `play` ended): waiting on for --once would
                # hang for good (a user's trial, 2026-12-06: 11 minutes, until Ctrl-C)
                watch=limit is not None and bool(publishers),
            )
        finally:
            bus.close()
        if limit is not None and received < limit:
            if duration is not None and time.monotonic() >= started + duration:
                raise CliError(
                    f"received {received} of {limit} message(s) on {topic} within {duration:g} s"
                )
            raise CliError(
                f"received {received} of {limit} message(s) on {topic}: it has no publisher any "
                f"more (checked for {_GONE_CHECKS * _GONE_CHECK_S:g} s; {where})"
            )


#: ``topic echo --once`` / ``--count``: seconds of silence between two checks that the topic
#: still has a publisher, and how many checks in a row must find none before it gives up.
_GONE_CHECK_S: Final = 1.0
_GONE_CHECKS: Final = 2


def _echo_loop(
    bus: Bus,
    topic: str,
    topic_type: TopicType,
    qos: QosProfile,
    *,
    limit: int | None,
    end: float | None,
    show: Callable[[Any], str],
    watch: bool = False,
) -> int:
    """Print what arrives until ``limit`` messages, ``end`` (monotonic s) or — ``watch`` — the
    topic has had no publisher at :data:`_GONE_CHECKS` checks in a row, one every
    :data:`_GONE_CHECK_S` s of silence (discovery is a network round trip: not per message)."""
    inbox: queue.SimpleQueue[Message] = queue.SimpleQueue()
    bus.subscribe(
        topic,
        topic_type.wire,
        inbox.put,
        qos,
        realtime=True,
        node=cli_node_name(),
        on_event=_report_event,
    )
    received = 0
    gone = 0
    check_at = time.monotonic() + _GONE_CHECK_S
    while limit is None or received < limit:
        wait = 0.2
        if end is not None:
            wait = min(wait, end - time.monotonic())
            if wait <= 0:
                break
        try:
            record = inbox.get(timeout=wait)
        except queue.Empty:
            if watch and time.monotonic() >= check_at:
                published = any(t.name == topic and t.publishers for t in bus.discover(0.3))
                gone = 0 if published else gone + 1
                if gone >= _GONE_CHECKS and inbox.empty():
                    break
                check_at = time.monotonic() + _GONE_CHECK_S
            continue
        gone = 0
        check_at = time.monotonic() + _GONE_CHECK_S
        received += 1
        typer.echo(show(topic_type.for_display(record)))
        sys.stdout.flush()
    return received


# ---- topic hz ----------------------------------------------------------------------------------
def format_rate(stats: RateStats) -> str:
    """The two lines ``ros2 topic hz`` prints."""
    return (
        f"average rate: {stats.rate_hz:.3f}\n"
        f"\tmin: {stats.min_s:.3f}s max: {stats.max_s:.3f}s "
        f"std dev: {stats.std_dev_s:.5f}s window: {stats.window}"
    )


@app.command("hz")
@joins_bus()
def hz(
    topic: Annotated[str, typer.Argument(metavar="TOPIC", help="Topic name.")],
    window: Annotated[
        int, typer.Option("--window", "-w", min=1, help="Intervals kept for the statistics.")
    ] = 10_000,
    duration: ListenSeconds = None,
    period: Annotated[
        float, typer.Option("--period", min=0.05, help="Seconds between two reports.")
    ] = 1.0,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object per report and line.")
    ] = False,
    *,
    bus_options: BusOptions,
) -> None:
    """Measure the publishing rate of TOPIC (rate and period min/max/std, like ros2 topic hz).

    Two rates. "average rate" (JSON rate_hz) is by arrival: (n-1) / (last - first arrival) of
    the last --window+1 arrivals (1 / their mean interval), what ros2 topic hz prints (it too
    times arrivals only, on its node's clock). It is what reached this process: a burst of
    queued samples (when it starts, or when a busy host starved it) counts as rate, so a 500 Hz
    publisher may read 525 Hz. For a type that begins with a header, "by header stamps" (JSON
    stamp_rate_hz; null for a type without one, and in a first report made before the
    topic's type was known, and with more than one publisher, whose stamps are not one clock's) is
    (n-1) / (newest - oldest stamp) of the same samples: the
    rate in the publisher's own clock, which is the wall clock's only where its stamps are. A
    simulated robot stamps simulated time (and a controller stamps its command with the frame
    it answers): while the simulation falls behind the wall clock, this rate reads higher than
    the rate by the wall clock (83 Hz by stamps against 27 Hz arriving, on a starved host).

    Both count every publisher of TOPIC together: your 500 Hz controller beside the control
    node reads 1000 Hz. With more than one publisher heard, each one's own rate by arrival
    follows, named by its node and id (JSON publishers: always, one entry each).

    A report made later than --period asks (this process did not run: a busy host) says by how
    much (JSON report_late_s: always).
    """
    from jointbus.bus import validate_topic_name

    with user_errors(), stop_on_interrupt():  # SIGTERM ends it as Ctrl-C does
        validate_topic_name(topic)
        rates = RateWindow(window)
        publishers = PublisherWindows(window)
        names: dict[int, str] = {}  # publisher id -> its node, once the graph named it
        bus = bus_options.open_bus()
        where = looked_on(bus)  # every "nothing there" says where it looked
        total = 0
        stamps: deque[int] = deque(maxlen=window + 1)
        try:
            recorder = ArrivalRecorder(bus, topic)
            stamp_recorder = StampRecorder(bus, topic)
            # --duration is time listened: from the subscription on, not from the command's
            # start — "no messages within 3 s" must mean 3 s of listening (opening the bus
            # took 0.2-0.45 s of them before, on DDS, idle and beside three CPU hogs)
            started = time.monotonic()
            end = None if duration is None else started + duration
            info = wait_for_topic(bus, topic, 0.0)
            if info is None:
                note(f"warning: topic {topic} does not appear to be published yet ({where})")
            stamped = info is not None and _stamped(stamp_recorder, info)
            next_report = started + period
            while end is None or time.monotonic() < end:
                time.sleep(max(0.0, min(next_report, end or math.inf) - time.monotonic()))
                by_publisher = recorder.drain_by_publisher()
                arrivals = sorted(t for times in by_publisher.values() for t in times)
                for t in arrivals:
                    rates.add(t)
                for publisher, times in by_publisher.items():
                    publishers.add(publisher, times)
                total += len(arrivals)
                if not stamped and arrivals:  # its type is known once it is published
                    info = wait_for_topic(bus, topic, 0.0)
                    stamped = info is not None and _stamped(stamp_recorder, info)
                stamps.extend(stamp_recorder.drain())
                now = time.monotonic()
                if now >= next_report:
                    late_s = now - next_report
                    next_report = next_report_at(next_report, now, period)
                    heard = _publisher_rates(bus, publishers, names)
                    _hz_report(
                        topic,
                        rates.stats(),
                        bool(arrivals),
                        as_json,
                        # one rate by stamps is one clock's: two controllers answering the same
                        # frames stamp each frame twice (a trial read 500 Hz, then 998 Hz)
                        stamp_rate_hz=stamp_rate(stamps) if len(heard) < 2 else None,
                        publishers=heard,
                        stamped=stamped,
                        late_s=late_s,
                        period_s=period,
                    )
        finally:
            bus.close()
        if duration is not None and total == 0:
            raise CliError(f"no messages on {topic} within {duration:g} s ({where})")


def _stamped(recorder: StampRecorder, info: TopicInfo) -> bool:
    """Whether ``info``'s topic has one type, beginning with a header (``recorder`` then
    records its stamps)."""
    return len(info.type_names) == 1 and recorder.stamped(info.type_names[0])


@dataclasses.dataclass(frozen=True, slots=True)
class PublisherRate:
    """One publisher's part of a ``topic hz`` report: its node (``""``: not in the graph, or
    created without a node), its id as hex (``None``: its samples carry none), its window's
    statistics (``None`` before two arrivals) and whether it sent since the last report."""

    node: str
    gid: str | None
    stats: RateStats | None
    fresh: bool

    @property
    def label(self) -> str:
        """``control_node (publisher 3f2a9c01)``: the node and the first 8 hex digits of the id."""
        who = self.node or "a publisher of no known node"
        if self.gid is None:
            return f"{who} (samples without a publisher id)"
        return f"{who} (publisher {self.gid[:8]})"

    def line(self) -> str:
        """Its indented line under the topic's rate."""
        if not self.fresh or self.stats is None:
            return f"\t  {self.label}: no new messages"
        s = self.stats
        return (
            f"\t  {self.label}: {s.rate_hz:.3f} Hz  min: {s.min_s:.3f}s max: {s.max_s:.3f}s "
            f"std dev: {s.std_dev_s:.5f}s window: {s.window}"
        )

    def to_json(self) -> dict[str, Any]:
        """Its entry of ``--json``'s ``publishers`` list."""
        record: dict[str, Any] = {"node": self.node, "gid": self.gid, "new_messages": self.fresh}
        record.update(dataclasses.asdict(self.stats) if self.stats is not None else {})
        return record


def _publisher_rates(
    bus: Bus, publishers: PublisherWindows, names: dict[int, str]
) -> list[PublisherRate]:
    """Each publisher's rate, named by the graph's record of its id (``remote_info``), or by
    the name that record gave before (``names``, updated here): a node that has left takes its
    graph record with it, and a trial's report of its last messages read ``"node": ""``."""
    transport = bus.transport
    out = []
    for gid, stats, fresh in publishers.take():
        info = None if gid is None or transport is None else transport.remote_info(gid)
        if gid is not None and info is not None and info.node:
            names[gid] = info.node
        node = "" if gid is None else names.get(gid, "")
        out.append(PublisherRate(node, None if gid is None else f"{gid:032x}", stats, fresh))
    return out


def _hz_report(
    topic: str,
    stats: RateStats | None,
    fresh: bool,
    as_json: bool,
    *,
    stamp_rate_hz: float | None = None,
    publishers: Sequence[PublisherRate] = (),
    late_s: float = 0.0,
    period_s: float = 1.0,
    stamped: bool = False,
) -> None:
    """One report: the topic's rate over every arrival, then — with more than one publisher
    heard — each publisher's (``--json``: always, as ``publishers``); ``stamped``: the type has
    a header (its rate by stamps is given for one publisher only); ``late_s``: how long after
    its due time (every ``period_s``) it is made, said when :func:`report_is_late`."""
    late = report_is_late(late_s, period_s)
    if as_json:
        record: dict[str, Any] = {"topic": topic, "new_messages": fresh}
        record.update(dataclasses.asdict(stats) if stats is not None else {})
        record["stamp_rate_hz"] = stamp_rate_hz
        record["publishers"] = [p.to_json() for p in publishers]
        record["report_late_s"] = round(late_s, 3)
        typer.echo(json.dumps(record))
    elif not fresh or stats is None:
        typer.echo("no new messages" + (f" ({late_text(late_s)})" if late else ""))
    else:
        typer.echo(format_rate(stats))
        if stamp_rate_hz is not None:
            typer.echo(f"\tby header stamps: {stamp_rate_hz:.3f} (in the publisher's clock)")
        if len(publishers) > 1:
            if stamped:
                typer.echo(
                    "\tby header stamps: none (more than one publisher: their stamps are not "
                    "one clock's)"
                )
            typer.echo(
                f"\t{len(publishers)} publishers (the rate above counts them together), each:"
            )
            for publisher in publishers:
                typer.echo(publisher.line())
        if late:
            typer.echo(
                f"\t({late_text(late_s)}; the rate by arrival counts what reached this "
                "process, in a burst once it ran again)"
            )
    sys.stdout.flush()


#: A ``topic hz`` report made later than its due time by more than this share of ``--period``
#: (and by :data:`LATE_REPORT_MIN_S` at least) says so: a trial on a loaded host (2026-12-07)
#: had one report come about 4 s after the one before, at ``--period 1``, with nothing said.
LATE_REPORT_SHARE: Final = 0.25
#: Lateness (s) below which a report is never called late, whatever ``--period`` (a sleep on a
#: busy host wakes some ms late).
LATE_REPORT_MIN_S: Final = 0.1


def report_is_late(late_s: float, period_s: float) -> bool:
    """Whether a report made ``late_s`` after its due time, at one per ``period_s``, says so."""
    return late_s > max(LATE_REPORT_MIN_S, LATE_REPORT_SHARE * period_s)


def late_text(late_s: float) -> str:
    """What a late report says of itself."""
    return (
        f"this report is {late_s:.2f} s late: this process did not run when it was due "
        "(a busy host)"
    )


# ---- topic pub ---------------------------------------------------------------------------------
#: ``topic pub --rate`` names the rate it achieved when it falls short of the asked one by more
#: than this share (0–1): a 20 Hz stream published at 19.5 Hz is what was asked.
PUB_RATE_TOLERANCE: Final = 0.05


@dataclasses.dataclass(slots=True)
class PublishTimes:
    """When ``topic pub`` published (monotonic s): the first, the last, how many and the
    longest gap between two — kept as running figures, not a list, so an endless stream at
    1 kHz holds four numbers."""

    count: int = 0
    first_s: float = math.nan
    last_s: float = math.nan
    longest_gap_s: float = 0.0

    def add(self, now_s: float) -> None:
        """One publish at ``now_s`` (monotonic s)."""
        if self.count:
            self.longest_gap_s = max(self.longest_gap_s, now_s - self.last_s)
        else:
            self.first_s = now_s
        self.last_s = now_s
        self.count += 1

    @property
    def rate_hz(self) -> float | None:
        """The rate achieved by the wall clock, (n − 1) / (last − first) (Hz); ``None`` before
        two publishes."""
        if self.count < 2:
            return None
        span = self.last_s - self.first_s
        return (self.count - 1) / span if span > 0 else math.inf


def pub_summary(topic: str, sent: int, rate_hz: float, times: PublishTimes) -> str:
    """The line ``topic pub`` ends with: how many messages it published on ``topic``, and —
    when it published at least two at ``rate_hz`` (Hz) and achieved less than
    (1 − :data:`PUB_RATE_TOLERANCE`) of it — the rate it achieved by the wall clock
    (:attr:`PublishTimes.rate_hz`), the rate asked and the longest gap between two publishes (s).

    Why: on a host at load 33 a user's ``--rate 20`` averaged 13.8 Hz with gaps up to 1.9 s and
    printed only ``published 199 messages`` (2026-12-06): a count that read as 20 Hz."""
    text = f"published {sent} message{'' if sent == 1 else 's'} on {topic}"
    achieved = times.rate_hz
    if achieved is None or achieved >= rate_hz * (1.0 - PUB_RATE_TOLERANCE):
        return text
    gap = times.longest_gap_s
    return (
        f"{text}: {achieved:.1f} Hz by the wall clock, short of the {rate_hz:g} Hz asked "
        f"(longest gap {gap:.2f} s; a busy host?)"
    )


def _refuse_another_type(bus: Bus, topic: str, topic_type: TopicType) -> None:
    """CliError when another program's endpoints carry ``topic`` with another type."""
    for info in bus.discover(0.3):
        others = {e.type_name for e in (*info.publishers, *info.subscribers) if not e.local}
        if info.name == topic and others and topic_type.name not in others:
            raise CliError(
                f"topic {topic} carries {', '.join(sorted(others))}, not {topic_type.name}"
            )


# ---- topic pub ---------------------------------------------------------------------------------
def refuse_what_the_receiver_refuses(message: Message, given: Mapping[str, Any]) -> None:
    """Raise :class:`~jointbus.cli.values.ValuesError` when ``message`` leaves empty a field its
    receiving node refuses empty (``RECEIVER_REQUIRES``): a ``JointImpedance`` without
    ``source_node`` is a valid message, yet the array node refuses every one, and ``topic pub``
    printed "published 100" for a stream of which nothing was applied (a user's trial). The CLI
    does not fill in a name of its own: arbitration ranks senders by that name (the default
    source owns the array, another one takes it over only as a steady stream), so which one to
    be is the user's choice. ``given``: the VALUES as parsed (a field left out is "missing")."""
    from jointbus.cli.values import MISSING, ValuesError

    for field, expected in type(message).RECEIVER_REQUIRES:
        if getattr(message, field) == "":
            value = given.get(field, MISSING)
            raise ValuesError(
                field,
                value,
                f"{expected}: {message.TYPE_NAME}'s receiver refuses every message without it; "
                f"give it in VALUES, e.g. '{{{field}: teleop, ...}}'",
            )


@app.command("pub")
@joins_bus()
def pub(  # noqa: PLR0917 (typer options)
    topic: Annotated[str, typer.Argument(metavar="TOPIC", help="Topic name.")],
    type_name: Annotated[str, typer.Argument(metavar="TYPE", help="e.g. hb50_commons/msg/Status")],
    values: Annotated[
        str,
        typer.Argument(
            metavar="VALUES", help="Field values as YAML or JSON, e.g. '{level: 2, status: hello}'."
        ),
    ] = "{}",
    rate: Annotated[
        float, typer.Option("--rate", "-r", min=0.001, help="Publishing rate (Hz).")
    ] = 1.0,
    once: Annotated[
        bool, typer.Option("--once", "-1", help="Publish one message and exit.")
    ] = False,
    count: Annotated[
        int | None, typer.Option("--count", "-n", min=1, help="Publish N messages and exit.")
    ] = None,
    qos_name: Annotated[
        str, typer.Option("--qos", help=f"QoS profile: {', '.join(QOS_PROFILE_NAMES)}.")
    ] = "RELIABLE",
    wait_matching: Annotated[
        float,
        typer.Option(
            "--wait-matching",
            min=0.0,
            help="Seconds to wait for a subscriber before the first message.",
        ),
    ] = 2.0,
    auto_stamp: Annotated[
        bool,
        typer.Option(
            "--auto-stamp/--no-auto-stamp",
            help="Stamp headers without a stamp with the current time.",
        ),
    ] = True,
    unchecked: Annotated[
        bool,
        typer.Option(
            "--unchecked",
            help="Send VALUES as given, skipping the message's own checks (NaN, lengths, "
            "limits, signs), to test that the receiver refuses them. Fields keep their wire "
            "types.",
        ),
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Print each published message (JSON) on stdout.")
    ] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", hidden=True, help="The default; kept for scripts.")
    ] = False,
    *,
    bus_options: BusOptions,
) -> None:
    """Publish a message built from VALUES on TOPIC: once, N times, or at --rate until Ctrl-C.

    VALUES is YAML (JSON works too) naming the fields; missing fields take their defaults (0,
    '', an empty list) and the message's own checks still apply to them, so a per-joint array
    must be given, one value per name (every array of JointImpedance and JointCommand; the error
    names a missing one). A header without a stamp is stamped with the current wall-clock time
    at each publish. A command must name its sender in source_node (JointImpedance,
    JointCommand): its receiver ranks commands by it and refuses every one without, so topic pub
    refuses such VALUES up front. The array's default source (control_node) owns the array;
    another name takes it over only while it keeps publishing at >= 10 Hz.
    --unchecked sends content the message itself would refuse (NaN, short arrays, negative
    gains): a receiver such as the bridge must reject it and report it. Quiet by
    default (a 100 Hz stream would flood the terminal): one line on stderr when it ends says how
    many messages were published and, when they went out more than 5 % slower than --rate (a
    busy host), the rate achieved by the wall clock and the longest gap; --verbose prints each
    one.
    A topic carries no answer, so "published" says nothing of whether a receiver applied it: a
    refusal is reported on the receiver's status topic (e.g. `topic echo /arm6/status`). A served
    array's one-shot commands (`/arm6/actarray/position`, `…/joints_command`, …) are also
    services of the same name: `jointbus service call` prints the ACK or NACK and exits 2 on a
    refusal.
    """
    from jointbus.bus import PROFILES, validate_topic_name
    from jointbus.cli.array_joint_names import naming_the_joint
    from jointbus.cli.render import render_json
    from jointbus.cli.values import ValuesError, build_message, parse_values

    with user_errors(), stop_on_interrupt():  # SIGTERM ends it as Ctrl-C does
        validate_topic_name(topic)
        topic_type = resolve_type(type_name)
        data = parse_values(values)
        qos = PROFILES.get(qos_name)
        if qos is None:
            raise CliError(
                f"--qos {qos_name!r} is not a profile; expected one of {', '.join(PROFILES)}"
            )

        def make() -> Message:
            try:
                if unchecked:  # the wire record itself: the typed facing classes validate
                    raw: Message = build_message(
                        topic_type.wire, data, auto_stamp=auto_stamp, unchecked=True
                    )
                    raw.to_cdr()  # fields of the wrong wire type fail here, before the network
                    return raw
                return topic_type.for_wire(
                    build_message(topic_type.facing, data, auto_stamp=auto_stamp)
                )
            except ValuesError:
                raise
            except (ValueError, TypeError) as exc:  # the message's own validation, shown as is
                notes = "".join(f" ({n})" for n in getattr(exc, "__notes__", ()))
                # a Player command names its joint by index: the array's server names it
                named = naming_the_joint(exc, topic, bus_options.open_bus)
                raise CliError(f"{named}{notes}") from None

        if unchecked:
            topic_type = raw_record_type(topic_type)
        first = make()  # bad VALUES fail before anything joins the network
        if not unchecked:
            refuse_what_the_receiver_refuses(first, data)
        if unchecked:
            note(f"--unchecked: {topic_type.name} sent without its own checks")
        total = 1 if once else count
        sent = 0
        times = PublishTimes()
        failed = False
        bus = bus_options.open_bus()
        try:
            publisher = bus.publisher(
                topic, topic_type.wire, qos, node=cli_node_name(), on_event=_report_event
            )
            deadline = time.monotonic() + wait_matching
            while not publisher.remote_matched and time.monotonic() < deadline:
                time.sleep(0.01)
            if not publisher.remote_matched:
                # A subscriber of another type never matches (the type is in the key or topic
                # type): ask discovery only now, so a matched publisher does not wait for it.
                _refuse_another_type(bus, topic, topic_type)
                refuse_denied(bus, publisher, wait_matching)  # announced but never routed
                note(f"no subscriber of {topic} after {wait_matching:g} s; publishing anyway")
            next_at = time.monotonic()
            msg = first
            echo = verbose and not quiet
            if total is None:
                note(f"publishing on {topic} at {rate:g} Hz (Ctrl-C stops)")
            while total is None or sent < total:
                publisher.publish(msg)
                times.add(time.monotonic())
                sent += 1
                if echo:
                    typer.echo(f"publishing #{sent}: {render_json(msg)}")
                    sys.stdout.flush()
                if total is not None and sent >= total:
                    break
                next_at += 1.0 / rate
                time.sleep(max(0.0, next_at - time.monotonic()))
                msg = make()
            time.sleep(PUB_LINGER_S)
        except KeyboardInterrupt:
            raise  # stopped (Ctrl-C, SIGTERM): the line below, also while it waited for a
            # subscriber (a user's `timeout -s INT 10` on a busy host ended it there, silent)
        except BaseException:
            failed = not sent  # an error before any message says what failed, nothing more
            raise
        finally:
            if not failed:
                note(pub_summary(topic, sent, rate, times))
            bus.close()


__all__ = [
    "DEFAULT_PRECISION",
    "ECHO_DEPTH",
    "PUB_LINGER_S",
    "PUB_RATE_TOLERANCE",
    "QOS_PROFILE_NAMES",
    "ArrivalRecorder",
    "PublishTimes",
    "RateStats",
    "RateWindow",
    "StampRecorder",
    "TopicRate",
    "TopicType",
    "app",
    "describe_endpoints",
    "format_rate",
    "measured_rate",
    "pub_summary",
    "rate_text",
    "raw_record_type",
    "refuse_what_the_receiver_refuses",
    "resolve_type",
    "stamp_rate",
    "subscriber_qos",
    "summed_rate",
    "wait_for_topic",
]
