"""Expiry of velocity-type commands: a speed or current that is not renewed runs out.

Where it sits: :mod:`jointbus.drivers`, beside :mod:`.profiled_moves`; pure logic with no I/O,
used by the array node (:mod:`jointbus.nodes.array`, for every array it serves) and by the
``sim://`` driver (its drive-side watchdog, as a servo drive's firmware has one). Times are passed
in (``now_s``, seconds on the caller's clock: the monotonic clock for the node and for a
real-time simulator — the expiry is a bound on wall-clock silence —, simulated time for a stepping
simulator, whose caller's steps are its only clock), never read here, so it is tested without
sleeping.

**Why.** A position command is a move to a target: it ends by itself. A speed or current command
has no end: the joint keeps turning for as long as the command stands, so if the program that sent
it dies or hangs, the joint runs until it hits something. A robotics engineer expects such a
command to be a *stream* that must be renewed (ROS 2's ``cmd_vel`` timeouts, the drives' own
communication watchdogs): this class keeps, per joint, when its velocity-type command was last
renewed, and says which ones ran out. What to do then (bring the joint to rest within its
acceleration limit and hold it) is the caller's, because only the caller can command the joint.

The default timeout, :data:`DEFAULT_COMMAND_TIMEOUT_S` = 0.25 s, is the bridge's impedance
watchdog and the MD drives' communication watchdog: one rule for every stream.
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
import numpy.typing as npt

__all__ = ["DEFAULT_COMMAND_TIMEOUT_S", "CommandExpiry"]

IntArray = npt.NDArray[np.intp]

#: s: a velocity-type command not renewed within this time runs out.
DEFAULT_COMMAND_TIMEOUT_S: Final = 0.25


class CommandExpiry:
    """Per joint of an ``count``-joint array: the time its velocity-type command was last renewed.

    :meth:`arm` when a speed (≠ 0) or current command is accepted for some joints, :meth:`disarm`
    when they get a command that ends by itself (a position move, a stop, power off), and ask
    :meth:`expired` every cycle: it returns the joints whose command ran out (older than
    ``timeout_s``) and disarms them, so each expiry is returned once.
    """

    __slots__ = ("_any", "_renewed", "timeout_s")

    def __init__(self, count: int, timeout_s: float = DEFAULT_COMMAND_TIMEOUT_S) -> None:
        self.timeout_s = self.check_timeout(timeout_s)
        self._renewed = np.full(count, math.nan)  # NaN: no velocity-type command standing
        self._any = False  # any entry of _renewed not NaN

    @staticmethod
    def check_timeout(timeout_s: float) -> float:
        """``timeout_s`` as a float if it is a usable timeout (finite, > 0 s); ValueError if not."""
        if isinstance(timeout_s, bool) or not (
            isinstance(timeout_s, int | float) and math.isfinite(timeout_s) and timeout_s > 0.0
        ):
            raise ValueError(f"command_timeout = {timeout_s!r}; expected a finite time > 0 s")
        return float(timeout_s)

    @property
    def any_armed(self) -> bool:
        """True while some joint's velocity-type command is standing — one attribute read, for
        a check every cycle of a 500 Hz loop (:attr:`armed` builds an index array)."""
        return self._any

    @property
    def armed(self) -> IntArray:
        """Joints whose velocity-type command is standing (indices, ascending)."""
        return np.flatnonzero(~np.isnan(self._renewed)).astype(np.intp)

    def arm(self, indices: IntArray, now_s: float) -> None:
        """A velocity-type command for ``indices`` was accepted at ``now_s`` (s)."""
        self._renewed[indices] = now_s
        if len(indices):
            self._any = True

    def disarm(self, indices: IntArray | None = None) -> None:
        """``indices`` (``None``: every joint) got a command that ends by itself."""
        if indices is None:
            self._renewed[:] = math.nan
            self._any = False
        elif self._any:
            self._renewed[indices] = math.nan
            self._any = not bool(np.isnan(self._renewed).all())

    def expired(self, now_s: float) -> IntArray:
        """Joints whose command is older than the timeout at ``now_s`` (s); they are disarmed."""
        late = np.flatnonzero(now_s - self._renewed > self.timeout_s).astype(np.intp)
        if late.size:
            self._renewed[late] = math.nan
            self._any = not bool(np.isnan(self._renewed).all())
        return late
