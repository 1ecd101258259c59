"""What the array node writes when its command owner stalls or dies: the fallback policy hook.

Where it sits: :mod:`jointbus.nodes.safety` (used by the array node, :mod:`jointbus.nodes.array`).
When the :class:`~jointbus.nodes.safety.Watchdog` finds the impedance stream silent while it ran
(``run``), the node hands the actuators to a :class:`FallbackPolicy` until the owner (or another
source) comes back. The core knows no robot, so the policy is a hook:

- :class:`DampingFallback`, the default (``jointbus serve``), is the watchdog's safe command —
  damping only, brakes where fitted — and lets any valid command back at once: an arm sags slowly
  in damping and a returning command re-enters through the re-entry ramp.
- A robot may pass its own. A legged robot's controller dying mid-stride must not collapse the
  body: hb50's :class:`~jointbus.robots.hb50.bridge.fallback.StanceFallback` puts every foot down,
  holds a stance, then sits down slowly, and admits a returning controller only once the stance
  is quiet and only with a command that starts from the measured pose.

Pure logic, as every component here: the node passes each reading; a policy reads no clock of
its own and talks to no bus. Its time is the driver's, each reading's ``time``
(:class:`FallbackClock`): a bridge that skips cycles on a busy host still holds a 5 s stance for
5 s of the robot's time — counted in cycles, a user's trial (2026-12-06, 27–51 % of cycles
skipped) saw "ended after 1.89 s" for 3.50 s between the stamps of the two reports. Its reports
are :class:`FallbackReport` values the node puts on the status topic (level, text, JSON facts).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol

from jointbus.drivers.actuator_array import JointReading
from jointbus.drivers.impedance import ImpedanceCommand

__all__ = ["DampingFallback", "FallbackClock", "FallbackPolicy", "FallbackReport"]

ReportLevel = Literal["OK", "WARN", "ERROR"]


@dataclass(frozen=True, slots=True)
class FallbackReport:
    """One status report of a fallback: ``level`` (``OK`` / ``WARN`` / ``ERROR``), one line of
    ``text`` and the same figures as JSON-able ``facts`` (SI units)."""

    level: ReportLevel
    text: str
    facts: Mapping[str, object] = field(default_factory=dict)

    def data(self) -> bytes:
        """``facts`` as the status message's JSON ``data`` (with ``"event": "fallback"``)."""
        return json.dumps({"event": "fallback", **self.facts}).encode()


class FallbackClock:
    """Seconds into a fallback by the driver's clock (``JointReading.time``: the simulator's
    time, or the drive bus's), never less than one ``period`` (s) per cycle counted.

    Why the driver's clock and not cycles counted: the robot moves in its own time, and a bridge
    on a busy host skips cycles — the simulator then steps through the skipped slots, a drive
    keeps applying the last command through them — so a stance timed in cycles stretched with
    the share of cycles skipped, and its reports gave the shorter figure (a user's trial,
    2026-12-06: "ended after 1.89 s" for 3.50 s of the robot's time, 1.85×). Why the
    cycles as a floor: a driver whose clock does not move (a reading built by hand, a clock that
    stepped back) still gets a fallback that goes on, at the node's rate. The driver's clock is
    read from the start, not cycle to cycle, so a drive bus's jittery read times add no drift.
    """

    __slots__ = ("_base", "_cycles", "_t0", "elapsed", "period")

    def __init__(self, period: float) -> None:
        if not (math.isfinite(period) and period > 0.0):
            raise ValueError(f"period = {period!r}; expected a finite cycle time > 0 s")
        self.period = float(period)
        self.elapsed = 0.0
        """Seconds since :meth:`start` after the last :meth:`tick`."""
        self._base = 0.0
        self._cycles = 0
        self._t0 = math.nan

    def start(self, now: float) -> None:
        """The fallback begins at the reading stamped ``now`` (s, the driver's clock); the first
        :meth:`tick`, in the same cycle, is one period in."""
        self.set(0.0, now - self.period)

    def set(self, elapsed: float, now: float) -> None:
        """The fallback's time is ``elapsed`` (s) at the reading stamped ``now`` (a policy that
        moves on to a later phase at once); the next cycle's :meth:`tick` adds to it."""
        self.elapsed = self._base = float(elapsed)
        self._cycles = 0
        self._t0 = now

    def tick(self, now: float) -> float:
        """One cycle, at the reading stamped ``now``: the seconds since :meth:`start`."""
        self._cycles += 1
        counted = self._cycles * self.period
        driven = now - self._t0
        self.elapsed = self._base + (driven if driven > counted else counted)  # NaN: counted
        return self.elapsed


class FallbackPolicy(Protocol):
    """What the array node asks of a fallback, in this order (loop thread, one call a cycle).

    :meth:`begin` when the watchdog takes the stream away from a running owner; then, every cycle
    until a command is admitted or the fallback is cancelled (e-stop, drives off, a one-shot
    command), :meth:`command` for what to write; :meth:`admits` for each valid command of a
    source that wants the actuators back. :attr:`quiet` says whether the policy holds a pose of
    its own that a controller may now start from (the node shows ``hold`` then, ``safe`` before);
    :attr:`phase` is the word the node's state shows (``"damping"``, ``"stance"``, ...).
    """

    @property
    def name(self) -> str:
        """What the policy does, for reports (``"damping"``, ``"stance, then sit"``)."""
        ...

    @property
    def phase(self) -> str:
        """The current phase (a word), shown in the node's state while the fallback runs."""
        ...

    @property
    def early_after_s(self) -> float:
        """Silence (s) of a running stream after which :meth:`early` is asked, every cycle, if
        the fallback should take over before the watchdog time (``inf``: never)."""
        ...

    def early(self, reading: JointReading, last: ImpedanceCommand | None, silence_s: float) -> bool:
        """Whether to take over now, ``silence_s`` into a silence shorter than the watchdog's
        time, rather than keep applying ``last`` (a legged robot frozen mid-stride falls over
        its two stance feet within a quarter second)."""
        ...

    @property
    def quiet(self) -> bool:
        """True when a returning controller may take over (see :meth:`admits`)."""
        ...

    @property
    def rides_through_refusals(self) -> bool:
        """What a write of the owner's command that the driver refuses is (a bound its
        ``command_ranges()`` does not declare, an error on the bus). True: a missed command —
        the node writes the last command the driver took again, the refused one is no sign of
        life, and this policy's :meth:`early` rule or the watchdog hands the robot to
        :meth:`begin` if the driver keeps refusing (a walking robot, which damping mid-stride
        would drop). False: the node writes its safe command (damping) in that cycle and the
        next accepted command re-enters from the measured pose (an arm, which sags slowly)."""
        ...

    def begin(
        self, reading: JointReading, last: ImpedanceCommand | None, silence_s: float
    ) -> FallbackReport | None:
        """Take over from ``last`` (the command written in the cycle before; ``None``: nothing
        was) at ``reading``, after ``silence_s`` s without a command; the report says what the
        fallback will do and why (``None``: the watchdog's own report says it all)."""
        ...

    def command(self, reading: JointReading) -> ImpedanceCommand:
        """The command to write this cycle (one call a cycle; the time since :meth:`begin` is
        the driver's, ``reading.time``: see :class:`FallbackClock`)."""
        ...

    def admits(self, command: ImpedanceCommand, reading: JointReading) -> str | None:
        """``None`` if ``command`` (valid, from the source that owns the actuators) may end the
        fallback now; else why it is refused (a sentence for the status topic). The policy may
        act on the owner's refused command (hb50's shows ``safe``, not ``hold``, while a stiff
        one is refused, so that a controller that missed its own stall notices)."""
        ...

    def refusal(self, command: ImpedanceCommand, reading: JointReading) -> str | None:
        """What :meth:`admits` would answer, acting on nothing: asked of a command whose source
        does not own the actuators (yet), before arbitration ranks it (a refused command earns
        no rank)."""
        ...

    def take_reports(self) -> list[FallbackReport]:
        """Phase changes since the last call, oldest first (the queue is emptied)."""
        ...

    def cancel(self) -> None:
        """The fallback ends without a command (e-stop, drives off, one-shot control)."""
        ...


class DampingFallback:
    """The default fallback: the watchdog's safe command (``kp = 0``, damping, brakes where
    fitted) until any valid command comes back — what the array node always did."""

    __slots__ = ("_safe",)

    def __init__(self, safe: ImpedanceCommand) -> None:
        self._safe = safe

    @property
    def name(self) -> str:
        return "damping"

    @property
    def phase(self) -> str:
        return "damping"

    @property
    def early_after_s(self) -> float:
        return math.inf

    def early(self, reading: JointReading, last: ImpedanceCommand | None, silence_s: float) -> bool:
        return False

    @property
    def quiet(self) -> bool:
        return False  # damping holds no pose of its own: the node shows ``safe`` throughout

    @property
    def rides_through_refusals(self) -> bool:
        return False  # the node damps in the cycle of a refused write, as it always did

    def begin(
        self, reading: JointReading, last: ImpedanceCommand | None, silence_s: float
    ) -> FallbackReport | None:
        return None  # the watchdog's "safe mode (damping)" report is the whole story

    def command(self, reading: JointReading) -> ImpedanceCommand:
        return self._safe

    def admits(self, command: ImpedanceCommand, reading: JointReading) -> str | None:
        return None

    def refusal(self, command: ImpedanceCommand, reading: JointReading) -> str | None:
        return None

    def take_reports(self) -> list[FallbackReport]:
        return []

    def cancel(self) -> None:
        return None
