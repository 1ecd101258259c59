"""The gait clock: which feet are on the ground, and how far each is through its stance or swing.

Where it sits: :mod:`jointbus.robots.hb50.legged`, a pure component (the caller passes the time
step) under the walking controller (:mod:`.walking`), which turns its schedule into footholds, swing
trajectories and stance forces. Structure as in MIT's Cheetah software (``Gait.cpp``): one phase
``φ ∈ [0, 1)`` advances at ``1 / period`` per second; leg ``i`` is at ``φᵢ = (φ + offsetᵢ) mod 1``,
in stance while ``φᵢ < duty`` and in swing after.

The trot: diagonal pairs (front-right with rear-left, front-left with rear-right) half a cycle
apart, so two feet always carry the robot. With ``duty > 0.5`` both pairs are down together twice
per cycle, for ``(duty − 0.5) · period`` each time — the moments when the clock can stop.

Starting and stopping (so that a zero command settles back to standing within one gait cycle,
four feet down): :meth:`GaitScheduler.step` with ``moving=False`` keeps the clock running only
until every leg is in stance, then holds it there; ``moving=True`` lets it run again from where it
stopped (the first swing starts at the next pair's lift-off). From a stop it takes at most
``(1 − duty) · period`` (one swing) to have every foot down.

Units: s, and phases as fractions of a cycle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from jointbus.messages.errors import LimitError, NonFiniteError

__all__ = ["TROT_OFFSETS", "GaitPhase", "GaitScheduler"]

_OWNER = "GaitScheduler"
#: Phase offsets of the trot for legs in hb50 order (fr, fl, rl, rr): diagonal pairs half apart.
TROT_OFFSETS = (0.0, 0.5, 0.0, 0.5)
#: Allowed duty factors: above 0.5 (both pairs down together, so the clock can stop with four feet
#: down), at most 0.75 (a swing shorter than a quarter cycle is a stamp, not a step).
DUTY_RANGE = (0.51, 0.75)


@dataclass(frozen=True, slots=True)
class GaitPhase:
    """The schedule now, legs in the scheduler's order.

    ``stance[i]``: leg ``i`` should be on the ground. ``progress[i]``: how far it is through its
    current stance or swing, 0 … 1. ``stance_time`` / ``swing_time``: their durations at the
    current period (s). ``stopped``: the clock is held with every leg in stance.
    """

    stance: tuple[bool, ...]
    progress: tuple[float, ...]
    stance_time: float
    swing_time: float
    stopped: bool


def _check(name: str, value: float, lo: float, hi: float, expected: str) -> float:
    if not math.isfinite(value):
        raise NonFiniteError(_OWNER, name, value, expected)
    if not lo <= value <= hi:
        raise LimitError(_OWNER, name, value, expected)
    return float(value)


class GaitScheduler:
    """A phase clock over ``len(offsets)`` legs (see the module docstring). Starts stopped."""

    def __init__(
        self, period: float = 0.4, duty: float = 0.6, offsets: tuple[float, ...] = TROT_OFFSETS
    ) -> None:
        self.offsets = tuple(float(o) % 1.0 for o in offsets)
        self.period = self.duty = math.nan  # checked by set_timing
        self.set_timing(period, duty)
        self._phase = 0.0
        self._stopped = True
        #: (phase, period, duty, schedule) of the last step, for peek
        self._last: tuple[float, float, float, GaitPhase] | None = None

    def set_timing(self, period: float, duty: float) -> None:
        """A new ``period`` (s, 0.15 … 2) and ``duty`` (0.51 … 0.75); they act from the next step
        without a jump of the phase (the clock only changes speed)."""
        if period == self.period and duty == self.duty:
            return  # the walking controller sets the timing every step; mostly it stays
        self.period = _check("period", period, 0.15, 2.0, "a gait period in [0.15, 2] s")
        lo, hi = DUTY_RANGE
        self.duty = _check("duty", duty, lo, hi, f"a duty factor in [{lo}, {hi}]")

    @property
    def phase(self) -> float:
        """The clock's phase φ, 0 … 1."""
        return self._phase

    @property
    def stopped(self) -> bool:
        """True while the clock is held with every leg in stance."""
        return self._stopped

    def _legs(self, phase: float) -> tuple[tuple[bool, ...], tuple[float, ...]]:
        duty = self.duty
        stance: list[bool] = []
        progress: list[float] = []
        for offset in self.offsets:
            p = (phase + offset) % 1.0
            if p < duty:
                stance.append(True)
                progress.append(p / duty)
            else:
                stance.append(False)
                progress.append((p - duty) / (1.0 - duty))
        return tuple(stance), tuple(progress)

    def step(self, dt: float, moving: bool) -> GaitPhase:
        """Advance by ``dt`` (s) and return the schedule (see the module docstring)."""
        if not (math.isfinite(dt) and dt >= 0.0):
            raise LimitError(_OWNER, "dt", dt, "a finite time step ≥ 0 s")
        if moving or not self._stopped:
            self._stopped = False
            self._phase = (self._phase + dt / self.period) % 1.0
        stance, progress = self._legs(self._phase)
        if not moving and all(stance):
            self._stopped = True
        phase = GaitPhase(
            stance,
            progress,
            self.duty * self.period,
            (1.0 - self.duty) * self.period,
            self._stopped,
        )
        self._last = (self._phase, self.period, self.duty, phase)
        return phase

    def start_swing(self, legs: tuple[bool, ...] | list[bool]) -> None:
        """Run the clock from the phase where ``legs`` (one flag per leg; the first flagged one
        decides) begin their swing — the gait taken over mid-stride, with the pair that is in
        the air (or due to lift) swinging first. No flag: from the phase where the clock stops."""
        if len(legs) != len(self.offsets):
            raise ValueError(f"legs: {len(legs)} flags; the clock has {len(self.offsets)} legs")
        first = next((i for i, flag in enumerate(legs) if flag), None)
        if first is None:
            self._phase, self._stopped = 0.0, True
            return
        self._phase = (self.duty - self.offsets[first]) % 1.0
        self._stopped = False
        self._last = None

    def peek(self) -> GaitPhase:
        """The schedule now, without advancing (the walking controller asks before each step:
        the last step's schedule is returned while phase and timing are unchanged)."""
        last = self._last
        if (
            last is not None
            and last[0] == self._phase
            and last[1] == self.period
            and last[2] == self.duty
            and last[3].stopped is self._stopped
        ):
            return last[3]
        stance, progress = self._legs(self._phase)
        return GaitPhase(
            stance,
            progress,
            self.duty * self.period,
            (1.0 - self.duty) * self.period,
            self._stopped,
        )
