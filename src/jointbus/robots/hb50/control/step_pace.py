"""The control node's own pace: bridge frames it never stepped on, and how long its steps take.

Where it sits: :mod:`jointbus.robots.hb50.control`, a pure component the control node feeds once
per control step (the frame's stamp, s, and the wall-clock start and end of the step, ns). Why:
the control node has no loop of its own — it steps on each ``/hb50/bridge_data`` frame, and its
MAB_RT (depth 1) subscription drops the frames it is too slow for, so a starved node does not fall
behind, it *skips*: the robot is then steered by fewer, older commands while nothing looks wrong.
The bridge reports its own pace (``_report_pace`` in :mod:`jointbus.robots.hb50.bridge.node`);
this is the control node's.

Over each :data:`WINDOW_S` of wall clock: *skipped* = frames the bridge sent that the node never
stepped on — overwritten in its depth-1 queue while a step ran, or lost on the way (sequence gaps
of the bridge's publisher) — from the subscription's counters, as a share of the frames the bridge
sent in that time (stepped + skipped). Cycles the *bridge* skipped are not counted: it sent no
frame for them, and it reports its own pace. (The gaps between the stamps of the frames stepped
on, used until 2026-12-05, counted those too: a user saw "58.6 % … (389 of 664)" while the bridge
sent 265 frames and the node stepped on 254.) *Step time* p99 (ms, wall clock) = how long a
control step took, from the frame's callback to its command's publication. The node is behind
when more than :data:`BEHIND_SKIPPED` of the frames were skipped: :meth:`StepPace.step` answers
with a WARN (and again every :data:`REPEAT_WINDOWS` windows while it stays behind) and an OK once
a window is clean again. Frames missed across a gap of more than 0.1 s between two steps are not
counted here.

**A stall is not starvation.** A gap between two steps longer than ``stall_s`` (the bridge's
watchdog time: the node lost control, see "control lost" in :mod:`.node`) means this process did
not run — SIGSTOP, a host freeze. The frames the bridge sent meanwhile queued on the way and
arrive in a burst afterwards: the node steps on some and its depth-1 queue overwrites the rest.
Counted as the next window's, a 3 s SIGSTOP read "control node starved of CPU: 35.3 % of the
bridge's frames skipped (884 of 2505) … over the last 2 s" (a user's trial, 7 of 7) — 2505
frames in 2 s at 500 Hz, and no starvation. So the window the stall falls in is dropped, and the
frames of the stall and of its catch-up — stepped on or overwritten until the node steps on a
frame as fresh as before the stall (:func:`in_backlog`: its stamp within :data:`FRESH_S` of the
stamp the bridge has now, by the last step before the stall and the wall clock since; at most
:data:`WINDOW_S` of wall clock) — are counted apart and reported once, as a stall (WARN), when
the node has caught up; a new window starts there.

**Stopped or starved: told off the step thread.** Which a stall was — the process stopped (or the
host frozen) or its threads runnable and waiting for a CPU that other work held (another robot's
real-time threads on every CPU: a user's trial, 2026-12-06, read "stopped or frozen" for that) —
the threads' run-queue waits tell (:mod:`jointbus.runtime.cpu_wait`). A reading opens one
``/proc`` file per thread (11-18 ms for 100 threads here), so the control step never takes one:
done in the step (c70ecf3), it stalled the step 250 ms beside a second stack, tripped the bridge's
watchdog and was reverted (c4b6c18). :meth:`StepPace.look`, called by the node's timer thread
every :data:`LOOK_S`, takes the readings — every :data:`WINDOW_S`, and at the first look after a
stall's resumption — and issues the stall's report there once its cause is known: a reading from
after the stall compared with the last one from before it, less each thread's usual waiting
(from the two readings before). A thread that waited at least :data:`STARVED_SHARE` of the gap
more than usual says starved. None says stopped — unless the timer thread itself kept looking
through the gap: then the process ran (no frame came, or the step thread was held). No readings
(no ``schedstat`` on this host, or none yet before the stall), or a thread that waited while its
usual waiting is not known yet (a busy thread on a loaded host waits half its time) say unknown
— never a guess. The step thread only records the stall: its gap and times and the catch-up's
counts, handed over in a deque. So the stall's WARN comes a bounded while after the stall ended:
when the catch-up is over (at most :data:`WINDOW_S`; 0.01-0.3 s in the trials and tests) and at
the next look (at most :data:`LOOK_S` later, plus a reading's time).
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from jointbus.runtime.cpu_wait import most_waited_s, wait_rates

__all__ = [
    "BEHIND_SKIPPED",
    "FRESH_S",
    "LOOK_S",
    "REPEAT_WINDOWS",
    "STARVED_SHARE",
    "WINDOW_S",
    "PaceReport",
    "StallRecord",
    "StepPace",
    "in_backlog",
]

#: The window (s, wall clock) the figures are taken over.
WINDOW_S: Final = 2.0
#: Share of the bridge's frames skipped above which the node is behind (1 %).
BEHIND_SKIPPED: Final = 0.01
#: While behind, the WARN is repeated every this many windows.
REPEAT_WINDOWS: Final = 5
_GAP_LIMIT_S: Final = 0.1  # a longer gap is a stall (reported on its own), not skipped frames
#: After a stall, a frame stamped this close (s) to the bridge's present is fresh: caught up.
FRESH_S: Final = 0.02
#: The period (s) at which the node's timer thread calls :meth:`StepPace.look`: the most a
#: stall's report waits for the look after its catch-up ended (plus a reading's time).
LOOK_S: Final = 0.1
#: A stall during which a thread of the process waited for a CPU at least this share of the gap
#: more than usual was starvation (runnable, other work ran), not a stop.
STARVED_SHARE: Final = 0.5
_READINGS_KEPT: Final = 16  # enough to span a stall, its catch-up and the two readings before it
_LOOKS_KEPT: Final = 100  # the looks of the last 10 s: those in a stall's gap say it ran


def in_backlog(before: tuple[float, int], stamp_s: float, now_ns: int) -> bool:
    """Whether a frame stamped ``stamp_s`` (s, the bridge's clock) and stepped on at ``now_ns``
    (monotonic) is still of a stall's backlog: older by more than :data:`FRESH_S` than the
    bridge's present, reckoned from ``before`` = (stamp, monotonic ns) of the last step before
    the stall, when the node kept pace."""
    stamp0, wall0_ns = before
    return stamp_s < stamp0 + (now_ns - wall0_ns) / 1e9 - FRESH_S


@dataclass(frozen=True, slots=True)
class PaceReport:
    """``behind`` (WARN) or caught up (OK), and the text with the window's figures; ``stall``:
    the report of a stall of the process and its catch-up (WARN), not of a window."""

    behind: bool
    text: str
    stall: bool = False


@dataclass(slots=True)
class _Stall:
    """A stall of the process being caught up: its gap (s), (stamp, monotonic ns) of the last
    step before it (None: stamps unknown), when the catch-up must end (ns), the counts."""

    gap_s: float
    before: tuple[float, int] | None
    deadline_ns: int
    resumed_ns: int
    stopped_ns: int
    stepped: int = 0
    missed: int = 0
    lost: int = 0


@dataclass(frozen=True, slots=True)
class StallRecord:
    """A stall whose catch-up is over, as the step thread hands it to the timer thread: its gap
    (s), the monotonic ns of the start of the last step before it (``stopped_ns``), of the first
    step after it (``resumed_ns``) and of the first fresh step (``caught_up_ns``), and the frames
    of the stall and catch-up stepped on and skipped (``lost``: of the skipped, those that never
    arrived — a full link or queue dropped them on the way)."""

    gap_s: float
    stopped_ns: int
    resumed_ns: int
    caught_up_ns: int
    stepped: int
    missed: int
    lost: int = 0


@dataclass(frozen=True, slots=True)
class _Reading:
    """One reading of the threads' run-queue waits (ns by thread id) and when it was taken
    (monotonic ns: from its start to its end)."""

    start_ns: int
    end_ns: int
    waits: dict[int, int]

    @property
    def mid_ns(self) -> int:
        return (self.start_ns + self.end_ns) // 2


class StepPace:
    """See the module docstring. ``period_s``: the bridge's frame period (s); ``stall_s``: a
    gap (s) between two steps beyond which the process stalled (None: no stall is told apart);
    ``thread_waits``: the process's threads' cumulative run-queue waits (ns by thread id,
    :func:`jointbus.runtime.cpu_wait.thread_waits`), read only by :meth:`look` (the timer
    thread) to tell a stopped process from a starved one; None: the cause is reported unknown.

    Threads: :meth:`step` runs on the control step's thread only, :meth:`look` on the timer
    thread only. They share two things, each one atomic operation under the GIL and neither
    ever waited on: the deque of finished stalls (appended by the step, taken by the look) and
    the monotonic ns of the latest stall's resumption (written by the step, read by the look)."""

    def __init__(
        self,
        period_s: float,
        stall_s: float | None = None,
        thread_waits: Callable[[], dict[int, int]] | None = None,
    ) -> None:
        self.period_s = period_s
        self.stall_s = stall_s
        self._thread_waits = thread_waits
        self._finished: deque[StallRecord] = deque()  # step thread -> timer thread
        self._resumed_ns: int | None = None  # step thread -> timer thread
        self._readings: deque[_Reading] = deque(maxlen=_READINGS_KEPT)  # timer thread only
        self._looks: deque[int] = deque(maxlen=_LOOKS_KEPT)  # timer thread only: when it looked
        self._stall: _Stall | None = None
        self._last_stamp: float | None = None
        self.stalls = 0
        """Stalls of the process seen (each reported once, not counted as skipped frames)."""
        self._window_start_ns: int | None = None
        self._last_start_ns: int | None = None
        self._counted: tuple[int, int] | None = None  # (overwritten, lost) last taken in
        self._stepped = 0
        self._overwritten = 0
        self._lost = 0
        self._durations: list[int] = []
        self._behind_windows = 0
        self.behind = False
        """True from the WARN until the OK."""
        self.skipped_total = 0
        """Frames skipped since the start (outside stalls)."""

    def step(
        self,
        start_ns: int,
        end_ns: int,
        overwritten: int = 0,
        lost: int = 0,
        *,
        stamp_s: float | None = None,
    ) -> PaceReport | None:
        """Account one control step: its wall-clock ``start_ns`` / ``end_ns``
        (``time.monotonic_ns``), the frame subscription's counters since it was created:
        frames ``overwritten`` in its queue and ``lost`` on the way, and the stamp of the frame
        stepped on (s, the bridge's clock; tells a stall's backlog from fresh frames). Returns a
        window's report when one is due; a stall's report comes from :meth:`look` (its cause
        needs a reading this step never takes)."""
        counted = self._counted
        self._counted = (overwritten, lost)
        last_start = self._last_start_ns
        self._last_start_ns = start_ns
        last_stamp = self._last_stamp
        self._last_stamp = stamp_s
        between = None if last_start is None else (start_ns - last_start) / 1e9
        missed = new_lost = 0
        if counted is not None:
            new_lost = max(lost - counted[1], 0)
            missed = max(overwritten - counted[0], 0) + new_lost
        if self.stall_s is not None and between is not None and between > self.stall_s:
            # this process did not run: drop the window, count the stall's frames apart
            self.stalls += 1
            before = None if last_stamp is None or last_start is None else (last_stamp, last_start)
            self._stall = _Stall(
                between,
                before,
                start_ns + round(WINDOW_S * 1e9),
                start_ns,
                last_start if last_start is not None else start_ns,
            )
            self._resumed_ns = start_ns  # the look takes a reading after it
            self._window_start_ns = None
            self._stepped = self._overwritten = self._lost = 0
            self._durations = []
        stall = self._stall
        if stall is not None:
            backlog = (
                stall.before is not None
                and stamp_s is not None
                and in_backlog(stall.before, stamp_s, start_ns)
                and start_ns < stall.deadline_ns
            )
            if backlog or stall.resumed_ns == start_ns:
                stall.stepped += 1
                stall.missed += missed
                stall.lost += new_lost
                return None
            stall.missed += missed  # overwritten while it caught up: the stall's too
            stall.lost += new_lost
            self._stall = None
            self._stepped = 1
            self._durations = [end_ns - start_ns]
            self._window_start_ns = start_ns
            self._finished.append(
                StallRecord(
                    stall.gap_s,
                    stall.stopped_ns,
                    stall.resumed_ns,
                    start_ns,
                    stall.stepped,
                    stall.missed,
                    stall.lost,
                )
            )
            return None
        if counted is not None and between is not None and between <= _GAP_LIMIT_S:
            new_overwritten = max(overwritten - counted[0], 0)
            new_lost = max(lost - counted[1], 0)
            self._overwritten += new_overwritten
            self._lost += new_lost
            self.skipped_total += new_overwritten + new_lost
        self._stepped += 1
        self._durations.append(end_ns - start_ns)
        if self._window_start_ns is None:
            self._window_start_ns = start_ns
            return None
        if start_ns - self._window_start_ns < WINDOW_S * 1e9:
            return None
        return self._close_window(end_ns)

    def look(self, now_ns: int) -> list[PaceReport]:
        """The timer thread's part, every :data:`LOOK_S`: take a reading of the threads'
        run-queue waits when one is due (every :data:`WINDOW_S`, and the first look after a
        stall resumed), and report each stall whose catch-up is over and whose cause is known.
        ``now_ns``: ``time.monotonic_ns()`` now, the clock of :meth:`step`'s times."""
        self._looks.append(now_ns)
        reader = self._thread_waits
        if reader is not None:
            last = self._readings[-1] if self._readings else None
            resumed = self._resumed_ns
            if (
                last is None
                or now_ns - last.start_ns >= WINDOW_S * 1e9
                or (resumed is not None and resumed > last.start_ns)
            ):
                begun = time.monotonic_ns()
                waits = reader()
                took = time.monotonic_ns() - begun
                self._readings.append(_Reading(now_ns, now_ns + took, waits))
        reports: list[PaceReport] = []
        while self._finished:
            stall = self._finished[0]
            cause = self._cause(stall)
            if cause is None:
                break  # no reading from after it yet: the next look takes one
            self._finished.popleft()
            reports.append(self._stall_report(stall, cause))
        return reports

    def _cause(self, stall: StallRecord) -> str | None:
        """Why the process made no step through ``stall``, in words; None while the reading
        that tells is still to be taken."""
        if self._thread_waits is None:
            return "why is unknown: this node reads no run-queue waits of its threads"
        readings = list(self._readings)
        after = next((r for r in readings if r.start_ns >= stall.resumed_ns), None)
        if after is None:
            return None
        befores = [i for i, r in enumerate(readings) if r.end_ns <= stall.stopped_ns]
        if not after.waits:
            return (
                "why is unknown: this host gives no run-queue waits of its threads "
                "(/proc/self/task/*/schedstat) to tell stopped from starved of CPU"
            )
        if not befores or not readings[befores[-1]].waits:
            return (
                "why is unknown: no reading of its threads' run-queue waits was taken before "
                "it to tell stopped from starved of CPU"
            )
        before = readings[befores[-1]]
        rates: dict[int, float] = {}
        if len(befores) > 1:  # each thread's usual waiting, from the two readings before
            earlier = readings[befores[-2]]
            rates = wait_rates(earlier.waits, before.waits, (before.mid_ns - earlier.mid_ns) / 1e9)
        span_s = (after.mid_ns - before.mid_ns) / 1e9
        waited_s = most_waited_s(
            before.waits, after.waits, usual=rates, usual_s=max(span_s - stall.gap_s, 0.0)
        )
        if waited_s >= STARVED_SHARE * stall.gap_s and not rates:
            # what the threads waited may be their usual waiting on a loaded host: not a guess
            return (
                f"why is unknown: a thread of it waited {waited_s:.2f} s for a CPU in the "
                f"{span_s:.2f} s around it, but how long its threads usually wait is not known "
                f"yet (it is measured over the first {WINDOW_S:g} s)"
            )
        if waited_s >= STARVED_SHARE * stall.gap_s:
            return (
                f"its process was starved of CPU — a thread of it waited {waited_s:.2f} s more "
                f"than usual for a CPU in the {span_s:.2f} s around it: other work held the CPUs"
            )
        looked = sum(stall.stopped_ns < t < stall.resumed_ns for t in self._looks)
        if looked >= STARVED_SHARE * stall.gap_s / LOOK_S:
            # the timer thread kept looking through the gap: the process ran, not stopped
            return (
                f"its process ran (its timer thread looked {looked} times in the gap) and none "
                "of its threads waited for a CPU: no frame came to step on, or its step thread "
                "was held"
            )
        return (
            "its process did not run — stopped or frozen, not starved of CPU (no thread of it "
            f"waited more than {max(waited_s, 0.0):.2f} s beyond its usual for a CPU in the "
            f"{span_s:.2f} s around it)"
        )

    @staticmethod
    def _stall_report(stall: StallRecord, cause: str) -> PaceReport:
        caught_up_s = (stall.caught_up_ns - stall.resumed_ns) / 1e9
        return PaceReport(
            False,
            f"control node stalled for {stall.gap_s:.2f} s (no control step: {cause}); of the "
            f"bridge's frames of the stall and its catch-up, {stall.stepped} stepped on and "
            f"{stall.missed} skipped in a catch-up of {caught_up_s:.2f} s ({stall.lost} of "
            "them never arrived: lost on the way, as the subscription's report of lost "
            "messages counts them too); its pace is counted again from the first frame sent "
            "after it",
            stall=True,
        )

    def _close_window(self, now_ns: int) -> PaceReport | None:
        missed = self._overwritten + self._lost
        sent = self._stepped + missed
        skipped = missed / sent if sent else 0.0
        durations = sorted(self._durations)
        p99 = durations[min(len(durations) - 1, math.ceil(0.99 * len(durations)) - 1)] / 1e6
        lost = f", {self._lost} of them lost on the way" if self._lost else ""
        span_s = (now_ns - (self._window_start_ns or now_ns)) / 1e9
        figures = (
            f"{skipped * 100:.1f} % of the bridge's frames skipped ({missed} of {sent}{lost}), "
            f"control step p99 {p99:.2f} ms (one frame every {self.period_s * 1e3:g} ms) "
            f"over the last {span_s:.1f} s"
        )
        self._window_start_ns = now_ns
        self._stepped = self._overwritten = self._lost = 0
        self._durations = []
        behind = skipped > BEHIND_SKIPPED
        windows = self._behind_windows
        self._behind_windows = windows + 1 if behind else 0
        was = self.behind
        self.behind = behind
        if behind and windows % REPEAT_WINDOWS == 0:
            return PaceReport(
                True,
                f"control node starved of CPU: {figures}; the robot is steered by fewer, "
                "older commands",
            )
        if was and not behind:
            return PaceReport(False, f"control node keeps pace again: {figures}")
        return None
