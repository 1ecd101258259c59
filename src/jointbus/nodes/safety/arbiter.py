"""Which source's joint commands the bridge applies: the default controller or a faster custom one.

Where it sits: :mod:`jointbus.nodes.safety` (used by the array node and hb50's bridge), after
:mod:`~jointbus.nodes.safety.command_check`
(only commands that would be applied are offered — valid, answering a frame younger than the
watchdog time, admitted by a running fallback — so a source whose commands are refused or dropped
never gains control)
and before the watchdog. Pure logic: every method takes the time as ``now_ns`` (monotonic
nanoseconds) and never reads a clock, so tests are deterministic.

The rule (Honey Badger 5.0's, seed 001): the default source (``control_node``) owns the actuators;
a custom source that keeps publishing at ≥ ``takeover_hz`` (10 Hz) takes priority; when it falls
below that rate or stops, control returns to the default source within ``fallback_s`` (100 ms).

How "keeps publishing at ≥ 10 Hz" is measured — per custom source, the arrival times of its
valid commands within a sliding window of ``window_s`` (default 0.5 s):

- **Measured rate** = mean arrival rate over the window, ``(count − 1) / (newest − oldest)``: the
  inverse of the mean interval. (Counting arrivals per window length instead would let a 9 Hz
  source take over: five of its commands fit in 0.5 s.)
- **A gap restarts the measurement**: a command arriving more than ``fallback_s`` after the
  previous one from the same source clears that source's history first. A source must therefore
  publish *steadily* to qualify, and a source that slowed down cannot take control back on the
  strength of its earlier, faster commands still in the window.
- **Takeover** — a custom source takes over when its window holds at least
  ``ceil(takeover_hz · window_s)`` commands (5 for 10 Hz over 0.5 s), its measured rate is
  ≥ ``takeover_hz``, *and* their arrivals span at least :attr:`Arbiter.takeover_s` =
  ``(min_count − 1) / takeover_hz`` (0.4 s): the time the rule needs to see a source at the
  threshold keep it. Why 0.5 s: a stray command or two never takes the robot (it needs five
  valid commands with no gap). Why the span, for fast sources too: the seed's source must
  *maintain* 10 Hz, and a rate measured over a few milliseconds does not say that. A controller
  starved by its host (its process stopped, or beside a CPU hog) woke up and sent five fresh
  commands within 0.1 ms: a mean of 40 kHz, and it took the robot from ``control_node``, went
  quiet again, and lost it 100 ms later (a user's trial, 2026-12-06). Every source now shows
  the same 0.4 s of steady publishing, so control changes hands at most once per 0.4 s of a
  source's steady stream, whatever its rate: a 500 Hz controller takes over after ≈ 200
  commands (0.4 s) rather than 5 (8 ms). Until then its commands are reported as not applied
  only if it keeps sending for the whole window without taking over (the array node's
  ``_outranked``).
- **Back-off** — a custom source that lost control (silent or too slow) needs twice as long a
  steady stream for its next takeover, four times after two losses, eight times after three or
  more (0.8, 1.6, 3.2 s), counting the losses of the last :data:`BACKOFF_MEMORY_S` (10 s); the
  steady stream is timed from its first command after its last gap, so it may be longer than
  the window. Why: a controller its host keeps starving (a CPU hog beside it, stalls of
  100–140 ms) took the robot and lost it 7 times in 12 s, each change a re-entry ramp of up to
  0.43 rad and the body bouncing between 0.27 and 0.33 m (a user's trial, 2026-12-06). With the
  back-off it gets at most four changes in any 10 s; a controller that stops once and runs
  again later takes over after 0.4 s as before. A takeover after a back-off says how long it
  needed (:attr:`OwnerChanged.needed_s`).
- **Fallback** — the owner loses control when nothing came from it for more than ``fallback_s``
  (``"silent"``), or when its measured rate fell below ``takeover_hz``
  (``"rate_below_threshold"``; also when fewer than two commands remain in the window, where no
  rate can be measured). The silence rule is what makes a stopped source fall back within 100 ms
  rather than after the window drains, and it also catches any slowdown below 10 Hz within
  100 ms, since such a source leaves gaps longer than 100 ms. ``fallback_s`` must therefore be
  ≥ ``1/takeover_hz``, otherwise a source exactly at the threshold would lose control between two
  of its own commands; the constructor refuses such a configuration.
- **The rate a report names** (:meth:`Arbiter.measure`, :attr:`OwnerChanged.measure`) is a
  :class:`RateMeasure`: the mean ``(count − 1) / (last − first)`` over the commands in the
  source's window, *stated with what it rests on* — ``'teleop': 201 commands sent in 400.0 ms
  (500.0 Hz)`` — so every figure printed is true of the commands it names. On takeover the times
  are the send stamps the source put in its commands (``offer(..., sent_ns=header stamp)``) when
  they increase strictly, else the arrival times; on a fallback for rate they are the arrival
  times, the measure the decision used. Why the send stamps on takeover: arrivals bunch up
  whenever the transport or the host delays one command and delivers it with the next (a steady
  500 Hz source's five takeover commands arrived within 5.5 ms: 728.6 Hz by arrivals, 500.0 Hz by
  its stamps); the stamps are used only when no two of them are more than ``fallback_s`` apart (a
  source stopped for 1 s and resumed said "148 commands sent in 1.41 s (104.3 Hz)", its stall
  inside a figure the rule had measured over 0.4 s without a gap: the arrival times then, the same
  as the rule's). Why a mean over stated commands and not a "typical" interval: this used to be
  the inverse of the *median* stamped interval, which no stretch of the stream ever showed — a 500
  Hz loop that ran late and caught up (intervals 2, 5, 0.2, 0.8 ms) read 714 Hz, and
  ``examples/own_controller.py`` against the demo was reported "publishes at 793.9 Hz" and "575.5
  Hz" while its recording showed 500/s over its first 0.05 s and 455/s overall. The window's
  commands are what a takeover rests on (0.4 s of them), so the figure is their mean, saying so.
  Measured after that change, when five commands sufficed (two runs of ``own_controller.py
  --duration 8`` against ``jointbus demo`` on the shared, loaded 2-CPU host; five takeovers, host
  stalls made it fall back twice): 505.6, 259.0, 585.6, 500.9 and 500.6 Hz, each over the 5
  commands it names (6.8–15.4 ms) and each equal to (n − 1) / span of the first five header stamps
  of that stretch in the recording. Decisions still use arrival times only, which a source cannot
  forge and which are what the node actually gets.
- A source publishing *exactly* at the threshold is on the boundary and its ownership may flap with
  jitter; publish comfortably faster (controllers run at 500 Hz).
- The default source is never measured: it owns whenever no custom source does (silence of the
  owner is the watchdog's business, not arbitration's). While a custom source owns, other custom
  sources wait; when it falls back, the next qualifying custom source (if any) takes over.

Every change of owner is an :class:`OwnerChanged` event, collected until :meth:`Arbiter.take_events`
so the bridge can report it on ``/hb50/status``.
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from dataclasses import dataclass
from typing import Final

__all__ = ["BACKOFF_MEMORY_S", "Arbiter", "OwnerChanged", "RateMeasure"]

_NS_PER_S: Final = 1_000_000_000

#: s: a source's losses of control within this long before a takeover double the steady time
#: it needs (see the module docstring's *Back-off*).
BACKOFF_MEMORY_S: Final = 10.0
#: :data:`BACKOFF_MEMORY_S` in ns.
_BACKOFF_MEMORY_NS: Final = round(BACKOFF_MEMORY_S * _NS_PER_S)
#: The most doublings of the takeover time a source's recent losses bring (0.4 s → 3.2 s).
_BACKOFF_MAX: Final = 3

#: :attr:`OwnerChanged.reason` values.
TAKEOVER: Final = "takeover"
RATE_LOW: Final = "rate_below_threshold"
SILENT: Final = "silent"

#: :attr:`RateMeasure.basis` values: the times a measure rests on.
SENT: Final = "sent"
ARRIVED: Final = "arrived"


@dataclass(frozen=True, slots=True)
class RateMeasure:
    """How fast ``count`` commands of a source came: the first and the last were ``span_ns``
    apart, by the times they were ``basis`` (:data:`SENT`: the source's own header stamps;
    :data:`ARRIVED`: when the node received them).

    :attr:`hz` is their mean rate, ``(count − 1) / span`` — true of exactly these commands, which
    :meth:`describe` names with it.
    """

    count: int
    span_ns: int
    basis: str

    @property
    def hz(self) -> float:
        """Mean rate (Hz); 0.0 for fewer than two commands, ``inf`` for two or more at one
        instant."""
        if self.count < 2:
            return 0.0
        return (self.count - 1) * _NS_PER_S / self.span_ns if self.span_ns > 0 else math.inf

    def describe(self) -> str:
        """``5 commands sent in 8.0 ms (500.0 Hz)``: the figure and what it rests on."""
        span_s = self.span_ns / _NS_PER_S
        span = f"{span_s * 1e3:.1f} ms" if span_s < 1.0 else f"{span_s:.2f} s"
        return f"{self.count} commands {self.basis} in {span} ({self.hz:.1f} Hz)"


@dataclass(frozen=True, slots=True)
class OwnerChanged:
    """Control passed from ``old`` to ``new`` at ``at_ns``.

    ``reason``: ``"takeover"`` (``new`` reached the rate threshold), ``"rate_below_threshold"`` or
    ``"silent"`` (``old`` fell below it or stopped). ``measure`` is the rate of the source that
    caused the change (``new`` on takeover, ``old`` on fallback) over the commands in its window
    (see the module docstring for which times).
    """

    old: str
    new: str
    reason: str
    at_ns: int
    measure: RateMeasure
    #: On a takeover after a back-off: the steady stream it needed (s); 0.0 otherwise.
    needed_s: float = 0.0

    @property
    def rate_hz(self) -> float:
        """:attr:`measure`'s mean rate (Hz)."""
        return self.measure.hz

    def why(self) -> str:
        """The reason and its figure: ``silent: 'squat' went silent``."""
        if self.reason == TAKEOVER:
            why = f"{self.new!r}: {self.measure.describe()}"
            if self.needed_s > 0.0:
                why += (
                    f"; steady for {self.needed_s:g} s, as it had stopped, slowed or been refused "
                    f"and lost the actuators within {BACKOFF_MEMORY_S:g} s"
                )
        elif self.reason == SILENT:
            why = f"{self.old!r} went silent"
        else:
            why = f"{self.old!r} fell below the threshold: {self.measure.describe()}"
        return f"{self.reason}: {why}"

    def describe(self) -> str:
        """One line for a status report."""
        return f"command owner {self.old!r} -> {self.new!r} ({self.why()})"


class Arbiter:
    """Decides which command source owns the actuators (see the module docstring)."""

    __slots__ = (
        "_arrivals",
        "_evaluated_ns",
        "_events",
        "_fallback_ns",
        "_losses",
        "_min_count",
        "_owner",
        "_sent",
        "_since",
        "_takeover_ns",
        "_window_ns",
        "default_source",
        "fallback_s",
        "takeover_hz",
        "window_s",
    )

    def __init__(
        self,
        default_source: str = "control_node",
        *,
        takeover_hz: float = 10.0,
        window_s: float = 0.5,
        fallback_s: float = 0.1,
    ) -> None:
        if not isinstance(default_source, str) or not default_source:
            raise ValueError(f"default_source = {default_source!r}; expected a node name")
        min_count = self.check_timing(takeover_hz, window_s, fallback_s)
        self.default_source = default_source
        self.takeover_hz = float(takeover_hz)
        self.window_s = float(window_s)
        self.fallback_s = float(fallback_s)
        self._window_ns = round(window_s * _NS_PER_S)
        self._fallback_ns = round(fallback_s * _NS_PER_S)
        self._min_count = min_count
        self._takeover_ns = self._span_ns(min_count, self.takeover_hz)
        self._arrivals: dict[str, deque[int]] = {}
        #: Per source, the send stamps of the arrivals above (same length; 0 = not stamped).
        self._sent: dict[str, deque[int]] = {}
        #: Per source, the arrival of its first command after its last gap (ns).
        self._since: dict[str, int] = {}
        #: Per custom source, when it lost control (ns), within :data:`BACKOFF_MEMORY_S`.
        self._losses: dict[str, deque[int]] = {}
        self._owner = default_source
        self._events: list[OwnerChanged] = []
        #: The latest time the rule was evaluated at (ns): time never goes back for it.
        self._evaluated_ns: int | None = None

    @staticmethod
    def check_timing(takeover_hz: float, window_s: float, fallback_s: float) -> int:
        """The :attr:`min_count` of these settings, or ValueError when they cannot work together
        (see the module docstring: ``fallback_s ≥ 1/takeover_hz``, a window of ≥ 2 commands)."""
        if not (math.isfinite(takeover_hz) and takeover_hz > 0):
            raise ValueError(f"takeover_hz = {takeover_hz}; expected a finite rate > 0 Hz")
        if not (math.isfinite(window_s) and window_s > 0):
            raise ValueError(f"window_s = {window_s}; expected a finite time > 0 s")
        if not (math.isfinite(fallback_s) and fallback_s > 0):
            raise ValueError(f"fallback_s = {fallback_s}; expected a finite time > 0 s")
        # Tolerate float rounding: 0.1 s × 10 Hz is "exactly" one period.
        if fallback_s * takeover_hz < 1.0 - 1e-9:
            raise ValueError(
                f"fallback_s = {fallback_s} s is shorter than one period at takeover_hz = "
                f"{takeover_hz} Hz ({1.0 / takeover_hz:g} s): a source at the threshold would "
                "lose control between two of its own commands; expected ≥ 1/takeover_hz"
            )
        min_count = math.ceil(takeover_hz * window_s - 1e-9)
        if min_count < 2:
            raise ValueError(
                f"window_s = {window_s} s holds {min_count} command(s) at {takeover_hz} Hz; "
                "expected a window holding at least 2 (window_s ≥ 2/takeover_hz)"
            )
        return min_count

    def retune(self, *, takeover_hz: float, window_s: float, fallback_s: float) -> None:
        """Use new settings from now on (a live ``arbitration_threshold`` change).

        Checked as in the constructor (ValueError, nothing changed). The arrival history is kept:
        the next :meth:`owner` judges it by the new rule, so a custom owner slower than a raised
        threshold falls back then, and a waiting source that is fast enough for a lowered one
        takes over then. Events are queued as usual.
        """
        min_count = self.check_timing(takeover_hz, window_s, fallback_s)
        self.takeover_hz = float(takeover_hz)
        self.window_s = float(window_s)
        self.fallback_s = float(fallback_s)
        self._window_ns = round(window_s * _NS_PER_S)
        self._fallback_ns = round(fallback_s * _NS_PER_S)
        self._min_count = min_count
        self._takeover_ns = self._span_ns(min_count, self.takeover_hz)

    @property
    def min_count(self) -> int:
        """Commands within the window (with no gap) a custom source needs to take control."""
        return self._min_count

    @property
    def takeover_s(self) -> float:
        """How long (s) a custom source must keep publishing — at ≥ :attr:`takeover_hz`, with
        no gap over :attr:`fallback_s` — before it takes control: ``(min_count − 1) /
        takeover_hz``, 0.4 s by default, whatever its rate (see the module docstring)."""
        return (self._min_count - 1) / self.takeover_hz

    @staticmethod
    def _span_ns(min_count: int, takeover_hz: float) -> int:
        """:attr:`takeover_s` in ns, less 1 µs so that a source exactly at the threshold,
        whose arrival times are rounded to the ns, still qualifies."""
        return max(0, round((min_count - 1) * _NS_PER_S / takeover_hz) - 1_000)

    def offer(self, source: str, now_ns: int, sent_ns: int = 0) -> bool:
        """Record a *valid* command from ``source`` arriving at ``now_ns``; True if ``source``
        now owns. ``sent_ns`` is the time the source stamped in it (ns, its own clock; 0 when
        unknown): it only makes the reported rate true (see the module docstring)."""
        if source != self.default_source:
            self.owner(now_ns)  # settle a silent owner's fallback before this arrival counts
            arrivals = self._arrivals.get(source)
            if arrivals is None:
                arrivals = self._arrivals[source] = deque()
                self._sent[source] = deque()
            elif arrivals and now_ns - arrivals[-1] > self._fallback_ns:
                arrivals.clear()  # a gap restarts the measurement
                self._sent[source].clear()
            if not arrivals:
                self._since[source] = now_ns
            arrivals.append(now_ns)
            self._sent[source].append(sent_ns)
        return self.owner(now_ns) == source

    @property
    def current(self) -> str:
        """The owner as last decided (by :meth:`offer` or :meth:`owner`), evaluating nothing:
        what a report or a reply between two decisions names. Why not :meth:`owner` at the
        clock's time there: commands received before that time may still wait in the node's
        queue, so the owner looked silent, fell back, and took over again when they were offered
        a cycle later — three owner changes on ``/hb50/status`` in 2 ms while the recording's
        ``bridge_state`` showed one (a user's trial, 2026-12-06)."""
        return self._owner

    def owner(self, now_ns: int) -> str:
        """The source that owns the actuators at ``now_ns`` (re-evaluated, events queued). An
        earlier time than one already evaluated is taken as that one: the rule's time never
        goes back (a queued command offered at its arrival time counts as arrived then, and
        is judged now)."""
        evaluated = self._evaluated_ns
        if evaluated is not None and now_ns < evaluated:
            now_ns = evaluated
        self._evaluated_ns = now_ns
        self._expire(now_ns)
        owner = self._owner
        if owner != self.default_source:
            arrivals = self._arrivals.get(owner)
            if not arrivals or now_ns - arrivals[-1] > self._fallback_ns:
                self._change(
                    owner, self.default_source, SILENT, now_ns, self.measure(owner, ARRIVED)
                )
            elif not self._fast_enough(arrivals):
                self._change(
                    owner, self.default_source, RATE_LOW, now_ns, self.measure(owner, ARRIVED)
                )
        if self._owner == self.default_source:
            for source, arrivals in self._arrivals.items():
                if len(arrivals) < self._min_count or now_ns - arrivals[-1] > self._fallback_ns:
                    continue  # the cheap tests first: most sources fail them
                doublings = self._doublings(source, now_ns)
                steady_ns = arrivals[-1] - self._since[source]
                if steady_ns >= self._takeover_ns << doublings and self._fast_enough(arrivals):
                    needed_s = self.needed_s(source, now_ns) if doublings else 0.0
                    self._change(
                        self._owner,
                        source,
                        TAKEOVER,
                        now_ns,
                        self.measure(source),
                        needed_s=needed_s,
                    )
                    break
        return self._owner

    def rate_hz(self, source: str) -> float:
        """Measured rate of ``source`` (Hz): :meth:`measure`'s mean."""
        return self.measure(source).hz

    def measure(self, source: str, basis: str = SENT) -> RateMeasure:
        """The rate of ``source``'s commands in the window, as of the last evaluation: by their
        send stamps when ``basis`` is :data:`SENT` and they increase strictly with no two more
        than ``fallback_s`` apart, else by their arrival times (see the module docstring). The
        default source is not measured (its window is empty: a count of 0)."""
        arrivals = self._arrivals.get(source)
        if not arrivals:
            return RateMeasure(0, 0, ARRIVED)
        sent = self._sent[source]
        if (
            basis == SENT
            and len(sent) >= 2
            and sent[0] > 0
            and all(0 < b - a <= self._fallback_ns for a, b in itertools.pairwise(sent))
        ):
            return RateMeasure(len(sent), sent[-1] - sent[0], SENT)
        return RateMeasure(len(arrivals), arrivals[-1] - arrivals[0], ARRIVED)

    def take_events(self) -> list[OwnerChanged]:
        """Owner changes since the last call, oldest first (the queue is emptied)."""
        events, self._events = self._events, []
        return events

    # -- internals ---------------------------------------------------------------------------

    def needed_s(self, source: str, now_ns: int) -> float:
        """The steady stream (s) ``source`` needs to take control at ``now_ns``:
        :attr:`takeover_s`, doubled for each of its recent losses (see *Back-off*)."""
        return self.takeover_s * float(1 << self._doublings(source, now_ns))

    def _doublings(self, source: str, now_ns: int) -> int:
        """How many times the steady stream ``source`` needs for a takeover is doubled: once
        per loss of control in the last :data:`BACKOFF_MEMORY_S`, at most ``_BACKOFF_MAX``."""
        losses = self._losses.get(source)
        if not losses:
            return 0
        memory = now_ns - _BACKOFF_MEMORY_NS
        recent = sum(1 for lost in losses if lost > memory)
        return min(recent, _BACKOFF_MAX)

    def _expire(self, now_ns: int) -> None:
        """Forget arrivals that left the window ``(now − window, now]``, silent sources, and
        losses older than :data:`BACKOFF_MEMORY_S`."""
        if self._losses:  # most of the time no source lost control lately
            memory = now_ns - _BACKOFF_MEMORY_NS
            for source in list(self._losses):
                losses = self._losses[source]
                while losses and losses[0] <= memory:
                    losses.popleft()
                if not losses:
                    del self._losses[source]
        horizon = now_ns - self._window_ns
        gone: list[str] = []
        for source, arrivals in self._arrivals.items():
            sent = self._sent[source]
            # the owner keeps its newest arrival: when it went silent is its loss's time
            keep = 1 if source == self._owner else 0
            while len(arrivals) > keep and arrivals[0] <= horizon:
                arrivals.popleft()
                sent.popleft()
            if not arrivals and source != self._owner:
                gone.append(source)
        for source in gone:  # bounded memory whatever names appear on the topic
            del self._arrivals[source]
            del self._sent[source]
            del self._since[source]

    def _fast_enough(self, arrivals: deque[int]) -> bool:
        """Mean rate ≥ ``takeover_hz``, in exact integer-ns arithmetic (no division by zero)."""
        count = len(arrivals)
        if count < 2:
            return False
        return (count - 1) * _NS_PER_S >= self.takeover_hz * (arrivals[-1] - arrivals[0])

    def _change(
        self,
        old: str,
        new: str,
        reason: str,
        now_ns: int,
        measure: RateMeasure,
        *,
        needed_s: float = 0.0,
    ) -> None:
        if old != self.default_source:  # a custom source lost control: it backs off
            arrivals = self._arrivals.get(old)
            lost_ns = now_ns
            if reason == SILENT and arrivals:  # when its silence began to count, not when seen
                lost_ns = min(now_ns, arrivals[-1] + self._fallback_ns)
            self._losses.setdefault(old, deque()).append(lost_ns)
        self._owner = new
        self._events.append(OwnerChanged(old, new, reason, now_ns, measure, needed_s))
