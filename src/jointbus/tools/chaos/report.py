"""The chaos campaign's report: a table per fault kind, the violations, and how to replay them.

Where it sits: :mod:`jointbus.tools.chaos`, fed by :mod:`.invariants`' fault records and
violations; ``jointbus chaos`` / ``make chaos`` print it and docs/SAFETY.md carries one.

One row per fault kind: how many were injected, and over all of them (each one's window plus
the settling time after it) the lowest ground-truth body height (m), the largest tilt (rad), the
fastest measured joint (rad/s), the largest excursion past a joint limit (rad, 0: none) and the
slowest detection (injection to its report on ``/<ns>/status``, s; ``-`` where no report is
expected). Every violation is listed with its campaign time, and the command that replays the
campaign — the seed fixes the velocity script and the fault schedule — is printed beside it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from jointbus.tools.chaos.fault_schedule import FaultKind, window_shift
from jointbus.tools.chaos.invariants import FaultRecord, Violation

__all__ = ["CampaignReport", "KindRow", "replay_command"]


def replay_command(
    seed: int,
    duration_s: float,
    faults_per_minute: float,
    window: tuple[float, float] | None = None,
) -> str:
    """The command line that runs the same campaign again (``duration_s``: the whole schedule's;
    ``window``: only the faults starting in it, campaign s of that schedule)."""
    return (
        f"jointbus chaos --seed {seed} --seconds {duration_s:g} "
        f"--faults-per-minute {faults_per_minute:g}"
        + ("" if window is None else f" --window {window[0]:g}:{window[1]:g}")
    )


#: A violation's own replay takes the faults that started this long before it (s).
VIOLATION_WINDOW_S: Final = 30.0


@dataclass(frozen=True, slots=True)
class KindRow:
    """One row of the table (see the module docstring); NaN: nothing measured."""

    kind: FaultKind
    count: int
    min_height_m: float
    max_tilt_rad: float
    max_speed: float
    max_excursion_rad: float
    worst_detection_s: float
    expected_reports: int
    missed_reports: int

    @classmethod
    def of(cls, kind: FaultKind, records: Sequence[FaultRecord]) -> KindRow:
        mine = [r for r in records if r.fault.kind is kind]
        heights = [r.min_height_m for r in mine if math.isfinite(r.min_height_m)]
        expected = [r for r in mine if r.expected is not None]
        detections = [r.detection_s for r in expected if math.isfinite(r.detection_s)]
        return cls(
            kind=kind,
            count=len(mine),
            min_height_m=min(heights, default=math.nan),
            max_tilt_rad=max((r.max_tilt_rad for r in mine), default=math.nan),
            max_speed=max((r.max_speed for r in mine), default=math.nan),
            max_excursion_rad=max((r.max_excursion_rad for r in mine), default=math.nan),
            worst_detection_s=max(detections, default=math.nan),
            expected_reports=len(expected),
            missed_reports=sum(1 for r in expected if r.missed),
        )


@dataclass(frozen=True, slots=True)
class CampaignReport:
    """The result of a campaign: ``seed``, campaign ``duration_s`` (s, the robot's run, restarts
    excluded) and ``wall_s`` (s, everything), the rows, the violations, ``load`` (the host's
    1-minute load average at the end), and the replay command."""

    seed: int
    duration_s: float
    wall_s: float
    faults_per_minute: float
    rows: tuple[KindRow, ...]
    violations: tuple[Violation, ...]
    ground_truth_samples: int
    load: float
    notes: tuple[str, ...] = ()
    #: The whole schedule's length (s) when only its ``window`` was replayed (``duration_s`` is
    #: then the short run's).
    schedule_s: float | None = None
    window: tuple[float, float] | None = None
    #: Campaign time (s) at which Ctrl-C or SIGTERM stopped the run (None: it ran to its end);
    #: the rows and violations cover the time before it, and the end state was not checked.
    stopped_at_s: float | None = None

    @classmethod
    def of(
        cls,
        *,
        seed: int,
        duration_s: float,
        wall_s: float,
        faults_per_minute: float,
        records: Sequence[FaultRecord],
        violations: Sequence[Violation],
        ground_truth_samples: int,
        load: float,
        notes: Sequence[str] = (),
        schedule_s: float | None = None,
        window: tuple[float, float] | None = None,
        stopped_at_s: float | None = None,
    ) -> CampaignReport:
        kinds = [k for k in FaultKind if any(r.fault.kind is k for r in records)]
        return cls(
            seed=seed,
            duration_s=duration_s,
            wall_s=wall_s,
            faults_per_minute=faults_per_minute,
            rows=tuple(KindRow.of(k, records) for k in kinds),
            violations=tuple(sorted(violations, key=lambda v: v.t_s)),
            ground_truth_samples=ground_truth_samples,
            load=load,
            notes=tuple(notes),
            schedule_s=schedule_s if window is not None else None,
            window=window,
            stopped_at_s=stopped_at_s,
        )

    @property
    def faults(self) -> int:
        return sum(row.count for row in self.rows)

    @property
    def passed(self) -> bool:
        """No violation over the whole campaign (the exit code is 0 only then): a run stopped
        early has not passed, whatever it found before."""
        return not self.violations and self.stopped_at_s is None

    @property
    def replay(self) -> str:
        return replay_command(
            self.seed, self.schedule_s or self.duration_s, self.faults_per_minute, self.window
        )

    def violation_replay(self, violation: Violation) -> str:
        """The short replay of one violation: the faults of the :data:`VIOLATION_WINDOW_S`
        before it, in the whole schedule's time."""
        back = 0.0 if self.window is None else window_shift(self.window[0])
        whole = self.schedule_s or self.duration_s
        end = min(whole, max(1, math.ceil(violation.t_s - back)))
        begin = max(0.0, math.floor(end - VIOLATION_WINDOW_S))
        return replay_command(self.seed, whole, self.faults_per_minute, (begin, end))

    def lines(self) -> list[str]:
        """The table, the verdict and every violation with the command that replays it."""
        verdict = f"{len(self.violations)} VIOLATIONS" if self.violations else "0 violations"
        ran = self.duration_s if self.stopped_at_s is None else self.stopped_at_s
        if self.stopped_at_s is not None:
            verdict = (
                f"STOPPED early (Ctrl-C or SIGTERM) at t={self.stopped_at_s:.1f} s of "
                f"{self.duration_s:g} s (not passed; end state not checked), {verdict}"
            )
        out = [
            f"chaos: seed {self.seed}, {ran:.0f} s of campaign ({self.wall_s:.0f} s "
            f"wall clock), {self.faults} faults, {self.ground_truth_samples} ground-truth "
            f"samples, load {self.load:.1f} — {verdict}",
            "",
            "| fault | count | min height (m) | max tilt (rad) | max joint speed (rad/s) "
            "| max limit excursion (rad) | worst detection (s) |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in self.rows:
            detection = "-"
            if r.expected_reports:
                detection = _num(r.worst_detection_s, 3)
                if r.missed_reports:
                    detection += f" ({r.missed_reports} of {r.expected_reports} missed)"
            out.append(
                f"| {r.kind.value} | {r.count} | {_num(r.min_height_m, 3)} "
                f"| {_num(r.max_tilt_rad, 3)} | {_num(r.max_speed, 2)} "
                f"| {_num(r.max_excursion_rad, 4)} | {detection} |"
            )
        out += [f"note: {n}" for n in self.notes]
        if self.violations:
            out.append("")
            out.append(f"violations (replay: {self.replay}):")
            for v in self.violations:
                out.append(f"  {v.describe(self.seed)}")
                out.append(f"    the faults before it alone: {self.violation_replay(v)}")
        return out

    def as_dict(self) -> dict[str, Any]:
        """For ``--json``: every field, the rows by kind, ``passed`` and ``replay``."""
        return {
            "seed": self.seed,
            "duration_s": self.duration_s,
            "wall_s": self.wall_s,
            "faults_per_minute": self.faults_per_minute,
            "faults": self.faults,
            "ground_truth_samples": self.ground_truth_samples,
            "load": self.load,
            "passed": self.passed,
            "stopped_at_s": self.stopped_at_s,
            "replay": self.replay,
            "schedule_s": self.schedule_s,
            "window": None if self.window is None else list(self.window),
            "rows": [
                {
                    "kind": r.kind.value,
                    "count": r.count,
                    "min_height_m": _json(r.min_height_m),
                    "max_tilt_rad": _json(r.max_tilt_rad),
                    "max_speed": _json(r.max_speed),
                    "max_excursion_rad": _json(r.max_excursion_rad),
                    "worst_detection_s": _json(r.worst_detection_s),
                    "expected_reports": r.expected_reports,
                    "missed_reports": r.missed_reports,
                }
                for r in self.rows
            ],
            "violations": [
                {"t_s": v.t_s, "rule": v.rule, "detail": v.detail, "worst": v.worst,
                 "faults": list(v.faults)}
                for v in self.violations
            ],
            "notes": list(self.notes),
        }


def _num(value: float, digits: int) -> str:
    return "-" if math.isnan(value) else f"{value:.{digits}f}"


def _json(value: float) -> float | None:
    return None if math.isnan(value) else value
