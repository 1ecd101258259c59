"""Speed-, acceleration- and jerk-limited motion profiles for N joints, computed by ruckig.

Where it sits: :mod:`jointbus.drivers.sim`, beside :mod:`.actuator_model`. The ``sim://`` driver
turns Player-style position and speed commands (and homing, which is a position move to the home
pose) into profiled references with :class:`ProfileGenerator`, and feeds ``p_ref``/``v_ref`` (and
``a_ref`` for an inertia feed-forward, if it wants) to the actuators' impedance law as targets.
Player's speed and acceleration requests change the per-joint limits at run time
(:meth:`ProfileGenerator.set_limits`).

Why ruckig and not a hand-written trapezoid: it computes time-optimal jerk-limited profiles from
*any* current state (moving, accelerating, even above a freshly lowered speed limit), which is
exactly what re-targeting a joint mid-move needs, and it does so in about a microsecond.

How the joints stay independent: one :class:`ruckig.Ruckig` for all N joints, with
``Synchronization.No`` so each joint reaches its own target in its own minimum time, and a
per-joint control interface (``Position`` for moves, ``Velocity`` for speed moves). A new request
for one joint re-plans all joints from their current sampled state; the others keep their
targets, and because their profiles are time-optimal the re-planned remainder is the same motion.
The trajectory is sampled with ``Trajectory.at_time``, so the caller's ``dt`` may vary per step.

**Position bounds** (:meth:`set_position_bounds`; none by default). A speed move has no end, so a
renewed speed request would carry a joint past the end of its range; with bounds set, each step
checks every joint cruising towards a bound and, as soon as its jerk-limited stopping distance
(plus one more step) reaches the bound, turns the speed move into a position move *to* the bound:
ruckig then decelerates it within the acceleration and jerk limits to stop exactly there, as a
drive's limit supervisor does. A speed request towards a bound the joint already stands at is
turned into that hold at once. Such joints are :attr:`ProfileGenerator.limited` until their next
request; a drive reports them (``ActuatorState.LIMITED``) — except a *stop* (speed 0) that
would have come to rest past a bound and was turned into a move to it: that one is limited while
it brakes and no longer once it rests there, since a speed of 0 asks for nothing beyond the bound
(a user's trial, 2026-12-06: a knee stopped with ``speed(0)`` while braking for its end read
``IDLE | LIMITED`` at rest for good). Position targets are the caller's to
keep inside the range (the driver API clamps or refuses them).

**A request is planned whole or not at all.** ruckig plans every joint in one call and refuses
a profile longer than its numerical limit (≈ 7 600 s: a 0.3 rad move at 4e-5 rad/s). A speed
of 1e-6 rad/s was accepted and the next six-joint move raised ``-101 is not a valid Result``
after five joints had moved (a user's trial, 2026-12-06). Now a move, or a limit change that
re-plans the moves under way, whose estimated duration exceeds :data:`MAX_MOVE_S` (1 h) is
refused before anything changes (:class:`~jointbus.messages.errors.LimitError` naming the joint,
its index, the field, the value and the time it would take); should ruckig still refuse a plan,
the state before the request is restored and re-planned, and the refusal names the joint with
the longest move. Moves of several joints (:meth:`ProfileGenerator.move_to` with a list of
indices) are one plan, so they start together or not at all.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from ruckig import (
    ControlInterface,
    InputParameter,
    Result,
    Ruckig,
    RuckigError,
    Synchronization,
    Trajectory,
)

from jointbus.messages.errors import LengthMismatchError, LimitError, NonFiniteError

__all__ = ["MAX_MOVE_S", "Joints", "ProfileGenerator", "ProfilePlanningError"]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

_GEN = "ProfileGenerator"
_AT_TARGET = 1e-9  # rad, rad/s, rad/s²: a reference this close to its target and to rest is on it
MAX_MOVE_S = 3600.0
"""s: the longest move a request may ask for (estimated from the distance and the limits). ruckig
itself refuses profiles over ≈ 7 600 s; an hour leaves the estimate room to be rough."""

Joints = int | Sequence[int] | npt.NDArray[np.intp] | None
"""One joint (an index), several (indices), or all (``None``)."""


class ProfilePlanningError(RuntimeError):
    """ruckig could not compute a profile for inputs that passed validation (a bug to report)."""


def _read_only(array: npt.NDArray[np.generic]) -> npt.NDArray[np.generic]:
    view = array.view()
    view.flags.writeable = False
    return view


class ProfileGenerator:
    """Profiled position and speed moves for N joints; see the module docstring.

    Args:
        names: joint names (N = ``len(names)``), for error messages.
        max_velocity: speed limit per joint (or one for all), rad/s (> 0).
        max_acceleration: acceleration limit, rad/s² (> 0).
        max_jerk: jerk limit, rad/s³ (> 0; ``math.inf`` for acceleration-limited profiles).
        initial_positions: where the joints start, at rest, rad (default zeros).

    Every request is checked whole before anything changes; a bad one raises a
    :class:`~jointbus.messages.errors.ValidationError` (a ``ValueError``) naming joint (name and
    index), field, value and what was expected.
    """

    def __init__(
        self,
        names: Sequence[str],
        *,
        max_velocity: npt.ArrayLike,
        max_acceleration: npt.ArrayLike,
        max_jerk: npt.ArrayLike = math.inf,
        initial_positions: npt.ArrayLike | None = None,
    ) -> None:
        self._names = tuple(names)
        n = len(self._names)
        if n == 0:
            raise LengthMismatchError(_GEN, "names", self._names, "at least one joint")
        self._n = n
        self._max_v = self._limit_array("max_velocity", max_velocity, allow_inf=False)
        self._max_a = self._limit_array("max_acceleration", max_acceleration, allow_inf=False)
        self._max_j = self._limit_array("max_jerk", max_jerk, allow_inf=True)
        self._p = np.zeros(n)
        self._v = np.zeros(n)
        self._a = np.zeros(n)
        if initial_positions is not None:
            self._p[:] = self._values("initial_positions", initial_positions)
        self._target_p = self._p.copy()
        self._target_v = np.zeros(n)
        self._velocity_mode = np.zeros(n, dtype=np.bool_)
        self._durations = np.zeros(n)  # per-joint profile duration from plan time, s
        self._finished = np.ones(n, dtype=np.bool_)
        self._active = np.zeros(n, dtype=np.bool_)
        self._cruising = np.zeros(n, dtype=np.bool_)  # speed move at a nonzero speed
        self._lower = np.full(n, -math.inf)  # position bounds of speed moves (set_position_bounds)
        self._upper = np.full(n, math.inf)
        self._bounded = False
        self._limited = np.zeros(n, dtype=np.bool_)  # speed moves stopped at a bound
        # of _limited: stops (speed 0) cut short at a bound, limited only until they rest
        self._stop_limited = np.zeros(n, dtype=np.bool_)
        self._t = 0.0  # time since the last plan, s
        self._ruckig = Ruckig(n)
        self._input = InputParameter(n)
        self._input.synchronization = Synchronization.No
        self._trajectory = Trajectory(n)
        self._views = {
            "p": _read_only(self._p),
            "v": _read_only(self._v),
            "a": _read_only(self._a),
            "finished": _read_only(self._finished),
            "active": _read_only(self._active),
            "target_p": _read_only(self._target_p),
            "target_v": _read_only(self._target_v),
            "max_v": _read_only(self._max_v),
            "max_a": _read_only(self._max_a),
            "max_j": _read_only(self._max_j),
            "limited": _read_only(self._limited),
        }
        self._plan()

    def release(self) -> None:
        """Free ruckig's planner, its input and its trajectory now; for a driver being closed,
        after its last use of this generator (nothing may call it afterwards). Idempotent.

        Why not leave them to Python's collector: they are nanobind objects, and nanobind prints
        a report of every one still alive when the interpreter exits (``nanobind: leaked 3
        instances!``, ``leaked instance … of type "ruckig.Ruckig"``, then its types and
        functions, on stderr). A closed driver stays in the reference cycles of whoever used it
        (an array node and its bus callbacks), and those are freed only by the collector — at
        exit, once the bus library has let go of its callbacks, which it may do too late: a
        ``jointbus serve`` stopped by SIGTERM or Ctrl-C printed that report now and then. With
        nothing of ruckig left in a closed driver there is nothing to report.
        """
        for name in ("_ruckig", "_input", "_trajectory"):
            vars(self).pop(name, None)

    # ------------------------------------------------------------------ validation

    def _limit_array(self, field: str, values: npt.ArrayLike, *, allow_inf: bool) -> FloatArray:
        array = np.array(values, dtype=np.float64)
        if array.ndim == 0:
            array = np.full(self._n, float(array))
        if array.shape != (self._n,):
            raise LengthMismatchError(
                _GEN, field, array.shape, f"one value per joint ({self._n}) or one for all"
            )
        for i, value in enumerate(array):
            self._check_limit(field, float(value), i, allow_inf=allow_inf)
        return array

    def _check_limit(self, field: str, value: float, index: int, *, allow_inf: bool) -> None:
        if math.isnan(value) or (math.isinf(value) and not allow_inf):
            raise NonFiniteError(
                _GEN, field, value, "a finite number", joint=self._names[index], index=index
            )
        if not value > 0.0:
            raise LimitError(_GEN, field, value, "> 0", joint=self._names[index], index=index)

    def _values(self, field: str, values: npt.ArrayLike) -> FloatArray:
        array = np.array(values, dtype=np.float64)
        if array.shape != (self._n,):
            raise LengthMismatchError(
                _GEN, field, array.shape, f"one value per joint ({self._n} values)"
            )
        for i, value in enumerate(array):
            if not math.isfinite(value):
                raise NonFiniteError(
                    _GEN, field, float(value), "a finite number", joint=self._names[i], index=i
                )
        return array

    def _joints(self, joint: Joints, field: str, values: npt.ArrayLike) -> list[int]:
        """Indices addressed by ``joint`` after checking ``values`` fits them (one number for
        one joint, one per listed joint for a list, one per joint for ``None``)."""
        if joint is None:
            self._values(field, values)
            return list(range(self._n))
        if not isinstance(joint, int | np.integer):
            return self._listed(joint, field, values)
        if isinstance(joint, bool) or not isinstance(joint, int | np.integer):
            raise LimitError(_GEN, "joint", joint, f"an index 0..{self._n - 1} or None")
        if not 0 <= joint < self._n:
            raise LimitError(_GEN, "joint", joint, f"an index 0..{self._n - 1} or None")
        index = int(joint)
        array = np.array(values, dtype=np.float64)
        if array.shape != ():
            raise LengthMismatchError(
                _GEN, field, array.shape, "one number for one joint",
                joint=self._names[index], index=index,
            )
        if not math.isfinite(float(array)):
            raise NonFiniteError(
                _GEN, field, float(array), "a finite number",
                joint=self._names[index], index=index,
            )
        return [index]

    def _listed(
        self, joints: Sequence[int] | npt.NDArray[np.intp], field: str, values: npt.ArrayLike
    ) -> list[int]:
        """Indices of a list of joints, each checked, and one finite value per listed joint."""
        indices: list[int] = []
        for joint in list(joints):
            if isinstance(joint, bool) or not isinstance(joint, int | np.integer):
                raise LimitError(_GEN, "joint", joint, f"an index 0..{self._n - 1}")
            if not 0 <= joint < self._n:
                raise LimitError(_GEN, "joint", joint, f"an index 0..{self._n - 1}")
            indices.append(int(joint))
        array = np.array(values, dtype=np.float64)
        if array.shape != (len(indices),):
            raise LengthMismatchError(
                _GEN, field, array.shape, f"one value per listed joint ({len(indices)} values)"
            )
        for k, value in enumerate(array.tolist()):
            if not math.isfinite(value):
                i = indices[k]
                raise NonFiniteError(
                    _GEN, field, value, "a finite number", joint=self._names[i], index=i
                )
        return indices

    # ------------------------------------------------------------------ properties

    @property
    def names(self) -> tuple[str, ...]:
        """Joint names."""
        return self._names

    @property
    def count(self) -> int:
        """Number of joints N."""
        return self._n

    @property
    def position(self) -> FloatArray:
        """Reference position at the last step, rad (read-only live view)."""
        return self._views["p"]  # type: ignore[return-value]

    @property
    def velocity(self) -> FloatArray:
        """Reference velocity, rad/s (read-only live view)."""
        return self._views["v"]  # type: ignore[return-value]

    @property
    def acceleration(self) -> FloatArray:
        """Reference acceleration, rad/s² (read-only live view)."""
        return self._views["a"]  # type: ignore[return-value]

    @property
    def finished(self) -> BoolArray:
        """True where the joint's last request is complete: at its target position, or at its
        target speed for a speed move (read-only live view)."""
        return self._views["finished"]  # type: ignore[return-value]

    @property
    def active(self) -> BoolArray:
        """True where the reference is moving: a move in progress, or a speed move at a nonzero
        speed (read-only live view)."""
        return self._views["active"]  # type: ignore[return-value]

    @property
    def target_position(self) -> FloatArray:
        """Target of each joint's position move (its hold position otherwise), rad."""
        return self._views["target_p"]  # type: ignore[return-value]

    @property
    def target_velocity(self) -> FloatArray:
        """Target speed of speed moves (0 for position moves), rad/s."""
        return self._views["target_v"]  # type: ignore[return-value]

    @property
    def limited(self) -> BoolArray:
        """True where a speed move was ended at a position bound (see the module docstring) and
        the joint has had no request since (read-only live view)."""
        return self._views["limited"]  # type: ignore[return-value]

    @property
    def max_velocity(self) -> FloatArray:
        """Speed limit per joint, rad/s."""
        return self._views["max_v"]  # type: ignore[return-value]

    @property
    def max_acceleration(self) -> FloatArray:
        """Acceleration limit per joint, rad/s²."""
        return self._views["max_a"]  # type: ignore[return-value]

    @property
    def max_jerk(self) -> FloatArray:
        """Jerk limit per joint, rad/s³ (inf: acceleration-limited)."""
        return self._views["max_j"]  # type: ignore[return-value]

    # ------------------------------------------------------------------ requests

    def set_limits(
        self,
        joint: int | None,
        *,
        max_velocity: npt.ArrayLike | None = None,
        max_acceleration: npt.ArrayLike | None = None,
        max_jerk: npt.ArrayLike | None = None,
    ) -> None:
        """Change limits of one joint (scalars) or all (``joint=None``: arrays of N or scalars).

        A move in progress continues under the new limits from where it is (ruckig brakes a joint
        moving faster than a lowered speed limit). A joint cruising in a speed move faster than
        its new speed limit is rejected: change its speed first.
        """
        updates: list[tuple[FloatArray, FloatArray]] = []
        changed: list[tuple[str, int, float]] = []  # (field, joint, value) for a refusal
        for field, values, current, allow_inf in (
            ("max_velocity", max_velocity, self._max_v, False),
            ("max_acceleration", max_acceleration, self._max_a, False),
            ("max_jerk", max_jerk, self._max_j, True),
        ):
            if values is None:
                continue
            new = current.copy()
            if joint is None:
                new[:] = self._limit_array(field, values, allow_inf=allow_inf)
            else:
                (index,) = self._joints(joint, field, 0.0)
                value = float(np.array(values, dtype=np.float64))
                self._check_limit(field, value, index, allow_inf=allow_inf)
                new[index] = value
            updates.append((current, new))
            changed.extend(
                (field, i, float(new[i])) for i in np.flatnonzero(new != current).tolist()
            )
            if field == "max_velocity":
                too_fast = self._velocity_mode & (np.abs(self._target_v) > new)
                if too_fast.any():
                    i = int(np.flatnonzero(too_fast)[0])
                    raise LimitError(
                        _GEN, "max_velocity", float(new[i]),
                        f">= the joint's current speed-move target "
                        f"({abs(float(self._target_v[i]))} rad/s)",
                        joint=self._names[i], index=i,
                    )
        if not updates:
            return
        saved = self._saved()
        for current, new in updates:
            current[:] = new
        self._plan_or_restore(saved, changed)

    def set_position_bounds(self, lower: npt.ArrayLike, upper: npt.ArrayLike) -> None:
        """The range speed moves stop at, per joint (rad; N values each, ``-inf`` / ``inf``:
        unbounded), ``lower ≤ upper``. See the module docstring."""
        low = np.array(lower, dtype=np.float64)
        high = np.array(upper, dtype=np.float64)
        for field, values in (("lower", low), ("upper", high)):
            if values.shape != (self._n,):
                raise LengthMismatchError(
                    _GEN, field, values.shape, f"one value per joint ({self._n} values)"
                )
            nan = np.isnan(values)
            if nan.any():
                i = int(np.flatnonzero(nan)[0])
                raise NonFiniteError(
                    _GEN, field, math.nan, "a number or ±inf", joint=self._names[i], index=i
                )
        crossed = low > high
        if crossed.any():
            i = int(np.flatnonzero(crossed)[0])
            raise LimitError(
                _GEN, "lower", float(low[i]), f"≤ upper ({float(high[i])})",
                joint=self._names[i], index=i,
            )
        self._lower[:] = low
        self._upper[:] = high
        self._bounded = bool(np.isfinite(low).any() or np.isfinite(high).any())

    def move_to(self, joint: Joints, targets: npt.ArrayLike) -> None:
        """Profiled move of one joint (``targets`` a number, rad), of listed joints (indices,
        one target each) or of all (``joint=None``, N numbers), ending at rest; planned as one
        (see the module docstring: refused whole when a move would take over
        :data:`MAX_MOVE_S`)."""
        indices = self._joints(joint, "position", targets)
        values = np.broadcast_to(np.array(targets, dtype=np.float64), (len(indices),))
        saved = self._saved()
        self._target_p[indices] = values
        self._target_v[indices] = 0.0
        self._velocity_mode[indices] = False
        self._limited[indices] = False
        self._stop_limited[indices] = False
        self._plan_or_restore(
            saved,
            [("position", i, float(v)) for i, v in zip(indices, values.tolist(), strict=True)],
        )

    def move_at(self, joint: Joints, velocity: npt.ArrayLike) -> None:
        """Profiled speed move of one joint (a number, rad/s), of listed joints or of all (N
        numbers): accelerate to ``velocity`` within the limits and keep it; ``0`` is a profiled
        stop."""
        indices = self._joints(joint, "velocity", velocity)
        values = np.broadcast_to(np.array(velocity, dtype=np.float64), (len(indices),))
        for index, value in zip(indices, values, strict=True):
            if abs(value) > self._max_v[index]:
                raise LimitError(
                    _GEN, "velocity", float(value),
                    f"|velocity| <= max_velocity ({float(self._max_v[index])} rad/s)",
                    joint=self._names[index], index=index,
                )
        saved = self._saved()
        self._target_v[indices] = values
        self._velocity_mode[indices] = True
        self._limited[indices] = False
        self._stop_limited[indices] = False
        if self._bounded:
            # A joint already at the bound it is sent towards holds there from the start.
            self._stop_at_bounds(0.0, replan=False)
        self._plan_or_restore(
            saved,
            [("velocity", i, float(v)) for i, v in zip(indices, values.tolist(), strict=True)],
        )

    def reset(self, positions: npt.ArrayLike, velocities: npt.ArrayLike | None = None) -> None:
        """Take the joints' actual state (rad, rad/s; e.g. after power-on or a disturbance) as
        the reference and cancel all moves: joints at rest hold their position, moving ones get
        a profiled stop."""
        p = self._values("positions", positions)
        v = np.zeros(self._n) if velocities is None else self._values("velocities", velocities)
        self._p[:] = p
        self._v[:] = v
        self._a[:] = 0.0
        self._target_p[:] = p
        self._target_v[:] = 0.0
        self._velocity_mode[:] = v != 0.0
        self._limited[:] = False
        self._stop_limited[:] = False
        self._plan()

    def reset_joints(
        self,
        joints: Sequence[int],
        positions: npt.ArrayLike,
        velocities: npt.ArrayLike | None = None,
    ) -> None:
        """:meth:`reset` for some joints only (indices ``joints``; ``positions`` and
        ``velocities`` one per listed joint, rad and rad/s): those take their actual state as
        the reference and hold (or stop, if moving); the others keep their moves. Used when a
        joint returns to profiled moves after being driven some other way (current, impedance).
        """
        indices = [self._joints(int(j), "joints", 0.0)[0] for j in joints]
        count = len(indices)
        p = np.array(positions, dtype=np.float64).reshape(-1)
        v = np.zeros(count) if velocities is None else np.array(
            velocities, dtype=np.float64
        ).reshape(-1)
        for field, values in (("positions", p), ("velocities", v)):
            if values.shape != (count,):
                raise LengthMismatchError(
                    _GEN, field, values.shape, f"one value per listed joint ({count} values)"
                )
            for k, value in enumerate(values):
                if not math.isfinite(value):
                    i = indices[k]
                    raise NonFiniteError(
                        _GEN, field, float(value), "a finite number", joint=self._names[i], index=i
                    )
        self._p[indices] = p
        self._v[indices] = v
        self._a[indices] = 0.0
        self._target_p[indices] = p
        self._target_v[indices] = 0.0
        self._velocity_mode[indices] = v != 0.0
        self._limited[indices] = False
        self._stop_limited[indices] = False
        self._plan()

    # ------------------------------------------------------------------ stepping

    def step(
        self, dt: float, *, lookahead: float | None = None
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Advance the references by ``dt`` seconds; returns ``(p_ref, v_ref, a_ref)`` (rad,
        rad/s, rad/s²; read-only live views, overwritten by the next step).

        ``lookahead`` (s, default ``dt``): the longest the *next* step may be. A speed move is
        turned into a stop at its bound when one more step of that length would leave it too
        little room, so a caller whose steps vary (a driver stepping by the clock) passes its
        largest step here."""
        if not (math.isfinite(dt) and dt > 0.0):
            raise LimitError(_GEN, "dt", dt, "a finite duration > 0 s")
        ahead = dt if lookahead is None else lookahead
        if not (math.isfinite(ahead) and ahead > 0.0):
            raise LimitError(_GEN, "lookahead", ahead, "a finite duration > 0 s")
        self._t += dt
        self._sample()
        ended = self._stop_limited & self._finished
        if ended.any():  # a stop that rests at its bound asks for nothing beyond it
            self._limited[ended] = False
            self._stop_limited[ended] = False
        if self._bounded and self._cruising.any():
            self._stop_at_bounds(ahead, replan=True)
        return self.position, self.velocity, self.acceleration

    def _stop_at_bounds(self, dt: float, *, replan: bool) -> None:
        """Turn every speed move that can only just stop before its bound (with one more step of
        ``dt`` s at its speed) into a move to that bound."""
        heading = np.sign(self._target_v) * self._velocity_mode
        speed = np.maximum(heading * self._v, 0.0)  # towards the bound it heads for
        accel = np.maximum(heading * self._a, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            # Jerk-limited stop, bounded from above: one more step at this acceleration, then
            # ramp the acceleration down to -a_max (the speed still rises by accel²/2j
            # meanwhile), brake at a_max, ramp out.
            ramp = np.where(np.isfinite(self._max_j), (accel + self._max_a) / self._max_j, 0.0)
            peak = speed + accel * dt + np.where(
                np.isfinite(self._max_j), accel * accel / (2.0 * self._max_j), 0.0
            )
            stop = peak * (ramp + dt) + peak * peak / (2.0 * self._max_a)
        room = np.where(heading > 0, self._upper - self._p, self._p - self._lower)
        stopping = (heading != 0) & (stop >= room)
        if not stopping.any():
            return
        bound = np.where(heading > 0, self._upper, self._lower)
        self._target_p[stopping] = bound[stopping]
        self._target_v[stopping] = 0.0
        self._velocity_mode[stopping] = False
        self._limited[stopping] = True
        self._stop_limited[stopping] = False
        if replan:
            self._plan()

    def _sample(self) -> None:
        p, v, a = self._trajectory.at_time(self._t)
        self._p[:] = p
        self._v[:] = v
        self._a[:] = a
        np.greater_equal(self._t, self._durations, out=self._finished)
        np.logical_not(self._finished, out=self._active)
        np.logical_or(self._active, self._cruising, out=self._active)

    def _saved(self) -> tuple[npt.NDArray[np.generic], ...]:
        """What a request may change: targets, modes and limits (copies), for a refusal to
        restore."""
        return (
            self._target_p.copy(),
            self._target_v.copy(),
            self._velocity_mode.copy(),
            self._limited.copy(),
            self._stop_limited.copy(),
            self._max_v.copy(),
            self._max_a.copy(),
            self._max_j.copy(),
        )

    def _restore(self, saved: tuple[npt.NDArray[np.generic], ...]) -> None:
        for live, before in zip(
            (
                self._target_p,
                self._target_v,
                self._velocity_mode,
                self._limited,
                self._stop_limited,
                self._max_v,
                self._max_a,
                self._max_j,
            ),
            saved,
            strict=True,
        ):
            live[:] = before

    def _move_seconds(self, index: int) -> float:
        """Joint ``index``'s move time from its reference state to its target under its limits
        (s), roughly and from above: a rest-to-rest move over the distance (at the speed limit
        when it is reached, ``d/v + v/a``, else ``2·√(d/a)``), plus braking from the present
        speed and the jerk ramps; a speed move, the speed change at the acceleration limit. A
        joint resting on its target takes 0. Plain floats, for the joints a request changed
        only: it runs on every command (a user's loop may send one each 2 ms cycle)."""
        max_v, max_a = float(self._max_v[index]), float(self._max_a[index])
        max_j = float(self._max_j[index])
        v, a = abs(float(self._v[index])), abs(float(self._a[index]))
        ramp = max_a / max_j if math.isfinite(max_j) else 0.0
        if self._velocity_mode[index]:
            change = abs(float(self._target_v[index]) - float(self._v[index]))
            if change <= _AT_TARGET and a <= _AT_TARGET:
                return 0.0
            return change / max_a + 2.0 * ramp
        distance = abs(float(self._target_p[index]) - float(self._p[index]))
        if distance <= _AT_TARGET and v <= _AT_TARGET and a <= _AT_TARGET:
            return 0.0
        if distance * max_a >= max_v * max_v:
            rest_to_rest = distance / max_v + max_v / max_a
        else:
            rest_to_rest = 2.0 * math.sqrt(distance / max_a)
        return rest_to_rest + v / max_a + 2.0 * ramp

    def _plan_or_restore(
        self,
        saved: tuple[npt.NDArray[np.generic], ...],
        changed: Sequence[tuple[str, int, float]],
    ) -> None:
        """Plan the request just written into the state, or put the state back as ``saved``
        (and its plan) and raise :class:`LimitError` naming the changed joint with the longest
        move: see the module docstring."""
        seconds = {index: self._move_seconds(index) for _field, index, _value in changed}
        longest = max(changed, key=lambda c: seconds[c[1]], default=None)
        if longest is None:
            self._plan()
            return
        field, index, value = longest
        took = seconds[index]
        speed, accel = float(self._max_v[index]), float(self._max_a[index])
        if took <= MAX_MOVE_S:
            try:
                self._plan()
                return
            except ProfilePlanningError:
                self._restore(saved)
                self._plan()
                raise
        self._restore(saved)
        self._plan()
        raise LimitError(
            _GEN,
            field,
            value,
            f"a move of at most {MAX_MOVE_S:g} s; at max_velocity {speed:g} and "
            f"max_acceleration {accel:g} it would take ≈ {took:.3g} s (raise the joint's "
            "speed or acceleration)",
            joint=self._names[index],
            index=index,
        )

    def _plan(self) -> None:
        """Re-plan every joint from its current reference state towards its target."""
        inp = self._input
        inp.current_position = self._p.tolist()
        inp.current_velocity = self._v.tolist()
        inp.current_acceleration = self._a.tolist()
        inp.target_position = self._target_p.tolist()
        inp.target_velocity = self._target_v.tolist()
        inp.target_acceleration = [0.0] * self._n
        inp.max_velocity = self._max_v.tolist()
        inp.max_acceleration = self._max_a.tolist()
        inp.max_jerk = self._max_j.tolist()
        inp.per_dof_control_interface = [
            ControlInterface.Velocity if mode else ControlInterface.Position
            for mode in self._velocity_mode.tolist()
        ]
        try:
            result = self._ruckig.calculate(inp, self._trajectory)
        except (RuckigError, ValueError) as error:
            # ruckig's Python binding raises ValueError for a result code it has no name for
            # (-101: the profile's duration beyond its numerical limit)
            raise ProfilePlanningError(f"ruckig rejected the profile input: {error}") from error
        if result not in (Result.Working, Result.Finished):
            raise ProfilePlanningError(f"ruckig could not plan the profile: {result}")
        self._durations[:] = self._trajectory.independent_min_durations
        # A joint already resting on its target has nothing to do, whatever ruckig's round-off
        # says: re-planning for another joint must not make it "active" (MOVING) for a while.
        resting = (np.abs(self._v) <= _AT_TARGET) & (np.abs(self._a) <= _AT_TARGET)
        resting &= (self._target_v == 0.0) & (np.abs(self._p - self._target_p) <= _AT_TARGET)
        self._durations[resting] = 0.0
        np.logical_and(self._velocity_mode, self._target_v != 0.0, out=self._cruising)
        self._t = 0.0
        if self._bounded and self._stop_past_bound():
            self._plan()
            return
        self._sample()

    def _stop_past_bound(self) -> bool:
        """Speed-move stops (speed 0 requested while moving) that would come to rest beyond a
        bound become moves to that bound; True if any did (the caller re-plans)."""
        stopping = self._velocity_mode & ~self._cruising & (self._v != 0.0)
        if not stopping.any():
            return False
        past = np.zeros(self._n, dtype=np.bool_)
        for j in np.flatnonzero(stopping).tolist():
            end = self._trajectory.at_time(float(self._durations[j]))[0][j]
            past[j] = not self._lower[j] <= end <= self._upper[j]
        if not past.any():
            return False
        heading_up = self._v[past] > 0.0
        self._target_p[past] = np.where(heading_up, self._upper[past], self._lower[past])
        self._target_v[past] = 0.0
        self._velocity_mode[past] = False
        self._limited[past] = True
        self._stop_limited[past] = True
        return True
