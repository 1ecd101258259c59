"""Two sources writing ``/hb50/velocity_command`` at once, told apart by how the command flips.

Where it sits: :mod:`jointbus.robots.hb50.control`, a pure component the control node feeds every
velocity command it receives (wall-clock time, s, and the normalised components). Why sign
reversals: the command carries no trustworthy source (a plain Zenoh ``put`` or a ROS client may
send no attachment), but two publishers that disagree make the command the robot follows swap
back and forth at their combined rate — ±1 m/s alternating at 200 Hz beside a 0.5 m/s stream
reverses ``linear.x`` some 200 times a second. A joystick reverses a few times a second at most
(a human's stick, sampled at 20–50 Hz), so :data:`MAX_REVERSALS` reversals of one component
within :data:`WINDOW_S` is two sources, not an operator.

A reversal is a change of sign between two consecutive commands of one component, both beyond
:data:`DEADBAND` (normalised units) — a joystick resting at its centre jitters around zero and is
not a fight. :meth:`VelocityConflict.update` answers with a report when the state changes: a WARN
naming the component, the reversals, the values seen and the command rate, once when the fight
starts, and an OK once it has been quiet for a whole window.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Final

__all__ = ["DEADBAND", "MAX_REVERSALS", "WINDOW_S", "ConflictReport", "VelocityConflict"]

#: Sliding window (s, wall clock) the reversals are counted over.
WINDOW_S: Final = 1.0
#: Reversals of one component within :data:`WINDOW_S` that mean two sources (a stick: ≤ ~4/s).
MAX_REVERSALS: Final = 10
#: |component| (normalised) below which a command counts as centred, not as a sign.
DEADBAND: Final = 0.05
_NAMES: Final = ("linear.x", "linear.y", "angular.z")


@dataclass(frozen=True, slots=True)
class ConflictReport:
    """A change of state: ``conflict`` (True: two sources now; False: it cleared) and ``text``."""

    conflict: bool
    text: str


class VelocityConflict:
    """See the module docstring; one per subscription, fed from one thread."""

    def __init__(self) -> None:
        self._last: list[float] = [0.0, 0.0, 0.0]
        self._reversals: tuple[deque[float], ...] = (deque(), deque(), deque())
        self._samples: deque[tuple[float, float, float, float]] = deque()
        self.conflict = False
        """True from the WARN until the OK."""

    def update(self, now: float, x: float, y: float, turn: float) -> ConflictReport | None:
        """Take one command received at ``now`` (s, monotonic wall clock): ``linear.x``,
        ``linear.y``, ``angular.z`` as received (normalised). Returns the report of a change of
        state, else ``None``."""
        values = (x, y, turn)
        samples = self._samples
        samples.append((now, x, y, turn))
        horizon = now - WINDOW_S
        while samples and samples[0][0] < horizon:
            samples.popleft()
        worst, worst_i = 0, 0
        for i, value in enumerate(values):
            rev = self._reversals[i]
            if abs(value) > DEADBAND:
                last = self._last[i]
                if abs(last) > DEADBAND and (last > 0.0) != (value > 0.0):
                    rev.append(now)
                self._last[i] = value
            while rev and rev[0] < horizon:
                rev.popleft()
            if len(rev) > worst:
                worst, worst_i = len(rev), i
        if not self.conflict and worst >= MAX_REVERSALS:
            self.conflict = True
            seen = [s[1 + worst_i] for s in samples]
            return ConflictReport(
                True,
                f"velocity_command from two sources at once? {_NAMES[worst_i]} reversed sign "
                f"{worst} times in {WINDOW_S:g} s (values {min(seen):+.2f} … {max(seen):+.2f}, "
                f"{len(samples)} commands in that second; a stick reverses a few times a second "
                "at most): the robot follows whichever arrived last — stop one publisher",
            )
        if self.conflict and not worst:  # no reversal for a whole window
            self.conflict = False
            text = f"velocity_command from one source again: no sign reversal for {WINDOW_S:g} s"
            return ConflictReport(False, text)
        return None
