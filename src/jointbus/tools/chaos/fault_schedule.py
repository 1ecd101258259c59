"""The seeded fault schedule of a chaos campaign: which fault, when, for how long, overlapping.

Where it sits: :mod:`jointbus.tools.chaos`; :mod:`jointbus.chaos_campaign` injects what it lists
and :mod:`.invariants` judges what followed. A seed gives the same schedule on every host, so a
violation found at campaign time *t* with seed *s* is replayed by running seed *s* again.

**Kinds** (issue 22, item 3): SIGSTOP for 50 ms–2 s then SIGCONT, and SIGKILL + restart, of
every process except the bridge (the control node, the velocity publisher, the recorder, the
monitor, a ``bus://`` client); SIGKILL of the bridge process (the campaign restarts the
stack); a CPU hog on every core for 1–10 s; bursts of bad input (malformed and out-of-limit
joint commands at 1 kHz, velocity commands flipping sign at 200 Hz, a node started under a name
already running).

**Times.** Faults start at uniformly random times between the warm-up and ``tail_s`` before the
end (so the robot's state after the last one is seen), independently of each other: they overlap
where they fall together, as faults do. The kinds are dealt in seeded rounds (every kind once per
round), so every kind appears ``count // kinds`` times at least. Times are *campaign* seconds:
the campaign's clock stops while it restarts a killed bridge's stack, so a replay injects every
fault at the same moment of the robot's run.

**Windows.** Replaying a violation found after 48 minutes of a one-hour seed means running the
48 minutes again. :meth:`FaultSchedule.window` keeps only the faults that start in a span of the
seed's schedule — the combination that broke a rule — moved to begin :data:`WINDOW_LEAD_S` into a
short run: the faults, their order, overlaps and lengths are the same; the robot's history before
the span and the velocity script's phase are not.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from enum import Enum
from typing import Final

__all__ = [
    "BAD_INPUT_S",
    "HOG_S",
    "STOP_S",
    "WINDOW_LEAD_S",
    "WINDOW_TAIL_S",
    "Fault",
    "FaultKind",
    "FaultSchedule",
    "FaultScheduleError",
    "window_shift",
]

#: SIGSTOP lengths (s): 50 ms to 2 s.
STOP_S: Final = (0.05, 2.0)
#: CPU hog lengths (s).
HOG_S: Final = (1.0, 10.0)
#: Bad-input burst lengths (s).
BAD_INPUT_S: Final = (0.5, 2.0)
#: A window's first fault comes this long into its run (s): the robot walks first.
WINDOW_LEAD_S: Final = 5.0
#: A window's run goes on this long after its last fault starts (s): the faults end (a hog lasts
#: up to 10 s) and their reports arrive.
WINDOW_TAIL_S: Final = 12.0


class FaultKind(Enum):
    """One kind of fault the campaign injects (its value names it in the report)."""

    STOP_CONTROL = "sigstop control"
    KILL_CONTROL = "sigkill control"
    STOP_VELOCITY = "sigstop velocity publisher"
    KILL_VELOCITY = "sigkill velocity publisher"
    STOP_RECORDER = "sigstop recorder"
    KILL_RECORDER = "sigkill recorder"
    STOP_MONITOR = "sigstop monitor"
    KILL_MONITOR = "sigkill monitor"
    STOP_BUS_CLIENT = "sigstop bus:// client"
    KILL_BUS_CLIENT = "sigkill bus:// client"
    KILL_BRIDGE = "sigkill bridge"
    CPU_HOG = "cpu hog"
    BAD_JOINT_COMMANDS = "bad joint commands"
    VELOCITY_FLIP = "velocity flip"
    DUPLICATE_NODE = "duplicate node"

    @property
    def is_stop(self) -> bool:
        """SIGSTOP for a while, then SIGCONT."""
        return self.value.startswith("sigstop")

    @property
    def is_kill(self) -> bool:
        """SIGKILL, then the process is started again."""
        return self.value.startswith("sigkill")


#: Kinds that need the stack started again: each costs a stand-up (≈ 10–20 s of wall clock).
RESTARTS_STACK: Final = frozenset({FaultKind.KILL_BRIDGE})


class FaultScheduleError(ValueError):
    """A schedule argument is out of range: ``field``, ``value`` and what was ``expected``."""

    def __init__(self, field: str, value: object, expected: str) -> None:
        self.field = field
        self.value = value
        self.expected = expected
        super().__init__(f"fault schedule {field} = {value!r} is invalid: expected {expected}")


@dataclass(frozen=True, slots=True)
class Fault:
    """Fault number ``index`` of the schedule: ``kind`` at campaign time ``at_s`` for
    ``duration_s`` (a SIGSTOP's length, a hog's or burst's; 0 for a kill)."""

    index: int
    at_s: float
    kind: FaultKind
    duration_s: float

    @property
    def end_s(self) -> float:
        return self.at_s + self.duration_s

    def describe(self) -> str:
        length = f" for {self.duration_s:.2f} s" if self.duration_s > 0 else ""
        return f"#{self.index} {self.kind.value} at t={self.at_s:.2f} s{length}"


@dataclass(frozen=True, slots=True)
class FaultSchedule:
    """The faults of one seed, in time order."""

    seed: int
    duration_s: float
    faults: tuple[Fault, ...]

    @classmethod
    def from_seed(
        cls,
        seed: int,
        duration_s: float,
        *,
        faults_per_minute: float = 30.0,
        kinds: tuple[FaultKind, ...] = tuple(FaultKind),
        warmup_s: float = 2.0,
        tail_s: float = 5.0,
    ) -> FaultSchedule:
        """The schedule of ``seed``: ``faults_per_minute`` × ``duration_s`` / 60 faults (at
        least one round of ``kinds``), starting in ``[warmup_s, duration_s - tail_s)``."""
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise FaultScheduleError("seed", seed, "an int")
        if not (math.isfinite(warmup_s) and math.isfinite(tail_s) and warmup_s >= 0 <= tail_s):
            raise FaultScheduleError("warmup_s/tail_s", (warmup_s, tail_s), "finite seconds ≥ 0")
        if not (math.isfinite(duration_s) and duration_s > warmup_s + tail_s + 1.0):
            raise FaultScheduleError(
                "duration_s", duration_s, f"finite seconds > warm-up + tail + 1 s "
                f"({warmup_s + tail_s + 1.0:g})"
            )
        if not (math.isfinite(faults_per_minute) and faults_per_minute > 0):
            raise FaultScheduleError("faults_per_minute", faults_per_minute, "a rate > 0")
        if not kinds or len(set(kinds)) != len(kinds):
            raise FaultScheduleError("kinds", kinds, "a non-empty tuple of distinct FaultKinds")
        rng = random.Random(f"fault-schedule-{seed}")
        count = max(len(kinds), round(faults_per_minute * duration_s / 60.0))
        dealt: list[FaultKind] = []
        while len(dealt) < count:
            round_ = list(kinds)
            rng.shuffle(round_)
            dealt.extend(round_)
        dealt = dealt[:count]
        starts = sorted(rng.uniform(warmup_s, duration_s - tail_s) for _ in dealt)
        faults = tuple(
            Fault(i, at, kind, _length(kind, rng))
            for i, (at, kind) in enumerate(zip(starts, dealt, strict=True))
        )
        return cls(seed, duration_s, faults)

    def window(self, begin_s: float, end_s: float) -> FaultSchedule:
        """The faults that start in ``[begin_s, end_s]`` (campaign s), numbered as here, moved
        by ``WINDOW_LEAD_S − begin_s``, in a schedule of ``end_s − begin_s + WINDOW_LEAD_S +
        WINDOW_TAIL_S`` s (module docstring: what a window replays and what not)."""
        if not (
            math.isfinite(begin_s) and math.isfinite(end_s) and 0.0 <= begin_s < end_s
            and end_s <= self.duration_s
        ):  # fmt: skip
            raise FaultScheduleError(
                "window", (begin_s, end_s), f"0 ≤ begin < end ≤ {self.duration_s:g} s"
            )
        shift = window_shift(begin_s)
        faults = tuple(
            Fault(f.index, f.at_s + shift, f.kind, f.duration_s)
            for f in self.faults
            if begin_s <= f.at_s <= end_s
        )
        return FaultSchedule(self.seed, end_s - begin_s + WINDOW_LEAD_S + WINDOW_TAIL_S, faults)

    def count(self, kind: FaultKind) -> int:
        """How many faults of ``kind`` the schedule holds."""
        return sum(1 for f in self.faults if f.kind is kind)

    def overlapping_pairs(self) -> int:
        """Pairs of faults whose windows (start to end, at least 0.1 s) overlap."""
        pairs = 0
        for i, a in enumerate(self.faults):
            for b in self.faults[i + 1 :]:
                if b.at_s >= a.at_s + max(a.duration_s, 0.1):
                    break
                pairs += 1
        return pairs


def window_shift(begin_s: float) -> float:
    """How far (s) :meth:`FaultSchedule.window` moves the faults of a window that begins at
    ``begin_s`` of its schedule (add it to a schedule's time for the short run's, subtract it for
    the way back)."""
    return WINDOW_LEAD_S - begin_s


def _length(kind: FaultKind, rng: random.Random) -> float:
    if kind.is_stop:
        return rng.uniform(*STOP_S)
    if kind is FaultKind.CPU_HOG:
        return rng.uniform(*HOG_S)
    if kind in (FaultKind.BAD_JOINT_COMMANDS, FaultKind.VELOCITY_FLIP):
        return rng.uniform(*BAD_INPUT_S)
    return 0.0
