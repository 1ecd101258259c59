"""The bridge's re-entry ramp: after the drives stopped following commands, start from where the
robot *is*, never from where a command says it should be.

Where it sits: :mod:`jointbus.nodes.safety` (used by the array node and hb50's bridge), between
arbitration and the write: the bridge passes
the owner's command through :meth:`ReentryRamp.shape` every cycle in ``run`` mode. Pure logic:
the caller passes the measured positions and counts the cycles; nothing here reads a clock.

**Why.** While the drives were off (e-stop, ``power off``), damped (safe mode after the
watchdog) or braked, the robot moved: it fell, sagged, was pushed. A source that keeps sending the
posture it was holding before (a controller that did not notice, a user's script, a replayed
bag) then asks for a target far from the measured pose, and applying it at full stiffness snaps
the joints there: on the hb50, an e-stop reset under a standing command moved the knees at
24 rad/s, threw the body to 0.56 m and could land it on its back. The hold after a reset
(:mod:`.estop`) only protects until the next command; this ramp protects whatever comes next.

**The rule.** :meth:`ReentryRamp.begin` (all joints, or the joints whose brake was just released
or whose drive is back from a thermal shutdown, or that gets stiffness again after ``kp = 0``)
starts a re-entry from the measured positions. In the first command shaped after it, a joint
whose commanded target is within ``tolerance`` (rad) of the measured position — or which has no
stiffness (``kp = 0``: damping cannot jump) — passes straight through: a controller that reads
the robot again (the control node's stand-up starts from the measured pose) is not slowed down.
Every other joint is *guided*:

- its applied target starts at the measured position and moves towards the command along a
  straight line in joint space (all guided joints arrive together, so the posture passes through
  the poses between, as a stand-up does), no joint faster than ``speed`` (rad/s, capped by the
  joint's own velocity limit); the target velocity sent with it is the guide's own velocity;
- its stiffness ``kp`` and feed-forward torque rise linearly from 0 to the command's over
  ``gain_time`` (s); damping ``kd`` is applied in full (it only resists motion).

A joint whose guide has reached the command and whose gains are in full passes through from then
on; the re-entry is over when no joint is guided. A joint whose position was not measured (NaN)
starts at the commanded target with its gains ramped (there is no measured pose to start from).
Times are counted in bridge cycles of the nominal ``period`` (s): a loop that runs late moves the
target more slowly, never faster.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from jointbus.drivers.impedance import ImpedanceCommand

__all__ = ["ReentryEngaged", "ReentryFinished", "ReentryRamp"]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

#: A guide closer than this to its command (rad) has arrived (float32 round-off of the wire).
_ARRIVED: Final = 1e-6


@dataclass(frozen=True, slots=True)
class ReentryEngaged:
    """A command far from the measured pose is being ramped to.

    ``cause`` (why the re-entry began, e.g. ``"e-stop reset"``), ``source`` (the command's
    ``source_node``), the joint with the largest gap (``joint``, ``index``), its measured
    position and commanded target (rad), and the ramp settings (``speed`` rad/s, ``gain_time``
    s).
    """

    cause: str
    source: str
    joint: str
    index: int
    measured: float
    target: float
    speed: float
    gain_time: float

    def describe(self) -> str:
        gap = abs(self.target - self.measured)
        return (
            f"re-entry after {self.cause}: {self.source!r} commands joint {self.joint!r} (index "
            f"{self.index}) to {self.target:.3f} rad, {gap:.2f} rad from its measured "
            f"{self.measured:.3f} rad; moving the targets there from the measured pose at "
            f"≤ {self.speed:g} rad/s, stiffness rising over {self.gain_time:g} s"
        )


@dataclass(frozen=True, slots=True)
class ReentryFinished:
    """The guided joints reached the command after ``seconds`` (s, counted in cycles)."""

    cause: str
    seconds: float

    def describe(self) -> str:
        return (
            f"re-entry after {self.cause} complete in {self.seconds:.2f} s: commands apply as sent"
        )


ReentryEvent = ReentryEngaged | ReentryFinished


class ReentryRamp:
    """Per-joint re-entry from the measured pose (see the module docstring).

    ``names``: actuator order; ``velocity_limits``: each joint's velocity limit (rad/s);
    ``speed`` (rad/s, > 0): the guide's top speed, capped per joint by its limit; ``gain_time``
    (s, ≥ 0): how long stiffness takes to come back; ``tolerance`` (rad, ≥ 0): the gap that
    passes straight through; ``period`` (s): the bridge's nominal cycle.
    """

    __slots__ = (
        "_active",
        "_cause",
        "_cycles",
        "_events",
        "_expect",
        "_guide",
        "_guided",
        "_pending",
        "_ramp_cycles",
        "_ramped",
        "_ramping",
        "_shaped",
        "_step",
        "gain_time",
        "names",
        "period",
        "speed",
        "tolerance",
    )

    def __init__(
        self,
        names: Sequence[str],
        velocity_limits: Sequence[float],
        *,
        speed: float,
        gain_time: float,
        tolerance: float,
        period: float,
    ) -> None:
        self.check_settings(speed, gain_time, tolerance)
        if not (math.isfinite(period) and period > 0):
            raise ValueError(f"period = {period}; expected a finite cycle time > 0 s")
        self.names = tuple(names)
        n = len(self.names)
        limits = np.array(velocity_limits, dtype=np.float64)
        if limits.shape != (n,):
            raise ValueError(f"{limits.size} velocity limits for {n} joints; expected one each")
        self.speed = float(speed)
        self.gain_time = float(gain_time)
        self.tolerance = float(tolerance)
        self.period = float(period)
        self._step: FloatArray = np.minimum(self.speed, np.abs(limits)) * self.period
        self._ramp_cycles = max(1, math.ceil(self.gain_time / self.period - 1e-9))
        self._guide: FloatArray = np.zeros(n)
        self._pending: BoolArray = np.zeros(n, dtype=np.bool_)  # begun, not yet compared
        self._guided: BoolArray = np.zeros(n, dtype=np.bool_)  # target still on its way
        self._ramped: FloatArray = np.zeros(n)  # cycles since a joint's guide began
        self._cycles = 0
        self._active = False  # some joint pending or guided (kept as flags: asked every cycle)
        self._ramping = False  # some joint guided
        self._shaped = False  # the last shape() changed its command
        self._cause = ""
        self._expect: str | None = None
        self._events: list[ReentryEvent] = []

    @staticmethod
    def check_settings(speed: float, gain_time: float, tolerance: float) -> None:
        """ValueError unless ``speed`` > 0 rad/s and ``gain_time`` (s), ``tolerance`` (rad) ≥ 0,
        all finite."""
        if not (math.isfinite(speed) and speed > 0):
            raise ValueError(f"reentry_speed = {speed}; expected a finite speed > 0 rad/s")
        if not (math.isfinite(gain_time) and gain_time >= 0):
            raise ValueError(f"reentry_gain_time = {gain_time}; expected a finite time ≥ 0 s")
        if not (math.isfinite(tolerance) and tolerance >= 0):
            raise ValueError(f"reentry_tolerance = {tolerance}; expected a finite angle ≥ 0 rad")

    @property
    def active(self) -> bool:
        """True while some joint is begun or guided (its commands are being shaped)."""
        return self._active

    @property
    def ramping(self) -> bool:
        """True while some joint's target or gains are being ramped."""
        return self._ramping

    @property
    def shaped(self) -> bool:
        """True when the last :meth:`shape` returned a ramped copy, not the command itself."""
        return self._shaped

    @property
    def guided(self) -> tuple[bool, ...]:
        """Per joint: is its target still being ramped?"""
        return tuple(self._guided.tolist())

    def begin(
        self,
        measured: Sequence[float] | FloatArray,
        cause: str,
        joints: BoolArray | None = None,
        *,
        source: str | None = None,
    ) -> None:
        """Start a re-entry of ``joints`` (all when ``None``) from ``measured`` (rad, actuator
        order, NaN = not measured, already inside the position limits).

        ``source``: the re-entry is for the commands of this source (a new owner): commands of
        others pass through until its first one arrives. A joint already being guided starts
        again from its measured position.
        """
        mask = np.ones(len(self.names), dtype=np.bool_) if joints is None else joints
        if not mask.any():
            return
        if not self.active:
            self._cycles = 0
            self._cause = cause
        elif cause not in self._cause.split(" + "):
            self._cause = f"{self._cause} + {cause}"
        self._guide[mask] = np.asarray(measured, dtype=np.float64)[mask]
        self._expect = source
        self._pending |= mask
        self._guided &= ~mask
        self._active = True
        self._ramping = bool(self._guided.any())

    def cancel(self) -> None:
        """Forget any re-entry (the drives went off again: the next one begins afresh)."""
        self._pending[:] = False
        self._guided[:] = False
        self._active = self._ramping = False

    def take_events(self) -> list[ReentryEvent]:
        """Engaged / finished events since the last call, oldest first."""
        events, self._events = self._events, []
        return events

    def shape(self, cmd: ImpedanceCommand, source: str) -> ImpedanceCommand:
        """The command to write this cycle for ``cmd`` (sent by ``source``): ``cmd`` itself when
        nothing is guided, else a copy whose guided joints are ramped (see the module
        docstring)."""
        self._shaped = False
        if not self.active:
            return cmd
        target = cmd.position
        kp = cmd.kp
        pending = self._pending
        if pending.any():
            if self._expect is not None and source != self._expect:
                return cmd  # the previous owner's last command, until the new owner's arrives
            self._expect = None
            self._engage(cmd, source)
        guided = self._guided
        if not guided.any():
            self._active = self._ramping = False
            return cmd
        self._ramping = True
        self._cycles += 1
        gap = target - self._guide
        # One fraction for every guided joint (a straight line in joint space), each within
        # its own step; joints that have arrived keep the gain ramp only.
        moving = guided & (np.abs(gap) > _ARRIVED)
        fraction = 1.0
        if moving.any():
            fraction = float(min(1.0, np.min(self._step[moving] / np.abs(gap[moving]))))
        self._guide[guided] += fraction * gap[guided]
        self._ramped[guided] += 1.0
        gain = np.minimum(1.0, self._ramped / self._ramp_cycles)
        velocity = cmd.velocity
        if fraction < 1.0:
            velocity = velocity.copy()
            velocity[moving] = fraction * gap[moving] / self.period
        scale = np.where(guided, gain, 1.0)
        self._shaped = True
        shaped = ImpedanceCommand(
            np.where(guided, self._guide, target),
            velocity,
            cmd.effort * scale,
            kp * scale,
            cmd.kd,
            cmd.brake,
        )
        done = guided & (gain >= 1.0) & (np.abs(target - self._guide) <= _ARRIVED)
        if done.any():
            guided &= ~done
            if not guided.any():
                self._active = self._ramping = False
                self._events.append(ReentryFinished(self._cause, self._cycles * self.period))
        return shaped

    def _engage(self, cmd: ImpedanceCommand, source: str) -> None:
        """First command after :meth:`begin`: decide which begun joints need guiding."""
        target, kp = cmd.position, cmd.kp
        pending = self._pending
        guide = self._guide
        unknown = pending & np.isnan(guide)
        guide[unknown] = target[unknown]  # not measured: start at the target, gains ramped
        gap = np.abs(target - guide)
        far = pending & (kp > 0.0) & ((gap > self.tolerance) | unknown)
        if far.any():
            idx = int(np.flatnonzero(far)[np.argmax(gap[far])])
            self._events.append(
                ReentryEngaged(
                    self._cause,
                    source,
                    self.names[idx],
                    idx,
                    float(guide[idx]),
                    float(target[idx]),
                    self.speed,
                    self.gain_time,
                )
            )
        self._ramped[far] = 0.0
        self._guided |= far
        pending[:] = False
