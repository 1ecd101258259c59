"""The chaos campaign's invariants, checked on every sample of the robot's ground truth.

Where it sits: :mod:`jointbus.tools.chaos`. It knows no bus and no process: the campaign
(:mod:`jointbus.chaos_campaign`) feeds it what it receives — the simulator's ground truth
(``/<ns>/sim/ground_truth``, 500 Hz), the measured and commanded joints (``bridge_data``,
``joint_command``), the bridge's state, the control node's mode and every ``/<ns>/status``
report — stamped with *campaign* time (s, wall clock, arrival), and tells it what it injected.
Tests feed it synthetic samples.

**The rules** (issue 22, item 4):

- *joint limits*: no joint measured beyond its position limit by more than
  :attr:`InvariantBounds.position_tolerance_rad` (the bridge's limit watch's 5 mrad) or beyond its
  speed limit by more than :attr:`InvariantBounds.speed_tolerance` (10 %); no joint *commanded*
  beyond either at all;
- *upright*: once the robot stood (the control node said STAND) the ground-truth body height
  stays above :attr:`InvariantBounds.min_height_m` (0.2 m) and its tilt (the body z axis' angle
  from the vertical) below :attr:`InvariantBounds.max_tilt_rad` (0.5 rad), unless an e-stop or a
  reported fallback sit is under way (from its report until the robot stands again above
  :attr:`InvariantBounds.upright_again_m`), or the stack is being restarted (the campaign pauses
  the checker: a new simulator starts lying down);
- *no command from a stalled owner*: while the control node is stopped or dead, the bridge is
  never in ``run`` under ``control_node`` later than the watchdog time plus
  :attr:`InvariantBounds.state_headroom_s` (the 10 Hz state's period and delivery) after it
  stalled;
- *reported*: every fault with an expected report (:class:`ReportRule`) gets it on ``/<ns>/status``
  within its bound;
- *the end*: the robot stands or sits safely, every node OK (:meth:`InvariantChecker.finish`).

A rule broken for a while is one :class:`Violation` (an *episode*) with its worst value, not one
per sample; it is raised again once the condition cleared.
"""

from __future__ import annotations

import json
import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from jointbus.messages.status import Level
from jointbus.model.limits import JointLimitSpec
from jointbus.tools.chaos.fault_schedule import Fault

__all__ = [
    "FaultRecord",
    "InvariantBounds",
    "InvariantChecker",
    "ReportRule",
    "Violation",
    "tilt_of",
]

#: A report's stamp (the reporter's wall clock) may precede the injection by this much (s) and
#: still be its detection: the wall and monotonic clocks are read apart in two processes.
_STAMP_SLACK_S: Final = 0.005
#: Relative and absolute slack of a commanded value (float32 on the wire: 2^-23 ≈ 1.2e-7).
_FLOAT32_SLACK: Final = 1e-6
#: How long after a fault ends its worst values are still counted to it (s): a robot knocked by a
#: fault falls over within a second or two after it.
SETTLE_S: Final = 3.0
#: A missing report's violation names the reporter's own WARN+ reports from this long before the
#: injection up to its deadline (s): what the reporter was busy saying explains most misses (a
#: fallback already under way when the fault came, a report stamped just before it).
HEARD_BEFORE_S: Final = 5.0
#: How many of those reports it names at most, and how much of each text (characters).
_HEARD_SHOWN: Final = 6
_HEARD_TEXT: Final = 90


def tilt_of(x: float, y: float, z: float, w: float) -> float:
    """Angle (rad) between the body's z axis and the vertical, from its orientation quaternion
    (``x, y, z, w``; normalised here): 0 upright, π/2 on its side, π on its back."""
    norm = x * x + y * y + z * z + w * w
    if not norm > 0:
        return math.nan
    cos_tilt = 1.0 - 2.0 * (x * x + y * y) / norm
    return math.acos(max(-1.0, min(1.0, cos_tilt)))


def _is_fallback_sit(text: str, data: bytes) -> bool:
    """True for the bridge's report that its fallback lowers the robot (``"event": "fallback"``
    with ``"phase"`` ``sit``, or ``down`` for a robot already down, in the JSON data; or a text
    naming both the fallback and the sit)."""
    if data.startswith(b"{"):
        try:
            facts = json.loads(data)
        except ValueError:
            facts = None
        if isinstance(facts, dict) and facts.get("event") == "fallback":
            return facts.get("phase") in ("sit", "down")
    lowered = text.lower()
    return "fallback" in lowered and "sit" in lowered


@dataclass(frozen=True, slots=True)
class InvariantBounds:
    """The numbers the rules use (SI: m, rad, s; ``speed_tolerance`` a fraction)."""

    min_height_m: float = 0.2
    max_tilt_rad: float = 0.5
    position_tolerance_rad: float = 0.005
    speed_tolerance: float = 0.10
    watchdog_s: float = 0.25
    state_headroom_s: float = 0.25
    upright_again_m: float = 0.25
    report_grace_s: float = 3.0


@dataclass(frozen=True, slots=True)
class ReportRule:
    """The report a fault must cause: a :class:`Status` from ``node`` at ``min_level`` or above,
    whose text contains one of ``contains`` (``()``: any) and whose data is ``data`` (``b""``:
    any), at most ``bound_s`` after the injection."""

    node: str
    bound_s: float
    min_level: Level = Level.WARN
    contains: tuple[str, ...] = ()
    data: bytes = b""

    def matches(self, level: int, node: str, text: str, data: bytes) -> bool:
        lowered = text.lower()
        return (
            level >= self.min_level
            and node == self.node
            and (not self.contains or any(c.lower() in lowered for c in self.contains))
            and (not self.data or data == self.data)
        )


@dataclass(frozen=True, slots=True)
class Violation:
    """A broken rule: at campaign time ``t_s`` (s), ``rule``, what was seen (``detail``), its
    ``worst`` value over the episode, and the faults under way then (indices)."""

    t_s: float
    rule: str
    detail: str
    worst: float
    faults: tuple[int, ...]

    def describe(self, seed: int) -> str:
        during = ", ".join(f"#{i}" for i in self.faults) or "no fault"
        return (
            f"t={self.t_s:.2f} s {self.rule}: {self.detail} (worst {self.worst:.3f}; during "
            f"{during}); replay: seed {seed}"
        )


@dataclass(slots=True)
class FaultRecord:
    """What one injected fault did: when it was injected / ended (campaign s), when its report
    came (``detected_s``, NaN: none expected or none came; ``missed``: not within its bound;
    ``unwitnessed``: why its report is not judged, its reporter killed before it was due),
    and the worst the robot did while it
    and :data:`SETTLE_S` after it lasted: lowest height, largest tilt, fastest joint (rad/s),
    largest limit excursion (rad, 0 inside). ``context``: what the campaign knew of the robot
    when it injected the fault (the bridge's mode and owner), named if its report is missed."""

    fault: Fault
    injected_s: float
    ended_s: float = math.nan
    expected: ReportRule | None = None
    detected_s: float = math.nan
    missed: bool = False
    unwitnessed: str = ""
    min_height_m: float = math.inf
    max_tilt_rad: float = 0.0
    max_speed: float = 0.0
    max_excursion_rad: float = 0.0
    context: str = ""

    @property
    def detection_s(self) -> float:
        """Seconds from injection to its report (NaN: none expected, or none came)."""
        return self.detected_s - self.injected_s

    def active(self, t_s: float) -> bool:
        end = self.ended_s if not math.isnan(self.ended_s) else math.inf
        return self.injected_s <= t_s <= end + SETTLE_S


@dataclass(slots=True)
class _Episode:
    start_s: float
    worst: float
    detail: str
    faults: tuple[int, ...]


@dataclass(slots=True)
class InvariantChecker:
    """Feed it samples in time order; read :attr:`violations` and :attr:`records` (module doc).

    ``names`` and ``limits``: the joints in actuator order and their limits; ``owner``: the node
    whose stall the bridge must not outlast (``control_node``)."""

    names: Sequence[str]
    limits: Sequence[JointLimitSpec]
    bounds: InvariantBounds = field(default_factory=InvariantBounds)
    owner: str = "control_node"
    records: list[FaultRecord] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    samples: int = 0
    _open: dict[str, _Episode] = field(default_factory=dict)
    _open_limits: dict[bool, int] = field(default_factory=lambda: {True: 0, False: 0})
    _upright: bool = False
    _standing: bool = False
    _exempt: str = ""
    _paused: bool = False
    _owner_silent_since: float = math.nan
    _last_t: float = 0.0
    #: The latest WARN+ reports (campaign s, level, node, text), for a missed report's detail.
    _heard: deque[tuple[float, int, str, str]] = field(default_factory=lambda: deque(maxlen=256))

    def __post_init__(self) -> None:
        if len(self.names) != len(self.limits):
            raise ValueError(
                f"{len(self.names)} joint names but {len(self.limits)} limits: one per joint"
            )

    # ---- what the campaign did -----------------------------------------------------------
    def injected(
        self, fault: Fault, t_s: float, expected: ReportRule | None = None, context: str = ""
    ) -> FaultRecord:
        """``fault`` was injected at ``t_s``; ``expected``: the report it must cause;
        ``context``: what the campaign knew of the robot then (said if the report is missed)."""
        record = FaultRecord(fault, t_s, expected=expected, context=context)
        if fault.duration_s == 0:
            record.ended_s = t_s
        self.records.append(record)
        return record

    def witness_lost(self, node: str, t_s: float) -> list[FaultRecord]:
        """``node`` was killed at ``t_s``: a report it owed and had not yet made, its bound
        not yet passed, can no longer come — that fault's report is not judged (its record
        says why; the kill has its own rule). Returns those records."""
        lost: list[FaultRecord] = []
        for r in self.records:
            rule = r.expected
            if (
                rule is not None
                and rule.node == node
                and math.isnan(r.detected_s)
                and not r.missed
                and t_s < r.injected_s + rule.bound_s
            ):
                r.expected = None
                r.unwitnessed = f"{node} killed at t={t_s:.2f} s, before its report was due"
                lost.append(r)
        return lost

    def ended(self, record: FaultRecord, t_s: float) -> None:
        """The fault of ``record`` ended (SIGCONT sent, hog stopped, burst over) at ``t_s``."""
        record.ended_s = t_s

    def owner_silent(self, t_s: float) -> None:
        """The owner (control node) was stopped or killed at ``t_s``."""
        if math.isnan(self._owner_silent_since):
            self._owner_silent_since = t_s

    def owner_back(self, t_s: float) -> None:
        """The owner runs again (SIGCONT, or its restarted process is up) at ``t_s``."""
        self._owner_silent_since = math.nan
        self._close("stalled owner", t_s)

    def pause(self, t_s: float) -> None:
        """The stack is being restarted: no rule holds until :meth:`resume`."""
        self._paused = True
        self._upright = False
        self._exempt = ""
        self._owner_silent_since = math.nan
        for rule in list(self._open):
            self._close(rule, t_s)
        self._open_limits = {True: 0, False: 0}

    def resume(self, t_s: float) -> None:
        """The restarted stack runs; the robot is upright again once it reports STAND."""
        self._paused = False
        self._last_t = t_s

    # ---- what the robot did ------------------------------------------------------------------
    def ground_truth(self, t_s: float, height_m: float, tilt_rad: float) -> None:
        """One ground-truth sample: body height (m) and tilt (rad) at ``t_s``."""
        self._tick(t_s)
        if self._paused:
            return
        self.samples += 1
        for r in self._active(t_s):
            r.min_height_m = min(r.min_height_m, height_m)
            r.max_tilt_rad = max(r.max_tilt_rad, tilt_rad)
        if self._exempt and self._upright_again(height_m):
            self._exempt = ""
        if not self._upright or self._exempt:
            return
        self._episode(
            "body too low",
            t_s,
            height_m < self.bounds.min_height_m,
            -height_m,
            f"ground-truth height {height_m:.3f} m < {self.bounds.min_height_m} m",
        )
        self._episode(
            "body tilted",
            t_s,
            tilt_rad > self.bounds.max_tilt_rad,
            tilt_rad,
            f"ground-truth tilt {tilt_rad:.3f} rad > {self.bounds.max_tilt_rad} rad",
        )

    def _upright_again(self, height_m: float) -> bool:
        return self._standing and height_m >= self.bounds.upright_again_m

    def joints(
        self, t_s: float, positions: Sequence[float], velocities: Sequence[float]
    ) -> None:
        """Measured joint positions (rad) and velocities (rad/s), in actuator order."""
        self._tick(t_s)
        if self._paused:
            return
        self._limits(t_s, positions, velocities, measured=True)

    def command(
        self, t_s: float, positions: Sequence[float], velocities: Sequence[float]
    ) -> None:
        """Commanded target positions (rad) and velocities (rad/s), in actuator order."""
        self._tick(t_s)
        if self._paused:
            return
        self._limits(t_s, positions, velocities, measured=False)

    def motion_mode(self, t_s: float, mode: str) -> None:
        """The control node's motion mode (``STAND``, ``LOCOMOTION``, ...) at ``t_s``."""
        self._tick(t_s)
        self._standing = mode in ("STAND", "LOCOMOTION")
        if mode == "STAND" and not self._paused:
            self._upright = True

    def bridge_state(self, t_s: float, mode: str, owner: str) -> None:
        """The bridge's mode (``run``, ``safe``, ``estop``, ...) and command owner at ``t_s``."""
        self._tick(t_s)
        if self._paused:
            return
        if mode == "estop" and not self._exempt:
            self._exempt = "e-stop"
        since = self._owner_silent_since
        late = (
            not math.isnan(since)
            and t_s > since + self.bounds.watchdog_s + self.bounds.state_headroom_s
        )
        self._episode(
            "stalled owner",
            t_s,
            late and mode == "run" and owner == self.owner,
            t_s - since if late else 0.0,
            f"the bridge still applies {self.owner}'s commands (mode run) {t_s - since:.3f} s "
            f"after it stalled (watchdog {self.bounds.watchdog_s} s)",
        )

    def status(self, t_s: float, level: int, node: str, text: str, data: bytes = b"") -> None:
        """One ``/<ns>/status`` report received at ``t_s``."""
        self._tick(t_s)
        if level >= Level.WARN:
            self._heard.append((t_s, level, node, text))
        for r in self.records:
            rule = r.expected
            if (
                rule is not None
                and math.isnan(r.detected_s)
                and not r.missed  # judged missing: a later fault's report is not its detection
                and t_s >= r.injected_s - _STAMP_SLACK_S
                and rule.matches(level, node, text, data)
            ):
                r.detected_s = max(t_s, r.injected_s)
        if level >= Level.WARN and _is_fallback_sit(text, data):
            self._exempt = "fallback sit"

    def finish(self, t_s: float, *, safe: bool, nodes_ok: bool, detail: str) -> None:
        """The campaign ended at ``t_s``: ``safe`` (standing or sitting, upright) and
        ``nodes_ok`` (every node OK), ``detail`` saying what was seen."""
        self._tick(t_s, final=True)
        for rule in list(self._open):
            self._close(rule, t_s)
        self._open_limits = {True: 0, False: 0}
        if not safe:
            self.violations.append(Violation(t_s, "unsafe at the end", detail, 0.0, ()))
        if not nodes_ok:
            self.violations.append(Violation(t_s, "a node not OK at the end", detail, 0.0, ()))

    def violation(self, t_s: float, rule: str, detail: str, faults: tuple[int, ...]) -> None:
        """A rule the campaign checks itself was broken at ``t_s`` (a duplicate node that was
        not refused, a robot that did not come back after a restart)."""
        self.violations.append(Violation(t_s, rule, detail, 0.0, faults))

    def tick(self, t_s: float) -> None:
        """Time passed to ``t_s``: reports now past their bound are violations."""
        self._tick(t_s)

    @property
    def exempt(self) -> str:
        """Why the upright rule is suspended now (``"e-stop"``, ``"fallback sit"``; ``""``)."""
        return self._exempt

    # ---- internals ------------------------------------------------------------------------
    def _active(self, t_s: float) -> list[FaultRecord]:
        return [r for r in self.records if r.active(t_s)]

    def _tick(self, t_s: float, *, final: bool = False) -> None:
        """Reports not made within their bound are violations: checked once the bound and
        :attr:`InvariantBounds.report_grace_s` passed (a report is judged by its stamp, and may
        still be on its way), or at the end."""
        self._last_t = max(self._last_t, t_s)
        grace = self.bounds.report_grace_s
        for r in self.records:
            rule = r.expected
            if rule is None or r.missed:
                continue
            deadline = r.injected_s + rule.bound_s
            late = not math.isnan(r.detected_s) and r.detected_s > deadline
            missing = math.isnan(r.detected_s) and (final or t_s > deadline + grace)
            if late or missing:
                self.violations.append(
                    Violation(
                        r.injected_s + rule.bound_s,
                        "fault not reported",
                        f"{r.fault.describe()}: no {rule.min_level.name}+ from {rule.node}"
                        + (f" containing {' or '.join(map(repr, rule.contains))}"
                           if rule.contains else "")
                        + (f" about {rule.data.decode(errors='replace')}" if rule.data else "")
                        + f" within {rule.bound_s:g} s"
                        + (f" (it came after {r.detection_s:.3f} s)" if late else "")
                        + (f"; at injection: {r.context}" if r.context else "")
                        + self._heard_from(rule.node, r.injected_s - HEARD_BEFORE_S, deadline),
                        rule.bound_s,
                        (r.fault.index,),
                    )
                )
                r.missed = True  # one violation per missing report

    def _heard_from(self, node: str, begin_s: float, end_s: float) -> str:
        """``node``'s WARN+ reports stamped from ``begin_s`` to ``end_s`` (campaign s), as a
        clause of a violation's detail (the latest :data:`_HEARD_SHOWN`)."""
        heard = [
            f"t={t:.2f} s {text[:_HEARD_TEXT]!r}"
            for t, _level, who, text in self._heard
            if who == node and begin_s <= t <= end_s
        ]
        if not heard:
            return f"; {node} reported no WARN+ from {begin_s:.2f} s to {end_s:.2f} s"
        more = len(heard) - _HEARD_SHOWN
        return (
            f"; {node}'s WARN+ reports from {begin_s:.2f} s: "
            + (f"({more} earlier) " if more > 0 else "")
            + " | ".join(heard[-_HEARD_SHOWN:])
        )

    def _limits(
        self,
        t_s: float,
        positions: Sequence[float],
        velocities: Sequence[float],
        *,
        measured: bool,
    ) -> None:
        b = self.bounds
        # a command is checked as sent: float32 (its wire type) rounds a target at the limit
        # up to 5e-8 rad past it (1.047 -> 1.0470000505); that is the limit, not past it
        pos_tol = b.position_tolerance_rad if measured else _FLOAT32_SLACK
        speed_scale = 1.0 + (b.speed_tolerance if measured else _FLOAT32_SLACK)
        what = "measured" if measured else "commanded"
        # 1 000 samples a second: one pass for the worst values; episodes only where one is
        # broken or open (NaN compares false: not checked)
        worst_excursion = 0.0
        worst_speed = 0.0
        suspects: list[int] = []
        for i, limit in enumerate(self.limits):
            p = positions[i] if i < len(positions) else math.nan
            v = abs(velocities[i]) if i < len(velocities) else math.nan
            excess = max(p - limit.position_max, limit.position_min - p)
            worst_excursion = max(worst_excursion, excess)
            worst_speed = max(worst_speed, v)
            if excess > pos_tol or v > limit.velocity_max * speed_scale:
                suspects.append(i)
        if suspects or self._open_limits[measured]:
            self._limit_episodes(
                t_s,
                positions,
                velocities,
                measured=measured,
                what=what,
                pos_tol=pos_tol,
                speed_scale=speed_scale,
            )
        if measured:
            for r in self._active(t_s):
                r.max_speed = max(r.max_speed, worst_speed)
                r.max_excursion_rad = max(r.max_excursion_rad, worst_excursion)

    def _limit_episodes(
        self,
        t_s: float,
        positions: Sequence[float],
        velocities: Sequence[float],
        *,
        measured: bool,
        what: str,
        pos_tol: float,
        speed_scale: float,
    ) -> None:
        for i, (name, limit) in enumerate(zip(self.names, self.limits, strict=True)):
            if i < len(positions) and math.isfinite(positions[i]):
                p = positions[i]
                excess = max(p - limit.position_max, limit.position_min - p, 0.0)
                self._episode(
                    f"{what} position limit {name}",
                    t_s,
                    excess > pos_tol,
                    excess,
                    f"{name} (index {i}) {what} at {p:.4f} rad, limits "
                    f"[{limit.position_min:.4f}, {limit.position_max:.4f}] rad",
                )
            if (
                i < len(velocities)
                and math.isfinite(velocities[i])
                and math.isfinite(limit.velocity_max)
            ):
                v = abs(velocities[i])
                self._episode(
                    f"{what} speed limit {name}",
                    t_s,
                    v > limit.velocity_max * speed_scale,
                    v,
                    f"{name} (index {i}) {what} at {v:.2f} rad/s, limit "
                    f"{limit.velocity_max:g} rad/s",
                )
        self._open_limits[measured] = sum(
            1 for rule in self._open if rule.startswith(f"{what} ")
        )

    def _episode(self, rule: str, t_s: float, broken: bool, value: float, detail: str) -> None:
        episode = self._open.get(rule)
        if broken:
            if episode is None:
                faults = tuple(r.fault.index for r in self._active(t_s))
                self._open[rule] = _Episode(t_s, value, detail, faults)
            elif value > episode.worst:
                episode.worst = value
                episode.detail = detail
        elif episode is not None:
            self._close(rule, t_s)

    def _close(self, rule: str, t_s: float) -> None:
        episode = self._open.pop(rule, None)
        if episode is None:
            return
        worst = -episode.worst if rule == "body too low" else episode.worst
        self.violations.append(
            Violation(episode.start_s, rule, episode.detail, worst, episode.faults)
        )
