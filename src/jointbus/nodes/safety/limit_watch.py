"""Joint limits watched on every measured reading: the drive's limit events and real excursions.

Where it sits: :mod:`jointbus.nodes.safety` (used by the array node, and so by hb50's bridge).
Each cycle the node passes its reading (:class:`~jointbus.drivers.actuator_array.JointReading`,
joint space) to :meth:`LimitWatch.update`, which returns the events to report on the status topic
and keeps running totals per joint. Pure logic: no clock, no I/O.

**Why both.** Commands are checked against the limits before they apply, and the drive's limit
guard (:mod:`jointbus.drivers.limit_guard`) keeps speed, current and impedance commands inside
them — but what a robot *does* is what its joints measure: a leg folded past its knee limit by the
body's weight while the drives were off, a joint knocked past its end, a guard that could not brake
in time. Robots fail in combinations; a limit watched only on commands misses exactly those.
Two kinds of event, each with joint (name and index), value and limit:

- ``held`` — the drive holds the joint back at its position range or speed limit (the reading's
  :attr:`~jointbus.messages.actarray.state.ActuatorState.LIMITED` flag is set): a command asked
  for more, or a load (the body's weight on a folded knee) would have pushed it there faster than
  it can stop. WARN: the robot is safe, the command was not obeyed in full. Which limit holds it
  is the drive's word (``speed_limited``, :attr:`~jointbus.drivers.actuator_array.JointReading.
  speed_limited`): the speed it reads cannot tell, since the drive cuts a command the cycle
  *before* it would pass the speed limit (arm6's wrist under 3.5 A: at 1.95 rad/s, limit 3.0, in
  mid-range — once reported "at its position limit 3.05 rad (measured 0.007188 rad)"). Only a
  reading without it (a ``bus://`` array served again) is judged by its speed: held at 95 % of
  its speed limit or faster is taken for its speed limit, else for the end it is nearer to.
  A hold at an end of the range is either at it (measured within :data:`POSITION_TOLERANCE` of
  it, or past it): "held back by the drive at its position limit", or short of it: the guard
  brakes the joint's speed towards the end so that it can still stop there within its
  acceleration, "braking for its position limit 2.705 rad: measured 2.241 rad at 3.2 rad/s".
  Why told apart: after a SIGSTOP of hb50's control node mid-walk the bridge said ``fl_j2`` was
  "held back by the drive at its position limit 2.705 rad (measured 2.241 rad)", 0.46 rad from
  the end (a user's trial, 2026-12-06).
- ``position`` / ``speed`` — the measured position is past a position limit, or the measured speed
  past the speed limit, by more than a tolerance (sensor noise, encoder quantisation): an
  excursion. ERROR: the robot is where its description says it must never be.

**Which speed limit.** The joint's velocity limit, unless the caller passes ``speed_bounds``: the
bound the driver enforces (:meth:`~jointbus.drivers.actuator_array.ActuatorArray.speed_bounds`),
which is the driver's carried range where the limit is unbounded or wider — a ``can://`` md80
joint without a velocity limit is held to the motor's ±25 rad/s wire range. The array node passes
it, so a hold or a measured overspeed of such a joint is judged and reported against that figure
and names what sets it ("limit ±25 rad/s (the md80's wire range)"); before, the watch knew only
the joint's ``inf`` and reported no overspeed at all.

**Hysteresis.** An event is raised once when its condition begins; the joint is watched again once
it is back inside (by the tolerance), so a joint resting at a limit raises one event, not 500 a
second. A hold is watched per limit: a joint spun up against its speed limit and then braked to
rest at the end of its range is one event for each, and each is raised again only after the
drive let go of the joint. A NaN measurement (a lost motor) raises nothing and re-arms nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np
import numpy.typing as npt

from jointbus.messages.actarray.state import ActuatorState
from jointbus.model.limits import JointLimitSpec

__all__ = ["LIMIT_KINDS", "LimitEvent", "LimitWatch"]

LimitKind = Literal["held", "position", "speed"]
"""``held``: the drive held the joint back; ``position`` / ``speed``: a measured excursion."""
#: Every kind, in report order.
LIMIT_KINDS: Final[tuple[LimitKind, ...]] = ("held", "position", "speed")

#: rad or m: how far past a position limit a measured position must be to be an excursion.
POSITION_TOLERANCE: Final = 0.005
#: Fraction of the speed limit a measured speed must exceed it by to be an excursion.
SPEED_TOLERANCE: Final = 0.1

_LIMITED: Final = np.uint8(ActuatorState.LIMITED)
#: Where the reading does not say which limit holds a joint: one held while this close to its
#: speed limit (fraction) is taken for held at its speed limit; else at the end of its range it is
#: nearer to.
_AT_SPEED_LIMIT: Final = 0.95

_WatchKey = Literal["held speed", "held position", "position", "speed"]
"""A condition watched per joint: a hold at each limit, and each excursion."""
_KIND_OF: Final[dict[_WatchKey, LimitKind]] = {
    "held speed": "held",
    "held position": "held",
    "position": "position",
    "speed": "speed",
}


@dataclass(frozen=True, slots=True)
class LimitEvent:
    """A limit event of joint ``joint`` (index ``index``): ``kind`` (see the module docstring),
    which ``quantity`` it concerns, the measured ``value`` (rad or m for a position, rad/s or m/s
    for a speed) and the ``limit`` (the end of the range the joint is at, past or braking for,
    or the speed limit); ``speed``: the measured speed then (rad/s or m/s; NaN: not given);
    ``braking``: a hold at an end while the joint is still inside its range by more than
    :data:`POSITION_TOLERANCE` — the guard brakes its speed so that it can stop at the end."""

    joint: str
    index: int
    kind: LimitKind
    quantity: Literal["position", "speed"]
    value: float
    limit: float
    bound_by: str = ""
    """What sets ``limit`` when it is not the joint's own limit (a speed bound the driver
    enforces, e.g. "the md80's wire range"); empty: the joint's limit."""
    speed: float = math.nan
    braking: bool = False

    @property
    def excursion(self) -> bool:
        """True for a measured excursion past a limit (ERROR), False for a drive's hold (WARN)."""
        return self.kind != "held"

    def describe(self) -> str:
        """One line for the status topic."""
        where = f"joint {self.joint!r} (index {self.index})"
        unit = "rad/s" if self.quantity == "speed" else "rad"
        limit = f"±{self.limit:g}" if self.quantity == "speed" else f"{self.limit:g}"
        by = f" ({self.bound_by})" if self.bound_by else ""
        if self.braking:
            return (
                f"{where} braking for its position limit {limit} {unit}: measured "
                f"{self.value:.4g} {unit} at {self.speed:.3g} {unit}/s, "
                f"{abs(self.limit - self.value):.3g} {unit} from it: the command, or a load on "
                "the joint, would have taken it into the end faster than it can stop"
            )
        if self.kind == "held":
            return (
                f"{where} held back by the drive at its {self.quantity} limit {limit} {unit}{by} "
                f"(measured {self.value:.4g} {unit}): the command, or a load on the joint, would "
                "have taken it further or faster"
            )
        past = "past its position limit" if self.quantity == "position" else (
            "faster than its speed limit"
        )
        return f"{where} is {past}: measured {self.value:.4g} {unit}, limit {limit} {unit}{by}"

    def data(self) -> dict[str, object]:
        """The same facts for the status message's JSON ``data``."""
        facts: dict[str, object] = {
            "event": "limit",
            "kind": self.kind,
            "joint": self.joint,
            "index": self.index,
            "quantity": self.quantity,
            "value": self.value,
            "limit": self.limit,
            **({"bound_by": self.bound_by} if self.bound_by else {}),
        }
        if math.isfinite(self.speed):  # "speed" and "braking": new keys, the others as before
            facts |= {"speed": self.speed, "braking": self.braking}
        return facts


class LimitWatch:
    """Limit events of N joints (see the module docstring); ``limits`` in joint space, actuator
    order; ``position_tolerance`` in rad or m, ``speed_tolerance`` a fraction of each speed limit.
    ``speed_bounds`` (rad/s or m/s per joint, ``inf``: none; default: the limits' velocity limits)
    and ``speed_bound_by`` (per joint, what sets a bound that is not the joint's own limit; empty:
    the limit): the speed bound the driver enforces (module docstring, "Which speed limit").
    """

    __slots__ = (
        "_all_armed",
        "_armed",
        "_bounds",
        "_limited_mask",
        "_lower",
        "_lower_tol",
        "_names",
        "_position_tol",
        "_speed_by",
        "_upper",
        "_upper_tol",
        "_vmax",
        "_vtol",
        "counts",
    )

    def __init__(
        self,
        names: Sequence[str],
        limits: Sequence[JointLimitSpec],
        *,
        position_tolerance: float = POSITION_TOLERANCE,
        speed_tolerance: float = SPEED_TOLERANCE,
        speed_bounds: Sequence[float] | npt.NDArray[np.float64] | None = None,
        speed_bound_by: Sequence[str] | None = None,
    ) -> None:
        if len(names) != len(limits):
            raise ValueError(f"{len(names)} joint names but {len(limits)} limit specs")
        self._names = tuple(names)
        n = len(self._names)
        self._lower = np.array([s.position_min for s in limits], dtype=np.float64)
        self._upper = np.array([s.position_max for s in limits], dtype=np.float64)
        if speed_bounds is None:
            self._vmax = np.array([s.velocity_max for s in limits], dtype=np.float64)
        else:
            self._vmax = np.array(speed_bounds, dtype=np.float64).reshape(-1)
            if self._vmax.size != n:
                raise ValueError(f"{n} joint names but {self._vmax.size} speed bounds")
            for i, bound in enumerate(self._vmax.tolist()):
                if not bound >= 0.0:  # NaN too; ≥ 0 as a velocity limit (JointLimitSpec)
                    raise ValueError(
                        f"joint {self._names[i]!r} (index {i}): speed_bounds = {bound!r}; "
                        "expected a magnitude >= 0 (rad/s or m/s; inf: none)"
                    )
        by = tuple(speed_bound_by) if speed_bound_by is not None else ("",) * n
        if len(by) != n:
            raise ValueError(f"{n} joint names but {len(by)} speed_bound_by entries")
        self._speed_by = by
        self._position_tol = float(position_tolerance)
        self._lower_tol = self._lower - self._position_tol
        self._upper_tol = self._upper + self._position_tol
        self._vtol = self._vmax * (1.0 + float(speed_tolerance))
        # The common case's test in plain Python (``update``): per joint (lower, upper, speed)
        # with the tolerances, and LIMITED in every byte of an n-byte integer.
        self._bounds = tuple(
            zip(
                self._lower_tol.tolist(), self._upper_tol.tolist(), self._vtol.tolist(), strict=True
            )
        )
        self._limited_mask = int.from_bytes(bytes([int(_LIMITED)]) * n, "little")
        self._all_armed = True
        #: Per condition (a hold per limit, each excursion), the joints whose condition is clear
        #: (an event may be raised).
        self._armed: dict[_WatchKey, npt.NDArray[np.bool_]] = {
            key: np.ones(n, dtype=np.bool_)
            for key in ("held speed", "held position", "position", "speed")
        }
        self.counts: dict[LimitKind, npt.NDArray[np.int64]] = {
            kind: np.zeros(n, dtype=np.int64) for kind in ("held", "position", "speed")
        }
        """Running totals of events per kind, per joint (for diagnostics)."""

    def total(self, kind: LimitKind) -> int:
        """Events of ``kind`` so far, all joints."""
        return int(self.counts[kind].sum())

    def update(
        self,
        position: npt.NDArray[np.float64],
        velocity: npt.NDArray[np.float64],
        state: npt.NDArray[np.uint8],
        speed_limited: npt.NDArray[np.bool_] | None = None,
    ) -> list[LimitEvent]:
        """The events that begin with this reading (joint space); empty on almost every cycle.

        ``speed_limited``: the drive's word on which of the ``LIMITED`` joints it holds at their
        speed limit (the others at an end of their range); ``None``: judged by the speed read
        (module docstring). The common case — every joint inside, none held, none waiting to be
        re-armed — costs one combined test (a few numpy calls); the full bookkeeping runs only
        otherwise.

        That test runs in plain Python over the values (``tolist``) when the reading is a
        driver's (1-D float64 positions and velocities, uint8 states, one per joint): numpy's
        ufuncs on 12 values cost ≈ 21 µs on the bridge's loop thread, whose caches every 2 ms
        cycle starts cold, this ≈ 9 µs (both measured with the caches flushed before each call,
        2026-12-06); anything else takes the numpy test (and its errors)."""
        if self._all_armed:  # (comparisons with NaN are False and raise no warning)
            bounds = self._bounds
            if (
                type(position) is np.ndarray
                and type(velocity) is np.ndarray
                and type(state) is np.ndarray
                and position.dtype == velocity.dtype == np.float64
                and state.dtype == np.uint8
                and position.shape == velocity.shape == state.shape == (len(bounds),)
            ):
                for p, v, (lower, upper, vtol) in zip(
                    position.tolist(), velocity.tolist(), bounds, strict=True
                ):
                    if p < lower or p > upper or abs(v) > vtol:
                        break
                else:
                    if not int.from_bytes(state.tobytes(), "little") & self._limited_mask:
                        return []
            else:
                outside = position < self._lower_tol
                outside |= position > self._upper_tol
                outside |= np.abs(velocity) > self._vtol
                if not outside.any() and not (state & _LIMITED).any():
                    return []
        events = self._update(position, velocity, state, speed_limited)
        self._all_armed = all(bool(armed.all()) for armed in self._armed.values())
        return events

    def _update(
        self,
        position: npt.NDArray[np.float64],
        velocity: npt.NDArray[np.float64],
        state: npt.NDArray[np.uint8],
        speed_limited: npt.NDArray[np.bool_] | None,
    ) -> list[LimitEvent]:
        tol = self._position_tol
        with np.errstate(invalid="ignore"):
            below = position < self._lower - tol
            above = position > self._upper + tol
            fast = np.abs(velocity) > self._vtol
            inside = (position >= self._lower) & (position <= self._upper)
            slow = np.abs(velocity) <= self._vmax
            if speed_limited is None:
                speed_limited = np.abs(velocity) >= _AT_SPEED_LIMIT * self._vmax
        held = (state & _LIMITED) != 0
        conditions: dict[_WatchKey, npt.NDArray[np.bool_]] = {
            "held speed": held & speed_limited,
            "held position": held & ~speed_limited,
            "position": below | above,
            "speed": fast,
        }
        clear: dict[_WatchKey, npt.NDArray[np.bool_]] = {
            "held speed": ~held,  # a hold is over when the drive lets go, not when it changes
            "held position": ~held,
            "position": inside,
            "speed": slow,
        }
        events: list[LimitEvent] = []
        for key, condition in conditions.items():
            armed = self._armed[key]
            armed |= clear[key]
            begins = condition & armed
            if not begins.any():
                continue
            armed &= ~begins
            self.counts[_KIND_OF[key]] += begins
            for i in np.flatnonzero(begins).tolist():
                events.append(self._event(key, i, float(position[i]), float(velocity[i])))
        return events

    def _event(self, key: _WatchKey, i: int, p: float, v: float) -> LimitEvent:
        lower, upper, vmax = float(self._lower[i]), float(self._upper[i]), float(self._vmax[i])
        kind = _KIND_OF[key]
        if key in ("speed", "held speed"):
            return LimitEvent(self._names[i], i, kind, "speed", v, vmax, bound_by=self._speed_by[i])
        end = lower if abs(p - lower) < abs(p - upper) else upper
        tol = POSITION_TOLERANCE
        braking = kind == "held" and lower + tol < p < upper - tol  # inside, short of the end
        return LimitEvent(
            self._names[i], i, kind, "position", p, end, speed=v, braking=braking
        )
