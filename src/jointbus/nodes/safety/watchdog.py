"""The bridge's command watchdog: no valid command for a while → safe mode (damping only).

Where it sits: :mod:`jointbus.nodes.safety` (used by the array node and hb50's bridge), after
arbitration: the bridge feeds it each time it
accepts a valid command from the current owner, and asks it every cycle whether the commands
stopped. Pure logic: times are passed in as ``now_ns`` (monotonic nanoseconds), never read.

Why damping and not "drives off": a robot whose controller died mid-stride should sink, not
collapse nor keep pushing towards a target computed before the controller died. The safe command
(:func:`safe_command`) has no stiffness (``kp = 0``), no feed-forward torque and zero target
velocity, so each joint only resists motion, ``τ = −kd·v``; joints fitted with a brake engage it.
Damping only slows the fall: with the bridge's default (``SAFE_KD`` = 4.5 N·m·s/rad) a standing
hb50 reaches 0.15 m 0.77 s after safe mode begins and 0.10 m after 1.91 s (MuJoCo; see
:mod:`jointbus.robots.hb50.bridge.node` for why not more).
The default timeout, 250 ms, is the MD drives' own communication watchdog (hb50-facts.md): the
bridge reacts no later than the drives themselves would.

The bridge starts in safe mode: until the first valid command arrives there is nothing to apply.
Entering and leaving safe mode are :class:`SafeModeEntered` / :class:`SafeModeLeft` events, kept
until :meth:`Watchdog.take_events`, so each transition is reported once (the first command after
start is not an event: the bridge reports its start separately).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from jointbus.drivers.impedance import ImpedanceCommand

__all__ = ["SafeModeEntered", "SafeModeLeft", "Watchdog", "WatchdogEvent", "safe_command"]

_NS_PER_S: Final = 1_000_000_000


@dataclass(frozen=True, slots=True)
class SafeModeEntered:
    """No valid command for ``silence_s`` (> the timeout) at ``at_ns``: safe mode begins."""

    at_ns: int
    silence_s: float

    def describe(self, then: str = "safe mode (damping)") -> str:
        """The report; ``then``: what the node does now — its safe command by default, or the
        fallback that holds the robot (a robot's own policy: hb50's stance, then sit)."""
        return f"watchdog: no valid command for {self.silence_s * 1e3:.0f} ms; {then}"


@dataclass(frozen=True, slots=True)
class SafeModeLeft:
    """A valid command arrived at ``at_ns`` after ``safe_s`` seconds in safe mode, ``silence_s``
    after the last one's life began (the silence: the safe mode and the timeout before it)."""

    at_ns: int
    safe_s: float
    silence_s: float

    def describe(self) -> str:
        # "in safe mode" was false for the time a fallback or an e-stop held the robot meanwhile;
        # "without a valid one" was false too: a controller back after 1 s sent valid commands
        # that the running fallback refused for another second (a new user's trial, 2026-12-07).
        # The figure was the safe mode's alone, beside "since the silence began": a 2.0 s
        # SIGSTOP read "resumed after 1.75 s" (a trial, 2026-12-07).
        return (
            f"watchdog: commands resumed after {self.silence_s:.2f} s without one (safe mode "
            f"for the last {self.safe_s:.2f} s; the first command taken since the silence "
            "began; a fallback or an e-stop that holds the robot refuses those that come "
            "meanwhile)"
        )


WatchdogEvent = SafeModeEntered | SafeModeLeft


class Watchdog:
    """Tracks the time since the last valid command against ``timeout_s`` (seconds)."""

    __slots__ = (
        "_events",
        "_last_ns",
        "_safe",
        "_safe_since",
        "_timeout_ns",
        "timeout_s",
    )

    def __init__(self, timeout_s: float = 0.25) -> None:
        self.timeout_s = self.check_timeout(timeout_s)
        self._timeout_ns = round(self.timeout_s * _NS_PER_S)
        self._last_ns: int | None = None
        self._safe = True
        # when safe mode began and the last command's life then (ns); None: not entered by a
        # silence (never fed yet)
        self._safe_since: tuple[int, int] | None = None
        self._events: list[WatchdogEvent] = []

    @staticmethod
    def check_timeout(timeout_s: float) -> float:
        """``timeout_s`` as a float if it is a usable timeout (finite, > 0 s); ValueError if not."""
        if not (math.isfinite(timeout_s) and timeout_s > 0):
            raise ValueError(f"timeout_s = {timeout_s}; expected a finite time > 0 s")
        return float(timeout_s)

    def set_timeout(self, timeout_s: float) -> None:
        """Use ``timeout_s`` (s) from now on (a live ``watchdog_time`` change).

        The silence already counted is kept: if the last command is older than the new timeout,
        the next :meth:`expired` enters safe mode (a shorter timeout acts at once, it does not
        restart the count); a longer one simply lets the current command live longer.
        """
        self.timeout_s = self.check_timeout(timeout_s)
        self._timeout_ns = round(self.timeout_s * _NS_PER_S)

    @property
    def last_feed_ns(self) -> int | None:
        """Where the newest valid command's life began (``None``: never fed): when it arrived, or
        the time of the data it answers when that is known (:meth:`feed`)."""
        return self._last_ns

    def feed(self, now_ns: int, *, answers_ns: int | None = None) -> None:
        """A valid command from the owner was accepted at ``now_ns``; leaves safe mode.

        ``answers_ns``: when the command's controller is known to have computed it from data of
        that time (a command stamped with the frame it answers) — its life counts from there, not
        from its arrival. A controller that stopped with commands still in flight (queued behind
        a stalled host) is then seen silent ``timeout_s`` after its last computation, not after
        the last of its backlog arrives: with arrival alone the owner could stay in charge for
        up to twice the timeout after it stopped. Never earlier than a previous feed's.
        """
        life = now_ns if answers_ns is None else min(now_ns, answers_ns)
        last = self._last_ns
        self._last_ns = life if last is None else max(last, life)
        if self._safe:
            self._safe = False
            if self._safe_since is not None:
                since, silent = self._safe_since
                self._events.append(
                    SafeModeLeft(
                        now_ns, (now_ns - since) / _NS_PER_S, (now_ns - silent) / _NS_PER_S
                    )
                )
            self._safe_since = None

    def withdraw(self, life_ns: int) -> None:
        """The commands fed since the one whose life began at ``life_ns`` (ns) were not applied
        (the driver refused them when written): the stream's life is back to ``life_ns``. A
        command the drives never took is no sign that its controller drives them; counted as
        one, a stream the driver refused for good kept the watchdog fed for as long as it ran.
        Never moves the life forward."""
        last = self._last_ns
        if last is not None and life_ns < last:
            self._last_ns = life_ns

    def expired(self, now_ns: int) -> bool:
        """True when in safe mode at ``now_ns``: never fed, or silent for more than the timeout."""
        last = self._last_ns
        if not self._safe and last is not None and now_ns - last > self._timeout_ns:
            self._safe = True
            self._safe_since = (now_ns, last)
            self._events.append(SafeModeEntered(now_ns, (now_ns - last) / _NS_PER_S))
        return self._safe

    def take_events(self) -> list[WatchdogEvent]:
        """Transitions since the last call, oldest first (the queue is emptied)."""
        events, self._events = self._events, []
        return events


def safe_command(
    count: int,
    kd: float | Sequence[float],
    has_brake: Sequence[bool] | None = None,
) -> ImpedanceCommand:
    """The safe-mode command for ``count`` joints: ``kp = 0``, damping ``kd`` (N·m·s/rad), no
    effort, brakes where fitted.

    ``kd`` is one value for every joint or one per joint; ``has_brake`` marks joints fitted with
    a brake (none when ``None``).
    """
    brakes = (False,) * count if has_brake is None else tuple(bool(b) for b in has_brake)
    if len(brakes) != count:
        raise ValueError(
            f"has_brake has {len(brakes)} entries for {count} joints; expected one each"
        )
    damping = ImpedanceCommand.damping(count, kd)
    if not any(brakes):
        return damping
    return damping.replace(brake=np.array(brakes, dtype=np.bool_))
