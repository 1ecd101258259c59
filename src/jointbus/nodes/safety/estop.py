"""The bridge's emergency-stop latch, and the re-arm rule that prevents a jump after a reset.

Where it sits: :mod:`jointbus.nodes.safety` (used by the array node and hb50's bridge). ``jointbus
estop`` and an ``estop`` message on
``/hb50/hardware_command`` :meth:`~EStopLatch.trigger` it; while it is latched the bridge keeps the
drives off (braked where fitted) and publishes ``drives_enabled = false``, whatever commands
arrive. Pure logic: times are passed in as ``now_ns`` (monotonic nanoseconds), never read.

Why a *latch*: an e-stop must not clear itself when its cause goes away (a flaky cable, a second
"estop" that never comes); only an explicit :meth:`~EStopLatch.reset` re-arms.

Why the hold after reset: the last command before the stop was computed for where the robot *was*.
While the drives were off the robot moved (it sat down, someone pushed a leg), so re-applying that
target would jump the joints back to it at full stiffness. After a reset the bridge therefore holds
the position measured **at the reset** (:meth:`~EStopLatch.hold_command`) and only applies commands
that arrived *after* the reset (:meth:`~EStopLatch.is_fresh`): a controller that reads the robot
again after the reset starts from where the robot really is. Joints whose position was not
measured (NaN) get damping only: there is no position to hold.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from jointbus.drivers.impedance import ImpedanceCommand

__all__ = ["EStopLatch", "EStopReset", "EStopTriggered"]


@dataclass(frozen=True, slots=True)
class EStopTriggered:
    """The latch closed at ``at_ns`` for ``reason`` (e.g. ``"estop from jointbus_cli"``)."""

    reason: str
    at_ns: int

    def describe(self) -> str:
        return f"E-STOP latched: {self.reason}; drives off until an explicit reset"


@dataclass(frozen=True, slots=True)
class EStopReset:
    """The latch was reset at ``at_ns`` after ``latched_s`` seconds; ``reason`` was its cause."""

    reason: str
    at_ns: int
    latched_s: float

    def describe(self) -> str:
        return (
            f"E-STOP reset after {self.latched_s:.1f} s (was: {self.reason}); holding the measured "
            "position until a command sent after the reset arrives"
        )


class EStopLatch:
    """Latched emergency stop with an explicit reset and a hold-after-reset rule."""

    __slots__ = ("_hold", "_latched_at", "_reason", "_reset_at")

    def __init__(self) -> None:
        self._reason = ""
        self._latched_at: int | None = None
        self._reset_at: int | None = None
        self._hold: tuple[float, ...] | None = None

    @property
    def latched(self) -> bool:
        return self._latched_at is not None

    @property
    def reason(self) -> str:
        """Why the latch closed (empty when not latched)."""
        return self._reason if self.latched else ""

    @property
    def holding(self) -> bool:
        """True after a reset (or :meth:`begin_hold`) until a fresh command was accepted."""
        return self._hold is not None

    @property
    def hold_positions(self) -> tuple[float, ...] | None:
        """The positions (rad) measured at the last reset while the hold is on, else ``None``."""
        return self._hold

    def trigger(self, reason: str, now_ns: int) -> EStopTriggered | None:
        """Latch at ``now_ns``; ``None`` if already latched (the first reason is kept)."""
        if self._latched_at is not None:
            return None
        self._reason = reason
        self._latched_at = now_ns
        self._hold = None
        return EStopTriggered(reason, now_ns)

    def reset(self, now_ns: int, measured_positions: Sequence[float]) -> EStopReset | None:
        """Re-arm explicitly at ``now_ns``; ``None`` if not latched.

        ``measured_positions`` (rad, actuator order; NaN = not measured) are the positions read
        in the cycle of the reset: the bridge holds them until a fresh command arrives.
        """
        latched_at = self._latched_at
        if latched_at is None:
            return None
        self._latched_at = None
        self.begin_hold(now_ns, measured_positions)
        return EStopReset(self._reason, now_ns, (now_ns - latched_at) / 1e9)

    def begin_hold(self, now_ns: int, measured_positions: Sequence[float]) -> None:
        """Start a hold at ``now_ns`` without a latch: the drives come back on for another reason.

        Used by the bridge when it switches the drives on (at start, or on a ``power on``
        request): the same rule as after a reset applies — hold ``measured_positions`` (rad, NaN =
        not measured) and apply only commands received after ``now_ns``. Ignored while latched.
        """
        if self._latched_at is not None:
            return
        self._reset_at = now_ns
        self._hold = tuple(float(p) for p in measured_positions)

    def is_fresh(self, received_ns: int) -> bool:
        """Whether a command received at ``received_ns`` may be applied (sent after any reset).

        False while latched (nothing is applied), and for commands received at or before the
        last reset (they were computed before the robot moved).
        """
        if self._latched_at is not None:
            return False
        return self._reset_at is None or received_ns > self._reset_at

    def release_hold(self) -> None:
        """A fresh command was accepted: the hold after reset ends."""
        self._hold = None

    def hold_command(self, kp: float, kd: float) -> ImpedanceCommand:
        """Hold the positions measured at the reset: ``kp`` N·m/rad, ``kd`` N·m·s/rad, no torque.

        A joint whose measured position was NaN gets ``kp = 0`` (damping only). Raises
        ``RuntimeError`` when no hold is active (the bridge only asks while :attr:`holding`).
        """
        hold = self._hold
        if hold is None:
            raise RuntimeError("no hold is active (no reset or drive-on since the last command)")
        known = tuple(not math.isnan(p) for p in hold)
        positions = tuple(p if ok else 0.0 for p, ok in zip(hold, known, strict=True))
        gains = tuple(kp if ok else 0.0 for ok in known)
        return ImpedanceCommand.hold(positions, gains, kd)
