"""The seeded velocity script a chaos campaign walks the robot by.

Where it sits: :mod:`jointbus.tools.chaos`; :mod:`.velocity_publisher` publishes it on
``/<ns>/velocity_command`` in a process of its own, and a seed replays it exactly.

Why a script and not random noise: a robot fails while it *does* something — trotting forward,
turning, stopping, stepping sideways — so the campaign cycles through those, each for 1.5–6 s,
with a random step (any mix of the three components) among them. Every value is a *normalised*
command (``geometry_msgs/Twist``: ``linear.x/y``, ``angular.z`` in [-1, 1], scaled by the control
node's ``cmd_vel_lin`` = 1 m/s and ``cmd_vel_ang``), kept inside :data:`LIMITS`: up to 0.5 m/s
forward (the speed the faults of issue 22 were measured at), 0.3 m/s sideways, 0.5 of the full
turn rate — well inside the walking controller's ``max_speed`` 1 m/s and ``max_yaw_rate`` 2 rad/s.
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Final

__all__ = [
    "LIMITS",
    "SEGMENT_S",
    "SegmentKind",
    "VelocityLimits",
    "VelocityScript",
    "VelocityScriptError",
    "VelocitySegment",
]


class VelocityScriptError(ValueError):
    """A script argument is out of range: ``field``, ``value`` and what was ``expected``."""

    def __init__(self, field: str, value: object, expected: str) -> None:
        self.field = field
        self.value = value
        self.expected = expected
        super().__init__(f"velocity script {field} = {value!r} is invalid: expected {expected}")


@dataclass(frozen=True, slots=True)
class VelocityLimits:
    """Largest magnitude of each normalised component the script commands."""

    forward: float
    sideways: float
    turn: float


#: The script's bounds (normalised; × ``cmd_vel_lin`` 1 m/s: 0.5 m/s forward, 0.3 m/s sideways).
LIMITS: Final = VelocityLimits(forward=0.5, sideways=0.3, turn=0.5)
#: Shortest and longest segment (s).
SEGMENT_S: Final = (1.5, 6.0)


class SegmentKind(Enum):
    """What the robot is asked to do during one segment."""

    FORWARD = "forward"
    TURN = "turn"
    STOP = "stop"
    SIDEWAYS = "sideways"
    RANDOM = "random"


@dataclass(frozen=True, slots=True)
class VelocitySegment:
    """From ``start_s`` (campaign time, s) for ``duration_s``: normalised ``forward``
    (``linear.x``), ``sideways`` (``linear.y``) and ``turn`` (``angular.z``)."""

    start_s: float
    duration_s: float
    kind: SegmentKind
    forward: float
    sideways: float
    turn: float

    @property
    def end_s(self) -> float:
        return self.start_s + self.duration_s


class VelocityScript:
    """The segments of one seeded script, covering ``[0, duration_s)``; after it: stop."""

    def __init__(self, segments: Sequence[VelocitySegment], seed: int) -> None:
        self.segments = tuple(segments)
        self.seed = seed
        self._starts = [s.start_s for s in self.segments]

    @classmethod
    def from_seed(
        cls, seed: int, duration_s: float, limits: VelocityLimits = LIMITS
    ) -> VelocityScript:
        """The script of ``seed`` for ``duration_s`` s: segments of every kind, in a seeded order
        (each kind once per round of five, so a minute holds every kind)."""
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise VelocityScriptError("seed", seed, "an int")
        if not (math.isfinite(duration_s) and duration_s > 0):
            raise VelocityScriptError("duration_s", duration_s, "a finite number of seconds > 0")
        rng = random.Random(f"velocity-script-{seed}")
        segments: list[VelocitySegment] = []
        t = 0.0
        kinds: list[SegmentKind] = []
        while t < duration_s:
            if not kinds:
                kinds = list(SegmentKind)
                rng.shuffle(kinds)
            kind = kinds.pop()
            length = rng.uniform(*SEGMENT_S)
            forward, sideways, turn = _values(kind, rng, limits)
            segments.append(VelocitySegment(t, length, kind, forward, sideways, turn))
            t += length
        return cls(segments, seed)

    def at(self, t_s: float) -> tuple[float, float, float]:
        """Normalised (forward, sideways, turn) at campaign time ``t_s`` (stop outside)."""
        i = bisect.bisect_right(self._starts, t_s) - 1
        if i < 0 or t_s >= self.segments[i].end_s:
            return (0.0, 0.0, 0.0)
        s = self.segments[i]
        return (s.forward, s.sideways, s.turn)


def _values(
    kind: SegmentKind, rng: random.Random, limits: VelocityLimits
) -> tuple[float, float, float]:
    def signed(limit: float, low: float = 0.4) -> float:
        return rng.choice((-1.0, 1.0)) * rng.uniform(low * limit, limit)

    if kind is SegmentKind.FORWARD:
        return (abs(signed(limits.forward)), 0.0, 0.0)
    if kind is SegmentKind.TURN:
        return (0.0, 0.0, signed(limits.turn))
    if kind is SegmentKind.SIDEWAYS:
        return (0.0, signed(limits.sideways), 0.0)
    if kind is SegmentKind.RANDOM:
        return (
            rng.uniform(-limits.forward, limits.forward),
            rng.uniform(-limits.sideways, limits.sideways),
            rng.uniform(-limits.turn, limits.turn),
        )
    return (0.0, 0.0, 0.0)
