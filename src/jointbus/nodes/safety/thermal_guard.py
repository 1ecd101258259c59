"""Actuator temperature supervision: WARN, torque derating, and drive off at shutdown.

Where it sits: :mod:`jointbus.nodes.safety` (used by the array node and hb50's bridge). The bridge
passes each cycle's measured actuator
temperatures (°C, actuator order) to :meth:`ThermalGuard.update` and scales the command it applies
with :meth:`ThermalGuard.derate`. Pure logic: no clock, no I/O.

Per joint, with ``warn_c ≤ derate_start_c < shutdown_c`` (defaults from the robot's parameters:
80 / 90 / 100 °C, the MD drives' shutdown at 100 °C with 20 °C hysteresis, hb50-facts.md):

- **Level** (:class:`ThermalLevel`): ``WARN`` at ``warn_c`` and above; ``ERROR`` at ``shutdown_c``
  and above. A level clears only when the joint has cooled ``hysteresis_c`` below the threshold
  that raised it (an ERROR joint at 85 °C stays ERROR until 80 °C, then is WARN until 60 °C), so a
  joint hovering at a threshold does not flood the status topic or switch its drive on and off.
- **Derating factor** in [0, 1]: 1 up to ``derate_start_c``, falling linearly to 0 at
  ``shutdown_c``; 0 while the joint is ``ERROR`` (drive off). It is a function of the temperature
  alone, continuous, so it needs no hysteresis.
- **Drive off** while ``ERROR``: the bridge commands zero torque to that joint.

How the factor is applied (:meth:`ThermalGuard.derate`): ``kp``, ``kd`` and ``effort`` are
multiplied by it, so the impedance law's whole output
``τ = effort + kp·(position − p) + kd·(velocity − v)`` is scaled by the factor — the torque is
derated whatever part of the law produces it, and the joint still moves towards its target, only
more softly.

A NaN temperature (actuator did not report) leaves that joint's level and factor unchanged: the
guard neither clears a hot joint nor raises an alarm on a missing reading (the bridge reports
missing readings through the joint status word).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from jointbus.drivers.impedance import ImpedanceCommand

__all__ = ["ThermalEvent", "ThermalGuard", "ThermalLevel"]


class ThermalLevel(enum.IntEnum):
    """A joint's thermal state; the values match :class:`jointbus.robots.hb50.messages.Level`."""

    OK = 1
    WARN = 2
    ERROR = 3


@dataclass(frozen=True, slots=True)
class ThermalEvent:
    """Joint ``joint`` (index ``index``) changed from ``old`` to ``new`` at ``temperature_c``."""

    joint: str
    index: int
    old: ThermalLevel
    new: ThermalLevel
    temperature_c: float

    def describe(self, guard: ThermalGuard) -> str:
        """One line for a status report, naming joint, index, temperature and consequence."""
        where = f"joint {self.joint!r} (index {self.index}) at {self.temperature_c:.1f} °C"
        if self.new is ThermalLevel.ERROR:
            return f"thermal: {where} ≥ shutdown {guard.shutdown_c:g} °C; drive off"
        if self.new is ThermalLevel.WARN and self.old is ThermalLevel.OK:
            return (
                f"thermal: {where} ≥ warning {guard.warn_c:g} °C; torque derated above "
                f"{guard.derate_start_c:g} °C"
            )
        if self.new is ThermalLevel.WARN:
            back_on = guard.shutdown_c - guard.hysteresis_c
            return f"thermal: {where} cooled below {back_on:g} °C; drive on, still WARN"
        return f"thermal: {where} cooled below {guard.warn_c - guard.hysteresis_c:g} °C; OK"


class ThermalGuard:
    """Per-joint thermal levels and torque derating factors (see the module docstring)."""

    __slots__ = (
        "_all_ok",
        "_factor",
        "_level_tuple",
        "_levels",
        "_names",
        "_unity",
        "derate_start_c",
        "hysteresis_c",
        "shutdown_c",
        "warn_c",
    )

    def __init__(
        self,
        names: Sequence[str],
        *,
        warn_c: float = 80.0,
        derate_start_c: float = 90.0,
        shutdown_c: float = 100.0,
        hysteresis_c: float = 20.0,
    ) -> None:
        self.check_thresholds(warn_c, derate_start_c, shutdown_c, hysteresis_c)
        self._names = tuple(names)
        self.warn_c = float(warn_c)
        self.derate_start_c = float(derate_start_c)
        self.shutdown_c = float(shutdown_c)
        self.hysteresis_c = float(hysteresis_c)
        n = len(self._names)
        self._levels = np.full(n, int(ThermalLevel.OK), dtype=np.int8)
        self._level_tuple = (ThermalLevel.OK,) * n
        self._all_ok = True
        self._factor = np.ones(n, dtype=np.float64)
        #: Every factor is 1 (nothing derated): kept where ``_factor`` is set, so that
        #: :meth:`derate`, which runs every cycle, does not scan the factors each time.
        self._unity = True

    @staticmethod
    def check_thresholds(
        warn_c: float, derate_start_c: float, shutdown_c: float, hysteresis_c: float
    ) -> None:
        """ValueError unless the thresholds are finite °C with ``warn_c ≤ derate_start_c <
        shutdown_c`` (the derating ramp needs a span > 0) and ``hysteresis_c ≥ 0``."""
        values = (warn_c, derate_start_c, shutdown_c, hysteresis_c)
        if not all(math.isfinite(v) for v in values):
            raise ValueError(f"thermal thresholds {values}: expected finite °C values")
        if not warn_c <= derate_start_c < shutdown_c:
            raise ValueError(
                f"warn_c = {warn_c}, derate_start_c = {derate_start_c}, shutdown_c = "
                f"{shutdown_c}: expected warn_c ≤ derate_start_c < shutdown_c"
            )
        if hysteresis_c < 0:
            raise ValueError(f"hysteresis_c = {hysteresis_c}; expected ≥ 0 °C")

    def set_thresholds(
        self,
        *,
        warn_c: float,
        derate_start_c: float,
        shutdown_c: float,
        hysteresis_c: float,
    ) -> None:
        """Use new thresholds (°C) from the next :meth:`update` on (live parameter changes).

        Checked as in the constructor (ValueError, nothing changed). Levels are kept and judged
        against the new thresholds by the next :meth:`update`: a joint already above a lowered
        threshold is raised then; one below a raised threshold clears only once it is
        ``hysteresis_c`` below it, as always. The derating factors are recomputed by that update
        too (the bridge applies changes at the start of a cycle, before the update).
        """
        self.check_thresholds(warn_c, derate_start_c, shutdown_c, hysteresis_c)
        self.warn_c = float(warn_c)
        self.derate_start_c = float(derate_start_c)
        self.shutdown_c = float(shutdown_c)
        self.hysteresis_c = float(hysteresis_c)
        # Take the full path next update, so the factors follow the new ramp at once.
        self._all_ok = False

    @property
    def names(self) -> tuple[str, ...]:
        return self._names

    @property
    def levels(self) -> tuple[ThermalLevel, ...]:
        """Level per joint (the same tuple object until a level changes: cheap to compare)."""
        return self._level_tuple

    @property
    def worst(self) -> ThermalLevel:
        """The highest level over all joints."""
        return ThermalLevel(int(self._levels.max())) if self._names else ThermalLevel.OK

    @property
    def factors(self) -> NDArray[np.float64]:
        """Torque derating factor per joint in [0, 1] (a copy)."""
        return self._factor.copy()

    @property
    def drive_off(self) -> NDArray[np.bool_]:
        """Per joint: True while the joint is shut down (level ERROR)."""
        off: NDArray[np.bool_] = self._levels == int(ThermalLevel.ERROR)
        return off

    def update(self, temperatures_c: ArrayLike) -> list[ThermalEvent]:
        """Take one reading per joint (°C, NaN = not reported); return the level changes."""
        temps = temperatures_c
        if not (  # a driver's reading (1-D float64 array) as it is; anything else converted
            type(temps) is np.ndarray and temps.dtype == np.float64 and temps.ndim == 1
        ):
            temps = np.asarray(temperatures_c, dtype=np.float64).reshape(-1)
        if temps.shape[0] != len(self._names):
            raise ValueError(
                f"{temps.shape[0]} temperatures for {len(self._names)} joints; expected one each"
            )
        # Fast path, every cycle of a cool robot: all OK and all readings below the warning
        # (a NaN fails the comparison and takes the full path). In plain Python over the
        # values: numpy's max and comparison cost ≈ 13 µs on the bridge's loop thread, whose
        # caches every cycle starts cold, this ≈ 4 µs (caches flushed before each call,
        # 2026-12-06).
        if self._all_ok:
            warn = self.warn_c
            for t in temps.tolist():
                if not t < warn:
                    break
            else:
                return []
        known = ~np.isnan(temps)
        t = np.where(known, temps, -np.inf)  # NaN → "cold" for the raise tests below …
        old = self._levels
        ok, warn, error = int(ThermalLevel.OK), int(ThermalLevel.WARN), int(ThermalLevel.ERROR)
        new = old.copy()
        # Raise immediately at a threshold.
        new[t >= self.warn_c] = np.maximum(new[t >= self.warn_c], warn)
        new[t >= self.shutdown_c] = error
        # Clear only after cooling by the hysteresis (… and unknown readings never clear).
        cooled_error = (old == error) & known & (t < self.shutdown_c - self.hysteresis_c)
        new[cooled_error] = warn
        cooled_warn = (new == warn) & known & (t < self.warn_c - self.hysteresis_c)
        new[cooled_warn] = ok
        span = self.shutdown_c - self.derate_start_c
        factor = np.clip((self.shutdown_c - temps) / span, 0.0, 1.0)
        factor = np.where(known, factor, self._factor)
        factor[new == error] = 0.0
        self._levels = new
        self._factor = factor
        self._unity = bool((factor == 1.0).all())
        changed = np.flatnonzero(new != old)
        if changed.size:
            self._level_tuple = tuple(ThermalLevel(int(v)) for v in new)
        self._all_ok = bool((new == ok).all())
        return [
            ThermalEvent(
                self._names[i],
                int(i),
                ThermalLevel(int(old[i])),
                ThermalLevel(int(new[i])),
                float(temps[i]),
            )
            for i in changed
        ]

    def derate(self, cmd: ImpedanceCommand) -> ImpedanceCommand:
        """``cmd`` with ``kp``, ``kd`` and ``effort`` scaled by each joint's factor.

        Returns ``cmd`` itself when no joint is derated (the usual case, no allocation).
        """
        if self._unity:
            return cmd
        factor = self._factor
        return ImpedanceCommand(
            cmd.position,
            cmd.velocity,
            cmd.effort * factor,
            cmd.kp * factor,
            cmd.kd * factor,
            cmd.brake,
        )
